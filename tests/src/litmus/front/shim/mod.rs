//! The Rust API front end of the litmus engine: runs the generated programs
//! ([`crate::litmus::generated`]) through the public API of `runtime-shim`, under
//! `pgasrun` with 4 locales. `tests/examples/litmus_gen.rs` is its main:
//!
//! ```text
//! PGAS_NUM_WORKERS=3 pgasrun -n 4 litmus_gen [FAMILY,...|all] [ITERS|family:N]
//! ```
//!
//! ITERS iterations of each program (20), or `family:N`: N per family,
//! shared among its programs (each runs N / its family's size, rounded up;
//! the full run's form, one job for every family of a cell).
//!
//! Every locale generates the same programs and runs them in lockstep: for
//! each (program, iteration) the owners reset their words (to a value
//! stamped with the iteration, so data of an earlier iteration reads as
//! `old` and a mix of two as `torn`), a barrier lets everyone start (on a
//! page of shared memory when the job is on one machine, else the
//! launcher's: `crate::litmus::host_barrier`), each locale starts its top-level threads (a worker task, the main
//! thread or a thread of its own), the threads do their steps with seeded
//! random spins between them (PUT/GET blocking or not, atomics, on / on_nb
//! / on_fast, begin / join, barrier: all `Runtime` calls), and once every
//! thread and every non-blocking body has finished and that barrier
//! has passed, the owners read the final values (that barrier also starts
//! the next iteration, in the other set of word slots) and locale 0 checks
//! the outcomes, gathered in batches, against the SC oracle. The
//! barrier orders nothing in the network: visibility comes only from the
//! layer's own boundaries.
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
//! watchdog fires, every thread's stack into DIR first, by gdb),
//! `LITMUS_BARRIER=launcher` (the launcher's barrier even on one machine).
//!
//! The watchdog: no iteration started for 60 s, or finalize (and the exit
//! after it) longer than 10 s, ends the locale with status 3, naming the
//! program, iteration and phase it was in.

mod thread;
mod watchdog;
mod words;

