//! Point-to-point synchronisation: waiting on a local word, PUT with a
//! signal, quiet and fence, yielding, and non-blocking fetching atomics.
//!
//! Exists for the idioms OpenSHMEM programs are written in (`shmem_wait_until`,
//! `shmem_put_signal`, `shmem_quiet`, `shmem_fence`, `shmem_atomic_fetch_*_nbi`)
//! and that a language runtime's tasks need (help while waiting). All of them
//! are built from the layer's ordered operations, so the MCM holds:
//!
//! * a *signal* is an SC atomic: it is ordered after the task's earlier
//!   stores (the data PUT) in every mode, so a waiter that sees the signal
//!   and then reads the data sees the data;
//! * `test_local` and `wait_until_local*` read the word as the memory
//!   model's *SC atomic read* (as Chapel's `waitFor` and OpenSHMEM's
//!   `shmem_wait_until` do): before the first load, the task's earlier
//!   stores and atomics are made visible (its dangling PUTs forced, native
//!   AMOs proved, postponed AMOs via AM awaited, `get_nb`s waited out) when
//!   it has any, exactly as before an atomic read through `atomic(p)`, so
//!   store buffering through them cannot return two old values; then the
//!   word is polled with SeqCst CPU loads (the word is this locale's, and a
//!   remote writer's store is made visible by *its* boundary or proof),
//!   running other tasks meanwhile (and driving this thread's context: see
//!   `wait_until`);
//! * `quiet` is the task-level boundary (every store of the task visible,
//!   buffered unordered operations issued and done); `fence` orders the
//!   task's unordered operations before what follows (ordered PUTs and
//!   atomics to one target are already kept in order by every mode).

use crate::error::{Error, Result};
use crate::pod::{Atom, Pod};
use crate::ptr::GlobalPtr;
use crate::runtime::atomics::AtomicOp;
use crate::runtime::Runtime;
use crate::tasking::TaskHandle;
use comm_ofi::AmoOp;
use std::marker::PhantomData;

/// A comparison for [`Runtime::wait_until_local`] and friends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cmp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
}

impl Cmp {
    /// Every comparison, in C code order (`PGAS_CMP_EQ` = 0, ...).
    pub const ALL: [Cmp; 6] = [Cmp::Eq, Cmp::Ne, Cmp::Gt, Cmp::Ge, Cmp::Lt, Cmp::Le];

    /// Whether `a cmp b`.
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
        }
    }
}

/// How a signal word is updated by [`Runtime::put_with_signal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignalOp {
    /// Store the value.
    Set,
    /// Add the value.
    Add,
}

/// A non-blocking fetching atomic in flight ([`crate::AtomicRef::fetch_add_nb`],
/// ...): the old value arrives with [`AmoHandle::wait`].
#[must_use = "the old value of a non-blocking atomic is only there once waited for"]
#[derive(Debug)]
pub struct AmoHandle<T: Send + 'static> {
    task: TaskHandle<Result<T>>,
}

impl<T: Send + 'static> AmoHandle<T> {
    /// Whether the atomic has been performed.
    pub fn test(&self) -> bool {
        self.task.is_done()
    }

    /// Waits and returns the old value (runs other tasks meanwhile).
    pub fn wait(self) -> Result<T> {
        self.task.join()?
    }
}

/// Words of this locale made ready to test or wait on
/// ([`Runtime::local_words`]): every address checked once and the SC read's
/// forcing done once, so that a wait loop over them costs a SeqCst load per
/// word and check. What a C library's `wait_until_any` / `test_some` over an
/// array with a status mask is built on, and this module's own `_any` /
/// `_all` waits.
#[derive(Debug)]
pub struct LocalWords<T> {
    addrs: Vec<u64>,
    _t: PhantomData<T>,
}

impl<T: Atom> LocalWords<T> {
    /// How many words.
    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }

    /// Whether word `i` satisfies `cmp value` now (an SC load).
    ///
    /// # Panics
    /// If `i` is not below [`LocalWords::len`].
    #[inline]
    pub fn holds(&self, i: usize, cmp: Cmp, value: T) -> bool {
        cmp.holds(Runtime::load_local::<T>(self.addrs[i]), value)
    }
}

impl Runtime {
    #[inline]
    fn local_word<T: Atom>(&self, p: GlobalPtr<T>) -> Result<u64> {
        if p.locale() != self.here() {
            return Err(self.not_local_word(p.global_addr()));
        }
        self.comm().check_atomic_target(p.global_addr(), T::TYPE)?;
        Ok(p.addr())
    }

