//! Atomics carried out with CPU instructions on the target's word: what an
//! AMO-via-AM does once it arrives, what a locale does for its own words
//! when the provider has no native atomics, and what every atomic on a
//! mapped peer's word is (the intra-node mapped path, `mapped`).
//!
//! Exists so that every (type, op, fetch) combination of comm-ofi's
//! `AmoType` x `AmoOp` has one definition whose results match the native
//! ones bit for bit (the old value, zero-extended into the low bytes; 0 for
//! non-fetching ops), testable without a network.

use crate::amo::{AmoOp, AmoType};
use std::sync::atomic::{
    AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicU16, AtomicU32, AtomicU64, AtomicU8,
    Ordering::SeqCst,
};

/// Wire code of a type (index in `AmoType::ALL`).
pub fn type_code(ty: AmoType) -> u32 {
    AmoType::ALL.iter().position(|t| *t == ty).expect("listed") as u32
}

/// Wire code of an op (index in `AmoOp::ALL`).
pub fn op_code(op: AmoOp) -> u32 {
    AmoOp::ALL.iter().position(|o| *o == op).expect("listed") as u32
}

/// Type from its wire code.
pub fn type_from(code: u32) -> Option<AmoType> {
    AmoType::ALL.get(code as usize).copied()
}

/// Op from its wire code.
pub fn op_from(code: u32) -> Option<AmoOp> {
    AmoOp::ALL.get(code as usize).copied()
}

/// Whether the (type, op) pair is meaningful (bitwise ops are integer-only).
#[inline]
pub fn valid(ty: AmoType, op: AmoOp) -> bool {
    !(op.is_bitwise() && matches!(ty, AmoType::F32 | AmoType::F64))
}

/// Whether the op returns the old value.
pub fn fetches(op: AmoOp, fetch: bool) -> bool {
    fetch || matches!(op, AmoOp::Read | AmoOp::CompareSwap)
}

macro_rules! int_amo {
    ($atomic:ty, $t:ty, $u:ty, $addr:expr, $op:expr, $operand:expr, $compare:expr) => {{
        // SAFETY: the caller guarantees a valid, aligned word that is only
        // accessed atomically while we use it.
        let a = unsafe { <$atomic>::from_ptr($addr as *mut $t) };
        let v = $operand as $u as $t;
        let c = $compare as $u as $t;
        let old: $t = match $op {
            AmoOp::Read => a.load(SeqCst),
            AmoOp::Write => a.swap(v, SeqCst),
            AmoOp::CompareSwap => match a.compare_exchange(c, v, SeqCst, SeqCst) {
                Ok(x) | Err(x) => x,
            },
            AmoOp::Add => a.fetch_add(v, SeqCst),
            AmoOp::And => a.fetch_and(v, SeqCst),
            AmoOp::Or => a.fetch_or(v, SeqCst),
            AmoOp::Xor => a.fetch_xor(v, SeqCst),
            AmoOp::Min => a.fetch_min(v, SeqCst),
            AmoOp::Max => a.fetch_max(v, SeqCst),
        };
        old as $u as u64
    }};
}

macro_rules! float_amo {
    ($atomic:ty, $bits:ty, $f:ty, $addr:expr, $op:expr, $operand:expr, $compare:expr) => {{
        // SAFETY: as for integers.
        let a = unsafe { <$atomic>::from_ptr($addr as *mut $bits) };
        let v = <$f>::from_bits($operand as $bits);
        let c = <$f>::from_bits($compare as $bits);
        let update = |cur: $f| -> Option<$f> {
            match $op {
                AmoOp::Read => None,
                AmoOp::Write => Some(v),
                AmoOp::CompareSwap => (cur == c).then_some(v),
                AmoOp::Add => Some(cur + v),
                AmoOp::Min => Some(if v < cur { v } else { cur }),
                AmoOp::Max => Some(if v > cur { v } else { cur }),
                AmoOp::And | AmoOp::Or | AmoOp::Xor => None,
            }
        };
        let mut cur_bits = a.load(SeqCst);
        loop {
            let Some(new) = update(<$f>::from_bits(cur_bits)) else {
                break;
            };
            match a.compare_exchange_weak(cur_bits, new.to_bits(), SeqCst, SeqCst) {
                Ok(_) => break,
                Err(x) => cur_bits = x,
            }
        }
        cur_bits as u64
    }};
}

