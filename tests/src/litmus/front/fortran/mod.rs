//! Litmus programs through the coarray ABI: Fortran 2018 coarray programs
//! built with gfortran `-fcoarray=lib` against libpgas_caf (`caf/bin/caf`)
//! and run with `caf/bin/cafrun`.
//!
//! Each program is described once ([`catalogue`]) as one thread of whole
//! steps per image role ([`Step`]: a coindexed put or get, `sync images`,
//! `sync all`, `sync memory`, `event post` / `event wait`, `lock` /
//! `unlock`, `atomic_define` / `atomic_ref`) over named locations. From
//! the description the front end generates the Fortran source ([`emit::emit`])
//! and asks the SC oracle of the other front ends
//! ([`crate::litmus::oracle`]) which outcomes are allowed ([`allowed`]).
//! The program loops its rounds, stamps every value it writes with the
//! round (a value of an earlier round reads as `old`, a buffer whose words
//! differ as `torn`, [`crate::litmus::value`]'s spelling), records each
//! register per round, and after the loop image 1 gathers the records
//! with coindexed reads and prints one line per distinct outcome; [`parse`]
//! reads them back and [`check`] counts them in a
//! [`crate::litmus::tally::Tally`].
//!
//! The eight programs are those of `docs/coarrays.md` ("The litmus
//! programs"): message passing by `sync images`, by events, by a lock,
//! through a third image by `sync images` and by events (causality), with
//! the payload on a third image (by `sync images`, and by `sync memory`
//! and an atomic flag), and store buffering with `sync memory` and
//! atomics. `scripts/caf-litmus` runs them through the example
//! `tests/examples/litmus_caf.rs`.

pub mod emit;

use crate::litmus::oracle::{outcome_of, Final, Op, Program};
use crate::litmus::tally::Tally;
use crate::litmus::value::code_text;
use std::collections::{BTreeMap, BTreeSet};

/// What a location is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A default-kind integer array coarray, its length cycling through
    /// the sizes round by round (1: a single word).
    Data(&'static [usize]),
    /// An `integer(atomic_int_kind)` coarray.
    Atomic,
}

/// A location: its name, the role whose image holds it, its kind.
#[derive(Clone, Copy, Debug)]
pub struct Loc {
    /// Name (Fortran identifier part, oracle location).
    pub name: &'static str,
    /// Role (1-based) of the image that holds it.
    pub owner: usize,
    /// Kind.
    pub kind: Kind,
}

