//! Ordering, contexts, point-to-point synchronization, signals and locks.
//!
//! * `shmem_quiet` is `Runtime::quiet` (the thread's stores and atomics
//!   complete and visible everywhere: the MCM's forcing), `shmem_fence` is
//!   `Runtime::fence` (ordered PUTs and atomics already arrive in order,
//!   target by target, in every mode; the fence issues anything buffered).
//! * A context (`shmem_ctx_t`) is a handle naming its team; its operations
//!   take the calling thread's transmit context, so a context's quiet also
//!   completes the thread's other contexts' operations (allowed: quiet
//!   promises at least its own). A context made on a team addresses PEs by
//!   their number in that team: each `shmem_ctx_*` call enters a
//!   `CtxScope` (lib.rs), and `check_pe` (every RMA, AMO and signal goes through
//!   it) translates the PE through the scope's team.
//! * `test_any` / `wait_until_any` are fair: each thread's scan starts
//!   after the index it returned last, so repeated calls without a status
//!   array do not return the same satisfied index forever.
//! * `wait_until` / `test` and their `_all/_any/_some` and vector forms are
//!   SC reads of the memory model, the runtime's point-to-point waits
//!   (`Runtime::wait_until_local`, `test_local`, and `local_words` for the
//!   arrays, whose status masks and vectors of values are applied here):
//!   they force the thread's earlier operations once, before the first
//!   load, so store buffering through them behaves as for atomics
//!   (docs/mcm.md); a wait then costs a load per word and check.
//! * Signals are `Runtime::put_with_signal`: the signal is an SC atomic
//!   ordered after the data.
//! * Locks are runtime-shim's MCS locks over the lock word on PE 0.

use crate::teams::{team_of, TEAM_WORLD};
use crate::{current_ctx, die, local_ptr, rt, sym_ptr, with_ctx, Ctx, OrDie, CTX_DEFAULT};
use runtime_shim::{Atom, Cmp, GlobalLock, LocalWords, SignalOp};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_int, c_long, c_void};

fn new_ctx(call: &str, team: usize, options: c_long, out: *mut *mut c_void) -> c_int {
    if out.is_null() {
        die(call, "the context pointer is NULL");
    }
    let _ = (rt(call), options);
    let locales = (team != TEAM_WORLD).then(|| {
        team_of(call, team)
            .team
            .locales()
            .to_vec()
            .into_boxed_slice()
    });
    if locales.is_some() {
        crate::team_ctx_made();
    }
    let p = Box::into_raw(Box::new(Ctx { team, locales })) as *mut c_void;
    // SAFETY: `out` is a writable shmem_ctx_t (C API contract, checked non-NULL).
    unsafe { out.write(p) };
    0
}

/// `shmem_ctx_create`: a context on the world team.
///
/// # Safety
/// `ctx` points at a writable `shmem_ctx_t`.
#[no_mangle]
pub unsafe extern "C" fn shmem_ctx_create(options: c_long, ctx: *mut *mut c_void) -> c_int {
    new_ctx("shmem_ctx_create", TEAM_WORLD, options, ctx)
}

/// `shmem_team_create_ctx`.
///
/// # Safety
/// `ctx` points at a writable `shmem_ctx_t`.
#[no_mangle]
pub unsafe extern "C" fn shmem_team_create_ctx(
    team: *mut c_void,
    options: c_long,
    ctx: *mut *mut c_void,
) -> c_int {
    if team.is_null() {
        return -1;
    }
    let t = team as usize;
    let _ = team_of("shmem_team_create_ctx", t);
    new_ctx("shmem_team_create_ctx", t, options, ctx)
}

/// `shmem_ctx_destroy`: quiets the context, then frees it.
///
/// # Safety
/// `ctx` came from `shmem_ctx_create` / `shmem_team_create_ctx` and is not
/// used afterwards.
#[no_mangle]
pub unsafe extern "C" fn shmem_ctx_destroy(ctx: *mut c_void) {
    let call = "shmem_ctx_destroy";
    if ctx.is_null() {
        return;
    }
    if ctx as usize == CTX_DEFAULT {
        die(call, "SHMEM_CTX_DEFAULT cannot be destroyed");
    }
    crate::rma::complete_nbi(call, Some(ctx as usize));
    rt(call).quiet().or_die(call);
    // SAFETY: made by Box::into_raw in new_ctx, destroyed once (C API contract).
    drop(unsafe { Box::from_raw(ctx as *mut Ctx) });
}

