//! The floor: a minimal raw-libfabric benchmark on the same provider, in
//! the same MCM mode's `fi_info`, with no MCM logic.
//!
//! Set-up (selection, fabric/domain/AV/CQ/endpoint, registration, address
//! exchange) reuses comm-ofi's safe wrappers and selection, so the endpoint
//! is opened from exactly the `fi_info` our layer would use for this
//! (provider, mode). The timed loops make one libfabric call per operation
//! (`fi_inject_write`, `fi_writemsg`, `fi_readmsg`, `fi_fetch_atomic`,
//! `fi_atomicmsg`, `fi_send`/`fi_recv`, `fi_cq_read` or `fi_cq_sread`)
//! through comm-ofi's `ofi` layer, the one place that makes libfabric
//! calls: thin inlined wrappers that build the call's descriptor and map
//! its return code, with none of the layer's logic above them.
//!
//! Each point gets the *matched* floor ([`Floor`]): the least raw libfabric
//! must do to give the operation's guarantee in this mode. A blocking PUT
//! guarantees only that its source may be reused, so where our layer may
//! inject (no flag needed, size within `inject_size`) its floor is
//! `fi_inject_write` with no completion; elsewhere `fi_writemsg` and its
//! completion (`FI_DELIVERY_COMPLETE` in delivery-complete mode). Visibility
//! (a PUT another locale may rely on) costs the PUT plus an 8-byte read from
//! the target, fenced in message-order-fence mode; in delivery-complete mode
//! the completed write itself. Waits spin in `fi_cq_read` and yield the core after 64
//! empty polls (comm-ofi's waiting policy, so that the ratio isolates
//! software cost, not a waiting policy), except on `sockets`, whose progress
//! thread starves when anybody spins: there they block in `fi_cq_sread`
//! (docs/providers.md), as our layer does.
//!
//! Every locale but 0 is a passive target that polls its CQ (the progress
//! that `tcp;ofi_rxm`, `shm` and `udp;ofi_rxd` need on the target, or the
//! initiator's first operation hangs) and answers ping messages; locale 0
//! measures, then sends each target a stop message.

use crate::plan::{Op, Plan};
use crate::proto::LOCAL_PAGE_OFFSET;
use crate::stats::{measure, measure_timed, Budget, Point, Res};
use bootstrap::Oob;
use comm_ofi::heap::Heap;
use comm_ofi::ofi::{
    AtomicMsg, Av, Cq, CqEntry, Domain, Endpoint, Fabric, FiAddr, Flags, LocalBuf, Mr, OfiError,
    Posted, RemoteBuf, Rma, WaitMode,
};
use comm_ofi::select::{self, SelectRequest};
use comm_ofi::{AmoForm, AmoOp, AmoType, Mode};
use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;
use std::time::Instant;

/// Receive buffers a target keeps posted.
const RECVS: usize = 8;
/// Bytes of one message buffer.
const MSG: usize = 64;
/// Context values of receives are `RECV_CTX + index` (sends and RMA use null).
const RECV_CTX: usize = 0x1000;
/// Message kinds (first byte).
const PING: u8 = b'P';
const STOP: u8 = b'S';
/// Locale 0 measures its own layer next: the target naps between polls.
const PAUSE: u8 = b'Z';
/// A floor round starts: the target polls without sleeping (answered).
const RESUME: u8 = b'R';
/// A floor round's target yields its core once per this many empty polls.
const SERVE_YIELD_EVERY: u32 = 64;
/// How long a paused target sleeps between polls of its CQ: the first nap,
/// doubled after each empty poll up to [`PAUSED_NAP_MAX`] (reset by any
/// completion). Naps of 200 us throughout woke the target's core 5,000
/// times a second while ours was measured, and cost ours 5-10% on
/// `udp;ofi_rxd` round trips (fetch-add via AM 21-22 -> 19-20 us, the
/// floor 18.5 us, with 5 ms naps; 2026-11-27).
const PAUSED_NAP: std::time::Duration = std::time::Duration::from_micros(200);
/// The longest nap of a paused target (a resume waits at most this long).
const PAUSED_NAP_MAX: std::time::Duration = std::time::Duration::from_millis(5);

