//! A simulated weakly ordered fabric that implements [`Transport`], so the real
//! implementors can be model-checked without a network.
//!
//! The model: `locales` memories of `words` 64-bit words each; transmit
//! contexts ([`SimTxContext`]) that post operations into one in-flight list;
//! a NIC that runs their steps in any order the provider's
//! [`ProviderOrdering`] and the operations' `FENCE` flags allow (see the `nic`
//! submodule). What it deliberately captures:
//! - a PUT's source is read when the NIC gets to it, not at the call, so a
//!   caller that does not wait for local completion can see its later write
//!   land at the target (PUT-SRC);
//! - stores land at the target later than they complete locally, and in any
//!   order the provider ordering does not forbid; operations of different
//!   contexts, or to different targets, are never ordered;
//! - an AMO update or a send completes locally as soon as it is posted unless
//!   it is delivery-complete;
//! - an AM send is delivered and its handler run at the target in one step;
//! - delivery-complete operations complete only once they have landed.
//!
//! What it does not capture: ordering between operations is taken to be
//! ordering of their visibility (the assumption the original and this layer
//! make); `FENCE` holds an operation until earlier ones have *landed*; the
//! finer `fi_atomic(3)` point that an AMO which has landed may still be
//! invisible to the CPU is not modelled (a visibility proof and an order GET
//! behave alike here).
//!
//! Nondeterminism. With [`Progress::NicThread`] a NIC thread runs the latest
//! runnable step of any context while the program's threads, inside
//! [`Transport::wait_all`] and [`SimFabric::quiesce`], run the earliest
//! runnable step of their own; under `cfg(loom)` those are loom threads and
//! loom explores every interleaving, hence every order in which two racing
//! steps can land. With [`Progress::Seeded`] there is no NIC thread: nothing
//! moves until someone waits or quiesces, and then a seeded generator picks
//! among the runnable steps, which makes plain unit tests reproducible.

pub mod litmus;
mod nic;
mod ops;

pub use ops::{
    Addr, Progress, ProviderOrdering, SimAmo, SimConfig, SimError, SimGet, SimPut, SimSend,
};

use std::fmt;

use crate::sync::{self, thread, Arc, AtomicU64, Condvar, Mutex, Ordering};
use crate::{Binding, DanglingStores, Locale, OpFlags, Transport};
use nic::{Action, InFlight, Nic, Step};

/// State behind the fabric's lock.
struct State {
    nic: Nic,
    next_ctx: usize,
    shutdown: bool,
    /// xorshift state for [`Progress::Seeded`].
    rng: u64,
    nic_thread: Option<thread::JoinHandle<()>>,
}

impl State {
    fn pick(&mut self, progress: Progress, steps: &[Step], nic_thread: bool) -> Step {
        match progress {
            Progress::NicThread if nic_thread => steps[steps.len() - 1],
            Progress::NicThread => steps[0],
            Progress::Seeded(_) => {
                // xorshift64*: plenty for choosing among a handful of steps.
                self.rng ^= self.rng >> 12;
                self.rng ^= self.rng << 25;
                self.rng ^= self.rng >> 27;
                let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
                steps[(r >> 32) as usize % steps.len()]
            }
        }
    }
}

struct Shared {
    memory: Vec<Vec<AtomicU64>>,
    config: SimConfig,
    state: Mutex<State>,
    /// Signalled on every post and at shutdown; the NIC thread sleeps on it.
    posted: Condvar,
}

/// A simulated fabric; cheap to clone (all clones are the same fabric).
#[derive(Clone)]
pub struct SimFabric {
    shared: Arc<Shared>,
}

