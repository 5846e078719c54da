//! Multi-process checks of the AM layer, run by `tests/tests/am_*.rs` under
//! `pgasrun`: `am_probe SCENARIO [ARGS]`. Every scenario prints
//! `am_probe SCENARIO ok` on locale 0 when it passed; any mismatch exits
//! non-zero with the details. `kinds` also prints, on every locale, one
//! `check NAME key=value ... ok` line per check it passed (the format of
//! `pgas_tests::passed!`; the set is `pgas_tests::expect::am_kinds`).
//!
//! Scenarios: `kinds` (every AM kind, argument and reply sizes around the
//! inline limits, AM-mediated RMA, remote failures), `many COUNT` (COUNT
//! non-blocking AMs from every locale to locale 0, counted), `order COUNT`
//! (send order of fast and non-blocking AMs), `nested DEPTH`,
//! `amo [one]` (every type/op/fetch through `Am::amo` and `Comm::amo`
//! against every locale, or only the next one; prints a digest), `die` (locale 2 dies while locale 0 waits for its reply),
//! `unknown` (a body only locale 0 registered), `bench ITERS` (latencies).

use amhandler::{Am, FnId, Options, Registry};
use comm_ofi::{AmoOp, AmoRequest, AmoType, Comm, GlobalAddr};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

type R<T = ()> = Result<T, String>;

const MAX_LOCALES: usize = 64;
static COUNT: [AtomicU64; MAX_LOCALES] = [const { AtomicU64::new(0) }; MAX_LOCALES];
static NEXT_SEQ: [AtomicU64; MAX_LOCALES] = [const { AtomicU64::new(0) }; MAX_LOCALES];
static ORDER_VIOLATIONS: AtomicU64 = AtomicU64::new(0);

fn u64_of(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    u64::from_le_bytes(w)
}

fn pattern(len: usize, seed: u64) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u64).wrapping_mul(131).wrapping_add(seed) as u8)
        .collect()
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

struct Ids {
    echo: FnId,
    digest: FnId,
    reply_n: FnId,
    panic: FnId,
    count: FnId,
    get_count: FnId,
    seq: FnId,
    read_word: FnId,
    put_back: FnId,
    rec: FnId,
    chain: FnId,
    die: FnId,
    empty: FnId,
}

