//! What the driver collected, and everything made from it: each figure's
//! median and range over its rounds, the ratio to its floor round by round,
//! flags ("no difference", bad fits), modes compared with each other, the
//! terminal table, the CSVs and a markdown summary.
//!
//! This file holds the results and what every output shares (medians,
//! ratios, number formats); `modes` compares the modes, `fits` fits the
//! latency curves, `text` writes the table, CSVs and summary.

use crate::fit::{self, Line};
use crate::proto::{op, Record, Subject, Unit};
use crate::stats::Spread;
use std::collections::BTreeSet;
use std::fmt::Write as _;

mod fits;
mod modes;
mod text;

/// One result with its job's coordinates.
#[derive(Debug, Clone)]
pub struct Row {
    /// Provider.
    pub provider: String,
    /// MCM mode.
    pub mode: String,
    /// Index of the job that measured it (in [`Results::jobs`]).
    pub job: usize,
    /// The figure.
    pub rec: Record,
}

/// A figure a job did not measure, and why.
#[derive(Debug, Clone)]
pub struct Skip {
    /// Provider.
    pub provider: String,
    /// MCM mode.
    pub mode: String,
    /// Floor or caller.
    pub subject: Subject,
    /// Operation.
    pub op: String,
    /// Why.
    pub reason: String,
}

/// What the report says of one job.
#[derive(Debug, Clone, Default)]
pub struct JobInfo {
    /// Label (provider, mode, kind).
    pub label: String,
    /// Load average (1, 5, 15 min) when the job started.
    pub load: String,
}

/// Everything one study run collected.
#[derive(Debug, Default)]
pub struct Results {
    /// Measured figures.
    pub rows: Vec<Row>,
    /// Figures not measured.
    pub skips: Vec<Skip>,
    /// Jobs that failed: (job label, message).
    pub failures: Vec<(String, String)>,
    /// (provider, mode) pairs in run order.
    pub matrix: Vec<(String, String)>,
    /// The jobs, in run order.
    pub jobs: Vec<JobInfo>,
}

/// Whether a ratio's range says anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every round: ours took less time than the floor.
    Faster,
    /// Every round: ours took more time.
    Slower,
    /// The rounds' ratios straddle 1.0.
    NoDifference,
}

impl Verdict {
    /// Of a ratio's spread (ours / floor, on time).
    pub fn of(r: Spread) -> Verdict {
        if r.contains(1.0) {
            Verdict::NoDifference
        } else if r.hi < 1.0 {
            Verdict::Faster
        } else {
            Verdict::Slower
        }
    }
    /// Spelling in the CSV.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoDifference => "no difference",
        }
    }
}

