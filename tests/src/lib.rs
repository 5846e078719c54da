//! Harness for multi-process tests: builds the launcher and the test
//! programs once, runs them under `pgasrun` with a time limit, and hands back
//! exit status and output.
//!
//! Programs are workspace examples (`cargo build --examples`), so the same
//! binaries serve the tests, the README and the study.

pub mod cbuild;
pub mod cells;
pub mod expect;
pub mod job;
pub mod litmus;
/// The C / OpenSHMEM front end of the litmus engine, by its older name.
pub use litmus::front::c as litmus_c;

/// For the probe programs (`tests/examples`): returns
/// `Err("<message> (line N)")` from the enclosing function unless the
/// condition holds.
#[macro_export]
macro_rules! check {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!("{} (line {})", format!($($fmt)+), line!()));
        }
    };
}

/// For the probe programs: reports a check that passed, as the line
/// `check NAME FIELDS ok` on stdout (FIELDS: `key=value` pairs naming the
/// case, the locale and what was measured), one line per check made. The
/// tests assert the whole set ([`Run::assert_checks`], the sets in
/// [`expect`]), so a check a probe skipped fails its test.
/// `passed!("put_get", "size={label} locale={me}")`.
#[macro_export]
macro_rules! passed {
    ($name:expr, $($fmt:tt)+) => {
        println!("check {} {} ok", $name, format!($($fmt)+))
    };
}

/// One `#[test]` per provider of [`PROVIDERS`], each calling `$f` with its
/// provider, named in the list's order (shm, tcp;ofi_rxm, udp;ofi_rxd,
/// sockets; a name for each, checked at compile time):
/// `per_provider!(|p| probe(p, &[]); rma_shm, rma_tcp_rxm, rma_udp_rxd,
/// rma_sockets);`.
#[macro_export]
macro_rules! per_provider {
    ($f:expr; $($name:ident),+ $(,)?) => {
        $crate::per_provider!(@each $f; 0; $($name),+);
    };
    (@each $f:expr; $i:expr; $name:ident $(, $rest:ident)*) => {
        #[test]
        fn $name() {
            ($f)($crate::PROVIDERS[$i])
        }
        $crate::per_provider!(@each $f; $i + 1; $($rest),*);
    };
    (@each $f:expr; $i:expr;) => {
        const _: () = assert!($i == $crate::PROVIDERS.len(), "one test name per provider");
    };
}

/// For the probe programs: an error mapper naming the step,
/// `.map_err(e("alloc_all"))` -> `"alloc_all: <error>"`.
pub fn e<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> String + '_ {
    move |err| format!("{what}: {err}")
}

/// A probe program's exit status: success, or `"<name>: <error>"` on
/// stderr and status 1.
pub fn exit(name: &str, r: Result<(), String>) -> std::process::ExitCode {
    match r {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{name}: {err}");
            std::process::ExitCode::from(1)
        }
    }
}

/// For the probe programs: a stderr subscriber filtered by `RUST_LOG`
/// (errors only when unset), before the runtime tries its own.
pub fn log_to_stderr() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
}

/// The start of a probe program: the runtime, with the bodies `register`
/// adds to its builder. On an error, says `"<name>: <error>"` (`"<name>:
/// cannot start: <error>"`) on stderr and hands back the exit status: 1
/// for a registration, 3 for the start.
pub fn start(
    name: &str,
    register: impl FnOnce(&runtime_shim::Builder) -> runtime_shim::Result<()>,
) -> Result<&'static runtime_shim::Runtime, std::process::ExitCode> {
    let b = runtime_shim::Builder::new();
    if let Err(x) = register(&b) {
        eprintln!("{name}: {x}");
        return Err(std::process::ExitCode::FAILURE);
    }
    b.init().map_err(|x| {
        eprintln!("{name}: cannot start: {x}");
        std::process::ExitCode::from(3)
    })
}

