//! The Unix process plumbing pgasrun needs and std does not offer: sending
//! SIGTERM, parent-death signals for the locales, catching SIGINT/SIGTERM in
//! the launcher, naming signals, and checking PROGRAM before starting N copies.
//! All `unsafe` of the launcher lives here.

use std::ffi::OsStr;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};

/// Name of a signal number, e.g. `SIGSEGV`.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGTTIN => "SIGTTIN",
        libc::SIGTTOU => "SIGTTOU",
        libc::SIGURG => "SIGURG",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGWINCH => "SIGWINCH",
        libc::SIGIO => "SIGIO",
        libc::SIGSYS => "SIGSYS",
        #[cfg(any(target_os = "linux", target_os = "android"))]
        libc::SIGPWR => "SIGPWR",
        #[cfg(any(target_os = "linux", target_os = "android"))]
        libc::SIGSTKFLT => "SIGSTKFLT",
        _ => return format!("SIG{sig}"),
    };
    name.to_owned()
}

/// "exited with status 3" / "killed by signal 11 (SIGSEGV)".
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        format!("exited with status {code}")
    } else if let Some(sig) = status.signal() {
        let core = if status.core_dumped() {
            ", core dumped"
        } else {
            ""
        };
        format!("killed by signal {sig} ({}{core})", signal_name(sig))
    } else {
        format!("ended with {status}")
    }
}

/// Exit status pgasrun reports for a failed locale: its own, or 128+signal.
pub fn status_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => 1,
    }
}

/// Sends `sig` to `pid`. Call only for children not yet reaped (so the pid
/// cannot have been reused).
pub fn send_signal(pid: u32, sig: i32) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::other("pid out of range"))?;
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    let r = unsafe { libc::kill(pid, sig) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Runs in the forked child before exec (see [`die_with_parent`]).
fn set_parent_death_signal(parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: prctl(PR_SET_PDEATHSIG) takes integers only; it is
    // async-signal-safe, as required between fork and exec.
    let r = unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: getppid(2) has no preconditions and is async-signal-safe.
    if unsafe { libc::getppid() } != parent {
        // The launcher died between fork and prctl: the signal will never
        // come, so do not start an orphan.
        // SAFETY: _exit(2) is async-signal-safe and ends the child at once.
        unsafe { libc::_exit(1) };
    }
    Ok(())
}

/// Makes the child get SIGKILL when the launcher dies, so no locale outlives
/// a crashed or killed pgasrun.
///
/// Linux delivers the parent-death signal when the *thread* that forked the
/// child exits, so spawn from the main thread, which lives for the whole job.
pub fn die_with_parent(cmd: &mut Command) {
    let parent = libc::pid_t::try_from(std::process::id()).expect("pid fits pid_t");
    // SAFETY: the hook runs between fork and exec in the child; it calls only
    // async-signal-safe functions (prctl, getppid, _exit), takes no locks and
    // does not allocate (io::Error::last_os_error does not allocate).
    unsafe {
        cmd.pre_exec(move || set_parent_death_signal(parent));
    }
}

/// Last SIGINT/SIGTERM/SIGHUP received by the launcher (0: none pending).
static PENDING_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // An atomic store is async-signal-safe.
    PENDING_SIGNAL.store(sig, Ordering::SeqCst);
}

/// Catches SIGINT, SIGTERM and SIGHUP so pgasrun can stop the locales and
/// report, instead of dying and leaving them to the parent-death signal.
pub fn catch_termination_signals() -> io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: sigaction is plain data; an all-zero value is a valid
        // starting point (empty flags, no handler) that we then fill in.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        // SAFETY: sa.sa_mask is a valid sigset_t owned by us.
        unsafe { libc::sigemptyset(&mut sa.sa_mask) };
        // SAFETY: `sa` is fully initialised and the handler only does an
        // atomic store, which is async-signal-safe; old action not needed.
        let r = unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Takes the pending termination signal, if any.
pub fn take_signal() -> Option<i32> {
    match PENDING_SIGNAL.swap(0, Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Finds PROGRAM as exec would (a path if it contains '/', else a PATH
/// search) and checks it is an executable file. `Err` is the user message.
pub fn resolve_program(prog: &OsStr) -> Result<PathBuf, String> {
    let shown = prog.to_string_lossy();
    if prog.is_empty() {
        return Err("empty PROGRAM name".into());
    }
    if prog.as_encoded_bytes().contains(&b'/') {
        return check_executable(Path::new(prog)).map(|()| PathBuf::from(prog));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut not_exec = None;
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let cand = dir.join(prog);
        match check_executable(&cand) {
            Ok(()) => return Ok(cand),
            Err(e) if cand.exists() && not_exec.is_none() => not_exec = Some(e),
            Err(_) => {}
        }
    }
    Err(not_exec.unwrap_or_else(|| format!("program '{shown}' not found in PATH")))
}

fn check_executable(p: &Path) -> Result<(), String> {
    let shown = p.display();
    match std::fs::metadata(p) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Err(format!("program '{shown}' not found"))
        }
        Err(e) => Err(format!("cannot access program '{shown}': {e}")),
        Ok(m) if m.is_dir() => Err(format!("program '{shown}' is a directory")),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => {
            Err(format!("program '{shown}' is not executable"))
        }
        Ok(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(77), "SIG77");
    }

    #[test]
    fn statuses_are_described() {
        let st = Command::new("sh").args(["-c", "exit 3"]).status().unwrap();
        assert_eq!(describe_status(st), "exited with status 3");
        assert_eq!(status_code(st), 3);
        let st = Command::new("sh")
            .args(["-c", "kill -TERM $$"])
            .status()
            .unwrap();
        assert_eq!(describe_status(st), "killed by signal 15 (SIGTERM)");
        assert_eq!(status_code(st), 143);
    }

    #[test]
    fn program_resolution() {
        assert!(resolve_program(OsStr::new("sh")).unwrap().is_absolute());
        let e = resolve_program(OsStr::new("no-such-prog-pgas")).unwrap_err();
        assert!(e.contains("'no-such-prog-pgas' not found in PATH"), "{e}");
        let e = resolve_program(OsStr::new("/nonexistent/x")).unwrap_err();
        assert!(e.contains("'/nonexistent/x' not found"), "{e}");
        let e = resolve_program(OsStr::new("/")).unwrap_err();
        assert!(e.contains("directory"), "{e}");
    }
}
