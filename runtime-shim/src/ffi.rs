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

// ------------------------------------------------------------------ lifecycle

type Pending = Vec<(u64, String, OnFn)>;
static PENDING: parking_lot::Mutex<Pending> = parking_lot::Mutex::new(Vec::new());

fn c_body(f: OnFn) -> impl Fn(&OnCtx, &[u8]) -> Vec<u8> + Send + Sync + 'static {
    move |ctx, args| {
        let mut c = PgasOnCtx {
            caller: ctx.caller(),
            reply: Vec::new(),
        };
        let arg = if args.is_empty() {
            std::ptr::null()
        } else {
            args.as_ptr().cast::<c_void>()
        };
        // SAFETY: calling the C body registered for this id with a live
        // context and the argument bytes, as the header documents.
        unsafe { f(&mut c, arg, args.len()) };
        c.reply
    }
}

/// Registers C body `body` under id `fid` (< 2^63). Before `pgas_init`:
/// every locale registers the same bodies. After: every locale registers,
/// then barriers, before any locale sends it.
#[no_mangle]
pub unsafe extern "C" fn pgas_register(fid: u64, name: *const c_char, body: Option<OnFn>) -> c_int {
    ffi(|| {
        non_null(name, "name")?;
        let Some(body) = body else {
            return Err(Error::NullPointer { what: "body" });
        };
        // SAFETY: name is a non-null NUL-terminated string (header contract).
        let name = unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        match Runtime::current() {
            Ok(rt) => {
                rt.check_open()?;
                rt.am()
                    .register_raw(fid, &name, crate::runtime::wrap(c_body(body)))?;
            }
            Err(_) => {
                let mut p = PENDING.lock();
                if p.iter().any(|(id, _, _)| *id == fid) {
                    return Err(Error::from(amhandler::Error::Registry(format!(
                        "function id {fid:#x} ({name:?}) is already registered"
                    ))));
                }
                if fid & amhandler::registry::NAMED_BIT != 0 {
                    return Err(Error::from(amhandler::Error::Registry(format!(
                        "raw id {fid:#x} for {name:?} has bit 63 set, which is reserved"
                    ))));
                }
                p.push((fid, name, body));
            }
        }
        Ok(())
    })
}

/// Starts the runtime (collective).
#[no_mangle]
pub extern "C" fn pgas_init() -> c_int {
    ffi(|| {
        let b = Builder::new();
        for (id, name, body) in PENDING.lock().drain(..) {
            b.register_raw(id, &name, c_body(body))?;
        }
        b.init_logging(crate::diag::LogDefault::Warn).map(|_| ())
    })
}

/// This locale, or -1 before init.
#[no_mangle]
pub extern "C" fn pgas_here() -> i32 {
    Runtime::current().map_or(-1, |rt| rt.here() as i32)
}

/// Number of locales, or -1 before init.
#[no_mangle]
pub extern "C" fn pgas_num_locales() -> i32 {
    Runtime::current().map_or(-1, |rt| rt.num_locales() as i32)
}

/// Number of worker threads on this locale, or -1 before init.
#[no_mangle]
pub extern "C" fn pgas_num_workers() -> i32 {
    Runtime::current().map_or(-1, |rt| rt.num_workers() as i32)
}

/// The MCM mode in force ("" before init).
#[no_mangle]
pub extern "C" fn pgas_mode_name() -> *const c_char {
    match Runtime::current() {
        Ok(rt) => rt.c_names().0.as_ptr(),
        Err(_) => c"".as_ptr(),
    }
}

/// The provider in use ("" before init).
#[no_mangle]
pub extern "C" fn pgas_provider_name() -> *const c_char {
    match Runtime::current() {
        Ok(rt) => rt.c_names().1.as_ptr(),
        Err(_) => c"".as_ptr(),
    }
}

/// Job-wide barrier (one caller per locale).
#[no_mangle]
pub extern "C" fn pgas_barrier() -> c_int {
    ffi(|| rt()?.barrier())
}

/// Orderly, collective end (from the main program, not from a task).
#[no_mangle]
pub extern "C" fn pgas_finalize() -> c_int {
    ffi(|| Runtime::current()?.finalize())
}

/// Finalizes (if initialized and not yet finalized) and exits the process.
#[no_mangle]
pub extern "C" fn pgas_exit(status: c_int) -> ! {
    let r = ffi(|| match Runtime::current() {
        Ok(rt) => rt.finalize(),
        Err(_) => Ok(()),
    });
    if r != code::OK {
        LAST_ERROR.with(|l| tracing::error!("pgas_exit: finalize failed: {}", l.borrow()));
    }
    std::process::exit(status)
}

