//! The runtime shim's own knobs (`PGAS_PIN`, `PGAS_BARRIER`, `PGAS_CHECK`,
//! `PGAS_JOIN_RUNS_QUEUED`),
//! read once at start-up. Below the runtime, which holds them, and its
//! start-up, which reads them.

use crate::collective::BarrierKind;
use crate::error::{Error, Result};

/// The shim's own knobs (the comm and AM layers read theirs; the table of
/// every knob: `comm_ofi::knobs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShimConfig {
    /// `PGAS_PIN`: pin worker threads to cores (default on).
    pub pin: bool,
    /// `PGAS_BARRIER`: `put` (default) or `oob`.
    pub barrier: BarrierKind,
    /// `PGAS_CHECK`: check every PUT/GET/atomic range against the target's
    /// live allocations (default off; a debug mode, one extra round trip
    /// per remote operation).
    pub check: bool,
    /// `PGAS_JOIN_RUNS_QUEUED`: a join runs its task on the joining thread
    /// if no worker has taken it yet (default on).
    pub join_runs_queued: bool,
}

impl ShimConfig {
    /// Reads the environment; a bad value is an error naming it.
    pub fn from_env() -> Result<ShimConfig> {
        ShimConfig::from_lookup(comm_ofi::knobs::var)
    }

    /// Reads the knobs through `lookup` (tests pass a map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<ShimConfig> {
        let switch = |var: &'static str, default: bool| -> Result<bool> {
            match lookup(var) {
                None => Ok(default),
                Some(v) => Ok(comm_ofi::knobs::parse_bool(var, &v)?),
            }
        };
        let pin = switch("PGAS_PIN", true)?;
        let check = switch("PGAS_CHECK", false)?;
        let join_runs_queued = switch("PGAS_JOIN_RUNS_QUEUED", true)?;
        let barrier = match lookup("PGAS_BARRIER") {
            None => BarrierKind::Put,
            Some(v) => match v.trim().to_ascii_lowercase().as_str() {
                "put" => BarrierKind::Put,
                "oob" => BarrierKind::Oob,
                _ => {
                    return Err(Error::Env {
                        var: "PGAS_BARRIER",
                        value: v,
                        reason: "expected put or oob".into(),
                    })
                }
            },
        };
        Ok(ShimConfig {
            pin,
            barrier,
            check,
            join_runs_queued,
        })
    }
}
