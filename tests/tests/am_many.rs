//! Many non-blocking AMs from every locale to one target, each executed
//! exactly once (counted per sender); send order of fast and non-blocking
//! AMs; nested and recursive on-statements. Program:
//! `amhandler/examples/am_probe.rs` (`many`, `order`, `nested`).
//!
//! Counts: 100,000 AMs per locale on shm, tcp;ofi_rxm and udp;ofi_rxd;
//! 3,000 on sockets, whose internal progress thread makes it ~40x slower here (4-5k
//! AMs/s), to keep the suite within its time budget.

use pgas_tests::job::am_probe;
use pgas_tests::PROVIDERS;
use std::time::Duration;

fn probe(provider: &str, args: &[&str], extra: &[(&str, &str)]) -> String {
    am_probe(provider, args, extra, Duration::from_secs(150)).stdout
}

fn count_for(provider: &str) -> &'static str {
    if provider == "sockets" {
        "3000"
    } else {
        "100000"
    }
}

fn many(provider: &str) {
    let count = count_for(provider);
    let out = probe(provider, &["many", count], &[]);
    let total = 3 * count.parse::<u64>().unwrap();
    assert!(
        out.contains(&format!("{total} AMs from 3 locales ran exactly once")),
        "{out}"
    );
}

pgas_tests::per_provider!(many; many_shm, many_tcp_rxm, many_udp_rxd, many_sockets);

/// The smallest landing zone (64K) retires and reposts its halves hundreds
/// of times under a flood of small AMs. (On shm this hung before the poller
/// emptied the receive CQ on every read: shm refuses to post a buffer while
/// that CQ is full.)
#[test]
fn landing_zone_halves_are_reposted() {
    for p in ["shm", "tcp;ofi_rxm"] {
        let out = probe(p, &["many", "50000"], &[("PGAS_AM_LZ_SIZE", "64K")]);
        let reposts: u64 = out
            .split("lz reposts ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no repost count: {out}"));
        assert!(reposts >= 100, "only {reposts} reposts on {p}: {out}");
    }
}

/// Fast non-blocking AMs (one handler thread) and non-blocking AMs (one
/// executor thread) from one sender run in send order.
#[test]
fn send_order_every_provider() {
    for p in PROVIDERS {
        let n = if p == "sockets" { "500" } else { "5000" };
        probe(p, &["order", n], &[("PGAS_AM_EXECUTORS", "1")]);
    }
}

/// on L1 { on L2 { on L0 { } } } from every locale at once, and recursion
/// 40 deep (more than the executor threads) from every locale at once.
#[test]
fn nested_and_recursive_every_provider() {
    for p in PROVIDERS {
        probe(p, &["nested", "40"], &[]);
    }
    // With one executor thread per locale the waiting thread must run the
    // nested bodies itself.
    probe("shm", &["nested", "40"], &[("PGAS_AM_EXECUTORS", "1")]);
}
