//! Distributed histogram: every locale draws keys and adds them to bins
//! spread over all locales (unordered atomic adds), then an allreduce
//! checks the total. `at_global` finds bin b's locale and offset, and
//! `local_view` reads this locale's bins in place: no `unsafe`, no index
//! arithmetic.   pgasrun -n 4 target/release/examples/histogram
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
        rt.atomic(bins.at_global(b)?).add_unordered(1)?;
    }
    // The barrier flushes the unordered adds: every add is visible after it.
    rt.barrier()?;
    // This locale's bins, read in place (a safe view: copies each value).
    let mine: u64 = bins.local_view().iter().map(|c| c.get()).sum();
    let total = rt.world().allreduce(&[mine], ReduceOp::Sum)?[0];
    if me == 0 {
        println!(
            "histogram: {total} of {} draws in {BINS} bins",
            DRAWS * n as u64
        );
    }
    assert_eq!(total, DRAWS * n as u64, "a draw was lost or counted twice");
    rt.finalize()
}
