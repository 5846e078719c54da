//! The SC oracle of the litmus engine for programs over named locations
//! (the hand-written fixtures of [`super::fixtures`] and the C / OpenSHMEM
//! front end, [`super::front::c`]).
//!
//! Each litmus test is written as a tiny program of *whole* operations
//! (a PUT, a GET, an atomic, a local store or load, a wait for a flag are one
//! indivisible step each). [`Program::allowed`] enumerates every interleaving
//! of the threads' steps that respects program order and the waits, and
//! returns the set of outcomes sequential consistency allows. The runner
//! (`tests/examples/litmus.rs`) reports each iteration's outcome in the same
//! `key=value` spelling; an outcome outside the set is a forbidden one (a
//! failure), an allowed outcome never observed is a coverage gap.
//!
//! Values are small integers: `0` is a location's value at the start of the
//! iteration, `1`, `2`, ... the values the test's writers store. The runner
//! reports anything else it reads (data of an earlier iteration, a buffer
//! only partly written) as `old` or `torn`, which no program here allows.

use std::collections::{BTreeMap, BTreeSet, HashSet};

/// One indivisible step of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `loc = value`: a local store, a PUT of a constant, an atomic write.
    Write(&'static str, u64),
    /// `dst = src`: a PUT of a local buffer or a GET into one.
    Copy {
        /// Written location.
        dst: &'static str,
        /// Read location.
        src: &'static str,
    },
    /// `reg = loc`: a local load, a GET, an atomic read.
    Read {
        /// Read location.
        loc: &'static str,
        /// Register (a location only this thread writes).
        reg: &'static str,
    },
    /// `reg = loc; loc += add` as one atomic step (`reg` may be `None`).
    FetchAdd {
        /// The counter.
        loc: &'static str,
        /// Added amount.
        add: u64,
        /// Where the old value goes.
        reg: Option<&'static str>,
    },
    /// Blocks until `loc == value`: a spin wait, a join, a barrier's arrival.
    Await(&'static str, u64),
    /// Blocks until `loc == 0`, then sets it to 1, in one step: taking a
    /// lock (released by `Write(loc, 0)`).
    Lock(&'static str),
}

/// The final state of one complete interleaving: every location by name.
pub type Final = BTreeMap<&'static str, u64>;

/// A litmus program for the oracle.
#[derive(Clone, Debug)]
pub struct Program {
    /// The threads (tasks), each a list of steps in program order.
    pub threads: Vec<Vec<Op>>,
    /// Locations whose final values make up the outcome, in the reported
    /// spelling `name=value`, sorted by name.
    pub report: Vec<&'static str>,
    /// Instead of `report`: a function of the final state giving the whole
    /// outcome string (AMO-count summarises many fetched values).
    pub summarize: Option<fn(&Final) -> String>,
}

/// What [`Program::allowed`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Enumeration {
    /// Outcomes of the complete interleavings.
    pub outcomes: BTreeSet<String>,
    /// Distinct states visited (a measure of the search).
    pub states: usize,
    /// Whether some interleaving got stuck (every unfinished thread waiting
    /// for a value that can no longer come): a bug in the program.
    pub deadlock: bool,
}

impl Op {
    /// `reg = loc`.
    pub fn read(loc: &'static str, reg: &'static str) -> Op {
        Op::Read { loc, reg }
    }
}

impl Program {
    /// A program whose outcome is the final values of `report`.
    pub fn new(threads: Vec<Vec<Op>>, report: &[&'static str]) -> Program {
        Program {
            threads,
            report: report.to_vec(),
            summarize: None,
        }
    }

    /// Every location the program touches (all start at 0).
    fn locations(&self) -> Vec<&'static str> {
        let mut set = BTreeSet::new();
        for op in self.threads.iter().flatten() {
            match *op {
                Op::Write(l, _) | Op::Await(l, _) | Op::Lock(l) => {
                    set.insert(l);
                }
                Op::Copy { dst, src } => {
                    set.insert(dst);
                    set.insert(src);
                }
                Op::Read { loc, reg } => {
                    set.insert(loc);
                    set.insert(reg);
                }
                Op::FetchAdd { loc, reg, .. } => {
                    set.insert(loc);
                    if let Some(r) = reg {
                        set.insert(r);
                    }
                }
            }
        }
        set.extend(self.report.iter().copied());
        set.into_iter().collect()
    }

    /// The outcomes sequential consistency allows: all interleavings of whole
    /// steps (depth-first over states, each state once).
    pub fn allowed(&self) -> Enumeration {
        let names = self.locations();
        let index: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let at = |l: &str| index[l];
        let mut out = Enumeration::default();
        let mut seen: HashSet<(Vec<usize>, Vec<u64>)> = HashSet::new();
        let mut stack = vec![(vec![0usize; self.threads.len()], vec![0u64; names.len()])];
        while let Some((pcs, mem)) = stack.pop() {
            if !seen.insert((pcs.clone(), mem.clone())) {
                continue;
            }
            let mut finished = true;
            let mut moved = false;
            for (t, ops) in self.threads.iter().enumerate() {
                let Some(op) = ops.get(pcs[t]) else {
                    continue;
                };
                finished = false;
                let mut m = mem.clone();
                match *op {
                    Op::Write(l, v) => m[at(l)] = v,
                    Op::Copy { dst, src } => m[at(dst)] = m[at(src)],
                    Op::Read { loc, reg } => m[at(reg)] = m[at(loc)],
                    Op::FetchAdd { loc, add, reg } => {
                        let old = m[at(loc)];
                        m[at(loc)] = old.wrapping_add(add);
                        if let Some(r) = reg {
                            m[at(r)] = old;
                        }
                    }
                    Op::Await(l, v) => {
                        if m[at(l)] != v {
                            continue;
                        }
                    }
                    Op::Lock(l) => {
                        if m[at(l)] != 0 {
                            continue;
                        }
                        m[at(l)] = 1;
                    }
                }
                let mut p = pcs.clone();
                p[t] += 1;
                moved = true;
                stack.push((p, m));
            }
            if finished {
                let fin: Final = names.iter().copied().zip(mem.iter().copied()).collect();
                out.outcomes.insert(self.outcome(&fin));
            } else if !moved {
                out.deadlock = true;
            }
        }
        out.states = seen.len();
        out
    }

    /// The outcome string of a final state.
    pub fn outcome(&self, fin: &Final) -> String {
        match self.summarize {
            Some(f) => f(fin),
            None => outcome_of(self.report.iter().map(|k| (*k, fin[k].to_string()))),
        }
    }
}

/// The canonical spelling of an outcome: `key=value` pairs sorted by key,
/// separated by one space. The runner builds its outcomes with this too.
pub fn outcome_of<K: AsRef<str>, V: AsRef<str>>(kv: impl IntoIterator<Item = (K, V)>) -> String {
    let mut v: Vec<(String, String)> = kv
        .into_iter()
        .map(|(k, v)| (k.as_ref().to_string(), v.as_ref().to_string()))
        .collect();
    v.sort();
    v.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The outcome AMO-count reports when the counter and the fetched values are
/// exactly what `n` increments starting from 0 give.
pub const AMO_COUNT_OK: &str = "count=exact";

/// AMO-count's outcome for a counter that went from `start` to `end` while
/// `fetched` were the values the increments returned.
pub fn amo_count_label(end: u64, start: u64, fetched: &[u64]) -> String {
    let total = fetched.len() as u64;
    let mut sorted = fetched.to_vec();
    sorted.sort_unstable();
    let exact = sorted
        .iter()
        .enumerate()
        .all(|(i, v)| *v == start.wrapping_add(i as u64));
    if end.wrapping_sub(start) == total && exact {
        return AMO_COUNT_OK.to_string();
    }
    let dups = sorted.windows(2).filter(|w| w[0] == w[1]).count();
    let outside = sorted
        .iter()
        .filter(|v| v.wrapping_sub(start) >= total)
        .count();
    format!(
        "count=wrong(total:{}/{total},dup:{dups},outside:{outside})",
        end.wrapping_sub(start) as i64
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus::fixtures::{amo_count_summary, program, BASE_TESTS};

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_base_test_has_a_program_without_deadlock() {
        for t in BASE_TESTS {
            let e = program(t).expect(t).allowed();
            assert!(!e.deadlock, "{t} deadlocks");
            assert!(!e.outcomes.is_empty(), "{t} has no outcome");
        }
        assert!(program("NO-SUCH").is_none());
    }

    #[test]
    fn allowed_sets_are_the_sc_ones() {
        let want: [(&str, &[&str]); 10] = [
            ("PUT-SRC", &["r=1"]),
            ("GET-DST", &["r=1 x=1"]),
            ("RAW", &["r=1"]),
            ("WAW", &["r=2"]),
            ("MP-ATOMIC", &["r=1"]),
            ("MP-AM", &["r=1"]),
            ("TASK-END", &["r1=1 r2=1"]),
            ("TASK-CREATE", &["r=1"]),
            ("SB-ATOMIC", &["r0=0 r1=1", "r0=1 r1=0", "r0=1 r1=1"]),
            ("AMO-COUNT", &[AMO_COUNT_OK]),
        ];
        for (t, allowed) in want {
            assert_eq!(program(t).unwrap().allowed().outcomes, set(allowed), "{t}");
        }
    }

    /// Store buffering's forbidden outcome is reachable as soon as one
    /// thread's two steps may swap: the enumeration is not vacuous.
    #[test]
    fn sb_with_reordered_steps_reaches_the_forbidden_outcome() {
        use Op::*;
        let p = Program::new(
            vec![
                vec![Op::read("y", "r0"), Write("x", 1)],
                vec![Write("y", 1), Op::read("x", "r1")],
            ],
            &["r0", "r1"],
        );
        assert!(p.allowed().outcomes.contains("r0=0 r1=0"));
    }

    /// Message passing without the wait: every outcome but the forbidden one.
    #[test]
    fn mp_without_wait_allows_stale_flags_but_not_stale_data() {
        use Op::*;
        let p = Program::new(
            vec![
                vec![Write("d", 1), Write("f", 1)],
                vec![Op::read("f", "rf"), Op::read("d", "rd")],
            ],
            &["rf", "rd"],
        );
        assert_eq!(
            p.allowed().outcomes,
            set(&["rd=0 rf=0", "rd=1 rf=0", "rd=1 rf=1"])
        );
    }

    #[test]
    fn interleavings_are_all_visited() {
        use Op::*;
        // Two threads of three writes to private locations: C(6,3) = 20
        // interleavings, 16 distinct (pc0, pc1) states.
        let t = |a: &'static str| vec![Write(a, 1), Write(a, 2), Write(a, 3)];
        let p = Program::new(vec![t("a"), t("b")], &["a", "b"]);
        let e = p.allowed();
        assert_eq!(e.states, 16);
        assert_eq!(e.outcomes, set(&["a=3 b=3"]));
    }

    #[test]
    fn a_wait_that_cannot_be_met_is_a_deadlock() {
        use Op::*;
        let p = Program::new(vec![vec![Await("f", 1)], vec![Write("f", 2)]], &[]);
        let e = p.allowed();
        assert!(e.deadlock);
        assert!(e.outcomes.is_empty());
    }

    #[test]
    fn amo_count_labels() {
        assert_eq!(
            amo_count_label(106, 100, &[103, 100, 101, 105, 102, 104]),
            AMO_COUNT_OK
        );
        assert_eq!(
            amo_count_label(105, 100, &[103, 100, 101, 103, 102, 104]),
            "count=wrong(total:5/6,dup:1,outside:0)"
        );
        assert_eq!(
            amo_count_label(106, 100, &[100, 101, 102, 103, 104, 106]),
            "count=wrong(total:6/6,dup:0,outside:1)"
        );
        // A non-atomic increment (read 0, write back 1) racing a real one
        // loses an update: the oracle's summary sees it.
        use Op::*;
        let p = Program {
            threads: vec![
                vec![Op::read("c", "fa"), Write("c", 1)],
                vec![FetchAdd {
                    loc: "c",
                    add: 1,
                    reg: Some("fb"),
                }],
            ],
            report: vec![],
            summarize: Some(amo_count_summary),
        };
        let e = p.allowed();
        assert!(e.outcomes.contains(AMO_COUNT_OK), "{e:?}");
        assert!(
            e.outcomes
                .contains("count=wrong(total:1/2,dup:1,outside:0)"),
            "{e:?}"
        );
    }

    #[test]
    fn outcome_spelling_is_sorted() {
        assert_eq!(outcome_of([("r1", "0"), ("r0", "1")]), "r0=1 r1=0");
        assert_eq!(outcome_of(Vec::<(&str, &str)>::new()), "");
    }
}
