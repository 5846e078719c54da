//! The libfabric layer: every raw libfabric call of the comm layer is made
//! here, and no raw return code leaves it.
//!
//! - `info`: owned `fi_info` lists (hints, `fi_getinfo` results) and their
//!   attributes;
//! - `fid`: owned objects (fabric, domain, AV, CQ, endpoint, MR) and the CQ
//!   read;
//! - `ops`: the data path's posting calls on an endpoint (RMA, atomics,
//!   sends, receives), answering [`Posted`] or an [`OfiError`];
//! - `error`: return codes turned into [`OfiError`].
//!
//! Everything above works with these types; the raw pointers stay inside
//! (`as_ptr` is private to this module).

pub mod error;
pub mod fid;
pub mod info;
pub mod ops;

pub use error::OfiError;
pub use fid::{
    Av, Cq, CqEntry, CqError, Domain, Endpoint, Fabric, FiAddr, Mr, RecvCompletion, WaitMode,
};
pub use info::{library_version, Info, MrMode};
pub use ops::{AtomicMsg, Flags, LocalBuf, Posted, RemoteBuf, Rma};