/// One step of a role's thread (roles are 1-based: role `j` is image `j`
/// of the program's images, or of the pair).
#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// Writes the whole data location (the round's size) with the value:
    /// a coindexed put, or an assignment on the owner.
    Put(usize, u64),
    /// Reads the whole data location into a register (a coindexed get, or
    /// a local read on the owner).
    Get(usize, &'static str),
    /// `call atomic_define(loc[owner], value)`.
    AtomicDefine(usize, u64),
    /// `call atomic_ref(reg, loc[owner])`.
    AtomicRef(usize, &'static str),
    /// Spins on `atomic_ref` until the location holds the value.
    AwaitAtomic(usize, u64),
    /// `sync images(role)`.
    SyncImages(usize),
    /// `sync all`.
    SyncAll,
    /// `sync memory`.
    SyncMemory,
    /// `event post(event[role])`.
    Post(&'static str, usize),
    /// `event wait(event)` (the image's own event).
    Wait(&'static str),
    /// `lock(lck[role])`.
    Lock(usize),
    /// `unlock(lck[role])`.
    Unlock(usize),
    /// Inside a lock: gets the single words `a` and `b`, records in the
    /// register whether they are equal (`1`) or not (`torn`), puts `a + 1`
    /// into both (`a` first). The counters are not stamped: image 1
    /// reports every update the final count lacks as `old`.
    Increment2(usize, usize, &'static str),
    /// Computes for a while without calling the library.
    Compute,
}

/// How the roles map to images.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Roles 1..=k are images 1..=k (k = the number of threads); the other
    /// images idle. Needs k images.
    Fixed,
    /// Two roles, repeated over the pairs (1,2), (3,4), ...; an odd last
    /// image idles. Every pair's round is one outcome.
    Pairs,
    /// Every image runs the one thread (locations on the roles' images as
    /// numbered: role 1 is image 1); each image's round is one outcome.
    Every,
}

/// One litmus program.
#[derive(Clone, Debug)]
pub struct FProg {
    /// Name (the program's and the source file's).
    pub name: &'static str,
    /// What it tests (the source's header comment).
    pub about: &'static str,
    /// How roles map to images.
    pub shape: Shape,
    /// Locations.
    pub locs: Vec<Loc>,
    /// One thread per role (role j runs `threads[j - 1]`).
    pub threads: Vec<Vec<Step>>,
    /// Registers whose per-round values make the outcome.
    pub report: Vec<&'static str>,
    /// Whether it runs a quarter of the rounds (it costs more per round).
    pub quarter: bool,
}

impl FProg {
    /// Images the program needs at least.
    pub fn min_images(&self) -> usize {
        match self.shape {
            Shape::Fixed => self.threads.len(),
            Shape::Pairs | Shape::Every => 2,
        }
    }

    /// The rounds it runs when a run asks for `rounds`.
    pub fn rounds(&self, rounds: u64) -> u64 {
        if self.quarter {
            rounds.div_ceil(4)
        } else {
            rounds
        }
    }

    /// The role that writes register `r`.
    pub fn holder(&self, r: &str) -> usize {
        for (j, t) in self.threads.iter().enumerate() {
            for s in t {
                match *s {
                    Step::Get(_, x) | Step::AtomicRef(_, x) | Step::Increment2(_, _, x)
                        if x == r =>
                    {
                        return j + 1
                    }
                    _ => {}
                }
            }
        }
        panic!("{}: register {r} is written by no step", self.name)
    }

    /// The events the program posts or waits on.
    pub fn events(&self) -> BTreeSet<&'static str> {
        self.threads
            .iter()
            .flatten()
            .filter_map(|s| match *s {
                Step::Post(e, _) | Step::Wait(e) => Some(e),
                _ => None,
            })
            .collect()
    }

    /// Whether it takes a lock.
    pub fn locks(&self) -> bool {
        self.threads
            .iter()
            .flatten()
            .any(|s| matches!(s, Step::Lock(_)))
    }
}

fn data(name: &'static str, owner: usize, sizes: &'static [usize]) -> Loc {
    Loc {
        name,
        owner,
        kind: Kind::Data(sizes),
    }
}

fn atomic(name: &'static str, owner: usize) -> Loc {
    Loc {
        name,
        owner,
        kind: Kind::Atomic,
    }
}

/// Four words: the payload of the two-image programs.
const FOUR: &[usize] = &[4];
/// A payload large enough to be still in flight when a synchronisation
/// overtakes it, if nothing forces it first.
const LARGE: &[usize] = &[8192];
/// The provider's inject, eager, and rendezvous or chunked paths in turn.
const CYCLE: &[usize] = &[1, 64, 1024, 4096];

/// The eight programs.
pub fn catalogue() -> Vec<FProg> {
    use Step::*;
    vec![
        FProg {
            name: "mp_sync_images",
            about: "message passing by SYNC IMAGES: image 1 puts a payload into image 2 and \
                    runs sync images(2); image 2, after its sync images(1), reads it locally; \
                    a second sync images returns the turn",
            shape: Shape::Pairs,
            locs: vec![data("payload", 2, FOUR)],
            threads: vec![
                vec![Put(0, 1), SyncImages(2), SyncImages(2)],
                vec![SyncImages(1), Get(0, "r"), SyncImages(1)],
            ],
            report: vec!["r"],
            quarter: false,
        },
        FProg {
            name: "mp_event",
            about: "message passing by EVENT POST / EVENT WAIT: image 1 puts a payload into \
                    image 2 and posts an event there; image 2 waits for it, reads the payload \
                    locally and posts the turn back",
            shape: Shape::Pairs,
            locs: vec![data("payload", 2, FOUR)],
            threads: vec![
                vec![Put(0, 1), Post("ready", 2), Wait("done")],
                vec![Wait("ready"), Get(0, "r"), Post("done", 1)],
            ],
            report: vec!["r"],
            quarter: false,
        },
        FProg {
            name: "mp_lock",
            about: "message passing by LOCK / UNLOCK: every image takes the lock on image 1 and \
                    inside it gets two words a and b from image 1, checks a == b and puts a+1 \
                    into both; image 1 reports every update the final count lacks as old",
            shape: Shape::Every,
            locs: vec![data("a", 1, &[1]), data("b", 1, &[1])],
            threads: vec![vec![Lock(1), Increment2(0, 1, "ab"), Unlock(1)]],
            report: vec!["ab"],
            quarter: true,
        },
        FProg {
            name: "sb_sync_memory",
            about: "store buffering with SYNC MEMORY and atomics: image 1 defines x on image 2, \
                    runs sync memory and reads its own y; image 2 defines y on image 1, runs \
                    sync memory and reads its own x; sync all resets and separates rounds",
            shape: Shape::Pairs,
            locs: vec![atomic("x", 2), atomic("y", 1)],
            threads: vec![
                vec![
                    AtomicDefine(1, 0),
                    SyncAll,
                    AtomicDefine(0, 1),
                    SyncMemory,
                    AtomicRef(1, "r1"),
                    SyncAll,
                ],
                vec![
                    AtomicDefine(0, 0),
                    SyncAll,
                    AtomicDefine(1, 1),
                    SyncMemory,
                    AtomicRef(0, "r2"),
                    SyncAll,
                ],
            ],
            report: vec!["r1", "r2"],
            quarter: true,
        },
        FProg {
            name: "mp_transitive",
            about: "message passing through a third image (causality): image 1 puts a large \
                    payload into image 2 and runs sync images(3); image 3 then runs sync \
                    images(2); image 2 after that reads the payload locally",
            shape: Shape::Fixed,
            locs: vec![data("payload", 2, LARGE)],
            threads: vec![
                vec![Put(0, 1), SyncImages(3), SyncImages(2)],
                vec![SyncImages(3), Get(0, "r"), SyncImages(1)],
                vec![SyncImages(1), SyncImages(2)],
            ],
            report: vec!["r"],
            quarter: true,
        },
        FProg {
            name: "mp_event_relay",
            about: "message passing through a third image by events: image 1 puts a payload into \
                    image 2, posts an event on image 3 and computes without calling the \
                    library; image 3 posts one on image 2; image 2 then reads the payload",
            shape: Shape::Fixed,
            locs: vec![data("payload", 2, LARGE)],
            threads: vec![
                vec![Put(0, 1), Post("go1", 3), Compute, Wait("go3")],
                vec![Wait("go2"), Get(0, "r"), Post("go3", 1)],
                vec![Wait("go1"), Post("go2", 2)],
            ],
            report: vec!["r"],
            quarter: true,
        },
        FProg {
            name: "mp_get_third",
            about: "message passing with the payload on a third image: image 1 puts it into \
                    image 3 and runs sync images(2); image 2 after its sync images(1) gets it \
                    from image 3 (neither synchronised with image 3); sizes 1, 64, 1024, 4096",
            shape: Shape::Fixed,
            locs: vec![data("payload", 3, CYCLE)],
            threads: vec![
                vec![Put(0, 1), SyncImages(2), SyncImages(2)],
                vec![SyncImages(1), Get(0, "r"), SyncImages(1)],
                vec![],
            ],
            report: vec!["r"],
            quarter: false,
        },
        FProg {
            name: "mp_sync_memory",
            about: "message passing by SYNC MEMORY and an atomic flag (F2018 11.6.5): image 1 \
                    puts a payload into image 3, runs sync memory and defines its own flag; \
                    image 2 spins on the flag, runs sync memory and gets the payload from \
                    image 3; sync images returns the turn; sizes 1, 64, 1024, 4096",
            shape: Shape::Fixed,
            locs: vec![data("payload", 3, CYCLE), atomic("flag", 1)],
            threads: vec![
                vec![Put(0, 1), SyncMemory, AtomicDefine(1, 1), SyncImages(2)],
                vec![AwaitAtomic(1, 1), SyncMemory, Get(0, "r"), SyncImages(1)],
                vec![],
            ],
            report: vec!["r"],
            quarter: false,
        },
    ]
}

/// The program named `name`.
pub fn find(name: &str) -> Option<FProg> {
    catalogue().into_iter().find(|p| p.name == name)
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The oracle's view of `p`'s round: image control statements become the
/// flags they wait on (the k-th `sync images` between two roles, the k-th
/// post of an event, the k-th `sync all`), a lock a [`Op::Lock`] step.
/// `Every` programs run two images.
pub fn oracle_program(p: &FProg) -> Program {
    let roles: Vec<(usize, &Vec<Step>)> = match p.shape {
        Shape::Every => vec![(1, &p.threads[0]), (2, &p.threads[0])],
        _ => p
            .threads
            .iter()
            .enumerate()
            .map(|(i, t)| (i + 1, t))
            .collect(),
    };
    let nroles = roles.len();
    let threads = roles
        .iter()
        .map(|&(me, t)| {
            let mut k_sync: BTreeMap<usize, usize> = BTreeMap::new();
            let mut k_post: BTreeMap<(&str, usize), usize> = BTreeMap::new();
            let mut k_wait: BTreeMap<&str, usize> = BTreeMap::new();
            let mut k_all = 0;
            let l = |i: usize| p.locs[i].name;
            let mut ops = Vec::new();
            for s in t {
                match *s {
                    Step::Put(i, v) | Step::AtomicDefine(i, v) => ops.push(Op::Write(l(i), v)),
                    Step::Get(i, r) | Step::AtomicRef(i, r) => ops.push(Op::read(l(i), r)),
                    Step::AwaitAtomic(i, v) => ops.push(Op::Await(l(i), v)),
                    Step::SyncImages(j) => {
                        let k = k_sync.entry(j).or_default();
                        *k += 1;
                        ops.push(Op::Write(leak(format!("sync.{me}.{j}.{k}")), 1));
                        ops.push(Op::Await(leak(format!("sync.{j}.{me}.{k}")), 1));
                    }
                    Step::SyncAll => {
                        k_all += 1;
                        ops.push(Op::Write(leak(format!("all.{k_all}.{me}")), 1));
                        for j in 1..=nroles {
                            ops.push(Op::Await(leak(format!("all.{k_all}.{j}")), 1));
                        }
                    }
                    Step::Post(e, j) => {
                        let k = k_post.entry((e, j)).or_default();
                        *k += 1;
                        ops.push(Op::Write(leak(format!("{e}@{j}.{k}")), 1));
                    }
                    Step::Wait(e) => {
                        let k = k_wait.entry(e).or_default();
                        *k += 1;
                        ops.push(Op::Await(leak(format!("{e}@{me}.{k}")), 1));
                    }
                    Step::Lock(j) => ops.push(Op::Lock(leak(format!("lock@{j}")))),
                    Step::Unlock(j) => ops.push(Op::Write(leak(format!("lock@{j}")), 0)),
                    Step::Increment2(a, b, _) => {
                        ops.push(Op::read(l(a), leak(format!("pair.a.{me}"))));
                        ops.push(Op::read(l(b), leak(format!("pair.b.{me}"))));
                        for x in [a, b] {
                            ops.push(Op::FetchAdd {
                                loc: l(x),
                                add: 1,
                                reg: None,
                            });
                        }
                    }
                    Step::SyncMemory | Step::Compute => {}
                }
            }
            ops
        })
        .collect();
    let pair = p.threads.iter().flatten().find_map(|s| match *s {
        Step::Increment2(_, _, r) => Some(r),
        _ => None,
    });
    match pair {
        Some(r) => {
            assert_eq!(p.report, [r], "{}: a pair check is the only report", p.name);
            Program {
                threads,
                report: vec![],
                summarize: Some(pair_summary),
            }
        }
        None => Program::new(threads, &p.report),
    }
}

/// `ab=1` when every image's pair read inside the lock was equal, else
/// `ab=torn`.
fn pair_summary(fin: &Final) -> String {
    let same = fin
        .iter()
        .filter_map(|(k, v)| k.strip_prefix("pair.a.").map(|me| (me, v)))
        .all(|(me, v)| fin.get(format!("pair.b.{me}").as_str()) == Some(v));
    outcome_of([("ab", if same { "1" } else { "torn" })])
}

/// The outcomes sequential consistency allows for one round of `p`.
pub fn allowed(p: &FProg) -> BTreeSet<String> {
    let e = oracle_program(p).allowed();
    assert!(!e.deadlock, "{}: the oracle found a deadlock", p.name);
    e.outcomes
}

/// What a run of `p` printed: the outcomes, and the rounds it ran (`None`
/// when the run did not finish its report).
pub fn parse(p: &FProg, stdout: &str) -> (Vec<(String, u64)>, Option<u64>) {
    let mut seen = Vec::new();
    let mut rounds = None;
    for line in stdout.lines() {
        let Some(rest) = line.trim().strip_prefix("litmus-caf ") else {
            continue;
        };
        let field = |k: &str| {
            rest.split_whitespace()
                .find_map(|kv| kv.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
        };
        if field("prog") != Some(p.name) {
            continue;
        }
        if let Some(r) = field("done") {
            rounds = r.parse().ok();
            continue;
        }
        let (Some(vals), Some(count)) = (field("vals"), field("count")) else {
            continue;
        };
        let vals: Vec<String> = vals
            .split(',')
            .map(|v| v.parse::<u8>().map_or_else(|_| v.to_string(), code_text))
            .collect();
        if vals.len() != p.report.len() {
            continue;
        }
        seen.push((
            outcome_of(p.report.iter().copied().zip(vals.iter())),
            count.parse().unwrap_or(0),
        ));
    }
    (seen, rounds)
}

/// The checked result of one run.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The outcomes, counted.
    pub tally: Tally,
    /// The allowed outcomes never seen.
    pub gaps: Vec<String>,
    /// The rounds the run reported (`None`: no report).
    pub rounds: Option<u64>,
}

impl Checked {
    /// One line: `NAME: F forbidden outcomes in R rounds (...)`, the line
    /// `scripts/caf-litmus` reads.
    pub fn line(&self, p: &FProg) -> String {
        let hist = self.tally.histogram(" x").join(", ");
        let gaps = if self.gaps.is_empty() {
            String::new()
        } else {
            format!("; allowed never seen: {}", self.gaps.join(", "))
        };
        format!(
            "{}: {} forbidden outcomes in {} rounds ({hist}{gaps})",
            p.name,
            self.tally.forbidden,
            self.rounds.unwrap_or(0)
        )
    }
}

/// Parses a run's output and checks every outcome against the oracle.
pub fn check(p: &FProg, stdout: &str) -> Checked {
    let ok = allowed(p);
    let (seen, rounds) = parse(p, stdout);
    let mut tally = Tally::default();
    for (o, n) in &seen {
        tally.record(o, *n, &ok);
    }
    let gaps = tally.gaps(&ok).into_iter().cloned().collect();
    Checked {
        tally,
        gaps,
        rounds,
    }
}

#[cfg(test)]
mod tests;
