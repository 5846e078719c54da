//! Smoke test: a ring of PUTs, GETs and fetch-adds across all locales.
//!
//! Run with `pgasrun -n N target/release/examples/smoke`. Every locale writes
//! a pattern into its right neighbour's buffer, reads its left neighbour's
//! back, and all locales fetch-add a counter on every locale; every value is
//! checked. Prints one `ok` line with mode and provider (from locale 0), exits
//! non-zero on any mismatch.

use comm_ofi::{AmoOp, AmoRequest, AmoType, Comm, GlobalAddr};
use std::process::ExitCode;

fn run() -> Result<(usize, String), String> {
    let comm = Comm::init().map_err(|e| format!("init: {e}"))?;
    // The AM layer: progress, and AMOs the provider cannot do natively.
    let am = amhandler::start(comm.clone()).map_err(|e| format!("AM start: {e}"))?;
    let result = ring(&comm);
    if let Err(e) = &result {
        // Report and take the job down (the launcher stops the others).
        let msg = format!("smoke FAILED on locale {}: {e}", comm.here());
        eprintln!("{msg}");
        comm.oob().abort(&msg);
    }
    am.finalize().map_err(|e| e.to_string())?;
    result
}

fn ring(comm: &Comm) -> Result<(usize, String), String> {
    let me = comm.here();
    let n = comm.num_locales();
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    const LEN: usize = 4096;

    // Symmetric allocations: same offsets on every locale.
    let inbox = comm.alloc(LEN, 64).map_err(|e| e.to_string())?;
    let counter = comm.alloc(8, 8).map_err(|e| e.to_string())?;
    let cas_word = comm.alloc(8, 8).map_err(|e| e.to_string())?;
    comm.barrier().map_err(|e| e.to_string())?;

    // PUT a pattern to the right neighbour.
    let pattern: Vec<u8> = (0..LEN).map(|i| (i * 7 + me * 13) as u8).collect();
    let dst = comm.symmetric(inbox, right).map_err(|e| e.to_string())?;
    comm.put(dst, &pattern)
        .map_err(|e| format!("put to {right}: {e}"))?;
    comm.barrier().map_err(|e| e.to_string())?;

    // My inbox must hold the left neighbour's pattern.
    // SAFETY-free check through GET of my own memory (local path) and of the
    // right neighbour's inbox (network path: it holds my pattern).
    let mut mine = vec![0u8; LEN];
    comm.get(&mut mine, inbox).map_err(|e| e.to_string())?;
    let expect_left: Vec<u8> = (0..LEN).map(|i| (i * 7 + left * 13) as u8).collect();
    if mine != expect_left {
        return Err(format!(
            "locale {me}: inbox does not hold locale {left}'s pattern"
        ));
    }
    let mut back = vec![0u8; LEN];
    comm.get(&mut back, dst)
        .map_err(|e| format!("get from {right}: {e}"))?;
    if back != pattern {
        return Err(format!(
            "locale {me}: GET from {right} returned wrong bytes"
        ));
    }

    // Everyone fetch-adds every locale's counter (itself included).
    let mut seen = Vec::new();
    for t in 0..n {
        let c = comm.symmetric(counter, t).map_err(|e| e.to_string())?;
        let old = comm
            .amo(&AmoRequest::new(c, AmoType::I64, AmoOp::Add, (me + 1) as u64).fetching(true))
            .map_err(|e| format!("fetch-add on {t}: {e}"))?;
        seen.push(old);
    }
    comm.barrier().map_err(|e| e.to_string())?;
    let total: u64 = (1..=n as u64).sum();
    let c = comm.symmetric(counter, right).map_err(|e| e.to_string())?;
    let v = comm
        .amo(&AmoRequest::new(c, AmoType::I64, AmoOp::Read, 0).fetching(true))
        .map_err(|e| format!("atomic read on {right}: {e}"))?;
    if v != total {
        return Err(format!(
            "locale {me}: counter on {right} is {v}, expected {total}"
        ));
    }
    if seen.iter().any(|&old| old > total) {
        return Err(format!(
            "locale {me}: fetched impossible old values {seen:?}"
        ));
    }

    // Compare-and-swap race on locale 0: exactly one winner.
    let w = comm.symmetric(cas_word, 0).map_err(|e| e.to_string())?;
    let old = comm
        .amo(&AmoRequest::new(w, AmoType::I64, AmoOp::CompareSwap, (me + 1) as u64).fetching(true))
        .map_err(|e| format!("cas: {e}"))?;
    comm.barrier().map_err(|e| e.to_string())?;
    let winner = comm
        .amo(&AmoRequest::new(w, AmoType::I64, AmoOp::Read, 0).fetching(true))
        .map_err(|e| e.to_string())?;
    if winner == 0 || winner > n as u64 || (old == 0 && winner != (me + 1) as u64) {
        return Err(format!(
            "locale {me}: cas outcome wrong (old {old}, final {winner})"
        ));
    }

    // Swap and write on my right neighbour's word, then verify.
    let sw = GlobalAddr::new(
        right,
        comm.symmetric(counter, right)
            .map_err(|e| e.to_string())?
            .addr,
    );
    comm.barrier().map_err(|e| e.to_string())?;
    comm.amo(&AmoRequest::new(
        sw,
        AmoType::I64,
        AmoOp::Write,
        1000 + me as u64,
    ))
    .map_err(|e| format!("atomic write: {e}"))?;
    let prev = comm
        .amo(&AmoRequest::new(sw, AmoType::I64, AmoOp::Write, 2000 + me as u64).fetching(true))
        .map_err(|e| format!("swap: {e}"))?;
    if prev != 1000 + me as u64 {
        return Err(format!(
            "locale {me}: swap returned {prev}, expected {}",
            1000 + me
        ));
    }
    comm.barrier().map_err(|e| e.to_string())?;
    let fin = comm
        .amo(
            &AmoRequest::new(
                comm.symmetric(counter, me).map_err(|e| e.to_string())?,
                AmoType::I64,
                AmoOp::Read,
                0,
            )
            .fetching(true),
        )
        .map_err(|e| e.to_string())?;
    if fin != 2000 + left as u64 {
        return Err(format!(
            "locale {me}: my word is {fin}, expected {}",
            2000 + left
        ));
    }

    let line = format!(
        "smoke ok: {n} locales, mode {}, provider {}",
        comm.mode(),
        comm.provider().name
    );
    Ok((me, line))
}

fn main() -> ExitCode {
    match run() {
        Ok((me, line)) => {
            if me == 0 {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("smoke FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}
