//! Distributed mutual exclusion: MCS queue locks over the layer's atomics.
//!
//! Exists because a lock is the first thing a PGAS program builds on
//! atomics, and the naive spin on one remote word floods its owner. An MCS
//! lock (Mellor-Crummey and Scott) queues waiters instead: each waiter spins
//! on a word in *its own* heap, and the holder hands the lock to its
//! successor with one remote write.
//!
//! * the lock word (on any locale) holds the tail of the queue: 0 when
//!   free, else the queue node of the last waiter, encoded `(locale + 1) <<
//!   48 | address`;
//! * a queue node is two words in the acquirer's heap: `next` (its
//!   successor's node, 0 until one links itself) and `locked`;
//! * acquire: exchange the tail with my node; if there was a predecessor,
//!   write my node into its `next` and wait until my `locked` is cleared;
//! * release: if no successor has linked itself, compare-and-swap the tail
//!   from my node back to 0 (done if that worked); otherwise wait for the
//!   link, then clear the successor's `locked`.
//!
//! From the start of an acquire to the end of the release the thread runs
//! no other task when it waits (for the lock, or for the atomics of the
//! protocol itself, which may go through active messages): with
//! help-while-waiting a task queued *behind* it in the lock could run on
//! top of it and wait for a release that can only come once it returns, a
//! deadlock (seen on tcp;ofi_rxm and udp;ofi_rxd, where atomics are AMs).
//! So a critical section keeps its thread; as with any lock, do not wait
//! for other tasks while holding one.
//!
//! Every step is an SC atomic, so the MCM carries the protected data:
//! stores made while holding the lock are forced visible before the
//! release's atomic (the CAS or the write that wakes the successor) is
//! performed, and the next holder acquires after it.

use crate::error::{Error, Result};
use crate::ptr::GlobalPtr;
use crate::runtime::Runtime;
use crate::tasking::NoHelp;
use comm_ofi::Locale;

const LOCALE_SHIFT: u32 = 48;

/// Waits until `done` holds, keeping the thread (see the module docs):
/// spins, then yields, driving this thread's transmit context.
fn spin_until(rt: &Runtime, mut done: impl FnMut() -> Result<bool>) -> Result<()> {
    let mut backoff = comm_ofi::Backoff::new(33, 33);
    while !done()? {
        rt.comm().progress()?;
        backoff.snooze();
    }
    Ok(())
}

fn encode(node: GlobalPtr<u64>) -> u64 {
    (node.locale() as u64 + 1) << LOCALE_SHIFT | node.addr()
}

fn decode(w: u64) -> GlobalPtr<u64> {
    GlobalPtr::new(
        ((w >> LOCALE_SHIFT) - 1) as Locale,
        w & ((1 << LOCALE_SHIFT) - 1),
    )
}

/// A distributed lock: the address of its lock word. `Copy`; send it to
/// other locales as its word's address ([`GlobalLock::word`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GlobalLock {
    word: GlobalPtr<u64>,
}

/// A held lock; released when dropped (or by [`LockGuard::release`], which
/// reports a failure).
#[must_use = "the lock is released when the guard is dropped"]
#[derive(Debug)]
pub struct LockGuard<'a> {
    rt: &'a Runtime,
    lock: GlobalLock,
    node: Option<GlobalPtr<u64>>,
    _no_help: NoHelp,
}

impl GlobalLock {
    /// The lock whose word is at `word` (made by [`Runtime::new_lock`] or
    /// [`GlobalLock::init`] on some locale).
    pub fn at(word: GlobalPtr<u64>) -> GlobalLock {
        GlobalLock { word }
    }

    /// Makes the word at `word` (8 bytes of the caller's registered heap) a
    /// free lock. No other locale may use it before being told (through
    /// anything that orders: a barrier, an on-statement, an atomic).
    pub fn init(rt: &Runtime, word: GlobalPtr<u64>) -> Result<GlobalLock> {
        rt.atomic(word).write(0)?;
        Ok(GlobalLock { word })
    }

    /// The lock word.
    pub fn word(&self) -> GlobalPtr<u64> {
        self.word
    }

