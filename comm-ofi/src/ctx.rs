//! Transmit contexts: one endpoint + CQ through which a thread posts RMA,
//! atomics and sends, and reaps their completions.
//!
//! Ordering guarantees of libfabric (message ordering, fences) hold only
//! between operations on the same context, so the MCM bookkeeping (which
//! targets hold dangling stores) lives here too. The posting calls ride out
//! `-FI_EAGAIN` by reaping completions (which also drives manual progress).

use crate::error::{check, Error, OfiError, Result};
use crate::ofi::{CqEntry, Endpoint, WaitMode};
use libfabric_sys as sys;
use std::ffi::c_void;
use std::ptr;

/// Scratch words per context for atomic operands/results (registered memory).
pub const SCRATCH_BYTES: usize = 64;

/// A transmit context.
#[derive(Debug)]
pub struct TxContext {
    ep: std::sync::Arc<Endpoint>,
    /// Operations posted and not yet completed.
    outstanding: usize,
    /// Registered scratch for atomic operand / compare / result.
    scratch: *mut u8,
    /// Local descriptor of heap memory for this endpoint.
    desc: *mut c_void,
    /// Whether waits spin or block.
    wait: WaitMode,
    /// Index in the context table (for messages).
    pub index: usize,
    put_dangling: Vec<u32>,
    /// Domain-wide lock for providers whose threading claims do not hold
    /// (see `quirks`); None for the others.
    serial: Option<DomainLock>,
    amo_desc: Box<AmoDesc>,
}

/// Stable storage for one atomic's descriptors (see [`TxContext::atomic`]).
#[derive(Debug, Default)]
struct AmoDesc {
    msg: sys::fi_msg_atomic,
    operand: sys::fi_ioc,
    compare: sys::fi_ioc,
    result: sys::fi_ioc,
    rma: sys::fi_rma_ioc,
    desc: [*mut c_void; 3],
}

/// A lock serialising every libfabric call of a domain.
pub type DomainLock = std::sync::Arc<parking_lot::Mutex<()>>;

// SAFETY: the raw pointers point into the registered heap, which lives as long
// as the Comm owning this context; the context is used by one thread at a time
// (it sits behind a mutex or is bound to one thread).
unsafe impl Send for TxContext {}

/// Where a local buffer lives, for the descriptor libfabric wants.
#[derive(Debug, Clone, Copy)]
pub struct LocalBuf {
    /// Start.
    pub ptr: *mut u8,
    /// Length.
    pub len: usize,
    /// MR descriptor (null where the provider needs none).
    pub desc: *mut c_void,
}

/// A remote region in the provider's addressing.
#[derive(Debug, Clone, Copy)]
pub struct RemoteBuf {
    /// AV address of the target's receive endpoint.
    pub fi_addr: sys::fi_addr_t,
    /// Address in the target's registration (VA or offset, per `FI_MR_VIRT_ADDR`).
    pub addr: u64,
    /// Key of the target's registration.
    pub key: u64,
}

impl TxContext {
    /// Wraps an enabled endpoint; `scratch` is `SCRATCH_BYTES` of registered heap.
    pub fn new(
        index: usize,
        ep: std::sync::Arc<Endpoint>,
        scratch: *mut u8,
        desc: *mut c_void,
        serial: Option<DomainLock>,
    ) -> TxContext {
        let wait = ep.cq().wait_mode();
        TxContext {
            ep,
            outstanding: 0,
            scratch,
            desc,
            wait,
            index,
            put_dangling: Vec::new(),
            serial,
            amo_desc: Box::default(),
        }
    }

    /// Operations in flight on this context.
    pub fn outstanding(&self) -> usize {
        self.outstanding
    }

    /// Descriptor for heap memory on this context.
    pub fn heap_desc(&self) -> *mut c_void {
        self.desc
    }

    /// Reaps completions without waiting; returns how many were reaped.
    pub fn progress(&mut self) -> Result<usize> {
        let mut buf = [CqEntry::default(); 16];
        let timeout = if self.outstanding > 0 { 1 } else { 0 };
        let guard = self.serial.as_ref().map(|l| l.lock());
        let r = self.ep.cq().read(&mut buf, timeout);
        drop(guard);
        match r {
            Ok(n) => {
                self.outstanding = self.outstanding.saturating_sub(n);
                Ok(n)
            }
            Err(e) => {
                self.outstanding = self.outstanding.saturating_sub(1);
                Err(Error::Ofi(e.error))
            }
        }
    }

