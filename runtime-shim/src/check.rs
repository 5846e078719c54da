//! `PGAS_CHECK=1`: every PUT/GET/atomic range is checked against the
//! **target's** allocation table before it is issued (docs/embedding.md,
//! "Memory and global pointers"). A debug mode: a target on this locale is
//! checked in place, a remote one with a fast active message (one round trip
//! per remote operation) that its AM handler answers from its heap's live
//! allocations (`comm_ofi::heap::Heap::check_live`).

use crate::error::{Error, Result};
use crate::runtime::Runtime;
use amhandler::{FnId, Registry};
use comm_ofi::GlobalAddr;

/// Name of the internal body that checks a range at its target.
const CHECK_RANGE: &str = "pgas-shim.check-range";

/// Registers the body that answers range checks (on every locale, at init).
pub(crate) fn register(registry: &Registry) -> Result<FnId> {
    Ok(registry.register(CHECK_RANGE, check_range_body)?)
}

/// Whether `len` bytes at `addr` lie in one live allocation of this locale's
/// program (runs in the handler); empty reply = yes, else what is wrong.
fn check_range_body(ctx: &amhandler::Ctx<'_>, args: &[u8]) -> Vec<u8> {
    let word = |i: usize| {
        args.get(8 * i..8 * i + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    match (word(0), word(1)) {
        (Some(addr), Some(len)) => match ctx.am().comm().heap().check_live(addr, len as usize) {
            Ok(()) => Vec::new(),
            Err(why) => why.into_bytes(),
        },
        _ => format!("garbled range check from locale {}", ctx.caller()).into_bytes(),
    }
}

impl Runtime {
    /// With `PGAS_CHECK=1`, fails unless `len` bytes at `at` lie in one live
    /// allocation of the program on that locale (`what` names the operation
    /// in the error); a no-op otherwise.
    #[inline]
    pub(crate) fn check_live(&self, what: &str, at: GlobalAddr, len: usize) -> Result<()> {
        if !self.config().check || len == 0 {
            return Ok(());
        }
        self.check_live_checked(what, at, len)
    }

    /// [`Runtime::check_live`] with `PGAS_CHECK=1`: out of line, so the
    /// calls of every RMA without it carry none of this.
    #[cold]
    #[inline(never)]
    fn check_live_checked(&self, what: &str, at: GlobalAddr, len: usize) -> Result<()> {
        if self.comm().is_static(at, len) {
            // Registered static data is always live.
            return Ok(());
        }
        self.check_locale(at.locale)?;
        let why = if at.locale == self.here() {
            match self.comm().heap().check_live(at.addr, len) {
                Ok(()) => return Ok(()),
                Err(why) => why,
            }
        } else {
            let mut args = [0u8; 16];
            args[..8].copy_from_slice(&at.addr.to_le_bytes());
            args[8..].copy_from_slice(&(len as u64).to_le_bytes());
            let r = self
                .am()
                .execute_on_fast(at.locale, self.check_range_id(), &args)?;
            if r.is_empty() {
                return Ok(());
            }
            String::from_utf8_lossy(&r).into_owned()
        };
        Err(Error::BadAddress {
            locale: at.locale,
            addr: at.addr,
            reason: format!("PGAS_CHECK: {what} of {len} bytes: {why}"),
        })
    }
}
