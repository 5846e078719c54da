//! OOB smoke test and test helper: `pgasrun -n 4 pgas-oob-probe` checks that
//! the collectives give the right answers on every locale. The integration
//! tests use its other modes to make a locale fail in each way pgasrun must
//! handle.
//!
//! Usage: pgas-oob-probe [MODE [ARGS...]]
//!   check                 collectives with known answers (default); prints "rank R of N: ok"
//!   info                  prints "rank R of N"
//!   threads               concurrent collectives from several threads of each locale
//!   lines COUNT           COUNT numbered lines on stdout, one on stderr
//!   pid                   prints "pid RANK PID", then sleeps forever
//!   exit CODE RANK        after a barrier, RANK exits with CODE; others sleep
//!   signal SIG RANK       after a barrier, RANK kills itself (SEGV, ABRT, KILL, TERM, INT)
//!   abort MSG RANK        after a barrier, RANK calls abort(MSG); others sleep
//!   leave RANK            RANK exits 0 at once; the others enter a barrier
//!   mismatch              rank 0 enters a barrier, the others an allgather
//!   mismatch-kind         rank 0 broadcasts (root 0), the others allgather
//!   mismatch-root         rank 0 broadcasts from root 1, the others from root 0
//!   sleep                 connects, then sleeps forever
//!   sleep-noconnect       ignores SIGTERM, never connects, sleeps forever
//!   env VAR               prints "VAR=value" or "VAR unset"

use std::io::Write;
use std::time::Duration;

use bootstrap::Oob;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("check");
    let arg = |i: usize| -> &str {
        args.get(i)
            .map(String::as_str)
            .unwrap_or_else(|| fail(&format!("mode {mode}: missing argument {i}")))
    };
    let num = |i: usize| -> usize {
        arg(i)
            .parse()
            .unwrap_or_else(|_| fail(&format!("argument {i} '{}' is not a number", arg(i))))
    };

    // Modes that must not touch the OOB.
    match mode {
        "sleep-noconnect" => {
            // SAFETY: setting a signal to SIG_IGN installs no handler code.
            unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
            sleep_forever();
        }
        "env" => {
            let var = arg(1);
            match std::env::var(var) {
                Ok(v) => println!("{var}={v}"),
                Err(_) => println!("{var} unset"),
            }
            return;
        }
        _ => {}
    }

    let oob = bootstrap::from_env().unwrap_or_else(|e| {
        eprintln!("pgas-oob-probe: {e}");
        std::process::exit(3)
    });
    let (rank, size) = (oob.rank(), oob.size());
    let ok = |r: Result<(), bootstrap::OobError>| {
        r.unwrap_or_else(|e| fail(&format!("rank {rank}: {e}")))
    };

    match mode {
        "check" => {
            if let Err(msg) = check(&*oob) {
                fail(&format!("rank {rank} of {size}: FAILED: {msg}"));
            }
            println!("rank {rank} of {size}: ok");
        }
        "info" => println!("rank {rank} of {size}"),
        "threads" => {
            std::thread::scope(|s| {
                for t in 0..4 {
                    let oob = &*oob;
                    s.spawn(move || {
                        for i in 0..25 {
                            // Same kind on every thread, so the interleaving
                            // does not matter to the matching.
                            let got = oob
                                .allgather(&(rank as u32).to_le_bytes())
                                .unwrap_or_else(|e| fail(&format!("thread {t} round {i}: {e}")));
                            for (r, v) in got.iter().enumerate() {
                                if v[..] != (r as u32).to_le_bytes() {
                                    fail(&format!("thread {t} round {i}: part {r} is {v:?}"));
                                }
                            }
                        }
                    });
                }
            });
            println!("rank {rank} of {size}: threads ok");
        }
        "lines" => {
            ok(oob.barrier());
            let filler = "x".repeat(100);
            let mut out = std::io::stdout().lock();
            for i in 0..num(1) {
                // Two writes per line: forwarding must still keep it whole.
                let _ = write!(out, "rank {rank} line {i} ");
                let _ = out.flush();
                let _ = writeln!(out, "{filler}");
            }
            drop(out);
            eprintln!("rank {rank} stderr");
        }
        "pid" => {
            println!("pid {rank} {}", std::process::id());
            sleep_forever();
        }
        "exit" => {
            ok(oob.barrier());
            if rank == num(2) {
                std::process::exit(num(1) as i32);
            }
            sleep_forever();
        }
        "signal" => {
            ok(oob.barrier());
            if rank == num(2) {
                let sig = match arg(1) {
                    "SEGV" => libc::SIGSEGV,
                    "ABRT" => libc::SIGABRT,
                    "KILL" => libc::SIGKILL,
                    "TERM" => libc::SIGTERM,
                    "INT" => libc::SIGINT,
                    other => fail(&format!("unknown signal {other}")),
                };
                // Rust installs a SIGSEGV handler (stack overflow detection);
                // restore the default so the signal kills us.
                // SAFETY: setting SIG_DFL installs no handler code.
                unsafe { libc::signal(sig, libc::SIG_DFL) };
                // SAFETY: raise(3) takes an integer; the default action ends
                // the process.
                unsafe { libc::raise(sig) };
                fail("still alive after raise");
            }
            sleep_forever();
        }
        "abort" => {
            ok(oob.barrier());
            if rank == num(2) {
                oob.abort(arg(1));
            }
            sleep_forever();
        }
        "leave" => {
            if rank == num(1) {
                std::process::exit(0);
            }
            ok(oob.barrier());
            println!("rank {rank}: barrier returned although a locale left");
        }
        "mismatch" => {
            if rank == 0 {
                ok(oob.barrier());
            } else {
                oob.allgather(b"x")
                    .unwrap_or_else(|e| fail(&format!("rank {rank}: {e}")));
            }
            println!("rank {rank}: mismatched collective returned");
        }
        "mismatch-kind" => {
            let r = if rank == 0 {
                oob.broadcast(0, b"x").map(|_| ())
            } else {
                oob.allgather(b"x").map(|_| ())
            };
            r.unwrap_or_else(|e| fail(&format!("rank {rank}: {e}")));
            println!("rank {rank}: mismatched collective returned");
        }
        "mismatch-root" => {
            let root = usize::from(rank == 0);
            oob.broadcast(root, b"x")
                .unwrap_or_else(|e| fail(&format!("rank {rank}: {e}")));
            println!("rank {rank}: mismatched collective returned");
        }
        "sleep" => {
            println!("rank {rank} sleeping");
            sleep_forever();
        }
        other => fail(&format!("unknown mode '{other}'")),
    }
}

