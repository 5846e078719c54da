//! Loom over the real doorbell protocol of the mapped path
//! (`comm_ofi::doorbell`, the functions `Mapped` calls), with loom's atomic
//! for the word and a condition variable for the futex (checked and slept
//! on under one lock, as the kernel does): a message is never slept
//! through, by a poller going to sleep or by the hand-over between an idle
//! worker covering for the poller and the poller; and a poller that skips
//! its last poll after announcing sleep is caught (the negative control).
//!
//! Messages are relaxed stores and loads (the provider's writes into the
//! receive queue are plain memory); the protocol's fences must order them.
//! The model's futex has no timeout: where production would sleep out its
//! timeout (a late message), the model deadlocks, and loom reports it.
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p comm-ofi --release --test loom_doorbell`
#![cfg(loom)]

use comm_ofi::doorbell::{self, Futex, AWAKE};
use loom::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;
use std::time::Duration;

/// Runs a model with a preemption bound of 4 (`LOOM_MAX_PREEMPTIONS`
/// overrides it): the cover hand-over has three threads and a condition
/// variable, and is not exhausted unbounded in CI time.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(4);
    }
    b.check(f);
}

/// `futex(2)` in the model: the value check and going to sleep are atomic
/// with respect to a wake (both under one lock).
#[derive(Default)]
struct ModelFutex {
    lock: Mutex<()>,
    cv: Condvar,
}

impl Futex<AtomicU32> for ModelFutex {
    fn wait(&self, word: &AtomicU32, expected: u32, _timeout: Duration) {
        let g = self.lock.lock().unwrap();
        if word.load(Ordering::SeqCst) == expected {
            let _g = self.cv.wait(g).unwrap();
        }
    }
    fn wake(&self, _word: &AtomicU32) {
        let _g = self.lock.lock().unwrap();
        self.cv.notify_all();
    }
}

struct Locale {
    bell: AtomicU32,
    futex: ModelFutex,
    /// A request in the receive queue.
    msg: AtomicBool,
    /// Someone (poller or covering worker) took it.
    handled: AtomicBool,
}

impl Locale {
    fn new() -> Arc<Locale> {
        Arc::new(Locale {
            bell: AtomicU32::new(AWAKE),
            futex: ModelFutex::default(),
            msg: AtomicBool::new(false),
            handled: AtomicBool::new(false),
        })
    }
    /// A poll of the receive queue: takes the request if there is one.
    fn poll(&self) -> bool {
        if self.msg.load(Ordering::Relaxed) {
            self.handled.store(true, Ordering::Release);
            return true;
        }
        self.handled.load(Ordering::Acquire)
    }
    /// A sender: the request, then the ring (`Comm::send`).
    fn send(&self) {
        self.msg.store(true, Ordering::Relaxed);
        doorbell::ring(&self.bell, &self.futex);
    }
    /// The idle AM poller (`handler.rs`'s idle loop on the mapped path):
    /// poll; covered: sleep; else announce, poll once more, sleep. Returns
    /// once the request was taken (by it or a worker).
    fn poller(&self, last_poll: bool) {
        loop {
            if self.poll() {
                return;
            }
            if doorbell::covered(&self.bell) {
                doorbell::sleep(&self.bell, &self.futex, Duration::MAX);
                continue;
            }
            doorbell::prepare_sleep(&self.bell);
            if last_poll && self.poll() {
                doorbell::cancel_sleep(&self.bell);
                return;
            }
            doorbell::sleep(&self.bell, &self.futex, Duration::MAX);
        }
    }
}

#[test]
fn a_request_is_never_slept_through() {
    model(|| {
        let l = Locale::new();
        let p = {
            let l = l.clone();
            thread::spawn(move || l.poller(true))
        };
        l.send();
        p.join().unwrap();
        assert!(l.handled.load(Ordering::Acquire));
    });
}

#[test]
fn the_cover_hand_over_loses_no_request() {
    model(|| {
        let l = Locale::new();
        let p = {
            let l = l.clone();
            thread::spawn(move || l.poller(true))
        };
        // An idle worker covers for the poller, polls, stops (it got a
        // task), uncovers and polls once more.
        let w = {
            let l = l.clone();
            thread::spawn(move || {
                doorbell::cover(&l.bell);
                let mut took = l.poll();
                doorbell::uncover(&l.bell);
                took |= l.poll();
                if took {
                    // The poller may sleep on: the request was taken. Wake
                    // it so that the model ends (not part of the protocol).
                    doorbell::ring_always(&l.bell, &l.futex);
                }
            })
        };
        l.send();
        w.join().unwrap();
        p.join().unwrap();
        assert!(l.handled.load(Ordering::Acquire));
    });
}

/// One idle round of a poller that, if it goes to sleep, stops there (the
/// model's threads must end for a negative control to be caught cleanly):
/// returns whether it went to sleep.
fn one_round(l: &Locale, last_poll: bool) -> bool {
    if l.poll() {
        return false;
    }
    doorbell::prepare_sleep(&l.bell);
    if last_poll && l.poll() {
        doorbell::cancel_sleep(&l.bell);
        return false;
    }
    true
}

/// After the sender and one idle round: a request left in the queue while
/// the poller sleeps with nobody having woken it is a lost wake-up.
fn lost_wake_up(last_poll: bool) {
    let l = Locale::new();
    let p = {
        let l = l.clone();
        thread::spawn(move || one_round(&l, last_poll))
    };
    l.send();
    let slept = p.join().unwrap();
    let lost = slept
        && !l.handled.load(Ordering::Acquire)
        && l.bell.load(Ordering::SeqCst) == doorbell::SLEEPING;
    assert!(!lost, "the request was slept through");
}

#[test]
fn a_poller_with_its_last_poll_is_always_woken_or_finds_the_request() {
    model(|| lost_wake_up(true));
}

#[test]
fn a_poller_without_its_last_poll_is_caught() {
    // Negative control: announcing sleep and sleeping without polling once
    // more lets a request whose ring saw AWAKE (just before the
    // announcement) wait in the queue while the poller sleeps.
    let found = std::panic::catch_unwind(|| model(|| lost_wake_up(false)));
    assert!(
        found.is_err(),
        "loom did not find the request slept through"
    );
}

/// A covering worker (the poller asleep under its cover) that stops
/// covering, with or without its last poll; then: a request left in the
/// queue with the bell at SLEEPING (nobody woke the poller) is lost.
fn cover_ends(last_poll: bool) {
    let l = Locale::new();
    let w = {
        let l = l.clone();
        thread::spawn(move || {
            doorbell::cover(&l.bell);
            l.poll();
            doorbell::uncover(&l.bell);
            if last_poll {
                l.poll();
            }
        })
    };
    l.send();
    w.join().unwrap();
    let lost =
        !l.handled.load(Ordering::Acquire) && l.bell.load(Ordering::SeqCst) == doorbell::SLEEPING;
    assert!(!lost, "the request was left to a sleeping poller");
}

#[test]
fn an_ending_cover_polls_once_more_or_the_sender_rings() {
    model(|| cover_ends(true));
}

#[test]
fn an_ending_cover_without_its_last_poll_is_caught() {
    let found = std::panic::catch_unwind(|| model(|| cover_ends(false)));
    assert!(found.is_err(), "loom did not find the request left behind");
}