/// Applies `op` to the `ty` word at `addr` with CPU atomics; returns the old
/// value's bits if the op fetches, else 0. `operand` / `compare` carry the
/// value bits in their low bytes.
///
/// # Safety
/// `addr` must point to live memory of this process, aligned to
/// `ty.size()`, that nobody accesses non-atomically meanwhile.
pub unsafe fn apply(
    addr: u64,
    ty: AmoType,
    op: AmoOp,
    operand: u64,
    compare: u64,
    fetch: bool,
) -> Result<u64, String> {
    if !valid(ty, op) {
        return Err(format!("{op:?} is not defined on {ty:?}"));
    }
    if addr % ty.size() as u64 != 0 {
        return Err(format!(
            "address {addr:#x} is not {}-byte aligned for {ty:?}",
            ty.size()
        ));
    }
    let old = match ty {
        AmoType::I8 => int_amo!(AtomicI8, i8, u8, addr, op, operand, compare),
        AmoType::I16 => int_amo!(AtomicI16, i16, u16, addr, op, operand, compare),
        AmoType::I32 => int_amo!(AtomicI32, i32, u32, addr, op, operand, compare),
        AmoType::I64 => int_amo!(AtomicI64, i64, u64, addr, op, operand, compare),
        AmoType::U8 => int_amo!(AtomicU8, u8, u8, addr, op, operand, compare),
        AmoType::U16 => int_amo!(AtomicU16, u16, u16, addr, op, operand, compare),
        AmoType::U32 => int_amo!(AtomicU32, u32, u32, addr, op, operand, compare),
        AmoType::U64 => int_amo!(AtomicU64, u64, u64, addr, op, operand, compare),
        AmoType::F32 => float_amo!(AtomicU32, u32, f32, addr, op, operand, compare),
        AmoType::F64 => float_amo!(AtomicU64, u64, f64, addr, op, operand, compare),
    };
    Ok(if fetches(op, fetch) { old } else { 0 })
}

