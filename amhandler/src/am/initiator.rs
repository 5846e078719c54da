//! The initiator's side: checks, sending a request, waiting for its done
//! slot (helping meanwhile), and the on-statement entry points
//! (`execute_on*`, `nop`).

use super::*;
use crate::config::ReplyRoute;

impl Am {
    pub(super) fn check_open(&self) -> Result<()> {
        if self.finalized.load(Ordering::Acquire) {
            return Err(Error::Shutdown("finalize() was called".into()));
        }
        Ok(())
    }

    pub(super) fn check_target(&self, locale: Locale) -> Result<()> {
        self.check_open()?;
        if locale >= self.n {
            return Err(bad_locale(locale, self.n));
        }
        Ok(())
    }

    pub(super) fn entry(&self, id: FnId) -> Result<Entry> {
        self.registry.get(id.0).ok_or_else(|| {
            Error::Registry(format!(
                "body id {:#x} is not registered on locale {} (the sender); register it on every \
                 locale",
                id.0, self.here
            ))
        })
    }

    /// Sends one request (header + inline payload) from a heap buffer.
    pub(crate) fn send_msg(&self, target: Locale, h: &Header, payload: &[u8]) -> Result<()> {
        self.send_encoded(target, h, payload, false)
    }

    /// [`Am::send_msg`] of a message someone waits for (a blocking request,
    /// a reply): see `AmPort::send_awaited`.
    pub(crate) fn send_awaited(&self, target: Locale, h: &Header, payload: &[u8]) -> Result<()> {
        self.send_encoded(target, h, payload, true)
    }

