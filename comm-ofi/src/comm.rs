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
//! One job per file: this one holds the state and the accessors; `init` the
//! start-up, `threads` which context a thread uses, `rma` PUT/GET and their
//! non-blocking handles, `amo_ops` the atomics (their routes and rules are
//! `crate::amo_route`), `boundary` the MCM boundaries, barrier and finalize,
//! `am_service` what the AM layer is offered (`AmPort`), `idle` the pollers'
//! idle policy and the start-up progress thread. The children extend
//! [`Comm`] and take what they need from here; this file names nothing of
//! theirs but the idle policy it holds, so the modules form layers
//! (`scripts/check-layers`).

use crate::am_seam::AmLayer;
use crate::amo::{AmoType, NativeAtomics};
use crate::amo_route::{AmoRoutes, Settle};
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

pub(crate) mod am_service;
mod amo_ops;
mod boundary;
mod idle;
mod init;
pub(crate) mod rma;
mod threads;

pub use idle::IdlePolicy;

/// A locale number, `0..num_locales`: the policy's own (`mcm::Locale`, a
/// `usize`), so a locale indexes per-locale tables and reaches the policy
/// without a conversion. Wire formats that carry one store it as `u32`.
pub use crate::addr::GlobalAddr;
pub use crate::provider::ProviderInfo;
pub use mcm::Locale;

/// What a locale knows about a peer: its address and its heap registration.
#[derive(Debug, Clone, Copy)]
struct Peer {
    fi_addr: crate::ofi::FiAddr,
    heap_base: u64,
    heap_size: u64,
    key: u64,
    /// What to subtract from a heap address for the provider's addressing
    /// (0 with `FI_MR_VIRT_ADDR`, else `heap_base`).
    heap_offset: u64,
    /// How this locale reaches its heap (the blocking PUT's one test).
    heap_path: HeapPath,
    /// Its registered static data (`statics`; size 0: none).
    statics: crate::statics::StaticSegment,
    static_key: u64,
}

impl Peer {
    /// The provider addressing of `addr` in its heap.
    #[inline]
    fn heap_remote(&self, addr: u64) -> RemoteBuf {
        RemoteBuf {
            fi_addr: self.fi_addr,
            addr: addr - self.heap_offset,
            key: self.key,
        }
    }
}

/// How this locale reaches a locale's heap: a copy of [`Mapped`]'s answer
/// beside the rest of what a PUT needs of the peer, so the common PUT looks
/// at one table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeapPath {
    /// Through the provider.
    Fabric,
    /// By a CPU copy at `addr + delta`: a heap mapped here, or this locale's
    /// own.
    Mapped {
        /// What to add to an address of that heap.
        delta: u64,
    },
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

/// One locale's communication layer. Its state is grouped by what owns
/// it: `Peers` (this file, `rma`), `AmoPlan` (`amo_ops`), `Contexts`
/// (`threads`), `AmSide` (`am_service`, `idle`) and `Registered` (memory and the fabric objects, dropped last); what every
/// part reads (locale, provider, configuration, the selector, the
/// counters) stays at the top.
pub struct Comm {
    pub(crate) me: Locale,
    n: Locale,
    pub(crate) prov: ProviderInfo,
    /// The MCM implementors of the mode in force.
    pub(crate) selector: Selector<TxContext>,
    /// Operation counters (off unless started).
    pub(crate) diag: Arc<crate::diag::CommDiagnostics>,
    peers: Peers,
    amos: AmoPlan,
    // Field order is drop order: contexts and endpoints before MRs before the heap.
    contexts: Contexts,
    am: AmSide,
    mem: Registered,
    oob: Box<dyn Oob>,
    cfg: Config,
    finalized: AtomicBool,
}

/// The other locales and how this one reaches each.
struct Peers {
    /// Per locale: its address and registrations.
    list: Vec<Peer>,
    /// The intra-node mapped path (peers' heaps mapped here).
    mapped: Arc<Mapped>,
    /// Where the locales live.
    hosts: HostLayout,
}