fn register(reg: &Registry) -> R<Ids> {
    let e = |e: amhandler::Error| e.to_string();
    Ok(Ids {
        echo: reg.register("echo", |_, a| a.to_vec()).map_err(e)?,
        // Length and FNV hash of the arguments (checks 1 MiB without echoing it).
        digest: reg
            .register("digest", |_, a| {
                let mut v = (a.len() as u64).to_le_bytes().to_vec();
                v.extend_from_slice(&fnv(a).to_le_bytes());
                v
            })
            .map_err(e)?,
        reply_n: reg
            .register("reply_n", |c, a| {
                pattern(u64_of(a) as usize, c.here() as u64)
            })
            .map_err(e)?,
        panic: reg
            .register("panic", |_, _| panic!("deliberate"))
            .map_err(e)?,
        count: reg
            .register("count", |c, _| {
                COUNT[c.caller()].fetch_add(1, Ordering::AcqRel);
                Vec::new()
            })
            .map_err(e)?,
        get_count: reg
            .register("get_count", |_, a| {
                COUNT[u64_of(a) as usize]
                    .load(Ordering::Acquire)
                    .to_le_bytes()
                    .to_vec()
            })
            .map_err(e)?,
        seq: reg
            .register("seq", |c, a| {
                let want = NEXT_SEQ[c.caller()].fetch_add(1, Ordering::AcqRel);
                if u64_of(a) != want {
                    ORDER_VIOLATIONS.fetch_add(1, Ordering::AcqRel);
                }
                Vec::new()
            })
            .map_err(e)?,
        // Reads a heap word of this locale (address in the args).
        read_word: reg
            .register("read_word", |_, a| {
                // SAFETY: the probe passes the address of an 8-byte heap word of ours.
                let v = unsafe { std::ptr::read_volatile(u64_of(a) as *const u64) };
                v.to_le_bytes().to_vec()
            })
            .map_err(e)?,
        // PUTs a value into the caller's heap word (args: addr, value).
        put_back: reg
            .register("put_back", |c, a| {
                let addr = u64_of(&a[..8]);
                let v = &a[8..16];
                c.am()
                    .comm()
                    .put(GlobalAddr::new(c.caller(), addr), v)
                    .expect("put_back");
                Vec::new()
            })
            .map_err(e)?,
        // rec(d): d == 0 -> [here]; else on (here+1)%n { rec(d-1) } ++ [here].
        rec: reg
            .register("rec", |c, a| {
                let d = u64_of(a);
                let mut out = if d == 0 {
                    Vec::new()
                } else {
                    let next = (c.here() + 1) % c.am().num_locales();
                    c.am()
                        .execute_on(next, amhandler::fn_id("rec"), &(d - 1).to_le_bytes())
                        .expect("nested on-statement")
                };
                out.push(c.here() as u8);
                out
            })
            .map_err(e)?,
        // chain(list): on list[0] { chain(list[1..]) } ++ [here].
        chain: reg
            .register("chain", |c, a| {
                let mut out = match a.split_first() {
                    None => Vec::new(),
                    Some((first, rest)) => c
                        .am()
                        .execute_on(usize::from(*first), amhandler::fn_id("chain"), rest)
                        .expect("nested chain"),
                };
                out.push(c.here() as u8);
                out
            })
            .map_err(e)?,
        die: reg
            .register("die", |c, _| {
                eprintln!("locale {} dies on purpose", c.here());
                std::process::exit(3)
            })
            .map_err(e)?,
        empty: reg.register("empty", |_, _| Vec::new()).map_err(e)?,
    })
}

/// Reports a check that passed: `check NAME FIELDS ok` (see the module docs).
fn passed(name: &str, fields: std::fmt::Arguments<'_>) {
    println!("check {name} {fields} ok");
}

fn check(cond: bool, what: impl FnOnce() -> String) -> R {
    if cond {
        Ok(())
    } else {
        Err(what())
    }
}

