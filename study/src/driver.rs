//! The study driver: discovers the (provider, mode) matrix, runs each job
//! under `pgasrun` (the floor and our callers take turns inside each job,
//! so each ratio is taken between figures measured side by side), shows
//! progress, and writes table, mode comparison, fits, CSVs, plots and a
//! markdown summary.

use crate::plan::Plan;
use crate::proto::{self, Record, Subject};
use crate::report::{JobInfo, Results, Row, Skip};
use crate::stats::Res;
use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser};
use comm_ofi::select;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The providers studied, in order.
pub const PROVIDERS: [&str; 4] = ["shm", "tcp;ofi_rxm", "udp;ofi_rxd", "sockets"];

/// The MCM modes, as `--modes` spells them.
pub const MODES: [&str; 3] = ["message-order-fence", "message-order", "delivery-complete"];

/// Driver options (the `study` command line).
#[derive(Debug, Clone, Parser)]
#[command(
    name = "study",
    about = "The performance study of pgas-comm: our layer beside a matched raw-libfabric floor",
    long_about = "The performance study of pgas-comm.\n\n\
For each provider (shm, tcp;ofi_rxm, udp;ofi_rxd, sockets) and each MCM mode it honours, \
measures PUT/GET latency 8 B..1 MiB, PUT visibility latency, bandwidth and message rate with \
windows of non-blocking operations, fetch-add and non-fetching adds, the empty on-statement, \
tasks, and the task end after PUTs to k targets. Callers: the runtime shim (the public API) \
from the main thread and from a task, and comm-ofi/amhandler from a task. Every point is \
measured in rounds in which a matched raw-libfabric floor and each caller take turns; the \
table gives median [min-max] over the rounds, the floor used, the ratio to the floor round by \
round, and says 'no difference' when that range contains 1. Also: modes compared per provider, \
model fits (flagged when their intercept is negative or residuals large), CSVs and SVG plots.",
    after_help = "Internal commands (run by the driver and scripts, not by hand):\n  \
study locale PLAN-ARGS                 one locale of a job, under pgasrun\n  \
study callgrind-put N                  program of scripts/callgrind-put\n  \
study callgrind-summary N FILE_N 2N FILE_2N"
)]
pub struct Options {
    /// Output folder [default: study-out/ and the UTC time, linked by study-out/latest]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Providers to study, comma-separated (quote the ';': 'shm,tcp;ofi_rxm')
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_values = PROVIDERS)]
    pub providers: Vec<String>,
    /// MCM modes to study (where the provider honours them), comma-separated [default: all]
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = MODES)]
    pub modes: Vec<String>,
    /// Milliseconds each caller measures in one round of a point (sockets: x2.5)
    #[arg(long, value_name = "MS", default_value_t = 20,
          value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub round_ms: u64,
    /// Rounds per point: the floor and each caller take turns this many times
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(5..=100))]
    pub rounds: u64,
    /// Locales of the task-end jobs (k = 1 .. N-1)
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(2..=16))]
    pub boundary_locales: u64,
    /// Skip the task-end jobs
    #[arg(long)]
    pub no_boundary: bool,
    /// Smoke run: the reduced sweep everywhere, 4 ms rounds, task end with 3 locales
    #[arg(long)]
    pub quick: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options::parse_from(["study"])
    }
}

impl Options {
    /// Parses the driver's arguments (`args` without the program name);
    /// errors name the flag, `--help` is an error of kind `DisplayHelp`.
    pub fn try_parse_args(args: &[String]) -> Result<Options, clap::Error> {
        let argv = std::iter::once("study".to_string()).chain(args.iter().cloned());
        let m = Options::command().try_get_matches_from(argv)?;
        let explicit = m.value_source("providers") == Some(ValueSource::CommandLine);
        let o = Options::from_arg_matches(&m)?;
        if explicit {
            o.check_providers()?;
        }
        Ok(o)
    }

