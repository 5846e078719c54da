//! Every `PGAS_*` knob in one table, and the parsers every crate uses.
//!
//! [`KNOBS`] is the one list of the environment variables the workspace
//! reads: name, default, what it does and which crate reads it. The crates
//! above comm-ofi (amhandler, runtime-shim) parse their knobs with the
//! parsers here ([`parse_bool`], [`parse_count`], [`parse_up_to`],
//! [`parse_size`]), so a value means the same everywhere and a bad one is
//! refused with the same words. A unit test checks that the README's
//! environment table and this table list the same knobs, and that every
//! `PGAS_*` name in the crates' sources is here.
//!
//! Each crate reads its knobs once at start-up (`comm_ofi::Config`,
//! `amhandler::AmConfig`, `runtime_shim::ShimConfig`); the runtime shim's
//! `Builder` setters override the environment (the variable is only the
//! default, as with tokio's `runtime::Builder`).

/// Who a knob is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A user's setting (README, "Environment").
    User,
    /// Test-only or diagnosis-only switches (README too, marked as such).
    Test,
    /// Set by the launcher (`pgasrun`) for each process, not by the user
    /// (`docs/launcher.md`).
    Launcher,
}

/// One environment variable.
#[derive(Debug, Clone, Copy)]
pub struct Knob {
    /// The variable.
    pub name: &'static str,
    /// Its default, as the README states it.
    pub default: &'static str,
    /// What it does (one line; the README has the long form).
    pub doc: &'static str,
    /// The crates that read it.
    pub used_by: &'static [&'static str],
    /// Who sets it.
    pub kind: Kind,
}

const fn knob(
    name: &'static str,
    default: &'static str,
    used_by: &'static [&'static str],
    kind: Kind,
    doc: &'static str,
) -> Knob {
    Knob {
        name,
        default,
        doc,
        used_by,
        kind,
    }
}

const COMM: &[&str] = &["comm-ofi"];
const AM: &[&str] = &["amhandler"];
/// Read by comm-ofi (handler contexts) and passed on to amhandler (handler
/// threads) through the runtime shim, or checked by `amhandler::start_with`.
const COMM_AM: &[&str] = &["comm-ofi", "amhandler"];
const SHIM: &[&str] = &["runtime-shim"];
/// Read by comm-ofi (`peer_timeout`), applied by every layer's waits.
const COMM_AM_SHIM: &[&str] = &["comm-ofi", "amhandler", "runtime-shim"];
const BOOT: &[&str] = &["bootstrap"];
/// Read by the coarray runtime (`caf/`), above runtime-shim.
const CAF: &[&str] = &["pgas-caf"];

use Kind::{Launcher, Test, User};

