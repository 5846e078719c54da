//! Allocation of a component of another image by assignment
//! (`obj[i]%alloc = ...` where it is unallocated there, or an array of
//! another shape): only the owner can allocate from its heap, so the
//! initiator sends it an on-statement ([`ALLOC_BODY`]) that allocates, sets
//! the component's pointer or descriptor, and tells the component's token.

use super::refs::{self, Ref};
use super::walk::Hole;
use crate::desc::Descriptor;
use crate::token::{Token, TokenKind};
use runtime_shim::GlobalPtr;
use std::ffi::{c_int, c_void};

/// The on-statement that allocates a component on its owner.
pub const ALLOC_BODY: &str = "pgas-caf.byref.allocate-component";

/// What the owner allocates: the component, its token's slot, and the
/// shape (empty for a scalar).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Allocation {
    comp_addr: u64,
    token_slot: u64,
    array: bool,
    elem_len: usize,
    ty: i8,
    /// (lower bound, extent) per dimension.
    dims: Vec<(isize, usize)>,
}

impl Allocation {
    fn bytes(&self) -> usize {
        self.dims.iter().map(|d| d.1).product::<usize>() * self.elem_len
    }

    pub(super) fn encode(&self) -> Vec<u8> {
        let mut w: Vec<u64> = vec![
            self.comp_addr,
            self.token_slot,
            self.array as u64,
            self.elem_len as u64,
            self.ty as u64,
            self.dims.len() as u64,
        ];
        for &(lb, n) in &self.dims {
            w.push(lb as u64);
            w.push(n as u64);
        }
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn decode(b: &[u8]) -> Result<Allocation, String> {
        let w: Vec<u64> = b
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        if w.len() < 6 || w.len() != 6 + 2 * w[5] as usize || w[5] > 15 {
            return Err(format!(
                "a malformed allocation request of {} bytes",
                b.len()
            ));
        }
        Ok(Allocation {
            comp_addr: w[0],
            token_slot: w[1],
            array: w[2] != 0,
            elem_len: w[3] as usize,
            ty: w[4] as i8,
            dims: (0..w[5] as usize)
                .map(|k| (w[6 + 2 * k] as isize, w[7 + 2 * k] as usize))
                .collect(),
        })
    }
}

/// The allocation an assignment needs when `hole` is unallocated (or of
/// another shape): only for the component the chain ends with (a scalar,
/// or an array referenced whole), shaped like the source.
pub(super) fn allocation_for(
    refs: &[Ref],
    hole: Hole,
    src: &[usize],
    ty: c_int,
) -> Option<Allocation> {
    if hole.ref_index + 1 != refs.len() {
        return None;
    }
    let last = &refs[hole.ref_index];
    if !hole.array {
        return matches!(last.part, refs::Part::Component { .. }).then(|| Allocation {
            comp_addr: hole.comp_addr,
            token_slot: hole.token_slot,
            array: false,
            elem_len: last.item_size,
            ty: ty as i8,
            dims: Vec::new(),
        });
    }
    let refs::Part::Array { dims, .. } = &last.part else {
        return None;
    };
    let whole = dims
        .iter()
        .all(|d| matches!(d, refs::Sel::Full { stride: 1 }));
    if !whole || dims.len() != src.len() {
        return None;
    }
    Some(Allocation {
        comp_addr: hole.comp_addr,
        token_slot: hole.token_slot,
        array: true,
        elem_len: last.item_size,
        ty: ty as i8,
        dims: src.iter().map(|&n| (1, n)).collect(),
    })
}

/// The body of [`ALLOC_BODY`] on the owner: empty reply on success, the
/// error's text otherwise.
pub fn alloc_body(ctx: &runtime_shim::OnCtx, args: &[u8]) -> Vec<u8> {
    match Allocation::decode(args).and_then(|a| allocate_here(ctx.rt(), &a)) {
        Ok(()) => Vec::new(),
        Err(e) => e.into_bytes(),
    }
}

/// Allocates a component of this image: fresh zeroed memory of its heap,
/// the component's pointer or descriptor set to it, its token told; the
/// memory it had (an array of another shape) freed.
pub(super) fn allocate_here(rt: &runtime_shim::Runtime, a: &Allocation) -> Result<(), String> {
    let bytes = a.bytes();
    let p = rt
        .alloc::<u8>(bytes.max(1))
        .map_err(|e| format!("allocating {bytes} bytes for a component: {e}"))?
        .addr();
    // SAFETY: a fresh allocation of this image's heap of bytes.max(1)
    // bytes; `comp_addr` and `token_slot` are a component of this image's
    // coarray and its token word, found by the initiator's walk of this
    // image's memory (the program does not touch them in this segment:
    // another image's assignment to them is in it).
    unsafe {
        std::ptr::write_bytes(p as *mut u8, 0, bytes.max(1));
        let old = *(a.comp_addr as *const u64);
        if a.array {
            let d = &mut *(a.comp_addr as *mut Descriptor);
            d.base_addr = p as *mut c_void;
            d.dtype.elem_len = a.elem_len;
            d.dtype.version = 0;
            d.dtype.rank = a.dims.len() as i8;
            d.dtype.ty = a.ty;
            d.dtype.attribute = 0;
            d.span = a.elem_len as isize;
            let (mut stride, mut offset) = (1isize, 0isize);
            for (k, &(lb, n)) in a.dims.iter().enumerate() {
                d.dim[k].lbound = lb;
                d.dim[k].ubound = lb + n as isize - 1;
                d.dim[k].stride = stride;
                offset -= lb * stride;
                stride *= n as isize;
            }
            d.offset = offset;
        } else {
            *(a.comp_addr as *mut u64) = p;
        }
        let slot = a.token_slot as *mut *mut Token;
        if (*slot).is_null() {
            *slot = Box::into_raw(Box::new(Token {
                addrs: Vec::new(),
                size: bytes,
                local: p as *mut u8,
                kind: TokenKind::Data,
                team: None,
                desc: std::ptr::null(),
            }));
        } else {
            let t = &mut **slot;
            t.local = p as *mut u8;
            t.size = bytes;
        }
        if old != 0 {
            let _ = rt.free(GlobalPtr::<u8>::new(rt.here(), old));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::refs::{Part, Sel};
    use super::*;

    fn hole(array: bool, ref_index: usize) -> Hole {
        Hole {
            comp_addr: 0x1000,
            token_slot: 0x1068,
            array,
            ref_index,
        }
    }

    #[test]
    fn allocations_only_for_the_component_the_chain_ends_with() {
        let comp = Ref {
            part: Part::Component {
                offset: 8,
                token_offset: 104,
            },
            item_size: 4,
        };
        let whole = Ref {
            part: Part::Array {
                dims: vec![Sel::Full { stride: 1 }, Sel::Full { stride: 1 }],
                described: true,
            },
            item_size: 8,
        };
        // A scalar at the end of the chain: its item size.
        let a = allocation_for(std::slice::from_ref(&comp), hole(false, 0), &[], 1).unwrap();
        assert_eq!((a.array, a.elem_len, a.bytes()), (false, 4, 4));
        // A scalar on the way to something else: not by assignment.
        assert!(allocation_for(&[comp.clone(), comp.clone()], hole(false, 0), &[], 1).is_none());
        // A whole array: the source's shape, lower bounds 1.
        let refs = vec![comp.clone(), whole.clone()];
        let a = allocation_for(&refs, hole(true, 1), &[3, 2], 3).unwrap();
        assert_eq!(a.dims, vec![(1, 3), (1, 2)]);
        assert_eq!(a.bytes(), 48);
        // A section, or a rank the source does not have: no.
        let section = Ref {
            part: Part::Array {
                dims: vec![Sel::Single(1), Sel::Full { stride: 1 }],
                described: true,
            },
            item_size: 8,
        };
        assert!(allocation_for(&[comp.clone(), section], hole(true, 1), &[3], 3).is_none());
        assert!(allocation_for(&refs, hole(true, 1), &[6], 3).is_none());
        // The request survives the wire; a torn one is refused.
        assert_eq!(Allocation::decode(&a.encode()).unwrap(), a);
        let e = Allocation::decode(&a.encode()[..40]).unwrap_err();
        assert!(e.contains("40 bytes"), "{e}");
    }
}
