//! The collectives of a PMIx-launched job, over a TCP star run by locale 0
//! (issue 39): PMIx is used once, to publish where that service listens.
//!
//! Why: every PMIx collective leaves its key in the launcher's store for the
//! whole job (PMIx has no delete), and the server's fence work grows with the
//! store: under Open MPI 4.1 / PMIx 4.2 a collective took 1.3 ms in the first
//! 100 rounds of `oob_stress` and 28 ms in the ninth, and the generated litmus
//! suite stalled on the multi-host bed after ~1,400 of them. Reusing keys does
//! not work (a re-put key reads as not found on the other locales).
//!
//! So the first collective of a PMIx job starts this service in locale 0 (a
//! listener on every IPv4 address of its host, an accept thread, one reader
//! thread per locale and an engine thread running pgasrun's collective
//! engine, [`crate::collective::Collectives`]); locale 0 puts one key,
//! `pgas.oob.hub` (a random token, the port and its addresses), every locale
//! fences once and connects, locale 0 included. From then on a collective is
//! a frame to locale 0 and its answer, the same frames as under pgasrun
//! (`wire::Msg::Collective`, `Result`, `Failed`): the launcher's key space
//! stays at one key whatever the number of collectives.
//!
//! Failures: a mismatched collective fails on every locale (every later one
//! too: the job cannot be in step any more); a locale whose connection closes
//! while others wait for it fails their collective naming it; locale 0 gone
//! fails every later collective naming locale 0.
//!
//! Liveness (issue 39): the connections stay open for the whole run, so they
//! also tell when a locale's process ended. A locale that started its comm
//! layer sends `Guard` (and `Finalized` after its finalize barrier); when the
//! connection of a guarded locale closes before its `Finalized`, the service
//! calls its [`OnLost`] (the PMIx backend aborts the job naming that
//! locale), and when a locale's connection to the service closes before
//! locale 0 said `Finalized` (forwarded to every locale), its client calls
//! [`OnLost`] naming locale 0. So a locale that dies ends the job with a
//! message naming it even when the launcher does not notice (a launcher
//! that missed the death, a wrapper process that outlives the locale): the
//! survivors would otherwise wait for it forever without
//! `PGAS_PEER_TIMEOUT`.
//!
//! Causes, not consequences: a locale that ends the job (an abort, a global
//! exit, an exit before finalize) first sends `Abort` with what it is doing;
//! the service passes it on to every locale as `Stop` (the sender last, as
//! its acknowledgement: locale 0's process hosts the service and waits for
//! it before it goes). A connection that then closes is reported with that
//! cause (`locale 0 aborted: ...`), not as `locale 0 died` (issue 39: after
//! locale 0's allreduce failed on the bed, every survivor blamed its death).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::collective::{Collectives, Completed};
use crate::error::OobError;
use crate::wire::{Msg, Op, WireError};

/// Give up reaching locale 0's service after this long.
const CONNECT_DEADLINE: Duration = Duration::from_secs(30);
/// One connection attempt to one address.
const CONNECT_ATTEMPT: Duration = Duration::from_secs(2);
/// Waiting for a hello (service side) or a welcome (locale side).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// Most addresses advertised.
const MAX_ADDRS: usize = 32;
/// Advertisement format byte.
const AD_FORMAT: u8 = 1;

/// Where locale 0's service listens, as put under PMIx.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HubAd {
    /// Presented in every hello (a connection from another job is refused).
    pub token: u64,
    pub port: u16,
    /// Locale 0's host's IPv4 addresses, loopback last.
    pub addrs: Vec<Ipv4Addr>,
}

