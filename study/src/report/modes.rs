//! The modes of one provider compared with each other: for each kind of
//! work, which mode suits it ([`Results::modes_table`]).

use super::*;

/// Work kinds of the mode comparison: (kind, op, size, caller).
const MODE_ROWS: [(&str, &str, Option<u64>, Subject); 12] = [
    ("PUT-heavy", op::PUT_LAT, Some(8), Subject::RtTask),
    ("PUT-heavy", op::PUT_VISIBLE, None, Subject::RtTask),
    ("PUT-heavy", op::PUT_RATE, None, Subject::RtTask),
    ("PUT-heavy", op::PUT_BW, Some(65536), Subject::RtTask),
    ("GET-heavy", op::GET_LAT, Some(8), Subject::RtTask),
    ("GET-heavy", op::GET_BW, Some(65536), Subject::RtTask),
    ("task-heavy", op::SPAWN_PUT, None, Subject::RtMain),
    ("task-heavy", op::BOUNDARY, None, Subject::RtTask),
    ("task-heavy", op::ON_STMT, None, Subject::RtTask),
    ("atomic-heavy", op::AMO, None, Subject::RtTask),
    ("atomic-heavy", op::ADD_RATE, None, Subject::RtTask),
    (
        "atomic-heavy",
        op::ADD_UNORDERED_RATE,
        None,
        Subject::RtTask,
    ),
];

impl Results {
    /// The mode comparison of `provider`: one row per work kind's metric.
    pub fn mode_rows(&self, provider: &str) -> Vec<ModeRow> {
        let modes = self.modes_of(provider);
        let mut out = Vec::new();
        for (kind, o, size, subject) in MODE_ROWS {
            let find = |m: &str| -> Option<&Row> {
                let mut c = self.ours_rows().filter(|r| {
                    r.provider == provider
                        && r.mode == m
                        && r.rec.op == o
                        && r.rec.subject == subject
                        && size.is_none_or(|s| r.rec.size == s)
                });
                // Task end: the largest k.
                if o == op::BOUNDARY {
                    c.max_by_key(|r| r.rec.param)
                } else {
                    c.next()
                }
            };
            let found: Vec<Option<&Row>> = modes.iter().map(|m| find(m)).collect();
            let Some(any) = found.iter().flatten().next() else {
                continue;
            };
            let label = format!("{}, {}", metric_label(&any.rec), subject.label());
            let times: Vec<Option<Spread>> = found.iter().map(|r| r.and_then(Self::time)).collect();
            let mut order: Vec<usize> = (0..times.len()).filter(|&i| times[i].is_some()).collect();
            order.sort_by(|&a, &b| {
                let (ta, tb) = (times[a].map(|t| t.med), times[b].map(|t| t.med));
                ta.unwrap_or(f64::MAX).total_cmp(&tb.unwrap_or(f64::MAX))
            });
            let (best, factor) = match order.as_slice() {
                [] => (None, 1.0),
                [only] => (Some((*only, false)), 1.0),
                [b, rest @ ..] => {
                    let tb = times[*b].expect("measured");
                    let clear = rest
                        .iter()
                        .all(|&i| !tb.overlaps(times[i].expect("measured")));
                    let next = times[rest[0]].expect("measured").med;
                    (Some((*b, clear)), next / tb.med)
                }
            };
            out.push(ModeRow {
                kind,
                label,
                cells: found.iter().map(|r| r.and_then(Self::value)).collect(),
                best,
                factor,
            });
        }
        out
    }

    pub(super) fn suits(&self, modes: &[String], r: &ModeRow) -> String {
        match r.best {
            Some((b, true)) => format!("{} ({:.1}x)", modes[b], r.factor),
            Some((b, false)) if modes.len() > 1 => {
                format!("no clear difference ({} by median)", modes[b])
            }
            _ => "-".into(),
        }
    }

    /// Per work kind: which mode won clearly on how many of its metrics.
    pub(super) fn kind_summary(&self, modes: &[String], rows: &[ModeRow]) -> Vec<String> {
        let mut out = Vec::new();
        let mut kinds: Vec<&str> = Vec::new();
        for r in rows {
            if !kinds.contains(&r.kind) {
                kinds.push(r.kind);
            }
        }
        for k in kinds {
            let of: Vec<&ModeRow> = rows.iter().filter(|r| r.kind == k).collect();
            let mut wins = vec![0usize; modes.len()];
            for r in &of {
                if let Some((b, true)) = r.best {
                    wins[b] += 1;
                }
            }
            let total = of.len();
            let text = if wins.iter().all(|&w| w == 0) {
                "no mode is clearly faster (ranges overlap)".to_string()
            } else {
                let mut parts: Vec<String> = wins
                    .iter()
                    .enumerate()
                    .filter(|(_, &w)| w > 0)
                    .map(|(i, w)| format!("{} clearly faster on {w} of {total}", modes[i]))
                    .collect();
                parts.sort();
                parts.join("; ")
            };
            out.push(format!("{k}: {text}"));
        }
        out
    }

    /// Modes compared with each other, per provider (terminal text).
    pub fn modes_table(&self) -> String {
        let mut s = String::from(
            "\nModes compared (ours; median [min-max] over the rounds; each mode ran in its own job, \
             seconds apart,\nso these are absolute figures, not side-by-side ratios; a mode 'suits' \
             a metric only when its range\nis clear of every other mode's; the factor is the \
             next-best median over the best):\n",
        );
        for prov in self.providers() {
            let modes = self.modes_of(&prov);
            if modes.len() < 2 {
                continue;
            }
            let rows = self.mode_rows(&prov);
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(s, "\n== {prov}: which mode for which work ==");
            let _ = write!(s, "{:<13} {:<48}", "work", "metric, caller");
            for m in &modes {
                let _ = write!(s, " {m:>26}");
            }
            let _ = writeln!(s, "  suits");
            for r in &rows {
                let _ = write!(s, "{:<13} {:<48}", r.kind, r.label);
                for c in &r.cells {
                    let _ = write!(s, " {:>26}", spread_text(*c));
                }
                let _ = writeln!(s, "  {}", self.suits(&modes, r));
            }
            for line in self.kind_summary(&modes, &rows) {
                let _ = writeln!(s, "  {line}");
            }
        }
        s
    }
}
