//! Remote atomics: `pgas_amo` and the non-blocking fetching `pgas_amo_nb`.

#![allow(clippy::missing_safety_doc)]

use super::common::*;

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
