//! The job-wide communication state of one locale, and its start-up.
//!
//! `Comm::init` runs the start-up sequence: read the environment, learn rank
//! and size from the bootstrap, choose provider and MCM mode (locale 0
//! decides), open fabric/domain/AV/CQs and endpoints, register the heap,
//! exchange endpoint names and memory keys, and start the start-up progress
//! thread (`pgas-progress`) that lets peers' RMA against this locale
//! complete on providers with manual progress until an AM layer's poller
//! takes the receive queue over.
//!
//! The entry points do the mode-independent work (validation, the local
//! shortcut, remote addressing, bounce buffers) and hand the operation to the
//! MCM selector chosen at start-up, which posts it on the caller's transmit
//! context with the flags and forcing its mode prescribes. Nothing here
//! matches on the mode per operation.
//!
//! One job per file: this one holds the state, start-up and the accessors;
//! `threads` which context a thread uses, `rma` PUT/GET and their
//! non-blocking handles, `boundary` the MCM boundaries, barrier and
//! finalize, `am_service` what the AM layer is offered, `idle` the pollers'
//! idle policy and the start-up progress thread; the atomics are in
//! `crate::atomics`.

use crate::am_seam::{AmLayer, AmPort};
use crate::amo::{AmoType, NativeAtomics};
use crate::atomics::{AmoRoutes, Settle};
use crate::contexts::ContextTable;
use crate::ctx::{LocalBuf, RemoteBuf, RmaOp, Route, SendOp, TxContext, SCRATCH_BYTES};
use crate::diag::Counter;
use crate::env::Config;
use crate::error::{Error, Result};
use crate::heap::Heap;
use crate::mapped::{HostLayout, LocalPath, Mapped};
use crate::ofi::{Av, Cq, CqEntry, Domain, Endpoint, Fabric, Mr, WaitMode};
use crate::select::{self, Locality, SelectRequest, Selection};
use crate::sync::MutexGuard;
use crate::Mode;
use bootstrap::Oob;
use mcm::{Binding, Blocking, Selector, Transport};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

mod am_service;
mod boundary;
mod idle;
mod rma;
mod threads;

use idle::spawn_startup_progress;
pub use idle::IdlePolicy;
pub use rma::NbHandle;

/// A locale number, `0..num_locales`: the policy's own (`mcm::Locale`, a
/// `usize`), so a locale indexes per-locale tables and reaches the policy
/// without a conversion. Wire formats that carry one store it as `u32`.
pub use mcm::Locale;

/// An address in some locale's registered heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GlobalAddr {
    /// The locale owning the memory.
    pub locale: Locale,
    /// Virtual address in that locale.
    pub addr: u64,
}

impl GlobalAddr {
    /// Constructor.
    pub fn new(locale: Locale, addr: u64) -> GlobalAddr {
        GlobalAddr { locale, addr }
    }
    /// The address `bytes` further on (wrapping: an address that left the
    /// heap is refused by the operation that uses it, never a panic).
    pub fn offset(self, bytes: u64) -> GlobalAddr {
        GlobalAddr {
            locale: self.locale,
            addr: self.addr.wrapping_add(bytes),
        }
    }
}

/// What a locale knows about a peer: its address and its heap registration.
#[derive(Debug, Clone, Copy)]
struct Peer {
    fi_addr: crate::ofi::FiAddr,
    heap_base: u64,
    heap_size: u64,
    key: u64,
    /// Its registered static data (`statics`; size 0: none).
    statics: crate::statics::StaticSegment,
    static_key: u64,
}

/// The provider facts the data path consults.
#[derive(Debug, Clone)]
pub struct ProviderInfo {
    /// Provider name.
    pub name: String,
    /// MCM mode in force.
    pub mode: Mode,
    /// Memory-registration mode bits.
    pub mr_mode: crate::ofi::MrMode,
    /// Largest single transfer we issue (chunk above it).
    pub max_msg_size: usize,
    /// Largest inject.
    pub inject_size: usize,
    /// Message ordering granted (transmit side; the mode's needs were
    /// checked on both sides at selection).
    pub msg_order: u64,
    /// The granted orderings, named (`RAW|WAW|SAW|SAS`), for the verbose line.
    pub order_granted: String,
    /// How waits are done.
    pub wait: WaitMode,
    /// Whether the provider was granted `FI_ATOMIC`.
    pub atomics: bool,
}

/// How the thread's `CTX_HAS_WORK` is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WorkFlag {
    /// Marked by every operation once settled, derived at boundaries (the
    /// rule).
    Derived,
    /// Not marked by `get_nb`, derived without counting GETs in flight
    /// (`nb-get-uncounted`).
    DerivedWithoutReads,
    /// Set before an operation settles, cleared by boundaries, never
    /// derived after posting (`work-flag-before-post`: the old mechanism).
    MarkedBefore,
}

