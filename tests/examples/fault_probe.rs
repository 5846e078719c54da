//! Faults and bad input through the runtime shim's Rust API, run by
//! `tests/tests/faults.rs` under `pgasrun` and `mpirun`:
//! `fault_probe SCENARIO`.
//!
//! Fault scenarios `FAULT:POINT` (3 or more locales; locale 1 is the
//! victim, or the locale `FAULT_PROBE_VICTIM` names): after a barrier, the other locales go to POINT against locale
//! 1 (`barrier`: enter a barrier it never joins; `on`: on-statements to it;
//! `get`: GETs and PUTs of its memory; `quiet`: a PUT to it, then `quiet`,
//! whose forcing waits for it; `amo`: fetch-adds on its word) while
//! locale 1 does FAULT: `exit0` (exits with status 0 without finalize),
//! `exit3` (the same with status 3),
//! `kill` (SIGKILL), `segv` (SIGSEGV), `panic` (panics in main), `stop`
//! (SIGSTOP for 3 s, then SIGCONT from a helper process). Every fault but
//! `stop` must fail the job naming locale 1; `stop` must be survived with
//! correct answers (`fault_probe stop:POINT ok`). The victim says when it
//! faults (`fault_probe: locale 1 faults (F) at unix ms T`). A survivor whose operation
//! fails prints `fault_probe survivor error: ...` (the error must name the
//! locale) and exits 1.
//!
//! Bad-input scenarios (print `fault_probe SCENARIO ok` on locale 0 when
//! every locale saw what it should): `collectives` (broadcast with the
//! root's heap exhausted, alloc_all failing on one locale or everywhere),
//! `heap` (sizes that used to wrap), `reply_oom` (a reply that does not fit
//! the target's full heap), `reply_4g` (a reply of 4 GiB), `amo_bad`
//! (atomics and unordered operations on addresses outside the heap, reported
//! by the call itself), `free_bad` (another locale's pointer, double free,
//! a pointer into an allocation), `check` (with `PGAS_CHECK=1`: PUT/GET/
//! atomics past an allocation or into freed memory are errors), `overrun`
//! (without it: the same PUT silently overwrites the neighbour, the negative
//! control), `ok` (start, a few operations, finalize).

use pgas_tests::check;
use runtime_shim::{fn_id, pod, Builder, Error, FnId, GlobalPtr, Locale, Runtime};
use std::process::ExitCode;
use std::time::{Duration, Instant};

type R<T = ()> = Result<T, String>;

const INC: FnId = fn_id("fault.inc");
const BIG: FnId = fn_id("fault.big");
const FILL: FnId = fn_id("fault.fill");
/// The locale that faults: 1, or `FAULT_PROBE_VICTIM`.
fn victim() -> Locale {
    static V: std::sync::OnceLock<Locale> = std::sync::OnceLock::new();
    *V.get_or_init(|| {
        std::env::var("FAULT_PROBE_VICTIM")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1)
    })
}
/// Longest the others keep at their operation against the victim (the
/// launcher stops them long before when the victim died).
const WORK_FOR: Duration = Duration::from_secs(60);
/// How long a stopped victim stays stopped.
const STOP_FOR: &str = "2";
/// Operations a survivor still does once the victim is back.
const AFTER_BACK: u64 = 200;

fn u64_of(b: &[u8]) -> u64 {
    pod::from_bytes::<u64>(b).unwrap_or(u64::MAX)
}

fn register(b: &Builder) -> runtime_shim::Result<()> {
    b.register("fault.inc", |_, a| pod::to_bytes(&(u64_of(a) + 1)))?;
    // A reply of the size asked for (bytes 0, 1, 2, ...; lazily zeroed above 1 MiB).
    b.register("fault.big", |_, a| {
        let n = u64_of(a) as usize;
        if n > 1 << 20 {
            return vec![0u8; n];
        }
        (0..n).map(|i| i as u8).collect()
    })?;
    // Fills (1) or empties (0) this locale's registered heap.
    b.register("fault.fill", |ctx, a| {
        let rt = ctx.rt();
        let mut held = FILLER.lock().unwrap_or_else(|e| e.into_inner());
        if u64_of(a) == 1 {
            let mut size = rt.comm().heap().size();
            while size >= 64 {
                match rt.alloc::<u8>(size) {
                    Ok(p) => held.push(p),
                    Err(_) => size /= 2,
                }
            }
        } else {
            for p in held.drain(..) {
                rt.free(p).expect("free the filler");
            }
        }
        pod::to_bytes(&(held.len() as u64))
    })?;
    Ok(())
}

