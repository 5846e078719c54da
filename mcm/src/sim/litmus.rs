//! The litmus programs of `LITMUS.md`, written against the simulated fabric
//! and calling the real implementors through a [`Selector`].
//!
//! Each program builds a fresh fabric, runs, quiesces, shuts the fabric down
//! and reports `Err(Violation)` if it observed its forbidden outcome. They are
//! run exhaustively (bounded) by the loom tests and with many seeds by the
//! plain unit tests; [`negative_control`] says, per mode, whether the
//! weakened policy must be caught by each program, and why.
//!
//! Locales are numbered as in `LITMUS.md`; "tasks" on other workers or
//! locales are threads with their own bound transmit context.

use std::fmt;

use super::{
    Addr, Progress, ProviderOrdering, SimAmo, SimConfig, SimFabric, SimGet, SimPut, SimSend,
    SimTxContext,
};
use crate::sync::thread;
use crate::{Binding, Blocking, Mode, Selector, Weakening};

/// Words per locale in every litmus fabric.
const WORDS: usize = 4;

/// The text every violation's message starts with, for tests that catch the
/// panic of a negative control.
pub const FORBIDDEN: &str = "forbidden outcome";

/// How to run a litmus program: which policy, over which provider, driven how.
#[derive(Clone, Copy, Debug)]
pub struct Litmus {
    /// The implementors under test.
    pub selector: Selector<SimTxContext>,
    /// The simulated provider's orderings.
    pub ordering: ProviderOrdering,
    /// Who runs the NIC's steps.
    pub progress: Progress,
}

impl Litmus {
    /// `selector` over the weakest provider it accepts, with a NIC
    /// thread (the loom set-up).
    pub fn new(selector: Selector<SimTxContext>) -> Self {
        Litmus {
            ordering: ProviderOrdering::for_selector(&selector),
            progress: Progress::NicThread,
            selector,
        }
    }

    /// The same, driven by [`Progress::Seeded`] with `seed`.
    pub fn seeded(self, seed: u64) -> Self {
        Litmus {
            progress: Progress::Seeded(seed),
            ..self
        }
    }

    /// The same, over a provider with `ordering`.
    pub fn with_ordering(self, ordering: ProviderOrdering) -> Self {
        Litmus { ordering, ..self }
    }

    fn fabric(&self, locales: usize) -> SimFabric {
        SimFabric::new(SimConfig {
            locales,
            words: WORDS,
            ordering: self.ordering,
            progress: self.progress,
        })
    }
}