thread_local! {
    /// The calling thread's copy of "its bound transmit context holds
    /// something a boundary must force" ([`TxContext::has_work`]: dangling
    /// stores, non-blocking GETs in flight, postponed AMOs). The mapped
    /// path's CPU atomics and the SC reads of `p2p` consult it to skip
    /// locking the context when nothing can be there (always, in a one-host
    /// job).
    ///
    /// Kept so that it is never stale `false`: every operation on the
    /// thread's bound context marks it `true` once its postponed AMOs are
    /// settled, right before it posts (`Comm::with_ctx_settled`,
    /// `Comm::nb`), and only a boundary clears it, by deriving it from the
    /// context after forcing (`Comm::note_ctx_state`). A task this thread
    /// runs while an operation of an outer task settles (help-while-
    /// waiting) may force the context and derive `false`; the outer
    /// operation marks it again before it posts. (Marking *before* the
    /// settle was the hole of issue 21: `work-flag-before-post` re-opens
    /// it.) Unbound threads need it for nothing (a shared context is
    /// released, its stores forced, after each operation). Stale `true`
    /// (after a GET, or another thread forced the context: a barrier's
    /// `force_visible_all`) costs one boundary with nothing to do.
    static CTX_HAS_WORK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

// The transmit-context table: `[0]` shared, `[1]` the AM poller (it answers
// no-op requests, the visibility proofs), then
// `[2..2 + handlers]` one per AM handler, then one per worker, then the
// contexts for `Comm::bind_thread` (`PGAS_THREAD_CONTEXTS`). The first
// `2 + handlers` are required (a proof waited for on any context is
// answered through them, so they must never be held by a waiting thread).
// When the provider allows fewer contexts than workers need, workers share
// the rest with every other thread, unbound, and no thread binds one.

/// Index of the AM poller's context.
const AM_POLLER_CTX: usize = 1;
/// Index of AM handler 0's context.
const FIRST_HANDLER_CTX: usize = 2;

#[derive(Debug, Clone)]
struct Layout {
    first_worker: usize,
    workers_bound: bool,
    /// Contexts for other threads that bind one ([`Comm::bind_thread`]: the
    /// main thread, a runtime's own threads), after the workers'.
    threads: std::ops::Range<usize>,
    /// Contexts shared by unbound threads (taken and released per operation).
    shared: Vec<usize>,
}

impl Layout {
    /// `threads`: contexts wanted for other threads, given only once every
    /// worker has one.
    fn plan(contexts: usize, handlers: usize, workers: usize, threads: usize) -> Result<Layout> {
        let reserved = 2 + handlers;
        if contexts < reserved {
            return Err(Error::Unsupported(format!(
                "{contexts} transmit contexts available (PGAS_MAX_TX_CONTEXTS or the provider's \
                 ep_cnt), but at least {reserved} are needed: one shared, one for the AM poller \
                 and one per AM handler (PGAS_AM_HANDLERS={handlers})"
            )));
        }
        let workers_bound = contexts >= reserved + workers;
        let shared = std::iter::once(0)
            .chain(if workers_bound {
                reserved..reserved
            } else {
                reserved..contexts
            })
            .collect();
        let first_thread = reserved + workers;
        let threads = if workers_bound {
            first_thread..first_thread + contexts.saturating_sub(first_thread).min(threads)
        } else {
            first_thread..first_thread
        };
        Ok(Layout {
            first_worker: reserved,
            workers_bound,
            threads,
            shared,
        })
    }
}

/// One locale's communication layer.
pub struct Comm {
    /// The AM layer, once installed (see `am_seam`); shared with every
    /// context, which asks it for visibility proofs.
    pub(crate) am_layer: Arc<OnceLock<Arc<dyn AmLayer>>>,
    /// The MCM implementors of the mode in force.
    pub(crate) selector: Selector<TxContext>,
    /// Where each atomic type goes, fixed at start-up (see `atomics`).
    pub(crate) routes: AmoRoutes,
    /// How `CTX_HAS_WORK` is kept (normally marked once settled, derived
    /// at boundaries; the two weakenings of issue 21 for the negative
    /// controls), decided once so that the PUT path tests one byte.
    pub(crate) work_flag: WorkFlag,
    /// Which contexts serve whom.
    layout: Layout,
    rx_serial: Option<crate::ctx::DomainLock>,
    pub(crate) me: Locale,
    n: Locale,
    pub(crate) prov: ProviderInfo,
    native: NativeAtomics,
    peers: Vec<Peer>,
    /// The intra-node mapped path (peers' heaps mapped here).
    mapped: Arc<Mapped>,
    /// Where the locales live.
    hosts: HostLayout,
    /// Operation counters (off unless started).
    pub(crate) diag: Arc<crate::diag::CommDiagnostics>,
    // Field order is drop order: contexts and endpoints before MRs before the heap.
    contexts: ContextTable<TxContext>,
    progress: Mutex<Option<JoinHandle<()>>>,
    stop: Arc<AtomicBool>,
    rx_ep: Arc<Endpoint>,
    _tx_mrs: Vec<Mr>,
    _static_mr: Option<Mr>,
    mr: Mr,
    heap: Heap,
    _av: Arc<Av>,
    _domain: Arc<Domain>,
    _fabric: Arc<Fabric>,
    oob: Box<dyn Oob>,
    cfg: Config,
    finalized: AtomicBool,
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comm")
            .field("me", &self.me)
            .field("n", &self.n)
            .field("prov", &self.prov)
            .finish_non_exhaustive()
    }
}

