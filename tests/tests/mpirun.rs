//! Bootstrap through PMIx: programs started by OpenMPI's `mpirun` (the way
//! users run under Slurm with `srun --mpi=pmix`) get rank, size and the OOB
//! collectives from the launcher's PMIx server.
//!
//! Needs `mpirun` from openmpi-bin and libpmix (scripts/setup installs both);
//! without them these tests fail saying so, they never skip. Each run is
//! bounded by mpirun's `--timeout` and a kill guard; the whole file takes a
//! few seconds.

use pgas_tests::{bin, example, mpirun_launch, MpiRun};
use std::sync::Mutex;
use std::time::Duration;

/// One job at a time: timing assertions on a 2-core machine.
static SERIAL: Mutex<()> = Mutex::new(());
/// Bound of every job (mpirun --timeout).
const LIMIT: Duration = Duration::from_secs(30);
/// An abort must end the job well within this (the locale's own give-up
/// guard fires after 10 s: the launcher must be quicker).
const PROMPT: Duration = Duration::from_secs(9);

fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> MpiRun {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let path = if ["smoke", "gups", "on_ring", "stencil"].contains(&program) {
        example(program)
    } else {
        bin(program)
    };
    mpirun_launch(3, &path, args, env, LIMIT)
}

fn sorted_lines(s: &str) -> Vec<&str> {
    let mut v: Vec<&str> = s.lines().collect();
    v.sort_unstable();
    v
}

/// Every collective with known answers (varying lengths, empty and 1 MiB
/// parts, broadcast from every root, barriers, a bad root), then the same
/// from four threads per locale.
#[test]
fn probe_collectives_under_mpirun() {
    let r = run("pgas-oob-probe", &["check"], &[]);
    r.run.assert_ok("pgas-oob-probe check under mpirun");
    assert_eq!(
        sorted_lines(&r.run.stdout),
        ["rank 0 of 3: ok", "rank 1 of 3: ok", "rank 2 of 3: ok"],
        "{r:?}"
    );

    let r = run("pgas-oob-probe", &["threads"], &[]);
    r.run.assert_ok("pgas-oob-probe threads under mpirun");
    assert_eq!(
        sorted_lines(&r.run.stdout),
        [
            "rank 0 of 3: threads ok",
            "rank 1 of 3: threads ok",
            "rank 2 of 3: threads ok"
        ],
        "{r:?}"
    );
}

/// One locale aborts while the others sleep: the job ends non-zero, quickly,
/// with the message naming the locale, and the others are gone (mpirun only
/// returns once all its processes have).
#[test]
fn abort_takes_the_job_down_with_the_message() {
    let r = run("pgas-oob-probe", &["abort", "disk on fire", "1"], &[]);
    assert!(!r.run.ok(), "job survived an abort: {r:?}");
    assert!(
        r.elapsed < PROMPT,
        "abort took {:?} to end the job: {r:?}",
        r.elapsed
    );
    assert!(
        r.run.stderr.contains("pgas locale 1: abort: disk on fire"),
        "abort message missing: {r:?}"
    );
    assert!(
        !r.run.stderr.contains("did not stop the job"),
        "the launcher did not kill the job, the locale's guard did: {r:?}"
    );
}

/// Locales calling different collectives fail instead of hanging or mixing
/// answers, with both calls named (the collectives go through locale 0's
/// service, which matches them as pgasrun does): a barrier against an
/// allgather, an allgather against a broadcast, broadcasts from different
/// roots.
#[test]
fn mismatched_collectives_fail() {
    for (mode, want) in [
        ("mismatch", ["barrier", "allgather"]),
        ("mismatch-kind", ["broadcast(root 0)", "allgather"]),
        ("mismatch-root", ["broadcast(root 0)", "broadcast(root 1)"]),
    ] {
        let r = run("pgas-oob-probe", &[mode], &[]);
        assert!(!r.run.ok(), "{mode}: {r:?}");
        assert!(r.elapsed < PROMPT, "{mode}: {r:?}");
        let line = r
            .run
            .stderr
            .lines()
            .find(|l| l.contains("collective mismatch at collective #0: locale "))
            .unwrap_or_else(|| panic!("{mode}: no mismatch named in {r:?}"));
        for w in want {
            assert!(
                line.contains(&format!("called {w}")),
                "{mode}: no {w:?} in {line:?}"
            );
        }
    }
}

/// Without a loadable libpmix the locale says what to install instead of
/// crashing or running as a single locale.
#[test]
fn missing_libpmix_is_a_clear_error() {
    let r = run(
        "pgas-oob-probe",
        &["info"],
        &[("PGAS_PMIX_LIB", "/nonexistent/libpmix.so.2")],
    );
    assert!(!r.run.ok(), "{r:?}");
    assert!(
        r.run.stderr.contains("cannot load the PMIx client library")
            && r.run.stderr.contains("/nonexistent/libpmix.so.2"),
        "{r:?}"
    );
    assert!(!r.run.stdout.contains("rank 0 of 1"), "{r:?}");
}

/// The comm-ofi smoke program (PUT/GET ring, fetch-adds) bootstrapped by
/// mpirun instead of pgasrun.
fn smoke(provider: &str) {
    let r = run("smoke", &[], &[("PGAS_PROVIDER", provider)]);
    r.run
        .assert_ok(&format!("smoke under mpirun on {provider}"));
    assert!(
        r.run.stdout.contains("smoke ok: 3 locales, mode ")
            && r.run.stdout.contains(&format!("provider {provider}")),
        "{r:?}"
    );
}

#[test]
fn smoke_under_mpirun_shm() {
    smoke("shm");
}

#[test]
fn smoke_under_mpirun_tcp_rxm() {
    smoke("tcp;ofi_rxm");
}

/// The runtime-shim examples (a PGAS user's programs, self-checking) under
/// mpirun: one per provider class here; the full provider x mode matrix is
/// in docs/embedding.md.
#[test]
fn shim_examples_under_mpirun() {
    for (program, provider, mode) in [
        ("gups", "shm", "delivery-complete"),
        ("on_ring", "tcp;ofi_rxm", "message-order"),
        ("stencil", "udp;ofi_rxd", "message-order"),
    ] {
        let r = run(
            program,
            &[],
            &[("PGAS_PROVIDER", provider), ("PGAS_MCM_MODE", mode)],
        );
        r.run
            .assert_ok(&format!("{program} under mpirun on {provider} in {mode}"));
        assert!(
            r.run.stdout.contains(": ok") || r.run.stdout.contains(" ok"),
            "{program} did not say ok: {r:?}"
        );
    }
}
