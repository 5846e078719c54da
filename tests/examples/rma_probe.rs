//! Multi-process check of blocking PUT / GET / AMO, run by `tests/tests/rma.rs`
//! under `pgasrun`. Every locale writes to every locale (itself included) at
//! sizes 1 B, 8 B, inject size + 1, 64 KiB and 4 MiB, reads it back, runs
//! every 64-bit AMO against every locale, and feeds the API bad input. Every
//! locale prints one `check NAME ... ok` line per check it made (the set is
//! `pgas_tests::expect::rma_probe`), and locale 0 `rma_probe ok`; any
//! mismatch exits non-zero with the details.

use comm_ofi::{AmoOp, AmoRequest, AmoType, Comm, Error, GlobalAddr, Locale};
use pgas_tests::passed;
use std::process::ExitCode;

const MAX: usize = 4 << 20;

fn pattern(from: Locale, to: Locale, size: usize, i: usize) -> u8 {
    i.wrapping_mul(31).wrapping_add(from * 7 + to * 3 + size) as u8
}

fn rma(comm: &Comm) -> Result<(), String> {
    let me = comm.here();
    let n = comm.num_locales();
    let inject = comm.provider().inject_size;
    let sizes = [1usize, 8, inject + 1, 64 << 10, MAX];
    let labels = pgas_tests::expect::RMA_SIZES;
    // One MAX slot per writer on every locale.
    let slots = comm.alloc(MAX * n, 4096).map_err(|e| e.to_string())?;
    let src = comm.alloc(MAX, 4096).map_err(|e| e.to_string())?;
    for (&size, label) in sizes.iter().zip(labels) {
        // Source from the heap (registered) for even sizes, from a Vec otherwise.
        let data: Vec<u8> = (0..size).map(|i| pattern(me, 0, size, i)).collect();
        for t in 0..n {
            let data: Vec<u8> = (0..size).map(|i| pattern(me, t, size, i)).collect();
            let dst = comm
                .symmetric(slots, t)
                .map_err(|e| e.to_string())?
                .offset((me * MAX) as u64);
            if size % 2 == 0 {
                // SAFETY: src is a MAX-byte heap allocation of ours; size <= MAX.
                let buf = unsafe { std::slice::from_raw_parts_mut(src.addr as *mut u8, size) };
                buf.copy_from_slice(&data);
                comm.put(dst, buf)
                    .map_err(|e| format!("put {size} B to {t}: {e}"))?;
            } else {
                comm.put(dst, &data)
                    .map_err(|e| format!("put {size} B to {t}: {e}"))?;
            }
        }
        drop(data);
        comm.barrier().map_err(|e| e.to_string())?;
        // Check what every writer left here, through the local path.
        for w in 0..n {
            let mut got = vec![0u8; size];
            comm.get(&mut got, slots.offset((w * MAX) as u64))
                .map_err(|e| e.to_string())?;
            if let Some(i) = (0..size).find(|&i| got[i] != pattern(w, me, size, i)) {
                return Err(format!(
                    "size {size}: byte {i} written by locale {w} into locale {me} is {} (expected {})",
                    got[i],
                    pattern(w, me, size, i)
                ));
            }
        }
        // Read back through the network path what I wrote everywhere.
        for t in 0..n {
            let from = comm
                .symmetric(slots, t)
                .map_err(|e| e.to_string())?
                .offset((me * MAX) as u64);
            let mut got = vec![0u8; size];
            comm.get(&mut got, from)
                .map_err(|e| format!("get {size} B from {t}: {e}"))?;
            if let Some(i) = (0..size).find(|&i| got[i] != pattern(me, t, size, i)) {
                return Err(format!("size {size}: GET from {t} byte {i} wrong"));
            }
        }
        passed!(
            "put_get",
            "size={label} bytes={size} writers={n} targets={n} locale={me}"
        );
        comm.barrier().map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn amos(comm: &Comm) -> Result<(), String> {
    let me = comm.here();
    let locales = comm.num_locales();
    let n = locales as u64;
    let words = comm.alloc(64, 64).map_err(|e| e.to_string())?;
    let e = |s: &str, t: Locale, err: Error| format!("{s} on locale {t}: {err}");
    comm.barrier().map_err(|e| e.to_string())?;
    // fetch-add: everybody adds me+1 to word 0 of every locale, twice.
    let mut olds = Vec::new();
    for t in 0..locales {
        let w = comm.symmetric(words, t).map_err(|e| e.to_string())?;
        for _ in 0..2 {
            olds.push(
                comm.amo(
                    &AmoRequest::new(w, AmoType::I64, AmoOp::Add, me as u64 + 1).fetching(true),
                )
                .map_err(|x| e("fetch-add", t, x))?,
            );
        }
        // non-fetching add of 100 to word 1
        comm.amo(&AmoRequest::new(w.offset(8), AmoType::U64, AmoOp::Add, 100))
            .map_err(|x| e("add", t, x))?;
    }
    comm.barrier().map_err(|e| e.to_string())?;
    let sum: u64 = 2 * (1..=n).sum::<u64>();
    for t in 0..locales {
        let w = comm.symmetric(words, t).map_err(|e| e.to_string())?;
        let fetch_add = comm
            .amo(&AmoRequest::new(w, AmoType::I64, AmoOp::Read, 0).fetching(true))
            .map_err(|x| e("read", t, x))?;
        if fetch_add != sum {
            return Err(format!(
                "fetch-add total on {t} is {fetch_add}, expected {sum}"
            ));
        }
        let add = comm
            .amo(&AmoRequest::new(w.offset(8), AmoType::U64, AmoOp::Read, 0).fetching(true))
            .map_err(|x| e("read", t, x))?;
        if add != 100 * n {
            return Err(format!("add total on {t} is {add}, expected {}", 100 * n));
        }
        passed!(
            "amo_totals",
            "target={t} fetch_add={fetch_add} add={add} locale={me}"
        );
    }
    if olds.iter().any(|o| *o >= sum) {
        return Err(format!("impossible fetched values {olds:?}"));
    }
    passed!("fetch_add_olds", "count={} locale={me}", olds.len());
    comm.barrier().map_err(|e| e.to_string())?;
    // compare-and-swap race for word 2 of every locale: exactly one winner.
    let mut wins = 0u64;
    for t in 0..locales {
        let w = comm
            .symmetric(words, t)
            .map_err(|e| e.to_string())?
            .offset(16);
        let old = comm
            .amo(
                &AmoRequest::new(w, AmoType::I64, AmoOp::CompareSwap, me as u64 + 1).fetching(true),
            )
            .map_err(|x| e("cas", t, x))?;
        if old == 0 {
            wins += 1 << t;
        }
    }
    // Sum the win masks through word 3 of locale 0 (fetch-add).
    let w0 = comm
        .symmetric(words, 0)
        .map_err(|e| e.to_string())?
        .offset(24);
    comm.amo(&AmoRequest::new(w0, AmoType::U64, AmoOp::Add, wins))
        .map_err(|x| e("add", 0, x))?;
    comm.barrier().map_err(|e| e.to_string())?;
    let all = comm
        .amo(&AmoRequest::new(w0, AmoType::U64, AmoOp::Read, 0).fetching(true))
        .map_err(|x| e("read", 0, x))?;
    if all != (1u64 << n) - 1 {
        return Err(format!(
            "cas winners mask {all:#b}: each locale's word must have exactly one winner"
        ));
    }
    passed!("cas_winners", "mask={all:#b} locale={me}");
    // write / swap on my own word 4 of every locale, then read back.
    for t in 0..locales {
        let w = comm
            .symmetric(words, t)
            .map_err(|e| e.to_string())?
            .offset(32 + 8 * me as u64 % 24);
        let _ = w;
    }
    let mine = comm
        .symmetric(words, (me + 1) % locales)
        .map_err(|e| e.to_string())?
        .offset(32);
    comm.amo(&AmoRequest::new(mine, AmoType::I64, AmoOp::Write, 0xAAAA))
        .map_err(|x| e("write", 0, x))?;
    let prev = comm
        .amo(&AmoRequest::new(mine, AmoType::I64, AmoOp::Write, 0xBBBB).fetching(true))
        .map_err(|x| e("swap", 0, x))?;
    if prev != 0xAAAA {
        return Err(format!("swap returned {prev:#x}, expected 0xaaaa"));
    }
    let now = comm
        .amo(&AmoRequest::new(mine, AmoType::I64, AmoOp::Read, 0).fetching(true))
        .map_err(|x| e("read", 0, x))?;
    if now != 0xBBBB {
        return Err(format!("after swap the word is {now:#x}"));
    }
    passed!("swap", "prev={prev:#x} now={now:#x} locale={me}");
    comm.barrier().map_err(|e| e.to_string())?;
    Ok(())
}

fn bad_input(comm: &Comm) -> Result<(), String> {
    let n = comm.num_locales();
    let me = comm.here();
    let buf = comm.alloc(64, 64).map_err(|e| e.to_string())?;
    let expect = |what: &str, r: comm_ofi::Result<()>, needle: &str| -> Result<(), String> {
        match r {
            Ok(()) => Err(format!("{what}: accepted")),
            Err(e) if e.to_string().contains(needle) => {
                passed!("bad_input", "case={} locale={me}", what.replace(' ', "_"));
                Ok(())
            }
            Err(e) => Err(format!("{what}: message {e:?} does not name {needle:?}")),
        }
    };
    expect(
        "put to locale n",
        comm.put(GlobalAddr::new(n, buf.addr), &[1]),
        &format!("locale {n}"),
    )?;
    expect(
        "get from locale 99",
        comm.get(&mut [0u8; 4], GlobalAddr::new(99, buf.addr)),
        "locale 99",
    )?;
    let far = GlobalAddr::new(0, 0x10);
    expect("put outside heap", comm.put(far, &[1]), "0x10")?;
    let edge = comm.symmetric(buf, 0).map_err(|e| e.to_string())?;
    let end = GlobalAddr::new(
        0,
        edge.addr - (edge.addr % 4096) + comm.heap().size() as u64 * 2,
    );
    expect(
        "get past heap end",
        comm.get(&mut [0u8; 8], end),
        &format!("{:#x}", end.addr),
    )?;
    let r = comm
        .amo(&AmoRequest::new(
            edge.offset(3),
            AmoType::I64,
            AmoOp::Add,
            1,
        ))
        .map(|_| ());
    expect("misaligned amo", r, &format!("{:#x}", edge.addr + 3))?;
    expect(
        "free foreign address",
        comm.free(GlobalAddr::new(comm.here(), 0x1234)),
        "0x1234",
    )?;
    Ok(())
}

fn main() -> ExitCode {
    let comm = match Comm::init() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rma_probe: init failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let am = match amhandler::start(comm.clone()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("rma_probe: AM start failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = rma(&comm)
        .and_then(|_| amos(&comm))
        .and_then(|_| bad_input(&comm))
    {
        eprintln!("rma_probe FAILED on locale {}: {e}", comm.here());
        comm.oob()
            .abort(&format!("rma_probe failed on locale {}: {e}", comm.here()));
    }
    if let Err(e) = am.finalize() {
        eprintln!("rma_probe: finalize: {e}");
        return ExitCode::FAILURE;
    }
    if comm.here() == 0 {
        println!(
            "rma_probe ok: {} locales, mode {}, provider {}",
            comm.num_locales(),
            comm.mode(),
            comm.provider().name
        );
    }
    ExitCode::SUCCESS
}
