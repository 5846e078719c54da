//! The walk of a reference chain over one image's memory: from the
//! coarray's address there to the address of every element the chain
//! references, in array element order, and the shape they form.
//!
//! Whatever the chain passes through on the way (a descriptor of an
//! allocatable component, the pointer of an allocatable scalar) is read
//! from that image through [`Mem`], so the walk sees the remote image's
//! allocation status and bounds, not this image's. Written against a trait
//! so the unit tests walk this process's memory.

use super::refs::{Part, Ref, Sel};
use crate::desc::Dim;

/// Reads bytes of one image's memory.
pub trait Mem {
    /// Fills `buf` from address `addr` of the image.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), String>;
}

/// An owned copy of what a descriptor says, wherever it was read.
#[derive(Clone, Debug, Default)]
pub struct DescCopy {
    /// `base_addr` (an address on the image the descriptor came from).
    pub base_addr: u64,
    /// The bounds and strides (in elements) of each dimension.
    pub dims: Vec<Dim>,
}

/// Bytes of a descriptor before its dimensions (base_addr, offset, dtype,
/// span).
const DESC_HEADER: usize = 40;
/// Bytes of one dimension.
const DESC_DIM: usize = 24;

impl DescCopy {
    /// Reads a descriptor of `rank` dimensions at `addr` of an image.
    pub fn read(mem: &impl Mem, addr: u64, rank: usize) -> Result<DescCopy, String> {
        let mut b = vec![0u8; DESC_HEADER + rank * DESC_DIM];
        mem.read(addr, &mut b)?;
        let word = |o: usize| i64::from_ne_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        let dims = (0..rank)
            .map(|k| {
                let o = DESC_HEADER + k * DESC_DIM;
                Dim {
                    stride: word(o) as isize,
                    lbound: word(o + 8) as isize,
                    ubound: word(o + 16) as isize,
                }
            })
            .collect();
        Ok(DescCopy {
            base_addr: word(0) as u64,
            dims,
        })
    }
}

/// One dimension of the referenced elements' shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Elements along it.
    pub n: usize,
    /// Its lower bound if the result keeps the array's (a full dimension of
    /// a described array), else 1.
    pub lbound: isize,
}

/// Where a chain leads on one image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// Address of each element, in array element order.
    pub elems: Vec<u64>,
    /// Shape (dimensions that are not a single index).
    pub extents: Vec<Extent>,
    /// Bytes of one element (the last reference's item size).
    pub elem_len: usize,
    /// When the chain ends with an array reference through one allocatable
    /// component: that component (so it can be reallocated).
    pub tail: Option<Hole>,
}

/// An allocatable component on the image: where it is (its pointer or
/// descriptor), where its token is, and which reference reached it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hole {
    /// Address of the component (a scalar's pointer, an array's
    /// descriptor).
    pub comp_addr: u64,
    /// Address of the word holding the component's token.
    pub token_slot: u64,
    /// The component is an array (a descriptor).
    pub array: bool,
    /// Index in the chain of the reference that found it unallocated (or,
    /// in [`Located::tail`], of the array reference through it).
    pub ref_index: usize,
}

/// Why a walk stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WalkError {
    /// An allocatable component on the way is not allocated on the image
    /// (where it is, when the walk was on one element).
    NotAllocated(String, Option<Hole>),
    /// Anything else (a bad chain, an index out of bounds, a failed read).
    Bad(String),
}

impl std::fmt::Display for WalkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WalkError::NotAllocated(m, _) | WalkError::Bad(m) => f.write_str(m),
        }
    }
}