/// The body of a probe program with scenarios: runs each of `scenarios`
/// (`run`) on every locale, then a barrier; a failure aborts the job at
/// once (peers may be waiting in a collective) with `"<name> <s> FAILED:
/// <error>"`. Locale 0 prints `"<name> <s> ok on <provider>"` after each
/// scenario that `announce` says. Then the locale finalizes; the exit
/// status is [`exit`]'s.
pub fn run_scenarios(
    rt: &'static runtime_shim::Runtime,
    name: &str,
    scenarios: &[String],
    run: impl Fn(&'static runtime_shim::Runtime, &str) -> Result<(), String>,
    announce: impl Fn(&str) -> bool,
) -> std::process::ExitCode {
    for s in scenarios {
        if let Err(msg) = run(rt, s) {
            rt.abort(&format!("{name} {s} FAILED: {msg}"));
        }
        if let Err(x) = rt.barrier() {
            rt.abort(&format!("barrier after {s}: {x}"));
        }
        if rt.here() == 0 && announce(s) {
            println!("{name} {s} ok on {}", rt.provider_name());
        }
    }
    exit(name, rt.finalize().map_err(e("finalize")))
}

/// For the probe programs: the AM layer over `comm`, with the bodies of
/// `registry` in place before any request can arrive.
pub fn start_am(
    comm: &std::sync::Arc<comm_ofi::Comm>,
    registry: amhandler::Registry,
) -> Result<std::sync::Arc<amhandler::Am>, String> {
    let options = amhandler::Options {
        registry,
        ..Default::default()
    };
    amhandler::start_with(comm.clone(), options).map_err(e("AM layer"))
}

/// For the probe programs: argument `i` (1 is the first) parsed, `default`
/// when there is none, `Err("bad <what> <arg>")` when it does not parse.
pub fn arg<T: std::str::FromStr>(i: usize, what: &str, default: T) -> Result<T, String> {
    match std::env::args().nth(i) {
        Some(s) => s.parse().map_err(|_| format!("bad {what} {s:?}")),
        None => Ok(default),
    }
}

/// The end of a probe program: locale 0 prints `"<what> ok: <detail>,
/// <provider> <mode>"` (the line its test looks for), then the locale
/// finalizes.
pub fn finish(rt: &runtime_shim::Runtime, what: &str, detail: &str) -> Result<(), String> {
    if rt.here() == 0 {
        println!("{what} ok: {detail}, {} {}", rt.provider_name(), rt.mode());
    }
    rt.finalize().map_err(e("finalize"))
}

pub use cbuild::{build_once, compile_c, shim_soname_link, target_dir};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The providers every multi-process test runs on.
pub const PROVIDERS: [&str; 4] = ["shm", "tcp;ofi_rxm", "udp;ofi_rxd", "sockets"];

/// Path of the launcher.
pub fn pgasrun() -> PathBuf {
    build_once();
    target_dir().join("pgasrun")
}

/// Path of a workspace binary (e.g. `pgas-oob-probe`).
pub fn bin(name: &str) -> PathBuf {
    build_once();
    target_dir().join(name)
}

/// Path of an example program.
pub fn example(name: &str) -> PathBuf {
    build_once();
    target_dir().join("examples").join(name)
}

/// One launcher run.
#[derive(Debug)]
pub struct Run {
    /// Exit code (None if killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Whether it exited 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
    /// Asserts that standard output holds `needle` at least `n` times
    /// (one line per error a probe provoked, say); returns how many.
    pub fn assert_at_least(&self, needle: &str, n: usize) -> usize {
        let seen = self.stdout.matches(needle).count();
        assert!(
            seen >= n,
            "{seen} times {needle:?}, expected at least {n}:\n{}",
            self.stdout
        );
        seen
    }

    /// Panics with the whole output unless it exited 0.
    pub fn assert_ok(&self, what: &str) -> &Self {
        assert!(
            self.ok(),
            "{what} failed ({:?})\n--- stdout\n{}\n--- stderr\n{}",
            self.code,
            self.stdout,
            self.stderr
        );
        self
    }
}

/// One check line of a probe (`check NAME key=value ... ok`, see
/// [`passed!`]): a check it made and passed, with what it measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckLine {
    /// What was checked (`put_get`).
    pub name: String,
    /// Its fields in order (`size=8`, `locale=1`, measured values).
    pub fields: Vec<(String, String)>,
}

impl CheckLine {
    /// Parses `NAME key=value ...` (an expectation, or a line without its
    /// `check `/` ok` frame); None if a field has no `=`.
    pub fn parse(text: &str) -> Option<CheckLine> {
        let mut words = text.split_whitespace();
        let name = words.next()?.to_string();
        let fields = words
            .map(|w| w.split_once('=').map(|(k, v)| (k.into(), v.into())))
            .collect::<Option<Vec<_>>>()?;
        Some(CheckLine { name, fields })
    }

    /// Parses a probe's output line `check NAME key=value ... ok`.
    pub fn from_output(line: &str) -> Option<CheckLine> {
        CheckLine::parse(line.strip_prefix("check ")?.strip_suffix(" ok")?)
    }

    /// The value of field `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether this line meets the expectation `want`: the same name, and
    /// every field of `want` with the same value (the line may carry more:
    /// measured values the test does not pin).
    pub fn satisfies(&self, want: &CheckLine) -> bool {
        self.name == want.name && want.fields.iter().all(|(k, v)| self.get(k) == Some(v))
    }
}

