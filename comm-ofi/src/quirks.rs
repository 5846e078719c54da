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

/// `shm` creates each endpoint's region `/dev/shm/<pid>:<uid>:<n>`
/// exclusively, so a region left by a killed process whose pid the kernel
/// later gives to us makes our `fi_enable` fail with `EBUSY` (seen in CI
/// after the failure tests had killed locales). Before we open any endpoint,
/// every region under our own pid is stale by construction: no living process
/// but us has this pid, and we have not created one yet. Returns how many
/// were removed.
pub fn sweep_stale_shm_regions(provider: &str) -> usize {
    if !provider.starts_with("shm") {
        return 0;
    }
    bootstrap::leftovers::remove_shm_regions_of(std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_regions_of_our_pid_are_removed_only_for_shm() {
        let ours = format!("/dev/shm/{}:0:77", std::process::id());
        std::fs::write(&ours, b"x").unwrap();
        assert_eq!(sweep_stale_shm_regions("tcp;ofi_rxm"), 0);
        assert!(std::path::Path::new(&ours).exists());
        assert!(sweep_stale_shm_regions("shm") >= 1);
        assert!(!std::path::Path::new(&ours).exists());
    }
}
