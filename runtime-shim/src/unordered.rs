//! Unordered PUT / GET / AMO: buffered per task and issued as a batch at the
//! task's unordered fence or when the task ends (the original does this for
//! irregular access: `chpl_comm_{put,get}_unordered`, `atomic_*_unordered`).
//!
//! The buffer is per thread. A task never moves thread, and a task that
//! waits runs other tasks on top of itself, which end (and so flush) before
//! it resumes: a flush can only issue the calling task's operations and, at
//! worst, some of a task below it early, which unordered semantics allow.
//!
//! A flush issues every buffered PUT and GET non-blocking and waits for all
//! of them, then the atomics: in batches that may be in flight together
//! where the provider does them natively (`Comm::amo_unordered_native`:
//! in delivery-complete mode one wait per batch, not per atomic),
//! otherwise one active message per target locale carrying
//! all of that locale's atomics (applied there with CPU atomics by the
//! handler). When it returns, every buffered operation is complete and its
//! effect visible to the caller's next ordered operation.

use crate::error::Result;
use amhandler::{Am, FnId};
use comm_ofi::{AmoOp, AmoRoute, AmoType, Comm, GlobalAddr, Locale};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Operations buffered before a flush is forced.
pub const CAPACITY: usize = 64;
/// Largest unordered PUT/GET buffered; larger ones are done at once.
pub const MAX_BYTES: usize = 1024;
/// Bytes of one atomic in a batch message.
pub(crate) const BATCH_ENTRY: usize = 24;

pub(crate) enum Op {
    Put {
        dst: GlobalAddr,
        data: Vec<u8>,
    },
    /// GET `len` bytes from `src` into `dst` (on this locale's heap).
    Get {
        dst: GlobalAddr,
        src: GlobalAddr,
        len: usize,
    },
    Amo {
        target: GlobalAddr,
        ty: AmoType,
        op: AmoOp,
        operand: u64,
    },
}

thread_local! {
    static BUF: RefCell<Vec<Op>> = const { RefCell::new(Vec::new()) };
}

/// Buffers `op`; returns whether the buffer is full (the caller flushes).
pub(crate) fn push(op: Op) -> bool {
    BUF.with(|b| {
        let mut b = b.borrow_mut();
        b.push(op);
        b.len() >= CAPACITY
    })
}

/// Operations buffered on this thread.
pub fn pending() -> usize {
    BUF.with(|b| b.borrow().len())
}

/// Encodes one atomic of a batch: addr, operand, type code, op code.
pub(crate) fn encode(out: &mut Vec<u8>, addr: u64, ty: AmoType, op: AmoOp, operand: u64) {
    out.extend_from_slice(&addr.to_le_bytes());
    out.extend_from_slice(&operand.to_le_bytes());
    out.push(comm_ofi::cpu_amo::type_code(ty) as u8);
    out.push(comm_ofi::cpu_amo::op_code(op) as u8);
    out.extend_from_slice(&[0; 6]);
}

/// Decodes one atomic of a batch.
pub(crate) fn decode(e: &[u8]) -> Option<(u64, AmoType, AmoOp, u64)> {
    if e.len() != BATCH_ENTRY {
        return None;
    }
    let w = |k: usize| u64::from_le_bytes(e[k..k + 8].try_into().expect("8 bytes"));
    let ty = comm_ofi::cpu_amo::type_from(e[16] as u32)?;
    let op = comm_ofi::cpu_amo::op_from(e[17] as u32)?;
    Some((w(0), ty, op, w(8)))
}

/// Issues everything buffered on this thread and waits for it: PUTs and
/// GETs non-blocking through `comm`, native atomics one by one, the others
/// as one fast on-statement per target locale running `amo_batch` there.
/// (Takes the runtime's parts, not the runtime: this module is used by the
/// runtime and does not use it back.)
pub(crate) fn flush(comm: &Comm, am: &Am, amo_batch: FnId) -> Result<()> {
    let ops = BUF.with(|b| std::mem::take(&mut *b.borrow_mut()));
    if ops.is_empty() {
        return Ok(());
    }
    let mut puts = Vec::new();
    let mut gets = Vec::new();
    let mut native = Vec::new();
    let mut via_am: BTreeMap<Locale, Vec<u8>> = BTreeMap::new();
    for op in ops {
        match op {
            Op::Put { dst, data } => puts.push((dst, data)),
            Op::Get { dst, src, len } => gets.push((dst, src, vec![0u8; len])),
            Op::Amo {
                target,
                ty,
                op,
                operand,
            } => {
                if comm.amo_route(ty) == AmoRoute::Native {
                    native.push((target, ty, op, operand));
                } else {
                    encode(
                        via_am.entry(target.locale).or_default(),
                        target.addr,
                        ty,
                        op,
                        operand,
                    );
                }
            }
        }
    }
    let mut first_err: Option<crate::Error> = None;
    {
        let mut handles = Vec::with_capacity(puts.len() + gets.len());
        for (dst, data) in &puts {
            // SAFETY: every handle is waited for below, before `puts` and
            // `gets` go out of scope; none is leaked.
            match unsafe { comm.put_nb(*dst, data) } {
                Ok(h) => handles.push(h),
                Err(e) => {
                    first_err.get_or_insert(e.into());
                }
            }
        }
        for (_, src, buf) in gets.iter_mut() {
            // SAFETY: as above.
            match unsafe { comm.get_nb(buf, *src) } {
                Ok(h) => handles.push(h),
                Err(e) => {
                    first_err.get_or_insert(e.into());
                }
            }
        }
        for h in handles {
            if let Err(e) = h.wait() {
                first_err.get_or_insert(e.into());
            }
        }
    }
    for (dst, _, buf) in &gets {
        // Local heap copy (the destination is on this locale).
        if let Err(e) = comm.put(*dst, buf) {
            first_err.get_or_insert(e.into());
        }
    }
    // Native ones in batches that may be in flight together (one wait per
    // batch in delivery-complete mode instead of one per atomic).
    if !native.is_empty() {
        if let Err(e) = comm.amo_unordered_native(&native) {
            first_err.get_or_insert(e.into());
        }
    }
    for (locale, batch) in via_am {
        if let Err(e) = am.execute_on_fast(locale, amo_batch, &batch) {
            first_err.get_or_insert(e.into());
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_entries_round_trip() {
        let mut v = Vec::new();
        encode(&mut v, 0x1234, AmoType::F64, AmoOp::Max, 99);
        encode(&mut v, 8, AmoType::I8, AmoOp::Xor, 0xff);
        assert_eq!(v.len(), 2 * BATCH_ENTRY);
        assert_eq!(
            decode(&v[..BATCH_ENTRY]),
            Some((0x1234, AmoType::F64, AmoOp::Max, 99))
        );
        assert_eq!(
            decode(&v[BATCH_ENTRY..]),
            Some((8, AmoType::I8, AmoOp::Xor, 0xff))
        );
        assert_eq!(decode(&v[..5]), None);
        let mut bad = v[..BATCH_ENTRY].to_vec();
        bad[16] = 200;
        assert_eq!(decode(&bad), None);
    }
}
