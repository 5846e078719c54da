//! Multi-process checks of the runtime shim's Rust API, run by
//! `tests/tests/shim_*.rs` under `pgasrun`: `shim_probe SCENARIO...`.
//! Each scenario prints `shim_probe SCENARIO ok` on locale 0 when it passed
//! on every locale; any mismatch exits non-zero with the details.
//!
//! Scenarios: `atomics` (every op x type, fetching and not, ordered and
//! unordered, against every locale, checked against a shadow value; prints
//! which types were native), `nb` (many outstanding non-blocking PUTs/GETs
//! waited out of order and with wait_any), `strided` (odd strides, 1 to 3
//! levels, element and byte granularity), `tasks` (task trees, sync scopes,
//! chains deeper than the workers, nested on-statements, MCM of task
//! create/join), `unordered` (PUT/GET/AMO batches), `collectives` (PUT
//! barrier visibility, broadcast small/large), `bad` (bad input returns
//! errors naming the value), `all` (all of them).

use pgas_tests::check;
use runtime_shim::{
    fn_id, pod, AmoType, AtomicOp, Builder, CommErrorKind, Dist, Error, FnId, GlobalPtr, Runtime,
};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

mod atomics;

use atomics::atomics;

type R<T = ()> = Result<T, String>;

fn e<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

const DEEP: FnId = fn_id("probe.deep");
const TREE: FnId = fn_id("probe.tree");
const WHO: FnId = fn_id("probe.who");

/// A word per locale that bodies may touch (set before any body runs).
static WORDS: OnceLock<Dist<u64>> = OnceLock::new();

fn u64_of(b: &[u8]) -> u64 {
    pod::from_bytes::<u64>(b).unwrap_or(u64::MAX)
}

// ----------------------------------------------------------------------- nb

fn nb(rt: &'static Runtime) -> R {
    const K: usize = 200;
    let n = rt.num_locales();
    let me = rt.here();
    let d = rt.alloc_all::<u64>(n * K).map_err(e)?;
    rt.barrier().map_err(e)?;
    let val = |src: usize, dst: usize, k: usize| ((src * 1000 + dst) * 100_000 + k) as u64;
    for t in 0..n {
        let vals: Vec<[u64; 1]> = (0..K).map(|k| [val(me, t, k)]).collect();
        let base = d.at(t).map_err(e)?.add(me * K);
        let mut hs = Vec::with_capacity(K);
        for (k, v) in vals.iter().enumerate() {
            hs.push(rt.put_nb(base.add(k), v.to_vec()).map_err(e)?);
        }
        // Half waited newest first, the rest through wait_any.
        for _ in 0..K / 2 {
            hs.pop().expect("handle").wait().map_err(e)?;
        }
        while !hs.is_empty() {
            let i = rt.wait_any(&mut hs).map_err(e)?;
            let mut h = hs.swap_remove(i);
            check!(
                h.test().map_err(e)?,
                "wait_any returned {i}, whose test is false"
            );
            h.wait().map_err(e)?;
        }
    }
    // A large non-blocking PUT among small ones, then GET it back.
    let big: Vec<u64> = (0..(1 << 17)).map(|i| i * 3 + me as u64).collect();
    let bigd = rt.alloc_all::<u64>(big.len()).map_err(e)?;
    let right = (me + 1) % n;
    let h = rt
        .put_nb(bigd.at(right).map_err(e)?, big.clone())
        .map_err(e)?;
    let returned = h.wait().map_err(e)?;
    check!(
        returned == big,
        "the non-blocking PUT handed back another buffer"
    );
    rt.barrier().map_err(e)?;
    for src in 0..n {
        let mut got = vec![0u64; K];
        rt.get(&mut got, d.local().add(src * K)).map_err(e)?;
        for (k, g) in got.iter().enumerate() {
            check!(
                *g == val(src, me, k),
                "slot {k} from locale {src} on {me} holds {g}, expected {}",
                val(src, me, k)
            );
        }
    }
    // Outstanding GETs from every locale, waited in a scrambled order.
    for t in 0..n {
        let mut bufs = vec![[0u64; 1]; K];
        {
            let base = d.at(t).map_err(e)?;
            let mut hs: Vec<Option<runtime_shim::NbGet<'_, u64>>> = Vec::with_capacity(K);
            for k in 0..K {
                let src = (k * 7) % n; // slot written by locale src
                hs.push(Some(rt.get_nb(base.add(src * K + k), 1).map_err(e)?));
            }
            for j in 0..K {
                let k = (j * 37 + 11) % K; // a permutation: gcd(37, 200) = 1
                let got = hs[k].take().expect("once").wait().map_err(e)?;
                bufs[k][0] = got[0];
            }
        }
        for (k, b) in bufs.iter().enumerate() {
            let src = (k * 7) % n;
            check!(
                b[0] == val(src, t, k),
                "GET of slot {k} (from {src}) on locale {t}: {} != {}",
                b[0],
                val(src, t, k)
            );
        }
    }
    let left = (me + n - 1) % n;
    let h = rt
        .get_nb_into(vec![0u64; big.len()], bigd.local())
        .map_err(e)?;
    let back = h.wait().map_err(e)?;
    check!(
        back.iter()
            .enumerate()
            .all(|(i, v)| *v == i as u64 * 3 + left as u64),
        "large non-blocking PUT from locale {left} arrived wrong"
    );
    let mut none: Vec<runtime_shim::NbPut<'_, u64>> = Vec::new();
    check!(
        matches!(rt.wait_any(&mut none), Err(Error::InvalidLength { .. })),
        "wait_any on no handles must be an error"
    );
    rt.free_all(bigd).map_err(e)?;
    rt.free_all(d).map_err(e)
}

