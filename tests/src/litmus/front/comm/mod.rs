//! The comm-layer front end of the litmus engine: runs the hand-written
//! fixtures of `shared/LITMUS.md` ([`crate::litmus::fixtures`]) through
//! `comm_ofi::Comm` and the AM layer, under `pgasrun` (at least 3 locales;
//! locales 3.. only join the barriers). `tests/examples/litmus.rs` is its
//! main:
//!
//! ```text
//! PGAS_NUM_WORKERS=3 pgasrun -n 3 litmus [TEST,...|all|plain|self|rma|sync|atomic]
//! ```
//!
//! Every test runs `LITMUS_ITERS` times per size (`LITMUS_ITERS_LARGE` at
//! 1 MiB) with seeded random spins between its steps, and the outcome of each
//! iteration is checked against the fixture's oracle program
//! ([`crate::litmus::oracle`]).
//! Tasks run on `PGAS_NUM_WORKERS` (at least 3) worker threads per locale,
//! each bound to its own transmit context with `Comm::bind_worker`; which
//! worker runs which task is drawn per iteration. On-statements go through
//! the AM layer; the harness's barrier between steps
//! ([`crate::litmus::host_barrier`]: shared memory on one machine, else the
//! launcher's) orders nothing in the network, so visibility always comes from the
//! layer's own boundaries (task end, task create, on-statement reply, AMOs).
//!
//! Locale 0 prints one `litmus` line per (test, size): the outcome
//! histogram, the forbidden count and the allowed outcomes never seen
//! (coverage gaps), plus a `litmus-forbidden` line for the first few
//! forbidden outcomes (test, mode, provider, size, iteration, who ran it).
//! Exit status 1 if a forbidden outcome was seen, unless `PGAS_MCM_WEAKEN`
//! is set (a negative control: reported, not failed).
//!
//! Environment: `LITMUS_ITERS` (200), `LITMUS_ITERS_LARGE` (ITERS / 8, at
//! least 2), `LITMUS_SIZES` (`8,inject+1,1M`), `LITMUS_SEED` (1),
//! `LITMUS_DELAY` (largest random spin, 1000), `LITMUS_AMO_K` (fetch_adds
//! per task, 4), `LITMUS_SHOW` (forbidden outcomes detailed per test, 5).

mod env;
mod mem;
mod pool;
mod report;
mod steps;

use crate::e;
use crate::litmus::fixtures::instances;
use crate::litmus::host_barrier::HostBarrier;
use crate::litmus::rng::Rng;
use amhandler::{Options, Registry};
use comm_ofi::{AmoOp, AmoType, Comm, GlobalAddr, Locale};
use env::{dec, Env, R};
use mem::{classify, fill, slice, SLOT, SLOTS};
use pool::Pool;
use report::RunCtx;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Instant;

// ---------------------------------------------------------------------------

fn env_num(name: &str, default: u64) -> R<u64> {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("{name}={v:?}: expected a number")),
        Err(_) => Ok(default),
    }
}

fn parse_sizes(spec: &str, inject: usize) -> R<Vec<usize>> {
    spec.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            let v = match s {
                "inject+1" => Some(inject + 1),
                _ => {
                    let (num, mul) = match s.as_bytes().last() {
                        Some(b'K' | b'k') => (&s[..s.len() - 1], 1 << 10),
                        Some(b'M' | b'm') => (&s[..s.len() - 1], 1 << 20),
                        _ => (s, 1),
                    };
                    num.parse::<usize>().ok().map(|n| n * mul)
                }
            };
            match v {
                Some(v) if (1..=1 << 20).contains(&v) => Ok(v),
                _ => Err(format!(
                    "LITMUS_SIZES: bad size {s:?} (bytes, K, M or inject+1; 1 B to 1 MiB)"
                )),
            }
        })
        .collect()
}

