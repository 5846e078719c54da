//! The registered heap: one mapping per locale, registered once, from which
//! remotely addressable memory is handed out.
//!
//! Registering once (instead of per allocation) keeps PUT/GET free of
//! registration cost and lets every locale know every other locale's
//! (base, size, key) after one exchange at start-up. The mapping is
//! `MAP_NORESERVE`, so a large default costs nothing until touched. It is
//! anonymous, or, for the intra-node mapped path ([`crate::mapped`]), a
//! shared mapping of a memfd that co-located locales map too
//! ([`Heap::new_shared`]).
//!
//! The allocator is a first-fit free list with coalescing, under a lock: it is
//! used for long-lived buffers, not per operation. Allocations made in the
//! same order on every locale get the same offsets ("symmetric" allocation),
//! which the start-up code and tests rely on.

use crate::error::{Error, Result};
use parking_lot::Mutex;
use std::collections::BTreeMap;

/// Smallest alignment handed out (a cache line, so words of different
/// allocations never share a line).
pub const MIN_ALIGN: usize = 64;

/// The access the heap is registered with: RMA both ways, and the
/// local buffers of sends and receives (AM requests and landing zones).
pub const HEAP_ACCESS: u64 = crate::ofi::Mr::ACCESS_RMA_AND_MSG;

/// A locale's registered memory region and its allocator.
#[derive(Debug)]
pub struct Heap {
    base: *mut u8,
    size: usize,
    free: Mutex<FreeList>,
    /// The memfd behind a shared heap (peers open it through
    /// `/proc/<pid>/fd/<fd>`); `None` for an anonymous one.
    fd: Option<std::os::fd::OwnedFd>,
}

// SAFETY: the mapping is process-wide memory; all mutation of allocator state
// is under the mutex, and access to the bytes is through raw pointers whose
// users synchronise (or race, as the program's memory model allows).
unsafe impl Send for Heap {}
// SAFETY: as above.
unsafe impl Sync for Heap {}

#[derive(Debug, Default)]
struct FreeList {
    /// offset -> length of each free block.
    free: BTreeMap<usize, usize>,
    /// offset -> each live allocation.
    live: BTreeMap<usize, Live>,
}

/// One live allocation.
#[derive(Debug, Clone, Copy)]
struct Live {
    /// Bytes taken from the heap (rounded up to [`MIN_ALIGN`]).
    len: usize,
    /// Bytes asked for.
    asked: usize,
    /// Asked for by the program ([`Heap::alloc_user`]) rather than by the
    /// runtime for itself (AM buffers, collective areas, ...).
    user: bool,
}

