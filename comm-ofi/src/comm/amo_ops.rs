//! [`Comm`]'s atomics: every caller goes through [`Comm::amo`], which
//! validates, settles and forces per the route of the type fixed at start-up
//! (the routes and their rules: [`crate::amo_route`]).

use super::*;
use crate::am_seam::{AmoReply, AmoRequest};
use crate::amo::{AmoForm, AmoOp, AmoType};
use crate::amo_route::{check_aligned, check_op, policy_kind, AmoRoute, Settle};
use crate::ctx::{FetchInto, NativeAmo, Postponed, RemoteBuf, AMO_BATCH};
use mcm::Weakening;

impl Comm {
    /// The route of `ty`'s atomics for this run.
    pub fn amo_route(&self, ty: AmoType) -> AmoRoute {
        self.amos.routes.of(ty)
    }

    /// Whether `(ty, op)` is done natively by the provider (the whole type is).
    pub fn amo_is_native(&self, ty: AmoType, _op: AmoOp, _fetch: bool) -> bool {
        self.amo_route(ty) == AmoRoute::Native
    }

    /// A remote atomic: `req.op` on one element of `req.ty` at
    /// `req.target`, by the type's route (see the module docs). The operand
    /// and compare values carry the value's bits in their low bytes
    /// (little-endian); returns the old value's bits for ops that fetch
    /// (Read and CompareSwap always do), else 0. An SC atomic: ordered after
    /// every earlier store and atomic of the calling task, in every mode.
    #[inline]
    pub fn amo(&self, req: &AmoRequest) -> Result<u64> {
        self.amo_on_route(self.amo_route(req.ty), req)
    }

    /// [`Comm::amo`] on a route chosen by the caller: for measurements of the
    /// AM path on a provider with native atomics. Never mix two routes on one
    /// word: they are not atomic with respect to each other.
    #[doc(hidden)]
    #[inline]
    pub fn amo_on_route(&self, route: AmoRoute, req: &AmoRequest) -> Result<u64> {
        // Each route validates the word once (locale, range, alignment), then
        // the op.
        match route {
            AmoRoute::Native => {
                let remote = self.atomic_remote(req.target, req.ty)?;
                check_op(req.ty, req.op)?;
                self.amo_native(remote, req)
            }
            AmoRoute::Cpu => {
                let here = self.word_here(req.target, req.ty)?;
                check_op(req.ty, req.op)?;
                match here {
                    Some(p) => self.amo_cpu_here(p, req),
                    None => self.amo_cpu_there(req),
                }
            }
        }
    }

    /// Validates the word like [`Comm::check_atomic_target`] and gives its
    /// address in this process if this locale reaches it with the CPU (its
    /// own heap or static data, or a co-located locale's heap mapped here:
    /// `mapped.rs`); `None`: a valid word of another locale. A mapped word's
    /// range is checked by the mapping's translation, not a second time.
    #[inline]
    fn word_here(&self, target: GlobalAddr, ty: AmoType) -> Result<Option<*mut u8>> {
        if target.locale != self.me {
            if let Some(p) = self.mapped_ptr(target, ty.size()) {
                check_aligned(target, ty)?;
                return Ok(Some(p));
            }
        }
        self.check_atomic_target(target, ty)?;
        Ok((target.locale == self.me).then_some(target.addr as *mut u8))
    }

    /// An unordered (non-fetching, done whenever before the task's next
    /// fence) atomic: if the word is reachable with the CPU (mapped path) it
    /// is done at once and `Ok(true)` returned; `Ok(false)`: the caller
    /// buffers it for the owner.
    pub fn amo_unordered_here(
        &self,
        target: GlobalAddr,
        ty: AmoType,
        op: AmoOp,
        operand: u64,
    ) -> Result<bool> {
        if !self.mapped().in_use() || self.amo_route(ty) != AmoRoute::Cpu {
            return Ok(false);
        }
        let Some(p) = self.word_here(target, ty)? else {
            return Ok(false);
        };
        check_op(ty, op)?;
        self.diag.count(Counter::AmoCpu);
        // SAFETY: as in amo_cpu_here: p is the aligned word (checked by
        // word_here) of a heap or static data reached here, only accessed
        // atomically, and CPU is this type's route on every locale.
        unsafe { crate::cpu_amo::apply(p as u64, ty, op, operand, 0, false) }
            .map_err(Error::Unsupported)?;
        Ok(true)
    }