/// Why a raw fetching atomic is not measured on a provider, if it is not.
pub fn no_raw_atomics_reason(provider: &str, granted: bool) -> Option<&'static str> {
    if comm_ofi::quirks::avoid_native_atomics(provider) {
        Some(
            "skipped: udp;ofi_rxd 1.17 native atomics are broken (the first fetching atomic \
             completes before the target applied it, then fi_cq_read segfaults; quirks.rs)",
        )
    } else if !granted {
        Some("skipped: the provider grants no FI_ATOMIC with this mode's ordering")
    } else {
        None
    }
}

#[derive(Debug, Clone, Copy)]
struct Peer {
    fi_addr: FiAddr,
    /// Address of the peer's heap base in provider addressing (VA or 0).
    base: u64,
    key: u64,
}

/// The floor of one point: what raw libfabric does for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Floor {
    /// `fi_inject_write` of this many bytes (no completion).
    Inject(u64),
    /// `fi_writemsg` of this many bytes, completion waited.
    Write(u64),
    /// `fi_readmsg` of this many bytes, completion waited.
    Read(u64),
    /// An 8-byte PUT (injected where ours may inject), then an 8-byte
    /// `fi_readmsg` from the same target (fenced in fence mode), waited.
    WriteRead,
    /// A window of writes of `size` bytes (injected or not), completions reaped.
    WriteWindow {
        /// Bytes per write.
        size: u64,
        /// Writes in flight.
        window: u64,
        /// `fi_inject_write` instead of `fi_writemsg`.
        inject: bool,
    },
    /// A window of `fi_readmsg`, completions reaped.
    ReadWindow {
        /// Bytes per read.
        size: u64,
        /// Reads in flight.
        window: u64,
    },
    /// `fi_fetch_atomic` (u64 sum), waited.
    FetchAtomic,
    /// A window of non-fetching `fi_atomicmsg` (u64 sum), completions reaped.
    AtomicWindow(u64),
    /// `fi_send` + `fi_recv` round trip (the least an active message costs).
    PingPong,
    /// After untimed 8-byte PUTs to k targets, k 8-byte reads (fenced in
    /// fence mode) issued together and waited: the message-order idiom.
    Reads(u64),
}

impl Floor {
    /// Operations per call of its measured closure (a window counts each of
    /// its operations; a round trip standing in for each add of a window
    /// of ours is one).
    pub fn per_call(self) -> u64 {
        match self {
            Floor::WriteWindow { window, .. } | Floor::ReadWindow { window, .. } => window,
            Floor::AtomicWindow(w) => w,
            _ => 1,
        }
    }
}

/// One locale of the raw benchmark.
pub struct Raw {
    me: usize,
    provider: String,
    mode: Mode,
    atomics: bool,
    wait: WaitMode,
    write_flags: Flags,
    read_flags: Flags,
    inject_size: usize,
    // Drop order: endpoint, MR, CQ, AV, domain, fabric, then the heap.
    ep: Endpoint,
    _mr: Mr,
    cq: Arc<Cq>,
    _av: Arc<Av>,
    _domain: Arc<Domain>,
    _fabric: Arc<Fabric>,
    heap: Heap,
    desc: *mut c_void,
    /// The descriptors of `atomic_add`'s `fi_atomicmsg`.
    amo: Box<AtomicMsg>,
    peers: Vec<Peer>,
    /// Offsets (from the heap base) of the data region, the 64-byte scratch
    /// (atomic operand at 0, result at 16, ping message at 32) and the
    /// receive buffers; the same on every locale. A PUT or GET of the
    /// region reads or writes `user` (`region` + [`LOCAL_PAGE_OFFSET`]) here,
    /// the same page count as a caller's `Vec`, and `region` on the peer.
    region: u64,
    user: u64,
    scratch: u64,
    recvs: u64,
    outstanding: usize,
    /// Completions reaped while posting on a target (handled by `serve`).
    backlog: Vec<CqEntry>,
    serving: bool,
}

// SAFETY: the raw pointers (MR descriptor) refer to libfabric objects this
// value owns, opened FI_THREAD_SAFE; a Raw is used by one thread at a time
// (moved into the serving thread and back).
unsafe impl Send for Raw {}

fn encode(s: &select::Selection) -> Vec<u8> {
    format!(
        "OK\t{}\t{}\t{}\t{}",
        s.provider,
        s.mode,
        s.native_atomics as u8,
        s.info.domain_name()
    )
    .into_bytes()
}

