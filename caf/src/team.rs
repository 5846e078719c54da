//! Teams: FORM TEAM, CHANGE TEAM, END TEAM, SYNC TEAM and TEAM_NUMBER
//! (`_gfortran_caf_form_team` and the rest).
//!
//! A team is a [`TeamRec`]: the runtime team FORM TEAM split from the
//! current one (`Team::split_color`, the team number as colour), its
//! number and its parent. gfortran keeps a `team_type` variable as one
//! pointer; FORM TEAM stores there a leaked `Arc<TeamRec>` that lives for
//! the job (a program forms few teams; a team variable may be copied and
//! used after the construct that formed it, so nothing can tell when it
//! is dead).
//!
//! CHANGE TEAM pushes the team on the state's stack (`this_image`,
//! `num_images`, image indices of coindexed references and the collectives
//! then answer relative to it) after ending the segment, and synchronises
//! the new team. END TEAM deallocates the coarrays allocated in the team
//! that are still allocated (and nulls their descriptors' data, so that
//! ALLOCATED() says so: gfortran does not), synchronises the team and pops
//! it. SYNC TEAM
//! synchronises the members of any team this image belongs to (the
//! current one, an ancestor or a child formed but not entered) through the
//! same pairwise counters as SYNC ALL ([`crate::sync::sync_with`]).
//!
//! What gfortran 12 passes (`-fdump-tree-original`): `form_team(number,
//! &team, 0)` (NEW_INDEX= is not accepted by its parser, 0 means absent),
//! `change_team(&team, 0)`, `sync_team(&team, 0)`, `end_team(NULL)`,
//! `team_number(team)` (the variable's value, not its address; NULL for
//! no argument). It accepts no STAT= on these statements and has no
//! GET_TEAM.

use crate::stat::StatOut;
use crate::state::{error_termination, Caf, TeamRec};
use crate::sync::{sync_with, SyncLoss};
use parking_lot::Mutex;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// The team a `team_type` variable holds.
///
/// # Safety
/// `t` is null or a pointer `form_team` stored.
unsafe fn team_of(t: *const c_void, statement: &str) -> Arc<TeamRec> {
    if t.is_null() {
        error_termination(
            &format!("{statement}: the team variable was not defined by FORM TEAM"),
            1,
        );
    }
    let p = t as *const TeamRec;
    // SAFETY: p came from Arc::into_raw in form_team and is never
    // released (one strong count stays forever), so taking another count
    // and an Arc of it is sound.
    unsafe {
        Arc::increment_strong_count(p);
        Arc::from_raw(p)
    }
}

/// The team of gfortran's `team_type` variable at `team` (a CHANGE TEAM or
/// SYNC TEAM argument).
///
/// # Safety
/// `team` is null or points to a `team_type` variable (null or defined by
/// FORM TEAM).
unsafe fn team_var(team: *mut *mut c_void, statement: &str) -> Arc<TeamRec> {
    if team.is_null() {
        error_termination(&format!("{statement}: no team variable"), 1);
    }
    // SAFETY: caller; not null (checked).
    unsafe { team_of(*team, statement) }
}

/// The members of `team` other than this image, as world locales.
fn partners(c: &Caf, team: &TeamRec) -> Vec<usize> {
    team.team
        .locales()
        .iter()
        .copied()
        .filter(|&l| l != c.me)
        .collect()
}

/// Synchronises `team`'s members; without a `stat=` (gfortran 12 has
/// none here) a stopped or failed member is an error termination naming
/// the statement.
fn sync_members(c: &Caf, team: &TeamRec, statement: &str) {
    let out = StatOut::new(std::ptr::null_mut(), std::ptr::null_mut(), 0);
    match sync_with(c, &partners(c, team)) {
        Ok(None) => {}
        Ok(Some(SyncLoss::Stopped)) => out.fail(
            SyncLoss::Stopped.stat(),
            statement,
            "an image of the team has stopped",
        ),
        Ok(Some(SyncLoss::Failed)) => out.fail(
            SyncLoss::Failed.stat(),
            statement,
            "an image of the team has failed",
        ),
        Err(e) => out.fail(crate::stat::STAT_ERROR, statement, e),
    }
}

/// The key FORM TEAM orders the new team by: NEW_INDEX= when given (> 0),
/// else this image's index in the current team (images keep their
/// relative order).
pub fn split_key(new_index: c_int, this_image: i64) -> i64 {
    if new_index > 0 {
        new_index as i64
    } else {
        this_image
    }
}

