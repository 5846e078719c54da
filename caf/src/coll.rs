//! The collective subroutines: CO_BROADCAST, CO_SUM, CO_MIN, CO_MAX and
//! CO_REDUCE over the current team (`_gfortran_caf_co_*`).
//!
//! Each one packs the elements its argument's descriptor names (any rank,
//! any stride: [`elements`]) into a contiguous buffer, runs one collective
//! of the runtime's team ([`runtime_shim::team::Team`]) and unpacks the
//! result into the same elements. CO_SUM / CO_MIN / CO_MAX of the types the
//! runtime reduces itself (integer 1/2/4/8, real 4/8, complex 4/8 as pairs
//! of reals for CO_SUM) are its `allreduce` (or `reduce` at the result
//! image); everything else (integer(16), character, CO_REDUCE's user
//! function) is the runtime's reduction over elements it does not know
//! (`Team::reduce_elems_in_place`) with this library's combining function.
//!
//! Order: the runtime combines the contributions in rank (image index)
//! order on every member, and the fallback here does the same, so a
//! floating-point result is the same bits on every image: ((a1 op a2) op
//! a3) ... op an.
//!
//! A collective involves every image of the team; an image that has
//! stopped or failed would leave the others waiting forever, so each call
//! first reads the team's status words and ends with STAT_STOPPED_IMAGE /
//! STAT_FAILED_IMAGE (or error termination without `stat=`) when one has.
//! An image that stops while the others are already inside the collective
//! is not noticed (the runtime's collectives do not watch status words).
//!
//! Descriptors are read with the data pointer as the first element, and
//! `span` only where `offset` shows the descriptor was set up completely:
//! for a CO_BROADCAST of a derived type gfortran calls co_broadcast once
//! per component, and the descriptors it builds for allocatable ones leave
//! `offset` and `span` uninitialised (`co_broadcast_alloc_mixed`,
//! `co_broadcast_allocatable_components`); gfortran always points
//! `base_addr` at the element with every index at its lower bound. A
//! deferred-length character component comes with element length 0 (its
//! length is broadcast after it, as a separate call) and is not copied.

pub mod opr;
pub mod random;

use crate::desc::{Descriptor, Shape, BT_CHARACTER, BT_COMPLEX, BT_INTEGER, BT_LOGICAL, BT_REAL};
use crate::stat::{StatOut, STAT_ERROR, STAT_FAILED_IMAGE, STAT_STOPPED_IMAGE};
use crate::state::{Caf, TeamRec, IMAGE_ENDED, IMAGE_FAILED, IMAGE_STOPPED};
use runtime_shim::pod::{as_bytes, vec_from_bytes};
use runtime_shim::team::{Reduce, ReduceOp, Team};
use std::cmp::Ordering;
use std::ffi::{c_char, c_int, c_void};

/// The elements `d` describes, with `base_addr` as the first element (see
/// the module comment).
///
/// # Safety
/// `d` is a gfortran descriptor whose `rank` dimensions are initialised.
pub unsafe fn elements(d: *const Descriptor) -> Shape {
    // SAFETY: caller.
    let d = unsafe { &*d };
    let rank = (d.dtype.rank.max(0) as usize).min(crate::desc::MAX_DIMS);
    let elem_len = d.dtype.elem_len;
    // A descriptor gfortran set up completely has offset = -sum(lbound *
    // stride); the ones it builds for allocatable components leave offset
    // and span unset (stack garbage) and describe contiguous memory.
    let first: isize = d.dim[..rank].iter().map(|dm| dm.lbound * dm.stride).sum();
    let span = if d.offset == -first && d.span >= elem_len as isize && d.span > 0 {
        d.span
    } else {
        elem_len as isize
    };
    let dims = d.dim[..rank]
        .iter()
        .map(|dm| (dm.stride * span, dm.extent()))
        .collect();
    Shape {
        base: d.base_addr as *mut u8,
        elem_len,
        ty: d.dtype.ty,
        dims,
    }
}

