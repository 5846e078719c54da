//! Forcing dangling stores visible, and the test-only weakening switches.
//!
//! Shared by the message-order-fence and message-order implementors, which
//! differ only in the flags they give the forcing operations. A target with a
//! dangling AMO gets a visibility proof
//! ([`Transport::post_prove_amo_visible`]), which also covers its PUTs; a
//! target with only dangling PUTs gets an order GET. Forcing several targets
//! is *pipelined*: every forcing operation is posted first, then one
//! [`Transport::wait_all`] covers them all (the original forced one target at a
//! time, a round trip each).

use crate::{AmoKind, Binding, Locale, OpFlags, Transport};

/// Weakening bit: skip every forcing step (order GETs, proofs, the `FENCE`s
/// and waits the policy adds because something dangles).
pub(crate) const NO_FORCING: u8 = 1;
/// Weakening bit: a blocking PUT returns without waiting for local completion.
pub(crate) const NO_SOURCE_WAIT: u8 = 2;
/// Weakening bit: message-order forces before a *writing* AMO only (the
/// behaviour before the store-buffering hole was closed).
pub(crate) const READ_AMO_NO_FORCE: u8 = 4;
/// Weakening bit: non-blocking GETs are not settled before a later write to
/// their target (write-after-read left to the provider, which orders nothing).
pub(crate) const WAR_UNSETTLED: u8 = 8;

/// Weakening bit: delivery-complete's range check answers "no overlap"
/// always, so a non-blocking PUT is not waited out before a later PUT or GET
/// of the same bytes (the negative control of the range shortcut).
pub(crate) const RANGE_BLIND: u8 = 16;

/// Weakening bit: delivery-complete posts a batch of unordered AMOs and
/// neither waits for it nor marks it.
pub(crate) const BATCH_UNWAITED: u8 = 32;

/// Weakening bit: delivery-complete's AMO window goes on across targets (a
/// non-fetching AMO to one locale does not settle those in flight to
/// another), the negative control of the window's settle.
pub(crate) const WINDOW_ANY_TARGET: u8 = 64;

/// Whether delivery-complete's AMO window settles the AMOs in flight to
/// other targets before it goes on (see [`WINDOW_ANY_TARGET`]).
pub(crate) const fn window_per_target(w: u8) -> bool {
    w & WINDOW_ANY_TARGET == 0
}

/// Whether delivery-complete waits for a batch of unordered AMOs.
pub(crate) const fn batch_waited(w: u8) -> bool {
    w & BATCH_UNWAITED == 0
}

/// Whether delivery-complete compares ranges honestly (see [`RANGE_BLIND`]).
pub(crate) const fn ranges_checked(w: u8) -> bool {
    w & RANGE_BLIND == 0
}

/// Whether implementors built with weakening bits `w` force visibility.
pub(crate) const fn forcing(w: u8) -> bool {
    w & NO_FORCING == 0
}

/// Whether a blocking PUT built with weakening bits `w` waits for the NIC to
/// have read its source.
pub(crate) const fn waits_for_source(w: u8) -> bool {
    w & NO_SOURCE_WAIT == 0
}

/// Whether an AMO that only reads forces earlier stores visible (message-order).
pub(crate) const fn read_amo_forces(w: u8) -> bool {
    forcing(w) && w & READ_AMO_NO_FORCE == 0
}

/// Whether later writes wait out a pending non-blocking GET to their target.
pub(crate) const fn settles_reads(w: u8) -> bool {
    w & WAR_UNSETTLED == 0
}

/// Write-after-read: a non-blocking GET reads, as far as any data-race-free
/// program can tell, at its issue point. So before a PUT to `target`
/// (`Some`) the GETs that may still be reading there are waited out, and
/// before anything that may let *another* task write (`None`: a writing
/// atomic, an AM send, a boundary) every pending GET is. One
/// [`Transport::wait_all`], which completes every GET posted so far, so all
/// marks go.
pub(crate) fn settle_reads<T: Transport, const W: u8>(
    tx: &mut T,
    target: Option<Locale>,
) -> Result<(), T::Error> {
    if !settles_reads(W) || !tx.dangling().reads_pending() {
        return Ok(());
    }
    if let Some(t) = target {
        if !tx.dangling().read_pending(t) {
            return Ok(());
        }
    }
    tx.wait_all()?;
    tx.dangling().clear_reads();
    Ok(())
}

