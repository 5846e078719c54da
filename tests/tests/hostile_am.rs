//! A locale that receives malformed active messages from the fabric drops
//! each with a log line naming what is wrong and keeps serving the other
//! locales (issue 39; docs/fuzzing.md). Program: `tests/examples/hostile_am.rs`.

use pgas_tests::{example, launch};
use std::sync::Mutex;
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

fn malformed_messages_are_dropped(provider: &str, path: &str) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = launch(
        3,
        &example("hostile_am"),
        &[],
        &[
            ("PGAS_PROVIDER", provider),
            ("PGAS_LOCAL_PATH", path),
            ("PGAS_LOG", "error"),
        ],
        Duration::from_secs(120),
    );
    run.assert_ok(&format!("hostile_am on {provider}"));
    assert!(
        run.stdout
            .contains("hostile_am locale 1 dropped 14 malformed messages and served on"),
        "{run:?}"
    );
    assert!(run.stdout.contains("hostile_am ok"), "{run:?}");
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