impl Raw {
    /// Opens the floor's endpoint on every locale of the job (collective).
    pub fn open(oob: &dyn Oob, plan: &Plan) -> Res<Raw> {
        let cfg = comm_ofi::Config::from_env()?;
        let me = oob.rank();
        let n = oob.size();
        let req = SelectRequest {
            provider: cfg.provider.clone(),
            mode: cfg.mode,
            locality: select::Locality::OneHost,
            want_atomics: cfg.native_amo,
        };
        // Locale 0 chooses exactly as comm-ofi would; the others resolve it.
        let mine = (me == 0).then(|| select::select(&req));
        let payload = match &mine {
            Some(Ok(s)) => encode(s),
            Some(Err(e)) => format!("ERR\t{e}").into_bytes(),
            None => Vec::new(),
        };
        let choice = String::from_utf8_lossy(&oob.broadcast(0, &payload)?).into_owned();
        let sel = match mine {
            Some(r) => r?,
            None => match choice.split('\t').collect::<Vec<_>>().as_slice() {
                ["OK", prov, mode, atomics, domain] => select::resolve(
                    prov,
                    mode.parse()?,
                    *atomics == "1",
                    domain,
                    select::Locality::OneHost,
                )?,
                _ => return Err(format!("locale 0 could not select: {choice}").into()),
            },
        };
        let info = &sel.info;
        let wait = cfg
            .cq_wait
            .unwrap_or(if sel.provider.starts_with("sockets") {
                WaitMode::Block
            } else {
                WaitMode::Spin
            });
        let fabric = Fabric::open(info)?;
        let domain = Domain::open(&fabric, info)?;
        let av = Av::open(&domain, n * 4)?;
        let cq = Cq::open(&domain, 1024, wait)?;
        let ep = Endpoint::open(&domain, info, &av, &cq)?;

        // The region, with room for the local side's page offset.
        let region_len = plan.region_bytes() as usize + LOCAL_PAGE_OFFSET as usize;
        let heap = Heap::new(region_len + (64 << 10))?;
        let region = heap.alloc(region_len, 4096)? - heap.base_addr();
        let scratch = heap.alloc(64, 64)? - heap.base_addr();
        let recvs = heap.alloc(RECVS * MSG, 64)? - heap.base_addr();
        // Touch the whole region, as our callers' buffers are: a page never
        // written is the kernel's shared zero page, so a floor PUT from it
        // (or GET of it) copies one 4 KiB page that stays in cache, however
        // large the transfer (shm's target-side copy read 1 MiB in 65 us
        // from untouched pages against 79 us from written ones).
        // SAFETY: region..region+region_len lies in the heap just mapped,
        // which nothing else uses yet.
        unsafe { std::ptr::write_bytes((heap.base_addr() + region) as *mut u8, 1, region_len) };
        let access = comm_ofi::heap::HEAP_ACCESS;
        // SAFETY: the heap mapping outlives the MR (field drop order).
        let mr = unsafe { Mr::register(&domain, heap.base(), heap.size(), access, 1)? };
        let mr_mode = info.mr_mode();
        if mr_mode.endpoint() {
            mr.bind_enable(&ep)?;
        }
        let desc = if mr_mode.local() {
            mr.desc()
        } else {
            ptr::null_mut()
        };

        let fi_addrs = av.insert(&oob.allgather(&ep.name()?)?)?;
        let mut reg = heap.base_addr().to_le_bytes().to_vec();
        reg.extend_from_slice(&mr.key().to_le_bytes());
        let regs = oob.allgather(&reg)?;
        let virt = mr_mode.virt_addr();
        let mut peers = Vec::with_capacity(n);
        for (i, r) in regs.iter().enumerate() {
            let w = |k: usize| -> Res<u64> {
                Ok(u64::from_le_bytes(
                    r.get(8 * k..8 * k + 8)
                        .ok_or("short registration record")?
                        .try_into()?,
                ))
            };
            peers.push(Peer {
                fi_addr: fi_addrs[i],
                base: if virt { w(0)? } else { 0 },
                key: w(1)?,
            });
        }
        let dc = sel.mode == Mode::DeliveryComplete;
        let fence = sel.mode == Mode::MessageOrderFence;
        Ok(Raw {
            me,
            provider: sel.provider.clone(),
            mode: sel.mode,
            atomics: sel.native_atomics,
            wait,
            write_flags: if dc {
                Flags::DELIVERY_COMPLETE
            } else {
                Flags::NONE
            },
            read_flags: if fence { Flags::FENCE } else { Flags::NONE },
            inject_size: info.inject_size(),
            ep,
            _mr: mr,
            cq,
            _av: av,
            _domain: domain,
            _fabric: fabric,
            heap,
            desc,
            amo: Box::default(),
            peers,
            region,
            user: region + LOCAL_PAGE_OFFSET,
            scratch,
            recvs,
            outstanding: 0,
            backlog: Vec::new(),
            serving: false,
        })
    }

