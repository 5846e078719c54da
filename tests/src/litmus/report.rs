//! Running the multi-process litmus suite (`tests/examples/litmus.rs`) over
//! every provider and MCM mode, reading what it prints, and writing the
//! markdown report of `docs/conformance.md`.
//!
//! A *job* is one launcher run of the program: one provider, one mode, an
//! optional test-only weakening (`PGAS_MCM_WEAKEN`), one group of tests.
//! Each job prints one `litmus` line per (test, size) with the outcome
//! histogram; [`plan`] says which jobs make up the fast (CI) and the full
//! run, [`run`] runs one, [`render`] turns the results into markdown.

use crate::{example, launch};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Locales of every job (SB-ATOMIC needs three; TASK-END has two children).
pub const LOCALES: usize = 3;
/// Worker threads per locale (a parent and two children).
pub const WORKERS: &str = "3";

/// One launcher run of the litmus program.
#[derive(Clone, Debug)]
pub struct Job {
    /// `PGAS_PROVIDER`.
    pub provider: &'static str,
    /// `PGAS_MCM_MODE`.
    pub mode: &'static str,
    /// `PGAS_LOCAL_PATH=mapped` (co-located locales map each other's heaps:
    /// PUT/GET are copies, atomics CPU atomics; AMs still go through the
    /// provider) instead of `fabric`.
    pub mapped: bool,
    /// `PGAS_MCM_WEAKEN` (a negative control), if any.
    pub weaken: Option<&'static str>,
    /// The program's test selection (`rma`, `sync`, `atomic`, names).
    pub select: &'static str,
    /// Iterations per (test, size) at 8 B and inject + 1.
    pub iters: usize,
    /// Iterations at 1 MiB.
    pub large: usize,
    /// Launcher time limit.
    pub timeout: Duration,
}

/// One `litmus` line: a (test, size) of a job.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Instance {
    /// Test name (`RAW-NB`, `SELF-WAW`, ...).
    pub test: String,
    /// The oracle program it is checked against.
    pub base: String,
    /// Bytes moved (8 for the atomics tests).
    pub size: usize,
    /// Iterations run.
    pub iters: usize,
    /// Wall time of the instance.
    pub ms: u64,
    /// Outcome -> how often it was seen.
    pub seen: BTreeMap<String, usize>,
    /// Iterations whose outcome SC forbids.
    pub forbidden: usize,
    /// Allowed outcomes never seen.
    pub gaps: Vec<String>,
}

/// What one job produced.
#[derive(Clone, Debug)]
pub struct JobResult {
    /// The job.
    pub job: Job,
    /// Exit code (None: killed by a signal).
    pub code: Option<i32>,
    /// Instances the program announced (`litmus-start`).
    pub expected: usize,
    /// Whether it printed `litmus-done`.
    pub done: bool,
    /// Parsed `litmus` lines.
    pub instances: Vec<Instance>,
    /// `litmus-forbidden` lines, as printed.
    pub details: Vec<String>,
    /// The end of standard error (failures).
    pub stderr_tail: String,
    /// Wall time of the job.
    pub elapsed: Duration,
    /// Provider facts from `litmus-start` (inject size, atomics, seed).
    pub facts: String,
}

impl JobResult {
    /// Every announced instance reported and the program finished.
    pub fn complete(&self) -> bool {
        self.done && self.expected > 0 && self.instances.len() == self.expected
    }
    /// Forbidden outcomes over all instances.
    pub fn forbidden(&self) -> usize {
        self.instances.iter().map(|i| i.forbidden).sum()
    }
}

/// Which modes each provider honours here (docs/providers.md), in the order
/// the report lists them.
pub const CELLS: [(&str, &[&str]); 4] = [
    ("shm", &["message-order", "delivery-complete"]),
    ("tcp;ofi_rxm", &["message-order", "delivery-complete"]),
    ("udp;ofi_rxd", &["message-order", "delivery-complete"]),
    (
        "sockets",
        &["message-order-fence", "message-order", "delivery-complete"],
    ),
];