impl std::fmt::Display for CheckLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)?;
        for (k, v) in &self.fields {
            write!(f, " {k}={v}")?;
        }
        Ok(())
    }
}

/// Matches `lines` against `expected` (each `NAME key=value ...`): every
/// expectation takes one line that satisfies it, the most specific
/// expectations first. Returns (expectations no line met, lines no
/// expectation took).
pub fn match_checks(lines: &[CheckLine], expected: &[String]) -> (Vec<String>, Vec<CheckLine>) {
    let mut wants: Vec<CheckLine> = expected
        .iter()
        .map(|e| CheckLine::parse(e).unwrap_or_else(|| panic!("malformed expectation {e:?}")))
        .collect();
    wants.sort_by_key(|w| std::cmp::Reverse(w.fields.len()));
    let mut left: Vec<CheckLine> = lines.to_vec();
    let mut missing = Vec::new();
    for w in &wants {
        match left.iter().position(|l| l.satisfies(w)) {
            Some(i) => {
                left.remove(i);
            }
            None => missing.push(w.to_string()),
        }
    }
    (missing, left)
}

impl Run {
    /// The check lines the probe printed, in order.
    pub fn checks(&self) -> Vec<CheckLine> {
        self.stdout
            .lines()
            .filter_map(CheckLine::from_output)
            .collect()
    }

    /// Asserts that the probe's check lines are exactly `expected` (each
    /// `NAME key=value ...`, see [`match_checks`]): a check it did not
    /// report, or one the test does not know of, fails with both lists.
    pub fn assert_checks(&self, what: &str, expected: &[String]) -> &Self {
        let (missing, extra) = match_checks(&self.checks(), expected);
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{what}: the probe's checks differ from the expected set\n\
             --- expected, not reported ({})\n{}\n--- reported, not expected ({})\n{}\n\
             --- stdout\n{}",
            missing.len(),
            missing.join("\n"),
            extra.len(),
            extra
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
            self.stdout
        );
        self
    }
}

