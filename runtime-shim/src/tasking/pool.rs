//! The pool: its worker threads and queues, start-up and shutdown, and the
//! AM layer's `Spawner` over it.
//!
//! Exists as the state every other file of the tasking layer works on: the
//! worker loop (`worker.rs`), waiting (`wait.rs`) and spawning (`join.rs`)
//! are `impl Pool` blocks over these fields.

use super::hooks::Hooks;
use super::local::{RUNNING, WORKER};
use crate::error::{Error, Result};
use amhandler::panic_text;
use crossbeam_queue::SegQueue;
use parking_lot::Mutex;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

/// Stack of a worker thread: helped tasks run on top of the waiting one.
/// Virtual memory only until touched.
const STACK: usize = 64 << 20;

pub(super) type Job = Box<dyn FnOnce() + Send + 'static>;

pub(super) enum Kind {
    /// Created by `spawn`/`begin`: its closure handles its own end.
    User,
    /// Handed over by the AM layer (`Spawner::spawn`).
    Am,
}

pub(super) struct Task {
    pub(super) id: u64,
    pub(super) kind: Kind,
    pub(super) job: Job,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Tasks run (user tasks and AM jobs).
    pub run: u64,
    /// Of those, run by a thread that was waiting for something (helping).
    pub helped: u64,
    /// Of those, taken from another worker's queue.
    pub stolen: u64,
    /// Threads that slept in a join or a group wait and were woken by the
    /// end of what they waited for (not by their sleep's timeout).
    pub joins_woken: u64,
    /// Tasks run by their joiner because no worker had taken them yet (not
    /// in `run`, which counts what the workers and helpers took).
    pub inlined: u64,
}

/// The fixed worker threads of one locale and their queues.
pub struct Pool {
    pub(super) locals: Vec<SegQueue<Task>>,
    pub(super) global: SegQueue<Task>,
    /// Tasks queued or running.
    pub(super) active: AtomicUsize,
    pub(super) sleepers: Mutex<Vec<Thread>>,
    pub(super) num_sleepers: AtomicUsize,
    pub(super) stop: AtomicBool,
    pub(super) threads: Mutex<Vec<JoinHandle<()>>>,
    pub(super) hooks: Arc<dyn Hooks>,
    pub(super) block_wait: bool,
    pub(super) spin_waits: bool,
    pub(super) poll_window: Duration,
    pub(super) next_id: AtomicU64,
    pub(super) run: AtomicU64,
    pub(super) helped: AtomicU64,
    pub(super) stolen: AtomicU64,
    pub(super) joins_woken: AtomicU64,
    pub(super) inlined: AtomicU64,
    /// A join runs its task if no worker has taken it yet
    /// (`PGAS_JOIN_RUNS_QUEUED`, on by default).
    pub(super) join_runs_queued: bool,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("workers", &self.locals.len())
            .field("active", &self.active.load(Ordering::Relaxed))
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// How the pool is started.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// Number of worker threads (at least 1).
    pub workers: usize,
    /// Core for each worker (`None`: unpinned).
    pub cores: Option<Vec<usize>>,
    /// Waits sleep a little between checks instead of spinning (providers
    /// whose internal progress thread starves when we spin: `sockets`).
    pub block_wait: bool,
    /// This locale owns a core (no more locales on its host than cores):
    /// a thread that is not a worker spins on a wait instead of yielding,
    /// for up to `SPIN_BUDGET` (`wait.rs`).
    pub spin_waits: bool,
    /// Thread names are `pgas-worker-<locale>-<i>`.
    pub locale: comm_ofi::Locale,
    /// How long an idle worker keeps polling for requests in the poller's
    /// place ([`Hooks::idle_poll`]) before it parks (`PGAS_POLL_SPIN_US`).
    pub poll_window: Duration,
    /// A join runs its task on the joining thread if no worker has taken
    /// it yet (`PGAS_JOIN_RUNS_QUEUED`).
    pub join_runs_queued: bool,
}

