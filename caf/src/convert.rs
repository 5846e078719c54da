//! Kind and type conversion of one element, as an assignment between a
//! coindexed object and a local one does it (`a[2] = b` with `a` real(8)
//! and `b` integer(4); character of another length, blank padded or
//! truncated; character kind 1 <-> 4).
//!
//! Numbers go through the widest Rust type of their class (i128, f64, or a
//! pair of f64); real(10) and real(16) are copied bit for bit when both
//! sides have that kind and converted through f64 otherwise (a documented
//! loss of precision the other coarray runtimes share).

use crate::desc::{BT_CHARACTER, BT_COMPLEX, BT_INTEGER, BT_LOGICAL, BT_REAL};

/// One side of a conversion: type, kind and element bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elem {
    /// `BT_*`.
    pub ty: i8,
    /// The Fortran kind (bytes for numbers, 1 or 4 for character).
    pub kind: usize,
    /// Bytes of one element.
    pub len: usize,
}

impl Elem {
    /// An element of type `ty`, kind `kind`, `len` bytes.
    pub fn new(ty: i8, kind: usize, len: usize) -> Elem {
        Elem { ty, kind, len }
    }
}

enum Value {
    Int(i128),
    Real(f64),
    Complex(f64, f64),
}

fn read_int(b: &[u8]) -> i128 {
    match b.len() {
        1 => b[0] as i8 as i128,
        2 => i16::from_ne_bytes([b[0], b[1]]) as i128,
        4 => i32::from_ne_bytes(b[..4].try_into().expect("4")) as i128,
        8 => i64::from_ne_bytes(b[..8].try_into().expect("8")) as i128,
        16 => i128::from_ne_bytes(b[..16].try_into().expect("16")),
        _ => 0,
    }
}

fn write_int(v: i128, out: &mut [u8]) {
    match out.len() {
        1 => out[0] = v as i8 as u8,
        2 => out.copy_from_slice(&(v as i16).to_ne_bytes()),
        4 => out.copy_from_slice(&(v as i32).to_ne_bytes()),
        8 => out.copy_from_slice(&(v as i64).to_ne_bytes()),
        16 => out.copy_from_slice(&v.to_ne_bytes()),
        _ => {}
    }
}

