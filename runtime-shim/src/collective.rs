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
//! `PGAS_BARRIER=oob` uses the out-of-band barrier of the launcher instead
//! (the fallback the comm layer uses before the network is up).
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

/// Flag words (one per dissemination round: enough for 2^64 locales).
const FLAGS: usize = 64;
/// Largest broadcast carried inline in the slot.
pub const BCAST_INLINE: usize = 1024;
/// One broadcast slot: length word, large-address word, payload.
const SLOT: usize = 16 + BCAST_INLINE;
const SLOT_OFF: usize = FLAGS * 8;
/// Bytes of the collective area.
pub(crate) const AREA: usize = SLOT_OFF + 2 * SLOT;
/// Length word bit: the slot holds the address of a heap copy at the root.
const LARGE: u64 = 1 << 63;

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

impl Collectives {
    /// Allocates the area (zeroed) and exchanges its address; collective.
    pub fn new(comm: &Comm, kind: BarrierKind) -> Result<Collectives> {
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

    /// The barrier. `wait` waits for a condition (running tasks meanwhile).
    pub fn barrier(&self, comm: &Comm, wait: &dyn Fn(&dyn Fn() -> bool)) -> Result<()> {
        let n = comm.num_locales() as usize;
        let me = comm.here() as usize;
        let Some(mut epoch) = self.barrier_epoch.try_lock() else {
            return Err(Error::State(format!(
                "barrier entered by two tasks of locale {me} at once; a barrier is called by one \
                 task per locale"
            )));
        };
        // Every context of the locale, not only the caller's: what any
        // thread stored before the barrier is visible after it.
        comm.force_visible_all()?;
        if self.kind == BarrierKind::Oob || n == 1 {
            comm.barrier()?;
            return Ok(());
        }
        *epoch += 1;
        let e = *epoch;
        let mut dist = 1usize;
        let mut round = 0usize;
        while dist < n {
            let partner = (me + dist) % n;
            let flag = GlobalAddr::new(partner as Locale, self.peers[partner] + 8 * round as u64);
            comm.put(flag, &e.to_le_bytes())?;
            // The partner waits for this flag: on a bound context a PUT may
            // dangle until the next boundary (and on udp;ofi_rxd it does not
            // even travel without our progress), so publish it now.
            comm.force_stores_visible()?;
            let mine = heap_word(comm, self.area + 8 * round as u64);
            wait(&|| mine.load(Ordering::Acquire) >= e);
            dist *= 2;
            round += 1;
        }
        Ok(())
    }

    /// Broadcast of `data` from locale 0 (ignored elsewhere); collective.
    pub fn broadcast(
        &self,
        comm: &Comm,
        data: &[u8],
        barrier: &dyn Fn() -> Result<()>,
    ) -> Result<Vec<u8>> {
        let n = comm.num_locales();
        let me = comm.here();
        let slot = {
            let mut e = self.bcast_epoch.lock();
            *e += 1;
            SLOT_OFF as u64 + (*e % 2) * SLOT as u64
        };
        let mut large_copy = None;
        if me == 0 {
            let mut msg = Vec::with_capacity(16 + data.len().min(BCAST_INLINE));
            if data.len() <= BCAST_INLINE {
                msg.extend_from_slice(&(data.len() as u64).to_le_bytes());
                msg.extend_from_slice(&0u64.to_le_bytes());
                msg.extend_from_slice(data);
            } else {
                let copy = comm.alloc(data.len(), 64)?;
                if let Err(e) = comm.put(copy, data) {
                    let _ = comm.free(copy);
                    return Err(e.into());
                }
                msg.extend_from_slice(&(data.len() as u64 | LARGE).to_le_bytes());
                msg.extend_from_slice(&copy.addr.to_le_bytes());
                large_copy = Some(copy);
            }
            for t in 1..n {
                comm.put(GlobalAddr::new(t, self.peers[t as usize] + slot), &msg)?;
            }
        }
        barrier()?;
        let out = if me == 0 {
            data.to_vec()
        } else {
            let mut head = [0u8; 16];
            comm.get(&mut head, GlobalAddr::new(me, self.area + slot))?;
            let len_word = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
            let len = (len_word & !LARGE) as usize;
            let mut v = vec![0u8; len];
            if len_word & LARGE == 0 {
                if len > BCAST_INLINE {
                    return Err(Error::State(format!(
                        "broadcast slot holds a garbled length {len}"
                    )));
                }
                comm.get(&mut v, GlobalAddr::new(me, self.area + slot + 16))?;
            } else {
                let addr = u64::from_le_bytes(head[8..].try_into().expect("8 bytes"));
                comm.get(&mut v, GlobalAddr::new(0, addr))?;
            }
            v
        };
        let large = if me == 0 {
            large_copy.is_some()
        } else {
            out.len() > BCAST_INLINE
        };
        if large {
            // Everybody has fetched before the root frees its copy.
            barrier()?;
            if let Some(c) = large_copy {
                comm.free(c)?;
            }
        }
        Ok(out)
    }
}
