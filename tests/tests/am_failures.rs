//! Failures of the AM layer are loud and quick: a locale that dies while
//! others wait for its 'done' takes the job down with a message naming it;
//! a body id unknown at the target brings the job down naming the id; bad
//! AM environment values are errors naming the variable and value.
//! Program: `amhandler/examples/am_probe.rs`.

use pgas_tests::cbuild::one_job;
use pgas_tests::job::Job;
use std::time::{Duration, Instant};

/// Runs `am_probe SCENARIO` on `n` locales of `provider`, one job at a
/// time: it must fail within 20 s naming every one of `needles`.
fn fails_quickly(n: usize, provider: &str, scenario: &str, needles: &[&str]) -> pgas_tests::Run {
    let _one = one_job();
    let t0 = Instant::now();
    let run = Job::example("am_probe", n)
        .args(&[scenario])
        .provider(provider)
        .fails_naming(needles);
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(20),
        "job took {took:?} to fail (the launcher timeout is 120 s): {run:?}"
    );
    run
}

fn died_while_waited_on(provider: &str) {
    let run = fails_quickly(3, provider, "die", &["locale 2", "exited with status 3"]);
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
    let id = format!("{:#x}", amhandler_id("only_on_0"));
    fails_quickly(2, "shm", "unknown", &[&id, "no body is registered"]);
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
    let _one = one_job();
    for (var, val) in [
        ("PGAS_AM_LZ_SIZE", "12Q"),
        ("PGAS_AM_LZ_SIZE", "32K"),
        ("PGAS_AM_HANDLERS", "0"),
        ("PGAS_AM_EXECUTORS", "lots"),
        ("PGAS_AM_HANDLER_CORE", "4096"),
        ("PGAS_AMO_VIA_AM", "perhaps"),
        ("PGAS_AM_DONE", "pigeon"),
    ] {
        Job::example("am_probe", 2)
            .args(&["kinds"])
            .provider("shm")
            .env(&[(var, val)])
            .secs(60)
            .fails_naming(&[var, val]);
    }
}
