//! Liveness probes through the public API, run under `pgasrun` by
//! `tests/tests/liveness.rs` with a time limit (a hang is the failure).
//!
//! ```text
//! pgasrun -n 2 liveness barrier-in-task|handlers-prove|forget-nb [ROUNDS]
//! ```
//!
//! * `barrier-in-task`: every round, a task PUTs a word to the next locale
//!   and enters the barrier from inside the task; after it, the word from
//!   the previous locale must be there. The barrier's flag PUTs are
//!   injected on the task's own context; on providers with manual progress
//!   (tcp;ofi_rxm, udp;ofi_rxd) they leave only while someone reads that
//!   context's CQ, so the waiting task must drive it.
//! * `handlers-prove`: both locales at once send "fast" on-statements whose
//!   bodies (in the target's handler thread) do a non-fetching native atomic
//!   back on the sender's word. With `PGAS_AM_DONE=put` each handler must
//!   prove its atomic visible (a no-op to the other locale) before its
//!   'done': if the other *handler* had to answer, two handlers proving to
//!   each other would wait forever. Counts are checked at the end.
//! * `forget-nb`: `mem::forget` of non-blocking GET/PUT handles in safe
//!   code, then fresh allocations that the leaked transfers must not touch.
//! * `served-while-finalizing`: every locale but 0 calls `finalize` at once;
//!   locale 0 then works on them for ROUNDS rounds (a GET, a fetch-add and
//!   a blocking on-statement each, the targets taking turns) and checks
//!   every answer. A finalizing locale keeps serving (its poller, its
//!   handler threads) while its main thread waits for the peers' shutdowns
//!   (parked, in growing naps, unparked by each shutdown).

use pgas_tests::e;
use runtime_shim::{Builder, Runtime};
use std::process::ExitCode;

type R<T = ()> = Result<T, String>;

fn barrier_in_task(rt: &'static Runtime, rounds: u64) -> R {
    let n = rt.num_locales();
    let me = rt.here();
    let d = rt.alloc_all::<u64>(1).map_err(e("alloc_all"))?;
    rt.barrier().map_err(e("barrier"))?;
    let next = (me + 1) % n;
    let prev = (me + n - 1) % n;
    for r in 1..=rounds {
        let target = d.at(next).map_err(e("at"))?;
        let t = rt
            .spawn(move || -> R {
                rt.put(target, &[r * 1000 + me as u64]).map_err(e("put"))?;
                rt.barrier().map_err(e("barrier in a task"))
            })
            .map_err(e("spawn"))?;
        t.join().map_err(e("join"))??;
        let got = rt.get_value(d.local()).map_err(e("get"))?;
        if got != r * 1000 + prev as u64 {
            return Err(format!(
                "round {r}: locale {me} holds {got}, expected {} from locale {prev}",
                r * 1000 + prev as u64
            ));
        }
        // Nobody writes the word again before everyone has read it.
        rt.barrier().map_err(e("barrier"))?;
    }
    Ok(())
}

fn handlers_prove(rt: &'static Runtime, rounds: u64, add: runtime_shim::FnId) -> R {
    let n = rt.num_locales();
    let me = rt.here();
    let c = rt.alloc_all::<u64>(1).map_err(e("alloc_all"))?;
    rt.put_value(c.local(), 0).map_err(e("reset"))?;
    rt.barrier().map_err(e("barrier"))?;
    let other = (me + 1) % n;
    let word = c.local().global_addr();
    for _ in 0..rounds {
        rt.on_fast(other, add, &word.addr.to_le_bytes())
            .map_err(e("on_fast"))?;
    }
    rt.barrier().map_err(e("barrier"))?;
    let got = rt.atomic(c.local()).read().map_err(e("read"))?;
    if got != rounds {
        return Err(format!(
            "locale {me}: {got} of {rounds} atomic adds arrived"
        ));
    }
    Ok(())
}

