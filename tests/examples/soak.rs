//! The soak's workload: a mixed, checked workload for a given time, with
//! the process's resources sampled as it runs. Run under `pgasrun` by
//! `scripts/soak`, which judges the samples (issue 39; docs/soak.md).
//!
//! ```text
//! pgasrun -n 4 soak SECONDS [SAMPLE_SECONDS [PARTS]]
//! ```
//!
//! Every round, every locale, with a seeded generator of its own:
//! * PUTs of random sizes (8 B to 64 KiB) of a pattern to a random locale,
//!   into the region only this locale writes there, GET back and checked;
//!   the same non-blocking (`put_nb`, `get_nb`);
//! * fetch-adds on a counter of a random locale by the type's route
//!   (native where the provider has it) and on another counter through the
//!   AM path (`Am::amo_via_am`): both totals checked at the end;
//! * blocking on-statements with a checked answer, non-blocking ones whose
//!   bodies add to a counter of the target (total checked at the end);
//! * a global lock on locale 0 around a read-modify-write by GET and PUT
//!   (total checked at the end: a lost update is a wrong value);
//! * tasks spawned and joined, each a PUT and GET to a neighbour, checked;
//! * a broadcast from a rotating root and an allreduce, checked.
//!
//! PARTS (comma-separated, default all: rma, atomics, on, lock, tasks,
//! collectives) runs only some, to find which one a growth comes from.
//!
//! Rounds end with locale 0 deciding, by broadcast, whether there is time
//! for another. A sampler thread prints every SAMPLE_SECONDS (default 10)
//! one line per locale:
//! `soak sample locale=L t=S rss_kb=K fds=F threads=T ops=N cpu_ms=C
//! load=A heap_kb=H` (ops: this locale's operations since the start;
//! cpu_ms: its CPU time; load: the machine's 1-minute load average, which
//! explains a rate that fell because other processes took the cores;
//! heap_kb: bytes in use in the registered heap, which tells a heap leak
//! from one of the process's own memory). A wrong value ends the job with
//! an error naming it; at the end locale 0 prints `soak ok: ...`.

use pgas_tests::e;
use pgas_tests::litmus::rng::Rng;
use runtime_shim::{Builder, GlobalLock, ReduceOp, Runtime};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

type R<T = ()> = Result<T, String>;

/// Largest PUT/GET.
const MAX_BYTES: usize = 64 << 10;
/// The parts of a round, in order (all by default).
const PARTS: [&str; 6] = ["rma", "atomics", "on", "lock", "tasks", "collectives"];
/// Tasks spawned per round.
const TASKS: usize = 4;

/// The bytes locale `me` writes in round `round`: nobody else's pattern.
fn pattern(me: usize, round: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u64 ^ round.wrapping_mul(31) ^ (me as u64) << 5) as u8)
        .collect()
}

/// One line of /proc/self/status, as a number (`VmRSS:`, `Threads:`).
fn status_field(name: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// This process's CPU time (user + system) in milliseconds.
fn cpu_ms() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis: state is the 3rd
    // field, utime the 14th, stime the 15th (proc(5)).
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // SAFETY: sysconf has no memory-safety preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    f.get(11)
        .zip(f.get(12))
        .map_or(0, |(u, s)| (u + s) * 1000 / hz)
}

/// The machine's 1-minute load average (other processes slow the rate).
fn load1() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// Prints a sample every `every` until `stop`, and a last one at `stop`:
/// the run ends when locale 0's clock says so, and a locale whose sampler
/// started a moment later would otherwise miss its sample at the end (its
/// last whole minute then has no closing sample: a soak of 2 minutes failed
/// so on 2026-11-28, locales 1 and 3 sampled up to 110.1 s of 120).
fn sampler(
    me: usize,
    every: Duration,
    ops: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    comm: Arc<runtime_shim::Comm>,
) {
    let t0 = Instant::now();
    let sample = || {
        println!(
            "soak sample locale={me} t={:.1} rss_kb={} fds={} threads={} ops={} cpu_ms={} \
             load={} heap_kb={}",
            t0.elapsed().as_secs_f64(),
            status_field("VmRSS:"),
            open_fds(),
            status_field("Threads:"),
            ops.load(Ordering::Relaxed),
            cpu_ms(),
            load1(),
            comm.heap().in_use() / 1024
        );
    };
    let mut next = every;
    while !stop.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(100));
        if t0.elapsed() < next {
            continue;
        }
        next += every;
        sample();
    }
    sample();
}

