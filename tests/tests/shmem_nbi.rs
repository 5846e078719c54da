//! pgas-shmem's non-blocking atomics (issue 37): `tests/c/shmem_nbi.c`
//! (every fetching atomic `_nbi` form, 200 of each to one PE, and
//! `put_signal_nbi`) compiled with `shmem/bin/oshcc` and run with
//! `shmem/bin/oshrun`. Asserted per PE: the fetched values (the target
//! applies one sender's atomics in issue order, so they are the sequence's
//! prefixes), the target words, the data behind the signals, and the
//! runtime's count of atomics in flight (`pgas_pending_amos`): right after
//! issuing, every `_nbi` atomic is still in flight where atomics travel as
//! active messages (tcp;ofi_rxm), none on the mapped path (CPU atomics,
//! done at once); after the quiet, none.

use pgas_tests::{build_once, target_dir};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Fetching atomics `shmem_nbi.c` issues per PE (6 forms x 200).
const FETCHES: usize = 6 * 200;

const TCP: [(&str, &str); 2] = [
    ("PGAS_PROVIDER", "tcp;ofi_rxm"),
    ("PGAS_LOCAL_PATH", "fabric"),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Builds the library (the whole workspace's libraries, as the harness
/// does: a package alone resolves features differently) and compiles the
/// program once.
fn program() -> PathBuf {
    static PROG: OnceLock<PathBuf> = OnceLock::new();
    PROG.get_or_init(|| {
        build_once();
        let dir = target_dir();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut b = Command::new(cargo);
        b.args([
            "build",
            "--quiet",
            "--workspace",
            "--lib",
            "--bins",
            "--examples",
        ]);
        if dir.file_name().is_some_and(|n| n == "release") {
            b.arg("--release");
        }
        let st = b
            .arg("--manifest-path")
            .arg(workspace().join("Cargo.toml"))
            .status()
            .expect("cargo build");
        assert!(st.success(), "building libpgas_shmem failed");
        let out = dir.join("shmem_nbi");
        let cc = Command::new(workspace().join("shmem/bin/oshcc"))
            .env("PGAS_SHMEM_LIBDIR", &dir)
            .args(["-std=c11", "-Wall", "-Werror", "-O1", "-o"])
            .arg(&out)
            .arg(workspace().join("tests/c/shmem_nbi.c"))
            .output()
            .expect("run oshcc");
        assert!(
            cc.status.success(),
            "oshcc failed:\n{}",
            String::from_utf8_lossy(&cc.stderr)
        );
        out
    })
    .clone()
}

/// Runs the program on `np` PEs; one CHECK line per PE, by PE.
fn checks(np: usize, env: &[(&str, &str)]) -> Vec<HashMap<String, String>> {
    let mut c = Command::new(workspace().join("shmem/bin/oshrun"));
    c.env("PGAS_RUN", target_dir().join("pgasrun"))
        .env("PGAS_NUM_WORKERS", "1")
        .env("PGAS_PEER_TIMEOUT", "60")
        .arg("-np")
        .arg(np.to_string())
        .arg(program());
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("run oshrun");
    let what = format!("{np} PEs {env:?}");
    assert!(
        out.status.success(),
        "{what}: exit {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
    assert_eq!(v.len(), np, "{what}: one CHECK line per PE:\n{text}");
    v
}

/// One run: PEs, extra environment, whether the atomics travel as AMs (and
/// so stay in flight until the quiet).
type Cell<'a> = (usize, &'a [(&'a str, &'a str)], bool);

#[test]
fn atomic_nbi_and_put_signal_nbi_are_left_in_flight_and_right_after_quiet() {
    let cells: [Cell; 4] = [
        (2, &[], false),
        (3, &[], false),
        (2, &TCP, true),
        (3, &TCP, true),
    ];
    for (np, env, in_flight) in cells {
        for (pe, m) in checks(np, env).iter().enumerate() {
            let what = format!("PE {pe} of {np} {env:?}");
            assert_eq!(m["amo"], "1", "{what}: fetched values (issue order kept)");
            assert_eq!(m["words"], "1", "{what}: the target words");
            assert_eq!(m["signal"], "1", "{what}: data there once the signals are");
            assert_eq!(m["after"], "0", "{what}: nothing in flight after quiet");
            let pending: usize = m["pending"].parse().unwrap();
            if in_flight {
                assert!(
                    pending >= FETCHES,
                    "{what}: only {pending} of {FETCHES} _nbi atomics were in flight before \
                     the quiet (they blocked)"
                );
            } else {
                assert_eq!(pending, 0, "{what}: mapped atomics are done at once");
            }
        }
    }
}
