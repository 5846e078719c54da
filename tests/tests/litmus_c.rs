//! The litmus programs through the C APIs (`pgas_tests::litmus_c`):
//! generated as OpenSHMEM programs (built with `oshcc`) and as programs of
//! the runtime shim's C ABI, run on 4 PEs in every cell below, every
//! outcome checked against the SC oracle; zero forbidden outcomes asserted.
//! Then the negative controls (see `controls`): a blocking PUT that does not
//! wait for its source (`PGAS_MCM_WEAKEN=no-source-wait`) must show in
//! PUT-SRC over shm; in the full run also, with the mode's forcing switched off
//! (`PGAS_MCM_WEAKEN=no-forcing`, so `shmem_quiet` / `pgas_quiet` force
//! nothing) the MP-QUIET and MP-NBI programs over tcp;ofi_rxm must show a
//! forbidden outcome.
//!
//! CI runs a few dozen iterations per program and cell; the full run
//! (`LITMUS_C_FULL=1`, >= 10^4 iterations per family and cell, 2,000 on
//! sockets) prints a table for `docs/conformance.md` (`LITMUS_C_REPORT`
//! writes it to a file). `LITMUS_C_CELLS=<text>` keeps the cells whose
//! description contains the text.

use pgas_tests::cbuild::{build_libraries, one_job, workspace};
use pgas_tests::cells::{cell, control_jobs, every_mode, mapped_path, mixed_hosts, Cell};
use pgas_tests::litmus_c::{allowed, catalogue, emit_c, parse, Api, CProg, PES};
use pgas_tests::{launch, shim_soname_link, target_dir};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Generates, writes and compiles the program of `api`; returns its path.
fn program(api: Api) -> PathBuf {
    static PROGS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    let (s, p) = PROGS.get_or_init(|| {
        build_libraries();
        let dir = target_dir();
        let mut out = Vec::new();
        for api in [Api::Shmem, Api::Pgas] {
            let src = dir.join(format!("litmus_c_{}.c", api.name()));
            std::fs::write(&src, emit_c(api, &catalogue(api))).expect("write the generated C");
            let exe = dir.join(format!("litmus_c_{}", api.name()));
            let r = match api {
                Api::Shmem => Command::new(workspace().join("shmem/bin/oshcc"))
                    .env("PGAS_SHMEM_LIBDIR", &dir)
                    .args(["-std=c11", "-Wall", "-Werror", "-O2", "-o"])
                    .arg(&exe)
                    .arg(&src)
                    .output()
                    .expect("run oshcc"),
                Api::Pgas => {
                    shim_soname_link(&dir);
                    Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
                        .args(["-std=c11", "-Wall", "-Werror", "-O2", "-I"])
                        .arg(workspace().join("runtime-shim/include"))
                        .arg(&src)
                        .arg("-o")
                        .arg(&exe)
                        .arg("-L")
                        .arg(&dir)
                        .arg("-lruntime_shim")
                        .arg(format!("-Wl,-rpath,{}", dir.display()))
                        .output()
                        .expect("run cc")
                }
            };
            assert!(
                r.status.success(),
                "compiling {} failed:\n{}",
                src.display(),
                String::from_utf8_lossy(&r.stderr)
            );
            out.push(exe);
        }
        (out[0].clone(), out[1].clone())
    });
    match api {
        Api::Shmem => s.clone(),
        Api::Pgas => p.clone(),
    }
}

/// Every provider x mode it honours on the provider's path, the mapped
/// path in every mode, mixed hosts, CPU-route atomics, chunked transfers.
fn cells() -> Vec<Cell> {
    let mut v: Vec<Cell> = every_mode()
        .into_iter()
        .map(|c| Cell {
            label: "fabric",
            ..c
        })
        .collect();
    v.extend(mapped_path());
    for (p, m) in [
        ("sockets", "message-order"),
        ("tcp;ofi_rxm", "message-order"),
    ] {
        v.push(mixed_hosts(p, m));
    }
    v.push(Cell {
        env: vec![("PGAS_AMO_VIA_AM", "1")],
        label: "CPU-route atomics",
        ..cell("tcp;ofi_rxm", "message-order")
    });
    v.push(Cell {
        env: vec![("PGAS_MAX_MSG_SIZE", "4096")],
        label: "chunked transfers",
        ..cell("tcp;ofi_rxm", "delivery-complete")
    });
    if let Ok(f) = std::env::var("LITMUS_C_CELLS") {
        v.retain(|c| c.text().contains(&f));
    }
    v
}

