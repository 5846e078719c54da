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

/// What is counted; each is one field of [`CommCounts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Counter {
    /// PUTs (blocking and non-blocking), whatever path they took.
    Put,
    /// Bytes of those PUTs.
    PutBytes,
    /// GETs (blocking and non-blocking).
    Get,
    /// Bytes of those GETs.
    GetBytes,
    /// Non-blocking PUTs (also counted in `Put`).
    PutNb,
    /// Non-blocking GETs (also counted in `Get`).
    GetNb,
    /// PUTs and GETs done as copies on the mapped path or to this locale's
    /// own heap (also counted in `Put` / `Get`).
    RmaLocal,
    /// Atomics done by the provider (native).
    AmoNative,
    /// Atomics done with a CPU instruction here (own heap or a mapped one).
    AmoCpu,
    /// Atomics sent to their owner as active messages.
    AmoViaAm,
    /// Blocking on-statements started here.
    OnBlocking,
    /// Fast (poller-run) blocking on-statements started here.
    OnFast,
    /// Non-blocking on-statements started here (fast ones included).
    OnNb,
    /// On-statement bodies run here for any initiator.
    OnHandled,
    /// Order-dummy GETs the MCM mode posted to force stores visible.
    ForceGet,
    /// Visibility proofs (no-op round trips) for AMOs.
    ForceProof,
    /// Operations posted with `FI_FENCE`.
    Fenced,
}

impl Counter {
    /// Every counter, in the order of [`CommCounts`]' fields.
    pub const ALL: [Counter; 17] = [
        Counter::Put,
        Counter::PutBytes,
        Counter::Get,
        Counter::GetBytes,
        Counter::PutNb,
        Counter::GetNb,
        Counter::RmaLocal,
        Counter::AmoNative,
        Counter::AmoCpu,
        Counter::AmoViaAm,
        Counter::OnBlocking,
        Counter::OnFast,
        Counter::OnNb,
        Counter::OnHandled,
        Counter::ForceGet,
        Counter::ForceProof,
        Counter::Fenced,
    ];
}

/// A snapshot of one locale's counters. `#[repr(C)]`: the C ABI's
/// `pgas_comm_diags_t` has the same fields in the same order.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CommCounts {
    /// See [`Counter::Put`].
    pub put: u64,
    /// See [`Counter::PutBytes`].
    pub put_bytes: u64,
    /// See [`Counter::Get`].
    pub get: u64,
    /// See [`Counter::GetBytes`].
    pub get_bytes: u64,
    /// See [`Counter::PutNb`].
    pub put_nb: u64,
    /// See [`Counter::GetNb`].
    pub get_nb: u64,
    /// See [`Counter::RmaLocal`].
    pub rma_local: u64,
    /// See [`Counter::AmoNative`].
    pub amo_native: u64,
    /// See [`Counter::AmoCpu`].
    pub amo_cpu: u64,
    /// See [`Counter::AmoViaAm`].
    pub amo_via_am: u64,
    /// See [`Counter::OnBlocking`].
    pub on_blocking: u64,
    /// See [`Counter::OnFast`].
    pub on_fast: u64,
    /// See [`Counter::OnNb`].
    pub on_nb: u64,
    /// See [`Counter::OnHandled`].
    pub on_handled: u64,
    /// See [`Counter::ForceGet`].
    pub force_get: u64,
    /// See [`Counter::ForceProof`].
    pub force_proof: u64,
    /// See [`Counter::Fenced`].
    pub fenced: u64,
}

impl CommCounts {
    /// The field of `c`.
    pub fn get(&self, c: Counter) -> u64 {
        self.as_array()[c as usize]
    }

    /// The fields in [`Counter::ALL`] order.
    pub fn as_array(&self) -> [u64; 17] {
        [
            self.put,
            self.put_bytes,
            self.get,
            self.get_bytes,
            self.put_nb,
            self.get_nb,
            self.rma_local,
            self.amo_native,
            self.amo_cpu,
            self.amo_via_am,
            self.on_blocking,
            self.on_fast,
            self.on_nb,
            self.on_handled,
            self.force_get,
            self.force_proof,
            self.fenced,
        ]
    }

    /// From fields in [`Counter::ALL`] order.
    pub fn from_array(a: [u64; 17]) -> CommCounts {
        let [put, put_bytes, get, get_bytes, put_nb, get_nb, rma_local, amo_native, amo_cpu, amo_via_am, on_blocking, on_fast, on_nb, on_handled, force_get, force_proof, fenced] =
            a;
        CommCounts {
            put,
            put_bytes,
            get,
            get_bytes,
            put_nb,
            get_nb,
            rma_local,
            amo_native,
            amo_cpu,
            amo_via_am,
            on_blocking,
            on_fast,
            on_nb,
            on_handled,
            force_get,
            force_proof,
            fenced,
        }
    }

    /// The counts as little-endian bytes (for gathering over the network).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.as_array()
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    }

    /// Inverse of [`CommCounts::to_bytes`]; `None` if `b` has the wrong length.
    pub fn from_bytes(b: &[u8]) -> Option<CommCounts> {
        if b.len() != 17 * 8 {
            return None;
        }
        let mut a = [0u64; 17];
        for (i, w) in b.chunks_exact(8).enumerate() {
            a[i] = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        }
        Some(CommCounts::from_array(a))
    }
}

impl std::fmt::Display for CommCounts {
    /// `put=3 put_bytes=24 ...`, zero counters left out (`none` if all are).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const NAMES: [&str; 17] = [
            "put",
            "put_bytes",
            "get",
            "get_bytes",
            "put_nb",
            "get_nb",
            "rma_local",
            "amo_native",
            "amo_cpu",
            "amo_via_am",
            "on_blocking",
            "on_fast",
            "on_nb",
            "on_handled",
            "force_get",
            "force_proof",
            "fenced",
        ];
        let mut any = false;
        for (name, v) in NAMES.iter().zip(self.as_array()) {
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
    counts: [AtomicU64; 17],
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
    fn array_and_bytes_round_trip_in_field_order() {
        let a: [u64; 17] = std::array::from_fn(|i| i as u64 * 3 + 1);
        let c = CommCounts::from_array(a);
        assert_eq!(c.as_array(), a);
        for (i, k) in Counter::ALL.iter().enumerate() {
            assert_eq!(c.get(*k), a[i], "{k:?}");
            assert_eq!(*k as usize, i);
        }
        assert_eq!(CommCounts::from_bytes(&c.to_bytes()), Some(c));
        assert_eq!(CommCounts::from_bytes(&[0; 8]), None);
        // repr(C) of 17 u64s: what the C header declares.
        assert_eq!(std::mem::size_of::<CommCounts>(), 17 * 8);
    }
}
