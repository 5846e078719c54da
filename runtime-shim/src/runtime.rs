//! The Rust API: one [`Runtime`] per process (a locale), created by
//! [`init`] / [`Builder::init`] and finalized by [`Runtime::finalize`].
//!
//! Start-up: read the shim's knobs, start the comm layer (provider and MCM
//! mode selection, registered heap), allocate the collective area, start the
//! worker pool (pinned, each worker bound to its transmit context), start the
//! AM layer with the pool as its spawner, barrier. The runtime is a
//! process-wide static, so tasks and on-statement bodies reach it as
//! `&'static Runtime` ([`Runtime::current`], [`OnCtx::rt`]), and the C ABI shares it.

use crate::collective::{BarrierKind, Collectives};
use crate::error::{Error, Result};
use crate::pod::{as_bytes, as_bytes_mut, Atom, AtomInt, Pod};
use crate::ptr::{Dist, GlobalPtr};
use crate::strided::Plan;
use crate::tasking::{Group, Hooks, Pool, PoolConfig, TaskHandle};
use crate::unordered;
use amhandler::{Am, FnId, Registry};
use comm_ofi::{AmoOp, AmoType, Comm, GlobalAddr, Locale, Mode};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();
static INIT: parking_lot::Mutex<bool> = parking_lot::Mutex::new(false);

/// Name of the internal body that applies a batch of atomics (unordered AMOs
/// on types the provider does not do natively).
const AMO_BATCH: &str = "pgas-shim.amo-batch";
/// Non-blocking operations a strided transfer keeps in flight.
const STRIDED_WINDOW: usize = 64;

/// The shim's own knobs (the comm and AM layers read theirs; the table of
/// every knob: `comm_ofi::knobs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShimConfig {
    /// `PGAS_PIN`: pin worker threads to cores (default on).
    pub pin: bool,
    /// `PGAS_BARRIER`: `put` (default) or `oob`.
    pub barrier: BarrierKind,
    /// `PGAS_CHECK`: check every PUT/GET/atomic range against the target's
    /// live allocations (default off; a debug mode, one extra round trip
    /// per remote operation).
    pub check: bool,
}

impl ShimConfig {
    /// Reads the environment; a bad value is an error naming it.
    pub fn from_env() -> Result<ShimConfig> {
        ShimConfig::from_lookup(comm_ofi::knobs::var)
    }

    /// Reads the knobs through `lookup` (tests pass a map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<ShimConfig> {
        let switch = |var: &'static str, default: bool| -> Result<bool> {
            match lookup(var) {
                None => Ok(default),
                Some(v) => Ok(comm_ofi::knobs::parse_bool(var, &v)?),
            }
        };
        let pin = switch("PGAS_PIN", true)?;
        let check = switch("PGAS_CHECK", false)?;
        let barrier = match lookup("PGAS_BARRIER") {
            None => BarrierKind::Put,
            Some(v) => match v.trim().to_ascii_lowercase().as_str() {
                "put" => BarrierKind::Put,
                "oob" => BarrierKind::Oob,
                _ => {
                    return Err(Error::Env {
                        var: "PGAS_BARRIER",
                        value: v,
                        reason: "expected put or oob".into(),
                    })
                }
            },
        };
        Ok(ShimConfig {
            pin,
            barrier,
            check,
        })
    }
}

/// What an on-statement body sees of its execution.
#[derive(Debug, Clone, Copy)]
pub struct OnCtx {
    caller: Locale,
    here: Locale,
}

impl OnCtx {
    /// The locale that started the on-statement.
    pub fn caller(&self) -> Locale {
        self.caller
    }
    /// The locale the body runs on.
    pub fn here(&self) -> Locale {
        self.here
    }
    /// The runtime (bodies run only once it is up).
    pub fn rt(&self) -> &'static Runtime {
        RUNTIME
            .get()
            .expect("on-statement bodies run only after init has completed")
    }
}

