//! Failures of the AM layer are loud and quick: a locale that dies while
//! others wait for its 'done' takes the job down with a message naming it;
//! a body id unknown at the target brings the job down naming the id; bad
//! AM environment values are errors naming the variable and value.
//! Program: `amhandler/examples/am_probe.rs`.

use pgas_tests::{example, launch};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

fn died_while_waited_on(provider: &str) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let run = launch(
        3,
        &example("am_probe"),
        &["die"],
        &[("PGAS_PROVIDER", provider)],
        Duration::from_secs(120),
    );
    let took = t0.elapsed();
    assert!(!run.ok(), "job survived a dead locale: {run:?}");
    assert!(
        took < Duration::from_secs(20),
        "job took {took:?} to fail (the launcher timeout is 120 s): {run:?}"
    );
    assert!(
        run.stderr.contains("locale 2") && run.stderr.contains("exited with status 3"),
        "failure message does not name the dead locale: {}",
        run.stderr
    );
    assert!(!run.stdout.contains("am_probe die ok"), "{}", run.stdout);
}

#[test]
fn dead_locale_fails_the_job_shm() {
    died_while_waited_on("shm");
}

#[test]
fn dead_locale_fails_the_job_tcp_rxm() {
    died_while_waited_on("tcp;ofi_rxm");
}

#[test]
fn unknown_body_id_brings_the_job_down() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let run = launch(
        2,
        &example("am_probe"),
        &["unknown"],
        &[("PGAS_PROVIDER", "shm")],
        Duration::from_secs(120),
    );
    assert!(!run.ok(), "{run:?}");
    assert!(t0.elapsed() < Duration::from_secs(20), "{run:?}");
    let id = format!("{:#x}", amhandler_id("only_on_0"));
    assert!(
        run.stderr.contains(&id) && run.stderr.contains("no body is registered"),
        "message does not name the id {id}: {}",
        run.stderr
    );
}

/// The name-derived id of amhandler (FNV-1a 64 with bit 63 set), restated
/// here so that a change of the id scheme is noticed.
fn amhandler_id(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    }) | 1 << 63
}

#[test]
fn bad_am_environment_values_are_named() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for (var, val) in [
        ("PGAS_AM_LZ_SIZE", "12Q"),
        ("PGAS_AM_LZ_SIZE", "32K"),
        ("PGAS_AM_HANDLERS", "0"),
        ("PGAS_AM_EXECUTORS", "lots"),
        ("PGAS_AM_HANDLER_CORE", "4096"),
        ("PGAS_AMO_VIA_AM", "perhaps"),
        ("PGAS_AM_DONE", "pigeon"),
    ] {
        let run = launch(
            2,
            &example("am_probe"),
            &["kinds"],
            &[("PGAS_PROVIDER", "shm"), (var, val)],
            Duration::from_secs(60),
        );
        assert!(!run.ok(), "{var}={val} accepted: {run:?}");
        assert!(
            run.stderr.contains(var) && run.stderr.contains(val),
            "{var}={val}: message does not name them: {}",
            run.stderr
        );
    }
}
