//! Barrier and broadcast over PUTs to flag words in the registered heap.
//!
//! Each locale allocates one small *collective area* at start-up and the
//! addresses are exchanged out of band once. After that a barrier is a
//! dissemination barrier: in round `r` locale `i` PUTs the barrier's epoch
//! into flag word `r` of locale `(i + 2^r) mod n` and waits until its own
//! flag word `r` holds at least that epoch; `ceil(log2 n)` rounds, one PUT
//! and one local wait each, no reset (flags only grow, and each flag word has
//! exactly one writer). A locale that waits runs other ready tasks when it
//! is a worker. Before its first PUT a locale forces its stores visible, so
//! every store issued before the barrier anywhere is visible after it.
//!
//! **Failures are agreed on.** A collective that fails on one locale must
//! not leave the others waiting, nor let them go on as if it had worked. So
//! each barrier also carries whether a locale failed: the flag word holds the
//! epoch in its low [`EPOCH_BITS`] bits and, above them, the highest failed
//! locale (+1) its writer has heard of. Every locale merges what it reads
//! into what it sends in later rounds; after the last round each locale has
//! heard (transitively) from every other, the property that makes it a
//! barrier, so all agree on the same failed locale. That locale's message is
//! in its area, where the others GET it. Flag words come in two sets used
//! by alternate epochs, so a fast partner's next barrier never overwrites a
//! word before its reader has seen it. `Runtime::barrier`, `broadcast` and
//! `alloc_all` all go through this agreement: a locale whose part failed
//! (heap exhausted, bad argument) still takes part, and every locale returns
//! an error ([`Error::Collective`] naming the failed locale, or its own).
//!
//! `PGAS_BARRIER=oob` uses the out-of-band allgather of the launcher instead
//! (carrying each locale's failure text).
//!
//! Broadcast from locale 0: the root PUTs the value (up to
//! [`BCAST_INLINE`] bytes; larger values as the address of a heap copy that
//! the others GET) into a slot of every other locale, then everybody
//! barriers. Two slots alternate, so a slot is rewritten only after every
//! locale has passed the barrier that follows its last read.

use crate::error::{Error, Result};
use comm_ofi::{Comm, GlobalAddr, Locale};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Flag words per set (one per dissemination round: enough for 2^64 locales).
const FLAGS: usize = 64;
/// Flag-word sets, used by alternate epochs.
const FLAG_SETS: usize = 2;
/// Largest broadcast carried inline in the slot.
pub const BCAST_INLINE: usize = 1024;
/// One broadcast slot: length word, large-address word, payload.
const SLOT: usize = 16 + BCAST_INLINE;
const SLOT_OFF: usize = FLAG_SETS * FLAGS * 8;
/// This locale's last failure message: length word, text.
const ERR_OFF: usize = SLOT_OFF + 2 * SLOT;
/// Longest failure message kept.
const ERR_TEXT: usize = 1024;
/// Bytes of the collective area.
pub(crate) const AREA: usize = ERR_OFF + 8 + ERR_TEXT;
/// Length word bit: the slot holds the address of a heap copy at the root.
const LARGE: u64 = 1 << 63;
/// Bits of a flag word that hold the epoch; above them, failed locale + 1.
pub(crate) const EPOCH_BITS: u32 = 40;
const EPOCH_MASK: u64 = (1 << EPOCH_BITS) - 1;
/// Most locales whose failure a flag word can name.
const MAX_LOCALES: u64 = (1 << (64 - EPOCH_BITS)) - 1;

/// How barriers are done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierKind {
    /// Dissemination barrier over PUTs (default).
    Put,
    /// The launcher's out-of-band barrier.
    Oob,
}

impl std::fmt::Display for BarrierKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BarrierKind::Put => "put",
            BarrierKind::Oob => "oob",
        })
    }
}

/// The collective state of one locale.
pub(crate) struct Collectives {
    area: u64,
    peers: Vec<u64>,
    barrier_epoch: Mutex<u64>,
    bcast_epoch: Mutex<u64>,
    pub kind: BarrierKind,
}

/// The heap word at `addr` (8-aligned, inside this locale's registered heap,
/// which lives as long as the process: the runtime is never dropped).
fn heap_word(comm: &Comm, addr: u64) -> &'static AtomicU64 {
    assert!(
        comm.heap().contains(addr, 8) && addr % 8 == 0,
        "collective word {addr:#x} outside the heap (internal error)"
    );
    // SAFETY: checked above to be an aligned word of the registered heap,
    // which stays mapped for the rest of the process (the runtime is a
    // process-wide static); remote writers store whole words by RMA and local
    // code only accesses it atomically.
    unsafe { AtomicU64::from_ptr(addr as *mut u64) }
}