// ------------------------------------------------------------------ strided

/// Where a strided description puts element `j` of chunk `c` (elements).
fn strided_offsets(count: &[usize], strides: &[usize]) -> Vec<usize> {
    let chunks: usize = count[1..].iter().product();
    let mut out = Vec::new();
    for c in 0..chunks {
        let mut rem = c;
        let mut base = 0;
        for (lvl, &cnt) in count[1..].iter().enumerate() {
            base += (rem % cnt) * strides[lvl];
            rem /= cnt;
        }
        for j in 0..count[0] {
            out.push(base + j);
        }
    }
    out
}

fn strided_case<T: pod::Pod + PartialEq + std::fmt::Debug + From<u8>>(
    rt: &Runtime,
    region: &Dist<T>,
    count: &[usize],
    src_strides: &[usize],
    dst_strides: &[usize],
) -> R {
    let n = rt.num_locales();
    let me = rt.here();
    let right = (me + 1) % n;
    let len = region.len();
    let src_off = strided_offsets(count, src_strides);
    let dst_off = strided_offsets(count, dst_strides);
    let src_len = src_off.iter().max().map_or(0, |m| m + 1);
    let src: Vec<T> = (0..src_len)
        .map(|i| T::from((i as u8).wrapping_mul(7).wrapping_add(me as u8 + 1)))
        .collect();
    // Zero the neighbour's region, write strided, read it back whole.
    let zeros = vec![T::from(0); len];
    let to = region.at(right).map_err(e)?;
    rt.put(to, &zeros).map_err(e)?;
    rt.put_strided(to, dst_strides, &src, src_strides, count)
        .map_err(e)?;
    let mut whole = vec![T::from(0); len];
    rt.get(&mut whole, to).map_err(e)?;
    let mut want = vec![T::from(0); len];
    for (s, d) in src_off.iter().zip(&dst_off) {
        want[*d] = src[*s];
    }
    check!(
        whole == want,
        "strided PUT {count:?} src {src_strides:?} dst {dst_strides:?}: region differs"
    );
    // And back with a strided GET into a fresh buffer.
    let mut back = vec![T::from(0); src_len];
    rt.get_strided(&mut back, src_strides, to, dst_strides, count)
        .map_err(e)?;
    for s in &src_off {
        check!(
            back[*s] == src[*s],
            "strided GET {count:?}: element {s} is {:?}, expected {:?}",
            back[*s],
            src[*s]
        );
    }
    Ok(())
}

