//! The data path's posting calls: one thin wrapper per libfabric call, on
//! [`Endpoint`], as rustix keeps each raw system call in its backend's
//! `syscalls.rs`.
//!
//! Each wrapper builds the call's descriptor from plain values
//! ([`LocalBuf`], [`RemoteBuf`], [`Flags`]), makes the call, and says what
//! came of it: [`Posted::Done`], [`Posted::TryAgain`] (`-FI_EAGAIN`: the
//! queue is full for now; drive progress and post again), or an
//! [`OfiError`] naming the call. No raw return code leaves this module.
//! The wrappers are `#[inline]` and allocate nothing; the error is built out
//! of line (`error::failed`), so an inlined post costs the call and
//! two compares. Riding out `TryAgain` (reaping completions in between) is
//! the caller's: it knows how to drive progress (`ctx::TxContext`).
//!
//! The wrappers are `unsafe` where libfabric keeps using a buffer after the
//! call returns: the caller promises the memory stays valid (and, for a
//! local buffer, untouched) until the operation's completion is reaped.

use super::error::{check, failed, is_eagain, OfiError};
use super::fid::{Endpoint, FiAddr};
use crate::amo::{AmoForm, AmoOp, AmoType};
use libfabric_sys as sys;
use std::ffi::c_void;
use std::ptr;

/// A local buffer, with the descriptor libfabric wants for it.
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
    pub fi_addr: FiAddr,
    /// Address in the target's registration (VA or offset, per `FI_MR_VIRT_ADDR`).
    pub addr: u64,
    /// Key of the target's registration.
    pub key: u64,
}

/// Per-operation flags added to a post (every wrapper of a `*msg` call adds
/// `FI_COMPLETION` itself: each such operation reports a completion).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags(u64);

impl Flags {
    /// No extra flag.
    pub const NONE: Flags = Flags(0);
    /// `FI_FENCE`: starts only after every earlier operation of this
    /// endpoint to the same target completed there.
    pub const FENCE: Flags = Flags(sys::FI_FENCE);
    /// `FI_DELIVERY_COMPLETE`: completes only once its effect is visible at
    /// the target.
    pub const DELIVERY_COMPLETE: Flags = Flags(sys::FI_DELIVERY_COMPLETE);
    /// `FI_INJECT`: the buffer is copied before the call returns.
    pub const INJECT: Flags = Flags(sys::FI_INJECT);

    /// Whether every flag of `other` is set.
    #[inline]
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The raw bits, with `FI_COMPLETION`.
    #[inline]
    const fn with_completion(self) -> u64 {
        self.0 | sys::FI_COMPLETION
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    #[inline]
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

/// What a posting call answered, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a post that answered TryAgain was not posted"]
pub enum Posted {
    /// The provider took the operation.
    Done,
    /// The queue is full for now (`-FI_EAGAIN`): nothing was posted; drive
    /// progress (read the CQ) and post again.
    TryAgain,
}

/// The answer of a posting call's return code.
#[inline(always)]
fn posted(call: &'static str, ret: isize) -> Result<Posted, OfiError> {
    let ret = ret as i64;
    if ret >= 0 {
        Ok(Posted::Done)
    } else if is_eagain(ret) {
        Ok(Posted::TryAgain)
    } else {
        Err(failed(call, ret))
    }
}

/// The direction of an RMA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rma {
    /// `fi_writemsg`: local to remote.
    Write,
    /// `fi_readmsg`: remote to local.
    Read,
}

impl Rma {
    /// The libfabric call, for messages.
    pub const fn call(self) -> &'static str {
        match self {
            Rma::Write => "fi_writemsg",
            Rma::Read => "fi_readmsg",
        }
    }
}

impl AmoForm {
    /// The libfabric call that posts an atomic of this form.
    pub const fn call(self) -> &'static str {
        match self {
            AmoForm::Plain => "fi_atomicmsg",
            AmoForm::Fetch => "fi_fetch_atomicmsg",
            AmoForm::Compare => "fi_compare_atomicmsg",
        }
    }
}

/// libfabric's datatype of an atomic operand type.
const fn fi_datatype(ty: AmoType) -> sys::fi_datatype {
    match ty {
        AmoType::I8 => sys::FI_INT8,
        AmoType::I16 => sys::FI_INT16,
        AmoType::I32 => sys::FI_INT32,
        AmoType::I64 => sys::FI_INT64,
        AmoType::U8 => sys::FI_UINT8,
        AmoType::U16 => sys::FI_UINT16,
        AmoType::U32 => sys::FI_UINT32,
        AmoType::U64 => sys::FI_UINT64,
        AmoType::F32 => sys::FI_FLOAT,
        AmoType::F64 => sys::FI_DOUBLE,
    }
}

