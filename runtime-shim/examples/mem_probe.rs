//! Resident memory of each locale (issue 23, item 5): after start-up, after
//! every worker has run a task that PUTs to every other locale (so each
//! worker's transmit context has been used), and after a barrier. Each
//! locale prints one line: `mem_probe: locale L of N, W workers, PROVIDER:
//! rss start-up S KiB, after use U KiB, peak P KiB` (from
//! /proc/self/status). Run: `pgasrun -n 2 target/release/examples/mem_probe`
//! with `PGAS_NUM_WORKERS` and `PGAS_PROVIDER` as wanted; `MEM_PROBE_SMAPS=1`
//! also lists locale 0's largest mappings by resident size.

use runtime_shim::Builder;
use std::process::ExitCode;

/// A field of /proc/self/status in KiB (`VmRSS`, `VmHWM`), 0 if unreadable.
fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The `n` mappings of /proc/self/smaps with the largest Rss: (KiB, name).
fn top_mappings(n: usize) -> Vec<(u64, String)> {
    let s = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let mut out = Vec::new();
    let mut name = String::new();
    for l in s.lines() {
        let first = l.split_whitespace().next().unwrap_or("");
        if first.contains('-') && !first.ends_with(':') {
            name = l.split_whitespace().skip(5).collect::<Vec<_>>().join(" ");
            let range = first.to_string();
            if name.is_empty() {
                name = format!("[anon {range}]");
            }
        } else if let Some(v) = l.strip_prefix("Rss:") {
            let kib = v.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            out.push((kib, name.clone()));
        }
    }
    out.sort_by_key(|m| std::cmp::Reverse(m.0));
    out.truncate(n);
    out
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let rt = match Builder::new().init() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mem_probe: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let run = || -> runtime_shim::Result<(u64, u64)> {
        let words = rt.alloc_all::<u64>(rt.num_workers().max(1))?;
        rt.barrier()?;
        let start = status_kib("VmRSS");
        let me = rt.here();
        let n = rt.num_locales();
        let mut handles = Vec::new();
        for w in 0..rt.num_workers() {
            let words = words.clone();
            handles.push(rt.spawn(move || -> runtime_shim::Result<()> {
                for l in (0..n).filter(|&l| l != me) {
                    let at = words.at(l).expect("allocated on every locale");
                    rt.put_value(at.add(w), w as u64)?;
                }
                Ok(())
            })?);
        }
        for h in handles {
            h.join()??;
        }
        rt.barrier()?;
        Ok((start, status_kib("VmRSS")))
    };
    let code = match run() {
        Ok((start, used)) => {
            println!(
                "mem_probe: locale {} of {}, {} workers, {}: rss start-up {start} KiB, after use \
                 {used} KiB, peak {} KiB",
                rt.here(),
                rt.num_locales(),
                rt.num_workers(),
                rt.provider_name(),
                status_kib("VmHWM")
            );
            if std::env::var("MEM_PROBE_SMAPS").is_ok_and(|v| v == "1") && rt.here() == 0 {
                for (kib, name) in top_mappings(12) {
                    println!("mem_probe:   {kib:>9} KiB  {name}");
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mem_probe: locale {}: {e}", rt.here());
            ExitCode::FAILURE
        }
    };
    if let Err(e) = rt.finalize() {
        eprintln!("mem_probe: finalize: {e}");
        return ExitCode::FAILURE;
    }
    code
}
