//! One pgasrun job: start the locales, serve their OOB connections, watch
//! them, and when one fails bring the rest down and say what happened.
//!
//! Threads: one accepts connections, one per connection reads frames (both
//! in `conn`), two per locale forward output (`output`). They all report to
//! the main thread through one channel of [`Event`]s; the main thread owns
//! the state (children, write halves of the connections, the collective
//! engine). The one shared piece is the rank-claim table the connection
//! threads use to answer hellos without waiting for the main thread
//! (`conn::Claims`). The main thread also spawns the children, which matters
//! for the parent-death signal (see [`sys::die_with_parent`]), and it alone
//! reaps them, so a pid we signal is never a reused one.

use std::collections::hash_map::RandomState;
use std::ffi::OsString;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use bootstrap::env as oob_env;
use bootstrap::wire::Msg;

use crate::args::Timeout;
use crate::collective::{Collectives, Completed};
use crate::conn::accept_loop;
use crate::event::Event;
use crate::output::{self, Dest};
use crate::sys;

/// How often the main loop polls the children when nothing else happens.
const TICK: Duration = Duration::from_millis(50);
/// After telling the locales to stop, how long before SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// After SIGTERM, how long before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// After SIGKILL, how long before giving up on a child.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// A locale whose connection closed while its process lives counts as gone
/// after this long (its exit status usually arrives first and says more).
const CLOSED_GRACE: Duration = Duration::from_secs(1);
/// How long after the first exit is seen the exits are judged: a locale
/// killed by a signal is often noticed (connection closed, reaped) a few
/// milliseconds after the survivors that saw it die have exited with an
/// error; judging them together blames the crash, not a survivor.
const SETTLE: Duration = Duration::from_millis(200);
/// After the last locale exits, how long to wait for the rest of its output.
const OUTPUT_DRAIN: Duration = Duration::from_secs(2);

/// Exit status when a locale aborted or left a collective unfinished.
const EXIT_FAILED: i32 = 1;
/// Exit status when PROGRAM could not be started.
const EXIT_CANNOT_START: i32 = 2;
/// Exit status on --timeout / PGAS_JOB_TIMEOUT (as timeout(1)).
const EXIT_TIMEOUT: i32 = 124;

/// What to run.
pub struct Spec {
    pub locales: usize,
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub prefix: bool,
    pub timeout: Option<Timeout>,
}

enum Proc {
    NotStarted,
    Running(Child),
    Exited(ExitStatus),
}

struct Locale {
    pid: u32,
    proc: Proc,
    /// Current connection id and write half.
    conn: Option<(u64, TcpStream)>,
    closed_at: Option<Instant>,
    outputs_open: u8,
    /// The locale's comm layer started: an exit before `finalized` fails the job.
    guarded: bool,
    /// The locale said it finalized.
    finalized: bool,
    /// Exited (reaped at that time) but not judged yet: see [`Job::judge_exits`].
    exit_unjudged: Option<(ExitStatus, Instant)>,
    /// Its exit handler said it is exiting, with this status, at that
    /// time; not judged yet.
    said_exit: Option<(i32, Instant)>,
    /// When its exit handler said so (kept after judging).
    exiting_at: Option<Instant>,
}

impl Locale {
    fn running(&self) -> bool {
        matches!(self.proc, Proc::Running(_))
    }

    fn new(pid: u32, proc: Proc, outputs_open: u8) -> Locale {
        Locale {
            pid,
            proc,
            conn: None,
            closed_at: None,
            outputs_open,
            guarded: false,
            finalized: false,
            exit_unjudged: None,
            said_exit: None,
            exiting_at: None,
        }
    }

    /// Whether it must still finalize before its process may end.
    fn owes_finalize(&self) -> bool {
        self.guarded && !self.finalized
    }
}

enum Phase {
    Running,
    Stopping {
        since: Instant,
        termed: bool,
        killed: bool,
    },
}

struct Job {
    spec: Spec,
    locales: Vec<Locale>,
    coll: Collectives,
    phase: Phase,
    /// Exit status decided by the first failure.
    failure: Option<i32>,
    start: Instant,
}

