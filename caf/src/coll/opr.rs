//! Calling CO_REDUCE's OPERATION: gfortran passes the program's function
//! itself, compiled with the Fortran calling convention for its type, and
//! flags (`opr_flags`, libcaf.h's GFC_CAF_*) saying how it takes its
//! arguments. What gfortran 12 emits (`-fdump-tree-original`):
//!
//! * numbers, logicals, derived types: flags 0, `T f(T *a, T *b)`, the
//!   result returned by value (integer/logical in rax / rax:rdx, real and
//!   complex in xmm0 / xmm0:xmm1, real(10) in st(0), a derived type of
//!   more than 16 bytes through a hidden result pointer, the first
//!   argument); with VALUE dummies GFC_CAF_ARG_VALUE, `T f(T a, T b)`;
//! * character: GFC_CAF_BYREF, `void f(char *res, size_t res_len, char *a,
//!   char *b, size_t a_len, size_t b_len)` (the hidden lengths are passed
//!   though GFC_CAF_HIDDENLEN is not set).
//!
//! The descriptor gives only the type and the element size, which leaves
//! two cases open: a real of 16 bytes is real(10) (result in st(0)) or
//! real(16) (result in xmm0): the call tells them apart afterwards by the
//! x87 stack (an x87 result leaves one value on it, an SSE result none); a
//! derived type of 16 bytes or less returns in registers chosen by its
//! component types, which the library cannot see, and is refused with an
//! error, as are complex(10)/complex(16) (st(0):st(1) or a hidden
//! pointer) and VALUE arguments of 16-byte reals or derived types.

use crate::desc::{BT_CHARACTER, BT_COMPLEX, BT_DERIVED, BT_INTEGER, BT_LOGICAL, BT_REAL};
use std::ffi::{c_int, c_void};

/// The result is passed by reference (character results).
pub const GFC_CAF_BYREF: c_int = 1 << 0;
/// Hidden character lengths follow the arguments.
pub const GFC_CAF_HIDDENLEN: c_int = 1 << 1;
/// The arguments are passed by value (VALUE dummies).
pub const GFC_CAF_ARG_VALUE: c_int = 1 << 2;
/// The arguments are descriptors.
pub const GFC_CAF_ARG_DESC: c_int = 1 << 3;

/// How OPERATION is called, decided once per CO_REDUCE by [`plan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `T f(T*, T*)` (or `T f(T, T)` when `by_value`) for an integer or
    /// logical of this many bytes.
    Int { bytes: usize, by_value: bool },
    /// The same for real(4) / real(8).
    Real { bytes: usize, by_value: bool },
    /// The same for complex(4) / complex(8) (`bytes` per part).
    Complex { bytes: usize, by_value: bool },
    /// real(10) or real(16) by reference, told apart after the call.
    Real16,
    /// `void f(res, len, a, b, len, len)`; `chars` is the length.
    Char { chars: usize },
    /// A derived type of more than 16 bytes: `void *f(res, a, b)`.
    Memory,
}

