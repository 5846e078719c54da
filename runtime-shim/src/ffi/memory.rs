//! Registered memory: allocation (`pgas_alloc`, collective `pgas_alloc_all`,
//! `pgas_alloc_sym`), `pgas_broadcast`, and the address translations of
//! symmetric and static data.

#![allow(clippy::missing_safety_doc)]

use super::common::*;

/// Allocates `size` bytes of registered memory on this locale.
#[no_mangle]
pub unsafe extern "C" fn pgas_alloc(size: usize, out: *mut *mut c_void) -> c_int {
    ffi(|| {
        // SAFETY: out is a pointer slot (header contract).
        let out = unsafe { self::out(out, "out")? };
        out.set(rt()?.alloc::<u8>(size)?.addr() as *mut c_void);
        Ok(())
    })
}

/// Frees memory from `pgas_alloc`.
#[no_mangle]
pub unsafe extern "C" fn pgas_free(p: *mut c_void) -> c_int {
    ffi(|| {
        non_null(p, "pointer")?;
        let rt = rt()?;
        rt.free(GlobalPtr::<u8>::new(rt.here(), p as u64))
    })
}

/// Collective: `size` bytes (zeroed) on every locale; `addrs[l]` gets
/// locale l's address (`addrs` has `pgas_num_locales()` entries).
#[no_mangle]
pub unsafe extern "C" fn pgas_alloc_all(size: usize, addrs: *mut *mut c_void) -> c_int {
    ffi(|| {
        let rt = rt()?;
        // A bad argument here still takes part, so no other locale waits.
        let d = rt.alloc_all_part::<u8>(size, non_null(addrs, "addrs"))?;
        for (l, p) in d.parts().iter().enumerate() {
            // SAFETY: addrs has num_locales entries (header contract).
            unsafe { *addrs.add(l) = p.addr() as *mut c_void };
        }
        Ok(())
    })
}

/// Collective: locale 0's `len` bytes at `buf` into `buf` on every locale.
#[no_mangle]
pub unsafe extern "C" fn pgas_broadcast(buf: *mut c_void, len: usize) -> c_int {
    ffi(|| {
        let rt = rt()?;
        // A bad argument here still takes part, so no other locale waits.
        let part = non_null(buf, "buf").and_then(|()| length(rt, len, "broadcast"));
        if part.is_err() {
            return rt.broadcast_part(&[], part).map(|_| ());
        }
        // SAFETY: buf holds len bytes (header contract).
        let b = unsafe { bytes_mut(buf, len) };
        let v = rt.broadcast_part(b, Ok(()))?;
        received("broadcast", len, v.len(), "locale 0")?;
        b.copy_from_slice(&v);
        Ok(())
    })
}

// ------------------------------------------------------- symmetric memory

/// Collective: `size` bytes on every locale at the same heap offset
/// everywhere (zeroed); `addrs[l]` is locale l's address.
#[no_mangle]
pub unsafe extern "C" fn pgas_alloc_sym(size: usize, addrs: *mut *mut c_void) -> c_int {
    ffi(|| {
        non_null(addrs, "addrs")?;
        let rt = rt()?;
        let d = rt.alloc_sym::<u8>(size)?;
        for (l, p) in d.parts().iter().enumerate() {
            // SAFETY: addrs has num_locales entries (header contract).
            unsafe { *addrs.add(l) = p.addr() as *mut c_void };
        }
        Ok(())
    })
}

/// The address on `locale` at the same heap offset as `local` here (for
/// symmetric allocations); NULL on bad input (see pgas_last_error).
#[no_mangle]
pub unsafe extern "C" fn pgas_sym_addr(local: *mut c_void, locale: i32) -> *mut c_void {
    address_on(local, locale, |rt, at, l| {
        Ok(rt.comm().symmetric(GlobalAddr::new(rt.here(), at), l)?)
    })
}

/// The address `on` gives for `local` on `locale`, after the checks every
/// such translation needs; NULL with the last error set on bad input.
fn address_on(
    local: *const c_void,
    locale: i32,
    on: impl FnOnce(&Runtime, u64, Locale) -> Result<GlobalAddr>,
) -> *mut c_void {
    ffi_ptr(|| {
        let rt = rt()?;
        let l = self::locale(rt, locale)?;
        non_null(local, "local address")?;
        Ok(on(rt, local as u64, l)?.addr as *mut c_void)
    })
}

/// The address on `locale` of the static variable at `local` here (the
/// program's registered `.data`/`.bss`: same offset on every locale, whatever
/// ASLR did); NULL on bad input (see pgas_last_error).
#[no_mangle]
pub extern "C" fn pgas_static_addr(local: *const c_void, locale: i32) -> *mut c_void {
    address_on(local, locale, |rt, at, l| {
        Ok(rt.comm().static_addr(at, l)?)
    })
}
