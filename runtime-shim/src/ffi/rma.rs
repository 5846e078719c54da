//! PUT and GET: blocking, non-blocking handles, strided and unordered.

#![allow(clippy::missing_safety_doc)]

use super::common::*;

/// Blocking PUT of `len` bytes from `src` to `raddr` on `locale`.
#[no_mangle]
pub unsafe extern "C" fn pgas_put(
    locale: i32,
    raddr: *mut c_void,
    src: *const c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        // SAFETY: src holds len readable bytes (header contract).
        let (rt, to, s) = unsafe { put_args(locale, raddr, src, len, "PUT")? };
        rt.put(GlobalPtr::<u8>::from_addr(to), s)
    })
}

/// Blocking GET of `len` bytes from `raddr` on `locale` into `dst`.
#[no_mangle]
pub unsafe extern "C" fn pgas_get(
    dst: *mut c_void,
    locale: i32,
    raddr: *const c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        let (rt, from) = get_args(dst, locale, raddr, len, "GET")?;
        // SAFETY: dst holds len writable bytes (header contract).
        let d = unsafe { bytes_mut(dst, len) };
        rt.get(d, GlobalPtr::<u8>::from_addr(from))
    })
}

/// Non-blocking PUT: `src` must stay unchanged until the handle completes.
#[no_mangle]
pub unsafe extern "C" fn pgas_put_nb(
    locale: i32,
    raddr: *mut c_void,
    src: *const c_void,
    len: usize,
    handle: *mut *mut PgasHandle,
) -> c_int {
    ffi(|| {
        // SAFETY: handle is a handle slot (header contract).
        let handle = unsafe { out(handle, "handle")? };
        // SAFETY: src stays readable until the handle completes (header contract).
        let (rt, to, s): (_, _, &'static [u8]) =
            unsafe { put_args(locale, raddr, src, len, "PUT")? };
        // SAFETY: the C caller keeps src unchanged until pgas_wait /
        // pgas_wait_any released the handle (header contract).
        let h = RawNb(unsafe { rt.comm().put_nb(to, s)? });
        handle.set_handle(PgasHandle(h));
        Ok(())
    })
}

/// Non-blocking GET: `dst` holds the data once the handle completes.
#[no_mangle]
pub unsafe extern "C" fn pgas_get_nb(
    dst: *mut c_void,
    locale: i32,
    raddr: *const c_void,
    len: usize,
    handle: *mut *mut PgasHandle,
) -> c_int {
    ffi(|| {
        // SAFETY: handle is a handle slot (header contract).
        let handle = unsafe { out(handle, "handle")? };
        let (rt, from) = get_args(dst, locale, raddr, len, "GET")?;
        // SAFETY: dst stays writable and untouched until the handle completes.
        let d: &'static mut [u8] = unsafe { bytes_mut(dst, len) };
        // SAFETY: the C caller leaves dst alone until pgas_wait /
        // pgas_wait_any released the handle (header contract).
        let h = RawNb(unsafe { rt.comm().get_nb(d, from)? });
        handle.set_handle(PgasHandle(h));
        Ok(())
    })
}

/// Sets `*done` to 1 if the operation completed (the handle stays valid:
/// release it with `pgas_wait`).
#[no_mangle]
pub unsafe extern "C" fn pgas_test(handle: *mut PgasHandle, done: *mut c_int) -> c_int {
    ffi(|| {
        // SAFETY: a live handle from pgas_put_nb / pgas_get_nb (header contract).
        let h = unsafe { self::handle(handle, "handle")? };
        // SAFETY: done is an int slot (header contract).
        let done = unsafe { out(done, "done")? };
        done.set(h.0.test()? as c_int);
        Ok(())
    })
}

/// Waits for the operation and releases the handle.
#[no_mangle]
pub unsafe extern "C" fn pgas_wait(handle: *mut PgasHandle) -> c_int {
    ffi(|| {
        // SAFETY: a live handle, given back to us for good (header contract).
        let h = unsafe { take_handle(handle, "handle")? };
        Ok(h.0 .0.wait()?)
    })
}

/// Waits until one of the `n` handles (NULL entries are skipped) completes,
/// releases it, sets `handles[i]` to NULL and `*index` to i.
#[no_mangle]
pub unsafe extern "C" fn pgas_wait_any(
    handles: *mut *mut PgasHandle,
    n: usize,
    index: *mut usize,
) -> c_int {
    ffi(|| {
        non_null(handles, "handles")?;
        // SAFETY: index is a size_t slot (header contract).
        let index = unsafe { out(index, "index")? };
        let rt = rt()?;
        // SAFETY: handles has n entries (header contract).
        let hs = unsafe { std::slice::from_raw_parts_mut(handles, n) };
        if hs.iter().all(|h| h.is_null()) {
            return Err(Error::InvalidLength {
                what: "wait_any handle list",
                len: n as u64,
                reason: "no non-null handle to wait for".into(),
            });
        }
        let live: Vec<usize> = (0..n).filter(|&i| !hs[i].is_null()).collect();
        let mut pending: Vec<&mut RawNb> = live
            .iter()
            .map(|&i| {
                // SAFETY: the non-null entries are distinct live handles
                // (header contract); the borrows end before any is released.
                unsafe { &mut (*hs[i]).0 }
            })
            .collect();
        let i = live[rt.wait_any(&mut pending)?];
        drop(pending);
        // SAFETY: entry i is a live handle, released here for good.
        let h = unsafe { take_handle(hs[i], "handle")? };
        hs[i] = std::ptr::null_mut();
        index.set(i);
        Ok(h.0 .0.wait()?)
    })
}

/// Reads `levels` strides and `levels + 1` counts.
unsafe fn stride_spec<'a>(
    count: *const usize,
    a: *const usize,
    b: *const usize,
    levels: i32,
) -> Result<(&'a [usize], &'a [usize], &'a [usize])> {
    non_null(count, "count")?;
    if !(0..=crate::strided::MAX_LEVELS as i32).contains(&levels) {
        return Err(Error::Strides(format!(
            "{levels} stride levels; 0 to {} are possible",
            crate::strided::MAX_LEVELS
        )));
    }
    let l = levels as usize;
    if l > 0 {
        non_null(a, "strides")?;
        non_null(b, "strides")?;
    }
    // SAFETY: count has levels+1 entries, each stride array levels entries
    // (header contract); empty slices need no valid pointer.
    unsafe {
        Ok((
            std::slice::from_raw_parts(count, l + 1),
            if l > 0 {
                std::slice::from_raw_parts(a, l)
            } else {
                &[]
            },
            if l > 0 {
                std::slice::from_raw_parts(b, l)
            } else {
                &[]
            },
        ))
    }
}