static FILLER: std::sync::Mutex<Vec<GlobalPtr<u8>>> = std::sync::Mutex::new(Vec::new());

fn e<E: std::fmt::Display>(x: E) -> String {
    x.to_string()
}

// ------------------------------------------------------------------- faults

fn victim_fault(fault: &str) {
    match fault {
        "exit0" => std::process::exit(0),
        "exit3" => std::process::exit(3),
        // SAFETY: raise(2) with a plain signal number.
        "kill" => unsafe {
            libc::raise(libc::SIGKILL);
        },
        "segv" => segfault(),
        "panic" => panic!("fault_probe: locale 1 panics on purpose"),
        "stop" => {
            let pid = std::process::id();
            let mut helper = std::process::Command::new("sh")
                .args(["-c", &format!("sleep {STOP_FOR}; kill -CONT {pid}")])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("spawn the SIGCONT helper");
            // SAFETY: as above; the helper continues us.
            unsafe {
                libc::raise(libc::SIGSTOP);
            }
            let _ = helper.wait();
        }
        other => panic!("unknown fault {other:?}"),
    }
}

/// A real segmentation fault: a store to a page mapped without access (a
/// raised SIGSEGV is not the same: a handler that returns survives it).
fn segfault() {
    // SAFETY: an anonymous PROT_NONE mapping of one page, checked below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED, "mmap for the fault");
    // SAFETY: not safe on purpose: the store faults (SIGSEGV), which is the
    // fault this scenario injects; nothing runs after it.
    unsafe { std::ptr::write_volatile(p.cast::<u64>(), 1) };
    unreachable!("a store to a PROT_NONE page returned");
}

/// The survivors' side of a fault scenario: the operation against the
/// victim until it is back from its fault (word 7 set) and `AFTER_BACK`
/// more, or until the job is stopped. Returns how many operations it did.
fn survivor(rt: &'static Runtime, point: &str, word: GlobalPtr<u64>) -> R<u64> {
    let start = Instant::now();
    let mut done = 0u64;
    let mut back_at = None;
    let mut more = |done: u64| -> R<bool> {
        if start.elapsed() > WORK_FOR {
            return Ok(false);
        }
        if back_at.is_none() && done % 16 == 0 && rt.get_value(word.add(7)).map_err(e)? == 1 {
            back_at = Some(done);
        }
        Ok(back_at.is_none_or(|b| done < b + AFTER_BACK))
    };
    match point {
        "barrier" => {
            rt.barrier().map_err(e)?;
            return Ok(0);
        }
        "on" => {
            while more(done)? {
                let r = rt.on(victim(), INC, &pod::to_bytes(&done)).map_err(e)?;
                check!(u64_of(&r) == done + 1, "on-statement answered {r:?}");
                done += 1;
            }
        }
        "get" => {
            let mine = word.add(1 + rt.here());
            while more(done)? {
                rt.put_value(mine, done).map_err(e)?;
                let v = rt.get_value(mine).map_err(e)?;
                check!(v == done, "GET returned {v}, PUT stored {done}");
                let magic = rt.get_value(word.add(5)).map_err(e)?;
                check!(magic == 0xfeed, "victim's word reads {magic:#x}");
                done += 1;
            }
        }
        "quiet" => {
            let mine = word.add(1 + rt.here());
            while more(done)? {
                rt.put_value(mine, done).map_err(e)?;
                rt.quiet().map_err(e)?;
                done += 1;
            }
        }
        "amo" => {
            let mut last = None;
            while more(done)? {
                let old = rt.atomic(word).fetch_add(1).map_err(e)?;
                if let Some(l) = last {
                    check!(old > l, "fetch-add went back: {old} after {l}");
                }
                last = Some(old);
                done += 1;
            }
        }
        other => return Err(format!("unknown point {other:?}")),
    }
    Ok(done)
}

