//! The multi-process litmus suite of `shared/LITMUS.md`, run under `pgasrun`
//! (at least 3 locales; locales 3.. only join the barriers).
//!
//! ```text
//! PGAS_NUM_WORKERS=3 pgasrun -n 3 litmus [TEST,...|all|plain|self|rma|sync|atomic]
//! ```
//!
//! Every test runs `LITMUS_ITERS` times per size (`LITMUS_ITERS_LARGE` at
//! 1 MiB) with seeded random spins between its steps, and the outcome of each
//! iteration is checked against the SC oracle (`pgas_tests::litmus_oracle`).
//! Tasks run on `PGAS_NUM_WORKERS` (at least 3) worker threads per locale,
//! each bound to its own transmit context with `Comm::bind_worker`; which
//! worker runs which task is drawn per iteration. On-statements go through
//! the AM layer; the launcher barrier between steps (`comm.oob().barrier()`)
//! orders nothing in the network, so visibility always comes from the
//! layer's own boundaries (task end, task create, on-statement reply, AMOs).
//!
//! Locale 0 prints one `litmus` line per (test, size): the outcome
//! histogram, the forbidden count and the allowed outcomes never seen
//! (coverage gaps), plus a `litmus-forbidden` line for the first few
//! forbidden outcomes (test, mode, provider, size, iteration, who ran it).
//! Exit status 1 if a forbidden outcome was seen, unless `PGAS_MCM_WEAKEN`
//! is set (a negative control: reported, not failed).
//!
//! Environment: `LITMUS_ITERS` (200), `LITMUS_ITERS_LARGE` (ITERS / 8, at
//! least 2), `LITMUS_SIZES` (`8,inject+1,1M`), `LITMUS_SEED` (1),
//! `LITMUS_DELAY` (largest random spin, 1000), `LITMUS_AMO_K` (fetch_adds
//! per task, 4), `LITMUS_SHOW` (forbidden outcomes detailed per test, 5).

use amhandler::{Am, FnId, Options, Registry};
use comm_ofi::{AmoOp, AmoType, Comm, GlobalAddr, Locale};
use pgas_tests::e;
use pgas_tests::litmus_oracle::{self, amo_count_label, outcome_of};
use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

type R<T = ()> = Result<T, String>;

// ---------------------------------------------------------------------------
// Tests and instances

/// How a test is carried out (the oracle program is its `base`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    PutSrc,
    GetDst {
        nb: bool,
    },
    Raw {
        nb: bool,
    },
    Waw {
        nb: bool,
    },
    MpAtomic {
        split: bool,
    },
    MpAm {
        nb: bool,
    },
    /// Children are on-statements on L1, L2.
    TaskEnd,
    /// Children are tasks on L1, L2 joined by the launcher barrier.
    TaskEndOob,
    /// Children are tasks on other workers of L0, storing to L1.
    TaskEndLocal,
    TaskCreate {
        nb: bool,
    },
    SbAtomic,
    AmoCount,
}

impl Kind {
    const ALL: [(&'static str, Kind); 18] = [
        ("PUT-SRC", Kind::PutSrc),
        ("GET-DST", Kind::GetDst { nb: false }),
        ("GET-DST-NB", Kind::GetDst { nb: true }),
        ("RAW", Kind::Raw { nb: false }),
        ("RAW-NB", Kind::Raw { nb: true }),
        ("WAW", Kind::Waw { nb: false }),
        ("WAW-NB", Kind::Waw { nb: true }),
        ("MP-ATOMIC", Kind::MpAtomic { split: false }),
        ("MP-ATOMIC-SPLIT", Kind::MpAtomic { split: true }),
        ("MP-AM", Kind::MpAm { nb: false }),
        ("MP-AM-NB", Kind::MpAm { nb: true }),
        ("TASK-END", Kind::TaskEnd),
        ("TASK-END-OOB", Kind::TaskEndOob),
        ("TASK-END-LOCAL", Kind::TaskEndLocal),
        ("TASK-CREATE", Kind::TaskCreate { nb: false }),
        ("TASK-CREATE-NB", Kind::TaskCreate { nb: true }),
        ("SB-ATOMIC", Kind::SbAtomic),
        ("AMO-COUNT", Kind::AmoCount),
    ];

    fn base(self) -> &'static str {
        match self {
            Kind::PutSrc => "PUT-SRC",
            Kind::GetDst { .. } => "GET-DST",
            Kind::Raw { .. } => "RAW",
            Kind::Waw { .. } => "WAW",
            Kind::MpAtomic { .. } => "MP-ATOMIC",
            Kind::MpAm { .. } => "MP-AM",
            Kind::TaskEnd | Kind::TaskEndOob | Kind::TaskEndLocal => "TASK-END",
            Kind::TaskCreate { .. } => "TASK-CREATE",
            Kind::SbAtomic => "SB-ATOMIC",
            Kind::AmoCount => "AMO-COUNT",
        }
    }

    /// The group a test belongs to (`rma`, `sync`, `atomic`), so a run can
    /// be split into several jobs.
    fn group(self) -> &'static str {
        match self {
            Kind::PutSrc | Kind::GetDst { .. } | Kind::Raw { .. } | Kind::Waw { .. } => "rma",
            Kind::MpAm { .. }
            | Kind::TaskEnd
            | Kind::TaskEndOob
            | Kind::TaskEndLocal
            | Kind::TaskCreate { .. } => "sync",
            Kind::MpAtomic { .. } | Kind::SbAtomic | Kind::AmoCount => "atomic",
        }
    }

    /// Whether the test moves a buffer (run at every size) or 8-byte atomics.
    fn sized(self) -> bool {
        !matches!(self, Kind::SbAtomic | Kind::AmoCount)
    }

    /// Whether a SELF-* form exists (the "remote" words on the acting locale).
    fn has_self(self) -> bool {
        !matches!(self, Kind::TaskEndOob | Kind::MpAtomic { split: true })
    }
}

/// One (test, size) of the run.
#[derive(Clone, Debug)]
struct Inst {
    /// Running number, the same on every locale (part of every stamp).
    id: u64,
    name: String,
    kind: Kind,
    /// SELF-*: the words live on the acting locale (L0).
    selfish: bool,
    size: usize,
    iters: usize,
}

