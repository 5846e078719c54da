//! The selector table: the implementors of one mode, chosen once at start-up.
//!
//! Generic code (comm-ofi's `put`/`get`/`amo`/`am_request`, the task hooks)
//! does its mode-independent work, then calls through the table; it never
//! matches on the mode per operation. The original (Chapel's comm-ofi) had a
//! `switch` per operation in its `*_selector()` functions; here the `match` is
//! done once, in [`Selector::for_mode`].

use std::fmt;

use crate::force::{
    BATCH_UNWAITED, NO_FORCING, NO_SOURCE_WAIT, RANGE_BLIND, READ_AMO_NO_FORCE, WAR_UNSETTLED,
    WINDOW_ANY_TARGET,
};
use crate::mode::{dc, fence, order};
use crate::{AmoKind, Binding, Blocking, Locale, Mode, Transport};

/// A PUT implementor: post the PUT to `target` with whatever the mode adds,
/// wait for local completion if [`Blocking::Yes`], record what now dangles.
pub type PutFn<T> =
    fn(&mut T, Locale, <T as Transport>::Put, Blocking) -> Result<(), <T as Transport>::Error>;
/// A GET implementor.
pub type GetFn<T> =
    fn(&mut T, Locale, <T as Transport>::Get, Blocking) -> Result<(), <T as Transport>::Error>;
/// A native-AMO implementor. AMOs are blocking: it returns once the AMO has
/// completed locally (a fetching AMO's result has arrived), except a
/// non-fetching one in delivery-complete's AMO window, which the transport
/// keeps in flight with its own copy of the operand.
pub type AmoFn<T> =
    fn(&mut T, Locale, <T as Transport>::Amo, AmoKind) -> Result<(), <T as Transport>::Error>;
/// An implementor of a batch of *unordered* non-fetching native AMOs (the
/// task's buffered `*_unordered` atomics at its fence): unordered among
/// themselves by the API's contract, so they may be in flight together.
/// Returns once they are as visible as the mode's ordered non-fetching AMOs
/// would be (delivery-complete: delivered). The ordering modes have none:
/// [`Selector::amo_batch`] posts each as their ordered non-fetching AMO.
pub type AmoBatchFn<T> = fn(
    &mut T,
    &mut dyn Iterator<Item = (Locale, <T as Transport>::Amo)>,
) -> Result<(), <T as Transport>::Error>;
/// An AM-send implementor. Returns once the send has completed locally; the
/// handler's 'done' is the generic layer's business.
pub type SendFn<T> =
    fn(&mut T, Locale, <T as Transport>::Send) -> Result<(), <T as Transport>::Error>;
/// The boundary implementor: make every dangling store of the context visible
/// (also what [`Selector::release`] does to an unbound context).
pub type ForceVisibleFn<T> = fn(&mut T) -> Result<(), <T as Transport>::Error>;

