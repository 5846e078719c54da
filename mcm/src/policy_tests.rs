//! Per-mode operation sequences, checked against a transport that records
//! what it is asked to do (no fabric, no threads).

use crate::{
    AmoKind, Binding, Blocking, DanglingStores, Locale, Mode, OpFlags, Selector, Transport,
    Weakening,
};

const NONE: OpFlags = OpFlags::NONE;
const FENCE: OpFlags = OpFlags::FENCE;
const DC: OpFlags = OpFlags::DELIVERY_COMPLETE;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Put(Locale, OpFlags),
    Get(Locale, OpFlags),
    Amo(Locale, OpFlags),
    /// An AMO left in flight (delivery-complete's window).
    AmoInFlight(Locale, OpFlags),
    Send(Locale, OpFlags),
    OrderGet(Locale, OpFlags),
    Prove(Locale, OpFlags),
    WaitAll,
}
use Ev::*;

struct Recorder {
    binding: Binding,
    dangling: DanglingStores,
    events: Vec<Ev>,
    /// Fail the post with this index (counting every post from 0).
    fail_post: Option<usize>,
    posts: usize,
}

impl Recorder {
    fn new(binding: Binding) -> Self {
        Recorder {
            binding,
            dangling: DanglingStores::new(8),
            events: Vec::new(),
            fail_post: None,
            posts: 0,
        }
    }

    fn record(&mut self, ev: Ev) -> Result<(), &'static str> {
        let n = self.posts;
        self.posts += 1;
        if self.fail_post == Some(n) {
            return Err("post failed");
        }
        self.events.push(ev);
        Ok(())
    }

    /// The events recorded since the last call.
    fn take(&mut self) -> Vec<Ev> {
        std::mem::take(&mut self.events)
    }
}

impl Transport for Recorder {
    type Put = ();
    type Get = ();
    type Amo = ();
    type Send = ();
    type Error = &'static str;

    fn binding(&self) -> Binding {
        self.binding
    }
    fn dangling(&mut self) -> &mut DanglingStores {
        &mut self.dangling
    }
    fn post_put(&mut self, t: Locale, _: &(), f: OpFlags) -> Result<(), &'static str> {
        self.record(Put(t, f))
    }
    fn post_get(&mut self, t: Locale, _: (), f: OpFlags) -> Result<(), &'static str> {
        self.record(Get(t, f))
    }
    fn post_amo(&mut self, t: Locale, _: (), f: OpFlags) -> Result<(), &'static str> {
        self.record(Amo(t, f))
    }
    fn post_amo_in_flight(&mut self, t: Locale, _: (), f: OpFlags) -> Result<(), &'static str> {
        self.record(AmoInFlight(t, f))
    }
    fn post_send(&mut self, t: Locale, _: (), f: OpFlags) -> Result<(), &'static str> {
        self.record(Send(t, f))
    }
    fn post_order_get(&mut self, t: Locale, f: OpFlags) -> Result<(), &'static str> {
        self.record(OrderGet(t, f))
    }
    fn post_prove_amo_visible(&mut self, t: Locale, f: OpFlags) -> Result<(), &'static str> {
        self.record(Prove(t, f))
    }
    fn wait_all(&mut self) -> Result<(), &'static str> {
        self.events.push(WaitAll);
        Ok(())
    }
}

fn sel(mode: Mode) -> Selector<Recorder> {
    Selector::for_mode(mode)
}

fn bound() -> Recorder {
    Recorder::new(Binding::Bound)
}

fn targets(d: &DanglingStores) -> (Vec<Locale>, Vec<Locale>) {
    (d.puts().iter().collect(), d.amos().iter().collect())
}

// ---- message-order ----

#[test]
fn order_put_then_get_writes_then_reads_and_clears_the_bit() {
    let s = sel(Mode::MessageOrder);
    let mut tx = bound();
    s.put(&mut tx, 3, (), Blocking::Yes).unwrap();
    assert_eq!(tx.take(), [Put(3, NONE), WaitAll]);
    assert!(tx.dangling.put_dangles(3));
    s.get(&mut tx, 3, (), Blocking::Yes).unwrap();
    assert_eq!(tx.take(), [Get(3, NONE), WaitAll]);
    assert!(tx.dangling.is_empty(), "RAW ordering made the PUT visible");
}

