//! Teams and collectives through the public API, checked on every locale
//! (run by `tests/tests/teams.rs` under `pgasrun`, 4 locales).
//!
//! World: barrier, broadcast from every root (inline and large), reduce and
//! allreduce (sum/min/max/xor, integer and float), fcollect, collect with
//! uneven parts, alltoall. Splits: even/odd ranks by stride, a colour split
//! with reversed keys, a team that leaves one locale out, collectives on the
//! sub-teams, a split of a split. Failures: a broadcast whose root cannot
//! hold its copy fails on every member and the team stays usable; bad input
//! is an error naming it (rank, bitwise op on floats, unequal fcollect).

use pgas_tests::{check, e};
use runtime_shim::{Error, ReduceOp, Team, TEAM_INLINE};
use std::process::ExitCode;

type R<T = ()> = Result<T, String>;

fn collectives(t: &Team, tag: &str) -> R {
    let n = t.size();
    let me = t.rank();
    t.barrier().map_err(e("barrier"))?;
    for root in 0..n {
        for len in [3usize, TEAM_INLINE / 8 + 100] {
            let data: Vec<u64> = (0..len as u64).map(|i| i * 7 + root as u64).collect();
            let mine = if me == root { data.clone() } else { Vec::new() };
            let got = t.broadcast(root, &mine).map_err(e("broadcast"))?;
            check!(
                got == data,
                "{tag}: broadcast from {root} of {len} arrived wrong"
            );
        }
    }
    let v: Vec<i64> = vec![me as i64 + 1, -(me as i64), 10];
    let sum = t.allreduce(&v, ReduceOp::Sum).map_err(e("allreduce"))?;
    let s: i64 = (1..=n as i64).sum();
    check!(
        sum == vec![s, -(s - n as i64), 10 * n as i64],
        "{tag}: allreduce sum {sum:?}"
    );
    let mn = t.allreduce(&v, ReduceOp::Min).map_err(e("allreduce"))?;
    check!(mn == vec![1, -(n as i64 - 1), 10], "{tag}: min {mn:?}");
    let x = t
        .allreduce(&[1u64 << me], ReduceOp::Xor)
        .map_err(e("allreduce"))?;
    check!(x == vec![(1u64 << n) - 1], "{tag}: xor {x:?}");
    let f = t
        .allreduce(&[me as f64 * 0.5], ReduceOp::Max)
        .map_err(e("allreduce"))?;
    check!(f == vec![(n - 1) as f64 * 0.5], "{tag}: float max {f:?}");
    let root = n - 1;
    let r = t
        .reduce(root, &[me as u32 + 1], ReduceOp::Sum)
        .map_err(e("reduce"))?;
    if me == root {
        check!(
            r == Some(vec![(n * (n + 1) / 2) as u32]),
            "{tag}: reduce {r:?}"
        );
    } else {
        check!(r.is_none(), "{tag}: reduce gave a non-root a result");
    }
    let fc = t.fcollect(&[me as u16, 100]).map_err(e("fcollect"))?;
    let want: Vec<u16> = (0..n as u16).flat_map(|r| [r, 100]).collect();
    check!(fc == want, "{tag}: fcollect {fc:?}");
    // Uneven, one part large.
    let part: Vec<u8> = vec![me as u8; if me == 0 { 2 * TEAM_INLINE } else { me }];
    let c = t.collect(&part).map_err(e("collect"))?;
    let want: Vec<u8> = (0..n)
        .flat_map(|r| vec![r as u8; if r == 0 { 2 * TEAM_INLINE } else { r }])
        .collect();
    check!(c == want, "{tag}: collect of {} bytes wrong", c.len());
    let blocks: Vec<u32> = (0..n).flat_map(|to| [me as u32, to as u32]).collect();
    let a = t.alltoall(&blocks).map_err(e("alltoall"))?;
    let want: Vec<u32> = (0..n).flat_map(|from| [from as u32, me as u32]).collect();
    check!(a == want, "{tag}: alltoall {a:?}");
    Ok(())
}