impl HubAd {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let n = self.addrs.len().min(MAX_ADDRS);
        let mut v = Vec::with_capacity(12 + 4 * n);
        v.push(AD_FORMAT);
        v.extend_from_slice(&self.token.to_le_bytes());
        v.extend_from_slice(&self.port.to_le_bytes());
        v.push(n as u8);
        for a in &self.addrs[..n] {
            v.extend_from_slice(&a.octets());
        }
        v
    }

    /// Decodes locale 0's advertisement; `Err` says what is wrong with it.
    pub(crate) fn decode(raw: &[u8]) -> Result<HubAd, String> {
        let bad = |why: &str| {
            format!(
                "bad collective-service address ({} bytes): {why}",
                raw.len()
            )
        };
        if raw.len() < 12 {
            return Err(bad("too short"));
        }
        if raw[0] != AD_FORMAT {
            return Err(bad(&format!("format {}", raw[0])));
        }
        let token = u64::from_le_bytes(raw[1..9].try_into().expect("8 bytes"));
        let port = u16::from_le_bytes([raw[9], raw[10]]);
        let n = raw[11] as usize;
        if n == 0 || n > MAX_ADDRS || raw.len() != 12 + 4 * n {
            return Err(bad(&format!("{n} addresses")));
        }
        let addrs = raw[12..]
            .chunks_exact(4)
            .map(|c| Ipv4Addr::new(c[0], c[1], c[2], c[3]))
            .collect();
        Ok(HubAd { token, port, addrs })
    }
}

/// This host's IPv4 addresses of interfaces that are up, loopback last.
fn local_addrs() -> Vec<Ipv4Addr> {
    let mut out = Vec::new();
    let mut ifa: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `ifa` with a list we free below.
    if unsafe { libc::getifaddrs(&mut ifa) } == 0 {
        let mut p = ifa;
        while !p.is_null() {
            // SAFETY: `p` is a node of the list getifaddrs returned, live
            // until freeifaddrs; `ifa_addr` may be NULL, and when its family
            // is AF_INET it points at a sockaddr_in.
            unsafe {
                let a = (*p).ifa_addr;
                let up = (*p).ifa_flags & libc::IFF_UP as u32 != 0;
                if up && !a.is_null() && i32::from((*a).sa_family) == libc::AF_INET {
                    let sin = &*(a as *const libc::sockaddr_in);
                    let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                    if !out.contains(&ip) {
                        out.push(ip);
                    }
                }
                p = (*p).ifa_next;
            }
        }
        // SAFETY: frees the list getifaddrs returned, once.
        unsafe { libc::freeifaddrs(ifa) };
    }
    out.sort_by_key(|ip| ip.is_loopback());
    if !out.iter().any(Ipv4Addr::is_loopback) {
        out.push(Ipv4Addr::LOCALHOST);
    }
    out.truncate(MAX_ADDRS);
    out
}

fn random_token() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

/// Called when a locale is lost: its rank and the whole sentence to report
/// (`locale 3 died: ...`, or the cause it sent before it went). The PMIx
/// backend aborts the job with it (unless this locale is not guarded,
/// already finalized or aborting).
pub(crate) type OnLost = Arc<dyn Fn(usize, String) + Send + Sync>;

/// What a lost locale's closed connection is reported as.
fn lost_sentence(rank: usize, cause: Option<&str>, seen: &str) -> String {
    match cause {
        Some(c) => c.to_owned(),
        None => format!("locale {rank} died: {seen}"),
    }
}

/// The `Stop` a client heard from the service: why the job is ending, set
/// once, awaited by a locale 0 that is ending the job itself.
#[derive(Default)]
pub(crate) struct StopHeard {
    reason: Mutex<Option<String>>,
    heard: parking_lot::Condvar,
}

impl StopHeard {
    fn set(&self, reason: String) {
        let mut r = self.reason.lock();
        if r.is_none() {
            *r = Some(reason);
        }
        self.heard.notify_all();
    }

    pub(crate) fn get(&self) -> Option<String> {
        self.reason.lock().clone()
    }

    /// Waits up to `limit` for a `Stop`; whether one was heard.
    pub(crate) fn wait(&self, limit: Duration) -> bool {
        let mut r = self.reason.lock();
        if r.is_none() {
            let _ = self.heard.wait_for(&mut r, limit);
        }
        r.is_some()
    }
}

enum Event {
    Joined(usize, TcpStream),
    Frame(usize, Msg),
    Closed(usize),
}

