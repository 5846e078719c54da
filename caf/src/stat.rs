//! `stat=` / `errmsg=` as the Fortran standard fills them, and error
//! termination when the program passed no `stat=`.
//!
//! Every entry point that can fail takes a `stat` pointer and an `errmsg`
//! buffer (blank padded, `errmsg_len` characters). With `stat=` present an
//! error sets it and the message and the program goes on; without it the
//! error terminates every image with a message naming the image and the
//! statement.

use std::ffi::{c_char, c_int};

/// `STAT_UNLOCKED` (ISO_FORTRAN_ENV, as gfortran numbers it).
pub const STAT_UNLOCKED: c_int = 0;
/// `STAT_LOCKED`.
pub const STAT_LOCKED: c_int = 1;
/// `STAT_LOCKED_OTHER_IMAGE`.
pub const STAT_LOCKED_OTHER_IMAGE: c_int = 2;
/// `STAT_DUP_SYNC_IMAGES` (gfortran's value).
pub const STAT_DUP_SYNC_IMAGES: c_int = 3;
/// `STAT_STOPPED_IMAGE`.
pub const STAT_STOPPED_IMAGE: c_int = 6000;
/// `STAT_FAILED_IMAGE`.
pub const STAT_FAILED_IMAGE: c_int = 6001;
/// Any other error (a bad image index, out of memory, a runtime error).
pub const STAT_ERROR: c_int = 1;

/// Where a statement reports its outcome.
#[derive(Clone, Copy)]
pub struct StatOut {
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
}

impl StatOut {
    /// From the ABI's arguments (any may be null / 0).
    pub fn new(stat: *mut c_int, errmsg: *mut c_char, errmsg_len: usize) -> StatOut {
        StatOut {
            stat,
            errmsg,
            errmsg_len: if errmsg.is_null() { 0 } else { errmsg_len },
        }
    }

    /// Only a `stat=` (no errmsg).
    pub fn stat_only(stat: *mut c_int) -> StatOut {
        StatOut::new(stat, std::ptr::null_mut(), 0)
    }

    /// Whether the program asked for `stat=` (then errors do not terminate).
    pub fn present(&self) -> bool {
        !self.stat.is_null()
    }

    /// Success: `stat` = 0, errmsg untouched (as the standard says).
    pub fn ok(&self) {
        if !self.stat.is_null() {
            // SAFETY: a non-null stat is the program's writable integer
            // (gfortran passes the address of the stat= variable).
            unsafe { self.stat.write(0) };
        }
    }

    /// Sets `stat` to a non-error informational value (STAT_LOCKED, ...)
    /// without a message.
    pub fn set(&self, code: c_int) {
        if !self.stat.is_null() {
            // SAFETY: as in `ok`.
            unsafe { self.stat.write(code) };
        }
    }

    /// An error: with `stat=`, sets it and errmsg and returns; without,
    /// terminates the job naming the statement.
    pub fn fail(&self, code: c_int, statement: &str, what: impl std::fmt::Display) {
        let msg = format!("{statement}: {what}");
        if self.stat.is_null() {
            crate::state::error_termination(&msg, if code == 0 { 1 } else { code });
        }
        self.set(code);
        self.write_errmsg(&msg);
    }

    fn write_errmsg(&self, msg: &str) {
        if self.errmsg.is_null() || self.errmsg_len == 0 {
            return;
        }
        let b = msg.as_bytes();
        let n = b.len().min(self.errmsg_len);
        // SAFETY: errmsg is the program's character variable of
        // errmsg_len bytes (gfortran passes its address and length).
        let out =
            unsafe { std::slice::from_raw_parts_mut(self.errmsg as *mut u8, self.errmsg_len) };
        out[..n].copy_from_slice(&b[..n]);
        out[n..].fill(b' ');
    }
}