/// A litmus program. The `*Nb` variants use non-blocking PUTs; `*Split`
/// variants put the data and the flag (or the AM) on different locales.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LitmusTest {
    /// L0: `put(y@L1, buf)`; `buf = 2`; task end. Forbidden: y == 2.
    PutSrc,
    /// L0: `put(x@L1, 7)`; `r = get(x@L1)`. Forbidden: r != 7.
    Raw,
    /// [`Raw`](Self::Raw) with a non-blocking PUT.
    RawNb,
    /// L0: `put(x@L1, 1)`; `put(x@L1, 2)`; task end. Forbidden: x == 1 at the end.
    Waw,
    /// [`Waw`](Self::Waw) with non-blocking PUTs.
    WawNb,
    /// L0: `put(d@L1, 1)`; `f@L1.write(1)` (native AMO). L1 meanwhile: reads f,
    /// then d. Forbidden: f == 1 and d == 0.
    MpAtomic,
    /// [`MpAtomic`](Self::MpAtomic) with f on L2.
    MpAtomicSplit,
    /// L0: `d@L1.add(1)` (native AMO, non-fetching: it dangles);
    /// `f@L1.write(1)`. L1 meanwhile: reads f, then d. Forbidden: f == 1 and
    /// d == 0. message-order posts no proof of d before the flag (the add
    /// window's shortcut): WAW orders the two AMOs at their target.
    MpAmoAmo,
    /// [`MpAmoAmo`](Self::MpAmoAmo) with f on L2: the proof of d is needed.
    MpAmoAmoSplit,
    /// L0: `put(d@L1, 1)`; `on L1 { r = d }`. Forbidden: r == 0.
    MpAm,
    /// L0: `put(d@L2, 1)`; `on L1 { r = d@L2 }`. Forbidden: r == 0.
    MpAmSplit,
    /// [`MpAm`](Self::MpAm) with a non-blocking PUT.
    MpAmNb,
    /// L0: `coforall loc in L1, L2 on loc { put(a[me]@L0, me) }`; then L0 reads
    /// a. Forbidden: a stale entry.
    TaskEnd,
    /// L0: `on L1 { c@L0.add(1) }` (native AMO); then L0 reads c. Forbidden:
    /// c == 0.
    TaskEndAmo,
    /// L0: `put(d@L1, 1)`; `begin { r = get(d@L1) }` on another worker.
    /// Forbidden: r == 0.
    TaskCreate,
    /// [`TaskCreate`](Self::TaskCreate) with a non-blocking PUT.
    TaskCreateNb,
    /// Store buffering with the two atomics on different locales: L0:
    /// `x@L2.write(1); r0 = y@L3.read()`, L1: `y@L3.write(1); r1 =
    /// x@L2.read()`. Forbidden: r0 == 0 and r1 == 0.
    SbAtomicSplit,
    /// L0: `get_nb(x@L1)` (initially 0); `put(x@L1, 2)`; wait. Forbidden: the
    /// GET read 2 (write-after-read).
    WarNb,
    /// MP-atomic from a thread with no context of its own: `put(d@L1, 1)` on
    /// one shared context, then `f@L1.write(1)` on another (each released
    /// after use, as comm-ofi does for unbound threads). Forbidden: f == 1
    /// and d == 0.
    MpUnbound,
    /// A window of non-blocking PUTs, then a flag: L0: `put_nb(a@L1, 1)`;
    /// `put_nb(b@L1, 1)` (disjoint: delivery-complete does not wait between
    /// them); `put_nb(a@L1, 2)` (overlaps the first: waits it out);
    /// `f@L1.write(1)`. L1 meanwhile reads f, then a and b. Forbidden: f == 1
    /// and (a, b) != (2, 1).
    WindowNb,
    /// L0: a batch of unordered adds `b@L1 += 1`, `a@L1 += 1`
    /// ([`Selector::amo_batch`](crate::Selector::amo_batch)), then
    /// `on L2 { r = a@L1 }`. Forbidden: r == 0.
    BatchSplit,
}

impl LitmusTest {
    /// Every program.
    pub const ALL: [LitmusTest; 21] = [
        LitmusTest::PutSrc,
        LitmusTest::Raw,
        LitmusTest::RawNb,
        LitmusTest::Waw,
        LitmusTest::WawNb,
        LitmusTest::MpAtomic,
        LitmusTest::MpAtomicSplit,
        LitmusTest::MpAmoAmo,
        LitmusTest::MpAmoAmoSplit,
        LitmusTest::MpAm,
        LitmusTest::MpAmSplit,
        LitmusTest::MpAmNb,
        LitmusTest::TaskEnd,
        LitmusTest::TaskEndAmo,
        LitmusTest::TaskCreate,
        LitmusTest::TaskCreateNb,
        LitmusTest::SbAtomicSplit,
        LitmusTest::WarNb,
        LitmusTest::MpUnbound,
        LitmusTest::WindowNb,
        LitmusTest::BatchSplit,
    ];