#[test]
fn order_nonblocking_put_and_get_do_not_wait_or_clear() {
    let s = sel(Mode::MessageOrder);
    let mut tx = bound();
    s.put(&mut tx, 1, (), Blocking::No).unwrap();
    s.get(&mut tx, 1, (), Blocking::No).unwrap();
    assert_eq!(tx.take(), [Put(1, NONE), Get(1, NONE)]);
    assert!(
        tx.dangling.put_dangles(1),
        "a GET not yet done proves nothing"
    );
}

#[test]
fn order_get_does_not_clear_a_dangling_amo() {
    let s = sel(Mode::MessageOrder);
    let mut tx = bound();
    s.amo(&mut tx, 2, (), AmoKind::Update).unwrap();
    s.get(&mut tx, 2, (), Blocking::Yes).unwrap();
    assert!(
        tx.dangling.amo_dangles(2),
        "a read does not prove an AMO visible"
    );
}

#[test]
fn order_writing_amo_forces_every_other_target_first() {
    // Its own target's PUT is ordered ahead of it by WAW/RAW; once the
    // fetching AMO's result is back that PUT is visible (RAW), as after a
    // blocking GET.
    let s = sel(Mode::MessageOrder);
    let mut tx = bound();
    tx.dangling.mark_put(1);
    tx.dangling.mark_put(4);
    s.amo(&mut tx, 4, (), AmoKind::FetchUpdate).unwrap();
    assert_eq!(
        tx.take(),
        [OrderGet(1, NONE), WaitAll, Amo(4, NONE), WaitAll]
    );
    assert!(tx.dangling.is_empty(), "a fetching AMO does not dangle");
}

#[test]
fn order_amos_to_one_target_prove_nothing_until_the_boundary() {
    // The add window: 16 non-fetching AMOs to one target post no proof
    // between them (WAW orders each behind the last); the boundary proves
    // the target once.
    let s = sel(Mode::MessageOrder);
    let mut tx = bound();
    for _ in 0..16 {
        s.amo(&mut tx, 2, (), AmoKind::Update).unwrap();
    }
    let expected: Vec<Ev> = (0..16).flat_map(|_| [Amo(2, NONE), WaitAll]).collect();
    assert_eq!(tx.take(), expected);
    assert!(tx.dangling.amo_dangles(2));
    s.force_visible(&mut tx).unwrap();
    assert_eq!(tx.take(), [Prove(2, NONE), WaitAll]);
    assert!(tx.dangling.is_empty());
    // A fetching AMO there keeps the dangling AMO (a read proves nothing).
    s.amo(&mut tx, 2, (), AmoKind::Update).unwrap();
    s.amo(&mut tx, 2, (), AmoKind::FetchUpdate).unwrap();
    tx.take();
    assert!(tx.dangling.amo_dangles(2));
}

#[test]
fn order_read_amo_forces_every_target_first() {
    // Store buffering with the atomics on two locales: the read of y@4 must
    // not overtake the write to x@1.
    let s = sel(Mode::MessageOrder);
    let mut tx = bound();
    tx.dangling.mark_amo(1);
    s.amo(&mut tx, 4, (), AmoKind::Read).unwrap();
    assert_eq!(tx.take(), [Prove(1, NONE), WaitAll, Amo(4, NONE), WaitAll]);
    assert!(tx.dangling.is_empty());
}

#[test]
fn order_read_amo_forces_nothing_when_weakened() {
    let s = Selector::<Recorder>::weakened(Mode::MessageOrder, Some(Weakening::ReadAmoNoForce));
    let mut tx = bound();
    tx.dangling.mark_put(1);
    s.amo(&mut tx, 4, (), AmoKind::Read).unwrap();
    assert_eq!(tx.take(), [Amo(4, NONE), WaitAll]);
    assert!(tx.dangling.put_dangles(1));
}

