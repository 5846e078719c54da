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
//! | AMO | AMO (DC), wait |
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

use crate::force::{batch_waited, forcing, ranges_checked, settle_reads, waits_for_source};
use crate::{AmoKind, Binding, Blocking, Locale, OpFlags, Transport};

const DC: OpFlags = OpFlags::DELIVERY_COMPLETE;

/// Waits out in-flight non-blocking PUTs to `target` that may write some of
/// the bytes `range` (`None`: any), if any.
fn settle_target<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    range: Option<(u64, u64)>,
) -> Result<(), T::Error> {
    if forcing(W) && ranges_checked(W) && tx.dangling().put_overlaps(target, range) {
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
        posted = tx.post_amo(target, op, DC);
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

pub(crate) fn release<T: Transport, const W: u8>(tx: &mut T) -> Result<(), T::Error> {
    match tx.binding() {
        Binding::Bound => Ok(()),
        Binding::Unbound => settle_all::<T, W>(tx),
    }
}