    /// Checks what every atomic needs whichever way it goes: a valid locale,
    /// an address aligned to the type, and the word inside the owner's heap.
    #[inline]
    pub fn check_atomic_target(&self, target: GlobalAddr, ty: AmoType) -> Result<()> {
        // The common case (an aligned word of its locale's heap or static
        // data: what `remote` and `check_aligned` accept) without building
        // the provider addressing; anything else takes the full check, which
        // names what is wrong. A point-to-point wait pays this once a call.
        let size = ty.size();
        let fits = target.locale < self.n
            && self.peers.list.get(target.locale).is_some_and(|p| {
                let in_heap = target.addr >= p.heap_base
                    && target
                        .addr
                        .checked_add(size as u64)
                        .is_some_and(|e| e <= p.heap_base + p.heap_size);
                in_heap || p.statics.contains(target.addr, size)
            });
        if fits && target.addr % size as u64 == 0 {
            return Ok(());
        }
        self.check_atomic_target_fully(target, ty)
    }

    /// [`Comm::check_atomic_target`] off the common case: the full check,
    /// which names what is wrong (out of line).
    #[cold]
    #[inline(never)]
    fn check_atomic_target_fully(&self, target: GlobalAddr, ty: AmoType) -> Result<()> {
        self.atomic_remote(target, ty).map(|_| ())
    }

    /// [`Comm::check_atomic_target`], keeping the provider addressing.
    #[inline]
    fn atomic_remote(&self, target: GlobalAddr, ty: AmoType) -> Result<RemoteBuf> {
        let remote = self.remote(target, ty.size())?;
        check_aligned(target, ty)?;
        Ok(remote)
    }

    /// `req` by the provider's atomic on `remote`, its word.
    fn amo_native(&self, remote: RemoteBuf, req: &AmoRequest) -> Result<u64> {
        let &AmoRequest {
            target: GlobalAddr { locale: owner, .. },
            ty,
            op,
            operand,
            compare,
            fetch,
        } = req;
        self.diag.count(Counter::AmoNative);
        let form = AmoForm::of(op, fetch);
        let size = ty.size();
        // SC atomics: the caller's postponed AMOs (via AM) go first; the
        // selector orders the stores.
        self.with_ctx_settled(Settle::All, |ctx| {
            {
                let (o, c, r) = ctx.scratch_words();
                *o = operand.to_le_bytes();
                *c = compare.to_le_bytes();
                *r = [0; 8];
            }
            let atomic = NativeAmo {
                remote,
                ty,
                op,
                form,
                slot: 0,
            };
            self.selector
                .amo(ctx, owner, atomic, policy_kind(op, fetch))
                .map_err(crate::error::peer_err("atomic", 0, owner))?;
            let (_, _, r) = ctx.scratch_words();
            let mut out = [0u8; 8];
            out[..size].copy_from_slice(&r[..size]);
            Ok(if form == AmoForm::Plain {
                0
            } else {
                u64::from_le_bytes(out)
            })
        })
    }

    /// Unordered non-fetching atomics on words whose type goes natively
    /// (the runtime's buffered `*_unordered` atomics at the task's fence):
    /// validated first, then posted in batches of [`AMO_BATCH`] that may be
    /// in flight together ([`mcm::Selector::amo_batch`]); on return each is
    /// as visible as after [`Comm::amo`] without fetch (delivery-complete:
    /// delivered; the other modes: proved at the next boundary).
    pub fn amo_unordered_native(&self, ops: &[(GlobalAddr, AmoType, AmoOp, u64)]) -> Result<()> {
        let mut checked = Vec::with_capacity(ops.len());
        for &(target, ty, op, operand) in ops {
            if self.amo_route(ty) != AmoRoute::Native {
                return Err(Error::Unsupported(format!(
                    "an unordered native batch got {ty:?}, whose atomics go by the CPU route"
                )));
            }
            let remote = self.atomic_remote(target, ty)?;
            check_op(ty, op)?;
            if op == AmoOp::Read || op == AmoOp::CompareSwap {
                return Err(Error::Unsupported(format!(
                    "{op:?} fetches: it has no unordered form"
                )));
            }
            checked.push((target.locale, remote, ty, op, operand));
        }
        for chunk in checked.chunks(AMO_BATCH) {
            self.diag.add(Counter::AmoNative, chunk.len() as u64);
            self.with_ctx_settled(Settle::All, |ctx| {
                for (k, &(_, _, _, _, operand)) in chunk.iter().enumerate() {
                    *ctx.batch_operand(k + 1) = operand.to_le_bytes();
                }
                let mut posts = chunk
                    .iter()
                    .enumerate()
                    .map(|(k, &(owner, remote, ty, op, _))| {
                        let atomic = NativeAmo {
                            remote,
                            ty,
                            op,
                            form: AmoForm::Plain,
                            slot: k + 1,
                        };
                        (owner, atomic)
                    });
                let first = chunk.first().map_or(self.me, |c| c.0);
                self.selector
                    .amo_batch(ctx, &mut posts)
                    .map_err(crate::error::peer_err("unordered atomic", 0, first))
            })?;
        }
        Ok(())
    }

