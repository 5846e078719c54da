//! The elements one side of a coindexed transfer touches, as byte offsets
//! from an origin, and the local element walks over them (gather into a
//! packed buffer, scatter out of one, converting kind and type on the way).
//!
//! A [`Section`] is what a gfortran descriptor (plus, on the coindexed side,
//! the `caf_vector_t` per dimension of a vector-subscripted reference) says
//! about where the elements are, independent of whose memory they are in:
//! the coindexed side's offsets are applied to the remote image's address
//! of the coarray, the local side's to the descriptor's `base_addr`. Array
//! element order (first dimension fastest) pairs the elements of the two
//! sides; a packed buffer holds them in that order.

use crate::convert::{convert, Elem};
use crate::desc::{Descriptor, MAX_DIMS};
use std::ffi::{c_int, c_void};

/// `caf_vector_t` (libcaf.h): per dimension of a coindexed reference with a
/// vector subscript, either the vector (`nvec > 0`: `nvec` indices of
/// integer kind `kind`) or a triplet (`nvec == 0`), both in the declared
/// bounds of the coarray.
#[repr(C)]
pub struct CafVector {
    /// Number of indices of a vector subscript; 0: a triplet.
    pub nvec: usize,
    /// The vector or the triplet.
    pub u: CafVectorU,
}

/// The union of `caf_vector_t`.
#[repr(C)]
pub union CafVectorU {
    /// A vector subscript.
    pub v: VectorPart,
    /// A triplet.
    pub triplet: Triplet,
}

/// `caf_vector_t.u.v`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VectorPart {
    /// The indices (contiguous, integer of kind `kind`).
    pub vector: *const c_void,
    /// Integer kind of the indices (1, 2, 4, 8, 16).
    pub kind: c_int,
}

/// `caf_vector_t.u.triplet`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Triplet {
    /// First index.
    pub lower_bound: isize,
    /// Last index (bound).
    pub upper_bound: isize,
    /// Step.
    pub stride: isize,
}

/// One dimension of a section: the byte offset each of its indices adds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Index `i` adds `i * stride` bytes (a triplet; `stride` may be negative).
    Step {
        /// Bytes between successive indices.
        stride: isize,
        /// Number of indices.
        extent: usize,
    },
    /// Index `i` adds `offsets[i]` bytes (a vector subscript).
    List(Vec<isize>),
}

impl Axis {
    /// Number of indices.
    pub fn extent(&self) -> usize {
        match self {
            Axis::Step { extent, .. } => *extent,
            Axis::List(v) => v.len(),
        }
    }

    fn at(&self, i: usize) -> isize {
        match self {
            Axis::Step { stride, .. } => i as isize * stride,
            Axis::List(v) => v[i],
        }
    }

    /// Smallest and largest offset this axis adds (non-empty axis).
    fn min_max(&self) -> (isize, isize) {
        match self {
            Axis::Step { stride, extent } => {
                let last = (*extent as isize - 1) * stride;
                (last.min(0), last.max(0))
            }
            Axis::List(v) => (
                v.iter().copied().min().unwrap_or(0),
                v.iter().copied().max().unwrap_or(0),
            ),
        }
    }
}

/// Where the elements of one side of a transfer are: element (i_1, ..., i_r)
/// is at `first + sum_k axes[k].at(i_k)` bytes from the origin; array
/// element order walks `axes[0]` fastest. No axes: one element (a scalar).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// Offset of the element with every index at its first value.
    pub first: isize,
    /// Bytes of one element.
    pub elem_len: usize,
    /// The dimensions, first fastest.
    pub axes: Vec<Axis>,
}

/// Reads index `i` of a vector subscript of integer kind `kind`.
///
/// # Safety
/// `v` points to at least `i + 1` integers of that kind.
unsafe fn vector_index(v: *const c_void, kind: c_int, i: usize) -> Result<isize, String> {
    // SAFETY: caller.
    unsafe {
        Ok(match kind {
            1 => *(v as *const i8).add(i) as isize,
            2 => (v as *const i16).add(i).read_unaligned() as isize,
            4 => (v as *const i32).add(i).read_unaligned() as isize,
            8 => (v as *const i64).add(i).read_unaligned() as isize,
            16 => (v as *const i128).add(i).read_unaligned() as isize,
            k => return Err(format!("a vector subscript of integer kind {k}")),
        })
    }
}

