//! The Rust API front end of the litmus engine: runs the generated programs
//! ([`crate::litmus::generated`]) through the public API of `runtime-shim`, under
//! `pgasrun` with 4 locales. `tests/examples/litmus_gen.rs` is its main:
//!
//! ```text
//! PGAS_NUM_WORKERS=3 pgasrun -n 4 litmus_gen [FAMILY,...|all] [ITERS]
//! ```
//!
//! Every locale generates the same programs and runs them in lockstep: for
//! each (program, iteration) the owners reset their words (to a value
//! stamped with the iteration, so data of an earlier iteration reads as
//! `old` and a mix of two as `torn`), the launcher barrier lets everyone
//! start, each locale starts its top-level threads (a worker task, the main
//! thread or a thread of its own), the threads do their steps with seeded
//! random spins between them (PUT/GET blocking or not, atomics, on / on_nb
//! / on_fast, begin / join, barrier: all `Runtime` calls), and once every
//! thread and every non-blocking body has finished the owners read the
//! final values and locale 0 checks the outcome against the SC oracle. The
//! launcher's barrier orders nothing in the network: visibility comes only
//! from the layer's own boundaries.
//!
//! Locale 0 prints a `gen` line per program (iterations, forbidden count,
//! outcome histogram, allowed outcomes never seen), `gen-forbidden` lines
//! for the first few forbidden outcomes, and a `gen-summary` line. Exit 1 if
//! a forbidden outcome was seen, unless `PGAS_MCM_WEAKEN` is set (a negative
//! control: reported, not failed).
//!
//! Environment: `LITMUS_GEN_SEED` (1), `LITMUS_GEN_DELAY` (largest random
//! spin in ns, 3000), `LITMUS_GEN_SHOW` (forbidden outcomes detailed, 5),
//! `LITMUS_GEN_STRIDE` / `LITMUS_GEN_OFFSET` (run every k-th program only,
//! for splitting a family over cells), `LITMUS_GEN_MATCH` (only programs
//! whose text contains this), `LITMUS_GEN_HANG_STACKS=DIR` (when the
//! watchdog fires, every thread's stack into DIR first, by gdb).
//!
//! The watchdog: no iteration started for 60 s, or finalize (and the exit
//! after it) longer than 10 s, ends the locale with status 3, naming the
//! program, iteration and phase it was in.

mod thread;
mod watchdog;
mod words;

use crate::e;
use crate::litmus::generated::{Mem, ThreadKind, LOCALES};
use crate::litmus::tally::Tally;
use crate::litmus::value::{code_text, decode, pattern};
use runtime_shim::{Builder, OnCtx, Runtime};
use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;
use thread::{encode_regs, run_thread, Regs};
use watchdog::{start_watchdog, uptime_ms, CURRENT, PHASE, PROGRESS_MS};
use words::{
    decode_args, programs, result_word, word_len, word_ptr, Env, ENV, MAX_REGS, MAX_THREADS,
    MAX_WORDS, R, STATIC_AREA, STATIC_BYTES, STUCK,
};

/// The on-statement body: runs the named thread; a non-blocking one
/// publishes its registers in this locale's result area.
fn body(ctx: &OnCtx, args: &[u8]) -> Vec<u8> {
    let (pi, t, it) = decode_args(args);
    let rt = ctx.rt();
    let regs = run_thread(rt, pi, t, it).unwrap_or_else(|err| panic!("T{t}: {err}"));
    if programs()[pi].is_nb_body(t) {
        // The harness reads this thread's stores once `done` is set: end the
        // task's visibility obligations first (the layer would at its end).
        rt.task_end_hook()
            .unwrap_or_else(|err| panic!("T{t}: task end: {err}"));
        for (k, (r, v)) in regs.iter().enumerate() {
            result_word(t, k).store((*r as u64) << 8 | *v as u64 | 1 << 16, Ordering::Relaxed);
        }
        result_word(t, MAX_REGS).store(it + 1, Ordering::Release);
        return Vec::new();
    }
    encode_regs(&regs)
}

