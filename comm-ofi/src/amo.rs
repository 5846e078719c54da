//! Atomic operation vocabulary: operand types, operations, the posting form,
//! and which of them the provider does natively. Their libfabric spelling
//! (`fi_datatype`, `fi_op`, the three posting calls) is the `ofi` layer's
//! (`ofi::ops`).

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

    pub(crate) fn index(self) -> usize {
        AmoOp::ALL.iter().position(|o| *o == self).expect("listed")
    }

    /// Whether the op is bitwise (undefined on floats).
    #[inline]
    pub fn is_bitwise(self) -> bool {
        matches!(self, AmoOp::And | AmoOp::Or | AmoOp::Xor)
    }
}

/// The posting form of a native atomic: which of libfabric's three atomic
/// entry points it uses (not what it does to memory, which is the
/// [`AmoOp`], nor how the MCM policy orders it, which is `mcm::AmoKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmoForm {
    /// `fi_atomic`: no result.
    Plain,
    /// `fi_fetch_atomic`: returns the old value.
    Fetch,
    /// `fi_compare_atomic`: compare-and-swap.
    Compare,
}

impl AmoForm {
    /// The form an (op, fetch) pair needs.
    #[inline]
    pub fn of(op: AmoOp, fetch: bool) -> AmoForm {
        match op {
            AmoOp::CompareSwap => AmoForm::Compare,
            AmoOp::Read => AmoForm::Fetch,
            _ if fetch => AmoForm::Fetch,
            _ => AmoForm::Plain,
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Which (type, op, form) triples the provider does natively.
#[derive(Debug, Clone, Default)]
pub struct NativeAtomics {
    valid: Vec<bool>,
}

impl NativeAtomics {
    fn slot(ty: AmoType, op: AmoOp, form: AmoForm) -> usize {
        (ty.index() * AmoOp::ALL.len() + op.index()) * 3 + form.index()
    }

    /// Builds the table by asking `valid(ty, op, form)` for every triple.
    ///
    /// A type is native only as a whole: if the provider lacks any
    /// meaningful (op, form) on it, every op on that type goes through the
    /// fallback. Native and CPU (AM) atomics on one word are not atomic with
    /// respect to each other, and a word is only ever used with one type.
    pub fn probe(mut valid: impl FnMut(AmoType, AmoOp, AmoForm) -> bool) -> NativeAtomics {
        let mut v = vec![false; AmoType::ALL.len() * AmoOp::ALL.len() * 3];
        for ty in AmoType::ALL {
            let mut whole = true;
            for op in AmoOp::ALL {
                for form in [AmoForm::Plain, AmoForm::Fetch, AmoForm::Compare] {
                    if Self::meaningful(ty, op, form) {
                        let ok = valid(ty, op, form);
                        v[Self::slot(ty, op, form)] = ok;
                        whole &= ok;
                    }
                }
            }
            if !whole {
                for op in AmoOp::ALL {
                    for form in [AmoForm::Plain, AmoForm::Fetch, AmoForm::Compare] {
                        v[Self::slot(ty, op, form)] = false;
                    }
                }
            }
        }
        NativeAtomics { valid: v }
    }

    /// Whether (ty, op, form) is an operation of the API at all.
    fn meaningful(ty: AmoType, op: AmoOp, form: AmoForm) -> bool {
        let form_ok = match op {
            AmoOp::CompareSwap => form == AmoForm::Compare,
            AmoOp::Read => form == AmoForm::Fetch,
            _ => form != AmoForm::Compare,
        };
        form_ok && !(op.is_bitwise() && matches!(ty, AmoType::F32 | AmoType::F64))
    }

    /// None supported (no `FI_ATOMIC`).
    pub fn none() -> NativeAtomics {
        Self::probe(|_, _, _| false)
    }

    /// Whether the provider does this natively.
    pub fn supports(&self, ty: AmoType, op: AmoOp, form: AmoForm) -> bool {
        self.valid
            .get(Self::slot(ty, op, form))
            .copied()
            .unwrap_or(false)
    }

    /// How many of the [`AmoType::ALL`] types are native.
    pub fn native_types(&self) -> usize {
        AmoType::ALL
            .iter()
            .filter(|&&ty| self.supports(ty, AmoOp::Read, AmoForm::Fetch))
            .count()
    }

    /// Whether any op is native (for the verbose line).
    pub fn any(&self) -> bool {
        self.valid.iter().any(|v| *v)
    }

    /// The types done natively as a whole, bit `i` for `AmoType::ALL[i]`
    /// (what locales exchange to agree on the routes: `agree`).
    pub fn type_mask(&self) -> u64 {
        AmoType::ALL
            .iter()
            .enumerate()
            .filter(|(_, &ty)| self.supports(ty, AmoOp::Read, AmoForm::Fetch))
            .fold(0, |m, (i, _)| m | 1 << i)
    }

    /// Only the types whose bit is in `mask` stay native (the intersection
    /// over the job's locales).
    pub fn restrict_types(&self, mask: u64) -> NativeAtomics {
        let mut out = self.clone();
        for (i, ty) in AmoType::ALL.into_iter().enumerate() {
            if mask & 1 << i == 0 {
                for op in AmoOp::ALL {
                    for form in [AmoForm::Plain, AmoForm::Fetch, AmoForm::Compare] {
                        out.valid[Self::slot(ty, op, form)] = false;
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod native_tests {
    use super::*;

    #[test]
    fn type_masks_round_trip_and_restrict() {
        let all = NativeAtomics::probe(|_, _, _| true);
        assert_eq!(all.type_mask(), (1 << AmoType::ALL.len()) - 1);
        let fewer = all.restrict_types(0b101);
        assert_eq!(fewer.type_mask(), 0b101);
        assert!(fewer.supports(AmoType::ALL[2], AmoOp::Add, AmoForm::Plain));
        assert!(!fewer.supports(AmoType::ALL[1], AmoOp::Add, AmoForm::Plain));
        assert_eq!(NativeAtomics::none().type_mask(), 0);
    }

    #[test]
    fn a_type_is_native_only_as_a_whole() {
        // Everything valid except fetching Min on i32.
        let t = NativeAtomics::probe(|ty, op, form| {
            !(ty == AmoType::I32 && op == AmoOp::Min && form == AmoForm::Fetch)
        });
        assert!(!t.supports(AmoType::I32, AmoOp::Add, AmoForm::Plain));
        assert!(!t.supports(AmoType::I32, AmoOp::Read, AmoForm::Fetch));
        assert!(t.supports(AmoType::I64, AmoOp::Min, AmoForm::Fetch));
        assert!(t.supports(AmoType::F64, AmoOp::Add, AmoForm::Plain));
        // Bitwise ops on floats are not part of the API and do not count.
        assert!(!t.supports(AmoType::F64, AmoOp::Xor, AmoForm::Plain));
        assert!(t.any());
        assert!(!NativeAtomics::none().any());
    }
}
