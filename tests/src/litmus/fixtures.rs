//! The hand-written litmus tests of `shared/LITMUS.md` as fixtures of the
//! engine: each a named [`Fixture`] (how the comm-layer front end,
//! [`super::front::comm`], carries it out: blocking or not, which
//! synchronisation, SELF-* forms with the words on the acting locale) and
//! the oracle program of its base test ([`program`]), which the front end's
//! outcomes are checked against. Sizes, non-blocking forms, worker placement
//! and the SELF-* forms change how the operations are carried out, not what
//! SC allows, so variants share their base's program.

use super::oracle::{amo_count_label, Final, Op, Program};
use std::collections::BTreeSet;

/// How a test is carried out (the oracle program is its `base`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixture {
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

impl Fixture {
    /// Every fixture by name (the SELF-* forms are added by [`instances`]).
    pub const ALL: [(&'static str, Fixture); 18] = [
        ("PUT-SRC", Fixture::PutSrc),
        ("GET-DST", Fixture::GetDst { nb: false }),
        ("GET-DST-NB", Fixture::GetDst { nb: true }),
        ("RAW", Fixture::Raw { nb: false }),
        ("RAW-NB", Fixture::Raw { nb: true }),
        ("WAW", Fixture::Waw { nb: false }),
        ("WAW-NB", Fixture::Waw { nb: true }),
        ("MP-ATOMIC", Fixture::MpAtomic { split: false }),
        ("MP-ATOMIC-SPLIT", Fixture::MpAtomic { split: true }),
        ("MP-AM", Fixture::MpAm { nb: false }),
        ("MP-AM-NB", Fixture::MpAm { nb: true }),
        ("TASK-END", Fixture::TaskEnd),
        ("TASK-END-OOB", Fixture::TaskEndOob),
        ("TASK-END-LOCAL", Fixture::TaskEndLocal),
        ("TASK-CREATE", Fixture::TaskCreate { nb: false }),
        ("TASK-CREATE-NB", Fixture::TaskCreate { nb: true }),
        ("SB-ATOMIC", Fixture::SbAtomic),
        ("AMO-COUNT", Fixture::AmoCount),
    ];

    pub fn base(self) -> &'static str {
        match self {
            Fixture::PutSrc => "PUT-SRC",
            Fixture::GetDst { .. } => "GET-DST",
            Fixture::Raw { .. } => "RAW",
            Fixture::Waw { .. } => "WAW",
            Fixture::MpAtomic { .. } => "MP-ATOMIC",
            Fixture::MpAm { .. } => "MP-AM",
            Fixture::TaskEnd | Fixture::TaskEndOob | Fixture::TaskEndLocal => "TASK-END",
            Fixture::TaskCreate { .. } => "TASK-CREATE",
            Fixture::SbAtomic => "SB-ATOMIC",
            Fixture::AmoCount => "AMO-COUNT",
        }
    }

    /// The group a test belongs to (`rma`, `sync`, `atomic`), so a run can
    /// be split into several jobs.
    pub fn group(self) -> &'static str {
        match self {
            Fixture::PutSrc
            | Fixture::GetDst { .. }
            | Fixture::Raw { .. }
            | Fixture::Waw { .. } => "rma",
            Fixture::MpAm { .. }
            | Fixture::TaskEnd
            | Fixture::TaskEndOob
            | Fixture::TaskEndLocal
            | Fixture::TaskCreate { .. } => "sync",
            Fixture::MpAtomic { .. } | Fixture::SbAtomic | Fixture::AmoCount => "atomic",
        }
    }

    /// Whether the test moves a buffer (run at every size) or 8-byte atomics.
    pub fn sized(self) -> bool {
        !matches!(self, Fixture::SbAtomic | Fixture::AmoCount)
    }

    /// Whether a SELF-* form exists (the "remote" words on the acting locale).
    pub fn has_self(self) -> bool {
        !matches!(
            self,
            Fixture::TaskEndOob | Fixture::MpAtomic { split: true }
        )
    }
}

/// One (test, size) of the run.
#[derive(Clone, Debug)]
pub struct Inst {
    /// Running number, the same on every locale (part of every stamp).
    pub id: u64,
    pub name: String,
    pub kind: Fixture,
    /// SELF-*: the words live on the acting locale (L0).
    pub selfish: bool,
    pub size: usize,
    pub iters: usize,
}

