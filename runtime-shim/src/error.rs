//! Errors of the runtime shim.
//!
//! Every bad input is a value that names what was wrong (the locale, the
//! length, the stride list, the variable and its value), never a crash or a
//! silent wrong answer. The C ABI turns each variant into one of the
//! `PGAS_ERR_*` codes of `include/pgas_shim.h` ([`Error::code`]) and keeps the
//! message for `pgas_last_error`.

use comm_ofi::{AmoOp, AmoType, Locale};

/// Result alias of the shim.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the shim.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The comm layer underneath failed or refused the input.
    #[error(transparent)]
    Comm(#[from] comm_ofi::Error),
    /// The AM layer underneath failed or refused the input.
    #[error(transparent)]
    Am(#[from] amhandler::Error),
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
    /// Success.
    pub const OK: i32 = 0;
    /// The runtime is not initialized, already initialized, or finalized; or
    /// the call is not allowed here.
    pub const ERR_STATE: i32 = -1;
    /// A null pointer argument.
    pub const ERR_NULL: i32 = -2;
    /// A locale outside the job.
    pub const ERR_LOCALE: i32 = -3;
    /// A zero, oversized or otherwise impossible length (or reply buffer).
    pub const ERR_LENGTH: i32 = -4;
    /// An address outside the target's registered heap (or not local).
    pub const ERR_ADDRESS: i32 = -5;
    /// A misaligned atomic target.
    pub const ERR_ALIGN: i32 = -6;
    /// An atomic type/op that does not exist or is not defined on the type.
    pub const ERR_ATOMIC: i32 = -7;
    /// A strided transfer description that does not add up.
    pub const ERR_STRIDES: i32 = -8;
    /// A function id that is not registered (or a registration conflict).
    pub const ERR_FUNCTION: i32 = -9;
    /// An on-statement body failed at the target.
    pub const ERR_REMOTE: i32 = -10;
    /// The registered heap is exhausted.
    pub const ERR_NOMEM: i32 = -11;
    /// A bad environment variable.
    pub const ERR_ENV: i32 = -12;
    /// The network layer failed.
    pub const ERR_COMM: i32 = -13;
    /// A task panicked or another internal failure.
    pub const ERR_INTERNAL: i32 = -14;
    /// A collective failed on another locale (this one's part was fine).
    pub const ERR_COLLECTIVE: i32 = -15;

    /// Every code with its C name (for the header check and `pgas_strerror`).
    pub const ALL: [(&str, i32, &str); 16] = [
        ("PGAS_OK", OK, "success"),
        (
            "PGAS_ERR_STATE",
            ERR_STATE,
            "runtime not initialized, already initialized, finalized, or call not allowed here",
        ),
        ("PGAS_ERR_NULL", ERR_NULL, "null pointer argument"),
        ("PGAS_ERR_LOCALE", ERR_LOCALE, "locale out of range"),
        (
            "PGAS_ERR_LENGTH",
            ERR_LENGTH,
            "zero, oversized or impossible length",
        ),
        (
            "PGAS_ERR_ADDRESS",
            ERR_ADDRESS,
            "bad address: outside the registered heap, or not a live allocation",
        ),
        ("PGAS_ERR_ALIGN", ERR_ALIGN, "misaligned atomic target"),
        (
            "PGAS_ERR_ATOMIC",
            ERR_ATOMIC,
            "atomic type or op not defined",
        ),
        (
            "PGAS_ERR_STRIDES",
            ERR_STRIDES,
            "bad strided transfer description",
        ),
        (
            "PGAS_ERR_FUNCTION",
            ERR_FUNCTION,
            "function id not registered",
        ),
        (
            "PGAS_ERR_REMOTE",
            ERR_REMOTE,
            "on-statement body failed at the target",
        ),
        ("PGAS_ERR_NOMEM", ERR_NOMEM, "registered heap exhausted"),
        ("PGAS_ERR_ENV", ERR_ENV, "bad environment variable"),
        ("PGAS_ERR_COMM", ERR_COMM, "network layer failure"),
        (
            "PGAS_ERR_INTERNAL",
            ERR_INTERNAL,
            "internal failure (task panicked)",
        ),
        (
            "PGAS_ERR_COLLECTIVE",
            ERR_COLLECTIVE,
            "collective failed on another locale",
        ),
    ];
}

fn comm_code(e: &comm_ofi::Error) -> i32 {
    use comm_ofi::Error as C;
    match e {
        C::InvalidLocale { .. } => code::ERR_LOCALE,
        C::AddressOutOfHeap { .. } | C::BadFree { .. } => code::ERR_ADDRESS,
        C::InvalidSize { .. } => code::ERR_LENGTH,
        C::Misaligned { .. } => code::ERR_ALIGN,
        C::OutOfMemory { .. } => code::ERR_NOMEM,
        C::Env { .. } | C::ModeUnsupported { .. } | C::NoProvider(_) => code::ERR_ENV,
        _ => code::ERR_COMM,
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
        use amhandler::Error as A;
        match self {
            Error::Comm(c) => comm_code(c),
            Error::Am(a) => match a {
                A::Comm(c) => comm_code(c),
                A::Env { .. } => code::ERR_ENV,
                A::Registry(_) => code::ERR_FUNCTION,
                A::Remote { .. } => code::ERR_REMOTE,
                A::TooLarge { .. } => code::ERR_LENGTH,
                A::Unsupported(_) => code::ERR_ATOMIC,
                A::Shutdown(_) => code::ERR_STATE,
                _ => code::ERR_INTERNAL,
            },
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
        let e = Error::Comm(comm_ofi::Error::InvalidLocale {
            locale: 9,
            num_locales: 2,
        });
        assert_eq!(e.code(), code::ERR_LOCALE);
    }
}