/// One iteration of program `pi` on this locale: returns `key=value` pairs.
fn iteration(rt: &'static Runtime, pi: usize, it: u64) -> R<Vec<(String, u8)>> {
    let p = &programs()[pi];
    let me = rt.here() as u8;
    // Reset the words this locale owns, and the done words of its bodies.
    PROGRESS_MS.store(uptime_ms(), Ordering::Relaxed);
    CURRENT.store((pi as u64) << 32 | (it & 0xffff_ffff), Ordering::Relaxed);
    PHASE.store(0, Ordering::Relaxed);
    for (w, word) in p.words.iter().enumerate() {
        if word.home == me {
            let init = match word.mem {
                // A free lock is a zero word.
                Mem::Lock => vec![0; 8],
                _ => pattern(it, 0, word_len(p, w as u8)),
            };
            rt.put(word_ptr(p, w as u8)?, &init).map_err(e("reset"))?;
        }
    }
    let nb_here: Vec<u8> = (0..p.threads.len() as u8)
        .filter(|&t| p.threads[t as usize].locale == me && p.is_nb_body(t))
        .collect();
    for &t in &nb_here {
        for k in 0..=MAX_REGS {
            result_word(t, k).store(0, Ordering::Relaxed);
        }
    }
    let oob = rt.comm().oob();
    PHASE.store(1, Ordering::Relaxed);
    oob.barrier().map_err(e("oob barrier"))?;
    PHASE.store(2, Ordering::Relaxed);

    // Start this locale's top-level threads.
    let mut tasks = Vec::new();
    let mut foreign = Vec::new();
    let mut main = None;
    for t in p.top_level() {
        let th = &p.threads[t as usize];
        if th.locale != me {
            continue;
        }
        match th.kind {
            ThreadKind::Task => tasks.push(
                rt.spawn(move || run_thread(rt, pi, t, it))
                    .map_err(e("spawn"))?,
            ),
            ThreadKind::Foreign => foreign.push(std::thread::spawn(move || {
                let r = run_thread(rt, pi, t, it);
                r.and_then(|regs| {
                    rt.task_end_hook().map_err(e("task end (foreign)"))?;
                    Ok(regs)
                })
            })),
            ThreadKind::Main | ThreadKind::Child => main = Some(t),
        }
    }
    let mut regs: Regs = Vec::new();
    if let Some(t) = main {
        regs.extend(run_thread(rt, pi, t, it)?);
        rt.task_end_hook().map_err(e("task end (main)"))?;
    }
    // Top-level tasks run on workers (their kind), never on this thread.
    for h in tasks {
        regs.extend(h.join_on_worker().map_err(e("join"))??);
    }
    for h in foreign {
        regs.extend(
            h.join()
                .map_err(|_| "foreign thread panicked".to_string())??,
        );
    }
    // Bodies of non-blocking on-statements that run here.
    PHASE.store(3, Ordering::Relaxed);
    let t0 = Instant::now();
    for &t in &nb_here {
        while result_word(t, MAX_REGS).load(Ordering::Acquire) != it + 1 {
            if t0.elapsed() > STUCK {
                return Err(format!("the non-blocking body T{t} never finished"));
            }
            std::thread::yield_now();
        }
        for k in 0..MAX_REGS {
            let x = result_word(t, k).load(Ordering::Relaxed);
            if x & 1 << 16 != 0 {
                regs.push(((x >> 8) as u8, x as u8));
            }
        }
    }
    PHASE.store(4, Ordering::Relaxed);
    oob.barrier().map_err(e("oob barrier"))?;
    PHASE.store(5, Ordering::Relaxed);
    // Final values of the words this locale owns.
    let mut kv: Vec<(String, u8)> = regs
        .into_iter()
        .map(|(r, v)| (format!("r{r}"), v))
        .collect();
    for (w, word) in p.words.iter().enumerate() {
        if word.home == me {
            let mut buf = vec![0u8; word_len(p, w as u8)];
            rt.get(&mut buf, word_ptr(p, w as u8)?)
                .map_err(e("final read"))?;
            let v = match word.mem {
                // Free (0) or still held (199).
                Mem::Lock if buf.iter().all(|b| *b == 0) => 0,
                Mem::Lock => 199,
                _ => decode(&buf, it),
            };
            kv.push((format!("w{w}"), v));
        }
    }
    Ok(kv)
}

