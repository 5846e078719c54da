//! Tasking on a fixed set of worker threads.
//!
//! `PGAS_NUM_WORKERS` threads per locale, started once, each pinned to a core
//! (unless `PGAS_PIN=0`) and bound for life to its own transmit context
//! ([`Hooks::worker_start`] calls `Comm::bind_worker(i)` in worker `i`).
//! Tasks wait in lock-free queues (`crossbeam_queue::SegQueue`): one per
//! worker, fed by tasks that worker creates, and one global queue fed by
//! other threads (the main thread, the AM poller); an idle worker takes from
//! its own queue, then the global one, then steals from the others.
//!
//! A task runs to completion on the thread that started it: it never moves.
//! A task that waits (for a child task, an on-statement's reply, a barrier)
//! does not block its thread: it runs other ready tasks on its own stack
//! ([`Pool::help`]) until what it waits for has happened. So task trees and
//! nested on-statements deeper than the number of workers complete. The
//! price, and the limit: a helped task sits on top of the waiting one, so the
//! waiter resumes only when the helped task is done. That is deadlock-free
//! for fork-join programs (a task waits only for tasks it created, for remote
//! work, or for collectives), not for tasks that wait for a *sibling's
//! continuation* (a producer/consumer pair over a flag with more such pairs
//! than workers); see `docs/embedding.md`.
//!
//! MCM hooks: the creator calls [`Hooks::task_create`] before the child can
//! run; the task calls [`Hooks::task_end`] when its body returns, before
//! anybody waiting for it is released. Jobs of the AM layer (on-statement
//! bodies that are not "fast") run as tasks too, with [`Hooks::on_start`]
//! before the body; the AM layer forces the body's stores visible before it
//! sends the 'done'. Debug builds assert that a task ends on the thread it
//! started on, and that tasks nest properly on a thread.

use crate::error::{Error, Result};
use crossbeam_queue::SegQueue;
use parking_lot::Mutex;
use std::cell::{Cell, RefCell};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

/// Stack of a worker thread: helped tasks run on top of the waiting one.
/// Virtual memory only until touched.
const STACK: usize = 64 << 20;

/// What the tasking layer asks of the layers around it (the comm layer's
/// MCM boundaries, unordered-operation flushes). Errors of the task hooks
/// become the task's result.
pub trait Hooks: Send + Sync {
    /// Runs in worker thread `index` before it takes any task (bind it to
    /// its transmit context).
    fn worker_start(&self, index: usize) -> Result<()>;
    /// A task is about to create a child: the child must see the creator's stores.
    fn task_create(&self) -> Result<()>;
    /// A task's body returned: its stores must be visible to whoever waits for it.
    fn task_end(&self) -> Result<()>;
    /// An on-statement body (AM job) is about to start on this thread.
    fn on_start(&self) -> Result<()>;
    /// An AM job returned (flush what it left buffered).
    fn after_job(&self);
    /// A thread waits in [`Pool::wait_until`] with nothing to help with:
    /// drive whatever only this thread drives (its transmit context, on
    /// providers with manual progress), without blocking.
    fn idle_progress(&self) {}
    /// Called by an idle worker while it spins: may poll for incoming
    /// requests (queued on this worker); returns whether it found any.
    fn idle_poll(&self) -> bool {
        false
    }
    /// The worker stops polling: it goes to sleep (or the pool stops).
    fn idle_end(&self) {}
    /// Where waits block (see [`Pool::new`]'s `block_wait`): called by an
    /// idle worker instead of parking; may wait for incoming requests in
    /// the poller's place while `keep_waiting()` holds (a request found then
    /// is queued on this worker). Returns false if it did not wait (the
    /// worker parks).
    fn idle_wait(&self, _keep_waiting: &dyn Fn() -> bool) -> bool {
        false
    }
    /// Work was queued or the pool stops: ends a worker's
    /// [`Hooks::idle_wait`].
    fn interrupt_idle_wait(&self) {}
}

/// Hooks that do nothing (unit tests, a pool without a network).
#[derive(Debug, Default)]
pub struct NoHooks;

impl Hooks for NoHooks {
    fn worker_start(&self, _: usize) -> Result<()> {
        Ok(())
    }
    fn task_create(&self) -> Result<()> {
        Ok(())
    }
    fn task_end(&self) -> Result<()> {
        Ok(())
    }
    fn on_start(&self) -> Result<()> {
        Ok(())
    }
    fn after_job(&self) {}
}

