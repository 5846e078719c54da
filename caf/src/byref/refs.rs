//! gfortran's `caf_reference_t` chain (libcaf.h, GCC 7 and later) decoded
//! into owned Rust values, so the walk over a remote image's memory never
//! touches the compiler's structures again.
//!
//! A chain describes `obj[img]%comp%arr(i, :)%x` one part at a time: a
//! component (byte offset into the derived type; a non-zero token offset
//! marks an allocatable or pointer component, whose data lives elsewhere),
//! an array with a descriptor (subscripts in the array's own bounds), or an
//! array without one (a fixed-size array inside a derived type or a static
//! coarray: subscripts are 0-based element offsets that gfortran has
//! already multiplied by the dimension's stride).

use std::ffi::{c_int, c_void};

/// `CAF_REF_COMPONENT`.
pub const REF_COMPONENT: c_int = 0;
/// `CAF_REF_ARRAY`: an array with a descriptor.
pub const REF_ARRAY: c_int = 1;
/// `CAF_REF_STATIC_ARRAY`: an array without one.
pub const REF_STATIC_ARRAY: c_int = 2;

/// `CAF_ARR_REF_NONE`: ends the dimensions of an array reference.
pub const MODE_NONE: u8 = 0;
/// `CAF_ARR_REF_VECTOR`: a vector subscript.
pub const MODE_VECTOR: u8 = 1;
/// `CAF_ARR_REF_FULL`: `(:)`.
pub const MODE_FULL: u8 = 2;
/// `CAF_ARR_REF_RANGE`: `(start:end:stride)`.
pub const MODE_RANGE: u8 = 3;
/// `CAF_ARR_REF_SINGLE`: `(i)`.
pub const MODE_SINGLE: u8 = 4;
/// `CAF_ARR_REF_OPEN_END`: `(i:)`, the end from the remote descriptor.
pub const MODE_OPEN_END: u8 = 5;
/// `CAF_ARR_REF_OPEN_START`: `(:i)`, the start from the remote descriptor.
pub const MODE_OPEN_START: u8 = 6;

/// GFC_MAX_DIMENSIONS.
const MAX_DIMS: usize = 15;

/// The longest chain accepted (a corrupt `next` pointer must not loop).
const MAX_CHAIN: usize = 1024;

/// `caf_reference_t.u.c`.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawComponent {
    offset: isize,
    caf_token_offset: isize,
}

/// `caf_reference_t.u.a.dim[i].s`.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawRange {
    start: isize,
    end: isize,
    stride: isize,
}

/// `caf_reference_t.u.a.dim[i].v`.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawVector {
    vector: *const c_void,
    nvec: usize,
    kind: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
union RawDim {
    s: RawRange,
    v: RawVector,
}

/// `caf_reference_t.u.a`.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawArray {
    mode: [u8; MAX_DIMS],
    static_array_type: c_int,
    dim: [RawDim; MAX_DIMS],
}

#[repr(C)]
union RawU {
    c: RawComponent,
    a: RawArray,
}

/// `caf_reference_t`, as gfortran lays it out.
#[repr(C)]
pub struct CafReference {
    next: *const CafReference,
    ty: c_int,
    item_size: usize,
    u: RawU,
}

/// One dimension of an array reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sel {
    /// Listed indices (a vector subscript).
    Vector(Vec<i64>),
    /// The whole extent (`::stride`: every stride-th element, from the
    /// upper bound down when negative).
    Full { stride: isize },
    /// `start:end:stride` (both ends given).
    Range {
        start: isize,
        end: isize,
        stride: isize,
    },
    /// One index.
    Single(isize),
    /// `start::stride`, the end from the array's bounds.
    OpenEnd { start: isize, stride: isize },
    /// `:end:stride`, the start from the array's bounds.
    OpenStart { end: isize, stride: isize },
}