/// The elements of `s` in array element order, contiguous.
///
/// # Safety
/// `s` describes readable memory (the program's argument).
pub unsafe fn pack(s: &Shape) -> Vec<u8> {
    let n = s.len() * s.elem_len;
    if s.is_contiguous() {
        if n == 0 {
            return Vec::new();
        }
        // SAFETY: contiguous elements from base (caller).
        return unsafe { std::slice::from_raw_parts(s.base, n) }.to_vec();
    }
    let mut out = Vec::with_capacity(n);
    for off in s.offsets() {
        // SAFETY: each element is readable (caller).
        let e = unsafe { std::slice::from_raw_parts(s.base.wrapping_offset(off), s.elem_len) };
        out.extend_from_slice(e);
    }
    out
}

/// Writes `bytes` (array element order, contiguous) into the elements of
/// `s`.
///
/// # Safety
/// `s` describes writable memory; `bytes` has `s.len() * s.elem_len` bytes.
pub unsafe fn unpack(s: &Shape, bytes: &[u8]) {
    debug_assert_eq!(bytes.len(), s.len() * s.elem_len);
    if s.is_contiguous() {
        if !bytes.is_empty() {
            // SAFETY: contiguous writable elements (caller).
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), s.base, bytes.len()) };
        }
        return;
    }
    for (k, off) in s.offsets().into_iter().enumerate() {
        let e = &bytes[k * s.elem_len..(k + 1) * s.elem_len];
        // SAFETY: each element is writable (caller).
        unsafe {
            std::ptr::copy_nonoverlapping(e.as_ptr(), s.base.wrapping_offset(off), s.elem_len)
        };
    }
}

/// The collectives' `stat=` / `errmsg=`. gfortran 12 passes a local
/// fixed-length ERRMSG= variable of a collective *by value* (its bytes on
/// the stack, `-fdump-tree-original` shows `msg` where other statements
/// have `&msg`): the integer arguments after it move up one register, so
/// the `errmsg` argument holds the next one (the length for co_sum and
/// co_broadcast, `a_len` for co_min / co_max / co_reduce, whose own `a_len`
/// argument then holds something else), never an address. No object lives
/// in the first page, so a value there other than null is taken as that:
/// no errmsg (the message is lost; `stat=` still works), and the value is
/// returned as the real `a_len`.
fn stat_out(stat: *mut c_int, errmsg: *mut c_char, errmsg_len: usize) -> (StatOut, Option<c_int>) {
    let p = errmsg as usize;
    if p != 0 && p < 4096 {
        return (
            StatOut::new(stat, std::ptr::null_mut(), 0),
            Some(p as c_int),
        );
    }
    (StatOut::new(stat, errmsg, errmsg_len), None)
}

/// Checks, before a collective, that no image of the team has stopped or
/// failed (the collective would wait for it forever); reports through
/// `out` and returns false if one has.
fn team_ready(c: &Caf, team: &TeamRec, out: &StatOut, statement: &str) -> bool {
    let mut stopped = None;
    for (i, &l) in team.team.locales().iter().enumerate() {
        match c.status_of(l) {
            IMAGE_FAILED => {
                out.fail(
                    STAT_FAILED_IMAGE,
                    statement,
                    format!("image {} of the current team has failed", i + 1),
                );
                return false;
            }
            IMAGE_STOPPED | IMAGE_ENDED if stopped.is_none() => stopped = Some(i + 1),
            _ => {}
        }
    }
    if let Some(i) = stopped {
        out.fail(
            STAT_STOPPED_IMAGE,
            statement,
            format!("image {i} of the current team has stopped"),
        );
        return false;
    }
    true
}

/// `result_image` / `source_image` as a team rank (None: every image).
fn root_rank(team: &TeamRec, image: c_int, what: &str) -> Result<Option<usize>, String> {
    if image == 0 && what == "RESULT_IMAGE" {
        return Ok(None);
    }
    if image < 1 || image as i64 > team.num_images() {
        return Err(format!(
            "{what}={image} is not an image of the current team (1 to {})",
            team.num_images()
        ));
    }
    Ok(Some(image as usize - 1))
}

