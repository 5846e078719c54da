//! Errors of the runtime shim.
//!
//! Every bad input is a value that names what was wrong (the locale, the
//! length, the stride list, the variable and its value), never a crash or a
//! silent wrong answer. The C ABI turns each variant into one of the
//! `PGAS_ERR_*` codes of `include/pgas_shim.h` ([`Error::code`]) and keeps the
//! message for `pgas_last_error`.
//!
//! The layers underneath (comm-ofi, amhandler) have their own error enums;
//! they stay out of this crate's public type: a failure there is an opaque
//! [`CommError`] whose message is theirs, whose [`CommError::kind`] says
//! what kind of failure it is, and whose `source()` chain leads to the
//! libfabric return code, so those crates can change without breaking the
//! programs that match on [`Error`].
//!
//! `Debug` prints the message and its causes (as `anyhow` does), because
//! that is what `fn main() -> runtime_shim::Result<()>` shows a user when it
//! returns an error: `Error: no libfabric provider ...`, not the enum.

use comm_ofi::{AmoOp, AmoType, Locale};

/// Result alias of the shim.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the shim.
///
/// Its `Debug` is its `Display` followed by the causes (see the module
/// comment), so `main` returning it prints a sentence:
///
/// ```
/// let e = runtime_shim::Error::InvalidLocale { locale: 7, num_locales: 2 };
/// assert_eq!(
///     format!("{e:?}"),
///     "locale 7 is out of range: the job has 2 locales (0..2)"
/// );
/// ```
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The network (comm) or active-message layer underneath failed or
    /// refused the input: its message, its [`CommErrorKind`], its causes.
    #[error(transparent)]
    Comm(CommError),
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
    /// A locale number outside the job (C callers can pass negative ones).
    #[error(
        "locale {locale} is out of range: the job has {num_locales} locales (0..{num_locales})"
    )]
    InvalidLocale {
        /// The bad locale.
        locale: i64,
        /// The job size.
        num_locales: Locale,
    },
    /// A null pointer where an address was needed (C ABI).
    #[error("null pointer passed as {what}")]
    NullPointer {
        /// Which argument.
        what: &'static str,
    },
    /// A length the operation cannot take.
    #[error("invalid length {len} for {what}: {reason}")]
    InvalidLength {
        /// The operation or argument.
        what: &'static str,
        /// The bad length.
        len: u64,
        /// Why.
        reason: String,
    },
    /// A strided transfer description that does not add up.
    #[error("invalid strided transfer: {0}")]
    Strides(String),
    /// An atomic operation that is not defined on the type (bitwise on floats).
    #[error("atomic {op:?} is not defined on {ty:?}")]
    BadAtomic {
        /// The type.
        ty: AmoType,
        /// The op.
        op: AmoOp,
    },
    /// An atomic used in a way it has no form for (an unordered exchange, ...).
    #[error("{0}")]
    AtomicUse(String),
    /// A type or op code (C ABI) that names nothing.
    #[error("unknown {what} code {code}")]
    BadCode {
        /// "atomic type", "atomic op", ...
        what: &'static str,
        /// The code given.
        code: i64,
    },
    /// An address that is not the kind the call needs (e.g. not on this locale).
    #[error("address {addr:#x} on locale {locale}: {reason}")]
    BadAddress {
        /// Locale of the address.
        locale: Locale,
        /// The address.
        addr: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// The runtime has not been initialized in this process.
    #[error("the runtime is not initialized: call init first")]
    NotInitialized,
    /// `init` was called twice in one process.
    #[error("the runtime is already initialized in this process (init may be called once)")]
    AlreadyInitialized,
    /// The runtime was finalized.
    #[error("the runtime was finalized: no communication is possible any more")]
    Finalized,
    /// A call made where it is not allowed (finalize from a task, ...).
    #[error("{0}")]
    State(String),
    /// A task panicked.
    #[error("task panicked: {0}")]
    TaskPanicked(String),
    /// An on-statement reply does not fit the caller's buffer (C ABI).
    #[error("the reply of {len} bytes does not fit the {cap}-byte buffer")]
    ReplyTooLarge {
        /// Reply length.
        len: usize,
        /// Buffer capacity.
        cap: usize,
    },
    /// A collective whose part failed on another locale (every locale gets
    /// an error, none waits forever): names that locale and its message.
    #[error("{op} failed on locale {locale}: {reason}")]
    Collective {
        /// The collective ("barrier", "broadcast", "alloc_all").
        op: &'static str,
        /// The locale whose part failed.
        locale: Locale,
        /// Its message.
        reason: String,
    },
    /// A worker thread could not be started or bound.
    #[error("cannot start worker thread {index}: {reason}")]
    Worker {
        /// Worker number.
        index: usize,
        /// Why.
        reason: String,
    },
}

