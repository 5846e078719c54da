//! A global address: a locale and a virtual address in its registered heap
//! (or its static data). At the bottom of the crate: every layer names it.

use mcm::Locale;

/// An address in some locale's registered heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GlobalAddr {
    /// The locale owning the memory.
    pub locale: Locale,
    /// Virtual address in that locale.
    pub addr: u64,
}

impl GlobalAddr {
    /// Constructor.
    pub fn new(locale: Locale, addr: u64) -> GlobalAddr {
        GlobalAddr { locale, addr }
    }
    /// The address `bytes` further on (wrapping: an address that left the
    /// heap is refused by the operation that uses it, never a panic).
    pub fn offset(self, bytes: u64) -> GlobalAddr {
        GlobalAddr {
            locale: self.locale,
            addr: self.addr.wrapping_add(bytes),
        }
    }
}
