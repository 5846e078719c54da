//! Point-to-point synchronisation (wait-until, put-with-signal, quiet,
//! fence, yield) and MCS locks.

#![allow(clippy::missing_safety_doc)]

use super::common::*;

fn cmp_code(c: c_int) -> Result<crate::p2p::Cmp> {
    by_code(&crate::p2p::Cmp::ALL, c, "comparison")
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
        // SAFETY: src holds len readable bytes (header contract).
        let (rt, to, s) = unsafe { put_args(locale, raddr, src, len, "PUT")? };
        let sig = remote(rt, locale, sig_raddr)?;
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
    ffi(|| Ok(rt()?.yield_now()))
}

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
        // SAFETY: token is a uint64_t slot (header contract).
        let token = unsafe { out(token, "token")? };
        let at = remote(rt, locale, word)?;
        token.set(rt.lock_raw(crate::lock::GlobalLock::at(GlobalPtr::from_addr(at)))?);
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
