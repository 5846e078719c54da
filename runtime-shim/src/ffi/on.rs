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
        // SAFETY: a live context passed to the body (header contract).
        let c = unsafe { handle(ctx, "ctx")? };
        // SAFETY: data holds len readable bytes (header contract).
        let data = unsafe { args(data, len, "data")? };
        c.reply.clear();
        c.reply.extend_from_slice(data);
        Ok(())
    })
}

/// The `len` bytes at `p` (the pointer named `what`), which may be null
/// when `len` is 0.
///
/// # Safety
/// `p..p+len` must be readable for `'a` (the C caller's obligation).
unsafe fn args<'a>(p: *const c_void, len: usize, what: &'static str) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    non_null(p, what)?;
    // SAFETY: forwarded from the caller.
    Ok(unsafe { bytes(p, len) })
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

/// The checked arguments of an on-statement entry: the runtime, the target
/// locale, the body's id and its argument bytes.
///
/// # Safety
/// `arg` holds `arg_len` readable bytes (header contract).
unsafe fn on_args<'a>(
    locale: i32,
    fid: u64,
    arg: *const c_void,
    arg_len: usize,
) -> Result<(&'static Runtime, Locale, amhandler::FnId, &'a [u8])> {
    let rt = rt()?;
    let l = self::locale(rt, locale)?;
    // SAFETY: forwarded from the caller.
    let a = unsafe { args(arg, arg_len, "arg")? };
    Ok((rt, l, amhandler::FnId(fid), a))
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
        // SAFETY: header contract on arg.
        let (rt, l, f, a) = unsafe { on_args(locale, fid, arg, arg_len)? };
        deliver(rt.on(l, f, a)?, reply, reply_cap, reply_len)
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
        // SAFETY: header contract on arg.
        let (rt, l, f, a) = unsafe { on_args(locale, fid, arg, arg_len)? };
        rt.on_nb(l, f, a)
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
        // SAFETY: header contract on arg.
        let (rt, l, f, a) = unsafe { on_args(locale, fid, arg, arg_len)? };
        deliver(rt.on_fast(l, f, a)?, reply, reply_cap, reply_len)
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
        // SAFETY: header contract on arg.
        let (rt, l, f, a) = unsafe { on_args(locale, fid, arg, arg_len)? };
        rt.on_fast_nb(l, f, a)
    })
}
