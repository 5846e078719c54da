//! Atomics through the public API: [`AtomicOp`], [`AtomicRef`] and the raw
//! entry points (ordered, unordered); routing and ordering are comm-ofi's
//! (`comm_ofi::amo_route`).

use super::*;
use comm_ofi::AmoRequest;

/// An atomic operation (the C ABI's op codes are their positions, `Read` = 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// Read (fetches).
    Read,
    /// Write.
    Write,
    /// Exchange (fetches).
    Xchg,
    /// Compare-and-exchange (fetches).
    Cmpxchg,
    /// Add.
    Add,
    /// Subtract (add of the negation).
    Sub,
    /// Bitwise and (integers).
    And,
    /// Bitwise or (integers).
    Or,
    /// Bitwise xor (integers).
    Xor,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}

impl AtomicOp {
    /// Every op, in code order.
    pub const ALL: [AtomicOp; 11] = [
        AtomicOp::Read,
        AtomicOp::Write,
        AtomicOp::Xchg,
        AtomicOp::Cmpxchg,
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Min,
        AtomicOp::Max,
    ];

    /// Whether the op always returns the old value.
    pub fn always_fetches(self) -> bool {
        matches!(self, AtomicOp::Read | AtomicOp::Xchg | AtomicOp::Cmpxchg)
    }

    /// The comm layer's request for this op with `operand`'s bits on the
    /// `ty` word at `target` (`Sub` becomes an add of the negation), the old
    /// value wanted if `fetch` (ops that always fetch do): what
    /// [`Runtime::amo_bits`] takes. Add a compare value with
    /// [`AmoRequest::comparing`].
    pub fn request(self, target: GlobalAddr, ty: AmoType, operand: u64, fetch: bool) -> AmoRequest {
        let (op, fetch) = self.lower(fetch);
        let operand = if self == AtomicOp::Sub {
            negate_bits(ty, operand)
        } else {
            operand
        };
        AmoRequest::new(target, ty, op, operand).fetching(fetch)
    }

    /// The comm layer's op and whether it fetches.
    pub(super) fn lower(self, fetch: bool) -> (AmoOp, bool) {
        match self {
            AtomicOp::Read => (AmoOp::Read, true),
            AtomicOp::Write => (AmoOp::Write, false),
            AtomicOp::Xchg => (AmoOp::Write, true),
            AtomicOp::Cmpxchg => (AmoOp::CompareSwap, true),
            AtomicOp::Add | AtomicOp::Sub => (AmoOp::Add, fetch),
            AtomicOp::And => (AmoOp::And, fetch),
            AtomicOp::Or => (AmoOp::Or, fetch),
            AtomicOp::Xor => (AmoOp::Xor, fetch),
            AtomicOp::Min => (AmoOp::Min, fetch),
            AtomicOp::Max => (AmoOp::Max, fetch),
        }
    }
}

/// `-x` on the bits of a `ty` value (wrapping for integers, sign flip for floats).
pub(super) fn negate_bits(ty: AmoType, bits: u64) -> u64 {
    match ty {
        AmoType::F32 => bits ^ 0x8000_0000,
        AmoType::F64 => bits ^ (1 << 63),
        _ => {
            let mask = if ty.size() == 8 {
                u64::MAX
            } else {
                (1u64 << (8 * ty.size())) - 1
            };
            bits.wrapping_neg() & mask
        }
    }
}

/// One family of read-modify-write atomics of [`AtomicRef`], a line each:
/// the operation, its fetching form (returns the old value) and its
/// unordered form (buffered, done by the task's next unordered fence or its
/// end).
macro_rules! atomic_ops {
    ($($variant:ident: $op:ident, $fetch:ident, $unordered:ident, $what:literal;)*) => {$(
        #[doc = concat!($what, ".")]
        pub fn $op(&self, v: T) -> Result<()> {
            self.op(AtomicOp::$variant, false, v, v).map(|_| ())
        }
        #[doc = concat!($what, ", returns the old value.")]
        pub fn $fetch(&self, v: T) -> Result<T> {
            self.op(AtomicOp::$variant, true, v, v)
        }
        #[doc = concat!(
            "Unordered `", stringify!($op), "`: buffered, done by the task's next ",
            "unordered fence (or its end)."
        )]
        pub fn $unordered(&self, v: T) -> Result<()> {
            self.unordered(AtomicOp::$variant, v)
        }
    )*};
}

/// A remote atomic word: the atomics of [`Runtime::atomic`].
#[derive(Debug, Clone, Copy)]
pub struct AtomicRef<'a, T> {
    rt: &'a Runtime,
    ptr: GlobalPtr<T>,
}

