//! Timing: how one figure (a "point") is measured.
//!
//! A point is a median over samples; a sample is the mean of a batch of
//! back-to-back operations. The batch is sized after a short warm-up so that
//! one sample lasts about 1/30 of the point's time budget: the clock is read
//! twice per sample, not per operation, and a preempted sample (this machine
//! has 2 cores shared by everybody's spinning threads) moves the median by at
//! most one rank. This is foMPI's "median of many samples" with LOCO's
//! "repeat and take a robust centre", scaled to a run of a few minutes.

use std::time::{Duration, Instant};

/// Error type of the study (messages for the report).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// Result type of the study.
pub type Res<T> = Result<T, BoxError>;

/// How long a point may take.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Target measuring time of one point (after warm-up).
    pub point: Duration,
    /// At least this many samples, even when that overruns `point`
    /// (bounded by `hard_cap`).
    pub min_samples: usize,
    /// At most this many samples.
    pub max_samples: usize,
    /// Never spend more than this on one point (slow providers).
    pub hard_cap: Duration,
}

impl Budget {
    /// A budget of `ms` milliseconds per point.
    pub fn ms(ms: u64) -> Budget {
        Budget {
            point: Duration::from_millis(ms),
            min_samples: 5,
            max_samples: 200,
            hard_cap: Duration::from_millis(ms * 6),
        }
    }
}

/// One measured figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Median over samples of the per-operation time, in microseconds.
    pub median_us: f64,
    /// Fastest sample's per-operation time, in microseconds.
    pub min_us: f64,
    /// Samples taken.
    pub samples: usize,
    /// Operations timed in all (warm-up excluded).
    pub ops: u64,
    /// Time of all samples over `ops`, in microseconds: the sustained cost.
    /// Far above the median when a provider's queue absorbs a burst fast
    /// and empties slowly ([`bursty`]).
    pub mean_us: f64,
}

/// Whether a point's sustained cost (`mean_us`) is so far above its median
/// that the median describes bursts, not a stream of operations: more than
/// 3x and 1 us above it. It happens where an operation reports no
/// completion (an injected PUT) and the provider moves it later: most
/// samples only fill the provider's queue, a few wait for it to empty (and
/// where a few timed operations are descheduled).
pub fn bursty(median_us: f64, mean_us: f64) -> bool {
    mean_us > 3.0 * median_us && mean_us - median_us > 1.0
}

/// Median of `v` (sorted in place); 0 for an empty slice.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Centre and range of a few values (the rounds of a point, or ratios of
/// paired rounds): median, smallest, largest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Median.
    pub med: f64,
    /// Smallest value.
    pub lo: f64,
    /// Largest value.
    pub hi: f64,
}

impl Spread {
    /// The spread of `v`; `None` when empty or not finite.
    pub fn of(v: &[f64]) -> Option<Spread> {
        if v.is_empty() || v.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut w = v.to_vec();
        let med = median(&mut w);
        Some(Spread {
            med,
            lo: w[0],
            hi: w[w.len() - 1],
        })
    }

    /// `f` applied to each bound (an order-reversing `f`, like 1/x, swaps them).
    pub fn map(self, f: impl Fn(f64) -> f64) -> Spread {
        let (a, b) = (f(self.lo), f(self.hi));
        Spread {
            med: f(self.med),
            lo: a.min(b),
            hi: a.max(b),
        }
    }