/// What one part of the chain references.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// A component at `offset` bytes into the derived type. A non-zero
    /// `token_offset` (where the component's token sits, in bytes from
    /// the start of the derived type) marks an allocatable or pointer
    /// component: it holds a pointer or a descriptor, not the data.
    Component { offset: isize, token_offset: isize },
    /// An array; `described`: it has a descriptor (else its subscripts are
    /// pre-multiplied 0-based element offsets).
    Array { dims: Vec<Sel>, described: bool },
}

/// One decoded reference: the part and the bytes of an item it yields
/// (for arrays, the element size the subscripts advance by).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ref {
    /// What is referenced.
    pub part: Part,
    /// Bytes of one item.
    pub item_size: usize,
}

/// Reads `n` integers of `kind` bytes at `p` (a vector subscript).
///
/// # Safety
/// `p` points to `n` readable integers of that kind.
unsafe fn read_vector(p: *const c_void, n: usize, kind: c_int) -> Result<Vec<i64>, String> {
    if n > 0 && p.is_null() {
        return Err(format!("a vector subscript of {n} entries has no data"));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: caller: n integers of `kind` bytes at p.
        let v = unsafe {
            match kind {
                1 => *(p as *const i8).add(i) as i64,
                2 => (p as *const i16).add(i).read_unaligned() as i64,
                4 => (p as *const i32).add(i).read_unaligned() as i64,
                8 => (p as *const i64).add(i).read_unaligned(),
                16 => (p as *const i128).add(i).read_unaligned() as i64,
                k => return Err(format!("vector subscript of unknown integer kind {k}")),
            }
        };
        out.push(v);
    }
    Ok(out)
}

