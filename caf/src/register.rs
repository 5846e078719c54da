//! Coarray registration: `_gfortran_caf_register` / `_deregister`,
//! collective frees, and the resolution of a coindexed operation's image
//! and address (`locate`, `remote_addr`). Above the state and the tokens
//! it fills.

use crate::desc::Descriptor;
use crate::stat::{StatOut, STAT_ERROR, STAT_FAILED_IMAGE};
use crate::state::{Caf, TeamRec};
use crate::token::{regtype, Token, TokenKind};
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

/// Bytes of library-owned words for `n` locks or events.
const WORD: usize = 8;

fn alloc_local(c: &Caf, bytes: usize) -> runtime_shim::Result<*mut u8> {
    let p = c.rt.alloc::<u8>(bytes.max(1))?;
    // SAFETY: a fresh allocation of bytes.max(1) bytes of this image's
    // registered heap, not yet known to anyone else.
    unsafe { std::ptr::write_bytes(p.addr() as *mut u8, 0, bytes.max(1)) };
    Ok(p.addr() as *mut u8)
}

/// Collective over the current team: allocates `bytes` on every member and
/// gathers their addresses.
fn alloc_team(c: &Caf, bytes: usize) -> Result<(Vec<u64>, *mut u8, Arc<TeamRec>), String> {
    let team = c.current();
    let mine = alloc_local(c, bytes).map_err(|e| e.to_string());
    let word = *mine.as_ref().unwrap_or(&std::ptr::null_mut()) as u64;
    let all = team.team.fcollect(&[word]).map_err(|e| e.to_string())?;
    let local = mine?;
    if let Some(i) = all.iter().position(|a| *a == 0) {
        let _ =
            c.rt.free(runtime_shim::GlobalPtr::<u8>::new(c.me, local as u64));
        return Err(format!(
            "image {} could not allocate {bytes} bytes (PGAS_HEAP_SIZE sets the heap per image)",
            i + 1
        ));
    }
    let mut addrs = vec![0u64; c.world_n];
    for (rank, a) in all.iter().enumerate() {
        addrs[team.team.locales()[rank]] = *a;
    }
    Ok((addrs, local, team))
}

/// `_gfortran_caf_register`.
///
/// # Safety
/// gfortran's arguments: `token` writable, `desc` a descriptor (or null),
/// stat/errmsg as for every statement.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_register(
    size: usize,
    ty: c_int,
    token: *mut *mut c_void,
    desc: *mut Descriptor,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let out = StatOut::new(stat, errmsg, errmsg_len);
    let c = Caf::get();
    let (kind, bytes) = match ty {
        regtype::LOCK_STATIC | regtype::LOCK_ALLOC | regtype::CRITICAL => {
            (TokenKind::Lock, size.max(1) * WORD)
        }
        regtype::EVENT_STATIC | regtype::EVENT_ALLOC => (TokenKind::Event, size.max(1) * WORD),
        _ => (TokenKind::Data, size),
    };
    let set_base = |p: *mut u8| {
        if !desc.is_null() {
            // SAFETY: desc is the coarray's descriptor (gfortran).
            unsafe { (*desc).base_addr = p as *mut c_void };
        }
    };
    match ty {
        regtype::REGISTER_ONLY => {
            let t = Box::new(Token {
                addrs: Vec::new(),
                size: 0,
                local: std::ptr::null_mut(),
                kind,
                team: None,
                desc: std::ptr::null(),
            });
            // SAFETY: token is writable (gfortran).
            unsafe { token.write(Box::into_raw(t) as *mut c_void) };
            out.ok();
        }
        regtype::ALLOCATE_ONLY => {
            // SAFETY: token is writable and holds null or our token.
            let existing = unsafe { *token } as *mut Token;
            let local = match alloc_local(c, bytes) {
                Ok(p) => p,
                Err(e) => return out.fail(STAT_ERROR, "ALLOCATE", e),
            };
            if existing.is_null() {
                let t = Box::new(Token {
                    addrs: Vec::new(),
                    size: bytes,
                    local,
                    kind,
                    team: None,
                    desc: std::ptr::null(),
                });
                // SAFETY: token is writable.
                unsafe { token.write(Box::into_raw(t) as *mut c_void) };
            } else {
                // SAFETY: our token, owned by this coarray; gfortran does
                // not use it concurrently with its allocation.
                let t = unsafe { &mut *existing };
                t.size = bytes;
                t.local = local;
            }
            set_base(local);
            out.ok();
        }
        _ => {
            // A collective allocation is an image control statement.
            let _ = c.end_segment();
            let (addrs, local, team) = match alloc_team(c, bytes) {
                Ok(x) => x,
                Err(e) => return out.fail(STAT_ERROR, "ALLOCATE", e),
            };
            let is_alloc = matches!(
                ty,
                regtype::COARRAY_ALLOC | regtype::LOCK_ALLOC | regtype::EVENT_ALLOC
            );
            let t = Box::into_raw(Box::new(Token {
                addrs,
                size: bytes,
                local,
                kind,
                team: Some(team.clone()),
                desc: if is_alloc { desc } else { std::ptr::null() },
            }));
            if is_alloc && team.number != -1 {
                team.allocated.lock().push(t as usize);
            }
            // SAFETY: token is writable.
            unsafe { token.write(t as *mut c_void) };
            set_base(local);
            out.ok();
        }
    }
}

