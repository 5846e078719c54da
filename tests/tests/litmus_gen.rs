//! The generated litmus programs (`pgas_tests::litmus::generated`), run through the
//! public API of `runtime-shim` on every provider in every MCM mode it
//! honours, plus cells on the intra-node mapped path (`PGAS_LOCAL_PATH=mapped`),
//! with atomics forced through the CPU route (`PGAS_AMO_VIA_AM=1`) and with
//! unbound worker threads
//! (`PGAS_MAX_TX_CONTEXTS`); zero forbidden outcomes asserted everywhere.
//! Then the negative controls: each hole the conformance issue closed is
//! re-opened with its `PGAS_MCM_WEAKEN` switch, and the suite must see it
//! where it shows reliably (the others are reported in the full run).
//!
//! CI runs a few rounds per cell (a couple of minutes in all). The full run,
//! at least 10^4 iterations per program family and cell (2,000 on the slow
//! `sockets` provider), writes the report of `docs/conformance.md`:
//!
//! ```text
//! LITMUS_GEN_FULL=1 LITMUS_GEN_REPORT=/tmp/gen.md cargo test --release -p pgas-tests --test litmus_gen
//! ```
//! (`scripts/litmus-full` runs it and the hand-written suite's full run;
//! `LITMUS_GEN_CELLS=<text>` keeps the cells whose "provider mode label"
//! contains the text; `LITMUS_GEN_FIRST_CELL=<k>` starts at the k-th of
//! them, counted from 0, to go on with a run that was stopped.) With a
//! report path, each cell's row is also appended to `<report>.progress` as
//! soon as the cell ends, so a long run that is stopped keeps what it
//! measured.

use pgas_tests::cells::{
    cell, control_jobs, every_mode, labelled, mapped_path, mixed_hosts, with, Cell, ControlTally,
};
use pgas_tests::litmus::generated as litmus_gen;
use pgas_tests::{example, launch};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Every provider x mode it honours, plus the mapped, CPU-route and unbound cells.
fn cells() -> Vec<Cell> {
    let cpu_route = [("PGAS_AMO_VIA_AM", "1")];
    let mut v = every_mode();
    v.extend(labelled(
        "CPU-route atomics",
        &cpu_route,
        &[("shm", "message-order"), ("sockets", "message-order-fence")],
    ));
    // The intra-node mapped path (the default on one host; the harness
    // runs the provider path unless told): PUT/GET copies, CPU atomics, the
    // on-statements through the provider; every mode once. The heaps and,
    // since issue 37, the static data are mapped (MP-STATIC, FENCE and
    // SIGNAL have static words); "mapped heaps only" keeps the path before
    // it, static data through the provider (`PGAS_LOCAL_PATH=mapped-heap`).
    v.extend(mapped_path());
    v.extend(labelled(
        "mapped heaps only",
        &[("PGAS_LOCAL_PATH", "mapped-heap")],
        &[("shm", "message-order")],
    ));
    let tcp_shm = [
        ("tcp;ofi_rxm", "message-order"),
        ("shm", "delivery-complete"),
    ];
    // 2 + 1 handler + 3 workers wanted: 5 leaves the workers three shared
    // contexts.
    v.extend(labelled(
        "unbound workers",
        &[("PGAS_MAX_TX_CONTEXTS", "5")],
        &tcp_shm,
    ));
    // Two simulated hosts, a,b,a,b: L0 and L2 map each other, as do L1 and
    // L3; every other pair takes the provider. Atomics are CPU atomics
    // job-wide (mapped words by the CPU, the others through AMs). Every
    // mode of the provider that spans hosts here.
    // The same two hosts over tcp and udp too (multi-host jobs ask for
    // FI_REMOTE_COMM since issue 24; only sockets could span hosts before).
    let others = [
        ("tcp;ofi_rxm", "message-order"),
        ("tcp;ofi_rxm", "delivery-complete"),
        ("udp;ofi_rxd", "message-order"),
    ];
    let sockets = MIXED_MODES.map(|mode| (MIXED_PROVIDER, mode));
    for (provider, mode) in sockets.into_iter().chain(others) {
        v.push(mixed_hosts(provider, mode));
    }
    // Atomics through AMs on providers that have native ones.
    v.extend(labelled(
        "CPU-route atomics",
        &cpu_route,
        &[
            ("tcp;ofi_rxm", "message-order"),
            ("tcp;ofi_rxm", "delivery-complete"),
        ],
    ));
    // One worker: a waiting task runs the others (help-while-waiting), so
    // task ends happen inside another task's settle (the NESTED family).
    for (provider, env) in [
        (
            "tcp;ofi_rxm",
            vec![("PGAS_NUM_WORKERS", "1"), ("PGAS_AMO_VIA_AM", "1")],
        ),
        ("udp;ofi_rxd", vec![("PGAS_NUM_WORKERS", "1")]),
    ] {
        v.push(Cell {
            env,
            label: "one worker",
            ..cell(provider, "message-order")
        });
    }
    // The AM layer's other shapes: two handler threads (non-fetching AMOs
    // via AM are then not postponed), 'done' by PUT.
    v.extend(labelled(
        "2 AM handlers",
        &[("PGAS_AM_HANDLERS", "2"), ("PGAS_AMO_VIA_AM", "1")],
        &[("tcp;ofi_rxm", "message-order")],
    ));
    v.extend(labelled(
        "done by PUT",
        &[("PGAS_AM_DONE", "put"), ("PGAS_AMO_VIA_AM", "1")],
        &[("shm", "message-order")],
    ));
    // Transfers cut into 4 KiB pieces (the over-max-msg programs: 10 KiB).
    v.extend(labelled(
        "chunked transfers",
        &[("PGAS_MAX_MSG_SIZE", "4096")],
        &tcp_shm,
    ));
    v
}