    /// Every provider asked for on the command line must exist here.
    fn check_providers(&self) -> Result<(), clap::Error> {
        let avail = select::available_providers(select::Locality::OneHost).unwrap_or_default();
        for w in &self.providers {
            if find_provider(&avail, w).is_none() {
                return Err(Options::command().error(
                    ErrorKind::InvalidValue,
                    format!(
                        "invalid value '{w}' for '--providers <LIST>': not offered by this \
                         libfabric (offered: {})",
                        avail.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn find_provider<'a>(avail: &'a [String], w: &str) -> Option<&'a String> {
    avail
        .iter()
        .find(|a| *a == w || a.split(';').next() == Some(w))
}

/// One pgasrun job.
#[derive(Debug, Clone)]
pub struct Job {
    /// Provider.
    pub provider: String,
    /// MCM mode.
    pub mode: String,
    /// Locales.
    pub locales: usize,
    /// What it measures.
    pub plan: Plan,
}

impl Job {
    /// Short label (progress, logs).
    pub fn label(&self) -> String {
        format!(
            "{} {}{}",
            self.provider,
            self.mode,
            if self.plan.boundary.is_some() {
                " task-end"
            } else {
                ""
            }
        )
    }

    fn slug(&self) -> String {
        format!(
            "{}_{}{}",
            crate::plot::slug(&self.provider),
            self.mode,
            if self.plan.boundary.is_some() {
                "_task-end"
            } else {
                ""
            }
        )
    }
}

/// (provider, mode) pairs.
pub type Matrix = Vec<(String, String)>;

/// The (provider, mode) pairs this machine offers among `wanted` providers
/// and `modes` (empty: every mode), and why the others are not studied.
pub fn matrix(wanted: &[String], modes: &[String]) -> Res<(Matrix, Vec<String>)> {
    let avail = select::available_providers(select::Locality::OneHost)?;
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for w in wanted {
        let Some(name) = find_provider(&avail, w) else {
            missing.push(format!("{w}: not offered by this libfabric"));
            continue;
        };
        let honoured = select::modes_of(name, select::Locality::OneHost)?;
        if honoured.is_empty() {
            missing.push(format!("{name}: honours no MCM mode here"));
        }
        let mut any = false;
        for m in comm_ofi::Mode::PREFERENCE {
            let asked = modes.is_empty() || modes.iter().any(|x| *x == m.to_string());
            if honoured.contains(&m) && asked {
                out.push((name.clone(), m.to_string()));
                any = true;
            }
        }
        if !any && !honoured.is_empty() {
            missing.push(format!(
                "{name}: honours none of --modes {} (it honours {})",
                modes.join(","),
                honoured
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok((out, missing))
}

/// The jobs of a study, in run order: per (provider, mode) the
/// per-operation job, then the task-end job (each measures floor and ours).
pub fn jobs(o: &Options, matrix: &[(String, String)]) -> Vec<Job> {
    let mut v = Vec::new();
    for (prov, mode) in matrix {
        let slow = prov.starts_with("sockets");
        let base = if o.quick { 4 } else { o.round_ms };
        let ms = if slow { (base * 5).div_ceil(2) } else { base };
        let mut plan = if slow || o.quick {
            Plan::reduced(ms)
        } else {
            Plan::full(ms)
        };
        plan.rounds = o.rounds;
        v.push(Job {
            provider: prov.clone(),
            mode: mode.clone(),
            locales: 2,
            plan: plan.clone(),
        });
        if !o.no_boundary {
            let n = if o.quick {
                o.boundary_locales.min(3)
            } else {
                o.boundary_locales
            };
            let ks: Vec<u64> = (1..n).collect();
            let mut b = Plan::boundary(ks, plan.round_ms);
            b.rounds = o.rounds;
            v.push(Job {
                provider: prov.clone(),
                mode: mode.clone(),
                locales: n as usize,
                plan: b,
            });
        }
    }
    v
}

/// What one job produced.
#[derive(Debug, Default)]
pub struct JobOutput {
    /// Results.
    pub records: Vec<Record>,
    /// Figures not measured: (subject, op, reason).
    pub skips: Vec<(Subject, String, String)>,
    /// Information lines.
    pub infos: Vec<String>,
    /// Failure message, if the job failed.
    pub error: Option<String>,
}

fn sibling(name: &str) -> Res<PathBuf> {
    let exe = std::env::current_exe()?;
    let p = exe
        .parent()
        .ok_or("cannot locate the directory of the study binary")?
        .join(name);
    if !p.exists() {
        return Err(format!(
            "{} not found next to the study binary; build it: cargo build --release -p pgas-bootstrap --bin pgasrun",
            p.display()
        )
        .into());
    }
    Ok(p)
}

/// Runs one job under pgasrun; progress goes to `bar`, the job's other
/// output to `log`.
pub fn run_job(job: &Job, bar: &ProgressBar, log: &Path) -> Res<JobOutput> {
    let pgasrun = sibling("pgasrun")?;
    let me = std::env::current_exe()?;
    let timeout = if job.provider.starts_with("sockets") {
        400
    } else {
        200
    };
    let mut logf = std::fs::File::create(log)?;
    writeln!(
        logf,
        "# job: {}\n# PGAS_PROVIDER={} PGAS_MCM_MODE={}\n# {} -n {} --timeout {timeout} {} locale {}",
        job.label(),
        job.provider,
        job.mode,
        pgasrun.display(),
        job.locales,
        me.display(),
        job.plan.to_args().join(" ")
    )?;
    let mut child = Command::new(&pgasrun)
        .arg("-n")
        .arg(job.locales.to_string())
        .arg("--timeout")
        .arg(timeout.to_string())
        .arg(&me)
        .arg("locale")
        .args(job.plan.to_args())
        .env("PGAS_PROVIDER", &job.provider)
        .env("PGAS_MCM_MODE", &job.mode)
        // The study measures the provider path against raw libfabric: co-
        // located locales must not map each other's heaps (unless asked).
        .env(
            "PGAS_LOCAL_PATH",
            std::env::var("PGAS_LOCAL_PATH").unwrap_or_else(|_| "fabric".into()),
        )
        .env_remove("PGAS_VERBOSE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(logf.try_clone()?)
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout of pgasrun")?;
    let mut out = JobOutput::default();
    bar.set_length(job.plan.ops().len() as u64);
    bar.set_position(0);
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        if let Some((done, total, label)) = proto::parse_progress(&line) {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(label);
        } else if let Some(r) = Record::parse(&line) {
            out.records.push(r);
        } else if let Some(rest) = line.strip_prefix(proto::SKIP) {
            let mut f = rest.trim_start_matches('\t').splitn(3, '\t');
            let subject = Subject::parse(f.next().unwrap_or("")).unwrap_or(Subject::Raw);
            let op = f.next().unwrap_or("").to_string();
            out.skips
                .push((subject, op, f.next().unwrap_or("").to_string()));
        } else if let Some(rest) = line.strip_prefix(proto::INFO) {
            out.infos.push(rest.trim().to_string());
            writeln!(logf, "{line}")?;
        } else {
            writeln!(logf, "{line}")?;
        }
    }
    let status = child.wait()?;
    if !status.success() {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .unwrap_or("")
            .to_string();
        out.error = Some(format!(
            "pgasrun exited with {status}: {last} (log: {})",
            log.display()
        ));
    }
    Ok(out)
}

/// `YYYYMMDD-HHMMSS` in UTC.
pub fn timestamp(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// The round trip of one cache line between cores 0 and 1, in ns (median of
/// 5 runs of 20,000 bounces), or why there is none. On this shared VM it
/// is 45-100 ns or 340-430 ns as the host places the two vCPUs (on the
/// same L3 or not), and every cross-process row on shm moves with it: the
/// report prints it beside each job's load so that two runs can be told
/// apart by their state, not only by their code.
pub fn cross_core_round_trip() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    const BOUNCES: u64 = 20_000;
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if cores.len() < 2 {
        return "n/a (one core)".into();
    }
    let (a, b) = (cores[0], cores[1]);
    let mut runs: Vec<f64> = (0..5)
        .filter_map(|_| {
            let flag = Arc::new(AtomicU64::new(0));
            let f = Arc::clone(&flag);
            let other = std::thread::spawn(move || {
                core_affinity::set_for_current(b);
                for i in 0..BOUNCES {
                    while f.load(Ordering::Acquire) != 2 * i + 1 {
                        std::hint::spin_loop();
                    }
                    f.store(2 * i + 2, Ordering::Release);
                }
            });
            // Both ends on threads of their own: pinning the driver's
            // thread would pin every job it starts after.
            let me = std::thread::spawn(move || {
                core_affinity::set_for_current(a);
                let t = Instant::now();
                for i in 0..BOUNCES {
                    flag.store(2 * i + 1, Ordering::Release);
                    while flag.load(Ordering::Acquire) != 2 * i + 2 {
                        std::hint::spin_loop();
                    }
                }
                t.elapsed().as_nanos() as f64 / BOUNCES as f64
            });
            let ns = me.join().ok();
            other.join().ok().and(ns)
        })
        .collect();
    if runs.is_empty() {
        return "n/a".into();
    }
    runs.sort_by(f64::total_cmp);
    format!("cross-core round trip {:.0} ns", runs[runs.len() / 2])
}

/// The load average and the cross-core round trip, for a job's header.
fn machine_state() -> String {
    format!("{}; {}", loadavg(), cross_core_round_trip())
}

/// Runs the whole study; returns the output folder.
pub fn run(o: &Options, mp: &MultiProgress) -> Res<PathBuf> {
    let started = Instant::now();
    let out = match &o.out {
        Some(p) => p.clone(),
        None => PathBuf::from("study-out").join(timestamp(SystemTime::now())),
    };
    std::fs::create_dir_all(out.join("logs"))?;
    let (matrix, missing) = matrix(&o.providers, &o.modes)?;
    for m in &missing {
        tracing::warn!("not studied: {m}");
    }
    if matrix.is_empty() {
        return Err("no provider to study here".into());
    }
    let jobs = jobs(o, &matrix);
    let load_before = loadavg();
    tracing::info!(
        jobs = jobs.len(),
        pairs = matrix.len(),
        out = %out.display(),
        "starting the study"
    );

    let overall = mp.add(ProgressBar::new(jobs.len() as u64));
    overall.set_style(
        ProgressStyle::with_template(
            "[{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} jobs  {msg}",
        )?
        .progress_chars("=> "),
    );
    let bar = mp.add(ProgressBar::new(1));
    bar.set_style(
        ProgressStyle::with_template("  {prefix:<40} {bar:24} {pos:>3}/{len:<3} {wide_msg}")?
            .progress_chars("=> "),
    );
    overall.enable_steady_tick(Duration::from_millis(250));

    let mut res = Results {
        matrix: matrix.clone(),
        ..Default::default()
    };
    let mut infos = String::new();
    for (i, job) in jobs.iter().enumerate() {
        overall.set_message(job.label());
        bar.set_prefix(job.label());
        let log = out
            .join("logs")
            .join(format!("{:02}_{}.log", i + 1, job.slug()));
        let t = Instant::now();
        res.jobs.push(JobInfo {
            label: job.label(),
            load: machine_state(),
        });
        let r = run_job(job, &bar, &log);
        let secs = t.elapsed().as_secs_f64();
        match r {
            Ok(jo) => {
                for info in &jo.infos {
                    infos.push_str(&format!("{}: {info}\n", job.label()));
                }
                for rec in jo.records {
                    res.rows.push(Row {
                        provider: job.provider.clone(),
                        mode: job.mode.clone(),
                        job: i,
                        rec,
                    });
                }
                for (subject, op, reason) in jo.skips {
                    res.skips.push(Skip {
                        provider: job.provider.clone(),
                        mode: job.mode.clone(),
                        subject,
                        op,
                        reason,
                    });
                }
                if let Some(e) = jo.error {
                    tracing::warn!(job = %job.label(), "job failed: {e}");
                    res.failures.push((job.label(), e));
                } else {
                    tracing::info!(
                        "[{}/{}] {} done in {secs:.1} s",
                        i + 1,
                        jobs.len(),
                        job.label()
                    );
                }
            }
            Err(e) => {
                tracing::warn!(job = %job.label(), "job could not run: {e}");
                res.failures.push((job.label(), e.to_string()));
            }
        }
        overall.inc(1);
    }
    bar.finish_and_clear();
    overall.finish_with_message("done");

    let table = res.table();
    let modes = res.modes_table();
    let fits = res.fits_table();
    let notes = res.notes();
    let elapsed = started.elapsed().as_secs_f64();
    let meta = format!(
        "study run {}\nlibfabric {}.{}\ncores {}\nload average (1/5/15 min) before: {load_before}; after: {}\n\
         measuring time {elapsed:.0} s; {} rounds per point, {} ms per caller per round (sockets x2.5){}; \
         task-end jobs with {} locales\n\
         {}",
        out.display(),
        comm_ofi::ofi::library_version().0,
        comm_ofi::ofi::library_version().1,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        loadavg(),
        o.rounds,
        if o.quick { 4 } else { o.round_ms },
        if o.quick { ", --quick" } else { "" },
        if o.quick {
            o.boundary_locales.min(3)
        } else {
            o.boundary_locales
        },
        if missing.is_empty() {
            String::new()
        } else {
            format!("not studied: {}\n", missing.join("; "))
        }
    );
    std::fs::write(out.join("results.csv"), res.csv())?;
    std::fs::write(out.join("fits.csv"), res.fits_csv())?;
    std::fs::write(
        out.join("table.txt"),
        format!("{meta}{table}{modes}{fits}\n{notes}\n{infos}"),
    )?;
    std::fs::write(
        out.join("summary.md"),
        format!(
            "```text\n{meta}```\n{}\n```text\n{fits}```\n\n```text\n{notes}```\n",
            res.markdown()
        ),
    )?;
    let plots = crate::plot::all(&res, &out)?;
    // `study-out/latest` points at this run (best effort).
    if o.out.is_none() {
        let latest = PathBuf::from("study-out").join("latest");
        let _ = std::fs::remove_file(&latest);
        if let Some(name) = out.file_name() {
            let _ = std::os::unix::fs::symlink(name, &latest);
        }
    }

    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{meta}{table}{modes}{fits}")?;
    if !notes.is_empty() {
        writeln!(stdout, "{notes}")?;
    }
    writeln!(
        stdout,
        "wrote {}: table.txt results.csv fits.csv summary.md {} (job logs in logs/)",
        out.display(),
        plots
            .iter()
            .filter_map(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
            .collect::<Vec<_>>()
            .join(" ")
    )?;
    if !res.failures.is_empty() {
        return Err(format!("{} job(s) failed (see above)", res.failures.len()).into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cross_core_round_trip_is_a_time_and_leaves_the_caller_unpinned() {
        let before = core_affinity::get_core_ids().unwrap_or_default();
        let s = cross_core_round_trip();
        if before.len() >= 2 {
            let ns: f64 = s
                .strip_prefix("cross-core round trip ")
                .and_then(|r| r.strip_suffix(" ns"))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("not a round trip: {s}"));
            assert!(ns > 0.0 && ns < 1e6, "{s}");
        } else {
            assert!(s.starts_with("n/a"), "{s}");
        }
        // The probe pins only its own threads: this one may still run on
        // every core it could before (jobs started after inherit it).
        assert_eq!(
            core_affinity::get_core_ids().unwrap_or_default().len(),
            before.len()
        );
    }

    #[test]
    fn timestamp_is_utc_civil() {
        let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(timestamp(t), "20231114-221320");
        assert_eq!(timestamp(UNIX_EPOCH), "19700101-000000");
    }

    fn parse(args: &[&str]) -> Result<Options, clap::Error> {
        let argv = std::iter::once("study").chain(args.iter().copied());
        let m = Options::command().try_get_matches_from(argv)?;
        Options::from_arg_matches(&m)
    }

    #[test]
    fn options_parse() {
        let o = parse(&[
            "--providers",
            "shm,tcp;ofi_rxm",
            "--quick",
            "--modes",
            "message-order",
        ])
        .unwrap();
        assert_eq!(o.providers, vec!["shm", "tcp;ofi_rxm"]);
        assert_eq!(o.modes, vec!["message-order"]);
        assert!(o.quick);
        let d = Options::default();
        assert_eq!(d.providers, PROVIDERS);
        assert!(d.modes.is_empty() && d.rounds >= 5);
    }

    #[test]
    fn bad_values_name_their_flag() {
        for (args, flag) in [
            (&["--round-ms", "0"][..], "--round-ms"),
            (&["--rounds", "3"][..], "--rounds"),
            (&["--modes", "fast"][..], "--modes"),
            (&["--boundary-locales", "x"][..], "--boundary-locales"),
        ] {
            let e = parse(args).unwrap_err().to_string();
            assert!(e.contains(flag), "{args:?}: {e}");
        }
        assert!(parse(&["--bogus"]).is_err());
        let help = parse(&["--help"]).unwrap_err();
        assert_eq!(help.kind(), ErrorKind::DisplayHelp);
        // clap prints help on stdout (exit status 0), errors on stderr.
        assert!(!help.use_stderr());
    }

    #[test]
    fn job_list_pairs_floor_and_ours() {
        let o = Options::default();
        let m = vec![
            ("shm".to_string(), "message-order".to_string()),
            ("sockets".to_string(), "message-order-fence".to_string()),
        ];
        let j = jobs(&o, &m);
        assert_eq!(j.len(), 4);
        assert_eq!(j[0].locales, 2);
        assert_eq!(j[1].locales, 5);
        assert_eq!(j[1].plan.boundary, Some(vec![1, 2, 3, 4]));
        // sockets: reduced sweep, longer rounds
        assert_eq!(j[2].plan.lat_sizes.len(), 4);
        assert_eq!(j[2].plan.round_ms, 50);
        assert!(j.iter().all(|j| j.plan.rounds >= 5));
    }
}