    /// The name used in LITMUS.md (plus a variant suffix).
    pub const fn name(self) -> &'static str {
        match self {
            LitmusTest::PutSrc => "PUT-SRC",
            LitmusTest::Raw => "RAW",
            LitmusTest::RawNb => "RAW-NB",
            LitmusTest::Waw => "WAW",
            LitmusTest::WawNb => "WAW-NB",
            LitmusTest::MpAtomic => "MP-atomic",
            LitmusTest::MpAtomicSplit => "MP-atomic-split",
            LitmusTest::MpAmoAmo => "MP-AMO-AMO",
            LitmusTest::MpAmoAmoSplit => "MP-AMO-AMO-split",
            LitmusTest::MpAm => "MP-AM",
            LitmusTest::MpAmSplit => "MP-AM-split",
            LitmusTest::MpAmNb => "MP-AM-NB",
            LitmusTest::TaskEnd => "TASK-END",
            LitmusTest::TaskEndAmo => "TASK-END-AMO",
            LitmusTest::TaskCreate => "TASK-CREATE",
            LitmusTest::TaskCreateNb => "TASK-CREATE-NB",
            LitmusTest::SbAtomicSplit => "SB-atomic-split",
            LitmusTest::WarNb => "WAR-NB",
            LitmusTest::MpUnbound => "MP-unbound",
            LitmusTest::WindowNb => "WINDOW-NB",
            LitmusTest::BatchSplit => "BATCH-split",
        }
    }

    /// Runs the program once on a fresh fabric.
    pub fn run(self, litmus: &Litmus) -> Result<(), Violation> {
        let nb = |variant: bool| if variant { Blocking::No } else { Blocking::Yes };
        match self {
            LitmusTest::PutSrc => put_src(litmus),
            LitmusTest::Raw | LitmusTest::RawNb => raw(litmus, nb(self == LitmusTest::RawNb)),
            LitmusTest::Waw | LitmusTest::WawNb => waw(litmus, nb(self == LitmusTest::WawNb)),
            LitmusTest::MpAtomic => mp_atomic(litmus, 1),
            LitmusTest::MpAtomicSplit => mp_atomic(litmus, 2),
            LitmusTest::MpAmoAmo => mp_amo_amo(litmus, 1),
            LitmusTest::MpAmoAmoSplit => mp_amo_amo(litmus, 2),
            LitmusTest::MpAm => mp_am(litmus, 1, Blocking::Yes),
            LitmusTest::MpAmSplit => mp_am(litmus, 2, Blocking::Yes),
            LitmusTest::MpAmNb => mp_am(litmus, 1, Blocking::No),
            LitmusTest::TaskEnd => task_end(litmus),
            LitmusTest::TaskEndAmo => task_end_amo(litmus),
            LitmusTest::TaskCreate => task_create(litmus, Blocking::Yes),
            LitmusTest::TaskCreateNb => task_create(litmus, Blocking::No),
            LitmusTest::SbAtomicSplit => sb_atomic_split(litmus),
            LitmusTest::WarNb => war_nb(litmus),
            LitmusTest::MpUnbound => mp_unbound(litmus),
            LitmusTest::WindowNb => window_nb(litmus),
            LitmusTest::BatchSplit => batch_split(litmus),
        }
    }
}

impl fmt::Display for LitmusTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A forbidden outcome, observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The program that observed it.
    pub test: LitmusTest,
    /// What was observed.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{FORBIDDEN} in {}: {}", self.test, self.detail)
    }
}

impl std::error::Error for Violation {}

/// What a negative control of `test` in `mode` is expected to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NegativeControl {
    /// The weakening that targets this program.
    pub weakening: Weakening,
    /// Whether the weakened policy must be caught (the forbidden outcome is
    /// reachable); if not, the provider ordering or completion level the mode
    /// asks for protects the program on its own.
    pub caught: bool,
    /// Why.
    pub why: &'static str,
}

