//! Function identity across locales: AM bodies are named by ids that are the
//! same on every locale (every locale runs the same program).
//!
//! Exists because a function pointer means nothing in another process. A Rust
//! body is registered under a name; its id is a stable 64-bit FNV-1a hash of
//! the name with the top bit set, so it does not depend on registration order,
//! build, or address-space layout. A C ABI (or any runtime with its own
//! numbering) registers raw ids below 2^63 instead. Two names hashing to one id
//! and a name registered twice are errors, never a silent override.
//!
//! The table is generic over the body type `B` so that it sits below the AM
//! layer: a body takes a [`crate::Ctx`], which holds the [`crate::Am`] that
//! holds the table. `crate::am` instantiates it ([`crate::Registry`]) and
//! adds the typed `register` calls there.

use crate::error::{Error, Result};
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

/// A registered body of type `B`.
pub(crate) struct Entry<B: ?Sized> {
    pub name: Arc<str>,
    pub body: Arc<B>,
}

impl<B: ?Sized> Clone for Entry<B> {
    fn clone(&self) -> Self {
        Entry {
            name: self.name.clone(),
            body: self.body.clone(),
        }
    }
}

/// Id → body table of one locale; `B` is the body's type
/// ([`crate::Registry`] is the AM layer's).
pub struct Registry<B: ?Sized> {
    map: RwLock<HashMap<u64, Entry<B>>>,
}

impl<B: ?Sized> Default for Registry<B> {
    fn default() -> Self {
        Registry {
            map: RwLock::new(HashMap::new()),
        }
    }
}

impl<B: ?Sized> std::fmt::Debug for Registry<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("entries", &self.map.read().len())
            .finish()
    }
}

impl<B: ?Sized> Registry<B> {
    /// An empty table.
    pub fn new() -> Registry<B> {
        Registry::default()
    }

    /// Checks that a caller-chosen id leaves bit 63 clear (it is reserved
    /// for name-derived ids).
    pub(crate) fn check_raw(id: u64, name: &str) -> Result<()> {
        if id & NAMED_BIT != 0 {
            return Err(Error::Registry(format!(
                "raw id {id:#x} for {name:?} has bit 63 set, which is reserved for name-derived ids"
            )));
        }
        Ok(())
    }

    pub(crate) fn insert(&self, id: u64, name: &str, body: Arc<B>) -> Result<()> {
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

    pub(crate) fn get(&self, id: u64) -> Option<Entry<B>> {
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
    use super::{fn_id, FnId, NAMED_BIT};
    use crate::Registry;

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
