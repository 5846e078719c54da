//! Large reductions (reduce-scatter + gather past `TEAM_INLINE` bytes),
//! checked on every locale (run by `tests/tests/teams.rs` under `pgasrun`
//! at 1 to 4 locales).
//!
//! Float sums whose value depends on the order of the additions (addends
//! of very different magnitudes): every locale computes the rank-order fold
//! `((x0 + x1) + x2) ...` of every locale's input itself and checks that
//! the allreduce gave exactly those bits, and the locales compare a hash of
//! their results, so a result that differs between locales (or a different
//! combining order) fails. Sizes from 1 element to past a megabyte, most
//! not divisible by the locale count; f64 and f32; integer sums; min/max;
//! reduce to every root; the in-place forms; a sub-team; unequal lengths
//! failing on every member (not hanging) with the team usable after.

use pgas_tests::{check, e};
use runtime_shim::{Error, ReduceOp, Team, TEAM_INLINE};
use std::process::ExitCode;

type R<T = ()> = Result<T, String>;

/// Locale `r`'s element `i`: magnitudes from 1e-8 to 1e8 and both signs,
/// so that float addition in another order gives other bits.
fn x(r: usize, i: usize) -> f64 {
    let m = ((r * 7919 + i * 104_729) % 1_000_003) as f64 / 1000.0 + 1.0;
    let e = ((r + 3 * i) % 5) as i32 * 4 - 8;
    let s = if (r + i) % 3 == 0 { -1.0 } else { 1.0 };
    s * m * 10f64.powi(e)
}

fn fold<T: Copy>(n: usize, i: usize, v: impl Fn(usize, usize) -> T, f: impl Fn(T, T) -> T) -> T {
    (1..n).fold(v(0, i), |a, r| f(a, v(r, i)))
}

fn hash(bits: impl Iterator<Item = u64>) -> u64 {
    bits.fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b).wrapping_mul(0x100_0000_01b3)
    })
}

/// Every member's hash of its result equal.
fn same_everywhere(t: &Team, h: u64, what: &str) -> R {
    let all = t.fcollect(&[h]).map_err(e("fcollect"))?;
    check!(
        all.iter().all(|x| *x == h),
        "{what}: results differ between members: hashes {all:x?}"
    );
    Ok(())
}

fn floats(t: &Team, len: usize, tag: &str) -> R {
    let (n, me) = (t.size(), t.rank());
    let mine: Vec<f64> = (0..len).map(|i| x(me, i)).collect();
    let got = t.allreduce(&mine, ReduceOp::Sum).map_err(e("allreduce"))?;
    check!(
        got.len() == len,
        "{tag}: {} elements back of {len}",
        got.len()
    );
    for (i, g) in got.iter().enumerate() {
        let want = fold(n, i, x, |a, b| a + b);
        check!(
            g.to_bits() == want.to_bits(),
            "{tag}: f64 sum of {len}, element {i}: {g:e}, the rank-order sum is {want:e}"
        );
    }
    same_everywhere(t, hash(got.iter().map(|v| v.to_bits())), tag)?;
    // In place, f32, a length one more.
    let x32 = |r: usize, i: usize| x(r, i) as f32;
    let mut v: Vec<f32> = (0..len + 1).map(|i| x32(me, i)).collect();
    t.allreduce_in_place(&mut v, ReduceOp::Sum)
        .map_err(e("allreduce_in_place"))?;
    for (i, g) in v.iter().enumerate() {
        let want = fold(n, i, x32, |a, b| a + b);
        check!(
            g.to_bits() == want.to_bits(),
            "{tag}: f32 in-place sum of {}, element {i}: {g:e}, want {want:e}",
            len + 1
        );
    }
    same_everywhere(t, hash(v.iter().map(|v| v.to_bits() as u64)), tag)?;
    // Min and max.
    let mn = t.allreduce(&mine, ReduceOp::Min).map_err(e("min"))?;
    let mx = t.allreduce(&mine, ReduceOp::Max).map_err(e("max"))?;
    for i in 0..len {
        check!(
            mn[i] == fold(n, i, x, f64::min) && mx[i] == fold(n, i, x, f64::max),
            "{tag}: min/max of {len}, element {i}: {} {}",
            mn[i],
            mx[i]
        );
    }
    Ok(())
}

