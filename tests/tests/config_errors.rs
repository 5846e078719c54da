//! Bad environment values and impossible provider/mode combinations are
//! clear errors naming the value and what is available, never hangs.

use pgas_tests::{example, launch};
use std::time::Duration;

fn fails_with(env: &[(&str, &str)], needles: &[&str]) {
    let run = launch(2, &example("rma_probe"), &[], env, Duration::from_secs(60));
    assert!(!run.ok(), "{env:?} was accepted:\n{}", run.stdout);
    for n in needles {
        assert!(
            run.stderr.contains(n),
            "{env:?}: stderr does not mention {n:?}:\n{}",
            run.stderr
        );
    }
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
        ("PGAS_LOCAL_PATH", "shm", "mapped or fabric"),
        ("PGAS_THREAD_CONTEXTS", "lots", "0 to 1024"),
        ("PGAS_POLL_SPIN_US", "-1", "microseconds"),
        ("PGAS_TEST_HOSTNAMES", "a,", "test-only"),
        ("PGAS_TEST_HOSTNAMES", "a", "rank 1 has none"),
    ] {
        fails_with(&[(var, value)], &[var, also]);
    }
}
