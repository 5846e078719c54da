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
use crate::runtime::{AtomicOp, Builder, NbHandle, OnCtx, Runtime};
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
#[derive(Debug)]
pub struct PgasHandle(NbHandle<'static>);

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
    if l < 0 || l as u32 >= rt.num_locales() {
        return Err(Error::InvalidLocale {
            locale: l as i64,
            num_locales: rt.num_locales(),
        });
    }
    Ok(l as Locale)
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
                    return Err(Error::Am(amhandler::Error::Registry(format!(
                        "function id {fid:#x} ({name:?}) is already registered"
                    ))));
                }
                if fid & amhandler::registry::NAMED_BIT != 0 {
                    return Err(Error::Am(amhandler::Error::Registry(format!(
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
        b.init().map(|_| ())
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
    const TEXTS: [&CStr; 16] = [
        c"success",
        c"runtime not initialized, already initialized, finalized, or call not allowed here",
        c"null pointer argument",
        c"locale out of range",
        c"zero, oversized or impossible length",
        c"address outside the registered heap",
        c"misaligned atomic target",
        c"atomic type or op not defined",
        c"bad strided transfer description",
        c"function id not registered",
        c"on-statement body failed at the target",
        c"registered heap exhausted",
        c"bad environment variable",
        c"network layer failure",
        c"internal failure (task panicked)",
        c"unknown error code",
    ];
    let i = if (code::ERR_INTERNAL..=code::OK).contains(&err) {
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
        non_null(addrs, "addrs")?;
        let rt = rt()?;
        let d = rt.alloc_all::<u8>(size)?;
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
        non_null(buf, "buf")?;
        let rt = rt()?;
        length(rt, len, "broadcast")?;
        // SAFETY: buf holds len bytes (header contract).
        let b = unsafe { bytes_mut(buf, len) };
        let v = rt.broadcast_bytes(b)?;
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
        // SAFETY: src stays readable until the handle completes (header contract).
        let s: &'static [u8] = unsafe { bytes(src, len) };
        let h = rt.put_nb(GlobalPtr::<u8>::from_addr(to), s)?;
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
        // SAFETY: dst stays writable and untouched until the handle completes.
        let d: &'static mut [u8] = unsafe { bytes_mut(dst, len) };
        let h = rt.get_nb(d, GlobalPtr::<u8>::from_addr(from))?;
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
        h.0.wait()
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
        let mut found: Option<Result<usize>> = None;
        rt.wait_until(|| {
            for (i, h) in hs.iter().enumerate() {
                if h.is_null() {
                    continue;
                }
                // SAFETY: a live handle (header contract).
                match unsafe { &mut **h }.0.test() {
                    Ok(true) => {
                        found = Some(Ok(i));
                        return true;
                    }
                    Ok(false) => {}
                    Err(e) => {
                        found = Some(Err(e));
                        return true;
                    }
                }
            }
            false
        });
        let i = found.expect("wait_until returned")?;
        // SAFETY: entry i is a live handle, released here for good.
        let h = unsafe { Box::from_raw(hs[i]) };
        hs[i] = std::ptr::null_mut();
        // SAFETY: index is a non-null size_t pointer.
        unsafe { *index = i };
        h.0.wait()
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