impl Pool {
    /// Starts the workers; returns once every one of them ran
    /// [`Hooks::worker_start`] (or with the first failure, after stopping them).
    pub fn start(cfg: PoolConfig, hooks: Arc<dyn Hooks>) -> Result<Arc<Pool>> {
        let n = cfg.workers.max(1);
        if let Some(cores) = &cfg.cores {
            let avail: Vec<usize> = core_affinity::get_core_ids()
                .unwrap_or_default()
                .into_iter()
                .map(|c| c.id)
                .collect();
            if let Some(bad) = cores.iter().find(|c| !avail.contains(c)) {
                return Err(Error::Worker {
                    index: 0,
                    reason: format!(
                        "core {bad} is not available to this process (available: {avail:?}); \
                         set PGAS_PIN=0"
                    ),
                });
            }
            if cores.is_empty() {
                return Err(Error::Worker {
                    index: 0,
                    reason: "no cores to pin to".into(),
                });
            }
        }
        let pool = Arc::new(Pool {
            locals: (0..n).map(|_| SegQueue::new()).collect(),
            global: SegQueue::new(),
            active: AtomicUsize::new(0),
            sleepers: Mutex::new(Vec::new()),
            num_sleepers: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            threads: Mutex::new(Vec::new()),
            hooks,
            block_wait: cfg.block_wait,
            spin_waits: cfg.spin_waits,
            poll_window: cfg.poll_window,
            next_id: AtomicU64::new(1),
            run: AtomicU64::new(0),
            helped: AtomicU64::new(0),
            stolen: AtomicU64::new(0),
            joins_woken: AtomicU64::new(0),
            inlined: AtomicU64::new(0),
            join_runs_queued: cfg.join_runs_queued,
        });
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Result<()>)>();
        for i in 0..n {
            let p = pool.clone();
            let tx = tx.clone();
            let core = cfg.cores.as_ref().map(|c| c[i % c.len()]);
            let name = format!("pgas-worker-{}-{i}", cfg.locale);
            let spawned = std::thread::Builder::new()
                .name(name)
                .stack_size(STACK)
                .spawn(move || {
                    WORKER.with(|w| w.set(Some((p.id(), i))));
                    let mut r = Ok(());
                    if let Some(c) = core {
                        if !core_affinity::set_for_current(core_affinity::CoreId { id: c }) {
                            r = Err(Error::Worker {
                                index: i,
                                reason: format!("cannot pin it to core {c} (set PGAS_PIN=0)"),
                            });
                        }
                    }
                    if r.is_ok() {
                        r = p.hooks.worker_start(i);
                    }
                    let ok = r.is_ok();
                    let _ = tx.send((i, r));
                    if ok {
                        p.worker_loop(i);
                    }
                });
            match spawned {
                Ok(h) => pool.threads.lock().push(h),
                Err(e) => {
                    pool.shutdown();
                    return Err(Error::Worker {
                        index: i,
                        reason: e.to_string(),
                    });
                }
            }
        }
        drop(tx);
        let mut first_err = None;
        for _ in 0..n {
            match rx.recv() {
                Ok((_, Ok(()))) => {}
                Ok((_, Err(e))) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err.get_or_insert(Error::Worker {
                        index: 0,
                        reason: "a worker thread died during start-up".into(),
                    });
                    break;
                }
            }
        }
        if let Some(e) = first_err {
            pool.shutdown();
            return Err(e);
        }
        Ok(pool)
    }

    fn id(&self) -> usize {
        self as *const Pool as usize
    }

    /// Number of worker threads.
    pub fn workers(&self) -> usize {
        self.locals.len()
    }

    /// The calling thread's worker index, if it is one of this pool's workers.
    pub fn current_worker(&self) -> Option<usize> {
        WORKER.with(|w| match w.get() {
            Some((p, i)) if p == self.id() => Some(i),
            _ => None,
        })
    }

    /// Whether the calling thread is running a task (of any pool).
    pub fn in_task() -> bool {
        RUNNING.with(|r| !r.borrow().is_empty())
    }

    /// Counters.
    pub fn stats(&self) -> PoolStats {
        PoolStats {
            run: self.run.load(Ordering::Relaxed),
            helped: self.helped.load(Ordering::Relaxed),
            stolen: self.stolen.load(Ordering::Relaxed),
            joins_woken: self.joins_woken.load(Ordering::Relaxed),
            inlined: self.inlined.load(Ordering::Relaxed),
        }
    }

    pub(super) fn push(&self, kind: Kind, job: Job) {
        let t = Task {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            kind,
            job,
        };
        self.active.fetch_add(1, Ordering::AcqRel);
        match self.current_worker() {
            Some(i) => self.locals[i].push(t),
            None => self.global.push(t),
        }
        if self.num_sleepers.load(Ordering::Acquire) > 0 {
            if let Some(th) = self.sleepers.lock().pop() {
                self.num_sleepers.fetch_sub(1, Ordering::AcqRel);
                th.unpark();
                return;
            }
        }
        if self.block_wait {
            // A worker may wait in the receive queue instead (idle_wait).
            self.hooks.interrupt_idle_wait();
        }
    }

    pub(super) fn find(&self, me: usize) -> Option<Task> {
        if let Some(t) = self.locals[me].pop() {
            return Some(t);
        }
        if let Some(t) = self.global.pop() {
            return Some(t);
        }
        let n = self.locals.len();
        for k in 1..n {
            if let Some(t) = self.locals[(me + k) % n].pop() {
                self.stolen.fetch_add(1, Ordering::Relaxed);
                return Some(t);
            }
        }
        None
    }

    pub(super) fn has_work(&self) -> bool {
        !self.global.is_empty() || self.locals.iter().any(|q| !q.is_empty())
    }

    pub(super) fn run_task(&self, t: Task) {
        running(t.id, || match t.kind {
            Kind::User => (t.job)(),
            Kind::Am => {
                if let Err(e) = self.hooks.on_start() {
                    tracing::error!("on-statement start boundary failed: {e}");
                }
                if let Err(p) = std::panic::catch_unwind(AssertUnwindSafe(t.job)) {
                    tracing::error!("on-statement job panicked: {}", panic_text(&*p));
                }
                self.hooks.after_job();
            }
        });
        self.run.fetch_add(1, Ordering::Relaxed);
        self.active.fetch_sub(1, Ordering::AcqRel);
    }

    pub(super) fn check_open(&self) -> Result<()> {
        if self.stop.load(Ordering::Acquire) {
            return Err(Error::Finalized);
        }
        Ok(())
    }

    /// Whether no task is queued or running.
    pub fn idle(&self) -> bool {
        self.active.load(Ordering::Acquire) == 0
    }

    /// Stops the workers once the queues are empty and joins them.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.hooks.interrupt_idle_wait();
        for t in self.sleepers.lock().drain(..) {
            t.unpark();
        }
        self.num_sleepers.store(0, Ordering::Release);
        let me = std::thread::current().id();
        let threads: Vec<_> = self.threads.lock().drain(..).collect();
        for h in threads {
            if h.thread().id() == me {
                continue;
            }
            let _ = h.join();
        }
    }
}
/// Runs task `id`'s `body` on the calling thread, counted as running there
/// (innermost in `RUNNING`) while it does.
pub(super) fn running(id: u64, body: impl FnOnce()) {
    let thread = std::thread::current().id();
    RUNNING.with(|r| r.borrow_mut().push(id));
    body();
    let top = RUNNING.with(|r| r.borrow_mut().pop());
    debug_assert_eq!(top, Some(id), "tasks must nest on a thread");
    debug_assert_eq!(
        std::thread::current().id(),
        thread,
        "task {id} ended on another thread than it started on"
    );
}

/// The AM layer hands its on-statement bodies to the pool: they run as tasks
/// on the workers, and a thread waiting for an on-statement's 'done' helps.
impl amhandler::Spawner for Pool {
    fn spawn(&self, job: amhandler::Job) {
        // Called by the AM poller (or a task starting a local non-blocking
        // on-statement): no comm hook here, the poller must never wait on a
        // transmit context. The job's own thread runs on_start.
        self.push(Kind::Am, job);
    }

    fn help(&self) -> bool {
        Pool::help(self)
    }

    fn idle(&self) -> bool {
        Pool::idle(self)
    }

    fn shutdown(&self) {
        Pool::shutdown(self)
    }
}