/// Where atomics go, fixed at start-up (see `amo_route`).
struct AmoPlan {
    /// Each type's route.
    routes: AmoRoutes,
    /// What the provider does natively (agreed by every locale).
    native: NativeAtomics,
}

/// The transmit contexts and who uses which.
struct Contexts {
    /// Which contexts serve whom.
    layout: Layout,
    /// The contexts, and who holds each.
    table: ContextTable<TxContext>,
    /// How `CTX_HAS_WORK` is kept (normally marked once settled, derived
    /// at boundaries; the two weakenings of issue 21 for the negative
    /// controls), decided once so that the PUT path tests one byte.
    work_flag: WorkFlag,
}

/// comm-ofi's side of the seam with the AM layer (`am_seam`): the layer,
/// the receive endpoint it polls, and the start-up progress thread that
/// polls it until then.
struct AmSide {
    /// The AM layer, once installed; shared with every context, which asks
    /// it for visibility proofs.
    layer: Arc<OnceLock<Arc<dyn AmLayer>>>,
    /// The domain lock receive polling takes where the provider needs it.
    rx_serial: Option<crate::ctx::DomainLock>,
    /// The start-up progress thread, until an AM poller takes over.
    progress: Mutex<Option<JoinHandle<()>>>,
    /// Tells it to stop.
    stop: Arc<AtomicBool>,
    /// The receive endpoint.
    rx_ep: Arc<Endpoint>,
}

