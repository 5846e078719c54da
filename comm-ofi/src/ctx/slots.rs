//! The context's atomic slots: where an atomic's operand, compare and
//! result words live in the context's registered scratch, and its
//! descriptors, while it is in flight. Slot 0 is the context's own (one
//! atomic at a time, the generic layer fills it); the batch slots carry an
//! unordered batch (and the atomic-read proofs, result words only); the
//! window slots carry delivery-complete's AMO window, which goes on across
//! calls. Also the inject form of non-fetching atomics and the atomic-read
//! proof, which pick their slots here.

use super::{ofi_flags, NativeAmo, TxContext};
use crate::amo::{AmoForm, AmoOp, AmoType};
use crate::error::{Error, Result};
use crate::ofi::{AtomicMsg, Flags, RemoteBuf};
use mcm::OpFlags;
use std::ptr;

use super::layout::{AMO_BATCH, AMO_WINDOW, ATOMIC_SLOTS, BATCH_SCRATCH, SLOT_BYTES};

/// The slots an atomic left in flight among others takes in turn
/// ([`TxContext::next_slot`]).
#[derive(Clone, Copy, Debug)]
enum SlotRing {
    /// Atomic-read proofs: the batch slots (result words only).
    Proof,
    /// delivery-complete's AMO window: the window slots.
    Window,
}

/// The form `op` goes in with `flags`. Delivery-complete must mean
/// applied: shm (1.17) completes a non-fetching atomic before the target
/// applied it even with `FI_DELIVERY_COMPLETE` (a following atomic read
/// saw the old value); a fetching atomic completes only once its result
/// exists, so the non-fetching one goes in its fetching form (result
/// ignored). Every type we call native has the fetching form of every op.
#[inline]
fn delivered_form(op: &NativeAmo, flags: OpFlags) -> AmoForm {
    if flags.contains(OpFlags::DELIVERY_COMPLETE) && op.form == AmoForm::Plain {
        AmoForm::Fetch
    } else {
        op.form
    }
}

impl TxContext {
    /// The operand, compare and result words of `slot` (0: words 0-2).
    fn slot_words(&self, slot: usize) -> *mut u8 {
        assert!(
            slot <= ATOMIC_SLOTS,
            "atomic slot {slot} beyond {ATOMIC_SLOTS}"
        );
        match slot {
            0 => self.scratch,
            k => self
                .scratch
                .wrapping_add(BATCH_SCRATCH + (k - 1) * SLOT_BYTES),
        }
    }

    /// The operand word of batch slot `slot` (`1..=AMO_BATCH`), for the
    /// next batch of unordered AMOs; the caller posts the batch and waits
    /// for it before writing a slot again.
    pub fn batch_operand(&mut self, slot: usize) -> &mut [u8; 8] {
        assert!((1..=AMO_BATCH).contains(&slot), "batch slot {slot}");
        let p = self.slot_words(slot);
        // SAFETY: p is the slot's 8-byte operand word inside this context's
        // SCRATCH_BYTES of heap; no operation of the context is in flight on
        // it while the caller holds &mut self between batches.
        unsafe { &mut *(p as *mut [u8; 8]) }
    }

    /// Posts an atomic on one element of `ty` at `remote` with the words
    /// and descriptors of `slot` (0: the context's own). The operand is
    /// taken from the slot's word 0, the compare value from word 1, and a
    /// fetched result lands in word 2 (slot 0: see
    /// [`TxContext::scratch_words`]).
    pub(super) fn atomic_in(
        &mut self,
        slot: usize,
        remote: RemoteBuf,
        ty: AmoType,
        op: AmoOp,
        form: AmoForm,
        flags: Flags,
    ) -> Result<()> {
        // The descriptors live in the context, not on this stack frame:
        // some providers (udp;ofi_rxd in 1.17) keep pointers to the result
        // and compare iovs until the operation completes.
        let words = self.slot_words(slot);
        let m: *mut AtomicMsg = if slot == 0 {
            &mut *self.amo_desc
        } else {
            if self.batch_desc.is_empty() {
                self.batch_desc = (0..ATOMIC_SLOTS).map(|_| AtomicMsg::default()).collect();
            }
            &mut self.batch_desc[slot - 1]
        };
        // SAFETY: m points into this context's descriptor storage (a box or
        // a vector made once and never resized), alive and unaliased here.
        unsafe { (*m).prepare(remote, ty, op, words, self.desc) };
        self.post(form.call(), |ep| {
            // SAFETY: m points into this context's AtomicMsg of the slot,
            // which stays put and untouched until the op completes (callers
            // wait before reusing a slot); scratch is registered heap.
            unsafe { ep.atomic_msg(form, &mut *m, flags) }
        })
    }

    /// The scratch words: (operand, compare, result).
    pub fn scratch_words(&mut self) -> (&mut [u8; 8], &mut [u8; 8], &mut [u8; 8]) {
        // SAFETY: scratch points to SCRATCH_BYTES of heap memory owned by this
        // context; the three 8-byte words are disjoint and no operation is in
        // flight on them when the caller holds &mut self between ops.
        unsafe {
            (
                &mut *(self.scratch as *mut [u8; 8]),
                &mut *(self.scratch.add(8) as *mut [u8; 8]),
                &mut *(self.scratch.add(16) as *mut [u8; 8]),
            )
        }
    }