    /// The error of a wait or test on another locale's word (out of line).
    #[cold]
    #[inline(never)]
    fn not_local_word(&self, at: comm_ofi::GlobalAddr) -> Error {
        Error::BadAddress {
            locale: at.locale,
            addr: at.addr,
            reason: format!(
                "waiting is on a word of this locale ({}); wait on the owner, or read the \
                 word with an atomic",
                self.here()
            ),
        }
    }

    /// What an SC read of a local word owes the memory model before it
    /// loads (see the module docs): the task's earlier stores and atomics
    /// visible, as for any atomic.
    #[inline]
    fn before_sc_read(&self) -> Result<()> {
        if self.comm().is_weakened(comm_ofi::Weakening::P2pReadNoForce) {
            return Ok(());
        }
        Ok(self.comm().force_visible_if_any()?)
    }

    #[inline]
    fn load_local<T: Atom>(addr: u64) -> T {
        // SAFETY: addr is an aligned word of this locale's registered heap
        // or static data (checked by local_word); words used for
        // synchronisation are only accessed atomically, and a SeqCst CPU
        // load is one (a NIC atomic or RMA that writes it is a whole-word
        // store).
        T::from_bits64(unsafe { comm_ofi::cpu_amo::read(addr, T::TYPE) })
    }

    /// Makes the words at `ps` (all this locale's) ready to test and wait
    /// on ([`LocalWords`]): checks every address, then makes the task's
    /// earlier stores and atomics visible, as an SC read does before its
    /// first load (a wait that polls them afterwards owes nothing more).
    pub fn local_words<T: Atom>(
        &self,
        ps: impl IntoIterator<Item = GlobalPtr<T>>,
    ) -> Result<LocalWords<T>> {
        self.check_open()?;
        let addrs = ps
            .into_iter()
            .map(|p| self.local_word(p))
            .collect::<Result<Vec<_>>>()?;
        self.before_sc_read()?;
        Ok(LocalWords {
            addrs,
            _t: PhantomData,
        })
    }

    /// Whether the word at `p` (on this locale) satisfies `cmp value` now.
    pub fn test_local<T: Atom>(&self, p: GlobalPtr<T>, cmp: Cmp, value: T) -> Result<bool> {
        self.check_open()?;
        let a = self.local_word(p)?;
        self.before_sc_read()?;
        Ok(cmp.holds(Self::load_local::<T>(a), value))
    }

    /// Waits until the word at `p` (on this locale) satisfies `cmp value`;
    /// a task runs other tasks meanwhile.
    pub fn wait_until_local<T: Atom>(&self, p: GlobalPtr<T>, cmp: Cmp, value: T) -> Result<()> {
        self.check_open()?;
        let a = self.local_word(p)?;
        self.before_sc_read()?;
        self.wait_until(|| cmp.holds(Self::load_local::<T>(a), value));
        Ok(())
    }

    /// Waits until one of the words satisfies `cmp value`; returns its index.
    pub fn wait_until_any<T: Atom>(
        &self,
        ps: &[GlobalPtr<T>],
        cmp: Cmp,
        value: T,
    ) -> Result<usize> {
        self.check_open()?;
        if ps.is_empty() {
            return Err(Error::InvalidLength {
                what: "wait_until_any word list",
                len: 0,
                reason: "needs at least one word".into(),
            });
        }
        let words = self.local_words(ps.iter().copied())?;
        let mut found = 0;
        self.wait_until(
            || match (0..words.len()).find(|&i| words.holds(i, cmp, value)) {
                Some(i) => {
                    found = i;
                    true
                }
                None => false,
            },
        );
        Ok(found)
    }

    /// Waits until every word satisfies `cmp value`.
    pub fn wait_until_all<T: Atom>(&self, ps: &[GlobalPtr<T>], cmp: Cmp, value: T) -> Result<()> {
        let words = self.local_words(ps.iter().copied())?;
        self.wait_until(|| (0..words.len()).all(|i| words.holds(i, cmp, value)));
        Ok(())
    }

    /// PUT `data` to `dst`, then update the signal word `sig` (usually on the
    /// same locale) with `op value`. The signal is an SC atomic, ordered
    /// after the data in every mode: whoever sees it sees the data.
    pub fn put_with_signal<T: Pod>(
        &self,
        dst: GlobalPtr<T>,
        data: &[T],
        sig: GlobalPtr<u64>,
        op: SignalOp,
        value: u64,
    ) -> Result<()> {
        self.put(dst, data)?;
        let a = self.atomic(sig);
        match op {
            SignalOp::Set => a.write(value),
            SignalOp::Add => a.add(value),
        }
    }