/// A flag word: `epoch` and the failed locale heard of (if any).
pub(crate) fn flag_word(epoch: u64, failed: Option<Locale>) -> u64 {
    (epoch & EPOCH_MASK) | failed.map_or(0, |l| (l as u64 + 1) << EPOCH_BITS)
}

/// The (epoch, failed locale) of a flag word.
pub(crate) fn parse_flag(w: u64) -> (u64, Option<Locale>) {
    let f = w >> EPOCH_BITS;
    (w & EPOCH_MASK, (f > 0).then(|| (f - 1) as Locale))
}

/// The failure that wins when two are heard of: the higher locale (any
/// fixed rule works, as long as every locale applies the same one).
fn merge(a: Option<Locale>, b: Option<Locale>) -> Option<Locale> {
    a.max(b)
}

/// Cuts a message to at most `max` bytes at a character boundary.
fn truncated(msg: &str, max: usize) -> &str {
    let mut end = msg.len().min(max);
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    &msg[..end]
}

impl Collectives {
    /// Allocates the area (zeroed) and exchanges its address; collective.
    pub fn new(comm: &Comm, kind: BarrierKind) -> Result<Collectives> {
        if comm.num_locales() as u64 > MAX_LOCALES {
            return Err(Error::State(format!(
                "{} locales: the collectives handle at most {MAX_LOCALES}",
                comm.num_locales()
            )));
        }
        let area = comm.alloc(AREA, 64)?;
        comm.put(area, &[0u8; AREA])?;
        let all = comm
            .oob()
            .allgather(&area.addr.to_le_bytes())
            .map_err(comm_ofi::Error::from)?;
        let mut peers = Vec::with_capacity(all.len());
        for (i, a) in all.iter().enumerate() {
            let w: [u8; 8] = a.as_slice().try_into().map_err(|_| {
                Error::State(format!(
                    "locale {i} sent {} bytes for its collective area",
                    a.len()
                ))
            })?;
            peers.push(u64::from_le_bytes(w));
        }
        Ok(Collectives {
            area: area.addr,
            peers,
            barrier_epoch: Mutex::new(0),
            bcast_epoch: Mutex::new(0),
            kind,
        })
    }

    /// Leaves this locale's failure message where the others can GET it.
    fn publish_failure(&self, comm: &Comm, msg: &str) -> Result<()> {
        let text = truncated(msg, ERR_TEXT);
        let mut rec = Vec::with_capacity(8 + text.len());
        rec.extend_from_slice(&(text.len() as u64).to_le_bytes());
        rec.extend_from_slice(text.as_bytes());
        comm.put(
            GlobalAddr::new(comm.here(), self.area + ERR_OFF as u64),
            &rec,
        )?;
        Ok(())
    }

    /// Reads locale `l`'s failure message.
    fn failure_of(&self, comm: &Comm, l: Locale) -> String {
        let at = GlobalAddr::new(l, self.peers[l] + ERR_OFF as u64);
        let mut len = [0u8; 8];
        if let Err(e) = comm.get(&mut len, at) {
            return format!("(its message cannot be read: {e})");
        }
        let n = (u64::from_le_bytes(len) as usize).min(ERR_TEXT);
        let mut text = vec![0u8; n];
        if let Err(e) = comm.get(&mut text, at.offset(8)) {
            return format!("(its message cannot be read: {e})");
        }
        String::from_utf8_lossy(&text).into_owned()
    }