/// Decides how to call OPERATION for elements of type `ty` and `elem_len`
/// bytes, or says why the library cannot.
pub fn plan(ty: i8, elem_len: usize, flags: c_int, a_len: c_int) -> Result<Call, String> {
    let by_value = flags & GFC_CAF_ARG_VALUE != 0;
    if flags & GFC_CAF_ARG_DESC != 0 {
        return Err(format!(
            "an OPERATION taking descriptors (opr_flags {flags}) is not supported"
        ));
    }
    let refuse = |why: &str| {
        Err(format!(
            "CO_REDUCE of {elem_len}-byte elements of type {ty} (opr_flags {flags}): {why}"
        ))
    };
    Ok(match (ty, elem_len) {
        (BT_INTEGER | BT_LOGICAL, 1 | 2 | 4 | 8 | 16) => Call::Int {
            bytes: elem_len,
            by_value,
        },
        (BT_REAL, 4 | 8) => Call::Real {
            bytes: elem_len,
            by_value,
        },
        (BT_COMPLEX, 8 | 16) => Call::Complex {
            bytes: elem_len / 2,
            by_value,
        },
        (BT_REAL, 16) if !by_value && cfg!(target_arch = "x86_64") => Call::Real16,
        (BT_REAL, 16) => {
            return refuse(
                "a VALUE real(10) and real(16) are passed differently and have the same descriptor",
            )
        }
        (BT_COMPLEX, 32) => {
            return refuse(
                "complex(10) and complex(16) return differently and have the same descriptor",
            )
        }
        (BT_CHARACTER, _) => {
            if by_value {
                return refuse("a character OPERATION with VALUE arguments is not supported");
            }
            let chars = if a_len > 0 { a_len as usize } else { elem_len };
            Call::Char { chars }
        }
        (BT_DERIVED, n) if n > 16 && !by_value => Call::Memory,
        (BT_DERIVED, _) => {
            return refuse(
                "a derived type of 16 bytes or less is returned in registers that depend on its \
                 component types, which the descriptor does not give (nor are VALUE derived \
                 arguments supported)",
            )
        }
        _ => return refuse("not a type CO_REDUCE takes"),
    })
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Pair<F: Copy>(F, F);

/// Aligned buffers for OPERATION's arguments and result (the gathered
/// bytes are not aligned for the element type).
pub struct Scratch {
    a: Vec<u128>,
    b: Vec<u128>,
    r: Vec<u128>,
    len: usize,
}

impl Scratch {
    /// Buffers for elements of `len` bytes.
    pub fn new(len: usize) -> Scratch {
        let words = len.div_ceil(16).max(1);
        Scratch {
            a: vec![0; words],
            b: vec![0; words],
            r: vec![0; words],
            len,
        }
    }

    /// `acc = f(acc, next)`.
    ///
    /// # Safety
    /// `f` is a function compiled with the convention `call` names for
    /// elements of `acc.len()` bytes.
    pub unsafe fn apply(
        &mut self,
        call: Call,
        f: *const c_void,
        acc: &mut [u8],
        next: &[u8],
    ) -> Result<(), String> {
        let n = self.len;
        fn bytes(v: &mut [u128]) -> &mut [u8] {
            // SAFETY: u128 has no invalid bit patterns; viewing as bytes.
            unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, v.len() * 16) }
        }
        bytes(&mut self.a)[..n].copy_from_slice(&acc[..n]);
        bytes(&mut self.b)[..n].copy_from_slice(&next[..n]);
        bytes(&mut self.r).fill(0);
        let a = self.a.as_ptr() as *const u8;
        let b = self.b.as_ptr() as *const u8;
        let r = self.r.as_mut_ptr() as *mut u8;
        // SAFETY: a, b, r are 16-aligned buffers of at least n bytes; f
        // has the convention `call` (caller).
        unsafe {
            match call {
                Call::Int { bytes: 1, by_value } => scalar::<i8>(f, a, b, r, by_value),
                Call::Int { bytes: 2, by_value } => scalar::<i16>(f, a, b, r, by_value),
                Call::Int { bytes: 4, by_value } => scalar::<i32>(f, a, b, r, by_value),
                Call::Int { bytes: 8, by_value } => scalar::<i64>(f, a, b, r, by_value),
                Call::Int {
                    bytes: 16,
                    by_value,
                } => scalar::<i128>(f, a, b, r, by_value),
                Call::Real { bytes: 4, by_value } => scalar::<f32>(f, a, b, r, by_value),
                Call::Real { bytes: 8, by_value } => scalar::<f64>(f, a, b, r, by_value),
                Call::Complex { bytes: 4, by_value } => scalar::<Pair<f32>>(f, a, b, r, by_value),
                Call::Complex { bytes: 8, by_value } => scalar::<Pair<f64>>(f, a, b, r, by_value),
                Call::Real16 => real16(f, a, b, r),
                Call::Char { chars } => {
                    let g: extern "C" fn(*mut u8, usize, *const u8, *const u8, usize, usize) =
                        std::mem::transmute(f);
                    g(r, chars, a, b, chars, chars);
                }
                Call::Memory => {
                    let g: extern "C" fn(*mut u8, *const u8, *const u8) -> *mut u8 =
                        std::mem::transmute(f);
                    g(r, a, b);
                }
                other => return Err(format!("CO_REDUCE: no call for {other:?} (internal error)")),
            }
        }
        acc[..n].copy_from_slice(&bytes(&mut self.r)[..n]);
        Ok(())
    }
}

/// `T f(T*, T*)` or `T f(T, T)`, the result stored at `r`.
///
/// # Safety
/// `f` has that signature; a, b, r point to aligned T.
unsafe fn scalar<T: Copy>(
    f: *const c_void,
    a: *const u8,
    b: *const u8,
    r: *mut u8,
    by_value: bool,
) {
    // SAFETY: caller.
    unsafe {
        let v = if by_value {
            let g: extern "C" fn(T, T) -> T = std::mem::transmute(f);
            g(*(a as *const T), *(b as *const T))
        } else {
            let g: extern "C" fn(*const T, *const T) -> T = std::mem::transmute(f);
            g(a as *const T, b as *const T)
        };
        (r as *mut T).write(v);
    }
}