/// pgasrun's own messages: one write under the stderr lock, so they do not
/// split a locale's line; errors (closed stderr) are ignored.
pub fn say(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "pgasrun: {msg}");
}

/// Runs the job; returns pgasrun's exit status.
pub fn run(spec: Spec) -> i32 {
    let listener = match TcpListener::bind(("127.0.0.1", 0)) {
        Ok(l) => l,
        Err(e) => {
            say(&format!(
                "cannot listen on 127.0.0.1 for the OOB service: {e}"
            ));
            return EXIT_FAILED;
        }
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => {
            say(&format!("cannot read the OOB listening address: {e}"));
            return EXIT_FAILED;
        }
    };
    let job_id = job_token();
    let (tx, rx) = mpsc::channel();
    let n = spec.locales;
    {
        let tx = tx.clone();
        if let Err(e) = std::thread::Builder::new()
            .name("pgasrun-accept".into())
            .spawn(move || accept_loop(listener, job_id, n, tx))
        {
            say(&format!("cannot start the OOB service thread: {e}"));
            return EXIT_FAILED;
        }
    }
    if let Err(e) = sys::catch_termination_signals() {
        tracing::warn!(error = %e, "cannot catch SIGINT/SIGTERM; locales rely on the parent-death signal");
    }
    tracing::debug!(%addr, job_id = format_args!("{job_id:016x}"), locales = n, "OOB service listening");

    let mut job = Job {
        locales: Vec::with_capacity(n),
        coll: Collectives::new(n),
        phase: Phase::Running,
        failure: None,
        start: Instant::now(),
        spec,
    };
    job.spawn_all(addr, job_id, &tx);
    tracing::debug!(elapsed = ?job.start.elapsed(), "all locales started");
    drop(tx);
    job.main_loop(&rx);
    job.drain_output(&rx);
    job.failure.unwrap_or(0)
}

/// A job token the locales present on connect. RandomState is seeded from
/// the OS's randomness; mixing in time and pid makes two jobs differ anyway.
fn job_token() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    h.finish()
}

impl Job {
    fn spawn_all(&mut self, addr: SocketAddr, job_id: u64, tx: &Sender<Event>) {
        let n = self.spec.locales;
        for rank in 0..n {
            if self.failure.is_some() {
                self.locales.push(Locale::new(0, Proc::NotStarted, 0));
                continue;
            }
            let mut cmd = Command::new(&self.spec.program);
            cmd.args(&self.spec.args)
                .envs(self.spec.env.iter().map(|(k, v)| (k, v)))
                .env(oob_env::OOB_ADDR, addr.to_string())
                .env(oob_env::RANK, rank.to_string())
                .env(oob_env::SIZE, n.to_string())
                .env(oob_env::JOB_ID, format!("{job_id:016x}"))
                .stdin(if rank == 0 {
                    Stdio::inherit()
                } else {
                    Stdio::null()
                })
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            sys::die_with_parent(&mut cmd);
            match cmd.spawn() {
                Ok(mut child) => {
                    let mut outputs_open = 0;
                    let pipes = [
                        child
                            .stdout
                            .take()
                            .map(|p| Box::new(p) as Box<dyn io::Read + Send>),
                        child
                            .stderr
                            .take()
                            .map(|p| Box::new(p) as Box<dyn io::Read + Send>),
                    ];
                    for (pipe, dest) in pipes.into_iter().zip([Dest::Stdout, Dest::Stderr]) {
                        let Some(pipe) = pipe else { continue };
                        match output::spawn_forwarder(
                            rank,
                            pipe,
                            dest,
                            self.spec.prefix,
                            tx.clone(),
                        ) {
                            Ok(()) => outputs_open += 1,
                            Err(e) => {
                                tracing::warn!(rank, error = %e, "cannot start output thread; that output is lost")
                            }
                        }
                    }
                    tracing::debug!(rank, pid = child.id(), "locale started");
                    self.locales
                        .push(Locale::new(child.id(), Proc::Running(child), outputs_open));
                }
                Err(e) => {
                    self.locales.push(Locale::new(0, Proc::NotStarted, 0));
                    self.fail(
                        EXIT_CANNOT_START,
                        format!(
                            "cannot start locale {rank} ('{}'): {e}",
                            self.spec.program.display()
                        ),
                    );
                }
            }
        }
    }

