//! delivery-complete mode: the implementors.
//!
//! No provider ordering is asked for (beyond the base SAS). Every operation
//! carries `FI_DELIVERY_COMPLETE`, so its completion means its effect is at the
//! target, and a blocking operation waits for it: nothing a blocking operation
//! did can dangle, and boundaries have nothing to do.
//!
//! | op | what it does |
//! |---|---|
//! | PUT | write (DC), wait; non-blocking: mark `put[target]` instead of waiting |
//! | GET | read (DC), wait; non-blocking: mark `read[target]` |
//! | AMO | AMO (DC), wait; with atomic WAW granted, a non-fetching one stays in flight while the next op is one to the same target (the *AMO window*, [`amo_windowed`]) |
//! | unordered AMO batch | post every AMO (DC), one wait for all |
//! | AM send | send (DC), wait |
//! | boundary | nothing, unless a non-blocking PUT or GET is still in flight |
//!
//! A non-blocking GET is settled like a PUT before the next operation that
//! writes its target (write-after-read is not ordered either).
//!
//! Beyond the original: a *non-blocking* PUT has not been waited for, and with
//! no ordering asked for, a later operation could overtake it (two
//! non-blocking PUTs to one word could land in the wrong order, a GET could
//! read around one). So a non-blocking PUT marks its target, and before the
//! next operation to that target, the next AMO or AM send, or a boundary, the
//! context *settles*: one [`Transport::wait_all`], after which every operation
//! posted so far is delivered and all marks are cleared. With blocking
//! operations only, nothing is ever marked and this costs one emptiness test.
//!
//! Only what may touch the same bytes conflicts: a non-blocking PUT records
//! the remote range it writes (where the transport knows it,
//! [`Transport::put_range`]), and a later PUT or GET to its target settles
//! only if its own range overlaps one in flight (or either is unknown). A
//! window of non-blocking PUTs to disjoint parts of one locale then
//! pipelines as the raw provider's does, instead of each waiting for the
//! one before it (a data-race-free program cannot tell: another task sees
//! them only after a synchronizing operation, which settles everything).

use crate::force::{
    batch_waited, forcing, ranges_checked, settle_reads, waits_for_source, window_per_target,
};
use crate::{AmoKind, Blocking, Locale, OpFlags, Transport};

const DC: OpFlags = OpFlags::DELIVERY_COMPLETE;

/// Waits out in-flight non-blocking PUTs to `target` that may write some of
/// the bytes `range` (`None`: any), if any, and every AMO of a window still
/// in flight (no ordering is granted between RMA and atomics).
fn settle_target<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    range: Option<(u64, u64)>,
) -> Result<(), T::Error> {
    let d = tx.dangling();
    let conflict = !d.amos().is_empty() || (ranges_checked(W) && d.put_overlaps(target, range));
    if forcing(W) && conflict {
        tx.wait_all()?;
        tx.dangling().clear_all();
    }
    Ok(())
}

/// Waits out every in-flight non-blocking PUT, if any, then every pending
/// non-blocking GET.
fn settle_all<T: Transport, const W: u8>(tx: &mut T) -> Result<(), T::Error> {
    if forcing(W) && !tx.dangling().is_empty() {
        tx.wait_all()?;
        tx.dangling().clear_all();
    }
    settle_reads::<T, W>(tx, None)
}

/// Waits for everything posted; with every operation delivery-complete, that
/// delivers every earlier non-blocking PUT too.
fn wait_delivered<T: Transport>(tx: &mut T) -> Result<(), T::Error> {
    tx.wait_all()?;
    tx.dangling().clear_all();
    Ok(())
}

pub(crate) fn put<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Put,
    blocking: Blocking,
) -> Result<(), T::Error> {
    let range = tx.put_range(&op);
    settle_target::<T, W>(tx, target, range)?;
    settle_reads::<T, W>(tx, Some(target))?;
    tx.post_put(target, &op, DC)?;
    match blocking {
        Blocking::Yes if waits_for_source(W) => wait_delivered(tx),
        Blocking::Yes => Ok(()),
        Blocking::No => {
            tx.dangling().mark_put_range(target, range);
            Ok(())
        }
    }
}

pub(crate) fn get<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Get,
    blocking: Blocking,
) -> Result<(), T::Error> {
    let range = tx.get_range(&op);
    settle_target::<T, W>(tx, target, range)?;
    tx.post_get(target, op, DC)?;
    match blocking {
        Blocking::Yes => wait_delivered(tx),
        Blocking::No => {
            tx.dangling().mark_read(target);
            Ok(())
        }
    }
}

pub(crate) fn amo<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Amo,
    _kind: AmoKind,
) -> Result<(), T::Error> {
    settle_all::<T, W>(tx)?;
    tx.post_amo(target, op, DC)?;
    wait_delivered(tx)
}

/// [`amo`] over a provider that grants atomic WAW ordering
/// (`FI_ORDER_ATOMIC_WAW`, asked for in this mode where offered): the *AMO
/// window*. A non-fetching AMO is left in flight
/// ([`Transport::post_amo_in_flight`], delivery-complete) and its target
/// marked, as long as what follows is another non-fetching AMO to the same
/// target on this context: atomic WAW applies them there in posting order,
/// so any observer sees a prefix of the window, as if each had been waited
/// for. Anything else ends the window first: a non-fetching AMO to another
/// target, a fetching AMO, a PUT or GET anywhere (no ordering between RMA
/// and atomics is granted), an AM send, a boundary, a release, the next
/// batch: one [`Transport::wait_all`] completes every AMO of the window at
/// the delivery-complete level. Non-blocking PUTs and GETs in flight are
/// settled before a window opens, as before any AMO.
pub(crate) fn amo_windowed<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Amo,
    kind: AmoKind,
) -> Result<(), T::Error> {
    if kind != AmoKind::Update {
        return amo::<T, W>(tx, target, op, kind);
    }
    let d = tx.dangling();
    let goes_on = d.puts().is_empty()
        && !d.reads_pending()
        && (d.amos().is_empty()
            || !window_per_target(W)
            || (d.amos().len() == 1 && d.amo_dangles(target)));
    if !goes_on {
        settle_all::<T, W>(tx)?;
    }
    tx.post_amo_in_flight(target, op, DC)?;
    tx.dangling().mark_amo(target);
    Ok(())
}

/// A batch of unordered AMOs: unordered among themselves by contract, so
/// all are posted (delivery-complete) and then waited for together, one
/// wait instead of one per AMO; afterwards every one is delivered, as after
/// the same AMOs done one by one.
pub(crate) fn amo_batch<T: Transport, const W: u8>(
    tx: &mut T,
    ops: &mut dyn Iterator<Item = (Locale, T::Amo)>,
) -> Result<(), T::Error> {
    settle_all::<T, W>(tx)?;
    let mut posted = Ok(());
    for (target, op) in ops {
        // In flight until the one wait (the transport may complete it its
        // own way: shm injects and proves each target once).
        posted = tx.post_amo_in_flight(target, op, DC);
        if posted.is_err() {
            break;
        }
    }
    if !batch_waited(W) {
        return posted;
    }
    // The ones posted are waited for even if a later one failed.
    let waited = wait_delivered(tx);
    posted.and(waited)
}

pub(crate) fn send<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Send,
) -> Result<(), T::Error> {
    settle_all::<T, W>(tx)?;
    tx.post_send(target, op, DC)?;
    wait_delivered(tx)
}

pub(crate) fn force_visible<T: Transport, const W: u8>(tx: &mut T) -> Result<(), T::Error> {
    settle_all::<T, W>(tx)
}
