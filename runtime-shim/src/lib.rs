//! # runtime-shim: what a PGAS language runtime embeds
//!
//! The top of pgas-comm: a fixed-thread tasking layer (workers pinned to
//! cores, each bound for life to its own transmit context, with the MCM
//! task-create / task-end boundaries), the Rust API a PGAS program or a
//! language runtime written in Rust uses, and the C ABI
//! (`include/pgas_shim.h`) for a runtime written in C.
//!
//! ```no_run
//! use runtime_shim::{Builder, GlobalPtr};
//! let b = Builder::new();
//! let hello = b.register("hello", |ctx, args| {
//!     format!("locale {} got {} bytes from {}", ctx.here(), args.len(), ctx.caller()).into_bytes()
//! })?;
//! let rt = b.init()?;                                   // collective
//! let data = rt.alloc_all::<u64>(1024)?;                // one block per locale
//! let next = (rt.here() + 1) % rt.num_locales();
//! rt.put(data.at(next)?, &[rt.here() as u64; 1024])?;   // blocking PUT
//! rt.atomic(data.at(0)?).fetch_add(1)?;                 // remote atomic
//! let reply = rt.on(next, hello, b"hi")?;               // on-statement
//! rt.sync(|s| {                                         // sync { begin ...; begin ... }
//!     s.begin(move || { let _ = rt.get_value(data.at(next).unwrap()); }).unwrap();
//! })?;
//! rt.barrier()?;
//! rt.finalize()?;                                       // collective
//! # Ok::<(), runtime_shim::Error>(())
//! ```
//!
//! How to embed it, with the hooks a runtime must call and when:
//! `docs/embedding.md`.

mod check;
mod collective;
pub mod comm_counts;
mod config;
pub mod error;
pub mod ffi;
pub mod lock;
pub mod logging;
pub mod p2p;
mod pin;
pub mod pod;
pub mod ptr;
pub mod runtime;
pub mod strided;
pub mod tasking;
pub mod team;
mod team_area;
#[cfg(feature = "serde")]
pub mod typed;
pub mod unordered;
pub mod view;

/// The layers underneath, as [`Runtime::comm`] and [`Runtime::am`] return
/// them (for runtimes that drive them directly).
pub use amhandler::Am;
pub use amhandler::{fn_id, FnId};
/// The crate whose `Pod` and `Zeroable` derives make a struct [`Pod`] here.
pub use bytemuck;
pub use collective::{BarrierKind, BCAST_INLINE};
pub use comm_counts::CommCounts;
pub use comm_ofi::Comm;
pub use comm_ofi::{AmoOp, AmoRequest, AmoType, GlobalAddr, LocalPath, Locale, Mode, NbHandle};
pub use config::ShimConfig;
pub use error::{CommError, CommErrorKind, Error, Result};
pub use lock::{GlobalLock, LockGuard};
pub use p2p::{AmoHandle, Cmp, LocalWords, SignalOp};
pub use pod::{Atom, AtomInt, Pod};
pub use ptr::{Dist, GlobalPtr};
pub use runtime::atomics::{AtomicOp, AtomicRef};
pub use runtime::init::{init, Builder, OnCtx};
pub use runtime::rma::{NbGet, NbPut, Pending};
pub use runtime::{Runtime, Scope};
pub use tasking::{Group, PoolStats, TaskHandle};
pub use team::{Reduce, ReduceOp, Team, TEAM_INLINE};
#[cfg(feature = "serde")]
pub use typed::TypedFn;
pub use view::{LocalCell, LocalView};
/// The collective headers' decoders (bytes another locale PUT), public
/// for the fuzz targets in `fuzz/` (docs/fuzzing.md).
#[doc(hidden)]
pub use {collective::BcastHeader, team_area::SlotHeader};

/// The Rust snippets of `docs/embedding.md` and the README, compiled as
/// doctests so that the documentation cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../docs/embedding.md")]
pub struct EmbeddingGuide;

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct Readme;
