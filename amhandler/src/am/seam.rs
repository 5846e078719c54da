//! The AM layer as comm-ofi sees it (`comm_ofi::am_seam`): [`Bridge`]
//! implements `AmLayer` (visibility proofs, atomics sent to their owner,
//! postponed 'done's) over a weak reference to the [`Am`].

use super::memory_ops::reply_word;
use super::*;

/// The AM layer as comm-ofi sees it (`comm_ofi::am_seam`): visibility
/// proofs and atomics on other locales' words. Holds the `Am` weakly (the
/// `Comm` it is installed in outlives nothing of ours).
#[derive(Debug)]
pub(crate) struct Bridge(pub Weak<Am>);

impl Bridge {
    pub(super) fn am(&self) -> comm_ofi::Result<Arc<Am>> {
        self.0
            .upgrade()
            .ok_or_else(|| comm_ofi::Error::Unsupported("the AM layer is gone (finalized)".into()))
    }
}

impl AmLayer for Bridge {
    /// The blocking no-op: comm-ofi posts the request on the context that
    /// issued the AMOs, so provider ordering or a fence puts it behind them;
    /// the target's AM poller answers it (never a handler, which could
    /// itself be waiting on a proof), and the reply is the proof.
    fn prepare_proof(&self, target: Locale) -> comm_ofi::Result<ProofRequest> {
        let am = self.am()?;
        let buf = am.sendbufs.get(&am.comm).map_err(into_comm)?;
        let slot = match am.slots.get(&am.comm) {
            Ok(s) => s,
            Err(e) => {
                am.sendbufs.put(buf);
                return Err(into_comm(e));
            }
        };
        slot::arm(&HeapSlot(slot));
        let h = Header::new(Op::Nop, FLAG_BLOCKING, am.here, slot);
        // SAFETY: buf is a pool buffer of at least MAX_REQUEST >= HEADER heap
        // bytes that only this request uses until it is returned.
        let out = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, HEADER) };
        h.encode(out);
        Ok(ProofRequest {
            target,
            msg: buf as *const u8,
            len: HEADER,
            token: [buf, slot],
        })
    }

    fn await_proof(&self, req: ProofRequest) -> comm_ofi::Result<()> {
        let am = self.am()?;
        let [buf, slot] = req.token;
        am.sendbufs.put(buf);
        am.counters.sent.fetch_add(1, Ordering::Relaxed);
        // Plain waiting, never helping: the caller holds its transmit
        // context, which helping could need; our poller sets the word.
        let w = am.wait_word_plain(slot, req.target).map_err(into_comm)?;
        let r = am.take_reply(req.target, slot, w);
        am.slots.put(slot);
        r.map(|_| ()).map_err(into_comm)
    }

    fn cancel_proof(&self, req: ProofRequest) {
        if let Ok(am) = self.am() {
            am.sendbufs.put(req.token[0]);
            am.slots.put(req.token[1]);
        }
    }

    fn may_postpone(&self) -> bool {
        self.am().is_ok_and(|am| am.delay_nf)
    }

    fn send_amo(&self, req: &AmoRequest, postpone: bool) -> comm_ofi::Result<AmoReply> {
        self.am()?.send_amo(req, postpone).map_err(into_comm)
    }

    fn await_postponed(&self, amo: PostponedAmo) -> comm_ofi::Result<()> {
        // The token is the done slot of the postponed request.
        self.am()?
            .await_reply(amo.target, amo.token)
            .map(|_| ())
            .map_err(into_comm)
    }

    fn may_postpone_fetching(&self) -> bool {
        // The owner answers a postponed request into its done slot as it
        // answers a blocking one (the old value first), and applies one
        // sender's AMOs in arrival order when it may postpone at all.
        self.may_postpone()
    }

    fn await_postponed_value(&self, amo: PostponedAmo) -> comm_ofi::Result<u64> {
        // As await_postponed; the reply carries the old value as in
        // Am::send_amo's blocking form.
        let r = self.am()?.await_reply(amo.target, amo.token);
        Ok(reply_word(&r.map_err(into_comm)?))
    }
}