fn fault(rt: &'static Runtime, fault: &str, point: &str) -> R {
    check!(rt.num_locales() >= 3, "fault scenarios need 3 locales");
    let words = rt.alloc_all::<u64>(8).map_err(e)?;
    let word = words.at(victim()).map_err(e)?;
    if rt.here() == victim() {
        rt.put_value(word.add(5), 0xfeed).map_err(e)?;
    }
    rt.barrier().map_err(e)?;
    let counted = if rt.here() == victim() {
        // Let the others get going against us.
        std::thread::sleep(Duration::from_millis(300));
        // When, so the test can tell how long the job took to notice.
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        eprintln!(
            "fault_probe: locale {} faults ({fault}) at unix ms {ms}",
            victim()
        );
        victim_fault(fault);
        // Back (only a stopped victim): tell the others.
        rt.put_value(word.add(7), 1).map_err(e)?;
        0
    } else {
        match survivor(rt, point, word) {
            Ok(n) => n,
            Err(msg) => {
                eprintln!("fault_probe survivor error: locale {}: {msg}", rt.here());
                std::process::exit(1);
            }
        }
    };
    // Only a stopped-and-continued victim gets here with its peers (who
    // are in, or past, the barrier of point `barrier`).
    if point != "barrier" || rt.here() == victim() {
        rt.barrier().map_err(e)?;
    }
    if point == "amo" {
        // Every fetch-add of every survivor landed exactly once.
        rt.atomic(word.add(6)).add(counted).map_err(e)?;
        rt.barrier().map_err(e)?;
        let value = rt.get_value(word).map_err(e)?;
        let sum = rt.get_value(word.add(6)).map_err(e)?;
        check!(
            value == sum,
            "the victim's counter is {value} after {sum} fetch-adds"
        );
    }
    if rt.here() == 0 {
        println!("fault_probe {fault}:{point} ok ({counted} operations by locale 0)");
    }
    Ok(())
}

// --------------------------------------------------------------- bad input

/// Prints what locale `here` saw for one bad input (the test counts them).
fn saw(rt: &Runtime, what: &str, err: &dyn std::fmt::Display) {
    println!("fault_probe bad input: locale {}: {what}: {err}", rt.here());
}

fn expect_err<T: std::fmt::Debug>(
    rt: &Runtime,
    what: &str,
    r: runtime_shim::Result<T>,
    needles: &[&str],
) -> R<Error> {
    match r {
        Ok(v) => Err(format!("{what}: accepted ({v:?})")),
        Err(x) => {
            let text = x.to_string();
            for n in needles {
                check!(text.contains(n), "{what}: error {text:?} lacks {n:?}");
            }
            saw(rt, what, &x);
            Ok(x)
        }
    }
}

fn collectives(rt: &'static Runtime) -> R {
    let me = rt.here();
    // Broadcast with the root's heap exhausted: more than the whole heap.
    let heap = rt.comm().heap().size();
    let big = if me == 0 {
        vec![7u8; heap + 4096]
    } else {
        Vec::new()
    };
    let r = rt.broadcast_bytes(&big);
    if me == 0 {
        expect_err(rt, "broadcast, root heap exhausted", r, &["heap exhausted"])?;
    } else {
        expect_err(
            rt,
            "broadcast, root heap exhausted",
            r,
            &["broadcast failed on locale 0", "heap exhausted"],
        )?;
    }
    // The job goes on: a real broadcast, small and large.
    let v = rt.broadcast_bytes(&[me as u8 + 9; 3]).map_err(e)?;
    check!(v == [9, 9, 9], "small broadcast after a failed one: {v:?}");
    let v = rt.broadcast_bytes(&vec![me as u8 + 1; 5000]).map_err(e)?;
    check!(v == vec![1u8; 5000], "large broadcast after a failed one");
    // alloc_all failing on locale 1 only, then everywhere.
    let n = if me == 1 { usize::MAX / 2 } else { 16 };
    let r = rt.alloc_all::<u64>(n);
    if me == 1 {
        expect_err(rt, "alloc_all, locale 1 asks too much", r, &["overflows"])?;
    } else {
        expect_err(
            rt,
            "alloc_all, locale 1 asks too much",
            r,
            &["alloc_all failed on locale 1"],
        )?;
    }
    let r = rt.alloc_all::<u8>(usize::MAX);
    expect_err(rt, "alloc_all(usize::MAX)", r, &["18446744073709551615"])?;
    let d = rt.alloc_all::<u64>(4).map_err(e)?;
    rt.barrier().map_err(e)?;
    rt.free_all(d).map_err(e)?;
    Ok(())
}

