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

/// Providers where the transmit contexts must be the receive endpoint itself
/// (one endpoint, a CQ per direction) instead of endpoints of their own.
/// No provider here needs it; `PGAS_SINGLE_ENDPOINT=1` forces it for
/// diagnosis (it was tried against the rxd atomics crash below, in vain).
pub fn single_endpoint(provider: &str) -> bool {
    let _ = provider;
    std::env::var_os("PGAS_SINGLE_ENDPOINT").is_some()
}

/// Providers whose native atomics we do not use. `udp;ofi_rxd` (1.17): the
/// first fetching atomic returns before the target applied it (a following
/// atomic read sees the old value) and the process then segfaults inside
/// `fi_cq_read` (libfabric+0xc6117), with or without a domain lock, with one
/// or separate endpoints, through `fi_fetch_atomic` or `fi_fetch_atomicmsg`.
/// PUT/GET are fine; AMOs go through active messages instead.
pub fn avoid_native_atomics(provider: &str) -> bool {
    provider.contains("ofi_rxd")
}
