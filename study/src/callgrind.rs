//! Instruction counts per 8-byte PUT (scripts/callgrind-put).
//!
//! `study callgrind-put N` is the measured program: under `pgasrun -n 2`,
//! locale 0 (run under `valgrind --tool=callgrind
//! --toggle-collect=*put_loop*`) binds to worker context 0 and does N
//! blocking 8-byte PUTs to locale 1 inside [`put_loop`], so only what
//! happens inside that loop is counted. `study callgrind-summary` reads the
//! callgrind output of an N and a 2N run and attributes the instructions
//! of the extra N PUTs by where they were executed: our crates, Rust's
//! std/dependencies linked into our binary, the libfabric-sys wrappers of
//! libfabric's static-inline calls, libfabric itself, and other libraries.

use crate::stats::Res;
use comm_ofi::{AmoOp, AmoRequest, AmoType, Comm, GlobalAddr};
use std::collections::BTreeMap;

/// The loop callgrind collects in (`--toggle-collect=*put_loop*`).
#[inline(never)]
pub fn put_loop(comm: &Comm, target: GlobalAddr, src: &[u8], n: u64) -> Res<()> {
    for _ in 0..n {
        comm.put(target, src)?;
    }
    Ok(())
}

/// The same loop of non-fetching 64-bit atomic adds (`callgrind-put N add`;
/// the name keeps `put_loop` so the same toggle collects in it).
#[inline(never)]
pub fn put_loop_of_adds(comm: &Comm, target: GlobalAddr, n: u64) -> Res<()> {
    for _ in 0..n {
        comm.amo(&AmoRequest::new(target, AmoType::U64, AmoOp::Add, 1))?;
    }
    Ok(())
}

/// The same loop of non-blocking PUTs, each waited for (`callgrind-put N
/// nb`).
#[inline(never)]
pub fn put_loop_nb(comm: &Comm, target: GlobalAddr, src: &[u8], n: u64) -> Res<()> {
    for _ in 0..n {
        // SAFETY: the handle is waited for before `src` is touched again.
        unsafe { comm.put_nb(target, src) }?.wait()?;
    }
    Ok(())
}

/// `study callgrind-put N [BYTES | add | nb]` (every locale of a 2-locale job):
/// N blocking PUTs of BYTES (8 by default; larger ones for profiling bulk
/// PUTs), N atomic adds to one word, or N non-blocking 8-byte PUTs each
/// waited for.
pub fn put_main(args: &[String]) -> Res<()> {
    let n: u64 = args
        .first()
        .ok_or("usage: study callgrind-put N [BYTES | add | nb]")?
        .parse()?;
    let adds = args.get(1).is_some_and(|a| a == "add");
    let nb = args.get(1).is_some_and(|a| a == "nb");
    let size: usize = match args.get(1) {
        Some(_) if adds || nb => 8,
        Some(s) => s.parse()?,
        None => 8,
    };
    let comm = Comm::init()?;
    let word = comm.alloc(size.max(64), 64)?;
    let src = comm.alloc(size.max(64), 64)?;
    comm.barrier()?;
    if comm.here() == 0 {
        comm.bind_worker(0)?;
        let target = comm.symmetric(word, 1)?;
        // SAFETY: `src` is our own fresh heap allocation of `size` bytes
        // (at least).
        let buf = unsafe { crate::ours::heap_slice(src, size) };
        // Warm-up outside the collected loop (first-touch, connection set-up).
        for _ in 0..16 {
            comm.put(target, buf)?;
            if adds {
                comm.amo(&AmoRequest::new(target, AmoType::U64, AmoOp::Add, 1))?;
            }
        }
        if adds {
            put_loop_of_adds(&comm, target, n)?;
            println!("{n} adds: {}", comm.describe());
        } else if nb {
            put_loop_nb(&comm, target, buf, n)?;
            println!("{n} non-blocking PUTs: {}", comm.describe());
        } else {
            put_loop(&comm, target, buf, n)?;
            println!("{n} PUTs: {}", comm.describe());
        }
    }
    comm.finalize()?;
    Ok(())
}

