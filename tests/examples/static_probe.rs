//! Static data through the public API (run by `tests/tests/library.rs` on
//! every provider and on the mapped path, 3 locales): a PUT into the next
//! locale's `.bss` array, every atomic entry point (ordered, fetching,
//! unordered, non-blocking, compare-exchange, exchange, the bitwise and
//! min/max ops, put-with-signal and wait-until on a static signal) on
//! locale 0's static words, a GET of a `.data` static initialised at compile
//! time, and bad input (heap, stack and out-of-range locale addresses named
//! in the error).

use pgas_tests::{check, e};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};

type R<T = ()> = Result<T, String>;

static WORDS: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];
/// Targets of every atomic entry point, on locale 0 (see `atomics`).
static ATOMS: [AtomicU64; 16] = [const { AtomicU64::new(0) }; 16];
/// Starting values of the words that need one: 1000 for sub and min, all
/// ones for and.
static ATOMS_INIT: [AtomicU64; 3] = [
    AtomicU64::new(1000),
    AtomicU64::new(1000),
    AtomicU64::new(u64::MAX),
];
/// Put-with-signal: data and signal from the previous locale.
static SIGNALLED: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];
const ROUNDS: u64 = 50;

static INIT: [AtomicU64; 4] = [
    AtomicU64::new(11),
    AtomicU64::new(12),
    AtomicU64::new(13),
    AtomicU64::new(14),
];

/// Every atomic entry point on static words of locale 0, from every locale,
/// checked against the totals; then put-with-signal into the next locale's
/// static data, awaited on a static signal. Unordered atomics on statics
/// were refused by the target's batch handler on the mapped path.
fn atomics(rt: &'static runtime_shim::Runtime) -> R {
    let (n, me) = (rt.num_locales(), rt.here());
    let nn = n as u64;
    let at = |w: &AtomicU64, l: usize| {
        rt.static_ptr(w.as_ptr() as *const u64, l)
            .map_err(e("static_ptr"))
    };
    let a =
        |k: usize| -> R<runtime_shim::AtomicRef<'static, u64>> { Ok(rt.atomic(at(&ATOMS[k], 0)?)) };
    let init = |k: usize| -> R<runtime_shim::AtomicRef<'static, u64>> {
        Ok(rt.atomic(at(&ATOMS_INIT[k], 0)?))
    };
    let bit = 1u64 << me;
    for _ in 0..ROUNDS {
        a(0)?.add(1).map_err(e("add"))?;
        a(1)?.fetch_add(1).map_err(e("fetch_add"))?;
        a(2)?.add_unordered(1).map_err(e("add_unordered"))?;
        a(3)?
            .fetch_add_nb(1)
            .map_err(e("fetch_add_nb"))?
            .wait()
            .map_err(e("nb wait"))?;
        init(0)?.sub(1).map_err(e("sub"))?;
        a(4)?.sub_unordered(1).map_err(e("sub_unordered"))?;
        loop {
            let cur = a(5)?.read().map_err(e("read"))?;
            match a(5)?.compare_exchange(cur, cur + 1).map_err(e("cas"))? {
                Ok(_) => break,
                Err(_) => continue,
            }
        }
    }
    a(6)?.max(me as u64 + 1).map_err(e("max"))?;
    init(1)?.min(me as u64 + 1).map_err(e("min"))?;
    a(7)?.or(bit).map_err(e("or"))?;
    init(2)?.and(!bit).map_err(e("and"))?;
    a(8)?.xor(bit).map_err(e("xor"))?;
    a(9)?.or_unordered(bit).map_err(e("or_unordered"))?;
    a(10)?
        .max_unordered(me as u64 + 7)
        .map_err(e("max_unordered"))?;
    let old = a(11)?.exchange(me as u64 + 1).map_err(e("exchange"))?;
    a(12)?.add(old).map_err(e("add of the exchanged value"))?;
    rt.unordered_fence().map_err(e("unordered fence"))?;
    // Put-with-signal into the next locale's statics; wait on ours.
    let next = (me + 1) % n;
    let prev = (me + n - 1) % n;
    rt.put_with_signal(
        at(&SIGNALLED[0], next)?,
        &[500 + me as u64],
        at(&SIGNALLED[1], next)?,
        runtime_shim::SignalOp::Add,
        1,
    )
    .map_err(e("put_with_signal"))?;
    let sig = at(&SIGNALLED[1], me)?;
    rt.wait_until_local(sig, runtime_shim::Cmp::Ge, 1)
        .map_err(e("wait_until_local on a static"))?;
    check!(
        rt.test_local(sig, runtime_shim::Cmp::Eq, 1)
            .map_err(e("test_local on a static"))?,
        "signal word is not 1"
    );
    let data = SIGNALLED[0].load(Ordering::Acquire);
    check!(
        data == 500 + prev as u64,
        "signalled data {data}, not from locale {prev}"
    );
    rt.barrier().map_err(e("barrier"))?;
    if me == 0 {
        let v = |k: usize| ATOMS[k].load(Ordering::Acquire);
        let want = ROUNDS * nn;
        let all = (1u64 << n) - 1;
        for (name, got, expect) in [
            ("add", v(0), want),
            ("fetch_add", v(1), want),
            ("add_unordered", v(2), want),
            ("fetch_add_nb", v(3), want),
            ("sub", ATOMS_INIT[0].load(Ordering::Acquire), 1000 - want),
            ("sub_unordered", v(4), want.wrapping_neg()),
            ("compare_exchange", v(5), want),
            ("max", v(6), nn),
            ("min", ATOMS_INIT[1].load(Ordering::Acquire), 1),
            ("or", v(7), all),
            ("and", ATOMS_INIT[2].load(Ordering::Acquire), !all),
            ("xor", v(8), all),
            ("or_unordered", v(9), all),
            ("max_unordered", v(10), nn + 6),
            // The exchanged-out values and the last one left are 0..=n.
            ("exchange", v(12) + v(11), nn * (nn + 1) / 2),
        ] {
            check!(
                got == expect,
                "{name} on a static word: {got}, expected {expect}"
            );
        }
        println!("static_probe atomics ok: 15 entry points on statics");
    }
    Ok(())
}

