//! The engine's one random generator and the random delays the front ends
//! put between a program's steps (seeded: a run is repeated by its seed).

use std::time::{Duration, Instant};

/// splitmix64, seeded from a list of numbers (seed, instance, iteration,
/// thread, ...), so every (program, iteration, thread) has its own stream.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose stream depends on every part.
    pub fn new(parts: &[u64]) -> Rng {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        for p in parts {
            s = Rng(s ^ p).next();
        }
        Rng(s)
    }

    /// The next number.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 for `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// An index below `n` (0 for `n == 0`).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// `k` distinct numbers below `n`, in random order.
    pub fn distinct(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in 0..k.min(n) {
            let j = i + self.index(n - i);
            v.swap(i, j);
        }
        v.truncate(k);
        v
    }

    /// A random spin between two steps: none a quarter of the time, else
    /// up to `max` spin-loop hints.
    pub fn spin(&mut self, max: u64) {
        if self.below(4) == 0 {
            return;
        }
        for _ in 0..self.below(max + 1) {
            std::hint::spin_loop();
        }
    }

    /// A random pause below `max_ns` nanoseconds (none for 0), spun.
    pub fn pause_ns(&mut self, max_ns: u64) {
        if max_ns > 0 {
            spin_for(Duration::from_nanos(self.below(max_ns)));
        }
    }
}

/// Busy-waits for `d` (short skews; sleeping would be far too coarse).
pub fn spin_for(d: Duration) {
    let t0 = Instant::now();
    while t0.elapsed() < d {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_depend_on_every_part_and_repeat() {
        let a: Vec<u64> = (0..4).map(|_| Rng::new(&[1, 2, 3]).next()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::new(&[1, 2, 3]).next(), Rng::new(&[1, 2, 4]).next());
        let mut r = Rng::new(&[7]);
        let d = r.distinct(5, 3);
        assert_eq!(d.len(), 3);
        assert!(d.iter().all(|x| *x < 5) && d[0] != d[1] && d[1] != d[2] && d[0] != d[2]);
        assert!((0..100).all(|_| r.below(3) < 3));
    }
}