    /// The barrier, agreeing on failure: `local` is this locale's part of
    /// the collective `op`. Returns `local`'s error on a locale whose part
    /// failed, [`Error::Collective`] naming the failed locale on the others,
    /// `Ok` everywhere if no part failed. `wait` waits for a condition
    /// (running tasks meanwhile).
    pub fn barrier(
        &self,
        comm: &Comm,
        op: &'static str,
        local: Result<()>,
        wait: &dyn Fn(&dyn Fn() -> bool),
    ) -> Result<()> {
        let n = comm.num_locales();
        let me = comm.here();
        let Some(mut epoch) = self.barrier_epoch.try_lock() else {
            return Err(Error::State(format!(
                "barrier entered by two tasks of locale {me} at once; a barrier is called by one \
                 task per locale"
            )));
        };
        // Every context of the locale, not only the caller's: what any
        // thread stored before the barrier is visible after it.
        let local = local.and_then(|()| Ok(comm.force_visible_all()?));
        if n == 1 {
            return local;
        }
        let mut failed = None;
        if let Err(e) = &local {
            self.publish_failure(comm, &e.to_string())?;
            failed = Some(me);
        }
        if self.kind == BarrierKind::Oob {
            let text = local.as_ref().err().map(|e| e.to_string());
            let all = comm
                .oob()
                .allgather(truncated(text.as_deref().unwrap_or(""), ERR_TEXT).as_bytes())
                .map_err(comm_ofi::Error::from)?;
            let failed = (0..n).rev().find(|&l| !all[l].is_empty());
            return match (local, failed) {
                (Err(e), _) => Err(e),
                (Ok(()), None) => Ok(()),
                (Ok(()), Some(l)) => Err(Error::Collective {
                    op,
                    locale: l,
                    reason: String::from_utf8_lossy(&all[l]).into_owned(),
                }),
            };
        }
        *epoch += 1;
        let e = *epoch;
        let set = self.area + ((e % FLAG_SETS as u64) as usize * FLAGS * 8) as u64;
        let mut dist = 1usize;
        let mut round = 0usize;
        while dist < n {
            let partner = (me + dist) % n;
            let flag = GlobalAddr::new(
                partner,
                self.peers[partner] + (set - self.area) + 8 * round as u64,
            );
            comm.put(flag, &flag_word(e, failed).to_le_bytes())?;
            // The partner waits for this flag: on a bound context a PUT may
            // dangle until the next boundary (and on udp;ofi_rxd it does not
            // even travel without our progress), so publish it now.
            comm.force_visible()
                .map_err(|e| comm_ofi::peer_timeout::name_peer(e, "barrier flag PUT", partner))?;
            let mine = heap_word(comm, set + 8 * round as u64);
            // PGAS_PEER_TIMEOUT: a flag that never comes fails the barrier
            // naming the locale that owes it.
            let silent = std::cell::RefCell::new(comm_ofi::peer_timeout::PeerWait::new());
            let arrived = || parse_flag(mine.load(Ordering::Acquire)).0 >= e;
            wait(&|| arrived() || silent.borrow_mut().expired());
            if !arrived() {
                let from = (me + n - dist) % n;
                return Err(silent.borrow().peer_error(op, from, "barrier flag").into());
            }
            failed = merge(failed, parse_flag(mine.load(Ordering::Acquire)).1);
            dist *= 2;
            round += 1;
        }
        match (local, failed) {
            (Err(e), _) => Err(e),
            (Ok(()), None) => Ok(()),
            (Ok(()), Some(l)) => Err(Error::Collective {
                op,
                locale: l,
                reason: self.failure_of(comm, l),
            }),
        }
    }

    /// Broadcast of `data` from locale 0 (ignored elsewhere); collective.
    /// `local` is this locale's part (an argument check of the caller);
    /// `barrier(op, part)` is the agreeing barrier.
    pub fn broadcast(
        &self,
        comm: &Comm,
        data: &[u8],
        local: Result<()>,
        barrier: &dyn Fn(Result<()>) -> Result<()>,
    ) -> Result<Vec<u8>> {
        let n = comm.num_locales();
        let me = comm.here();
        let slot = {
            let mut e = self.bcast_epoch.lock();
            *e += 1;
            SLOT_OFF as u64 + (*e % 2) * SLOT as u64
        };
        let mut large_copy = None;
        let mut local = local;
        if me == 0 && local.is_ok() {
            local = self.post(comm, data, slot, n).map(|c| large_copy = c);
        }
        let agreed = barrier(local);
        let out = match agreed {
            Err(e) => {
                if let Some(c) = large_copy {
                    comm.free(c)?;
                }
                return Err(e);
            }
            Ok(()) if me == 0 => Ok(data.to_vec()),
            Ok(()) => self.fetch(comm, me, slot),
        };
        // Large: everybody has fetched (or failed to) before the root frees
        // its copy; a failed fetch is agreed on like any part.
        let large = if me == 0 {
            large_copy.is_some()
        } else {
            self.slot_is_large(comm, slot)
        };
        if large {
            let part = match &out {
                Ok(_) => Ok(()),
                Err(e) => Err(Error::State(e.to_string())),
            };
            let agreed = barrier(part);
            if let Some(c) = large_copy {
                comm.free(c)?;
            }
            let v = out?;
            agreed?;
            return Ok(v);
        }
        out
    }

    /// Root: puts the value (or the address of a heap copy) into every other
    /// locale's slot; returns the copy to free later.
    fn post(&self, comm: &Comm, data: &[u8], slot: u64, n: Locale) -> Result<Option<GlobalAddr>> {
        let mut msg = Vec::with_capacity(16 + data.len().min(BCAST_INLINE));
        let mut copy = None;
        if data.len() <= BCAST_INLINE {
            let head = BcastHeader {
                len: data.len(),
                large_at: None,
            };
            msg.extend_from_slice(&head.encode());
            msg.extend_from_slice(data);
        } else {
            let c = comm.alloc(data.len(), 64)?;
            if let Err(e) = comm.put(c, data) {
                comm.free(c)?;
                return Err(e.into());
            }
            let head = BcastHeader {
                len: data.len(),
                large_at: Some(c.addr),
            };
            msg.extend_from_slice(&head.encode());
            copy = Some(c);
        }
        for t in 1..n {
            if let Err(e) = comm.put(GlobalAddr::new(t, self.peers[t] + slot), &msg) {
                if let Some(c) = copy {
                    comm.free(c)?;
                }
                return Err(e.into());
            }
        }
        Ok(copy)
    }