fn strided(rt: &'static Runtime) -> R {
    let words = rt.alloc_all::<u32>(512).map_err(e)?;
    let bytes = rt.alloc_all::<u8>(512).map_err(e)?;
    rt.barrier().map_err(e)?;
    strided_case(rt, &words, &[3, 5], &[7], &[11])?;
    strided_case(rt, &words, &[2, 3, 4], &[5, 17], &[3, 13])?;
    strided_case(rt, &words, &[7], &[], &[])?;
    strided_case(rt, &words, &[1, 9, 2], &[1, 9], &[3, 31])?;
    strided_case(rt, &bytes, &[1, 9], &[5], &[3])?;
    strided_case(rt, &bytes, &[3, 4, 3], &[5, 23], &[7, 29])?;
    // Many one-byte chunks (more than the window of outstanding operations).
    strided_case(rt, &bytes, &[1, 150], &[2], &[3])?;
    rt.barrier().map_err(e)?;
    // Bad descriptions.
    let to = words.at(0).map_err(e)?;
    let src = [0u32; 16];
    let r = rt.put_strided(to, &[4], &src, &[], &[2, 2]);
    check!(
        matches!(&r, Err(Error::Strides(m)) if m.contains("1 local strides are needed, got 0")),
        "mismatched strides: {r:?}"
    );
    let r = rt.put_strided(to, &[4], &src, &[9], &[2, 3]);
    check!(
        matches!(&r, Err(Error::InvalidLength { .. })),
        "source too short: {r:?}"
    );
    let r = rt.put_strided(to, &[1 << 30], &src, &[2], &[2, 2]);
    check!(
        matches!(&r, Err(Error::Comm(c)) if c.kind() == CommErrorKind::AddressOutOfHeap),
        "remote side beyond the heap: {r:?}"
    );
    rt.free_all(bytes).map_err(e)?;
    rt.free_all(words).map_err(e)
}

// -------------------------------------------------------------------- tasks

fn fib(rt: &'static Runtime, k: u64) -> u64 {
    if k < 2 {
        return k;
    }
    let a = rt.spawn(move || fib(rt, k - 1)).expect("spawn");
    let b = fib(rt, k - 2);
    a.join().expect("join") + b
}

fn chain(rt: &'static Runtime, d: u32) -> u32 {
    if d == 0 {
        return 0;
    }
    rt.spawn(move || chain(rt, d - 1))
        .expect("spawn")
        .join()
        .expect("join")
        + 1
}

