//! What comm-ofi does for the AM layer (see `am_seam`): installing it, the
//! receive side (polling the receive CQ, the multi-receive threshold), and
//! sends from any thread or from the AM poller.

use super::*;
use crate::error::peer_err;
use crate::ofi::{CqError, Posted};

impl Comm {
    /// Installs the AM layer (see [`crate::am_seam`]): proofs of native-AMO
    /// visibility and atomics on other locales' words for CPU-route types.
    /// Later calls are ignored.
    pub fn install_am_layer(&self, layer: Arc<dyn AmLayer>) {
        let _ = self.am.layer.set(layer);
    }

    /// The calls only an AM layer makes (see [`AmPort`]).
    pub fn am_port(&self) -> AmPort<'_> {
        AmPort { comm: self }
    }

    /// Whether the weakening `w` (test-only, `PGAS_MCM_WEAKEN`) is in force:
    /// the layers above re-open the hole it names.
    #[doc(hidden)]
    pub fn is_weakened(&self, w: mcm::Weakening) -> bool {
        self.selector.is_weakened(w)
    }

    /// Reads receive-side completions (and drives progress for RMA
    /// targeting this locale). Waits up to `timeout_ms` on blocking CQs.
    pub(crate) fn poll_rx(
        &self,
        buf: &mut [CqEntry],
        timeout_ms: i32,
    ) -> std::result::Result<usize, crate::ofi::CqError> {
        let _g = self.am.rx_serial.as_ref().map(|l| l.lock());
        self.am.rx_ep.rx_cq().read(buf, timeout_ms)
    }

    /// Ends a wait in [`Comm::poll_rx`] (see `AmPort::interrupt_rx_wait`).
    pub(crate) fn interrupt_rx_wait(&self) {
        if let Err(e) = self.am.rx_ep.rx_cq().signal() {
            tracing::warn!("cannot interrupt a wait on the receive queue: {e}");
        }
    }

    /// Posts a multi-receive landing zone on the receive endpoint, retrying
    /// while the provider says `-FI_EAGAIN`.
    ///
    /// # Safety
    /// `buf..buf+len` must lie in the registered heap and stay reserved for
    /// the provider until it reports the buffer retired (`FI_MULTI_RECV`).
    pub(crate) unsafe fn post_landing_zone(
        &self,
        buf: *mut u8,
        len: usize,
        context: usize,
    ) -> Result<()> {
        let desc = if self.prov.mr_mode.local() {
            self.mem.mr.desc()
        } else {
            std::ptr::null_mut()
        };
        loop {
            let posted = {
                let _g = self.am.rx_serial.as_ref().map(|l| l.lock());
                // SAFETY: forwarded from the caller's guarantee.
                unsafe { self.am.rx_ep.recv_multi(buf, len, desc, context) }
            };
            match posted.map_err(Error::Ofi)? {
                Posted::Done => return Ok(()),
                Posted::TryAgain => {
                    let mut b = [CqEntry::default(); 1];
                    let _ = self.poll_rx(&mut b[..0], 0);
                    std::thread::yield_now();
                }
            }
        }
    }

    /// Sets `FI_OPT_MIN_MULTI_RECV` on the receive endpoint.
    pub(crate) fn set_min_multi_recv(&self, bytes: usize) -> Result<()> {
        self.am.rx_ep.set_min_multi_recv(bytes).map_err(Error::Ofi)
    }

    /// Sends the AM request `msg` to `target`'s receive endpoint through the
    /// MCM selector (which first makes the caller's stores visible as the
    /// mode says) and waits for local completion, or injects it (either way
    /// the buffer may be reused on return). `msg` must lie in the registered
    /// heap when the provider needs `FI_MR_LOCAL`. `awaited`: see
    /// [`SendOp::awaited`].
    pub(crate) fn send(&self, target: Locale, msg: &[u8], awaited: bool) -> Result<()> {
        self.check_locale(target)?;
        // A mapped target's poller may sleep on its doorbell: ring before
        // (it wakes while we send; providers whose send completes only once
        // the target progressed need that) and after (the sleeper's check).
        self.peers.mapped.ring(target);
        // Our stores to mapped heaps before the message (no instruction on
        // x86; a barrier on weakly ordered CPUs).
        std::sync::atomic::fence(Ordering::Release);
        self.with_ctx(|ctx| {
            let local = LocalBuf {
                ptr: msg.as_ptr() as *mut u8,
                len: msg.len(),
                desc: self.local_desc(ctx, msg.as_ptr(), msg.len()),
            };
            self.selector.send(ctx, target, SendOp { local, awaited })
        })
        .map_err(peer_err("active message", msg.len(), target))?;
        self.peers.mapped.ring(target);
        Ok(())
    }

    /// Sends a short message (at most the provider's inject size) on the
    /// AM poller's context without waiting for it to complete: with
    /// providers whose send completion needs the peer's receive poller
    /// (udp;ofi_rxd acknowledges in software), two pollers waiting on each
    /// other's sends would hang. Called by whichever thread
    /// polls the receive queue for the AM layer (the poller, or a worker or
    /// waiter polling in its place; the AM layer lets one poll at a time,
    /// and the context's lock serializes them anyway). Returns `Ok(false)`
    /// if the transmit queue is full (nothing sent; try again after
    /// receiving). Bypasses the MCM selector: the message is an answer that
    /// carries no stores of the caller.
    pub(crate) fn send_from_poller(&self, target: Locale, msg: &[u8]) -> Result<bool> {
        self.check_locale(target)?;
        if msg.len() > self.prov.inject_size {
            return Err(Error::InvalidSize {
                what: "message sent from the AM poller",
                size: msg.len(),
                reason: format!(
                    "the inject size of {} is {}",
                    self.prov.name, self.prov.inject_size
                ),
            });
        }
        let mut ctx = self.contexts.table.lock(AM_POLLER_CTX);
        match ctx.inject_send(target, msg) {
            Ok(()) => {
                self.peers.mapped.ring(target);
                Ok(true)
            }
            Err(Error::WouldBlock { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Reaps completions of [`Comm::send_from_poller`] without waiting.
    pub(crate) fn reap_poller_sends(&self) -> Result<()> {
        self.contexts
            .table
            .lock(AM_POLLER_CTX)
            .progress_nowait()
            .map(|_| ())
    }
}

/// What comm-ofi offers an AM layer: a view of [`Comm`] with the calls only an
/// AM layer makes. Get one with [`Comm::am_port`].
#[derive(Debug, Clone, Copy)]
pub struct AmPort<'a> {
    pub(crate) comm: &'a Comm,
}

impl AmPort<'_> {
    /// Stops comm-ofi's start-up progress thread (`pgas-progress`): the AM
    /// layer's poller polls the receive CQ with [`AmPort::poll_rx`] from now on (RMA against this
    /// locale needs it on providers with manual progress).
    pub fn take_over_polling(&self) {
        self.comm.stop_startup_progress();
    }

    /// Reads receive-side completions (and drives progress for RMA targeting
    /// this locale). Waits up to `timeout_ms` on blocking CQs.
    pub fn poll_rx(
        &self,
        buf: &mut [CqEntry],
        timeout_ms: i32,
    ) -> std::result::Result<usize, CqError> {
        self.comm.poll_rx(buf, timeout_ms)
    }

    /// Ends a wait in [`AmPort::poll_rx`] on a blocking CQ at once (or the
    /// next one, if nobody waits now: the signal stays until a read takes
    /// it); that read returns no completions.
    pub fn interrupt_rx_wait(&self) {
        self.comm.interrupt_rx_wait()
    }

    /// Posts a multi-receive landing zone on the receive endpoint.
    ///
    /// # Safety
    /// `buf..buf+len` must lie in the registered heap and stay reserved for
    /// the provider until it reports the buffer retired (`FI_MULTI_RECV`).
    pub unsafe fn post_landing_zone(&self, buf: *mut u8, len: usize, context: usize) -> Result<()> {
        // SAFETY: forwarded from the caller's guarantee.
        unsafe { self.comm.post_landing_zone(buf, len, context) }
    }

    /// Sets `FI_OPT_MIN_MULTI_RECV` on the receive endpoint.
    pub fn set_min_multi_recv(&self, bytes: usize) -> Result<()> {
        self.comm.set_min_multi_recv(bytes)
    }

    /// Sends the AM request `msg` to `target` through the MCM selector (which
    /// first makes the caller's stores visible as the mode says) and waits
    /// for local completion. `msg` must lie in the registered heap when the
    /// provider needs `FI_MR_LOCAL`.
    pub fn send(&self, target: Locale, msg: &[u8]) -> Result<()> {
        self.comm.send(target, msg, false)
    }

    /// [`AmPort::send`] of a message someone waits for: a blocking request
    /// (the caller waits for the answer) or a reply (its receiver waits for
    /// it). Where small messages leave from the receive endpoint
    /// (`TxContext::send_small_from`) such a message may, without a
    /// completion; the others keep the caller's endpoint and their order.
    pub fn send_awaited(&self, target: Locale, msg: &[u8]) -> Result<()> {
        self.comm.send(target, msg, true)
    }

    /// Sends a short message from the AM poller without ever waiting
    /// (see `Comm::send_from_poller`); `Ok(false)` if the queue is full.
    pub fn send_from_poller(&self, target: Locale, msg: &[u8]) -> Result<bool> {
        self.comm.send_from_poller(target, msg)
    }

    /// Reaps completions of [`AmPort::send_from_poller`] without waiting.
    pub fn reap_poller_sends(&self) -> Result<()> {
        self.comm.reap_poller_sends()
    }

    /// Binds the calling thread (the AM poller) to its context (`[1]`).
    pub fn bind_am_poller(&self) -> Result<()> {
        self.comm.bind_am_poller()
    }

    /// Binds the calling thread to AM-handler context `handler`.
    pub fn bind_handler(&self, handler: usize) -> Result<()> {
        self.comm.bind_am_handler(handler)
    }
}
