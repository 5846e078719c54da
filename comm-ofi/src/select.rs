//! Provider and MCM-mode selection.
//!
//! The original tries the three MCM modes in order (message-order-fence,
//! message-order, delivery-complete), "good" providers first, and takes the
//! first hit. On a machine where only `sockets` offers `FI_FENCE` that picks
//! the slowest provider by three orders of magnitude. We collect every
//! (provider, mode) pair the installed library can honour, rank *providers*
//! first (hardware, then `shm` when every locale shares a host, then
//! tcp/udp, `sockets` last), and then take the first mode that provider
//! honours, in the original's order. `docs/providers.md` records the ranking.
//!
//! Every locale must end up with the same choice, so locale 0 decides and the
//! others resolve exactly that (provider, mode, domain) on their side.

use crate::error::{Error, Result};
use crate::ofi::info::{order_names, Info};
use crate::quirks::{self, provider_rank};
use crate::Mode;
use libfabric_sys as sys;

/// What the user forced, if anything.
#[derive(Debug, Clone, Default)]
pub struct SelectRequest {
    /// `PGAS_PROVIDER` / `FI_PROVIDER`.
    pub provider: Option<String>,
    /// `PGAS_MCM_MODE` (None = auto).
    pub mode: Option<Mode>,
    /// Where the locales run relative to each other (`shm` reaches only
    /// this host; other hosts need `FI_REMOTE_COMM`).
    pub locality: Locality,
    /// Ask for native atomics (`PGAS_NATIVE_AMO=0` turns them off).
    pub want_atomics: bool,
}

/// Where a job's locales run relative to one another: it decides which
/// communication capabilities the hints ask for and whether loopback
/// interfaces can reach every peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Locality {
    /// Every locale on this host.
    OneHost,
    /// Several hosts, one locale on each (the default: assumes nothing is
    /// shared).
    #[default]
    DistinctHosts,
    /// Several hosts, at least one of them holding several locales.
    Mixed,
}

impl Locality {
    /// The locality of a job from every locale's host key.
    pub fn of_hosts(keys: &[String]) -> Locality {
        let distinct: std::collections::HashSet<&String> = keys.iter().collect();
        if distinct.len() <= 1 {
            Locality::OneHost
        } else if distinct.len() == keys.len() {
            Locality::DistinctHosts
        } else {
            Locality::Mixed
        }
    }

    /// Whether every locale shares this host.
    pub fn single_host(self) -> bool {
        self == Locality::OneHost
    }

    /// The communication capabilities the hints ask for. On one host both
    /// are left out (shm only offers `FI_LOCAL_COMM`, and asking for it
    /// would only narrow the IP providers' answers); across hosts
    /// `FI_REMOTE_COMM`, plus `FI_LOCAL_COMM` when a host holds several
    /// locales (a provider may otherwise return entries that cannot reach
    /// a peer in the same process group on this host).
    pub fn comm_caps(self) -> u64 {
        match self {
            Locality::OneHost => 0,
            Locality::DistinctHosts => sys::FI_REMOTE_COMM,
            Locality::Mixed => sys::FI_REMOTE_COMM | sys::FI_LOCAL_COMM,
        }
    }
}

/// The outcome: one provider entry and the mode it will run in.
#[derive(Debug)]
pub struct Selection {
    /// The `fi_info` entry to open everything from.
    pub info: Info,
    /// The MCM mode.
    pub mode: Mode,
    /// Provider name (`tcp;ofi_rxm`).
    pub provider: String,
    /// Whether `FI_ATOMIC` was granted (native AMOs).
    pub native_atomics: bool,
}

/// One (provider, mode) the library offers.
#[derive(Debug)]
struct Candidate {
    info: Info,
    mode: Mode,
    atomics: bool,
}

const BASE_CAPS: u64 = sys::FI_MSG
    | sys::FI_MULTI_RECV
    | sys::FI_RMA
    | sys::FI_READ
    | sys::FI_WRITE
    | sys::FI_REMOTE_READ
    | sys::FI_REMOTE_WRITE
    | sys::FI_SEND
    | sys::FI_RECV;