/// Decodes a chain.
///
/// # Safety
/// `refs` is null or gfortran's chain: each element a valid
/// `caf_reference_t` whose modes end with `CAF_ARR_REF_NONE` (or use all
/// 15 dimensions), vector subscripts readable.
pub unsafe fn decode(refs: *const CafReference) -> Result<Vec<Ref>, String> {
    let mut out = Vec::new();
    let mut p = refs;
    while !p.is_null() {
        if out.len() == MAX_CHAIN {
            return Err(format!("a reference chain longer than {MAX_CHAIN} parts"));
        }
        // SAFETY: caller: a valid element of the chain.
        let r = unsafe { &*p };
        let part = match r.ty {
            REF_COMPONENT => {
                // SAFETY: the component member is the one gfortran set.
                let c = unsafe { r.u.c };
                Part::Component {
                    offset: c.offset,
                    token_offset: c.caf_token_offset,
                }
            }
            REF_ARRAY | REF_STATIC_ARRAY => {
                let described = r.ty == REF_ARRAY;
                // SAFETY: the array member is the one gfortran set.
                let a = unsafe { r.u.a };
                let mut dims = Vec::new();
                for k in 0..MAX_DIMS {
                    let mode = a.mode[k];
                    if mode == MODE_NONE {
                        break;
                    }
                    // SAFETY: the member each mode uses (libcaf.h).
                    let s = unsafe { a.dim[k].s };
                    let sel = match mode {
                        MODE_VECTOR => {
                            // SAFETY: as above; the vector is gfortran's.
                            let v = unsafe { a.dim[k].v };
                            // SAFETY: nvec integers of kind at vector.
                            Sel::Vector(unsafe { read_vector(v.vector, v.nvec, v.kind)? })
                        }
                        // Without a descriptor gfortran gives a full
                        // dimension's 0-based range explicitly.
                        MODE_FULL if !described => Sel::Range {
                            start: s.start,
                            end: s.end,
                            stride: s.stride,
                        },
                        MODE_FULL => Sel::Full {
                            stride: if s.stride == 0 { 1 } else { s.stride },
                        },
                        MODE_RANGE => Sel::Range {
                            start: s.start,
                            end: s.end,
                            stride: s.stride,
                        },
                        MODE_SINGLE => Sel::Single(s.start),
                        MODE_OPEN_END => Sel::OpenEnd {
                            start: s.start,
                            stride: s.stride,
                        },
                        MODE_OPEN_START => Sel::OpenStart {
                            end: s.end,
                            stride: s.stride,
                        },
                        m => {
                            return Err(format!(
                                "unknown array reference mode {m} in dimension {}",
                                k + 1
                            ))
                        }
                    };
                    if let Sel::Range { stride: 0, .. }
                    | Sel::OpenEnd { stride: 0, .. }
                    | Sel::OpenStart { stride: 0, .. } = sel
                    {
                        return Err(format!("stride 0 in dimension {}", k + 1));
                    }
                    dims.push(sel);
                }
                Part::Array { dims, described }
            }
            t => return Err(format!("unknown reference type {t}")),
        };
        out.push(Ref {
            part,
            item_size: r.item_size,
        });
        p = r.next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank() -> CafReference {
        // SAFETY: all-zero is a valid CafReference (null next, plain
        // integers, null vector pointers).
        unsafe { std::mem::zeroed() }
    }

    #[test]
    fn layout_matches_libcaf_h() {
        // next 8, type 4 (+4), item_size 8, then the union: mode[15],
        // static_array_type at 16, dim[] at 24, 15 dims of 24 bytes.
        assert_eq!(std::mem::size_of::<RawDim>(), 24);
        assert_eq!(std::mem::size_of::<RawArray>(), 24 + 15 * 24);
        assert_eq!(std::mem::size_of::<CafReference>(), 24 + 24 + 15 * 24);
        let r = blank();
        let base = &r as *const _ as usize;
        // SAFETY: addresses only.
        let (a, d) = unsafe {
            (
                &r.u.a.static_array_type as *const _ as usize,
                &r.u.a.dim as *const _ as usize,
            )
        };
        assert_eq!(a - base, 24 + 16);
        assert_eq!(d - base, 24 + 24);
    }

    #[test]
    fn decodes_a_component_then_a_section() {
        let mut arr = blank();
        arr.ty = REF_ARRAY;
        arr.item_size = 4;
        let idx: [i32; 3] = [3, 1, 2];
        // SAFETY: writing the union members gfortran would write.
        unsafe {
            arr.u.a.mode[0] = MODE_RANGE;
            arr.u.a.dim[0].s = RawRange {
                start: 2,
                end: 8,
                stride: 3,
            };
            arr.u.a.mode[1] = MODE_VECTOR;
            arr.u.a.dim[1].v = RawVector {
                vector: idx.as_ptr() as *const c_void,
                nvec: 3,
                kind: 4,
            };
            arr.u.a.mode[2] = MODE_SINGLE;
            arr.u.a.dim[2].s.start = 7;
        }
        let mut comp = blank();
        comp.ty = REF_COMPONENT;
        comp.item_size = 4;
        comp.u.c = RawComponent {
            offset: 16,
            caf_token_offset: 104,
        };
        comp.next = &arr;
        // SAFETY: a well-formed chain of two.
        let refs = unsafe { decode(&comp) }.unwrap();
        assert_eq!(
            refs,
            vec![
                Ref {
                    part: Part::Component {
                        offset: 16,
                        token_offset: 104
                    },
                    item_size: 4
                },
                Ref {
                    part: Part::Array {
                        dims: vec![
                            Sel::Range {
                                start: 2,
                                end: 8,
                                stride: 3
                            },
                            Sel::Vector(vec![3, 1, 2]),
                            Sel::Single(7)
                        ],
                        described: true
                    },
                    item_size: 4
                }
            ]
        );
    }

    #[test]
    fn bad_chains_name_the_bad_value() {
        let mut r = blank();
        r.ty = 9;
        // SAFETY: one element.
        let e = unsafe { decode(&r) }.unwrap_err();
        assert!(e.contains('9'), "{e}");
        r.ty = REF_ARRAY;
        // SAFETY: writing a mode byte.
        unsafe { r.u.a.mode[0] = 42 };
        // SAFETY: one element.
        let e = unsafe { decode(&r) }.unwrap_err();
        assert!(e.contains("42"), "{e}");
    }
}
