//! The fault suite (docs/launcher.md, "Failure guarantees"): no silent hang,
//! no silent wrong answer.
//!
//! Faults: a locale (1 of 3) exits with status 0 before finalize, is killed
//! (SIGKILL), segfaults, panics, or is stopped for 2 s and continued, while
//! the others wait for it in a barrier, for an on-statement's reply, in
//! GET/PUT or in fetch-adds against it; on every provider, under pgasrun and
//! under mpirun (PMIx). Every fault but the stop must fail the job quickly
//! with a message naming locale 1 and what happened to it (never a
//! survivor); the stop must be survived with right answers. Bad input
//! (through the Rust API, `tests/examples/fault_probe.rs`, and the C ABI,
//! `tests/c/faults.c`) must be an error naming the bad value, on every
//! locale a collective involves, and the job must go on.
//!
//! Each run is bounded by the launcher's `--timeout`; a hang is a failed
//! test. `faults_tally` lines (printed with `--nocapture`) count what was
//! tried.

use pgas_tests::job::Job;
use pgas_tests::{compile_c, example, launch, mpirun_launch, Run, PROVIDERS};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Where the others wait for the victim.
const POINTS: [&str; 4] = ["barrier", "on", "get", "amo"];
/// Launcher time limit: a run that reaches it hung. `FAULTS_LIMIT_SECS`
/// lowers it (to run the suite quickly against a build that hangs).
fn limit() -> Duration {
    let secs = std::env::var("FAULTS_LIMIT_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(90);
    Duration::from_secs(secs)
}
/// A failure must bring the job down within this of the fault (measured:
/// under 1 s; generous for a loaded 2-core CI machine).
const DOWN_WITHIN: Duration = Duration::from_secs(30);

/// How long after the victim's fault the launcher returned (the victim
/// prints when it faults).
fn since_fault(r: &Run) -> Option<Duration> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_millis();
    let at: u128 = r.stderr.lines().find_map(|l| {
        l.split_once("faults (")?
            .1
            .split_once("at unix ms ")?
            .1
            .trim()
            .parse()
            .ok()
    })?;
    Some(Duration::from_millis(now.saturating_sub(at) as u64))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Launcher {
    Pgasrun,
    Mpirun,
}

/// At most [`JOBS`] fault runs at a time. A run mostly waits (~1 s for a
/// fault to be noticed, a fifth of it CPU), so the suite runs several at
/// once (the providers of one fault test side by side); the bound keeps a
/// loaded 2-core machine far inside [`DOWN_WITHIN`] (a fault is noticed in
/// under 1 s alone). The bad-input jobs below run one at a time
/// ([`Job::serial`]).
static SLOTS: Mutex<usize> = Mutex::new(0);
static SLOT_FREED: Condvar = Condvar::new();
const JOBS: usize = 4;

/// A job slot, given back when dropped.
struct Slot;

impl Slot {
    fn take() -> Slot {
        let mut busy = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
        while *busy >= JOBS {
            busy = SLOT_FREED.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *SLOTS.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        SLOT_FREED.notify_one();
    }
}

/// Runs `each` for every provider, the providers side by side (each run
/// still takes a slot); a failure in any is this test's failure.
fn on_every_provider(each: impl Fn(usize, &str) + Sync) {
    std::thread::scope(|s| {
        for (i, p) in PROVIDERS.iter().enumerate() {
            let each = &each;
            s.spawn(move || each(i, p));
        }
    });
}

/// One fault run in a slot, timed.
fn run(launcher: Launcher, n: usize, args: &[&str], env: &[(&str, &str)]) -> (Run, Duration) {
    let _slot = Slot::take();
    let t0 = Instant::now();
    let prog = example("fault_probe");
    match launcher {
        Launcher::Pgasrun => {
            let r = launch(n, &prog, args, env, limit());
            (r, t0.elapsed())
        }
        Launcher::Mpirun => {
            let r = mpirun_launch(n, &prog, args, env, limit());
            (r.run, r.elapsed)
        }
    }
}

/// `fault_probe ARGS` on `n` locales under pgasrun, one job at a time.
fn probe(n: usize, args: &[&str], env: &[(&str, &str)]) -> Job {
    Job::example("fault_probe", n)
        .args(args)
        .env(env)
        .secs(limit().as_secs())
        .serial()
}

fn tally(what: &str, n: usize) {
    eprintln!("faults_tally {what} {n}");
}

/// Checks one fault run; returns a description for the tally.
fn fault(launcher: Launcher, provider: &str, fault: &str, point: &str) {
    let scenario = format!("{fault}:{point}");
    let (r, took) = run(
        launcher,
        3,
        &[&scenario],
        &[("PGAS_PROVIDER", provider), ("RUST_BACKTRACE", "0")],
    );
    let ctx = format!("{launcher:?} {provider} {scenario} ({took:?})");
    assert_ne!(r.code, Some(124), "{ctx}: HANG (launcher timeout): {r:?}");
    assert!(
        took < limit(),
        "{ctx}: HANG (no answer within {:?}): {r:?}",
        limit()
    );
    if fault == "stop" {
        r.assert_ok(&ctx);
        assert!(
            r.stdout.contains(&format!("fault_probe {scenario} ok")),
            "{ctx}: no ok line: {r:?}"
        );
        tally("faults_survived", 1);
        return;
    }
    assert!(!r.ok(), "{ctx}: the job survived the fault: {r:?}");
    let down = since_fault(&r).unwrap_or_else(|| panic!("{ctx}: the victim never faulted: {r:?}"));
    assert!(
        down < DOWN_WITHIN,
        "{ctx}: took {down:?} after the fault to fail: {r:?}"
    );
    eprintln!(
        "faults_down_ms {launcher:?} {provider} {scenario} {}",
        down.as_millis()
    );
    assert!(!r.stdout.contains("ok ("), "{ctx}: reported success: {r:?}");
    // Survivors whose operation failed say so naming the dead locale.
    for line in r.stderr.lines().filter(|l| l.contains("survivor error")) {
        assert!(
            line.contains("with locale 1") || line.contains("to locale 1"),
            "{ctx}: a survivor's error does not name locale 1: {line}"
        );
    }
    let (needle, status) = match (launcher, fault) {
        (Launcher::Pgasrun, "exit0") => ("exited with status 0 before finalize", Some(1)),
        (Launcher::Pgasrun, "kill") => ("killed by signal 9 (SIGKILL)", Some(137)),
        (Launcher::Pgasrun, "segv") => ("killed by signal 11 (SIGSEGV)", Some(139)),
        (Launcher::Pgasrun, "panic") => ("exited with status 101 before finalize", Some(101)),
        (Launcher::Mpirun, "exit0") => {
            ("pgas locale 1: exited with status 0 before finalize", None)
        }
        (Launcher::Mpirun, "kill") => ("rank 1 with PID", None),
        (Launcher::Mpirun, "segv") => ("rank 1 with PID", None),
        (Launcher::Mpirun, "panic") => (
            "pgas locale 1: exited with status 101 before finalize",
            None,
        ),
        other => panic!("no expectation for {other:?}"),
    };
    match launcher {
        Launcher::Pgasrun => {
            // The launcher's verdict is its first line and names locale 1.
            let verdict = r
                .stderr
                .lines()
                .find(|l| l.starts_with("pgasrun: "))
                .unwrap_or_default();
            assert!(
                verdict.contains("locale 1 (pid") && verdict.contains(needle),
                "{ctx}: the verdict is {verdict:?}, expected locale 1 {needle:?}: {r:?}"
            );
            assert_eq!(r.code, status, "{ctx}: exit status: {r:?}");
        }
        Launcher::Mpirun if fault == "kill" || fault == "segv" => {
            // mpirun names the first process it saw fail: the dead one
            // ("rank 1 ... exited on signal 9"), or a survivor that exited
            // with an error first, whose error then names locale 1; or
            // locale 0's collective service saw locale 1's connection
            // close first and ended the job naming it ("locale 1 died").
            let sig = if fault == "kill" {
                "signal 9"
            } else {
                "signal 11"
            };
            let blamed = r.stderr.contains(needle) && r.stderr.contains(sig);
            let named = r.stderr.lines().any(|l| {
                (l.contains("survivor error") && l.contains("with locale 1"))
                    || l.contains("abort: locale 1 died")
            });
            assert!(blamed || named, "{ctx}: nothing names locale 1: {r:?}");
        }
        Launcher::Mpirun => {
            assert!(r.stderr.contains(needle), "{ctx}: no {needle:?}: {r:?}");
        }
    }
    tally("faults_failed_cleanly", 1);
}

#[test]
fn early_exit_at_every_point_on_every_provider_under_pgasrun() {
    on_every_provider(|_, p| {
        for point in POINTS {
            fault(Launcher::Pgasrun, p, "exit0", point);
        }
    });
}

#[test]
fn kill_segv_panic_stop_on_every_provider_under_pgasrun() {
    on_every_provider(|i, p| {
        for (j, f) in ["kill", "segv", "panic", "stop"].iter().enumerate() {
            fault(Launcher::Pgasrun, p, f, POINTS[(i + j) % POINTS.len()]);
        }
    });
}

#[test]
fn faults_on_every_provider_under_mpirun() {
    on_every_provider(|i, p| {
        for (j, f) in ["exit0", "kill", "segv", "panic", "stop"]
            .iter()
            .enumerate()
        {
            fault(Launcher::Mpirun, p, f, POINTS[(i + j) % POINTS.len()]);
        }
    });
}

// ----------------------------------------------------------------- bad input

/// Runs a bad-input scenario; it must succeed (every locale saw the errors
/// it should) and print `PREFIX bad input:` lines, each naming something.
fn bad_input(provider: &str, n: usize, scenario: &str, env: &[(&str, &str)], at_least: usize) {
    let r = probe(n, &[scenario], env)
        .provider(provider)
        .passes(&[format!("fault_probe {scenario} ok")]);
    let lines = r.assert_at_least("fault_probe bad input:", at_least);
    tally("bad_inputs", lines);
}

#[test]
fn collectives_deliver_a_failure_to_every_locale() {
    // Broadcast with the root's heap exhausted, alloc_all failing on one
    // locale and everywhere: every locale errs (3 x 3), the job goes on.
    for p in ["shm", "tcp;ofi_rxm"] {
        bad_input(p, 3, "collectives", &[], 9);
    }
    bad_input("shm", 3, "collectives", &[("PGAS_BARRIER", "oob")], 9);
}

#[test]
fn heap_sizes_do_not_wrap() {
    bad_input("shm", 2, "heap", &[], 8);
}

#[test]
fn a_reply_the_target_cannot_hold_is_an_error_reply() {
    for p in ["shm", "udp;ofi_rxd"] {
        bad_input(p, 2, "reply_oom", &[], 1);
    }
    bad_input("shm", 2, "reply_oom", &[("PGAS_AM_DONE", "put")], 1);
}

#[test]
fn a_reply_of_4_gib_is_refused_not_truncated() {
    // The heap could hold it: only the reply limit stands in the way.
    bad_input("shm", 2, "reply_4g", &[("PGAS_HEAP_SIZE", "6G")], 1);
}

#[test]
fn a_bad_atomic_address_is_the_calls_own_error() {
    // Through AMs (forced, and udp's only way) and native.
    bad_input("shm", 2, "amo_bad", &[("PGAS_AMO_VIA_AM", "1")], 10);
    bad_input("udp;ofi_rxd", 2, "amo_bad", &[], 10);
    bad_input("tcp;ofi_rxm", 2, "amo_bad", &[], 10);
}

#[test]
fn bad_frees_say_what_the_address_is() {
    bad_input("shm", 2, "free_bad", &[], 8);
}

#[test]
fn check_mode_catches_accesses_past_an_allocation() {
    for p in ["shm", "tcp;ofi_rxm"] {
        bad_input(p, 2, "check", &[("PGAS_CHECK", "1")], 22);
    }
}

#[test]
fn without_check_mode_the_overrun_lands_in_the_neighbour() {
    // The negative control of the check above: the same PUT, unchecked,
    // silently overwrites the next allocation.
    let r = probe(2, &["overrun"], &[]).provider("shm").succeeds();
    assert_eq!(
        r.stdout.matches("overwrote the next one").count(),
        2,
        "{r:?}"
    );
}

#[test]
fn bad_check_value_is_named() {
    probe(2, &["ok"], &[("PGAS_CHECK", "sometimes")])
        .provider("shm")
        .fails_naming(&["PGAS_CHECK", "sometimes"]);
    tally("bad_inputs", 1);
}

#[test]
fn many_workers_fit_the_shm_address_vector() {
    // 64 workers used to fail in fi_av_open (shm holds 256 peers).
    for n in [2, 4] {
        probe(n, &["ok"], &[("PGAS_NUM_WORKERS", "64")])
            .provider("shm")
            .passes(&["64 workers"]);
    }
    // What cannot fit is an error naming the variables and the limit.
    let r = probe(4, &["ok"], &[("PGAS_AM_HANDLERS", "64")])
        .provider("shm")
        .fails_naming(&["PGAS_AM_HANDLERS=64", "256", "4 locales"]);
    assert!(!r.stderr.contains("fi_av_open"), "{r:?}");
    tally("bad_inputs", 3);
}

#[test]
fn pgasrun_refuses_options_given_twice() {
    for args in [
        &["-n", "2", "-n", "3", "true"][..],
        &["-n", "2", "--timeout", "5", "--timeout", "9", "true"][..],
    ] {
        let out = std::process::Command::new(pgas_tests::pgasrun())
            .args(args)
            .output()
            .expect("run pgasrun");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} accepted: {err}");
        assert!(err.contains("given twice"), "{args:?}: {err}");
    }
    tally("bad_inputs", 2);
}

#[test]
fn c_abi_bad_input() {
    let prog = compile_c("faults", false);
    for (mode, check) in [("bad", "0"), ("check", "1")] {
        let r = Job::new(prog.clone(), 3)
            .args(&[mode])
            .provider("shm")
            .env(&[("PGAS_HEAP_SIZE", "32M"), ("PGAS_CHECK", check)])
            .secs(limit().as_secs())
            .serial()
            .passes(&[format!("faults {mode} ok")]);
        let lines = r.assert_at_least("faults bad input:", if mode == "bad" { 39 } else { 12 });
        tally("bad_inputs", lines);
    }
}
