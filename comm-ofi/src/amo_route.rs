//! One owner for remote atomics: where each type's atomics go, and the
//! ordering every route must keep.
//!
//! Exists because the decision used to be taken in four places (comm-ofi,
//! the AM layer, the runtime shim, the unordered path) with the ordering
//! obligations repeated, and missed, in some of them: an atomic on the
//! caller's own locale returned through a CPU shortcut before the caller's
//! earlier stores were forced visible. Here the route is fixed per type at
//! start-up ([`AmoRoutes::plan`]) and every caller goes through
//! [`Comm::amo`](crate::Comm::amo), which does, for every route:
//!
//! 1. validation (locale, alignment, the word inside the owner's heap);
//! 2. SC-atomic ordering: the caller's postponed AMOs are settled and its
//!    earlier stores forced visible before the atomic is performed (the
//!    native route leaves this to the MCM selector, which knows the mode);
//! 3. the atomic itself:
//!    * [`AmoRoute::Native`]: the provider's atomic, through the selector;
//!    * [`AmoRoute::Cpu`], word on this locale: a CPU atomic here;
//!    * [`AmoRoute::Cpu`], word elsewhere: the AM layer sends it to the owner,
//!      whose handler applies it with CPU atomics. A non-fetching one may be
//!      *postponed* (its 'done' awaited at the next boundary) only on a
//!      thread with a bound transmit context: two AMs of one task leave on
//!      one context and are applied in order; on shared contexts they could
//!      overtake each other.
//!
//! A type's atomics all take the same route on every locale for the whole
//! run: a NIC atomic and a CPU atomic on one word are not atomic with
//! respect to each other.

use crate::addr::GlobalAddr;
use crate::am_seam::PostponedAmo;
use crate::amo::{AmoForm, AmoOp, AmoType, NativeAtomics};
use crate::error::{Error, Result};
use mcm::Locale;

/// How the atomics of one type are carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AmoRoute {
    /// The provider's atomics (every op of the type is native).
    Native,
    /// CPU atomics at the word's owner: here for this locale's words, through
    /// an active message for the others'.
    Cpu,
}

/// The route of every [`AmoType`], fixed at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AmoRoutes([AmoRoute; 10]);

impl AmoRoutes {
    /// A type is native if the provider does every op of it natively and
    /// the user did not ask for CPU atomics everywhere (`PGAS_AMO_VIA_AM`).
    pub fn plan(native: &NativeAtomics, via_am: bool) -> AmoRoutes {
        AmoRoutes(AmoType::ALL.map(|ty| {
            // NativeAtomics keeps a type native only as a whole.
            if !via_am && native.supports(ty, AmoOp::Read, AmoForm::Fetch) {
                AmoRoute::Native
            } else {
                AmoRoute::Cpu
            }
        }))
    }

    /// The route of `ty`.
    pub fn of(&self, ty: AmoType) -> AmoRoute {
        self.0[ty.index()]
    }

    /// How many types are native (for the verbose line).
    pub fn native_types(&self) -> usize {
        self.0.iter().filter(|r| **r == AmoRoute::Native).count()
    }
}

/// An address aligned to the atomic's type.
pub(crate) fn check_aligned(target: GlobalAddr, ty: AmoType) -> Result<()> {
    if target.addr % ty.size() as u64 != 0 {
        return Err(Error::Misaligned {
            locale: target.locale,
            addr: target.addr,
            align: ty.size(),
            what: "remote atomic",
        });
    }
    Ok(())
}

/// An op defined on the type.
#[inline]
pub(crate) fn check_op(ty: AmoType, op: AmoOp) -> Result<()> {
    if !crate::cpu_amo::valid(ty, op) {
        return Err(op_not_defined(ty, op));
    }
    Ok(())
}

/// [`check_op`]'s error (out of line: the atomics that pass carry none of it).
#[cold]
#[inline(never)]
fn op_not_defined(ty: AmoType, op: AmoOp) -> Error {
    Error::Unsupported(format!("{op:?} is not defined on {ty:?}"))
}