fn heap(rt: &'static Runtime) -> R {
    let before = rt.comm().heap().in_use();
    expect_err(
        rt,
        "alloc::<u8>(usize::MAX)",
        rt.alloc::<u8>(usize::MAX),
        &["18446744073709551615", "heap exhausted"],
    )?;
    expect_err(
        rt,
        "alloc::<u8>(usize::MAX - 63)",
        rt.alloc::<u8>(usize::MAX - 63),
        &["heap exhausted"],
    )?;
    expect_err(
        rt,
        "alloc::<u64>(usize::MAX / 4)",
        rt.alloc::<u64>(usize::MAX / 4),
        &["overflows"],
    )?;
    let heap = rt.comm().heap().size();
    expect_err(
        rt,
        "alloc of the heap size + 1",
        rt.alloc::<u8>(heap + 1),
        &["heap exhausted", &(heap + 1).to_string()],
    )?;
    check!(
        rt.comm().heap().in_use() == before,
        "failed allocations took heap memory"
    );
    // Later allocations are distinct and hold their own data.
    let a = rt.alloc::<u64>(8).map_err(e)?;
    let b = rt.alloc::<u64>(8).map_err(e)?;
    check!(
        a.addr() + 64 <= b.addr() || b.addr() + 64 <= a.addr(),
        "two live allocations overlap: {:#x} and {:#x}",
        a.addr(),
        b.addr()
    );
    rt.put(a, &[1u64; 8]).map_err(e)?;
    rt.put(b, &[2u64; 8]).map_err(e)?;
    let mut got = [0u64; 8];
    rt.get(&mut got, a).map_err(e)?;
    check!(got == [1; 8], "allocation a was overwritten: {got:?}");
    rt.free(a).map_err(e)?;
    rt.free(b).map_err(e)?;
    Ok(())
}

fn reply_oom(rt: &'static Runtime) -> R {
    let n = 64u64 << 10;
    if rt.here() == 0 {
        let filled = u64_of(&rt.on(1, FILL, &pod::to_bytes(&1u64)).map_err(e)?);
        check!(filled > 0, "could not fill locale 1's heap");
        let r = rt.on(1, BIG, &pod::to_bytes(&n));
        expect_err(
            rt,
            "on-statement whose reply does not fit the target's heap",
            r,
            &[
                "locale 1",
                "does not fit in the registered heap of locale 1",
            ],
        )?;
        rt.on(1, FILL, &pod::to_bytes(&0u64)).map_err(e)?;
        let r = rt.on(1, BIG, &pod::to_bytes(&n)).map_err(e)?;
        check!(
            r.len() == n as usize && r.iter().enumerate().all(|(i, b)| *b == i as u8),
            "the reply after the heap was freed is wrong ({} bytes)",
            r.len()
        );
    }
    Ok(())
}

fn reply_4g(rt: &'static Runtime) -> R {
    if rt.here() == 0 {
        let n = (4u64 << 30) + 16;
        let r = rt.on(1, BIG, &pod::to_bytes(&n));
        expect_err(
            rt,
            "on-statement with a 4 GiB reply",
            r,
            &["4294967312 bytes", "limit of one reply"],
        )?;
        // The job goes on.
        let r = rt.on(1, BIG, &pod::to_bytes(&3000u64)).map_err(e)?;
        check!(
            r.len() == 3000,
            "reply after the refused one: {} bytes",
            r.len()
        );
    }
    Ok(())
}

