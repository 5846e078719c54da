//! The Rust API: one [`Runtime`] per process (a locale), created by
//! [`init`](crate::init) / [`Builder::init`](crate::Builder::init) and finalized by [`Runtime::finalize`].
//!
//! Start-up: read the shim's knobs, start the comm layer (provider and MCM
//! mode selection, registered heap), allocate the collective area, start the
//! worker pool (pinned, each worker bound to its transmit context), start the
//! AM layer with the pool as its spawner, barrier. The runtime is a
//! process-wide static, so tasks and on-statement bodies reach it as
//! `&'static Runtime` ([`Runtime::current`], [`OnCtx::rt`](crate::OnCtx::rt)), and the C ABI shares it.
//!
//! One job per file: this one holds the runtime's state, facts, lifecycle,
//! memory, on-statements, tasks and collectives; `init` the knobs, the
//! `Builder` and start-up; `rma` PUT/GET (blocking, non-blocking with owned
//! buffers, strided, unordered entry points); `atomics` the atomic API.

use crate::collective::Collectives;
use crate::config::ShimConfig;
use crate::error::{Error, Result};
use crate::pod::{as_bytes, as_bytes_mut, Atom, AtomInt, Pod};
use crate::ptr::{Dist, GlobalPtr};
use crate::strided::Plan;
use crate::tasking::{Group, Hooks, Pool, PoolConfig, TaskHandle};
use crate::unordered;
use amhandler::{Am, FnId, Registry};
use comm_ofi::{AmoOp, AmoType, Comm, GlobalAddr, Locale, Mode};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

// The children extend `Runtime` and take what they need from here; this
// file names nothing of theirs (the crate root re-exports their public
// types), so the modules form layers (scripts/check-layers).
pub(crate) mod atomics;
pub(crate) mod init;
pub(crate) mod rma;

static RUNTIME: OnceLock<Runtime> = OnceLock::new();
static INIT: parking_lot::Mutex<bool> = parking_lot::Mutex::new(false);

/// Name of the internal body that applies a batch of atomics (unordered AMOs
/// on types the provider does not do natively).
const AMO_BATCH: &str = "pgas-shim.amo-batch";
/// Non-blocking operations a strided transfer keeps in flight.
const STRIDED_WINDOW: usize = 64;

/// Tasks begun in a [`Runtime::sync`] block (Chapel's `sync { begin ... }`).
/// Cloneable and `'static`: a task may begin more tasks in the same scope.
#[derive(Debug, Clone)]
pub struct Scope {
    rt: &'static Runtime,
    group: Group,
}

impl Scope {
    /// Starts a task in this scope.
    pub fn begin<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<()> {
        self.rt.check_open()?;
        self.rt.pool.spawn_in(&self.group, f)
    }
}

/// One locale's runtime.
pub struct Runtime {
    comm: Arc<Comm>,
    am: Arc<Am>,
    pool: Arc<Pool>,
    coll: Collectives,
    cfg: ShimConfig,
    cores: Option<Vec<usize>>,
    amo_batch: FnId,
    check_range: FnId,
    detached: Group,
    /// The world team's area on each locale (the team itself: `team.rs`).
    world_areas: Vec<u64>,
    finalizing: AtomicBool,
    finalized: AtomicBool,
    names: OnceLock<(std::ffi::CString, std::ffi::CString)>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("here", &self.here())
            .field("num_locales", &self.num_locales())
            .field("cfg", &self.cfg)
            .finish_non_exhaustive()
    }
}

/// The size of `n` elements of `T` in bytes, or an error naming `what` when
/// it overflows.
pub(crate) fn byte_len<T>(n: usize, what: &'static str) -> Result<usize> {
    n.checked_mul(std::mem::size_of::<T>())
        .ok_or(Error::InvalidLength {
            what,
            len: n as u64,
            reason: "element count times element size overflows".into(),
        })
}

