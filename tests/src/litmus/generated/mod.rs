//! Generated litmus programs for the public API (`runtime-shim`), with their
//! SC oracle.
//!
//! Exists because a hand-picked catalogue only finds the holes its author
//! thought of: the ordering holes found in review all lived in combinations
//! (an atomic on the *acting* locale, reads to *two* locales, a non-blocking
//! on-statement to *oneself*, an *unbound* thread) that no hand-written test
//! had. Here a program is a few threads of whole operations; [`generate`]
//! enumerates families of them over every placement of every word (on the
//! acting locale, on the peer, on a third locale), every way of doing each
//! step (blocking or non-blocking PUT/GET, atomic write / fetch-add / CAS,
//! on / on_nb / on_fast, begin + join, barrier), thread kinds (worker task,
//! the main thread, a foreign thread) and two sizes; [`Program::allowed`]
//! enumerates the outcomes sequential consistency allows, and rejects a
//! program that has a data race (whose outcomes the language does not
//! promise). The runner (`tests/examples/litmus_gen.rs`) executes them
//! through the public API under `pgasrun`.
//!
//! Values: every word starts at 0 and writers store small values (1, 2); a
//! fetch-add adds 1. Registers are written once, by their thread.

mod build;
mod families;
mod oracle;
mod program;
#[cfg(test)]
mod tests;

pub use families::generate;
pub use program::*;