/// A deliberate hole in the memory model, for negative controls only: each
/// re-opens one hole that a fix closed (or that forcing closes), so that the
/// litmus suites can show they would catch it. Spelled as in
/// `PGAS_MCM_WEAKEN` ([`Weakening::name`], [`Weakening::parse`]).
///
/// The first four are holes in this crate's policy (the selector built with
/// them behaves differently); the others are holes in the generic layers
/// above it (comm-ofi, amhandler), which read them from the selector's
/// [`Selector::weakening`] and re-open their own pre-fix behaviour.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Weakening {
    /// No forcing at all: no order GET, no visibility proof, no `FENCE` added
    /// because something dangles, no settling wait in delivery-complete mode.
    /// What the mode asks of the provider (orderings, the delivery-complete
    /// flag) and the local-completion wait of blocking operations stay.
    NoForcing,
    /// A blocking PUT returns without waiting for local completion, so the
    /// caller may overwrite the source before the NIC has read it.
    NoSourceWait,
    /// message-order: an AMO that only reads forces nothing (store buffering
    /// with the atomics on two locales is then possible).
    ReadAmoNoForce,
    /// A non-blocking GET is not settled before a later PUT, writing AMO or
    /// AM send to its target (write-after-read).
    WarUnsettled,
    /// Generic layer: an atomic whose word is on the caller's own locale and
    /// goes by CPU atomics skips forcing the caller's earlier stores and
    /// settling its postponed AMOs.
    LocalAmoNoForce,
    /// Generic layer: a non-blocking on-statement to the caller's own locale
    /// spawns its body without the task-create boundary.
    LocalNbOnNoTaskCreate,
    /// Generic layer: non-fetching AMOs via AM are postponed on unbound
    /// threads too (two of them may then leave on different contexts).
    PostponeUnbound,
    /// Generic layer: the thread's "context has work" flag is not counted
    /// for non-blocking GETs in flight, so a CPU-route atomic after a
    /// `get_nb` does not wait it out (write-after-read through a release on
    /// this locale or a mapped one).
    NbGetUncounted,
    /// Generic layer: the thread's "context has work" flag is set *before*
    /// an operation settles its postponed AMOs and never re-derived after
    /// it posts (the mechanism before it was derived): a task run while the
    /// settle waits may force the context and clear the flag before the
    /// outer store is posted, and a later CPU-route atomic skips forcing it.
    WorkFlagBeforePost,
    /// Generic layer: the SC reads of the point-to-point calls
    /// (`test_local`, `wait_until_local*`) are plain loads: the caller's
    /// earlier stores and postponed AMOs are not made visible first.
    P2pReadNoForce,
    /// Generic layer: a PUT or atomic on the mapped path (a CPU copy) does
    /// not first force the caller's fabric stores to the same locale (its
    /// static data, reached through the provider with
    /// `PGAS_LOCAL_PATH=mapped-heap`), so two stores to one target can
    /// become visible out of program order.
    MappedUnordered,
    /// Mechanism: co-located locales map each other's static data
    /// copy-on-write, so a store through the mapping never reaches the
    /// owner (the negative control of sharing the static data, issue 37).
    MappedStaticsPrivate,
    /// delivery-complete: a non-blocking PUT is taken never to overlap a
    /// later PUT or GET to its target, so neither waits it out (a hole in
    /// this crate's policy, like the first four: the negative control of the
    /// range check that lets disjoint non-blocking PUTs pipeline).
    RangeBlind,
    /// delivery-complete: a batch of unordered AMOs is posted and not waited
    /// for, nor marked (the negative control of the batch's one wait).
    BatchUnwaited,
    /// delivery-complete with atomic WAW: the AMO window goes on across
    /// targets, so a non-fetching AMO to one locale leaves those to another
    /// in flight (the negative control of the window's settle).
    WindowAnyTarget,
}

impl Weakening {
    /// Every weakening, in the order of the list above.
    pub const ALL: [Weakening; 15] = [
        Weakening::NoForcing,
        Weakening::NoSourceWait,
        Weakening::ReadAmoNoForce,
        Weakening::WarUnsettled,
        Weakening::LocalAmoNoForce,
        Weakening::LocalNbOnNoTaskCreate,
        Weakening::PostponeUnbound,
        Weakening::NbGetUncounted,
        Weakening::WorkFlagBeforePost,
        Weakening::P2pReadNoForce,
        Weakening::MappedUnordered,
        Weakening::MappedStaticsPrivate,
        Weakening::RangeBlind,
        Weakening::BatchUnwaited,
        Weakening::WindowAnyTarget,
    ];