    /// Whether this is locale 0 (the initiator).
    pub fn is_initiator(&self) -> bool {
        self.me == 0
    }

    /// One line for the log: what was opened.
    pub fn describe(&self) -> String {
        format!(
            "raw floor: provider {}, mode {}, inject_size {}, atomics {}, waits {}",
            self.provider,
            self.mode,
            self.inject_size,
            if self.atomics {
                "granted"
            } else {
                "not granted"
            },
            match self.wait {
                WaitMode::Spin => "spin (fi_cq_read)",
                WaitMode::Block => "block (fi_cq_sread)",
            }
        )
    }

    fn local(&self, off: u64) -> *mut u8 {
        (self.heap.base_addr() + off) as *mut u8
    }

    /// Reads completions once; returns how many (0 when none yet).
    fn reap(&mut self, buf: &mut [CqEntry]) -> Res<usize> {
        // fi_cq_read, or fi_cq_sread waiting up to 100 ms; an error entry is
        // read and named.
        self.cq.read(buf, 100).map_err(|e| e.error.into())
    }

    /// Posts with `f`, reaping completions while the provider says EAGAIN.
    fn post(&mut self, f: impl FnMut(&Endpoint) -> Result<Posted, OfiError>) -> Res<()> {
        self.post_counted(true, f)
    }

    /// [`Raw::post`]; `counted`: the operation reports a completion (an
    /// injected one does not).
    fn post_counted(
        &mut self,
        counted: bool,
        mut f: impl FnMut(&Endpoint) -> Result<Posted, OfiError>,
    ) -> Res<()> {
        let mut buf = [CqEntry::default(); 16];
        let mut idle = 0u32;
        loop {
            match f(&self.ep)? {
                Posted::Done => {
                    self.outstanding += counted as usize;
                    return Ok(());
                }
                Posted::TryAgain
                    if self.wait == WaitMode::Block && self.outstanding == 0 && !self.serving =>
                {
                    // As comm-ofi's `TxContext::post_retry`: the queue is
                    // full of injected operations, which report no
                    // completion, so no CQ read can end the wait; the
                    // provider's own progress thread empties the queue.
                    // (A `fi_cq_sread` here slept its whole 100 ms, the
                    // queue drained meanwhile, and the next batches of a
                    // point, shorter than the queue, measured how fast it
                    // fills: 0.38 us per 8 B PUT on `sockets`, against a
                    // wall time of 67-75 us per PUT for the same point.)
                    std::thread::yield_now();
                }
                Posted::TryAgain => {
                    let k = self.reap(&mut buf)?;
                    if self.serving {
                        self.backlog.extend_from_slice(&buf[..k]);
                    }
                    self.outstanding -= k.min(self.outstanding);
                    idle = if k == 0 { idle + 1 } else { 0 };
                    if idle > 64 && self.wait == WaitMode::Spin {
                        std::thread::yield_now();
                    }
                }
            }
        }
    }

    /// Waits until every posted operation (and posted receive) completed.
    /// Same waiting policy as comm-ofi's `TxContext::wait_all`: spin, and
    /// yield the core after 64 empty polls (on 2 shared cores a waiter that
    /// never yields starves the very process it waits for).
    fn wait_all(&mut self) -> Res<()> {
        let mut buf = [CqEntry::default(); 16];
        let mut idle = 0u32;
        while self.outstanding > 0 {
            let k = self.reap(&mut buf)?;
            self.outstanding -= k.min(self.outstanding);
            if k == 0 {
                idle += 1;
                if self.wait == WaitMode::Spin && idle > 64 {
                    std::thread::yield_now();
                }
            } else {
                idle = 0;
            }
        }
        Ok(())
    }

