//! Errors of the comm layer.
//!
//! Every libfabric failure carries the call that failed, its return code and
//! `fi_strerror` text; every bad input names the bad value, so a user can see
//! what to change without a debugger.

pub use crate::ofi::error::{strerror, OfiError};
use mcm::Locale;

/// Result alias for the comm layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the comm layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A libfabric call failed.
    #[error(transparent)]
    Ofi(#[from] OfiError),
    /// The provider's transmit queue is full and the context was told not
    /// to wait (the AM poller's, which must keep receiving): nothing
    /// was posted; try again later.
    #[error("{call} would block: the transmit queue is full (retry later)")]
    WouldBlock {
        /// The libfabric function.
        call: &'static str,
    },
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
    /// No provider could be used (or the forced one is unknown).
    #[error("{0}")]
    NoProvider(String),
    /// The forced MCM mode cannot be honoured by the (forced or chosen) provider.
    #[error("MCM mode {mode} is not supported by provider {provider}; it supports: {supported}")]
    ModeUnsupported {
        /// The mode asked for.
        mode: String,
        /// The provider.
        provider: String,
        /// What the provider can do, as a list.
        supported: String,
    },
    /// A locale number outside the job.
    #[error(
        "locale {locale} is out of range: the job has {num_locales} locales (0..{num_locales})"
    )]
    InvalidLocale {
        /// The bad locale.
        locale: Locale,
        /// The job size.
        num_locales: Locale,
    },
    /// A remote address outside the target's registered memory.
    #[error(
        "address {addr:#x} (+{len} bytes) on locale {locale} is outside its registered heap \
         [{base:#x}, {end:#x})"
    )]
    AddressOutOfHeap {
        /// Target locale.
        locale: Locale,
        /// The address.
        addr: u64,
        /// Length of the access.
        len: usize,
        /// Heap start on that locale.
        base: u64,
        /// Heap end on that locale.
        end: u64,
    },
    /// An access size the operation cannot take.
    #[error("invalid size {size} for {what}: {reason}")]
    InvalidSize {
        /// The operation.
        what: &'static str,
        /// The bad size.
        size: usize,
        /// Why.
        reason: String,
    },
    /// A misaligned atomic target.
    #[error("address {addr:#x} on locale {locale} is not {align}-byte aligned for a {what}")]
    Misaligned {
        /// Target locale.
        locale: Locale,
        /// The address.
        addr: u64,
        /// Required alignment.
        align: usize,
        /// The operation.
        what: &'static str,
    },
    /// Freeing an address that is not a live allocation of this locale
    /// (freed already, a pointer into one, another locale's memory).
    #[error("cannot free address {addr:#x} of locale {locale}: {reason}")]
    BadFree {
        /// The locale the address was given for.
        locale: Locale,
        /// The address.
        addr: u64,
        /// What the address is instead.
        reason: String,
    },
    /// A PUT, GET or atomic that does not reach the peer (it died, or the
    /// network failed): names the operation and the peer.
    #[error("{op} with locale {locale} failed: {source}")]
    Peer {
        /// "PUT of 8 bytes", "GET of 4096 bytes", "atomic", "active message"...
        op: String,
        /// The peer.
        locale: Locale,
        /// What libfabric said.
        source: OfiError,
    },
    /// The registered heap cannot satisfy an allocation.
    #[error("registered heap exhausted: cannot allocate {size} bytes (heap {heap_size} bytes, set PGAS_HEAP_SIZE)")]
    OutOfMemory {
        /// Bytes asked for.
        size: usize,
        /// Heap size.
        heap_size: usize,
    },
    /// An operation the provider cannot do natively and whose fallback is missing.
    #[error("{0}")]
    Unsupported(String),
    /// The out-of-band bootstrap failed.
    #[error("bootstrap: {0}")]
    Bootstrap(#[from] bootstrap::OobError),
    /// Start-up exchange produced inconsistent data.
    #[error("start-up exchange: {0}")]
    Exchange(String),
    /// A setting that must be the same on every locale differs between them.
    #[error(
        "{knob} must be the same on every locale (it decides how atomics are carried, which \
         every locale must agree on), but {values}"
    )]
    Disagree {
        /// The knob.
        knob: String,
        /// Its values and the locales that have each.
        values: String,
    },
}

/// Names the operation and the peer in a libfabric failure (the completion
/// error itself, "Operation canceled", says neither); other errors pass.
pub(crate) fn peer_err(
    op: &'static str,
    len: usize,
    locale: Locale,
) -> impl FnOnce(Error) -> Error {
    move |e| name_peer(e, op, len, locale)
}

/// [`peer_err`]'s work, out of line: only a failure gets here, and a call
/// that succeeds carries none of it.
#[cold]
#[inline(never)]
fn name_peer(e: Error, op: &'static str, len: usize, locale: Locale) -> Error {
    match e {
        Error::Ofi(source) => Error::Peer {
            op: if len > 0 {
                format!("{op} of {len} bytes")
            } else {
                op.to_string()
            },
            locale,
            source,
        },
        e => e,
    }
}
