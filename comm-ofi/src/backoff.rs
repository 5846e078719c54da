//! One spin -> yield -> sleep ladder for plain wait loops (after
//! crossbeam-utils' `Backoff`, with the steps as parameters).
//!
//! A loop waiting for something another thread does calls
//! [`Backoff::snooze`] once per fruitless round: the first rounds spin
//! (`spin_loop`), later ones yield the core, and the last step sleeps (or
//! keeps yielding). A loop with a blocking protocol of its own (announce,
//! re-check, park) calls [`Backoff::step`] instead, which spins or yields
//! and returns `false` once the ladder is through: the caller then blocks its
//! own way. [`Backoff::reset`] after a round that found work.
//!
//! Not for the pollers' idle/doorbell protocols (`IdlePolicy`, amhandler's
//! `idle.rs`): those are model-checked and keep their own steps.
//!
//! Why not crossbeam-utils' `Backoff` itself: its ladder is fixed (spins
//! doubling from 1 to 64 `spin_loop`s over 7 rounds, then 4 yields, then
//! `is_completed`), with no sleeping step and no round count. The loops here
//! were tuned with their own ladders (a handler yields 256 rounds before it
//! sleeps, a PUT waiter spins 65 single rounds, a lock waiter 33), lengthen
//! their sleeps by the rounds past the ladder ([`Backoff::past_ladder`]),
//! and some hand over to a park protocol of their own ([`Backoff::step`]
//! returning `false`); crossbeam's would change every one of those timings.
//! So this one stays, and the workspace does not declare crossbeam-utils
//! (crossbeam-queue still brings it in for its own use).

use std::time::Duration;

/// A spin -> yield -> sleep ladder (see the module docs).
#[derive(Debug, Clone)]
pub struct Backoff {
    rounds: u32,
    spin: u32,
    yields: u32,
    sleep: Option<Duration>,
}

impl Backoff {
    /// Rounds `1..spin` spin, rounds `spin..yields` yield; after that
    /// [`Backoff::step`] returns `false` and [`Backoff::snooze`] yields
    /// (or sleeps, see [`Backoff::then_sleep`]).
    pub const fn new(spin: u32, yields: u32) -> Backoff {
        Backoff {
            rounds: 0,
            spin,
            yields,
            sleep: None,
        }
    }

    /// After the yields, [`Backoff::snooze`] sleeps `d` per round.
    pub const fn then_sleep(mut self, d: Duration) -> Backoff {
        self.sleep = Some(d);
        self
    }

    /// A round found work: back to spinning.
    pub fn reset(&mut self) {
        self.rounds = 0;
    }

    /// Fruitless rounds counted since the last reset.
    pub fn rounds(&self) -> u32 {
        self.rounds
    }

    /// Fruitless rounds counted past the spins and yields (the rounds in
    /// which the caller blocked its own way), for a caller that lengthens
    /// its sleeps the longer it waits.
    pub fn past_ladder(&self) -> u32 {
        self.rounds.saturating_sub(self.yields)
    }

    /// The nap of a caller that blocks its own way past the ladder: `base`,
    /// doubled for each round past it, at most `max_doublings` times.
    pub fn doubling_nap(&self, base: Duration, max_doublings: u32) -> Duration {
        base * (1u32 << self.past_ladder().min(max_doublings))
    }

    /// Counts a fruitless round and spins or yields as the ladder says;
    /// `false` (nothing done) once past the yields: the caller blocks in its
    /// own way (or calls [`Backoff::snooze`]'s last step).
    pub fn step(&mut self) -> bool {
        self.rounds = self.rounds.saturating_add(1);
        if self.rounds < self.spin {
            std::hint::spin_loop();
            true
        } else if self.rounds < self.yields {
            std::thread::yield_now();
            true
        } else {
            false
        }
    }

    /// Counts a fruitless round and spins, yields or sleeps as the ladder
    /// says.
    pub fn snooze(&mut self) {
        if !self.step() {
            match self.sleep {
                Some(d) => std::thread::sleep(d),
                None => std::thread::yield_now(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_spin_then_yield_then_hand_over() {
        let mut b = Backoff::new(3, 5);
        // Rounds 1, 2 spin; 3, 4 yield; 5 on are through.
        assert!((0..4).all(|_| b.step()));
        assert_eq!(b.rounds(), 4);
        assert!(!b.step());
        assert!(!b.step());
        b.reset();
        assert_eq!(b.rounds(), 0);
        assert!(b.step());
    }

    #[test]
    fn naps_double_past_the_ladder_up_to_the_cap() {
        let base = Duration::from_micros(100);
        let mut b = Backoff::new(0, 2);
        assert!(b.step());
        assert_eq!(b.doubling_nap(base, 3), base);
        let naps: Vec<u64> = (0..5)
            .map(|_| {
                assert!(!b.step());
                b.doubling_nap(base, 3).as_micros() as u64
            })
            .collect();
        assert_eq!(naps, [100, 200, 400, 800, 800]);
    }

    #[test]
    fn snooze_sleeps_only_after_the_yields() {
        let mut b = Backoff::new(0, 1).then_sleep(Duration::from_millis(20));
        let t = std::time::Instant::now();
        b.snooze();
        assert!(t.elapsed() >= Duration::from_millis(20));
        let mut b = Backoff::new(0, 0);
        let t = std::time::Instant::now();
        for _ in 0..10 {
            b.snooze();
        }
        assert!(t.elapsed() < Duration::from_secs(1));
        assert_eq!(b.rounds(), 10);
    }
}
