//! The records locales exchange at start-up through the bootstrap (PMIx or
//! the launcher): endpoint names, heap and static-data registrations, and
//! locale 0's choice of provider and mode.
//!
//! Exists so that every byte another process sent is decoded and checked
//! in one place, without the network, before it reaches libfabric (an
//! endpoint name is read by `fi_av_insert` for as many bytes as the
//! provider's addresses have, whatever its length) or the range arithmetic
//! of every PUT and GET (a heap whose end overflows). The fuzz target
//! `exchange` (fuzz/) drives these decoders; docs/fuzzing.md.

use crate::error::{Error, Result};

fn bad(what: String) -> Error {
    Error::Exchange(what)
}

/// The longest endpoint name accepted from a peer (libfabric's addresses
/// are tens of bytes; a string-format name such as shm's a little more).
pub const MAX_NAME: usize = 1024;

/// Checks the endpoint names every locale sent (`names[locale]`) before
/// they go to `fi_av_insert`: each is non-empty and at most [`MAX_NAME`]
/// bytes. Their lengths may differ: shm's names carry the process id, so
/// locales whose pids have different numbers of digits send names of
/// different lengths ([`names_for_av`] pads them for the insert).
pub fn check_names(names: &[Vec<u8>], _own: &[u8]) -> Result<()> {
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() || name.len() > MAX_NAME {
            return Err(bad(format!(
                "locale {i} sent a {}-byte endpoint name (1 to {MAX_NAME} bytes expected)",
                name.len()
            )));
        }
    }
    Ok(())
}

/// The names as `fi_av_insert` reads them: each padded with zero bytes to
/// at least this locale's name's length, so a provider that reads an
/// address of its own (fixed) length never reads past a shorter buffer; a
/// string-format name ends at its first zero byte anyway.
pub fn names_for_av(names: &[Vec<u8>], own: &[u8]) -> Vec<Vec<u8>> {
    names
        .iter()
        .map(|n| {
            let mut v = n.clone();
            if v.len() < own.len() {
                v.resize(own.len(), 0);
            }
            v
        })
        .collect()
}

/// One locale's registrations: its heap and its static data, as the others
/// reach them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    /// Heap start in the owner's addresses.
    pub heap_base: u64,
    /// Heap bytes.
    pub heap_size: u64,
    /// The heap's memory-registration key.
    pub key: u64,
    /// Static data start (0 with `size` 0: none registered).
    pub statics_base: u64,
    /// Static data bytes.
    pub statics_size: u64,
    /// The static data's key.
    pub static_key: u64,
}

impl Registration {
    /// Bytes on the wire: six little-endian `u64`s.
    pub const BYTES: usize = 48;

    /// The record this locale sends.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(Self::BYTES);
        for w in [
            self.heap_base,
            self.heap_size,
            self.key,
            self.statics_base,
            self.statics_size,
            self.static_key,
        ] {
            v.extend_from_slice(&w.to_le_bytes());
        }
        v
    }

    /// Decodes and checks locale `locale`'s record: 48 bytes, a heap that
    /// is not empty and whose end does not overflow, static data whose end
    /// does not overflow.
    pub fn decode(locale: usize, r: &[u8]) -> Result<Registration> {
        if r.len() != Self::BYTES {
            return Err(bad(format!(
                "locale {locale} sent {} registration bytes, not {}",
                r.len(),
                Self::BYTES
            )));
        }
        let w = |k: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&r[8 * k..8 * k + 8]);
            u64::from_le_bytes(b)
        };
        let reg = Registration {
            heap_base: w(0),
            heap_size: w(1),
            key: w(2),
            statics_base: w(3),
            statics_size: w(4),
            static_key: w(5),
        };
        if reg.heap_size == 0 || reg.heap_base.checked_add(reg.heap_size).is_none() {
            return Err(bad(format!(
                "locale {locale} sent a heap of {} bytes at {:#x}",
                reg.heap_size, reg.heap_base
            )));
        }
        if reg.statics_base.checked_add(reg.statics_size).is_none() {
            return Err(bad(format!(
                "locale {locale} sent static data of {} bytes at {:#x}",
                reg.statics_size, reg.statics_base
            )));
        }
        Ok(reg)
    }
}

