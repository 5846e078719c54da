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