/// Takes the whole job down with `msg`. Never returns.
#[no_mangle]
pub unsafe extern "C" fn pgas_abort(msg: *const c_char) -> ! {
    let text = if msg.is_null() {
        "(no message)".to_string()
    } else {
        // SAFETY: non-null NUL-terminated string (header contract).
        unsafe { CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned()
    };
    match Runtime::current() {
        Ok(rt) => rt.abort(&text),
        Err(_) => match bootstrap::from_env() {
            Ok(oob) => oob.abort(&text),
            Err(_) => {
                tracing::error!("pgas_abort: {text}");
                std::process::exit(1)
            }
        },
    }
}

/// The text of an error code (a static string).
#[no_mangle]
pub extern "C" fn pgas_strerror(err: c_int) -> *const c_char {
    const TEXTS: [&CStr; 17] = [
        c"success",
        c"runtime not initialized, already initialized, finalized, or call not allowed here",
        c"null pointer argument",
        c"locale out of range",
        c"zero, oversized or impossible length",
        c"bad address: outside the registered heap, or not a live allocation",
        c"misaligned atomic target",
        c"atomic type or op not defined",
        c"bad strided transfer description",
        c"function id not registered",
        c"on-statement body failed at the target",
        c"registered heap exhausted",
        c"bad environment variable",
        c"network layer failure",
        c"internal failure (task panicked)",
        c"collective failed on another locale",
        c"unknown error code",
    ];
    let i = if (code::ERR_COLLECTIVE..=code::OK).contains(&err) {
        (-err) as usize
    } else {
        TEXTS.len() - 1
    };
    TEXTS[i].as_ptr()
}

/// Copies this thread's last error message into `buf` (NUL-terminated,
/// truncated to `cap`); returns the message's full length.
#[no_mangle]
pub unsafe extern "C" fn pgas_last_error(buf: *mut c_char, cap: usize) -> usize {
    LAST_ERROR.with(|l| {
        let l = l.borrow();
        if !buf.is_null() && cap > 0 {
            let n = l.len().min(cap - 1);
            // SAFETY: buf has room for cap >= n + 1 bytes (header contract).
            unsafe {
                std::ptr::copy_nonoverlapping(l.as_ptr(), buf.cast::<u8>(), n);
                *buf.add(n) = 0;
            }
        }
        l.len()
    })
}

// --------------------------------------------------------------------- memory

/// Allocates `size` bytes of registered memory on this locale.
#[no_mangle]
pub unsafe extern "C" fn pgas_alloc(size: usize, out: *mut *mut c_void) -> c_int {
    ffi(|| {
        non_null(out, "out")?;
        let rt = rt()?;
        let p = rt.alloc::<u8>(size)?;
        // SAFETY: out is a non-null pointer to a pointer slot (header contract).
        unsafe { *out = p.addr() as *mut c_void };
        Ok(())
    })
}

/// Frees memory from `pgas_alloc`.
#[no_mangle]
pub unsafe extern "C" fn pgas_free(p: *mut c_void) -> c_int {
    ffi(|| {
        non_null(p, "pointer")?;
        let rt = rt()?;
        rt.free(GlobalPtr::<u8>::new(rt.here(), p as u64))
    })
}

/// Collective: `size` bytes (zeroed) on every locale; `addrs[l]` gets
/// locale l's address (`addrs` has `pgas_num_locales()` entries).
#[no_mangle]
pub unsafe extern "C" fn pgas_alloc_all(size: usize, addrs: *mut *mut c_void) -> c_int {
    ffi(|| {
        let rt = rt()?;
        // A bad argument here still takes part, so no other locale waits.
        let d = rt.alloc_all_part::<u8>(size, non_null(addrs, "addrs"))?;
        for (l, p) in d.parts().iter().enumerate() {
            // SAFETY: addrs has num_locales entries (header contract).
            unsafe { *addrs.add(l) = p.addr() as *mut c_void };
        }
        Ok(())
    })
}

/// Collective: locale 0's `len` bytes at `buf` into `buf` on every locale.
#[no_mangle]
pub unsafe extern "C" fn pgas_broadcast(buf: *mut c_void, len: usize) -> c_int {
    ffi(|| {
        let rt = rt()?;
        // A bad argument here still takes part, so no other locale waits.
        let part = non_null(buf, "buf").and_then(|()| length(rt, len, "broadcast"));
        if part.is_err() {
            return rt.broadcast_part(&[], part).map(|_| ());
        }
        // SAFETY: buf holds len bytes (header contract).
        let b = unsafe { bytes_mut(buf, len) };
        let v = rt.broadcast_part(b, Ok(()))?;
        if v.len() != len {
            return Err(Error::InvalidLength {
                what: "broadcast",
                len: len as u64,
                reason: format!("locale 0 broadcast {} bytes", v.len()),
            });
        }
        b.copy_from_slice(&v);
        Ok(())
    })
}

// ------------------------------------------------------------------------ RMA

fn remote(rt: &Runtime, l: i32, raddr: *const c_void) -> Result<GlobalAddr> {
    let l = locale(rt, l)?;
    non_null(raddr, "remote address")?;
    Ok(GlobalAddr::new(l, raddr as u64))
}

/// Blocking PUT of `len` bytes from `src` to `raddr` on `locale`.
#[no_mangle]
pub unsafe extern "C" fn pgas_put(
    locale: i32,
    raddr: *mut c_void,
    src: *const c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let to = remote(rt, locale, raddr)?;
        non_null(src, "src")?;
        length(rt, len, "PUT")?;
        // SAFETY: src holds len readable bytes (header contract).
        let s = unsafe { bytes(src, len) };
        rt.put(GlobalPtr::<u8>::from_addr(to), s)
    })
}

/// Blocking GET of `len` bytes from `raddr` on `locale` into `dst`.
#[no_mangle]
pub unsafe extern "C" fn pgas_get(
    dst: *mut c_void,
    locale: i32,
    raddr: *const c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let from = remote(rt, locale, raddr)?;
        non_null(dst, "dst")?;
        length(rt, len, "GET")?;
        // SAFETY: dst holds len writable bytes (header contract).
        let d = unsafe { bytes_mut(dst, len) };
        rt.get(d, GlobalPtr::<u8>::from_addr(from))
    })
}

/// Non-blocking PUT: `src` must stay unchanged until the handle completes.
#[no_mangle]
pub unsafe extern "C" fn pgas_put_nb(
    locale: i32,
    raddr: *mut c_void,
    src: *const c_void,
    len: usize,
    handle: *mut *mut PgasHandle,
) -> c_int {
    ffi(|| {
        non_null(handle, "handle")?;
        let rt = rt()?;
        let to = remote(rt, locale, raddr)?;
        non_null(src, "src")?;
        length(rt, len, "PUT")?;
        rt.check_open()?;
        // SAFETY: src stays readable until the handle completes (header contract).
        let s: &'static [u8] = unsafe { bytes(src, len) };
        // SAFETY: the C caller keeps src unchanged until pgas_wait /
        // pgas_wait_any released the handle (header contract).
        let h = RawNb(unsafe { rt.comm().put_nb(to, s)? });
        // SAFETY: handle is a non-null pointer to a handle slot.
        unsafe { *handle = Box::into_raw(Box::new(PgasHandle(h))) };
        Ok(())
    })
}

/// Non-blocking GET: `dst` holds the data once the handle completes.
#[no_mangle]
pub unsafe extern "C" fn pgas_get_nb(
    dst: *mut c_void,
    locale: i32,
    raddr: *const c_void,
    len: usize,
    handle: *mut *mut PgasHandle,
) -> c_int {
    ffi(|| {
        non_null(handle, "handle")?;
        let rt = rt()?;
        let from = remote(rt, locale, raddr)?;
        non_null(dst, "dst")?;
        length(rt, len, "GET")?;
        rt.check_open()?;
        // SAFETY: dst stays writable and untouched until the handle completes.
        let d: &'static mut [u8] = unsafe { bytes_mut(dst, len) };
        // SAFETY: the C caller leaves dst alone until pgas_wait /
        // pgas_wait_any released the handle (header contract).
        let h = RawNb(unsafe { rt.comm().get_nb(d, from)? });
        // SAFETY: as in pgas_put_nb.
        unsafe { *handle = Box::into_raw(Box::new(PgasHandle(h))) };
        Ok(())
    })
}

