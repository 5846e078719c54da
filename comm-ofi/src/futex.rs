//! Futex waits and wakes on words of the registered heap: the one place the
//! raw `futex(2)` calls live.
//!
//! Exists because two protocols block a thread on a heap word that another
//! thread (possibly of another process, on the mapped path) changes: the
//! poller's doorbell (`mapped.rs`) and, on providers whose waits block
//! (`sockets`), a thread waiting for the done word of its on-statement
//! (`amhandler`'s done slots). The words live in memory shared between
//! processes (a memfd heap), so the calls are not `FUTEX_PRIVATE`. A wait
//! compares the word in the kernel, so a store before the wait makes it
//! return at once: a waker needs no flag protocol to avoid a lost wake-up,
//! only to store first and wake second.

use std::sync::atomic::{AtomicU32, AtomicU64};
use std::time::Duration;

/// Sleeps while `word` holds `expected`, at most `timeout` (spurious
/// returns are possible: callers re-check).
pub fn wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    wait_at(word.as_ptr(), expected, timeout)
}

/// Wakes every thread sleeping on `word` (in any process mapping it).
pub fn wake(word: &AtomicU32) {
    wake_at(word.as_ptr(), i32::MAX as u32)
}

/// Sleeps while the 64-bit `word` is zero, at most `timeout`. The kernel
/// compares the word's low half, which is where a nonzero value written
/// after the call started must set a bit: callers' words keep a flag there
/// (amhandler's done word has `DONE_SET` in bit 0).
pub fn wait_while_zero(word: &AtomicU64, timeout: Duration) {
    const _: () = assert!(
        cfg!(target_endian = "little"),
        "the low half of a u64 is its first u32"
    );
    wait_at(word.as_ptr().cast::<u32>(), 0, timeout)
}

/// Wakes every thread in [`wait_while_zero`] on `word`.
pub fn wake_u64(word: &AtomicU64) {
    wake_at(word.as_ptr().cast::<u32>(), i32::MAX as u32)
}

fn wait_at(word: *mut u32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT on a live, 4-aligned u32 (the callers' atomics
    // outlive the call; a u64 word is 8-aligned and its first half is a u32)
    // with a valid timeout; the kernel only reads the word. Spurious returns
    // and EAGAIN (the word changed) are fine: callers re-check.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word,
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
}

fn wake_at(word: *mut u32, n: u32) {
    // SAFETY: FUTEX_WAKE on a live, 4-aligned u32 (see wait_at); the kernel
    // does not touch the word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word,
            libc::FUTEX_WAKE,
            n,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::time::Instant;

    #[test]
    fn a_store_then_wake_ends_a_wait_while_zero() {
        let word: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
        let t = std::thread::spawn(move || {
            let t0 = Instant::now();
            while word.load(Ordering::Acquire) == 0 {
                wait_while_zero(word, Duration::from_secs(5));
            }
            t0.elapsed()
        });
        std::thread::sleep(Duration::from_millis(20));
        word.store(0x301, Ordering::Release);
        wake_u64(word);
        let slept = t.join().unwrap();
        assert!(
            slept < Duration::from_secs(4),
            "woken, not timed out: {slept:?}"
        );
    }

    #[test]
    fn a_wait_on_a_set_word_returns_at_once() {
        let word = AtomicU64::new(1);
        let t0 = Instant::now();
        wait_while_zero(&word, Duration::from_secs(5));
        assert!(t0.elapsed() < Duration::from_secs(4));
    }
}
