//! Multi-process check of the MCM engine, run by `tests/tests/mcm.rs` under
//! `pgasrun` in every mode each provider honours.
//!
//! Each check is a pattern the memory model must make work for a task on
//! this locale (the main thread, bound to worker context 0 unless
//! `MCM_PROBE_UNBOUND=1`), with the forbidden outcome checked every round:
//!
//! - RAW: `put(x@t, v); get(x@t) == v` at 8 B, inject + 1 and 64 KiB;
//! - WAW: blocking and non-blocking PUTs of 1..=k to one word land last-wins;
//! - MP-AM: `put(d@t, v); on t { d == v }`;
//! - AMO visibility: non-fetching adds (native where the provider has them),
//!   then `on t { c == count }`; the shm native non-fetching AMO used to be
//!   applied after a later message, which this catches;
//! - MP-atomic: locale 0 PUTs `d@1 = i` then sets the atomic `f@1 = i`;
//!   locale 1 polls `f` and must find `d >= i`;
//! - TASK-END: PUTs to every locale, `task_end()`, a launcher barrier that
//!   forces nothing, then every locale checks its slots locally;
//! - non-blocking handles: many outstanding PUTs and GETs, waited out of order
//!   and with `wait_any`.
//!
//! `MCM_PROBE_ONLY=raw,waw,mp-am,amo,mp-atomic,task-end,nb` runs a subset;
//! `MCM_PROBE_ROUNDS` sets the rounds (20). Every locale prints one
//! `check NAME ... ok` line per check it passed (the set is
//! `pgas_tests::expect::mcm_probe`), and locale 0 `mcm_probe ok`; a
//! violation exits non-zero naming the check, the target, the size and the
//! round.

use amhandler::{Am, Registry};
use comm_ofi::{AmoOp, AmoRequest, AmoType, Comm, GlobalAddr, Locale};
use pgas_tests::{e, expect::MCM_SIZES, passed};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

type R<T = ()> = Result<T, String>;

/// The word at `addr` of this locale's heap.
fn word(addr: u64) -> &'static AtomicU64 {
    // SAFETY: every address passed here is an 8-aligned word of the
    // registered heap, which lives until the process exits.
    unsafe { AtomicU64::from_ptr(addr as *mut u64) }
}

struct Probe {
    comm: Arc<Comm>,
    am: Arc<Am>,
    read_word: amhandler::FnId,
    sum_bytes: amhandler::FnId,
    rounds: usize,
}

impl Probe {
    fn remote_word(&self, t: Locale, addr: u64) -> R<u64> {
        let r = self
            .am
            .execute_on(t, self.read_word, &addr.to_le_bytes())
            .map_err(e("on-statement"))?;
        Ok(u64::from_le_bytes(r[..8].try_into().map_err(e("reply"))?))
    }

    /// Every other locale, with `base`'s symmetric address there.
    fn peers(&self, base: GlobalAddr) -> R<Vec<(Locale, GlobalAddr)>> {
        let me = self.comm.here();
        (0..self.comm.num_locales())
            .filter(|&t| t != me)
            .map(|t| Ok((t, self.comm.symmetric(base, t).map_err(e("symmetric"))?)))
            .collect()
    }

