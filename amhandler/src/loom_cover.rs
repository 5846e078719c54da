//! Loom over the provider path's cover heartbeat (`cover.rs`, the
//! functions `PollShared` and the worker's poll call; `comm_ofi::sync`'s
//! atomics swapped for loom's): a worker covers for the AM poller and polls
//! a few times, then goes off to run a task without uncovering; a request
//! arrives meanwhile. Whatever the interleaving, the poller takes the
//! cover back and polls within a bounded number of its checks (each
//! check's park is modelled as its timeout expiring: a yield), so the
//! request is taken. The negative control is a poller that trusts its
//! coverer (it never finds it stalled): loom finds it parked on behind the
//! stalled cover past the bound.
//!
//! Not modelled: uncovering's unpark (a park ends on it or on its timeout;
//! loom has no timed park, and a lost unpark shows as a deadlock, which
//! loom reports by aborting the test binary), and the start-up race
//! between the poller registering its thread and a first uncover (bounded
//! by the check's timeout).
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p amhandler --release --lib loom_cover`

use crate::cover::{Heartbeat, LocalCover};
use crate::poll::{BLOCKING_STALE_CHECKS, LOCAL_STALE_CHECKS};
use comm_ofi::sync::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;
use std::time::Duration;

/// Polls the covering worker makes before it goes off to a task.
const WORKER_POLLS: u32 = 2;

struct Locale {
    cover: LocalCover,
    heartbeat: Heartbeat,
    /// A request in the receive CQ.
    msg: AtomicBool,
    /// Someone polled it.
    taken: AtomicBool,
}

impl Locale {
    fn new(stale_checks: u32) -> Arc<Locale> {
        Arc::new(Locale {
            cover: LocalCover::new(Duration::from_micros(100), stale_checks),
            heartbeat: Heartbeat::default(),
            msg: AtomicBool::new(false),
            taken: AtomicBool::new(false),
        })
    }

    /// A poll of the receive CQ: takes the request if there is one.
    fn poll(&self) -> bool {
        if self.msg.load(Ordering::Acquire) {
            self.taken.store(true, Ordering::Release);
            return true;
        }
        self.taken.load(Ordering::Acquire)
    }

    /// A worker's poll in the poller's place (`Am::poll_here` on the
    /// provider path): cover, beat, poll.
    fn worker_poll(&self) {
        self.cover.cover();
        self.heartbeat.beat();
        self.poll();
    }

    /// The AM poller (`handler.rs`'s loop with `sleep_while_covered`):
    /// while covered, one check at a time; else poll. Returns once it
    /// polled the request (or saw it taken); fails if it made more than
    /// `bound` covered checks in a row.
    fn poller(&self, bound: u32) {
        let mut in_a_row = 0;
        loop {
            if self.cover.covered() {
                self.cover
                    .check(&self.heartbeat, |_| thread::yield_now(), || false);
                in_a_row += 1;
                assert!(
                    in_a_row <= bound,
                    "the poller stayed parked behind a coverer that stopped polling"
                );
                continue;
            }
            in_a_row = 0;
            if self.poll() {
                return;
            }
            thread::yield_now();
        }
    }
}

/// The bound on covered checks in a row with `stale_checks` (`s`) and
/// `P` = [`WORKER_POLLS`]: a check either saw the heartbeat move (at most
/// `P` of them: one per beat, as a location's values are read in order),
/// or counted towards a take-over; `s` such in a row take over, fewer are
/// reset by a move (at most `s - 1` before each of the `P` moves); and the
/// checks go on after a take-over only if a later cover undid it (one per
/// poll: at most `P + 1` take-overs). So at most `P + P (s - 1) + (P + 1) s
/// = (2P + 1) s`. (Loom's largest with a preemption bound of 3: 4 of 5
/// allowed for `s` = 1, 6 of 15 for `s` = 3.)
fn bound(stale_checks: u32) -> u32 {
    (2 * WORKER_POLLS + 1) * stale_checks
}

/// The scenario: the poller with `stale_checks` (the bound is the one the
/// production value `expected` allows), a worker that polls
/// [`WORKER_POLLS`] times and goes off without uncovering, a request sent
/// meanwhile.
fn stalled_cover(stale_checks: u32, expected: u32) {
    let l = Locale::new(stale_checks);
    let p = {
        let l = l.clone();
        thread::spawn(move || l.poller(bound(expected)))
    };
    let w = {
        let l = l.clone();
        thread::spawn(move || {
            for _ in 0..WORKER_POLLS {
                l.worker_poll();
            }
        })
    };
    l.msg.store(true, Ordering::Release);
    w.join().unwrap();
    p.join().unwrap();
    assert!(l.taken.load(Ordering::Acquire));
}

/// A preemption bound of 3 (`LOOM_MAX_PREEMPTIONS` overrides it): three
/// threads and spinning loops are not exhausted unbounded in CI time.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

#[test]
fn loom_a_stalled_cover_is_taken_over_where_the_poller_spins() {
    model(|| stalled_cover(LOCAL_STALE_CHECKS, LOCAL_STALE_CHECKS));
}

#[test]
fn loom_a_stalled_cover_is_taken_over_where_cq_waits_block() {
    model(|| stalled_cover(BLOCKING_STALE_CHECKS, BLOCKING_STALE_CHECKS));
}

#[test]
fn loom_a_poller_that_trusts_its_cover_is_caught() {
    // Negative control: a poller that never finds its coverer stalled
    // (as one without the heartbeat) parks on behind a worker that went
    // off to a task, past any bound.
    let found = std::panic::catch_unwind(|| model(|| stalled_cover(u32::MAX, LOCAL_STALE_CHECKS)));
    assert!(
        found.is_err(),
        "loom did not find the poller parked behind a stalled cover"
    );
}
