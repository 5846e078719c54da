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
pub const HEADER: usize = 32;
pub(crate) const SLOT: usize = HEADER + TEAM_INLINE;

/// Slot header flag: the slot holds a contribution.
pub(crate) const PRESENT: u64 = 1;
/// Slot header flag: the contribution waits in its sender's heap at `addr`.
pub(crate) const LARGE: u64 = 2;

/// A slot's header as a member PUT it: the contribution's length, where it
/// is (inline after the header, or the address of the sender's heap copy),
/// and the collective's epoch. Written by another locale, so decoded with
/// checks before it sizes or addresses anything; the large copy's range is
/// then checked against the sender's heap (`Comm::check_range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotHeader {
    /// Contribution bytes.
    pub len: usize,
    /// The address of the sender's heap copy, if not inline.
    pub large_at: Option<u64>,
    /// The collective's epoch.
    pub epoch: u64,
}

impl SlotHeader {
    /// Header bytes ([`HEADER`]).
    pub const BYTES: usize = HEADER;

    /// The header's bytes (length, flags, address, epoch; `u64` LE each).
    pub fn encode(&self) -> [u8; HEADER] {
        let flags = PRESENT | if self.large_at.is_some() { LARGE } else { 0 };
        let mut out = [0u8; HEADER];
        for (k, w) in [
            self.len as u64,
            flags,
            self.large_at.unwrap_or(0),
            self.epoch,
        ]
        .into_iter()
        .enumerate()
        {
            out[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// Decodes a slot's header: `Ok(None)` if nothing was put there, `Err`
    /// naming what no member of ours writes (unknown flags, an inline
    /// length over [`TEAM_INLINE`], a large one that would fit inline or
    /// has no address).
    pub fn decode(head: &[u8; HEADER]) -> std::result::Result<Option<SlotHeader>, String> {
        let w = |k: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&head[8 * k..8 * k + 8]);
            u64::from_le_bytes(b)
        };
        let (len, flags, addr, epoch) = (w(0), w(1), w(2), w(3));
        if flags & PRESENT == 0 {
            return Ok(None);
        }
        if flags & !(PRESENT | LARGE) != 0 {
            return Err(format!("garbled team slot: flags {flags:#x}"));
        }
        let large = flags & LARGE != 0;
        if !large && len > TEAM_INLINE as u64 {
            return Err(format!("garbled team slot: {len} bytes inline"));
        }
        if large && (len <= TEAM_INLINE as u64 || addr == 0) {
            return Err(format!(
                "garbled team slot: a large contribution of {len} bytes at {addr:#x}"
            ));
        }
        let len = usize::try_from(len).map_err(|_| format!("garbled team slot: {len} bytes"))?;
        Ok(Some(SlotHeader {
            len,
            large_at: large.then_some(addr),
            epoch,
        }))
    }
}

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
    fn slot_headers_round_trip_and_garbage_is_named() {
        let h = SlotHeader {
            len: 12,
            large_at: None,
            epoch: 7,
        };
        assert_eq!(SlotHeader::decode(&h.encode()), Ok(Some(h)));
        let big = SlotHeader {
            len: 4096,
            large_at: Some(0x1000),
            epoch: 9,
        };
        assert_eq!(SlotHeader::decode(&big.encode()), Ok(Some(big)));
        assert_eq!(SlotHeader::decode(&[0u8; HEADER]), Ok(None));
        let mut bad = h.encode();
        bad[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(SlotHeader::decode(&bad).unwrap_err().contains("inline"));
        let mut bad = big.encode();
        bad[16..24].copy_from_slice(&0u64.to_le_bytes());
        assert!(SlotHeader::decode(&bad).unwrap_err().contains("large"));
        let mut bad = h.encode();
        bad[8] = 0x81;
        assert!(SlotHeader::decode(&bad).unwrap_err().contains("flags"));
    }

    #[test]
    fn area_size() {
        assert_eq!(area_bytes(1), FLAGS * 8 + 2 * SLOT);
        assert_eq!(area_bytes(4), FLAGS * 8 + 8 * SLOT);
    }
}
