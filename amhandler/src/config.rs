//! The AM layer's knobs, read once from the environment at start-up (the
//! table of every knob and the parsers: `comm_ofi::knobs`).
//!
//! Exists so that every knob is parsed in one place, and a bad value is an
//! error naming the variable, the value and what would be accepted, before
//! any thread starts or any buffer is posted.

use crate::error::{Error, Result};
use crate::wire::MAX_REQUEST;
use comm_ofi::knobs::{parse_bool, parse_count, parse_size, parse_up_to};

/// Default total landing-zone size (two halves of half this size).
pub const DEFAULT_LZ_SIZE: usize = 16 << 20;
/// Smallest landing zone accepted: each half must hold many of the largest
/// requests (the provider retires a half when less than
/// `FI_OPT_MIN_MULTI_RECV` is left, and that minimum is capped at 10 %).
pub const MIN_LZ_SIZE: usize = 64 << 10;
/// Default number of executor threads (bodies that are not "fast").
pub const DEFAULT_EXECUTORS: usize = 2;
/// Upper bound for thread-count knobs.
pub const MAX_THREADS: usize = 64;

/// How a target delivers the 'done' of a blocking request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoneMode {
    /// RMA: PUT the reply into the initiator's slot, force it visible, PUT
    /// the done word (the original's way).
    Put,
    /// A Reply message to the initiator, whose poller writes reply and done
    /// word into the slot (one message instead of GET + PUT(s); default).
    Msg,
}

/// How the reply of a blocking request reaches its initiator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplyRoute {
    /// The target stores reply and done word into the initiator's slot with
    /// the CPU (it maps the initiator's heap: the mapped path).
    Mapped,
    /// A Reply message into the initiator's receive queue; the initiator's
    /// poller (or the waiting thread itself) fills the slot.
    Message,
    /// RMA: the target PUTs the reply, then the done word.
    Put,
}

impl DoneMode {
    /// The one decision of a reply's route, read by both sides: the
    /// initiator (whether to poll its receive queue while it waits,
    /// `mapped`: it maps the target's heap) and the target (how to send it,
    /// `mapped`: it reaches the initiator's slot by mapping). The mapped path
    /// maps co-located heaps both ways, so the two agree.
    pub(crate) fn reply_route(self, mapped: bool) -> ReplyRoute {
        match (mapped, self) {
            (true, _) => ReplyRoute::Mapped,
            (false, DoneMode::Msg) => ReplyRoute::Message,
            (false, DoneMode::Put) => ReplyRoute::Put,
        }
    }
}

/// Every knob of the AM layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmConfig {
    /// `PGAS_AM_LZ_SIZE`: total landing-zone bytes (two halves).
    pub lz_size: usize,
    /// `PGAS_AM_HANDLERS`: handler threads (fast bodies, AMOs, no-ops).
    pub handlers: usize,
    /// `PGAS_AM_HANDLER_CORE`: pin the poller and handler threads to this core.
    pub handler_core: Option<usize>,
    /// `PGAS_AM_EXECUTORS`: executor threads (other bodies, AM-mediated RMA).
    pub executors: usize,
    /// `PGAS_AM_DONE`: `msg` (default) or `put`.
    pub done: DoneMode,
    /// `PGAS_AM_AMO_DELAY` (default on): a non-fetching AMO via AM returns
    /// without waiting for its 'done', which is awaited at the task's next
    /// MCM boundary or before its next AMO elsewhere. Only with one handler
    /// thread (with several, two AMOs could run out of order).
    pub delay_amo_done: bool,
    /// `PGAS_AM_IDLE_SLEEP_US` (default 0: never): after a long idle spell
    /// the AM poller sleeps this long between polls, sparing a shared
    /// core at the price of RMA/AMO latency against this locale.
    pub idle_sleep_us: u64,
    /// `PGAS_WORKER_POLL` (default on): where every peer maps this locale,
    /// idle workers of a tasking layer poll for requests in the poller's
    /// place (`Am::worker_poll`), so an on-statement needs no thread hop.
    pub worker_poll: bool,
}

impl Default for AmConfig {
    fn default() -> Self {
        AmConfig {
            lz_size: DEFAULT_LZ_SIZE,
            handlers: 1,
            handler_core: None,
            executors: DEFAULT_EXECUTORS,
            done: DoneMode::Msg,
            delay_amo_done: true,
            idle_sleep_us: 0,
            worker_poll: true,
        }
    }
}

fn env_err(var: &'static str, value: &str, reason: impl Into<String>) -> Error {
    Error::Env {
        var,
        value: value.to_string(),
        reason: reason.into(),
    }
}

impl AmConfig {
    /// Reads the process environment.
    pub fn from_env() -> Result<AmConfig> {
        AmConfig::from_lookup(comm_ofi::knobs::var)
    }