    /// Whether the range contains `x`.
    pub fn contains(self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// Whether the two ranges share a value.
    pub fn overlaps(self, o: Spread) -> bool {
        self.lo <= o.hi && o.lo <= self.hi
    }
}

/// Measures `op` (one operation per call) back to back in batches.
pub fn measure(budget: Budget, mut op: impl FnMut() -> Res<()>) -> Res<Point> {
    // Warm-up (pages touched, connections made, caches warm) that also
    // calibrates the batch: at least two calls, about a tenth of the budget.
    let warm = Instant::now();
    let mut calls = 0u64;
    while calls < 2 || (warm.elapsed() < budget.point / 10 && calls < 100_000) {
        op()?;
        calls += 1;
        if warm.elapsed() >= budget.hard_cap / 4 {
            break;
        }
    }
    let per_op = warm.elapsed().as_secs_f64() / calls as f64;
    let target = budget.point.as_secs_f64() / 30.0;
    let batch = (target / per_op.max(1e-8)).clamp(1.0, 100_000.0) as u64;
    batched(budget, batch, &mut op)
}

fn batched(budget: Budget, batch: u64, op: &mut impl FnMut() -> Res<()>) -> Res<Point> {
    let start = Instant::now();
    let mut samples = Vec::new();
    loop {
        let t = Instant::now();
        for _ in 0..batch {
            op()?;
        }
        samples.push(t.elapsed().as_secs_f64() * 1e6 / batch as f64);
        let spent = start.elapsed();
        if samples.len() >= budget.max_samples
            || (spent >= budget.point && samples.len() >= budget.min_samples)
            || (spent >= budget.hard_cap && samples.len() >= 3)
        {
            break;
        }
    }
    let ops = batch * samples.len() as u64;
    let mean_us = start.elapsed().as_secs_f64() * 1e6 / ops as f64;
    let min_us = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let n = samples.len();
    Ok(Point {
        median_us: median(&mut samples),
        min_us,
        samples: n,
        ops,
        mean_us,
    })
}

/// Measures an operation that times itself (`op` returns the duration of
/// the part that counts, e.g. a boundary after untimed PUTs): a short
/// warm-up, then one operation per sample.
pub fn measure_timed(budget: Budget, mut op: impl FnMut() -> Res<Duration>) -> Res<Point> {
    // Warm-up: at least two calls, at most a tenth of the budget.
    let warm = Instant::now();
    let mut calls = 0;
    while calls < 2 || (warm.elapsed() < budget.point / 10 && calls < 1000) {
        op()?;
        calls += 1;
        if warm.elapsed() >= budget.hard_cap / 4 {
            break;
        }
    }
    let start = Instant::now();
    let mut samples = Vec::new();
    loop {
        samples.push(op()?.as_secs_f64() * 1e6);
        let spent = start.elapsed();
        if samples.len() >= budget.max_samples * 5
            || (spent >= budget.point && samples.len() >= budget.min_samples)
            || (spent >= budget.hard_cap && samples.len() >= 3)
        {
            break;
        }
    }
    let min_us = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let n = samples.len();
    let mean_us = samples.iter().sum::<f64>() / n as f64;
    Ok(Point {
        median_us: median(&mut samples),
        min_us,
        samples: n,
        ops: n as u64,
        mean_us,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }

    #[test]
    fn spread_is_median_and_range() {
        let s = Spread::of(&[3.0, 1.0, 2.0, 10.0, 4.0]).unwrap();
        assert_eq!((s.med, s.lo, s.hi), (3.0, 1.0, 10.0));
        assert!(s.contains(1.0) && !s.contains(0.5));
        let inv = s.map(|x| 1.0 / x);
        assert_eq!((inv.lo, inv.hi), (0.1, 1.0));
        assert!(Spread::of(&[]).is_none());
        assert!(Spread::of(&[f64::NAN]).is_none());
        let other = Spread::of(&[11.0, 12.0]).unwrap();
        assert!(!s.overlaps(other) && other.overlaps(Spread::of(&[11.5]).unwrap()));
    }

    #[test]
    fn measure_counts_and_bounds() {
        let b = Budget::ms(5);
        let mut n = 0u64;
        let p = measure(b, || {
            n += 1;
            std::hint::black_box(n);
            Ok(())
        })
        .unwrap();
        assert!(p.samples >= b.min_samples && p.samples <= b.max_samples);
        assert!(p.median_us >= 0.0 && p.min_us <= p.median_us);
        assert!(n >= p.ops);
    }

    #[test]
    fn mean_is_the_sustained_cost() {
        // Every 10th call stalls 200 us, as an injected PUT does when the
        // provider's queue is full. Any run of `ops` calls holds at least
        // ops / 10 stalls, so the mean counts them all; the median may or
        // may not (it depends on the batch the warm-up picked).
        let mut n = 0u64;
        let p = measure(Budget::ms(20), || {
            n += 1;
            if n % 10 == 0 {
                std::thread::sleep(Duration::from_micros(200));
            }
            Ok(())
        })
        .unwrap();
        let floor = (p.ops / 10) as f64 * 200.0 / p.ops as f64;
        assert!(p.mean_us >= floor, "{p:?}: mean below {floor} us");
        assert!(p.mean_us >= p.min_us, "{p:?}");
    }

    #[test]
    fn bursty_needs_a_factor_and_an_absolute_gap() {
        assert!(bursty(0.05, 7.5));
        assert!(!bursty(0.05, 0.1), "3x but not 1 us above");
        assert!(!bursty(10.0, 25.0), "1 us above but not 3x");
    }

    #[test]
    fn measure_timed_reports_what_op_says() {
        let p = measure_timed(Budget::ms(2), || Ok(Duration::from_micros(7))).unwrap();
        assert!((p.median_us - 7.0).abs() < 1e-9);
    }
}