impl Heap {
    /// Maps `size` bytes (rounded up to pages), anonymous and private.
    pub fn new(size: usize) -> Result<Heap> {
        let size = Self::round(size);
        let at = reserve_aligned(size);
        if at == libc::MAP_FAILED {
            return Self::from_mapping(at, size, None);
        }
        // SAFETY: anonymous private mapping over the range reserve_aligned
        // just reserved for it (MAP_FIXED replaces only that reservation).
        let p = unsafe {
            libc::mmap(
                at,
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        Self::from_mapping(p, size, None)
    }

    /// Maps `size` bytes (rounded up to pages) of a fresh memfd, shared, so
    /// that other processes of this user on this host can map the same pages
    /// (`/proc/<pid>/fd/<fd>`, see [`Heap::shared_fd`]). The memfd has no
    /// name in any file system: nothing is left behind when the process dies.
    pub fn new_shared(size: usize) -> Result<Heap> {
        use std::os::fd::AsRawFd;
        let size = Self::round(size);
        let fd = sized_memfd(c"pgas-heap", size).map_err(|(what, e)| Error::Env {
            var: "PGAS_LOCAL_PATH",
            value: "mapped".into(),
            reason: format!(
                "cannot create the shared heap ({what}: {e}); set PGAS_LOCAL_PATH=fabric"
            ),
        })?;
        let at = reserve_aligned(size);
        if at == libc::MAP_FAILED {
            return Self::from_mapping(at, size, Some(fd));
        }
        // SAFETY: a shared mapping of the descriptor we hold over the range
        // reserve_aligned just reserved for it (MAP_FIXED replaces only that
        // reservation); the kernel says MAP_FAILED otherwise.
        let p = unsafe {
            libc::mmap(
                at,
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_NORESERVE | libc::MAP_FIXED,
                fd.as_raw_fd(),
                0,
            )
        };
        Self::from_mapping(p, size, Some(fd))
    }

    fn round(size: usize) -> usize {
        let page = 4096;
        size.div_ceil(page) * page
    }

    fn from_mapping(
        p: *mut libc::c_void,
        size: usize,
        fd: Option<std::os::fd::OwnedFd>,
    ) -> Result<Heap> {
        if p == libc::MAP_FAILED {
            return Err(Error::Env {
                var: "PGAS_HEAP_SIZE",
                value: size.to_string(),
                reason: format!("cannot map the heap: {}", std::io::Error::last_os_error()),
            });
        }
        let mut fl = FreeList::default();
        fl.free.insert(0, size);
        Ok(Heap {
            base: p as *mut u8,
            size,
            free: Mutex::new(fl),
            fd,
        })
    }

    /// The memfd of a shared heap (`None`: anonymous).
    pub fn shared_fd(&self) -> Option<i32> {
        use std::os::fd::AsRawFd;
        self.fd.as_ref().map(|f| f.as_raw_fd())
    }

    /// Start address.
    pub fn base(&self) -> *mut u8 {
        self.base
    }

    /// Start address as an integer.
    pub fn base_addr(&self) -> u64 {
        self.base as u64
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether `[addr, addr+len)` lies inside the heap.
    pub fn contains(&self, addr: u64, len: usize) -> bool {
        let b = self.base_addr();
        addr >= b
            && addr
                .checked_add(len as u64)
                .is_some_and(|e| e <= b + self.size as u64)
    }

    /// Allocates `size` bytes aligned to `align` (at least [`MIN_ALIGN`]) for
    /// the runtime's own use; returns the address. Zero-size requests get a
    /// minimal block. A size or alignment the heap cannot hold is
    /// [`Error::OutOfMemory`] (never a wrapped-around small block).
    pub fn alloc(&self, size: usize, align: usize) -> Result<u64> {
        self.alloc_tagged(size, align, false)
    }

    /// [`Heap::alloc`] for memory the program asked for: the only
    /// allocations `PGAS_CHECK=1` lets PUT/GET/atomics touch.
    pub fn alloc_user(&self, size: usize, align: usize) -> Result<u64> {
        self.alloc_tagged(size, align, true)
    }

    /// Allocates `size` bytes aligned to `align` for this locale's private
    /// use, from the top of the heap down, so that it never moves the
    /// offsets of symmetric allocations (made bottom-up in the same order on
    /// every locale). For buffers whose count differs between locales, such
    /// as the transmit contexts' scratch words (one per worker).
    pub fn alloc_private(&self, size: usize, align: usize) -> Result<u64> {
        self.alloc_placed(size, align, false, true)
    }

    fn alloc_tagged(&self, asked: usize, align: usize, user: bool) -> Result<u64> {
        self.alloc_placed(asked, align, user, false)
    }

    fn alloc_placed(&self, asked: usize, align: usize, user: bool, top: bool) -> Result<u64> {
        if !align.is_power_of_two() {
            return Err(Error::InvalidSize {
                what: "heap alignment",
                size: align,
                reason: "alignment must be a power of two".into(),
            });
        }
        let oom = || Error::OutOfMemory {
            size: asked,
            heap_size: self.size,
        };
        let align = align.max(MIN_ALIGN);
        // Rounded up to whole lines; anything near usize::MAX (or larger than
        // the whole heap) cannot be satisfied.
        let size = asked
            .max(1)
            .checked_next_multiple_of(MIN_ALIGN)
            .filter(|s| *s <= self.size)
            .ok_or_else(oom)?;
        if align > self.size {
            return Err(oom());
        }
        let base = self.base_addr() as usize;
        let mut fl = self.free.lock();
        let found = if top {
            // Highest block first, the allocation at its aligned top.
            fl.free.iter().rev().find_map(|(&off, &len)| {
                let end = off + len;
                let start = ((base + end).checked_sub(size)? & !(align - 1)).checked_sub(base)?;
                (start >= off).then_some((off, len, start))
            })
        } else {
            fl.free.iter().find_map(|(&off, &len)| {
                let start = (base + off).checked_next_multiple_of(align)? - base;
                let end = start.checked_add(size)?;
                (end <= off + len).then_some((off, len, start))
            })
        };
        let Some((off, len, start)) = found else {
            return Err(oom());
        };
        fl.free.remove(&off);
        if start > off {
            fl.free.insert(off, start - off);
        }
        if start + size < off + len {
            fl.free.insert(start + size, off + len - (start + size));
        }
        fl.live.insert(
            start,
            Live {
                len: size,
                asked,
                user,
            },
        );
        Ok(self.base_addr() + start as u64)
    }

    /// Returns an allocation. Freeing an address that is not a live
    /// allocation is an error whose text says what the address is instead
    /// (outside the heap, inside an allocation, already freed).
    pub fn free(&self, addr: u64) -> std::result::Result<(), String> {
        let b = self.base_addr();
        if !self.contains(addr, 0) || addr == b + self.size as u64 {
            return Err(format!(
                "it is outside this locale's registered heap [{b:#x}, {:#x})",
                b + self.size as u64
            ));
        }
        let off = (addr - b) as usize;
        let mut fl = self.free.lock();
        let Some(live) = fl.live.remove(&off) else {
            return Err(match fl.live.range(..off).next_back() {
                Some((&start, l)) if off < start + l.len => format!(
                    "it points {} bytes into the allocation at {:#x}; free takes the address \
                     the allocation returned",
                    off - start,
                    b + start as u64
                ),
                _ => "it is not a live allocation (freed already, or never allocated)".into(),
            });
        };
        let (mut start, mut len) = (off, live.len);
        if let Some((&prev, &plen)) = fl.free.range(..start).next_back() {
            if prev + plen == start {
                fl.free.remove(&prev);
                start = prev;
                len += plen;
            }
        }
        if let Some(&nlen) = fl.free.get(&(start + len)) {
            fl.free.remove(&(start + len));
            len += nlen;
        }
        fl.free.insert(start, len);
        Ok(())
    }

    /// The lowest offset at or above `from` where `size` bytes aligned to
    /// `align` fit in a free block (symmetric allocation: every locale
    /// proposes one, they agree on the largest).
    pub fn first_fit_from(&self, from: usize, size: usize, align: usize) -> Option<usize> {
        let align = align.max(MIN_ALIGN).next_power_of_two();
        let size = size.max(1).checked_next_multiple_of(MIN_ALIGN)?;
        let fl = self.free.lock();
        fl.free.iter().find_map(|(&off, &len)| {
            let start = off.max(from).checked_next_multiple_of(align)?;
            (start.checked_add(size)? <= off + len).then_some(start)
        })
    }

    /// Claims exactly `size` bytes at `offset` if they are free, for the
    /// program (symmetric allocation); the address. An error (nothing
    /// claimed) otherwise.
    pub fn alloc_at(&self, offset: usize, size: usize) -> Result<u64> {
        let asked = size;
        let size = size
            .max(1)
            .checked_next_multiple_of(MIN_ALIGN)
            .ok_or(Error::OutOfMemory {
                size,
                heap_size: self.size,
            })?;
        let busy = || Error::InvalidSize {
            what: "heap range",
            size,
            reason: format!("offset {offset:#x} is not free in this heap"),
        };
        let end = offset.checked_add(size).ok_or_else(busy)?;
        let mut fl = self.free.lock();
        let (&off, &len) = fl.free.range(..=offset).next_back().ok_or_else(busy)?;
        if end > off + len || offset % MIN_ALIGN != 0 {
            return Err(busy());
        }
        fl.free.remove(&off);
        if offset > off {
            fl.free.insert(off, offset - off);
        }
        if end < off + len {
            fl.free.insert(end, off + len - end);
        }
        fl.live.insert(
            offset,
            Live {
                len: size,
                asked,
                user: true,
            },
        );
        Ok(self.base_addr() + offset as u64)
    }

    /// Bytes currently handed out.
    pub fn in_use(&self) -> usize {
        self.free.lock().live.values().map(|l| l.len).sum()
    }

    /// Whether `[addr, addr+len)` lies inside one live allocation the program
    /// made ([`Heap::alloc_user`]), within the bytes it asked for; the error
    /// text says where the range falls instead. For `PGAS_CHECK=1`.
    pub fn check_live(&self, addr: u64, len: usize) -> std::result::Result<(), String> {
        let b = self.base_addr();
        let end = b + self.size as u64;
        if !self.contains(addr, len) {
            return Err(format!(
                "it is not inside the registered heap [{b:#x}, {end:#x})"
            ));
        }
        let off = (addr - b) as usize;
        let fl = self.free.lock();
        let Some((&start, live)) = fl.live.range(..=off).next_back() else {
            return Err("it is not inside any live allocation (freed, or never allocated)".into());
        };
        let at = b + start as u64;
        if off >= start + live.len {
            return Err("it is not inside any live allocation (freed, or never allocated)".into());
        }
        if !live.user {
            return Err(format!(
                "it lies in memory the runtime allocated for itself (at {at:#x}), not in an \
                 allocation of the program"
            ));
        }
        let inside = off - start;
        if inside + len > live.asked {
            return Err(format!(
                "it runs {} byte(s) past the end of the {}-byte allocation at {at:#x}",
                inside + len - live.asked,
                live.asked
            ));
        }
        Ok(())
    }
}

/// Alignment of every heap's base address. Symmetric allocations share an
/// offset on every locale, so an alignment of the *address* (OpenSHMEM's
/// `shmem_align`) holds everywhere only if the bases agree modulo it: with
/// bases aligned to 1 GiB (address space only: the rest of the reservation
/// is given back), any alignment up to 1 GiB does.
pub const HEAP_BASE_ALIGN: usize = 1 << 30;

/// Reserves (PROT_NONE) `size` bytes at an address aligned to
/// [`HEAP_BASE_ALIGN`], for the heap's mapping to replace; `MAP_FAILED`
/// on failure.
fn reserve_aligned(size: usize) -> *mut libc::c_void {
    let span = size + HEAP_BASE_ALIGN;
    // SAFETY: an anonymous PROT_NONE reservation with no address hint.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return p;
    }
    let start = p as usize;
    let aligned = start.next_multiple_of(HEAP_BASE_ALIGN);
    let head = aligned - start;
    let tail = span - head - size;
    // SAFETY: both ranges lie inside the reservation just made and are not
    // used by anything else; unmapping them leaves [aligned, aligned+size).
    unsafe {
        if head > 0 {
            libc::munmap(p, head);
        }
        if tail > 0 {
            libc::munmap((aligned + size) as *mut libc::c_void, tail);
        }
    }
    aligned as *mut libc::c_void
}

/// Maps the first `size` bytes of `fd` shared, read-write, without reserving
/// swap; `MAP_FAILED` on failure (the caller checks).
pub(crate) fn map_shared(fd: i32, size: usize) -> *mut libc::c_void {
    map_fd(fd, size, libc::MAP_SHARED | libc::MAP_NORESERVE)
}

/// Maps the first `size` bytes of `fd` read-write with `flags` at an address
/// the kernel picks; `MAP_FAILED` on failure (the caller checks).
pub(crate) fn map_fd(fd: i32, size: usize, flags: libc::c_int) -> *mut libc::c_void {
    // SAFETY: a new mapping with no address hint of a descriptor the caller
    // holds open; the kernel checks the rest and says MAP_FAILED.
    unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd,
            0,
        )
    }
}

