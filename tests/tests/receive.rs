//! Where an on-statement's body runs on its target, through the public API
//! (`tests/examples/mapped_probe.rs`, scenario `receive`): where CQ waits
//! block (`sockets`), an idle runtime worker waits in the receive queue in
//! the AM poller's place (amhandler's blocking cover), so a fast body it
//! receives runs on it, with no hop to the AM handler thread. With
//! `PGAS_WORKER_POLL=0` (the negative control) every fast body runs on the
//! handler thread.

use pgas_tests::job::Job;
use pgas_tests::Run;

fn receive(provider: &str, extra: &[(&str, &str)]) -> Run {
    Job::example("mapped_probe", 2)
        .args(&["receive"])
        .provider(provider)
        .env(&[("PGAS_LOCAL_PATH", "fabric")])
        .env(extra)
        .passes(&["mapped_probe receive ok"])
}

/// (worker, handler, poller, other) counts of the `caller` line.
fn counts(stdout: &str, caller: &str) -> [usize; 4] {
    let tag = format!("mapped_probe receive {caller}:");
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&tag))
        .unwrap_or_else(|| panic!("no '{tag}' line: {stdout}"));
    let mut out = [0; 4];
    for (i, key) in ["worker=", "handler=", "poller=", "other="]
        .iter()
        .enumerate()
    {
        out[i] = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in '{line}'"));
    }
    assert_eq!(
        out.iter().sum::<usize>(),
        200,
        "200 bodies per caller: {line}"
    );
    out
}

#[test]
fn sockets_fast_bodies_run_on_the_worker_that_waits_in_the_cq() {
    let r = receive("sockets", &[]);
    for caller in ["main", "task"] {
        let [worker, handler, poller, other] = counts(&r.stdout, caller);
        // Nearly all (192-200 of 200 here when the machine is quiet); a
        // worker descheduled for milliseconds lets the poller take over for
        // a while, so the bound leaves room for a loaded machine.
        assert!(
            worker >= 100,
            "from the {caller} thread only {worker} of 200 fast bodies ran on locale 1's \
             worker (handler {handler}, poller {poller}, other {other}): the idle worker \
             should wait in the receive queue in the poller's place"
        );
    }
}

#[test]
fn without_worker_polls_fast_bodies_run_on_the_handler() {
    let r = receive("sockets", &[("PGAS_WORKER_POLL", "0")]);
    for caller in ["main", "task"] {
        let [worker, handler, ..] = counts(&r.stdout, caller);
        assert_eq!(
            (worker, handler),
            (0, 200),
            "negative control: with PGAS_WORKER_POLL=0 the {caller} thread's fast bodies \
             should all run on the handler thread"
        );
    }
}
