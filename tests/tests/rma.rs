//! Multi-process PUT/GET/AMO tests on every provider, through the launcher.
//! Each run must report every check of `rma_probe` on each of its 3
//! locales (`pgas_tests::expect::rma_probe`): PUT/GET round trips at 1 B,
//! 8 B, inject size + 1, 64 KiB and 4 MiB with every locale as writer and
//! target; fetch-add and add totals (12 and 300 on 3 locales) on every
//! locale; one compare-and-swap winner per word (mask 0b111); write then
//! swap; six misuses refused.

use pgas_tests::job::Job;
use pgas_tests::{expect, PROVIDERS};

fn probe(provider: &str, extra: &[(&str, &str)]) {
    let job = Job::example("rma_probe", 3).provider(provider).env(extra);
    let run = job.passes(&["rma_probe ok", provider]);
    run.assert_checks(&job.what(), &expect::rma_probe(3));
}

pgas_tests::per_provider!(|p| probe(p, &[]);
    put_get_amo_shm, put_get_amo_tcp_rxm, put_get_amo_udp_rxd, put_get_amo_sockets);

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
