//! The OOB connection threads: one accepts the locales' connections, one per
//! connection checks its hello (job token, rank, no second connection per
//! rank: `Claims`), welcomes it, and forwards its frames to the main thread
//! as [`Event`]s.

use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bootstrap::wire::{Msg, WireError};
use parking_lot::Mutex;

use crate::event::Event;

/// A connection must send its hello within this time.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// A locale that does not read its replies for this long is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Which connection holds each rank. The connection threads answer hellos
/// themselves (the main thread may be busy starting a thousand locales, and a
/// locale only waits so long for its welcome), so they also refuse a second
/// connection for a rank here.
struct Claims {
    job_id: u64,
    by_rank: Mutex<Vec<Option<u64>>>,
}

impl Claims {
    fn claim(&self, rank: usize, conn: u64) -> bool {
        let mut c = self.by_rank.lock();
        if c[rank].is_some() {
            return false;
        }
        c[rank] = Some(conn);
        true
    }

    fn release(&self, rank: usize, conn: u64) {
        let mut c = self.by_rank.lock();
        if c[rank] == Some(conn) {
            c[rank] = None;
        }
    }
}

pub fn accept_loop(listener: TcpListener, job_id: u64, n: usize, tx: Sender<Event>) {
    let claims = Arc::new(Claims {
        job_id,
        by_rank: Mutex::new(vec![None; n]),
    });
    let mut next_conn = 0u64;
    for stream in listener.incoming() {
        match stream {
            Ok(s) => {
                next_conn += 1;
                let conn = next_conn;
                let tx = tx.clone();
                let claims = Arc::clone(&claims);
                let r = std::thread::Builder::new()
                    .name(format!("pgasrun-conn-{conn}"))
                    .stack_size(128 * 1024)
                    .spawn(move || serve_conn(conn, s, &claims, &tx));
                if let Err(e) = r {
                    tracing::warn!(error = %e, "cannot start a connection thread; connection dropped");
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

fn reject(s: &mut TcpStream, reason: String) {
    tracing::warn!(peer = ?s.peer_addr().ok(), "OOB connection refused: {reason}");
    let _ = Msg::Reject { reason }.write_to(s);
    let _ = s.shutdown(Shutdown::Both);
}

/// Handshake, then forward the connection's frames to the main thread.
fn serve_conn(conn: u64, mut s: TcpStream, claims: &Claims, tx: &Sender<Event>) {
    let n = claims.by_rank.lock().len();
    let _ = s.set_nodelay(true);
    let _ = s.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
    let (rank, pid) = match Msg::read_from(&mut s) {
        Ok(Msg::Hello {
            job_id: j,
            rank,
            pid,
        }) => {
            if j != claims.job_id {
                return reject(
                    &mut s,
                    "wrong job id (a locale of another pgasrun job?)".into(),
                );
            }
            if rank as usize >= n {
                return reject(
                    &mut s,
                    format!("rank {rank} out of range: the job has {n} locales"),
                );
            }
            (rank as usize, pid)
        }
        Ok(other) => return reject(&mut s, format!("expected hello, got '{}'", other.name())),
        Err(e) => return reject(&mut s, format!("bad hello: {e}")),
    };
    if !claims.claim(rank, conn) {
        return reject(&mut s, format!("locale {rank} is already connected"));
    }
    let writer = s.try_clone().and_then(|mut w| {
        w.set_write_timeout(Some(WRITE_TIMEOUT))?;
        Msg::Welcome { size: n as u32 }.write_to(&mut w)?;
        Ok(w)
    });
    let writer = match writer {
        Ok(w) => w,
        Err(e) => {
            claims.release(rank, conn);
            tracing::debug!(rank, error = %e, "cannot answer hello");
            let _ = s.shutdown(Shutdown::Both);
            return;
        }
    };
    let _ = s.set_read_timeout(None);
    if tx
        .send(Event::Connected {
            conn,
            rank,
            pid,
            stream: writer,
        })
        .is_err()
    {
        return;
    }
    let error = loop {
        match Msg::read_from(&mut s) {
            Ok(
                msg @ (Msg::Collective { .. }
                | Msg::Abort { .. }
                | Msg::GlobalExit { .. }
                | Msg::Guard
                | Msg::Finalized
                | Msg::Exiting { .. }),
            ) => {
                let mut at = Instant::now();
                if let Msg::Exiting { sent_ns, .. } = msg {
                    at = sent_at(at, bootstrap::wire::monotonic_ns(), sent_ns);
                }
                if tx
                    .send(Event::Frame {
                        conn,
                        rank,
                        msg,
                        at,
                    })
                    .is_err()
                {
                    return;
                }
            }
            Ok(other) => break Some(format!("unexpected '{}' message", other.name())),
            Err(WireError::Malformed(m)) => break Some(m),
            Err(WireError::Closed) => break None,
            Err(WireError::Io(e)) => {
                tracing::debug!(rank, error = %e, "OOB read failed");
                break None;
            }
        }
    };
    // Closed goes first, so the main thread sees it before a new
    // connection for the same rank.
    let _ = tx.send(Event::Closed {
        conn,
        rank,
        at: Instant::now(),
        error,
    });
    claims.release(rank, conn);
}

/// When a frame stamped `sent_ns` ([`bootstrap::wire::monotonic_ns`]) was
/// sent, given that it was read at `read` when the clock said `now_ns`: a
/// locale began to exit when its exit handler ran, not when this reader
/// thread got to read it (see `Msg::Exiting`). A stamp from the future (not
/// on this host's clock) is taken as sent when read.
fn sent_at(read: Instant, now_ns: u64, sent_ns: u64) -> Instant {
    let late = Duration::from_nanos(now_ns.saturating_sub(sent_ns));
    read.checked_sub(late).unwrap_or(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two exits read in the wrong order (the first sender's reader thread
    /// was descheduled) are ordered by when they were sent.
    #[test]
    fn exits_are_ordered_by_when_they_were_sent() {
        let t0 = Instant::now() + Duration::from_secs(1);
        // Locale 1 exits at 1_000 ns, read 3 ms late; locale 0 exits at
        // 2_000_000 ns (after seeing locale 1 gone), read at once.
        let one = sent_at(t0 + Duration::from_millis(3), 3_001_000, 1_000);
        let zero = sent_at(t0 + Duration::from_millis(2), 2_000_000, 2_000_000);
        assert!(one < zero, "{one:?} !< {zero:?}");
        assert_eq!(one, t0);
        // A stamp ahead of our clock: taken as sent when read.
        assert_eq!(sent_at(t0, 5, 10), t0);
    }
}
