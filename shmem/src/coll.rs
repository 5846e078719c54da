//! Collectives: `shmem_team_sync`, broadcast, collect, fcollect, alltoall,
//! alltoalls and the reductions, team-based (1.5) and in the deprecated
//! active-set forms (`shmem_broadcast64`, `shmem_int_sum_to_all`,
//! `shmem_barrier`, ...).
//!
//! Each is one collective of `runtime_shim::Team` (an exchange through
//! the members' team areas followed by the team barrier, which is an MCM
//! boundary) moving bytes. A reduction over an integer or floating type is
//! the runtime's team reduction (`Team::allreduce`: one exchange for small
//! arrays, reduce-scatter and allgather for large ones); over the types
//! the runtime has no arithmetic for (complex, and `long double`, whose
//! arithmetic is C's: `ldouble.c`) it is the same team reduction with this
//! library's combining function (`Team::allreduce_with`). The active-set forms run on the team of
//! their set (`active_set.rs`: the world team, or a team the set's members
//! agree on among themselves at their first call on it); `pSync` / `pWrk`
//! are not needed: the team areas replace them.

use crate::teams::team_of;
use crate::{die, rt, OrDie};
use runtime_shim::bytemuck::{Pod, Zeroable};
use runtime_shim::team::ReduceOp;
use runtime_shim::Team;
use std::ffi::{c_int, c_void};

/// The team of a 1.5 collective, or `None` for `SHMEM_TEAM_INVALID`.
fn team(call: &str, h: *mut c_void) -> Option<Team> {
    let _ = rt(call);
    if h.is_null() {
        return None;
    }
    Some(team_of(call, h as usize).team.clone())
}

/// The team of a deprecated active-set call (`active_set.rs`), noting the
/// deprecated call (`PGAS_VERBOSE`).
fn active_set(call: &'static str, start: c_int, log_stride: c_int, size: c_int) -> Team {
    crate::deprecated::note(call);
    crate::active_set::team(call, start, log_stride, size)
}

/// `len` bytes at `p` (the caller's buffer).
fn bytes<'a>(p: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    // SAFETY: the C API's contract: `p` holds `len` readable bytes.
    unsafe { std::slice::from_raw_parts(p as *const u8, len) }
}

/// Copies `data` to `dest` (the caller's buffer of at least its length).
fn store(dest: *mut c_void, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    // SAFETY: the C API's contract: `dest` has room for the result; it may
    // alias the source, which was copied into `data` already.
    unsafe { std::ptr::copy(data.as_ptr(), dest as *mut u8, data.len()) };
}

// ---------------------------------------------------------------- sync

/// `shmem_team_sync`.
#[no_mangle]
pub extern "C" fn shmem_team_sync(team_h: *mut c_void) -> c_int {
    let call = "shmem_team_sync";
    match team(call, team_h) {
        Some(t) => {
            t.barrier().or_die(call);
            0
        }
        None => -1,
    }
}

/// `shmem_sync` (deprecated active-set form; `shmem.h` tells it from the
/// 1.5 team form, `shmem_team_sync`, by the number of arguments).
#[no_mangle]
pub extern "C" fn pgas_shmem_sync_active_set(
    start: c_int,
    log_stride: c_int,
    size: c_int,
    psync: *mut i64,
) {
    let call = "shmem_sync";
    let _ = psync;
    active_set(call, start, log_stride, size)
        .barrier()
        .or_die(call);
}

/// `shmem_barrier` (deprecated): quiet, then a barrier of the active set.
#[no_mangle]
pub extern "C" fn shmem_barrier(start: c_int, log_stride: c_int, size: c_int, psync: *mut i64) {
    let call = "shmem_barrier";
    let _ = psync;
    let t = active_set(call, start, log_stride, size);
    rt(call).quiet().or_die(call);
    t.barrier().or_die(call);
}

// ------------------------------------------------------- data movement

fn broadcast(
    call: &str,
    t: &Team,
    dest: *mut c_void,
    src: *const c_void,
    len: usize,
    root: c_int,
    to_root: bool,
) {
    if root < 0 || root as usize >= t.size() {
        die(
            call,
            format!("PE_root {root} is not in the team of {} PEs", t.size()),
        );
    }
    let me_root = t.rank() == root as usize;
    let data = if me_root { bytes(src, len) } else { &[] };
    let got = t.broadcast::<u8>(root as usize, data).or_die(call);
    if !me_root || to_root {
        store(dest, &got);
    }
}