impl fmt::Debug for SimFabric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimFabric")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl SimFabric {
    /// A fabric with every word 0; starts the NIC thread if the progress mode
    /// has one. Call [`shutdown`](Self::shutdown) when done.
    pub fn new(config: SimConfig) -> Self {
        let memory = (0..config.locales)
            .map(|_| (0..config.words).map(|_| AtomicU64::new(0)).collect())
            .collect();
        let seed = match config.progress {
            Progress::Seeded(seed) => seed,
            Progress::NicThread => 0,
        };
        let shared = Arc::new(Shared {
            memory,
            config,
            state: Mutex::new(State {
                nic: Nic::default(),
                next_ctx: 0,
                shutdown: false,
                // xorshift must not start at 0.
                rng: seed ^ 0x9e37_79b9_7f4a_7c15,
                nic_thread: None,
            }),
            posted: Condvar::new(),
        });
        if config.progress == Progress::NicThread {
            let nic = Arc::clone(&shared);
            let handle = thread::spawn(move || run_nic_thread(&nic));
            sync::lock(&shared.state).nic_thread = Some(handle);
        }
        SimFabric { shared }
    }

    /// The fabric's shape.
    pub fn config(&self) -> SimConfig {
        self.shared.config
    }

    /// A new transmit context on `locale`, tracking dangling stores for every
    /// locale of the fabric.
    pub fn context(&self, locale: Locale, binding: Binding) -> SimTxContext {
        let locales = self.shared.config.locales;
        assert!(
            locale < locales,
            "locale {locale} out of range 0..{locales}"
        );
        let mut state = sync::lock(&self.shared.state);
        let id = state.next_ctx;
        state.next_ctx += 1;
        drop(state);
        SimTxContext {
            shared: Arc::clone(&self.shared),
            id,
            locale,
            binding,
            dangling: DanglingStores::new(locales),
        }
    }

    /// A CPU load of `addr` (on its own locale: no network involved).
    pub fn load(&self, addr: Addr) -> u64 {
        self.shared.memory[addr.locale][addr.word].load(Ordering::SeqCst)
    }

    /// A CPU store to `addr`.
    pub fn store(&self, addr: Addr, value: u64) {
        self.shared.memory[addr.locale][addr.word].store(value, Ordering::SeqCst)
    }

    /// Number of operations posted and not yet both complete and landed.
    pub fn in_flight(&self) -> usize {
        sync::lock(&self.shared.state).nic.ops.len()
    }

    /// Runs steps until nothing is in flight.
    pub fn quiesce(&self) {
        self.quiesce_observing(|_| None::<()>);
    }

    /// Runs steps until nothing is in flight, calling `observe` before every
    /// step this thread runs and once at the end, like a CPU reading memory
    /// while the network delivers. Returns the first observation that was
    /// `Some`.
    pub fn quiesce_observing<V>(
        &self,
        mut observe: impl FnMut(&SimFabric) -> Option<V>,
    ) -> Option<V> {
        let mut seen = None;
        loop {
            let observed = observe(self);
            if seen.is_none() {
                seen = observed;
            }
            let mut state = sync::lock(&self.shared.state);
            let steps = state.nic.runnable(&self.shared.config.ordering, None);
            if steps.is_empty() {
                assert!(
                    state.nic.ops.is_empty(),
                    "simulated NIC stuck: {:?}",
                    state.nic
                );
                break;
            }
            let step = state.pick(self.shared.config.progress, &steps, false);
            state.nic.run(step, &self.shared.memory);
        }
        seen
    }

    /// Quiesces, then stops and joins the NIC thread (if any). Every test must
    /// call it before returning: under loom a NIC thread left sleeping is a
    /// deadlock.
    pub fn shutdown(&self) {
        self.quiesce();
        let handle = {
            let mut state = sync::lock(&self.shared.state);
            state.shutdown = true;
            state.nic_thread.take()
        };
        self.shared.posted.notify_all();
        if let Some(handle) = handle {
            handle.join().expect("simulated NIC thread panicked");
        }
    }
}

fn run_nic_thread(shared: &Shared) {
    let mut state = sync::lock(&shared.state);
    loop {
        let steps = state.nic.runnable(&shared.config.ordering, None);
        if !steps.is_empty() {
            let step = state.pick(shared.config.progress, &steps, true);
            state.nic.run(step, &shared.memory);
            // Let the program threads at the lock between two steps.
            drop(state);
            state = sync::lock(&shared.state);
        } else if state.shutdown {
            return;
        } else {
            state = sync::wait(&shared.posted, state);
        }
    }
}

/// One simulated transmit context on one locale: a [`Transport`].
pub struct SimTxContext {
    shared: Arc<Shared>,
    id: usize,
    locale: Locale,
    binding: Binding,
    dangling: DanglingStores,
}

