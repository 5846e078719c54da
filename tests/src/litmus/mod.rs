//! The litmus engine: one generator, scheduler, oracle and report for the
//! memory-model litmus programs of every API.
//!
//! - Programs: the hand-written tests of `shared/LITMUS.md` are named
//!   [`fixtures`] (each with its oracle program over named locations); the
//!   generated families are [`generated`] (threads of whole steps over every
//!   placement and way of doing each step); the C / OpenSHMEM programs are
//!   described in [`front::c`] over named locations too.
//! - Oracles: [`oracle`] (named locations: fixtures and C programs) and
//!   [`generated::Program::allowed`] (generated programs; also rejects racy
//!   ones). Both enumerate every SC interleaving of whole steps and spell
//!   outcomes alike (`key=value`, sorted; [`value`] for what a read found).
//! - Scheduling: [`rng`] (the one seeded generator and the random delays
//!   between steps); each front end runs programs in lockstep iterations
//!   under `pgasrun`, resetting stamped words, starting the threads, and
//!   gathering what every locale saw.
//! - Report: [`tally`] (outcomes, forbidden count, coverage gaps of one
//!   program) and [`report`] (the job plan and markdown table of the
//!   fixtures' suite).
//! - Front ends, one per API: [`front`].

pub mod fixtures;
pub mod front;
pub mod generated;
pub mod host_barrier;
pub mod oracle;
pub mod report;
pub mod rng;
pub mod tally;
pub mod value;
