//! The tests that run C: building the workspace's C libraries (the runtime
//! shim's `libruntime_shim.so` / `.a`, the OpenSHMEM `libpgas_shmem.so`),
//! compiling a program against them (the shim's header with the system C
//! compiler, or `shmem/bin/oshcc`), running an OpenSHMEM program with
//! `shmem/bin/oshrun` and reading its `CHECK key=value ...` lines.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// `target/<profile>` of the running test binary.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps")
        .to_path_buf()
}

pub(crate) fn profile_args() -> Vec<&'static str> {
    let dir = target_dir();
    if dir.file_name().is_some_and(|n| n == "release") {
        vec!["--release"]
    } else {
        vec![]
    }
}

/// Builds pgasrun, every example and the C libraries once per test
/// process: the workspace's one selection (`scripts/build`), whole, as one
/// package alone resolves its dependencies' features differently and
/// rebuilds them (and the workspace after it); a build of the examples
/// makes only the rlib a dependency needs, `--lib` the cdylibs and
/// staticlibs.
pub fn build_once() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--quiet", "--workspace", "--lib", "--bins"])
            .arg("--examples")
            .args(profile_args())
            .arg("--manifest-path")
            .arg(workspace().join("Cargo.toml"))
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building the workspace failed");
    });
}

/// The workspace's root directory.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Builds the launcher, the examples and the C libraries once per test
/// process ([`build_once`] builds them all).
pub fn build_libraries() {
    build_once();
}

/// The C shared library's SONAME is `libpgas_shim.so.0`
/// (runtime-shim/build.rs): a program linked in the build tree with
/// `-lruntime_shim` records that name, so it must resolve next to the file.
pub fn shim_soname_link(dir: &Path) {
    match std::os::unix::fs::symlink("libruntime_shim.so", dir.join("libpgas_shim.so.0")) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            panic!("{}: cannot link libpgas_shim.so.0: {e}", dir.display())
        }
        _ => {}
    }
}

fn run_compiler(mut cc: Command, src: &Path) {
    let r = cc.output().expect("run the C compiler");
    assert!(
        r.status.success(),
        "compiling {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&r.stderr)
    );
}

/// Compiles the C program `src` to `out` with the system C compiler
/// (`$CC`, else `cc`) against the runtime shim's header, `-std=c11 -Wall
/// -Werror` and `flags`, and links it with the shim's cdylib (`static_link`:
/// its staticlib). Builds the libraries first.
pub fn cc_shim(src: &Path, out: &Path, flags: &[&str], static_link: bool) {
    build_libraries();
    let dir = target_dir();
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
    cc.args(["-std=c11", "-Wall", "-Werror"])
        .args(flags)
        .arg("-I")
        .arg(workspace().join("runtime-shim/include"))
        .arg(src)
        .arg("-o")
        .arg(out);
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
        shim_soname_link(&dir);
        cc.arg("-L")
            .arg(&dir)
            .arg("-lruntime_shim")
            .arg(format!("-Wl,-rpath,{}", dir.display()));
    }
    run_compiler(cc, src);
}

/// Compiles `tests/c/<name>.c` with the system C compiler against the
/// runtime shim's header (warnings, `-Wextra` too, are errors) and links it
/// with the cdylib (`static_link`: the staticlib); returns the program's
/// path (`target/<profile>/<name>_dynamic` or `_static`).
pub fn compile_c(name: &str, static_link: bool) -> PathBuf {
    let out = target_dir().join(format!(
        "{name}_{}",
        if static_link { "static" } else { "dynamic" }
    ));
    let src = workspace().join(format!("tests/c/{name}.c"));
    cc_shim(&src, &out, &["-Wextra", "-O1"], static_link);
    out
}

/// Compiles the C program `src` to `out` with `shmem/bin/oshcc` against
/// the OpenSHMEM library of this build, `-std=c11 -Wall -Werror` and
/// `flags`. Builds the libraries first.
pub fn oshcc(src: &Path, out: &Path, flags: &[&str]) {
    build_libraries();
    let mut cc = Command::new(workspace().join("shmem/bin/oshcc"));
    cc.env("PGAS_SHMEM_LIBDIR", target_dir())
        .args(["-std=c11", "-Wall", "-Werror"])
        .args(flags)
        .arg("-o")
        .arg(out)
        .arg(src);
    run_compiler(cc, src);
}

/// Compiles `tests/c/<name>.c` with `oshcc` (`-O1`); returns the program's
/// path (`target/<profile>/<name>`).
pub fn compile_shmem(name: &str) -> PathBuf {
    let out = target_dir().join(name);
    oshcc(
        &workspace().join(format!("tests/c/{name}.c")),
        &out,
        &["-O1"],
    );
    out
}

/// One job at a time: the jobs oversubscribe the cores already (4 PEs on
/// 2 cores), and two at once made single runs take minutes.
static ONE_JOB: Mutex<()> = Mutex::new(());

/// Holds the one-job lock of this test process (for a job started other
/// than by [`oshrun`]) until the guard is dropped.
pub fn one_job() -> MutexGuard<'static, ()> {
    ONE_JOB.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `prog args` on `np` PEs with `shmem/bin/oshrun` (one worker per PE,
/// `env` added), one such job at a time in this test process.
pub fn oshrun(prog: &Path, np: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
    let _one = one_job();
    let mut c = Command::new(workspace().join("shmem/bin/oshrun"));
    c.env("PGAS_RUN", target_dir().join("pgasrun"))
        .env("PGAS_NUM_WORKERS", "1")
        .arg("-np")
        .arg(np.to_string())
        .arg(prog)
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run oshrun")
}

/// The `CHECK key=value ...` line of every PE in `out`'s standard output,
/// as maps, ordered by their `pe` key.
pub fn check_maps(out: &Output) -> Vec<HashMap<String, String>> {
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v: Vec<HashMap<String, String>> = text
        .lines()
        .filter_map(|l| l.strip_prefix("CHECK "))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect();
    v.sort_by_key(|m| m["pe"].parse::<usize>().unwrap());
    v
}

/// Asserts that the job of `out` succeeded and printed one `CHECK` line per
/// PE of `np` ([`check_maps`]); returns the lines by PE. `what` names the
/// job in the failure.
pub fn assert_check_lines(out: &Output, np: usize, what: &str) -> Vec<HashMap<String, String>> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what}: exit {:?}\n{stdout}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v = check_maps(out);
    assert_eq!(v.len(), np, "{what}: one CHECK line per PE:\n{stdout}");
    v
}