fn exchange_err(what: impl Into<String>) -> Error {
    Error::Exchange(what.into())
}

/// Encodes locale 0's choice for the others (or its error).
fn encode_choice(r: &Result<Selection>) -> Vec<u8> {
    match r {
        Ok(s) => format!(
            "OK\t{}\t{}\t{}\t{}",
            s.provider,
            s.mode,
            s.native_atomics as u8,
            s.info.domain_name()
        )
        .into_bytes(),
        Err(e) => format!("ERR\t{e}").into_bytes(),
    }
}

impl Comm {
    /// Starts the comm layer from the environment (launcher, env knobs).
    pub fn init() -> Result<Arc<Comm>> {
        Comm::init_config(Config::from_env()?)
    }

    /// Starts the comm layer with the launcher's bootstrap and `cfg` (read
    /// with [`Config::from_env`], then adjusted: the runtime shim's
    /// `Builder` overrides).
    pub fn init_config(cfg: Config) -> Result<Arc<Comm>> {
        let oob = bootstrap::from_env()?;
        Comm::init_with(oob, cfg)
    }

    /// Starts the comm layer with an explicit bootstrap and configuration.
    pub fn init_with(oob: Box<dyn Oob>, mut cfg: Config) -> Result<Arc<Comm>> {
        let me = oob.rank();
        // From here on, peers may come to wait for us: an exit before
        // finalize must fail the job (docs/launcher.md, failure guarantees).
        oob.guard_exit()?;
        crate::peer_timeout::init_from_env()?;
        crate::quirks::restore_default_fault_handlers();

        // Which hosts: shm only reaches locales on this one, the mapped path
        // only those, and co-located locales share the cores.
        let key = crate::mapped::host_key(cfg.test_hostnames.as_deref(), me)?;
        let keys = oob
            .allgather(key.as_bytes())?
            .into_iter()
            .map(|k| String::from_utf8_lossy(&k).into_owned())
            .collect();
        let hosts = HostLayout::new(keys, me);
        // What every locale must have chosen alike (crate::agree).
        crate::agree::check(&oob.allgather(&crate::agree::encode(&[
            ("PGAS_LOCAL_PATH", cfg.local_path.to_string()),
            ("PGAS_AMO_VIA_AM", u8::from(cfg.amo_via_am).to_string()),
            ("PGAS_NATIVE_AMO", u8::from(cfg.native_amo).to_string()),
            ("PGAS_AM_HANDLERS", cfg.am_handlers.to_string()),
        ]))?)?;
        let locality = Locality::of_hosts(&hosts.keys);
        if !cfg.num_workers_set {
            let cores = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            cfg.num_workers = hosts.cores_owned(cores);
        }

        // Locale 0 chooses; the others resolve exactly its choice.
        let req = SelectRequest {
            provider: cfg.provider.clone(),
            mode: cfg.mode,
            locality,
            want_atomics: cfg.native_amo,
        };
        let mine = if me == 0 {
            Some(select::select(&req))
        } else {
            None
        };
        let payload = mine.as_ref().map(encode_choice).unwrap_or_default();
        let choice = oob.broadcast(0, &payload)?;
        let sel = match mine {
            Some(r) => r?,
            None => {
                let text = String::from_utf8_lossy(&choice).into_owned();
                let f: Vec<&str> = text.split('\t').collect();
                match f.as_slice() {
                    ["OK", prov, mode, atomics, domain] => {
                        let mode: Mode = mode
                            .parse()
                            .map_err(|_| exchange_err(format!("bad mode from locale 0: {mode}")))?;
                        select::resolve(prov, mode, *atomics == "1", domain, locality)?
                    }
                    ["ERR", msg] => {
                        return Err(Error::NoProvider(format!(
                            "locale 0 could not start: {msg}"
                        )))
                    }
                    _ => {
                        return Err(exchange_err(format!(
                            "garbled choice from locale 0: {text:?}"
                        )))
                    }
                }
            }
        };
        Comm::open(oob, cfg, sel, hosts)
    }

