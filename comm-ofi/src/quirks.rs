//! Provider quirks, as data: what we do differently per provider and why.
//!
//! Each entry records a behaviour measured on this machine (libfabric 1.17)
//! that the provider's advertised attributes do not tell.

/// ofi_rxm's receive buffers, bounded before libfabric reads its
/// parameters. With a shared receive context (what 1.17 does over tcp by
/// default) rxm posts `FI_OFI_RXM_MSG_RX_SIZE` = 4096 buffers of
/// `FI_OFI_RXM_BUFFER_SIZE` = 16 KiB on *every* endpoint, 64 MB per transmit
/// context whether it ever receives or not: 4 locales x 128 workers on
/// tcp;ofi_rxm were OOM-killed at ~5.6 GB per locale. Without it the buffers
/// are per connection, posted when a peer connects (measured in
/// docs/performance.md, "Memory per locale and per worker": 16 workers,
/// 1560 -> 80 MB at start-up, 1838 -> 660 MB after use). So unless the user
/// chose (`FI_OFI_RXM_USE_SRX` set), turn it off.
///
/// Returns whether it set the variable. libfabric reads it once, when the
/// provider is first loaded, so this runs at the top of `Comm::init`,
/// before the bootstrap connects (PMIx starts threads) and before comm-ofi
/// starts any: the one moment the process environment is changed, with no
/// thread of ours reading it. A program that calls `getenv` from threads of
/// its own while it calls `init` should set the variable itself.
pub fn bound_rxm_receive_buffers() -> bool {
    default_env("FI_OFI_RXM_USE_SRX", "0")
}

/// ofi_rxm's completion rings, bounded the same way. rxm opens, for every
/// endpoint, a completion queue of the provider below it sized
/// `(rx size + tx size) x FI_UNIVERSE_SIZE` entries (1.17: 1,024 by
/// default, 12 MiB per endpoint here). It is a ring: the provider writes
/// each completion at the next entry, so the ring's pages become resident
/// one after another until it has wrapped once, whatever few completions
/// are pending. The tcp soak's resident memory grew about 1.4 MiB a minute
/// for minutes with the heap and descriptors flat (docs/soak.md); per
/// mapping, only these rings and the AM landing zones grew, and with the
/// rings smaller only the landing zones did (bounded by
/// `PGAS_AM_LZ_SIZE`). 32 units make 384 KiB per endpoint; a ring that is
/// ever full spills into the utility CQ's overflow list (1.17's
/// `ofi_cq_write_overflow`), so a job larger than 32 loses nothing. The
/// parameter sizes nothing else of the providers we use (1.17: util AVs
/// use it only when opened with no count; ours give one). Same moment and
/// caveat as [`bound_rxm_receive_buffers`].
pub fn bound_rxm_completion_rings() -> bool {
    default_env("FI_UNIVERSE_SIZE", "32")
}

/// Both rxm memory bounds ([`bound_rxm_receive_buffers`],
/// [`bound_rxm_completion_rings`]), called where libfabric has not read its
/// parameters yet.
pub fn bound_rxm_memory() {
    bound_rxm_receive_buffers();
    bound_rxm_completion_rings();
}

/// Sets `var` to `value` unless the user set it (then theirs stands).
fn default_env(var: &str, value: &str) -> bool {
    if std::env::var_os(var).is_some() {
        return false;
    }
    std::env::set_var(var, value);
    true
}

/// Providers whose `FI_THREAD_SAFE` claim does not hold when one thread
/// progresses the receive endpoint while another posts and reaps on a
/// transmit endpoint of the same domain. `udp;ofi_rxd` (1.17): the reader
/// segfaults inside `fi_cq_read` and a fetching atomic posted right after
/// another to the same word can return a stale value. We serialise every
/// libfabric call of the domain with one lock for these.
pub fn needs_domain_lock(provider: &str) -> bool {
    provider.contains("ofi_rxd")
}