/// What the MCM policy must know of an atomic: whether it reads, writes, both.
#[inline]
pub(crate) fn policy_kind(op: AmoOp, fetch: bool) -> mcm::AmoKind {
    match (AmoForm::of(op, fetch), op) {
        (AmoForm::Plain, _) => mcm::AmoKind::Update,
        (_, AmoOp::Read) => mcm::AmoKind::Read,
        _ => mcm::AmoKind::FetchUpdate,
    }
}

/// Which of a context's postponed AMOs an operation must see settled first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Settle {
    /// None (an AM send of the AM layer's own, a reply).
    Nothing,
    /// All of them, if any went to this locale (a PUT or GET there must see
    /// them: they are stores of the same task).
    IfAnyTo(Locale),
    /// All of them, if any went elsewhere than this locale (a postponed AMO
    /// to it is ordered behind them anyway).
    AllIfAnyNotTo(Locale),
    /// All of them (an SC atomic, a boundary).
    All,
}

impl Settle {
    #[inline]
    pub(crate) fn applies(self, list: &[PostponedAmo]) -> bool {
        if list.is_empty() {
            return false;
        }
        match self {
            Settle::Nothing => false,
            Settle::IfAnyTo(t) => list.iter().any(|p| p.target == t),
            Settle::AllIfAnyNotTo(t) => list.iter().any(|p| p.target != t),
            Settle::All => true,
        }
    }
}

impl crate::ctx::TxContext {
    /// Whether this context has postponed AMOs in flight (for tests and
    /// diagnostics).
    pub fn has_postponed(&self) -> bool {
        !self.postponed.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(target: Locale) -> PostponedAmo {
        PostponedAmo { target, token: 8 }
    }

    #[test]
    fn settle_rules() {
        let none: [PostponedAmo; 0] = [];
        for s in [Settle::All, Settle::IfAnyTo(1), Settle::AllIfAnyNotTo(1)] {
            assert!(!s.applies(&none), "{s:?} with nothing postponed");
        }
        let to1 = [p(1), p(1)];
        assert!(Settle::All.applies(&to1));
        assert!(!Settle::Nothing.applies(&to1));
        assert!(Settle::IfAnyTo(1).applies(&to1));
        assert!(!Settle::IfAnyTo(2).applies(&to1));
        assert!(!Settle::AllIfAnyNotTo(1).applies(&to1));
        assert!(Settle::AllIfAnyNotTo(2).applies(&to1));
        let mixed = [p(1), p(3)];
        assert!(Settle::AllIfAnyNotTo(1).applies(&mixed));
        assert!(Settle::IfAnyTo(3).applies(&mixed));
    }

    #[test]
    fn a_type_is_native_only_if_every_op_is_and_via_am_overrides() {
        let all = NativeAtomics::probe(|_, _, _| true);
        let r = AmoRoutes::plan(&all, false);
        assert_eq!(r.native_types(), 10);
        assert_eq!(r.of(AmoType::U64), AmoRoute::Native);
        assert_eq!(AmoRoutes::plan(&all, true).native_types(), 0);
        let no_i32_min =
            NativeAtomics::probe(|ty, op, _| !(ty == AmoType::I32 && op == AmoOp::Min));
        let r = AmoRoutes::plan(&no_i32_min, false);
        assert_eq!(r.of(AmoType::I32), AmoRoute::Cpu);
        assert_eq!(r.of(AmoType::I64), AmoRoute::Native);
        assert_eq!(
            AmoRoutes::plan(&NativeAtomics::none(), false).native_types(),
            0
        );
    }

    #[test]
    fn policy_kinds() {
        assert_eq!(policy_kind(AmoOp::Add, false), mcm::AmoKind::Update);
        assert_eq!(policy_kind(AmoOp::Add, true), mcm::AmoKind::FetchUpdate);
        assert_eq!(policy_kind(AmoOp::Read, true), mcm::AmoKind::Read);
        assert_eq!(
            policy_kind(AmoOp::CompareSwap, false),
            mcm::AmoKind::FetchUpdate
        );
    }
}
