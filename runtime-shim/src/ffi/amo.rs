//! Remote atomics: `pgas_amo` and the non-blocking fetching `pgas_amo_nb`.

#![allow(clippy::missing_safety_doc)]

use super::common::*;

/// The arguments both atomic entries take, checked and decoded once: the
/// target word, its type, the op, and the operand and compare values read
/// from their pointers where the op uses them.
#[derive(Debug, Clone, Copy)]
struct AmoArgs {
    rt: &'static Runtime,
    target: GlobalAddr,
    ty: AmoType,
    op: AtomicOp,
    operand: u64,
    compare: u64,
}

impl AmoArgs {
    /// # Safety
    /// `operand` and `compare`, where the op uses them, point to one value
    /// of the type (header contract).
    unsafe fn decode(
        locale: i32,
        raddr: *const c_void,
        ty: c_int,
        op: c_int,
        operand: *const c_void,
        compare: *const c_void,
    ) -> Result<AmoArgs> {
        let rt = rt()?;
        let target = remote(rt, locale, raddr)?;
        let ty = amo_type(ty)?;
        let op = amo_op(op)?;
        let read = |p: *const c_void, what: &'static str| -> Result<u64> {
            non_null(p, what)?;
            let mut w = [0u8; 8];
            // SAFETY: p points to one value of the type (the caller's contract).
            w[..ty.size()].copy_from_slice(unsafe { bytes(p, ty.size()) });
            Ok(u64::from_le_bytes(w))
        };
        let operand = match op {
            AtomicOp::Read => 0,
            _ => read(operand, "operand")?,
        };
        let compare = match op {
            AtomicOp::Cmpxchg => read(compare, "compare")?,
            _ => 0,
        };
        Ok(AmoArgs {
            rt,
            target,
            ty,
            op,
            operand,
            compare,
        })
    }

    /// Performs the atomic: the old value's bits if `fetch`.
    fn apply(self, fetch: bool) -> Result<u64> {
        let req = self.op.request(self.target, self.ty, self.operand, fetch);
        self.rt.amo_bits(&req.comparing(self.compare))
    }
}

/// Stores the old value `old` of type `ty` at `result`.
///
/// # Safety
/// `result` is non-null and points to one writable value of the type.
unsafe fn store_old(result: *mut c_void, ty: AmoType, old: u64) {
    // SAFETY: forwarded from the caller.
    unsafe { bytes_mut(result, ty.size()) }.copy_from_slice(&old.to_le_bytes()[..ty.size()]);
}

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
        // SAFETY: header contract on operand and compare.
        let a = unsafe { AmoArgs::decode(locale, raddr, ty, op, operand, compare)? };
        if flags & !(AMO_FETCH | AMO_UNORDERED) != 0 {
            return Err(Error::BadCode {
                what: "atomic flags",
                code: flags as i64,
            });
        }
        let fetch = a.op.always_fetches() || flags & AMO_FETCH != 0;
        if flags & AMO_UNORDERED != 0 {
            if fetch {
                return Err(Error::AtomicUse(format!(
                    "an unordered atomic cannot fetch (op {:?})",
                    a.op
                )));
            }
            return a.rt.amo_unordered_bits(a.target, a.ty, a.op, a.operand);
        }
        if fetch {
            non_null(result, "result")?;
        }
        let old = a.apply(fetch)?;
        if fetch {
            // SAFETY: result points to one writable value of the type.
            unsafe { store_old(result, a.ty, old) };
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
        // SAFETY: handle is a handle slot (header contract).
        let handle = unsafe { out(handle, "handle")? };
        // SAFETY: header contract on operand and compare.
        let a = unsafe { AmoArgs::decode(locale, raddr, ty, op, operand, compare)? };
        a.rt.comm().check_atomic_target(a.target, a.ty)?;
        let task = a.rt.spawn(move || a.apply(true))?;
        handle.set_handle(PgasAmoHandle(task, a.ty));
        Ok(())
    })
}

/// Sets `*done` to 1 if the atomic was performed (the handle stays valid).
#[no_mangle]
pub unsafe extern "C" fn pgas_amo_test(handle: *mut PgasAmoHandle, done: *mut c_int) -> c_int {
    ffi(|| {
        // SAFETY: a live handle from pgas_amo_nb (header contract).
        let h = unsafe { self::handle(handle, "handle")? };
        // SAFETY: done is an int slot (header contract).
        let done = unsafe { out(done, "done")? };
        done.set(h.0.is_done() as c_int);
        Ok(())
    })
}

/// Waits for the atomic, stores the old value in `*result` (if not NULL)
/// and releases the handle.
#[no_mangle]
pub unsafe extern "C" fn pgas_amo_wait(handle: *mut PgasAmoHandle, result: *mut c_void) -> c_int {
    ffi(|| {
        // SAFETY: a live handle, given back for good (header contract).
        let h = unsafe { take_handle(handle, "handle")? };
        let old = h.0.join()??;
        if !result.is_null() {
            // SAFETY: result points to one writable value of the type.
            unsafe { store_old(result, h.1, old) };
        }
        Ok(())
    })
}
