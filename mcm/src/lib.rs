//! The memory-consistency-model (MCM) ordering *policy* of pgas-comm.
//!
//! The language promises sequential consistency for data-race-free programs;
//! the network promises much less (see `docs/mcm.md`). This crate says, for each
//! of the three MCM modes, what a transmit context must do around every PUT,
//! GET, AMO and AM send, and at every task boundary, so that the gap is closed.
//! It knows nothing of libfabric: it is written against the small
//! [`Transport`] trait, which `comm-ofi` implements over one libfabric transmit
//! context and which [`sim`] implements over a simulated weakly ordered fabric
//! for loom and unit tests.
//!
//! The pieces:
//! - [`Mode`]: the modes and the `PGAS_MCM_MODE` spellings.
//! - [`DanglingStores`]: per transmit context, the targets whose PUTs or
//!   non-fetching AMOs may not be visible yet.
//! - [`Transport`]: the primitives an implementor needs (post an op with flags,
//!   post the order-dummy GET, post an AMO-visibility proof, wait for all).
//! - [`Selector`]: the table of per-mode implementors, chosen once at start-up;
//!   generic code calls through it and never matches on the mode per operation.
//! - [`sim`]: the simulated fabric and the litmus programs that run the real
//!   implementors over it, exhaustively under loom (`--cfg loom`).

#![forbid(unsafe_code)]

mod dangling;
mod force;
mod locale;
pub mod mode;
mod selector;
pub mod sim;
mod sync;
mod transport;

#[cfg(test)]
mod policy_tests;

pub use dangling::{DanglingStores, LocaleSet, LocaleSetIter, Targets};
pub use locale::Locale;
pub use mode::{Mode, ParseModeError};
pub use selector::{AmoFn, ForceVisibleFn, GetFn, PutFn, Selector, SendFn, Weakening};
pub use transport::{AmoKind, Binding, Blocking, OpFlags, Transport};
