//! LOCK / UNLOCK (and CRITICAL, which gfortran lowers to a lock on image 1
//! of a hidden lock coarray): one 8-byte word per lock element, 0 when
//! unlocked, the holder's world locale + 1 when locked, changed only by
//! remote compare-and-swap.
//!
//! Both are image control statements: LOCK ends the segment before it asks
//! and reads what the previous holder wrote after it gets the lock
//! (the holder's UNLOCK forced its writes visible before releasing).

use crate::register::control_word;
use crate::stat::{StatOut, STAT_ERROR, STAT_LOCKED, STAT_LOCKED_OTHER_IMAGE, STAT_UNLOCKED};
use crate::state::Caf;
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{fence, Ordering};

/// `_gfortran_caf_lock`.
///
/// # Safety
/// gfortran's arguments: the lock coarray's token, `acquired_lock` null or
/// a writable logical (C int), stat/errmsg.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_lock(
    token: *mut c_void,
    index: usize,
    image: c_int,
    acquired_lock: *mut c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let c = Caf::get();
    let out = StatOut::new(stat, errmsg, errmsg_len);
    let Some(word) = control_word::<u64>(c, token, index, image, &out, "LOCK") else {
        return;
    };
    let word = c.rt.atomic(word);
    let mine = c.me as u64 + 1;
    let mut err = None;
    let mut try_once = || match word.compare_exchange(0, mine) {
        Ok(Ok(_)) => Some(true),
        Ok(Err(holder)) if holder == mine => Some(false),
        Ok(Err(_)) => None,
        Err(e) => {
            err = Some(e);
            Some(false)
        }
    };
    let got = match try_once() {
        Some(true) => true,
        Some(false) => {
            if let Some(e) = err {
                return out.fail(STAT_ERROR, "LOCK", e);
            }
            return out.fail(
                STAT_LOCKED,
                "LOCK",
                format!("the lock variable on image {image} is already locked by this image"),
            );
        }
        None if !acquired_lock.is_null() => false,
        None => {
            let mut result = None;
            c.rt.wait_until(|| {
                result = try_once();
                result.is_some()
            });
            if let Some(e) = err {
                return out.fail(STAT_ERROR, "LOCK", e);
            }
            result == Some(true)
        }
    };
    if !acquired_lock.is_null() {
        // SAFETY: a writable logical (gfortran).
        unsafe { acquired_lock.write(got as c_int) };
    }
    fence(Ordering::SeqCst);
    out.ok();
}

/// `_gfortran_caf_unlock`.
///
/// # Safety
/// As for `_gfortran_caf_lock`.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_unlock(
    token: *mut c_void,
    index: usize,
    image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let c = Caf::get();
    let out = StatOut::new(stat, errmsg, errmsg_len);
    // What this image wrote while holding the lock is visible before the
    // next holder can get it (control_word ends the segment).
    let Some(word) = control_word::<u64>(c, token, index, image, &out, "UNLOCK") else {
        return;
    };
    let mine = c.me as u64 + 1;
    match c.rt.atomic(word).compare_exchange(mine, 0) {
        Ok(Ok(_)) => out.ok(),
        Ok(Err(0)) => out.fail(
            STAT_UNLOCKED,
            "UNLOCK",
            format!("the lock variable on image {image} is not locked"),
        ),
        Ok(Err(holder)) => out.fail(
            STAT_LOCKED_OTHER_IMAGE,
            "UNLOCK",
            format!(
                "the lock variable on image {image} is locked by image {}",
                holder
            ),
        ),
        Err(e) => out.fail(STAT_ERROR, "UNLOCK", e),
    }
}