    /// [`Runtime::put_with_signal`] on raw bytes, non-blocking: the PUT is
    /// posted (the comm layer's non-blocking PUT; a copy on the mapped path,
    /// complete at once) and the signal sent behind it as a non-blocking
    /// atomic ([`Runtime::amo_nbi`]), ordered after the data in every mode
    /// as in the blocking form. The handle completes the PUT; the signal is
    /// complete by the thread's next [`Runtime::quiet`].
    ///
    /// # Safety
    /// `data` must not be modified until the handle has been waited for or
    /// dropped (leaking it lets the provider read the buffer later).
    pub unsafe fn put_with_signal_nbi<'a>(
        &'a self,
        dst: comm_ofi::GlobalAddr,
        data: &'a [u8],
        sig: GlobalPtr<u64>,
        op: SignalOp,
        value: u64,
    ) -> Result<comm_ofi::NbHandle<'a>> {
        self.check_open()?;
        self.check_live("PUT", dst, data.len())?;
        // SAFETY: the caller keeps `data` until the handle is done.
        let h = unsafe { self.comm().put_nb(dst, data) }?;
        let req = comm_ofi::AmoRequest {
            target: sig.global_addr(),
            ty: comm_ofi::AmoType::U64,
            op: match op {
                SignalOp::Set => AmoOp::Write,
                SignalOp::Add => AmoOp::Add,
            },
            operand: value,
            compare: 0,
            fetch: false,
        };
        // SAFETY: a non-fetching atomic writes no result.
        unsafe { self.amo_nbi(&req, std::ptr::null_mut()) }?;
        Ok(h)
    }

    /// Quiet: every operation the calling task issued so far is complete and
    /// visible everywhere (buffered unordered ones included). A boundary.
    pub fn quiet(&self) -> Result<()> {
        self.check_open()?;
        self.unordered_fence()?;
        Ok(self.comm().force_visible()?)
    }

    /// Fence: the task's operations issued so far are ordered before the
    /// ones it issues next, target by target (ordered PUTs and atomics
    /// already are; this issues the buffered unordered ones first). Not a
    /// visibility boundary: use [`Runtime::quiet`] for that.
    pub fn fence(&self) -> Result<()> {
        self.check_open()?;
        self.unordered_fence()
    }

    /// Runs one ready task on this thread if it is a worker (a runtime's
    /// task yielding); returns whether it ran one.
    pub fn yield_now(&self) -> bool {
        self.help_one()
    }

    pub(crate) fn amo_nb<T: Atom + Send>(
        &'static self,
        p: GlobalPtr<T>,
        op: AtomicOp,
        v: T,
        cmp: T,
    ) -> Result<AmoHandle<T>> {
        // As a task: it starts after the task-create boundary (ordered after
        // this task's earlier operations) and its result comes at the join.
        let task = self.spawn(move || {
            let req = op.request(p.global_addr(), T::TYPE, v.to_bits64(), true);
            let bits = self.amo_bits(&req.comparing(cmp.to_bits64()))?;
            Ok(T::from_bits64(bits))
        })?;
        Ok(AmoHandle { task })
    }
}

/// Non-blocking fetching atomics (on `&'static Runtime`, as from `init`).
impl<T: Atom + Send> crate::runtime::atomics::AtomicRef<'static, T> {
    /// Fetch-add, non-blocking: the old value comes with the handle's wait.
    /// Ordered after the task's earlier operations; not ordered with its
    /// later ones until waited for.
    pub fn fetch_add_nb(&self, v: T) -> Result<AmoHandle<T>> {
        self.rt().amo_nb(self.ptr(), AtomicOp::Add, v, v)
    }

    /// Exchange, non-blocking (see [`Self::fetch_add_nb`]).
    pub fn exchange_nb(&self, v: T) -> Result<AmoHandle<T>> {
        self.rt().amo_nb(self.ptr(), AtomicOp::Xchg, v, v)
    }

    /// Compare-and-exchange, non-blocking: the handle gives the old value
    /// (it swapped if that equals `current`).
    pub fn compare_exchange_nb(&self, current: T, new: T) -> Result<AmoHandle<T>> {
        self.rt()
            .amo_nb(self.ptr(), AtomicOp::Cmpxchg, new, current)
    }

    /// Atomic read, non-blocking.
    pub fn read_nb(&self) -> Result<AmoHandle<T>> {
        self.rt().amo_nb(
            self.ptr(),
            AtomicOp::Read,
            T::from_bits64(0),
            T::from_bits64(0),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons() {
        assert!(Cmp::Ge.holds(3, 3) && !Cmp::Gt.holds(3, 3));
        assert!(Cmp::Ne.holds(1.5, 2.0) && Cmp::Lt.holds(-1i8, 0));
        assert_eq!(Cmp::ALL.len(), 6);
    }
}