struct Soak {
    rt: &'static Runtime,
    me: usize,
    n: usize,
    /// region[w] on every locale: written by locale w only.
    region: runtime_shim::Dist<u8>,
    /// [route counter, AM counter, nb-body counter, lock-protected total].
    counters: runtime_shim::Dist<u64>,
    lock: GlobalLock,
    echo: runtime_shim::FnId,
    bump: runtime_shim::FnId,
    ops: Arc<AtomicU64>,
}

impl Soak {
    fn count(&self, k: u64) {
        self.ops.fetch_add(k, Ordering::Relaxed);
    }

    /// Where this locale writes on `target`.
    fn my_region(&self, target: usize) -> R<runtime_shim::GlobalPtr<u8>> {
        Ok(self
            .region
            .at(target)
            .map_err(e("region"))?
            .add(self.me * MAX_BYTES))
    }

    fn rma(&self, rng: &mut Rng, round: u64) -> R {
        let rt = self.rt;
        let t = rng.index(self.n);
        let len = 8 << rng.index(14); // 8 B .. 64 KiB
        let want = pattern(self.me, round, len);
        let at = self.my_region(t)?;
        rt.put(at, &want).map_err(e("put"))?;
        let mut got = vec![0u8; len];
        rt.get(&mut got, at).map_err(e("get"))?;
        if got != want {
            return Err(format!(
                "round {round}: GET of {len} bytes from locale {t} differs from the PUT"
            ));
        }
        let t = rng.index(self.n);
        let len = 1 + rng.index(MAX_BYTES);
        let want = pattern(self.me, round + 1, len);
        let at = self.my_region(t)?;
        rt.put_nb(at, want.clone())
            .map_err(e("put_nb"))?
            .wait()
            .map_err(e("put_nb wait"))?;
        let got = rt
            .get_nb(at, len)
            .map_err(e("get_nb"))?
            .wait()
            .map_err(e("get_nb wait"))?;
        if got != want {
            return Err(format!(
                "round {round}: non-blocking GET of {len} bytes from locale {t} differs"
            ));
        }
        self.count(4);
        Ok(())
    }

    fn atomics(&self, rng: &mut Rng) -> R {
        let rt = self.rt;
        let t = rng.index(self.n);
        let c = self.counters.at(t).map_err(e("counters"))?;
        rt.atomic(c).fetch_add(1).map_err(e("fetch-add"))?;
        let t = rng.index(self.n);
        let c = self.counters.at(t).map_err(e("counters"))?.add(1);
        rt.am()
            .amo_via_am(
                &runtime_shim::AmoRequest::new(
                    c.global_addr(),
                    runtime_shim::AmoType::U64,
                    runtime_shim::AmoOp::Add,
                    1,
                )
                .fetching(true),
            )
            .map_err(e("fetch-add via AM"))?;
        self.count(2);
        Ok(())
    }

    fn on_statements(&self, rng: &mut Rng, round: u64) -> R {
        let rt = self.rt;
        let t = rng.index(self.n);
        let got = rt
            .on(t, self.echo, &round.to_le_bytes())
            .map_err(e("on-statement"))?;
        if got != (round + t as u64).to_le_bytes() {
            return Err(format!(
                "round {round}: on-statement on {t} answered {got:?}"
            ));
        }
        let t = rng.index(self.n);
        rt.on_nb(t, self.bump, &[]).map_err(e("non-blocking on"))?;
        self.count(2);
        Ok(())
    }