/// A fit of one (provider, mode, operation): ours and the floor.
#[derive(Debug, Clone)]
pub struct Fit {
    /// Provider.
    pub provider: String,
    /// Mode.
    pub mode: String,
    /// `put_lat`, `get_lat` or `task_end`.
    pub op: String,
    /// The x values fitted (sizes or k).
    pub xs: Vec<u64>,
    /// Ours (a task through the public API).
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

/// A number with 3 or 4 significant digits.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// `median [lo-hi]`.
pub fn spread_text(s: Option<Spread>) -> String {
    match s {
        Some(s) => format!("{} [{}-{}]", num(s.med), num(s.lo), num(s.hi)),
        None => "-".into(),
    }
}

/// `1.23x [1.10-1.40]`.
pub fn ratio_text(r: Option<Spread>) -> String {
    match r {
        Some(r) => format!("{:.2}x [{:.2}-{:.2}]", r.med, r.lo, r.hi),
        None => "-".into(),
    }
}

/// The figures shown in the tables (the CSV has every size).
const SHOWN_SIZES: [u64; 4] = [8, 512, 32 << 10, 1 << 20];

/// The metric's label in the tables.
pub fn metric_label(r: &Record) -> String {
    let unit = r.unit.as_str();
    let what = match r.op.as_str() {
        op::PUT_LAT => format!("PUT {}", bytes(r.size)),
        op::GET_LAT => format!("GET {}", bytes(r.size)),
        op::PUT_VISIBLE => "PUT 8 B + visible".into(),
        op::SPAWN_PUT => "task{PUT 8 B} spawn+join".into(),
        op::PUT_BW => format!("PUT bw {} x{}", bytes(r.size), r.param),
        op::GET_BW => format!("GET bw {} x{}", bytes(r.size), r.param),
        op::PUT_RATE => format!("PUT 8 B rate x{}", r.param),
        op::AMO => "fetch-add u64".into(),
        op::AMO_AM => "fetch-add u64 via AM".into(),
        op::ADD_RATE => format!("add u64 x{} + task end", r.param),
        op::ADD_UNORDERED_RATE => format!("unordered add x{} + task end", r.param),
        op::ON_STMT => "empty on-stmt".into(),
        op::SPAWN => "spawn+join empty task".into(),
        op::BOUNDARY => format!("task end after PUTs, k={}", r.param),
        other => other.to_string(),
    };
    let per = if r.op == op::ADD_RATE || r.op == op::ADD_UNORDERED_RATE {
        "/add"
    } else {
        ""
    };
    format!("{what} ({unit}{per})")
}

/// One row of a mode comparison.
#[derive(Debug, Clone)]
pub struct ModeRow {
    /// Work kind (`PUT-heavy`, ...).
    pub kind: &'static str,
    /// Metric label.
    pub label: String,
    /// Per mode (in matrix order): the value's spread, if measured.
    pub cells: Vec<Option<Spread>>,
    /// The mode whose time is lowest, and whether its range is clear of
    /// every other mode's (else "no clear difference").
    pub best: Option<(usize, bool)>,
    /// Next-best median time / best median time.
    pub factor: f64,
}

impl Results {
    fn ours_rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| !r.rec.subject.is_floor())
    }

    /// The floor's figure of the same point (same job, point index).
    pub fn floor(&self, row: &Row) -> Option<&Row> {
        if row.rec.subject.is_floor() {
            return None;
        }
        self.rows
            .iter()
            .find(|r| r.job == row.job && r.rec.point == row.rec.point && r.rec.subject.is_floor())
    }

    /// Median and range of a figure's time per operation over its rounds.
    pub fn time(row: &Row) -> Option<Spread> {
        Spread::of(&row.rec.rounds)
    }

    /// Median and range of a figure in its unit (throughputs inverted).
    pub fn value(row: &Row) -> Option<Spread> {
        Self::time(row).map(|s| s.map(|us| row.rec.value_of(us)))
    }

    /// Ours over floor on time per operation, round by round (rounds were
    /// measured side by side), as median and range; above 1 is slower than
    /// the floor, for latencies and throughputs alike.
    pub fn ratio(&self, row: &Row) -> Option<Spread> {
        let f = self.floor(row)?;
        let v: Vec<f64> = row
            .rec
            .rounds
            .iter()
            .zip(&f.rec.rounds)
            .map(|(o, r)| o / r)
            .collect();
        Spread::of(&v)
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

    /// The rows of ours shown in the tables for (provider, mode), in
    /// measuring order.
    fn shown(&self, provider: &str, mode: &str) -> Vec<&Row> {
        self.ours_rows()
            .filter(|r| r.provider == provider && r.mode == mode)
            .filter(|r| {
                !(r.rec.op == op::PUT_LAT || r.rec.op == op::GET_LAT)
                    || SHOWN_SIZES.contains(&r.rec.size)
            })
            .collect()
    }

    /// The cells of one table row: metric, caller, ours, floor, floor op,
    /// ratio, flag.
    fn cells(&self, r: &Row) -> [String; 7] {
        let f = self.floor(r);
        let floor_op = match f {
            Some(f) => f.rec.note.clone(),
            None if r.rec.op == op::SPAWN => "none (local)".into(),
            None if r.rec.op == op::BOUNDARY => "none (nothing to force)".into(),
            None => "none".into(),
        };
        let ratio = self.ratio(r);
        let flag = match ratio.map(Verdict::of) {
            Some(Verdict::NoDifference) => "no difference",
            _ => "",
        };
        [
            metric_label(&r.rec),
            r.rec.subject.label().to_string(),
            spread_text(Self::value(r)),
            f.map(|f| spread_text(Self::value(f)))
                .unwrap_or_else(|| "-".into()),
            floor_op,
            ratio_text(ratio),
            flag.to_string(),
        ]
    }

    fn load_of(&self, provider: &str, mode: &str) -> String {
        let loads: Vec<&str> = self
            .rows
            .iter()
            .filter(|r| r.provider == provider && r.mode == mode)
            .map(|r| r.job)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .filter_map(|j| self.jobs.get(j))
            .map(|j| j.load.as_str())
            .collect();
        loads.join(" / ")
    }
}

