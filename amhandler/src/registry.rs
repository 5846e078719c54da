//! Function identity across locales: AM bodies are named by ids that are the
//! same on every locale (every locale runs the same program).
//!
//! Exists because a function pointer means nothing in another process. A Rust
//! body is registered under a name; its id is a stable 64-bit FNV-1a hash of
//! the name with the top bit set, so it does not depend on registration order,
//! build, or address-space layout. A C ABI (or any runtime with its own
//! numbering) registers raw ids below 2^63 instead. Two names hashing to one id
//! and a name registered twice are errors, never a silent override.

use crate::error::{Error, Result};
use crate::Ctx;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::Arc;

/// The id of an AM body, equal on every locale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FnId(pub u64);

/// Bit set in every name-derived id (raw ids must leave it clear).
pub const NAMED_BIT: u64 = 1 << 63;

/// The id `register(name, ..)` gives `name` (usable before registering, and
/// in `const` context).
pub const fn fn_id(name: &str) -> FnId {
    let b = name.as_bytes();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < b.len() {
        h ^= b[i] as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    FnId(h | NAMED_BIT)
}

/// An AM body: gets the execution context and the argument bytes, returns the
/// reply bytes (empty for none).
pub type Body = Arc<dyn Fn(&Ctx<'_>, &[u8]) -> Vec<u8> + Send + Sync>;

/// A registered body.
#[derive(Clone)]
pub(crate) struct Entry {
    pub name: Arc<str>,
    pub body: Body,
}

/// Id → body table of one locale.
#[derive(Default)]
pub struct Registry {
    map: RwLock<HashMap<u64, Entry>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("entries", &self.map.read().len())
            .finish()
    }
}

impl Registry {
    /// An empty table.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Registers `body` under `name`; returns its id ([`fn_id`]`(name)`).
    pub fn register<F>(&self, name: &str, body: F) -> Result<FnId>
    where
        F: Fn(&Ctx<'_>, &[u8]) -> Vec<u8> + Send + Sync + 'static,
    {
        let id = fn_id(name);
        self.insert(id.0, name, Arc::new(body))?;
        Ok(id)
    }

    /// Registers `body` under a caller-chosen id below 2^63 (C ABI, runtimes
    /// with their own numbering). `name` is for messages only.
    pub fn register_raw<F>(&self, id: u64, name: &str, body: F) -> Result<FnId>
    where
        F: Fn(&Ctx<'_>, &[u8]) -> Vec<u8> + Send + Sync + 'static,
    {
        if id & NAMED_BIT != 0 {
            return Err(Error::Registry(format!(
                "raw id {id:#x} for {name:?} has bit 63 set, which is reserved for name-derived ids"
            )));
        }
        self.insert(id, name, Arc::new(body))?;
        Ok(FnId(id))
    }

    fn insert(&self, id: u64, name: &str, body: Body) -> Result<()> {
        let mut m = self.map.write();
        if let Some(old) = m.get(&id) {
            return Err(Error::Registry(if &*old.name == name {
                format!("{name:?} is already registered (id {id:#x})")
            } else {
                format!(
                    "{name:?} and {:?} have the same id {id:#x}; rename one",
                    old.name
                )
            }));
        }
        m.insert(
            id,
            Entry {
                name: name.into(),
                body,
            },
        );
        Ok(())
    }

    pub(crate) fn get(&self, id: u64) -> Option<Entry> {
        self.map.read().get(&id).cloned()
    }

    /// Whether `id` is registered here.
    pub fn contains(&self, id: FnId) -> bool {
        self.map.read().contains_key(&id.0)
    }

    /// The name registered for `id`.
    pub fn name(&self, id: FnId) -> Option<String> {
        self.map.read().get(&id.0).map(|e| e.name.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_named() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c.
        assert_eq!(fn_id("a").0, 0xaf63dc4c8601ec8c | NAMED_BIT);
        assert_eq!(fn_id("hello"), fn_id("hello"));
        assert_ne!(fn_id("hello"), fn_id("hellp"));
        const ID: FnId = fn_id("const");
        assert_eq!(ID, fn_id("const"));
    }

    #[test]
    fn duplicates_and_bad_raw_ids_are_errors() {
        let r = Registry::new();
        let id = r.register("x", |_, a| a.to_vec()).unwrap();
        assert!(r.contains(id));
        assert_eq!(r.name(id).as_deref(), Some("x"));
        let e = r.register("x", |_, _| vec![]).unwrap_err().to_string();
        assert!(e.contains("already registered"), "{e}");
        let e = r
            .register_raw(NAMED_BIT | 5, "c", |_, _| vec![])
            .unwrap_err()
            .to_string();
        assert!(e.contains("bit 63"), "{e}");
        r.register_raw(5, "c", |_, _| vec![]).unwrap();
        let e = r
            .register_raw(5, "d", |_, _| vec![])
            .unwrap_err()
            .to_string();
        assert!(e.contains("same id"), "{e}");
        // A raw id equal to a name-derived one cannot happen (bit 63).
        assert!(r.register_raw(id.0, "y", |_, _| vec![]).is_err());
    }
}
