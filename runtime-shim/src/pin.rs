//! Pinning a thread to a set of cores (the shim pins its workers one core
//! each with `core_affinity`; the thread that starts the runtime gets the
//! whole set of its locale's worker cores).

/// Restricts the calling thread to `cores` (a warning if the kernel refuses).
pub(crate) fn current_thread_to(cores: &[usize]) {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cores {
        if c < libc::CPU_SETSIZE as usize {
            // SAFETY: c is below CPU_SETSIZE, inside the set.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
    }
    // SAFETY: pid 0 is the calling thread; the set is initialised above and
    // its size passed along.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r != 0 {
        tracing::warn!(
            ?cores,
            "cannot pin the thread that started the runtime: {}",
            std::io::Error::last_os_error()
        );
    }
}
