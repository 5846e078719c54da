//! Teams and collectives (`tests/examples/team_probe.rs`) on every provider,
//! with 3 and 4 locales, in each provider's preferred mode and in
//! delivery-complete: world and split teams, every collective, a failure on
//! one member reaching all, bad input. Large reductions
//! (`tests/examples/reduce_probe.rs`) at 1 to 4 locales on the mapped path
//! and over tcp: the same bits on every locale, in rank order.

use pgas_tests::{example, launch, PROVIDERS};
use std::time::Duration;

fn probe(n: usize, provider: &str, mode: Option<&str>) {
    let mut env = vec![("PGAS_PROVIDER", provider), ("PGAS_HEAP_SIZE", "64M")];
    if let Some(m) = mode {
        env.push(("PGAS_MCM_MODE", m));
    }
    let run = launch(
        n,
        &example("team_probe"),
        &[],
        &env,
        Duration::from_secs(240),
    );
    run.assert_ok(&format!("team_probe -n {n} on {provider} {mode:?}"));
    assert!(
        run.stdout.contains(&format!("team_probe ok: {n} locales")),
        "{}",
        run.stdout
    );
}

#[test]
fn teams_and_collectives_on_every_provider() {
    for p in PROVIDERS {
        probe(4, p, None);
    }
    probe(3, "shm", None);
    probe(3, "udp;ofi_rxd", None);
}

#[test]
fn teams_in_delivery_complete_mode() {
    for p in ["shm", "tcp;ofi_rxm"] {
        probe(4, p, Some("delivery-complete"));
    }
}

fn reduce_probe(n: usize, env: &[(&str, &str)]) {
    let mut env = env.to_vec();
    env.push(("PGAS_HEAP_SIZE", "64M"));
    let run = launch(
        n,
        &example("reduce_probe"),
        &[],
        &env,
        Duration::from_secs(300),
    );
    run.assert_ok(&format!("reduce_probe -n {n} {env:?}"));
    assert!(
        run.stdout
            .contains(&format!("reduce_probe ok: {n} locales")),
        "{}",
        run.stdout
    );
}

#[test]
fn large_reductions_are_the_same_bits_on_every_locale() {
    for n in 1..=4 {
        reduce_probe(n, &[]);
    }
    let fabric = [
        ("PGAS_PROVIDER", "tcp;ofi_rxm"),
        ("PGAS_LOCAL_PATH", "fabric"),
    ];
    reduce_probe(2, &fabric);
    reduce_probe(3, &fabric);
}
