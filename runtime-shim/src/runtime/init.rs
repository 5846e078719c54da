//! Start-up: the shim's knobs, the `Builder` (bodies to register, setters
//! over the environment), `init`, the pinning plan, and the hooks the
//! tasking layer calls at MCM boundaries.

use super::*;

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
            if let Err(e) = rt.flush_unordered() {
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
    pub(super) knobs: Overrides,
}

/// Knobs set through [`Builder`]'s setters (None: the environment's).
#[derive(Debug, Default, Clone)]
pub(super) struct Overrides {
    workers: Option<usize>,
    mode: Option<Option<Mode>>,
    provider: Option<String>,
    heap_size: Option<usize>,
    local_path: Option<comm_ofi::LocalPath>,
    am_handlers: Option<usize>,
}

impl Overrides {
    /// The comm layer's knobs: the environment's, then these on top.
    pub(super) fn comm_config(&self) -> Result<comm_ofi::Config> {
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
        self.init_logging(crate::logging::LogDefault::Quiet)
    }

    /// [`Builder::init`], installing a log subscriber as `default` says
    /// when neither `PGAS_LOG` nor `RUST_LOG` is set (the C ABI logs
    /// warnings by default).
    pub(crate) fn init_logging(
        self,
        default: crate::logging::LogDefault,
    ) -> Result<&'static Runtime> {
        crate::logging::install_subscriber(default);
        let mut started = INIT.lock();
        if *started {
            return Err(Error::AlreadyInitialized);
        }
        *started = true;
        let cfg = ShimConfig::from_env()?;
        let comm = Comm::init_config(self.knobs.comm_config()?)?;
        let coll = Collectives::new(&comm, cfg.barrier)?;
        // The world team's area (teams: docs/embedding.md), exchanged once.
        let world_area = crate::team_area::new_area(&comm, comm.num_locales())?;
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
                spin_waits: comm.hosts().local_count
                    <= std::thread::available_parallelism().map_or(1, |n| n.get()),
                locale: comm.here(),
                poll_window: std::time::Duration::from_micros(comm.config().poll_spin_us),
                join_runs_queued: cfg.join_runs_queued,
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
            world_areas,
            finalizing: AtomicBool::new(false),
            finalized: AtomicBool::new(false),
            names: OnceLock::new(),
        };
        if RUNTIME.set(rt).is_err() {
            return Err(Error::AlreadyInitialized);
        }
        let rt = RUNTIME.get().expect("just set");
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
        crate::logging::print_info(rt);
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
pub(super) fn pin_plan(comm: &Comm, pin: bool) -> Result<Option<Vec<usize>>> {
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
pub(super) fn am_config(comm: &Comm, cores: Option<&[usize]>) -> Result<amhandler::AmConfig> {
    let mut c = amhandler::AmConfig::from_env()?;
    c.handlers = comm.config().am_handlers;
    if c.handler_core.is_none() {
        c.handler_core = cores.and_then(|c| c.first().copied());
    }
    Ok(c)
}

/// The applied side of an unordered-AMO batch (runs in the target's handler).
pub(super) fn amo_batch_body(ctx: &amhandler::Ctx<'_>, args: &[u8]) -> Vec<u8> {
    let comm = ctx.am().comm();
    for e in args.chunks(unordered::BATCH_ENTRY) {
        let Some((addr, ty, op, operand)) = unordered::decode(e) else {
            panic!("garbled atomic batch entry from locale {}", ctx.caller());
        };
        // The initiator checked the word when the atomic was issued (its
        // heap or its static data, aligned): a failure here is a garbled
        // batch, not a user error.
        if let Err(err) = comm.check_atomic_target(comm_ofi::GlobalAddr::new(ctx.here(), addr), ty)
        {
            panic!("atomic batch entry from locale {}: {err}", ctx.caller());
        }
        // SAFETY: addr is an aligned word of this locale's registered heap or
        // static data (checked above); apply checks the (type, op) pair;
        // words targeted by atomics are only accessed atomically (the API
        // contract), and this type's atomics all take the CPU route.
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

pub(super) fn flush_here() -> Result<()> {
    match RUNTIME.get() {
        Some(rt) => rt.flush_unordered(),
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
    fn idle_wait(&self, keep_waiting: &dyn Fn() -> bool) -> bool {
        RUNTIME
            .get()
            .is_some_and(|rt| rt.am.worker_wait(keep_waiting))
    }
    fn interrupt_idle_wait(&self) {
        if let Some(rt) = RUNTIME.get() {
            rt.am.interrupt_wait();
        }
    }
}
