//! The AM layer of one locale: the initiator side (requests, done slots,
//! waiting) and the target side (what each AM kind does once it arrives).
//!
//! Exists to hold everything an AM needs on both ends in one object that the
//! handler threads, the executor jobs and the user's threads share. The
//! threads themselves (poller, handlers) live in `handler`.
//!
//! One job per file: this one holds the state, start-up, the facts and the
//! shutdown; `initiator` sends requests and waits for their done slots,
//! `target` runs bodies and replies, `atomics` is the AM half of comm-ofi's
//! CPU route, `seam` the `AmLayer` contract comm-ofi calls.

use crate::config::{AmConfig, DoneMode};
use crate::error::{Error, Result};
use crate::executor::{Job, Spawner};
use crate::idle::Idle;
use crate::registry::{self, fn_id, FnId};
use crate::slot::{self, HeapSlot};
use crate::wire::{self, Header, Op, FLAG_BLOCKING, FLAG_FAST, HEADER, INLINE_MAX, MAX_REQUEST};
use comm_ofi::cpu_amo;
use comm_ofi::Backoff;
use comm_ofi::Counter;
use comm_ofi::{
    AmLayer, AmoReply, AmoRequest, AmoRoute, Comm, GlobalAddr, Locale, PostponedAmo, ProofRequest,
};
use crossbeam_queue::SegQueue;
use parking_lot::Mutex;
use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

/// The first nap of a thread waiting in [`Am::finalize`] for its peers.
const FINALIZE_NAP: Duration = Duration::from_micros(100);
/// Its naps double this many times (to 6.4 ms), each peer's shutdown
/// ending the nap at once.
const FINALIZE_NAP_DOUBLINGS: u32 = 6;

mod initiator;
mod memory_ops;
pub(crate) mod seam;
mod target;

thread_local! {
    /// Set on this locale's handler threads: a wait there runs other handler work.
    pub(crate) static IS_HANDLER: Cell<bool> = const { Cell::new(false) };
}

/// What a body sees of its execution.
pub struct Ctx<'a> {
    pub(crate) am: &'a Am,
    pub(crate) caller: Locale,
}

impl Ctx<'_> {
    /// The AM layer (for nested on-statements, AMOs, RMA).
    pub fn am(&self) -> &Am {
        self.am
    }
    /// The locale that sent the request.
    pub fn caller(&self) -> Locale {
        self.caller
    }
    /// The locale the body runs on.
    pub fn here(&self) -> Locale {
        self.am.here
    }
}

/// An AM body: gets the execution context and the argument bytes, returns the
/// reply bytes (empty for none).
pub type Body = Arc<BodyFn>;