/// libfabric's op of an atomic operation.
const fn fi_op(op: AmoOp) -> sys::fi_op {
    match op {
        AmoOp::Read => sys::FI_ATOMIC_READ,
        AmoOp::Write => sys::FI_ATOMIC_WRITE,
        AmoOp::CompareSwap => sys::FI_CSWAP,
        AmoOp::Add => sys::FI_SUM,
        AmoOp::And => sys::FI_BAND,
        AmoOp::Or => sys::FI_BOR,
        AmoOp::Xor => sys::FI_BXOR,
        AmoOp::Min => sys::FI_MIN,
        AmoOp::Max => sys::FI_MAX,
    }
}

/// The descriptors of one atomic on one element, in storage the caller keeps
/// in place: some providers (udp;ofi_rxd in 1.17) keep pointers to the
/// result and compare iovs until the operation completes.
///
/// Its operands live in a caller's scratch area of three 8-byte words:
/// operand at +0, compare value at +8, fetched result at +16.
#[derive(Debug)]
pub struct AtomicMsg {
    msg: sys::fi_msg_atomic,
    operand: sys::fi_ioc,
    compare: sys::fi_ioc,
    result: sys::fi_ioc,
    rma: sys::fi_rma_ioc,
    desc: [*mut c_void; 3],
}

// By hand: raw pointers are `Default` only since Rust 1.88, above our MSRV.
impl Default for AtomicMsg {
    fn default() -> AtomicMsg {
        AtomicMsg {
            msg: Default::default(),
            operand: Default::default(),
            compare: Default::default(),
            result: Default::default(),
            rma: Default::default(),
            desc: [std::ptr::null_mut(); 3],
        }
    }
}

impl AtomicMsg {
    /// Describes `op` on one `ty` element at `remote`, its operands in the
    /// three words at `scratch` (local descriptor `desc`). Points into
    /// `self`: post it from where it stays until the operation completes.
    #[inline]
    pub fn prepare(
        &mut self,
        remote: RemoteBuf,
        ty: AmoType,
        op: AmoOp,
        scratch: *mut u8,
        desc: *mut c_void,
    ) {
        self.desc = [desc; 3];
        self.operand = sys::fi_ioc {
            addr: scratch as *mut c_void,
            count: 1,
        };
        self.compare = sys::fi_ioc {
            addr: scratch.wrapping_add(8) as *mut c_void,
            count: 1,
        };
        self.result = sys::fi_ioc {
            addr: scratch.wrapping_add(16) as *mut c_void,
            count: 1,
        };
        self.rma = sys::fi_rma_ioc {
            addr: remote.addr,
            count: 1,
            key: remote.key,
        };
        self.msg = sys::fi_msg_atomic {
            msg_iov: &self.operand,
            desc: &mut self.desc[0],
            iov_count: 1,
            addr: remote.fi_addr,
            rma_iov: &self.rma,
            rma_iov_count: 1,
            datatype: fi_datatype(ty),
            op: fi_op(op),
            context: ptr::null_mut(),
            data: 0,
        };
    }
}

impl Endpoint {
    /// `fi_inject_write` of `len` bytes at `buf` to `remote`: the provider
    /// copies the source before returning, and no completion is reported.
    ///
    /// # Safety
    /// `buf..buf+len` is readable; `remote` lies in the target's
    /// registration.
    #[inline]
    pub unsafe fn inject_write(
        &self,
        buf: *const u8,
        len: usize,
        remote: RemoteBuf,
    ) -> Result<Posted, OfiError> {
        // SAFETY: the endpoint is enabled; the caller vouches for the buffers;
        // with FI_INJECT nothing is used after the call.
        let ret = unsafe {
            sys::fi_inject_write(
                self.as_ptr(),
                buf as *const c_void,
                len,
                remote.fi_addr,
                remote.addr,
                remote.key,
            )
        };
        posted("fi_inject_write", ret)
    }