/// Where an instruction was executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    /// comm-ofi, mcm, amhandler, bootstrap, study.
    Ours,
    /// Rust std/core/alloc and our dependencies (parking_lot, tracing, ...)
    /// linked into our binary and called from our code.
    RustDeps,
    /// The C wrappers libfabric-sys compiles for libfabric's static-inline
    /// calls (`fi_writemsg__extern`, ...): one indirect call each.
    InlineWrappers,
    /// libfabric.so and its providers.
    Libfabric,
    /// Other shared objects (libc's memcpy, clock_gettime, ...).
    Other,
}

impl Place {
    /// Label.
    pub fn label(self) -> &'static str {
        match self {
            Place::Ours => "our crates (comm_ofi, mcm, amhandler, study)",
            Place::RustDeps => "Rust std + deps in our binary",
            Place::InlineWrappers => "libfabric-sys static-inline wrappers",
            Place::Libfabric => "libfabric.so (provider)",
            Place::Other => "other libraries (libc, ...)",
        }
    }
}

const OUR_CRATES: [&str; 6] = [
    "comm_ofi::",
    "mcm::",
    "amhandler::",
    "study::",
    "bootstrap::",
    "libfabric_sys::",
];

/// Classifies a function executed in object `object`.
pub fn classify(object: &str, function: &str) -> Place {
    let base = object.rsplit('/').next().unwrap_or(object);
    if base.starts_with("libfabric") {
        return Place::Libfabric;
    }
    if function.ends_with("__extern") {
        return Place::InlineWrappers;
    }
    if base.ends_with(".so") || base.contains(".so.") {
        return Place::Other;
    }
    // Trait impls demangle as `<comm_ofi::x::Y as core::...>::f`: the self
    // type decides.
    let f = function.trim_start_matches('<');
    if OUR_CRATES.iter().any(|c| f.starts_with(c)) {
        Place::Ours
    } else {
        Place::RustDeps
    }
}

/// Self cost (Ir) per place, and the calls seen of CQ reads.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Profile {
    /// Self Ir by place.
    pub by_place: BTreeMap<Place, u64>,
    /// Self Ir by (place, function), for the top list.
    pub by_fn: BTreeMap<(Place, String), u64>,
    /// Calls of `fi_cq_read` / `fi_cq_sread` (each wait-loop poll).
    pub cq_reads: u64,
    /// Inclusive cost of those calls (the wrapper, libfabric's CQ read and
    /// whatever it calls).
    pub cq_read_incl: u64,
    /// Total Ir.
    pub total: u64,
}

/// Parses callgrind output (`--compress-strings` on or off) into self
/// costs. Only the first event column (Ir) is used.
pub fn parse(text: &str) -> Res<Profile> {
    let mut names: BTreeMap<(char, String), String> = BTreeMap::new();
    let mut resolve = |kind: char, v: &str| -> String {
        let v = v.trim();
        if let Some(rest) = v.strip_prefix('(') {
            if let Some(end) = rest.find(')') {
                let id = rest[..end].to_string();
                let name = rest[end + 1..].trim();
                if !name.is_empty() {
                    names.insert((kind, id), name.to_string());
                    return name.to_string();
                }
                return names.get(&(kind, id)).cloned().unwrap_or_default();
            }
        }
        v.to_string()
    };
    let mut p = Profile::default();
    let (mut ob, mut func) = (String::new(), String::new());
    let mut skip_next_cost = false;
    let mut pending_call_to_cq = false;
    for line in text.lines() {
        let Some(first) = line.chars().next() else {
            continue;
        };
        if first.is_ascii_digit() || first == '+' || first == '-' || first == '*' {
            let cost: u64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            if skip_next_cost {
                // Inclusive cost of a call: not this function's own.
                skip_next_cost = false;
                if pending_call_to_cq {
                    pending_call_to_cq = false;
                    p.cq_read_incl += cost;
                }
                continue;
            }
            let place = classify(&ob, &func);
            *p.by_place.entry(place).or_default() += cost;
            *p.by_fn.entry((place, func.clone())).or_default() += cost;
            p.total += cost;
            continue;
        }
        if let Some(v) = line.strip_prefix("ob=") {
            ob = resolve('o', v);
        } else if let Some(v) = line.strip_prefix("fn=") {
            func = resolve('f', v);
        } else if let Some(v) = line.strip_prefix("cob=") {
            resolve('o', v);
        } else if let Some(v) = line.strip_prefix("cfn=") {
            let callee = resolve('f', v);
            pending_call_to_cq =
                callee.starts_with("fi_cq_read") || callee.starts_with("fi_cq_sread");
        } else if let Some(v) = line.strip_prefix("calls=") {
            if pending_call_to_cq {
                p.cq_reads += v
                    .split_whitespace()
                    .next()
                    .and_then(|c| c.parse::<u64>().ok())
                    .unwrap_or(0);
            }
            skip_next_cost = true;
        }
    }
    Ok(p)
}