fn tasks(rt: &'static Runtime) -> R {
    let n = rt.num_locales();
    let me = rt.here();
    let w = WORDS.get().expect("set before init returned");
    let before = rt.pool_stats();
    // A task tree: fib(15) spawns ~2000 tasks and joins each.
    let f = rt
        .spawn(move || fib(rt, 15))
        .map_err(e)?
        .join()
        .map_err(e)?;
    check!(f == 610, "fib(15) by tasks = {f}");
    // A chain much deeper than the workers: each link waits for the next.
    let c = rt
        .spawn(move || chain(rt, 300))
        .map_err(e)?
        .join()
        .map_err(e)?;
    check!(c == 300, "chain of 300 tasks = {c}");
    let after = rt.pool_stats();
    // A waiting task runs its own child if no worker took it yet (a join
    // runs a queued task, PGAS_JOIN_RUNS_QUEUED) or other ready tasks
    // (helping): either way the tree completes on few workers.
    check!(
        after.helped + after.inlined > before.helped + before.inlined,
        "waiting tasks never ran other tasks: {after:?}"
    );
    // sync { begin { begin ... } }: nested begins in one scope.
    let count = Arc::new(AtomicU64::new(0));
    let c2 = count.clone();
    rt.sync(move |s| {
        for _ in 0..10 {
            let (s2, c3) = (s.clone(), c2.clone());
            s.begin(move || {
                for _ in 0..10 {
                    let c4 = c3.clone();
                    s2.begin(move || {
                        c4.fetch_add(1, Ordering::SeqCst);
                    })
                    .expect("begin");
                }
            })
            .expect("begin");
        }
    })
    .map_err(e)?;
    check!(
        count.load(Ordering::SeqCst) == 100,
        "sync scope returned with {} of 100 tasks done",
        count.load(Ordering::SeqCst)
    );
    // Detached begins: waited for by hand here (finalize would too).
    let det = Arc::new(AtomicU64::new(0));
    for _ in 0..50 {
        let d = det.clone();
        rt.begin(move || {
            d.fetch_add(1, Ordering::SeqCst);
        })
        .map_err(e)?;
    }
    rt.wait_until(|| det.load(Ordering::SeqCst) == 50);
    // MCM: X; begin { Y }: the child sees the parent's remote PUT; and the
    // parent sees the child's remote PUT after joining it.
    let right = (me + 1) % n;
    let slot = w.at(right).map_err(e)?;
    for i in 0..20u64 {
        let v = (me as u64) << 32 | i;
        rt.put_value(slot, v).map_err(e)?;
        let seen = rt
            .spawn(move || rt.get_value(slot).expect("GET in child"))
            .map_err(e)?
            .join()
            .map_err(e)?;
        check!(seen == v, "child saw {seen:#x}, parent had PUT {v:#x}");
        rt.spawn(move || rt.put_value(slot, v + 1000).expect("PUT in child"))
            .map_err(e)?
            .join()
            .map_err(e)?;
        let seen = rt.get_value(slot).map_err(e)?;
        check!(
            seen == v + 1000,
            "after join saw {seen:#x}, child PUT {:#x}",
            v + 1000
        );
    }
    rt.barrier().map_err(e)?;
    // Nested on-statements deeper than the workers, each body also running
    // a task that does its own on-statement.
    if me == 0 {
        let depth = 24u64;
        let r = u64_of(&rt.on(1 % n, DEEP, &pod::to_bytes(&depth)).map_err(e)?);
        check!(
            r == depth,
            "nested on-statements of depth {depth} returned {r}"
        );
        // A tree of on-statements: TREE fans out to every locale, 3 levels.
        let leaves = u64_of(&rt.on(0, TREE, &pod::to_bytes(&3u64)).map_err(e)?);
        let want = (n as u64).pow(3);
        check!(
            leaves == want,
            "on-statement tree counted {leaves} leaves, expected {want}"
        );
    }
    rt.barrier().map_err(e)?;
    // Finalize from a task is refused.
    let r = rt
        .spawn(move || rt.finalize().map_err(|x| x.to_string()))
        .map_err(e)?
        .join()
        .map_err(e)?;
    check!(
        matches!(&r, Err(m) if m.contains("not from a task")),
        "finalize from a task: {r:?}"
    );
    // A panicking task is an error at join, naming the panic.
    let r = rt
        .spawn(|| -> u32 { panic!("deliberate task failure") })
        .map_err(e)?
        .join();
    check!(
        matches!(&r, Err(Error::TaskPanicked(m)) if m.contains("deliberate")),
        "panicking task: {r:?}"
    );
    if me == 0 {
        let s = rt.pool_stats();
        println!(
            "shim_probe tasks: {} workers, {} tasks run, {} run by waiting tasks, {} stolen, {} run by their joiner",
            rt.num_workers(),
            s.run,
            s.helped,
            s.stolen,
            s.inlined
        );
    }
    Ok(())
}

// ---------------------------------------------------------------- unordered

