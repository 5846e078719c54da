//! The one definition of a locale index, at the bottom of the crate: the
//! dangling-store tracker and the transport trait both speak of locales.

/// A locale (process) index, `0..num_locales`: the one definition of the
/// workspace (`comm_ofi::Locale` and `runtime_shim::Locale` re-export it).
///
/// A `usize`, so that it indexes per-locale tables (here [`DanglingStores`](crate::DanglingStores),
/// above the peer and mapping tables) without a conversion; wire formats
/// that carry a locale store it as a `u32`, the C ABI as an `int`.
/// The policy panics on a value out of range: a bug in the caller (the
/// generic layer validates locales before it gets here).
pub type Locale = usize;
