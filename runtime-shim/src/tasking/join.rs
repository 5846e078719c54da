//! Starting tasks and waiting for them: `Pool::spawn` with its
//! `TaskHandle`, and groups (`Pool::spawn_in`, `Pool::wait_group`), each
//! with the MCM task-create / task-end hooks around the body.
//!
//! Exists as the user-facing half of the pool: what `Runtime::spawn`,
//! `begin` and `sync` are built on.

use super::local::NO_HELP;
use super::pool::{running, Job, Kind, Pool};
use super::wait::Wakers;
use crate::error::{Error, Result};
use amhandler::panic_text;
use parking_lot::Mutex;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

impl Pool {
    /// Starts a task running `f` and returns its handle. The creator's stores
    /// are made visible first ([`Hooks::task_create`](super::Hooks::task_create)).
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
        let body: Job = Box::new(move || {
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
        });
        // The body sits in a cell shared by the queued entry and the handle:
        // whoever takes it first runs it (a worker, or the joiner: see
        // `TaskHandle::join`); the other finds it empty.
        let claim: Claim = Arc::new(Mutex::new(Some(body)));
        let queued = claim.clone();
        self.push(
            Kind::User,
            Box::new(move || {
                let body = queued.lock().take();
                if let Some(body) = body {
                    body();
                }
            }),
        );
        Ok(TaskHandle {
            state,
            claim,
            pool: self.clone(),
        })
    }

    /// Runs a task's body that its joiner claimed before any worker took
    /// it, on the joining thread, as a worker would have (it is counted as
    /// running there, nested on whatever the thread runs).
    fn run_claimed(&self, body: Job) {
        running(self.next_id.fetch_add(1, Ordering::Relaxed), body);
        self.inlined.fetch_add(1, Ordering::Relaxed);
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
}

pub(super) struct TaskState<T> {
    pub(super) done: AtomicBool,
    pub(super) result: Mutex<Option<Result<T>>>,
    pub(super) joiners: Wakers,
}

/// A task that can be waited for ([`TaskHandle::join`]). Dropping the handle
/// does not stop the task (it still ends before the runtime finalizes).
pub struct TaskHandle<T> {
    pub(super) state: Arc<TaskState<T>>,
    /// The body while no thread has taken it.
    pub(super) claim: Claim,
    pub(super) pool: Arc<Pool>,
}

/// A task's body until a thread takes it to run it.
pub(super) type Claim = Arc<Mutex<Option<Job>>>;

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
    ///
    /// A task no worker has taken yet runs on the joining thread (as
    /// work-first schedulers do): the join then costs no hand-over to a
    /// worker and back, which on a busy machine is a wake-up and a
    /// scheduler slice each way. Not in a no-help scope (a lock's protocol:
    /// see `crate::lock`), where the thread must not run other tasks, and
    /// not with `PGAS_JOIN_RUNS_QUEUED=0`.
    pub fn join(self) -> Result<T> {
        if self.pool.join_runs_queued && NO_HELP.with(|c| c.get()) == 0 {
            let body = self.claim.lock().take();
            if let Some(body) = body {
                self.pool.run_claimed(body);
            }
        }
        self.join_on_worker()
    }

    /// [`TaskHandle::join`] that never runs the task on the calling thread:
    /// a worker does (or a waiting task helping). For callers that mean "in
    /// a task on a worker", whose transmit context and helping differ from
    /// the joiner's: measurements and tests of the worker's path.
    pub fn join_on_worker(self) -> Result<T> {
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
    pub(super) inner: Arc<GroupInner>,
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("pending", &self.inner.pending.load(Ordering::Relaxed))
            .finish()
    }
}

#[derive(Default)]
pub(super) struct GroupInner {
    pub(super) pending: AtomicUsize,
    pub(super) first_error: Mutex<Option<Error>>,
    pub(super) waiters: Wakers,
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