    /// The sizes of RAW and MP-AM, with their labels.
    fn sizes(&self) -> [(usize, &'static str); 3] {
        let s = [8usize, self.comm.provider().inject_size + 1, 64 << 10];
        [
            (s[0], MCM_SIZES[0]),
            (s[1], MCM_SIZES[1]),
            (s[2], MCM_SIZES[2]),
        ]
    }

    fn raw(&self, base: GlobalAddr) -> R {
        let n = self.comm.num_locales();
        let me = self.comm.here();
        for (size, label) in self.sizes() {
            for round in 0..self.rounds {
                for t in 0..n {
                    // Every writer has its own 64 KiB on each target.
                    let x = self
                        .comm
                        .symmetric(base, t)
                        .map_err(e("symmetric"))?
                        .offset((self.comm.here() as u64) << 16);
                    let v: Vec<u8> = (0..size).map(|i| (i + round * 7 + t) as u8).collect();
                    self.comm.put(x, &v).map_err(e("put"))?;
                    let mut got = vec![0u8; size];
                    self.comm.get(&mut got, x).map_err(e("get"))?;
                    if got != v {
                        return Err(format!(
                            "RAW violated: target {t}, {size} B, round {round}: the GET read \
                             old data (first differing byte {:?})",
                            (0..size).find(|&i| got[i] != v[i])
                        ));
                    }
                }
            }
            passed!(
                "raw",
                "size={label} bytes={size} targets={n} rounds={} locale={me}",
                self.rounds
            );
        }
        Ok(())
    }

    fn waw(&self, base: GlobalAddr) -> R {
        let me = self.comm.here();
        for (t, x) in self.peers(base)? {
            for round in 0..self.rounds {
                let k = 8u64;
                let stamp = |i: u64| (round as u64) << 32 | i;
                for i in 1..=k {
                    self.comm
                        .put(x, &stamp(i).to_le_bytes())
                        .map_err(e("put"))?;
                }
                let got = self.remote_word(t, x.addr)?;
                if got != stamp(k) {
                    return Err(format!(
                        "WAW (blocking) violated: target {t}, round {round}: word is {got:#x}, \
                         last PUT wrote {:#x}",
                        stamp(k)
                    ));
                }
                // Non-blocking: all in flight at once, waited in reverse.
                let bufs: Vec<[u8; 8]> = (1..=k)
                    .map(|i| (stamp(i) | 1 << 31).to_le_bytes())
                    .collect();
                let mut hs = Vec::new();
                for b in &bufs {
                    // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                    hs.push(unsafe { self.comm.put_nb(x, b).map_err(e("put_nb"))? });
                }
                while let Some(h) = hs.pop() {
                    h.wait().map_err(e("wait"))?;
                }
                let want = stamp(k) | 1 << 31;
                let got = self.remote_word(t, x.addr)?;
                if got != want {
                    return Err(format!(
                        "WAW (non-blocking) violated: target {t}, round {round}: word is \
                         {got:#x}, last PUT wrote {want:#x}"
                    ));
                }
            }
            passed!("waw", "target={t} rounds={} locale={me}", self.rounds);
        }
        Ok(())
    }

    fn mp_am(&self, base: GlobalAddr) -> R {
        let me = self.comm.here();
        for (t, d) in self.peers(base)? {
            for (size, label) in self.sizes() {
                for round in 0..self.rounds {
                    let v: Vec<u8> = (0..size).map(|i| (i * 3 + round + me) as u8).collect();
                    self.comm.put(d, &v).map_err(e("put"))?;
                    let mut args = d.addr.to_le_bytes().to_vec();
                    args.extend_from_slice(&(size as u64).to_le_bytes());
                    let r = self
                        .am
                        .execute_on(t, self.sum_bytes, &args)
                        .map_err(e("on-statement"))?;
                    let got = u64::from_le_bytes(r[..8].try_into().map_err(e("reply"))?);
                    let want: u64 = v.iter().map(|&b| b as u64).sum();
                    if got != want {
                        return Err(format!(
                            "MP-AM violated: target {t}, {size} B, round {round}: the body saw \
                             byte sum {got}, the PUT wrote {want}"
                        ));
                    }
                }
                passed!(
                    "mp_am",
                    "target={t} size={label} bytes={size} rounds={} locale={me}",
                    self.rounds
                );
            }
        }
        Ok(())
    }

    fn amo_visible(&self, base: GlobalAddr) -> R {
        let me = self.comm.here();
        for (t, c) in self.peers(base)? {
            let before = self.remote_word(t, c.addr)?;
            for round in 1..=self.rounds as u64 {
                self.am
                    .amo(&AmoRequest::new(c, AmoType::U64, AmoOp::Add, 1))
                    .map_err(e("amo add"))?;
                let got = self.remote_word(t, c.addr)?;
                if got != before + round {
                    return Err(format!(
                        "AMO visibility violated: target {t}, round {round}: the body saw \
                         {got}, expected {} (native: {})",
                        before + round,
                        self.comm.amo_is_native(AmoType::U64, AmoOp::Add, false)
                    ));
                }
            }
            passed!(
                "amo_visible",
                "target={t} adds={} native={} locale={me}",
                self.rounds,
                self.comm.amo_is_native(AmoType::U64, AmoOp::Add, false)
            );
        }
        Ok(())
    }

    /// Locale 0 writes, locale 1 reads; the others only join the barriers.
    fn mp_atomic(&self, d: GlobalAddr, f: GlobalAddr) -> R {
        let me = self.comm.here();
        let rounds = self.rounds as u64 * 4;
        self.comm.barrier().map_err(e("barrier"))?;
        if me == 0 {
            let d1 = self.comm.symmetric(d, 1).map_err(e("symmetric"))?;
            let f1 = self.comm.symmetric(f, 1).map_err(e("symmetric"))?;
            for i in 1..=rounds {
                self.comm.put(d1, &i.to_le_bytes()).map_err(e("put"))?;
                self.am
                    .amo(&AmoRequest::new(f1, AmoType::U64, AmoOp::Write, i))
                    .map_err(e("amo write"))?;
            }
            passed!("mp_atomic", "role=writer flags={rounds} locale=0");
        } else if me == 1 {
            let mut seen = 0;
            while seen < rounds {
                let flag = word(f.addr).load(Ordering::Acquire);
                if flag > seen {
                    let data = word(d.addr).load(Ordering::Acquire);
                    if data < flag {
                        return Err(format!(
                            "MP-atomic violated: flag {flag} set by locale 0's AMO, but its \
                             earlier PUT is not visible (data {data})"
                        ));
                    }
                    seen = flag;
                } else {
                    std::hint::spin_loop();
                }
            }
            passed!("mp_atomic", "role=reader seen={seen} locale=1");
        }
        self.comm.barrier().map_err(e("barrier"))?;
        Ok(())
    }

    fn task_end(&self, slots: GlobalAddr, round: u64) -> R {
        let n = self.comm.num_locales();
        let me = self.comm.here();
        for t in 0..n {
            let dst = self
                .comm
                .symmetric(slots, t)
                .map_err(e("symmetric"))?
                .offset(8 * me as u64);
            let v = round << 16 | me as u64;
            self.comm.put(dst, &v.to_le_bytes()).map_err(e("put"))?;
        }
        self.comm.task_end().map_err(e("task_end"))?;
        // The launcher's barrier forces nothing: visibility is task_end's.
        self.comm.oob().barrier().map_err(e("oob barrier"))?;
        for w in 0..n {
            let got = word(slots.addr + 8 * w as u64).load(Ordering::Acquire);
            if got != round << 16 | w as u64 {
                return Err(format!(
                    "TASK-END violated: round {round}: slot of locale {w} here holds {got:#x}, \
                     expected {:#x}",
                    round << 16 | w as u64
                ));
            }
        }
        self.comm.oob().barrier().map_err(e("oob barrier"))?;
        Ok(())
    }

    fn nb_handles(&self, base: GlobalAddr) -> R {
        let n = self.comm.num_locales();
        let me = self.comm.here();
        const K: usize = 48;
        let src: Vec<[u8; 64]> = (0..K).map(|i| [(i as u8) ^ (me as u8 * 16); 64]).collect();
        let targets: Vec<GlobalAddr> = (0..K)
            .map(|i| {
                let t = (me + 1 + i % n.max(1)) % n;
                self.comm
                    .symmetric(base, t)
                    .map(|a| a.offset(64 * (me as u64 * K as u64 + i as u64)))
            })
            .collect::<Result<_, _>>()
            .map_err(e("symmetric"))?;
        let mut hs = Vec::new();
        for i in 0..K {
            // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
            hs.push(unsafe { self.comm.put_nb(targets[i], &src[i]).map_err(e("put_nb"))? });
        }
        // Out of order: odd ones first, then the rest with wait_any.
        let mut rest = Vec::new();
        for (i, h) in hs.into_iter().enumerate() {
            if i % 2 == 1 {
                h.wait().map_err(e("wait"))?;
            } else {
                rest.push(h);
            }
        }
        while !rest.is_empty() {
            let i = self.comm.wait_any(&mut rest).map_err(e("wait_any"))?;
            drop(rest.swap_remove(i));
        }
        let mut back = vec![[0u8; 64]; K];
        {
            let mut hs = Vec::new();
            for (i, b) in back.iter_mut().enumerate() {
                // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                hs.push(unsafe { self.comm.get_nb(b, targets[i]).map_err(e("get_nb"))? });
            }
            for h in hs.into_iter().rev() {
                h.wait().map_err(e("wait"))?;
            }
        }
        if let Some(i) = (0..K).find(|&i| back[i] != src[i]) {
            return Err(format!(
                "non-blocking: buffer {i} to {:?} read back {:?}, wrote {:?}",
                targets[i],
                &back[i][..4],
                &src[i][..4]
            ));
        }
        passed!("nb", "puts={K} gets={} locale={me}", back.len());
        Ok(())
    }
}

fn run() -> R<(Locale, String)> {
    let comm = Comm::init().map_err(e("init"))?;
    let reg = Registry::new();
    let read_word = reg
        .register("mcm_probe::read_word", |_ctx, args| {
            let addr = u64::from_le_bytes(args[..8].try_into().expect("8-byte address"));
            word(addr).load(Ordering::Acquire).to_le_bytes().to_vec()
        })
        .map_err(e("register"))?;
    let sum_bytes = reg
        .register("mcm_probe::sum_bytes", |ctx, args| {
            let addr = u64::from_le_bytes(args[..8].try_into().expect("address"));
            let len = u64::from_le_bytes(args[8..16].try_into().expect("length")) as usize;
            let mut v = vec![0u8; len];
            let here = ctx.am().here();
            ctx.am()
                .comm()
                .get(&mut v, GlobalAddr::new(here, addr))
                .expect("local read of the heap");
            v.iter()
                .map(|&b| b as u64)
                .sum::<u64>()
                .to_le_bytes()
                .to_vec()
        })
        .map_err(e("register"))?;
    let am = pgas_tests::start_am(&comm, reg)?;
    let unbound = std::env::var_os("MCM_PROBE_UNBOUND").is_some();
    if !unbound {
        comm.bind_worker(0).map_err(e("bind_worker"))?;
    }
    let rounds = std::env::var("MCM_PROBE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let only = std::env::var("MCM_PROBE_ONLY").ok();
    let on = |name: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|x| x == name))
    };
    let p = Probe {
        comm: comm.clone(),
        am: am.clone(),
        read_word,
        sum_bytes,
        rounds,
    };
    let n = comm.num_locales();
    // Allocated in the same order everywhere: symmetric addresses line up.
    let area = comm.alloc(64 << 10, 4096).map_err(e("alloc"))?;
    let raw_area = comm.alloc((64 << 10) * n, 4096).map_err(e("alloc"))?;
    let words = comm.alloc(4096, 64).map_err(e("alloc"))?;
    let nb_area = comm.alloc(64 * 48 * n, 64).map_err(e("alloc"))?;
    let slots = comm.alloc(8 * n, 64).map_err(e("alloc"))?;
    let (w_waw, w_amo, w_d, w_f) = (
        words,
        words.offset(64),
        words.offset(128),
        words.offset(192),
    );
    comm.barrier().map_err(e("barrier"))?;
    let here = comm.here();
    let at = |m: String| format!("locale {here}: {m}");
    if on("raw") {
        p.raw(raw_area).map_err(at)?;
    }
    comm.barrier().map_err(e("barrier"))?;
    // One writer per target word at a time: locale order.
    for writer in 0..comm.num_locales() {
        if writer == here {
            if on("waw") {
                p.waw(w_waw).map_err(at)?;
            }
            if on("mp-am") {
                p.mp_am(area).map_err(at)?;
            }
            if on("amo") {
                p.amo_visible(w_amo).map_err(at)?;
            }
        }
        comm.barrier().map_err(e("barrier"))?;
    }
    if n >= 2 && on("mp-atomic") {
        p.mp_atomic(w_d, w_f).map_err(at)?;
    }
    if on("task-end") {
        for round in 1..=p.rounds as u64 {
            p.task_end(slots, round).map_err(at)?;
        }
        passed!("task_end", "rounds={} slots={n} locale={here}", p.rounds);
    }
    if on("nb") {
        p.nb_handles(nb_area).map_err(at)?;
    }
    comm.barrier().map_err(e("barrier"))?;
    let line = format!(
        "mcm_probe ok: {} locales, mode {}, provider {}, {} rounds, {}",
        comm.num_locales(),
        comm.mode(),
        comm.provider().name,
        p.rounds,
        if comm.thread_is_bound() {
            "bound"
        } else {
            "unbound"
        }
    );
    am.finalize().map_err(e("finalize"))?;
    Ok((comm.here(), line))
}

fn main() -> ExitCode {
    let r = run().map(|(here, line)| {
        if here == 0 {
            println!("{line}");
        }
    });
    pgas_tests::exit("mcm_probe", r)
}