#[test]
fn nonblocking_get_is_settled_before_a_write_to_its_target_in_every_mode() {
    for mode in Mode::PREFERENCE {
        let s = sel(mode);
        let fl = if mode == Mode::DeliveryComplete {
            DC
        } else {
            NONE
        };
        // GET nb from 3, then a PUT to 5 (another target): nothing to settle.
        let mut tx = bound();
        s.get(&mut tx, 3, (), Blocking::No).unwrap();
        s.put(&mut tx, 5, (), Blocking::No).unwrap();
        assert_eq!(tx.take(), [Get(3, fl), Put(5, fl)], "{mode}");
        assert!(tx.dangling.read_pending(3));
        // A PUT to 3: the GET is waited out first.
        s.put(&mut tx, 3, (), Blocking::No).unwrap();
        let ev = tx.take();
        assert_eq!(ev.first(), Some(&WaitAll), "{mode}: {ev:?}");
        assert!(!tx.dangling.reads_pending(), "{mode}");
        // A writing AMO and a send settle too; a reading AMO need not.
        for (what, kind) in [("update", Some(AmoKind::Update)), ("send", None)] {
            let mut tx = bound();
            s.get(&mut tx, 3, (), Blocking::No).unwrap();
            tx.take();
            match kind {
                Some(k) => s.amo(&mut tx, 3, (), k).unwrap(),
                None => s.send(&mut tx, 3, ()).unwrap(),
            }
            assert_eq!(tx.take().first(), Some(&WaitAll), "{mode} {what}");
            assert!(!tx.dangling.reads_pending(), "{mode} {what}");
        }
        // A boundary settles every pending GET.
        let mut tx = bound();
        s.get(&mut tx, 3, (), Blocking::No).unwrap();
        tx.take();
        s.force_visible(&mut tx).unwrap();
        assert_eq!(tx.take(), [WaitAll], "{mode}");
        assert!(!tx.dangling.reads_pending(), "{mode}");
        // Weakened: the PUT goes at once and the mark stays.
        let w = Selector::<Recorder>::weakened(mode, Some(Weakening::WarUnsettled));
        let mut tx = bound();
        w.get(&mut tx, 3, (), Blocking::No).unwrap();
        w.put(&mut tx, 3, (), Blocking::No).unwrap();
        assert_eq!(tx.take(), [Get(3, fl), Put(3, fl)], "{mode} weakened");
    }
}

#[test]
fn weakening_spellings_round_trip() {
    for w in Weakening::ALL {
        assert_eq!(Weakening::parse(w.name()), Some(w));
        assert_eq!(Weakening::parse(&format!(" {} ", w.name())), Some(w));
    }
    assert_eq!(Weakening::parse("no-forcin"), None);
    // A weakening of the generic layers leaves the policy as it is.
    let s = Selector::<Recorder>::weakened(Mode::MessageOrder, Some(Weakening::LocalAmoNoForce));
    assert!(s.is_weakened(Weakening::LocalAmoNoForce));
    let mut tx = bound();
    tx.dangling.mark_put(1);
    s.amo(&mut tx, 4, (), AmoKind::Read).unwrap();
    assert_eq!(
        tx.take(),
        [OrderGet(1, NONE), WaitAll, Amo(4, NONE), WaitAll]
    );
}

#[test]
fn order_update_amo_marks_on_bound_and_proves_at_once_on_unbound() {
    let s = sel(Mode::MessageOrder);
    let mut tx = bound();
    s.amo(&mut tx, 5, (), AmoKind::Update).unwrap();
    assert_eq!(tx.take(), [Amo(5, NONE), WaitAll]);
    assert_eq!(targets(&tx.dangling), (vec![], vec![5]));

    let mut tx = Recorder::new(Binding::Unbound);
    s.amo(&mut tx, 5, (), AmoKind::Update).unwrap();
    assert_eq!(tx.take(), [Amo(5, NONE), WaitAll, Prove(5, NONE), WaitAll]);
    assert!(tx.dangling.is_empty());
}

#[test]
fn order_send_forces_every_target_including_its_own() {
    let s = sel(Mode::MessageOrder);
    let mut tx = bound();
    tx.dangling.mark_put(2);
    tx.dangling.mark_amo(6);
    s.send(&mut tx, 2, ()).unwrap();
    assert_eq!(
        tx.take(),
        [
            OrderGet(2, NONE),
            Prove(6, NONE),
            WaitAll,
            Send(2, NONE),
            WaitAll
        ]
    );
    assert!(tx.dangling.is_empty());
}

