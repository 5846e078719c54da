//! The receive side's shared state: who polls the receive CQ (the AM
//! poller, or an idle worker or waiting thread covering in its place) and
//! how a covered poller sleeps and takes over.
//!
//! Exists as its own module below both `am.rs` (the `Am` holds one) and
//! `handler.rs` (the poller thread and the cover protocol use it), so that
//! neither of those imports the other for it: the crate's modules form
//! layers.

use crate::config::AmConfig;
use crate::cover::{Heartbeat, LocalCover};
use comm_ofi::ofi::CqEntry;
use comm_ofi::Comm;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Completions read per `poll_rx` call (comm-ofi's receive CQ size).
const RX_BATCH: usize = 1024;

/// The receive side's state, shared by the poller thread, idle workers of
/// the runtime and threads waiting for a reply (whoever holds the lock
/// polls; a worker that polls answers an on-statement without a hop, a
/// waiter that polls takes its own reply without one).
pub(crate) struct PollShared {
    pub(crate) state: parking_lot::Mutex<PollState>,
    pub(crate) policy: comm_ofi::IdlePolicy,
    /// Idle workers and waiting threads may poll in the poller's place:
    /// everything the receive side does is a store, a hand-over or an
    /// injected answer, never a wait for the network.
    pub(crate) workers: bool,
    /// Where CQ waits block (`sockets`): a thread polling in the poller's
    /// place does so only while it covers, and *waits* in the CQ as the
    /// poller would (a spinning poll there starves the provider's internal
    /// progress thread). See [`BlockingCover`].
    pub(crate) blocking: Option<BlockingCover>,
    /// Where peers do not all map this locale (the provider path), nobody
    /// rings a sleeping poller: the cover is this process-local flag, and
    /// the poller parks while it is set (see [`LocalCover`]).
    pub(crate) local: Option<LocalCover>,
    /// A worker covers for the poller (at most one at a time).
    pub(crate) coverer: std::sync::atomic::AtomicBool,
    /// Bumped by each worker poll: a covered poller that sees it stand
    /// still takes over (the worker runs a task).
    pub(crate) heartbeat: Heartbeat,
}

/// The cover where CQ waits block. The poller waits in the receive CQ with
/// a 50 ms timeout; a thread that starts to cover while it does so ends
/// that wait with `fi_cq_signal` (a Dekker pair: the poller announces its
/// wait, then checks the cover; the coverer sets the cover, then checks for
/// a waiting poller; the signal stays set until a read takes it, so one
/// sent just before the wait still ends it). The coverer then takes the
/// lock and waits in the CQ itself, so the request it receives runs on it
/// and the reply it receives wakes it: one wake-up each, as a raw
/// send/recv round trip has. Whoever hands it work meanwhile (the runtime's
/// pool, finalize) interrupts its wait the same way.
pub(crate) struct BlockingCover {
    /// The poller is in (or about to enter) its CQ wait.
    pub(crate) poller_waits: std::sync::atomic::AtomicBool,
    /// A coverer is in its CQ wait: alive, though its heartbeat stands
    /// still.
    pub(crate) coverer_waits: std::sync::atomic::AtomicBool,
}

pub(crate) struct PollState {
    // As many entries as comm-ofi's receive CQ holds (1024): one read
    // empties it. shm refuses to post a receive buffer while its receive CQ
    // is full ("not enough space to post recv", -ENOMEM); reading only a few
    // entries per call lets a flood of small AMs keep it full, the retired
    // half is never reposted, the other half retires too, and the
    // unexpected messages then hold every receive entry for good.
    pub(crate) buf: Vec<CqEntry>,
    // Landing-zone halves retired but not yet reposted (the provider may
    // refuse a repost for a while: shm answers -ENOMEM while its receive
    // entries are in use; retried after the next completions, as the
    // original does for -FI_EAGAIN).
    pub(crate) pending: [bool; 2],
    pub(crate) deferred_since: Option<std::time::Instant>,
}

// SAFETY: the completion entries hold raw pointers the provider wrote
// (landing-zone addresses, contexts); they are only read under the mutex by
// whichever thread polls, and point into memory that lives as long as the Am.
unsafe impl Send for PollState {}

/// How long a covered poller parks on the provider path before it checks
/// that its coverer still polls.
const LOCAL_COVER_CHECK: Duration = Duration::from_micros(100);
/// The same where CQ waits block: each check wakes the poller on a core the
/// provider's internal progress thread spins on, and that provider's round trip is
/// hundreds of microseconds anyway.
const BLOCKING_COVER_CHECK: Duration = Duration::from_millis(1);
/// Checks in a row that must find the coverer out of its CQ wait with a
/// still heartbeat before the poller takes over where CQ waits block: a
/// coverer that answered a request may spend a millisecond and more on a
/// send there (the provider's internal progress thread holds the core), and a
/// take-over sends the next requests through the handler thread and makes
/// the coverer wait for the poller's CQ wait to end.
pub(crate) const BLOCKING_STALE_CHECKS: u32 = 3;
/// The same where the poller spins: one check (a take-over while the
/// coverer still polls costs only the poller's own polls there).
pub(crate) const LOCAL_STALE_CHECKS: u32 = 1;
/// How long a coverer waits in the CQ at a time where CQ waits block (an
/// interrupt ends it earlier).
pub(crate) const COVER_WAIT_MS: i32 = 10;

impl PollShared {
    pub(crate) fn new(comm: &Comm, cfg: &AmConfig, block_wait: bool) -> PollShared {
        let policy = comm.idle_policy();
        let workers = cfg.worker_poll;
        PollShared {
            workers,
            blocking: (workers && block_wait).then(|| BlockingCover {
                poller_waits: std::sync::atomic::AtomicBool::new(false),
                coverer_waits: std::sync::atomic::AtomicBool::new(false),
            }),
            local: (workers && (block_wait || !policy.may_sleep())).then(|| {
                if block_wait {
                    LocalCover::new(BLOCKING_COVER_CHECK, BLOCKING_STALE_CHECKS)
                } else {
                    LocalCover::new(LOCAL_COVER_CHECK, LOCAL_STALE_CHECKS)
                }
            }),
            policy,
            state: parking_lot::Mutex::new(PollState {
                buf: vec![CqEntry::default(); RX_BATCH],
                pending: [false; 2],
                deferred_since: None,
            }),
            coverer: std::sync::atomic::AtomicBool::new(false),
            heartbeat: Heartbeat::default(),
        }
    }
}

impl PollShared {
    /// The calling thread polls in the poller's place from now on.
    pub(crate) fn cover(&self) {
        match &self.local {
            Some(l) => l.cover(),
            None => self.policy.cover(),
        }
    }

    /// The coverer stops polling; the poller takes over (on the provider
    /// path it is unparked at once: no sender rings it there).
    pub(crate) fn uncover(&self) {
        match &self.local {
            Some(l) => l.uncover(),
            None => self.policy.uncover(),
        }
    }

    /// The poller's side: while covered, sleeps a little and returns true;
    /// takes over if the coverer's heartbeat stood still meanwhile (and it
    /// is not waiting in the CQ).
    pub(crate) fn sleep_while_covered(&self) -> bool {
        let Some(l) = &self.local else {
            return self.policy.sleep_while_covered(|| self.heartbeat.read());
        };
        if !l.covered() {
            return false;
        }
        if let Some(b) = &self.blocking {
            // Not in the CQ wait after all: a coverer need not signal.
            b.poller_waits.store(false, Ordering::Release);
        }
        l.check(&self.heartbeat, std::thread::park_timeout, || {
            self.blocking
                .as_ref()
                .is_some_and(|b| b.coverer_waits.load(Ordering::Acquire))
        });
        true
    }
}
