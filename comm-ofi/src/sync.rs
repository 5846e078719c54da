//! Synchronisation shim: loom's primitives under `cfg(loom)`, the production
//! ones (parking_lot's mutex, std's atomics) otherwise.
//!
//! Only the pieces whose concurrency is worth model-checking go through it
//! (comm-ofi's transmit-context table, amhandler's done-slot handshake and
//! idle handler threads); the same code then runs as production code and
//! as a loom model (tokio's `src/loom/mod.rs` pattern). The mutex has parking_lot's shape in both builds: `lock`
//! returns the guard, `try_lock` an `Option`.

#[cfg(loom)]
pub use loom::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Threads: park / unpark and the current thread's handle.
#[cfg(loom)]
pub use loom::thread::{current, park, Thread};
/// Threads: park / unpark and the current thread's handle.
#[cfg(not(loom))]
pub use std::thread::{current, park, Thread};

/// A mutex with parking_lot's interface.
#[derive(Debug, Default)]
pub struct Mutex<T>(
    #[cfg(loom)] loom::sync::Mutex<T>,
    #[cfg(not(loom))] parking_lot::Mutex<T>,
);

/// Its guard.
#[cfg(loom)]
pub type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;
/// Its guard.
#[cfg(not(loom))]
pub type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    /// A mutex holding `v`.
    pub fn new(v: T) -> Mutex<T> {
        #[cfg(loom)]
        return Mutex(loom::sync::Mutex::new(v));
        #[cfg(not(loom))]
        return Mutex(parking_lot::Mutex::new(v));
    }

    /// Locks, waiting as long as it takes.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(loom)]
        return self.0.lock().unwrap_or_else(|p| p.into_inner());
        #[cfg(not(loom))]
        return self.0.lock();
    }

    /// Locks if free.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        #[cfg(loom)]
        return self.0.try_lock().ok();
        #[cfg(not(loom))]
        return self.0.try_lock();
    }
}
