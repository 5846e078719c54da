//! The watchdog of the Rust API front end: no iteration started for
//! 2 x `STUCK` (a wait with no timeout of its own that never returns), or
//! finalize and the exit after it longer than `STUCK` / 3, ends the locale
//! with status 3, naming the program, iteration and phase it was in.

use super::words::{programs, STUCK};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Milliseconds since start when this locale last began an iteration (the
/// watchdog's view: a wait with no timeout of its own, `wait_until_local`,
/// that never returns ends the job with a message instead of a hang).
pub(super) static PROGRESS_MS: AtomicU64 = AtomicU64::new(0);
/// The program and iteration this locale is in (program << 32 | iteration),
/// and how far it got (`PHASES`): what the watchdog reports on a hang.
pub(super) static CURRENT: AtomicU64 = AtomicU64::new(0);
pub(super) static PHASE: AtomicU64 = AtomicU64::new(0);
pub(super) const PHASES: [&str; 9] = [
    "reset",
    "first oob barrier",
    "threads",
    "non-blocking bodies",
    "second oob barrier",
    "final read",
    "allgather",
    "finalize",
    "exit",
];

pub(super) fn uptime_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// Ends the job with a message if no iteration started for 2 x `STUCK`.
pub(super) fn start_watchdog() {
    uptime_ms();
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_secs(1));
        let last = PROGRESS_MS.load(Ordering::Relaxed);
        let phase_no = PHASE.load(Ordering::Relaxed) as usize;
        // Finalize and the exit after it get STUCK / 3: they do no work of
        // the programs.
        let limit = if phase_no >= 7 { STUCK / 3 } else { 2 * STUCK };
        if last > 0 && uptime_ms().saturating_sub(last) > limit.as_millis() as u64 {
            let cur = CURRENT.load(Ordering::Relaxed);
            let pi = (cur >> 32) as usize;
            let phase = PHASES.get(phase_no).unwrap_or(&"?");
            let what = if phase_no >= 7 {
                format!("{phase} took more than {} s", limit.as_secs())
            } else {
                format!(
                    "no iteration started for {} s: an iteration hangs (program {pi} ({}), \
                     iteration {}, in {phase})",
                    limit.as_secs(),
                    programs()
                        .get(pi)
                        .map(|p| p.to_string())
                        .unwrap_or_default(),
                    cur & 0xffff_ffff,
                )
            };
            eprintln!("litmus_gen: {what}");
            // LITMUS_GEN_HANG_STACKS=DIR: every thread's stack first (gdb),
            // into DIR/litmus_gen-stacks-PID.txt.
            if let Ok(dir) = std::env::var("LITMUS_GEN_HANG_STACKS") {
                let path = format!("{dir}/litmus_gen-stacks-{}.txt", std::process::id());
                if let Ok(f) = std::fs::File::create(&path) {
                    let _ = std::process::Command::new("gdb")
                        .args(["-p", &std::process::id().to_string(), "-batch", "-nx"])
                        .args(["-ex", "thread apply all bt 30"])
                        .stdout(f)
                        .stderr(std::process::Stdio::null())
                        .status();
                    eprintln!("litmus_gen: stacks in {path}");
                }
            }
            // SAFETY: _exit(2) ends the process at once; exit handlers may
            // be what hangs (a second exit() from this thread would wait).
            unsafe { libc::_exit(3) }
        }
    });
}
