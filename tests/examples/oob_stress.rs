//! The launcher's collectives in a tight loop, as the litmus driver uses
//! them (two barriers and an allgather per round): does the out-of-band
//! exchange itself keep up, or stall, under a launcher (issue 24: the
//! generated litmus suite stalled on the multi-host bed under mpirun).
//!
//! ```text
//! scripts/hosts mpirun 2 target/release/examples/oob_stress ROUNDS
//! ```
//!
//! Prints `oob_stress ok: R rounds, 3R collectives, X us per collective`
//! on locale 0, or, when one collective takes longer than 20 s, on every
//! locale `oob_stress: stalled in collective #K (KIND) of round R` and exit 3.

use runtime_shim::Builder;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The collective in progress (round << 2 | kind) and when it began (ms).
static AT: AtomicU64 = AtomicU64::new(0);
static SINCE_MS: AtomicU64 = AtomicU64::new(0);
const STALL: Duration = Duration::from_secs(20);

fn run() -> Result<(), String> {
    let rounds: u64 = pgas_tests::arg(1, "round count", 1000)?;
    let rt = Builder::new().init().map_err(|e| e.to_string())?;
    let oob = rt.comm().oob();
    let t0 = Instant::now();
    let start = Instant::now();
    let mark = |r: u64, kind: u64| {
        AT.store(r << 2 | kind, Ordering::Relaxed);
        SINCE_MS.store(start.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
    };
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(500));
        let since = SINCE_MS.load(Ordering::Relaxed);
        if since > 0
            && (start.elapsed().as_millis() as u64).saturating_sub(since) > STALL.as_millis() as u64
        {
            let at = AT.load(Ordering::Relaxed);
            let kind = ["barrier", "barrier", "allgather"][(at & 3) as usize % 3];
            let msg = format!(
                "oob_stress: stalled for {} s in collective #{} ({kind}) of round {}",
                STALL.as_secs(),
                (at >> 2) * 3 + (at & 3),
                at >> 2
            );
            eprintln!("{msg}");
            // OOB_STRESS_LOG=DIR: also into DIR/oob_stress-PID.txt (the
            // launcher's output forwarding may be what stalls).
            if let Ok(dir) = std::env::var("OOB_STRESS_LOG") {
                let _ =
                    std::fs::write(format!("{dir}/oob_stress-{}.txt", std::process::id()), &msg);
            }
            std::process::exit(3);
        }
    });
    // Microseconds per collective in each block of 100 rounds: does the
    // cost grow with the number of collectives done?
    let mut blocks = Vec::new();
    let mut tb = Instant::now();
    for r in 0..rounds {
        if r > 0 && r % 100 == 0 {
            blocks.push(tb.elapsed().as_micros() / 300);
            tb = Instant::now();
        }
        mark(r, 0);
        oob.barrier()
            .map_err(|e| format!("round {r}: barrier: {e}"))?;
        mark(r, 1);
        oob.barrier()
            .map_err(|e| format!("round {r}: barrier: {e}"))?;
        mark(r, 2);
        let all = oob
            .allgather(format!("{r}:{}", rt.here()).as_bytes())
            .map_err(|e| format!("round {r}: allgather: {e}"))?;
        for (l, b) in all.iter().enumerate() {
            if b != format!("{r}:{l}").as_bytes() {
                return Err(format!(
                    "round {r}: locale {l} gave {:?}",
                    String::from_utf8_lossy(b)
                ));
            }
        }
    }
    SINCE_MS.store(0, Ordering::Relaxed);
    let n = rounds * 3;
    if rt.here() == 0 {
        println!(
            "oob_stress ok: {rounds} rounds, {n} collectives, {:.0} us per collective",
            t0.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64
        );
        println!("oob_stress us per collective by 100 rounds: {blocks:?}");
    }
    rt.finalize().map_err(|e| e.to_string())?;
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("oob_stress: {e}");
            ExitCode::from(2)
        }
    }
}
