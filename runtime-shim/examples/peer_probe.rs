//! The operations of the Lamellar probe (`shared/peers/lamellar_probe`),
//! through our public API, for `scripts/peers`: locale 0 against one 8-byte
//! element on locale 1, one operation in flight, each timed over ITERS
//! operations, from the main thread and from inside a task:
//!
//! * blocking PUT (`Runtime::put_value`), GET (`get_value`), fetch-add
//!   (`AtomicRef::fetch_add`);
//! * the blocking on-statement returning a value (`Runtime::on`: the body
//!   runs as a task on a worker there) and its fast form (`on_fast`: the
//!   body runs in the target's AM thread);
//! * the rate of unordered adds (`add_unordered` in rounds of 16 ITERS,
//!   then `unordered_fence`), Lamellar's `AtomicArray::add(..).spawn()` +
//!   `wait_all`.
//!
//! PUT, GET, fetch-add and the add rate repeat rounds of ITERS until 50 ms
//! have passed (ours take nanoseconds: 5000 of them would be 30 us, decided
//! by any one preemption); the on-statements run min(ITERS, 5000) once, as
//! the peer's AM loop does.
//!
//! Prints one line per figure: `ours <metric> <value>` (us per op, or Mops),
//! then the verbose selection line on stderr (`PGAS_VERBOSE=1`).
//!
//! Run: `pgasrun -n 2 target/release/examples/peer_probe [ITERS]`;
//! `peer_probe --report FILE` turns the collected lines of several runs of
//! both probes into the markdown table of docs/performance.md (scripts/peers
//! does both).

use runtime_shim::{Builder, GlobalPtr, Runtime};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

fn per_op_us(t: Instant, n: usize) -> f64 {
    t.elapsed().as_secs_f64() / n as f64 * 1e6
}

/// Sub-microsecond operations: rounds of `iters` until at least 50 ms have
/// passed (5000 of them take 30 us, where one preemption would decide the
/// figure); returns microseconds per operation.
fn timed(
    iters: usize,
    mut op: impl FnMut(usize) -> runtime_shim::Result<()>,
) -> runtime_shim::Result<f64> {
    let t = Instant::now();
    let mut n = 0;
    while n == 0 || t.elapsed().as_millis() < 50 {
        for i in 0..iters {
            op(i)?;
        }
        n += iters;
    }
    Ok(per_op_us(t, n))
}

/// Every figure, measured by the calling thread; `tag` is `main` or `task`.
fn measure(
    rt: &'static Runtime,
    cell: GlobalPtr<u64>,
    ping: runtime_shim::FnId,
    iters: usize,
    tag: &str,
) -> runtime_shim::Result<Vec<(String, f64)>> {
    let mut out = Vec::new();
    let a = rt.atomic(cell);
    for i in 0..100 {
        rt.put_value(cell, i)?;
    }
    let put = timed(iters, |i| rt.put_value(cell, i as u64))?;
    out.push((format!("put_{tag}_us"), put));
    let mut s = 0u64;
    let get = timed(iters, |_| {
        s = s.wrapping_add(rt.get_value(cell)?);
        Ok(())
    })?;
    out.push((format!("get_{tag}_us"), get));
    std::hint::black_box(s);
    let fadd = timed(iters, |_| {
        std::hint::black_box(a.fetch_add(1)?);
        Ok(())
    })?;
    out.push((format!("fetch_add_{tag}_us"), fadd));
    let on_iters = iters.min(5000);
    for (name, fast) in [("on", false), ("on_fast", true)] {
        let t = Instant::now();
        for i in 0..on_iters {
            let arg = (i as u64).to_le_bytes();
            let r = if fast {
                rt.on_fast(1, ping, &arg)?
            } else {
                rt.on(1, ping, &arg)?
            };
            if r.len() != 8 || u64::from_le_bytes(r[..8].try_into().expect("8")) != i as u64 + 1 {
                return Err(runtime_shim::Error::State(format!(
                    "on-statement {i} answered {r:?}"
                )));
            }
        }
        out.push((format!("{name}_{tag}_us"), per_op_us(t, on_iters)));
    }
    let rate = timed(iters * 16, |_| a.add_unordered(1))
        .and_then(|us| rt.unordered_fence().map(|()| 1.0 / us))?;
    out.push((format!("add_rate_{tag}_Mops"), rate));
    Ok(out)
}