/// Sets `*done` to 1 if the operation completed (the handle stays valid:
/// release it with `pgas_wait`).
#[no_mangle]
pub unsafe extern "C" fn pgas_test(handle: *mut PgasHandle, done: *mut c_int) -> c_int {
    ffi(|| {
        non_null(handle, "handle")?;
        non_null(done, "done")?;
        // SAFETY: a live handle from pgas_put_nb / pgas_get_nb (header contract).
        let h = unsafe { &mut *handle };
        let d = h.0.test()?;
        // SAFETY: done is a non-null int pointer.
        unsafe { *done = d as c_int };
        Ok(())
    })
}

/// Waits for the operation and releases the handle.
#[no_mangle]
pub unsafe extern "C" fn pgas_wait(handle: *mut PgasHandle) -> c_int {
    ffi(|| {
        non_null(handle, "handle")?;
        // SAFETY: a live handle, given back to us for good (header contract).
        let h = unsafe { Box::from_raw(handle) };
        Ok(h.0 .0.wait()?)
    })
}

/// Waits until one of the `n` handles (NULL entries are skipped) completes,
/// releases it, sets `handles[i]` to NULL and `*index` to i.
#[no_mangle]
pub unsafe extern "C" fn pgas_wait_any(
    handles: *mut *mut PgasHandle,
    n: usize,
    index: *mut usize,
) -> c_int {
    ffi(|| {
        non_null(handles, "handles")?;
        non_null(index, "index")?;
        let rt = rt()?;
        // SAFETY: handles has n entries (header contract).
        let hs = unsafe { std::slice::from_raw_parts_mut(handles, n) };
        if hs.iter().all(|h| h.is_null()) {
            return Err(Error::InvalidLength {
                what: "wait_any handle list",
                len: n as u64,
                reason: "no non-null handle to wait for".into(),
            });
        }
        let live: Vec<usize> = (0..n).filter(|&i| !hs[i].is_null()).collect();
        let mut pending: Vec<&mut RawNb> = live
            .iter()
            .map(|&i| {
                // SAFETY: the non-null entries are distinct live handles
                // (header contract); the borrows end before any is released.
                unsafe { &mut (*hs[i]).0 }
            })
            .collect();
        let i = live[rt.wait_any(&mut pending)?];
        drop(pending);
        // SAFETY: entry i is a live handle, released here for good.
        let h = unsafe { Box::from_raw(hs[i]) };
        hs[i] = std::ptr::null_mut();
        // SAFETY: index is a non-null size_t pointer.
        unsafe { *index = i };
        Ok(h.0 .0.wait()?)
    })
}

/// Reads `levels` strides and `levels + 1` counts.
unsafe fn stride_spec<'a>(
    count: *const usize,
    a: *const usize,
    b: *const usize,
    levels: i32,
) -> Result<(&'a [usize], &'a [usize], &'a [usize])> {
    non_null(count, "count")?;
    if !(0..=crate::strided::MAX_LEVELS as i32).contains(&levels) {
        return Err(Error::Strides(format!(
            "{levels} stride levels; 0 to {} are possible",
            crate::strided::MAX_LEVELS
        )));
    }
    let l = levels as usize;
    if l > 0 {
        non_null(a, "strides")?;
        non_null(b, "strides")?;
    }
    // SAFETY: count has levels+1 entries, each stride array levels entries
    // (header contract); empty slices need no valid pointer.
    unsafe {
        Ok((
            std::slice::from_raw_parts(count, l + 1),
            if l > 0 {
                std::slice::from_raw_parts(a, l)
            } else {
                &[]
            },
            if l > 0 {
                std::slice::from_raw_parts(b, l)
            } else {
                &[]
            },
        ))
    }
}

fn nonzero_counts(count: &[usize]) -> Result<()> {
    if let Some(i) = count.iter().position(|c| *c == 0) {
        return Err(Error::InvalidLength {
            what: "strided transfer count",
            len: 0,
            reason: format!("count[{i}] is zero (skip the call instead)"),
        });
    }
    Ok(())
}

/// Strided PUT, in bytes: `count[0]` contiguous bytes per chunk, `count[i]`
/// repetitions at level i, `rstrides[i-1]` / `lstrides[i-1]` the distance in
/// bytes between them on the remote / local side.
#[no_mangle]
pub unsafe extern "C" fn pgas_put_strided(
    locale: i32,
    raddr: *mut c_void,
    rstrides: *const usize,
    src: *const c_void,
    lstrides: *const usize,
    count: *const usize,
    levels: i32,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let to = remote(rt, locale, raddr)?;
        non_null(src, "src")?;
        // SAFETY: header contract on the arrays.
        let (count, rs, ls) = unsafe { stride_spec(count, rstrides, lstrides, levels)? };
        nonzero_counts(count)?;
        let ext = crate::strided::extent(1, count, ls)?;
        length(rt, ext, "strided PUT source extent")?;
        // SAFETY: the local side spans ext readable bytes (header contract).
        let s = unsafe { bytes(src, ext) };
        rt.put_strided(GlobalPtr::<u8>::from_addr(to), rs, s, ls, count)
    })
}

/// Strided GET, in bytes (see `pgas_put_strided`).
#[no_mangle]
pub unsafe extern "C" fn pgas_get_strided(
    dst: *mut c_void,
    lstrides: *const usize,
    locale: i32,
    raddr: *const c_void,
    rstrides: *const usize,
    count: *const usize,
    levels: i32,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let from = remote(rt, locale, raddr)?;
        non_null(dst, "dst")?;
        // SAFETY: header contract on the arrays.
        let (count, ls, rs) = unsafe { stride_spec(count, lstrides, rstrides, levels)? };
        nonzero_counts(count)?;
        let ext = crate::strided::extent(1, count, ls)?;
        length(rt, ext, "strided GET destination extent")?;
        // SAFETY: the local side spans ext writable bytes (header contract).
        let d = unsafe { bytes_mut(dst, ext) };
        rt.get_strided(d, ls, GlobalPtr::<u8>::from_addr(from), rs, count)
    })
}

/// Unordered PUT (buffered; data copied): done by the next unordered fence
/// or task end.
#[no_mangle]
pub unsafe extern "C" fn pgas_put_unordered(
    locale: i32,
    raddr: *mut c_void,
    src: *const c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let to = remote(rt, locale, raddr)?;
        non_null(src, "src")?;
        length(rt, len, "unordered PUT")?;
        // SAFETY: src holds len readable bytes (header contract).
        let s = unsafe { bytes(src, len) };
        rt.put_unordered(GlobalPtr::<u8>::from_addr(to), s)
    })
}