fn amo_bad(rt: &'static Runtime) -> R {
    let words = rt.alloc_all::<u64>(4).map_err(e)?;
    let peer = (rt.here() + 1) % rt.num_locales();
    let good = words.at(peer).map_err(e)?;
    let heap = rt.comm().heap().size() as u64;
    // Outside the peer's heap (its heap's base is a whole heap before our
    // word at the latest... use an address past its end instead).
    let bad = GlobalPtr::<u64>::new(peer, good.addr() + heap + 4096);
    expect_err(
        rt,
        "atomic add outside the heap",
        rt.atomic(bad).add(1),
        &["outside its registered heap", &format!("{:#x}", bad.addr())],
    )?;
    expect_err(
        rt,
        "atomic fetch_add outside the heap",
        rt.atomic(bad).fetch_add(1),
        &["outside its registered heap"],
    )?;
    expect_err(
        rt,
        "unordered atomic outside the heap",
        rt.atomic(bad).add_unordered(1),
        &["outside its registered heap"],
    )?;
    expect_err(
        rt,
        "unordered PUT outside the heap",
        rt.put_unordered(bad, &[1u64]),
        &["outside its registered heap"],
    )?;
    expect_err(
        rt,
        "misaligned atomic",
        rt.atomic(GlobalPtr::<u64>::new(peer, good.addr() + 4))
            .add(1),
        &["aligned"],
    )?;
    // Nothing is left over to fail a later, unrelated call.
    rt.unordered_fence().map_err(e)?;
    rt.atomic(good).add(5).map_err(e)?;
    let v = rt.get_value(good).map_err(e)?;
    check!(v >= 5, "the good word reads {v}");
    rt.barrier().map_err(e)?;
    let v = rt.get_value(words.local()).map_err(e)?;
    check!(v == 5, "this locale's word reads {v}, expected 5");
    Ok(())
}

fn free_bad(rt: &'static Runtime) -> R {
    let d = rt.alloc_all::<u64>(4).map_err(e)?;
    let peer = (rt.here() + 1) % rt.num_locales();
    expect_err(
        rt,
        "free of another locale's pointer",
        rt.free(d.at(peer).map_err(e)?),
        &["which owns it, can free it"],
    )?;
    let p = rt.alloc::<u64>(16).map_err(e)?;
    expect_err(
        rt,
        "free of a pointer into an allocation",
        rt.free(p.add(2)),
        &["16 bytes into the allocation"],
    )?;
    rt.free(p).map_err(e)?;
    let x = expect_err(
        rt,
        "double free",
        rt.free(p),
        &[&format!("{:#x}", p.addr()), "freed already"],
    )?;
    check!(
        !x.to_string().contains("size"),
        "a double free is still described as a size: {x}"
    );
    expect_err(
        rt,
        "free of a locale out of range",
        rt.free(GlobalPtr::<u64>::new(99, p.addr())),
        &["locale 99"],
    )?;
    rt.barrier().map_err(e)?;
    rt.free_all(d).map_err(e)?;
    Ok(())
}

/// Two neighbouring allocations on every locale: `a` of 60 bytes, then `b`.
fn neighbours(rt: &'static Runtime) -> R<(runtime_shim::Dist<u8>, runtime_shim::Dist<u8>)> {
    let a = rt.alloc_all::<u8>(60).map_err(e)?;
    let b = rt.alloc_all::<u8>(64).map_err(e)?;
    Ok((a, b))
}

