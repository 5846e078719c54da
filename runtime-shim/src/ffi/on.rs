//! On-statements (active messages): the body's context, blocking and
//! non-blocking, regular and fast.

#![allow(clippy::missing_safety_doc)]

use super::common::*;

/// The locale that started the on-statement.
#[no_mangle]
pub unsafe extern "C" fn pgas_on_caller(ctx: *const PgasOnCtx) -> i32 {
    if ctx.is_null() {
        return -1;
    }
    // SAFETY: a live context passed to the body (header contract).
    unsafe { (*ctx).caller as i32 }
}

/// Sets the reply the caller of a blocking on-statement receives.
#[no_mangle]
pub unsafe extern "C" fn pgas_on_reply(
    ctx: *mut PgasOnCtx,
    data: *const c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        non_null(ctx, "ctx")?;
        // SAFETY: a live context passed to the body (header contract).
        let c = unsafe { &mut *ctx };
        c.reply.clear();
        if len > 0 {
            non_null(data, "data")?;
            // SAFETY: data holds len readable bytes.
            c.reply.extend_from_slice(unsafe { bytes(data, len) });
        }
        Ok(())
    })
}

fn args<'a>(arg: *const c_void, len: usize) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    non_null(arg, "arg")?;
    // SAFETY: arg holds len readable bytes (header contract).
    Ok(unsafe { bytes(arg, len) })
}

fn deliver(reply: Vec<u8>, buf: *mut c_void, cap: usize, len: *mut usize) -> Result<()> {
    if !len.is_null() {
        // SAFETY: non-null size_t pointer.
        unsafe { *len = reply.len() };
    }
    if reply.is_empty() {
        return Ok(());
    }
    if reply.len() > cap {
        return Err(Error::ReplyTooLarge {
            len: reply.len(),
            cap,
        });
    }
    non_null(buf, "reply")?;
    // SAFETY: buf holds cap >= reply.len() writable bytes (header contract).
    unsafe { bytes_mut(buf, reply.len()) }.copy_from_slice(&reply);
    Ok(())
}

/// Blocking on-statement: runs body `fid` on `locale`; its reply (if any)
/// is copied to `reply` (`*reply_len` gets its length; a reply longer than
/// `reply_cap` is `PGAS_ERR_LENGTH`).
#[no_mangle]
pub unsafe extern "C" fn pgas_execute_on(
    locale: i32,
    fid: u64,
    arg: *const c_void,
    arg_len: usize,
    reply: *mut c_void,
    reply_cap: usize,
    reply_len: *mut usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let l = self::locale(rt, locale)?;
        let r = rt.on(l, amhandler::FnId(fid), args(arg, arg_len)?)?;
        deliver(r, reply, reply_cap, reply_len)
    })
}

/// Non-blocking on-statement (fire and forget).
#[no_mangle]
pub unsafe extern "C" fn pgas_execute_on_nb(
    locale: i32,
    fid: u64,
    arg: *const c_void,
    arg_len: usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let l = self::locale(rt, locale)?;
        rt.on_nb(l, amhandler::FnId(fid), args(arg, arg_len)?)
    })
}

/// Blocking fast on-statement (body runs in the target's handler thread).
#[no_mangle]
pub unsafe extern "C" fn pgas_execute_on_fast(
    locale: i32,
    fid: u64,
    arg: *const c_void,
    arg_len: usize,
    reply: *mut c_void,
    reply_cap: usize,
    reply_len: *mut usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let l = self::locale(rt, locale)?;
        let r = rt.on_fast(l, amhandler::FnId(fid), args(arg, arg_len)?)?;
        deliver(r, reply, reply_cap, reply_len)
    })
}

/// Non-blocking fast on-statement.
#[no_mangle]
pub unsafe extern "C" fn pgas_execute_on_fast_nb(
    locale: i32,
    fid: u64,
    arg: *const c_void,
    arg_len: usize,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let l = self::locale(rt, locale)?;
        rt.on_fast_nb(l, amhandler::FnId(fid), args(arg, arg_len)?)
    })
}
