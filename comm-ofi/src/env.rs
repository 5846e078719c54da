//! The user's knobs: environment variables, parsed once at start-up.
//!
//! Every bad value is an error that names the variable, the value and what
//! would have been accepted.

use crate::error::{Error, Result};
use crate::Mode;

/// Default registered heap per locale (lazily backed: untouched pages cost nothing).
pub const DEFAULT_HEAP_SIZE: usize = 256 << 20;

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
    /// `PGAS_NUM_WORKERS`: worker threads per locale, each with its own context.
    pub num_workers: usize,
    /// `PGAS_AM_HANDLERS`: AM handler threads, each with its own context.
    pub am_handlers: usize,
    /// `PGAS_MAX_TX_CONTEXTS`: cap on transmit contexts (default: what the
    /// provider allows). Below 1 + handlers + workers the layer runs unbound.
    pub max_tx_contexts: Option<usize>,
    /// `PGAS_AMO_VIA_AM=1`: every atomic type goes by CPU atomics at the
    /// word's owner (through an AM), even where the provider has it natively.
    pub amo_via_am: bool,
    /// `PGAS_MCM_WEAKEN` (TEST-ONLY, breaks the memory model): one of
    /// [`mcm::Weakening::ALL`]'s spellings, the litmus suites' negative controls.
    pub weaken: Option<mcm::Weakening>,
}

fn parse_count(var_name: &'static str, default: usize, max: usize) -> Result<usize> {
    match var(var_name) {
        None => Ok(default),
        Some(v) => match v.trim().parse::<usize>() {
            Ok(k) if (1..=max).contains(&k) => Ok(k),
            _ => Err(Error::Env {
                var: var_name,
                value: v.clone(),
                reason: format!("expected a whole number from 1 to {max}"),
            }),
        },
    }
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Parses a byte size: `4096`, `64k`, `256M`, `1G`, `2GiB`, `512MB`.
pub fn parse_size(var_name: &'static str, value: &str) -> Result<usize> {
    let bad = |reason: &str| Error::Env {
        var: var_name,
        value: value.to_string(),
        reason: reason.to_string(),
    };
    let v = value.trim();
    let digits_end = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    if digits_end == 0 {
        return Err(bad("expected a size such as 1048576, 64K, 256M or 1G"));
    }
    let n: usize = v[..digits_end]
        .parse()
        .map_err(|_| bad("number too large"))?;
    let mult: usize = match v[digits_end..].trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(bad("unknown unit; use K, M, G or T (powers of 1024)")),
    };
    n.checked_mul(mult).ok_or_else(|| bad("size overflows"))
}

fn parse_bool(var_name: &'static str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(Error::Env {
            var: var_name,
            value: value.to_string(),
            reason: "expected 1/0, true/false, yes/no or on/off".into(),
        }),
    }
}

impl Config {
    /// Reads the environment.
    pub fn from_env() -> Result<Config> {
        let mode = match var("PGAS_MCM_MODE") {
            None => None,
            Some(v) if v.trim().eq_ignore_ascii_case("auto") => None,
            Some(v) => Some(v.trim().parse::<Mode>().map_err(|e| Error::Env {
                var: "PGAS_MCM_MODE",
                value: v.clone(),
                reason: format!(
                    "{e}; valid: auto, message-order-fence, message-order, delivery-complete"
                ),
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
        let num_workers = parse_count("PGAS_NUM_WORKERS", cores, 1024)?;
        let am_handlers = parse_count("PGAS_AM_HANDLERS", 1, 64)?;
        let max_tx_contexts = match var("PGAS_MAX_TX_CONTEXTS") {
            None => None,
            Some(_) => Some(parse_count("PGAS_MAX_TX_CONTEXTS", 1, 1 << 16)?),
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