/// What a job found per program: iterations, forbidden iterations, the
/// forbidden outcomes seen, allowed outcomes never seen.
#[derive(Default, Debug)]
struct Found {
    iters: u64,
    forbidden: u64,
    bad: Vec<String>,
    gaps: usize,
}

fn run_job(
    api: Api,
    c: &Cell,
    progs: &[CProg],
    matching: &str,
    (iters, per): (u64, Option<&str>),
    extra: &[(&str, &str)],
) -> (Result<BTreeMap<String, Found>, String>, f64) {
    let env = c.job_env("1", extra);
    let it = iters.to_string();
    let mut args = vec![matching, it.as_str()];
    args.extend(per);
    // One job at a time: 4 PEs on 2 cores already oversubscribe, and two
    // jobs at once (the two tests of this file) made each take minutes.
    let _one = one_job();
    let t0 = Instant::now();
    let run = launch(PES, &program(api), &args, &env, Duration::from_secs(600));
    let secs = t0.elapsed().as_secs_f64();
    if !run.ok() || !run.stdout.contains("litmus-c done") {
        return (
            Err(format!(
                "{} job in {} failed (exit {:?}):\n{}",
                api.name(),
                c.text(),
                run.code,
                run.stderr
                    .lines()
                    .rev()
                    .take(15)
                    .collect::<Vec<_>>()
                    .join("\n")
            )),
            secs,
        );
    }
    let mut found: BTreeMap<String, Found> = BTreeMap::new();
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in parse(progs, &run.stdout) {
        let p = progs.iter().find(|p| p.name == s.prog).expect("parsed");
        let ok = allowed(p);
        let f = found.entry(s.prog.clone()).or_default();
        f.iters += s.count;
        if !ok.contains(&s.outcome) {
            f.forbidden += s.count;
            f.bad.push(format!("{} x{}", s.outcome, s.count));
        }
        seen.entry(s.prog.clone()).or_default().insert(s.outcome);
    }
    for (name, f) in found.iter_mut() {
        let p = progs.iter().find(|p| &p.name == name).expect("a program");
        f.gaps = allowed(p).difference(&seen[name]).count();
    }
    (Ok(found), secs)
}

fn full() -> bool {
    std::env::var("LITMUS_C_FULL").is_ok_and(|v| v == "1")
}

/// The job's iteration argument: CI's few per program, or the full run's
/// 10^4 per family (2,000 on sockets), which the program divides among
/// the family's programs (`family`).
fn iterations(c: &Cell) -> (u64, Option<&'static str>) {
    if !full() {
        // A smoke tier for the test command's time: the full run is the
        // suite's power, and the negative control has its own size.
        let per_program = if c.provider == "sockets" || c.provider.starts_with("udp") {
            6
        } else {
            24
        };
        return (per_program, None);
    }
    (per_family_target(c), Some("family"))
}

/// The full run's iterations per family in cell `c`.
fn per_family_target(c: &Cell) -> u64 {
    if c.provider == "sockets" {
        2_000
    } else {
        10_000
    }
}

