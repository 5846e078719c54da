//! Minimal reproductions of provider problems the litmus suite ran into
//! (`docs/conformance.md`), under `pgasrun -n N`: every locale but the last
//! acts, each on its own word of the last locale, which is the target and
//! only polls through the AM layer. `REPRO_THREADS=k` (1) runs the loop in k
//! threads per acting locale, each bound to its own worker context and
//! using its own word (`PGAS_NUM_WORKERS` must be at least k).
//!
//! `litmus_repro CASE [N]`, cases:
//!
//! - `amo-write`: N non-fetching native atomic writes of `i` to one word of
//!   locale 1, each followed by a fetching atomic read of it from locale 0
//!   that must return `i` (blocking writes: in delivery-complete mode each
//!   one waited for its delivery completion);
//! - `amo-write-only`: the writes alone, then one read at the end;
//! - `amo-swap`: as `amo-write` with fetching writes (exchanges);
//! - `amo-fetch`: N fetching atomic adds instead (the control).
//!
//! Prints `litmus_repro ok` on success; a stale read exits non-zero naming
//! the iteration.

use comm_ofi::{AmoOp, AmoRequest, AmoType, Comm, GlobalAddr};
use pgas_tests::e;
use std::process::ExitCode;

type R<T = ()> = Result<T, String>;

fn run() -> R<String> {
    let comm = Comm::init().map_err(e("init"))?;
    let am = amhandler::start(comm.clone()).map_err(e("AM layer"))?;
    let mut args = std::env::args().skip(1);
    let case = args.next().unwrap_or_else(|| "amo-write".into());
    let n: u64 = args
        .next()
        .map(|s| s.parse().map_err(e("N")))
        .transpose()?
        .unwrap_or(10_000);
    let threads: usize = std::env::var("REPRO_THREADS")
        .ok()
        .map(|s| s.parse().map_err(e("REPRO_THREADS")))
        .transpose()?
        .unwrap_or(1);
    let n_loc = comm.num_locales();
    let words = comm.alloc(64 * 64 * 64, 64).map_err(e("alloc"))?;
    comm.barrier().map_err(e("barrier"))?;
    let target = n_loc - 1;
    let mut what = String::new();
    if comm.here() != target {
        let results: Vec<R> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..threads)
                .map(|k| {
                    let (comm, am, case) = (&comm, &am, &case);
                    sc.spawn(move || {
                        comm.bind_worker(k).map_err(e("bind_worker"))?;
                        let w = words.offset(64 * (comm.here() as u64 * 64 + k as u64));
                        let t = comm.symmetric(w, target).map_err(e("symmetric"))?;
                        one(am, case, t, n)
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("thread panicked".into())))
                .collect()
        });
        for r in results {
            r?;
        }
        what = format!(
            "litmus_repro ok: {case} x {n} x {threads} thread(s) on {} locale(s), provider {}, mode {}, native {}",
            n_loc - 1,
            comm.provider().name,
            comm.mode(),
            comm.amo_is_native(AmoType::U64, AmoOp::Write, false)
        );
    }
    comm.barrier().map_err(e("barrier"))?;
    am.finalize().map_err(e("finalize"))?;
    Ok(what)
}

/// One thread's loop of `case` on its word `t`.
fn one(am: &amhandler::Am, case: &str, t: GlobalAddr, n: u64) -> R {
    {
        let read = || {
            am.amo(&AmoRequest::new(t, AmoType::U64, AmoOp::Read, 0).fetching(true))
                .map_err(e("amo read"))
        };
        let base = read()?;
        for i in 1..=n {
            match case {
                "amo-write" | "amo-write-only" | "amo-swap" => {
                    let fetch = case == "amo-swap";
                    am.amo(
                        &AmoRequest::new(t, AmoType::U64, AmoOp::Write, base + i).fetching(fetch),
                    )
                    .map_err(|m| format!("write {i}: {m}"))?;
                    if case != "amo-write-only" {
                        let got = read()?;
                        if got != base + i {
                            return Err(format!(
                                "iteration {i}: read {got} after writing {}",
                                base + i
                            ));
                        }
                    }
                }
                "amo-fetch" => {
                    let got = am
                        .amo(&AmoRequest::new(t, AmoType::U64, AmoOp::Add, 1).fetching(true))
                        .map_err(|m| format!("add {i}: {m}"))?;
                    if got != base + i - 1 {
                        return Err(format!(
                            "iteration {i}: fetched {got}, expected {}",
                            base + i - 1
                        ));
                    }
                }
                other => return Err(format!("unknown case {other:?}")),
            }
        }
        let got = read()?;
        if got != base + n {
            return Err(format!("at the end: read {got}, expected {}", base + n));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            if !line.is_empty() {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(m) => {
            eprintln!("litmus_repro: {m}");
            ExitCode::FAILURE
        }
    }
}
