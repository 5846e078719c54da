//! A 1-D heat-equation stencil over a block-distributed array, with halo
//! exchange by PUTs and barriers, as a PGAS user writes it:
//!
//! ```chapel
//! forall i in Inner do New[i] = A[i] + 0.25 * (A[i-1] - 2*A[i] + A[i+1]);
//! ```
//!
//! Each locale owns `block` cells plus one halo cell on each side. Every
//! step: PUT my first cell into my left neighbour's right halo and my last
//! cell into my right neighbour's left halo (non-blocking, waited), barrier,
//! update my cells, barrier. The global ends are held
//! at 0 (Dirichlet). After the last step every locale compares its block
//! with a serial run of the whole array (same arithmetic, so bit for bit),
//! and locale 0 also GETs every block (one strided GET of every other cell,
//! then the rest) and compares the whole array. Prints the checksum, the MCM
//! mode and provider; exits non-zero on any mismatch.
//!
//! Run: `pgasrun -n 4 target/release/examples/stencil [BLOCK] [STEPS]`.

mod common;

use runtime_shim::Runtime;
use std::process::ExitCode;

fn initial(i: usize) -> f64 {
    ((i * 37) % 101) as f64 / 7.0
}

fn step(old: &[f64], new: &mut [f64]) {
    for i in 1..old.len() - 1 {
        new[i] = old[i] + 0.25 * (old[i - 1] - 2.0 * old[i] + old[i + 1]);
    }
}

/// The whole array, serially (with the two fixed ends as halo cells).
fn serial(cells: usize, steps: usize) -> Vec<f64> {
    let mut a: Vec<f64> = (0..cells + 2)
        .map(|i| {
            if i == 0 || i == cells + 1 {
                0.0
            } else {
                initial(i - 1)
            }
        })
        .collect();
    let mut b = a.clone();
    for _ in 0..steps {
        step(&a, &mut b);
        std::mem::swap(&mut a, &mut b);
    }
    a[1..=cells].to_vec()
}

fn run(rt: &'static Runtime, block: usize, steps: usize) -> runtime_shim::Result<bool> {
    let n = rt.num_locales();
    let me = rt.here();
    // Cells [0] and [block + 1] are halos.
    let a = rt.alloc_all::<f64>(block + 2)?;
    let mut cur: Vec<f64> = (0..block + 2)
        .map(|i| {
            if i == 0 || i == block + 1 {
                0.0
            } else {
                initial(me * block + i - 1)
            }
        })
        .collect();
    rt.put(a.local(), &cur)?;
    rt.barrier()?;
    let t0 = std::time::Instant::now();
    let mut next = cur.clone();
    for _ in 0..steps {
        // Halo exchange: my edge cells into the neighbours' halos.
        let mut hs = Vec::with_capacity(2);
        if me > 0 {
            hs.push(rt.put_nb(a.at(me - 1)?.add(block + 1), vec![cur[1]])?);
        }
        if me + 1 < n {
            hs.push(rt.put_nb(a.at(me + 1)?, vec![cur[block]])?);
        }
        for h in hs {
            h.wait()?;
        }
        rt.barrier()?;
        // Halos arrived: read them (local GETs), update.
        let mut halo = [0.0f64];
        rt.get(&mut halo, a.local())?;
        cur[0] = halo[0];
        rt.get(&mut halo, a.local().add(block + 1))?;
        cur[block + 1] = halo[0];
        step(&cur, &mut next);
        std::mem::swap(&mut cur, &mut next);
        rt.put(a.local().add(1), &cur[1..=block])?;
        // Nobody writes my halos for the next step before I read these.
        rt.barrier()?;
    }
    let secs = t0.elapsed().as_secs_f64();

    let reference = serial(n * block, steps);
    let mine = &reference[me * block..(me + 1) * block];
    let mut ok = cur[1..=block] == *mine;
    if !ok {
        let i = (0..block).find(|&i| cur[1 + i] != mine[i]).unwrap_or(0);
        println!(
            "stencil: locale {me}: cell {} is {} instead of {}",
            me * block + i,
            cur[1 + i],
            mine[i]
        );
    }
    if me == 0 {
        // Locale 0 gathers the whole array: even cells with one strided GET
        // per block (stride 2), odd ones with another.
        let mut all = vec![0.0f64; n * block];
        for l in 0..n {
            let part = &mut all[l * block..(l + 1) * block];
            let evens = block.div_ceil(2);
            let odds = block / 2;
            rt.get_strided(part, &[2], a.at(l)?.add(1), &[2], &[1, evens])?;
            if odds > 0 {
                rt.get_strided(&mut part[1..], &[2], a.at(l)?.add(2), &[2], &[1, odds])?;
            }
        }
        let gathered = all == reference;
        ok &= gathered;
        let checksum: f64 = all.iter().sum();
        println!(
            "stencil: {} cells on {n} locales, {steps} steps in {secs:.3} s; checksum {checksum:.6} \
             (serial {:.6}); gathered array {}",
            n * block,
            reference.iter().sum::<f64>(),
            if gathered { "matches" } else { "DIFFERS" }
        );
    }
    rt.free_all(a)?;
    Ok(ok)
}

fn main() -> ExitCode {
    let Some([block, steps]) = common::positive_args([1000, 50]) else {
        return common::usage("stencil [BLOCK > 0] [STEPS > 0]");
    };
    let job = |rt| run(rt, block as usize, steps as usize);
    common::run_example("stencil", runtime_shim::init, job, |_| String::new())
}
