//! Distributed histogram: every locale draws keys and adds them to bins
//! spread over all locales (unordered atomic adds), then an allreduce
//! checks the total.   pgasrun -n 4 target/release/examples/histogram
use runtime_shim::{init, ReduceOp};

const BINS: usize = 256;
const DRAWS: u64 = 20_000;

fn main() -> runtime_shim::Result<()> {
    let rt = init()?;
    let (n, me) = (rt.num_locales(), rt.here());
    let per = BINS.div_ceil(n);
    let bins = rt.alloc_all::<u64>(per)?;
    rt.barrier()?;
    let mut x = 0x9e37_79b9_7f4a_7c15 ^ (me as u64 + 1);
    for _ in 0..DRAWS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = (x % BINS as u64) as usize;
        rt.atomic(bins.at(b / per)?.add(b % per)).add_unordered(1)?;
    }
    rt.barrier()?; // flushes the unordered adds; every add is visible after it
    let mut mine = vec![0u64; per];
    rt.get(&mut mine, bins.local())?;
    let total = rt
        .world()
        .allreduce(&[mine.iter().sum::<u64>()], ReduceOp::Sum)?[0];
    if me == 0 {
        println!(
            "histogram: {total} of {} draws in {BINS} bins",
            DRAWS * n as u64
        );
    }
    assert_eq!(total, DRAWS * n as u64, "a draw was lost or counted twice");
    rt.finalize()
}