/// The indices one dimension of a described array selects.
fn indices(sel: &Sel, d: &Dim, k: usize) -> Result<Vec<isize>, WalkError> {
    let (lb, ub) = (d.lbound, d.ubound);
    let range = |start: isize, end: isize, stride: isize| {
        let mut v = Vec::new();
        let mut i = start;
        while (stride > 0 && i <= end) || (stride < 0 && i >= end) {
            v.push(i);
            i += stride;
        }
        v
    };
    let v: Vec<isize> = match sel {
        Sel::Full { stride } if *stride > 0 => range(lb, ub, *stride),
        Sel::Full { stride } => range(ub, lb, *stride),
        Sel::Range { start, end, stride } => range(*start, *end, *stride),
        Sel::Single(i) => vec![*i],
        Sel::OpenEnd { start, stride } => range(*start, if *stride > 0 { ub } else { lb }, *stride),
        Sel::OpenStart { end, stride } => range(if *stride > 0 { lb } else { ub }, *end, *stride),
        Sel::Vector(v) => v.iter().map(|&i| i as isize).collect(),
    };
    if let Some(bad) = v.iter().find(|&&i| i < lb || i > ub) {
        return Err(WalkError::Bad(format!(
            "index {bad} out of bounds {lb}:{ub} in dimension {}",
            k + 1
        )));
    }
    Ok(v)
}

/// The 0-based element offsets one dimension of an array without a
/// descriptor selects (gfortran pre-multiplies them by the dimension's
/// stride).
fn static_offsets(sel: &Sel, k: usize) -> Result<Vec<isize>, WalkError> {
    Ok(match sel {
        Sel::Single(i) => vec![*i],
        Sel::Range { start, end, stride } => {
            let mut v = Vec::new();
            let mut i = *start;
            while (*stride > 0 && i <= *end) || (*stride < 0 && i >= *end) {
                v.push(i);
                i += stride;
            }
            v
        }
        Sel::Vector(v) => v.iter().map(|&i| i as isize).collect(),
        other => {
            return Err(WalkError::Bad(format!(
                "{other:?} in dimension {} of an array without a descriptor",
                k + 1
            )))
        }
    })
}

/// All combinations of per-dimension byte offsets, first dimension fastest.
fn combine(per_dim: &[Vec<i64>]) -> Vec<i64> {
    let mut out = vec![0i64];
    for offs in per_dim {
        let mut next = Vec::with_capacity(out.len() * offs.len());
        for &o in offs {
            for &b in &out {
                next.push(b + o);
            }
        }
        out = next;
    }
    // `next` put the new dimension outermost: the first dimension stays
    // fastest.
    out
}

/// Where the token of the component at `comp_addr` (at `offset` in its
/// derived type) is: `token_offset` bytes from the type's start.
fn token_slot(comp_addr: u64, offset: isize, token_offset: isize) -> u64 {
    comp_addr
        .wrapping_sub(offset as u64)
        .wrapping_add(token_offset as u64)
}

fn read_word(mem: &impl Mem, addr: u64) -> Result<u64, WalkError> {
    let mut b = [0u8; 8];
    mem.read(addr, &mut b).map_err(WalkError::Bad)?;
    Ok(u64::from_ne_bytes(b))
}

