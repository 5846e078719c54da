//! The study driver: discovers the (provider, mode) matrix, runs each job
//! under `pgasrun` (raw floor and ours back to back, so each ratio is taken
//! between figures measured minutes apart at most), shows progress, and
//! writes table, CSVs, plots and a markdown summary.

use crate::plan::Plan;
use crate::proto::{self, Impl, Record};
use crate::report::{Results, Row, Skip};
use crate::stats::Res;
use comm_ofi::select;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The providers studied, in order.
pub const PROVIDERS: [&str; 4] = ["shm", "tcp;ofi_rxm", "udp;ofi_rxd", "sockets"];

/// Driver options (the `study` command line).
#[derive(Debug, Clone)]
pub struct Options {
    /// Output folder (default `study-out/<UTC timestamp>`).
    pub out: Option<PathBuf>,
    /// Providers to study (default [`PROVIDERS`] that exist here).
    pub providers: Vec<String>,
    /// Milliseconds per point.
    pub point_ms: u64,
    /// Locales of the task-end jobs (k goes up to this minus one).
    pub boundary_locales: usize,
    /// Skip the task-end jobs.
    pub no_boundary: bool,
    /// Quick smoke run: fewer sizes, short points.
    pub quick: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            out: None,
            providers: PROVIDERS.iter().map(|s| s.to_string()).collect(),
            point_ms: 50,
            boundary_locales: 5,
            no_boundary: false,
            quick: false,
        }
    }
}

/// Usage text.
pub const USAGE: &str = "\
usage: study [--out DIR] [--providers LIST] [--point-ms MS] [--boundary-locales N]
             [--no-boundary] [--quick]
       study locale PLAN-ARGS               (one locale of a job, floor and ours; run by the driver under pgasrun)
       study callgrind-put N                (program of scripts/callgrind-put)
       study callgrind-summary N FILE_N 2N FILE_2N

Runs the performance study on this machine: for each provider (shm, tcp;ofi_rxm,
udp;ofi_rxd, sockets) and each MCM mode it honours, PUT/GET latency 8 B..1 MiB,
bandwidth and 8 B message rate with windows of non-blocking ops, fetch-add (native
and via AM), the empty on-statement, and the task-end boundary after PUTs to k
targets; each beside a raw-libfabric floor on the same provider and fi_info.
Writes table.txt, results.csv, fits.csv, summary.md and SVG plots to DIR.

  --providers LIST     comma-separated, e.g. 'shm,tcp;ofi_rxm' (quote the ;)
  --point-ms MS        time budget of one point per implementation, spread over 5
                       alternating rounds (default 50; sockets gets 2.5x)
  --boundary-locales N locales of the task-end jobs (default 5: k = 1..4)
  --quick              smoke run: a few sizes, 10 ms points
";

impl Options {
    /// Parses the driver's arguments.
    pub fn parse(args: &[String]) -> Res<Options> {
        let mut o = Options::default();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut val = || -> Res<&String> {
                it.next()
                    .ok_or_else(|| format!("{a} needs a value\n{USAGE}").into())
            };
            match a.as_str() {
                "--out" => o.out = Some(PathBuf::from(val()?)),
                "--providers" => {
                    o.providers = val()?
                        .split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                }
                "--point-ms" => o.point_ms = val()?.parse()?,
                "--boundary-locales" => o.boundary_locales = val()?.parse()?,
                "--no-boundary" => o.no_boundary = true,
                "--quick" => o.quick = true,
                "-h" | "--help" => return Err(USAGE.into()),
                other => return Err(format!("unknown argument {other:?}\n{USAGE}").into()),
            }
        }
        if o.point_ms == 0 {
            return Err("--point-ms must be at least 1".into());
        }
        if o.boundary_locales < 2 {
            return Err("--boundary-locales must be at least 2".into());
        }
        Ok(o)
    }
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