    fn who(&self, rank: usize) -> String {
        format!("locale {rank} (pid {})", self.locales[rank].pid)
    }

    fn main_loop(&mut self, rx: &Receiver<Event>) {
        loop {
            match rx.recv_timeout(TICK) {
                Ok(ev) => {
                    self.handle(ev);
                    while let Ok(ev) = rx.try_recv() {
                        self.handle(ev);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                // Unreachable while the accept thread lives; keep polling.
                Err(RecvTimeoutError::Disconnected) => std::thread::sleep(TICK),
            }
            if let Some(sig) = sys::take_signal() {
                self.on_signal(sig);
            }
            self.reap();
            self.check_collective();
            self.check_timeout();
            let settled = self
                .locales
                .iter()
                .all(|l| !l.running() && l.exit_unjudged.is_none() && l.said_exit.is_none());
            if self.escalate() || settled {
                break;
            }
        }
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Connected {
                conn,
                rank,
                pid,
                stream,
            } => self.on_connected(conn, rank, pid, stream),
            Event::Frame {
                conn,
                rank,
                msg,
                at,
            } => {
                if let Msg::Exiting { status, .. } = msg {
                    tracing::debug!(rank, status, "locale exiting");
                    let l = &mut self.locales[rank];
                    if l.exiting_at.is_none() && matches!(self.phase, Phase::Running) {
                        l.exiting_at = Some(at);
                        l.said_exit = Some((status, at));
                    }
                } else if self.is_current(rank, conn) {
                    self.on_frame(rank, msg);
                }
            }
            Event::Closed {
                conn,
                rank,
                at,
                error,
            } => {
                if !self.is_current(rank, conn) {
                    return;
                }
                tracing::debug!(rank, "OOB connection closed");
                let l = &mut self.locales[rank];
                l.conn = None;
                l.closed_at = Some(at);
                if let Some(m) = error {
                    let who = self.who(rank);
                    self.fail(EXIT_FAILED, format!("protocol error from {who}: {m}"));
                }
            }
            Event::OutputClosed { rank } => {
                let l = &mut self.locales[rank];
                l.outputs_open = l.outputs_open.saturating_sub(1);
            }
        }
    }

    fn is_current(&self, rank: usize, conn: u64) -> bool {
        matches!(self.locales[rank].conn, Some((c, _)) if c == conn)
    }

    fn on_connected(&mut self, conn: u64, rank: usize, pid: u32, stream: TcpStream) {
        // The connection thread has already welcomed it (see `Claims`).
        let l = &mut self.locales[rank];
        if pid != l.pid {
            // E.g. the locale runs under a wrapper script.
            tracing::debug!(
                rank,
                pid,
                started = l.pid,
                "locale connected from another pid"
            );
        }
        tracing::debug!(rank, pid, "locale connected");
        l.conn = Some((conn, stream));
        l.closed_at = None;
        if let Phase::Stopping { .. } = self.phase {
            // Connected after the job began to stop: tell it at once.
            self.send(
                rank,
                &Msg::Stop {
                    reason: "the job is being stopped".into(),
                }
                .encode(),
            );
        }
    }

    fn on_frame(&mut self, rank: usize, msg: Msg) {
        if !matches!(self.phase, Phase::Running) {
            return;
        }
        match msg {
            Msg::Collective {
                seq,
                op,
                root,
                data,
            } => {
                tracing::trace!(
                    rank,
                    seq,
                    op = op.name(),
                    bytes = data.len(),
                    "contribution"
                );
                match self.coll.contribute(rank, seq, op, root, data) {
                    Ok(None) => {}
                    Ok(Some(done)) => self.answer(done),
                    Err(e) => self.fail(EXIT_FAILED, e.to_string()),
                }
            }
            Msg::Abort { msg } => {
                let who = self.who(rank);
                self.fail(EXIT_FAILED, format!("{who} aborted: {msg}"));
            }
            Msg::GlobalExit { status, msg } => {
                // The program's own end of the job: its status is the job's.
                let who = self.who(rank);
                self.fail(
                    status,
                    format!("{who} ended the job with status {status}: {msg}"),
                );
            }
            Msg::Guard => {
                tracing::debug!(rank, "locale must finalize before it exits");
                self.locales[rank].guarded = true;
            }
            Msg::Finalized => {
                tracing::debug!(rank, "locale finalized");
                self.locales[rank].finalized = true;
            }
            other => {
                let who = self.who(rank);
                self.fail(
                    EXIT_FAILED,
                    format!(
                        "protocol error from {who}: unexpected '{}' message",
                        other.name()
                    ),
                );
            }
        }
    }

    fn answer(&mut self, done: Completed) {
        tracing::debug!(
            seq = done.seq,
            op = done.op.name(),
            ok = done.outcome.is_ok(),
            "collective complete"
        );
        let frame = match done.outcome {
            Ok(data) => Msg::Result {
                seq: done.seq,
                data,
            },
            Err(detail) => Msg::Failed {
                seq: done.seq,
                peer: None,
                detail,
            },
        }
        .encode();
        for rank in 0..self.locales.len() {
            self.send(rank, &frame);
        }
    }

    /// Writes a frame to a connected locale; a locale that cannot be written
    /// to is disconnected (its watchdog then exits it).
    fn send(&mut self, rank: usize, frame: &[u8]) {
        let l = &mut self.locales[rank];
        let Some((_, stream)) = l.conn.as_mut() else {
            return;
        };
        if let Err(e) = stream.write_all(frame) {
            tracing::debug!(rank, error = %e, "write to locale failed; disconnecting it");
            let _ = stream.shutdown(Shutdown::Both);
            l.conn = None;
            l.closed_at = Some(Instant::now());
        }
    }

    /// Collects the locales that exited; [`Job::judge_exits`] decides.
    fn reap(&mut self) {
        for rank in 0..self.locales.len() {
            let Proc::Running(child) = &mut self.locales[rank].proc else {
                continue;
            };
            let status = match child.try_wait() {
                Ok(Some(s)) => s,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(rank, error = %e, "waitpid failed");
                    continue;
                }
            };
            self.locales[rank].proc = Proc::Exited(status);
            let left = bootstrap::leftovers::remove_shm_regions_of(self.locales[rank].pid);
            if left > 0 {
                tracing::debug!(rank, left, "removed shm regions the locale left");
            }
            if matches!(self.phase, Phase::Running) {
                self.locales[rank].exit_unjudged = Some((status, Instant::now()));
            } else {
                tracing::debug!("{} {}", self.who(rank), sys::describe_status(status));
            }
        }
        self.judge_exits();
    }

