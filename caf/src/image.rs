//! Start, end and the images' life: `init` / `finalize`, `this_image` /
//! `num_images`, STOP and ERROR STOP, FAIL IMAGE, `image_status`,
//! `failed_images` / `stopped_images`.
//!
//! An image that stops (STOP, or the end of the program) or fails (FAIL
//! IMAGE) first writes its new status into every image's status array, then
//! waits in the runtime's collective finalize, still serving its peers'
//! operations, until every image has ended: the others see `stat=`
//! STAT_STOPPED_IMAGE / STAT_FAILED_IMAGE from statements that involve it
//! and its coarrays stay readable, as the standard asks of a stopped image.
//! ERROR STOP ends every image at once with the code as the job's exit
//! status (through the launcher). A process that dies without FAIL IMAGE
//! still brings the job down (the runtime's failure guarantee).

use crate::desc::Descriptor;
use crate::stat::{STAT_FAILED_IMAGE, STAT_STOPPED_IMAGE};
use crate::state::{error_termination, Caf, IMAGE_ENDED, IMAGE_FAILED, IMAGE_STOPPED};
use std::ffi::{c_char, c_int, c_void};
use std::io::Write;
use std::sync::atomic::Ordering;

/// `_gfortran_caf_init`: starts the runtime if a constructor did not.
///
/// # Safety
/// gfortran's argc / argv pointers (unused).
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) {
    let _ = Caf::get();
}

/// Ends this image normally with `status` announced: every image's status
/// array learns it, then the runtime's collective finalize waits (serving
/// peers) until every image has ended.
fn end_image(status: u64) {
    let c = Caf::get();
    if c.ended.swap(true, Ordering::AcqRel) {
        return;
    }
    let _ = c.end_segment();
    c.announce(status);
    let _ = std::io::stdout().flush();
    if let Err(e) = c.rt.finalize() {
        tracing::warn!("pgas-caf: finalize: {e}");
    }
}

/// `_gfortran_caf_finalize`: the end of the program (normal termination).
#[no_mangle]
pub extern "C" fn _gfortran_caf_finalize() {
    end_image(IMAGE_ENDED);
}

fn flush_fortran_units() {
    // The program's own output went through libgfortran's units; ours to
    // stderr. Rust's stdout buffer may hold nothing, but flush anyway.
    let _ = std::io::stdout().flush();
}

/// `_gfortran_caf_stop_numeric`: STOP with an integer code (the image's
/// exit status).
#[no_mangle]
pub extern "C" fn _gfortran_caf_stop_numeric(code: c_int, quiet: bool) -> ! {
    flush_fortran_units();
    if !quiet {
        eprintln!("STOP {code}");
    }
    end_image(IMAGE_STOPPED);
    std::process::exit(code)
}

/// Reads a Fortran character argument.
///
/// # Safety
/// `s` has `len` bytes (or is null).
unsafe fn fortran_str(s: *const c_char, len: usize) -> String {
    if s.is_null() {
        return String::new();
    }
    // SAFETY: caller.
    let b = unsafe { std::slice::from_raw_parts(s as *const u8, len) };
    String::from_utf8_lossy(b).into_owned()
}

/// `_gfortran_caf_stop_str`: STOP with a message (exit status 0).
///
/// # Safety
/// `s` has `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_stop_str(s: *const c_char, len: usize, quiet: bool) -> ! {
    flush_fortran_units();
    // A bare STOP passes no string and prints nothing (as libgfortran).
    if !quiet && !s.is_null() && len > 0 {
        // SAFETY: caller.
        eprintln!("STOP {}", unsafe { fortran_str(s, len) });
    }
    end_image(IMAGE_STOPPED);
    std::process::exit(0)
}

/// `_gfortran_caf_error_stop`: ERROR STOP with a code: every image ends,
/// the job's exit status is the code (1 if it is 0).
#[no_mangle]
pub extern "C" fn _gfortran_caf_error_stop(code: c_int, quiet: bool) -> ! {
    flush_fortran_units();
    let code = if code == 0 { 1 } else { code };
    let c = Caf::get();
    let image = c.current().this_image();
    let msg = format!("ERROR STOP {code} on image {image}");
    if !quiet {
        eprintln!("ERROR STOP {code}");
    }
    c.rt.global_exit(code, &msg)
}

/// `_gfortran_caf_error_stop_str`: ERROR STOP with a message (exit status 1).
///
/// # Safety
/// `s` has `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_error_stop_str(
    s: *const c_char,
    len: usize,
    quiet: bool,
) -> ! {
    flush_fortran_units();
    // SAFETY: caller.
    let text = unsafe { fortran_str(s, len) };
    let c = Caf::get();
    let image = c.current().this_image();
    if !quiet {
        eprintln!("ERROR STOP {text}");
    }
    c.rt.global_exit(1, &format!("ERROR STOP {text} on image {image}"))
}

