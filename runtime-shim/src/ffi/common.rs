//! What every file of the C ABI shares: the opaque handle types, the
//! per-thread last error, the wrapper that turns errors and panics into
//! codes, the argument checks, and the vocabulary they are written in
//! (re-exported to the sibling files only). It imports none of them.

#![allow(clippy::missing_safety_doc)]

pub(super) use crate::error::{code, Error, Result};
pub(super) use crate::runtime::atomics::AtomicOp;
pub(super) use crate::runtime::init::{Builder, OnCtx};
pub(super) use crate::runtime::rma::{Pending as _, RawNb};
pub(super) use crate::runtime::Runtime;
pub(super) use crate::tasking::TaskHandle;
pub(super) use crate::GlobalPtr;
pub(super) use comm_ofi::{AmoType, GlobalAddr, Locale};
pub(super) use std::cell::RefCell;
pub(super) use std::ffi::{c_char, c_int, c_void, CStr};
pub(super) use std::panic::AssertUnwindSafe;

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
    pub(super) caller: Locale,
    pub(super) reply: Vec<u8>,
}

/// A non-blocking operation in flight (`pgas_handle_t`, opaque in C).
pub struct PgasHandle(pub(super) RawNb<'static>);

impl std::fmt::Debug for PgasHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PgasHandle").field(&self.0 .0).finish()
    }
}

/// A task that can be waited for (`pgas_task_t`, opaque in C).
#[derive(Debug)]
pub struct PgasTask(pub(super) TaskHandle<()>);

thread_local! {
    pub(super) static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

pub(super) fn set_last_error(msg: String) {
    LAST_ERROR.with(|l| *l.borrow_mut() = msg);
}

/// Runs `f`, turning its error or panic into a code (and the last error).
pub(super) fn ffi(f: impl FnOnce() -> Result<()>) -> c_int {
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

pub(super) fn rt() -> Result<&'static Runtime> {
    let rt = Runtime::current()?;
    rt.check_open()?;
    Ok(rt)
}

pub(super) fn locale(rt: &Runtime, l: i32) -> Result<Locale> {
    match Locale::try_from(l) {
        Ok(locale) if locale < rt.num_locales() => Ok(locale),
        _ => Err(Error::InvalidLocale {
            locale: l.into(),
            num_locales: rt.num_locales(),
        }),
    }
}

pub(super) fn non_null<T>(p: *const T, what: &'static str) -> Result<()> {
    if p.is_null() {
        return Err(Error::NullPointer { what });
    }
    Ok(())
}

/// A transfer length: not zero, not longer than a registered heap.
pub(super) fn length(rt: &Runtime, len: usize, what: &'static str) -> Result<()> {
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
pub(super) unsafe fn bytes<'a>(p: *const c_void, len: usize) -> &'a [u8] {
    // SAFETY: forwarded from the caller; len <= heap size <= isize::MAX.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
}

/// `len` writable bytes at `p`.
///
/// # Safety
/// `p..p+len` must be writable and not otherwise accessed for `'a`.
pub(super) unsafe fn bytes_mut<'a>(p: *mut c_void, len: usize) -> &'a mut [u8] {
    // SAFETY: forwarded from the caller.
    unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), len) }
}

pub(super) fn amo_type(t: c_int) -> Result<AmoType> {
    usize::try_from(t)
        .ok()
        .and_then(|i| AmoType::ALL.get(i).copied())
        .ok_or(Error::BadCode {
            what: "atomic type",
            code: t as i64,
        })
}

pub(super) fn amo_op(o: c_int) -> Result<AtomicOp> {
    usize::try_from(o)
        .ok()
        .and_then(|i| AtomicOp::ALL.get(i).copied())
        .ok_or(Error::BadCode {
            what: "atomic op",
            code: o as i64,
        })
}

/// `raddr` on locale `l` as a global address (locale and pointer checked).
pub(super) fn remote(rt: &Runtime, l: i32, raddr: *const c_void) -> Result<GlobalAddr> {
    let l = locale(rt, l)?;
    non_null(raddr, "remote address")?;
    Ok(GlobalAddr::new(l, raddr as u64))
}