    /// The remote side of an access to `peer`'s offset `roff`.
    fn remote(&self, peer: usize, roff: u64) -> RemoteBuf {
        let p = self.peers[peer];
        RemoteBuf {
            fi_addr: p.fi_addr,
            addr: p.base + roff,
            key: p.key,
        }
    }

    /// `fi_writemsg` of `len` bytes at local offset `loff` to `peer`'s
    /// offset `roff`, or `fi_readmsg` the other way.
    fn rma(&mut self, write: bool, peer: usize, loff: u64, roff: u64, len: usize) -> Res<()> {
        let local = LocalBuf {
            ptr: self.local(loff),
            len,
            desc: self.desc,
        };
        let remote = self.remote(peer, roff);
        let (dir, flags) = if write {
            (Rma::Write, self.write_flags)
        } else {
            (Rma::Read, self.read_flags)
        };
        self.post(|ep| {
            // SAFETY: the local range lies in our registered heap and is not
            // touched until the completion is reaped; the remote range lies
            // in the peer's region.
            unsafe { ep.rma_msg(dir, local, remote, 0, flags) }
        })
    }

    /// `fi_inject_write` of `len` bytes at local offset `loff` to `peer`'s
    /// offset `roff`: the source is free on return, no completion comes.
    fn inject(&mut self, peer: usize, loff: u64, roff: u64, len: usize) -> Res<()> {
        let buf = self.local(loff);
        let remote = self.remote(peer, roff);
        self.post_counted(false, |ep| {
            // SAFETY: buf..buf+len lies in our heap; with FI_INJECT the
            // provider copies it before returning; the remote range lies in
            // the peer's region.
            unsafe { ep.inject_write(buf, len, remote) }
        })
    }

    /// A write as ours does it: injected when `inject`, else `fi_writemsg`.
    fn write(&mut self, inject: bool, peer: usize, loff: u64, roff: u64, len: usize) -> Res<()> {
        if inject {
            self.inject(peer, loff, roff, len)
        } else {
            self.rma(true, peer, loff, roff, len)
        }
    }

    /// A non-fetching `fi_atomicmsg` (u64 sum of 1) on `peer`'s scratch
    /// word 1, with the write flags (delivery-complete in that mode).
    fn atomic_add(&mut self, peer: usize) -> Res<()> {
        let scratch = self.local(self.scratch);
        // SAFETY: scratch word 0 is ours; every atomic in flight reads the
        // same value 1 from it, none writes it.
        unsafe { (scratch as *mut u64).write(1) };
        let remote = self.remote(peer, self.scratch + 8);
        self.amo
            .prepare(remote, AmoType::U64, AmoOp::Add, scratch, self.desc);
        let m: *mut AtomicMsg = &mut *self.amo;
        let flags = self.write_flags;
        self.post(|ep| {
            // SAFETY: m points into our boxed AtomicMsg, alive across the
            // call (the providers measured here copy the descriptors when
            // posting; udp;ofi_rxd, which does not, has no raw atomics, and
            // a window re-prepares the same values); the operand is a
            // registered scratch word untouched until completion.
            unsafe { ep.atomic_msg(AmoForm::Plain, &mut *m, flags) }
        })
    }

    fn post_recv(&mut self, i: usize) -> Res<()> {
        let buf = self.local(self.recvs + (i * MSG) as u64);
        let desc = self.desc;
        self.post(|ep| {
            // SAFETY: buf is MSG bytes of our registered heap reserved for this
            // receive until its completion is reaped.
            unsafe { ep.recv(buf, MSG, desc, RECV_CTX + i) }
        })
    }

    fn send_msg(&mut self, peer: usize, kind: u8) -> Res<()> {
        let buf = self.local(self.scratch + 32);
        // SAFETY: scratch+32..+40 is ours; no send of it is in flight (callers
        // wait for the previous send before the next).
        unsafe {
            *buf = kind;
            (buf.add(4) as *mut u32).write_unaligned(self.me as u32);
        }
        let (desc, addr) = (self.desc, self.peers[peer].fi_addr);
        self.post(|ep| {
            // SAFETY: 8 bytes of registered heap, untouched until completion.
            unsafe { ep.send(buf, 8, desc, addr) }
        })
    }

