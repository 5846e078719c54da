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

/// The one place where an entry's error or panic becomes the per-thread
/// last error and a negative `PGAS_ERR_*` code; no panic crosses into C.
fn checked<T>(f: impl FnOnce() -> Result<T>) -> std::result::Result<T, c_int> {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => {
            let c = e.code();
            set_last_error(e.to_string());
            Err(c)
        }
        Err(p) => {
            set_last_error(format!(
                "internal error: {}",
                crate::tasking::panic_text(&*p)
            ));
            Err(code::ERR_INTERNAL)
        }
    }
}

/// What an entry that returns `int` answers on success.
pub(super) trait Answer {
    /// The value C sees (never negative: negative means an error).
    fn answer(self) -> c_int;
}

impl Answer for () {
    fn answer(self) -> c_int {
        code::OK
    }
}

impl Answer for bool {
    fn answer(self) -> c_int {
        self as c_int
    }
}

impl Answer for usize {
    fn answer(self) -> c_int {
        c_int::try_from(self).unwrap_or(c_int::MAX)
    }
}

/// Runs one entry of the C ABI: `f` checks the arguments (with the checks
/// below) and does the work; its answer is the return value (`PGAS_OK`, a
/// flag, a count), an error or a panic its negative code with the message
/// kept for `pgas_last_error`.
pub(super) fn ffi<T: Answer>(f: impl FnOnce() -> Result<T>) -> c_int {
    checked(f).map_or_else(|c| c, Answer::answer)
}

/// [`ffi`] for the entries that return a pointer: NULL on error (the last
/// error says why).
pub(super) fn ffi_ptr<T>(f: impl FnOnce() -> Result<*mut T>) -> *mut T {
    checked(f).unwrap_or(std::ptr::null_mut())
}

// ------------------------------------------------------------ argument checks
// Each names the bad value in its error.

/// The runtime, initialised and open.
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

/// A C `int` that must not be negative (a count, a rank, a stride).
pub(super) fn non_negative(v: c_int, what: &'static str) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::InvalidLength {
        what,
        len: v as i64 as u64,
        reason: "negative".into(),
    })
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

/// `len` elements of `each` bytes, as a byte count (no overflow).
pub(super) fn times(len: usize, each: usize, what: &'static str) -> Result<usize> {
    len.checked_mul(each).ok_or(Error::InvalidLength {
        what,
        len: len as u64,
        reason: format!("{len} times {each} bytes overflows"),
    })
}

/// That `got` bytes arrived where `len` were expected (from `from`).
pub(super) fn received(what: &'static str, len: usize, got: usize, from: &str) -> Result<()> {
    if got != len {
        return Err(Error::InvalidLength {
            what,
            len: len as u64,
            reason: format!("{from} sent {got} bytes"),
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

/// The `len` bytes a transfer reads at `p` (the pointer named `name`, the
/// transfer `what`): not null, a valid transfer length.
///
/// # Safety
/// `p..p+len` must be readable for `'a` (the C caller's obligation).
pub(super) unsafe fn src_bytes<'a>(
    rt: &Runtime,
    p: *const c_void,
    name: &'static str,
    len: usize,
    what: &'static str,
) -> Result<&'a [u8]> {
    non_null(p, name)?;
    length(rt, len, what)?;
    // SAFETY: forwarded from the caller.
    Ok(unsafe { bytes(p, len) })
}

/// The `len` bytes a transfer writes at `p`, checked as [`src_bytes`].
///
/// # Safety
/// `p..p+len` must be writable and not otherwise accessed for `'a`.
pub(super) unsafe fn dst_bytes<'a>(
    rt: &Runtime,
    p: *mut c_void,
    name: &'static str,
    len: usize,
    what: &'static str,
) -> Result<&'a mut [u8]> {
    non_null(p, name)?;
    length(rt, len, what)?;
    // SAFETY: forwarded from the caller.
    Ok(unsafe { bytes_mut(p, len) })
}

/// An out-parameter, checked non-null before the entry does any work (so
/// that nothing is done whose result could not be handed back).
pub(super) struct Out<T>(*mut T);