fn run() -> R<u64> {
    let builder = Builder::new();
    let body_id = builder
        .register("litmus-gen.body", body)
        .map_err(e("register"))?;
    let rt = builder.init().map_err(e("init"))?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let select = args.first().cloned().unwrap_or_else(|| "all".into());
    let iters: u64 = args
        .get(1)
        .map(|s| s.parse().map_err(|_| format!("bad iteration count {s:?}")))
        .transpose()?
        .unwrap_or(20);
    let num = |name: &str, default: u64| -> R<u64> {
        std::env::var(name)
            .ok()
            .map(|v| {
                v.parse()
                    .map_err(|_| format!("{name}={v:?} is not a number"))
            })
            .transpose()
            .map(|o| o.unwrap_or(default))
    };
    let seed = num("LITMUS_GEN_SEED", 1)?;
    let stride = num("LITMUS_GEN_STRIDE", 1)?.max(1) as usize;
    let offset = num("LITMUS_GEN_OFFSET", 0)? as usize;
    let show = num("LITMUS_GEN_SHOW", 5)?;
    if rt.num_locales() != usize::from(LOCALES) {
        return Err(format!(
            "run with {LOCALES} locales (pgasrun -n {LOCALES}), not {}",
            rt.num_locales()
        ));
    }
    let inject1 = (rt.comm().provider().inject_size + 1).clamp(9, 64 << 10);
    let over_max = (rt.comm().provider().max_msg_size.saturating_mul(5) / 2).clamp(9, 256 << 10);
    let slot = inject1.max(over_max).next_multiple_of(64);
    if MAX_WORDS * slot > STATIC_BYTES {
        return Err(format!(
            "word slots of {slot} bytes do not fit the {STATIC_BYTES}-byte static area"
        ));
    }
    let area = rt
        .alloc_all::<u8>(MAX_WORDS * slot + MAX_THREADS * (MAX_REGS + 1) * 8)
        .map_err(e("alloc_all"))?;
    let statics = (0..rt.num_locales())
        .map(|l| rt.static_ptr(STATIC_AREA.as_ptr() as *const u8, l))
        .collect::<Result<Vec<_>, _>>()
        .map_err(e("static_ptr"))?;
    let _ = ENV.set(Env {
        area,
        statics,
        slot,
        inject1,
        over_max,
        body: body_id,
        max_delay: num("LITMUS_GEN_DELAY", 3000)?,
        seed,
    });
    let matching = std::env::var("LITMUS_GEN_MATCH")
        .ok()
        .filter(|m| !m.is_empty());
    let families: Option<BTreeSet<String>> =
        (select != "all").then(|| select.split(',').map(|s| s.trim().to_uppercase()).collect());
    let chosen: Vec<usize> = programs()
        .iter()
        .enumerate()
        .filter(|(_, p)| families.as_ref().is_none_or(|f| f.contains(p.family)))
        .filter(|(_, p)| {
            matching
                .as_ref()
                .is_none_or(|m| p.text().contains(m.as_str()))
        })
        .map(|(i, _)| i)
        .skip(offset)
        .step_by(stride)
        .collect();
    if chosen.is_empty() {
        return Err(format!("no program in {select:?}"));
    }
    let me = rt.here();
    let allowed: Vec<BTreeSet<String>> = if me == 0 {
        chosen
            .iter()
            .map(|&i| programs()[i].allowed())
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    let mut tally: Vec<Tally> = chosen.iter().map(|_| Tally::default()).collect();
    let mut shown = 0;
    let weakened =
        std::env::var("PGAS_MCM_WEAKEN").is_ok_and(|v| !v.trim().is_empty() && v.trim() != "none");
    let mut it = 0u64;
    // Round-robin over the programs, so a short run still covers them all.
    for _round in 0..iters {
        for (k, &pi) in chosen.iter().enumerate() {
            let kv = iteration(rt, pi, it).map_err(|err| {
                format!("program {pi} ({}), iteration {it}: {err}", programs()[pi])
            })?;
            let mut mine = Vec::new();
            for (key, v) in kv {
                mine.extend_from_slice(format!("{key}={}\n", code_text(v)).as_bytes());
            }
            PHASE.store(6, Ordering::Relaxed);
            let all = rt.comm().oob().allgather(&mine).map_err(e("allgather"))?;
            if me == 0 {
                let mut parts: BTreeMap<(u8, u32), String> = BTreeMap::new();
                for line in all.iter().flat_map(|b| {
                    String::from_utf8_lossy(b)
                        .into_owned()
                        .lines()
                        .map(str::to_owned)
                        .collect::<Vec<_>>()
                }) {
                    let (key, v) = line.split_once('=').ok_or("garbled gather")?;
                    let order = if key.starts_with('r') { 0 } else { 1 };
                    let n: u32 = key[1..].parse().map_err(|_| "garbled key")?;
                    parts.insert((order, n), format!("{key}={v}"));
                }
                let outcome = parts.into_values().collect::<Vec<_>>().join(" ");
                if tally[k].record(&outcome, 1, &allowed[k]) && shown < show {
                    shown += 1;
                    println!(
                        "gen-forbidden id={pi} family={} it={it} outcome={outcome:?} program={}",
                        programs()[pi].family,
                        programs()[pi]
                    );
                }
            }
            it += 1;
        }
    }
    let mut forbidden = 0;
    if me == 0 {
        let mut per_family: BTreeMap<&str, (u64, u64, u64, u64)> = BTreeMap::new();
        for (k, &pi) in chosen.iter().enumerate() {
            let p = &programs()[pi];
            let t = &tally[k];
            let gaps = t.gaps(&allowed[k]);
            let seen = t.histogram(":");
            println!(
                "gen id={pi} family={} iters={} forbidden={} seen={:?} gaps={:?} program={}",
                p.family, t.iters, t.forbidden, seen, gaps, p
            );
            let f = per_family.entry(p.family).or_default();
            f.0 += 1;
            f.1 += t.iters;
            f.2 += t.forbidden;
            f.3 += gaps.len() as u64;
            forbidden += t.forbidden;
        }
        for (fam, (n, iters, forb, gaps)) in &per_family {
            println!(
                "gen-family family={fam} programs={n} iters={iters} forbidden={forb} gaps={gaps}"
            );
        }
        println!(
            "gen-summary mode={} provider={} programs={} iterations={it} forbidden={forbidden} weakened={weakened}",
            rt.mode(),
            rt.provider_name(),
            chosen.len(),
        );
    }
    PROGRESS_MS.store(uptime_ms(), Ordering::Relaxed);
    PHASE.store(7, Ordering::Relaxed);
    rt.finalize().map_err(e("finalize"))?;
    PROGRESS_MS.store(uptime_ms(), Ordering::Relaxed);
    PHASE.store(8, Ordering::Relaxed);
    Ok(if weakened { 0 } else { forbidden })
}

/// The program: `litmus_gen [FAMILY,...|all] [ITERS]`.
pub fn main() -> ExitCode {
    start_watchdog();
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(err) => {
            eprintln!("litmus_gen: {err}");
            ExitCode::from(2)
        }
    }
}