    fn open(
        oob: Box<dyn Oob>,
        cfg: Config,
        sel: Selection,
        hosts: HostLayout,
    ) -> Result<Arc<Comm>> {
        let me = oob.rank();
        let n = oob.size();
        let info = &sel.info;
        let wait = cfg
            .cq_wait
            .unwrap_or(if sel.provider.starts_with("sockets") {
                WaitMode::Block
            } else {
                WaitMode::Spin
            });
        let max_msg_size = cfg
            .max_msg_size
            .unwrap_or(usize::MAX)
            .min(info.max_msg_size())
            .max(1);
        let prov = ProviderInfo {
            name: sel.provider.clone(),
            mode: sel.mode,
            mr_mode: info.mr_mode(),
            max_msg_size,
            inject_size: info.inject_size(),
            msg_order: info.tx_msg_order(),
            order_granted: select::describe_order(info),
            wait,
            atomics: sel.native_atomics,
        };

        let serial = crate::quirks::needs_domain_lock(&prov.name)
            .then(|| std::sync::Arc::new(parking_lot::Mutex::new(())));
        let swept = crate::quirks::sweep_stale_shm_regions(&prov.name);
        if swept > 0 {
            tracing::debug!(swept, "removed stale shm regions left under our pid");
        }
        let fabric = Fabric::open(info)?;
        let domain = Domain::open(&fabric, info)?;
        // Room for every peer's transmit endpoints too: connectionless
        // providers (udp;ofi_rxd) insert the source address of every peer
        // endpoint that talks to us (the original sizes its AV the same way).
        // The transmit-context table: [0] shared by every unbound thread,
        // [1..=workers] one per worker thread, then one per AM handler.
        let wanted = 2 + cfg.am_handlers + cfg.num_workers + cfg.thread_contexts;
        let av_limit = crate::quirks::av_peer_limit(&prov.name, info.ep_cnt());
        let budget = info
            .ep_cnt()
            .saturating_sub(1)
            .max(1)
            .min(cfg.max_tx_contexts.unwrap_or(usize::MAX))
            .min(av_limit.map_or(usize::MAX, |l| (l / n).saturating_sub(1)));
        let num_ctx = budget.min(wanted);
        let layout = Layout::plan(
            num_ctx,
            cfg.am_handlers,
            cfg.num_workers,
            cfg.thread_contexts,
        )
        .map_err(|e| crate::quirks::explain_av_limit(e, &prov.name, av_limit, n, &cfg))?;
        if !layout.workers_bound && num_ctx < wanted && av_limit.is_some() {
            tracing::info!(
                "PGAS_NUM_WORKERS={}: {} reaches at most {} endpoints per locale from {n} \
                 locales; workers share {} transmit contexts",
                cfg.num_workers,
                prov.name,
                av_limit.unwrap_or(0),
                num_ctx
            );
        }
        let av_count = match av_limit {
            Some(_) => n * (num_ctx + 1),
            None => n * (num_ctx + 1) * 2,
        };
        let av = Av::open(&domain, av_count)?;
        let rx_cq = Cq::open(&domain, 1024, wait)?;
        let tx_cq_size = info.tx_size().clamp(64, 4096) + 64;
        let single_ep = crate::quirks::single_endpoint(&prov.name, cfg.single_endpoint);
        let rx_ep = if single_ep {
            let tx_cq = Cq::open(&domain, tx_cq_size, wait)?;
            Arc::new(Endpoint::open_split(
                &domain,
                info,
                &av,
                &tx_cq,
                Some(&rx_cq),
            )?)
        } else {
            Arc::new(Endpoint::open(&domain, info, &av, &rx_cq)?)
        };

        let mut eps = Vec::with_capacity(num_ctx);
        for _ in 0..num_ctx {
            if single_ep {
                eps.push(rx_ep.clone());
            } else {
                let cq = Cq::open(&domain, tx_cq_size, wait)?;
                eps.push(Arc::new(Endpoint::open(&domain, info, &av, &cq)?));
            }
        }

        // Register the heap: shared (memfd) when co-located peers may map it.
        let heap = if cfg.local_path == LocalPath::Mapped && hosts.local_count > 1 {
            match Heap::new_shared(cfg.heap_size) {
                Ok(h) => h,
                Err(e) => {
                    tracing::warn!("{e}; this locale's heap is reached through the fabric");
                    Heap::new(cfg.heap_size)?
                }
            }
        } else {
            Heap::new(cfg.heap_size)?
        };
        let access = crate::heap::HEAP_ACCESS;
        // SAFETY: the heap mapping outlives the MR (drop order in Comm).
        let mr = unsafe { Mr::register(&domain, heap.base(), heap.size(), access, 1)? };
        let endpoint_mr = prov.mr_mode.endpoint();
        let mut tx_mrs = Vec::new();
        if endpoint_mr {
            mr.bind_enable(&rx_ep)?;
            for (i, ep) in eps.iter().enumerate() {
                // SAFETY: as above.
                let m = unsafe {
                    Mr::register(&domain, heap.base(), heap.size(), access, 2 + i as u64)?
                };
                m.bind_enable(ep)?;
                tx_mrs.push(m);
            }
        }
        // The executable's static data, remotely addressable too.
        let statics = crate::statics::executable_data();
        let static_mr = match statics {
            Some(seg) => {
                // SAFETY: the executable's writable data segment is mapped
                // for the life of the process, so it outlives the MR.
                let m = unsafe {
                    Mr::register(
                        &domain,
                        seg.base as *mut u8,
                        seg.size as usize,
                        access,
                        1 << 20,
                    )
                };
                match m {
                    Ok(m) => {
                        if endpoint_mr {
                            m.bind_enable(&rx_ep)?;
                        }
                        Some(m)
                    }
                    Err(e) => {
                        tracing::warn!("static data not registered (only the heap is remotely addressable): {e}");
                        None
                    }
                }
            }
            None => None,
        };
        let own_statics = match &static_mr {
            Some(_) => statics.unwrap_or_default(),
            None => crate::statics::StaticSegment::default(),
        };
        let needs_desc = prov.mr_mode.local();
        let order_dummy = heap.alloc(64, 64)?;
        let mapped_block = heap.alloc(crate::mapped::BLOCK_BYTES, 64)?;

        // Exchange endpoint names and heap registrations.
        let names = oob.allgather(&rx_ep.name()?)?;
        let fi_addrs = av.insert(&names)?;
        let mut reg = Vec::with_capacity(48);
        reg.extend_from_slice(&heap.base_addr().to_le_bytes());
        reg.extend_from_slice(&(heap.size() as u64).to_le_bytes());
        reg.extend_from_slice(&mr.key().to_le_bytes());
        reg.extend_from_slice(&own_statics.base.to_le_bytes());
        reg.extend_from_slice(&own_statics.size.to_le_bytes());
        reg.extend_from_slice(&static_mr.as_ref().map_or(0, |m| m.key()).to_le_bytes());
        let regs = oob.allgather(&reg)?;
        let mut peers = Vec::with_capacity(n);
        for (i, r) in regs.iter().enumerate() {
            if r.len() != 48 {
                return Err(exchange_err(format!(
                    "locale {i} sent {} registration bytes",
                    r.len()
                )));
            }
            let w = |k: usize| u64::from_le_bytes(r[8 * k..8 * k + 8].try_into().expect("8 bytes"));
            peers.push(Peer {
                fi_addr: fi_addrs[i],
                heap_base: w(0),
                heap_size: w(1),
                key: w(2),
                statics: crate::statics::StaticSegment {
                    base: w(3),
                    size: w(4),
                },
                static_key: w(5),
            });
        }

        // Co-located peers' heaps, mapped.
        let mapped = Arc::new(Mapped::establish(
            &*oob,
            &hosts,
            cfg.local_path,
            crate::mapped::OwnHeap {
                base: heap.base_addr(),
                size: heap.size() as u64,
                fd: heap.shared_fd(),
                block_off: mapped_block - heap.base_addr(),
            },
            &peers
                .iter()
                .map(|p| (p.heap_base, p.heap_size))
                .collect::<Vec<_>>(),
        )?);

        // Every context reaches every locale's order dummy (same heap offset).
        let dummy_off = order_dummy - heap.base_addr();
        let virt = prov.mr_mode.virt_addr();
        let routes: Arc<[Route]> = peers
            .iter()
            .map(|p| Route {
                fi_addr: p.fi_addr,
                order_dummy: RemoteBuf {
                    fi_addr: p.fi_addr,
                    addr: if virt {
                        p.heap_base + dummy_off
                    } else {
                        dummy_off
                    },
                    key: p.key,
                },
            })
            .collect();
        let am_layer: Arc<OnceLock<Arc<dyn AmLayer>>> = Arc::new(OnceLock::new());
        let diag = Arc::new(crate::diag::CommDiagnostics::new());
        let mut contexts = Vec::with_capacity(num_ctx);
        for (i, ep) in eps.into_iter().enumerate() {
            // Private, from the top of the heap: the number of contexts
            // differs between locales (workers per locale), and symmetric
            // allocations made after start-up must not shift with it.
            let scratch = heap.alloc_private(SCRATCH_BYTES, 64)? as *mut u8;
            let desc = match (needs_desc, endpoint_mr) {
                (false, _) => std::ptr::null_mut(),
                (true, false) => mr.desc(),
                (true, true) => tx_mrs[i].desc(),
            };
            contexts.push(TxContext::new(
                i,
                ep,
                scratch,
                desc,
                serial.clone(),
                routes.clone(),
                mapped.clone(),
                am_layer.clone(),
                prov.atomics,
                prov.inject_size,
                diag.clone(),
            ));
        }

        // Which atomics are native: none once any locale maps another (CPU
        // atomics on mapped words do not mix with NIC atomics; see mapped.rs).
        let native = if prov.atomics && !mapped.in_use() {
            let ctx = &contexts[0];
            NativeAtomics::probe(|ty, op, form| ctx.atomic_valid(ty, op, form))
        } else {
            NativeAtomics::none()
        };
        // A type is native only where every locale's provider does it so.
        let agreed =
            crate::agree::intersect_masks(&oob.allgather(&native.type_mask().to_le_bytes())?)?;
        let native = native.restrict_types(agreed);

        let serial_for_rx = serial.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let idle = IdlePolicy::new(&cfg, &prov, &mapped);
        let progress = spawn_startup_progress(rx_ep.clone(), stop.clone(), serial, idle)?;

        if cfg.weaken.is_some() {
            tracing::warn!(
                weakening = ?cfg.weaken,
                "PGAS_MCM_WEAKEN is set: the memory model is deliberately broken (test-only)"
            );
        }
        let shared_ctx = layout.shared.clone();
        let comm = Comm {
            routes: AmoRoutes::plan(&native, cfg.amo_via_am),
            work_flag: match cfg.weaken {
                Some(mcm::Weakening::WorkFlagBeforePost) => WorkFlag::MarkedBefore,
                Some(mcm::Weakening::NbGetUncounted) => WorkFlag::DerivedWithoutReads,
                _ => WorkFlag::Derived,
            },
            am_layer,
            selector: Selector::weakened(prov.mode, cfg.weaken),
            layout,
            rx_serial: serial_for_rx,
            me,
            n,
            prov,
            native,
            peers,
            mapped,
            hosts,
            diag,
            contexts: ContextTable::new(contexts, shared_ctx),
            progress: Mutex::new(Some(progress)),
            stop,
            rx_ep,
            _tx_mrs: tx_mrs,
            _static_mr: static_mr,
            mr,
            heap,
            _av: av,
            _domain: domain,
            _fabric: fabric,
            oob,
            cfg,
            finalized: AtomicBool::new(false),
        };
        comm.oob.barrier()?;
        if comm.cfg.verbose > 0 && me == 0 {
            eprintln!("{}", comm.describe());
        }
        tracing::debug!(locale = me, "{}", comm.describe());
        Ok(Arc::new(comm))
    }