type Job = Box<dyn FnOnce() + Send + 'static>;

enum Kind {
    /// Created by `spawn`/`begin`: its closure handles its own end.
    User,
    /// Handed over by the AM layer (`Spawner::spawn`).
    Am,
}

struct Task {
    id: u64,
    kind: Kind,
    job: Job,
}

thread_local! {
    /// (pool identity, worker index) of a worker thread.
    static WORKER: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
    /// Ids of the tasks running on this thread, innermost last.
    static RUNNING: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    /// While non-zero, this thread runs no other task when it waits (it is
    /// inside a lock protocol: see `crate::lock`).
    static NO_HELP: Cell<u32> = const { Cell::new(0) };
}

/// While alive, the calling thread runs no other task when it waits.
/// Nests. Used by locks: a task queued behind a lock must never run on top
/// of the task that holds it (or is acquiring it).
#[derive(Debug)]
pub(crate) struct NoHelp(());

impl NoHelp {
    pub(crate) fn enter() -> NoHelp {
        NO_HELP.with(|c| c.set(c.get() + 1));
        NoHelp(())
    }

    /// Leaves a scope entered by [`NoHelp::enter`] whose guard was
    /// forgotten (the C ABI's lock tokens outlive any Rust guard).
    pub(crate) fn leave_forgotten() {
        NO_HELP.with(|c| c.set(c.get().saturating_sub(1)));
    }
}

impl Drop for NoHelp {
    fn drop(&mut self) {
        NoHelp::leave_forgotten();
    }
}

/// Counters of a pool (monotonic).
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
}