fn instances(select: &[String], sizes: &[usize], iters: usize, large: usize) -> R<Vec<Inst>> {
    let mut names = Vec::new();
    for (name, kind) in Kind::ALL {
        names.push((name.to_string(), kind, false));
        if kind.has_self() {
            names.push((format!("SELF-{name}"), kind, true));
        }
    }
    let known: BTreeSet<&str> = names.iter().map(|(n, ..)| n.as_str()).collect();
    const WORDS: [&str; 6] = ["all", "plain", "self", "rma", "sync", "atomic"];
    for s in select {
        if !WORDS.contains(&s.as_str()) && !known.contains(s.as_str()) {
            return Err(format!(
                "unknown litmus test {s:?}: expected {} or one of {}",
                WORDS.join(", "),
                known.iter().copied().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    let wanted = |name: &str, kind: Kind, selfish: bool| {
        select.iter().any(|s| match s.as_str() {
            "all" => true,
            "plain" => !selfish,
            "self" => selfish,
            g @ ("rma" | "sync" | "atomic") => kind.group() == g,
            x => x == name,
        })
    };
    let mut out = Vec::new();
    for (name, kind, selfish) in names {
        if !wanted(&name, kind, selfish) {
            continue;
        }
        let sz: Vec<usize> = if kind.sized() {
            sizes.to_vec()
        } else {
            vec![8]
        };
        for size in sz {
            out.push(Inst {
                id: out.len() as u64 + 1,
                name: name.clone(),
                kind,
                selfish,
                size,
                iters: if size >= 1 << 20 { large } else { iters },
            });
        }
    }
    if out.len() >= 1 << 12 {
        return Err("too many test instances for the stamp layout".into());
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Random numbers, delays

#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn new(parts: &[u64]) -> Rng {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        for p in parts {
            s = Rng(s ^ p).next();
        }
        Rng(s)
    }
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// `k` distinct numbers below `n`, in random order.
    fn distinct(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in 0..k.min(n) {
            let j = i + self.below((n - i) as u64) as usize;
            v.swap(i, j);
        }
        v.truncate(k);
        v
    }
}

/// A random spin between two steps: none a quarter of the time, else up
/// to `max` spin-loop hints.
fn delay(rng: &mut Rng, max: u64) {
    if rng.below(4) == 0 {
        return;
    }
    for _ in 0..rng.below(max + 1) {
        std::hint::spin_loop();
    }
}

/// Busy-waits for `d` (short skews; sleeping would be far too coarse).
fn spin_for(d: Duration) {
    let t0 = Instant::now();
    while t0.elapsed() < d {
        std::hint::spin_loop();
    }
}

// ---------------------------------------------------------------------------
// Registered memory: stamped buffers and flag words

/// Bytes per data slot (the largest size plus room).
const SLOT: usize = (1 << 20) + 4096;
/// Slots per set; there are two sets.
const SET: usize = 12;
const SLOTS: usize = 2 * SET;
/// Slot roles (every locale has all of them, at the same heap offsets).
const X: usize = 0; // the tested word or buffer (x, y, d)
const SRC: usize = 1; // PUT source (buf, the first value)
const SRC2: usize = 2; // second PUT source
const DST: usize = 3; // GET destination of the acting task
const TMP: usize = 4; // GET destination of the after-the-fact reader
const A: usize = 5; // TASK-END slots: A + child (1, 2)
const CSRC: usize = 8; // children's sources: CSRC + child (1, 2)
const CDST: usize = 10; // parent's GET destinations: CDST + child - 1
/// One iteration's slot numbers (two sets, by parity of the iteration).
#[derive(Clone, Copy)]
struct Slots {
    x: usize,
    src: usize,
    src2: usize,
    dst: usize,
    tmp: usize,
    a: usize,
    csrc: usize,
    cdst: usize,
}

impl Slots {
    fn of(it: u64) -> Slots {
        let p = (it % 2) as usize * SET;
        Slots {
            x: X + p,
            src: SRC + p,
            src2: SRC2 + p,
            dst: DST + p,
            tmp: TMP + p,
            a: A + p,
            csrc: CSRC + p,
            cdst: CDST + p,
        }
    }
}

/// Flag words (atomics only), 64 bytes apart.
const F_MP: u64 = 0;
const F_X: u64 = 1;
const F_Y: u64 = 2;
const F_C: u64 = 3;

fn word(addr: u64) -> &'static AtomicU64 {
    // SAFETY: every address passed here is an 8-aligned word of the
    // registered heap (slots and flags are 64-aligned allocations), which
    // lives until the process exits; remote writers only ever store whole
    // words or bytes, which atomics tolerate.
    unsafe { AtomicU64::from_ptr(addr as *mut u64) }
}

fn byte(addr: u64) -> &'static AtomicU8 {
    // SAFETY: a byte of the registered heap, which lives until the process
    // exits.
    unsafe { AtomicU8::from_ptr(addr as *mut u8) }
}

/// Word `k` of the buffer holding value `v` in iteration `it` of instance
/// `inst`: every word says which write it came from.
fn pattern(inst: u64, it: u64, v: u64, k: u64) -> u64 {
    inst << 48 | (it & 0xff_ffff) << 24 | (v & 0xf) << 20 | (k & 0xf_ffff)
}

/// Stamp of a flag word: value `v` of iteration `it` of instance `inst`,
/// increasing over the run.
fn stamp(inst: u64, it: u64, v: u64) -> u64 {
    inst << 40 | it << 8 | v
}

/// Fills `len` bytes at `addr` (this locale's heap) with the pattern.
fn fill(addr: u64, len: usize, inst: u64, it: u64, v: u64) {
    let words = len / 8;
    for k in 0..words {
        word(addr + 8 * k as u64).store(pattern(inst, it, v, k as u64), Ordering::Relaxed);
    }
    let tail = pattern(inst, it, v, words as u64).to_le_bytes();
    for (j, b) in tail.iter().enumerate().take(len % 8) {
        byte(addr + 8 * words as u64 + j as u64).store(*b, Ordering::Relaxed);
    }
    std::sync::atomic::fence(Ordering::Release);
}

/// What a read found in a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    /// Value `v` of this iteration, whole.
    V(u64),
    /// A whole buffer of an earlier iteration.
    Old,
    /// Mixed data.
    Torn,
}

impl Label {
    fn code(self) -> u8 {
        match self {
            Label::V(v) => v as u8,
            Label::Old => 254,
            Label::Torn => 255,
        }
    }
    fn from_code(c: u8) -> Label {
        match c {
            254 => Label::Old,
            255 => Label::Torn,
            v => Label::V(v as u64),
        }
    }
    fn text(self) -> String {
        match self {
            Label::V(v) => v.to_string(),
            Label::Old => "old".into(),
            Label::Torn => "torn".into(),
        }
    }
}

