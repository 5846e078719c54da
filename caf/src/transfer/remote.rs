//! Moving a section's elements between this image and an image's memory
//! with as few runtime calls as the layout allows: one PUT / GET for a
//! contiguous section, the runtime's strided PUT / GET (non-blocking
//! chunks, a window at a time) for a section of triplets, non-blocking
//! PUT / GET per contiguous run for vector subscripts, and one GET of the
//! covering span for a sparse section whose span is small. When the image
//! is this one the copy is local (its memory is this process's).
//!
//! These are the building blocks of `send`, `get` and `sendget`, and of the
//! `*_by_ref` calls: a remote side is (world locale, address of the
//! section's origin there, [`Section`]), a local side (address of its
//! origin, [`Section`]) with an [`Elem`] each.

use super::section::{gather, scatter, Axis, Section};
use crate::convert::Elem;
use crate::state::Caf;
use runtime_shim::{Error, GlobalAddr, GlobalPtr, Result};
use std::collections::VecDeque;

/// A GET of a sparse section fetches its covering span in one GET, rather
/// than one GET per contiguous run, when the span is at most the largest
/// of: this many bytes (fabric only: below it one message costs less than
/// several) ...
const SPAN_GET_FLOOR: usize = 64 << 10;
/// ... this many times the bytes the section holds ...
const SPAN_GET_RATIO: usize = 4;
/// ... and, per run it saves, the bytes one message costs as much as: a
/// GET over the fabric costs microseconds (tens on tcp), one from a mapped
/// peer's heap a call and a short copy.
const RUN_COST_FABRIC: usize = 16 << 10;
const RUN_COST_MAPPED: usize = 512;
/// Never a covering span larger than this.
const SPAN_GET_CAP: usize = 64 << 20;
/// Non-blocking PUTs / GETs in flight per transfer (runs of a vector
/// subscript).
const RUN_WINDOW: usize = 64;

fn ptr(l: usize, addr: u64) -> GlobalPtr<u8> {
    GlobalPtr::new(l, addr)
}

fn at(origin: u64, off: isize) -> u64 {
    origin.wrapping_add(off as u64)
}

/// A section of triplets in the shape the runtime's strided calls take:
/// every stride positive, contiguous leading dimensions merged into one
/// chunk. Dimensions whose stride was negative are walked backwards, so
/// the packed data moves through `reorder` (offsets into the packed buffer
/// in array element order, giving each element's place in walk order).
struct Strided {
    /// Offset of the walk's first byte from the origin.
    first: isize,
    /// `count[0]`: bytes per chunk; `count[i]`: repetitions at level i.
    count: Vec<usize>,
    /// Byte strides of levels 1.. on the section's side.
    strides: Vec<usize>,
    /// Byte strides of levels 1.. in the packed buffer (walk order).
    packed: Vec<usize>,
    /// Some if the walk order is not array element order.
    reorder: Option<Section>,
}

fn strided(sec: &Section) -> Option<Strided> {
    let el = sec.elem_len as isize;
    let mut first = sec.first;
    let mut pfirst = 0isize;
    let mut pstride = el;
    let mut flipped = false;
    // (stride, extent, packed stride) of the dimensions that move.
    let mut dims: Vec<(isize, usize, isize)> = Vec::new();
    for a in &sec.axes {
        let Axis::Step { stride, extent } = *a else {
            return None;
        };
        if extent > 1 {
            let (mut s, mut p) = (stride, pstride);
            if s < 0 {
                first += (extent as isize - 1) * s;
                pfirst += (extent as isize - 1) * p;
                s = -s;
                p = -p;
                flipped = true;
            }
            dims.push((s, extent, p));
        }
        pstride *= extent as isize;
    }
    let reorder = flipped.then(|| Section {
        first: pfirst,
        elem_len: sec.elem_len,
        axes: dims
            .iter()
            .map(|&(_, extent, p)| Axis::Step { stride: p, extent })
            .collect(),
    });
    let mut chunk = sec.elem_len;
    let mut k = 0;
    while k < dims.len() && dims[k].0 == chunk as isize {
        chunk *= dims[k].1;
        k += 1;
    }
    let mut count = vec![chunk];
    let mut strides = Vec::new();
    let mut packed = Vec::new();
    let mut pbytes = chunk;
    for &(s, extent, _) in &dims[k..] {
        count.push(extent);
        strides.push(s as usize);
        packed.push(pbytes);
        pbytes *= extent;
    }
    Some(Strided {
        first,
        count,
        strides,
        packed,
        reorder,
    })
}

