//! The runtime shim's C ABI end to end: `tests/c/shim_abi.c`, compiled with
//! the system C compiler against `runtime-shim/include/pgas_shim.h`, linked
//! once against the cdylib and once against the staticlib, run under
//! `pgasrun -n 2` (and 3 on one provider). The program checks lifecycle,
//! PUT/GET (blocking, non-blocking, strided, unordered), every atomic type,
//! on-statements, tasks, broadcast and bad input itself and prints
//! `shim_abi ok` on locale 0.

use pgas_tests::{launch, pgasrun, target_dir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Compiles the C test program; `static_link` picks libruntime_shim.a.
fn compile(static_link: bool) -> PathBuf {
    let _ = pgasrun(); // builds the launcher once
    let dir = target_dir();
    // The shim's cdylib and staticlib (a build of the examples makes only
    // the rlib a dependency needs).
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut b = Command::new(cargo);
    b.args([
        "build",
        "--quiet",
        "-p",
        "runtime-shim",
        "--lib",
        "--manifest-path",
    ])
    .arg(workspace().join("Cargo.toml"));
    if dir.file_name().is_some_and(|n| n == "release") {
        b.arg("--release");
    }
    assert!(
        b.status().expect("run cargo build").success(),
        "building the runtime shim's C libraries failed"
    );
    let out = dir.join(if static_link {
        "shim_abi_static"
    } else {
        "shim_abi_dynamic"
    });
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
    cc.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(workspace().join("runtime-shim/include"))
        .arg(workspace().join("tests/c/shim_abi.c"))
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
        "compiling tests/c/shim_abi.c failed:\n{}",
        String::from_utf8_lossy(&r.stderr)
    );
    out
}

fn binary(static_link: bool) -> &'static Path {
    static DYN: OnceLock<PathBuf> = OnceLock::new();
    static STAT: OnceLock<PathBuf> = OnceLock::new();
    if static_link {
        STAT.get_or_init(|| compile(true))
    } else {
        DYN.get_or_init(|| compile(false))
    }
}

fn run(static_link: bool, n: usize, provider: &str, extra: &[(&str, &str)]) {
    let prog = binary(static_link);
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut env = vec![("PGAS_PROVIDER", provider)];
    env.extend_from_slice(extra);
    let r = launch(n, prog, &[], &env, Duration::from_secs(120));
    r.assert_ok(&format!(
        "shim_abi ({}) on {provider} x{n} {extra:?}",
        if static_link { "static" } else { "dynamic" }
    ));
    assert!(
        r.stdout.contains(&format!("shim_abi ok on {provider}")),
        "no ok line: {}",
        r.stdout
    );
    // The bad-input section printed each error it provoked.
    assert!(
        r.stdout.matches("shim_abi bad input:").count() >= 30,
        "bad-input lines missing: {}",
        r.stdout
    );
}

#[test]
fn c_abi_shm_dynamic_and_static() {
    run(false, 2, "shm", &[]);
    run(true, 2, "shm", &[("PGAS_AMO_VIA_AM", "1")]);
}

#[test]
fn c_abi_tcp_three_locales() {
    run(false, 3, "tcp;ofi_rxm", &[]);
}

#[test]
fn c_abi_sockets_fence_mode() {
    run(false, 2, "sockets", &[]);
}