    /// A CPU atomic on a word this locale reaches with the CPU (its own, or
    /// a mapped peer's). It is an SC atomic like any other: what the caller
    /// stored before through the fabric (PUTs to other locales, native or
    /// postponed AMOs) must be visible before it is performed. Its stores
    /// to mapped heaps need nothing: a SeqCst read-modify-write is ordered
    /// after them (a locked instruction on x86; see docs/mcm.md).
    #[inline]
    fn amo_cpu_here(&self, p: *mut u8, req: &AmoRequest) -> Result<u64> {
        self.diag.count(Counter::AmoCpu);
        if !self.selector.is_weakened(Weakening::LocalAmoNoForce) {
            self.force_visible_if_any()?;
        }
        // SAFETY: check_atomic_target put the word inside its owner's
        // registered heap, aligned, and word_here gave its address in this
        // process (our heap, or the owner's mapped here); words used by
        // atomics are only accessed atomically (the API contract), and this
        // type's atomics are CPU atomics on every locale (its route), never
        // NIC atomics.
        unsafe {
            crate::cpu_amo::apply(
                p as u64,
                req.ty,
                req.op,
                req.operand,
                req.compare,
                req.fetch,
            )
        }
        .map_err(Error::Unsupported)
    }

    /// A CPU atomic on another locale's word, through the AM layer.
    fn amo_cpu_there(&self, req: &AmoRequest) -> Result<u64> {
        let Some(am) = self.am.layer.get() else {
            return Err(Error::Unsupported(format!(
                "{:?} on {:?} is not native on provider {}, and the AM layer that carries \
                 atomics to other locales is not running",
                req.op, req.ty, self.prov.name
            )));
        };
        self.diag.count(Counter::AmoViaAm);
        let non_fetching = !crate::cpu_amo::fetches(req.op, req.fetch);
        let bound = self.thread_is_bound() || self.selector.is_weakened(Weakening::PostponeUnbound);
        let postpone = non_fetching && bound && am.may_postpone();
        // SC atomics: earlier postponed AMOs first, unless this one is
        // postponed too and they all went to the same target (the one
        // handler there applies them in arrival order, which is send order
        // on one context).
        let settle = if postpone {
            Settle::AllIfAnyNotTo(req.target.locale)
        } else {
            Settle::All
        };
        self.settle_postponed(settle)?;
        match am.send_amo(req, postpone)? {
            AmoReply::Done(v) => Ok(v),
            AmoReply::Postponed(p) => {
                self.ctx().postponed.push(p);
                self.mark_ctx_work();
                Ok(0)
            }
        }
    }

    /// Waits for the calling thread's postponed AMOs as `settle` says, with
    /// no context lock held (the wait may run other tasks on this thread).
    pub(crate) fn settle_postponed(&self, settle: Settle) -> Result<()> {
        let list = {
            let mut ctx = self.ctx();
            if !settle.applies(&ctx.postponed) {
                return Ok(());
            }
            ctx.take_postponed()
        };
        self.await_postponed(list)
    }