/// The fixed worker threads of one locale and their queues.
pub struct Pool {
    locals: Vec<SegQueue<Task>>,
    global: SegQueue<Task>,
    /// Tasks queued or running.
    active: AtomicUsize,
    sleepers: Mutex<Vec<Thread>>,
    num_sleepers: AtomicUsize,
    stop: AtomicBool,
    threads: Mutex<Vec<JoinHandle<()>>>,
    hooks: Arc<dyn Hooks>,
    block_wait: bool,
    poll_window: Duration,
    next_id: AtomicU64,
    run: AtomicU64,
    helped: AtomicU64,
    stolen: AtomicU64,
    joins_woken: AtomicU64,
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
    /// Thread names are `pgas-worker-<locale>-<i>`.
    pub locale: comm_ofi::Locale,
    /// How long an idle worker keeps polling for requests in the poller's
    /// place ([`Hooks::idle_poll`]) before it parks (`PGAS_POLL_SPIN_US`).
    pub poll_window: Duration,
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
            poll_window: cfg.poll_window,
            next_id: AtomicU64::new(1),
            run: AtomicU64::new(0),
            helped: AtomicU64::new(0),
            stolen: AtomicU64::new(0),
            joins_woken: AtomicU64::new(0),
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
        }
    }

    fn push(&self, kind: Kind, job: Job) {
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

    fn find(&self, me: usize) -> Option<Task> {
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

    fn has_work(&self) -> bool {
        !self.global.is_empty() || self.locals.iter().any(|q| !q.is_empty())
    }

    fn run_task(&self, t: Task) {
        let thread = std::thread::current().id();
        RUNNING.with(|r| r.borrow_mut().push(t.id));
        match t.kind {
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
        }
        let top = RUNNING.with(|r| r.borrow_mut().pop());
        debug_assert_eq!(top, Some(t.id), "tasks must nest on a thread");
        debug_assert_eq!(
            std::thread::current().id(),
            thread,
            "task {} ended on another thread than it started on",
            t.id
        );
        self.run.fetch_add(1, Ordering::Relaxed);
        self.active.fetch_sub(1, Ordering::AcqRel);
    }

    fn worker_loop(&self, me: usize) {
        let th = std::thread::current();
        let mut idle = 0u32;
        let mut idle_since = Instant::now();
        loop {
            if let Some(t) = self.find(me) {
                idle = 0;
                self.run_task(t);
                continue;
            }
            if self.stop.load(Ordering::Acquire) {
                self.hooks.idle_end();
                break;
            }
            if idle == 0 {
                idle_since = Instant::now();
            }
            idle += 1;
            // While idle, poll for incoming requests for a while (an
            // on-statement found here runs on this worker: no hop).
            // Counted in time (`PGAS_POLL_SPIN_US`, as the poller's spin),
            // not only in rounds: a round whose poll finds the AM poller
            // holding the receive side is a few nanoseconds, so 256 rounds
            // could pass before the next request of a round trip arrived,
            // and a parked worker costs that request a poller hop and a
            // futex wake-up.
            if !self.block_wait && (idle <= 256 || idle_since.elapsed() < self.poll_window) {
                if self.hooks.idle_poll() {
                    continue;
                }
                if idle >= 256 {
                    std::thread::yield_now();
                    continue;
                }
            }
            if idle < 64 {
                std::hint::spin_loop();
                continue;
            }
            if idle < 256 && !self.block_wait {
                std::thread::yield_now();
                continue;
            }
            // Where waits block: wait for requests in the poller's place
            // (a request found runs on this worker, no hop), until work is
            // queued here.
            if self.block_wait
                && self
                    .hooks
                    .idle_wait(&|| !self.has_work() && !self.stop.load(Ordering::SeqCst))
            {
                continue;
            }
            self.hooks.idle_end();
            // Announce, re-check, sleep; push() wakes one announced worker,
            // and the timeout bounds a missed wake-up.
            self.sleepers.lock().push(th.clone());
            self.num_sleepers.fetch_add(1, Ordering::AcqRel);
            if !self.has_work() && !self.stop.load(Ordering::Acquire) {
                std::thread::park_timeout(Duration::from_millis(10));
            }
            let mut s = self.sleepers.lock();
            let before = s.len();
            s.retain(|t| t.id() != th.id());
            if s.len() < before {
                self.num_sleepers.fetch_sub(1, Ordering::AcqRel);
            }
            drop(s);
            // Work came: spin again from the start; a timeout with none:
            // straight back to sleep (no second round of spins and yields).
            idle = if self.has_work() { 0 } else { 256 };
        }
    }

    /// Runs one ready task on the calling thread if it is one of this pool's
    /// workers; returns whether it ran one.
    pub fn help(&self) -> bool {
        if NO_HELP.with(|c| c.get()) > 0 {
            return false;
        }
        let Some(me) = self.current_worker() else {
            return false;
        };
        match self.find(me) {
            Some(t) => {
                self.helped.fetch_add(1, Ordering::Relaxed);
                self.run_task(t);
                true
            }
            None => false,
        }
    }

    /// Waits until `done()` holds. A worker runs other ready tasks meanwhile;
    /// any other thread spins, yields (not where waits block), then sleeps
    /// between checks (longer the longer it waits, at most 320 us, or 800 us
    /// with blocking waits).
    pub fn wait_until(&self, done: impl FnMut() -> bool) {
        self.wait_until_or_woken(done, None)
    }

    /// [`Pool::wait_until`], where whoever makes `done()` true wakes the
    /// threads registered in `wakers`: a sleep between checks ends then,
    /// not at its timeout (a join from the main thread would otherwise
    /// return up to 800 us after the task ended).
    fn wait_until_or_woken(&self, mut done: impl FnMut() -> bool, wakers: Option<&Wakers>) {
        let mut idle = 0u32;
        while !done() {
            if self.help() {
                idle = 0;
                continue;
            }
            // What we wait for may be a peer's answer to an operation this
            // thread injected, which may sit in our endpoint until we poll.
            self.hooks.idle_progress();
            idle = idle.saturating_add(1);
            if idle < 32 {
                std::hint::spin_loop();
            } else if idle < 1024 && !self.block_wait {
                std::thread::yield_now();
            } else {
                // Backing off (20 us doubling to 320 us) so that a long wait
                // (a main thread in a barrier while others work) does not
                // wake tens of thousands of times a second on a shared core.
                // Where waits block (`sockets`) there are no yields at all:
                // the provider's internal progress thread spins on our core
                // after any traffic, and a yield hands it the core for a
                // whole time slice, while the task we wait for sits behind
                // it (a task that PUT and forced was joined after ~4 ms, a
                // scheduler tick, against ~0.2 ms for its operations).
                let (base, from) = if self.block_wait {
                    (50, 32)
                } else {
                    (20, 1024)
                };
                // Doubling from the first sleep.
                let k = (idle - from).min(4);
                let nap = Duration::from_micros(base << k);
                match wakers {
                    // Registered before the check: an end after the check
                    // finds us and unparks (the token outlives a late park).
                    Some(w) if self.current_worker().is_none() => {
                        w.register();
                        if done() {
                            break;
                        }
                        std::thread::park_timeout(nap);
                    }
                    _ => std::thread::sleep(nap),
                }
            }
        }
    }

    /// Starts a task running `f` and returns its handle. The creator's stores
    /// are made visible first ([`Hooks::task_create`]).
    pub fn spawn<T, F>(self: &Arc<Self>, f: F) -> Result<TaskHandle<T>>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        self.check_open()?;
        self.hooks.task_create()?;
        let state = Arc::new(TaskState {
            done: AtomicBool::new(false),
            result: Mutex::new(None),
            joiners: Wakers::default(),
        });
        let s = state.clone();
        let pool = self.clone();
        self.push(
            Kind::User,
            Box::new(move || {
                let r = std::panic::catch_unwind(AssertUnwindSafe(f));
                let end = pool.hooks.task_end();
                let r = match (r, end) {
                    (Ok(v), Ok(())) => Ok(v),
                    (Err(p), _) => Err(Error::TaskPanicked(panic_text(&*p))),
                    (Ok(_), Err(e)) => Err(e),
                };
                *s.result.lock() = Some(r);
                s.done.store(true, Ordering::Release);
                s.joiners.wake(&pool.joins_woken);
            }),
        );
        Ok(TaskHandle {
            state,
            pool: self.clone(),
        })
    }

    /// Starts a task in `group` (see [`Group`]).
    pub fn spawn_in<F>(self: &Arc<Self>, group: &Group, f: F) -> Result<()>
    where
        F: FnOnce() + Send + 'static,
    {
        self.check_open()?;
        self.hooks.task_create()?;
        let g = group.inner.clone();
        g.pending.fetch_add(1, Ordering::AcqRel);
        let pool = self.clone();
        self.push(
            Kind::User,
            Box::new(move || {
                let r = std::panic::catch_unwind(AssertUnwindSafe(f));
                let end = pool.hooks.task_end();
                let err = match (r, end) {
                    (Ok(()), Ok(())) => None,
                    (Err(p), _) => Some(Error::TaskPanicked(panic_text(&*p))),
                    (Ok(()), Err(e)) => Some(e),
                };
                if let Some(e) = err {
                    g.first_error.lock().get_or_insert(e);
                }
                if g.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                    g.waiters.wake(&pool.joins_woken);
                }
            }),
        );
        Ok(())
    }

    /// Waits until every task started in `group` (and every task those
    /// started in it) has ended; returns the first failure among them.
    pub fn wait_group(&self, group: &Group) -> Result<()> {
        let g = &group.inner;
        self.wait_until_or_woken(|| g.pending.load(Ordering::Acquire) == 0, Some(&g.waiters));
        match g.first_error.lock().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn check_open(&self) -> Result<()> {
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

struct TaskState<T> {
    done: AtomicBool,
    result: Mutex<Option<Result<T>>>,
    joiners: Wakers,
}

/// The threads (not workers) sleeping until a task or a group ends: the end
/// unparks them, so a join from the main thread returns when the task ends,
/// not when its sleep between checks times out. Registration happens before
/// the waiter's last check and the end stores its flag before it looks here,
/// so one of the two sees the other (the lock orders them).
#[derive(Default)]
struct Wakers {
    threads: Mutex<Vec<Thread>>,
}

impl Wakers {
    fn register(&self) {
        let me = std::thread::current();
        let mut t = self.threads.lock();
        if !t.iter().any(|x| x.id() == me.id()) {
            t.push(me);
        }
    }

    /// Unparks the registered threads; counts them in `woken`.
    fn wake(&self, woken: &AtomicU64) {
        let threads: Vec<Thread> = std::mem::take(&mut *self.threads.lock());
        if threads.is_empty() {
            return;
        }
        woken.fetch_add(threads.len() as u64, Ordering::Relaxed);
        for t in threads {
            t.unpark();
        }
    }
}

/// A task that can be waited for ([`TaskHandle::join`]). Dropping the handle
/// does not stop the task (it still ends before the runtime finalizes).
pub struct TaskHandle<T> {
    state: Arc<TaskState<T>>,
    pool: Arc<Pool>,
}

impl<T> std::fmt::Debug for TaskHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskHandle")
            .field("done", &self.state.done.load(Ordering::Relaxed))
            .finish()
    }
}

