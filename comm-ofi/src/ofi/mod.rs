//! The safe libfabric layer: owned `fi_info` lists and `fid` objects.
//!
//! This is the only place (with the data-path posting in `ctx`) that calls
//! libfabric; everything above works with these types.

pub mod fid;
pub mod info;

pub use fid::{Av, Cq, CqEntry, CqError, Domain, Endpoint, Fabric, Mr, RecvCompletion, WaitMode};
pub use info::Info;
