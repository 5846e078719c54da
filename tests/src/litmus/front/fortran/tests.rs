use super::emit::emit;
use super::*;

/// Each program and the outcomes SC allows it, `|` between outcomes.
const WANT: &str = "mp_sync_images: r=1
mp_event: r=1
mp_lock: ab=1
sb_sync_memory: r1=0 r2=1 | r1=1 r2=0 | r1=1 r2=1
mp_transitive: r=1
mp_event_relay: r=1
mp_get_third: r=1
mp_sync_memory: r=1";

#[test]
fn the_eight_programs_allow_their_sc_outcomes_only() {
    assert_eq!(catalogue().len(), WANT.lines().count());
    for line in WANT.lines() {
        let (name, ok) = line.split_once(": ").expect("name: outcomes");
        let p = find(name).expect(name);
        let want: BTreeSet<String> = ok.split(" | ").map(String::from).collect();
        assert_eq!(allowed(&p), want, "{name}");
    }
}

#[test]
fn image_counts_and_rounds_are_the_programs() {
    let third = [
        "mp_transitive",
        "mp_event_relay",
        "mp_get_third",
        "mp_sync_memory",
    ];
    let quarter = [
        "mp_lock",
        "sb_sync_memory",
        "mp_transitive",
        "mp_event_relay",
    ];
    for p in catalogue() {
        let want = if third.contains(&p.name) { 3 } else { 2 };
        assert_eq!(p.min_images(), want, "{}", p.name);
        let r = if quarter.contains(&p.name) { 50 } else { 200 };
        assert_eq!(p.rounds(200), r, "{}", p.name);
    }
}

/// The oracle is not vacuous: without the image control statements (or
/// the lock) the forbidden outcomes become reachable.
#[test]
fn without_the_synchronisation_the_forbidden_outcomes_are_reachable() {
    let strip = |p: &FProg, drop: fn(&Step) -> bool| FProg {
        threads: p
            .threads
            .iter()
            .map(|t| t.iter().copied().filter(|s| !drop(s)).collect())
            .collect(),
        ..p.clone()
    };
    let mp = find("mp_get_third").unwrap();
    let bare = strip(&mp, |s| matches!(s, Step::SyncImages(_)));
    assert!(allowed(&bare).contains("r=0"), "{:?}", allowed(&bare));
    let lock = find("mp_lock").unwrap();
    let bare = strip(&lock, |s| matches!(s, Step::Lock(_) | Step::Unlock(_)));
    assert!(allowed(&bare).contains("ab=torn"));
    let sb = find("sb_sync_memory").unwrap();
    let swapped = FProg {
        threads: sb
            .threads
            .iter()
            .map(|t| vec![t[0], t[1], t[4], t[2], t[5]])
            .collect(),
        ..sb.clone()
    };
    assert!(allowed(&swapped).contains("r1=0 r2=0"));
}

#[test]
fn output_lines_parse_back_and_are_checked() {
    let p = find("sb_sync_memory").unwrap();
    let out = "noise\n litmus-caf prog=sb_sync_memory vals=0,1 count=7\n\
               litmus-caf prog=sb_sync_memory vals=0,0 count=2\n\
               litmus-caf prog=mp_event vals=1 count=9\n\
               litmus-caf prog=sb_sync_memory vals=254,1 count=1\n\
               litmus-caf prog=sb_sync_memory done=10\n";
    let c = check(&p, out);
    assert_eq!(c.rounds, Some(10));
    assert_eq!((c.tally.iters, c.tally.forbidden), (10, 3));
    assert_eq!(c.gaps, ["r1=1 r2=0", "r1=1 r2=1"]);
    assert!(c
        .line(&p)
        .starts_with("sb_sync_memory: 3 forbidden outcomes in 10 rounds ("));
    let lock = find("mp_lock").unwrap();
    let c = check(&lock, "litmus-caf prog=mp_lock vals=overflow count=1\n");
    assert_eq!((c.tally.forbidden, c.rounds), (1, None));
}

#[test]
fn every_program_emits_its_steps() {
    for p in catalogue() {
        let f = emit(&p);
        assert!(f.contains(&format!("program {}", p.name)));
        assert!(
            f.lines().all(|l| l.len() <= 132),
            "{}: a line too long",
            p.name
        );
    }
    let f = emit(&find("mp_event_relay").unwrap());
    assert!(f.contains("event post(e_go1[3])"), "{f}");
    assert!(f.contains("buf(1:n) = d_payload(1:n)\n"), "{f}");
    let f = emit(&find("mp_sync_images").unwrap());
    assert!(f.contains("d_payload(1:n)[base + 2] = src(1:n)"), "{f}");
    let f = emit(&find("mp_lock").unwrap());
    assert!(f.contains("lock(lck[1])"), "{f}");
}
