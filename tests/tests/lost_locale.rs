//! A locale lost without the launcher noticing (issue 39; docs/launcher.md
//! "Failure guarantees"): under mpirun the victim runs under a shell that
//! outlives it, so mpirun sees no process end (as when mpirun misses a
//! host's deaths, seen on the multi-host bed). Without `PGAS_PEER_TIMEOUT`
//! the survivors used to wait for it forever; now the collective service's
//! connections tell: the job ends in bounded time with a message naming the
//! lost locale (`pgas locale 0: abort: locale 1 died: ...`).

use pgas_tests::{example, mpirun_launch, MpiRun};
use std::path::Path;
use std::time::Duration;

/// mpirun's own bound: reaching it is the hang this test is about.
const LIMIT: Duration = Duration::from_secs(60);
/// The job must be down this soon after the start (start-up included).
const BOUND: Duration = Duration::from_secs(40);

/// Runs `PROGRAM ARGS` on 3 locales over tcp, locale `victim` under
/// `victim_sh` (a shell script given the program and its arguments as
/// "$@" that kills it or lets it die, then sleeps on).
fn run(victim: usize, victim_sh: &str, program: &str, args: &[&str]) -> MpiRun {
    let script = format!(
        "if [ \"$OMPI_COMM_WORLD_RANK\" = {victim} ]; then {victim_sh}; sleep 120; else exec \"$@\"; fi"
    );
    let prog = example(program);
    let mut all = vec!["-c", &script, "sh", prog.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    mpirun_launch(
        3,
        Path::new("/bin/sh"),
        &all,
        &[("PGAS_PROVIDER", "tcp")],
        LIMIT,
    )
}

fn assert_named(r: &MpiRun, victim: usize, what: &str) {
    let all = format!("{}\n{}", r.run.stdout, r.run.stderr);
    assert!(!r.run.ok(), "{what}: the job passed:\n{all}");
    assert!(
        r.elapsed < BOUND,
        "{what}: HANG: the job took {:?} (bound {BOUND:?}):\n{all}",
        r.elapsed
    );
    assert!(
        all.contains(&format!("locale {victim} died")),
        "{what}: nothing names locale {victim} as died:\n{all}"
    );
    eprintln!("lost_locale {what}: job down after {:?}", r.elapsed);
}

/// Locale 1 SIGKILLs itself while the others wait for its on-statement
/// replies: locale 0's collective service sees its connection close.
#[test]
fn a_locale_lost_unseen_by_the_launcher_ends_the_job_naming_it() {
    let r = run(1, "\"$@\"", "fault_probe", &["kill:on"]);
    assert_named(&r, 1, "locale 1 killed");
}

/// Locale 0 (the collective service's host) killed mid-run by its shell:
/// the others see their connections to it close.
#[test]
fn locale_0_lost_unseen_by_the_launcher_ends_the_job_naming_it() {
    let kill_when_running = "f=$(mktemp); \"$@\" >$f 2>&1 & p=$!; \
         until grep -q 'soak sample' $f; do sleep 0.1; done; kill -9 $p; cat $f; rm -f $f";
    let r = run(0, kill_when_running, "soak", &["60", "1"]);
    assert_named(&r, 0, "locale 0 killed");
}