/// `shmem_ctx_get_team`.
///
/// # Safety
/// `team` points at a writable `shmem_team_t`.
#[no_mangle]
pub unsafe extern "C" fn shmem_ctx_get_team(ctx: *mut c_void, team: *mut *mut c_void) -> c_int {
    if team.is_null() {
        return -1;
    }
    let t = if ctx.is_null() {
        0
    } else if ctx as usize == CTX_DEFAULT {
        TEAM_WORLD
    } else {
        // SAFETY: a live context made by new_ctx (C API contract).
        unsafe { (*(ctx as *const Ctx)).team }
    };
    // SAFETY: `team` is writable (checked non-NULL).
    unsafe { team.write(t as *mut c_void) };
    if t == 0 {
        -1
    } else {
        0
    }
}

with_ctx! { call; quiet() {
    // The default context's quiet completes every context's _nbi (a
    // superset of its own); a context's, its own.
    let now = current_ctx();
    crate::rma::complete_nbi(call, (now > CTX_DEFAULT).then_some(now));
    rt(call).quiet().or_die(call)
} }
with_ctx! { call; fence() { rt(call).fence().or_die(call) } }

// ---------------------------------------------------------------- p2p

/// The comparison of a `SHMEM_CMP_*` constant.
pub(crate) fn cmp_of(call: &str, cmp: c_int) -> Cmp {
    match cmp {
        0 => Cmp::Eq,
        1 => Cmp::Ne,
        2 => Cmp::Gt,
        3 => Cmp::Ge,
        4 => Cmp::Lt,
        5 => Cmp::Le,
        _ => die(call, format!("{cmp} is not a SHMEM_CMP_* comparison")),
    }
}

/// Whether `ivar` (this PE's) satisfies `cmp value`: an SC read
/// (`Runtime::test_local`).
#[inline]
fn holds<T: Atom>(call: &str, ivar: *const T, cmp: Cmp, value: T) -> bool {
    let rt = rt(call);
    let p = local_ptr::<T>(call, rt, ivar as *const c_void);
    rt.test_local(p, cmp, value).or_die(call)
}

/// Waits until `ivar` (this PE's) satisfies `cmp value`: the runtime's
/// point-to-point wait (`Runtime::wait_until_local`: the address checked
/// and the SC read's forcing done once, then a load per check).
#[inline]
fn wait_until<T: Atom>(call: &str, ivar: *const T, cmp: Cmp, value: T) {
    let rt = rt(call);
    let p = local_ptr::<T>(call, rt, ivar as *const c_void);
    rt.wait_until_local(p, cmp, value).or_die(call)
}

/// This PE's `ivars[0..n]` made ready to test and wait on
/// (`Runtime::local_words`: addresses checked and the SC read's forcing
/// done once for the whole call, not per check).
fn words<T: Atom>(call: &str, ivars: *const T, n: usize) -> LocalWords<T> {
    let rt = rt(call);
    rt.local_words((0..n).map(|i| local_ptr::<T>(call, rt, ivars.wrapping_add(i) as *const c_void)))
        .or_die(call)
}

/// Whether index `i` is left out by `status` (non-zero), which may be NULL.
#[inline]
fn excluded(status: *const c_int, i: usize) -> bool {
    // SAFETY: a non-NULL status has nelems entries (C API contract).
    !status.is_null() && unsafe { *status.add(i) } != 0
}

/// The value compared against index `i`: one for all, or a vector's.
#[derive(Clone, Copy)]
enum Values<T> {
    One(T),
    Each(*const T),
}

impl<T: Copy> Values<T> {
    #[inline]
    fn at(self, i: usize) -> T {
        match self {
            Values::One(v) => v,
            // SAFETY: a vector has nelems values (C API contract).
            Values::Each(p) => unsafe { *p.add(i) },
        }
    }
}

fn test_all<T: Atom>(w: &LocalWords<T>, st: *const c_int, cmp: Cmp, v: Values<T>) -> bool {
    (0..w.len()).all(|i| excluded(st, i) || w.holds(i, cmp, v.at(i)))
}

