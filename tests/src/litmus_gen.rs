//! Generated litmus programs for the public API (`runtime-shim`), with their
//! SC oracle.
//!
//! Exists because a hand-picked catalogue only finds the holes its author
//! thought of: the ordering holes found in review all lived in combinations
//! (an atomic on the *acting* locale, reads to *two* locales, a non-blocking
//! on-statement to *oneself*, an *unbound* thread) that no hand-written test
//! had. Here a program is a few threads of whole operations; [`generate`]
//! enumerates families of them over every placement of every word (on the
//! acting locale, on the peer, on a third locale), every way of doing each
//! step (blocking or non-blocking PUT/GET, atomic write / fetch-add / CAS,
//! on / on_nb / on_fast, begin + join, barrier), thread kinds (worker task,
//! the main thread, a foreign thread) and two sizes; [`Program::allowed`]
//! enumerates the outcomes sequential consistency allows, and rejects a
//! program that has a data race (whose outcomes the language does not
//! promise). The runner (`tests/examples/litmus_gen.rs`) executes them
//! through the public API under `pgasrun`.
//!
//! Values: every word starts at 0 and writers store small values (1, 2); a
//! fetch-add adds 1. Registers are written once, by their thread.

use std::collections::{BTreeSet, HashSet};
use std::fmt::{self, Write as _};

/// Locales of the jobs that run generated programs.
pub const LOCALES: u8 = 4;

/// A word of some locale's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Word {
    /// The locale that owns it.
    pub home: u8,
    /// Accessed only by atomics, or a flag (8 bytes; else only by PUT/GET).
    pub atomic: bool,
    /// Where it lives on its home locale.
    pub mem: Mem,
}

/// Which memory of its home locale a word lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mem {
    /// The registered heap (mapped by co-located locales).
    Heap,
    /// The executable's static data (`Runtime::static_ptr`; mapped by
    /// co-located locales, or reached through the provider with
    /// `PGAS_LOCAL_PATH=mapped-heap`).
    Static,
    /// A lock word (heap): the oracle's value is 0 when free, the holder + 1
    /// while held; only [`Step::Lock`] and [`Step::Unlock`] touch it.
    Lock,
}

/// How a thread runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThreadKind {
    /// A task on a worker (bound transmit context).
    Task,
    /// The process's main thread.
    Main,
    /// A thread the program started itself (no context of its own).
    Foreign,
    /// The body of an on-statement or a `begin` (started by its parent).
    Child,
}

/// How an on-statement is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnKind {
    /// `on` (blocking; the body runs as a task there).
    Blocking,
    /// `on_nb` (fire and forget).
    Nb,
    /// `on_fast` (blocking; the body runs in the handler: local steps only).
    Fast,
    /// `on_fast_nb`.
    FastNb,
}

impl OnKind {
    /// Whether the caller waits for the body.
    pub fn blocking(self) -> bool {
        matches!(self, OnKind::Blocking | OnKind::Fast)
    }
    fn name(self) -> &'static str {
        match self {
            OnKind::Blocking => "on",
            OnKind::Nb => "on_nb",
            OnKind::Fast => "on_fast",
            OnKind::FastNb => "on_fast_nb",
        }
    }
}

/// One step of a thread, performed through the public API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// `put(w, v)`; with `nb`, `put_nb` whose handle slot `h` a later
    /// [`Step::Wait`] waits for.
    Put { w: u8, v: u8, nb: Option<u8> },
    /// `r = get(w)`; with `nb`, `get_nb` (the register is filled at the wait).
    Get { w: u8, r: u8, nb: Option<u8> },
    /// Waits for non-blocking handle `h`.
    Wait { h: u8 },
    /// `w.write(v)` (atomic).
    AWrite { w: u8, v: u8 },
    /// `r = w.read()`.
    ARead { w: u8, r: u8 },
    /// `r = w.fetch_add(1)`.
    AFetchAdd { w: u8, r: u8 },
    /// `w.add(1)` (non-fetching).
    AAdd { w: u8 },
    /// `w.add_unordered(1)`: buffered, done by the thread's next fence or
    /// task end. The generator always follows it (before any other step
    /// touching `w`) by a [`Step::Fence`] or the end of a task, so the
    /// oracle takes it at its issue point.
    AAddUnordered { w: u8 },
    /// `r = w.compare_exchange(expect, new)` (r = the old value).
    ACas { w: u8, expect: u8, new: u8, r: u8 },
    /// Waits until the atomic `w` holds `v` (reading it atomically).
    Await { w: u8, v: u8 },
    /// Waits until `w`, a word of the thread's own locale, holds `v`, with
    /// `wait_until_local` (`poll`: a loop of `test_local`): the
    /// point-to-point calls, SC reads.
    AwaitLocal { w: u8, v: u8, poll: bool },
    /// `r = if test_local(w == v) { v } else { 0 }` on a word of the
    /// thread's own locale (an SC read through the point-to-point calls).
    ReadLocal { w: u8, v: u8, r: u8 },
    /// `fence()`: the thread's earlier PUTs ordered before its later ones,
    /// target by target.
    Fence,
    /// A plain 8-byte PUT of `v` used as a flag (`shmem_p` after a fence):
    /// awaited by a reader; the generator puts it after a [`Step::Fence`]
    /// that orders the data to the same locale before it.
    PutFlag { w: u8, v: u8 },
    /// `put_with_signal(w = v, sig = 1)`: data, then the signal as an SC atomic.
    PutSignal { w: u8, v: u8, sig: u8 },
    /// Acquires the lock whose word is `l` (an MCS lock).
    Lock { l: u8 },
    /// Releases it.
    Unlock { l: u8 },
    /// `r = get(w); put(w, r + 1)`: a plain read-modify-write (under a lock).
    Incr { w: u8, r: u8 },
    /// A collective of the world team (every locale takes part, one thread
    /// each, as in [`Step::Barrier`]; the runner checks its result).
    Collective { kind: Coll },
    /// An on-statement running thread `child` on that thread's locale.
    On { child: u8, kind: OnKind },
    /// `begin`: thread `child` as a task on this locale.
    Begin { child: u8 },
    /// Waits for the `begin` of `child`.
    Join { child: u8 },
    /// The job-wide barrier (one thread per locale calls it).
    Barrier,
}

/// A collective of [`Step::Collective`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Coll {
    /// `world().barrier()` (the team barrier, not `Runtime::barrier`).
    TeamBarrier,
    /// `broadcast(0, ..)`.
    Broadcast,
    /// `allreduce(.., Sum)`.
    Allreduce,
    /// `fcollect`.
    Fcollect,
    /// `alltoall`.
    Alltoall,
}

impl Coll {
    /// Every collective the generator uses.
    pub const ALL: [Coll; 5] = [
        Coll::TeamBarrier,
        Coll::Broadcast,
        Coll::Allreduce,
        Coll::Fcollect,
        Coll::Alltoall,
    ];
    fn name(self) -> &'static str {
        match self {
            Coll::TeamBarrier => "team_barrier",
            Coll::Broadcast => "broadcast",
            Coll::Allreduce => "allreduce",
            Coll::Fcollect => "fcollect",
            Coll::Alltoall => "alltoall",
        }
    }
}

/// A thread: its locale, how it runs, its steps in program order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Thread {
    /// Where it runs.
    pub locale: u8,
    /// How.
    pub kind: ThreadKind,
    /// What it does.
    pub steps: Vec<Step>,
}

/// A generated program.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// The family (one row of the report).
    pub family: &'static str,
    /// The words, by id.
    pub words: Vec<Word>,
    /// The threads, by id; top-level ones are those no step starts.
    pub threads: Vec<Thread>,
    /// Bytes of a plain word: 8, or the provider's inject size + 1 (`0`
    /// stands for the latter until the runner knows the provider).
    pub size: Size,
    /// Registers, `0..regs`.
    pub regs: u8,
    /// Whether the program needs at least two shared transmit contexts to
    /// mean what it tests (run it in the unbound cells).
    pub unbound_cell: bool,
}

