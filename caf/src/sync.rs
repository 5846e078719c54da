//! Image control statements that synchronise: SYNC ALL, SYNC IMAGES, SYNC
//! MEMORY (and the synchronisation SYNC TEAM / END TEAM / the allocation of
//! a coarray share with them).
//!
//! Fortran's segment rule on pgas-comm: an image ends its segment by
//! forcing everything it wrote visible (`Caf::end_segment`, the runtime's
//! quiet: what each MCM mode does at a task end), then tells each image it
//! synchronises with by a remote atomic add on that image's counter for it;
//! it waits until each of those images' counters here passed what it
//! consumed before. The add is ordered after the forcing, so an image that
//! sees the count sees the data (docs/coarrays.md, "Memory model").
//!
//! Counters are pairwise (image j's count on image k), so SYNC IMAGES with
//! any set, SYNC ALL and SYNC TEAM share them, and a stopped or failed
//! image is noticed while waiting: its status word says so and the
//! statement ends with STAT_STOPPED_IMAGE / STAT_FAILED_IMAGE instead of
//! waiting forever.

use crate::stat::{
    StatOut, STAT_DUP_SYNC_IMAGES, STAT_ERROR, STAT_FAILED_IMAGE, STAT_STOPPED_IMAGE,
};
use crate::state::{Caf, IMAGE_ENDED, IMAGE_FAILED, IMAGE_RUNNING, IMAGE_STOPPED};
use std::ffi::{c_char, c_int};
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// Why a synchronisation ended without every partner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncLoss {
    /// A partner executed STOP (or ended).
    Stopped,
    /// A partner executed FAIL IMAGE.
    Failed,
}

impl SyncLoss {
    /// The `stat=` value.
    pub fn stat(self) -> c_int {
        match self {
            SyncLoss::Stopped => STAT_STOPPED_IMAGE,
            SyncLoss::Failed => STAT_FAILED_IMAGE,
        }
    }
}

fn local_word(c: &Caf, from: usize) -> &'static AtomicU64 {
    let p = c.sync_word(c.me, from);
    // SAFETY: a word of this image's sync array (registered heap, alloc_all'd
    // at start, never freed); peers write it only with atomic adds.
    unsafe { &*(p.addr() as *const AtomicU64) }
}

/// Synchronises this image with the world locales `partners` (this image
/// excluded, no duplicates). Every partner that is running takes part;
/// returns which loss ended it early, if any.
pub fn sync_with(c: &Caf, partners: &[usize]) -> Result<Option<SyncLoss>, String> {
    c.end_segment().map_err(|e| e.to_string())?;
    for &j in partners {
        if c.status_of(j) == IMAGE_FAILED {
            continue;
        }
        c.rt.atomic(c.sync_word(j, c.me))
            .add(1)
            .map_err(|e| format!("notifying image {}: {e}", j + 1))?;
    }
    // The adds leave now (a postponed AM 'done' must not hold them back);
    // under the negative control this second quiet would do the first's
    // work, so it goes too.
    if !c.weaken_segments {
        c.rt.quiet().map_err(|e| e.to_string())?;
    }
    let mut seen = c.seen.lock();
    let mut arrived = vec![false; partners.len()];
    let mut loss = None;
    c.rt.wait_until(|| {
        let mut all = true;
        for (i, &j) in partners.iter().enumerate() {
            if arrived[i] {
                continue;
            }
            if local_word(c, j).load(Ordering::SeqCst) > seen[j] {
                arrived[i] = true;
                continue;
            }
            match c.status_of(j) {
                IMAGE_RUNNING => all = false,
                IMAGE_STOPPED | IMAGE_ENDED => {
                    // A last look: it may have notified before stopping.
                    if local_word(c, j).load(Ordering::SeqCst) > seen[j] {
                        arrived[i] = true;
                    } else if loss != Some(SyncLoss::Failed) {
                        loss = Some(SyncLoss::Stopped);
                        arrived[i] = true;
                        seen[j] = u64::MAX - 1; // never counted again
                    }
                }
                _ => {
                    loss = Some(SyncLoss::Failed);
                    arrived[i] = true;
                    seen[j] = u64::MAX - 1;
                }
            }
        }
        all
    });
    for &j in partners {
        if seen[j] < u64::MAX - 1 && local_word(c, j).load(Ordering::SeqCst) > seen[j] {
            seen[j] += 1;
        }
    }
    // What the partners wrote before their notification is read after it.
    fence(Ordering::SeqCst);
    Ok(loss)
}

/// Reports a synchronisation's outcome through `out`.
fn report(out: &StatOut, statement: &str, r: Result<Option<SyncLoss>, String>) {
    match r {
        Ok(None) => out.ok(),
        Ok(Some(loss)) => out.fail(
            loss.stat(),
            statement,
            match loss {
                SyncLoss::Stopped => "an image it synchronises with has stopped",
                SyncLoss::Failed => "an image it synchronises with has failed",
            },
        ),
        Err(e) => out.fail(STAT_ERROR, statement, e),
    }
}

/// The other members of the current team, as world locales.
pub fn team_partners(c: &Caf) -> Vec<usize> {
    c.current()
        .team
        .locales()
        .iter()
        .copied()
        .filter(|&l| l != c.me)
        .collect()
}

/// `_gfortran_caf_sync_all`.
///
/// # Safety
/// stat / errmsg as gfortran passes them.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_sync_all(
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let c = Caf::get();
    let out = StatOut::new(stat, errmsg, errmsg_len);
    report(&out, "SYNC ALL", sync_with(c, &team_partners(c)));
}

/// `_gfortran_caf_sync_images`: `count` images in `images` (image indices of
/// the current team); `count == -1` is `SYNC IMAGES (*)`.
///
/// # Safety
/// `images` has `count` integers when count > 0.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_sync_images(
    count: c_int,
    images: *const c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let c = Caf::get();
    let out = StatOut::new(stat, errmsg, errmsg_len);
    let partners = if count < 0 {
        team_partners(c)
    } else {
        let list = if count == 0 || images.is_null() {
            &[][..]
        } else {
            // SAFETY: gfortran passes `count` integers.
            unsafe { std::slice::from_raw_parts(images, count as usize) }
        };
        let team = c.current();
        let mut locs = Vec::with_capacity(list.len());
        let mut seen_self = false;
        for &img in list {
            let Some(l) = team.locale_of(img as i64) else {
                return out.fail(
                    STAT_ERROR,
                    "SYNC IMAGES",
                    format!(
                        "image {img} is not an image of the current team (1 to {})",
                        team.num_images()
                    ),
                );
            };
            if locs.contains(&l) || (l == c.me && seen_self) {
                return out.fail(
                    STAT_DUP_SYNC_IMAGES,
                    "SYNC IMAGES",
                    format!("image {img} appears more than once in the image set"),
                );
            }
            if l == c.me {
                seen_self = true;
            } else {
                locs.push(l);
            }
        }
        locs
    };
    report(&out, "SYNC IMAGES", sync_with(c, &partners));
}

/// `_gfortran_caf_sync_memory`: ends the segment (no partner).
///
/// # Safety
/// stat / errmsg as gfortran passes them.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_sync_memory(
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let c = Caf::get();
    let out = StatOut::new(stat, errmsg, errmsg_len);
    match c.end_segment() {
        Ok(()) => {
            fence(Ordering::SeqCst);
            out.ok()
        }
        Err(e) => out.fail(STAT_ERROR, "SYNC MEMORY", e),
    }
}
