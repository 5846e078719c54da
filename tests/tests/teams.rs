//! Teams and collectives (`tests/examples/team_probe.rs`) on every provider,
//! with 3 and 4 locales, in each provider's preferred mode and in
//! delivery-complete: world and split teams, every collective, a failure on
//! one member reaching all, bad input. Large reductions
//! (`tests/examples/reduce_probe.rs`) at 1 to 4 locales on the mapped path
//! and over tcp: the same bits on every locale, in rank order.

use pgas_tests::job::Job;
use pgas_tests::PROVIDERS;

fn probe(n: usize, provider: &str, mode: Option<&str>) {
    Job::example("team_probe", n)
        .provider(provider)
        .env(&[("PGAS_HEAP_SIZE", "64M")])
        .env(mode.map(|m| ("PGAS_MCM_MODE", m)).as_slice())
        .secs(240)
        .passes(&[format!("team_probe ok: {n} locales")]);
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
    Job::example("reduce_probe", n)
        .env(env)
        .env(&[("PGAS_HEAP_SIZE", "64M")])
        .secs(300)
        .passes(&[format!("reduce_probe ok: {n} locales")]);
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
