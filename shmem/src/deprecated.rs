//! The deprecated API the OpenSHMEM 1.5 specification still lists (its
//! "Deprecated API" annex), as people still write it: the 1.3 atomic
//! names (`shmem_int_inc`, `shmem_longlong_fadd`, `shmem_long_cswap`, ...,
//! and `shmem_swap`), the untyped `shmem_wait` / `shmem_wait_until`,
//! `start_pes`, `_my_pe`, `_num_pes`, `shmalloc` / `shfree` / `shrealloc` /
//! `shmemalign`. The active-set collectives are in `coll.rs` (on
//! `active_set.rs`), the cache calls in `setup.rs`, the typed
//! `shmem_TYPE_wait` in `sync.rs`.
//!
//! Each is the 1.5 call it was renamed to, so it takes the same route. With
//! `PGAS_VERBOSE` set, the first call of each deprecated name in the job
//! prints one line naming it and its replacement ([`note`]); by default
//! nothing is printed.

use crate::amo::word;
use crate::{rt, OrDie};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::ffi::{c_int, c_long, c_void};
use std::sync::OnceLock;

/// Whether `PGAS_VERBOSE` asks for the deprecation notes (read once).
static VERBOSE: OnceLock<bool> = OnceLock::new();
/// The names this PE has already noted (or found noted on PE 0).
static NOTED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

/// What `call` became in 1.5 (for the note), or a generic hint.
fn replacement(call: &str) -> String {
    let suffixes = [
        ("_cswap", "_atomic_compare_swap"),
        ("_finc", "_atomic_fetch_inc"),
        ("_fadd", "_atomic_fetch_add"),
        ("_fetch", "_atomic_fetch"),
        ("_swap", "_atomic_swap"),
        ("_inc", "_atomic_inc"),
        ("_add", "_atomic_add"),
        ("_set", "_atomic_set"),
    ];
    if call == "shmem_swap" {
        return "shmem_long_atomic_swap".into();
    }
    for (old, new) in suffixes {
        if let Some(stem) = call.strip_suffix(old) {
            if stem.starts_with("shmem_") {
                return format!("{stem}{new}");
            }
        }
    }
    match call {
        "start_pes" => "shmem_init".into(),
        "_my_pe" => "shmem_my_pe".into(),
        "_num_pes" => "shmem_n_pes".into(),
        "shmalloc" => "shmem_malloc".into(),
        "shfree" => "shmem_free".into(),
        "shrealloc" => "shmem_realloc".into(),
        "shmemalign" => "shmem_align".into(),
        "shmem_wait" | "shmem_wait_until" => "shmem_long_wait_until".into(),
        c if c.ends_with("_to_all") => "the team reductions (shmem_TYPE_OP_reduce)".into(),
        c if c.contains("cache") || c.starts_with("shmem_udcflush") => {
            "nothing (no cache to manage)".into()
        }
        _ => "its team form (shmem_team_split_strided and the team collectives)".into(),
    }
}

/// Notes a deprecated call: with `PGAS_VERBOSE` set, the first call of
/// `call` in the job prints one line (PE 0 keeps a bitmap of the names
/// noted, set by an atomic fetch-or, so other PEs stay quiet; two names
/// sharing a bit share one note). Without it: one load and a branch.
#[inline]
pub(crate) fn note(call: &'static str) {
    let verbose = match VERBOSE.get() {
        Some(v) => *v,
        None => match crate::RT.get() {
            Some(rt) => *VERBOSE.get_or_init(|| rt.comm().config().verbose > 0),
            None => false, // before shmem_init: the call itself says so
        },
    };
    if verbose {
        note_slow(call);
    }
}

#[cold]
fn note_slow(call: &'static str) {
    if !NOTED.lock().get_or_insert_with(HashSet::new).insert(call) {
        return;
    }
    // FNV-1a of the name: its bit in PE 0's bitmap.
    let h = call.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    let bits = (crate::active_set::NOTE_WORDS * 64) as u64;
    let bit = h % bits;
    let rt = rt(call);
    let w = rt.atomic(crate::active_set::note_word(call, (bit / 64) as usize));
    let old = w.fetch_or(1 << (bit % 64)).or_die(call);
    if old & (1 << (bit % 64)) == 0 {
        eprintln!(
            "pgas-shmem: {call} (PE {}) is deprecated in OpenSHMEM 1.5; use {}",
            rt.here(),
            replacement(call)
        );
    }
}

/// One deprecated name over its 1.5 body:
/// `dep! { call; name(args) -> r { body } ... }` (`call` names the call in
/// the bodies).
macro_rules! dep {
    ($call:ident; $($name:ident ($($a:ident : $at:ty),*) $(-> $r:ty)? $body:block)*) => { $(
        #[doc = concat!("`", stringify!($name), "` (deprecated).")]
        /// # Safety
        /// C API: as the 1.5 call it was renamed to.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $at),*) $(-> $r)? {
            let $call = stringify!($name);
            note($call);
            $body
        }
    )* };
}