/// PUTs `data` (packed in array element order, `sec.len()` elements of
/// `sec.elem_len` bytes) into the elements of `sec` at `origin` on world
/// locale `l` (this image: a local copy). Returns when the data is out of
/// `data` (remote completion is the next segment boundary's business, as
/// for every PUT).
pub fn put_packed(c: &Caf, l: usize, origin: u64, sec: &Section, data: &[u8]) -> Result<()> {
    let n = sec.len();
    if n == 0 {
        return Ok(());
    }
    debug_assert_eq!(data.len(), n * sec.elem_len);
    let e = Elem::new(0, sec.elem_len, sec.elem_len);
    if l == c.me {
        // SAFETY: `origin` is this image's address of a coarray (or of a
        // component's memory) and `sec` lies inside it (the callers check
        // the span against the coarray's size); `data` is a separate buffer.
        unsafe { scatter(data, e, origin as *mut u8, sec, e) };
        return Ok(());
    }
    if sec.is_contiguous() {
        return c.rt.put(ptr(l, at(origin, sec.first)), data);
    }
    if let Some(s) = strided(sec) {
        let reordered;
        let src = match &s.reorder {
            None => data,
            Some(r) => {
                let mut buf = vec![0u8; data.len()];
                // SAFETY: `r` addresses exactly the packed buffer `buf` (a
                // permutation of its elements); `data` is separate.
                unsafe { scatter(data, e, buf.as_mut_ptr(), r, e) };
                reordered = buf;
                &reordered[..]
            }
        };
        return c.rt.put_strided(
            ptr(l, at(origin, s.first)),
            &s.strides,
            src,
            &s.packed,
            &s.count,
        );
    }
    // Vector subscripts: one non-blocking PUT per run.
    let el = sec.elem_len;
    let mut window = VecDeque::with_capacity(RUN_WINDOW);
    let mut from = 0usize;
    let mut err = None;
    sec.for_each_run(|o, k| {
        if err.is_some() {
            return;
        }
        let bytes = k * el;
        if window.len() == RUN_WINDOW {
            let h: runtime_shim::NbPut<'_, u8> = window.pop_front().expect("a full window");
            if let Err(e) = h.wait() {
                err = Some(e);
                return;
            }
        }
        match c
            .rt
            .put_nb(ptr(l, at(origin, o)), data[from..from + bytes].to_vec())
        {
            Ok(h) => window.push_back(h),
            Err(e) => err = Some(e),
        }
        from += bytes;
    });
    for h in window {
        if let Err(e) = h.wait() {
            err.get_or_insert(e);
        }
    }
    err.map_or(Ok(()), Err)
}

