//! The engine's front ends, one per API: each carries out programs through
//! its API and reports outcomes in the engine's spelling
//! ([`super::value`], [`super::oracle::outcome_of`]), checked by the
//! engine's oracles and counted by [`super::tally::Tally`].
//!
//! - [`comm`]: the hand-written fixtures ([`super::fixtures`]) through the
//!   communication layer (`comm_ofi::Comm` and the AM layer); the program
//!   `tests/examples/litmus.rs`.
//! - [`shim`]: the generated programs ([`super::generated`]) through the public
//!   Rust API (`runtime_shim::Runtime`); the program
//!   `tests/examples/litmus_gen.rs`.
//! - [`c`]: programs over named locations, generated as C for OpenSHMEM
//!   and for the runtime shim's C ABI.
//! - [`fortran`]: programs over named locations, generated as Fortran
//!   coarray programs for the coarray ABI (libpgas_caf); the program
//!   `tests/examples/litmus_caf.rs`, run by `scripts/caf-litmus`.

pub mod c;
pub mod comm;
pub mod fortran;
pub mod shim;
