//! Where bodies that are not "fast" run: a small pool of executor threads fed
//! by a lock-free queue, behind the [`Spawner`] trait.
//!
//! Exists because such bodies may do blocking remote operations (nested
//! on-statements, GETs), which must never run on the thread that polls the
//! receive queue (that would stop the progress the remote operation needs),
//! nor hold up fast bodies and atomics. The trait is the seam where the
//! runtime shim's tasking layer plugs in later: it spawns jobs as tasks and
//! lets a task that waits for a 'done' run other work.
//!
//! Deadlock freedom of nested and recursive on-statements: a worker that waits
//! for a 'done' calls [`Spawner::help`], which runs other queued jobs on the
//! waiting thread, so recursion deeper than the number of workers completes.

use crossbeam_queue::SegQueue;
use parking_lot::Mutex;
use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

/// A unit of work (an AM body with its reply, an AM-mediated RMA, ...).
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// What the AM layer needs from a tasking layer.
pub trait Spawner: Send + Sync {
    /// Runs `job` soon, on some thread that may block.
    fn spawn(&self, job: Job);
    /// Called repeatedly by a thread that waits for a 'done'. May run one
    /// queued job on the calling thread if that thread is allowed to; returns
    /// whether it ran one.
    fn help(&self) -> bool;
    /// Whether no job is queued or running.
    fn idle(&self) -> bool;
    /// Runs what is queued, then stops the threads. Called once, by finalize.
    fn shutdown(&self);
}

thread_local! {
    /// Identity of the executor this thread works for (0 = none).
    static WORKER_OF: Cell<usize> = const { Cell::new(0) };
}

struct Shared {
    queue: SegQueue<Job>,
    /// Jobs queued or running.
    active: AtomicUsize,
    idle_threads: Mutex<Vec<Thread>>,
    stop: AtomicBool,
}

impl Shared {
    fn id(&self) -> usize {
        self as *const Shared as usize
    }

    fn run(&self, job: Job) {
        if let Err(p) = std::panic::catch_unwind(AssertUnwindSafe(job)) {
            let msg = panic_text(&*p);
            tracing::error!("AM executor job panicked: {msg}");
        }
        self.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The default [`Spawner`]: a fixed pool of threads.
pub struct Executor {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("active", &self.shared.active.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Stack of executor threads: nested bodies run on the waiting thread's stack.
const STACK: usize = 32 << 20;

impl Executor {
    /// Starts `n` worker threads named `pgas-am-exec-<locale>-<i>`.
    pub fn start(n: usize, locale: comm_ofi::Locale) -> crate::Result<Arc<Executor>> {
        let shared = Arc::new(Shared {
            queue: SegQueue::new(),
            active: AtomicUsize::new(0),
            idle_threads: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let mut threads = Vec::with_capacity(n);
        for i in 0..n {
            let s = shared.clone();
            let name = format!("pgas-am-exec-{locale}-{i}");
            let h = std::thread::Builder::new()
                .name(name.clone())
                .stack_size(STACK)
                .spawn(move || worker(s))
                .map_err(|e| crate::Error::Thread {
                    name,
                    error: e.to_string(),
                })?;
            threads.push(h);
        }
        Ok(Arc::new(Executor {
            shared,
            threads: Mutex::new(threads),
        }))
    }
}

fn worker(s: Arc<Shared>) {
    WORKER_OF.with(|w| w.set(s.id()));
    let me = std::thread::current();
    // Spin 64 rounds, yield to round 128, then announce and park.
    let mut backoff = comm_ofi::Backoff::new(64, 128);
    loop {
        if let Some(job) = s.queue.pop() {
            backoff.reset();
            s.run(job);
            continue;
        }
        if s.stop.load(Ordering::Acquire) {
            break;
        }
        if backoff.step() {
            continue;
        }
        // Announce, re-check, sleep (spawn wakes one announced thread).
        s.idle_threads.lock().push(me.clone());
        if s.queue.is_empty() && !s.stop.load(Ordering::Acquire) {
            std::thread::park_timeout(Duration::from_millis(20));
        }
        s.idle_threads.lock().retain(|t| t.id() != me.id());
        backoff.reset();
    }
}

impl Spawner for Executor {
    fn spawn(&self, job: Job) {
        let s = &self.shared;
        s.active.fetch_add(1, Ordering::AcqRel);
        s.queue.push(job);
        let t = s.idle_threads.lock().pop();
        if let Some(t) = t {
            t.unpark();
        }
    }

    fn help(&self) -> bool {
        let s = &self.shared;
        if WORKER_OF.with(|w| w.get()) != s.id() {
            return false;
        }
        match s.queue.pop() {
            Some(job) => {
                s.run(job);
                true
            }
            None => false,
        }
    }

    fn idle(&self) -> bool {
        self.shared.active.load(Ordering::Acquire) == 0
    }

    fn shutdown(&self) {
        self.shared.stop.store(true, Ordering::Release);
        for t in self.shared.idle_threads.lock().drain(..) {
            t.unpark();
        }
        let threads: Vec<_> = self.threads.lock().drain(..).collect();
        for h in threads {
            if h.thread().id() == std::thread::current().id() {
                continue;
            }
            let _ = h.join();
        }
    }
}

/// The text of a panic payload (shared with the runtime shim's tasks).
pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn runs_every_job_once_and_drains_on_shutdown() {
        let ex = Executor::start(2, 0).unwrap();
        let count = Arc::new(AtomicU64::new(0));
        for _ in 0..10_000 {
            let c = count.clone();
            ex.spawn(Box::new(move || {
                c.fetch_add(1, Ordering::Relaxed);
            }));
        }
        while !ex.idle() {
            std::thread::yield_now();
        }
        assert_eq!(count.load(Ordering::Relaxed), 10_000);
        ex.shutdown();
    }

    #[test]
    fn a_waiting_worker_runs_queued_jobs() {
        // One worker; a job that waits for a flag set by a later job must
        // complete because the waiter helps.
        let ex = Executor::start(1, 0).unwrap();
        let flag = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let (f1, d1, ex1) = (flag.clone(), done.clone(), ex.clone());
        ex.spawn(Box::new(move || {
            let f2 = f1.clone();
            ex1.spawn(Box::new(move || f2.store(true, Ordering::Release)));
            while !f1.load(Ordering::Acquire) {
                if !ex1.help() {
                    std::thread::yield_now();
                }
            }
            d1.store(true, Ordering::Release);
        }));
        let t = std::time::Instant::now();
        while !done.load(Ordering::Acquire) {
            assert!(t.elapsed() < Duration::from_secs(10), "waiter did not help");
            std::thread::yield_now();
        }
        assert!(!ex.help(), "a non-worker thread must not run jobs");
        ex.shutdown();
    }

    #[test]
    fn panicking_job_does_not_kill_the_pool() {
        let ex = Executor::start(1, 0).unwrap();
        ex.spawn(Box::new(|| panic!("boom")));
        let ok = Arc::new(AtomicBool::new(false));
        let o = ok.clone();
        ex.spawn(Box::new(move || o.store(true, Ordering::Release)));
        while !ex.idle() {
            std::thread::yield_now();
        }
        assert!(ok.load(Ordering::Acquire));
        ex.shutdown();
    }
}
