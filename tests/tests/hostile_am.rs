//! A locale that receives malformed active messages from the fabric drops
//! each with a log line naming what is wrong and keeps serving the other
//! locales (issue 39; docs/fuzzing.md). Program: `tests/examples/hostile_am.rs`.

use pgas_tests::job::Job;

fn malformed_messages_are_dropped(provider: &str, path: &str) {
    let run = Job::example("hostile_am", 3)
        .provider(provider)
        .env(&[("PGAS_LOCAL_PATH", path), ("PGAS_LOG", "error")])
        .serial()
        .passes(&[
            "hostile_am locale 1 dropped 14 malformed messages and served on",
            "hostile_am ok",
        ]);
    // One log line per dropped message, each naming what was wrong.
    let drops = run.stderr.matches("dropped a ").count();
    assert_eq!(drops, 14, "log lines of dropped messages: {}", run.stderr);
    for what in [
        "shorter than the 48-byte header",
        "magic",
        "unknown op 200",
        "outside the job of 3 locales",
        "not 8-aligned",
        "argument buffer",
        "unknown atomic code 0xee",
        "not one of ours",
        "destination buffer",
    ] {
        assert!(
            run.stderr.contains(what),
            "no log line says {what:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn malformed_messages_are_dropped_shm() {
    malformed_messages_are_dropped("shm", "fabric");
}

#[test]
fn malformed_messages_are_dropped_mapped() {
    malformed_messages_are_dropped("shm", "mapped");
}

#[test]
fn malformed_messages_are_dropped_tcp_rxm() {
    malformed_messages_are_dropped("tcp;ofi_rxm", "fabric");
}

#[test]
fn malformed_messages_are_dropped_udp_rxd() {
    malformed_messages_are_dropped("udp;ofi_rxd", "fabric");
}
