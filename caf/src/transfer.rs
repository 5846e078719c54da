//! Coindexed assignment: `_gfortran_caf_send` (`a(...)[i] = b`),
//! `_gfortran_caf_get` (`b = a(...)[i]`) and `_gfortran_caf_sendget`
//! (`a(...)[i] = c(...)[j]`).
//!
//! What gfortran 12 passes (read from `-fdump-tree-original`): the
//! coindexed side as a descriptor of the section *as it lies on this image*
//! (its `base_addr` this image's address of the section, or with a vector
//! subscript of the array's first element) and `offset` = that `base_addr`
//! minus the coarray's own base, so an element's address on image `i` is
//! the coarray's address there + `offset` + the element's distance from
//! `base_addr`. With vector subscripts it also passes one `caf_vector_t`
//! per dimension (the vector, or the triplet of a dimension without one,
//! in the declared bounds; the descriptor's extents then do not count).
//! `send` gets 11 arguments (stat and a team, both null in what gfortran 12
//! emits), `get` 10 (stat last), `sendget` 14 (stat last). Image indices
//! are 1-based in the current team. gfortran never calls
//! `_gfortran_caf_is_contiguous` (libcaf.h declares it for the library's
//! own use), so this library does not export it.
//!
//! Each side becomes a `section::Section` (byte offsets from an origin, per
//! dimension a triplet or a vector subscript) and the move is one runtime
//! PUT / GET when both sides are contiguous and of one kind, else packed in
//! array element order and moved by `remote`'s strided or run-wise calls.
//! Kinds and types convert element by element ([`crate::convert`]), a
//! scalar right side is assigned to every element, and the right side is
//! read in full before the left side is written when they can overlap (the
//! same image's memory), as if it were evaluated first.
//!
//! The move helpers are crate-wide for the `*_by_ref` calls:
//! `remote::send_section` / `remote::get_section` (a local section to or
//! from a section of an image's memory, converting; this image included),
//! `remote::put_packed` / `remote::get_packed` (a packed buffer to or from
//! a section of an image's memory), `section::gather` / `section::scatter`
//! / `section::convert_packed` (local walks with conversion).

pub(crate) mod remote;
pub(crate) mod section;

use crate::convert::Elem;
use crate::desc::Descriptor;
use crate::register::locate;
use crate::stat::{StatOut, STAT_ERROR, STAT_FAILED_IMAGE};
use crate::state::{Caf, IMAGE_FAILED};
use section::{CafVector, Section};
use std::ffi::{c_int, c_void};

/// One coindexed side resolved: the image's world locale and the address
/// there of the descriptor's `base_addr`, and the section.
struct Coindexed {
    locale: usize,
    origin: u64,
    section: Section,
}

/// Resolves the coindexed side of a statement; reports through `out` and
/// returns None on a bad image index, a failed image, a coarray not
/// allocated there, or a section outside the coarray.
///
/// # Safety
/// `token` is null or ours; `desc` a valid descriptor; `vector` null or one
/// entry per dimension.
#[allow(clippy::too_many_arguments)]
unsafe fn resolve(
    c: &Caf,
    token: *mut c_void,
    offset: usize,
    image: c_int,
    desc: *const Descriptor,
    vector: *const CafVector,
    out: &StatOut,
    statement: &str,
) -> Option<Coindexed> {
    let (tok, locale, origin) = match locate(c, token, offset, image, true) {
        Ok(t) => t,
        Err((code, msg)) => {
            out.fail(code, statement, msg);
            return None;
        }
    };
    // SAFETY: caller.
    let section = match unsafe { Section::of_descriptor(desc, vector) } {
        Ok(s) => s,
        Err(e) => {
            out.fail(STAT_ERROR, statement, format!("{e} is not supported"));
            return None;
        }
    };
    if let Some((lo, hi)) = section.span() {
        let (lo, hi) = (lo + offset as isize, hi + offset as isize);
        if tok.size > 0 && (lo < 0 || hi > tok.size as isize) {
            out.fail(
                STAT_ERROR,
                statement,
                format!(
                    "the section reaches bytes {lo} to {hi} of a coarray of {} bytes on image \
                     {image}",
                    tok.size
                ),
            );
            return None;
        }
    }
    Some(Coindexed {
        locale,
        origin,
        section,
    })
}

/// The element type of a descriptor with the kind gfortran passed beside it.
///
/// # Safety
/// `d` is a valid descriptor.
unsafe fn elem(d: *const Descriptor, kind: c_int) -> Elem {
    // SAFETY: caller.
    let dt = unsafe { (*d).dtype };
    Elem::new(dt.ty, kind.max(1) as usize, dt.elem_len)
}

/// Reports a runtime error of a transfer with image `image` (locale `l`).
fn failed(
    c: &Caf,
    out: &StatOut,
    statement: &str,
    image: c_int,
    l: usize,
    e: impl std::fmt::Display,
) {
    if c.status_of(l) == IMAGE_FAILED {
        out.fail(
            STAT_FAILED_IMAGE,
            statement,
            format!("image {image} has failed"),
        );
    } else {
        out.fail(STAT_ERROR, statement, format!("image {image}: {e}"));
    }
}

const SEND: &str = "assignment to a coindexed object";
const GET: &str = "reference to a coindexed object";

