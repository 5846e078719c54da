//! Global pointers: an address in some locale's registered heap, typed.
//!
//! Exists because a PGAS program names remote memory by (locale, address);
//! the type parameter keeps element sizes and offsets straight. A global
//! pointer is plain data (it can travel in on-statement arguments) and says
//! nothing about whether the memory is still allocated: the comm layer checks
//! every access against the target's registered heap and returns an error
//! naming the address when it is outside.

use crate::error::{Error, Result};
use crate::pod::Pod;
use crate::view::LocalView;
use comm_ofi::{GlobalAddr, Locale};
use std::marker::PhantomData;

/// A typed address in some locale's registered heap.
pub struct GlobalPtr<T> {
    addr: GlobalAddr,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for GlobalPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for GlobalPtr<T> {}
impl<T> PartialEq for GlobalPtr<T> {
    fn eq(&self, o: &Self) -> bool {
        self.addr == o.addr
    }
}
impl<T> Eq for GlobalPtr<T> {}
impl<T> std::hash::Hash for GlobalPtr<T> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.addr.hash(h)
    }
}

impl<T> std::fmt::Debug for GlobalPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GlobalPtr({}:{:#x})", self.addr.locale, self.addr.addr)
    }
}

impl<T> std::fmt::Display for GlobalPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{:#x}", self.addr.locale, self.addr.addr)
    }
}

impl<T: Pod> GlobalPtr<T> {
    /// The pointer to `addr` on `locale`.
    pub fn new(locale: Locale, addr: u64) -> GlobalPtr<T> {
        GlobalPtr::from_addr(GlobalAddr::new(locale, addr))
    }

    /// From the comm layer's untyped address.
    pub fn from_addr(addr: GlobalAddr) -> GlobalPtr<T> {
        GlobalPtr {
            addr,
            _t: PhantomData,
        }
    }

    /// The locale owning the memory.
    pub fn locale(self) -> Locale {
        self.addr.locale
    }

    /// The virtual address on that locale.
    pub fn addr(self) -> u64 {
        self.addr.addr
    }

    /// The untyped address.
    pub fn global_addr(self) -> GlobalAddr {
        self.addr
    }

    /// The pointer `elems` elements further on (the comm layer checks the
    /// result against the heap when it is used).
    #[allow(clippy::should_implement_trait)] // named like `<*const T>::add`, on purpose
    pub fn add(self, elems: usize) -> GlobalPtr<T> {
        let bytes = (elems as u64).wrapping_mul(std::mem::size_of::<T>() as u64);
        GlobalPtr::new(self.addr.locale, self.addr.addr.wrapping_add(bytes))
    }

    /// The same address seen as another element type.
    pub fn cast<U: Pod>(self) -> GlobalPtr<U> {
        GlobalPtr::from_addr(self.addr)
    }
}

/// One allocation of `len` elements on every locale (the building block of a
/// distributed array), made collectively by [`crate::Runtime::alloc_all`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dist<T> {
    ptrs: Vec<GlobalPtr<T>>,
    len: usize,
    here: Locale,
}

impl<T: Pod> Dist<T> {
    pub(crate) fn new(ptrs: Vec<GlobalPtr<T>>, len: usize, here: Locale) -> Dist<T> {
        Dist { ptrs, len, here }
    }

    /// Elements per locale.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether each locale's part is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of locales.
    pub fn num_locales(&self) -> usize {
        self.ptrs.len()
    }

    /// The part on `locale`.
    pub fn at(&self, locale: Locale) -> Result<GlobalPtr<T>> {
        self.ptrs.get(locale).copied().ok_or(Error::InvalidLocale {
            locale: locale as i64,
            num_locales: self.ptrs.len(),
        })
    }

    /// The part on this locale.
    pub fn local(&self) -> GlobalPtr<T> {
        self.ptrs[self.here]
    }

    /// This locale's part, read and written by value with no `unsafe`: a
    /// [`LocalView`] borrowing this `Dist` (what a racing remote write
    /// means for it: [`LocalView`]).
    pub fn local_view(&self) -> LocalView<'_, T> {
        LocalView::new(self.local().addr(), self.len)
    }

    /// Elements in all (every locale's part: `len() * num_locales()`).
    pub fn global_len(&self) -> usize {
        self.len * self.ptrs.len()
    }

    /// The pointer to element `i` of the distributed array that the parts
    /// form in locale order (block distribution: elements
    /// `l * len() .. (l + 1) * len()` are on locale `l`). An error names `i`
    /// if it is not below [`Dist::global_len`].
    pub fn at_global(&self, i: usize) -> Result<GlobalPtr<T>> {
        if i >= self.global_len() {
            return Err(Error::InvalidLength {
                what: "global index",
                len: i as u64,
                reason: format!(
                    "the distributed array has {} elements ({} locales x {})",
                    self.global_len(),
                    self.ptrs.len(),
                    self.len
                ),
            });
        }
        Ok(self.ptrs[i / self.len].add(i % self.len))
    }

    /// Every locale's part, by locale.
    pub fn parts(&self) -> &[GlobalPtr<T>] {
        &self.ptrs
    }

    /// This locale's part as a slice, read directly (zero-copy; the safe
    /// form is [`Dist::local_view`]).
    ///
    /// # Safety
    /// No task anywhere may write this locale's part (by PUT, atomic or a
    /// local store) while the slice lives: the program's synchronisation
    /// must order every such write before the call, and every later one
    /// after the slice is gone (for instance: between two barriers in which
    /// only reads happen). Remote writes are a data race otherwise.
    pub unsafe fn local_slice(&self) -> &[T] {
        let p = self.local();
        // SAFETY: the part is `len` elements of this locale's registered
        // heap (made by alloc_all / alloc_sym, which outlive nothing but the
        // process); no concurrent writer by the caller's contract.
        unsafe { std::slice::from_raw_parts(p.addr() as *const T, self.len) }
    }

    /// This locale's part as a mutable slice, written directly.
    ///
    /// # Safety
    /// No task anywhere may read or write this locale's part in any other
    /// way while the slice lives (see [`Dist::local_slice`]), and only one
    /// such slice may exist at a time.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn local_slice_mut(&self) -> &mut [T] {
        let p = self.local();
        // SAFETY: as above; exclusive by the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(p.addr() as *mut T, self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_display() {
        let p = GlobalPtr::<u64>::new(1, 0x1000);
        assert_eq!(p.add(3).addr(), 0x1018);
        assert_eq!(p.cast::<u8>().add(3).addr(), 0x1003);
        assert_eq!(p.to_string(), "1:0x1000");
        let d = Dist::new(vec![p, p.add(1)], 1, 0);
        assert_eq!(d.at(1).unwrap(), p.add(1));
        let e = d.at(2).unwrap_err().to_string();
        assert!(e.contains("locale 2"), "{e}");
        let d = Dist::new(vec![p, GlobalPtr::new(1, 0x9000)], 3, 0);
        assert_eq!(d.global_len(), 6);
        assert_eq!(d.at_global(0).unwrap(), p);
        assert_eq!(d.at_global(2).unwrap(), p.add(2));
        assert_eq!(d.at_global(4).unwrap(), GlobalPtr::new(1, 0x9008));
        let e = d.at_global(6).unwrap_err().to_string();
        assert!(e.contains("6") && e.contains("2 locales x 3"), "{e}");
    }
}
