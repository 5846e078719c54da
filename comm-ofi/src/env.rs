//! The comm layer's knobs: environment variables, parsed once at start-up
//! (the table of every knob, with the shared parsers: [`crate::knobs`]).
//!
//! Every bad value is an error that names the variable, the value and what
//! would have been accepted.

use crate::error::{Error, Result};
use crate::knobs::{self, parse_bool, parse_count, parse_up_to};
use crate::Mode;

/// Default registered heap per locale (lazily backed: untouched pages cost nothing).
pub const DEFAULT_HEAP_SIZE: usize = 256 << 20;
/// Default transmit contexts for other threads (the main thread and one more).
pub const DEFAULT_THREAD_CONTEXTS: usize = 2;
/// Default idle polling before a poller blocks (microseconds).
pub const DEFAULT_POLL_SPIN_US: u64 = 200;
/// Most AM handler threads (`PGAS_AM_HANDLERS`).
pub const MAX_AM_HANDLERS: usize = 64;

/// Everything the comm layer reads from the environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// `PGAS_MCM_MODE` (None = auto).
    pub mode: Option<Mode>,
    /// `PGAS_PROVIDER`, else `FI_PROVIDER`.
    pub provider: Option<String>,
    /// `PGAS_HEAP_SIZE`.
    pub heap_size: usize,
    /// `PGAS_VERBOSE` (0 = quiet).
    pub verbose: u32,
    /// `PGAS_MAX_MSG_SIZE`: cap on one transfer (chunking above it); None = provider's.
    pub max_msg_size: Option<usize>,
    /// `PGAS_NATIVE_AMO=0` disables native atomics (AMOs then go through AMs).
    pub native_amo: bool,
    /// `PGAS_CQ_WAIT` = `spin` | `block` | `auto`.
    pub cq_wait: Option<crate::ofi::WaitMode>,
    /// `PGAS_NUM_WORKERS`: worker threads per locale, each with its own
    /// context. Default: the cores this locale owns (the cores available,
    /// shared out among the locales on this host; set at start-up once the
    /// co-located locales are known).
    pub num_workers: usize,
    /// Whether `PGAS_NUM_WORKERS` was given (else `num_workers` is the
    /// start-up's share of the cores).
    pub num_workers_set: bool,
    /// `PGAS_THREAD_CONTEXTS`: transmit contexts for threads that are
    /// neither workers nor AM threads (the main thread, a runtime's own
    /// threads through `Comm::bind_thread`).
    pub thread_contexts: usize,
    /// `PGAS_LOCAL_PATH`: how locales on one host reach each other's heaps.
    pub local_path: crate::mapped::LocalPath,
    /// `PGAS_POLL_SPIN_US`: how long an idle progress/AM poller keeps
    /// polling before it blocks (where it may block at all).
    pub poll_spin_us: u64,
    /// `PGAS_TEST_HOSTNAMES` (TEST-ONLY): comma-separated host names by
    /// rank, replacing the real host name (simulates several hosts).
    pub test_hostnames: Option<Vec<String>>,
    /// `PGAS_AM_HANDLERS`: AM handler threads, each with its own context.
    pub am_handlers: usize,
    /// `PGAS_MAX_TX_CONTEXTS`: cap on transmit contexts (default: what the
    /// provider allows). Below 2 + handlers + workers the workers run
    /// unbound; below 2 + handlers it is an error (the context table:
    /// `comm.rs`, `Layout`).
    pub max_tx_contexts: Option<usize>,
    /// `PGAS_AMO_VIA_AM=1`: every atomic type goes by CPU atomics at the
    /// word's owner (through an AM), even where the provider has it natively.
    pub amo_via_am: bool,
    /// `PGAS_MCM_WEAKEN` (TEST-ONLY, breaks the memory model): one of
    /// [`mcm::Weakening::ALL`]'s spellings, the litmus suites' negative controls.
    pub weaken: Option<mcm::Weakening>,
}

/// Parses a byte size: `4096`, `64k`, `256M`, `1G`, `2GiB`, `512MB`
/// ([`knobs::parse_size`] with this crate's error).
pub fn parse_size(var_name: &'static str, value: &str) -> Result<usize> {
    Ok(knobs::parse_size(var_name, value)?)
}

impl Config {
    /// Reads the environment.
    pub fn from_env() -> Result<Config> {
        Config::from_lookup(knobs::var)
    }

