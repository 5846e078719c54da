//! Atomic operation vocabulary: operand types, operations, and how they map
//! onto libfabric's `fi_datatype` / `fi_op`.

use libfabric_sys as sys;

/// Operand type of a remote atomic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AmoType {
    /// `i8`
    I8,
    /// `i16`
    I16,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `u8`
    U8,
    /// `u16`
    U16,
    /// `u32`
    U32,
    /// `u64`
    U64,
    /// `f32`
    F32,
    /// `f64`
    F64,
}

impl AmoType {
    /// Every type, in table order.
    pub const ALL: [AmoType; 10] = [
        AmoType::I8,
        AmoType::I16,
        AmoType::I32,
        AmoType::I64,
        AmoType::U8,
        AmoType::U16,
        AmoType::U32,
        AmoType::U64,
        AmoType::F32,
        AmoType::F64,
    ];

    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            AmoType::I8 | AmoType::U8 => 1,
            AmoType::I16 | AmoType::U16 => 2,
            AmoType::I32 | AmoType::U32 | AmoType::F32 => 4,
            AmoType::I64 | AmoType::U64 | AmoType::F64 => 8,
        }
    }

    /// libfabric datatype.
    pub fn datatype(self) -> sys::fi_datatype {
        match self {
            AmoType::I8 => sys::FI_INT8,
            AmoType::I16 => sys::FI_INT16,
            AmoType::I32 => sys::FI_INT32,
            AmoType::I64 => sys::FI_INT64,
            AmoType::U8 => sys::FI_UINT8,
            AmoType::U16 => sys::FI_UINT16,
            AmoType::U32 => sys::FI_UINT32,
            AmoType::U64 => sys::FI_UINT64,
            AmoType::F32 => sys::FI_FLOAT,
            AmoType::F64 => sys::FI_DOUBLE,
        }
    }

    pub(crate) fn index(self) -> usize {
        AmoType::ALL
            .iter()
            .position(|t| *t == self)
            .expect("listed")
    }
}

/// A remote atomic operation. `Sub` is not here: it is `Add` of the negated
/// operand (as the original does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AmoOp {
    /// Atomic read (always fetching).
    Read,
    /// Atomic write (non-fetching); with fetch it is an exchange.
    Write,
    /// Compare-and-swap (always fetching: returns the old value).
    CompareSwap,
    /// Add.
    Add,
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

impl AmoOp {
    /// Every op, in table order.
    pub const ALL: [AmoOp; 9] = [
        AmoOp::Read,
        AmoOp::Write,
        AmoOp::CompareSwap,
        AmoOp::Add,
        AmoOp::And,
        AmoOp::Or,
        AmoOp::Xor,
        AmoOp::Min,
        AmoOp::Max,
    ];

    /// libfabric op.
    pub fn fi_op(self) -> sys::fi_op {
        match self {
            AmoOp::Read => sys::FI_ATOMIC_READ,
            AmoOp::Write => sys::FI_ATOMIC_WRITE,
            AmoOp::CompareSwap => sys::FI_CSWAP,
            AmoOp::Add => sys::FI_SUM,
            AmoOp::And => sys::FI_BAND,
            AmoOp::Or => sys::FI_BOR,
            AmoOp::Xor => sys::FI_BXOR,
            AmoOp::Min => sys::FI_MIN,
            AmoOp::Max => sys::FI_MAX,
        }
    }

    pub(crate) fn index(self) -> usize {
        AmoOp::ALL.iter().position(|o| *o == self).expect("listed")
    }

    /// Whether the op is bitwise (undefined on floats).
    pub fn is_bitwise(self) -> bool {
        matches!(self, AmoOp::And | AmoOp::Or | AmoOp::Xor)
    }
}

/// Which libfabric atomic entry point an operation uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmoKind {
    /// `fi_atomic`: no result.
    Plain,
    /// `fi_fetch_atomic`: returns the old value.
    Fetch,
    /// `fi_compare_atomic`: compare-and-swap.
    Compare,
}