/// `_gfortran_caf_co_broadcast`: the elements of `a` on `source_image`
/// are copied into `a` on every image of the current team (a byte copy:
/// derived types too; gfortran calls it once per allocatable component).
///
/// # Safety
/// `a` is gfortran's descriptor of the argument; stat/errmsg as usual.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_co_broadcast(
    a: *mut Descriptor,
    source_image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    const WHAT: &str = "CO_BROADCAST";
    let (out, _) = stat_out(stat, errmsg, errmsg_len);
    let c = Caf::get();
    let team = c.current();
    let root = match root_rank(&team, source_image, "SOURCE_IMAGE") {
        Ok(r) => r.expect("a source image"),
        Err(e) => return out.fail(STAT_ERROR, WHAT, e),
    };
    if !team_ready(c, &team, &out, WHAT) {
        return;
    }
    // SAFETY: gfortran's descriptor of the argument.
    let s = unsafe { elements(a) };
    let me = team.team.rank();
    let packed;
    let mine: &[u8] = if me != root || s.is_empty() {
        &[]
    } else if s.is_contiguous() {
        // SAFETY: the argument's contiguous elements, readable; only read
        // while this slice lives (this image is the root: nothing is
        // written back).
        unsafe { std::slice::from_raw_parts(s.base, s.len() * s.elem_len) }
    } else {
        // SAFETY: the argument's elements are readable.
        packed = unsafe { pack(&s) };
        &packed
    };
    let got = match team.team.broadcast(root, mine) {
        Ok(v) => v,
        Err(e) => return out.fail(STAT_ERROR, WHAT, e),
    };
    if me != root {
        let want = s.len() * s.elem_len;
        if got.len() != want {
            return out.fail(
                STAT_ERROR,
                WHAT,
                format!(
                    "image {source_image} sent {} bytes, this image's argument has {want} \
                     ({} elements of {} bytes)",
                    got.len(),
                    s.len(),
                    s.elem_len
                ),
            );
        }
        // SAFETY: the argument's elements are writable.
        unsafe { unpack(&s, &got) };
    }
    out.ok();
}

/// What a reduction does with two elements.
#[derive(Clone, Copy)]
enum Op {
    Sum,
    Min,
    Max,
    /// CO_REDUCE's OPERATION, called as [`opr::Call`] says.
    User(opr::Call, *const c_void),
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Sum => "CO_SUM",
            Op::Min => "CO_MIN",
            Op::Max => "CO_MAX",
            Op::User(..) => "CO_REDUCE",
        }
    }

    fn runtime(self) -> Option<ReduceOp> {
        match self {
            Op::Sum => Some(ReduceOp::Sum),
            Op::Min => Some(ReduceOp::Min),
            Op::Max => Some(ReduceOp::Max),
            Op::User(..) => None,
        }
    }
}

/// The element type of a reduction as far as the library combines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// integer (or logical) of 1, 2, 4, 8, 16 bytes.
    Int(usize),
    /// real of 4 or 8 bytes.
    Real(usize),
    /// complex of 2 x 4 or 2 x 8 bytes.
    Complex(usize),
    /// character of this kind (1 or 4).
    Char(usize),
    /// Anything else: only CO_REDUCE's function knows it.
    Opaque,
}

/// Classifies an argument of CO_SUM / CO_MIN / CO_MAX, or says why the
/// intrinsic does not take it.
pub fn classify(ty: i8, elem_len: usize, a_len: c_int, what: &str) -> Result<Elem, String> {
    Ok(match (ty, elem_len) {
        (BT_INTEGER | BT_LOGICAL, 1 | 2 | 4 | 8 | 16) => Elem::Int(elem_len),
        (BT_REAL, 4 | 8) => Elem::Real(elem_len),
        (BT_COMPLEX, 8 | 16) => Elem::Complex(elem_len / 2),
        (BT_REAL, 16) | (BT_COMPLEX, 32) => {
            return Err(format!(
                "{what} of real(10) / real(16) (or complex of those kinds) is not supported: \
                 both kinds have {elem_len}-byte descriptors, so the library cannot tell which \
                 arithmetic to use"
            ))
        }
        (BT_CHARACTER, _) => {
            let chars = if a_len > 0 { a_len as usize } else { elem_len };
            let kind = if chars > 0 && elem_len == 4 * chars {
                4
            } else {
                1
            };
            Elem::Char(kind)
        }
        _ => Elem::Opaque,
    })
}

