//! The MCM engine over real providers: RAW, WAW, MP-AM, AMO visibility,
//! MP-atomic, TASK-END and non-blocking handles (`tests/examples/mcm_probe.rs`)
//! in every mode each provider honours, bound and unbound, plus a negative
//! control showing the probe catches a policy with forcing switched off.
//! A passing run must report every check on every locale
//! (`pgas_tests::expect::mcm_probe`): RAW at 8 B, inject + 1 and 64 KiB on
//! every target, WAW / MP-AM / AMO visibility towards every other locale,
//! the MP-atomic writer (locale 0) and reader (locale 1), TASK-END, and 48
//! non-blocking PUTs and GETs, each for the rounds asked.

use pgas_tests::{example, expect, launch, Run};
use std::time::Duration;

fn probe(n: usize, provider: &str, mode: &str, rounds: &str, extra: &[(&str, &str)]) -> Run {
    let mut env = vec![
        ("PGAS_PROVIDER", provider),
        ("PGAS_MCM_MODE", mode),
        ("MCM_PROBE_ROUNDS", rounds),
        ("PGAS_VERBOSE", "1"),
    ];
    env.extend_from_slice(extra);
    launch(
        n,
        &example("mcm_probe"),
        &[],
        &env,
        Duration::from_secs(180),
    )
}

fn passes(n: usize, provider: &str, mode: &str, rounds: &str, extra: &[(&str, &str)]) -> Run {
    let run = probe(n, provider, mode, rounds, extra);
    run.assert_ok(&format!("mcm_probe on {provider} in {mode} {extra:?}"));
    let rounds: usize = rounds.parse().expect("rounds");
    let only = extra
        .iter()
        .find(|(k, _)| *k == "MCM_PROBE_ONLY")
        .map(|(_, v)| *v);
    run.assert_checks(
        &format!("mcm_probe on {provider} in {mode} {extra:?}"),
        &expect::mcm_probe(n, rounds, only),
    );
    let want = format!("mode {mode}, provider {provider}");
    assert!(
        run.stdout.contains("mcm_probe ok") && run.stdout.contains(&want),
        "expected an ok line with {want:?}: {}",
        run.stdout
    );
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
    let run = passes(
        3,
        "shm",
        "message-order",
        "40",
        &[("MCM_PROBE_UNBOUND", "1")],
    );
    assert!(run.stdout.contains("unbound"), "{}", run.stdout);
    passes(
        3,
        "tcp;ofi_rxm",
        "message-order",
        "20",
        &[("MCM_PROBE_UNBOUND", "1")],
    );
    passes(
        2,
        "sockets",
        "message-order-fence",
        "3",
        &[("MCM_PROBE_UNBOUND", "1")],
    );
}

/// Fewer contexts than workers: the layer runs unbound and says so.
#[test]
fn too_few_contexts_run_unbound() {
    let run = passes(
        3,
        "shm",
        "message-order",
        "40",
        &[("PGAS_MAX_TX_CONTEXTS", "3"), ("PGAS_NUM_WORKERS", "4")],
    );
    assert!(
        run.stderr.contains("unbound endpoints"),
        "the verbose line should say unbound: {}",
        run.stderr
    );
    let run = probe(
        2,
        "shm",
        "message-order",
        "1",
        &[("PGAS_MAX_TX_CONTEXTS", "2")],
    );
    assert!(!run.ok(), "{run:?}");
    assert!(
        run.stderr.contains("2 transmit contexts available") && run.stderr.contains("at least 3"),
        "the error should name what is available and needed: {}",
        run.stderr
    );
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
        let run = probe(
            3,
            provider,
            "message-order",
            "300",
            &[
                ("PGAS_MCM_WEAKEN", "no-forcing"),
                ("MCM_PROBE_ONLY", "task-end"),
            ],
        );
        assert!(
            !run.ok() && run.stderr.contains("TASK-END violated"),
            "{provider}: the weakened policy was not caught: {run:?}"
        );
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
        let env = [
            ("PGAS_PROVIDER", provider),
            ("PGAS_MCM_MODE", "message-order"),
            ("PGAS_LOCAL_PATH", "fabric"),
        ];
        let probe = example("work_flag_probe");
        let run = launch(2, &probe, &[], &env, Duration::from_secs(60));
        run.assert_ok(&format!("work_flag_probe on {provider}"));
        assert!(
            run.stdout.contains("work_flag_probe ok: forced"),
            "{provider}: {run:?}"
        );
        let mut weak = env.to_vec();
        weak.push(("PGAS_MCM_WEAKEN", "work-flag-before-post"));
        let run = launch(2, &probe, &[], &weak, Duration::from_secs(60));
        assert!(
            !run.ok() && run.stderr.contains("skipped the PUT"),
            "{provider}: the weakened flag was not caught: {run:?}"
        );
    }
}

#[test]
fn bad_weaken_value_is_named() {
    let run = probe(
        1,
        "shm",
        "message-order",
        "1",
        &[("PGAS_MCM_WEAKEN", "everything")],
    );
    assert!(!run.ok());
    assert!(
        run.stderr.contains("PGAS_MCM_WEAKEN") && run.stderr.contains("everything"),
        "{}",
        run.stderr
    );
}
