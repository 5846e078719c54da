//! Active sets (`PE_start`, `logPE_stride`, `PE_size`) of the deprecated
//! collectives as `runtime_shim::Team`s.
//!
//! Exists because only the set's members call an active-set collective, so
//! the set cannot be split from the world team (a split is collective over
//! every PE). The members agree on the team among themselves through a
//! directory in PE 0's memory, allocated symmetrically by `shmem_init`:
//!
//! * each set has an entry, found by its key (start, log stride, size):
//!   a member claims a free entry or finds the set's own by compare-and-swap
//!   on the entry's key word (linear probing from the key's hash), so every
//!   member lands on the same entry without talking to the others;
//! * each member allocates its team area locally (`Team::alloc_area`),
//!   writes its address into the entry's word for its rank, and waits until
//!   every member's is there; then `Team::from_parts` makes the team.
//!
//! A PE keeps the team of each set it was in (the `TEAMS` cache), so a set
//! costs this agreement once per PE and then is an ordinary team. The set of
//! every PE is the world team; a set of one PE is a team of one, with no
//! agreement. The same allocation holds a bitmap for `deprecated::note`.

use crate::teams::{team_of, TEAM_WORLD};
use crate::{die, rt, OrDie};
use parking_lot::Mutex;
use runtime_shim::{Dist, GlobalPtr, Runtime, Team};
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::OnceLock;
use std::time::Duration;

/// Entries of the directory: the distinct active sets (of more than one PE
/// and fewer than all) a job may use.
pub(crate) const ENTRIES: usize = 256;
/// Words of the once-per-job bitmap of `deprecated::note`.
pub(crate) const NOTE_WORDS: usize = 64;

/// The directory (`ENTRIES` entries of `1 + n_pes` words: the key, then
/// each member's area address by rank), followed by the note bitmap.
static DIRECTORY: OnceLock<Dist<u8>> = OnceLock::new();

/// An active set: (`PE_start`, `logPE_stride`, `PE_size`).
type SetKey = (c_int, c_int, c_int);

/// This PE's teams of the active sets it was in.
static TEAMS: Mutex<Option<HashMap<SetKey, Team>>> = Mutex::new(None);

/// Allocates the directory (collective: called by `shmem_init`).
pub(crate) fn init(call: &str, rt: &Runtime) {
    let words = ENTRIES * (1 + rt.num_locales()) + NOTE_WORDS;
    let d = rt.alloc_sym_bytes(words * 8, 64).or_die(call);
    let _ = DIRECTORY.set(d);
}

/// Word `i` of the directory on PE 0.
fn dir_word(call: &str, i: usize) -> GlobalPtr<u64> {
    let Some(d) = DIRECTORY.get() else {
        die(call, "called before shmem_init")
    };
    d.at(0).or_die(call).cast::<u64>().add(i)
}

/// The `k`-th word of the note bitmap on PE 0 (`deprecated::note`).
pub(crate) fn note_word(call: &str, k: usize) -> GlobalPtr<u64> {
    let n = rt(call).num_locales();
    dir_word(call, ENTRIES * (1 + n) + k % NOTE_WORDS)
}

/// The team of an active set: the caller must be a member.
pub(crate) fn team(call: &str, start: c_int, log_stride: c_int, size: c_int) -> Team {
    let rt = rt(call);
    let n = rt.num_locales() as i64;
    let me = rt.here() as i64;
    let set = || format!("active set PE_start={start}, logPE_stride={log_stride}, PE_size={size}");
    if !(0..31).contains(&log_stride) || start < 0 || size < 1 {
        die(call, format!("{}: not a set of PEs", set()));
    }
    let stride = 1i64 << log_stride;
    let last = start as i64 + stride * (size as i64 - 1);
    if last >= n {
        die(
            call,
            format!("{}: PE {last} is beyond the job's {n} PEs", set()),
        );
    }
    let off = me - start as i64;
    if off < 0 || off % stride != 0 || off / stride >= size as i64 {
        die(call, format!("{}: PE {me} is not in the set", set()));
    }
    if start == 0 && size as i64 == n && (stride == 1 || size == 1) {
        return team_of(call, TEAM_WORLD).team.clone();
    }
    let key = (start, log_stride, size);
    if let Some(t) = TEAMS.lock().get_or_insert_with(HashMap::new).get(&key) {
        return t.clone();
    }
    let members: Vec<usize> = (0..size as usize)
        .map(|r| (start as i64 + stride * r as i64) as usize)
        .collect();
    let rank = (off / stride) as usize;
    let area = Team::alloc_area(rt, members.len()).or_die(call);
    let areas = if members.len() == 1 {
        vec![area]
    } else {
        agree(call, rt, key, rank, area, &set)
    };
    let t = Team::from_parts(
        rt,
        members,
        areas,
        format!("active-set({start},{log_stride},{size})"),
    )
    .or_die(call);
    TEAMS
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(key, t.clone());
    t
}

/// The directory agreement: finds (or claims) the set's entry on PE 0,
/// publishes this member's area at its rank, and returns every member's.
fn agree(
    call: &str,
    rt: &Runtime,
    (start, log_stride, size): SetKey,
    rank: usize,
    area: u64,
    set: &dyn Fn() -> String,
) -> Vec<u64> {
    let n = rt.num_locales();
    let key = 1u64 << 63 | (start as u64) << 40 | (log_stride as u64) << 32 | size as u64;
    let width = 1 + n;
    let h = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize;
    let mut entry = None;
    for j in 0..ENTRIES {
        let e = (h + j) % ENTRIES;
        let w = rt.atomic(dir_word(call, e * width));
        match w.compare_exchange(0, key).or_die(call) {
            Ok(_) => {
                entry = Some(e);
                break;
            }
            Err(old) if old == key => {
                entry = Some(e);
                break;
            }
            Err(_) => {}
        }
    }
    let Some(e) = entry else {
        die(
            call,
            format!(
                "{}: the job already uses {ENTRIES} other active sets, the most this library \
                 keeps (use teams: shmem_team_split_strided)",
                set()
            ),
        )
    };
    let base = e * width + 1;
    rt.atomic(dir_word(call, base + rank))
        .write(area)
        .or_die(call);
    let mut areas = vec![0u64; size as usize];
    let mut nap = 1u64;
    loop {
        for (r, a) in areas.iter_mut().enumerate() {
            if *a == 0 {
                *a = rt.atomic(dir_word(call, base + r)).read().or_die(call);
            }
        }
        if areas.iter().all(|a| *a != 0) {
            return areas;
        }
        // Members arrive at their first call on the set; nap (up to 1 ms)
        // rather than hammer PE 0 with reads meanwhile.
        std::thread::sleep(Duration::from_micros(nap));
        nap = (nap * 2).min(1000);
    }
}