/// Starts the service for a job of `size` locales in this process (locale
/// `host_rank`, answered last so that it cannot exit before the others have
/// their answers); returns what to advertise.
pub(crate) fn start(size: usize, host_rank: usize, on_lost: OnLost) -> Result<HubAd, OobError> {
    let fail = |what: &str, e: std::io::Error| {
        OobError::ConnectionLost(format!("starting the collective service: {what}: {e}"))
    };
    let listener = TcpListener::bind((Ipv4Addr::UNSPECIFIED, 0)).map_err(|e| fail("bind", e))?;
    let port = listener
        .local_addr()
        .map_err(|e| fail("local_addr", e))?
        .port();
    let ad = HubAd {
        token: random_token(),
        port,
        addrs: local_addrs(),
    };
    let (tx, rx) = mpsc::channel();
    let token = ad.token;
    let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name.into())
            .stack_size(256 * 1024)
            .spawn(f)
            .map(drop)
            .map_err(|e| fail("thread", e))
    };
    spawn(
        "pgas-oob-hub-accept",
        Box::new(move || accept_loop(listener, token, size, tx)),
    )?;
    spawn(
        "pgas-oob-hub",
        Box::new(move || engine(size, host_rank, rx, on_lost)),
    )?;
    tracing::debug!(port, addrs = ?ad.addrs, "collective service started");
    Ok(ad)
}

fn accept_loop(listener: TcpListener, token: u64, size: usize, tx: mpsc::Sender<Event>) {
    let mut claimed = vec![false; size];
    for conn in listener.incoming() {
        let Ok(mut s) = conn else { continue };
        let _ = s.set_nodelay(true);
        let _ = s.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
        // Hellos are read here, one at a time: locales connect once each.
        let hello = Msg::read_from(&mut s);
        let rank = match hello {
            Ok(Msg::Hello { job_id, rank, .. })
                if job_id == token && (rank as usize) < size && !claimed[rank as usize] =>
            {
                rank as usize
            }
            Ok(Msg::Hello { job_id, rank, pid }) => {
                tracing::warn!(job_id, rank, pid, "collective service: hello refused");
                let _ = Msg::Reject {
                    reason: "not a locale of this job, or a rank already connected".into(),
                }
                .write_to(&mut s);
                continue;
            }
            other => {
                tracing::warn!(?other, "collective service: no hello; connection dropped");
                continue;
            }
        };
        claimed[rank] = true;
        let _ = s.set_read_timeout(None);
        let (Ok(reader), true) = (
            s.try_clone(),
            Msg::Welcome { size: size as u32 }.write_to(&mut s).is_ok(),
        ) else {
            let _ = tx.send(Event::Closed(rank));
            continue;
        };
        if tx.send(Event::Joined(rank, s)).is_err() {
            return;
        }
        let tx = tx.clone();
        let spawned = std::thread::Builder::new()
            .name("pgas-oob-hub-read".into())
            .stack_size(128 * 1024)
            .spawn(move || read_loop(rank, reader, tx));
        if spawned.is_err() {
            tracing::warn!(rank, "collective service: cannot start a reader thread");
        }
    }
}

fn read_loop(rank: usize, mut conn: TcpStream, tx: mpsc::Sender<Event>) {
    loop {
        match Msg::read_from(&mut conn) {
            Ok(m) => {
                if tx.send(Event::Frame(rank, m)).is_err() {
                    return;
                }
            }
            Err(e) => {
                if !matches!(e, WireError::Closed) {
                    tracing::warn!(rank, error = %e, "collective service: connection dropped");
                }
                let _ = tx.send(Event::Closed(rank));
                return;
            }
        }
    }
}

struct Engine {
    coll: Collectives,
    writers: Vec<Option<TcpStream>>,
    closed: Vec<bool>,
    /// Sent `Guard` (its comm layer started) / `Finalized`.
    guarded: Vec<bool>,
    finalized: Vec<bool>,
    /// What a locale said it is ending the job with (`Abort`), as a sentence
    /// naming it: reported when its connection closes.
    ending: Vec<Option<String>>,
    /// Once set, every collective fails with it (the job is out of step).
    poisoned: Option<(Option<u32>, String)>,
    host_rank: usize,
}

impl Engine {
    fn send(&mut self, rank: usize, m: &Msg) {
        if let Some(w) = self.writers[rank].as_mut() {
            if w.write_all(&m.encode()).is_err() {
                self.writers[rank] = None;
            }
        }
    }

