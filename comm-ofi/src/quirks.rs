//! Provider quirks, as data: what we do differently per provider and why.
//!
//! Each entry records a behaviour measured on this machine (libfabric 1.17)
//! that the provider's advertised attributes do not tell.

/// Providers whose `FI_THREAD_SAFE` claim does not hold when one thread
/// progresses the receive endpoint while another posts and reaps on a
/// transmit endpoint of the same domain. `udp;ofi_rxd` (1.17): the reader
/// segfaults inside `fi_cq_read` and a fetching atomic posted right after
/// another to the same word can return a stale value. We serialise every
/// libfabric call of the domain with one lock for these.
pub fn needs_domain_lock(provider: &str) -> bool {
    provider.contains("ofi_rxd")
}