thread_local! {
    /// Where this thread's next `test_any` / `wait_until_any` scan starts:
    /// after the index it returned last.
    static ANY_NEXT: Cell<usize> = const { Cell::new(0) };
}

/// A satisfied index (not excluded by `st`), or `usize::MAX`; the scan
/// starts after the index this thread returned last, so that repeated calls
/// give every satisfied index its turn (a fair `test_any`).
fn test_any<T: Atom>(w: &LocalWords<T>, st: *const c_int, cmp: Cmp, v: Values<T>) -> usize {
    let n = w.len();
    if n == 0 {
        return usize::MAX;
    }
    let start = ANY_NEXT.with(|c| c.get()) % n;
    let found = (start..n)
        .chain(0..start)
        .find(|&i| !excluded(st, i) && w.holds(i, cmp, v.at(i)));
    match found {
        Some(i) => {
            ANY_NEXT.with(|c| c.set(i + 1));
            i
        }
        None => usize::MAX,
    }
}

fn test_some<T: Atom>(
    w: &LocalWords<T>,
    idx: *mut usize,
    st: *const c_int,
    cmp: Cmp,
    v: Values<T>,
) -> usize {
    let mut k = 0;
    for i in 0..w.len() {
        if !excluded(st, i) && w.holds(i, cmp, v.at(i)) {
            // SAFETY: `indices` has room for nelems entries (C API contract).
            unsafe { idx.add(k).write(i) };
            k += 1;
        }
    }
    k
}

/// Waits (helping the runtime) until `done` holds.
fn wait(call: &str, mut done: impl FnMut() -> bool) {
    rt(call).wait_until(&mut done);
}

fn all_excluded(st: *const c_int, n: usize) -> bool {
    (0..n).all(|i| excluded(st, i))
}

macro_rules! p2p {
    ($($name:ident => $t:ty),* $(,)?) => { paste::paste! { $(
        /// # Safety
        /// C API: `ivar` is a symmetric object of this PE.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $name _wait_until>](ivar: *mut $t, cmp: c_int, value: $t) {
            let call = concat!("shmem_", stringify!($name), "_wait_until");
            wait_until(call, ivar, cmp_of(call, cmp), value);
        }
        /// # Safety
        /// C API: `ivar` is a symmetric object of this PE.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $name _wait>](ivar: *mut $t, value: $t) {
            let call = concat!("shmem_", stringify!($name), "_wait");
            wait_until(call, ivar, Cmp::Ne, value);
        }
        /// # Safety
        /// C API: `ivar` is a symmetric object of this PE.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $name _test>](ivar: *mut $t, cmp: c_int, value: $t) -> c_int {
            let call = concat!("shmem_", stringify!($name), "_test");
            holds(call, ivar, cmp_of(call, cmp), value) as c_int
        }
        p2p!(@vec $name $t, [<$name _wait_until_all>], [<$name _wait_until_any>], [<$name _wait_until_some>],
             [<$name _test_all>], [<$name _test_any>], [<$name _test_some>], value: $t, Values::One(value));
        p2p!(@vec $name $t, [<$name _wait_until_all_vector>], [<$name _wait_until_any_vector>], [<$name _wait_until_some_vector>],
             [<$name _test_all_vector>], [<$name _test_any_vector>], [<$name _test_some_vector>], values: *const $t, Values::Each(values));
    )* } };
    (@vec $name:ident $t:ty, $wall:ident, $wany:ident, $wsome:ident, $tall:ident, $tany:ident, $tsome:ident,
     $v:ident : $vt:ty, $vals:expr) => { paste::paste! {
        /// # Safety
        /// C API: `ivars` (and `status`, values when given) have `nelems` entries.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $wall>](ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, $v: $vt) {
            let call = concat!("shmem_", stringify!($wall));
            let c = cmp_of(call, cmp);
            let w = words(call, ivars, nelems);
            wait(call, || test_all(&w, status, c, $vals));
        }
        /// # Safety
        /// As `wait_until_all`.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $wany>](ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, $v: $vt) -> usize {
            let call = concat!("shmem_", stringify!($wany));
            let c = cmp_of(call, cmp);
            if nelems == 0 || all_excluded(status, nelems) {
                return usize::MAX;
            }
            let w = words(call, ivars, nelems);
            let mut found = usize::MAX;
            wait(call, || { found = test_any(&w, status, c, $vals); found != usize::MAX });
            found
        }
        /// # Safety
        /// As `wait_until_all`; `indices` has room for `nelems` entries.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $wsome>](ivars: *mut $t, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, $v: $vt) -> usize {
            let call = concat!("shmem_", stringify!($wsome));
            let c = cmp_of(call, cmp);
            if nelems == 0 || all_excluded(status, nelems) {
                return 0;
            }
            let w = words(call, ivars, nelems);
            let mut k = 0;
            wait(call, || { k = test_some(&w, indices, status, c, $vals); k > 0 });
            k
        }
        /// # Safety
        /// As `wait_until_all`.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $tall>](ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, $v: $vt) -> c_int {
            let call = concat!("shmem_", stringify!($tall));
            let c = cmp_of(call, cmp);
            test_all(&words(call, ivars, nelems), status, c, $vals) as c_int
        }
        /// # Safety
        /// As `wait_until_all`.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $tany>](ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, $v: $vt) -> usize {
            let call = concat!("shmem_", stringify!($tany));
            let c = cmp_of(call, cmp);
            test_any(&words(call, ivars, nelems), status, c, $vals)
        }
        /// # Safety
        /// As `wait_until_some`.
        #[no_mangle]
        pub unsafe extern "C" fn [<shmem_ $tsome>](ivars: *mut $t, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, $v: $vt) -> usize {
            let call = concat!("shmem_", stringify!($tsome));
            let c = cmp_of(call, cmp);
            test_some(&words(call, ivars, nelems), indices, status, c, $vals)
        }
    } };
}
crate::p2p_types!(p2p);