// ---- message-order-fence ----

#[test]
fn fence_put_after_amo_is_fenced_and_keeps_the_amo_bit() {
    let s = sel(Mode::MessageOrderFence);
    let mut tx = bound();
    s.amo(&mut tx, 3, (), AmoKind::Update).unwrap();
    tx.take();
    s.put(&mut tx, 3, (), Blocking::Yes).unwrap();
    s.put(&mut tx, 4, (), Blocking::No).unwrap();
    assert_eq!(tx.take(), [Put(3, FENCE), WaitAll, Put(4, NONE)]);
    assert_eq!(targets(&tx.dangling), (vec![3, 4], vec![3]));
}

#[test]
fn fence_put_after_put_is_not_fenced() {
    // RMA WAW ordering (kept in this mode) orders PUT after PUT.
    let s = sel(Mode::MessageOrderFence);
    let mut tx = bound();
    s.put(&mut tx, 3, (), Blocking::No).unwrap();
    s.put(&mut tx, 3, (), Blocking::No).unwrap();
    assert_eq!(tx.take(), [Put(3, NONE), Put(3, NONE)]);
}

#[test]
fn fence_get_is_fenced_behind_dangling_stores_and_clears_only_puts() {
    let s = sel(Mode::MessageOrderFence);
    let mut tx = bound();
    s.get(&mut tx, 1, (), Blocking::Yes).unwrap();
    assert_eq!(
        tx.take(),
        [Get(1, NONE), WaitAll],
        "nothing dangles: no fence"
    );
    tx.dangling.mark_put(1);
    tx.dangling.mark_amo(1);
    s.get(&mut tx, 1, (), Blocking::Yes).unwrap();
    assert_eq!(tx.take(), [Get(1, FENCE), WaitAll]);
    assert_eq!(targets(&tx.dangling), (vec![], vec![1]));
    // Non-blocking: fenced, but not known done, so nothing is cleared.
    tx.dangling.mark_put(2);
    s.get(&mut tx, 2, (), Blocking::No).unwrap();
    assert_eq!(tx.take(), [Get(2, FENCE)]);
    assert!(tx.dangling.put_dangles(2));
}

#[test]
fn fence_amo_forces_other_targets_pipelined_then_fences_behind_its_own() {
    let s = sel(Mode::MessageOrderFence);
    let mut tx = bound();
    for t in [1, 3, 7] {
        tx.dangling.mark_put(t);
    }
    tx.dangling.mark_amo(7);
    s.amo(&mut tx, 3, (), AmoKind::Update).unwrap();
    assert_eq!(
        tx.take(),
        [
            OrderGet(1, FENCE),
            Prove(7, FENCE),
            WaitAll,
            Amo(3, FENCE),
            WaitAll
        ]
    );
    assert_eq!(targets(&tx.dangling), (vec![3], vec![3]));
}

#[test]
fn fence_fetching_amo_is_fenced_behind_a_dangling_amo() {
    let s = sel(Mode::MessageOrderFence);
    let mut tx = bound();
    s.amo(&mut tx, 2, (), AmoKind::Update).unwrap();
    s.amo(&mut tx, 2, (), AmoKind::Update).unwrap();
    s.amo(&mut tx, 2, (), AmoKind::Read).unwrap();
    assert_eq!(
        tx.take(),
        [
            Amo(2, NONE),
            WaitAll,
            Amo(2, NONE),
            WaitAll,
            Amo(2, FENCE),
            WaitAll
        ],
        "atomic WAW orders updates; a fetch is fenced (atomic RAW is not counted on)"
    );
}

#[test]
fn fence_update_amo_on_unbound_context_is_proved_at_once_with_a_fence() {
    let s = sel(Mode::MessageOrderFence);
    let mut tx = Recorder::new(Binding::Unbound);
    s.amo(&mut tx, 5, (), AmoKind::Update).unwrap();
    assert_eq!(tx.take(), [Amo(5, NONE), WaitAll, Prove(5, FENCE), WaitAll]);
    assert!(tx.dangling.is_empty());
}

