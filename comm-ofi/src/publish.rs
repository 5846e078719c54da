//! The mapped path's publication: how a store into a mapped heap (a
//! co-located locale's, reached by `mapped.rs`'s translation, or this
//! locale's own) is made, how it is read, and the fence a boundary adds.
//!
//! * A copy of an aligned 1, 2, 4 or 8-byte word is one atomic store with
//!   `Release` ordering, and a word read one `Acquire` load: flag words of
//!   barriers and `wait_until` are read by other processes while they are
//!   written (no data race in Rust's terms), and a flag stored after data
//!   publishes the data (message passing by a flag word). Anything else is
//!   a `memmove` (the API makes no atomicity promise for it); it is ordered
//!   by the word stores and boundaries around it.
//! * A boundary on the path is a `SeqCst` fence: a store before it is
//!   ordered before every load and store after it, so two tasks' store,
//!   boundary, load of each other's word cannot both read the old value
//!   (store buffering), and a store before a boundary is visible to whoever
//!   synchronises with a later store (the provider's message, a barrier's
//!   word) and reads after its own boundary or with `Acquire`.
//!
//! Generic over the memory ([`SharedMem`]: this process's address space in
//! production, loom's atomics and cells in the models) and over the
//! orderings ([`Orders`]: production passes [`PUBLISH`]), so that the same
//! code runs in production and in the loom models of
//! `tests/loom_publish.rs`, whose negative controls weaken one ordering or
//! skip the fence and are caught. Why the path holds on x86-TSO is argued
//! in `docs/mcm.md` ("The mapped path").

use crate::sync::{fence, Ordering};

/// The orderings of the path's publication. Production uses [`PUBLISH`];
/// the loom models' negative controls weaken one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Orders {
    /// A word copy's store (`Release`).
    pub store: Ordering,
    /// A word read's load (`Acquire`).
    pub load: Ordering,
    /// Whether a boundary fences (`SeqCst`).
    pub boundary: bool,
}

/// The orderings production uses.
pub const PUBLISH: Orders = Orders {
    store: Ordering::Release,
    load: Ordering::Acquire,
    boundary: true,
};

/// Memory that other threads and processes read and write at the same time:
/// word accesses are atomic, other copies plain.
///
/// # Safety
/// Every method requires `at..at + len` (the slice's length) to be valid
/// for the access, and for the word accesses `at` aligned to `len`, which
/// is 1, 2, 4 or 8.
pub trait SharedMem {
    /// Stores `word` as one atomic word at `at`.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn store_word(&self, at: usize, word: &[u8], o: Ordering);
    /// Loads the atomic word at `at` into `word`.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn load_word(&self, at: usize, word: &mut [u8], o: Ordering);
    /// Copies `src` to `at`, byte by byte as `memmove` does.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn copy_in(&self, at: usize, src: &[u8]);
    /// Copies the bytes at `at` into `dst`.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn copy_out(&self, at: usize, dst: &mut [u8]);
}

/// Whether `len` bytes at `at` are one atomic word: 1, 2, 4 or 8 bytes,
/// aligned to their size.
#[inline]
pub fn is_word(at: usize, len: usize) -> bool {
    matches!(len, 1 | 2 | 4 | 8) && at % len == 0
}

/// Copies `src` to `at` in `m`: a word as one atomic store with
/// `o.store`, anything else plain.
///
/// # Safety
/// `at..at + src.len()` must be valid for writes in `m`.
#[inline]
pub unsafe fn store<M: SharedMem>(m: &M, at: usize, src: &[u8], o: Orders) {
    // SAFETY: the caller's contract; a word is aligned (`is_word`).
    unsafe {
        if is_word(at, src.len()) {
            m.store_word(at, src, o.store)
        } else {
            m.copy_in(at, src)
        }
    }
}

/// Copies the `dst.len()` bytes at `at` in `m` into `dst`: the reading
/// side of [`store`] (a word is one atomic load with `o.load`).
///
/// # Safety
/// `at..at + dst.len()` must be valid for reads in `m`.
#[inline]
pub unsafe fn load<M: SharedMem>(m: &M, at: usize, dst: &mut [u8], o: Orders) {
    // SAFETY: the caller's contract; a word is aligned (`is_word`).
    unsafe {
        if is_word(at, dst.len()) {
            m.load_word(at, dst, o.load)
        } else {
            m.copy_out(at, dst)
        }
    }
}

/// The path's part of an MCM boundary: the calling thread's stores to
/// mapped heaps are ordered before everything after it (on x86 an
/// `mfence`, which drains the store buffer).
#[inline]
pub fn boundary(o: Orders) {
    if o.boundary {
        fence(Ordering::SeqCst);
    }
}

