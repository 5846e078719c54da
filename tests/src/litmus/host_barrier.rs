//! The lockstep barrier of the litmus harness: a counter barrier on a page
//! of shared memory (`/dev/shm`) when every locale of the job runs on this
//! machine, the launcher's barrier otherwise.
//!
//! Exists because the harness passes a barrier every iteration and the
//! launcher's costs a round trip through `pgasrun` and five thread wake-ups
//! (the hub's and each locale's reader thread): on 2 loaded cores 0.1-2 ms,
//! as much as the program the iteration runs. Here an arriving locale adds
//! one to a counter, the last one bumps the generation, and the others spin
//! a little, then sleep on the generation word (`futex(2)`, not private: the
//! page is shared between processes).
//!
//! Like the launcher's barrier it orders nothing in the network: it is a
//! CPU synchronisation between the harness's own threads, as the launcher
//! barrier's socket round trip was. Operations the program left in flight
//! stay in flight; visibility in the tested program still comes only from
//! the layer's own boundaries.
//!
//! Whether the page is shared is checked, not assumed: each locale maps the
//! file locale 0 created and adds one to a join counter; only if every
//! locale then reads the job's size there is the page used (locales in other
//! mount namespaces or on other hosts fall back to the launcher). The file
//! is removed once every locale has mapped it (at set-up), so nothing
//! lingers after a job that dies later; one that dies during the set-up
//! can leave a `/dev/shm/pgas-litmus-*` page behind.

use comm_ofi::futex;
use comm_ofi::{Backoff, Comm};
use std::fs::{File, OpenOptions};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The shared words (one page is mapped; these are at its start).
#[repr(C)]
struct Words {
    /// Locales that arrived at the current generation's barrier.
    arrived: AtomicU32,
    /// Barriers completed; waiters sleep on it.
    generation: AtomicU32,
    /// Locales sleeping in `futex` on `generation` (the last arriver wakes
    /// only if there are any).
    sleepers: AtomicU32,
    /// Locales that mapped the page (the set-up check).
    joined: AtomicU32,
}

const PAGE: usize = 4096;

/// How long a locale waits at the barrier before it reports the job stuck
/// (a locale that died is reported by the launcher first).
const STUCK: Duration = Duration::from_secs(120);

/// The lockstep barrier (see the module docs).
pub struct HostBarrier {
    inner: Inner,
}

enum Inner {
    Shared { words: &'static Words, n: u32 },
    Launcher,
}

impl HostBarrier {
    /// Sets the barrier up (collective: every locale calls it at the same
    /// point). `LITMUS_BARRIER=launcher` keeps the launcher's barrier.
    pub fn new(comm: &Comm) -> Result<HostBarrier, String> {
        let oob = comm.oob();
        let n = comm.num_locales();
        let wanted = std::env::var("LITMUS_BARRIER").map_or(true, |v| v != "launcher");
        // Locale 0 creates the file and names it; the others open it.
        let name = if comm.here() == 0 && wanted {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let path = format!("/dev/shm/pgas-litmus-{}-{nanos}", std::process::id());
            match create(&path) {
                Ok(()) => path,
                Err(err) => {
                    tracing::info!("litmus barrier: {path}: {err}; the launcher's barrier");
                    String::new()
                }
            }
        } else {
            String::new()
        };
        let name = String::from_utf8(
            oob.broadcast(0, name.as_bytes())
                .map_err(|e| format!("litmus barrier: broadcast: {e}"))?,
        )
        .map_err(|_| "litmus barrier: garbled file name".to_string())?;
        let mapped = if name.is_empty() {
            None
        } else {
            map(&name).ok()
        };
        if let Some(words) = mapped {
            words.joined.fetch_add(1, Ordering::SeqCst);
        }
        oob.barrier()
            .map_err(|e| format!("litmus barrier: set-up barrier: {e}"))?;
        let mine = mapped.is_some_and(|w| w.joined.load(Ordering::SeqCst) as usize == n);
        let all = oob
            .allgather(&[u8::from(mine)])
            .map_err(|e| format!("litmus barrier: allgather: {e}"))?;
        if comm.here() == 0 && !name.is_empty() {
            // Every locale has mapped the page (or given up): the name is
            // no longer needed.
            let _ = std::fs::remove_file(&name);
        }
        let shared = all.iter().all(|v| v.first() == Some(&1));
        let inner = match mapped {
            Some(words) if shared => Inner::Shared { words, n: n as u32 },
            _ => Inner::Launcher,
        };
        Ok(HostBarrier { inner })
    }

