//! What a measuring locale tells the driver: progress and result lines on
//! its standard output (which `pgasrun` forwards line by line), and the
//! names of the operations measured.

use crate::stats::Point;
use std::fmt;

/// Prefix of a progress line: `@@progress DONE TOTAL LABEL`.
pub const PROGRESS: &str = "@@progress";
/// Prefix of an information line: `@@info TEXT` (logged by the driver).
pub const INFO: &str = "@@info";
/// Prefix of a skipped point: `@@skip IMPL OP REASON` (tab-separated).
pub const SKIP: &str = "@@skip";
/// Prefix of a result line: `@@result IMPL OP SIZE PARAM VALUE MIN UNIT SAMPLES US_PER_OP NOTE`
/// (tab-separated after the prefix).
pub const RESULT: &str = "@@result";

/// Operations (the `op` column of the CSV).
pub mod op {
    /// Blocking PUT latency (remote completion as the layer defines it).
    pub const PUT_LAT: &str = "put_lat";
    /// Blocking GET latency.
    pub const GET_LAT: &str = "get_lat";
    /// PUT bandwidth with a window of non-blocking PUTs.
    pub const PUT_BW: &str = "put_bw";
    /// GET bandwidth with a window of non-blocking GETs.
    pub const GET_BW: &str = "get_bw";
    /// 8-byte PUT message rate with a window of non-blocking PUTs.
    pub const PUT_RATE: &str = "put_rate";
    /// Fetch-add on a u64: ours through `Am::amo` (native where the provider
    /// has it, else an AM), raw through `fi_fetch_atomic`.
    pub const AMO: &str = "amo_fadd";
    /// Fetch-add on a u64 always through an AM (`Am::amo_via_am`).
    pub const AMO_AM: &str = "amo_fadd_am";
    /// Blocking on-statement with an empty body (`Am::execute_on`).
    pub const ON_STMT: &str = "on_stmt";
    /// Raw `fi_send` + `fi_recv` round trip (the floor of every AM).
    pub const PINGPONG: &str = "pingpong";
    /// Task-end boundary after PUTs to `param` targets.
    pub const BOUNDARY: &str = "task_end";
}

/// Which implementation a figure belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Impl {
    /// pgas-comm (comm-ofi + amhandler).
    Ours,
    /// The raw-libfabric floor.
    Raw,
}

impl Impl {
    /// Spelling on the command line and in the CSV.
    pub fn as_str(self) -> &'static str {
        match self {
            Impl::Ours => "ours",
            Impl::Raw => "raw",
        }
    }
    /// Parses [`Impl::as_str`].
    pub fn parse(s: &str) -> Option<Impl> {
        match s {
            "ours" => Some(Impl::Ours),
            "raw" => Some(Impl::Raw),
            _ => None,
        }
    }
}

/// Unit of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Microseconds per operation.
    Us,
    /// 10^6 bytes per second.
    MBps,
    /// 10^6 operations per second.
    Mops,
}

impl Unit {
    /// Spelling in the CSV.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Us => "us",
            Unit::MBps => "MB/s",
            Unit::Mops => "Mops",
        }
    }
    /// Parses [`Unit::as_str`].
    pub fn parse(s: &str) -> Option<Unit> {
        match s {
            "us" => Some(Unit::Us),
            "MB/s" => Some(Unit::MBps),
            "Mops" => Some(Unit::Mops),
            _ => None,
        }
    }
}

/// One measured figure as a locale reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Ours or the floor.
    pub imp: Impl,
    /// Operation (see [`op`]).
    pub op: String,
    /// Bytes per operation.
    pub size: u64,
    /// Window (bandwidth, rate), k (boundary), or 1.
    pub param: u64,
    /// Median value in `unit`.
    pub value: f64,
    /// Best sample in `unit`.
    pub best: f64,
    /// Unit of `value` and `best`.
    pub unit: Unit,
    /// Samples behind the median.
    pub samples: usize,
    /// Median time of one operation in microseconds (for every unit), the
    /// figure the ratios are taken on.
    pub us_per_op: f64,
    /// Path taken or caveat (`native`, `via-am`, ...); `-` when none.
    pub note: String,
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{RESULT}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            self.imp.as_str(),
            self.op,
            self.size,
            self.param,
            self.value,
            self.best,
            self.unit.as_str(),
            self.samples,
            self.us_per_op,
            if self.note.is_empty() {
                "-"
            } else {
                &self.note
            }
        )
    }
}

