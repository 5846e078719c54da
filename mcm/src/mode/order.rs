//! message-order mode: the implementors.
//!
//! Provider orderings asked for (per context and target): RAW, WAW, SAW, SAS,
//! covering RMA and atomic operations alike. So a later read, write or send
//! to a target is ordered behind earlier writes to it on this context, and an
//! order GET (a plain RMA read of the target's dummy word) makes every earlier
//! PUT to that target visible once it completes. Nothing is fenced.
//!
//! | op | what it does |
//! |---|---|
//! | PUT | settle a pending non-blocking GET of the target; write; mark `put[target]` |
//! | GET | read; once done, RAW put it behind the earlier PUTs: clear `put[target]`; non-blocking: mark `read[target]` |
//! | AMO | every AMO, reading ones too, first forces every *other* target visible (RAW/WAW order it behind its own target's PUTs and AMOs; a writing one settles every pending GET); wait; fetching: clear `put[target]`; non-fetching: mark `amo[target]` (bound) or prove it visible now (unbound) |
//! | unordered AMO batch | each as a non-fetching AMO above |
//! | AM send | settle every pending GET; force every target visible (SAW then orders the AM behind them); wait |
//! | boundary | force visible every target: order GET (PUTs only) or proof (an AMO dangles), all posted, one wait; settle pending GETs |
//!
//! Why a *reading* AMO forces too: SC atomics are totally ordered with the
//! task's stores. Store buffering with the atomics on two locales (L0:
//! `x@L2.write(1); r0 = y@L3.read()`, L1: `y@L3.write(1); r1 = x@L2.read()`)
//! allows `r0 == r1 == 0` if the read may overtake the write to the other
//! locale: nothing orders operations to different targets. (The original
//! forced before writing AMOs only; the seeded simulator found the outcome in
//! 28 of 64 seeds with that policy.)
//!
//! Beyond the original: AMO-dangling targets are proved visible rather than
//! read (a GET does not clear `amo[target]`); forcing is pipelined; a GET clears
//! `put[target]` on an unbound context too, because [`Selector::release`](crate::Selector::release) forces
//! everything before an unbound context changes hands, so whatever dangles on
//! it was posted by the current holder on this same context.

use crate::force::{self, forcing, read_amo_forces, settle_reads, waits_for_source, Scope};
use crate::{AmoKind, Blocking, Locale, OpFlags, Transport};

pub(crate) fn put<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Put,
    blocking: Blocking,
) -> Result<(), T::Error> {
    settle_reads::<T, W>(tx, Some(target))?;
    tx.post_put(target, &op, OpFlags::NONE)?;
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
    tx.post_get(target, op, OpFlags::NONE)?;
    match blocking {
        Blocking::Yes => {
            tx.wait_all()?;
            tx.dangling().clear_put(target);
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
    if (kind.writes() && forcing(W)) || read_amo_forces(W) {
        // Every *other* target: the provider orders this AMO behind what
        // dangles at its own target (legacy RAW/WAW cover RMA and atomics
        // alike), so its own PUTs and AMOs stay marked for the next
        // boundary instead of a proof (an AM round trip) per AMO.
        force::pipelined(tx, Scope::AllBut(target), OpFlags::NONE)?;
    }
    tx.post_amo(target, op, OpFlags::NONE)?;
    tx.wait_all()?;
    if kind != AmoKind::Update {
        // A fetching AMO's result arrived, and RAW ran it behind the PUTs
        // to its target: they are visible, as after a blocking GET. (An
        // AMO dangling there stays: a read does not prove it applied.)
        tx.dangling().clear_put(target);
    }
    force::mark_update::<T, W>(tx, target, kind, OpFlags::NONE)
}

pub(crate) fn send<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Send,
) -> Result<(), T::Error> {
    // The AM's body may write anywhere (or release a task that does).
    settle_reads::<T, W>(tx, None)?;
    if forcing(W) {
        force::pipelined(tx, Scope::All, OpFlags::NONE)?;
    }
    tx.post_send(target, op, OpFlags::NONE)?;
    tx.wait_all()
}

pub(crate) fn force_visible<T: Transport, const W: u8>(tx: &mut T) -> Result<(), T::Error> {
    force::boundary::<T, W>(tx, OpFlags::NONE)
}
