//! Criterion benches of the per-operation paths between two locales,
//! through the runtime shim's API from a task: 8-byte PUT (`rt.put`),
//! 8-byte GET, fetch-add (`rt.atomic(..).fetch_add`: native where the
//! provider has it, else via AM) and the empty blocking on-statement
//! (`rt.on`), each beside its matched raw-libfabric floor
//! (`fi_inject_write` where ours injects, else `fi_writemsg` waited;
//! `fi_readmsg`, `fi_fetch_atomic`, `fi_send`/`fi_recv` round trip) on the
//! same provider and `fi_info`.
//!
//! A remote operation needs a peer process, so the bench starts its own
//! job: run by `cargo bench` (no launcher variables), it re-executes itself
//! under `pgasrun -n 2` (building `pgasrun` first if it is missing) and
//! exits with the job's status. Under the launcher, locale 0 runs criterion
//! in a task of its runtime; locale 1 serves (its AM poller and workers and
//! a raw-floor thread poll). `PGAS_PROVIDER` / `PGAS_MCM_MODE` pass
//! through: `PGAS_PROVIDER='tcp;ofi_rxm' cargo bench -p study`.

use criterion::Criterion;
use runtime_shim::{FnId, GlobalPtr, Runtime};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;
use study::ours::Ours;
use study::plan::Plan;
use study::raw::Raw;

fn under_launcher() -> bool {
    std::env::var_os(bootstrap::env::RANK).is_some()
}

/// `target/<profile>/pgasrun` next to this bench binary (`.../deps/ops-*`).
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
        cmd.args([
            "build",
            "--quiet",
            "-p",
            "pgas-bootstrap",
            "--bin",
            "pgasrun",
        ])
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
            // Against raw libfabric: the provider path, not the mapped one.
            .env(
                "PGAS_LOCAL_PATH",
                std::env::var("PGAS_LOCAL_PATH").unwrap_or_else(|_| "fabric".into()),
            )
            .status()
            .map_err(|e| e.to_string())?;
        Ok(status.code().unwrap_or(1))
    };
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(c) => ExitCode::from(c.clamp(1, 255) as u8),
        Err(e) => {
            eprintln!("ops bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs in a task (a worker bound to its own transmit context), through
/// the runtime shim's API, like the study's "rt task" rows.
fn bench(
    raw: &mut Raw,
    rt: &'static Runtime,
    remote: GlobalPtr<u8>,
    word: GlobalPtr<u64>,
    empty: FnId,
) {
    let mut buf = [0u8; 8];
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let label = format!("ops/{}/{}", rt.provider_name(), rt.mode());
    let mut g = c.benchmark_group(label);
    g.bench_function("put_8B", |b| b.iter(|| rt.put(remote, &buf).expect("put")));
    // Matched floor: fi_inject_write where ours injects, else fi_writemsg waited.
    // The targets' floor servers poll only around the floor's benches
    // (Raw::in_floor_round), as in the study's rounds.
    raw.in_floor_round(|raw| {
        g.bench_function("raw_put_8B", |b| {
            b.iter(|| raw.put_once(8).expect("raw put"))
        });
    })
    .expect("resume/pause the floor's targets");
    g.bench_function("get_8B", |b| {
        b.iter(|| rt.get(&mut buf, remote).expect("get"))
    });
    raw.in_floor_round(|raw| {
        g.bench_function("raw_fi_readmsg_8B", |b| {
            b.iter(|| raw.get_once(8).expect("raw get"))
        });
    })
    .expect("resume/pause the floor's targets");
    let a = rt.atomic(word);
    g.bench_function("fetch_add_u64", |b| b.iter(|| a.fetch_add(1).expect("amo")));
    raw.in_floor_round(|raw| {
        if raw.fetch_add_once().is_ok() {
            g.bench_function("raw_fi_fetch_atomic_u64", |b| {
                b.iter(|| raw.fetch_add_once().expect("raw fetch-add"))
            });
        }
    })
    .expect("resume/pause the floor's targets");
    g.bench_function("on_stmt_empty", |b| {
        b.iter(|| rt.on(1, empty, &[]).expect("on"))
    });
    raw.in_floor_round(|raw| {
        g.bench_function("raw_send_recv_round_trip", |b| {
            b.iter(|| raw.ping_once().expect("raw ping"))
        });
    })
    .expect("resume/pause the floor's targets");
    g.finish();
    c.final_summary();
}

fn main() -> ExitCode {
    if !under_launcher() {
        return relaunch();
    }
    let run = || -> study::stats::Res<()> {
        let mut plan = Plan::full(1);
        plan.lat_sizes = vec![8];
        plan.bw_sizes.clear();
        let oob = bootstrap::from_env()?;
        let mut raw = Raw::open(&*oob, &plan)?;
        let ours = Ours::start(&plan)?;
        if raw.is_initiator() {
            let rt = ours.rt();
            let (remote, _) = ours.buffers();
            let (word, empty) = (ours.amo_word(), ours.empty_body());
            let mut raw = rt
                .spawn(move || {
                    let mut raw = raw;
                    bench(&mut raw, rt, remote, word, empty);
                    raw
                })?
                .join()?;
            let s = raw.stop_targets();
            let f = ours.finish();
            s?;
            f?;
        } else {
            let server = std::thread::spawn(move || {
                let r = raw.serve();
                (raw, r)
            });
            let f = ours.finish();
            let (raw, r) = server.join().map_err(|_| "raw serving thread panicked")?;
            drop(raw);
            f?;
            r?;
        }
        oob.barrier()?;
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ops bench: {e}");
            ExitCode::FAILURE
        }
    }
}