/// Unordered GET into `dst`, which must be this locale's registered memory.
#[no_mangle]
pub unsafe extern "C" fn pgas_get_unordered(
    dst: *mut c_void,
    locale: i32,
    raddr: *const c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let from = remote(rt, locale, raddr)?;
        non_null(dst, "dst")?;
        length(rt, len, "unordered GET")?;
        rt.get_unordered(
            GlobalPtr::<u8>::new(rt.here(), dst as u64),
            GlobalPtr::<u8>::from_addr(from),
            len,
        )
    })
}

/// Issues and completes this task's unordered operations.
#[no_mangle]
pub extern "C" fn pgas_unordered_fence() -> c_int {
    ffi(|| rt()?.unordered_fence())
}

// -------------------------------------------------------------------- atomics

/// A remote atomic: `type` a `PGAS_TYPE_*`, `op` a `PGAS_AMO_*`, `flags`
/// `PGAS_AMO_FETCH` and/or `PGAS_AMO_UNORDERED`. `operand` (all ops but
/// read) and `compare` (cmpxchg) point to one value of the type; `result`
/// receives the old value when the op fetches (read, xchg, cmpxchg, or the
/// fetch flag).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pgas_amo(
    locale: i32,
    raddr: *mut c_void,
    ty: c_int,
    op: c_int,
    flags: c_int,
    operand: *const c_void,
    compare: *const c_void,
    result: *mut c_void,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let target = remote(rt, locale, raddr)?;
        let t = amo_type(ty)?;
        let o = amo_op(op)?;
        if flags & !(AMO_FETCH | AMO_UNORDERED) != 0 {
            return Err(Error::BadCode {
                what: "atomic flags",
                code: flags as i64,
            });
        }
        let fetch = o.always_fetches() || flags & AMO_FETCH != 0;
        let read = |p: *const c_void, what: &'static str| -> Result<u64> {
            non_null(p, what)?;
            let mut w = [0u8; 8];
            // SAFETY: p points to one value of the type (header contract).
            w[..t.size()].copy_from_slice(unsafe { bytes(p, t.size()) });
            Ok(u64::from_le_bytes(w))
        };
        let v = if o == AtomicOp::Read {
            0
        } else {
            read(operand, "operand")?
        };
        let c = if o == AtomicOp::Cmpxchg {
            read(compare, "compare")?
        } else {
            0
        };
        if flags & AMO_UNORDERED != 0 {
            if fetch {
                return Err(Error::AtomicUse(format!(
                    "an unordered atomic cannot fetch (op {o:?})"
                )));
            }
            return rt.amo_unordered_bits(target, t, o, v);
        }
        if fetch {
            non_null(result, "result")?;
        }
        let old = rt.amo_bits(target, t, o, fetch, v, c)?;
        if fetch {
            // SAFETY: result points to one writable value of the type.
            unsafe { bytes_mut(result, t.size()) }.copy_from_slice(&old.to_le_bytes()[..t.size()]);
        }
        Ok(())
    })
}

// -------------------------------------------------------------- on-statements

/// The locale that started the on-statement.
#[no_mangle]
pub unsafe extern "C" fn pgas_on_caller(ctx: *const PgasOnCtx) -> i32 {
    if ctx.is_null() {
        return -1;
    }
    // SAFETY: a live context passed to the body (header contract).
    unsafe { (*ctx).caller as i32 }
}

/// Sets the reply the caller of a blocking on-statement receives.
#[no_mangle]
pub unsafe extern "C" fn pgas_on_reply(
    ctx: *mut PgasOnCtx,
    data: *const c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        non_null(ctx, "ctx")?;
        // SAFETY: a live context passed to the body (header contract).
        let c = unsafe { &mut *ctx };
        c.reply.clear();
        if len > 0 {
            non_null(data, "data")?;
            // SAFETY: data holds len readable bytes.
            c.reply.extend_from_slice(unsafe { bytes(data, len) });
        }
        Ok(())
    })
}

fn args<'a>(arg: *const c_void, len: usize) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    non_null(arg, "arg")?;
    // SAFETY: arg holds len readable bytes (header contract).
    Ok(unsafe { bytes(arg, len) })
}

fn deliver(reply: Vec<u8>, buf: *mut c_void, cap: usize, len: *mut usize) -> Result<()> {
    if !len.is_null() {
        // SAFETY: non-null size_t pointer.
        unsafe { *len = reply.len() };
    }
    if reply.is_empty() {
        return Ok(());
    }
    if reply.len() > cap {
        return Err(Error::ReplyTooLarge {
            len: reply.len(),
            cap,
        });
    }
    non_null(buf, "reply")?;
    // SAFETY: buf holds cap >= reply.len() writable bytes (header contract).
    unsafe { bytes_mut(buf, reply.len()) }.copy_from_slice(&reply);
    Ok(())
}

/// Blocking on-statement: runs body `fid` on `locale`; its reply (if any)
/// is copied to `reply` (`*reply_len` gets its length; a reply longer than
/// `reply_cap` is `PGAS_ERR_LENGTH`).
#[no_mangle]
pub unsafe extern "C" fn pgas_execute_on(
    locale: i32,
    fid: u64,
    arg: *const c_void,
    arg_len: usize,
    reply: *mut c_void,
    reply_cap: usize,
    reply_len: *mut usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let l = self::locale(rt, locale)?;
        let r = rt.on(l, amhandler::FnId(fid), args(arg, arg_len)?)?;
        deliver(r, reply, reply_cap, reply_len)
    })
}

/// Non-blocking on-statement (fire and forget).
#[no_mangle]
pub unsafe extern "C" fn pgas_execute_on_nb(
    locale: i32,
    fid: u64,
    arg: *const c_void,
    arg_len: usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let l = self::locale(rt, locale)?;
        rt.on_nb(l, amhandler::FnId(fid), args(arg, arg_len)?)
    })
}

/// Blocking fast on-statement (body runs in the target's handler thread).
#[no_mangle]
pub unsafe extern "C" fn pgas_execute_on_fast(
    locale: i32,
    fid: u64,
    arg: *const c_void,
    arg_len: usize,
    reply: *mut c_void,
    reply_cap: usize,
    reply_len: *mut usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let l = self::locale(rt, locale)?;
        let r = rt.on_fast(l, amhandler::FnId(fid), args(arg, arg_len)?)?;
        deliver(r, reply, reply_cap, reply_len)
    })
}

/// Non-blocking fast on-statement.
#[no_mangle]
pub unsafe extern "C" fn pgas_execute_on_fast_nb(
    locale: i32,
    fid: u64,
    arg: *const c_void,
    arg_len: usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let l = self::locale(rt, locale)?;
        rt.on_fast_nb(l, amhandler::FnId(fid), args(arg, arg_len)?)
    })
}

// ---------------------------------------------------------------------- tasks

