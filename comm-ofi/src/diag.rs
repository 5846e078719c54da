//! Per-locale operation counters (Chapel's CommDiagnostics): how many PUTs,
//! GETs, atomics by route, on-statements and forcing operations this
//! locale's comm layer issued while counting was on.
//!
//! Exists because "why is my program slow" is first a question of counts:
//! how many operations went to the network, how many were copies on the
//! mapped path, how many dummy GETs and proofs the MCM mode added. The
//! counters count what the layer *issues*, the runtime's own operations
//! included (barrier flags, collectives, replies by PUT): count around the
//! code of interest, between barriers, as Chapel programs do with
//! `startCommDiagnostics` / `stopCommDiagnostics`.
//!
//! Off by default. Off, each counting point costs one relaxed load of a
//! flag the data path reads anyway; on, one relaxed add on a word shared by
//! the locale's threads (contended when several threads count at once: a
//! diagnostic, not a profiler).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Declares [`Counter`] and [`CommCounts`] from one list (variant, field,
/// doc), so the enum, the struct's fields (and so the C header's order) and
/// the names can never disagree.
macro_rules! counters {
    ($($(#[doc = $doc:literal])* $variant:ident => $field:ident,)*) => {
        /// What is counted; each is one field of [`CommCounts`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Counter {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Counter {
            /// Every counter, in the order of [`CommCounts`]' fields.
            pub const ALL: [Counter; N] = [$(Counter::$variant,)*];
            /// The field names, in the same order.
            pub const NAMES: [&'static str; N] = [$(stringify!($field),)*];
        }

        /// A snapshot of one locale's counters. `#[repr(C)]`: the C ABI's
        /// `pgas_comm_diags_t` has the same fields in the same order.
        #[repr(C)]
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct CommCounts {
            $($(#[doc = $doc])* pub $field: u64,)*
        }

        impl CommCounts {
            /// The fields in [`Counter::ALL`] order.
            pub fn as_array(&self) -> [u64; N] {
                [$(self.$field,)*]
            }

            /// From fields in [`Counter::ALL`] order.
            pub fn from_array(a: [u64; N]) -> CommCounts {
                let [$($field,)*] = a;
                CommCounts { $($field,)* }
            }
        }
    };
}

/// How many counters there are.
const N: usize = 17;

counters! {
    /// PUTs (blocking and non-blocking), whatever path they took.
    Put => put,
    /// Bytes of those PUTs.
    PutBytes => put_bytes,
    /// GETs (blocking and non-blocking).
    Get => get,
    /// Bytes of those GETs.
    GetBytes => get_bytes,
    /// Non-blocking PUTs (also counted in `put`).
    PutNb => put_nb,
    /// Non-blocking GETs (also counted in `get`).
    GetNb => get_nb,
    /// PUTs and GETs done as copies on the mapped path or to this locale's
    /// own heap (also counted in `put` / `get`).
    RmaLocal => rma_local,
    /// Atomics done by the provider (native).
    AmoNative => amo_native,
    /// Atomics done with a CPU instruction here (own heap or a mapped one).
    AmoCpu => amo_cpu,
    /// Atomics sent to their owner as active messages.
    AmoViaAm => amo_via_am,
    /// Blocking on-statements started here.
    OnBlocking => on_blocking,
    /// Fast (poller-run) blocking on-statements started here.
    OnFast => on_fast,
    /// Non-blocking on-statements started here (fast ones included).
    OnNb => on_nb,
    /// On-statement bodies run here for any initiator.
    OnHandled => on_handled,
    /// Order-dummy GETs the MCM mode posted to force stores visible.
    ForceGet => force_get,
    /// Visibility proofs (no-op round trips) for AMOs.
    ForceProof => force_proof,
    /// Operations posted with `FI_FENCE`.
    Fenced => fenced,
}

impl CommCounts {
    /// The field of `c`.
    pub fn get(&self, c: Counter) -> u64 {
        self.as_array()[c as usize]
    }
}

impl std::fmt::Display for CommCounts {
    /// `put=3 put_bytes=24 ...`, zero counters left out (`none` if all are).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut any = false;
        for (name, v) in Counter::NAMES.iter().zip(self.as_array()) {
            if v != 0 {
                if any {
                    f.write_str(" ")?;
                }
                write!(f, "{name}={v}")?;
                any = true;
            }
        }
        if !any {
            f.write_str("none")?;
        }
        Ok(())
    }
}

/// The counters of one locale (one per `Comm`, shared with its contexts).
#[derive(Debug, Default)]
pub struct CommDiagnostics {
    on: AtomicBool,
    counts: [AtomicU64; N],
}

impl CommDiagnostics {
    /// Counters off, all zero.
    pub fn new() -> CommDiagnostics {
        CommDiagnostics::default()
    }

    /// Counting on (this locale only; in SPMD code every locale calls it).
    pub fn start(&self) {
        self.on.store(true, Relaxed);
    }

    /// Counting off; the counts stay readable.
    pub fn stop(&self) {
        self.on.store(false, Relaxed);
    }

    /// Whether counting is on.
    #[inline]
    pub fn is_on(&self) -> bool {
        self.on.load(Relaxed)
    }

    /// All counts back to zero (counting stays as it was).
    pub fn reset(&self) {
        for c in &self.counts {
            c.store(0, Relaxed);
        }
    }

    /// The counts now. Operations of other threads that race with the read
    /// may or may not be in it.
    pub fn snapshot(&self) -> CommCounts {
        CommCounts::from_array(std::array::from_fn(|i| self.counts[i].load(Relaxed)))
    }

    /// Counts `n` of `c` if counting is on.
    #[inline]
    pub fn add(&self, c: Counter, n: u64) {
        if self.on.load(Relaxed) {
            self.counts[c as usize].fetch_add(n, Relaxed);
        }
    }

    /// Counts one `c` if counting is on.
    #[inline]
    pub fn count(&self, c: Counter) {
        self.add(c, 1);
    }

    /// Counts one `c` and `n` of `bytes` if counting is on (one test).
    #[inline]
    pub fn count_sized(&self, c: Counter, bytes: Counter, n: u64) {
        if self.on.load(Relaxed) {
            self.counts[c as usize].fetch_add(1, Relaxed);
            self.counts[bytes as usize].fetch_add(n, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_while_on_and_reset_zeroes() {
        let d = CommDiagnostics::new();
        d.count(Counter::Put);
        assert_eq!(d.snapshot(), CommCounts::default(), "off by default");
        d.start();
        d.count(Counter::Put);
        d.add(Counter::PutBytes, 8);
        d.count(Counter::Fenced);
        d.stop();
        d.count(Counter::Put);
        let s = d.snapshot();
        assert_eq!((s.put, s.put_bytes, s.fenced, s.get), (1, 8, 1, 0));
        assert_eq!(s.to_string(), "put=1 put_bytes=8 fenced=1");
        d.reset();
        assert_eq!(d.snapshot().to_string(), "none");
    }

    #[test]
    fn array_round_trips_in_field_order() {
        let a: [u64; N] = std::array::from_fn(|i| i as u64 * 3 + 1);
        let c = CommCounts::from_array(a);
        assert_eq!(c.as_array(), a);
        for (i, k) in Counter::ALL.iter().enumerate() {
            assert_eq!(c.get(*k), a[i], "{k:?}");
            assert_eq!(*k as usize, i);
        }
        // repr(C) of 17 u64s: what the C header declares.
        assert_eq!(std::mem::size_of::<CommCounts>(), 17 * 8);
    }
}