    /// The `PGAS_MCM_WEAKEN` spelling.
    pub const fn name(self) -> &'static str {
        match self {
            Weakening::NoForcing => "no-forcing",
            Weakening::NoSourceWait => "no-source-wait",
            Weakening::ReadAmoNoForce => "read-amo-no-force",
            Weakening::WarUnsettled => "war-unsettled",
            Weakening::LocalAmoNoForce => "local-amo-no-force",
            Weakening::LocalNbOnNoTaskCreate => "local-nb-on-no-task-create",
            Weakening::PostponeUnbound => "postpone-unbound",
            Weakening::NbGetUncounted => "nb-get-uncounted",
            Weakening::WorkFlagBeforePost => "work-flag-before-post",
            Weakening::P2pReadNoForce => "p2p-read-no-force",
            Weakening::MappedUnordered => "mapped-unordered",
            Weakening::MappedStaticsPrivate => "mapped-statics-private",
            Weakening::RangeBlind => "range-blind",
            Weakening::BatchUnwaited => "batch-unwaited",
            Weakening::WindowAnyTarget => "window-any-target",
        }
    }

    /// The weakening spelled `s` (surrounding space ignored), if any.
    pub fn parse(s: &str) -> Option<Weakening> {
        let s = s.trim();
        Weakening::ALL.into_iter().find(|w| w.name() == s)
    }

    /// The policy's weakening bits (0 for a hole of the generic layers).
    const fn bits(self) -> u8 {
        match self {
            Weakening::NoForcing => NO_FORCING,
            Weakening::NoSourceWait => NO_SOURCE_WAIT,
            Weakening::ReadAmoNoForce => READ_AMO_NO_FORCE,
            Weakening::WarUnsettled => WAR_UNSETTLED,
            Weakening::RangeBlind => RANGE_BLIND,
            Weakening::BatchUnwaited => BATCH_UNWAITED,
            Weakening::WindowAnyTarget => WINDOW_ANY_TARGET,
            _ => 0,
        }
    }
}

/// The implementors of one MCM mode, for transports of type `T`.
///
/// Build one with [`Selector::for_mode`] at start-up, keep it (it is `Copy`),
/// and call its methods with the caller's transmit context.
pub struct Selector<T: Transport> {
    mode: Mode,
    weakening: Option<Weakening>,
    put: PutFn<T>,
    get: GetFn<T>,
    amo: AmoFn<T>,
    /// `None`: each AMO as the mode's ordered non-fetching `amo`.
    amo_batch: Option<AmoBatchFn<T>>,
    send: SendFn<T>,
    force_visible: ForceVisibleFn<T>,
    /// Whether `amo` relies on atomic WAW beyond what the mode requires
    /// (see [`Selector::with_atomic_waw`]).
    amo_window: bool,
}

impl<T: Transport> Selector<T> {
    /// The table for `mode`.
    pub fn for_mode(mode: Mode) -> Self {
        Self::build::<0>(mode, None, false)
    }

    /// **TEST-ONLY. BREAKS THE MEMORY MODEL. NEVER USE IN A REAL RUN.**
    ///
    /// The table for `mode` with all visibility forcing switched off
    /// ([`Weakening::NoForcing`]): boundaries do nothing, and PUT/GET/AMO/send
    /// add no fence and force nothing. It exists so that negative controls
    /// can show the litmus tests catch a broken policy: the loom tests here,
    /// and the multi-process litmus suite through an environment switch, which
    /// is why it is not `cfg(test)`.
    #[doc(hidden)]
    pub fn for_mode_without_forcing(mode: Mode) -> Self {
        Self::build::<NO_FORCING>(mode, Some(Weakening::NoForcing), false)
    }

    /// **TEST-ONLY. BREAKS PUT SOURCE SAFETY. NEVER USE IN A REAL RUN.**
    ///
    /// The table for `mode` where a blocking PUT does not wait for local
    /// completion ([`Weakening::NoSourceWait`]), the negative control of the
    /// PUT-SRC litmus test.
    #[doc(hidden)]
    pub fn for_mode_without_source_wait(mode: Mode) -> Self {
        Self::build::<NO_SOURCE_WAIT>(mode, Some(Weakening::NoSourceWait), false)
    }