fn run() -> R {
    let rt = runtime_shim::init().map_err(e("init"))?;
    let n = rt.num_locales();
    let me = rt.here();
    check!((2..60).contains(&n), "run with 2..60 locales, not {n}");
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    let words = WORDS.as_ptr() as *const u64;
    let at_next = rt.static_ptr(words, next).map_err(e("static_ptr"))?;
    rt.put(at_next.add(me), &[100 + me as u64])
        .map_err(e("put to a static"))?;
    let counter = rt
        .static_ptr(WORDS[63].as_ptr() as *const u64, 0)
        .map_err(e("static_ptr"))?;
    for _ in 0..5 {
        rt.atomic(counter)
            .fetch_add(1)
            .map_err(e("fetch_add on a static"))?;
    }
    let mut got = [0u64; 2];
    rt.get(
        &mut got,
        rt.static_ptr(INIT.as_ptr() as *const u64, prev)
            .map_err(e("static_ptr"))?
            .add(1),
    )
    .map_err(e("get of a static"))?;
    check!(got == [12, 13], "GET of prev's .data statics read {got:?}");
    rt.barrier().map_err(e("barrier"))?;
    let mine = WORDS[prev].load(Ordering::Acquire);
    check!(mine == 100 + prev as u64, "locale {prev}'s PUT left {mine}");
    if me == 0 {
        let c = WORDS[63].load(Ordering::Acquire);
        check!(c == 5 * n as u64, "static counter {c}, expected {}", 5 * n);
    }
    // Bad input: a heap address, a stack address, a bad locale.
    let heap = rt.alloc::<u64>(1).map_err(e("alloc"))?;
    let err = rt
        .static_ptr(heap.addr() as *const u64, next)
        .expect_err("a heap address is not static data")
        .to_string();
    check!(
        err.contains("not in this program's registered static data")
            && err.contains(&format!("{:#x}", heap.addr())),
        "heap address: {err}"
    );
    let local = 5u64;
    let err = rt
        .static_ptr(&local as *const u64, next)
        .expect_err("a stack address is not static data")
        .to_string();
    check!(
        err.contains("registered static data"),
        "stack address: {err}"
    );
    let err = rt
        .static_ptr(words, n)
        .expect_err("a locale out of range")
        .to_string();
    check!(err.contains(&n.to_string()), "bad locale: {err}");
    rt.free(heap).map_err(e("free"))?;
    rt.barrier().map_err(e("barrier"))?;
    atomics(rt)?;
    if me == 0 {
        println!("static_probe ok: {n} locales");
    }
    rt.finalize().map_err(e("finalize"))
}

fn main() -> ExitCode {
    pgas_tests::exit("static_probe", run())
}
