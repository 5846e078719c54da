//! The measuring side: what runs in each locale of a study job under
//! `pgasrun`, and how locale 0 reports to the driver.
//!
//! Every job opens both implementations in the same processes: the raw
//! floor's endpoint ([`Raw`]) and our runtime ([`Ours`]). Locale 0 measures
//! each point in rounds in which the floor and each caller of ours take
//! turns (rotating who goes first), so all see the same machine load, which
//! on 2 cores shared with other people's builds moves by factors within
//! seconds. The other locales serve: a thread polls the floor's CQ and
//! answers pings, while our AM poller and workers serve our layer.

use crate::ours::Ours;
use crate::plan::{Op, Plan};
use crate::proto::{self, Record, Subject};
use crate::raw::Raw;
use crate::stats::{bursty, Point, Res, Spread};
use std::io::Write;
use std::time::{Duration, Instant};

/// A point taking longer than this is named in the job's log.
const SLOW_POINT: Duration = Duration::from_secs(3);

/// Locale 0's channel to the driver: result and progress lines on stdout
/// (`pgasrun` forwards them whole). Silent on the other locales.
#[derive(Debug)]
pub struct Reporter {
    done: usize,
    total: usize,
    active: bool,
}

impl Reporter {
    /// A reporter for `total` points; `active` on locale 0 only.
    pub fn new(total: usize, active: bool) -> Reporter {
        Reporter {
            done: 0,
            total,
            active,
        }
    }

    fn emit(&self, line: &str) {
        if self.active {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }

    /// A line for the driver's log.
    pub fn info(&mut self, text: &str) {
        self.emit(&format!("{} {text}", proto::INFO));
    }

    /// A measured figure.
    pub fn record(&mut self, rec: &Record) {
        tracing::debug!(op = %rec.op, subject = rec.subject.as_str(), rounds = ?rec.rounds, "point");
        self.emit(&rec.to_string());
    }

    /// A figure not measured, and why.
    pub fn skip(&mut self, subject: Subject, op: &str, reason: &str) {
        self.emit(&format!(
            "{}\t{}\t{op}\t{reason}",
            proto::SKIP,
            subject.as_str()
        ));
    }

    /// One more point done.
    pub fn advance(&mut self, label: &str) {
        self.done += 1;
        self.emit(&proto::progress_line(self.done, self.total, label));
    }
}

/// One point: the floor (if the point has one) and every subject of ours
/// take turns for `plan.rounds` rounds; round r starts with the r-th of
/// them (rotation), so every one of them is measured first as often as the
/// others and all see the same load. Each round gives one median per
/// subject; a figure of ours is later divided by the floor's of the same
/// round.
fn measure_point(
    raw: &mut Raw,
    ours: &Ours,
    id: u32,
    op: Op,
    plan: &Plan,
    rep: &mut Reporter,
) -> Res<()> {
    let floor = match raw.floor_for(op, ours.amo_native()) {
        Ok(f) => Some(f),
        Err(why) => {
            rep.skip(Subject::Raw, op.name(), &why);
            None
        }
    };
    let mut subjects: Vec<Subject> = Vec::new();
    if floor.is_some() {
        subjects.push(Subject::Raw);
    }
    subjects.extend_from_slice(op.subjects(plan.ends()));
    let mut rounds: Vec<Vec<Point>> = vec![Vec::new(); subjects.len()];
    let mut spent = vec![Duration::ZERO; subjects.len()];
    let n = subjects.len();
    for round in 0..plan.rounds as usize {
        for j in 0..n {
            let i = (round + j) % n;
            let t = Instant::now();
            let p = match (subjects[i], floor) {
                // The targets' floor servers poll only in floor rounds.
                (Subject::Raw, Some(f)) => {
                    raw.in_floor_round(|raw| raw.measure(f, plan.budget()))??
                }
                (s, _) => ours.measure(s, op, plan.budget())?,
            };
            spent[i] += t.elapsed();
            rounds[i].push(p);
        }
    }
    let total: Duration = spent.iter().sum();
    if total > SLOW_POINT {
        let who: Vec<String> = subjects
            .iter()
            .zip(&spent)
            .map(|(s, d)| format!("{} {:.1} s", s.as_str(), d.as_secs_f64()))
            .collect();
        rep.info(&format!(
            "slow point: {} took {:.1} s ({})",
            op.label(),
            total.as_secs_f64(),
            who.join(", ")
        ));
    }
    let (size, param, unit) = op.shape();
    let mut bursts = Vec::new();
    for (i, s) in subjects.iter().enumerate() {
        let (note, per) = match (s, floor) {
            (Subject::Raw, Some(f)) => (raw.name(f), f.per_call() as f64),
            _ => (ours.note(*s, op), op.per_call() as f64),
        };
        let medians: Vec<f64> = rounds[i].iter().map(|p| p.median_us / per).collect();
        let means: Vec<f64> = rounds[i].iter().map(|p| p.mean_us / per).collect();
        if let (Some(med), Some(mean)) = (Spread::of(&medians), Spread::of(&means)) {
            if bursty(med.med, mean.med) {
                bursts.push(format!(
                    "{} {:.3} us, sustained {:.3}",
                    s.as_str(),
                    med.med,
                    mean.med
                ));
            }
        }
        rep.record(&Record {
            subject: *s,
            point: id,
            op: op.name().to_string(),
            size,
            param,
            unit,
            samples: rounds[i].iter().map(|p| p.samples).sum(),
            rounds: medians,
            note,
        });
    }
    if !bursts.is_empty() {
        rep.info(&format!(
            "bursts: {}: per operation, median of the samples against the sustained cost \
             (all samples' time over their operations): {}; a few operations take far \
             longer than most (e.g. a provider's queue that takes operations fast and \
             empties slowly), so the median (the table) describes bursts, not a stream",
            op.label(),
            bursts.join("; ")
        ));
    }
    rep.advance(&op.label());
    Ok(())
}

/// Entry point of `study locale PLAN-ARGS...` (every locale of a job,
/// under `pgasrun`).
pub fn main(args: &[String]) -> Res<()> {
    let plan = Plan::from_args(args)?;
    let oob = bootstrap::from_env()?;
    let me = oob.rank();
    let mut raw = Raw::open(&*oob, &plan)?;
    let ours = Ours::start(&plan)?;
    let ops = plan.ops();
    let mut rep = Reporter::new(ops.len(), me == 0);
    if raw.is_initiator() {
        rep.info(&raw.describe());
        for l in ours.describe() {
            rep.info(&l);
        }
        let r = ops
            .iter()
            .enumerate()
            .try_for_each(|(i, &op)| measure_point(&mut raw, &ours, i as u32, op, &plan, &mut rep));
        let s = raw.stop_targets();
        let f = ours.finish();
        r?;
        s?;
        f?;
    } else {
        let server = std::thread::Builder::new()
            .name("raw-serve".into())
            .spawn(move || {
                let r = raw.serve();
                (raw, r)
            })?;
        let f = ours.finish();
        let (raw, r) = server
            .join()
            .map_err(|_| "the raw-floor serving thread panicked")?;
        drop(raw);
        f?;
        r?;
    }
    // Nobody closes its endpoints while a peer may still talk to them.
    oob.barrier()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reporter_counts_progress_silently_off_locale_0() {
        let mut r = Reporter::new(3, false);
        r.advance("a");
        r.advance("b");
        assert_eq!((r.done, r.total), (2, 3));
    }
}
