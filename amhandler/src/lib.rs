//! # amhandler: active messages for pgas-comm
//!
//! On-statements (execute a registered body on another locale: blocking,
//! non-blocking, or "fast" in the target's handler thread), arguments of any
//! size (inline up to [`wire::INLINE_MAX`] bytes, fetched by GET above),
//! RMA on memory the target never registered, atomics carried out by the
//! target's CPU (installed as comm-ofi's fallback, so `Comm::amo` works on
//! providers without native atomics), no-ops, and an orderly shutdown.
//!
//! ```no_run
//! use amhandler::{fn_id, Options, Registry};
//! let comm = comm_ofi::Comm::init()?;
//! let reg = Registry::new();
//! let echo = reg.register("echo", |_ctx, args| args.to_vec())?;
//! let am = amhandler::start_with(comm.clone(), Options { registry: reg, ..Default::default() })?;
//! let peer = (am.here() + 1) % am.num_locales();
//! assert_eq!(am.execute_on(peer, echo, b"hi")?, b"hi");
//! assert_eq!(echo, fn_id("echo"));
//! am.finalize()?;
//! # Ok::<(), amhandler::Error>(())
//! ```
//!
//! Design notes, the wire format and the knobs are in `docs/am.md`.

mod am;
pub mod config;
mod cover;
/// CPU atomics on a word of this process (in comm-ofi, which also uses
/// them on the mapped path; re-exported here).
pub use comm_ofi::cpu_amo;
pub mod error;
pub mod executor;
mod handler;
mod idle;
mod poll;
mod rawmem;
pub mod registry;
mod slot;
pub mod wire;

#[cfg(all(test, loom))]
mod loom_cover;
#[cfg(all(test, loom))]
mod loom_tests;

pub use am::{Am, Body, BodyFn, Ctx, Registry, Stats};
pub use config::AmConfig;
pub use error::{Error, Result};
pub use executor::{panic_text, Executor, Job, Spawner};
pub use handler::{start, start_with, Options};
pub use registry::{fn_id, FnId};