    /// Whether the provider can do (ty, op, form) natively on this endpoint.
    pub fn atomic_valid(&self, ty: AmoType, op: AmoOp, form: AmoForm) -> bool {
        self.ep.atomic_valid(ty, op, form)
    }

    /// Injects the non-fetching atomic `op` (`fi_inject_atomic`: the
    /// operand is copied before the call returns, there is no completion)
    /// where the provider has an inject form of atomics and the type fits;
    /// `Ok(false)`: not injected, post it. A provider that turns out to have
    /// none gets the posted form from then on on this context.
    fn inject_atomic(&mut self, op: &NativeAmo) -> Result<bool> {
        if !self.inject_atomics || op.ty.size() > self.inject_size {
            return Ok(false);
        }
        let operand = self.slot_words(op.slot) as *const u8;
        let (remote, ty, aop) = (op.remote, op.ty, op.op);
        let injected = self.post_counted(
            "fi_inject_atomic",
            false,
            |ep| {
                // SAFETY: the slot's operand word holds the operand
                // (written by the caller just before); the provider
                // copies it before returning; the remote word was
                // validated.
                unsafe { ep.inject_atomic(operand, remote, ty, aop) }
            },
            |_| {},
        );
        match injected {
            Err(Error::Ofi(e)) if e.is_unsupported() => {
                tracing::debug!(
                    context = self.index,
                    "fi_inject_atomic unsupported ({e}); atomics are posted with fi_atomicmsg"
                );
                self.inject_atomics = false;
                Ok(false)
            }
            r => r.map(|()| true),
        }
    }

    /// The next slot of `ring` (1-based), for an atomic that stays in flight
    /// with others: every slot is free again once nothing is outstanding,
    /// and when the ring has gone round the context waits for everything
    /// it posted before reusing one.
    fn next_slot(&mut self, ring: SlotRing) -> Result<usize> {
        let (last, len) = match ring {
            SlotRing::Proof => (self.proof_slot, AMO_BATCH),
            SlotRing::Window => (self.window_slot, AMO_WINDOW),
        };
        let next = if self.outstanding == 0 {
            1
        } else if last == len {
            self.wait_local()?;
            1
        } else {
            last + 1
        };
        match ring {
            SlotRing::Proof => self.proof_slot = next,
            SlotRing::Window => self.window_slot = next,
        }
        Ok(next)
    }

    /// A fetching atomic read of `target`'s order dummy from a batch slot of
    /// its own (proofs to several targets stay in flight together, one wait
    /// for all): on a `prove_by_atomic_read` provider, once it completes
    /// every atomic posted earlier on this context to `target` is applied.
    pub(super) fn post_atomic_read_proof(&mut self, target: usize, flags: OpFlags) -> Result<()> {
        self.diag.count(crate::diag::Counter::ForceProof);
        let slot = self.next_slot(SlotRing::Proof)?;
        let remote = self.routes[target].order_dummy;
        self.atomic_in(
            slot,
            remote,
            AmoType::U64,
            AmoOp::Read,
            AmoForm::Fetch,
            ofi_flags(flags),
        )
    }

    /// [`Transport::post_amo`](mcm::Transport::post_amo) after the fence
    /// count: injected where nothing is added and the type fits, else
    /// posted from the operation's slot.
    #[inline]
    pub(super) fn amo_posted(&mut self, op: NativeAmo, flags: OpFlags) -> Result<()> {
        let form = delivered_form(&op, flags);
        // A non-fetching atomic with nothing to add is injected, as a small
        // PUT is: the operand is copied before the call returns and there
        // is no completion, so the policy's wait after it costs nothing and
        // a window of them pipelines. Ordering and visibility are an
        // atomic's (the policy still marks the target and proves it at the
        // next boundary).
        if flags.is_empty() && form == AmoForm::Plain && self.inject_atomic(&op)? {
            return Ok(());
        }
        self.atomic_in(op.slot, op.remote, op.ty, op.op, form, ofi_flags(flags))
    }

    /// [`Transport::post_amo_in_flight`](mcm::Transport::post_amo_in_flight)
    /// after the fence count.
    pub(super) fn amo_kept_in_flight(
        &mut self,
        target: usize,
        op: NativeAmo,
        flags: OpFlags,
    ) -> Result<()> {
        // Where a fetching atomic read proves earlier atomics applied
        // (shm), the AMO is injected and `wait_all` proves it (the
        // completion the window's delivery-complete level asks for): no
        // per-AMO round trip to the target's progress.
        if self.prove_by_atomic_read
            && !flags.contains(OpFlags::FENCE)
            && op.form == AmoForm::Plain
            && self.inject_atomic(&op)?
        {
            if !self.unproven.contains(&target) {
                self.unproven.push(target);
            }
            return Ok(());
        }
        // Otherwise posted from a window slot of its own, so that the
        // caller's operand words are free again on return.
        let slot = AMO_BATCH + self.next_slot(SlotRing::Window)?;
        let (from, to) = (self.slot_words(op.slot), self.slot_words(slot));
        // SAFETY: two distinct slots' words (operand and compare, 16 bytes)
        // in this context's registered scratch; the window slot is not in
        // flight (every window slot is free once nothing is outstanding,
        // and the context waited above before reusing one).
        unsafe { ptr::copy_nonoverlapping(from, to, 16) };
        let form = delivered_form(&op, flags);
        self.atomic_in(slot, op.remote, op.ty, op.op, form, ofi_flags(flags))
    }
}
