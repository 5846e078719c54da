//! PUT and GET, blocking and non-blocking: the mapped path's copies, the
//! local shortcut, bounce buffers for `FI_MR_LOCAL`, and the hand-over to
//! the MCM selector; [`NbHandle`], the handle of a non-blocking one.

use super::*;

/// See `Comm::nb_route`.
enum NbRoute {
    /// Nothing to transfer.
    Empty,
    /// Done by the blocking PUT/GET.
    Blocking,
    /// Posted to the provider.
    Provider(RemoteBuf),
}

impl Comm {
    /// Validates a PUT/GET and tells where it goes; `None` means nothing to
    /// send (empty).
    pub(super) fn rma_target(&self, at: GlobalAddr, len: usize) -> Result<Option<RemoteBuf>> {
        let remote = self.remote(at, len)?;
        Ok((len > 0).then_some(remote))
    }

    pub(super) fn rma_op(
        &self,
        ctx: &TxContext,
        ptr: *const u8,
        len: usize,
        remote: RemoteBuf,
    ) -> RmaOp {
        RmaOp {
            local: LocalBuf {
                ptr: ptr as *mut u8,
                len,
                desc: self.local_desc(ctx, ptr, len),
            },
            remote,
            chunk: self.prov.max_msg_size,
            seq: 0,
        }
    }

    /// Blocking PUT: copies `src` to `dst`. On return `src` may be reused;
    /// the stores become visible to others by the caller's next MCM boundary.
    pub fn put(&self, dst: GlobalAddr, src: &[u8]) -> Result<()> {
        self.count_rma(Counter::Put, Counter::PutBytes, src.len());
        if let Some(p) = self.mapped.translate(dst.locale, dst.addr, src.len()) {
            // No postponed AMO can be waiting there: atomics on a mapped
            // locale's words are CPU atomics, done at once.
            self.diag.count(Counter::RmaLocal);
            // SAFETY: p..p+len lies in a heap mapped here (translate checked
            // the range); src is a live slice; ranges may overlap (memmove).
            unsafe { std::ptr::copy(src.as_ptr(), p, src.len()) };
            return Ok(());
        }
        let Some(remote) = self.rma_target(dst, src.len())? else {
            return Ok(());
        };
        if dst.locale == self.me {
            self.diag.count(Counter::RmaLocal);
            // SAFETY: dst was validated to lie in our heap; src is a live slice;
            // ranges may overlap (memmove semantics).
            unsafe { std::ptr::copy(src.as_ptr(), dst.addr as *mut u8, src.len()) };
            return Ok(());
        }
        if self.needs_bounce(src.as_ptr(), src.len()) {
            return self.bounced(
                dst,
                src.len(),
                |tmp, off, len| {
                    tmp[..len].copy_from_slice(&src[off..off + len]);
                },
                true,
            );
        }
        note_fabric_work();
        self.with_ctx_settled(Settle::IfAnyTo(dst.locale), |ctx| {
            let op = self.rma_op(ctx, src.as_ptr(), src.len(), remote);
            self.selector.put(ctx, dst.locale, op, Blocking::Yes)
        })
        .map_err(peer_err("PUT", src.len(), dst.locale))
    }

    /// Blocking GET: copies `src` into `dst`.
    pub fn get(&self, dst: &mut [u8], src: GlobalAddr) -> Result<()> {
        self.count_rma(Counter::Get, Counter::GetBytes, dst.len());
        if let Some(p) = self.mapped.translate(src.locale, src.addr, dst.len()) {
            self.diag.count(Counter::RmaLocal);
            // SAFETY: p..p+len lies in a heap mapped here (translate checked
            // the range); dst is a live slice.
            unsafe { std::ptr::copy(p, dst.as_mut_ptr(), dst.len()) };
            return Ok(());
        }
        let Some(remote) = self.rma_target(src, dst.len())? else {
            return Ok(());
        };
        if src.locale == self.me {
            self.diag.count(Counter::RmaLocal);
            // SAFETY: src was validated to lie in our heap; dst is a live slice.
            unsafe { std::ptr::copy(src.addr as *const u8, dst.as_mut_ptr(), dst.len()) };
            return Ok(());
        }
        if self.needs_bounce(dst.as_ptr(), dst.len()) {
            let len = dst.len();
            return self.bounced(
                src,
                len,
                |tmp, off, n| dst[off..off + n].copy_from_slice(&tmp[..n]),
                false,
            );
        }
        self.with_ctx_settled(Settle::IfAnyTo(src.locale), |ctx| {
            let op = self.rma_op(ctx, dst.as_ptr(), dst.len(), remote);
            self.selector.get(ctx, src.locale, op, Blocking::Yes)
        })
        .map_err(peer_err("GET", dst.len(), src.locale))
    }