    fn locked_update(&self) -> R {
        let rt = self.rt;
        let total = self.counters.at(0).map_err(e("counters"))?.add(3);
        let guard = self.lock.acquire(rt).map_err(e("lock"))?;
        let v = rt.get_value(total).map_err(e("get under lock"))?;
        rt.put(total, &[v + 1]).map_err(e("put under lock"))?;
        guard.release().map_err(e("unlock"))?;
        self.count(4);
        Ok(())
    }

    fn tasks(&self, round: u64) -> R {
        let rt = self.rt;
        let next = (self.me + 1) % self.n;
        let mut handles = Vec::with_capacity(TASKS);
        for k in 0..TASKS {
            // Each task its own slice of this locale's region there.
            let at = self.my_region(next)?.add(k * 64);
            let me = self.me;
            handles.push(
                rt.spawn(move || -> R {
                    let want = pattern(me, round ^ k as u64, 64);
                    rt.put(at, &want).map_err(e("put in a task"))?;
                    let mut got = vec![0u8; 64];
                    rt.get(&mut got, at).map_err(e("get in a task"))?;
                    if got != want {
                        return Err(format!("round {round}: task {k} read back other bytes"));
                    }
                    Ok(())
                })
                .map_err(e("spawn"))?,
            );
        }
        for h in handles {
            h.join().map_err(e("join"))??;
        }
        self.count(2 * TASKS as u64 + TASKS as u64);
        Ok(())
    }

    fn collectives(&self, round: u64) -> R {
        let rt = self.rt;
        let root = (round as usize) % self.n;
        let v = rt
            .world()
            .broadcast(root, &[round * 7 + root as u64])
            .map_err(e("broadcast"))?;
        if v != [round * 7 + root as u64] {
            return Err(format!("round {round}: broadcast from {root} gave {v:?}"));
        }
        let sum = rt
            .world()
            .allreduce(&[self.me as u64 + round], ReduceOp::Sum)
            .map_err(e("allreduce"))?;
        let n = self.n as u64;
        if sum != [n * (n - 1) / 2 + n * round] {
            return Err(format!("round {round}: allreduce gave {sum:?}"));
        }
        self.count(2);
        Ok(())
    }
}