/// A fresh memfd named `name` (close-on-exec), `size` bytes long; on failure
/// the call that failed and its error.
pub(crate) fn sized_memfd(
    name: &std::ffi::CStr,
    size: usize,
) -> std::result::Result<std::os::fd::OwnedFd, (&'static str, std::io::Error)> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let failed = |what| (what, std::io::Error::last_os_error());
    // SAFETY: a NUL-terminated name and valid flags; checked below.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(failed("memfd_create"));
    }
    // SAFETY: fd is a fresh descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: a valid descriptor and length.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) } != 0 {
        return Err(failed("ftruncate"));
    }
    Ok(fd)
}

impl Drop for Heap {
    fn drop(&mut self) {
        // SAFETY: base/size are exactly the mapping made in new(); every MR on
        // it has been closed (the MR is dropped before the heap in Comm).
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.size) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_coalesces_and_is_deterministic() {
        let h = Heap::new(1 << 20).unwrap();
        let a = h.alloc(100, 8).unwrap();
        let b = h.alloc(4096, 4096).unwrap();
        let c = h.alloc(1, 1).unwrap();
        assert_eq!(a, h.base_addr());
        assert_eq!(b % 4096, 0);
        assert!(c != a && c != b);
        h.free(b).unwrap();
        h.free(a).unwrap();
        h.free(c).unwrap();
        assert_eq!(h.in_use(), 0);
        // Whole heap is one block again.
        let big = h.alloc((1 << 20) - 64, 64).unwrap();
        assert_eq!(big, h.base_addr());
        let h2 = Heap::new(1 << 20).unwrap();
        assert_eq!(h2.alloc(100, 8).unwrap() - h2.base_addr(), 0);
    }