fn run() -> R<(Locale, usize)> {
    let comm = Comm::init().map_err(e("init"))?;
    let reg = Registry::new();
    let classify_fn = reg
        .register("litmus::classify", |_ctx, args| {
            let a = dec(args);
            vec![classify(a[0], a[1] as usize, a[2], a[3]).code()]
        })
        .map_err(e("register"))?;
    let max_delay = env_num("LITMUS_DELAY", 1000)?;
    let put_fn = reg
        .register("litmus::put", move |ctx, args| {
            let a = dec(args);
            let (dst, src, size) = (GlobalAddr::new(a[0] as Locale, a[1]), a[2], a[3] as usize);
            fill(src, size, a[4], a[5], a[6]);
            Rng::new(&[a[7]]).spin(max_delay);
            let comm = ctx.am().comm();
            if let Err(err) = comm.put(dst, slice(src, size)) {
                panic!("litmus::put body: put: {err}");
            }
            if let Err(err) = comm.task_end() {
                panic!("litmus::put body: task_end: {err}");
            }
            Vec::new()
        })
        .map_err(e("register"))?;
    let am = amhandler::start_with(
        comm.clone(),
        Options {
            registry: reg,
            ..Default::default()
        },
    )
    .map_err(e("AM layer"))?;
    let here = comm.here();
    let fail = |m: String| -> String {
        // One locale failing leaves the others in a barrier: take the job down.
        comm.oob().abort(&format!("litmus: locale {here}: {m}"))
    };
    if comm.num_locales() < 3 {
        return Err(fail("needs at least 3 locales".into()));
    }
    let workers = comm.config().num_workers;
    if workers < 3 {
        return Err(fail(format!(
            "needs PGAS_NUM_WORKERS >= 3 (a parent and two children), got {workers}"
        )));
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let select: Vec<String> = if args.is_empty() {
        vec!["all".into()]
    } else {
        args.iter()
            .flat_map(|a| a.split(',').map(|s| s.trim().to_string()))
            .filter(|s| !s.is_empty())
            .collect()
    };
    let iters = env_num("LITMUS_ITERS", 200).map_err(&fail)? as usize;
    let large = env_num("LITMUS_ITERS_LARGE", (iters as u64 / 8).max(2)).map_err(&fail)? as usize;
    let sizes = parse_sizes(
        &std::env::var("LITMUS_SIZES").unwrap_or_else(|_| "8,inject+1,1M".into()),
        comm.provider().inject_size,
    )
    .map_err(&fail)?;
    let insts = instances(&select, &sizes, iters, large).map_err(&fail)?;
    let pool = Pool::start(&comm, workers).map_err(&fail)?;
    // Allocated in the same order everywhere: symmetric addresses line up.
    let slots = comm
        .alloc(SLOT * SLOTS, 4096)
        .map_err(e("alloc"))
        .map_err(&fail)?;
    let flags = comm.alloc(4096, 64).map_err(e("alloc")).map_err(&fail)?;
    let env = Arc::new(Env {
        comm: comm.clone(),
        am: am.clone(),
        pool,
        workers,
        here,
        slots: slots.addr,
        flags: flags.addr,
        classify_fn,
        put_fn,
        seed: env_num("LITMUS_SEED", 1).map_err(&fail)?,
        max_delay,
        amo_k: env_num("LITMUS_AMO_K", 4).map_err(&fail)?.max(1) as usize,
        skew_ns: AtomicU64::new(0),
        lockstep: HostBarrier::new(&comm).map_err(&fail)?,
    });
    let weaken = match comm.config().weaken {
        None => "none".to_string(),
        Some(w) => match format!("{w:?}").as_str() {
            "NoForcing" => "no-forcing".to_string(),
            "NoSourceWait" => "no-source-wait".to_string(),
            other => other.to_string(),
        },
    };
    let ctx = RunCtx {
        provider: comm.provider().name.clone(),
        mode: comm.mode().to_string(),
        weaken: weaken.clone(),
        show: env_num("LITMUS_SHOW", 5).map_err(&fail)? as usize,
        allowed: Mutex::new(BTreeMap::new()),
    };
    comm.barrier().map_err(e("barrier")).map_err(&fail)?;
    if here == 0 {
        println!(
            "litmus-start\tprovider={}\tmode={}\tweaken={weaken}\tlocales={}\tworkers={workers}\tbound={}\tinject={}\tatomics={}\tseed={}\titers={iters}\titers_large={large}\tinstances={}",
            ctx.provider,
            ctx.mode,
            comm.num_locales(),
            comm.is_bound(),
            comm.provider().inject_size,
            if comm.mapped().in_use() {
                "cpu-mapped"
            } else if comm.amo_is_native(AmoType::U64, AmoOp::Add, true) {
                "native"
            } else {
                "am"
            },
            env.seed,
            insts.len()
        );
    }
    let t0 = Instant::now();
    let mut forbidden = 0;
    for inst in &insts {
        if let Some(rep) = env
            .run(inst, &ctx)
            .map_err(|m| fail(format!("{}: {m}", inst.name)))?
        {
            forbidden += rep.forbidden;
            println!("{}", rep.line);
            for d in rep.details {
                println!("{d}");
            }
        }
    }
    if here == 0 {
        println!(
            "litmus-done\tprovider={}\tmode={}\tweaken={weaken}\tinstances={}\tforbidden={forbidden}\tms={}",
            ctx.provider,
            ctx.mode,
            insts.len(),
            t0.elapsed().as_millis()
        );
    }
    am.finalize().map_err(e("finalize"))?;
    let strict = comm.config().weaken.is_none();
    Ok((here, if strict { forbidden } else { 0 }))
}

/// The program: `litmus [TEST,...|all|plain|self|rma|sync|atomic]`.
pub fn main() -> ExitCode {
    match run() {
        Ok((_, 0)) => ExitCode::SUCCESS,
        Ok((_, n)) => {
            eprintln!("litmus: {n} forbidden outcome(s) seen");
            ExitCode::FAILURE
        }
        Err(m) => {
            eprintln!("litmus: {m}");
            ExitCode::FAILURE
        }
    }
}
