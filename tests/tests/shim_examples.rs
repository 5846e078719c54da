//! The runtime shim's example programs (`runtime-shim/examples/`: `gups`,
//! `on_ring`, `stencil`), each of which checks its own result, prints the
//! MCM mode and provider, and exits non-zero on a wrong answer.
//!
//! By default a modest set of cells runs (every example, every provider at
//! least once, every MCM mode at least once, 2 and 4 locales). With
//! `PGAS_SHIM_MATRIX=full` every example runs under `pgasrun -n 2` and `-n 4`
//! in every (provider, MCM mode) cell; the cells a provider cannot honour
//! (docs/providers.md) must fail cleanly with an error naming what it
//! supports. The full matrix (72 cells) takes about 2 minutes once built.

use pgas_tests::job::Job;

/// (example, its arguments for a quick run; sockets gets smaller ones).
const EXAMPLES: [(&str, &[&str], &[&str]); 3] = [
    ("gups", &["8000", "2048"], &["2000", "512"]),
    ("on_ring", &["5"], &["2"]),
    ("stencil", &["1000", "40"], &["200", "10"]),
];

const MODES: [&str; 3] = ["message-order-fence", "message-order", "delivery-complete"];

/// Whether the provider honours the mode when forced (docs/providers.md).
fn honours(provider: &str, mode: &str) -> bool {
    match provider {
        "sockets" => true,
        _ => mode != "message-order-fence",
    }
}

fn job(name: &str, n: usize, provider: &str, mode: Option<&str>) -> Job {
    let (_, args, small) = EXAMPLES
        .iter()
        .find(|e| e.0 == name)
        .expect("listed example");
    let args = if provider == "sockets" { small } else { args };
    Job::example(name, n)
        .args(args)
        .provider(provider)
        .env(mode.map(|m| ("PGAS_MCM_MODE", m)).as_slice())
        .secs(300)
        .serial()
}

fn check_ok(name: &str, n: usize, provider: &str, mode: Option<&str>) {
    let job = job(name, n, provider, mode);
    let what = job.what();
    let r = job.succeeds();
    let want = format!("{name}: {n} locales, ");
    let verdict = r
        .stdout
        .lines()
        .find(|l| l.starts_with(&want))
        .unwrap_or_else(|| panic!("{what}: no summary line: {}", r.stdout));
    assert!(verdict.ends_with(": ok"), "{what}: {verdict}");
    assert!(
        verdict.contains(&format!("{provider} provider")),
        "{what}: {verdict}"
    );
    if let Some(m) = mode {
        assert!(
            verdict.contains(&format!(" {m} MCM mode")),
            "{what}: {verdict}"
        );
    }
}

fn check_refused(name: &str, n: usize, provider: &str, mode: &str) {
    job(name, n, provider, Some(mode))
        .fails_naming(&["is not supported by provider", "it supports"]);
}

#[test]
fn gups_histogram() {
    check_ok("gups", 2, "shm", None);
    check_ok("gups", 4, "tcp;ofi_rxm", None); // atomics through AMs
    check_ok("gups", 2, "sockets", Some("message-order-fence"));
}

#[test]
fn ring_of_on_statements() {
    check_ok("on_ring", 4, "shm", None);
    check_ok("on_ring", 2, "udp;ofi_rxd", Some("delivery-complete"));
    check_ok("on_ring", 2, "sockets", None);
}

#[test]
fn stencil_with_puts_and_barriers() {
    check_ok("stencil", 2, "shm", Some("delivery-complete"));
    check_ok("stencil", 4, "udp;ofi_rxd", None);
    check_ok("stencil", 2, "tcp;ofi_rxm", Some("message-order"));
    check_refused("stencil", 2, "shm", "message-order-fence");
}

/// Every example x {2, 4} locales x provider x mode with
/// `PGAS_SHIM_MATRIX=full`; otherwise one extra cell per example on 4
/// locales in a mode the fixed tests above do not use for it.
#[test]
fn examples_matrix() {
    let full = std::env::var("PGAS_SHIM_MATRIX").is_ok_and(|v| v == "full");
    if !full {
        check_ok("stencil", 4, "sockets", Some("delivery-complete"));
        check_ok("on_ring", 4, "tcp;ofi_rxm", Some("message-order"));
        return;
    }
    let mut table = Vec::new();
    for (name, _, _) in EXAMPLES {
        for provider in pgas_tests::PROVIDERS {
            for mode in MODES {
                for n in [2, 4] {
                    let t = std::time::Instant::now();
                    if honours(provider, mode) {
                        check_ok(name, n, provider, Some(mode));
                    } else {
                        check_refused(name, n, provider, mode);
                    }
                    table.push(format!(
                        "{name:8} -n {n} {provider:12} {mode:20} {} {:.1}s",
                        if honours(provider, mode) {
                            "ok     "
                        } else {
                            "refused"
                        },
                        t.elapsed().as_secs_f64()
                    ));
                }
            }
        }
    }
    println!("{}", table.join("\n"));
}