impl Runtime {
    /// The process's runtime, once [`init`](crate::init) has returned.
    pub fn current() -> Result<&'static Runtime> {
        RUNTIME.get().ok_or(Error::NotInitialized)
    }

    #[inline]
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.finalized.load(Ordering::Acquire) {
            return Err(Error::Finalized);
        }
        Ok(())
    }

    pub(crate) fn check_locale(&self, locale: Locale) -> Result<()> {
        if locale >= self.num_locales() {
            return Err(Error::InvalidLocale {
                locale: locale as i64,
                num_locales: self.num_locales(),
            });
        }
        Ok(())
    }

    // ---------------------------------------------------------------- facts

    /// This locale.
    pub fn here(&self) -> Locale {
        self.comm.here()
    }
    /// Number of locales.
    pub fn num_locales(&self) -> Locale {
        self.comm.num_locales()
    }
    /// The MCM mode in force.
    pub fn mode(&self) -> Mode {
        self.comm.mode()
    }
    /// The libfabric provider in use.
    pub fn provider_name(&self) -> &str {
        &self.comm.provider().name
    }
    /// Number of worker threads on this locale.
    pub fn num_workers(&self) -> usize {
        self.pool.workers()
    }
    /// The cores the workers are pinned to (`None`: unpinned).
    pub fn worker_cores(&self) -> Option<&[usize]> {
        self.cores.as_deref()
    }
    /// The shim's knobs in force.
    pub fn config(&self) -> &ShimConfig {
        &self.cfg
    }
    /// Whether atomics on `ty` are done natively by the provider (else by
    /// CPU atomics at the word's owner: all ops of a type go one way, fixed
    /// by the comm layer at start-up).
    pub fn amo_native(&self, ty: AmoType) -> bool {
        self.comm.amo_route(ty) == comm_ofi::AmoRoute::Native
    }
    /// The comm layer underneath.
    pub fn comm(&self) -> &Arc<Comm> {
        &self.comm
    }
    /// The AM layer underneath.
    pub fn am(&self) -> &Arc<Am> {
        &self.am
    }
    /// Counters of the worker pool.
    pub fn pool_stats(&self) -> crate::tasking::PoolStats {
        self.pool.stats()
    }
    /// Issues this thread's buffered unordered operations and waits for
    /// them (`unordered.rs`).
    pub(crate) fn flush_unordered(&self) -> Result<()> {
        unordered::flush(&self.comm, &self.am, self.amo_batch)
    }
    pub(crate) fn check_range_id(&self) -> FnId {
        self.check_range
    }
    /// One line: mode, provider, locales, workers, pinning, barrier.
    pub fn describe(&self) -> String {
        format!(
            "{} MCM mode, {} provider, {} locales, {} workers ({}), {} barrier",
            self.mode(),
            self.provider_name(),
            self.num_locales(),
            self.num_workers(),
            if self.cores.is_some() {
                "pinned"
            } else {
                "unpinned"
            },
            self.cfg.barrier
        )
    }
    pub(crate) fn c_names(&self) -> &(std::ffi::CString, std::ffi::CString) {
        self.names.get_or_init(|| {
            let c = |s: String| std::ffi::CString::new(s.replace('\0', "")).expect("no NUL");
            (
                c(self.mode().to_string()),
                c(self.provider_name().to_string()),
            )
        })
    }

    // ------------------------------------------------------------ lifecycle

    /// Orderly, collective end: waits for every task begun (and every
    /// on-statement still running), flushes, stops the AM layer, the
    /// workers and the comm layer. Must be called by the main program, not
    /// from a task. Idempotent.
    pub fn finalize(&self) -> Result<()> {
        if Pool::in_task() || self.pool.current_worker().is_some() {
            return Err(Error::State(
                "finalize must be called by the main program, not from a task or an \
                 on-statement body"
                    .into(),
            ));
        }
        if self.finalizing.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let flushed = self.flush_unordered();
        let detached = self.pool.wait_group(&self.detached);
        // On-statements from peers still arrive and run until every locale
        // has said it sends no more: the runtime stays usable for them.
        let r = self.am.finalize().map_err(Error::from);
        self.finalized.store(true, Ordering::Release);
        flushed.and(detached).and(r)
    }

    /// Whether [`Runtime::finalize`] has been called.
    pub fn is_finalized(&self) -> bool {
        self.finalized.load(Ordering::Acquire)
    }

    /// Takes the whole job down with `msg` (through the launcher). Never returns.
    pub fn abort(&self, msg: &str) -> ! {
        self.comm
            .oob()
            .abort(&format!("locale {}: {msg}", self.here()))
    }

    /// Ends the whole job, which exits with `status` (OpenSHMEM's
    /// `shmem_global_exit`): the launcher (pgasrun or PMIx) stops every
    /// locale. `msg` says who ended it. Never returns.
    pub fn global_exit(&self, status: i32, msg: &str) -> ! {
        self.comm.oob().global_exit(status, msg)
    }

    // --------------------------------------------------------------- memory

    /// Allocates `n` elements of registered memory on this locale.
    pub fn alloc<T: Pod>(&self, n: usize) -> Result<GlobalPtr<T>> {
        self.check_open()?;
        let bytes = byte_len::<T>(n, "allocation")?;
        let a = self
            .comm
            .alloc_user(bytes, std::mem::align_of::<T>().max(64))?;
        Ok(GlobalPtr::from_addr(a))
    }

    /// Frees memory from [`Runtime::alloc`] (on this locale).
    pub fn free<T: Pod>(&self, p: GlobalPtr<T>) -> Result<()> {
        Ok(self.comm.free(p.global_addr())?)
    }

    /// A global pointer to the static variable at `local` (this program's
    /// `.data` / `.bss`, registered at init) as it lives on `locale`: the
    /// same offset in every locale's static data, whatever ASLR did, so
    /// PUT / GET / atomics reach it as they reach the heap. The static must
    /// be storage the program reads and writes only through atomics or
    /// `UnsafeCell` (remote operations write it behind the compiler's back):
    /// `static COUNTS: [AtomicU64; 64]` is the simple case. An address that
    /// is not in the registered static data (the heap, a stack, a shared
    /// library's statics) is an error naming it.
    pub fn static_ptr<T: Pod>(&self, local: *const T, locale: Locale) -> Result<GlobalPtr<T>> {
        self.check_open()?;
        let a = self.comm.static_addr(local as u64, locale)?;
        Ok(GlobalPtr::new(a.locale, a.addr))
    }

    /// Collective: allocates `n` elements on every locale *at the same heap
    /// offset everywhere* (OpenSHMEM's symmetric allocation), so that a
    /// locale can compute a peer's address from its own. Zeroed. The
    /// locales agree on an offset free on all of them (each proposes its
    /// lowest fit, the largest wins, retried upwards if one cannot take it);
    /// out of memory on one locale is an error on all.
    pub fn alloc_sym<T: Pod>(&self, n: usize) -> Result<Dist<T>> {
        let bytes = byte_len::<T>(n, "symmetric allocation")?;
        let d = self.alloc_sym_bytes(bytes, std::mem::align_of::<T>())?;
        Ok(Dist::new(
            d.parts().iter().map(|p| p.cast::<T>()).collect(),
            n,
            self.here(),
        ))
    }

    /// Collective: [`Runtime::alloc_sym`] of `bytes` bytes aligned to
    /// `align` (a power of two; at least 64 is given): OpenSHMEM's
    /// `shmem_align`. Every locale must pass the same values.
    pub fn alloc_sym_bytes(&self, bytes: usize, align: usize) -> Result<Dist<u8>> {
        self.check_open()?;
        if !align.is_power_of_two() {
            return Err(Error::InvalidLength {
                what: "symmetric allocation alignment",
                len: align as u64,
                reason: "not a power of two".into(),
            });
        }
        if align > comm_ofi::heap::HEAP_BASE_ALIGN {
            return Err(Error::InvalidLength {
                what: "symmetric allocation alignment",
                len: align as u64,
                reason: format!(
                    "above {} bytes, the alignment every locale's heap base has",
                    comm_ofi::heap::HEAP_BASE_ALIGN
                ),
            });
        }
        let heap = self.comm.heap();
        let align = align.max(64);
        let world = self.world();
        let mut floor = 0usize;
        loop {
            let mine = heap
                .first_fit_from(floor, bytes, align)
                .map_or(u64::MAX, |o| o as u64);
            let offer = *world.fcollect(&[mine])?.iter().max().expect("a member");
            if offer == u64::MAX {
                return Err(Error::from(comm_ofi::Error::OutOfMemory {
                    size: bytes,
                    heap_size: heap.size(),
                }));
            }
            let took = heap.alloc_at(offer as usize, bytes).ok();
            let all = world.fcollect(&[took.is_some() as u8])?;
            if all.iter().all(|t| *t == 1) {
                let a = took.expect("took");
                // SAFETY: a fresh allocation of `bytes` bytes of our heap.
                unsafe { std::ptr::write_bytes(a as *mut u8, 0, bytes) };
                // Everybody zeroed before anybody uses a peer's part.
                world.barrier()?;
                let ptrs = (0..self.num_locales())
                    .map(|l| {
                        self.comm
                            .symmetric(GlobalAddr::new(self.here(), a), l)
                            .map(GlobalPtr::from_addr)
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                return Ok(Dist::new(ptrs, bytes, self.here()));
            }
            if let Some(a) = took {
                self.comm.free(GlobalAddr::new(self.here(), a))?;
            }
            floor = offer as usize + align;
        }
    }

    /// Collective: allocates `n` elements on every locale and tells everyone
    /// where (a distributed array's storage). Zeroed.
    pub fn alloc_all<T: Pod>(&self, n: usize) -> Result<Dist<T>> {
        self.check_open()?;
        self.alloc_all_part(n, Ok(()))
    }

    /// [`Runtime::alloc_all`] where this locale's part may already have
    /// failed (a bad argument of a C caller): it still takes part, so every
    /// locale returns an error instead of some waiting forever.
    pub(crate) fn alloc_all_part<T: Pod>(&self, n: usize, part: Result<()>) -> Result<Dist<T>> {
        let mine = part.and_then(|()| self.alloc::<T>(n));
        // Each locale's address (0: its part failed), then its message.
        let mut contribution = Vec::with_capacity(8);
        match &mine {
            Ok(p) => {
                let bytes = n * std::mem::size_of::<T>();
                // SAFETY: a fresh allocation of `bytes` bytes in this
                // locale's registered heap, not yet known to anyone else.
                unsafe { std::ptr::write_bytes(p.addr() as *mut u8, 0, bytes) };
                contribution.extend_from_slice(&p.addr().to_le_bytes());
            }
            Err(e) => {
                contribution.extend_from_slice(&0u64.to_le_bytes());
                let msg = e.to_string();
                contribution.extend_from_slice(&msg.as_bytes()[..msg.len().min(1024)]);
            }
        }
        let all = self
            .comm
            .oob()
            .allgather(&contribution)
            .map_err(comm_ofi::Error::from)?;
        let mine = mine?;
        let mut ptrs = Vec::with_capacity(all.len());
        for (l, a) in all.iter().enumerate() {
            let w = a
                .get(..8)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_le_bytes);
            if w == 0 {
                self.free(mine)?;
                return Err(Error::Collective {
                    op: "alloc_all",
                    locale: l,
                    reason: String::from_utf8_lossy(a.get(8..).unwrap_or_default()).into_owned(),
                });
            }
            ptrs.push(GlobalPtr::new(l, w));
        }
        Ok(Dist::new(ptrs, n, self.here()))
    }

    /// Collective: frees a [`Dist`] after every locale is done with it.
    pub fn free_all<T: Pod>(&self, d: Dist<T>) -> Result<()> {
        self.barrier()?;
        self.free(d.local())
    }

    // -------------------------------------------------------- on-statements

    /// The AM layer of the open runtime (the on-statements' entry check).
    fn open_am(&self) -> Result<&Am> {
        self.check_open()?;
        Ok(&self.am)
    }

    /// Blocking on-statement: runs body `f` on `locale` with `args` and
    /// returns its reply. The body runs as a task on a worker there.
    pub fn on(&self, locale: Locale, f: FnId, args: &[u8]) -> Result<Vec<u8>> {
        Ok(self.open_am()?.execute_on(locale, f, args)?)
    }

    /// Non-blocking on-statement (fire and forget; a failure of the body
    /// takes the job down).
    pub fn on_nb(&self, locale: Locale, f: FnId, args: &[u8]) -> Result<()> {
        Ok(self.open_am()?.execute_on_nb(locale, f, args)?)
    }

    /// Blocking "fast" on-statement: the body runs in the target's AM
    /// handler thread (short bodies that do no communication).
    pub fn on_fast(&self, locale: Locale, f: FnId, args: &[u8]) -> Result<Vec<u8>> {
        Ok(self.open_am()?.execute_on_fast(locale, f, args)?)
    }

    /// Non-blocking fast on-statement.
    pub fn on_fast_nb(&self, locale: Locale, f: FnId, args: &[u8]) -> Result<()> {
        Ok(self.open_am()?.execute_on_fast_nb(locale, f, args)?)
    }

    /// `coforall loc in Locales do on loc { f(args) }`: one blocking
    /// on-statement per locale, all at once (as tasks), waits for all;
    /// returns the replies by locale.
    pub fn coforall_locales(&'static self, f: FnId, args: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.check_open()?;
        let args: Arc<[u8]> = args.into();
        let mut tasks = Vec::with_capacity(self.num_locales());
        for l in 0..self.num_locales() {
            let a = args.clone();
            tasks.push(self.spawn(move || self.on(l, f, &a))?);
        }
        let mut out = Vec::with_capacity(tasks.len());
        let mut first_err = None;
        for t in tasks {
            match t.join().and_then(|r| r) {
                Ok(v) => out.push(v),
                Err(e) => {
                    first_err.get_or_insert(e);
                    out.push(Vec::new());
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    // ---------------------------------------------------------------- tasks

    /// Starts a task (Chapel's `begin`) whose value can be waited for.
    pub fn spawn<T, F>(&self, f: F) -> Result<TaskHandle<T>>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        self.check_open()?;
        self.pool.spawn(f)
    }

    /// Starts a task nobody waits for; finalize waits for it and reports
    /// its failure.
    pub fn begin<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<()> {
        self.check_open()?;
        self.pool.spawn_in(&self.detached, f)
    }

    /// Chapel's `sync { ... }`: runs `f`, then waits for every task begun in
    /// the scope (and the tasks they began in it).
    pub fn sync<R>(&'static self, f: impl FnOnce(&Scope) -> R) -> Result<R> {
        self.check_open()?;
        let scope = Scope {
            rt: self,
            group: Group::new(),
        };
        let r = f(&scope);
        self.pool.wait_group(&scope.group)?;
        Ok(r)
    }

    /// `coforall i in 0..n { f(i) }` on this locale: n tasks, waits for all.
    pub fn coforall<F>(&self, n: usize, f: F) -> Result<()>
    where
        F: Fn(usize) + Send + Sync + 'static,
    {
        self.check_open()?;
        let f = Arc::new(f);
        let g = Group::new();
        for i in 0..n {
            let f = f.clone();
            self.pool.spawn_in(&g, move || f(i))?;
        }
        self.pool.wait_group(&g)
    }

    /// Runs one ready task on this thread if it is a worker; whether it did.
    pub(crate) fn help_one(&self) -> bool {
        self.pool.help()
    }

    /// Waits until `done()` holds, running other ready tasks meanwhile when
    /// called from a task (never blocks a worker thread).
    pub fn wait_until(&self, done: impl FnMut() -> bool) {
        self.pool.wait_until(done)
    }

    /// Gives the calling thread (the main program, or a runtime's own thread
    /// that communicates) a transmit context of its own, so its blocking
    /// operations cost what they cost in a task. [`Builder::init`](crate::Builder::init) binds the
    /// thread that calls it. Returns whether it got one (`false`: none left,
    /// `PGAS_THREAD_CONTEXTS`; it stays unbound, correct but slower).
    pub fn bind_thread(&self) -> Result<bool> {
        if self.pool.current_worker().is_some() {
            return Ok(true);
        }
        Ok(self.comm.bind_thread()?)
    }

    /// Gives back the context of [`Runtime::bind_thread`] (a boundary: the
    /// thread's stores are made visible first). Call it before a bound
    /// thread ends, or its context stays taken.
    pub fn unbind_thread(&self) -> Result<()> {
        if self.pool.current_worker().is_some() {
            return Ok(());
        }
        Ok(self.comm.unbind_thread()?)
    }

    /// Boundary hook for a runtime with its own tasking: a task is about to
    /// create a child (make the creator's stores visible to it).
    pub fn task_create_hook(&self) -> Result<()> {
        self.check_open()?;
        Ok(self.comm.task_create()?)
    }

    /// Boundary hook for a runtime with its own tasking: the calling task
    /// ends (flush its unordered operations, make its stores visible).
    pub fn task_end_hook(&self) -> Result<()> {
        self.check_open()?;
        let f = self.flush_unordered();
        f.and(self.comm.task_end().map_err(Error::from))
    }

    // ---------------------------------------------------------- collectives

    /// The world team's area address on each locale (allocated and
    /// exchanged at init; `Runtime::world` in `team.rs` builds the team).
    pub(crate) fn world_areas(&self) -> &[u64] {
        &self.world_areas
    }

    /// Job-wide barrier: every store issued before it (by tasks that ended
    /// or by the caller) is visible after it. Called by one task per locale.
    /// If any locale's part fails (its unordered operations, its stores),
    /// every locale gets an error (see [`Error::Collective`]).
    pub fn barrier(&self) -> Result<()> {
        self.check_open()?;
        self.barrier_part("barrier", Ok(()))
    }

    /// The barrier of collective `op`, agreeing on whether some locale's
    /// part failed (`part` is this locale's).
    pub(crate) fn barrier_part(&self, op: &'static str, part: Result<()>) -> Result<()> {
        let part = part.and_then(|()| self.flush_unordered());
        let pool = &self.pool;
        self.coll
            .barrier(&self.comm, op, part, &|c: &dyn Fn() -> bool| {
                pool.wait_until(c)
            })
    }

    /// Collective: `data` of locale 0 on every locale (ignored elsewhere).
    /// If it fails anywhere (the root's heap cannot hold a copy, ...),
    /// every locale gets an error.
    pub fn broadcast_bytes(&self, data: &[u8]) -> Result<Vec<u8>> {
        self.check_open()?;
        self.broadcast_part(data, Ok(()))
    }

    /// [`Runtime::broadcast_bytes`] where this locale's part may already
    /// have failed (a bad argument of a C caller): it still takes part.
    pub(crate) fn broadcast_part(&self, data: &[u8], part: Result<()>) -> Result<Vec<u8>> {
        self.coll.broadcast(&self.comm, data, part, &|p| {
            self.barrier_part("broadcast", p)
        })
    }

    /// Collective: locale 0's `v` on every locale.
    pub fn broadcast<T: Pod>(&self, v: T) -> Result<T> {
        let b = self.broadcast_bytes(&crate::pod::to_bytes(&v))?;
        crate::pod::from_bytes(&b).ok_or_else(|| {
            Error::State(format!(
                "broadcast returned {} bytes for a {}-byte value",
                b.len(),
                std::mem::size_of::<T>()
            ))
        })
    }
}

pub(crate) trait FromZero {
    fn from_zero() -> Self;
}

impl<T: Pod> FromZero for T {
    fn from_zero() -> T {
        bytemuck::Zeroable::zeroed()
    }
}

#[cfg(test)]
mod tests {
    use super::atomics::{negate_bits, AtomicOp};
    use super::init::Builder;
    use super::*;
    use crate::collective::BarrierKind;

    #[test]
    fn builder_setters_override_the_environment() {
        let b = Builder::new()
            .workers(3)
            .mode(Some(Mode::MessageOrder))
            .provider("tcp;ofi_rxm")
            .heap_size(64 << 20)
            .local_path(comm_ofi::LocalPath::Fabric)
            .am_handlers(2);
        let c = b.knobs.comm_config().unwrap();
        assert_eq!((c.num_workers, c.num_workers_set), (3, true));
        assert_eq!(c.mode, Some(Mode::MessageOrder));
        assert_eq!(c.provider.as_deref(), Some("tcp;ofi_rxm"));
        assert_eq!(c.heap_size, 64 << 20);
        assert_eq!(c.local_path, comm_ofi::LocalPath::Fabric);
        assert_eq!(c.am_handlers, 2);
        for (b, var) in [
            (Builder::new().workers(0), "PGAS_NUM_WORKERS"),
            (Builder::new().am_handlers(65), "PGAS_AM_HANDLERS"),
            (Builder::new().heap_size(4096), "PGAS_HEAP_SIZE"),
        ] {
            let e = b.knobs.comm_config().unwrap_err().to_string();
            assert!(e.contains(var), "{e}");
        }
    }

    #[test]
    fn knobs_parse_and_name_bad_values() {
        let none = ShimConfig::from_lookup(|_| None).unwrap();
        assert!(none.pin);
        assert_eq!(none.barrier, BarrierKind::Put);
        let c = ShimConfig::from_lookup(|k| match k {
            "PGAS_PIN" => Some("0".into()),
            "PGAS_BARRIER" => Some("OOB".into()),
            _ => None,
        })
        .unwrap();
        assert!(!c.pin);
        assert_eq!(c.barrier, BarrierKind::Oob);
        let e = ShimConfig::from_lookup(|k| (k == "PGAS_PIN").then(|| "maybe".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("PGAS_PIN") && e.contains("maybe"), "{e}");
        let e = ShimConfig::from_lookup(|k| (k == "PGAS_CHECK").then(|| "maybe".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("PGAS_CHECK") && e.contains("maybe"), "{e}");
        assert!(
            ShimConfig::from_lookup(|k| (k == "PGAS_CHECK").then(|| " ON".into()))
                .unwrap()
                .check
        );
        let e = ShimConfig::from_lookup(|k| (k == "PGAS_BARRIER").then(|| "tree".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("PGAS_BARRIER") && e.contains("tree"), "{e}");
    }

    #[test]
    fn negation_of_bits() {
        assert_eq!(negate_bits(AmoType::U8, 1), 0xff);
        assert_eq!(negate_bits(AmoType::I16, 0xffff), 1);
        assert_eq!(negate_bits(AmoType::I64, 5), (-5i64) as u64);
        assert_eq!(negate_bits(AmoType::U32, 0), 0);
        assert_eq!(
            f32::from_bits(negate_bits(AmoType::F32, 1.5f32.to_bits() as u64) as u32),
            -1.5
        );
        assert_eq!(
            f64::from_bits(negate_bits(AmoType::F64, (-2.0f64).to_bits())),
            2.0
        );
    }

    #[test]
    fn ops_lower_to_the_comm_layer() {
        assert_eq!(AtomicOp::Xchg.lower(false), (AmoOp::Write, true));
        assert_eq!(AtomicOp::Sub.lower(true), (AmoOp::Add, true));
        assert_eq!(AtomicOp::Read.lower(false), (AmoOp::Read, true));
        assert_eq!(AtomicOp::Min.lower(false), (AmoOp::Min, false));
        assert!(AtomicOp::Cmpxchg.always_fetches());
    }
}
