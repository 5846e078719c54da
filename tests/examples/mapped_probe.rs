//! Multi-process checks of the intra-node mapped path and of the thread
//! budget, run by `tests/tests/mapped.rs` under `pgasrun`:
//! `mapped_probe SCENARIO...`.
//!
//! * `paths`: every locale prints which peers it maps
//!   (`mapped_probe maps L<me>: <peers>`).
//! * `mixed`: from every locale, from the main thread and a task at once,
//!   fetch-adds, ordered adds and unordered adds on one word of every
//!   locale (so a word gets CPU atomics from co-located locales and AMOs
//!   through AMs from the others, at the same time), PUTs of a pattern to
//!   every locale, GETs of everybody's patterns back, and an on-statement to
//!   every locale; every locale checks its word's exact count. Every locale
//!   prints one `check NAME ... ok` line per check it passed (the set is
//!   `pgas_tests::expect::mapped_mixed`).
//! * `budget`: every locale prints its threads, its workers' cores and the
//!   CPU time its threads other than the main one used while the main
//!   thread slept one second with every locale idle
//!   (`mapped_probe budget L<me>: threads=.. workers=.. cores_owned=..
//!   worker_cores=.. idle_cpu_ms=..`); the test asserts the bounds.
//! * `receive`: locale 0 runs 200 fast on-statements on locale 1 from its
//!   main thread and 200 from a task, each returning the name of the thread
//!   that ran the body there, and prints how many ran on a runtime worker,
//!   the AM handler and the poller (`mapped_probe receive <caller>:
//!   worker=.. handler=.. poller=.. other=..`): with idle workers polling
//!   (or, where CQ waits block, waiting) in the poller's place, the body
//!   runs on the worker that received it, with no hop to the handler.
//!
//! Prints `mapped_probe SCENARIO ok` on locale 0; a mismatch exits non-zero.

use pgas_tests::passed;
use runtime_shim::{fn_id, Dist, FnId, Locale, Runtime};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

type R<T = ()> = Result<T, String>;

fn e<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

const WHERE: FnId = fn_id("mapped-probe.where");
const THREAD: FnId = fn_id("mapped-probe.thread");
/// Updates per (thread, target) in `mixed`; `MAPPED_PROBE_ROUNDS` overrides.
fn rounds() -> u64 {
    std::env::var("MAPPED_PROBE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

fn paths(rt: &'static Runtime) -> R {
    let comm = rt.comm();
    let peers: Vec<String> = (0..rt.num_locales())
        .filter(|j| comm.mapped().maps(*j))
        .map(|j| j.to_string())
        .collect();
    println!(
        "mapped_probe maps L{}: [{}] atomics {}",
        rt.here(),
        peers.join(","),
        if comm.mapped().in_use() {
            "cpu"
        } else {
            "provider"
        }
    );
    rt.barrier().map_err(e)
}

fn hammer(rt: &'static Runtime, counts: &Dist<u64>, slots: &Dist<u64>, who: u64) -> R {
    let n = rt.num_locales();
    let me = rt.here();
    for i in 0..rounds() {
        for t in 0..n {
            let w = rt.atomic(counts.at(t).map_err(e)?);
            match i % 3 {
                0 => {
                    w.fetch_add(1).map_err(e)?;
                }
                1 => w.add(1).map_err(e)?,
                _ => w.add_unordered(1).map_err(e)?,
            }
        }
    }
    rt.unordered_fence().map_err(e)?;
    // Patterns: slot [me * 2 + who] on every locale.
    for t in 0..n {
        let p = slots.at(t).map_err(e)?.add(me * 2 + who as usize);
        rt.put_value(p, pattern(me, t, who)).map_err(e)?;
    }
    Ok(())
}

fn pattern(from: Locale, to: Locale, who: u64) -> u64 {
    0x5eed_0000_0000 + ((from as u64) << 16) + ((to as u64) << 4) + who
}

fn mixed(rt: &'static Runtime) -> R {
    let n = rt.num_locales();
    let me = rt.here();
    let counts = Arc::new(rt.alloc_all::<u64>(8).map_err(e)?);
    let slots = Arc::new(rt.alloc_all::<u64>(2 * n).map_err(e)?);
    rt.barrier().map_err(e)?;
    let (c2, s2) = (counts.clone(), slots.clone());
    let task = rt.spawn(move || hammer(rt, &c2, &s2, 1)).map_err(e)?;
    hammer(rt, &counts, &slots, 0)?;
    task.join().map_err(e)??;
    rt.barrier().map_err(e)?;
    let mine = rt.atomic(counts.at(me).map_err(e)?).read().map_err(e)?;
    let want = n as u64 * 2 * rounds();
    if mine != want {
        return Err(format!(
            "locale {me}: its word counts {mine} updates, expected {want} \
             ({n} locales x 2 threads x {} rounds)",
            rounds()
        ));
    }
    passed!("mixed_count", "count={mine} locale={me}");
    for t in 0..n {
        for from in 0..n {
            for who in 0..2u64 {
                let p = slots.at(t).map_err(e)?.add(from * 2 + who as usize);
                let v = rt.get_value(p).map_err(e)?;
                if v != pattern(from, t, who) {
                    return Err(format!(
                        "locale {me}: slot {from}/{who} on locale {t} holds {v:#x}, expected {:#x}",
                        pattern(from, t, who)
                    ));
                }
            }
        }
        passed!("mixed_patterns", "target={t} slots={} locale={me}", 2 * n);
        let r = rt.on(t, WHERE, &[]).map_err(e)?;
        if r != t.to_le_bytes() {
            return Err(format!("locale {me}: on-statement to {t} answered {r:?}"));
        }
        let answer = usize::from_le_bytes(r.as_slice().try_into().map_err(e)?);
        passed!("mixed_on", "target={t} answer={answer} locale={me}");
    }
    rt.barrier().map_err(e)
}

/// (thread id, name) of every thread of this process.
fn threads() -> Vec<(String, String)> {
    let mut v = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc/self/task") {
        for t in dir.flatten() {
            let tid = t.file_name().to_string_lossy().into_owned();
            let name = std::fs::read_to_string(t.path().join("comm"))
                .map(|s| s.trim().to_string())
                .unwrap_or_default();
            v.push((tid, name));
        }
    }
    v
}

/// Nanoseconds thread `tid` has run (schedstat's first field).
fn cpu_ns(tid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(0)
}

fn allowed_cores(tid: &str) -> String {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Cpus_allowed_list:"))
                .map(|l| l["Cpus_allowed_list:".len()..].trim().to_string())
        })
        .unwrap_or_default()
}

