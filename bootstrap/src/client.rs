//! The locale side of the launcher backend: one TCP connection to `pgasrun`
//! for the whole run, shared by the collectives and a watchdog.
//!
//! Replies to collectives and the launcher's stop orders arrive on the same
//! connection, so one reader thread (the watchdog) owns the read side: it hands
//! replies to the waiting caller through a channel and exits the process on a
//! stop order or when the connection drops (launcher gone). Callers write
//! under a separate lock from the one that serializes collectives, so
//! [`Oob::abort`] never waits behind a collective that is blocked on a peer.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::env::LauncherEnv;
use crate::error::OobError;
use crate::oob::{abort_text, shared_instance, Relayed};
use crate::single::check_len;
use crate::wire::{Msg, Op, WireError};

/// Give up connecting after this long (the launcher listens before it spawns
/// us, so this only covers an overloaded machine).
const CONNECT_DEADLINE: Duration = Duration::from_secs(30);
/// One connection attempt.
const CONNECT_ATTEMPT: Duration = Duration::from_secs(5);
/// Waiting for the launcher's answer to our hello.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// After sending an abort, how long to wait for the launcher's stop order
/// before exiting on our own.
const ABORT_WAIT: Duration = Duration::from_secs(10);
/// Exit status of a locale stopped by the watchdog.
const STOPPED_EXIT_CODE: i32 = 1;

/// The process-wide connection: a second `from_env()` must not open a second
/// connection with the same rank (the launcher would refuse it).
static SHARED: std::sync::Mutex<Option<LauncherOob>> = std::sync::Mutex::new(None);

/// Returns the process's connection to the launcher, opening it on first use.
pub(crate) fn connect_shared(env: &LauncherEnv) -> Result<LauncherOob, OobError> {
    shared_instance(&SHARED, || {
        let c = LauncherOob::connect(env)?;
        // SAFETY: registers a plain extern "C" fn once; its argument is unused.
        if unsafe { on_exit(tell_exit, std::ptr::null_mut()) } != 0 {
            tracing::warn!("on_exit failed: pgasrun will not hear when this locale exits");
        }
        Ok(c)
    })
}

extern "C" {
    /// glibc's `on_exit`: like `atexit`, but the handler gets the exit status.
    fn on_exit(
        f: extern "C" fn(std::ffi::c_int, *mut std::ffi::c_void),
        arg: *mut std::ffi::c_void,
    ) -> std::ffi::c_int;
}

/// Exit handler: tells pgasrun this locale is exiting and with what status,
/// before the libraries' destructors (which may take a while, and during
/// which peers already see us gone) run. Never blocks for long.
extern "C" fn tell_exit(status: std::ffi::c_int, _arg: *mut std::ffi::c_void) {
    let Ok(shared) = SHARED.try_lock() else {
        return;
    };
    if let Some(c) = shared.as_ref() {
        if let Some(mut w) = c.inner.writer.try_lock_for(Duration::from_millis(200)) {
            let sent_ns = crate::wire::monotonic_ns();
            let _ = w.write_all(&Msg::Exiting { status, sent_ns }.encode());
        }
    }
}

struct Calls {
    next_seq: u64,
    /// The launcher's answers to collectives (`Msg::Result`, `Msg::Failed`),
    /// from the watchdog.
    replies: mpsc::Receiver<Msg>,
}

struct Inner {
    rank: usize,
    size: usize,
    /// Held for a whole collective: one at a time per locale.
    calls: Mutex<Calls>,
    /// Held only while writing one frame.
    writer: Mutex<TcpStream>,
    /// Set by `abort()`, so the watchdog exits quietly on the stop order that
    /// our own abort causes (the launcher prints the message).
    aborting: Arc<AtomicBool>,
}

/// OOB over a connection to `pgasrun`.
#[derive(Clone)]
pub(crate) struct LauncherOob {
    inner: Arc<Inner>,
}