impl fmt::Debug for SimTxContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimTxContext")
            .field("id", &self.id)
            .field("locale", &self.locale)
            .field("binding", &self.binding)
            .field("dangling", &self.dangling)
            .finish_non_exhaustive()
    }
}

impl SimTxContext {
    /// The locale this context sends from.
    pub fn locale(&self) -> Locale {
        self.locale
    }

    /// The fabric this context belongs to.
    pub fn fabric(&self) -> SimFabric {
        SimFabric {
            shared: Arc::clone(&self.shared),
        }
    }

    fn check(&self, addr: Addr) -> Result<(), SimError> {
        let SimConfig { locales, words, .. } = self.shared.config;
        if addr.locale >= locales {
            return Err(SimError::LocaleOutOfRange {
                locale: addr.locale,
                locales,
            });
        }
        if addr.word >= words {
            return Err(SimError::WordOutOfRange {
                word: addr.word,
                words,
            });
        }
        Ok(())
    }

    fn post(&mut self, target: Locale, action: Action, flags: OpFlags) -> Result<(), SimError> {
        let (me, there) = (self.locale, target);
        let locales = self.shared.config.locales;
        if target >= locales {
            return Err(SimError::LocaleOutOfRange {
                locale: target,
                locales,
            });
        }
        let words: Vec<Addr> = match &action {
            Action::Put { src, dst } => vec![Addr::new(me, *src), Addr::new(there, *dst)],
            Action::Get { src, dst } => vec![Addr::new(there, *src), Addr::new(me, *dst)],
            Action::Amo(SimAmo::Write { word, .. } | SimAmo::Add { word, .. }) => {
                vec![Addr::new(there, *word)]
            }
            Action::Amo(SimAmo::Read { word, dst } | SimAmo::FetchAdd { word, dst, .. }) => {
                vec![Addr::new(there, *word), Addr::new(me, *dst)]
            }
            Action::Send(SimSend::CopyWord { from, to }) => vec![*from, Addr::new(there, *to)],
            Action::OrderGet | Action::ProveAmo => Vec::new(),
        };
        for addr in words {
            self.check(addr)?;
        }
        let op = InFlight::new(self.id, self.locale, target, action, flags);
        sync::lock(&self.shared.state).nic.ops.push(op);
        self.shared.posted.notify_one();
        Ok(())
    }
}

impl Transport for SimTxContext {
    type Put = SimPut;
    type Get = SimGet;
    type Amo = SimAmo;
    type Send = SimSend;
    type Error = SimError;

    fn binding(&self) -> Binding {
        self.binding
    }

    fn dangling(&mut self) -> &mut DanglingStores {
        &mut self.dangling
    }

    fn post_put(&mut self, target: Locale, op: &SimPut, flags: OpFlags) -> Result<(), SimError> {
        self.post(
            target,
            Action::Put {
                src: op.src,
                dst: op.dst,
            },
            flags,
        )
    }

    fn post_get(&mut self, target: Locale, op: SimGet, flags: OpFlags) -> Result<(), SimError> {
        self.post(
            target,
            Action::Get {
                src: op.src,
                dst: op.dst,
            },
            flags,
        )
    }

    fn post_amo(&mut self, target: Locale, op: SimAmo, flags: OpFlags) -> Result<(), SimError> {
        self.post(target, Action::Amo(op), flags)
    }

    fn post_amo_in_flight(
        &mut self,
        target: Locale,
        op: SimAmo,
        flags: OpFlags,
    ) -> Result<(), SimError> {
        // The simulated AMO carries its operand by value: nothing to copy.
        self.post(target, Action::Amo(op), flags)
    }

    fn post_send(&mut self, target: Locale, op: SimSend, flags: OpFlags) -> Result<(), SimError> {
        self.post(target, Action::Send(op), flags)
    }

    fn post_order_get(&mut self, target: Locale, flags: OpFlags) -> Result<(), SimError> {
        self.post(target, Action::OrderGet, flags)
    }

    fn post_prove_amo_visible(&mut self, target: Locale, flags: OpFlags) -> Result<(), SimError> {
        self.post(target, Action::ProveAmo, flags)
    }

    fn put_range(&self, op: &SimPut) -> Option<(u64, u64)> {
        // One word at index `dst` of the target's memory.
        Some((op.dst as u64, op.dst as u64 + 1))
    }

