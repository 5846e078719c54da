//! The threads that receive AMs: one poller per locale and the handler
//! thread(s), plus the start-up that posts the landing zones.
//!
//! Exists to split the two jobs the original's single AM handler does,
//! because here they cannot share a thread without deadlock:
//!
//! * the **poller** is the only thread that calls `Comm::poll_rx`. It parses
//!   each request out of the landing zone, copies it and routes it (handler
//!   queue, executor, or done on the spot for Free / Shutdown), and reposts a
//!   landing-zone half when the provider retires it. It never waits for the
//!   network: on providers with manual progress (shm, tcp;ofi_rxm,
//!   udp;ofi_rxd) RMA that targets this locale only advances while somebody
//!   polls, and the initiator of that RMA may be the peer whose reply we
//!   would be waiting for.
//! * the **handler threads** (`PGAS_AM_HANDLERS`, default 1) run fast bodies,
//!   atomics and no-ops and send their replies, which are blocking sends or
//!   PUTs through the handler's own transmit context (or stores into a
//!   mapped initiator's slot). Only one thread can poll the
//!   receive CQ safely (the landing zones are reposted by it, in order), so
//!   more than one handler means more threads consuming the handler queue,
//!   not more pollers; with more than one, fast AMs of one sender no longer
//!   run in send order.
//!
//! Both spin with `yield_now` when idle (the poller keeps spinning, and sleeps
//! 20 us between polls after a long idle stretch; handler threads park after
//! a while and are woken by the poller). On providers whose CQ waits block
//! (`sockets`), the poller blocks in `poll_rx` with a 50 ms timeout instead
//! of spinning. Non-fast bodies go to the [`Spawner`] (executor threads).

use crate::am::Registry;
use crate::am::{Am, IS_HANDLER};
use crate::config::AmConfig;
use crate::error::{Error, Result};
use crate::executor::{Executor, Spawner};
use crate::poll::{PollState, COVER_WAIT_MS};
use crate::wire::MAX_REQUEST;
use comm_ofi::ofi::{CqEntry, RecvCompletion, WaitMode};
use comm_ofi::Comm;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// How [`crate::start_with`] is set up.
#[derive(Default)]
pub struct Options {
    /// Knobs; `None` reads the environment ([`AmConfig::from_env`]).
    pub config: Option<AmConfig>,
    /// Where non-fast bodies run; `None` starts the built-in [`Executor`].
    pub spawner: Option<Arc<dyn Spawner>>,
    /// Bodies registered before any request can arrive.
    pub registry: Registry,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("config", &self.config)
            .field("spawner", &self.spawner.is_some())
            .field("registry", &self.registry)
            .finish()
    }
}

/// Poll timeout on blocking CQs (bounds how long finalize waits for the poller).
const BLOCK_POLL_MS: i32 = 50;
/// How long a landing-zone half may stay unposted before the job is taken
/// down (instead of hanging every sender).
const REPOST_GIVE_UP: Duration = Duration::from_secs(5);
/// Idle rounds (each a `yield_now`) a handler thread spends before it parks.
const HANDLER_YIELDS: u32 = 2048;
/// ... and at most this long. The handler shares its core with the
/// locale's other threads (the thread budget), so a yield hands the core to
/// a thread that may be yielding too (a caller waiting for its reply): the
/// handler's 2048 startup yields, stretched over seconds while the main
/// thread computed, then alternated with a waiting caller every ~5 us for
/// the rest of its yields (seen with `perf sched` as 12-18 us round trips
/// in on-statement loops). Handlers now also start parked.
const HANDLER_YIELD_WINDOW: Duration = Duration::from_micros(100);

fn pin(core: Option<usize>, what: &str) {
    if let Some(c) = core {
        if !core_affinity::set_for_current(core_affinity::CoreId { id: c }) {
            tracing::warn!("cannot pin the AM {what} thread to core {c}");
        }
    }
}