    #[test]
    fn private_allocations_leave_symmetric_offsets_alone() {
        // Two locales with different worker counts: one scratch block each
        // versus five. The symmetric allocations after them must still land
        // at the same offsets (they did not when scratch came from alloc).
        let (one, five) = (Heap::new(1 << 20).unwrap(), Heap::new(1 << 20).unwrap());
        let head = |h: &Heap| h.alloc(64, 64).unwrap() - h.base_addr();
        assert_eq!(head(&one), head(&five));
        one.alloc_private(64, 64).unwrap();
        let mut privs = Vec::new();
        for _ in 0..5 {
            privs.push(five.alloc_private(64, 64).unwrap());
        }
        for size in [8, 4096, 100] {
            assert_eq!(
                one.alloc(size, 64).unwrap() - one.base_addr(),
                five.alloc(size, 64).unwrap() - five.base_addr()
            );
        }
        // From the top down, aligned, inside the heap, and freeable.
        let top = five.base_addr() + (1 << 20);
        assert_eq!(privs[0], top - 64);
        assert_eq!(privs[1], top - 128);
        let aligned = five.alloc_private(100, 4096).unwrap();
        assert_eq!(aligned % 4096, 0);
        assert!(five.contains(aligned, 100));
        for p in privs {
            five.free(p).unwrap();
        }
        five.free(aligned).unwrap();
        // Too large for what is left is the usual out-of-memory error.
        assert!(matches!(
            one.alloc_private(1 << 21, 64),
            Err(Error::OutOfMemory { .. })
        ));
    }