/// The C ABI's error codes (`PGAS_OK` and `PGAS_ERR_*` in `include/pgas_shim.h`;
/// a test checks that both lists agree).
pub mod code {
    /// Declares each code as a constant and lists them all in `ALL` with
    /// their C names and `pgas_strerror` texts.
    macro_rules! codes {
        ($($(#[$doc:meta])* $name:ident = $value:literal => $text:literal;)*) => {
            $($(#[$doc])* pub const $name: i32 = $value;)*
            /// Every code with its C name (for the header check and `pgas_strerror`).
            pub const ALL: [(&str, i32, &str); [$($value),*].len()] =
                [$((concat!("PGAS_", stringify!($name)), $name, $text)),*];
        };
    }

    codes! {
        /// Success.
        OK = 0 => "success";
        /// The runtime is not initialized, already initialized, or finalized; or
        /// the call is not allowed here.
        ERR_STATE = -1 =>
            "runtime not initialized, already initialized, finalized, or call not allowed here";
        /// A null pointer argument.
        ERR_NULL = -2 => "null pointer argument";
        /// A locale outside the job.
        ERR_LOCALE = -3 => "locale out of range";
        /// A zero, oversized or otherwise impossible length (or reply buffer).
        ERR_LENGTH = -4 => "zero, oversized or impossible length";
        /// An address outside the target's registered heap (or not local).
        ERR_ADDRESS = -5 =>
            "bad address: outside the registered heap, or not a live allocation";
        /// A misaligned atomic target.
        ERR_ALIGN = -6 => "misaligned atomic target";
        /// An atomic type/op that does not exist or is not defined on the type.
        ERR_ATOMIC = -7 => "atomic type or op not defined";
        /// A strided transfer description that does not add up.
        ERR_STRIDES = -8 => "bad strided transfer description";
        /// A function id that is not registered (or a registration conflict).
        ERR_FUNCTION = -9 => "function id not registered";
        /// An on-statement body failed at the target.
        ERR_REMOTE = -10 => "on-statement body failed at the target";
        /// The registered heap is exhausted.
        ERR_NOMEM = -11 => "registered heap exhausted";
        /// A bad environment variable.
        ERR_ENV = -12 => "bad environment variable";
        /// The network layer failed.
        ERR_COMM = -13 => "network layer failure";
        /// A task panicked or another internal failure.
        ERR_INTERNAL = -14 => "internal failure (task panicked)";
        /// A collective failed on another locale (this one's part was fine).
        ERR_COLLECTIVE = -15 => "collective failed on another locale";
    }
}

/// What kind of failure a [`CommError`] is (the layers' own error types
/// stay private; new kinds may be added).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CommErrorKind {
    /// A libfabric call failed (the message names it and its return code).
    Network,
    /// A PUT, GET, atomic or active message did not reach its peer (the
    /// peer died or the network failed): [`CommError::locale`] names it.
    PeerLost,
    /// An environment variable or setting the layer cannot use, or a mode
    /// the provider cannot honour.
    Config,
    /// No libfabric provider could be used (or the forced one is unknown).
    NoProvider,
    /// A locale outside the job.
    InvalidLocale,
    /// An address outside the target's registered heap.
    AddressOutOfHeap,
    /// A misaligned atomic target.
    Misaligned,
    /// Freeing something that is not a live allocation.
    BadFree,
    /// An access size the operation cannot take.
    InvalidSize,
    /// The registered heap is exhausted (`PGAS_HEAP_SIZE`).
    OutOfMemory,
    /// An operation the provider and its fallbacks cannot do.
    Unsupported,
    /// The start-up exchange (launcher, PMIx, agreement between locales)
    /// failed.
    Startup,
    /// Registering an on-statement body failed (duplicate, collision).
    Registration,
    /// An on-statement body failed at its target: [`CommError::locale`].
    RemoteFailure,
    /// A request too large to carry.
    TooLarge,
    /// The layer is shut down (finalize has begun).
    Shutdown,
    /// One of the layer's threads could not be started, or another
    /// internal failure.
    Internal,
}

/// A failure of the network (comm-ofi) or active-message (amhandler) layer
/// under the shim. Opaque: its `Display` is the layer's message (naming the
/// call, value, locale), [`CommError::kind`] and [`CommError::locale`] are
/// what code can ask, and `source()` goes on to the cause (a libfabric
/// return code, a launcher error).
pub struct CommError(Lower);

enum Lower {
    Comm(comm_ofi::Error),
    Am(amhandler::Error),
}

impl CommError {
    /// What kind of failure this is.
    pub fn kind(&self) -> CommErrorKind {
        use comm_ofi::Error as C;
        use CommErrorKind as K;
        match &self.0 {
            Lower::Comm(c) => match c {
                C::Ofi(_) | C::WouldBlock { .. } => K::Network,
                C::Peer { .. } => K::PeerLost,
                C::Env { .. } | C::ModeUnsupported { .. } => K::Config,
                C::NoProvider(_) => K::NoProvider,
                C::InvalidLocale { .. } => K::InvalidLocale,
                C::AddressOutOfHeap { .. } => K::AddressOutOfHeap,
                C::Misaligned { .. } => K::Misaligned,
                C::BadFree { .. } => K::BadFree,
                C::InvalidSize { .. } => K::InvalidSize,
                C::OutOfMemory { .. } => K::OutOfMemory,
                C::Unsupported(_) => K::Unsupported,
                C::Bootstrap(_) | C::Exchange(_) | C::Disagree { .. } => K::Startup,
                _ => K::Internal,
            },
            Lower::Am(a) => {
                use amhandler::Error as A;
                match a {
                    A::Env { .. } => K::Config,
                    A::Registry(_) => K::Registration,
                    A::Remote { .. } => K::RemoteFailure,
                    A::TooLarge { .. } => K::TooLarge,
                    A::Unsupported(_) => K::Unsupported,
                    A::Shutdown(_) => K::Shutdown,
                    _ => K::Internal,
                }
            }
        }
    }

    /// Whether an operation failed because its peer is gone (or the network
    /// to it): the job cannot go on with that locale.
    pub fn is_peer_lost(&self) -> bool {
        self.kind() == CommErrorKind::PeerLost
    }

    /// The locale the failure names, if it names one (the lost peer, the
    /// target whose heap the address is outside of, the locale where an
    /// on-statement body failed, ...).
    pub fn locale(&self) -> Option<Locale> {
        use comm_ofi::Error as C;
        match &self.0 {
            Lower::Comm(c) => match c {
                C::Peer { locale, .. }
                | C::AddressOutOfHeap { locale, .. }
                | C::Misaligned { locale, .. }
                | C::BadFree { locale, .. } => Some(*locale),
                C::InvalidLocale { locale, .. } => Some(*locale),
                _ => None,
            },
            Lower::Am(a) => match a {
                amhandler::Error::Remote { locale, .. }
                | amhandler::Error::TooLarge { locale, .. } => Some(*locale),
                _ => None,
            },
        }
    }

    fn code(&self) -> i32 {
        use CommErrorKind as K;
        match self.kind() {
            K::InvalidLocale => code::ERR_LOCALE,
            K::AddressOutOfHeap | K::BadFree => code::ERR_ADDRESS,
            K::InvalidSize | K::TooLarge => code::ERR_LENGTH,
            K::Misaligned => code::ERR_ALIGN,
            K::OutOfMemory => code::ERR_NOMEM,
            K::Config | K::NoProvider => code::ERR_ENV,
            K::Registration => code::ERR_FUNCTION,
            K::RemoteFailure => code::ERR_REMOTE,
            K::Shutdown => code::ERR_STATE,
            K::Unsupported => match &self.0 {
                // The AM layer's refusals are bad atomic type/op pairs.
                Lower::Am(_) => code::ERR_ATOMIC,
                Lower::Comm(_) => code::ERR_COMM,
            },
            K::Internal => match &self.0 {
                Lower::Am(_) => code::ERR_INTERNAL,
                Lower::Comm(_) => code::ERR_COMM,
            },
            K::Network | K::PeerLost | K::Startup => code::ERR_COMM,
        }
    }

    fn lower(&self) -> &(dyn std::error::Error + 'static) {
        match &self.0 {
            Lower::Comm(c) => c,
            Lower::Am(a) => a,
        }
    }
}

impl std::fmt::Display for CommError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.lower(), f)
    }
}

