//! Which transmit context a thread uses: bound (workers, AM threads, threads
//! that call `bind_thread`) or shared per operation, and the settling of
//! postponed AMOs before an operation runs on it. Also the accessors of the
//! mapped path that the AM layer and pollers ask for.

use super::*;

impl Comm {
    /// The calling thread's transmit context: its own when it is bound,
    /// otherwise one of the shared ones (locked; a free one if any).
    pub(crate) fn ctx(&self) -> MutexGuard<'_, TxContext> {
        match self.bound_index() {
            Some(i) => self.contexts.table.lock(i),
            None => self.contexts.table.shared(SHARED_HINT.with(|h| h.get())),
        }
    }

    /// The calling thread's own context, if it claimed one.
    #[inline]
    pub(super) fn bound_index(&self) -> Option<usize> {
        let me = self as *const Comm as usize;
        BOUND_CTX.with(|b| match b.get() {
            Some((owner, i)) if owner == me => Some(i),
            _ => None,
        })
    }

    /// Runs `f` on the caller's context; an unbound context is released
    /// (its dangling stores forced visible) before another thread may take it.
    pub(super) fn with_ctx<R>(&self, f: impl FnOnce(&mut TxContext) -> Result<R>) -> Result<R> {
        self.with_ctx_settled(Settle::Nothing, f)
    }

    /// [`Comm::with_ctx`], after the caller's postponed AMOs that `settle`
    /// names have been awaited (with the lock released meanwhile: awaiting
    /// may run other tasks on this thread). One emptiness test when nothing
    /// is postponed.
    #[inline]
    pub(crate) fn with_ctx_settled<R>(
        &self,
        settle: Settle,
        f: impl FnOnce(&mut TxContext) -> Result<R>,
    ) -> Result<R> {
        let Some(i) = self.bound_index() else {
            return self.with_shared_ctx(settle, f);
        };
        // The negative control: the old mechanism marked before settling.
        let marked_before = self.contexts.work_flag == WorkFlag::MarkedBefore;
        if marked_before {
            CTX_HAS_WORK.with(|w| w.set(true));
        }
        let mut ctx = self.contexts.table.lock(i);
        if settle.applies(&ctx.postponed) {
            let list = ctx.take_postponed();
            drop(ctx);
            // May run other tasks on this thread, whose boundaries force
            // this context and derive "no work" (see `CTX_HAS_WORK`).
            self.await_postponed(list)?;
            ctx = self.contexts.table.lock(i);
        }
        // Marked once settled: from here to `f`'s post nothing else runs on
        // this thread (the context is locked; its waits never run tasks),
        // so this is as late as marking after the post, and no result has
        // to be held back for it. A boundary's `f` derives it again.
        if !marked_before {
            CTX_HAS_WORK.with(|w| w.set(true));
        }
        f(&mut ctx)
    }

    /// [`Comm::with_ctx_settled`] on a shared context: held for this
    /// operation only, released (the holder's stores forced visible) before
    /// it changes hands. Out of line: bound threads, the common case, carry
    /// none of it.
    #[cold]
    #[inline(never)]
    fn with_shared_ctx<R>(
        &self,
        settle: Settle,
        f: impl FnOnce(&mut TxContext) -> Result<R>,
    ) -> Result<R> {
        if settle != Settle::Nothing {
            self.settle_postponed(settle)?;
        }
        self.contexts
            .table
            .with_shared(SHARED_HINT.with(|h| h.get()), f, |ctx| {
                self.selector.release(ctx)
            })
    }

    /// Re-derives the calling thread's `CTX_HAS_WORK` from `ctx`, its bound
    /// context, under the context's lock: the boundaries' last word (see
    /// `CTX_HAS_WORK`). Does nothing for a shared context.
    #[inline]
    pub(crate) fn note_ctx_state(&self, ctx: &TxContext) {
        if ctx.binding() != Binding::Bound {
            return;
        }
        let work = if self.contexts.work_flag == WorkFlag::DerivedWithoutReads {
            ctx.has_work_besides_reads()
        } else {
            ctx.has_work()
        };
        CTX_HAS_WORK.with(|w| w.set(work));
    }

    /// Marks the calling thread's context as holding work (a postponed AMO
    /// was added to it after its operation).
    #[inline]
    pub(crate) fn mark_ctx_work(&self) {
        CTX_HAS_WORK.with(|w| w.set(true));
    }

    /// Whether the calling thread's bound context may hold anything a
    /// boundary must force (its copy, see `CTX_HAS_WORK`). Always `false`
    /// on an unbound thread: a shared context is forced when released.
    #[inline]
    pub(crate) fn ctx_has_work(&self) -> bool {
        CTX_HAS_WORK.with(|w| w.get())
    }

    /// Drives progress on the calling thread's transmit context without
    /// waiting (reaps completions). A thread that waits for something a peer
    /// will do in answer to its own injected operations must call this in
    /// its wait loop: on providers with manual progress (tcp;ofi_rxm,
    /// udp;ofi_rxd) an injected PUT may sit in the endpoint until its owner
    /// reads the CQ.
    pub fn progress(&self) -> Result<()> {
        match self.bound_index() {
            Some(i) => {
                self.contexts.table.lock(i).drive()?;
            }
            None => {
                for &i in self.contexts.table.shared_indices() {
                    if let Some(mut c) = self.contexts.table.try_lock(i) {
                        c.drive()?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Binds the calling thread to worker context `worker` for the rest of
    /// the run (the runtime shim calls this once in each worker thread).
    /// Fails when the worker number is outside the table or already taken.
    pub fn bind_worker(&self, worker: usize) -> Result<()> {
        let workers = self.cfg.num_workers;
        if worker >= workers {
            return Err(Error::InvalidSize {
                what: "worker number",
                size: worker,
                reason: format!("PGAS_NUM_WORKERS is {workers}"),
            });
        }
        if !self.contexts.layout.workers_bound {
            SHARED_HINT.with(|h| h.set(worker));
            return Ok(());
        }
        self.bind_index(self.contexts.layout.first_worker + worker)
    }

    /// Binds the calling thread to AM-handler context `handler`.
    pub(crate) fn bind_am_handler(&self, handler: usize) -> Result<()> {
        if handler >= self.cfg.am_handlers {
            return Err(Error::InvalidSize {
                what: "AM handler number",
                size: handler,
                reason: format!("PGAS_AM_HANDLERS is {}", self.cfg.am_handlers),
            });
        }
        self.bind_index(FIRST_HANDLER_CTX + handler)
    }

    /// Binds the calling thread (the AM layer's poller) to its context
    /// (`[1]`). Whatever it sends must never wait on a proof.
    ///
    /// Its sends fail with [`Error::WouldBlock`] instead of waiting for room
    /// in a full transmit queue: a peer's queue drains only while its own
    /// poller receives, so two pollers waiting on each other's queues would
    /// hang.
    pub(crate) fn bind_am_poller(&self) -> Result<()> {
        self.bind_index(AM_POLLER_CTX)?;
        self.contexts.table.lock(AM_POLLER_CTX).set_fail_fast();
        Ok(())
    }

    pub(super) fn bind_index(&self, idx: usize) -> Result<()> {
        if self.contexts.table.claim(idx).is_err() {
            return Err(Error::Unsupported(format!(
                "transmit context {idx} is already bound to another thread"
            )));
        }
        self.contexts.table.lock(idx).bind();
        let me = self as *const Comm as usize;
        BOUND_CTX.with(|b| b.set(Some((me, idx))));
        Ok(())
    }

    /// Binds the calling thread to a transmit context of its own for as long
    /// as it runs (or until [`Comm::unbind_thread`]): the main thread, or a
    /// runtime's own threads, then pay what a worker pays per operation
    /// instead of taking a shared context and forcing its stores visible
    /// after each one. `Ok(false)`: no context left
    /// (`PGAS_THREAD_CONTEXTS`, or the provider's endpoints): the thread
    /// stays unbound, which is correct, only slower. Already bound: `Ok(true)`.
    pub fn bind_thread(&self) -> Result<bool> {
        if self.thread_is_bound() {
            return Ok(true);
        }
        for idx in self.contexts.layout.threads.clone() {
            if self.contexts.table.claim(idx).is_ok() {
                self.contexts.table.lock(idx).bind();
                let me = self as *const Comm as usize;
                BOUND_CTX.with(|b| b.set(Some((me, idx))));
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Gives back the context of [`Comm::bind_thread`]: the thread's stores
    /// are forced visible and its operations completed first (a boundary,
    /// like a task end), then another thread may bind it. Does nothing on an
    /// unbound thread; workers and AM threads keep theirs for life (an error).
    pub fn unbind_thread(&self) -> Result<()> {
        let me = self as *const Comm as usize;
        let idx = match BOUND_CTX.with(|b| b.get()) {
            Some((owner, i)) if owner == me => i,
            _ => return Ok(()),
        };
        if !self.contexts.layout.threads.contains(&idx) {
            return Err(Error::Unsupported(format!(
                "transmit context {idx} belongs to a worker or AM thread for the whole run; only \
                 contexts taken with bind_thread can be given back"
            )));
        }
        self.settle_postponed(Settle::All)?;
        self.mapped_boundary();
        let mut ctx = self.contexts.table.lock(idx);
        let r = self
            .selector
            .force_visible(&mut ctx)
            .and_then(|()| ctx.wait_local());
        ctx.unbind();
        drop(ctx);
        BOUND_CTX.with(|b| b.set(None));
        CTX_HAS_WORK.with(|w| w.set(false));
        self.contexts.table.unclaim(idx);
        r
    }

    /// Whether threads get transmit contexts of their own.
    pub fn is_bound(&self) -> bool {
        self.contexts.layout.workers_bound
    }

    /// Contexts for threads that call [`Comm::bind_thread`].
    pub fn thread_contexts(&self) -> usize {
        self.contexts.layout.threads.len()
    }

    /// The intra-node mapped path of this locale.
    pub fn mapped(&self) -> &Mapped {
        &self.peers.mapped
    }

    /// Where the locales of the job live (co-located ones share the cores).
    pub fn hosts(&self) -> &HostLayout {
        &self.peers.hosts
    }

    /// The address in this process of `len` bytes at `at`, if this locale
    /// reaches that heap by mapping (its own heap included): the AM layer
    /// writes replies into a mapped initiator's done slot with it.
    #[inline]
    pub fn mapped_ptr(&self, at: GlobalAddr, len: usize) -> Option<*mut u8> {
        self.peers.mapped.translate(at.locale, at.addr, len)
    }

    /// How a receive poller (the start-up progress thread, the AM poller)
    /// behaves when idle.
    pub fn idle_policy(&self) -> IdlePolicy {
        IdlePolicy::new(&self.cfg, &self.prov, &self.peers.mapped)
    }

    /// Whether the calling thread owns a transmit context for the run.
    pub fn thread_is_bound(&self) -> bool {
        let me = self as *const Comm as usize;
        BOUND_CTX.with(|b| matches!(b.get(), Some((owner, _)) if owner == me))
    }
}
