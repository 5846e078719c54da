//! One thread of a generated program, step by step through the public API
//! (`runtime_shim::Runtime`), with the engine's random pauses between steps.

use super::words::{atomic_ptr, encode_args, env, programs, size_of, word_len, word_ptr, R, STUCK};
use crate::e;
use crate::litmus::generated::{Coll, OnKind, Step};
use crate::litmus::rng::Rng;
use crate::litmus::value::{decode, decode_word, pattern, stamp, OLD, TORN};
use runtime_shim::{Cmp, GlobalLock, LockGuard, NbGet, NbPut, ReduceOp, Runtime, SignalOp};
use std::collections::HashMap;
use std::time::Instant;

pub(super) type Regs = Vec<(u8, u8)>;

pub(super) fn encode_regs(r: &Regs) -> Vec<u8> {
    r.iter().flat_map(|(a, b)| [*a, *b]).collect()
}

pub(super) fn decode_regs(b: &[u8]) -> Regs {
    b.chunks(2).map(|c| (c[0], c[1])).collect()
}

pub(super) enum Nb {
    Put(NbPut<'static, u8>),
    Get(NbGet<'static, u8>, u8),
}

/// Runs collective `kind` of the world team and checks its result.
pub(super) fn collective(rt: &'static Runtime, kind: Coll, it: u64) -> R {
    let world = rt.world();
    let (me, n) = (rt.here() as u64, rt.num_locales() as u64);
    let bad = |what: &str, got: &dyn std::fmt::Debug| Err(format!("{what} returned {got:?}"));
    match kind {
        Coll::TeamBarrier => world.barrier().map_err(e("team barrier"))?,
        Coll::Broadcast => {
            let got = world
                .broadcast(0, &[stamp(it, 7) + me])
                .map_err(e("broadcast"))?;
            if got != [stamp(it, 7)] {
                return bad("broadcast", &got);
            }
        }
        Coll::Allreduce => {
            let got = world
                .allreduce(&[me + 1], ReduceOp::Sum)
                .map_err(e("allreduce"))?;
            if got != [n * (n + 1) / 2] {
                return bad("allreduce", &got);
            }
        }
        Coll::Fcollect => {
            let got = world.fcollect(&[me + it]).map_err(e("fcollect"))?;
            if got != (0..n).map(|l| l + it).collect::<Vec<_>>() {
                return bad("fcollect", &got);
            }
        }
        Coll::Alltoall => {
            let mine: Vec<u64> = (0..n).map(|j| me * 100 + j).collect();
            let got = world.alltoall(&mine).map_err(e("alltoall"))?;
            if got != (0..n).map(|j| j * 100 + me).collect::<Vec<_>>() {
                return bad("alltoall", &got);
            }
        }
    }
    Ok(())
}

/// Runs thread `t` of program `p` in iteration `it` on the calling thread
/// and returns the registers it (and the blocking bodies it waited for) set.
pub(super) fn run_thread(rt: &'static Runtime, pi: usize, t: u8, it: u64) -> R<Regs> {
    let p = &programs()[pi];
    let th = &p.threads[t as usize];
    let mut rng = Rng::new(&[env().seed, it, t as u64]);
    let size = size_of(p);
    let mut regs: Regs = Vec::new();
    let mut nbs: HashMap<u8, Nb> = HashMap::new();
    let mut begun: HashMap<u8, runtime_shim::TaskHandle<R<Regs>>> = HashMap::new();
    let mut held: HashMap<u8, LockGuard<'static>> = HashMap::new();
    for step in &th.steps {
        rng.pause_ns(env().max_delay);
        match *step {
            Step::Put { w, v, nb } => {
                let ptr = word_ptr(p, w, it)?;
                let data = pattern(it, v, size);
                match nb {
                    None => rt.put(ptr, &data).map_err(e("put"))?,
                    Some(h) => {
                        nbs.insert(h, Nb::Put(rt.put_nb(ptr, data).map_err(e("put_nb"))?));
                    }
                }
            }
            Step::Get { w, r, nb } => {
                let ptr = word_ptr(p, w, it)?;
                match nb {
                    None => {
                        let mut buf = vec![0u8; size];
                        rt.get(&mut buf, ptr).map_err(e("get"))?;
                        regs.push((r, decode(&buf, it)));
                    }
                    Some(h) => {
                        nbs.insert(h, Nb::Get(rt.get_nb(ptr, size).map_err(e("get_nb"))?, r));
                    }
                }
            }
            Step::Wait { h } => match nbs.remove(&h) {
                Some(Nb::Put(x)) => {
                    x.wait().map_err(e("wait put_nb"))?;
                }
                Some(Nb::Get(x, r)) => {
                    let buf = x.wait().map_err(e("wait get_nb"))?;
                    regs.push((r, decode(&buf, it)));
                }
                None => return Err(format!("wait for unknown handle h{h}")),
            },
            Step::AWrite { w, v } => rt
                .atomic(atomic_ptr(p, w, it)?)
                .write(stamp(it, v))
                .map_err(e("atomic write"))?,
            Step::ARead { w, r } => {
                let v = rt
                    .atomic(atomic_ptr(p, w, it)?)
                    .read()
                    .map_err(e("atomic read"))?;
                regs.push((r, decode_word(v, it)));
            }
            Step::AFetchAdd { w, r } => {
                let v = rt
                    .atomic(atomic_ptr(p, w, it)?)
                    .fetch_add(1)
                    .map_err(e("fetch_add"))?;
                regs.push((r, decode_word(v, it)));
            }
            Step::AAdd { w } => rt.atomic(atomic_ptr(p, w, it)?).add(1).map_err(e("add"))?,
            Step::AAddUnordered { w } => rt
                .atomic(atomic_ptr(p, w, it)?)
                .add_unordered(1)
                .map_err(e("add_unordered"))?,
            Step::ACas { w, expect, new, r } => {
                let old = match rt
                    .atomic(atomic_ptr(p, w, it)?)
                    .compare_exchange(stamp(it, expect), stamp(it, new))
                    .map_err(e("compare_exchange"))?
                {
                    Ok(v) | Err(v) => v,
                };
                regs.push((r, decode_word(old, it)));
            }
            Step::Await { w, v } => {
                let a = rt.atomic(atomic_ptr(p, w, it)?);
                let want = stamp(it, v);
                let t0 = Instant::now();
                let mut failed = None;
                rt.wait_until(|| match a.read() {
                    Ok(x) => x == want || t0.elapsed() > STUCK,
                    Err(err) => {
                        failed = Some(err.to_string());
                        true
                    }
                });
                if let Some(f) = failed {
                    return Err(format!("await: {f}"));
                }
                if t0.elapsed() > STUCK {
                    return Err(format!(
                        "stuck: w{w} never became {v} in {}s (program {})",
                        STUCK.as_secs(),
                        p.text()
                    ));
                }
            }
            Step::On { child, kind } => {
                let at = usize::from(p.threads[child as usize].locale);
                let args = encode_args(pi, child, it);
                let body = env().body;
                match kind {
                    OnKind::Blocking => {
                        let reply = rt.on(at, body, &args).map_err(e("on"))?;
                        regs.extend(decode_regs(&reply));
                    }
                    OnKind::Fast => {
                        let reply = rt.on_fast(at, body, &args).map_err(e("on_fast"))?;
                        regs.extend(decode_regs(&reply));
                    }
                    OnKind::Nb => rt.on_nb(at, body, &args).map_err(e("on_nb"))?,
                    OnKind::FastNb => rt.on_fast_nb(at, body, &args).map_err(e("on_fast_nb"))?,
                }
            }
            Step::Begin { child } => {
                let h = rt
                    .spawn(move || run_thread(rt, pi, child, it))
                    .map_err(e("begin"))?;
                begun.insert(child, h);
            }
            Step::Join { child } => {
                let h = begun
                    .remove(&child)
                    .ok_or_else(|| format!("join of T{child}, never begun"))?;
                regs.extend(h.join().map_err(e("join"))??);
            }
            Step::Barrier => rt.barrier().map_err(e("barrier"))?,
            Step::AwaitLocal { w, v, poll } => {
                let ptr = atomic_ptr(p, w, it)?;
                let want = stamp(it, v);
                if poll {
                    let t0 = Instant::now();
                    while !rt.test_local(ptr, Cmp::Eq, want).map_err(e("test_local"))? {
                        if t0.elapsed() > STUCK {
                            return Err(format!(
                                "stuck: w{w} never became {v} in {}s (program {})",
                                STUCK.as_secs(),
                                p.text()
                            ));
                        }
                        rt.yield_now();
                        std::hint::spin_loop();
                    }
                } else {
                    // No timeout of its own: the watchdog ends a hang.
                    rt.wait_until_local(ptr, Cmp::Eq, want)
                        .map_err(e("wait_until_local"))?;
                }
            }
            Step::ReadLocal { w, v, r } => {
                let yes = rt
                    .test_local(atomic_ptr(p, w, it)?, Cmp::Eq, stamp(it, v))
                    .map_err(e("test_local"))?;
                regs.push((r, if yes { v } else { 0 }));
            }
            Step::Fence => rt.fence().map_err(e("fence"))?,
            Step::PutFlag { w, v } => rt
                .put(word_ptr(p, w, it)?, &stamp(it, v).to_le_bytes())
                .map_err(e("flag put"))?,
            Step::PutSignal { w, v, sig } => rt
                .put_with_signal(
                    word_ptr(p, w, it)?,
                    &pattern(it, v, word_len(p, w)),
                    atomic_ptr(p, sig, it)?,
                    SignalOp::Set,
                    stamp(it, 1),
                )
                .map_err(e("put_with_signal"))?,
            Step::Lock { l } => {
                let guard = GlobalLock::at(atomic_ptr(p, l, it)?)
                    .acquire(rt)
                    .map_err(e("lock"))?;
                held.insert(l, guard);
            }
            Step::Unlock { l } => held
                .remove(&l)
                .ok_or_else(|| format!("unlock of w{l}, not held"))?
                .release()
                .map_err(e("unlock"))?,
            Step::Incr { w, r } => {
                let ptr = word_ptr(p, w, it)?;
                let mut buf = vec![0u8; size];
                rt.get(&mut buf, ptr).map_err(e("incr get"))?;
                let v = decode(&buf, it);
                regs.push((r, v));
                // An old or torn value is already a forbidden outcome.
                let next = if v < OLD { v + 1 } else { TORN };
                rt.put(ptr, &pattern(it, next, size))
                    .map_err(e("incr put"))?;
            }
            Step::Collective { kind } => collective(rt, kind, it)?,
        }
    }
    if !held.is_empty() {
        return Err(format!("T{t} ended holding a lock"));
    }
    if !nbs.is_empty() || !begun.is_empty() {
        return Err(format!("T{t} ended with handles or tasks not waited for"));
    }
    Ok(regs)
}