    /// The passive target: polls its CQ (progress), answers pings, stops on
    /// a stop message. Between a pause and a resume message from locale 0
    /// (while our layer is measured) it sleeps between polls instead of
    /// yielding: a floor's server that yield-loops on the target's core
    /// during our rounds is a competitor no user of our layer has (on shm,
    /// one took our fetch-add from 0.75 us to 5.3 us).
    pub fn serve(&mut self) -> Res<()> {
        self.serving = true;
        for i in 0..RECVS {
            self.post_recv(i)?;
        }
        // Receives stay posted: they are not counted as outstanding here.
        self.outstanding = 0;
        let mut buf = [CqEntry::default(); 16];
        let mut stop = false;
        // Paused until locale 0's first floor round (Raw::in_floor_round).
        let mut paused = true;
        let mut empty_polls = 0u32;
        let mut nap = PAUSED_NAP;
        let mut sends = 0usize;
        while !stop || sends > 0 {
            let k = self.reap(&mut buf)?;
            if k == 0 && self.backlog.is_empty() && self.wait == WaitMode::Spin {
                if paused {
                    // No floor round until locale 0 resumes us (answered).
                    std::thread::sleep(nap);
                    nap = (nap * 2).min(PAUSED_NAP_MAX);
                } else {
                    // A passive target as in the anchors' fi_anchor: poll,
                    // never sleep (RMA against this endpoint produces no
                    // completion here, so an idle counter could not tell a
                    // busy target from an idle one), and yield the core now
                    // and then (every SERVE_YIELD_EVERY empty polls). Not
                    // after every empty poll: beside our layer's idle AM
                    // poller on the same core, each such yield handed it the
                    // core for its own round of polls, and a floor round
                    // trip on shm took 2-3x what it takes with a target that
                    // polls as ours does in its rounds (fetch-add 3.6 us
                    // against 1.5 us with no yields, 2.2 us every 64).
                    empty_polls += 1;
                    if empty_polls % SERVE_YIELD_EVERY == 0 {
                        std::thread::yield_now();
                    }
                }
            }
            if k > 0 || !self.backlog.is_empty() {
                nap = PAUSED_NAP;
            }
            let mut got = std::mem::take(&mut self.backlog);
            got.extend_from_slice(&buf[..k]);
            for e in got {
                let ctx = e.op_context as usize;
                if (RECV_CTX..RECV_CTX + RECVS).contains(&ctx) {
                    let i = ctx - RECV_CTX;
                    let m = self.local(self.recvs + (i * MSG) as u64);
                    // SAFETY: the receive completed: the provider is done with m.
                    let (kind, from) = unsafe { (*m, (m.add(4) as *const u32).read_unaligned()) };
                    match kind {
                        // A resume is answered like a ping.
                        PING | RESUME => {
                            paused &= kind != RESUME;
                            self.send_msg(from as usize, PING)?;
                            sends += 1;
                        }
                        PAUSE => paused = true,
                        STOP => stop = true,
                        _ => return Err(format!("unexpected message kind {kind}").into()),
                    }
                    if !stop {
                        self.post_recv(i)?;
                    }
                } else {
                    sends = sends.saturating_sub(1);
                }
            }
            self.outstanding = 0;
        }
        Ok(())
    }

    /// Sends message `kind` to every target, each send waited for (locale 0).
    fn tell_targets(&mut self, kind: u8) -> Res<()> {
        for t in 1..self.peers.len() {
            self.send_msg(t, kind)?;
            self.wait_all()?;
        }
        Ok(())
    }

    /// Runs `f` (a floor round, or a floor's bench) with every target's
    /// server resumed (each answers, a paused one within a nap of at most
    /// `PAUSED_NAP_MAX`), and pauses them after it whatever `f` returned:
    /// they then sleep between polls while our layer is measured (locale 0).
    pub fn in_floor_round<R>(&mut self, f: impl FnOnce(&mut Raw) -> R) -> Res<R> {
        for t in 1..self.peers.len() {
            self.ask(t, RESUME)?;
        }
        let r = f(self);
        self.tell_targets(PAUSE)?;
        Ok(r)
    }

    /// Tells every target to stop (locale 0).
    pub fn stop_targets(&mut self) -> Res<()> {
        self.tell_targets(STOP)
    }

    /// Whether our layer may inject a PUT of `size` bytes in this mode (no
    /// flag needed and within the inject size; comm-ofi's `post_put`).
    pub fn injects(&self, size: u64) -> bool {
        self.mode != Mode::DeliveryComplete && size as usize <= self.inject_size
    }