    /// Acquires the lock (a task runs other tasks while it waits).
    pub fn acquire<'a>(&self, rt: &'a Runtime) -> Result<LockGuard<'a>> {
        let no_help = NoHelp::enter();
        let node = rt.alloc::<u64>(2)?;
        match self.acquire_with(rt, node) {
            Ok(()) => Ok(LockGuard {
                rt,
                lock: *self,
                node: Some(node),
                _no_help: no_help,
            }),
            Err(e) => {
                let _ = rt.free(node);
                Err(e)
            }
        }
    }

    fn acquire_with(&self, rt: &Runtime, node: GlobalPtr<u64>) -> Result<()> {
        if node.addr() >> LOCALE_SHIFT != 0 {
            return Err(Error::BadAddress {
                locale: node.locale(),
                addr: node.addr(),
                reason: "above 2^48: cannot be encoded in a lock word".into(),
            });
        }
        let (next, locked) = (node, node.add(1));
        rt.atomic(next).write(0)?;
        rt.atomic(locked).write(1)?;
        let prev = rt.atomic(self.word).exchange(encode(node))?;
        if prev == 0 {
            return Ok(());
        }
        rt.atomic(decode(prev)).write(encode(node))?;
        spin_until(rt, || Ok(rt.atomic(locked).read()? == 0))
    }

    fn release_with(&self, rt: &Runtime, node: GlobalPtr<u64>) -> Result<()> {
        let next_word = node;
        let mut next = rt.atomic(next_word).read()?;
        if next == 0 {
            if rt
                .atomic(self.word)
                .compare_exchange(encode(node), 0)?
                .is_ok()
            {
                return Ok(());
            }
            // A successor swapped itself in and is about to link.
            spin_until(rt, || {
                next = rt.atomic(next_word).read()?;
                Ok(next != 0)
            })?;
        }
        rt.atomic(decode(next).add(1)).write(0)
    }
}

impl LockGuard<'_> {
    /// Releases the lock, reporting a failure.
    pub fn release(mut self) -> Result<()> {
        self.release_mut()
    }

    fn release_mut(&mut self) -> Result<()> {
        let Some(node) = self.node.take() else {
            return Ok(());
        };
        let r = self.lock.release_with(self.rt, node);
        let freed = self.rt.free(node);
        r.and(freed)
    }
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.release_mut() {
            tracing::error!("releasing a lock failed: {e}");
        }
    }
}

impl Runtime {
    /// A new, free lock whose word lives on this locale.
    pub fn new_lock(&self) -> Result<GlobalLock> {
        self.check_open()?;
        let word = self.alloc::<u64>(1)?;
        GlobalLock::init(self, word)
    }

    /// Acquires `lock` and returns the raw token for [`Runtime::unlock_raw`]
    /// (the C ABI's form of [`GlobalLock::acquire`]).
    pub fn lock_raw(&self, lock: GlobalLock) -> Result<u64> {
        self.check_open()?;
        let no_help = NoHelp::enter();
        let node = self.alloc::<u64>(2)?;
        match lock.acquire_with(self, node) {
            Ok(()) => {
                // Held until unlock_raw, on this thread.
                std::mem::forget(no_help);
                Ok(encode(node))
            }
            Err(e) => {
                let _ = self.free(node);
                Err(e)
            }
        }
    }

    /// Acquires `lock` only if it is free now (OpenSHMEM's
    /// `shmem_test_lock`): the raw token for [`Runtime::unlock_raw`], or
    /// `None` (nothing held) when another holder or waiter has it.
    pub fn try_lock_raw(&self, lock: GlobalLock) -> Result<Option<u64>> {
        self.check_open()?;
        let node = self.alloc::<u64>(2)?;
        let tried = (|| {
            if node.addr() >> LOCALE_SHIFT != 0 {
                return Err(Error::BadAddress {
                    locale: node.locale(),
                    addr: node.addr(),
                    reason: "above 2^48: cannot be encoded in a lock word".into(),
                });
            }
            self.atomic(node).write(0)?;
            self.atomic(node.add(1)).write(0)?;
            Ok(self
                .atomic(lock.word)
                .compare_exchange(0, encode(node))?
                .is_ok())
        })();
        match tried {
            Ok(true) => {
                // Held until unlock_raw, on this thread.
                std::mem::forget(NoHelp::enter());
                Ok(Some(encode(node)))
            }
            Ok(false) => {
                self.free(node)?;
                Ok(None)
            }
            Err(e) => {
                let _ = self.free(node);
                Err(e)
            }
        }
    }

    /// Releases `lock` held with `token` from [`Runtime::lock_raw`].
    pub fn unlock_raw(&self, lock: GlobalLock, token: u64) -> Result<()> {
        self.check_open()?;
        let node = decode(token);
        if token >> LOCALE_SHIFT == 0 || node.locale() != self.here() {
            return Err(Error::BadAddress {
                locale: node.locale(),
                addr: token,
                reason: "not a lock token of this locale".into(),
            });
        }
        let r = lock.release_with(self, node);
        let freed = self.free(node);
        NoHelp::leave_forgotten();
        r.and(freed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_nodes_round_trip_through_the_lock_word() {
        for (l, a) in [(0usize, 0x1000u64), (3, 0x7fff_ffff_f000), (65_000, 8)] {
            let p = GlobalPtr::<u64>::new(l, a);
            let w = encode(p);
            assert_ne!(w, 0, "a node never encodes as 'free'");
            assert_eq!(decode(w), p);
        }
    }
}
