//! How a reduction combines elements: the built-in operations on the
//! atomic types ([`ReduceOp`] on a [`Reduce`] type) or the caller's own
//! function, on a plain-data type or on elements of a length known only at
//! run time.
//!
//! Exists so that one reduction machinery (the one-exchange path in
//! `team.rs`, reduce-scatter + gather in `spread.rs`) serves every form: a
//! language layer whose elements the runtime has no arithmetic for
//! (OpenSHMEM's complex and `long double`, Fortran's `integer(16)`,
//! characters and CO_REDUCE's OPERATION) passes its function here instead
//! of gathering every member's whole array and combining it itself. The
//! machinery combines in rank order, `((x0 op x1) op x2) ...`, with exactly
//! one member combining each element, so a result is the same bits on every
//! member whatever the function.

use crate::error::{Error, Result};
use crate::pod::{Atom, Pod};

/// How a reduction combines two values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum (wrapping for integers).
    Sum,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Bitwise and (integers).
    And,
    /// Bitwise or (integers).
    Or,
    /// Bitwise xor (integers).
    Xor,
    /// Product (wrapping for integers).
    Prod,
}

impl ReduceOp {
    /// Every op, in C code order (`PGAS_OP_SUM` = 0, ...).
    pub const ALL: [ReduceOp; 7] = [
        ReduceOp::Sum,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::And,
        ReduceOp::Or,
        ReduceOp::Xor,
        ReduceOp::Prod,
    ];

    pub(crate) fn bitwise(self) -> bool {
        matches!(self, ReduceOp::And | ReduceOp::Or | ReduceOp::Xor)
    }
}

/// Values a reduction combines: the atomic types.
pub trait Reduce: Atom {
    /// `a op b`, or `None` if `op` is not defined on the type (bitwise on floats).
    fn combine(a: Self, b: Self, op: ReduceOp) -> Option<Self>;
}

macro_rules! reduce_int {
    ($($t:ty),*) => {$(
        impl Reduce for $t {
            fn combine(a: Self, b: Self, op: ReduceOp) -> Option<Self> {
                Some(match op {
                    ReduceOp::Sum => a.wrapping_add(b),
                    ReduceOp::Min => a.min(b),
                    ReduceOp::Max => a.max(b),
                    ReduceOp::And => a & b,
                    ReduceOp::Or => a | b,
                    ReduceOp::Xor => a ^ b,
                    ReduceOp::Prod => a.wrapping_mul(b),
                })
            }
        }
    )*};
}
reduce_int!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! reduce_float {
    ($($t:ty),*) => {$(
        impl Reduce for $t {
            fn combine(a: Self, b: Self, op: ReduceOp) -> Option<Self> {
                match op {
                    ReduceOp::Sum => Some(a + b),
                    ReduceOp::Prod => Some(a * b),
                    ReduceOp::Min => Some(if b < a { b } else { a }),
                    ReduceOp::Max => Some(if b > a { b } else { a }),
                    _ => None,
                }
            }
        }
    )*};
}
reduce_float!(f32, f64);

/// Combines runs of elements (internal to the reductions).
pub(crate) trait Combiner<T> {
    /// How many `T`s make one element: 1, or the length of a byte element.
    /// The machinery splits arrays only at element boundaries.
    fn granule(&self) -> usize {
        1
    }

    /// `acc[i] = acc[i] op src[i]` for every element of the two runs (of
    /// equal length, whole elements).
    fn combine(&mut self, acc: &mut [T], src: &[T]) -> Result<()>;
}

/// A built-in operation (checked against the type before use).
pub(crate) struct Builtin(pub(crate) ReduceOp);

impl<T: Reduce> Combiner<T> for Builtin {
    fn combine(&mut self, acc: &mut [T], src: &[T]) -> Result<()> {
        for (a, b) in acc.iter_mut().zip(src) {
            *a = T::combine(*a, *b, self.0).expect("op checked");
        }
        Ok(())
    }
}

/// The caller's function on a plain-data type: `f(acc, next)`.
pub(crate) struct ByFn<F>(pub(crate) F);

impl<T: Pod, F: FnMut(T, T) -> T> Combiner<T> for ByFn<F> {
    fn combine(&mut self, acc: &mut [T], src: &[T]) -> Result<()> {
        for (a, b) in acc.iter_mut().zip(src) {
            *a = (self.0)(*a, *b);
        }
        Ok(())
    }
}

/// The caller's function on byte elements of `len` bytes: `f(acc, next)`
/// combines `next` into `acc` in place, or fails with a message (the
/// reduction then fails on every member).
pub(crate) struct ByteElems<F> {
    pub(crate) len: usize,
    pub(crate) f: F,
}

impl<F: FnMut(&mut [u8], &[u8]) -> std::result::Result<(), String>> Combiner<u8> for ByteElems<F> {
    fn granule(&self) -> usize {
        self.len.max(1)
    }

    fn combine(&mut self, acc: &mut [u8], src: &[u8]) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        for (a, b) in acc
            .chunks_exact_mut(self.len)
            .zip(src.chunks_exact(self.len))
        {
            (self.f)(a, b).map_err(Error::State)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_combines_element_by_element() {
        let mut acc = [1i32, 5, -3];
        Builtin(ReduceOp::Max)
            .combine(&mut acc, &[2, 4, -4])
            .unwrap();
        assert_eq!(acc, [2, 5, -3]);

        let mut acc = [1.5f64, 2.0];
        ByFn(|a: f64, b: f64| a * b + 1.0)
            .combine(&mut acc, &[2.0, 3.0])
            .unwrap();
        assert_eq!(acc, [4.0, 7.0]);

        // Two 3-byte elements; the function sees whole elements only.
        let mut seen = Vec::new();
        let mut c = ByteElems {
            len: 3,
            f: |a: &mut [u8], b: &[u8]| {
                seen.push(b.to_vec());
                a.copy_from_slice(b);
                Ok(())
            },
        };
        assert_eq!(Combiner::<u8>::granule(&c), 3);
        let mut acc = *b"abcdef";
        c.combine(&mut acc, b"uvwxyz").unwrap();
        assert_eq!(&acc, b"uvwxyz");
        assert_eq!(seen, vec![b"uvw".to_vec(), b"xyz".to_vec()]);

        let mut failing = ByteElems {
            len: 1,
            f: |_: &mut [u8], _: &[u8]| Err("no".to_string()),
        };
        let e = failing.combine(&mut [0u8], &[1u8]).unwrap_err();
        assert!(e.to_string().contains("no"), "{e}");
    }
}