    /// Awaits every AMO of `list`, writing the old values of the fetching
    /// ones where their callers asked; the first error after all were
    /// awaited.
    pub(crate) fn await_postponed(&self, list: Postponed) -> Result<()> {
        if list.amos.is_empty() {
            return Ok(());
        }
        let Some(am) = self.am.layer.get() else {
            return Ok(());
        };
        let mut first_err = None;
        // The fetching ones were pushed in the same order as their AMOs.
        let mut fetch = list.fetch_into.iter().peekable();
        for p in list.amos {
            let r = match fetch.next_if(|f| f.token == p.token) {
                Some(f) => am.await_postponed_value(p).map(|v| {
                    let bytes = v.to_le_bytes();
                    // SAFETY: `Comm::amo_nbi`'s contract: `dest` is valid
                    // for `size` (<= 8) bytes until the AMO is awaited, here.
                    unsafe {
                        std::ptr::copy_nonoverlapping(bytes.as_ptr(), f.dest as *mut u8, f.size)
                    }
                }),
                None => am.await_postponed(p),
            };
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// How many AMOs the calling thread sent and has not awaited yet (its
    /// bound context's postponed ones; 0 on an unbound thread): what a
    /// non-blocking atomic left in flight, for tests and diagnostics.
    pub fn pending_amos(&self) -> usize {
        self.bound_index()
            .map_or(0, |i| self.contexts.table.lock(i).postponed.len())
    }

    /// A non-blocking remote atomic (OpenSHMEM's `_nbi` forms): `req` as
    /// for [`Comm::amo`]. Where the type's atomics go by the CPU route to
    /// another locale (through the AM layer) and the calling thread is
    /// bound, the request is sent and its answer awaited later, fetching
    /// ones too: by the thread's next operation that settles its postponed
    /// AMOs (an SC atomic elsewhere, a PUT or GET to the same locale,
    /// [`Comm::force_visible`], a boundary) at the latest. Elsewhere (native
    /// route, a word this locale reaches with the CPU, an unbound thread)
    /// it is done as [`Comm::amo`] before returning. For an op that fetches,
    /// the old value (the type's size, in the machine's byte order) is
    /// written to `result` when the AMO is awaited.
    ///
    /// # Safety
    /// For an op that fetches, `result` must be valid for writes of
    /// `req.ty.size()` bytes, and not used otherwise, until the calling
    /// thread's postponed AMOs have been settled (for instance by its next
    /// [`Comm::force_visible`]).
    pub unsafe fn amo_nbi(&self, req: &AmoRequest, result: *mut u8) -> Result<()> {
        let fetches = crate::cpu_amo::fetches(req.op, req.fetch);
        let size = req.ty.size();
        if fetches && result.is_null() {
            return Err(Error::Unsupported(format!(
                "{:?} on {:?} fetches: a non-blocking one needs a result buffer",
                req.op, req.ty
            )));
        }
        let deliver = |v: u64| {
            if fetches {
                // SAFETY: the caller's contract: `result` holds `size` bytes.
                unsafe { std::ptr::copy_nonoverlapping(v.to_le_bytes().as_ptr(), result, size) }
            }
        };
        if self.amo_route(req.ty) == AmoRoute::Cpu {
            let here = self.word_here(req.target, req.ty)?;
            check_op(req.ty, req.op)?;
            let v = match here {
                Some(p) => self.amo_cpu_here(p, &req.fetching(fetches))?,
                None => match self.amo_cpu_nbi(req, fetches)? {
                    Some(token) => {
                        if fetches {
                            let into = FetchInto {
                                token,
                                dest: result as usize,
                                size,
                            };
                            self.ctx().fetch_into.push(into);
                        }
                        return Ok(());
                    }
                    None => self.amo_cpu_there(req)?,
                },
            };
            deliver(v);
            return Ok(());
        }
        deliver(self.amo(req)?);
        Ok(())
    }

    /// Sends `req` to its word's owner without awaiting its answer, if the
    /// calling thread may leave it in flight (bound, and the AM layer
    /// applies one sender's AMOs in arrival order and can postpone this
    /// kind); its token, kept in the thread's context. `None`: it must be
    /// done blocking.
    fn amo_cpu_nbi(&self, req: &AmoRequest, fetches: bool) -> Result<Option<u64>> {
        let Some(am) = self.am.layer.get() else {
            return Ok(None);
        };
        let bound = self.thread_is_bound() || self.selector.is_weakened(Weakening::PostponeUnbound);
        if !bound || !am.may_postpone() || (fetches && !am.may_postpone_fetching()) {
            return Ok(None);
        }
        self.diag.count(Counter::AmoViaAm);
        // Earlier postponed AMOs to other locales first (SC atomics); to the
        // same locale they are applied in send order.
        self.settle_postponed(Settle::AllIfAnyNotTo(req.target.locale))?;
        match am.send_amo(req, true)? {
            AmoReply::Postponed(p) => {
                self.ctx().postponed.push(p);
                self.mark_ctx_work();
                Ok(Some(p.token))
            }
            AmoReply::Done(_) => Err(Error::Unsupported(
                "the AM layer answered a postponed atomic at once".into(),
            )),
        }
    }
}