fn check_core(core: Option<usize>) -> Result<()> {
    let Some(c) = core else { return Ok(()) };
    let ids: Vec<usize> = core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect();
    if ids.contains(&c) {
        Ok(())
    } else {
        Err(Error::Env {
            var: "PGAS_AM_HANDLER_CORE",
            value: c.to_string(),
            reason: format!("no such core available to this process; available: {ids:?}"),
        })
    }
}

/// The comm layer reserved one transmit context per AM handler when it
/// started (`comm_ofi::Config::am_handlers`, from `PGAS_AM_HANDLERS`): the
/// AM layer may not start more handler threads than that (an `AmConfig`
/// built by hand asking for more would otherwise abort in the extra
/// threads). Fewer leave contexts unused.
fn check_handlers(comm: &Comm, handlers: usize) -> Result<()> {
    let contexts = comm.config().am_handlers;
    if handlers <= contexts {
        return Ok(());
    }
    Err(Error::Env {
        var: "PGAS_AM_HANDLERS",
        value: handlers.to_string(),
        reason: format!(
            "AmConfig asks for {handlers} AM handler threads, but the comm layer reserved \
             transmit contexts for {contexts}; set PGAS_AM_HANDLERS (or \
             comm_ofi::Config::am_handlers before Comm::init) to {handlers}"
        ),
    })
}

/// Starts the AM layer on this locale (collective: every locale calls it
/// after `Comm::init`, before sending any AM). See [`start_with`].
pub fn start(comm: Arc<Comm>) -> Result<Arc<Am>> {
    start_with(comm, Options::default())
}

/// Starts the AM layer: allocates and posts the landing zones, takes over
/// receive progress from comm-ofi, starts the poller, handler and executor
/// threads, installs the AMO fallback, and barriers (so no locale sends
/// before every locale can receive).
pub fn start_with(comm: Arc<Comm>, opts: Options) -> Result<Arc<Am>> {
    let cfg = match opts.config {
        Some(c) => c,
        None => AmConfig::from_env()?,
    };
    check_handlers(&comm, cfg.handlers)?;
    // A postponed AMO's order rests on its target's handlers: every locale
    // must postpone alike (comm-ofi agreed PGAS_AM_HANDLERS already).
    comm.agree(&[(
        "PGAS_AM_AMO_DELAY",
        u8::from(cfg.delay_amo_done).to_string(),
    )])?;
    check_core(cfg.handler_core)?;
    let half = cfg.lz_half();
    let n = comm.num_locales();
    // Every request fits: the provider retires a half once less than this is
    // left in it (locales x contexts x largest request, as the original,
    // capped at 10 % of a half and never below one request).
    let min_multi_recv = (n * MAX_REQUEST).clamp(MAX_REQUEST, half / 10);
    let lz = comm.alloc(2 * half, 4096).map_err(|e| Error::Env {
        var: "PGAS_AM_LZ_SIZE",
        value: cfg.lz_size.to_string(),
        reason: format!("cannot allocate the landing zone in the registered heap ({e}); lower it or raise PGAS_HEAP_SIZE"),
    })?;
    let spawner: Arc<dyn Spawner> = match opts.spawner {
        Some(s) => s,
        None => Executor::start(cfg.executors, comm.here())?,
    };
    let block_wait = comm.provider().wait == WaitMode::Block;
    let am = Am::new(
        comm.clone(),
        cfg.clone(),
        opts.registry,
        spawner,
        lz.addr,
        half,
        block_wait,
    );

    am.reserve_buffers()?;
    let port = comm.am_port();
    port.take_over_polling();
    port.set_min_multi_recv(min_multi_recv)?;
    for i in 0..2 {
        // SAFETY: each half is a distinct part of a heap allocation that the
        // Am keeps (never freed) and that nothing else touches; it stays the
        // provider's until retired.
        unsafe { port.post_landing_zone((lz.addr + (i * half) as u64) as *mut u8, half, i + 1)? };
    }
    let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name.clone())
            .spawn(f)
            .map_err(|e| Error::Thread {
                name,
                error: e.to_string(),
            })
    };
    let a = am.clone();
    let core = cfg.handler_core;
    let poller = spawn(
        format!("pgas-am-poll-{}", comm.here()),
        Box::new(move || {
            pin(core, "poller");
            if let Err(e) = a.comm.am_port().bind_am_poller() {
                a.abort(&format!("AM poller: {e}"));
            }
            poll_loop(&a)
        }),
    )?;
    *am.poller.lock() = Some(poller);
    for i in 0..cfg.handlers {
        let a = am.clone();
        let h = spawn(
            format!("pgas-am-handler-{}-{i}", comm.here()),
            Box::new(move || {
                pin(core, "handler");
                if let Err(e) = a.comm.am_port().bind_handler(i) {
                    a.abort(&format!("AM handler {i}: {e}"));
                }
                handler_loop(&a)
            }),
        )?;
        am.handlers.lock().push(h);
    }
    comm.install_am_layer(Arc::new(crate::am::seam::Bridge(Arc::downgrade(&am))));
    comm.barrier()?;
    tracing::debug!(
        locale = comm.here(),
        lz_half = half,
        min_multi_recv,
        handlers = cfg.handlers,
        executors = cfg.executors,
        "AM layer started"
    );
    Ok(am)
}

