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
pub const HEAP_ACCESS: u64 = libfabric_sys::FI_READ
    | libfabric_sys::FI_WRITE
    | libfabric_sys::FI_REMOTE_READ
    | libfabric_sys::FI_REMOTE_WRITE
    | libfabric_sys::FI_SEND
    | libfabric_sys::FI_RECV;

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
    /// offset -> length of each live allocation.
    live: BTreeMap<usize, usize>,
}

impl Heap {
    /// Maps `size` bytes (rounded up to pages), anonymous and private.
    pub fn new(size: usize) -> Result<Heap> {
        let size = Self::round(size);
        // SAFETY: anonymous private mapping with no address hint; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
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
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let size = Self::round(size);
        let err = |what: &str| Error::Env {
            var: "PGAS_LOCAL_PATH",
            value: "mapped".into(),
            reason: format!(
                "cannot create the shared heap ({what}: {}); set PGAS_LOCAL_PATH=fabric",
                std::io::Error::last_os_error()
            ),
        };
        // SAFETY: a NUL-terminated name and valid flags; checked below.
        let fd = unsafe { libc::memfd_create(c"pgas-heap".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(err("memfd_create"));
        }
        // SAFETY: fd is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: a valid descriptor and length.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) } != 0 {
            return Err(err("ftruncate"));
        }
        let p = map_shared(fd.as_raw_fd(), size);
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

    /// Allocates `size` bytes aligned to `align` (at least [`MIN_ALIGN`]);
    /// returns the address. Zero-size requests get a minimal block.
    pub fn alloc(&self, size: usize, align: usize) -> Result<u64> {
        if !align.is_power_of_two() {
            return Err(Error::InvalidSize {
                what: "heap alignment",
                size: align,
                reason: "alignment must be a power of two".into(),
            });
        }
        let align = align.max(MIN_ALIGN);
        let size = size.max(1).div_ceil(MIN_ALIGN) * MIN_ALIGN;
        let mut fl = self.free.lock();
        let found = fl.free.iter().find_map(|(&off, &len)| {
            let start = (self.base_addr() as usize + off).next_multiple_of(align)
                - self.base_addr() as usize;
            (start + size <= off + len).then_some((off, len, start))
        });
        let Some((off, len, start)) = found else {
            return Err(Error::OutOfMemory {
                size,
                heap_size: self.size,
            });
        };
        fl.free.remove(&off);
        if start > off {
            fl.free.insert(off, start - off);
        }
        if start + size < off + len {
            fl.free.insert(start + size, off + len - (start + size));
        }
        fl.live.insert(start, size);
        Ok(self.base_addr() + start as u64)
    }

    /// Returns an allocation. Freeing an address that is not a live
    /// allocation is an error naming it.
    pub fn free(&self, addr: u64) -> Result<()> {
        let bad = || Error::InvalidSize {
            what: "heap free",
            size: addr as usize,
            reason: format!("{addr:#x} is not a live allocation of this heap"),
        };
        if !self.contains(addr, 0) {
            return Err(bad());
        }
        let off = (addr - self.base_addr()) as usize;
        let mut fl = self.free.lock();
        let size = fl.live.remove(&off).ok_or_else(bad)?;
        let (mut start, mut len) = (off, size);
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

    /// Bytes currently handed out.
    pub fn in_use(&self) -> usize {
        self.free.lock().live.values().sum()
    }
}

/// Maps the first `size` bytes of `fd` shared, read-write, without reserving
/// swap; `MAP_FAILED` on failure (the caller checks).
pub(crate) fn map_shared(fd: i32, size: usize) -> *mut libc::c_void {
    // SAFETY: a shared mapping with no address hint of a descriptor the
    // caller holds open; the kernel checks the rest and says MAP_FAILED.
    unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_NORESERVE,
            fd,
            0,
        )
    }
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
    fn contains_checks_bounds() {
        let h = Heap::new(1 << 20).unwrap();
        let b = h.base_addr();
        assert!(h.contains(b, 1 << 20));
        assert!(!h.contains(b, (1 << 20) + 1));
        assert!(!h.contains(b - 1, 1));
        assert!(!h.contains(u64::MAX, 2));
    }
}
