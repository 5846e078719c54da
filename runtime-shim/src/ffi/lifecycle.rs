//! Lifecycle: registering on-statement bodies, init, the locale queries,
//! barrier, finalize, exit/abort, and the error texts (`pgas_strerror`,
//! `pgas_last_error`), the library version (`pgas_version`).

#![allow(clippy::missing_safety_doc)]

use super::common::*;

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
                    .register_raw(fid, &name, crate::runtime::init::wrap(c_body(body)))?;
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
        b.init_logging(crate::logging::LogDefault::Warn).map(|_| ())
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

/// A decimal version component of the crate (`CARGO_PKG_VERSION_*`), at
/// compile time: what `pgas_version` reports and the header's
/// `PGAS_SHIM_VERSION_*` macros must equal (`tests/header.rs`).
const fn version_part(s: &str) -> c_int {
    let b = s.as_bytes();
    let mut v: c_int = 0;
    let mut i = 0;
    while i < b.len() {
        assert!(b[i].is_ascii_digit(), "version component is not decimal");
        v = v * 10 + (b[i] - b'0') as c_int;
        i += 1;
    }
    v
}

/// The library's version: major, minor, patch.
pub const VERSION: (c_int, c_int, c_int) = (
    version_part(env!("CARGO_PKG_VERSION_MAJOR")),
    version_part(env!("CARGO_PKG_VERSION_MINOR")),
    version_part(env!("CARGO_PKG_VERSION_PATCH")),
);

/// The version of the library actually loaded (compare it with the header's
/// `PGAS_SHIM_VERSION_*` the program was compiled against). Any pointer may
/// be NULL (that part is skipped); works before `pgas_init`.
#[no_mangle]
pub unsafe extern "C" fn pgas_version(
    major: *mut c_int,
    minor: *mut c_int,
    patch: *mut c_int,
) -> c_int {
    for (p, v) in [(major, VERSION.0), (minor, VERSION.1), (patch, VERSION.2)] {
        if !p.is_null() {
            // SAFETY: a non-null pointer the caller passed points to a
            // writable int (header contract).
            unsafe { p.write(v) };
        }
    }
    code::OK
}
