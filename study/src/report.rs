//! What the driver collected, and everything made from it: ratios to the
//! raw floor, model fits, the terminal table, the CSVs and a markdown
//! summary.

use crate::fit::{self, Line};
use crate::proto::{op, Impl, Record, Unit};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// One result with its job's coordinates.
#[derive(Debug, Clone)]
pub struct Row {
    /// Provider.
    pub provider: String,
    /// MCM mode.
    pub mode: String,
    /// Ours or raw.
    pub imp: Impl,
    /// The figure.
    pub rec: Record,
}

/// A point a job did not measure, and why.
#[derive(Debug, Clone)]
pub struct Skip {
    /// Provider.
    pub provider: String,
    /// MCM mode.
    pub mode: String,
    /// Ours or raw.
    pub imp: Impl,
    /// Operation.
    pub op: String,
    /// Why.
    pub reason: String,
}

/// Everything one study run collected.
#[derive(Debug, Default)]
pub struct Results {
    /// Measured figures.
    pub rows: Vec<Row>,
    /// Points skipped.
    pub skips: Vec<Skip>,
    /// Jobs that failed: (job label, message).
    pub failures: Vec<(String, String)>,
    /// (provider, mode) pairs in run order.
    pub matrix: Vec<(String, String)>,
}

/// A fit of one (provider, mode, impl, op).
#[derive(Debug, Clone)]
pub struct Fit {
    /// Provider.
    pub provider: String,
    /// Mode.
    pub mode: String,
    /// `put_lat`, `get_lat` or `task_end`.
    pub op: String,
    /// Ours.
    pub ours: Option<Line>,
    /// Floor.
    pub raw: Option<Line>,
}

