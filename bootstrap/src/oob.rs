//! The [`Oob`] trait: what every bootstrap backend offers (rank, size and the
//! start-up collectives). At the bottom of the crate: the backends
//! (`client`, `pmix`, `single`) implement it and the crate root builds one.

use crate::error::OobError;
use crate::wire::{self, Op};

/// The out-of-band exchange a locale uses during start-up.
///
/// All collectives must be called by every locale, in the same order (see the
/// crate docs). Implementations are safe to share between threads; calls are
/// serialized internally.
pub trait Oob: Send + Sync {
    /// This locale's index, `0..size()`.
    fn rank(&self) -> usize;

    /// Number of locales in the job (at least 1).
    fn size(&self) -> usize;

    /// Every locale contributes `data`; returns all contributions ordered by
    /// rank (index `i` is locale `i`'s bytes). Lengths may differ per locale.
    fn allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>, OobError>;

    /// Returns locale `root`'s `data` on every locale. `data` is ignored on
    /// the other locales. `root` must be `< size()`.
    fn broadcast(&self, root: usize, data: &[u8]) -> Result<Vec<u8>, OobError>;

    /// Returns once every locale has entered the barrier.
    fn barrier(&self) -> Result<(), OobError>;

    /// Declares this locale failed: the launcher prints `msg` and brings the
    /// whole job down. Never returns (the process exits).
    fn abort(&self, msg: &str) -> !;

    /// Ends the whole job, which exits with `status` (OpenSHMEM's
    /// `shmem_global_exit`); `msg` says who ended it. Never returns.
    fn global_exit(&self, status: i32, msg: &str) -> !;

    /// From now on, this process ending before [`Oob::finalized`] fails the
    /// whole job with a message naming this locale, whatever its exit status
    /// (peers may be waiting for it on the fabric, where nobody else would
    /// notice). The comm layer calls it as it starts. Under pgasrun the
    /// launcher is told; under PMIx the exit handler leaves PMIx unfinalized,
    /// which the launcher treats as a failed process. A no-op for a single
    /// locale.
    fn guard_exit(&self) -> Result<(), OobError> {
        Ok(())
    }

    /// This locale has finalized: ending the process is fine from now on.
    /// The comm layer calls it after its finalize barrier.
    fn finalized(&self) -> Result<(), OobError> {
        Ok(())
    }
}

/// A backend whose collectives travel as `Msg::Collective` frames to a
/// service that answers each (pgasrun for the launcher client, locale 0's
/// hub in a PMIx job): [`Oob`]'s collectives over its one call.
pub(crate) trait Relayed: Oob {
    /// Runs collective `op` with this locale's part `data` (its length
    /// checked); the service's answer.
    fn collective(&self, op: Op, root: usize, data: &[u8]) -> Result<Vec<u8>, OobError>;

    /// [`Oob::allgather`]: the parts come packed.
    fn relayed_allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>, OobError> {
        let packed = self.collective(Op::Allgather, 0, data)?;
        wire::decode_parts(&packed, self.size()).map_err(OobError::Protocol)
    }

    /// [`Oob::broadcast`]: only the root's bytes travel.
    fn relayed_broadcast(&self, root: usize, data: &[u8]) -> Result<Vec<u8>, OobError> {
        let size = self.size();
        if root >= size {
            return Err(OobError::InvalidRoot { root, size });
        }
        let mine = if root == self.rank() { data } else { &[] };
        self.collective(Op::Broadcast, root, mine)
    }

    /// [`Oob::barrier`]: its answer is empty.
    fn relayed_barrier(&self) -> Result<(), OobError> {
        let r = self.collective(Op::Barrier, 0, &[])?;
        if !r.is_empty() {
            return Err(OobError::Protocol(format!(
                "barrier reply carries {} byte(s)",
                r.len()
            )));
        }
        Ok(())
    }
}
