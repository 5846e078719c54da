//! The type tables of OpenSHMEM 1.5, one place for every typed family.
//!
//! Each table is a macro that hands its rows to a callback macro, so a
//! family (`shmem_TYPENAME_put`, `shmem_TYPENAME_atomic_fetch_add`, ...) is
//! written once and instantiated for every row. `include/shmem.h` spells
//! out the same tables as X-macros (`PGAS_SHMEM_RMA_TYPES(X)`, ...). No
//! test compares the two row by row: what holds them together is the
//! profiling interface's build (`build.rs` lists every function the header
//! declares and a trampoline names each one, so a row the header has and
//! these tables lack fails the build, with rustc >= 1.88), and
//! `shmem/tests/profiling_names.rs` (every exported call has its
//! profiling name, and none lacks its call).
//!
//! Rows are `TYPENAME => rust_type`: the Rust type has the C type's size
//! and, where it is a number, its representation on x86-64 / aarch64
//! Linux (`long` is 64 bits). `long double` (16 bytes) has no Rust type:
//! it travels as bytes (`[u8; 16]`) and its arithmetic is done in C.

/// Table 5 of the specification: the standard RMA types. The callback
/// gets `TYPENAME => rust_type` rows.
#[macro_export]
macro_rules! rma_types {
    ($cb:ident) => {
        $cb! {
            float => f32, double => f64, longdouble => [u8; 16], char => i8, schar => i8,
            short => i16, int => i32, long => i64, longlong => i64, uchar => u8,
            ushort => u16, uint => u32, ulong => u64, ulonglong => u64, int8 => i8,
            int16 => i16, int32 => i32, int64 => i64, uint8 => u8, uint16 => u16,
            uint32 => u32, uint64 => u64, size => u64, ptrdiff => i64,
        }
    };
}

/// Table 5 without `long double`: the types `shmem_TYPENAME_p` / `_g`
/// pass by value from Rust (`long double`'s are inline in the header,
/// over `shmem_putmem` / `shmem_getmem`).
#[macro_export]
macro_rules! rma_value_types {
    ($cb:ident) => {
        $cb! {
            float => f32, double => f64, char => i8, schar => i8,
            short => i16, int => i32, long => i64, longlong => i64, uchar => u8,
            ushort => u16, uint => u32, ulong => u64, ulonglong => u64, int8 => i8,
            int16 => i16, int32 => i32, int64 => i64, uint8 => u8, uint16 => u16,
            uint32 => u32, uint64 => u64, size => u64, ptrdiff => i64,
        }
    };
}

/// Table 6: standard AMO types (fetch, set, compare_swap, swap, inc, add).
#[macro_export]
macro_rules! amo_std_types {
    ($cb:ident) => {
        $cb! {
            int => i32, long => i64, longlong => i64, uint => u32, ulong => u64,
            ulonglong => u64, int32 => i32, int64 => i64, uint32 => u32, uint64 => u64,
            size => u64, ptrdiff => i64,
        }
    };
}

/// Table 7: extended AMO types (fetch, set, swap only).
#[macro_export]
macro_rules! amo_ext_types {
    ($cb:ident) => {
        $cb! {
            float => f32, double => f64, int => i32, long => i64, longlong => i64,
            uint => u32, ulong => u64, ulonglong => u64, int32 => i32, int64 => i64,
            uint32 => u32, uint64 => u64, size => u64, ptrdiff => i64,
        }
    };
}

/// Table 8: bitwise AMO types (and, or, xor).
#[macro_export]
macro_rules! amo_bitwise_types {
    ($cb:ident) => {
        $cb! {
            uint => u32, ulong => u64, ulonglong => u64, int32 => i32, int64 => i64,
            uint32 => u32, uint64 => u64,
        }
    };
}

/// Table 9: point-to-point synchronization types (wait_until, test, ...).
#[macro_export]
macro_rules! p2p_types {
    ($cb:ident) => {
        $cb! {
            short => i16, int => i32, long => i64, longlong => i64, ushort => u16,
            uint => u32, ulong => u64, ulonglong => u64, int32 => i32, int64 => i64,
            uint32 => u32, uint64 => u64, size => u64, ptrdiff => i64,
        }
    };
}

/// Table 10, bitwise reductions (and, or, xor).
#[macro_export]
macro_rules! reduce_bitwise_types {
    ($cb:ident) => {
        $cb! {
            uchar => u8, ushort => u16, uint => u32, ulong => u64, ulonglong => u64,
            int8 => i8, int16 => i16, int32 => i32, int64 => i64, uint8 => u8,
            uint16 => u16, uint32 => u32, uint64 => u64, size => u64,
        }
    };
}

/// Table 10, min / max reductions (long double in C: see `ldouble.c`).
#[macro_export]
macro_rules! reduce_minmax_types {
    ($cb:ident) => {
        $cb! {
            char => i8, schar => i8, short => i16, int => i32, long => i64,
            longlong => i64, ptrdiff => i64, uchar => u8, ushort => u16, uint => u32,
            ulong => u64, ulonglong => u64, int8 => i8, int16 => i16, int32 => i32,
            int64 => i64, uint8 => u8, uint16 => u16, uint32 => u32, uint64 => u64,
            size => u64, float => f32, double => f64,
        }
    };
}

/// Table 10, sum / prod reductions: the min / max types (complex and long
/// double in C).
#[macro_export]
macro_rules! reduce_arith_types {
    ($cb:ident) => {
        $crate::reduce_minmax_types! { $cb }
    };
}

/// The deprecated `*_to_all` reductions' types, integer rows (and, or,
/// xor, min, max, sum, prod).
#[macro_export]
macro_rules! to_all_int_types {
    ($cb:ident) => {
        $cb! { short => i16, int => i32, long => i64, longlong => i64, }
    };
}

/// The deprecated `*_to_all` reductions' floating rows (min, max, sum,
/// prod; long double and complex in C).
#[macro_export]
macro_rules! to_all_float_types {
    ($cb:ident) => {
        $cb! { float => f32, double => f64, }
    };
}