impl std::fmt::Debug for CommError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommError")
            .field("kind", &self.kind())
            .field("message", &self.to_string())
            .finish()
    }
}

impl std::error::Error for CommError {
    /// The lower layer's cause (its own message is this one's: transparent).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.lower().source()
    }
}

/// For the shim's own code (`?` on a comm-layer call); the layer's type is
/// not part of the public error.
impl From<comm_ofi::Error> for Error {
    fn from(e: comm_ofi::Error) -> Error {
        Error::Comm(CommError(Lower::Comm(e)))
    }
}

/// For the shim's own code (`?` on an AM-layer call); a comm failure the
/// AM layer passed up becomes the comm layer's own.
impl From<amhandler::Error> for Error {
    fn from(e: amhandler::Error) -> Error {
        match e {
            amhandler::Error::Comm(c) => Error::from(c),
            other => Error::Comm(CommError(Lower::Am(other))),
        }
    }
}

/// The message, then each cause not already part of it ("Caused by"), as
/// `anyhow` prints an error: what `main` returning an `Error` shows.
impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let msg = self.to_string();
        f.write_str(&msg)?;
        let mut seen = msg;
        let mut cause = std::error::Error::source(self);
        let mut first = true;
        while let Some(c) = cause {
            let text = c.to_string();
            if !seen.contains(&text) {
                if first {
                    f.write_str("\n\nCaused by:")?;
                    first = false;
                }
                write!(f, "\n    {text}")?;
                seen.push_str(&text);
            }
            cause = c.source();
        }
        Ok(())
    }
}