/// Wraps a user body: unordered operations it left are flushed before its
/// reply (so the caller's 'done' follows their effects).
pub(crate) fn wrap<F>(
    f: F,
) -> impl Fn(&amhandler::Ctx<'_>, &[u8]) -> Vec<u8> + Send + Sync + 'static
where
    F: Fn(&OnCtx, &[u8]) -> Vec<u8> + Send + Sync + 'static,
{
    move |ctx, args| {
        let oc = OnCtx {
            caller: ctx.caller(),
            here: ctx.here(),
        };
        let r = f(&oc, args);
        if let Some(rt) = RUNTIME.get() {
            if let Err(e) = unordered::flush(rt) {
                panic!("unordered operations of the body failed: {e}");
            }
        }
        r
    }
}

/// Registers on-statement bodies, sets knobs, then starts the runtime.
///
/// Every knob defaults to its environment variable (`comm_ofi::knobs`, the
/// README's table); a setter here overrides the variable, which is then not
/// read at all for that knob (as with tokio's `runtime::Builder`). Values
/// are checked at [`Builder::init`], with the variable's error text.
#[derive(Debug, Default)]
pub struct Builder {
    registry: Registry,
    knobs: Overrides,
}

/// Knobs set through [`Builder`]'s setters (None: the environment's).
#[derive(Debug, Default, Clone)]
struct Overrides {
    workers: Option<usize>,
    mode: Option<Option<Mode>>,
    provider: Option<String>,
    heap_size: Option<usize>,
    local_path: Option<comm_ofi::LocalPath>,
    am_handlers: Option<usize>,
}

impl Overrides {
    /// The comm layer's knobs: the environment's, then these on top.
    fn comm_config(&self) -> Result<comm_ofi::Config> {
        use comm_ofi::knobs::{check_count, BadValue};
        let mut c = comm_ofi::Config::from_env()?;
        if let Some(n) = self.workers {
            c.num_workers = check_count("PGAS_NUM_WORKERS", Some(n), &n.to_string(), 1, 1024)?;
            c.num_workers_set = true;
        }
        if let Some(m) = self.mode {
            c.mode = m;
        }
        if let Some(p) = &self.provider {
            c.provider = Some(p.clone());
        }
        if let Some(h) = self.heap_size {
            if h < (1 << 20) {
                return Err(BadValue::new(
                    "PGAS_HEAP_SIZE",
                    &h.to_string(),
                    "the heap must be at least 1M",
                )
                .into());
            }
            c.heap_size = h;
        }
        if let Some(l) = self.local_path {
            c.local_path = l;
        }
        if let Some(n) = self.am_handlers {
            c.am_handlers = check_count(
                "PGAS_AM_HANDLERS",
                Some(n),
                &n.to_string(),
                1,
                comm_ofi::env::MAX_AM_HANDLERS,
            )?;
        }
        Ok(c)
    }
}

impl Builder {
    /// A builder with no bodies.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Worker threads per locale (`PGAS_NUM_WORKERS`; 1 to 1024).
    pub fn workers(mut self, n: usize) -> Builder {
        self.knobs.workers = Some(n);
        self
    }

    /// The MCM mode (`PGAS_MCM_MODE`); `None` picks the best the provider
    /// supports (`auto`).
    pub fn mode(mut self, mode: Option<Mode>) -> Builder {
        self.knobs.mode = Some(mode);
        self
    }

    /// The libfabric provider (`PGAS_PROVIDER`).
    pub fn provider(mut self, name: &str) -> Builder {
        self.knobs.provider = Some(name.to_string());
        self
    }

    /// Registered heap bytes per locale (`PGAS_HEAP_SIZE`; at least 1M).
    pub fn heap_size(mut self, bytes: usize) -> Builder {
        self.knobs.heap_size = Some(bytes);
        self
    }

    /// How locales on one host reach each other's heaps (`PGAS_LOCAL_PATH`).
    pub fn local_path(mut self, path: comm_ofi::LocalPath) -> Builder {
        self.knobs.local_path = Some(path);
        self
    }

    /// AM handler threads (`PGAS_AM_HANDLERS`; 1 to 64): sets the comm
    /// layer's handler contexts and the AM layer's threads alike.
    pub fn am_handlers(mut self, n: usize) -> Builder {
        self.knobs.am_handlers = Some(n);
        self
    }

    /// Registers an on-statement body under `name` (its id, equal on every
    /// locale, is [`amhandler::fn_id`]`(name)`). Every locale must register
    /// the same bodies.
    pub fn register<F>(&self, name: &str, body: F) -> Result<FnId>
    where
        F: Fn(&OnCtx, &[u8]) -> Vec<u8> + Send + Sync + 'static,
    {
        Ok(self.registry.register(name, wrap(body))?)
    }

    /// Registers a body under a caller-chosen id below 2^63 (runtimes with
    /// their own numbering, the C ABI).
    pub fn register_raw<F>(&self, id: u64, name: &str, body: F) -> Result<FnId>
    where
        F: Fn(&OnCtx, &[u8]) -> Vec<u8> + Send + Sync + 'static,
    {
        Ok(self.registry.register_raw(id, name, wrap(body))?)
    }

    /// Starts the runtime (collective: every locale calls it once). Returns
    /// the process-wide runtime.
    pub fn init(self) -> Result<&'static Runtime> {
        self.init_logging(crate::diag::LogDefault::Quiet)
    }

    /// [`Builder::init`], installing a log subscriber as `default` says
    /// when neither `PGAS_LOG` nor `RUST_LOG` is set (the C ABI logs
    /// warnings by default).
    pub(crate) fn init_logging(self, default: crate::diag::LogDefault) -> Result<&'static Runtime> {
        crate::diag::install_subscriber(default);
        let mut started = INIT.lock();
        if *started {
            return Err(Error::AlreadyInitialized);
        }
        *started = true;
        let cfg = ShimConfig::from_env()?;
        let comm = Comm::init_config(self.knobs.comm_config()?)?;
        let coll = Collectives::new(&comm, cfg.barrier)?;
        // The world team's area (teams: docs/embedding.md), exchanged once.
        let world_area = crate::team::Team::new_area_on(&comm, comm.num_locales() as usize)?;
        let world_areas = comm
            .oob()
            .allgather(&world_area.to_le_bytes())
            .map_err(comm_ofi::Error::from)?
            .iter()
            .map(|b| b.as_slice().try_into().map(u64::from_le_bytes))
            .collect::<std::result::Result<Vec<u64>, _>>()
            .map_err(|_| Error::State("garbled team area address from a locale".into()))?;
        let cores = pin_plan(&comm, cfg.pin)?;
        let workers = comm.config().num_workers;
        let pool = Pool::start(
            PoolConfig {
                workers,
                cores: cores.clone(),
                block_wait: comm.provider().wait == comm_ofi::ofi::WaitMode::Block,
                locale: comm.here(),
            },
            Arc::new(CommHooks { comm: comm.clone() }),
        )?;
        let amo_batch = self.registry.register(AMO_BATCH, amo_batch_body)?;
        let check_range = crate::check::register(&self.registry)?;
        let am = match amhandler::start_with(
            comm.clone(),
            amhandler::Options {
                config: Some(am_config(&comm, cores.as_deref())?),
                spawner: Some(pool.clone()),
                registry: self.registry,
            },
        ) {
            Ok(am) => am,
            Err(e) => {
                pool.shutdown();
                return Err(e.into());
            }
        };
        let rt = Runtime {
            comm,
            am,
            pool,
            coll,
            cfg,
            cores,
            amo_batch,
            check_range,
            detached: Group::new(),
            world: OnceLock::new(),
            finalizing: AtomicBool::new(false),
            finalized: AtomicBool::new(false),
            names: OnceLock::new(),
        };
        if RUNTIME.set(rt).is_err() {
            return Err(Error::AlreadyInitialized);
        }
        let rt = RUNTIME.get().expect("just set");
        let _ = rt
            .world
            .set(crate::team::Team::world(rt, world_area, world_areas));
        // The thread that starts the runtime (the main program) gets a
        // transmit context of its own where the provider has enough.
        rt.bind_thread()?;
        // With pinning, the thread that starts the runtime stays on this
        // locale's cores too: a main thread spinning on a co-located
        // locale's core would take turns with that locale's threads.
        if let Some(cores) = &rt.cores {
            crate::pin::current_thread_to(cores);
        }
        // Nobody sends an on-statement before every locale can find its runtime.
        rt.comm.barrier()?;
        tracing::debug!(locale = rt.here(), "{}", rt.describe());
        crate::diag::print_info(rt);
        Ok(rt)
    }
}

/// Starts the runtime with no on-statement bodies of the caller's own
/// (collective). See [`Builder`] to register some.
pub fn init() -> Result<&'static Runtime> {
    Builder::new().init()
}

/// Cores for the workers: locales on one host take turns over the cores
/// this process may use, so co-located locales do not stack on core 0 (by
/// default each has as many workers as cores it owns: see comm-ofi's
/// `HostLayout::cores_owned`).
fn pin_plan(comm: &Comm, pin: bool) -> Result<Option<Vec<usize>>> {
    if !pin {
        return Ok(None);
    }
    let cores: Vec<usize> = core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect();
    if cores.is_empty() {
        tracing::warn!("cannot read the cores available to this process; workers are not pinned");
        return Ok(None);
    }
    let local_rank = comm.hosts().local_rank;
    let w = comm.config().num_workers;
    Ok(Some(
        (0..w)
            .map(|i| cores[(local_rank * w + i) % cores.len()])
            .collect(),
    ))
}

/// The AM layer's knobs; with pinned workers and no `PGAS_AM_HANDLER_CORE`,
/// its poller and handlers share this locale's first worker core (they
/// block when idle; nothing of ours spins on a core another locale owns).
/// The handler count is the comm layer's (one context each): one read of
/// `PGAS_AM_HANDLERS`, or [`Builder::am_handlers`].
fn am_config(comm: &Comm, cores: Option<&[usize]>) -> Result<amhandler::AmConfig> {
    let mut c = amhandler::AmConfig::from_env()?;
    c.handlers = comm.config().am_handlers;
    if c.handler_core.is_none() {
        c.handler_core = cores.and_then(|c| c.first().copied());
    }
    Ok(c)
}

/// The applied side of an unordered-AMO batch (runs in the target's handler).
fn amo_batch_body(ctx: &amhandler::Ctx<'_>, args: &[u8]) -> Vec<u8> {
    let heap = ctx.am().comm().heap();
    for e in args.chunks(unordered::BATCH_ENTRY) {
        let Some((addr, ty, op, operand)) = unordered::decode(e) else {
            panic!("garbled atomic batch entry from locale {}", ctx.caller());
        };
        if !heap.contains(addr, ty.size()) {
            panic!(
                "atomic target {addr:#x} (+{}) is outside the registered heap of locale {}",
                ty.size(),
                ctx.here()
            );
        }
        // SAFETY: addr lies in this locale's registered heap (checked above);
        // apply checks alignment and the (type, op) pair; words targeted by
        // atomics are only accessed atomically (the API contract), and this
        // type's atomics all go through the AM path (`Runtime::amo_native`).
        if let Err(msg) = unsafe { comm_ofi::cpu_amo::apply(addr, ty, op, operand, 0, false) } {
            panic!("{msg}");
        }
    }
    Vec::new()
}

/// The MCM boundaries and flushes, for the worker pool.
struct CommHooks {
    comm: Arc<Comm>,
}

fn flush_here() -> Result<()> {
    match RUNTIME.get() {
        Some(rt) => unordered::flush(rt),
        None => Ok(()),
    }
}

