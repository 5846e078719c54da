//! Model fits of the latency curves (`t = a + b * bytes`), flagged when the
//! intercept is negative or the residuals large, as a table and a CSV.

use super::*;

impl Results {
    /// Model fits for every (provider, mode): PUT latency against size over
    /// the sizes whose floor is a completed write (injected sizes follow
    /// another law), GET latency against size (relative least squares), task
    /// end against k (ordinary); ours is a task through the public API.
    pub fn fits(&self) -> Vec<Fit> {
        let mut out = Vec::new();
        for (prov, mode) in &self.matrix {
            for o in [op::PUT_LAT, op::GET_LAT, op::BOUNDARY] {
                // Ours with its floor where it has one; PUT sizes whose floor
                // is an injection are left out (another law: a constant).
                let pts: Vec<(&Row, Option<&Row>)> = self
                    .ours_rows()
                    .filter(|r| {
                        &r.provider == prov
                            && &r.mode == mode
                            && r.rec.op == o
                            && r.rec.subject == Subject::RtTask
                    })
                    .map(|r| (r, self.floor(r)))
                    .filter(|(_, f)| !f.is_some_and(|f| f.rec.note.starts_with("fi_inject_write")))
                    .collect();
                let x = |r: &Row| {
                    if o == op::BOUNDARY {
                        r.rec.param
                    } else {
                        r.rec.size
                    }
                };
                let xs: Vec<u64> = pts.iter().map(|(r, _)| x(r)).collect();
                let xf: Vec<f64> = xs.iter().map(|&v| v as f64).collect();
                let line = |floor: bool| {
                    let ys: Vec<f64> = pts
                        .iter()
                        .filter_map(|(r, f)| if floor { *f } else { Some(*r) })
                        .map(|row| Self::time(row).map(|t| t.med).unwrap_or(f64::NAN))
                        .collect();
                    if ys.len() < 3 || ys.len() != xs.len() {
                        None
                    } else if o == op::BOUNDARY {
                        fit::ordinary(&xf, &ys)
                    } else {
                        fit::relative(&xf, &ys)
                    }
                };
                let (ours, raw) = (line(false), line(true));
                if ours.is_some() || raw.is_some() {
                    out.push(Fit {
                        provider: prov.clone(),
                        mode: mode.clone(),
                        op: o.to_string(),
                        xs,
                        ours,
                        raw,
                    });
                }
            }
        }
        out
    }

    /// The fits as a table; every fit with a problem says so, and no ratio
    /// is given for it.
    pub fn fits_table(&self) -> String {
        let mut s = String::from(
            "\nModel fits (foMPI shapes), ours = a task through rt.put/rt.get/rt.task_end_hook:\n\
             latency = a + b*size by relative least squares over the sizes whose floor waits for \
             a completion\n(injected sizes cost a constant); task end = a + b*k by least squares. \
             a in us; b in ns/B (1/b = GB/s)\nor us per target. A fit is REJECTED when a < 0 and \
             flagged when b < 0 or a residual exceeds 50%\nof its point; a x / b x (ours/floor) \
             only when both fits are clean.\n",
        );
        let _ = writeln!(
            s,
            "{:<12} {:<20} {:<9} {:<14} | {:>8} {:>8} | {:>8} {:>8} | {:>6} {:>6} | problems",
            "provider",
            "mode",
            "fit",
            "over",
            "ours a",
            "ours b",
            "floor a",
            "floor b",
            "a x",
            "b x"
        );
        for f in self.fits() {
            let scale = if f.op == op::BOUNDARY { 1.0 } else { 1000.0 };
            let part = |l: &Option<Line>| match l {
                Some(l) => (num(l.a), num(l.b * scale)),
                None => ("-".into(), "-".into()),
            };
            let problems = |who: &str, l: &Option<Line>| match l {
                Some(l) if !l.usable() => Some(format!("{who}: {}", l.problems().join(", "))),
                _ => None,
            };
            let (oa, ob) = part(&f.ours);
            let (ra, rb) = part(&f.raw);
            let clean = f.ours.is_some_and(|l| l.usable()) && f.raw.is_some_and(|l| l.usable());
            let rat = |x: f64, y: f64| {
                if clean && y.abs() > 1e-12 {
                    format!("{:.2}x", x / y)
                } else {
                    "-".into()
                }
            };
            let (ax, bx) = match (f.ours, f.raw) {
                (Some(o), Some(r)) => (rat(o.a, r.a), rat(o.b, r.b)),
                _ => ("-".into(), "-".into()),
            };
            let over = match (f.xs.first(), f.xs.last()) {
                (Some(a), Some(b)) if f.op == op::BOUNDARY => format!("k={a}..{b}"),
                (Some(a), Some(b)) => format!("{}..{}", bytes(*a), bytes(*b)),
                _ => "-".into(),
            };
            let mut notes: Vec<String> = [problems("ours", &f.ours), problems("floor", &f.raw)]
                .into_iter()
                .flatten()
                .collect();
            if f.raw.is_none() {
                notes.push("no floor".into());
            }
            let _ = writeln!(
                s,
                "{:<12} {:<20} {:<9} {:<14} | {:>8} {:>8} | {:>8} {:>8} | {:>6} {:>6} | {}",
                f.provider,
                f.mode,
                f.op,
                over,
                oa,
                ob,
                ra,
                rb,
                ax,
                bx,
                if notes.is_empty() {
                    "ok".to_string()
                } else {
                    notes.join("; ")
                }
            );
        }
        s
    }

    /// `fits.csv`.
    pub fn fits_csv(&self) -> String {
        let mut s = String::from(
            "provider,mode,op,x_from,x_to,ours_a_us,ours_b,ours_r2,ours_max_rel_residual,ours_problems,\
             raw_a_us,raw_b,raw_r2,raw_max_rel_residual,raw_problems,b_unit\n",
        );
        for f in self.fits() {
            let p = |l: &Option<Line>| match l {
                Some(l) => format!(
                    "{},{},{},{},{}",
                    l.a,
                    l.b,
                    l.r2,
                    l.max_rel_residual,
                    csv_field(&l.problems().join("; "))
                ),
                None => ",,,,".into(),
            };
            let unit = if f.op == op::BOUNDARY {
                "us/target"
            } else {
                "us/B"
            };
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{}",
                csv_field(&f.provider),
                f.mode,
                f.op,
                f.xs.first().copied().unwrap_or(0),
                f.xs.last().copied().unwrap_or(0),
                p(&f.ours),
                p(&f.raw),
                unit
            );
        }
        s
    }
}
