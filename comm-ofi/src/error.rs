//! Errors of the comm layer.
//!
//! Every libfabric failure carries the call that failed, its return code and
//! `fi_strerror` text; every bad input names the bad value, so a user can see
//! what to change without a debugger.

use libfabric_sys as sys;
use std::ffi::CStr;

/// Result alias for the comm layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failed libfabric call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {text} (ret {code})")]
pub struct OfiError {
    /// The libfabric function, e.g. `fi_writemsg`.
    pub call: &'static str,
    /// Its (negative) return code, or the completion error code.
    pub code: i64,
    /// `fi_strerror` text, plus provider detail where libfabric gave one.
    pub text: String,
}

impl OfiError {
    /// Whether the provider asked to try again later (`-FI_EAGAIN`, or
    /// `-ENOMEM` for a queue that is full for now, as shm answers a repost).
    pub fn is_try_again(&self) -> bool {
        self.code == -(sys::FI_EAGAIN as i64) || self.code == -(libc::ENOMEM as i64)
    }

    /// Whether the operation was canceled (`-FI_ECANCELED`: the endpoint is
    /// closing).
    pub fn is_canceled(&self) -> bool {
        self.code == -(libc::ECANCELED as i64)
    }

    /// Builds the error for a negative return code of `call`.
    pub fn from_ret(call: &'static str, ret: i64) -> Self {
        OfiError {
            call,
            code: ret,
            text: strerror(ret.unsigned_abs() as i32),
        }
    }
}

/// `fi_strerror` as an owned string.
pub fn strerror(errnum: i32) -> String {
    // SAFETY: fi_strerror returns a pointer to a static NUL-terminated string
    // for any errnum (unknown numbers map to a generic message).
    unsafe { CStr::from_ptr(sys::fi_strerror(errnum)) }
        .to_string_lossy()
        .into_owned()
}

/// Turns a libfabric return code into a `Result`.
pub(crate) fn check(call: &'static str, ret: impl Into<i64>) -> Result<(), OfiError> {
    let ret = ret.into();
    if ret < 0 {
        Err(OfiError::from_ret(call, ret))
    } else {
        Ok(())
    }
}

/// Everything that can go wrong in the comm layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A libfabric call failed.
    #[error(transparent)]
    Ofi(#[from] OfiError),
    /// The provider's transmit queue is full and the context was told not
    /// to wait (the AM progress thread, which must keep receiving): nothing
    /// was posted; try again later.
    #[error("{call} would block: the transmit queue is full (retry later)")]
    WouldBlock {
        /// The libfabric function.
        call: &'static str,
    },
    /// An environment variable holds a value we cannot use.
    #[error("invalid {var}={value:?}: {reason}")]
    Env {
        /// The variable.
        var: &'static str,
        /// Its value as found.
        value: String,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// No provider could be used (or the forced one is unknown).
    #[error("{0}")]
    NoProvider(String),
    /// The forced MCM mode cannot be honoured by the (forced or chosen) provider.
    #[error("MCM mode {mode} is not supported by provider {provider}; it supports: {supported}")]
    ModeUnsupported {
        /// The mode asked for.
        mode: String,
        /// The provider.
        provider: String,
        /// What the provider can do, as a list.
        supported: String,
    },
    /// A locale number outside the job.
    #[error(
        "locale {locale} is out of range: the job has {num_locales} locales (0..{num_locales})"
    )]
    InvalidLocale {
        /// The bad locale.
        locale: u32,
        /// The job size.
        num_locales: u32,
    },
    /// A remote address outside the target's registered memory.
    #[error(
        "address {addr:#x} (+{len} bytes) on locale {locale} is outside its registered heap \
         [{base:#x}, {end:#x})"
    )]
    AddressOutOfHeap {
        /// Target locale.
        locale: u32,
        /// The address.
        addr: u64,
        /// Length of the access.
        len: usize,
        /// Heap start on that locale.
        base: u64,
        /// Heap end on that locale.
        end: u64,
    },
    /// An access size the operation cannot take.
    #[error("invalid size {size} for {what}: {reason}")]
    InvalidSize {
        /// The operation.
        what: &'static str,
        /// The bad size.
        size: usize,
        /// Why.
        reason: String,
    },
    /// A misaligned atomic target.
    #[error("address {addr:#x} on locale {locale} is not {align}-byte aligned for a {what}")]
    Misaligned {
        /// Target locale.
        locale: u32,
        /// The address.
        addr: u64,
        /// Required alignment.
        align: usize,
        /// The operation.
        what: &'static str,
    },
    /// Freeing an address that is not a live allocation of this locale
    /// (freed already, a pointer into one, another locale's memory).
    #[error("cannot free address {addr:#x} of locale {locale}: {reason}")]
    BadFree {
        /// The locale the address was given for.
        locale: u32,
        /// The address.
        addr: u64,
        /// What the address is instead.
        reason: String,
    },
    /// A PUT, GET or atomic that does not reach the peer (it died, or the
    /// network failed): names the operation and the peer.
    #[error("{op} with locale {locale} failed: {source}")]
    Peer {
        /// "PUT of 8 bytes", "GET of 4096 bytes", "atomic", "active message"...
        op: String,
        /// The peer.
        locale: u32,
        /// What libfabric said.
        source: OfiError,
    },
    /// The registered heap cannot satisfy an allocation.
    #[error("registered heap exhausted: cannot allocate {size} bytes (heap {heap_size} bytes, set PGAS_HEAP_SIZE)")]
    OutOfMemory {
        /// Bytes asked for.
        size: usize,
        /// Heap size.
        heap_size: usize,
    },
    /// An operation the provider cannot do natively and whose fallback is missing.
    #[error("{0}")]
    Unsupported(String),
    /// The out-of-band bootstrap failed.
    #[error("bootstrap: {0}")]
    Bootstrap(#[from] bootstrap::OobError),
    /// Start-up exchange produced inconsistent data.
    #[error("start-up exchange: {0}")]
    Exchange(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ofi::{CqEntry, RecvCompletion};

    #[test]
    fn try_again_and_canceled_are_named_without_raw_codes() {
        let again = OfiError::from_ret("fi_recvmsg", -(sys::FI_EAGAIN as i64));
        let nomem = OfiError::from_ret("fi_recvmsg", -(libc::ENOMEM as i64));
        let canceled = OfiError::from_ret("fi_cq_read", -(libc::ECANCELED as i64));
        assert!(again.is_try_again() && nomem.is_try_again() && !canceled.is_try_again());
        assert!(canceled.is_canceled() && !again.is_canceled());
    }

    #[test]
    fn receive_completions_say_what_they_carry() {
        let mut buf = [7u8; 4];
        let mut e = CqEntry::default();
        assert_eq!(e.received(), None);
        assert!(!e.retires_buffer());
        e.flags = sys::FI_RECV | sys::FI_MULTI_RECV;
        e.buf = buf.as_mut_ptr() as *mut _;
        e.len = 4;
        e.op_context = 2 as *mut _;
        assert_eq!(e.received(), Some((buf.as_ptr(), 4)));
        assert!(e.retires_buffer());
        assert_eq!(e.context(), 2);
        e.len = 0;
        assert_eq!(e.received(), None, "an empty completion carries no message");
    }
}
