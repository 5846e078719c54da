//! Fuzz target `am_reply_word`: see `pgas_fuzz::am_reply_word` (fuzz-bodies/src/lib.rs) and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pgas_fuzz::am_reply_word(data));