/// Walks `refs` on an image from the coarray's address `start` there.
/// `top` is the descriptor the coarray was registered with (an allocatable
/// coarray's; its bounds hold on every image), used when the chain starts
/// with an array reference.
pub fn walk(
    mem: &impl Mem,
    start: u64,
    top: Option<&DescCopy>,
    refs: &[Ref],
) -> Result<Located, WalkError> {
    let mut elems = vec![start];
    let mut extents: Vec<Extent> = Vec::new();
    let mut tail = None;
    // Whether `elems` are addresses of descriptors (after a component
    // followed by a described array).
    let mut at_descriptor = false;
    for (i, r) in refs.iter().enumerate() {
        let next_described = matches!(
            refs.get(i + 1).map(|n| &n.part),
            Some(Part::Array {
                described: true,
                ..
            })
        );
        match &r.part {
            Part::Component {
                offset,
                token_offset,
            } => {
                for e in elems.iter_mut() {
                    *e = e.wrapping_add(*offset as u64);
                }
                if next_described {
                    at_descriptor = true;
                } else if *token_offset != 0 {
                    // An allocatable scalar holds a pointer; an allocatable
                    // array referenced no further (ALLOCATED(x[i]%a)) its
                    // descriptor, whose first word is the data pointer.
                    let one = elems.len() == 1;
                    for e in elems.iter_mut() {
                        let p = read_word(mem, *e)?;
                        if p == 0 {
                            let hole = one.then(|| Hole {
                                comp_addr: *e,
                                token_slot: token_slot(*e, *offset, *token_offset),
                                array: false,
                                ref_index: i,
                            });
                            return Err(WalkError::NotAllocated(
                                format!(
                                    "the allocatable component at byte {offset} is not \
                                     allocated"
                                ),
                                hole,
                            ));
                        }
                        *e = p;
                    }
                }
            }
            Part::Array {
                dims,
                described: true,
            } => {
                let rank = dims.len();
                let mut out = Vec::new();
                let mut shape = Vec::new();
                // The component this reference goes through, if any.
                let hole_at =
                    |e: u64| match (i.checked_sub(1).map(|p| &refs[p].part), at_descriptor) {
                        (
                            Some(Part::Component {
                                offset,
                                token_offset,
                            }),
                            true,
                        ) if *token_offset != 0 => Some(Hole {
                            comp_addr: e,
                            token_slot: token_slot(e, *offset, *token_offset),
                            array: true,
                            ref_index: i,
                        }),
                        _ => None,
                    };
                tail = if elems.len() == 1 {
                    hole_at(elems[0])
                } else {
                    None
                };
                for (n, &e) in elems.iter().enumerate() {
                    let (d, base) = if at_descriptor {
                        let d = DescCopy::read(mem, e, rank).map_err(WalkError::Bad)?;
                        if d.base_addr == 0 {
                            return Err(WalkError::NotAllocated(
                                "the allocatable array component is not allocated".into(),
                                if elems.len() == 1 { hole_at(e) } else { None },
                            ));
                        }
                        let b = d.base_addr;
                        (d, b)
                    } else if i == 0 {
                        let Some(t) = top else {
                            return Err(WalkError::Bad(
                                "an array reference into a coarray registered without a \
                                 descriptor"
                                    .into(),
                            ));
                        };
                        (t.clone(), e)
                    } else {
                        return Err(WalkError::Bad(format!(
                            "array reference {} follows no component",
                            i + 1
                        )));
                    };
                    if d.dims.len() < rank {
                        return Err(WalkError::Bad(format!(
                            "an array reference of rank {rank} into an array of rank {}",
                            d.dims.len()
                        )));
                    }
                    let mut per_dim = Vec::with_capacity(rank);
                    let mut this_shape = Vec::new();
                    for (k, sel) in dims.iter().enumerate() {
                        let dm = d.dims[k];
                        let idx = indices(sel, &dm, k)?;
                        if !matches!(sel, Sel::Single(_)) {
                            this_shape.push(Extent {
                                n: idx.len(),
                                lbound: if matches!(sel, Sel::Full { stride: 1 }) {
                                    dm.lbound
                                } else {
                                    1
                                },
                            });
                        }
                        per_dim.push(
                            idx.iter()
                                .map(|&x| ((x - dm.lbound) * dm.stride) as i64 * r.item_size as i64)
                                .collect::<Vec<i64>>(),
                        );
                    }
                    if n == 0 {
                        shape = this_shape;
                    }
                    out.extend(
                        combine(&per_dim)
                            .into_iter()
                            .map(|o| base.wrapping_add(o as u64)),
                    );
                }
                extents.extend(shape);
                elems = out;
            }
            Part::Array {
                dims,
                described: false,
            } => {
                let mut per_dim = Vec::with_capacity(dims.len());
                for (k, sel) in dims.iter().enumerate() {
                    let offs = static_offsets(sel, k)?;
                    if !matches!(sel, Sel::Single(_)) {
                        extents.push(Extent {
                            n: offs.len(),
                            lbound: 1,
                        });
                    }
                    per_dim.push(
                        offs.iter()
                            .map(|&o| o as i64 * r.item_size as i64)
                            .collect::<Vec<i64>>(),
                    );
                }
                let offs = combine(&per_dim);
                elems = elems
                    .iter()
                    .flat_map(|&e| offs.iter().map(move |&o| e.wrapping_add(o as u64)))
                    .collect();
            }
        }
        if !matches!(r.part, Part::Component { .. }) {
            at_descriptor = false;
        }
        if i + 1 < refs.len()
            && !matches!(
                r.part,
                Part::Array {
                    described: true,
                    ..
                }
            )
        {
            tail = None;
        }
    }
    let elem_len = refs.last().map_or(0, |r| r.item_size);
    if !matches!(
        refs.last().map(|r| &r.part),
        Some(Part::Array {
            described: true,
            ..
        })
    ) {
        tail = None;
    }
    Ok(Located {
        elems,
        extents,
        elem_len,
        tail,
    })
}

