//! Clean-up of what a dead locale leaves behind on this host.
//!
//! libfabric's `shm` provider backs each endpoint with a file
//! `/dev/shm/<pid>:<uid>:<n>`, created exclusively and removed when the
//! endpoint closes. A locale killed by a signal (or by the launcher when the
//! job fails) never closes its endpoints: the files stay, hold tmpfs memory,
//! and make a later process that is given the same pid fail in `fi_enable`
//! with `EBUSY`. The launcher removes a locale's files once it has reaped it,
//! and comm-ofi removes any under its own pid before opening endpoints. The
//! naming is libfabric's, not ours; it lives here because the launcher knows
//! pids and nothing of libfabric, and comm-ofi sits above this crate.

/// Removes `/dev/shm/<pid>:*` and returns how many files went. Errors (no
/// `/dev/shm`, a file owned by someone else) are ignored: this is hygiene.
pub fn remove_shm_regions_of(pid: u32) -> usize {
    let prefix = format!("{pid}:");
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return 0;
    };
    dir.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_only_files_of_that_pid() {
        // Pids above pid_max (at most 2^22) cannot belong to a live process.
        let dead = 4_194_999_u32;
        let ours = format!("/dev/shm/{dead}:0:7");
        let other = format!("/dev/shm/{}:0:7", dead + 1);
        let lookalike = format!("/dev/shm/{dead}0:0:7");
        for f in [&ours, &other, &lookalike] {
            std::fs::write(f, b"x").unwrap();
        }
        assert_eq!(remove_shm_regions_of(dead), 1);
        assert!(!std::path::Path::new(&ours).exists());
        assert!(std::path::Path::new(&other).exists());
        assert!(std::path::Path::new(&lookalike).exists());
        for f in [&other, &lookalike] {
            std::fs::remove_file(f).unwrap();
        }
    }
}