    /// Reads the knobs through `lookup` (tests pass a map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<AmConfig> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let mut cfg = AmConfig::default();
        if let Some(v) = get("PGAS_AM_LZ_SIZE") {
            let s = parse_size("PGAS_AM_LZ_SIZE", &v)?;
            if s < MIN_LZ_SIZE {
                return Err(env_err(
                    "PGAS_AM_LZ_SIZE",
                    &v,
                    format!(
                        "the landing zone must be at least {}K (two halves, each holding many \
                         {MAX_REQUEST}-byte requests)",
                        MIN_LZ_SIZE >> 10
                    ),
                ));
            }
            cfg.lz_size = s;
        }
        if let Some(v) = get("PGAS_AM_HANDLERS") {
            cfg.handlers = parse_count("PGAS_AM_HANDLERS", &v, 1, MAX_THREADS)?;
        }
        if let Some(v) = get("PGAS_AM_EXECUTORS") {
            cfg.executors = parse_count("PGAS_AM_EXECUTORS", &v, 1, MAX_THREADS)?;
        }
        if let Some(v) = get("PGAS_AM_HANDLER_CORE") {
            let core = v.trim().parse::<usize>().map_err(|_| {
                env_err(
                    "PGAS_AM_HANDLER_CORE",
                    &v,
                    "expected a core number (0, 1, ...)",
                )
            })?;
            cfg.handler_core = Some(core);
        }
        if let Some(v) = get("PGAS_AM_IDLE_SLEEP_US") {
            cfg.idle_sleep_us =
                parse_up_to("PGAS_AM_IDLE_SLEEP_US", &v, 1_000_000, "microseconds")?;
        }
        if let Some(v) = get("PGAS_WORKER_POLL") {
            cfg.worker_poll = parse_bool("PGAS_WORKER_POLL", &v)?;
        }
        if let Some(v) = get("PGAS_AM_AMO_DELAY") {
            cfg.delay_amo_done = parse_bool("PGAS_AM_AMO_DELAY", &v)?;
        }
        if let Some(v) = get("PGAS_AM_DONE") {
            cfg.done = match v.trim().to_ascii_lowercase().as_str() {
                "msg" | "message" => DoneMode::Msg,
                "put" | "rma" => DoneMode::Put,
                _ => return Err(env_err("PGAS_AM_DONE", &v, "expected msg or put")),
            };
        }
        Ok(cfg)
    }

    /// Bytes of one landing-zone half (8-byte multiple).
    pub fn lz_half(&self) -> usize {
        (self.lz_size / 2) & !63
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn a_mapped_peer_is_answered_in_its_slot_else_as_the_done_mode_says() {
        for done in [DoneMode::Msg, DoneMode::Put] {
            assert_eq!(done.reply_route(true), ReplyRoute::Mapped);
        }
        assert_eq!(DoneMode::Msg.reply_route(false), ReplyRoute::Message);
        assert_eq!(DoneMode::Put.reply_route(false), ReplyRoute::Put);
    }

    fn cfg(pairs: &[(&str, &str)]) -> Result<AmConfig> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        AmConfig::from_lookup(|n| m.get(n).cloned())
    }

    #[test]
    fn defaults() {
        assert_eq!(cfg(&[]).unwrap(), AmConfig::default());
    }

    #[test]
    fn amo_delay_switch() {
        assert!(cfg(&[]).unwrap().delay_amo_done);
        assert!(!cfg(&[("PGAS_AM_AMO_DELAY", "0")]).unwrap().delay_amo_done);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(
            cfg(&[("PGAS_AM_LZ_SIZE", "16M")]).unwrap().lz_size,
            16 << 20
        );
        assert_eq!(cfg(&[("PGAS_AM_LZ_SIZE", "1G")]).unwrap().lz_size, 1 << 30);
        assert_eq!(
            cfg(&[("PGAS_AM_LZ_SIZE", "1048576")]).unwrap().lz_size,
            1 << 20
        );
    }

    #[test]
    fn bad_values_name_variable_and_value() {
        for (var, val) in [
            ("PGAS_AM_LZ_SIZE", "12Q"),
            ("PGAS_AM_LZ_SIZE", "1K"),
            ("PGAS_AM_LZ_SIZE", "32K"),
            ("PGAS_AM_LZ_SIZE", "lots"),
            ("PGAS_AM_HANDLERS", "0"),
            ("PGAS_AM_HANDLERS", "many"),
            ("PGAS_AM_EXECUTORS", "1000"),
            ("PGAS_AM_HANDLER_CORE", "-1"),
            ("PGAS_AM_DONE", "smoke-signal"),
            ("PGAS_AM_AMO_DELAY", "later"),
            ("PGAS_AM_IDLE_SLEEP_US", "soon"),
        ] {
            let e = cfg(&[(var, val)]).unwrap_err().to_string();
            assert!(e.contains(var), "{e}");
            assert!(e.contains(&format!("{val:?}")), "{e}");
        }
    }

    #[test]
    fn switches() {
        let c = cfg(&[
            ("PGAS_AM_HANDLERS", "2"),
            ("PGAS_AM_EXECUTORS", "3"),
            ("PGAS_AM_HANDLER_CORE", "1"),
            ("PGAS_AM_DONE", "put"),
        ])
        .unwrap();
        assert_eq!(c.done, DoneMode::Put);
        assert_eq!((c.handlers, c.executors, c.handler_core), (2, 3, Some(1)));
    }
}