fn bad_input(t: &Team) -> R {
    let n = t.size();
    match t.broadcast::<u8>(n, &[]) {
        Err(Error::InvalidLength {
            what: "team rank", ..
        }) => {}
        other => return Err(format!("broadcast from rank {n}: {other:?}")),
    }
    match t.allreduce(&[1.0f32], ReduceOp::Or) {
        Err(Error::AtomicUse(m)) if m.contains("Or") && m.contains("f32") => {}
        other => return Err(format!("bitwise on floats: {other:?}")),
    }
    // Unequal fcollect: every member learns it.
    let part = vec![0u8; 1 + t.rank() % 2];
    match t.fcollect(&part) {
        Err(Error::InvalidLength {
            what: "fcollect contribution",
            ..
        }) => {}
        other if n == 1 => drop(other),
        other => return Err(format!("unequal fcollect: {other:?}")),
    }
    match t.split_strided(0, 0, 1) {
        Err(Error::InvalidLength { .. }) => {}
        other => return Err(format!("stride 0: {other:?}")),
    }
    Ok(())
}

fn run() -> R {
    let rt = runtime_shim::init().map_err(e("init"))?;
    let w = rt.world();
    let n = w.size();
    let me = w.rank();
    check!(n == rt.num_locales() && me == rt.here(), "world team shape");
    collectives(w, "world")?;
    bad_input(w)?;
    // Even and odd ranks.
    let evens = w
        .split_strided(0, 2, n.div_ceil(2))
        .map_err(e("split evens"))?;
    let odds = w.split_strided(1, 2, n / 2).map_err(e("split odds"))?;
    match (me % 2, &evens, &odds) {
        (0, Some(t), None) | (1, None, Some(t)) => {
            check!(
                t.rank() == me / 2,
                "strided rank {} for locale {me}",
                t.rank()
            );
            collectives(t, if me % 2 == 0 { "evens" } else { "odds" })?;
        }
        _ => return Err(format!("locale {me}: wrong strided membership")),
    }
    // Colour split: everyone but the last locale, ranks reversed by key.
    let color = (me + 1 < n).then_some(7);
    let sub = w
        .split_color(color, -(me as i64))
        .map_err(e("split colour"))?;
    match (color, sub) {
        (Some(_), Some(t)) => {
            check!(t.size() == n - 1, "colour team of {}", t.size());
            check!(
                t.rank() == n - 2 - me,
                "reversed key: rank {} for locale {me}",
                t.rank()
            );
            check!(
                t.locale_of(t.rank()).map_err(e("locale_of"))? == me,
                "locale_of"
            );
            collectives(&t, "colour")?;
            // A split of a split.
            if let Some(tt) = t.split_strided(0, 1, 1).map_err(e("split of split"))? {
                collectives(&tt, "single")?;
            }
        }
        (None, None) => {}
        _ => return Err(format!("locale {me}: wrong colour membership")),
    }
    // A broadcast whose root cannot hold its copy: everyone fails, names it.
    let huge = rt.comm().heap().size();
    let mine = if me == 0 { vec![1u8; huge] } else { Vec::new() };
    match w.broadcast(0, &mine) {
        Err(err) => {
            let m = err.to_string();
            check!(
                if me == 0 {
                    m.contains("no room")
                } else {
                    m.contains("locale 0")
                },
                "locale {me}: failed broadcast said {m:?}"
            );
        }
        Ok(_) => return Err("a broadcast larger than the root's heap succeeded".into()),
    }
    drop(mine);
    // The team is still usable after a failed collective.
    collectives(w, "world after failure")?;
    rt.barrier().map_err(e("barrier"))?;
    pgas_tests::finish(rt, "team_probe", &format!("{n} locales"))
}

fn main() -> ExitCode {
    pgas_tests::exit("team_probe", run())
}
