//! The MCM engine over real providers: RAW, WAW, MP-AM, AMO visibility,
//! MP-atomic, TASK-END and non-blocking handles (`tests/examples/mcm_probe.rs`)
//! in every mode each provider honours, bound and unbound, plus a negative
//! control showing the probe catches a policy with forcing switched off.
//! A passing run must report every check on every locale
//! (`pgas_tests::expect::mcm_probe`): RAW at 8 B, inject + 1 and 64 KiB on
//! every target, WAW / MP-AM / AMO visibility towards every other locale,
//! the MP-atomic writer (locale 0) and reader (locale 1), TASK-END, and 48
//! non-blocking PUTs and GETs, each for the rounds asked.

use pgas_tests::job::Job;
use pgas_tests::{expect, Run};

fn probe(n: usize, provider: &str, mode: &str, rounds: &str, extra: &[(&str, &str)]) -> Job {
    Job::example("mcm_probe", n)
        .provider(provider)
        .env(&[
            ("PGAS_MCM_MODE", mode),
            ("MCM_PROBE_ROUNDS", rounds),
            ("PGAS_VERBOSE", "1"),
        ])
        .env(extra)
        .secs(180)
}

fn passes(n: usize, provider: &str, mode: &str, rounds: &str, extra: &[(&str, &str)]) -> Run {
    let job = probe(n, provider, mode, rounds, extra);
    let run = job.passes(&[
        "mcm_probe ok".to_string(),
        format!("mode {mode}, provider {provider}"),
    ]);
    let rounds: usize = rounds.parse().expect("rounds");
    let only = extra
        .iter()
        .find(|(k, _)| *k == "MCM_PROBE_ONLY")
        .map(|(_, v)| *v);
    run.assert_checks(&job.what(), &expect::mcm_probe(n, rounds, only));
    run
}

#[test]
fn shm_every_mode() {
    let run = passes(3, "shm", "message-order", "100", &[]);
    assert!(!run.stderr.contains("AMO window"), "{}", run.stderr);
    let run = passes(3, "shm", "delivery-complete", "100", &[]);
    assert_amo_window(&run);
}

#[test]
fn tcp_rxm_every_mode() {
    passes(3, "tcp;ofi_rxm", "message-order", "60", &[]);
    let run = passes(3, "tcp;ofi_rxm", "delivery-complete", "60", &[]);
    assert_amo_window(&run);
}

/// delivery-complete with native atomics asks for atomic WAW; shm grants it
/// only when asked, tcp;ofi_rxm always: either way the AMO window is on,
/// and the checks above (AMO visibility, MP-atomic) ran through it.
fn assert_amo_window(run: &Run) {
    assert!(
        run.stderr.contains("ATOMIC_WAW") && run.stderr.contains("AMO window"),
        "delivery-complete should have been granted atomic WAW and run the AMO window: {}",
        run.stderr
    );
}

#[test]
fn udp_rxd_every_mode() {
    passes(3, "udp;ofi_rxd", "message-order", "60", &[]);
    passes(3, "udp;ofi_rxd", "delivery-complete", "60", &[]);
}

#[test]
fn sockets_every_mode() {
    passes(3, "sockets", "message-order-fence", "5", &[]);
    passes(2, "sockets", "message-order", "5", &[]);
    passes(2, "sockets", "delivery-complete", "5", &[]);
}

/// A thread that never bound a context: every operation takes the shared
/// context and releases it with its stores forced visible.
#[test]
fn unbound_thread() {
    let unbound = [("MCM_PROBE_UNBOUND", "1")];
    let run = passes(3, "shm", "message-order", "40", &unbound);
    assert!(run.stdout.contains("unbound"), "{}", run.stdout);
    passes(3, "tcp;ofi_rxm", "message-order", "20", &unbound);
    passes(2, "sockets", "message-order-fence", "3", &unbound);
}

/// Fewer contexts than workers: the layer runs unbound and says so.
#[test]
fn too_few_contexts_run_unbound() {
    let fewer = [("PGAS_MAX_TX_CONTEXTS", "3"), ("PGAS_NUM_WORKERS", "4")];
    let run = passes(3, "shm", "message-order", "40", &fewer);
    assert!(
        run.stderr.contains("unbound endpoints"),
        "the verbose line should say unbound: {}",
        run.stderr
    );
    probe(
        2,
        "shm",
        "message-order",
        "1",
        &[("PGAS_MAX_TX_CONTEXTS", "2")],
    )
    .fails_naming(&["2 transmit contexts available", "at least 3"]);
}

/// The verbose line of a normal run says bound.
#[test]
fn default_run_is_bound() {
    let run = passes(2, "shm", "message-order", "2", &[]);
    assert!(run.stderr.contains("bound endpoints"), "{}", run.stderr);
    assert!(!run.stderr.contains("unbound"), "{}", run.stderr);
}

/// With forcing switched off (test-only), TASK-END must break where the
/// provider can reorder it; if it did not, the probe would prove nothing.
#[test]
fn negative_control_is_caught() {
    for provider in ["shm", "tcp;ofi_rxm"] {
        let weak = [
            ("PGAS_MCM_WEAKEN", "no-forcing"),
            ("MCM_PROBE_ONLY", "task-end"),
        ];
        probe(3, provider, "message-order", "300", &weak).fails_naming(&["TASK-END violated"]);
    }
}

/// The cached "nothing to force" flag (`Comm::force_visible_if_any`) after
/// a PUT whose settling of a postponed AMO ran a task end on the same
/// thread (`tests/examples/work_flag_probe.rs`, which builds that
/// interleaving with an AM layer of its own): the PUT is forced with the
/// real policy and skipped with `work-flag-before-post`, every time. The
/// litmus cell for it needs a late PUT on loopback and is only reported.
#[test]
fn work_flag_after_a_settling_put() {
    for provider in ["shm", "tcp;ofi_rxm"] {
        let job = Job::example("work_flag_probe", 2)
            .provider(provider)
            .env(&[
                ("PGAS_MCM_MODE", "message-order"),
                ("PGAS_LOCAL_PATH", "fabric"),
            ])
            .secs(60);
        job.passes(&["work_flag_probe ok: forced"]);
        job.env(&[("PGAS_MCM_WEAKEN", "work-flag-before-post")])
            .fails_naming(&["skipped the PUT"]);
    }
}

#[test]
fn bad_weaken_value_is_named() {
    probe(
        1,
        "shm",
        "message-order",
        "1",
        &[("PGAS_MCM_WEAKEN", "everything")],
    )
    .fails_naming(&["PGAS_MCM_WEAKEN", "everything"]);
}
