//! The OpenSHMEM library (`shmem/`) from C, as a user builds and runs a
//! program: `tests/c/shmem_smoke.c` compiled with `shmem/bin/oshcc` and run
//! with `shmem/bin/oshrun` on 2 and 4 PEs, on the mapped path and on
//! tcp;ofi_rxm (fabric path), every PE's results checked; then the
//! job-ending calls: `shmem_global_exit(7)` ends the job with status 7,
//! and a PE out of range ends it with a message naming the call and the PE.
//! `tests/c/shmem_legacy.c` is a program as older codes and profiling
//! tools write it: `<mpp/shmem.h>`, the deprecated API (1.3 atomic names,
//! active-set collectives called by the set's members only, ...), and a
//! `shmem_long_p` of its own over `pshmem_long_p`.
//! (The public test suite runs in `scripts/sos`, its deprecated-tests
//! variant as `scripts/sos mapped-2-deprecated`, ...)

use pgas_tests::cbuild::{
    assert_check_lines, check_maps, compile_shmem, one_job, oshrun as oshrun_prog,
};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The smoke program, compiled once.
fn program() -> PathBuf {
    static PROG: OnceLock<PathBuf> = OnceLock::new();
    PROG.get_or_init(|| compile_shmem("shmem_smoke")).clone()
}

fn oshrun(np: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
    oshrun_prog(&program(), np, args, env)
}

fn run_smoke(np: usize, env: &[(&str, &str)], mapped: bool) {
    let out = oshrun(np, &[], env);
    let what = format!("{np} PEs {env:?}");
    let c = assert_check_lines(&out, np, &what);
    let n = np as i64;
    for (me, m) in c.iter().enumerate() {
        let me = me as i64;
        let left = (me + n - 1) % n;
        let want = [
            ("n", n.to_string()),
            ("from_left", (100 + left).to_string()),
            ("counter", (50 * n).to_string()),
            ("locked", (10 * n).to_string()),
            ("signal_data", (6 * left).to_string()),
            ("sum", (n * (n + 1) / 2).to_string()),
            ("max", n.to_string()),
            ("fcollect", (100 * n + n * (n - 1) / 2).to_string()),
            (
                "even_n",
                if me % 2 == 0 {
                    ((n + 1) / 2).to_string()
                } else {
                    "-1".into()
                },
            ),
            (
                "even_sum",
                if me % 2 == 0 {
                    (0..n).step_by(2).sum::<i64>().to_string()
                } else {
                    "-1".into()
                },
            ),
            ("zsum", format!("{}+{}i", n * (n - 1) / 2, n)),
            ("ptr", if mapped { "mapped" } else { "null" }.into()),
        ];
        for (k, v) in want {
            assert_eq!(m[k], v, "{what}: PE {me}: {k}");
        }
    }
}

#[test]
fn smoke_program_on_the_mapped_path() {
    run_smoke(2, &[], true);
    run_smoke(4, &[], true);
}

#[test]
fn smoke_program_on_the_fabric_path() {
    let tcp = [
        ("PGAS_PROVIDER", "tcp;ofi_rxm"),
        ("PGAS_LOCAL_PATH", "fabric"),
    ];
    run_smoke(2, &tcp, false);
    run_smoke(4, &tcp, false);
}

#[test]
fn global_exit_ends_the_job_with_its_status() {
    let out = oshrun(3, &["global-exit"], &[]);
    assert_eq!(
        out.status.code(),
        Some(7),
        "stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("shmem_global_exit(7)"),
        "says who ended it:\n{err}"
    );
}

#[test]
fn a_pe_out_of_range_ends_the_job_naming_the_call_and_the_pe() {
    let out = oshrun(2, &["bad-pe"], &[]);
    assert!(!out.status.success(), "must fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("shmem_long_p") && err.contains("PE 5 is out of range"),
        "message names call and PE:\n{err}"
    );
}

