//! Errors of the AM layer.
//!
//! Exists so that every failure an initiator can see (bad input, a body that
//! failed at the target, a payload that cannot be carried, a comm-layer
//! failure underneath) is a value naming what went wrong, never a hang or a
//! silently dropped message.

use comm_ofi::Locale;

/// Result alias of the AM layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the AM layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The comm layer underneath failed.
    #[error(transparent)]
    Comm(#[from] comm_ofi::Error),
    /// An environment variable holds a value we cannot use.
    #[error("invalid {var}={value:?}: {reason}")]
    Env {
        /// The variable.
        var: &'static str,
        /// Its value as found.
        value: String,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// Registering an AM body failed (duplicate name, id collision, bad raw id).
    #[error("AM registration: {0}")]
    Registry(String),
    /// The target ran the request and reported a failure.
    #[error("active message to locale {locale} failed there: {msg}")]
    Remote {
        /// Where it failed.
        locale: Locale,
        /// The target's message.
        msg: String,
    },
    /// A request cannot be carried (too large for the heap, bad size).
    #[error("active message to locale {locale} cannot be sent: {reason}")]
    TooLarge {
        /// The target.
        locale: Locale,
        /// Why.
        reason: String,
    },
    /// An operation the AM layer cannot do (bad type/op combination, ...).
    #[error("{0}")]
    Unsupported(String),
    /// The AM layer was finalized (or is shutting down).
    #[error("the AM layer is shut down: {0}")]
    Shutdown(String),
    /// A thread could not be started.
    #[error("cannot start AM thread {name}: {error}")]
    Thread {
        /// Thread name.
        name: String,
        /// OS error.
        error: String,
    },
}

impl From<comm_ofi::knobs::BadValue> for Error {
    fn from(comm_ofi::knobs::BadValue { var, value, reason }: comm_ofi::knobs::BadValue) -> Self {
        Error::Env { var, value, reason }
    }
}

impl From<Error> for comm_ofi::Error {
    fn from(e: Error) -> comm_ofi::Error {
        match e {
            Error::Comm(c) => c,
            other => comm_ofi::Error::Unsupported(other.to_string()),
        }
    }
}