use crate::e;
use crate::litmus::generated::{Mem, ThreadKind, LOCALES};
use crate::litmus::host_barrier::HostBarrier;
use crate::litmus::tally::Tally;
use crate::litmus::value::{code_text, decode, pattern};
use runtime_shim::{Builder, OnCtx, Runtime};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;
use thread::{encode_regs, run_thread, Regs};
use watchdog::{start_watchdog, uptime_ms, CURRENT, PHASE, PROGRESS_MS};
use words::{
    decode_args, programs, result_word, word_len, word_ptr, Env, ENV, MAX_REGS, MAX_THREADS,
    MAX_WORDS, R, SLOT_SETS, STATIC_AREA, STATIC_BYTES, STUCK,
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

/// Resets the words this locale owns in program `pi`, iteration `it` (in
/// the iteration's slot set).
fn reset(rt: &'static Runtime, pi: usize, it: u64) -> R {
    let p = &programs()[pi];
    let me = rt.here() as u8;
    for (w, word) in p.words.iter().enumerate() {
        if word.home == me {
            let init = match word.mem {
                // A free lock is a zero word.
                Mem::Lock => vec![0; 8],
                _ => pattern(it, 0, word_len(p, w as u8)),
            };
            rt.put(word_ptr(p, w as u8, it)?, &init)
                .map_err(e("reset"))?;
        }
    }
    Ok(())
}

/// Runs program `pi`, iteration `it`, on this locale: its top-level
/// threads, then waits for the bodies of non-blocking on-statements that run
/// here. Returns the registers set on this locale.
fn run_here(rt: &'static Runtime, pi: usize, it: u64) -> R<Regs> {
    let p = &programs()[pi];
    let me = rt.here() as u8;
    PHASE.store(2, Ordering::Relaxed);
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
    // Bodies of non-blocking on-statements that run here: their done word
    // says `it + 1` once their registers are stored; cleared after reading
    // (the next body here starts only after the next launcher barrier).
    PHASE.store(3, Ordering::Relaxed);
    let t0 = Instant::now();
    for t in (0..p.threads.len() as u8)
        .filter(|&t| p.threads[t as usize].locale == me && p.is_nb_body(t))
    {
        while result_word(t, MAX_REGS).load(Ordering::Acquire) != it + 1 {
            if t0.elapsed() > STUCK {
                return Err(format!("the non-blocking body T{t} never finished"));
            }
            std::thread::yield_now();
        }
        for k in 0..MAX_REGS {
            let x = result_word(t, k).swap(0, Ordering::Relaxed);
            if x & 1 << 16 != 0 {
                regs.push(((x >> 8) as u8, x as u8));
            }
        }
    }
    Ok(regs)
}

/// The final values of the words this locale owns in program `pi`,
/// iteration `it`, after the registers `regs`: its `key=value` record.
fn finals(rt: &'static Runtime, pi: usize, it: u64, regs: Regs) -> R<String> {
    let p = &programs()[pi];
    let me = rt.here() as u8;
    let mut record = String::new();
    for (r, v) in regs {
        let _ = write!(record, "r{r}={} ", code_text(v));
    }
    for (w, word) in p.words.iter().enumerate() {
        if word.home == me {
            let mut buf = vec![0u8; word_len(p, w as u8)];
            rt.get(&mut buf, word_ptr(p, w as u8, it)?)
                .map_err(e("final read"))?;
            let v = match word.mem {
                // Free (0) or still held (199).
                Mem::Lock if buf.iter().all(|b| *b == 0) => 0,
                Mem::Lock => 199,
                _ => decode(&buf, it),
            };
            let _ = write!(record, "w{w}={} ", code_text(v));
        }
    }
    Ok(record)
}

/// One iteration of the lockstep: which of the chosen programs (`k`),
/// the program (`pi`) and the iteration number (`it`).
#[derive(Clone, Copy)]
struct Turn {
    k: usize,
    pi: usize,
    it: u64,
}

impl Turn {
    /// An error of this turn, naming program and iteration.
    fn failed(self) -> impl Fn(String) -> String {
        move |err| {
            format!(
                "program {} ({}), iteration {}: {err}",
                self.pi,
                programs()[self.pi],
                self.it
            )
        }
    }
}

/// Iterations whose records the locales gather at once (one launcher
/// allgather per batch instead of one per iteration).
const GATHER_BATCH: usize = 256;

/// Locale 0's judge: the allowed outcomes of each chosen program, the
/// tallies, and how many forbidden outcomes were printed in detail.
struct Judge {
    allowed: Vec<BTreeSet<String>>,
    tally: Vec<Tally>,
    shown: u64,
    show: u64,
}

impl Judge {
    /// Judges one gathered batch: line j of every locale's part is its
    /// record of `batch[j]`.
    fn judge(&mut self, batch: &[Turn], parts: &[Vec<u8>]) -> R {
        let texts: Vec<Vec<&str>> = parts
            .iter()
            .map(|b| std::str::from_utf8(b).map(|t| t.split('\n').collect()))
            .collect::<Result<_, _>>()
            .map_err(|_| "garbled gather")?;
        for (j, &Turn { k, pi, it }) in batch.iter().enumerate() {
            let mut kv: BTreeMap<(u8, u32), &str> = BTreeMap::new();
            for lines in &texts {
                let line = lines.get(j).ok_or("short gather")?;
                for item in line.split_whitespace() {
                    let (key, _) = item.split_once('=').ok_or("garbled record")?;
                    let order = if key.starts_with('r') { 0 } else { 1 };
                    let n: u32 = key[1..].parse().map_err(|_| "garbled key")?;
                    kv.insert((order, n), item);
                }
            }
            let outcome = kv.into_values().collect::<Vec<_>>().join(" ");
            if self.tally[k].record(&outcome, 1, &self.allowed[k]) && self.shown < self.show {
                self.shown += 1;
                println!(
                    "gen-forbidden id={pi} family={} it={it} outcome={outcome:?} program={}",
                    programs()[pi].family,
                    programs()[pi]
                );
            }
        }
        Ok(())
    }
}

fn run() -> R<u64> {
    let builder = Builder::new();
    let body_id = builder
        .register("litmus-gen.body", body)
        .map_err(e("register"))?;
    let rt = builder.init().map_err(e("init"))?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let select = args.first().cloned().unwrap_or_else(|| "all".into());
    let iters = Iters::parse(args.get(1).map(String::as_str))?;
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
    if SLOT_SETS * MAX_WORDS * slot > STATIC_BYTES {
        return Err(format!(
            "{SLOT_SETS} sets of {MAX_WORDS} word slots of {slot} bytes do not fit the {STATIC_BYTES}-byte static area"
        ));
    }
    let area = rt
        .alloc_all::<u8>(SLOT_SETS * MAX_WORDS * slot + MAX_THREADS * (MAX_REGS + 1) * 8)
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
    let mut judge = Judge {
        allowed,
        tally: chosen.iter().map(|_| Tally::default()).collect(),
        shown: 0,
        show,
    };
    let weakened =
        std::env::var("PGAS_MCM_WEAKEN").is_ok_and(|v| !v.trim().is_empty() && v.trim() != "none");
    // Round-robin over the programs, so a short run still covers them all
    // (a program whose count is reached drops out of later rounds).
    let per_program = iters.per_program(&chosen);
    let rounds = per_program.iter().copied().max().unwrap_or(0);
    let counts = &per_program;
    let order: Vec<Turn> = (0..rounds)
        .flat_map(|r| {
            chosen
                .iter()
                .copied()
                .enumerate()
                .filter(move |&(k, _)| counts[k] > r)
        })
        .enumerate()
        .map(|(it, (k, pi))| Turn {
            k,
            pi,
            it: it as u64,
        })
        .collect();
    let it = order.len() as u64;
    let oob = rt.comm().oob();
    let lockstep = HostBarrier::new(rt.comm())?;
    // Lockstep with one barrier per iteration (shared memory on one host,
    // else the launcher's; `host_barrier`): iteration j runs
    // in slot set j % 2; the barrier after it is also the start of j + 1.
    // After that barrier each owner reads j's finals and resets set j % 2
    // for iteration j + 2 while the others may already run j + 1 in the
    // other set (reset before the barrier that started j + 1 ended).
    // Neither barrier orders anything in the network.
    for t in order.iter().take(2) {
        reset(rt, t.pi, t.it).map_err(t.failed())?;
    }
    // Result words start clear (afterwards each is cleared as it is read).
    for t in 0..MAX_THREADS as u8 {
        for k in 0..=MAX_REGS {
            result_word(t, k).store(0, Ordering::Relaxed);
        }
    }
    PHASE.store(1, Ordering::Relaxed);
    oob.barrier().map_err(e("oob barrier"))?;
    let mut records = String::new();
    let mut batch_start = 0;
    for (j, &turn) in order.iter().enumerate() {
        let Turn { pi, it, .. } = turn;
        PROGRESS_MS.store(uptime_ms(), Ordering::Relaxed);
        CURRENT.store((pi as u64) << 32 | (it & 0xffff_ffff), Ordering::Relaxed);
        let regs = run_here(rt, pi, it).map_err(turn.failed())?;
        PHASE.store(4, Ordering::Relaxed);
        lockstep.wait(rt.comm()).map_err(turn.failed())?;
        PHASE.store(5, Ordering::Relaxed);
        records.push_str(&finals(rt, pi, it, regs).map_err(turn.failed())?);
        records.push('\n');
        if let Some(next) = order.get(j + 2) {
            reset(rt, next.pi, next.it).map_err(next.failed())?;
        }
        if j + 1 - batch_start == GATHER_BATCH || j + 1 == order.len() {
            PHASE.store(6, Ordering::Relaxed);
            let all = oob
                .allgather(records.as_bytes())
                .map_err(e("allgather"))
                .map_err(turn.failed())?;
            if me == 0 {
                judge.judge(&order[batch_start..=j], &all)?;
            }
            records.clear();
            batch_start = j + 1;
        }
    }
    let tally = judge.tally;
    let allowed = judge.allowed;
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
            "gen-summary mode={} provider={} programs={} iterations={it} forbidden={forbidden} weakened={weakened} lockstep={}",
            rt.mode(),
            rt.provider_name(),
            chosen.len(),
            if lockstep.is_shared() { "shared-page" } else { "launcher" },
        );
    }
    PROGRESS_MS.store(uptime_ms(), Ordering::Relaxed);
    PHASE.store(7, Ordering::Relaxed);
    rt.finalize().map_err(e("finalize"))?;
    PROGRESS_MS.store(uptime_ms(), Ordering::Relaxed);
    PHASE.store(8, Ordering::Relaxed);
    Ok(if weakened { 0 } else { forbidden })
}