    /// The one-line description printed with `PGAS_VERBOSE=1`.
    pub fn describe(&self) -> String {
        format!(
            "pgas-comm: {} MCM mode, {} provider (ordering {}), {} locales, {} endpoints ({} tx \
             contexts, {} for other threads), {} heap, {} atomics, {} progress, {} local path{}",
            self.prov.mode,
            self.prov.name,
            self.prov.order_granted,
            self.n,
            if self.layout.workers_bound {
                "bound"
            } else {
                "unbound"
            },
            self.contexts.len(),
            self.layout.threads.len(),
            human_size(self.heap.size()),
            match (self.mapped.in_use(), self.routes.native_types()) {
                (true, _) => "CPU (mapped path)".to_string(),
                (false, 0) if self.native.any() => "CPU (PGAS_AMO_VIA_AM)".to_string(),
                (false, 0) => "no native".to_string(),
                (false, k) => format!("native ({k}/{} types)", AmoType::ALL.len()),
            },
            match self.prov.wait {
                WaitMode::Spin => "polling",
                WaitMode::Block => "blocking-wait",
            },
            match (self.mapped.path(), self.mapped.mapped_peers()) {
                (LocalPath::Fabric, _) => "fabric".to_string(),
                (LocalPath::Mapped, 0) if self.hosts.local_count > 1 => {
                    "fabric (mapping failed)".to_string()
                }
                (LocalPath::Mapped, 0) => "fabric (no co-located locale)".to_string(),
                (LocalPath::Mapped, k) => format!(
                    "mapped ({k} of {} co-located peers)",
                    self.hosts.local_count - 1
                ),
            },
            match self.cfg.weaken {
                Some(w) => format!(", MCM WEAKENED ({w:?}, test-only)"),
                None => String::new(),
            }
        )
    }