    /// **TEST-ONLY**: [`for_mode`](Self::for_mode) if `weakening` is `None`,
    /// else the matching weakened table. A weakening of the generic layers
    /// gives the normal policy, remembered in [`weakening`](Self::weakening)
    /// for those layers to consult.
    #[doc(hidden)]
    pub fn weakened(mode: Mode, weakening: Option<Weakening>) -> Self {
        Self::table(mode, weakening, false)
    }

    /// The table for `mode`, `weakening` and the AMO window.
    fn table(mode: Mode, weakening: Option<Weakening>, amo_window: bool) -> Self {
        let w = weakening;
        match weakening.map(Weakening::bits) {
            Some(NO_FORCING) => Self::build::<NO_FORCING>(mode, w, amo_window),
            Some(NO_SOURCE_WAIT) => Self::build::<NO_SOURCE_WAIT>(mode, w, amo_window),
            Some(READ_AMO_NO_FORCE) => Self::build::<READ_AMO_NO_FORCE>(mode, w, amo_window),
            Some(WAR_UNSETTLED) => Self::build::<WAR_UNSETTLED>(mode, w, amo_window),
            Some(RANGE_BLIND) => Self::build::<RANGE_BLIND>(mode, w, amo_window),
            Some(BATCH_UNWAITED) => Self::build::<BATCH_UNWAITED>(mode, w, amo_window),
            Some(WINDOW_ANY_TARGET) => Self::build::<WINDOW_ANY_TARGET>(mode, w, amo_window),
            None | Some(_) => Self::build::<0>(mode, w, amo_window),
        }
    }

    /// The same table for a provider that also grants atomic WAW ordering
    /// (`FI_ORDER_ATOMIC_WAW`, transmit and receive side, on every locale).
    /// delivery-complete, which requires no ordering, then keeps a window of
    /// non-fetching AMOs to one target in flight instead of waiting for each
    /// (the *AMO window*: `docs/mcm.md`, "delivery-complete's AMO window");
    /// the other modes already require atomic WAW or more and do not change.
    pub fn with_atomic_waw(self) -> Self {
        if self.mode != Mode::DeliveryComplete {
            return self;
        }
        Self::table(self.mode, self.weakening, true)
    }

    /// Whether this table relies on atomic WAW ordering beyond what its mode
    /// requires ([`with_atomic_waw`](Self::with_atomic_waw) in
    /// delivery-complete): delivery-complete's AMO window is on.
    pub fn amo_window(&self) -> bool {
        self.amo_window
    }

    /// Whether the generic layers must re-open hole `w` (test-only; always
    /// false in a real run).
    #[doc(hidden)]
    #[inline]
    pub fn is_weakened(&self, w: Weakening) -> bool {
        self.weakening == Some(w)
    }

    /// `amo_window` applies to delivery-complete only (the other modes
    /// require atomic WAW already).
    fn build<const W: u8>(mode: Mode, weakening: Option<Weakening>, amo_window: bool) -> Self {
        match mode {
            Mode::MessageOrderFence => Selector {
                mode,
                weakening,
                put: fence::put::<T, W>,
                get: fence::get::<T, W>,
                amo: fence::amo::<T, W>,
                amo_batch: None,
                send: fence::send::<T, W>,
                force_visible: fence::force_visible::<T, W>,
                amo_window: false,
            },
            Mode::MessageOrder => Selector {
                mode,
                weakening,
                put: order::put::<T, W>,
                get: order::get::<T, W>,
                amo: order::amo::<T, W>,
                amo_batch: None,
                send: order::send::<T, W>,
                force_visible: order::force_visible::<T, W>,
                amo_window: false,
            },
            Mode::DeliveryComplete => Selector {
                mode,
                weakening,
                put: dc::put::<T, W>,
                get: dc::get::<T, W>,
                amo: if amo_window {
                    dc::amo_windowed::<T, W>
                } else {
                    dc::amo::<T, W>
                },
                amo_batch: Some(dc::amo_batch::<T, W>),
                send: dc::send::<T, W>,
                force_visible: dc::force_visible::<T, W>,
                amo_window,
            },
        }
    }