impl Hooks for CommHooks {
    fn worker_start(&self, index: usize) -> Result<()> {
        Ok(self.comm.bind_worker(index)?)
    }
    fn task_create(&self) -> Result<()> {
        Ok(self.comm.task_create()?)
    }
    fn task_end(&self) -> Result<()> {
        let flushed = flush_here();
        let ended = self.comm.task_end().map_err(Error::from);
        flushed.and(ended)
    }
    fn on_start(&self) -> Result<()> {
        Ok(self.comm.on_start()?)
    }
    fn after_job(&self) {
        if let Err(e) = flush_here() {
            tracing::error!("unordered operations of an on-statement failed: {e}");
        }
    }
    fn idle_progress(&self) {
        if let Err(e) = self.comm.progress() {
            // A failed completion on our own context: the operation's waiter
            // has returned already (an injected one has none), so say it here.
            tracing::error!("a communication operation of this thread failed: {e}");
        }
    }
    fn idle_poll(&self) -> bool {
        RUNTIME.get().is_some_and(|rt| rt.am.worker_poll())
    }
    fn idle_end(&self) {
        if let Some(rt) = RUNTIME.get() {
            rt.am.worker_idle_end();
        }
    }
}

/// An atomic operation (the C ABI's op codes are their positions, `Read` = 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// Read (fetches).
    Read,
    /// Write.
    Write,
    /// Exchange (fetches).
    Xchg,
    /// Compare-and-exchange (fetches).
    Cmpxchg,
    /// Add.
    Add,
    /// Subtract (add of the negation).
    Sub,
    /// Bitwise and (integers).
    And,
    /// Bitwise or (integers).
    Or,
    /// Bitwise xor (integers).
    Xor,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}

impl AtomicOp {
    /// Every op, in code order.
    pub const ALL: [AtomicOp; 11] = [
        AtomicOp::Read,
        AtomicOp::Write,
        AtomicOp::Xchg,
        AtomicOp::Cmpxchg,
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Min,
        AtomicOp::Max,
    ];

    /// Whether the op always returns the old value.
    pub fn always_fetches(self) -> bool {
        matches!(self, AtomicOp::Read | AtomicOp::Xchg | AtomicOp::Cmpxchg)
    }

    /// The comm layer's op and whether it fetches.
    fn lower(self, fetch: bool) -> (AmoOp, bool) {
        match self {
            AtomicOp::Read => (AmoOp::Read, true),
            AtomicOp::Write => (AmoOp::Write, false),
            AtomicOp::Xchg => (AmoOp::Write, true),
            AtomicOp::Cmpxchg => (AmoOp::CompareSwap, true),
            AtomicOp::Add | AtomicOp::Sub => (AmoOp::Add, fetch),
            AtomicOp::And => (AmoOp::And, fetch),
            AtomicOp::Or => (AmoOp::Or, fetch),
            AtomicOp::Xor => (AmoOp::Xor, fetch),
            AtomicOp::Min => (AmoOp::Min, fetch),
            AtomicOp::Max => (AmoOp::Max, fetch),
        }
    }
}

/// `-x` on the bits of a `ty` value (wrapping for integers, sign flip for floats).
fn negate_bits(ty: AmoType, bits: u64) -> u64 {
    match ty {
        AmoType::F32 => bits ^ 0x8000_0000,
        AmoType::F64 => bits ^ (1 << 63),
        _ => {
            let mask = if ty.size() == 8 {
                u64::MAX
            } else {
                (1u64 << (8 * ty.size())) - 1
            };
            bits.wrapping_neg() & mask
        }
    }
}

/// A non-blocking operation in flight that can be tested and waited for
/// ([`NbPut`], [`NbGet`], and the C ABI's raw handle).
pub trait Pending {
    /// Whether the operation has completed (drives progress).
    fn test(&mut self) -> Result<bool>;
}

impl<P: Pending + ?Sized> Pending for &mut P {
    fn test(&mut self) -> Result<bool> {
        (**self).test()
    }
}

/// A non-blocking PUT in flight. It owns its source buffer and hands it back
/// from [`NbPut::wait`]; dropping it waits. Leaking it (`mem::forget`) leaks
/// the buffer too, so the network never reads freed memory: the API is safe.
/// Not `Send`: it belongs to the creating thread's transmit context.
///
/// ```compile_fail,E0277
/// fn needs_send<T: Send>() {}
/// needs_send::<runtime_shim::NbPut<'static, u64>>();
/// ```
#[must_use = "a non-blocking PUT is only known complete once waited for"]
pub struct NbPut<'a, T: Pod> {
    // Field order is drop order: the handle waits before the buffer goes.
    handle: comm_ofi::NbHandle<'a>,
    buf: Vec<T>,
}

impl<T: Pod> std::fmt::Debug for NbPut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NbPut")
            .field("handle", &self.handle)
            .field("len", &self.buf.len())
            .finish()
    }
}

impl<T: Pod> NbPut<'_, T> {
    /// Whether the PUT has completed (its source may be reused).
    pub fn test(&mut self) -> Result<bool> {
        Ok(self.handle.test()?)
    }

    /// Waits for the PUT and returns its source buffer.
    pub fn wait(self) -> Result<Vec<T>> {
        let NbPut { handle, buf } = self;
        handle.wait()?;
        Ok(buf)
    }
}

impl<T: Pod> Pending for NbPut<'_, T> {
    fn test(&mut self) -> Result<bool> {
        NbPut::test(self)
    }
}

/// A non-blocking GET in flight, owning its destination buffer, which
/// [`NbGet::wait`] returns filled. Dropping it waits; leaking it leaks the
/// buffer (safe). Not `Send`, like [`NbPut`].
///
/// ```compile_fail,E0277
/// fn needs_send<T: Send>() {}
/// needs_send::<runtime_shim::NbGet<'static, u8>>();
/// ```
#[must_use = "the data of a non-blocking GET is only there once waited for"]
pub struct NbGet<'a, T: Pod> {
    handle: comm_ofi::NbHandle<'a>,
    buf: Vec<T>,
}

impl<T: Pod> std::fmt::Debug for NbGet<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NbGet")
            .field("handle", &self.handle)
            .field("len", &self.buf.len())
            .finish()
    }
}

impl<T: Pod> NbGet<'_, T> {
    /// Whether the GET has completed.
    pub fn test(&mut self) -> Result<bool> {
        Ok(self.handle.test()?)
    }

    /// Waits for the GET and returns the filled buffer.
    pub fn wait(self) -> Result<Vec<T>> {
        let NbGet { handle, buf } = self;
        handle.wait()?;
        Ok(buf)
    }
}

impl<T: Pod> Pending for NbGet<'_, T> {
    fn test(&mut self) -> Result<bool> {
        NbGet::test(self)
    }
}

/// The C ABI's handle: a non-blocking operation on a buffer the C caller
/// owns (the header states the contract a leak would break).
pub(crate) struct RawNb<'a>(pub(crate) comm_ofi::NbHandle<'a>);

impl Pending for RawNb<'_> {
    fn test(&mut self) -> Result<bool> {
        Ok(self.0.test()?)
    }
}

/// A remote atomic word: the atomics of [`Runtime::atomic`].
#[derive(Debug, Clone, Copy)]
pub struct AtomicRef<'a, T> {
    rt: &'a Runtime,
    ptr: GlobalPtr<T>,
}

