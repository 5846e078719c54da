//! A ring of on-statements, as a PGAS user writes it:
//!
//! ```chapel
//! proc hop(hops, token) { if hops == 0 then return token;
//!                         on Locales[(here.id+1) % numLocales] do return hop(hops-1, token+1); }
//! ```
//!
//! 1. a *nested* ring: locale 0 sends a token around the ring `laps` times;
//!    every hop is a blocking on-statement started from inside the previous
//!    one's body, so the chain is `laps x numLocales` bodies deep (deeper
//!    than the workers: waiting bodies run the next ones);
//! 2. a *non-blocking* ring: every locale starts a non-blocking
//!    on-statement on its right neighbour, which adds its caller's id to a
//!    counter on locale 0 with an atomic; locale 0 waits for all of them;
//! 3. a *fast* ring: every locale asks its right neighbour for its id with a
//!    fast on-statement;
//! 4. `coforall loc in Locales do on loc`: every locale reports itself.
//!
//! Prints what it computed with the MCM mode and provider, and exits
//! non-zero if any check fails. Run: `pgasrun -n 4 target/release/examples/on_ring [LAPS]`.

mod common;

use runtime_shim::{fn_id, pod, Builder, Dist, FnId, Runtime};
use std::process::ExitCode;
use std::sync::OnceLock;

const HOP: FnId = fn_id("ring.hop");
const ADD_CALLER: FnId = fn_id("ring.add_caller");
const WHO: FnId = fn_id("ring.who");

/// The counter on locale 0 (set before any on-statement is sent).
static COUNTER: OnceLock<Dist<u64>> = OnceLock::new();

fn u64s(b: &[u8]) -> Vec<u64> {
    pod::vec_from_bytes(b)
}

fn args(v: &[u64]) -> Vec<u8> {
    pod::as_bytes(v).to_vec()
}

fn run(rt: &'static Runtime, laps: u64) -> Result<bool, runtime_shim::Error> {
    let n = rt.num_locales() as u64;
    let me = rt.here();
    let right = (me + 1) % rt.num_locales();
    let mut ok = true;
    let counter = rt.alloc_all::<u64>(1)?;
    let _ = COUNTER.set(counter.clone());
    rt.barrier()?;

    // 1. Nested ring from locale 0.
    if me == 0 {
        let hops = laps * n;
        let t = std::time::Instant::now();
        let r = u64s(&rt.on(right, HOP, &args(&[hops - 1, 1]))?);
        let token = r.first().copied().unwrap_or(u64::MAX);
        let good = token == hops;
        ok &= good;
        println!(
            "on_ring: nested ring of {hops} blocking on-statements ({laps} laps) returned token \
             {token} (expected {hops}) in {:.1} ms: {}",
            t.elapsed().as_secs_f64() * 1e3,
            if good { "ok" } else { "WRONG" }
        );
    }
    rt.barrier()?;

    // 2. Non-blocking ring: each locale's neighbour adds (caller + 1) on locale 0.
    rt.on_nb(right, ADD_CALLER, &[])?;
    if me == 0 {
        let want: u64 = (1..=n).sum();
        let c = rt.atomic(counter.at(0)?);
        let t = std::time::Instant::now();
        let mut got = 0;
        rt.wait_until(|| {
            got = c.read().unwrap_or(u64::MAX);
            got >= want || t.elapsed().as_secs() > 60
        });
        let good = got == want;
        ok &= good;
        println!(
            "on_ring: non-blocking ring: counter on locale 0 reached {got} (expected {want}): {}",
            if good { "ok" } else { "WRONG" }
        );
    }
    rt.barrier()?;

    // 3. Fast ring: ask the right neighbour who it is.
    let who = u64s(&rt.on_fast(right, WHO, &[])?);
    let good = who.first() == Some(&(right as u64));
    if !good {
        println!("on_ring: locale {me}: fast on-statement to {right} answered {who:?}: WRONG");
    }
    ok &= good;

    // 4. coforall loc in Locales do on loc.
    let replies = rt.coforall_locales(WHO, &[])?;
    let ids: Vec<u64> = replies
        .iter()
        .map(|r| u64s(r).first().copied().unwrap_or(u64::MAX))
        .collect();
    let good = ids == (0..n).collect::<Vec<_>>();
    ok &= good;
    if me == 0 || !good {
        println!(
            "on_ring: coforall over locales from locale {me} heard {ids:?}: {}",
            if good { "ok" } else { "WRONG" }
        );
    }
    rt.free_all(counter)?;
    Ok(ok)
}

fn main() -> ExitCode {
    let Some([laps]) = common::positive_args([5]) else {
        return common::usage("on_ring [LAPS > 0]");
    };
    let b = Builder::new();
    let registered = (|| -> runtime_shim::Result<()> {
        b.register("ring.hop", |ctx, a| {
            let v = u64s(a);
            let (hops, token) = (v[0], v[1]);
            if hops == 0 {
                return args(&[token]);
            }
            let rt = ctx.rt();
            let next = (ctx.here() + 1) % rt.num_locales();
            rt.on(next, HOP, &args(&[hops - 1, token + 1]))
                .expect("nested on-statement")
        })?;
        b.register("ring.add_caller", |ctx, _| {
            let rt = ctx.rt();
            let c = COUNTER.get().expect("counter allocated before the ring");
            rt.atomic(c.at(0).expect("locale 0"))
                .fetch_add(ctx.caller() as u64 + 1)
                .expect("atomic add on locale 0");
            Vec::new()
        })?;
        b.register("ring.who", |ctx, _| args(&[ctx.here() as u64]))?;
        Ok(())
    })();
    if let Err(e) = registered {
        eprintln!("on_ring: {e}");
        return ExitCode::FAILURE;
    }
    let workers = |rt: &Runtime| format!(", {} workers", rt.num_workers());
    common::run_example("on_ring", || b.init(), |rt| run(rt, laps), workers)
}
