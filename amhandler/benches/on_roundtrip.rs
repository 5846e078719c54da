//! Criterion bench of the blocking empty on-statement round trip (and its
//! siblings: fast on-statement, no-op, AMO via AM) between two locales.
//!
//! A round trip needs a peer process, so the bench starts its own job: run by
//! `cargo bench` (no launcher variables), it re-executes itself under
//! `pgasrun -n 2` (building `pgasrun` first if it is missing from the
//! target directory) and exits with the job's status. Under the launcher,
//! locale 0 runs criterion while locale 1 only serves AMs; both then
//! finalize. `PGAS_PROVIDER` etc. pass through, so
//! `PGAS_PROVIDER='tcp;ofi_rxm' cargo bench -p amhandler` measures tcp.

use amhandler::{Options, Registry};
use comm_ofi::{AmoOp, AmoType, Comm};
use criterion::Criterion;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;

fn under_launcher() -> bool {
    std::env::var_os(bootstrap::env::RANK).is_some()
}

/// `target/<profile>/pgasrun` next to this bench binary (`.../deps/on_roundtrip-*`).
fn pgasrun() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("PGASRUN") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .ok_or("cannot locate the target directory")?
        .to_path_buf();
    let path = profile_dir.join("pgasrun");
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--quiet", "-p", "bootstrap", "--bin", "pgasrun"])
            .arg("--manifest-path")
            .arg(&manifest);
        if profile_dir.file_name().is_some_and(|n| n != "debug") {
            cmd.arg("--release");
        }
        let ok = cmd.status().map_err(|e| e.to_string())?.success();
        if !ok || !path.exists() {
            return Err(format!(
                "pgasrun not found at {} and building it failed; set PGASRUN",
                path.display()
            ));
        }
    }
    Ok(path)
}

fn relaunch() -> ExitCode {
    let run = || -> Result<i32, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let status = Command::new(pgasrun()?)
            .args(["-n", "2", "--timeout", "900"])
            .arg(exe)
            .args(std::env::args_os().skip(1))
            .status()
            .map_err(|e| e.to_string())?;
        Ok(status.code().unwrap_or(1))
    };
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(c) => ExitCode::from(c.clamp(1, 255) as u8),
        Err(e) => {
            eprintln!("on_roundtrip: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    if !under_launcher() {
        return relaunch();
    }
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        eprintln!("on_roundtrip: {what}: {e}");
        ExitCode::FAILURE
    };
    let comm = match Comm::init() {
        Ok(c) => c,
        Err(e) => return fail("init", &e),
    };
    let reg = Registry::new();
    let empty = match reg.register("bench_empty", |_, _| Vec::new()) {
        Ok(id) => id,
        Err(e) => return fail("register", &e),
    };
    let opts = Options {
        registry: reg,
        ..Default::default()
    };
    let am = match amhandler::start_with(comm.clone(), opts) {
        Ok(a) => a,
        Err(e) => return fail("start", &e),
    };
    if am.here() == 0 {
        let word = comm
            .alloc(8, 8)
            .and_then(|w| comm.symmetric(w, 1))
            .expect("heap word");
        let mut c = Criterion::default()
            .sample_size(30)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3))
            .configure_from_args();
        let prov = comm.provider().name.clone();
        let mut g = c.benchmark_group(format!("on_roundtrip/{prov}"));
        g.bench_function("execute_on_empty", |b| {
            b.iter(|| am.execute_on(1, empty, &[]).expect("execute_on"))
        });
        g.bench_function("execute_on_fast_empty", |b| {
            b.iter(|| am.execute_on_fast(1, empty, &[]).expect("execute_on_fast"))
        });
        g.bench_function("nop", |b| b.iter(|| am.nop(1).expect("nop")));
        g.bench_function("amo_via_am_fetch_add", |b| {
            b.iter(|| {
                am.amo_via_am(word, AmoType::U64, AmoOp::Add, 1, 0, true)
                    .expect("amo")
            })
        });
        g.finish();
        c.final_summary();
    }
    if let Err(e) = am.finalize() {
        return fail("finalize", &e);
    }
    ExitCode::SUCCESS
}
