//! The provider path's cover: an idle worker polls the receive CQ in the
//! AM poller's place, the poller parks meanwhile, and takes over when the
//! worker stops polling without saying so (it went off to run a task).
//!
//! Exists apart from `poll.rs` (which holds one, beside the blocking
//! cover's Dekker pair) so that the hand-over is the same code in
//! production and in the loom models (`src/loom_cover.rs`, run with
//! `--cfg loom`): its atomics and the poller's thread handle come from
//! `comm_ofi::sync`, and the timed park is the caller's.
//!
//! The rules: a coverer [`LocalCover::cover`]s, then [`Heartbeat::beat`]s
//! before each poll; the poller, while [`LocalCover::covered`], parks one
//! check at a time ([`LocalCover::check`]) and takes the cover back
//! (stores `covered = false`) once `stale_checks` checks in a row found
//! the heartbeat where it was before the park (and the coverer not waiting
//! in the CQ); [`LocalCover::uncover`] ends the cover and unparks the
//! poller at once. The bound the models check: after the coverer's last
//! beat, the poller polls again within a bounded number of checks (there,
//! every park is a check's timeout that expired), so a coverer that went
//! off to compute holds up this locale's progress for a bounded time.

use comm_ofi::sync::{AtomicBool, AtomicU32, AtomicU64, Ordering, Thread};
use std::sync::OnceLock;
use std::time::Duration;

/// Bumped by each poll of a worker (covering or not): a covered poller
/// that sees it stand still takes over.
#[derive(Default)]
pub(crate) struct Heartbeat(AtomicU64);

impl Heartbeat {
    /// A worker is about to poll.
    #[inline]
    pub(crate) fn beat(&self) {
        // Relaxed: only its changing matters, and one location's values are
        // seen in their order (coherence).
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// The count so far.
    #[inline]
    pub(crate) fn read(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The cover of the provider path. There, polling also moves RMA that
/// targets this locale (manual progress), so a covered poller parks only
/// one check at a time and takes over as soon as the coverer stops
/// polling (its heartbeat stands still): a coverer that went off to run a
/// task or compute holds up this locale's progress for at most
/// `stale_checks` checks. Uncovering unparks the poller at once.
pub(crate) struct LocalCover {
    covered: AtomicBool,
    /// The poller thread (set when it starts).
    poller: OnceLock<Thread>,
    /// How long the covered poller parks before it checks that its coverer
    /// still polls.
    check: Duration,
    /// Checks in a row that must find the coverer stalled before the poller
    /// takes over.
    stale_checks: u32,
    /// Checks in a row that found it stalled (the poller's own count).
    stale: AtomicU32,
    /// Checks in a row that found it waiting in the CQ (the poller's own
    /// count; only where CQ waits block).
    waited: AtomicU32,
}

impl LocalCover {
    /// A cover nobody holds; the covered poller checks every `check`, and
    /// takes over after `stale_checks` checks in a row found the coverer
    /// stalled.
    pub(crate) fn new(check: Duration, stale_checks: u32) -> LocalCover {
        LocalCover {
            covered: AtomicBool::new(false),
            poller: OnceLock::new(),
            check,
            stale_checks,
            stale: AtomicU32::new(0),
            waited: AtomicU32::new(0),
        }
    }

    /// The poller thread, which [`LocalCover::uncover`] unparks.
    pub(crate) fn set_poller(&self, t: Thread) {
        let _ = self.poller.set(t);
    }

    /// The calling thread polls in the poller's place from now on.
    #[inline]
    pub(crate) fn cover(&self) {
        // SeqCst: one half of the blocking cover's Dekker pair (`poll.rs`).
        self.covered.store(true, Ordering::SeqCst);
    }

    /// The coverer stops polling: the poller is unparked at once (no
    /// sender rings it on this path).
    pub(crate) fn uncover(&self) {
        self.covered.store(false, Ordering::Release);
        if let Some(t) = self.poller.get() {
            t.unpark();
        }
    }

    /// Whether a worker covers for the poller.
    #[inline]
    pub(crate) fn covered(&self) -> bool {
        self.covered.load(Ordering::SeqCst)
    }

    /// The covered poller's check: parks (`park(timeout)`: returns when
    /// unparked or the timeout passed), then takes the cover back if the
    /// heartbeat stood still meanwhile and `coverer_waits()` (a coverer
    /// waiting in the CQ is alive) is false, `stale_checks` checks in a row.
    pub(crate) fn check(
        &self,
        heartbeat: &Heartbeat,
        park: impl FnOnce(Duration),
        coverer_waits: impl FnOnce() -> bool,
    ) {
        let before = heartbeat.read();
        // A coverer seen waiting in the CQ is alive for as long as it waits:
        // check it less often each time (1 ms doubling to 32 ms), so an idle
        // locale's poller does not wake a thousand times a second.
        let waited = self.waited.load(Ordering::Relaxed);
        park(self.check * (1 << waited.min(5)));
        let waits = coverer_waits();
        self.waited
            .store(if waits { waited + 1 } else { 0 }, Ordering::Relaxed);
        if heartbeat.read() != before || waits {
            self.stale.store(0, Ordering::Relaxed);
        } else if self.stale.fetch_add(1, Ordering::Relaxed) + 1 >= self.stale_checks {
            self.stale.store(0, Ordering::Relaxed);
            self.covered.store(false, Ordering::Release);
        }
    }
}