/// The provider of the mixed-host cells: the one that reaches locales on
/// other hosts here in every mode.
const MIXED_PROVIDER: &str = "sockets";
/// The modes of the mixed-host cells.
const MIXED_MODES: [&str; 3] = ["message-order-fence", "message-order", "delivery-complete"];

/// What one job reported.
#[derive(Debug, Default)]
struct JobOut {
    ok: bool,
    summary: String,
    /// family -> (programs, iterations, forbidden, gaps)
    families: BTreeMap<String, (u64, u64, u64, u64)>,
    forbidden_lines: Vec<String>,
    tail: String,
    secs: f64,
}

impl JobOut {
    fn forbidden(&self) -> u64 {
        self.families.values().map(|f| f.2).sum()
    }
    fn iterations(&self) -> u64 {
        self.families.values().map(|f| f.1).sum()
    }
}

fn field(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// One `litmus_gen` job: `families` (`all` or a list) for `iters`
/// iterations per program, or (`family:N`) N per family shared among its
/// programs.
fn run_job(
    c: &Cell,
    families: &str,
    iters: &str,
    extra: &[(&str, &str)],
    timeout: Duration,
) -> JobOut {
    let env = c.job_env("3", extra);
    let t0 = Instant::now();
    let run = launch(
        litmus_gen::LOCALES as usize,
        &example("litmus_gen"),
        &[families, iters],
        &env,
        timeout,
    );
    let mut out = JobOut {
        ok: run.ok(),
        secs: t0.elapsed().as_secs_f64(),
        ..JobOut::default()
    };
    for line in run.stdout.lines() {
        if let Some(rest) = line.strip_prefix("gen-family ") {
            let fam = rest
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix("family="))
                .unwrap_or("?")
                .to_string();
            out.families.insert(
                fam,
                (
                    field(rest, "programs"),
                    field(rest, "iters"),
                    field(rest, "forbidden"),
                    field(rest, "gaps"),
                ),
            );
        } else if line.starts_with("gen-summary") {
            out.summary = line.to_string();
        } else if line.starts_with("gen-forbidden") {
            out.forbidden_lines.push(line.to_string());
        }
    }
    let tail: Vec<&str> = run.stderr.lines().rev().take(12).collect();
    out.tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    out
}

fn describe(c: &Cell) -> String {
    if c.label.is_empty() {
        format!("{} {}", c.provider, c.mode)
    } else {
        format!("{} {} ({})", c.provider, c.mode, c.label)
    }
}

/// The families and how many programs each has (for per-family rounds).
fn family_sizes() -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for p in litmus_gen::generate() {
        *m.entry(p.family).or_insert(0) += 1;
    }
    m
}

/// One cell's row of the report: iterations / forbidden / gaps per family,
/// then the totals and the time.
fn table_row(fams: &[&str], c: &Cell, o: &JobOut) -> String {
    let cols: Vec<String> = fams
        .iter()
        .map(|f| match o.families.get(*f) {
            Some((_, it, forb, gaps)) => format!("{it} / {forb} / {gaps}"),
            None => "not run".into(),
        })
        .collect();
    format!(
        "| {} | {} | {} | {} | {:.0} s |",
        describe(c),
        cols.join(" | "),
        o.iterations(),
        o.forbidden(),
        o.secs
    )
}

