//! What one measuring job does: sizes, windows, boundary fan-outs, time
//! budget. The driver builds a plan and passes it on the command line of
//! the locales it starts under `pgasrun`.

use crate::proto::{op, Impl, Record};
use crate::stats::{Budget, Point, Res};
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
    /// Milliseconds per point.
    pub point_ms: u64,
    /// Operations in flight for the 8-byte PUT rate and bandwidth up to 64 KiB.
    pub window: u64,
    /// Operations in flight for bandwidth above 64 KiB.
    pub window_large: u64,
    /// `Some(ks)`: a boundary job (task-end after PUTs to k targets, for
    /// each k); `None`: the per-operation job.
    pub boundary: Option<Vec<u64>>,
    /// Rounds per point: the floor and ours alternate this many times, each
    /// round taking `point_ms / rounds` per implementation.
    pub rounds: u64,
}

/// One point of a job (measured for ours, the floor, or both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Blocking PUT of `size` bytes.
    Put(u64),
    /// Blocking GET of `size` bytes.
    Get(u64),
    /// A window of `.1` non-blocking PUTs of `.0` bytes, then wait.
    PutBw(u64, u64),
    /// A window of `.1` non-blocking GETs of `.0` bytes, then wait.
    GetBw(u64, u64),
    /// A window of this many 8-byte non-blocking PUTs, then wait.
    PutRate(u64),
    /// Fetch-add on a u64 (ours: `Am::amo`; floor: `fi_fetch_atomic`).
    Amo,
    /// Fetch-add through an AM (ours only).
    AmoAm,
    /// Blocking empty on-statement (ours only).
    OnStmt,
    /// `fi_send`/`fi_recv` round trip (floor only).
    PingPong,
    /// Task end after PUTs to this many targets.
    TaskEnd(u64),
}

impl Op {
    /// The `op` column.
    pub fn name(self) -> &'static str {
        match self {
            Op::Put(_) => op::PUT_LAT,
            Op::Get(_) => op::GET_LAT,
            Op::PutBw(..) => op::PUT_BW,
            Op::GetBw(..) => op::GET_BW,
            Op::PutRate(_) => op::PUT_RATE,
            Op::Amo => op::AMO,
            Op::AmoAm => op::AMO_AM,
            Op::OnStmt => op::ON_STMT,
            Op::PingPong => op::PINGPONG,
            Op::TaskEnd(_) => op::BOUNDARY,
        }
    }

    /// A short label for progress.
    pub fn label(self) -> String {
        match self {
            Op::Put(s) => format!("PUT {s} B"),
            Op::Get(s) => format!("GET {s} B"),
            Op::PutBw(s, w) => format!("PUT bw {s} B x{w}"),
            Op::GetBw(s, w) => format!("GET bw {s} B x{w}"),
            Op::PutRate(w) => format!("PUT rate 8 B x{w}"),
            Op::Amo => "fetch-add".into(),
            Op::AmoAm => "fetch-add via AM".into(),
            Op::OnStmt => "empty on-statement".into(),
            Op::PingPong => "raw ping-pong".into(),
            Op::TaskEnd(k) => format!("task end k={k}"),
        }
    }

    /// Which implementations measure it.
    pub fn impls(self) -> &'static [Impl] {
        match self {
            Op::AmoAm | Op::OnStmt => &[Impl::Ours],
            Op::PingPong => &[Impl::Raw],
            _ => &[Impl::Raw, Impl::Ours],
        }
    }

    /// The record of a measured point (`p` = time of one call of the
    /// measured closure: one op, or one window).
    pub fn record(self, imp: Impl, p: Point, note: &str) -> Record {
        let n = self.name();
        match self {
            Op::Put(s) | Op::Get(s) => Record::latency(imp, n, s, 1, p, note),
            Op::PutBw(s, w) | Op::GetBw(s, w) => Record::bandwidth(imp, n, s, w, p, note),
            Op::PutRate(w) => Record::rate(imp, n, 8, w, p, note),
            Op::Amo | Op::AmoAm | Op::PingPong => Record::latency(imp, n, 8, 1, p, note),
            Op::OnStmt => Record::latency(imp, n, 0, 1, p, note),
            Op::TaskEnd(k) => Record::latency(imp, n, 8, k, p, note),
        }
    }
}

/// Powers of two from `lo` to `hi` inclusive.
pub fn pow2(lo: u64, hi: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = lo.max(1);
    while s <= hi {
        v.push(s);
        s *= 2;
    }
    v
}

impl Plan {
    /// The default sweep: 8 B .. 1 MiB in powers of two.
    pub fn full(point_ms: u64) -> Plan {
        Plan {
            lat_sizes: pow2(8, MAX_SIZE),
            bw_sizes: vec![4096, 65536, MAX_SIZE],
            point_ms,
            window: 64,
            window_large: 16,
            boundary: None,
            rounds: 5,
        }
    }

    /// The reduced sweep for slow providers (`sockets`).
    pub fn reduced(point_ms: u64) -> Plan {
        Plan {
            lat_sizes: vec![8, 512, 32768, MAX_SIZE],
            bw_sizes: vec![65536],
            point_ms,
            window: 16,
            window_large: 4,
            boundary: None,
            rounds: 5,
        }
    }

    /// A boundary job with fan-outs `ks`.
    pub fn boundary(ks: Vec<u64>, point_ms: u64) -> Plan {
        Plan {
            lat_sizes: Vec::new(),
            bw_sizes: Vec::new(),
            point_ms,
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

    /// The time budget of one round of one point.
    pub fn budget(&self) -> Budget {
        let mut b = Budget::ms((self.point_ms / self.rounds.max(1)).max(1));
        b.min_samples = 3;
        b
    }

    /// The points of this job, in order.
    pub fn ops(&self) -> Vec<Op> {
        if let Some(ks) = &self.boundary {
            return ks.iter().map(|&k| Op::TaskEnd(k)).collect();
        }
        let mut v: Vec<Op> = self.lat_sizes.iter().map(|&s| Op::Put(s)).collect();
        v.extend(self.lat_sizes.iter().map(|&s| Op::Get(s)));
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
        v.extend([Op::Amo, Op::AmoAm, Op::OnStmt, Op::PingPong]);
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
            "--point-ms".into(),
            self.point_ms.to_string(),
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
        let mut p = Plan::full(40);
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
                "--point-ms" => p.point_ms = val()?.parse()?,
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
        if p.window == 0 || p.window_large == 0 || p.point_ms == 0 || p.rounds == 0 {
            return Err("windows, rounds and --point-ms must be at least 1".into());
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
    fn full_sweep_is_8_bytes_to_1_mib() {
        let p = Plan::full(10);
        assert_eq!(p.lat_sizes.first(), Some(&8));
        assert_eq!(p.lat_sizes.last(), Some(&MAX_SIZE));
        assert_eq!(p.lat_sizes.len(), 18);
        assert_eq!(p.region_bytes(), 16 << 20);
    }

    #[test]
    fn bad_args_are_errors() {
        assert!(Plan::from_args(&["--lat".into(), "0".into()]).is_err());
        assert!(Plan::from_args(&["--what".into()]).is_err());
        assert!(Plan::from_args(&["--lat".into()]).is_err());
    }
}
