//! `PGAS_PEER_TIMEOUT`: an opt-in bound on how long a thread waits for a
//! peer that does not answer (issue 24, item 4).
//!
//! Why it exists: a locale that dies is found by the launcher (and by the
//! provider, whose operations against it complete in error), but a peer
//! that stops answering without dying (its host's link is down, it is
//! stopped, it deadlocked) leaves every wait for its completions, replies
//! or barrier flags spinning forever: on tcp a lost link is only noticed
//! after TCP's retransmission limit, about 15 minutes. With
//! `PGAS_PEER_TIMEOUT=SECONDS` such a wait gives up after that many
//! seconds without progress and returns an error naming the peer (the
//! waits know it, or [`Error::Peer`] adds it: `GET of 8 bytes with locale 2
//! failed: ...`). Unset (the default) or `0`: wait forever, as before.
//!
//! The wait loops (completion waits and posting retries in `ctx.rs`, the
//! AM reply wait in amhandler, the runtime shim's barrier) each keep a
//! [`PeerWait`] and call [`PeerWait::expired`] once per fruitless round: it
//! reads the clock only after [`CLOCK_AFTER`] fruitless rounds in a row, so
//! a loop that finds work soon pays a counter increment, and nothing at all
//! when the knob is unset.
//! A round that made progress calls [`PeerWait::reset`].
//!
//! The silence is counted in the waiter's own running time: two clock
//! reads more than [`OWN_STALL`] apart mean this process did not run in
//! between (SIGSTOPped, or descheduled that long), so the count starts
//! again instead of blaming the peer for a silence the waiter could not
//! have observed (a stopped locale that continues must not fail every
//! wait it had pending).

use crate::error::{Error, OfiError};
use crate::knobs::{var, BadValue};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The variable.
pub const VAR: &str = "PGAS_PEER_TIMEOUT";
/// The largest timeout accepted (a day): more is a typo, not a bound.
pub const MAX_SECS: u64 = 86_400;
/// Fruitless rounds in a row before [`PeerWait::expired`] reads the clock.
pub const CLOCK_AFTER: u32 = 64;
/// A gap between two clock reads of one wait longer than this means the
/// waiter itself did not run: its count of silence starts again.
pub const OWN_STALL: Duration = Duration::from_secs(1);

static TIMEOUT: OnceLock<Option<Duration>> = OnceLock::new();

/// Parses a value of `PGAS_PEER_TIMEOUT`: whole or decimal seconds
/// (`5`, `0.5`) up to [`MAX_SECS`]; `0` means no timeout.
pub fn parse(value: &str) -> Result<Option<Duration>, BadValue> {
    let v = value.trim();
    let secs: f64 = v
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s >= 0.0 && *s <= MAX_SECS as f64)
        .ok_or_else(|| {
            BadValue::new(
                VAR,
                value,
                format!("expected seconds from 0 (no timeout) to {MAX_SECS}, e.g. 10 or 2.5"),
            )
        })?;
    Ok((secs > 0.0).then(|| Duration::from_secs_f64(secs)))
}

/// Reads `PGAS_PEER_TIMEOUT` once (the first call decides; `Comm::init`
/// makes it, so a bad value fails start-up naming the variable).
pub fn init_from_env() -> Result<Option<Duration>, Error> {
    if let Some(t) = TIMEOUT.get() {
        return Ok(*t);
    }
    let t = match var(VAR) {
        Some(v) => parse(&v)?,
        None => None,
    };
    Ok(*TIMEOUT.get_or_init(|| t))
}

/// The timeout in force (`None`: wait forever). Before `init_from_env`
/// (or with a bad value, which start-up refuses) there is none.
pub fn timeout() -> Option<Duration> {
    TIMEOUT.get().copied().flatten()
}

/// One wait for a peer: counts fruitless rounds and says when the wait has
/// gone on longer than the timeout without progress.
#[derive(Debug)]
pub struct PeerWait {
    limit: Option<Duration>,
    rounds: u32,
    since: Option<Instant>,
    last_read: Option<Instant>,
}

impl Default for PeerWait {
    fn default() -> Self {
        PeerWait::new()
    }
}

impl PeerWait {
    /// A wait bounded by the timeout in force.
    pub fn new() -> PeerWait {
        PeerWait::with_limit(timeout())
    }

    /// A wait bounded by `limit` (`None`: never expires).
    pub fn with_limit(limit: Option<Duration>) -> PeerWait {
        PeerWait {
            limit,
            rounds: 0,
            since: None,
            last_read: None,
        }
    }

    /// A round made progress: the silence starts again.
    #[inline]
    pub fn reset(&mut self) {
        self.rounds = 0;
        self.since = None;
        self.last_read = None;
    }

    /// Counts a fruitless round; `true` once the wait has made no progress
    /// for longer than the limit. The clock starts at the first read.
    #[inline]
    pub fn expired(&mut self) -> bool {
        let Some(limit) = self.limit else {
            return false;
        };
        self.rounds = self.rounds.saturating_add(1);
        if self.rounds < CLOCK_AFTER {
            return false;
        }
        self.silent_for_at_least(limit, Instant::now())
    }