fn kinds(am: &Am, ids: &Ids) -> R {
    let me = am.here();
    let n = am.num_locales();
    let lim = am.inline_limit();
    let sizes = [0usize, 1, lim, lim + 1, 1 << 20];
    let labels = ["0", "1", "inline", "inline+1", "1MiB"];
    // Symmetric words (allocated before any AM traffic, same order everywhere):
    // `inbox[s]` on each locale is written by locale s; `back[t]` here by locale t.
    let inbox = am
        .comm()
        .alloc(8 * MAX_LOCALES, 64)
        .map_err(|e| e.to_string())?;
    let back_words = am
        .comm()
        .alloc(8 * MAX_LOCALES, 64)
        .map_err(|e| e.to_string())?;
    am.barrier().map_err(|e| e.to_string())?;
    for t in 0..n {
        for (&s, label) in sizes.iter().zip(labels) {
            let args = pattern(s, (me * 100 + t) as u64);
            let want: Vec<u8> = [(s as u64).to_le_bytes(), fnv(&args).to_le_bytes()].concat();
            for fast in [false, true] {
                let kind = if fast {
                    "execute_on_fast"
                } else {
                    "execute_on"
                };
                let got = if fast {
                    am.execute_on_fast(t, ids.digest, &args)
                } else {
                    am.execute_on(t, ids.digest, &args)
                }
                .map_err(|e| format!("{kind}: digest {s} B on {t}: {e}"))?;
                check(got == want, || {
                    format!("{kind} {s} B to {t}: digest mismatch")
                })?;
            }
            let echo = s <= lim + 1;
            if echo {
                let got = am
                    .execute_on(t, ids.echo, &args)
                    .map_err(|e| e.to_string())?;
                check(got == args, || format!("echo {s} B to {t} mismatch"))?;
            }
            passed(
                "exec",
                format_args!(
                    "size={label} bytes={s} target={t} echo={} digest={:#x} locale={me}",
                    if echo { "yes" } else { "no" },
                    fnv(&args)
                ),
            );
        }
        // Replies around the slot's inline limit.
        let rl = am.reply_inline_limit();
        let reply_labels = ["0", "1", "reply_inline", "reply_inline+1", "1MiB"];
        for (s, label) in [0usize, 1, rl, rl + 1, 1 << 20]
            .into_iter()
            .zip(reply_labels)
        {
            let got = am
                .execute_on(t, ids.reply_n, &(s as u64).to_le_bytes())
                .map_err(|e| format!("reply {s} B from {t}: {e}"))?;
            check(got == pattern(s, t as u64), || {
                format!("reply of {s} B from {t} wrong")
            })?;
            passed(
                "reply",
                format_args!("size={label} bytes={s} target={t} locale={me}"),
            );
        }
        // Non-blocking, every size: counted at the target.
        let before = am
            .execute_on(t, ids.get_count, &(me as u64).to_le_bytes())
            .map_err(|e| e.to_string())?;
        let before = u64_of(&before);
        for &s in &sizes {
            am.execute_on_nb(t, ids.count, &pattern(s, 1))
                .map_err(|e| e.to_string())?;
            am.execute_on_fast_nb(t, ids.count, &pattern(s, 2))
                .map_err(|e| e.to_string())?;
        }
        let want = before + 2 * sizes.len() as u64;
        let t0 = Instant::now();
        loop {
            let c = u64_of(
                &am.execute_on(t, ids.get_count, &(me as u64).to_le_bytes())
                    .map_err(|e| e.to_string())?,
            );
            if c == want {
                passed(
                    "nb_count",
                    format_args!("target={t} ran={} locale={me}", c - before),
                );
                break;
            }
            check(c < want, || {
                format!("locale {t} ran {c} non-blocking bodies from {me}, expected {want}")
            })?;
            check(t0.elapsed() < Duration::from_secs(30), || {
                format!("locale {t} ran only {c} of {want} non-blocking bodies from {me}")
            })?;
            std::thread::sleep(Duration::from_millis(1));
        }
        am.nop(t).map_err(|e| format!("nop {t}: {e}"))?;
        passed("nop", format_args!("target={t} locale={me}"));
        // A body that panics: the initiator gets an error naming it.
        match am.execute_on(t, ids.panic, b"") {
            Err(amhandler::Error::Remote { locale, msg }) => check(
                locale == t && msg.contains("deliberate") && msg.contains("panic"),
                || format!("panic reported as {locale}: {msg}"),
            )?,
            other => return Err(format!("panicking body on {t} returned {other:?}")),
        }
        passed("remote_panic", format_args!("target={t} locale={me}"));
        // MCM: our PUT is visible to the body; the body's PUT to us is visible on return.
        let word = back_words.offset(8 * t as u64);
        let remote = am
            .comm()
            .symmetric(inbox, t)
            .map_err(|e| e.to_string())?
            .offset(8 * me as u64);
        let v = 0x5eed_0000 + (me * 16 + t) as u64;
        am.comm()
            .put(remote, &v.to_le_bytes())
            .map_err(|e| e.to_string())?;
        let seen = u64_of(
            &am.execute_on(t, ids.read_word, &remote.addr.to_le_bytes())
                .map_err(|e| e.to_string())?,
        );
        check(seen == v, || {
            format!("body on {t} saw {seen:#x}, we had PUT {v:#x} before the on-statement")
        })?;
        passed(
            "put_before_on",
            format_args!("target={t} seen={seen:#x} locale={me}"),
        );
        let back = v ^ 0xffff;
        let args = [word.addr.to_le_bytes(), back.to_le_bytes()].concat();
        am.execute_on(t, ids.put_back, &args)
            .map_err(|e| e.to_string())?;
        // SAFETY: our own heap word.
        let got = unsafe { std::ptr::read_volatile(word.addr as *const u64) };
        check(got == back, || {
            format!("body on {t} PUT {back:#x} to us, we see {got:#x} after its done")
        })?;
        passed(
            "put_after_done",
            format_args!("target={t} seen={got:#x} locale={me}"),
        );
    }
    am.barrier().map_err(|e| e.to_string())?;
    // AM-mediated RMA on unregistered memory: every locale exposes a Vec.
    let exposed: Vec<u8> = pattern(1 << 20, me as u64);
    let exposed = std::hint::black_box(exposed);
    // Every locale's address of its buffer at `p`.
    let everyones = |p: *const u8| {
        let mine = (p as u64).to_le_bytes();
        am.comm().oob().allgather(&mine).map_err(|e| e.to_string())
    };
    let addrs = everyones(exposed.as_ptr())?;
    let mut scratch = vec![0u8; 1 << 20];
    let scratch_addrs = everyones(scratch.as_mut_ptr())?;
    for t in 0..n {
        let a = u64_of(&addrs[t]);
        for (s, label) in [1usize, lim, lim + 1, 1 << 20]
            .into_iter()
            .zip(["1", "inline", "inline+1", "1MiB"])
        {
            let mut dst = vec![0u8; s];
            // SAFETY: the peer's `exposed` vector lives until the barrier below
            // and is not written.
            unsafe { am.get_unregistered(&mut dst, t, a) }
                .map_err(|e| format!("AM GET {s} B from {t}: {e}"))?;
            check(dst == pattern(1 << 20, t as u64)[..s], || {
                format!("AM GET {s} B from {t} wrong")
            })?;
            passed(
                "am_get",
                format_args!("size={label} bytes={s} target={t} locale={me}"),
            );
        }
        // PUT into the peer's scratch: each locale writes its own 64 KiB window.
        let sa = u64_of(&scratch_addrs[t]) + me as u64 * (64 << 10);
        let put_sizes = [1usize, lim + 1, 64 << 10];
        for s in put_sizes {
            let src = pattern(s, 77 + me as u64);
            // SAFETY: our window of the peer's scratch, which nobody else touches.
            unsafe { am.put_unregistered(t, sa, &src) }
                .map_err(|e| format!("AM PUT {s} B to {t}: {e}"))?;
        }
        // Checked by the target once everybody has written (am_put_window).
        passed(
            "am_put",
            format_args!("sizes={} target={t} locale={me}", put_sizes.len()),
        );
        // A bad address is an error reply, not a crash.
        let mut d = [0u8; 8];
        // SAFETY: deliberately bad address; the target checks it.
        let r = unsafe { am.get_unregistered(&mut d, t, 8) };
        check(matches!(r, Err(amhandler::Error::Remote { .. })), || {
            format!("GET at 0x8 on {t}: {r:?}")
        })?;
        passed("am_get_bad_address", format_args!("target={t} locale={me}"));
    }
    am.barrier().map_err(|e| e.to_string())?;
    for w in 0..n {
        let win = &scratch[w * (64 << 10)..(w + 1) * (64 << 10)];
        check(win == pattern(64 << 10, 77 + w as u64).as_slice(), || {
            format!("AM PUT window of {w} wrong")
        })?;
        passed("am_put_window", format_args!("from={w} locale={me}"));
    }
    drop(exposed);
    // Bad input is an error at the sender.
    check(am.execute_on(n, ids.echo, b"").is_err(), || {
        "locale out of range accepted".into()
    })?;
    passed("bad_locale", format_args!("locale={me}"));
    let unknown = amhandler::fn_id("never-registered");
    let e = am.execute_on(0, unknown, b"").unwrap_err().to_string();
    check(e.contains("not registered"), || {
        format!("unregistered id: {e}")
    })?;
    passed("unregistered_id", format_args!("locale={me}"));
    am.barrier().map_err(|e| e.to_string())?;
    Ok(())
}