fn run() -> R {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args
        .next()
        .ok_or("usage: soak SECONDS [SAMPLE_SECONDS]")?
        .parse()
        .map_err(e("SECONDS"))?;
    let every: u64 = match args.next() {
        Some(v) => v.parse().map_err(e("SAMPLE_SECONDS"))?,
        None => 10,
    };
    // Diagnosis: only some parts of the workload (a leak's bisection).
    let parts: Vec<String> = match args.next() {
        Some(v) => v.split(',').map(str::to_string).collect(),
        None => PARTS.iter().map(|p| p.to_string()).collect(),
    };
    if let Some(bad) = parts.iter().find(|p| !PARTS.contains(&p.as_str())) {
        return Err(format!("unknown part {bad:?}; parts: {}", PARTS.join(",")));
    }
    let on = |p: &str| parts.iter().any(|x| x == p);
    let builder = Builder::new();
    let echo = builder
        .register("soak.echo-plus-here", |ctx, args| {
            let r = u64::from_le_bytes(args[..8].try_into().expect("8 bytes"));
            (r + ctx.rt().here() as u64).to_le_bytes().to_vec()
        })
        .map_err(e("register"))?;
    let bump = builder
        .register("soak.bump", |ctx, _| {
            let rt = ctx.rt();
            // This locale's nb-body counter, the third of its counters.
            let c = COUNTERS.load(Ordering::Acquire);
            let w = runtime_shim::GlobalPtr::<u64>::new(rt.here(), c + 16);
            rt.atomic(w)
                .add(1)
                .unwrap_or_else(|err| panic!("bump: {err}"));
            Vec::new()
        })
        .map_err(e("register"))?;
    let rt: &'static Runtime = builder.init().map_err(e("init"))?;
    let (me, n) = (rt.here(), rt.num_locales());
    let region = rt.alloc_all::<u8>(n * MAX_BYTES).map_err(e("alloc_all"))?;
    let counters = rt.alloc_all::<u64>(4).map_err(e("alloc_all"))?;
    COUNTERS.store(counters.local().addr(), Ordering::Release);
    let lock_word = rt.alloc_all::<u64>(1).map_err(e("alloc_all"))?;
    let lock = if me == 0 {
        GlobalLock::init(rt, lock_word.at(0).map_err(e("at"))?).map_err(e("lock init"))?
    } else {
        GlobalLock::at(lock_word.at(0).map_err(e("at"))?)
    };
    rt.barrier().map_err(e("barrier"))?;
    let ops = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let s = Soak {
        rt,
        me,
        n,
        region,
        counters,
        lock,
        echo,
        bump,
        ops: ops.clone(),
    };
    let sampler = {
        let (ops, stop, comm) = (ops.clone(), stop.clone(), rt.comm().clone());
        std::thread::spawn(move || sampler(me, Duration::from_secs(every), ops, stop, comm))
    };
    // Each locale's own sequence.
    let mut rng = Rng::new(&[me as u64]);
    let t0 = Instant::now();
    let mut rounds = 0u64;
    let worked = (|| -> R {
        loop {
            let round = rounds;
            if on("rma") {
                s.rma(&mut rng, round)?;
            }
            if on("atomics") {
                s.atomics(&mut rng)?;
            }
            if on("on") {
                s.on_statements(&mut rng, round)?;
            }
            if on("lock") {
                s.locked_update()?;
            }
            if on("tasks") {
                s.tasks(round)?;
            }
            if on("collectives") {
                s.collectives(round)?;
            }
            rounds += 1;
            let more = u64::from(t0.elapsed() < Duration::from_secs(secs));
            if rt.broadcast(more).map_err(e("broadcast of go on"))? == 0 {
                return Ok(());
            }
        }
    })();
    stop.store(true, Ordering::Release);
    let _ = sampler.join();
    worked?;
    let all_rounds = rt
        .world()
        .allreduce(&[rounds], ReduceOp::Sum)
        .map_err(e("allreduce of the rounds"))?[0];
    // Non-blocking bodies may still be running: the totals are read until
    // every one has counted (at most 30 s: a lost one is a wrong value).
    let c = s.counters.local();
    let mine = |k: usize| rt.get_value(c.add(k)).map_err(e("get counter"));
    let waited = Instant::now();
    let total = loop {
        rt.barrier().map_err(e("barrier"))?;
        let local = [mine(0)?, mine(1)?, mine(2)?];
        let total = rt
            .world()
            .allreduce(&local, ReduceOp::Sum)
            .map_err(e("allreduce of the counters"))?;
        let nb_bodies = if on("on") { all_rounds } else { 0 };
        let late = total[2] < nb_bodies && waited.elapsed() < Duration::from_secs(30);
        if rt.broadcast(u64::from(late)).map_err(e("broadcast"))? == 0 {
            break total;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    for (k, what) in ["route fetch-adds", "AM fetch-adds", "non-blocking bodies"]
        .iter()
        .enumerate()
    {
        let done = if on(["atomics", "atomics", "on"][k]) {
            all_rounds
        } else {
            0
        };
        if total[k] != done {
            return Err(format!(
                "{what}: the counters total {}, {done} were done",
                total[k]
            ));
        }
    }
    if me == 0 {
        let locked = rt
            .get_value(s.counters.at(0).map_err(e("at"))?.add(3))
            .map_err(e("get locked total"))?;
        if locked != if on("lock") { all_rounds } else { 0 } {
            return Err(format!(
                "the lock-protected total is {locked}, {all_rounds} updates were made"
            ));
        }
    }
    let route = rt.comm().amo_route(runtime_shim::AmoType::U64);
    pgas_tests::finish(
        rt,
        "soak",
        &format!(
            "{rounds} rounds per locale in {:.0} s, {} ops on locale 0, u64 atomics {route:?} \
             and via AM, every value checked",
            t0.elapsed().as_secs_f64(),
            ops.load(Ordering::Relaxed)
        ),
    )
}

/// This locale's counters' address, for the non-blocking bodies.
static COUNTERS: AtomicU64 = AtomicU64::new(0);

fn main() -> ExitCode {
    pgas_tests::exit("soak", run())
}