// ------------------------------------------------------------- signals

fn signal_op(call: &str, op: c_int) -> SignalOp {
    match op {
        0 => SignalOp::Set,
        1 => SignalOp::Add,
        _ => die(
            call,
            format!("{op} is not SHMEM_SIGNAL_SET (0) or SHMEM_SIGNAL_ADD (1)"),
        ),
    }
}

/// `put_signal` (`nbi` false) or `put_signal_nbi` (`nbi` true: the PUT and
/// the signal are left in flight, completed by the next quiet).
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_signal(
    call: &str,
    dest: *mut c_void,
    src: *const c_void,
    nbytes: usize,
    sig: *mut u64,
    signal: u64,
    op: c_int,
    pe: c_int,
    nbi: bool,
) {
    let rt = rt(call);
    let s = sym_ptr::<u64>(call, rt, sig as *const c_void, pe);
    let op = signal_op(call, op);
    if nbytes == 0 {
        // No data (its addresses may be NULL): the signal alone.
        if nbi {
            let req = runtime_shim::AmoRequest {
                target: s.global_addr(),
                ty: runtime_shim::AmoType::U64,
                op: match op {
                    SignalOp::Set => runtime_shim::AmoOp::Write,
                    SignalOp::Add => runtime_shim::AmoOp::Add,
                },
                operand: signal,
                compare: 0,
                fetch: false,
            };
            // SAFETY: a non-fetching atomic writes no result.
            return unsafe { rt.amo_nbi(&req, std::ptr::null_mut()) }.or_die(call);
        }
        let a = rt.atomic(s);
        return match op {
            SignalOp::Set => a.write(signal),
            SignalOp::Add => a.add(signal),
        }
        .or_die(call);
    }
    let to = sym_ptr::<u8>(call, rt, dest, pe);
    if nbi {
        // SAFETY: the C API's contract for _nbi: `src` holds `nbytes`
        // readable bytes left unchanged until the next quiet, which waits
        // for the handle (kept in rma's per-thread list) before returning.
        let data: &'static [u8] = unsafe { std::slice::from_raw_parts(src as *const u8, nbytes) };
        // SAFETY: as above; the handle is never leaked.
        let h =
            unsafe { rt.put_with_signal_nbi(to.global_addr(), data, s, op, signal) }.or_die(call);
        return crate::rma::remember(h);
    }
    // SAFETY: `src` holds `nbytes` readable bytes (C API contract).
    let data = unsafe { std::slice::from_raw_parts(src as *const u8, nbytes) };
    rt.put_with_signal(to, data, s, op, signal).or_die(call)
}