impl<T> TaskHandle<T> {
    /// Whether the task has ended.
    pub fn is_done(&self) -> bool {
        self.state.done.load(Ordering::Acquire)
    }

    /// Waits for the task (running other tasks meanwhile when called from a
    /// task) and returns its value, or why it failed. Everything the task
    /// stored is visible after this returns.
    pub fn join(self) -> Result<T> {
        let s = &self.state;
        self.pool
            .wait_until_or_woken(|| s.done.load(Ordering::Acquire), Some(&s.joiners));
        s.result
            .lock()
            .take()
            .unwrap_or_else(|| Err(Error::State("task result taken twice".into())))
    }
}

/// A set of tasks waited for together (Chapel's `sync { ... }`): tasks
/// started in the group may start more tasks in it; waiting returns when all
/// of them have ended.
#[derive(Clone, Default)]
pub struct Group {
    inner: Arc<GroupInner>,
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("pending", &self.inner.pending.load(Ordering::Relaxed))
            .finish()
    }
}

#[derive(Default)]
struct GroupInner {
    pending: AtomicUsize,
    first_error: Mutex<Option<Error>>,
    waiters: Wakers,
}

impl Group {
    /// An empty group.
    pub fn new() -> Group {
        Group::default()
    }

    /// Tasks started in the group that have not ended yet.
    pub fn pending(&self) -> usize {
        self.inner.pending.load(Ordering::Acquire)
    }
}

