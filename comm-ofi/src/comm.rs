//! The job-wide communication state of one locale, and the generic
//! PUT / GET / AMO entry points.
//!
//! `Comm::init` runs the start-up sequence: read the environment, learn rank
//! and size from the bootstrap, choose provider and MCM mode (locale 0
//! decides), open fabric/domain/AV/CQs and endpoints, register the heap,
//! exchange endpoint names and memory keys, and start the progress thread
//! that lets peers' RMA against this locale complete on providers with
//! manual progress.
//!
//! The entry points do the mode-independent work (validation, the local
//! shortcut, remote addressing, bounce buffers) and hand the operation to the
//! MCM selector chosen at start-up, which posts it on the caller's transmit
//! context with the flags and forcing its mode prescribes. Nothing here
//! matches on the mode per operation.

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
use crate::select::{self, SelectRequest, Selection};
use crate::sync::MutexGuard;
use crate::Mode;
use bootstrap::Oob;
use libfabric_sys as sys;
use mcm::{Binding, Blocking, Selector, Transport};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

/// A locale number.
pub type Locale = u32;

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
    fi_addr: sys::fi_addr_t,
    heap_base: u64,
    heap_size: u64,
    key: u64,
}

/// The provider facts the data path consults.
#[derive(Debug, Clone)]
pub struct ProviderInfo {
    /// Provider name.
    pub name: String,
    /// MCM mode in force.
    pub mode: Mode,
    /// Memory-registration mode bits.
    pub mr_mode: u64,
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

thread_local! {
    /// Whether the calling thread may have work on its bound context that
    /// an operation on a *mapped* word must wait for first: fabric stores
    /// (PUTs, native AMOs to locales reached through the provider) not yet
    /// forced visible, or AMOs postponed through the AM layer. A cache that
    /// lets the mapped path skip locking the context when neither can be
    /// there (always, in a one-host job); set before such work is issued,
    /// cleared only by the thread after forcing and settling its context.
    /// Stale `true` costs one forcing; it is never stale `false`.
    static FABRIC_DIRTY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the calling thread as having fabric work on its context (see
/// `FABRIC_DIRTY`).
#[inline]
pub(crate) fn note_fabric_work() {
    FABRIC_DIRTY.with(|f| f.set(true));
}

// The transmit-context table: `[0]` shared, `[1]` the AM layer's progress
// thread (it answers no-op requests, the visibility proofs), then
// `[2..2 + handlers]` one per AM handler, then one per worker, then the
// contexts for `Comm::bind_thread` (`PGAS_THREAD_CONTEXTS`). The first
// `2 + handlers` are required (a proof waited for on any context is
// answered through them, so they must never be held by a waiting thread).
// When the provider allows fewer contexts than workers need, workers share
// the rest with every other thread, unbound, and no thread binds one.

/// Index of the AM progress thread's context.
const PROGRESS_CTX: usize = 1;
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
                 ep_cnt), but at least {reserved} are needed: one shared, one for AM progress \
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
    /// Which contexts serve whom.
    layout: Layout,
    /// Whether every worker and AM handler has a context of its own.
    bound: bool,
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
        let me = oob.rank() as Locale;
        // From here on, peers may come to wait for us: an exit before
        // finalize must fail the job (docs/launcher.md, failure guarantees).
        oob.guard_exit()?;
        crate::quirks::restore_default_fault_handlers();

        // Which hosts: shm only reaches locales on this one, the mapped path
        // only those, and co-located locales share the cores.
        let key = crate::mapped::host_key(cfg.test_hostnames.as_deref(), me as usize)?;
        let keys = oob
            .allgather(key.as_bytes())?
            .into_iter()
            .map(|k| String::from_utf8_lossy(&k).into_owned())
            .collect();
        let hosts = HostLayout::new(keys, me as usize);
        let single_host = hosts.single_host();
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
            single_host,
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
                        select::resolve(prov, mode, *atomics == "1", domain)?
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
        let me = oob.rank() as Locale;
        let n = oob.size() as Locale;
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
            .min(av_limit.map_or(usize::MAX, |l| (l / n as usize).saturating_sub(1)));
        let num_ctx = budget.min(wanted);
        let layout = Layout::plan(
            num_ctx,
            cfg.am_handlers,
            cfg.num_workers,
            cfg.thread_contexts,
        )
        .map_err(|e| crate::quirks::explain_av_limit(e, &prov.name, av_limit, n as usize, &cfg))?;
        let bound = layout.workers_bound;
        if !bound && num_ctx < wanted && av_limit.is_some() {
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
            Some(_) => n as usize * (num_ctx + 1),
            None => n as usize * (num_ctx + 1) * 2,
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
        let endpoint_mr = prov.mr_mode & sys::FI_MR_ENDPOINT != 0;
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
        let needs_desc = prov.mr_mode & sys::FI_MR_LOCAL != 0;
        let order_dummy = heap.alloc(64, 64)?;
        let mapped_block = heap.alloc(crate::mapped::BLOCK_BYTES, 64)?;

        // Exchange endpoint names and heap registrations.
        let names = oob.allgather(&rx_ep.name()?)?;
        let fi_addrs = av.insert(&names)?;
        let mut reg = Vec::with_capacity(24);
        reg.extend_from_slice(&heap.base_addr().to_le_bytes());
        reg.extend_from_slice(&(heap.size() as u64).to_le_bytes());
        reg.extend_from_slice(&mr.key().to_le_bytes());
        let regs = oob.allgather(&reg)?;
        let mut peers = Vec::with_capacity(n as usize);
        for (i, r) in regs.iter().enumerate() {
            if r.len() != 24 {
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
        let virt = prov.mr_mode & sys::FI_MR_VIRT_ADDR != 0;
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
            let scratch = heap.alloc(SCRATCH_BYTES, 64)? as *mut u8;
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
            NativeAtomics::probe(|ty, op, kind| ctx.atomic_valid(ty.datatype(), op.fi_op(), kind))
        } else {
            NativeAtomics::none()
        };

        let serial_for_rx = serial.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let idle = IdlePolicy::new(&cfg, &prov, &mapped);
        let progress = spawn_progress(rx_ep.clone(), stop.clone(), serial, idle)?;

        if cfg.weaken.is_some() {
            tracing::warn!(
                weakening = ?cfg.weaken,
                "PGAS_MCM_WEAKEN is set: the memory model is deliberately broken (test-only)"
            );
        }
        let shared_ctx = layout.shared.clone();
        let comm = Comm {
            routes: AmoRoutes::plan(&native, cfg.amo_via_am),
            am_layer,
            selector: Selector::weakened(prov.mode, cfg.weaken),
            layout,
            bound,
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
        Ok(GlobalAddr::new(
            locale,
            self.peers[locale as usize].heap_base + off,
        ))
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
        let p = &self.peers[at.locale as usize];
        let end = p.heap_base + p.heap_size;
        let inside =
            at.addr >= p.heap_base && at.addr.checked_add(len as u64).is_some_and(|e| e <= end);
        if !inside {
            return Err(Error::AddressOutOfHeap {
                locale: at.locale,
                addr: at.addr,
                len,
                base: p.heap_base,
                end,
            });
        }
        let addr = if self.prov.mr_mode & sys::FI_MR_VIRT_ADDR != 0 {
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
        self.prov.mr_mode & sys::FI_MR_LOCAL != 0 && !self.heap.contains(ptr as u64, len)
    }

    /// The calling thread's transmit context: its own when it is bound,
    /// otherwise one of the shared ones (locked; a free one if any).
    pub(crate) fn ctx(&self) -> MutexGuard<'_, TxContext> {
        match self.bound_index() {
            Some(i) => self.contexts.lock(i),
            None => self.contexts.shared(SHARED_HINT.with(|h| h.get())),
        }
    }

    /// The calling thread's own context, if it claimed one.
    fn bound_index(&self) -> Option<usize> {
        let me = self as *const Comm as usize;
        BOUND_CTX.with(|b| match b.get() {
            Some((owner, i)) if owner == me => Some(i),
            _ => None,
        })
    }

    /// Runs `f` on the caller's context; an unbound context is released
    /// (its dangling stores forced visible) before another thread may take it.
    fn with_ctx<R>(&self, f: impl FnOnce(&mut TxContext) -> Result<R>) -> Result<R> {
        self.with_ctx_settled(Settle::Nothing, f)
    }

    /// [`Comm::with_ctx`], after the caller's postponed AMOs that `settle`
    /// names have been awaited (with the lock released meanwhile: awaiting
    /// may run other tasks on this thread). One emptiness test when nothing
    /// is postponed.
    pub(crate) fn with_ctx_settled<R>(
        &self,
        settle: Settle,
        f: impl FnOnce(&mut TxContext) -> Result<R>,
    ) -> Result<R> {
        let Some(i) = self.bound_index() else {
            // A shared context: held for this operation only, released
            // (the holder's stores forced visible) before it changes hands.
            if settle != Settle::Nothing {
                self.settle_postponed(settle)?;
            }
            return self
                .contexts
                .with_shared(SHARED_HINT.with(|h| h.get()), f, |ctx| {
                    self.selector.release(ctx)
                });
        };
        let mut ctx = self.contexts.lock(i);
        if settle.applies(&ctx.postponed) {
            let list = std::mem::take(&mut ctx.postponed);
            drop(ctx);
            self.await_postponed(list)?;
            ctx = self.contexts.lock(i);
        }
        f(&mut ctx)
    }

    /// Drives progress on the calling thread's transmit context without
    /// waiting (reaps completions). A thread that waits for something a peer
    /// will do in answer to its own injected operations must call this in
    /// its wait loop: on providers with manual progress (tcp;ofi_rxm,
    /// udp;ofi_rxd) an injected PUT may sit in the endpoint until its owner
    /// reads the CQ.
    pub fn progress(&self) -> Result<()> {
        match self.bound_index() {
            Some(i) => {
                self.contexts.lock(i).drive()?;
            }
            None => {
                for &i in self.contexts.shared_indices() {
                    if let Some(mut c) = self.contexts.try_lock(i) {
                        c.drive()?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Binds the calling thread to worker context `worker` for the rest of
    /// the run (the runtime shim calls this once in each worker thread).
    /// Fails when the worker number is outside the table or already taken.
    pub fn bind_worker(&self, worker: usize) -> Result<()> {
        let workers = self.cfg.num_workers;
        if worker >= workers {
            return Err(Error::InvalidSize {
                what: "worker number",
                size: worker,
                reason: format!("PGAS_NUM_WORKERS is {workers}"),
            });
        }
        if !self.layout.workers_bound {
            SHARED_HINT.with(|h| h.set(worker));
            return Ok(());
        }
        self.bind_index(self.layout.first_worker + worker)
    }

    /// Binds the calling thread to AM-handler context `handler`.
    pub(crate) fn bind_am_handler(&self, handler: usize) -> Result<()> {
        if handler >= self.cfg.am_handlers {
            return Err(Error::InvalidSize {
                what: "AM handler number",
                size: handler,
                reason: format!("PGAS_AM_HANDLERS is {}", self.cfg.am_handlers),
            });
        }
        self.bind_index(FIRST_HANDLER_CTX + handler)
    }

    /// Binds the calling thread (the AM layer's progress thread) to the
    /// progress context. Whatever it sends must never wait on a proof.
    ///
    /// Its sends fail with [`Error::WouldBlock`] instead of waiting for room
    /// in a full transmit queue: a peer's queue drains only while its own
    /// progress thread receives, so two progress threads waiting on each
    /// other's queues would hang.
    pub(crate) fn bind_progress_thread(&self) -> Result<()> {
        self.bind_index(PROGRESS_CTX)?;
        self.contexts.lock(PROGRESS_CTX).set_fail_fast();
        Ok(())
    }

    fn bind_index(&self, idx: usize) -> Result<()> {
        if self.contexts.claim(idx).is_err() {
            return Err(Error::Unsupported(format!(
                "transmit context {idx} is already bound to another thread"
            )));
        }
        self.contexts.lock(idx).bind();
        let me = self as *const Comm as usize;
        BOUND_CTX.with(|b| b.set(Some((me, idx))));
        Ok(())
    }

    /// Binds the calling thread to a transmit context of its own for as long
    /// as it runs (or until [`Comm::unbind_thread`]): the main thread, or a
    /// runtime's own threads, then pay what a worker pays per operation
    /// instead of taking a shared context and forcing its stores visible
    /// after each one. `Ok(false)`: no context left
    /// (`PGAS_THREAD_CONTEXTS`, or the provider's endpoints): the thread
    /// stays unbound, which is correct, only slower. Already bound: `Ok(true)`.
    pub fn bind_thread(&self) -> Result<bool> {
        if self.thread_is_bound() {
            return Ok(true);
        }
        for idx in self.layout.threads.clone() {
            if self.contexts.claim(idx).is_ok() {
                self.contexts.lock(idx).bind();
                let me = self as *const Comm as usize;
                BOUND_CTX.with(|b| b.set(Some((me, idx))));
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Gives back the context of [`Comm::bind_thread`]: the thread's stores
    /// are forced visible and its operations completed first (a boundary,
    /// like a task end), then another thread may bind it. Does nothing on an
    /// unbound thread; workers and AM threads keep theirs for life (an error).
    pub fn unbind_thread(&self) -> Result<()> {
        let me = self as *const Comm as usize;
        let idx = match BOUND_CTX.with(|b| b.get()) {
            Some((owner, i)) if owner == me => i,
            _ => return Ok(()),
        };
        if !self.layout.threads.contains(&idx) {
            return Err(Error::Unsupported(format!(
                "transmit context {idx} belongs to a worker or AM thread for the whole run; only \
                 contexts taken with bind_thread can be given back"
            )));
        }
        self.settle_postponed(Settle::All)?;
        self.mapped_boundary();
        let mut ctx = self.contexts.lock(idx);
        let r = self
            .selector
            .force_visible(&mut ctx)
            .and_then(|()| ctx.wait_local());
        ctx.unbind();
        drop(ctx);
        BOUND_CTX.with(|b| b.set(None));
        FABRIC_DIRTY.with(|f| f.set(false));
        self.contexts.unclaim(idx);
        r
    }

    /// Whether threads get transmit contexts of their own.
    pub fn is_bound(&self) -> bool {
        self.bound
    }

    /// Contexts for threads that call [`Comm::bind_thread`].
    pub fn thread_contexts(&self) -> usize {
        self.layout.threads.len()
    }

    /// The intra-node mapped path of this locale.
    pub fn mapped(&self) -> &Mapped {
        &self.mapped
    }

    /// Where the locales of the job live (co-located ones share the cores).
    pub fn hosts(&self) -> &HostLayout {
        &self.hosts
    }

    /// The address in this process of `len` bytes at `at`, if this locale
    /// reaches that heap by mapping (its own heap included): the AM layer
    /// writes replies into a mapped initiator's done slot with it.
    #[inline]
    pub fn mapped_ptr(&self, at: GlobalAddr, len: usize) -> Option<*mut u8> {
        self.mapped.translate(at.locale, at.addr, len)
    }

    /// How a receive poller (comm-ofi's progress thread, the AM poller)
    /// behaves when idle.
    pub fn idle_policy(&self) -> IdlePolicy {
        IdlePolicy::new(&self.cfg, &self.prov, &self.mapped)
    }

    /// Whether the calling thread owns a transmit context for the run.
    pub fn thread_is_bound(&self) -> bool {
        let me = self as *const Comm as usize;
        BOUND_CTX.with(|b| matches!(b.get(), Some((owner, _)) if owner == me))
    }

    /// Validates a PUT/GET and tells where it goes; `None` means nothing to
    /// send (empty).
    fn rma_target(&self, at: GlobalAddr, len: usize) -> Result<Option<RemoteBuf>> {
        let remote = self.remote(at, len)?;
        Ok((len > 0).then_some(remote))
    }

    fn rma_op(&self, ctx: &TxContext, ptr: *const u8, len: usize, remote: RemoteBuf) -> RmaOp {
        RmaOp {
            local: LocalBuf {
                ptr: ptr as *mut u8,
                len,
                desc: self.local_desc(ctx, ptr, len),
            },
            remote,
            chunk: self.prov.max_msg_size,
            seq: 0,
        }
    }

    /// Blocking PUT: copies `src` to `dst`. On return `src` may be reused;
    /// the stores become visible to others by the caller's next MCM boundary.
    pub fn put(&self, dst: GlobalAddr, src: &[u8]) -> Result<()> {
        self.count_rma(Counter::Put, Counter::PutBytes, src.len());
        if let Some(p) = self.mapped.translate(dst.locale, dst.addr, src.len()) {
            // No postponed AMO can be waiting there: atomics on a mapped
            // locale's words are CPU atomics, done at once.
            self.diag.count(Counter::RmaLocal);
            // SAFETY: p..p+len lies in a heap mapped here (translate checked
            // the range); src is a live slice; ranges may overlap (memmove).
            unsafe { std::ptr::copy(src.as_ptr(), p, src.len()) };
            return Ok(());
        }
        let Some(remote) = self.rma_target(dst, src.len())? else {
            return Ok(());
        };
        if dst.locale == self.me {
            self.diag.count(Counter::RmaLocal);
            // SAFETY: dst was validated to lie in our heap; src is a live slice;
            // ranges may overlap (memmove semantics).
            unsafe { std::ptr::copy(src.as_ptr(), dst.addr as *mut u8, src.len()) };
            return Ok(());
        }
        if self.needs_bounce(src.as_ptr(), src.len()) {
            return self.bounced(
                dst,
                src.len(),
                |tmp, off, len| {
                    tmp[..len].copy_from_slice(&src[off..off + len]);
                },
                true,
            );
        }
        note_fabric_work();
        self.with_ctx_settled(Settle::IfAnyTo(dst.locale), |ctx| {
            let op = self.rma_op(ctx, src.as_ptr(), src.len(), remote);
            self.selector
                .put(ctx, dst.locale as usize, op, Blocking::Yes)
        })
        .map_err(peer_err("PUT", src.len(), dst.locale))
    }

    /// Blocking GET: copies `src` into `dst`.
    pub fn get(&self, dst: &mut [u8], src: GlobalAddr) -> Result<()> {
        self.count_rma(Counter::Get, Counter::GetBytes, dst.len());
        if let Some(p) = self.mapped.translate(src.locale, src.addr, dst.len()) {
            self.diag.count(Counter::RmaLocal);
            // SAFETY: p..p+len lies in a heap mapped here (translate checked
            // the range); dst is a live slice.
            unsafe { std::ptr::copy(p, dst.as_mut_ptr(), dst.len()) };
            return Ok(());
        }
        let Some(remote) = self.rma_target(src, dst.len())? else {
            return Ok(());
        };
        if src.locale == self.me {
            self.diag.count(Counter::RmaLocal);
            // SAFETY: src was validated to lie in our heap; dst is a live slice.
            unsafe { std::ptr::copy(src.addr as *const u8, dst.as_mut_ptr(), dst.len()) };
            return Ok(());
        }
        if self.needs_bounce(dst.as_ptr(), dst.len()) {
            let len = dst.len();
            return self.bounced(
                src,
                len,
                |tmp, off, n| dst[off..off + n].copy_from_slice(&tmp[..n]),
                false,
            );
        }
        self.with_ctx_settled(Settle::IfAnyTo(src.locale), |ctx| {
            let op = self.rma_op(ctx, dst.as_ptr(), dst.len(), remote);
            self.selector
                .get(ctx, src.locale as usize, op, Blocking::Yes)
        })
        .map_err(peer_err("GET", dst.len(), src.locale))
    }

    /// Non-blocking PUT of `src` to `dst`: `src` must not be modified until
    /// the handle reports completion (the handle waits when dropped).
    ///
    /// # Safety
    /// The handle must be waited for, or dropped, before `src`'s memory is
    /// freed or reused: leaking it (`mem::forget`, a cycle of `Rc`s) lets the
    /// provider read the buffer after the borrow ended. The runtime shim's
    /// `put_nb` takes an owned buffer instead and is safe.
    pub unsafe fn put_nb<'a>(&'a self, dst: GlobalAddr, src: &'a [u8]) -> Result<NbHandle<'a>> {
        self.diag.count(Counter::PutNb);
        if self
            .mapped
            .translate(dst.locale, dst.addr, src.len())
            .is_some()
        {
            self.put(dst, src)?;
            return Ok(NbHandle::done(self));
        }
        let Some(remote) = self.rma_target(dst, src.len())? else {
            return Ok(NbHandle::done(self));
        };
        if dst.locale == self.me || self.needs_bounce(src.as_ptr(), src.len()) {
            self.put(dst, src)?;
            return Ok(NbHandle::done(self));
        }
        self.count_rma(Counter::Put, Counter::PutBytes, src.len());
        note_fabric_work();
        self.nb(Settle::IfAnyTo(dst.locale), dst.locale, |ctx| {
            let mut op = self.rma_op(ctx, src.as_ptr(), src.len(), remote);
            op.seq = ctx.next_seq();
            let seq = op.seq;
            self.selector
                .put(ctx, dst.locale as usize, op, Blocking::No)?;
            Ok(seq)
        })
        .map_err(peer_err("non-blocking PUT", src.len(), dst.locale))
    }

    /// Non-blocking GET of `src` into `dst`: `dst` holds the data once the
    /// handle reports completion (the handle waits when dropped). The read
    /// is ordered before every later PUT, writing atomic or AM of the same
    /// task to `src`'s locale, and completes by the task's next boundary,
    /// whether or not the handle was waited for (see `docs/mcm.md`).
    ///
    /// # Safety
    /// As for [`Comm::put_nb`]: the handle must be waited for or dropped
    /// before `dst`'s memory is freed or reused (the provider writes it).
    pub unsafe fn get_nb<'a>(&'a self, dst: &'a mut [u8], src: GlobalAddr) -> Result<NbHandle<'a>> {
        self.diag.count(Counter::GetNb);
        if self
            .mapped
            .translate(src.locale, src.addr, dst.len())
            .is_some()
        {
            self.get(dst, src)?;
            return Ok(NbHandle::done(self));
        }
        let Some(remote) = self.rma_target(src, dst.len())? else {
            return Ok(NbHandle::done(self));
        };
        if src.locale == self.me || self.needs_bounce(dst.as_ptr(), dst.len()) {
            self.get(dst, src)?;
            return Ok(NbHandle::done(self));
        }
        self.count_rma(Counter::Get, Counter::GetBytes, dst.len());
        self.nb(Settle::IfAnyTo(src.locale), src.locale, |ctx| {
            let mut op = self.rma_op(ctx, dst.as_ptr(), dst.len(), remote);
            op.seq = ctx.next_seq();
            let seq = op.seq;
            self.selector
                .get(ctx, src.locale as usize, op, Blocking::No)?;
            Ok(seq)
        })
        .map_err(peer_err("non-blocking GET", dst.len(), src.locale))
    }

    /// Counts one PUT or GET of `len` bytes (if counting is on).
    #[inline]
    fn count_rma(&self, op: Counter, bytes: Counter, len: usize) {
        if self.diag.is_on() {
            self.diag.count(op);
            self.diag.add(bytes, len as u64);
        }
    }

    /// This locale's operation counters (Chapel's CommDiagnostics; see
    /// `diag`): start, stop, reset, snapshot.
    pub fn diagnostics(&self) -> &crate::diag::CommDiagnostics {
        &self.diag
    }

    /// Posts a non-blocking operation with `post` and wraps it in a handle.
    /// On an unbound context the release waits for it, so the handle is
    /// complete at once.
    fn nb(
        &self,
        settle: Settle,
        peer: Locale,
        post: impl FnOnce(&mut TxContext) -> Result<u64>,
    ) -> Result<NbHandle<'_>> {
        let mut ctx = self.ctx();
        if settle.applies(&ctx.postponed) {
            let list = std::mem::take(&mut ctx.postponed);
            drop(ctx);
            self.await_postponed(list)?;
            ctx = self.ctx();
        }
        let seq = post(&mut ctx)?;
        if ctx.binding() == Binding::Unbound {
            self.selector.release(&mut ctx)?;
            ctx.wait_local()?;
            ctx.dangling().clear_reads();
            return Ok(NbHandle::done(self));
        }
        Ok(NbHandle {
            comm: self,
            ctx: ctx.index,
            seq,
            peer,
            done: false,
            _buf: std::marker::PhantomData,
            _not_send: std::marker::PhantomData,
        })
    }

    /// Waits until one of `handles` has completed and returns its index.
    /// An empty slice is an error.
    pub fn wait_any(&self, handles: &mut [NbHandle<'_>]) -> Result<usize> {
        if handles.is_empty() {
            return Err(Error::InvalidSize {
                what: "handle count for wait_any",
                size: 0,
                reason: "needs at least one handle".into(),
            });
        }
        let mut backoff = crate::Backoff::new(0, 0);
        loop {
            for (i, h) in handles.iter_mut().enumerate() {
                if h.test()? {
                    return Ok(i);
                }
            }
            backoff.snooze();
        }
    }

    /// PUT/GET through a registered bounce buffer (providers with `FI_MR_LOCAL`
    /// and a local buffer outside the heap).
    fn bounced(
        &self,
        remote_at: GlobalAddr,
        len: usize,
        mut copy: impl FnMut(&mut [u8], usize, usize),
        is_put: bool,
    ) -> Result<()> {
        const BOUNCE: usize = 64 << 10;
        let piece = BOUNCE.min(self.prov.max_msg_size);
        let tmp_addr = self.heap.alloc(piece, 64)?;
        // SAFETY: tmp_addr..+piece is a fresh heap allocation only we use.
        let tmp = unsafe { std::slice::from_raw_parts_mut(tmp_addr as *mut u8, piece) };
        let target = remote_at.locale as usize;
        if is_put {
            note_fabric_work();
        }
        let result = (|| {
            let mut off = 0;
            while off < len {
                let n = piece.min(len - off);
                let r = self.remote(remote_at.offset(off as u64), n)?;
                if is_put {
                    copy(tmp, off, n);
                }
                self.with_ctx(|ctx| {
                    let op = self.rma_op(ctx, tmp.as_ptr(), n, r);
                    if is_put {
                        self.selector.put(ctx, target, op, Blocking::Yes)
                    } else {
                        self.selector.get(ctx, target, op, Blocking::Yes)
                    }
                })?;
                if !is_put {
                    copy(tmp, off, n);
                }
                off += n;
            }
            Ok(())
        })()
        .map_err(peer_err(
            if is_put { "PUT" } else { "GET" },
            len,
            remote_at.locale,
        ));
        self.free(GlobalAddr::new(self.me, tmp_addr))?;
        result
    }

    /// The MCM boundary on the calling thread's transmit context: every
    /// store it issued (PUTs, non-fetching AMOs, native or postponed via AM)
    /// becomes visible at its target before this returns, and every
    /// non-blocking GET it issued has completed.
    pub fn force_visible(&self) -> Result<()> {
        self.mapped_boundary();
        self.with_ctx_settled(Settle::All, |ctx| self.selector.force_visible(ctx))?;
        FABRIC_DIRTY.with(|f| f.set(false));
        Ok(())
    }

    /// The boundary's part for the mapped path: the calling CPU's stores to
    /// mapped heaps are globally visible (its store buffer drained) before
    /// anything after the boundary (docs/mcm.md, "The mapped path").
    #[inline]
    pub(crate) fn mapped_boundary(&self) {
        if self.mapped.in_use() {
            std::sync::atomic::fence(Ordering::SeqCst);
        }
    }

    /// Whether the calling thread may have fabric stores or postponed AMOs
    /// on its context (see `FABRIC_DIRTY`).
    #[inline]
    pub(crate) fn fabric_dirty(&self) -> bool {
        FABRIC_DIRTY.with(|f| f.get())
    }

    /// The boundary on every transmit context of this locale (barrier,
    /// finalize): what any thread stored before is visible after it. (The
    /// caller's postponed AMOs are awaited; other threads' tasks awaited
    /// theirs when they ended.)
    pub fn force_visible_all(&self) -> Result<()> {
        self.mapped_boundary();
        let mut first_err = self.settle_postponed(Settle::All).err();
        self.contexts.for_each(|c| {
            if let Err(e) = self.selector.force_visible(c) {
                first_err.get_or_insert(e);
            }
        });
        first_err.map_or(Ok(()), Err)
    }

    /// Boundary hook: a task is about to create a child task, which must see
    /// every store the creator issued.
    pub fn task_create(&self) -> Result<()> {
        self.force_visible()
    }

    /// Boundary hook: the calling task ends; whoever joins it must see its stores.
    pub fn task_end(&self) -> Result<()> {
        self.force_visible()
    }

    /// Boundary hook: an on-statement body starts on this locale.
    pub fn on_start(&self) -> Result<()> {
        self.force_visible()
    }

    /// Boundary hook: an on-statement body ends; its initiator must see its stores.
    pub fn on_end(&self) -> Result<()> {
        self.force_visible()
    }

    /// Boundary hook: the AM handler is about to report 'done' for a request.
    pub fn before_done(&self) -> Result<()> {
        self.force_visible()
    }

    /// Installs the AM layer (see [`crate::am_seam`]): proofs of native-AMO
    /// visibility and atomics on other locales' words for CPU-route types.
    /// Later calls are ignored.
    pub fn install_am_layer(&self, layer: Arc<dyn AmLayer>) {
        let _ = self.am_layer.set(layer);
    }

    /// The calls only an AM layer makes (see [`crate::am_seam::AmPort`]).
    pub fn am_port(&self) -> AmPort<'_> {
        AmPort { comm: self }
    }

    /// Whether the weakening `w` (test-only, `PGAS_MCM_WEAKEN`) is in force:
    /// the layers above re-open the hole it names.
    #[doc(hidden)]
    pub fn is_weakened(&self, w: mcm::Weakening) -> bool {
        self.selector.is_weakened(w)
    }

    /// Job-wide barrier; every store issued before it is visible after it.
    pub fn barrier(&self) -> Result<()> {
        self.force_visible_all()?;
        self.oob.barrier()?;
        Ok(())
    }

    /// Orderly shutdown: barrier, stop progress. Idempotent.
    pub fn finalize(&self) -> Result<()> {
        if self.finalized.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let r = self.barrier();
        self.stop_progress();
        r?;
        Ok(self.oob.finalized()?)
    }

    pub(crate) fn stop_progress(&self) {
        self.stop.store(true, Ordering::Release);
        self.mapped.ring_self();
        if let Some(h) = self.progress.lock().take() {
            let _ = h.join();
        }
    }

    /// Reads receive-side completions (and drives progress for RMA
    /// targeting this locale). Waits up to `timeout_ms` on blocking CQs.
    pub(crate) fn poll_rx(
        &self,
        buf: &mut [CqEntry],
        timeout_ms: i32,
    ) -> std::result::Result<usize, crate::ofi::CqError> {
        let _g = self.rx_serial.as_ref().map(|l| l.lock());
        self.rx_ep.rx_cq().read(buf, timeout_ms)
    }

    /// Posts a multi-receive landing zone on the receive endpoint, retrying
    /// while the provider says `-FI_EAGAIN`.
    ///
    /// # Safety
    /// `buf..buf+len` must lie in the registered heap and stay reserved for
    /// the provider until it reports the buffer retired (`FI_MULTI_RECV`).
    pub(crate) unsafe fn post_landing_zone(
        &self,
        buf: *mut u8,
        len: usize,
        context: usize,
    ) -> Result<()> {
        let desc = if self.prov.mr_mode & sys::FI_MR_LOCAL != 0 {
            self.mr.desc()
        } else {
            std::ptr::null_mut()
        };
        loop {
            let ret = {
                let _g = self.rx_serial.as_ref().map(|l| l.lock());
                // SAFETY: forwarded from the caller's guarantee.
                unsafe {
                    self.rx_ep
                        .post_multi_recv(buf, len, desc, context as *mut std::ffi::c_void)
                }
            };
            if ret == -(sys::FI_EAGAIN as isize) {
                let mut b = [CqEntry::default(); 1];
                let _ = self.poll_rx(&mut b[..0], 0);
                std::thread::yield_now();
                continue;
            }
            return crate::error::check("fi_recvmsg(FI_MULTI_RECV)", ret as i64)
                .map_err(Error::Ofi);
        }
    }

    /// Sets `FI_OPT_MIN_MULTI_RECV` on the receive endpoint.
    pub(crate) fn set_min_multi_recv(&self, bytes: usize) -> Result<()> {
        self.rx_ep
            .set_opt_usize(sys::FI_OPT_MIN_MULTI_RECV as i32, bytes)
            .map_err(Error::Ofi)
    }

    /// Sends the AM request `msg` to `target`'s receive endpoint through the
    /// MCM selector (which first makes the caller's stores visible as the
    /// mode says) and waits for local completion (the buffer may be reused
    /// on return). `msg` must lie in the registered heap when the provider
    /// needs `FI_MR_LOCAL`.
    pub(crate) fn send(&self, target: Locale, msg: &[u8]) -> Result<()> {
        self.check_locale(target)?;
        // A mapped target's poller may sleep on its doorbell: ring before
        // (it wakes while we send; providers whose send completes only once
        // the target progressed need that) and after (the sleeper's check).
        self.mapped.ring(target);
        // Our stores to mapped heaps before the message (no instruction on
        // x86; a barrier on weakly ordered CPUs).
        std::sync::atomic::fence(Ordering::Release);
        self.with_ctx(|ctx| {
            let local = LocalBuf {
                ptr: msg.as_ptr() as *mut u8,
                len: msg.len(),
                desc: self.local_desc(ctx, msg.as_ptr(), msg.len()),
            };
            self.selector.send(ctx, target as usize, SendOp { local })
        })
        .map_err(peer_err("active message", msg.len(), target))?;
        self.mapped.ring(target);
        Ok(())
    }

    /// Sends a short message (at most the provider's inject size) from the
    /// AM progress thread without waiting for it to complete: with
    /// providers whose send completion needs the peer's progress thread
    /// (udp;ofi_rxd acknowledges in software), two progress threads waiting
    /// on each other's sends would hang. Returns `Ok(false)` if the
    /// transmit queue is full (nothing sent; try again after receiving).
    /// Bypasses the MCM selector: the progress thread issues no stores.
    pub(crate) fn send_from_progress(&self, target: Locale, msg: &[u8]) -> Result<bool> {
        self.check_locale(target)?;
        if msg.len() > self.prov.inject_size {
            return Err(Error::InvalidSize {
                what: "message sent from the progress thread",
                size: msg.len(),
                reason: format!(
                    "the inject size of {} is {}",
                    self.prov.name, self.prov.inject_size
                ),
            });
        }
        if !self.is_progress_thread() {
            return Err(Error::Unsupported(
                "send_from_progress called outside the AM progress thread".into(),
            ));
        }
        let mut ctx = self.contexts.lock(PROGRESS_CTX);
        match ctx.inject_send(target as usize, msg) {
            Ok(()) => {
                self.mapped.ring(target);
                Ok(true)
            }
            Err(Error::WouldBlock { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Reaps completions of [`Comm::send_from_progress`] without waiting.
    pub(crate) fn reap_progress_sends(&self) -> Result<()> {
        self.contexts
            .lock(PROGRESS_CTX)
            .progress_nowait()
            .map(|_| ())
    }

    fn is_progress_thread(&self) -> bool {
        let me = self as *const Comm as usize;
        BOUND_CTX.with(|b| b.get() == Some((me, PROGRESS_CTX)))
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        self.stop_progress();
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

/// How a receive poller behaves when it finds nothing: keep polling
/// (yielding) while peers may need its progress; otherwise poll for
/// `PGAS_POLL_SPIN_US` after the last completion, then sleep on the
/// doorbell until a mapped peer rings it (or a timeout passes).
#[derive(Debug, Clone)]
pub struct IdlePolicy {
    mapped: Option<Arc<Mapped>>,
    spin: std::time::Duration,
}

/// Longest doorbell sleep: bounds the delay if a wake-up were ever missed.
const DOORBELL_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(50);
/// How often a covered poller checks that its worker still polls.
const COVER_CHECK: std::time::Duration = std::time::Duration::from_micros(200);

impl IdlePolicy {
    fn new(cfg: &Config, prov: &ProviderInfo, mapped: &Arc<Mapped>) -> IdlePolicy {
        // Blocking CQ waits block already; udp;ofi_rxd completes a send only
        // once the receiver's progress acknowledged it (keep polling).
        let may_sleep =
            mapped.rung_by_all() && prov.wait == WaitMode::Spin && !prov.name.contains("ofi_rxd");
        IdlePolicy {
            mapped: may_sleep.then(|| mapped.clone()),
            spin: std::time::Duration::from_micros(cfg.poll_spin_us),
        }
    }

    /// Whether the poller blocks when idle (every peer maps this locale and
    /// rings it; nothing needs its progress for RMA).
    pub fn may_sleep(&self) -> bool {
        self.mapped.is_some()
    }

    /// If a worker covers for the poller ([`IdlePolicy::cover`]), sleeps a
    /// little and returns true; if meanwhile the worker's `heartbeat` (a
    /// count it bumps each poll) did not move, it is busy with a task, and
    /// the poller takes over (senders wake it again).
    pub fn sleep_while_covered(&self, heartbeat: impl Fn() -> u64) -> bool {
        match &self.mapped {
            Some(m) if m.covered() => {
                let before = heartbeat();
                m.sleep(COVER_CHECK);
                if heartbeat() == before {
                    m.take_over();
                }
                true
            }
            _ => false,
        }
    }

    /// A worker polls in the poller's place (see `Mapped::cover`); only
    /// where the poller may sleep. Cheap when it covers already.
    pub fn cover(&self) {
        if let Some(m) = &self.mapped {
            if !m.covered() {
                m.cover();
            }
        }
    }

    /// The worker stops polling; it must poll once more afterwards.
    pub fn uncover(&self) {
        if let Some(m) = &self.mapped {
            m.uncover();
        }
    }

    /// Called when a poll found nothing, `idle_since` being when the last
    /// completion came. Returns at once while the poller should keep
    /// polling (after a yield once it has been idle a little); otherwise
    /// announces the sleep, calls `poll_again` (which must poll once and
    /// say whether it found anything) and sleeps only if it found nothing.
    /// Returns whether it slept.
    pub fn idle(
        &self,
        idle_since: std::time::Instant,
        idle_polls: u32,
        poll_again: impl FnOnce() -> bool,
    ) -> bool {
        match &self.mapped {
            Some(m) if idle_since.elapsed() >= self.spin => {
                m.prepare_sleep();
                if poll_again() {
                    m.cancel_sleep();
                    return false;
                }
                m.sleep(DOORBELL_TIMEOUT);
                true
            }
            _ => {
                if idle_polls > 16 {
                    std::thread::yield_now();
                }
                false
            }
        }
    }
}

fn spawn_progress(
    rx_ep: Arc<Endpoint>,
    stop: Arc<AtomicBool>,
    serial: Option<crate::ctx::DomainLock>,
    idle: IdlePolicy,
) -> Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("pgas-progress".into())
        .spawn(move || {
            let cq: &Cq = rx_ep.rx_cq();
            let mut buf = [CqEntry::default(); 8];
            let read = |buf: &mut [CqEntry]| {
                let guard = serial.as_ref().map(|l| l.lock());
                let r = cq.read(buf, 100);
                drop(guard);
                r
            };
            let mut since = std::time::Instant::now();
            let mut polls = 0u32;
            while !stop.load(Ordering::Acquire) {
                match read(&mut buf) {
                    Ok(0) => {
                        polls = polls.saturating_add(1);
                        if cq.wait_mode() == WaitMode::Spin {
                            // Only a completion restarts the spinning.
                            idle.idle(since, polls, || {
                                stop.load(Ordering::Acquire) || !matches!(read(&mut buf), Ok(0))
                            });
                        }
                    }
                    Ok(_) => {
                        since = std::time::Instant::now();
                        polls = 0;
                    }
                    Err(e) => tracing::warn!("progress thread: {}", e.error),
                }
            }
        })
        .map_err(|e| Error::Unsupported(format!("cannot start the progress thread: {e}")))
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

/// A non-blocking PUT or GET in flight: the buffer it borrows may not be
/// touched until [`NbHandle::wait`] (or a [`NbHandle::test`] that returned
/// `true`, or [`Comm::wait_any`]) says it has completed. Dropping a handle
/// waits for the operation; leaking one is what makes [`Comm::put_nb`] and
/// [`Comm::get_nb`] `unsafe`.
///
/// Not `Send`: it belongs to the transmit context of the thread that
/// created it, whose ordering state it is part of.
///
/// Borrowed-buffer non-blocking operations cannot be started from safe code:
///
/// ```compile_fail,E0133
/// fn post(c: &comm_ofi::Comm, at: comm_ofi::GlobalAddr, b: &[u8]) {
///     let _ = c.put_nb(at, b);
/// }
/// ```
#[must_use = "a non-blocking operation must be waited for before its buffer is reused"]
pub struct NbHandle<'a> {
    comm: &'a Comm,
    ctx: usize,
    seq: u64,
    /// The target, for errors.
    peer: Locale,
    done: bool,
    _buf: std::marker::PhantomData<&'a mut [u8]>,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl std::fmt::Debug for NbHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NbHandle")
            .field("ctx", &self.ctx)
            .field("seq", &self.seq)
            .field("done", &self.done)
            .finish()
    }
}

impl<'a> NbHandle<'a> {
    fn done(comm: &'a Comm) -> NbHandle<'a> {
        NbHandle {
            comm,
            ctx: 0,
            seq: 0,
            peer: comm.me,
            done: true,
            _buf: std::marker::PhantomData,
            _not_send: std::marker::PhantomData,
        }
    }

    /// Whether the operation has completed (reaps completions first).
    pub fn test(&mut self) -> Result<bool> {
        if !self.done {
            let mut ctx = self.comm.contexts.lock(self.ctx);
            if !ctx.nb_done(self.seq) {
                ctx.progress()
                    .map_err(peer_err("non-blocking operation", 0, self.peer))?;
            }
            self.done = ctx.nb_done(self.seq);
        }
        Ok(self.done)
    }

    /// Waits for the operation to complete.
    pub fn wait(mut self) -> Result<()> {
        self.wait_mut()
    }

    fn wait_mut(&mut self) -> Result<()> {
        let mut backoff = crate::Backoff::new(65, 65);
        while !self.test()? {
            backoff.snooze();
        }
        Ok(())
    }
}

impl Drop for NbHandle<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Err(e) = self.wait_mut() {
                tracing::error!("non-blocking operation failed while its handle was dropped: {e}");
                // The buffer is released either way: the op completed in error.
                self.done = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Layout;

    #[test]
    fn layout_gives_thread_contexts_only_after_every_worker() {
        // [0] shared, [1] progress, [2] handler, [3..5] workers, [5..7] threads.
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
