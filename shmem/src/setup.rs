//! Setup and query: `shmem_init` / `_init_thread` / `_query_thread` /
//! `_finalize` / `_global_exit`, `shmem_my_pe` / `_n_pes`, the library's
//! version and name, `shmem_pcontrol` and the cache calls (documented
//! no-ops: the layer keeps no cache a program must manage).
//!
//! `shmem_init` starts the runtime (`runtime_shim::Builder`; every
//! `PGAS_*` knob applies) with the symmetric heap sized by
//! `SHMEM_SYMMETRIC_SIZE` when set (bytes, or with a K / M / G suffix; the
//! deprecated `SMA_SYMMETRIC_SIZE` too).
//! Any thread may call the library: threads without a transmit context of
//! their own share the unbound ones (docs/embedding.md), so the level
//! provided is `SHMEM_THREAD_MULTIPLE`.

use crate::{die, rt, OrDie, RT};
use std::ffi::{c_char, c_int};

/// `SHMEM_THREAD_MULTIPLE` in the header.
const THREAD_MULTIPLE: c_int = 3;

/// `SHMEM_SYMMETRIC_SIZE` (or its deprecated name `SMA_SYMMETRIC_SIZE`):
/// bytes, with an optional K / M / G / T suffix.
fn symmetric_size(call: &str) -> Option<usize> {
    let (var, v) = ["SHMEM_SYMMETRIC_SIZE", "SMA_SYMMETRIC_SIZE"]
        .into_iter()
        .find_map(|k| std::env::var(k).ok().map(|v| (k, v)))?;
    let t = v.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1usize << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        Some('T') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    match num
        .trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
    {
        Some(n) if n > 0 => Some(n),
        _ => die(
            call,
            format!("{var}={v:?} is not a size (bytes, or a number with K, M, G or T)"),
        ),
    }
}

fn init(call: &str) {
    if RT.get().is_some() {
        return;
    }
    let mut b = runtime_shim::Builder::new();
    if let Some(n) = symmetric_size(call) {
        // The runtime's own areas (teams, locks, scratch) share the heap.
        b = b.heap_size(n.saturating_add(64 << 20));
    }
    let rt = b.init().or_die(call);
    let _ = RT.set(rt);
    crate::teams::init_teams(call);
    crate::active_set::init(call, rt);
}

/// `shmem_init`.
#[no_mangle]
pub extern "C" fn shmem_init() {
    init("shmem_init");
}

/// `shmem_init_thread`: every level up to `SHMEM_THREAD_MULTIPLE` is given.
///
/// # Safety
/// `provided` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn shmem_init_thread(requested: c_int, provided: *mut c_int) -> c_int {
    init("shmem_init_thread");
    let _ = requested;
    if !provided.is_null() {
        // SAFETY: writable (C API contract, checked non-NULL).
        unsafe { provided.write(THREAD_MULTIPLE) };
    }
    0
}

/// `shmem_query_thread`.
///
/// # Safety
/// `provided` is writable.
#[no_mangle]
pub unsafe extern "C" fn shmem_query_thread(provided: *mut c_int) {
    let _ = rt("shmem_query_thread");
    if !provided.is_null() {
        // SAFETY: writable (C API contract, checked non-NULL).
        unsafe { provided.write(THREAD_MULTIPLE) };
    }
}

/// `shmem_finalize`: collective; the job may end after it.
#[no_mangle]
pub extern "C" fn shmem_finalize() {
    let call = "shmem_finalize";
    let rt = rt(call);
    if rt.is_finalized() {
        return;
    }
    rt.finalize().or_die(call);
}

/// `shmem_global_exit`: ends every PE of the job, which exits with
/// `status`.
#[no_mangle]
pub extern "C" fn shmem_global_exit(status: c_int) {
    let call = "shmem_global_exit";
    let rt = rt(call);
    rt.global_exit(
        status,
        &format!("{call}({status}) called by PE {}", rt.here()),
    );
}

/// `shmem_my_pe`.
#[no_mangle]
pub extern "C" fn shmem_my_pe() -> c_int {
    rt("shmem_my_pe").here() as c_int
}

/// `shmem_n_pes`.
#[no_mangle]
pub extern "C" fn shmem_n_pes() -> c_int {
    rt("shmem_n_pes").num_locales() as c_int
}

/// `shmem_info_get_version`: 1.5.
///
/// # Safety
/// The pointers are writable.
#[no_mangle]
pub unsafe extern "C" fn shmem_info_get_version(major: *mut c_int, minor: *mut c_int) {
    // SAFETY: writable (C API contract).
    unsafe {
        major.write(1);
        minor.write(5);
    }
}

/// The vendor string (also `SHMEM_VENDOR_STRING`).
const NAME: &[u8] = b"pgas-comm OpenSHMEM\0";

/// `shmem_info_get_name`: copies the vendor string (at most
/// `SHMEM_MAX_NAME_LEN` bytes with its NUL).
///
/// # Safety
/// `name` has room for `SHMEM_MAX_NAME_LEN` (256) bytes.
#[no_mangle]
pub unsafe extern "C" fn shmem_info_get_name(name: *mut c_char) {
    // SAFETY: room for SHMEM_MAX_NAME_LEN bytes (C API contract) > NAME.len().
    unsafe { std::ptr::copy_nonoverlapping(NAME.as_ptr() as *const c_char, name, NAME.len()) };
}

/// `shmem_pcontrol`: no profiling levels here.
#[no_mangle]
pub extern "C" fn shmem_pcontrol(level: c_int) {
    let _ = level;
}

/// `shmem_barrier_all`: every PE's operations complete and visible, then a
/// barrier (a boundary of the MCM).
#[no_mangle]
pub extern "C" fn shmem_barrier_all() {
    let call = "shmem_barrier_all";
    let rt = rt(call);
    rt.quiet().or_die(call);
    rt.barrier().or_die(call);
}

/// `shmem_sync_all`: a barrier of the world team.
#[no_mangle]
pub extern "C" fn shmem_sync_all() {
    let call = "shmem_sync_all";
    rt(call).barrier().or_die(call);
}