    /// The clock part of [`PeerWait::expired`], given the time read.
    fn silent_for_at_least(&mut self, limit: Duration, now: Instant) -> bool {
        if self
            .last_read
            .is_some_and(|last| now.saturating_duration_since(last) > OWN_STALL)
        {
            // This process was not running: the peer's silence is unseen.
            self.since = None;
        }
        self.last_read = Some(now);
        now.duration_since(*self.since.get_or_insert(now)) >= limit
    }

    /// The limit of this wait (for messages).
    pub fn limit(&self) -> Option<Duration> {
        self.limit
    }

    /// The error of an expired completion wait or post: an [`OfiError`]
    /// (so the callers' `peer_err` names the operation and the peer)
    /// saying what did not come and for how long.
    pub fn error(&self, call: &'static str, what: &str) -> Error {
        Error::Ofi(OfiError {
            call,
            code: -(libc::ETIMEDOUT as i64),
            text: silent_text(what, self.limit.unwrap_or_default()),
        })
    }
}

impl PeerWait {
    /// The error of an expired wait for `locale` in `op` ("reply to an
    /// on-statement", "barrier flag"): [`Error::Peer`], naming both.
    pub fn peer_error(&self, op: impl Into<String>, locale: crate::Locale, what: &str) -> Error {
        let Error::Ofi(source) = self.error("wait", what) else {
            unreachable!("PeerWait::error is an Ofi error")
        };
        Error::Peer {
            op: op.into(),
            locale,
            source,
        }
    }
}

/// Names `locale` and `op` in a libfabric failure (a timed-out wait is
/// one), for waits whose callers know the peer but whose error does not
/// say it (a collective's flag PUT); other errors pass unchanged.
pub fn name_peer(e: Error, op: &'static str, locale: crate::Locale) -> Error {
    crate::error::peer_err(op, 0, locale)(e)
}

/// "no completion for 5 s (PGAS_PEER_TIMEOUT=5): the peer does not answer
/// (link down, stopped or hung)".
pub fn silent_text(what: &str, limit: Duration) -> String {
    format!(
        "no {what} for {} s ({VAR}={}): the peer does not answer (link down, stopped or hung)",
        fmt_secs(limit),
        fmt_secs(limit)
    )
}

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_seconds_and_refuses_bad_values_naming_them() {
        assert_eq!(parse("5").unwrap(), Some(Duration::from_secs(5)));
        assert_eq!(parse(" 2.5 ").unwrap(), Some(Duration::from_millis(2500)));
        assert_eq!(parse("0").unwrap(), None);
        for bad in ["-1", "ten", "1e9", "NaN", "inf", ""] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("PGAS_PEER_TIMEOUT") && e.contains(&format!("{bad:?}")),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_wait_expires_only_after_the_limit_without_progress() {
        let mut w = PeerWait::with_limit(Some(Duration::from_millis(50)));
        let t0 = Instant::now();
        while !w.expired() {
            std::thread::sleep(Duration::from_micros(200));
        }
        let took = t0.elapsed();
        assert!(took >= Duration::from_millis(50), "expired after {took:?}");
        // Progress starts the silence again.
        w.reset();
        assert!(!w.expired());
        // No limit: never.
        let mut never = PeerWait::with_limit(None);
        assert!((0..10_000).all(|_| !never.expired()));
    }

    #[test]
    fn a_waiter_that_was_not_running_starts_its_count_again() {
        let limit = Duration::from_secs(5);
        let mut w = PeerWait::with_limit(Some(limit));
        let t0 = Instant::now();
        // Reads every 100 ms: the silence adds up to the limit.
        let mut t = t0;
        while t < t0 + Duration::from_millis(4900) {
            assert!(!w.silent_for_at_least(limit, t));
            t += Duration::from_millis(100);
        }
        assert!(w.silent_for_at_least(limit, t0 + Duration::from_millis(5000)));
        // The same wait, but the process stopped for 30 s after 1 s: on
        // waking, the count starts again, and expires 5 s later.
        let mut w = PeerWait::with_limit(Some(limit));
        assert!(!w.silent_for_at_least(limit, t0));
        assert!(!w.silent_for_at_least(limit, t0 + Duration::from_secs(1)));
        let woke = t0 + Duration::from_secs(31);
        assert!(!w.silent_for_at_least(limit, woke));
        let mut t = woke;
        while t < woke + Duration::from_millis(4900) {
            t += Duration::from_millis(100);
            assert!(!w.silent_for_at_least(limit, t) || t >= woke + limit);
        }
        assert!(w.silent_for_at_least(limit, woke + Duration::from_millis(5000)));
    }

    #[test]
    fn the_error_says_what_did_not_come_and_the_knob() {
        let w = PeerWait::with_limit(Some(Duration::from_secs(3)));
        let e = w.error("completion wait", "completion").to_string();
        assert!(
            e.contains("no completion for 3 s (PGAS_PEER_TIMEOUT=3)"),
            "{e}"
        );
        let named = crate::error::peer_err("GET", 8, 2)(w.error("completion wait", "completion"));
        assert!(
            named
                .to_string()
                .starts_with("GET of 8 bytes with locale 2 failed"),
            "{named}"
        );
    }
}
