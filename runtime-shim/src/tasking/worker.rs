//! The loop of a worker thread: run ready tasks; while idle, poll for
//! incoming requests in the AM poller's place for a while, then spin, yield,
//! wait in the receive queue (where waits block) or park.
//!
//! Exists apart from the pool's state because it is the one policy of how
//! an idle worker spends its core, tuned on its own.

use super::pool::Pool;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl Pool {
    pub(super) fn worker_loop(&self, me: usize) {
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
}
