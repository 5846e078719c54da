//! Registered memory of the comm-layer front end: stamped buffers in data
//! slots (two sets, by the parity of the iteration) and flag words.

use crate::litmus::value::Label;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// Bytes per data slot (the largest size plus room).
pub(super) const SLOT: usize = (1 << 20) + 4096;
/// Slots per set; there are two sets.
pub(super) const SET: usize = 12;
pub(super) const SLOTS: usize = 2 * SET;
/// Slot roles (every locale has all of them, at the same heap offsets).
pub(super) const X: usize = 0; // the tested word or buffer (x, y, d)
pub(super) const SRC: usize = 1; // PUT source (buf, the first value)
pub(super) const SRC2: usize = 2; // second PUT source
pub(super) const DST: usize = 3; // GET destination of the acting task
pub(super) const TMP: usize = 4; // GET destination of the after-the-fact reader
pub(super) const A: usize = 5; // TASK-END slots: A + child (1, 2)
pub(super) const CSRC: usize = 8; // children's sources: CSRC + child (1, 2)
pub(super) const CDST: usize = 10; // parent's GET destinations: CDST + child - 1
/// One iteration's slot numbers (two sets, by parity of the iteration).
#[derive(Clone, Copy)]
pub(super) struct Slots {
    pub(super) x: usize,
    pub(super) src: usize,
    pub(super) src2: usize,
    pub(super) dst: usize,
    pub(super) tmp: usize,
    pub(super) a: usize,
    pub(super) csrc: usize,
    pub(super) cdst: usize,
}

impl Slots {
    pub(super) fn of(it: u64) -> Slots {
        let p = (it % 2) as usize * SET;
        Slots {
            x: X + p,
            src: SRC + p,
            src2: SRC2 + p,
            dst: DST + p,
            tmp: TMP + p,
            a: A + p,
            csrc: CSRC + p,
            cdst: CDST + p,
        }
    }
}

/// Flag words (atomics only), 64 bytes apart.
pub(super) const F_MP: u64 = 0;
pub(super) const F_X: u64 = 1;
pub(super) const F_Y: u64 = 2;
pub(super) const F_C: u64 = 3;

pub(super) fn word(addr: u64) -> &'static AtomicU64 {
    // SAFETY: every address passed here is an 8-aligned word of the
    // registered heap (slots and flags are 64-aligned allocations), which
    // lives until the process exits; remote writers only ever store whole
    // words or bytes, which atomics tolerate.
    unsafe { AtomicU64::from_ptr(addr as *mut u64) }
}

pub(super) fn byte(addr: u64) -> &'static AtomicU8 {
    // SAFETY: a byte of the registered heap, which lives until the process
    // exits.
    unsafe { AtomicU8::from_ptr(addr as *mut u8) }
}

/// Word `k` of the buffer holding value `v` in iteration `it` of instance
/// `inst`: every word says which write it came from.
pub(super) fn pattern(inst: u64, it: u64, v: u64, k: u64) -> u64 {
    inst << 48 | (it & 0xff_ffff) << 24 | (v & 0xf) << 20 | (k & 0xf_ffff)
}

/// Stamp of a flag word: value `v` of iteration `it` of instance `inst`,
/// increasing over the run.
pub(super) fn stamp(inst: u64, it: u64, v: u64) -> u64 {
    inst << 40 | it << 8 | v
}

/// Fills `len` bytes at `addr` (this locale's heap) with the pattern.
pub(super) fn fill(addr: u64, len: usize, inst: u64, it: u64, v: u64) {
    let words = len / 8;
    for k in 0..words {
        word(addr + 8 * k as u64).store(pattern(inst, it, v, k as u64), Ordering::Relaxed);
    }
    let tail = pattern(inst, it, v, words as u64).to_le_bytes();
    for (j, b) in tail.iter().enumerate().take(len % 8) {
        byte(addr + 8 * words as u64 + j as u64).store(*b, Ordering::Relaxed);
    }
    std::sync::atomic::fence(Ordering::Release);
}

/// Classifies `len` bytes at `addr` (this locale's heap).
pub(super) fn classify(addr: u64, len: usize, inst: u64, it: u64) -> Label {
    std::sync::atomic::fence(Ordering::Acquire);
    let words = len / 8;
    let first = if words > 0 {
        word(addr).load(Ordering::Relaxed)
    } else {
        let mut b = [0u8; 8];
        for (j, x) in b.iter_mut().enumerate().take(len) {
            *x = byte(addr + j as u64).load(Ordering::Relaxed);
        }
        u64::from_le_bytes(b)
    };
    let (i2, it2, v) = (first >> 48, (first >> 24) & 0xff_ffff, (first >> 20) & 0xf);
    let whole = (0..words).all(|k| {
        word(addr + 8 * k as u64).load(Ordering::Relaxed) == pattern(i2, it2, v, k as u64)
    }) && {
        let tail = pattern(i2, it2, v, words as u64).to_le_bytes();
        (0..len % 8)
            .all(|j| byte(addr + 8 * words as u64 + j as u64).load(Ordering::Relaxed) == tail[j])
    };
    match (whole, i2 == inst && it2 == it & 0xff_ffff) {
        (true, true) => Label::V(v),
        (true, false) => Label::Old,
        (false, _) => Label::Torn,
    }
}

/// A flag word's value as the oracle sees it.
pub(super) fn flag_label(value: u64, inst: u64, it: u64) -> String {
    if value == stamp(inst, it, 1) {
        "1".into()
    } else if value < stamp(inst, it, 1) {
        "0".into()
    } else {
        format!("other({value:#x})")
    }
}

/// A heap buffer as a slice (PUT source).
pub(super) fn slice(addr: u64, len: usize) -> &'static [u8] {
    // SAFETY: `addr..addr+len` is inside one slot of the registered heap,
    // which lives until the process exits; while a PUT reads it only this
    // task writes the slot, and only after the PUT's source is released.
    unsafe { std::slice::from_raw_parts(addr as *const u8, len) }
}

/// A heap buffer as a mutable slice (GET destination).
pub(super) fn slice_mut(addr: u64, len: usize) -> &'static mut [u8] {
    // SAFETY: `addr..addr+len` is inside one slot of the registered heap
    // that only the calling task uses while the GET runs (each role has its
    // own destination slot) and nobody holds another reference to it.
    unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) }
}