/// Per-PUT figures of one run of `n` PUTs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerPut {
    /// Every instruction in the loop.
    pub total: f64,
    /// Our crates + Rust std/deps, everything.
    pub ours: f64,
    /// Wait-loop polls (CQ reads).
    pub polls: f64,
    /// Our instructions outside the CQ-read wrapper `Cq::read` (the issue
    /// path plus the wait loop's own iterations).
    pub ours_issue: f64,
    /// Everything outside the CQ reads (issue path, all libraries).
    pub issue: f64,
    /// Instructions per CQ read: (ours in `Cq::read`, libfabric's read).
    pub per_poll: (f64, f64),
}

/// Name of our CQ-read wrapper (one call per poll of the wait loop).
const OUR_POLL_FN: &str = "comm_ofi::ofi::fid::Cq::read";

/// Divides a profile of `n` PUTs into per-PUT figures.
pub fn per_put(p: &Profile, n: u64) -> PerPut {
    let n = n.max(1) as f64;
    let ours = (p.by_place.get(&Place::Ours).copied().unwrap_or(0)
        + p.by_place.get(&Place::RustDeps).copied().unwrap_or(0)) as f64;
    let our_poll: f64 = p
        .by_fn
        .iter()
        .filter(|((_, f), _)| f.starts_with(OUR_POLL_FN))
        .map(|(_, v)| *v as f64)
        .sum();
    let polls = p.cq_reads.max(1) as f64;
    PerPut {
        total: p.total as f64 / n,
        ours: ours / n,
        polls: p.cq_reads as f64 / n,
        ours_issue: (ours - our_poll) / n,
        issue: (p.total as f64 - our_poll - p.cq_read_incl as f64) / n,
        per_poll: (our_poll / polls, p.cq_read_incl as f64 / polls),
    }
}

