//! Gives the C shared library its SONAME, `libpgas_shim.so.MAJOR`: the name
//! a C program records and the loader looks for, so that an incompatible
//! major version is never loaded by mistake. Cargo names the file
//! `libruntime_shim.so` (the crate's name); `scripts/install` installs it as
//! `libpgas_shim.so.MAJOR.MINOR.PATCH` with the `.so.MAJOR` and `.so` links.
fn main() {
    let major =
        std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets CARGO_PKG_VERSION_MAJOR");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpgas_shim.so.{major}");
}
