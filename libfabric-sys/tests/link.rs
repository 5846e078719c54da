//! The bindings link against the installed library and the static-inline
//! wrappers are callable.

use libfabric_sys as sys;

#[test]
fn library_version_is_at_least_1_17() {
    // SAFETY: fi_version takes no arguments and only reads a constant.
    let v = unsafe { sys::fi_library_version() };
    assert!(sys::fi_major(v) >= 1, "major {}", sys::fi_major(v));
    assert!(
        sys::fi_major(v) > 1 || sys::fi_minor(v) >= 17,
        "libfabric {}.{} is older than 1.17",
        sys::fi_major(v),
        sys::fi_minor(v)
    );
}

#[test]
fn static_inline_allocinfo_and_getinfo_work() {
    // SAFETY: fi_allocinfo (a static inline wrapper) returns an owned fi_info or null.
    let hints = unsafe { sys::fi_allocinfo() };
    assert!(!hints.is_null());
    // SAFETY: hints is a valid fi_info from fi_allocinfo with ep_attr allocated.
    unsafe { (*(*hints).ep_attr).type_ = sys::FI_EP_RDM };
    let mut info: *mut sys::fi_info = std::ptr::null_mut();
    // SAFETY: valid hints; info is an out-pointer.
    let ret = unsafe {
        sys::fi_getinfo(
            sys::fi_version(1, 9),
            std::ptr::null(),
            std::ptr::null(),
            0,
            hints,
            &mut info,
        )
    };
    assert_eq!(ret, 0, "fi_getinfo failed: {ret}");
    assert!(!info.is_null(), "no RDM provider at all");
    // SAFETY: both were allocated by libfabric and are freed once.
    unsafe {
        sys::fi_freeinfo(info);
        sys::fi_freeinfo(hints);
    }
}

#[test]
fn strerror_names_eagain() {
    // SAFETY: fi_strerror returns a static NUL-terminated string.
    let s = unsafe { std::ffi::CStr::from_ptr(sys::fi_strerror(sys::FI_EAGAIN)) };
    assert!(
        s.to_string_lossy()
            .to_lowercase()
            .contains("temporarily unavailable"),
        "{s:?}"
    );
}
