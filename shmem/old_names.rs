// The one list of the deprecated calls without a `shmem_` prefix, included
// by build.rs (which lists the profiling names) and by
// tests/profiling_names.rs (which checks them).

/// The names of 1.2 (deprecated) that are not `shmem_`-prefixed; their
/// profiling names are `p` + name, as Sandia OpenSHMEM spells them.
const OLD_NAMES: [&str; 7] = [
    "start_pes",
    "_my_pe",
    "_num_pes",
    "shmalloc",
    "shfree",
    "shrealloc",
    "shmemalign",
];
