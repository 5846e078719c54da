//! What a measuring locale tells the driver: progress and result lines on
//! its standard output (which `pgasrun` forwards line by line), who was
//! measured ([`Subject`]) and the names of the operations.

use std::fmt;

/// Prefix of a progress line: `@@progress DONE TOTAL LABEL`.
pub const PROGRESS: &str = "@@progress";
/// Prefix of an information line: `@@info TEXT` (logged by the driver).
pub const INFO: &str = "@@info";
/// Prefix of a skipped figure: `@@skip SUBJECT OP REASON` (tab-separated).
pub const SKIP: &str = "@@skip";
/// Prefix of a result line (tab-separated after the prefix):
/// `@@result SUBJECT POINT OP SIZE PARAM UNIT SAMPLES ROUNDS NOTE`, where
/// ROUNDS is the comma-separated time per operation (us) of each round.
pub const RESULT: &str = "@@result";

/// Where, in its first page, the local buffer of every measured PUT and GET
/// starts, ours and the floor's alike: 16 bytes in, where glibc puts an
/// allocation it maps (a `Vec` of 128 KiB or more) and near where it puts
/// smaller ones (any offset but 0 gives the same page count). Providers
/// that pin the caller's pages per transfer (`shm`'s CMA copies, above its
/// inject size) pay per page: an 8 KiB PUT from a page-aligned buffer (2
/// pages) took 2.45 us, from the same buffer 16 bytes in (3 pages) 2.7-3.7
/// us (2026-11-27). A floor from page-aligned memory measured a transfer
/// that no caller's `Vec` makes.
pub const LOCAL_PAGE_OFFSET: u64 = 16;

/// Operations (the `op` column of the CSV).
pub mod op {
    /// Blocking PUT latency (returns when the source may be reused).
    pub const PUT_LAT: &str = "put_lat";
    /// Blocking GET latency.
    pub const GET_LAT: &str = "get_lat";
    /// Visibility latency: an 8-byte PUT and what the mode needs before
    /// another locale may rely on it (the boundary's forcing).
    pub const PUT_VISIBLE: &str = "put_visible";
    /// A task that PUTs 8 bytes, spawned and joined from the main thread.
    pub const SPAWN_PUT: &str = "spawn_put";
    /// PUT bandwidth with a window of non-blocking PUTs.
    pub const PUT_BW: &str = "put_bw";
    /// GET bandwidth with a window of non-blocking GETs.
    pub const GET_BW: &str = "get_bw";
    /// 8-byte PUT message rate with a window of non-blocking PUTs.
    pub const PUT_RATE: &str = "put_rate";
    /// Fetch-add on a u64 by the type's route (native or CPU via AM).
    pub const AMO: &str = "amo_fadd";
    /// Fetch-add on a u64 always through an AM (`Am::amo_via_am`).
    pub const AMO_AM: &str = "amo_fadd_am";
    /// A window of non-fetching adds, then the task-end boundary (per add).
    pub const ADD_RATE: &str = "amo_add_rate";
    /// A window of unordered (buffered) adds, then the task-end boundary
    /// that flushes them (per add).
    pub const ADD_UNORDERED_RATE: &str = "amo_add_unordered_rate";
    /// Blocking on-statement with an empty body.
    pub const ON_STMT: &str = "on_stmt";
    /// An empty task spawned and joined (local: no floor).
    pub const SPAWN: &str = "spawn";
    /// Task-end boundary after PUTs to `param` targets.
    pub const BOUNDARY: &str = "task_end";
}

/// Who a figure belongs to: the floor, or our layer called a given way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    /// The raw-libfabric floor.
    Raw,
    /// A runtime-shim (`Runtime`) call from the program's main thread.
    RtMain,
    /// A runtime-shim call from inside a task (`rt.spawn(..)`, a worker
    /// thread bound to its own transmit context).
    RtTask,
    /// A comm-ofi / amhandler call (`Comm::put`, `Comm::amo`,
    /// `Am::amo_via_am`, ...) from inside a task: the layer below the API.
    CommTask,
}

impl Subject {
    /// Every subject, floor first.
    pub const ALL: [Subject; 4] = [
        Subject::Raw,
        Subject::RtMain,
        Subject::RtTask,
        Subject::CommTask,
    ];

