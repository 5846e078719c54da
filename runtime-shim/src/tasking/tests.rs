//! Unit tests of the pool: helping, hooks, panics, groups, pinning.

use super::join::TaskState;
use super::*;
use crate::error::{Error, Result};
use amhandler::Spawner;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

fn pool(workers: usize, hooks: Arc<dyn Hooks>) -> Arc<Pool> {
    pool_with(workers, hooks, true)
}

/// The test pools' configuration: `workers` unpinned, polling workers;
/// joins run queued tasks themselves.
fn config(workers: usize) -> PoolConfig {
    PoolConfig {
        workers,
        cores: None,
        block_wait: false,
        spin_waits: false,
        locale: 0,
        poll_window: Duration::from_micros(200),
        join_runs_queued: true,
    }
}

/// A pool whose joins run queued tasks themselves or not.
fn pool_with(workers: usize, hooks: Arc<dyn Hooks>, join_runs_queued: bool) -> Arc<Pool> {
    let cfg = PoolConfig {
        join_runs_queued,
        ..config(workers)
    };
    Pool::start(cfg, hooks).unwrap()
}

fn fib(p: &Arc<Pool>, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let q = p.clone();
    let a = p.spawn(move || fib(&q, n - 1)).unwrap();
    let b = fib(p, n - 2);
    a.join().unwrap() + b
}

/// A thread that is not a worker and sleeps in a join or a group wait
/// is unparked by the end of the task (counted), not left to its
/// sleep's timeout: each task here ends only once the waiter is
/// registered, so the wake must have happened.
#[test]
fn non_worker_waits_are_woken_by_the_end() {
    // The task waits for its joiner to sleep: the joiner must not run it.
    let p = pool_with(1, Arc::new(NoHooks), false);
    let state = Arc::new(std::sync::OnceLock::<Arc<TaskState<u32>>>::new());
    let s2 = state.clone();
    let h = p
        .spawn(move || {
            let s = loop {
                match s2.get() {
                    Some(s) => break s,
                    None => std::thread::yield_now(),
                }
            };
            while s.joiners.threads.lock().is_empty() {
                std::thread::yield_now();
            }
            7
        })
        .unwrap();
    let _ = state.set(h.state.clone());
    assert_eq!(h.join().unwrap(), 7);
    assert_eq!(p.stats().joins_woken, 1, "{:?}", p.stats());

    let g = Group::new();
    let inner = g.inner.clone();
    p.spawn_in(&g, move || {
        while inner.waiters.threads.lock().is_empty() {
            std::thread::yield_now();
        }
    })
    .unwrap();
    p.wait_group(&g).unwrap();
    assert_eq!(p.stats().joins_woken, 2, "{:?}", p.stats());
}

#[test]
fn task_tree_deeper_than_workers_completes_by_helping() {
    // Depth 18 with one worker: every join waits while its child is queued
    // (or, by default, runs it: the same tree below with joins that do).
    let p = pool_with(1, Arc::new(NoHooks), false);
    let q = p.clone();
    let h = p.spawn(move || fib(&q, 18)).unwrap();
    assert_eq!(h.join().unwrap(), 2584);
    assert!(p.stats().helped > 100, "{:?}", p.stats());
    assert_eq!(p.stats().inlined, 0, "{:?}", p.stats());
    p.shutdown();
    let p = pool(1, Arc::new(NoHooks));
    let q = p.clone();
    let h = p.spawn(move || fib(&q, 18)).unwrap();
    assert_eq!(h.join().unwrap(), 2584);
    assert!(p.stats().inlined > 100, "{:?}", p.stats());
    // A chain deeper than the worker count, each link waiting on the next.
    fn chain(p: &Arc<Pool>, d: u32) -> u32 {
        if d == 0 {
            return 0;
        }
        let q = p.clone();
        p.spawn(move || chain(&q, d - 1)).unwrap().join().unwrap() + 1
    }
    let q = p.clone();
    assert_eq!(
        p.spawn(move || chain(&q, 500)).unwrap().join().unwrap(),
        500
    );
    p.shutdown();
}

#[derive(Default)]
struct Counting {
    created: AtomicU64,
    ended: AtomicU64,
    started: AtomicU64,
    fail_end: AtomicBool,
    /// Progress polls of waits (`Hooks::idle_progress`).
    polls: AtomicU64,
}