    /// This locale.
    pub fn here(&self) -> Locale {
        self.me
    }

    /// Number of locales.
    pub fn num_locales(&self) -> Locale {
        self.n
    }

    /// Provider facts.
    pub fn provider(&self) -> &ProviderInfo {
        &self.prov
    }

    /// MCM mode in force.
    pub fn mode(&self) -> Mode {
        self.prov.mode
    }

    /// The configuration read at start-up.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The out-of-band service (rank/size, collectives).
    pub fn oob(&self) -> &dyn Oob {
        &*self.oob
    }

    /// Collective: refuses the job, on every locale alike, if some locale's
    /// value of one of `values` differs from the others' (for the layers
    /// above: their knobs that must agree job-wide; `crate::agree`).
    pub fn agree(&self, values: crate::agree::KnobValues<'_>) -> Result<()> {
        crate::agree::check(&self.oob.allgather(&crate::agree::encode(values))?)
    }

    /// This locale's registered heap.
    pub fn heap(&self) -> &Heap {
        &self.heap
    }

    /// Allocates `size` bytes of remotely accessible memory on this locale.
    pub fn alloc(&self, size: usize, align: usize) -> Result<GlobalAddr> {
        Ok(GlobalAddr::new(self.me, self.heap.alloc(size, align)?))
    }