/// x87 80-bit extended (real(10)) to f64.
fn f80_to_f64(b: &[u8]) -> f64 {
    let mant = u64::from_le_bytes(b[..8].try_into().expect("8"));
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (se & 0x7fff) as i32;
    if exp == 0 && mant == 0 {
        return 0.0 * sign;
    }
    if exp == 0x7fff {
        return if mant << 1 == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    sign * (mant as f64) * 2f64.powi(exp - 16383 - 63)
}

fn f64_to_f80(v: f64, out: &mut [u8]) {
    out.fill(0);
    if v == 0.0 {
        if v.is_sign_negative() {
            out[9] = 0x80;
        }
        return;
    }
    let sign: u16 = if v.is_sign_negative() { 0x8000 } else { 0 };
    if v.is_nan() || v.is_infinite() {
        let mant: u64 = if v.is_nan() {
            0xC000_0000_0000_0000
        } else {
            1 << 63
        };
        out[..8].copy_from_slice(&mant.to_le_bytes());
        out[8..10].copy_from_slice(&(sign | 0x7fff).to_le_bytes());
        return;
    }
    let bits = v.abs().to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    let (mant, exp) = if e == 0 {
        // Subnormal f64: normalise.
        let m = bits & ((1 << 52) - 1);
        let lz = m.leading_zeros() as i32 - 11;
        ((m << (11 + lz)), -1022 - lz)
    } else {
        (((bits & ((1 << 52) - 1)) | (1 << 52)) << 11, e - 1023)
    };
    out[..8].copy_from_slice(&mant.to_le_bytes());
    out[8..10].copy_from_slice(&(sign | (exp + 16383) as u16).to_le_bytes());
}

/// IEEE binary128 (real(16)) to f64.
fn f128_to_f64(b: &[u8]) -> f64 {
    let bits = u128::from_le_bytes(b[..16].try_into().expect("16"));
    let sign = (bits >> 127) as u64;
    let exp = ((bits >> 112) & 0x7fff) as i32;
    let mant = (bits >> 60) as u64 & ((1 << 52) - 1);
    let out = if exp == 0 {
        0
    } else if exp == 0x7fff {
        (0x7ffu64 << 52) | mant
    } else {
        let e = exp - 16383 + 1023;
        if e <= 0 {
            0
        } else if e >= 0x7ff {
            0x7ff << 52
        } else {
            ((e as u64) << 52) | mant
        }
    };
    f64::from_bits((sign << 63) | out)
}

fn f64_to_f128(v: f64, out: &mut [u8]) {
    let bits = v.to_bits();
    let sign = (bits >> 63) as u128;
    let e = ((bits >> 52) & 0x7ff) as i32;
    let mant = (bits & ((1 << 52) - 1)) as u128;
    let q = if e == 0 {
        0 // zero (subnormal f64s flush to zero: below real(16)'s use here)
    } else if e == 0x7ff {
        (0x7fffu128 << 112) | (mant << 60)
    } else {
        (((e - 1023 + 16383) as u128) << 112) | (mant << 60)
    };
    out.copy_from_slice(&((sign << 127) | q).to_le_bytes());
}

fn read_real(b: &[u8]) -> f64 {
    match b.len() {
        4 => f32::from_ne_bytes(b[..4].try_into().expect("4")) as f64,
        8 => f64::from_ne_bytes(b[..8].try_into().expect("8")),
        10 => f80_to_f64(b),
        16 => f128_to_f64(b),
        _ => 0.0,
    }
}

fn write_real(v: f64, out: &mut [u8]) {
    match out.len() {
        4 => out.copy_from_slice(&(v as f32).to_ne_bytes()),
        8 => out.copy_from_slice(&v.to_ne_bytes()),
        10 => f64_to_f80(v, out),
        16 => f64_to_f128(v, out),
        _ => {}
    }
}

fn read(src: &[u8], e: Elem) -> Option<Value> {
    Some(match e.ty {
        BT_INTEGER | BT_LOGICAL => Value::Int(read_int(&src[..e.kind.min(src.len())])),
        BT_REAL => Value::Real(read_real(&src[..e.kind.min(src.len())])),
        BT_COMPLEX => {
            let k = e.kind;
            Value::Complex(read_real(&src[..k]), read_real(&src[k..2 * k]))
        }
        _ => return None,
    })
}

fn write(v: Value, out: &mut [u8], e: Elem) {
    let k = e.kind;
    match (e.ty, v) {
        (BT_INTEGER, Value::Int(i)) => write_int(i, &mut out[..k]),
        (BT_INTEGER, Value::Real(r)) | (BT_INTEGER, Value::Complex(r, _)) => {
            write_int(r.trunc() as i128, &mut out[..k])
        }
        (BT_LOGICAL, Value::Int(i)) => write_int((i != 0) as i128, &mut out[..k]),
        (BT_LOGICAL, _) => write_int(0, &mut out[..k]),
        (BT_REAL, Value::Int(i)) => write_real(i as f64, &mut out[..k]),
        (BT_REAL, Value::Real(r)) | (BT_REAL, Value::Complex(r, _)) => write_real(r, &mut out[..k]),
        (BT_COMPLEX, v) => {
            let (re, im) = match v {
                Value::Int(i) => (i as f64, 0.0),
                Value::Real(r) => (r, 0.0),
                Value::Complex(r, i) => (r, i),
            };
            write_real(re, &mut out[..k]);
            write_real(im, &mut out[k..2 * k]);
        }
        _ => {}
    }
}

/// Copies a character element: `src` of kind `sk` into `dst` of kind `dk`,
/// truncated or blank padded.
fn convert_char(dst: &mut [u8], dk: usize, src: &[u8], sk: usize) {
    let sn = src.len() / sk.max(1);
    let dn = dst.len() / dk.max(1);
    for i in 0..dn {
        let c: u32 = if i < sn {
            if sk == 4 {
                u32::from_ne_bytes(src[4 * i..4 * i + 4].try_into().expect("4"))
            } else {
                src[i] as u32
            }
        } else {
            b' ' as u32
        };
        if dk == 4 {
            dst[4 * i..4 * i + 4].copy_from_slice(&c.to_ne_bytes());
        } else {
            // Kind 4 to kind 1: characters above 255 become '?', as
            // gfortran's own assignment does.
            dst[i] = if c > 255 { b'?' } else { c as u8 };
        }
    }
}

/// Converts one element from `src` (described by `se`) into `dst`
/// (described by `de`). Equal descriptions copy bytes.
pub fn convert(dst: &mut [u8], de: Elem, src: &[u8], se: Elem) {
    if de == se || (de.ty == se.ty && de.kind == se.kind && de.len == se.len) {
        dst[..de.len].copy_from_slice(&src[..de.len]);
        return;
    }
    if de.ty == BT_CHARACTER || se.ty == BT_CHARACTER {
        if de.ty == BT_CHARACTER && se.ty == BT_CHARACTER {
            convert_char(&mut dst[..de.len], de.kind, &src[..se.len], se.kind);
        } else {
            // No numeric <-> character assignment in Fortran: copy what fits.
            let n = de.len.min(se.len);
            dst[..n].copy_from_slice(&src[..n]);
        }
        return;
    }
    match read(src, se) {
        Some(v) if matches!(de.ty, BT_INTEGER | BT_LOGICAL | BT_REAL | BT_COMPLEX) => {
            write(v, dst, de)
        }
        // Derived types and unknown types: bytes (same type by the rules
        // of assignment).
        _ => {
            let n = de.len.min(se.len);
            dst[..n].copy_from_slice(&src[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The element `src` (type, kind, length `from`) converted to type,
    /// kind and length `to`.
    fn converted(to: (i8, usize, usize), src: &[u8], from: (i8, usize, usize)) -> Vec<u8> {
        let (de, se) = (
            Elem::new(to.0, to.1, to.2),
            Elem::new(from.0, from.1, from.2),
        );
        let mut dst = vec![0u8; de.len];
        convert(&mut dst, de, src, se);
        dst
    }

    #[test]
    fn numbers_convert_across_kinds_and_types() {
        let d = converted((BT_REAL, 8, 8), &7i32.to_ne_bytes(), (BT_INTEGER, 4, 4));
        assert_eq!(f64::from_ne_bytes(d.try_into().unwrap()), 7.0);
        let i = converted(
            (BT_INTEGER, 2, 2),
            &(-3.75f32).to_ne_bytes(),
            (BT_REAL, 4, 4),
        );
        assert_eq!(i16::from_ne_bytes(i.try_into().unwrap()), -3);
        let c = converted((BT_COMPLEX, 8, 16), &2.5f32.to_ne_bytes(), (BT_REAL, 4, 4));
        assert_eq!(f64::from_ne_bytes(c[..8].try_into().unwrap()), 2.5);
        assert_eq!(f64::from_ne_bytes(c[8..].try_into().unwrap()), 0.0);
    }

    #[test]
    fn extended_reals_round_trip_through_f64() {
        for v in [1.0f64, -2.5, 1e300, 3.0e-300, 0.1] {
            let mut x = [0u8; 10];
            f64_to_f80(v, &mut x);
            assert_eq!(f80_to_f64(&x), v);
            let mut q = [0u8; 16];
            f64_to_f128(v, &mut q);
            assert_eq!(f128_to_f64(&q), v);
        }
    }

    #[test]
    fn characters_pad_truncate_and_change_kind() {
        let d = converted((BT_CHARACTER, 1, 5), b"ab", (BT_CHARACTER, 1, 2));
        assert_eq!(&d, b"ab   ");
        let w = converted((BT_CHARACTER, 4, 12), b"xyzw", (BT_CHARACTER, 1, 4));
        let chars: Vec<u32> = w
            .chunks(4)
            .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(chars, vec![b'x' as u32, b'y' as u32, b'z' as u32]);
        let n = converted((BT_CHARACTER, 1, 2), &w, (BT_CHARACTER, 4, 12));
        assert_eq!(&n, b"xy");
    }
}
