//! The litmus programs over the simulated fabric with seeded progress: every
//! mode conforms for every seed, and every negative control of the table in
//! `mcm::sim::litmus::negative_control` behaves as the table says (caught for
//! some seed where it must be, never where the provider protects the program).
//! Quick and reproducible; the exhaustive check is the loom suite.
#![cfg(not(loom))]

use mcm::sim::litmus::{negative_control, Litmus, LitmusTest};
use mcm::sim::ProviderOrdering;
use mcm::{Mode, Selector};

const SEEDS: u64 = 128;

/// The seeds of `test` under `litmus` that reached the forbidden outcome.
fn violating_seeds(litmus: Litmus, test: LitmusTest) -> Vec<u64> {
    (0..SEEDS)
        .filter(|&seed| test.run(&litmus.seeded(seed)).is_err())
        .collect()
}

/// Asserts that every one of `tests` reaches its forbidden outcome under
/// `litmus` for some seed (a negative control); `when` says in what case.
fn assert_breaks(litmus: Litmus, tests: &[LitmusTest], when: &str) {
    for &test in tests {
        assert!(
            !violating_seeds(litmus, test).is_empty(),
            "{test} should break {when}"
        );
    }
}

#[test]
fn every_mode_conforms_for_every_seed() {
    for mode in Mode::PREFERENCE {
        for test in LitmusTest::ALL {
            let litmus = Litmus::new(Selector::for_mode(mode));
            for seed in 0..SEEDS {
                if let Err(v) = test.run(&litmus.seeded(seed)) {
                    panic!("{mode}, seed {seed}: {v}");
                }
            }
        }
    }
}

#[test]
fn negative_controls_behave_as_the_table_says() {
    for mode in Mode::PREFERENCE {
        for test in LitmusTest::ALL {
            let control = negative_control(mode, test);
            let litmus = Litmus::new(Selector::weakened(mode, Some(control.weakening)));
            let seeds = violating_seeds(litmus, test);
            if control.caught {
                assert!(
                    !seeds.is_empty(),
                    "{mode} {test}: weakened ({:?}) policy never caught in {SEEDS} seeds, \
                     but the table says it must be ({})",
                    control.weakening,
                    control.why
                );
            } else {
                assert!(
                    seeds.is_empty(),
                    "{mode} {test}: weakened policy caught (seeds {seeds:?}), \
                     but the table says the provider protects it ({})",
                    control.why
                );
            }
        }
    }
}

#[test]
fn fence_mode_needs_rma_waw_which_the_original_dropped() {
    // With the original's fence-mode hints (no RMA WAW), even the full policy
    // lets two PUTs to one word land in the wrong order.
    let litmus = Litmus::new(Selector::for_mode(Mode::MessageOrderFence))
        .with_ordering(ProviderOrdering::ORIGINAL_FENCE);
    assert_breaks(
        litmus,
        &[LitmusTest::Waw, LitmusTest::WawNb],
        "without RMA WAW",
    );
}

#[test]
fn message_order_amos_rely_on_waw_at_their_own_target() {
    // The negative control of the add window's shortcut (message-order forces
    // only the *other* targets before an AMO): over a provider without WAW
    // ordering the full policy lets the flag AMO overtake the data AMO at
    // their common target, so MP-AMO-AMO and MP-atomic see it; with WAW
    // they never do (every_mode_conforms_for_every_seed).
    let no_waw = ProviderOrdering {
        waw: false,
        atomic_waw: false,
        rma_waw: false,
        ..ProviderOrdering::for_mode(Mode::MessageOrder)
    };
    let litmus = Litmus::new(Selector::for_mode(Mode::MessageOrder)).with_ordering(no_waw);
    assert_breaks(
        litmus,
        &[LitmusTest::MpAmoAmo, LitmusTest::MpAtomic],
        "without WAW when the AMO forces only the other targets",
    );
}

#[test]
fn delivery_complete_waits_out_only_overlapping_puts() {
    // The negative control of the range shortcut (a non-blocking PUT is
    // waited out only before a PUT or GET that may touch its bytes): blind
    // to ranges, the second PUT to one word overtakes the first, and a GET
    // reads around a PUT still in flight.
    let blind = Litmus::new(Selector::weakened(
        Mode::DeliveryComplete,
        Some(mcm::Weakening::RangeBlind),
    ));
    assert_breaks(
        blind,
        &[LitmusTest::WawNb, LitmusTest::RawNb, LitmusTest::WindowNb],
        "when delivery-complete ignores overlaps",
    );
}

/// delivery-complete over a provider that grants atomic WAW: the AMO window.
fn dc_window() -> Selector<mcm::sim::SimTxContext> {
    Selector::for_mode(Mode::DeliveryComplete).with_atomic_waw()
}

#[test]
fn delivery_complete_amo_window_conforms_for_every_seed() {
    let litmus = Litmus::new(dc_window());
    assert!(
        litmus.ordering.atomic_waw,
        "the window's provider grants it"
    );
    for test in LitmusTest::ALL {
        for seed in 0..SEEDS {
            if let Err(v) = test.run(&litmus.seeded(seed)) {
                panic!("delivery-complete with the AMO window, seed {seed}: {v}");
            }
        }
    }
}

#[test]
fn delivery_complete_amo_window_relies_on_atomic_waw() {
    // The window leaves the data add in flight while the flag write goes
    // to the same target: over a provider without atomic WAW the flag can
    // land first (MP-AMO-AMO), which the same program never shows with it.
    let litmus =
        Litmus::new(dc_window()).with_ordering(ProviderOrdering::for_mode(Mode::DeliveryComplete));
    assert_breaks(
        litmus,
        &[LitmusTest::MpAmoAmo],
        "when the window runs without atomic WAW",
    );
}

#[test]
fn delivery_complete_amo_window_settles_before_another_target() {
    // The negative control of the window's settle: going on across targets,
    // the flag at L2 lands before the add at L1 (MP-AMO-AMO-split).
    let litmus = Litmus::new(
        Selector::weakened(
            Mode::DeliveryComplete,
            Some(mcm::Weakening::WindowAnyTarget),
        )
        .with_atomic_waw(),
    );
    assert_breaks(
        litmus,
        &[LitmusTest::MpAmoAmoSplit],
        "when the window does not settle other targets",
    );
    // The weakening changes nothing without the window.
    let plain = Litmus::new(Selector::weakened(
        Mode::DeliveryComplete,
        Some(mcm::Weakening::WindowAnyTarget),
    ));
    assert!(violating_seeds(plain, LitmusTest::MpAmoAmoSplit).is_empty());
}
