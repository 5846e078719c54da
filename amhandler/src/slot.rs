//! The done-slot handshake: how a blocking request's reply reaches the
//! thread that waits for it.
//!
//! Exists so that the one ordering rule of the reply path is written once
//! and model-checked (`src/loom_tests.rs`, run with `--cfg loom`): the reply bytes are
//! written *before* the done word is stored with `Release`, and read only
//! *after* the done word was seen with `Acquire`. The poller publishes
//! (`Reply` messages, `PGAS_AM_DONE=msg`); the initiator polls and takes.
//! With `PGAS_AM_DONE=put` the target's NIC writes the slot instead, and the
//! target forces the reply PUTs visible before the done PUT (docs/am.md).
//!
//! A slot is a word of registered heap (0 = pending, else the done word,
//! see `wire::done_word`) followed by the inline reply area.

use comm_ofi::sync::Ordering;

/// The memory of one done slot.
pub(crate) trait SlotMem {
    /// Writes `bytes` at the start of the reply area.
    fn write_reply(&self, bytes: &[u8]);
    /// Reads `len` bytes of the reply area.
    fn read_reply(&self, len: usize) -> Vec<u8>;
    /// Stores the done word.
    fn store_done(&self, w: u64, o: Ordering);
    /// Loads the done word.
    fn load_done(&self, o: Ordering) -> u64;
    /// Sleeps while the done word is 0, at most `timeout` (spurious returns
    /// allowed). The loom model's slots do not sleep: [`sleep`] callers
    /// re-check in a loop, which loom explores as spinning.
    fn sleep_while_pending(&self, _timeout: std::time::Duration) {}
    /// Wakes the threads in [`SlotMem::sleep_while_pending`].
    fn wake(&self) {}
}

/// Marks a slot pending before its request is sent.
pub(crate) fn arm<S: SlotMem>(slot: &S) {
    slot.store_done(0, Ordering::Release);
}

/// Target side: the reply, then the done word that releases it.
pub(crate) fn publish<S: SlotMem>(slot: &S, reply: &[u8], word: u64) {
    slot.write_reply(reply);
    slot.store_done(word, Ordering::Release);
}

/// Target side on providers whose waits block (`sockets`): [`publish`],
/// then wake the initiator's thread if it sleeps on the done word. The wake
/// comes after the store, and the sleep compares the word in the kernel,
/// so a waiter either sees the word or is woken: nothing is lost.
pub(crate) fn publish_and_wake<S: SlotMem>(slot: &S, reply: &[u8], word: u64) {
    publish(slot, reply, word);
    slot.wake();
}

/// Initiator side on providers whose waits block: sleeps until the done
/// word is set (a [`publish_and_wake`] ends the sleep) or `timeout`
/// passed; then [`poll`] again.
pub(crate) fn sleep<S: SlotMem>(slot: &S, timeout: std::time::Duration) {
    slot.sleep_while_pending(timeout);
}

/// Initiator side: the done word, once set (acquiring the reply).
pub(crate) fn poll<S: SlotMem>(slot: &S) -> Option<u64> {
    let w = slot.load_done(Ordering::Acquire);
    (w != 0).then_some(w)
}

/// Initiator side, after [`poll`] returned a word: the reply bytes.
pub(crate) fn take<S: SlotMem>(slot: &S, len: usize) -> Vec<u8> {
    slot.read_reply(len)
}

/// A slot by its address in this process (8-aligned, with
/// `wire::SLOT_SIZE` bytes, owned by one request at a time): in this
/// locale's registered heap, or in a co-located initiator's heap mapped
/// here (the mapped path).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeapSlot(pub u64);

impl HeapSlot {
    fn word(&self) -> &std::sync::atomic::AtomicU64 {
        // SAFETY: the slot's first 8 bytes are an 8-aligned word of a
        // registered heap mapped in this process (pool buffers are
        // 128-aligned; a mapped slot's alignment is checked by mapped_slot),
        // which lives as long as the Am; it is only accessed atomically.
        unsafe { std::sync::atomic::AtomicU64::from_ptr(self.0 as *mut u64) }
    }
}

impl SlotMem for HeapSlot {
    fn write_reply(&self, bytes: &[u8]) {
        assert!(
            bytes.len() <= crate::wire::SLOT_INLINE,
            "reply too large for a slot"
        );
        // SAFETY: the reply area follows the done word inside the slot
        // (SLOT_SIZE = 8 + SLOT_INLINE); the request that owns the slot is
        // waiting and does not read it before the done word is set.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), (self.0 + 8) as *mut u8, bytes.len())
        };
    }

    fn read_reply(&self, len: usize) -> Vec<u8> {
        assert!(
            len <= crate::wire::SLOT_INLINE,
            "reply too large for a slot"
        );
        let mut v = vec![0u8; len];
        // SAFETY: as above; written before the done word that was acquired.
        unsafe { std::ptr::copy_nonoverlapping((self.0 + 8) as *const u8, v.as_mut_ptr(), len) };
        v
    }

    fn store_done(&self, w: u64, o: Ordering) {
        self.word().store(w, o);
    }

    fn load_done(&self, o: Ordering) -> u64 {
        self.word().load(o)
    }

    fn sleep_while_pending(&self, timeout: std::time::Duration) {
        // The done word has DONE_SET in its low half once written.
        comm_ofi::futex::wait_while_zero(self.word(), timeout);
    }

    fn wake(&self) {
        comm_ofi::futex::wake_u64(self.word());
    }
}
