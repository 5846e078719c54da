//! Unit tests of the generator and its oracle.

use super::build::*;
use super::families::generate;
use super::program::*;
use std::collections::BTreeSet;

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The generated programs, and whether the text of one of them holds every
/// one of some needles.
fn generated_with_search() -> (Vec<Program>, impl Fn(&[&str]) -> bool) {
    let all = generate();
    let text: Vec<String> = all.iter().map(|p| p.text()).collect();
    let has = move |needle: &[&str]| text.iter().any(|t| needle.iter().all(|n| t.contains(n)));
    (all, has)
}

#[test]
fn every_generated_program_is_valid_and_has_outcomes() {
    let all = generate();
    assert!(all.len() > 200, "only {} programs", all.len());
    for p in &all {
        let allowed = p.allowed().unwrap_or_else(|e| panic!("{p}: {e}"));
        assert!(!allowed.is_empty(), "{p}");
        for t in &p.threads {
            assert!(t.locale < LOCALES);
        }
    }
}

#[test]
fn mp_forbids_the_stale_read_and_allows_the_rest() {
    let mut b = B::new();
    let d = b.word(2, false);
    let f = b.word(0, true);
    let t0 = b.thread(0, ThreadKind::Task);
    let t1 = b.thread(1, ThreadKind::Task);
    b.push(t0, Step::put(d, 1));
    b.push(t0, Step::AWrite { w: f, v: 1 });
    b.push(t1, Step::Await { w: f, v: 1 });
    let r = b.reg();
    b.push(t1, Step::Get { w: d, r, nb: None });
    let p = b.build("MP", Size::Eight, false);
    assert_eq!(p.allowed().unwrap(), set(&["r0=1 w0=1 w1=1"]));
}

#[test]
fn sb_forbids_both_zero() {
    let all = generate();
    let p = all
        .iter()
        .find(|p| p.family == "SB" && p.words[0].home == 2 && p.words[1].home == 3)
        .expect("SB split");
    let allowed = p.allowed().unwrap();
    assert!(
        !allowed.iter().any(|o| o.starts_with("r0=0 r1=0")),
        "{allowed:?}"
    );
    assert_eq!(allowed.len(), 3, "{allowed:?}");
}

#[test]
fn a_racy_program_is_rejected() {
    let mut b = B::new();
    let d = b.word(1, false);
    let t0 = b.thread(0, ThreadKind::Task);
    let t1 = b.thread(1, ThreadKind::Task);
    b.push(t0, Step::put(d, 1));
    let r = b.reg();
    b.push(t1, Step::Get { w: d, r, nb: None });
    let e = b.build("X", Size::Eight, false).allowed().unwrap_err();
    assert!(e.contains("data race on w0"), "{e}");
}

#[test]
fn war_and_barrier_and_joins_are_ordered() {
    for p in generate()
        .iter()
        .filter(|p| matches!(p.family, "WAR" | "BARRIER" | "TASK-END" | "TASK-CREATE"))
    {
        assert_eq!(p.allowed().unwrap().len(), 1, "{p}: deterministic under SC");
    }
}

#[test]
fn the_holes_found_in_review_are_among_the_programs() {
    let (_, has) = generated_with_search();
    // 1. local atomic after a remote PUT (flag on the acting locale).
    assert!(has(&["T0@L0 task: put w0@L2=1; w1@L0.write(1)"]));
    // 2. store buffering with the atomics on two other locales.
    assert!(has(&["w0@L2.write(1); r0=w1@L3.read()"]));
    // 3. a non-blocking on-statement to the acting locale.
    assert!(has(&["put w0@L1=1; on_nb L0"]));
    // 4. two non-fetching atomics from an unbound thread.
    assert!(has(&["T0@L0 foreign: w0@L1.add(1); w1@L1.write(1)"]));
    // 5. a non-blocking GET then a PUT of the same word.
    assert!(has(&["r0=get_nb w0@L1 (h0); put w0@L1=2"]));
    // 7. a barrier entered from a task.
    assert!(has(&["T0@L0 task: put w0@L1=1; barrier"]));
}

#[test]
fn the_holes_of_the_fast_paths_are_among_the_programs() {
    let (all, has) = generated_with_search();
    // 1. get_nb, then a release by an atomic on the acting locale or a
    //    third one (a mapped peer in the mixed-host cells).
    assert!(has(&[
        "r0=get_nb w0@L1 (h0); w1@L0.write(1)",
        "put w0@L1=2"
    ]));
    assert!(has(&[
        "r0=get_nb w0@L1 (h0); w1@L2.write(1)",
        "put w0@L1=2"
    ]));
    // 2. a store that settles a postponed AMO while a begun task waits,
    //    then an atomic on the acting locale.
    assert!(has(&[
        "begin {T1}; w0@L1.add(1); put w1@L1=1; w2@L0.write(1)"
    ]));
    // 3. store buffering through test_local.
    assert!(has(&["w0@L1.write(1); r0=test_local w1@L0==1"]));
    // 4. data in static memory, then a fence and a heap flag to one locale.
    assert!(has(&["put w0s@L2=1; fence; put_flag w1@L2=1"]));
    // the point-to-point waits in MP, put-with-signal, locks, collectives.
    assert!(has(&["wait_until_local w1@L1==1"]));
    assert!(has(&["poll test_local w1@L1==1"]));
    assert!(has(&["put_signal w0@L2=1 sig w1@L2"]));
    assert!(has(&["lock w0lock@L3; r0=incr w1@L2; unlock w0lock@L3"]));
    assert!(has(&["alltoall"]));
    assert!(all.iter().any(|p| p.size == Size::OverMaxMsg));
}

#[test]
fn the_new_families_have_the_outcomes_they_should() {
    let all = generate();
    for p in all.iter().filter(|p| p.family == "SB-LOCAL") {
        let allowed = p.allowed().unwrap();
        assert!(
            !allowed.iter().any(|o| o.starts_with("r0=0 r1=0")),
            "{p}: {allowed:?}"
        );
    }
    for p in all
        .iter()
        .filter(|p| matches!(p.family, "FENCE" | "SIGNAL" | "NESTED" | "COLLECTIVE"))
    {
        assert_eq!(p.allowed().unwrap().len(), 1, "{p}: deterministic under SC");
    }
    for p in all.iter().filter(|p| p.family == "LOCK") {
        let allowed = p.allowed().unwrap();
        // Three holders in some order: registers a permutation of
        // 0, 1, 2, the word 3, the lock free.
        assert_eq!(allowed.len(), 6, "{p}: {allowed:?}");
        assert!(
            allowed.iter().all(|o| o.ends_with("w0=0 w1=3")),
            "{allowed:?}"
        );
    }
}