impl Hooks for Counting {
    fn worker_start(&self, _: usize) -> Result<()> {
        self.started.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    fn task_create(&self) -> Result<()> {
        self.created.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    fn task_end(&self) -> Result<()> {
        self.ended.fetch_add(1, Ordering::SeqCst);
        if self.fail_end.load(Ordering::SeqCst) {
            return Err(Error::State("end hook failed".into()));
        }
        Ok(())
    }
    fn on_start(&self) -> Result<()> {
        Ok(())
    }
    fn after_job(&self) {}
    fn idle_progress(&self) {
        self.polls.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn hooks_run_once_per_task_and_before_the_child_and_the_joiner() {
    let h = Arc::new(Counting::default());
    let p = pool(2, h.clone());
    assert_eq!(h.started.load(Ordering::SeqCst), 2);
    let g = Group::new();
    for i in 0..200u64 {
        let hh = h.clone();
        p.spawn_in(&g, move || {
            // The creator's hook ran before this child could start.
            assert!(hh.created.load(Ordering::SeqCst) > i);
        })
        .unwrap();
    }
    p.wait_group(&g).unwrap();
    assert_eq!(h.created.load(Ordering::SeqCst), 200);
    // Every task_end ran before the group wait returned.
    assert_eq!(h.ended.load(Ordering::SeqCst), 200);
    h.fail_end.store(true, Ordering::SeqCst);
    let e = p.spawn(|| 1).unwrap().join().unwrap_err().to_string();
    assert!(e.contains("end hook failed"), "{e}");
    p.shutdown();
}

#[test]
fn panics_become_errors_and_groups_nest() {
    let p = pool(2, Arc::new(NoHooks));
    let e = p
        .spawn(|| panic!("boom {}", 7))
        .unwrap()
        .join()
        .unwrap_err();
    assert!(e.to_string().contains("boom 7"), "{e}");
    let count = Arc::new(AtomicU64::new(0));
    let g = Group::new();
    for _ in 0..10 {
        let (p2, g2, c2) = (p.clone(), g.clone(), count.clone());
        p.spawn_in(&g, move || {
            for _ in 0..10 {
                let c3 = c2.clone();
                p2.spawn_in(&g2, move || {
                    c3.fetch_add(1, Ordering::SeqCst);
                })
                .unwrap();
            }
        })
        .unwrap();
    }
    p.wait_group(&g).unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 100);
    assert_eq!(g.pending(), 0);
    p.shutdown();
    assert!(matches!(p.spawn(|| ()), Err(Error::Finalized)));
}

#[test]
fn am_jobs_run_and_non_workers_do_not_help() {
    let p = pool(1, Arc::new(NoHooks));
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    Spawner::spawn(&*p, Box::new(move || f.store(true, Ordering::SeqCst)));
    let t = Instant::now();
    while !flag.load(Ordering::SeqCst) {
        assert!(t.elapsed() < Duration::from_secs(10));
        std::thread::yield_now();
    }
    assert!(!Spawner::help(&*p), "the test thread is no worker");
    let t = Instant::now();
    while !Spawner::idle(&*p) {
        assert!(t.elapsed() < Duration::from_secs(10));
        std::thread::yield_now();
    }
    Spawner::shutdown(&*p);
}

#[test]
fn workers_are_pinned_when_asked() {
    let cores: Vec<usize> = core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect();
    let pinned = |workers, cores| PoolConfig {
        cores: Some(cores),
        ..config(workers)
    };
    let p = Pool::start(pinned(2, cores.clone()), Arc::new(NoHooks)).unwrap();
    assert_eq!(p.workers(), 2);
    p.shutdown();
    // A core that does not exist is an error naming it.
    let e = Pool::start(pinned(1, vec![100_000]), Arc::new(NoHooks))
        .unwrap_err()
        .to_string();
    assert!(e.contains("100000"), "{e}");
}

/// Keeps `p`'s only worker busy until the returned flag is set.
fn occupy(p: &Arc<Pool>) -> (Arc<AtomicBool>, TaskHandle<()>) {
    let release = Arc::new(AtomicBool::new(false));
    let r = release.clone();
    let busy = p
        .spawn(move || {
            while !r.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
        })
        .unwrap();
    // Taken by the worker once the queue is empty.
    while !p.global.is_empty() {
        std::thread::yield_now();
    }
    (release, busy)
}

/// Sets `flag` after 20 ms, from another thread.
fn set_later(flag: &Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let f = flag.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        f.store(true, Ordering::Release);
    })
}

/// A join of a task no worker has taken runs it on the joining thread,
/// with the task's hooks (its end boundary) as on a worker, nested in the
/// thread's running tasks; the queued entry left behind is skipped by the
/// worker that finds it. Not in a no-help scope, and not when switched off.
#[test]
fn join_runs_a_queued_task_on_the_joining_thread() {
    let hooks = Arc::new(Counting::default());
    let p = pool(1, hooks.clone());
    let me = std::thread::current().id();
    let (release, busy) = occupy(&p);
    let ends_before = hooks.ended.load(Ordering::SeqCst);
    let h = p
        .spawn(move || (std::thread::current().id() == me, Pool::in_task()))
        .unwrap();
    assert_eq!(
        h.join().unwrap(),
        (true, true),
        "ran on the joiner, as a task"
    );
    assert!(!Pool::in_task());
    assert_eq!(p.stats().inlined, 1, "{:?}", p.stats());
    assert_eq!(
        hooks.ended.load(Ordering::SeqCst),
        ends_before + 1,
        "its end hook ran"
    );
    release.store(true, Ordering::Release);
    busy.join().unwrap();

    // In a no-help scope (a lock's protocol): the worker runs it once free.
    let (release, busy) = occupy(&p);
    let h = p.spawn(move || std::thread::current().id() != me).unwrap();
    let freer = set_later(&release);
    let on_worker = {
        let _scope = NoHelp::enter();
        h.join().unwrap()
    };
    assert!(on_worker, "a no-help scope does not run the task");
    freer.join().unwrap();
    busy.join().unwrap();
    // join_on_worker never runs it here either.
    let (release, busy) = occupy(&p);
    let h = p.spawn(move || std::thread::current().id() != me).unwrap();
    let freer = set_later(&release);
    assert!(
        h.join_on_worker().unwrap(),
        "join_on_worker leaves it to the worker"
    );
    freer.join().unwrap();
    busy.join().unwrap();
    assert_eq!(p.stats().inlined, 1, "{:?}", p.stats());
    while !p.idle() {
        std::thread::yield_now();
    }
    p.shutdown();

    // Switched off (PGAS_JOIN_RUNS_QUEUED=0): the same.
    let q = pool_with(1, hooks, false);
    let (release, busy) = occupy(&q);
    let h = q.spawn(move || std::thread::current().id() != me).unwrap();
    let freer = set_later(&release);
    assert!(h.join().unwrap(), "switched off: the worker runs it");
    freer.join().unwrap();
    busy.join().unwrap();
    assert_eq!(q.stats().inlined, 0, "{:?}", q.stats());
    q.shutdown();
}

#[test]
fn a_wait_that_spins_in_place_of_yields_polls_every_sixteenth_check() {
    let h = Arc::new(Counting::default());
    // A pool whose locale owns a core: its main thread spins (then naps).
    let cfg = PoolConfig {
        spin_waits: true,
        ..config(1)
    };
    let spinning = Pool::start(cfg, h.clone()).unwrap();
    let yielding = pool(1, h.clone());
    // Polls of a wait whose condition holds at its n-th check (the first
    // is the wait's entry check, which never polls).
    let polls_for = |p: &Pool, n: u64| {
        h.polls.store(0, Ordering::SeqCst);
        let mut checks = 0u64;
        p.wait_until(|| {
            checks += 1;
            checks >= n
        });
        h.polls.load(Ordering::SeqCst)
    };
    assert_eq!(
        polls_for(&spinning, 1),
        0,
        "a wait that holds at once polls nothing"
    );
    // The entry check, then the spinning checks: the 16th spinning check
    // that fails is the first to poll, and so on within the spin budget.
    assert_eq!(
        polls_for(&spinning, 17),
        0,
        "15 failed spinning checks do not poll"
    );
    assert_eq!(
        polls_for(&spinning, 18),
        1,
        "the 16th failed spinning check polls"
    );
    assert_eq!(polls_for(&spinning, 50), 3);
    // Where the thread yields (the pool's waits neither block nor spin for
    // a budget), every check polls: the first 31 spin, the 32nd yields.
    assert_eq!(polls_for(&yielding, 3), 1);
    assert_eq!(polls_for(&yielding, 37), 35);
    // A condition that only progress can make true still ends, spinning.
    h.polls.store(0, Ordering::SeqCst);
    spinning.wait_until(|| h.polls.load(Ordering::SeqCst) >= 3);
    spinning.shutdown();
    yielding.shutdown();
}