pub fn instances(
    select: &[String],
    sizes: &[usize],
    iters: usize,
    large: usize,
) -> Result<Vec<Inst>, String> {
    let mut names = Vec::new();
    for (name, kind) in Fixture::ALL {
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
    let wanted = |name: &str, kind: Fixture, selfish: bool| {
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

/// AMO-count's summary: the counter ends at the number of increments and the
/// fetched values are 0..total, each once; anything else is spelled out.
/// Fetch registers are the locations whose names start with `f`.
pub(crate) fn amo_count_summary(fin: &Final) -> String {
    let fetched: Vec<u64> = fin
        .iter()
        .filter(|(k, _)| k.starts_with('f'))
        .map(|(_, v)| *v)
        .collect();
    amo_count_label(fin["c"], 0, &fetched)
}

/// Message passing through `flag`: `d = 1; flag = 1` and, once the flag
/// is seen, `r = d`.
fn message_passing(flag: &'static str) -> Program {
    Program::new(
        vec![
            vec![Op::Write("d", 1), Op::Write(flag, 1)],
            vec![Op::Await(flag, 1), Op::read("d", "r")],
        ],
        &["r"],
    )
}

/// The programs of the suite, by base test name (variants share them: sizes,
/// non-blocking forms, worker placement and the SELF-* forms change how the
/// operations are carried out, not what SC allows). `None` for an unknown name.
///
/// Synchronisation the runner performs with a launcher barrier after a task
/// ended, a spin wait, or an on-statement's reply is an `Await` on a flag
/// location here.
pub fn program(test: &str) -> Option<Program> {
    use Op::*;
    let p = match test {
        // L0: buf = 1; put(y, buf); buf = 2; task end. L1 (after): r = y.
        "PUT-SRC" => Program::new(
            vec![
                vec![
                    Write("buf", 1),
                    Copy {
                        dst: "y",
                        src: "buf",
                    },
                    Write("buf", 2),
                    Write("end", 1),
                ],
                vec![Await("end", 1), Op::read("y", "r")],
            ],
            &["r"],
        ),
        // y = 2 on L1 before the start. L0: x = get(y); x = 1; r = x; x is
        // read once more at the end (a late GET landing would show there).
        "GET-DST" => Program::new(
            vec![
                vec![Write("y", 2), Write("start", 1)],
                vec![
                    Await("start", 1),
                    Copy { dst: "x", src: "y" },
                    Write("x", 1),
                    Op::read("x", "r"),
                ],
            ],
            &["r", "x"],
        ),
        // L0: put(x, 1); r = get(x).
        "RAW" => Program::new(vec![vec![Write("x", 1), Op::read("x", "r")]], &["r"]),
        // L0: put(x, 1); put(x, 2); task end. Some locale (after): r = x.
        "WAW" => Program::new(
            vec![
                vec![Write("x", 1), Write("x", 2), Write("end", 1)],
                vec![Await("end", 1), Op::read("x", "r")],
            ],
            &["r"],
        ),
        // L0: put(d, 1); f.write(1). Reader: wait f == 1; r = d.
        "MP-ATOMIC" => message_passing("f"),
        // L0: put(d, 1); on L1 { r = d } (the request and its reply are the flags).
        "MP-AM" => Program::new(
            vec![
                vec![Write("d", 1), Write("req", 1), Await("done", 1)],
                vec![Await("req", 1), Op::read("d", "r"), Write("done", 1)],
            ],
            &["r"],
        ),
        // Two children each store their slot and end; the parent joins both
        // and reads the slots.
        "TASK-END" => Program::new(
            vec![
                vec![Write("a1", 1), Write("e1", 1)],
                vec![Write("a2", 1), Write("e2", 1)],
                vec![
                    Await("e1", 1),
                    Await("e2", 1),
                    Op::read("a1", "r1"),
                    Op::read("a2", "r2"),
                ],
            ],
            &["r1", "r2"],
        ),
        // L0: put(d, 1); begin { r = get(d) }.
        "TASK-CREATE" => message_passing("begin"),
        // L0: x.write(1); r0 = y.read(). L1: y.write(1); r1 = x.read().
        "SB-ATOMIC" => Program::new(
            vec![
                vec![Write("x", 1), Op::read("y", "r0")],
                vec![Write("y", 1), Op::read("x", "r1")],
            ],
            &["r0", "r1"],
        ),
        // Three tasks, two fetch_adds each (the runner uses more; the
        // summary does not depend on how many).
        "AMO-COUNT" => {
            let adds = |a: &'static str, b: &'static str| {
                vec![
                    FetchAdd {
                        loc: "c",
                        add: 1,
                        reg: Some(a),
                    },
                    FetchAdd {
                        loc: "c",
                        add: 1,
                        reg: Some(b),
                    },
                ]
            };
            Program {
                threads: vec![adds("f0a", "f0b"), adds("f1a", "f1b"), adds("f2a", "f2b")],
                report: vec![],
                summarize: Some(amo_count_summary),
            }
        }
        _ => return None,
    };
    Some(p)
}

/// Base test names the oracle knows, in report order.
pub const BASE_TESTS: [&str; 10] = [
    "PUT-SRC",
    "GET-DST",
    "RAW",
    "WAW",
    "MP-ATOMIC",
    "MP-AM",
    "TASK-END",
    "TASK-CREATE",
    "SB-ATOMIC",
    "AMO-COUNT",
];
