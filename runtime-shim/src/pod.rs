//! Plain data that travels as bytes ([`Pod`]) and the element types of remote
//! atomics ([`Atom`], [`AtomInt`]).
//!
//! Exists so that PUT/GET of typed slices and the atomics on `i8`..`u64`,
//! `f32`, `f64` have one place where values become bytes and back; the rest
//! of the shim is safe code over these helpers.

use comm_ofi::AmoType;

/// Data that can be copied bit for bit to another process: `Copy`, no
/// padding, no pointers, every bit pattern a valid value.
///
/// # Safety
/// Implement only for types with no padding bytes and no invalid bit
/// patterns (integers, floats, arrays of them, `#[repr(C)]` structs of them
/// without padding).
pub unsafe trait Pod: Copy + Send + Sync + 'static {}

macro_rules! pod {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive number: no padding, every bit pattern valid.
        unsafe impl Pod for $t {}
    )*};
}
pod!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
// SAFETY: an array of Pod elements has no padding between them (size is a
// multiple of alignment) and every bit pattern of each element is valid.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// The bytes of a slice of plain data.
pub fn as_bytes<T: Pod>(s: &[T]) -> &[u8] {
    // SAFETY: T is Pod (no padding, so every byte is initialized); the
    // returned slice covers exactly the same memory for the same lifetime.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// The bytes of a mutable slice of plain data.
pub fn as_bytes_mut<T: Pod>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: T is Pod (every bit pattern valid, so any bytes written through
    // the view leave valid values); same memory, same exclusive lifetime.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// A value as bytes (native byte order).
pub fn to_bytes<T: Pod>(v: &T) -> Vec<u8> {
    as_bytes(std::slice::from_ref(v)).to_vec()
}

/// A value from the first `size_of::<T>()` bytes of `b`; `None` if `b` is shorter.
pub fn from_bytes<T: Pod>(b: &[u8]) -> Option<T> {
    let n = std::mem::size_of::<T>();
    if b.len() < n {
        return None;
    }
    let mut v = std::mem::MaybeUninit::<T>::uninit();
    // SAFETY: n bytes are read from b (checked long enough) into v's n
    // bytes; T is Pod, so any bytes make a valid T.
    unsafe {
        std::ptr::copy_nonoverlapping(b.as_ptr(), v.as_mut_ptr().cast::<u8>(), n);
        Some(v.assume_init())
    }
}

/// A vector of values from bytes; trailing bytes that do not fill an element are ignored.
pub fn vec_from_bytes<T: Pod>(b: &[u8]) -> Vec<T> {
    let n = std::mem::size_of::<T>().max(1);
    b.chunks_exact(n)
        .map(|c| from_bytes(c).expect("chunk of size_of::<T>() bytes"))
        .collect()
}

mod sealed {
    pub trait Sealed {}
}

/// An element type of remote atomics: `i8`..`i64`, `u8`..`u64`, `f32`, `f64`.
pub trait Atom: Pod + PartialEq + PartialOrd + std::fmt::Debug + sealed::Sealed {
    /// The comm layer's name for the type.
    const TYPE: AmoType;
    /// The value's bits, zero-extended (the comm layer's operand format).
    fn to_bits64(self) -> u64;
    /// The value from the low bytes of `bits`.
    fn from_bits64(bits: u64) -> Self;
    /// `-self` (wrapping for integers): `sub` is `add` of the negation.
    fn negate(self) -> Self;
}

/// Integer element types: the bitwise atomics (and, or, xor) are defined.
pub trait AtomInt: Atom {}

macro_rules! atom_int {
    ($($t:ty => $ty:ident, $u:ty);*) => {$(
        impl sealed::Sealed for $t {}
        impl Atom for $t {
            const TYPE: AmoType = AmoType::$ty;
            fn to_bits64(self) -> u64 { self as $u as u64 }
            fn from_bits64(bits: u64) -> Self { bits as $u as $t }
            fn negate(self) -> Self { self.wrapping_neg() }
        }
        impl AtomInt for $t {}
    )*};
}
atom_int!(i8 => I8, u8; i16 => I16, u16; i32 => I32, u32; i64 => I64, u64;
          u8 => U8, u8; u16 => U16, u16; u32 => U32, u32; u64 => U64, u64);

impl sealed::Sealed for f32 {}
impl Atom for f32 {
    const TYPE: AmoType = AmoType::F32;
    fn to_bits64(self) -> u64 {
        self.to_bits() as u64
    }
    fn from_bits64(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
    fn negate(self) -> Self {
        -self
    }
}

impl sealed::Sealed for f64 {}
impl Atom for f64 {
    const TYPE: AmoType = AmoType::F64;
    fn to_bits64(self) -> u64 {
        self.to_bits()
    }
    fn from_bits64(bits: u64) -> Self {
        f64::from_bits(bits)
    }
    fn negate(self) -> Self {
        -self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip() {
        let v = [1u32, 2, 0xdead_beef];
        let b = as_bytes(&v);
        assert_eq!(b.len(), 12);
        assert_eq!(vec_from_bytes::<u32>(b), v);
        assert_eq!(from_bytes::<u64>(&to_bytes(&7u64)), Some(7));
        assert_eq!(from_bytes::<u64>(&[1, 2]), None);
        let mut m = [0u16; 2];
        as_bytes_mut(&mut m).copy_from_slice(&[1, 0, 2, 0]);
        assert_eq!(m, [1, 2]);
    }

    #[test]
    fn atom_bits() {
        assert_eq!((-1i8).to_bits64(), 0xff);
        assert_eq!(i8::from_bits64(0xff), -1);
        assert_eq!(i64::MIN.negate(), i64::MIN);
        assert_eq!(5u32.negate().wrapping_add(7), 2);
        assert_eq!(f64::from_bits64(1.5f64.to_bits64()), 1.5);
        assert_eq!(f32::from_bits64((-2.0f32).to_bits64()), -2.0);
        assert_eq!(2.5f32.negate(), -2.5);
    }
}
