//! The [`Oob`] trait: what every bootstrap backend offers (rank, size and the
//! start-up collectives). At the bottom of the crate: the backends
//! (`client`, `pmix`, `single`) implement it and the crate root builds one.

use std::sync::Mutex;

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

/// A backend's process-wide instance in `shared`, made by `open` on first
/// use; every later call gets a handle to the same one.
pub(crate) fn shared_instance<T: Clone>(
    shared: &Mutex<Option<T>>,
    open: impl FnOnce() -> Result<T, OobError>,
) -> Result<T, OobError> {
    let mut shared = shared.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = shared.as_ref() {
        return Ok(c.clone());
    }
    let c = open()?;
    *shared = Some(c.clone());
    Ok(c)
}

/// Longest abort message a backend passes on.
const MAX_ABORT_MSG: usize = 64 * 1024;

/// `msg` cut to [`MAX_ABORT_MSG`] bytes at a character boundary.
pub(crate) fn abort_text(msg: &str) -> &str {
    let mut end = msg.len().min(MAX_ABORT_MSG);
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    &msg[..end]
}

/// A backend whose collectives travel as `Msg::Collective` frames to a
/// service that answers each (pgasrun for the launcher client, locale 0's
/// hub in a PMIx job): [`Oob`] is implemented once for every such backend,
/// its collectives over the one call [`Relayed::collective`].
pub(crate) trait Relayed: Send + Sync {
    /// This locale's rank and the job's size ([`Oob::rank`], [`Oob::size`]).
    fn place(&self) -> (usize, usize);

    /// Runs collective `op` with this locale's part `data` (its length
    /// checked); the service's answer.
    fn collective(&self, op: Op, root: usize, data: &[u8]) -> Result<Vec<u8>, OobError>;

    /// [`Oob::guard_exit`].
    fn guard(&self) -> Result<(), OobError>;

    /// [`Oob::finalized`].
    fn done(&self) -> Result<(), OobError>;

    /// [`Oob::abort`] (`status` `None`) and [`Oob::global_exit`].
    fn end_job(&self, status: Option<i32>, msg: &str) -> !;
}

impl<R: Relayed> Oob for R {
    fn rank(&self) -> usize {
        self.place().0
    }

    fn size(&self) -> usize {
        self.place().1
    }

    /// The parts come packed.
    fn allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>, OobError> {
        let packed = self.collective(Op::Allgather, 0, data)?;
        wire::decode_parts(&packed, self.size()).map_err(OobError::Protocol)
    }

    /// Only the root's bytes travel.
    fn broadcast(&self, root: usize, data: &[u8]) -> Result<Vec<u8>, OobError> {
        let size = self.size();
        if root >= size {
            return Err(OobError::InvalidRoot { root, size });
        }
        let mine = if root == self.rank() { data } else { &[] };
        self.collective(Op::Broadcast, root, mine)
    }

    /// Its answer is empty.
    fn barrier(&self) -> Result<(), OobError> {
        let r = self.collective(Op::Barrier, 0, &[])?;
        if !r.is_empty() {
            return Err(OobError::Protocol(format!(
                "barrier reply carries {} byte(s)",
                r.len()
            )));
        }
        Ok(())
    }

    fn abort(&self, msg: &str) -> ! {
        self.end_job(None, msg)
    }

    fn global_exit(&self, status: i32, msg: &str) -> ! {
        self.end_job(Some(status), msg)
    }

    fn guard_exit(&self) -> Result<(), OobError> {
        self.guard()
    }

    fn finalized(&self) -> Result<(), OobError> {
        self.done()
    }
}