#[test]
fn under_mpirun_the_library_bootstraps_through_pmix_and_global_exit_sets_the_status() {
    let prog = program();
    let mpirun = |args: &[&str]| {
        let _one = one_job();
        Command::new("mpirun")
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("PGAS_NUM_WORKERS", "1")
            .args(["--oversubscribe", "-n", "2"])
            .arg(&prog)
            .args(args)
            .output()
            .expect("run mpirun (scripts/setup installs openmpi-bin)")
    };
    let out = mpirun(&[]);
    assert!(
        out.status.success(),
        "mpirun smoke: {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(check_maps(&out).len(), 2, "one CHECK line per PE");
    let out = mpirun(&["global-exit"]);
    assert_eq!(
        out.status.code(),
        Some(7),
        "PMIx_Abort carries the status:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Locales on two hosts (`PGAS_TEST_HOSTNAMES`: 0 and 2 on one, 1 and 3 on
/// the other; co-located pairs map each other, the rest go through the
/// provider): tcp;ofi_rxm and udp;ofi_rxd are asked for `FI_REMOTE_COMM`
/// and run in each mode they honour (they were refused before: only
/// `sockets` could span hosts).
#[test]
fn smoke_program_on_mixed_hosts_over_tcp_and_udp() {
    for (prov, mode) in [
        ("tcp;ofi_rxm", "message-order"),
        ("tcp;ofi_rxm", "delivery-complete"),
        ("udp;ofi_rxd", "message-order"),
    ] {
        let env = [
            ("PGAS_TEST_HOSTNAMES", "a,b,a,b"),
            ("PGAS_PROVIDER", prov),
            ("PGAS_MCM_MODE", mode),
        ];
        // Every PE's right neighbour is on the other host: no shmem_ptr.
        run_smoke(4, &env, false);
    }
}

/// The legacy program's CHECK lines on `np` PEs, each value checked.
fn run_legacy(np: usize, env: &[(&str, &str)]) -> Output {
    let out = oshrun_prog(&compile_shmem("shmem_legacy"), np, &[], env);
    let what = format!("legacy, {np} PEs {env:?}");
    let c = assert_check_lines(&out, np, &what);
    let n = np as i64;
    for (me, m) in c.iter().enumerate() {
        let me = me as i64;
        let left = (me + n - 1) % n;
        let odd_n = n / 2;
        let even_n = (n + 1) / 2;
        let want = [
            ("n", n.to_string()),
            // inc + add 2 + finc by every PE, on PE 0
            ("icount", (4 * n).to_string()),
            ("llsum", (n * (n + 1) / 2).to_string()),
            ("winners", "1".into()),
            ("fetched", (1000 + left).to_string()),
            ("dswap", format!("{left}.5")),
            ("old_d", "0.0".into()),
            ("swapped", left.to_string()),
            ("waited", "7,5".into()),
            // broadcast from set rank 0 (PE 1) to the other odd PEs; the
            // root's dest untouched, as the deprecated form says
            (
                "bcast",
                if me % 2 == 1 && me != 1 && odd_n > 1 {
                    "501".into()
                } else {
                    "-1".into()
                },
            ),
            (
                "setsum",
                if me >= 1 {
                    (n * (n - 1) / 2).to_string()
                } else {
                    "-1".into()
                },
            ),
            (
                "fcollect",
                if me % 2 == 0 {
                    (0..even_n).map(|i| 20 * i).sum::<i64>().to_string()
                } else {
                    "0".into()
                },
            ),
            // the program's own shmem_long_p ran, and reached the library
            // (the waits above end only if the values arrived)
            ("p_calls", "2".into()),
        ];
        for (k, v) in want {
            assert_eq!(m[k], v, "{what}: PE {me}: {k}");
        }
    }
    out
}

#[test]
fn a_legacy_program_with_an_interposed_call_runs_on_both_paths() {
    let out = run_legacy(4, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("deprecated"),
        "no deprecation notes by default:\n{err}"
    );
    run_legacy(2, &[]);
    run_legacy(
        4,
        &[
            ("PGAS_PROVIDER", "tcp;ofi_rxm"),
            ("PGAS_LOCAL_PATH", "fabric"),
        ],
    );
}

#[test]
fn with_pgas_verbose_each_deprecated_call_is_noted_once_per_job() {
    let out = run_legacy(4, &[("PGAS_VERBOSE", "1")]);
    let err = String::from_utf8_lossy(&out.stderr);
    for name in [
        "start_pes",
        "shmem_int_inc",
        "shmem_long_cswap",
        "shmem_broadcast64",
        "shmem_int_sum_to_all",
        "shfree",
    ] {
        let notes = err
            .lines()
            .filter(|l| l.contains(&format!("{name} (PE")) && l.contains("is deprecated"))
            .count();
        assert_eq!(notes, 1, "{name}: one note in the job:\n{err}");
    }
}
