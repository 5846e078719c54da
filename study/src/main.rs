//! `study`: the performance-study driver (see `study --help` and
//! docs/performance.md), and the programs its jobs run under `pgasrun`.

use indicatif::{MultiProgress, ProgressDrawTarget};
use std::io::IsTerminal;
use std::process::ExitCode;
use study::driver::{self, Options};

/// Tracing output that does not tear the progress bars.
#[derive(Clone)]
struct BarWriter(MultiProgress);

impl std::io::Write for BarWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.suspend(|| std::io::stderr().write_all(buf))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

fn init_tracing(default: &str, mp: Option<MultiProgress>) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal());
    let _ = match mp {
        Some(mp) => b.with_writer(move || BarWriter(mp.clone())).try_init(),
        None => b.with_writer(std::io::stderr).try_init(),
    };
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("locale") => {
            init_tracing("warn", None);
            study::locale::main(&args[1..])
        }
        Some("callgrind-put") => {
            init_tracing("warn", None);
            study::callgrind::put_main(&args[1..])
        }
        Some("callgrind-summary") => {
            init_tracing("warn", None);
            study::callgrind::summary_main(&args[1..])
        }
        _ => {
            let rest = if args.first().map(String::as_str) == Some("run") {
                &args[1..]
            } else {
                &args[..]
            };
            match Options::try_parse_args(rest) {
                // --help on stdout (status 0); a bad value on stderr naming
                // its flag (status 2).
                Err(e) => e.exit(),
                Ok(o) => {
                    let target = if std::io::stderr().is_terminal() {
                        ProgressDrawTarget::stderr()
                    } else {
                        ProgressDrawTarget::hidden()
                    };
                    let mp = MultiProgress::with_draw_target(target);
                    init_tracing("info", Some(mp.clone()));
                    driver::run(&o, &mp).map(|_| ())
                }
            }
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}
