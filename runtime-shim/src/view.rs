//! The safe view of this locale's part of a [`Dist`](crate::Dist): [`LocalView`], a
//! slice of [`LocalCell`]s that copy values in and out.
//!
//! Exists because the local part is memory that others write without Rust
//! knowing: PUTs and atomics from any locale (the NIC, or a co-located
//! locale's process through the mapped path) and this locale's own tasks
//! through [`crate::GlobalPtr`]s, which are `Copy` and borrow nothing. A
//! `&[T]` over it would promise the compiler that the memory does not
//! change while the reference lives, and no borrow of the `Dist` can make
//! that promise true: the writers do not go through the `Dist`. So the safe
//! view never hands out a reference to a `T`; each element is a cell read
//! and written by value (a volatile copy, never cached or elided), exactly
//! as a local GET or PUT of one element would be, without the call.
//!
//! The contract, in the MCM's terms: a data-race-free program (every write
//! of an element ordered before the reads of it by a barrier, a lock, a
//! task join or a flag with its boundary) reads exactly what was written.
//! A read racing with a write reads an unspecified value, possibly a mix of
//! the old and new bytes, which is still a valid `T` because `T` is
//! [`Pod`] (every bit pattern is a value). Nothing else can happen: no
//! reference outlives a write, and the view borrows the `Dist`, so it cannot
//! outlive the `Dist` it came from (freeing takes the `Dist` by value); the
//! registered heap itself stays mapped until the process ends.
//!
//! The zero-copy `&[T]` / `&mut [T]` forms remain, `unsafe`, as
//! [`Dist::local_slice`](crate::Dist::local_slice) and
//! [`Dist::local_slice_mut`](crate::Dist::local_slice_mut): their caller
//! promises that no write happens while the slice lives.

use crate::pod::Pod;
use std::cell::UnsafeCell;

/// One element of this locale's part of a [`Dist`](crate::Dist), read and written by
/// value ([`LocalCell::get`], [`LocalCell::set`]). Only ever seen behind a
/// [`LocalView`].
#[repr(transparent)]
pub struct LocalCell<T>(UnsafeCell<T>);

// SAFETY: a LocalCell is only reached through a LocalView over registered
// heap memory, which other threads and processes write anyway (see the
// module comment); every access is a whole-value volatile copy of a Pod
// value, so a racing access reads some valid T and never forms a reference
// to the element. T: Pod is Send + Sync.
unsafe impl<T: Pod> Sync for LocalCell<T> {}

impl<T: Pod> LocalCell<T> {
    /// The element's value now (a fresh load; see [`LocalView`] for what a
    /// racing write means).
    pub fn get(&self) -> T {
        // SAFETY: the cell is an aligned element of this locale's part (the
        // view checked the part's alignment), readable for the process's
        // life; any bytes are a valid T (Pod).
        unsafe { std::ptr::read_volatile(self.0.get()) }
    }

    /// Stores `v` into the element (a local store: visible to other locales
    /// after the next boundary, as a local store of a task is).
    pub fn set(&self, v: T) {
        // SAFETY: as in `get`; the memory is writable registered heap and no
        // reference to the element exists (cells hand out values only).
        unsafe { std::ptr::write_volatile(self.0.get(), v) }
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for LocalCell<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// This locale's part of a [`Dist`](crate::Dist), borrowed from it
/// ([`Dist::local_view`](crate::Dist::local_view)):
/// derefs to `[LocalCell<T>]`, so `view.len()`, `view[i].get()`,
/// `view[i].set(v)` and `view.iter()` work as on a slice, and
/// [`LocalView::to_vec`] / [`LocalView::copy_from_slice`] copy the whole
/// part. What a racing remote write means: the module comment of
/// `runtime_shim::view`, in short: data-race-free programs read what was
/// written; a racing read reads some valid `T`.
///
/// ```no_run
/// let rt = runtime_shim::init()?;
/// let counts = rt.alloc_all::<u64>(4)?;
/// let mine = counts.local_view();
/// mine.copy_from_slice(&[rt.here() as u64; 4]);   // local stores, no unsafe
/// mine[0].set(mine[1].get() + 1);
/// rt.barrier()?;                                  // now visible everywhere
/// let total: u64 = counts.local_view().iter().map(|c| c.get()).sum();
/// assert_eq!(total, 4 * rt.here() as u64 + 1);
/// rt.finalize()?;
/// # Ok::<(), runtime_shim::Error>(())
/// ```
pub struct LocalView<'a, T> {
    cells: &'a [LocalCell<T>],
}

impl<'a, T: Pod> LocalView<'a, T> {
    /// The view of the `len` elements at `addr` in this locale's registered
    /// heap: a `Dist`'s local part (the `Dist` it borrows gives `'a`).
    pub(crate) fn new(addr: u64, len: usize) -> LocalView<'a, T> {
        let addr = addr as usize;
        assert!(
            addr % std::mem::align_of::<T>() == 0 && addr != 0,
            "local part at {addr:#x} is not aligned for {} (internal error: the \
             allocators align every part)",
            std::any::type_name::<T>()
        );
        // SAFETY: the part is `len` elements of this locale's registered
        // heap (made by alloc_all / alloc_sym, aligned for T: checked), which
        // stays mapped for the process's life; LocalCell<T> has T's layout
        // (repr(transparent) over UnsafeCell<T>), and a shared reference to
        // UnsafeCells allows the writes others make meanwhile.
        let cells = unsafe { std::slice::from_raw_parts(addr as *const LocalCell<T>, len) };
        LocalView { cells }
    }

    /// A copy of the whole part.
    pub fn to_vec(&self) -> Vec<T> {
        self.cells.iter().map(LocalCell::get).collect()
    }

    /// Stores `src` into the part, element by element.
    ///
    /// # Panics
    /// If `src.len()` is not the part's length (as `<[T]>::copy_from_slice`).
    pub fn copy_from_slice(&self, src: &[T]) {
        assert_eq!(
            src.len(),
            self.cells.len(),
            "copy_from_slice: source of {} elements into a local part of {}",
            src.len(),
            self.cells.len()
        );
        for (c, v) in self.cells.iter().zip(src) {
            c.set(*v);
        }
    }
}

impl<T> std::ops::Deref for LocalView<'_, T> {
    type Target = [LocalCell<T>];
    fn deref(&self) -> &[LocalCell<T>] {
        self.cells
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for LocalView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.cells.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::LocalView;

    #[test]
    fn view_reads_and_writes_by_value() {
        // A "part" in ordinary memory stands in for the registered heap.
        let mut part = vec![0u64; 4];
        {
            let v = LocalView::<u64>::new(part.as_mut_ptr() as u64, 4);
            assert_eq!(v.len(), 4);
            v.copy_from_slice(&[1, 2, 3, 4]);
            v[0].set(v[3].get() + 10);
            assert_eq!(v.to_vec(), [14, 2, 3, 4]);
            assert_eq!(format!("{v:?}"), "[14, 2, 3, 4]");
            let total: u64 = v.iter().map(|c| c.get()).sum();
            assert_eq!(total, 23);
        }
        assert_eq!(part, [14, 2, 3, 4]);
    }

    #[test]
    #[should_panic(expected = "source of 2 elements into a local part of 4")]
    fn copy_of_the_wrong_length_panics_naming_both() {
        let mut part = vec![0u32; 4];
        LocalView::<u32>::new(part.as_mut_ptr() as u64, 4).copy_from_slice(&[1, 2]);
    }
}