/// Before an AMO of `kind` in the ordering modes: a writing SC atomic may
/// release another task that then writes where a GET of ours still reads, so
/// every pending GET first.
pub(crate) fn settle_reads_before<T: Transport, const W: u8>(
    tx: &mut T,
    kind: AmoKind,
) -> Result<(), T::Error> {
    if kind.writes() {
        settle_reads::<T, W>(tx, None)?;
    }
    Ok(())
}

/// After an AMO of `kind` completed in the ordering modes: a non-fetching one
/// completes before it lands, so it dangles at `target`; an unbound context
/// has no next boundary of its own, so there it is proved visible at once
/// (posted with `flags`).
pub(crate) fn mark_update<T: Transport, const W: u8>(
    tx: &mut T,
    target: Locale,
    kind: AmoKind,
    flags: OpFlags,
) -> Result<(), T::Error> {
    if kind == AmoKind::Update {
        tx.dangling().mark_amo(target);
        if forcing(W) && tx.binding() == Binding::Unbound {
            self::target(tx, target, flags)?;
        }
    }
    Ok(())
}

/// Which dangling targets a pipelined force covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Every target with something dangling.
    All,
    /// Every such target but this one (whose stores the next operation orders
    /// itself after, with a fence).
    AllBut(Locale),
}

/// Makes the dangling stores of every target in `scope` visible: posts an
/// order GET or an AMO-visibility proof per target, each with `flags`, then
/// waits once, then forgets those targets. O(1) when nothing dangles.
///
/// On error the dangling state is left as it was.
#[inline]
pub(crate) fn pipelined<T: Transport>(
    tx: &mut T,
    scope: Scope,
    flags: OpFlags,
) -> Result<(), T::Error> {
    let stores = tx.dangling();
    match scope {
        _ if stores.is_empty() => Ok(()),
        // A window of AMOs (or PUTs) to one target forces nothing until it
        // ends: no taking the state out and putting it back per operation.
        Scope::AllBut(kept) if stores.only_at(kept) => Ok(()),
        _ => pipelined_posting(tx, scope, flags),
    }
}

/// [`pipelined`] once something in `scope` dangles.
#[inline(never)]
fn pipelined_posting<T: Transport>(
    tx: &mut T,
    scope: Scope,
    flags: OpFlags,
) -> Result<(), T::Error> {
    // Take the state out so the transport can be posted to while its targets
    // are walked; put it back whatever happens.
    let mut stores = std::mem::take(tx.dangling());
    let result = post_forcing_ops(tx, &stores, scope, flags);
    if result.is_ok() {
        match scope {
            Scope::All => stores.clear_all(),
            Scope::AllBut(kept) => {
                let (put, amo) = (stores.put_dangles(kept), stores.amo_dangles(kept));
                stores.clear_all();
                if put {
                    stores.mark_put(kept);
                }
                if amo {
                    stores.mark_amo(kept);
                }
            }
        }
    }
    *tx.dangling() = stores;
    result
}

fn post_forcing_ops<T: Transport>(
    tx: &mut T,
    stores: &crate::DanglingStores,
    scope: Scope,
    flags: OpFlags,
) -> Result<(), T::Error> {
    let mut posted = false;
    for target in stores.targets() {
        if scope == Scope::AllBut(target) {
            continue;
        }
        if stores.amo_dangles(target) {
            tx.post_prove_amo_visible(target, flags)?;
        } else {
            tx.post_order_get(target, flags)?;
        }
        posted = true;
    }
    if posted {
        tx.wait_all()?;
    }
    Ok(())
}

/// [`pipelined`] over every target, then (a boundary) every pending
/// non-blocking GET waited out too.
pub(crate) fn boundary<T: Transport, const W: u8>(
    tx: &mut T,
    flags: OpFlags,
) -> Result<(), T::Error> {
    if forcing(W) {
        pipelined(tx, Scope::All, flags)?;
    }
    settle_reads::<T, W>(tx, None)
}

/// Makes the dangling stores of `target` alone visible (a proof if an AMO
/// dangles there, else an order GET), waits, and forgets them.
pub(crate) fn target<T: Transport>(
    tx: &mut T,
    target: Locale,
    flags: OpFlags,
) -> Result<(), T::Error> {
    let stores = tx.dangling();
    if stores.amo_dangles(target) {
        tx.post_prove_amo_visible(target, flags)?;
    } else if stores.put_dangles(target) {
        tx.post_order_get(target, flags)?;
    } else {
        return Ok(());
    }
    tx.wait_all()?;
    tx.dangling().clear_target(target);
    Ok(())
}
