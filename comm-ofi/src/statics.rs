//! The program's static data (the executable's writable `.data` / `.bss`),
//! registered with the provider so that a static variable is remotely
//! addressable, as Chapel registers its data segment.
//!
//! Exists because a language runtime keeps globals in statics (module-level
//! variables, a runtime's own tables) and expects `put`/`get`/atomics on
//! them. Every locale runs the same executable, but with position-independent
//! executables and ASLR a static's address differs per process: a static is
//! named by its offset in the segment, translated per locale
//! (`Comm::static_addr`), like a symmetric heap address.
//!
//! The segment is the executable's writable `PT_LOAD` segment minus its
//! `PT_GNU_RELRO` part (made read-only after relocation), in whole pages. Shared libraries' statics are not included.
//!
//! Co-located locales reach each other's static data by mapping it, as they
//! map each other's heap (`mapped.rs`): at start-up, before the segment is
//! registered, [`share`] moves it onto a memfd (its pages copied into the
//! memfd, then the memfd mapped shared over the segment's addresses), so a
//! peer can map the same pages through `/proc/<pid>/fd/<fd>`. Without it a
//! PUT to a co-located locale's static went through the provider, whose
//! target-side progress nobody drove while that locale's poller slept on its
//! doorbell: a flag ping-pong on a `static long` took 40-80 ms a round trip
//! (issue 37). A `fork()`ed child gets private static data back (an atfork
//! handler copies the segment into private pages), so it does not write its
//! parent's statics.
//!
//! The copy and the remap are not atomic with respect to other threads: a
//! store another thread makes to the segment between them is lost. `share`
//! runs inside `Comm::init`, before the comm layer's and the runtime's
//! threads start; a program must not have threads of its own storing to the
//! executable's static data while it initializes the layer.

/// `PF_W` of an ELF program header: the segment is writable.
const PF_W: u32 = 2;

/// One locale's registered static range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StaticSegment {
    /// First byte (page-aligned); 0 with `size` 0 when there is none.
    pub base: u64,
    /// Bytes.
    pub size: u64,
}

impl StaticSegment {
    /// Whether `len` bytes at `addr` lie inside.
    pub fn contains(&self, addr: u64, len: usize) -> bool {
        self.size > 0
            && addr >= self.base
            && addr
                .checked_add(len as u64)
                .is_some_and(|e| e <= self.base + self.size)
    }
}

/// The executable's writable data, `None` if it has none the provider can
/// register (no writable segment, or all of it RELRO).
pub fn executable_data() -> Option<StaticSegment> {
    struct Found {
        writable: Vec<(u64, u64)>,
        relro: Vec<(u64, u64)>,
        seen: bool,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: `data` is the `&mut Found` passed to dl_iterate_phdr
        // below, alive for the whole iteration and used by no one else.
        let found = unsafe { &mut *(data as *mut Found) };
        if found.seen {
            return 1; // the executable is the first object: stop
        }
        found.seen = true;
        // SAFETY: dl_iterate_phdr hands a valid info whose dlpi_phdr points
        // to dlpi_phnum program headers, valid during the callback.
        let (base, phdrs) = unsafe {
            let info = &*info;
            (
                info.dlpi_addr,
                std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize),
            )
        };
        for ph in phdrs {
            let start = base.wrapping_add(ph.p_vaddr);
            let range = (start, start.wrapping_add(ph.p_memsz));
            if ph.p_type == libc::PT_LOAD && ph.p_flags & PF_W != 0 {
                found.writable.push(range);
            } else if ph.p_type == libc::PT_GNU_RELRO {
                found.relro.push(range);
            }
        }
        1
    }
    let mut found = Found {
        writable: Vec::new(),
        relro: Vec::new(),
        seen: false,
    };
    // SAFETY: `visit` matches the callback type and only reads what the
    // loader hands it; `found` outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut found as *mut Found as *mut libc::c_void) };
    let page = 4096u64;
    // Each writable segment without its RELRO head (linkers may put RELRO in
    // a writable segment of its own: nothing is left of that one), in whole
    // pages; the largest that remains.
    found
        .writable
        .iter()
        .map(|&(mut start, end)| {
            for &(rs, re) in &found.relro {
                if rs <= start && re > start {
                    start = re;
                }
            }
            (start, end)
        })
        .filter(|(start, end)| end > start)
        .map(|(start, end)| {
            // The loader maps (and protects) whole pages: the page holding
            // the end of RELRO stays writable (glibc rounds the protected
            // range down), and .bss is mapped up to its last page's end.
            let start = start / page * page;
            let end = end.div_ceil(page) * page;
            StaticSegment {
                base: start,
                size: end - start,
            }
        })
        .max_by_key(|seg| seg.size)
}

/// The memfd holding the executable's static data once [`share`] moved it
/// there (process-wide: one segment per process), or why it could not.
static SHARED: std::sync::OnceLock<std::result::Result<std::os::fd::OwnedFd, String>> =
    std::sync::OnceLock::new();

/// The segment [`share`] moved, for the atfork handler: base and size.
static SHARED_SEG: [std::sync::atomic::AtomicU64; 2] = [
    std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0),
];

