//! Synchronisation shim: loom's primitives under `cfg(loom)`, std's otherwise.
//!
//! Only the simulated fabric ([`crate::sim`]) uses these. Routing every lock,
//! condition variable, atomic and thread of the simulation through this module
//! is what lets the same code run as plain threads in unit tests and as a
//! loom model, where loom explores every interleaving of them (the pattern
//! tokio and crossbeam use). The policy itself needs no synchronisation: a
//! transmit context is `&mut`.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread;

/// Locks `mutex`, ignoring poisoning: a panic in a simulated thread is already
/// the test's verdict, and the state it leaves is still worth reading.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Waits on `condvar`, ignoring poisoning like [`lock`].
pub(crate) fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    condvar
        .wait(guard)
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