#[allow(clippy::too_many_arguments)]
fn alltoalls(
    call: &str,
    t: &Team,
    dest: *mut c_void,
    src: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
) {
    let n = t.size();
    let mut packed = Vec::with_capacity(n * nelems * size);
    for j in 0..n * nelems {
        let s = (src as *const u8).wrapping_offset(j as isize * sst * size as isize);
        packed.extend_from_slice(bytes(s as *const c_void, size));
    }
    let got = t.alltoall::<u8>(&packed).or_die(call);
    for j in 0..n * nelems {
        let d = (dest as *mut u8).wrapping_offset(j as isize * dst * size as isize);
        store(d as *mut c_void, &got[j * size..(j + 1) * size]);
    }
}

/// The data-movement collectives for one element size, team and
/// active-set forms. `$b`/`$c`/`$f`/`$a`/`$s` are the names after
/// `shmem_`.
macro_rules! movement {
    ($($b:ident, $c:ident, $f:ident, $a:ident, $s:ident => $size:expr);* $(;)?) => { paste::paste! { $(
        /// # Safety
        /// C API: buffers of the sizes the specification gives.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $b>](team_h: *mut c_void, dest: *mut c_void, source: *const c_void, nelems: usize, root: c_int) -> c_int {
            let call = concat!("shmem_", stringify!($b));
            let Some(t) = team(call, team_h) else { return -1 };
            broadcast(call, &t, dest, source, nelems * $size, root, true);
            0
        }
        /// # Safety
        /// C API: buffers of the sizes the specification gives.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $c>](team_h: *mut c_void, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int {
            let call = concat!("shmem_", stringify!($c));
            let Some(t) = team(call, team_h) else { return -1 };
            let got = t.collect::<u8>(bytes(source, nelems * $size)).or_die(call);
            store(dest, &got);
            0
        }
        /// # Safety
        /// C API: buffers of the sizes the specification gives.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $f>](team_h: *mut c_void, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int {
            let call = concat!("shmem_", stringify!($f));
            let Some(t) = team(call, team_h) else { return -1 };
            let got = t.fcollect::<u8>(bytes(source, nelems * $size)).or_die(call);
            store(dest, &got);
            0
        }
        /// # Safety
        /// C API: buffers of the sizes the specification gives.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $a>](team_h: *mut c_void, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int {
            let call = concat!("shmem_", stringify!($a));
            let Some(t) = team(call, team_h) else { return -1 };
            let got = t.alltoall::<u8>(bytes(source, nelems * $size * t.size())).or_die(call);
            store(dest, &got);
            0
        }
        /// # Safety
        /// C API: buffers of the sizes the specification gives.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $s>](team_h: *mut c_void, dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize) -> c_int {
            let call = concat!("shmem_", stringify!($s));
            let Some(t) = team(call, team_h) else { return -1 };
            alltoalls(call, &t, dest, source, dst, sst, nelems, $size);
            0
        }
    )* } };
}

macro_rules! typed_movement {
    ($($name:ident => $t:ty),* $(,)?) => { paste::paste! {
        movement! { $([<$name _broadcast>], [<$name _collect>], [<$name _fcollect>], [<$name _alltoall>], [<$name _alltoalls>] => std::mem::size_of::<$t>());* }
    } };
}
crate::rma_types!(typed_movement);
movement! { broadcastmem, collectmem, fcollectmem, alltoallmem, alltoallsmem => 1 }

/// The deprecated active-set movement for 32- and 64-bit elements.
macro_rules! active_movement {
    ($($bits:literal => $size:expr),*) => { paste::paste! { $(
        /// # Safety
        /// C API: buffers of the sizes the specification gives.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn [<shmem_broadcast $bits>](dest: *mut c_void, source: *const c_void, nelems: usize, root: c_int, start: c_int, log_stride: c_int, size: c_int, psync: *mut i64) {
            let call = concat!("shmem_broadcast", $bits);
            let _ = psync;
            let t = active_set(call, start, log_stride, size);
            // The deprecated form leaves the root's dest alone.
            broadcast(call, &t, dest, source, nelems * $size, root, false);
        }
        /// # Safety
        /// C API: buffers of the sizes the specification gives.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn [<shmem_collect $bits>](dest: *mut c_void, source: *const c_void, nelems: usize, start: c_int, log_stride: c_int, size: c_int, psync: *mut i64) {
            let call = concat!("shmem_collect", $bits);
            let _ = psync;
            let t = active_set(call, start, log_stride, size);
            store(dest, &t.collect::<u8>(bytes(source, nelems * $size)).or_die(call));
        }
        /// # Safety
        /// C API: buffers of the sizes the specification gives.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn [<shmem_fcollect $bits>](dest: *mut c_void, source: *const c_void, nelems: usize, start: c_int, log_stride: c_int, size: c_int, psync: *mut i64) {
            let call = concat!("shmem_fcollect", $bits);
            let _ = psync;
            let t = active_set(call, start, log_stride, size);
            store(dest, &t.fcollect::<u8>(bytes(source, nelems * $size)).or_die(call));
        }
        /// # Safety
        /// C API: buffers of the sizes the specification gives.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn [<shmem_alltoall $bits>](dest: *mut c_void, source: *const c_void, nelems: usize, start: c_int, log_stride: c_int, size: c_int, psync: *mut i64) {
            let call = concat!("shmem_alltoall", $bits);
            let _ = psync;
            let t = active_set(call, start, log_stride, size);
            store(dest, &t.alltoall::<u8>(bytes(source, nelems * $size * t.size())).or_die(call));
        }
        /// # Safety
        /// C API: buffers of the sizes the specification gives.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn [<shmem_alltoalls $bits>](dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, start: c_int, log_stride: c_int, size: c_int, psync: *mut i64) {
            let call = concat!("shmem_alltoalls", $bits);
            let _ = psync;
            let t = active_set(call, start, log_stride, size);
            alltoalls(call, &t, dest, source, dst, sst, nelems, $size);
        }
    )* } };
}
active_movement! { 32 => 4, 64 => 8 }