    /// Allocates `size` bytes for the program (see [`Heap::alloc_user`]).
    pub fn alloc_user(&self, size: usize, align: usize) -> Result<GlobalAddr> {
        Ok(GlobalAddr::new(self.me, self.heap.alloc_user(size, align)?))
    }

    /// Frees memory from [`Comm::alloc`]; an address that is not a live
    /// allocation of this locale is [`Error::BadFree`] saying what it is.
    pub fn free(&self, addr: GlobalAddr) -> Result<()> {
        let bad = |reason: String| Error::BadFree {
            locale: addr.locale,
            addr: addr.addr,
            reason,
        };
        if addr.locale != self.me {
            self.check_locale(addr.locale)?;
            return Err(bad(format!(
                "only locale {}, which owns it, can free it (this is locale {})",
                addr.locale, self.me
            )));
        }
        self.heap.free(addr.addr).map_err(bad)
    }

    /// The address on `locale` at the same heap offset as `local` has here:
    /// allocations made in the same order on every locale line up.
    pub fn symmetric(&self, local: GlobalAddr, locale: Locale) -> Result<GlobalAddr> {
        self.check_locale(locale)?;
        let off = local
            .addr
            .checked_sub(self.heap.base_addr())
            .filter(|o| *o < self.heap.size() as u64)
            .ok_or(Error::AddressOutOfHeap {
                locale: self.me,
                addr: local.addr,
                len: 0,
                base: self.heap.base_addr(),
                end: self.heap.base_addr() + self.heap.size() as u64,
            })?;
        Ok(GlobalAddr::new(locale, self.peers[locale].heap_base + off))
    }

    /// The address on `locale` of the static at `local` here (the
    /// executable's registered data, `statics`: same offset in every
    /// locale's segment, whatever ASLR did). An address outside this
    /// locale's registered static data is an error naming it.
    pub fn static_addr(&self, local: u64, locale: Locale) -> Result<GlobalAddr> {
        self.check_locale(locale)?;
        let mine = self.peers[self.me].statics;
        if !mine.contains(local, 1) {
            return Err(Error::Unsupported(format!(
                "{local:#x} is not in this program's registered static data ({})",
                if mine.size == 0 {
                    "none is registered here".to_string()
                } else {
                    format!("{:#x}..{:#x}", mine.base, mine.base + mine.size)
                }
            )));
        }
        let theirs = self.peers[locale].statics;
        if theirs.size != mine.size {
            return Err(Error::Unsupported(format!(
                "locale {locale} registered {} bytes of static data, this one {}: not the same \
                 program",
                theirs.size, mine.size
            )));
        }
        Ok(GlobalAddr::new(locale, theirs.base + (local - mine.base)))
    }

    /// Whether `len` bytes at `at` are registered static data of its locale
    /// (not an allocation of its heap).
    pub fn is_static(&self, at: GlobalAddr, len: usize) -> bool {
        at.locale < self.peers.len() && self.peers[at.locale].statics.contains(at.addr, len)
    }

