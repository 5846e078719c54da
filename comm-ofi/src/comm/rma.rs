//! PUT and GET, blocking and non-blocking: the mapped path's copies, the
//! local shortcut, bounce buffers for `FI_MR_LOCAL`, and the hand-over to
//! the MCM selector; [`NbHandle`], the handle of a non-blocking one.

use super::*;
use crate::error::peer_err;
use crate::ofi::Rma;
use crate::publish::{load_shared, store_shared};

/// Where a PUT or GET goes in the common cases (`Comm::heap_route`).
enum HeapRoute {
    /// A CPU copy at this address (a heap mapped here, or our own; a
    /// co-located locale's static data mapped here).
    Copy(*mut u8),
    /// Straight to the provider.
    Provider(RemoteBuf),
    /// Anything else: static data not mapped here, a bounce, empty or
    /// invalid (the general path decides and reports).
    Elsewhere,
}

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
        // A descriptor matters for a provider that needs local registration
        // (FI_MR_LOCAL) and for large transfers (rxm's rendezvous registers
        // undescribed memory on the fly); a small one is copied by every
        // provider here (inject, eager): no heap lookup for it.
        let desc = if len <= self.prov.inject_size && !self.prov.mr_mode.local() {
            std::ptr::null_mut()
        } else {
            self.local_desc(ctx, ptr, len)
        };
        RmaOp {
            local: LocalBuf {
                ptr: ptr as *mut u8,
                len,
                desc,
            },
            remote,
            seq: 0,
        }
    }

    /// Blocking PUT: copies `src` to `dst`. On return `src` may be reused;
    /// the stores become visible to others by the caller's next MCM boundary.
    #[inline]
    pub fn put(&self, dst: GlobalAddr, src: &[u8]) -> Result<()> {
        // The common cases are decided inline (`heap_route`); everything
        // else (static data, a bounce, an empty or invalid PUT) takes
        // `put_elsewhere`, out of line, so the common cases carry none of it.
        self.count_rma(Counter::Put, Counter::PutBytes, src.len());
        match self.heap_route(dst, src.len(), src.as_ptr()) {
            HeapRoute::Copy(p) => {
                self.order_mapped_after_fabric(dst.locale)?;
                self.diag.count(Counter::RmaLocal);
                // SAFETY: p..p+len lies in a heap reached here (`heap_route`
                // checked the range); src is a live slice.
                unsafe { store_shared(p, src) };
                Ok(())
            }
            HeapRoute::Provider(remote) => self.put_fabric(dst.locale, src, remote),
            HeapRoute::Elsewhere => self.put_elsewhere(dst, src),
        }
    }

    /// Where a PUT or GET of the `len` bytes at `at`, from or to `local`,
    /// goes in the common cases, from one entry of the peer table: a heap
    /// this locale maps (a copy), or the heap of another locale that this
    /// one does not map, with no bounce needed (the provider); outside every
    /// heap, a co-located locale's static data mapped here (a copy too).
    #[inline]
    fn heap_route(&self, at: GlobalAddr, len: usize, local: *const u8) -> HeapRoute {
        let Some(p) = self.heap_peer(at, len) else {
            return match self.peers.mapped.translate_static(at.locale, at.addr, len) {
                Some(p) => HeapRoute::Copy(p),
                None => HeapRoute::Elsewhere,
            };
        };
        match p.heap_path {
            HeapPath::Mapped { delta } => HeapRoute::Copy(at.addr.wrapping_add(delta) as *mut u8),
            HeapPath::Fabric if len > 0 && !self.needs_bounce(local, len) => {
                HeapRoute::Provider(p.heap_remote(at.addr))
            }
            HeapPath::Fabric => HeapRoute::Elsewhere,
        }
    }

    /// The peer whose heap holds the `len` bytes at `at`, if they lie in a
    /// heap (not static data, not out of range; errors are reported by the
    /// general path).
    #[inline]
    fn heap_peer(&self, at: GlobalAddr, len: usize) -> Option<&Peer> {
        let p = self.peers.list.get(at.locale)?;
        let end = at.addr.checked_add(len as u64)?;
        (at.addr >= p.heap_base && end <= p.heap_base + p.heap_size).then_some(p)
    }

    /// A blocking PUT to the provider through the mode's selector.
    #[inline]
    fn put_fabric(&self, target: Locale, src: &[u8], remote: RemoteBuf) -> Result<()> {
        let (ptr, len) = (src.as_ptr(), src.len());
        self.with_ctx_settled(Settle::IfAnyTo(target), move |ctx| {
            let op = self.rma_op(ctx, ptr, len, remote);
            self.selector.put(ctx, target, op, Blocking::Yes)
        })
        .map_err(peer_err("PUT", len, target))
    }

    /// [`Comm::put`] but for the common cases.
    #[cold]
    #[inline(never)]
    fn put_elsewhere(&self, dst: GlobalAddr, src: &[u8]) -> Result<()> {
        let Some(remote) = self.rma_target(dst, src.len())? else {
            return Ok(());
        };
        if dst.locale == self.me {
            self.diag.count(Counter::RmaLocal);
            // SAFETY: dst was validated to lie in our heap (or static data);
            // src is a live slice.
            unsafe { store_shared(dst.addr as *mut u8, src) };
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
        self.put_fabric(dst.locale, src, remote)
    }

    /// A store by the mapped path (a CPU copy, visible at once) to `target`
    /// must not overtake the calling thread's earlier stores to `target`
    /// that went through the provider: where its static data is not mapped
    /// (`PGAS_LOCAL_PATH=mapped-heap`, or sharing it failed), PUTs and
    /// atomics there take the fabric (and AMs) even between co-located
    /// locales, and "ordered target by target" (`fence`) would not hold
    /// between a static and a heap word of one locale. If any such
    /// store may still dangle (rare: one locked look at the context, only
    /// when the thread has fabric work at all), the boundary makes it
    /// visible first.
    #[inline]
    fn order_mapped_after_fabric(&self, target: Locale) -> Result<()> {
        if !self.ctx_has_work() || self.selector.is_weakened(mcm::Weakening::MappedUnordered) {
            return Ok(());
        }
        if self.ctx().has_work_at(target) {
            self.force_visible()?;
        }
        Ok(())
    }

    /// Blocking GET: copies `src` into `dst`.
    #[inline]
    pub fn get(&self, dst: &mut [u8], src: GlobalAddr) -> Result<()> {
        // Routed as `put` is.
        self.count_rma(Counter::Get, Counter::GetBytes, dst.len());
        match self.heap_route(src, dst.len(), dst.as_ptr()) {
            HeapRoute::Copy(p) => {
                self.diag.count(Counter::RmaLocal);
                // SAFETY: p..p+len lies in a heap reached here (`heap_route`
                // checked the range); dst is a live slice.
                unsafe { load_shared(p, dst) };
                Ok(())
            }
            HeapRoute::Provider(remote) => self.get_fabric(dst, src.locale, remote),
            HeapRoute::Elsewhere => self.get_elsewhere(dst, src),
        }
    }

    /// A blocking GET from the provider through the mode's selector.
    #[inline]
    fn get_fabric(&self, dst: &mut [u8], target: Locale, remote: RemoteBuf) -> Result<()> {
        let (ptr, len) = (dst.as_ptr(), dst.len());
        self.with_ctx_settled(Settle::IfAnyTo(target), move |ctx| {
            let op = self.rma_op(ctx, ptr, len, remote);
            self.selector.get(ctx, target, op, Blocking::Yes)
        })
        .map_err(peer_err("GET", len, target))
    }

    /// [`Comm::get`] but for the common cases.
    #[cold]
    #[inline(never)]
    fn get_elsewhere(&self, dst: &mut [u8], src: GlobalAddr) -> Result<()> {
        let Some(remote) = self.rma_target(src, dst.len())? else {
            return Ok(());
        };
        if src.locale == self.me {
            self.diag.count(Counter::RmaLocal);
            // SAFETY: src was validated to lie in our heap (or static data);
            // dst is a live slice.
            unsafe { load_shared(src.addr as *const u8, dst) };
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
        self.get_fabric(dst, src.locale, remote)
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
        let (local, len) = (src.as_ptr(), src.len());
        // SAFETY: our caller keeps `src` until the handle is done.
        unsafe { self.rma_nb(Rma::Write, dst, local, len, || self.put(dst, src)) }
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
        let (local, len) = (dst.as_ptr(), dst.len());
        // SAFETY: our caller keeps `dst` until the handle is done.
        unsafe { self.rma_nb(Rma::Read, src, local, len, || self.get(dst, src)) }
    }

    /// [`Comm::put_nb`] (`Rma::Write`) or [`Comm::get_nb`] of `len` bytes
    /// at `local` against `at`; `blocking` is the blocking PUT/GET, for what
    /// `Comm::nb_route` says is done at once.
    ///
    /// # Safety
    /// `local..local+len` stays valid (a GET's untouched) until the handle
    /// reports completion or is dropped.
    unsafe fn rma_nb(
        &self,
        dir: Rma,
        at: GlobalAddr,
        local: *const u8,
        len: usize,
        blocking: impl FnOnce() -> Result<()>,
    ) -> Result<NbHandle<'_>> {
        use Counter::{Get, GetBytes, GetNb, Put, PutBytes, PutNb};
        let (nb, ops, bytes, what) = match dir {
            Rma::Write => (PutNb, Put, PutBytes, "non-blocking PUT"),
            Rma::Read => (GetNb, Get, GetBytes, "non-blocking GET"),
        };
        self.diag.count(nb);
        let remote = match self.nb_route(at, len, local)? {
            NbRoute::Empty => return Ok(NbHandle::done(self)),
            NbRoute::Blocking => {
                blocking()?;
                return Ok(NbHandle::done(self));
            }
            NbRoute::Provider(remote) => remote,
        };
        self.count_rma(ops, bytes, len);
        self.nb(
            Settle::IfAnyTo(at.locale),
            at.locale,
            dir == Rma::Read,
            |ctx| {
                let mut op = self.rma_op(ctx, local, len, remote);
                op.seq = ctx.next_seq();
                let seq = op.seq;
                match dir {
                    Rma::Write => self.selector.put(ctx, at.locale, op, Blocking::No)?,
                    Rma::Read => self.selector.get(ctx, at.locale, op, Blocking::No)?,
                }
                Ok(seq)
            },
        )
        .map_err(peer_err(what, len, at.locale))
    }

    /// Where a non-blocking PUT/GET of `len` bytes at `at` (local buffer at
    /// `local`) goes: copies (mapped, own heap) and bounced transfers are
    /// done by the blocking path, at once.
    #[inline]
    fn nb_route(&self, at: GlobalAddr, len: usize, local: *const u8) -> Result<NbRoute> {
        match self.heap_route(at, len, local) {
            HeapRoute::Copy(_) => return Ok(NbRoute::Blocking),
            HeapRoute::Provider(remote) => return Ok(NbRoute::Provider(remote)),
            // Static data, a bounce, empty or invalid: a mapped heap has
            // been routed already (`heap_route` sees every heap range).
            HeapRoute::Elsewhere => {}
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
        self.diag.count_sized(op, bytes, len as u64);
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
        is_get: bool,
        post: impl FnOnce(&mut TxContext) -> Result<u64>,
    ) -> Result<NbHandle<'_>> {
        let mut ctx = self.ctx();
        if settle.applies(&ctx.postponed) {
            let list = ctx.take_postponed();
            drop(ctx);
            self.await_postponed(list)?;
            ctx = self.ctx();
        }
        // Marked once settled, as in `with_ctx_settled` (a GET in flight
        // counts, unless the negative control `nb-get-uncounted` is on).
        if ctx.binding() == Binding::Bound
            && !(is_get && self.contexts.work_flag == WorkFlag::DerivedWithoutReads)
        {
            CTX_HAS_WORK.with(|w| w.set(true));
        }
        let seq = post(&mut ctx)?;
        if ctx.binding() == Binding::Unbound {
            self.selector.release(&mut ctx)?;
            ctx.wait_local()?;
            ctx.dangling().clear_reads();
            return Ok(NbHandle::done(self));
        }
        if ctx.nb_done(seq) {
            // Complete on return (an injected PUT: its sequence number was
            // never in flight): a done handle, nothing to look up later.
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
        let mut silent = crate::peer_timeout::PeerWait::new();
        loop {
            for (i, h) in handles.iter_mut().enumerate() {
                if h.test()? {
                    return Ok(i);
                }
            }
            if silent.expired() {
                let e = silent.error("completion wait", "completion");
                return Err(peer_err("non-blocking operation", 0, handles[0].peer)(e));
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
        let tmp_addr = self.mem.heap.alloc(piece, 64)?;
        // SAFETY: tmp_addr..+piece is a fresh heap allocation only we use.
        let tmp = unsafe { std::slice::from_raw_parts_mut(tmp_addr as *mut u8, piece) };
        let target = remote_at.locale;
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
            let mut ctx = self.comm.contexts.table.lock(self.ctx);
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
        if self.done {
            return Ok(());
        }
        let mut backoff = crate::Backoff::new(65, 65);
        let mut silent = crate::peer_timeout::PeerWait::new();
        while !self.test()? {
            if silent.expired() {
                let e = silent.error("completion wait", "completion");
                return Err(peer_err("non-blocking operation", 0, self.peer)(e));
            }
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
