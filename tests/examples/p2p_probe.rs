//! Point-to-point synchronisation through the public API (run by
//! `tests/tests/library.rs`, 3 locales): a ring of `put_with_signal` and
//! `wait_until_local`, `wait_until_any` / `all`, `test_local`, `quiet`
//! making stores visible to a peer that was signalled out of band,
//! `fence`, non-blocking fetching atomics from many tasks, an MCS lock
//! guarding a plain counter against 4 tasks per locale, typed on-statements
//! (feature `serde`), and bad input.

use pgas_tests::{check, e};
use runtime_shim::{Cmp, Error, GlobalLock, GlobalPtr, SignalOp};
use std::process::ExitCode;

type R<T = ()> = Result<T, String>;

const ROUNDS: u64 = 50;

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Summary {
    sum: u64,
    label: String,
}
const DATA: usize = 300; // u64s, above the inject size of every provider

fn run() -> R {
    let builder = runtime_shim::Builder::new();
    let typed = builder
        .register_typed("p2p.sum", |ctx, (v, label): (Vec<u64>, String)| Summary {
            sum: v.iter().sum(),
            label: format!("{label}@{}", ctx.here()),
        })
        .map_err(e("register_typed"))?;
    let rt = builder.init().map_err(e("init"))?;
    let n = rt.num_locales();
    let me = rt.here();
    let next = (me + 1) % n;
    let data = rt.alloc_all::<u64>(DATA).map_err(e("alloc_all"))?;
    let sig = rt.alloc_all::<u64>(n).map_err(e("alloc_all"))?;
    rt.barrier().map_err(e("barrier"))?;
    // Ring: each round, PUT data with a signal to the next locale; wait for
    // the previous one's and check its data is all there.
    for r in 1..=ROUNDS {
        let payload: Vec<u64> = (0..DATA as u64)
            .map(|i| r * 1_000_000 + i * 10 + me as u64)
            .collect();
        rt.put_with_signal(
            data.at(next).map_err(e("at"))?,
            &payload,
            sig.at(next).map_err(e("at"))?,
            SignalOp::Set,
            r,
        )
        .map_err(e("put_with_signal"))?;
        rt.wait_until_local(sig.local(), Cmp::Ge, r)
            .map_err(e("wait_until_local"))?;
        let prev = (me + n - 1) % n;
        let mut got = vec![0u64; DATA];
        rt.get(&mut got, data.local()).map_err(e("get"))?;
        check!(
            got.iter()
                .enumerate()
                .all(|(i, v)| *v == r * 1_000_000 + i as u64 * 10 + prev as u64),
            "round {r}: the data from locale {prev} was not there with its signal"
        );
        // Nobody overwrites it before everyone has read (the signal words
        // of the next round are the only other traffic).
        rt.barrier().map_err(e("barrier"))?;
    }
    // Any / all: everyone adds 1 to its slot `me` on every locale.
    for t in 0..n {
        rt.atomic(sig.at(t).map_err(e("at"))?.add(me))
            .write(0)
            .map_err(e("reset"))?;
    }
    rt.barrier().map_err(e("barrier"))?;
    for t in 0..n {
        rt.atomic(sig.at(t).map_err(e("at"))?.add(me))
            .add(7)
            .map_err(e("add"))?;
    }
    let slots: Vec<GlobalPtr<u64>> = (0..n).map(|i| sig.local().add(i)).collect();
    let i = rt
        .wait_until_any(&slots, Cmp::Eq, 7)
        .map_err(e("wait_until_any"))?;
    check!(i < n, "wait_until_any gave index {i}");
    rt.wait_until_all(&slots, Cmp::Eq, 7)
        .map_err(e("wait_until_all"))?;
    check!(
        rt.test_local(slots[0], Cmp::Eq, 7)
            .map_err(e("test_local"))?,
        "test_local after wait_until_all"
    );
    check!(
        !rt.test_local(slots[0], Cmp::Gt, 7)
            .map_err(e("test_local"))?,
        "test_local > 7"
    );
    rt.barrier().map_err(e("barrier"))?;
    // quiet: a PUT is visible to a peer told out of band (the launcher's
    // barrier orders nothing in the network).
    let word = data.at(next).map_err(e("at"))?;
    rt.put_value(word, 4242 + me as u64).map_err(e("put"))?;
    rt.fence().map_err(e("fence"))?;
    rt.quiet().map_err(e("quiet"))?;
    rt.comm().oob().barrier().map_err(e("oob barrier"))?;
    let prev = (me + n - 1) % n;
    let v = rt.get_value(data.local()).map_err(e("get"))?;
    check!(v == 4242 + prev as u64, "after quiet: {v}");
    rt.barrier().map_err(e("barrier"))?;
    // Non-blocking fetching atomics from 8 tasks, 25 each, to locale 0.
    let counter = sig.at(0).map_err(e("at"))?;
    if me == 0 {
        rt.atomic(counter).write(0).map_err(e("reset"))?;
    }
    rt.barrier().map_err(e("barrier"))?;
    let mut olds = Vec::new();
    for _ in 0..8 {
        let hs: Vec<_> = (0..25)
            .map(|_| rt.atomic(counter).fetch_add_nb(1))
            .collect::<Result<_, _>>()
            .map_err(e("fetch_add_nb"))?;
        for h in hs {
            olds.push(h.wait().map_err(e("wait"))?);
        }
    }
    rt.barrier().map_err(e("barrier"))?;
    let total = rt.atomic(counter).read().map_err(e("read"))?;
    check!(
        total == 200 * n as u64,
        "counter {total}, expected {}",
        200 * n
    );
    olds.sort_unstable();
    olds.dedup();
    check!(
        olds.len() == 200,
        "fetched values repeated: {} distinct",
        olds.len()
    );
    let cas = rt
        .atomic(counter)
        .compare_exchange_nb(u64::MAX, 1)
        .map_err(e("cas_nb"))?
        .wait()
        .map_err(e("wait"))?;
    check!(cas >= 200, "cas_nb read {cas}");
    // An MCS lock on locale 0 protecting a plain counter on the last
    // locale: 4 tasks per locale, 25 read-modify-writes each, by GET/PUT.
    let lockw = rt.alloc_all::<u64>(1).map_err(e("alloc_all"))?;
    let lock = if me == 0 {
        GlobalLock::init(rt, lockw.local()).map_err(e("lock init"))?
    } else {
        GlobalLock::at(lockw.at(0).map_err(e("at"))?)
    };
    let plain = data.at(n - 1).map_err(e("at"))?.add(1);
    if me == n - 1 {
        rt.put_value(plain, 0).map_err(e("reset"))?;
    }
    rt.barrier().map_err(e("barrier"))?;
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            rt.spawn(move || -> R {
                for _ in 0..25 {
                    let g = lock.acquire(rt).map_err(e("acquire"))?;
                    let v = rt.get_value(plain).map_err(e("get"))?;
                    rt.put_value(plain, v + 1).map_err(e("put"))?;
                    g.release().map_err(e("release"))?;
                }
                Ok(())
            })
        })
        .collect::<Result<_, _>>()
        .map_err(e("spawn"))?;
    for t in tasks {
        t.join().map_err(e("join"))??;
    }
    rt.barrier().map_err(e("barrier"))?;
    let count = rt.get_value(plain).map_err(e("get"))?;
    check!(
        count == 100 * n as u64,
        "lock-protected counter {count}, expected {}",
        100 * n
    );
    check!(
        rt.atomic(lock.word()).read().map_err(e("read"))? == 0,
        "the lock is not free at the end"
    );
    check!(
        rt.unlock_raw(lock, 0).is_err(),
        "a made-up lock token was accepted"
    );
    rt.barrier().map_err(e("barrier"))?;
    // Bad input.
    match rt.wait_until_local(sig.at(next).map_err(e("at"))?, Cmp::Eq, 0) {
        Err(Error::BadAddress { locale, .. }) if n == 1 || locale == next => {}
        Err(other) => return Err(format!("waiting on a remote word: {other}")),
        Ok(()) if n == 1 => {}
        Ok(()) => return Err("waiting on a remote word was accepted".into()),
    }
    match rt.wait_until_any::<u64>(&[], Cmp::Eq, 0) {
        Err(Error::InvalidLength { .. }) => {}
        other => return Err(format!("wait_until_any on no words: {other:?}")),
    }
    let odd = GlobalPtr::<u64>::new(me, sig.local().addr() + 4);
    check!(
        rt.test_local(odd, Cmp::Eq, 0).is_err(),
        "a misaligned word was accepted"
    );
    // Symmetric allocation despite different allocation histories: locale
    // k first allocates k blocks of its own.
    let mut junk = Vec::new();
    for i in 0..me {
        junk.push(rt.alloc::<u8>(100 + 1000 * i).map_err(e("alloc"))?);
    }
    let syms: Vec<runtime_shim::Dist<u64>> = (0..3)
        .map(|k| rt.alloc_sym::<u64>(10 + k * 500))
        .collect::<Result<_, _>>()
        .map_err(e("alloc_sym"))?;
    for d in &syms {
        let off = d.local().addr() - rt.comm().heap().base_addr();
        let offs = rt.world().fcollect(&[off]).map_err(e("fcollect"))?;
        check!(
            offs.iter().all(|o| *o == off),
            "symmetric offsets differ: {offs:?}"
        );
        for l in 0..n {
            let want = rt
                .comm()
                .symmetric(d.local().global_addr(), l)
                .map_err(e("symmetric"))?;
            check!(
                d.at(l).map_err(e("at"))?.global_addr() == want,
                "part {l} address"
            );
        }
        // SAFETY: nobody writes this locale's part until the barrier below
        // (the allocation zeroed it before its own barrier).
        let zeroed = unsafe { d.local_slice() }.iter().all(|v| *v == 0);
        check!(zeroed, "a symmetric allocation was not zeroed");
    }
    rt.put(syms[0].at(next).map_err(e("at"))?, &[me as u64 + 5; 10])
        .map_err(e("put"))?;
    rt.barrier().map_err(e("barrier"))?;
    // SAFETY: between two barriers with no writer of this part.
    let got = unsafe { syms[0].local_slice() }.to_vec();
    check!(
        got == vec![((me + n - 1) % n) as u64 + 5; 10],
        "symmetric part after PUT: {got:?}"
    );
    rt.barrier().map_err(e("barrier"))?;
    let too_big = rt.alloc_sym::<u8>(rt.comm().heap().size() + 1);
    check!(
        too_big.is_err(),
        "an oversized symmetric allocation succeeded"
    );
    for p in junk {
        rt.free(p).map_err(e("free"))?;
    }
    // Typed on-statements (feature serde).
    let s = rt
        .on_typed(
            next,
            typed,
            &(vec![1, 2, 3, me as u64], format!("from {me}")),
        )
        .map_err(e("on_typed"))?;
    check!(
        s == Summary {
            sum: 6 + me as u64,
            label: format!("from {me}@{next}")
        },
        "typed reply {s:?}"
    );
    match rt.on(next, typed.id(), b"not bincode") {
        Err(err) if err.to_string().contains("p2p.sum") && err.to_string().contains("decode") => {}
        other => return Err(format!("a garbled typed argument: {other:?}")),
    }
    rt.barrier().map_err(e("barrier"))?;
    pgas_tests::finish(rt, "p2p_probe", &format!("{n} locales"))
}

fn main() -> ExitCode {
    pgas_tests::exit("p2p_probe", run())
}