fn check_mode(rt: &'static Runtime) -> R {
    check!(rt.config().check, "run with PGAS_CHECK=1");
    let (a, b) = neighbours(rt)?;
    let peer = (rt.here() + 1) % rt.num_locales();
    for (who, l) in [("remote", peer), ("local", rt.here())] {
        let pa = a.at(l).map_err(e)?;
        rt.put(pa, &[1u8; 60]).map_err(e)?;
        expect_err(
            rt,
            &format!("{who} PUT past an allocation"),
            rt.put(pa.add(8), &[2u8; 64]),
            &["PGAS_CHECK", "past the end of the 60-byte allocation"],
        )?;
        let mut buf = [0u8; 61];
        expect_err(
            rt,
            &format!("{who} GET past an allocation"),
            rt.get(&mut buf, pa),
            &["PGAS_CHECK", "1 byte(s) past the end"],
        )?;
        expect_err(
            rt,
            &format!("{who} non-blocking PUT past an allocation"),
            rt.put_nb(pa.add(59), vec![3u8; 2]),
            &["PGAS_CHECK"],
        )?;
        expect_err(
            rt,
            &format!("{who} strided PUT past an allocation"),
            rt.put_strided(pa, &[32], &[4u8; 64], &[32], &[32, 2]),
            &["PGAS_CHECK", "strided PUT"],
        )?;
        expect_err(
            rt,
            &format!("{who} atomic past an allocation"),
            rt.atomic(pa.add(56).cast::<u64>()).add(1),
            &["PGAS_CHECK", "atomic"],
        )?;
    }
    rt.barrier().map_err(e)?;
    // The neighbour is untouched everywhere.
    let mut nb = [9u8; 64];
    rt.get(&mut nb, b.at(peer).map_err(e)?).map_err(e)?;
    check!(
        nb == [0u8; 64],
        "the neighbouring allocation changed: {nb:?}"
    );
    // Freed memory.
    let p = rt.alloc::<u64>(8).map_err(e)?;
    rt.free(p).map_err(e)?;
    expect_err(
        rt,
        "PUT into freed memory",
        rt.put_value(p, 1),
        &["PGAS_CHECK", "not inside any live allocation"],
    )?;
    rt.barrier().map_err(e)?;
    Ok(())
}

/// Without PGAS_CHECK the PUT past an allocation lands in the neighbour:
/// the negative control of `check`.
fn overrun(rt: &'static Runtime) -> R {
    check!(!rt.config().check, "run without PGAS_CHECK");
    let (a, b) = neighbours(rt)?;
    let peer = (rt.here() + 1) % rt.num_locales();
    rt.put(a.at(peer).map_err(e)?.add(8), &[2u8; 64])
        .map_err(e)?;
    rt.barrier().map_err(e)?;
    let mut nb = [0u8; 64];
    rt.get(&mut nb, b.local()).map_err(e)?;
    check!(
        nb[..8] == [2u8; 8],
        "the overrun did not reach the neighbour: {nb:?}"
    );
    println!(
        "fault_probe overrun: locale {}: unchecked PUT past an allocation overwrote the next one",
        rt.here()
    );
    Ok(())
}

fn smoke(rt: &'static Runtime) -> R {
    let peer = (rt.here() + 1) % rt.num_locales();
    let r = rt.on(peer, INC, &pod::to_bytes(&41u64)).map_err(e)?;
    check!(u64_of(&r) == 42, "on-statement answered {r:?}");
    let d = rt.alloc_all::<u64>(1).map_err(e)?;
    rt.atomic(d.at(0).map_err(e)?).add(1).map_err(e)?;
    rt.barrier().map_err(e)?;
    let v = rt.get_value(d.at(0).map_err(e)?).map_err(e)?;
    check!(v == rt.num_locales() as u64, "counter {v}");
    if rt.here() == 0 {
        println!("fault_probe: {}", rt.describe());
    }
    Ok(())
}

fn run(rt: &'static Runtime, scenario: &str) -> R {
    if let Some((f, p)) = scenario.split_once(':') {
        return fault(rt, f, p);
    }
    match scenario {
        "collectives" => collectives(rt),
        "heap" => heap(rt),
        "reply_oom" => reply_oom(rt),
        "reply_4g" => reply_4g(rt),
        "amo_bad" => amo_bad(rt),
        "free_bad" => free_bad(rt),
        "check" => check_mode(rt),
        "overrun" => overrun(rt),
        "ok" => smoke(rt),
        other => Err(format!("unknown scenario {other:?}")),
    }
}

fn main() -> ExitCode {
    pgas_tests::log_to_stderr();
    let scenarios: Vec<String> = std::env::args().skip(1).collect();
    let rt = match pgas_tests::start("fault_probe", register) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    // The fault scenarios (`fault:point`) end the job or say so themselves.
    pgas_tests::run_scenarios(rt, "fault_probe", &scenarios, run, |s| !s.contains(':'))
}
