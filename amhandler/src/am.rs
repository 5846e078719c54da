//! The AM layer of one locale: the initiator side (requests, done slots,
//! waiting) and the target side (what each AM kind does once it arrives).
//!
//! Exists to hold everything an AM needs on both ends in one object that the
//! handler threads, the executor jobs and the user's threads share. The
//! threads themselves (poller, handlers) live in `handler`.

use crate::config::{AmConfig, DoneMode};
use crate::error::{Error, Result};
use crate::executor::{Job, Spawner};
use crate::idle::Idle;
use crate::registry::{Entry, FnId, Registry};
use crate::slot::{self, HeapSlot};
use crate::wire::{self, Header, Op, FLAG_BLOCKING, FLAG_FAST, HEADER, INLINE_MAX, MAX_REQUEST};
use comm_ofi::cpu_amo;
use comm_ofi::Backoff;
use comm_ofi::Counter;
use comm_ofi::{
    AmLayer, AmoOp, AmoReply, AmoRequest, AmoRoute, AmoType, Comm, GlobalAddr, Locale,
    PostponedAmo, ProofRequest,
};
use crossbeam_queue::SegQueue;
use parking_lot::Mutex;
use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

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
}

#[derive(Default)]
pub(crate) struct Counters {
    pub sent: AtomicU64,
    pub received: AtomicU64,
    pub executed: AtomicU64,
    pub amos: AtomicU64,
    pub lz_reposts: AtomicU64,
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
    /// No-op answers the progress thread could not send yet (queue full).
    pub(crate) deferred_nops: SegQueue<Header>,
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
    /// per call; see `comm_ofi::atomics`).
    delay_nf: bool,
    pub(crate) stop_poll: AtomicBool,
    pub(crate) stop_handlers: AtomicBool,
    pub(crate) shutdowns: AtomicU32,
    finalized: AtomicBool,
    pub(crate) poller: Mutex<Option<JoinHandle<()>>>,
    pub(crate) handlers: Mutex<Vec<JoinHandle<()>>>,
    pub(crate) counters: Counters,
    /// The receive side (poller thread, idle workers).
    pub(crate) poll: crate::handler::PollShared,
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

/// The AM layer as comm-ofi sees it (`comm_ofi::am_seam`): visibility
/// proofs and atomics on other locales' words. Holds the `Am` weakly (the
/// `Comm` it is installed in outlives nothing of ours).
#[derive(Debug)]
pub(crate) struct Bridge(pub Weak<Am>);

impl Bridge {
    fn am(&self) -> comm_ofi::Result<Arc<Am>> {
        self.0
            .upgrade()
            .ok_or_else(|| comm_ofi::Error::Unsupported("the AM layer is gone (finalized)".into()))
    }
}

impl AmLayer for Bridge {
    /// The blocking no-op: comm-ofi posts the request on the context that
    /// issued the AMOs, so provider ordering or a fence puts it behind them;
    /// the target's progress thread answers it (never a handler, which could
    /// itself be waiting on a proof), and the reply is the proof.
    fn prepare_proof(&self, target: Locale) -> comm_ofi::Result<ProofRequest> {
        let am = self.am()?;
        let buf = am.sendbufs.get(&am.comm).map_err(into_comm)?;
        let slot = match am.slots.get(&am.comm) {
            Ok(s) => s,
            Err(e) => {
                am.sendbufs.put(buf);
                return Err(into_comm(e));
            }
        };
        slot::arm(&HeapSlot(slot));
        let h = Header::new(Op::Nop, FLAG_BLOCKING, am.here, slot);
        // SAFETY: buf is a pool buffer of at least MAX_REQUEST >= HEADER heap
        // bytes that only this request uses until it is returned.
        let out = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, HEADER) };
        h.encode(out);
        Ok(ProofRequest {
            target,
            msg: buf as *const u8,
            len: HEADER,
            token: [buf, slot],
        })
    }

    fn await_proof(&self, req: ProofRequest) -> comm_ofi::Result<()> {
        let am = self.am()?;
        let [buf, slot] = req.token;
        am.sendbufs.put(buf);
        am.counters.sent.fetch_add(1, Ordering::Relaxed);
        // Plain waiting, never helping: the caller holds its transmit
        // context, which helping could need; our poller sets the word.
        let w = am.wait_word_plain(slot);
        let r = am.take_reply(req.target, slot, w);
        am.slots.put(slot);
        r.map(|_| ()).map_err(into_comm)
    }

    fn cancel_proof(&self, req: ProofRequest) {
        if let Ok(am) = self.am() {
            am.sendbufs.put(req.token[0]);
            am.slots.put(req.token[1]);
        }
    }

    fn may_postpone(&self) -> bool {
        self.am().is_ok_and(|am| am.delay_nf)
    }

    fn send_amo(&self, req: &AmoRequest, postpone: bool) -> comm_ofi::Result<AmoReply> {
        self.am()?.send_amo(req, postpone).map_err(into_comm)
    }

    fn await_postponed(&self, amo: PostponedAmo) -> comm_ofi::Result<()> {
        let am = self.am()?;
        // The token is the done slot of the postponed request, ours until
        // returned below.
        let w = am.wait_word(amo.token);
        let r = am.take_reply(amo.target, amo.token, w);
        am.slots.put(amo.token);
        r.map(|_| ()).map_err(into_comm)
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
        let poll = crate::handler::PollShared::new(&comm, &cfg, block_wait);
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
            deferred_nops: SegQueue::new(),
            idle: Idle::default(),
            slots: BufPool::new(wire::SLOT_SIZE, 64),
            sendbufs: BufPool::new(MAX_REQUEST.next_multiple_of(128), 32),
            lz,
            lz_half,
            block_wait,
            stop_poll: AtomicBool::new(false),
            stop_handlers: AtomicBool::new(false),
            shutdowns: AtomicU32::new(0),
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

    // ------------------------------------------------------------ initiator

    fn check_open(&self) -> Result<()> {
        if self.finalized.load(Ordering::Acquire) {
            return Err(Error::Shutdown("finalize() was called".into()));
        }
        Ok(())
    }

    fn check_target(&self, locale: Locale) -> Result<()> {
        self.check_open()?;
        if locale >= self.n {
            return Err(bad_locale(locale, self.n));
        }
        Ok(())
    }

    fn entry(&self, id: FnId) -> Result<Entry> {
        self.registry.get(id.0).ok_or_else(|| {
            Error::Registry(format!(
                "body id {:#x} is not registered on locale {} (the sender); register it on every \
                 locale",
                id.0, self.here
            ))
        })
    }

    /// Sends one request (header + inline payload) from a heap buffer.
    pub(crate) fn send_msg(&self, target: Locale, h: &Header, payload: &[u8]) -> Result<()> {
        let total = HEADER + payload.len();
        if total > MAX_REQUEST {
            return Err(Error::TooLarge {
                locale: target,
                reason: format!(
                    "{total}-byte request exceeds the {MAX_REQUEST}-byte maximum (internal error: \
                     payloads above {INLINE_MAX} bytes must go by GET)"
                ),
            });
        }
        let buf = self.sendbufs.get(&self.comm)?;
        // SAFETY: buf is a pool buffer of at least MAX_REQUEST heap bytes that
        // only this call uses until it is returned below.
        let out = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, total) };
        h.encode(&mut out[..HEADER]);
        out[HEADER..].copy_from_slice(payload);
        let r = self.comm.am_port().send(target, out);
        self.sendbufs.put(buf);
        r?;
        self.counters.sent.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Sends a request; if blocking, waits for the reply and returns it.
    fn call(&self, target: Locale, mut h: Header, payload: &[u8]) -> Result<Vec<u8>> {
        if !h.blocking() {
            h.slot = 0;
            self.send_msg(target, &h, payload)?;
            return Ok(Vec::new());
        }
        let slot = self.slots.get(&self.comm)?;
        slot::arm(&HeapSlot(slot));
        h.slot = slot;
        if let Err(e) = self.send_msg(target, &h, payload) {
            self.slots.put(slot);
            return Err(e);
        }
        let w = self.wait_word(slot);
        let r = self.take_reply(target, slot, w);
        self.slots.put(slot);
        r
    }

    /// Reads a reply out of a done slot (or fetches a large one).
    fn take_reply(&self, target: Locale, slot: u64, w: u64) -> Result<Vec<u8>> {
        let (len, large, error) = wire::parse_done(w);
        let bytes = if large {
            // The reply area holds the target's 8-byte address of the reply.
            let a: [u8; 8] = slot::take(&HeapSlot(slot), 8).try_into().expect("8 bytes");
            let addr = u64::from_le_bytes(a);
            let mut v = vec![0u8; len];
            let got = self.comm.get(&mut v, GlobalAddr::new(target, addr));
            let mut fh = Header::new(Op::Free, 0, self.here, 0);
            fh.a = addr;
            let freed = self.send_msg(target, &fh, &[]);
            got?;
            freed?;
            v
        } else {
            if len > wire::SLOT_INLINE {
                return Err(Error::Remote {
                    locale: target,
                    msg: format!("garbled done word {w:#x}"),
                });
            }
            slot::take(&HeapSlot(slot), len)
        };
        if error {
            return Err(Error::Remote {
                locale: target,
                msg: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
        Ok(bytes)
    }

    /// The ladder of a thread waiting for a reply word: `spin` rounds of
    /// spinning, then yields; on providers whose waits block, after
    /// `yields` rounds it sleeps `sleep` per round instead.
    fn wait_backoff(&self, spin: u32, yields: u32, sleep: Duration) -> Backoff {
        if self.block_wait {
            Backoff::new(spin, yields).then_sleep(sleep)
        } else {
            Backoff::new(spin, spin)
        }
    }

    /// Waits until `w` is nonzero without helping (the caller holds its
    /// transmit context, which helping could need); spins, yields, then
    /// sleeps briefly on providers whose waits block.
    pub(crate) fn wait_word_plain(&self, slot: u64) -> u64 {
        let mut backoff = self.wait_backoff(64, 512, Duration::from_micros(20));
        loop {
            if let Some(v) = slot::poll(&HeapSlot(slot)) {
                return v;
            }
            backoff.snooze();
        }
    }

    /// Waits until `w` is nonzero. Progress continues meanwhile (the poller
    /// polls); an executor thread runs other queued bodies, a handler thread
    /// other handler work, so nested and recursive on-statements complete.
    pub(crate) fn wait_word(&self, slot: u64) -> u64 {
        let on_handler = IS_HANDLER.with(|h| h.get());
        let mut backoff = self.wait_backoff(32, 256, Duration::from_micros(50));
        loop {
            if let Some(v) = slot::poll(&HeapSlot(slot)) {
                return v;
            }
            let helped = if on_handler {
                match self.hq.pop() {
                    Some(work) => {
                        self.handle(work);
                        true
                    }
                    None => false,
                }
            } else {
                self.spawner.help()
            };
            if helped {
                backoff.reset();
                continue;
            }
            backoff.snooze();
        }
    }

    fn exec(&self, locale: Locale, id: FnId, args: &[u8], flags: u8) -> Result<Vec<u8>> {
        self.check_target(locale)?;
        self.comm.diagnostics().count(match flags {
            f if f & FLAG_BLOCKING == 0 => Counter::OnNb,
            f if f & FLAG_FAST != 0 => Counter::OnFast,
            _ => Counter::OnBlocking,
        });
        let entry = self.entry(id)?;
        if locale == self.here {
            if flags & FLAG_BLOCKING != 0 {
                return self
                    .run_body(&entry, self.here, args)
                    .map_err(|msg| Error::Remote { locale, msg });
            }
            // MCM: the body is a new task; it must see the caller's stores
            // (the task-create boundary, on the caller's context).
            if !self
                .comm
                .is_weakened(comm_ofi::Weakening::LocalNbOnNoTaskCreate)
            {
                self.comm.task_create()?;
            }
            let am = self.arc();
            let args = args.to_vec();
            self.spawner.spawn(Box::new(move || {
                let r = am.run_body(&entry, am.here, &args);
                am.finish_nb(am.here, &entry.name, r);
            }));
            return Ok(Vec::new());
        }
        // MCM: the on-statement is a boundary: the body must see our stores.
        self.comm.force_visible()?;
        if args.len() <= INLINE_MAX {
            let mut h = Header::new(Op::ExecOn, flags, self.here, 0);
            h.a = id.0;
            h.len = args.len() as u32;
            return self.call(locale, h, args);
        }
        // Large arguments: the target GETs them from our heap.
        let buf = self
            .comm
            .alloc(args.len(), 64)
            .map_err(|e| Error::TooLarge {
                locale,
                reason: format!(
                    "{} argument bytes do not fit in the registered heap: {e}",
                    args.len()
                ),
            })?;
        // SAFETY: a fresh heap allocation of args.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(args.as_ptr(), buf.addr as *mut u8, args.len()) };
        let mut h = Header::new(Op::ExecOnLarge, flags, self.here, 0);
        h.a = id.0;
        h.b = buf.addr;
        h.len = u32::try_from(args.len()).map_err(|_| Error::TooLarge {
            locale,
            reason: format!("{} argument bytes exceed the 4 GiB limit", args.len()),
        })?;
        let r = self.call(locale, h, &[]);
        if flags & FLAG_BLOCKING != 0 || r.is_err() {
            // Blocking: the target fetched them before replying. Non-blocking:
            // the target sends Free once it has fetched them.
            self.comm.free(buf)?;
        }
        r
    }

    /// Runs body `id` on `locale` with `args` and waits for it (a blocking
    /// on-statement); returns the body's reply bytes. The body runs on an
    /// executor thread there and may itself do remote operations.
    pub fn execute_on(&self, locale: Locale, id: FnId, args: &[u8]) -> Result<Vec<u8>> {
        self.exec(locale, id, args, FLAG_BLOCKING)
    }

    /// Starts body `id` on `locale` and returns at once (fire and forget).
    /// A failure of the body there takes the job down.
    pub fn execute_on_nb(&self, locale: Locale, id: FnId, args: &[u8]) -> Result<()> {
        self.exec(locale, id, args, 0).map(|_| ())
    }

    /// Blocking on-statement whose body runs in the target's handler thread:
    /// for short bodies that do not block (no remote operations).
    pub fn execute_on_fast(&self, locale: Locale, id: FnId, args: &[u8]) -> Result<Vec<u8>> {
        self.exec(locale, id, args, FLAG_BLOCKING | FLAG_FAST)
    }

    /// Non-blocking fast AM: the body runs in the target's handler thread, in
    /// the order this locale sent them (with one handler thread).
    pub fn execute_on_fast_nb(&self, locale: Locale, id: FnId, args: &[u8]) -> Result<()> {
        self.exec(locale, id, args, FLAG_FAST).map(|_| ())
    }

    /// Blocking no-op: returns once `locale`'s handler has seen the request
    /// and everything this locale sent before it (liveness, and proof that
    /// earlier native atomics reached the target).
    pub fn nop(&self, locale: Locale) -> Result<()> {
        self.check_target(locale)?;
        // Through the network even to this locale: it proves that our own
        // poller has processed what was sent to us before (native atomics
        // included).
        self.call(
            locale,
            Header::new(Op::Nop, FLAG_BLOCKING, self.here, 0),
            &[],
        )
        .map(|_| ())
    }

    /// A remote atomic, by its type's route (native, or CPU atomics at the
    /// word's owner): `Comm::amo`, which owns the routing and the ordering.
    pub fn amo(
        &self,
        target: GlobalAddr,
        ty: AmoType,
        op: AmoOp,
        operand: u64,
        compare: u64,
        fetch: bool,
    ) -> Result<u64> {
        Ok(self.comm.amo(target, ty, op, operand, compare, fetch)?)
    }

    /// An atomic carried out with CPU atomics at the word's owner whatever
    /// the type's route: for measuring the AM path where the provider has
    /// native atomics. Never use it on a word that is also used by the
    /// type's own route (NIC and CPU atomics are not atomic together).
    #[doc(hidden)]
    pub fn amo_via_am(
        &self,
        target: GlobalAddr,
        ty: AmoType,
        op: AmoOp,
        operand: u64,
        compare: u64,
        fetch: bool,
    ) -> Result<u64> {
        Ok(self
            .comm
            .amo_on_route(AmoRoute::Cpu, target, ty, op, operand, compare, fetch)?)
    }

    /// Sends an atomic to its word's owner (the AM half of comm-ofi's CPU
    /// route; comm-ofi has settled and ordered what must come first). With
    /// `postpone`, returns once it is sent; comm-ofi keeps the handle.
    fn send_amo(&self, req: &AmoRequest, postpone: bool) -> Result<AmoReply> {
        self.check_target(req.target.locale)?;
        let mut h = Header::new(Op::Amo, FLAG_BLOCKING, self.here, 0);
        h.a = req.target.addr;
        h.b = req.operand;
        h.d = req.compare;
        h.c = cpu_amo::type_code(req.ty) | cpu_amo::op_code(req.op) << 8 | (req.fetch as u32) << 16;
        if postpone {
            let slot = self.slots.get(&self.comm)?;
            slot::arm(&HeapSlot(slot));
            h.slot = slot;
            if let Err(e) = self.send_msg(req.target.locale, &h, &[]) {
                self.slots.put(slot);
                return Err(e);
            }
            return Ok(AmoReply::Postponed(PostponedAmo {
                target: req.target.locale,
                token: slot,
            }));
        }
        let r = self.call(req.target.locale, h, &[])?;
        let mut w = [0u8; 8];
        let k = r.len().min(8);
        w[..k].copy_from_slice(&r[..k]);
        Ok(AmoReply::Done(u64::from_le_bytes(w)))
    }

    fn local_amo(
        &self,
        addr: u64,
        ty: AmoType,
        op: AmoOp,
        operand: u64,
        compare: u64,
        fetch: bool,
    ) -> std::result::Result<u64, String> {
        if !self.comm.heap().contains(addr, ty.size()) {
            return Err(format!(
                "atomic target {addr:#x} (+{}) is outside the registered heap of locale {}",
                ty.size(),
                self.here
            ));
        }
        self.counters.amos.fetch_add(1, Ordering::Relaxed);
        // SAFETY: inside our heap and aligned (checked by apply); heap words
        // targeted by atomics are only accessed atomically (the API contract).
        unsafe { cpu_amo::apply(addr, ty, op, operand, compare, fetch) }
    }

    /// GET from memory of `locale` that is not registered there: the target
    /// reads it and PUTs it back. The range is checked there (an unmapped
    /// address is an error reply, not a crash).
    ///
    /// # Safety
    /// `addr..addr+dst.len()` on `locale` must not be written concurrently in
    /// a way the program's memory model forbids (a data race there).
    pub unsafe fn get_unregistered(&self, dst: &mut [u8], locale: Locale, addr: u64) -> Result<()> {
        self.check_target(locale)?;
        if dst.is_empty() {
            return Ok(());
        }
        if locale == self.here {
            let v = crate::rawmem::read(addr, dst.len())
                .map_err(|msg| Error::Remote { locale, msg })?;
            dst.copy_from_slice(&v);
            return Ok(());
        }
        self.comm.force_visible()?;
        let buf = self.comm.alloc(dst.len(), 64)?;
        let mut h = Header::new(Op::Get, FLAG_BLOCKING, self.here, 0);
        h.a = addr;
        h.b = buf.addr;
        h.len = match u32::try_from(dst.len()) {
            Ok(l) => l,
            Err(_) => {
                self.comm.free(buf)?;
                return Err(Error::TooLarge {
                    locale,
                    reason: format!("{}-byte GET exceeds the 4 GiB limit", dst.len()),
                });
            }
        };
        let r = self.call(locale, h, &[]);
        if r.is_ok() {
            // SAFETY: buf holds dst.len() bytes, written by the target before its done.
            unsafe {
                std::ptr::copy_nonoverlapping(buf.addr as *const u8, dst.as_mut_ptr(), dst.len())
            };
        }
        self.comm.free(buf)?;
        r.map(|_| ())
    }

    /// PUT to memory of `locale` that is not registered there: inline up to
    /// [`Am::inline_limit`] bytes, else the target GETs the data from our heap.
    ///
    /// # Safety
    /// Writing `addr..addr+src.len()` on `locale` must be what that program
    /// expects (it is its memory, not the heap); an unmapped or read-only
    /// range is an error reply.
    pub unsafe fn put_unregistered(&self, locale: Locale, addr: u64, src: &[u8]) -> Result<()> {
        self.check_target(locale)?;
        if src.is_empty() {
            return Ok(());
        }
        if locale == self.here {
            return crate::rawmem::write(addr, src).map_err(|msg| Error::Remote { locale, msg });
        }
        self.comm.force_visible()?;
        let mut h = Header::new(Op::Put, FLAG_BLOCKING, self.here, 0);
        h.a = addr;
        h.len = u32::try_from(src.len()).map_err(|_| Error::TooLarge {
            locale,
            reason: format!("{}-byte PUT exceeds the 4 GiB limit", src.len()),
        })?;
        if src.len() <= INLINE_MAX {
            return self.call(locale, h, src).map(|_| ());
        }
        let buf = self.comm.alloc(src.len(), 64)?;
        // SAFETY: fresh heap allocation of src.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), buf.addr as *mut u8, src.len()) };
        h.b = buf.addr;
        let r = self.call(locale, h, &[]);
        self.comm.free(buf)?;
        r.map(|_| ())
    }

    // --------------------------------------------------------------- target

    /// Runs a body, catching a panic as an error message.
    pub(crate) fn run_body(
        &self,
        entry: &Entry,
        caller: Locale,
        args: &[u8],
    ) -> std::result::Result<Vec<u8>, String> {
        let ctx = Ctx { am: self, caller };
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| (entry.body)(&ctx, args)));
        self.counters.executed.fetch_add(1, Ordering::Relaxed);
        self.comm.diagnostics().count(Counter::OnHandled);
        r.map_err(|p| {
            format!(
                "body {:?} panicked on locale {}: {}",
                entry.name,
                self.here,
                crate::panic_text(&*p)
            )
        })
    }

    /// End of a non-blocking body: its stores become visible (task end); a
    /// failure takes the job down (nobody waits to be told).
    fn finish_nb(&self, caller: Locale, name: &str, r: std::result::Result<Vec<u8>, String>) {
        if let Err(msg) = r {
            self.abort(&format!(
                "non-blocking active message {name:?} from locale {caller} failed: {msg}"
            ));
        }
        if let Err(e) = self.comm.on_end() {
            tracing::error!("after a non-blocking body: {e}");
        }
    }

    /// Takes the job down with `msg` (through the launcher).
    pub(crate) fn abort(&self, msg: &str) -> ! {
        tracing::error!("{msg}");
        self.comm
            .oob()
            .abort(&format!("locale {}: {msg}", self.here))
    }

    /// Sends the reply of a blocking request: the result into the
    /// initiator's slot, then (after our stores are forced visible) the
    /// done word. Non-blocking: only the task-end visibility.
    pub(crate) fn reply(&self, h: &Header, name: &str, r: std::result::Result<Vec<u8>, String>) {
        if !h.blocking() {
            return self.finish_nb(h.src, name, r);
        }
        let (mut bytes, mut error) = match r {
            Ok(b) => (b, false),
            Err(m) => (m.into_bytes(), true),
        };
        // A reply the initiator cannot be given becomes an error reply: the
        // caller gets an error, the job goes on.
        if bytes.len() > wire::MAX_REPLY {
            bytes = inline_error(format!(
                "the reply of {name:?} on locale {} is {} bytes, over the {}-byte limit of one \
                 reply",
                self.here,
                bytes.len(),
                wire::MAX_REPLY
            ));
            error = true;
        }
        // A large reply waits in our heap until the initiator fetched it and
        // sent Free.
        let mut large_at = 0;
        if bytes.len() > wire::SLOT_INLINE {
            match self.comm.alloc(bytes.len(), 64) {
                Ok(buf) => {
                    // SAFETY: fresh heap allocation of bytes.len() bytes.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            bytes.as_ptr(),
                            buf.addr as *mut u8,
                            bytes.len(),
                        )
                    };
                    large_at = buf.addr;
                }
                Err(e) => {
                    bytes = inline_error(format!(
                        "the {}-byte reply of {name:?} does not fit in the registered heap of \
                         locale {}: {e}",
                        bytes.len(),
                        self.here
                    ));
                    error = true;
                }
            }
        }
        let large = large_at != 0;
        let sent = (|| -> Result<()> {
            // A mapped initiator: write its slot directly (no message, no
            // poller on either side).
            if let Some(at) = self.mapped_slot(h) {
                self.comm.before_done()?;
                publish_mapped(at, &bytes, large_at, error);
                return Ok(());
            }
            // MCM: everything the body stored is visible before the 'done'.
            if self.cfg.done == DoneMode::Msg {
                self.comm.before_done()?;
                let mut rh = Header::new(Op::Reply, 0, self.here, h.slot);
                rh.len = u32::try_from(bytes.len()).expect("replies are at most MAX_REPLY bytes");
                rh.c = (wire::done_word(0, large, error) & 0xff) as u32;
                rh.a = large_at;
                let inline: &[u8] = if large { &[] } else { &bytes };
                return self.send_msg(h.src, &rh, inline);
            }
            let slot = GlobalAddr::new(h.src, h.slot);
            if large {
                self.comm.put(slot.offset(8), &large_at.to_le_bytes())?;
            } else if !bytes.is_empty() {
                self.comm.put(slot.offset(8), &bytes)?;
            }
            self.comm.before_done()?;
            let w = wire::done_word(bytes.len(), large, error);
            self.comm.put(slot, &w.to_le_bytes())?;
            Ok(())
        })();
        if let Err(e) = sent {
            self.abort(&format!(
                "cannot deliver the reply of {name:?} to locale {} (its done slot {:#x}): {e}",
                h.src, h.slot
            ));
        }
    }

    /// Answers a blocking no-op from the progress thread: its arrival is the
    /// proof (everything its sender posted before it on that context has
    /// reached us). A no-op from this locale completes locally (sending to
    /// ourselves would need the very thread that sends to receive). Returns
    /// false when the transmit queue is full; the poller retries later.
    pub(crate) fn answer_nop(&self, h: &Header) -> bool {
        if let Some(slot) = self.mapped_slot(h) {
            publish_mapped(slot, &[], 0, false);
            return true;
        }
        let mut rh = Header::new(Op::Reply, 0, self.here, h.slot);
        rh.c = (wire::done_word(0, false, false) & 0xff) as u32;
        if h.src == self.here {
            self.on_reply(&rh, &[]);
            return true;
        }
        let mut msg = [0u8; HEADER];
        rh.encode(&mut msg);
        match self.comm.am_port().send_from_progress(h.src, &msg) {
            Ok(sent) => sent,
            Err(e) => self.abort(&format!(
                "cannot answer the no-op of locale {} (its done slot {:#x}): {e}",
                h.src, h.slot
            )),
        }
    }

    /// The initiator's done slot of request `h` in this process, if its heap
    /// is mapped here (and the slot is sane; otherwise the message path
    /// reports it).
    /// The initiator's done slot of `h` in this process, if its heap is
    /// mapped here (the mapped path).
    fn mapped_slot(&self, h: &Header) -> Option<*mut u8> {
        if h.slot % 8 != 0 {
            return None;
        }
        self.comm
            .mapped_ptr(GlobalAddr::new(h.src, h.slot), wire::SLOT_SIZE)
    }

    /// Initiator side of a Reply message (poller): fill the slot, then set
    /// its done word.
    fn on_reply(&self, h: &Header, payload: &[u8]) {
        let large = h.c as u64 & wire::DONE_LARGE != 0;
        let error = h.c as u64 & wire::DONE_ERROR != 0;
        let len = h.len as usize;
        let ok = self.comm.heap().contains(h.slot, wire::SLOT_SIZE)
            && h.slot % 8 == 0
            && (large || len <= wire::SLOT_INLINE);
        if !ok {
            self.abort(&format!(
                "reply from locale {} names done slot {:#x} (+{len} bytes), which is not one of ours",
                h.src, h.slot
            ));
        }
        // The slot is a live heap slot of a request that waits for this
        // reply (checked above); nobody else writes it.
        let word = wire::done_word(len, large, error);
        if large {
            slot::publish(&HeapSlot(h.slot), &h.a.to_le_bytes(), word);
        } else {
            slot::publish(&HeapSlot(h.slot), &payload[..len], word);
        }
    }

    /// Target side of ExecOnLarge: fetch the arguments, let the initiator
    /// free them (non-blocking), run the body.
    pub(crate) fn run_large(&self, h: &Header, entry: &Entry) {
        let mut args = vec![0u8; h.len as usize];
        if let Err(e) = self.comm.get(&mut args, GlobalAddr::new(h.src, h.b)) {
            return self.reply(
                h,
                &entry.name,
                Err(format!(
                    "cannot fetch {} argument bytes from locale {}: {e}",
                    h.len, h.src
                )),
            );
        }
        if !h.blocking() {
            let mut fh = Header::new(Op::Free, 0, self.here, 0);
            fh.a = h.b;
            if let Err(e) = self.send_msg(h.src, &fh, &[]) {
                tracing::warn!("cannot ask locale {} to free {:#x}: {e}", h.src, h.b);
            }
        }
        let r = self.run_body(entry, h.src, &args);
        self.reply(h, &entry.name, r);
    }

    /// Target side of the AM-mediated GET / PUT on unregistered memory.
    pub(crate) fn run_rma(&self, h: &Header, payload: &[u8]) {
        let r = match h.op {
            Op::Get => crate::rawmem::read(h.a, h.len as usize).and_then(|v| {
                self.comm.put(GlobalAddr::new(h.src, h.b), &v).map_err(|e| {
                    format!("cannot PUT {} bytes back to locale {}: {e}", v.len(), h.src)
                })
            }),
            _ if h.b == 0 => crate::rawmem::write(h.a, payload),
            _ => {
                let mut v = vec![0u8; h.len as usize];
                self.comm
                    .get(&mut v, GlobalAddr::new(h.src, h.b))
                    .map_err(|e| {
                        format!("cannot fetch {} bytes from locale {}: {e}", v.len(), h.src)
                    })
                    .and_then(|()| crate::rawmem::write(h.a, &v))
            }
        };
        self.reply(h, "AM-mediated RMA", r.map(|()| Vec::new()));
    }

    /// Handler-thread work: fast bodies, atomics, no-ops.
    pub(crate) fn handle(&self, w: Work) {
        let h = w.h;
        match h.op {
            Op::ExecOn | Op::ExecOnLarge => {
                let Some(entry) = self.registry.get(h.a) else {
                    self.unknown(&h);
                };
                if h.op == Op::ExecOnLarge {
                    return self.run_large(&h, &entry);
                }
                let r = self.run_body(&entry, h.src, &w.payload);
                self.reply(&h, &entry.name, r);
            }
            Op::Amo => {
                let r = match (
                    cpu_amo::type_from(h.c & 0xff),
                    cpu_amo::op_from((h.c >> 8) & 0xff),
                ) {
                    (Some(ty), Some(op)) => self
                        .local_amo(h.a, ty, op, h.b, h.d, (h.c >> 16) & 1 != 0)
                        .map(|v| {
                            if cpu_amo::fetches(op, (h.c >> 16) & 1 != 0) {
                                v.to_le_bytes()[..ty.size()].to_vec()
                            } else {
                                Vec::new()
                            }
                        }),
                    _ => Err(format!("unknown atomic code {:#x}", h.c)),
                };
                self.reply(&h, "AMO", r);
            }
            Op::Nop => self.reply(&h, "no-op", Ok(Vec::new())),
            other => tracing::error!("{other:?} queued for the handler thread (internal error)"),
        }
    }

    pub(crate) fn unknown(&self, h: &Header) -> ! {
        self.abort(&format!(
            "received an active message for body id {:#x} from locale {}, but no body is \
             registered under that id here (every locale must register every body before any \
             locale sends it)",
            h.a, h.src
        ))
    }

    /// Routes one received request (called by the poller; never blocks on
    /// the network).
    pub(crate) fn dispatch(&self, msg: &[u8]) {
        let (h, payload) = match Header::decode(msg) {
            Ok(x) => x,
            Err(e) => self.abort(&e.to_string()),
        };
        self.counters.received.fetch_add(1, Ordering::Relaxed);
        match h.op {
            Op::ExecOn | Op::ExecOnLarge => {
                let Some(entry) = self.registry.get(h.a) else {
                    self.unknown(&h);
                };
                if h.fast() && h.op == Op::ExecOn && h.blocking() && self.mapped_slot(&h).is_some()
                {
                    // A fast body for a mapped initiator runs right here: its
                    // reply is a store into the initiator's slot, which never
                    // waits on the network (no hop to the handler thread).
                    let r = self.run_body(&entry, h.src, payload);
                    self.reply(&h, &entry.name, r);
                } else if h.fast() {
                    self.push_handler(Work {
                        h,
                        payload: payload.to_vec(),
                    });
                } else {
                    let am = self.arc();
                    let payload = payload.to_vec();
                    let job: Job = if h.op == Op::ExecOn {
                        Box::new(move || {
                            let r = am.run_body(&entry, h.src, &payload);
                            am.reply(&h, &entry.name, r);
                        })
                    } else {
                        Box::new(move || am.run_large(&h, &entry))
                    };
                    self.spawner.spawn(job);
                }
            }
            Op::Get | Op::Put => {
                let am = self.arc();
                let payload = payload.to_vec();
                self.spawner
                    .spawn(Box::new(move || am.run_rma(&h, &payload)));
            }
            // The progress thread answers a blocking no-op itself, whatever
            // PGAS_AM_DONE says (see `Bridge::prepare_proof`): a handler
            // answering it could itself be waiting for a proof, and two
            // handlers proving to each other would deadlock.
            Op::Nop if h.blocking() => {
                if !self.answer_nop(&h) {
                    self.deferred_nops.push(h);
                }
            }
            Op::Amo | Op::Nop => self.push_handler(Work {
                h,
                payload: Vec::new(),
            }),
            Op::Free => {
                if let Err(e) = self.comm.free(GlobalAddr::new(self.here, h.a)) {
                    tracing::error!("Free from locale {}: {e}", h.src);
                }
            }
            Op::Shutdown => {
                self.shutdowns.fetch_add(1, Ordering::AcqRel);
            }
            Op::Reply => self.on_reply(&h, payload),
        }
    }

    pub(crate) fn push_handler(&self, w: Work) {
        self.hq.push(w);
        self.idle.wake_one();
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
        let mut backoff = Backoff::new(0, 256).then_sleep(Duration::from_micros(100));
        while self.shutdowns.load(Ordering::Acquire) < self.n - 1
            || !self.hq.is_empty()
            || !self.spawner.idle()
        {
            backoff.snooze();
        }
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
        self.comm.mapped().ring_self();
        if let Some(p) = self.poller.lock().take() {
            let _ = p.join();
        }
        tracing::debug!(locale = self.here, stats = ?self.stats(), "AM layer finalized");
        Ok(r?)
    }
}

/// Publishes a reply straight into a mapped initiator's done slot (at `at`
/// in this process): the reply bytes, or for a large reply the address of
/// the reply in our heap, then the done word that releases them, through the
/// same handshake the initiator's poller uses (`slot.rs`). No message, no
/// thread hop on the initiator's side: its waiting thread sees the done word.
fn publish_mapped(at: *mut u8, bytes: &[u8], large_at: u64, error: bool) {
    let large = large_at != 0;
    let word = wire::done_word(bytes.len(), large, error);
    let slot = HeapSlot(at as u64);
    if large {
        slot::publish(&slot, &large_at.to_le_bytes(), word);
    } else {
        slot::publish(&slot, bytes, word);
    }
}
