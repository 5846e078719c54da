//! The layout of a context's registered scratch area: its own words, the
//! batch slots and the window slots (`slots` uses them; the heap sizes the
//! area with [`SCRATCH_BYTES`]). A leaf: it imports nothing.

/// Atomics of one batch of unordered AMOs that may be in flight together
/// on a context (each with its own operand words and descriptors).
pub const AMO_BATCH: usize = 64;

/// Where batch slot 1 starts in the scratch area: words 0-3 are the
/// context's own (operand, compare, result, order-dummy read) and 4-7 spare.
pub(super) const BATCH_SCRATCH: usize = 64;

/// Words of one batch slot: operand, compare, result.
pub(super) const SLOT_BYTES: usize = 24;

/// Atomics of delivery-complete's AMO window that may be in flight
/// together on a context, each in a slot of its own after the batch slots
/// (`AMO_BATCH + 1..=AMO_BATCH + AMO_WINDOW`): a window goes on across
/// calls, while the generic layer fills the batch slots' operands before
/// the policy settles anything, so the two never share a slot.
pub const AMO_WINDOW: usize = 64;

/// Atomic slots besides the context's own (slot 0).
pub(super) const ATOMIC_SLOTS: usize = AMO_BATCH + AMO_WINDOW;

/// Scratch bytes per context for atomic operands/results (registered
/// memory): the context's own words, then [`AMO_BATCH`] batch slots and
/// [`AMO_WINDOW`] window slots.
pub const SCRATCH_BYTES: usize = BATCH_SCRATCH + ATOMIC_SLOTS * SLOT_BYTES;
