//! The C ABI: `include/pgas_shim.h`.
//!
//! Every function returns `PGAS_OK` (0) or a negative `PGAS_ERR_*` code and
//! keeps the error's message for `pgas_last_error` (per thread); none of them
//! lets a Rust panic cross into C. Bad input (a null pointer, a locale out of
//! range, a zero or oversized length, an unknown atomic type or op, a bad
//! stride description, an unregistered function id) is an error code, never
//! a crash. Remote addresses are the target's virtual addresses (`void *`),
//! as the target's `pgas_alloc` / `pgas_alloc_all` returned them.
//!
//! The header is written by hand; `tests/header.rs` checks that it declares
//! exactly these functions with matching parameter types, and that its
//! constants equal the Rust ones.
//!
//! The functions live in one file per area, all re-exported here (the
//! symbols are the same whatever file holds them): `lifecycle` (register,
//! init, queries, finalize, errors, version), `memory` (allocation, symmetric
//! and static addresses), `rma` (PUT/GET), `amo` (atomics), `on`
//! (on-statements), `tasks`, `team` (teams and collectives), `sync`
//! (point-to-point synchronisation, quiet/fence, locks), `diags` (comm
//! diagnostics). What they share (handle types, the last-error slot, the
//! panic-catching wrapper, the argument checks) is in `common`, which
//! imports none of them; each imports only `common` (and the `by_type!`
//! macro below), and this file re-exports them all.

// The functions take raw pointers from C: each one checks them for null and
// documents the caller's obligations in the header.
#![allow(clippy::missing_safety_doc)]

/// Calls `$f::<T>(args)` with `T` the Rust type of the C atomic type code.
macro_rules! by_type {
    ($ty:expr, $f:ident, $($a:expr),*) => {
        match amo_type($ty)? {
            AmoType::I8 => $f::<i8>($($a),*),
            AmoType::I16 => $f::<i16>($($a),*),
            AmoType::I32 => $f::<i32>($($a),*),
            AmoType::I64 => $f::<i64>($($a),*),
            AmoType::U8 => $f::<u8>($($a),*),
            AmoType::U16 => $f::<u16>($($a),*),
            AmoType::U32 => $f::<u32>($($a),*),
            AmoType::U64 => $f::<u64>($($a),*),
            AmoType::F32 => $f::<f32>($($a),*),
            AmoType::F64 => $f::<f64>($($a),*),
        }
    };
}

mod common;

mod amo;
mod diags;
mod lifecycle;
mod memory;
mod on;
mod rma;
mod sync;
mod tasks;
mod team;

pub use common::{OnFn, PgasHandle, PgasOnCtx, PgasTask, TaskFn, AMO_FETCH, AMO_UNORDERED};

pub use amo::*;
pub use diags::*;
pub use lifecycle::*;
pub use memory::*;
pub use on::*;
pub use rma::*;
pub use sync::*;
pub use tasks::*;
pub use team::*;