#[test]
fn fence_send_forces_other_targets_and_fences_behind_its_own() {
    let s = sel(Mode::MessageOrderFence);
    let mut tx = bound();
    tx.dangling.mark_put(2);
    tx.dangling.mark_put(5);
    s.send(&mut tx, 5, ()).unwrap();
    assert_eq!(
        tx.take(),
        [OrderGet(2, FENCE), WaitAll, Send(5, FENCE), WaitAll]
    );
    assert_eq!(targets(&tx.dangling), (vec![5], vec![]));
    tx.dangling.clear_all();
    s.send(&mut tx, 5, ()).unwrap();
    assert_eq!(
        tx.take(),
        [Send(5, NONE), WaitAll],
        "nothing dangles: no fence"
    );
}

// ---- boundaries, both ordering modes ----

#[test]
fn boundary_posts_every_forcing_op_before_one_wait() {
    for (mode, flags) in [(Mode::MessageOrderFence, FENCE), (Mode::MessageOrder, NONE)] {
        let s = sel(mode);
        let mut tx = bound();
        for t in [1, 2, 6] {
            tx.dangling.mark_put(t);
        }
        tx.dangling.mark_amo(2);
        tx.dangling.mark_amo(7);
        s.force_visible(&mut tx).unwrap();
        assert_eq!(
            tx.take(),
            [
                OrderGet(1, flags),
                Prove(2, flags),
                OrderGet(6, flags),
                Prove(7, flags),
                WaitAll
            ],
            "{mode}"
        );
        assert!(tx.dangling.is_empty(), "{mode}");
    }
}

#[test]
fn boundary_with_nothing_dangling_does_nothing() {
    for mode in Mode::PREFERENCE {
        let mut tx = bound();
        sel(mode).force_visible(&mut tx).unwrap();
        assert_eq!(tx.take(), [], "{mode}");
    }
}

#[test]
fn release_forces_only_unbound_contexts() {
    for mode in [Mode::MessageOrderFence, Mode::MessageOrder] {
        let s = sel(mode);
        let mut tx = bound();
        tx.dangling.mark_put(3);
        s.release(&mut tx).unwrap();
        assert_eq!(
            tx.take(),
            [],
            "{mode}: a bound context carries state lazily"
        );
        assert!(tx.dangling.put_dangles(3));

        let mut tx = Recorder::new(Binding::Unbound);
        tx.dangling.mark_put(3);
        s.release(&mut tx).unwrap();
        assert_eq!(tx.take().last(), Some(&WaitAll), "{mode}");
        assert!(tx.dangling.is_empty(), "{mode}");
    }
}

#[test]
fn failed_post_while_forcing_leaves_the_stores_dangling() {
    let s = sel(Mode::MessageOrder);
    let mut tx = bound();
    for t in [1, 2, 3] {
        tx.dangling.mark_put(t);
    }
    tx.fail_post = Some(1);
    assert_eq!(s.force_visible(&mut tx), Err("post failed"));
    assert_eq!(tx.take(), [OrderGet(1, NONE)], "no wait after the failure");
    assert_eq!(targets(&tx.dangling), (vec![1, 2, 3], vec![]));
    // Forcing all but a target keeps that target's bits when it succeeds.
    tx.fail_post = None;
    s.send(&mut tx, 2, ()).unwrap();
    assert!(tx.dangling.is_empty());
}

#[test]
fn failed_post_of_the_op_itself_records_nothing_dangling() {
    let s = sel(Mode::MessageOrderFence);
    let mut tx = bound();
    tx.fail_post = Some(0);
    assert_eq!(s.put(&mut tx, 1, (), Blocking::Yes), Err("post failed"));
    assert!(tx.dangling.is_empty());
    assert_eq!(tx.take(), []);
}

// ---- delivery-complete ----

#[test]
fn dc_every_op_is_delivery_complete_and_blocking_ops_wait() {
    let s = sel(Mode::DeliveryComplete);
    let mut tx = bound();
    s.put(&mut tx, 1, (), Blocking::Yes).unwrap();
    s.get(&mut tx, 1, (), Blocking::Yes).unwrap();
    s.amo(&mut tx, 1, (), AmoKind::Update).unwrap();
    s.send(&mut tx, 1, ()).unwrap();
    s.force_visible(&mut tx).unwrap();
    assert_eq!(
        tx.take(),
        [
            Put(1, DC),
            WaitAll,
            Get(1, DC),
            WaitAll,
            Amo(1, DC),
            WaitAll,
            Send(1, DC),
            WaitAll
        ]
    );
    assert!(
        tx.dangling.is_empty(),
        "nothing dangles in delivery-complete mode"
    );
}

