//! What the examples (`gups`, `stencil`, `on_ring`) share: their command
//! line and how they end. Each example checks its own result on every
//! locale; this gathers the verdicts so that every locale exits alike,
//! prints one summary line from locale 0 (the line the tests and the README
//! look for), finalizes, and turns it all into the exit code.

use runtime_shim::Runtime;
use std::process::ExitCode;

/// Logging as every example sets it up: `tracing` to stderr, filtered by
/// `RUST_LOG`.
fn init_logging() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
}

/// The first `N` positional arguments as numbers above zero, each
/// `defaults[i]` when absent; `None` when one is not such a number.
pub fn positive_args<const N: usize>(defaults: [u64; N]) -> Option<[u64; N]> {
    let mut v = defaults;
    for (slot, a) in v.iter_mut().zip(std::env::args().skip(1)) {
        *slot = a.parse().ok().filter(|n| *n > 0)?;
    }
    Some(v)
}

/// Says how to call the example; exit code 2.
pub fn usage(text: &str) -> ExitCode {
    eprintln!("usage: {text}");
    ExitCode::from(2)
}

/// Every locale's verdict, on every locale: true only if all were.
fn all_ok(rt: &Runtime, ok: bool) -> runtime_shim::Result<bool> {
    let bad = rt.alloc_all::<u64>(1)?;
    if !ok {
        rt.atomic(bad.at(0)?).fetch_add(1)?;
    }
    rt.barrier()?;
    let count = if rt.here() == 0 {
        rt.atomic(bad.at(0)?).read()?
    } else {
        0
    };
    let count = rt.broadcast(count)?;
    rt.free_all(bad)?;
    Ok(count == 0)
}

/// Runs example `name`: sets up logging, starts the runtime with `init` (or
/// says why it could not), then `run` checks its own result on this locale; every locale's
/// verdict is gathered, locale 0 prints `NAME: N locales, MODE MCM mode,
/// PROVIDER provider{detail}: ok` (or `FAILED`), the runtime is finalized,
/// and the exit code is success only if every locale succeeded and
/// finalize did.
pub fn run_example(
    name: &str,
    init: impl FnOnce() -> runtime_shim::Result<&'static Runtime>,
    run: impl FnOnce(&'static Runtime) -> runtime_shim::Result<bool>,
    detail: impl FnOnce(&Runtime) -> String,
) -> ExitCode {
    init_logging();
    let rt = match init() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{name}: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let verdict = match run(rt).and_then(|ok| all_ok(rt, ok)) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{name}: locale {}: {e}", rt.here());
            false
        }
    };
    if rt.here() == 0 {
        println!(
            "{name}: {} locales, {} MCM mode, {} provider{}: {}",
            rt.num_locales(),
            rt.mode(),
            rt.provider_name(),
            detail(rt),
            if verdict { "ok" } else { "FAILED" }
        );
    }
    if let Err(e) = rt.finalize() {
        eprintln!("{name}: finalize: {e}");
        return ExitCode::FAILURE;
    }
    if verdict {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