fn unordered(rt: &'static Runtime) -> R {
    const K: usize = 300;
    let n = rt.num_locales();
    let me = rt.here();
    let d = rt.alloc_all::<u64>(n * K).map_err(e)?;
    let counters = rt.alloc_all::<u64>(3).map_err(e)?;
    rt.barrier().map_err(e)?;
    // Unordered PUTs to every locale's slots (more than one buffer's worth).
    for k in 0..K {
        let t = (k + me) % n;
        let v = [(me * K + k) as u64 + 1];
        rt.put_unordered(d.at(t).map_err(e)?.add(me * K + k), &v)
            .map_err(e)?;
    }
    // Unordered atomics: u64 and i32 adds, f64 adds, to every locale.
    for k in 0..K {
        let t = (k * 3 + me) % n;
        let c = counters.at(t).map_err(e)?;
        rt.atomic(c).add_unordered(1).map_err(e)?;
        rt.atomic(c.add(1).cast::<i32>())
            .sub_unordered(2)
            .map_err(e)?;
        rt.atomic(c.add(2).cast::<f64>())
            .add_unordered(0.5)
            .map_err(e)?;
    }
    rt.unordered_fence().map_err(e)?;
    rt.barrier().map_err(e)?;
    // Each slot written once; check mine.
    for src in 0..n {
        let mut got = vec![0u64; K];
        rt.get(&mut got, d.local().add(src * K)).map_err(e)?;
        for (k, g) in got.iter().enumerate() {
            let want = if (k + src) % n == me {
                (src * K + k) as u64 + 1
            } else {
                0
            };
            check!(
                *g == want,
                "unordered PUT slot {k} from {src}: {g} != {want}"
            );
        }
    }
    // Nobody writes a slot again before every locale has checked its own.
    rt.barrier().map_err(e)?;
    // Counters: how many (src, k) pairs hit me.
    let hits: usize = (0..n)
        .map(|src| (0..K).filter(|k| (k * 3 + src) % n == me).count())
        .sum();
    let c = counters.local();
    let a = rt.atomic(c).read().map_err(e)?;
    let b = rt.atomic(c.add(1).cast::<i32>()).read().map_err(e)?;
    let f = rt.atomic(c.add(2).cast::<f64>()).read().map_err(e)?;
    check!(a == hits as u64, "unordered u64 adds: {a} != {hits}");
    check!(
        b == -2 * hits as i32,
        "unordered i32 subs: {b} != {}",
        -2 * hits as i32
    );
    check!(
        f == 0.5 * hits as f64,
        "unordered f64 adds: {f} != {}",
        0.5 * hits as f64
    );
    // Unordered GETs into my heap, from every locale, read after the fence.
    let landing = rt.alloc::<u64>(K).map_err(e)?;
    for k in 0..K {
        let t = (k + 1) % n;
        // Slot (me' = (k + 1 - k%n... ) simply: read slot k of src 0's block on t.
        rt.get_unordered(landing.add(k), d.at(t).map_err(e)?.add(k), 1)
            .map_err(e)?;
    }
    rt.unordered_fence().map_err(e)?;
    let mut got = vec![0u64; K];
    rt.get(&mut got, landing).map_err(e)?;
    for (k, g) in got.iter().enumerate() {
        let t = (k + 1) % n;
        let want = if k % n == t { k as u64 + 1 } else { 0 };
        check!(
            *g == want,
            "unordered GET of slot {k} on {t}: {g} != {want}"
        );
    }
    rt.free(landing).map_err(e)?;
    // Every locale has read the slots before they are written again.
    rt.barrier().map_err(e)?;
    // A task's unordered ops are done when it ends (no explicit fence).
    let slot = d.at((me + 1) % n).map_err(e)?.add(me * K);
    rt.spawn(move || rt.put_unordered(slot, &[4242u64]).expect("buffered"))
        .map_err(e)?
        .join()
        .map_err(e)?;
    check!(
        rt.get_value(slot).map_err(e)? == 4242,
        "a task's unordered PUT was not done by its end"
    );
    // Unordered GET into remote memory is refused.
    let r = rt.get_unordered(d.at((me + 1) % n).map_err(e)?, d.local(), 1);
    check!(
        n == 1 || matches!(&r, Err(Error::BadAddress { .. })),
        "unordered GET to a remote destination: {r:?}"
    );
    rt.free_all(counters).map_err(e)?;
    rt.free_all(d).map_err(e)
}

