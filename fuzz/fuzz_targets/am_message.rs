//! Fuzz target `am_message`: see `pgas_fuzz::am_message` (fuzz-bodies/src/lib.rs) and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pgas_fuzz::am_message(data));