#[test]
fn c_api_litmus_programs_conform_in_every_cell() {
    let mut report = String::from(
        "| API | cell | programs | iterations | forbidden | allowed never seen | s |\n|---|---|---:|---:|---:|---:|---:|\n",
    );
    let mut failures = Vec::new();
    for api in [Api::Shmem, Api::Pgas] {
        let progs = catalogue(api);
        for c in cells() {
            let (r, secs) = run_job(api, &c, &progs, "all", iterations(&c), &[]);
            match r {
                Err(e) => failures.push(e),
                Ok(found) => {
                    let missing: Vec<&str> = progs
                        .iter()
                        .filter(|p| !found.contains_key(&p.name))
                        .map(|p| p.name.as_str())
                        .collect();
                    if !missing.is_empty() {
                        failures.push(format!(
                            "{} {}: programs without a reported outcome: {missing:?}",
                            api.name(),
                            c.text()
                        ));
                    }
                    if full() {
                        let mut per_family: BTreeMap<&str, u64> = BTreeMap::new();
                        for p in &progs {
                            *per_family.entry(p.family).or_default() +=
                                found.get(&p.name).map_or(0, |f| f.iters);
                        }
                        let target = per_family_target(&c);
                        for (fam, n) in per_family.iter().filter(|(_, n)| **n < target) {
                            failures.push(format!(
                                "{} {}: family {fam}: {n} iterations, fewer than {target}",
                                api.name(),
                                c.text()
                            ));
                        }
                    }
                    let forbidden: u64 = found.values().map(|f| f.forbidden).sum();
                    for (name, f) in &found {
                        if f.forbidden > 0 {
                            failures.push(format!(
                                "{} {}: {name}: forbidden {:?}",
                                api.name(),
                                c.text(),
                                f.bad
                            ));
                        }
                    }
                    let _ = writeln!(
                        report,
                        "| {} | {} | {} | {} | {} | {} | {:.0} |",
                        api.name(),
                        c.text(),
                        found.len(),
                        found.values().map(|f| f.iters).sum::<u64>(),
                        forbidden,
                        found.values().map(|f| f.gaps).sum::<usize>(),
                        secs
                    );
                }
            }
        }
    }
    println!("{report}");
    if let Ok(path) = std::env::var("LITMUS_C_REPORT") {
        std::fs::write(path, &report).expect("write the report");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A negative control: with `weakening` set, jobs in `cell` running the
/// programs whose name contains `select` must show a forbidden outcome in
/// a program of `families`, in one of up to `jobs` jobs.
struct Control {
    weakening: &'static str,
    cell: Cell,
    select: &'static str,
    families: &'static [&'static str],
    iterations: u64,
    jobs: usize,
}

/// The controls: (the control, whether CI asserts it).
///
/// - A blocking PUT that returns before reading its source
///   (`no-source-wait`), PUT-SRC over shm: the target copies a large PUT's
///   source after the call (CMA or segments), so the caller's next fill
///   lands. Every job showed it here; the Rust suite asserts the same
///   weakening on shm in CI (`ASSERTED_CONTROLS`).
/// - Quiet that forces nothing (`no-forcing`), 1 MiB MP-QUIET / MP-NBI
///   over tcp;ofi_rxm: the data PUT to a third PE is in that PE's socket
///   when the flag is set, so the reader's GET catches it only while that
///   PE's poller is late. Here (2 cores, 4 PEs) most iterations show it;
///   CI's runner showed it in 1 of 16,000 iterations (2026-11-28): load-
///   dependent, so asserted in the full run only, as the Rust suite's
///   load-dependent controls are.
fn controls() -> Vec<(Control, bool)> {
    vec![
        (
            Control {
                weakening: "no-source-wait",
                cell: cell("shm", "message-order"),
                select: "PUT-SRC",
                families: &["PUT-SRC"],
                iterations: if full() { 2_000 } else { 200 },
                jobs: 3,
            },
            true,
        ),
        (
            Control {
                weakening: "no-forcing",
                cell: cell("tcp;ofi_rxm", "message-order"),
                select: "w131072",
                families: &["MP-QUIET", "MP-NBI"],
                iterations: 5_000,
                jobs: 5,
            },
            false,
        ),
    ]
}

#[test]
fn c_api_negative_controls_are_caught() {
    for (ctl, in_ci) in controls() {
        if !in_ci && !full() {
            continue;
        }
        for api in [Api::Shmem, Api::Pgas] {
            let progs = catalogue(api);
            let t = control_jobs(ctl.jobs, |k| {
                let (r, _) = run_job(
                    api,
                    &ctl.cell,
                    &progs,
                    ctl.select,
                    (ctl.iterations, None),
                    &[("PGAS_MCM_WEAKEN", ctl.weakening)],
                );
                let found = r.unwrap_or_else(|e| panic!("{e}"));
                let control: Vec<_> = found
                    .iter()
                    .filter(|(n, _)| ctl.families.iter().any(|f| n.starts_with(f)))
                    .collect();
                assert!(
                    !control.is_empty(),
                    "{} {}: the job ran no {:?} program",
                    api.name(),
                    ctl.weakening,
                    ctl.families
                );
                let forbidden: u64 = control.iter().map(|(_, f)| f.forbidden).sum();
                let iters: u64 = control.iter().map(|(_, f)| f.iters).sum();
                println!(
                    "{} {} job {k}: {forbidden} forbidden of {iters} {:?} iterations",
                    api.name(),
                    ctl.weakening,
                    ctl.families
                );
                Some((iters, forbidden))
            });
            assert!(
                t.forbidden > 0,
                "{}: PGAS_MCM_WEAKEN={} not caught in {} jobs ({} {:?} iterations in {})",
                api.name(),
                ctl.weakening,
                t.jobs,
                t.iterations,
                ctl.families,
                ctl.cell.text()
            );
        }
    }
}