/// The cells run on the intra-node mapped path too: every mode (fence mode
/// only `sockets` offers). Only PUT/GET/atomics change; on-statements still
/// go through the provider in the cell's mode.
pub const MAPPED_CELLS: [(&str, &[&str]); 2] = [
    ("shm", &["message-order", "delivery-complete"]),
    ("sockets", &["message-order-fence"]),
];

impl Job {
    /// The provider as the report shows it (`shm`, `shm mapped`).
    pub fn provider_label(&self) -> String {
        if self.mapped {
            format!("{} mapped", self.provider)
        } else {
            self.provider.to_string()
        }
    }
}

/// The negative controls the suite asserts are caught, whatever the load:
/// (provider, weakening, the group its jobs run, the test that must show
/// it). Missing forcing through TASK-END on tcp;ofi_rxm (tests/tests/mcm.rs
/// catches it there too), and a blocking PUT that does not wait for its
/// source through PUT-SRC on shm (its large PUTs read the source after the
/// call). The fast run runs only these; the full run runs the negative
/// control for every provider and mode and reports the rest (on shm,
/// missing forcing shows only while the target's receive poller is slower
/// than the launcher barrier: load-dependent).
pub const ASSERTED_CONTROLS: [(&str, &str, &str, &str); 2] = [
    ("tcp;ofi_rxm", "no-forcing", "sync", "TASK-END"),
    ("shm", "no-source-wait", "PUT-SRC,SELF-PUT-SRC", "PUT-SRC"),
];

/// The fast run's jobs per conformance cell: one job of every test. A job
/// costs about 0.7 s before its first test (mostly its three processes'
/// libfabric start: docs/performance.md), so the CI tier does not split a
/// cell; the full run does (`FULL_GROUPS`: a crash in one group does not
/// hide the others' results there).
pub const GROUPS: [&str; 1] = ["all"];

/// The full run splits the atomics group further, one job per test (a
/// provider failing one atomic test still reports the others).
pub const FULL_GROUPS: [&str; 6] = [
    "rma",
    "sync",
    "MP-ATOMIC,SELF-MP-ATOMIC",
    "MP-ATOMIC-SPLIT",
    "SB-ATOMIC,SELF-SB-ATOMIC",
    "AMO-COUNT,SELF-AMO-COUNT",
];

/// (iterations, iterations at 1 MiB) per provider.
fn iterations(provider: &str, full: bool, negative: bool) -> (usize, usize) {
    let (i, l) = match provider {
        "shm" => (300, 30),
        "tcp;ofi_rxm" => (150, 16),
        "udp;ofi_rxd" => (100, 10),
        _ => (5, 2), // sockets: milliseconds per operation
    };
    match (full, negative) {
        (false, false) => (i, l),
        (false, true) => ((i / 2).max(4), (l / 2).max(2)),
        (true, false) => (i * 10, l * 6),
        (true, true) => (i * 5, l * 3),
    }
}

