//! The single-locale OOB: a program run by hand (not under a launcher) is
//! locale 0 of 1, and every collective is local. Also handy in unit tests of
//! the crates above.

use std::io::Write;

use crate::error::OobError;
use crate::oob::Oob;
use crate::wire;

/// OOB of a one-locale job: rank 0 of 1, collectives return at once.
#[derive(Debug, Default, Clone, Copy)]
pub struct SingleOob;

impl Oob for SingleOob {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>, OobError> {
        check_len(data)?;
        Ok(vec![data.to_vec()])
    }

    fn broadcast(&self, root: usize, data: &[u8]) -> Result<Vec<u8>, OobError> {
        if root != 0 {
            return Err(OobError::InvalidRoot { root, size: 1 });
        }
        check_len(data)?;
        Ok(data.to_vec())
    }

    fn barrier(&self) -> Result<(), OobError> {
        Ok(())
    }

    fn global_exit(&self, status: i32, msg: &str) -> ! {
        tracing::debug!("global exit: {msg}");
        std::process::exit(status)
    }

    fn abort(&self, msg: &str) -> ! {
        let _ = writeln!(std::io::stderr(), "pgas locale 0: abort: {msg}");
        std::process::exit(1)
    }
}

/// Same limit as under the launcher, so a program does not work by hand and
/// then fail when launched.
pub(crate) fn check_len(data: &[u8]) -> Result<(), OobError> {
    if data.len() > wire::MAX_PAYLOAD {
        return Err(OobError::PayloadTooLarge {
            len: data.len(),
            max: wire::MAX_PAYLOAD,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collectives_are_identity() {
        let o = SingleOob;
        assert_eq!(o.allgather(b"abc").unwrap(), vec![b"abc".to_vec()]);
        assert_eq!(o.broadcast(0, b"x").unwrap(), b"x".to_vec());
        o.barrier().unwrap();
    }

    #[test]
    fn bad_root_is_an_error() {
        let e = SingleOob.broadcast(1, b"x").unwrap_err();
        assert!(
            matches!(e, OobError::InvalidRoot { root: 1, size: 1 }),
            "{e}"
        );
    }
}
