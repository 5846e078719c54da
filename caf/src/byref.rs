//! References through derived types: `_gfortran_caf_get_by_ref`,
//! `_send_by_ref`, `_sendget_by_ref` and `_is_present`.
//!
//! gfortran calls these for a coindexed object whose designator goes
//! through components (`obj[i]%comp(2:)%x`) and for coarray components
//! (`foo%bar(:)[i]`): instead of a descriptor of the remote data it passes
//! a chain of references ([`refs`]). An allocatable component may be
//! allocated on one image and not another, with other bounds, at another
//! address; so the chain is walked on the image it names ([`walk`]),
//! reading the descriptors and pointers it passes through there with GETs.
//! Every address so found is in that image's registered heap (the library
//! allocates component memory there, `ALLOCATE_ONLY`), so the elements are
//! then moved with plain PUTs and GETs, one per run of adjacent elements,
//! converted element by element ([`crate::convert`]) on this image.
//!
//! An assignment to an allocatable component of another image
//! (`x[i]%alloc = ...`) allocates it there when it is unallocated, or
//! reallocates an array of another shape, as Fortran's assignment does:
//! only the owner can allocate from its heap, so an on-statement
//! ([`ALLOC_BODY`]) allocates, sets the component's pointer or descriptor
//! and its token there (OpenCoarrays reports this case as an error).
//!
//! Not supported (reported as errors): deep copies of derived types with
//! allocatable components, and pointer components whose target is outside
//! the registered heap.

pub mod alloc;
pub mod refs;
pub mod walk;

use crate::convert::{convert, Elem};
use crate::desc::{Descriptor, Shape};
use crate::register::locate;
use crate::stat::{StatOut, STAT_ERROR};
use crate::state::Caf;
use alloc::allocation_for;
pub use alloc::{alloc_body, ALLOC_BODY};
use refs::{CafReference, Ref};
use runtime_shim::GlobalPtr;
use std::ffi::{c_int, c_void};
use walk::{runs, DescCopy, Extent, Located, Mem, WalkError};

/// One image's memory, through the runtime (this image's directly).
struct ImageMem<'a> {
    c: &'a Caf,
    locale: usize,
}

impl Mem for ImageMem<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), String> {
        if buf.is_empty() {
            return Ok(());
        }
        if self.locale == self.c.me {
            // SAFETY: an address the walk found in this image's own
            // coarray memory or its components' (this process's memory,
            // live while the program references it).
            unsafe { std::ptr::copy(addr as *const u8, buf.as_mut_ptr(), buf.len()) };
            return Ok(());
        }
        self.c
            .rt
            .get(buf, GlobalPtr::<u8>::new(self.locale, addr))
            .map_err(|e| format!("reading {} bytes at {addr:#x}: {e}", buf.len()))
    }
}

impl ImageMem<'_> {
    /// Writes `buf` at `addr` of the image.
    fn write(&self, addr: u64, buf: &[u8]) -> Result<(), String> {
        if buf.is_empty() {
            return Ok(());
        }
        if self.locale == self.c.me {
            // SAFETY: as in `read`; `buf` is a buffer of ours, so the
            // ranges do not overlap.
            unsafe { std::ptr::copy(buf.as_ptr(), addr as *mut u8, buf.len()) };
            return Ok(());
        }
        self.c
            .rt
            .put(GlobalPtr::<u8>::new(self.locale, addr), buf)
            .map_err(|e| format!("writing {} bytes at {addr:#x}: {e}", buf.len()))
    }
}

/// A failure of one of these calls: the `stat=` code and the message.
struct Failure(c_int, String);

impl From<WalkError> for Failure {
    fn from(e: WalkError) -> Failure {
        Failure(STAT_ERROR, e.to_string())
    }
}

/// The image `image` (1-based, current team) names: its locale and the
/// coarray's address there, the registered descriptor, the decoded chain.
struct Target {
    locale: usize,
    start: u64,
    top: Option<DescCopy>,
    refs: Vec<Ref>,
}