    /// Reads the knobs through `lookup` (the environment, or a map in
    /// tests); a blank value counts as unset.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let mode = match var("PGAS_MCM_MODE") {
            None => None,
            Some(v) if v.trim().eq_ignore_ascii_case("auto") => None,
            Some(v) => Some(v.trim().parse::<Mode>().map_err(|e| Error::Env {
                var: "PGAS_MCM_MODE",
                value: v.clone(),
                reason: format!("{e}, or auto"),
            })?),
        };
        let provider = var("PGAS_PROVIDER").or_else(|| var("FI_PROVIDER"));
        let heap_size = match var("PGAS_HEAP_SIZE") {
            None => DEFAULT_HEAP_SIZE,
            Some(v) => {
                let s = parse_size("PGAS_HEAP_SIZE", &v)?;
                if s < (1 << 20) {
                    return Err(Error::Env {
                        var: "PGAS_HEAP_SIZE",
                        value: v,
                        reason: "the heap must be at least 1M".into(),
                    });
                }
                s
            }
        };
        let verbose = match var("PGAS_VERBOSE") {
            None => 0,
            Some(v) => v.trim().parse().map_err(|_| Error::Env {
                var: "PGAS_VERBOSE",
                value: v.clone(),
                reason: "expected a level: 0, 1, 2 ...".into(),
            })?,
        };
        let max_msg_size = match var("PGAS_MAX_MSG_SIZE") {
            None => None,
            Some(v) => {
                let s = parse_size("PGAS_MAX_MSG_SIZE", &v)?;
                if s < 64 {
                    return Err(Error::Env {
                        var: "PGAS_MAX_MSG_SIZE",
                        value: v,
                        reason: "must be at least 64 bytes".into(),
                    });
                }
                Some(s)
            }
        };
        let native_amo = match var("PGAS_NATIVE_AMO") {
            None => true,
            Some(v) => parse_bool("PGAS_NATIVE_AMO", &v)?,
        };
        let cq_wait = match var("PGAS_CQ_WAIT").as_deref().map(str::trim) {
            None | Some("auto") => None,
            Some("spin") => Some(crate::ofi::WaitMode::Spin),
            Some("block") => Some(crate::ofi::WaitMode::Block),
            Some(other) => {
                return Err(Error::Env {
                    var: "PGAS_CQ_WAIT",
                    value: other.to_string(),
                    reason: "expected auto, spin or block".into(),
                })
            }
        };
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let num_workers_set = var("PGAS_NUM_WORKERS").is_some();
        let num_workers = match var("PGAS_NUM_WORKERS") {
            None => cores,
            Some(v) => parse_count("PGAS_NUM_WORKERS", &v, 1, 1024)?,
        };
        let thread_contexts = match var("PGAS_THREAD_CONTEXTS") {
            None => DEFAULT_THREAD_CONTEXTS,
            Some(v) => parse_up_to("PGAS_THREAD_CONTEXTS", &v, 1024, "a whole number")? as usize,
        };
        let local_path = match var("PGAS_LOCAL_PATH") {
            None => crate::mapped::LocalPath::Mapped,
            Some(v) => v.parse().map_err(|reason| Error::Env {
                var: "PGAS_LOCAL_PATH",
                value: v.clone(),
                reason,
            })?,
        };
        let poll_spin_us = match var("PGAS_POLL_SPIN_US") {
            None => DEFAULT_POLL_SPIN_US,
            Some(v) => parse_up_to("PGAS_POLL_SPIN_US", &v, 10_000_000, "microseconds")?,
        };
        let test_hostnames = var("PGAS_TEST_HOSTNAMES").map(|v| {
            v.split(',')
                .map(|h| h.trim().to_string())
                .collect::<Vec<_>>()
        });
        if let Some(names) = &test_hostnames {
            if names.iter().any(|h| h.is_empty()) {
                return Err(Error::Env {
                    var: "PGAS_TEST_HOSTNAMES",
                    value: names.join(","),
                    reason: "test-only; expected one non-empty host name per rank, comma-separated"
                        .into(),
                });
            }
        }
        let am_handlers = match var("PGAS_AM_HANDLERS") {
            None => 1,
            Some(v) => parse_count("PGAS_AM_HANDLERS", &v, 1, MAX_AM_HANDLERS)?,
        };
        let max_tx_contexts = match var("PGAS_MAX_TX_CONTEXTS") {
            None => None,
            Some(v) => Some(parse_count("PGAS_MAX_TX_CONTEXTS", &v, 1, 1 << 16)?),
        };
        let amo_via_am = match var("PGAS_AMO_VIA_AM") {
            None => false,
            Some(v) => parse_bool("PGAS_AMO_VIA_AM", &v)?,
        };
        let weaken = match var("PGAS_MCM_WEAKEN").as_deref().map(str::trim) {
            None | Some("none") => None,
            Some(other) => Some(mcm::Weakening::parse(other).ok_or_else(|| {
                let names: Vec<&str> = mcm::Weakening::ALL.iter().map(|w| w.name()).collect();
                Error::Env {
                    var: "PGAS_MCM_WEAKEN",
                    value: other.to_string(),
                    reason: format!("test-only switch; expected none, {}", names.join(", ")),
                }
            })?),
        };
        Ok(Config {
            amo_via_am,
            num_workers_set,
            thread_contexts,
            local_path,
            poll_spin_us,
            test_hostnames,
            max_tx_contexts,
            weaken,
            num_workers,
            am_handlers,
            mode,
            provider,
            heap_size,
            verbose,
            max_msg_size,
            native_amo,
            cq_wait,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("X", "4096").unwrap(), 4096);
        assert_eq!(parse_size("X", "64k").unwrap(), 64 << 10);
        assert_eq!(parse_size("X", "256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("X", "2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_size("X", " 1 G ").unwrap(), 1 << 30);
    }

    #[test]
    fn bad_sizes_name_the_value() {
        for bad in ["", "abc", "12Q", "-5", "99999999999999999999999"] {
            let e = parse_size("PGAS_HEAP_SIZE", bad).unwrap_err().to_string();
            assert!(e.contains("PGAS_HEAP_SIZE"), "{e}");
            assert!(e.contains(&format!("{bad:?}")), "{e}");
        }
    }

    #[test]
    fn bools() {
        assert!(parse_bool("X", "yes").unwrap());
        assert!(!parse_bool("X", "0").unwrap());
        assert!(parse_bool("X", "maybe").is_err());
    }
}
