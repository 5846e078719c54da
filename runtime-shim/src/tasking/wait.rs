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
    /// with blocking waits). Where this locale owns a core
    /// (`PoolConfig::spin_waits`), a thread that is not a worker spins for
    /// `SPIN_BUDGET` instead of yielding (`idle_step`).
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
        // A wait that holds at once (a flag ping-pong's answer that came
        // while the caller was on its way here) costs the one check.
        if done() {
            return;
        }
        let mut idle = 0u32;
        let mut naps = 0u32;
        // Whether this thread is a worker does not change while it waits:
        // one look, not one per check (only a worker has tasks to help with).
        let worker = self.current_worker().is_some();
        let spin = self.spin_waits && !worker;
        // Polls while spinning: every `PROGRESS_EVERY_SPINS`-th check where
        // this thread spins in place of yielding (a main thread on a locale
        // that owns a core: the point-to-point waits of a flag ping-pong),
        // every check elsewhere (workers, shared cores: each poll there is
        // also a chance for the tasks and AMs in flight to move on).
        let poll_every = if spin { PROGRESS_EVERY_SPINS } else { 1 };
        let mut since: Option<std::time::Instant> = None;
        let mut waited = Duration::ZERO;
        while !done() {
            // (Only a worker helps, and a worker never spins for the
            // budget: `since` and `waited` stay unset for it.)
            if worker && self.help() {
                idle = 0;
                naps = 0;
                continue;
            }
            idle = idle.saturating_add(1);
            // A spinning wait reads the clock for its budget on the checks
            // that poll, not on each (a clock read is tens of nanoseconds
            // in a virtual machine, as long as the check itself): the
            // budget is overrun by at most 15 checks.
            if spin && idle >= 32 && idle % poll_every == 0 {
                waited = since.get_or_insert_with(std::time::Instant::now).elapsed();
            }
            let step = idle_step(idle, naps, waited, self.block_wait, spin);
            // What we wait for may be a peer's answer to an operation this
            // thread injected, which may sit in our endpoint until we poll:
            // poll before every yield or nap, and every `poll_every`-th
            // check while spinning.
            if step != IdleStep::Spin || idle % poll_every == 0 {
                self.hooks.idle_progress();
            }
            match step {
                IdleStep::Spin => std::hint::spin_loop(),
                IdleStep::Yield => std::thread::yield_now(),
                IdleStep::Nap(nap) => {
                    naps += 1;
                    match wakers {
                        // Registered before the check: an end after the check
                        // finds us and unparks (the token outlives a late park).
                        Some(w) if !worker => {
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
}

/// Where a thread that is not a worker spins in place of yielding
/// (`PoolConfig::spin_waits`), its wait polls the provider's completion
/// queue on every this-many-th failed check, not on each. A poll (about
/// 300 instructions) reads the provider's queues, lines that peers write:
/// in a flag ping-pong on one host, where the answer comes within a few
/// checks, polling on each check made the wait 25-45 ns slower per round
/// trip than the same loop polling every 16th (docs/peers.md, "The flag
/// ping-pong's fixed costs"), and a flag that arrives during a poll is
/// seen only after it. Progress is delayed by at most 15 checks; a nap
/// always polls first. Other waits poll on every check: with every wait
/// at 16, the generated suite's `postpone-unbound` control (MP-AMO on
/// tcp, workers without contexts of their own) saw its hole in 1 of 1,800
/// iterations, against 11-23 with every check polled.
pub(super) const PROGRESS_EVERY_SPINS: u32 = 16;

/// How long a thread that is not a worker spins on a wait before it naps,
/// where this locale owns a core (`PoolConfig::spin_waits`): a flag
/// ping-pong's answer comes well within it, and the yields it replaces
/// hand the core to any other runnable thread for a time slice.
pub const SPIN_BUDGET: Duration = Duration::from_micros(200);

/// What a waiting thread does after its `idle`-th check that found nothing
/// (`naps` taken so far; `waited`: time since it started spinning, counted
/// only where it `spins` in place of yields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IdleStep {
    Spin,
    Yield,
    Nap(Duration),
}

/// The waiting ladder: 32 spins; then where this thread `spins` (a
/// non-worker on a locale that owns a core, not blocking waits) spins until
/// [`SPIN_BUDGET`] passed, else yields up to the 1024th check (never where
/// waits `block`); then naps doubling from 20 us to 320 us (50 to 800 us
/// where waits block), so that a long wait (a main thread in a barrier
/// while others work) does not wake tens of thousands of times a second on
/// a shared core. Where waits block (`sockets`) there are no yields at
/// all: the provider's internal progress thread spins on our core after any
/// traffic, and a yield hands it the core for a whole time slice, while the
/// task we wait for sits behind it (a task that PUT and forced was joined
/// after ~4 ms, a scheduler tick, against ~0.2 ms for its operations).
pub(super) fn idle_step(
    idle: u32,
    naps: u32,
    waited: Duration,
    block: bool,
    spins: bool,
) -> IdleStep {
    if idle < 32 {
        return IdleStep::Spin;
    }
    if block {
        return IdleStep::Nap(Duration::from_micros(50 << naps.min(4)));
    }
    if spins {
        if waited < SPIN_BUDGET {
            return IdleStep::Spin;
        }
    } else if idle < 1024 {
        return IdleStep::Yield;
    }
    IdleStep::Nap(Duration::from_micros(20 << naps.min(4)))
}

#[cfg(test)]
mod idle_tests {
    use super::*;

    #[test]
    fn the_ladder_spins_yields_then_naps_doubling() {
        let z = Duration::ZERO;
        assert_eq!(idle_step(1, 0, z, false, false), IdleStep::Spin);
        assert_eq!(idle_step(32, 0, z, false, false), IdleStep::Yield);
        assert_eq!(idle_step(1023, 0, z, false, false), IdleStep::Yield);
        assert_eq!(
            idle_step(1024, 0, z, false, false),
            IdleStep::Nap(Duration::from_micros(20))
        );
        assert_eq!(
            idle_step(1030, 9, z, false, false),
            IdleStep::Nap(Duration::from_micros(320))
        );
    }

    #[test]
    fn blocking_waits_never_yield() {
        let z = Duration::ZERO;
        assert_eq!(idle_step(31, 0, z, true, false), IdleStep::Spin);
        assert_eq!(
            idle_step(32, 0, z, true, true),
            IdleStep::Nap(Duration::from_micros(50))
        );
        assert_eq!(
            idle_step(500, 7, z, true, false),
            IdleStep::Nap(Duration::from_micros(800))
        );
    }

    #[test]
    fn a_thread_that_owns_a_core_spins_for_the_budget_instead_of_yielding() {
        let early = SPIN_BUDGET / 2;
        assert_eq!(idle_step(32, 0, early, false, true), IdleStep::Spin);
        assert_eq!(idle_step(5000, 0, early, false, true), IdleStep::Spin);
        assert_eq!(
            idle_step(40, 0, SPIN_BUDGET, false, true),
            IdleStep::Nap(Duration::from_micros(20)),
            "past the budget it naps, however few checks it made"
        );
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