impl Section {
    /// The elements a descriptor describes, as offsets from its
    /// `base_addr`. With `vector` (one `caf_vector_t` per dimension, as
    /// gfortran passes for a vector-subscripted coindexed reference) the
    /// indices come from it and the descriptor gives each dimension's
    /// declared lower bound and stride (its extents are not the
    /// reference's then: a scalar subscript shows as an empty dimension).
    ///
    /// # Safety
    /// `d` is a valid descriptor with `rank` initialised dimensions;
    /// `vector` is null or holds `rank` entries whose vectors are readable.
    pub unsafe fn of_descriptor(
        d: *const Descriptor,
        vector: *const CafVector,
    ) -> Result<Section, String> {
        // SAFETY: caller.
        let d = unsafe { &*d };
        let rank = d.dtype.rank.max(0) as usize;
        if rank > MAX_DIMS {
            return Err(format!("a descriptor of rank {rank} (at most {MAX_DIMS})"));
        }
        let elem_len = d.dtype.elem_len;
        // gfortran sets span in every descriptor it builds; 0 only in
        // hand-made ones, where elements are contiguous.
        let span = if d.span > 0 {
            d.span
        } else {
            elem_len as isize
        };
        // Element (lbound_1, ..., lbound_r): base_addr + (offset + sum
        // lbound_k * stride_k) * span (0 for what gfortran builds). A
        // scalar's descriptor is base_addr alone: gfortran leaves its
        // offset unset.
        let mut first = if rank == 0 { 0 } else { d.offset * span };
        for k in 0..rank {
            first += d.dim[k].lbound * d.dim[k].stride * span;
        }
        let mut axes = Vec::with_capacity(rank);
        for k in 0..rank {
            let dm = d.dim[k];
            let stride = dm.stride * span;
            if vector.is_null() {
                axes.push(Axis::Step {
                    stride,
                    extent: dm.extent(),
                });
                continue;
            }
            // SAFETY: `rank` entries (caller).
            let v = unsafe { &*vector.add(k) };
            if v.nvec > 0 {
                // SAFETY: nvec > 0: the vector part is the live one.
                let part = unsafe { v.u.v };
                let mut offs = Vec::with_capacity(v.nvec);
                for i in 0..v.nvec {
                    // SAFETY: nvec indices (caller).
                    let idx = unsafe { vector_index(part.vector, part.kind, i)? };
                    offs.push((idx - dm.lbound) * stride);
                }
                axes.push(Axis::List(offs));
            } else {
                // SAFETY: nvec == 0: the triplet is the live part.
                let t = unsafe { v.u.triplet };
                let extent =
                    triplet_extent(t.lower_bound, t.upper_bound, t.stride).ok_or_else(|| {
                        format!("a subscript triplet with stride 0 in dimension {}", k + 1)
                    })?;
                first += (t.lower_bound - dm.lbound) * stride;
                axes.push(Axis::Step {
                    stride: t.stride * stride,
                    extent,
                });
            }
        }
        Ok(Section {
            first,
            elem_len,
            axes,
        })
    }