fn forget_nb(rt: &'static Runtime, rounds: u64) -> R {
    const N: usize = 1 << 16;
    let n = rt.num_locales();
    let me = rt.here();
    let d = rt.alloc_all::<u8>(N).map_err(e("alloc_all"))?;
    rt.put(d.local(), &vec![0x5a; N]).map_err(e("fill"))?;
    rt.barrier().map_err(e("barrier"))?;
    let peer = d.at((me + 1) % n).map_err(e("at"))?;
    for r in 0..rounds {
        // Safe code: the handles own their buffers, so forgetting them
        // leaks the buffers instead of letting the transfers land in
        // memory that is freed and reused.
        std::mem::forget(rt.get_nb(peer, N).map_err(e("get_nb"))?);
        std::mem::forget(rt.put_nb(peer, vec![0x5a; N]).map_err(e("put_nb"))?);
        let fresh = vec![r as u8; N];
        rt.task_end_hook().map_err(e("task end"))?;
        if let Some(k) = fresh.iter().position(|b| *b != r as u8) {
            return Err(format!(
                "round {r}: byte {k} of a fresh buffer was overwritten by a forgotten transfer"
            ));
        }
    }
    rt.barrier().map_err(e("barrier"))?;
    Ok(())
}

fn served_while_finalizing(rt: &'static Runtime, rounds: u64, echo: runtime_shim::FnId) -> R {
    let n = rt.num_locales();
    let me = rt.here();
    if n < 2 {
        return Err("served-while-finalizing needs 2 locales or more".into());
    }
    // Word 0: a value for GETs; word 1: a fetch-add counter.
    let d = rt.alloc_all::<u64>(2).map_err(e("alloc_all"))?;
    rt.put(d.local(), &[me as u64 * 7 + 1, 0])
        .map_err(e("fill"))?;
    rt.barrier().map_err(e("barrier"))?;
    if me != 0 {
        return rt.finalize().map_err(e("finalize"));
    }
    let peers = n as u64 - 1;
    for r in 0..rounds {
        let t = 1 + (r % peers) as usize;
        let w = d.at(t).map_err(e("at"))?;
        let v = rt.get_value(w).map_err(e("get"))?;
        if v != t as u64 * 7 + 1 {
            return Err(format!("round {r}: GET from locale {t} gave {v}"));
        }
        let old = rt
            .atomic(w.add(1))
            .fetch_add(1u64)
            .map_err(e("fetch_add"))?;
        if old != r / peers {
            return Err(format!(
                "round {r}: fetch-add on locale {t} returned {old}, expected {}",
                r / peers
            ));
        }
        let out = rt.on(t, echo, &r.to_le_bytes()).map_err(e("on"))?;
        let want = (r + t as u64).to_le_bytes();
        if out != want {
            return Err(format!(
                "round {r}: on-statement on locale {t} answered {out:?}, expected {want:?}"
            ));
        }
    }
    Ok(())
}

fn run() -> R {
    let what: String = pgas_tests::arg(1, "scenario", String::new())?;
    let rounds: u64 = pgas_tests::arg(2, "round count", 100)?;
    let builder = Builder::new();
    let add = builder
        .register("liveness.add-back", |ctx, args| {
            let addr = u64::from_le_bytes(args[..8].try_into().expect("8 bytes"));
            let w = runtime_shim::GlobalPtr::<u64>::new(ctx.caller(), addr);
            ctx.rt()
                .atomic(w)
                .add(1)
                .unwrap_or_else(|err| panic!("add back: {err}"));
            Vec::new()
        })
        .map_err(e("register"))?;
    let echo = builder
        .register("liveness.echo-plus-here", |ctx, args| {
            let r = u64::from_le_bytes(args[..8].try_into().expect("8 bytes"));
            (r + ctx.rt().here() as u64).to_le_bytes().to_vec()
        })
        .map_err(e("register"))?;
    let rt = builder.init().map_err(e("init"))?;
    match what.as_str() {
        "barrier-in-task" => barrier_in_task(rt, rounds)?,
        "handlers-prove" => handlers_prove(rt, rounds, add)?,
        "forget-nb" => forget_nb(rt, rounds)?,
        "served-while-finalizing" => served_while_finalizing(rt, rounds, echo)?,
        other => return Err(format!("unknown probe {other:?}")),
    }
    pgas_tests::finish(rt, &format!("liveness {what}"), &format!("{rounds} rounds"))
}

fn main() -> ExitCode {
    pgas_tests::exit("liveness", run())
}
