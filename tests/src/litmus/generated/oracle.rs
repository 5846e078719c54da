//! The generator's SC oracle: every interleaving of whole steps, with
//! on-statements and begins split into a start and a join, locks, barriers,
//! and a data-race check (a racy program has no promised outcomes).

use super::program::{Program, Step};
use std::collections::{BTreeSet, HashSet};

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

impl Program {
    /// The SC outcomes, or why the program is not a valid litmus program
    /// (a data race, a deadlock in some interleaving).
    pub fn allowed(&self) -> Result<BTreeSet<String>, String> {
        Oracle::new(self).run()
    }
}