/// The text of a panic payload.
pub(crate) use amhandler::panic_text;

#[cfg(test)]
mod tests {
    use super::*;
    use amhandler::Spawner;
    use std::time::Instant;

    fn pool(workers: usize, hooks: Arc<dyn Hooks>) -> Arc<Pool> {
        Pool::start(
            PoolConfig {
                workers,
                cores: None,
                block_wait: false,
                locale: 0,
                poll_window: Duration::from_micros(200),
            },
            hooks,
        )
        .unwrap()
    }

    fn fib(p: &Arc<Pool>, n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let q = p.clone();
        let a = p.spawn(move || fib(&q, n - 1)).unwrap();
        let b = fib(p, n - 2);
        a.join().unwrap() + b
    }

    /// A thread that is not a worker and sleeps in a join or a group wait
    /// is unparked by the end of the task (counted), not left to its
    /// sleep's timeout: each task here ends only once the waiter is
    /// registered, so the wake must have happened.
    #[test]
    fn non_worker_waits_are_woken_by_the_end() {
        let p = pool(1, Arc::new(NoHooks));
        let state = Arc::new(std::sync::OnceLock::<Arc<TaskState<u32>>>::new());
        let s2 = state.clone();
        let h = p
            .spawn(move || {
                let s = loop {
                    match s2.get() {
                        Some(s) => break s,
                        None => std::thread::yield_now(),
                    }
                };
                while s.joiners.threads.lock().is_empty() {
                    std::thread::yield_now();
                }
                7
            })
            .unwrap();
        let _ = state.set(h.state.clone());
        assert_eq!(h.join().unwrap(), 7);
        assert_eq!(p.stats().joins_woken, 1, "{:?}", p.stats());

        let g = Group::new();
        let inner = g.inner.clone();
        p.spawn_in(&g, move || {
            while inner.waiters.threads.lock().is_empty() {
                std::thread::yield_now();
            }
        })
        .unwrap();
        p.wait_group(&g).unwrap();
        assert_eq!(p.stats().joins_woken, 2, "{:?}", p.stats());
    }

    #[test]
    fn task_tree_deeper_than_workers_completes_by_helping() {
        let p = pool(1, Arc::new(NoHooks));
        let q = p.clone();
        // Depth 18 with one worker: every join waits while its child is queued.
        let h = p.spawn(move || fib(&q, 18)).unwrap();
        assert_eq!(h.join().unwrap(), 2584);
        assert!(p.stats().helped > 100, "{:?}", p.stats());
        // A chain deeper than the worker count, each link waiting on the next.
        fn chain(p: &Arc<Pool>, d: u32) -> u32 {
            if d == 0 {
                return 0;
            }
            let q = p.clone();
            p.spawn(move || chain(&q, d - 1)).unwrap().join().unwrap() + 1
        }
        let q = p.clone();
        assert_eq!(
            p.spawn(move || chain(&q, 500)).unwrap().join().unwrap(),
            500
        );
        p.shutdown();
    }

