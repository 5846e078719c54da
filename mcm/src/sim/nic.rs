//! The simulated NIC: in-flight operations, which of their steps may run next
//! under the provider's ordering, and what each step does to memory.
//!
//! Every operation is one *target step* (its effect at the target: write,
//! read, atomic, handler run), and a PUT has a *source step* before it (the
//! NIC reads the local source buffer). Source steps are never ordered: the NIC
//! may read a PUT's source any time after the post. A target step may run
//! once no earlier operation of the same context to the same target that
//! orders it is still pending at the target: one whose class the provider
//! ordering orders it after, or any one at all if it, or an operation between
//! them, is fenced. All steps run under the fabric's lock, so each is atomic
//! with respect to the others; which eligible step runs next is the
//! nondeterminism (racing threads under loom, a seeded generator otherwise).

use super::ops::{Addr, ProviderOrdering, SimAmo, SimSend};
use crate::sync::{AtomicU64, Ordering};
use crate::{Locale, OpFlags};

/// What an operation does at its target.
#[derive(Clone, Debug)]
pub(super) enum Action {
    Put { src: usize, dst: usize },
    Get { src: usize, dst: usize },
    Amo(SimAmo),
    Send(SimSend),
    OrderGet,
    ProveAmo,
}

/// How the provider's ordering sees an operation.
#[derive(Clone, Copy, Debug)]
pub(super) struct Class {
    reads: bool,
    writes: bool,
    atomic: bool,
    send: bool,
}

impl Action {
    fn class(&self) -> Class {
        let (reads, writes, atomic, send) = match self {
            Action::Put { .. } => (false, true, false, false),
            Action::Get { .. } | Action::OrderGet => (true, false, false, false),
            Action::Amo(SimAmo::Write { .. } | SimAmo::Add { .. }) => (false, true, true, false),
            Action::Amo(SimAmo::Read { .. }) => (true, false, true, false),
            Action::Amo(SimAmo::FetchAdd { .. }) => (true, true, true, false),
            Action::Send(_) | Action::ProveAmo => (false, false, false, true),
        };
        Class {
            reads,
            writes,
            atomic,
            send,
        }
    }

    /// Whether the operation completes locally as soon as it is posted when
    /// not delivery-complete (it carries no source buffer and returns nothing:
    /// an AMO update or a send is "transmitted" at once, the most
    /// adversarial reading of transmit-complete).
    fn completes_at_post(&self) -> bool {
        matches!(
            self,
            Action::Amo(SimAmo::Write { .. } | SimAmo::Add { .. }) | Action::Send(_)
        )
    }
}

impl ProviderOrdering {
    /// Whether this provider delivers `later` after `earlier` when both go
    /// from one context to one target.
    fn orders(&self, earlier: Class, later: Class) -> bool {
        let (a, b) = (earlier, later);
        (self.raw && a.writes && b.reads)
            || (self.waw && a.writes && b.writes)
            || (self.saw && a.writes && b.send)
            || (self.sas && a.send && b.send)
            || (self.rma_waw && a.writes && !a.atomic && b.writes && !b.atomic)
            || (self.atomic_waw && a.writes && a.atomic && b.writes && b.atomic)
            || (self.atomic_raw && a.writes && a.atomic && b.reads && b.atomic)
    }
}

/// Where a PUT's source value is.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// Not a PUT.
    None,
    /// The NIC has not read it yet.
    Pending,
    /// Read; this is the value that will land.
    Read(u64),
}

/// One posted operation, until it has both completed locally and done its
/// target step.
#[derive(Debug)]
pub(super) struct InFlight {
    ctx: usize,
    initiator: Locale,
    target: Locale,
    flags: OpFlags,
    action: Action,
    class: Class,
    source: Source,
    target_done: bool,
    locally_complete: bool,
}

impl InFlight {
    pub(super) fn new(
        ctx: usize,
        initiator: Locale,
        target: Locale,
        action: Action,
        flags: OpFlags,
    ) -> Self {
        let dc = flags.contains(OpFlags::DELIVERY_COMPLETE);
        InFlight {
            ctx,
            initiator,
            target,
            flags,
            class: action.class(),
            source: if matches!(action, Action::Put { .. }) {
                Source::Pending
            } else {
                Source::None
            },
            locally_complete: !dc && action.completes_at_post(),
            action,
            target_done: false,
        }
    }
}

