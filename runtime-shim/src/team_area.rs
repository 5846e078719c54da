//! The layout of a team area (flag words and receive slots) and its
//! allocation.
//!
//! Exists below both `runtime` (whose init allocates the world team's area
//! before any `Team` exists) and `team` (which reads and writes the areas),
//! so that the runtime never names the team module: the crate's modules form
//! layers (`team` is above `runtime`).

use crate::error::Result;

/// Flag words of the dissemination barrier: one per round, for each of the
/// two phases (a member can be one collective ahead of another, never two:
/// it cannot finish a barrier before everyone entered it).
pub(crate) const FLAGS: usize = 2 * 64;
/// Bytes carried inside a slot; larger contributions go by GET.
pub const TEAM_INLINE: usize = 512;
/// Slot header: length, flags, address of a large copy, epoch.
pub(crate) const HEADER: usize = 32;
pub(crate) const SLOT: usize = HEADER + TEAM_INLINE;

/// Bytes of a team area for `n` members.
pub(crate) fn area_bytes(n: usize) -> usize {
    FLAGS * 8 + 2 * n * SLOT
}

/// Allocates and zeroes a team area of `n` members in `comm`'s heap.
pub(crate) fn new_area(comm: &comm_ofi::Comm, n: usize) -> Result<u64> {
    let a = comm.alloc(area_bytes(n), 64)?;
    // SAFETY: a fresh allocation of area_bytes(n) bytes in our heap that
    // nobody else knows of yet.
    unsafe { std::ptr::write_bytes(a.addr as *mut u8, 0, area_bytes(n)) };
    Ok(a.addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn area_size() {
        assert_eq!(area_bytes(1), FLAGS * 8 + 2 * SLOT);
        assert_eq!(area_bytes(4), FLAGS * 8 + 8 * SLOT);
    }
}
