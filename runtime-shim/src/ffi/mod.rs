//! The C ABI: `include/pgas_shim.h`.
//!
//! Every function returns `PGAS_OK` (0) or a negative `PGAS_ERR_*` code and
//! keeps the error's message for `pgas_last_error` (per thread); none of them
//! lets a Rust panic cross into C. Bad input (a null pointer, a locale out of
//! range, a zero or oversized length, an unknown atomic type or op, a bad
//! stride description, an unregistered function id) is an error code, never
//! a crash. Remote addresses are the target's virtual addresses (`void *`),
//! as the target's `pgas_alloc` / `pgas_alloc_all` returned them.
//!
//! The header is written by hand; `tests/header.rs` checks that it declares
//! exactly these functions with matching parameter types, and that its
//! constants equal the Rust ones.
//!
//! The functions live in one file per area, all re-exported here (the
//! symbols are the same whatever file holds them): `lifecycle` (register,
//! init, queries, finalize, errors, version), `memory` (allocation, symmetric
//! and static addresses), `rma` (PUT/GET), `amo` (atomics), `on`
//! (on-statements), `tasks`, `team` (teams and collectives), `sync`
//! (point-to-point synchronisation, quiet/fence, locks), `diags` (comm
//! diagnostics). This file holds what they share: the opaque handle types,
//! the last-error slot, the panic-catching wrapper and the argument checks.

// The functions take raw pointers from C: each one checks them for null and
// documents the caller's obligations in the header.
#![allow(clippy::missing_safety_doc)]

use crate::error::{code, Error, Result};
use crate::runtime::{AtomicOp, Builder, OnCtx, Pending as _, RawNb, Runtime};
use crate::tasking::TaskHandle;
use crate::GlobalPtr;
use comm_ofi::{AmoType, GlobalAddr, Locale};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::AssertUnwindSafe;

/// An on-statement body: `body(ctx, arg, arg_len)`.
pub type OnFn = unsafe extern "C" fn(*mut PgasOnCtx, *const c_void, usize);
/// A task body: `fn(arg)`.
pub type TaskFn = unsafe extern "C" fn(*mut c_void);

/// Atomic flag: return the old value (`PGAS_AMO_FETCH`).
pub const AMO_FETCH: c_int = 1;
/// Atomic flag: buffer until the next unordered fence (`PGAS_AMO_UNORDERED`).
pub const AMO_UNORDERED: c_int = 2;

/// What an on-statement body sees (`pgas_on_ctx_t`, opaque in C).
#[derive(Debug)]
pub struct PgasOnCtx {
    caller: Locale,
    reply: Vec<u8>,
}

/// A non-blocking operation in flight (`pgas_handle_t`, opaque in C).
pub struct PgasHandle(RawNb<'static>);

impl std::fmt::Debug for PgasHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PgasHandle").field(&self.0 .0).finish()
    }
}

/// A task that can be waited for (`pgas_task_t`, opaque in C).
#[derive(Debug)]
pub struct PgasTask(TaskHandle<()>);

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn set_last_error(msg: String) {
    LAST_ERROR.with(|l| *l.borrow_mut() = msg);
}

/// Runs `f`, turning its error or panic into a code (and the last error).
fn ffi(f: impl FnOnce() -> Result<()>) -> c_int {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => code::OK,
        Ok(Err(e)) => {
            let c = e.code();
            set_last_error(e.to_string());
            c
        }
        Err(p) => {
            set_last_error(format!(
                "internal error: {}",
                crate::tasking::panic_text(&*p)
            ));
            code::ERR_INTERNAL
        }
    }
}

fn rt() -> Result<&'static Runtime> {
    let rt = Runtime::current()?;
    rt.check_open()?;
    Ok(rt)
}

fn locale(rt: &Runtime, l: i32) -> Result<Locale> {
    match Locale::try_from(l) {
        Ok(locale) if locale < rt.num_locales() => Ok(locale),
        _ => Err(Error::InvalidLocale {
            locale: l.into(),
            num_locales: rt.num_locales(),
        }),
    }
}

fn non_null<T>(p: *const T, what: &'static str) -> Result<()> {
    if p.is_null() {
        return Err(Error::NullPointer { what });
    }
    Ok(())
}

/// A transfer length: not zero, not longer than a registered heap.
fn length(rt: &Runtime, len: usize, what: &'static str) -> Result<()> {
    if len == 0 {
        return Err(Error::InvalidLength {
            what,
            len: 0,
            reason: "zero-length transfer (skip the call instead)".into(),
        });
    }
    let heap = rt.comm().heap().size();
    if len > heap {
        return Err(Error::InvalidLength {
            what,
            len: len as u64,
            reason: format!("longer than the {heap}-byte registered heap"),
        });
    }
    Ok(())
}

/// `len` bytes at `p` (checked non-null by the caller).
///
/// # Safety
/// `p..p+len` must be readable for `'a` (the C caller's obligation).
unsafe fn bytes<'a>(p: *const c_void, len: usize) -> &'a [u8] {
    // SAFETY: forwarded from the caller; len <= heap size <= isize::MAX.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
}

/// `len` writable bytes at `p`.
///
/// # Safety
/// `p..p+len` must be writable and not otherwise accessed for `'a`.
unsafe fn bytes_mut<'a>(p: *mut c_void, len: usize) -> &'a mut [u8] {
    // SAFETY: forwarded from the caller.
    unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), len) }
}

fn amo_type(t: c_int) -> Result<AmoType> {
    usize::try_from(t)
        .ok()
        .and_then(|i| AmoType::ALL.get(i).copied())
        .ok_or(Error::BadCode {
            what: "atomic type",
            code: t as i64,
        })
}

fn amo_op(o: c_int) -> Result<AtomicOp> {
    usize::try_from(o)
        .ok()
        .and_then(|i| AtomicOp::ALL.get(i).copied())
        .ok_or(Error::BadCode {
            what: "atomic op",
            code: o as i64,
        })
}

// ------------------------------------------------------ shared helpers

/// `raddr` on locale `l` as a global address (locale and pointer checked).
fn remote(rt: &Runtime, l: i32, raddr: *const c_void) -> Result<GlobalAddr> {
    let l = locale(rt, l)?;
    non_null(raddr, "remote address")?;
    Ok(GlobalAddr::new(l, raddr as u64))
}

/// Calls `$f::<T>(args)` with `T` the Rust type of the C atomic type code.
macro_rules! by_type {
    ($ty:expr, $f:ident, $($a:expr),*) => {
        match amo_type($ty)? {
            AmoType::I8 => $f::<i8>($($a),*),
            AmoType::I16 => $f::<i16>($($a),*),
            AmoType::I32 => $f::<i32>($($a),*),
            AmoType::I64 => $f::<i64>($($a),*),
            AmoType::U8 => $f::<u8>($($a),*),
            AmoType::U16 => $f::<u16>($($a),*),
            AmoType::U32 => $f::<u32>($($a),*),
            AmoType::U64 => $f::<u64>($($a),*),
            AmoType::F32 => $f::<f32>($($a),*),
            AmoType::F64 => $f::<f64>($($a),*),
        }
    };
}

mod amo;
mod diags;
mod lifecycle;
mod memory;
mod on;
mod rma;
mod sync;
mod tasks;
mod team;

pub use amo::*;
pub use diags::*;
pub use lifecycle::*;
pub use memory::*;
pub use on::*;
pub use rma::*;
pub use sync::*;
pub use tasks::*;
pub use team::*;
