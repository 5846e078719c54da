//! # comm-ofi: the libfabric mechanism of pgas-comm
//!
//! Provider and MCM-mode selection, fabric/domain/AV/CQ/endpoints, the
//! registered heap and its key exchange, transmit contexts, and the generic
//! PUT / GET / AMO entry points. It knows nothing of tasks: the runtime shim
//! binds its worker threads to transmit contexts and calls the boundary hooks.
//! The ordering policy (what to force visible when) comes from the `mcm` crate.

pub mod addr;
pub mod agree;
pub mod am_seam;
pub mod amo;
pub mod amo_route;
pub mod backoff;
pub mod comm;
pub mod contexts;
pub mod cpu_amo;
pub mod ctx;
pub mod diag;
pub mod doorbell;
pub mod env;
pub mod error;
pub mod exchange;
pub mod futex;
pub mod heap;
pub mod knobs;
pub mod mapped;
pub mod ofi;
pub mod peer_timeout;
pub mod provider;
pub mod publish;
pub mod quirks;
pub mod select;
pub mod statics;
pub mod sync;

pub use addr::GlobalAddr;
pub use am_seam::{AmLayer, AmoReply, AmoRequest, PostponedAmo, ProofRequest};
pub use amo::{AmoForm, AmoOp, AmoType};
pub use amo_route::AmoRoute;
pub use backoff::Backoff;
pub use comm::am_service::AmPort;
pub use comm::rma::NbHandle;
pub use comm::{Comm, IdlePolicy, Locale};
pub use diag::{CommCounts, CommDiagnostics, Counter};
pub use env::Config;
pub use error::{Error, OfiError, Result};
pub use mapped::LocalPath;
pub use mcm::{Mode, Weakening};
pub use provider::ProviderInfo;
