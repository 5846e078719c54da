//! Raw bindings to the libfabric installed on this machine.
//!
//! Generated at build time by bindgen from the system headers (found through
//! pkg-config), so they match the library we link (Debian's 1.17 here; 2.x
//! headers work the same way). The headers' `static inline` calls
//! (`fi_write`, `fi_read`, `fi_atomic`, `fi_cq_read`, `fi_av_insert`,
//! `fi_mr_reg`, ...) are exported through C wrappers compiled by the build
//! script; bindgen names them after the inline function, so they are called
//! exactly like the C API.
//!
//! Nothing here is safe to use directly: `comm-ofi` owns every `fid` and wraps
//! these calls. The few function-like macros of `fabric.h` that bindgen
//! cannot translate are written by hand at the end of this file.
#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    improper_ctypes,
    clippy::all,
    clippy::undocumented_unsafe_blocks,
    unsafe_op_in_unsafe_fn
)]

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));

/// `FI_VERSION(major, minor)` from `fabric.h`.
pub const fn fi_version(major: u32, minor: u32) -> u32 {
    (major << 16) | minor
}

/// `FI_MAJOR(version)`.
pub const fn fi_major(version: u32) -> u32 {
    version >> 16
}

/// `FI_MINOR(version)`.
pub const fn fi_minor(version: u32) -> u32 {
    version & 0xffff
}

/// `FI_ADDR_UNSPEC` (`(uint64_t) -1`; a cast bindgen does not evaluate).
pub const FI_ADDR_UNSPEC: fi_addr_t = u64::MAX;
/// `FI_ADDR_NOTAVAIL` (`(uint64_t) -1`).
pub const FI_ADDR_NOTAVAIL: fi_addr_t = u64::MAX;
/// `FI_KEY_NOTAVAIL` (`(uint64_t) -1`).
pub const FI_KEY_NOTAVAIL: u64 = u64::MAX;

extern "C" {
    /// `fi_version()`: the version of the libfabric library actually loaded
    /// (bindgen's name would clash with the `FI_VERSION` helper above).
    #[link_name = "fi_version"]
    pub fn fi_library_version() -> u32;
}
