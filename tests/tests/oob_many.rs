//! Many launcher collectives in one job (issue 39 item 3): the generated
//! litmus suite keeps its locales in step with two barriers and an
//! allgather per iteration, thousands per run. Under a PMIx launcher each
//! collective used to leave a key in the launcher's store and every fence
//! got slower, until the suite stalled after ~1,400 of them on the
//! multi-host bed. `oob_stress` runs the same three collectives per round
//! (the allgather's parts checked) for 700 rounds, 2,100 collectives, under
//! pgasrun and under mpirun: both must complete with right answers. (Not a
//! timing assertion: the bound is only there so a stall fails instead of
//! hanging.)

use pgas_tests::job::Job;
use pgas_tests::{example, mpirun_launch};
use std::time::Duration;

const ROUNDS: &str = "700";
const LIMIT: Duration = Duration::from_secs(240);
const WANT: &str = "oob_stress ok: 700 rounds, 2100 collectives";

#[test]
fn many_collectives_under_pgasrun() {
    Job::example("oob_stress", 4)
        .args(&[ROUNDS])
        .secs(LIMIT.as_secs())
        .passes(&[WANT]);
}

#[test]
fn many_collectives_under_mpirun() {
    let r = mpirun_launch(4, &example("oob_stress"), &[ROUNDS], &[], LIMIT);
    r.run.assert_ok("oob_stress under mpirun");
    assert!(r.run.stdout.contains(WANT), "{r:?}");
}
