//! A distributed histogram built by random-access remote atomics (GUPS
//! style), as a PGAS user writes it:
//!
//! ```chapel
//! var hist: [0..#numLocales*B] atomic int;   // block-distributed
//! coforall loc in Locales do on loc do
//!   coforall t in 0..#TASKS do
//!     for r in stream(loc, t) do hist[r % hist.size].add(1);
//! ```
//!
//! Every locale runs `TASKS` tasks; each draws `updates / TASKS` random
//! keys from its own deterministic stream and adds 1 to the key's bucket,
//! wherever it lives: mostly with *unordered* adds (buffered per task,
//! flushed as a batch at the task's end), every 16th with an ordered
//! `fetch_add`. After a barrier every locale regenerates every stream,
//! computes what its own buckets must hold, and compares. Prints the
//! update rate, whether the atomics were native or went through active
//! messages, the MCM mode and provider; exits non-zero on any mismatch.
//!
//! Run: `pgasrun -n 4 target/release/examples/gups [UPDATES_PER_LOCALE] [BUCKETS_PER_LOCALE]`.

mod common;

use runtime_shim::{AmoType, Runtime};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

const TASKS: u64 = 4;

/// xorshift64* stream of task `t` of locale `l`.
struct Stream(u64);

impl Stream {
    fn new(l: u64, t: u64) -> Stream {
        Stream((l * TASKS + t + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn run(rt: &'static Runtime, updates: u64, buckets: usize) -> runtime_shim::Result<bool> {
    let n = rt.num_locales() as u64;
    let me = rt.here();
    let total = n * buckets as u64;
    let hist = Arc::new(rt.alloc_all::<u64>(buckets)?);
    rt.barrier()?;

    let per_task = updates / TASKS;
    let t0 = Instant::now();
    let h = hist.clone();
    let errors = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let errs = errors.clone();
    rt.coforall(TASKS as usize, move |t| {
        let mut s = Stream::new(me as u64, t as u64);
        for i in 0..per_task {
            let key = s.next() % total;
            let owner = (key / buckets as u64) as usize;
            let idx = (key % buckets as u64) as usize;
            let cell = rt.atomic(h.at(owner).expect("owner in range").add(idx));
            let r = if i % 16 == 0 {
                cell.fetch_add(1).map(|_| ())
            } else {
                cell.add_unordered(1)
            };
            if let Err(e) = r {
                errs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tracing::error!("update of bucket {key}: {e}");
            }
        }
        // Task end flushes the unordered adds left in the buffer.
    })?;
    rt.barrier()?;
    let secs = t0.elapsed().as_secs_f64();

    // What my buckets must hold: every locale's every stream, regenerated.
    let mut want = vec![0u64; buckets];
    for l in 0..n {
        for t in 0..TASKS {
            let mut s = Stream::new(l, t);
            for _ in 0..per_task {
                let key = s.next() % total;
                if key / buckets as u64 == me as u64 {
                    want[(key % buckets as u64) as usize] += 1;
                }
            }
        }
    }
    let mut got = vec![0u64; buckets];
    rt.get(&mut got, hist.local())?;
    let wrong = (0..buckets).filter(|&i| got[i] != want[i]).count();
    let mine: u64 = got.iter().sum();
    let ok = wrong == 0 && errors.load(std::sync::atomic::Ordering::Relaxed) == 0;
    if !ok {
        let i = (0..buckets).find(|&i| got[i] != want[i]).unwrap_or(0);
        println!(
            "gups: locale {me}: {wrong} of {buckets} buckets wrong (bucket {i}: {} instead of {})",
            got[i], want[i]
        );
    }
    // Sum of all buckets everywhere = all updates.
    let sum = rt.alloc_all::<u64>(1)?;
    rt.atomic(sum.at(0)?).fetch_add(mine)?;
    rt.barrier()?;
    if me == 0 {
        let all = rt.atomic(sum.at(0)?).read()?;
        let expect = n * per_task * TASKS;
        let ups = expect as f64 / secs / 1e6;
        println!(
            "gups: {n} locales x {TASKS} tasks, {expect} updates into {total} buckets in {secs:.3} s \
             ({ups:.3} MUP/s); atomics on u64 {}; histogram total {all} (expected {expect})",
            if rt.amo_native(AmoType::U64) {
                "native"
            } else {
                "via active messages"
            }
        );
        if all != expect {
            println!("gups: histogram total WRONG");
            rt.free_all(sum)?;
            return Ok(false);
        }
    }
    rt.free_all(sum)?;
    let hist = Arc::try_unwrap(hist).map_err(|_| {
        runtime_shim::Error::State("histogram still shared after the tasks ended".into())
    })?;
    rt.free_all(hist)?;
    Ok(ok)
}

fn main() -> ExitCode {
    let Some([updates, buckets]) = common::positive_args([20_000, 4096]) else {
        return common::usage("gups [UPDATES_PER_LOCALE > 0] [BUCKETS_PER_LOCALE > 0]");
    };
    let job = |rt| run(rt, updates, buckets as usize);
    common::run_example("gups", runtime_shim::init, job, |_| String::new())
}