/// This process's address space: `at` is an address.
pub struct Process;

impl SharedMem for Process {
    #[inline]
    unsafe fn store_word(&self, at: usize, word: &[u8], o: Ordering) {
        use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8};
        // SAFETY: at is valid for word.len() bytes and aligned to it (the
        // caller's contract); the word is only ever accessed by whole-word
        // copies or atomics.
        unsafe {
            match word.len() {
                8 => AtomicU64::from_ptr(at as *mut u64)
                    .store(u64::from_ne_bytes(word.try_into().expect("8")), o),
                4 => AtomicU32::from_ptr(at as *mut u32)
                    .store(u32::from_ne_bytes(word.try_into().expect("4")), o),
                2 => AtomicU16::from_ptr(at as *mut u16)
                    .store(u16::from_ne_bytes(word.try_into().expect("2")), o),
                _ => AtomicU8::from_ptr(at as *mut u8).store(word[0], o),
            }
        }
    }

    #[inline]
    unsafe fn load_word(&self, at: usize, word: &mut [u8], o: Ordering) {
        use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8};
        // SAFETY: as in store_word.
        unsafe {
            match word.len() {
                8 => {
                    word.copy_from_slice(&AtomicU64::from_ptr(at as *mut u64).load(o).to_ne_bytes())
                }
                4 => {
                    word.copy_from_slice(&AtomicU32::from_ptr(at as *mut u32).load(o).to_ne_bytes())
                }
                2 => {
                    word.copy_from_slice(&AtomicU16::from_ptr(at as *mut u16).load(o).to_ne_bytes())
                }
                _ => word[0] = AtomicU8::from_ptr(at as *mut u8).load(o),
            }
        }
    }

    #[inline]
    unsafe fn copy_in(&self, at: usize, src: &[u8]) {
        // SAFETY: at is valid for src.len() bytes (the caller's contract).
        unsafe { std::ptr::copy(src.as_ptr(), at as *mut u8, src.len()) }
    }

    #[inline]
    unsafe fn copy_out(&self, at: usize, dst: &mut [u8]) {
        // SAFETY: as in copy_in.
        unsafe { std::ptr::copy(at as *const u8, dst.as_mut_ptr(), dst.len()) }
    }
}

/// Copies `src` to `dst`, memory that other threads or processes may read
/// at the same time with atomic loads (flag words of barriers and
/// `wait_until`): [`store`] in this process with [`PUBLISH`]'s orderings
/// (an aligned word is one `Release` store, a plain `mov` on x86).
///
/// # Safety
/// `dst..dst + src.len()` must be valid for writes.
#[inline]
pub(crate) unsafe fn store_shared(dst: *mut u8, src: &[u8]) {
    // SAFETY: the caller's contract.
    unsafe { store(&Process, dst as usize, src, PUBLISH) }
}

/// Copies `src..src + dst.len()` into `dst`: the reading side of
/// [`store_shared`] (an aligned word is one `Acquire` load).
///
/// # Safety
/// `src..src + dst.len()` must be valid for reads.
#[inline]
pub(crate) unsafe fn load_shared(src: *const u8, dst: &mut [u8]) {
    // SAFETY: the caller's contract.
    unsafe { load(&Process, src as usize, dst, PUBLISH) }
}

#[cfg(test)]
mod tests {
    use super::{is_word, load_shared, store_shared};

    #[test]
    fn word_sized_and_odd_copies_round_trip() {
        let mut buf = [0u64; 4];
        let base = buf.as_mut_ptr() as *mut u8;
        for (off, len) in [(0, 8), (8, 4), (12, 2), (14, 1), (17, 8), (3, 13), (0, 0)] {
            let src: Vec<u8> = (0..len as u8).map(|k| k.wrapping_mul(7) + 1).collect();
            let mut back = vec![0u8; len];
            // SAFETY: off + len <= 32, inside buf.
            unsafe {
                store_shared(base.add(off), &src);
                load_shared(base.add(off), &mut back);
            }
            assert_eq!(back, src, "offset {off}, {len} bytes");
        }
    }

    #[test]
    fn only_aligned_power_of_two_words_up_to_8_are_words() {
        assert!(is_word(0, 8) && is_word(16, 4) && is_word(6, 2) && is_word(3, 1));
        assert!(!is_word(4, 8) && !is_word(2, 4) && !is_word(1, 2));
        assert!(!is_word(0, 3) && !is_word(0, 16) && !is_word(0, 0));
    }
}