    /// Non-blocking PUT of `src` to `dst`: `src` must not be modified until
    /// the handle reports completion (the handle waits when dropped).
    ///
    /// # Safety
    /// The handle must be waited for, or dropped, before `src`'s memory is
    /// freed or reused: leaking it (`mem::forget`, a cycle of `Rc`s) lets the
    /// provider read the buffer after the borrow ended. The runtime shim's
    /// `put_nb` takes an owned buffer instead and is safe.
    pub unsafe fn put_nb<'a>(&'a self, dst: GlobalAddr, src: &'a [u8]) -> Result<NbHandle<'a>> {
        self.diag.count(Counter::PutNb);
        let remote = match self.nb_route(dst, src.len(), src.as_ptr())? {
            NbRoute::Empty => return Ok(NbHandle::done(self)),
            NbRoute::Blocking => {
                self.put(dst, src)?;
                return Ok(NbHandle::done(self));
            }
            NbRoute::Provider(remote) => remote,
        };
        self.count_rma(Counter::Put, Counter::PutBytes, src.len());
        note_fabric_work();
        self.nb(Settle::IfAnyTo(dst.locale), dst.locale, |ctx| {
            let mut op = self.rma_op(ctx, src.as_ptr(), src.len(), remote);
            op.seq = ctx.next_seq();
            let seq = op.seq;
            self.selector.put(ctx, dst.locale, op, Blocking::No)?;
            Ok(seq)
        })
        .map_err(peer_err("non-blocking PUT", src.len(), dst.locale))
    }

    /// Non-blocking GET of `src` into `dst`: `dst` holds the data once the
    /// handle reports completion (the handle waits when dropped). The read
    /// is ordered before every later PUT, writing atomic or AM of the same
    /// task to `src`'s locale, and completes by the task's next boundary,
    /// whether or not the handle was waited for (see `docs/mcm.md`).
    ///
    /// # Safety
    /// As for [`Comm::put_nb`]: the handle must be waited for or dropped
    /// before `dst`'s memory is freed or reused (the provider writes it).
    pub unsafe fn get_nb<'a>(&'a self, dst: &'a mut [u8], src: GlobalAddr) -> Result<NbHandle<'a>> {
        self.diag.count(Counter::GetNb);
        let remote = match self.nb_route(src, dst.len(), dst.as_ptr())? {
            NbRoute::Empty => return Ok(NbHandle::done(self)),
            NbRoute::Blocking => {
                self.get(dst, src)?;
                return Ok(NbHandle::done(self));
            }
            NbRoute::Provider(remote) => remote,
        };
        self.count_rma(Counter::Get, Counter::GetBytes, dst.len());
        self.nb(Settle::IfAnyTo(src.locale), src.locale, |ctx| {
            let mut op = self.rma_op(ctx, dst.as_ptr(), dst.len(), remote);
            op.seq = ctx.next_seq();
            let seq = op.seq;
            self.selector.get(ctx, src.locale, op, Blocking::No)?;
            Ok(seq)
        })
        .map_err(peer_err("non-blocking GET", dst.len(), src.locale))
    }

    /// Where a non-blocking PUT/GET of `len` bytes at `at` (local buffer at
    /// `local`) goes: copies (mapped, own heap) and bounced transfers are
    /// done by the blocking path, at once.
    fn nb_route(&self, at: GlobalAddr, len: usize, local: *const u8) -> Result<NbRoute> {
        if self.mapped.translate(at.locale, at.addr, len).is_some() {
            return Ok(NbRoute::Blocking);
        }
        let Some(remote) = self.rma_target(at, len)? else {
            return Ok(NbRoute::Empty);
        };
        if at.locale == self.me || self.needs_bounce(local, len) {
            return Ok(NbRoute::Blocking);
        }
        Ok(NbRoute::Provider(remote))
    }

    /// Counts one PUT or GET of `len` bytes (if counting is on).
    #[inline]
    pub(super) fn count_rma(&self, op: Counter, bytes: Counter, len: usize) {
        if self.diag.is_on() {
            self.diag.count(op);
            self.diag.add(bytes, len as u64);
        }
    }

    /// This locale's operation counters (Chapel's CommDiagnostics; see
    /// `diag`): start, stop, reset, snapshot.
    pub fn diagnostics(&self) -> &crate::diag::CommDiagnostics {
        &self.diag
    }