/// Hook for a runtime with its own tasking: call before a task creates a child.
#[no_mangle]
pub extern "C" fn pgas_task_create() -> c_int {
    ffi(|| rt()?.task_create_hook())
}

/// Hook for a runtime with its own tasking: call when a task ends.
#[no_mangle]
pub extern "C" fn pgas_task_end() -> c_int {
    ffi(|| rt()?.task_end_hook())
}

/// Gives the calling thread (a runtime's own thread that communicates) a
/// transmit context of its own; `pgas_init` binds the thread that calls it.
/// Returns 1 if bound, 0 if none was left (the thread stays unbound:
/// correct, only slower), or a negative error.
#[no_mangle]
pub extern "C" fn pgas_bind_thread() -> c_int {
    let mut bound = false;
    let r = ffi(|| {
        bound = rt()?.bind_thread()?;
        Ok(())
    });
    if r < 0 {
        r
    } else {
        bound as c_int
    }
}

/// Gives back the context of `pgas_bind_thread` (a boundary: the thread's
/// stores are made visible first); call it before a bound thread exits.
#[no_mangle]
pub extern "C" fn pgas_unbind_thread() -> c_int {
    ffi(|| rt()?.unbind_thread())
}

struct CTask {
    f: TaskFn,
    arg: *mut c_void,
}

// SAFETY: the C caller hands `arg` over to the task (header contract: it
// must be usable from another thread).
unsafe impl Send for CTask {}

impl CTask {
    fn run(self) {
        // SAFETY: the C function and argument the caller gave pgas_begin.
        unsafe { (self.f)(self.arg) }
    }
}

/// Runs `fn(arg)` as a task on a worker thread. With `task` non-NULL it gets
/// a handle for `pgas_task_wait`; with NULL nobody waits (finalize does).
#[no_mangle]
pub unsafe extern "C" fn pgas_begin(
    f: Option<TaskFn>,
    arg: *mut c_void,
    task: *mut *mut PgasTask,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let Some(f) = f else {
            return Err(Error::NullPointer { what: "fn" });
        };
        let t = CTask { f, arg };
        if task.is_null() {
            return rt.begin(move || t.run());
        }
        let h = rt.spawn(move || t.run())?;
        // SAFETY: task is a non-null pointer to a task slot.
        unsafe { *task = Box::into_raw(Box::new(PgasTask(h))) };
        Ok(())
    })
}

/// Waits for a task from `pgas_begin` and releases its handle.
#[no_mangle]
pub unsafe extern "C" fn pgas_task_wait(task: *mut PgasTask) -> c_int {
    ffi(|| {
        non_null(task, "task")?;
        // SAFETY: a live task handle, given back for good (header contract).
        let t = unsafe { Box::from_raw(task) };
        t.0.join()
    })
}

// ---------------------------------------------------------------- teams

/// A team (`pgas_team_t`, opaque in C).
#[derive(Debug)]
pub struct PgasTeam(crate::team::Team);

static WORLD_TEAM: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

fn team<'a>(t: *mut PgasTeam) -> Result<&'a crate::team::Team> {
    non_null(t, "team")?;
    rt()?;
    // SAFETY: a live team from pgas_team_world / pgas_team_split_* that
    // was not destroyed (header contract).
    Ok(unsafe { &(*t).0 })
}

fn team_rank(t: &crate::team::Team, r: c_int) -> Result<usize> {
    let r = usize::try_from(r).map_err(|_| Error::InvalidLength {
        what: "team rank",
        len: r as i64 as u64,
        reason: format!("negative; team {} has {} members", t.name(), t.size()),
    })?;
    t.locale_of(r)?;
    Ok(r)
}

fn reduce_op(o: c_int) -> Result<crate::team::ReduceOp> {
    usize::try_from(o)
        .ok()
        .and_then(|i| crate::team::ReduceOp::ALL.get(i).copied())
        .ok_or(Error::BadCode {
            what: "reduction op",
            code: o as i64,
        })
}

/// The world team (every locale, rank = locale); never destroyed. NULL if
/// the runtime is not initialized (see pgas_last_error).
#[no_mangle]
pub extern "C" fn pgas_team_world() -> *mut PgasTeam {
    match rt() {
        Ok(rt) => *WORLD_TEAM
            .get_or_init(|| Box::into_raw(Box::new(PgasTeam(rt.world().clone()))) as usize)
            as *mut PgasTeam,
        Err(e) => {
            set_last_error(e.to_string());
            std::ptr::null_mut()
        }
    }
}

/// This locale's rank in `t` (negative error code on bad input).
#[no_mangle]
pub unsafe extern "C" fn pgas_team_rank(t: *mut PgasTeam) -> c_int {
    match team(t) {
        Ok(t) => t.rank() as c_int,
        Err(e) => {
            let c = e.code();
            set_last_error(e.to_string());
            c
        }
    }
}

/// Number of members of `t` (negative error code on bad input).
#[no_mangle]
pub unsafe extern "C" fn pgas_team_size(t: *mut PgasTeam) -> c_int {
    match team(t) {
        Ok(t) => t.size() as c_int,
        Err(e) => {
            let c = e.code();
            set_last_error(e.to_string());
            c
        }
    }
}

fn split_out(out: *mut *mut PgasTeam, t: Option<crate::team::Team>) {
    let p = t.map_or(std::ptr::null_mut(), |t| {
        Box::into_raw(Box::new(PgasTeam(t)))
    });
    // SAFETY: out is a non-null pointer to a team slot (checked by callers).
    unsafe { *out = p };
}

/// Collective over `parent`: ranks start, start+stride, ... (size of them)
/// form a new team in `*out`; other members get NULL.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_split_strided(
    parent: *mut PgasTeam,
    start: c_int,
    stride: c_int,
    size: c_int,
    out: *mut *mut PgasTeam,
) -> c_int {
    ffi(|| {
        non_null(out, "out")?;
        let t = team(parent)?;
        let u = |v: c_int, what: &'static str| {
            usize::try_from(v).map_err(|_| Error::InvalidLength {
                what,
                len: v as i64 as u64,
                reason: "negative".into(),
            })
        };
        let new = t.split_strided(
            u(start, "team start")?,
            u(stride, "team stride")?,
            u(size, "team size")?,
        )?;
        split_out(out, new);
        Ok(())
    })
}

/// Collective over `parent`: members with the same `color` (negative: none)
/// form a team ordered by `key`, in `*out` (NULL for colour < 0).
#[no_mangle]
pub unsafe extern "C" fn pgas_team_split_color(
    parent: *mut PgasTeam,
    color: c_int,
    key: i64,
    out: *mut *mut PgasTeam,
) -> c_int {
    ffi(|| {
        non_null(out, "out")?;
        let t = team(parent)?;
        let new = t.split_color(u32::try_from(color).ok(), key)?;
        split_out(out, new);
        Ok(())
    })
}

