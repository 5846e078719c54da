//! The measuring side: what runs in each locale of a study job under
//! `pgasrun`, and how locale 0 reports to the driver.
//!
//! Every job opens both implementations in the same processes: the raw
//! floor's endpoint ([`Raw`]) and our layer ([`Ours`]). Locale 0 measures
//! each point in rounds that alternate floor and ours (raw first in even
//! rounds, ours first in odd ones), so both see the same machine load, which
//! on 2 cores shared with other people's builds moves by factors within
//! seconds. The other locales serve: a thread polls the floor's CQ and
//! answers pings, while our AM poller serves our layer.

use crate::ours::Ours;
use crate::plan::{Op, Plan};
use crate::proto::{self, Impl, Record};
use crate::raw::Raw;
use crate::stats::{median, Point, Res};
use std::io::Write;

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
        tracing::debug!(op = %rec.op, imp = rec.imp.as_str(), value = rec.value, "point");
        self.emit(&rec.to_string());
    }

    /// A figure not measured, and why.
    pub fn skip(&mut self, imp: Impl, op: &str, reason: &str) {
        self.emit(&format!(
            "{}\t{}\t{op}\t{reason}",
            proto::SKIP,
            imp.as_str()
        ));
    }

    /// One more point done.
    pub fn advance(&mut self, label: &str) {
        self.done += 1;
        self.emit(&proto::progress_line(self.done, self.total, label));
    }
}

/// Combines the rounds of one point: median of the rounds' medians, best of
/// their bests.
pub fn merge(points: &[Point]) -> Point {
    let mut meds: Vec<f64> = points.iter().map(|p| p.median_us).collect();
    Point {
        median_us: median(&mut meds),
        min_us: points
            .iter()
            .map(|p| p.min_us)
            .fold(f64::INFINITY, f64::min),
        samples: points.iter().map(|p| p.samples).sum(),
        ops: points.iter().map(|p| p.ops).sum(),
    }
}

fn measure_point(
    raw: &mut Raw,
    ours: &mut Ours,
    op: Op,
    plan: &Plan,
    rep: &mut Reporter,
) -> Res<()> {
    let mut active: Vec<Impl> = Vec::new();
    for &imp in op.impls() {
        let why = match imp {
            Impl::Raw => raw.skip_reason(op),
            Impl::Ours => ours.skip_reason(op),
        };
        match why {
            Some(why) => rep.skip(imp, op.name(), &why),
            None => active.push(imp),
        }
    }
    let mut pts: Vec<(Impl, Vec<Point>)> = active.iter().map(|i| (*i, Vec::new())).collect();
    for round in 0..plan.rounds {
        let mut order: Vec<usize> = (0..pts.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let p = match pts[i].0 {
                Impl::Raw => raw.point(op, plan.budget())?,
                Impl::Ours => ours.point(op, plan.budget())?,
            };
            pts[i].1.push(p);
        }
    }
    for (imp, ps) in &pts {
        let note = match imp {
            Impl::Raw => raw.note(op),
            Impl::Ours => ours.note(op),
        };
        rep.record(&op.record(*imp, merge(ps), note));
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
    let mut ours = Ours::start(&plan)?;
    let ops = plan.ops();
    let mut rep = Reporter::new(ops.len(), me == 0);
    if raw.is_initiator() {
        ours.bind()?;
        rep.info(&raw.describe());
        for l in ours.describe() {
            rep.info(&l);
        }
        let r = ops
            .iter()
            .try_for_each(|&op| measure_point(&mut raw, &mut ours, op, &plan, &mut rep));
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
    fn merge_takes_median_of_medians() {
        let p = |m: f64, b: f64| Point {
            median_us: m,
            min_us: b,
            samples: 4,
            ops: 40,
        };
        let m = merge(&[p(3.0, 2.0), p(1.0, 0.5), p(2.0, 1.5)]);
        assert_eq!(m.median_us, 2.0);
        assert_eq!(m.min_us, 0.5);
        assert_eq!((m.samples, m.ops), (12, 120));
    }
}
