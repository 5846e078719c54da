//! Teams: `SHMEM_TEAM_WORLD`, `SHMEM_TEAM_SHARED`, splits, translation.
//!
//! A `shmem_team_t` is a small handle (an index into this PE's table of
//! `runtime_shim::Team`s; 0 is `SHMEM_TEAM_INVALID`, 1 the world, 2 the
//! shared team); the handles are this PE's own, as the specification
//! allows. Splits are `Team::split_color` over the parent (collective over
//! it, as `shmem_team_split_*` are). The shared team is the PEs this one
//! reaches by load / store (`shmem_ptr`): the co-located PEs when the
//! mapped path is on, else this PE alone.

use crate::{die, rt, OrDie};
use parking_lot::Mutex;
use runtime_shim::{GlobalAddr, Team};
use std::ffi::{c_int, c_long, c_void};
use std::sync::Arc;

/// `SHMEM_TEAM_WORLD`'s handle.
pub const TEAM_WORLD: usize = 1;
/// `SHMEM_TEAM_SHARED`'s handle.
pub const TEAM_SHARED: usize = 2;

/// One team of this PE.
pub(crate) struct ShTeam {
    pub team: Team,
    pub num_contexts: c_int,
}

/// `shmem_team_config_t` of OpenSHMEM 1.5.
#[repr(C)]
pub struct TeamConfig {
    pub num_contexts: c_int,
}

/// Handle -> team (index 0 never used).
static TEAMS: Mutex<Vec<Option<Arc<ShTeam>>>> = Mutex::new(Vec::new());

/// Makes the world and shared teams (collective; from `shmem_init`).
pub(crate) fn init_teams(call: &str) {
    let rt = rt(call);
    let world = rt.world().clone();
    let comm = rt.comm();
    let keys = &comm.hosts().keys;
    let me = rt.here();
    // The shared team: the co-located PEs whose heaps this one maps (none
    // but itself when the mapped path is off).
    let my_base = comm.heap().base_addr();
    let maps = |l: usize| {
        l == me
            || comm
                .symmetric(GlobalAddr::new(me, my_base), l)
                .is_ok_and(|g| comm.mapped_ptr(g, 1).is_some())
    };
    let color = (0..rt.num_locales())
        .find(|&l| keys[l] == keys[me] && maps(l))
        .unwrap_or(me);
    let shared = world
        .split_color(Some(color as u32), me as i64)
        .or_die(call)
        .expect("every PE is in its shared team");
    let mut t = TEAMS.lock();
    t.clear();
    t.push(None);
    t.push(Some(Arc::new(ShTeam {
        team: world,
        num_contexts: 0,
    })));
    t.push(Some(Arc::new(ShTeam {
        team: shared,
        num_contexts: 0,
    })));
}

/// The team of handle `h`; an invalid or destroyed handle ends the job.
pub(crate) fn team_of(call: &str, h: usize) -> Arc<ShTeam> {
    match TEAMS.lock().get(h) {
        Some(Some(t)) => t.clone(),
        _ => die(
            call,
            format!("{h:#x} is not a valid team (SHMEM_TEAM_INVALID or destroyed)"),
        ),
    }
}

/// The team of handle `h`, or `None` for `SHMEM_TEAM_INVALID` / unknown.
fn try_team(h: *mut c_void) -> Option<Arc<ShTeam>> {
    TEAMS.lock().get(h as usize).cloned().flatten()
}

fn add_team(t: ShTeam) -> usize {
    let mut v = TEAMS.lock();
    v.push(Some(Arc::new(t)));
    v.len() - 1
}

/// `shmem_team_my_pe`: this PE's number in `team`, -1 if invalid.
#[no_mangle]
pub extern "C" fn shmem_team_my_pe(team: *mut c_void) -> c_int {
    try_team(team).map_or(-1, |t| t.team.rank() as c_int)
}

/// `shmem_team_n_pes`: the number of PEs of `team`, -1 if invalid.
#[no_mangle]
pub extern "C" fn shmem_team_n_pes(team: *mut c_void) -> c_int {
    try_team(team).map_or(-1, |t| t.team.size() as c_int)
}

/// `shmem_team_get_config`.
///
/// # Safety
/// `config` points at a writable `shmem_team_config_t`.
#[no_mangle]
pub unsafe extern "C" fn shmem_team_get_config(
    team: *mut c_void,
    config_mask: c_long,
    config: *mut TeamConfig,
) -> c_int {
    let _ = config_mask;
    let Some(t) = try_team(team) else { return -1 };
    if config.is_null() {
        return -1;
    }
    // SAFETY: writable (C API contract, checked non-NULL).
    unsafe { (*config).num_contexts = t.num_contexts };
    0
}

/// `shmem_team_translate_pe`: `src_pe` of `src_team` in `dest_team`, or -1.
#[no_mangle]
pub extern "C" fn shmem_team_translate_pe(
    src_team: *mut c_void,
    src_pe: c_int,
    dest_team: *mut c_void,
) -> c_int {
    let (Some(s), Some(d)) = (try_team(src_team), try_team(dest_team)) else {
        return -1;
    };
    if src_pe < 0 {
        return -1;
    }
    let Ok(l) = s.team.locale_of(src_pe as usize) else {
        return -1;
    };
    d.team
        .locales()
        .iter()
        .position(|x| *x == l)
        .map_or(-1, |p| p as c_int)
}