/// `real(10) f(real(10)*, real(10)*)` (result in st(0)) or `real(16)
/// f(real(16)*, real(16)*)` (result in xmm0): after the call the x87
/// status word's TOP field says whether a value was pushed (the ABI has
/// the x87 stack empty at calls and returns, but for an x87 result).
///
/// # Safety
/// `f` is one of the two; `r` has 16 writable bytes.
#[cfg(target_arch = "x86_64")]
unsafe fn real16(f: *const c_void, a: *const u8, b: *const u8, r: *mut u8) {
    // SAFETY: a call of a C-ABI function with two pointer arguments; r12
    // (callee-saved) keeps the result address across it; every register
    // the C ABI lets the callee clobber is declared clobbered (including
    // the x87 stack), and the x87 stack is left empty as the ABI requires.
    unsafe {
        std::arch::asm!(
            "call {f}",
            "fnstsw ax",
            "test ax, 0x3800",
            "jz 2f",
            "fstp tbyte ptr [r12]",
            "jmp 3f",
            "2:",
            "movups xmmword ptr [r12], xmm0",
            "3:",
            f = in(reg) f,
            in("rdi") a,
            in("rsi") b,
            in("r12") r,
            clobber_abi("C"),
        );
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn real16(_f: *const c_void, _a: *const u8, _b: *const u8, _r: *mut u8) {
    unreachable!("plan refuses 16-byte reals off x86_64")
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" fn mul_i32(a: *const i32, b: *const i32) -> i32 {
        // SAFETY: the test passes valid pointers.
        unsafe { *a * *b }
    }
    extern "C" fn sub_f64_val(a: f64, b: f64) -> f64 {
        a - b
    }
    extern "C" fn cadd(a: *const Pair<f32>, b: *const Pair<f32>) -> Pair<f32> {
        // SAFETY: as above.
        unsafe { Pair((*a).0 + (*b).0, (*a).1 + (*b).1) }
    }
    extern "C" fn first_char(
        r: *mut u8,
        rl: usize,
        a: *const u8,
        b: *const u8,
        al: usize,
        bl: usize,
    ) {
        assert_eq!((rl, al, bl), (3, 3, 3));
        // SAFETY: as above.
        unsafe {
            std::ptr::copy_nonoverlapping(b, r, 1);
            std::ptr::copy_nonoverlapping(a, r.add(1), 2);
        }
    }

    fn run(call: Call, f: *const c_void, x: &[u8], y: &[u8]) -> Vec<u8> {
        let mut s = Scratch::new(x.len());
        let mut acc = x.to_vec();
        // SAFETY: f matches call in every use below.
        unsafe { s.apply(call, f, &mut acc, y) }.expect("a call");
        acc
    }

    #[test]
    fn calls_by_reference_by_value_and_character() {
        let p = plan(BT_INTEGER, 4, 0, 0).unwrap();
        let r = run(
            p,
            mul_i32 as *const c_void,
            &6i32.to_ne_bytes(),
            &7i32.to_ne_bytes(),
        );
        assert_eq!(r, 42i32.to_ne_bytes());
        let p = plan(BT_REAL, 8, GFC_CAF_ARG_VALUE, 0).unwrap();
        let r = run(
            p,
            sub_f64_val as *const c_void,
            &5f64.to_ne_bytes(),
            &1.5f64.to_ne_bytes(),
        );
        assert_eq!(r, 3.5f64.to_ne_bytes());
        let p = plan(BT_COMPLEX, 8, 0, 0).unwrap();
        let mut x = 1f32.to_ne_bytes().to_vec();
        x.extend_from_slice(&2f32.to_ne_bytes());
        let r = run(p, cadd as *const c_void, &x, &x);
        assert_eq!(&r[..4], &2f32.to_ne_bytes());
        assert_eq!(&r[4..], &4f32.to_ne_bytes());
        let p = plan(BT_CHARACTER, 3, GFC_CAF_BYREF, 3).unwrap();
        assert_eq!(run(p, first_char as *const c_void, b"abc", b"xyz"), b"xab");
    }

    #[test]
    fn refuses_what_it_cannot_call_naming_it() {
        let e = plan(BT_DERIVED, 8, 0, 0).unwrap_err();
        assert!(e.contains("8-byte") && e.contains("component types"), "{e}");
        assert!(plan(BT_COMPLEX, 32, 0, 0).is_err());
        assert!(plan(BT_REAL, 16, GFC_CAF_ARG_VALUE, 0).is_err());
        assert_eq!(plan(BT_DERIVED, 24, 0, 0), Ok(Call::Memory));
    }
}