fn ints(t: &Team, len: usize, tag: &str) -> R {
    let (n, me) = (t.size(), t.rank());
    let v = |r: usize, i: usize| (i as i64 * 1_000_003) ^ (r as i64 * 7 + 1) << 40;
    let mine: Vec<i64> = (0..len).map(|i| v(me, i)).collect();
    let got = t.allreduce(&mine, ReduceOp::Sum).map_err(e("allreduce"))?;
    for (i, g) in got.iter().enumerate() {
        let want = fold(n, i, v, i64::wrapping_add);
        check!(
            *g == want,
            "{tag}: i64 sum of {len}, element {i}: {g}, want {want}"
        );
    }
    let xr = t.allreduce(&mine, ReduceOp::Xor).map_err(e("xor"))?;
    check!(
        xr.iter()
            .enumerate()
            .all(|(i, g)| *g == fold(n, i, v, |a, b| a ^ b)),
        "{tag}: xor of {len}"
    );
    for root in 0..n {
        let r = t.reduce(root, &mine, ReduceOp::Sum).map_err(e("reduce"))?;
        match r {
            Some(r) if me == root => check!(r == got, "{tag}: reduce to {root} of {len}"),
            None if me != root => {}
            other => {
                return Err(format!(
                    "{tag}: reduce to {root}: {:?}",
                    other.map(|v| v.len())
                ))
            }
        }
        let mut w = mine.clone();
        let holds = t
            .reduce_in_place(root, &mut w, ReduceOp::Sum)
            .map_err(e("reduce_in_place"))?;
        check!(
            holds == (me == root),
            "{tag}: reduce_in_place to {root} said {holds}"
        );
        check!(
            if holds { w == got } else { w == mine },
            "{tag}: reduce_in_place to {root} of {len} left the wrong values"
        );
    }
    Ok(())
}

fn sizes(n: usize) -> Vec<usize> {
    let big = TEAM_INLINE / 8;
    let mut s = vec![1, 3, big - 1, big, big + 1, 1000, 4097, 65_537, 150_001];
    s.extend([n * 1000, n * 1000 + n - 1]);
    s
}

fn run() -> R {
    let rt = runtime_shim::init().map_err(e("init"))?;
    let w = rt.world();
    let (n, me) = (w.size(), w.rank());
    for len in sizes(n) {
        floats(w, len, &format!("world, {len}"))?;
        ints(w, len, &format!("world, {len}"))?;
    }
    // A sub-team whose ranks are not the world's: the last locales first.
    let sub = w
        .split_color(Some(1), -(me as i64))
        .map_err(e("split"))?
        .ok_or("no sub-team")?;
    check!(sub.rank() == n - 1 - me, "sub-team rank {}", sub.rank());
    for len in [5, 10_001] {
        floats(&sub, len, &format!("reversed team, {len}"))?;
        ints(&sub, len, &format!("reversed team, {len}"))?;
    }
    // Unequal lengths: every member fails, naming it; none hangs.
    if n > 1 {
        let mine = vec![1.0f64; 4096 + me];
        match w.allreduce(&mine, ReduceOp::Sum) {
            Err(Error::InvalidLength { reason, .. }) if reason.contains("rank") => {}
            other => {
                return Err(format!(
                    "unequal lengths: {:?}",
                    other.map(|v| v.len()).map_err(|e| e.to_string())
                ))
            }
        }
    }
    floats(w, 3000, "world after a failure")?;
    rt.barrier().map_err(e("barrier"))?;
    pgas_tests::finish(rt, "reduce_probe", &format!("{n} locales"))
}

fn main() -> ExitCode {
    pgas_tests::exit("reduce_probe", run())
}
