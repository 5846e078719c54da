//! Transmit contexts: one endpoint + CQ through which a thread posts RMA,
//! atomics and sends, and reaps their completions.
//!
//! Ordering guarantees of libfabric (message ordering, fences) hold only
//! between operations on the same context, so the MCM bookkeeping (which
//! targets hold dangling stores) lives here too: `TxContext` is the libfabric
//! [`mcm::Transport`]. The policy (which flags, when to force) is the `mcm`
//! crate's; this file only posts what it is told and waits. The libfabric
//! calls are the `ofi` layer's (`ofi::ops`); a post it answers
//! [`Posted::TryAgain`] is retried after reaping completions (which also
//! drives manual progress). The pure bookkeeping (chunking, non-blocking
//! sequence numbers) is in `nb`; the atomic slots (operand words and
//! descriptors of atomics in flight, the inject form, the atomic-read
//! proof) in `slots`.

use crate::am_seam::{AmLayer, PostponedAmo, ProofRequest};
use crate::amo::{AmoForm, AmoOp, AmoType};
use crate::error::{Error, Result};
use crate::ofi::{AtomicMsg, CqEntry, Endpoint, Flags, OfiError, Posted, Rma, WaitMode};
use mcm::{Binding, DanglingStores, OpFlags, Transport};
use std::ffi::c_void;
use std::ptr;
use std::sync::{Arc, OnceLock};

/// Where a postponed fetching AMO's old value goes when it is awaited: the
/// caller's buffer of `size` bytes at `dest`, which it keeps valid until
/// then (the contract of `Comm::amo_nbi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FetchInto {
    /// The AM layer's token of the postponed AMO.
    pub token: u64,
    /// The destination's address.
    pub dest: usize,
    /// Its size in bytes (the type's, at most 8).
    pub size: usize,
}

/// A context's postponed AMOs taken out to be awaited.
#[derive(Debug, Default)]
pub(crate) struct Postponed {
    pub amos: Vec<PostponedAmo>,
    pub fetch_into: Vec<FetchInto>,
}

mod layout;
mod nb;
mod slots;

pub use crate::ofi::{FiAddr, LocalBuf, RemoteBuf};
pub use layout::{AMO_BATCH, AMO_WINDOW, SCRATCH_BYTES};
pub(crate) use nb::{chunks, NbTracker};

