//! # pgas-shmem: OpenSHMEM 1.5 over pgas-comm
//!
//! Exists so that programs written for OpenSHMEM, the lingua franca of
//! one-sided PGAS programming, run unmodified on pgas-comm and its MCM
//! modes: `libpgas_shmem.so` / `.a` export the C API declared in
//! `include/shmem.h`; `bin/oshcc` compiles and links against them and
//! `bin/oshrun` launches through `pgasrun` (under mpirun or srun the same
//! library bootstraps through PMIx). How to use it and how `shmem_fence` /
//! `shmem_quiet` map onto the modes: `docs/openshmem.md`.
//!
//! Everything goes through `runtime-shim`'s Rust API: a PE is a locale, the
//! symmetric heap is the registered heap (`Runtime::alloc_sym_bytes`: one
//! offset on every locale), global and static C data are the executable's
//! registered statics, teams and collectives are `runtime_shim::Team`,
//! locks are its MCS locks, `wait_until` its SC reads. The typed families
//! (`shmem_int_put`, `shmem_ctx_ulong_atomic_fetch_xor`, ...) are generated
//! by macros from the type tables in [`types`], the same tables the header
//! spells out.
//!
//! Misuse that is cheap to check (a PE out of range, an address that is not
//! symmetric, a call before `shmem_init`) ends the job with a message
//! naming the call and the value (`die`), never a silent wrong answer.

mod active_set;
mod amo;
mod coll;
mod deprecated;
mod mem;
#[cfg(pgas_shmem_profiling)]
mod profiling;
mod rma;
mod setup;
mod sync;
mod teams;
pub mod types;

use runtime_shim::{GlobalAddr, GlobalPtr, Runtime};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Checks a context handle: `SHMEM_CTX_INVALID` ends the job naming the
/// call.
#[inline]
pub(crate) fn check_ctx(call: &str, ctx: *mut c_void) {
    if ctx.is_null() {
        die(call, "the context is SHMEM_CTX_INVALID");
    }
}

/// One operation as `shmem_X` and `shmem_ctx_X` (the context form checks
/// the context and takes the same route).
macro_rules! with_ctx {
    ($call:ident; $fname:ident ($($a:ident : $at:ty),*) $(-> $r:ty)? $body:block) => { paste::paste! {
        #[doc = concat!("`shmem_", stringify!($fname), "`")]
        /// # Safety
        /// C API: the addresses are symmetric objects of the type (and a
        /// `fetch` pointer is writable).
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $fname>]($($a: $at),*) $(-> $r)? {
            let $call = concat!("shmem_", stringify!($fname));
            $body
        }
        #[doc = concat!("`shmem_ctx_", stringify!($fname), "`")]
        /// # Safety
        /// As the context-free form.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ctx_ $fname>](ctx: *mut std::ffi::c_void, $($a: $at),*) $(-> $r)? {
            let $call = concat!("shmem_ctx_", stringify!($fname));
            let _scope = $crate::CtxScope::enter($call, ctx);
            $body
        }
    } };
}
pub(crate) use with_ctx;

/// The runtime, once `shmem_init` has run.
static RT: OnceLock<&'static Runtime> = OnceLock::new();

/// Ends the job with a message naming the OpenSHMEM call that failed.
/// Before init (no job to tell) the process exits with status 1.
#[cold]
pub(crate) fn die(call: &str, what: impl std::fmt::Display) -> ! {
    let msg = format!("{call}: {what}");
    match RT.get() {
        Some(rt) if !rt.is_finalized() => rt.abort(&msg),
        _ => {
            eprintln!("pgas-shmem: {msg}");
            std::process::exit(1)
        }
    }
}

/// The runtime for `call`; a call before `shmem_init` (or after
/// `shmem_finalize`) ends the program naming it.
#[inline]
pub(crate) fn rt(call: &str) -> &'static Runtime {
    match RT.get() {
        Some(rt) => rt,
        None => die(call, "called before shmem_init"),
    }
}

/// The value of a runtime result, or the end of the job naming `call`.
pub(crate) trait OrDie<T> {
    fn or_die(self, call: &str) -> T;
}

impl<T, E: std::fmt::Display> OrDie<T> for Result<T, E> {
    #[inline]
    fn or_die(self, call: &str) -> T {
        match self {
            Ok(v) => v,
            Err(e) => die(call, e),
        }
    }
}

/// A PE number checked against the job (numbered by the current
/// context's team: [`team_pe`]).
#[inline]
pub(crate) fn check_pe(call: &str, rt: &Runtime, pe: i32) -> usize {
    let pe = team_pe(call, pe);
    if pe < 0 || pe as usize >= rt.num_locales() {
        pe_out_of_range(call, pe, rt.num_locales());
    }
    pe as usize
}

/// Ends the job: `pe` is not a PE of the job (out of line: the calls that
/// check a PE carry none of the message's formatting).
#[cold]
#[inline(never)]
fn pe_out_of_range(call: &str, pe: i32, num_pes: usize) -> ! {
    die(
        call,
        format!("PE {pe} is out of range (the job has PEs 0..{num_pes})"),
    )
}

