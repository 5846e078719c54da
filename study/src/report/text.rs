//! The study's outputs: the terminal table, the notes under it, the CSV of
//! every figure and the markdown summary.

use super::*;

impl Results {
    /// The terminal table: per (provider, mode), every figure with its
    /// caller, floor, spreads, ratio and flag.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let heads = [
            "metric",
            "caller",
            "ours med [min-max]",
            "floor med [min-max]",
            "floor (raw libfabric)",
            "x floor [min-max]",
            "",
        ];
        let widths = [38, 9, 24, 24, 30, 22, 13];
        for (prov, mode) in &self.matrix {
            let rows = self.shown(prov, mode);
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(
                s,
                "\n== {prov}, {mode} (load at job start: {}) ==",
                self.load_of(prov, mode)
            );
            let line = |s: &mut String, c: &[String]| {
                for (i, (c, w)) in c.iter().zip(widths).enumerate() {
                    let _ = if i < 2 || i == 4 || i == 6 {
                        write!(s, "{c:<w$} ")
                    } else {
                        write!(s, "{c:>w$} ")
                    };
                }
                let _ = writeln!(s);
            };
            line(&mut s, &heads.map(String::from));
            for r in rows {
                line(&mut s, &self.cells(r));
            }
        }
        s.push_str(LEGEND);
        s
    }

    /// Skips and failures, for the end of the report.
    pub fn notes(&self) -> String {
        let mut s = String::new();
        let mut seen = BTreeSet::new();
        for k in &self.skips {
            let line = format!(
                "no {} for {} ({}, {}): {}",
                if k.subject.is_floor() {
                    "floor".to_string()
                } else {
                    k.subject.label().to_string()
                },
                k.op,
                k.provider,
                k.mode,
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

    /// `results.csv`: every figure, its rounds, spread, floor and ratio.
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "provider,mode,job,point,subject,op,size,param,unit,samples,rounds_us,us_med,us_min,us_max,\
             value_med,value_lo,value_hi,floor,floor_us_med,ratio_med,ratio_lo,ratio_hi,verdict,note\n",
        );
        let f = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
        for r in &self.rows {
            let t = Self::time(r);
            let v = Self::value(r);
            let fl = self.floor(r);
            let ratio = self.ratio(r);
            let rounds: Vec<String> = r.rec.rounds.iter().map(|x| x.to_string()).collect();
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(&r.provider),
                r.mode,
                r.job,
                r.rec.point,
                r.rec.subject.as_str(),
                r.rec.op,
                r.rec.size,
                r.rec.param,
                r.rec.unit.as_str(),
                r.rec.samples,
                rounds.join(";"),
                f(t.map(|t| t.med)),
                f(t.map(|t| t.lo)),
                f(t.map(|t| t.hi)),
                f(v.map(|t| t.med)),
                f(v.map(|t| t.lo)),
                f(v.map(|t| t.hi)),
                csv_field(fl.map(|x| x.rec.note.as_str()).unwrap_or("")),
                f(fl.and_then(Self::time).map(|t| t.med)),
                f(ratio.map(|t| t.med)),
                f(ratio.map(|t| t.lo)),
                f(ratio.map(|t| t.hi)),
                ratio.map(|x| Verdict::of(x).as_str()).unwrap_or(""),
                csv_field(&r.rec.note),
            );
        }
        s
    }

    /// A markdown summary (pasted into docs/performance.md): per provider,
    /// the mode comparison, then one table per mode.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        for prov in self.providers() {
            let modes = self.modes_of(&prov);
            let _ = writeln!(s, "\n### {prov}\n");
            let rows = self.mode_rows(&prov);
            if modes.len() > 1 && !rows.is_empty() {
                let _ = writeln!(s, "Which mode for which work (ours, median [min-max]):\n");
                let _ = write!(s, "| work | metric, caller |");
                for m in &modes {
                    let _ = write!(s, " {m} |");
                }
                let _ = writeln!(s, " suits |");
                let _ = write!(s, "|---|---|");
                for _ in &modes {
                    let _ = write!(s, "---:|");
                }
                let _ = writeln!(s, "---|");
                for r in &rows {
                    let _ = write!(s, "| {} | {} |", r.kind, r.label);
                    for c in &r.cells {
                        let _ = write!(s, " {} |", spread_text(*c));
                    }
                    let _ = writeln!(s, " {} |", self.suits(&modes, r));
                }
                let _ = writeln!(s);
                for line in self.kind_summary(&modes, &rows) {
                    let _ = writeln!(s, "- {line}");
                }
            }
            for m in &modes {
                let shown = self.shown(&prov, m);
                if shown.is_empty() {
                    continue;
                }
                let _ = writeln!(
                    s,
                    "\n#### {prov}, {m} (load at job start: {})\n",
                    self.load_of(&prov, m)
                );
                let _ = writeln!(
                    s,
                    "| metric | caller | ours med [min-max] | floor med [min-max] | floor (raw libfabric) | x floor [min-max] | |"
                );
                let _ = writeln!(s, "|---|---|---:|---:|---|---:|---|");
                for r in shown {
                    let c = self.cells(r);
                    let _ = writeln!(s, "| {} |", c.join(" | "));
                }
            }
        }
        s
    }
}
