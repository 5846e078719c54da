//! Replies to a mapped initiator: the target writes the reply and the done
//! word straight into the initiator's done slot through the mapping (the
//! intra-node mapped path, comm-ofi's `mapped`), instead of sending a Reply
//! message for the initiator's poller to copy in. No message, no thread hop
//! on the initiator's side: its waiting thread sees the done word.

use crate::wire;
use std::sync::atomic::{AtomicU64, Ordering};

/// Fills the done slot at `slot` (this process's address of an 8-aligned,
/// [`wire::SLOT_SIZE`]-byte slot of a mapped heap): the reply bytes (or, for
/// a reply too large for the slot, the address of the reply in our heap),
/// then the done word with release ordering, so the initiator's acquire
/// load of it sees the bytes (and, after the caller's boundary, every store
/// of the body).
pub(crate) fn fill(slot: *mut u8, bytes: &[u8], large_at: u64, error: bool) {
    let large = large_at != 0;
    // SAFETY: slot..slot+SLOT_SIZE lies in a mapped heap (the caller's
    // translate checked the range) and belongs to the initiator's pending
    // request, which only reads it once the done word is set below.
    unsafe {
        if large {
            std::ptr::write_unaligned(slot.add(8) as *mut u64, large_at.to_le());
        } else {
            let n = bytes.len().min(wire::SLOT_INLINE);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), slot.add(8), n);
        }
    }
    // SAFETY: the slot's first word is 8-aligned (checked by the caller) and
    // only accessed atomically.
    let done = unsafe { AtomicU64::from_ptr(slot as *mut u64) };
    done.store(
        wire::done_word(bytes.len(), large, error),
        Ordering::Release,
    );
}