    /// Sends `m(rank)` to `ranks`, the service's own locale last.
    fn send_all(&mut self, ranks: &[usize], m: impl Fn(usize) -> Msg) {
        let mut order: Vec<usize> = ranks
            .iter()
            .copied()
            .filter(|&r| r != self.host_rank)
            .collect();
        if ranks.contains(&self.host_rank) {
            order.push(self.host_rank);
        }
        for r in order {
            self.send(r, &m(r));
        }
    }

    fn poison(&mut self, seq: u64, peer: Option<u32>, detail: String, waiting: Vec<usize>) {
        tracing::warn!(seq, detail, "collective service: collective failed");
        let d = detail.clone();
        self.send_all(&waiting, |_| Msg::Failed {
            seq,
            peer,
            detail: d.clone(),
        });
        self.poisoned = Some((peer, detail));
    }

    /// A closed locale that the collective in flight waits for fails it.
    fn check_missing(&mut self) {
        let Some((seq, op, missing)) = self.coll.waiting() else {
            return;
        };
        if let Some(&gone) = missing.iter().find(|&&r| self.closed[r]) {
            let detail = format!(
                "locale {gone} closed its connection to the collective service without \
                 joining collective #{seq} ({}) that locale(s) {:?} wait in",
                op.name(),
                self.coll.joined()
            );
            let joined = self.coll.joined();
            self.poison(seq, Some(gone as u32), detail, joined);
        }
    }

    fn contribute(&mut self, rank: usize, seq: u64, op: Op, root: u32, data: Vec<u8>) {
        if let Some((peer, detail)) = self.poisoned.clone() {
            self.send(rank, &Msg::Failed { seq, peer, detail });
            return;
        }
        match self.coll.contribute(rank, seq, op, root, data) {
            Ok(None) => self.check_missing(),
            Ok(Some(Completed { seq, outcome, .. })) => {
                let all: Vec<usize> = (0..self.writers.len()).collect();
                match outcome {
                    Ok(data) => self.send_all(&all, |_| Msg::Result {
                        seq,
                        data: data.clone(),
                    }),
                    Err(detail) => self.send_all(&all, |_| Msg::Failed {
                        seq,
                        peer: None,
                        detail: detail.clone(),
                    }),
                }
            }
            Err(e) => {
                let mut waiting = self.coll.joined();
                if !waiting.contains(&rank) {
                    waiting.push(rank);
                }
                self.poison(seq, None, e.to_string(), waiting);
            }
        }
    }
}

fn engine(size: usize, host_rank: usize, rx: mpsc::Receiver<Event>, on_lost: OnLost) {
    let mut e = Engine {
        coll: Collectives::new(size),
        writers: (0..size).map(|_| None).collect(),
        closed: vec![false; size],
        guarded: vec![false; size],
        finalized: vec![false; size],
        ending: vec![None; size],
        poisoned: None,
        host_rank,
    };
    while let Ok(ev) = rx.recv() {
        match ev {
            Event::Joined(rank, w) => e.writers[rank] = Some(w),
            Event::Frame(
                rank,
                Msg::Collective {
                    seq,
                    op,
                    root,
                    data,
                },
            ) => e.contribute(rank, seq, op, root, data),
            Event::Frame(rank, Msg::Guard) => e.guarded[rank] = true,
            Event::Frame(rank, Msg::Finalized) => {
                e.finalized[rank] = true;
                if rank == host_rank {
                    // Every locale passed the finalize barrier: the service
                    // closing with this process is no loss. Its own locale
                    // hears it last, and only then exits.
                    let all: Vec<usize> = (0..size).collect();
                    e.send_all(&all, |_| Msg::Finalized);
                }
            }
            Event::Frame(rank, Msg::Abort { msg }) => {
                // Every other locale first, the sender last: its hearing the
                // Stop tells it that the others were told.
                let reason = format!("locale {rank} {msg}");
                let mut order: Vec<usize> = (0..size).filter(|&r| r != rank).collect();
                order.push(rank);
                for r in order {
                    e.send(
                        r,
                        &Msg::Stop {
                            reason: reason.clone(),
                        },
                    );
                }
                // The job is ending: a collective in flight or to come fails
                // with the cause rather than waiting for the launcher (not
                // as a peer's death: the cause says who and why).
                if e.poisoned.is_none() {
                    match e.coll.waiting() {
                        Some((seq, _, _)) => {
                            let joined = e.coll.joined();
                            e.poison(seq, None, reason.clone(), joined);
                        }
                        None => e.poisoned = Some((None, reason.clone())),
                    }
                }
                if e.ending[rank].is_none() {
                    e.ending[rank] = Some(reason);
                }
            }
            Event::Frame(rank, other) => {
                tracing::warn!(
                    rank,
                    msg = other.name(),
                    "collective service: frame ignored"
                )
            }
            Event::Closed(rank) => {
                e.closed[rank] = true;
                e.writers[rank] = None;
                e.check_missing();
                if e.guarded[rank] && !e.finalized[rank] && rank != host_rank {
                    on_lost(
                        rank,
                        lost_sentence(
                            rank,
                            e.ending[rank].as_deref(),
                            "its connection to the collective service closed before it \
                             finalized (its process ended or was killed)",
                        ),
                    );
                }
            }
        }
    }
}