    /// Waits until every operation posted on this context has completed.
    pub fn wait_all(&mut self) -> Result<()> {
        let mut idle = 0u32;
        let mut first_err = None;
        while self.outstanding > 0 {
            match self.progress() {
                Ok(0) => {
                    idle += 1;
                    if self.wait == WaitMode::Spin && idle > 64 {
                        std::thread::yield_now();
                    }
                }
                Ok(_) => idle = 0,
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn post(
        &mut self,
        call: &'static str,
        mut f: impl FnMut(*mut sys::fid_ep) -> isize,
    ) -> Result<()> {
        loop {
            let guard = self.serial.as_ref().map(|l| l.lock());
            let ret = f(self.ep.as_ptr());
            drop(guard);
            if ret == -(sys::FI_EAGAIN as isize) {
                self.progress()?;
                continue;
            }
            check(call, ret as i64).map_err(Error::Ofi)?;
            self.outstanding += 1;
            return Ok(());
        }
    }

    /// Posts an RMA write of `local` to `remote` with `flags`.
    pub fn write(&mut self, local: LocalBuf, remote: RemoteBuf, flags: u64) -> Result<()> {
        self.rma("fi_writemsg", sys::fi_writemsg, local, remote, flags)
    }

    /// Posts an RMA read of `remote` into `local` with `flags`.
    pub fn read(&mut self, local: LocalBuf, remote: RemoteBuf, flags: u64) -> Result<()> {
        self.rma("fi_readmsg", sys::fi_readmsg, local, remote, flags)
    }

    /// One RMA (`fi_writemsg` or `fi_readmsg`) of `local` against `remote`.
    fn rma(
        &mut self,
        call: &'static str,
        op: unsafe extern "C" fn(*mut sys::fid_ep, *const sys::fi_msg_rma, u64) -> isize,
        local: LocalBuf,
        remote: RemoteBuf,
        flags: u64,
    ) -> Result<()> {
        let iov = libc::iovec {
            iov_base: local.ptr as *mut c_void,
            iov_len: local.len,
        };
        let rma = sys::fi_rma_iov {
            addr: remote.addr,
            len: local.len,
            key: remote.key,
        };
        let mut desc = local.desc;
        self.post(call, |ep| {
            let msg = sys::fi_msg_rma {
                msg_iov: &iov as *const libc::iovec as *const sys::iovec,
                desc: &mut desc,
                iov_count: 1,
                addr: remote.fi_addr,
                rma_iov: &rma,
                rma_iov_count: 1,
                context: ptr::null_mut(),
                data: 0,
            };
            // SAFETY: msg and everything it points to live across the call; the
            // local buffer stays valid until completion (callers wait, or keep
            // it alive in a handle); the remote region was validated.
            unsafe { op(ep, &msg, flags | sys::FI_COMPLETION) }
        })
    }

    /// Posts a message send of `local` to the receive endpoint at `fi_addr`.
    pub fn send(&mut self, fi_addr: sys::fi_addr_t, local: LocalBuf, flags: u64) -> Result<()> {
        let iov = libc::iovec {
            iov_base: local.ptr as *mut c_void,
            iov_len: local.len,
        };
        let mut desc = local.desc;
        self.post("fi_sendmsg", |ep| {
            let msg = sys::fi_msg {
                msg_iov: &iov as *const libc::iovec as *const sys::iovec,
                desc: &mut desc,
                iov_count: 1,
                addr: fi_addr,
                context: ptr::null_mut(),
                data: 0,
            };
            // SAFETY: msg lives across the call; the payload stays valid until
            // completion (callers wait before reusing it).
            unsafe { sys::fi_sendmsg(ep, &msg, flags | sys::FI_COMPLETION) }
        })
    }

    /// Posts an atomic on one element of `datatype` at `remote`. The operand
    /// is taken from scratch word 0, the compare value from word 1, and a
    /// fetched result lands in word 2 (see [`TxContext::scratch_words`]).
    pub fn atomic(
        &mut self,
        remote: RemoteBuf,
        datatype: sys::fi_datatype,
        op: sys::fi_op,
        kind: crate::amo::AmoKind,
        flags: u64,
    ) -> Result<()> {
        use crate::amo::AmoKind;
        let scratch = self.scratch;
        // The descriptor structs live in the context, not on this stack frame:
        // some providers (udp;ofi_rxd in 1.17) keep pointers to the result
        // and compare iovs until the operation completes.
        let d = &mut *self.amo_desc;
        d.desc = [self.desc; 3];
        d.operand = sys::fi_ioc {
            addr: scratch as *mut c_void,
            count: 1,
        };
        d.compare = sys::fi_ioc {
            // SAFETY: scratch has SCRATCH_BYTES; word 1 is in bounds.
            addr: unsafe { scratch.add(8) } as *mut c_void,
            count: 1,
        };
        d.result = sys::fi_ioc {
            // SAFETY: word 2 is in bounds.
            addr: unsafe { scratch.add(16) } as *mut c_void,
            count: 1,
        };
        d.rma = sys::fi_rma_ioc {
            addr: remote.addr,
            count: 1,
            key: remote.key,
        };
        d.msg = sys::fi_msg_atomic {
            msg_iov: &d.operand,
            desc: &mut d.desc[0],
            iov_count: 1,
            addr: remote.fi_addr,
            rma_iov: &d.rma,
            rma_iov_count: 1,
            datatype,
            op,
            context: ptr::null_mut(),
            data: 0,
        };
        let call = match kind {
            AmoKind::Plain => "fi_atomicmsg",
            AmoKind::Fetch => "fi_fetch_atomicmsg",
            AmoKind::Compare => "fi_compare_atomicmsg",
        };
        let d: *mut AmoDesc = &mut *self.amo_desc;
        self.post(call, |ep| {
            let f = flags | sys::FI_COMPLETION;
            // SAFETY: d points into this context's boxed AmoDesc, which stays
            // put and untouched until the op completes (callers wait before
            // posting the next atomic); scratch is registered heap memory.
            unsafe {
                let d = &mut *d;
                match kind {
                    AmoKind::Plain => sys::fi_atomicmsg(ep, &d.msg, f),
                    AmoKind::Fetch => {
                        sys::fi_fetch_atomicmsg(ep, &d.msg, &mut d.result, &mut d.desc[2], 1, f)
                    }
                    AmoKind::Compare => sys::fi_compare_atomicmsg(
                        ep,
                        &d.msg,
                        &d.compare,
                        &mut d.desc[1],
                        1,
                        &mut d.result,
                        &mut d.desc[2],
                        1,
                        f,
                    ),
                }
            }
        })
    }

    /// The scratch words: (operand, compare, result).
    pub fn scratch_words(&mut self) -> (&mut [u8; 8], &mut [u8; 8], &mut [u8; 8]) {
        // SAFETY: scratch points to SCRATCH_BYTES of heap memory owned by this
        // context; the three 8-byte words are disjoint and no operation is in
        // flight on them when the caller holds &mut self between ops.
        unsafe {
            (
                &mut *(self.scratch as *mut [u8; 8]),
                &mut *(self.scratch.add(8) as *mut [u8; 8]),
                &mut *(self.scratch.add(16) as *mut [u8; 8]),
            )
        }
    }

    /// Whether the provider can do (datatype, op, kind) natively on this endpoint.
    pub fn atomic_valid(
        &self,
        datatype: sys::fi_datatype,
        op: sys::fi_op,
        kind: crate::amo::AmoKind,
    ) -> bool {
        use crate::amo::AmoKind;
        let mut count = 0usize;
        let ep = self.ep.as_ptr();
        // SAFETY: ep is an enabled endpoint; count is an out-param.
        let ret = unsafe {
            match kind {
                AmoKind::Plain => sys::fi_atomicvalid(ep, datatype, op, &mut count),
                AmoKind::Fetch => sys::fi_fetch_atomicvalid(ep, datatype, op, &mut count),
                AmoKind::Compare => sys::fi_compare_atomicvalid(ep, datatype, op, &mut count),
            }
        };
        ret == 0 && count >= 1
    }
}

/// An `OfiError` for an operation that failed without a libfabric code.
pub fn op_error(call: &'static str, text: impl Into<String>) -> OfiError {
    OfiError {
        call,
        code: 0,
        text: text.into(),
    }
}

impl TxContext {
    /// Interim bookkeeping until the MCM engine lands: note a PUT to `target`
    /// whose visibility is not yet proven.
    pub fn mark_put_dangling(&mut self, target: u32, _n: u32) {
        if !self.put_dangling.contains(&target) {
            self.put_dangling.push(target);
        }
    }

    /// Takes the set of targets with dangling PUTs.
    pub fn take_put_dangling(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.put_dangling)
    }
}
