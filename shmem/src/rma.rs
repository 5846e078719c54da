//! Remote memory access: put / get (typed, sized, `mem`), `p` / `g`,
//! strided `iput` / `iget`, the non-blocking `_nbi` forms and every
//! context variant.
//!
//! All of them are byte copies through `Runtime::put` / `Runtime::get` on
//! the calling thread's transmit context (the mapped path's copy where the
//! target PE is co-located). The `_nbi` forms are issued blocking: the
//! specification lets them complete any time before `shmem_quiet`, and a
//! blocking PUT is complete when it returns. Contexts: see `teams.rs`.

use crate::sync::CtxScope;
use crate::{rt, sym_ptr, OrDie};
use std::ffi::{c_int, c_void};

/// PUT of `nbytes` bytes from `src` (local) to `dest` on `pe`.
#[inline]
pub(crate) fn put_bytes(
    call: &str,
    dest: *mut c_void,
    src: *const c_void,
    nbytes: usize,
    pe: c_int,
) {
    let rt = rt(call);
    if nbytes == 0 {
        // A zero-length transfer is a no-op (its addresses may be NULL).
        crate::check_pe(call, rt, pe);
        return;
    }
    let to = sym_ptr::<u8>(call, rt, dest, pe);
    // SAFETY: the caller passes `nbytes` readable bytes at `src` (the C API's
    // contract for the source buffer); it is only read for this call.
    let data = unsafe { std::slice::from_raw_parts(src as *const u8, nbytes) };
    rt.put(to, data).or_die(call);
}

/// GET of `nbytes` bytes from `src` on `pe` into `dest` (local).
#[inline]
pub(crate) fn get_bytes(
    call: &str,
    dest: *mut c_void,
    src: *const c_void,
    nbytes: usize,
    pe: c_int,
) {
    let rt = rt(call);
    if nbytes == 0 {
        crate::check_pe(call, rt, pe);
        return;
    }
    let from = sym_ptr::<u8>(call, rt, src, pe);
    // SAFETY: the caller passes `nbytes` writable bytes at `dest`, not used by
    // anything else during the call (the C API's contract).
    let buf = unsafe { std::slice::from_raw_parts_mut(dest as *mut u8, nbytes) };
    rt.get(buf, from).or_die(call);
}

/// Strided PUT: `nelems` elements of `size` bytes, every `sst`-th of
/// `src` to every `dst`-th of `dest` on `pe`.
#[allow(clippy::too_many_arguments)]
fn iput_bytes(
    call: &str,
    dest: *mut c_void,
    src: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
    pe: c_int,
) {
    for i in 0..nelems as isize {
        let d = (dest as *mut u8).wrapping_offset(i * dst * size as isize);
        let s = (src as *const u8).wrapping_offset(i * sst * size as isize);
        put_bytes(call, d as *mut c_void, s as *const c_void, size, pe);
    }
}

/// Strided GET (see [`iput_bytes`]).
#[allow(clippy::too_many_arguments)]
fn iget_bytes(
    call: &str,
    dest: *mut c_void,
    src: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
    pe: c_int,
) {
    for i in 0..nelems as isize {
        let d = (dest as *mut u8).wrapping_offset(i * dst * size as isize);
        let s = (src as *const u8).wrapping_offset(i * sst * size as isize);
        get_bytes(call, d as *mut c_void, s as *const c_void, size, pe);
    }
}

/// One RMA family for one element size: blocking, `_nbi`, strided, and
/// their context forms, under the names `shmem_$p`, `shmem_$p_nbi`, `shmem_ctx_$p`, ...
macro_rules! rma_family {
    ($($p:ident, $g:ident => $size:expr);* $(;)?) => { paste::paste! { $(
        #[doc = concat!("`shmem_", stringify!($p), "`")]
        /// # Safety
        /// C API: `source` holds `nelems` elements; `dest` is symmetric.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $p>](dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
            put_bytes(concat!("shmem_", stringify!($p)), dest, source, nelems * $size, pe)
        }
        /// # Safety
        /// As the blocking form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $g>](dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
            get_bytes(concat!("shmem_", stringify!($g)), dest, source, nelems * $size, pe)
        }
        /// # Safety
        /// As the blocking form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $p _nbi>](dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
            put_bytes(concat!("shmem_", stringify!($p), "_nbi"), dest, source, nelems * $size, pe)
        }
        /// # Safety
        /// As the blocking form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $g _nbi>](dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
            get_bytes(concat!("shmem_", stringify!($g), "_nbi"), dest, source, nelems * $size, pe)
        }
        /// # Safety
        /// As the blocking form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $p>](ctx: *mut c_void, dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
            let _scope = CtxScope::enter(concat!("shmem_ctx_", stringify!($p)), ctx);
            put_bytes(concat!("shmem_ctx_", stringify!($p)), dest, source, nelems * $size, pe)
        }
        /// # Safety
        /// As the blocking form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $g>](ctx: *mut c_void, dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
            let _scope = CtxScope::enter(concat!("shmem_ctx_", stringify!($g)), ctx);
            get_bytes(concat!("shmem_ctx_", stringify!($g)), dest, source, nelems * $size, pe)
        }
        /// # Safety
        /// As the blocking form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $p _nbi>](ctx: *mut c_void, dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
            let _scope = CtxScope::enter(concat!("shmem_ctx_", stringify!($p), "_nbi"), ctx);
            put_bytes(concat!("shmem_ctx_", stringify!($p), "_nbi"), dest, source, nelems * $size, pe)
        }
        /// # Safety
        /// As the blocking form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $g _nbi>](ctx: *mut c_void, dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
            let _scope = CtxScope::enter(concat!("shmem_ctx_", stringify!($g), "_nbi"), ctx);
            get_bytes(concat!("shmem_ctx_", stringify!($g), "_nbi"), dest, source, nelems * $size, pe)
        }
    )* } };
}

