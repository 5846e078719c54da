//! Atomic memory operations: fetch, set, swap, compare_swap, fetch_inc /
//! inc, fetch_add / add, and the bitwise fetch_and / and, fetch_or / or,
//! fetch_xor / xor, with their `_nbi` and context forms, for every type of
//! tables 6-8.
//!
//! Each is one `Runtime::atomic` call, an SC atomic of the memory model,
//! on the route pgas-comm fixed for the type at start-up (the NIC's native
//! atomics, CPU atomics on the mapped path, or an active message). The
//! `_nbi` forms are `Runtime::amo_nbi`: where the type's atomics travel to
//! another PE as active messages they return once sent, and the old value
//! reaches `fetch` when the answer is awaited (by `shmem_quiet` /
//! `shmem_ctx_quiet` at the latest, or an operation of the thread that must
//! see the atomic first); a CPU atomic on a co-located PE's mapped word and
//! a native one complete before they return.

use crate::{rt, sym, sym_ptr, with_ctx, OrDie};
use runtime_shim::{AmoOp, AmoRequest, Atom, AtomicRef};
use std::ffi::{c_int, c_void};

/// The atomic word at symmetric `dest` on `pe`.
#[inline]
pub(crate) fn word<T: Atom>(call: &str, dest: *const c_void, pe: c_int) -> AtomicRef<'static, T> {
    let rt = rt(call);
    rt.atomic(sym_ptr::<T>(call, rt, dest, pe))
}

/// A fetching `_nbi` atomic `op` on the `T` word at symmetric `dest` on
/// `pe`, its old value delivered to `fetch` by the next quiet at the latest.
#[inline]
fn nbi<T: Atom>(
    call: &str,
    fetch: *mut T,
    dest: *const c_void,
    pe: c_int,
    op: AmoOp,
    v: T,
    cmp: T,
) {
    if fetch.is_null() {
        crate::die(call, "the fetch pointer is NULL");
    }
    let rt = rt(call);
    let req = AmoRequest {
        target: sym(call, rt, dest, pe),
        ty: T::TYPE,
        op,
        operand: v.to_bits64(),
        compare: cmp.to_bits64(),
        fetch: true,
    };
    // SAFETY: the C API's contract for `_nbi`: `fetch` points at a writable
    // T that the program does not read before the next quiet, which awaits
    // the atomic (and writes the value) before it returns.
    unsafe { rt.amo_nbi(&req, fetch as *mut u8) }.or_die(call)
}

/// The zero of `T` (an unused operand).
#[inline]
fn zero<T: Atom>() -> T {
    T::from_bits64(0)
}

macro_rules! ext_amo {
    ($($name:ident => $t:ty),* $(,)?) => { paste::paste! { $(
        with_ctx! { call; [<$name _atomic_fetch>](source: *const c_void, pe: c_int) -> $t {
            word::<$t>(call, source, pe).read().or_die(call)
        } }
        with_ctx! { call; [<$name _atomic_set>](dest: *mut c_void, value: $t, pe: c_int) {
            word::<$t>(call, dest, pe).write(value).or_die(call)
        } }
        with_ctx! { call; [<$name _atomic_swap>](dest: *mut c_void, value: $t, pe: c_int) -> $t {
            word::<$t>(call, dest, pe).exchange(value).or_die(call)
        } }
        with_ctx! { call; [<$name _atomic_fetch_nbi>](fetch: *mut $t, source: *const c_void, pe: c_int) {
            nbi::<$t>(call, fetch, source, pe, AmoOp::Read, zero(), zero())
        } }
        with_ctx! { call; [<$name _atomic_swap_nbi>](fetch: *mut $t, dest: *mut c_void, value: $t, pe: c_int) {
            nbi::<$t>(call, fetch, dest, pe, AmoOp::Write, value, zero())
        } }
    )* } };
}
crate::amo_ext_types!(ext_amo);

macro_rules! std_amo {
    ($($name:ident => $t:ty),* $(,)?) => { paste::paste! { $(
        with_ctx! { call; [<$name _atomic_compare_swap>](dest: *mut c_void, cond: $t, value: $t, pe: c_int) -> $t {
            match word::<$t>(call, dest, pe).compare_exchange(cond, value).or_die(call) {
                Ok(old) | Err(old) => old,
            }
        } }
        with_ctx! { call; [<$name _atomic_fetch_inc>](dest: *mut c_void, pe: c_int) -> $t {
            word::<$t>(call, dest, pe).fetch_add(1 as $t).or_die(call)
        } }
        with_ctx! { call; [<$name _atomic_inc>](dest: *mut c_void, pe: c_int) {
            word::<$t>(call, dest, pe).add(1 as $t).or_die(call)
        } }
        with_ctx! { call; [<$name _atomic_fetch_add>](dest: *mut c_void, value: $t, pe: c_int) -> $t {
            word::<$t>(call, dest, pe).fetch_add(value).or_die(call)
        } }
        with_ctx! { call; [<$name _atomic_add>](dest: *mut c_void, value: $t, pe: c_int) {
            word::<$t>(call, dest, pe).add(value).or_die(call)
        } }
        with_ctx! { call; [<$name _atomic_compare_swap_nbi>](fetch: *mut $t, dest: *mut c_void, cond: $t, value: $t, pe: c_int) {
            nbi::<$t>(call, fetch, dest, pe, AmoOp::CompareSwap, value, cond)
        } }
        with_ctx! { call; [<$name _atomic_fetch_inc_nbi>](fetch: *mut $t, dest: *mut c_void, pe: c_int) {
            nbi::<$t>(call, fetch, dest, pe, AmoOp::Add, 1 as $t, zero())
        } }
        with_ctx! { call; [<$name _atomic_fetch_add_nbi>](fetch: *mut $t, dest: *mut c_void, value: $t, pe: c_int) {
            nbi::<$t>(call, fetch, dest, pe, AmoOp::Add, value, zero())
        } }
    )* } };
}
crate::amo_std_types!(std_amo);

macro_rules! bitwise_amo {
    ($($name:ident => $t:ty),* $(,)?) => { paste::paste! { $(
        bitwise_amo!(@op $name $t, and, fetch_and);
        bitwise_amo!(@op $name $t, or, fetch_or);
        bitwise_amo!(@op $name $t, xor, fetch_xor);
    )* } };
    (@op $name:ident $t:ty, $op:ident, $fop:ident) => { paste::paste! {
        bitwise_amo!(@nbi $name $t, $fop, [<$op:camel>]);
        with_ctx! { call; [<$name _atomic_ $fop>](dest: *mut c_void, value: $t, pe: c_int) -> $t {
            word::<$t>(call, dest, pe).$fop(value).or_die(call)
        } }
        with_ctx! { call; [<$name _atomic_ $op>](dest: *mut c_void, value: $t, pe: c_int) {
            word::<$t>(call, dest, pe).$op(value).or_die(call)
        } }
    } };
    (@nbi $name:ident $t:ty, $fop:ident, $aop:ident) => { paste::paste! {
        with_ctx! { call; [<$name _atomic_ $fop _nbi>](fetch: *mut $t, dest: *mut c_void, value: $t, pe: c_int) {
            nbi::<$t>(call, fetch, dest, pe, AmoOp::$aop, value, zero())
        } }
    } };
}
crate::amo_bitwise_types!(bitwise_amo);