fn wait_count(total: u64, deadline: Duration) -> R<u64> {
    let t0 = Instant::now();
    loop {
        let c: u64 = COUNT.iter().map(|c| c.load(Ordering::Acquire)).sum();
        if c >= total {
            return Ok(c);
        }
        if t0.elapsed() > deadline {
            return Err(format!(
                "only {c} of {total} non-blocking AMs ran within {deadline:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn many(am: &Am, ids: &Ids, count: u64) -> R {
    let n = am.num_locales() as u64;
    let t0 = Instant::now();
    for i in 0..count {
        am.execute_on_nb(0, ids.count, &i.to_le_bytes())
            .map_err(|e| format!("send {i}: {e}"))?;
    }
    let send_time = t0.elapsed();
    if am.here() == 0 {
        wait_count(n * count, Duration::from_secs(120))?;
        let el = t0.elapsed();
        // Nothing runs twice: give stragglers a moment, then count exactly.
        std::thread::sleep(Duration::from_millis(100));
        for (s, c) in COUNT.iter().enumerate().take(n as usize) {
            let c = c.load(Ordering::Acquire);
            check(c == count, || {
                format!("locale {s}'s AMs ran {c} times, expected {count}")
            })?;
        }
        println!(
            "am_probe many: {} AMs from {n} locales ran exactly once in {:.3} s ({:.0} AMs/s); \
             lz reposts {}",
            n * count,
            el.as_secs_f64(),
            (n * count) as f64 / el.as_secs_f64(),
            am.stats().lz_reposts
        );
    } else {
        println!(
            "am_probe many: locale {} sent {count} in {:.3} s",
            am.here(),
            send_time.as_secs_f64()
        );
    }
    am.barrier().map_err(|e| e.to_string())?;
    Ok(())
}

fn order(am: &Am, ids: &Ids, count: u64, fast: bool) -> R {
    let n = am.num_locales() as u64;
    if am.here() != 0 {
        for i in 0..count {
            let r = if fast {
                am.execute_on_fast_nb(0, ids.seq, &i.to_le_bytes())
            } else {
                am.execute_on_nb(0, ids.seq, &i.to_le_bytes())
            };
            r.map_err(|e| e.to_string())?;
        }
        // Counted by a final blocking AM that runs after them on a single
        // handler/executor thread.
        am.execute_on(0, ids.count, b"")
            .map_err(|e| e.to_string())?;
    } else {
        wait_count(n - 1, Duration::from_secs(60))?;
        let t0 = Instant::now();
        while (1..n as usize).any(|s| NEXT_SEQ[s].load(Ordering::Acquire) < count) {
            check(t0.elapsed() < Duration::from_secs(60), || {
                "sequenced AMs missing".into()
            })?;
            std::thread::sleep(Duration::from_millis(1));
        }
        let v = ORDER_VIOLATIONS.load(Ordering::Acquire);
        check(v == 0, || {
            format!(
                "{v} {} AMs ran out of send order",
                if fast { "fast" } else { "non-blocking" }
            )
        })?;
    }
    am.barrier().map_err(|e| e.to_string())?;
    Ok(())
}

fn nested(am: &Am, ids: &Ids, depth: u64) -> R {
    let n = am.num_locales();
    // on L1 { on L2 { on L0 { } } } from every locale, concurrently.
    let route: Vec<u8> = (1..=3).map(|k| ((am.here() + k) % n) as u8).collect();
    let got = am
        .execute_on(usize::from(route[0]), ids.chain, &route[1..])
        .map_err(|e| format!("chain: {e}"))?;
    let want: Vec<u8> = route.iter().rev().copied().collect();
    check(got == want, || {
        format!("chain visited {got:?}, expected {want:?}")
    })?;
    // Recursion deeper than the executor threads, from every locale at once.
    let next = (am.here() + 1) % n;
    let got = am
        .execute_on(next, ids.rec, &depth.to_le_bytes())
        .map_err(|e| format!("rec: {e}"))?;
    check(got.len() == depth as usize + 1, || {
        format!(
            "recursion returned {} frames, expected {}",
            got.len(),
            depth + 1
        )
    })?;
    for (i, l) in got.iter().enumerate() {
        let want = (next as u64 + depth - i as u64) % n as u64;
        check(*l as u64 == want, || {
            format!("frame {i} ran on {l}, expected {want}")
        })?;
    }
    am.barrier().map_err(|e| e.to_string())?;
    Ok(())
}

fn operand_for(ty: AmoType, k: u64) -> u64 {
    match ty {
        AmoType::F32 => (1.5f32 + k as f32).to_bits() as u64,
        AmoType::F64 => (2.25f64 - k as f64).to_bits(),
        _ => k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 3,
    }
}

/// Every type x op x fetch, against a word per (initiator, target) on every
/// locale, checked against a CPU shadow; plus a shared counter all locales add
/// to. Prints a digest of every fetched value and final word.
fn amo(am: &Am, comm: &Comm, one_target: bool) -> R {
    let me = am.here();
    let n = am.num_locales();
    // `one`: only the next locale is a target (slow providers).
    let targets: Vec<usize> = if one_target {
        vec![(me + 1) % n]
    } else {
        (0..n).collect()
    };
    let words = comm.alloc(8 * MAX_LOCALES, 64).map_err(|e| e.to_string())?;
    let shared = comm.alloc(8, 64).map_err(|e| e.to_string())?;
    am.barrier().map_err(|e| e.to_string())?;
    let mut digest = 0u64;
    let mut mix = |v: u64| digest = (digest ^ v).wrapping_mul(0x100_0000_01b3);
    let mut failures = Vec::new();
    for &t in &targets {
        let word = comm
            .symmetric(words, t)
            .map_err(|e| e.to_string())?
            .offset(8 * me as u64);
        for ty in AmoType::ALL {
            for op in AmoOp::ALL {
                if op.is_bitwise() && matches!(ty, AmoType::F32 | AmoType::F64) {
                    continue;
                }
                for fetch in [false, true] {
                    for (k, via) in [(1u64, "am"), (2, "comm")] {
                        let init = operand_for(ty, 7);
                        let mask = if ty.size() == 8 {
                            u64::MAX
                        } else {
                            (1u64 << (8 * ty.size())) - 1
                        };
                        let init = init & mask;
                        let mut zero = [0u8; 8];
                        zero[..ty.size()].copy_from_slice(&init.to_le_bytes()[..ty.size()]);
                        comm.put(word, &zero[..8]).map_err(|e| e.to_string())?;
                        let operand = operand_for(ty, k) & mask;
                        let compare = if k == 1 { init } else { init ^ 1 };
                        let r = if via == "am" {
                            am.amo(
                                &AmoRequest::new(word, ty, op, operand)
                                    .comparing(compare)
                                    .fetching(fetch),
                            )
                            .map_err(|e| e.to_string())
                        } else {
                            comm.amo(
                                &AmoRequest::new(word, ty, op, operand)
                                    .comparing(compare)
                                    .fetching(fetch),
                            )
                            .map_err(|e| e.to_string())
                        }
                        .map_err(|e| {
                            format!("{op:?} {ty:?} fetch={fetch} via {via} on {t}: {e}")
                        })?;
                        // A native non-fetching AMO may still be in flight when
                        // it completes here (shm applies it when the target
                        // progresses): a no-op proves it has been applied.
                        am.nop(t).map_err(|e| e.to_string())?;
                        let mut after = [0u8; 8];
                        comm.get(&mut after, word).map_err(|e| e.to_string())?;
                        let after = u64::from_le_bytes(after) & mask;
                        // CPU shadow.
                        let mut shadow = [init];
                        // SAFETY: a local aligned word.
                        let want = unsafe {
                            comm_ofi::cpu_amo::apply(
                                shadow.as_mut_ptr() as u64,
                                ty,
                                op,
                                operand,
                                compare,
                                fetch,
                            )
                        }?;
                        let ok = check(r == want && after == shadow[0] & mask, || {
                            format!(
                                "{op:?} {ty:?} fetch={fetch} via {via} on locale {t}: got {r:#x} / word {after:#x}, \
                                 expected {want:#x} / {:#x}",
                                shadow[0] & mask
                            )
                        });
                        if let Err(e) = ok {
                            failures.push(e);
                        }
                        mix(r);
                        mix(after);
                    }
                }
            }
        }
    }
    if !failures.is_empty() {
        return Err(format!(
            "{} wrong atomics:\n  {}",
            failures.len(),
            failures.join("\n  ")
        ));
    }
    // Concurrent adds from every locale to one shared word on each locale.
    for t in 0..n {
        let w = comm.symmetric(shared, t).map_err(|e| e.to_string())?;
        for _ in 0..50 {
            am.amo(&AmoRequest::new(w, AmoType::U64, AmoOp::Add, 1))
                .map_err(|e| e.to_string())?;
            am.amo(&AmoRequest::new(w, AmoType::I64, AmoOp::Add, 2).fetching(true))
                .map_err(|e| e.to_string())?;
        }
    }
    am.barrier().map_err(|e| e.to_string())?;
    let total = am
        .amo(
            &AmoRequest::new(
                GlobalAddr::new(me, shared.addr),
                AmoType::U64,
                AmoOp::Read,
                0,
            )
            .fetching(true),
        )
        .map_err(|e| e.to_string())?;
    check(total == 150 * n as u64, || {
        format!("shared counter on {me} is {total}, expected {}", 150 * n)
    })?;
    // Visibility of (possibly native) AMOs proved by a no-op.
    for t in 0..n {
        am.nop(t).map_err(|e| e.to_string())?;
    }
    am.barrier().map_err(|e| e.to_string())?;
    println!(
        "am_probe amo digest locale {me}: {digest:016x} (via_am {})",
        am.comm().config().amo_via_am
    );
    Ok(())
}

fn bench(am: &Am, ids: &Ids, iters: u32) -> R {
    if am.here() == 0 && am.num_locales() > 1 {
        let word = am
            .comm()
            .symmetric(am.comm().alloc(8, 8).map_err(|e| e.to_string())?, 1)
            .map_err(|e| e.to_string())?;
        let row = |name: &str, f: &mut dyn FnMut() -> R| -> R {
            for _ in 0..iters / 10 + 1 {
                f()?;
            }
            let t0 = Instant::now();
            for _ in 0..iters {
                f()?;
            }
            let us = t0.elapsed().as_secs_f64() * 1e6 / iters as f64;
            println!("am_probe bench {name}: {us:.2} us/op");
            Ok(())
        };
        row("comm put 8 B (reference)", &mut || {
            am.comm().put(word, &[1u8; 8]).map_err(|e| e.to_string())
        })?;
        row("comm get 8 B (reference)", &mut || {
            let mut b = [0u8; 8];
            am.comm().get(&mut b, word).map_err(|e| e.to_string())
        })?;
        row("execute_on (empty, blocking)", &mut || {
            am.execute_on(1, ids.empty, b"")
                .map(|_| ())
                .map_err(|e| e.to_string())
        })?;
        row("execute_on_fast (empty)", &mut || {
            am.execute_on_fast(1, ids.empty, b"")
                .map(|_| ())
                .map_err(|e| e.to_string())
        })?;
        row("nop", &mut || am.nop(1).map_err(|e| e.to_string()))?;
        row("amo via AM (fetch add u64)", &mut || {
            am.amo_via_am(&AmoRequest::new(word, AmoType::U64, AmoOp::Add, 1).fetching(true))
                .map(|_| ())
                .map_err(|e| e.to_string())
        })?;
        let t0 = Instant::now();
        let k = iters * 10;
        for _ in 0..k {
            am.execute_on_nb(1, ids.empty, b"")
                .map_err(|e| e.to_string())?;
        }
        am.nop(1).map_err(|e| e.to_string())?;
        println!(
            "am_probe bench execute_on_nb (empty) injection: {:.2} us/op",
            t0.elapsed().as_secs_f64() * 1e6 / k as f64
        );
    }
    am.barrier().map_err(|e| e.to_string())?;
    Ok(())
}

fn run(am: &Arc<Am>, ids: &Ids, args: &[String]) -> R {
    let scenario = args.first().map(String::as_str).unwrap_or("kinds");
    let num = |i: usize, d: u64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    match scenario {
        "kinds" => kinds(am, ids)?,
        "many" => many(am, ids, num(1, 100_000))?,
        "order" => {
            order(am, ids, num(1, 10_000), true)?;
            for c in &NEXT_SEQ {
                c.store(0, Ordering::Release);
            }
            for c in &COUNT {
                c.store(0, Ordering::Release);
            }
            am.barrier().map_err(|e| e.to_string())?;
            if am.config().executors == 1 {
                order(am, ids, num(1, 10_000), false)?;
            }
        }
        "nested" => nested(am, ids, num(1, 40))?,
        "amo" => amo(am, am.comm(), args.get(1).is_some_and(|a| a == "one"))?,
        "die" => {
            if am.num_locales() < 3 {
                return Err("die needs 3 locales".into());
            }
            if am.here() == 0 {
                am.execute_on(2, ids.die, b"").map_err(|e| e.to_string())?;
                return Err("locale 2 answered although it died".into());
            }
            // Locale 1 waits on locale 2 too.
            if am.here() == 1 {
                std::thread::sleep(Duration::from_millis(200));
                am.execute_on(2, ids.empty, b"")
                    .map_err(|e| e.to_string())?;
            }
            std::thread::sleep(Duration::from_secs(120));
        }
        "unknown" => {
            if am.here() == 0 {
                let id = am
                    .register("only_on_0", |_, _| Vec::new())
                    .map_err(|e| e.to_string())?;
                am.execute_on(1, id, b"").map_err(|e| e.to_string())?;
                return Err("locale 1 ran a body it never registered".into());
            }
            std::thread::sleep(Duration::from_secs(120));
        }
        "bench" => bench(am, ids, num(1, 2000) as u32)?,
        other => return Err(format!("unknown scenario {other:?}")),
    }
    if am.here() == 0 {
        println!("am_probe {scenario} ok on {}", am.comm().provider().name);
    }
    Ok(())
}

fn main() -> ExitCode {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("PGAS_LOG"))
        .with_writer(std::io::stderr)
        .try_init();
    // The `panic` body panics on purpose: keep its message out of the output.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&"deliberate") {
            default_hook(info);
        }
    }));
    let args: Vec<String> = std::env::args().skip(1).collect();
    let comm = match Comm::init() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("am_probe: init: {e}");
            return ExitCode::from(2);
        }
    };
    let reg = Registry::new();
    let ids = match register(&reg) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("am_probe: register: {e}");
            return ExitCode::from(2);
        }
    };
    let am = match amhandler::start_with(
        comm.clone(),
        Options {
            registry: reg,
            ..Default::default()
        },
    ) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("am_probe: locale {}: start: {e}", comm.here());
            return ExitCode::from(2);
        }
    };
    let r = run(&am, &ids, &args);
    if let Err(e) = &r {
        eprintln!("am_probe: locale {}: {e}", am.here());
        return ExitCode::from(1);
    }
    if let Err(e) = am.finalize() {
        eprintln!("am_probe: locale {}: finalize: {e}", am.here());
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