/// `study callgrind-summary N FILE_N 2N FILE_2N`: per-PUT figures of both
/// runs and of their difference.
pub fn summary_main(args: &[String]) -> Res<()> {
    let [n1, f1, n2, f2] = args else {
        return Err("usage: study callgrind-summary N FILE_N 2N FILE_2N".into());
    };
    let (n1, n2): (u64, u64) = (n1.parse()?, n2.parse()?);
    if n2 <= n1 {
        return Err("the second run must do more PUTs than the first".into());
    }
    let a = parse(&std::fs::read_to_string(f1)?)?;
    let b = parse(&std::fs::read_to_string(f2)?)?;
    let (pa, pb) = (per_put(&a, n1), per_put(&b, n2));
    let d = (n2 - n1) as f64;
    let diff = |x: u64, y: u64| (y as f64 - x as f64) / d;
    let mut out = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "instructions per 8-byte blocking PUT (callgrind, only inside the PUT loop)"
    );
    let _ = writeln!(
        out,
        "{:<58} {:>10} {:>10}",
        "",
        format!("{n1} PUTs"),
        format!("{n2} PUTs")
    );
    let row = |out: &mut String, label: &str, x: f64, y: f64| {
        let _ = writeln!(out, "  {label:<56} {x:>10.1} {y:>10.1}");
    };
    row(&mut out, "total", pa.total, pb.total);
    row(
        &mut out,
        "ours (our crates + Rust std/deps), all",
        pa.ours,
        pb.ours,
    );
    row(
        &mut out,
        "wait-loop polls (CQ reads) per PUT",
        pa.polls,
        pb.polls,
    );
    row(
        &mut out,
        "ours outside the CQ reads (issue + completion path)",
        pa.ours_issue,
        pb.ours_issue,
    );
    row(
        &mut out,
        "everything outside the CQ reads",
        pa.issue,
        pb.issue,
    );
    row(
        &mut out,
        "libfabric + libc outside the CQ reads",
        pa.issue - pa.ours_issue,
        pb.issue - pb.ours_issue,
    );
    row(
        &mut out,
        "per CQ read: ours (Cq::read)",
        pa.per_poll.0,
        pb.per_poll.0,
    );
    row(
        &mut out,
        "per CQ read: libfabric (fi_cq_read)",
        pa.per_poll.1,
        pb.per_poll.1,
    );
    // Polls per PUT vary with timing; a line through the two runs gives
    // the cost at one poll per PUT (the least a blocking PUT can do) and
    // the cost of each extra poll.
    if (pb.polls - pa.polls).abs() > 0.05 {
        let fit = |x: f64, y: f64| {
            let slope = (y - x) / (pb.polls - pa.polls);
            (x + slope * (1.0 - pa.polls), slope)
        };
        let (o1, os) = fit(pa.ours, pb.ours);
        let (t1, ts) = fit(pa.total, pb.total);
        let _ = writeln!(
            out,
            "at one poll per PUT (line through both runs): ours {o1:.0}, total {t1:.0}; \
             each extra poll: ours {os:.0}, total {ts:.0}"
        );
    } else {
        let _ = writeln!(
            out,
            "at {:.2} polls per PUT: ours {:.0}, total {:.0}",
            pb.polls, pb.ours, pb.total
        );
    }
    let _ = writeln!(
        out,
        "difference of the two runs per extra PUT, by place (polls vary with timing: {:.2} vs {:.2} per PUT):",
        pa.polls, pb.polls
    );
    for place in [
        Place::Ours,
        Place::RustDeps,
        Place::InlineWrappers,
        Place::Libfabric,
        Place::Other,
    ] {
        let x = diff(
            a.by_place.get(&place).copied().unwrap_or(0),
            b.by_place.get(&place).copied().unwrap_or(0),
        );
        let _ = writeln!(out, "  {:<56} {x:>10.1}", place.label());
    }
    let _ = writeln!(
        out,
        "top functions in the {n2}-PUT run (instructions per PUT):"
    );
    let mut fns: Vec<(f64, &(Place, String))> = b
        .by_fn
        .iter()
        .map(|(k, v)| (*v as f64 / n2 as f64, k))
        .filter(|(x, _)| *x >= 1.0)
        .collect();
    fns.sort_by(|x, y| y.0.total_cmp(&x.0));
    for (x, (place, f)) in fns.iter().take(20) {
        let short: String = f.chars().take(90).collect();
        let _ = writeln!(out, "  {x:>8.1}  {:<10} {short}", format!("{place:?}"));
    }
    print!("{out}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_places() {
        let bin = "/t/release/study";
        assert_eq!(classify(bin, "comm_ofi::comm::Comm::put"), Place::Ours);
        assert_eq!(
            classify(bin, "<comm_ofi::ctx::TxContext as core::fmt::Debug>::fmt"),
            Place::Ours
        );
        assert_eq!(
            classify(bin, "parking_lot::raw_mutex::RawMutex::lock_slow"),
            Place::RustDeps
        );
        assert_eq!(classify(bin, "fi_writemsg__extern"), Place::InlineWrappers);
        assert_eq!(
            classify(
                "/usr/lib/x86_64-linux-gnu/libfabric.so.1.18.0",
                "smr_writemsg"
            ),
            Place::Libfabric
        );
        assert_eq!(
            classify("/usr/lib/x86_64-linux-gnu/libc.so.6", "memcpy"),
            Place::Other
        );
    }

    #[test]
    fn parse_self_costs_and_skips_inclusive_call_costs() {
        let text = "\
events: Ir
ob=(1) /t/study
fl=(1) x.rs
fn=(1) comm_ofi::comm::Comm::put
10 100
cob=(2) /usr/lib/libfabric.so.1
cfi=(2) y.c
cfn=(2) fi_cq_read__extern
calls=3 0
10 900
fn=(2)
5 30
ob=(2)
fn=(3) smr_cq_read
1 870
";
        let p = parse(text).unwrap();
        assert_eq!(p.by_place[&Place::Ours], 100);
        assert_eq!(p.by_place[&Place::InlineWrappers], 30);
        assert_eq!(p.by_place[&Place::Libfabric], 870);
        assert_eq!(p.total, 1000);
        assert_eq!(p.cq_reads, 3);
        assert_eq!(p.cq_read_incl, 900);
        let pp = per_put(&p, 1);
        assert_eq!(pp.issue, 100.0);
        assert_eq!(pp.per_poll.1, 300.0);
    }
}