impl From<comm_ofi::knobs::BadValue> for Error {
    fn from(comm_ofi::knobs::BadValue { var, value, reason }: comm_ofi::knobs::BadValue) -> Self {
        Error::Env { var, value, reason }
    }
}

impl Error {
    /// The C ABI code of this error.
    pub fn code(&self) -> i32 {
        match self {
            Error::Comm(c) => c.code(),
            Error::Env { .. } => code::ERR_ENV,
            Error::InvalidLocale { .. } => code::ERR_LOCALE,
            Error::NullPointer { .. } => code::ERR_NULL,
            Error::InvalidLength { .. } | Error::ReplyTooLarge { .. } => code::ERR_LENGTH,
            Error::Strides(_) => code::ERR_STRIDES,
            Error::BadAtomic { .. } | Error::BadCode { .. } | Error::AtomicUse(_) => {
                code::ERR_ATOMIC
            }
            Error::BadAddress { .. } => code::ERR_ADDRESS,
            Error::NotInitialized
            | Error::AlreadyInitialized
            | Error::Finalized
            | Error::State(_) => code::ERR_STATE,
            Error::TaskPanicked(_) | Error::Worker { .. } => code::ERR_INTERNAL,
            Error::Collective { .. } => code::ERR_COLLECTIVE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_messages_name_values() {
        let mut seen = std::collections::HashSet::new();
        for (_, c, _) in code::ALL {
            assert!(seen.insert(c), "duplicate code {c}");
        }
        let e = Error::InvalidLocale {
            locale: -1,
            num_locales: 2,
        };
        assert!(e.to_string().contains("-1"), "{e}");
        assert_eq!(e.code(), code::ERR_LOCALE);
        let e = Error::InvalidLength {
            what: "PUT",
            len: 0,
            reason: "zero-length transfer".into(),
        };
        assert!(e.to_string().contains("length 0"), "{e}");
        let e = Error::from(comm_ofi::Error::InvalidLocale {
            locale: 9,
            num_locales: 2,
        });
        assert_eq!(e.code(), code::ERR_LOCALE);
        let Error::Comm(c) = &e else {
            panic!("not a comm error: {e}")
        };
        assert_eq!(c.kind(), CommErrorKind::InvalidLocale);
        assert_eq!(c.locale(), Some(9));
        assert!(!c.is_peer_lost());
        let e = Error::from(amhandler::Error::Registry("dup".into()));
        assert_eq!(e.code(), code::ERR_FUNCTION);
        let e = Error::from(amhandler::Error::Comm(comm_ofi::Error::OutOfMemory {
            size: 8,
            heap_size: 4,
        }));
        assert_eq!(
            e.code(),
            code::ERR_NOMEM,
            "the AM layer's comm error is the comm layer's"
        );
    }

    #[test]
    fn debug_is_the_message_and_its_causes() {
        let e = Error::from(comm_ofi::Error::NoProvider(
            "no libfabric provider matched PGAS_PROVIDER=nope".into(),
        ));
        let d = format!("{e:?}");
        assert_eq!(d, "no libfabric provider matched PGAS_PROVIDER=nope");
        assert!(!d.contains("Comm("), "{d}");
        // A cause already in the message (thiserror's `{0}`) is not repeated.
        let e = Error::from(comm_ofi::Error::Bootstrap(
            bootstrap::OobError::PmixUnavailable("no libpmix".into()),
        ));
        assert!(std::error::Error::source(&e).is_some(), "the chain goes on");
        let d = format!("{e:?}");
        assert_eq!(d, e.to_string());
        assert!(
            d.starts_with("bootstrap: started by a PMIx launcher"),
            "{d}"
        );
    }
}