    /// Spelling on the command line and in the CSV.
    pub fn as_str(self) -> &'static str {
        match self {
            Subject::Raw => "raw",
            Subject::RtMain => "rt-main",
            Subject::RtTask => "rt-task",
            Subject::CommTask => "comm-task",
        }
    }

    /// Parses [`Subject::as_str`].
    pub fn parse(s: &str) -> Option<Subject> {
        Subject::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// Short label for the tables.
    pub fn label(self) -> &'static str {
        match self {
            Subject::Raw => "floor",
            Subject::RtMain => "rt main",
            Subject::RtTask => "rt task",
            Subject::CommTask => "comm task",
        }
    }

    /// Whether this is the floor.
    pub fn is_floor(self) -> bool {
        self == Subject::Raw
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
    /// Whether higher is better.
    pub fn is_throughput(self) -> bool {
        !matches!(self, Unit::Us)
    }
}

/// One measured figure as a locale reports it: the time per operation of
/// every round.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Floor or which caller of ours.
    pub subject: Subject,
    /// Index of the point in its job: a figure of ours is paired with the
    /// floor's figure of the same point (measured in the same rounds).
    pub point: u32,
    /// Operation (see [`op`]).
    pub op: String,
    /// Bytes per operation.
    pub size: u64,
    /// Window (bandwidth, rates), k (boundary), or 1.
    pub param: u64,
    /// Unit of the values derived from the rounds.
    pub unit: Unit,
    /// Samples behind all rounds.
    pub samples: usize,
    /// Median time of one operation (us) in each round, in round order.
    pub rounds: Vec<f64>,
    /// What was called (ours) or the floor's operation (raw); `-` when none.
    pub note: String,
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rounds: Vec<String> = self.rounds.iter().map(|r| r.to_string()).collect();
        write!(
            f,
            "{RESULT}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            self.subject.as_str(),
            self.point,
            self.op,
            self.size,
            self.param,
            self.unit.as_str(),
            self.samples,
            rounds.join(","),
            if self.note.is_empty() {
                "-"
            } else {
                &self.note
            }
        )
    }
}

impl Record {
    /// Parses a line printed by [`Record`]'s `Display`.
    pub fn parse(line: &str) -> Option<Record> {
        let rest = line.strip_prefix(RESULT)?.strip_prefix('\t')?;
        let f: Vec<&str> = rest.split('\t').collect();
        if f.len() != 9 {
            return None;
        }
        let rounds = f[7]
            .split(',')
            .map(|x| x.parse::<f64>().ok())
            .collect::<Option<Vec<f64>>>()?;
        if rounds.is_empty() {
            return None;
        }
        Some(Record {
            subject: Subject::parse(f[0])?,
            point: f[1].parse().ok()?,
            op: f[2].to_string(),
            size: f[3].parse().ok()?,
            param: f[4].parse().ok()?,
            unit: Unit::parse(f[5])?,
            samples: f[6].parse().ok()?,
            rounds,
            note: if f[8] == "-" {
                String::new()
            } else {
                f[8].to_string()
            },
        })
    }

    /// A value of the record's unit from a time per operation (us).
    pub fn value_of(&self, us_per_op: f64) -> f64 {
        match self.unit {
            Unit::Us => us_per_op,
            // bytes per microsecond = 10^6 bytes per second.
            Unit::MBps => self.size as f64 / us_per_op,
            Unit::Mops => 1.0 / us_per_op,
        }
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
            subject: Subject::RtTask,
            point: 7,
            op: op::PUT_BW.into(),
            size: 65536,
            param: 64,
            unit: Unit::MBps,
            samples: 30,
            rounds: vec![53.1, 50.25, 60.0, 49.5, 51.0],
            note: "rt.put_nb x64 (owned Vec) + wait".into(),
        };
        assert_eq!(Record::parse(&r.to_string()), Some(r.clone()));
        let mut e = r;
        e.note.clear();
        assert_eq!(Record::parse(&e.to_string()), Some(e.clone()));
        assert_eq!(Record::parse("@@result\tx"), None);
        e.rounds.clear();
        assert_eq!(Record::parse(&e.to_string()), None);
    }

    #[test]
    fn values_follow_the_unit() {
        let mut r = Record::parse("@@result\traw\t0\tput_bw\t1000\t4\tMB/s\t3\t2\t-").unwrap();
        assert_eq!(r.value_of(2.0), 500.0);
        r.unit = Unit::Mops;
        assert_eq!(r.value_of(0.5), 2.0);
        r.unit = Unit::Us;
        assert_eq!(r.value_of(0.5), 0.5);
        assert_eq!(Subject::parse("comm-task"), Some(Subject::CommTask));
    }

    #[test]
    fn progress_round_trips() {
        assert_eq!(
            parse_progress(&progress_line(3, 40, "put 8 B")),
            Some((3, 40, "put 8 B".into()))
        );
    }
}
