//! The Rust API front end's state on one locale and the words of a
//! program: where each lives (the heap area or the static data of its home
//! locale), how many bytes it has, and this locale's result area.

use crate::e;
use crate::litmus::generated::{generate, Mem, Program, Size};
use runtime_shim::{Dist, FnId, GlobalAddr, GlobalPtr};
use std::sync::atomic::AtomicU64;
use std::sync::OnceLock;
use std::time::Duration;

pub(super) type R<T = ()> = Result<T, String>;

/// Words a program may have, and threads whose registers a locale reports.
pub(super) const MAX_WORDS: usize = 8;
pub(super) const MAX_THREADS: usize = 8;
pub(super) const MAX_REGS: usize = 8;
/// How long an await may spin before the iteration is declared stuck.
pub(super) const STUCK: Duration = Duration::from_secs(30);
/// Bytes of static data for words in `Mem::Static` (.bss): both sets of
/// word slots.
pub(super) const STATIC_BYTES: usize = 4 << 20;
/// Word slot sets: iteration `it` uses set `it % SLOT_SETS`, so that the
/// owners can read one iteration's final values and reset its set for the
/// iteration after next while the others already run the next one (one
/// launcher barrier per iteration, `super::run`).
pub(super) const SLOT_SETS: usize = 2;
/// The words of `Mem::Static`, at the same offsets as the heap area's.
pub(super) static STATIC_AREA: [AtomicU64; STATIC_BYTES / 8] =
    [const { AtomicU64::new(0) }; STATIC_BYTES / 8];

pub(super) struct Env {
    pub(super) area: Dist<u8>,
    /// `STATIC_AREA` of every locale.
    pub(super) statics: Vec<GlobalPtr<u8>>,
    /// Bytes per word slot.
    pub(super) slot: usize,
    /// The provider's inject size + 1.
    pub(super) inject1: usize,
    /// Bytes of a `Size::OverMaxMsg` word.
    pub(super) over_max: usize,
    pub(super) body: FnId,
    pub(super) max_delay: u64,
    pub(super) seed: u64,
}

pub(super) static PROGRAMS: OnceLock<Vec<Program>> = OnceLock::new();
pub(super) static ENV: OnceLock<Env> = OnceLock::new();

pub(super) fn programs() -> &'static [Program] {
    PROGRAMS.get_or_init(generate)
}

pub(super) fn env() -> &'static Env {
    ENV.get().expect("set before any program runs")
}

pub(super) fn size_of(p: &Program) -> usize {
    match p.size {
        Size::Eight => 8,
        Size::InjectPlusOne => env().inject1,
        Size::OverMaxMsg => env().over_max,
    }
}

/// Word `w` of program `p` in iteration `it` (in the iteration's slot set).
pub(super) fn word_ptr(p: &Program, w: u8, it: u64) -> R<GlobalPtr<u8>> {
    let word = &p.words[w as usize];
    let home = usize::from(word.home);
    let base = match word.mem {
        Mem::Heap | Mem::Lock => env().area.at(home).map_err(e("word address"))?,
        Mem::Static => env().statics[home],
    };
    let set = (it % SLOT_SETS as u64) as usize;
    Ok(base.add((set * MAX_WORDS + w as usize) * env().slot))
}

/// The bytes of word `w` (its size, or 8 for atomic, flag and lock words).
pub(super) fn word_len(p: &Program, w: u8) -> usize {
    if p.words[w as usize].atomic || p.words[w as usize].mem == Mem::Lock {
        8
    } else {
        size_of(p)
    }
}

pub(super) fn atomic_ptr(p: &Program, w: u8, it: u64) -> R<GlobalPtr<u64>> {
    let g = word_ptr(p, w, it)?;
    Ok(GlobalPtr::<u64>::from_addr(GlobalAddr::new(
        g.locale(),
        g.addr(),
    )))
}

/// The result area of this locale: per thread id, MAX_REGS register words
/// and a done word (for bodies of non-blocking on-statements).
pub(super) fn result_word(t: u8, k: usize) -> &'static AtomicU64 {
    let base = env().area.local().addr() as usize + SLOT_SETS * MAX_WORDS * env().slot;
    let addr = base + (t as usize * (MAX_REGS + 1) + k) * 8;
    // SAFETY: inside this locale's part of the area (allocated with room
    // for MAX_THREADS x (MAX_REGS + 1) words after both sets of word slots), 8-aligned
    // (slot is a multiple of 64); only accessed atomically by this process.
    unsafe { AtomicU64::from_ptr(addr as *mut u64) }
}

/// An on-statement's arguments: program, thread, iteration in 9 bytes, so
/// that with the AM header (48 bytes) the request fits every provider's
/// inject size here (tcp;ofi_rxm's 64 the least): on tcp;ofi_rxm a blocking
/// one goes out injected from the receive endpoint
/// (`TxContext::send_small_from`). In the `inject+1` programs the arguments
/// are padded to one byte past the inject size (where that is still an
/// inline request: tcp, sockets), so the request goes out from the caller's
/// own endpoint with a completion. Both paths get their cells.
pub(super) fn encode_args(p: usize, t: u8, it: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(9);
    v.extend_from_slice(&u32::try_from(p).expect("program index").to_le_bytes());
    v.push(t);
    v.extend_from_slice(&u32::try_from(it).expect("iteration").to_le_bytes());
    if programs()[p].size == Size::InjectPlusOne {
        let past = env().inject1.saturating_sub(amhandler::wire::HEADER);
        if past <= amhandler::wire::INLINE_MAX {
            v.resize(v.len().max(past), 0);
        }
    }
    v
}

pub(super) fn decode_args(a: &[u8]) -> (usize, u8, u64) {
    let w = |k: usize| u32::from_le_bytes(a[k..k + 4].try_into().expect("4 bytes"));
    (w(0) as usize, a[4], u64::from(w(5)))
}
