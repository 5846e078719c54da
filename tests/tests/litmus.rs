//! The multi-process litmus conformance suite (`shared/LITMUS.md`): every
//! litmus test, in every MCM mode each provider honours, at 8 B, inject + 1
//! and 1 MiB, checked against the SC oracle (`pgas_tests::litmus::oracle`);
//! then the negative control (`PGAS_MCM_WEAKEN`), reported, with one
//! assertion that the suite catches the weakening where it is known to.
//!
//! `LITMUS_FULL=1` runs ten times the iterations and the negative control in
//! every mode (about ten minutes); `LITMUS_REPORT=path` writes the markdown
//! report (`docs/conformance.md` holds the latest full one). Both go with
//! `--release`:
//!
//! ```text
//! LITMUS_FULL=1 LITMUS_REPORT=/tmp/litmus.md cargo test --release -p pgas-tests --test litmus
//! ```

use pgas_tests::litmus::report::{plan, render, run, JobResult, ASSERTED_CONTROLS};
use std::time::Instant;

/// `YYYY-MM-DD hh:mm UTC` of now, from `date -u` (no date crate in the
/// workspace).
fn utc_now() -> String {
    let out = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .expect("run date");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn describe(r: &JobResult) -> String {
    format!(
        "{} {} {:?} [{}]",
        r.job.provider, r.job.mode, r.job.weaken, r.job.select
    )
}

#[test]
fn litmus_conformance_and_negative_control() {
    let full = std::env::var("LITMUS_FULL").is_ok_and(|v| v == "1");
    let (conf_jobs, neg_jobs) = plan(full);
    let t0 = Instant::now();
    let conf: Vec<JobResult> = conf_jobs.iter().map(run).collect();
    let t_conf = t0.elapsed();
    let neg: Vec<JobResult> = neg_jobs.iter().map(run).collect();
    let total = t0.elapsed();

    if let Ok(path) = std::env::var("LITMUS_REPORT") {
        let notes = format!(
            "{} run of {}, seed {}, {} locales, {} workers per locale: {} conformance \
             jobs in {:.0} s, {} negative-control jobs in {:.0} s (wall time on the \
             shared 2-core machine).",
            if full {
                "Full (`LITMUS_FULL=1`)"
            } else {
                "Fast (CI)"
            },
            utc_now(),
            std::env::var("LITMUS_SEED").unwrap_or_else(|_| "1".into()),
            pgas_tests::litmus::report::LOCALES,
            pgas_tests::litmus::report::WORKERS,
            conf.len(),
            t_conf.as_secs_f64(),
            neg.len(),
            (total - t_conf).as_secs_f64(),
        );
        let md = render("Latest litmus run", &notes, &conf, &neg);
        std::fs::write(&path, md).unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }

    let mut problems = Vec::new();
    for r in &conf {
        if !r.complete() {
            problems.push(format!(
                "{}: did not finish (exit {:?}, {} of {} instances reported):\n{}",
                describe(r),
                r.code,
                r.instances.len(),
                r.expected,
                r.stderr_tail
            ));
        }
        for i in r.instances.iter().filter(|i| i.forbidden > 0) {
            problems.push(format!(
                "{}: {} at {} B: {} forbidden outcome(s) in {} iterations, histogram {:?}",
                describe(r),
                i.test,
                i.size,
                i.forbidden,
                i.iters,
                i.seen
            ));
        }
        if r.forbidden() > 0 {
            problems.push(format!(
                "{}: details:\n{}",
                describe(r),
                r.details.join("\n")
            ));
        }
    }
    // The negative control: the suite must see each asserted weakening
    // (`ASSERTED_CONTROLS`: why these, and why only these) whatever the load.
    for (provider, weaken, _, base) in ASSERTED_CONTROLS {
        let caught: usize = neg
            .iter()
            .filter(|r| r.job.provider == provider && r.job.weaken == Some(weaken))
            .flat_map(|r| r.instances.iter())
            .filter(|i| i.base == base)
            .map(|i| i.forbidden)
            .sum();
        if caught == 0 {
            problems.push(format!(
                "negative control: with PGAS_MCM_WEAKEN={weaken} on {provider}, no {base} \
                 test saw a forbidden outcome: the suite no longer detects that weakening"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "litmus suite ({:.0} s): {} problem(s):\n{}",
        total.as_secs_f64(),
        problems.len(),
        problems.join("\n")
    );
}
