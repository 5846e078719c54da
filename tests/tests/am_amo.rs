//! Atomics through active messages: every type x op x fetch, through
//! `Am::amo` and `Comm::amo` (the installed fallback), checked against a CPU
//! shadow, against every locale; the digest of all fetched values and final
//! words must be the same whether the atomics ran natively or through AMs.
//! Program: `amhandler/examples/am_probe.rs` (`amo`).

use pgas_tests::job::am_probe;
use std::collections::BTreeSet;
use std::time::Duration;

/// Runs the amo scenario; returns the set of digests printed (one per locale).
fn digest(provider: &str, args: &[&str], extra: &[(&str, &str)]) -> BTreeSet<String> {
    let run = am_probe(provider, args, extra, Duration::from_secs(150));
    let d: BTreeSet<String> = run
        .stdout
        .lines()
        .filter_map(|l| l.split("digest locale ").nth(1))
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_owned))
        .collect();
    assert_eq!(
        d.len(),
        1,
        "locales disagree or printed nothing: {}",
        run.stdout
    );
    if extra.contains(&("PGAS_AMO_VIA_AM", "1")) {
        assert!(run.stdout.contains("via_am true"), "{}", run.stdout);
    }
    d
}

const VIA_AM: (&str, &str) = ("PGAS_AMO_VIA_AM", "1");

/// shm has native atomics: native and AM results must agree.
#[test]
fn amo_via_am_matches_native_shm() {
    let native = digest("shm", &["amo"], &[]);
    let via = digest("shm", &["amo"], &[VIA_AM]);
    assert_eq!(native, via);
}

/// tcp;ofi_rxm has no native atomics in message-order mode, udp;ofi_rxd's
/// are not used: `Comm::amo` goes through the fallback. Same digest as shm.
#[test]
fn amo_without_native_atomics_tcp_rxd() {
    let reference = digest("shm", &["amo"], &[VIA_AM]);
    assert_eq!(digest("tcp;ofi_rxm", &["amo"], &[VIA_AM]), reference);
    assert_eq!(digest("udp;ofi_rxd", &["amo"], &[VIA_AM]), reference);
    assert_eq!(digest("tcp;ofi_rxm", &["amo"], &[]), reference);
}

/// sockets (native atomics, slow): one target per locale.
#[test]
fn amo_via_am_matches_native_sockets() {
    let native = digest("sockets", &["amo", "one"], &[]);
    let via = digest("sockets", &["amo", "one"], &[VIA_AM]);
    assert_eq!(native, via);
    assert_eq!(digest("shm", &["amo", "one"], &[VIA_AM]), via);
}