/// Providers where every endpoint reaches a peer through a connection of
/// its own (rxm over a connection-oriented provider: `tcp;ofi_rxm`). With a
/// transmit endpoint per thread, an AM request travels on the connection
/// from the caller's endpoint to the target's receive endpoint and its
/// answer on another one back: each carries data one way only, so every
/// round trip costs a bare TCP ACK more (3 segments instead of 2, counted
/// with `nstat`) and the data segments miss the kernel's fast path
/// (`TcpExtTCPHPHits` near 0). Sending small AM messages from the receive
/// endpoint puts request and answer on one connection: the fetch-add via
/// AM went from 14.7-15.4 us to 11.8-12.1 us (the raw send/recv round trip
/// is 10-12 us). See `TxContext::send_small_from` (awaited messages only).
pub fn small_messages_from_receive_endpoint(provider: &str) -> bool {
    provider.contains("ofi_rxm")
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

/// Utility providers we never select: `ofi_mrail` (several rails of one
/// core provider) and the `ofi_hook_*` layers (diagnostics over another
/// provider); the core provider under them is offered as itself. They are
/// left out of the provider list too.
pub fn is_utility_layer(provider: &str) -> bool {
    provider.contains("ofi_mrail") || provider.starts_with("ofi_hook")
}

/// Providers that claim `FI_DELIVERY_COMPLETE` but do not deliver it:
/// `ofi_rxm` (libfabric issue 5601). The delivery-complete mode takes them
/// only when the user names the provider.
pub fn claims_delivery_complete_falsely(provider: &str) -> bool {
    provider.contains("ofi_rxm")
}

/// Providers unreliable over IPv6 addresses: `sockets` (the original
/// runtime filters it too).
pub fn unreliable_over_ipv6(provider: &str) -> bool {
    provider == "sockets"
}

/// Providers that reach this host only (`shm` offers `FI_LOCAL_COMM`
/// alone): never selected for locales on several hosts, and ranked last
/// there.
pub fn reaches_this_host_only(provider: &str) -> bool {
    provider.starts_with("shm")
}

/// Providers that complete a send only once the receiver's progress
/// acknowledged it: `udp;ofi_rxd`. A locale's poller must keep polling
/// (never sleep on the doorbell) while peers may send to it.
pub fn sends_need_receiver_progress(provider: &str) -> bool {
    provider.contains("ofi_rxd")
}

/// Providers whose completion queues are waited on by blocking in the CQ's
/// wait object (`fi_cq_sread`) rather than by spinning, unless
/// `PGAS_CQ_WAIT` says otherwise: `sockets`, whose own progress thread
/// makes progress while we block (docs/providers.md).
pub fn blocks_on_completion_queues(provider: &str) -> bool {
    provider.starts_with("sockets")
}

/// The class and position of a provider in the selection's preference
/// (lower first): hardware providers, then shm on one host (last when the
/// locales are on several: it cannot reach other hosts), tcp, udp, net,
/// sockets.
pub fn provider_rank(prov: &str, single_host: bool) -> (u8, u8) {
    let core = prov.split(';').next().unwrap_or(prov);
    match core {
        "shm" if single_host => (1, 0),
        "shm" => (9, 0), // cannot reach other hosts
        "tcp" => (2, 0),
        "udp" => (2, 1),
        "net" => (2, 2),
        "sockets" => (3, 0),
        // verbs, efa, cxi, psm2/3, opx, usnic, gni, ...: hardware first.
        _ => (0, 0),
    }
}

/// Providers on which a fetching atomic read of a target word, posted on the
/// context that issued earlier native AMOs to that target, proves them
/// applied: `shm` (1.17). Every command an endpoint sends a peer (inject
/// and posted RMA, atomics, sends) goes into that peer's one command queue,
/// in posting order, and the peer's progress takes them out in that order
/// and carries each out before the next: an atomic is applied by the
/// target process itself (CPU stores to its own memory) when its command is
/// taken. A fetching atomic completes at the initiator only once the
/// target's answer is back, so the target took it, and thus every earlier
/// command of ours, and applied them, before it answered. That is what the
/// no-op AM proof shows (docs/mcm.md, "Proving native AMOs visible") with
/// one thread hand-over less at each side. Checked by the generated litmus
/// suite's shm cells (AMO-WINDOW, MP-atomic and the rest), in which the
/// proof is the only thing between an add and the flag that releases it.
pub fn atomic_read_proves_amos(provider: &str) -> bool {
    provider == "shm"
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

/// Providers whose address vector holds only so many peers, counting the
/// peer endpoints that send to us as well as the addresses we insert:
/// `shm` (1.17) keeps every peer region in one map of `SMR_MAX_PEERS` (256,
/// its `ep_cnt`); `fi_av_open` with a larger count fails with `ENOSYS`
/// ("Function not implemented"), and a larger job overflows the map later.
/// Returns that limit: with `n` locales of `c` transmit contexts each, a
/// locale needs `n * (c + 1)` entries.
pub fn av_peer_limit(provider: &str, ep_cnt: usize) -> Option<usize> {
    provider.starts_with("shm").then_some(ep_cnt.max(1))
}

/// Adds to a failed context plan why so few contexts were left: the
/// provider's address-vector limit, naming the variables that matter.
pub fn explain_av_limit(
    e: crate::Error,
    provider: &str,
    limit: Option<usize>,
    locales: usize,
    cfg: &crate::Config,
) -> crate::Error {
    let Some(limit) = limit else { return e };
    crate::Error::Unsupported(format!(
        "{e}. The {provider} provider reaches at most {limit} endpoints per locale: {locales} \
         locales x (contexts + 1) must not exceed {limit}, which leaves {} context(s) per \
         locale; run fewer locales per node (or another provider), or lower PGAS_AM_HANDLERS \
         (PGAS_NUM_WORKERS={} needs none of its own: workers share contexts when too few)",
        (limit / locales.max(1)).saturating_sub(1),
        cfg.num_workers
    ))
}

/// Signals whose default action ends the process with a core or a status
/// the launcher reports.
const FAULT_SIGNALS: [libc::c_int; 7] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
    libc::SIGINT,
    libc::SIGTERM,
];

/// Shared objects, pulled in by libfabric, that install signal handlers
/// which turn a crash into `exit(1)`: `libinfinipath.so.4` (PSM 1, linked by
/// Debian's libfabric) catches SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT and
/// SIGTERM in a constructor, prints a backtrace for some and exits with
/// status 1, so a segfaulting locale was reported as "exited with status 1".
const EXITING_HANDLER_LIBS: [&str; 1] = ["libinfinipath"];

/// Puts the default action back for fault signals whose handler lives in one
/// of `EXITING_HANDLER_LIBS`, so a crash is reported as the signal that
/// caused it. Handlers of the program (or of anything else) are left alone.
/// Returns the signals reset.
pub fn restore_default_fault_handlers() -> Vec<libc::c_int> {
    let mut reset = Vec::new();
    for sig in FAULT_SIGNALS {
        // SAFETY: a zeroed sigaction is a valid out-parameter; a null new
        // action only queries.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0 {
            continue;
        }
        let h = old.sa_sigaction;
        if h == libc::SIG_DFL || h == libc::SIG_IGN {
            continue;
        }
        // SAFETY: a zeroed Dl_info is a valid out-parameter; dladdr only
        // reads the address.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::dladdr(h as *const libc::c_void, &mut info) } == 0
            || info.dli_fname.is_null()
        {
            continue;
        }
        // SAFETY: dladdr set dli_fname to a NUL-terminated path it owns.
        let lib = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_string_lossy();
        if !EXITING_HANDLER_LIBS.iter().any(|l| lib.contains(l)) {
            continue;
        }
        // SAFETY: SIG_DFL is always a valid disposition.
        if unsafe { libc::signal(sig, libc::SIG_DFL) } != libc::SIG_ERR {
            tracing::debug!(sig, library = %lib, "default action restored");
            reset.push(sig);
        }
    }
    reset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_predicates_pick_their_providers_only() {
        let all = [
            "shm",
            "tcp;ofi_rxm",
            "udp;ofi_rxd",
            "sockets",
            "verbs;ofi_rxm",
            "efa",
        ];
        let picked = |f: fn(&str) -> bool| all.iter().copied().filter(|p| f(p)).collect::<Vec<_>>();
        assert_eq!(picked(reaches_this_host_only), ["shm"]);
        assert_eq!(
            picked(claims_delivery_complete_falsely),
            ["tcp;ofi_rxm", "verbs;ofi_rxm"]
        );
        assert_eq!(picked(sends_need_receiver_progress), ["udp;ofi_rxd"]);
        assert_eq!(picked(blocks_on_completion_queues), ["sockets"]);
        assert_eq!(picked(unreliable_over_ipv6), ["sockets"]);
        assert!(picked(is_utility_layer).is_empty());
        assert!(is_utility_layer("ofi_mrail") && is_utility_layer("ofi_hook_perf"));
    }

    #[test]
    fn av_limit_only_for_shm() {
        assert_eq!(av_peer_limit("shm", 256), Some(256));
        assert_eq!(av_peer_limit("tcp;ofi_rxm", 32768), None);
    }

    /// The library a signal's handler lives in ("" for none or unknown).
    fn handler_lib(sig: libc::c_int) -> String {
        // SAFETY: as in restore_default_fault_handlers.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: queries only.
        unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) };
        if old.sa_sigaction == libc::SIG_DFL || old.sa_sigaction == libc::SIG_IGN {
            return String::new();
        }
        // SAFETY: as in restore_default_fault_handlers.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::dladdr(old.sa_sigaction as *const libc::c_void, &mut info) } == 0
            || info.dli_fname.is_null()
        {
            return String::new();
        }
        // SAFETY: set by dladdr.
        unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn no_exiting_handler_survives_the_restore() {
        // This test binary links libfabric, so libinfinipath's constructor
        // (where installed) has run.
        restore_default_fault_handlers();
        for sig in FAULT_SIGNALS {
            let lib = handler_lib(sig);
            assert!(
                !EXITING_HANDLER_LIBS.iter().any(|l| lib.contains(l)),
                "signal {sig} still handled by {lib}"
            );
        }
    }

    #[test]
    fn handlers_of_others_are_left_alone() {
        extern "C" fn mine(_: libc::c_int) {}
        // SAFETY: installs a plain handler for a signal nobody raises here.
        unsafe {
            libc::signal(
                libc::SIGFPE,
                mine as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
        assert!(!restore_default_fault_handlers().contains(&libc::SIGFPE));
        // SAFETY: queries only.
        let cur = unsafe { libc::signal(libc::SIGFPE, libc::SIG_DFL) };
        assert_eq!(
            cur,
            mine as extern "C" fn(libc::c_int) as libc::sighandler_t
        );
    }

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
