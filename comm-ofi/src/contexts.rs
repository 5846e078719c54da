//! The transmit-context table: which context a thread uses, and the rules
//! for handing one over.
//!
//! Exists to keep the concurrency of context ownership in one small piece
//! that loom can check (`tests/loom_contexts.rs`, `--cfg loom`), apart from
//! the libfabric work the contexts do:
//!
//! * a context is *claimed* for life by at most one thread ([`ContextTable::claim`]):
//!   the worker and AM threads that get their own; claiming twice is an
//!   error, never two owners;
//! * the others are *shared*: a thread without one takes any free shared
//!   context ([`ContextTable::shared`]: its hint first, then the next free
//!   one, else it waits for its hint) and holds it only for one operation;
//!   before the guard is dropped the caller *releases* it (the MCM policy
//!   forces the holder's dangling stores visible, `Selector::release`), so a
//!   shared context never changes hands with another holder's stores still
//!   dangling. [`ContextTable::with_shared`] packages take-use-release.

use crate::sync::{AtomicBool, Mutex, MutexGuard, Ordering};

/// Contexts `0..len`: some claimed for life, the `shared` ones taken per
/// operation.
#[derive(Debug)]
pub struct ContextTable<T> {
    slots: Vec<Mutex<T>>,
    claimed: Vec<AtomicBool>,
    shared: Vec<usize>,
}

/// A second claim of a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlreadyClaimed(pub usize);

impl<T> ContextTable<T> {
    /// A table of `slots`, of which `shared` (indices, not empty) serve
    /// threads without a context of their own.
    pub fn new(slots: Vec<T>, shared: Vec<usize>) -> ContextTable<T> {
        assert!(
            !shared.is_empty() && shared.iter().all(|&i| i < slots.len()),
            "shared contexts {shared:?} must be indices of the {} slots",
            slots.len()
        );
        ContextTable {
            claimed: slots.iter().map(|_| AtomicBool::new(false)).collect(),
            slots: slots.into_iter().map(Mutex::new).collect(),
            shared,
        }
    }

    /// Number of contexts.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are none (never: `new` needs a shared one).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Claims context `idx` for the calling thread for life: only one
    /// claim of an index ever succeeds.
    pub fn claim(&self, idx: usize) -> Result<(), AlreadyClaimed> {
        if self.claimed[idx].swap(true, Ordering::AcqRel) {
            Err(AlreadyClaimed(idx))
        } else {
            Ok(())
        }
    }

    /// Gives back a claimed context (a thread that bound one for a while,
    /// `Comm::unbind_thread`): the caller forced it visible and no longer
    /// uses it; another thread may claim it.
    pub fn unclaim(&self, idx: usize) {
        self.claimed[idx].store(false, Ordering::Release);
    }

    /// Locks context `idx` (a claimed one: its owner, or a thread that
    /// reaches every context, such as a barrier's forcing).
    #[inline]
    pub fn lock(&self, idx: usize) -> MutexGuard<'_, T> {
        self.slots[idx].lock()
    }

    /// Locks context `idx` if it is free.
    pub fn try_lock(&self, idx: usize) -> Option<MutexGuard<'_, T>> {
        self.slots[idx].try_lock()
    }

    /// The shared contexts' indices.
    pub fn shared_indices(&self) -> &[usize] {
        &self.shared
    }

    /// Takes a shared context for one operation: the one at `hint` (modulo
    /// their number) if free, else the next free one, else waits for the
    /// hinted one. The caller must release it (force its dangling stores)
    /// before dropping the guard.
    pub fn shared(&self, hint: usize) -> MutexGuard<'_, T> {
        let k = self.shared.len();
        if k == 1 {
            return self.slots[self.shared[0]].lock();
        }
        let start = hint % k;
        for j in 0..k {
            if let Some(g) = self.slots[self.shared[(start + j) % k]].try_lock() {
                return g;
            }
        }
        self.slots[self.shared[start]].lock()
    }

    /// Takes a shared context, runs `op` on it, then `release` (always, even
    /// if `op` failed), and hands the context back. The first error wins.
    pub fn with_shared<R, E>(
        &self,
        hint: usize,
        op: impl FnOnce(&mut T) -> Result<R, E>,
        release: impl FnOnce(&mut T) -> Result<(), E>,
    ) -> Result<R, E> {
        let mut g = self.shared(hint);
        let r = op(&mut g);
        let released = release(&mut g);
        drop(g);
        let v = r?;
        released?;
        Ok(v)
    }

    /// Every context, locked one after the other (barrier, finalize).
    pub fn for_each(&self, mut f: impl FnMut(&mut T)) {
        for s in &self.slots {
            f(&mut s.lock());
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn claims_are_exclusive_and_shared_contexts_rotate() {
        let t = ContextTable::new(vec![0u32; 4], vec![0, 2, 3]);
        assert_eq!(t.claim(1), Ok(()));
        assert_eq!(t.claim(1), Err(AlreadyClaimed(1)));
        let a = t.shared(0);
        // Hint 0 is taken: the next free shared one.
        let b = t.shared(0);
        let c = t.shared(0);
        drop((a, b, c));
        let r: Result<u32, ()> = t.with_shared(
            1,
            |v| {
                *v += 1;
                Ok(*v)
            },
            |v| {
                *v += 10;
                Ok(())
            },
        );
        assert_eq!(r, Ok(1));
        assert_eq!(*t.lock(2), 11, "hint 1 is shared context 2");
    }

    #[test]
    #[should_panic(expected = "must be indices")]
    fn shared_indices_are_checked() {
        let _ = ContextTable::new(vec![0u8; 2], vec![5]);
    }
}