fn budget(rt: &'static Runtime) -> R {
    rt.barrier().map_err(e)?;
    // Let the helpers finish their idle spinning, then measure a second in
    // which nobody does anything.
    std::thread::sleep(Duration::from_millis(300));
    let main_tid = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let others: Vec<(String, String)> = threads()
        .into_iter()
        .filter(|(t, _)| *t != main_tid)
        .collect();
    let before: Vec<u64> = others.iter().map(|(t, _)| cpu_ns(t)).collect();
    std::thread::sleep(Duration::from_secs(1));
    let used: Vec<u64> = others
        .iter()
        .zip(&before)
        .map(|((t, _), b)| cpu_ns(t).saturating_sub(*b))
        .collect();
    let per_thread: Vec<String> = others
        .iter()
        .zip(&used)
        .map(|((_, n), u)| format!("{n}:{:.2}", *u as f64 / 1e6))
        .collect();
    let all = threads();
    let workers: Vec<&(String, String)> = all
        .iter()
        .filter(|(_, n)| n.starts_with("pgas-worker"))
        .collect();
    let worker_cores: Vec<String> = workers.iter().map(|(t, _)| allowed_cores(t)).collect();
    let names: Vec<&str> = all.iter().map(|(_, n)| n.as_str()).collect();
    let available = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!(
        "mapped_probe budget L{}: threads={} names=[{}] workers={} cores_owned={} \
         worker_cores=[{}] idle_cpu_ms={:.2} per_thread_ms=[{}]",
        rt.here(),
        all.len(),
        names.join(","),
        workers.len(),
        rt.comm().hosts().cores_owned(available),
        worker_cores.join(";"),
        used.iter().sum::<u64>() as f64 / 1e6,
        per_thread.join(",")
    );
    rt.barrier().map_err(e)
}

/// Where the bodies of fast on-statements to locale 1 ran (see the module
/// docs).
fn receive(rt: &'static Runtime) -> R {
    const N: usize = 200;
    rt.barrier().map_err(e)?;
    if rt.here() == 0 && rt.num_locales() > 1 {
        let count = |rt: &'static Runtime| -> R<String> {
            let mut by = [0usize; 4];
            for _ in 0..N {
                let name = rt.on_fast(1, THREAD, &[]).map_err(e)?;
                let name = String::from_utf8_lossy(&name).into_owned();
                let k = if name.starts_with("pgas-worker") {
                    0
                } else if name.starts_with("pgas-am-handler") {
                    1
                } else if name.starts_with("pgas-am-poll") {
                    2
                } else {
                    3
                };
                by[k] += 1;
            }
            Ok(format!(
                "worker={} handler={} poller={} other={}",
                by[0], by[1], by[2], by[3]
            ))
        };
        let main = count(rt)?;
        let task = rt
            .spawn(move || count(rt))
            .map_err(e)?
            .join()
            .map_err(e)??;
        println!("mapped_probe receive main: {main}");
        println!("mapped_probe receive task: {task}");
    }
    rt.barrier().map_err(e)
}

fn main() -> ExitCode {
    let scenarios: Vec<String> = std::env::args().skip(1).collect();
    let rt = match pgas_tests::start("mapped_probe", |b| {
        b.register("mapped-probe.where", |c, _| c.here().to_le_bytes().to_vec())?;
        b.register("mapped-probe.thread", |_, _| {
            std::thread::current()
                .name()
                .unwrap_or("unnamed")
                .as_bytes()
                .to_vec()
        })?;
        Ok(())
    }) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    for s in &scenarios {
        let r = match s.as_str() {
            "paths" => paths(rt),
            "mixed" => mixed(rt),
            "budget" => budget(rt),
            "receive" => receive(rt),
            other => Err(format!("unknown scenario {other:?}")),
        };
        match r {
            Ok(()) if rt.here() == 0 => println!("mapped_probe {s} ok"),
            Ok(()) => {}
            Err(x) => {
                eprintln!("mapped_probe {s} FAILED on locale {}: {x}", rt.here());
                rt.abort(&format!("mapped_probe {s}: {x}"));
            }
        }
    }
    pgas_tests::exit(
        "mapped_probe",
        rt.finalize().map_err(|x| format!("finalize: {x}")),
    )
}
