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

use pgas_tests::cbuild::{assert_check_lines, compile_shmem, oshrun};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Fetching atomics `shmem_nbi.c` issues per PE (6 forms x 200).
const FETCHES: usize = 6 * 200;

const TCP: [(&str, &str); 2] = [
    ("PGAS_PROVIDER", "tcp;ofi_rxm"),
    ("PGAS_LOCAL_PATH", "fabric"),
];

/// The program, compiled once with `oshcc` (the libraries built first).
fn program() -> PathBuf {
    static PROG: OnceLock<PathBuf> = OnceLock::new();
    PROG.get_or_init(|| compile_shmem("shmem_nbi")).clone()
}

/// Runs the program on `np` PEs; one CHECK line per PE, by PE.
fn checks(np: usize, env: &[(&str, &str)]) -> Vec<HashMap<String, String>> {
    let mut all = vec![("PGAS_PEER_TIMEOUT", "60")];
    all.extend_from_slice(env);
    let out = oshrun(&program(), np, &[], &all);
    assert_check_lines(&out, np, &format!("{np} PEs {env:?}"))
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