/// Moves `seg` (the executable's static data, [`executable_data`]) onto a
/// memfd that co-located peers can map, and returns the memfd's number.
/// Process-wide and idempotent: later calls return the first call's answer.
/// An error (no memfd, a failed mapping) leaves the segment as it was and
/// says why.
pub fn share(seg: StaticSegment) -> std::result::Result<i32, String> {
    use std::os::fd::AsRawFd;
    SHARED
        .get_or_init(|| move_onto_memfd(seg))
        .as_ref()
        .map(|fd| fd.as_raw_fd())
        .map_err(|e| e.clone())
}

fn move_onto_memfd(seg: StaticSegment) -> std::result::Result<std::os::fd::OwnedFd, String> {
    use std::os::fd::AsRawFd;
    let page = 4096usize;
    let size = seg.size as usize;
    if size == 0 || seg.base % page as u64 != 0 || size % page != 0 {
        return Err(format!("static segment {seg:x?} is not whole pages"));
    }
    let os = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    let fd = crate::heap::sized_memfd(c"pgas-statics", size)
        .map_err(|(what, e)| format!("{what}: {e}"))?;
    // A new shared mapping of the memfd, unmapped at the end of this function.
    let tmp = crate::heap::map_fd(fd.as_raw_fd(), size, libc::MAP_SHARED);
    if tmp == libc::MAP_FAILED {
        return Err(os("mmap of the memfd"));
    }
    // Copy the pages that hold anything (the memfd starts zeroed: untouched
    // .bss pages cost nothing).
    for off in (0..size).step_by(page) {
        // SAFETY: the segment is mapped readable and writable for the life
        // of the process (the loader's writable segment, in whole pages) and
        // `tmp` is `size` bytes of our own mapping; the two do not overlap.
        unsafe {
            let src = std::slice::from_raw_parts((seg.base as usize + off) as *const u8, page);
            if src.iter().any(|b| *b != 0) {
                std::ptr::copy_nonoverlapping(src.as_ptr(), (tmp as *mut u8).add(off), page);
            }
        }
    }
    // SAFETY: replaces the segment's pages by the memfd's, which now hold
    // the same bytes, at the same addresses and with the same protection;
    // nothing else of the process is in that range.
    let p = unsafe {
        libc::mmap(
            seg.base as *mut libc::c_void,
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd.as_raw_fd(),
            0,
        )
    };
    // SAFETY: exactly the temporary mapping made above.
    unsafe { libc::munmap(tmp, size) };
    if p == libc::MAP_FAILED {
        return Err(os("mmap over the static data"));
    }
    SHARED_SEG[0].store(seg.base, std::sync::atomic::Ordering::Relaxed);
    SHARED_SEG[1].store(seg.size, std::sync::atomic::Ordering::Relaxed);
    // SAFETY: registers a handler that only makes system calls and copies
    // memory; called once per process (inside the OnceLock).
    unsafe { libc::pthread_atfork(None, None, Some(privatize_in_child)) };
    Ok(fd)
}

/// In a `fork()`ed child: the static data back in private pages with the
/// same contents, so the child does not write its parent's statics.
extern "C" fn privatize_in_child() {
    let base = SHARED_SEG[0].load(std::sync::atomic::Ordering::Relaxed) as usize;
    let size = SHARED_SEG[1].load(std::sync::atomic::Ordering::Relaxed) as usize;
    if size == 0 {
        return;
    }
    // SAFETY: a fresh private anonymous mapping; the copy reads the
    // segment (mapped for the life of the process) into it, and mremap
    // moves it over the segment's addresses, replacing the shared pages.
    // The child runs one thread here.
    unsafe {
        let tmp = libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if tmp == libc::MAP_FAILED {
            return;
        }
        std::ptr::copy_nonoverlapping(base as *const u8, tmp as *mut u8, size);
        let moved = libc::mremap(
            tmp,
            size,
            size,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            base as *mut libc::c_void,
        );
        if moved == libc::MAP_FAILED {
            libc::munmap(tmp, size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    static DATA: [AtomicU64; 4] = [
        AtomicU64::new(1),
        AtomicU64::new(2),
        AtomicU64::new(3),
        AtomicU64::new(4),
    ];
    static BSS: [AtomicU64; 1024] = [const { AtomicU64::new(0) }; 1024];

    #[test]
    fn the_segment_holds_data_and_bss_statics_but_not_heap_or_stack() {
        let seg = executable_data().expect("a test binary has writable statics");
        DATA[0].store(5, Ordering::Relaxed);
        BSS[512].store(6, Ordering::Relaxed);
        assert!(seg.contains(DATA.as_ptr() as u64, 32), "{seg:x?} .data");
        assert!(seg.contains(BSS.as_ptr() as u64, 8192), "{seg:x?} .bss");
        let heap = Box::new(7u64);
        assert!(!seg.contains(&*heap as *const u64 as u64, 8));
        let stack = 8u64;
        assert!(!seg.contains(&stack as *const u64 as u64, 8));
        assert_eq!(seg.base % 4096, 0);
        assert!(
            !seg.contains(seg.base + seg.size - 4, 8),
            "runs past the end"
        );
        assert_eq!(seg.size % 4096, 0);
    }
}