impl Target {
    /// Its image's memory.
    fn mem<'a>(&self, c: &'a Caf) -> ImageMem<'a> {
        ImageMem {
            c,
            locale: self.locale,
        }
    }

    /// Locates the elements its chain names on its image.
    fn walk(&self, mem: &ImageMem<'_>) -> Result<Located, WalkError> {
        walk::walk(mem, self.start, self.top.as_ref(), &self.refs)
    }

    /// Locates and reads the elements (the source of a get).
    fn read_all(&self, c: &Caf) -> Result<(Located, Vec<u8>), Failure> {
        let mem = self.mem(c);
        let at = self.walk(&mem)?;
        let data = fetch(&mem, &at).map_err(|e| Failure(STAT_ERROR, e))?;
        Ok((at, data))
    }
}

/// Resolves the token, image and chain of a call.
///
/// # Safety
/// gfortran's arguments: `token` ours, `refs` its chain.
unsafe fn target(
    c: &Caf,
    token: *mut c_void,
    image: c_int,
    refs: *const CafReference,
    check_failed: bool,
) -> Result<Target, Failure> {
    let (tok, locale, start) =
        locate(c, token, 0, image, check_failed).map_err(|(code, msg)| Failure(code, msg))?;
    let top = if tok.desc.is_null() {
        None
    } else {
        // SAFETY: the descriptor of an allocatable coarray, registered with
        // the token and live while the coarray is allocated.
        let d = unsafe { &*tok.desc };
        let rank = (d.dtype.rank.max(0) as usize).min(crate::desc::MAX_DIMS);
        Some(DescCopy {
            base_addr: d.base_addr as u64,
            dims: d.dim[..rank].to_vec(),
        })
    };
    // SAFETY: gfortran's chain.
    let refs = unsafe { refs::decode(refs) }.map_err(|e| Failure(STAT_ERROR, e))?;
    Ok(Target {
        locale,
        start,
        top,
        refs,
    })
}

/// Reads the located elements of an image into one buffer (in order).
fn fetch(mem: &ImageMem<'_>, at: &Located) -> Result<Vec<u8>, String> {
    let len = at.elem_len;
    let mut buf = vec![0u8; at.elems.len() * len];
    for (first, n) in runs(&at.elems, len) {
        mem.read(at.elems[first], &mut buf[first * len..(first + n) * len])?;
    }
    Ok(buf)
}

/// Writes one buffer (in order) to the located elements of an image.
fn store(mem: &ImageMem<'_>, at: &Located, buf: &[u8]) -> Result<(), String> {
    let len = at.elem_len;
    for (first, n) in runs(&at.elems, len) {
        mem.write(at.elems[first], &buf[first * len..(first + n) * len])?;
    }
    Ok(())
}

/// Converts `n_out` elements of `de` from `src` (`n_in` elements of `se`:
/// one is broadcast; more than `n_out`, the first `n_out` are taken, as
/// OpenCoarrays and GCC's single-image library do for a source longer than
/// the destination, which OpenCoarrays' own tests rely on).
fn convert_all(src: Vec<u8>, se: Elem, n_in: usize, de: Elem, n_out: usize) -> Vec<u8> {
    if se == de && n_in >= n_out {
        // Same type, kind and length: the bytes as they are.
        let mut src = src;
        src.truncate(n_out * de.len);
        return src;
    }
    let mut out = vec![0u8; n_out * de.len];
    for k in 0..n_out {
        let s = if n_in == 1 { 0 } else { k };
        convert(
            &mut out[k * de.len..(k + 1) * de.len],
            de,
            &src[s * se.len..(s + 1) * se.len],
            se,
        );
    }
    out
}

/// (Re)allocates an allocatable destination to `extents` when it is
/// unallocated or of another shape (Fortran's assignment to an allocatable).
///
/// # Safety
/// `dst` is gfortran's descriptor of an allocatable variable of rank
/// `extents.len()` whose data, if any, was malloc'd (gfortran's allocation).
unsafe fn reallocate(dst: *mut Descriptor, extents: &[Extent]) -> Result<(), Failure> {
    // SAFETY: caller.
    let d = unsafe { &mut *dst };
    let rank = d.dtype.rank.max(0) as usize;
    let same = !d.base_addr.is_null()
        && extents
            .iter()
            .enumerate()
            .all(|(k, e)| d.dim[k].extent() == e.n);
    if same {
        return Ok(());
    }
    let n: usize = extents.iter().map(|e| e.n).product();
    let bytes = (n * d.dtype.elem_len).max(1);
    if !d.base_addr.is_null() {
        // SAFETY: gfortran's malloc'd data of this allocatable (caller).
        unsafe { libc::free(d.base_addr) };
        d.base_addr = std::ptr::null_mut();
    }
    // SAFETY: plain allocation; gfortran frees it with free().
    let p = unsafe { libc::malloc(bytes) };
    if p.is_null() {
        return Err(Failure(
            STAT_ERROR,
            format!("cannot allocate {bytes} bytes for the result"),
        ));
    }
    d.base_addr = p;
    let mut stride = 1isize;
    let mut offset = 0isize;
    for (k, e) in extents.iter().enumerate().take(rank) {
        d.dim[k].lbound = e.lbound;
        d.dim[k].ubound = e.lbound + e.n as isize - 1;
        d.dim[k].stride = stride;
        offset -= e.lbound * stride;
        stride *= e.n as isize;
    }
    d.offset = offset;
    d.span = d.dtype.elem_len as isize;
    Ok(())
}