    fn slot_is_large(&self, comm: &Comm, slot: u64) -> bool {
        heap_word(comm, self.area + slot).load(Ordering::Acquire) & LARGE != 0
    }

    /// Non-root: reads the value the root posted.
    fn fetch(&self, comm: &Comm, me: Locale, slot: u64) -> Result<Vec<u8>> {
        let mut head = [0u8; BcastHeader::BYTES];
        comm.get(&mut head, GlobalAddr::new(me, self.area + slot))?;
        let h = BcastHeader::decode(&head).map_err(Error::State)?;
        let src = match h.large_at {
            None => GlobalAddr::new(me, self.area + slot + BcastHeader::BYTES as u64),
            Some(addr) => {
                // The root's heap copy: checked before it sizes our buffer.
                let src = GlobalAddr::new(0, addr);
                comm.check_range(src, h.len)?;
                src
            }
        };
        let mut v = vec![0u8; h.len];
        comm.get(&mut v, src)?;
        Ok(v)
    }
}

/// A broadcast slot's header as the root PUT it: the value's length and,
/// for a value over [`BCAST_INLINE`] bytes, the address of the root's heap
/// copy (else the value follows inline). Written by another locale, so
/// decoded with checks before it sizes anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BcastHeader {
    /// Value bytes.
    pub len: usize,
    /// The root's heap copy, if not inline.
    pub large_at: Option<u64>,
}

impl BcastHeader {
    /// Header bytes: the length word (bit 63: large), the address word.
    pub const BYTES: usize = 16;

    /// The header's bytes.
    pub fn encode(&self) -> [u8; Self::BYTES] {
        let mut out = [0u8; Self::BYTES];
        let len = self.len as u64 | if self.large_at.is_some() { LARGE } else { 0 };
        out[..8].copy_from_slice(&len.to_le_bytes());
        out[8..].copy_from_slice(&self.large_at.unwrap_or(0).to_le_bytes());
        out
    }

    /// Decodes a slot's header; `Err` names what the root never writes (an
    /// inline length over [`BCAST_INLINE`], a large value that would fit
    /// inline or has no address).
    pub fn decode(head: &[u8; Self::BYTES]) -> std::result::Result<BcastHeader, String> {
        let mut w = [0u8; 8];
        w.copy_from_slice(&head[..8]);
        let len_word = u64::from_le_bytes(w);
        w.copy_from_slice(&head[8..]);
        let addr = u64::from_le_bytes(w);
        let len = len_word & !LARGE;
        let large = len_word & LARGE != 0;
        if !large && len > BCAST_INLINE as u64 {
            return Err(format!("broadcast slot holds a garbled length {len}"));
        }
        if large && (len <= BCAST_INLINE as u64 || addr == 0) {
            return Err(format!(
                "broadcast slot holds a garbled large value of {len} bytes at {addr:#x}"
            ));
        }
        let len = usize::try_from(len)
            .map_err(|_| format!("broadcast slot holds a garbled length {len}"))?;
        Ok(BcastHeader {
            len,
            large_at: large.then_some(addr),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_words_carry_epoch_and_failure() {
        assert_eq!(parse_flag(flag_word(7, None)), (7, None));
        assert_eq!(parse_flag(flag_word(7, Some(0))), (7, Some(0)));
        let big = (1 << EPOCH_BITS) - 1;
        assert_eq!(parse_flag(flag_word(big, Some(12345))), (big, Some(12345)));
        // A later epoch without failure still compares as later.
        assert!(parse_flag(flag_word(8, None)).0 > parse_flag(flag_word(7, Some(3))).0);
        assert_eq!(merge(None, Some(2)), Some(2));
        assert_eq!(merge(Some(5), Some(2)), Some(5));
        assert_eq!(truncated("héllo", 2), "h");
    }

    #[test]
    fn broadcast_headers_round_trip_and_garbage_is_named() {
        for h in [
            BcastHeader {
                len: 5,
                large_at: None,
            },
            BcastHeader {
                len: 1 << 20,
                large_at: Some(0x4000),
            },
        ] {
            assert_eq!(BcastHeader::decode(&h.encode()), Ok(h));
        }
        let mut bad = [0u8; BcastHeader::BYTES];
        bad[..8].copy_from_slice(&(BCAST_INLINE as u64 + 1).to_le_bytes());
        assert!(BcastHeader::decode(&bad)
            .unwrap_err()
            .contains("garbled length"));
        bad[..8].copy_from_slice(&(LARGE | 3).to_le_bytes());
        assert!(BcastHeader::decode(&bad)
            .unwrap_err()
            .contains("large value"));
    }
}