/// Every knob, in the README's order.
#[rustfmt::skip]
pub const KNOBS: &[Knob] = &[
    knob("PGAS_MCM_MODE", "auto", COMM, User, "MCM mode: auto, message-order-fence, message-order, delivery-complete"),
    knob("PGAS_PROVIDER", "ranked choice", COMM, User, "force a libfabric provider (FI_PROVIDER is honoured too)"),
    knob("PGAS_HEAP_SIZE", "256M", COMM, User, "registered heap per locale"),
    knob("PGAS_VERBOSE", "0", COMM, User, "1: locale 0 prints one line describing the run"),
    knob("PGAS_LOCAL_PATH", "mapped", COMM, User, "mapped, mapped-heap or fabric: how locales on one host reach each other's heaps and static data"),
    knob("PGAS_MAX_MSG_SIZE", "provider's max_msg_size", COMM, User, "cap on one transfer (larger ones are chunked)"),
    knob("PGAS_NATIVE_AMO", "1", COMM, User, "0: do not ask for native atomics"),
    knob("PGAS_NUM_WORKERS", "the cores this locale owns", COMM, User, "worker threads per locale, each with its own transmit context"),
    knob("PGAS_THREAD_CONTEXTS", "2", COMM, User, "transmit contexts for the init thread and threads that call bind_thread"),
    knob("PGAS_WORKER_POLL", "1", AM, User, "0: idle shim workers do not poll (or, where CQ waits block, wait) for incoming AMs"),
    knob("PGAS_POLL_SPIN_US", "200", COMM, User, "how long an idle poller polls before it blocks on its doorbell"),
    knob("PGAS_AM_LZ_SIZE", "16M", AM, User, "AM landing zones (two halves)"),
    knob("PGAS_AM_HANDLERS", "1", COMM_AM, User, "AM handler threads, each with a transmit context of its own"),
    knob("PGAS_AM_EXECUTORS", "2", AM, User, "AM executor threads (no effect under the runtime shim)"),
    knob("PGAS_AM_HANDLER_CORE", "unpinned", AM, User, "pin the AM poller and handlers to a core"),
    knob("PGAS_AMO_VIA_AM", "0", COMM, User, "1: every atomic through AMs, even where native"),
    knob("PGAS_PIN", "1", SHIM, User, "0: do not pin the runtime shim's threads"),
    knob("PGAS_CHECK", "0", SHIM, User, "1: check every PUT/GET/atomic range against live allocations"),
    knob("PGAS_BARRIER", "put", SHIM, User, "runtime shim barrier: put or oob"),
    knob("PGAS_JOIN_RUNS_QUEUED", "1", SHIM, User, "0: a join waits for a worker to run its task even if none has taken it yet"),
    knob("PGAS_AM_DONE", "msg", AM, User, "msg or put: how a target signals 'done'"),
    knob("PGAS_MAX_TX_CONTEXTS", "provider's ep_cnt", COMM, User, "cap on the transmit contexts"),
    knob("PGAS_AM_AMO_DELAY", "1", AM, User, "0: non-fetching AMOs via AM wait for their 'done' at once"),
    knob("PGAS_AM_IDLE_SLEEP_US", "0", AM, User, "the AM poller sleeps this long between polls after a long idle spell"),
    knob("PGAS_MCM_WEAKEN", "unset", COMM, Test, "TEST-ONLY, breaks the memory model: the litmus suites' negative controls"),
    knob("PGAS_CAF_WEAKEN", "unset", CAF, Test, "TEST-ONLY, breaks Fortran's segment rule: no-segment-fence (the Fortran litmus control)"),
    knob("PGAS_TEST_HOSTNAMES", "unset", COMM, Test, "TEST-ONLY: comma-separated host names by rank"),
    knob("PGAS_CQ_WAIT", "auto", COMM, User, "spin, block or auto"),
    knob("PGAS_PEER_TIMEOUT", "0 (wait forever)", COMM_AM_SHIM, User, "seconds a wait for a silent peer lasts before it fails naming the peer"),
    knob("PGAS_PMIX_LIB", "libpmix.so.2", BOOT, User, "PMIx client library to load under mpirun/srun"),
    knob("PGAS_JOB_TIMEOUT", "none", BOOT, User, "pgasrun: stop a job after this many seconds unless --timeout is given"),
    knob("PGAS_LOG", "warnings only", SHIM, User, "tracing filter of the runtime shim's log (RUST_LOG too)"),
    knob("PGAS_INFO", "0", SHIM, User, "1: locale 0 prints every knob in force"),
    knob("PGAS_OOB_ADDR", "set by pgasrun", BOOT, Launcher, "the launcher's address"),
    knob("PGAS_RANK", "set by pgasrun", BOOT, Launcher, "this locale's rank"),
    knob("PGAS_SIZE", "set by pgasrun", BOOT, Launcher, "the number of locales"),
    knob("PGAS_JOB_ID", "set by pgasrun", BOOT, Launcher, "the job's id"),
];

/// The knob called `name`, if the table has it.
pub fn knob_named(name: &str) -> Option<&'static Knob> {
    KNOBS.iter().find(|k| k.name == name)
}

/// The process environment's value of `name`, `None` when unset or blank
/// (a blank value means the default, everywhere).
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// A knob's value that cannot be used: the variable, the value as found and
/// what would have been accepted. Each crate turns it into its own
/// `Error::Env` (same fields, same text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadValue {
    /// The variable.
    pub var: &'static str,
    /// Its value as found.
    pub value: String,
    /// What is wrong and what would be accepted.
    pub reason: String,
}

impl BadValue {
    /// A bad value of `var`.
    pub fn new(var: &'static str, value: &str, reason: impl Into<String>) -> BadValue {
        BadValue {
            var,
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for BadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid {}={:?}: {}", self.var, self.value, self.reason)
    }
}

impl std::error::Error for BadValue {}

impl From<BadValue> for crate::Error {
    fn from(BadValue { var, value, reason }: BadValue) -> Self {
        crate::Error::Env { var, value, reason }
    }
}

/// A switch: `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.
pub fn parse_bool(var: &'static str, value: &str) -> Result<bool, BadValue> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(BadValue::new(
            var,
            value,
            "expected 1/0, true/false, yes/no or on/off",
        )),
    }
}

/// A whole number from `min` to `max` (thread and context counts).
pub fn parse_count(
    var: &'static str,
    value: &str,
    min: usize,
    max: usize,
) -> Result<usize, BadValue> {
    check_count(var, value.trim().parse::<usize>().ok(), value, min, max)
}

/// `n` (`None`: not a number) if it lies from `min` to `max`; the error
/// shows `value`. For counts given through a builder as well as the
/// environment.
pub fn check_count(
    var: &'static str,
    n: Option<usize>,
    value: &str,
    min: usize,
    max: usize,
) -> Result<usize, BadValue> {
    match n {
        Some(k) if (min..=max).contains(&k) => Ok(k),
        _ => Err(BadValue::new(
            var,
            value,
            format!("expected a whole number from {min} to {max}"),
        )),
    }
}