/// A plain word's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    /// 8 bytes.
    Eight,
    /// The provider's inject size + 1 (not injected).
    InjectPlusOne,
    /// Larger than one transfer: 2.5 x the `max_msg_size` in force (cut
    /// into chunks; run in the cells that lower `PGAS_MAX_MSG_SIZE`),
    /// at most 256 KiB.
    OverMaxMsg,
}

impl Program {
    /// The threads nothing starts: the runner starts them.
    pub fn top_level(&self) -> Vec<u8> {
        let children: HashSet<u8> = self
            .threads
            .iter()
            .flat_map(|t| t.steps.iter())
            .filter_map(|s| match *s {
                Step::On { child, .. } | Step::Begin { child } => Some(child),
                _ => None,
            })
            .collect();
        (0..self.threads.len() as u8)
            .filter(|t| !children.contains(t))
            .collect()
    }

    /// The thread a step `On`/`Begin` starts, with the kind it was started by.
    pub fn parent_of(&self, child: u8) -> Option<(u8, Step)> {
        self.threads.iter().enumerate().find_map(|(i, t)| {
            t.steps.iter().find_map(|s| match *s {
                Step::On { child: c, .. } | Step::Begin { child: c } if c == child => {
                    Some((i as u8, *s))
                }
                _ => None,
            })
        })
    }

    /// Whether a thread is the body of a non-blocking on-statement (its
    /// registers are reported by its locale, not its parent).
    pub fn is_nb_body(&self, t: u8) -> bool {
        matches!(
            self.parent_of(t),
            Some((
                _,
                Step::On {
                    kind: OnKind::Nb | OnKind::FastNb,
                    ..
                }
            ))
        )
    }

    /// One line: `T0@L0 task: put w0@L2=1; awrite w1@L0=1 | T1@L1 ...`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (i, t) in self.threads.iter().enumerate() {
            if i > 0 {
                out.push_str(" | ");
            }
            let kind = match t.kind {
                ThreadKind::Task => "task",
                ThreadKind::Main => "main",
                ThreadKind::Foreign => "foreign",
                ThreadKind::Child => "body",
            };
            let _ = write!(out, "T{i}@L{} {kind}:", t.locale);
            for (k, s) in t.steps.iter().enumerate() {
                out.push_str(if k == 0 { " " } else { "; " });
                out.push_str(&self.step_text(s));
            }
        }
        let _ = write!(
            out,
            " [{}]",
            match self.size {
                Size::Eight => "8B",
                Size::InjectPlusOne => "inject+1",
                Size::OverMaxMsg => "over-max-msg",
            }
        );
        out
    }

    fn w(&self, w: u8) -> String {
        let word = &self.words[w as usize];
        let mem = match word.mem {
            Mem::Heap => "",
            Mem::Static => "s",
            Mem::Lock => "lock",
        };
        format!("w{w}{mem}@L{}", word.home)
    }

    fn step_text(&self, s: &Step) -> String {
        match *s {
            Step::Put { w, v, nb: None } => format!("put {}={v}", self.w(w)),
            Step::Put { w, v, nb: Some(h) } => format!("put_nb {}={v} (h{h})", self.w(w)),
            Step::Get { w, r, nb: None } => format!("r{r}=get {}", self.w(w)),
            Step::Get { w, r, nb: Some(h) } => format!("r{r}=get_nb {} (h{h})", self.w(w)),
            Step::Wait { h } => format!("wait h{h}"),
            Step::AWrite { w, v } => format!("{}.write({v})", self.w(w)),
            Step::ARead { w, r } => format!("r{r}={}.read()", self.w(w)),
            Step::AFetchAdd { w, r } => format!("r{r}={}.fetch_add(1)", self.w(w)),
            Step::AAdd { w } => format!("{}.add(1)", self.w(w)),
            Step::AAddUnordered { w } => format!("{}.add_unordered(1)", self.w(w)),
            Step::ACas { w, expect, new, r } => {
                format!("r{r}={}.cas({expect},{new})", self.w(w))
            }
            Step::Await { w, v } => format!("await {}=={v}", self.w(w)),
            Step::AwaitLocal { w, v, poll: false } => {
                format!("wait_until_local {}=={v}", self.w(w))
            }
            Step::AwaitLocal { w, v, poll: true } => format!("poll test_local {}=={v}", self.w(w)),
            Step::ReadLocal { w, v, r } => format!("r{r}=test_local {}=={v}", self.w(w)),
            Step::Fence => "fence".into(),
            Step::PutFlag { w, v } => format!("put_flag {}={v}", self.w(w)),
            Step::PutSignal { w, v, sig } => {
                format!("put_signal {}={v} sig {}", self.w(w), self.w(sig))
            }
            Step::Lock { l } => format!("lock {}", self.w(l)),
            Step::Unlock { l } => format!("unlock {}", self.w(l)),
            Step::Incr { w, r } => format!("r{r}=incr {}", self.w(w)),
            Step::Collective { kind } => kind.name().into(),
            Step::On { child, kind } => format!(
                "{} L{} {{T{child}}}",
                kind.name(),
                self.threads[child as usize].locale
            ),
            Step::Begin { child } => format!("begin {{T{child}}}"),
            Step::Join { child } => format!("join T{child}"),
            Step::Barrier => "barrier".into(),
        }
    }

    /// The SC outcomes, or why the program is not a valid litmus program
    /// (a data race, a deadlock in some interleaving).
    pub fn allowed(&self) -> Result<BTreeSet<String>, String> {
        Oracle::new(self).run()
    }

    /// The outcome spelling of final word values and registers.
    pub fn outcome(&self, words: &[u8], regs: &[u8]) -> String {
        let mut parts: Vec<String> = Vec::new();
        for (r, v) in regs.iter().enumerate() {
            parts.push(format!("r{r}={v}"));
        }
        for (w, v) in words.iter().enumerate() {
            parts.push(format!("w{w}={v}"));
        }
        parts.join(" ")
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

// ---------------------------------------------------------------------------
// The oracle

/// One oracle action: the steps, with on-statements and begins split into a
/// start and (where the parent waits) a join.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Act {
    Write(u8, u8),
    Read(u8, u8),
    /// `r = if mem[w] == v { v } else { 0 }`.
    ReadIs(u8, u8, u8),
    /// `mem[w] = regs[r] + 1`.
    WriteInc(u8, u8),
    /// Takes lock `l` (for thread `t`): enabled while it is free.
    Lock(u8, u8),
    Unlock(u8),
    FetchAdd(u8, u8),
    Add(u8),
    Cas(u8, u8, u8, u8),
    Await(u8, u8),
    Start(u8),
    JoinT(u8),
    Barrier,
    Nop,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct State {
    pc: Vec<u8>,
    started: Vec<bool>,
    mem: Vec<u8>,
    regs: Vec<u8>,
}

struct Oracle<'a> {
    p: &'a Program,
    acts: Vec<Vec<Act>>,
    /// For each thread: for each act, the plain word it touches and
    /// whether it writes it.
    plain: Vec<Vec<Option<(u8, bool)>>>,
}