/// Classifies `len` bytes at `addr` (this locale's heap).
fn classify(addr: u64, len: usize, inst: u64, it: u64) -> Label {
    std::sync::atomic::fence(Ordering::Acquire);
    let words = len / 8;
    let first = if words > 0 {
        word(addr).load(Ordering::Relaxed)
    } else {
        let mut b = [0u8; 8];
        for (j, x) in b.iter_mut().enumerate().take(len) {
            *x = byte(addr + j as u64).load(Ordering::Relaxed);
        }
        u64::from_le_bytes(b)
    };
    let (i2, it2, v) = (first >> 48, (first >> 24) & 0xff_ffff, (first >> 20) & 0xf);
    let whole = (0..words).all(|k| {
        word(addr + 8 * k as u64).load(Ordering::Relaxed) == pattern(i2, it2, v, k as u64)
    }) && {
        let tail = pattern(i2, it2, v, words as u64).to_le_bytes();
        (0..len % 8)
            .all(|j| byte(addr + 8 * words as u64 + j as u64).load(Ordering::Relaxed) == tail[j])
    };
    match (whole, i2 == inst && it2 == it & 0xff_ffff) {
        (true, true) => Label::V(v),
        (true, false) => Label::Old,
        (false, _) => Label::Torn,
    }
}

/// A flag word's value as the oracle sees it.
fn flag_label(value: u64, inst: u64, it: u64) -> String {
    if value == stamp(inst, it, 1) {
        "1".into()
    } else if value < stamp(inst, it, 1) {
        "0".into()
    } else {
        format!("other({value:#x})")
    }
}

/// A heap buffer as a slice (PUT source).
fn slice(addr: u64, len: usize) -> &'static [u8] {
    // SAFETY: `addr..addr+len` is inside one slot of the registered heap,
    // which lives until the process exits; while a PUT reads it only this
    // task writes the slot, and only after the PUT's source is released.
    unsafe { std::slice::from_raw_parts(addr as *const u8, len) }
}

/// A heap buffer as a mutable slice (GET destination).
fn slice_mut(addr: u64, len: usize) -> &'static mut [u8] {
    // SAFETY: `addr..addr+len` is inside one slot of the registered heap
    // that only the calling task uses while the GET runs (each role has its
    // own destination slot) and nobody holds another reference to it.
    unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) }
}

// ---------------------------------------------------------------------------
// Worker threads, each bound to its own transmit context

type Job = Box<dyn FnOnce() + Send>;

struct Pool {
    tx: Vec<mpsc::Sender<Job>>,
}

struct Task<T>(mpsc::Receiver<R<T>>, usize);

impl<T> Task<T> {
    fn join(self) -> R<T> {
        self.0
            .recv()
            .map_err(|_| format!("worker {} died (panicked)", self.1))?
    }
}

impl Pool {
    fn start(comm: &Arc<Comm>, n: usize) -> R<Pool> {
        let mut tx = Vec::new();
        let (ready_tx, ready_rx) = mpsc::channel::<R>();
        for w in 0..n {
            let (jtx, jrx) = mpsc::channel::<Job>();
            let comm = comm.clone();
            let ready = ready_tx.clone();
            std::thread::Builder::new()
                .name(format!("litmus-w{w}"))
                .spawn(move || {
                    let r = comm.bind_worker(w).map_err(e("bind_worker"));
                    let ok = r.is_ok();
                    let _ = ready.send(r);
                    drop(comm);
                    if ok {
                        while let Ok(job) = jrx.recv() {
                            job();
                        }
                    }
                })
                .map_err(e("spawn worker"))?;
            tx.push(jtx);
        }
        for _ in 0..n {
            ready_rx.recv().map_err(e("worker start"))??;
        }
        Ok(Pool { tx })
    }

    /// Runs `f` as a task on worker `w`.
    fn spawn<T: Send + 'static>(
        &self,
        w: usize,
        f: impl FnOnce() -> R<T> + Send + 'static,
    ) -> Task<T> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            let _ = tx.send(f());
        });
        let _ = self.tx[w].send(job);
        Task(rx, w)
    }
}

// ---------------------------------------------------------------------------
// The suite

struct Env {
    comm: Arc<Comm>,
    am: Arc<Am>,
    pool: Pool,
    workers: usize,
    here: Locale,
    slots: u64,
    flags: u64,
    classify_fn: FnId,
    put_fn: FnId,
    seed: u64,
    max_delay: u64,
    amo_k: usize,
    /// SB-ATOMIC's start skew (ns), set by `calibrate`.
    skew_ns: AtomicU64,
}

/// What one locale saw in one iteration.
#[derive(Default)]
struct Part {
    kv: Vec<(String, String)>,
    info: Vec<String>,
}

impl Part {
    fn set(&mut self, k: &str, v: impl Into<String>) {
        self.kv.push((k.to_string(), v.into()));
    }
    fn note(&mut self, s: impl Into<String>) {
        self.info.push(s.into());
    }
}

/// Arguments of the `put` body.
struct PutArgs {
    dst: GlobalAddr,
    src: u64,
    size: usize,
    inst: u64,
    it: u64,
    v: u64,
    seed: u64,
}