fn native<T: Reduce>(
    team: &Team,
    root: Option<usize>,
    bytes: &[u8],
    op: ReduceOp,
) -> runtime_shim::Result<Option<Vec<u8>>> {
    let data: Vec<T> = vec_from_bytes(bytes);
    let r = match root {
        None => Some(team.allreduce(&data, op)?),
        Some(r) => team.reduce(r, &data, op)?,
    };
    Ok(r.map(|v| as_bytes(&v).to_vec()))
}

/// A contiguous argument of a type the runtime reduces, reduced in place:
/// the runtime reads the program's array and writes the result into it
/// (no packing, no result vector). `None` when misaligned for `T` (then the caller packs).
///
/// # Safety
/// `s` is contiguous, readable and writable, of `s.len() * s.elem_len`
/// bytes holding `T`s.
unsafe fn in_place<T: Reduce>(
    team: &Team,
    root: Option<usize>,
    s: &Shape,
    op: ReduceOp,
) -> Option<runtime_shim::Result<()>> {
    let n = s.len() * s.elem_len / std::mem::size_of::<T>();
    if n > 0 && (s.base as usize) % std::mem::align_of::<T>() != 0 {
        return None;
    }
    let data: &mut [T] = if n == 0 {
        &mut []
    } else {
        // SAFETY: n aligned, readable and writable Ts (caller; alignment
        // checked), not otherwise referenced during the call.
        unsafe { std::slice::from_raw_parts_mut(s.base as *mut T, n) }
    };
    Some(match root {
        None => team.allreduce_in_place(data, op),
        Some(r) => team.reduce_in_place(r, data, op).map(|_| ()),
    })
}

/// [`in_place`] for the element types the runtime reduces; `None` for
/// the others (and misaligned arrays).
///
/// # Safety
/// As for [`in_place`].
unsafe fn reduce_in_place(
    team: &Team,
    root: Option<usize>,
    s: &Shape,
    op: Op,
    a_len: c_int,
) -> Option<runtime_shim::Result<()>> {
    let rop = op.runtime()?;
    let elem = classify(s.ty, s.elem_len, a_len, op.name()).ok()?;
    let int = s.ty == BT_INTEGER;
    // SAFETY: caller.
    unsafe {
        match (elem, op) {
            (Elem::Int(1), _) if int => in_place::<i8>(team, root, s, rop),
            (Elem::Int(2), _) if int => in_place::<i16>(team, root, s, rop),
            (Elem::Int(4), _) if int => in_place::<i32>(team, root, s, rop),
            (Elem::Int(8), _) if int => in_place::<i64>(team, root, s, rop),
            (Elem::Real(4), _) | (Elem::Complex(4), Op::Sum) => in_place::<f32>(team, root, s, rop),
            (Elem::Real(8), _) | (Elem::Complex(8), Op::Sum) => in_place::<f64>(team, root, s, rop),
            _ => None,
        }
    }
}

/// `bytes` (whole elements of `elem_len` bytes) reduced over the team by
/// the runtime with `f(acc, next)`, combined in image order on every image
/// (`Team::reduce_elems_in_place`: large arrays by reduce-scatter and
/// gather, each image applying `f` to its block only); `None` on images
/// other than `root`. An error of `f` fails the reduction on every image.
fn by_function(
    team: &Team,
    root: Option<usize>,
    bytes: &[u8],
    elem_len: usize,
    f: impl FnMut(&mut [u8], &[u8]) -> Result<(), String>,
) -> Result<Option<Vec<u8>>, String> {
    if elem_len == 0 {
        // Zero-length elements (a deferred-length character): nothing to
        // combine.
        return Ok(root
            .is_none_or(|r| r == team.rank())
            .then(|| bytes.to_vec()));
    }
    let mut out = bytes.to_vec();
    let holds = team
        .reduce_elems_in_place(root, &mut out, elem_len, f)
        .map_err(|e| e.to_string())?;
    Ok(holds.then_some(out))
}