impl<'r, T: Atom> AtomicRef<'r, T> {
    /// The runtime it belongs to.
    pub(crate) fn rt(&self) -> &'r Runtime {
        self.rt
    }

    /// The word.
    pub fn ptr(&self) -> GlobalPtr<T> {
        self.ptr
    }

    fn op(&self, op: AtomicOp, fetch: bool, v: T, cmp: T) -> Result<T> {
        let bits = self.rt.amo_bits(
            self.ptr.global_addr(),
            T::TYPE,
            op,
            fetch,
            v.to_bits64(),
            cmp.to_bits64(),
        )?;
        Ok(T::from_bits64(bits))
    }
    fn unordered(&self, op: AtomicOp, v: T) -> Result<()> {
        self.rt
            .amo_unordered_bits(self.ptr.global_addr(), T::TYPE, op, v.to_bits64())
    }

    /// Atomic read.
    pub fn read(&self) -> Result<T> {
        self.op(AtomicOp::Read, true, T::from_bits64(0), T::from_bits64(0))
    }
    /// Atomic write.
    pub fn write(&self, v: T) -> Result<()> {
        self.op(AtomicOp::Write, false, v, v).map(|_| ())
    }
    /// Atomic exchange: stores `v`, returns the old value.
    pub fn exchange(&self, v: T) -> Result<T> {
        self.op(AtomicOp::Xchg, true, v, v)
    }
    /// Compare-and-exchange: stores `new` if the value equals `current`.
    /// `Ok(Ok(old))` when it did, `Ok(Err(actual))` when it did not.
    pub fn compare_exchange(&self, current: T, new: T) -> Result<std::result::Result<T, T>> {
        let old = self.op(AtomicOp::Cmpxchg, true, new, current)?;
        Ok(if old == current { Ok(old) } else { Err(old) })
    }
    /// Adds `v`.
    pub fn add(&self, v: T) -> Result<()> {
        self.op(AtomicOp::Add, false, v, v).map(|_| ())
    }
    /// Adds `v`, returns the old value.
    pub fn fetch_add(&self, v: T) -> Result<T> {
        self.op(AtomicOp::Add, true, v, v)
    }
    /// Subtracts `v`.
    pub fn sub(&self, v: T) -> Result<()> {
        self.op(AtomicOp::Sub, false, v, v).map(|_| ())
    }
    /// Subtracts `v`, returns the old value.
    pub fn fetch_sub(&self, v: T) -> Result<T> {
        self.op(AtomicOp::Sub, true, v, v)
    }
    /// Stores the minimum of the value and `v`.
    pub fn min(&self, v: T) -> Result<()> {
        self.op(AtomicOp::Min, false, v, v).map(|_| ())
    }
    /// Minimum, returns the old value.
    pub fn fetch_min(&self, v: T) -> Result<T> {
        self.op(AtomicOp::Min, true, v, v)
    }
    /// Stores the maximum of the value and `v`.
    pub fn max(&self, v: T) -> Result<()> {
        self.op(AtomicOp::Max, false, v, v).map(|_| ())
    }
    /// Maximum, returns the old value.
    pub fn fetch_max(&self, v: T) -> Result<T> {
        self.op(AtomicOp::Max, true, v, v)
    }
    /// Unordered add: buffered, done by the task's next unordered fence (or its end).
    pub fn add_unordered(&self, v: T) -> Result<()> {
        self.unordered(AtomicOp::Add, v)
    }
    /// Unordered subtract.
    pub fn sub_unordered(&self, v: T) -> Result<()> {
        self.unordered(AtomicOp::Sub, v)
    }
    /// Unordered minimum.
    pub fn min_unordered(&self, v: T) -> Result<()> {
        self.unordered(AtomicOp::Min, v)
    }
    /// Unordered maximum.
    pub fn max_unordered(&self, v: T) -> Result<()> {
        self.unordered(AtomicOp::Max, v)
    }
}

impl<T: AtomInt> AtomicRef<'_, T> {
    /// Bitwise and.
    pub fn and(&self, v: T) -> Result<()> {
        self.op(AtomicOp::And, false, v, v).map(|_| ())
    }
    /// Bitwise and, returns the old value.
    pub fn fetch_and(&self, v: T) -> Result<T> {
        self.op(AtomicOp::And, true, v, v)
    }
    /// Bitwise or.
    pub fn or(&self, v: T) -> Result<()> {
        self.op(AtomicOp::Or, false, v, v).map(|_| ())
    }
    /// Bitwise or, returns the old value.
    pub fn fetch_or(&self, v: T) -> Result<T> {
        self.op(AtomicOp::Or, true, v, v)
    }
    /// Bitwise xor.
    pub fn xor(&self, v: T) -> Result<()> {
        self.op(AtomicOp::Xor, false, v, v).map(|_| ())
    }
    /// Bitwise xor, returns the old value.
    pub fn fetch_xor(&self, v: T) -> Result<T> {
        self.op(AtomicOp::Xor, true, v, v)
    }
    /// Unordered and.
    pub fn and_unordered(&self, v: T) -> Result<()> {
        self.unordered(AtomicOp::And, v)
    }
    /// Unordered or.
    pub fn or_unordered(&self, v: T) -> Result<()> {
        self.unordered(AtomicOp::Or, v)
    }
    /// Unordered xor.
    pub fn xor_unordered(&self, v: T) -> Result<()> {
        self.unordered(AtomicOp::Xor, v)
    }
}

/// Tasks begun in a [`Runtime::sync`] block (Chapel's `sync { begin ... }`).
/// Cloneable and `'static`: a task may begin more tasks in the same scope.
#[derive(Debug, Clone)]
pub struct Scope {
    rt: &'static Runtime,
    group: Group,
}

impl Scope {
    /// Starts a task in this scope.
    pub fn begin<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<()> {
        self.rt.check_open()?;
        self.rt.pool.spawn_in(&self.group, f)
    }
}

