//! The target's side: running bodies, replying (by message, by PUT, or into
//! a mapped initiator's slot), answering no-ops, dispatching requests to
//! the poller, handlers or executors.

use super::*;
use crate::config::ReplyRoute;
use crate::wire::WordReply;

impl Am {
    /// Runs a body, catching a panic as an error message.
    pub(crate) fn run_body(
        &self,
        entry: &Entry,
        caller: Locale,
        args: &[u8],
    ) -> std::result::Result<Vec<u8>, String> {
        let ctx = Ctx { am: self, caller };
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| (entry.body)(&ctx, args)));
        self.counters.executed.fetch_add(1, Ordering::Relaxed);
        self.comm.diagnostics().count(Counter::OnHandled);
        r.map_err(|p| {
            format!(
                "body {:?} panicked on locale {}: {}",
                entry.name,
                self.here,
                crate::executor::panic_text(&*p)
            )
        })
    }

    /// End of a non-blocking body: its stores become visible (task end); a
    /// failure takes the job down (nobody waits to be told).
    pub(super) fn finish_nb(
        &self,
        caller: Locale,
        name: &str,
        r: std::result::Result<Vec<u8>, String>,
    ) {
        if let Err(msg) = r {
            self.abort(&format!(
                "non-blocking active message {name:?} from locale {caller} failed: {msg}"
            ));
        }
        if let Err(e) = self.comm.on_end() {
            tracing::error!("after a non-blocking body: {e}");
        }
    }

    /// Takes the job down with `msg` (through the launcher).
    pub(crate) fn abort(&self, msg: &str) -> ! {
        tracing::error!("{msg}");
        self.comm
            .oob()
            .abort(&format!("locale {}: {msg}", self.here))
    }

    /// Sends the reply of a blocking request: the result into the
    /// initiator's slot, then (after our stores are forced visible) the
    /// done word. Non-blocking: only the task-end visibility.
    pub(crate) fn reply(&self, h: &Header, name: &str, r: std::result::Result<Vec<u8>, String>) {
        if !h.blocking() {
            return self.finish_nb(h.src, name, r);
        }
        let (mut bytes, mut error) = match r {
            Ok(b) => (b, false),
            Err(m) => (m.into_bytes(), true),
        };
        // A reply the initiator cannot be given becomes an error reply: the
        // caller gets an error, the job goes on.
        if bytes.len() > wire::MAX_REPLY {
            bytes = inline_error(format!(
                "the reply of {name:?} on locale {} is {} bytes, over the {}-byte limit of one \
                 reply",
                self.here,
                bytes.len(),
                wire::MAX_REPLY
            ));
            error = true;
        }
        // A large reply waits in our heap until the initiator fetched it and
        // sent Free.
        let mut large_at = 0;
        if bytes.len() > wire::SLOT_INLINE {
            match self.comm.alloc(bytes.len(), 64) {
                Ok(buf) => {
                    // SAFETY: fresh heap allocation of bytes.len() bytes.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            bytes.as_ptr(),
                            buf.addr as *mut u8,
                            bytes.len(),
                        )
                    };
                    large_at = buf.addr;
                }
                Err(e) => {
                    bytes = inline_error(format!(
                        "the {}-byte reply of {name:?} does not fit in the registered heap of \
                         locale {}: {e}",
                        bytes.len(),
                        self.here
                    ));
                    error = true;
                }
            }
        }
        let large = large_at != 0;
        let sent = (|| -> Result<()> {
            let mapped = self.mapped_slot(h);
            let route = self.cfg.done.reply_route(mapped.is_some());
            // A mapped initiator: write its slot directly (no message, no
            // poller on either side).
            if let (ReplyRoute::Mapped, Some(at)) = (route, mapped) {
                self.comm.before_done()?;
                self.publish_slot(HeapSlot(at as u64), &bytes, large_at, error);
                return Ok(());
            }
            // MCM: everything the body stored is visible before the 'done'.
            if route == ReplyRoute::Message {
                self.comm.before_done()?;
                let mut rh = Header::new(Op::Reply, 0, self.here, h.slot);
                rh.len = u32::try_from(bytes.len()).expect("replies are at most MAX_REPLY bytes");
                rh.c = (wire::done_word(0, large, error) & 0xff) as u32;
                rh.a = large_at;
                let inline: &[u8] = if large { &[] } else { &bytes };
                return self.send_awaited(h.src, &rh, inline);
            }
            let slot = GlobalAddr::new(h.src, h.slot);
            if large {
                self.comm.put(slot.offset(8), &large_at.to_le_bytes())?;
            } else if !bytes.is_empty() {
                self.comm.put(slot.offset(8), &bytes)?;
            }
            self.comm.before_done()?;
            let w = wire::done_word(bytes.len(), large, error);
            self.comm.put(slot, &w.to_le_bytes())?;
            Ok(())
        })();
        if let Err(e) = sent {
            self.abort(&format!(
                "cannot deliver the reply of {name:?} to locale {} (its done slot {:#x}): {e}",
                h.src, h.slot
            ));
        }
    }

    /// Answers a blocking no-op from the AM poller: its arrival is the
    /// proof (everything its sender posted before it on that context has
    /// reached us). A no-op from this locale completes locally (sending to
    /// ourselves would need the very thread that sends to receive). Returns
    /// false when the transmit queue is full; the poller retries later.
    ///
    /// The poller answers atomics the same way, with their value: into a
    /// mapped initiator's slot, to ourselves directly, or as one injected
    /// Reply message (never a wait on the network).
    pub(crate) fn answer_from_poller(&self, h: &Header, answer: &WordReply) -> bool {
        let bytes = answer.as_slice();
        if let Some(slot) = self.mapped_slot(h) {
            self.publish_slot(HeapSlot(slot as u64), bytes, 0, false);
            return true;
        }
        let mut rh = Header::new(Op::Reply, 0, self.here, h.slot);
        rh.len = bytes.len() as u32;
        rh.c = (wire::done_word(0, false, false) & 0xff) as u32;
        if h.src == self.here {
            self.on_reply(&rh, bytes);
            return true;
        }
        let mut msg = [0u8; HEADER + 8];
        rh.encode(&mut msg[..HEADER]);
        msg[HEADER..HEADER + bytes.len()].copy_from_slice(bytes);
        match self
            .comm
            .am_port()
            .send_from_poller(h.src, &msg[..HEADER + bytes.len()])
        {
            Ok(sent) => sent,
            Err(e) => self.abort(&format!(
                "cannot answer the {:?} request of locale {} (its done slot {:#x}): {e}",
                h.op, h.src, h.slot
            )),
        }
    }

    /// Applies the atomic of request `h` (a CPU atomic on our memory) and
    /// its reply (the old value if it fetches, else nothing); an error has
    /// applied nothing.
    fn apply_amo(&self, h: &Header) -> std::result::Result<WordReply, String> {
        let Some(req) = h.amo(self.here) else {
            return Err(format!("unknown atomic code {:#x}", h.c));
        };
        self.local_amo(&req).map(|v| {
            let len = if cpu_amo::fetches(req.op, req.fetch) {
                req.ty.size()
            } else {
                0
            };
            WordReply::word(v, len)
        })
    }

    /// Whether the poller answers atomic requests itself: where the reply
    /// is a message (or a store into a mapped initiator's slot), not the
    /// RMA writes of `PGAS_AM_DONE=put`, which may wait on the network.
    fn amo_on_poller(&self, h: &Header) -> bool {
        h.blocking() && self.cfg.done.reply_route(self.mapped_slot(h).is_some()) != ReplyRoute::Put
    }

    /// The initiator's done slot of request `h` in this process, if its heap
    /// is mapped here (and the slot is sane; otherwise the message path
    /// reports it).
    /// The initiator's done slot of `h` in this process, if its heap is
    /// mapped here (the mapped path).
    pub(super) fn mapped_slot(&self, h: &Header) -> Option<*mut u8> {
        if h.slot % 8 != 0 {
            return None;
        }
        self.comm
            .mapped_ptr(GlobalAddr::new(h.src, h.slot), wire::SLOT_SIZE)
    }

    /// Initiator side of a Reply message (poller): fill the slot, then set
    /// its done word.
    pub(super) fn on_reply(&self, h: &Header, payload: &[u8]) {
        let large = h.c as u64 & wire::DONE_LARGE != 0;
        let error = h.c as u64 & wire::DONE_ERROR != 0;
        let len = h.len as usize;
        let ok = self.comm.heap().contains(h.slot, wire::SLOT_SIZE)
            && h.slot % 8 == 0
            && (large || len <= wire::SLOT_INLINE);
        if !ok {
            return self.drop_malformed(
                HEADER + payload.len(),
                &format!(
                    "reply from locale {} names done slot {:#x} (+{len} bytes), which is not one \
                     of ours",
                    h.src, h.slot
                ),
            );
        }
        // The slot is a live heap slot of a request that waits for this
        // reply (checked above); nobody else writes it.
        let reply = if large { &[][..] } else { &payload[..len] };
        let large_at = if large { h.a } else { 0 };
        self.publish_reply(HeapSlot(h.slot), reply, len, large_at, error);
    }

    /// Target side of ExecOnLarge: fetch the arguments, let the initiator
    /// free them (non-blocking), run the body.
    pub(crate) fn run_large(&self, h: &Header, entry: &Entry) {
        let mut args = vec![0u8; h.len as usize];
        if let Err(e) = self.comm.get(&mut args, GlobalAddr::new(h.src, h.b)) {
            return self.reply(
                h,
                &entry.name,
                Err(format!(
                    "cannot fetch {} argument bytes from locale {}: {e}",
                    h.len, h.src
                )),
            );
        }
        if !h.blocking() {
            let mut fh = Header::new(Op::Free, 0, self.here, 0);
            fh.a = h.b;
            if let Err(e) = self.send_msg(h.src, &fh, &[]) {
                tracing::warn!("cannot ask locale {} to free {:#x}: {e}", h.src, h.b);
            }
        }
        let r = self.run_body(entry, h.src, &args);
        self.reply(h, &entry.name, r);
    }

    /// Target side of the AM-mediated GET / PUT on unregistered memory.
    pub(crate) fn run_rma(&self, h: &Header, payload: &[u8]) {
        let r = match h.op {
            Op::Get => crate::rawmem::read(h.a, h.len as usize).and_then(|v| {
                self.comm.put(GlobalAddr::new(h.src, h.b), &v).map_err(|e| {
                    format!("cannot PUT {} bytes back to locale {}: {e}", v.len(), h.src)
                })
            }),
            _ if h.b == 0 => crate::rawmem::write(h.a, payload),
            _ => {
                let mut v = vec![0u8; h.len as usize];
                self.comm
                    .get(&mut v, GlobalAddr::new(h.src, h.b))
                    .map_err(|e| {
                        format!("cannot fetch {} bytes from locale {}: {e}", v.len(), h.src)
                    })
                    .and_then(|()| crate::rawmem::write(h.a, &v))
            }
        };
        self.reply(h, "AM-mediated RMA", r.map(|()| Vec::new()));
    }

    /// Handler-thread work: fast bodies, atomics, no-ops.
    pub(crate) fn handle(&self, w: Work) {
        let h = w.h;
        match h.op {
            Op::ExecOn | Op::ExecOnLarge => {
                let Some(entry) = self.registry.get(h.a) else {
                    self.unknown(&h);
                };
                if h.op == Op::ExecOnLarge {
                    return self.run_large(&h, &entry);
                }
                let r = self.run_body(&entry, h.src, &w.payload);
                self.reply(&h, &entry.name, r);
            }
            Op::Amo => match self.apply_amo(&h) {
                // Nobody waits to be told: a non-blocking atomic our own
                // initiator checked cannot fail here, so the message was
                // not one of ours.
                Err(why) if !h.blocking() => self.drop_malformed(HEADER, &why),
                r => self.reply(&h, "AMO", r.map(|a| a.as_slice().to_vec())),
            },
            Op::Nop => self.reply(&h, "no-op", Ok(Vec::new())),
            other => tracing::error!("{other:?} queued for the handler thread (internal error)"),
        }
    }

    pub(crate) fn unknown(&self, h: &Header) -> ! {
        self.abort(&format!(
            "received an active message for body id {:#x} from locale {}, but no body is \
             registered under that id here (every locale must register every body before any \
             locale sends it)",
            h.a, h.src
        ))
    }

    /// Drops a received message that no sender of ours would send (bytes
    /// off the fabric are not trusted): a log line naming what is wrong,
    /// a count in [`crate::Stats::dropped`], and this locale goes on
    /// serving the others. The sender, if it waits, waits until its
    /// `PGAS_PEER_TIMEOUT`.
    fn drop_malformed(&self, len: usize, why: &str) {
        self.counters.dropped.fetch_add(1, Ordering::Relaxed);
        tracing::error!("locale {}: dropped a {len}-byte message: {why}", self.here);
    }

    /// The ranges a request names in its sender's heap (its done slot, the
    /// buffer of a large payload or of a GET's data) must lie there, checked
    /// against the heaps exchanged at start-up before anything is allocated
    /// or written for them. `Err((why, can_reply))`: whether the done slot
    /// itself is sound, so that a blocking sender can be told.
    fn check_ranges(&self, h: &Header) -> std::result::Result<(), (String, bool)> {
        let in_sender = |addr: u64, len: usize, what: &str| {
            self.comm
                .check_range(GlobalAddr::new(h.src, addr), len)
                .map_err(|e| format!("{:?} from locale {}: its {what}: {e}", h.op, h.src))
        };
        if h.blocking() {
            in_sender(h.slot, wire::SLOT_SIZE, "done slot").map_err(|e| (e, false))?;
        }
        let len = h.len as usize;
        let buffer = match h.op {
            Op::ExecOnLarge => Some("argument buffer"),
            Op::Get => Some("destination buffer"),
            Op::Put if h.b != 0 => Some("source buffer"),
            _ => None,
        };
        if let Some(what) = buffer {
            in_sender(h.b, len, what).map_err(|e| (e, true))?;
        }
        Ok(())
    }

    /// A request with a sound header naming a range it cannot have: the
    /// message is dropped; a blocking sender gets an error reply (from a
    /// pool job: the poller never waits on the network).
    fn reject(&self, h: Header, len: usize, why: String, can_reply: bool) {
        self.drop_malformed(len, &why);
        if can_reply && h.blocking() {
            let am = self.arc();
            self.spawner.spawn(Box::new(move || {
                am.reply(&h, "rejected request", Err(why));
            }));
        }
    }

    /// Routes one received request (called by the poller; never blocks on
    /// the network). A message that does not decode, or names what no
    /// sender of ours would, is dropped with a log line
    /// ([`Am::drop_malformed`]).
    pub(crate) fn dispatch(&self, msg: &[u8]) {
        let decoded = Header::decode(msg).and_then(|(h, p)| h.check(self.n).map(|()| (h, p)));
        let (h, payload) = match decoded {
            Ok(x) => x,
            Err(e) => return self.drop_malformed(msg.len(), &e.to_string()),
        };
        if let Err((why, can_reply)) = self.check_ranges(&h) {
            return self.reject(h, msg.len(), why, can_reply);
        }
        self.counters.received.fetch_add(1, Ordering::Relaxed);
        match h.op {
            Op::ExecOn | Op::ExecOnLarge => {
                let Some(entry) = self.registry.get(h.a) else {
                    self.unknown(&h);
                };
                if h.fast() && h.op == Op::ExecOn && h.blocking() && self.mapped_slot(&h).is_some()
                {
                    // A fast body for a mapped initiator runs right here: its
                    // reply is a store into the initiator's slot, which never
                    // waits on the network (no hop to the handler thread).
                    let r = self.run_body(&entry, h.src, payload);
                    self.reply(&h, &entry.name, r);
                } else if h.fast() && h.op == Op::ExecOn && h.blocking() && self.polled_by_worker()
                {
                    // A runtime worker polling in the poller's place: the
                    // body runs as a task on it next, no hop to the handler
                    // thread (a blocking request has no successor from its
                    // sender's thread to keep in order with).
                    let am = self.arc();
                    let payload = payload.to_vec();
                    self.spawner.spawn(Box::new(move || {
                        let r = am.run_body(&entry, h.src, &payload);
                        am.reply(&h, &entry.name, r);
                    }));
                } else if h.fast() {
                    self.push_handler(Work {
                        h,
                        payload: payload.to_vec(),
                    });
                } else {
                    let am = self.arc();
                    let payload = payload.to_vec();
                    let job: Job = if h.op == Op::ExecOn {
                        Box::new(move || {
                            let r = am.run_body(&entry, h.src, &payload);
                            am.reply(&h, &entry.name, r);
                        })
                    } else {
                        Box::new(move || am.run_large(&h, &entry))
                    };
                    self.spawner.spawn(job);
                }
            }
            Op::Get | Op::Put => {
                let am = self.arc();
                let payload = payload.to_vec();
                self.spawner
                    .spawn(Box::new(move || am.run_rma(&h, &payload)));
            }
            // The AM poller answers a blocking no-op itself, whatever
            // PGAS_AM_DONE says (see `Bridge::prepare_proof`): a handler
            // answering it could itself be waiting for a proof, and two
            // handlers proving to each other would deadlock.
            Op::Nop if h.blocking() => {
                let nothing = WordReply::default();
                if !self.answer_from_poller(&h, &nothing) {
                    self.deferred_answers.push((h, nothing));
                }
            }
            // An atomic is a CPU atomic on our memory and a one-word
            // answer: the poller does both (no hop to a handler thread,
            // applied in arrival order as the one handler would). An error
            // applied nothing and goes to the handler, whose reply carries
            // the message.
            Op::Amo if self.amo_on_poller(&h) => match self.apply_amo(&h) {
                Ok(answer) => {
                    if !self.answer_from_poller(&h, &answer) {
                        self.deferred_answers.push((h, answer));
                    }
                }
                Err(_) => self.push_handler(Work {
                    h,
                    payload: Vec::new(),
                }),
            },
            Op::Amo | Op::Nop => self.push_handler(Work {
                h,
                payload: Vec::new(),
            }),
            Op::Free => {
                if let Err(e) = self.comm.free(GlobalAddr::new(self.here, h.a)) {
                    tracing::error!("Free from locale {}: {e}", h.src);
                }
            }
            Op::Shutdown => {
                self.shutdowns.fetch_add(1, Ordering::AcqRel);
                if let Some(t) = &*self.finalizer.lock() {
                    t.unpark();
                }
            }
            Op::Reply => self.on_reply(&h, payload),
        }
    }

    pub(crate) fn push_handler(&self, w: Work) {
        self.hq.push(w);
        self.idle.wake_one();
    }
}

impl Am {
    /// Publishes a reply into a done slot in this process (ours, from a
    /// Reply message; or a mapped initiator's, with no message at all): the
    /// reply bytes, or for a large reply its address in the target's heap,
    /// then the done word that releases them, through the handshake of
    /// `slot.rs`. The initiator's waiting thread sees the done word; where
    /// waits block (`sockets`) it sleeps on that word and is woken.
    pub(super) fn publish_slot(&self, slot: HeapSlot, bytes: &[u8], large_at: u64, error: bool) {
        self.publish_reply(slot, bytes, bytes.len(), large_at, error)
    }

    fn publish_reply(&self, slot: HeapSlot, bytes: &[u8], len: usize, large_at: u64, error: bool) {
        let large = large_at != 0;
        let word = wire::done_word(len, large, error);
        let at = if large {
            &large_at.to_le_bytes()[..]
        } else {
            bytes
        };
        if self.block_wait {
            slot::publish_and_wake(&slot, at, word);
        } else {
            slot::publish(&slot, at, word);
        }
    }
}