/// The shape a destination of rank `rank` gets for `at`'s elements.
fn dst_extents(at: &Located, rank: usize) -> Vec<Extent> {
    if at.extents.len() == rank {
        at.extents.clone()
    } else if rank == 0 {
        Vec::new()
    } else {
        // A rank the chain does not give (cannot come from a conforming
        // program): all elements along the first dimension.
        let mut v = vec![Extent { n: 1, lbound: 1 }; rank];
        v[0].n = at.elems.len();
        v
    }
}

/// The work of `get_by_ref`.
///
/// # Safety
/// gfortran's arguments.
#[allow(clippy::too_many_arguments)]
unsafe fn get_by_ref(
    c: &Caf,
    token: *mut c_void,
    image: c_int,
    dst: *mut Descriptor,
    refs: *const CafReference,
    dst_kind: c_int,
    src_kind: c_int,
    dst_reallocatable: bool,
    check_failed: bool,
    src_type: c_int,
) -> Result<(), Failure> {
    // SAFETY: gfortran's arguments (caller).
    let t = unsafe { target(c, token, image, refs, check_failed)? };
    let (at, data) = t.read_all(c)?;
    // SAFETY: gfortran's destination descriptor.
    let (rank, elem_len, ty) = unsafe {
        let d = &*dst;
        (d.dtype.rank.max(0) as usize, d.dtype.elem_len, d.dtype.ty)
    };
    if dst_reallocatable {
        // SAFETY: an allocatable destination (gfortran says so).
        unsafe { reallocate(dst, &dst_extents(&at, rank))? };
    }
    // SAFETY: a valid descriptor with its data.
    let shape = unsafe { Shape::of(dst) };
    let n_out = shape.len();
    let n_in = at.elems.len();
    if n_in < n_out && n_in != 1 {
        return Err(Failure(
            STAT_ERROR,
            format!("the image holds {n_in} elements, the destination {n_out}"),
        ));
    }
    let se = Elem::new(src_type as i8, src_kind as usize, at.elem_len);
    let de = Elem::new(ty, dst_kind as usize, elem_len);
    let out = convert_all(data, se, n_in, de, n_out);
    if shape.is_contiguous() {
        // SAFETY: the destination's n_out contiguous elements.
        let d = unsafe { std::slice::from_raw_parts_mut(shape.base, n_out * elem_len) };
        d.copy_from_slice(&out[..n_out * elem_len]);
        return Ok(());
    }
    for (k, off) in shape.offsets().into_iter().enumerate() {
        // SAFETY: element k of the destination (its descriptor's walk).
        let d = unsafe { std::slice::from_raw_parts_mut(shape.base.offset(off), elem_len) };
        d.copy_from_slice(&out[k * elem_len..(k + 1) * elem_len]);
    }
    Ok(())
}