#[test]
fn generated_programs_conform_through_the_public_api() {
    let full = std::env::var("LITMUS_GEN_FULL").is_ok_and(|v| v == "1");
    let sizes = family_sizes();
    let mut report = String::new();
    let mut problems = Vec::new();
    let t_all = Instant::now();
    let mut rows = Vec::new();
    // LITMUS_GEN_CELLS=<text>: only the cells whose "provider mode label"
    // contains it (e.g. "mapped path"), for a full run of some cells.
    let only = std::env::var("LITMUS_GEN_CELLS").ok();
    let chosen: Vec<Cell> = cells()
        .into_iter()
        .filter(|c| only.as_deref().is_none_or(|t| c.text().contains(t)))
        .collect();
    assert!(
        !chosen.is_empty(),
        "LITMUS_GEN_CELLS={only:?} names no cell"
    );
    let first = match std::env::var("LITMUS_GEN_FIRST_CELL") {
        Err(_) => 0,
        Ok(v) => v
            .parse::<usize>()
            .ok()
            .filter(|k| *k < chosen.len())
            .unwrap_or_else(|| {
                panic!(
                    "LITMUS_GEN_FIRST_CELL={v:?}: expected a cell number from 0 to {}",
                    chosen.len() - 1
                )
            }),
    };
    let fams: Vec<&str> = sizes.keys().copied().collect();
    let progress = std::env::var("LITMUS_GEN_REPORT")
        .ok()
        .map(|p| format!("{p}.progress"));
    for (k, c) in chosen.into_iter().enumerate().skip(first) {
        let slow = c.provider == "sockets";
        // CI: a few rounds over every program. Full: 10^4 iterations per
        // family (2,000 on sockets), in one job for the cell (a job per
        // family paid 18 start-ups and finalizes per cell).
        let iters = if full {
            format!("family:{}", if slow { 2_000 } else { 10_000 })
        } else {
            (if slow { 1 } else { 3 }).to_string()
        };
        let jobs = [("all".to_string(), iters)];
        let mut merged = JobOut {
            ok: true,
            ..JobOut::default()
        };
        for (fams, iters) in &jobs {
            let o = run_job(
                &c,
                fams,
                iters,
                &[],
                Duration::from_secs(if full { 7200 } else { 600 }),
            );
            merged.ok &= o.ok;
            merged.secs += o.secs;
            merged.families.extend(o.families);
            merged.forbidden_lines.extend(o.forbidden_lines);
            if !o.ok {
                merged.tail = o.tail;
            }
        }
        if !merged.ok {
            problems.push(format!("{}: job failed:\n{}", describe(&c), merged.tail));
        }
        if merged.forbidden() > 0 {
            problems.push(format!(
                "{}: {} forbidden outcome(s):\n{}",
                describe(&c),
                merged.forbidden(),
                merged.forbidden_lines.join("\n")
            ));
        }
        if merged.families.len() != sizes.len() {
            problems.push(format!(
                "{}: {} families reported, {} generated",
                describe(&c),
                merged.families.len(),
                sizes.len()
            ));
        }
        if full {
            let target = if slow { 2_000 } else { 10_000 };
            for (fam, (_, iters, _, _)) in merged.families.iter().filter(|(_, f)| f.1 < target) {
                problems.push(format!(
                    "{}: family {fam}: {iters} iterations, fewer than {target}",
                    describe(&c)
                ));
            }
        }
        if let Some(path) = &progress {
            use std::io::Write as _;
            let line = format!("cell {k}: {}\n", table_row(&fams, &c, &merged));
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| f.write_all(line.as_bytes()))
                .unwrap_or_else(|e| panic!("appending to {path}: {e}"));
        }
        rows.push((c, merged));
    }
    // Table: one row per cell, iterations / forbidden / gaps per family.
    let _ = writeln!(
        report,
        "| cell | {} | total iterations | forbidden | time |",
        fams.join(" | ")
    );
    let _ = writeln!(report, "|---|{}---|---|---|", "---|".repeat(fams.len()));
    for (c, o) in &rows {
        let _ = writeln!(report, "{}", table_row(&fams, c, o));
    }
    if let Ok(path) = std::env::var("LITMUS_GEN_REPORT") {
        let head = format!(
            "{} run: {} generated programs in {} families ({}), {} cells, {:.0} s wall on \
             the shared 2-core machine. Each family column: iterations / forbidden outcomes / \
             allowed outcomes never seen (coverage gaps, summed over the family's programs).\n\n",
            if full {
                "Full (`LITMUS_GEN_FULL=1`)"
            } else {
                "CI"
            },
            litmus_gen::generate().len(),
            sizes.len(),
            sizes
                .iter()
                .map(|(f, n)| format!("{f} {n}"))
                .collect::<Vec<_>>()
                .join(", "),
            rows.len(),
            t_all.elapsed().as_secs_f64()
        );
        std::fs::write(&path, head + &report).unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }
    eprintln!("{report}");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// A negative control: the weakening, where, which programs, how many