impl<'a> Oracle<'a> {
    fn new(p: &'a Program) -> Oracle<'a> {
        let mut acts = Vec::new();
        let mut plain = Vec::new();
        for (t_index, t) in p.threads.iter().enumerate() {
            let t_index = t_index as u8;
            let mut a = Vec::new();
            let mut pl = Vec::new();
            for s in &t.steps {
                let (act, touch): (Vec<Act>, Vec<Option<(u8, bool)>>) = match *s {
                    // A non-blocking PUT/GET takes effect at its issue
                    // point (the contract the layer keeps for DRF programs,
                    // see docs/mcm.md); its wait is a no-op.
                    Step::Put { w, v, .. } => (vec![Act::Write(w, v)], vec![Some((w, true))]),
                    Step::Get { w, r, .. } => (vec![Act::Read(w, r)], vec![Some((w, false))]),
                    Step::Wait { .. } => (vec![Act::Nop], vec![None]),
                    Step::AWrite { w, v } => (vec![Act::Write(w, v)], vec![None]),
                    Step::ARead { w, r } => (vec![Act::Read(w, r)], vec![None]),
                    Step::AFetchAdd { w, r } => (vec![Act::FetchAdd(w, r)], vec![None]),
                    Step::AAdd { w } | Step::AAddUnordered { w } => (vec![Act::Add(w)], vec![None]),
                    Step::ACas { w, expect, new, r } => {
                        (vec![Act::Cas(w, expect, new, r)], vec![None])
                    }
                    Step::Await { w, v } | Step::AwaitLocal { w, v, .. } => {
                        (vec![Act::Await(w, v)], vec![None])
                    }
                    Step::ReadLocal { w, v, r } => (vec![Act::ReadIs(w, v, r)], vec![None]),
                    // Every fence the generator emits orders a data PUT
                    // before a flag PUT to the same locale: the promise.
                    Step::Fence => (vec![Act::Nop], vec![None]),
                    // A flag: written and awaited concurrently, ordered by
                    // the fence before it (not a data race by the contract).
                    Step::PutFlag { w, v } => (vec![Act::Write(w, v)], vec![None]),
                    Step::PutSignal { w, v, sig } => (
                        vec![Act::Write(w, v), Act::Write(sig, 1)],
                        vec![Some((w, true)), None],
                    ),
                    Step::Lock { l } => (vec![Act::Lock(l, t_index)], vec![None]),
                    Step::Unlock { l } => (vec![Act::Unlock(l)], vec![None]),
                    Step::Incr { w, r } => (
                        vec![Act::Read(w, r), Act::WriteInc(w, r)],
                        vec![Some((w, false)), Some((w, true))],
                    ),
                    Step::Collective { .. } => (vec![Act::Barrier], vec![None]),
                    Step::On { child, kind } if kind.blocking() => {
                        (vec![Act::Start(child), Act::JoinT(child)], vec![None, None])
                    }
                    Step::On { child, .. } | Step::Begin { child } => {
                        (vec![Act::Start(child)], vec![None])
                    }
                    Step::Join { child } => (vec![Act::JoinT(child)], vec![None]),
                    Step::Barrier => (vec![Act::Barrier], vec![None]),
                };
                a.extend(act);
                pl.extend(touch);
            }
            acts.push(a);
            plain.push(pl);
        }
        Oracle { p, acts, plain }
    }

    fn done(&self, s: &State, t: usize) -> bool {
        s.pc[t] as usize >= self.acts[t].len()
    }

    /// Whether thread `t` may take its next act (barriers are joint: see `run`).
    fn enabled(&self, s: &State, t: usize) -> bool {
        if !s.started[t] || self.done(s, t) {
            return false;
        }
        match self.acts[t][s.pc[t] as usize] {
            Act::Await(w, v) => s.mem[w as usize] == v,
            Act::Lock(l, _) => s.mem[l as usize] == 0,
            Act::JoinT(c) => s.started[c as usize] && self.done(s, c as usize),
            Act::Barrier => false,
            _ => true,
        }
    }

    fn apply(&self, s: &mut State, t: usize) {
        match self.acts[t][s.pc[t] as usize] {
            Act::Write(w, v) => s.mem[w as usize] = v,
            Act::Read(w, r) => s.regs[r as usize] = s.mem[w as usize],
            Act::FetchAdd(w, r) => {
                s.regs[r as usize] = s.mem[w as usize];
                s.mem[w as usize] += 1;
            }
            Act::Add(w) => s.mem[w as usize] += 1,
            Act::Cas(w, e, n, r) => {
                let old = s.mem[w as usize];
                s.regs[r as usize] = old;
                if old == e {
                    s.mem[w as usize] = n;
                }
            }
            Act::ReadIs(w, v, r) => {
                s.regs[r as usize] = if s.mem[w as usize] == v { v } else { 0 };
            }
            Act::WriteInc(w, r) => s.mem[w as usize] = s.regs[r as usize] + 1,
            // A lock word is 0 when free and the holder + 1 while held: the
            // final outcome shows 0 for it, as the runner reports a free one.
            Act::Lock(l, t) => s.mem[l as usize] = t + 1,
            Act::Unlock(l) => s.mem[l as usize] = 0,
            Act::Start(c) => s.started[c as usize] = true,
            Act::Await(..) | Act::JoinT(_) | Act::Barrier | Act::Nop => {}
        }
        s.pc[t] += 1;
    }

    /// The barrier participants, if every one is at a barrier now.
    fn barrier_ready(&self, s: &State) -> Option<Vec<usize>> {
        let with: Vec<usize> = (0..self.acts.len())
            .filter(|&t| self.acts[t].contains(&Act::Barrier))
            .collect();
        if with.is_empty() {
            return None;
        }
        let all_there = with.iter().all(|&t| {
            s.started[t] && !self.done(s, t) && self.acts[t][s.pc[t] as usize] == Act::Barrier
        });
        all_there.then_some(with)
    }

    fn run(&self) -> Result<BTreeSet<String>, String> {
        let n = self.p.threads.len();
        let top = self.p.top_level();
        let start = State {
            pc: vec![0; n],
            started: (0..n as u8).map(|t| top.contains(&t)).collect(),
            mem: vec![0; self.p.words.len()],
            regs: vec![0; self.p.regs as usize],
        };
        let mut seen: HashSet<State> = HashSet::new();
        let mut stack = vec![start];
        let mut out = BTreeSet::new();
        while let Some(s) = stack.pop() {
            if !seen.insert(s.clone()) {
                continue;
            }
            let enabled: Vec<usize> = (0..n).filter(|&t| self.enabled(&s, t)).collect();
            self.check_race(&s, &enabled)?;
            let barrier = self.barrier_ready(&s);
            if enabled.is_empty() && barrier.is_none() {
                if (0..n).all(|t| s.started[t] && self.done(&s, t)) {
                    out.insert(self.p.outcome(&s.mem, &s.regs));
                    continue;
                }
                return Err(format!(
                    "deadlock: pcs {:?}, started {:?}, memory {:?}",
                    s.pc, s.started, s.mem
                ));
            }
            for t in enabled {
                let mut next = s.clone();
                self.apply(&mut next, t);
                stack.push(next);
            }
            if let Some(all) = barrier {
                let mut next = s.clone();
                for t in all {
                    self.apply(&mut next, t);
                }
                stack.push(next);
            }
        }
        Ok(out)
    }

    /// A data race: two threads could do conflicting plain accesses next.
    fn check_race(&self, s: &State, enabled: &[usize]) -> Result<(), String> {
        for (i, &a) in enabled.iter().enumerate() {
            let Some((wa, xa)) = self.plain[a][s.pc[a] as usize] else {
                continue;
            };
            for &b in &enabled[i + 1..] {
                if let Some((wb, xb)) = self.plain[b][s.pc[b] as usize] {
                    if wa == wb && (xa || xb) {
                        return Err(format!("data race on w{wa} between T{a} and T{b}"));
                    }
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// The generator

/// Which locale a word lives on, seen from the thread that acts on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Acting,
    Peer,
    Third,
}

const PLACES: [Place; 3] = [Place::Acting, Place::Peer, Place::Third];

fn home(p: Place, acting: u8, peer: u8, third: u8) -> u8 {
    match p {
        Place::Acting => acting,
        Place::Peer => peer,
        Place::Third => third,
    }
}

/// Builds one program: words first, then threads.
struct B {
    words: Vec<Word>,
    threads: Vec<Thread>,
    regs: u8,
    handles: u8,
}

impl B {
    fn new() -> B {
        B {
            words: Vec::new(),
            threads: Vec::new(),
            regs: 0,
            handles: 0,
        }
    }
    fn word(&mut self, home: u8, atomic: bool) -> u8 {
        self.word_in(home, atomic, Mem::Heap)
    }
    fn word_in(&mut self, home: u8, atomic: bool, mem: Mem) -> u8 {
        self.words.push(Word { home, atomic, mem });
        self.words.len() as u8 - 1
    }
    fn reg(&mut self) -> u8 {
        self.regs += 1;
        self.regs - 1
    }
    fn handle(&mut self) -> u8 {
        self.handles += 1;
        self.handles - 1
    }
    fn thread(&mut self, locale: u8, kind: ThreadKind) -> u8 {
        self.threads.push(Thread {
            locale,
            kind,
            steps: Vec::new(),
        });
        self.threads.len() as u8 - 1
    }
    fn push(&mut self, t: u8, s: Step) {
        self.threads[t as usize].steps.push(s);
    }
    fn build(self, family: &'static str, size: Size, unbound_cell: bool) -> Program {
        Program {
            family,
            words: self.words,
            threads: self.threads,
            size,
            regs: self.regs,
            unbound_cell,
        }
    }
}

/// How a writer stores a plain data word.
#[derive(Clone, Copy, Debug)]
enum DataWrite {
    Put,
    PutNb,
    /// `put_nb`, waited only after the release.
    PutNbLate,
}

/// How a reader loads a data word.
#[derive(Clone, Copy, Debug)]
enum DataRead {
    Get,
    GetNb,
    /// `on(home) { r = get(d) }` (a blocking on-statement to the word's home).
    OnHome,
}

/// How the flag is set.
#[derive(Clone, Copy, Debug)]
enum Release {
    Write,
    FetchAdd,
    Cas,
    Add,
}

fn write_data(b: &mut B, t: u8, w: u8, how: DataWrite) -> Option<u8> {
    match how {
        DataWrite::Put => {
            b.push(t, Step::Put { w, v: 1, nb: None });
            None
        }
        DataWrite::PutNb => {
            let h = b.handle();
            b.push(
                t,
                Step::Put {
                    w,
                    v: 1,
                    nb: Some(h),
                },
            );
            b.push(t, Step::Wait { h });
            None
        }
        DataWrite::PutNbLate => {
            let h = b.handle();
            b.push(
                t,
                Step::Put {
                    w,
                    v: 1,
                    nb: Some(h),
                },
            );
            Some(h)
        }
    }
}

fn release(b: &mut B, t: u8, f: u8, how: Release) {
    match how {
        Release::Write => b.push(t, Step::AWrite { w: f, v: 1 }),
        Release::FetchAdd => {
            let r = b.reg();
            b.push(t, Step::AFetchAdd { w: f, r });
        }
        Release::Cas => {
            let r = b.reg();
            b.push(
                t,
                Step::ACas {
                    w: f,
                    expect: 0,
                    new: 1,
                    r,
                },
            );
        }
        Release::Add => b.push(t, Step::AAdd { w: f }),
    }
}

fn read_data(b: &mut B, t: u8, w: u8, how: DataRead) {
    let r = b.reg();
    match how {
        DataRead::Get => b.push(t, Step::Get { w, r, nb: None }),
        DataRead::GetNb => {
            let h = b.handle();
            b.push(t, Step::Get { w, r, nb: Some(h) });
            b.push(t, Step::Wait { h });
        }
        DataRead::OnHome => {
            let home = b.words[w as usize].home;
            let c = b.thread(home, ThreadKind::Child);
            b.push(c, Step::Get { w, r, nb: None });
            b.push(
                t,
                Step::On {
                    child: c,
                    kind: OnKind::Blocking,
                },
            );
        }
    }
}

/// Every generated program, in a fixed order (the same on every locale).
pub fn generate() -> Vec<Program> {
    let mut out = Vec::new();
    for size in [Size::Eight, Size::InjectPlusOne] {
        mp(&mut out, size);
        task_create(&mut out, size);
        task_end(&mut out, size);
        war(&mut out, size);
        barrier(&mut out, size);
        raw_waw(&mut out, size);
    }
    // Transfers cut into chunks (in the cells that lower max_msg_size).
    mp(&mut out, Size::OverMaxMsg);
    war(&mut out, Size::OverMaxMsg);
    raw_waw(&mut out, Size::OverMaxMsg);
    sb(&mut out);
    unbound_amo(&mut out);
    amo_window(&mut out);
    unordered_add(&mut out);
    coherence_amo(&mut out);
    sb_local(&mut out);
    mp_static(&mut out);
    fence(&mut out);
    signal(&mut out);
    nested(&mut out);
    lock(&mut out);
    collective(&mut out);
    out
}

/// MP: T0 stores data, then sets a flag with an atomic; T1 waits for the
/// flag, then reads the data. Every placement of data and flag, every way
/// to write, release, read; the writer as a task, the main thread or a
/// foreign thread.
fn mp(out: &mut Vec<Program>, size: Size) {
    let (l0, l1, l2) = (0u8, 1u8, 2u8);
    // Transfers over max_msg_size: the ways that matter for chunks only.
    let chunked = size == Size::OverMaxMsg;
    for dp in PLACES {
        for fp in PLACES {
            for (k, (wr, rel, rd)) in [
                (DataWrite::Put, Release::Write, DataRead::Get),
                (DataWrite::PutNb, Release::FetchAdd, DataRead::GetNb),
                (DataWrite::PutNbLate, Release::Cas, DataRead::OnHome),
                (DataWrite::Put, Release::Add, DataRead::GetNb),
                (DataWrite::PutNbLate, Release::Write, DataRead::Get),
                (DataWrite::PutNb, Release::Write, DataRead::OnHome),
            ]
            .into_iter()
            .enumerate()
            {
                if chunked && !matches!(k, 0 | 2 | 4) {
                    continue;
                }
                let kinds: &[ThreadKind] = if k == 0 && !chunked {
                    &[ThreadKind::Task, ThreadKind::Main, ThreadKind::Foreign]
                } else {
                    &[ThreadKind::Task]
                };
                // The reader waits with an atomic read, and where the flag
                // is on its own locale also with the point-to-point calls.
                let mut awaits = vec![None];
                if fp == Place::Peer && !chunked && matches!(k, 0 | 3) {
                    awaits.extend([Some(false), Some(true)]);
                }
                for &kind in kinds {
                    for &local in &awaits {
                        if local.is_some() && kind != ThreadKind::Task {
                            continue;
                        }
                        let mut b = B::new();
                        let d = b.word(home(dp, l0, l1, l2), false);
                        let f = b.word(home(fp, l0, l1, l2), true);
                        let t0 = b.thread(l0, kind);
                        let t1 = b.thread(l1, ThreadKind::Task);
                        let late = write_data(&mut b, t0, d, wr);
                        release(&mut b, t0, f, rel);
                        if let Some(h) = late {
                            b.push(t0, Step::Wait { h });
                        }
                        b.push(t1, await_step(f, 1, local));
                        read_data(&mut b, t1, d, rd);
                        out.push(b.build("MP", size, false));
                    }
                }
            }
        }
    }
}

/// Waits for `w == v`: with an atomic read (`None`), or with the
/// point-to-point calls (`Some(poll)`; the word is the thread's own).
fn await_step(w: u8, v: u8, local: Option<bool>) -> Step {
    match local {
        None => Step::Await { w, v },
        Some(poll) => Step::AwaitLocal { w, v, poll },
    }
}

/// TASK-CREATE: T0 stores, then starts a child that reads (begin on this
/// locale, on_nb / on_fast_nb to itself, on_nb / on to the peer).
fn task_create(out: &mut Vec<Program>, size: Size) {
    let (l0, l1, l2) = (0u8, 1u8, 2u8);
    for dp in PLACES {
        for (wr, start) in [
            (DataWrite::Put, "begin"),
            (DataWrite::PutNb, "begin"),
            (DataWrite::Put, "on_nb_self"),
            (DataWrite::PutNbLate, "on_nb_self"),
            (DataWrite::Put, "on_fast_nb_self"),
            (DataWrite::Put, "on_nb_peer"),
            (DataWrite::PutNbLate, "on_peer"),
        ] {
            // A fast body runs in the handler: local steps only.
            if start == "on_fast_nb_self" && dp != Place::Acting {
                continue;
            }
            let mut b = B::new();
            let d = b.word(home(dp, l0, l1, l2), false);
            let t0 = b.thread(l0, ThreadKind::Task);
            let late = write_data(&mut b, t0, d, wr);
            let at = if start.ends_with("peer") { l1 } else { l0 };
            let c = b.thread(at, ThreadKind::Child);
            let r = b.reg();
            b.push(c, Step::Get { w: d, r, nb: None });
            match start {
                "begin" => {
                    b.push(t0, Step::Begin { child: c });
                    b.push(t0, Step::Join { child: c });
                }
                "on_nb_self" | "on_nb_peer" => b.push(
                    t0,
                    Step::On {
                        child: c,
                        kind: OnKind::Nb,
                    },
                ),
                "on_fast_nb_self" => b.push(
                    t0,
                    Step::On {
                        child: c,
                        kind: OnKind::FastNb,
                    },
                ),
                _ => b.push(
                    t0,
                    Step::On {
                        child: c,
                        kind: OnKind::Blocking,
                    },
                ),
            }
            if let Some(h) = late {
                b.push(t0, Step::Wait { h });
            }
            out.push(b.build("TASK-CREATE", size, false));
        }
    }
}

/// TASK-END: children on three locales store (PUT or atomic add); the
/// parent joins them and reads.
fn task_end(out: &mut Vec<Program>, size: Size) {
    for ap in PLACES {
        for (kind, amo) in [
            (OnKind::Blocking, false),
            (OnKind::Blocking, true),
            (OnKind::Fast, false),
        ] {
            let mut b = B::new();
            let t0 = b.thread(0, ThreadKind::Task);
            let mut slots = Vec::new();
            for child_locale in [1u8, 2] {
                // Place seen from the child: on itself, on the parent's
                // locale (its peer), on the other child's.
                let other = if child_locale == 1 { 2 } else { 1 };
                let h = home(ap, child_locale, 0, other);
                // A fast body runs in the handler: local steps only.
                if kind == OnKind::Fast && h != child_locale {
                    continue;
                }
                let a = b.word(h, amo);
                let c = b.thread(child_locale, ThreadKind::Child);
                if amo {
                    b.push(c, Step::AAdd { w: a });
                } else {
                    b.push(
                        c,
                        Step::Put {
                            w: a,
                            v: child_locale,
                            nb: None,
                        },
                    );
                }
                b.push(t0, Step::On { child: c, kind });
                slots.push(a);
            }
            if slots.is_empty() {
                continue;
            }
            for a in slots {
                let r = b.reg();
                if amo {
                    b.push(t0, Step::ARead { w: a, r });
                } else {
                    b.push(t0, Step::Get { w: a, r, nb: None });
                }
            }
            out.push(b.build("TASK-END", size, false));
        }
        // A begin on this locale storing remotely, joined, then read.
        let mut b = B::new();
        let t0 = b.thread(0, ThreadKind::Task);
        let a = b.word(home(ap, 0, 1, 2), false);
        let c = b.thread(0, ThreadKind::Child);
        b.push(
            c,
            Step::Put {
                w: a,
                v: 1,
                nb: None,
            },
        );
        b.push(t0, Step::Begin { child: c });
        b.push(t0, Step::Join { child: c });
        let r = b.reg();
        b.push(t0, Step::Get { w: a, r, nb: None });
        out.push(b.build("TASK-END", size, false));
    }
}

/// WAR: a non-blocking GET, then a write of the same word before the wait
/// (by the same task, by its on-statement, or by another task it releases).
fn war(out: &mut Vec<Program>, size: Size) {
    for xp in [Place::Peer, Place::Third, Place::Acting] {
        for variant in [
            "put",
            "on_put",
            "on_nb_put",
            "release",
            "release_acting",
            "release_third",
            "release_local",
        ] {
            let mut b = B::new();
            let x = b.word(home(xp, 0, 1, 2), false);
            let t0 = b.thread(0, ThreadKind::Task);
            let r = b.reg();
            let h = b.handle();
            b.push(
                t0,
                Step::Get {
                    w: x,
                    r,
                    nb: Some(h),
                },
            );
            match variant {
                "put" => b.push(
                    t0,
                    Step::Put {
                        w: x,
                        v: 2,
                        nb: None,
                    },
                ),
                "on_put" => {
                    let c = b.thread(b.words[x as usize].home, ThreadKind::Child);
                    b.push(
                        c,
                        Step::Put {
                            w: x,
                            v: 2,
                            nb: None,
                        },
                    );
                    b.push(
                        t0,
                        Step::On {
                            child: c,
                            kind: OnKind::Blocking,
                        },
                    );
                }
                "on_nb_put" => {
                    // The release is the on-statement itself (an AM).
                    let c = b.thread(b.words[x as usize].home, ThreadKind::Child);
                    b.push(
                        c,
                        Step::Put {
                            w: x,
                            v: 2,
                            nb: None,
                        },
                    );
                    b.push(
                        t0,
                        Step::On {
                            child: c,
                            kind: OnKind::Nb,
                        },
                    );
                }
                _ => {
                    // The flag on the peer (where the released task runs),
                    // on the acting locale, or on a third one (a mapped
                    // peer of the acting locale in the mixed-host cells):
                    // the CPU route's atomics must wait the GET out too.
                    let fh = match variant {
                        "release_acting" => 0,
                        "release_third" => 2,
                        _ => 1,
                    };
                    let f = b.word(fh, true);
                    let t1 = b.thread(1, ThreadKind::Task);
                    b.push(t0, Step::AWrite { w: f, v: 1 });
                    let local = (variant == "release_local").then_some(false);
                    b.push(t1, await_step(f, 1, local));
                    b.push(
                        t1,
                        Step::Put {
                            w: x,
                            v: 2,
                            nb: None,
                        },
                    );
                }
            }
            b.push(t0, Step::Wait { h });
            out.push(b.build("WAR", size, false));
        }
    }
}

/// BARRIER: a store before the barrier is seen after it; the barrier is
/// entered from a task (it must progress its own context while it waits),
/// from the main thread, or a mix.
fn barrier(out: &mut Vec<Program>, size: Size) {
    for dp in PLACES {
        for (k0, k1) in [
            (ThreadKind::Task, ThreadKind::Task),
            (ThreadKind::Main, ThreadKind::Task),
            (ThreadKind::Task, ThreadKind::Main),
        ] {
            let mut b = B::new();
            let d = b.word(home(dp, 0, 1, 2), false);
            let t0 = b.thread(0, k0);
            let t1 = b.thread(1, k1);
            b.push(
                t0,
                Step::Put {
                    w: d,
                    v: 1,
                    nb: None,
                },
            );
            b.push(t0, Step::Barrier);
            b.push(t1, Step::Barrier);
            let r = b.reg();
            b.push(t1, Step::Get { w: d, r, nb: None });
            for l in 2..LOCALES {
                let t = b.thread(l, ThreadKind::Task);
                b.push(t, Step::Barrier);
            }
            out.push(b.build("BARRIER", size, false));
        }
    }
}

/// RAW and WAW through the public API, blocking and non-blocking, on every
/// placement (one task; the final value is checked too).
fn raw_waw(out: &mut Vec<Program>, size: Size) {
    for xp in PLACES {
        for nb in [false, true] {
            let mut b = B::new();
            let x = b.word(home(xp, 0, 1, 2), false);
            let t0 = b.thread(0, ThreadKind::Task);
            let h1 = nb.then(|| b.handle());
            let h2 = nb.then(|| b.handle());
            b.push(t0, Step::Put { w: x, v: 1, nb: h1 });
            b.push(t0, Step::Put { w: x, v: 2, nb: h2 });
            let r = b.reg();
            b.push(t0, Step::Get { w: x, r, nb: None });
            for h in [h1, h2].into_iter().flatten() {
                b.push(t0, Step::Wait { h });
            }
            out.push(b.build("RAW-WAW", size, false));
        }
    }
}

/// SB with atomics: each task writes one atomic and reads the other; every
/// placement of the two words over four locales, read by read or fetch-add.
fn sb(out: &mut Vec<Program>) {
    for xh in 0..LOCALES {
        for yh in 0..LOCALES {
            for fetch in [false, true] {
                let mut b = B::new();
                let x = b.word(xh, true);
                let y = b.word(yh, true);
                let t0 = b.thread(0, ThreadKind::Task);
                let t1 = b.thread(1, ThreadKind::Task);
                for (t, mine, other) in [(t0, x, y), (t1, y, x)] {
                    b.push(t, Step::AWrite { w: mine, v: 1 });
                    let r = b.reg();
                    if fetch {
                        b.push(t, Step::AFetchAdd { w: other, r });
                    } else {
                        b.push(t, Step::ARead { w: other, r });
                    }
                }
                out.push(b.build("SB", Size::Eight, false));
            }
        }
    }
}

/// Two non-fetching atomics of one thread (data, then flag) that a reader
/// orders: from threads without a context of their own, so they may leave
/// on different shared contexts (run in the unbound cells).
fn unbound_amo(out: &mut Vec<Program>) {
    for kind in [ThreadKind::Main, ThreadKind::Foreign, ThreadKind::Task] {
        for (dh, fh) in [(1u8, 1u8), (2, 1), (1, 2)] {
            let mut b = B::new();
            let d = b.word(dh, true);
            let f = b.word(fh, true);
            let t0 = b.thread(0, kind);
            let t1 = b.thread(1, ThreadKind::Task);
            b.push(t0, Step::AAdd { w: d });
            b.push(t0, Step::AWrite { w: f, v: 1 });
            b.push(t1, Step::Await { w: f, v: 1 });
            let r = b.reg();
            b.push(t1, Step::ARead { w: d, r });
            out.push(b.build("MP-AMO", Size::Eight, true));
        }
    }
}

/// The add window's shortcuts (message-order forces only the *other*
/// targets before an AMO, and a fetching AMO's result puts the earlier PUTs
/// to its target behind it): from a bound task, two non-fetching adds to a
/// data word then an atomic flag write, the flag on the data's locale or
/// another (no proof between the adds and the flag at one target, a proof
/// before a flag elsewhere); and a PUT, a fetch-add at the PUT's target
/// (RAW: the PUT is visible once it returns, so nothing is forced for it
/// later), then a flag on another locale.
fn amo_window(out: &mut Vec<Program>) {
    for (dh, fh) in [(1u8, 1u8), (1, 2)] {
        let mut b = B::new();
        let d = b.word(dh, true);
        let f = b.word(fh, true);
        let t0 = b.thread(0, ThreadKind::Task);
        let t1 = b.thread(1, ThreadKind::Task);
        b.push(t0, Step::AAdd { w: d });
        b.push(t0, Step::AAdd { w: d });
        b.push(t0, Step::AWrite { w: f, v: 1 });
        b.push(t1, Step::Await { w: f, v: 1 });
        let r = b.reg();
        b.push(t1, Step::ARead { w: d, r });
        out.push(b.build("AMO-WINDOW", Size::Eight, false));
    }
    for reader in [1u8, 2] {
        let mut b = B::new();
        let d = b.word(1, false);
        let x = b.word(1, true);
        let f = b.word(2, true);
        let t0 = b.thread(0, ThreadKind::Task);
        let t1 = b.thread(reader, ThreadKind::Task);
        write_data(&mut b, t0, d, DataWrite::Put);
        let r = b.reg();
        b.push(t0, Step::AFetchAdd { w: x, r });
        b.push(t0, Step::AWrite { w: f, v: 1 });
        b.push(t1, Step::Await { w: f, v: 1 });
        read_data(&mut b, t1, d, DataRead::Get);
        out.push(b.build("AMO-WINDOW", Size::Eight, false));
    }
}

/// Unordered adds (flushed in batches that may be in flight together):
/// from a bound task, `add_unordered` to two words, made visible by the
/// task's `fence` or by its end (a child task joined by its parent), then
/// an atomic flag; the reader waits for the flag and reads both words.
/// Words on one locale or two, the flag at the words' locale or another.
fn unordered_add(out: &mut Vec<Program>) {
    for (ah, bh, fh) in [(1u8, 1u8, 1u8), (1, 2, 1), (1, 1, 2)] {
        for by_task_end in [false, true] {
            let mut b = B::new();
            let a = b.word(ah, true);
            let w2 = b.word(bh, true);
            let f = b.word(fh, true);
            let t0 = b.thread(0, ThreadKind::Task);
            let t1 = b.thread(3, ThreadKind::Task);
            if by_task_end {
                let c = b.thread(0, ThreadKind::Child);
                b.push(c, Step::AAddUnordered { w: a });
                b.push(c, Step::AAddUnordered { w: w2 });
                b.push(t0, Step::Begin { child: c });
                b.push(t0, Step::Join { child: c });
            } else {
                b.push(t0, Step::AAddUnordered { w: a });
                b.push(t0, Step::AAddUnordered { w: w2 });
                b.push(t0, Step::Fence);
            }
            b.push(t0, Step::AWrite { w: f, v: 1 });
            b.push(t1, Step::Await { w: f, v: 1 });
            let r = b.reg();
            b.push(t1, Step::ARead { w: a, r });
            let r = b.reg();
            b.push(t1, Step::ARead { w: w2, r });
            out.push(b.build("UNORDERED-ADD", Size::Eight, false));
        }
    }
}

/// Coherence of atomics: two writes by one thread, then a read by it and the
/// final value; plus an atomic on the acting locale after a remote store.
fn coherence_amo(out: &mut Vec<Program>) {
    for xh in 0..3u8 {
        let mut b = B::new();
        let x = b.word(xh, true);
        let t0 = b.thread(0, ThreadKind::Task);
        b.push(t0, Step::AWrite { w: x, v: 1 });
        b.push(t0, Step::AAdd { w: x });
        let r = b.reg();
        b.push(t0, Step::ARead { w: x, r });
        out.push(b.build("COHERENCE", Size::Eight, false));
    }
}

/// SB through the point-to-point reads: each task writes a word of the
/// other's locale with an atomic, then reads a word of its own locale with
/// `test_local`; both reading the old value is forbidden (they are SC
/// reads). The second task on the peer or on a third locale (a mapped peer
/// of the first in the mixed-host cells); the first as a task or the main
/// thread.
fn sb_local(out: &mut Vec<Program>) {
    for t1_locale in [1u8, 2] {
        for kind in [ThreadKind::Task, ThreadKind::Main] {
            for add in [false, true] {
                let mut b = B::new();
                let x = b.word(t1_locale, true);
                let y = b.word(0, true);
                let t0 = b.thread(0, kind);
                let t1 = b.thread(t1_locale, ThreadKind::Task);
                for (t, theirs, mine) in [(t0, x, y), (t1, y, x)] {
                    b.push(
                        t,
                        if add {
                            Step::AAdd { w: theirs }
                        } else {
                            Step::AWrite { w: theirs, v: 1 }
                        },
                    );
                    let r = b.reg();
                    b.push(t, Step::ReadLocal { w: mine, v: 1, r });
                }
                out.push(b.build("SB-LOCAL", Size::Eight, false));
            }
        }
    }
}

/// MP with static data: the data, the flag or both in the executable's
/// static data (mapped by co-located locales, or reached through the
/// provider while their heaps are mapped: `PGAS_LOCAL_PATH=mapped-heap`).
fn mp_static(out: &mut Vec<Program>) {
    let (l0, l1, l2) = (0u8, 1u8, 2u8);
    for (dm, fm) in [
        (Mem::Static, Mem::Heap),
        (Mem::Heap, Mem::Static),
        (Mem::Static, Mem::Static),
    ] {
        for dp in [Place::Peer, Place::Third] {
            for fp in [Place::Acting, Place::Third] {
                for (wr, rel, rd) in [
                    (DataWrite::Put, Release::Write, DataRead::Get),
                    (DataWrite::PutNbLate, Release::Add, DataRead::GetNb),
                ] {
                    let mut b = B::new();
                    let d = b.word_in(home(dp, l0, l1, l2), false, dm);
                    let f = b.word_in(home(fp, l0, l1, l2), true, fm);
                    let t0 = b.thread(l0, ThreadKind::Task);
                    let t1 = b.thread(l1, ThreadKind::Task);
                    let late = write_data(&mut b, t0, d, wr);
                    release(&mut b, t0, f, rel);
                    if let Some(h) = late {
                        b.push(t0, Step::Wait { h });
                    }
                    b.push(t1, Step::Await { w: f, v: 1 });
                    read_data(&mut b, t1, d, rd);
                    out.push(b.build("MP-STATIC", Size::Eight, false));
                }
            }
        }
    }
}

/// FENCE: data PUT, `fence`, flag PUT to the same locale (`shmem_put;
/// shmem_fence; shmem_p`); the reader awaits the flag (atomic read, or the
/// point-to-point wait where the flag is its own) and reads the data. The
/// locale is the peer or a third one (a mapped peer in the mixed-host
/// cells), data and flag on the heap or in static data.
fn fence(out: &mut Vec<Program>) {
    for xh in [1u8, 2] {
        for (dm, fm) in [
            (Mem::Heap, Mem::Heap),
            (Mem::Static, Mem::Heap),
            (Mem::Heap, Mem::Static),
            (Mem::Static, Mem::Static),
        ] {
            for local_reader in [false, true] {
                let mut b = B::new();
                let d = b.word_in(xh, false, dm);
                let f = b.word_in(xh, true, fm);
                let t0 = b.thread(0, ThreadKind::Task);
                let reader = if local_reader { xh } else { 3 };
                let t1 = b.thread(reader, ThreadKind::Task);
                b.push(
                    t0,
                    Step::Put {
                        w: d,
                        v: 1,
                        nb: None,
                    },
                );
                b.push(t0, Step::Fence);
                b.push(t0, Step::PutFlag { w: f, v: 1 });
                b.push(t1, await_step(f, 1, local_reader.then_some(false)));
                let r = b.reg();
                b.push(t1, Step::Get { w: d, r, nb: None });
                out.push(b.build("FENCE", Size::Eight, false));
            }
        }
    }
}

/// SIGNAL: `put_with_signal`, then the reader awaits the signal (atomic
/// read, or the point-to-point wait where it is its own) and reads the data.
fn signal(out: &mut Vec<Program>) {
    let (l0, l1, l2) = (0u8, 1u8, 2u8);
    for (dp, sp, dm) in [
        (Place::Peer, Place::Peer, Mem::Heap),
        (Place::Third, Place::Third, Mem::Heap),
        (Place::Third, Place::Peer, Mem::Heap),
        (Place::Peer, Place::Acting, Mem::Heap),
        (Place::Third, Place::Third, Mem::Static),
    ] {
        for local in [false, true] {
            if local && sp != Place::Peer {
                continue;
            }
            let mut b = B::new();
            let d = b.word_in(home(dp, l0, l1, l2), false, dm);
            let sig = b.word(home(sp, l0, l1, l2), true);
            let t0 = b.thread(l0, ThreadKind::Task);
            let t1 = b.thread(l1, ThreadKind::Task);
            b.push(t0, Step::PutSignal { w: d, v: 1, sig });
            b.push(t1, await_step(sig, 1, local.then_some(false)));
            let r = b.reg();
            b.push(t1, Step::Get { w: d, r, nb: None });
            out.push(b.build("SIGNAL", Size::Eight, false));
        }
    }
}

/// NESTED: a task whose store waits for its own postponed atomic (a
/// non-fetching AMO via AM to the same locale) and runs another task
/// meanwhile (help-while-waiting, one worker), whose end is a boundary of
/// the same context; then it releases a reader with an atomic on its own
/// locale or a mapped peer's (the CPU route). The reader must see the store
/// and the atomic. Meaningful with `PGAS_NUM_WORKERS=1` and CPU-route
/// atomics (`PGAS_AMO_VIA_AM=1`, or the mixed-host cells).
fn nested(out: &mut Vec<Program>) {
    for (dh, fh) in [(1u8, 0u8), (1, 2), (2, 0)] {
        for helper_stores in [false, true] {
            let mut b = B::new();
            let a = b.word(dh, true);
            let d = b.word(dh, false);
            let f = b.word(fh, true);
            let e = b.word(0, false);
            let t0 = b.thread(0, ThreadKind::Task);
            let t2 = b.thread(0, ThreadKind::Child);
            let t1 = b.thread(3, ThreadKind::Task);
            // The begin first: its task-create boundary would settle the
            // add; queued behind the running task, the child is what the
            // PUT's settle runs while it waits (one worker).
            b.push(t0, Step::Begin { child: t2 });
            b.push(t0, Step::AAdd { w: a });
            b.push(
                t0,
                Step::Put {
                    w: d,
                    v: 1,
                    nb: None,
                },
            );
            b.push(t0, Step::AWrite { w: f, v: 1 });
            b.push(t0, Step::Join { child: t2 });
            if helper_stores {
                b.push(
                    t2,
                    Step::Put {
                        w: e,
                        v: 1,
                        nb: None,
                    },
                );
            } else {
                let r = b.reg();
                b.push(t2, Step::Get { w: e, r, nb: None });
            }
            b.push(t1, Step::Await { w: f, v: 1 });
            let r = b.reg();
            b.push(t1, Step::Get { w: d, r, nb: None });
            let r = b.reg();
            b.push(t1, Step::ARead { w: a, r });
            out.push(b.build("NESTED", Size::Eight, false));
        }
    }
}

/// LOCK: three tasks on three locales increment a plain word under an MCS
/// lock (the lock word on one of them or a fourth, the word on the peer or
/// a third locale): mutual exclusion and the data's visibility from holder
/// to holder.
fn lock(out: &mut Vec<Program>) {
    for lh in [0u8, 1, 3] {
        for xh in [1u8, 2] {
            let mut b = B::new();
            let l = b.word_in(lh, true, Mem::Lock);
            let x = b.word(xh, false);
            for at in [0u8, 1, 2] {
                let t = b.thread(at, ThreadKind::Task);
                b.push(t, Step::Lock { l });
                let r = b.reg();
                b.push(t, Step::Incr { w: x, r });
                b.push(t, Step::Unlock { l });
            }
            out.push(b.build("LOCK", Size::Eight, false));
        }
    }
}

/// COLLECTIVE: a store before a collective of the world team is seen after
/// it (every collective is a boundary), with the collective's own result
/// checked by the runner.
fn collective(out: &mut Vec<Program>) {
    for kind in Coll::ALL {
        for dh in [1u8, 2] {
            let mut b = B::new();
            let d = b.word(dh, false);
            let t0 = b.thread(0, ThreadKind::Task);
            b.push(
                t0,
                Step::Put {
                    w: d,
                    v: 1,
                    nb: None,
                },
            );
            b.push(t0, Step::Collective { kind });
            let t1 = b.thread(1, ThreadKind::Task);
            b.push(t1, Step::Collective { kind });
            let r = b.reg();
            b.push(t1, Step::Get { w: d, r, nb: None });
            for l in 2..LOCALES {
                let t = b.thread(l, ThreadKind::Task);
                b.push(t, Step::Collective { kind });
            }
            out.push(b.build("COLLECTIVE", Size::Eight, false));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_generated_program_is_valid_and_has_outcomes() {
        let all = generate();
        assert!(all.len() > 200, "only {} programs", all.len());
        for p in &all {
            let allowed = p.allowed().unwrap_or_else(|e| panic!("{p}: {e}"));
            assert!(!allowed.is_empty(), "{p}");
            for t in &p.threads {
                assert!(t.locale < LOCALES);
            }
        }
    }

    #[test]
    fn mp_forbids_the_stale_read_and_allows_the_rest() {
        let mut b = B::new();
        let d = b.word(2, false);
        let f = b.word(0, true);
        let t0 = b.thread(0, ThreadKind::Task);
        let t1 = b.thread(1, ThreadKind::Task);
        b.push(
            t0,
            Step::Put {
                w: d,
                v: 1,
                nb: None,
            },
        );
        b.push(t0, Step::AWrite { w: f, v: 1 });
        b.push(t1, Step::Await { w: f, v: 1 });
        let r = b.reg();
        b.push(t1, Step::Get { w: d, r, nb: None });
        let p = b.build("MP", Size::Eight, false);
        assert_eq!(p.allowed().unwrap(), set(&["r0=1 w0=1 w1=1"]));
    }

    #[test]
    fn sb_forbids_both_zero() {
        let all = generate();
        let p = all
            .iter()
            .find(|p| p.family == "SB" && p.words[0].home == 2 && p.words[1].home == 3)
            .expect("SB split");
        let allowed = p.allowed().unwrap();
        assert!(
            !allowed.iter().any(|o| o.starts_with("r0=0 r1=0")),
            "{allowed:?}"
        );
        assert_eq!(allowed.len(), 3, "{allowed:?}");
    }

    #[test]
    fn a_racy_program_is_rejected() {
        let mut b = B::new();
        let d = b.word(1, false);
        let t0 = b.thread(0, ThreadKind::Task);
        let t1 = b.thread(1, ThreadKind::Task);
        b.push(
            t0,
            Step::Put {
                w: d,
                v: 1,
                nb: None,
            },
        );
        let r = b.reg();
        b.push(t1, Step::Get { w: d, r, nb: None });
        let e = b.build("X", Size::Eight, false).allowed().unwrap_err();
        assert!(e.contains("data race on w0"), "{e}");
    }

    #[test]
    fn war_and_barrier_and_joins_are_ordered() {
        for p in generate()
            .iter()
            .filter(|p| matches!(p.family, "WAR" | "BARRIER" | "TASK-END" | "TASK-CREATE"))
        {
            assert_eq!(p.allowed().unwrap().len(), 1, "{p}: deterministic under SC");
        }
    }

    #[test]
    fn the_holes_found_in_review_are_among_the_programs() {
        let all = generate();
        let text: Vec<String> = all.iter().map(|p| p.text()).collect();
        let has = |needle: &[&str]| text.iter().any(|t| needle.iter().all(|n| t.contains(n)));
        // 1. local atomic after a remote PUT (flag on the acting locale).
        assert!(has(&["T0@L0 task: put w0@L2=1; w1@L0.write(1)"]));
        // 2. store buffering with the atomics on two other locales.
        assert!(has(&["w0@L2.write(1); r0=w1@L3.read()"]));
        // 3. a non-blocking on-statement to the acting locale.
        assert!(has(&["put w0@L1=1; on_nb L0"]));
        // 4. two non-fetching atomics from an unbound thread.
        assert!(has(&["T0@L0 foreign: w0@L1.add(1); w1@L1.write(1)"]));
        // 5. a non-blocking GET then a PUT of the same word.
        assert!(has(&["r0=get_nb w0@L1 (h0); put w0@L1=2"]));
        // 7. a barrier entered from a task.
        assert!(has(&["T0@L0 task: put w0@L1=1; barrier"]));
    }

    #[test]
    fn the_holes_of_the_fast_paths_are_among_the_programs() {
        let all = generate();
        let text: Vec<String> = all.iter().map(|p| p.text()).collect();
        let has = |needle: &[&str]| text.iter().any(|t| needle.iter().all(|n| t.contains(n)));
        // 1. get_nb, then a release by an atomic on the acting locale or a
        //    third one (a mapped peer in the mixed-host cells).
        assert!(has(&[
            "r0=get_nb w0@L1 (h0); w1@L0.write(1)",
            "put w0@L1=2"
        ]));
        assert!(has(&[
            "r0=get_nb w0@L1 (h0); w1@L2.write(1)",
            "put w0@L1=2"
        ]));
        // 2. a store that settles a postponed AMO while a begun task waits,
        //    then an atomic on the acting locale.
        assert!(has(&[
            "begin {T1}; w0@L1.add(1); put w1@L1=1; w2@L0.write(1)"
        ]));
        // 3. store buffering through test_local.
        assert!(has(&["w0@L1.write(1); r0=test_local w1@L0==1"]));
        // 4. data in static memory, then a fence and a heap flag to one locale.
        assert!(has(&["put w0s@L2=1; fence; put_flag w1@L2=1"]));
        // the point-to-point waits in MP, put-with-signal, locks, collectives.
        assert!(has(&["wait_until_local w1@L1==1"]));
        assert!(has(&["poll test_local w1@L1==1"]));
        assert!(has(&["put_signal w0@L2=1 sig w1@L2"]));
        assert!(has(&["lock w0lock@L3; r0=incr w1@L2; unlock w0lock@L3"]));
        assert!(has(&["alltoall"]));
        assert!(all.iter().any(|p| p.size == Size::OverMaxMsg));
    }

    #[test]
    fn the_new_families_have_the_outcomes_they_should() {
        let all = generate();
        for p in all.iter().filter(|p| p.family == "SB-LOCAL") {
            let allowed = p.allowed().unwrap();
            assert!(
                !allowed.iter().any(|o| o.starts_with("r0=0 r1=0")),
                "{p}: {allowed:?}"
            );
        }
        for p in all
            .iter()
            .filter(|p| matches!(p.family, "FENCE" | "SIGNAL" | "NESTED" | "COLLECTIVE"))
        {
            assert_eq!(p.allowed().unwrap().len(), 1, "{p}: deterministic under SC");
        }
        for p in all.iter().filter(|p| p.family == "LOCK") {
            let allowed = p.allowed().unwrap();
            // Three holders in some order: registers a permutation of
            // 0, 1, 2, the word 3, the lock free.
            assert_eq!(allowed.len(), 6, "{p}: {allowed:?}");
            assert!(
                allowed.iter().all(|o| o.ends_with("w0=0 w1=3")),
                "{allowed:?}"
            );
        }
    }
}
