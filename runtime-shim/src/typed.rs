//! Typed on-statements (feature `serde`): bodies that take and return Rust
//! values instead of bytes.
//!
//! Exists so that a Rust program need not hand-encode every argument: a
//! body registered with [`crate::Builder::register_typed`] gets its
//! argument decoded and its reply encoded ([postcard], a compact serde
//! format: varint integers, no field names; like every non-self-describing
//! format it cannot carry types that need `deserialize_any`, such as
//! `#[serde(untagged)]` enums), and
//! [`crate::Runtime::on_typed`] returns the decoded reply. A value that does
//! not decode (a locale running another build) is an error reply naming the
//! body, not a crash.

use crate::error::{Error, Result};
use crate::runtime::init::{Builder, OnCtx};
use crate::runtime::Runtime;
use amhandler::FnId;
use comm_ofi::Locale;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::marker::PhantomData;

/// A registered typed body: its id, with the argument and reply types.
pub struct TypedFn<A, R> {
    id: FnId,
    name: &'static str,
    _types: PhantomData<fn(A) -> R>,
}

impl<A, R> Clone for TypedFn<A, R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A, R> Copy for TypedFn<A, R> {}

impl<A, R> std::fmt::Debug for TypedFn<A, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedFn")
            .field("id", &self.id)
            .field("name", &self.name)
            .finish()
    }
}

impl<A, R> TypedFn<A, R> {
    /// The untyped id (for `Runtime::on` with hand-encoded bytes).
    pub fn id(&self) -> FnId {
        self.id
    }
}

fn encode<T: Serialize>(what: &str, v: &T) -> Result<Vec<u8>> {
    postcard::to_allocvec(v).map_err(|e| Error::State(format!("cannot encode {what}: {e}")))
}

impl Builder {
    /// Registers a typed body under `name` (same on every locale): it gets
    /// the caller's argument as an `A` and its `R` goes back as the reply.
    pub fn register_typed<A, R, F>(&self, name: &'static str, body: F) -> Result<TypedFn<A, R>>
    where
        A: DeserializeOwned,
        R: Serialize,
        F: Fn(&OnCtx, A) -> R + Send + Sync + 'static,
    {
        let id = self.register(name, move |ctx, bytes| {
            let a: A = postcard::from_bytes(bytes).unwrap_or_else(|e| {
                panic!(
                    "typed body {name:?}: the argument from locale {} does not decode as {}: {e}",
                    ctx.caller(),
                    std::any::type_name::<A>()
                )
            });
            postcard::to_allocvec(&body(ctx, a))
                .unwrap_or_else(|e| panic!("typed body {name:?}: cannot encode its reply: {e}"))
        })?;
        Ok(TypedFn {
            id,
            name,
            _types: PhantomData,
        })
    }
}

impl Runtime {
    /// Blocking typed on-statement: runs `f` on `locale` with `arg`.
    pub fn on_typed<A: Serialize, R: DeserializeOwned>(
        &self,
        locale: Locale,
        f: TypedFn<A, R>,
        arg: &A,
    ) -> Result<R> {
        let reply = self.on(locale, f.id, &encode("the argument", arg)?)?;
        postcard::from_bytes(&reply).map_err(|e| {
            Error::State(format!(
                "the reply of typed body {:?} from locale {locale} does not decode as {}: {e}",
                f.name,
                std::any::type_name::<R>()
            ))
        })
    }

    /// Non-blocking typed on-statement (the reply is dropped).
    pub fn on_nb_typed<A: Serialize, R>(
        &self,
        locale: Locale,
        f: TypedFn<A, R>,
        arg: &A,
    ) -> Result<()> {
        self.on_nb(locale, f.id, &encode("the argument", arg)?)
    }
}
