//! Litmus programs through the C APIs users program in: OpenSHMEM
//! (`shmem.h`, our `libpgas_shmem`) and the runtime shim's C ABI
//! (`pgas_shim.h`).
//!
//! The Rust suites (`litmus_gen`) check the memory model through
//! `runtime_shim::Runtime`; programs written in C reach the same runtime
//! through other entry points (`shmem_putmem_signal`, `shmem_ctx_quiet` on a
//! team context, `pgas_put_signal`, ...), each of which can lose an
//! ordering on its own. This module describes each program once, as threads
//! of whole steps ([`Step`]); from that description it *generates* the C
//! source for either API ([`emit_c`]) and asks the same SC oracle as the
//! Rust suites ([`crate::litmus::oracle`]) which outcomes are allowed
//! ([`allowed`]). The C program runs every program many times with random
//! delays, stamps every value with its iteration (so data of an earlier
//! iteration reads as `old`, a half-written buffer as `torn`) and prints
//! one line per distinct outcome; [`parse`] reads them back.
//!
//! Families (the OpenSHMEM 1.5 memory model's rules, and the C ABI's):
//! MP by flag after `fence` (same target) and after `quiet` (data and flag
//! on different PEs), MP by `put_signal` / `signal_wait_until`, MP with
//! `put_nbi` + `quiet`, WAR, SB with atomics, IRIW on atomics, CoRR and
//! CoWW on one word, two contexts (a context's `quiet` before a flag on
//! another), and a team context addressing PEs by their team number.

mod source;

use crate::litmus::oracle::{outcome_of, Op, Program};
use source::{HARNESS, MAIN, PGAS_API, SHMEM_API};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Which C API a generated program calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// OpenSHMEM (`shmem.h`), built with `oshcc`, run with `oshrun`.
    Shmem,
    /// The runtime shim's C ABI (`pgas_shim.h`).
    Pgas,
}

impl Api {
    /// The name used in file names and reports.
    pub fn name(self) -> &'static str {
        match self {
            Api::Shmem => "shmem",
            Api::Pgas => "pgas",
        }
    }
}

/// PEs every job runs with (programs use up to 4).
pub const PES: usize = 4;

/// A location: its name (for the oracle and the report), the PE that
/// owns it, and its size in 8-byte words (1: a flag or counter).
#[derive(Clone, Copy, Debug)]
pub struct Loc {
    /// Name.
    pub name: &'static str,
    /// Owning PE.
    pub owner: usize,
    /// Words.
    pub words: usize,
}

