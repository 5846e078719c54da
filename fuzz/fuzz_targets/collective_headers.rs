//! Fuzz target `collective_headers`: see `pgas_fuzz::collective_headers` (fuzz-bodies/src/lib.rs) and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pgas_fuzz::collective_headers(data));