/// The function type of a body.
pub type BodyFn = dyn Fn(&Ctx<'_>, &[u8]) -> Vec<u8> + Send + Sync;

/// Id → body table of one locale (the generic table of
/// [`crate::registry`] holding this layer's bodies).
pub type Registry = registry::Registry<BodyFn>;

/// A registered body.
pub(crate) type Entry = registry::Entry<BodyFn>;

impl registry::Registry<BodyFn> {
    /// Registers `body` under `name`; returns its id ([`fn_id`]`(name)`).
    pub fn register<F>(&self, name: &str, body: F) -> Result<FnId>
    where
        F: Fn(&Ctx<'_>, &[u8]) -> Vec<u8> + Send + Sync + 'static,
    {
        let id = fn_id(name);
        self.insert(id.0, name, Arc::new(body))?;
        Ok(id)
    }

    /// Registers `body` under a caller-chosen id below 2^63 (C ABI, runtimes
    /// with their own numbering). `name` is for messages only.
    pub fn register_raw<F>(&self, id: u64, name: &str, body: F) -> Result<FnId>
    where
        F: Fn(&Ctx<'_>, &[u8]) -> Vec<u8> + Send + Sync + 'static,
    {
        Self::check_raw(id, name)?;
        self.insert(id, name, Arc::new(body))?;
        Ok(FnId(id))
    }
}

/// Counters of one locale (monotonic; for tests and diagnostics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Requests sent.
    pub sent: u64,
    /// Requests received.
    pub received: u64,
    /// Bodies run here (from any locale, including this one).
    pub executed: u64,
    /// Atomics carried out here for AMs.
    pub amos: u64,
    /// Landing-zone halves reposted after the provider retired them.
    pub lz_reposts: u64,
    /// Received messages dropped as malformed (each with a log line).
    pub dropped: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    pub sent: AtomicU64,
    pub received: AtomicU64,
    pub executed: AtomicU64,
    pub amos: AtomicU64,
    pub lz_reposts: AtomicU64,
    pub dropped: AtomicU64,
}

/// Work for the handler threads: fast bodies, atomics, no-ops.
pub(crate) struct Work {
    pub h: Header,
    pub payload: Vec<u8>,
}

/// A pool of fixed-size buffers in the registered heap (done slots, send
/// buffers), grown a chunk at a time.
pub(crate) struct BufPool {
    free: SegQueue<u64>,
    size: usize,
    chunk: usize,
}

impl BufPool {
    fn new(size: usize, chunk: usize) -> BufPool {
        BufPool {
            free: SegQueue::new(),
            size,
            chunk,
        }
    }

    fn get(&self, comm: &Comm) -> Result<u64> {
        if let Some(a) = self.free.pop() {
            return Ok(a);
        }
        let base = comm.alloc(self.size * self.chunk, 128)?.addr;
        for i in 1..self.chunk {
            self.free.push(base + (i * self.size) as u64);
        }
        Ok(base)
    }

    fn put(&self, a: u64) {
        self.free.push(a);
    }

    /// Allocates the first chunk now, so that the first `chunk` buffers in
    /// use at once never need the heap (replies still go out when the
    /// program has filled it).
    pub(crate) fn reserve(&self, comm: &Comm) -> Result<()> {
        if self.free.is_empty() {
            let a = self.get(comm)?;
            self.put(a);
        }
        Ok(())
    }
}

/// One locale's AM layer. Create it with [`crate::start`].
pub struct Am {
    pub(crate) comm: Arc<Comm>,
    pub(crate) cfg: AmConfig,
    pub(crate) registry: Registry,
    pub(crate) spawner: Arc<dyn Spawner>,
    pub(crate) me: Weak<Am>,
    pub(crate) here: Locale,
    pub(crate) n: Locale,
    pub(crate) hq: SegQueue<Work>,
    /// Answers of the AM poller (blocking no-ops, atomics) it could not send
    /// yet (queue full): the request and its answer.
    pub(crate) deferred_answers: SegQueue<(Header, wire::WordReply)>,
    /// Handler threads asleep for lack of work.
    pub(crate) idle: Idle,
    slots: BufPool,
    sendbufs: BufPool,
    /// Landing zone (both halves) and the size of one half.
    pub(crate) lz: u64,
    pub(crate) lz_half: usize,
    /// Waits block (sleep) rather than spin (`sockets`, whose progress
    /// thread starves when we spin).
    pub(crate) block_wait: bool,
    /// Whether non-fetching AMOs via AM may be postponed (comm-ofi decides
    /// per call; see `comm_ofi::amo_route`).
    delay_nf: bool,
    pub(crate) stop_poll: AtomicBool,
    pub(crate) stop_handlers: AtomicBool,
    pub(crate) shutdowns: AtomicUsize,
    /// The thread waiting in [`Am::finalize`] for the peers' shutdowns
    /// (unparked by each one; see there).
    pub(crate) finalizer: Mutex<Option<std::thread::Thread>>,
    finalized: AtomicBool,
    pub(crate) poller: Mutex<Option<JoinHandle<()>>>,
    pub(crate) handlers: Mutex<Vec<JoinHandle<()>>>,
    pub(crate) counters: Counters,
    /// The receive side (poller thread, idle workers).
    pub(crate) poll: crate::poll::PollShared,
}

impl std::fmt::Debug for Am {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Am")
            .field("here", &self.here)
            .field("n", &self.n)
            .field("cfg", &self.cfg)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

fn into_comm(e: Error) -> comm_ofi::Error {
    match e {
        Error::Comm(c) => c,
        other => comm_ofi::Error::Unsupported(other.to_string()),
    }
}

/// An error text that fits a done slot (inline, no heap needed).
fn inline_error(msg: String) -> Vec<u8> {
    let mut end = msg.len().min(wire::SLOT_INLINE);
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    msg.as_bytes()[..end].to_vec()
}

fn bad_locale(locale: Locale, n: Locale) -> Error {
    Error::Comm(comm_ofi::Error::InvalidLocale {
        locale,
        num_locales: n,
    })
}

impl Am {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        comm: Arc<Comm>,
        cfg: AmConfig,
        registry: Registry,
        spawner: Arc<dyn Spawner>,
        lz: u64,
        lz_half: usize,
        block_wait: bool,
    ) -> Arc<Am> {
        let here = comm.here();
        let n = comm.num_locales();
        let delay_nf = cfg.delay_amo_done && cfg.handlers == 1;
        let poll = crate::poll::PollShared::new(&comm, &cfg, block_wait);
        Arc::new_cyclic(|me| Am {
            delay_nf,
            comm,
            cfg,
            registry,
            spawner,
            me: me.clone(),
            here,
            n,
            hq: SegQueue::new(),
            deferred_answers: SegQueue::new(),
            idle: Idle::default(),
            slots: BufPool::new(wire::SLOT_SIZE, 64),
            sendbufs: BufPool::new(MAX_REQUEST.next_multiple_of(128), 32),
            lz,
            lz_half,
            block_wait,
            stop_poll: AtomicBool::new(false),
            stop_handlers: AtomicBool::new(false),
            shutdowns: AtomicUsize::new(0),
            finalizer: Mutex::new(None),
            finalized: AtomicBool::new(false),
            poller: Mutex::new(None),
            handlers: Mutex::new(Vec::new()),
            counters: Counters::default(),
            poll,
        })
    }

    /// Allocates the first done slots and send buffers (see [`BufPool::reserve`]).
    pub(crate) fn reserve_buffers(&self) -> Result<()> {
        self.slots.reserve(&self.comm)?;
        self.sendbufs.reserve(&self.comm)
    }

    pub(crate) fn arc(&self) -> Arc<Am> {
        self.me.upgrade().expect("the Am outlives its threads")
    }

    // ----------------------------------------------------------------- facts

    /// The comm layer underneath.
    pub fn comm(&self) -> &Arc<Comm> {
        &self.comm
    }
    /// This locale.
    pub fn here(&self) -> Locale {
        self.here
    }
    /// Number of locales.
    pub fn num_locales(&self) -> Locale {
        self.n
    }
    /// The knobs in force.
    pub fn config(&self) -> &AmConfig {
        &self.cfg
    }
    /// Largest argument (and AM-mediated PUT) carried inside the request;
    /// larger ones are fetched by the target with a GET.
    pub fn inline_limit(&self) -> usize {
        INLINE_MAX
    }
    /// Largest reply returned inside the done slot; larger ones are fetched
    /// by the initiator with a GET.
    pub fn reply_inline_limit(&self) -> usize {
        wire::SLOT_INLINE
    }
    /// This locale's body table.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }
    /// Counters.
    pub fn stats(&self) -> Stats {
        let c = &self.counters;
        Stats {
            sent: c.sent.load(Ordering::Relaxed),
            received: c.received.load(Ordering::Relaxed),
            executed: c.executed.load(Ordering::Relaxed),
            amos: c.amos.load(Ordering::Relaxed),
            lz_reposts: c.lz_reposts.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
        }
    }

    /// Registers a body under `name` (see [`Registry::register`]). Every
    /// locale must register it before any locale sends it (register before
    /// [`crate::start`] through [`crate::Options`], or register everywhere and
    /// then call [`Am::barrier`]).
    pub fn register<F>(&self, name: &str, body: F) -> Result<FnId>
    where
        F: Fn(&Ctx<'_>, &[u8]) -> Vec<u8> + Send + Sync + 'static,
    {
        self.registry.register(name, body)
    }

    /// Registers a body under a raw id (see [`Registry::register_raw`]).
    pub fn register_raw<F>(&self, id: u64, name: &str, body: F) -> Result<FnId>
    where
        F: Fn(&Ctx<'_>, &[u8]) -> Vec<u8> + Send + Sync + 'static,
    {
        self.registry.register_raw(id, name, body)
    }

    /// Job-wide barrier (every store before it is visible after it).
    pub fn barrier(&self) -> Result<()> {
        Ok(self.comm.barrier()?)
    }

    // ------------------------------------------------------------- shutdown

    /// Collective, orderly end of the AM layer and then of the comm layer:
    /// tells every peer this locale sends nothing more, waits until every
    /// peer said the same (so every AM sent to us has arrived), runs what is
    /// still queued, stops executors and handlers, finalizes comm (barrier)
    /// while still polling, then stops polling. Idempotent.
    ///
    /// No AM may be started once a locale has entered finalize, except by
    /// bodies that are still running, whose requests are delivered and run.
    pub fn finalize(&self) -> Result<()> {
        if self.finalized.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        for t in (0..self.n).filter(|t| *t != self.here) {
            self.send_msg(t, &Header::new(Op::Shutdown, 0, self.here, 0), &[])?;
        }
        // Waits for the other locales, which may work on this one for long
        // yet: yields, then parks for FINALIZE_NAP doubling to 6.4 ms; each
        // peer's shutdown unparks it. (Naps of 100 us throughout woke this
        // core 10,000 times a second while peers still used it, and every
        // round trip against this locale, whose poller shares the core,
        // took 10-15% longer: udp;ofi_rxd GET 8 B 13.7 -> 12.0 us.)
        *self.finalizer.lock() = Some(std::thread::current());
        let mut backoff = Backoff::new(0, 256);
        let mut silent = comm_ofi::peer_timeout::PeerWait::new();
        while self.shutdowns.load(Ordering::Acquire) < self.n - 1
            || !self.hq.is_empty()
            || !self.spawner.idle()
        {
            if silent.expired() {
                let heard = self.shutdowns.load(Ordering::Acquire);
                return Err(Error::Shutdown(format!(
                    "finalize on locale {}: {} of {} peers said they were done; {}",
                    self.here,
                    heard,
                    self.n - 1,
                    comm_ofi::peer_timeout::silent_text("word", silent.limit().unwrap_or_default())
                )));
            }
            if !backoff.step() {
                std::thread::park_timeout(
                    backoff.doubling_nap(FINALIZE_NAP, FINALIZE_NAP_DOUBLINGS),
                );
            }
        }
        self.finalizer.lock().take();
        self.comm.force_visible()?;
        self.comm.oob().barrier().map_err(comm_ofi::Error::from)?;
        // Everybody has drained: stop the threads that run bodies.
        self.spawner.shutdown();
        self.stop_handlers.store(true, Ordering::Release);
        self.idle.wake_all();
        let hs: Vec<_> = self.handlers.lock().drain(..).collect();
        for h in hs {
            let _ = h.join();
        }
        // Barrier of comm while peers' last RMA against us still progresses.
        let r = self.comm.finalize();
        self.stop_poll.store(true, Ordering::Release);
        self.interrupt_wait();
        self.poll.uncover();
        self.comm.mapped().ring_self();
        if let Some(p) = self.poller.lock().take() {
            let _ = p.join();
        }
        tracing::debug!(locale = self.here, stats = ?self.stats(), "AM layer finalized");
        Ok(r?)
    }
}
