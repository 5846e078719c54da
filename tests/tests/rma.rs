//! Multi-process PUT/GET/AMO tests on every provider, through the launcher.

use pgas_tests::{example, launch, PROVIDERS};
use std::time::Duration;

fn probe(provider: &str, extra: &[(&str, &str)]) {
    let mut env = vec![("PGAS_PROVIDER", provider)];
    env.extend_from_slice(extra);
    let run = launch(
        3,
        &example("rma_probe"),
        &[],
        &env,
        Duration::from_secs(120),
    );
    run.assert_ok(&format!("rma_probe on {provider} {extra:?}"));
    assert!(
        run.stdout.contains("rma_probe ok"),
        "no ok line: {}",
        run.stdout
    );
    assert!(
        run.stdout.contains(provider),
        "ran on another provider: {}",
        run.stdout
    );
}

#[test]
fn put_get_amo_shm() {
    probe("shm", &[]);
}

#[test]
fn put_get_amo_tcp_rxm() {
    probe("tcp;ofi_rxm", &[]);
}

#[test]
fn put_get_amo_udp_rxd() {
    probe("udp;ofi_rxd", &[]);
}

#[test]
fn put_get_amo_sockets() {
    probe("sockets", &[]);
}

/// 4 MiB transfers split into 1 MiB pieces (as on providers whose
/// max_msg_size is smaller than the transfer).
#[test]
fn chunking_above_max_msg_size() {
    probe("shm", &[("PGAS_MAX_MSG_SIZE", "1M")]);
    probe("tcp;ofi_rxm", &[("PGAS_MAX_MSG_SIZE", "1M")]);
}

#[test]
fn every_provider_is_listed() {
    // Keep the per-provider tests above in step with the harness list.
    assert_eq!(PROVIDERS.len(), 4);
}