/// Runs `pgasrun -n N --timeout T PROGRAM ARGS` with extra environment.
///
/// The tests that name a provider test that provider's paths, so unless
/// `env` says otherwise the job runs with `PGAS_LOCAL_PATH=fabric` (by
/// default co-located locales would map each other's heaps and PUT, GET and
/// atomics would never reach the provider); `tests/tests/mapped.rs` and the
/// mapped cells of the litmus suite ask for `mapped`.
pub fn launch(
    n: usize,
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    timeout: Duration,
) -> Run {
    let mut cmd = job_command(Command::new(pgasrun()), n, timeout, program, args);
    if !env.iter().any(|(k, _)| *k == "PGAS_LOCAL_PATH") {
        cmd.env("PGAS_LOCAL_PATH", "fabric");
    }
    cmd.envs(env.iter().copied());
    let out: Output = cmd.output().expect("spawn pgasrun");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `LAUNCHER [its options] -n N --timeout T PROGRAM ARGS`.
fn job_command(
    mut launcher: Command,
    n: usize,
    timeout: Duration,
    program: &Path,
    args: &[&str],
) -> Command {
    launcher
        .args(["-n", &n.to_string(), "--timeout"])
        .arg(timeout.as_secs().max(1).to_string())
        .arg(program)
        .args(args);
    launcher
}

/// A thread reading `r` to its end, lossily as UTF-8.
fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = r.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// OpenMPI's `mpirun` (a PMIx launcher): `mpirun.openmpi` or an `mpirun` on
/// `PATH` that says it is Open MPI. Panics with what to do if there is none:
/// the PMIx tests must fail, not skip, on a machine without it.
pub fn mpirun() -> PathBuf {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let find = |name: &str| {
                std::env::split_paths(&path)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            };
            let exe = find("mpirun.openmpi")
                .or_else(|| find("mpirun"))
                .ok_or("mpirun not found on PATH: run scripts/setup (installs openmpi-bin)")?;
            let out = Command::new(&exe)
                .arg("--version")
                .output()
                .map_err(|e| format!("{}: {e}: run scripts/setup", exe.display()))?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            if !(text.contains("Open MPI") || text.contains("OpenRTE")) {
                return Err(format!(
                    "{} is not OpenMPI's mpirun ({}): run scripts/setup (installs openmpi-bin)",
                    exe.display(),
                    text.lines().next().unwrap_or("")
                ));
            }
            Ok(exe)
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// One run under a PMIx launcher, with how long it took.
#[derive(Debug)]
pub struct MpiRun {
    /// Exit status, output.
    pub run: Run,
    /// Wall time until mpirun exited.
    pub elapsed: Duration,
}

/// Runs `mpirun --oversubscribe -n N PROGRAM ARGS` (as root: with
/// OpenMPI's run-as-root variables) with extra environment, none of
/// pgasrun's variables, and stdin from /dev/null. Bounded twice: mpirun's
/// `--timeout` and, should mpirun itself hang, SIGTERM (mpirun then kills its
/// processes) and SIGKILL after `timeout` + 5 s.
pub fn mpirun_launch(
    n: usize,
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    timeout: Duration,
) -> MpiRun {
    let mut mpirun = Command::new(mpirun());
    mpirun.arg("--oversubscribe");
    let mut cmd = job_command(mpirun, n, timeout, program, args);
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for v in ["PGAS_OOB_ADDR", "PGAS_RANK", "PGAS_SIZE", "PGAS_JOB_ID"] {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().copied());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn mpirun");
    let so = drain(child.stdout.take().expect("piped"));
    let se = drain(child.stderr.take().expect("piped"));
    let guard = timeout + Duration::from_secs(5);
    let mut termed = false;
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for mpirun") {
            break st;
        }
        let t = start.elapsed();
        if t > guard + Duration::from_secs(3) {
            let _ = child.kill();
        } else if t > guard && !termed {
            termed = true;
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    MpiRun {
        run: Run {
            code: status.code(),
            stdout: so.join().unwrap_or_default(),
            stderr: se.join().unwrap_or_default(),
        },
        elapsed,
    }
}

#[cfg(test)]
mod check_line_tests {
    use super::*;

    fn run_with(stdout: &str) -> Run {
        Run {
            code: Some(0),
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }

    #[test]
    fn a_check_line_parses_into_name_and_fields() {
        let c = CheckLine::from_output("check put_get size=8 bytes=8 locale=1 ok").unwrap();
        assert_eq!(c.name, "put_get");
        assert_eq!(c.get("size"), Some("8"));
        assert_eq!(c.get("locale"), Some("1"));
        assert_eq!(c.get("nope"), None);
        assert_eq!(c.to_string(), "put_get size=8 bytes=8 locale=1");
        assert_eq!(CheckLine::from_output("rma_probe ok: 3 locales"), None);
        assert_eq!(CheckLine::from_output("check put_get size ok"), None);
        assert_eq!(CheckLine::from_output("check put_get size=8"), None);
    }

    #[test]
    fn an_expectation_pins_only_the_fields_it_names() {
        let line = CheckLine::parse("amo target=1 total=12 native=true").unwrap();
        assert!(line.satisfies(&CheckLine::parse("amo target=1 total=12").unwrap()));
        assert!(line.satisfies(&CheckLine::parse("amo").unwrap()));
        assert!(!line.satisfies(&CheckLine::parse("amo target=1 total=11").unwrap()));
        assert!(!line.satisfies(&CheckLine::parse("amo target=1 locale=0").unwrap()));
        assert!(!line.satisfies(&CheckLine::parse("put target=1").unwrap()));
    }

    #[test]
    fn the_set_must_match_exactly() {
        let out = "noise\ncheck a x=1 ok\ncheck a x=2 v=9 ok\ncheck b ok\n";
        let r = run_with(out);
        let exact: Vec<String> = ["a x=1", "a x=2", "b"].map(String::from).to_vec();
        r.assert_checks("exact", &exact);
        // A skipped check is missing; an unknown one is extra.
        let (missing, extra) = match_checks(&r.checks(), &["a x=1".into(), "a x=3".into()]);
        assert_eq!(missing, ["a x=3"]);
        assert_eq!(
            extra.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            ["a x=2 v=9", "b"]
        );
        // A repeated expectation needs a line of its own.
        let (missing, _) = match_checks(&r.checks(), &["b".into(), "b".into()]);
        assert_eq!(missing, ["b"]);
    }

    #[test]
    fn specific_expectations_are_matched_first() {
        // "a" alone would take the first line if tried first, leaving
        // "a x=1" unmet although a line for each exists.
        let r = run_with("check a x=1 ok\ncheck a x=2 ok\n");
        let (missing, extra) = match_checks(&r.checks(), &["a".into(), "a x=1".into()]);
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{missing:?} {extra:?}"
        );
    }

    #[test]
    #[should_panic(expected = "expected, not reported (1)")]
    fn a_missing_check_fails_the_assertion() {
        run_with("check a ok\n").assert_checks("t", &["a".into(), "b".into()]);
    }
}