/// `_gfortran_caf_form_team`: collective over the current team; the images
/// giving the same `team_number` form one team.
///
/// # Safety
/// `team` is gfortran's writable `team_type` variable.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_form_team(
    team_number: c_int,
    team: *mut *mut c_void,
    new_index: c_int,
) {
    const WHAT: &str = "FORM TEAM";
    if team.is_null() {
        error_termination(&format!("{WHAT}: no team variable"), 1);
    }
    if team_number <= 0 {
        error_termination(
            &format!("{WHAT}: team number {team_number} is not positive"),
            1,
        );
    }
    let c = Caf::get();
    let parent = c.current();
    if new_index < 0 || new_index as i64 > parent.num_images() {
        error_termination(
            &format!(
                "{WHAT}: NEW_INDEX={new_index} is not an image index of a team of at most {} \
                 images",
                parent.num_images()
            ),
            1,
        );
    }
    // An image control statement.
    if let Err(e) = c.end_segment() {
        error_termination(&format!("{WHAT}: {e}"), 1);
    }
    let key = split_key(new_index, parent.this_image());
    let split = match parent.team.split_color(Some(team_number as u32), key) {
        Ok(Some(t)) => t,
        Ok(None) => error_termination(&format!("{WHAT}: this image joined no team"), 1),
        Err(e) => error_termination(&format!("{WHAT}: {e}"), 1),
    };
    if new_index > 0 && split.rank() as i64 + 1 != new_index as i64 {
        error_termination(
            &format!(
                "{WHAT}: NEW_INDEX={new_index} is given to more than one image of team \
                 {team_number} or leaves a gap (this image became image {})",
                split.rank() + 1
            ),
            1,
        );
    }
    let rec = Arc::new(TeamRec {
        team: split,
        number: team_number as i64,
        parent: Some(parent),
        allocated: Mutex::new(Vec::new()),
    });
    // SAFETY: team is writable (gfortran).
    unsafe { team.write(Arc::into_raw(rec) as *mut c_void) };
}

/// `_gfortran_caf_change_team`: the team becomes the current team.
///
/// # Safety
/// `team` points to a `team_type` variable defined by FORM TEAM.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_change_team(team: *mut *mut c_void, _coselector: c_int) {
    const WHAT: &str = "CHANGE TEAM";
    // SAFETY: gfortran's team variable.
    let t = unsafe { team_var(team, WHAT) };
    let c = Caf::get();
    let current = c.current();
    let formed_here = t.parent.as_ref().is_some_and(|p| Arc::ptr_eq(p, &current));
    if !formed_here {
        error_termination(
            &format!(
                "{WHAT}: team {} was not formed by FORM TEAM in the current team (team {})",
                t.number, current.number
            ),
            1,
        );
    }
    c.push_team(t.clone());
    // Image control statement: sync_with ends the segment first.
    sync_members(c, &t, WHAT);
}

/// `_gfortran_caf_end_team`: deallocates the coarrays allocated in the
/// team, synchronises it, and returns to the parent team.
///
/// # Safety
/// `_team` is what gfortran passes (NULL).
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_end_team(_team: *mut *mut c_void) {
    const WHAT: &str = "END TEAM";
    let c = Caf::get();
    let t = c.current();
    if t.parent.is_none() {
        error_termination(&format!("{WHAT}: no CHANGE TEAM is active"), 1);
    }
    let left: Vec<usize> = std::mem::take(&mut *t.allocated.lock());
    // In allocation order reversed; the same list on every member (each
    // allocation is collective over the team, in program order).
    for tok in left.into_iter().rev() {
        let tok = tok as *mut crate::token::Token;
        // SAFETY: a live token of this library (deregistration takes it
        // out of the list); desc is the variable's own descriptor.
        let desc = unsafe { (*tok).desc } as *mut crate::desc::Descriptor;
        if let Err(e) = crate::register::free_collective(c, tok) {
            error_termination(&format!("{WHAT}: deallocating a coarray: {e}"), 1);
        }
        if !desc.is_null() {
            // SAFETY: the allocatable coarray's descriptor (its variable
            // outlives the allocation): ALLOCATED() is now false, and
            // gfortran will neither deallocate it again nor use its token.
            unsafe { (*desc).base_addr = std::ptr::null_mut() };
        }
    }
    sync_members(c, &t, WHAT);
    c.pop_team();
}

/// `_gfortran_caf_sync_team`: synchronises the members of `team` (this
/// image must be one).
///
/// # Safety
/// `team` points to a `team_type` variable defined by FORM TEAM.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_sync_team(team: *mut *mut c_void, _unused: c_int) {
    const WHAT: &str = "SYNC TEAM";
    // SAFETY: gfortran's team variable.
    let t = unsafe { team_var(team, WHAT) };
    sync_members(Caf::get(), &t, WHAT);
}

/// `_gfortran_caf_team_number`: the number of `team` (gfortran passes the
/// variable's value), or of the current team when null (-1 for the
/// initial team).
///
/// # Safety
/// `team` is null or a pointer FORM TEAM stored.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_team_number(team: *mut c_void) -> c_int {
    if team.is_null() {
        return Caf::get().current().number as c_int;
    }
    // SAFETY: caller.
    unsafe { team_of(team, "TEAM_NUMBER") }.number as c_int
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_key_is_new_index_or_the_current_index() {
        assert_eq!(split_key(0, 5), 5);
        assert_eq!(split_key(2, 5), 2);
    }
}
