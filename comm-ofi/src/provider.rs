//! The facts of the provider in use that the data path consults, chosen at
//! selection; below the communicator and its idle policy, which both read
//! them.

use crate::ofi::WaitMode;
use mcm::Mode;

/// The provider facts the data path consults.
#[derive(Debug, Clone)]
pub struct ProviderInfo {
    /// Provider name.
    pub name: String,
    /// MCM mode in force.
    pub mode: Mode,
    /// Memory-registration mode bits.
    pub mr_mode: crate::ofi::MrMode,
    /// Largest single transfer we issue (chunk above it).
    pub max_msg_size: usize,
    /// Largest inject.
    pub inject_size: usize,
    /// Message ordering granted (transmit side; the mode's needs were
    /// checked on both sides at selection).
    pub msg_order: u64,
    /// The granted orderings, named (`RAW|WAW|SAW|SAS`), for the verbose line.
    pub order_granted: String,
    /// How waits are done.
    pub wait: WaitMode,
    /// Whether the provider was granted `FI_ATOMIC`.
    pub atomics: bool,
    /// Whether this locale's endpoint was granted atomic WAW ordering on
    /// both sides (`select::grants_atomic_waw`; delivery-complete's AMO
    /// window needs it at every locale).
    pub atomic_waw: bool,
}