    /// Decides what the exits seen so far mean. An exit is seen when the
    /// locale's exit handler says so (`Exiting`: its earlier frames, a
    /// `Finalized` among them, have been handled by then) or when it is
    /// reaped; a reaped one is judged once its connection has closed (so its
    /// last frames are read) or `CLOSED_GRACE` has passed. A locale that
    /// exited non-zero, was killed, or exited 0 while it still owed its
    /// finalize (peers may wait for it on the fabric, where nobody else would
    /// notice) fails the job. When several did, the crash is blamed rather
    /// than the survivors that exit with an error right after it: exits are
    /// judged together `SETTLE` after the first is seen (or once every
    /// locale has been reaped, if sooner), a death by signal first, then
    /// the first to begin dying; and while a locale seems to be dying
    /// (connection closed, not reaped yet), judging waits for it.
    fn judge_exits(&mut self) {
        if !matches!(self.phase, Phase::Running) {
            return;
        }
        let pending: Vec<usize> = (0..self.locales.len())
            .filter(|&r| {
                let l = &self.locales[r];
                l.exit_unjudged.is_some() || l.said_exit.is_some()
            })
            .collect();
        let first_seen = pending
            .iter()
            .filter_map(|&r| {
                let l = &self.locales[r];
                [l.exit_unjudged.map(|(_, t)| t), l.said_exit.map(|(_, t)| t)]
                    .into_iter()
                    .flatten()
                    .min()
            })
            .min();
        let Some(first_seen) = first_seen else {
            return;
        };
        // Once every locale has been reaped nobody is left to die later and
        // be blamed instead: judge at once, so a clean job ends when its
        // last locale does.
        if first_seen.elapsed() < SETTLE && self.locales.iter().any(Locale::running) {
            return;
        }
        let ready = self.locales.iter().all(|l| {
            let reaped_ready = l.exit_unjudged.is_none_or(|(_, t)| {
                l.said_exit.is_some() || l.conn.is_none() || t.elapsed() >= CLOSED_GRACE
            });
            let dying = l.running()
                && l.said_exit.is_none()
                && l.conn.is_none()
                && l.closed_at.is_some_and(|t| t.elapsed() < CLOSED_GRACE);
            reaped_ready && !dying
        });
        if !ready {
            return;
        }
        // (not killed by a signal, began dying, rank, what, exit status of pgasrun)
        let mut failed: Vec<(bool, Instant, usize, String, i32)> = Vec::new();
        for rank in pending {
            let who = self.who(rank);
            let l = &mut self.locales[rank];
            let owes = l.owes_finalize();
            let (desc, code, signal, at) = match (l.exit_unjudged.take(), l.said_exit.take()) {
                (Some((st, reaped)), _) => (
                    sys::describe_status(st),
                    sys::status_code(st),
                    st.signal().is_some(),
                    reaped,
                ),
                (None, Some((status, at))) => {
                    (format!("exited with status {status}"), status, false, at)
                }
                (None, None) => continue,
            };
            if code == 0 && !owes {
                tracing::debug!("{who} {desc}");
                continue;
            }
            // When it began to die: its exit handler's word, its connection
            // closing (the kernel closes it at death), or when it was seen.
            let died = [l.exiting_at, l.closed_at.filter(|c| *c <= at), Some(at)]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(at);
            let desc = if owes && !signal {
                format!("{who} {desc} before finalize")
            } else {
                format!("{who} {desc}")
            };
            let code = if code == 0 { EXIT_FAILED } else { code };
            failed.push((!signal, died, rank, desc, code));
        }
        failed.sort_by_key(|&(not_signal, died, rank, _, _)| (not_signal, died, rank));
        let mut failed = failed.into_iter();
        if let Some((_, _, _, desc, code)) = failed.next() {
            for (_, _, _, also, _) in failed {
                tracing::debug!("also: {also}");
            }
            self.fail(code, desc);
        }
    }

