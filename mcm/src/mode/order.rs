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
//! | PUT | write; mark `put[target]` |
//! | GET | read; once done, RAW put it behind the earlier PUTs: clear `put[target]` |
//! | AMO | a writing AMO first forces every target visible; wait; non-fetching: mark `amo[target]` (bound) or prove it visible now (unbound) |
//! | AM send | force every target visible (SAW then orders the AM behind them); wait |
//! | boundary | force visible every target: order GET (PUTs only) or proof (an AMO dangles), all posted, one wait |
//!
//! Beyond the original: AMO-dangling targets are proved visible rather than
//! read (a GET does not clear `amo[target]`); forcing is pipelined; a GET clears
//! `put[target]` on an unbound context too, because [`release`] forces
//! everything before an unbound context changes hands, so whatever dangles on
//! it was posted by the current holder on this same context.

use crate::force::{self, forcing, waits_for_source, Scope};
use crate::{AmoKind, Binding, Blocking, Locale, OpFlags, Transport};

pub(crate) fn put<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Put,
    blocking: Blocking,
) -> Result<(), T::Error> {
    tx.post_put(target, op, OpFlags::NONE)?;
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
    if blocking == Blocking::Yes {
        tx.wait_all()?;
        tx.dangling().clear_put(target);
    }
    Ok(())
}

pub(crate) fn amo<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Amo,
    kind: AmoKind,
) -> Result<(), T::Error> {
    if forcing(W) && kind.writes() {
        force::pipelined(tx, Scope::All, OpFlags::NONE)?;
    }
    tx.post_amo(target, op, OpFlags::NONE)?;
    tx.wait_all()?;
    if kind == AmoKind::Update {
        tx.dangling().mark_amo(target);
        if forcing(W) && tx.binding() == Binding::Unbound {
            force::target(tx, target, OpFlags::NONE)?;
        }
    }
    Ok(())
}

pub(crate) fn send<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    op: T::Send,
) -> Result<(), T::Error> {
    if forcing(W) {
        force::pipelined(tx, Scope::All, OpFlags::NONE)?;
    }
    tx.post_send(target, op, OpFlags::NONE)?;
    tx.wait_all()
}

pub(crate) fn force_visible<T: Transport, const W: u8>(tx: &mut T) -> Result<(), T::Error> {
    if forcing(W) {
        force::pipelined(tx, Scope::All, OpFlags::NONE)
    } else {
        Ok(())
    }
}

pub(crate) fn release<T: Transport, const W: u8>(tx: &mut T) -> Result<(), T::Error> {
    match tx.binding() {
        Binding::Bound => Ok(()),
        Binding::Unbound => force_visible::<T, W>(tx),
    }
}