/// Releases a team handle from a split (the world team is never released;
/// passing it is PGAS_ERR_STATE).
#[no_mangle]
pub unsafe extern "C" fn pgas_team_destroy(t: *mut PgasTeam) -> c_int {
    ffi(|| {
        non_null(t, "team")?;
        if WORLD_TEAM.get() == Some(&(t as usize)) {
            return Err(Error::State("the world team cannot be destroyed".into()));
        }
        // SAFETY: a live split team handle, given back for good (header contract).
        drop(unsafe { Box::from_raw(t) });
        Ok(())
    })
}

/// Team barrier (an MCM boundary).
#[no_mangle]
pub unsafe extern "C" fn pgas_team_barrier(t: *mut PgasTeam) -> c_int {
    ffi(|| team(t)?.barrier())
}

/// Broadcast in place: `len` bytes of `buf` at rank `root` land in `buf` on
/// every member.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_broadcast(
    t: *mut PgasTeam,
    root: c_int,
    buf: *mut c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        let t = team(t)?;
        let root = team_rank(t, root)?;
        non_null(buf, "buf")?;
        length(rt()?, len, "broadcast")?;
        // SAFETY: buf holds len bytes, ours for the call (header contract).
        let b = unsafe { bytes_mut(buf, len) };
        let mine: &[u8] = if t.rank() == root { b } else { &[] };
        let got = t.broadcast(root, mine)?;
        if got.len() != len {
            return Err(Error::InvalidLength {
                what: "broadcast",
                len: len as u64,
                reason: format!("the root sent {} bytes", got.len()),
            });
        }
        b.copy_from_slice(&got);
        Ok(())
    })
}

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

fn typed_reduce<T: crate::team::Reduce>(
    t: &crate::team::Team,
    root: Option<usize>,
    op: crate::team::ReduceOp,
    src: *const c_void,
    dst: *mut c_void,
    count: usize,
) -> Result<()> {
    let bytes_len = count
        .checked_mul(std::mem::size_of::<T>())
        .ok_or(Error::InvalidLength {
            what: "reduction count",
            len: count as u64,
            reason: "count times element size overflows".into(),
        })?;
    length(rt()?, bytes_len, "reduction")?;
    // SAFETY: src holds count elements of T (header contract); read as bytes.
    let input: Vec<T> = crate::pod::vec_from_bytes(unsafe { bytes(src, bytes_len) });
    let out = match root {
        Some(r) => t.reduce(r, &input, op)?,
        None => Some(t.allreduce(&input, op)?),
    };
    if let Some(v) = out {
        // SAFETY: dst holds count elements of T, writable (header contract).
        unsafe { bytes_mut(dst, bytes_len) }.copy_from_slice(crate::pod::as_bytes(&v));
    }
    Ok(())
}

/// Reduce `count` elements of atomic type `type` with `op` (PGAS_OP_*):
/// the result lands in `dst` at rank `root` only.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_reduce(
    t: *mut PgasTeam,
    root: c_int,
    r#type: c_int,
    op: c_int,
    src: *const c_void,
    dst: *mut c_void,
    count: usize,
) -> c_int {
    ffi(|| {
        let t = team(t)?;
        let root = team_rank(t, root)?;
        non_null(src, "src")?;
        if t.rank() == root {
            non_null(dst, "dst")?;
        }
        let op = reduce_op(op)?;
        by_type!(r#type, typed_reduce, t, Some(root), op, src, dst, count)
    })
}

/// Allreduce: [`pgas_team_reduce`] with the result in `dst` everywhere.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_allreduce(
    t: *mut PgasTeam,
    r#type: c_int,
    op: c_int,
    src: *const c_void,
    dst: *mut c_void,
    count: usize,
) -> c_int {
    ffi(|| {
        let t = team(t)?;
        non_null(src, "src")?;
        non_null(dst, "dst")?;
        let op = reduce_op(op)?;
        by_type!(r#type, typed_reduce, t, None, op, src, dst, count)
    })
}

/// Fcollect: `len` bytes from every member, concatenated by rank into
/// `dst` (`size * len` bytes) on every member.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_fcollect(
    t: *mut PgasTeam,
    src: *const c_void,
    dst: *mut c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        let t = team(t)?;
        non_null(src, "src")?;
        non_null(dst, "dst")?;
        length(rt()?, len, "fcollect")?;
        // SAFETY: src holds len bytes (header contract).
        let got = t.fcollect(unsafe { bytes(src, len) })?;
        // SAFETY: dst holds size * len bytes (header contract).
        unsafe { bytes_mut(dst, got.len()) }.copy_from_slice(&got);
        Ok(())
    })
}

/// Alltoall: `src` holds `size` blocks of `block` bytes, block i for rank
/// i; `dst` (`size * block` bytes) receives one block from each rank.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_alltoall(
    t: *mut PgasTeam,
    src: *const c_void,
    dst: *mut c_void,
    block: usize,
) -> c_int {
    ffi(|| {
        let t = team(t)?;
        non_null(src, "src")?;
        non_null(dst, "dst")?;
        let total = block.checked_mul(t.size()).ok_or(Error::InvalidLength {
            what: "alltoall block",
            len: block as u64,
            reason: "block times team size overflows".into(),
        })?;
        length(rt()?, total, "alltoall")?;
        // SAFETY: src and dst hold size * block bytes (header contract).
        let got = t.alltoall(unsafe { bytes(src, total) })?;
        // SAFETY: as above.
        unsafe { bytes_mut(dst, total) }.copy_from_slice(&got);
        Ok(())
    })
}

// ----------------------------------------------- point-to-point synchronisation

fn cmp_code(c: c_int) -> Result<crate::p2p::Cmp> {
    usize::try_from(c)
        .ok()
        .and_then(|i| crate::p2p::Cmp::ALL.get(i).copied())
        .ok_or(Error::BadCode {
            what: "comparison",
            code: c as i64,
        })
}

fn local_ptr<T: crate::pod::Atom>(rt: &Runtime, addr: *mut c_void) -> Result<GlobalPtr<T>> {
    non_null(addr, "local word")?;
    Ok(GlobalPtr::new(rt.here(), addr as u64))
}

/// # Safety
/// `value` points to one readable value of `T`.
unsafe fn read_value<T: crate::pod::Atom>(value: *const c_void) -> Result<T> {
    non_null(value, "value")?;
    // SAFETY: forwarded from the caller (header contract).
    let b = unsafe { bytes(value, std::mem::size_of::<T>()) };
    crate::pod::from_bytes(b).ok_or(Error::NullPointer { what: "value" })
}