    /// A collective some locales wait in, that a gone locale never joined,
    /// can never complete: fail it and the job instead of hanging.
    fn check_collective(&mut self) {
        if !matches!(self.phase, Phase::Running) {
            return;
        }
        let Some((seq, op, missing)) = self.coll.waiting() else {
            return;
        };
        for r in missing {
            let l = &self.locales[r];
            let how = match &l.proc {
                // An exit still to be judged may be the job's failure.
                Proc::Exited(_) if l.exit_unjudged.is_some() || l.said_exit.is_some() => continue,
                Proc::Exited(st) => sys::describe_status(*st),
                Proc::Running(_)
                    if l.conn.is_none()
                        && l.closed_at.is_some_and(|t| t.elapsed() >= CLOSED_GRACE) =>
                {
                    "closed its OOB connection".to_owned()
                }
                _ => continue,
            };
            let joined = self.coll.joined();
            let list: Vec<String> = joined.iter().map(|r| r.to_string()).collect();
            let detail = format!(
                "{} {how} without joining collective #{seq} ({}) that locale(s) {} wait in",
                self.who(r),
                op.name(),
                list.join(", ")
            );
            let frame = Msg::Failed {
                seq,
                peer: Some(r as u32),
                detail: detail.clone(),
            }
            .encode();
            for j in joined {
                self.send(j, &frame);
            }
            self.fail(EXIT_FAILED, detail);
            return;
        }
    }

