//! message-order-fence mode: the implementors.
//!
//! Provider orderings asked for (per context and target): SAS, RMA WAW,
//! atomic WAW (and atomic RAW where offered, which this code does not count
//! on). Nothing orders an RMA operation against an atomic one, or a send
//! against a write: where that matters the policy adds `FI_FENCE`, which holds
//! the operation until everything posted earlier to the same target on this
//! context has completed there.
//!
//! | op | what it does |
//! |---|---|
//! | PUT | settle a pending non-blocking GET of the target; fenced if an AMO dangles at the target; mark `put[target]` |
//! | GET | fenced if a PUT or AMO dangles at the target; once done, the fence made the PUTs visible: clear `put[target]`; non-blocking: mark `read[target]` |
//! | AMO | (writing: settle every pending GET); force visible every other target; fenced if a PUT dangles at the target (or, for a fetching AMO, an AMO dangles there); wait; non-fetching: mark `amo[target]` (bound) or prove it visible now (unbound) |
//! | unordered AMO batch | each as a non-fetching AMO above |
//! | AM send | settle every pending GET; force visible every other target; fenced if anything dangles at its target; wait |
//! | boundary | force visible every target: fenced order GET (PUTs only) or fenced proof (an AMO dangles), all posted, one wait; settle pending GETs |
//!
//! Beyond the original: RMA WAW is kept (non-blocking PUTs would otherwise
//! reorder); an AMO-dangling target is proved visible rather than read; a fenced
//! GET does not clear `amo[target]` (a read does not prove an AMO visible);
//! a fetching AMO is fenced behind a dangling AMO whether or not the provider
//! offered atomic RAW; forcing is pipelined.

use crate::force::{self, forcing, settle_reads, waits_for_source, Scope};
use crate::{AmoKind, Blocking, Locale, OpFlags, Transport};

pub(crate) fn put<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Put,
    blocking: Blocking,
) -> Result<(), T::Error> {
    settle_reads::<T, W>(tx, Some(target))?;
    // RMA WAW orders this PUT after earlier PUTs, but nothing orders it after
    // an atomic: fence it behind a dangling AMO. (The fence orders; it does
    // not prove the AMO visible, so amo[target] stays.)
    let flags = if forcing(W) && tx.dangling().amo_dangles(target) {
        OpFlags::FENCE
    } else {
        OpFlags::NONE
    };
    tx.post_put(target, &op, flags)?;
    tx.dangling().mark_put(target);
    if blocking == Blocking::Yes && waits_for_source(W) {
        tx.wait_all()?;
    }
    Ok(())
}

pub(crate) fn get<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Get,
    blocking: Blocking,
) -> Result<(), T::Error> {
    // No RAW ordering in this mode: a GET behind a dangling store is fenced.
    let fenced = forcing(W) && tx.dangling().dangles(target);
    let flags = if fenced {
        OpFlags::FENCE
    } else {
        OpFlags::NONE
    };
    tx.post_get(target, op, flags)?;
    match blocking {
        Blocking::Yes => {
            tx.wait_all()?;
            if fenced {
                tx.dangling().clear_put(target);
            }
        }
        Blocking::No => tx.dangling().mark_read(target),
    }
    Ok(())
}

pub(crate) fn amo<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Amo,
    kind: AmoKind,
) -> Result<(), T::Error> {
    force::settle_reads_before::<T, W>(tx, kind)?;
    let mut flags = OpFlags::NONE;
    if forcing(W) {
        // An SC atomic is ordered after every earlier store of the task.
        force::pipelined(tx, Scope::AllBut(target), OpFlags::FENCE)?;
        let stores = tx.dangling();
        if stores.put_dangles(target) || (kind.fetches() && stores.amo_dangles(target)) {
            flags = OpFlags::FENCE;
        }
    }
    tx.post_amo(target, op, flags)?;
    tx.wait_all()?;
    force::mark_update::<T, W>(tx, target, kind, OpFlags::FENCE)
}

pub(crate) fn send<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Send,
) -> Result<(), T::Error> {
    // The AM's body may write anywhere (or release a task that does).
    settle_reads::<T, W>(tx, None)?;
    let mut flags = OpFlags::NONE;
    if forcing(W) {
        force::pipelined(tx, Scope::AllBut(target), OpFlags::FENCE)?;
        // No SAW ordering here: the fence puts the AM behind the target's
        // stores (and, fi_atomic(3), makes a dangling AMO visible before the
        // send's completion at the target).
        if tx.dangling().dangles(target) {
            flags = OpFlags::FENCE;
        }
    }
    tx.post_send(target, op, flags)?;
    tx.wait_all()
}

pub(crate) fn force_visible<T: Transport, const W: u8>(tx: &mut T) -> Result<(), T::Error> {
    force::boundary::<T, W>(tx, OpFlags::FENCE)
}