    fn check_locale(&self, locale: Locale) -> Result<()> {
        if locale >= self.n {
            Err(Error::InvalidLocale {
                locale,
                num_locales: self.n,
            })
        } else {
            Ok(())
        }
    }

    /// Checks that `len` bytes at `at` lie in that locale's registered heap,
    /// as every PUT/GET does: for callers that issue the operation later.
    pub fn check_range(&self, at: GlobalAddr, len: usize) -> Result<()> {
        self.remote(at, len).map(|_| ())
    }

    /// Validates a remote range and turns it into provider addressing.
    pub(crate) fn remote(&self, at: GlobalAddr, len: usize) -> Result<RemoteBuf> {
        self.check_locale(at.locale)?;
        let p = &self.peers[at.locale];
        let end = p.heap_base + p.heap_size;
        let inside =
            at.addr >= p.heap_base && at.addr.checked_add(len as u64).is_some_and(|e| e <= end);
        if !inside && p.statics.contains(at.addr, len) {
            let addr = if self.prov.mr_mode.virt_addr() {
                at.addr
            } else {
                at.addr - p.statics.base
            };
            return Ok(RemoteBuf {
                fi_addr: p.fi_addr,
                addr,
                key: p.static_key,
            });
        }
        if !inside {
            return Err(Error::AddressOutOfHeap {
                locale: at.locale,
                addr: at.addr,
                len,
                base: p.heap_base,
                end,
            });
        }
        let addr = if self.prov.mr_mode.virt_addr() {
            at.addr
        } else {
            at.addr - p.heap_base
        };
        Ok(RemoteBuf {
            fi_addr: p.fi_addr,
            addr,
            key: p.key,
        })
    }

    fn local_desc(&self, ctx: &TxContext, ptr: *const u8, len: usize) -> *mut std::ffi::c_void {
        if self.heap.contains(ptr as u64, len) {
            ctx.heap_desc()
        } else {
            std::ptr::null_mut()
        }
    }

    fn needs_bounce(&self, ptr: *const u8, len: usize) -> bool {
        self.prov.mr_mode.local() && !self.heap.contains(ptr as u64, len)
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        self.stop_startup_progress();
    }
}

thread_local! {
    /// (owning Comm's address, context index) of the calling thread's bound context.
    static BOUND_CTX: std::cell::Cell<Option<(usize, usize)>> = const { std::cell::Cell::new(None) };
    /// Which shared context an unbound thread tries first.
    static SHARED_HINT: std::cell::Cell<usize> = std::cell::Cell::new(thread_hint());
}

fn thread_hint() -> usize {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::thread::current().id().hash(&mut h);
    h.finish() as usize
}

/// Names the operation and the peer in a libfabric failure (the completion
/// error itself, "Operation canceled", says neither); other errors pass.
pub(crate) fn peer_err(
    op: &'static str,
    len: usize,
    locale: Locale,
) -> impl FnOnce(Error) -> Error {
    move |e| match e {
        Error::Ofi(source) => Error::Peer {
            op: if len > 0 {
                format!("{op} of {len} bytes")
            } else {
                op.to_string()
            },
            locale,
            source,
        },
        e => e,
    }
}

fn human_size(b: usize) -> String {
    if b >= 1 << 30 && b % (1 << 30) == 0 {
        format!("{}G", b >> 30)
    } else if b >= 1 << 20 {
        format!("{}M", b >> 20)
    } else {
        format!("{}K", b >> 10)
    }
}

#[cfg(test)]
mod tests {
    use super::Layout;

    #[test]
    fn layout_gives_thread_contexts_only_after_every_worker() {
        // [0] shared, [1] AM poller, [2] handler, [3..5] workers, [5..7] threads.
        let l = Layout::plan(7, 1, 2, 2).unwrap();
        assert!(l.workers_bound);
        assert_eq!(l.first_worker, 3);
        assert_eq!(l.threads, 5..7);
        assert_eq!(l.shared, vec![0]);
        // One context short: one thread context.
        let l = Layout::plan(6, 1, 2, 2).unwrap();
        assert_eq!(l.threads, 5..6);
        // Workers not all bound: no thread contexts, workers share the rest.
        let l = Layout::plan(4, 1, 2, 2).unwrap();
        assert!(!l.workers_bound);
        assert!(l.threads.is_empty());
        assert_eq!(l.shared, vec![0, 3]);
        // None asked for.
        assert!(Layout::plan(9, 1, 2, 0).unwrap().threads.is_empty());
        // Below the reserved contexts: an error naming the numbers.
        let e = Layout::plan(2, 1, 2, 2).unwrap_err().to_string();
        assert!(e.contains("at least 3"), "{e}");
    }
}