    /// The matched floor of `op`, or why it has none. `amo_native`: our
    /// layer's u64 atomics take the native route.
    pub fn floor_for(&self, op: Op, amo_native: bool) -> Result<Floor, String> {
        let native = amo_native && no_raw_atomics_reason(&self.provider, self.atomics).is_none();
        Ok(match op {
            Op::Put(s) if self.injects(s) => Floor::Inject(s),
            Op::Put(s) => Floor::Write(s),
            Op::Get(s) => Floor::Read(s),
            Op::PutVisible | Op::SpawnPut if self.mode == Mode::DeliveryComplete => Floor::Write(8),
            Op::PutVisible | Op::SpawnPut => Floor::WriteRead,
            Op::PutBw(size, window) => Floor::WriteWindow {
                size,
                window,
                inject: self.injects(size),
            },
            Op::PutRate(window) => Floor::WriteWindow {
                size: 8,
                window,
                inject: self.injects(8),
            },
            Op::GetBw(size, window) => Floor::ReadWindow { size, window },
            Op::FetchAdd if native => Floor::FetchAtomic,
            Op::AddRate(w) | Op::AddUnorderedRate(w) if native => Floor::AtomicWindow(w),
            Op::FetchAdd
            | Op::AddRate(_)
            | Op::AddUnorderedRate(_)
            | Op::FetchAddAm
            | Op::OnStmt => Floor::PingPong,
            Op::Spawn => return Err("a local task: no network operation to compare with".into()),
            Op::TaskEnd(_) if self.mode == Mode::DeliveryComplete => {
                return Err(
                    "delivery-complete: every PUT already waited for delivery, so \
                            the floor of a task end is no operation at all"
                        .into(),
                )
            }
            Op::TaskEnd(k) if k as usize >= self.peers.len() => {
                return Err(format!(
                    "needs {} locales, job has {}",
                    k + 1,
                    self.peers.len()
                ))
            }
            Op::TaskEnd(k) => Floor::Reads(k),
        })
    }

    /// The floor's name in the tables.
    pub fn name(&self, f: Floor) -> String {
        let fenced = self.mode == Mode::MessageOrderFence;
        let dc = self.mode == Mode::DeliveryComplete;
        let write = if dc {
            "fi_writemsg(DC)+wait"
        } else {
            "fi_writemsg+wait"
        };
        let read = if fenced {
            "fenced fi_readmsg"
        } else {
            "fi_readmsg"
        };
        match f {
            Floor::Inject(_) => "fi_inject_write".into(),
            Floor::Write(_) => write.into(),
            Floor::Read(_) => "fi_readmsg+wait".into(),
            Floor::WriteRead => format!(
                "{}+{read}",
                if self.injects(8) {
                    "fi_inject_write"
                } else {
                    "fi_writemsg"
                }
            ),
            Floor::WriteWindow {
                window,
                inject: true,
                ..
            } => format!("{window}x fi_inject_write"),
            Floor::WriteWindow { window, .. } => {
                format!("{window}x fi_writemsg{}+reap", if dc { "(DC)" } else { "" })
            }
            Floor::ReadWindow { window, .. } => format!("{window}x fi_readmsg+reap"),
            Floor::FetchAtomic => "fi_fetch_atomic".into(),
            Floor::AtomicWindow(w) => {
                format!("{w}x fi_atomicmsg{}+reap", if dc { "(DC)" } else { "" })
            }
            Floor::PingPong => "send/recv round trip".into(),
            Floor::Reads(k) => format!("{k} {}", if fenced { "fenced reads" } else { "reads" }),
        }
    }

