//! Liveness and soundness probes of the public API (`tests/examples/liveness.rs`)
//! under a time limit: a hang is a failure.
//!
//! * a barrier entered from inside a task, on the providers with manual
//!   progress (tcp;ofi_rxm, udp;ofi_rxd) and on shm;
//! * `PGAS_AM_DONE=put` with handler threads that must prove native atomics
//!   visible to each other (shm and sockets have native atomics);
//! * forgotten non-blocking handles in safe code do not write into memory
//!   that was freed and reused;
//! * locales that called `finalize` keep answering GETs, atomics and
//!   on-statements of a peer still working (the finalizing thread parks).

use pgas_tests::job::Job;

fn probe(provider: &str, what: &str, rounds: &str, extra: &[(&str, &str)]) {
    probe_n(2, provider, what, rounds, extra)
}

fn probe_n(n: usize, provider: &str, what: &str, rounds: &str, extra: &[(&str, &str)]) {
    Job::example("liveness", n)
        .args(&[what, rounds])
        .provider(provider)
        .env(extra)
        .passes(&[format!("liveness {what} ok: {rounds} rounds")]);
}

#[test]
fn barrier_from_a_task_on_manual_progress_providers() {
    // 4 locales: without the waiting task driving its own context, the job
    // hung on udp;ofi_rxd (the flag PUTs of later rounds sat in the endpoint).
    for p in ["tcp;ofi_rxm", "udp;ofi_rxd", "shm"] {
        probe_n(4, p, "barrier-in-task", "150", &[]);
    }
}

#[test]
fn handlers_proving_to_each_other_with_done_by_put() {
    for p in ["shm", "sockets"] {
        probe(p, "handlers-prove", "300", &[("PGAS_AM_DONE", "put")]);
    }
    probe("shm", "handlers-prove", "300", &[]);
}

#[test]
fn forgotten_nonblocking_handles_do_not_touch_reused_memory() {
    for p in ["shm", "tcp;ofi_rxm"] {
        probe(p, "forget-nb", "100", &[]);
    }
}

#[test]
fn finalizing_locales_keep_serving_a_peer() {
    // 3 locales on 2 cores: sockets' progress threads make each round trip
    // about 1 ms there, so fewer rounds.
    for (p, rounds) in [
        ("shm", "2000"),
        ("tcp;ofi_rxm", "2000"),
        ("udp;ofi_rxd", "2000"),
        ("sockets", "300"),
    ] {
        probe_n(3, p, "served-while-finalizing", rounds, &[]);
    }
}