/// The `ty` word at `addr` read with one `SeqCst` CPU load, its bits
/// zero-extended: what [`apply`] returns for [`AmoOp::Read`], without the
/// dispatch on the op and the checks (the point-to-point waits' per-check
/// load, a `mov` on x86).
///
/// # Safety
/// As [`apply`]: `addr` must point to live memory of this process, aligned
/// to `ty.size()`, that nobody accesses non-atomically meanwhile.
#[inline]
pub unsafe fn read(addr: u64, ty: AmoType) -> u64 {
    // SAFETY: the caller guarantees a valid, aligned word that is only
    // accessed atomically while we read it.
    unsafe {
        match ty.size() {
            1 => AtomicU8::from_ptr(addr as *mut u8).load(SeqCst) as u64,
            2 => AtomicU16::from_ptr(addr as *mut u16).load(SeqCst) as u64,
            4 => AtomicU32::from_ptr(addr as *mut u32).load(SeqCst) as u64,
            _ => AtomicU64::from_ptr(addr as *mut u64).load(SeqCst),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        ty: AmoType,
        init: u64,
        op: AmoOp,
        operand: u64,
        compare: u64,
        fetch: bool,
    ) -> (u64, u64) {
        let mut word = [init];
        let p = word.as_mut_ptr() as u64;
        // SAFETY: a live, aligned local word.
        let r = unsafe { apply(p, ty, op, operand, compare, fetch) }.unwrap();
        (r, word[0])
    }

    #[test]
    fn read_is_applys_read_on_every_type() {
        for ty in AmoType::ALL {
            // A word whose every byte differs and whose sign bits are set, so
            // that a sign extension or a wrong width shows.
            let mut word = [0x8182_8384_8586_8788u64];
            let p = word.as_mut_ptr() as u64;
            // SAFETY: a live, aligned local word.
            let (r, a) = unsafe { (read(p, ty), apply(p, ty, AmoOp::Read, 0, 0, true)) };
            assert_eq!(r, a.unwrap(), "{ty:?}");
        }
    }

    #[test]
    fn integer_ops() {
        use AmoOp::*;
        use AmoType::*;
        assert_eq!(
            run(I64, 5, Add, (-7i64) as u64, 0, true),
            (5, (-2i64) as u64)
        );
        assert_eq!(run(I64, 5, Add, 1, 0, false), (0, 6));
        assert_eq!(run(I64, 5, Read, 0, 0, false), (5, 5));
        assert_eq!(run(U32, 0xf0, And, 0x3c, 0, true), (0xf0, 0x30));
        assert_eq!(run(U32, 0xf0, Or, 0x0f, 0, true), (0xf0, 0xff));
        assert_eq!(run(U32, 0xff, Xor, 0x0f, 0, true), (0xff, 0xf0));
        assert_eq!(
            run(I32, (-3i32) as u32 as u64, Min, 2, 0, true).1 as u32 as i32,
            -3
        );
        assert_eq!(run(I32, (-3i32) as u32 as u64, Max, 2, 0, true).1, 2);
        // Unsigned compare for U8: 200 > 100.
        assert_eq!(run(U8, 200, Min, 100, 0, true), (200, 100));
        assert_eq!(
            run(I8, 200, Min, 100, 0, true),
            (200, 200),
            "200 is -56 as i8"
        );
        assert_eq!(run(U64, 7, CompareSwap, 9, 7, false), (7, 9));
        assert_eq!(run(U64, 7, CompareSwap, 9, 8, false), (7, 7));
        assert_eq!(
            run(U16, 7, Write, 0x1_0009, 0, false),
            (0, 9),
            "operand truncated"
        );
        assert_eq!(run(U16, 7, Write, 9, 0, true), (7, 9));
        // Result is zero-extended: i8 -1 fetched is 0xff.
        assert_eq!(run(I8, 0xff, Read, 0, 0, true).0, 0xff);
    }

    #[test]
    fn float_ops() {
        use AmoOp::*;
        let f = |x: f64| x.to_bits();
        assert_eq!(
            run(AmoType::F64, f(1.5), Add, f(2.25), 0, true),
            (f(1.5), f(3.75))
        );
        assert_eq!(
            run(AmoType::F64, f(1.5), Min, f(-1.0), 0, false),
            (0, f(-1.0))
        );
        assert_eq!(
            run(AmoType::F64, f(1.5), Max, f(-1.0), 0, true),
            (f(1.5), f(1.5))
        );
        assert_eq!(
            run(AmoType::F64, f(1.5), CompareSwap, f(4.0), f(1.5), true).1,
            f(4.0)
        );
        let g = |x: f32| x.to_bits() as u64;
        assert_eq!(
            run(AmoType::F32, g(1.0), Add, g(0.5), 0, true),
            (g(1.0), g(1.5))
        );
        let mut w = [0u64];
        // SAFETY: live aligned local word.
        assert!(unsafe { apply(w.as_mut_ptr() as u64, AmoType::F64, And, 1, 0, true) }.is_err());
        let misaligned = w.as_mut_ptr() as u64 + 1;
        // SAFETY: a misaligned address is rejected before any access.
        let r = unsafe { apply(misaligned, AmoType::U32, Add, 1, 0, true) };
        assert!(r.is_err());
    }

    #[test]
    fn codes_roundtrip() {
        for ty in AmoType::ALL {
            assert_eq!(type_from(type_code(ty)), Some(ty));
        }
        for op in AmoOp::ALL {
            assert_eq!(op_from(op_code(op)), Some(op));
        }
        assert_eq!(type_from(99), None);
    }
}