/// Orders two character elements of kind `kind` (1 or 4), as Fortran's
/// relational operators do for equal lengths (by code unit).
pub fn char_cmp(a: &[u8], b: &[u8], kind: usize) -> Ordering {
    if kind == 4 {
        let units = |s: &[u8]| -> Vec<u32> {
            s.chunks_exact(4)
                .map(|u| u32::from_ne_bytes(u.try_into().expect("4")))
                .collect()
        };
        units(a).cmp(&units(b))
    } else {
        a.cmp(b)
    }
}

fn int16_combine(op: Op) -> impl FnMut(&mut [u8], &[u8]) -> Result<(), String> {
    move |a, b| {
        let x = i128::from_ne_bytes(a[..16].try_into().expect("16"));
        let y = i128::from_ne_bytes(b[..16].try_into().expect("16"));
        let r = match op {
            Op::Min => x.min(y),
            Op::Max => x.max(y),
            _ => x.wrapping_add(y),
        };
        a.copy_from_slice(&r.to_ne_bytes());
        Ok(())
    }
}

/// Reduces `bytes` (this image's packed elements) over `team`.
fn reduce_bytes(
    team: &Team,
    root: Option<usize>,
    s: &Shape,
    bytes: &[u8],
    op: Op,
    a_len: c_int,
) -> Result<Option<Vec<u8>>, String> {
    let what = op.name();
    if let Op::User(call, f) = op {
        let elem_len = s.elem_len;
        let mut scratch = opr::Scratch::new(elem_len);
        return by_function(team, root, bytes, elem_len, |acc, next| {
            // SAFETY: f is the program's OPERATION and call the
            // convention gfortran compiled it with (opr::plan).
            unsafe { scratch.apply(call, f, acc, next) }
        });
    }
    let elem = classify(s.ty, s.elem_len, a_len, what)?;
    let rop = op.runtime().expect("an intrinsic reduction");
    let rt = |e: runtime_shim::Error| e.to_string();
    match (elem, op) {
        (Elem::Int(1), _) if s.ty == BT_INTEGER => native::<i8>(team, root, bytes, rop).map_err(rt),
        (Elem::Int(2), _) if s.ty == BT_INTEGER => {
            native::<i16>(team, root, bytes, rop).map_err(rt)
        }
        (Elem::Int(4), _) if s.ty == BT_INTEGER => {
            native::<i32>(team, root, bytes, rop).map_err(rt)
        }
        (Elem::Int(8), _) if s.ty == BT_INTEGER => {
            native::<i64>(team, root, bytes, rop).map_err(rt)
        }
        (Elem::Int(16), _) if s.ty == BT_INTEGER => {
            by_function(team, root, bytes, 16, int16_combine(op))
        }
        (Elem::Real(4), _) => native::<f32>(team, root, bytes, rop).map_err(rt),
        (Elem::Real(8), _) => native::<f64>(team, root, bytes, rop).map_err(rt),
        (Elem::Complex(4), Op::Sum) => native::<f32>(team, root, bytes, rop).map_err(rt),
        (Elem::Complex(8), Op::Sum) => native::<f64>(team, root, bytes, rop).map_err(rt),
        (Elem::Char(kind), Op::Min | Op::Max) => {
            by_function(team, root, bytes, s.elem_len, |a, b| {
                let take = match op {
                    Op::Min => char_cmp(b, a, kind) == Ordering::Less,
                    _ => char_cmp(b, a, kind) == Ordering::Greater,
                };
                if take {
                    a.copy_from_slice(b);
                }
                Ok(())
            })
        }
        _ => Err(format!(
            "{what} does not take an argument of type {} with {}-byte elements",
            type_name(s.ty),
            s.elem_len
        )),
    }
}

fn type_name(ty: i8) -> &'static str {
    match ty {
        BT_INTEGER => "integer",
        BT_LOGICAL => "logical",
        BT_REAL => "real",
        BT_COMPLEX => "complex",
        BT_CHARACTER => "character",
        crate::desc::BT_DERIVED => "derived",
        crate::desc::BT_CLASS => "class",
        _ => "unknown",
    }
}

