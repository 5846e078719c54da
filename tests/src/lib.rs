//! Harness for multi-process tests: builds the launcher and the test
//! programs once, runs them under `pgasrun` with a time limit, and hands back
//! exit status and output.
//!
//! Programs are workspace examples (`cargo build --examples`), so the same
//! binaries serve the tests, the README and the study.

pub mod litmus_gen;
pub mod litmus_oracle;
pub mod litmus_report;

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

/// For the probe programs: an error mapper naming the step,
/// `.map_err(e("alloc_all"))` -> `"alloc_all: <error>"`.
pub fn e<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> String + '_ {
    move |err| format!("{what}: {err}")
}

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The providers every multi-process test runs on.
pub const PROVIDERS: [&str; 4] = ["shm", "tcp;ofi_rxm", "udp;ofi_rxd", "sockets"];

/// `target/<profile>` of the running test binary.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps")
        .to_path_buf()
}

fn profile_args() -> Vec<&'static str> {
    let dir = target_dir();
    if dir.file_name().is_some_and(|n| n == "release") {
        vec!["--release"]
    } else {
        vec![]
    }
}

/// Builds pgasrun and every example of the workspace once per test process.
pub fn build_once() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        let status = Command::new(cargo)
            .args(["build", "--workspace", "--bins", "--examples", "--quiet"])
            .args(profile_args())
            .arg("--manifest-path")
            .arg(manifest)
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building launcher and examples failed");
    });
}

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
    let mut cmd = Command::new(pgasrun());
    cmd.arg("-n")
        .arg(n.to_string())
        .arg("--timeout")
        .arg(timeout.as_secs().max(1).to_string())
        .arg(program)
        .args(args);
    if !env.iter().any(|(k, _)| *k == "PGAS_LOCAL_PATH") {
        cmd.env("PGAS_LOCAL_PATH", "fabric");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out: Output = cmd.output().expect("spawn pgasrun");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Compiles `tests/c/<name>.c` with the system C compiler against the
/// runtime shim's header (warnings are errors) and links it with the cdylib
/// (`static_link`: the staticlib); returns the program's path
/// (`target/<profile>/<name>_dynamic` or `_static`). Builds the launcher,
/// the examples and the shim's C libraries first.
pub fn compile_c(name: &str, static_link: bool) -> PathBuf {
    let _ = pgasrun(); // builds the launcher and the examples once
    let dir = target_dir();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // The shim's cdylib and staticlib (a build of the examples makes only
    // the rlib a dependency needs).
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--quiet", "-p", "runtime-shim", "--lib"])
        .args(profile_args())
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .status()
        .expect("run cargo build");
    assert!(
        status.success(),
        "building the runtime shim's C libraries failed"
    );
    let out = dir.join(format!(
        "{name}_{}",
        if static_link { "static" } else { "dynamic" }
    ));
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
    cc.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(workspace.join("runtime-shim/include"))
        .arg(workspace.join(format!("tests/c/{name}.c")))
        .arg("-o")
        .arg(&out);
    if static_link {
        cc.arg(dir.join("libruntime_shim.a")).args([
            "-lfabric",
            "-lgcc_s",
            "-lutil",
            "-lrt",
            "-lpthread",
            "-lm",
            "-ldl",
        ]);
    } else {
        cc.arg("-L")
            .arg(&dir)
            .arg("-lruntime_shim")
            .arg(format!("-Wl,-rpath,{}", dir.display()));
    }
    let r = cc.output().expect("run the C compiler (cc)");
    assert!(
        r.status.success(),
        "compiling tests/c/{name}.c failed:\n{}",
        String::from_utf8_lossy(&r.stderr)
    );
    out
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
    let mut cmd = Command::new(mpirun());
    cmd.args(["--oversubscribe", "-n", &n.to_string()])
        .arg("--timeout")
        .arg(timeout.as_secs().max(1).to_string())
        .arg(program)
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for v in ["PGAS_OOB_ADDR", "PGAS_RANK", "PGAS_SIZE", "PGAS_JOB_ID"] {
        cmd.env_remove(v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn mpirun");
    let reader = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = r.read_to_end(&mut b);
            String::from_utf8_lossy(&b).into_owned()
        })
    };
    let so = reader(Box::new(child.stdout.take().expect("piped")));
    let se = reader(Box::new(child.stderr.take().expect("piped")));
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
