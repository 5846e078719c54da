//! Per-thread state of the tasking layer: which pool worker a thread is,
//! the tasks running on it (innermost last), and the no-help scopes of
//! locks.
//!
//! Exists so that the thread-locals every other file of the pool reads are
//! declared once, below them all.

use std::cell::{Cell, RefCell};

thread_local! {
    /// (pool identity, worker index) of a worker thread.
    pub(super) static WORKER: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
    /// Ids of the tasks running on this thread, innermost last.
    pub(super) static RUNNING: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    /// While non-zero, this thread runs no other task when it waits (it is
    /// inside a lock protocol: see `crate::lock`).
    pub(super) static NO_HELP: Cell<u32> = const { Cell::new(0) };
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
