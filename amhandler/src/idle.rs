//! Idle handler threads: how a handler goes to sleep when its queue is
//! empty and how the poller wakes one when it queues work.
//!
//! Exists so that the no-lost-wake-up protocol is written once and
//! model-checked (`src/loom_tests.rs`, run with `--cfg loom`): a handler *registers* as a
//! sleeper, *then* checks the queue once more, and only then parks; the
//! poller *queues* the work, *then* takes a registered sleeper and unparks
//! it. Whichever order the two run in, the work is seen (by the re-check)
//! or the sleeper is woken (an unpark before the park makes the park
//! return at once).

use comm_ofi::sync::{current, Mutex, Thread};

/// The handler threads parked (or about to park) for lack of work.
#[derive(Debug, Default)]
pub(crate) struct Idle {
    sleepers: Mutex<Vec<Thread>>,
}

impl Idle {
    /// Sleeps the calling thread until woken, unless `has_work` holds once
    /// it is registered. `park` parks it (`thread::park_timeout` in
    /// production, which also bounds the cost of any mistake here).
    pub(crate) fn sleep(&self, has_work: impl Fn() -> bool, park: impl FnOnce()) {
        let me = current();
        self.sleepers.lock().push(me.clone());
        if !has_work() {
            park();
        }
        self.sleepers.lock().retain(|t| t.id() != me.id());
    }

    /// Wakes one sleeper, after work was queued.
    pub(crate) fn wake_one(&self) {
        let t = self.sleepers.lock().pop();
        if let Some(t) = t {
            t.unpark();
        }
    }

    /// Wakes every sleeper (shutdown).
    pub(crate) fn wake_all(&self) {
        for t in self.sleepers.lock().drain(..) {
            t.unpark();
        }
    }
}
