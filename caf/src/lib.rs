//! # pgas-caf: Fortran coarrays over pgas-comm
//!
//! Exists so that a PGAS *language* runs on pgas-comm: gfortran compiles
//! coarray programs with `-fcoarray=lib` into calls of the `_gfortran_caf_*`
//! runtime ABI (GCC 12's `libgfortran/caf/libcaf.h` plus what the compiler
//! really emits: `send` takes an 11th argument, a team; `sendget` a 14th, a
//! stat; module and `save` coarrays are registered from constructors that
//! run before `main`). This crate implements that ABI over runtime-shim's
//! Rust API and builds `libpgas_caf.so` / `.a`; `bin/caf` compiles and
//! links, `bin/cafrun` launches through pgasrun (under mpirun or srun the
//! library bootstraps through PMIx by itself).
//!
//! An image is a locale. Every coarray is registered memory of each image's
//! heap; its token ([`token::Token`]) knows each image's address, so a
//! coindexed access is one runtime PUT / GET / atomic. Image control
//! statements are the runtime's MCM boundaries ([`sync`]): what an image
//! wrote before one is visible to the images it synchronises with after
//! the matching one, in every mode and on both paths.
//!
//! The ABI layer is thin: each `extern "C"` entry decodes gfortran's
//! arguments (descriptors, stat/errmsg pairs, image indices relative to the
//! current team) and calls the runtime. What a coarray program needs that
//! the runtime lacks belongs in runtime-shim. Design: `docs/coarrays.md`.

pub mod atomic;
pub mod byref;
pub mod coll;
pub mod convert;
pub mod desc;
pub mod event;
pub mod image;
pub mod lock;
pub mod register;
pub mod stat;
pub mod state;
pub mod sync;
pub mod team;
pub mod team_rec;
pub mod token;
pub mod transfer;

pub use state::Caf;