/// rounds, and whether CI asserts it is caught.
struct Control {
    weakening: &'static str,
    cell: Cell,
    families: &'static str,
    matching: &'static str,
    rounds: u64,
    asserted: bool,
}

fn controls(full: bool) -> Vec<Control> {
    let k = if full { 10 } else { 1 };
    vec![
        // Hole 3: a local non-blocking on-statement without task create.
        Control {
            weakening: "local-nb-on-no-task-create",
            cell: cell("tcp;ofi_rxm", "message-order"),
            families: "TASK-CREATE",
            matching: "on_nb L0",
            rounds: 60 * k,
            asserted: true,
        },
        // Hole 4: postponed AMOs on threads without a context of their own.
        Control {
            weakening: "postpone-unbound",
            cell: with(
                "unbound workers",
                &[("PGAS_MAX_TX_CONTEXTS", "5")],
                "tcp;ofi_rxm",
                "message-order",
            ),
            families: "MP-AMO",
            matching: "",
            rounds: 200 * k,
            asserted: true,
        },
        // Hole 5: a GET still reading after a release.
        Control {
            weakening: "war-unsettled",
            cell: cell("tcp;ofi_rxm", "message-order"),
            families: "WAR",
            matching: "write(1); wait",
            rounds: 300 * k,
            asserted: true,
        },
        // Hole 1: a local CPU atomic before the earlier stores are visible.
        Control {
            weakening: "local-amo-no-force",
            cell: cell("tcp;ofi_rxm", "message-order"),
            families: "MP",
            matching: "w1@L0.write(1)",
            rounds: 150 * k,
            asserted: false,
        },
        // Hole 2: a reading AMO overtaking a write to another locale.
        Control {
            weakening: "read-amo-no-force",
            cell: cell("shm", "message-order"),
            families: "SB",
            matching: "",
            rounds: 100 * k,
            asserted: false,
        },
        // Issue 21, hole 1: a get_nb not counted as work, then a release by
        // a CPU atomic on the acting locale (udp: atomics by CPU and AM).
        Control {
            weakening: "nb-get-uncounted",
            cell: cell("udp;ofi_rxd", "message-order"),
            families: "WAR",
            matching: "w1@L0.write(1)",
            rounds: 30 * k,
            asserted: true,
        },
        // Issue 21, hole 2: the work flag set before a store's settle, in
        // which a task run meanwhile clears it. Reported, not asserted
        // since 2026-11-26: it showed in 19-32 per 1,200 on 2026-11-25, but
        // the forbidden outcome also needs the PUT to land after the
        // reader's GET on loopback, and three runs of 1,200 that night saw
        // it once with the binary before that day's change and never with
        // the one after (whose postponed-AMO answers come back faster, on
        // one connection: the settle's window is shorter). It is asserted
        // deterministically by `work_flag_probe` (tests/tests/mcm.rs,
        // `work_flag_after_a_settling_put`).
        Control {
            weakening: "work-flag-before-post",
            cell: with(
                "one worker",
                &[("PGAS_NUM_WORKERS", "1"), ("PGAS_AMO_VIA_AM", "1")],
                "tcp;ofi_rxm",
                "message-order",
            ),
            families: "NESTED",
            matching: "",
            rounds: 200 * k,
            asserted: false,
        },
        // Issue 21, hole 3: the point-to-point reads as plain loads.
        Control {
            weakening: "p2p-read-no-force",
            cell: with(
                "CPU-route atomics",
                &[("PGAS_AMO_VIA_AM", "1")],
                "tcp;ofi_rxm",
                "message-order",
            ),
            families: "SB-LOCAL",
            matching: "",
            rounds: 20 * k,
            asserted: true,
        },
        // Issue 21, hole 4: a mapped copy overtaking a store to the same
        // locale's static data, where that goes through the provider (the
        // heaps mapped, the static data not: `mapped-heap`).
        Control {
            weakening: "mapped-unordered",
            cell: with(
                "mixed hosts, heaps mapped",
                &[("PGAS_TEST_HOSTNAMES", "a,b,a,b"), ("PGAS_LOCAL_PATH", "mapped-heap")],
                MIXED_PROVIDER,
                "message-order",
            ),
            families: "FENCE",
            matching: "",
            rounds: 30 * k,
            asserted: true,
        },
        // Issue 37: co-located locales share their static data. Mapped
        // copy-on-write instead, a PUT to a peer's static stays in the
        // writer's copy: MP with the data static and the flag on the heap
        // (`w1@L`: a heap flag) must show it.
        Control {
            weakening: "mapped-statics-private",
            cell: with(
                "mapped path",
                &[("PGAS_LOCAL_PATH", "mapped")],
                "shm",
                "message-order",
            ),
            families: "MP-STATIC",
            matching: "w1@L",
            rounds: 10 * k,
            asserted: true,
        },
        // delivery-complete's AMO window going on across targets: the flag
        // to another locale overtakes the adds. Caught by the simulated
        // fabric and loom (mcm/tests); on one host the providers deliver
        // to each target in arrival order and it has not shown: reported.
        Control {
            weakening: "window-any-target",
            cell: cell("tcp;ofi_rxm", "delivery-complete"),
            families: "AMO-WINDOW",
            matching: "",
            rounds: 100 * k,
            asserted: false,
        },
        // No forcing at all (every family but COLLECTIVE, whose own flag
        // protocol needs the forcing it removes: the collective then fails
        // as a job error, "members are not calling the same collectives").
        Control {
            weakening: "no-forcing",
            cell: cell("tcp;ofi_rxm", "message-order"),
            families: "BARRIER,COHERENCE,FENCE,LOCK,MP,MP-AMO,MP-STATIC,NESTED,RAW-WAW,SB,SB-LOCAL,SIGNAL,TASK-CREATE,TASK-END,WAR",
            matching: "",
            rounds: 3 * k,
            asserted: true,
        },
    ]
}

