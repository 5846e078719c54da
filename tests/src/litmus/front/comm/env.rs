//! The comm-layer front end's state on one locale: the communication and
//! AM layers, the worker pool, the registered slots and flags, and what a
//! locale saw in an iteration ([`Part`]).

use super::mem::{classify, slice_mut, SLOT};
use super::pool::Pool;
use crate::e;
use crate::litmus::fixtures::Inst;
use crate::litmus::host_barrier::HostBarrier;
use crate::litmus::rng::Rng;
use crate::litmus::value::Label;
use amhandler::{Am, FnId};
use comm_ofi::{AmoOp, AmoRequest, AmoType, Comm, GlobalAddr, Locale};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

pub(super) type R<T = ()> = Result<T, String>;

pub(super) struct Env {
    pub(super) comm: Arc<Comm>,
    pub(super) am: Arc<Am>,
    pub(super) pool: Pool,
    pub(super) workers: usize,
    pub(super) here: Locale,
    pub(super) slots: u64,
    pub(super) flags: u64,
    pub(super) classify_fn: FnId,
    pub(super) put_fn: FnId,
    pub(super) seed: u64,
    pub(super) max_delay: u64,
    pub(super) amo_k: usize,
    /// SB-ATOMIC's start skew (ns), set by `calibrate`.
    pub(super) skew_ns: AtomicU64,
    /// The barrier at an iteration's start and end.
    pub(super) lockstep: HostBarrier,
}

/// What one locale saw in one iteration.
#[derive(Default)]
pub(super) struct Part {
    pub(super) kv: Vec<(String, String)>,
    pub(super) info: Vec<String>,
}

impl Part {
    pub(super) fn set(&mut self, k: &str, v: impl Into<String>) {
        self.kv.push((k.to_string(), v.into()));
    }
    pub(super) fn note(&mut self, s: impl Into<String>) {
        self.info.push(s.into());
    }
    /// TASK-END's outcome: what the parent read of each child's slot.
    pub(super) fn set_children(&mut self, r: &[Label]) {
        for (k, l) in r.iter().enumerate() {
            self.set(&format!("r{}", k + 1), l.text());
        }
    }
}

pub(super) fn enc(ws: &[u64]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

pub(super) fn dec(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

impl Env {
    pub(super) fn slot(&self, i: usize) -> u64 {
        self.slots + (i * SLOT) as u64
    }
    pub(super) fn slot_on(&self, i: usize, locale: Locale) -> R<GlobalAddr> {
        self.comm
            .symmetric(GlobalAddr::new(self.here, self.slot(i)), locale)
            .map_err(e("symmetric"))
    }
    pub(super) fn flag_on(&self, f: u64, locale: Locale) -> R<GlobalAddr> {
        self.comm
            .symmetric(GlobalAddr::new(self.here, self.flags + 64 * f), locale)
            .map_err(e("symmetric"))
    }

    /// Reads the buffer at `at` (here: a load; elsewhere: a GET into slot
    /// `via`) and classifies it.
    pub(super) fn read(
        &self,
        at: GlobalAddr,
        via: usize,
        size: usize,
        inst: u64,
        it: u64,
    ) -> R<Label> {
        if at.locale == self.here {
            return Ok(classify(at.addr, size, inst, it));
        }
        let dst = self.slot(via);
        self.comm.get(slice_mut(dst, size), at).map_err(e("get"))?;
        Ok(classify(dst, size, inst, it))
    }

    pub(super) fn amo_write(&self, at: GlobalAddr, v: u64) -> R {
        self.am
            .amo(&AmoRequest::new(at, AmoType::U64, AmoOp::Write, v))
            .map_err(e("amo write"))?;
        Ok(())
    }
    pub(super) fn amo_read(&self, at: GlobalAddr) -> R<u64> {
        self.am
            .amo(&AmoRequest::new(at, AmoType::U64, AmoOp::Read, 0).fetching(true))
            .map_err(e("amo read"))
    }

    pub(super) fn task_end(&self) -> R {
        self.comm.task_end().map_err(e("task_end"))
    }

    pub(super) fn rng(&self, inst: &Inst, it: u64, who: u64) -> Rng {
        Rng::new(&[self.seed, inst.id, it, who])
    }

    /// The start of an iteration: owners have reset their words.
    pub(super) fn start(&self) -> R {
        self.lockstep.wait(&self.comm)
    }

    /// The end of an iteration: a barrier of the harness (shared memory on
    /// one machine, else the launcher's), which forces nothing.
    pub(super) fn end(&self) -> R {
        self.lockstep.wait(&self.comm)
    }
}