/// Expected allgather contribution of `rank` in round `round`: lengths
/// differ per rank (rank 0's is empty in round 0).
fn payload(rank: usize, round: usize) -> Vec<u8> {
    (0..rank * 3 + round)
        .map(|i| (i * 31 + rank * 7 + round) as u8)
        .collect()
}

fn check(oob: &dyn Oob) -> Result<(), String> {
    let (rank, size) = (oob.rank(), oob.size());
    // The launcher's own idea of our rank: pgasrun's, else a PMIx
    // launcher's (mpirun, srun --mpi=pmix).
    for var in ["PGAS_RANK", "PMIX_RANK"] {
        if let Ok(r) = std::env::var(var) {
            if r != rank.to_string() {
                return Err(format!("{var}={r} but rank() = {rank}"));
            }
            break;
        }
    }
    for var in ["PGAS_SIZE", "OMPI_COMM_WORLD_SIZE"] {
        if let Ok(n) = std::env::var(var) {
            if n != size.to_string() {
                return Err(format!("{var}={n} but size() = {size}"));
            }
            break;
        }
    }
    for round in 0..10 {
        let got = oob
            .allgather(&payload(rank, round))
            .map_err(|e| e.to_string())?;
        if got.len() != size {
            return Err(format!("allgather gave {} parts", got.len()));
        }
        for (r, part) in got.iter().enumerate() {
            if *part != payload(r, round) {
                return Err(format!(
                    "allgather round {round}: part {r} is wrong ({part:?})"
                ));
            }
        }
    }
    // A big one: 1 MiB per locale.
    let big = |r: usize| -> Vec<u8> { (0..1 << 20).map(|i: usize| (i ^ r) as u8).collect() };
    let got = oob.allgather(&big(rank)).map_err(|e| e.to_string())?;
    for (r, part) in got.iter().enumerate() {
        if *part != big(r) {
            return Err(format!("1 MiB allgather: part {r} is wrong"));
        }
    }
    for root in 0..size {
        let mine = if rank == root {
            format!("from root {root}").into_bytes()
        } else {
            b"ignored".to_vec()
        };
        let got = oob.broadcast(root, &mine).map_err(|e| e.to_string())?;
        if got != format!("from root {root}").into_bytes() {
            return Err(format!(
                "broadcast from {root} gave {:?}",
                String::from_utf8_lossy(&got)
            ));
        }
        oob.barrier().map_err(|e| e.to_string())?;
    }
    match oob.broadcast(size, b"x") {
        Err(bootstrap::OobError::InvalidRoot { .. }) => {}
        other => return Err(format!("broadcast to root {size} gave {other:?}")),
    }
    Ok(())
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn fail(msg: &str) -> ! {
    let _ = writeln!(std::io::stderr(), "pgas-oob-probe: {msg}");
    std::process::exit(1)
}