/// The negative-control table: for each mode and program, the weakening to
/// apply and whether the simulated provider lets the forbidden outcome
/// through without the policy's forcing.
pub fn negative_control(mode: Mode, test: LitmusTest) -> NegativeControl {
    use LitmusTest as T;
    use Mode::{DeliveryComplete as Dc, MessageOrder as Order, MessageOrderFence as Fence};
    let (caught, why) = match (mode, test) {
        (_, T::PutSrc) => (
            true,
            "the NIC reads a PUT's source late; only the blocking PUT's wait for local completion protects it",
        ),
        (Fence, T::Raw | T::RawNb) => (true, "no RAW ordering: only the fence on the GET holds it behind the PUT"),
        (Order, T::Raw | T::RawNb) => (false, "the provider's RAW ordering holds the GET behind the PUT"),
        (Dc, T::Raw) => (false, "the blocking PUT waited for delivery"),
        (Dc, T::RawNb) => (true, "no ordering: only settling the non-blocking PUT holds the GET behind it"),
        (Fence, T::Waw | T::WawNb) => (false, "RMA WAW ordering (kept in this mode) orders the PUTs"),
        (Order, T::Waw | T::WawNb) => (false, "WAW ordering orders the PUTs"),
        (Dc, T::Waw) => (false, "the first blocking PUT waited for delivery"),
        (Dc, T::WawNb) => (true, "no ordering: only settling the first PUT keeps the second behind it"),
        (Fence, T::MpAtomic | T::MpAtomicSplit) => (
            true,
            "nothing orders an AMO after a PUT: only the fence (same target) or the forced order GET (other target) does",
        ),
        (Order, T::MpAtomic) => (false, "WAW ordering covers a PUT then an AMO to the same target"),
        (Order, T::MpAtomicSplit) => (true, "different targets are never ordered: only forcing before the AMO helps"),
        (Dc, T::MpAtomic | T::MpAtomicSplit) => (false, "the blocking PUT waited for delivery"),
        (Fence, T::MpAmoAmo) => (false, "atomic WAW ordering orders the two AMOs at their target"),
        (Order, T::MpAmoAmo) => (false, "WAW ordering (atomics included) orders the two AMOs at their target"),
        (Fence | Order, T::MpAmoAmoSplit) => (
            true,
            "a non-fetching AMO completes before it lands and different targets are never ordered: only the proof before the flag helps",
        ),
        (Dc, T::MpAmoAmo | T::MpAmoAmoSplit) => (false, "the first AMO waited for delivery"),
        (Fence, T::MpAm | T::MpAmSplit | T::MpAmNb) => (
            true,
            "no SAW ordering: only the fence on the send (same target) or the forced order GET (other target) does",
        ),
        (Order, T::MpAm | T::MpAmNb) => (false, "SAW ordering holds the AM behind the PUT to its target"),
        (Order, T::MpAmSplit) => (true, "different targets are never ordered: only forcing before the send helps"),
        (Dc, T::MpAm | T::MpAmSplit) => (false, "the blocking PUT waited for delivery"),
        (Dc, T::MpAmNb) => (true, "no ordering: only settling the non-blocking PUT keeps the AM behind it"),
        (Fence | Order, T::TaskEnd | T::TaskCreate | T::TaskCreateNb) => (
            true,
            "the reader uses another context, never ordered with the writer's: only forcing at the boundary helps",
        ),
        (Fence | Order, T::TaskEndAmo) => (
            true,
            "a non-fetching AMO completes before it lands: only the proof at task end helps",
        ),
        (Dc, T::TaskEnd | T::TaskCreate) => (false, "the blocking PUT waited for delivery"),
        (Dc, T::TaskEndAmo) => (false, "the AMO waited for delivery"),
        (Dc, T::TaskCreateNb) => (true, "only settling the non-blocking PUT at the boundary helps"),
        (Fence | Order, T::SbAtomicSplit) => (
            true,
            "the write to one locale and the read of another are never ordered: only forcing before the reading AMO helps",
        ),
        (Dc, T::SbAtomicSplit) => (false, "every AMO waited for delivery"),
        (_, T::WarNb) => (
            true,
            "no mode asks for write-after-read ordering: only settling the GET before the PUT helps",
        ),
        (Fence | Order, T::MpUnbound) => (
            true,
            "the two stores leave on different contexts, never ordered: only forcing at release helps",
        ),
        (Dc, T::MpUnbound) => (false, "the blocking PUT waited for delivery"),
        (Fence, T::WindowNb) => (
            true,
            "nothing orders the AMO after the PUTs: only the fence on the flag holds it behind them",
        ),
        (Fence | Order, T::BatchSplit) => (
            true,
            "a non-fetching AMO completes before it lands and different targets are never ordered: only the proof before the send helps",
        ),
        (Dc, T::BatchSplit) => (true, "no ordering: only the batch's wait keeps the on-statement behind the adds"),
        (Order, T::WindowNb) => (false, "WAW ordering holds the PUTs and the AMO in order at their target"),
        (Dc, T::WindowNb) => (
            true,
            "no ordering: only waiting out the first PUT before the overlapping third keeps a == 2",
        ),
    };
    let weakening = match (mode, test) {
        (_, T::PutSrc) => Weakening::NoSourceWait,
        (_, T::WarNb) => Weakening::WarUnsettled,
        (Order, T::SbAtomicSplit) => Weakening::ReadAmoNoForce,
        (Dc, T::WindowNb) => Weakening::RangeBlind,
        (Dc, T::BatchSplit) => Weakening::BatchUnwaited,
        _ => Weakening::NoForcing,
    };
    NegativeControl {
        weakening,
        caught,
        why,
    }
}