impl AmoKind {
    /// The kind an (op, fetch) pair needs.
    pub fn of(op: AmoOp, fetch: bool) -> AmoKind {
        match op {
            AmoOp::CompareSwap => AmoKind::Compare,
            AmoOp::Read => AmoKind::Fetch,
            _ if fetch => AmoKind::Fetch,
            _ => AmoKind::Plain,
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Which (type, op, kind) triples the provider does natively.
#[derive(Debug, Clone, Default)]
pub struct NativeAtomics {
    valid: Vec<bool>,
}

impl NativeAtomics {
    fn slot(ty: AmoType, op: AmoOp, kind: AmoKind) -> usize {
        (ty.index() * AmoOp::ALL.len() + op.index()) * 3 + kind.index()
    }

    /// Builds the table by asking `valid(ty, op, kind)` for every triple.
    ///
    /// A type is native only as a whole: if the provider lacks any
    /// meaningful (op, kind) on it, every op on that type goes through the
    /// fallback. Native and CPU (AM) atomics on one word are not atomic with
    /// respect to each other, and a word is only ever used with one type.
    pub fn probe(mut valid: impl FnMut(AmoType, AmoOp, AmoKind) -> bool) -> NativeAtomics {
        let mut v = vec![false; AmoType::ALL.len() * AmoOp::ALL.len() * 3];
        for ty in AmoType::ALL {
            let mut whole = true;
            for op in AmoOp::ALL {
                for kind in [AmoKind::Plain, AmoKind::Fetch, AmoKind::Compare] {
                    if Self::meaningful(ty, op, kind) {
                        let ok = valid(ty, op, kind);
                        v[Self::slot(ty, op, kind)] = ok;
                        whole &= ok;
                    }
                }
            }
            if !whole {
                for op in AmoOp::ALL {
                    for kind in [AmoKind::Plain, AmoKind::Fetch, AmoKind::Compare] {
                        v[Self::slot(ty, op, kind)] = false;
                    }
                }
            }
        }
        NativeAtomics { valid: v }
    }

    /// Whether (ty, op, kind) is an operation of the API at all.
    fn meaningful(ty: AmoType, op: AmoOp, kind: AmoKind) -> bool {
        let kind_ok = match op {
            AmoOp::CompareSwap => kind == AmoKind::Compare,
            AmoOp::Read => kind == AmoKind::Fetch,
            _ => kind != AmoKind::Compare,
        };
        kind_ok && !(op.is_bitwise() && matches!(ty, AmoType::F32 | AmoType::F64))
    }

    /// None supported (no `FI_ATOMIC`).
    pub fn none() -> NativeAtomics {
        Self::probe(|_, _, _| false)
    }

    /// Whether the provider does this natively.
    pub fn supports(&self, ty: AmoType, op: AmoOp, kind: AmoKind) -> bool {
        self.valid
            .get(Self::slot(ty, op, kind))
            .copied()
            .unwrap_or(false)
    }

    /// How many of the [`AmoType::ALL`] types are native.
    pub fn native_types(&self) -> usize {
        AmoType::ALL
            .iter()
            .filter(|&&ty| self.supports(ty, AmoOp::Read, AmoKind::Fetch))
            .count()
    }

    /// Whether any op is native (for the verbose line).
    pub fn any(&self) -> bool {
        self.valid.iter().any(|v| *v)
    }
}

#[cfg(test)]
mod native_tests {
    use super::*;

    #[test]
    fn a_type_is_native_only_as_a_whole() {
        // Everything valid except fetching Min on i32.
        let t = NativeAtomics::probe(|ty, op, kind| {
            !(ty == AmoType::I32 && op == AmoOp::Min && kind == AmoKind::Fetch)
        });
        assert!(!t.supports(AmoType::I32, AmoOp::Add, AmoKind::Plain));
        assert!(!t.supports(AmoType::I32, AmoOp::Read, AmoKind::Fetch));
        assert!(t.supports(AmoType::I64, AmoOp::Min, AmoKind::Fetch));
        assert!(t.supports(AmoType::F64, AmoOp::Add, AmoKind::Plain));
        // Bitwise ops on floats are not part of the API and do not count.
        assert!(!t.supports(AmoType::F64, AmoOp::Xor, AmoKind::Plain));
        assert!(t.any());
        assert!(!NativeAtomics::none().any());
    }
}