    /// Posts a non-blocking operation with `post` and wraps it in a handle.
    /// On an unbound context the release waits for it, so the handle is
    /// complete at once.
    pub(super) fn nb(
        &self,
        settle: Settle,
        peer: Locale,
        post: impl FnOnce(&mut TxContext) -> Result<u64>,
    ) -> Result<NbHandle<'_>> {
        let mut ctx = self.ctx();
        if settle.applies(&ctx.postponed) {
            let list = std::mem::take(&mut ctx.postponed);
            drop(ctx);
            self.await_postponed(list)?;
            ctx = self.ctx();
        }
        let seq = post(&mut ctx)?;
        if ctx.binding() == Binding::Unbound {
            self.selector.release(&mut ctx)?;
            ctx.wait_local()?;
            ctx.dangling().clear_reads();
            return Ok(NbHandle::done(self));
        }
        Ok(NbHandle {
            comm: self,
            ctx: ctx.index,
            seq,
            peer,
            done: false,
            _buf: std::marker::PhantomData,
            _not_send: std::marker::PhantomData,
        })
    }

    /// Waits until one of `handles` has completed and returns its index.
    /// An empty slice is an error.
    pub fn wait_any(&self, handles: &mut [NbHandle<'_>]) -> Result<usize> {
        if handles.is_empty() {
            return Err(Error::InvalidSize {
                what: "handle count for wait_any",
                size: 0,
                reason: "needs at least one handle".into(),
            });
        }
        let mut backoff = crate::Backoff::new(0, 0);
        loop {
            for (i, h) in handles.iter_mut().enumerate() {
                if h.test()? {
                    return Ok(i);
                }
            }
            backoff.snooze();
        }
    }

    /// PUT/GET through a registered bounce buffer (providers with `FI_MR_LOCAL`
    /// and a local buffer outside the heap).
    pub(super) fn bounced(
        &self,
        remote_at: GlobalAddr,
        len: usize,
        mut copy: impl FnMut(&mut [u8], usize, usize),
        is_put: bool,
    ) -> Result<()> {
        const BOUNCE: usize = 64 << 10;
        let piece = BOUNCE.min(self.prov.max_msg_size);
        let tmp_addr = self.heap.alloc(piece, 64)?;
        // SAFETY: tmp_addr..+piece is a fresh heap allocation only we use.
        let tmp = unsafe { std::slice::from_raw_parts_mut(tmp_addr as *mut u8, piece) };
        let target = remote_at.locale;
        if is_put {
            note_fabric_work();
        }
        let result = (|| {
            let mut off = 0;
            while off < len {
                let n = piece.min(len - off);
                let r = self.remote(remote_at.offset(off as u64), n)?;
                if is_put {
                    copy(tmp, off, n);
                }
                self.with_ctx(|ctx| {
                    let op = self.rma_op(ctx, tmp.as_ptr(), n, r);
                    if is_put {
                        self.selector.put(ctx, target, op, Blocking::Yes)
                    } else {
                        self.selector.get(ctx, target, op, Blocking::Yes)
                    }
                })?;
                if !is_put {
                    copy(tmp, off, n);
                }
                off += n;
            }
            Ok(())
        })()
        .map_err(peer_err(
            if is_put { "PUT" } else { "GET" },
            len,
            remote_at.locale,
        ));
        self.free(GlobalAddr::new(self.me, tmp_addr))?;
        result
    }
}

/// A non-blocking PUT or GET in flight: the buffer it borrows may not be
/// touched until [`NbHandle::wait`] (or a [`NbHandle::test`] that returned
/// `true`, or [`Comm::wait_any`]) says it has completed. Dropping a handle
/// waits for the operation; leaking one is what makes [`Comm::put_nb`] and
/// [`Comm::get_nb`] `unsafe`.
///
/// Not `Send`: it belongs to the transmit context of the thread that
/// created it, whose ordering state it is part of.
///
/// Borrowed-buffer non-blocking operations cannot be started from safe code:
///
/// ```compile_fail,E0133
/// fn post(c: &comm_ofi::Comm, at: comm_ofi::GlobalAddr, b: &[u8]) {
///     let _ = c.put_nb(at, b);
/// }
/// ```
#[must_use = "a non-blocking operation must be waited for before its buffer is reused"]
pub struct NbHandle<'a> {
    comm: &'a Comm,
    ctx: usize,
    seq: u64,
    /// The target, for errors.
    peer: Locale,
    done: bool,
    _buf: std::marker::PhantomData<&'a mut [u8]>,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl std::fmt::Debug for NbHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NbHandle")
            .field("ctx", &self.ctx)
            .field("seq", &self.seq)
            .field("done", &self.done)
            .finish()
    }
}

impl<'a> NbHandle<'a> {
    pub(super) fn done(comm: &'a Comm) -> NbHandle<'a> {
        NbHandle {
            comm,
            ctx: 0,
            seq: 0,
            peer: comm.me,
            done: true,
            _buf: std::marker::PhantomData,
            _not_send: std::marker::PhantomData,
        }
    }

    /// Whether the operation has completed (reaps completions first).
    pub fn test(&mut self) -> Result<bool> {
        if !self.done {
            let mut ctx = self.comm.contexts.lock(self.ctx);
            if !ctx.nb_done(self.seq) {
                ctx.progress()
                    .map_err(peer_err("non-blocking operation", 0, self.peer))?;
            }
            self.done = ctx.nb_done(self.seq);
        }
        Ok(self.done)
    }

    /// Waits for the operation to complete.
    pub fn wait(mut self) -> Result<()> {
        self.wait_mut()
    }

    pub(super) fn wait_mut(&mut self) -> Result<()> {
        let mut backoff = crate::Backoff::new(65, 65);
        while !self.test()? {
            backoff.snooze();
        }
        Ok(())
    }
}

impl Drop for NbHandle<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Err(e) = self.wait_mut() {
                tracing::error!("non-blocking operation failed while its handle was dropped: {e}");
                // The buffer is released either way: the op completed in error.
                self.done = true;
            }
        }
    }
}