fn config_contexts(config: *const TeamConfig, mask: c_long) -> c_int {
    // SHMEM_TEAM_NUM_CONTEXTS = 1 << 0 in the header.
    if config.is_null() || mask & 1 == 0 {
        0
    } else {
        // SAFETY: readable when given (C API contract).
        unsafe { (*config).num_contexts }
    }
}

/// Writes a new team's handle (or INVALID) where the caller asked.
fn give(out: *mut *mut c_void, t: Option<Team>, ctxs: c_int) {
    let h = t.map_or(0, |team| {
        add_team(ShTeam {
            team,
            num_contexts: ctxs,
        })
    });
    if !out.is_null() {
        // SAFETY: writable (C API contract, checked non-NULL).
        unsafe { out.write(h as *mut c_void) };
    }
}

/// `shmem_team_split_strided` (collective over `parent`).
///
/// # Safety
/// `new_team` points at a writable `shmem_team_t`; `config` is NULL or
/// readable.
#[no_mangle]
pub unsafe extern "C" fn shmem_team_split_strided(
    parent: *mut c_void,
    start: c_int,
    stride: c_int,
    size: c_int,
    config: *const TeamConfig,
    config_mask: c_long,
    new_team: *mut *mut c_void,
) -> c_int {
    let call = "shmem_team_split_strided";
    let _ = rt(call);
    let Some(p) = try_team(parent) else {
        give(new_team, None, 0);
        return -1;
    };
    let n = p.team.size() as i64;
    let (start, stride, size) = (start as i64, stride as i64, size as i64);
    let last = start + stride * (size - 1).max(0);
    if size <= 0 || start < 0 || start >= n || last < 0 || last >= n || (stride == 0 && size > 1) {
        give(new_team, None, 0);
        return -1;
    }
    let me = p.team.rank() as i64;
    let index = if stride == 0 {
        (me == start).then_some(0)
    } else {
        let d = me - start;
        (d % stride == 0 && d / stride >= 0 && d / stride < size).then_some(d / stride)
    };
    let t = p
        .team
        .split_color(index.map(|_| 0), index.unwrap_or(0))
        .or_die(call);
    give(new_team, t, config_contexts(config, config_mask));
    0
}

/// `shmem_team_split_2d` (collective over `parent`): rows of `xrange` PEs
/// (the x-axis teams) and the columns across them (the y-axis teams).
///
/// # Safety
/// The team pointers are writable; configs are NULL or readable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shmem_team_split_2d(
    parent: *mut c_void,
    xrange: c_int,
    xaxis_config: *const TeamConfig,
    xaxis_mask: c_long,
    xaxis_team: *mut *mut c_void,
    yaxis_config: *const TeamConfig,
    yaxis_mask: c_long,
    yaxis_team: *mut *mut c_void,
) -> c_int {
    let call = "shmem_team_split_2d";
    let _ = rt(call);
    let Some(p) = try_team(parent) else {
        give(xaxis_team, None, 0);
        give(yaxis_team, None, 0);
        return -1;
    };
    if xrange <= 0 {
        give(xaxis_team, None, 0);
        give(yaxis_team, None, 0);
        return -1;
    }
    let x = (xrange as usize).min(p.team.size());
    let me = p.team.rank();
    let xt = p
        .team
        .split_color(Some((me / x) as u32), (me % x) as i64)
        .or_die(call);
    give(xaxis_team, xt, config_contexts(xaxis_config, xaxis_mask));
    let yt = p
        .team
        .split_color(Some((me % x) as u32), (me / x) as i64)
        .or_die(call);
    give(yaxis_team, yt, config_contexts(yaxis_config, yaxis_mask));
    0
}

/// `shmem_team_destroy`.
#[no_mangle]
pub extern "C" fn shmem_team_destroy(team: *mut c_void) {
    let h = team as usize;
    if h == TEAM_WORLD || h == TEAM_SHARED {
        die(
            "shmem_team_destroy",
            "SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED cannot be destroyed",
        );
    }
    if let Some(slot) = TEAMS.lock().get_mut(h) {
        *slot = None;
    }
}

/// `shmem_team_ptr`: `shmem_ptr` to `dest` on `pe` of `team`.
///
/// # Safety
/// `dest` is a symmetric address.
#[no_mangle]
pub unsafe extern "C" fn shmem_team_ptr(
    team: *mut c_void,
    dest: *const c_void,
    pe: c_int,
) -> *mut c_void {
    let Some(t) = try_team(team) else {
        return std::ptr::null_mut();
    };
    match (pe >= 0).then(|| t.team.locale_of(pe as usize)) {
        // SAFETY: same contract.
        Some(Ok(l)) => unsafe { crate::mem::shmem_ptr(dest, l as c_int) },
        _ => std::ptr::null_mut(),
    }
}