impl<'r, T: Atom> AtomicRef<'r, T> {
    /// The runtime it belongs to.
    pub(crate) fn rt(&self) -> &'r Runtime {
        self.rt
    }

    /// The word.
    pub fn ptr(&self) -> GlobalPtr<T> {
        self.ptr
    }

    pub(super) fn op(&self, op: AtomicOp, fetch: bool, v: T, cmp: T) -> Result<T> {
        let req = op.request(self.ptr.global_addr(), T::TYPE, v.to_bits64(), fetch);
        let bits = self.rt.amo_bits(&req.comparing(cmp.to_bits64()))?;
        Ok(T::from_bits64(bits))
    }
    pub(super) fn unordered(&self, op: AtomicOp, v: T) -> Result<()> {
        self.rt
            .amo_unordered_bits(self.ptr.global_addr(), T::TYPE, op, v.to_bits64())
    }

    /// Atomic read.
    pub fn read(&self) -> Result<T> {
        self.op(AtomicOp::Read, true, T::from_bits64(0), T::from_bits64(0))
    }
    /// Atomic write.
    pub fn write(&self, v: T) -> Result<()> {
        self.op(AtomicOp::Write, false, v, v).map(|_| ())
    }
    /// Atomic exchange: stores `v`, returns the old value.
    pub fn exchange(&self, v: T) -> Result<T> {
        self.op(AtomicOp::Xchg, true, v, v)
    }
    /// Compare-and-exchange: stores `new` if the value equals `current`.
    /// `Ok(Ok(old))` when it did, `Ok(Err(actual))` when it did not.
    pub fn compare_exchange(&self, current: T, new: T) -> Result<std::result::Result<T, T>> {
        let old = self.op(AtomicOp::Cmpxchg, true, new, current)?;
        Ok(if old == current { Ok(old) } else { Err(old) })
    }

    atomic_ops! {
        Add: add, fetch_add, add_unordered, "Adds `v`";
        Sub: sub, fetch_sub, sub_unordered, "Subtracts `v`";
        Min: min, fetch_min, min_unordered, "Stores the minimum of the value and `v`";
        Max: max, fetch_max, max_unordered, "Stores the maximum of the value and `v`";
    }
}

impl<T: AtomInt> AtomicRef<'_, T> {
    atomic_ops! {
        And: and, fetch_and, and_unordered, "Bitwise and with `v`";
        Or: or, fetch_or, or_unordered, "Bitwise or with `v`";
        Xor: xor, fetch_xor, xor_unordered, "Bitwise xor with `v`";
    }
}

impl Runtime {
    /// The atomics on the word at `ptr`.
    pub fn atomic<T: Atom>(&self, ptr: GlobalPtr<T>) -> AtomicRef<'_, T> {
        AtomicRef { rt: self, ptr }
    }

    /// An atomic on raw bits (the C ABI and generic callers), in the comm
    /// layer's vocabulary ([`AtomicOp::request`] makes one from an API op):
    /// the operand and compare values carry the value's bits in their low
    /// bytes; returns the old value's bits when the op fetches (else 0).
    #[inline]
    pub fn amo_bits(&self, req: &AmoRequest) -> Result<u64> {
        self.check_amo(req)?;
        // The comm layer owns routing and ordering (comm_ofi::amo_route).
        Ok(self
            .comm
            .amo(req)
            .map(|old| if req.fetch { old } else { 0 })?)
    }

    /// What every atomic checks first: an open runtime, an op the type
    /// has, a live word.
    #[inline]
    fn check_amo(&self, req: &AmoRequest) -> Result<()> {
        self.check_open()?;
        if !comm_ofi::cpu_amo::valid(req.ty, req.op) {
            return Err(Error::BadAtomic {
                ty: req.ty,
                op: req.op,
            });
        }
        self.check_live("atomic", req.target, req.ty.size())
    }

    /// A non-blocking atomic (OpenSHMEM's `_nbi` forms): `req` as for
    /// [`Runtime::amo_bits`] in the comm layer's vocabulary (no `Sub`:
    /// add the negation). Where the type's atomics travel to another locale
    /// as active messages, it is sent and its answer awaited later, by the
    /// thread's next operation that must see it (an atomic elsewhere, a PUT
    /// or GET to that locale, a wait) and at the latest by
    /// [`Runtime::quiet`]; for an op that fetches, the old value is written
    /// to `result` then. Elsewhere (the NIC's atomics, a word mapped here)
    /// it is done before returning. [`Runtime::pending_amos`] counts what
    /// is in flight.
    ///
    /// # Safety
    /// For an op that fetches, `result` must be valid for writes of
    /// `req.ty.size()` bytes, and not be read or freed, until the calling
    /// thread's next [`Runtime::quiet`] returns.
    pub unsafe fn amo_nbi(&self, req: &AmoRequest, result: *mut u8) -> Result<()> {
        self.check_amo(req)?;
        // SAFETY: the caller's contract for `result`, which holds until the
        // quiet that settles the thread's postponed atomics.
        Ok(unsafe { self.comm.amo_nbi(req, result) }?)
    }

    /// How many atomics the calling thread left in flight
    /// ([`Runtime::amo_nbi`], non-fetching atomics whose answers are
    /// awaited at the next boundary) and has not awaited yet.
    pub fn pending_amos(&self) -> usize {
        self.comm.pending_amos()
    }

    /// An unordered (buffered, non-fetching) atomic on raw bits. On a word
    /// mapped here it is a CPU atomic done at once (unordered semantics
    /// allow any time before the fence); otherwise it is buffered and sent
    /// with the others to the same locale at the fence.
    pub fn amo_unordered_bits(
        &self,
        target: GlobalAddr,
        ty: AmoType,
        op: AtomicOp,
        operand: u64,
    ) -> Result<()> {
        self.check_open()?;
        let (aop, _) = op.lower(false);
        if op.always_fetches() || op == AtomicOp::Write {
            return Err(Error::AtomicUse(format!(
                "{op:?} has no unordered form (add, sub, and, or, xor, min, max do)"
            )));
        }
        if !comm_ofi::cpu_amo::valid(ty, aop) {
            return Err(Error::BadAtomic { ty, op: aop });
        }
        // The heap range and alignment now, so that a bad address is this
        // call's error rather than the later fence's.
        self.comm.check_atomic_target(target, ty)?;
        self.check_live("unordered atomic", target, ty.size())?;
        let operand = if op == AtomicOp::Sub {
            negate_bits(ty, operand)
        } else {
            operand
        };
        if self.comm.amo_unordered_here(target, ty, aop, operand)? {
            return Ok(());
        }
        if unordered::push(unordered::Op::Amo {
            target,
            ty,
            op: aop,
            operand,
        }) {
            self.unordered_fence()?;
        }
        Ok(())
    }
}