/// Runs of consecutive elements: `(first element's index, count)` such
/// that the run's elements are adjacent in memory, in increasing address
/// order (one transfer each).
pub fn runs(elems: &[u64], elem_len: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, &a) in elems.iter().enumerate() {
        if let Some(last) = out.last_mut() {
            let end = elems[last.0] + (last.1 * elem_len) as u64;
            if a == end {
                last.1 += 1;
                continue;
            }
        }
        out.push((i, 1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process's memory.
    struct Local;
    impl Mem for Local {
        fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), String> {
            // SAFETY: the tests pass addresses of live buffers of theirs.
            unsafe {
                std::ptr::copy_nonoverlapping(addr as *const u8, buf.as_mut_ptr(), buf.len())
            };
            Ok(())
        }
    }

    /// A gfortran descriptor of a rank-2 i32 array with bounds lb.
    #[repr(C)]
    struct Desc2 {
        base: u64,
        offset: i64,
        dtype: [u64; 2],
        span: i64,
        dims: [[i64; 3]; 2],
    }

    fn comp(offset: isize, allocatable: bool) -> Ref {
        Ref {
            part: Part::Component {
                offset,
                token_offset: if allocatable { 200 } else { 0 },
            },
            item_size: 4,
        }
    }

    /// The triplet `start:end:stride` of a dimension.
    fn triplet(start: isize, end: isize, stride: isize) -> Sel {
        Sel::Range { start, end, stride }
    }

    /// An array reference: `dims`, through a descriptor when `described`.
    fn arr(dims: Vec<Sel>, described: bool, item_size: usize) -> Ref {
        Ref {
            part: Part::Array { dims, described },
            item_size,
        }
    }

    #[test]
    fn allocatable_component_section_through_the_descriptor() {
        // matrix(10, 7) with bounds (0:9, 2:8), column-major.
        let data: Vec<i32> = (0..70).collect();
        let d = Desc2 {
            base: data.as_ptr() as u64,
            offset: 0,
            dtype: [4, 0],
            span: 4,
            dims: [[1, 0, 9], [10, 2, 8]],
        };
        // A derived type with the descriptor at byte 16.
        let mut obj = [0u8; 16 + std::mem::size_of::<Desc2>()];
        // SAFETY: copying the descriptor's bytes into the buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(
                &d as *const Desc2 as *const u8,
                obj.as_mut_ptr().add(16),
                std::mem::size_of::<Desc2>(),
            )
        };
        let refs = vec![
            comp(16, true),
            arr(vec![triplet(1, 7, 4), triplet(6, 2, -2)], true, 4),
        ];
        let l = walk(&Local, obj.as_ptr() as u64, None, &refs).unwrap();
        let got: Vec<i32> = l
            .elems
            .iter()
            // SAFETY: addresses into `data`.
            .map(|&a| unsafe { *(a as *const i32) })
            .collect();
        // Rows 1, 5; columns 6, 4, 2 (column c starts at (c-2)*10).
        assert_eq!(got, vec![41, 45, 21, 25, 1, 5]);
        assert_eq!(
            l.extents,
            vec![Extent { n: 2, lbound: 1 }, Extent { n: 3, lbound: 1 }]
        );
        // A full dimension keeps the array's lower bound.
        let full = vec![
            comp(16, true),
            arr(vec![Sel::Single(3), Sel::Full { stride: 1 }], true, 4),
        ];
        let l = walk(&Local, obj.as_ptr() as u64, None, &full).unwrap();
        assert_eq!(l.extents, vec![Extent { n: 7, lbound: 2 }]);
        assert_eq!(l.elems.len(), 7);
        assert_eq!(l.elems[1], data.as_ptr() as u64 + 4 * 13);
        // Out of bounds names the index.
        let bad = vec![
            comp(16, true),
            arr(vec![Sel::Single(10), Sel::Full { stride: 1 }], true, 4),
        ];
        match walk(&Local, obj.as_ptr() as u64, None, &bad) {
            Err(WalkError::Bad(m)) => assert!(m.contains("index 10"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unallocated_components_are_reported_as_such() {
        let obj = [0u64; 12];
        // Scalar allocatable (a null pointer at byte 8).
        let r = walk(&Local, obj.as_ptr() as u64, None, &[comp(8, true)]);
        let base = obj.as_ptr() as u64;
        assert_eq!(
            r,
            Err(WalkError::NotAllocated(
                "the allocatable component at byte 8 is not allocated".into(),
                Some(Hole {
                    comp_addr: base + 8,
                    token_slot: base + 200,
                    array: false,
                    ref_index: 0
                })
            ))
        );
        // Array component (a descriptor with a null base at byte 0).
        let r = walk(
            &Local,
            obj.as_ptr() as u64,
            None,
            &[comp(0, true), arr(vec![Sel::Full { stride: 1 }], true, 4)],
        );
        match r {
            Err(WalkError::NotAllocated(_, Some(h))) => {
                assert_eq!(
                    (h.comp_addr, h.token_slot, h.array, h.ref_index),
                    (base, base + 200, true, 1)
                )
            }
            other => panic!("{other:?}"),
        }
        // An allocated scalar: the walk follows the pointer.
        let x = 42i32;
        let holder = [0u64, &x as *const i32 as u64];
        let l = walk(&Local, holder.as_ptr() as u64, None, &[comp(8, true)]).unwrap();
        assert_eq!(l.elems, vec![&x as *const i32 as u64]);
        assert!(l.extents.is_empty());
    }

    #[test]
    fn static_arrays_use_premultiplied_offsets() {
        // volume(2,5,3) at byte 4 of the type: volume(:, 2:4:2, 3) is
        // dims (0..1 step 1), (2..6 step 4), single 20 in gfortran's terms.
        let refs = vec![
            comp(4, false),
            arr(
                vec![triplet(0, 1, 1), triplet(2, 6, 4), Sel::Single(20)],
                false,
                4,
            ),
        ];
        let l = walk(&Local, 1000, None, &refs).unwrap();
        let offs: Vec<u64> = l.elems.iter().map(|a| (a - 1004) / 4).collect();
        assert_eq!(offs, vec![22, 23, 26, 27]);
        assert_eq!(l.tail, None);
        assert_eq!(l.extents.len(), 2);
    }

    #[test]
    fn top_level_arrays_use_the_registered_descriptor() {
        let top = DescCopy {
            base_addr: 0,
            dims: vec![Dim {
                stride: 1,
                lbound: -2,
                ubound: 2,
            }],
        };
        let refs = vec![arr(vec![Sel::Single(1)], true, 120), comp(8, false)];
        // The image's base is `start`, not the local descriptor's base.
        let l = walk(&Local, 5000, Some(&top), &refs).unwrap();
        assert_eq!(l.elems, vec![5000 + 3 * 120 + 8]);
        assert!(walk(&Local, 5000, None, &refs).is_err());
    }

    #[test]
    fn full_dimensions_take_their_stride() {
        let top = DescCopy {
            base_addr: 0,
            dims: vec![Dim {
                stride: 1,
                lbound: 1,
                ubound: 5,
            }],
        };
        let at = |stride| {
            let refs = vec![arr(vec![Sel::Full { stride }], true, 4)];
            let l = walk(&Local, 0, Some(&top), &refs).unwrap();
            l.elems.iter().map(|a| a / 4).collect::<Vec<u64>>()
        };
        assert_eq!(at(1), vec![0, 1, 2, 3, 4]);
        assert_eq!(at(2), vec![0, 2, 4]);
        assert_eq!(at(-2), vec![4, 2, 0]);
    }

    #[test]
    fn runs_merge_adjacent_elements() {
        assert_eq!(runs(&[0, 4, 8, 16, 20, 8], 4), vec![(0, 3), (3, 2), (5, 1)]);
        assert_eq!(runs(&[], 4), vec![]);
    }
}
