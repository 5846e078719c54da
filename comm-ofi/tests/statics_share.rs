//! `statics::share`: the executable's static data moved onto a memfd keeps
//! its values, a second mapping of the memfd (what a co-located peer maps)
//! sees our stores and we see its, and a `fork()`ed child's stores stay
//! its own. A test binary of its own: the move must not race with other
//! threads storing to the static data (the unit tests run in parallel
//! threads), and here the only test is the one thread that does.

use comm_ofi::statics::{executable_data, share};
use std::sync::atomic::{AtomicU64, Ordering};

static DATA: [AtomicU64; 3] = [AtomicU64::new(1), AtomicU64::new(2), AtomicU64::new(3)];
static BSS: [AtomicU64; 2048] = [const { AtomicU64::new(0) }; 2048];

#[test]
fn shared_statics_keep_their_values_and_a_second_mapping_sees_stores() {
    DATA[1].store(0xfeed, Ordering::SeqCst);
    BSS[1500].store(0xbee, Ordering::SeqCst);
    let seg = executable_data().expect("a test binary has writable statics");
    let fd = share(seg).expect("the static data moves onto a memfd");
    assert_eq!(share(seg), Ok(fd), "idempotent");
    assert_eq!(
        DATA[1].load(Ordering::SeqCst),
        0xfeed,
        "a value stored before"
    );
    assert_eq!(DATA[2].load(Ordering::SeqCst), 3, "initialized data kept");
    assert_eq!(BSS[1500].load(Ordering::SeqCst), 0xbee, ".bss kept");
    assert_eq!(BSS[7].load(Ordering::SeqCst), 0, "zero pages stay zero");

    // A peer's view: the memfd mapped a second time.
    // SAFETY: a new shared mapping of the memfd; checked, unmapped below.
    let view = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            seg.size as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    assert_ne!(view, libc::MAP_FAILED);
    let off = BSS[3].as_ptr() as u64 - seg.base;
    // SAFETY: `off` lies inside the view (BSS is in the segment); an aligned
    // u64 accessed only atomically.
    let peer = unsafe { AtomicU64::from_ptr((view as u64 + off) as *mut u64) };
    BSS[3].store(77, Ordering::SeqCst);
    assert_eq!(peer.load(Ordering::SeqCst), 77, "the peer sees our store");
    peer.store(78, Ordering::SeqCst);
    assert_eq!(BSS[3].load(Ordering::SeqCst), 78, "we see the peer's store");

    // A forked child gets private static data: its store stays its own.
    // SAFETY: the child only stores to an atomic and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        BSS[3].store(99, Ordering::SeqCst);
        let own = BSS[3].load(Ordering::SeqCst) == 99;
        // SAFETY: leaves the child without running the harness.
        unsafe { libc::_exit(if own { 0 } else { 3 }) };
    }
    assert!(pid > 0, "fork");
    let mut status = 0;
    // SAFETY: waits for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status:#x}"
    );
    assert_eq!(
        BSS[3].load(Ordering::SeqCst),
        78,
        "the child's store did not reach the parent"
    );
    assert_eq!(peer.load(Ordering::SeqCst), 78);
    // SAFETY: the view mapped above.
    unsafe { libc::munmap(view, seg.size as usize) };
}
