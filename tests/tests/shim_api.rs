//! The runtime shim's Rust API on real providers, through the launcher:
//! every atomic op x type (native and through active messages), many
//! outstanding non-blocking handles waited out of order, strided transfers
//! with odd strides, task trees and nested on-statements deeper than the
//! worker count, unordered batches, the PUT barrier and broadcast, and bad
//! input returning errors that name the value. Program:
//! `tests/examples/shim_probe.rs` (it checks its own results and prints one
//! ok line per scenario).
//!
//! Cells (2 locales unless said): shm with one worker (message-order,
//! native atomics), shm forced through AMs, shm in delivery-complete mode,
//! tcp;ofi_rxm (atomics via AM), udp;ofi_rxd with 3 locales, sockets
//! (message-order-fence), and the OOB barrier.

use pgas_tests::expect::SHIM_PROBE_SCENARIOS as SCENARIOS;
use pgas_tests::job::Job;
use pgas_tests::Run;

/// Runs the scenarios, one job at a time (the machine has 2 cores); each
/// must print its ok line.
fn probe(n: usize, provider: &str, scenarios: &[&str], extra: &[(&str, &str)]) -> Run {
    let oks: Vec<String> = scenarios
        .iter()
        .map(|s| format!("shim_probe {s} ok on {provider}"))
        .collect();
    Job::example("shim_probe", n)
        .args(scenarios)
        .provider(provider)
        .env(&[("RUST_BACKTRACE", "0")])
        .env(extra)
        .secs(240)
        .serial()
        .passes(&oks)
}

fn line<'a>(r: &'a Run, prefix: &str) -> &'a str {
    r.stdout
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?}: {}", r.stdout))
}

/// Asserts that the line starting with `prefix` contains `text`.
fn says(r: &Run, prefix: &str, text: &str) {
    let l = line(r, prefix);
    assert!(
        l.contains(text),
        "{l:?} does not say {text:?}: {}",
        r.stdout
    );
}

/// A count of the probe's tasks line: the number before `suffix`.
fn task_count(t: &str, suffix: &str) -> u64 {
    t.split(", ")
        .find_map(|p| p.strip_suffix(suffix))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("cannot read {suffix:?}: {t}"))
}

#[test]
fn everything_on_shm_with_one_worker() {
    let r = probe(2, "shm", &SCENARIOS, &[("PGAS_NUM_WORKERS", "1")]);
    says(&r, "shim_probe: ", "1 workers");
    // shm does every op natively: the native path was the one tested.
    let a = line(&r, "shim_probe atomics: ");
    assert!(
        a.contains("via_am false") && a.contains("U64") && a.contains("F64"),
        "{a}"
    );
    // With one worker, the task tree and the chain could only finish by
    // running tasks on waiting threads: other ready tasks (helping) or the
    // awaited task itself (a join runs a task no worker took yet).
    let t = line(&r, "shim_probe tasks: ");
    let helped = task_count(t, " run by waiting tasks");
    let inlined = task_count(t, " run by their joiner");
    assert!(helped + inlined > 100, "{t}");
    // Every bad input was reported with a message.
    r.assert_at_least("shim_probe bad: ", 14);
}

#[test]
fn waiting_tasks_help_when_joins_do_not_run_queued_tasks() {
    // PGAS_JOIN_RUNS_QUEUED=0: a join leaves its task to the worker, so with
    // one worker the tree and the chain finish only by helping.
    let r = probe(
        2,
        "shm",
        &["tasks"],
        &[("PGAS_NUM_WORKERS", "1"), ("PGAS_JOIN_RUNS_QUEUED", "0")],
    );
    let t = line(&r, "shim_probe tasks: ");
    assert!(t.ends_with(", 0 run by their joiner"), "{t}");
    let helped = task_count(t, " run by waiting tasks");
    assert!(helped > 100, "{t}");
}

#[test]
fn atomics_through_active_messages_on_shm() {
    let r = probe(
        2,
        "shm",
        &["atomics", "unordered"],
        &[("PGAS_AMO_VIA_AM", "1")],
    );
    says(&r, "shim_probe atomics: ", "native types [] via_am true");
}

#[test]
fn everything_on_tcp_rxm() {
    // rxm in message-order mode has no native atomics: all go through AMs.
    let r = probe(2, "tcp;ofi_rxm", &SCENARIOS, &[]);
    says(&r, "shim_probe: ", "message-order MCM mode");
    says(&r, "shim_probe atomics: ", "via_am true");
}

#[test]
fn delivery_complete_mode_on_shm() {
    let scenarios = ["atomics", "nb", "tasks", "collectives"];
    let r = probe(
        2,
        "shm",
        &scenarios,
        &[("PGAS_MCM_MODE", "delivery-complete")],
    );
    says(&r, "shim_probe: ", "delivery-complete MCM mode");
}

#[test]
fn three_locales_on_udp_rxd() {
    // Every scenario but `bad`.
    probe(
        3,
        "udp;ofi_rxd",
        &SCENARIOS[..6],
        &[("PGAS_NUM_WORKERS", "1")],
    );
}

#[test]
fn fence_mode_on_sockets() {
    let scenarios = ["atomics", "nb", "strided", "tasks", "collectives"];
    let r = probe(2, "sockets", &scenarios, &[]);
    says(&r, "shim_probe: ", "message-order-fence MCM mode");
}

#[test]
fn oob_barrier_and_unpinned_workers() {
    let r = probe(
        2,
        "shm",
        &["collectives", "tasks"],
        &[("PGAS_BARRIER", "oob"), ("PGAS_PIN", "0")],
    );
    let l = line(&r, "shim_probe: ");
    assert!(l.contains("oob barrier") && l.contains("unpinned"), "{l}");
}

/// A bad knob is an error naming the variable and value on start-up; a
/// forced mode the provider cannot honour is a clean error naming what it
/// supports.
#[test]
fn bad_knobs_are_clean_errors() {
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);
    let cases: [Case<'_>; 4] = [
        (&[("PGAS_PIN", "maybe")], &["PGAS_PIN", "maybe"]),
        (&[("PGAS_BARRIER", "tree")], &["PGAS_BARRIER", "tree"]),
        (&[("PGAS_NUM_WORKERS", "0")], &["PGAS_NUM_WORKERS", "\"0\""]),
        (
            &[
                ("PGAS_PROVIDER", "shm"),
                ("PGAS_MCM_MODE", "message-order-fence"),
            ],
            &["message-order-fence", "not supported", "shm"],
        ),
    ];
    for (env, needles) in cases {
        Job::example("shim_probe", 2)
            .args(&["collectives"])
            .env(env)
            .secs(60)
            .serial()
            .fails_naming(needles);
    }
}