fn wait_typed<T: crate::pod::Atom>(
    addr: *mut c_void,
    cmp: crate::p2p::Cmp,
    value: *const c_void,
    result: *mut c_int,
) -> Result<()> {
    let rt = rt()?;
    let p = local_ptr::<T>(rt, addr)?;
    // SAFETY: value points to one value of the word's type (header contract).
    let v = unsafe { read_value::<T>(value)? };
    if result.is_null() {
        rt.wait_until_local(p, cmp, v)
    } else {
        let ok = rt.test_local(p, cmp, v)?;
        // SAFETY: result is a non-null int pointer.
        unsafe { *result = ok as c_int };
        Ok(())
    }
}

/// Waits until the word of type `type` at `addr` (on this locale) compares
/// `cmp` (PGAS_CMP_*) to `*value`; a task runs other tasks meanwhile.
#[no_mangle]
pub unsafe extern "C" fn pgas_wait_until(
    addr: *mut c_void,
    r#type: c_int,
    cmp: c_int,
    value: *const c_void,
) -> c_int {
    ffi(|| {
        let c = cmp_code(cmp)?;
        by_type!(r#type, wait_typed, addr, c, value, std::ptr::null_mut())
    })
}

/// Sets `*result` to whether the word at `addr` compares `cmp` to `*value` now.
#[no_mangle]
pub unsafe extern "C" fn pgas_test_local(
    addr: *mut c_void,
    r#type: c_int,
    cmp: c_int,
    value: *const c_void,
    result: *mut c_int,
) -> c_int {
    ffi(|| {
        non_null(result, "result")?;
        let c = cmp_code(cmp)?;
        by_type!(r#type, wait_typed, addr, c, value, result)
    })
}

/// PUT `len` bytes, then update the uint64 signal word `sig_raddr` on the
/// same `locale` with `sig_op` (PGAS_SIGNAL_SET / _ADD) `value`; whoever
/// sees the signal sees the data.
#[no_mangle]
pub unsafe extern "C" fn pgas_put_signal(
    locale: i32,
    raddr: *mut c_void,
    src: *const c_void,
    len: usize,
    sig_raddr: *mut c_void,
    sig_op: c_int,
    value: u64,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let to = remote(rt, locale, raddr)?;
        let sig = remote(rt, locale, sig_raddr)?;
        non_null(src, "src")?;
        length(rt, len, "PUT")?;
        let op = match sig_op {
            0 => crate::p2p::SignalOp::Set,
            1 => crate::p2p::SignalOp::Add,
            other => {
                return Err(Error::BadCode {
                    what: "signal op",
                    code: other as i64,
                })
            }
        };
        // SAFETY: src holds len readable bytes (header contract).
        let s = unsafe { bytes(src, len) };
        rt.put_with_signal(
            GlobalPtr::<u8>::from_addr(to),
            s,
            GlobalPtr::from_addr(sig),
            op,
            value,
        )
    })
}

/// Every operation this task issued is complete and visible (a boundary).
#[no_mangle]
pub extern "C" fn pgas_quiet() -> c_int {
    ffi(|| rt()?.quiet())
}

/// Orders this task's operations before its next ones (issues buffered
/// unordered ones); not a visibility boundary.
#[no_mangle]
pub extern "C" fn pgas_fence() -> c_int {
    ffi(|| rt()?.fence())
}

/// Runs one ready task on this worker thread: 1 if it ran one, 0 if none
/// was ready (or not on a worker), or a negative PGAS_ERR_* code.
#[no_mangle]
pub extern "C" fn pgas_yield() -> c_int {
    match rt() {
        Ok(rt) => rt.yield_now() as c_int,
        Err(e) => {
            let c = e.code();
            set_last_error(e.to_string());
            c
        }
    }
}

/// A non-blocking fetching atomic (`pgas_amo_handle_t`, opaque in C).
#[derive(Debug)]
pub struct PgasAmoHandle(TaskHandle<Result<u64>>, AmoType);

/// Non-blocking fetching atomic (op PGAS_AMO_*, always fetching): ordered
/// after this task's earlier operations; the old value comes with
/// pgas_amo_wait.
#[no_mangle]
pub unsafe extern "C" fn pgas_amo_nb(
    locale: i32,
    raddr: *mut c_void,
    ty: c_int,
    op: c_int,
    operand: *const c_void,
    compare: *const c_void,
    handle: *mut *mut PgasAmoHandle,
) -> c_int {
    ffi(|| {
        non_null(handle, "handle")?;
        let rt = rt()?;
        let target = remote(rt, locale, raddr)?;
        let t = amo_type(ty)?;
        let o = amo_op(op)?;
        let read = |p: *const c_void, what: &'static str| -> Result<u64> {
            non_null(p, what)?;
            let mut w = [0u8; 8];
            // SAFETY: p points to one value of the type (header contract).
            w[..t.size()].copy_from_slice(unsafe { bytes(p, t.size()) });
            Ok(u64::from_le_bytes(w))
        };
        let v = if o == AtomicOp::Read {
            0
        } else {
            read(operand, "operand")?
        };
        let c = if o == AtomicOp::Cmpxchg {
            read(compare, "compare")?
        } else {
            0
        };
        rt.comm().check_atomic_target(target, t)?;
        let task = rt.spawn(move || rt.amo_bits(target, t, o, true, v, c))?;
        // SAFETY: handle is a non-null pointer to a handle slot.
        unsafe { *handle = Box::into_raw(Box::new(PgasAmoHandle(task, t))) };
        Ok(())
    })
}

/// Sets `*done` to 1 if the atomic was performed (the handle stays valid).
#[no_mangle]
pub unsafe extern "C" fn pgas_amo_test(handle: *mut PgasAmoHandle, done: *mut c_int) -> c_int {
    ffi(|| {
        non_null(handle, "handle")?;
        non_null(done, "done")?;
        // SAFETY: a live handle from pgas_amo_nb (header contract).
        let d = unsafe { &*handle }.0.is_done();
        // SAFETY: done is a non-null int pointer.
        unsafe { *done = d as c_int };
        Ok(())
    })
}

