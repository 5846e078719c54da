//! A locale lost without the launcher noticing (issue 39; docs/launcher.md
//! "Failure guarantees"): under mpirun the victim runs under a shell that
//! outlives it, so mpirun sees no process end (as when mpirun misses a
//! host's deaths, seen on the multi-host bed). Without `PGAS_PEER_TIMEOUT`
//! the survivors used to wait for it forever; now the collective service's
//! connections tell: the job ends in bounded time with a message naming the
//! lost locale (`pgas locale 0: abort: locale 1 died: ...`). A locale that
//! ends early by itself (an exit before finalize, an abort) is named by that
//! cause, which it sends to the service first (`locale 0 exited with status
//! 3 before it finalized`), not as "died" (issue 39: the survivors of a
//! locale 0 whose allreduce failed on the bed all blamed its death).

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
    run_env(victim, victim_sh, program, args, &[])
}

fn run_env(
    victim: usize,
    victim_sh: &str,
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> MpiRun {
    let script = format!(
        "if [ \"$OMPI_COMM_WORLD_RANK\" = {victim} ]; then {victim_sh}; sleep 120; else exec \"$@\"; fi"
    );
    let prog = example(program);
    let mut all = vec!["-c", &script, "sh", prog.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    let mut vars = vec![("PGAS_PROVIDER", "tcp")];
    vars.extend_from_slice(env);
    mpirun_launch(3, Path::new("/bin/sh"), &all, &vars, LIMIT)
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

/// A locale that exits with status 3 before finalize, under a shell that
/// hides the exit from mpirun, while the others send it on-statements: the
/// job ends naming that cause, for locale 1 (seen by the service in
/// locale 0) and for locale 0 (the service's host: the survivors hear the
/// cause from it before its connection closes), never as "died".
#[test]
fn a_locale_that_exits_early_is_named_by_its_cause_not_its_death() {
    for victim in [1usize, 0] {
        let v = victim.to_string();
        let r = run_env(
            victim,
            "\"$@\"",
            "fault_probe",
            &["exit3:on"],
            &[("FAULT_PROBE_VICTIM", v.as_str())],
        );
        let all = format!("{}\n{}", r.run.stdout, r.run.stderr);
        let what = format!("locale {victim} exits with status 3");
        assert!(!r.run.ok(), "{what}: the job passed:\n{all}");
        assert!(
            r.elapsed < BOUND,
            "{what}: HANG: the job took {:?} (bound {BOUND:?}):\n{all}",
            r.elapsed
        );
        // In the abort of whoever saw the connection close, or appended to
        // a survivor's own early exit ("...; the job was ending: ...");
        // the victim's own line reads "pgas locale N: exited ...".
        let cause = format!("locale {victim} exited with status 3 before it finalized");
        assert!(all.contains(&cause), "{what}: no {cause:?}:\n{all}");
        assert!(
            !all.contains(&format!("locale {victim} died")),
            "{what}: blamed on a death, not its cause:\n{all}"
        );
        eprintln!("lost_locale {what}: job down after {:?}", r.elapsed);
    }
}