// -------------------------------------------------------------- collectives

fn collectives(rt: &'static Runtime) -> R {
    let n = rt.num_locales();
    let me = rt.here();
    let d = rt.alloc_all::<u64>(1).map_err(e)?;
    rt.barrier().map_err(e)?;
    let right = d.at((me + 1) % n).map_err(e)?;
    // PUT, barrier, read: the left neighbour's PUT of this round is visible.
    for i in 1..=200u64 {
        rt.put_value(right, i).map_err(e)?;
        rt.barrier().map_err(e)?;
        let got = rt.get_value(d.local()).map_err(e)?;
        check!(got == i, "round {i}: after the barrier my word holds {got}");
        rt.barrier().map_err(e)?;
    }
    for i in 0..20u64 {
        let v = rt
            .broadcast(if me == 0 { 0xabc0 + i } else { 0 })
            .map_err(e)?;
        check!(v == 0xabc0 + i, "broadcast {i} gave {v:#x}");
    }
    let big: Vec<u8> = (0..100_000u32).map(|i| (i * 13 % 251) as u8).collect();
    let got = rt
        .broadcast_bytes(if me == 0 { &big } else { &[] })
        .map_err(e)?;
    check!(got == big, "large broadcast differs ({} bytes)", got.len());
    let got = rt.broadcast_bytes(&[]).map_err(e)?;
    check!(got.is_empty(), "empty broadcast gave {} bytes", got.len());
    let got = rt
        .broadcast_bytes(if me == 0 { &big[..1024] } else { &big[..3] })
        .map_err(e)?;
    check!(got == big[..1024], "1024-byte broadcast differs");
    rt.free_all(d).map_err(e)
}

// ---------------------------------------------------------------------- bad

fn bad(rt: &'static Runtime) -> R {
    let n = rt.num_locales();
    let me = rt.here();
    let d = rt.alloc_all::<u64>(4).map_err(e)?;
    let p = d.local();
    let expect = |what: &str, r: runtime_shim::Result<()>, needle: &str| -> R {
        match r {
            Ok(()) => Err(format!(
                "{what}: succeeded, expected an error naming {needle:?}"
            )),
            Err(x) => {
                let m = x.to_string();
                check!(
                    m.contains(needle),
                    "{what}: error {m:?} does not name {needle:?}"
                );
                if me == 0 {
                    println!("shim_probe bad: {what}: {m}");
                }
                Ok(())
            }
        }
    };
    let off = GlobalPtr::<u64>::new(n, p.addr());
    expect("PUT to locale n", rt.put(off, &[1]), &format!("locale {n}"))?;
    expect(
        "GET from locale n",
        rt.get(&mut [0u64], off),
        &format!("locale {n}"),
    )?;
    expect(
        "atomic on locale n",
        rt.atomic(off).add(1),
        &format!("locale {n}"),
    )?;
    expect(
        "on-statement to locale n",
        rt.on(n, WHO, &[]).map(|_| ()),
        &format!("locale {n}"),
    )?;
    let wild = GlobalPtr::<u64>::new(me, 0x10);
    expect("PUT outside the heap", rt.put(wild, &[1]), "0x10")?;
    let heap = rt.comm().heap().size();
    let mut huge = vec![0u8; heap + 64];
    expect(
        "GET longer than the heap",
        rt.get(&mut huge, p.cast::<u8>()),
        &format!("+{} bytes", heap + 64),
    )?;
    expect(
        "misaligned atomic",
        rt.atomic(p.cast::<u8>().add(1).cast::<u64>()).add(1),
        "not 8-byte aligned",
    )?;
    expect(
        "bitwise atomic on f64",
        rt.amo_bits(&AtomicOp::Xor.request(p.global_addr(), AmoType::F64, 1, false))
            .map(|_| ()),
        "Xor",
    )?;
    expect(
        "unordered exchange",
        rt.amo_unordered_bits(p.global_addr(), AmoType::U64, AtomicOp::Xchg, 1),
        "no unordered form",
    )?;
    expect(
        "unregistered on-statement body",
        rt.on((me + 1) % n, fn_id("probe.never-registered"), &[])
            .map(|_| ()),
        "not registered",
    )?;
    expect(
        "allocation larger than the heap",
        rt.alloc::<u8>(heap * 2).map(|_| ()),
        "heap exhausted",
    )?;
    expect(
        "Dist part of locale n",
        d.at(n).map(|_| ()),
        &format!("locale {n}"),
    )?;
    expect(
        "second init",
        runtime_shim::init().map(|_| ()),
        "already initialized",
    )?;
    expect(
        "PUT of a stride list that does not add up",
        rt.put_strided(p, &[1, 2], &[0u64; 4], &[1], &[1, 2]),
        "1 remote strides are needed, got 2",
    )?;
    rt.free_all(d).map_err(e)
}