/// `p` as an out-parameter named `what`.
///
/// # Safety
/// `p`, if not null, must be valid for a write of `T` until the entry
/// returns (the C caller's obligation).
pub(super) unsafe fn out<T>(p: *mut T, what: &'static str) -> Result<Out<T>> {
    non_null(p, what)?;
    Ok(Out(p))
}

impl<T> Out<T> {
    /// Hands `v` back to the caller.
    pub(super) fn set(self, v: T) {
        // SAFETY: non-null, and valid for the write (`out`'s contract).
        unsafe { self.0.write(v) }
    }
}

impl<T> Out<*mut T> {
    /// Hands `v` back as a new handle the caller owns until it gives it
    /// back ([`take_handle`]).
    pub(super) fn set_handle(self, v: T) {
        self.set(Box::into_raw(Box::new(v)));
    }
}

/// The handle `p` (from [`Out::set_handle`]), given back for good.
///
/// # Safety
/// `p` must be null (an error) or a live handle of this type that the
/// caller does not use again (the C caller's obligation).
pub(super) unsafe fn take_handle<T>(p: *mut T, what: &'static str) -> Result<Box<T>> {
    non_null(p, what)?;
    // SAFETY: a live handle from Box::into_raw, given back (caller's contract).
    Ok(unsafe { Box::from_raw(p) })
}

/// The live handle `p`, borrowed.
///
/// # Safety
/// `p` must be null (an error) or a live handle of this type, not otherwise
/// accessed during the entry (the C caller's obligation).
pub(super) unsafe fn handle<'a, T>(p: *mut T, what: &'static str) -> Result<&'a mut T> {
    non_null(p, what)?;
    // SAFETY: forwarded from the caller.
    Ok(unsafe { &mut *p })
}

/// A position in one of the API's code tables (`PGAS_TYPE_*`, `PGAS_AMO_*`,
/// `PGAS_OP_*`, `PGAS_CMP_*`).
pub(super) fn by_code<T: Copy>(all: &[T], c: c_int, what: &'static str) -> Result<T> {
    usize::try_from(c)
        .ok()
        .and_then(|i| all.get(i).copied())
        .ok_or(Error::BadCode {
            what,
            code: c as i64,
        })
}

pub(super) fn amo_type(t: c_int) -> Result<AmoType> {
    by_code(&AmoType::ALL, t, "atomic type")
}

pub(super) fn amo_op(o: c_int) -> Result<AtomicOp> {
    by_code(&AtomicOp::ALL, o, "atomic op")
}

/// `raddr` on locale `l` as a global address (locale and pointer checked).
pub(super) fn remote(rt: &Runtime, l: i32, raddr: *const c_void) -> Result<GlobalAddr> {
    let l = locale(rt, l)?;
    non_null(raddr, "remote address")?;
    Ok(GlobalAddr::new(l, raddr as u64))
}

/// The arguments of a PUT-like entry, checked: the runtime, the remote
/// address, and the `len` source bytes (pointer named `src`).
///
/// # Safety
/// `src..src+len` must be readable for `'a` (the C caller's obligation).
pub(super) unsafe fn put_args<'a>(
    locale: i32,
    raddr: *const c_void,
    src: *const c_void,
    len: usize,
    what: &'static str,
) -> Result<(&'static Runtime, GlobalAddr, &'a [u8])> {
    let rt = rt()?;
    let to = remote(rt, locale, raddr)?;
    // SAFETY: forwarded from the caller.
    let s = unsafe { src_bytes(rt, src, "src", len, what)? };
    Ok((rt, to, s))
}

/// The arguments of a GET-like entry, checked as [`put_args`]: the
/// destination (pointer named `dst`) is checked, not yet borrowed.
pub(super) fn get_args(
    dst: *mut c_void,
    locale: i32,
    raddr: *const c_void,
    len: usize,
    what: &'static str,
) -> Result<(&'static Runtime, GlobalAddr)> {
    let rt = rt()?;
    let from = remote(rt, locale, raddr)?;
    non_null(dst, "dst")?;
    length(rt, len, what)?;
    Ok((rt, from))
}
