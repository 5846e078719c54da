//! Loom over the mapped path's publication (`comm_ofi::publish`, the
//! functions `Comm::put`/`get` and the boundary call): the same `store`,
//! `load` and `boundary` production runs, over a heap in loom's memory (two
//! 8-byte words, atomic, and a 16-byte block that odd-sized copies reach as
//! plain bytes in a loom `UnsafeCell`, whose accesses loom checks against
//! the happens-before relation: a copy read while it may still be written
//! is a failure even when the bytes happen to match).
//!
//! Three rules, each with negative controls that weaken one ordering of
//! [`PUBLISH`] (or skip the boundary's fence) and are caught:
//!
//! * MP by a flag word: data (a word and an odd-sized copy), then a flag
//!   word; a reader that sees the flag sees the data (the `Release` word
//!   store, the `Acquire` word load).
//! * SB through boundaries: store, boundary, load of the other's word on
//!   two threads; not both read the old value (the `SeqCst` fence).
//! * MP through boundaries: data, boundary, then a relaxed store that
//!   signals (the provider's message, a barrier's word: plain memory);
//!   a reader that sees the signal and passes its own boundary sees the
//!   data (fence to fence).
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p comm-ofi --release --test loom_publish`
#![cfg(loom)]

use comm_ofi::publish::{self, Orders, SharedMem, PUBLISH};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;

/// The heap's flag word (or the first thread's word in SB).
const X: usize = 0;
/// The data word (or the second thread's word in SB).
const Y: usize = 8;
/// The plain-copied block (odd-sized copies land here).
const BLOCK: usize = 64;
/// What the writer copies into the block: 12 bytes, not a word.
const DATA: [u8; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

/// A mapped heap in loom's memory.
struct Heap {
    words: [AtomicU64; 2],
    block: UnsafeCell<[u8; 16]>,
}

// SAFETY: the block is only reached through loom's UnsafeCell, whose
// accesses loom checks for races; that is the point of the model.
unsafe impl Sync for Heap {}

impl Heap {
    fn new() -> Arc<Heap> {
        Arc::new(Heap {
            words: [AtomicU64::new(0), AtomicU64::new(0)],
            block: UnsafeCell::new([0; 16]),
        })
    }
    fn word(&self, at: usize) -> &AtomicU64 {
        assert!(at % 8 == 0 && at / 8 < self.words.len(), "no word at {at}");
        &self.words[at / 8]
    }
    /// A word store and load through the production functions.
    fn put_u64(&self, at: usize, v: u64, o: Orders) {
        // SAFETY: `at` is one of the model's words (checked in store_word).
        unsafe { publish::store(self, at, &v.to_ne_bytes(), o) }
    }
    fn get_u64(&self, at: usize, o: Orders) -> u64 {
        let mut b = [0u8; 8];
        // SAFETY: as in put_u64.
        unsafe { publish::load(self, at, &mut b, o) };
        u64::from_ne_bytes(b)
    }
    /// The odd-sized copy, through the production functions.
    fn put_block(&self, o: Orders) {
        // SAFETY: BLOCK..BLOCK + 12 lies in the block.
        unsafe { publish::store(self, BLOCK, &DATA, o) }
    }
    fn get_block(&self, o: Orders) -> [u8; 12] {
        let mut b = [0u8; 12];
        // SAFETY: as in put_block.
        unsafe { publish::load(self, BLOCK, &mut b, o) };
        b
    }
}

impl SharedMem for Heap {
    unsafe fn store_word(&self, at: usize, word: &[u8], o: Ordering) {
        let w: [u8; 8] = word.try_into().expect("the model's words are 8 bytes");
        self.word(at).store(u64::from_ne_bytes(w), o);
    }
    unsafe fn load_word(&self, at: usize, word: &mut [u8], o: Ordering) {
        word.copy_from_slice(&self.word(at).load(o).to_ne_bytes());
    }
    unsafe fn copy_in(&self, at: usize, src: &[u8]) {
        let off = at - BLOCK;
        // SAFETY: loom tracks this access (a race is a model failure); the
        // range lies in the block (slice indexing checks it).
        self.block
            .with_mut(|b| unsafe { (&mut *b)[off..off + src.len()].copy_from_slice(src) });
    }
    unsafe fn copy_out(&self, at: usize, dst: &mut [u8]) {
        let off = at - BLOCK;
        // SAFETY: as in copy_in.
        self.block
            .with(|b| dst.copy_from_slice(unsafe { &(&*b)[off..off + dst.len()] }));
    }
}

/// Whether loom finds a failing execution of `f` (a negative control):
/// loom reports it by panicking out of the model.
fn caught(f: impl Fn() + Sync + Send + 'static) -> bool {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| loom::model(f))).is_err()
}

/// MP by a flag word: the writer copies the block and the data word, then
/// stores the flag; a reader that sees the flag reads both.
fn mp_flag(writer: Orders, reader: Orders) {
    let h = Heap::new();
    let w = {
        let h = h.clone();
        thread::spawn(move || {
            h.put_block(writer);
            h.put_u64(Y, 42, writer);
            h.put_u64(X, 1, writer);
        })
    };
    if h.get_u64(X, reader) == 1 {
        assert_eq!(h.get_u64(Y, reader), 42, "flag seen, data word old");
        assert_eq!(h.get_block(reader), DATA, "flag seen, block old");
    }
    w.join().unwrap();
}

#[test]
fn a_flag_word_publishes_the_data_before_it() {
    loom::model(|| mp_flag(PUBLISH, PUBLISH));
}

#[test]
fn a_relaxed_flag_store_is_caught() {
    let weak = Orders {
        store: Ordering::Relaxed,
        ..PUBLISH
    };
    assert!(
        caught(move || mp_flag(weak, PUBLISH)),
        "loom did not find the data read behind a relaxed flag"
    );
}

#[test]
fn a_relaxed_flag_load_is_caught() {
    let weak = Orders {
        load: Ordering::Relaxed,
        ..PUBLISH
    };
    assert!(
        caught(move || mp_flag(PUBLISH, weak)),
        "loom did not find the data read after a relaxed flag load"
    );
}

/// SB through boundaries: each thread stores its word, passes a boundary,
/// and reads the other's; not both may read 0.
fn sb(o: Orders) {
    let h = Heap::new();
    let t = {
        let h = h.clone();
        thread::spawn(move || {
            h.put_u64(X, 1, o);
            publish::boundary(o);
            h.get_u64(Y, o)
        })
    };
    h.put_u64(Y, 1, o);
    publish::boundary(o);
    let mine = h.get_u64(X, o);
    let theirs = t.join().unwrap();
    assert!(
        mine == 1 || theirs == 1,
        "both read the old value across boundaries"
    );
}

#[test]
fn boundaries_order_a_store_before_a_later_load() {
    loom::model(|| sb(PUBLISH));
}

#[test]
fn store_buffering_without_the_boundary_fence_is_caught() {
    let weak = Orders {
        boundary: false,
        ..PUBLISH
    };
    assert!(
        caught(move || sb(weak)),
        "loom did not find both loads reading the old value"
    );
}

/// MP through boundaries: the writer copies the data, passes a boundary
/// and signals with a relaxed store (the provider's message, plain memory);
/// the reader sees the signal, passes its boundary (an on-statement's
/// start) and reads the data.
fn mp_boundary(writer: Orders, reader: Orders) {
    let h = Heap::new();
    let signal = Arc::new(AtomicU64::new(0));
    let w = {
        let (h, signal) = (h.clone(), signal.clone());
        thread::spawn(move || {
            h.put_block(writer);
            h.put_u64(Y, 42, writer);
            publish::boundary(writer);
            signal.store(1, Ordering::Relaxed);
        })
    };
    if signal.load(Ordering::Relaxed) == 1 {
        publish::boundary(reader);
        assert_eq!(h.get_u64(Y, reader), 42, "signal seen, data word old");
        assert_eq!(h.get_block(reader), DATA, "signal seen, block old");
    }
    w.join().unwrap();
}

#[test]
fn a_store_before_a_boundary_is_seen_after_the_matching_one() {
    loom::model(|| mp_boundary(PUBLISH, PUBLISH));
}

#[test]
fn a_writer_without_its_boundary_is_caught() {
    let weak = Orders {
        boundary: false,
        ..PUBLISH
    };
    assert!(
        caught(move || mp_boundary(weak, PUBLISH)),
        "loom did not find the data read behind an unfenced signal"
    );
}

#[test]
fn a_reader_without_its_boundary_is_caught() {
    let weak = Orders {
        boundary: false,
        ..PUBLISH
    };
    assert!(
        caught(move || mp_boundary(PUBLISH, weak)),
        "loom did not find the data read before the reader's boundary"
    );
}