    #[test]
    fn shared_heap_is_seen_through_a_second_mapping() {
        let h = Heap::new_shared(1 << 20).unwrap();
        let fd = h.shared_fd().expect("a shared heap has a memfd");
        let path = format!("/proc/{}/fd/{fd}", std::process::id());
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: shared mapping of the whole file; checked below, unmapped at the end.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                1 << 20,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let a = h.alloc(64, 64).unwrap();
        // SAFETY: a live allocation of the heap, and the same page through p.
        unsafe {
            std::ptr::write_volatile(a as *mut u64, 0xfeed);
            let other = (p as u64 + (a - h.base_addr())) as *const u64;
            assert_eq!(std::ptr::read_volatile(other), 0xfeed);
            libc::munmap(p, 1 << 20);
        }
        assert!(Heap::new(1 << 20).unwrap().shared_fd().is_none());
    }

    #[test]
    fn exhaustion_and_bad_free_are_errors() {
        let h = Heap::new(1 << 20).unwrap();
        let e = h.alloc(2 << 20, 8).unwrap_err().to_string();
        assert!(e.contains("PGAS_HEAP_SIZE"), "{e}");
        let a = h.alloc(64, 8).unwrap();
        assert!(h.free(a + 64).is_err());
        h.free(a).unwrap();
        assert!(h.free(a).is_err(), "double free must be refused");
        assert!(h.free(12345).is_err());
        assert!(h.alloc(8, 3).is_err());
    }

