//! EVENT POST / EVENT WAIT / EVENT_QUERY: one 8-byte counter per event
//! element, incremented by remote atomic adds, waited on and decremented
//! by the image that owns it.
//!
//! EVENT POST ends the poster's segment before its add, so an image whose
//! EVENT WAIT consumed that post reads what the poster wrote before it.

use crate::register::{control_word, remote_addr};
use crate::stat::{StatOut, STAT_ERROR};
use crate::state::Caf;
use crate::token::Token;
use runtime_shim::GlobalPtr;
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{fence, AtomicI64, Ordering};

const WORD: usize = 8;

/// `_gfortran_caf_event_post`.
///
/// # Safety
/// gfortran's arguments (the event coarray's token, stat/errmsg).
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_event_post(
    token: *mut c_void,
    index: usize,
    image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let c = Caf::get();
    let out = StatOut::new(stat, errmsg, errmsg_len);
    let Some(word) = control_word::<i64>(c, token, index, image, &out, "EVENT POST") else {
        return;
    };
    match c.rt.atomic(word).add(1) {
        Ok(()) => out.ok(),
        Err(e) => out.fail(STAT_ERROR, "EVENT POST", e),
    }
}

/// `_gfortran_caf_event_wait`: waits until this image's event has at least
/// `until_count` posts (1 if not positive) and consumes them.
///
/// # Safety
/// gfortran's arguments (the event coarray's token, stat/errmsg).
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_event_wait(
    token: *mut c_void,
    index: usize,
    until_count: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let c = Caf::get();
    let out = StatOut::new(stat, errmsg, errmsg_len);
    // SAFETY: gfortran passes the event coarray's token (ours).
    let Some(tok) = (unsafe { Token::from_raw(token) }) else {
        return out.fail(
            STAT_ERROR,
            "EVENT WAIT",
            "the event variable is not allocated",
        );
    };
    if tok.local.is_null() || (index + 1) * WORD > tok.size {
        return out.fail(
            STAT_ERROR,
            "EVENT WAIT",
            format!("event element {index} is outside the event variable"),
        );
    }
    let need = until_count.max(1) as i64;
    // SAFETY: a word of this image's registered memory for the event
    // (registered with size * 8 bytes, index checked above), changed only
    // by atomics.
    let counter = unsafe { &*(tok.local.add(index * WORD) as *const AtomicI64) };
    if let Err(e) = c.end_segment() {
        return out.fail(STAT_ERROR, "EVENT WAIT", e);
    }
    c.rt.wait_until(|| counter.load(Ordering::SeqCst) >= need);
    let here = GlobalPtr::<i64>::new(c.me, tok.local as u64 + (index * WORD) as u64);
    if let Err(e) = c.rt.atomic(here).sub(need) {
        return out.fail(STAT_ERROR, "EVENT WAIT", e);
    }
    fence(Ordering::SeqCst);
    out.ok();
}

/// `_gfortran_caf_event_query`: the count of image `image`'s event.
///
/// # Safety
/// `count` writable; stat null or writable.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_event_query(
    token: *mut c_void,
    index: usize,
    image: c_int,
    count: *mut c_int,
    stat: *mut c_int,
) {
    let c = Caf::get();
    let out = StatOut::stat_only(stat);
    let Some((l, a)) = remote_addr(c, token, index * WORD, image, &out, "EVENT_QUERY") else {
        return;
    };
    match c.rt.atomic(GlobalPtr::<i64>::new(l, a)).read() {
        Ok(v) => {
            // SAFETY: writable integer (gfortran).
            unsafe { count.write(v as c_int) };
            out.ok()
        }
        Err(e) => out.fail(STAT_ERROR, "EVENT_QUERY", e),
    }
}
