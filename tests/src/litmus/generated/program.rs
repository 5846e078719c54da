//! The program model of the generated families: words, threads of whole
//! steps, sizes, and their one-line spelling.

use std::collections::HashSet;
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

impl Step {
    /// A blocking `put(w, v)`.
    pub fn put(w: u8, v: u8) -> Step {
        Step::Put { w, v, nb: None }
    }

    /// An on-statement running thread `child`.
    pub fn on(child: u8, kind: OnKind) -> Step {
        Step::On { child, kind }
    }
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
