//! The symmetric heap: `shmem_malloc` / `calloc` / `align` / `realloc` /
//! `free` / `malloc_with_hints`, and `shmem_ptr` / `shmem_addr_accessible`
//! / `shmem_pe_accessible`.
//!
//! An allocation is `Runtime::alloc_sym_bytes` (collective: the PEs agree
//! on an offset free on all of them, so a PE finds a peer's copy at the
//! same offset of the peer's heap). Each entry point ends with a barrier,
//! as the specification requires. `shmem_ptr` is the mapped path: a
//! co-located PE's heap and static data are mapped into this process, so
//! the pointer is a real one; a PE across the fabric gives NULL.

use crate::{check_pe, die, rt, OrDie};
use parking_lot::Mutex;
use runtime_shim::{Dist, GlobalAddr};
use std::collections::HashMap;
use std::ffi::{c_int, c_void};

/// This PE's live symmetric allocations, by local address.
static ALLOCS: Mutex<Option<HashMap<u64, Dist<u8>>>> = Mutex::new(None);

fn alloc(call: &str, size: usize, align: usize) -> *mut c_void {
    let rt = rt(call);
    if size == 0 {
        rt.barrier().or_die(call);
        return std::ptr::null_mut();
    }
    let d = match rt.alloc_sym_bytes(size, align) {
        Ok(d) => d,
        Err(e) if is_out_of_memory(&e) => die(call, heap_exhausted(size, &e)),
        Err(e) => die(call, e),
    };
    let p = d.local().addr();
    ALLOCS.lock().get_or_insert_with(HashMap::new).insert(p, d);
    p as *mut c_void
}

fn is_out_of_memory(e: &runtime_shim::Error) -> bool {
    matches!(e, runtime_shim::Error::Comm(c) if c.kind() == runtime_shim::CommErrorKind::OutOfMemory)
}

/// The heap-exhausted message in an OpenSHMEM user's words: the symmetric
/// heap is sized by `SHMEM_SYMMETRIC_SIZE` (pgas-comm's own
/// `PGAS_HEAP_SIZE` sizes the same heap, runtime areas included).
fn heap_exhausted(size: usize, e: &runtime_shim::Error) -> String {
    let now = ["SHMEM_SYMMETRIC_SIZE", "SMA_SYMMETRIC_SIZE"]
        .into_iter()
        .find_map(|k| std::env::var(k).ok().map(|v| format!("{k}={v}")))
        .unwrap_or_else(|| "SHMEM_SYMMETRIC_SIZE is not set".to_string());
    format!(
        "the symmetric heap is exhausted: cannot allocate {size} bytes on every PE ({now}); \
         set SHMEM_SYMMETRIC_SIZE to a larger size, e.g. SHMEM_SYMMETRIC_SIZE=2G [{e}]"
    )
}

/// `shmem_malloc`.
#[no_mangle]
pub extern "C" fn shmem_malloc(size: usize) -> *mut c_void {
    alloc("shmem_malloc", size, 64)
}

/// `shmem_malloc_with_hints`: hints change nothing here.
#[no_mangle]
pub extern "C" fn shmem_malloc_with_hints(size: usize, hints: std::ffi::c_long) -> *mut c_void {
    let _ = hints;
    alloc("shmem_malloc_with_hints", size, 64)
}

/// `shmem_calloc`: zeroed (every allocation is).
#[no_mangle]
pub extern "C" fn shmem_calloc(count: usize, size: usize) -> *mut c_void {
    let call = "shmem_calloc";
    match count.checked_mul(size) {
        Some(n) => alloc(call, n, 64),
        None => die(call, format!("{count} x {size} bytes overflows")),
    }
}

/// `shmem_align`.
#[no_mangle]
pub extern "C" fn shmem_align(alignment: usize, size: usize) -> *mut c_void {
    let call = "shmem_align";
    if !alignment.is_power_of_two() {
        die(call, format!("alignment {alignment} is not a power of two"));
    }
    alloc(call, size, alignment)
}

/// `shmem_free`.
///
/// # Safety
/// `ptr` is NULL or came from this library's allocation on every PE.
#[no_mangle]
pub unsafe extern "C" fn shmem_free(ptr: *mut c_void) {
    let call = "shmem_free";
    let rt = rt(call);
    if ptr.is_null() {
        rt.barrier().or_die(call);
        return;
    }
    let d = ALLOCS
        .lock()
        .get_or_insert_with(HashMap::new)
        .remove(&(ptr as u64));
    match d {
        Some(d) => {
            // Everybody is done with the object before anybody reuses it.
            rt.barrier().or_die(call);
            rt.free(d.local()).or_die(call);
            rt.barrier().or_die(call);
        }
        None => die(call, format!("{ptr:p} is not a live symmetric allocation")),
    }
}

/// `shmem_realloc`: a new object with the old contents (up to the smaller
/// size), the old one freed.
///
/// # Safety
/// As `shmem_free`.
#[no_mangle]
pub unsafe extern "C" fn shmem_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    let call = "shmem_realloc";
    if ptr.is_null() {
        return alloc(call, size, 64);
    }
    let old = match ALLOCS
        .lock()
        .get_or_insert_with(HashMap::new)
        .get(&(ptr as u64))
    {
        Some(d) => d.len(),
        None => die(call, format!("{ptr:p} is not a live symmetric allocation")),
    };
    if size == 0 {
        // SAFETY: same contract.
        unsafe { shmem_free(ptr) };
        return std::ptr::null_mut();
    }
    let new = alloc(call, size, 64);
    // SAFETY: both are live allocations of this heap of at least the copied length.
    unsafe { std::ptr::copy_nonoverlapping(ptr as *const u8, new as *mut u8, old.min(size)) };
    // SAFETY: same contract.
    unsafe { shmem_free(ptr) };
    new
}

/// `shmem_ptr`: a load / store pointer to `dest` on `pe`, or NULL.
///
/// # Safety
/// `dest` is a symmetric address.
#[no_mangle]
pub unsafe extern "C" fn shmem_ptr(dest: *const c_void, pe: c_int) -> *mut c_void {
    let call = "shmem_ptr";
    let rt = rt(call);
    let pe = check_pe(call, rt, pe);
    if pe == rt.here() {
        return dest as *mut c_void;
    }
    let comm = rt.comm();
    let a = dest as u64;
    let there = comm
        .symmetric(GlobalAddr::new(rt.here(), a), pe)
        .or_else(|_| comm.static_addr(a, pe));
    match there {
        Ok(g) => comm
            .mapped_ptr(g, 1)
            .map_or(std::ptr::null_mut(), |p| p as *mut c_void),
        Err(_) => std::ptr::null_mut(),
    }
}

/// `shmem_addr_accessible`: 1 if `addr` is symmetric and `pe` reachable.
#[no_mangle]
pub extern "C" fn shmem_addr_accessible(addr: *const c_void, pe: c_int) -> c_int {
    let rt = rt("shmem_addr_accessible");
    if pe < 0 || pe as usize >= rt.num_locales() {
        return 0;
    }
    let comm = rt.comm();
    let a = addr as u64;
    (comm
        .symmetric(GlobalAddr::new(rt.here(), a), pe as usize)
        .is_ok()
        || comm.static_addr(a, pe as usize).is_ok()) as c_int
}

/// `shmem_pe_accessible`: 1 for every PE of the job.
#[no_mangle]
pub extern "C" fn shmem_pe_accessible(pe: c_int) -> c_int {
    let rt = rt("shmem_pe_accessible");
    (pe >= 0 && (pe as usize) < rt.num_locales()) as c_int
}