/// The body of every reduction entry.
///
/// # Safety
/// `a` is gfortran's descriptor of the argument.
unsafe fn reduce_entry(
    a: *mut Descriptor,
    result_image: c_int,
    out: StatOut,
    op: Op,
    a_len: c_int,
) {
    let what = op.name();
    let c = Caf::get();
    let team = c.current();
    let root = match root_rank(&team, result_image, "RESULT_IMAGE") {
        Ok(r) => r,
        Err(e) => return out.fail(STAT_ERROR, what, e),
    };
    if !team_ready(c, &team, &out, what) {
        return;
    }
    // SAFETY: caller.
    let s = unsafe { elements(a) };
    if s.is_contiguous() {
        // SAFETY: the argument's elements, contiguous (checked).
        if let Some(r) = unsafe { reduce_in_place(&team.team, root, &s, op, a_len) } {
            return match r {
                Ok(()) => out.ok(),
                Err(e) => out.fail(STAT_ERROR, what, e),
            };
        }
    }
    // SAFETY: the argument's elements are readable.
    let bytes = unsafe { pack(&s) };
    match reduce_bytes(&team.team, root, &s, &bytes, op, a_len) {
        Ok(Some(r)) => {
            if r.len() != bytes.len() {
                return out.fail(
                    STAT_ERROR,
                    what,
                    format!(
                        "the result has {} bytes, the argument {} (internal error)",
                        r.len(),
                        bytes.len()
                    ),
                );
            }
            // SAFETY: the argument's elements are writable.
            unsafe { unpack(&s, &r) };
            out.ok()
        }
        // Not the result image: A becomes undefined; it keeps its value.
        Ok(None) => out.ok(),
        Err(e) => out.fail(STAT_ERROR, what, e),
    }
}

/// `_gfortran_caf_co_sum`.
///
/// # Safety
/// `a` is gfortran's descriptor of the argument; stat/errmsg as usual.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_co_sum(
    a: *mut Descriptor,
    result_image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let (out, _) = stat_out(stat, errmsg, errmsg_len);
    // SAFETY: caller.
    unsafe { reduce_entry(a, result_image, out, Op::Sum, 0) }
}

/// `_gfortran_caf_co_min` (`a_len`: the character length of a character
/// argument).
///
/// # Safety
/// `a` is gfortran's descriptor of the argument; stat/errmsg as usual.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_co_min(
    a: *mut Descriptor,
    result_image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    a_len: c_int,
    errmsg_len: usize,
) {
    let (out, shifted) = stat_out(stat, errmsg, errmsg_len);
    // SAFETY: caller.
    unsafe { reduce_entry(a, result_image, out, Op::Min, shifted.unwrap_or(a_len)) }
}

/// `_gfortran_caf_co_max` (`a_len` as for co_min).
///
/// # Safety
/// `a` is gfortran's descriptor of the argument; stat/errmsg as usual.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_co_max(
    a: *mut Descriptor,
    result_image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    a_len: c_int,
    errmsg_len: usize,
) {
    let (out, shifted) = stat_out(stat, errmsg, errmsg_len);
    // SAFETY: caller.
    unsafe { reduce_entry(a, result_image, out, Op::Max, shifted.unwrap_or(a_len)) }
}