fn enc(ws: &[u64]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn dec(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

impl Env {
    fn slot(&self, i: usize) -> u64 {
        self.slots + (i * SLOT) as u64
    }
    fn slot_on(&self, i: usize, locale: Locale) -> R<GlobalAddr> {
        self.comm
            .symmetric(GlobalAddr::new(self.here, self.slot(i)), locale)
            .map_err(e("symmetric"))
    }
    fn flag_on(&self, f: u64, locale: Locale) -> R<GlobalAddr> {
        self.comm
            .symmetric(GlobalAddr::new(self.here, self.flags + 64 * f), locale)
            .map_err(e("symmetric"))
    }

    /// Reads the buffer at `at` (here: a load; elsewhere: a GET into slot
    /// `via`) and classifies it.
    fn read(&self, at: GlobalAddr, via: usize, size: usize, inst: u64, it: u64) -> R<Label> {
        if at.locale == self.here {
            return Ok(classify(at.addr, size, inst, it));
        }
        let dst = self.slot(via);
        self.comm.get(slice_mut(dst, size), at).map_err(e("get"))?;
        Ok(classify(dst, size, inst, it))
    }

    fn amo_write(&self, at: GlobalAddr, v: u64) -> R {
        self.am
            .amo(at, AmoType::U64, AmoOp::Write, v, 0, false)
            .map_err(e("amo write"))?;
        Ok(())
    }
    fn amo_read(&self, at: GlobalAddr) -> R<u64> {
        self.am
            .amo(at, AmoType::U64, AmoOp::Read, 0, 0, true)
            .map_err(e("amo read"))
    }

    fn task_end(&self) -> R {
        self.comm.task_end().map_err(e("task_end"))
    }

    fn rng(&self, inst: &Inst, it: u64, who: u64) -> Rng {
        Rng::new(&[self.seed, inst.id, it, who])
    }

    /// Runs one instance on this locale; locale 0 returns the report.
    fn run(self: &Arc<Self>, inst: &Inst, ctx: &RunCtx) -> R<Option<Report>> {
        let started = Instant::now();
        if inst.kind == Kind::SbAtomic {
            self.calibrate(inst)?;
        }
        let mut lines = String::new();
        for it in 0..inst.iters as u64 {
            let part = self.iteration(inst, it)?;
            lines.push_str(&format!(
                "{it}|{}|{}\n",
                part.kv
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                part.info.join(",")
            ));
        }
        let all = self
            .comm
            .oob()
            .allgather(lines.as_bytes())
            .map_err(e("allgather"))?;
        // Everything settled before the next instance starts.
        self.comm.barrier().map_err(e("barrier"))?;
        if self.here != 0 {
            return Ok(None);
        }
        let mut rep = ctx.compose(inst, &all, started.elapsed());
        if inst.kind == Kind::SbAtomic {
            rep.line.push_str(&format!(
                "\tskew_ns={}",
                self.skew_ns.load(Ordering::Relaxed)
            ));
        }
        Ok(Some(rep))
    }

    fn iteration(self: &Arc<Self>, inst: &Inst, it: u64) -> R<Part> {
        let here = self.here;
        // Odd and even iterations use different slots: a reader still
        // looking at iteration i's words after the end barrier never races
        // with their owner resetting them for iteration i + 1.
        let s = Slots::of(it);
        let (id, size) = (inst.id, inst.size);
        let mut shared = self.rng(inst, it, u64::MAX);
        let mut part = Part::default();
        // The acting locale's partner, owner of the "remote" words.
        let owner = if inst.selfish { 0 } else { 1 };
        let max = self.max_delay;
        let w = self.workers;
        macro_rules! spawn {
            ($worker:expr, $body:expr) => {{
                let env = self.clone();
                let wk = $worker;
                let mut rng = self.rng(inst, it, here as u64 * 1000 + wk as u64);
                let body = $body;
                self.pool.spawn(wk, move || body(&env, &mut rng))
            }};
        }
        match inst.kind {
            Kind::PutSrc => {
                let y = self.slot_on(s.x, owner)?;
                if here == owner {
                    fill(self.slot(s.x), size, id, it, 0);
                }
                if here == 0 {
                    fill(self.slot(s.src), size, id, it, 1);
                }
                self.start()?;
                if here == 0 {
                    let wk = shared.below(w as u64) as usize;
                    part.note(format!("L0:w{wk}"));
                    spawn!(wk, move |env: &Arc<Env>, rng: &mut Rng| {
                        delay(rng, max);
                        let buf = env.slot(s.src);
                        env.comm.put(y, slice(buf, size)).map_err(e("put"))?;
                        delay(rng, max);
                        fill(buf, size, id, it, 2);
                        delay(rng, max);
                        env.task_end()?;
                        // The task signals the reader right away.
                        env.end()
                    })
                    .join()?;
                } else {
                    self.end()?;
                }
                if here == 1 {
                    part.set("r", self.read(y, s.tmp, size, id, it)?.text());
                }
            }
            Kind::GetDst { nb } => {
                let y = self.slot_on(s.x, owner)?;
                if here == owner {
                    fill(self.slot(s.x), size, id, it, 2);
                }
                if here == 0 {
                    fill(self.slot(s.dst), size, id, it, 0);
                }
                self.start()?;
                if here == 0 {
                    let wk = shared.below(w as u64) as usize;
                    part.note(format!("L0:w{wk}"));
                    let r = spawn!(wk, move |env: &Arc<Env>, rng: &mut Rng| {
                        delay(rng, max);
                        let x = env.slot(s.dst);
                        if nb {
                            // SAFETY: waited for right below; never leaked.
                            let h = unsafe { env.comm.get_nb(slice_mut(x, size), y) }
                                .map_err(e("get_nb"))?;
                            delay(rng, max);
                            h.wait().map_err(e("wait"))?;
                        } else {
                            env.comm.get(slice_mut(x, size), y).map_err(e("get"))?;
                        }
                        fill(x, size, id, it, 1);
                        let r = classify(x, size, id, it);
                        delay(rng, max);
                        env.task_end()?;
                        Ok(r)
                    })
                    .join()?;
                    part.set("r", r.text());
                }
                self.end()?;
                if here == 0 {
                    part.set("x", classify(self.slot(s.dst), size, id, it).text());
                }
            }
            Kind::Raw { nb } => {
                let x = self.slot_on(s.x, owner)?;
                if here == owner {
                    fill(self.slot(s.x), size, id, it, 0);
                }
                if here == 0 {
                    fill(self.slot(s.src), size, id, it, 1);
                }
                self.start()?;
                if here == 0 {
                    let wk = shared.below(w as u64) as usize;
                    part.note(format!("L0:w{wk}"));
                    let r = spawn!(wk, move |env: &Arc<Env>, rng: &mut Rng| {
                        delay(rng, max);
                        let src = slice(env.slot(s.src), size);
                        let dst = env.slot(s.dst);
                        let r = if nb {
                            // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                            let h = unsafe { env.comm.put_nb(x, src) }.map_err(e("put_nb"))?;
                            delay(rng, max);
                            env.comm.get(slice_mut(dst, size), x).map_err(e("get"))?;
                            let r = classify(dst, size, id, it);
                            h.wait().map_err(e("wait"))?;
                            r
                        } else {
                            env.comm.put(x, src).map_err(e("put"))?;
                            delay(rng, max);
                            env.comm.get(slice_mut(dst, size), x).map_err(e("get"))?;
                            classify(dst, size, id, it)
                        };
                        env.task_end()?;
                        Ok(r)
                    })
                    .join()?;
                    part.set("r", r.text());
                }
                self.end()?;
            }
            Kind::Waw { nb } => {
                let x = self.slot_on(s.x, owner)?;
                if here == owner {
                    fill(self.slot(s.x), size, id, it, 0);
                }
                if here == 0 {
                    fill(self.slot(s.src), size, id, it, 1);
                    fill(self.slot(s.src2), size, id, it, 2);
                }
                let reader = shared.below(3) as Locale;
                let reverse = shared.below(2) == 0;
                self.start()?;
                if here == 0 {
                    let wk = shared.below(w as u64) as usize;
                    part.note(format!("L0:w{wk},reader:L{reader}"));
                    spawn!(wk, move |env: &Arc<Env>, rng: &mut Rng| {
                        delay(rng, max);
                        let (s1, s2) =
                            (slice(env.slot(s.src), size), slice(env.slot(s.src2), size));
                        if nb {
                            // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                            let h1 = unsafe { env.comm.put_nb(x, s1) }.map_err(e("put_nb"))?;
                            delay(rng, max);
                            // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                            let h2 = unsafe { env.comm.put_nb(x, s2) }.map_err(e("put_nb"))?;
                            delay(rng, max);
                            if reverse {
                                h2.wait().map_err(e("wait"))?;
                                h1.wait().map_err(e("wait"))?;
                            } else {
                                h1.wait().map_err(e("wait"))?;
                                h2.wait().map_err(e("wait"))?;
                            }
                        } else {
                            env.comm.put(x, s1).map_err(e("put"))?;
                            delay(rng, max);
                            env.comm.put(x, s2).map_err(e("put"))?;
                        }
                        delay(rng, max);
                        env.task_end()?;
                        env.end()
                    })
                    .join()?;
                } else {
                    self.end()?;
                }
                if here == reader {
                    part.set("r", self.read(x, s.tmp, size, id, it)?.text());
                }
            }
            Kind::MpAtomic { split } => {
                let d = self.slot_on(s.x, owner)?;
                let f = self.flag_on(F_MP, if split { 2 } else { owner })?;
                // SELF: the reader is L1, reading L0's words.
                let reader = 1;
                if here == owner {
                    fill(self.slot(s.x), size, id, it, 0);
                }
                if here == 0 {
                    fill(self.slot(s.src), size, id, it, 1);
                }
                let want = stamp(id, it, 1);
                self.start()?;
                if here == 0 {
                    let wk = shared.below(w as u64) as usize;
                    part.note(format!("L0:w{wk}"));
                    spawn!(wk, move |env: &Arc<Env>, rng: &mut Rng| {
                        delay(rng, max);
                        env.comm
                            .put(d, slice(env.slot(s.src), size))
                            .map_err(e("put"))?;
                        delay(rng, max);
                        env.amo_write(f, want)?;
                        delay(rng, max);
                        env.task_end()
                    })
                    .join()?;
                } else if here == reader {
                    let wk = shared.below(w as u64) as usize;
                    part.note(format!("L1:w{wk}"));
                    let r = spawn!(wk, move |env: &Arc<Env>, rng: &mut Rng| {
                        delay(rng, max);
                        let deadline = Instant::now() + Duration::from_secs(20);
                        while env.amo_read(f)? != want {
                            if Instant::now() > deadline {
                                return Err(format!(
                                    "{}: the flag never became {want:#x}",
                                    "MP-ATOMIC reader"
                                ));
                            }
                            std::thread::yield_now();
                        }
                        let r = env.read(d, s.dst, size, id, it)?;
                        env.task_end()?;
                        Ok(r)
                    })
                    .join()?;
                    part.set("r", r.text());
                }
                self.end()?;
            }
            Kind::MpAm { nb } => {
                let d = self.slot_on(s.x, owner)?;
                if here == owner {
                    fill(self.slot(s.x), size, id, it, 0);
                }
                if here == 0 {
                    fill(self.slot(s.src), size, id, it, 1);
                }
                let fast = shared.below(2) == 0;
                self.start()?;
                if here == 0 {
                    let wk = shared.below(w as u64) as usize;
                    part.note(format!("L0:w{wk},{}", if fast { "fast" } else { "exec" }));
                    let r = spawn!(wk, move |env: &Arc<Env>, rng: &mut Rng| {
                        delay(rng, max);
                        let src = slice(env.slot(s.src), size);
                        let args = enc(&[d.addr, size as u64, id, it]);
                        let on = |env: &Arc<Env>| {
                            let reply = if fast {
                                env.am.execute_on_fast(d.locale, env.classify_fn, &args)
                            } else {
                                env.am.execute_on(d.locale, env.classify_fn, &args)
                            }
                            .map_err(e("on-statement"))?;
                            reply
                                .first()
                                .map(|c| Label::from_code(*c))
                                .ok_or_else(|| "empty reply".to_string())
                        };
                        let r = if nb {
                            // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                            let h = unsafe { env.comm.put_nb(d, src) }.map_err(e("put_nb"))?;
                            delay(rng, max);
                            let r = on(env)?;
                            h.wait().map_err(e("wait"))?;
                            r
                        } else {
                            env.comm.put(d, src).map_err(e("put"))?;
                            delay(rng, max);
                            on(env)?
                        };
                        env.task_end()?;
                        Ok(r)
                    })
                    .join()?;
                    part.set("r", r.text());
                }
                self.end()?;
            }
            Kind::TaskEnd => {
                // coforall loc in L1, L2 on loc { put(a[loc], loc) }; SELF:
                // each child stores into its own locale, the parent GETs.
                for k in 1..=2usize {
                    let slot_owner = if inst.selfish { k } else { 0 };
                    if here == slot_owner {
                        fill(self.slot(s.a + k), size, id, it, 0);
                    }
                }
                self.start()?;
                if here == 0 {
                    let ws = shared.distinct(w, 3);
                    part.note(format!(
                        "L0:parent-w{},children-w{}/w{}",
                        ws[0], ws[1], ws[2]
                    ));
                    let selfish = inst.selfish;
                    let seeds = [shared.next(), shared.next()];
                    let children = ws[1..].to_vec();
                    let r = spawn!(ws[0], move |env: &Arc<Env>, _rng: &mut Rng| {
                        let mut kids = Vec::new();
                        for (i, &cw) in children.iter().enumerate() {
                            let k = i + 1;
                            let dst_loc = if selfish { k } else { 0 };
                            let a = PutArgs {
                                dst: env.slot_on(s.a + k, dst_loc)?,
                                src: env.slot_on(s.csrc + k, k)?.addr,
                                size,
                                inst: id,
                                it,
                                v: 1,
                                seed: seeds[i],
                            };
                            let args = enc(&[
                                a.dst.locale as u64,
                                a.dst.addr,
                                a.src,
                                a.size as u64,
                                a.inst,
                                a.it,
                                a.v,
                                a.seed,
                            ]);
                            let env2 = env.clone();
                            kids.push(env.pool.spawn(cw, move || {
                                env2.am
                                    .execute_on(k, env2.put_fn, &args)
                                    .map_err(e("on-statement"))?;
                                env2.task_end()
                            }));
                        }
                        for t in kids {
                            t.join()?;
                        }
                        let mut r = Vec::new();
                        for k in 1..=2usize {
                            let at = env.slot_on(s.a + k, if selfish { k } else { 0 })?;
                            r.push(env.read(at, s.cdst + k - 1, size, id, it)?);
                        }
                        env.task_end()?;
                        Ok(r)
                    })
                    .join()?;
                    part.set("r1", r[0].text());
                    part.set("r2", r[1].text());
                }
                self.end()?;
            }
            Kind::TaskEndOob => {
                if here == 0 {
                    for k in 1..=2 {
                        fill(self.slot(s.a + k), size, id, it, 0);
                    }
                }
                if here == 1 || here == 2 {
                    fill(self.slot(s.csrc + here), size, id, it, 1);
                }
                self.start()?;
                if here == 1 || here == 2 {
                    let wk = shared.distinct(w, 3)[here];
                    part.note(format!("L{here}:w{wk}"));
                    let a = self.slot_on(s.a + here, 0)?;
                    spawn!(wk, move |env: &Arc<Env>, rng: &mut Rng| {
                        delay(rng, max);
                        env.comm
                            .put(a, slice(env.slot(s.csrc + env.here), size))
                            .map_err(e("put"))?;
                        delay(rng, max);
                        env.task_end()?;
                        // The launcher barrier is the join (it forces
                        // nothing), entered by the task itself.
                        env.end()
                    })
                    .join()?;
                } else {
                    self.end()?;
                }
                if here == 0 {
                    for k in 1..=2 {
                        part.set(
                            &format!("r{k}"),
                            classify(self.slot(s.a + k), size, id, it).text(),
                        );
                    }
                }
            }
            Kind::TaskEndLocal => {
                // Children on other workers of L0 store to L1 (SELF: to L0),
                // end, and signal the parent, which GETs.
                for k in 1..=2 {
                    if here == owner {
                        fill(self.slot(s.a + k), size, id, it, 0);
                    }
                    if here == 0 {
                        fill(self.slot(s.csrc + k), size, id, it, 1);
                    }
                }
                self.start()?;
                if here == 0 {
                    let ws = shared.distinct(w, 3);
                    part.note(format!(
                        "L0:parent-w{},children-w{}/w{}",
                        ws[0], ws[1], ws[2]
                    ));
                    let children = ws[1..].to_vec();
                    let seeds = [shared.next(), shared.next()];
                    let r = spawn!(ws[0], move |env: &Arc<Env>, rng: &mut Rng| {
                        let mut kids = Vec::new();
                        for (i, &cw) in children.iter().enumerate() {
                            let k = i + 1;
                            let a = env.slot_on(s.a + k, owner)?;
                            let env2 = env.clone();
                            let mut crng = Rng::new(&[seeds[i]]);
                            kids.push(env.pool.spawn(cw, move || {
                                delay(&mut crng, max);
                                env2.comm
                                    .put(a, slice(env2.slot(s.csrc + k), size))
                                    .map_err(e("put"))?;
                                delay(&mut crng, max);
                                env2.task_end()
                            }));
                        }
                        for t in kids {
                            t.join()?;
                        }
                        delay(rng, max);
                        let mut r = Vec::new();
                        for k in 1..=2 {
                            let a = env.slot_on(s.a + k, owner)?;
                            r.push(env.read(a, s.cdst + k - 1, size, id, it)?);
                        }
                        env.task_end()?;
                        Ok(r)
                    })
                    .join()?;
                    part.set("r1", r[0].text());
                    part.set("r2", r[1].text());
                }
                self.end()?;
            }
            Kind::TaskCreate { nb } => {
                let d = self.slot_on(s.x, owner)?;
                if here == owner {
                    fill(self.slot(s.x), size, id, it, 0);
                }
                if here == 0 {
                    fill(self.slot(s.src), size, id, it, 1);
                }
                self.start()?;
                if here == 0 {
                    let ws = shared.distinct(w, 2);
                    part.note(format!("L0:parent-w{},child-w{}", ws[0], ws[1]));
                    let child = ws[1];
                    let cseed = shared.next();
                    let r = spawn!(ws[0], move |env: &Arc<Env>, rng: &mut Rng| {
                        delay(rng, max);
                        let src = slice(env.slot(s.src), size);
                        let begin = |env: &Arc<Env>| {
                            env.comm.task_create().map_err(e("task_create"))?;
                            let env2 = env.clone();
                            let mut crng = Rng::new(&[cseed]);
                            Ok::<_, String>(env.pool.spawn(child, move || {
                                delay(&mut crng, max);
                                let r = env2.read(d, s.dst, size, id, it)?;
                                env2.task_end()?;
                                Ok(r)
                            }))
                        };
                        let r = if nb {
                            // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                            let h = unsafe { env.comm.put_nb(d, src) }.map_err(e("put_nb"))?;
                            delay(rng, max);
                            let t = begin(env)?;
                            delay(rng, max);
                            h.wait().map_err(e("wait"))?;
                            t.join()?
                        } else {
                            env.comm.put(d, src).map_err(e("put"))?;
                            delay(rng, max);
                            begin(env)?.join()?
                        };
                        env.task_end()?;
                        Ok(r)
                    })
                    .join()?;
                    part.set("r", r.text());
                }
                self.end()?;
            }
            Kind::SbAtomic => {
                let loc = if inst.selfish { 0 } else { 2 };
                let (x, y) = (self.flag_on(F_X, loc)?, self.flag_on(F_Y, loc)?);
                let want = stamp(id, it, 1);
                self.start()?;
                if here == 0 || here == 1 {
                    let wk = shared.distinct(w, 2)[here];
                    part.note(format!("L{here}:w{wk}"));
                    let (mine, theirs) = if here == 0 { (x, y) } else { (y, x) };
                    // Both actors draw from the same scale, one of 4 x the
                    // calibrated time down to 1/32 of it.
                    let skew = (4 * self.skew_ns.load(Ordering::Relaxed)) >> shared.below(8);
                    let r = spawn!(wk, move |env: &Arc<Env>, rng: &mut Rng| {
                        // A start skew on the scale of the operations
                        // themselves, so that every interleaving shows up.
                        spin_for(Duration::from_nanos(rng.below(skew + 1)));
                        env.amo_write(mine, want)?;
                        let r = env.amo_read(theirs)?;
                        env.task_end()?;
                        Ok(r)
                    })
                    .join()?;
                    part.set(&format!("r{here}"), flag_label(r, id, it));
                }
                self.end()?;
            }
            Kind::AmoCount => {
                let c = self.flag_on(F_C, 0)?;
                if here == 0 {
                    part.set("_start", self.amo_read(c)?.to_string());
                }
                let k = self.amo_k;
                self.start()?;
                // Every locale (SELF: only the owner, with every worker).
                let acting = !inst.selfish || here == 0;
                if acting {
                    let ws = if inst.selfish {
                        (0..w).collect()
                    } else {
                        shared.distinct(w, 2)
                    };
                    part.note(format!(
                        "L{here}:w{}",
                        ws.iter()
                            .map(|x| x.to_string())
                            .collect::<Vec<_>>()
                            .join("+")
                    ));
                    let tasks: Vec<_> = ws
                        .iter()
                        .map(|&wk| {
                            spawn!(wk, move |env: &Arc<Env>, rng: &mut Rng| {
                                let mut got = Vec::with_capacity(k);
                                for _ in 0..k {
                                    delay(rng, max);
                                    got.push(
                                        env.am
                                            .amo(c, AmoType::U64, AmoOp::Add, 1, 0, true)
                                            .map_err(e("fetch_add"))?,
                                    );
                                }
                                env.task_end()?;
                                Ok(got)
                            })
                        })
                        .collect();
                    let mut got = Vec::new();
                    for t in tasks {
                        got.extend(t.join()?);
                    }
                    part.set(
                        "_fetched",
                        got.iter()
                            .map(|v| v.to_string())
                            .collect::<Vec<_>>()
                            .join(","),
                    );
                }
                self.end()?;
                if here == 0 {
                    part.set("_end", self.amo_read(c)?.to_string());
                }
            }
        }
        Ok(part)
    }

    /// SB-ATOMIC's start skew: the slower of the two actors' time for one
    /// atomic write and read of the test words (median of 15), agreed by all.
    fn calibrate(self: &Arc<Self>, inst: &Inst) -> R {
        let loc = if inst.selfish { 0 } else { 2 };
        let mine = self.flag_on(if self.here == 0 { F_X } else { F_Y }, loc)?;
        let v = stamp(inst.id, 0, 0);
        let ns = if self.here <= 1 {
            self.pool
                .spawn(0, {
                    let env = self.clone();
                    move || {
                        let mut t = Vec::new();
                        for _ in 0..15 {
                            let t0 = Instant::now();
                            env.amo_write(mine, v)?;
                            env.amo_read(mine)?;
                            t.push(t0.elapsed().as_nanos() as u64);
                        }
                        t.sort_unstable();
                        env.task_end()?;
                        Ok(t[t.len() / 2])
                    }
                })
                .join()?
        } else {
            0
        };
        let all = self
            .comm
            .oob()
            .allgather(&ns.to_le_bytes())
            .map_err(e("allgather"))?;
        let skew = all
            .iter()
            .filter_map(|b| {
                b.get(..8)
                    .map(|b| u64::from_le_bytes(b.try_into().expect("8")))
            })
            .max()
            .unwrap_or(0);
        self.skew_ns.store(skew, Ordering::Relaxed);
        Ok(())
    }

    /// The start of an iteration: owners have reset their words.
    fn start(&self) -> R {
        self.comm.oob().barrier().map_err(e("oob barrier"))
    }

    /// The end of an iteration: a launcher barrier, which forces nothing.
    fn end(&self) -> R {
        self.comm.oob().barrier().map_err(e("oob barrier"))
    }
}

// ---------------------------------------------------------------------------
// Composing outcomes (locale 0)

struct RunCtx {
    provider: String,
    mode: String,
    weaken: String,
    show: usize,
    allowed: Mutex<BTreeMap<&'static str, BTreeSet<String>>>,
}

/// One (test, size) result.
struct Report {
    line: String,
    details: Vec<String>,
    forbidden: usize,
}

impl RunCtx {
    fn allowed(&self, base: &'static str) -> BTreeSet<String> {
        let mut m = self.allowed.lock().expect("allowed cache");
        m.entry(base)
            .or_insert_with(|| {
                litmus_oracle::program(base)
                    .expect("every kind has an oracle program")
                    .allowed()
                    .outcomes
            })
            .clone()
    }

    fn compose(&self, inst: &Inst, all: &[Vec<u8>], took: Duration) -> Report {
        let base = inst.kind.base();
        let allowed = self.allowed(base);
        // iteration -> what every locale saw
        let mut per: BTreeMap<u64, Part> = BTreeMap::new();
        for (loc, bytes) in all.iter().enumerate() {
            for line in String::from_utf8_lossy(bytes).lines() {
                let mut f = line.splitn(3, '|');
                let it: u64 = f.next().and_then(|s| s.parse().ok()).unwrap_or(u64::MAX);
                let kv = f.next().unwrap_or("");
                let info = f.next().unwrap_or("");
                let ent = per.entry(it).or_default();
                for pair in kv.split(' ').filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    let k = if k == "_fetched" {
                        format!("_fetched{loc}")
                    } else {
                        k.to_string()
                    };
                    ent.kv.push((k, v.to_string()));
                }
                if !info.is_empty() {
                    ent.info.push(info.to_string());
                }
            }
        }
        let mut hist: BTreeMap<String, usize> = BTreeMap::new();
        let mut details = Vec::new();
        let mut forbidden = 0;
        for (it, Part { kv, info }) in &per {
            let outcome = if inst.kind == Kind::AmoCount {
                let get = |k: &str| {
                    kv.iter()
                        .find(|(kk, _)| kk == k)
                        .and_then(|(_, v)| v.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                let fetched: Vec<u64> = kv
                    .iter()
                    .filter(|(k, _)| k.starts_with("_fetched"))
                    .flat_map(|(_, v)| v.split(',').filter_map(|x| x.parse().ok()))
                    .collect();
                amo_count_label(get("_end"), get("_start"), &fetched)
            } else {
                outcome_of(kv.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            };
            if !allowed.contains(&outcome) {
                forbidden += 1;
                if details.len() < self.show {
                    details.push(format!(
                        "litmus-forbidden\tprovider={}\tmode={}\tweaken={}\ttest={}\tsize={}\titer={it}\toutcome={outcome}\twhere={}",
                        self.provider,
                        self.mode,
                        self.weaken,
                        inst.name,
                        inst.size,
                        info.join(";")
                    ));
                }
            }
            *hist.entry(outcome).or_default() += 1;
        }
        let gaps: Vec<&String> = allowed.iter().filter(|a| !hist.contains_key(*a)).collect();
        let line = format!(
            "litmus\tprovider={}\tmode={}\tweaken={}\ttest={}\tbase={base}\tsize={}\titers={}\tms={}\tseen={}\tforbidden={forbidden}\tgaps={}",
            self.provider,
            self.mode,
            self.weaken,
            inst.name,
            inst.size,
            per.len(),
            took.as_millis(),
            hist.iter()
                .map(|(o, c)| format!("{o}#{c}"))
                .collect::<Vec<_>>()
                .join("|"),
            gaps.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("|"),
        );
        Report {
            line,
            details,
            forbidden,
        }
    }
}

// ---------------------------------------------------------------------------

fn env_num(name: &str, default: u64) -> R<u64> {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("{name}={v:?}: expected a number")),
        Err(_) => Ok(default),
    }
}

fn parse_sizes(spec: &str, inject: usize) -> R<Vec<usize>> {
    spec.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            let v = match s {
                "inject+1" => Some(inject + 1),
                _ => {
                    let (num, mul) = match s.as_bytes().last() {
                        Some(b'K' | b'k') => (&s[..s.len() - 1], 1 << 10),
                        Some(b'M' | b'm') => (&s[..s.len() - 1], 1 << 20),
                        _ => (s, 1),
                    };
                    num.parse::<usize>().ok().map(|n| n * mul)
                }
            };
            match v {
                Some(v) if (1..=1 << 20).contains(&v) => Ok(v),
                _ => Err(format!(
                    "LITMUS_SIZES: bad size {s:?} (bytes, K, M or inject+1; 1 B to 1 MiB)"
                )),
            }
        })
        .collect()
}

