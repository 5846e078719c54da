//! What the tasking layer asks of the layers around it.
//!
//! Exists apart from the pool so that the contract (the MCM boundaries a
//! runtime must honour, the idle-time polling) reads on its own.

use crate::error::Result;

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
    /// A thread waits in [`Pool::wait_until`](super::Pool::wait_until) with nothing to help with:
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
    /// Where waits block (see [`Pool::start`](super::Pool::start)'s `block_wait`): called by an
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