macro_rules! signal_family {
    ($($p:ident => $size:expr);* $(;)?) => { paste::paste! { $(
        with_ctx! { call; [<$p _signal>](dest: *mut c_void, source: *const c_void, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int) {
            put_signal(call, dest, source, nelems * $size, sig_addr, signal, sig_op, pe, false)
        } }
        with_ctx! { call; [<$p _signal_nbi>](dest: *mut c_void, source: *const c_void, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int) {
            put_signal(call, dest, source, nelems * $size, sig_addr, signal, sig_op, pe, true)
        } }
    )* } };
}
macro_rules! typed_signal {
    ($($name:ident => $t:ty),* $(,)?) => { paste::paste! {
        signal_family! { $([<$name _put>] => std::mem::size_of::<$t>());* }
    } };
}
crate::rma_types!(typed_signal);
signal_family! { putmem => 1; put8 => 1; put16 => 2; put32 => 4; put64 => 8; put128 => 16 }

/// `shmem_signal_fetch`: an SC read of this PE's signal word.
///
/// # Safety
/// `sig_addr` is a symmetric `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn shmem_signal_fetch(sig_addr: *const u64) -> u64 {
    let call = "shmem_signal_fetch";
    let rt = rt(call);
    rt.atomic(local_ptr::<u64>(call, rt, sig_addr as *const c_void))
        .read()
        .or_die(call)
}

/// `shmem_signal_wait_until`: waits, then returns the signal's value.
///
/// # Safety
/// `sig_addr` is a symmetric `uint64_t` of this PE.
#[no_mangle]
pub unsafe extern "C" fn shmem_signal_wait_until(
    sig_addr: *mut u64,
    cmp: c_int,
    value: u64,
) -> u64 {
    let call = "shmem_signal_wait_until";
    wait_until(call, sig_addr, cmp_of(call, cmp), value);
    // SAFETY: same contract.
    unsafe { shmem_signal_fetch(sig_addr) }
}

// --------------------------------------------------------------- locks

thread_local! {
    /// Locks this thread holds: lock word address -> token of its queue node.
    static HELD: RefCell<HashMap<u64, u64>> = RefCell::new(HashMap::new());
}

fn lock_of(call: &str, lock: *mut c_long) -> GlobalLock {
    let rt = rt(call);
    GlobalLock::at(sym_ptr::<u64>(call, rt, lock as *const c_void, 0))
}

/// `shmem_set_lock`.
///
/// # Safety
/// `lock` is a symmetric `long`, zero-initialized on every PE.
#[no_mangle]
pub unsafe extern "C" fn shmem_set_lock(lock: *mut c_long) {
    let call = "shmem_set_lock";
    if HELD.with(|h| h.borrow().contains_key(&(lock as u64))) {
        die(
            call,
            format!("the lock at {lock:p} is already held by this thread"),
        );
    }
    let l = lock_of(call, lock);
    let token = rt(call).lock_raw(l).or_die(call);
    HELD.with(|h| h.borrow_mut().insert(lock as u64, token));
}

/// `shmem_test_lock`: 0 when acquired, 1 when held elsewhere.
///
/// # Safety
/// As `shmem_set_lock`.
#[no_mangle]
pub unsafe extern "C" fn shmem_test_lock(lock: *mut c_long) -> c_int {
    let call = "shmem_test_lock";
    if HELD.with(|h| h.borrow().contains_key(&(lock as u64))) {
        return 1;
    }
    let l = lock_of(call, lock);
    match rt(call).try_lock_raw(l).or_die(call) {
        Some(token) => {
            HELD.with(|h| h.borrow_mut().insert(lock as u64, token));
            0
        }
        None => 1,
    }
}

/// `shmem_clear_lock`: releases, after this thread's stores are visible.
///
/// # Safety
/// As `shmem_set_lock`.
#[no_mangle]
pub unsafe extern "C" fn shmem_clear_lock(lock: *mut c_long) {
    let call = "shmem_clear_lock";
    let Some(token) = HELD.with(|h| h.borrow_mut().remove(&(lock as u64))) else {
        die(
            call,
            format!("the lock at {lock:p} is not held by this thread"),
        );
    };
    let l = lock_of(call, lock);
    let rt = rt(call);
    rt.quiet().or_die(call);
    rt.unlock_raw(l, token).or_die(call);
}