/// Runs `body` on a fresh fabric of `locales`, then shuts the fabric down
/// (which a loom model needs), whatever `body` found.
fn on_fabric(
    litmus: &Litmus,
    locales: usize,
    body: impl FnOnce(&SimFabric) -> Result<(), Violation>,
) -> Result<(), Violation> {
    let fabric = litmus.fabric(locales);
    let outcome = body(&fabric);
    fabric.shutdown();
    outcome
}

fn violation(test: LitmusTest, detail: String) -> Result<(), Violation> {
    Err(Violation { test, detail })
}

/// Sim transports only fail on bad addresses, which these programs never use.
fn ok<T>(result: Result<T, super::SimError>) -> T {
    result.unwrap_or_else(|e| panic!("litmus program misused the simulated fabric: {e}"))
}

fn put_src(litmus: &Litmus) -> Result<(), Violation> {
    const BUF: usize = 0;
    const Y: usize = 0;
    let sel = litmus.selector;
    on_fabric(litmus, 2, |fabric| {
        let mut tx = fabric.context(0, Binding::Bound);
        fabric.store(Addr::new(0, BUF), 1);
        ok(sel.put(&mut tx, 1, SimPut { src: BUF, dst: Y }, Blocking::Yes));
        fabric.store(Addr::new(0, BUF), 2);
        ok(sel.force_visible(&mut tx)); // task end
        fabric.quiesce();
        match fabric.load(Addr::new(1, Y)) {
            1 => Ok(()),
            y => violation(LitmusTest::PutSrc, format!("y == {y}, expected 1")),
        }
    })
}

fn raw(litmus: &Litmus, blocking: Blocking) -> Result<(), Violation> {
    const BUF: usize = 0;
    const R: usize = 1;
    const X: usize = 0;
    let test = if blocking == Blocking::Yes {
        LitmusTest::Raw
    } else {
        LitmusTest::RawNb
    };
    let sel = litmus.selector;
    on_fabric(litmus, 2, |fabric| {
        let mut tx = fabric.context(0, Binding::Bound);
        fabric.store(Addr::new(0, BUF), 7);
        ok(sel.put(&mut tx, 1, SimPut { src: BUF, dst: X }, blocking));
        ok(sel.get(&mut tx, 1, SimGet { src: X, dst: R }, Blocking::Yes));
        match fabric.load(Addr::new(0, R)) {
            7 => Ok(()),
            r => violation(test, format!("r == {r}, expected 7")),
        }
    })
}

fn waw(litmus: &Litmus, blocking: Blocking) -> Result<(), Violation> {
    const ONE: usize = 0;
    const TWO: usize = 1;
    const X: usize = 0;
    let test = if blocking == Blocking::Yes {
        LitmusTest::Waw
    } else {
        LitmusTest::WawNb
    };
    let sel = litmus.selector;
    on_fabric(litmus, 2, |fabric| {
        let mut tx = fabric.context(0, Binding::Bound);
        fabric.store(Addr::new(0, ONE), 1);
        fabric.store(Addr::new(0, TWO), 2);
        ok(sel.put(&mut tx, 1, SimPut { src: ONE, dst: X }, blocking));
        ok(sel.put(&mut tx, 1, SimPut { src: TWO, dst: X }, blocking));
        ok(sel.force_visible(&mut tx)); // task end
        fabric.quiesce();
        match fabric.load(Addr::new(1, X)) {
            2 => Ok(()),
            x => violation(test, format!("x == {x} after both PUTs landed, expected 2")),
        }
    })
}