    /// Measures one round of a floor on locale 0 (time per call).
    pub fn measure(&mut self, f: Floor, b: Budget) -> Res<Point> {
        let (region, user, scratch) = (self.region, self.user, self.scratch);
        let inject8 = self.injects(8);
        match f {
            Floor::Inject(s) => measure(b, || self.inject(1, user, region, s as usize)),
            Floor::Write(s) => measure(b, || {
                self.rma(true, 1, user, region, s as usize)?;
                self.wait_all()
            }),
            Floor::Read(s) => measure(b, || {
                self.rma(false, 1, user, region, s as usize)?;
                self.wait_all()
            }),
            Floor::WriteRead => measure(b, || {
                self.write(inject8, 1, region, region, 8)?;
                self.rma(false, 1, scratch, scratch, 8)?;
                self.wait_all()
            }),
            Floor::WriteWindow {
                size,
                window,
                inject,
            } => measure(b, || {
                // Each PUT of the window from a buffer of its own, as ours
                // sends `window` distinct Vecs (one reused source stays in
                // cache and makes a floor no caller can reach).
                for i in 0..window {
                    let off = i * size;
                    self.write(inject, 1, user + off, region + off, size as usize)?;
                }
                self.wait_all()
            }),
            Floor::ReadWindow { size, window } => measure(b, || {
                for i in 0..window {
                    let off = i * size;
                    self.rma(false, 1, user + off, region + off, size as usize)?;
                }
                self.wait_all()
            }),
            Floor::FetchAtomic => measure(b, || self.fetch_add(1)),
            Floor::AtomicWindow(w) => measure(b, || {
                for _ in 0..w {
                    self.atomic_add(1)?;
                }
                self.wait_all()
            }),
            Floor::PingPong => measure(b, || self.ping(1)),
            Floor::Reads(k) => measure_timed(b, || {
                for t in 1..=k as usize {
                    self.write(inject8, t, region, region, 8)?;
                }
                self.wait_all()?;
                let t0 = Instant::now();
                for t in 1..=k as usize {
                    self.rma(false, t, scratch, scratch, 8)?;
                }
                self.wait_all()?;
                Ok(t0.elapsed())
            }),
        }
    }

    /// One PUT of `size` bytes to locale 1 by its matched floor:
    /// `fi_inject_write` where ours injects, else `fi_writemsg` waited (for
    /// the criterion bench).
    pub fn put_once(&mut self, size: usize) -> Res<()> {
        if self.injects(size as u64) {
            return self.inject(1, self.user, self.region, size);
        }
        self.rma(true, 1, self.user, self.region, size)?;
        self.wait_all()
    }

    /// One blocking `fi_readmsg` of `size` bytes from locale 1, waited.
    pub fn get_once(&mut self, size: usize) -> Res<()> {
        self.rma(false, 1, self.user, self.region, size)?;
        self.wait_all()
    }

    /// One `fi_fetch_atomic` (u64 sum) on locale 1, waited; an error where
    /// the floor skips atomics ([`no_raw_atomics_reason`]).
    pub fn fetch_add_once(&mut self) -> Res<()> {
        if let Some(why) = no_raw_atomics_reason(&self.provider, self.atomics) {
            return Err(why.into());
        }
        self.fetch_add(1)
    }

    /// One `fi_send`/`fi_recv` round trip with locale 1.
    pub fn ping_once(&mut self) -> Res<()> {
        self.ping(1)
    }

    fn fetch_add(&mut self, peer: usize) -> Res<()> {
        let operand = self.local(self.scratch);
        let result = self.local(self.scratch + 16);
        // SAFETY: scratch words are ours; no atomic is in flight on them.
        unsafe { (operand as *mut u64).write(1) };
        let desc = self.desc;
        let remote = self.remote(peer, self.scratch + 8);
        self.post(|ep| {
            // SAFETY: operand and result are registered scratch words untouched
            // until completion; the remote word lies in the peer's heap.
            unsafe { ep.fetch_atomic(operand, result, desc, remote, AmoType::U64, AmoOp::Add) }
        })?;
        self.wait_all()
    }

    fn ping(&mut self, peer: usize) -> Res<()> {
        self.ask(peer, PING)
    }

    /// Sends message `kind` to `peer` and waits for its answer.
    fn ask(&mut self, peer: usize, kind: u8) -> Res<()> {
        self.post_recv(0)?;
        self.send_msg(peer, kind)?;
        self.wait_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floor_counts_the_operations_of_one_call() {
        let w = Floor::WriteWindow {
            size: 8,
            window: 64,
            inject: true,
        };
        assert_eq!(w.per_call(), 64);
        assert_eq!(
            Floor::ReadWindow {
                size: 8,
                window: 16
            }
            .per_call(),
            16
        );
        assert_eq!(Floor::AtomicWindow(64).per_call(), 64);
        // A round trip stands in for one add of a window of ours: one op.
        assert_eq!(Floor::PingPong.per_call(), 1);
        assert_eq!(Floor::Reads(4).per_call(), 1);
    }
}
