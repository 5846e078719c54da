//! What one measuring job does: the points, who is measured at each, sizes,
//! windows, rounds and the time budget. The driver builds a plan and passes
//! it on the command line of the locales it starts under `pgasrun`.

use crate::proto::{op, Subject, Unit};
use crate::stats::{Budget, Res};
use std::fmt::Write as _;

/// Largest transfer measured (and the heap each side needs for windows).
pub const MAX_SIZE: u64 = 1 << 20;

/// What a job measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// PUT/GET latency sizes.
    pub lat_sizes: Vec<u64>,
    /// PUT/GET bandwidth sizes.
    pub bw_sizes: Vec<u64>,
    /// Milliseconds one subject measures in one round of a point.
    pub round_ms: u64,
    /// Operations in flight for the 8-byte PUT and add rates and bandwidth
    /// up to 64 KiB.
    pub window: u64,
    /// Operations in flight for bandwidth above 64 KiB.
    pub window_large: u64,
    /// `Some(ks)`: a boundary job (task end after PUTs to k targets, for
    /// each k); `None`: the per-operation job.
    pub boundary: Option<Vec<u64>>,
    /// Rounds per point: the floor and every subject take turns this many
    /// times (the first place rotates), each round giving one median.
    pub rounds: u64,
}

/// One point of a job: an operation measured by the floor (if it has one)
/// and by one or more subjects of ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Blocking PUT of `size` bytes.
    Put(u64),
    /// Blocking GET of `size` bytes.
    Get(u64),
    /// 8-byte PUT, then the boundary that makes it visible (visibility
    /// latency).
    PutVisible,
    /// From the main thread: spawn a task that PUTs 8 bytes, join it.
    SpawnPut,
    /// A window of `.1` non-blocking PUTs of `.0` bytes, then wait.
    PutBw(u64, u64),
    /// A window of `.1` non-blocking GETs of `.0` bytes, then wait.
    GetBw(u64, u64),
    /// A window of this many 8-byte non-blocking PUTs, then wait.
    PutRate(u64),
    /// Fetch-add on a u64 by the type's route.
    FetchAdd,
    /// Fetch-add through an AM whatever the route.
    FetchAddAm,
    /// This many non-fetching adds, then the task-end boundary.
    AddRate(u64),
    /// This many unordered adds (buffered), then the task-end boundary
    /// (which flushes them).
    AddUnorderedRate(u64),
    /// Blocking empty on-statement.
    OnStmt,
    /// From the main thread: spawn an empty task, join it.
    Spawn,
    /// Task end after PUTs to this many targets.
    TaskEnd(u64),
}

impl Op {
    /// The `op` column.
    pub fn name(self) -> &'static str {
        match self {
            Op::Put(_) => op::PUT_LAT,
            Op::Get(_) => op::GET_LAT,
            Op::PutVisible => op::PUT_VISIBLE,
            Op::SpawnPut => op::SPAWN_PUT,
            Op::PutBw(..) => op::PUT_BW,
            Op::GetBw(..) => op::GET_BW,
            Op::PutRate(_) => op::PUT_RATE,
            Op::FetchAdd => op::AMO,
            Op::FetchAddAm => op::AMO_AM,
            Op::AddRate(_) => op::ADD_RATE,
            Op::AddUnorderedRate(_) => op::ADD_UNORDERED_RATE,
            Op::OnStmt => op::ON_STMT,
            Op::Spawn => op::SPAWN,
            Op::TaskEnd(_) => op::BOUNDARY,
        }
    }

    /// A short label for progress.
    pub fn label(self) -> String {
        match self {
            Op::Put(s) => format!("PUT {s} B"),
            Op::Get(s) => format!("GET {s} B"),
            Op::PutVisible => "PUT 8 B + visible".into(),
            Op::SpawnPut => "spawn{PUT} + join".into(),
            Op::PutBw(s, w) => format!("PUT bw {s} B x{w}"),
            Op::GetBw(s, w) => format!("GET bw {s} B x{w}"),
            Op::PutRate(w) => format!("PUT rate 8 B x{w}"),
            Op::FetchAdd => "fetch-add".into(),
            Op::FetchAddAm => "fetch-add via AM".into(),
            Op::AddRate(w) => format!("add x{w} + task end"),
            Op::AddUnorderedRate(w) => format!("add_unordered x{w} + task end"),
            Op::OnStmt => "empty on-statement".into(),
            Op::Spawn => "spawn + join".into(),
            Op::TaskEnd(k) => format!("task end k={k}"),
        }
    }

    /// (size, param, unit) of its records. Throughputs are per operation
    /// of the window.
    pub fn shape(self) -> (u64, u64, Unit) {
        match self {
            Op::Put(s) | Op::Get(s) => (s, 1, Unit::Us),
            Op::PutVisible | Op::SpawnPut | Op::FetchAdd | Op::FetchAddAm => (8, 1, Unit::Us),
            Op::PutBw(s, w) | Op::GetBw(s, w) => (s, w, Unit::MBps),
            Op::PutRate(w) => (8, w, Unit::Mops),
            Op::AddRate(w) | Op::AddUnorderedRate(w) => (8, w, Unit::Us),
            Op::OnStmt | Op::Spawn => (0, 1, Unit::Us),
            Op::TaskEnd(k) => (8, k, Unit::Us),
        }
    }

    /// Operations per call of the measured closure (a window counts each
    /// of its operations).
    pub fn per_call(self) -> u64 {
        match self {
            Op::PutBw(_, w)
            | Op::GetBw(_, w)
            | Op::PutRate(w)
            | Op::AddRate(w)
            | Op::AddUnorderedRate(w) => w,
            _ => 1,
        }
    }

    /// Which callers of ours measure it (the floor is decided by the
    /// locale, which knows the provider's facts). `ends` are the plan's
    /// smallest and largest latency sizes: there every caller measures PUT
    /// and GET, at the other sizes only a task through the public API.
    pub fn subjects(self, ends: (u64, u64)) -> &'static [Subject] {
        use Subject::*;
        match self {
            Op::Put(s) | Op::Get(s) if s == ends.0 || s == ends.1 => &[RtTask, RtMain, CommTask],
            Op::Put(_) | Op::Get(_) => &[RtTask],
            Op::PutVisible | Op::FetchAdd => &[RtTask, RtMain, CommTask],
            Op::SpawnPut | Op::Spawn => &[RtMain],
            Op::PutRate(_) | Op::OnStmt => &[RtTask, RtMain],
            Op::FetchAddAm => &[CommTask],
            Op::PutBw(..)
            | Op::GetBw(..)
            | Op::AddRate(_)
            | Op::AddUnorderedRate(_)
            | Op::TaskEnd(_) => &[RtTask],
        }
    }
}

