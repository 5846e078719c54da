//! Waiting without blocking a worker: a waiting task runs other ready tasks
//! on its own stack (`Pool::help`); other threads back off and sleep, woken
//! early by whoever ends what they wait for (`Wakers`).
//!
//! Exists because this is what makes task trees and nested on-statements
//! deeper than the number of workers complete (see the module map in
//! `mod.rs`), and its back-off is tuned per provider kind.

use super::local::NO_HELP;
use super::pool::Pool;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::Thread;
use std::time::Duration;

impl Pool {
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
    pub(super) fn wait_until_or_woken(
        &self,
        mut done: impl FnMut() -> bool,
        wakers: Option<&Wakers>,
    ) {
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
}

/// The threads (not workers) sleeping until a task or a group ends: the end
/// unparks them, so a join from the main thread returns when the task ends,
/// not when its sleep between checks times out. Registration happens before
/// the waiter's last check and the end stores its flag before it looks here,
/// so one of the two sees the other (the lock orders them).
#[derive(Default)]
pub(super) struct Wakers {
    pub(super) threads: Mutex<Vec<Thread>>,
}

impl Wakers {
    pub(super) fn register(&self) {
        let me = std::thread::current();
        let mut t = self.threads.lock();
        if !t.iter().any(|x| x.id() == me.id()) {
            t.push(me);
        }
    }

    /// Unparks the registered threads; counts them in `woken`.
    pub(super) fn wake(&self, woken: &AtomicU64) {
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