// ---------------------------------------------------------- reductions

/// How a type is reduced over a team: always by the runtime's team
/// reductions; with its own operations where the runtime has the type,
/// with this library's arithmetic where it does not (complex, long double:
/// `Team::allreduce_with`).
pub(crate) trait Reduction: Copy {
    fn reduce(call: &str, t: &Team, dest: *mut c_void, src: *const c_void, n: usize, op: ReduceOp);
}

/// `nreduce` elements of `src` (the C caller's buffer, read unaligned).
fn read_elems<T: Pod>(src: *const c_void, nreduce: usize) -> Vec<T> {
    (0..nreduce)
        // SAFETY: `source` holds `nreduce` elements (C API contract); read
        // unaligned, as any bit pattern is a valid T.
        .map(|i| unsafe { std::ptr::read_unaligned((src as *const T).add(i)) })
        .collect()
}

/// The result into `dest` (the C caller's buffer, written unaligned).
fn write_elems<T: Pod>(dest: *mut c_void, all: Vec<T>) {
    for (i, v) in all.into_iter().enumerate() {
        // SAFETY: `dest` has room for `nreduce` elements (C API contract).
        unsafe { std::ptr::write_unaligned((dest as *mut T).add(i), v) };
    }
}

macro_rules! reduce_by_runtime {
    ($($t:ty),*) => { $(
        impl Reduction for $t {
            fn reduce(call: &str, t: &Team, dest: *mut c_void, src: *const c_void, n: usize, op: ReduceOp) {
                let all = t.allreduce(&read_elems::<$t>(src, n), op).or_die(call);
                write_elems(dest, all);
            }
        }
    )* };
}
reduce_by_runtime!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