/// `_gfortran_caf_send`: `dest(...)[image_index] = src`.
///
/// # Safety
/// gfortran's arguments: valid descriptors, `dst_vector` null or one entry
/// per dimension of `dest`, `stat` null or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn _gfortran_caf_send(
    token: *mut c_void,
    offset: usize,
    image_index: c_int,
    dest: *const Descriptor,
    dst_vector: *const CafVector,
    src: *const Descriptor,
    dst_kind: c_int,
    src_kind: c_int,
    _may_require_tmp: bool,
    stat: *mut c_int,
    _team: *mut c_void,
) {
    let c = Caf::get();
    let out = StatOut::stat_only(stat);
    // SAFETY: gfortran's arguments (caller).
    let Some(to) =
        (unsafe { resolve(c, token, offset, image_index, dest, dst_vector, &out, SEND) })
    else {
        return;
    };
    // SAFETY: as above.
    let (re, le) = unsafe { (elem(dest, dst_kind), elem(src, src_kind)) };
    // SAFETY: as above.
    let lsec = match unsafe { Section::of_descriptor(src, std::ptr::null()) } {
        Ok(s) => s,
        Err(e) => return out.fail(STAT_ERROR, SEND, e),
    };
    // SAFETY: `src` describes readable memory of the program; when the
    // image is this one, `to.origin` is this process's coarray memory and
    // the section lies inside it (checked by `resolve`).
    let r = unsafe {
        remote::send_section(
            c,
            to.locale,
            to.origin,
            &to.section,
            re,
            (*src).base_addr as *const u8,
            &lsec,
            le,
        )
    };
    match r {
        Ok(()) => out.ok(),
        Err(e) => failed(c, &out, SEND, image_index, to.locale, e),
    }
}

/// `_gfortran_caf_get`: `dest = src(...)[image_index]`.
///
/// # Safety
/// As `_gfortran_caf_send`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn _gfortran_caf_get(
    token: *mut c_void,
    offset: usize,
    image_index: c_int,
    src: *const Descriptor,
    src_vector: *const CafVector,
    dest: *const Descriptor,
    src_kind: c_int,
    dst_kind: c_int,
    _may_require_tmp: bool,
    stat: *mut c_int,
) {
    let c = Caf::get();
    let out = StatOut::stat_only(stat);
    // SAFETY: gfortran's arguments (caller).
    let Some(from) =
        (unsafe { resolve(c, token, offset, image_index, src, src_vector, &out, GET) })
    else {
        return;
    };
    // SAFETY: as above.
    let (re, le) = unsafe { (elem(src, src_kind), elem(dest, dst_kind)) };
    // SAFETY: as above.
    let lsec = match unsafe { Section::of_descriptor(dest, std::ptr::null()) } {
        Ok(s) => s,
        Err(e) => return out.fail(STAT_ERROR, GET, e),
    };
    // SAFETY: `dest` describes writable memory of the program; the
    // coindexed side as in `_gfortran_caf_send`.
    let r = unsafe {
        remote::get_section(
            c,
            from.locale,
            from.origin,
            &from.section,
            re,
            (*dest).base_addr as *mut u8,
            &lsec,
            le,
        )
    };
    match r {
        Ok(()) => out.ok(),
        Err(e) => failed(c, &out, GET, image_index, from.locale, e),
    }
}

/// `_gfortran_caf_sendget`: `dst(...)[dst_image_index] =
/// src(...)[src_image_index]`. The source is read in full (into a packed
/// buffer, converted) before the destination is written.
///
/// # Safety
/// As `_gfortran_caf_send`, for both coindexed sides.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn _gfortran_caf_sendget(
    dst_token: *mut c_void,
    dst_offset: usize,
    dst_image_index: c_int,
    dest: *const Descriptor,
    dst_vector: *const CafVector,
    src_token: *mut c_void,
    src_offset: usize,
    src_image_index: c_int,
    src: *const Descriptor,
    src_vector: *const CafVector,
    dst_kind: c_int,
    src_kind: c_int,
    _may_require_tmp: bool,
    stat: *mut c_int,
) {
    let c = Caf::get();
    let out = StatOut::stat_only(stat);
    // SAFETY: gfortran's arguments (caller).
    let Some(from) = (unsafe {
        resolve(
            c,
            src_token,
            src_offset,
            src_image_index,
            src,
            src_vector,
            &out,
            GET,
        )
    }) else {
        return;
    };
    // SAFETY: as above.
    let Some(to) = (unsafe {
        resolve(
            c,
            dst_token,
            dst_offset,
            dst_image_index,
            dest,
            dst_vector,
            &out,
            SEND,
        )
    }) else {
        return;
    };
    // SAFETY: as above.
    let (de, se) = unsafe { (elem(dest, dst_kind), elem(src, src_kind)) };
    let (n, m) = (to.section.len(), from.section.len());
    if n == 0 {
        return out.ok();
    }
    if m != n && m != 1 {
        return out.fail(
            STAT_ERROR,
            SEND,
            format!(
                "the source has {m} elements and the destination {n}: the shapes do not conform"
            ),
        );
    }
    let packed = match remote::get_packed(c, from.locale, from.origin, &from.section) {
        Ok(p) => p,
        Err(e) => return failed(c, &out, GET, src_image_index, from.locale, e),
    };
    let packed = if se == de && m == n {
        packed
    } else {
        section::convert_packed(&packed, se, de, n)
    };
    match remote::put_packed(c, to.locale, to.origin, &to.section, &packed) {
        Ok(()) => out.ok(),
        Err(e) => failed(c, &out, SEND, dst_image_index, to.locale, e),
    }
}