    #[test]
    fn first_fit_and_alloc_at_agree_and_refuse_busy_ranges() {
        let h = Heap::new(1 << 20).unwrap();
        let a = h.alloc(128, 64).unwrap();
        assert_eq!(h.first_fit_from(0, 64, 64), Some(128));
        assert_eq!(h.first_fit_from(4096, 64, 4096), Some(4096));
        let b = h.alloc_at(4096, 100).unwrap();
        assert_eq!(b, h.base_addr() + 4096);
        assert!(h.alloc_at(4096, 64).is_err(), "taken");
        assert!(h.alloc_at(0, 64).is_err(), "taken by a");
        assert!(h.alloc_at(100, 64).is_err(), "misaligned");
        assert!(h.alloc_at(1 << 20, 64).is_err(), "past the end");
        assert!(h.alloc_at(usize::MAX - 10, 64).is_err(), "overflow");
        assert_eq!(h.first_fit_from(0, 1 << 21, 64), None);
        h.free(b).unwrap();
        h.free(a).unwrap();
        assert_eq!(h.in_use(), 0);
        assert_eq!(
            h.alloc((1 << 20) - 64, 64).unwrap(),
            h.base_addr(),
            "coalesced"
        );
    }

    #[test]
    fn sizes_near_the_limits_do_not_wrap() {
        let h = Heap::new(1 << 20).unwrap();
        for size in [usize::MAX, usize::MAX - 63, (1 << 20) + 1, usize::MAX / 2] {
            let e = h.alloc(size, 8).unwrap_err();
            assert!(
                matches!(e, Error::OutOfMemory { size: s, .. } if s == size),
                "{size}: {e}"
            );
            assert!(e.to_string().contains(&size.to_string()), "{e}");
        }
        assert!(h.alloc(64, 1 << 62).is_err());
        assert_eq!(h.in_use(), 0, "a failed allocation took memory");
        // Two live blocks never share memory.
        let a = h.alloc(64, 64).unwrap();
        let b = h.alloc(64, 64).unwrap();
        assert!(b >= a + 64 || a >= b + 64);
        let whole = h.alloc((1 << 20) - 128, 64).unwrap();
        assert!(whole >= b + 64);
        assert!(h.alloc(1, 1).is_err());
    }

    #[test]
    fn bad_frees_say_what_the_address_is() {
        let h = Heap::new(1 << 20).unwrap();
        let a = h.alloc(256, 64).unwrap();
        assert!(h.free(a + 64).unwrap_err().contains("64 bytes into"));
        h.free(a).unwrap();
        assert!(h.free(a).unwrap_err().contains("freed already"));
        assert!(h.free(3).unwrap_err().contains("outside"));
        assert!(h
            .free(h.base_addr() + (1 << 20))
            .unwrap_err()
            .contains("outside"));
    }

    #[test]
    fn live_check_is_exact_to_the_asked_bytes() {
        let h = Heap::new(1 << 20).unwrap();
        let a = h.alloc_user(60, 64).unwrap();
        let b = h.alloc_user(64, 64).unwrap();
        let r = h.alloc(64, 64).unwrap();
        h.check_live(a, 60).unwrap();
        h.check_live(a + 59, 1).unwrap();
        assert!(h.check_live(a, 61).unwrap_err().contains("1 byte(s) past"));
        assert!(h
            .check_live(a + 60, 4)
            .unwrap_err()
            .contains("past the end"));
        h.check_live(b, 64).unwrap();
        assert!(h.check_live(r, 8).unwrap_err().contains("runtime"));
        h.free(b).unwrap();
        assert!(h
            .check_live(b, 8)
            .unwrap_err()
            .contains("not inside any live"));
        assert!(h.check_live(1, 8).unwrap_err().contains("registered heap"));
    }

    #[test]
    fn contains_checks_bounds() {
        let h = Heap::new(1 << 20).unwrap();
        let b = h.base_addr();
        assert!(h.contains(b, 1 << 20));
        assert!(!h.contains(b, (1 << 20) + 1));
        assert!(!h.contains(b - 1, 1));
        assert!(!h.contains(u64::MAX, 2));
    }
}
