//! Harness for multi-process tests: builds the launcher and the test
//! programs once, runs them under `pgasrun` with a time limit, and hands back
//! exit status and output.
//!
//! Programs are workspace examples (`cargo build --examples`), so the same
//! binaries serve the tests, the README and the study.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

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