    fn send_encoded(
        &self,
        target: Locale,
        h: &Header,
        payload: &[u8],
        awaited: bool,
    ) -> Result<()> {
        let total = HEADER + payload.len();
        if total > MAX_REQUEST {
            return Err(Error::TooLarge {
                locale: target,
                reason: format!(
                    "{total}-byte request exceeds the {MAX_REQUEST}-byte maximum (internal error: \
                     payloads above {INLINE_MAX} bytes must go by GET)"
                ),
            });
        }
        let buf = self.sendbufs.get(&self.comm)?;
        // SAFETY: buf is a pool buffer of at least MAX_REQUEST heap bytes that
        // only this call uses until it is returned below.
        let out = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, total) };
        h.encode(&mut out[..HEADER]);
        out[HEADER..].copy_from_slice(payload);
        let port = self.comm.am_port();
        let r = if awaited {
            port.send_awaited(target, out)
        } else {
            port.send(target, out)
        };
        self.sendbufs.put(buf);
        r?;
        self.counters.sent.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Sends a request; if blocking, waits for the reply and returns it.
    pub(super) fn call(&self, target: Locale, mut h: Header, payload: &[u8]) -> Result<Vec<u8>> {
        if !h.blocking() {
            h.slot = 0;
            self.send_msg(target, &h, payload)?;
            return Ok(Vec::new());
        }
        let slot = self.slots.get(&self.comm)?;
        slot::arm(&HeapSlot(slot));
        h.slot = slot;
        if let Err(e) = self.send_awaited(target, &h, payload) {
            self.slots.put(slot);
            return Err(e);
        }
        self.await_reply(target, slot)
    }

    /// Waits for `target`'s reply in done slot `slot` (helping meanwhile),
    /// reads it and gives the slot back.
    pub(super) fn await_reply(&self, target: Locale, slot: u64) -> Result<Vec<u8>> {
        let w = self.wait_word(slot, self.reply_by_message(target), target)?;
        let r = self.take_reply(target, slot, w);
        self.slots.put(slot);
        r
    }

    /// Whether `target`'s reply to a blocking request comes as a Reply
    /// message into our receive queue.
    pub(super) fn reply_by_message(&self, target: Locale) -> bool {
        let mapped = self.comm.mapped().maps(target);
        self.cfg.done.reply_route(mapped) == ReplyRoute::Message
    }

    /// Reads a reply out of a done slot (or fetches a large one).
    pub(super) fn take_reply(&self, target: Locale, slot: u64, w: u64) -> Result<Vec<u8>> {
        // Written by the target (its NIC, its poller, or into our mapped
        // slot): checked before it sizes anything.
        let (len, large, error) = wire::check_done(w).map_err(|msg| Error::Remote {
            locale: target,
            msg: format!("garbled reply: {msg}"),
        })?;
        let bytes = if large {
            // The reply area holds the target's 8-byte address of the reply.
            let a: [u8; 8] = slot::take(&HeapSlot(slot), 8).try_into().expect("8 bytes");
            let addr = u64::from_le_bytes(a);
            // The reply waits in the target's heap: a range elsewhere is
            // garbled (and would size our buffer).
            self.comm
                .check_range(GlobalAddr::new(target, addr), len)
                .map_err(|e| Error::Remote {
                    locale: target,
                    msg: format!("garbled reply: {len} bytes at {addr:#x}: {e}"),
                })?;
            let mut v = vec![0u8; len];
            let got = self.comm.get(&mut v, GlobalAddr::new(target, addr));
            let mut fh = Header::new(Op::Free, 0, self.here, 0);
            fh.a = addr;
            let freed = self.send_msg(target, &fh, &[]);
            got?;
            freed?;
            v
        } else {
            slot::take(&HeapSlot(slot), len)
        };
        if error {
            return Err(Error::Remote {
                locale: target,
                msg: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
        Ok(bytes)
    }

    /// The ladder of a thread waiting for a reply word: `spin` rounds of
    /// spinning, then yields ([`Am::snooze_on`]). On providers whose waits block (`sockets`) it
    /// never yields: the provider's internal progress thread spins there, and a
    /// yield hands it the core for a whole time slice (about 1 ms here);
    /// after the spins the waiter sleeps on the done word instead
    /// ([`Am::snooze_on`]).
    pub(super) fn wait_backoff(&self, spin: u32) -> Backoff {
        Backoff::new(spin, spin)
    }

    /// One fruitless round of waiting for `slot`'s done word: spin or yield
    /// as `backoff` says; past that, on providers whose waits block, sleep
    /// on the done word. Whoever publishes the reply in this process (our
    /// poller, or a mapped target) wakes the sleeper at once; the timeout,
    /// doubling from 50 us to 800 us, bounds the wait where nobody does
    /// (`PGAS_AM_DONE=put`: the target's NIC writes the word) and lets a
    /// waiting worker look for tasks to help with now and then.
    pub(super) fn snooze_on(&self, backoff: &mut Backoff, slot: u64) {
        if backoff.step() {
            return;
        }
        if !self.block_wait {
            std::thread::yield_now();
            return;
        }
        let woken = self.cfg.done == DoneMode::Msg;
        let nap = backoff.doubling_nap(Duration::from_micros(50), if woken { 4 } else { 0 });
        slot::sleep(&HeapSlot(slot), nap);
    }

    /// Waits until `w` is nonzero without helping (the caller holds its
    /// transmit context, which helping could need).
    /// `PGAS_PEER_TIMEOUT` bounds the wait (an error naming `target`; the
    /// slot is then not reused, a late reply may still land in it).
    pub(crate) fn wait_word_plain(&self, slot: u64, target: Locale) -> Result<u64> {
        self.wait_slot(slot, target, 64, ("visibility proof", "answer"), || false)
    }

    /// Waits until `w` is nonzero. Progress continues meanwhile (the poller
    /// polls); an executor thread runs other queued bodies, a handler thread
    /// other handler work, so nested and recursive on-statements complete.
    /// `by_message`: the reply comes as a Reply message (not stored by a
    /// mapped target or written by the target's NIC).
    /// `PGAS_PEER_TIMEOUT` bounds the wait (an error naming `target`; the
    /// slot is then not reused, a late reply may still land in it).
    pub(crate) fn wait_word(&self, slot: u64, by_message: bool, target: Locale) -> Result<u64> {
        let on_handler = IS_HANDLER.with(|h| h.get());
        self.wait_slot(slot, target, 32, ("active message", "reply"), || {
            let helped = if on_handler {
                match self.hq.pop() {
                    Some(work) => {
                        self.handle(work);
                        true
                    }
                    None => false,
                }
            } else {
                self.spawner.help()
            };
            // Poll in the poller's place: the reply is then taken by the
            // thread that waits for it (no hop from the poller).
            let pending = || slot::poll(&HeapSlot(slot)).is_none();
            let by_message: Option<&dyn Fn() -> bool> = by_message.then_some(&pending);
            helped || self.waiter_poll(by_message)
        })
    }

    /// The wait loop of [`Am::wait_word`] and [`Am::wait_word_plain`]: polls
    /// `slot`'s done word, calls `help` between polls (true: it did
    /// something, poll again at once) and snoozes when it did nothing;
    /// `PGAS_PEER_TIMEOUT` ends it with an error naming `target` and what
    /// `waited` for (the request, and the answer it lacks).
    fn wait_slot(
        &self,
        slot: u64,
        target: Locale,
        spin: u32,
        waited: (&str, &str),
        mut help: impl FnMut() -> bool,
    ) -> Result<u64> {
        let mut backoff = self.wait_backoff(spin);
        let mut silent = comm_ofi::peer_timeout::PeerWait::new();
        loop {
            if let Some(v) = slot::poll(&HeapSlot(slot)) {
                return Ok(v);
            }
            if silent.expired() {
                return Err(silent.peer_error(waited.0, target, waited.1).into());
            }
            if help() {
                backoff.reset();
                continue;
            }
            self.snooze_on(&mut backoff, slot);
        }
    }

    pub(super) fn exec(&self, locale: Locale, id: FnId, args: &[u8], flags: u8) -> Result<Vec<u8>> {
        self.check_target(locale)?;
        self.comm.diagnostics().count(match flags {
            f if f & FLAG_BLOCKING == 0 => Counter::OnNb,
            f if f & FLAG_FAST != 0 => Counter::OnFast,
            _ => Counter::OnBlocking,
        });
        let entry = self.entry(id)?;
        if locale == self.here {
            if flags & FLAG_BLOCKING != 0 {
                return self
                    .run_body(&entry, self.here, args)
                    .map_err(|msg| Error::Remote { locale, msg });
            }
            // MCM: the body is a new task; it must see the caller's stores
            // (the task-create boundary, on the caller's context).
            if !self
                .comm
                .is_weakened(comm_ofi::Weakening::LocalNbOnNoTaskCreate)
            {
                self.comm.task_create()?;
            }
            let am = self.arc();
            let args = args.to_vec();
            self.spawner.spawn(Box::new(move || {
                let r = am.run_body(&entry, am.here, &args);
                am.finish_nb(am.here, &entry.name, r);
            }));
            return Ok(Vec::new());
        }
        // MCM: the on-statement is a boundary: the body must see our stores.
        self.comm.force_visible()?;
        if args.len() <= INLINE_MAX {
            let mut h = Header::new(Op::ExecOn, flags, self.here, 0);
            h.a = id.0;
            h.len = args.len() as u32;
            return self.call(locale, h, args);
        }
        // Large arguments: the target GETs them from our heap.
        let buf = self
            .comm
            .alloc(args.len(), 64)
            .map_err(|e| Error::TooLarge {
                locale,
                reason: format!(
                    "{} argument bytes do not fit in the registered heap: {e}",
                    args.len()
                ),
            })?;
        // SAFETY: a fresh heap allocation of args.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(args.as_ptr(), buf.addr as *mut u8, args.len()) };
        let mut h = Header::new(Op::ExecOnLarge, flags, self.here, 0);
        h.a = id.0;
        h.b = buf.addr;
        h.len = u32::try_from(args.len()).map_err(|_| Error::TooLarge {
            locale,
            reason: format!("{} argument bytes exceed the 4 GiB limit", args.len()),
        })?;
        let r = self.call(locale, h, &[]);
        if flags & FLAG_BLOCKING != 0 || r.is_err() {
            // Blocking: the target fetched them before replying. Non-blocking:
            // the target sends Free once it has fetched them.
            self.comm.free(buf)?;
        }
        r
    }

    /// Runs body `id` on `locale` with `args` and waits for it (a blocking
    /// on-statement); returns the body's reply bytes. The body runs on an
    /// executor thread there and may itself do remote operations.
    pub fn execute_on(&self, locale: Locale, id: FnId, args: &[u8]) -> Result<Vec<u8>> {
        self.exec(locale, id, args, FLAG_BLOCKING)
    }

    /// Starts body `id` on `locale` and returns at once (fire and forget).
    /// A failure of the body there takes the job down.
    pub fn execute_on_nb(&self, locale: Locale, id: FnId, args: &[u8]) -> Result<()> {
        self.exec(locale, id, args, 0).map(|_| ())
    }

    /// Blocking on-statement whose body runs in the target's handler thread:
    /// for short bodies that do not block (no remote operations).
    pub fn execute_on_fast(&self, locale: Locale, id: FnId, args: &[u8]) -> Result<Vec<u8>> {
        self.exec(locale, id, args, FLAG_BLOCKING | FLAG_FAST)
    }

    /// Non-blocking fast AM: the body runs in the target's handler thread, in
    /// the order this locale sent them (with one handler thread).
    pub fn execute_on_fast_nb(&self, locale: Locale, id: FnId, args: &[u8]) -> Result<()> {
        self.exec(locale, id, args, FLAG_FAST).map(|_| ())
    }

    /// Blocking no-op: returns once `locale`'s AM poller has received the
    /// request, which it answers on arrival. What that proves: everything
    /// the calling thread's transmit context sent to `locale` before it has
    /// arrived there (the mode's send ordering or fence puts the no-op
    /// behind its PUTs, native atomics and AM requests, and `Comm::send`
    /// forces the thread's dangling stores first), so its earlier stores
    /// and native atomics are visible there and its earlier AM requests are
    /// queued at the target. It does *not* wait for those requests' bodies
    /// or handlers to have run, and says nothing of other threads' sends:
    /// to wait for a body, use a blocking on-statement.
    pub fn nop(&self, locale: Locale) -> Result<()> {
        self.check_target(locale)?;
        // Through the network even to this locale: it proves that our own
        // poller has processed what was sent to us before (native atomics
        // included).
        self.call(
            locale,
            Header::new(Op::Nop, FLAG_BLOCKING, self.here, 0),
            &[],
        )
        .map(|_| ())
    }
}