/// `_gfortran_caf_co_reduce`: `opr` is the program's OPERATION, compiled
/// as `opr_flags` says (GFC_CAF_*, see [`opr`]); `a_len` the character
/// length of a character argument.
///
/// # Safety
/// `a` is gfortran's descriptor of the argument, `opr` a function of the
/// kind the flags describe; stat/errmsg as usual.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // gfortran's ABI
pub unsafe extern "C" fn _gfortran_caf_co_reduce(
    a: *mut Descriptor,
    opr: *const c_void,
    opr_flags: c_int,
    result_image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    a_len: c_int,
    errmsg_len: usize,
) {
    let (out, shifted) = stat_out(stat, errmsg, errmsg_len);
    let a_len = shifted.unwrap_or(a_len);
    if opr.is_null() {
        return out.fail(STAT_ERROR, "CO_REDUCE", "OPERATION is a null procedure");
    }
    // SAFETY: caller.
    let d = unsafe { &*a };
    let call = match opr::plan(d.dtype.ty, d.dtype.elem_len, opr_flags, a_len) {
        Ok(c) => c,
        Err(e) => return out.fail(STAT_ERROR, "CO_REDUCE", e),
    };
    // SAFETY: caller.
    unsafe { reduce_entry(a, result_image, out, Op::User(call, opr), a_len) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_names_what_it_refuses() {
        assert_eq!(classify(BT_INTEGER, 4, 0, "CO_SUM"), Ok(Elem::Int(4)));
        assert_eq!(classify(BT_COMPLEX, 16, 0, "CO_SUM"), Ok(Elem::Complex(8)));
        assert_eq!(classify(BT_CHARACTER, 20, 5, "CO_MIN"), Ok(Elem::Char(4)));
        assert_eq!(classify(BT_CHARACTER, 5, 5, "CO_MIN"), Ok(Elem::Char(1)));
        let e = classify(BT_REAL, 16, 0, "CO_SUM").unwrap_err();
        assert!(e.contains("real(10)") && e.contains("CO_SUM"), "{e}");
    }

    #[test]
    fn pack_and_unpack_walk_a_strided_section() {
        // A 4x3 integer(4) array; the section a(1:4:2, 1:3:2).
        let mut buf: Vec<i32> = (0..12).collect();
        let s = Shape {
            base: buf.as_mut_ptr() as *mut u8,
            elem_len: 4,
            ty: BT_INTEGER,
            dims: vec![(8, 2), (32, 2)],
        };
        // SAFETY: s describes elements of buf.
        let p = unsafe { pack(&s) };
        let got: Vec<i32> = vec_from_bytes(&p);
        assert_eq!(got, vec![0, 2, 8, 10]);
        let new: Vec<i32> = vec![-1, -2, -3, -4];
        // SAFETY: as above.
        unsafe { unpack(&s, as_bytes(&new)) };
        assert_eq!(buf, vec![-1, 1, -2, 3, 4, 5, 6, 7, -3, 9, -4, 11]);
    }

    fn desc(base: *mut u8, elem_len: usize, span: isize, offset: isize, n: isize) -> Descriptor {
        // SAFETY: all-zero is a valid Descriptor.
        let mut d: Descriptor = unsafe { std::mem::zeroed() };
        d.base_addr = base as *mut c_void;
        d.offset = offset;
        d.dtype.elem_len = elem_len;
        d.dtype.rank = 1;
        d.dtype.ty = BT_INTEGER;
        d.span = span;
        d.dim[0].stride = 1;
        d.dim[0].lbound = 1;
        d.dim[0].ubound = n;
        d
    }

    #[test]
    fn span_is_trusted_only_in_a_complete_descriptor() {
        let mut buf = [0u8; 64];
        let b = buf.as_mut_ptr();
        // A component section: 4-byte elements 16 bytes apart.
        // SAFETY: a descriptor made here.
        let s = unsafe { elements(&desc(b, 4, 16, -1, 3)) };
        assert_eq!(s.dims, vec![(16, 3)]);
        // gfortran's component descriptor: offset and span are garbage.
        // SAFETY: as above.
        let s = unsafe { elements(&desc(b, 4, 0x7ffd_1234, 0x55aa, 3)) };
        assert_eq!(s.dims, vec![(4, 3)]);
        assert_eq!(s.base, b);
    }

    #[test]
    fn character_order_is_by_code_unit() {
        assert_eq!(char_cmp(b"abc", b"abd", 1), Ordering::Less);
        let k4 = |s: &[u32]| as_bytes(s).to_vec();
        // 0x100 > 0xff as a code unit though its first byte is smaller.
        assert_eq!(char_cmp(&k4(&[0x100]), &k4(&[0xff]), 4), Ordering::Greater);
    }

    #[test]
    fn int16_sums_wrap_and_orders_hold() {
        let mut a = (i128::MAX).to_ne_bytes();
        int16_combine(Op::Sum)(&mut a, &1i128.to_ne_bytes()).unwrap();
        assert_eq!(i128::from_ne_bytes(a), i128::MIN);
        let mut b = 5i128.to_ne_bytes();
        int16_combine(Op::Min)(&mut b, &(-7i128).to_ne_bytes()).unwrap();
        assert_eq!(i128::from_ne_bytes(b), -7);
    }
}