/// The bytes the local side of a strided transfer spans (every count
/// non-zero).
fn local_extent(count: &[usize], strides: &[usize]) -> Result<usize> {
    if let Some(i) = count.iter().position(|c| *c == 0) {
        return Err(Error::InvalidLength {
            what: "strided transfer count",
            len: 0,
            reason: format!("count[{i}] is zero (skip the call instead)"),
        });
    }
    crate::strided::extent(1, count, strides)
}

/// Strided PUT, in bytes: `count[0]` contiguous bytes per chunk, `count[i]`
/// repetitions at level i, `rstrides[i-1]` / `lstrides[i-1]` the distance in
/// bytes between them on the remote / local side.
#[no_mangle]
pub unsafe extern "C" fn pgas_put_strided(
    locale: i32,
    raddr: *mut c_void,
    rstrides: *const usize,
    src: *const c_void,
    lstrides: *const usize,
    count: *const usize,
    levels: i32,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let to = remote(rt, locale, raddr)?;
        non_null(src, "src")?;
        // SAFETY: header contract on the arrays.
        let (count, rs, ls) = unsafe { stride_spec(count, rstrides, lstrides, levels)? };
        let ext = local_extent(count, ls)?;
        // SAFETY: the local side spans ext readable bytes (header contract).
        let s = unsafe { src_bytes(rt, src, "src", ext, "strided PUT source extent")? };
        rt.put_strided(GlobalPtr::<u8>::from_addr(to), rs, s, ls, count)
    })
}

/// Strided GET, in bytes (see `pgas_put_strided`).
#[no_mangle]
pub unsafe extern "C" fn pgas_get_strided(
    dst: *mut c_void,
    lstrides: *const usize,
    locale: i32,
    raddr: *const c_void,
    rstrides: *const usize,
    count: *const usize,
    levels: i32,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let from = remote(rt, locale, raddr)?;
        non_null(dst, "dst")?;
        // SAFETY: header contract on the arrays.
        let (count, ls, rs) = unsafe { stride_spec(count, lstrides, rstrides, levels)? };
        let ext = local_extent(count, ls)?;
        // SAFETY: the local side spans ext writable bytes (header contract).
        let d = unsafe { dst_bytes(rt, dst, "dst", ext, "strided GET destination extent")? };
        rt.get_strided(d, ls, GlobalPtr::<u8>::from_addr(from), rs, count)
    })
}

/// Unordered PUT (buffered; data copied): done by the next unordered fence
/// or task end.
#[no_mangle]
pub unsafe extern "C" fn pgas_put_unordered(
    locale: i32,
    raddr: *mut c_void,
    src: *const c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        // SAFETY: src holds len readable bytes (header contract).
        let (rt, to, s) = unsafe { put_args(locale, raddr, src, len, "unordered PUT")? };
        rt.put_unordered(GlobalPtr::<u8>::from_addr(to), s)
    })
}

/// Unordered GET into `dst`, which must be this locale's registered memory.
#[no_mangle]
pub unsafe extern "C" fn pgas_get_unordered(
    dst: *mut c_void,
    locale: i32,
    raddr: *const c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        let (rt, from) = get_args(dst, locale, raddr, len, "unordered GET")?;
        rt.get_unordered(
            GlobalPtr::<u8>::new(rt.here(), dst as u64),
            GlobalPtr::<u8>::from_addr(from),
            len,
        )
    })
}

/// Issues and completes this task's unordered operations.
#[no_mangle]
pub extern "C" fn pgas_unordered_fence() -> c_int {
    ffi(|| rt()?.unordered_fence())
}