/// What the table's columns mean.
pub const LEGEND: &str = "
Columns: ours and floor are the median [min-max] over the rounds (time per operation in us, or
MB/s / Mops for windows); 'floor' names the raw-libfabric operation measured in the same rounds
(same processes, same fi_info, taking turns); 'x floor' = our time / the floor's, computed round by
round, median [min-max]; 'no difference' = that range contains 1.0. Callers: 'rt main' = runtime-shim
call from the main thread; 'rt task' = runtime-shim call inside rt.spawn (a pinned worker with its
own transmit context); 'comm task' = comm-ofi/amhandler call inside a task (the layer below the API).
";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Whether a unit is "higher is better".
pub fn is_throughput(u: Unit) -> bool {
    u.is_throughput()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        subject: Subject,
        point: u32,
        op: &str,
        size: u64,
        unit: Unit,
        rounds: &[f64],
    ) -> Record {
        Record {
            subject,
            point,
            op: op.into(),
            size,
            param: if unit == Unit::Us { 1 } else { 64 },
            unit,
            samples: 10,
            rounds: rounds.to_vec(),
            note: if subject.is_floor() {
                "fi_writemsg+wait".into()
            } else {
                "rt.put".into()
            },
        }
    }

    fn row(mode: &str, job: usize, r: Record) -> Row {
        Row {
            provider: "shm".into(),
            mode: mode.into(),
            job,
            rec: r,
        }
    }

    fn results() -> Results {
        let mut r = Results {
            matrix: vec![
                ("shm".into(), "message-order".into()),
                ("shm".into(), "delivery-complete".into()),
            ],
            jobs: vec![JobInfo::default(), JobInfo::default()],
            ..Default::default()
        };
        let mo = "message-order";
        // PUT 8 B: ours 3 vs floor 2 in every round -> 1.5x, slower.
        r.rows.push(row(
            mo,
            0,
            rec(Subject::Raw, 0, op::PUT_LAT, 8, Unit::Us, &[2.0, 2.0, 2.0]),
        ));
        r.rows.push(row(
            mo,
            0,
            rec(
                Subject::RtTask,
                0,
                op::PUT_LAT,
                8,
                Unit::Us,
                &[3.0, 3.0, 3.0],
            ),
        ));
        // Same point, main thread: straddles 1 -> no difference.
        r.rows.push(row(
            mo,
            0,
            rec(
                Subject::RtMain,
                0,
                op::PUT_LAT,
                8,
                Unit::Us,
                &[1.0, 3.0, 2.0],
            ),
        ));
        // Bandwidth: time per op 2 us for 4096 B -> 2048 MB/s.
        r.rows.push(row(
            mo,
            0,
            rec(
                Subject::Raw,
                1,
                op::PUT_BW,
                4096,
                Unit::MBps,
                &[1.0, 1.0, 1.0],
            ),
        ));
        r.rows.push(row(
            mo,
            0,
            rec(
                Subject::RtTask,
                1,
                op::PUT_BW,
                4096,
                Unit::MBps,
                &[2.0, 2.0, 2.0],
            ),
        ));
        // The other mode, its own job: PUT 8 B much slower.
        let dc = "delivery-complete";
        r.rows.push(row(
            dc,
            1,
            rec(Subject::Raw, 0, op::PUT_LAT, 8, Unit::Us, &[9.0, 9.0, 9.0]),
        ));
        r.rows.push(row(
            dc,
            1,
            rec(
                Subject::RtTask,
                0,
                op::PUT_LAT,
                8,
                Unit::Us,
                &[10.0, 11.0, 12.0],
            ),
        ));
        r
    }

    #[test]
    fn ratios_pair_rounds_with_the_same_points_floor() {
        let r = results();
        let ratio = |i: usize| r.ratio(&r.rows[i]).unwrap();
        assert_eq!(ratio(1).med, 1.5);
        assert_eq!(Verdict::of(ratio(1)), Verdict::Slower);
        let main = ratio(2);
        assert_eq!((main.lo, main.hi), (0.5, 1.5));
        assert_eq!(Verdict::of(main), Verdict::NoDifference);
        assert_eq!(ratio(4).med, 2.0);
        // The DC row pairs with the DC job's floor, not the other job's.
        assert!((ratio(6).med - 11.0 / 9.0).abs() < 1e-12);
        assert!(r.ratio(&r.rows[0]).is_none());
        let v = Results::value(&r.rows[4]).unwrap();
        assert_eq!(v.med, 2048.0);
    }

    #[test]
    fn table_names_every_floor_and_flags_no_difference() {
        let r = results();
        let t = r.table();
        assert!(t.contains("fi_writemsg+wait"), "{t}");
        assert!(t.contains("1.50x [1.50-1.50]"), "{t}");
        assert!(t.contains("no difference"), "{t}");
        assert_eq!(r.csv().lines().count(), 1 + r.rows.len());
        assert!(r.markdown().contains("| PUT 8 B (us) | rt task |"));
    }

    #[test]
    fn modes_are_compared_with_clear_ranges_only() {
        let r = results();
        let rows = r.mode_rows("shm");
        let put = rows
            .iter()
            .find(|m| m.label.starts_with("PUT 8 B (us)"))
            .unwrap();
        // message-order 3 [3-3] vs delivery-complete 11 [10-12]: clear.
        assert_eq!(put.best, Some((0, true)));
        assert!((put.factor - 11.0 / 3.0).abs() < 1e-12);
        let t = r.modes_table();
        assert!(t.contains("message-order (3.7x)"), "{t}");
        assert!(
            t.contains("PUT-heavy: message-order clearly faster on 1 of"),
            "{t}"
        );
    }

    #[test]
    fn negative_fits_are_never_unflagged() {
        let mut r = Results {
            matrix: vec![("tcp;ofi_rxm".into(), "message-order".into())],
            jobs: vec![JobInfo::default()],
            ..Default::default()
        };
        // Task end falling with k: a negative slope, and a line through
        // zero at k = 0 (intercept < 0) for ours.
        for (k, (o, f)) in [
            (1u64, (5.0, 2.0)),
            (2, (3.0, 3.0)),
            (3, (1.0, 4.0)),
            (4, (0.2, 5.0)),
        ] {
            for (s, v) in [(Subject::Raw, f), (Subject::RtTask, o)] {
                let mut x = rec(s, k as u32, op::BOUNDARY, 8, Unit::Us, &[v]);
                x.param = k;
                x.note = "k reads".into();
                r.rows.push(Row {
                    provider: "tcp;ofi_rxm".into(),
                    mode: "message-order".into(),
                    job: 0,
                    rec: x,
                });
            }
        }
        let f = r.fits();
        assert_eq!(f.len(), 1);
        let t = r.fits_table();
        assert!(t.contains("slope < 0"), "{t}");
        // No ratio for a flagged fit.
        let row = t.lines().find(|l| l.starts_with("tcp;ofi_rxm")).unwrap();
        assert!(row.contains("|      -      - | ours: slope < 0"), "{row}");
        assert!(r.fits_csv().starts_with("provider,"));
    }
}
