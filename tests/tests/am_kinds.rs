//! Active messages on every provider: every AM kind (blocking, non-blocking,
//! fast, large arguments and replies, AM-mediated RMA on unregistered
//! memory, no-op, remote failure), argument sizes 0 B, 1 B, the inline limit,
//! limit + 1 and 1 MiB, reply sizes around the reply limit, and the MCM
//! visibility of a PUT before an on-statement and of a body's PUT after its
//! 'done'. Program: `amhandler/examples/am_probe.rs` (`kinds`). A passing
//! run must report every check on each of its 3 locales towards each of
//! them (`pgas_tests::expect::am_kinds`): the arguments at each size reach a
//! blocking and a fast body, replies at each size, 10 non-blocking bodies
//! ran, no-op, a remote panic named, a PUT before an on-statement seen by the
//! body and the body's PUT seen after its 'done', AM GET at 4 sizes and AM
//! PUT into unregistered memory, a bad address refused by the target; and
//! two misuses refused at the sender.

use pgas_tests::job::am_probe;
use pgas_tests::{expect, PROVIDERS};
use std::time::Duration;

fn kinds(provider: &str, extra: &[(&str, &str)]) {
    let run = am_probe(provider, &["kinds"], extra, Duration::from_secs(120));
    run.assert_checks(
        &format!("am_probe kinds on {provider} {extra:?}"),
        &expect::am_kinds(3),
    );
}

pgas_tests::per_provider!(|p| kinds(p, &[]); kinds_shm, kinds_tcp_rxm, kinds_udp_rxd, kinds_sockets);

/// The original's done path: PUT reply, force visible, PUT done word.
#[test]
fn kinds_with_put_done() {
    kinds("shm", &[("PGAS_AM_DONE", "put")]);
    kinds("tcp;ofi_rxm", &[("PGAS_AM_DONE", "put")]);
}

/// Two handler threads on one pinned core, one executor, smallest landing zone.
#[test]
fn kinds_with_two_handlers_pinned_one_executor() {
    kinds(
        "shm",
        &[
            ("PGAS_AM_HANDLERS", "2"),
            ("PGAS_AM_HANDLER_CORE", "0"),
            ("PGAS_AM_EXECUTORS", "1"),
            ("PGAS_AM_LZ_SIZE", "64K"),
        ],
    );
}

#[test]
fn every_provider_is_covered() {
    assert_eq!(PROVIDERS, ["shm", "tcp;ofi_rxm", "udp;ofi_rxd", "sockets"]);
}