impl Record {
    /// A record of `op` from point `p` (see [`crate::plan::Op::record`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        imp: Impl,
        op: &str,
        size: u64,
        param: u64,
        unit: Unit,
        v: (f64, f64, f64),
        p: &Point,
        note: &str,
    ) -> Record {
        Record {
            imp,
            op: op.to_string(),
            size,
            param,
            value: v.0,
            best: v.1,
            unit,
            samples: p.samples,
            us_per_op: v.2,
            note: note.to_string(),
        }
    }

    /// A latency: `p` is the time of one operation.
    pub fn latency(imp: Impl, op: &str, size: u64, param: u64, p: Point, note: &str) -> Record {
        let v = (p.median_us, p.min_us, p.median_us);
        Record::new(imp, op, size, param, Unit::Us, v, &p, note)
    }

    /// A bandwidth: `p` is the time of a window of `window` operations of
    /// `size` bytes each.
    pub fn bandwidth(imp: Impl, op: &str, size: u64, window: u64, p: Point, note: &str) -> Record {
        let bytes = (size * window) as f64;
        let v = (
            bytes / p.median_us,
            bytes / p.min_us,
            p.median_us / window as f64,
        );
        Record::new(imp, op, size, window, Unit::MBps, v, &p, note)
    }

    /// A message rate: `p` is the time of a window of `window` operations.
    pub fn rate(imp: Impl, op: &str, size: u64, window: u64, p: Point, note: &str) -> Record {
        let w = window as f64;
        let v = (w / p.median_us, w / p.min_us, p.median_us / w);
        Record::new(imp, op, size, window, Unit::Mops, v, &p, note)
    }

    /// Parses a line printed by [`Record`]'s `Display`.
    pub fn parse(line: &str) -> Option<Record> {
        let rest = line.strip_prefix(RESULT)?.strip_prefix('\t')?;
        let f: Vec<&str> = rest.split('\t').collect();
        if f.len() != 10 {
            return None;
        }
        Some(Record {
            imp: Impl::parse(f[0])?,
            op: f[1].to_string(),
            size: f[2].parse().ok()?,
            param: f[3].parse().ok()?,
            value: f[4].parse().ok()?,
            best: f[5].parse().ok()?,
            unit: Unit::parse(f[6])?,
            samples: f[7].parse().ok()?,
            us_per_op: f[8].parse().ok()?,
            note: if f[9] == "-" {
                String::new()
            } else {
                f[9].to_string()
            },
        })
    }
}

/// Formats a progress line.
pub fn progress_line(done: usize, total: usize, label: &str) -> String {
    format!("{PROGRESS} {done} {total} {label}")
}

/// Parses a progress line into (done, total, label).
pub fn parse_progress(line: &str) -> Option<(usize, usize, String)> {
    let rest = line.strip_prefix(PROGRESS)?.trim_start();
    let mut it = rest.splitn(3, ' ');
    let done = it.next()?.parse().ok()?;
    let total = it.next()?.parse().ok()?;
    Some((done, total, it.next().unwrap_or("").to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trips() {
        let r = Record {
            imp: Impl::Raw,
            op: op::PUT_BW.into(),
            size: 65536,
            param: 64,
            value: 1234.5,
            best: 1300.25,
            unit: Unit::MBps,
            samples: 30,
            us_per_op: 53.1,
            note: "nb-completes-at-call".into(),
        };
        assert_eq!(Record::parse(&r.to_string()), Some(r.clone()));
        let mut e = r;
        e.note.clear();
        assert_eq!(Record::parse(&e.to_string()), Some(e));
        assert_eq!(Record::parse("@@result\tx"), None);
    }

    #[test]
    fn progress_round_trips() {
        assert_eq!(
            parse_progress(&progress_line(3, 40, "put 8 B")),
            Some((3, 40, "put 8 B".into()))
        );
    }
}