#[test]
fn dc_nonblocking_put_is_settled_before_the_next_op_to_its_target() {
    let s = sel(Mode::DeliveryComplete);
    let mut tx = bound();
    s.put(&mut tx, 1, (), Blocking::No).unwrap();
    assert!(tx.dangling.put_dangles(1));
    s.put(&mut tx, 2, (), Blocking::No).unwrap();
    assert_eq!(
        tx.take(),
        [Put(1, DC), Put(2, DC)],
        "other target: no settling"
    );
    s.put(&mut tx, 1, (), Blocking::No).unwrap();
    assert_eq!(tx.take(), [WaitAll, Put(1, DC)]);
    assert_eq!(targets(&tx.dangling), (vec![1], vec![]));
    s.get(&mut tx, 1, (), Blocking::Yes).unwrap();
    assert_eq!(tx.take(), [WaitAll, Get(1, DC), WaitAll]);
    assert!(tx.dangling.is_empty());
}

#[test]
fn dc_boundary_amo_and_send_settle_any_nonblocking_put() {
    let s = sel(Mode::DeliveryComplete);
    for op in 0..3 {
        let mut tx = bound();
        s.put(&mut tx, 4, (), Blocking::No).unwrap();
        tx.take();
        match op {
            0 => s.force_visible(&mut tx).unwrap(),
            1 => s.amo(&mut tx, 2, (), AmoKind::Read).unwrap(),
            _ => s.send(&mut tx, 2, ()).unwrap(),
        }
        assert_eq!(tx.take()[0], WaitAll, "case {op}");
        assert!(tx.dangling.is_empty(), "case {op}");
    }
}

#[test]
fn dc_amo_window_keeps_adds_to_one_target_in_flight_until_anything_else() {
    let s = sel(Mode::DeliveryComplete).with_atomic_waw();
    assert!(s.amo_window());
    let mut tx = bound();
    s.amo(&mut tx, 3, (), AmoKind::Update).unwrap();
    s.amo(&mut tx, 3, (), AmoKind::Update).unwrap();
    assert_eq!(
        tx.take(),
        [AmoInFlight(3, DC), AmoInFlight(3, DC)],
        "a window to one target: no wait"
    );
    assert_eq!(targets(&tx.dangling), (vec![], vec![3]));
    // Another target ends the window first.
    s.amo(&mut tx, 4, (), AmoKind::Update).unwrap();
    assert_eq!(tx.take(), [WaitAll, AmoInFlight(4, DC)]);
    assert_eq!(targets(&tx.dangling), (vec![], vec![4]));
    // So does anything but a non-fetching AMO to the window's target: a PUT
    // or GET (to any target), a fetching AMO, a send, a boundary.
    for op in 0..6 {
        let mut tx = bound();
        s.amo(&mut tx, 4, (), AmoKind::Update).unwrap();
        tx.take();
        match op {
            0 => s.put(&mut tx, 4, (), Blocking::Yes).unwrap(),
            1 => s.put(&mut tx, 5, (), Blocking::No).unwrap(),
            2 => s.get(&mut tx, 5, (), Blocking::Yes).unwrap(),
            3 => s.amo(&mut tx, 4, (), AmoKind::FetchUpdate).unwrap(),
            4 => s.send(&mut tx, 4, ()).unwrap(),
            _ => s.force_visible(&mut tx).unwrap(),
        }
        assert_eq!(tx.take()[0], WaitAll, "case {op}");
        assert!(!tx.dangling.amo_dangles(4), "case {op}");
    }
    // A release of a bound context leaves the window in flight; of an
    // unbound one it ends it.
    let mut tx = bound();
    s.amo(&mut tx, 2, (), AmoKind::Update).unwrap();
    s.release(&mut tx).unwrap();
    assert_eq!(tx.take(), [AmoInFlight(2, DC)]);
    let mut tx = Recorder::new(Binding::Unbound);
    s.amo(&mut tx, 2, (), AmoKind::Update).unwrap();
    s.release(&mut tx).unwrap();
    assert_eq!(tx.take(), [AmoInFlight(2, DC), WaitAll]);
    assert!(tx.dangling.is_empty());
}