    /// `fi_writemsg` or `fi_readmsg` of `local` against `remote` (same
    /// length), its completion reported with `context`.
    ///
    /// # Safety
    /// `local` stays valid, and untouched by anyone else, until the
    /// completion is reaped; `remote` lies in the target's registration.
    #[inline]
    pub unsafe fn rma_msg(
        &self,
        dir: Rma,
        local: LocalBuf,
        remote: RemoteBuf,
        context: u64,
        flags: Flags,
    ) -> Result<Posted, OfiError> {
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
        let msg = sys::fi_msg_rma {
            msg_iov: &iov as *const libc::iovec as *const sys::iovec,
            desc: &mut desc,
            iov_count: 1,
            addr: remote.fi_addr,
            rma_iov: &rma,
            rma_iov_count: 1,
            context: context as *mut c_void,
            data: 0,
        };
        let f = flags.with_completion();
        // SAFETY: msg and what it points to live across the call; the caller
        // keeps the local buffer alive until completion.
        let ret = unsafe {
            match dir {
                Rma::Write => sys::fi_writemsg(self.as_ptr(), &msg, f),
                Rma::Read => sys::fi_readmsg(self.as_ptr(), &msg, f),
            }
        };
        posted(dir.call(), ret)
    }

    /// `fi_inject` of `len` bytes at `buf` to the receive endpoint at
    /// `fi_addr`: the provider copies the message before returning, and no
    /// completion is reported.
    ///
    /// # Safety
    /// `buf..buf+len` is readable.
    #[inline]
    pub unsafe fn inject_send(
        &self,
        buf: *const u8,
        len: usize,
        fi_addr: FiAddr,
    ) -> Result<Posted, OfiError> {
        // SAFETY: the endpoint is enabled; the caller vouches for the buffer;
        // with fi_inject nothing is used after the call.
        let ret = unsafe { sys::fi_inject(self.as_ptr(), buf as *const c_void, len, fi_addr) };
        posted("fi_inject", ret)
    }

    /// `fi_sendmsg` of `local` to the receive endpoint at `fi_addr`.
    ///
    /// # Safety
    /// `local` stays valid and unchanged until the completion is reaped
    /// (with [`Flags::INJECT`]: until the call returns).
    #[inline]
    pub unsafe fn send_msg(
        &self,
        local: LocalBuf,
        fi_addr: FiAddr,
        flags: Flags,
    ) -> Result<Posted, OfiError> {
        let iov = libc::iovec {
            iov_base: local.ptr as *mut c_void,
            iov_len: local.len,
        };
        let mut desc = local.desc;
        let msg = sys::fi_msg {
            msg_iov: &iov as *const libc::iovec as *const sys::iovec,
            desc: &mut desc,
            iov_count: 1,
            addr: fi_addr,
            context: ptr::null_mut(),
            data: 0,
        };
        // SAFETY: msg lives across the call; the caller keeps the payload.
        let ret = unsafe { sys::fi_sendmsg(self.as_ptr(), &msg, flags.with_completion()) };
        posted("fi_sendmsg", ret)
    }

    /// `fi_send` (the short form, no flags) of `len` bytes at `buf`.
    ///
    /// # Safety
    /// As [`Endpoint::send_msg`].
    #[inline]
    pub unsafe fn send(
        &self,
        buf: *const u8,
        len: usize,
        desc: *mut c_void,
        fi_addr: FiAddr,
    ) -> Result<Posted, OfiError> {
        // SAFETY: the caller keeps the payload until completion.
        let ret = unsafe {
            sys::fi_send(
                self.as_ptr(),
                buf as *const c_void,
                len,
                desc,
                fi_addr,
                ptr::null_mut(),
            )
        };
        posted("fi_send", ret)
    }

    /// `fi_recv` of one message from anyone into `len` bytes at `buf`, its
    /// completion reported with `context`.
    ///
    /// # Safety
    /// `buf..buf+len` stays valid and reserved for the provider until the
    /// completion is reaped.
    #[inline]
    pub unsafe fn recv(
        &self,
        buf: *mut u8,
        len: usize,
        desc: *mut c_void,
        context: usize,
    ) -> Result<Posted, OfiError> {
        // SAFETY: the caller reserves the buffer until completion.
        let ret = unsafe {
            sys::fi_recv(
                self.as_ptr(),
                buf as *mut c_void,
                len,
                desc,
                sys::FI_ADDR_UNSPEC,
                context as *mut c_void,
            )
        };
        posted("fi_recv", ret)
    }

