//! The [`Transport`] trait: the few primitives the MCM policy needs from one
//! transmit context, and the small vocabulary types that go with it.
//!
//! This is the seam between the policy (this crate) and a mechanism: `comm-ofi`
//! implements it over one libfabric transmit context, [`crate::sim`] over a
//! simulated weakly ordered fabric. The policy never sees an operation's
//! payload; it only decides which flags an operation carries, what must be
//! posted before it, when to wait, and what dangles afterwards.

use crate::locale::Locale;
use crate::DanglingStores;

/// Per-operation flags the policy asks a transport to add.
///
/// A small bit set; combine with `|`. Flags are *added* to whatever the
/// transport's own defaults are.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct OpFlags(u8);

impl OpFlags {
    /// No extra flag.
    pub const NONE: OpFlags = OpFlags(0);
    /// `FI_FENCE`: the operation, and every operation posted after it to the
    /// same target on this context, starts only after every operation posted
    /// earlier to that target on this context has completed at the target.
    pub const FENCE: OpFlags = OpFlags(1);
    /// `FI_DELIVERY_COMPLETE`: the operation's completion is reported only
    /// once its effect is visible at the target (for a send: the message is in
    /// the target's receive buffer).
    pub const DELIVERY_COMPLETE: OpFlags = OpFlags(2);

    /// The raw bits (`FENCE` = 1, `DELIVERY_COMPLETE` = 2).
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Whether every flag of `other` is set in `self`.
    pub const fn contains(self, other: OpFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no flag is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// `self` with the flags of `other` added.
    pub const fn union(self, other: OpFlags) -> OpFlags {
        OpFlags(self.0 | other.0)
    }
}

impl std::ops::BitOr for OpFlags {
    type Output = OpFlags;
    fn bitor(self, rhs: OpFlags) -> OpFlags {
        self.union(rhs)
    }
}

impl std::ops::BitOrAssign for OpFlags {
    fn bitor_assign(&mut self, rhs: OpFlags) {
        *self = self.union(rhs);
    }
}

impl std::fmt::Debug for OpFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names = Vec::new();
        if self.contains(OpFlags::FENCE) {
            names.push("FENCE");
        }
        if self.contains(OpFlags::DELIVERY_COMPLETE) {
            names.push("DELIVERY_COMPLETE");
        }
        if names.is_empty() {
            f.write_str("NONE")
        } else {
            f.write_str(&names.join(" | "))
        }
    }
}

/// Whether a PUT or GET entry point returns only once the operation has
/// completed locally ([`Blocking::Yes`]) or right after posting it
/// ([`Blocking::No`], a non-blocking operation whose handle the generic layer
/// tracks and waits for).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Blocking {
    /// Post, then [`Transport::wait_all`]: on return a PUT's source buffer may
    /// be reused and a GET's destination holds the data.
    Yes,
    /// Post only. The caller must not touch a PUT's source or read a GET's
    /// destination until the operation's handle reports completion.
    No,
}

/// What a native AMO does, as far as ordering is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AmoKind {
    /// Fetching, not writing (atomic read).
    Read,
    /// Writing, not fetching (write, add, and, or, xor without a result). Its
    /// completion says nothing about the target: it may *dangle*.
    Update,
    /// Fetching and writing (exchange, compare-exchange, fetch-add, ...). A
    /// failing compare-exchange counts as writing.
    FetchUpdate,
}

impl AmoKind {
    /// Whether the AMO returns a value to the initiator.
    pub const fn fetches(self) -> bool {
        matches!(self, AmoKind::Read | AmoKind::FetchUpdate)
    }

    /// Whether the AMO (may) write its target.
    pub const fn writes(self) -> bool {
        matches!(self, AmoKind::Update | AmoKind::FetchUpdate)
    }
}

/// How a transmit context is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    /// One thread owns the context for the whole run and tasks never migrate:
    /// ordering between its operations holds across a task's whole life, so
    /// dangling stores may be carried lazily to the next boundary.
    Bound,
    /// The context is taken for a while and handed back (non-worker threads
    /// sharing one context, or more tasks than contexts): dangling stores must
    /// be forced visible before it is released (see
    /// [`Selector::release`](crate::Selector::release)).
    Unbound,
}

/// One transmit context, as the MCM policy sees it.
///
/// `&mut self` *is* the context: ordering is only ever relied on between
/// operations posted through the same `Transport` value to the same target.
/// Every `post_*` method starts an operation and returns without waiting for
/// it; [`wait_all`](Transport::wait_all) is the only wait.
///
/// # Completion levels
///
/// An operation *completes* at the level it asked for:
/// - plain (no [`OpFlags::DELIVERY_COMPLETE`]): the provider's default, at
///   least transmit-complete for PUTs, AMO updates and sends (a PUT's source
///   buffer has been read and may be reused; nothing is said about the
///   target), and delivery-complete for operations that return data (a GET's
///   destination holds the data, a fetching AMO's result has arrived);
/// - with [`OpFlags::DELIVERY_COMPLETE`]: the effect is visible at the target
///   (a send's message is in the target's receive buffer).
///
/// # Ordering the policy relies on
///
/// Only what the mode's hints asked of the provider (see `docs/mcm.md`):
/// message-order: RAW, WAW, SAW, SAS per (context, target) pair; message-order-
/// fence: SAS, RMA WAW, atomic WAW, and [`OpFlags::FENCE`]; delivery-complete:
/// SAS and nothing else. The policy never relies on ordering between different
/// contexts or different targets.
///
/// # Payloads
///
/// `Put`, `Get`, `Amo` and `Send` are opaque to the policy: the generic layer
/// has prepared them (local buffers, remote address and key, chunking, the
/// handle a non-blocking operation completes). The target is passed separately
/// and must be the payload's target.
///
/// # Errors
///
/// A failed post or wait returns `Err`; the policy propagates it and leaves its
/// dangling-store state as it was (still dangling), which is conservative.
pub trait Transport {
    /// A prepared PUT (RMA write).
    type Put;
    /// A prepared GET (RMA read).
    type Get;
    /// A prepared native AMO.
    type Amo;
    /// A prepared AM send (on-statement, AM-mediated RMA or AMO).
    type Send;
    /// What a failed post or wait reports.
    type Error;

