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
//!   [`Comm::install_am_layer`](crate::Comm::install_am_layer). comm-ofi calls it from the caller's thread,
//!   never while it holds a transmit context's lock, except
//!   [`AmLayer::prepare_proof`] / [`AmLayer::cancel_proof`] (pure buffer work).
//! * [`AmPort`](crate::AmPort): what comm-ofi offers an AM layer ([`Comm::am_port`](crate::Comm::am_port)): taking
//!   over receive polling, landing zones, sends through the MCM selector,
//!   the AM poller's fail-fast sends, and binding the AM threads to their
//!   contexts.
//!
//! Liveness rules both sides keep (learned by hanging):
//! * a proof's request is answered by the target's *AM poller* (whichever
//!   thread reads the receive queue for it), never by a handler thread that
//!   could itself be waiting for a proof; it answers with an injected send and never waits for its
//!   completion ([`AmPort::send_from_poller`](crate::AmPort::send_from_poller));
//! * a thread waiting for a proof does not help run other work while it
//!   holds its transmit context;
//! * postponed AMOs are awaited with no transmit-context lock held (the wait
//!   may run other tasks on the same thread).

use crate::addr::GlobalAddr;
use crate::amo::{AmoOp, AmoType};
use crate::error::Result;
use mcm::Locale;

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

impl AmoRequest {
    /// `op` with `operand`'s bits on the `ty` word at `target`: no compare
    /// value, the old value not wanted (Read and CompareSwap fetch anyway).
    pub const fn new(target: GlobalAddr, ty: AmoType, op: AmoOp, operand: u64) -> AmoRequest {
        AmoRequest {
            target,
            ty,
            op,
            operand,
            compare: 0,
            fetch: false,
        }
    }

    /// The same request, with the old value wanted or not.
    pub const fn fetching(self, fetch: bool) -> AmoRequest {
        AmoRequest { fetch, ..self }
    }

    /// The same request, comparing with `compare`'s bits (CompareSwap).
    pub const fn comparing(self, compare: u64) -> AmoRequest {
        AmoRequest { compare, ..self }
    }
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
    /// [`AmPort::send`](crate::AmPort::send) (a postponed one) or
    /// [`AmPort::send_awaited`](crate::AmPort::send_awaited) (one waited
    /// for), so the caller's earlier stores are ordered before it by the MCM
    /// selector.
    fn send_amo(&self, req: &AmoRequest, postpone: bool) -> Result<AmoReply>;
    /// Waits for the 'done' of a postponed AMO; an error reply is returned.
    fn await_postponed(&self, amo: PostponedAmo) -> Result<()>;
    /// Whether a *fetching* AMO may be sent with `postpone` too (for
    /// `Comm::amo_nbi`), its old value read when it is awaited with
    /// [`AmLayer::await_postponed_value`]. Default: no.
    fn may_postpone_fetching(&self) -> bool {
        false
    }
    /// [`AmLayer::await_postponed`] of a fetching AMO: waits for its answer
    /// and returns the old value's bits. Only called for AMOs sent while
    /// [`AmLayer::may_postpone_fetching`] said yes.
    fn await_postponed_value(&self, amo: PostponedAmo) -> Result<u64> {
        self.await_postponed(amo)?;
        Err(crate::error::Error::Unsupported(
            "this AM layer does not return the values of postponed atomics".into(),
        ))
    }
}

/// A blocking no-op request prepared by the AM layer: the message to send
/// (in registered memory) and whatever the layer needs to await its reply.
#[derive(Debug)]
pub struct ProofRequest {
    /// The locale it goes to.
    pub target: Locale,
    /// Start of the encoded request, in the registered heap.
    pub msg: *const u8,
    /// Its length.
    pub len: usize,
    /// The AM layer's handle (buffers, done slot).
    pub token: [u64; 2],
}

// SAFETY: msg points into the registered heap, which outlives every request,
// and only the context holding the request touches it.
unsafe impl Send for ProofRequest {}
