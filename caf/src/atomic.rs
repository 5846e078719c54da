//! Atomic subroutines on coarrays: `atomic_define`, `atomic_ref`,
//! `atomic_cas` and `atomic_op` (ATOMIC_ADD / AND / OR / XOR and their
//! FETCH forms), integer and logical of any atomic kind (4 and 8; 1 and 2
//! too), through the runtime's remote atomics (native where the provider
//! has them, CPU atomics on the mapped path, active messages otherwise).
//!
//! Atomic subroutines are not image control statements: they end no
//! segment, but the runtime keeps one thread's atomics on one word coherent
//! and ordered, which is what the standard asks of them.

use crate::desc::{BT_INTEGER, BT_LOGICAL};
use crate::register::remote_addr;
use crate::stat::{StatOut, STAT_ERROR};
use crate::state::Caf;
use runtime_shim::{AmoType, AtomicOp, GlobalAddr};
use std::ffi::{c_int, c_void};

/// `GFC_CAF_ATOMIC_ADD` and the others (libgfortran.h).
const ATOMIC_ADD: c_int = 1;
const ATOMIC_AND: c_int = 2;
const ATOMIC_OR: c_int = 3;
const ATOMIC_XOR: c_int = 4;

fn amo_type(ty: c_int, kind: c_int) -> Option<AmoType> {
    if ty != BT_INTEGER as c_int && ty != BT_LOGICAL as c_int {
        return None;
    }
    Some(match kind {
        1 => AmoType::I8,
        2 => AmoType::I16,
        4 => AmoType::I32,
        8 => AmoType::I64,
        _ => return None,
    })
}

/// Reads `kind` bytes at `p` as bits.
///
/// # Safety
/// `p` has `kind` readable bytes.
unsafe fn load(p: *const c_void, kind: c_int) -> u64 {
    // SAFETY: caller.
    unsafe {
        match kind {
            1 => *(p as *const u8) as u64,
            2 => (p as *const u16).read_unaligned() as u64,
            4 => (p as *const u32).read_unaligned() as u64,
            _ => (p as *const u64).read_unaligned(),
        }
    }
}

/// Writes the low `kind` bytes of `v` at `p`.
///
/// # Safety
/// `p` has `kind` writable bytes.
unsafe fn store(p: *mut c_void, kind: c_int, v: u64) {
    // SAFETY: caller.
    unsafe {
        match kind {
            1 => *(p as *mut u8) = v as u8,
            2 => (p as *mut u16).write_unaligned(v as u16),
            4 => (p as *mut u32).write_unaligned(v as u32),
            _ => (p as *mut u64).write_unaligned(v),
        }
    }
}

/// The word an atomic subroutine works on, as gfortran passes it to each:
/// the coarray's token, the byte offset in it, the image (0: this one),
/// the stat argument, and the type and kind of the atomic variable.
#[derive(Clone, Copy)]
struct Word {
    token: *mut c_void,
    offset: usize,
    image: c_int,
    stat: *mut c_int,
    ty: c_int,
    kind: c_int,
}

impl Word {
    fn new(
        token: *mut c_void,
        offset: usize,
        image: c_int,
        stat: *mut c_int,
        ty: c_int,
        kind: c_int,
    ) -> Self {
        Word {
            token,
            offset,
            image,
            stat,
            ty,
            kind,
        }
    }

    /// `op` on the word (`operand`, `compare`: the value's bits); the old
    /// value's bits when `fetch`. `None` after a failure, reported in the
    /// stat argument under `statement`.
    fn run(
        self,
        statement: &str,
        op: AtomicOp,
        fetch: bool,
        operand: u64,
        compare: u64,
    ) -> Option<u64> {
        let w = self;
        let c = Caf::get();
        let out = StatOut::stat_only(w.stat);
        let Some(t) = amo_type(w.ty, w.kind) else {
            out.fail(
                STAT_ERROR,
                statement,
                format!(
                    "type {} kind {} is not an atomic integer or logical kind",
                    w.ty, w.kind
                ),
            );
            return None;
        };
        let (l, a) = remote_addr(c, w.token, w.offset, w.image, &out, statement)?;
        let req = op.request(GlobalAddr::new(l, a), t, operand, fetch);
        match c.rt.amo_bits(&req.comparing(compare)) {
            Ok(v) => {
                out.ok();
                Some(v)
            }
            Err(e) => {
                out.fail(STAT_ERROR, statement, e);
                None
            }
        }
    }
}

