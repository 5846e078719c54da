//! The library calls of issue 13 beyond teams: point-to-point
//! synchronisation through the Rust API (`tests/examples/p2p_probe.rs`) on
//! every provider, and teams + point-to-point through the C ABI
//! (`tests/c/library_abi.c`, compiled with every warning an error) on two.

use pgas_tests::job::Job;
use pgas_tests::{compile_c, PROVIDERS};

#[test]
fn point_to_point_synchronisation_on_every_provider() {
    for p in PROVIDERS {
        Job::example("p2p_probe", 3)
            .provider(p)
            .secs(240)
            .passes(&["p2p_probe ok: 3 locales"]);
    }
}

/// Comm diagnostics: exact counts of a known mix of operations, on the
/// provider path in every mode (dummy GETs in message-order, fences in
/// message-order-fence, neither in delivery-complete) and on the mapped path.
#[test]
fn comm_diagnostics_count_what_was_issued() {
    let cells: [(&str, &str, &str); 5] = [
        ("shm", "message-order", "fabric"),
        ("shm", "delivery-complete", "mapped"),
        ("tcp;ofi_rxm", "delivery-complete", "fabric"),
        ("sockets", "message-order-fence", "fabric"),
        ("udp;ofi_rxd", "message-order", "fabric"),
    ];
    for (p, mode, path) in cells {
        Job::example("diag_probe", 2)
            .args(&[format!("path={path}"), format!("mode={mode}")])
            .provider(p)
            .env(&[("PGAS_MCM_MODE", mode), ("PGAS_LOCAL_PATH", path)])
            .passes(&[format!("diag_probe ok: 2 locales, {path} path, {mode}")]);
    }
}

/// Static data (.data/.bss) is remotely addressable: PUT, GET and atomics on
/// statics on every provider, on the mapped path too, and bad addresses
/// named in the error.
#[test]
fn static_data_is_remotely_addressable() {
    let cells: [(&str, &str); 5] = [
        ("shm", "mapped"),
        ("shm", "fabric"),
        ("tcp;ofi_rxm", "fabric"),
        ("udp;ofi_rxd", "fabric"),
        ("sockets", "fabric"),
    ];
    for (p, path) in cells {
        Job::example("static_probe", 3)
            .provider(p)
            .env(&[("PGAS_LOCAL_PATH", path)])
            .passes(&[
                "static_probe ok: 3 locales",
                "static_probe atomics ok: 15 entry points on statics",
            ]);
    }
}

#[test]
fn teams_and_point_to_point_through_the_c_abi() {
    let prog = compile_c("library_abi", false);
    for (p, n) in [("shm", 4), ("tcp;ofi_rxm", 3)] {
        Job::new(prog.clone(), n)
            .provider(p)
            .secs(180)
            .passes(&[format!("library_abi ok: {n} locales")]);
    }
}

#[test]
fn pgas_info_lists_every_knob_and_pgas_log_installs_a_subscriber() {
    let r = Job::example("histogram", 2)
        .env(&[("PGAS_INFO", "1"), ("PGAS_LOG", "not a filter===")])
        .succeeds();
    // Every knob of the table, each on a line of its own.
    for k in comm_ofi::knobs::KNOBS.iter().map(|k| k.name) {
        assert!(
            r.stderr
                .lines()
                .any(|l| l.split_whitespace().next() == Some(k)),
            "PGAS_INFO did not list {k}:\n{}",
            r.stderr
        );
    }
    assert_eq!(
        r.stderr.matches("pgas-comm knobs in force").count(),
        1,
        "printed by locale 0 only"
    );
    assert!(
        r.stderr.contains("does not parse") && r.stderr.contains("WARN"),
        "the subscriber PGAS_LOG asked for did not report the bad filter:\n{}",
        r.stderr
    );
}
