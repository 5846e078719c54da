//! The seam between comm-ofi and an active-message layer (amhandler), as a
//! contract with two sides.
//!
//! Exists because the two crates need each other in a few precise places and
//! nowhere else: comm-ofi needs AMs to *prove* native atomics visible and to
//! carry atomics whose type goes by CPU atomics to the word's owner; the AM
//! layer needs comm-ofi's receive endpoint, raw sends and dedicated contexts.
//! Everything that crosses is named here, in one file, instead of being spread
//! over `Comm`'s public methods.
//!
//! * [`AmLayer`]: what an AM layer provides to comm-ofi, installed once with
//!   [`Comm::install_am_layer`]. comm-ofi calls it from the caller's thread,
//!   never while it holds a transmit context's lock, except
//!   [`AmLayer::prepare_proof`] / [`AmLayer::cancel_proof`] (pure buffer work).
//! * [`AmPort`]: what comm-ofi offers an AM layer ([`Comm::am_port`]): taking
//!   over receive polling, landing zones, sends through the MCM selector,
//!   the AM poller's fail-fast sends, and binding the AM threads to their
//!   contexts.
//!
//! Liveness rules both sides keep (learned by hanging):
//! * a proof's request is answered by the target's *AM poller* (whichever
//!   thread reads the receive queue for it), never by a handler thread that
//!   could itself be waiting for a proof; it answers with an injected send and never waits for its
//!   completion ([`AmPort::send_from_poller`]);
//! * a thread waiting for a proof does not help run other work while it
//!   holds its transmit context;
//! * postponed AMOs are awaited with no transmit-context lock held (the wait
//!   may run other tasks on the same thread).

use crate::amo::{AmoOp, AmoType};
use crate::comm::{Comm, GlobalAddr, Locale};
use crate::ctx::ProofRequest;
use crate::error::Result;
use crate::ofi::{CqEntry, CqError};

/// An atomic that comm-ofi hands to the AM layer: apply `op` on the `ty` word
/// at `target` with CPU atomics at the word's owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AmoRequest {
    /// The word (on another locale than the caller's).
    pub target: GlobalAddr,
    /// Its type.
    pub ty: AmoType,
    /// The operation.
    pub op: AmoOp,
    /// Operand bits (low bytes, little-endian).
    pub operand: u64,
    /// Compare bits for compare-and-swap.
    pub compare: u64,
    /// Whether the old value is wanted.
    pub fetch: bool,
}

/// A non-fetching AMO sent without waiting for its 'done': what to await
/// later (comm-ofi keeps it in the issuing transmit context until then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostponedAmo {
    /// Where it went.
    pub target: Locale,
    /// The AM layer's handle (its done slot).
    pub token: u64,
}

/// What the AM layer did with an [`AmoRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmoReply {
    /// Applied; the old value's bits (0 if the op does not fetch).
    Done(u64),
    /// Sent, 'done' not awaited (only when comm-ofi allowed it).
    Postponed(PostponedAmo),
}

/// What an active-message layer provides to comm-ofi (see the module docs).
pub trait AmLayer: Send + Sync + std::fmt::Debug {
    /// Encodes a blocking no-op request for `target` into registered memory:
    /// the visibility proof of native AMOs. comm-ofi posts it on the context
    /// that issued the AMOs, so provider ordering or a fence puts it behind
    /// them; the reply (from the target's AM poller) is the proof.
    fn prepare_proof(&self, target: Locale) -> Result<ProofRequest>;
    /// Waits for the reply to a sent proof and frees what it held. Must not
    /// help run other work (the caller holds its transmit context).
    fn await_proof(&self, req: ProofRequest) -> Result<()>;
    /// Frees a proof request that was never sent.
    fn cancel_proof(&self, req: ProofRequest);
    /// Whether a non-fetching AMO may be sent without waiting for its 'done'
    /// (only if the target applies one sender's AMOs in arrival order).
    fn may_postpone(&self) -> bool;
    /// Sends `req` to the word's owner and, unless `postpone` (never for a
    /// fetching op), waits for its 'done'. The send goes through
    /// [`AmPort::send`], so the caller's earlier stores are ordered before it
    /// by the MCM selector.
    fn send_amo(&self, req: &AmoRequest, postpone: bool) -> Result<AmoReply>;
    /// Waits for the 'done' of a postponed AMO; an error reply is returned.
    fn await_postponed(&self, amo: PostponedAmo) -> Result<()>;
}

/// What comm-ofi offers an AM layer: a view of [`Comm`] with the calls only an
/// AM layer makes. Get one with [`Comm::am_port`].
#[derive(Debug, Clone, Copy)]
pub struct AmPort<'a> {
    pub(crate) comm: &'a Comm,
}

impl AmPort<'_> {
    /// Stops comm-ofi's start-up progress thread (`pgas-progress`): the AM
    /// layer's poller polls the receive CQ with [`AmPort::poll_rx`] from now on (RMA against this
    /// locale needs it on providers with manual progress).
    pub fn take_over_polling(&self) {
        self.comm.stop_startup_progress();
    }

    /// Reads receive-side completions (and drives progress for RMA targeting
    /// this locale). Waits up to `timeout_ms` on blocking CQs.
    pub fn poll_rx(
        &self,
        buf: &mut [CqEntry],
        timeout_ms: i32,
    ) -> std::result::Result<usize, CqError> {
        self.comm.poll_rx(buf, timeout_ms)
    }

    /// Ends a wait in [`AmPort::poll_rx`] on a blocking CQ at once (or the
    /// next one, if nobody waits now: the signal stays until a read takes
    /// it); that read returns no completions.
    pub fn interrupt_rx_wait(&self) {
        self.comm.interrupt_rx_wait()
    }

    /// Posts a multi-receive landing zone on the receive endpoint.
    ///
    /// # Safety
    /// `buf..buf+len` must lie in the registered heap and stay reserved for
    /// the provider until it reports the buffer retired (`FI_MULTI_RECV`).
    pub unsafe fn post_landing_zone(&self, buf: *mut u8, len: usize, context: usize) -> Result<()> {
        // SAFETY: forwarded from the caller's guarantee.
        unsafe { self.comm.post_landing_zone(buf, len, context) }
    }

    /// Sets `FI_OPT_MIN_MULTI_RECV` on the receive endpoint.
    pub fn set_min_multi_recv(&self, bytes: usize) -> Result<()> {
        self.comm.set_min_multi_recv(bytes)
    }

    /// Sends the AM request `msg` to `target` through the MCM selector (which
    /// first makes the caller's stores visible as the mode says) and waits
    /// for local completion. `msg` must lie in the registered heap when the
    /// provider needs `FI_MR_LOCAL`.
    pub fn send(&self, target: Locale, msg: &[u8]) -> Result<()> {
        self.comm.send(target, msg)
    }

    /// Sends a short message from the AM poller without ever waiting
    /// (see `Comm::send_from_poller`); `Ok(false)` if the queue is full.
    pub fn send_from_poller(&self, target: Locale, msg: &[u8]) -> Result<bool> {
        self.comm.send_from_poller(target, msg)
    }

    /// Reaps completions of [`AmPort::send_from_poller`] without waiting.
    pub fn reap_poller_sends(&self) -> Result<()> {
        self.comm.reap_poller_sends()
    }

    /// Binds the calling thread (the AM poller) to its context (`[1]`).
    pub fn bind_am_poller(&self) -> Result<()> {
        self.comm.bind_am_poller()
    }

    /// Binds the calling thread to AM-handler context `handler`.
    pub fn bind_handler(&self, handler: usize) -> Result<()> {
        self.comm.bind_am_handler(handler)
    }
}
