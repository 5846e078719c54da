//! Checked access to this process's own memory at an address that came over
//! the wire (AM-mediated RMA on memory the target never registered).
//!
//! Exists so that a bad remote address (unmapped, read-only) becomes an error
//! reply naming it instead of a segfault of the target: the copy goes through
//! `process_vm_readv` / `process_vm_writev` on our own pid, which report
//! `EFAULT` instead of faulting. Where those calls are unavailable (seccomp,
//! old kernel) it falls back to a plain copy, which trusts the initiator.

use std::io::Error as IoError;

fn fallback_allowed(e: &IoError) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM))
}

/// Copies `len` bytes at `addr` of this process into a new vector.
pub fn read(addr: u64, len: usize) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; len];
    if len == 0 {
        return Ok(out);
    }
    let local = libc::iovec {
        iov_base: out.as_mut_ptr() as *mut libc::c_void,
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: both iovecs describe `len` bytes; the kernel checks the remote
    // range and reports EFAULT instead of faulting; `out` is ours.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == len as isize {
        return Ok(out);
    }
    let e = IoError::last_os_error();
    if n < 0 && fallback_allowed(&e) {
        // SAFETY: no checked copy is available; the caller of the AM-mediated
        // GET vouched for the address (the API is `unsafe` at the initiator).
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, out.as_mut_ptr(), len) };
        return Ok(out);
    }
    Err(if n < 0 {
        format!("cannot read {len} bytes at {addr:#x}: {e}")
    } else {
        format!("cannot read {len} bytes at {addr:#x}: only {n} readable")
    })
}

/// Copies `data` to `addr` of this process.
pub fn write(addr: u64, data: &[u8]) -> Result<(), String> {
    if data.is_empty() {
        return Ok(());
    }
    let local = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: as in `read`; the kernel only reads `data`.
    let n = unsafe { libc::process_vm_writev(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == data.len() as isize {
        return Ok(());
    }
    let e = IoError::last_os_error();
    if n < 0 && fallback_allowed(&e) {
        // SAFETY: as in `read`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, data.len()) };
        return Ok(());
    }
    Err(if n < 0 {
        format!("cannot write {} bytes at {addr:#x}: {e}", data.len())
    } else {
        format!(
            "cannot write {} bytes at {addr:#x}: only {n} writable",
            data.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_own_memory_and_rejects_bad_addresses() {
        let mut v = vec![1u8, 2, 3, 4];
        let a = v.as_mut_ptr() as u64;
        assert_eq!(read(a, 4).unwrap(), vec![1, 2, 3, 4]);
        write(a + 1, &[9, 9]).unwrap();
        assert_eq!(v, vec![1, 9, 9, 4]);
        assert!(read(8, 4).unwrap_err().contains("0x8"));
        assert!(write(8, &[1]).is_err());
        assert!(read(a, 0).unwrap().is_empty());
    }
}
