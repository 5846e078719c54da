//! gfortran's array descriptor (GCC 8 to 14: `gfc_descriptor_t` of
//! libgfortran.h) and the walk over the elements it describes.
//!
//! A descriptor holds the address of element (lbound, lbound, ...) as
//! `base_addr + offset + sum(lbound_k * stride_k)` elements; strides are in
//! elements of `span` bytes (`elem_len` for plain arrays, larger for a
//! section of a component). gfortran passes scalars with rank 0.

use std::ffi::c_void;

/// `BT_INTEGER` and the other basic types of `dtype.type`.
pub const BT_UNKNOWN: i8 = 0;
/// `integer`
pub const BT_INTEGER: i8 = 1;
/// `logical`
pub const BT_LOGICAL: i8 = 2;
/// `real`
pub const BT_REAL: i8 = 3;
/// `complex`
pub const BT_COMPLEX: i8 = 4;
/// derived type
pub const BT_DERIVED: i8 = 5;
/// `character`
pub const BT_CHARACTER: i8 = 6;
/// `class(...)`
pub const BT_CLASS: i8 = 7;

/// The most dimensions (GFC_MAX_DIMENSIONS).
pub const MAX_DIMS: usize = 15;

/// `dtype_type`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DType {
    /// Bytes of one element.
    pub elem_len: usize,
    /// Descriptor version (0).
    pub version: i32,
    /// Rank (0: scalar).
    pub rank: i8,
    /// One of the `BT_*`.
    pub ty: i8,
    /// Attributes (unused here).
    pub attribute: i16,
}

/// `descriptor_dimension`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Dim {
    /// Stride in elements of `span` bytes.
    pub stride: isize,
    /// Lower bound.
    pub lbound: isize,
    /// Upper bound.
    pub ubound: isize,
}

impl Dim {
    /// Elements along this dimension (0 if empty).
    pub fn extent(&self) -> usize {
        (self.ubound - self.lbound + 1).max(0) as usize
    }
}

/// `gfc_descriptor_t` with its dimensions (gfortran allocates `rank` of
/// them after the header; reading past `rank` is never done).
#[repr(C)]
pub struct Descriptor {
    /// Address of the data.
    pub base_addr: *mut c_void,
    /// Offset (in elements) such that base_addr + offset + sum(i_k * stride_k)
    /// is element (i_1, ..., i_r).
    pub offset: isize,
    /// Element type and size, rank.
    pub dtype: DType,
    /// Bytes between consecutive elements of stride 1.
    pub span: isize,
    /// The dimensions (only the first `rank` exist).
    pub dim: [Dim; MAX_DIMS],
}

/// An owned copy of what a descriptor says (safe to pass around).
#[derive(Clone, Debug)]
pub struct Shape {
    /// Address of the first element (all indices at lbound).
    pub base: *mut u8,
    /// Bytes of one element.
    pub elem_len: usize,
    /// `BT_*`.
    pub ty: i8,
    /// Byte stride and extent per dimension, first dimension fastest.
    pub dims: Vec<(isize, usize)>,
}

impl Shape {
    /// Reads a descriptor.
    ///
    /// # Safety
    /// `d` points to a valid gfortran descriptor whose `rank` dimensions
    /// are initialised.
    pub unsafe fn of(d: *const Descriptor) -> Shape {
        // SAFETY: valid descriptor (caller).
        let d = unsafe { &*d };
        let rank = (d.dtype.rank.max(0) as usize).min(MAX_DIMS);
        let elem_len = d.dtype.elem_len;
        // gfortran sets span for every descriptor it builds; 0 only in
        // hand-made ones, where elements are contiguous.
        let span = if d.span > 0 {
            d.span
        } else {
            elem_len as isize
        };
        let mut first = 0isize;
        let mut dims = Vec::with_capacity(rank);
        for k in 0..rank {
            let dm = d.dim[k];
            first += dm.lbound * dm.stride;
            dims.push((dm.stride * span, dm.extent()));
        }
        // gfortran leaves a scalar's offset unset: its data is at base_addr.
        let base = if rank == 0 {
            d.base_addr as *mut u8
        } else {
            (d.base_addr as *mut u8).wrapping_offset((d.offset + first) * span)
        };
        Shape {
            base,
            elem_len,
            ty: d.dtype.ty,
            dims,
        }
    }

    /// Rank.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of elements (1 for a scalar).
    pub fn len(&self) -> usize {
        self.dims.iter().map(|d| d.1).product()
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the elements are contiguous in array element order.
    pub fn is_contiguous(&self) -> bool {
        let mut expect = self.elem_len as isize;
        for &(stride, extent) in &self.dims {
            if extent > 1 && stride != expect {
                return false;
            }
            expect *= extent as isize;
        }
        true
    }

    /// The byte offsets from `base` of every element, in array element
    /// order (first dimension fastest).
    pub fn offsets(&self) -> Vec<isize> {
        let n = self.len();
        let mut out = Vec::with_capacity(n);
        if n == 0 {
            return out;
        }
        let r = self.rank();
        let mut idx = vec![0usize; r];
        let mut off = 0isize;
        loop {
            out.push(off);
            let mut k = 0;
            loop {
                if k == r {
                    return out;
                }
                idx[k] += 1;
                off += self.dims[k].0;
                if idx[k] < self.dims[k].1 {
                    break;
                }
                off -= self.dims[k].0 * self.dims[k].1 as isize;
                idx[k] = 0;
                k += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_walk_first_dimension_fastest() {
        let s = Shape {
            base: std::ptr::null_mut(),
            elem_len: 4,
            ty: BT_INTEGER,
            dims: vec![(8, 3), (40, 2)],
        };
        assert_eq!(s.offsets(), vec![0, 8, 16, 40, 48, 56]);
        assert!(!s.is_contiguous());
        let c = Shape {
            dims: vec![(4, 3), (12, 2)],
            ..s.clone()
        };
        assert!(c.is_contiguous());
        let neg = Shape {
            dims: vec![(-4, 3)],
            ..s
        };
        assert_eq!(neg.offsets(), vec![0, -4, -8]);
    }

    #[test]
    fn scalar_has_one_element() {
        let s = Shape {
            base: std::ptr::null_mut(),
            elem_len: 8,
            ty: BT_REAL,
            dims: vec![],
        };
        assert_eq!(s.len(), 1);
        assert_eq!(s.offsets(), vec![0]);
        assert!(s.is_contiguous());
    }
}