fn run() -> R<(Locale, usize)> {
    let comm = Comm::init().map_err(e("init"))?;
    let reg = Registry::new();
    let classify_fn = reg
        .register("litmus::classify", |_ctx, args| {
            let a = dec(args);
            vec![classify(a[0], a[1] as usize, a[2], a[3]).code()]
        })
        .map_err(e("register"))?;
    let max_delay = env_num("LITMUS_DELAY", 1000)?;
    let put_fn = reg
        .register("litmus::put", move |ctx, args| {
            let a = dec(args);
            let (dst, src, size) = (GlobalAddr::new(a[0] as Locale, a[1]), a[2], a[3] as usize);
            fill(src, size, a[4], a[5], a[6]);
            delay(&mut Rng::new(&[a[7]]), max_delay);
            let comm = ctx.am().comm();
            if let Err(err) = comm.put(dst, slice(src, size)) {
                panic!("litmus::put body: put: {err}");
            }
            if let Err(err) = comm.task_end() {
                panic!("litmus::put body: task_end: {err}");
            }
            Vec::new()
        })
        .map_err(e("register"))?;
    let am = amhandler::start_with(
        comm.clone(),
        Options {
            registry: reg,
            ..Default::default()
        },
    )
    .map_err(e("AM layer"))?;
    let here = comm.here();
    let fail = |m: String| -> String {
        // One locale failing leaves the others in a barrier: take the job down.
        comm.oob().abort(&format!("litmus: locale {here}: {m}"))
    };
    if comm.num_locales() < 3 {
        return Err(fail("needs at least 3 locales".into()));
    }
    let workers = comm.config().num_workers;
    if workers < 3 {
        return Err(fail(format!(
            "needs PGAS_NUM_WORKERS >= 3 (a parent and two children), got {workers}"
        )));
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let select: Vec<String> = if args.is_empty() {
        vec!["all".into()]
    } else {
        args.iter()
            .flat_map(|a| a.split(',').map(|s| s.trim().to_string()))
            .filter(|s| !s.is_empty())
            .collect()
    };
    let iters = env_num("LITMUS_ITERS", 200).map_err(&fail)? as usize;
    let large = env_num("LITMUS_ITERS_LARGE", (iters as u64 / 8).max(2)).map_err(&fail)? as usize;
    let sizes = parse_sizes(
        &std::env::var("LITMUS_SIZES").unwrap_or_else(|_| "8,inject+1,1M".into()),
        comm.provider().inject_size,
    )
    .map_err(&fail)?;
    let insts = instances(&select, &sizes, iters, large).map_err(&fail)?;
    let pool = Pool::start(&comm, workers).map_err(&fail)?;
    // Allocated in the same order everywhere: symmetric addresses line up.
    let slots = comm
        .alloc(SLOT * SLOTS, 4096)
        .map_err(e("alloc"))
        .map_err(&fail)?;
    let flags = comm.alloc(4096, 64).map_err(e("alloc")).map_err(&fail)?;
    let env = Arc::new(Env {
        comm: comm.clone(),
        am: am.clone(),
        pool,
        workers,
        here,
        slots: slots.addr,
        flags: flags.addr,
        classify_fn,
        put_fn,
        seed: env_num("LITMUS_SEED", 1).map_err(&fail)?,
        max_delay,
        amo_k: env_num("LITMUS_AMO_K", 4).map_err(&fail)?.max(1) as usize,
        skew_ns: AtomicU64::new(0),
    });
    let weaken = match comm.config().weaken {
        None => "none".to_string(),
        Some(w) => match format!("{w:?}").as_str() {
            "NoForcing" => "no-forcing".to_string(),
            "NoSourceWait" => "no-source-wait".to_string(),
            other => other.to_string(),
        },
    };
    let ctx = RunCtx {
        provider: comm.provider().name.clone(),
        mode: comm.mode().to_string(),
        weaken: weaken.clone(),
        show: env_num("LITMUS_SHOW", 5).map_err(&fail)? as usize,
        allowed: Mutex::new(BTreeMap::new()),
    };
    comm.barrier().map_err(e("barrier")).map_err(&fail)?;
    if here == 0 {
        println!(
            "litmus-start\tprovider={}\tmode={}\tweaken={weaken}\tlocales={}\tworkers={workers}\tbound={}\tinject={}\tatomics={}\tseed={}\titers={iters}\titers_large={large}\tinstances={}",
            ctx.provider,
            ctx.mode,
            comm.num_locales(),
            comm.is_bound(),
            comm.provider().inject_size,
            if comm.mapped().in_use() {
                "cpu-mapped"
            } else if comm.amo_is_native(AmoType::U64, AmoOp::Add, true) {
                "native"
            } else {
                "am"
            },
            env.seed,
            insts.len()
        );
    }
    let t0 = Instant::now();
    let mut forbidden = 0;
    for inst in &insts {
        if let Some(rep) = env
            .run(inst, &ctx)
            .map_err(|m| fail(format!("{}: {m}", inst.name)))?
        {
            forbidden += rep.forbidden;
            println!("{}", rep.line);
            for d in rep.details {
                println!("{d}");
            }
        }
    }
    if here == 0 {
        println!(
            "litmus-done\tprovider={}\tmode={}\tweaken={weaken}\tinstances={}\tforbidden={forbidden}\tms={}",
            ctx.provider,
            ctx.mode,
            insts.len(),
            t0.elapsed().as_millis()
        );
    }
    am.finalize().map_err(e("finalize"))?;
    let strict = comm.config().weaken.is_none();
    Ok((here, if strict { forbidden } else { 0 }))
}

fn main() -> ExitCode {
    match run() {
        Ok((_, 0)) => ExitCode::SUCCESS,
        Ok((_, n)) => {
            eprintln!("litmus: {n} forbidden outcome(s) seen");
            ExitCode::FAILURE
        }
        Err(m) => {
            eprintln!("litmus: {m}");
            ExitCode::FAILURE
        }
    }
}
