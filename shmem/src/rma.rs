//! Remote memory access: put / get (typed, sized, `mem`), `p` / `g`,
//! strided `iput` / `iget`, the non-blocking `_nbi` forms and every
//! context variant.
//!
//! All of them are byte copies through `Runtime::put` / `Runtime::get` on
//! the calling thread's transmit context (the mapped path's copy where the
//! target PE is co-located); `iput` / `iget` through the runtime's strided
//! transfers (`Runtime::put_strided` / `get_strided`). The `_nbi` forms are
//! the comm layer's non-blocking PUT and GET on the caller's own buffers (as the runtime's C
//! ABI posts them, `pgas_put_nb`): they return once posted, and their
//! handles wait in a per-thread list, tagged with the context they were
//! issued on, until `shmem_quiet` / `shmem_ctx_quiet` completes them
//! ([`complete_nbi`]; the specification forbids touching the buffers
//! before). A copy on the mapped path is complete at once. Contexts: see
//! `sync.rs`.

use crate::CtxScope;
use crate::{rt, sym, OrDie};
use runtime_shim::{GlobalAddr, GlobalPtr, NbHandle, Runtime};
use std::cell::RefCell;
use std::ffi::{c_int, c_void};

thread_local! {
    /// This thread's `_nbi` operations not yet completed by a quiet: the
    /// context they were issued on (`current_ctx`) and the handle.
    static NBI: RefCell<Vec<(usize, NbHandle<'static>)>> = const { RefCell::new(Vec::new()) };
}

/// Past this many pending `_nbi` handles a thread drops the completed ones
/// (a program may issue many between quiets, or rely on barriers).
const NBI_REAP_AT: usize = 1024;

pub(crate) fn remember(h: NbHandle<'static>) {
    let ctx = crate::current_ctx();
    NBI.with(|l| {
        let mut l = l.borrow_mut();
        if l.len() >= NBI_REAP_AT {
            l.retain_mut(|(_, h)| !h.test().unwrap_or(true));
        }
        l.push((ctx, h));
    });
}

/// Completes this thread's `_nbi` operations issued on context `ctx`, or
/// on every context (`None`: `shmem_quiet`, the default context's quiet,
/// completes them all). A failed one ends the job naming `call`.
pub(crate) fn complete_nbi(call: &str, ctx: Option<usize>) {
    let mine: Vec<_> = NBI.with(|l| {
        let mut l = l.borrow_mut();
        match ctx {
            None => std::mem::take(&mut *l),
            Some(c) => {
                let (mine, rest) = std::mem::take(&mut *l)
                    .into_iter()
                    .partition(|(k, _)| *k == c);
                *l = rest;
                mine
            }
        }
    });
    for (_, h) in mine {
        h.wait().or_die(call);
    }
}

/// The runtime and `addr` on `pe`, or `None` for a zero-length transfer: a
/// no-op whose addresses may be NULL (only the PE is checked).
#[inline]
fn target(
    call: &str,
    addr: *const c_void,
    nbytes: usize,
    pe: c_int,
) -> Option<(&'static Runtime, GlobalAddr)> {
    let rt = rt(call);
    if nbytes == 0 {
        crate::check_pe(call, rt, pe);
        return None;
    }
    Some((rt, sym(call, rt, addr, pe)))
}

/// Non-blocking PUT of `nbytes` bytes from `src` to `dest` on `pe`.
fn put_nbi_bytes(call: &str, dest: *mut c_void, src: *const c_void, nbytes: usize, pe: c_int) {
    let Some((rt, to)) = target(call, dest, nbytes, pe) else {
        return;
    };
    // SAFETY: the caller passes `nbytes` readable bytes at `src` and leaves
    // them unchanged until the next quiet (the C API's contract for _nbi),
    // which waits for the handle before returning.
    let data: &'static [u8] = unsafe { std::slice::from_raw_parts(src as *const u8, nbytes) };
    // SAFETY: the handle is kept until a quiet waits for it (or dropped,
    // which waits), never leaked while the buffer may be reused.
    let h = unsafe { rt.comm().put_nb(to, data) }.or_die(call);
    remember(h);
}

/// Non-blocking GET of `nbytes` bytes at `src` on `pe` into `dest`.
fn get_nbi_bytes(call: &str, dest: *mut c_void, src: *const c_void, nbytes: usize, pe: c_int) {
    let Some((rt, from)) = target(call, src, nbytes, pe) else {
        return;
    };
    // SAFETY: `dest` has `nbytes` writable bytes nobody touches until the
    // next quiet (the C API's contract for _nbi), which waits for the handle.
    let buf: &'static mut [u8] = unsafe { std::slice::from_raw_parts_mut(dest as *mut u8, nbytes) };
    // SAFETY: as in put_nbi_bytes.
    let h = unsafe { rt.comm().get_nb(buf, from) }.or_die(call);
    remember(h);
}

/// PUT of `nbytes` bytes from `src` (local) to `dest` on `pe`.
#[inline]
fn put_bytes(call: &str, dest: *mut c_void, src: *const c_void, nbytes: usize, pe: c_int) {
    let Some((rt, to)) = target(call, dest, nbytes, pe) else {
        return;
    };
    // SAFETY: the caller passes `nbytes` readable bytes at `src` (the C API's
    // contract for the source buffer); it is only read for this call.
    let data = unsafe { std::slice::from_raw_parts(src as *const u8, nbytes) };
    rt.put(GlobalPtr::from_addr(to), data).or_die(call);
}

/// GET of `nbytes` bytes from `src` on `pe` into `dest` (local).
#[inline]
fn get_bytes(call: &str, dest: *mut c_void, src: *const c_void, nbytes: usize, pe: c_int) {
    let Some((rt, from)) = target(call, src, nbytes, pe) else {
        return;
    };
    // SAFETY: the caller passes `nbytes` writable bytes at `dest`, not used by
    // anything else during the call (the C API's contract).
    let buf = unsafe { std::slice::from_raw_parts_mut(dest as *mut u8, nbytes) };
    rt.get(buf, GlobalPtr::from_addr(from)).or_die(call);
}

/// Which way a strided transfer goes (`iput` or `iget`).
#[derive(Clone, Copy)]
enum Dir {
    Put,
    Get,
}

/// Strided PUT or GET (`iput` / `iget`): `nelems` elements of `size`
/// bytes, every `sst`-th of `src` to every `dst`-th of `dest`, with `pe`
/// the remote side. Through the runtime's strided transfers (each element
/// a chunk, a window of them in flight on the fabric, a copy each on the
/// mapped path), so one call pays one round of completions rather than one
/// blocking PUT or GET per element. A negative stride (an array walked
/// backwards, which the runtime's descriptions do not express) goes element
/// by element.
#[allow(clippy::too_many_arguments)]
fn strided(
    dir: Dir,
    call: &str,
    dest: *mut c_void,
    src: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
    pe: c_int,
) {
    let bytes = |stride: isize| usize::try_from(stride).ok()?.checked_mul(size);
    let (Some(dst_b), Some(sst_b)) = (bytes(dst), bytes(sst)) else {
        // A negative stride: a blocking PUT or GET per element.
        let copy: fn(&str, *mut c_void, *const c_void, usize, c_int) = match dir {
            Dir::Put => put_bytes,
            Dir::Get => get_bytes,
        };
        for i in 0..nelems as isize {
            let d = (dest as *mut u8).wrapping_offset(i * dst * size as isize);
            let s = (src as *const u8).wrapping_offset(i * sst * size as isize);
            copy(call, d as *mut c_void, s as *const c_void, size, pe);
        }
        return;
    };
    // One chunk of `size` bytes per element, `nelems` of them.
    let count = [size, nelems];
    let (local_stride, remote_stride) = match dir {
        Dir::Put => (sst_b, dst_b),
        Dir::Get => (dst_b, sst_b),
    };
    let span = |stride: usize| runtime_shim::strided::extent(1, &count, &[stride]).or_die(call);
    let (local_len, remote_len) = (span(local_stride), span(remote_stride));
    match dir {
        Dir::Put => {
            let Some((rt, to)) = target(call, dest, remote_len, pe) else {
                return;
            };
            // SAFETY: the caller passes `source` covering `nelems` elements
            // at stride `sst` (the C API's contract), i.e. `local_len` bytes
            // from `src`; only read for this call.
            let local = unsafe { std::slice::from_raw_parts(src as *const u8, local_len) };
            rt.put_strided(
                GlobalPtr::<u8>::from_addr(to),
                &[remote_stride],
                local,
                &[local_stride],
                &count,
            )
            .or_die(call);
        }
        Dir::Get => {
            let Some((rt, from)) = target(call, src, remote_len, pe) else {
                return;
            };
            // SAFETY: the caller passes `dest` covering `nelems` elements at
            // stride `dst`, i.e. `local_len` writable bytes from `dest`, not
            // used by anything else during the call (the C API's contract).
            let local = unsafe { std::slice::from_raw_parts_mut(dest as *mut u8, local_len) };
            rt.get_strided(
                local,
                &[local_stride],
                GlobalPtr::<u8>::from_addr(from),
                &[remote_stride],
                &count,
            )
            .or_die(call);
        }
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
            put_nbi_bytes(concat!("shmem_", stringify!($p), "_nbi"), dest, source, nelems * $size, pe)
        }
        /// # Safety
        /// As the blocking form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $g _nbi>](dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
            get_nbi_bytes(concat!("shmem_", stringify!($g), "_nbi"), dest, source, nelems * $size, pe)
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
            put_nbi_bytes(concat!("shmem_ctx_", stringify!($p), "_nbi"), dest, source, nelems * $size, pe)
        }
        /// # Safety
        /// As the blocking form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $g _nbi>](ctx: *mut c_void, dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
            let _scope = CtxScope::enter(concat!("shmem_ctx_", stringify!($g), "_nbi"), ctx);
            get_nbi_bytes(concat!("shmem_ctx_", stringify!($g), "_nbi"), dest, source, nelems * $size, pe)
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
            strided(Dir::Put, concat!("shmem_", stringify!($p)), dest, source, dst, sst, nelems, $size, pe)
        }
        /// # Safety
        /// As `iput`.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $g>](dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            strided(Dir::Get, concat!("shmem_", stringify!($g)), dest, source, dst, sst, nelems, $size, pe)
        }
        /// # Safety
        /// As `iput`.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $p>](ctx: *mut c_void, dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            let _scope = CtxScope::enter(concat!("shmem_ctx_", stringify!($p)), ctx);
            strided(Dir::Put, concat!("shmem_ctx_", stringify!($p)), dest, source, dst, sst, nelems, $size, pe)
        }
        /// # Safety
        /// As `iput`.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $g>](ctx: *mut c_void, dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            let _scope = CtxScope::enter(concat!("shmem_ctx_", stringify!($g)), ctx);
            strided(Dir::Get, concat!("shmem_ctx_", stringify!($g)), dest, source, dst, sst, nelems, $size, pe)
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
