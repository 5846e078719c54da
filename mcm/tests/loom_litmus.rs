//! The litmus programs under loom: the real implementors, through the
//! selector, over the simulated fabric, with every interleaving of the
//! program's threads and the NIC thread explored (up to a preemption bound).
//!
//! For every mode and program: the full policy never reaches the forbidden
//! outcome; the weakened policy is caught exactly where
//! `mcm::sim::litmus::negative_control` says it must be, and where it says
//! the provider protects the program, loom finds nothing either.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p pgas-mcm --release`.
//! Preemption bound: 5, except 3 for TASK-END (four threads: two tasks, the
//! reader, the NIC) and SB-ATOMIC-SPLIT; `LOOM_MAX_PREEMPTIONS` overrides
//! both. `MCM_LOOM_TIER=ci` (the README's test command) explores those
//! two programs to bound 2: 40 times fewer interleavings, which their
//! negative controls still match; `scripts/litmus-full` runs them at 3.
#![cfg(loom)]

use std::panic::{self, AssertUnwindSafe};

use mcm::sim::litmus::{negative_control, Litmus, LitmusTest, FORBIDDEN};
use mcm::sim::ProviderOrdering;
use mcm::{Mode, Selector};

/// The preemption bound unless `LOOM_MAX_PREEMPTIONS` sets one.
fn default_preemption_bound(test: LitmusTest) -> usize {
    match test {
        LitmusTest::TaskEnd | LitmusTest::SbAtomicSplit if ci_tier() => 2,
        LitmusTest::TaskEnd | LitmusTest::SbAtomicSplit => 3,
        _ => 5,
    }
}

/// Whether `MCM_LOOM_TIER` asks for the CI tier; any other value is an
/// error naming it, so a typo cannot quietly run the wrong tier.
fn ci_tier() -> bool {
    match std::env::var("MCM_LOOM_TIER").as_deref() {
        Err(_) | Ok("full") => false,
        Ok("ci") => true,
        Ok(other) => panic!("MCM_LOOM_TIER={other:?}: expected \"ci\" or \"full\""),
    }
}

fn builder(test: LitmusTest) -> loom::model::Builder {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(default_preemption_bound(test));
    }
    builder
}

/// Explores `test` under `litmus`; panics with the violation if loom reaches
/// the forbidden outcome.
fn explore(litmus: Litmus, test: LitmusTest) {
    builder(test).check(move || {
        if let Err(violation) = test.run(&litmus) {
            panic!("{violation}");
        }
    });
}

/// Explores `test` under `litmus`; returns whether loom reached the forbidden
/// outcome. Any other panic is re-raised: a negative control must fail for
/// the right reason.
fn reaches_forbidden(litmus: Litmus, test: LitmusTest) -> bool {
    // The panic message also reaches the (captured) test output: shown only
    // if this test fails.
    match panic::catch_unwind(AssertUnwindSafe(|| explore(litmus, test))) {
        Ok(()) => false,
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            if message.contains(FORBIDDEN) {
                true
            } else {
                panic::resume_unwind(payload)
            }
        }
    }
}

fn conforms(mode: Mode, test: LitmusTest) {
    explore(Litmus::new(Selector::for_mode(mode)), test);
}

fn negative_control_as_tabled(mode: Mode, test: LitmusTest) {
    let control = negative_control(mode, test);
    let litmus = Litmus::new(Selector::weakened(mode, Some(control.weakening)));
    let caught = reaches_forbidden(litmus, test);
    assert_eq!(
        caught,
        control.caught,
        "{mode} {test} with {:?}: loom {} the forbidden outcome, the table expects {} ({})",
        control.weakening,
        if caught { "reached" } else { "never reached" },
        if control.caught {
            "it caught"
        } else {
            "it protected by the provider"
        },
        control.why
    );
}

macro_rules! litmus_tests {
    ($($module:ident: $mode:expr;)*) => {$(
        mod $module {
            use super::*;
            const MODE: Mode = $mode;
            litmus_tests!(@tests
                put_src: PutSrc, raw: Raw, raw_nb: RawNb, waw: Waw, waw_nb: WawNb,
                mp_atomic: MpAtomic, mp_atomic_split: MpAtomicSplit, mp_am: MpAm,
                mp_am_split: MpAmSplit, mp_am_nb: MpAmNb, task_end: TaskEnd,
                task_end_amo: TaskEndAmo, task_create: TaskCreate,
                task_create_nb: TaskCreateNb, sb_atomic_split: SbAtomicSplit,
                war_nb: WarNb, mp_unbound: MpUnbound, window_nb: WindowNb,
                batch_split: BatchSplit);
        }
    )*};
    (@tests $($name:ident: $test:ident),*) => {
        mod conforms {
            use super::*;
            $(#[test] fn $name() { conforms(MODE, LitmusTest::$test) })*
        }
        mod negative_control {
            use super::*;
            $(#[test] fn $name() { negative_control_as_tabled(MODE, LitmusTest::$test) })*
        }
    };
}

litmus_tests! {
    message_order_fence: Mode::MessageOrderFence;
    message_order: Mode::MessageOrder;
    delivery_complete: Mode::DeliveryComplete;
}

#[test]
fn fence_mode_without_rma_waw_breaks_waw() {
    // The original's fence-mode hints lacked RMA WAW: loom finds two PUTs to
    // one word landing in the wrong order, even with the full policy.
    let litmus = Litmus::new(Selector::for_mode(Mode::MessageOrderFence))
        .with_ordering(ProviderOrdering::ORIGINAL_FENCE);
    assert!(reaches_forbidden(litmus, LitmusTest::WawNb));
    assert!(reaches_forbidden(litmus, LitmusTest::Waw));
}

/// delivery-complete's AMO window (with atomic WAW granted): the programs
/// whose AMOs it keeps in flight conform under every interleaving, and
/// loom finds the flag overtaking the add when the window does not settle
/// another target first (`window-any-target`).
#[test]
fn delivery_complete_amo_window() {
    let window = Selector::for_mode(Mode::DeliveryComplete).with_atomic_waw();
    for test in [
        LitmusTest::MpAmoAmo,
        LitmusTest::MpAmoAmoSplit,
        LitmusTest::TaskEndAmo,
    ] {
        explore(Litmus::new(window), test);
    }
    let weakened = Selector::weakened(
        Mode::DeliveryComplete,
        Some(mcm::Weakening::WindowAnyTarget),
    )
    .with_atomic_waw();
    assert!(reaches_forbidden(
        Litmus::new(weakened),
        LitmusTest::MpAmoAmoSplit
    ));
}