/// Memory-registration modes this layer can honour (see `heap`).
pub const MR_MODES_SUPPORTED: u64 = sys::FI_MR_LOCAL
    | sys::FI_MR_VIRT_ADDR
    | sys::FI_MR_ALLOCATED
    | sys::FI_MR_PROV_KEY
    | sys::FI_MR_ENDPOINT;

/// The message orderings mode `mode` relies on (see `docs/mcm.md`): asked
/// for in the hints, and required in what the provider grants, on the
/// transmit and the receive side alike.
pub fn required_order(mode: Mode) -> u64 {
    sys::FI_ORDER_SAS
        | match mode {
            // RMA_WAW is kept (non-blocking PUTs exist); ATOMIC_RAW is not asked
            // for because several providers do not offer it.
            Mode::MessageOrderFence => sys::FI_ORDER_ATOMIC_WAW | sys::FI_ORDER_RMA_WAW,
            Mode::MessageOrder => sys::FI_ORDER_RAW | sys::FI_ORDER_WAW | sys::FI_ORDER_SAW,
            Mode::DeliveryComplete => 0,
        }
}

/// The orderings `mode` needs that a provider's returned `tx`/`rx`
/// `msg_order` lacks (0: all granted). A provider may answer hints with
/// less than was asked; relying on an ordering it did not grant would be a
/// silent hole, so such a candidate is refused.
pub fn missing_order(mode: Mode, tx: u64, rx: u64) -> u64 {
    required_order(mode) & !(tx & rx)
}

/// Orderings asked for beyond what `mode` requires, best first, the last
/// always 0 (nothing more): the first that a provider grants is the one
/// used. delivery-complete with native atomics asks for atomic WAW, which
/// lets a window of non-fetching AMOs to one target stay in flight
/// (`mcm::Selector::with_atomic_waw`); providers grant it only when asked
/// (shm answers hints of SAS alone with SAS alone), and a provider without
/// it still runs the mode, waiting for each AMO.
pub fn preferred_orders(mode: Mode, atomics: bool) -> &'static [u64] {
    match (mode, atomics) {
        (Mode::DeliveryComplete, true) => &[sys::FI_ORDER_ATOMIC_WAW, 0],
        _ => &[0],
    }
}

/// Whether an `fi_info`'s transmit and receive sides both grant atomic WAW.
pub fn grants_atomic_waw(info: &Info) -> bool {
    info.tx_msg_order() & info.rx_msg_order() & sys::FI_ORDER_ATOMIC_WAW != 0
}

/// Builds the hints for one mode attempt, asking for the orderings `extra`
/// beyond the mode's own.
fn hints(
    mode: Mode,
    atomics: bool,
    provider: Option<&str>,
    locality: Locality,
    extra: u64,
) -> Info {
    let mut h = Info::hints();
    let mut caps = BASE_CAPS | locality.comm_caps();
    let order = required_order(mode) | extra;
    let mut op_flags = sys::FI_COMPLETION;
    match mode {
        Mode::MessageOrderFence => {
            caps |= sys::FI_ATOMIC | sys::FI_FENCE;
        }
        Mode::MessageOrder => {}
        Mode::DeliveryComplete => {
            op_flags |= sys::FI_DELIVERY_COMPLETE;
        }
    }
    if atomics {
        caps |= sys::FI_ATOMIC;
    }
    h.set_caps(caps)
        .set_mode(0)
        .set_ep_type(sys::FI_EP_RDM)
        .set_msg_order(order)
        .set_tx_op_flags(op_flags)
        .set_domain(sys::FI_THREAD_SAFE, MR_MODES_SUPPORTED);
    if let Some(p) = provider {
        h.set_prov_name(p);
    }
    h
}