/// How many iterations the chosen programs run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Iters {
    /// This many of each program.
    Each(u64),
    /// This many per family, shared among its programs.
    PerFamily(u64),
}

impl Iters {
    /// The command line's ITERS argument (20 of each when absent).
    fn parse(arg: Option<&str>) -> R<Iters> {
        let num = |s: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("bad iteration count {s:?} (a number, or family:N)"))
        };
        match arg {
            None => Ok(Iters::Each(20)),
            Some(a) => match a.strip_prefix("family:") {
                Some(n) => Ok(Iters::PerFamily(num(n)?)),
                None => Ok(Iters::Each(num(a)?)),
            },
        }
    }

    /// Iterations of each of `chosen` (program indices).
    fn per_program(self, chosen: &[usize]) -> Vec<u64> {
        match self {
            Iters::Each(n) => vec![n; chosen.len()],
            Iters::PerFamily(target) => {
                let mut sizes: BTreeMap<&str, u64> = BTreeMap::new();
                for &i in chosen {
                    *sizes.entry(programs()[i].family).or_default() += 1;
                }
                chosen
                    .iter()
                    .map(|&i| target.div_ceil(sizes[programs()[i].family]))
                    .collect()
            }
        }
    }
}

/// The program: `litmus_gen [FAMILY,...|all] [ITERS|family:N]`.
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