fn mp_atomic(litmus: &Litmus, flag_locale: usize) -> Result<(), Violation> {
    const BUF: usize = 0;
    const D: usize = 0;
    const F: usize = 1;
    let test = if flag_locale == 1 {
        LitmusTest::MpAtomic
    } else {
        LitmusTest::MpAtomicSplit
    };
    let sel = litmus.selector;
    on_fabric(litmus, 3, |fabric| {
        let mut tx = fabric.context(0, Binding::Bound);
        fabric.store(Addr::new(0, BUF), 1);
        ok(sel.put(&mut tx, 1, SimPut { src: BUF, dst: D }, Blocking::Yes));
        let flag = SimAmo::Write { word: F, value: 1 };
        ok(sel.amo(&mut tx, flag_locale, flag, flag.kind()));
        // L1 waiting for the flag: it looks at every state the network goes
        // through from here on.
        let seen = fabric.quiesce_observing(|fabric| {
            let f = fabric.load(Addr::new(flag_locale, F));
            let d = fabric.load(Addr::new(1, D));
            (f == 1 && d == 0).then(|| format!("L1 saw f == 1 then d == {d}"))
        });
        match seen {
            None => Ok(()),
            Some(detail) => violation(test, detail),
        }
    })
}

fn window_nb(litmus: &Litmus) -> Result<(), Violation> {
    const ONE: usize = 0;
    const TWO: usize = 1;
    const A: usize = 0;
    const B: usize = 1;
    const F: usize = 2;
    let sel = litmus.selector;
    on_fabric(litmus, 2, |fabric| {
        let mut tx = fabric.context(0, Binding::Bound);
        fabric.store(Addr::new(0, ONE), 1);
        fabric.store(Addr::new(0, TWO), 2);
        ok(sel.put(&mut tx, 1, SimPut { src: ONE, dst: A }, Blocking::No));
        ok(sel.put(&mut tx, 1, SimPut { src: ONE, dst: B }, Blocking::No));
        ok(sel.put(&mut tx, 1, SimPut { src: TWO, dst: A }, Blocking::No));
        let flag = SimAmo::Write { word: F, value: 1 };
        ok(sel.amo(&mut tx, 1, flag, flag.kind()));
        let seen = fabric.quiesce_observing(|fabric| {
            let f = fabric.load(Addr::new(1, F));
            let a = fabric.load(Addr::new(1, A));
            let b = fabric.load(Addr::new(1, B));
            (f == 1 && (a, b) != (2, 1)).then(|| format!("L1 saw f == 1 then a == {a}, b == {b}"))
        });
        match seen {
            None => Ok(()),
            Some(detail) => violation(LitmusTest::WindowNb, detail),
        }
    })
}

fn batch_split(litmus: &Litmus) -> Result<(), Violation> {
    const A: usize = 0;
    const B: usize = 1;
    const R: usize = 0;
    let sel = litmus.selector;
    on_fabric(litmus, 3, |fabric| {
        let mut tx = fabric.context(0, Binding::Bound);
        let adds = [
            (1, SimAmo::Add { word: B, value: 1 }),
            (1, SimAmo::Add { word: A, value: 1 }),
        ];
        ok(sel.amo_batch(&mut tx, &mut adds.into_iter()));
        let on_body = SimSend::CopyWord {
            from: Addr::new(1, A),
            to: R,
        };
        ok(sel.send(&mut tx, 2, on_body));
        fabric.quiesce();
        match fabric.load(Addr::new(2, R)) {
            1 => Ok(()),
            r => violation(LitmusTest::BatchSplit, format!("the on-body read a == {r}")),
        }
    })
}