/// A number from 0 to `max`; `what` names the unit ("microseconds", "a
/// whole number").
pub fn parse_up_to(var: &'static str, value: &str, max: u64, what: &str) -> Result<u64, BadValue> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|k| *k <= max)
        .ok_or_else(|| BadValue::new(var, value, format!("expected {what} from 0 to {max}")))
}

/// A byte size: `4096`, `64k`, `256M`, `1G`, `2GiB`, `512MB`.
pub fn parse_size(var: &'static str, value: &str) -> Result<usize, BadValue> {
    let bad = |reason: &str| BadValue::new(var, value, reason);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    fn workspace() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("comm-ofi sits in the workspace")
            .to_path_buf()
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// Every `"PGAS_..."` string literal in `text`.
    fn quoted_names(text: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut rest = text;
        while let Some(i) = rest.find("\"PGAS_") {
            let tail = &rest[i + 1..];
            let end = tail
                .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                .unwrap_or(tail.len());
            if end > "PGAS_".len() && tail[end..].starts_with('"') {
                out.insert(tail[..end].to_string());
            }
            rest = &tail[end..];
        }
        out
    }

    /// The backticked `PGAS_*` names in the first cell of each table row of
    /// a markdown text.
    fn table_names(md: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for line in md.lines() {
            let Some(row) = line.trim().strip_prefix('|') else {
                continue;
            };
            let first = row.split('|').next().unwrap_or("");
            for (i, part) in first.split('`').enumerate() {
                if i % 2 == 1 && part.starts_with("PGAS_") {
                    out.insert(part.to_string());
                }
            }
        }
        out
    }

    #[test]
    fn table_has_no_duplicates() {
        let names: BTreeSet<&str> = KNOBS.iter().map(|k| k.name).collect();
        assert_eq!(names.len(), KNOBS.len());
    }

    #[test]
    fn readme_lists_every_knob_and_no_other() {
        let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
        let documented = table_names(&readme);
        for k in KNOBS.iter().filter(|k| k.kind != Kind::Launcher) {
            assert!(
                documented.contains(k.name),
                "{} is in comm_ofi::knobs::KNOBS but not in the README's environment table",
                k.name
            );
        }
        for name in &documented {
            assert!(
                knob_named(name).is_some(),
                "the README documents {name}, which comm_ofi::knobs::KNOBS does not have"
            );
        }
        let launcher = std::fs::read_to_string(workspace().join("docs/launcher.md")).unwrap();
        let unmentioned: Vec<&str> = KNOBS
            .iter()
            .filter(|k| k.kind == Kind::Launcher && !launcher.contains(k.name))
            .map(|k| k.name)
            .collect();
        assert!(
            unmentioned.is_empty(),
            "docs/launcher.md does not mention {unmentioned:?}"
        );
    }

    /// Every `PGAS_*` name the library crates spell out (the env helpers'
    /// arguments, error texts) is a knob of the table. `PGAS_OK` and
    /// `PGAS_ERR_*` are the C ABI's status codes, not variables.
    #[test]
    fn sources_read_only_listed_knobs() {
        let root = workspace();
        let mut files = Vec::new();
        for krate in ["comm-ofi", "amhandler", "runtime-shim", "bootstrap", "mcm"] {
            rust_files(&root.join(krate).join("src"), &mut files);
        }
        assert!(files.len() > 20, "found only {files:?}");
        let mut seen = BTreeSet::new();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            for name in quoted_names(&text) {
                if name == "PGAS_OK" || name.starts_with("PGAS_ERR_") {
                    continue;
                }
                assert!(
                    knob_named(&name).is_some(),
                    "{} names {name}, which is not in comm_ofi::knobs::KNOBS",
                    f.display()
                );
                seen.insert(name);
            }
        }
        let unread: Vec<&str> = KNOBS
            .iter()
            .map(|k| k.name)
            .filter(|n| !seen.contains(*n))
            .collect();
        assert!(
            unread.is_empty(),
            "in the table, but no source names them: {unread:?}"
        );
    }

    #[test]
    fn parsers_name_variable_and_value() {
        assert!(parse_bool("X", "on").unwrap());
        let e = parse_count("PGAS_AM_HANDLERS", "0", 1, 64).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid PGAS_AM_HANDLERS=\"0\": expected a whole number from 1 to 64"
        );
        let e = parse_up_to("PGAS_POLL_SPIN_US", "-1", 10, "microseconds").unwrap_err();
        assert!(e.to_string().contains("microseconds from 0 to 10"), "{e}");
    }
}