/// How two elements of a type the runtime has no arithmetic for combine.
pub(crate) trait Combine: Pod {
    fn sum(self, o: Self) -> Self;
    fn prod(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
}

macro_rules! reduce_with_own_arithmetic {
    ($($t:ty),*) => { $(
        impl Reduction for $t {
            fn reduce(call: &str, t: &Team, dest: *mut c_void, src: *const c_void, n: usize, op: ReduceOp) {
                let f: fn(Self, Self) -> Self = match op {
                    ReduceOp::Sum => Combine::sum,
                    ReduceOp::Prod => Combine::prod,
                    ReduceOp::Min => Combine::min,
                    ReduceOp::Max => Combine::max,
                    ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => {
                        die(call, "no bitwise reduction of this type")
                    }
                };
                let all = t.allreduce_with(&read_elems::<$t>(src, n), f).or_die(call);
                write_elems(dest, all);
            }
        }
    )* };
}

/// `float _Complex` / `double _Complex`: (re, im); sum and prod only.
macro_rules! complex {
    ($($name:ident: $t:ty),*) => { $(
        #[derive(Clone, Copy, Pod, Zeroable)]
        #[bytemuck(crate = "runtime_shim::bytemuck")]
        #[repr(C)]
        pub(crate) struct $name($t, $t);

        impl Combine for $name {
            fn sum(self, o: Self) -> Self { $name(self.0 + o.0, self.1 + o.1) }
            fn prod(self, o: Self) -> Self {
                $name(self.0 * o.0 - self.1 * o.1, self.0 * o.1 + self.1 * o.0)
            }
            fn min(self, _: Self) -> Self { unreachable!("no min of complex") }
            fn max(self, _: Self) -> Self { unreachable!("no max of complex") }
        }
    )* };
}
complex!(ComplexF: f32, ComplexD: f64);

/// `long double` (x87 80-bit in 16 bytes): arithmetic in C (ldouble.c).
#[derive(Clone, Copy, Pod, Zeroable)]
#[bytemuck(crate = "runtime_shim::bytemuck")]
#[repr(C, align(16))]
pub(crate) struct LongDouble([u8; 16]);

extern "C" {
    fn pgas_shmem_ld_op(op: c_int, acc: *mut LongDouble, x: *const LongDouble);
}

impl LongDouble {
    fn op(mut self, op: c_int, o: Self) -> Self {
        // SAFETY: two valid 16-byte long doubles; the C side combines in place.
        unsafe { pgas_shmem_ld_op(op, &mut self, &o) };
        self
    }
}

impl Combine for LongDouble {
    fn sum(self, o: Self) -> Self {
        self.op(0, o)
    }
    fn prod(self, o: Self) -> Self {
        self.op(1, o)
    }
    fn min(self, o: Self) -> Self {
        self.op(2, o)
    }
    fn max(self, o: Self) -> Self {
        self.op(3, o)
    }
}

reduce_with_own_arithmetic!(ComplexF, ComplexD, LongDouble);

/// One reduction op for a table: team (`_reduce`) and active-set (`_to_all`) forms.
macro_rules! reductions {
    ($op:ident; $($name:ident => $t:ty),* $(,)?) => { paste::paste! { $(
        /// # Safety
        /// C API: `dest` and `source` hold `nreduce` elements.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $name _ $op _reduce>](team_h: *mut c_void, dest: *mut c_void, source: *const c_void, nreduce: usize) -> c_int {
            let call = concat!("shmem_", stringify!($name), "_", stringify!($op), "_reduce");
            let Some(t) = team(call, team_h) else { return -1 };
            <$t as Reduction>::reduce(call, &t, dest, source, nreduce, ReduceOp::[<$op:camel>]);
            0
        }
    )* } };
    (@to_all $op:ident; $($name:ident => $t:ty),* $(,)?) => { paste::paste! { $(
        /// # Safety
        /// C API: `dest` and `source` hold `nreduce` elements.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn [<shmem_ $name _ $op _to_all>](dest: *mut c_void, source: *const c_void, nreduce: c_int, start: c_int, log_stride: c_int, size: c_int, pwrk: *mut c_void, psync: *mut i64) {
            let call = concat!("shmem_", stringify!($name), "_", stringify!($op), "_to_all");
            let _ = (pwrk, psync);
            if nreduce < 0 {
                die(call, format!("nreduce {nreduce} is negative"));
            }
            let t = active_set(call, start, log_stride, size);
            <$t as Reduction>::reduce(call, &t, dest, source, nreduce as usize, ReduceOp::[<$op:camel>]);
        }
    )* } };
}

macro_rules! bitwise_reductions {
    ($($row:tt)*) => {
        reductions! { and; $($row)* }
        reductions! { or; $($row)* }
        reductions! { xor; $($row)* }
    };
}
macro_rules! minmax_reductions {
    ($($row:tt)*) => {
        reductions! { min; $($row)* longdouble => LongDouble }
        reductions! { max; $($row)* longdouble => LongDouble }
    };
}
macro_rules! arith_reductions {
    ($($row:tt)*) => {
        reductions! { sum; $($row)* longdouble => LongDouble, complexf => ComplexF, complexd => ComplexD }
        reductions! { prod; $($row)* longdouble => LongDouble, complexf => ComplexF, complexd => ComplexD }
    };
}
crate::reduce_bitwise_types!(bitwise_reductions);
crate::reduce_minmax_types!(minmax_reductions);
crate::reduce_arith_types!(arith_reductions);

macro_rules! to_all_int {
    ($($row:tt)*) => {
        reductions! { @to_all and; $($row)* }
        reductions! { @to_all or; $($row)* }
        reductions! { @to_all xor; $($row)* }
        reductions! { @to_all min; $($row)* }
        reductions! { @to_all max; $($row)* }
        reductions! { @to_all sum; $($row)* }
        reductions! { @to_all prod; $($row)* }
    };
}
macro_rules! to_all_float {
    ($($row:tt)*) => {
        reductions! { @to_all min; $($row)* longdouble => LongDouble }
        reductions! { @to_all max; $($row)* longdouble => LongDouble }
        reductions! { @to_all sum; $($row)* longdouble => LongDouble, complexf => ComplexF, complexd => ComplexD }
        reductions! { @to_all prod; $($row)* longdouble => LongDouble, complexf => ComplexF, complexd => ComplexD }
    };
}
crate::to_all_int_types!(to_all_int);
crate::to_all_float_types!(to_all_float);
