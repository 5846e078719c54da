//! Plain data that travels as bytes ([`Pod`]) and the element types of remote
//! atomics ([`Atom`], [`AtomInt`]).
//!
//! Exists so that PUT/GET of typed slices and the atomics on `i8`..`u64`,
//! `f32`, `f64` have one place where values become bytes and back; the rest
//! of the shim is safe code over these helpers.

use comm_ofi::AmoType;

/// Data that can be copied bit for bit to another process: `Copy`, no
/// padding, no pointers, every bit pattern a valid value, shareable between
/// threads.
///
/// This is [`bytemuck::Pod`] (plus `Send + Sync`): every type that is
/// `bytemuck::Pod` is `Pod` here, and there is nothing to implement by hand.
/// The numbers and arrays of them are; for your own struct, derive it (the
/// derive checks at compile time that the struct is `#[repr(C)]` with no
/// padding and only `Pod` fields), no `unsafe` needed:
///
/// ```no_run
/// use runtime_shim::bytemuck::{Pod, Zeroable};
///
/// #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
/// #[bytemuck(crate = "runtime_shim::bytemuck")] // not needed if you depend on bytemuck yourself
/// #[repr(C)]
/// struct Particle {
///     pos: [f64; 3],
///     id: u64,
/// }
///
/// let rt = runtime_shim::init()?;
/// let parts = rt.alloc_all::<Particle>(16)?;
/// let next = (rt.here() + 1) % rt.num_locales();
/// let p = Particle { pos: [1.0, 2.0, 3.0], id: rt.here() as u64 };
/// rt.put(parts.at(next)?, &[p])?;
/// rt.barrier()?;
/// let mut back = [Particle::zeroed()];
/// rt.get(&mut back, parts.at(next)?)?;
/// assert_eq!(back[0], p);
/// rt.finalize()?;
/// # Ok::<(), runtime_shim::Error>(())
/// ```
///
/// A struct with padding does not derive (the padding bytes would travel
/// uninitialized):
///
/// ```compile_fail
/// use runtime_shim::bytemuck::{Pod, Zeroable};
/// #[derive(Clone, Copy, Pod, Zeroable)]
/// #[bytemuck(crate = "runtime_shim::bytemuck")]
/// #[repr(C)]
/// struct Padded { a: u8, b: u64 }
/// ```
pub trait Pod: bytemuck::Pod + Send + Sync {}

impl<T: bytemuck::Pod + Send + Sync> Pod for T {}

/// The bytes of a slice of plain data.
pub fn as_bytes<T: Pod>(s: &[T]) -> &[u8] {
    if std::mem::size_of::<T>() == 0 {
        return &[];
    }
    bytemuck::cast_slice(s)
}

/// The bytes of a mutable slice of plain data.
pub fn as_bytes_mut<T: Pod>(s: &mut [T]) -> &mut [u8] {
    if std::mem::size_of::<T>() == 0 {
        return &mut [];
    }
    bytemuck::cast_slice_mut(s)
}

/// A value as bytes (native byte order).
pub fn to_bytes<T: Pod>(v: &T) -> Vec<u8> {
    as_bytes(std::slice::from_ref(v)).to_vec()
}

/// A value from the first `size_of::<T>()` bytes of `b` (any alignment);
/// `None` if `b` is shorter.
pub fn from_bytes<T: Pod>(b: &[u8]) -> Option<T> {
    let n = std::mem::size_of::<T>();
    b.get(..n).map(bytemuck::pod_read_unaligned)
}

/// A vector of values from bytes (any alignment); trailing bytes that do
/// not fill an element are ignored. One bulk copy: collectives decode
/// megabytes with it (element by element it was a third of a large
/// allreduce's time).
pub fn vec_from_bytes<T: Pod>(b: &[u8]) -> Vec<T> {
    let size = std::mem::size_of::<T>();
    if size == 0 {
        return vec![<T as bytemuck::Zeroable>::zeroed(); b.len()];
    }
    let n = b.len() / size;
    let mut v = vec![<T as bytemuck::Zeroable>::zeroed(); n];
    as_bytes_mut(&mut v).copy_from_slice(&b[..n * size]);
    v
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
        // Unaligned input (a byte buffer from the wire) decodes too.
        let raw = [0u8, 7, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(from_bytes::<u64>(&raw[1..]), Some(7));
    }

    #[test]
    fn vec_from_bytes_takes_any_alignment_and_drops_a_partial_tail() {
        let v: Vec<u64> = (0..100).map(|i| i * 0x0101_0101_0101).collect();
        let mut raw = vec![0xffu8];
        raw.extend_from_slice(as_bytes(&v));
        raw.extend_from_slice(&[1, 2, 3]);
        assert_eq!(vec_from_bytes::<u64>(&raw[1..]), v);
        assert_eq!(vec_from_bytes::<u64>(&raw[1..8]), Vec::<u64>::new());
        assert_eq!(vec_from_bytes::<()>(&[1, 2]).len(), 2);
    }

    #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(C)]
    struct Derived {
        a: u32,
        b: [u16; 2],
    }

    #[test]
    fn derived_structs_are_pod_without_unsafe() {
        fn takes_pod<T: Pod>(v: &[T]) -> Vec<u8> {
            as_bytes(v).to_vec()
        }
        let v = [Derived { a: 1, b: [2, 3] }];
        let b = takes_pod(&v);
        assert_eq!(b.len(), 8);
        assert_eq!(vec_from_bytes::<Derived>(&b), v);
        assert_eq!(as_bytes::<()>(&[(), ()]), &[] as &[u8]);
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