/// Powers of `step` from `lo` up to `hi`, with `hi` itself last.
pub fn sizes(lo: u64, hi: u64, step: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = lo.max(1);
    while s < hi {
        v.push(s);
        s *= step.max(2);
    }
    v.push(hi);
    v
}

impl Plan {
    /// The default sweep: 8 B .. 1 MiB in powers of 4.
    pub fn full(round_ms: u64) -> Plan {
        Plan {
            lat_sizes: sizes(8, MAX_SIZE, 4),
            bw_sizes: vec![4096, 65536, MAX_SIZE],
            round_ms,
            window: 64,
            window_large: 16,
            boundary: None,
            rounds: 5,
        }
    }

    /// The reduced sweep for slow providers (`sockets`) and `--quick`.
    pub fn reduced(round_ms: u64) -> Plan {
        Plan {
            lat_sizes: vec![8, 512, 32768, MAX_SIZE],
            bw_sizes: vec![65536],
            round_ms,
            window: 16,
            window_large: 4,
            boundary: None,
            rounds: 5,
        }
    }

    /// A boundary job with fan-outs `ks`.
    pub fn boundary(ks: Vec<u64>, round_ms: u64) -> Plan {
        Plan {
            lat_sizes: Vec::new(),
            bw_sizes: Vec::new(),
            round_ms,
            window: 1,
            window_large: 1,
            boundary: Some(ks),
            rounds: 5,
        }
    }

    /// Window used for bandwidth at `size`.
    pub fn window_for(&self, size: u64) -> u64 {
        if size > 65536 {
            self.window_large
        } else {
            self.window
        }
    }

    /// The time budget of one subject in one round of a point.
    pub fn budget(&self) -> Budget {
        let mut b = Budget::ms(self.round_ms.max(1));
        b.min_samples = 3;
        b
    }

    /// The smallest and largest latency sizes (where every caller is measured).
    pub fn ends(&self) -> (u64, u64) {
        let lo = self.lat_sizes.iter().copied().min().unwrap_or(8);
        (lo, self.lat_sizes.iter().copied().max().unwrap_or(lo))
    }

    /// The points of this job, in order.
    pub fn ops(&self) -> Vec<Op> {
        if let Some(ks) = &self.boundary {
            return ks.iter().map(|&k| Op::TaskEnd(k)).collect();
        }
        let mut v: Vec<Op> = self.lat_sizes.iter().map(|&s| Op::Put(s)).collect();
        v.extend(self.lat_sizes.iter().map(|&s| Op::Get(s)));
        v.extend([Op::PutVisible, Op::SpawnPut]);
        v.extend(
            self.bw_sizes
                .iter()
                .map(|&s| Op::PutBw(s, self.window_for(s))),
        );
        v.extend(
            self.bw_sizes
                .iter()
                .map(|&s| Op::GetBw(s, self.window_for(s))),
        );
        v.push(Op::PutRate(self.window));
        v.extend([
            Op::FetchAdd,
            Op::FetchAddAm,
            Op::AddRate(self.window),
            Op::AddUnorderedRate(self.window),
        ]);
        v.extend([Op::OnStmt, Op::Spawn]);
        v
    }