std::thread_local! {
    /// The Am (address) this thread covers for, 0 if none.
    static COVERING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Set while a runtime worker polls ([`Am::worker_poll`]): a blocking
    /// fast body it receives runs as a task on it (no hop to the handler).
    static WORKER_POLLING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Set while this thread waits in the receive CQ as a coverer (its own
    /// hand-overs need not interrupt that wait).
    static IN_CQ_WAIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Am {
    /// For a worker thread with nothing to do (the runtime shim's pool
    /// calls it while spinning idle): polls the receive queue in the
    /// poller's place, so a request it finds (an on-statement body is then
    /// queued on this very worker) needs no thread hop. The first such
    /// worker covers for the poller, which sleeps meanwhile; the cover
    /// stays while the worker runs what it found (so the next request,
    /// which may come before it is back, does not wake the poller), and a
    /// poller that sees the worker stop polling for a while takes over.
    /// Only where every peer maps this locale; returns whether it handled
    /// anything. A worker that goes to sleep must call
    /// [`Am::worker_idle_end`].
    pub fn worker_poll(&self) -> bool {
        WORKER_POLLING.with(|w| w.set(true));
        let found = self.poll_in_place();
        WORKER_POLLING.with(|w| w.set(false));
        found
    }

    /// A thread waiting for a reply polls in the poller's place (see
    /// [`Am::worker_poll`]): its reply is then taken by the thread that
    /// waits for it. Where CQ waits block, only a thread that covers already
    /// (a worker that was waiting in the CQ when it got the task that now
    /// waits) polls, and it waits in the CQ while `pending()` holds; pass
    /// `None` when the reply does not come as a message (a mapped target
    /// stores it, or the target's NIC writes it), which no CQ wait would
    /// see. Returns whether it handled anything.
    pub(crate) fn waiter_poll(&self, pending: Option<&dyn Fn() -> bool>) -> bool {
        if self.poll.blocking.is_some() {
            let me = self as *const Am as usize;
            if pending.is_none() || COVERING.with(|c| c.get()) != me {
                return false;
            }
        }
        self.poll_here(pending).unwrap_or(false)
    }

    fn poll_in_place(&self) -> bool {
        self.poll_here(None).unwrap_or(false)
    }

    /// Polls in the poller's place (see [`Am::worker_poll`]); where CQ waits
    /// block, `wait` is `Some(keep_waiting)`: the coverer waits in the CQ
    /// while `keep_waiting()` holds (checked after the wait is announced, so
    /// an [`Am::interrupt_wait`] that follows work handed over is never
    /// missed). Returns whether it handled anything, `None` if it did not
    /// poll at all.
    fn poll_here(&self, wait: Option<&dyn Fn() -> bool>) -> Option<bool> {
        let shared = &self.poll;
        if !shared.workers || self.stop_poll.load(Ordering::Acquire) {
            return None;
        }
        let me = self as *const Am as usize;
        let covering = COVERING.with(|c| c.get()) == me;
        if covering {
            shared.cover();
        } else if !shared.coverer.swap(true, Ordering::AcqRel) {
            shared.cover();
            COVERING.with(|c| c.set(me));
        } else if shared.blocking.is_some() {
            // Another thread covers and waits in the CQ: only it polls.
            return None;
        }
        shared.heartbeat.beat();
        let Some(b) = &shared.blocking else {
            let mut st = shared.state.try_lock()?;
            return Some(step(self, &mut st, 0) > 0);
        };
        // Where CQ waits block: end the poller's wait (it parks once it sees
        // the cover), take the receive side, wait in the CQ ourselves.
        if b.poller_waits.load(Ordering::SeqCst) {
            self.comm.am_port().interrupt_rx_wait();
        }
        let mut st = shared.state.lock();
        IN_CQ_WAIT.with(|w| w.set(true));
        b.coverer_waits.store(true, Ordering::SeqCst);
        // Dekker with interrupt_wait: the announcement before keep_waiting's
        // loads (the hand-over's store before its load of the announcement).
        std::sync::atomic::fence(Ordering::SeqCst);
        let timeout = match wait {
            Some(keep) if keep() && !self.stop_poll.load(Ordering::Acquire) => COVER_WAIT_MS,
            _ => 0,
        };
        let k = step(self, &mut st, timeout);
        b.coverer_waits.store(false, Ordering::Release);
        IN_CQ_WAIT.with(|w| w.set(false));
        shared.heartbeat.beat();
        Some(k > 0)
    }

    /// Where CQ waits block: ends a coverer's wait in the CQ (other than
    /// the calling thread's), after work was handed to it (the runtime's
    /// pool queued a task) or at shutdown. Cheap when nobody waits.
    pub fn interrupt_wait(&self) {
        let Some(b) = &self.poll.blocking else {
            return;
        };
        std::sync::atomic::fence(Ordering::SeqCst);
        if b.coverer_waits.load(Ordering::SeqCst) && !IN_CQ_WAIT.with(|w| w.get()) {
            self.comm.am_port().interrupt_rx_wait();
        }
    }

    /// Whether idle runtime workers wait in the receive CQ in the poller's
    /// place ([`Am::worker_wait`]) rather than parking: where CQ waits
    /// block.
    pub fn workers_wait_in_cq(&self) -> bool {
        self.poll.blocking.is_some()
    }

    /// For an idle runtime worker where CQ waits block (see
    /// [`Am::workers_wait_in_cq`]): covers for the poller and waits in the
    /// receive CQ (up to 10 ms) while `keep_waiting()` holds, so a request
    /// it receives runs on it with no thread hop. Returns false at once if
    /// another thread covers or the layer stops (the worker then parks as
    /// usual); true once it polled (waited, or handled something). Whoever queues work for the worker must
    /// call [`Am::interrupt_wait`]; a worker that parks must call
    /// [`Am::worker_idle_end`].
    pub fn worker_wait(&self, keep_waiting: &dyn Fn() -> bool) -> bool {
        if self.poll.blocking.is_none() {
            return false;
        }
        WORKER_POLLING.with(|w| w.set(true));
        let polled = self.poll_here(Some(keep_waiting));
        WORKER_POLLING.with(|w| w.set(false));
        polled.is_some()
    }

    /// Whether a blocking fast body received now may run as a task on the
    /// receiving thread (a runtime worker polling in the poller's place).
    pub(crate) fn polled_by_worker(&self) -> bool {
        WORKER_POLLING.with(|w| w.get())
    }

    /// The worker stops polling (it goes to sleep): the poller takes over
    /// again; one more poll catches a request whose sender saw the cover
    /// and did not ring.
    pub fn worker_idle_end(&self) {
        let me = self as *const Am as usize;
        if COVERING.with(|c| c.get()) != me {
            return;
        }
        COVERING.with(|c| c.set(0));
        self.poll.uncover();
        self.poll.coverer.store(false, Ordering::Release);
        let mut st = self.poll.state.lock();
        step(self, &mut st, 0);
    }
}

/// One poll: reads completions, handles them, answers deferred no-ops,
/// reposts landing-zone halves. Returns how many completions it read.
fn step(am: &Am, st: &mut PollState, timeout: i32) -> usize {
    let k = match am.comm.am_port().poll_rx(&mut st.buf, timeout) {
        Ok(k) => k,
        Err(e) if e.error.is_canceled() => 0,
        Err(e) => am.abort(&format!(
            "receiving active messages failed: {} (a request larger than the landing \
             zone's minimum free space is truncated: FI_ETRUNC)",
            e.error
        )),
    };
    for i in 0..k {
        let e = st.buf[i];
        if let Some(h) = on_completion(am, &e) {
            st.pending[h] = true;
        }
    }
    if let Err(e) = am.comm.am_port().reap_poller_sends() {
        am.abort(&format!("an answer of the AM poller failed: {e}"));
    }
    // Answers that found a full transmit queue: retry now that we have
    // received (stop at the first refusal).
    for _ in 0..am.deferred_answers.len() {
        let Some((h, answer)) = am.deferred_answers.pop() else {
            break;
        };
        if !am.answer_from_poller(&h, &answer) {
            am.deferred_answers.push((h, answer));
            break;
        }
    }
    for i in 0..2 {
        if st.pending[i] && repost(am, i) {
            st.pending[i] = false;
        }
    }
    if st.pending.iter().any(|p| *p) {
        let since = *st
            .deferred_since
            .get_or_insert_with(std::time::Instant::now);
        if since.elapsed() > REPOST_GIVE_UP {
            am.abort(&format!(
                "the provider refused to take back a landing zone half for {}s; senders \
                 would hang: raise PGAS_AM_LZ_SIZE (now {} bytes)",
                REPOST_GIVE_UP.as_secs(),
                am.cfg.lz_size
            ));
        }
    } else {
        st.deferred_since = None;
    }
    k
}

fn poll_loop(am: &Am) {
    let timeout = if am.block_wait { BLOCK_POLL_MS } else { 0 };
    let mut idle = 0u32;
    // Where every peer maps this locale, nothing needs our progress for RMA:
    // after PGAS_POLL_SPIN_US without a completion the poller sleeps on its
    // doorbell until a sender rings it (comm-ofi's IdlePolicy), and while
    // an idle worker polls in its place it sleeps anyway.
    let policy = &am.poll.policy;
    let mut idle_since = std::time::Instant::now();
    if let Some(l) = &am.poll.local {
        l.set_poller(comm_ofi::sync::current());
    }
    let blocking = am.poll.blocking.as_ref();
    while !am.stop_poll.load(Ordering::Acquire) {
        // Announce the CQ wait before looking at the cover (BlockingCover).
        if let Some(b) = blocking {
            b.poller_waits.store(true, Ordering::SeqCst);
        }
        if am.poll.sleep_while_covered() {
            continue;
        }
        let (k, busy) = {
            let mut st = am.poll.state.lock();
            let k = step(am, &mut st, timeout);
            (
                k,
                st.pending.iter().any(|p| *p) || !am.deferred_answers.is_empty(),
            )
        };
        if let Some(b) = blocking {
            b.poller_waits.store(false, Ordering::Release);
        }
        if k > 0 {
            idle = 0;
            idle_since = std::time::Instant::now();
            // No yield here: a poller that yields after each batch lets a
            // flood of AMs fill shm's receive queue, which then refuses the
            // landing-zone reposts (seen with 64K landing zones).
            continue;
        }
        idle = idle.saturating_add(1);
        if am.block_wait {
            // the poll itself blocked
        } else if policy.may_sleep() {
            if !busy {
                // After a sleep with nothing come, straight back to sleep:
                // only a completion restarts the spinning.
                policy.idle(idle_since, idle, || {
                    let mut st = am.poll.state.lock();
                    step(am, &mut st, 0) > 0 || am.stop_poll.load(Ordering::Acquire)
                });
            } else if idle > 16 {
                std::thread::yield_now();
            }
        } else if am.cfg.idle_sleep_us > 0 && idle > 200_000 {
            // Long idle, and the user asked to spare the core. Costs
            // latency: RMA and native atomics against this locale
            // need this thread's progress on shm, tcp and udp (they
            // produce no receive completion that would wake it).
            std::thread::sleep(Duration::from_micros(am.cfg.idle_sleep_us));
        } else if idle > 16 {
            std::thread::yield_now();
        }
    }
}

/// Handles one receive completion; returns the landing-zone half to repost
/// if the provider retired one.
fn on_completion(am: &Am, e: &CqEntry) -> Option<usize> {
    if let Some((buf, len)) = e.received() {
        // SAFETY: the provider reports len bytes of a received message at
        // buf inside a landing zone that stays ours until we repost it.
        let msg = unsafe { std::slice::from_raw_parts(buf, len) };
        am.dispatch(msg);
    }
    if !e.retires_buffer() {
        return None;
    }
    let i = e.context();
    if !(1..=2).contains(&i) {
        am.abort(&format!("landing zone completion with unknown context {i}"));
    }
    Some(i - 1)
}

/// Reposts landing-zone half `i`; false if the provider asks to retry later.
fn repost(am: &Am, i: usize) -> bool {
    let addr = am.lz + (i * am.lz_half) as u64;
    // SAFETY: the provider retired this half; every message in it has been
    // copied out by dispatch.
    match unsafe {
        am.comm
            .am_port()
            .post_landing_zone(addr as *mut u8, am.lz_half, i + 1)
    } {
        Ok(()) => {
            am.counters.lz_reposts.fetch_add(1, Ordering::Relaxed);
            true
        }
        Err(comm_ofi::Error::Ofi(e)) if e.is_try_again() => {
            tracing::debug!("landing zone half {i}: repost deferred: {e}");
            false
        }
        Err(err) => am.abort(&format!("cannot repost landing zone half {}: {err}", i + 1)),
    }
}

fn handler_loop(am: &Am) {
    IS_HANDLER.with(|h| h.set(true));
    // Start parked: nothing can be queued before the first request.
    let mut idle = HANDLER_YIELDS;
    let mut idle_since = std::time::Instant::now();
    loop {
        if let Some(w) = am.hq.pop() {
            idle = 0;
            am.handle(w);
            continue;
        }
        if am.stop_handlers.load(Ordering::Acquire) {
            break;
        }
        if idle == 0 {
            idle_since = std::time::Instant::now();
        }
        idle = idle.saturating_add(1);
        if idle < 64 {
            std::hint::spin_loop();
            continue;
        }
        if idle < HANDLER_YIELDS && !am.block_wait && idle_since.elapsed() < HANDLER_YIELD_WINDOW {
            std::thread::yield_now();
            continue;
        }
        am.idle.sleep(
            || !am.hq.is_empty() || am.stop_handlers.load(Ordering::Acquire),
            || std::thread::park_timeout(Duration::from_millis(20)),
        );
        // Woken with work: spin again from the start; a timeout with none:
        // straight back to sleep (no second round of yields).
        idle = if am.hq.is_empty() { HANDLER_YIELDS } else { 0 };
    }
}
