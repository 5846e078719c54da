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

use crate::amo::{AmoKind, AmoOp, AmoType, NativeAtomics};
use crate::ctx::{
    AtomicOp, LocalBuf, RemoteBuf, RmaOp, Route, SendOp, TxContext, VisibilityProver, SCRATCH_BYTES,
};
use crate::env::Config;
use crate::error::{Error, Result};
use crate::heap::Heap;
use crate::mapped::{HostLayout, LocalPath, Mapped};
use crate::ofi::{Av, Cq, CqEntry, Domain, Endpoint, Fabric, Mr, WaitMode};
use crate::select::{self, SelectRequest, Selection};
use crate::Mode;
use bootstrap::Oob;
use libfabric_sys as sys;
use mcm::{Binding, Blocking, Selector, Transport};
use parking_lot::{Mutex, MutexGuard};
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
    /// The address `bytes` further on.
    pub fn offset(self, bytes: u64) -> GlobalAddr {
        GlobalAddr {
            locale: self.locale,
            addr: self.addr + bytes,
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
    /// Message ordering granted.
    pub msg_order: u64,
    /// How waits are done.
    pub wait: WaitMode,
    /// Whether the provider was granted `FI_ATOMIC`.
    pub atomics: bool,
}

/// Carries out atomics the provider cannot do natively (installed by the AM
/// layer, which sends them to the target's handler).
pub trait AmoFallback: Send + Sync {
    /// Same contract as [`Comm::amo`].
    fn amo(
        &self,
        target: GlobalAddr,
        ty: AmoType,
        op: AmoOp,
        operand: u64,
        compare: u64,
        fetch: bool,
    ) -> Result<u64>;

    /// Waits for the calling thread's postponed non-fetching AMOs (an AM
    /// layer may let them run on until the next MCM boundary).
    fn settle(&self) -> Result<()> {
        Ok(())
    }

    /// Waits for the calling thread's postponed AMOs if any went to
    /// `target` (a later PUT/GET of the same task there must see them).
    fn settle_target(&self, target: Locale) -> Result<()> {
        let _ = target;
        self.settle()
    }
}

thread_local! {
    /// Whether the calling thread has AMOs in flight that an AM layer
    /// postponed (see [`AmoFallback::settle`]); checked by every PUT/GET.
    static POSTPONED_AMOS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether the calling thread issued fabric stores (PUTs, native AMOs)
    /// since its context was last forced: an atomic on a mapped word must
    /// then force them first (SC atomics follow the task's stores).
    static FABRIC_STORES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Tells comm-ofi whether the calling thread has postponed AMOs in flight:
/// while it does, each PUT/GET first asks the fallback to settle those to its
/// target. The AM layer sets it when it postpones one and clears it when it
/// has waited for them all.
pub fn note_postponed_amos(pending: bool) {
    POSTPONED_AMOS.with(|p| p.set(pending));
}

/// The transmit-context table: `[0]` shared, `[1]` the AM layer's progress
/// thread (it answers no-op requests, the visibility proofs), then one per
/// AM handler, then one per worker. The first `2 + handlers` are required
/// (a proof waited for on any context is answered through them, so they must
/// never be held by a waiting thread). When the provider allows fewer
/// contexts than workers need, workers share the rest with every other
/// thread, unbound.
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
    amo_fallback: OnceLock<Arc<dyn AmoFallback>>,
    /// The MCM implementors of the mode in force.
    selector: Selector<TxContext>,
    /// The AM layer's visibility proof, shared with every context.
    prover: Arc<OnceLock<Arc<dyn VisibilityProver>>>,
    /// Which contexts serve whom.
    layout: Layout,
    /// Whether every worker and AM handler has a context of its own.
    bound: bool,
    /// Which contexts are claimed by a thread for life.
    claimed: Vec<AtomicBool>,
    rx_serial: Option<crate::ctx::DomainLock>,
    me: Locale,
    n: Locale,
    prov: ProviderInfo,
    native: NativeAtomics,
    peers: Vec<Peer>,
    /// The intra-node mapped path (peers' heaps mapped here).
    mapped: Arc<Mapped>,
    /// Where the locales live.
    hosts: HostLayout,
    // Field order is drop order: contexts and endpoints before MRs before the heap.
    contexts: Vec<Mutex<TxContext>>,
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
        let cfg = Config::from_env()?;
        let oob = bootstrap::from_env()?;
        Comm::init_with(oob, cfg)
    }

    /// Starts the comm layer with an explicit bootstrap and configuration.
    pub fn init_with(oob: Box<dyn Oob>, mut cfg: Config) -> Result<Arc<Comm>> {
        let me = oob.rank() as Locale;

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
        let budget = info
            .ep_cnt()
            .saturating_sub(1)
            .max(1)
            .min(cfg.max_tx_contexts.unwrap_or(usize::MAX));
        let num_ctx = budget.min(wanted);
        let layout = Layout::plan(
            num_ctx,
            cfg.am_handlers,
            cfg.num_workers,
            cfg.thread_contexts,
        )?;
        let bound = layout.workers_bound;
        let av = Av::open(&domain, n as usize * (num_ctx + 1) * 2)?;
        let rx_cq = Cq::open(&domain, 1024, wait)?;
        let tx_cq_size = info.tx_size().clamp(64, 4096) + 64;
        let single_ep = crate::quirks::single_endpoint(&prov.name);
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
        let prover: Arc<OnceLock<Arc<dyn VisibilityProver>>> = Arc::new(OnceLock::new());
        let mut contexts = Vec::with_capacity(num_ctx);
        for (i, ep) in eps.into_iter().enumerate() {
            let scratch = heap.alloc(SCRATCH_BYTES, 64)? as *mut u8;
            let desc = match (needs_desc, endpoint_mr) {
                (false, _) => std::ptr::null_mut(),
                (true, false) => mr.desc(),
                (true, true) => tx_mrs[i].desc(),
            };
            contexts.push(Mutex::new(TxContext::new(
                i,
                ep,
                scratch,
                desc,
                serial.clone(),
                routes.clone(),
                prover.clone(),
                prov.atomics,
                prov.inject_size,
            )));
        }

        // Which atomics are native: none once any locale maps another (CPU
        // atomics on mapped words do not mix with NIC atomics; see mapped.rs).
        let native = if prov.atomics && !mapped.in_use() {
            let ctx = contexts[0].lock();
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
        let comm = Comm {
            amo_fallback: OnceLock::new(),
            selector: Selector::weakened(prov.mode, cfg.weaken),
            prover,
            layout,
            bound,
            claimed: (0..num_ctx).map(|_| AtomicBool::new(false)).collect(),
            rx_serial: serial_for_rx,
            me,
            n,
            prov,
            native,
            peers,
            mapped,
            hosts,
            contexts,
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
            "pgas-comm: {} MCM mode, {} provider, {} locales, {} endpoints ({} tx contexts, \
             {} for other threads), {} heap, {} atomics, {} progress, {} local path{}",
            self.prov.mode,
            self.prov.name,
            self.n,
            if self.layout.workers_bound {
                "bound"
            } else {
                "unbound"
            },
            self.contexts.len(),
            self.layout.threads.len(),
            human_size(self.heap.size()),
            match (self.mapped.in_use(), self.native.native_types()) {
                (true, _) => "CPU".to_string(),
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

    /// Frees memory from [`Comm::alloc`].
    pub fn free(&self, addr: GlobalAddr) -> Result<()> {
        if addr.locale != self.me {
            return Err(Error::InvalidLocale {
                locale: addr.locale,
                num_locales: self.n,
            });
        }
        self.heap.free(addr.addr)
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

    /// Validates a remote range and turns it into provider addressing.
    fn remote(&self, at: GlobalAddr, len: usize) -> Result<RemoteBuf> {
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
    fn ctx(&self) -> MutexGuard<'_, TxContext> {
        let me = self as *const Comm as usize;
        let bound = BOUND_CTX.with(|b| match b.get() {
            Some((owner, i)) if owner == me => Some(i),
            _ => None,
        });
        if let Some(i) = bound {
            return self.contexts[i].lock();
        }
        let shared = &self.layout.shared;
        if shared.len() == 1 {
            return self.contexts[shared[0]].lock();
        }
        let start = SHARED_HINT.with(|h| h.get()) % shared.len();
        for k in 0..shared.len() {
            let i = shared[(start + k) % shared.len()];
            if let Some(g) = self.contexts[i].try_lock() {
                return g;
            }
        }
        self.contexts[shared[start]].lock()
    }

    /// Runs `f` on the caller's context; an unbound context is released
    /// (its dangling stores forced visible) before another thread may take it.
    fn with_ctx<R>(&self, f: impl FnOnce(&mut TxContext) -> Result<R>) -> Result<R> {
        let mut ctx = self.ctx();
        let r = f(&mut ctx);
        if ctx.binding() == Binding::Unbound {
            let released = self.selector.release(&mut ctx);
            if r.is_ok() {
                released?;
            }
        }
        r
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
    pub fn bind_am_handler(&self, handler: usize) -> Result<()> {
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
    pub fn bind_progress_thread(&self) -> Result<()> {
        self.bind_index(PROGRESS_CTX)?;
        self.contexts[PROGRESS_CTX].lock().set_fail_fast();
        Ok(())
    }

    fn bind_index(&self, idx: usize) -> Result<()> {
        if self.claimed[idx].swap(true, Ordering::AcqRel) {
            return Err(Error::Unsupported(format!(
                "transmit context {idx} is already bound to another thread"
            )));
        }
        self.contexts[idx].lock().bind();
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
            if !self.claimed[idx].swap(true, Ordering::AcqRel) {
                self.contexts[idx].lock().bind();
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
        self.settle_fallback()?;
        self.mapped_boundary();
        let mut ctx = self.contexts[idx].lock();
        let r = self
            .selector
            .force_visible(&mut ctx)
            .and_then(|()| ctx.wait_local());
        ctx.unbind();
        drop(ctx);
        BOUND_CTX.with(|b| b.set(None));
        FABRIC_STORES.with(|f| f.set(false));
        self.claimed[idx].store(false, Ordering::Release);
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
        self.settle_postponed_to(at.locale)?;
        Ok((len > 0).then_some(remote))
    }

    /// A later PUT/GET of the task to `locale` must see its postponed AMOs there.
    #[inline]
    fn settle_postponed_to(&self, locale: Locale) -> Result<()> {
        if POSTPONED_AMOS.with(|p| p.get()) {
            if let Some(fb) = self.amo_fallback.get() {
                fb.settle_target(locale)?;
            }
        }
        Ok(())
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
        if let Some(p) = self.mapped.translate(dst.locale, dst.addr, src.len()) {
            self.settle_postponed_to(dst.locale)?;
            // SAFETY: p..p+len lies in a heap mapped here (translate checked
            // the range); src is a live slice; ranges may overlap (memmove).
            unsafe { std::ptr::copy(src.as_ptr(), p, src.len()) };
            return Ok(());
        }
        let Some(remote) = self.rma_target(dst, src.len())? else {
            return Ok(());
        };
        if dst.locale == self.me {
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
        FABRIC_STORES.with(|f| f.set(true));
        self.with_ctx(|ctx| {
            let op = self.rma_op(ctx, src.as_ptr(), src.len(), remote);
            self.selector
                .put(ctx, dst.locale as usize, op, Blocking::Yes)
        })
    }

    /// Blocking GET: copies `src` into `dst`.
    pub fn get(&self, dst: &mut [u8], src: GlobalAddr) -> Result<()> {
        if let Some(p) = self.mapped.translate(src.locale, src.addr, dst.len()) {
            self.settle_postponed_to(src.locale)?;
            // SAFETY: p..p+len lies in a heap mapped here (translate checked
            // the range); dst is a live slice.
            unsafe { std::ptr::copy(p, dst.as_mut_ptr(), dst.len()) };
            return Ok(());
        }
        let Some(remote) = self.rma_target(src, dst.len())? else {
            return Ok(());
        };
        if src.locale == self.me {
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
        self.with_ctx(|ctx| {
            let op = self.rma_op(ctx, dst.as_ptr(), dst.len(), remote);
            self.selector
                .get(ctx, src.locale as usize, op, Blocking::Yes)
        })
    }

    /// Non-blocking PUT of `src` to `dst`: `src` must not be modified until
    /// the handle reports completion (the handle waits when dropped).
    pub fn put_nb<'a>(&'a self, dst: GlobalAddr, src: &'a [u8]) -> Result<NbHandle<'a>> {
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
        FABRIC_STORES.with(|f| f.set(true));
        self.nb(|ctx| {
            let mut op = self.rma_op(ctx, src.as_ptr(), src.len(), remote);
            op.seq = ctx.next_seq();
            let seq = op.seq;
            self.selector
                .put(ctx, dst.locale as usize, op, Blocking::No)?;
            Ok(seq)
        })
    }

    /// Non-blocking GET of `src` into `dst`: `dst` holds the data once the
    /// handle reports completion (the handle waits when dropped).
    pub fn get_nb<'a>(&'a self, dst: &'a mut [u8], src: GlobalAddr) -> Result<NbHandle<'a>> {
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
        self.nb(|ctx| {
            let mut op = self.rma_op(ctx, dst.as_ptr(), dst.len(), remote);
            op.seq = ctx.next_seq();
            let seq = op.seq;
            self.selector
                .get(ctx, src.locale as usize, op, Blocking::No)?;
            Ok(seq)
        })
    }

    /// Posts a non-blocking operation with `post` and wraps it in a handle.
    /// On an unbound context the release waits for it, so the handle is
    /// complete at once.
    fn nb(&self, post: impl FnOnce(&mut TxContext) -> Result<u64>) -> Result<NbHandle<'_>> {
        let mut ctx = self.ctx();
        let seq = post(&mut ctx)?;
        if ctx.binding() == Binding::Unbound {
            self.selector.release(&mut ctx)?;
            ctx.wait_local()?;
            return Ok(NbHandle::done(self));
        }
        Ok(NbHandle {
            comm: self,
            ctx: ctx.index,
            seq,
            done: false,
            _buf: std::marker::PhantomData,
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
        loop {
            for (i, h) in handles.iter_mut().enumerate() {
                if h.test()? {
                    return Ok(i);
                }
            }
            std::thread::yield_now();
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
        })();
        self.heap.free(tmp_addr)?;
        result
    }

    /// A remote atomic on one element of `ty` at `target`. `operand` and
    /// `compare` carry the value's bits in their low bytes (little-endian);
    /// the returned value is the fetched old value (0 for non-fetching ops).
    pub fn amo(
        &self,
        target: GlobalAddr,
        ty: AmoType,
        op: AmoOp,
        operand: u64,
        compare: u64,
        fetch: bool,
    ) -> Result<u64> {
        let size = ty.size();
        if self.mapped.in_use() {
            if let Some(p) = self.mapped.translate(target.locale, target.addr, size) {
                self.check_atomic_target(target, ty)?;
                return self.mapped_amo(p, ty, op, operand, compare, fetch);
            }
        }
        let remote = self.remote(target, size)?;
        self.check_atomic_target(target, ty)?;
        let kind = AmoKind::of(op, fetch);
        if !self.native.supports(ty, op, kind) {
            if let Some(fb) = self.amo_fallback.get() {
                return fb.amo(target, ty, op, operand, compare, fetch);
            }
            return Err(Error::Unsupported(format!(
                "{op:?} on {ty:?} ({kind:?}) is not native on provider {}, and AMOs via active \
                 messages are not available yet",
                self.prov.name
            )));
        }
        // SC atomics: postponed AMOs of this thread (via AM) go first.
        self.settle_fallback()?;
        if kind == AmoKind::Plain {
            FABRIC_STORES.with(|f| f.set(true));
        }
        let policy_kind = match (kind, op) {
            (AmoKind::Plain, _) => mcm::AmoKind::Update,
            (_, AmoOp::Read) => mcm::AmoKind::Read,
            _ => mcm::AmoKind::FetchUpdate,
        };
        self.with_ctx(|ctx| {
            {
                let (o, c, r) = ctx.scratch_words();
                *o = operand.to_le_bytes();
                *c = compare.to_le_bytes();
                *r = [0; 8];
            }
            let atomic = AtomicOp {
                remote,
                datatype: ty.datatype(),
                op: op.fi_op(),
                kind,
            };
            self.selector
                .amo(ctx, target.locale as usize, atomic, policy_kind)?;
            let (_, _, r) = ctx.scratch_words();
            let mut out = [0u8; 8];
            out[..size].copy_from_slice(&r[..size]);
            Ok(if kind == AmoKind::Plain {
                0
            } else {
                u64::from_le_bytes(out)
            })
        })
    }

    /// An atomic on a word of a heap mapped here: a CPU atomic (SeqCst).
    /// Like a native AMO it follows the task's postponed AMOs and, being an
    /// SC atomic, its fabric stores to other locales.
    fn mapped_amo(
        &self,
        p: *mut u8,
        ty: AmoType,
        op: AmoOp,
        operand: u64,
        compare: u64,
        fetch: bool,
    ) -> Result<u64> {
        self.settle_fallback()?;
        if FABRIC_STORES.with(|f| f.get()) {
            self.force_stores_visible()?;
        }
        // SAFETY: p is an aligned word (checked by the caller) of a heap
        // mapped here; words targeted by atomics are only accessed
        // atomically (the API contract), and with the mapped path in use
        // every atomic on them is a CPU atomic (mapped.rs).
        unsafe { crate::cpu_amo::apply(p as u64, ty, op, operand, compare, fetch) }
            .map_err(Error::Unsupported)
    }

    /// An unordered (non-fetching, done whenever before the task's next
    /// fence) atomic: on a mapped word it is done at once and `Ok(true)`
    /// returned; `Ok(false)`: the word is not mapped here, the caller
    /// buffers it.
    pub fn amo_unordered_mapped(
        &self,
        target: GlobalAddr,
        ty: AmoType,
        op: AmoOp,
        operand: u64,
    ) -> Result<bool> {
        if !self.mapped.in_use() {
            return Ok(false);
        }
        let Some(p) = self.mapped.translate(target.locale, target.addr, ty.size()) else {
            return Ok(false);
        };
        self.check_atomic_target(target, ty)?;
        // SAFETY: as in mapped_amo.
        unsafe { crate::cpu_amo::apply(p as u64, ty, op, operand, 0, false) }
            .map_err(Error::Unsupported)?;
        Ok(true)
    }

    /// Checks what every remote atomic needs whichever way it goes (native
    /// or through an AM): a valid locale and an address aligned to the type.
    pub fn check_atomic_target(&self, target: GlobalAddr, ty: AmoType) -> Result<()> {
        self.check_locale(target.locale)?;
        if target.addr % ty.size() as u64 != 0 {
            return Err(Error::Misaligned {
                locale: target.locale,
                addr: target.addr,
                align: ty.size(),
                what: "remote atomic",
            });
        }
        Ok(())
    }

    /// The MCM boundary on the calling thread's transmit context: every
    /// store it issued (PUTs, non-fetching AMOs) becomes visible at its
    /// target before this returns.
    pub fn force_visible(&self) -> Result<()> {
        self.settle_fallback()?;
        self.force_stores_visible()
    }

    /// The boundary's part for the mapped path: the calling CPU's stores to
    /// mapped heaps are globally visible (its store buffer drained) before
    /// anything after the boundary (docs/mcm.md, "The mapped path").
    #[inline]
    fn mapped_boundary(&self) {
        if self.mapped.in_use() {
            std::sync::atomic::fence(Ordering::SeqCst);
        }
    }

    /// The boundary without waiting for postponed AMOs via AM: only the
    /// PUTs and native AMOs of the calling thread's context. For the AM
    /// layer, which orders its own AMOs.
    pub fn force_stores_visible(&self) -> Result<()> {
        self.mapped_boundary();
        self.with_ctx(|ctx| self.selector.force_visible(ctx))?;
        FABRIC_STORES.with(|f| f.set(false));
        Ok(())
    }

    fn settle_fallback(&self) -> Result<()> {
        if !POSTPONED_AMOS.with(|p| p.get()) {
            return Ok(());
        }
        match self.amo_fallback.get() {
            Some(fb) => fb.settle(),
            None => Ok(()),
        }
    }

    /// The boundary on every transmit context of this locale (barrier,
    /// finalize): what any thread stored before is visible after it.
    pub fn force_visible_all(&self) -> Result<()> {
        self.mapped_boundary();
        let mut first_err = self.settle_fallback().err();
        for c in &self.contexts {
            if let Err(e) = self.selector.force_visible(&mut c.lock()) {
                first_err.get_or_insert(e);
            }
        }
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

    /// Installs the AM layer's no-op as the proof that native AMOs are
    /// visible (see [`VisibilityProver`]). Later calls are ignored.
    pub fn set_prover(&self, prover: Arc<dyn VisibilityProver>) {
        let _ = self.prover.set(prover);
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
        r
    }

    fn stop_progress(&self) {
        self.stop.store(true, Ordering::Release);
        self.mapped.ring_self();
        if let Some(h) = self.progress.lock().take() {
            let _ = h.join();
        }
    }

    /// Installs the path for atomics that are not native (the AM layer).
    /// Later calls are ignored.
    pub fn set_amo_fallback(&self, fb: Arc<dyn AmoFallback>) {
        let _ = self.amo_fallback.set(fb);
    }

    /// Whether (ty, op, fetch) is done natively by the provider.
    pub fn amo_is_native(&self, ty: AmoType, op: AmoOp, fetch: bool) -> bool {
        self.native.supports(ty, op, AmoKind::of(op, fetch))
    }

    /// Stops the built-in progress thread: the caller (the AM handler) takes
    /// over polling the receive CQ with [`Comm::poll_rx`] from now on.
    pub fn take_over_progress(&self) {
        self.stop_progress();
    }

    /// Reads receive-side completions (and drives progress for RMA
    /// targeting this locale). Waits up to `timeout_ms` on blocking CQs.
    pub fn poll_rx(
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
    pub unsafe fn post_landing_zone(&self, buf: *mut u8, len: usize, context: usize) -> Result<()> {
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
    pub fn set_min_multi_recv(&self, bytes: usize) -> Result<()> {
        self.rx_ep
            .set_opt_usize(sys::FI_OPT_MIN_MULTI_RECV as i32, bytes)
            .map_err(Error::Ofi)
    }

    /// Sends the AM request `msg` to `target`'s receive endpoint through the
    /// MCM selector (which first makes the caller's stores visible as the
    /// mode says) and waits for local completion (the buffer may be reused
    /// on return). `msg` must lie in the registered heap when the provider
    /// needs `FI_MR_LOCAL`.
    pub fn send(&self, target: Locale, msg: &[u8]) -> Result<()> {
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
        })?;
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
    pub fn send_from_progress(&self, target: Locale, msg: &[u8]) -> Result<bool> {
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
        let mut ctx = self.contexts[PROGRESS_CTX].lock();
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
    pub fn reap_progress_sends(&self) -> Result<()> {
        self.contexts[PROGRESS_CTX]
            .lock()
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
/// waits for the operation.
#[must_use = "a non-blocking operation must be waited for before its buffer is reused"]
pub struct NbHandle<'a> {
    comm: &'a Comm,
    ctx: usize,
    seq: u64,
    done: bool,
    _buf: std::marker::PhantomData<&'a mut [u8]>,
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
            done: true,
            _buf: std::marker::PhantomData,
        }
    }

    /// Whether the operation has completed (reaps completions first).
    pub fn test(&mut self) -> Result<bool> {
        if !self.done {
            let mut ctx = self.comm.contexts[self.ctx].lock();
            if !ctx.nb_done(self.seq) {
                ctx.progress()?;
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
        let mut idle = 0u32;
        while !self.test()? {
            idle += 1;
            if idle > 64 {
                std::thread::yield_now();
            }
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
