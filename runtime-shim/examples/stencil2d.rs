//! 2-D Jacobi stencil: rows split over locales, halo rows exchanged by PUT,
//! the global residual by allreduce.   pgasrun -n 3 target/release/examples/stencil2d
use runtime_shim::{init, ReduceOp};

const R: usize = 32; // rows per locale, plus a halo row above (0) and below (R + 1)
const C: usize = 64; // columns; locale 0's upper halo is the hot edge, the rest cold

fn main() -> runtime_shim::Result<()> {
    let rt = init()?;
    let (n, me) = (rt.num_locales(), rt.here());
    let grid = rt.alloc_all::<f64>((R + 2) * C)?; // where neighbours leave my halos
    let mut u = vec![if me == 0 { 100.0 } else { 0.0 }; C];
    u.resize((R + 2) * C, 0.0);
    let row = |r: usize| r * C..(r + 1) * C;
    let (up, down) = (me.checked_sub(1), Some(me + 1).filter(|l| *l < n));
    // (neighbour, my row it needs, its halo row that receives it)
    let (nbs, mut res) = ([(up, 1, R + 1), (down, R, 0)], 0.0);
    for _ in 0..400 {
        for (nb, mine, halo) in nbs.iter().filter_map(|(l, m, h)| Some((l.as_ref()?, m, h))) {
            rt.put(grid.at(*nb)?.add(halo * C), &u[row(*mine)])?;
        }
        rt.barrier()?; // the neighbours' rows are in my halos after it
        for (_, mine, _) in nbs.iter().filter(|(l, _, _)| l.is_some()) {
            let halo = if *mine == 1 { 0 } else { R + 1 };
            rt.get(&mut u[row(halo)], grid.local().add(halo * C))?;
        }
        let (old, mut diff) = (u.clone(), 0.0f64);
        for k in (C..(R + 1) * C).filter(|k| k % C != 0 && k % C != C - 1) {
            u[k] = 0.25 * (old[k - C] + old[k + C] + old[k - 1] + old[k + 1]);
            diff = diff.max((u[k] - old[k]).abs());
        }
        res = rt.world().allreduce(&[diff], ReduceOp::Max)?[0]; // also orders the next PUTs
    }
    if me == 0 {
        println!("stencil2d: {n} x {R} x {C} grid, residual {res:.5} after 400 sweeps");
    }
    rt.finalize()
}