fn usable(c: &Candidate, req: &SelectRequest) -> bool {
    let prov = c.info.prov_name();
    let missing = missing_order(c.mode, c.info.tx_msg_order(), c.info.rx_msg_order());
    if missing != 0 {
        tracing::debug!(
            provider = %prov,
            mode = %c.mode,
            missing = %order_names(missing),
            "refused: the provider did not grant every ordering the mode relies on"
        );
        return false;
    }
    if c.atomics && quirks::avoid_native_atomics(&prov) {
        return false;
    }
    if quirks::is_utility_layer(&prov) {
        return false;
    }
    if c.mode == Mode::DeliveryComplete
        && quirks::claims_delivery_complete_falsely(&prov)
        && req.provider.is_none()
    {
        return false;
    }
    if quirks::unreliable_over_ipv6(&prov) && c.info.as_addr_format() == sys::FI_SOCKADDR_IN6 {
        return false;
    }
    // Locales on several hosts need a provider that reaches other hosts
    // (the hints ask for FI_REMOTE_COMM then; shm only offers FI_LOCAL_COMM)
    // through an interface other hosts can reach.
    if !req.locality.single_host() {
        if quirks::reaches_this_host_only(&prov) || !c.info.has_caps(sys::FI_REMOTE_COMM) {
            return false;
        }
        if is_loopback(&c.info.domain_name()) {
            tracing::debug!(provider = %prov, domain = %c.info.domain_name(),
                "refused: a loopback interface cannot reach other hosts");
            return false;
        }
    }
    true
}

/// Whether a domain (interface name or address) is the loopback one.
pub fn is_loopback(domain: &str) -> bool {
    domain == "lo" || domain.starts_with("127.") || domain == "::1" || domain == "[::1]"
}

fn provider_matches(prov: &str, wanted: &str) -> bool {
    prov == wanted || prov.split(';').next() == Some(wanted)
}

fn gather(req: &SelectRequest, provider: Option<&str>) -> Result<Vec<Candidate>> {
    let mut out = Vec::new();
    let modes: Vec<Mode> = match req.mode {
        Some(m) => vec![m],
        None => Mode::PREFERENCE.to_vec(),
    };
    for mode in modes {
        let atomic_choices: &[bool] = match (mode, req.want_atomics) {
            (Mode::MessageOrderFence, _) => &[true],
            (_, true) => &[true, false],
            (_, false) => &[false],
        };
        for &atomics in atomic_choices {
            // (provider, domain) already offered with a preferred ordering.
            let mut seen: Vec<(String, String)> = Vec::new();
            for &extra in preferred_orders(mode, atomics) {
                let h = hints(mode, atomics, provider, req.locality, extra);
                let Some(list) = Info::getinfo(&h)? else {
                    continue;
                };
                let mut offered = Vec::new();
                for info in list.entries() {
                    let key = (info.prov_name(), info.domain_name());
                    if seen.contains(&key) {
                        continue;
                    }
                    offered.push(key);
                    out.push(Candidate {
                        info,
                        mode,
                        atomics,
                    });
                }
                seen.extend(offered);
            }
        }
    }
    Ok(out)
}

/// Every provider name the library offers an RDM endpoint for (for messages).
pub fn available_providers(locality: Locality) -> Result<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for mode in Mode::PREFERENCE {
        for atomics in [true, false] {
            if let Some(list) = Info::getinfo(&hints(mode, atomics, None, locality, 0))? {
                for i in list.entries() {
                    let n = i.prov_name();
                    if !names.contains(&n) && !quirks::is_utility_layer(&n) {
                        names.push(n);
                    }
                }
            }
        }
    }
    names.sort_by_key(|n| provider_rank(n, locality.single_host()));
    Ok(names)
}

/// Modes a provider can honour (names, for messages).
pub fn modes_of(provider: &str, locality: Locality) -> Result<Vec<Mode>> {
    let req = SelectRequest {
        provider: Some(provider.to_string()),
        mode: None,
        locality,
        want_atomics: true,
    };
    let cands = gather(&req, Some(provider))?;
    let mut modes = Vec::new();
    for c in cands.iter().filter(|c| usable(c, &req)) {
        if !modes.contains(&c.mode) {
            modes.push(c.mode);
        }
    }
    Ok(modes)
}

