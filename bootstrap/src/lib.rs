//! Out-of-band (OOB) start-up service for pgas-comm locales.
//!
//! Before libfabric endpoints can talk to each other, every locale has to learn
//! the others' endpoint names and memory keys. That first exchange cannot go
//! over the fabric itself, so it goes over this crate: a handful of collectives
//! ([`Oob::allgather`], [`Oob::broadcast`], [`Oob::barrier`]) plus
//! [`Oob::abort`] to take the whole job down with a message. It sits below
//! comm-ofi (which needs it during init) and so has no libfabric dependency.
//!
//! # Backends
//!
//! [`from_env`] picks a backend from the environment ([`Backend::detect`]):
//!
//! * **launcher** — the process was started by `pgasrun` (this crate's binary),
//!   which sets [`env::OOB_ADDR`], [`env::RANK`], [`env::SIZE`] and
//!   [`env::JOB_ID`]. The locale connects to the launcher over TCP and keeps the
//!   connection for the whole run; the launcher performs the collectives.
//! * **single** — none of those variables are set: the program was run by hand
//!   and is locale 0 of 1. Collectives are trivial.
//! * **PMIx** — started by a PMIx launcher (OpenMPI's `mpirun`,
//!   `srun --mpi=pmix`): `PMIX_RANK`/`PMIX_NAMESPACE` are set. The locale
//!   loads the installed `libpmix.so.2` at run time (so nothing of PMIx is
//!   needed to build, or to run under pgasrun) and does the collectives with
//!   `PMIx_Put`/`PMIx_Fence`/`PMIx_Get` through the launcher's PMIx server.
//!
//! # Calling rules
//!
//! * Collectives are *collective*: every locale must call them, in the same
//!   order, with the same kind (and, for `broadcast`, the same root). pgasrun
//!   checks kind and root; a mismatch takes the job down with a message
//!   naming both calls. Under PMIx the locales that notice return
//!   [`OobError::CollectiveFailed`] (or a failed `PMIx_Fence`) instead.
//! * An [`Oob`] may be used from any thread, but calls are serialized (one
//!   collective at a time per locale). If several threads of a locale issue
//!   collectives, their order must still be the same on every locale, so in
//!   practice call them from one thread.
//! * Liveness: under pgasrun, a watchdog thread reads the control connection
//!   for the whole run. If the launcher goes away, or tells the locale the job
//!   is being stopped (another locale died or aborted), the watchdog prints a
//!   message on stderr and exits the process. A locale never outlives its job.
//!   Under PMIx the launcher (mpirun, srun) kills the whole job when a process
//!   fails or aborts.
//! * Exit before finalize: once the comm layer called [`Oob::guard_exit`], a
//!   locale that ends before [`Oob::finalized`] fails the job, even with
//!   status 0 (pgasrun: `locale 1 (pid ..) exited with status 0 before
//!   finalize`; PMIx: the locale says so and leaves PMIx unfinalized, so
//!   the launcher kills the job).
//!
//! See `docs/launcher.md` for the protocol and failure handling.

mod client;
pub mod collective;
pub mod env;
mod error;
mod hub;
pub mod leftovers;
mod oob;
mod pmix;
mod pmix_ffi;
mod single;
pub mod wire;

pub use env::{Backend, LauncherEnv, PmixEnv};
pub use error::OobError;
pub use oob::Oob;
pub use pmix_ffi::LIB_VAR as PMIX_LIB_VAR;
pub use single::SingleOob;

impl Backend {
    /// Builds the OOB for this backend (connecting to the launcher, or
    /// initializing PMIx, if any).
    pub fn connect(self) -> Result<Box<dyn Oob>, OobError> {
        match self {
            Backend::Launcher(env) => Ok(Box::new(client::connect_shared(&env)?)),
            Backend::Single => Ok(Box::new(SingleOob)),
            Backend::Pmix(env) => Ok(Box::new(pmix::connect_shared(&env)?)),
            Backend::Pmi { var, value } => Err(OobError::PmiUnsupported { var, value }),
        }
    }
}

/// Connects to whatever started this process (see [`Backend::detect`]).
///
/// * Started by `pgasrun`: connects to it (bounded retries). Calling this more
///   than once in a process returns handles to the same connection.
/// * No launcher variables: a single-locale [`SingleOob`] (rank 0 of 1).
/// * PMIx variables but not ours: initializes PMIx (once per process; later
///   calls share it) and asks it for rank and size. A PMI-1/PMI-2 launcher is
///   [`OobError::PmiUnsupported`].
///
/// Errors name the variable and value at fault, or the launcher address.
pub fn from_env() -> Result<Box<dyn Oob>, OobError> {
    Backend::detect()?.connect()
}