    /// Posts a multi-receive buffer (`fi_recvmsg` with `FI_MULTI_RECV`): the
    /// provider packs incoming messages into it and reports `FI_MULTI_RECV`
    /// in a completion's flags when it retires the buffer
    /// ([`super::RecvCompletion::retires_buffer`]).
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unused by anyone else until the
    /// provider retires it (or the endpoint is closed).
    #[inline]
    pub unsafe fn recv_multi(
        &self,
        buf: *mut u8,
        len: usize,
        desc: *mut c_void,
        context: usize,
    ) -> Result<Posted, OfiError> {
        let iov = libc::iovec {
            iov_base: buf as *mut c_void,
            iov_len: len,
        };
        let mut d = desc;
        let msg = sys::fi_msg {
            msg_iov: &iov as *const libc::iovec as *const sys::iovec,
            desc: &mut d,
            iov_count: 1,
            addr: sys::FI_ADDR_UNSPEC,
            context: context as *mut c_void,
            data: 0,
        };
        // SAFETY: msg lives across the call; the caller keeps buf reserved.
        let ret = unsafe { sys::fi_recvmsg(self.as_ptr(), &msg, sys::FI_MULTI_RECV) };
        posted("fi_recvmsg(FI_MULTI_RECV)", ret)
    }

    /// `fi_atomicmsg`, `fi_fetch_atomicmsg` or `fi_compare_atomicmsg`
    /// (per `form`) of the atomic `m` describes ([`AtomicMsg::prepare`]).
    ///
    /// # Safety
    /// `m` was prepared, and it and the scratch words it names stay in
    /// place and untouched until the operation completes.
    #[inline]
    pub unsafe fn atomic_msg(
        &self,
        form: AmoForm,
        m: &mut AtomicMsg,
        flags: Flags,
    ) -> Result<Posted, OfiError> {
        let f = flags.with_completion();
        let ep = self.as_ptr();
        // SAFETY: the caller keeps m and its buffers in place until completion.
        let ret = unsafe {
            match form {
                AmoForm::Plain => sys::fi_atomicmsg(ep, &m.msg, f),
                AmoForm::Fetch => {
                    sys::fi_fetch_atomicmsg(ep, &m.msg, &mut m.result, &mut m.desc[2], 1, f)
                }
                AmoForm::Compare => sys::fi_compare_atomicmsg(
                    ep,
                    &m.msg,
                    &m.compare,
                    &mut m.desc[1],
                    1,
                    &mut m.result,
                    &mut m.desc[2],
                    1,
                    f,
                ),
            }
        };
        posted(form.call(), ret)
    }

    /// `fi_inject_atomic` of `op` on one `ty` element at `remote`, its
    /// operand read at `operand`: the provider copies the operand before
    /// returning and reports no completion (a non-fetching atomic only).
    ///
    /// # Safety
    /// `operand` is readable for `ty.size()` bytes; `remote` lies in the
    /// target's registration.
    #[inline]
    pub unsafe fn inject_atomic(
        &self,
        operand: *const u8,
        remote: RemoteBuf,
        ty: AmoType,
        op: AmoOp,
    ) -> Result<Posted, OfiError> {
        // SAFETY: the endpoint is enabled; the caller vouches for the
        // operand and the remote word; with inject nothing is used after
        // the call.
        let ret = unsafe {
            sys::fi_inject_atomic(
                self.as_ptr(),
                operand as *const c_void,
                1,
                remote.fi_addr,
                remote.addr,
                remote.key,
                fi_datatype(ty),
                fi_op(op),
            )
        };
        posted("fi_inject_atomic", ret)
    }

    /// `fi_fetch_atomic` (the short form, no flags) of `op` on one `ty`
    /// element at `remote`: operand read at `operand`, old value written to
    /// `result` (both described by `desc`).
    ///
    /// # Safety
    /// `operand` and `result` stay valid and untouched until the completion
    /// is reaped; `remote` lies in the target's registration.
    #[inline]
    pub unsafe fn fetch_atomic(
        &self,
        operand: *const u8,
        result: *mut u8,
        desc: *mut c_void,
        remote: RemoteBuf,
        ty: AmoType,
        op: AmoOp,
    ) -> Result<Posted, OfiError> {
        // SAFETY: the caller keeps both words until completion.
        let ret = unsafe {
            sys::fi_fetch_atomic(
                self.as_ptr(),
                operand as *const c_void,
                1,
                desc,
                result as *mut c_void,
                desc,
                remote.fi_addr,
                remote.addr,
                remote.key,
                fi_datatype(ty),
                fi_op(op),
                ptr::null_mut(),
            )
        };
        posted("fi_fetch_atomic", ret)
    }