fn sort_key(c: &Candidate, single_host: bool) -> RankKey {
    rank_key(
        &c.info.prov_name(),
        c.mode,
        c.atomics,
        &c.info.domain_name(),
        c.info.as_addr_format() == sys::FI_SOCKADDR_IN6,
        single_host,
    )
}

/// The order in which usable candidates are tried, lower first (see
/// [`rank_key`]).
type RankKey = (u8, u8, String, usize, bool, bool, bool);

/// Where a (provider, mode, atomics, domain) candidate ranks: the
/// provider's class and position ([`provider_rank`]) first, then its name
/// (two providers of one class always tie-break the same way), then the
/// mode in [`Mode::PREFERENCE`] order, native atomics before none, and on
/// one host the loopback domain before other interfaces, then IPv4
/// addresses before IPv6 (IPv6 link setups vary more between hosts). So
/// the provider is chosen first and the best mode it honours second.
fn rank_key(
    prov: &str,
    mode: Mode,
    atomics: bool,
    domain: &str,
    ipv6: bool,
    single_host: bool,
) -> RankKey {
    let mode_idx = Mode::PREFERENCE
        .iter()
        .position(|m| *m == mode)
        .unwrap_or(9);
    // On one host, prefer the loopback interface for IP providers.
    let not_lo = single_host && !is_loopback(domain);
    let (class, sub) = provider_rank(prov, single_host);
    (
        class,
        sub,
        prov.to_string(),
        mode_idx,
        !atomics,
        not_lo,
        ipv6,
    )
}

/// Chooses provider and mode (run on locale 0).
pub fn select(req: &SelectRequest) -> Result<Selection> {
    let forced = req.provider.as_deref();
    // Ask libfabric without a provider name and filter ourselves, so that
    // "tcp" also matches "tcp;ofi_rxm".
    let mut cands: Vec<Candidate> = gather(req, None)?
        .into_iter()
        .filter(|c| usable(c, req))
        .filter(|c| forced.is_none_or(|p| provider_matches(&c.info.prov_name(), p)))
        .collect();
    if cands.is_empty() {
        return Err(explain_failure(req));
    }
    cands.sort_by_key(|c| sort_key(c, req.locality.single_host()));
    let best = cands.swap_remove(0);
    Ok(Selection {
        provider: best.info.prov_name(),
        mode: best.mode,
        native_atomics: best.atomics,
        info: best.info,
    })
}

/// Resolves exactly the choice locale 0 made (run on the other locales).
pub fn resolve(
    provider: &str,
    mode: Mode,
    atomics: bool,
    domain: &str,
    locality: Locality,
) -> Result<Selection> {
    // The same preference as locale 0's gather: the first ordering asked
    // for that this locale's provider grants.
    let mut found = None;
    let mut any_list = false;
    for &extra in preferred_orders(mode, atomics) {
        let mut h = hints(mode, atomics, Some(provider), locality, extra);
        h.set_domain_name(domain);
        let Some(list) = Info::getinfo(&h)? else {
            continue;
        };
        any_list = true;
        if let Some(info) = list
            .entries()
            .into_iter()
            .find(|i| i.prov_name() == provider)
        {
            found = Some(info);
            break;
        }
    }
    let info = found.ok_or_else(|| {
        Error::NoProvider(if any_list {
            format!("provider {provider} not offered on this locale")
        } else {
            format!(
                "locale 0 chose provider {provider} (domain {domain}, mode {mode}) but this \
                 locale's libfabric does not offer it"
            )
        })
    })?;
    let missing = missing_order(mode, info.tx_msg_order(), info.rx_msg_order());
    if missing != 0 {
        return Err(Error::NoProvider(format!(
            "locale 0 chose provider {provider} in mode {mode}, but here it does not grant the \
             ordering {} that the mode relies on",
            order_names(missing)
        )));
    }
    Ok(Selection {
        info,
        mode,
        provider: provider.to_string(),
        native_atomics: atomics,
    })
}