/// One step of a thread. Writes store small values (1, 2, ...), stamped
/// with the iteration.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// A PUT of a whole buffer (`shmem_putmem`, `pgas_put`).
    Put(usize, u64),
    /// A blocking PUT of a whole buffer whose source the caller fills with
    /// the third value as soon as the call returns: the target must hold
    /// the second (a blocking PUT has read its source when it returns).
    PutThenReuse(usize, u64, u64),
    /// A single-word PUT (`shmem_long_p`, an 8-byte `pgas_put`).
    P(usize, u64),
    /// An atomic write.
    AtomicSet(usize, u64),
    /// An atomic read into a register.
    AtomicFetch(usize, &'static str),
    /// A GET of a whole buffer into a register (`shmem_getmem`, `pgas_get`).
    Get(usize, &'static str),
    /// An atomic fetch-add.
    FetchAdd(usize, u64, &'static str),
    /// Waits until the word holds the value (`wait_until` on one's own
    /// word, a loop of atomic reads on another PE's).
    Await(usize, u64),
    /// A PUT and its signal word (same owner) set to the value: whoever
    /// sees the signal sees the data.
    PutSignal(usize, u64, usize, u64),
    /// Waits on a signal word of one's own (`shmem_signal_wait_until`,
    /// `pgas_wait_until`).
    AwaitSignal(usize, u64),
    /// A non-blocking PUT (`shmem_putmem_nbi`, `pgas_put_nb`), completed by
    /// the next `Quiet`.
    PutNbi(usize, u64),
    /// `shmem_fence` / `pgas_fence`.
    Fence,
    /// `shmem_quiet` / `pgas_quiet` (and waits for `PutNbi` handles).
    Quiet,
    /// OpenSHMEM only: a PUT on context 0 or 1 (private contexts).
    CtxPut(usize, usize, u64),
    /// OpenSHMEM only: an atomic write on context 0 or 1.
    CtxSet(usize, usize, u64),
    /// OpenSHMEM only: `shmem_ctx_quiet` of context 0 or 1.
    CtxQuiet(usize),
    /// OpenSHMEM only: `shmem_ctx_fence` of context 0 or 1.
    CtxFence(usize),
    /// OpenSHMEM only: a PUT on a context of the team {PE 0, PE 2},
    /// addressing the owner by its number in that team.
    TeamPut(usize, u64),
    /// OpenSHMEM only: `shmem_ctx_quiet` of the team context.
    TeamQuiet,
}

/// One litmus program.
#[derive(Clone, Debug)]
pub struct CProg {
    /// Unique name (`FAMILY/variant`).
    pub name: String,
    /// Family.
    pub family: &'static str,
    /// Locations (indexed by the steps).
    pub locs: Vec<Loc>,
    /// One thread per PE (PE i runs `threads[i]`).
    pub threads: Vec<Vec<Step>>,
    /// Registers and locations whose final values make the outcome.
    pub report: Vec<&'static str>,
}

fn loc(name: &'static str, owner: usize, words: usize) -> Loc {
    Loc { name, owner, words }
}

/// Data sizes in words: one word, a buffer past every provider's inject
/// size (and cut in pieces where `PGAS_MAX_MSG_SIZE` is small), and
/// [`CONTROL_WORDS`] for the families of the negative controls only.
const SIZES: [usize; 3] = [1, 1536, CONTROL_WORDS];

/// 1 MiB: a PUT long enough to be still arriving when the flag does if
/// quiet forces nothing. MP-QUIET and MP-NBI only (the negative control's
/// programs): at 12 KiB a job over tcp;ofi_rxm showed the weakening in
/// some runs only (CI once missed it in 3 jobs; here 1 job in 10), at
/// 1 MiB in 10 jobs of 10 (CI's runner, with its own timing, hardly ever:
/// tests/tests/litmus_c.rs, `controls`). PUT-SRC too: a large PUT whose
/// source is reused. (Every family at 1 MiB cost the CI run 20 s.)
const CONTROL_WORDS: usize = 131_072;

/// The programs for `api` (the OpenSHMEM-only steps are left out of the C
/// ABI's catalogue).
pub fn catalogue(api: Api) -> Vec<CProg> {
    use Step::*;
    let mut v = Vec::new();
    let mut add = |family: &'static str,
                   variant: String,
                   locs: Vec<Loc>,
                   threads: Vec<Vec<Step>>,
                   report: &[&'static str]| {
        v.push(CProg {
            name: format!("{family}/{variant}"),
            family,
            locs,
            threads,
            report: report.to_vec(),
        })
    };
    for w in SIZES {
        // MP, data and flag on the reader: fence orders puts to one PE.
        add(
            "MP-FENCE",
            format!("w{w}"),
            vec![loc("data", 1, w), loc("flag", 1, 1)],
            vec![
                vec![Put(0, 1), Fence, P(1, 1)],
                vec![Await(1, 1), Get(0, "r")],
            ],
            &["r"],
        );
        // MP, data on a third PE: only quiet makes it visible before the
        // flag; the reader GETs it from there.
        add(
            "MP-QUIET",
            format!("w{w}"),
            vec![loc("data", 2, w), loc("flag", 1, 1)],
            vec![
                vec![Put(0, 1), Quiet, AtomicSet(1, 1)],
                vec![Await(1, 1), Get(0, "r")],
            ],
            &["r"],
        );
        // The source of a blocking PUT is the caller's again when the call
        // returns: overwriting it must not change what lands.
        add(
            "PUT-SRC",
            format!("w{w}"),
            vec![loc("data", 1, w)],
            vec![vec![PutThenReuse(0, 1, 2)], vec![]],
            &["data"],
        );
        // MP by put-with-signal.
        add(
            "MP-SIGNAL",
            format!("w{w}"),
            vec![loc("data", 1, w), loc("sig", 1, 1)],
            vec![
                vec![PutSignal(0, 1, 1, 1)],
                vec![AwaitSignal(1, 1), Get(0, "r")],
            ],
            &["r"],
        );
        // MP with a non-blocking PUT completed by quiet.
        add(
            "MP-NBI",
            format!("w{w}"),
            vec![loc("data", 2, w), loc("flag", 1, 1)],
            vec![
                vec![PutNbi(0, 1), Quiet, AtomicSet(1, 1)],
                vec![Await(1, 1), Get(0, "r")],
            ],
            &["r"],
        );
        if api == Api::Shmem {
            // Two private contexts: context 0's quiet, then the flag on
            // context 1.
            add(
                "CTX",
                format!("quiet-w{w}"),
                vec![loc("data", 2, w), loc("flag", 1, 1)],
                vec![
                    vec![CtxPut(0, 0, 1), CtxQuiet(0), CtxSet(1, 1, 1)],
                    vec![Await(1, 1), Get(0, "r")],
                ],
                &["r"],
            );
            // One context's fence orders its puts to one PE.
            add(
                "CTX",
                format!("fence-w{w}"),
                vec![loc("data", 1, w), loc("flag", 1, 1)],
                vec![
                    vec![CtxPut(0, 0, 1), CtxFence(0), CtxSet(0, 1, 1)],
                    vec![Await(1, 1), Get(0, "r")],
                ],
                &["r"],
            );
            // A team context addresses PE 2 as team PE 1: the data must
            // land on world PE 2, where the reader (PE 2) finds it.
            add(
                "TEAM-CTX",
                format!("w{w}"),
                vec![loc("data", 2, w), loc("flag", 2, 1)],
                vec![
                    vec![TeamPut(0, 1), TeamQuiet, AtomicSet(1, 1)],
                    vec![],
                    vec![Await(1, 1), Get(0, "r")],
                ],
                &["r"],
            );
        }
    }
    // WAR: the reader's GET completes before its flag; the owner's later
    // write must not be what it read.
    add(
        "WAR",
        "get-then-flag".into(),
        vec![loc("x", 1, 1), loc("flag", 1, 1)],
        vec![
            vec![Get(0, "r"), AtomicSet(1, 1)],
            vec![Await(1, 1), AtomicSet(0, 2)],
        ],
        &["r"],
    );
    // SB with atomics, words on a third PE and on each other's PE.
    for (name, xo, yo) in [("third-pe", 2, 2), ("each-others", 1, 0)] {
        add(
            "SB-AMO",
            name.into(),
            vec![loc("x", xo, 1), loc("y", yo, 1)],
            vec![
                vec![AtomicSet(0, 1), AtomicFetch(1, "r0")],
                vec![AtomicSet(1, 1), AtomicFetch(0, "r1")],
            ],
            &["r0", "r1"],
        );
    }
    // IRIW on atomics: two writers, two readers in opposite orders.
    add(
        "IRIW-AMO",
        "x@2,y@3".into(),
        vec![loc("x", 2, 1), loc("y", 3, 1)],
        vec![
            vec![AtomicSet(0, 1)],
            vec![AtomicSet(1, 1)],
            vec![AtomicFetch(0, "a0"), AtomicFetch(1, "a1")],
            vec![AtomicFetch(1, "b0"), AtomicFetch(0, "b1")],
        ],
        &["a0", "a1", "b0", "b1"],
    );
    // Coherence of one word: reads never go back in time; two PUTs of one
    // thread leave the second.
    add(
        "CORR",
        "atomic".into(),
        vec![loc("x", 1, 1)],
        vec![
            vec![AtomicSet(0, 1), AtomicSet(0, 2)],
            vec![],
            vec![AtomicFetch(0, "r0"), AtomicFetch(0, "r1")],
        ],
        &["r0", "r1"],
    );
    add(
        "COWW",
        "put-put".into(),
        vec![loc("x", 1, 1)],
        vec![vec![P(0, 1), P(0, 2)], vec![]],
        &["x"],
    );
    // Fetch-adds from three PEs: every old value once.
    add(
        "AMO-COUNT",
        "fadd".into(),
        vec![loc("c", 3, 1)],
        vec![
            vec![FetchAdd(0, 1, "f0")],
            vec![FetchAdd(0, 1, "f1")],
            vec![FetchAdd(0, 1, "f2")],
        ],
        &["c", "f0", "f1", "f2"],
    );
    v.retain(|p| {
        matches!(p.family, "MP-QUIET" | "MP-NBI" | "PUT-SRC")
            || p.locs.iter().all(|l| l.words < CONTROL_WORDS)
    });
    v
}

/// The outcomes sequential consistency allows for `p` (the oracle of the
/// Rust suites).
pub fn allowed(p: &CProg) -> BTreeSet<String> {
    let l = |i: usize| p.locs[i].name;
    let threads = p
        .threads
        .iter()
        .map(|t| {
            t.iter()
                .flat_map(|s| match *s {
                    Step::Put(x, v)
                    | Step::PutThenReuse(x, v, _)
                    | Step::P(x, v)
                    | Step::AtomicSet(x, v)
                    | Step::PutNbi(x, v)
                    | Step::CtxPut(_, x, v)
                    | Step::CtxSet(_, x, v)
                    | Step::TeamPut(x, v) => vec![Op::Write(l(x), v)],
                    Step::AtomicFetch(x, r) | Step::Get(x, r) => {
                        vec![Op::read(l(x), r)]
                    }
                    Step::FetchAdd(x, a, r) => vec![Op::FetchAdd {
                        loc: l(x),
                        add: a,
                        reg: Some(r),
                    }],
                    Step::Await(x, v) | Step::AwaitSignal(x, v) => vec![Op::Await(l(x), v)],
                    Step::PutSignal(d, v, s, sv) => vec![Op::Write(l(d), v), Op::Write(l(s), sv)],
                    Step::Fence
                    | Step::Quiet
                    | Step::CtxQuiet(_)
                    | Step::CtxFence(_)
                    | Step::TeamQuiet => vec![],
                })
                .collect()
        })
        .collect();
    let e = Program::new(threads, &p.report).allowed();
    assert!(!e.deadlock, "{}: the oracle found a deadlock", p.name);
    e.outcomes
}

/// Registers of `p` (report items that are not locations), in report order.
fn registers(p: &CProg) -> Vec<&'static str> {
    p.report
        .iter()
        .copied()
        .filter(|r| !p.locs.iter().any(|l| l.name == *r))
        .collect()
}

/// The PE that holds report item `r` at the end: a location's owner, or
/// the thread that writes the register.
fn holder(p: &CProg, r: &str) -> usize {
    if let Some(l) = p.locs.iter().find(|l| l.name == r) {
        return l.owner;
    }
    for (pe, t) in p.threads.iter().enumerate() {
        for s in t {
            match *s {
                Step::AtomicFetch(_, x) | Step::Get(_, x) | Step::FetchAdd(_, _, x) if x == r => {
                    return pe
                }
                _ => {}
            }
        }
    }
    panic!(
        "{}: report item {r} is neither a location nor a register",
        p.name
    )
}

/// Words of the symmetric arena a program needs (locations back to back).
fn arena_words(p: &CProg) -> usize {
    p.locs.iter().map(|l| l.words).sum()
}

fn loc_offset(p: &CProg, i: usize) -> usize {
    p.locs[..i].iter().map(|l| l.words).sum()
}

/// Instances of a program per round in the generated C program unless
/// `LITMUS_C_INSTANCES` says (its `main`).
pub const DEFAULT_INSTANCES: u32 = 8;

/// The C source running every program of `progs` through `api`.
pub fn emit_c(api: Api, progs: &[CProg]) -> String {
    let mut s = String::new();
    let arena = progs.iter().map(arena_words).max().unwrap_or(1);
    let _ = writeln!(
        s,
        "/* Generated by pgas-tests' litmus_c.rs ({} API): do not edit. */\n#define _POSIX_C_SOURCE 199309L",
        api.name()
    );
    s.push_str(match api {
        Api::Shmem => SHMEM_API,
        Api::Pgas => PGAS_API,
    });
    let _ = writeln!(s, "#define ARENA_WORDS {arena}");
    let buf = progs
        .iter()
        .flat_map(|p| p.locs.iter().map(|l| l.words))
        .max()
        .unwrap_or(1);
    let _ = writeln!(s, "#define BUFWORDS {buf}");
    let _ = writeln!(s, "#define DEFAULT_INSTANCES {DEFAULT_INSTANCES}");
    s.push_str(HARNESS);
    for (n, p) in progs.iter().enumerate() {
        let regs = registers(p);
        let _ = writeln!(
            s,
            "\n/* {} */\nstatic void prog_{n}_run(long it) {{",
            p.name
        );
        let _ = writeln!(s, "  (void)it;");
        for (pe, t) in p.threads.iter().enumerate() {
            let _ = writeln!(s, "  if (me == {pe}) {{");
            for st in t {
                s.push_str(&emit_step(p, &regs, st));
            }
            let _ = writeln!(s, "  }}");
        }
        let _ = writeln!(s, "}}");
        // Reset: each owner stamps its locations with value 0.
        let _ = writeln!(s, "static void prog_{n}_reset(long it) {{");
        for (i, l) in p.locs.iter().enumerate() {
            let _ = writeln!(
                s,
                "  if (me == {}) fill(ARENA + {}, {}, stamp(it, 0));",
                l.owner,
                loc_offset(p, i),
                l.words
            );
        }
        let _ = writeln!(s, "}}");
        // Final: each holder decodes its report items into OUTV.
        let _ = writeln!(s, "static void prog_{n}_final(long it) {{");
        for (k, r) in p.report.iter().enumerate() {
            let h = holder(p, r);
            if let Some(i) = p.locs.iter().position(|l| l.name == *r) {
                let _ = writeln!(
                    s,
                    "  if (me == {h}) OUTV[{k}] = decode(ARENA + {}, {}, it);",
                    loc_offset(p, i),
                    p.locs[i].words
                );
            } else {
                let ri = regs.iter().position(|x| x == r).expect("a register");
                let _ = writeln!(s, "  if (me == {h}) OUTV[{k}] = REGS[{ri}];");
            }
        }
        let _ = writeln!(s, "}}");
    }
    let _ = writeln!(s, "\nstatic const struct prog PROGS[] = {{");
    for (n, p) in progs.iter().enumerate() {
        let holders: Vec<String> = p.report.iter().map(|r| holder(p, r).to_string()).collect();
        let family_size = progs.iter().filter(|q| q.family == p.family).count();
        let _ = writeln!(
            s,
            "  {{\"{}\", {}, {{{}}}, {family_size}, prog_{n}_reset, prog_{n}_run, prog_{n}_final}},",
            p.name,
            p.report.len(),
            holders.join(", ")
        );
    }
    let _ = writeln!(s, "}};\n#define NPROGS {}", progs.len());
    s.push_str(MAIN);
    s
}

fn emit_step(p: &CProg, regs: &[&'static str], st: &Step) -> String {
    let at = |i: usize| format!("ARENA + {}", loc_offset(p, i));
    let w = |i: usize| p.locs[i].words;
    let o = |i: usize| p.locs[i].owner;
    let reg = |r: &str| regs.iter().position(|x| *x == r).expect("a register");
    match *st {
        Step::Put(i, v) => format!(
            "    fill(BUF, {}, stamp(it, {v})); l_put({}, {}, BUF, {});\n",
            w(i),
            o(i),
            at(i),
            w(i)
        ),
        Step::PutThenReuse(i, v, reuse) => format!(
            "{}    fill(BUF, {}, stamp(it, {reuse}));\n",
            emit_step(p, regs, &Step::Put(i, v)),
            w(i)
        ),
        Step::P(i, v) => format!("    l_p({}, {}, stamp(it, {v}));\n", o(i), at(i)),
        Step::AtomicSet(i, v) => format!("    l_aset({}, {}, stamp(it, {v}));\n", o(i), at(i)),
        Step::AtomicFetch(i, r) => format!(
            "    {{ long x_ = l_afetch({}, {}); REGS[{}] = decode(&x_, 1, it); }}\n",
            o(i),
            at(i),
            reg(r)
        ),
        Step::Get(i, r) => format!(
            "    l_get({}, BUF, {}, {}); REGS[{}] = decode(BUF, {}, it);\n",
            o(i),
            at(i),
            w(i),
            reg(r),
            w(i)
        ),
        Step::FetchAdd(i, a, r) => format!(
            "    {{ long x_ = l_afadd({}, {}, {a}); REGS[{}] = decode(&x_, 1, it); }}\n",
            o(i),
            at(i),
            reg(r)
        ),
        Step::Await(i, v) => format!("    l_await({}, {}, stamp(it, {v}));\n", o(i), at(i)),
        Step::PutSignal(d, v, sg, sv) => format!(
            "    fill(BUF, {}, stamp(it, {v})); l_put_signal({}, {}, BUF, {}, {}, stamp(it, {sv}));\n",
            w(d),
            o(d),
            at(d),
            w(d),
            at(sg)
        ),
        Step::AwaitSignal(i, v) => format!("    l_await_signal({}, stamp(it, {v}));\n", at(i)),
        Step::PutNbi(i, v) => format!(
            "    fill(NBIBUF, {}, stamp(it, {v})); l_put_nbi({}, {}, NBIBUF, {});\n",
            w(i),
            o(i),
            at(i),
            w(i)
        ),
        Step::Fence => "    l_fence();\n".into(),
        Step::Quiet => "    l_quiet();\n".into(),
        Step::CtxPut(c, i, v) => format!(
            "    fill(BUF, {}, stamp(it, {v})); shmem_ctx_putmem(CTX[{c}], {}, BUF, {} * 8, {});\n",
            w(i),
            at(i),
            w(i),
            o(i)
        ),
        Step::CtxSet(c, i, v) => format!(
            "    shmem_ctx_long_atomic_set(CTX[{c}], {}, stamp(it, {v}), {});\n",
            at(i),
            o(i)
        ),
        Step::CtxQuiet(c) => format!("    shmem_ctx_quiet(CTX[{c}]);\n"),
        Step::CtxFence(c) => format!("    shmem_ctx_fence(CTX[{c}]);\n"),
        Step::TeamPut(i, v) => {
            assert!(o(i) % 2 == 0, "the team context reaches even PEs only");
            format!(
                "    fill(BUF, {}, stamp(it, {v})); shmem_ctx_putmem(TEAM_CTX, {}, BUF, {} * 8, {});\n",
                w(i),
                at(i),
                w(i),
                o(i) / 2
            )
        }
        Step::TeamQuiet => "    shmem_ctx_quiet(TEAM_CTX);\n".into(),
    }
}

/// One distinct outcome a job reported for a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// Program name.
    pub prog: String,
    /// The outcome in the oracle's spelling.
    pub outcome: String,
    /// How many iterations had it.
    pub count: u64,
}

/// Reads the job's `litmus-c` lines (`prog=NAME vals=v1,v2 count=N`, values
/// in report order; 254 = old, 255 = torn).
pub fn parse(progs: &[CProg], stdout: &str) -> Vec<Seen> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix("litmus-c ") else {
            continue;
        };
        let field = |k: &str| {
            rest.split_whitespace()
                .find_map(|kv| kv.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
        };
        let (Some(name), Some(vals), Some(count)) = (field("prog"), field("vals"), field("count"))
        else {
            continue;
        };
        let Some(p) = progs.iter().find(|p| p.name == name) else {
            continue;
        };
        let vals: Vec<String> = vals
            .split(',')
            .map(|v| match v {
                "254" => "old".to_string(),
                "255" => "torn".to_string(),
                x => x.to_string(),
            })
            .collect();
        out.push(Seen {
            prog: name.to_string(),
            outcome: outcome_of(p.report.iter().copied().zip(vals.iter())),
            count: count.parse().unwrap_or(0),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_has_a_forbidden_outcome_the_oracle_excludes() {
        for api in [Api::Shmem, Api::Pgas] {
            for p in catalogue(api) {
                let ok = allowed(&p);
                assert!(!ok.is_empty(), "{}: no allowed outcome", p.name);
                // Every program reads something a broken model could get
                // wrong: some register value is excluded.
                let any_old = p.report.iter().any(|r| {
                    let o = outcome_of(
                        p.report
                            .iter()
                            .map(|k| (*k, if k == r { "old" } else { "0" })),
                    );
                    !ok.contains(&o)
                });
                assert!(any_old, "{}: 'old' is allowed", p.name);
            }
        }
    }

    #[test]
    fn mp_quiet_forbids_the_flag_without_the_data() {
        let p = catalogue(Api::Pgas)
            .into_iter()
            .find(|p| p.name == "MP-QUIET/w1")
            .unwrap();
        let ok = allowed(&p);
        assert_eq!(ok, BTreeSet::from(["r=1".to_string()]));
    }

    #[test]
    fn sb_and_iriw_exclude_their_relaxed_outcomes() {
        let all = catalogue(Api::Shmem);
        let sb = all.iter().find(|p| p.family == "SB-AMO").unwrap();
        assert!(!allowed(sb).contains("r0=0 r1=0"));
        let iriw = all.iter().find(|p| p.family == "IRIW-AMO").unwrap();
        assert!(!allowed(iriw).contains("a0=1 a1=0 b0=1 b1=0"));
    }

    #[test]
    fn generated_source_names_every_program_and_parses_back() {
        let progs = catalogue(Api::Shmem);
        let c = emit_c(Api::Shmem, &progs);
        for p in &progs {
            assert!(c.contains(&format!("\"{}\"", p.name)));
        }
        let seen = parse(&progs, "litmus-c prog=MP-FENCE/w1 vals=254 count=3\n");
        assert_eq!(seen[0].outcome, "r=old");
        assert_eq!(seen[0].count, 3);
    }
}
