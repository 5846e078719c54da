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
//! failing on every member (not hanging) with the team usable after. The
//! caller's own functions (`reduce_with`, `allreduce_with`,
//! `reduce_elems_in_place`): a non-commutative matrix product and 3-byte
//! elements whose bytes mix, each checked against the rank-order fold; a
//! failing function; a partial element refused.

use pgas_tests::{check, e};
use runtime_shim::bytemuck::{Pod, Zeroable};
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

/// A 2x2 integer matrix: products are associative but not commutative, so
/// a result combined in another order than rank order differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[bytemuck(crate = "runtime_shim::bytemuck")]
#[repr(C)]
struct Mat([u64; 4]);

fn mat_mul(a: Mat, b: Mat) -> Mat {
    let (a, b) = (a.0, b.0);
    let m = |x: u64, y: u64, z: u64, w: u64| x.wrapping_mul(y).wrapping_add(z.wrapping_mul(w));
    Mat([
        m(a[0], b[0], a[1], b[2]),
        m(a[0], b[1], a[1], b[3]),
        m(a[2], b[0], a[3], b[2]),
        m(a[2], b[1], a[3], b[3]),
    ])
}

fn mat(r: usize, i: usize) -> Mat {
    let v = (r * 31 + i * 7) as u64;
    Mat([v + 1, v ^ 5, 2 * v + 3, (i as u64) << 3 | r as u64])
}

/// 3-byte elements: each result byte mixes the other bytes of its element,
/// so a block boundary inside an element, or another order, changes it.
fn mix3(a: &mut [u8], b: &[u8]) {
    let old = [a[0], a[1], a[2]];
    for k in 0..3 {
        a[k] = old[k].wrapping_mul(3).wrapping_add(b[(k + 1) % 3]) ^ old[(k + 2) % 3];
    }
}

fn elem_byte(r: usize, j: usize) -> u8 {
    (r * 131 + j * 17 + j / 3) as u8
}

/// The caller's functions (`reduce_with`, `allreduce_with`,
/// `reduce_elems_in_place`): exactly the rank-order fold, on every member,
/// for a type and for byte elements, small and large, to every root; a
/// failing function fails every member; a partial element is refused.
fn by_function(t: &Team, len: usize, tag: &str) -> R {
    let (n, me) = (t.size(), t.rank());
    let mine: Vec<Mat> = (0..len).map(|i| mat(me, i)).collect();
    let want: Vec<Mat> = (0..len).map(|i| fold(n, i, mat, mat_mul)).collect();
    let got = t
        .allreduce_with(&mine, mat_mul)
        .map_err(e("allreduce_with"))?;
    check!(got == want, "{tag}: allreduce_with of {len} matrices");
    for root in [0, n - 1] {
        let r = t
            .reduce_with(root, &mine, mat_mul)
            .map_err(e("reduce_with"))?;
        check!(
            r.as_ref() == (me == root).then_some(&want),
            "{tag}: reduce_with to {root} of {len}"
        );
    }
    // Byte elements of 3.
    let bytes = 3 * len;
    let src: Vec<u8> = (0..bytes).map(|j| elem_byte(me, j)).collect();
    let mut want = (0..bytes).map(|j| elem_byte(0, j)).collect::<Vec<_>>();
    for r in 1..n {
        let next: Vec<u8> = (0..bytes).map(|j| elem_byte(r, j)).collect();
        for (a, b) in want.chunks_exact_mut(3).zip(next.chunks_exact(3)) {
            mix3(a, b);
        }
    }
    for root in [None, Some(n - 1)] {
        let mut v = src.clone();
        let holds = t
            .reduce_elems_in_place(root, &mut v, 3, |a, b| {
                check!(a.len() == 3 && b.len() == 3, "a partial element");
                mix3(a, b);
                Ok(())
            })
            .map_err(e("reduce_elems_in_place"))?;
        check!(
            holds == root.is_none_or(|r| r == me),
            "{tag}: reduce_elems_in_place to {root:?} said {holds}"
        );
        check!(
            if holds { v == want } else { v == src },
            "{tag}: reduce_elems_in_place to {root:?} of {len} 3-byte elements"
        );
    }
    // A function that fails on the last member's last element: every
    // member gets the error (on the large path only the member combining
    // that block sees it), and the team goes on.
    let mut v = src.clone();
    let last = bytes - 3;
    let poison = elem_byte(n - 1, last);
    let r = t.reduce_elems_in_place(None, &mut v, 3, |_, b| {
        if n > 1 && b[0] == poison && b[1] == elem_byte(n - 1, last + 1) {
            Err(format!("poisoned element {poison}"))
        } else {
            Ok(())
        }
    });
    if n > 1 {
        match r {
            Err(err)
                if err.to_string().contains("poisoned") || err.to_string().contains("rank") => {}
            other => return Err(format!("{tag}: failing function gave {other:?}")),
        }
    }
    match t.reduce_elems_in_place(None, &mut [0u8; 7], 3, |_, _| Ok(())) {
        Err(Error::InvalidLength { reason, .. }) if reason.contains("3-byte") => {}
        other => return Err(format!("{tag}: 7 bytes of 3-byte elements gave {other:?}")),
    }
    t.barrier().map_err(e("barrier"))?;
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
        by_function(w, len, &format!("world, {len}"))?;
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
        by_function(&sub, len, &format!("reversed team, {len}"))?;
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