/// Jobs an asserted control may take to show its hole
/// (`pgas_tests::cells::control_jobs`; local-nb-on-no-task-create showed
/// 0, 4, 97, 189 of 720 in four jobs, 2026-11-28).
const CONTROL_JOBS: usize = 3;

#[test]
fn negative_controls_see_the_reopened_holes() {
    let full = std::env::var("LITMUS_GEN_FULL").is_ok_and(|v| v == "1");
    let mut report = String::from(
        "| weakening (`PGAS_MCM_WEAKEN`) | cell | programs | jobs | iterations | forbidden | asserted in CI |\n|---|---|---|---:|---|---|---|\n",
    );
    let mut problems = Vec::new();
    // CI runs the asserted controls only: the others assert nothing and are
    // reported by the full run.
    for ctl in controls(full).into_iter().filter(|c| full || c.asserted) {
        let extra: Vec<(&str, &str)> = vec![
            ("PGAS_MCM_WEAKEN", ctl.weakening),
            ("LITMUS_GEN_MATCH", ctl.matching),
            ("LITMUS_GEN_SHOW", "2"),
        ];
        let attempts = if ctl.asserted { CONTROL_JOBS } else { 1 };
        let ControlTally {
            jobs,
            iterations,
            forbidden,
        } = control_jobs(attempts, |_| {
            let o = run_job(
                &ctl.cell,
                ctl.families,
                &ctl.rounds.to_string(),
                &extra,
                Duration::from_secs(if full { 3600 } else { 600 }),
            );
            if !o.ok {
                problems.push(format!(
                    "{} on {}: job failed:\n{}",
                    ctl.weakening,
                    describe(&ctl.cell),
                    o.tail
                ));
                return None;
            }
            Some((o.iterations(), o.forbidden()))
        });
        if ctl.asserted && forbidden == 0 {
            problems.push(format!(
                "{} on {}: the re-opened hole was never seen in {iterations} iterations ({jobs} jobs)",
                ctl.weakening,
                describe(&ctl.cell),
            ));
        }
        let _ = writeln!(
            report,
            "| {} | {} | {}{} | {jobs} | {iterations} | {forbidden} | {} |",
            ctl.weakening,
            describe(&ctl.cell),
            ctl.families,
            if ctl.matching.is_empty() {
                String::new()
            } else {
                format!(" matching `{}`", ctl.matching)
            },
            if ctl.asserted { "yes" } else { "no" }
        );
    }
    if let Ok(path) = std::env::var("LITMUS_GEN_REPORT") {
        let path = format!("{path}.controls");
        std::fs::write(&path, &report).unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }
    eprintln!("{report}");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
