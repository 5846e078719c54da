//! Bad environment values and impossible provider/mode combinations are
//! clear errors naming the value and what is available, never hangs.

use pgas_tests::example;
use pgas_tests::job::Job;

fn fails_with(env: &[(&str, &str)], needles: &[&str]) {
    Job::example("rma_probe", 2)
        .env(env)
        .secs(60)
        .fails_naming(needles);
}

#[test]
fn unknown_mode_names_value_and_choices() {
    fails_with(
        &[("PGAS_MCM_MODE", "fastest")],
        &["PGAS_MCM_MODE", "\"fastest\"", "message-order"],
    );
}

#[test]
fn unknown_provider_lists_available() {
    fails_with(
        &[("PGAS_PROVIDER", "warp-drive")],
        &["warp-drive", "available here", "tcp;ofi_rxm"],
    );
}

#[test]
fn unsupported_mode_names_supported_ones() {
    // shm has no FI_FENCE.
    fails_with(
        &[
            ("PGAS_PROVIDER", "shm"),
            ("PGAS_MCM_MODE", "message-order-fence"),
        ],
        &["message-order-fence", "shm", "supports: message-order"],
    );
}

#[test]
fn bad_heap_size() {
    fails_with(&[("PGAS_HEAP_SIZE", "12Q")], &["PGAS_HEAP_SIZE", "\"12Q\""]);
}

#[test]
fn bad_mapped_path_and_thread_knobs() {
    for (var, value, also) in [
        ("PGAS_LOCAL_PATH", "shm", "mapped, mapped-heap or fabric"),
        ("PGAS_THREAD_CONTEXTS", "lots", "0 to 1024"),
        ("PGAS_POLL_SPIN_US", "-1", "microseconds"),
        ("PGAS_TEST_HOSTNAMES", "a,", "test-only"),
        ("PGAS_TEST_HOSTNAMES", "a", "rank 1 has none"),
    ] {
        fails_with(&[(var, value)], &[var, also]);
    }
}

/// Runs `probe` on `n` locales through a shell that sets `var=value` on the
/// last locale only (pgasrun gives every locale the same environment).
fn last_locale_differs(n: usize, probe: &str, var: &str, value: &str) -> Job {
    let script = format!(
        "if [ \"$PGAS_RANK\" = {} ]; then export {var}={value}; fi; exec \"$0\"",
        n - 1
    );
    let prog = example(probe);
    Job::new("/bin/sh".into(), n)
        .args(&["-c", &script, prog.to_str().expect("utf-8 path")])
        .secs(60)
}

/// Knobs that decide how atomics are carried must agree job-wide: a locale
/// that differs fails the job on every locale, naming the knob, the values
/// and who has which (issue 21, hole 5).
#[test]
fn locales_that_disagree_on_atomic_routes_are_refused() {
    for (probe, var, value, others) in [
        ("rma_probe", "PGAS_AMO_VIA_AM", "1", "\"0\""),
        ("rma_probe", "PGAS_AM_HANDLERS", "2", "\"1\""),
        ("rma_probe", "PGAS_LOCAL_PATH", "mapped", "\"fabric\""),
        ("p2p_probe", "PGAS_AM_AMO_DELAY", "0", "\"1\""),
    ] {
        last_locale_differs(3, probe, var, value).fails_naming(&[
            format!("{var} must be the same on every locale"),
            format!("locales 0-1 have {others}"),
            format!("locale 2 has \"{value}\""),
        ]);
    }
}
