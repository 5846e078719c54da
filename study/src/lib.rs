//! # study: the performance study of pgas-comm
//!
//! `scripts/study` (the README's main command) builds this crate and runs
//! its `study` binary, which drives the provider x MCM-mode matrix: each
//! job runs under `pgasrun`, once against our layer ([`ours`]) and once
//! against a minimal raw-libfabric benchmark on the same provider and
//! `fi_info` ([`raw`], the floor), so every figure gets a ratio to raw
//! libfabric measured in the same run. The driver ([`driver`]) shows
//! progress, then writes a table, CSVs, model fits ([`fit`]) and SVG plots
//! ([`plot`]). [`callgrind`] backs `scripts/callgrind-put`. Method and
//! latest figures: `docs/performance.md`.

pub mod callgrind;
pub mod driver;
pub mod fit;
pub mod locale;
pub mod ours;
pub mod plan;
pub mod plot;
pub mod proto;
pub mod raw;
pub mod report;
pub mod stats;