/// A runnable step: the operation's index in [`Nic::ops`] and which step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Source(usize),
    Target(usize),
}

/// The in-flight operations of the whole fabric, in posting order.
#[derive(Debug, Default)]
pub(super) struct Nic {
    pub(super) ops: Vec<InFlight>,
}

impl Nic {
    /// Whether context `ctx` has an operation not yet locally complete.
    pub(super) fn has_incomplete(&self, ctx: usize) -> bool {
        self.ops
            .iter()
            .any(|op| op.ctx == ctx && !op.locally_complete)
    }

    /// The steps that may run now, of context `ctx` only or of all, in
    /// posting order.
    pub(super) fn runnable(&self, ordering: &ProviderOrdering, ctx: Option<usize>) -> Vec<Step> {
        let mut steps = Vec::new();
        for (i, op) in self.ops.iter().enumerate() {
            if ctx.is_some_and(|c| c != op.ctx) {
                continue;
            }
            if matches!(op.source, Source::Pending) {
                steps.push(Step::Source(i));
            } else if !op.target_done && !self.held_back(ordering, i) {
                steps.push(Step::Target(i));
            }
        }
        steps
    }

    /// Whether the target step of operation `i` must wait for an earlier one.
    fn held_back(&self, ordering: &ProviderOrdering, i: usize) -> bool {
        let b = &self.ops[i];
        let same_pair = |op: &InFlight| op.ctx == b.ctx && op.target == b.target;
        // The latest fenced operation of the pair at or before `b`: everything
        // of the pair posted before it must have landed first.
        let fence_at = self.ops[..=i]
            .iter()
            .rposition(|op| same_pair(op) && op.flags.contains(OpFlags::FENCE));
        self.ops[..i].iter().enumerate().any(|(j, a)| {
            same_pair(a)
                && !a.target_done
                && (fence_at.is_some_and(|f| j < f) || ordering.orders(a.class, b.class))
        })
    }

    /// Runs `step`: its memory effect, then the bookkeeping; retires the
    /// operation once it is both complete and landed.
    pub(super) fn run(&mut self, step: Step, memory: &[Vec<AtomicU64>]) {
        let load = |a: Addr| memory[a.locale][a.word].load(Ordering::SeqCst);
        let store = |a: Addr, v: u64| memory[a.locale][a.word].store(v, Ordering::SeqCst);
        let i = match step {
            Step::Source(i) | Step::Target(i) => i,
        };
        let op = &mut self.ops[i];
        let dc = op.flags.contains(OpFlags::DELIVERY_COMPLETE);
        let local = |word| Addr::new(op.initiator, word);
        let remote = |word| Addr::new(op.target, word);
        match step {
            Step::Source(_) => {
                let Action::Put { src, .. } = op.action else {
                    unreachable!("only a PUT has a source step")
                };
                op.source = Source::Read(load(local(src)));
                op.locally_complete = !dc;
            }
            Step::Target(_) => {
                match op.action.clone() {
                    Action::Put { dst, .. } => {
                        let Source::Read(value) = op.source else {
                            unreachable!("a PUT lands only after its source was read")
                        };
                        store(remote(dst), value);
                    }
                    Action::Get { src, dst } => store(local(dst), load(remote(src))),
                    Action::Amo(SimAmo::Write { word, value }) => store(remote(word), value),
                    Action::Amo(SimAmo::Add { word, value }) => {
                        memory[op.target][word].fetch_add(value, Ordering::SeqCst);
                    }
                    Action::Amo(SimAmo::Read { word, dst }) => {
                        store(local(dst), load(remote(word)))
                    }
                    Action::Amo(SimAmo::FetchAdd { word, value, dst }) => {
                        let old = memory[op.target][word].fetch_add(value, Ordering::SeqCst);
                        store(local(dst), old);
                    }
                    Action::Send(SimSend::CopyWord { from, to }) => store(remote(to), load(from)),
                    // The order-dummy word is never written: reading it is
                    // pure ordering, so the step has no memory effect.
                    Action::OrderGet => {}
                    // The no-op handler ran and its reply is back.
                    Action::ProveAmo => {}
                }
                op.target_done = true;
                op.locally_complete = true;
            }
        }
        if op.target_done && op.locally_complete {
            self.ops.remove(i);
        }
    }
}
