//! Per-locale operation counters through the public API (Chapel's
//! `startCommDiagnostics` / `stopCommDiagnostics` / `getCommDiagnostics`):
//! the comm layer counts (comm-ofi's `diag`), this file starts, stops,
//! reads and gathers them for programs and the C ABI.

use crate::error::Result;
use crate::runtime::Runtime;
pub use comm_ofi::{CommCounts, Counter};

impl Runtime {
    /// Starts counting this locale's operations (PUTs, GETs, atomics by
    /// route, on-statements, the MCM mode's forcing operations). Local: in
    /// SPMD code every locale calls it, typically after a barrier.
    pub fn start_comm_diagnostics(&self) -> Result<()> {
        self.check_open()?;
        self.comm().diagnostics().start();
        Ok(())
    }

    /// Stops counting on this locale; the counts stay readable.
    pub fn stop_comm_diagnostics(&self) -> Result<()> {
        self.check_open()?;
        self.comm().diagnostics().stop();
        Ok(())
    }

    /// Sets this locale's counts back to zero.
    pub fn reset_comm_diagnostics(&self) -> Result<()> {
        self.check_open()?;
        self.comm().diagnostics().reset();
        Ok(())
    }

    /// This locale's counts now. They include the runtime's own operations
    /// (barrier flags, collectives): read them around the code of interest.
    pub fn comm_diagnostics(&self) -> Result<CommCounts> {
        self.check_open()?;
        Ok(self.comm().diagnostics().snapshot())
    }

    /// Every locale's counts, indexed by locale (collective over the world
    /// team; the gathering itself is not counted: each locale snapshots
    /// before it sends).
    pub fn comm_diagnostics_all(&self) -> Result<Vec<CommCounts>> {
        let mine = self.comm_diagnostics()?.as_array();
        let all = self.world().fcollect(&mine)?;
        Ok(all
            .chunks_exact(Counter::ALL.len())
            .map(|c| CommCounts::from_array(c.try_into().expect("fcollect of equal parts")))
            .collect())
    }
}
