//! RANDOM_INIT (`_gfortran_caf_random_init`): with `-fcoarray=lib`
//! gfortran calls the coarray library instead of libgfortran's own
//! `random_init`, so that IMAGE_DISTINCT can mean something.
//!
//! The seed is set through libgfortran's RANDOM_SEED (`random_seed_i4`,
//! found at run time: the program links libgfortran, this library does
//! not): with PUT for a seed of our making, with no argument for a fresh
//! one from the operating system's entropy.
//!
//! | REPEATABLE | IMAGE_DISTINCT | seed |
//! |---|---|---|
//! | true | true | fixed per image: a function of a constant and the image's index in the initial team |
//! | true | false | fixed, the same on every image |
//! | false | true | fresh from the OS on each image (libgfortran's RANDOM_SEED()) |
//! | false | false | fresh on image 1 of the current team, broadcast to the team: collective over the current team (as in OpenCoarrays) |
//!
//! The repeatable seeds come from a splitmix64 sequence (never zero words,
//! which xoshiro's state must avoid).

use crate::desc::{Descriptor, BT_INTEGER};
use crate::state::{error_termination, Caf};
use std::ffi::{c_int, c_void};

type RandomSeedI4 = unsafe extern "C" fn(*mut i32, *mut Descriptor, *mut Descriptor);

fn random_seed_i4() -> RandomSeedI4 {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_gfortran_random_seed_i4".as_ptr()) };
    if p.is_null() {
        error_termination(
            "RANDOM_INIT: libgfortran's _gfortran_random_seed_i4 is not in the process (the \
             program is not linked with libgfortran)",
            1,
        );
    }
    // SAFETY: libgfortran's random_seed_i4(GFC_INTEGER_4 *size, gfc_array_i4
    // *put, gfc_array_i4 *get).
    unsafe { std::mem::transmute::<*mut c_void, RandomSeedI4>(p) }
}

/// A rank-1 integer(4) descriptor of `v`.
fn desc_of(v: &mut [i32]) -> Descriptor {
    // SAFETY: all-zero is a valid Descriptor (null pointer, zero numbers).
    let mut d: Descriptor = unsafe { std::mem::zeroed() };
    d.base_addr = v.as_mut_ptr() as *mut c_void;
    d.offset = -1;
    d.dtype.elem_len = 4;
    d.dtype.rank = 1;
    d.dtype.ty = BT_INTEGER;
    d.span = 4;
    d.dim[0].stride = 1;
    d.dim[0].lbound = 1;
    d.dim[0].ubound = v.len() as isize;
    d
}

/// `n` seed words from a splitmix64 sequence started at `start`; no word
/// is zero.
pub fn repeatable_seed(start: u64, n: usize) -> Vec<i32> {
    let mut x = start;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        for w in [z as u32, (z >> 32) as u32] {
            if w != 0 && out.len() < n {
                out.push(w as i32);
            }
        }
    }
    out
}

/// The start of the repeatable sequence (any fixed value).
const REPEATABLE_START: u64 = 0x5eed_caf0_2026_0001;

/// `_gfortran_caf_random_init`.
#[no_mangle]
pub extern "C" fn _gfortran_caf_random_init(repeatable: bool, image_distinct: bool) {
    let c = Caf::get();
    let seed_fn = random_seed_i4();
    let mut size: c_int = 0;
    // SAFETY: RANDOM_SEED(SIZE=size).
    unsafe { seed_fn(&mut size, std::ptr::null_mut(), std::ptr::null_mut()) };
    let n = size.max(1) as usize;
    let put = |v: &mut Vec<i32>| {
        let mut d = desc_of(v);
        // SAFETY: RANDOM_SEED(PUT=v), v of the size RANDOM_SEED gave.
        unsafe { seed_fn(std::ptr::null_mut(), &mut d, std::ptr::null_mut()) };
    };
    match (repeatable, image_distinct) {
        (true, distinct) => {
            let image = if distinct { c.me as u64 + 1 } else { 0 };
            let mut v = repeatable_seed(REPEATABLE_START ^ image.wrapping_mul(0x1000_0000_01b3), n);
            put(&mut v);
        }
        (false, true) => {
            // SAFETY: RANDOM_SEED() (a fresh seed from the OS).
            unsafe {
                seed_fn(
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
        }
        (false, false) => {
            let team = c.current();
            let mut v = vec![0i32; n];
            if team.this_image() == 1 {
                // SAFETY: RANDOM_SEED(), then RANDOM_SEED(GET=v).
                unsafe {
                    seed_fn(
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                    );
                    let mut d = desc_of(&mut v);
                    seed_fn(std::ptr::null_mut(), std::ptr::null_mut(), &mut d);
                }
            }
            match team.team.broadcast(0, &v) {
                Ok(mut got) if got.len() == n => put(&mut got),
                Ok(got) => error_termination(
                    &format!(
                        "RANDOM_INIT: image 1 of the team sent a seed of {} words, this image \
                         needs {n}",
                        got.len()
                    ),
                    1,
                ),
                Err(e) => error_termination(&format!("RANDOM_INIT: {e}"), 1),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeatable_seeds_are_fixed_nonzero_and_differ_by_start() {
        let a = repeatable_seed(7, 9);
        assert_eq!(a.len(), 9);
        assert_eq!(a, repeatable_seed(7, 9));
        assert!(a.iter().all(|w| *w != 0));
        assert_ne!(a, repeatable_seed(8, 9));
    }
}