    /// Whether the shared page is in use (else the launcher's barrier).
    pub fn is_shared(&self) -> bool {
        matches!(self.inner, Inner::Shared { .. })
    }

    /// Waits until every locale has called it (as often).
    pub fn wait(&self, comm: &Comm) -> Result<(), String> {
        match &self.inner {
            Inner::Shared { words, n } => wait_shared(words, *n),
            Inner::Launcher => comm
                .oob()
                .barrier()
                .map_err(|e| format!("oob barrier: {e}")),
        }
    }
}

/// The shared-page barrier among `n` parties.
fn wait_shared(words: &Words, n: u32) -> Result<(), String> {
    let generation = words.generation.load(Ordering::SeqCst);
    if words.arrived.fetch_add(1, Ordering::SeqCst) + 1 == n {
        // Last: reset the count for the next barrier before anyone can
        // leave this one, then release them.
        words.arrived.store(0, Ordering::SeqCst);
        words
            .generation
            .store(generation.wrapping_add(1), Ordering::SeqCst);
        if words.sleepers.load(Ordering::SeqCst) > 0 {
            futex::wake(&words.generation);
        }
        return Ok(());
    }
    // Spin a little, then sleep: no yields. Yielding waiters took the
    // cores from `sockets`' progress threads (a job 1.5x slower than
    // with the launcher's barrier; spinning only, then sleeping: 1.1x
    // faster on sockets, 1.2x on tcp, 1.5x on shm).
    let mut backoff = Backoff::new(64, 64);
    let t0 = Instant::now();
    while words.generation.load(Ordering::SeqCst) == generation {
        if backoff.step() {
            continue;
        }
        // Announce, then sleep while the generation is unchanged (the
        // kernel compares it: a bump before the sleep ends it at once).
        words.sleepers.fetch_add(1, Ordering::SeqCst);
        futex::wait(&words.generation, generation, Duration::from_millis(10));
        words.sleepers.fetch_sub(1, Ordering::SeqCst);
        if t0.elapsed() > STUCK {
            return Err(format!(
                "litmus barrier: waited {STUCK:?} for the other locales"
            ));
        }
    }
    Ok(())
}

/// Creates the barrier's file (new, one page of zeros).
fn create(path: &str) -> std::io::Result<()> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)?;
    f.set_len(PAGE as u64)
}

/// Maps the barrier's page for the rest of the process's life.
fn map(path: &str) -> std::io::Result<&'static Words> {
    use std::os::fd::AsRawFd;
    let f: File = OpenOptions::new().read(true).write(true).open(path)?;
    if f.metadata()?.len() < PAGE as u64 {
        return Err(std::io::Error::other("shorter than a page"));
    }
    // SAFETY: FFI. A shared read/write mapping of one page of an open file
    // that is at least a page long; the kernel picks the address. The
    // mapping outlives the file descriptor (closed when `f` drops).
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            PAGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the page is mapped for the process's life (never unmapped),
    // page-aligned (so aligned for `Words`), zero-filled or written only
    // through these atomics by the job's locales; `Words` is four atomics,
    // valid for any bit pattern.
    Ok(unsafe { &*(p as *const Words) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Threads stand in for the locales: after each barrier every party
    /// must see every other party's arrival at this round, never a round
    /// behind (a barrier that let one through early fails this).
    #[test]
    fn no_party_leaves_before_every_party_arrived() {
        const N: u32 = 4;
        const ROUNDS: u64 = 2_000;
        let words: &'static Words = Box::leak(Box::new(Words {
            arrived: AtomicU32::new(0),
            generation: AtomicU32::new(0),
            sleepers: AtomicU32::new(0),
            joined: AtomicU32::new(0),
        }));
        let done: &'static [AtomicU64; N as usize] =
            Box::leak(Box::new(std::array::from_fn(|_| AtomicU64::new(0))));
        let threads: Vec<_> = (0..N as usize)
            .map(|me| {
                std::thread::spawn(move || {
                    for round in 1..=ROUNDS {
                        done[me].store(round, Ordering::SeqCst);
                        wait_shared(words, N).unwrap();
                        for (other, d) in done.iter().enumerate() {
                            let seen = d.load(Ordering::SeqCst);
                            assert!(
                                seen >= round,
                                "party {me} left round {round} with party {other} at {seen}"
                            );
                        }
                        // A second barrier: nobody starts round + 1 (and
                        // overwrites `done`) before everyone checked.
                        wait_shared(words, N).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(words.generation.load(Ordering::SeqCst), 2 * ROUNDS as u32);
        assert_eq!(words.arrived.load(Ordering::SeqCst), 0);
    }
}