/// Locale 0's choice as the others receive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Provider, mode spelling, native atomics wanted, domain name.
    Chosen {
        /// Provider name.
        provider: String,
        /// The mode's spelling (parsed by the caller).
        mode: String,
        /// Native atomics.
        native_atomics: bool,
        /// Domain name.
        domain: String,
    },
    /// Locale 0 could not start: its message.
    Failed(String),
}

impl Choice {
    /// The record locale 0 broadcasts (tab-separated text).
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Choice::Chosen {
                provider,
                mode,
                native_atomics,
                domain,
            } => format!(
                "OK\t{provider}\t{mode}\t{}\t{domain}",
                u8::from(*native_atomics)
            )
            .into_bytes(),
            Choice::Failed(msg) => format!("ERR\t{msg}").into_bytes(),
        }
    }

    /// Decodes locale 0's record.
    pub fn decode(b: &[u8]) -> Result<Choice> {
        let text = String::from_utf8_lossy(b);
        let f: Vec<&str> = text.split('\t').collect();
        match f.as_slice() {
            ["OK", provider, mode, atomics @ ("0" | "1"), domain] => Ok(Choice::Chosen {
                provider: provider.to_string(),
                mode: mode.to_string(),
                native_atomics: *atomics == "1",
                domain: domain.to_string(),
            }),
            ["ERR", msg] => Ok(Choice::Failed(msg.to_string())),
            _ => Err(bad(format!("garbled choice from locale 0: {text:?}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrations_round_trip_and_reject_overflow() {
        let r = Registration {
            heap_base: 0x7f00_0000_0000,
            heap_size: 1 << 30,
            key: 7,
            statics_base: 0x55_0000,
            statics_size: 4096,
            static_key: 8,
        };
        assert_eq!(Registration::decode(3, &r.encode()).unwrap(), r);
        let e = Registration::decode(3, &r.encode()[..40]).unwrap_err();
        assert!(e.to_string().contains("locale 3 sent 40"), "{e}");
        let mut o = r;
        o.heap_base = u64::MAX - 10;
        let e = Registration::decode(1, &o.encode()).unwrap_err();
        assert!(e.to_string().contains("heap of 1073741824 bytes"), "{e}");
        let mut o = r;
        o.heap_size = 0;
        assert!(Registration::decode(1, &o.encode()).is_err());
        let mut o = r;
        o.statics_size = u64::MAX;
        assert!(Registration::decode(1, &o.encode())
            .unwrap_err()
            .to_string()
            .contains("static data"));
    }

    #[test]
    fn names_may_differ_in_length_but_not_be_empty_or_huge() {
        let own = vec![1u8; 16];
        assert!(check_names(&[own.clone(), own.clone()], &own).is_ok());
        // shm: a pid with one digit fewer.
        assert!(check_names(&[own.clone(), vec![1u8; 15]], &own).is_ok());
        let e = check_names(&[own.clone(), vec![]], &own).unwrap_err();
        assert!(e.to_string().contains("locale 1 sent a 0-byte"), "{e}");
        let e = check_names(&[vec![1u8; MAX_NAME + 1]], &own).unwrap_err();
        assert!(e.to_string().contains("locale 0 sent a 1025-byte"), "{e}");
        let padded = names_for_av(&[vec![7u8; 3], vec![7u8; 20]], &own);
        assert_eq!(padded[0], [&[7u8; 3][..], &[0u8; 13][..]].concat());
        assert_eq!(padded[1].len(), 20);
    }

    #[test]
    fn choices_round_trip_and_garbage_is_named() {
        let c = Choice::Chosen {
            provider: "tcp;ofi_rxm".into(),
            mode: "message-order".into(),
            native_atomics: true,
            domain: "lo".into(),
        };
        assert_eq!(Choice::decode(&c.encode()).unwrap(), c);
        let f = Choice::Failed("no provider".into());
        assert_eq!(Choice::decode(&f.encode()).unwrap(), f);
        assert!(Choice::decode(b"OK\tshm\tdc\t7\tx").is_err());
        assert!(Choice::decode(b"\xff\xfe")
            .unwrap_err()
            .to_string()
            .contains("garbled"));
    }
}