/// Registered memory and the fabric objects under it, in drop order.
struct Registered {
    _tx_mrs: Vec<Mr>,
    _static_mr: Option<Mr>,
    mr: Mr,
    heap: Heap,
    _av: Arc<Av>,
    _domain: Arc<Domain>,
    _fabric: Arc<Fabric>,
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

/// Whether native AMOs are proved visible by a fetching atomic read of the
/// target's order dummy (the provider is one where that suffices and reads
/// 64-bit words natively) rather than by the AM layer's no-op.
fn proves_amos_by_atomic_read(provider: &str, native: &NativeAtomics) -> bool {
    crate::quirks::atomic_read_proves_amos(provider)
        && native.supports(
            AmoType::U64,
            crate::amo::AmoOp::Read,
            crate::amo::AmoForm::Fetch,
        )
}

impl Comm {
    /// The one-line description printed with `PGAS_VERBOSE=1`.
    pub fn describe(&self) -> String {
        format!(
            "pgas-comm: {} MCM mode, {} provider (ordering {}), {} locales, {} endpoints ({} tx \
             contexts, {} for other threads), {} heap, {} atomics, {} progress, {} local path{}",
            self.prov.mode,
            self.prov.name,
            self.prov.order_granted,
            self.n,
            if self.contexts.layout.workers_bound {
                "bound"
            } else {
                "unbound"
            },
            self.contexts.table.len(),
            self.contexts.layout.threads.len(),
            human_size(self.mem.heap.size()),
            match (self.peers.mapped.in_use(), self.amos.routes.native_types()) {
                (true, _) => "CPU (mapped path)".to_string(),
                (false, 0) if self.amos.native.any() => "CPU (PGAS_AMO_VIA_AM)".to_string(),
                (false, 0) => "no native".to_string(),
                (false, k) => format!(
                    "native ({k}/{} types{}{})",
                    AmoType::ALL.len(),
                    if proves_amos_by_atomic_read(&self.prov.name, &self.amos.native) {
                        ", proved by atomic read"
                    } else {
                        ""
                    },
                    if self.selector.amo_window() {
                        ", AMO window"
                    } else {
                        ""
                    }
                ),
            },
            match self.prov.wait {
                WaitMode::Spin => "polling",
                WaitMode::Block => "blocking-wait",
            },
            match (self.peers.mapped.path(), self.peers.mapped.mapped_peers()) {
                (LocalPath::Fabric, _) => "fabric".to_string(),
                (_, 0) if self.peers.hosts.local_count > 1 => "fabric (mapping failed)".to_string(),
                (_, 0) => "fabric (no co-located locale)".to_string(),
                (_, k) => format!(
                    "mapped ({k} of {} co-located peers)",
                    self.peers.hosts.local_count - 1
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
        &self.mem.heap
    }

    /// Allocates `size` bytes of remotely accessible memory on this locale.
    pub fn alloc(&self, size: usize, align: usize) -> Result<GlobalAddr> {
        Ok(GlobalAddr::new(self.me, self.mem.heap.alloc(size, align)?))
    }

    /// Allocates `size` bytes for the program (see [`Heap::alloc_user`]).
    pub fn alloc_user(&self, size: usize, align: usize) -> Result<GlobalAddr> {
        Ok(GlobalAddr::new(
            self.me,
            self.mem.heap.alloc_user(size, align)?,
        ))
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
        self.mem.heap.free(addr.addr).map_err(bad)
    }

    /// The address on `locale` at the same heap offset as `local` has here:
    /// allocations made in the same order on every locale line up.
    pub fn symmetric(&self, local: GlobalAddr, locale: Locale) -> Result<GlobalAddr> {
        self.check_locale(locale)?;
        self.heap_addr_on(local.addr, locale)
            .ok_or_else(|| Error::AddressOutOfHeap {
                locale: self.me,
                addr: local.addr,
                len: 0,
                base: self.mem.heap.base_addr(),
                end: self.mem.heap.base_addr() + self.mem.heap.size() as u64,
            })
    }

    /// [`Comm::symmetric`] without its error, inline: the address on
    /// `locale` of the byte at `local` in this locale's heap, or `None` if
    /// `local` is not in this locale's heap or `locale` is not a locale.
    #[inline]
    pub fn heap_addr_on(&self, local: u64, locale: Locale) -> Option<GlobalAddr> {
        let off = local
            .checked_sub(self.mem.heap.base_addr())
            .filter(|o| *o < self.mem.heap.size() as u64)?;
        let peer = self.peers.list.get(locale)?;
        Some(GlobalAddr::new(locale, peer.heap_base + off))
    }

    /// The address on `locale` of the static at `local` here (the
    /// executable's registered data, `statics`: same offset in every
    /// locale's segment, whatever ASLR did). An address outside this
    /// locale's registered static data is an error naming it.
    #[inline]
    pub fn static_addr(&self, local: u64, locale: Locale) -> Result<GlobalAddr> {
        let mine = self.peers.list[self.me].statics;
        match self.peers.list.get(locale) {
            Some(p) if mine.contains(local, 1) && p.statics.size == mine.size => Ok(
                GlobalAddr::new(locale, p.statics.base + (local - mine.base)),
            ),
            _ => self.static_addr_error(local, locale),
        }
    }

    /// Why [`Comm::static_addr`] refused (out of line).
    #[cold]
    #[inline(never)]
    fn static_addr_error(&self, local: u64, locale: Locale) -> Result<GlobalAddr> {
        self.check_locale(locale)?;
        let mine = self.peers.list[self.me].statics;
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
        let theirs = self.peers.list[locale].statics;
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
        at.locale < self.peers.list.len()
            && self.peers.list[at.locale].statics.contains(at.addr, len)
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
        let p = &self.peers.list[at.locale];
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
        let addr = at.addr - p.heap_offset;
        Ok(RemoteBuf {
            fi_addr: p.fi_addr,
            addr,
            key: p.key,
        })
    }

    fn local_desc(&self, ctx: &TxContext, ptr: *const u8, len: usize) -> *mut std::ffi::c_void {
        if self.mem.heap.contains(ptr as u64, len) {
            ctx.heap_desc()
        } else {
            std::ptr::null_mut()
        }
    }

    fn needs_bounce(&self, ptr: *const u8, len: usize) -> bool {
        self.prov.mr_mode.local() && !self.mem.heap.contains(ptr as u64, len)
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