fn mp_amo_amo(litmus: &Litmus, flag_locale: usize) -> Result<(), Violation> {
    const D: usize = 0;
    const F: usize = 1;
    let test = if flag_locale == 1 {
        LitmusTest::MpAmoAmo
    } else {
        LitmusTest::MpAmoAmoSplit
    };
    let sel = litmus.selector;
    on_fabric(litmus, 3, |fabric| {
        let mut tx = fabric.context(0, Binding::Bound);
        let data = SimAmo::Add { word: D, value: 1 };
        ok(sel.amo(&mut tx, 1, data, data.kind()));
        let flag = SimAmo::Write { word: F, value: 1 };
        ok(sel.amo(&mut tx, flag_locale, flag, flag.kind()));
        let seen = fabric.quiesce_observing(|fabric| {
            let f = fabric.load(Addr::new(flag_locale, F));
            let d = fabric.load(Addr::new(1, D));
            (f == 1 && d == 0).then(|| format!("L1 saw f == 1 then d == {d}"))
        });
        match seen {
            None => Ok(()),
            Some(detail) => violation(test, detail),
        }
    })
}

fn mp_am(litmus: &Litmus, data_locale: usize, blocking: Blocking) -> Result<(), Violation> {
    const BUF: usize = 0;
    const D: usize = 0;
    const R: usize = 1;
    let test = match (data_locale, blocking) {
        (1, Blocking::Yes) => LitmusTest::MpAm,
        (1, Blocking::No) => LitmusTest::MpAmNb,
        _ => LitmusTest::MpAmSplit,
    };
    let sel = litmus.selector;
    on_fabric(litmus, 3, |fabric| {
        let mut tx = fabric.context(0, Binding::Bound);
        fabric.store(Addr::new(0, BUF), 1);
        ok(sel.put(&mut tx, data_locale, SimPut { src: BUF, dst: D }, blocking));
        let on_body = SimSend::CopyWord {
            from: Addr::new(data_locale, D),
            to: R,
        };
        ok(sel.send(&mut tx, 1, on_body));
        // The on-statement is blocking: its 'done' comes after the handler ran.
        fabric.quiesce();
        match fabric.load(Addr::new(1, R)) {
            1 => Ok(()),
            r => violation(test, format!("the on-body read d == {r}")),
        }
    })
}

fn task_end(litmus: &Litmus) -> Result<(), Violation> {
    const BUF: usize = 0;
    let sel = litmus.selector;
    on_fabric(litmus, 3, |fabric| {
        let tasks: Vec<_> = (1..=2)
            .map(|me| {
                let mut tx = fabric.context(me, Binding::Bound);
                thread::spawn(move || {
                    let fabric = tx.fabric();
                    fabric.store(Addr::new(me, BUF), me as u64);
                    ok(sel.put(&mut tx, 0, SimPut { src: BUF, dst: me }, Blocking::Yes));
                    ok(sel.force_visible(&mut tx)); // on-body end / task end
                })
            })
            .collect();
        for task in tasks {
            task.join().expect("task panicked");
        }
        // The coforall has ended: L0 reads a right away.
        let a: Vec<u64> = (1..=2).map(|me| fabric.load(Addr::new(0, me))).collect();
        if a == [1, 2] {
            Ok(())
        } else {
            violation(
                LitmusTest::TaskEnd,
                format!("a[1..=2] == {a:?}, expected [1, 2]"),
            )
        }
    })
}

fn task_end_amo(litmus: &Litmus) -> Result<(), Violation> {
    const C: usize = 0;
    let sel = litmus.selector;
    on_fabric(litmus, 2, |fabric| {
        let mut tx = fabric.context(1, Binding::Bound);
        let task = thread::spawn(move || {
            let add = SimAmo::Add { word: C, value: 1 };
            ok(sel.amo(&mut tx, 0, add, add.kind()));
            ok(sel.force_visible(&mut tx)); // on-body end / task end
        });
        task.join().expect("task panicked");
        match fabric.load(Addr::new(0, C)) {
            1 => Ok(()),
            c => violation(
                LitmusTest::TaskEndAmo,
                format!("c == {c} after the task ended"),
            ),
        }
    })
}