/// A transmit context.
#[derive(Debug)]
pub struct TxContext {
    ep: std::sync::Arc<Endpoint>,
    /// Operations posted and not yet completed.
    outstanding: usize,
    /// Registered scratch for atomic operand / compare / result.
    scratch: *mut u8,
    /// Local descriptor of heap memory for this endpoint.
    desc: *mut c_void,
    /// Whether waits spin or block.
    wait: WaitMode,
    /// Index in the context table (for messages).
    pub index: usize,
    /// Bound to one thread for the run, or shared.
    binding: Binding,
    /// Targets with stores not yet known visible (the policy's state).
    dangling: DanglingStores,
    /// How to reach each locale's receive endpoint and order-dummy word.
    routes: Arc<[Route]>,
    /// Doorbells of the co-located locales whose heaps are mapped here: a
    /// send that the provider refuses for now rings the target, whose
    /// progress it is waiting for (see [`TxContext::send`]).
    doorbells: Arc<crate::mapped::Mapped>,
    /// The AM layer, once it is running: its no-op proves native AMOs
    /// visible (see [`crate::am_seam::AmLayer::prepare_proof`]).
    prover: Arc<OnceLock<Arc<dyn AmLayer>>>,
    /// Non-fetching AMOs via AM sent from this context whose 'done' is still
    /// to be awaited (only ever on a bound context; see `atomics`).
    pub(crate) postponed: Vec<PostponedAmo>,
    /// Where the old values of the fetching ones among `postponed` go
    /// (non-blocking fetching AMOs: `Comm::amo_nbi`), by token.
    pub(crate) fetch_into: Vec<FetchInto>,
    /// Proofs posted and not yet answered; [`Transport::wait_all`] waits for them.
    proofs: Vec<ProofRequest>,
    /// Whether native atomics are usable (the fallback proof needs them).
    native_atomics: bool,
    /// Non-blocking operations in flight and their sequence numbers.
    nb: NbTracker,
    /// Return [`Error::WouldBlock`] instead of retrying a full queue.
    fail_fast: bool,
    /// The provider progresses by itself ([`TxContext::set_provider_progresses`]).
    provider_progresses: bool,
    /// Largest PUT posted with `FI_INJECT` (no completion to wait for).
    inject_size: usize,
    /// The locale's receive endpoint, where a small awaited AM message goes
    /// out injected (see [`TxContext::send_small_from`]); `None`: every
    /// message goes out on this context's own endpoint.
    home: Option<std::sync::Arc<Endpoint>>,
    /// Largest single transfer (`max_msg_size`): PUTs and GETs go in
    /// pieces of at most this.
    max_msg: usize,
    /// Non-fetching atomics are injected (until the provider says it has
    /// no `fi_inject_atomic`).
    inject_atomics: bool,
    /// AMOs are proved visible by a fetching atomic read of the target's
    /// order dummy rather than by the AM layer's no-op
    /// (`quirks::atomic_read_proves_amos`).
    prove_by_atomic_read: bool,
    /// The batch slot the last atomic-read proof used (slots
    /// `1..=AMO_BATCH`; all free again once nothing is outstanding). A
    /// proof writes only its slot's result word and descriptor, and every
    /// proof is complete (the forcing's one wait) before anything else is
    /// posted: an unordered batch of the ordering modes, whose operands sit
    /// in the slots' operand words meanwhile, reads them intact and
    /// prepares its own descriptors when it posts.
    proof_slot: usize,
    /// The window slot the last AMO left in flight used (`1..=AMO_WINDOW`,
    /// counted after the batch slots; all free again once nothing is
    /// outstanding).
    window_slot: usize,
    /// Targets of AMOs left in flight by injection (no completion of their
    /// own; `prove_by_atomic_read` providers): [`Transport::wait_all`]
    /// completes them with an atomic-read proof per target.
    unproven: Vec<usize>,
    /// Completion entries, reused by every CQ read (not zeroed per read).
    cq_buf: Box<[CqEntry; 16]>,
    /// Domain-wide lock for providers whose threading claims do not hold
    /// (see `quirks`); None for the others.
    serial: Option<DomainLock>,
    /// The locale's operation counters (forcing operations are counted here,
    /// where the MCM mode posts them).
    diag: Arc<crate::diag::CommDiagnostics>,
    /// Stable storage for one atomic's descriptors (slot 0 of `atomic_in`).
    amo_desc: Box<AtomicMsg>,
    /// The same for the batch and window slots `1..=AMO_BATCH + AMO_WINDOW`
    /// (made at the first use of one).
    batch_desc: Vec<AtomicMsg>,
}

/// How a context reaches one locale.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    /// AV address of the locale's receive endpoint (RMA target and AM receiver).
    pub fi_addr: FiAddr,
    /// The locale's order-dummy word: the target of order GETs.
    pub order_dummy: RemoteBuf,
}

/// A PUT or GET as the policy passes it to the transport: one local buffer
/// against one remote range, posted in pieces of at most the provider's
/// largest message.
#[derive(Debug, Clone, Copy)]
pub struct RmaOp {
    /// The local side.
    pub local: LocalBuf,
    /// The remote side.
    pub remote: RemoteBuf,
    /// Non-zero for a non-blocking operation tracked by a handle.
    pub seq: u64,
}

impl RmaOp {
    /// The remote bytes `[start, end)` it touches, in the target's
    /// addressing (virtual address or offset in its registration: either way
    /// the same bytes of one target get overlapping ranges; two
    /// registrations addressed by offset may overlap falsely, which only
    /// costs a wait).
    #[inline]
    pub fn remote_range(&self) -> (u64, u64) {
        let start = self.remote.addr;
        (start, start.saturating_add(self.local.len as u64))
    }
}

/// A native atomic on one element, as the policy passes it to the
/// transport (operands in the context's scratch words).
#[derive(Debug, Clone, Copy)]
pub struct NativeAmo {
    /// The target word.
    pub remote: RemoteBuf,
    /// Its operand type.
    pub ty: AmoType,
    /// The operation.
    pub op: AmoOp,
    /// Plain, fetching or compare.
    pub form: AmoForm,
    /// Whose operand words and descriptors: 0 the context's own (one atomic
    /// at a time), `1..=AMO_BATCH` a slot of a batch of unordered AMOs in
    /// flight together ([`TxContext::batch_operand`]).
    pub slot: usize,
}