    fn check_timeout(&mut self) {
        let Some(Timeout { limit, source }) = self.spec.timeout else {
            return;
        };
        if matches!(self.phase, Phase::Running) && self.start.elapsed() >= limit {
            let live = self.locales.iter().filter(|l| l.running()).count();
            self.fail(
                EXIT_TIMEOUT,
                format!(
                    "job exceeded {source} of {}s; stopping {live} running locale(s)",
                    limit.as_secs_f64()
                ),
            );
        }
    }

    fn on_signal(&mut self, sig: i32) {
        let name = sys::signal_name(sig);
        match self.phase {
            Phase::Running => self.fail(128 + sig, format!("received {name}; stopping the job")),
            Phase::Stopping { ref mut killed, .. } if !*killed => {
                say(&format!("received {name} again; killing the locales"));
                *killed = true;
                self.signal_all(libc::SIGKILL);
            }
            Phase::Stopping { .. } => {}
        }
    }

    /// Records the first failure (its message and exit status) and starts
    /// stopping the job; later failures are only logged.
    fn fail(&mut self, code: i32, message: String) {
        if self.failure.is_some() {
            tracing::debug!("after the job failed: {message}");
            return;
        }
        say(&message);
        self.failure = Some(code);
        for l in &mut self.locales {
            l.exit_unjudged = None;
            l.said_exit = None;
        }
        self.phase = Phase::Stopping {
            since: Instant::now(),
            termed: false,
            killed: false,
        };
        // Connected locales get a stop order (their watchdog prints it and
        // exits); the others get SIGTERM now.
        let stop = Msg::Stop { reason: message }.encode();
        for rank in 0..self.locales.len() {
            if !self.locales[rank].running() {
                continue;
            }
            self.send(rank, &stop);
            if self.locales[rank].conn.is_none() {
                self.signal(rank, libc::SIGTERM);
            }
        }
    }

    fn signal(&self, rank: usize, sig: i32) {
        let l = &self.locales[rank];
        if l.running() {
            if let Err(e) = sys::send_signal(l.pid, sig) {
                tracing::debug!(rank, sig, error = %e, "kill failed");
            }
        }
    }

    fn signal_all(&self, sig: i32) {
        for rank in 0..self.locales.len() {
            self.signal(rank, sig);
        }
    }

    /// Moves a stopping job along: SIGTERM, then SIGKILL. Returns true when
    /// it is time to give up waiting.
    fn escalate(&mut self) -> bool {
        let Phase::Stopping {
            since,
            termed,
            killed,
        } = self.phase
        else {
            return false;
        };
        let t = since.elapsed();
        if !termed && t >= STOP_GRACE {
            self.signal_all(libc::SIGTERM);
        }
        if !killed && t >= STOP_GRACE + TERM_GRACE {
            for rank in 0..self.locales.len() {
                if self.locales[rank].running() {
                    say(&format!(
                        "{} did not stop after SIGTERM; sending SIGKILL",
                        self.who(rank)
                    ));
                    self.signal(rank, libc::SIGKILL);
                }
            }
        }
        self.phase = Phase::Stopping {
            since,
            termed: termed || t >= STOP_GRACE,
            killed: killed || t >= STOP_GRACE + TERM_GRACE,
        };
        if t >= STOP_GRACE + TERM_GRACE + KILL_WAIT {
            let stuck: Vec<String> = (0..self.locales.len())
                .filter(|&r| self.locales[r].running())
                .map(|r| self.who(r))
                .collect();
            if !stuck.is_empty() {
                say(&format!(
                    "giving up on {} (still running after SIGKILL)",
                    stuck.join(", ")
                ));
                return true;
            }
        }
        false
    }

    /// Lets the output threads finish, so the locales' last lines are not
    /// lost; bounded, as a background process may hold a pipe open.
    fn drain_output(&mut self, rx: &Receiver<Event>) {
        let deadline = Instant::now() + OUTPUT_DRAIN;
        while self.locales.iter().any(|l| l.outputs_open > 0) {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                tracing::debug!("output still open after the locales exited; not waiting");
                break;
            };
            match rx.recv_timeout(left) {
                Ok(Event::OutputClosed { rank }) => {
                    let l = &mut self.locales[rank];
                    l.outputs_open = l.outputs_open.saturating_sub(1);
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }
}
