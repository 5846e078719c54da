//! Fuzz target `exchange`: see `pgas_fuzz::exchange` (fuzz-bodies/src/lib.rs) and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pgas_fuzz::exchange(data));