impl LauncherOob {
    fn connect(env: &LauncherEnv) -> Result<LauncherOob, OobError> {
        let mut stream = connect_with_retries(env.addr)?;
        let lost = |what: &str, e: &dyn std::fmt::Display| {
            OobError::ConnectionLost(format!("{what} {}: {e}", env.addr))
        };
        // Rank and size were checked against u32 when parsed.
        Msg::Hello {
            job_id: env.job_id,
            rank: env.rank as u32,
            pid: std::process::id(),
        }
        .write_to(&mut stream)
        .map_err(|e| lost("sending hello to", &e))?;
        stream
            .set_read_timeout(Some(HANDSHAKE_TIMEOUT))
            .map_err(|e| lost("configuring connection to", &e))?;
        let answer = Msg::read_from(&mut stream).map_err(|e| match e {
            WireError::Io(e) if is_timeout(&e) => OobError::ConnectionLost(format!(
                "no answer from the launcher at {} within {HANDSHAKE_TIMEOUT:?}",
                env.addr
            )),
            WireError::Malformed(m) => OobError::Protocol(m),
            e => lost("waiting for the launcher at", &e),
        })?;
        match answer {
            Msg::Welcome { size } if size as usize == env.size => {}
            Msg::Welcome { size } => {
                return Err(OobError::Protocol(format!(
                    "launcher says the job has {size} locales but PGAS_SIZE={}",
                    env.size
                )))
            }
            Msg::Reject { reason } => {
                return Err(OobError::Rejected {
                    rank: env.rank,
                    reason,
                })
            }
            other => {
                return Err(OobError::Protocol(format!(
                    "expected welcome from the launcher, got {}",
                    other.name()
                )))
            }
        }
        stream
            .set_read_timeout(None)
            .map_err(|e| lost("configuring connection to", &e))?;
        let reader = stream
            .try_clone()
            .map_err(|e| lost("duplicating connection to", &e))?;
        let (tx, rx) = mpsc::channel();
        let aborting = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&aborting);
        let rank = env.rank;
        std::thread::Builder::new()
            .name("pgas-oob-watchdog".into())
            .stack_size(64 * 1024)
            .spawn(move || watchdog(rank, reader, tx, &flag))
            .map_err(|e| lost("starting the watchdog thread for", &e))?;
        tracing::debug!(rank, size = env.size, addr = %env.addr, "connected to pgasrun");
        Ok(LauncherOob {
            inner: Arc::new(Inner {
                rank,
                size: env.size,
                calls: Mutex::new(Calls {
                    next_seq: 0,
                    replies: rx,
                }),
                writer: Mutex::new(stream),
                aborting,
            }),
        })
    }
}

impl Relayed for LauncherOob {
    fn place(&self) -> (usize, usize) {
        (self.inner.rank, self.inner.size)
    }

    fn collective(&self, op: Op, root: usize, data: &[u8]) -> Result<Vec<u8>, OobError> {
        check_len(data)?;
        let mut calls = self.inner.calls.lock();
        let seq = calls.next_seq;
        calls.next_seq += 1;
        let frame = Msg::Collective {
            seq,
            op,
            root: root as u32,
            data: data.to_vec(),
        }
        .encode();
        self.inner
            .writer
            .lock()
            .write_all(&frame)
            .map_err(|e| OobError::ConnectionLost(format!("sending {} #{seq}: {e}", op.name())))?;
        tracing::trace!(seq, op = op.name(), bytes = data.len(), "collective sent");
        match calls.replies.recv() {
            Ok(answer) => OobError::collective_answer(answer, seq),
            Err(_) => Err(OobError::ConnectionLost(format!(
                "watchdog stopped while waiting for {} #{seq}",
                op.name()
            ))),
        }
    }

    fn guard(&self) -> Result<(), OobError> {
        self.send(&Msg::Guard)
    }

    fn done(&self) -> Result<(), OobError> {
        self.send(&Msg::Finalized)
    }

    /// Tells the launcher to stop the job (an abort, or a global exit with
    /// its status), then waits for the stop order.
    fn end_job(&self, status: Option<i32>, msg: &str) -> ! {
        let inner = &self.inner;
        inner.aborting.store(true, Ordering::SeqCst);
        let msg_part = abort_text(msg).to_owned();
        let frame = match status {
            None => Msg::Abort { msg: msg_part },
            Some(status) => Msg::GlobalExit {
                status,
                msg: msg_part,
            },
        }
        .encode();
        // Another thread may be mid-write of a large frame; do not wait forever.
        let sent = inner
            .writer
            .try_lock_for(Duration::from_secs(5))
            .is_some_and(|mut w| w.write_all(&frame).and_then(|()| w.flush()).is_ok());
        if sent {
            // The launcher prints the message and answers with a stop order,
            // on which the watchdog exits the process.
            std::thread::sleep(ABORT_WAIT);
        }
        let _ = writeln!(
            io::stderr(),
            "pgas locale {}: {}: {msg} (the launcher did not answer)",
            inner.rank,
            if status.is_some() {
                "global exit"
            } else {
                "abort"
            }
        );
        std::process::exit(status.unwrap_or(STOPPED_EXIT_CODE))
    }
}

impl LauncherOob {
    /// Sends one frame that needs no answer.
    fn send(&self, msg: &Msg) -> Result<(), OobError> {
        self.inner
            .writer
            .lock()
            .write_all(&msg.encode())
            .map_err(|e| OobError::ConnectionLost(format!("sending {}: {e}", msg.name())))
    }
}