/// GETs the elements of `sec` at `origin` on world locale `l` (this image:
/// a local copy), packed in array element order.
pub fn get_packed(c: &Caf, l: usize, origin: u64, sec: &Section) -> Result<Vec<u8>> {
    let n = sec.len();
    let bytes = n * sec.elem_len;
    let mut out = vec![0u8; bytes];
    let Some((lo, hi)) = sec.span() else {
        return Ok(out);
    };
    let e = Elem::new(0, sec.elem_len, sec.elem_len);
    if l == c.me {
        // SAFETY: as in put_packed: this image's memory of the coarray,
        // `sec` inside it; `out` is a separate buffer.
        unsafe { gather(origin as *const u8, sec, e, &mut out, e) };
        return Ok(out);
    }
    if sec.is_contiguous() {
        c.rt.get(&mut out, ptr(l, at(origin, sec.first)))?;
        return Ok(out);
    }
    let span = (hi - lo) as usize;
    let plan = strided(sec);
    let mut runs: Vec<(isize, usize)> = Vec::new();
    let nruns = match &plan {
        Some(s) => s.count[1..].iter().product::<usize>(),
        None => {
            sec.for_each_run(|o, k| runs.push((o, k)));
            runs.len()
        }
    };
    let mapped =
        c.rt.comm()
            .mapped_ptr(GlobalAddr::new(l, at(origin, lo)), span)
            .is_some();
    let (floor, per_run) = if mapped {
        (0, RUN_COST_MAPPED)
    } else {
        (SPAN_GET_FLOOR, RUN_COST_FABRIC)
    };
    let worth = floor
        .max(SPAN_GET_RATIO.saturating_mul(bytes))
        .max(nruns.saturating_mul(per_run));
    if span <= worth.min(SPAN_GET_CAP) {
        let mut cover = vec![0u8; span];
        c.rt.get(&mut cover, ptr(l, at(origin, lo)))?;
        // SAFETY: every element of `sec` lies in [lo, hi), which `cover`
        // holds from its start.
        unsafe { gather(cover.as_ptr().wrapping_offset(-lo), sec, e, &mut out, e) };
        return Ok(out);
    }
    if let Some(s) = plan {
        let mut walk = vec![0u8; bytes];
        c.rt.get_strided(
            &mut walk,
            &s.packed,
            ptr(l, at(origin, s.first)),
            &s.strides,
            &s.count,
        )?;
        match &s.reorder {
            None => return Ok(walk),
            Some(r) => {
                // SAFETY: `r` addresses exactly the packed buffer `walk`.
                unsafe { gather(walk.as_ptr(), r, e, &mut out, e) };
                return Ok(out);
            }
        }
    }
    // Vector subscripts over a large span: one non-blocking GET per run.
    let el = sec.elem_len;
    let mut window: VecDeque<(usize, runtime_shim::NbGet<'_, u8>)> =
        VecDeque::with_capacity(RUN_WINDOW);
    let mut to = 0usize;
    let land = |out: &mut Vec<u8>, (at, h): (usize, runtime_shim::NbGet<'_, u8>)| -> Result<()> {
        let got = h.wait()?;
        out[at..at + got.len()].copy_from_slice(&got);
        Ok(())
    };
    for (o, k) in runs {
        if window.len() == RUN_WINDOW {
            land(&mut out, window.pop_front().expect("a full window"))?;
        }
        let h = c.rt.get_nb(ptr(l, at(origin, o)), k * el)?;
        window.push_back((to, h));
        to += k * el;
    }
    for w in window {
        land(&mut out, w)?;
    }
    Ok(out)
}

fn mismatch(what: &str, src: usize, dst: usize) -> Error {
    Error::InvalidLength {
        what: "coindexed assignment",
        len: src as u64,
        reason: format!(
            "the {what} has {src} elements and the destination {dst}: the shapes do not conform"
        ),
    }
}

/// Assigns the local elements `lsec` at `lbase` (elements `le`) to the
/// elements `rsec` at `origin` on world locale `l` (elements `re`),
/// converting kind and type; a single local element is assigned to every
/// remote one. As if the right side were evaluated first: when `l` is this
/// image and the two overlap, the result is the same.
///
/// # Safety
/// Every element of `lsec` at `lbase` is readable; if `l` is this image,
/// `rsec` at `origin` is this process's writable memory.
#[allow(clippy::too_many_arguments)]
pub unsafe fn send_section(
    c: &Caf,
    l: usize,
    origin: u64,
    rsec: &Section,
    re: Elem,
    lbase: *const u8,
    lsec: &Section,
    le: Elem,
) -> Result<()> {
    let (n, m) = (rsec.len(), lsec.len());
    if n == 0 {
        return Ok(());
    }
    if m != n && m != 1 {
        return Err(mismatch("source", m, n));
    }
    let plain = le == re && m == n && lsec.is_contiguous() && rsec.is_contiguous();
    if plain {
        let bytes = n * re.len;
        let src = lbase.wrapping_offset(lsec.first);
        if l == c.me {
            // SAFETY: both blocks are `bytes` long (caller); `copy` allows
            // them to overlap, which is the as-if-evaluated-first rule.
            unsafe { std::ptr::copy(src, (at(origin, rsec.first)) as usize as *mut u8, bytes) };
            return Ok(());
        }
        // SAFETY: the local block is `bytes` readable bytes (caller).
        let data = unsafe { std::slice::from_raw_parts(src, bytes) };
        return c.rt.put(ptr(l, at(origin, rsec.first)), data);
    }
    let mut packed = vec![0u8; m * re.len];
    // SAFETY: lsec's elements are readable (caller); `packed` is ours.
    unsafe { gather(lbase, lsec, le, &mut packed, re) };
    if m != n {
        packed = super::section::convert_packed(&packed, re, re, n);
    }
    put_packed(c, l, origin, rsec, &packed)
}

/// Assigns the elements `rsec` at `origin` on world locale `l` (elements
/// `re`) to the local elements `lsec` at `lbase` (elements `le`),
/// converting kind and type; a single remote element is assigned to every
/// local one. Overlap with this image's own memory is handled as in
/// [`send_section`].
///
/// # Safety
/// Every element of `lsec` at `lbase` is writable; if `l` is this image,
/// `rsec` at `origin` is this process's readable memory.
#[allow(clippy::too_many_arguments)]
pub unsafe fn get_section(
    c: &Caf,
    l: usize,
    origin: u64,
    rsec: &Section,
    re: Elem,
    lbase: *mut u8,
    lsec: &Section,
    le: Elem,
) -> Result<()> {
    let (n, m) = (rsec.len(), lsec.len());
    if m == 0 {
        return Ok(());
    }
    if m != n && n != 1 {
        return Err(mismatch("coindexed source", n, m));
    }
    let plain = le == re && m == n && lsec.is_contiguous() && rsec.is_contiguous();
    if plain {
        let bytes = n * re.len;
        let dst = lbase.wrapping_offset(lsec.first);
        if l == c.me {
            // SAFETY: both blocks are `bytes` long (caller); `copy` allows
            // overlap.
            unsafe { std::ptr::copy(at(origin, rsec.first) as usize as *const u8, dst, bytes) };
            return Ok(());
        }
        // SAFETY: the local block is `bytes` writable bytes (caller), not
        // aliased during the call.
        let out = unsafe { std::slice::from_raw_parts_mut(dst, bytes) };
        return c.rt.get(out, ptr(l, at(origin, rsec.first)));
    }
    let packed = get_packed(c, l, origin, rsec)?;
    // SAFETY: lsec's elements are writable (caller); `packed` is ours.
    unsafe { scatter(&packed, re, lbase, lsec, le) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(stride: isize, extent: usize) -> Axis {
        Axis::Step { stride, extent }
    }

    #[test]
    fn contiguous_leading_dimensions_merge_into_one_chunk() {
        // 3 x 4 block of 4-byte elements out of rows of 10.
        let sec = Section {
            first: 8,
            elem_len: 4,
            axes: vec![step(4, 3), step(40, 4)],
        };
        let s = strided(&sec).unwrap();
        assert_eq!(s.first, 8);
        assert_eq!(s.count, vec![12, 4]);
        assert_eq!(s.strides, vec![40]);
        assert_eq!(s.packed, vec![12]);
        assert!(s.reorder.is_none());
    }

    #[test]
    fn negative_strides_walk_backwards_through_a_reorder() {
        // a(5:1:-2): 3 elements of 8 bytes, stride -16, first at 32.
        let sec = Section {
            first: 32,
            elem_len: 8,
            axes: vec![step(-16, 3)],
        };
        let s = strided(&sec).unwrap();
        assert_eq!(s.first, 0);
        assert_eq!(s.count, vec![8, 3]);
        assert_eq!(s.strides, vec![16]);
        let r = s.reorder.unwrap();
        // Element 0 (offset 32) is the last in walk order.
        assert_eq!(r.offsets(), vec![16, 8, 0]);
    }

    #[test]
    fn single_extent_dimensions_do_not_break_contiguity() {
        let sec = Section {
            first: 0,
            elem_len: 4,
            axes: vec![step(4, 5), step(999, 1), step(20, 2)],
        };
        let s = strided(&sec).unwrap();
        assert_eq!(s.count, vec![40]);
        assert!(s.strides.is_empty());
    }

    #[test]
    fn vector_subscripts_are_not_strided() {
        let sec = Section {
            first: 0,
            elem_len: 4,
            axes: vec![Axis::List(vec![0, 8, 4])],
        };
        assert!(strided(&sec).is_none());
    }
}
