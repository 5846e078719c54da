//! The MCM boundaries comm-ofi offers the layers above (force visible, task
//! create/end, on-statement start/end, before an AM's 'done'), and the
//! barrier and finalize built on them.

use super::*;

impl Comm {
    /// The MCM boundary on the calling thread's transmit context: every
    /// store it issued (PUTs, non-fetching AMOs, native or postponed via AM)
    /// becomes visible at its target before this returns, and every
    /// non-blocking GET it issued has completed.
    pub fn force_visible(&self) -> Result<()> {
        self.mapped_boundary();
        self.with_ctx_settled(Settle::All, |ctx| {
            let r = self
                .selector
                .force_visible(ctx)
                .map_err(|e| name_forced_peers(e, ctx));
            self.note_ctx_state(ctx);
            r
        })?;
        if self.contexts.work_flag == WorkFlag::MarkedBefore {
            // The old mechanism cleared its flag here, whatever was posted
            // meanwhile; derived, it is already what the context holds.
            CTX_HAS_WORK.with(|w| w.set(false));
        }
        Ok(())
    }

    /// [`Comm::force_visible`] if the calling thread's context holds
    /// anything to force (its stores, GETs in flight, postponed AMOs), else
    /// nothing: one thread-local read. What an SC atomic on a word this
    /// thread reaches with the CPU does first (the CPU route here, the
    /// point-to-point reads of the runtime shim): it is ordered after every
    /// earlier store and atomic of the task, as a native or AM atomic is.
    #[inline]
    pub fn force_visible_if_any(&self) -> Result<()> {
        if self.ctx_has_work() {
            self.force_visible()?;
        }
        Ok(())
    }

    /// The boundary's part for the mapped path: the calling CPU's stores to
    /// mapped heaps are globally visible (its store buffer drained) before
    /// anything after the boundary (docs/mcm.md, "The mapped path").
    #[inline]
    pub(crate) fn mapped_boundary(&self) {
        if self.peers.mapped.in_use() {
            crate::publish::boundary(crate::publish::PUBLISH);
        }
    }

    /// The boundary on every transmit context of this locale (barrier,
    /// finalize): what any thread stored before is visible after it. (The
    /// caller's postponed AMOs are awaited; other threads' tasks awaited
    /// theirs when they ended.)
    pub fn force_visible_all(&self) -> Result<()> {
        self.mapped_boundary();
        let mut first_err = self.settle_postponed(Settle::All).err();
        self.contexts.table.for_each(|c| {
            if let Err(e) = self.selector.force_visible(c) {
                first_err.get_or_insert(name_forced_peers(e, c));
            }
        });
        first_err.map_or(Ok(()), Err)
    }

    /// Boundary hook: a task is about to create a child task, which must see
    /// every store the creator issued.
    pub fn task_create(&self) -> Result<()> {
        self.force_visible()
    }

    /// Boundary hook: the calling task ends; whoever joins it must see its stores.
    pub fn task_end(&self) -> Result<()> {
        self.force_visible()
    }

    /// Boundary hook: an on-statement body starts on this locale.
    pub fn on_start(&self) -> Result<()> {
        self.force_visible()
    }

    /// Boundary hook: an on-statement body ends; its initiator must see its stores.
    pub fn on_end(&self) -> Result<()> {
        self.force_visible()
    }

    /// Boundary hook: the AM handler is about to report 'done' for a request.
    pub fn before_done(&self) -> Result<()> {
        self.force_visible()
    }

    /// Job-wide barrier; every store issued before it is visible after it.
    pub fn barrier(&self) -> Result<()> {
        self.force_visible_all()?;
        self.oob.barrier()?;
        Ok(())
    }

    /// Orderly shutdown: barrier, stop the start-up progress thread.
    /// Idempotent.
    pub fn finalize(&self) -> Result<()> {
        if self.finalized.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let r = self.barrier();
        self.stop_startup_progress();
        r?;
        Ok(self.oob.finalized()?)
    }

    pub(crate) fn stop_startup_progress(&self) {
        self.am.stop.store(true, Ordering::Release);
        self.peers.mapped.ring_self();
        if let Some(h) = self.am.progress.lock().take() {
            let _ = h.join();
        }
    }
}

/// Names the peers in a failed forcing (a boundary's order GETs and proofs
/// end in one wait, whose error, "no completion for 10 s", says no locale):
/// the targets whose stores still dangle, which a failed force leaves as
/// they were. The first is the error's locale; the others are listed.
#[cold]
#[inline(never)]
fn name_forced_peers(e: Error, ctx: &mut TxContext) -> Error {
    use mcm::Transport as _;
    let Error::Ofi(source) = e else {
        return e;
    };
    let targets: Vec<Locale> = ctx.dangling().targets().collect();
    let Some((&first, rest)) = targets.split_first() else {
        return Error::Ofi(source);
    };
    let op = if rest.is_empty() {
        "making stores visible".to_string()
    } else {
        let others: Vec<String> = rest.iter().map(|l| l.to_string()).collect();
        format!(
            "making stores visible (pending also at locale(s) {})",
            others.join(", ")
        )
    };
    Error::Peer {
        op,
        locale: first,
        source,
    }
}