    /// Bytes of registered memory each side needs for this plan's buffers
    /// (source/destination windows, one region per side).
    pub fn region_bytes(&self) -> u64 {
        let bw = self
            .bw_sizes
            .iter()
            .map(|&s| s * self.window_for(s))
            .max()
            .unwrap_or(0);
        let lat = self.lat_sizes.iter().copied().max().unwrap_or(0);
        bw.max(lat).max(8 * self.window).max(4096)
    }

    /// Command-line form (parsed by [`Plan::from_args`]).
    pub fn to_args(&self) -> Vec<String> {
        let list = |v: &[u64]| {
            let mut s = String::new();
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                let _ = write!(s, "{x}");
            }
            s
        };
        let mut a = vec![
            "--lat".into(),
            list(&self.lat_sizes),
            "--bw".into(),
            list(&self.bw_sizes),
            "--round-ms".into(),
            self.round_ms.to_string(),
            "--window".into(),
            self.window.to_string(),
            "--window-large".into(),
            self.window_large.to_string(),
            "--rounds".into(),
            self.rounds.to_string(),
        ];
        if let Some(ks) = &self.boundary {
            a.push("--boundary".into());
            a.push(list(ks));
        }
        a
    }

    /// Parses [`Plan::to_args`].
    pub fn from_args(args: &[String]) -> Res<Plan> {
        let mut p = Plan::full(20);
        p.lat_sizes.clear();
        p.bw_sizes.clear();
        let list = |s: &str| -> Res<Vec<u64>> {
            s.split(',')
                .filter(|x| !x.is_empty())
                .map(|x| {
                    x.parse::<u64>()
                        .map_err(|e| format!("bad number {x:?}: {e}").into())
                })
                .collect()
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut val =
                || -> Res<&String> { it.next().ok_or_else(|| format!("{a} needs a value").into()) };
            match a.as_str() {
                "--lat" => p.lat_sizes = list(val()?)?,
                "--bw" => p.bw_sizes = list(val()?)?,
                "--round-ms" => p.round_ms = val()?.parse()?,
                "--window" => p.window = val()?.parse()?,
                "--window-large" => p.window_large = val()?.parse()?,
                "--boundary" => p.boundary = Some(list(val()?)?),
                "--rounds" => p.rounds = val()?.parse()?,
                other => return Err(format!("unknown plan argument {other:?}").into()),
            }
        }
        if p.lat_sizes
            .iter()
            .chain(&p.bw_sizes)
            .any(|&s| s == 0 || s > MAX_SIZE)
        {
            return Err(format!("sizes must be 1..={MAX_SIZE}").into());
        }
        if p.window == 0 || p.window_large == 0 || p.round_ms == 0 || p.rounds == 0 {
            return Err("windows, rounds and --round-ms must be at least 1".into());
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_round_trip() {
        for p in [
            Plan::full(40),
            Plan::reduced(100),
            Plan::boundary(vec![1, 2, 4], 30),
        ] {
            assert_eq!(Plan::from_args(&p.to_args()).unwrap(), p);
        }
    }

    #[test]
    fn full_sweep_is_8_bytes_to_1_mib_in_powers_of_4() {
        let p = Plan::full(10);
        assert_eq!(p.lat_sizes.first(), Some(&8));
        assert_eq!(p.lat_sizes.last(), Some(&MAX_SIZE));
        assert_eq!(p.lat_sizes.len(), 10);
        assert!(p
            .lat_sizes
            .windows(2)
            .all(|w| w[1] == 4 * w[0] || w[1] == MAX_SIZE));
        assert_eq!(p.region_bytes(), 16 << 20);
        assert_eq!(sizes(8, 100, 4), vec![8, 32, 100]);
    }

    #[test]
    fn every_point_has_a_subject_and_the_smallest_size_has_all_callers() {
        let p = Plan::full(10);
        for o in p.ops() {
            assert!(!o.subjects(p.ends()).is_empty(), "{o:?}");
        }
        assert_eq!(p.ends(), (8, MAX_SIZE));
        assert_eq!(Op::Put(8).subjects(p.ends()).len(), 3);
        assert_eq!(Op::Get(MAX_SIZE).subjects(p.ends()).len(), 3);
        assert_eq!(Op::Put(32).subjects(p.ends()), &[Subject::RtTask]);
        assert_eq!(Op::PutBw(4096, 64).per_call(), 64);
    }

    #[test]
    fn bad_args_are_errors() {
        assert!(Plan::from_args(&["--lat".into(), "0".into()]).is_err());
        assert!(Plan::from_args(&["--what".into()]).is_err());
        assert!(Plan::from_args(&["--lat".into()]).is_err());
        assert!(Plan::from_args(&["--rounds".into(), "0".into()]).is_err());
    }
}