/// Waits for the atomic, stores the old value in `*result` (if not NULL)
/// and releases the handle.
#[no_mangle]
pub unsafe extern "C" fn pgas_amo_wait(handle: *mut PgasAmoHandle, result: *mut c_void) -> c_int {
    ffi(|| {
        non_null(handle, "handle")?;
        // SAFETY: a live handle, given back for good (header contract).
        let h = unsafe { Box::from_raw(handle) };
        let t = h.1;
        let old = h.0.join()??;
        if !result.is_null() {
            // SAFETY: result points to one writable value of the type.
            unsafe { bytes_mut(result, t.size()) }.copy_from_slice(&old.to_le_bytes()[..t.size()]);
        }
        Ok(())
    })
}

// ---------------------------------------------------------------- locks

/// Makes the 8-byte word at `word` (this locale's heap) a free MCS lock.
#[no_mangle]
pub unsafe extern "C" fn pgas_lock_init(word: *mut c_void) -> c_int {
    ffi(|| {
        let rt = rt()?;
        non_null(word, "lock word")?;
        crate::lock::GlobalLock::init(rt, GlobalPtr::new(rt.here(), word as u64)).map(|_| ())
    })
}

/// Acquires the lock whose word is `word` on `locale`; `*token` is what
/// pgas_lock_release needs. A task runs other tasks while it waits.
#[no_mangle]
pub unsafe extern "C" fn pgas_lock_acquire(
    locale: i32,
    word: *mut c_void,
    token: *mut u64,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        non_null(token, "token")?;
        let at = remote(rt, locale, word)?;
        let t = rt.lock_raw(crate::lock::GlobalLock::at(GlobalPtr::from_addr(at)))?;
        // SAFETY: token is a non-null uint64_t pointer.
        unsafe { *token = t };
        Ok(())
    })
}

/// Releases the lock acquired with `token` (same thread's locale).
#[no_mangle]
pub unsafe extern "C" fn pgas_lock_release(locale: i32, word: *mut c_void, token: u64) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let at = remote(rt, locale, word)?;
        rt.unlock_raw(crate::lock::GlobalLock::at(GlobalPtr::from_addr(at)), token)
    })
}

// ------------------------------------------------------- symmetric memory

/// Collective: `size` bytes on every locale at the same heap offset
/// everywhere (zeroed); `addrs[l]` is locale l's address.
#[no_mangle]
pub unsafe extern "C" fn pgas_alloc_sym(size: usize, addrs: *mut *mut c_void) -> c_int {
    ffi(|| {
        non_null(addrs, "addrs")?;
        let rt = rt()?;
        let d = rt.alloc_sym::<u8>(size)?;
        for (l, p) in d.parts().iter().enumerate() {
            // SAFETY: addrs has num_locales entries (header contract).
            unsafe { *addrs.add(l) = p.addr() as *mut c_void };
        }
        Ok(())
    })
}

/// The address on `locale` at the same heap offset as `local` here (for
/// symmetric allocations); NULL on bad input (see pgas_last_error).
#[no_mangle]
pub unsafe extern "C" fn pgas_sym_addr(local: *mut c_void, locale: i32) -> *mut c_void {
    address_on(local, locale, |rt, at, l| {
        Ok(rt.comm().symmetric(GlobalAddr::new(rt.here(), at), l)?)
    })
}

/// The address `on` gives for `local` on `locale`, after the checks every
/// such translation needs; NULL with the last error set on bad input.
fn address_on(
    local: *const c_void,
    locale: i32,
    on: impl FnOnce(&Runtime, u64, Locale) -> Result<GlobalAddr>,
) -> *mut c_void {
    let r = (|| -> Result<*mut c_void> {
        let rt = rt()?;
        let l = self::locale(rt, locale)?;
        non_null(local, "local address")?;
        Ok(on(rt, local as u64, l)?.addr as *mut c_void)
    })();
    r.unwrap_or_else(|e| {
        set_last_error(e.to_string());
        std::ptr::null_mut()
    })
}

/// The address on `locale` of the static variable at `local` here (the
/// program's registered `.data`/`.bss`: same offset on every locale, whatever
/// ASLR did); NULL on bad input (see pgas_last_error).
#[no_mangle]
pub extern "C" fn pgas_static_addr(local: *const c_void, locale: i32) -> *mut c_void {
    address_on(local, locale, |rt, at, l| {
        Ok(rt.comm().static_addr(at, l)?)
    })
}

// ------------------------------------------------------ comm diagnostics

/// `pgas_comm_diags_t`: the counts, with `CommCounts`' `repr(C)` layout.
pub type PgasCommDiags = crate::diagnostics::CommCounts;

/// Starts counting this locale's operations (see `pgas_comm_diags_t`).
#[no_mangle]
pub extern "C" fn pgas_comm_diags_start() -> c_int {
    ffi(|| rt()?.start_comm_diagnostics())
}

/// Stops counting on this locale; the counts stay readable.
#[no_mangle]
pub extern "C" fn pgas_comm_diags_stop() -> c_int {
    ffi(|| rt()?.stop_comm_diagnostics())
}

/// Sets this locale's counts back to zero.
#[no_mangle]
pub extern "C" fn pgas_comm_diags_reset() -> c_int {
    ffi(|| rt()?.reset_comm_diagnostics())
}

/// Writes this locale's counts to `*out`.
///
/// # Safety
/// `out` must be null (an error) or point to a writable `pgas_comm_diags_t`.
#[no_mangle]
pub unsafe extern "C" fn pgas_comm_diags_get(out: *mut PgasCommDiags) -> c_int {
    ffi(|| {
        non_null(out, "out (pgas_comm_diags_t)")?;
        let c = rt()?.comm_diagnostics()?;
        // SAFETY: out is non-null and, by the caller's contract, points to a
        // writable pgas_comm_diags_t, which has CommCounts' repr(C) layout.
        unsafe { out.write_unaligned(c) };
        Ok(())
    })
}

/// Collective: writes every locale's counts to `out[0..n)` (indexed by
/// locale); `n` must be the number of locales.
///
/// # Safety
/// `out` must be null (an error) or point to `n` writable `pgas_comm_diags_t`.
#[no_mangle]
pub unsafe extern "C" fn pgas_comm_diags_get_all(out: *mut PgasCommDiags, n: usize) -> c_int {
    ffi(|| {
        non_null(out, "out (pgas_comm_diags_t array)")?;
        let rt = rt()?;
        let locales = rt.num_locales();
        if n != locales {
            return Err(Error::InvalidLength {
                what: "pgas_comm_diags_get_all's array",
                len: n as u64,
                reason: format!("it needs one entry per locale: {locales}"),
            });
        }
        let all = rt.comm_diagnostics_all()?;
        for (i, c) in all.into_iter().enumerate() {
            // SAFETY: i < n = locales entries, writable by the caller's
            // contract; same layout as above.
            unsafe { out.add(i).write_unaligned(c) };
        }
        Ok(())
    })
}