/// One locale's runtime.
pub struct Runtime {
    comm: Arc<Comm>,
    am: Arc<Am>,
    pool: Arc<Pool>,
    coll: Collectives,
    cfg: ShimConfig,
    cores: Option<Vec<usize>>,
    amo_batch: FnId,
    check_range: FnId,
    detached: Group,
    world: OnceLock<crate::team::Team>,
    finalizing: AtomicBool,
    finalized: AtomicBool,
    names: OnceLock<(std::ffi::CString, std::ffi::CString)>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("here", &self.here())
            .field("num_locales", &self.num_locales())
            .field("cfg", &self.cfg)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// The process's runtime, once [`init`] has returned.
    pub fn current() -> Result<&'static Runtime> {
        RUNTIME.get().ok_or(Error::NotInitialized)
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.finalized.load(Ordering::Acquire) {
            return Err(Error::Finalized);
        }
        Ok(())
    }

    pub(crate) fn check_locale(&self, locale: Locale) -> Result<()> {
        if locale >= self.num_locales() {
            return Err(Error::InvalidLocale {
                locale: locale as i64,
                num_locales: self.num_locales(),
            });
        }
        Ok(())
    }

    // ---------------------------------------------------------------- facts

    /// This locale.
    pub fn here(&self) -> Locale {
        self.comm.here()
    }
    /// Number of locales.
    pub fn num_locales(&self) -> Locale {
        self.comm.num_locales()
    }
    /// The MCM mode in force.
    pub fn mode(&self) -> Mode {
        self.comm.mode()
    }
    /// The libfabric provider in use.
    pub fn provider_name(&self) -> &str {
        &self.comm.provider().name
    }
    /// Number of worker threads on this locale.
    pub fn num_workers(&self) -> usize {
        self.pool.workers()
    }
    /// The cores the workers are pinned to (`None`: unpinned).
    pub fn worker_cores(&self) -> Option<&[usize]> {
        self.cores.as_deref()
    }
    /// The shim's knobs in force.
    pub fn config(&self) -> &ShimConfig {
        &self.cfg
    }
    /// Whether atomics on `ty` are done natively by the provider (else by
    /// CPU atomics at the word's owner: all ops of a type go one way, fixed
    /// by the comm layer at start-up).
    pub fn amo_native(&self, ty: AmoType) -> bool {
        self.comm.amo_route(ty) == comm_ofi::AmoRoute::Native
    }
    /// The comm layer underneath.
    pub fn comm(&self) -> &Arc<Comm> {
        &self.comm
    }
    /// The AM layer underneath.
    pub fn am(&self) -> &Arc<Am> {
        &self.am
    }
    /// Counters of the worker pool.
    pub fn pool_stats(&self) -> crate::tasking::PoolStats {
        self.pool.stats()
    }
    pub(crate) fn amo_batch_id(&self) -> FnId {
        self.amo_batch
    }
    pub(crate) fn check_range_id(&self) -> FnId {
        self.check_range
    }
    /// One line: mode, provider, locales, workers, pinning, barrier.
    pub fn describe(&self) -> String {
        format!(
            "{} MCM mode, {} provider, {} locales, {} workers ({}), {} barrier",
            self.mode(),
            self.provider_name(),
            self.num_locales(),
            self.num_workers(),
            if self.cores.is_some() {
                "pinned"
            } else {
                "unpinned"
            },
            self.cfg.barrier
        )
    }
    pub(crate) fn c_names(&self) -> &(std::ffi::CString, std::ffi::CString) {
        self.names.get_or_init(|| {
            let c = |s: String| std::ffi::CString::new(s.replace('\0', "")).expect("no NUL");
            (
                c(self.mode().to_string()),
                c(self.provider_name().to_string()),
            )
        })
    }

    // ------------------------------------------------------------ lifecycle

    /// Orderly, collective end: waits for every task begun (and every
    /// on-statement still running), flushes, stops the AM layer, the
    /// workers and the comm layer. Must be called by the main program, not
    /// from a task. Idempotent.
    pub fn finalize(&self) -> Result<()> {
        if Pool::in_task() || self.pool.current_worker().is_some() {
            return Err(Error::State(
                "finalize must be called by the main program, not from a task or an \
                 on-statement body"
                    .into(),
            ));
        }
        if self.finalizing.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let flushed = unordered::flush(self);
        let detached = self.pool.wait_group(&self.detached);
        // On-statements from peers still arrive and run until every locale
        // has said it sends no more: the runtime stays usable for them.
        let r = self.am.finalize().map_err(Error::from);
        self.finalized.store(true, Ordering::Release);
        flushed.and(detached).and(r)
    }

    /// Whether [`Runtime::finalize`] has been called.
    pub fn is_finalized(&self) -> bool {
        self.finalized.load(Ordering::Acquire)
    }

    /// Takes the whole job down with `msg` (through the launcher). Never returns.
    pub fn abort(&self, msg: &str) -> ! {
        self.comm
            .oob()
            .abort(&format!("locale {}: {msg}", self.here()))
    }

    // --------------------------------------------------------------- memory

    /// Allocates `n` elements of registered memory on this locale.
    pub fn alloc<T: Pod>(&self, n: usize) -> Result<GlobalPtr<T>> {
        self.check_open()?;
        let bytes = n
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(Error::InvalidLength {
                what: "allocation",
                len: n as u64,
                reason: "element count times element size overflows".into(),
            })?;
        let a = self
            .comm
            .alloc_user(bytes, std::mem::align_of::<T>().max(64))?;
        Ok(GlobalPtr::from_addr(a))
    }

    /// Frees memory from [`Runtime::alloc`] (on this locale).
    pub fn free<T: Pod>(&self, p: GlobalPtr<T>) -> Result<()> {
        Ok(self.comm.free(p.global_addr())?)
    }

    /// Collective: allocates `n` elements on every locale *at the same heap
    /// offset everywhere* (OpenSHMEM's symmetric allocation), so that a
    /// locale can compute a peer's address from its own. Zeroed. The
    /// locales agree on an offset free on all of them (each proposes its
    /// lowest fit, the largest wins, retried upwards if one cannot take it);
    /// out of memory on one locale is an error on all.
    pub fn alloc_sym<T: Pod>(&self, n: usize) -> Result<Dist<T>> {
        self.check_open()?;
        let bytes = n
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(Error::InvalidLength {
                what: "symmetric allocation",
                len: n as u64,
                reason: "element count times element size overflows".into(),
            })?;
        let heap = self.comm.heap();
        let align = std::mem::align_of::<T>().max(64);
        let world = self.world();
        let mut floor = 0usize;
        loop {
            let mine = heap
                .first_fit_from(floor, bytes, align)
                .map_or(u64::MAX, |o| o as u64);
            let offer = *world.fcollect(&[mine])?.iter().max().expect("a member");
            if offer == u64::MAX {
                return Err(Error::Comm(comm_ofi::Error::OutOfMemory {
                    size: bytes,
                    heap_size: heap.size(),
                }));
            }
            let took = heap.alloc_at(offer as usize, bytes).ok();
            let all = world.fcollect(&[took.is_some() as u8])?;
            if all.iter().all(|t| *t == 1) {
                let a = took.expect("took");
                // SAFETY: a fresh allocation of `bytes` bytes of our heap.
                unsafe { std::ptr::write_bytes(a as *mut u8, 0, bytes) };
                // Everybody zeroed before anybody uses a peer's part.
                world.barrier()?;
                let ptrs = (0..self.num_locales())
                    .map(|l| {
                        self.comm
                            .symmetric(GlobalAddr::new(self.here(), a), l)
                            .map(GlobalPtr::from_addr)
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                return Ok(Dist::new(ptrs, n, self.here()));
            }
            if let Some(a) = took {
                self.comm.free(GlobalAddr::new(self.here(), a))?;
            }
            floor = offer as usize + 64;
        }
    }

    /// Collective: allocates `n` elements on every locale and tells everyone
    /// where (a distributed array's storage). Zeroed.
    pub fn alloc_all<T: Pod>(&self, n: usize) -> Result<Dist<T>> {
        self.check_open()?;
        self.alloc_all_part(n, Ok(()))
    }

    /// [`Runtime::alloc_all`] where this locale's part may already have
    /// failed (a bad argument of a C caller): it still takes part, so every
    /// locale returns an error instead of some waiting forever.
    pub(crate) fn alloc_all_part<T: Pod>(&self, n: usize, part: Result<()>) -> Result<Dist<T>> {
        let mine = part.and_then(|()| self.alloc::<T>(n));
        // Each locale's address (0: its part failed), then its message.
        let mut contribution = Vec::with_capacity(8);
        match &mine {
            Ok(p) => {
                let bytes = n * std::mem::size_of::<T>();
                // SAFETY: a fresh allocation of `bytes` bytes in this
                // locale's registered heap, not yet known to anyone else.
                unsafe { std::ptr::write_bytes(p.addr() as *mut u8, 0, bytes) };
                contribution.extend_from_slice(&p.addr().to_le_bytes());
            }
            Err(e) => {
                contribution.extend_from_slice(&0u64.to_le_bytes());
                let msg = e.to_string();
                contribution.extend_from_slice(&msg.as_bytes()[..msg.len().min(1024)]);
            }
        }
        let all = self
            .comm
            .oob()
            .allgather(&contribution)
            .map_err(comm_ofi::Error::from)?;
        let mine = mine?;
        let mut ptrs = Vec::with_capacity(all.len());
        for (l, a) in all.iter().enumerate() {
            let w = a
                .get(..8)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_le_bytes);
            if w == 0 {
                self.free(mine)?;
                return Err(Error::Collective {
                    op: "alloc_all",
                    locale: l as Locale,
                    reason: String::from_utf8_lossy(a.get(8..).unwrap_or_default()).into_owned(),
                });
            }
            ptrs.push(GlobalPtr::new(l as Locale, w));
        }
        Ok(Dist::new(ptrs, n, self.here()))
    }

    /// Collective: frees a [`Dist`] after every locale is done with it.
    pub fn free_all<T: Pod>(&self, d: Dist<T>) -> Result<()> {
        self.barrier()?;
        self.free(d.local())
    }

    // ------------------------------------------------------------ PUT / GET

    /// Blocking PUT of `src` to `dst` (`src` may be reused on return).
    pub fn put<T: Pod>(&self, dst: GlobalPtr<T>, src: &[T]) -> Result<()> {
        self.check_open()?;
        self.check_live("PUT", dst.global_addr(), std::mem::size_of_val(src))?;
        Ok(self.comm.put(dst.global_addr(), as_bytes(src))?)
    }

    /// Blocking GET of `dst.len()` elements from `src`.
    pub fn get<T: Pod>(&self, dst: &mut [T], src: GlobalPtr<T>) -> Result<()> {
        self.check_open()?;
        self.check_live("GET", src.global_addr(), std::mem::size_of_val(dst))?;
        Ok(self.comm.get(as_bytes_mut(dst), src.global_addr())?)
    }

    /// PUT of one value.
    pub fn put_value<T: Pod>(&self, dst: GlobalPtr<T>, v: T) -> Result<()> {
        self.put(dst, std::slice::from_ref(&v))
    }

    /// GET of one value.
    pub fn get_value<T: Pod>(&self, src: GlobalPtr<T>) -> Result<T> {
        let mut v = [T::from_zero()];
        self.get(&mut v, src)?;
        Ok(v[0])
    }

    /// Non-blocking PUT of `src` (moved in; handed back by [`NbPut::wait`]).
    /// The PUT is ordered like a blocking one of the same task; it is
    /// complete by the task's next boundary at the latest.
    pub fn put_nb<T: Pod>(&self, dst: GlobalPtr<T>, src: Vec<T>) -> Result<NbPut<'_, T>> {
        self.check_open()?;
        self.check_live(
            "PUT",
            dst.global_addr(),
            std::mem::size_of_val(src.as_slice()),
        )?;
        let bytes: &[u8] = as_bytes(&src);
        // SAFETY: the slice is the heap buffer of `src`, which moves into the
        // returned NbPut next to the handle and is dropped only after it (the
        // handle waits in its Drop); if the NbPut is leaked, so is the
        // buffer, which then stays valid forever. Moving the Vec does not
        // move its heap buffer.
        let bytes: &'static [u8] =
            unsafe { std::slice::from_raw_parts(bytes.as_ptr(), bytes.len()) };
        // SAFETY: the handle is never leaked without the buffer (above).
        let handle = unsafe { self.comm.put_nb(dst.global_addr(), bytes)? };
        Ok(NbPut { handle, buf: src })
    }

    /// Non-blocking GET of `len` elements at `src` into a new buffer, handed
    /// over filled by [`NbGet::wait`].
    pub fn get_nb<T: Pod>(&self, src: GlobalPtr<T>, len: usize) -> Result<NbGet<'_, T>> {
        let buf = (0..len).map(|_| T::from_zero()).collect();
        self.get_nb_into(buf, src)
    }

    /// Non-blocking GET into `buf` (moved in, all of it filled), to reuse a
    /// buffer; see [`Runtime::get_nb`]. The read is ordered before every
    /// later PUT, atomic or on-statement of the task to `src`'s locale.
    pub fn get_nb_into<T: Pod>(&self, mut buf: Vec<T>, src: GlobalPtr<T>) -> Result<NbGet<'_, T>> {
        self.check_open()?;
        self.check_live(
            "GET",
            src.global_addr(),
            std::mem::size_of_val(buf.as_slice()),
        )?;
        let bytes = as_bytes_mut(&mut buf);
        // SAFETY: as in put_nb: the buffer lives in the NbGet beside the
        // handle, dropped after it, leaked with it.
        let bytes: &'static mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr(), bytes.len()) };
        // SAFETY: the handle is never leaked without the buffer (above).
        let handle = unsafe { self.comm.get_nb(bytes, src.global_addr())? };
        Ok(NbGet { handle, buf })
    }

    /// Waits until one of `handles` has completed and returns its index (the
    /// caller removes it and may `wait` it, which then returns at once).
    /// Mix kinds with `&mut dyn Pending` elements.
    pub fn wait_any<H: Pending>(&self, handles: &mut [H]) -> Result<usize> {
        if handles.is_empty() {
            return Err(Error::InvalidLength {
                what: "wait_any handle list",
                len: 0,
                reason: "needs at least one handle".into(),
            });
        }
        let mut found: Option<Result<usize>> = None;
        let mut check = || {
            for (i, h) in handles.iter_mut().enumerate() {
                match h.test() {
                    Ok(true) => {
                        found = Some(Ok(i));
                        return true;
                    }
                    Ok(false) => {}
                    Err(e) => {
                        found = Some(Err(e));
                        return true;
                    }
                }
            }
            false
        };
        self.pool.wait_until(&mut check);
        found.expect("wait_until returned, so check found one")
    }

    /// Strided PUT: `count[0]` contiguous elements per chunk, `count[i]`
    /// repetitions at level i, strides in elements on each side (see
    /// [`crate::strided`]). Chunks are PUT non-blocking, a window at a time.
    pub fn put_strided<T: Pod>(
        &self,
        dst: GlobalPtr<T>,
        dst_strides: &[usize],
        src: &[T],
        src_strides: &[usize],
        count: &[usize],
    ) -> Result<()> {
        self.check_open()?;
        let elem = std::mem::size_of::<T>();
        let Some(plan) = Plan::new(
            elem,
            count,
            src_strides,
            dst_strides,
            std::mem::size_of_val(src),
        )?
        else {
            return Ok(());
        };
        self.check_live(
            "strided PUT",
            dst.global_addr(),
            plan.remote_extent as usize,
        )?;
        let bytes = as_bytes(src);
        let mut window = VecDeque::with_capacity(STRIDED_WINDOW);
        for (l, r) in plan.offsets() {
            if window.len() == STRIDED_WINDOW {
                let h: comm_ofi::NbHandle<'_> = window.pop_front().expect("full window");
                h.wait()?;
            }
            let to = dst.global_addr().offset(r);
            // SAFETY: every handle of the window is waited for (or dropped,
            // which waits) before this function returns; none is leaked.
            window.push_back(unsafe { self.comm.put_nb(to, &bytes[l..l + plan.chunk])? });
        }
        for h in window {
            h.wait()?;
        }
        Ok(())
    }

    /// Strided GET (see [`Runtime::put_strided`]); `dst_strides` are the
    /// local ones. Chunks are fetched non-blocking into a staging buffer and
    /// then placed.
    pub fn get_strided<T: Pod>(
        &self,
        dst: &mut [T],
        dst_strides: &[usize],
        src: GlobalPtr<T>,
        src_strides: &[usize],
        count: &[usize],
    ) -> Result<()> {
        self.check_open()?;
        let elem = std::mem::size_of::<T>();
        let Some(plan) = Plan::new(
            elem,
            count,
            dst_strides,
            src_strides,
            std::mem::size_of_val(dst),
        )?
        else {
            return Ok(());
        };
        self.check_live(
            "strided GET",
            src.global_addr(),
            plan.remote_extent as usize,
        )?;
        let total = plan
            .chunk
            .checked_mul(plan.chunks)
            .ok_or_else(|| Error::Strides("total transfer size overflows".into()))?;
        let mut stage = vec![0u8; total];
        {
            let mut window = VecDeque::with_capacity(STRIDED_WINDOW);
            for ((_, r), piece) in plan.offsets().zip(stage.chunks_mut(plan.chunk)) {
                if window.len() == STRIDED_WINDOW {
                    let h: comm_ofi::NbHandle<'_> = window.pop_front().expect("full window");
                    h.wait()?;
                }
                // SAFETY: every handle is waited for or dropped (waits)
                // before `stage` is read or freed; none is leaked.
                window.push_back(unsafe { self.comm.get_nb(piece, src.global_addr().offset(r))? });
            }
            for h in window {
                h.wait()?;
            }
        }
        let out = as_bytes_mut(dst);
        for ((l, _), piece) in plan.offsets().zip(stage.chunks(plan.chunk)) {
            out[l..l + plan.chunk].copy_from_slice(piece);
        }
        Ok(())
    }

    // ------------------------------------------------------------ unordered

    /// Unordered PUT: buffered (the data is copied), issued at the task's
    /// next unordered fence or end. Larger than
    /// [`unordered::MAX_BYTES`]: done at once.
    pub fn put_unordered<T: Pod>(&self, dst: GlobalPtr<T>, src: &[T]) -> Result<()> {
        self.check_open()?;
        let bytes = as_bytes(src);
        if bytes.len() > unordered::MAX_BYTES {
            return self.put(dst, src);
        }
        // Checked now, so that a bad address is this call's error rather
        // than the later fence's.
        self.comm.check_range(dst.global_addr(), bytes.len())?;
        self.check_live("unordered PUT", dst.global_addr(), bytes.len())?;
        if unordered::push(unordered::Op::Put {
            dst: dst.global_addr(),
            data: bytes.to_vec(),
        }) {
            self.unordered_fence()?;
        }
        Ok(())
    }

    /// Unordered GET of `n` elements from `src` into `dst`, which must be
    /// on this locale (registered memory); the data is there after the
    /// task's next unordered fence or end.
    pub fn get_unordered<T: Pod>(
        &self,
        dst: GlobalPtr<T>,
        src: GlobalPtr<T>,
        n: usize,
    ) -> Result<()> {
        self.check_open()?;
        if dst.locale() != self.here() {
            return Err(Error::BadAddress {
                locale: dst.locale(),
                addr: dst.addr(),
                reason: format!(
                    "an unordered GET's destination must be on this locale ({})",
                    self.here()
                ),
            });
        }
        let len = n
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(Error::InvalidLength {
                what: "unordered GET",
                len: n as u64,
                reason: "element count times element size overflows".into(),
            })?;
        if !self.comm.heap().contains(dst.addr(), len) {
            return Err(Error::BadAddress {
                locale: dst.locale(),
                addr: dst.addr(),
                reason: format!(
                    "an unordered GET's destination (+{len} bytes) must lie in this locale's \
                     registered heap"
                ),
            });
        }
        self.comm.check_range(src.global_addr(), len)?;
        self.check_live("unordered GET", src.global_addr(), len)?;
        self.check_live("unordered GET", dst.global_addr(), len)?;
        if len > unordered::MAX_BYTES {
            let mut tmp = vec![0u8; len];
            self.comm.get(&mut tmp, src.global_addr())?;
            return Ok(self.comm.put(dst.global_addr(), &tmp)?);
        }
        if unordered::push(unordered::Op::Get {
            dst: dst.global_addr(),
            src: src.global_addr(),
            len,
        }) {
            self.unordered_fence()?;
        }
        Ok(())
    }

    /// Issues every unordered operation this task buffered and waits for
    /// them (also done at task end, at the end of an on-statement body, at
    /// a barrier and at finalize).
    pub fn unordered_fence(&self) -> Result<()> {
        self.check_open()?;
        unordered::flush(self)
    }

    // -------------------------------------------------------------- atomics

    /// The atomics on the word at `ptr`.
    pub fn atomic<T: Atom>(&self, ptr: GlobalPtr<T>) -> AtomicRef<'_, T> {
        AtomicRef { rt: self, ptr }
    }

    /// An atomic on raw bits (the C ABI and generic callers): `operand` and
    /// `compare` carry the value's bits in their low bytes; returns the old
    /// value's bits when the op fetches (else 0).
    pub fn amo_bits(
        &self,
        target: GlobalAddr,
        ty: AmoType,
        op: AtomicOp,
        fetch: bool,
        operand: u64,
        compare: u64,
    ) -> Result<u64> {
        self.check_open()?;
        let (aop, fetch) = op.lower(fetch);
        if !comm_ofi::cpu_amo::valid(ty, aop) {
            return Err(Error::BadAtomic { ty, op: aop });
        }
        self.check_live("atomic", target, ty.size())?;
        let operand = if op == AtomicOp::Sub {
            negate_bits(ty, operand)
        } else {
            operand
        };
        // The comm layer owns routing and ordering (comm_ofi::atomics).
        Ok(self
            .comm
            .amo(target, ty, aop, operand, compare, fetch)
            .map(|old| if fetch { old } else { 0 })?)
    }

    /// An unordered (buffered, non-fetching) atomic on raw bits. On a word
    /// mapped here it is a CPU atomic done at once (unordered semantics
    /// allow any time before the fence); otherwise it is buffered and sent
    /// with the others to the same locale at the fence.
    pub fn amo_unordered_bits(
        &self,
        target: GlobalAddr,
        ty: AmoType,
        op: AtomicOp,
        operand: u64,
    ) -> Result<()> {
        self.check_open()?;
        let (aop, _) = op.lower(false);
        if op.always_fetches() || op == AtomicOp::Write {
            return Err(Error::AtomicUse(format!(
                "{op:?} has no unordered form (add, sub, and, or, xor, min, max do)"
            )));
        }
        if !comm_ofi::cpu_amo::valid(ty, aop) {
            return Err(Error::BadAtomic { ty, op: aop });
        }
        // The heap range and alignment now, so that a bad address is this
        // call's error rather than the later fence's.
        self.comm.check_atomic_target(target, ty)?;
        self.check_live("unordered atomic", target, ty.size())?;
        let operand = if op == AtomicOp::Sub {
            negate_bits(ty, operand)
        } else {
            operand
        };
        if self.comm.amo_unordered_here(target, ty, aop, operand)? {
            return Ok(());
        }
        if unordered::push(unordered::Op::Amo {
            target,
            ty,
            op: aop,
            operand,
        }) {
            self.unordered_fence()?;
        }
        Ok(())
    }

    // -------------------------------------------------------- on-statements

    /// Blocking on-statement: runs body `f` on `locale` with `args` and
    /// returns its reply. The body runs as a task on a worker there.
    pub fn on(&self, locale: Locale, f: FnId, args: &[u8]) -> Result<Vec<u8>> {
        self.check_open()?;
        Ok(self.am.execute_on(locale, f, args)?)
    }

    /// Non-blocking on-statement (fire and forget; a failure of the body
    /// takes the job down).
    pub fn on_nb(&self, locale: Locale, f: FnId, args: &[u8]) -> Result<()> {
        self.check_open()?;
        Ok(self.am.execute_on_nb(locale, f, args)?)
    }

    /// Blocking "fast" on-statement: the body runs in the target's AM
    /// handler thread (short bodies that do no communication).
    pub fn on_fast(&self, locale: Locale, f: FnId, args: &[u8]) -> Result<Vec<u8>> {
        self.check_open()?;
        Ok(self.am.execute_on_fast(locale, f, args)?)
    }

    /// Non-blocking fast on-statement.
    pub fn on_fast_nb(&self, locale: Locale, f: FnId, args: &[u8]) -> Result<()> {
        self.check_open()?;
        Ok(self.am.execute_on_fast_nb(locale, f, args)?)
    }

    /// `coforall loc in Locales do on loc { f(args) }`: one blocking
    /// on-statement per locale, all at once (as tasks), waits for all;
    /// returns the replies by locale.
    pub fn coforall_locales(&'static self, f: FnId, args: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.check_open()?;
        let args: Arc<[u8]> = args.into();
        let mut tasks = Vec::with_capacity(self.num_locales() as usize);
        for l in 0..self.num_locales() {
            let a = args.clone();
            tasks.push(self.spawn(move || self.on(l, f, &a))?);
        }
        let mut out = Vec::with_capacity(tasks.len());
        let mut first_err = None;
        for t in tasks {
            match t.join().and_then(|r| r) {
                Ok(v) => out.push(v),
                Err(e) => {
                    first_err.get_or_insert(e);
                    out.push(Vec::new());
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    // ---------------------------------------------------------------- tasks

    /// Starts a task (Chapel's `begin`) whose value can be waited for.
    pub fn spawn<T, F>(&self, f: F) -> Result<TaskHandle<T>>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        self.check_open()?;
        self.pool.spawn(f)
    }

    /// Starts a task nobody waits for; finalize waits for it and reports
    /// its failure.
    pub fn begin<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<()> {
        self.check_open()?;
        self.pool.spawn_in(&self.detached, f)
    }

    /// Chapel's `sync { ... }`: runs `f`, then waits for every task begun in
    /// the scope (and the tasks they began in it).
    pub fn sync<R>(&'static self, f: impl FnOnce(&Scope) -> R) -> Result<R> {
        self.check_open()?;
        let scope = Scope {
            rt: self,
            group: Group::new(),
        };
        let r = f(&scope);
        self.pool.wait_group(&scope.group)?;
        Ok(r)
    }

    /// `coforall i in 0..n { f(i) }` on this locale: n tasks, waits for all.
    pub fn coforall<F>(&self, n: usize, f: F) -> Result<()>
    where
        F: Fn(usize) + Send + Sync + 'static,
    {
        self.check_open()?;
        let f = Arc::new(f);
        let g = Group::new();
        for i in 0..n {
            let f = f.clone();
            self.pool.spawn_in(&g, move || f(i))?;
        }
        self.pool.wait_group(&g)
    }

    /// Runs one ready task on this thread if it is a worker; whether it did.
    pub(crate) fn help_one(&self) -> bool {
        self.pool.help()
    }

    /// Waits until `done()` holds, running other ready tasks meanwhile when
    /// called from a task (never blocks a worker thread).
    pub fn wait_until(&self, done: impl FnMut() -> bool) {
        self.pool.wait_until(done)
    }

    /// Gives the calling thread (the main program, or a runtime's own thread
    /// that communicates) a transmit context of its own, so its blocking
    /// operations cost what they cost in a task. [`Builder::init`] binds the
    /// thread that calls it. Returns whether it got one (`false`: none left,
    /// `PGAS_THREAD_CONTEXTS`; it stays unbound, correct but slower).
    pub fn bind_thread(&self) -> Result<bool> {
        if self.pool.current_worker().is_some() {
            return Ok(true);
        }
        Ok(self.comm.bind_thread()?)
    }

    /// Gives back the context of [`Runtime::bind_thread`] (a boundary: the
    /// thread's stores are made visible first). Call it before a bound
    /// thread ends, or its context stays taken.
    pub fn unbind_thread(&self) -> Result<()> {
        if self.pool.current_worker().is_some() {
            return Ok(());
        }
        Ok(self.comm.unbind_thread()?)
    }

    /// Boundary hook for a runtime with its own tasking: a task is about to
    /// create a child (make the creator's stores visible to it).
    pub fn task_create_hook(&self) -> Result<()> {
        self.check_open()?;
        Ok(self.comm.task_create()?)
    }

    /// Boundary hook for a runtime with its own tasking: the calling task
    /// ends (flush its unordered operations, make its stores visible).
    pub fn task_end_hook(&self) -> Result<()> {
        self.check_open()?;
        let f = unordered::flush(self);
        f.and(self.comm.task_end().map_err(Error::from))
    }

    // ---------------------------------------------------------- collectives

    /// The world team (every locale, rank = locale): team collectives,
    /// splitting into smaller teams (see [`crate::Team`]).
    pub fn world(&self) -> &crate::team::Team {
        self.world.get().expect("made at init")
    }

    /// Job-wide barrier: every store issued before it (by tasks that ended
    /// or by the caller) is visible after it. Called by one task per locale.
    /// If any locale's part fails (its unordered operations, its stores),
    /// every locale gets an error (see [`Error::Collective`]).
    pub fn barrier(&self) -> Result<()> {
        self.check_open()?;
        self.barrier_part("barrier", Ok(()))
    }

    /// The barrier of collective `op`, agreeing on whether some locale's
    /// part failed (`part` is this locale's).
    pub(crate) fn barrier_part(&self, op: &'static str, part: Result<()>) -> Result<()> {
        let part = part.and_then(|()| unordered::flush(self));
        let pool = &self.pool;
        self.coll
            .barrier(&self.comm, op, part, &|c: &dyn Fn() -> bool| {
                pool.wait_until(c)
            })
    }

    /// Collective: `data` of locale 0 on every locale (ignored elsewhere).
    /// If it fails anywhere (the root's heap cannot hold a copy, ...),
    /// every locale gets an error.
    pub fn broadcast_bytes(&self, data: &[u8]) -> Result<Vec<u8>> {
        self.check_open()?;
        self.broadcast_part(data, Ok(()))
    }

    /// [`Runtime::broadcast_bytes`] where this locale's part may already
    /// have failed (a bad argument of a C caller): it still takes part.
    pub(crate) fn broadcast_part(&self, data: &[u8], part: Result<()>) -> Result<Vec<u8>> {
        self.coll.broadcast(&self.comm, data, part, &|p| {
            self.barrier_part("broadcast", p)
        })
    }

    /// Collective: locale 0's `v` on every locale.
    pub fn broadcast<T: Pod>(&self, v: T) -> Result<T> {
        let b = self.broadcast_bytes(&crate::pod::to_bytes(&v))?;
        crate::pod::from_bytes(&b).ok_or_else(|| {
            Error::State(format!(
                "broadcast returned {} bytes for a {}-byte value",
                b.len(),
                std::mem::size_of::<T>()
            ))
        })
    }
}

pub(crate) trait FromZero {
    fn from_zero() -> Self;
}

impl<T: Pod> FromZero for T {
    fn from_zero() -> T {
        crate::pod::from_bytes(&vec![0u8; std::mem::size_of::<T>()]).expect("enough bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_setters_override_the_environment() {
        let b = Builder::new()
            .workers(3)
            .mode(Some(Mode::MessageOrder))
            .provider("tcp;ofi_rxm")
            .heap_size(64 << 20)
            .local_path(comm_ofi::LocalPath::Fabric)
            .am_handlers(2);
        let c = b.knobs.comm_config().unwrap();
        assert_eq!((c.num_workers, c.num_workers_set), (3, true));
        assert_eq!(c.mode, Some(Mode::MessageOrder));
        assert_eq!(c.provider.as_deref(), Some("tcp;ofi_rxm"));
        assert_eq!(c.heap_size, 64 << 20);
        assert_eq!(c.local_path, comm_ofi::LocalPath::Fabric);
        assert_eq!(c.am_handlers, 2);
        for (b, var) in [
            (Builder::new().workers(0), "PGAS_NUM_WORKERS"),
            (Builder::new().am_handlers(65), "PGAS_AM_HANDLERS"),
            (Builder::new().heap_size(4096), "PGAS_HEAP_SIZE"),
        ] {
            let e = b.knobs.comm_config().unwrap_err().to_string();
            assert!(e.contains(var), "{e}");
        }
    }

    #[test]
    fn knobs_parse_and_name_bad_values() {
        let none = ShimConfig::from_lookup(|_| None).unwrap();
        assert!(none.pin);
        assert_eq!(none.barrier, BarrierKind::Put);
        let c = ShimConfig::from_lookup(|k| match k {
            "PGAS_PIN" => Some("0".into()),
            "PGAS_BARRIER" => Some("OOB".into()),
            _ => None,
        })
        .unwrap();
        assert!(!c.pin);
        assert_eq!(c.barrier, BarrierKind::Oob);
        let e = ShimConfig::from_lookup(|k| (k == "PGAS_PIN").then(|| "maybe".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("PGAS_PIN") && e.contains("maybe"), "{e}");
        let e = ShimConfig::from_lookup(|k| (k == "PGAS_CHECK").then(|| "maybe".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("PGAS_CHECK") && e.contains("maybe"), "{e}");
        assert!(
            ShimConfig::from_lookup(|k| (k == "PGAS_CHECK").then(|| " ON".into()))
                .unwrap()
                .check
        );
        let e = ShimConfig::from_lookup(|k| (k == "PGAS_BARRIER").then(|| "tree".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("PGAS_BARRIER") && e.contains("tree"), "{e}");
    }

    #[test]
    fn negation_of_bits() {
        assert_eq!(negate_bits(AmoType::U8, 1), 0xff);
        assert_eq!(negate_bits(AmoType::I16, 0xffff), 1);
        assert_eq!(negate_bits(AmoType::I64, 5), (-5i64) as u64);
        assert_eq!(negate_bits(AmoType::U32, 0), 0);
        assert_eq!(
            f32::from_bits(negate_bits(AmoType::F32, 1.5f32.to_bits() as u64) as u32),
            -1.5
        );
        assert_eq!(
            f64::from_bits(negate_bits(AmoType::F64, (-2.0f64).to_bits())),
            2.0
        );
    }

    #[test]
    fn ops_lower_to_the_comm_layer() {
        assert_eq!(AtomicOp::Xchg.lower(false), (AmoOp::Write, true));
        assert_eq!(AtomicOp::Sub.lower(true), (AmoOp::Add, true));
        assert_eq!(AtomicOp::Read.lower(false), (AmoOp::Read, true));
        assert_eq!(AtomicOp::Min.lower(false), (AmoOp::Min, false));
        assert!(AtomicOp::Cmpxchg.always_fetches());
    }
}
