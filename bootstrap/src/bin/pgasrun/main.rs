//! `pgasrun -n N PROGRAM [ARGS...]`: starts N locales of a pgas-comm program
//! on this machine and serves their out-of-band start-up exchange. See
//! `args::USAGE` and docs/launcher.md.

mod args;
use bootstrap::collective;
mod conn;
mod event;
mod job;
mod output;
mod sys;

use std::io::Write;

use args::Parsed;

/// Exit status for bad usage or an unusable PROGRAM.
const EXIT_USAGE: i32 = 2;

fn main() {
    std::process::exit(real_main());
}

fn real_main() -> i32 {
    let opts = match args::parse(std::env::args_os().skip(1)) {
        Ok(Parsed::Run(o)) => o,
        Ok(Parsed::Help) => {
            let _ = std::io::stdout().write_all(args::USAGE.as_bytes());
            return 0;
        }
        Ok(Parsed::Version) => {
            let _ = writeln!(std::io::stdout(), "pgasrun {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Err(msg) => {
            job::say(&format!(
                "{msg}\nTry 'pgasrun --help' for more information."
            ));
            return EXIT_USAGE;
        }
    };
    let timeout = match args::job_timeout(opts.timeout, std::env::var_os(args::JOB_TIMEOUT_VAR)) {
        Ok(t) => t,
        Err(msg) => {
            job::say(&msg);
            return EXIT_USAGE;
        }
    };
    init_tracing(opts.verbose);
    let program = match sys::resolve_program(&opts.program) {
        Ok(p) => p,
        Err(msg) => {
            job::say(&msg);
            return EXIT_USAGE;
        }
    };
    tracing::debug!(program = %program.display(), locales = opts.locales, "starting job");
    job::run(job::Spec {
        locales: opts.locales,
        program,
        args: opts.args,
        env: opts.env,
        prefix: opts.prefix,
        timeout,
    })
}

/// Launcher diagnostics go to stderr through tracing: `-v` debug, `-vv`
/// trace, `RUST_LOG` overrides; default only warnings.
fn init_tracing(verbose: u8) {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "debug",
        _ => "trace",
    };
    let filter = std::env::var("RUST_LOG")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .and_then(|s| EnvFilter::try_new(s).ok())
        .unwrap_or_else(|| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}