/// The strided family for one element size (not defined for `mem`).
macro_rules! strided_family {
    ($($p:ident, $g:ident => $size:expr);* $(;)?) => { paste::paste! { $(
        /// # Safety
        /// C API: `source` and `dest` cover `nelems` elements at their strides.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $p>](dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            iput_bytes(concat!("shmem_", stringify!($p)), dest, source, dst, sst, nelems, $size, pe)
        }
        /// # Safety
        /// As `iput`.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $g>](dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            iget_bytes(concat!("shmem_", stringify!($g)), dest, source, dst, sst, nelems, $size, pe)
        }
        /// # Safety
        /// As `iput`.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $p>](ctx: *mut c_void, dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            let _scope = CtxScope::enter(concat!("shmem_ctx_", stringify!($p)), ctx);
            iput_bytes(concat!("shmem_ctx_", stringify!($p)), dest, source, dst, sst, nelems, $size, pe)
        }
        /// # Safety
        /// As `iput`.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $g>](ctx: *mut c_void, dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            let _scope = CtxScope::enter(concat!("shmem_ctx_", stringify!($g)), ctx);
            iget_bytes(concat!("shmem_ctx_", stringify!($g)), dest, source, dst, sst, nelems, $size, pe)
        }
    )* } };
}

/// Typed rows of a type table as `TYPENAME_` families.
macro_rules! typed_rma {
    ($($name:ident => $t:ty),* $(,)?) => { paste::paste! {
        rma_family! { $([<$name _put>], [<$name _get>] => std::mem::size_of::<$t>());* }
        strided_family! { $([<$name _iput>], [<$name _iget>] => std::mem::size_of::<$t>());* }
    } };
}
crate::rma_types!(typed_rma);

rma_family! { putmem, getmem => 1; put8, get8 => 1; put16, get16 => 2; put32, get32 => 4; put64, get64 => 8; put128, get128 => 16 }
strided_family! { iput8, iget8 => 1; iput16, iget16 => 2; iput32, iget32 => 4; iput64, iget64 => 8; iput128, iget128 => 16 }

/// `p` / `g` of one value, typed.
macro_rules! typed_pg {
    ($($name:ident => $t:ty),* $(,)?) => { paste::paste! { $(
        /// # Safety
        /// C API: `dest` is a symmetric object of this type.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $name _p>](dest: *mut c_void, value: $t, pe: c_int) {
            put_bytes(concat!("shmem_", stringify!($name), "_p"), dest, &value as *const $t as *const c_void, std::mem::size_of::<$t>(), pe)
        }
        /// # Safety
        /// C API: `source` is a symmetric object of this type.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $name _g>](source: *const c_void, pe: c_int) -> $t {
            let mut v = <$t>::default();
            get_bytes(concat!("shmem_", stringify!($name), "_g"), &mut v as *mut $t as *mut c_void, source, std::mem::size_of::<$t>(), pe);
            v
        }
        /// # Safety
        /// As the context-free form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $name _p>](ctx: *mut c_void, dest: *mut c_void, value: $t, pe: c_int) {
            let _scope = CtxScope::enter(concat!("shmem_ctx_", stringify!($name), "_p"), ctx);
            put_bytes(concat!("shmem_ctx_", stringify!($name), "_p"), dest, &value as *const $t as *const c_void, std::mem::size_of::<$t>(), pe)
        }
        /// # Safety
        /// As the context-free form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $name _g>](ctx: *mut c_void, source: *const c_void, pe: c_int) -> $t {
            let _scope = CtxScope::enter(concat!("shmem_ctx_", stringify!($name), "_g"), ctx);
            let mut v = <$t>::default();
            get_bytes(concat!("shmem_ctx_", stringify!($name), "_g"), &mut v as *mut $t as *mut c_void, source, std::mem::size_of::<$t>(), pe);
            v
        }
    )* } };
}
crate::rma_value_types!(typed_pg);