/// The (provider, mode) pairs this machine offers among `wanted`, and why
/// the others are not studied.
pub fn matrix(wanted: &[String]) -> Res<(Matrix, Vec<String>)> {
    let avail = select::available_providers(true)?;
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for w in wanted {
        let Some(name) = avail
            .iter()
            .find(|a| *a == w || a.split(';').next() == Some(w.as_str()))
        else {
            missing.push(format!("{w}: not offered by this libfabric"));
            continue;
        };
        let modes = select::modes_of(name, true)?;
        if modes.is_empty() {
            missing.push(format!("{name}: honours no MCM mode here"));
        }
        for m in select::MODE_ORDER {
            if modes.contains(&m) {
                out.push((name.clone(), m.to_string()));
            }
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
        let ms = if slow { o.point_ms * 5 / 2 } else { o.point_ms };
        let mut plan = if slow || o.quick {
            Plan::reduced(ms)
        } else {
            Plan::full(ms)
        };
        if o.quick {
            plan.point_ms = if slow { 25 } else { 10 };
        }
        v.push(Job {
            provider: prov.clone(),
            mode: mode.clone(),
            locales: 2,
            plan: plan.clone(),
        });
        if !o.no_boundary {
            let n = o.boundary_locales;
            let ks: Vec<u64> = (1..n as u64).collect();
            v.push(Job {
                provider: prov.clone(),
                mode: mode.clone(),
                locales: n,
                plan: Plan::boundary(ks, plan.point_ms),
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
    /// Skipped points: (impl, op, reason).
    pub skips: Vec<(Impl, String, String)>,
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
            "{} not found next to the study binary; build it: cargo build --release -p bootstrap --bin pgasrun",
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
            let imp = Impl::parse(f.next().unwrap_or("")).unwrap_or(Impl::Ours);
            let op = f.next().unwrap_or("").to_string();
            out.skips
                .push((imp, op, f.next().unwrap_or("").to_string()));
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

/// Runs the whole study; returns the output folder.
pub fn run(o: &Options, mp: &MultiProgress) -> Res<PathBuf> {
    let started = Instant::now();
    let out = match &o.out {
        Some(p) => p.clone(),
        None => PathBuf::from("study-out").join(timestamp(SystemTime::now())),
    };
    std::fs::create_dir_all(out.join("logs"))?;
    let (matrix, missing) = matrix(&o.providers)?;
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
                        imp: rec.imp,
                        rec,
                    });
                }
                for (imp, op, reason) in jo.skips {
                    res.skips.push(Skip {
                        provider: job.provider.clone(),
                        mode: job.mode.clone(),
                        imp,
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
    let fits = res.fits_table();
    let notes = res.notes();
    let elapsed = started.elapsed().as_secs_f64();
    let meta = format!(
        "study run {}\nlibfabric {}.{}\ncores {}\nload average before: {load_before}; after: {}\n\
         measuring time {elapsed:.0} s, point budget {} ms (sockets x2.5), task-end jobs with {} locales\n\
         {}",
        out.display(),
        // SAFETY: fi_version() has no preconditions.
        libfabric_sys::fi_major(unsafe { libfabric_sys::fi_library_version() }),
        // SAFETY: as above.
        libfabric_sys::fi_minor(unsafe { libfabric_sys::fi_library_version() }),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        loadavg(),
        o.point_ms,
        o.boundary_locales,
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
        format!("{meta}{table}{fits}\n{notes}\n{infos}"),
    )?;
    std::fs::write(
        out.join("summary.md"),
        format!(
            "<!-- {} -->\n{}\n```text\n{fits}```\n\n{notes}",
            meta.replace('\n', " | "),
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
    writeln!(stdout, "{meta}{table}{fits}")?;
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
    fn timestamp_is_utc_civil() {
        let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(timestamp(t), "20231114-221320");
        assert_eq!(timestamp(UNIX_EPOCH), "19700101-000000");
    }

    #[test]
    fn options_parse() {
        let o = Options::parse(&[
            "--providers".into(),
            "shm,tcp;ofi_rxm".into(),
            "--quick".into(),
        ])
        .unwrap();
        assert_eq!(o.providers, vec!["shm", "tcp;ofi_rxm"]);
        assert!(o.quick);
        assert!(Options::parse(&["--bogus".into()]).is_err());
        assert!(Options::parse(&["--point-ms".into(), "0".into()]).is_err());
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
        // sockets: reduced sweep, longer points
        assert_eq!(j[2].plan.lat_sizes.len(), 4);
        assert_eq!(j[2].plan.point_ms, 125);
    }
}