fn explain_failure(req: &SelectRequest) -> Error {
    let avail = available_providers(req.locality).unwrap_or_default();
    match (&req.provider, req.mode) {
        (Some(p), mode) => {
            let known = avail.iter().any(|a| provider_matches(a, p));
            if !known {
                return Error::NoProvider(format!(
                    "unknown or unusable provider {p:?} (from PGAS_PROVIDER/FI_PROVIDER); \
                     available here: {}",
                    avail.join(", ")
                ));
            }
            let name = avail
                .iter()
                .find(|a| provider_matches(a, p))
                .cloned()
                .unwrap_or_else(|| p.clone());
            let modes = modes_of(&name, req.locality).unwrap_or_default();
            let supported = if modes.is_empty() {
                "no MCM mode".to_string()
            } else {
                modes
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            match mode {
                Some(m) => Error::ModeUnsupported {
                    mode: m.to_string(),
                    provider: name,
                    supported,
                },
                None => Error::NoProvider(format!(
                    "provider {name} can honour no MCM mode here (supported: {supported})"
                )),
            }
        }
        (None, Some(m)) => {
            let mut who = Vec::new();
            for a in &avail {
                if let Ok(ms) = modes_of(a, req.locality) {
                    who.push(format!(
                        "{a}: {}",
                        ms.iter()
                            .map(|m| m.to_string())
                            .collect::<Vec<_>>()
                            .join("/")
                    ));
                }
            }
            Error::NoProvider(format!(
                "no provider here honours MCM mode {m}; providers and their modes: {}",
                who.join("; ")
            ))
        }
        (None, None) => Error::NoProvider(format!(
            "no libfabric provider offers an RDM endpoint with RMA and messages \
             (providers seen: {}); check `fi_info -l`",
            avail.join(", ")
        )),
    }
}

/// The orderings a selection was granted, for the verbose line:
/// `tx RAW|WAW|SAW|SAS, rx ...` (one list when both sides agree).
pub fn describe_order(info: &Info) -> String {
    let (tx, rx) = (info.tx_msg_order(), info.rx_msg_order());
    let name = |b: u64| {
        let n = order_names(b);
        if n.is_empty() {
            "none".to_string()
        } else {
            n
        }
    };
    if tx == rx {
        name(tx)
    } else {
        format!("tx {}, rx {}", name(tx), name(rx))
    }
}

#[cfg(test)]
mod order_tests {
    use super::*;

    #[test]
    fn every_mode_requires_what_it_relies_on() {
        let mo = required_order(Mode::MessageOrder);
        for b in [
            sys::FI_ORDER_RAW,
            sys::FI_ORDER_WAW,
            sys::FI_ORDER_SAW,
            sys::FI_ORDER_SAS,
        ] {
            assert_eq!(mo & b, b);
        }
        let f = required_order(Mode::MessageOrderFence);
        for b in [
            sys::FI_ORDER_RMA_WAW,
            sys::FI_ORDER_ATOMIC_WAW,
            sys::FI_ORDER_SAS,
        ] {
            assert_eq!(f & b, b);
        }
        assert_eq!(required_order(Mode::DeliveryComplete), sys::FI_ORDER_SAS);
    }

    #[test]
    fn only_delivery_complete_with_atomics_prefers_atomic_waw_and_always_falls_back() {
        assert_eq!(
            preferred_orders(Mode::DeliveryComplete, true),
            [sys::FI_ORDER_ATOMIC_WAW, 0]
        );
        assert_eq!(preferred_orders(Mode::DeliveryComplete, false), [0]);
        for mode in [Mode::MessageOrderFence, Mode::MessageOrder] {
            for atomics in [true, false] {
                assert_eq!(preferred_orders(mode, atomics), [0], "{mode}");
            }
        }
        // The preference is never required: a provider without it is
        // not refused for the mode.
        assert_eq!(
            missing_order(Mode::DeliveryComplete, sys::FI_ORDER_SAS, sys::FI_ORDER_SAS),
            0
        );
    }

    #[test]
    fn a_grant_short_of_the_mode_is_refused_on_either_side() {
        let mo = required_order(Mode::MessageOrder);
        assert_eq!(missing_order(Mode::MessageOrder, mo, mo), 0);
        // More than asked is fine.
        let more = mo | sys::FI_ORDER_ATOMIC_RAW;
        assert_eq!(missing_order(Mode::MessageOrder, more, more), 0);
        // RAW missing on the receive side only.
        let rx = mo & !sys::FI_ORDER_RAW;
        assert_eq!(missing_order(Mode::MessageOrder, mo, rx), sys::FI_ORDER_RAW);
        assert_eq!(
            order_names(missing_order(Mode::MessageOrder, mo, rx)),
            "RAW"
        );
        // SAW missing on the transmit side.
        let tx = mo & !sys::FI_ORDER_SAW;
        assert_eq!(missing_order(Mode::MessageOrder, tx, mo), sys::FI_ORDER_SAW);
        // Delivery-complete needs only SAS.
        assert_eq!(
            missing_order(Mode::DeliveryComplete, sys::FI_ORDER_SAS, sys::FI_ORDER_SAS),
            0
        );
        assert_eq!(
            missing_order(Mode::DeliveryComplete, 0, sys::FI_ORDER_SAS),
            sys::FI_ORDER_SAS
        );
    }
}

#[cfg(test)]
mod ranking_tests {
    use super::*;

    /// The candidates, best first, as (provider, mode, atomics, domain).
    fn ranked<'a>(
        mut c: Vec<(&'a str, Mode, bool, &'a str)>,
        single_host: bool,
    ) -> Vec<(&'a str, Mode, bool, &'a str)> {
        c.sort_by_key(|(p, m, a, d)| rank_key(p, *m, *a, d, false, single_host));
        c
    }

    fn names(c: &[(&str, Mode, bool, &str)]) -> Vec<String> {
        c.iter().map(|(p, ..)| p.to_string()).collect()
    }

    const MO: Mode = Mode::MessageOrder;

    #[test]
    fn hardware_then_shm_then_ip_then_sockets_on_one_host() {
        let c = vec![
            ("sockets", MO, true, "eth0"),
            ("udp;ofi_rxd", MO, false, "eth0"),
            ("tcp;ofi_rxm", MO, false, "eth0"),
            ("shm", MO, true, "shm"),
            ("verbs;ofi_rxm", MO, true, "mlx5_0"),
        ];
        assert_eq!(
            names(&ranked(c, true)),
            [
                "verbs;ofi_rxm",
                "shm",
                "tcp;ofi_rxm",
                "udp;ofi_rxd",
                "sockets"
            ]
        );
    }

    #[test]
    fn shm_ranks_last_when_locales_span_hosts() {
        let c = vec![
            ("shm", MO, true, "shm"),
            ("sockets", MO, true, "eth0"),
            ("tcp;ofi_rxm", MO, false, "eth0"),
        ];
        assert_eq!(names(&ranked(c, false)), ["tcp;ofi_rxm", "sockets", "shm"]);
        assert_eq!(provider_rank("shm", false).0, 9);
    }

    #[test]
    fn the_provider_is_chosen_before_the_mode() {
        // sockets offers message-order-fence, shm only delivery-complete:
        // shm still wins (the point of ranking providers first).
        let c = vec![
            ("sockets", Mode::MessageOrderFence, true, "eth0"),
            ("shm", Mode::DeliveryComplete, true, "shm"),
        ];
        assert_eq!(names(&ranked(c, true)), ["shm", "sockets"]);
    }

    #[test]
    fn within_a_provider_the_mode_preference_then_atomics_then_loopback() {
        let c = vec![
            ("tcp;ofi_rxm", Mode::DeliveryComplete, true, "lo"),
            ("tcp;ofi_rxm", MO, false, "lo"),
            ("tcp;ofi_rxm", MO, true, "eth0"),
            ("tcp;ofi_rxm", MO, true, "lo"),
            ("tcp;ofi_rxm", Mode::MessageOrderFence, false, "eth0"),
        ];
        let r = ranked(c, true);
        let got: Vec<(Mode, bool, &str)> = r.iter().map(|(_, m, a, d)| (*m, *a, *d)).collect();
        assert_eq!(
            got,
            [
                (Mode::MessageOrderFence, false, "eth0"),
                (MO, true, "lo"),
                (MO, true, "eth0"),
                (MO, false, "lo"),
                (Mode::DeliveryComplete, true, "lo"),
            ]
        );
    }

    #[test]
    fn loopback_counts_only_on_one_host() {
        let lo = rank_key("tcp;ofi_rxm", MO, true, "127.0.0.1", false, true);
        let eth = rank_key("tcp;ofi_rxm", MO, true, "eth0", false, true);
        assert!(lo < eth);
        assert_eq!(
            rank_key("tcp;ofi_rxm", MO, true, "lo", false, false),
            rank_key("tcp;ofi_rxm", MO, true, "eth0", false, false)
        );
    }

    #[test]
    fn ipv4_before_ipv6_within_one_interface() {
        let v4 = rank_key("udp;ofi_rxd", MO, true, "eth0", false, false);
        let v6 = rank_key("udp;ofi_rxd", MO, true, "eth0", true, false);
        assert!(v4 < v6);
        // The mode still decides first.
        let v6_better_mode = rank_key(
            "udp;ofi_rxd",
            Mode::MessageOrderFence,
            true,
            "eth0",
            true,
            false,
        );
        assert!(v6_better_mode < v4);
    }

    #[test]
    fn loopback_domains_are_recognised() {
        for d in ["lo", "127.0.0.1", "::1"] {
            assert!(is_loopback(d), "{d}");
        }
        for d in ["eth0", "192.0.2.2", "fd00::2", "veth-h1"] {
            assert!(!is_loopback(d), "{d}");
        }
    }

    #[test]
    fn locality_from_host_keys_and_the_caps_it_asks_for() {
        let k = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(Locality::of_hosts(&k(&["a", "a"])), Locality::OneHost);
        assert_eq!(Locality::of_hosts(&k(&["a"])), Locality::OneHost);
        assert_eq!(Locality::of_hosts(&k(&["a", "b"])), Locality::DistinctHosts);
        assert_eq!(Locality::of_hosts(&k(&["a", "b", "a"])), Locality::Mixed);
        assert_eq!(Locality::OneHost.comm_caps(), 0);
        assert_eq!(Locality::DistinctHosts.comm_caps(), sys::FI_REMOTE_COMM);
        assert_eq!(
            Locality::Mixed.comm_caps(),
            sys::FI_REMOTE_COMM | sys::FI_LOCAL_COMM
        );
        assert!(Locality::OneHost.single_host() && !Locality::Mixed.single_host());
    }

    #[test]
    fn providers_of_one_class_tie_break_by_name_and_position() {
        // tcp before udp before net (position in class); two hardware
        // providers by name, the same on every run.
        assert!(provider_rank("tcp;ofi_rxm", true) < provider_rank("udp;ofi_rxd", true));
        assert!(provider_rank("udp", true) < provider_rank("net", true));
        let c = vec![("verbs;ofi_rxm", MO, true, "d"), ("efa", MO, true, "d")];
        assert_eq!(names(&ranked(c, true)), ["efa", "verbs;ofi_rxm"]);
    }

    #[test]
    fn a_forced_name_matches_the_core_provider_or_the_whole_stack() {
        assert!(provider_matches("tcp;ofi_rxm", "tcp"));
        assert!(provider_matches("tcp;ofi_rxm", "tcp;ofi_rxm"));
        assert!(provider_matches("shm", "shm"));
        assert!(!provider_matches("tcp;ofi_rxm", "ofi_rxm"));
        assert!(!provider_matches("tcp;ofi_rxm", "udp"));
        assert!(!provider_matches("sockets", "sock"));
    }
}