/// The work of `send_by_ref`.
///
/// # Safety
/// gfortran's arguments.
#[allow(clippy::too_many_arguments)]
unsafe fn send_by_ref(
    c: &Caf,
    token: *mut c_void,
    image: c_int,
    src: *mut Descriptor,
    refs: *const CafReference,
    dst_kind: c_int,
    src_kind: c_int,
    dst_reallocatable: bool,
    check_failed: bool,
    dst_type: c_int,
) -> Result<(), Failure> {
    // SAFETY: gfortran's arguments (caller).
    let t = unsafe { target(c, token, image, refs, check_failed)? };
    let mem = t.mem(c);
    // SAFETY: gfortran's source descriptor.
    let shape = unsafe { Shape::of(src) };
    let n_in = shape.len();
    let src_extents: Vec<usize> = shape.dims.iter().map(|d| d.1).collect();
    let mut at = match t.walk(&mem) {
        Err(WalkError::NotAllocated(m, hole)) => {
            let plan = hole
                .filter(|_| dst_reallocatable)
                .and_then(|h| allocation_for(&t.refs, h, &src_extents, dst_type));
            let Some(plan) = plan else {
                return Err(Failure(STAT_ERROR, format!("{m} on image {image}")));
            };
            allocate_on(c, t.locale, &plan).map_err(|e| Failure(STAT_ERROR, e))?;
            t.walk(&mem)?
        }
        r => r?,
    };
    // An allocatable array of another shape is reallocated (Fortran's
    // assignment to an allocatable), a scalar source aside.
    let same = at
        .extents
        .iter()
        .map(|e| e.n)
        .eq(src_extents.iter().copied());
    if dst_reallocatable && !same && !src_extents.is_empty() {
        if let Some(plan) = at
            .tail
            .and_then(|h| allocation_for(&t.refs, h, &src_extents, dst_type))
        {
            allocate_on(c, t.locale, &plan).map_err(|e| Failure(STAT_ERROR, e))?;
            at = t.walk(&mem)?;
        }
    }
    let n_out = at.elems.len();
    if n_in < n_out && n_in != 1 {
        return Err(Failure(
            STAT_ERROR,
            format!("the source holds {n_in} elements, the image's destination {n_out}"),
        ));
    }
    let data = if shape.is_contiguous() {
        // SAFETY: the source's n_in contiguous elements.
        unsafe { std::slice::from_raw_parts(shape.base, n_in * shape.elem_len) }.to_vec()
    } else {
        let mut data = Vec::with_capacity(n_in * shape.elem_len);
        for off in shape.offsets() {
            // SAFETY: element of the source (its descriptor's walk).
            data.extend_from_slice(unsafe {
                std::slice::from_raw_parts(shape.base.offset(off), shape.elem_len)
            });
        }
        data
    };
    let se = Elem::new(shape.ty, src_kind as usize, shape.elem_len);
    let de = Elem::new(dst_type as i8, dst_kind as usize, at.elem_len);
    let out = convert_all(data, se, n_in, de, n_out);
    store(&mem, &at, &out).map_err(|e| Failure(STAT_ERROR, e))
}

fn report(stat: *mut c_int, statement: &str, r: Result<(), Failure>) {
    let out = StatOut::stat_only(stat);
    match r {
        Ok(()) => out.ok(),
        Err(Failure(code, msg)) => out.fail(code, statement, msg),
    }
}

/// `_gfortran_caf_get_by_ref`: `dst = obj[image_index]<refs>`.
///
/// # Safety
/// gfortran's arguments: `token` a coarray's token, `dst` a descriptor of
/// the local destination (allocatable when `dst_reallocatable`), `refs` its
/// chain, `stat` null or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn _gfortran_caf_get_by_ref(
    token: *mut c_void,
    image_index: c_int,
    dst: *mut Descriptor,
    refs: *const CafReference,
    dst_kind: c_int,
    src_kind: c_int,
    _may_require_tmp: bool,
    dst_reallocatable: bool,
    stat: *mut c_int,
    src_type: c_int,
) {
    let c = Caf::get();
    // SAFETY: gfortran's arguments.
    let r = unsafe {
        get_by_ref(
            c,
            token,
            image_index,
            dst,
            refs,
            dst_kind,
            src_kind,
            dst_reallocatable,
            !stat.is_null(),
            src_type,
        )
    };
    report(stat, "coindexed reference (get)", r);
}

/// `_gfortran_caf_send_by_ref`: `obj[image_index]<refs> = src`.
///
/// # Safety
/// gfortran's arguments: `token` a coarray's token, `src` a descriptor of
/// the local source, `refs` its chain, `stat` null or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn _gfortran_caf_send_by_ref(
    token: *mut c_void,
    image_index: c_int,
    src: *mut Descriptor,
    refs: *const CafReference,
    dst_kind: c_int,
    src_kind: c_int,
    _may_require_tmp: bool,
    dst_reallocatable: bool,
    stat: *mut c_int,
    dst_type: c_int,
) {
    let c = Caf::get();
    // SAFETY: gfortran's arguments.
    let r = unsafe {
        send_by_ref(
            c,
            token,
            image_index,
            src,
            refs,
            dst_kind,
            src_kind,
            dst_reallocatable,
            !stat.is_null(),
            dst_type,
        )
    };
    report(stat, "coindexed assignment (send)", r);
}

