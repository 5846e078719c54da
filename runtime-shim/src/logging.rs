//! Diagnostics a program sees without writing any: a tracing subscriber
//! installed at init (`PGAS_LOG`, else `RUST_LOG`), and `PGAS_INFO=1`'s
//! listing of every knob in force.
//!
//! Exists because the layers report through `tracing`, and a C program (or a
//! Rust one that never installs a subscriber) would otherwise never see a
//! warning. A program that installed its own subscriber keeps it: ours is
//! only tried.

use crate::runtime::Runtime;

/// How the subscriber is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogDefault {
    /// No variable set: leave the program's choice alone (Rust API).
    Quiet,
    /// No variable set: warnings and errors to stderr (C ABI).
    Warn,
}

/// Installs a stderr subscriber filtered by `PGAS_LOG` (or `RUST_LOG`, the
/// same syntax: `warn`, `comm_ofi=debug,info`, ...), or by `warn` when
/// `default` says so. Ignored if the process already has one. A filter that
/// does not parse is reported and `warn` is used.
pub(crate) fn install_subscriber(default: LogDefault) {
    let spec = comm_ofi::knobs::var("PGAS_LOG").or_else(|| comm_ofi::knobs::var("RUST_LOG"));
    let spec = match (spec, default) {
        (Some(s), _) => s,
        (None, LogDefault::Warn) => "warn".to_string(),
        (None, LogDefault::Quiet) => return,
    };
    let (filter, bad) = match tracing_subscriber::EnvFilter::try_new(&spec) {
        Ok(f) => (f, None),
        Err(e) => (tracing_subscriber::EnvFilter::new("warn"), Some(e)),
    };
    use std::io::IsTerminal;
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(true)
        .try_init()
        .is_ok();
    if let (true, Some(e)) = (installed, bad) {
        tracing::warn!("PGAS_LOG/RUST_LOG={spec:?} does not parse ({e}); logging warnings only");
    }
}

/// Every knob of the knob table ([`comm_ofi::knobs::KNOBS`]), in its
/// order, with the value in force, as `(variable, value)` (what
/// `PGAS_INFO=1` prints). A knob whose value the layers resolved (a mode
/// chosen, a provider's default taken) shows that value; another shows the
/// environment's value, or `default: ...` as the table states it when the
/// variable is unset. Generated from the table, so a new knob is listed
/// without touching this function.
pub fn knobs(rt: &Runtime) -> Vec<(&'static str, String)> {
    let resolved = resolved_knobs(rt);
    comm_ofi::knobs::KNOBS
        .iter()
        .map(|k| {
            let v = resolved
                .iter()
                .find(|(name, _)| *name == k.name)
                .map(|(_, v)| v.clone())
                .or_else(|| comm_ofi::knobs::var(k.name))
                .unwrap_or_else(|| format!("default: {}", k.default));
            (k.name, v)
        })
        .collect()
}

/// The knobs whose value in force the layers know (resolved defaults
/// included); the others are shown as the environment has them.
fn resolved_knobs(rt: &Runtime) -> Vec<(&'static str, String)> {
    let c = rt.comm().config();
    let a = rt.am().config();
    let s = rt.config();
    let p = rt.comm().provider();
    let opt = |v: Option<String>| v.unwrap_or_else(|| "(provider's)".into());
    vec![
        ("PGAS_MCM_MODE", rt.mode().to_string()),
        ("PGAS_PROVIDER", p.name.clone()),
        ("PGAS_HEAP_SIZE", c.heap_size.to_string()),
        (
            "PGAS_LOCAL_PATH",
            format!("{:?}", c.local_path).to_lowercase(),
        ),
        (
            "PGAS_MAX_MSG_SIZE",
            opt(c.max_msg_size.map(|m| m.to_string())),
        ),
        ("PGAS_NATIVE_AMO", (c.native_amo as u8).to_string()),
        ("PGAS_AMO_VIA_AM", (c.amo_via_am as u8).to_string()),
        ("PGAS_CQ_WAIT", format!("{:?}", p.wait).to_lowercase()),
        ("PGAS_NUM_WORKERS", c.num_workers.to_string()),
        ("PGAS_THREAD_CONTEXTS", c.thread_contexts.to_string()),
        ("PGAS_WORKER_POLL", (a.worker_poll as u8).to_string()),
        ("PGAS_POLL_SPIN_US", c.poll_spin_us.to_string()),
        ("PGAS_AM_HANDLERS", c.am_handlers.to_string()),
        (
            "PGAS_MAX_TX_CONTEXTS",
            opt(c.max_tx_contexts.map(|m| m.to_string())),
        ),
        ("PGAS_AM_LZ_SIZE", a.lz_size.to_string()),
        ("PGAS_AM_EXECUTORS", a.executors.to_string()),
        (
            "PGAS_AM_HANDLER_CORE",
            a.handler_core.map_or("unpinned".into(), |c| c.to_string()),
        ),
        ("PGAS_AM_DONE", format!("{:?}", a.done).to_lowercase()),
        ("PGAS_AM_AMO_DELAY", (a.delay_amo_done as u8).to_string()),
        ("PGAS_AM_IDLE_SLEEP_US", a.idle_sleep_us.to_string()),
        ("PGAS_PIN", (s.pin as u8).to_string()),
        ("PGAS_CHECK", (s.check as u8).to_string()),
        ("PGAS_BARRIER", s.barrier.to_string()),
        ("PGAS_VERBOSE", c.verbose.to_string()),
        (
            "PGAS_MCM_WEAKEN",
            c.weaken.map_or("none".into(), |w| w.name().to_string()),
        ),
        (
            "PGAS_LOG",
            std::env::var("PGAS_LOG")
                .or_else(|_| std::env::var("RUST_LOG"))
                .unwrap_or_else(|_| "(unset)".into()),
        ),
    ]
}

/// Prints [`knobs`] on locale 0 when `PGAS_INFO` is set to 1.
pub(crate) fn print_info(rt: &Runtime) {
    // A value that is no switch is off (no error: diagnostics only).
    let on = comm_ofi::knobs::var("PGAS_INFO")
        .is_some_and(|v| comm_ofi::knobs::parse_bool("PGAS_INFO", &v).unwrap_or(false));
    if !on || rt.here() != 0 {
        return;
    }
    let mut out = format!("pgas-comm knobs in force ({}):\n", rt.comm().describe());
    for (k, v) in knobs(rt) {
        out.push_str(&format!("  {k:<22} {v}\n"));
    }
    eprint!("{out}");
}