    /// Number of elements (1 for a scalar).
    pub fn len(&self) -> usize {
        self.axes.iter().map(Axis::extent).product()
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes from the lowest element's first byte to the highest
    /// element's last: (lowest offset, one past the highest byte). None if
    /// empty.
    pub fn span(&self) -> Option<(isize, isize)> {
        if self.is_empty() {
            return None;
        }
        let (mut lo, mut hi) = (self.first, self.first);
        for a in &self.axes {
            let (l, h) = a.min_max();
            lo += l;
            hi += h;
        }
        Some((lo, hi + self.elem_len as isize))
    }

    /// Whether the elements lie back to back in array element order from
    /// `first` upwards (one block of `len() * elem_len` bytes).
    pub fn is_contiguous(&self) -> bool {
        let mut expect = self.elem_len as isize;
        for a in &self.axes {
            match a {
                Axis::Step { extent, .. } if *extent <= 1 => {}
                Axis::Step { stride, extent } => {
                    if *stride != expect {
                        return false;
                    }
                    expect *= *extent as isize;
                }
                Axis::List(v) if v.len() <= 1 => {
                    if v.first().is_some_and(|&o| o != 0) {
                        return false;
                    }
                }
                Axis::List(v) => {
                    if v.iter()
                        .enumerate()
                        .any(|(i, &o)| o != v[0] + i as isize * expect)
                        || v[0] != 0
                    {
                        return false;
                    }
                    expect *= v.len() as isize;
                }
            }
        }
        true
    }

    /// Calls `f` with the offset of every element, in array element order.
    pub fn for_each(&self, mut f: impl FnMut(isize)) {
        if self.is_empty() {
            return;
        }
        let r = self.axes.len();
        if r == 0 {
            f(self.first);
            return;
        }
        let mut idx = vec![0usize; r];
        // Offset of the outer indices' contribution (axes 1..).
        let mut outer = self.first;
        let a0 = &self.axes[0];
        let n0 = a0.extent();
        loop {
            match a0 {
                Axis::Step { stride, .. } => {
                    let mut o = outer;
                    for _ in 0..n0 {
                        f(o);
                        o += stride;
                    }
                }
                Axis::List(v) => v.iter().for_each(|&o| f(outer + o)),
            }
            let mut k = 1;
            loop {
                if k == r {
                    return;
                }
                let a = &self.axes[k];
                outer -= a.at(idx[k]);
                idx[k] += 1;
                if idx[k] < a.extent() {
                    outer += a.at(idx[k]);
                    break;
                }
                idx[k] = 0;
                outer += a.at(0);
                k += 1;
            }
        }
    }

    /// Calls `f(offset, n)` for each maximal run of `n` elements lying back
    /// to back at `offset`, in array element order.
    pub fn for_each_run(&self, mut f: impl FnMut(isize, usize)) {
        let el = self.elem_len as isize;
        let mut run: Option<(isize, usize)> = None;
        self.for_each(|o| match &mut run {
            Some((start, n)) if *start + *n as isize * el == o && el > 0 => *n += 1,
            _ => {
                if let Some((s, n)) = run.take() {
                    f(s, n);
                }
                run = Some((o, 1));
            }
        });
        if let Some((s, n)) = run {
            f(s, n);
        }
    }

    /// Every element's offset, in array element order.
    #[cfg(test)]
    pub fn offsets(&self) -> Vec<isize> {
        let mut v = Vec::with_capacity(self.len());
        self.for_each(|o| v.push(o));
        v
    }
}

/// Number of indices of the triplet `lo:hi:step` (None: step 0).
pub fn triplet_extent(lo: isize, hi: isize, step: isize) -> Option<usize> {
    if step == 0 {
        return None;
    }
    let n = (hi - lo) / step + 1;
    Some(if (hi - lo).signum() * step.signum() < 0 {
        0
    } else {
        n.max(0) as usize
    })
}

/// Copies the elements of `sec` at `base` (elements `se`) into `out`,
/// packed in array element order as elements `de`, converting kind and type
/// (`out.len() == sec.len() * de.len`).
///
/// # Safety
/// Every element of `sec` at `base` is `se.len` readable bytes, not
/// overlapping `out`.
pub unsafe fn gather(base: *const u8, sec: &Section, se: Elem, out: &mut [u8], de: Elem) {
    debug_assert_eq!(out.len(), sec.len() * de.len);
    let mut at = 0usize;
    if se == de {
        let el = se.len;
        sec.for_each_run(|o, n| {
            let bytes = n * el;
            // SAFETY: a run of n elements of `sec` (caller); `out` has room
            // for every element of `sec` (debug-asserted; the callers size it).
            let src = unsafe { std::slice::from_raw_parts(base.wrapping_offset(o), bytes) };
            out[at..at + bytes].copy_from_slice(src);
            at += bytes;
        });
        return;
    }
    sec.for_each(|o| {
        // SAFETY: one element of `sec` (caller).
        let src = unsafe { std::slice::from_raw_parts(base.wrapping_offset(o), se.len) };
        convert(&mut out[at..at + de.len], de, src, se);
        at += de.len;
    });
}

/// Copies packed elements `src` (elements `se`, array element order; one
/// element is assigned to every element) into `sec` at `base` (elements
/// `de`), converting kind and type.
///
/// # Safety
/// Every element of `sec` at `base` is `de.len` writable bytes, not
/// overlapping `src`.
pub unsafe fn scatter(src: &[u8], se: Elem, base: *mut u8, sec: &Section, de: Elem) {
    let n = sec.len();
    let count = src.len().checked_div(se.len).unwrap_or(0);
    debug_assert!(count == n || count == 1);
    if count == 1 && n != 1 {
        let mut one = vec![0u8; de.len];
        convert(&mut one, de, &src[..se.len], se);
        sec.for_each(|o| {
            // SAFETY: one element of `sec` (caller).
            let dst = unsafe { std::slice::from_raw_parts_mut(base.wrapping_offset(o), de.len) };
            dst.copy_from_slice(&one);
        });
        return;
    }
    let mut at = 0usize;
    if se == de {
        let el = se.len;
        sec.for_each_run(|o, k| {
            let bytes = k * el;
            // SAFETY: a run of k elements of `sec` (caller).
            let dst = unsafe { std::slice::from_raw_parts_mut(base.wrapping_offset(o), bytes) };
            dst.copy_from_slice(&src[at..at + bytes]);
            at += bytes;
        });
        return;
    }
    sec.for_each(|o| {
        // SAFETY: one element of `sec` (caller).
        let dst = unsafe { std::slice::from_raw_parts_mut(base.wrapping_offset(o), de.len) };
        convert(dst, de, &src[at..at + se.len], se);
        at += se.len;
    });
}

/// `count` packed elements `se` converted to packed elements `de` (a
/// single element is repeated `count` times).
pub fn convert_packed(src: &[u8], se: Elem, de: Elem, count: usize) -> Vec<u8> {
    let have = src.len().checked_div(se.len).unwrap_or(0);
    if se == de && have == count {
        return src.to_vec();
    }
    let mut out = vec![0u8; count * de.len];
    if have == 1 && count != 1 {
        convert(&mut out[..de.len], de, &src[..se.len], se);
        let (one, rest) = out.split_at_mut(de.len);
        for chunk in rest.chunks_mut(de.len) {
            chunk.copy_from_slice(one);
        }
        return out;
    }
    for (d, s) in out.chunks_mut(de.len).zip(src.chunks(se.len)) {
        convert(d, de, s, se);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desc::{DType, Dim, BT_CHARACTER, BT_INTEGER, BT_REAL};

    fn desc(elem_len: usize, offset: isize, dims: &[(isize, isize, isize)]) -> Descriptor {
        let mut dim = [Dim::default(); MAX_DIMS];
        for (k, &(lbound, ubound, stride)) in dims.iter().enumerate() {
            dim[k] = Dim {
                stride,
                lbound,
                ubound,
            };
        }
        Descriptor {
            base_addr: std::ptr::null_mut(),
            offset,
            dtype: DType {
                elem_len,
                version: 0,
                rank: dims.len() as i8,
                ty: BT_INTEGER,
                attribute: 0,
            },
            span: elem_len as isize,
            dim,
        }
    }

    /// A section of `extent` elements of `elem_len` bytes, `stride` bytes
    /// apart, from byte `first`.
    fn strided(first: isize, elem_len: usize, stride: isize, extent: usize) -> Section {
        Section {
            first,
            elem_len,
            axes: vec![Axis::Step { stride, extent }],
        }
    }

    #[test]
    fn a_scalar_ignores_the_unset_offset() {
        let d = desc(4, 123_456, &[]);
        // SAFETY: a complete descriptor.
        let s = unsafe { Section::of_descriptor(&d, std::ptr::null()) }.unwrap();
        assert_eq!(s.first, 0);
        assert_eq!(s.len(), 1);
        assert_eq!(s.offsets(), vec![0]);
    }

    #[test]
    fn a_section_descriptor_walks_from_its_base_addr() {
        // x(2:6:2) of integer x(10): data at x(2), lbound 1, stride 2,
        // offset -2 (what gfortran builds).
        let d = desc(4, -2, &[(1, 3, 2)]);
        // SAFETY: as above.
        let s = unsafe { Section::of_descriptor(&d, std::ptr::null()) }.unwrap();
        assert_eq!(s.offsets(), vec![0, 8, 16]);
        // r(3:1:-1): data at r(3), stride -1, offset 1.
        let d = desc(8, 1, &[(1, 3, -1)]);
        // SAFETY: as above.
        let s = unsafe { Section::of_descriptor(&d, std::ptr::null()) }.unwrap();
        assert_eq!(s.offsets(), vec![0, -8, -16]);
        assert_eq!(s.span(), Some((-16, 8)));
    }

    #[test]
    fn vector_subscripts_index_the_declared_bounds() {
        // x(0:3, -1:4), reference x(v, 0:3:2) with v = [0, 2, 3]: gfortran
        // passes the declared lower bounds and strides and offset 4.
        let d = desc(4, 4, &[(0, 2, 1), (-1, 0, 4)]);
        let v: [i32; 3] = [0, 2, 3];
        let vec = [
            CafVector {
                nvec: 3,
                u: CafVectorU {
                    v: VectorPart {
                        vector: v.as_ptr() as *const c_void,
                        kind: 4,
                    },
                },
            },
            CafVector {
                nvec: 0,
                u: CafVectorU {
                    triplet: Triplet {
                        lower_bound: 0,
                        upper_bound: 2,
                        stride: 2,
                    },
                },
            },
        ];
        // SAFETY: as above; two entries, the vector of 3 i32.
        let s = unsafe { Section::of_descriptor(&d, vec.as_ptr()) }.unwrap();
        // x(i, j) is at 4 * (i + 4 * (j + 1)) bytes from x(0, -1).
        let want: Vec<isize> = [0isize, 2]
            .iter()
            .flat_map(|&j| [0isize, 2, 3].map(move |i| 4 * (i + 4 * (j + 1))))
            .collect();
        assert_eq!(s.offsets(), want);
        assert!(matches!(s.axes[0], Axis::List(_)));
    }

    #[test]
    fn triplet_extents() {
        assert_eq!(triplet_extent(2, 4, 2), Some(2));
        assert_eq!(triplet_extent(2, 5, 2), Some(2));
        assert_eq!(triplet_extent(3, 1, -1), Some(3));
        assert_eq!(triplet_extent(1, 0, 1), Some(0));
        assert_eq!(triplet_extent(3, 3, 1), Some(1));
        assert_eq!(triplet_extent(1, 3, -1), Some(0));
        assert_eq!(triplet_extent(1, 3, 0), None);
    }

    #[test]
    fn runs_merge_adjacent_elements_in_element_order() {
        // 3 x 2 block out of rows of 5 (4-byte elements), then a vector.
        let s = Section {
            first: 4,
            elem_len: 4,
            axes: vec![
                Axis::Step {
                    stride: 4,
                    extent: 3,
                },
                Axis::Step {
                    stride: 20,
                    extent: 2,
                },
            ],
        };
        let mut runs = Vec::new();
        s.for_each_run(|o, n| runs.push((o, n)));
        assert_eq!(runs, vec![(4, 3), (24, 3)]);
        assert!(!s.is_contiguous());
        let v = Section {
            first: 0,
            elem_len: 4,
            axes: vec![Axis::List(vec![0, 4, 12, 8])],
        };
        let mut runs = Vec::new();
        v.for_each_run(|o, n| runs.push((o, n)));
        assert_eq!(runs, vec![(0, 2), (12, 1), (8, 1)]);
        let block = strided(0, 8, 8, 7);
        assert!(block.is_contiguous());
    }

    #[test]
    fn gather_and_scatter_convert_and_broadcast() {
        let src: Vec<i32> = (1..=6).collect();
        let every_other = strided(0, 4, 8, 3);
        let i4 = Elem::new(BT_INTEGER, 4, 4);
        let r8 = Elem::new(BT_REAL, 8, 8);
        let mut out = vec![0u8; 24];
        // SAFETY: the section lies inside `src`.
        unsafe { gather(src.as_ptr() as *const u8, &every_other, i4, &mut out, r8) };
        let got: Vec<f64> = out
            .chunks(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, vec![1.0, 3.0, 5.0]);

        // One element to every element of a backwards section, converted.
        let mut dst = [0i16; 4];
        let back = strided(6, 2, -2, 4);
        // SAFETY: the section lies inside `dst`.
        unsafe {
            scatter(
                &7.9f64.to_ne_bytes(),
                r8,
                dst.as_mut_ptr() as *mut u8,
                &back,
                Elem::new(BT_INTEGER, 2, 2),
            )
        };
        assert_eq!(dst, [7; 4]);

        // Characters: kind 1 of length 2 into kind 4 of length 3, reversed.
        let mut wide = [0u32; 6];
        let rev = strided(12, 12, -12, 2);
        // SAFETY: the section lies inside `wide`.
        unsafe {
            scatter(
                b"abcd",
                Elem::new(BT_CHARACTER, 1, 2),
                wide.as_mut_ptr() as *mut u8,
                &rev,
                Elem::new(BT_CHARACTER, 4, 12),
            )
        };
        let s: String = wide.iter().map(|&c| char::from_u32(c).unwrap()).collect();
        assert_eq!(s, "cd ab ");
    }

    #[test]
    fn packed_conversion_repeats_a_single_element() {
        let i4 = Elem::new(BT_INTEGER, 4, 4);
        let i8 = Elem::new(BT_INTEGER, 8, 8);
        let out = convert_packed(&(-5i32).to_ne_bytes(), i4, i8, 3);
        let got: Vec<i64> = out
            .chunks(8)
            .map(|c| i64::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, vec![-5, -5, -5]);
    }
}
