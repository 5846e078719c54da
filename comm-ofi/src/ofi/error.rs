//! libfabric's return codes, turned into [`OfiError`] here and only here:
//! no code above the `ofi` layer compares a raw return code.

use libfabric_sys as sys;
use std::ffi::CStr;

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

    /// Whether the provider does not implement the call (`-FI_ENOSYS`,
    /// `-FI_EOPNOTSUPP`).
    pub fn is_unsupported(&self) -> bool {
        self.code == -(sys::FI_ENOSYS as i64) || self.code == -(sys::FI_EOPNOTSUPP as i64)
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
pub(super) fn check(call: &'static str, ret: impl Into<i64>) -> Result<(), OfiError> {
    let ret = ret.into();
    if ret < 0 {
        Err(OfiError::from_ret(call, ret))
    } else {
        Ok(())
    }
}

/// Builds the error of a failed call, out of line: the data path's wrappers
/// inline only the comparisons.
#[cold]
#[inline(never)]
pub(super) fn failed(call: &'static str, ret: i64) -> OfiError {
    OfiError::from_ret(call, ret)
}

/// Whether `ret` is `-FI_EAGAIN` (the queue is full for now).
#[inline(always)]
pub(super) fn is_eagain(ret: i64) -> bool {
    ret == -(sys::FI_EAGAIN as i64)
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
        let nosys = OfiError::from_ret("fi_inject_atomic", -(sys::FI_ENOSYS as i64));
        let notsup = OfiError::from_ret("fi_inject_atomic", -(sys::FI_EOPNOTSUPP as i64));
        assert!(nosys.is_unsupported() && notsup.is_unsupported() && !again.is_unsupported());
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
