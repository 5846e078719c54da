//! Fuzz target `oob_frame`: see `pgas_fuzz::oob_frame` (fuzz-bodies/src/lib.rs) and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pgas_fuzz::oob_frame(data));
