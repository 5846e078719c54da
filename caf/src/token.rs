//! The token gfortran keeps per coarray (registration itself is
//! `register.rs`, above the library's state).
//!
//! A token records each image's address of the coarray (indexed by world
//! locale, 0 for images outside the team that allocated it), so a
//! coindexed access is `addr_on(image) + offset`. Allocation is collective
//! over the current team: each member allocates from its registered heap
//! and the team gathers the addresses (so allocation inside CHANGE TEAM
//! involves only the team, as the standard says). Locks, events and
//! CRITICAL get one 8-byte word per element, which only the library reads.
//!
//! Allocatable components of derived-type coarrays are registered in two
//! steps: `REGISTER_ONLY` makes a token without memory, `ALLOCATE_ONLY`
//! gives it memory on this image alone (not collective); remote images
//! find that memory through the component's descriptor in the coarray
//! (the `*_by_ref` calls).

use crate::desc::Descriptor;
use crate::team_rec::TeamRec;
use std::ffi::c_void;
use std::sync::Arc;

/// `caf_register_t`.
pub mod regtype {
    /// A static / `save` / module coarray.
    pub const COARRAY_STATIC: i32 = 0;
    /// An allocatable coarray.
    pub const COARRAY_ALLOC: i32 = 1;
    /// A static `lock_type` coarray.
    pub const LOCK_STATIC: i32 = 2;
    /// An allocatable `lock_type` coarray.
    pub const LOCK_ALLOC: i32 = 3;
    /// The lock of a CRITICAL construct.
    pub const CRITICAL: i32 = 4;
    /// A static `event_type` coarray.
    pub const EVENT_STATIC: i32 = 5;
    /// An allocatable `event_type` coarray.
    pub const EVENT_ALLOC: i32 = 6;
    /// A token for an allocatable component, no memory.
    pub const REGISTER_ONLY: i32 = 7;
    /// Memory for a component's token, this image only.
    pub const ALLOCATE_ONLY: i32 = 8;
}

/// What a token stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// Data (a coarray or an allocatable component).
    Data,
    /// Lock words (lock_type, CRITICAL).
    Lock,
    /// Event counters (event_type).
    Event,
}

/// A coarray as the library knows it.
pub struct Token {
    /// Each image's address of the coarray's memory, by world locale (0:
    /// not allocated there).
    pub addrs: Vec<u64>,
    /// Bytes of memory per image.
    pub size: usize,
    /// This image's memory (null for a registered-only component).
    pub local: *mut u8,
    /// Data, locks or events.
    pub kind: TokenKind,
    /// The team that allocated it (collective coarrays only).
    pub team: Option<Arc<TeamRec>>,
    /// The descriptor gfortran registered an allocatable coarray with (the
    /// variable's own): its bounds, the same on every image, are what a
    /// `*_by_ref` array reference starting at this token indexes. Null for
    /// other kinds (gfortran passes them a temporary, or none).
    pub desc: *const Descriptor,
}

// SAFETY: `local` is this image's registered memory, read and written by
// the program's threads as gfortran does; the token itself is immutable
// after registration except through the ABI's own calls, which gfortran
// makes from the image's threads in program order.
unsafe impl Send for Token {}
// SAFETY: as above.
unsafe impl Sync for Token {}

impl Token {
    /// The token behind gfortran's `caf_token_t`.
    ///
    /// # Safety
    /// `t` is null or a token this library returned and has not freed.
    pub unsafe fn from_raw<'a>(t: *mut c_void) -> Option<&'a Token> {
        // SAFETY: caller.
        unsafe { (t as *const Token).as_ref() }
    }

    /// The address of byte `offset` of this coarray on world locale `l`
    /// (`me`: this image's locale, whose memory a component token knows).
    pub fn addr_on(&self, me: usize, l: usize, offset: usize) -> Option<u64> {
        match self.addrs.get(l) {
            Some(&a) if a != 0 => Some(a + offset as u64),
            _ if l == me && !self.local.is_null() => Some(self.local as u64 + offset as u64),
            _ => None,
        }
    }
}