fn task_create(litmus: &Litmus, blocking: Blocking) -> Result<(), Violation> {
    const BUF: usize = 0;
    const R: usize = 1;
    const D: usize = 0;
    let test = if blocking == Blocking::Yes {
        LitmusTest::TaskCreate
    } else {
        LitmusTest::TaskCreateNb
    };
    let sel = litmus.selector;
    on_fabric(litmus, 2, |fabric| {
        let mut parent = fabric.context(0, Binding::Bound);
        let mut child = fabric.context(0, Binding::Bound);
        fabric.store(Addr::new(0, BUF), 1);
        ok(sel.put(&mut parent, 1, SimPut { src: BUF, dst: D }, blocking));
        ok(sel.force_visible(&mut parent)); // task create
        let begin = thread::spawn(move || {
            ok(sel.get(&mut child, 1, SimGet { src: D, dst: R }, Blocking::Yes));
            child.fabric().load(Addr::new(0, R))
        });
        match begin.join().expect("child task panicked") {
            1 => Ok(()),
            r => violation(test, format!("the child read d == {r}")),
        }
    })
}

fn sb_atomic_split(litmus: &Litmus) -> Result<(), Violation> {
    const W: usize = 0; // the written atomic
    const R: usize = 1; // where each reader's AMO result lands
    let sel = litmus.selector;
    on_fabric(litmus, 4, |fabric| {
        // Task on L0 writes x@L2 and reads y@L3; task on L1 the other way.
        let tasks: Vec<_> = [(0usize, 2usize, 3usize), (1, 3, 2)]
            .into_iter()
            .map(|(me, write_at, read_at)| {
                let mut tx = fabric.context(me, Binding::Bound);
                thread::spawn(move || {
                    let write = SimAmo::Write { word: W, value: 1 };
                    ok(sel.amo(&mut tx, write_at, write, write.kind()));
                    let read = SimAmo::Read { word: W, dst: R };
                    ok(sel.amo(&mut tx, read_at, read, read.kind()));
                    tx.fabric().load(Addr::new(me, R))
                })
            })
            .collect();
        let r: Vec<u64> = tasks
            .into_iter()
            .map(|t| t.join().expect("task panicked"))
            .collect();
        if r == [0, 0] {
            violation(
                LitmusTest::SbAtomicSplit,
                "r0 == 0 and r1 == 0: each read overtook the other task's write".into(),
            )
        } else {
            Ok(())
        }
    })
}

fn war_nb(litmus: &Litmus) -> Result<(), Violation> {
    const TWO: usize = 0;
    const R: usize = 1;
    const X: usize = 0;
    let sel = litmus.selector;
    on_fabric(litmus, 2, |fabric| {
        let mut tx = fabric.context(0, Binding::Bound);
        fabric.store(Addr::new(0, TWO), 2);
        ok(sel.get(&mut tx, 1, SimGet { src: X, dst: R }, Blocking::No));
        ok(sel.put(&mut tx, 1, SimPut { src: TWO, dst: X }, Blocking::Yes));
        ok(sel.force_visible(&mut tx)); // the task waits for the GET, or ends
        fabric.quiesce();
        match fabric.load(Addr::new(0, R)) {
            0 => Ok(()),
            r => violation(
                LitmusTest::WarNb,
                format!("the GET issued before the PUT read {r}"),
            ),
        }
    })
}

fn mp_unbound(litmus: &Litmus) -> Result<(), Violation> {
    const BUF: usize = 0;
    const D: usize = 0;
    const F: usize = 1;
    let sel = litmus.selector;
    on_fabric(litmus, 2, |fabric| {
        let mut shared_a = fabric.context(0, Binding::Unbound);
        let mut shared_b = fabric.context(0, Binding::Unbound);
        fabric.store(Addr::new(0, BUF), 1);
        ok(sel.put(&mut shared_a, 1, SimPut { src: BUF, dst: D }, Blocking::Yes));
        ok(sel.release(&mut shared_a));
        let flag = SimAmo::Write { word: F, value: 1 };
        ok(sel.amo(&mut shared_b, 1, flag, flag.kind()));
        ok(sel.release(&mut shared_b));
        let seen = fabric.quiesce_observing(|fabric| {
            let f = fabric.load(Addr::new(1, F));
            let d = fabric.load(Addr::new(1, D));
            (f == 1 && d == 0).then(|| format!("L1 saw f == 1 then d == {d}"))
        });
        match seen {
            None => Ok(()),
            Some(detail) => violation(LitmusTest::MpUnbound, detail),
        }
    })
}