/// The jobs of a run: (conformance, negative control). The fast run checks
/// every mode of every provider and runs the asserted negative controls
/// (`ASSERTED_CONTROLS`) in the provider's preferred mode; the full run (`LITMUS_FULL=1`) iterates ten
/// times more and runs the negative control in every mode.
pub fn plan(full: bool) -> (Vec<Job>, Vec<Job>) {
    let timeout = Duration::from_secs(if full { 3600 } else { 300 });
    let groups: &[&'static str] = if full { &FULL_GROUPS } else { &GROUPS };
    let mut conf = Vec::new();
    let mut neg = Vec::new();
    for (provider, modes) in CELLS {
        for (k, mode) in modes.iter().enumerate() {
            let (iters, large) = iterations(provider, full, false);
            for &select in groups {
                conf.push(Job {
                    provider,
                    mode,
                    mapped: false,
                    weaken: None,
                    select,
                    iters,
                    large,
                    timeout,
                });
            }
            // The full run: every weakening in every mode; the fast run:
            // the asserted controls, in the provider's preferred mode.
            let weakened: Vec<(&'static str, &'static str)> = if full {
                groups
                    .iter()
                    .map(|&select| ("no-forcing", select))
                    .chain([("no-source-wait", "PUT-SRC,SELF-PUT-SRC")])
                    .collect()
            } else if k == 0 {
                ASSERTED_CONTROLS
                    .iter()
                    .filter(|(p, ..)| *p == provider)
                    .map(|&(_, w, select, _)| (w, select))
                    .collect()
            } else {
                Vec::new()
            };
            let (iters, large) = iterations(provider, full, true);
            for (w, select) in weakened {
                neg.push(Job {
                    provider,
                    mode,
                    mapped: false,
                    weaken: Some(w),
                    select,
                    iters,
                    large,
                    timeout,
                });
            }
        }
    }
    // The mapped path: no negative control (on x86-TSO it has no forcing
    // to remove: docs/mcm.md, "The mapped path").
    for (provider, modes) in MAPPED_CELLS {
        for mode in modes.iter() {
            let (iters, large) = iterations(provider, full, false);
            for &select in groups {
                conf.push(Job {
                    provider,
                    mode,
                    mapped: true,
                    weaken: None,
                    select,
                    iters,
                    large,
                    timeout,
                });
            }
        }
    }
    (conf, neg)
}

/// Runs one job under the launcher and parses its output.
pub fn run(job: &Job) -> JobResult {
    let iters = job.iters.to_string();
    let large = job.large.to_string();
    let seed = std::env::var("LITMUS_SEED").unwrap_or_else(|_| "1".into());
    let mut env = vec![
        ("PGAS_PROVIDER", job.provider),
        ("PGAS_MCM_MODE", job.mode),
        (
            "PGAS_LOCAL_PATH",
            if job.mapped { "mapped" } else { "fabric" },
        ),
        ("PGAS_NUM_WORKERS", WORKERS),
        ("LITMUS_ITERS", iters.as_str()),
        ("LITMUS_ITERS_LARGE", large.as_str()),
        ("LITMUS_SEED", seed.as_str()),
    ];
    if let Some(w) = job.weaken {
        env.push(("PGAS_MCM_WEAKEN", w));
    }
    let program = example("litmus"); // builds once, outside the timing
    let t0 = Instant::now();
    let out = launch(LOCALES, &program, &[job.select], &env, job.timeout);
    let elapsed = t0.elapsed();
    let mut r = parse(&out.stdout);
    let tail: Vec<&str> = out.stderr.lines().rev().take(12).collect();
    JobResult {
        job: job.clone(),
        code: out.code,
        expected: r.expected,
        done: r.done,
        instances: std::mem::take(&mut r.instances),
        details: std::mem::take(&mut r.details),
        stderr_tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        elapsed,
        facts: r.facts,
    }
}

/// What [`parse`] reads from the program's standard output.
#[derive(Debug, Default)]
pub struct Parsed {
    /// `litmus-start` instances.
    pub expected: usize,
    /// `litmus-done` seen.
    pub done: bool,
    /// `litmus` lines.
    pub instances: Vec<Instance>,
    /// `litmus-forbidden` lines.
    pub details: Vec<String>,
    /// Selected `litmus-start` fields.
    pub facts: String,
}

fn fields(line: &str) -> BTreeMap<&str, &str> {
    line.split('\t')
        .skip(1)
        .filter_map(|f| f.split_once('='))
        .collect()
}

/// Parses the program's standard output.
pub fn parse(stdout: &str) -> Parsed {
    let mut p = Parsed::default();
    for line in stdout.lines() {
        let kind = line.split('\t').next().unwrap_or("");
        let f = fields(line);
        let num = |k: &str| f.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        match kind {
            "litmus-start" => {
                p.expected = num("instances") as usize;
                p.facts = ["inject", "atomics", "bound", "seed"]
                    .iter()
                    .filter_map(|k| f.get(k).map(|v| format!("{k}={v}")))
                    .collect::<Vec<_>>()
                    .join(" ");
            }
            "litmus-done" => p.done = true,
            "litmus-forbidden" => p.details.push(line.to_string()),
            "litmus" => {
                let list = |k: &str| -> Vec<String> {
                    f.get(k)
                        .map(|v| {
                            v.split('|')
                                .filter(|s| !s.is_empty())
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let seen = list("seen")
                    .iter()
                    .filter_map(|e| e.rsplit_once('#'))
                    .map(|(o, c)| (o.to_string(), c.parse().unwrap_or(0)))
                    .collect();
                p.instances.push(Instance {
                    test: f.get("test").unwrap_or(&"?").to_string(),
                    base: f.get("base").unwrap_or(&"?").to_string(),
                    size: num("size") as usize,
                    iters: num("iters") as usize,
                    ms: num("ms"),
                    seen,
                    forbidden: num("forbidden") as usize,
                    gaps: list("gaps"),
                });
            }
            _ => {}
        }
    }
    p
}

/// Test names in report order (the program's order: each test, then its
/// SELF-* form).
fn test_order(results: &[&JobResult]) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for r in results {
        for i in &r.instances {
            if !order.contains(&i.test) {
                order.push(i.test.clone());
            }
        }
    }
    order
}

fn column(r: &JobResult) -> String {
    match r.job.weaken {
        Some(w) => format!("{} {} ({w})", r.job.provider_label(), r.job.mode),
        None => format!("{} {}", r.job.provider_label(), r.job.mode),
    }
}

fn columns(results: &[&JobResult]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for r in results {
        let c = column(r);
        if !cols.contains(&c) {
            cols.push(c);
        }
    }
    cols
}

fn size_name(size: usize) -> String {
    if size >= 1 << 20 && size % (1 << 20) == 0 {
        format!("{}M", size >> 20)
    } else {
        size.to_string()
    }
}

/// The histogram cell of one test in one column (sizes summed): outcomes
/// the oracle forbids in bold, then the forbidden total and the gaps.
fn histogram_cell(insts: &[&Instance]) -> String {
    let allowed = insts
        .first()
        .and_then(|i| crate::litmus::fixtures::program(&i.base))
        .map(|p| p.allowed().outcomes)
        .unwrap_or_default();
    let mut hist: BTreeMap<&str, usize> = BTreeMap::new();
    for i in insts {
        for (o, c) in &i.seen {
            *hist.entry(o).or_default() += c;
        }
    }
    let mut parts: Vec<String> = hist
        .iter()
        .map(|(o, c)| {
            if allowed.contains(*o) {
                format!("{o} ×{c}")
            } else {
                format!("**{o}** ×{c}")
            }
        })
        .collect();
    let forbidden: usize = insts.iter().map(|i| i.forbidden).sum();
    if forbidden > 0 {
        parts.push(format!("**{forbidden} FORBIDDEN**"));
    }
    // A gap of the cell: an allowed outcome that no size produced.
    let gaps: Vec<&String> = allowed
        .iter()
        .filter(|a| !hist.contains_key(a.as_str()))
        .collect();
    if !gaps.is_empty() {
        parts.push(format!(
            "gap: {}",
            gaps.iter()
                .map(|g| g.as_str())
                .collect::<Vec<_>>()
                .join(" / ")
        ));
    }
    parts.join("; ")
}

/// The outcomes of `insts` (one test) that its oracle forbids.
fn forbidden_outcomes(insts: &[&Instance]) -> Vec<String> {
    let allowed = insts
        .first()
        .and_then(|i| crate::litmus::fixtures::program(&i.base))
        .map(|p| p.allowed().outcomes)
        .unwrap_or_default();
    let mut out: Vec<String> = Vec::new();
    for i in insts {
        for o in i.seen.keys() {
            if !allowed.contains(o) && !out.contains(o) {
                out.push(o.clone());
            }
        }
    }
    out
}

/// The markdown report: conformance table, forbidden outcomes, failed jobs,
/// negative control, timings. `title` is the heading line's text, `notes`
/// free text put under it.
pub fn render(title: &str, notes: &str, conf: &[JobResult], neg: &[JobResult]) -> String {
    let mut md = String::new();
    md.push_str(&format!("## {title}\n\n"));
    if !notes.is_empty() {
        md.push_str(notes);
        md.push_str("\n\n");
    }
    let conf_refs: Vec<&JobResult> = conf.iter().collect();
    let cols = columns(&conf_refs);
    let tests = test_order(&conf_refs);

    md.push_str("### Conformance: outcome histograms (all sizes together)\n\n");
    md.push_str(
        "Each cell: every outcome seen with its count (`outcome ×n`), forbidden ones in \
         bold with their total, and `gap:` the outcomes SC allows that no iteration \
         produced. `not run` means the job of that group failed (see *Failed jobs*).\n\n",
    );
    md.push_str(&format!("| test | {} |\n", cols.join(" | ")));
    md.push_str(&format!("|---|{}\n", "---|".repeat(cols.len())));
    for t in &tests {
        let mut row = vec![format!("`{t}`")];
        for c in &cols {
            let insts: Vec<&Instance> = conf_refs
                .iter()
                .filter(|r| &column(r) == c)
                .flat_map(|r| r.instances.iter())
                .filter(|i| &i.test == t)
                .collect();
            row.push(if insts.is_empty() {
                "not run".into()
            } else {
                histogram_cell(&insts)
            });
        }
        md.push_str(&format!("| {} |\n", row.join(" | ")));
    }

    md.push_str("\n### Iterations per cell\n\n");
    md.push_str("| column | iterations (8 B / inject+1 / 1 MiB) | facts | jobs | wall time |\n|---|---|---|---|---|\n");
    for c in &cols {
        let rs: Vec<&&JobResult> = conf_refs.iter().filter(|r| &column(r) == c).collect();
        let secs: f64 = rs.iter().map(|r| r.elapsed.as_secs_f64()).sum();
        let facts = rs
            .iter()
            .map(|r| r.facts.as_str())
            .find(|f| !f.is_empty())
            .unwrap_or("");
        let j = rs.first().map(|r| &r.job);
        md.push_str(&format!(
            "| {c} | {} / {} / {} | {facts} | {} ({} complete) | {secs:.1} s |\n",
            j.map_or(0, |j| j.iters),
            j.map_or(0, |j| j.iters),
            j.map_or(0, |j| j.large),
            rs.len(),
            rs.iter().filter(|r| r.complete()).count()
        ));
    }

    let details: Vec<&String> = conf.iter().flat_map(|r| r.details.iter()).collect();
    md.push_str("\n### Forbidden outcomes\n\n");
    if details.is_empty() {
        md.push_str("None in the jobs that completed.\n");
    } else {
        md.push_str("| provider | mode | test | size | iteration | outcome | where (worker per locale) |\n|---|---|---|---|---|---|---|\n");
        for d in details {
            let f = fields(d);
            let g = |k: &str| f.get(k).copied().unwrap_or("");
            md.push_str(&format!(
                "| {} | {} | `{}` | {} | {} | `{}` | {} |\n",
                g("provider"),
                g("mode"),
                g("test"),
                g("size"),
                g("iter"),
                g("outcome"),
                g("where")
            ));
        }
    }

    let failed: Vec<&JobResult> = conf.iter().chain(neg).filter(|r| !r.complete()).collect();
    md.push_str("\n### Failed jobs\n\n");
    if failed.is_empty() {
        md.push_str("None: every job ran every test it announced.\n");
    } else {
        for r in failed {
            md.push_str(&format!(
                "- {} `{}`: exit {:?}, {} of {} instances reported\n\n```text\n{}\n```\n",
                column(r),
                r.job.select,
                r.code,
                r.instances.len(),
                r.expected,
                r.stderr_tail
            ));
        }
    }

    let mut weakenings: Vec<&str> = Vec::new();
    for r in neg {
        let w = r.job.weaken.unwrap_or("none");
        if !weakenings.contains(&w) {
            weakenings.push(w);
        }
    }
    if !weakenings.is_empty() {
        md.push_str("\n### Negative control: the layer deliberately broken\n\n");
        md.push_str(
            "`PGAS_MCM_WEAKEN=no-forcing` removes every forcing operation; `no-source-wait` \
             lets a blocking PUT return before its source was read. Each cell: per size, \
             forbidden iterations / iterations. `never seen` means the weakened layer produced \
             no forbidden outcome there: on that provider the suite does not show that it \
             would catch the weakening (it is not coverage). `not run`: the job failed (see \
             *Failed jobs*).\n",
        );
    }
    for w in weakenings {
        let refs: Vec<&JobResult> = neg
            .iter()
            .filter(|r| r.job.weaken.unwrap_or("none") == w)
            .collect();
        let ncols: Vec<String> = {
            let mut v: Vec<String> = Vec::new();
            for r in &refs {
                let c = format!("{} {}", r.job.provider_label(), r.job.mode);
                if !v.contains(&c) {
                    v.push(c);
                }
            }
            v
        };
        let in_col =
            |r: &JobResult, c: &str| format!("{} {}", r.job.provider_label(), r.job.mode) == c;
        let ntests = test_order(&refs);
        md.push_str(&format!("\n#### `{w}`\n\n"));
        md.push_str(&format!("| test | {} |\n", ncols.join(" | ")));
        md.push_str(&format!("|---|{}\n", "---|".repeat(ncols.len())));
        for t in &ntests {
            let mut row = vec![format!("`{t}`")];
            for c in &ncols {
                let insts: Vec<&Instance> = refs
                    .iter()
                    .filter(|r| in_col(r, c))
                    .flat_map(|r| r.instances.iter())
                    .filter(|i| &i.test == t)
                    .collect();
                let total: usize = insts.iter().map(|i| i.forbidden).sum();
                row.push(if insts.is_empty() {
                    "not run".into()
                } else if total == 0 {
                    format!(
                        "never seen ({})",
                        insts.iter().map(|i| i.iters).sum::<usize>()
                    )
                } else {
                    let counts = insts
                        .iter()
                        .map(|i| {
                            let s = format!("{}: {}/{}", size_name(i.size), i.forbidden, i.iters);
                            if i.forbidden > 0 {
                                format!("**{s}**")
                            } else {
                                s
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(", ");
                    format!("{counts} (`{}`)", forbidden_outcomes(&insts).join("`, `"))
                });
            }
            md.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        md.push_str(&format!(
            "| *forbidden / iterations* | {} |\n",
            ncols
                .iter()
                .map(|c| {
                    let rs: Vec<&&JobResult> = refs.iter().filter(|r| in_col(r, c)).collect();
                    format!(
                        "{} / {} ({:.0} s)",
                        rs.iter().map(|r| r.forbidden()).sum::<usize>(),
                        rs.iter()
                            .flat_map(|r| r.instances.iter())
                            .map(|i| i.iters)
                            .sum::<usize>(),
                        rs.iter().map(|r| r.elapsed.as_secs_f64()).sum::<f64>()
                    )
                })
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "litmus-start\tprovider=shm\tmode=message-order\tweaken=none\tlocales=3\tworkers=3\tbound=true\tinject=4096\tatomics=native\tseed=1\titers=4\titers_large=2\tinstances=2\n\
litmus\tprovider=shm\tmode=message-order\tweaken=none\ttest=SB-ATOMIC\tbase=SB-ATOMIC\tsize=8\titers=4\tms=3\tseen=r0=0 r1=1#3|r0=0 r1=0#1\tforbidden=1\tgaps=r0=1 r1=0|r0=1 r1=1\tskew_ns=10\n\
litmus-forbidden\tprovider=shm\tmode=message-order\tweaken=none\ttest=SB-ATOMIC\tsize=8\titer=2\toutcome=r0=0 r1=0\twhere=L0:w1;L1:w0\n\
litmus\tprovider=shm\tmode=message-order\tweaken=none\ttest=RAW\tbase=RAW\tsize=1048576\titers=2\tms=1\tseen=r=1#2\tforbidden=0\tgaps=\n\
litmus-done\tprovider=shm\tmode=message-order\tweaken=none\tinstances=2\tforbidden=1\tms=9\n";

    fn result(out: &str, weaken: Option<&'static str>) -> JobResult {
        let p = parse(out);
        JobResult {
            job: Job {
                provider: "shm",
                mode: "message-order",
                mapped: false,
                weaken,
                select: "all",
                iters: 4,
                large: 2,
                timeout: Duration::from_secs(1),
            },
            code: Some(0),
            expected: p.expected,
            done: p.done,
            instances: p.instances,
            details: p.details,
            stderr_tail: String::new(),
            elapsed: Duration::from_millis(10),
            facts: p.facts,
        }
    }

    #[test]
    fn parses_the_program_output() {
        let p = parse(OUT);
        assert_eq!(p.expected, 2);
        assert!(p.done);
        assert_eq!(p.details.len(), 1);
        assert_eq!(p.instances.len(), 2);
        let sb = &p.instances[0];
        assert_eq!(sb.test, "SB-ATOMIC");
        assert_eq!(sb.iters, 4);
        assert_eq!(sb.forbidden, 1);
        assert_eq!(sb.seen["r0=0 r1=1"], 3);
        assert_eq!(sb.seen["r0=0 r1=0"], 1);
        assert_eq!(sb.gaps, vec!["r0=1 r1=0", "r0=1 r1=1"]);
        assert_eq!(p.instances[1].size, 1 << 20);
        assert!(p.instances[1].gaps.is_empty());
        assert!(p.facts.contains("inject=4096"), "{}", p.facts);
    }

    #[test]
    fn incomplete_output_is_not_complete() {
        let r = result(OUT, None);
        assert!(r.complete());
        assert_eq!(r.forbidden(), 1);
        let cut: String = OUT.lines().take(3).map(|l| format!("{l}\n")).collect();
        assert!(!result(&cut, None).complete());
    }

    #[test]
    fn report_marks_forbidden_outcomes_and_gaps() {
        let conf = [result(OUT, None)];
        let neg = [result(OUT, Some("no-forcing"))];
        let md = render("Run", "notes", &conf, &neg);
        assert!(md.contains("| `SB-ATOMIC` |"), "{md}");
        assert!(md.contains("**r0=0 r1=0** ×1"), "{md}");
        assert!(md.contains("r0=0 r1=1 ×3"), "{md}");
        assert!(md.contains("**1 FORBIDDEN**"), "{md}");
        assert!(md.contains("gap: r0=1 r1=0 / r0=1 r1=1"), "{md}");
        assert!(md.contains("| `RAW` | r=1 ×2 |"), "{md}");
        assert!(
            md.contains("| shm | message-order | `SB-ATOMIC` | 8 | 2 | `r0=0 r1=0` |"),
            "{md}"
        );
        // Negative control: per size, and "never seen" where nothing was.
        assert!(md.contains("**8: 1/4** (`r0=0 r1=0`)"), "{md}");
        assert!(md.contains("never seen (2)"), "{md}");
    }

    #[test]
    fn plan_covers_every_mode_and_group() {
        let (conf, neg) = plan(false);
        assert_eq!(conf.len(), (9 + 3) * GROUPS.len());
        for (p, modes) in MAPPED_CELLS {
            for m in modes {
                assert!(conf
                    .iter()
                    .any(|j| j.mapped && j.provider == p && j.mode == *m));
            }
        }
        assert!(neg.iter().all(|j| !j.mapped));
        for (p, modes) in CELLS {
            for m in modes {
                for g in GROUPS {
                    assert!(conf
                        .iter()
                        .any(|j| j.provider == p && j.mode == *m && j.select == g));
                }
            }
        }
        // The fast run: exactly the asserted controls.
        assert_eq!(neg.len(), ASSERTED_CONTROLS.len());
        for (p, w, select, _) in ASSERTED_CONTROLS {
            assert!(neg
                .iter()
                .any(|j| j.provider == p && j.weaken == Some(w) && j.select == select));
        }
        let (fconf, fneg) = plan(true);
        for (p, _) in CELLS {
            for w in ["no-forcing", "no-source-wait"] {
                assert!(fneg.iter().any(|j| j.provider == p && j.weaken == Some(w)));
            }
        }
        assert_eq!(fconf.len(), (9 + 3) * FULL_GROUPS.len());
        assert!(fneg.len() > neg.len());
        assert!(fconf[0].iters > conf[0].iters);
    }
}