/// A locale's connection to locale 0's service. A reader thread owns the
/// read side for the whole run: it hands the answers to the waiting
/// collective and calls [`OnLost`] when the connection closes before
/// locale 0 finalized.
pub(crate) struct HubClient {
    writer: Arc<Mutex<TcpStream>>,
    replies: mpsc::Receiver<Result<Msg, String>>,
    stop: Arc<StopHeard>,
}

impl HubClient {
    /// Connects to the advertised service as `rank` of a job of `size`
    /// (locale 0 tries loopback first, the others in advertised order).
    pub(crate) fn connect(
        ad: &HubAd,
        rank: usize,
        size: usize,
        on_lost: OnLost,
    ) -> Result<HubClient, OobError> {
        let mut addrs = ad.addrs.clone();
        if rank == 0 {
            addrs.sort_by_key(|ip| !ip.is_loopback());
        }
        let start = Instant::now();
        let mut backoff = Duration::from_millis(20);
        loop {
            let mut errors = Vec::new();
            for ip in &addrs {
                let sa = SocketAddr::new(IpAddr::V4(*ip), ad.port);
                match Self::try_one(sa, ad.token, rank, size) {
                    Ok(s) => {
                        tracing::debug!(rank, addr = %sa, "connected to the collective service");
                        return Self::watch(s, on_lost);
                    }
                    Err(e) => errors.push(format!("{sa}: {e}")),
                }
            }
            if start.elapsed() + backoff >= CONNECT_DEADLINE {
                return Err(OobError::ConnectionLost(format!(
                    "cannot reach locale 0's collective service within {CONNECT_DEADLINE:?} \
                     ({})",
                    errors.join("; ")
                )));
            }
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(Duration::from_secs(1));
        }
    }

    /// Starts the reader thread of a connected stream.
    fn watch(s: TcpStream, on_lost: OnLost) -> Result<HubClient, OobError> {
        let lost = |e: std::io::Error| {
            OobError::ConnectionLost(format!("watching the collective service: {e}"))
        };
        let mut reader = s.try_clone().map_err(lost)?;
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(StopHeard::default());
        let heard = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("pgas-oob-hub-watch".into())
            .stack_size(128 * 1024)
            .spawn(move || {
                let mut done = false;
                let why = loop {
                    match Msg::read_from(&mut reader) {
                        Ok(Msg::Finalized) => {
                            done = true;
                            // Locale 0's own finalize waits for it.
                            let _ = tx.send(Ok(Msg::Finalized));
                        }
                        // A locale is ending the job: its cause is what to
                        // report when the connection closes.
                        Ok(Msg::Stop { reason }) => heard.set(reason),
                        Ok(m) => {
                            // A send error: the client was dropped; keep watching.
                            let _ = tx.send(Ok(m));
                        }
                        Err(WireError::Malformed(m)) => {
                            let _ = tx.send(Err(m.clone()));
                            break m;
                        }
                        Err(e) => break e.to_string(),
                    }
                };
                // Waiting collectives fail at once (PeerDied, locale 0).
                drop(tx);
                if !done {
                    let seen = format!(
                        "the connection to its collective service closed before it \
                         finalized (its process ended or was killed: {why})"
                    );
                    on_lost(0, lost_sentence(0, heard.get().as_deref(), &seen));
                }
            })
            .map_err(lost)?;
        Ok(HubClient {
            writer: Arc::new(Mutex::new(s)),
            replies: rx,
            stop,
        })
    }