    /// The mode this table carries out.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The test-only weakening this table was built with, if any.
    #[doc(hidden)]
    pub fn weakening(&self) -> Option<Weakening> {
        self.weakening
    }

    /// PUT `op` to `target` on `tx`. With [`Blocking::Yes`] it returns once
    /// the source may be reused.
    #[inline]
    pub fn put(
        &self,
        tx: &mut T,
        target: Locale,
        op: T::Put,
        blocking: Blocking,
    ) -> Result<(), T::Error> {
        (self.put)(tx, target, op, blocking)
    }

    /// GET `op` from `target` on `tx`. With [`Blocking::Yes`] it returns once
    /// the destination holds the data.
    #[inline]
    pub fn get(
        &self,
        tx: &mut T,
        target: Locale,
        op: T::Get,
        blocking: Blocking,
    ) -> Result<(), T::Error> {
        (self.get)(tx, target, op, blocking)
    }

    /// Native AMO `op` of `kind` on a word of `target`; returns once it has
    /// completed locally, or (delivery-complete's AMO window, see
    /// [`with_atomic_waw`](Self::with_atomic_waw)) once the transport holds
    /// its own copy of the operand: either way the caller may reuse it.
    #[inline]
    pub fn amo(
        &self,
        tx: &mut T,
        target: Locale,
        op: T::Amo,
        kind: AmoKind,
    ) -> Result<(), T::Error> {
        (self.amo)(tx, target, op, kind)
    }

    /// A batch of *unordered* non-fetching native AMOs (the task's buffered
    /// `*_unordered` atomics at its fence), unordered among themselves by
    /// the API's contract: they may be in flight together, so the caller
    /// gives each its own operand storage. Returns once they are as visible
    /// as the mode's ordered non-fetching AMOs would be (delivery-complete:
    /// delivered).
    #[inline]
    pub fn amo_batch(
        &self,
        tx: &mut T,
        ops: &mut dyn Iterator<Item = (Locale, T::Amo)>,
    ) -> Result<(), T::Error> {
        match self.amo_batch {
            Some(batch) => batch(tx, ops),
            None => {
                for (target, op) in ops {
                    (self.amo)(tx, target, op, AmoKind::Update)?;
                }
                Ok(())
            }
        }
    }

    /// AM send `op` to `target` (on-statement, AM-mediated RMA or AMO);
    /// returns once the send has completed locally.
    #[inline]
    pub fn send(&self, tx: &mut T, target: Locale, op: T::Send) -> Result<(), T::Error> {
        (self.send)(tx, target, op)
    }

    /// The boundary: make every dangling store of `tx` visible. Call at task
    /// create (before the child can run), task end, start and end of an
    /// on-statement body, barrier entry, and before the AM handler's 'done'.
    #[inline]
    pub fn force_visible(&self, tx: &mut T) -> Result<(), T::Error> {
        (self.force_visible)(tx)
    }

    /// Call before an unbound context is handed back for another holder: it
    /// forces everything visible, so dangling state never outlives its holder.
    /// On a bound context it does nothing (state is carried lazily to the next
    /// boundary).
    #[inline]
    pub fn release(&self, tx: &mut T) -> Result<(), T::Error> {
        match tx.binding() {
            Binding::Bound => Ok(()),
            Binding::Unbound => (self.force_visible)(tx),
        }
    }
}

impl<T: Transport> Clone for Selector<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Transport> Copy for Selector<T> {}

impl<T: Transport> fmt::Debug for Selector<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Selector")
            .field("mode", &self.mode)
            .field("weakening", &self.weakening)
            .field("amo_window", &self.amo_window)
            .finish_non_exhaustive()
    }
}