/// `_gfortran_caf_sendget_by_ref`:
/// `dst_obj[dst_image]<dst_refs> = src_obj[src_image]<src_refs>`.
///
/// # Safety
/// gfortran's arguments: tokens of coarrays, their chains, stats null or
/// writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn _gfortran_caf_sendget_by_ref(
    dst_token: *mut c_void,
    dst_image_index: c_int,
    dst_refs: *const CafReference,
    src_token: *mut c_void,
    src_image_index: c_int,
    src_refs: *const CafReference,
    dst_kind: c_int,
    src_kind: c_int,
    _may_require_tmp: bool,
    dst_stat: *mut c_int,
    src_stat: *mut c_int,
    dst_type: c_int,
    src_type: c_int,
) {
    let c = Caf::get();
    // The source first: its elements into a buffer of this image.
    // SAFETY: gfortran's arguments.
    let src = unsafe { target(c, src_token, src_image_index, src_refs, !src_stat.is_null()) }
        .and_then(|t| t.read_all(c));
    let (src_at, data) = match src {
        Ok(x) => x,
        Err(e) => {
            report(src_stat, "coindexed assignment (sendget, source)", Err(e));
            if !dst_stat.is_null() {
                // SAFETY: a non-null stat is writable (gfortran).
                unsafe { dst_stat.write(STAT_ERROR) };
            }
            return;
        }
    };
    StatOut::stat_only(src_stat).ok();
    // SAFETY: gfortran's arguments.
    let r = unsafe { target(c, dst_token, dst_image_index, dst_refs, !dst_stat.is_null()) }
        .and_then(|t| {
            let mem = t.mem(c);
            let at = t.walk(&mem)?;
            let (n_in, n_out) = (src_at.elems.len(), at.elems.len());
            if n_in < n_out && n_in != 1 {
                return Err(Failure(
                    STAT_ERROR,
                    format!(
                        "image {src_image_index} gives {n_in} elements, image \
                         {dst_image_index}'s destination holds {n_out}"
                    ),
                ));
            }
            let se = Elem::new(src_type as i8, src_kind as usize, src_at.elem_len);
            let de = Elem::new(dst_type as i8, dst_kind as usize, at.elem_len);
            let out = convert_all(data, se, n_in, de, n_out);
            store(&mem, &at, &out).map_err(|e| Failure(STAT_ERROR, e))
        });
    report(dst_stat, "coindexed assignment (sendget)", r);
}

/// `_gfortran_caf_is_present`: whether the allocatable component `refs`
/// ends with is allocated on image `image_index` (`ALLOCATED(obj[i]%comp)`).
///
/// # Safety
/// gfortran's arguments: `token` a coarray's token, `refs` its chain.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_is_present(
    token: *mut c_void,
    image_index: c_int,
    refs: *const CafReference,
) -> c_int {
    let c = Caf::get();
    // SAFETY: gfortran's arguments.
    let r = unsafe { target(c, token, image_index, refs, false) }.and_then(|t| {
        let mem = t.mem(c);
        match t.walk(&mem) {
            Ok(_) => Ok(1),
            Err(WalkError::NotAllocated(..)) => Ok(0),
            Err(e) => Err(e.into()),
        }
    });
    match r {
        Ok(v) => v,
        Err(Failure(code, msg)) => {
            StatOut::stat_only(std::ptr::null_mut()).fail(code, "ALLOCATED (coindexed)", msg);
            0
        }
    }
}

/// Has image `locale` allocate a component of its own.
fn allocate_on(c: &Caf, locale: usize, a: &alloc::Allocation) -> Result<(), String> {
    let reply = if locale == c.me {
        alloc::allocate_here(c.rt, a).map(|_| Vec::new())
    } else {
        c.rt.on(locale, runtime_shim::fn_id(alloc::ALLOC_BODY), &a.encode())
            .map_err(|e| e.to_string())
    }?;
    if reply.is_empty() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&reply).into_owned())
    }
}