    #[derive(Default)]
    struct Counting {
        created: AtomicU64,
        ended: AtomicU64,
        started: AtomicU64,
        fail_end: AtomicBool,
    }

    impl Hooks for Counting {
        fn worker_start(&self, _: usize) -> Result<()> {
            self.started.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
        fn task_create(&self) -> Result<()> {
            self.created.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
        fn task_end(&self) -> Result<()> {
            self.ended.fetch_add(1, Ordering::SeqCst);
            if self.fail_end.load(Ordering::SeqCst) {
                return Err(Error::State("end hook failed".into()));
            }
            Ok(())
        }
        fn on_start(&self) -> Result<()> {
            Ok(())
        }
        fn after_job(&self) {}
    }

    #[test]
    fn hooks_run_once_per_task_and_before_the_child_and_the_joiner() {
        let h = Arc::new(Counting::default());
        let p = pool(2, h.clone());
        assert_eq!(h.started.load(Ordering::SeqCst), 2);
        let g = Group::new();
        for i in 0..200u64 {
            let hh = h.clone();
            p.spawn_in(&g, move || {
                // The creator's hook ran before this child could start.
                assert!(hh.created.load(Ordering::SeqCst) > i);
            })
            .unwrap();
        }
        p.wait_group(&g).unwrap();
        assert_eq!(h.created.load(Ordering::SeqCst), 200);
        // Every task_end ran before the group wait returned.
        assert_eq!(h.ended.load(Ordering::SeqCst), 200);
        h.fail_end.store(true, Ordering::SeqCst);
        let e = p.spawn(|| 1).unwrap().join().unwrap_err().to_string();
        assert!(e.contains("end hook failed"), "{e}");
        p.shutdown();
    }

    #[test]
    fn panics_become_errors_and_groups_nest() {
        let p = pool(2, Arc::new(NoHooks));
        let e = p
            .spawn(|| panic!("boom {}", 7))
            .unwrap()
            .join()
            .unwrap_err();
        assert!(e.to_string().contains("boom 7"), "{e}");
        let count = Arc::new(AtomicU64::new(0));
        let g = Group::new();
        for _ in 0..10 {
            let (p2, g2, c2) = (p.clone(), g.clone(), count.clone());
            p.spawn_in(&g, move || {
                for _ in 0..10 {
                    let c3 = c2.clone();
                    p2.spawn_in(&g2, move || {
                        c3.fetch_add(1, Ordering::SeqCst);
                    })
                    .unwrap();
                }
            })
            .unwrap();
        }
        p.wait_group(&g).unwrap();
        assert_eq!(count.load(Ordering::SeqCst), 100);
        assert_eq!(g.pending(), 0);
        p.shutdown();
        assert!(matches!(p.spawn(|| ()), Err(Error::Finalized)));
    }

    #[test]
    fn am_jobs_run_and_non_workers_do_not_help() {
        let p = pool(1, Arc::new(NoHooks));
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        Spawner::spawn(&*p, Box::new(move || f.store(true, Ordering::SeqCst)));
        let t = Instant::now();
        while !flag.load(Ordering::SeqCst) {
            assert!(t.elapsed() < Duration::from_secs(10));
            std::thread::yield_now();
        }
        assert!(!Spawner::help(&*p), "the test thread is no worker");
        let t = Instant::now();
        while !Spawner::idle(&*p) {
            assert!(t.elapsed() < Duration::from_secs(10));
            std::thread::yield_now();
        }
        Spawner::shutdown(&*p);
    }

    #[test]
    fn workers_are_pinned_when_asked() {
        let cores: Vec<usize> = core_affinity::get_core_ids()
            .unwrap_or_default()
            .into_iter()
            .map(|c| c.id)
            .collect();
        let p = Pool::start(
            PoolConfig {
                workers: 2,
                cores: Some(cores.clone()),
                block_wait: false,
                locale: 0,
                poll_window: Duration::from_micros(200),
            },
            Arc::new(NoHooks),
        )
        .unwrap();
        assert_eq!(p.workers(), 2);
        p.shutdown();
        // A core that does not exist is an error naming it.
        let e = Pool::start(
            PoolConfig {
                workers: 1,
                cores: Some(vec![100_000]),
                block_wait: false,
                locale: 0,
                poll_window: Duration::from_micros(200),
            },
            Arc::new(NoHooks),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("100000"), "{e}");
    }
}