/// Where the symmetric object at `addr` (this PE's address of it) lives on
/// `pe`: the same offset in `pe`'s symmetric heap, or in its static data.
/// Anything else is not symmetric and ends the job naming the call.
#[inline]
pub(crate) fn sym(call: &str, rt: &Runtime, addr: *const c_void, pe: i32) -> GlobalAddr {
    let pe = check_pe(call, rt, pe);
    let a = addr as u64;
    let comm = rt.comm();
    if let Some(g) = comm.heap_addr_on(a, pe) {
        return g;
    }
    match comm.static_addr(a, pe) {
        Ok(g) => g,
        Err(_) => not_symmetric(call, a),
    }
}

/// Ends the job: `a` is neither in the symmetric heap nor in the program's
/// static data.
#[cold]
#[inline(never)]
fn not_symmetric(call: &str, a: u64) -> ! {
    die(
        call,
        format!(
            "address {a:#x} is not symmetric: neither in the symmetric heap nor in the \
             program's global or static data"
        ),
    )
}

/// [`sym`] as a typed global pointer.
#[inline]
pub(crate) fn sym_ptr<T: runtime_shim::Pod>(
    call: &str,
    rt: &Runtime,
    addr: *const c_void,
    pe: i32,
) -> GlobalPtr<T> {
    GlobalPtr::from_addr(sym(call, rt, addr, pe))
}

/// This PE's own copy of a symmetric object (for waits and local reads).
#[inline]
pub(crate) fn local_ptr<T: runtime_shim::Pod>(
    call: &str,
    rt: &Runtime,
    addr: *const c_void,
) -> GlobalPtr<T> {
    // What `sym` gives for this PE, without its translation: this PE's
    // address of a symmetric object is already its own (no PE number to
    // check or to take through a context's team).
    let a = addr as u64;
    let comm = rt.comm();
    let here = GlobalAddr::new(rt.here(), a);
    if comm.heap().contains(a, 1) || comm.is_static(here, 1) {
        return GlobalPtr::from_addr(here);
    }
    not_symmetric(call, a)
}

// ---- the context a `shmem_ctx_*` call runs under (its PE numbering): at
// the root, below every module that numbers PEs.

/// `SHMEM_CTX_DEFAULT`'s value (`include/shmem.h`).
pub const CTX_DEFAULT: usize = 1;

/// A context made by `shmem_ctx_create` / `shmem_team_create_ctx`.
pub(crate) struct Ctx {
    pub(crate) team: usize,
    /// The world PE of each PE of the team (`None`: the world team).
    pub(crate) locales: Option<Box<[usize]>>,
}

/// Whether a context on a team other than the world was ever made in this
/// process: until one is, every PE number is the world's and [`team_pe`]
/// skips the thread-local read (set before the context's handle is handed
/// out, so any call that uses the handle sees it).
static TEAM_CTX_MADE: AtomicBool = AtomicBool::new(false);

/// Records that a context on a team other than the world exists
/// ([`TEAM_CTX_MADE`]); called before its handle is handed out.
pub(crate) fn team_ctx_made() {
    TEAM_CTX_MADE.store(true, Ordering::Release);
}

thread_local! {
    /// The context of the `shmem_ctx_*` call this thread is in (0 or
    /// `CTX_DEFAULT`: none, or the default context; world numbering).
    static CTX_NOW: Cell<usize> = const { Cell::new(0) };
}

/// The context a `shmem_ctx_*` call runs under, for its PE numbers
/// ([`team_pe`]); entered by the call after checking the handle, left when
/// dropped.
pub(crate) struct CtxScope {
    before: usize,
}

impl CtxScope {
    /// Checks `ctx` (`SHMEM_CTX_INVALID` ends the job naming the call) and
    /// makes it the thread's current context.
    #[inline]
    pub(crate) fn enter(call: &str, ctx: *mut c_void) -> CtxScope {
        check_ctx(call, ctx);
        CtxScope {
            before: CTX_NOW.with(|c| c.replace(ctx as usize)),
        }
    }
}

impl Drop for CtxScope {
    #[inline]
    fn drop(&mut self) {
        CTX_NOW.with(|c| c.set(self.before));
    }
}

/// The context of the `shmem_ctx_*` call this thread is in (0: none,
/// `CTX_DEFAULT`: the default one; else a `Ctx` of `new_ctx`).
#[inline]
pub(crate) fn current_ctx() -> usize {
    CTX_NOW.with(|c| c.get())
}

/// The world PE of `pe` as the current context numbers it: a context on a
/// team numbers the team's PEs 0.. (OpenSHMEM 1.5, `shmem_team_create_ctx`);
/// out of the team's range ends the job naming the call.
#[inline]
pub(crate) fn team_pe(call: &str, pe: c_int) -> c_int {
    if !TEAM_CTX_MADE.load(Ordering::Acquire) {
        return pe;
    }
    let now = CTX_NOW.with(|c| c.get());
    if now <= CTX_DEFAULT {
        return pe;
    }
    // SAFETY: a live context made by new_ctx (the C API's contract: a
    // context is not destroyed while a call on it runs).
    let ctx = unsafe { &*(now as *const Ctx) };
    match &ctx.locales {
        None => pe,
        Some(l) => match usize::try_from(pe).ok().and_then(|i| l.get(i)) {
            Some(&w) => w as c_int,
            None => die(
                call,
                format!(
                    "PE {pe} is out of range for the context's team (its PEs are 0..{})",
                    l.len()
                ),
            ),
        },
    }
}