/// An AM send: a message in registered memory (where the provider needs it).
#[derive(Debug, Clone, Copy)]
pub struct SendOp {
    /// The message.
    pub local: LocalBuf,
    /// Someone waits for it: a blocking request (its sender, for the
    /// answer) or a reply (its receiver). Such a message may leave from the
    /// receive endpoint ([`TxContext::send_small_from`]); the others
    /// (non-blocking requests, postponed AMOs, shutdown) keep this
    /// context's endpoint, and so their order with each other.
    pub awaited: bool,
}

/// A lock serialising every libfabric call of a domain.
pub type DomainLock = std::sync::Arc<parking_lot::Mutex<()>>;

// SAFETY: the raw pointers point into the registered heap, which lives as long
// as the Comm owning this context; the context is used by one thread at a time
// (it sits behind a mutex or is bound to one thread).
unsafe impl Send for TxContext {}

impl TxContext {
    /// Wraps an enabled endpoint; `scratch` is `SCRATCH_BYTES` of registered
    /// heap. The context starts [`Binding::Unbound`] (shared).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        index: usize,
        ep: std::sync::Arc<Endpoint>,
        scratch: *mut u8,
        desc: *mut c_void,
        serial: Option<DomainLock>,
        routes: Arc<[Route]>,
        doorbells: Arc<crate::mapped::Mapped>,
        prover: Arc<OnceLock<Arc<dyn AmLayer>>>,
        native_atomics: bool,
        (inject_size, max_msg): (usize, usize),
        diag: Arc<crate::diag::CommDiagnostics>,
    ) -> TxContext {
        let wait = ep.cq().wait_mode();
        TxContext {
            ep,
            outstanding: 0,
            scratch,
            desc,
            wait,
            index,
            binding: Binding::Unbound,
            dangling: DanglingStores::new(routes.len()),
            routes,
            doorbells,
            prover,
            postponed: Vec::new(),
            fetch_into: Vec::new(),
            proofs: Vec::new(),
            native_atomics,
            nb: NbTracker::new(),
            fail_fast: false,
            provider_progresses: false,
            inject_size,
            home: None,
            max_msg,
            inject_atomics: true,
            prove_by_atomic_read: false,
            proof_slot: 0,
            window_slot: 0,
            unproven: Vec::new(),
            cq_buf: Box::new([CqEntry::default(); 16]),
            serial,
            amo_desc: Box::default(),
            batch_desc: Vec::new(),
            diag,
        }
    }

    /// Marks the context as owned by one thread for the rest of the run.
    pub fn bind(&mut self) {
        self.binding = Binding::Bound;
    }

    /// Marks the context shared again (its owner gave it back, with nothing
    /// dangling: see `Comm::unbind_thread`).
    pub fn unbind(&mut self) {
        self.binding = Binding::Unbound;
    }

    /// From now on an *awaited* message ([`SendOp::awaited`]: a blocking
    /// request, a reply) of at most the inject size that the MCM mode sends
    /// without a fence goes out with `fi_inject` from `rx`, the locale's
    /// receive endpoint, instead of this context's endpoint
    /// (`quirks::small_messages_from_receive_endpoint`: request and answer
    /// then share one connection). The AM poller's answers do too
    /// ([`TxContext::inject_send`]). Only where that changes no guarantee:
    ///
    /// * the mode is message-order or delivery-complete. Both make every
    ///   store of the context visible (message-order forces, delivery-complete
    ///   settles) and settle its reads before they post the message, so the
    ///   message needs no ordering on this endpoint. Delivery-complete's
    ///   `FI_DELIVERY_COMPLETE` is dropped: the message is awaited, and its
    ///   answer (or, for a reply, the receiver's wait) implies its delivery.
    ///   Message-order-fence fences some sends and keeps every message here;
    /// * only awaited messages move: none can still be in flight when its
    ///   sender goes on or finalizes. Messages whose order matters among
    ///   themselves (postponed AMOs to one target, arriving in send order;
    ///   the shutdown message, which must arrive after every earlier request
    ///   of its thread) are not awaited and keep this endpoint;
    /// * the AM poller never sleeps ([`crate::IdlePolicy::may_sleep`]): it
    ///   reads the receive CQ all the time, which is what moves an
    ///   injected message the provider could not put on the wire at once
    ///   (tcp: a connection still being made, a full socket). There is no
    ///   completion to reap.
    ///
    /// Proofs (no-ops after native AMOs) stay on this endpoint: they rely on
    /// its ordering.
    pub fn send_small_from(&mut self, rx: std::sync::Arc<Endpoint>) {
        self.home = Some(rx);
    }

    /// `fi_inject` of `len` bytes at `ptr` to `target` from the receive
    /// endpoint `home`, through [`TxContext::post_counted`] (nothing
    /// counted): while the provider refuses (rxm: the connection is being
    /// made, or its queue is full) it rings the target and retries; the AM
    /// poller's reads of the receive CQ are what move it. With
    /// [`TxContext::set_fail_fast`] (the AM poller's own context: the thread
    /// that would have to read) a refusal is `WouldBlock`.
    fn inject_from_home(
        &mut self,
        home: std::sync::Arc<Endpoint>,
        target: usize,
        ptr: *const u8,
        len: usize,
    ) -> Result<()> {
        // This context's endpoint is not the one posted on.
        self.post_ringing(target, "fi_inject", false, |_, fi_addr| {
            // SAFETY: `ptr..ptr+len` is the caller's live message;
            // fi_inject copies it before returning.
            unsafe { home.inject_send(ptr, len, fi_addr) }
        })
    }

    /// From now on AMOs are proved visible by a fetching atomic read of the
    /// target's order dummy (a provider where that suffices,
    /// `quirks::atomic_read_proves_amos`, with native 64-bit atomic reads).
    pub fn prove_amos_by_atomic_read(&mut self) {
        self.prove_by_atomic_read = true;
    }

    /// From now on a full transmit queue is an [`Error::WouldBlock`] rather
    /// than a wait (for a thread that must not stop receiving).
    pub fn set_fail_fast(&mut self) {
        self.fail_fast = true;
    }

    /// The provider moves posted operations by itself (auto progress): a
    /// full transmit queue with nothing of ours to complete is waited out
    /// by yielding to its progress thread, not by reading our CQ (the
    /// retry loop of every post).
    pub fn set_provider_progresses(&mut self) {
        self.provider_progresses = true;
    }

    /// A fresh sequence number for a non-blocking operation.
    pub fn next_seq(&mut self) -> u64 {
        self.nb.next_seq()
    }

    /// Whether the non-blocking operation `seq` has completed.
    pub fn nb_done(&self, seq: u64) -> bool {
        self.nb.is_done(seq)
    }

    /// Whether a boundary on this context has anything to do: stores that
    /// may not be visible (PUTs, non-fetching native AMOs), non-blocking
    /// GETs that may still be reading, or AMOs via AM whose 'done' is still
    /// to be awaited. The one source of the calling thread's
    /// `CTX_HAS_WORK` (see `Comm::note_ctx_state`).
    #[inline]
    pub fn has_work(&self) -> bool {
        self.has_work_besides_reads() || self.dangling.reads_pending()
    }

    /// Whether a boundary would have anything to do *at* `target`: stores
    /// to it that may not be visible, GETs from it in flight, AMOs via AM
    /// to it not yet done.
    pub fn has_work_at(&self, target: usize) -> bool {
        self.dangling.dangles(target)
            || self.dangling.read_pending(target)
            || self.postponed.iter().any(|p| p.target == target)
    }

    /// [`TxContext::has_work`] without the non-blocking GETs in flight (the
    /// negative control `nb-get-uncounted`).
    #[inline]
    pub fn has_work_besides_reads(&self) -> bool {
        !self.dangling.is_empty() || !self.postponed.is_empty()
    }

    /// Takes the postponed AMOs and their result destinations, to be
    /// awaited with the context's lock released.
    pub(crate) fn take_postponed(&mut self) -> Postponed {
        Postponed {
            amos: std::mem::take(&mut self.postponed),
            fetch_into: std::mem::take(&mut self.fetch_into),
        }
    }

    /// Descriptor for heap memory on this context.
    pub fn heap_desc(&self) -> *mut c_void {
        self.desc
    }

    /// Reaps completions; on a blocking CQ with operations in flight it
    /// waits up to 1 ms for one. Returns how many were reaped.
    pub fn progress(&mut self) -> Result<usize> {
        let timeout = if self.outstanding > 0 { 1 } else { 0 };
        self.reap(timeout)
    }

    /// Reads the CQ once without waiting, even with nothing counted in
    /// flight: on providers with manual progress that read is what moves an
    /// injected operation (which reports no completion) onto the wire.
    pub fn drive(&mut self) -> Result<usize> {
        self.reap(0)
    }

    /// Reaps completions without waiting at all.
    pub fn progress_nowait(&mut self) -> Result<usize> {
        if self.outstanding == 0 {
            return Ok(0);
        }
        self.reap(0)
    }

    /// Posts a send of `msg` (at most the inject size) with `FI_INJECT`: the
    /// buffer is free on return and the call never waits for the send to
    /// complete (its completion is reaped by a later progress call). Where
    /// awaited messages leave from the receive endpoint
    /// ([`TxContext::send_small_from`]) this one does too, with `fi_inject`
    /// and no completion: an answer is awaited by its requester.
    /// With [`TxContext::set_fail_fast`], a full queue is `WouldBlock`.
    pub fn inject_send(&mut self, target: usize, msg: &[u8]) -> Result<()> {
        if let Some(home) = self.home.clone() {
            return self.inject_from_home(home, target, msg.as_ptr(), msg.len());
        }
        self.progress_nowait()?;
        let local = LocalBuf {
            ptr: msg.as_ptr() as *mut u8,
            len: msg.len(),
            desc: ptr::null_mut(),
        };
        self.send(target, local, Flags::INJECT)
    }

    fn reap(&mut self, timeout: i32) -> Result<usize> {
        let guard = self.serial.as_ref().map(|l| l.lock());
        let r = self.ep.cq().read(&mut self.cq_buf[..], timeout);
        drop(guard);
        match r {
            Ok(n) => {
                self.outstanding = self.outstanding.saturating_sub(n);
                if !self.nb.is_empty() {
                    for e in &self.cq_buf[..n] {
                        self.nb.completed(e.op_context as u64);
                    }
                }
                Ok(n)
            }
            Err(e) => {
                self.outstanding = self.outstanding.saturating_sub(1);
                self.nb.completed(e.op_context as u64);
                Err(Error::Ofi(e.error))
            }
        }
    }

    /// Waits until every operation posted on this context has completed
    /// locally (proofs not included: see [`Transport::wait_all`]).
    pub fn wait_local(&mut self) -> Result<()> {
        // Blocking waits block in the poll; spinning ones yield after 64
        // idle rounds.
        let mut backoff = crate::Backoff::new(65, 65);
        let mut first_err = None;
        let mut silent = crate::peer_timeout::PeerWait::new();
        while self.outstanding > 0 {
            match self.progress() {
                Ok(0) => {
                    if silent.expired() {
                        return Err(silent.error("completion wait", "completion"));
                    }
                    if self.wait == WaitMode::Spin {
                        backoff.snooze();
                    }
                }
                Ok(_) => {
                    backoff.reset();
                    silent.reset();
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn post(
        &mut self,
        call: &'static str,
        f: impl FnMut(&Endpoint) -> Result<Posted, OfiError>,
    ) -> Result<()> {
        self.post_counted(call, true, f, |_| {})
    }

    /// Posts with `f` (one of the endpoint's posting calls), riding out
    /// [`Posted::TryAgain`] by reaping completions (and calling `on_again`
    /// with the context each time); `counted`: the operation will report a completion to
    /// wait for. The first attempt is inline; the retry loop, for a full
    /// queue (the rare case), is out of line ([`TxContext::post_retry`]).
    #[inline(always)]
    fn post_counted(
        &mut self,
        call: &'static str,
        counted: bool,
        mut f: impl FnMut(&Endpoint) -> Result<Posted, OfiError>,
        on_again: impl FnMut(&Self),
    ) -> Result<()> {
        let r = match &self.serial {
            None => f(&self.ep),
            Some(l) => {
                let _guard = l.lock();
                f(&self.ep)
            }
        };
        match r {
            Ok(Posted::Done) => {
                self.outstanding += counted as usize;
                Ok(())
            }
            Ok(Posted::TryAgain) => self.post_retry(call, counted, f, on_again),
            Err(e) => Err(Error::Ofi(e)),
        }
    }

    /// [`TxContext::post_counted`] after the provider said try again.
    #[cold]
    fn post_retry(
        &mut self,
        call: &'static str,
        counted: bool,
        mut f: impl FnMut(&Endpoint) -> Result<Posted, OfiError>,
        mut on_again: impl FnMut(&Self),
    ) -> Result<()> {
        let mut silent = crate::peer_timeout::PeerWait::new();
        loop {
            on_again(self);
            if self.provider_progresses && self.outstanding == 0 {
                // The queue is full of operations that report no completion
                // (injected ones): only the provider's own progress thread
                // (auto progress: `sockets`) can empty it, and it needs the
                // core and the queue's locks. Reading our CQ in a loop
                // (each empty `fi_cq_sread` takes the CQ's lock and makes a
                // `recv` on its signal socket) held both: 8 B PUTs back to
                // back took 24-28 us each, 7.4-7.8 us when we yield here
                // (docs/performance.md, "sockets: the injected PUT"). Where
                // our reads are the progress (manual), they go on.
                std::thread::yield_now();
            } else if self.progress()? > 0 {
                silent.reset();
            }
            if self.fail_fast {
                return Err(Error::WouldBlock { call });
            }
            if silent.expired() {
                return Err(silent.error(call, "room in the transmit queue"));
            }
            let guard = self.serial.as_ref().map(|l| l.lock());
            let r = f(&self.ep);
            drop(guard);
            match r {
                Ok(Posted::Done) => {
                    self.outstanding += counted as usize;
                    return Ok(());
                }
                Ok(Posted::TryAgain) => {}
                Err(e) => return Err(Error::Ofi(e)),
            }
        }
    }

    /// Posts an RMA read of `remote` into `local` with `flags`.
    pub fn read(&mut self, local: LocalBuf, remote: RemoteBuf, flags: Flags) -> Result<()> {
        self.rma(Rma::Read, local, remote, flags, 0)
    }

    /// Posts `op` in pieces of at most `max_msg` bytes ([`chunks`]); a
    /// non-blocking op is tracked by its sequence number until every piece
    /// completed.
    fn rma_chunked(&mut self, dir: Rma, op: RmaOp, flags: Flags) -> Result<()> {
        if op.seq == 0 && op.local.len <= self.max_msg {
            return self.rma(dir, op.local, op.remote, flags, 0);
        }
        let pieces = chunks(op.local.len, self.max_msg);
        let n = pieces.len();
        if op.seq != 0 {
            self.nb.posting(op.seq, n);
        }
        for (i, (off, len)) in pieces.enumerate() {
            let local = LocalBuf {
                ptr: op.local.ptr.wrapping_add(off),
                len,
                desc: op.local.desc,
            };
            let remote = RemoteBuf {
                addr: op.remote.addr + off as u64,
                ..op.remote
            };
            if let Err(e) = self.rma(dir, local, remote, flags, op.seq) {
                if op.seq != 0 {
                    // Pieces never posted will never complete.
                    self.nb.unposted(op.seq, n - i);
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// One RMA (`fi_writemsg` or `fi_readmsg`) of `local` against `remote`,
    /// its completion reported with `seq`.
    fn rma(
        &mut self,
        dir: Rma,
        local: LocalBuf,
        remote: RemoteBuf,
        flags: Flags,
        seq: u64,
    ) -> Result<()> {
        self.post(dir.call(), |ep| {
            // SAFETY: the local buffer stays valid until completion (callers
            // wait, or keep it alive in a handle); the remote region was
            // validated.
            unsafe { ep.rma_msg(dir, local, remote, seq, flags) }
        })
    }

    /// Posts a message send of `local` to `target`'s receive endpoint.
    ///
    /// While the provider refuses the send for now, the target's doorbell is
    /// rung (where its heap is mapped here): shm answers `-FI_EAGAIN` until
    /// the target's progress has taken its command (the first send to a peer
    /// also waits for the target to accept the connection), and a target
    /// whose poller sleeps on its doorbell was rung only before the send. It
    /// then slept out its doorbell timeout (50 ms) while we retried: the
    /// first on-statement of a run took up to 60 ms, 1 run in 5 to 7.
    pub fn send(&mut self, target: usize, local: LocalBuf, flags: Flags) -> Result<()> {
        self.post_ringing(target, "fi_sendmsg", true, |ep, fi_addr| {
            // SAFETY: the payload stays valid until completion (callers
            // wait before reusing it; with FI_INJECT it is copied at once).
            unsafe { ep.send_msg(local, fi_addr, flags) }
        })
    }

    /// [`TxContext::post_counted`] of a message to `target` (`f` gets its
    /// address), ringing the target's doorbell each time the provider
    /// refuses it for now.
    #[inline]
    fn post_ringing(
        &mut self,
        target: usize,
        call: &'static str,
        counted: bool,
        mut f: impl FnMut(&Endpoint, FiAddr) -> Result<Posted, OfiError>,
    ) -> Result<()> {
        let fi_addr = self.routes[target].fi_addr;
        self.post_counted(
            call,
            counted,
            |ep| f(ep, fi_addr),
            |ctx| ctx.doorbells.ring(target),
        )
    }
}

/// libfabric flags for the policy's [`OpFlags`].
impl TxContext {
    /// Counts an operation posted with `FI_FENCE`.
    #[inline]
    fn count_fence(&self, flags: OpFlags) {
        if flags.contains(OpFlags::FENCE) {
            self.diag.count(crate::diag::Counter::Fenced);
        }
    }
}

/// libfabric flags for the policy's [`OpFlags`].
fn ofi_flags(flags: OpFlags) -> Flags {
    let mut f = Flags::NONE;
    if flags.contains(OpFlags::FENCE) {
        f = f | Flags::FENCE;
    }
    if flags.contains(OpFlags::DELIVERY_COMPLETE) {
        f = f | Flags::DELIVERY_COMPLETE;
    }
    f
}

/// libfabric flags of a read for the policy's [`OpFlags`]: the fence only.
/// A read completes only once its data has arrived: delivery-complete adds
/// nothing, and some providers reject the flag on reads.
fn read_flags(flags: OpFlags) -> Flags {
    if flags.contains(OpFlags::FENCE) {
        Flags::FENCE
    } else {
        Flags::NONE
    }
}

impl TxContext {
    /// The order-dummy read of `target` into scratch word 3 (its content is
    /// never looked at; several may be in flight at once).
    fn read_order_dummy(&mut self, target: usize, flags: Flags) -> Result<()> {
        let local = LocalBuf {
            // Word 3 of the SCRATCH_BYTES scratch area.
            ptr: self.scratch.wrapping_add(24),
            len: 8,
            desc: self.desc,
        };
        let remote = self.routes[target].order_dummy;
        self.read(local, remote, flags)
    }
}

impl Transport for TxContext {
    type Put = RmaOp;
    type Get = RmaOp;
    type Amo = NativeAmo;
    type Send = SendOp;
    type Error = Error;

    #[inline]
    fn binding(&self) -> Binding {
        self.binding
    }

    #[inline]
    fn dangling(&mut self) -> &mut DanglingStores {
        &mut self.dangling
    }

    #[inline(always)]
    fn post_put(&mut self, _target: usize, op: &RmaOp, flags: OpFlags) -> Result<()> {
        self.count_fence(flags);
        // A small PUT with nothing to add is injected: the source is
        // free on return and there is no completion to wait for. Ordering and
        // visibility are the same as a write's (it is one, to the provider).
        // A non-blocking one too: it is complete on return (its sequence
        // number is never in flight, so its handle reports done at once).
        if flags.is_empty() && op.local.len <= self.inject_size {
            // The closure holds the reference, not copies: only a retry
            // needs the operation again, and reads it from where it lies.
            return self.post_counted(
                "fi_inject_write",
                false,
                move |ep| {
                    // SAFETY: the source is the caller's live buffer of
                    // op.local.len bytes; with FI_INJECT the provider copies
                    // it before returning.
                    unsafe { ep.inject_write(op.local.ptr, op.local.len, op.remote) }
                },
                |_| {},
            );
        }
        self.rma_chunked(Rma::Write, *op, ofi_flags(flags))
    }

    fn post_get(&mut self, _target: usize, op: RmaOp, flags: OpFlags) -> Result<()> {
        self.count_fence(flags);
        self.rma_chunked(Rma::Read, op, read_flags(flags))
    }

    #[inline]
    fn post_amo(&mut self, _target: usize, op: NativeAmo, flags: OpFlags) -> Result<()> {
        self.count_fence(flags);
        self.amo_posted(op, flags)
    }

    fn post_amo_in_flight(&mut self, target: usize, op: NativeAmo, flags: OpFlags) -> Result<()> {
        self.count_fence(flags);
        self.amo_kept_in_flight(target, op, flags)
    }

    fn post_send(&mut self, target: usize, op: SendOp, flags: OpFlags) -> Result<()> {
        self.count_fence(flags);
        // Delivery-complete's flag is not carried over (see `send_small_from`).
        if op.awaited && !flags.contains(OpFlags::FENCE) && op.local.len <= self.inject_size {
            if let Some(home) = self.home.clone() {
                return self.inject_from_home(home, target, op.local.ptr, op.local.len);
            }
        }
        self.send(target, op.local, ofi_flags(flags))
    }

    fn post_order_get(&mut self, target: usize, flags: OpFlags) -> Result<()> {
        self.count_fence(flags);
        self.diag.count(crate::diag::Counter::ForceGet);
        self.read_order_dummy(target, read_flags(flags))
    }

    fn post_prove_amo_visible(&mut self, target: usize, flags: OpFlags) -> Result<()> {
        self.count_fence(flags);
        if self.prove_by_atomic_read {
            return self.post_atomic_read_proof(target, flags);
        }
        self.diag.count(crate::diag::Counter::ForceProof);
        if let Some(prover) = self.prover.get().cloned() {
            let req = prover.prepare_proof(target)?;
            let local = LocalBuf {
                ptr: req.msg as *mut u8,
                len: req.len,
                desc: self.desc,
            };
            match self.send(target, local, ofi_flags(flags)) {
                Ok(()) => self.proofs.push(req),
                Err(e) => {
                    prover.cancel_proof(req);
                    return Err(e);
                }
            }
            return Ok(());
        }
        // No AM layer (yet): a delivery-complete atomic read of the order
        // dummy, ordered behind the AMOs by the provider's atomic ordering
        // (or the fence). Weaker than the no-op's reply; see docs/mcm.md.
        let flags = flags | OpFlags::DELIVERY_COMPLETE;
        if self.native_atomics {
            let remote = self.routes[target].order_dummy;
            self.atomic_in(
                0,
                remote,
                AmoType::U64,
                AmoOp::Read,
                AmoForm::Fetch,
                ofi_flags(flags),
            )?;
            // One atomic descriptor per context: finish it before the next.
            self.wait_local()
        } else {
            self.read_order_dummy(target, read_flags(flags))
        }
    }

    #[inline]
    fn put_range(&self, op: &RmaOp) -> Option<(u64, u64)> {
        Some(op.remote_range())
    }

    #[inline]
    fn get_range(&self, op: &RmaOp) -> Option<(u64, u64)> {
        Some(op.remote_range())
    }

    #[inline]
    fn wait_all(&mut self) -> Result<()> {
        if self.outstanding == 0 && self.proofs.is_empty() && self.unproven.is_empty() {
            return Ok(());
        }
        self.wait_all_slow()
    }
}

impl TxContext {
    #[cold]
    fn wait_all_slow(&mut self) -> Result<()> {
        // AMOs injected in a delivery-complete window complete with a proof
        // per target (a target stays listed until its proof is posted).
        while let Some(&target) = self.unproven.last() {
            self.post_atomic_read_proof(target, OpFlags::NONE)?;
            self.unproven.pop();
        }
        let local = self.wait_local();
        let mut first_err = local.err();
        if !self.proofs.is_empty() {
            let prover = self.prover.get().cloned();
            for req in std::mem::take(&mut self.proofs) {
                let r = match &prover {
                    Some(p) => p.await_proof(req),
                    None => Ok(()),
                };
                if let Err(e) = r {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
