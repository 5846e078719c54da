//! The doorbell protocol of the mapped path: when a locale's AM poller may
//! sleep, who must wake it, and how an idle worker covers for it.
//!
//! Exists apart from `mapped.rs` (which finds the word: one `u32` in each
//! heap's reserved block, shared by every co-located process) so that the
//! protocol itself, a three-state machine on one word, is the same code in
//! production and in the loom models (`tests/loom_doorbell.rs`): generic
//! over the word ([`BellWord`]: std's `AtomicU32` in a mapped heap, loom's in
//! the model) and over the blocking wait ([`Futex`]: `futex(2)`, or a loom
//! condition variable with the same check-then-sleep atomicity).
//!
//! States: [`AWAKE`] (the poller polls), [`SLEEPING`] (it sleeps; a sender
//! must wake it), [`COVERED`] (an idle worker polls in its place; senders
//! need not wake anyone). The rules:
//!
//! * a sender makes its message visible, then [`ring`]s: a `SeqCst` fence
//!   and a load of the state (Dekker with the sleeper); `SLEEPING` is
//!   swapped to `AWAKE` and the futex woken;
//! * the poller announces [`prepare_sleep`] (`AWAKE` -> `SLEEPING`), polls
//!   once more, and [`sleep`]s only if that found nothing (else
//!   [`cancel_sleep`]): a message sent before the announcement is found by
//!   the last poll, one sent after it rings;
//! * a worker [`cover`]s (any state -> `COVERED`), polls for as long as it
//!   covers, then [`uncover`]s (`COVERED` -> `SLEEPING`) and polls once
//!   more (a sender that saw the cover did not ring); the poller may
//!   [`take_over`] a stalled cover (`COVERED` -> `AWAKE`).

use crate::sync::{fence, Ordering};
use std::time::Duration;

/// The poller polls.
pub const AWAKE: u32 = 0;
/// The poller sleeps: a sender must ring.
pub const SLEEPING: u32 = 1;
/// An idle worker polls in the poller's place: a ring need not wake it.
pub const COVERED: u32 = 2;

/// The atomic word the protocol runs on.
pub trait BellWord {
    /// `load`.
    fn load(&self, o: Ordering) -> u32;
    /// `swap`.
    fn swap(&self, v: u32, o: Ordering) -> u32;
    /// `compare_exchange`.
    fn compare_exchange(&self, cur: u32, new: u32, ok: Ordering, err: Ordering)
        -> Result<u32, u32>;
}

macro_rules! bell_word {
    ($t:ty) => {
        impl BellWord for $t {
            #[inline]
            fn load(&self, o: Ordering) -> u32 {
                <$t>::load(self, o)
            }
            #[inline]
            fn swap(&self, v: u32, o: Ordering) -> u32 {
                <$t>::swap(self, v, o)
            }
            #[inline]
            fn compare_exchange(
                &self,
                cur: u32,
                new: u32,
                ok: Ordering,
                err: Ordering,
            ) -> Result<u32, u32> {
                <$t>::compare_exchange(self, cur, new, ok, err)
            }
        }
    };
}
bell_word!(std::sync::atomic::AtomicU32);
#[cfg(loom)]
bell_word!(loom::sync::atomic::AtomicU32);

/// Blocking on the word: sleep while it holds a value (checked atomically
/// with going to sleep, as the kernel's futex does), and wake sleepers.
pub trait Futex<W: ?Sized> {
    /// Sleeps while `word` holds `expected`, at most `timeout` (may return
    /// early: callers re-check).
    fn wait(&self, word: &W, expected: u32, timeout: Duration);
    /// Wakes every thread sleeping on `word`.
    fn wake(&self, word: &W);
}

/// The kernel's futex, on a word of the (shared) heap.
pub struct KernelFutex;

impl Futex<std::sync::atomic::AtomicU32> for KernelFutex {
    fn wait(&self, word: &std::sync::atomic::AtomicU32, expected: u32, timeout: Duration) {
        crate::futex::wait(word, expected, timeout)
    }
    fn wake(&self, word: &std::sync::atomic::AtomicU32) {
        crate::futex::wake(word)
    }
}

/// A sender's ring, after its message is visible: wakes the poller if it
/// sleeps (not if a worker covers for it).
#[inline]
pub fn ring<W: BellWord>(bell: &W, fx: &impl Futex<W>) {
    // Dekker with the sleeper: our message (plain stores of the provider,
    // or a syscall) before the load of its state; its state store before
    // its last poll.
    fence(Ordering::SeqCst);
    if bell.load(Ordering::Relaxed) == SLEEPING && bell.swap(AWAKE, Ordering::AcqRel) == SLEEPING {
        fx.wake(bell);
    }
}

/// Wakes the poller whatever the state (shutdown).
pub fn ring_always<W: BellWord>(bell: &W, fx: &impl Futex<W>) {
    bell.swap(AWAKE, Ordering::AcqRel);
    fx.wake(bell);
}

/// The poller announces that it is about to sleep; it must poll once more
/// and [`sleep`] only if that found nothing (else [`cancel_sleep`]). A
/// covered bell stays covered.
pub fn prepare_sleep<W: BellWord>(bell: &W) {
    let _ = bell.compare_exchange(AWAKE, SLEEPING, Ordering::SeqCst, Ordering::SeqCst);
    // The other half of `ring`'s Dekker: the announcement before the last
    // poll's loads (a locked RMW is a full barrier on x86 already; in the
    // language's model, and on Arm, only the fence orders later plain loads).
    fence(Ordering::SeqCst);
}

/// Takes back [`prepare_sleep`].
pub fn cancel_sleep<W: BellWord>(bell: &W) {
    let _ = bell.compare_exchange(SLEEPING, AWAKE, Ordering::AcqRel, Ordering::Relaxed);
}

/// Whether a worker polls in the poller's place.
pub fn covered<W: BellWord>(bell: &W) -> bool {
    bell.load(Ordering::Acquire) == COVERED
}

/// Sleeps until rung or `timeout` passed (after [`prepare_sleep`], or while
/// [`covered`]); returns with the state `AWAKE`, or still `COVERED` (the
/// caller sleeps again).
pub fn sleep<W: BellWord>(bell: &W, fx: &impl Futex<W>, timeout: Duration) {
    let v = bell.load(Ordering::Acquire);
    if v != AWAKE {
        fx.wait(bell, v, timeout);
    }
    let _ = bell.compare_exchange(SLEEPING, AWAKE, Ordering::AcqRel, Ordering::Relaxed);
}

/// An idle worker takes over polling: senders no longer wake the poller.
/// Until [`uncover`], the worker must keep polling.
pub fn cover<W: BellWord>(bell: &W) {
    bell.swap(COVERED, Ordering::SeqCst);
}

/// The poller takes over from a covering worker that stopped polling;
/// false if the cover was gone already.
pub fn take_over<W: BellWord>(bell: &W) -> bool {
    bell.compare_exchange(COVERED, AWAKE, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// The worker stops polling: senders wake the poller again. The worker must
/// poll once more after this and handle what it finds.
pub fn uncover<W: BellWord>(bell: &W) {
    let _ = bell.compare_exchange(COVERED, SLEEPING, Ordering::SeqCst, Ordering::SeqCst);
    // As in `prepare_sleep`: the state before the worker's last poll.
    fence(Ordering::SeqCst);
}
