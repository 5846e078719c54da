//! OpenSHMEM semantics the public suite does not check (issue 37):
//! `tests/c/shmem_semantics.c` compiled with `shmem/bin/oshcc`, run with
//! `shmem/bin/oshrun`, every PE's CHECK line asserted: contexts on teams
//! number PEs in the team (the 1.5 specification's `shmem_team_create_ctx`
//! example, on the mapped path and on tcp;ofi_rxm), a PE outside the
//! context's team ends the job naming it, `test_any` / `wait_until_any` are
//! fair, an exhausted symmetric heap names `SHMEM_SYMMETRIC_SIZE`, the
//! `_nbi` operations deliver by `quiet`, and `iput` / `iget` put every
//! element where its strides say (zero and negative strides included) and
//! touch nothing between.

use pgas_tests::cbuild::{assert_check_lines, compile_shmem};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Output;
use std::sync::OnceLock;

/// The program, compiled once.
fn program() -> PathBuf {
    static PROG: OnceLock<PathBuf> = OnceLock::new();
    PROG.get_or_init(|| compile_shmem("shmem_semantics"))
        .clone()
}

fn oshrun(np: usize, mode: &str, env: &[(&str, &str)]) -> Output {
    let mut env = env.to_vec();
    env.push(("PGAS_PEER_TIMEOUT", "60"));
    pgas_tests::cbuild::oshrun(&program(), np, &[mode], &env)
}

/// Runs `mode`, asserts success and one CHECK line per PE; returns them by PE.
fn checks(np: usize, mode: &str, env: &[(&str, &str)]) -> Vec<HashMap<String, String>> {
    let out = oshrun(np, mode, env);
    assert_check_lines(&out, np, &format!("{mode} on {np} PEs {env:?}"))
}

const TCP: [(&str, &str); 2] = [
    ("PGAS_PROVIDER", "tcp;ofi_rxm"),
    ("PGAS_LOCAL_PATH", "fabric"),
];

/// What the specification's example computes, by world PE: team_2 is the
/// even PEs, team_3 every third; each receives its left neighbour's team
/// number in each team it is in (-1 if in none); PE 0 sums, over the PEs
/// in both teams, the two values they received; the fetch reads world PE 3's
/// val_3 (team_3's PE 1) on every PE of team_3.
fn team_ctx_expected(n: usize) -> Vec<[i64; 4]> {
    let t2: Vec<usize> = (0..n).step_by(2).collect();
    let t3: Vec<usize> = (0..n).step_by(3).collect();
    let received = |team: &[usize], pe: usize| -> i64 {
        match team.iter().position(|&p| p == pe) {
            Some(r) => ((r + team.len() - 1) % team.len()) as i64,
            None => -1,
        }
    };
    let sum: i64 = (0..n)
        .filter(|p| t2.contains(p) && t3.contains(p))
        .map(|p| received(&t2, p) + received(&t3, p))
        .sum();
    (0..n)
        .map(|pe| {
            let fetched = if t3.contains(&pe) && t3.len() > 1 {
                received(&t3, t3[1])
            } else {
                -1
            };
            [
                received(&t2, pe),
                received(&t3, pe),
                if pe == 0 { sum } else { 0 },
                fetched,
            ]
        })
        .collect()
}

fn run_team_ctx(np: usize, env: &[(&str, &str)]) {
    let want = team_ctx_expected(np);
    for (pe, m) in checks(np, "team-ctx", env).iter().enumerate() {
        let got = ["val_2", "val_3", "sum", "fetched"].map(|k| m[k].parse::<i64>().unwrap());
        assert_eq!(
            got, want[pe],
            "PE {pe} of {np} {env:?}: val_2 val_3 sum fetched"
        );
    }
}

#[test]
fn team_contexts_number_pes_in_their_team() {
    // 4 PEs: the case (team_2 = {0, 2}: sum 2 on PE 0); 6: both
    // teams larger than 2.
    assert_eq!(team_ctx_expected(4)[0][2], 2);
    run_team_ctx(4, &[]);
    run_team_ctx(6, &[]);
    run_team_ctx(4, &TCP);
}

#[test]
fn a_pe_outside_the_contexts_team_ends_the_job_naming_it() {
    let out = oshrun(4, "team-ctx-bad-pe", &[]);
    assert!(!out.status.success(), "must fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("shmem_ctx_int_put")
            && err.contains("PE 2 is out of range for the context's team"),
        "names the call, the PE and the team:\n{err}"
    );
}

#[test]
fn test_any_and_wait_until_any_give_every_satisfied_index_its_turn() {
    for np in [2, 3] {
        for (pe, m) in checks(np, "fair-any", &[]).iter().enumerate() {
            assert_eq!(m["test_any"], np.to_string(), "PE {pe} of {np}: test_any");
            assert_eq!(
                m["wait_until_any"],
                np.to_string(),
                "PE {pe} of {np}: wait_until_any"
            );
            assert_eq!(m["last"], (np - 1).to_string(), "PE {pe}: the status array");
        }
    }
}

#[test]
fn an_exhausted_symmetric_heap_names_shmem_symmetric_size() {
    let out = oshrun(2, "heap-exhausted", &[("SHMEM_SYMMETRIC_SIZE", "8M")]);
    assert!(!out.status.success(), "must fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("shmem_malloc")
            && err.contains("symmetric heap is exhausted")
            && err.contains("SHMEM_SYMMETRIC_SIZE=8M")
            && err.contains("set SHMEM_SYMMETRIC_SIZE"),
        "tells the OpenSHMEM knob:\n{err}"
    );
}

#[test]
fn non_blocking_operations_deliver_by_quiet() {
    for env in [&[][..], &TCP[..]] {
        for (pe, m) in checks(3, "nbi", env).iter().enumerate() {
            for k in ["put", "big", "fetch", "get"] {
                assert_eq!(m[k], "1", "PE {pe} {env:?}: {k}");
            }
            assert_eq!(m["counter"], "64", "PE {pe} {env:?}: counter");
        }
    }
}

#[test]
fn strided_transfers_land_where_their_strides_say() {
    for env in [&[][..], &TCP[..]] {
        for (pe, m) in checks(3, "strided", env).iter().enumerate() {
            for k in ["put", "zero", "rev", "int", "get"] {
                assert_eq!(m[k], "1", "PE {pe} {env:?}: {k}");
            }
        }
    }
}