/// `_gfortran_caf_fail_image`: this image fails. It stops taking part (its
/// status says FAILED everywhere) and waits, serving nobody's statements
/// but the runtime's, until the job ends.
#[no_mangle]
pub extern "C" fn _gfortran_caf_fail_image() -> ! {
    flush_fortran_units();
    end_image(IMAGE_FAILED);
    std::process::exit(0)
}

/// `_gfortran_caf_this_image`: this image's index in the current team.
#[no_mangle]
pub extern "C" fn _gfortran_caf_this_image(_distance: c_int) -> c_int {
    Caf::get().current().this_image() as c_int
}

/// `_gfortran_caf_num_images`: images in the current team; with
/// `failed == 1` those that failed, with `failed == 0` those that did not.
#[no_mangle]
pub extern "C" fn _gfortran_caf_num_images(_distance: c_int, failed: c_int) -> c_int {
    let c = Caf::get();
    let team = c.current();
    if failed < 0 {
        return team.num_images() as c_int;
    }
    let nfailed = team
        .team
        .locales()
        .iter()
        .filter(|&&l| c.status_of(l) == IMAGE_FAILED)
        .count() as c_int;
    if failed > 0 {
        nfailed
    } else {
        team.num_images() as c_int - nfailed
    }
}

/// `_gfortran_caf_image_status`: 0, STAT_STOPPED_IMAGE or STAT_FAILED_IMAGE
/// for image `image` of the current team.
#[no_mangle]
pub extern "C" fn _gfortran_caf_image_status(image: c_int, _team: *mut c_void) -> c_int {
    let c = Caf::get();
    let team = c.current();
    let Some(l) = team.locale_of(image as i64) else {
        error_termination(
            &format!(
                "IMAGE_STATUS: image {image} is not an image of the current team (1 to {})",
                team.num_images()
            ),
            1,
        );
    };
    match c.status_of(l) {
        IMAGE_FAILED => STAT_FAILED_IMAGE,
        IMAGE_STOPPED | IMAGE_ENDED => STAT_STOPPED_IMAGE,
        _ => 0,
    }
}

/// Fills `array` (an unallocated rank-1 integer descriptor) with the
/// indices of the current team's images whose status is `status`.
///
/// # Safety
/// `array` is gfortran's result descriptor; `kind` null or an integer.
unsafe fn images_with(array: *mut Descriptor, kind: *const c_int, status: u64) {
    let c = Caf::get();
    let team = c.current();
    let list: Vec<i64> = team
        .team
        .locales()
        .iter()
        .enumerate()
        .filter(|(_, &l)| c.status_of(l) == status)
        .map(|(i, _)| i as i64 + 1)
        .collect();
    let k = if kind.is_null() {
        4
    } else {
        // SAFETY: a non-null kind is a readable integer (gfortran).
        (unsafe { *kind }) as usize
    };
    let k = if matches!(k, 1 | 2 | 4 | 8) { k } else { 4 };
    let bytes = (list.len() * k).max(1);
    // SAFETY: malloc for gfortran, which frees the result with free().
    let mem = unsafe { libc::malloc(bytes) } as *mut u8;
    if mem.is_null() {
        error_termination("FAILED_IMAGES / STOPPED_IMAGES: out of memory", 1);
    }
    for (i, v) in list.iter().enumerate() {
        let b = v.to_ne_bytes();
        // SAFETY: mem has list.len() * k bytes; k <= 8 and little-endian
        // low bytes hold the value.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), mem.add(i * k), k) };
    }
    // SAFETY: array is the result descriptor (rank 1).
    let d = unsafe { &mut *array };
    d.base_addr = mem as *mut c_void;
    // gfortran reads the result as a temporary indexed from 0 (`[0:]`):
    // bounds 0 .. n - 1.
    d.offset = 0;
    d.dtype.elem_len = k;
    d.dtype.rank = 1;
    d.dtype.ty = crate::desc::BT_INTEGER;
    d.span = k as isize;
    d.dim[0].stride = 1;
    d.dim[0].lbound = 0;
    d.dim[0].ubound = list.len() as isize - 1;
}

/// `_gfortran_caf_failed_images`.
///
/// # Safety
/// gfortran's result descriptor and optional kind.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_failed_images(
    array: *mut Descriptor,
    _team: *mut c_void,
    kind: *const c_int,
) {
    // SAFETY: caller.
    unsafe { images_with(array, kind, IMAGE_FAILED) }
}

/// `_gfortran_caf_stopped_images`.
///
/// # Safety
/// gfortran's result descriptor and optional kind.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_stopped_images(
    array: *mut Descriptor,
    _team: *mut c_void,
    kind: *const c_int,
) {
    // SAFETY: caller.
    unsafe { images_with(array, kind, IMAGE_STOPPED) }
}