    fn get_range(&self, op: &SimGet) -> Option<(u64, u64)> {
        Some((op.src as u64, op.src as u64 + 1))
    }

    fn wait_all(&mut self) -> Result<(), SimError> {
        let shared = &self.shared;
        loop {
            let mut state = sync::lock(&shared.state);
            if !state.nic.has_incomplete(self.id) {
                return Ok(());
            }
            // Manual progress: this thread runs one of its own steps. One is
            // always runnable: the earliest pending operation of each of
            // this context's targets is held back by nothing.
            let steps = state.nic.runnable(&shared.config.ordering, Some(self.id));
            assert!(!steps.is_empty(), "simulated NIC stuck: {:?}", state.nic);
            let step = state.pick(shared.config.progress, &steps, false);
            state.nic.run(step, &shared.memory);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::Mode;

    fn fabric(mode: Mode, seed: u64) -> SimFabric {
        SimFabric::new(SimConfig {
            locales: 3,
            words: 4,
            ordering: ProviderOrdering::for_mode(mode),
            progress: Progress::Seeded(seed),
        })
    }

    const SRC: Addr = Addr::new(0, 0);
    const X: Addr = Addr::new(1, 0);
    const R: Addr = Addr::new(0, 1);
    const PUT: SimPut = SimPut { src: 0, dst: 0 };
    const GET: SimGet = SimGet { src: 0, dst: 1 };

    /// A fabric in `mode` (seed `seed`) whose bound context on locale 0 has
    /// posted a PUT of `value` (from `SRC`) to `X` with `flags`.
    fn put_posted(mode: Mode, seed: u64, value: u64, flags: OpFlags) -> (SimFabric, SimTxContext) {
        let f = fabric(mode, seed);
        let mut tx = f.context(0, Binding::Bound);
        f.store(SRC, value);
        tx.post_put(1, &PUT, flags).unwrap();
        (f, tx)
    }

    #[test]
    fn put_source_is_read_by_the_nic_not_at_the_call() {
        let (f, _tx) = put_posted(Mode::MessageOrder, 1, 1, OpFlags::NONE);
        f.store(SRC, 2);
        f.shutdown();
        assert_eq!(f.load(X), 2, "the NIC read the overwritten source");
    }

    #[test]
    fn waiting_for_local_completion_reads_the_source_but_need_not_land() {
        let (f, mut tx) = put_posted(Mode::MessageOrder, 1, 1, OpFlags::NONE);
        tx.wait_all().unwrap();
        f.store(SRC, 2);
        assert_eq!(
            f.load(X),
            0,
            "transmit-complete says nothing about the target"
        );
        assert_eq!(f.in_flight(), 1);
        f.shutdown();
        assert_eq!(f.load(X), 1);
        assert_eq!(f.in_flight(), 0);
    }

    #[test]
    fn delivery_complete_put_has_landed_when_waited() {
        let (f, mut tx) = put_posted(Mode::DeliveryComplete, 1, 5, OpFlags::DELIVERY_COMPLETE);
        tx.wait_all().unwrap();
        assert_eq!(f.load(X), 5);
        f.shutdown();
    }

    #[test]
    fn amo_update_completes_before_it_lands_unless_delivery_complete() {
        let f = fabric(Mode::MessageOrderFence, 1);
        let mut tx = f.context(0, Binding::Bound);
        let add = SimAmo::Add { word: 0, value: 3 };
        tx.post_amo(1, add, OpFlags::NONE).unwrap();
        tx.wait_all().unwrap();
        assert_eq!(f.load(X), 0);
        tx.post_amo(1, add, OpFlags::DELIVERY_COMPLETE).unwrap();
        tx.wait_all().unwrap();
        assert_eq!(
            f.load(X),
            6,
            "the DC AMO landed; atomic WAW put the first before it"
        );
        f.shutdown();
    }

    /// Runs put-then-get over `seeds` and returns how many reads were stale.
    fn stale_reads(mode: Mode, get_flags: OpFlags) -> usize {
        (0..64)
            .filter(|&seed| {
                let (f, mut tx) = put_posted(mode, seed, 9, OpFlags::NONE);
                tx.wait_all().unwrap();
                tx.post_get(1, GET, get_flags).unwrap();
                tx.wait_all().unwrap();
                let stale = f.load(R) != 9;
                f.shutdown();
                stale
            })
            .count()
    }

    #[test]
    fn a_get_overtakes_a_put_only_without_raw_ordering_or_fence() {
        assert!(stale_reads(Mode::MessageOrderFence, OpFlags::NONE) > 0);
        assert!(stale_reads(Mode::DeliveryComplete, OpFlags::NONE) > 0);
        assert_eq!(stale_reads(Mode::MessageOrderFence, OpFlags::FENCE), 0);
        assert_eq!(stale_reads(Mode::DeliveryComplete, OpFlags::FENCE), 0);
        assert_eq!(
            stale_reads(Mode::MessageOrder, OpFlags::NONE),
            0,
            "RAW ordering"
        );
    }

    #[test]
    fn operations_to_other_targets_or_from_other_contexts_are_not_ordered() {
        // Under message-order, a GET from another context is not held behind
        // the PUT, even to the same word.
        let stale = (0..64)
            .filter(|&seed| {
                let f = fabric(Mode::MessageOrder, seed);
                let mut writer = f.context(0, Binding::Bound);
                let mut reader = f.context(0, Binding::Bound);
                f.store(SRC, 9);
                writer.post_put(1, &PUT, OpFlags::NONE).unwrap();
                writer.wait_all().unwrap();
                reader.post_get(1, GET, OpFlags::FENCE).unwrap();
                reader.wait_all().unwrap();
                let stale = f.load(R) != 9;
                f.shutdown();
                stale
            })
            .count();
        assert_eq!(stale, 64, "the reader's wait runs only its own steps");
    }

    #[test]
    fn send_runs_its_handler_at_the_target_and_saw_orders_it() {
        for seed in 0..32 {
            let (f, mut tx) = put_posted(Mode::MessageOrder, seed, 4, OpFlags::NONE);
            let copy = SimSend::CopyWord { from: X, to: 1 };
            tx.post_send(1, copy, OpFlags::NONE).unwrap();
            f.shutdown();
            assert_eq!(f.load(Addr::new(1, 1)), 4, "seed {seed}");
        }
    }

    #[test]
    fn fence_holds_later_ops_behind_the_ops_before_it() {
        // PUT x; fenced order GET; GET x: the last GET is posted after the
        // fence, so it too waits for the PUT (fi_ep: "and any operation posted
        // after the fenced operation").
        for seed in 0..32 {
            let (f, mut tx) = put_posted(Mode::DeliveryComplete, seed, 8, OpFlags::NONE);
            tx.post_order_get(1, OpFlags::FENCE).unwrap();
            tx.post_get(1, GET, OpFlags::NONE).unwrap();
            tx.wait_all().unwrap();
            assert_eq!(f.load(R), 8, "seed {seed}");
            f.shutdown();
        }
    }

    #[test]
    fn bad_addresses_are_errors_and_post_nothing() {
        let f = fabric(Mode::MessageOrder, 0);
        let mut tx = f.context(0, Binding::Bound);
        assert_eq!(
            tx.post_put(3, &PUT, OpFlags::NONE),
            Err(SimError::LocaleOutOfRange {
                locale: 3,
                locales: 3
            })
        );
        assert_eq!(
            tx.post_get(1, SimGet { src: 4, dst: 0 }, OpFlags::NONE),
            Err(SimError::WordOutOfRange { word: 4, words: 4 })
        );
        assert_eq!(
            tx.post_order_get(9, OpFlags::NONE).unwrap_err().to_string(),
            "locale 9 out of range 0..3"
        );
        assert_eq!(f.in_flight(), 0);
        f.shutdown();
    }

    #[test]
    fn nic_thread_delivers_without_anyone_waiting() {
        let f = SimFabric::new(SimConfig {
            locales: 2,
            words: 2,
            ordering: ProviderOrdering::for_mode(Mode::MessageOrder),
            progress: Progress::NicThread,
        });
        let mut tx = f.context(0, Binding::Bound);
        f.store(SRC, 3);
        tx.post_put(1, &PUT, OpFlags::NONE).unwrap();
        while f.in_flight() > 0 {
            std::thread::yield_now();
        }
        assert_eq!(f.load(X), 3);
        f.shutdown();
    }
}
