//! The one error type of the OOB service, so callers (comm-ofi) can wrap it
//! with `#[from]` and users see what went wrong and with which value.

use crate::wire::Msg;
use std::net::SocketAddr;

/// What went wrong in the out-of-band exchange.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OobError {
    /// A launcher variable has a value we cannot use.
    #[error("environment variable {var}={value:?} is invalid: {reason}")]
    BadEnv {
        /// The variable's name.
        var: &'static str,
        /// Its value (lossily converted if not UTF-8).
        value: String,
        /// Why it is rejected.
        reason: String,
    },

    /// Some launcher variables are set but not this one.
    #[error(
        "environment variable {var} is not set but {present} is: pgasrun sets \
         PGAS_OOB_ADDR, PGAS_RANK, PGAS_SIZE and PGAS_JOB_ID together \
         (unset {present} to run this program as a single locale)"
    )]
    MissingEnv {
        /// The missing variable.
        var: &'static str,
        /// A launcher variable that is set.
        present: &'static str,
    },

    /// Started by a PMI-1/PMI-2 launcher (MPICH's hydra `mpiexec`,
    /// `srun --mpi=pmi2`): only PMIx is supported.
    #[error(
        "found {var}={value} but no PMIX_RANK/PMIX_NAMESPACE: started by a PMI-1/PMI-2 \
         launcher (MPICH's mpiexec, srun --mpi=pmi2?), which is not supported. Use a \
         PMIx launcher (OpenMPI's mpirun, srun --mpi=pmix) or pgasrun, or unset {var} \
         to run this program as a single locale"
    )]
    PmiUnsupported {
        /// The PMI variable found.
        var: &'static str,
        /// Its value.
        value: String,
    },

    /// Started by a PMIx launcher but the PMIx client library cannot be
    /// loaded.
    #[error("started by a PMIx launcher (PMIX_RANK/PMIX_NAMESPACE set) but {0}")]
    PmixUnavailable(String),

    /// A PMIx call failed.
    #[error("{call} failed: {detail}")]
    Pmix {
        /// The PMIx function.
        call: &'static str,
        /// PMIx's status string and context.
        detail: String,
    },

    /// Could not reach the launcher in the time allowed.
    #[error(
        "cannot connect to the launcher at {addr} (PGAS_OOB_ADDR) after {attempts} \
         attempt(s) in {elapsed_ms} ms: {cause} (has pgasrun exited?)"
    )]
    Connect {
        /// The launcher address from the environment.
        addr: SocketAddr,
        /// Connection attempts made.
        attempts: u32,
        /// Time spent trying.
        elapsed_ms: u64,
        /// The last attempt's error.
        cause: std::io::Error,
    },

    /// The launcher refused this locale (wrong job, duplicate rank, ...).
    #[error("the launcher rejected locale {rank}: {reason}")]
    Rejected {
        /// Our rank.
        rank: usize,
        /// The launcher's reason.
        reason: String,
    },

    /// The control connection to the launcher broke.
    #[error("connection to the launcher lost: {0}")]
    ConnectionLost(String),

    /// A collective cannot complete because another locale is gone.
    #[error("locale {rank} died: {detail}")]
    PeerDied {
        /// The locale that is gone.
        rank: usize,
        /// How it went (as the launcher saw it).
        detail: String,
    },

    /// The launcher could not complete a collective (e.g. result too large).
    #[error("collective failed: {0}")]
    CollectiveFailed(String),

    /// A malformed or unexpected message (version skew or a bug).
    #[error("OOB protocol error: {0}")]
    Protocol(String),

    /// `broadcast` root outside `0..size`.
    #[error("broadcast root {root} out of range: the job has {size} locale(s)")]
    InvalidRoot {
        /// The root asked for.
        root: usize,
        /// The job size.
        size: usize,
    },

    /// A contribution larger than the OOB frame limit.
    #[error("OOB payload of {len} bytes exceeds the limit of {max} bytes")]
    PayloadTooLarge {
        /// Bytes passed.
        len: usize,
        /// The limit ([`crate::wire::MAX_PAYLOAD`]).
        max: usize,
    },
}

impl OobError {
    /// What `answer`, read while waiting for collective `seq`, means to the
    /// caller (pgasrun's and the PMIx hub's replies alike): the result's
    /// bytes; a `Failed` reply names the dead locale when it knows one;
    /// anything else is a protocol error.
    pub(crate) fn collective_answer(answer: Msg, seq: u64) -> Result<Vec<u8>, OobError> {
        match answer {
            Msg::Result { seq: s, data } if s == seq => Ok(data),
            Msg::Failed {
                seq: s,
                peer: Some(p),
                detail,
            } if s == seq => Err(OobError::PeerDied {
                rank: p as usize,
                detail,
            }),
            Msg::Failed {
                seq: s,
                peer: None,
                detail,
            } if s == seq => Err(OobError::CollectiveFailed(detail)),
            Msg::Result { seq: s, .. } | Msg::Failed { seq: s, .. } => Err(OobError::Protocol(
                format!("reply to collective #{s} while waiting for #{seq}"),
            )),
            other => Err(OobError::Protocol(format!(
                "'{}' message while waiting for collective #{seq}",
                other.name()
            ))),
        }
    }
}