    /// Whether this context is [`Binding::Bound`] to one thread for the run.
    fn binding(&self) -> Binding;

    /// This context's dangling-store state. The policy alone updates it; the
    /// transport just stores it (one per transmit context, created with
    /// [`DanglingStores::new`] for the job's locale count).
    ///
    /// While the policy forces stores visible it may temporarily replace the
    /// state with an empty one, so the transport must not read it from inside
    /// its own `post_*`/`wait_all` methods.
    fn dangling(&mut self) -> &mut DanglingStores;

    /// Posts a PUT to `target` with `flags` added. Completes when the source
    /// has been read (plain) or the data is visible at the target
    /// (`DELIVERY_COMPLETE`). The transport reads `op` (a description the
    /// caller keeps: a retry reads it again from there, so nothing is copied
    /// for the rare case).
    fn post_put(
        &mut self,
        target: Locale,
        op: &Self::Put,
        flags: OpFlags,
    ) -> Result<(), Self::Error>;

    /// Posts a GET from `target` with `flags` added. Completes when the data is
    /// in the local destination.
    fn post_get(
        &mut self,
        target: Locale,
        op: Self::Get,
        flags: OpFlags,
    ) -> Result<(), Self::Error>;

    /// Posts a native AMO on a word of `target` with `flags` added. A fetching
    /// AMO completes when its result has arrived; a non-fetching one at the
    /// provider's default level (plain: nothing is said about the target, see
    /// `fi_atomic(3)`) or, with `DELIVERY_COMPLETE`, once it reached the target.
    fn post_amo(
        &mut self,
        target: Locale,
        op: Self::Amo,
        flags: OpFlags,
    ) -> Result<(), Self::Error>;

    /// Posts a non-fetching native AMO on a word of `target` with `flags`
    /// added, as [`post_amo`](Transport::post_amo) does, except that the
    /// AMO may stay in flight after the caller has reused whatever the
    /// payload points to (the operand words a generic layer fills for one
    /// AMO at a time): the transport keeps its own copy of what the provider
    /// reads until the AMO completes. delivery-complete's AMO window posts
    /// through it and waits only when the window ends
    /// ([`wait_all`](Transport::wait_all) completes it at the level asked).
    fn post_amo_in_flight(
        &mut self,
        target: Locale,
        op: Self::Amo,
        flags: OpFlags,
    ) -> Result<(), Self::Error>;

    /// Posts an AM send to `target` with `flags` added. Completes when the
    /// message has left (plain) or is in the target's receive buffer
    /// (`DELIVERY_COMPLETE`). Whether the handler has run is not part of it:
    /// the generic layer waits for the handler's 'done' where it needs to.
    fn post_send(
        &mut self,
        target: Locale,
        op: Self::Send,
        flags: OpFlags,
    ) -> Result<(), Self::Error>;

    /// Posts the *order GET*: an RMA read of `target`'s registered order-dummy
    /// word, on this context, with `flags` added. It is a GET like any other,
    /// so it completes when the data has arrived; the policy gets its
    /// ordering power from the provider (RAW in message-order mode) or from
    /// `FENCE` (message-order-fence mode): once it has completed, every PUT
    /// posted earlier on this context to `target` is visible there.
    fn post_order_get(&mut self, target: Locale, flags: OpFlags) -> Result<(), Self::Error>;

    /// Posts an operation that *proves* every native AMO (and every PUT) posted
    /// earlier on this context to `target` is visible at `target`, with `flags`
    /// added. The proof holds once a following [`wait_all`](Transport::wait_all)
    /// returns; an implementation may also block inside this call.
    ///
    /// A plain read does not prove an AMO visible (`fi_atomic(3)`: only a
    /// completion *at the target*, of the AMO or of a later transfer ordered
    /// after it, does). In comm-ofi this is a blocking no-op AM (SAW or `FENCE`
    /// orders it after the stores; the handler's 'done' reply says the target
    /// has seen them) once AMs exist, until then a fenced delivery-complete
    /// operation. The policy only calls it for targets with a dangling AMO and
    /// only after those AMOs completed locally.
    fn post_prove_amo_visible(&mut self, target: Locale, flags: OpFlags)
        -> Result<(), Self::Error>;

    /// Waits until every operation posted on this context so far has completed
    /// at the level it asked for (see the trait docs). Progresses the context
    /// as needed.
    fn wait_all(&mut self) -> Result<(), Self::Error>;

    /// The remote bytes `[start, end)` a PUT writes, in the target's
    /// addressing (two operations to one target that may touch the same byte
    /// must get overlapping ranges). `None` (the default): unknown, the PUT
    /// counts as writing anywhere at its target. delivery-complete mode uses
    /// it to wait out only the non-blocking PUTs a later PUT or GET overlaps.
    fn put_range(&self, _op: &Self::Put) -> Option<(u64, u64)> {
        None
    }

    /// The remote bytes `[start, end)` a GET reads (see
    /// [`put_range`](Transport::put_range)).
    fn get_range(&self, _op: &Self::Get) -> Option<(u64, u64)> {
        None
    }
}
