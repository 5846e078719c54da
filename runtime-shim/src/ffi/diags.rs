//! Comm diagnostics (Chapel's CommDiagnostics) through the C ABI.

#![allow(clippy::missing_safety_doc)]

use super::common::*;

/// `pgas_comm_diags_t`: the counts, with `CommCounts`' `repr(C)` layout.
pub type PgasCommDiags = crate::comm_counts::CommCounts;

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
        // writable pgas_comm_diags_t, which has CommCounts' repr(C) layout
        // (written unaligned: C's struct may be packed differently in memory).
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

/// Writes to `*out` how many atomics the calling thread left in flight and
/// has not awaited yet (`Runtime::pending_amos`: non-blocking atomics, and
/// non-fetching ones whose answers wait for the next boundary).
///
/// # Safety
/// `out` must be null (an error) or point to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn pgas_pending_amos(out: *mut usize) -> c_int {
    ffi(|| {
        non_null(out, "out (size_t)")?;
        let n = rt()?.pending_amos();
        // SAFETY: out is non-null and writable by the caller's contract.
        unsafe { out.write_unaligned(n) };
        Ok(())
    })
}