#[test]
fn dc_amo_window_opens_only_after_nonblocking_puts_and_gets_settle() {
    let s = sel(Mode::DeliveryComplete).with_atomic_waw();
    let mut tx = bound();
    s.put(&mut tx, 3, (), Blocking::No).unwrap();
    s.amo(&mut tx, 3, (), AmoKind::Update).unwrap();
    assert_eq!(tx.take(), [Put(3, DC), WaitAll, AmoInFlight(3, DC)]);
    let mut tx = bound();
    s.get(&mut tx, 3, (), Blocking::No).unwrap();
    s.amo(&mut tx, 3, (), AmoKind::Update).unwrap();
    assert_eq!(tx.take(), [Get(3, DC), WaitAll, AmoInFlight(3, DC)]);
}

#[test]
fn atomic_waw_changes_only_delivery_complete() {
    for mode in [Mode::MessageOrderFence, Mode::MessageOrder] {
        let s = sel(mode).with_atomic_waw();
        assert!(!s.amo_window(), "{mode}");
        let mut plain = bound();
        let mut waw = bound();
        sel(mode).amo(&mut plain, 1, (), AmoKind::Update).unwrap();
        s.amo(&mut waw, 1, (), AmoKind::Update).unwrap();
        assert_eq!(plain.take(), waw.take(), "{mode}");
    }
    assert!(!sel(Mode::DeliveryComplete).amo_window());
}

#[test]
fn window_any_target_leaves_another_targets_amos_in_flight() {
    let s = Selector::<Recorder>::weakened(
        Mode::DeliveryComplete,
        Some(crate::Weakening::WindowAnyTarget),
    )
    .with_atomic_waw();
    let mut tx = bound();
    s.amo(&mut tx, 3, (), AmoKind::Update).unwrap();
    s.amo(&mut tx, 4, (), AmoKind::Update).unwrap();
    assert_eq!(tx.take(), [AmoInFlight(3, DC), AmoInFlight(4, DC)]);
}

// ---- weakened tables ----

#[test]
fn without_forcing_no_fence_no_forcing_op_no_settling() {
    for mode in Mode::PREFERENCE {
        let s = Selector::<Recorder>::for_mode_without_forcing(mode);
        assert_eq!(s.weakening(), Some(crate::Weakening::NoForcing));
        let mut tx = bound();
        s.put(&mut tx, 1, (), Blocking::No).unwrap();
        s.amo(&mut tx, 1, (), AmoKind::Update).unwrap();
        s.put(&mut tx, 1, (), Blocking::No).unwrap();
        s.get(&mut tx, 1, (), Blocking::Yes).unwrap();
        s.send(&mut tx, 2, ()).unwrap();
        s.force_visible(&mut tx).unwrap();
        let events = tx.take();
        assert!(
            !events.iter().any(|e| matches!(e, OrderGet(..) | Prove(..))),
            "{mode}: {events:?}"
        );
        assert!(
            !events.iter().any(|e| matches!(
                e,
                Put(_, f) | Get(_, f) | Amo(_, f) | Send(_, f) if f.contains(FENCE)
            )),
            "{mode}: {events:?}"
        );
        // Only the waits of the blocking ops themselves remain.
        assert_eq!(
            events.iter().filter(|e| **e == WaitAll).count(),
            3,
            "{mode}: {events:?}"
        );
    }
}

#[test]
fn without_source_wait_a_blocking_put_returns_unwaited() {
    for mode in Mode::PREFERENCE {
        let s = Selector::<Recorder>::for_mode_without_source_wait(mode);
        let mut tx = bound();
        s.put(&mut tx, 1, (), Blocking::Yes).unwrap();
        assert!(!tx.take().contains(&WaitAll), "{mode}");
    }
}

#[test]
fn selector_reports_its_mode() {
    for mode in Mode::PREFERENCE {
        let s = sel(mode);
        assert_eq!(s.mode(), mode);
        assert_eq!(s.weakening(), None);
        let copy = s;
        assert_eq!(copy.mode(), mode);
    }
}
