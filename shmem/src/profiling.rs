//! The profiling interface: `pshmem_X` for every call `shmem_X` of the C
//! API (and `pstart_pes`, `p_my_pe`, ... for the 1.2 names), as MPI's
//! `PMPI_` names: a tool defines `shmem_X` in the program, does its work,
//! and calls `pshmem_X` to reach the library (`include/pshmem.h`).
//!
//! Each `pshmem_X` is a two-instruction trampoline, a jump to `shmem_X`, so
//! the two names run the same code with any signature, and no call is
//! written out twice. The list comes from the header (`build.rs`
//! preprocesses `include/shmem.h`: every function it declares), so a call
//! added to the header gets its profiling name with it. The library is
//! linked with `-Bsymbolic-functions`: the jump (like every call inside the
//! library) binds to the library's own `shmem_X` at link time, so a
//! program's own `shmem_X` does not capture its `pshmem_X` (which would
//! recurse). Needs naked functions (Rust 1.88); `build.rs` leaves the
//! module out with an older compiler.

/// `pshmem_X => shmem_X, ...`: one trampoline each.
macro_rules! trampolines {
    ($($p:ident => $name:ident),* $(,)?) => { $(
        #[doc = concat!("`", stringify!($p), "`: the profiling name of `", stringify!($name), "`.")]
        ///
        /// # Safety
        /// As the call it names.
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $p() {
            #[cfg(target_arch = "x86_64")]
            core::arch::naked_asm!(concat!("jmp ", stringify!($name)));
            #[cfg(target_arch = "aarch64")]
            core::arch::naked_asm!(concat!("b ", stringify!($name)));
        }
    )* };
}

include!(concat!(env!("OUT_DIR"), "/profiling_names.rs"));