/// Bytes in a short human form (8 B, 4 KiB, 1 MiB).
pub fn bytes(b: u64) -> String {
    if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 && b % (1 << 10) == 0 {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

fn num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn ratio_text(r: Option<f64>) -> String {
    match r {
        Some(r) if r.is_finite() => format!("{r:.2}x"),
        _ => "-".into(),
    }
}

impl Results {
    /// The record of (provider, mode, impl, op, size, param), if measured.
    pub fn find(
        &self,
        provider: &str,
        mode: &str,
        imp: Impl,
        op: &str,
        size: u64,
        param: Option<u64>,
    ) -> Option<&Record> {
        self.rows
            .iter()
            .find(|r| {
                r.provider == provider
                    && r.mode == mode
                    && r.imp == imp
                    && r.rec.op == op
                    && r.rec.size == size
                    && param.is_none_or(|p| r.rec.param == p)
            })
            .map(|r| &r.rec)
    }

    /// The floor a figure of ours is compared with: the same operation of
    /// the raw benchmark, or for operations that travel as active messages
    /// (on-statements, AMOs via AM) the raw send/recv round trip.
    pub fn floor(&self, row: &Row) -> Option<&Record> {
        if row.imp != Impl::Ours {
            return None;
        }
        let r = &row.rec;
        let am_path =
            r.op == op::ON_STMT || r.op == op::AMO_AM || (r.op == op::AMO && r.note != "native");
        if am_path {
            self.find(&row.provider, &row.mode, Impl::Raw, op::PINGPONG, 8, None)
        } else {
            self.find(
                &row.provider,
                &row.mode,
                Impl::Raw,
                &r.op,
                r.size,
                Some(r.param),
            )
        }
    }

    /// Ours over floor, on time per operation (so above 1 is slower than
    /// raw, for latencies and throughputs alike).
    pub fn ratio(&self, row: &Row) -> Option<f64> {
        let f = self.floor(row)?;
        (f.us_per_op > 0.0).then(|| row.rec.us_per_op / f.us_per_op)
    }

    fn modes_of(&self, provider: &str) -> Vec<String> {
        self.matrix
            .iter()
            .filter(|(p, _)| p == provider)
            .map(|(_, m)| m.clone())
            .collect()
    }

    fn providers(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for (p, _) in &self.matrix {
            if !v.contains(p) {
                v.push(p.clone());
            }
        }
        v
    }

    /// Model fits for every (provider, mode): PUT and GET latency against
    /// size (relative least squares), task end against k (ordinary).
    pub fn fits(&self) -> Vec<Fit> {
        let mut out = Vec::new();
        for (prov, mode) in &self.matrix {
            for o in [op::PUT_LAT, op::GET_LAT, op::BOUNDARY] {
                let line = |imp: Impl| {
                    let pts: Vec<(f64, f64)> = self
                        .rows
                        .iter()
                        .filter(|r| {
                            &r.provider == prov && &r.mode == mode && r.imp == imp && r.rec.op == o
                        })
                        .map(|r| {
                            let x = if o == op::BOUNDARY {
                                r.rec.param as f64
                            } else {
                                r.rec.size as f64
                            };
                            (x, r.rec.us_per_op)
                        })
                        .collect();
                    let (xs, ys): (Vec<f64>, Vec<f64>) = pts.into_iter().unzip();
                    if o == op::BOUNDARY {
                        fit::ordinary(&xs, &ys)
                    } else {
                        fit::relative(&xs, &ys)
                    }
                };
                let (ours, raw) = (line(Impl::Ours), line(Impl::Raw));
                if ours.is_some() || raw.is_some() {
                    out.push(Fit {
                        provider: prov.clone(),
                        mode: mode.clone(),
                        op: o.to_string(),
                        ours,
                        raw,
                    });
                }
            }
        }
        out
    }

    /// The metrics shown in the table: (label, op, size, param).
    fn table_rows(&self, provider: &str) -> Vec<(String, &'static str, u64, Option<u64>)> {
        let mut rows = Vec::new();
        let sizes = |o: &str| -> BTreeSet<u64> {
            self.rows
                .iter()
                .filter(|r| r.provider == provider && r.rec.op == o)
                .map(|r| r.rec.size)
                .collect()
        };
        let shown = [8u64, 512, 32 << 10, 1 << 20];
        for (o, name) in [(op::PUT_LAT, "PUT"), (op::GET_LAT, "GET")] {
            let have = sizes(o);
            for s in shown.iter().filter(|s| have.contains(s)) {
                rows.push((format!("{name} {} (us)", bytes(*s)), o, *s, Some(1)));
            }
        }
        for (o, name) in [(op::PUT_BW, "PUT bw"), (op::GET_BW, "GET bw")] {
            for s in sizes(o) {
                let w = self
                    .rows
                    .iter()
                    .find(|r| r.provider == provider && r.rec.op == o && r.rec.size == s)
                    .map(|r| r.rec.param)
                    .unwrap_or(1);
                rows.push((format!("{name} {} x{w} (MB/s)", bytes(s)), o, s, None));
            }
        }
        if !sizes(op::PUT_RATE).is_empty() {
            rows.push(("PUT 8 B rate (Mops)".into(), op::PUT_RATE, 8, None));
        }
        rows.push(("fetch-add Am::amo (us)".into(), op::AMO, 8, Some(1)));
        rows.push(("fetch-add via AM (us)".into(), op::AMO_AM, 8, Some(1)));
        rows.push(("empty on-stmt (us)".into(), op::ON_STMT, 0, Some(1)));
        let ks: BTreeSet<u64> = self
            .rows
            .iter()
            .filter(|r| r.provider == provider && r.rec.op == op::BOUNDARY)
            .map(|r| r.rec.param)
            .collect();
        for k in ks {
            rows.push((format!("task end k={k} (us)"), op::BOUNDARY, 8, Some(k)));
        }
        rows
    }

    /// One cell triple (ours, floor, ratio) as text.
    fn cells(
        &self,
        provider: &str,
        mode: &str,
        o: &str,
        size: u64,
        param: Option<u64>,
    ) -> [String; 3] {
        let row = self
            .rows
            .iter()
            .find(|r| {
                r.provider == provider
                    && r.mode == mode
                    && r.imp == Impl::Ours
                    && r.rec.op == o
                    && r.rec.size == size
                    && param.is_none_or(|p| r.rec.param == p)
            })
            .cloned();
        let Some(row) = row else {
            // Only the floor (e.g. raw ping-pong) or nothing.
            return ["-".into(), "-".into(), "-".into()];
        };
        let mark = if o == op::AMO && row.rec.note == "via-am" {
            "*"
        } else {
            ""
        };
        let floor = self.floor(&row).map(|f| {
            if f.unit == row.rec.unit {
                num(f.value)
            } else {
                format!("{}us", num(f.us_per_op))
            }
        });
        [
            format!("{}{mark}", num(row.rec.value)),
            floor.unwrap_or_else(|| "-".into()),
            ratio_text(self.ratio(&row)),
        ]
    }

    /// The terminal table: per provider, metrics down, modes across.
    pub fn table(&self) -> String {
        let mut s = String::new();
        for prov in self.providers() {
            let modes = self.modes_of(&prov);
            let _ = writeln!(s, "\n== {prov} ==");
            let _ = write!(s, "{:<28}", "");
            for m in &modes {
                let _ = write!(s, " | {m:^28}");
            }
            let _ = writeln!(s);
            let _ = write!(s, "{:<28}", "metric");
            for _ in &modes {
                let _ = write!(s, " | {:>9} {:>9} {:>8}", "ours", "raw", "x raw");
            }
            let _ = writeln!(s);
            for (label, o, size, param) in self.table_rows(&prov) {
                let _ = write!(s, "{label:<28}");
                for m in &modes {
                    let [a, b, c] = self.cells(&prov, m, o, size, param);
                    let _ = write!(s, " | {a:>9} {b:>9} {c:>8}");
                }
                let _ = writeln!(s);
            }
        }
        s.push_str(
            "\nx raw = our time per operation / raw libfabric's, same provider and mode, same run.\n\
             raw column: the floor's figure (for on-statements and AMOs via AM: the fi_send/fi_recv\n\
             round trip; for task end: k 8-byte reads, the message-order idiom). * = AMO went via AM.\n",
        );
        s
    }

    /// The fits as a table.
    pub fn fits_table(&self) -> String {
        let mut s = String::from(
            "\nModel fits (foMPI shapes): latency = a + b*size (relative least squares, 8 B..1 MiB);\n\
             task end = a + b*k (least squares). b in ns/B for latency (1/b = GB/s), us per target for k.\n",
        );
        let _ = writeln!(
            s,
            "{:<13} {:<20} {:<9} | {:>9} {:>9} | {:>9} {:>9} | {:>7} {:>7}",
            "provider", "mode", "op", "ours a", "ours b", "raw a", "raw b", "a x", "b x"
        );
        for f in self.fits() {
            let scale = if f.op == op::BOUNDARY { 1.0 } else { 1000.0 };
            let part = |l: &Option<Line>| match l {
                Some(l) => (num(l.a), num(l.b * scale)),
                None => ("-".into(), "-".into()),
            };
            let (oa, ob) = part(&f.ours);
            let (ra, rb) = part(&f.raw);
            let rat = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (Some(x), Some(y)) if y.abs() > 1e-12 => ratio_text(Some(x / y)),
                _ => "-".into(),
            };
            let _ = writeln!(
                s,
                "{:<13} {:<20} {:<9} | {:>9} {:>9} | {:>9} {:>9} | {:>7} {:>7}",
                f.provider,
                f.mode,
                f.op,
                oa,
                ob,
                ra,
                rb,
                rat(f.ours.map(|l| l.a), f.raw.map(|l| l.a)),
                rat(f.ours.map(|l| l.b), f.raw.map(|l| l.b)),
            );
        }
        s
    }

    /// Skips and failures, for the end of the report.
    pub fn notes(&self) -> String {
        let mut s = String::new();
        let mut seen = BTreeSet::new();
        for k in &self.skips {
            let line = format!(
                "skipped {} {} ({}): {}",
                k.imp.as_str(),
                k.op,
                k.provider,
                k.reason
            );
            if seen.insert(line.clone()) {
                let _ = writeln!(s, "{line}");
            }
        }
        for (job, msg) in &self.failures {
            let _ = writeln!(s, "FAILED {job}: {msg}");
        }
        s
    }

    /// `results.csv`: every figure, with its floor and ratio.
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "provider,mode,impl,op,size,param,value,best,unit,samples,us_per_op,floor_op,floor_us_per_op,ratio_to_floor,note\n",
        );
        for r in &self.rows {
            let floor = self.floor(r);
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(&r.provider),
                r.mode,
                r.imp.as_str(),
                r.rec.op,
                r.rec.size,
                r.rec.param,
                r.rec.value,
                r.rec.best,
                r.rec.unit.as_str(),
                r.rec.samples,
                r.rec.us_per_op,
                floor.map(|f| f.op.as_str()).unwrap_or(""),
                floor.map(|f| f.us_per_op.to_string()).unwrap_or_default(),
                self.ratio(r).map(|x| x.to_string()).unwrap_or_default(),
                csv_field(&r.rec.note),
            );
        }
        s
    }

    /// `fits.csv`.
    pub fn fits_csv(&self) -> String {
        let mut s = String::from(
            "provider,mode,op,ours_a_us,ours_b,ours_r2,raw_a_us,raw_b,raw_r2,b_unit\n",
        );
        for f in self.fits() {
            let p = |l: &Option<Line>| match l {
                Some(l) => format!("{},{},{}", l.a, l.b, l.r2),
                None => ",,".into(),
            };
            let unit = if f.op == op::BOUNDARY {
                "us/target"
            } else {
                "us/B"
            };
            let _ = writeln!(
                s,
                "{},{},{},{},{},{}",
                csv_field(&f.provider),
                f.mode,
                f.op,
                p(&f.ours),
                p(&f.raw),
                unit
            );
        }
        s
    }

    /// A markdown summary of the ratios (pasted into docs/performance.md).
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        for prov in self.providers() {
            let modes = self.modes_of(&prov);
            let _ = writeln!(s, "\n#### {prov}\n");
            let _ = write!(s, "| metric |");
            for m in &modes {
                let _ = write!(s, " {m}: ours | raw | x raw |");
            }
            let _ = writeln!(s);
            let _ = write!(s, "|---|");
            for _ in &modes {
                let _ = write!(s, "---:|---:|---:|");
            }
            let _ = writeln!(s);
            for (label, o, size, param) in self.table_rows(&prov) {
                let _ = write!(s, "| {label} |");
                for m in &modes {
                    let [a, b, c] = self.cells(&prov, m, o, size, param);
                    let _ = write!(s, " {a} | {b} | {c} |");
                }
                let _ = writeln!(s);
            }
        }
        s
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Whether a unit is "higher is better".
pub fn is_throughput(u: Unit) -> bool {
    matches!(u, Unit::MBps | Unit::Mops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Point;

    fn row(imp: Impl, rec: Record) -> Row {
        Row {
            provider: "shm".into(),
            mode: "message-order".into(),
            imp,
            rec,
        }
    }

    fn pt(us: f64) -> Point {
        Point {
            median_us: us,
            min_us: us,
            samples: 10,
            ops: 10,
        }
    }

    #[test]
    fn ratios_pair_with_the_right_floor() {
        let mut r = Results {
            matrix: vec![("shm".into(), "message-order".into())],
            ..Default::default()
        };
        r.rows.push(row(
            Impl::Raw,
            Record::latency(Impl::Raw, op::PUT_LAT, 8, 1, pt(2.0), ""),
        ));
        r.rows.push(row(
            Impl::Ours,
            Record::latency(Impl::Ours, op::PUT_LAT, 8, 1, pt(3.0), ""),
        ));
        r.rows.push(row(
            Impl::Raw,
            Record::latency(Impl::Raw, op::PINGPONG, 8, 1, pt(4.0), ""),
        ));
        r.rows.push(row(
            Impl::Ours,
            Record::latency(Impl::Ours, op::ON_STMT, 0, 1, pt(10.0), ""),
        ));
        r.rows.push(row(
            Impl::Ours,
            Record::latency(Impl::Ours, op::AMO, 8, 1, pt(8.0), "via-am"),
        ));
        r.rows.push(row(
            Impl::Raw,
            Record::bandwidth(Impl::Raw, op::PUT_BW, 4096, 64, pt(64.0), ""),
        ));
        r.rows.push(row(
            Impl::Ours,
            Record::bandwidth(Impl::Ours, op::PUT_BW, 4096, 64, pt(128.0), ""),
        ));
        let ratio = |i: usize| r.ratio(&r.rows[i]).unwrap();
        assert!((ratio(1) - 1.5).abs() < 1e-12);
        assert!((ratio(3) - 2.5).abs() < 1e-12);
        assert!((ratio(4) - 2.0).abs() < 1e-12);
        assert!((ratio(6) - 2.0).abs() < 1e-12);
        assert!(r.ratio(&r.rows[0]).is_none());
        let t = r.table();
        assert!(t.contains("1.50x") && t.contains("2.50x"), "{t}");
        assert!(r.csv().lines().count() == 8);
        assert!(r
            .markdown()
            .contains("| PUT 8 B (us) | 3.00 | 2.00 | 1.50x |"));
    }

    #[test]
    fn fits_come_out_per_mode_and_op() {
        let mut r = Results {
            matrix: vec![("tcp;ofi_rxm".into(), "message-order".into())],
            ..Default::default()
        };
        for s in [8u64, 64, 512, 4096] {
            for (imp, a) in [(Impl::Raw, 2.0), (Impl::Ours, 3.0)] {
                let y = a + 0.001 * s as f64;
                r.rows.push(Row {
                    provider: "tcp;ofi_rxm".into(),
                    mode: "message-order".into(),
                    imp,
                    rec: Record::latency(imp, op::PUT_LAT, s, 1, pt(y), ""),
                });
            }
        }
        let f = r.fits();
        assert_eq!(f.len(), 1);
        assert!((f[0].ours.unwrap().a - 3.0).abs() < 1e-9);
        assert!(r.fits_table().contains("1.50x"));
        assert!(r.fits_csv().starts_with("provider,"));
    }
}