/// `_gfortran_caf_atomic_define`.
///
/// # Safety
/// `value` has `kind` bytes; stat null or writable.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_atomic_define(
    token: *mut c_void,
    offset: usize,
    image: c_int,
    value: *const c_void,
    stat: *mut c_int,
    ty: c_int,
    kind: c_int,
) {
    // SAFETY: caller.
    let v = unsafe { load(value, kind) };
    let w = Word::new(token, offset, image, stat, ty, kind);
    w.run("ATOMIC_DEFINE", AtomicOp::Write, false, v, v);
}

/// `_gfortran_caf_atomic_ref`.
///
/// # Safety
/// `value` has `kind` writable bytes; stat null or writable.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_atomic_ref(
    token: *mut c_void,
    offset: usize,
    image: c_int,
    value: *mut c_void,
    stat: *mut c_int,
    ty: c_int,
    kind: c_int,
) {
    let w = Word::new(token, offset, image, stat, ty, kind);
    if let Some(v) = w.run("ATOMIC_REF", AtomicOp::Read, true, 0, 0) {
        // SAFETY: caller.
        unsafe { store(value, kind, v) };
    }
}

/// `_gfortran_caf_atomic_cas`: `old` gets the previous value; `new_val` is
/// stored if it equaled `compare`.
///
/// # Safety
/// `old` writable, `compare` and `new_val` readable, `kind` bytes each.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_atomic_cas(
    token: *mut c_void,
    offset: usize,
    image: c_int,
    old: *mut c_void,
    compare: *const c_void,
    new_val: *const c_void,
    stat: *mut c_int,
    ty: c_int,
    kind: c_int,
) {
    // SAFETY: caller.
    let (cmp, new) = unsafe { (load(compare, kind), load(new_val, kind)) };
    let w = Word::new(token, offset, image, stat, ty, kind);
    if let Some(v) = w.run("ATOMIC_CAS", AtomicOp::Cmpxchg, true, new, cmp) {
        // SAFETY: caller.
        unsafe { store(old, kind, v) };
    }
}

/// `_gfortran_caf_atomic_op`: ATOMIC_ADD / AND / OR / XOR, and the FETCH
/// forms when `old` is not null.
///
/// # Safety
/// `value` readable, `old` null or writable, `kind` bytes each.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_atomic_op(
    op: c_int,
    token: *mut c_void,
    offset: usize,
    image: c_int,
    value: *const c_void,
    old: *mut c_void,
    stat: *mut c_int,
    ty: c_int,
    kind: c_int,
) {
    let aop = match op {
        ATOMIC_ADD => AtomicOp::Add,
        ATOMIC_AND => AtomicOp::And,
        ATOMIC_OR => AtomicOp::Or,
        ATOMIC_XOR => AtomicOp::Xor,
        _ => {
            return StatOut::stat_only(stat).fail(
                STAT_ERROR,
                "ATOMIC_OP",
                format!("unknown atomic operation {op}"),
            )
        }
    };
    // SAFETY: caller.
    let v = unsafe { load(value, kind) };
    let fetch = !old.is_null();
    let w = Word::new(token, offset, image, stat, ty, kind);
    if let Some(prev) = w.run("ATOMIC_OP", aop, fetch, v, 0) {
        if fetch {
            // SAFETY: caller.
            unsafe { store(old, kind, prev) };
        }
    }
}
