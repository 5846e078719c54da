//! The fuzz targets on the stable toolchain: every committed corpus input
//! and every seed, then a seeded sweep of mutations of them (bit flips,
//! byte overwrites with boundary values, truncations, splices), through
//! the same bodies libFuzzer runs (`pgas_fuzz::TARGETS`). What
//! `scripts/fuzz --short` runs where `cargo fuzz` cannot (no nightly); a
//! panic is a decoder breaking its contract.
//!
//! `PGAS_FUZZ_SWEEP` sets the mutations per target (default 20000);
//! `PGAS_FUZZ_WRITE_SEEDS=1` writes the seeds into `fuzz/corpus/<target>/`.

use std::path::PathBuf;

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target)
}

fn inputs(target: &str) -> Vec<Vec<u8>> {
    let mut all = pgas_fuzz::seeds(target);
    if let Ok(dir) = std::fs::read_dir(corpus_dir(target)) {
        for e in dir.flatten() {
            all.push(std::fs::read(e.path()).expect("corpus file"));
        }
    }
    all
}

/// xorshift64*: a fixed sequence, so a failure replays.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const BOUNDARY: [u8; 8] = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, 0x09, 0x40];

fn mutate(rng: &mut Rng, base: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(5) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = BOUNDARY[rng.below(BOUNDARY.len())];
            }
            2 => v.truncate(rng.below(v.len() + 1)),
            3 => {
                let at = rng.below(v.len() + 1);
                let from = rng.below(other.len() + 1);
                v.splice(at..at, other[from..].iter().copied());
            }
            _ if v.len() >= 8 => {
                // A whole little-endian word set to an extreme.
                let i = rng.below(v.len() - 7);
                let w = [0u64, u64::MAX, 1 << 63, u32::MAX as u64, 1 << 30][rng.below(5)];
                v[i..i + 8].copy_from_slice(&w.to_le_bytes());
            }
            _ => v.push(rng.next() as u8),
        }
    }
    v
}

#[test]
fn every_target_survives_its_corpus_and_a_sweep() {
    if std::env::var_os("PGAS_FUZZ_WRITE_SEEDS").is_some() {
        for (name, _) in pgas_fuzz::TARGETS {
            let dir = corpus_dir(name);
            std::fs::create_dir_all(&dir).unwrap();
            for (i, s) in pgas_fuzz::seeds(name).iter().enumerate() {
                std::fs::write(dir.join(format!("seed-{i}")), s).unwrap();
            }
        }
    }
    let sweep: usize = std::env::var("PGAS_FUZZ_SWEEP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    for (name, body) in pgas_fuzz::TARGETS {
        let all = inputs(name);
        assert!(!all.is_empty(), "{name}: no seeds");
        for input in &all {
            body(input);
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
        for _ in 0..sweep {
            let a = &all[rng.below(all.len())];
            let b = &all[rng.below(all.len())];
            body(&mutate(&mut rng, a, b));
        }
    }
}
