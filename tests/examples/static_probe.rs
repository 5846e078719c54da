//! Static data through the public API (run by `tests/tests/library.rs` on
//! every provider and on the mapped path, 3 locales): a PUT into the next
//! locale's `.bss` array, atomics on locale 0's static counter, a GET of a
//! `.data` static initialised at compile time, and bad input (heap, stack
//! and out-of-range locale addresses named in the error).

use pgas_tests::{check, e};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};

type R<T = ()> = Result<T, String>;

static WORDS: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];
static INIT: [AtomicU64; 4] = [
    AtomicU64::new(11),
    AtomicU64::new(12),
    AtomicU64::new(13),
    AtomicU64::new(14),
];

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
    if me == 0 {
        println!("static_probe ok: {n} locales");
    }
    rt.finalize().map_err(e("finalize"))
}

fn main() -> ExitCode {
    pgas_tests::exit("static_probe", run())
}