    /// Waits (up to `limit`) for the service's `Finalized`: locale 0's
    /// finalize returns only once every locale was told that its service
    /// closing is no loss.
    pub(crate) fn await_finalized(&self, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.replies.recv_timeout(left) {
                Ok(Ok(Msg::Finalized)) => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
    }

    /// The write side, for frames that need no answer (`Guard`,
    /// `Finalized`, `Abort`), sent from outside a collective.
    pub(crate) fn writer(&self) -> Arc<Mutex<TcpStream>> {
        Arc::clone(&self.writer)
    }

    /// The `Stop` this client hears from the service, if any.
    pub(crate) fn stop_heard(&self) -> Arc<StopHeard> {
        Arc::clone(&self.stop)
    }

    fn try_one(sa: SocketAddr, token: u64, rank: usize, size: usize) -> Result<TcpStream, String> {
        let mut s = TcpStream::connect_timeout(&sa, CONNECT_ATTEMPT).map_err(|e| e.to_string())?;
        let _ = s.set_nodelay(true);
        s.set_read_timeout(Some(HANDSHAKE_TIMEOUT))
            .map_err(|e| e.to_string())?;
        Msg::Hello {
            job_id: token,
            rank: rank as u32,
            pid: std::process::id(),
        }
        .write_to(&mut s)
        .map_err(|e| e.to_string())?;
        match Msg::read_from(&mut s).map_err(|e| e.to_string())? {
            Msg::Welcome { size: n } if n as usize == size => {}
            Msg::Welcome { size: n } => return Err(format!("service of a job of {n} locales")),
            Msg::Reject { reason } => return Err(format!("refused: {reason}")),
            other => return Err(format!("answered {}", other.name())),
        }
        s.set_read_timeout(None).map_err(|e| e.to_string())?;
        Ok(s)
    }

    /// Runs collective `seq`; returns the result bytes (packed parts for an
    /// allgather).
    pub(crate) fn collective(
        &mut self,
        seq: u64,
        op: Op,
        root: usize,
        data: &[u8],
    ) -> Result<Vec<u8>, OobError> {
        let gone = |e: &dyn std::fmt::Display| OobError::PeerDied {
            rank: 0,
            detail: format!(
                "lost the connection to locale 0's collective service in {} #{seq}: {e}",
                op.name()
            ),
        };
        let frame = Msg::Collective {
            seq,
            op,
            root: root as u32,
            data: data.to_vec(),
        };
        frame
            .write_to(&mut *self.writer.lock())
            .map_err(|e| gone(&e))?;
        let mut reply = self.replies.recv();
        while matches!(reply, Ok(Ok(Msg::Finalized))) {
            reply = self.replies.recv();
        }
        match reply {
            Ok(Ok(answer)) => OobError::collective_answer(answer, seq),
            Ok(Err(m)) => Err(OobError::Protocol(m)),
            Err(_) => Err(gone(&"connection closed")),
        }
    }
}

impl Drop for HubClient {
    /// Closes the connection (the reader thread holds a second handle of
    /// it), as the process ending would.
    fn drop(&mut self) {
        let _ = self.writer.lock().shutdown(std::net::Shutdown::Both);
    }
}

/// Sends one frame that needs no answer on a client's write side.
pub(crate) fn send(writer: &Mutex<TcpStream>, m: &Msg) -> Result<(), OobError> {
    m.write_to(&mut *writer.lock()).map_err(|e| {
        OobError::ConnectionLost(format!(
            "sending {} to the collective service: {e}",
            m.name()
        ))
    })
}

#[cfg(test)]
mod tests;