// ---------------------------------------------------------------------- main

fn register(b: &Builder) -> runtime_shim::Result<()> {
    b.register("probe.who", |ctx, _| pod::to_bytes(&(ctx.here() as u64)))?;
    // DEEP(d): on the next locale DEEP(d-1); meanwhile a task of this body
    // does an on-statement of its own; returns d.
    b.register("probe.deep", |ctx, a| {
        let d = u64_of(a);
        if d == 0 {
            return pod::to_bytes(&0u64);
        }
        let rt = ctx.rt();
        let next = (ctx.here() + 1) % rt.num_locales();
        let side = rt
            .spawn(move || u64_of(&rt.on(next, WHO, &[]).expect("side on-statement")))
            .expect("spawn");
        let r = u64_of(
            &rt.on(next, DEEP, &pod::to_bytes(&(d - 1)))
                .expect("nested on"),
        );
        let who = side.join().expect("side task");
        assert_eq!(who, next as u64, "side on-statement answered {who}");
        pod::to_bytes(&(r + 1))
    })?;
    // TREE(level): coforall over locales of TREE(level-1); counts leaves.
    b.register("probe.tree", |ctx, a| {
        let level = u64_of(a);
        if level == 0 {
            return pod::to_bytes(&1u64);
        }
        let rt = ctx.rt();
        let replies = rt
            .coforall_locales(TREE, &pod::to_bytes(&(level - 1)))
            .expect("coforall over locales");
        pod::to_bytes(&replies.iter().map(|r| u64_of(r)).sum::<u64>())
    })?;
    Ok(())
}

fn run(rt: &'static Runtime, scenario: &str) -> R {
    match scenario {
        "atomics" => atomics(rt),
        "nb" => nb(rt),
        "strided" => strided(rt),
        "tasks" => tasks(rt),
        "unordered" => unordered(rt),
        "collectives" => collectives(rt),
        "bad" => bad(rt),
        other => Err(format!("unknown scenario {other:?}")),
    }
}

fn main() -> ExitCode {
    pgas_tests::log_to_stderr();
    let mut scenarios: Vec<String> = std::env::args().skip(1).collect();
    if scenarios.is_empty() || scenarios == ["all"] {
        scenarios = pgas_tests::expect::SHIM_PROBE_SCENARIOS
            .iter()
            .map(|s| s.to_string())
            .collect();
    }
    let rt = match pgas_tests::start("shim_probe", register) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let words = match rt.alloc_all::<u64>(16) {
        Ok(w) => w,
        Err(x) => {
            eprintln!("shim_probe: {x}");
            return ExitCode::FAILURE;
        }
    };
    let _ = WORDS.set(words);
    if rt.here() == 0 {
        println!("shim_probe: {}", rt.describe());
    }
    pgas_tests::run_scenarios(rt, "shim_probe", &scenarios, run, |_| true)
}