/// Frees a collective coarray (collective over its team: every member
/// synchronises first, so nobody accesses freed memory).
pub(crate) fn free_collective(c: &Caf, t: *mut Token) -> Result<(), String> {
    // SAFETY: our token, not yet freed (callers take it out of every list).
    let tok = unsafe { Box::from_raw(t) };
    if let Some(team) = &tok.team {
        let _ = c.end_segment();
        team.team.barrier().map_err(|e| e.to_string())?;
    }
    if !tok.local.is_null() {
        c.rt.free(runtime_shim::GlobalPtr::<u8>::new(c.me, tok.local as u64))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `_gfortran_caf_deregister`.
///
/// # Safety
/// `token` points to a token this library made.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_deregister(
    token: *mut *mut c_void,
    ty: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let out = StatOut::new(stat, errmsg, errmsg_len);
    let c = Caf::get();
    // SAFETY: token is gfortran's token variable.
    let t = unsafe { *token } as *mut Token;
    if t.is_null() {
        return out.ok();
    }
    if ty == 1 {
        // CAF_DEREGTYPE_COARRAY_DEALLOCATE_ONLY: a component's memory, this
        // image only; the token stays.
        // SAFETY: our token.
        let tok = unsafe { &mut *t };
        if !tok.local.is_null() {
            let _ =
                c.rt.free(runtime_shim::GlobalPtr::<u8>::new(c.me, tok.local as u64));
            tok.local = std::ptr::null_mut();
            tok.size = 0;
        }
        return out.ok();
    }
    // SAFETY: our token.
    let collective = unsafe { (*t).team.is_some() };
    if collective {
        // SAFETY: as above.
        if let Some(team) = unsafe { (*t).team.clone() } {
            team.allocated.lock().retain(|x| *x != t as usize);
        }
        if let Err(e) = free_collective(c, t) {
            return out.fail(STAT_ERROR, "DEALLOCATE", e);
        }
    } else {
        // SAFETY: our token, a component's (not collective).
        let tok = unsafe { Box::from_raw(t) };
        if !tok.local.is_null() {
            let _ =
                c.rt.free(runtime_shim::GlobalPtr::<u8>::new(c.me, tok.local as u64));
        }
    }
    // SAFETY: token is writable.
    unsafe { token.write(std::ptr::null_mut()) };
    out.ok();
}

/// A coindexed reference resolved: the coarray's token, the world locale
/// of `image` (1-based, current team) and the address there of byte
/// `offset` of the coarray. Errs with the `stat=` code and the message when
/// the token is null, the image index is not one of the current team's, the
/// image has failed (checked only when `check_failed`), or the coarray is
/// not allocated there.
pub(crate) fn locate<'a>(
    c: &Caf,
    token: *mut c_void,
    offset: usize,
    image: c_int,
    check_failed: bool,
) -> Result<(&'a Token, usize, u64), (c_int, String)> {
    // SAFETY: gfortran passes the coarray's token (ours).
    let Some(tok) = (unsafe { Token::from_raw(token) }) else {
        return Err((STAT_ERROR, "the coarray is not allocated".into()));
    };
    let team = c.current();
    let Some(l) = team.locale_of(image as i64) else {
        return Err((
            STAT_ERROR,
            format!(
                "image {image} is not an image of the current team (1 to {})",
                team.num_images()
            ),
        ));
    };
    if check_failed && c.status_of(l) == crate::state::IMAGE_FAILED {
        return Err((STAT_FAILED_IMAGE, format!("image {image} has failed")));
    }
    let Some(a) = tok.addr_on(c.me, l, offset) else {
        return Err((
            STAT_ERROR,
            format!("the coarray is not allocated on image {image}"),
        ));
    };
    Ok((tok, l, a))
}

/// Where a coindexed operation goes: the world locale of `image` (1-based,
/// current team; 0: this image) and the address of byte `offset` of the
/// coarray there, resolved as [`locate`] does (the failed image checked
/// only with `stat=`). Reports through `out` (and returns None) when that
/// fails.
pub(crate) fn remote_addr(
    c: &Caf,
    token: *mut c_void,
    offset: usize,
    image: c_int,
    out: &StatOut,
    statement: &str,
) -> Option<(usize, u64)> {
    // gfortran passes image 0 for an atomic, lock or event reference
    // without a coindex: this image.
    let image = if image == 0 {
        c.current().this_image() as c_int
    } else {
        image
    };
    match locate(c, token, offset, image, out.present()) {
        Ok((_, l, a)) => Some((l, a)),
        Err((code, msg)) => {
            out.fail(code, statement, msg);
            None
        }
    }
}

/// The library-owned word `index` of a lock or event coarray on `image`
/// (0: this image), resolved as [`remote_addr`] does, for an image control
/// statement: this image's segment is ended before it is returned. `None`
/// when either failed (reported in `out` under `statement`).
pub(crate) fn control_word<T: runtime_shim::Pod>(
    c: &Caf,
    token: *mut c_void,
    index: usize,
    image: c_int,
    out: &StatOut,
    statement: &str,
) -> Option<runtime_shim::GlobalPtr<T>> {
    let (l, a) = remote_addr(c, token, index * WORD, image, out, statement)?;
    if let Err(e) = c.end_segment() {
        out.fail(STAT_ERROR, statement, e);
        return None;
    }
    Some(runtime_shim::GlobalPtr::new(l, a))
}