/// `start_pes` (deprecated): `shmem_init` (the argument is ignored, as
/// the specification says), then the note.
#[no_mangle]
pub extern "C" fn start_pes(npes: c_int) {
    let _ = npes;
    crate::setup::shmem_init();
    note("start_pes");
}

/// The 1.3 names of table 6 (standard AMO types).
macro_rules! std_amo_13 {
    ($($name:ident => $t:ty),* $(,)?) => { paste::paste! { $(
        dep! { call;
            [<shmem_ $name _cswap>](dest: *mut c_void, cond: $t, value: $t, pe: c_int) -> $t {
                match word::<$t>(call, dest, pe).compare_exchange(cond, value).or_die(call) {
                    Ok(old) | Err(old) => old,
                }
            }
            [<shmem_ $name _finc>](dest: *mut c_void, pe: c_int) -> $t {
                word::<$t>(call, dest, pe).fetch_add(1 as $t).or_die(call)
            }
            [<shmem_ $name _inc>](dest: *mut c_void, pe: c_int) {
                word::<$t>(call, dest, pe).add(1 as $t).or_die(call)
            }
            [<shmem_ $name _fadd>](dest: *mut c_void, value: $t, pe: c_int) -> $t {
                word::<$t>(call, dest, pe).fetch_add(value).or_die(call)
            }
            [<shmem_ $name _add>](dest: *mut c_void, value: $t, pe: c_int) {
                word::<$t>(call, dest, pe).add(value).or_die(call)
            }
        }
    )* } };
}
crate::amo_std_types!(std_amo_13);

/// The 1.3 names of table 7 (extended AMO types).
macro_rules! ext_amo_13 {
    ($($name:ident => $t:ty),* $(,)?) => { paste::paste! { $(
        dep! { call;
            [<shmem_ $name _fetch>](source: *const c_void, pe: c_int) -> $t {
                word::<$t>(call, source, pe).read().or_die(call)
            }
            [<shmem_ $name _set>](dest: *mut c_void, value: $t, pe: c_int) {
                word::<$t>(call, dest, pe).write(value).or_die(call)
            }
            [<shmem_ $name _swap>](dest: *mut c_void, value: $t, pe: c_int) -> $t {
                word::<$t>(call, dest, pe).exchange(value).or_die(call)
            }
        }
    )* } };
}
crate::amo_ext_types!(ext_amo_13);

dep! { call;
    shmem_swap(dest: *mut c_void, value: c_long, pe: c_int) -> c_long {
        word::<i64>(call, dest, pe).exchange(value).or_die(call)
    }
    shmem_wait(ivar: *mut c_long, value: c_long) {
        // SAFETY: same contract.
        unsafe { crate::sync::shmem_long_wait(ivar, value) }
    }
    shmem_wait_until(ivar: *mut c_long, cmp: c_int, value: c_long) {
        // SAFETY: same contract.
        unsafe { crate::sync::shmem_long_wait_until(ivar, cmp, value) }
    }
    _my_pe() -> c_int {
        crate::setup::shmem_my_pe()
    }
    _num_pes() -> c_int {
        crate::setup::shmem_n_pes()
    }
    shmalloc(size: usize) -> *mut c_void {
        crate::mem::shmem_malloc(size)
    }
    shfree(ptr: *mut c_void) {
        // SAFETY: same contract.
        unsafe { crate::mem::shmem_free(ptr) }
    }
    shrealloc(ptr: *mut c_void, size: usize) -> *mut c_void {
        // SAFETY: same contract.
        unsafe { crate::mem::shmem_realloc(ptr, size) }
    }
    shmemalign(alignment: usize, size: usize) -> *mut c_void {
        crate::mem::shmem_align(alignment, size)
    }
}

/// The cache-management calls of the specification: no-ops (documented
/// so; nothing is cached that a program must flush).
macro_rules! cache_noops {
    ($($f:ident ($($a:ident),*));* $(;)?) => { $(
        #[doc = concat!("`", stringify!($f), "` (deprecated): a no-op.")]
        #[no_mangle]
        pub extern "C" fn $f($($a: *mut std::ffi::c_void),*) {
            $(let _ = $a;)*
            note(stringify!($f));
        }
    )* };
}
cache_noops! {
    shmem_clear_cache_inv(); shmem_set_cache_inv(); shmem_udcflush();
    shmem_clear_cache_line_inv(dest); shmem_set_cache_line_inv(dest); shmem_udcflush_line(dest);
}
