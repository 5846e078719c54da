//! How the receive pollers (comm-ofi's start-up progress thread, the AM
//! poller) behave when idle ([`IdlePolicy`]: spin, then sleep on the mapped
//! path's doorbell where no peer needs this locale's progress), and the
//! start-up progress thread itself.

use crate::env::Config;
use crate::error::{Error, Result};
use crate::mapped::Mapped;
use crate::ofi::{Cq, CqEntry, Endpoint, WaitMode};
use crate::provider::ProviderInfo;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// How a receive poller behaves when it finds nothing: keep polling
/// (yielding) while peers may need its progress; otherwise poll for
/// `PGAS_POLL_SPIN_US` after the last completion, then sleep on the
/// doorbell until a mapped peer rings it (or a timeout passes).
#[derive(Debug, Clone)]
pub struct IdlePolicy {
    mapped: Option<Arc<Mapped>>,
    spin: std::time::Duration,
}

/// Longest doorbell sleep: bounds the delay if a wake-up were ever missed.
const DOORBELL_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(50);
/// How often a covered poller checks that its worker still polls.
const COVER_CHECK: std::time::Duration = std::time::Duration::from_micros(200);

impl IdlePolicy {
    pub(super) fn new(cfg: &Config, prov: &ProviderInfo, mapped: &Arc<Mapped>) -> IdlePolicy {
        // Blocking CQ waits block already; some providers need the
        // receiver's progress to complete a send (keep polling).
        let may_sleep = mapped.rung_by_all()
            && prov.wait == WaitMode::Spin
            && !crate::quirks::sends_need_receiver_progress(&prov.name);
        IdlePolicy {
            mapped: may_sleep.then(|| mapped.clone()),
            spin: std::time::Duration::from_micros(cfg.poll_spin_us),
        }
    }

    /// Whether the poller blocks when idle (every peer maps this locale and
    /// rings it; nothing needs its progress for RMA).
    pub fn may_sleep(&self) -> bool {
        self.mapped.is_some()
    }

    /// If a worker covers for the poller ([`IdlePolicy::cover`]), sleeps a
    /// little and returns true; if meanwhile the worker's `heartbeat` (a
    /// count it bumps each poll) did not move, it is busy with a task, and
    /// the poller takes over (senders wake it again).
    pub fn sleep_while_covered(&self, heartbeat: impl Fn() -> u64) -> bool {
        match &self.mapped {
            Some(m) if m.covered() => {
                let before = heartbeat();
                m.sleep(COVER_CHECK);
                if heartbeat() == before {
                    m.take_over();
                }
                true
            }
            _ => false,
        }
    }

    /// A worker polls in the poller's place (see `Mapped::cover`); only
    /// where the poller may sleep. Cheap when it covers already.
    pub fn cover(&self) {
        if let Some(m) = &self.mapped {
            if !m.covered() {
                m.cover();
            }
        }
    }

    /// The worker stops polling; it must poll once more afterwards.
    pub fn uncover(&self) {
        if let Some(m) = &self.mapped {
            m.uncover();
        }
    }

    /// Called when a poll found nothing, `idle_since` being when the last
    /// completion came. Returns at once while the poller should keep
    /// polling (after a yield once it has been idle a little); otherwise
    /// announces the sleep, calls `poll_again` (which must poll once and
    /// say whether it found anything) and sleeps only if it found nothing.
    /// Returns whether it slept.
    pub fn idle(
        &self,
        idle_since: std::time::Instant,
        idle_polls: u32,
        poll_again: impl FnOnce() -> bool,
    ) -> bool {
        match &self.mapped {
            Some(m) if idle_since.elapsed() >= self.spin => {
                m.prepare_sleep();
                if poll_again() {
                    m.cancel_sleep();
                    return false;
                }
                m.sleep(DOORBELL_TIMEOUT);
                true
            }
            _ => {
                if idle_polls > 16 {
                    std::thread::yield_now();
                }
                false
            }
        }
    }
}

/// Starts the start-up progress thread `pgas-progress`: it reads the
/// receive CQ (manual progress for RMA against this locale) until
/// [`Comm::stop_startup_progress`] (an AM layer's poller takes over, or
/// finalize).
pub(super) fn spawn_startup_progress(
    rx_ep: Arc<Endpoint>,
    stop: Arc<AtomicBool>,
    serial: Option<crate::ctx::DomainLock>,
    idle: IdlePolicy,
) -> Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("pgas-progress".into())
        .spawn(move || {
            let cq: &Cq = rx_ep.rx_cq();
            let mut buf = [CqEntry::default(); 8];
            let read = |buf: &mut [CqEntry]| {
                let guard = serial.as_ref().map(|l| l.lock());
                let r = cq.read(buf, 100);
                drop(guard);
                r
            };
            let mut since = std::time::Instant::now();
            let mut polls = 0u32;
            while !stop.load(Ordering::Acquire) {
                match read(&mut buf) {
                    Ok(0) => {
                        polls = polls.saturating_add(1);
                        if cq.wait_mode() == WaitMode::Spin {
                            // Only a completion restarts the spinning.
                            idle.idle(since, polls, || {
                                stop.load(Ordering::Acquire) || !matches!(read(&mut buf), Ok(0))
                            });
                        }
                    }
                    Ok(_) => {
                        since = std::time::Instant::now();
                        polls = 0;
                    }
                    Err(e) => tracing::warn!("start-up progress thread: {}", e.error),
                }
            }
        })
        .map_err(|e| Error::Unsupported(format!("cannot start the start-up progress thread: {e}")))
}