fn probe(iters: usize) -> runtime_shim::Result<()> {
    let b = Builder::new();
    let ping = b.register("peer-probe.ping", |_, args| {
        let v = u64::from_le_bytes(args.try_into().unwrap_or([0; 8]));
        (v + 1).to_le_bytes().to_vec()
    })?;
    let rt = b.init()?;
    if rt.num_locales() < 2 {
        return Err(runtime_shim::Error::State(
            "peer_probe needs 2 locales (pgasrun -n 2)".into(),
        ));
    }
    let d = rt.alloc_all::<u64>(1024)?;
    rt.barrier()?;
    if rt.here() == 0 {
        let cell = d.at(1)?.add(8);
        let mut lines = measure(rt, cell, ping, iters, "main")?;
        let t = rt.spawn(move || measure(rt, cell, ping, iters, "task"))?;
        lines.extend(t.join()??);
        for (k, v) in lines {
            println!("ours {k} {v:.4}");
        }
        eprintln!("peer_probe: {}", rt.describe());
    }
    rt.barrier()?;
    rt.finalize()
}

/// Reads `ours <metric> <value>` and Lamellar's `lamellar_<metric> <value>`
/// lines of several runs and prints the markdown table.
fn report(path: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut seen: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (k, v) = match f.as_slice() {
            ["ours", k, v, ..] => (format!("ours_{k}"), v),
            [k, v, ..] if k.starts_with("lamellar_") => (k.to_string(), v),
            _ => continue,
        };
        if let Ok(x) = v.parse::<f64>() {
            seen.entry(k).or_default().push(x);
        }
    }
    let stat = |k: &str| -> Option<(f64, f64, f64)> {
        let mut v = seen.get(k)?.clone();
        v.sort_by(f64::total_cmp);
        Some((v[v.len() / 2], v[0], v[v.len() - 1]))
    };
    let cell = |k: &str| match stat(k) {
        Some((med, lo, hi)) => format!("{} ({}-{}, {:.2}x)", fmt(med), fmt(lo), fmt(hi), hi / lo),
        None => "-".into(),
    };
    let runs = seen.values().map(|v| v.len()).max().unwrap_or(0);
    println!("Median of {runs} runs (min-max, spread = max/min); ratio = ours / Lamellar on the medians (below 1: we are faster; for the rate, Lamellar / ours).\n");
    println!("| op | Lamellar shmem | ours, main thread | ours, in a task | ratio main | ratio task | target |");
    println!("|---|---|---|---|---|---|---|");
    let rows: [(&str, &str, &str, bool, &str); 6] = [
        (
            "blocking 8 B PUT (us)",
            "lamellar_unsafearray_put_u64_block_us",
            "put",
            false,
            "<= 0.06",
        ),
        (
            "blocking 8 B GET (us)",
            "lamellar_unsafearray_get_u64_block_us",
            "get",
            false,
            "<= 0.1",
        ),
        (
            "fetch-add u64 (us)",
            "lamellar_atomicarray_fetch_add_block_us",
            "fetch_add",
            false,
            "<= 0.08",
        ),
        (
            "on-statement round trip returning a value (us)",
            "lamellar_am_roundtrip_us",
            "on",
            false,
            "<= 10",
        ),
        (
            "fast on-statement round trip (us)",
            "lamellar_am_roundtrip_us",
            "on_fast",
            false,
            "<= 10",
        ),
        (
            "unordered atomic add rate (Mops)",
            "lamellar_atomicarray_add_rate_Mops",
            "add_rate",
            true,
            ">= 5",
        ),
    ];
    for (name, peer, ours, rate, target) in rows {
        let unit = if rate { "Mops" } else { "us" };
        let m = format!("ours_{ours}_main_{unit}");
        let t = format!("ours_{ours}_task_{unit}");
        let ratio = |k: &str| match (stat(k), stat(peer)) {
            (Some((o, _, _)), Some((p, _, _))) if o > 0.0 && p > 0.0 => {
                format!("{:.2}x", if rate { p / o } else { o / p })
            }
            _ => "-".into(),
        };
        println!(
            "| {name} | {} | {} | {} | {} | {} | {target} |",
            cell(peer),
            cell(&m),
            cell(&t),
            ratio(&m),
            ratio(&t)
        );
    }
    Ok(())
}

fn fmt(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--report") {
        let Some(path) = args.get(2) else {
            eprintln!("usage: peer_probe --report FILE");
            return ExitCode::FAILURE;
        };
        return match report(path) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("peer_probe: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let iters = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5000);
    match probe(iters) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peer_probe: {e}");
            ExitCode::FAILURE
        }
    }
}