    /// Whether the provider does `op` on `ty` in `form` natively on this
    /// endpoint (`fi_atomicvalid` and its fetch/compare forms, at least one
    /// element).
    pub fn atomic_valid(&self, ty: AmoType, op: AmoOp, form: AmoForm) -> bool {
        let mut count = 0usize;
        let (ep, dt, op) = (self.as_ptr(), fi_datatype(ty), fi_op(op));
        // SAFETY: the endpoint is enabled; count is an out-param.
        let ret = unsafe {
            match form {
                AmoForm::Plain => sys::fi_atomicvalid(ep, dt, op, &mut count),
                AmoForm::Fetch => sys::fi_fetch_atomicvalid(ep, dt, op, &mut count),
                AmoForm::Compare => sys::fi_compare_atomicvalid(ep, dt, op, &mut count),
            }
        };
        ret == 0 && count >= 1
    }

    /// Sets `FI_OPT_MIN_MULTI_RECV`: a multi-receive buffer is retired once
    /// less than `bytes` of it is free.
    pub fn set_min_multi_recv(&self, bytes: usize) -> Result<(), OfiError> {
        // SAFETY: bytes lives across the call; the option takes a size_t.
        let ret = unsafe {
            sys::fi_setopt(
                self.fid(),
                sys::FI_OPT_ENDPOINT as i32,
                sys::FI_OPT_MIN_MULTI_RECV as i32,
                &bytes as *const usize as *const c_void,
                std::mem::size_of::<usize>(),
            )
        };
        check("fi_setopt(FI_OPT_MIN_MULTI_RECV)", ret)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn return_codes_become_posted_or_a_named_error() {
        assert_eq!(posted("fi_x", 0), Ok(Posted::Done));
        assert_eq!(posted("fi_x", 3), Ok(Posted::Done));
        assert_eq!(
            posted("fi_x", -(sys::FI_EAGAIN as isize)),
            Ok(Posted::TryAgain)
        );
        let e = posted("fi_writemsg", -(libc::EINVAL as isize)).unwrap_err();
        assert_eq!(e.call, "fi_writemsg");
        assert_eq!(e.code, -(libc::EINVAL as i64));
        assert!(!e.is_try_again());
    }

    #[test]
    fn flags_combine_and_always_ask_for_a_completion() {
        let f = Flags::FENCE | Flags::DELIVERY_COMPLETE;
        assert!(f.contains(Flags::FENCE) && f.contains(Flags::DELIVERY_COMPLETE));
        assert!(!f.contains(Flags::INJECT));
        assert!(Flags::NONE.contains(Flags::NONE));
        assert_eq!(Flags::NONE.with_completion(), sys::FI_COMPLETION);
        assert_eq!(
            f.with_completion(),
            sys::FI_FENCE | sys::FI_DELIVERY_COMPLETE | sys::FI_COMPLETION
        );
    }

    #[test]
    fn every_atomic_type_and_op_has_its_own_libfabric_spelling() {
        let dts: std::collections::HashSet<_> =
            AmoType::ALL.iter().map(|t| fi_datatype(*t)).collect();
        assert_eq!(dts.len(), AmoType::ALL.len());
        let ops: std::collections::HashSet<_> = AmoOp::ALL.iter().map(|o| fi_op(*o)).collect();
        assert_eq!(ops.len(), AmoOp::ALL.len());
        assert_eq!(fi_datatype(AmoType::U64), sys::FI_UINT64);
        assert_eq!(fi_op(AmoOp::Add), sys::FI_SUM);
    }

    #[test]
    fn an_atomic_message_points_into_itself_and_the_scratch_words() {
        let mut scratch = [0u64; 3];
        let s = scratch.as_mut_ptr() as *mut u8;
        let mut m = AtomicMsg::default();
        let remote = RemoteBuf {
            fi_addr: 5,
            addr: 0x1000,
            key: 7,
        };
        m.prepare(remote, AmoType::I32, AmoOp::Min, s, ptr::null_mut());
        assert_eq!(m.operand.addr, s as *mut c_void);
        assert_eq!(m.compare.addr, s.wrapping_add(8) as *mut c_void);
        assert_eq!(m.result.addr, s.wrapping_add(16) as *mut c_void);
        assert_eq!(m.msg.msg_iov, &m.operand as *const sys::fi_ioc);
        assert_eq!(m.msg.rma_iov, &m.rma as *const sys::fi_rma_ioc);
        assert_eq!((m.rma.addr, m.rma.key, m.msg.addr), (0x1000, 7, 5));
        assert_eq!((m.msg.datatype, m.msg.op), (sys::FI_INT32, sys::FI_MIN));
    }
}