fn connect_with_retries(addr: SocketAddr) -> Result<TcpStream, OobError> {
    let start = Instant::now();
    let mut attempts = 0u32;
    let mut backoff = Duration::from_millis(20);
    loop {
        attempts += 1;
        match TcpStream::connect_timeout(&addr, CONNECT_ATTEMPT) {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => {
                let elapsed = start.elapsed();
                if elapsed + backoff >= CONNECT_DEADLINE {
                    return Err(OobError::Connect {
                        addr,
                        attempts,
                        elapsed_ms: elapsed.as_millis() as u64,
                        cause: e,
                    });
                }
                tracing::debug!(%addr, attempts, error = %e, "connect to pgasrun failed, retrying");
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Reads the connection until the end of the process. Never returns: the
/// process exits when the launcher stops the job or goes away.
fn watchdog(rank: usize, mut conn: TcpStream, tx: mpsc::Sender<Msg>, aborting: &AtomicBool) {
    let why = loop {
        match Msg::read_from(&mut conn) {
            Ok(answer @ (Msg::Result { .. } | Msg::Failed { .. })) => {
                // A send error means the Oob was dropped; keep watching.
                let _ = tx.send(answer);
            }
            Ok(Msg::Stop { reason }) => {
                if aborting.load(Ordering::SeqCst) {
                    std::process::exit(STOPPED_EXIT_CODE);
                }
                break format!("job stopped by pgasrun: {reason}");
            }
            Ok(other) => {
                break format!(
                    "protocol error: unexpected '{}' message from pgasrun",
                    other.name()
                )
            }
            Err(WireError::Closed) => {
                break "lost the connection to pgasrun (launcher gone?)".to_owned()
            }
            Err(e) => break format!("error reading from pgasrun: {e}"),
        }
    };
    // A broken stderr must not keep us alive: ignore write errors.
    let _ = writeln!(io::stderr(), "pgas locale {rank}: {why}; exiting");
    std::process::exit(STOPPED_EXIT_CODE);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Oob;
    use std::net::TcpListener;

    /// A one-connection fake launcher running `script` on the accepted
    /// stream. The stream is leaked afterwards: closing it would make the
    /// watchdog exit the test process.
    fn fake_launcher(script: impl FnOnce(&mut TcpStream) + Send + 'static) -> LauncherEnv {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            match Msg::read_from(&mut s).unwrap() {
                Msg::Hello {
                    job_id: 77,
                    rank: 1,
                    ..
                } => {}
                other => panic!("bad hello {other:?}"),
            }
            script(&mut s);
            std::mem::forget(s);
        });
        LauncherEnv {
            addr,
            rank: 1,
            size: 2,
            job_id: 77,
        }
    }

    fn reply(s: &mut TcpStream, m: Msg) {
        m.write_to(s).unwrap();
    }

    fn expect_collective(s: &mut TcpStream, want_seq: u64, want_op: Op) -> Vec<u8> {
        match Msg::read_from(s).unwrap() {
            Msg::Collective { seq, op, data, .. } if seq == want_seq && op == want_op => data,
            other => panic!("expected {want_op:?} #{want_seq}, got {other:?}"),
        }
    }

    #[test]
    fn rejection_is_reported_with_the_reason() {
        let env = fake_launcher(|s| {
            reply(
                s,
                Msg::Reject {
                    reason: "go away".into(),
                },
            )
        });
        match LauncherOob::connect(&env) {
            Err(OobError::Rejected { rank: 1, reason }) => assert_eq!(reason, "go away"),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("connected"),
        }
    }

    #[test]
    fn size_disagreement_is_a_protocol_error() {
        let env = fake_launcher(|s| reply(s, Msg::Welcome { size: 3 }));
        let e = LauncherOob::connect(&env).err().expect("must fail");
        assert!(e.to_string().contains("3 locales but PGAS_SIZE=2"), "{e}");
    }

    #[test]
    fn collectives_against_a_fake_launcher() {
        let env = fake_launcher(|s| {
            reply(s, Msg::Welcome { size: 2 });
            assert_eq!(expect_collective(s, 0, Op::Allgather), b"mine");
            let parts = crate::wire::encode_parts([&b"zero"[..], &b"mine"[..]].into_iter());
            reply(
                s,
                Msg::Result {
                    seq: 0,
                    data: parts,
                },
            );
            // Non-root: our bytes do not travel.
            assert_eq!(expect_collective(s, 1, Op::Broadcast), b"");
            reply(
                s,
                Msg::Result {
                    seq: 1,
                    data: b"root".to_vec(),
                },
            );
            expect_collective(s, 2, Op::Barrier);
            reply(
                s,
                Msg::Failed {
                    seq: 2,
                    peer: Some(0),
                    detail: "exited".into(),
                },
            );
            expect_collective(s, 3, Op::Barrier);
            reply(
                s,
                Msg::Result {
                    seq: 9,
                    data: vec![],
                },
            );
        });
        let oob = LauncherOob::connect(&env).unwrap();
        assert_eq!((oob.rank(), oob.size()), (1, 2));
        assert_eq!(
            oob.allgather(b"mine").unwrap(),
            vec![b"zero".to_vec(), b"mine".to_vec()]
        );
        assert!(matches!(
            oob.broadcast(2, b"x"),
            Err(OobError::InvalidRoot { root: 2, size: 2 })
        ));
        assert_eq!(oob.broadcast(0, b"not sent").unwrap(), b"root");
        match oob.barrier() {
            Err(OobError::PeerDied { rank: 0, detail }) => assert_eq!(detail, "exited"),
            other => panic!("{other:?}"),
        }
        match oob.barrier() {
            Err(OobError::Protocol(m)) => assert!(m.contains("#9 while waiting for #3"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
