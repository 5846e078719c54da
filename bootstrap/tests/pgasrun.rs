//! End-to-end tests of pgasrun and the launcher OOB backend: real processes
//! on localhost, driven by the `pgas-oob-probe` helper binary. Every run is
//! bounded (HANG_GUARD) so a hang fails the test instead of stalling CI; the
//! "< 10 s" assertions check that failures are handled promptly.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const PGASRUN: &str = env!("CARGO_BIN_EXE_pgasrun");
const PROBE: &str = env!("CARGO_BIN_EXE_pgas-oob-probe");
/// Any run longer than this is killed and fails its test.
const HANG_GUARD: Duration = Duration::from_secs(60);
/// Failures must bring the job down well within this.
const PROMPT: Duration = Duration::from_secs(10);

struct Out {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl Out {
    fn code(&self) -> Option<i32> {
        self.status.code()
    }
    fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status {:?} after {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.status, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// A command with none of the launcher/PMIx variables of the environment the
/// tests themselves run in.
fn clean(program: &str) -> Command {
    let mut cmd = Command::new(program);
    for v in [
        "PGAS_OOB_ADDR",
        "PGAS_RANK",
        "PGAS_SIZE",
        "PGAS_JOB_ID",
        "PMIX_RANK",
        "PMIX_NAMESPACE",
        "PMI_RANK",
        "RUST_LOG",
        "PGAS_JOB_TIMEOUT",
    ] {
        cmd.env_remove(v);
    }
    cmd
}

fn run(mut cmd: Command) -> Out {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    let reader = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let so = reader(Box::new(child.stdout.take().unwrap()));
    let se = reader(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > HANG_GUARD {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hung for {HANG_GUARD:?}: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Out {
        status,
        elapsed: start.elapsed(),
        stdout: so.join().unwrap(),
        stderr: se.join().unwrap(),
    }
}

fn pgasrun(args: &[&str]) -> Out {
    let mut cmd = clean(PGASRUN);
    cmd.args(args);
    run(cmd)
}

#[track_caller]
fn assert_contains(out: &Out, what: &str) {
    assert!(out.stderr.contains(what), "stderr lacks {what:?}\n{out:?}");
}

/// Asserts the job's exit status and that its stderr holds every one of
/// `needles`.
#[track_caller]
fn assert_exit(out: &Out, code: i32, needles: &[&str]) {
    assert_eq!(out.code(), Some(code), "{out:?}");
    for n in needles {
        assert_contains(out, n);
    }
}

/// [`assert_exit`], and the job ended within [`PROMPT`].
#[track_caller]
fn assert_ended(out: &Out, code: i32, needles: &[&str]) {
    assert_exit(out, code, needles);
    assert!(out.elapsed < PROMPT, "{out:?}");
}

#[test]
fn collectives_are_correct_for_1_2_4_locales() {
    for n in [1, 2, 4] {
        let ns = n.to_string();
        let out = pgasrun(&["-n", &ns, "--timeout", "60", PROBE, "check"]);
        assert_eq!(out.code(), Some(0), "{out:?}");
        assert_eq!(out.stderr, "", "{out:?}");
        let mut lines = out.lines();
        lines.sort();
        let want: Vec<String> = (0..n).map(|r| format!("rank {r} of {n}: ok")).collect();
        assert_eq!(lines, want, "{out:?}");
    }
}

#[test]
fn collectives_from_several_threads_of_a_locale() {
    let out = pgasrun(&["-n", "3", "--timeout", "60", PROBE, "threads"]);
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.lines().len(), 3, "{out:?}");
    assert!(
        out.lines().iter().all(|l| l.ends_with("threads ok")),
        "{out:?}"
    );
}

/// Parses "rank R line I xxx..." (100 x) and returns (R, I).
fn parse_probe_line(l: &str) -> Option<(usize, usize)> {
    let rest = l.strip_prefix("rank ")?;
    let (r, rest) = rest.split_once(" line ")?;
    let (i, filler) = rest.split_once(' ')?;
    (filler == "x".repeat(100)).then_some(())?;
    Some((r.parse().ok()?, i.parse().ok()?))
}

#[test]
fn prefix_tags_every_line_with_its_locale() {
    const N: usize = 3;
    const COUNT: usize = 300;
    let out = pgasrun(&["-n", "3", "-p", "--timeout", "60", PROBE, "lines", "300"]);
    assert_eq!(out.code(), Some(0), "{out:?}");
    let mut next = [0usize; N];
    for l in out.lines() {
        let (tag, body) = l.split_at(4);
        let tag_rank: usize = tag
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix("] "))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("line without prefix: {l:?}"));
        let (r, i) = parse_probe_line(body).unwrap_or_else(|| panic!("mangled line {l:?}"));
        assert_eq!(r, tag_rank, "prefix names the wrong locale: {l:?}");
        assert_eq!(i, next[r], "lines of locale {r} out of order or lost");
        next[r] += 1;
    }
    assert_eq!(next, [COUNT; N], "{out:?}");
    let mut err: Vec<&str> = out.stderr.lines().collect();
    err.sort();
    assert_eq!(
        err,
        [
            "[0] rank 0 stderr",
            "[1] rank 1 stderr",
            "[2] rank 2 stderr"
        ]
    );
}

#[test]
fn without_prefix_lines_pass_through_whole() {
    let out = pgasrun(&["-n", "3", "--timeout", "60", PROBE, "lines", "300"]);
    assert_eq!(out.code(), Some(0), "{out:?}");
    let mut count = [0usize; 3];
    for l in out.lines() {
        let (r, _) = parse_probe_line(l).unwrap_or_else(|| panic!("mangled line {l:?}"));
        count[r] += 1;
    }
    assert_eq!(count, [300; 3]);
    assert!(
        out.stderr.lines().all(|l| l.starts_with("rank ")),
        "{out:?}"
    );
}

#[test]
fn failing_locale_stops_the_others_and_is_named() {
    // Locales 0 and 1 sleep forever; only pgasrun can end them.
    let out = pgasrun(&["-n", "3", "--timeout", "60", PROBE, "exit", "3", "2"]);
    // Every survivor says why it stops.
    let needles = [
        "pgasrun: locale 2 (pid ",
        ") exited with status 3",
        "pgas locale 0: job stopped by pgasrun: locale 2",
        "pgas locale 1: job stopped by pgasrun: locale 2",
    ];
    assert_ended(&out, 3, &needles);
}

#[test]
fn signal_death_is_reported_with_its_name() {
    for (sig, num, name) in [("SEGV", 11, "SIGSEGV"), ("KILL", 9, "SIGKILL")] {
        let out = pgasrun(&["-n", "3", "--timeout", "60", PROBE, "signal", sig, "1"]);
        let signal = format!(") killed by signal {num} ({name}");
        assert_ended(&out, 128 + num, &["pgasrun: locale 1 (pid ", &signal]);
    }
}

#[test]
fn abort_message_is_shown_and_the_job_fails() {
    let out = pgasrun(&[
        "-n",
        "3",
        "--timeout",
        "60",
        PROBE,
        "abort",
        "disk on fire",
        "1",
    ]);
    let needles = [
        "pgasrun: locale 1 (pid ",
        ") aborted: disk on fire",
        "pgas locale 2: job stopped by pgasrun",
    ];
    assert_ended(&out, 1, &needles);
    // The launcher answered the abort (no fallback message from the locale).
    assert!(!out.stderr.contains("did not answer"), "{out:?}");
}

#[test]
fn locale_leaving_before_a_collective_fails_the_job_instead_of_hanging() {
    let out = pgasrun(&["-n", "3", "--timeout", "60", PROBE, "leave", "1"]);
    let left = ") exited with status 0 without joining collective #0 (barrier)";
    assert_ended(&out, 1, &[left]);
    assert!(!out.stdout.contains("barrier returned"), "{out:?}");
}

#[test]
fn mismatched_collectives_are_named() {
    let out = pgasrun(&["-n", "2", "--timeout", "60", PROBE, "mismatch"]);
    let needles = [
        "collective mismatch at collective #0",
        "locale 1 called allgather",
        "locale 0 called barrier",
    ];
    assert_exit(&out, 1, &needles);
    assert!(!out.stdout.contains("returned"), "{out:?}");
}

#[test]
fn timeout_stops_a_hung_job() {
    let out = pgasrun(&["-n", "2", "--timeout", "1", PROBE, "sleep"]);
    assert!(out.elapsed >= Duration::from_secs(1), "{out:?}");
    assert_ended(&out, 124, &["pgasrun: job exceeded --timeout of 1s"]);
}

#[test]
fn job_timeout_from_the_environment_stops_a_hung_job() {
    let mut cmd = clean(PGASRUN);
    cmd.env("PGAS_JOB_TIMEOUT", "1")
        .args(["-n", "2", PROBE, "sleep"]);
    let out = run(cmd);
    assert!(out.elapsed >= Duration::from_secs(1), "{out:?}");
    assert_ended(&out, 124, &["pgasrun: job exceeded PGAS_JOB_TIMEOUT of 1s"]);
    // The flag wins over the variable.
    let mut cmd = clean(PGASRUN);
    cmd.env("PGAS_JOB_TIMEOUT", "300")
        .args(["-n", "2", "--timeout", "1", PROBE, "sleep"]);
    let out = run(cmd);
    assert_ended(&out, 124, &["pgasrun: job exceeded --timeout of 1s"]);
    // A job that ends in time is not affected.
    let mut cmd = clean(PGASRUN);
    cmd.env("PGAS_JOB_TIMEOUT", "60").args(["-n", "2", "true"]);
    assert_eq!(run(cmd).code(), Some(0));
}

#[test]
fn bad_job_timeout_variable_is_a_usage_error_naming_it() {
    for bad in ["soon", "0", "-5"] {
        let mut cmd = clean(PGASRUN);
        cmd.env("PGAS_JOB_TIMEOUT", bad)
            .args(["-n", "2", "sh", "-c", "echo ran"]);
        let out = run(cmd);
        assert_eq!(out.code(), Some(2), "{bad}: {out:?}");
        assert_contains(&out, &format!("PGAS_JOB_TIMEOUT: invalid value '{bad}'"));
        assert_eq!(out.stdout, "", "{bad}: nothing may have run: {out:?}");
    }
}

#[test]
fn np_is_accepted_like_mpirun() {
    for args in [&["-np", "3"][..], &["-np3"][..]] {
        let mut a = args.to_vec();
        a.extend(["sh", "-c", "echo $PGAS_RANK/$PGAS_SIZE"]);
        let out = pgasrun(&a);
        assert_eq!(out.code(), Some(0), "{a:?}: {out:?}");
        let mut lines = out.lines();
        lines.sort();
        assert_eq!(lines, ["0/3", "1/3", "2/3"], "{a:?}: {out:?}");
    }
}

#[test]
fn locale_ignoring_sigterm_is_killed() {
    // Never connects (so no stop order) and ignores SIGTERM.
    let out = pgasrun(&["-n", "2", "--timeout", "0.5", PROBE, "sleep-noconnect"]);
    assert_ended(&out, 124, &["did not stop after SIGTERM; sending SIGKILL"]);
}

#[test]
fn programs_that_do_not_use_the_oob_work() {
    let out = pgasrun(&["-n", "3", "true"]);
    assert_eq!(out.code(), Some(0), "{out:?}");
    let out = pgasrun(&["-n", "2", "false"]);
    assert_exit(&out, 1, &[") exited with status 1"]);
    let out = pgasrun(&["-n", "2", "sh", "-c", "echo $PGAS_RANK/$PGAS_SIZE"]);
    let mut lines = out.lines();
    lines.sort();
    assert_eq!(lines, ["0/2", "1/2"], "{out:?}");
}

#[test]
fn environment_is_passed_through_and_extended() {
    let mut cmd = clean(PGASRUN);
    cmd.env("PGAS_TEST_INHERITED", "yes").args([
        "-n",
        "2",
        "-e",
        "FOO=bar=baz",
        PROBE,
        "env",
        "FOO",
    ]);
    let out = run(cmd);
    assert_eq!(out.lines(), ["FOO=bar=baz"; 2], "{out:?}");
    let mut cmd = clean(PGASRUN);
    cmd.env("PGAS_TEST_INHERITED", "yes")
        .args(["-n", "1", PROBE, "env", "PGAS_TEST_INHERITED"]);
    assert_eq!(run(cmd).lines(), ["PGAS_TEST_INHERITED=yes"]);
}

#[test]
fn bad_usage_exits_2_naming_the_bad_value() {
    let dir = std::env::temp_dir().join(format!("pgasrun-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let not_exec = dir.join("not-executable");
    std::fs::write(&not_exec, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&not_exec, std::fs::Permissions::from_mode(0o644)).unwrap();
    let not_exec = not_exec.to_str().unwrap();

    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec![], "missing -n".into()),
        (vec![PROBE], "missing -n".into()),
        (vec!["-n", "0", PROBE], "-n 0".into()),
        (vec!["-n", "abc", PROBE], "'abc'".into()),
        (vec!["-n", "5000", PROBE], "5000".into()),
        (vec!["-n", "2"], "missing PROGRAM".into()),
        (
            vec!["-n", "2", "/nonexistent/prog"],
            "'/nonexistent/prog' not found".into(),
        ),
        (
            vec!["-n", "2", "no-such-program-xyz"],
            "'no-such-program-xyz' not found in PATH".into(),
        ),
        (
            vec!["-n", "2", not_exec],
            format!("'{not_exec}' is not executable"),
        ),
        (
            vec!["--bogus", "-n", "2", PROBE],
            "unknown option '--bogus'".into(),
        ),
        (vec!["-n", "2", "--timeout", "abc", PROBE], "'abc'".into()),
        (
            vec!["-n", "2", "-e", "NOEQUALS", PROBE],
            "'NOEQUALS'".into(),
        ),
    ];
    for (args, want) in cases {
        let out = pgasrun(&args);
        assert_eq!(out.code(), Some(2), "{args:?}: {out:?}");
        assert!(out.stderr.starts_with("pgasrun: "), "{args:?}: {out:?}");
        assert!(
            out.stderr.contains(&want),
            "{args:?}: stderr lacks {want:?}: {out:?}"
        );
        assert_eq!(out.stdout, "", "{args:?}: nothing may have run: {out:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_and_version() {
    let out = pgasrun(&["--help"]);
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(out.stdout.starts_with("Usage: pgasrun -n N"), "{out:?}");
    let out = pgasrun(&["--version"]);
    assert!(out.stdout.starts_with("pgasrun "), "{out:?}");
}

#[test]
fn program_run_by_hand_is_rank_0_of_1() {
    let mut cmd = clean(PROBE);
    cmd.arg("info");
    let out = run(cmd);
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.lines(), ["rank 0 of 1"]);
    let mut cmd = clean(PROBE);
    cmd.arg("check");
    assert_eq!(run(cmd).lines(), ["rank 0 of 1: ok"]);
}

/// PMIx variables but no PMIx server (inherited from elsewhere): PMIx_Init
/// fails at once with the variables and the way out, no single-locale run.
/// (Runs under a real PMIx launcher: tests/tests/mpirun.rs.)
#[test]
fn pmix_environment_without_a_pmix_server_is_a_clear_error() {
    let mut cmd = clean(PROBE);
    cmd.env("PMIX_RANK", "1").arg("info");
    let out = run(cmd);
    assert_eq!(out.code(), Some(3), "{out:?}");
    assert!(out.elapsed < PROMPT, "{out:?}");
    assert_contains(&out, "PMIx_Init failed");
    assert_contains(&out, "PMIX_RANK=1");
    assert_contains(&out, "unset PMIX_RANK and PMIX_NAMESPACE");
}

/// A PMI-1/PMI-2 launcher (MPICH's mpiexec) is refused with the way out.
#[test]
fn pmi1_environment_is_refused_with_a_way_out() {
    let mut cmd = clean(PROBE);
    cmd.env("PMI_RANK", "1").arg("info");
    let out = run(cmd);
    assert_eq!(out.code(), Some(3), "{out:?}");
    assert_contains(&out, "PMI_RANK=1");
    assert_contains(&out, "srun --mpi=pmix");
}

#[test]
fn bad_launcher_environment_names_the_value() {
    let mut cmd = clean(PROBE);
    cmd.envs([
        ("PGAS_OOB_ADDR", "127.0.0.1:9"),
        ("PGAS_RANK", "seven"),
        ("PGAS_SIZE", "2"),
        ("PGAS_JOB_ID", "1"),
    ])
    .arg("info");
    let out = run(cmd);
    assert_eq!(out.code(), Some(3), "{out:?}");
    assert_contains(&out, "PGAS_RANK=\"seven\" is invalid");
}

#[test]
fn impostors_are_rejected() {
    // Locale 1 presents a wrong job id.
    let script = format!(
        "if [ $PGAS_RANK = 1 ]; then PGAS_JOB_ID=0000000000000001 exec {PROBE} info; \
         else exec {PROBE} sleep; fi"
    );
    let out = pgasrun(&["-n", "2", "--timeout", "60", "sh", "-c", &script]);
    assert_eq!(out.code(), Some(3), "{out:?}");
    assert_contains(&out, "the launcher rejected locale 1: wrong job id");
    assert!(out.elapsed < PROMPT, "{out:?}");

    // Locale 1 claims to be locale 0, which is already connected.
    let script = format!(
        "if [ $PGAS_RANK = 1 ]; then sleep 0.5; PGAS_RANK=0 exec {PROBE} sleep; \
         else exec {PROBE} sleep; fi"
    );
    let out = pgasrun(&["-n", "2", "--timeout", "60", "sh", "-c", &script]);
    assert_eq!(out.code(), Some(3), "{out:?}");
    assert_contains(&out, "locale 0 is already connected");
}

fn spawn_pgasrun(args: &[&str]) -> Child {
    clean(PGASRUN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads "pid RANK PID" lines until `n` are seen.
fn read_pids(child: &mut Child, n: usize) -> Vec<i32> {
    let mut pids = Vec::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while pids.len() < n {
        let l = lines.next().expect("pgasrun output ended early").unwrap();
        let pid = l.rsplit(' ').next().unwrap().parse().unwrap();
        pids.push(pid);
    }
    // Keep draining in the background so nothing blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    pids
}

/// Gone, or a zombie nobody has reaped yet: either way not running.
fn is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
    }
}

fn assert_all_die(pids: &[i32], why: &str) {
    let start = Instant::now();
    while !pids.iter().all(|&p| is_dead(p)) {
        assert!(
            start.elapsed() < PROMPT,
            "{why}: locales {pids:?} still alive"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill(pid: u32, sig: i32) {
    // SAFETY: kill(2) takes integers only; the pid is our unreaped child.
    let r = unsafe { libc::kill(pid as libc::pid_t, sig) };
    assert_eq!(r, 0);
}

#[test]
fn locales_die_when_pgasrun_is_killed() {
    // Direct children: parent-death signal.
    let mut p = spawn_pgasrun(&["-n", "2", "--timeout", "60", PROBE, "pid"]);
    let pids = read_pids(&mut p, 2);
    kill(p.id(), libc::SIGKILL);
    p.wait().unwrap();
    assert_all_die(&pids, "direct children of a SIGKILLed pgasrun");

    // Under a wrapper shell the parent-death signal only reaches the shell;
    // the watchdog must notice the launcher is gone.
    let script = format!("{PROBE} pid; echo after");
    let mut p = spawn_pgasrun(&["-n", "2", "--timeout", "60", "sh", "-c", &script]);
    let pids = read_pids(&mut p, 2);
    kill(p.id(), libc::SIGKILL);
    p.wait().unwrap();
    assert_all_die(&pids, "grandchildren of a SIGKILLed pgasrun");
}

#[test]
fn sigterm_to_pgasrun_stops_the_job() {
    let mut p = spawn_pgasrun(&["-n", "2", "--timeout", "60", PROBE, "pid"]);
    let pids = read_pids(&mut p, 2);
    let start = Instant::now();
    kill(p.id(), libc::SIGTERM);
    let mut err = String::new();
    p.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = p.wait().unwrap();
    assert!(start.elapsed() < PROMPT);
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{err}");
    assert!(status.signal().is_none());
    assert!(
        err.contains("pgasrun: received SIGTERM; stopping the job"),
        "{err}"
    );
    assert_all_die(&pids, "locales of a SIGTERMed pgasrun");
}
