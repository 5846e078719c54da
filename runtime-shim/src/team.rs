//! Teams and their collectives: barrier, broadcast from any root, reduce
//! and allreduce (built-in operations, or the caller's function:
//! `combine.rs`), fcollect / collect, alltoall, and splitting a team by
//! stride or colour.
//!
//! Exists because a PGAS library is expected to have them (OpenSHMEM's
//! teams, Chapel's reductions) and every program was hand-rolling them over
//! PUTs. One mechanism serves all of them:
//!
//! * every member of a team owns a *team area* in its registered heap (the
//!   same layout everywhere, addresses exchanged when the team is made):
//!   dissemination-barrier flag words and, for each of two alternating
//!   phases, one receive slot per member;
//! * a collective is an *exchange*: each member PUTs what it sends to a
//!   member into that member's slot for it (small data inline, larger as the
//!   address of a copy in the sender's heap, fetched by GET), then the team
//!   barrier; after it everything sent is visible (the barrier forces every
//!   context of the locale first: a collective is an MCM boundary), and each
//!   member reads its own slots locally;
//! * the barrier's flag words carry the collective's epoch *and* the lowest
//!   failing member: a member that cannot contribute (a heap too full for its
//!   copy, bad input) still takes part, and the dissemination barrier, which
//!   leaves every member with the minimum over all, delivers the failure to
//!   everyone: every participant returns an error naming the locale;
//! * phases alternate (slots and flag words), so a slot is rewritten only
//!   after everyone has passed the barrier that follows its last read; a
//!   sender's large copies are freed after the next collective's barrier,
//!   for the same reason.
//!
//! One collective at a time per team and locale (called by one task per
//! member, as the language's collectives are); concurrent calls on one
//! locale are an error, not a hang.

use crate::error::{Error, Result};
use crate::pod::{as_bytes, vec_from_bytes, Pod};
use crate::runtime::Runtime;
pub use crate::team_area::TEAM_INLINE;
use crate::team_area::{new_area, SlotHeader, FLAGS, HEADER, SLOT};
use comm_ofi::{GlobalAddr, Locale};
use parking_lot::Mutex;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

mod combine;
mod spread;

use combine::{Builtin, ByFn, ByteElems, Combiner};
pub use combine::{Reduce, ReduceOp};

/// First word of a large reduction's announcement (`spread.rs`): never an
/// element count, so it is told from the one-exchange path's contribution.
const SPREAD_TAG: u64 = u64::MAX;

/// A team: an ordered subset of the locales (ranks `0..size`) with its own
/// collectives. Cheap to clone; every member holds one.
#[derive(Clone)]
pub struct Team {
    inner: Arc<Inner>,
}

struct Inner {
    rt: &'static Runtime,
    /// World locale of each rank.
    members: Vec<Locale>,
    /// This locale's rank.
    me: usize,
    /// Team area address on each rank.
    areas: Vec<u64>,
    state: Mutex<State>,
    /// How many teams were split from this one (names them).
    splits: AtomicU64,
    name: String,
}

#[derive(Default)]
struct State {
    epoch: u64,
    /// This locale's large copies of the previous collective, freed after
    /// the next barrier.
    to_free: Vec<GlobalAddr>,
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team")
            .field("name", &self.inner.name)
            .field("rank", &self.inner.me)
            .field("members", &self.inner.members)
            .finish()
    }
}

fn word(rt: &Runtime, addr: u64) -> &'static AtomicU64 {
    assert!(
        rt.comm().heap().contains(addr, 8) && addr % 8 == 0,
        "team word {addr:#x} outside the heap (internal error)"
    );
    // SAFETY: an aligned word of this locale's registered heap (checked),
    // which lives as long as the process; remote writers store whole words
    // by RMA (or a mapped copy) and local code only reads it atomically.
    unsafe { AtomicU64::from_ptr(addr as *mut u64) }
}

/// The world team, made on first use from the areas init exchanged (a
/// process has one runtime, so one world team).
static WORLD: std::sync::OnceLock<Team> = std::sync::OnceLock::new();

/// The world team lives here, not in `runtime.rs`, so that the runtime
/// module never names `Team` (this module is the layer above it).
impl Runtime {
    /// The world team (every locale, rank = locale): team collectives,
    /// splitting into smaller teams (see [`Team`]).
    pub fn world(&self) -> &Team {
        WORLD.get_or_init(|| {
            let rt = Runtime::current().expect("a Runtime exists only once init has stored it");
            debug_assert!(std::ptr::eq(rt, self));
            Team::world(rt, self.world_areas().to_vec())
        })
    }
}

impl Team {
    /// The world team (every locale; rank = locale), from the team areas
    /// init allocated and exchanged.
    fn world(rt: &'static Runtime, areas: Vec<u64>) -> Team {
        let n = areas.len();
        Team {
            inner: Arc::new(Inner {
                rt,
                members: (0..n).collect(),
                me: rt.here(),
                areas,
                state: Mutex::new(State::default()),
                splits: AtomicU64::new(0),
                name: "world".into(),
            }),
        }
    }

    fn checked_area(self, area: u64) -> Team {
        debug_assert_eq!(self.inner.areas[self.inner.me], area);
        self
    }

    /// Number of members.
    pub fn size(&self) -> usize {
        self.inner.members.len()
    }

    /// This locale's rank in the team.
    pub fn rank(&self) -> usize {
        self.inner.me
    }

    /// The world locale of `rank`.
    pub fn locale_of(&self, rank: usize) -> Result<Locale> {
        self.inner
            .members
            .get(rank)
            .copied()
            .ok_or_else(|| self.bad_rank(rank))
    }

    /// The members' world locales, by rank.
    pub fn locales(&self) -> &[Locale] {
        &self.inner.members
    }

    /// The team's name (`world`, `world/0`, `world/0/2`, ...).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    fn bad_rank(&self, rank: usize) -> Error {
        Error::InvalidLength {
            what: "team rank",
            len: rank as u64,
            reason: format!("team {} has {} members", self.inner.name, self.size()),
        }
    }

    fn slot_addr(&self, on_rank: usize, phase: u64, from_rank: usize) -> u64 {
        self.inner.areas[on_rank]
            + (FLAGS * 8) as u64
            + ((phase as usize * self.size() + from_rank) * SLOT) as u64
    }

    // ------------------------------------------------------------ barrier

    /// The team barrier: every store a member issued before it is visible
    /// to every member after it.
    pub fn barrier(&self) -> Result<()> {
        self.exchange("barrier", |_| Ok(Cow::Borrowed(&[][..])), |_| false)
            .map(|_| ())
    }

    /// Dissemination barrier carrying the lowest failing rank + 1 (0: none).
    /// Returns the minimum over all members.
    fn dissemination(&self, epoch: u64, fail: u64) -> Result<u64> {
        let rt = self.inner.rt;
        let n = self.size();
        let me = self.inner.me;
        let mut seen = fail;
        let mut dist = 1usize;
        let mut round = 0usize;
        while dist < n {
            let partner = (me + dist) % n;
            let w = 8 * ((epoch % 2) as usize * 64 + round) as u64;
            let flag = GlobalAddr::new(self.inner.members[partner], self.inner.areas[partner] + w);
            let value = epoch << 32 | seen;
            rt.comm().put(flag, &value.to_le_bytes())?;
            let mine = word(rt, self.inner.areas[me] + w);
            rt.wait_until(|| mine.load(Ordering::Acquire) >> 32 >= epoch);
            let got = mine.load(Ordering::Acquire);
            if got >> 32 != epoch {
                return Err(Error::State(format!(
                    "team {}: barrier round {round} saw epoch {} while at {epoch}: members \
                     are not calling the same collectives",
                    self.inner.name,
                    got >> 32
                )));
            }
            let theirs = got & 0xffff_ffff;
            if theirs != 0 && (seen == 0 || theirs < seen) {
                seen = theirs;
            }
            dist *= 2;
            round += 1;
        }
        Ok(seen)
    }

    // ----------------------------------------------------------- exchange

    /// The one collective: `outgoing(rank)` gives what this member sends to
    /// `rank` (empty: nothing; the same borrowed bytes to several ranks
    /// share one large copy), `expects(rank)` whether this member reads
    /// what `rank` sent it. Returns, by rank, what was received (empty for
    /// ranks not expected). A failure anywhere fails it everywhere.
    fn exchange<'a>(
        &self,
        what: &str,
        outgoing: impl Fn(usize) -> Result<Cow<'a, [u8]>>,
        expects: impl Fn(usize) -> bool,
    ) -> Result<Vec<Vec<u8>>> {
        let rt = self.inner.rt;
        rt.check_open()?;
        let Some(mut st) = self.inner.state.try_lock() else {
            return Err(Error::State(format!(
                "team {}: a collective entered by two tasks of locale {} at once; a collective \
                 is called by one task per member",
                self.inner.name,
                rt.here()
            )));
        };
        st.epoch += 1;
        let epoch = st.epoch;
        if epoch >= 1 << 31 {
            return Err(Error::State(format!(
                "team {}: more than 2^31 collectives",
                self.inner.name
            )));
        }
        let phase = epoch % 2;
        let n = self.size();
        // A collective is an MCM boundary for the whole locale.
        let mut my_err: Option<Error> = rt.comm().force_visible_all().err().map(Error::from);
        let mut new_copies = Vec::new();
        if my_err.is_none() {
            for to in 0..n {
                match self.send_to(to, phase, epoch, &outgoing, &mut new_copies) {
                    Ok(()) => {}
                    Err(e) => {
                        my_err = Some(e);
                        break;
                    }
                }
            }
            // The contributions must be visible before any barrier flag
            // that lets a member read them: a member learns of us through
            // others' flags (dissemination), and the modes order a PUT only
            // with later operations to the same target. Without this a
            // member could read its slot before our PUT to it landed (seen
            // once on udp;ofi_rxd: "nothing from rank 0 ... in collective 2").
            if my_err.is_none() {
                my_err = rt.comm().force_visible().err().map(Error::from);
            }
        }
        let fail = if my_err.is_some() {
            self.inner.me as u64 + 1
        } else {
            0
        };
        let seen = self.dissemination(epoch, fail);
        // Everyone has passed the barrier after the previous collective's
        // reads: its large copies can go.
        for a in std::mem::take(&mut st.to_free) {
            let _ = rt.comm().free(a);
        }
        st.to_free = new_copies.into_iter().map(|c| c.2).collect();
        let seen = seen?;
        if let Some(e) = my_err {
            return Err(e);
        }
        if seen != 0 {
            let rank = (seen - 1) as usize;
            return Err(Error::State(format!(
                "team {} {what} failed on locale {} (rank {rank}); this member's part was fine",
                self.inner.name, self.inner.members[rank]
            )));
        }
        let mut got = Vec::with_capacity(n);
        for from in 0..n {
            if expects(from) {
                got.push(self.read_slot(phase, epoch, from)?);
            } else {
                got.push(Vec::new());
            }
        }
        Ok(got)
    }

    fn send_to<'a>(
        &self,
        to: usize,
        phase: u64,
        epoch: u64,
        outgoing: &impl Fn(usize) -> Result<Cow<'a, [u8]>>,
        copies: &mut Vec<(usize, usize, GlobalAddr)>,
    ) -> Result<()> {
        let rt = self.inner.rt;
        let data = outgoing(to)?;
        if data.is_empty() {
            return Ok(());
        }
        let mut msg = Vec::with_capacity(HEADER + data.len().min(TEAM_INLINE));
        // Borrowed bytes sent to several ranks: one copy serves them all.
        let key = match &data {
            Cow::Borrowed(b) => (b.as_ptr() as usize, b.len()),
            Cow::Owned(_) => (0, 0),
        };
        let shared = copies
            .iter()
            .find(|(p, l, _)| key.0 != 0 && (*p, *l) == key)
            .map(|c| c.2.addr);
        let large_at = if data.len() <= TEAM_INLINE {
            None
        } else if shared.is_some() {
            shared
        } else {
            let copy = rt
                .comm()
                .alloc(data.len(), 64)
                .map_err(|e| Error::InvalidLength {
                    what: "collective contribution",
                    len: data.len() as u64,
                    reason: format!("no room for its copy in this locale's heap: {e}"),
                })?;
            // SAFETY: a fresh heap allocation of data.len() bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), copy.addr as *mut u8, data.len())
            };
            copies.push((key.0, key.1, copy));
            Some(copy.addr)
        };
        let head = SlotHeader {
            len: data.len(),
            large_at,
            epoch,
        };
        msg.extend_from_slice(&head.encode());
        if large_at.is_none() {
            msg.extend_from_slice(&data);
        }
        let at = GlobalAddr::new(
            self.inner.members[to],
            self.slot_addr(to, phase, self.inner.me),
        );
        rt.comm().put(at, &msg)?;
        Ok(())
    }

    fn read_slot(&self, phase: u64, epoch: u64, from: usize) -> Result<Vec<u8>> {
        let rt = self.inner.rt;
        let me = self.inner.me;
        let at = self.slot_addr(me, phase, from);
        let mut head = [0u8; HEADER];
        rt.comm().get(&mut head, GlobalAddr::new(rt.here(), at))?;
        let slot = SlotHeader::decode(&head).map_err(|why| {
            Error::State(format!(
                "team {}: rank {from} (locale {}): {why}",
                self.inner.name, self.inner.members[from]
            ))
        })?;
        let slot = match slot {
            Some(s) if s.epoch == epoch => s,
            other => {
                return Err(Error::State(format!(
                    "team {}: nothing from rank {from} (locale {}) in collective {epoch} (slot \
                     says epoch {}): members are not calling the same collectives",
                    self.inner.name,
                    self.inner.members[from],
                    other.map_or(0, |s| s.epoch)
                )))
            }
        };
        let src = match slot.large_at {
            None => GlobalAddr::new(rt.here(), at + HEADER as u64),
            Some(addr) => {
                // In the sender's heap, checked before it sizes our buffer.
                let src = GlobalAddr::new(self.inner.members[from], addr);
                rt.comm().check_range(src, slot.len)?;
                src
            }
        };
        let mut v = vec![0u8; slot.len];
        rt.comm().get(&mut v, src)?;
        Ok(v)
    }

    // -------------------------------------------------------- collectives

    /// Broadcast: `data` of rank `root` on every member (ignored elsewhere).
    pub fn broadcast<T: Pod>(&self, root: usize, data: &[T]) -> Result<Vec<T>> {
        self.locale_of(root)?;
        let me = self.inner.me;
        // Length-prefixed, so that an empty broadcast still sends the root's
        // slot (the others wait for it).
        let mine = len_prefixed(data);
        let got = self.exchange(
            "broadcast",
            |to| {
                Ok(Cow::Borrowed(if me == root && to != root {
                    &mine[..]
                } else {
                    &[][..]
                }))
            },
            |from| from == root && me != root,
        )?;
        if me == root {
            return Ok(data.to_vec());
        }
        let mut parts = self.unprefix::<T>(&got[root..=root])?;
        Ok(parts.pop().expect("one part"))
    }

    /// Reduce: every member's `data` (same length everywhere) combined
    /// element-wise with `op`; `Some` at `root`, `None` elsewhere.
    pub fn reduce<T: Reduce>(
        &self,
        root: usize,
        data: &[T],
        op: ReduceOp,
    ) -> Result<Option<Vec<T>>> {
        self.locale_of(root)?;
        self.check_op::<T>(op)?;
        self.reduce_by(root, data, &mut Builtin(op))
    }

    /// Allreduce: [`Team::reduce`], result on every member.
    pub fn allreduce<T: Reduce>(&self, data: &[T], op: ReduceOp) -> Result<Vec<T>> {
        self.check_op::<T>(op)?;
        self.allreduce_by(data, &mut Builtin(op))
    }

    /// [`Team::allreduce`] into `data` itself (no result vector: a
    /// language's in-place `co_sum` of a large array).
    pub fn allreduce_in_place<T: Reduce>(&self, data: &mut [T], op: ReduceOp) -> Result<()> {
        self.check_op::<T>(op)?;
        self.reduce_in_place_by(None, data, &mut Builtin(op))
            .map(|_| ())
    }

    /// [`Team::reduce`] into `data` itself at `root` (elsewhere `data` is
    /// left as it was); returns whether `data` holds the result.
    pub fn reduce_in_place<T: Reduce>(
        &self,
        root: usize,
        data: &mut [T],
        op: ReduceOp,
    ) -> Result<bool> {
        self.locale_of(root)?;
        self.check_op::<T>(op)?;
        self.reduce_in_place_by(Some(root), data, &mut Builtin(op))
    }

    /// Reduce with the caller's function (a type or an operation the
    /// runtime has no arithmetic for: complex numbers, `long double` held
    /// as bytes, a user-defined operator): every member's `data` combined
    /// element-wise as `f(acc, next)` in rank order, `((x0 f x1) f x2) ...`,
    /// by the same machinery as the built-in operations (large arrays by
    /// reduce-scatter and gather: each member applies `f` to its block of
    /// the array only). `f` should be associative; the result is the same
    /// bits on every member whatever it is. `Some` at `root`, `None`
    /// elsewhere.
    pub fn reduce_with<T: Pod>(
        &self,
        root: usize,
        data: &[T],
        f: impl FnMut(T, T) -> T,
    ) -> Result<Option<Vec<T>>> {
        self.locale_of(root)?;
        self.reduce_by(root, data, &mut ByFn(f))
    }

    /// [`Team::reduce_with`], result on every member.
    pub fn allreduce_with<T: Pod>(&self, data: &[T], f: impl FnMut(T, T) -> T) -> Result<Vec<T>> {
        self.allreduce_by(data, &mut ByFn(f))
    }

    /// [`Team::reduce_with`] over elements of `elem_len` bytes that only
    /// the caller's function knows (Fortran's CO_REDUCE on a derived type
    /// or a character, `integer(16)`), in place: `data` holds whole
    /// elements, the same number on every member; `f(acc, next)` combines
    /// `next` into `acc` or fails with a message, which fails the reduction
    /// on every member. The result replaces `data` on every member
    /// (`root` `None`) or at `root` only; returns whether `data` holds it.
    pub fn reduce_elems_in_place(
        &self,
        root: Option<usize>,
        data: &mut [u8],
        elem_len: usize,
        f: impl FnMut(&mut [u8], &[u8]) -> std::result::Result<(), String>,
    ) -> Result<bool> {
        if let Some(r) = root {
            self.locale_of(r)?;
        }
        if elem_len == 0 || data.len() % elem_len != 0 {
            return Err(Error::InvalidLength {
                what: "reduction input",
                len: data.len() as u64,
                reason: format!("not a whole number of {elem_len}-byte elements"),
            });
        }
        self.reduce_in_place_by(root, data, &mut ByteElems { len: elem_len, f })
    }

    /// The reductions' one path to `root`: by reduce-scatter and gather
    /// past [`TEAM_INLINE`] bytes, else one exchange and the root combines.
    fn reduce_by<T: Pod>(
        &self,
        root: usize,
        data: &[T],
        c: &mut dyn Combiner<T>,
    ) -> Result<Option<Vec<T>>> {
        let me = self.inner.me;
        if self.spreads::<T>(data.len()) {
            if me != root {
                self.spread_reduce_off_root(data, c)?;
                return Ok(None);
            }
            let mut out = data.to_vec();
            self.spread_reduce(Some(root), &mut out, c)?;
            return Ok(Some(out));
        }
        let mine = len_prefixed(data);
        let got = self.exchange(
            "reduce",
            |to| Ok(Cow::Borrowed(if to == root { &mine[..] } else { &[][..] })),
            |_| me == root,
        )?;
        if me != root {
            return Ok(None);
        }
        Ok(Some(self.combine_all(&got, data.len(), c)?))
    }

    /// The all-reduce path (as [`Team::reduce_by`], every member combines).
    fn allreduce_by<T: Pod>(&self, data: &[T], c: &mut dyn Combiner<T>) -> Result<Vec<T>> {
        if self.spreads::<T>(data.len()) {
            let mut out = data.to_vec();
            self.spread_reduce(None, &mut out, c)?;
            return Ok(out);
        }
        let mine = len_prefixed(data);
        let got = self.exchange("allreduce", |_| Ok(Cow::Borrowed(&mine[..])), |_| true)?;
        self.combine_all(&got, data.len(), c)
    }

    /// The in-place path: at `root` (or everywhere for `None`) the result
    /// replaces `data`; returns whether it did here.
    fn reduce_in_place_by<T: Pod>(
        &self,
        root: Option<usize>,
        data: &mut [T],
        c: &mut dyn Combiner<T>,
    ) -> Result<bool> {
        if self.spreads::<T>(data.len()) {
            return self.spread_reduce(root, data, c);
        }
        let v = match root {
            None => Some(self.allreduce_by(data, c)?),
            Some(r) => self.reduce_by(r, data, c)?,
        };
        match v {
            Some(v) => {
                data.copy_from_slice(&v);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Whether a reduction of `len` `T`s goes by reduce-scatter and gather
    /// (`spread.rs`): past what a slot carries inline, on more than one
    /// member. Every member decides the same for the same length.
    fn spreads<T: Pod>(&self, len: usize) -> bool {
        self.size() > 1 && len.saturating_mul(std::mem::size_of::<T>()) + 8 > TEAM_INLINE
    }

    /// Frees `addr` (this locale's) after the team's next collective's
    /// barrier, when no member can still be reading it.
    fn defer_free(&self, addr: GlobalAddr) {
        self.inner.state.lock().to_free.push(addr);
    }

    /// Fcollect: every member's `data` (same length everywhere),
    /// concatenated in rank order, on every member.
    pub fn fcollect<T: Pod>(&self, data: &[T]) -> Result<Vec<T>> {
        let mine = len_prefixed(data);
        let got = self.exchange("fcollect", |_| Ok(Cow::Borrowed(&mine[..])), |_| true)?;
        let parts = self.unprefix::<T>(&got)?;
        if let Some((r, p)) = parts
            .iter()
            .enumerate()
            .find(|(_, p)| p.len() != data.len())
        {
            return Err(Error::InvalidLength {
                what: "fcollect contribution",
                len: p.len() as u64,
                reason: format!(
                    "rank {r} gave {} elements and this member {}: fcollect needs equal sizes \
                     (use collect)",
                    p.len(),
                    data.len()
                ),
            });
        }
        Ok(parts.concat())
    }

    /// Collect: every member's `data` (any length), concatenated in rank
    /// order, on every member.
    pub fn collect<T: Pod>(&self, data: &[T]) -> Result<Vec<T>> {
        let mine = len_prefixed(data);
        let got = self.exchange("collect", |_| Ok(Cow::Borrowed(&mine[..])), |_| true)?;
        Ok(self.unprefix::<T>(&got)?.concat())
    }

    /// Alltoall: `data` holds `size` blocks of equal length; block `i` goes
    /// to rank `i`; returns the blocks received, in rank order.
    pub fn alltoall<T: Pod>(&self, data: &[T]) -> Result<Vec<T>> {
        let n = self.size();
        if data.len() % n != 0 {
            return Err(Error::InvalidLength {
                what: "alltoall buffer",
                len: data.len() as u64,
                reason: format!("not a multiple of the team size {n}"),
            });
        }
        let k = data.len() / n;
        let got = self.exchange(
            "alltoall",
            |to| Ok(Cow::Owned(len_prefixed(&data[to * k..(to + 1) * k]))),
            |_| true,
        )?;
        let parts = self.unprefix::<T>(&got)?;
        if let Some((r, p)) = parts.iter().enumerate().find(|(_, p)| p.len() != k) {
            return Err(Error::InvalidLength {
                what: "alltoall block",
                len: p.len() as u64,
                reason: format!("rank {r} sent {} elements, this member {k}", p.len()),
            });
        }
        Ok(parts.concat())
    }

    fn check_op<T: Reduce>(&self, op: ReduceOp) -> Result<()> {
        if op.bitwise() && T::combine(T::from_bits64(0), T::from_bits64(0), op).is_none() {
            return Err(Error::AtomicUse(format!(
                "reduction {op:?} is not defined on {}",
                std::any::type_name::<T>()
            )));
        }
        Ok(())
    }

    fn unprefix<T: Pod>(&self, got: &[Vec<u8>]) -> Result<Vec<Vec<T>>> {
        got.iter()
            .enumerate()
            .map(|(r, b)| {
                if b.len() < 8 {
                    return Err(Error::State(format!(
                        "team {}: rank {r} sent a garbled contribution",
                        self.inner.name
                    )));
                }
                let n = u64::from_le_bytes(b[..8].try_into().expect("8")) as usize;
                let body = &b[8..];
                if n.checked_mul(std::mem::size_of::<T>()) != Some(body.len()) {
                    return Err(Error::State(format!(
                        "team {}: rank {r} sent {} bytes for {n} elements",
                        self.inner.name,
                        body.len()
                    )));
                }
                Ok(vec_from_bytes(body))
            })
            .collect()
    }

    fn combine_all<T: Pod>(
        &self,
        got: &[Vec<u8>],
        len: usize,
        c: &mut dyn Combiner<T>,
    ) -> Result<Vec<T>> {
        let parts = self.unprefix::<T>(got)?;
        if let Some((r, p)) = parts.iter().enumerate().find(|(_, p)| p.len() != len) {
            return Err(Error::InvalidLength {
                what: "reduction input",
                len: p.len() as u64,
                reason: format!("rank {r} gave {} elements and this member {len}", p.len()),
            });
        }
        let mut acc = parts[0].clone();
        for p in &parts[1..] {
            c.combine(&mut acc, p)?;
        }
        Ok(acc)
    }

    // -------------------------------------------------------------- split

    /// Splits by stride (collective over this team): the members at ranks
    /// `start, start + stride, ...` (`size` of them) form a new team, in
    /// that order; the others get `None`.
    pub fn split_strided(&self, start: usize, stride: usize, size: usize) -> Result<Option<Team>> {
        let n = self.size();
        let last = start.saturating_add(stride.saturating_mul(size.saturating_sub(1)));
        if size == 0 || stride == 0 || last >= n {
            return Err(Error::InvalidLength {
                what: "strided team",
                len: size as u64,
                reason: format!(
                    "start {start}, stride {stride}, size {size} do not fit team {} of {n} members",
                    self.inner.name
                ),
            });
        }
        let me = self.inner.me;
        let color = (me >= start && (me - start) % stride == 0 && (me - start) / stride < size)
            .then_some(0);
        self.split_color(color, me as i64)
    }

    /// Splits by colour (collective over this team): members with the same
    /// colour form a team, ordered by `key` (then by rank); `None` as colour
    /// joins no team (and gets `None`).
    pub fn split_color(&self, color: Option<u32>, key: i64) -> Result<Option<Team>> {
        let rt = self.inner.rt;
        let me = self.inner.me;
        // Round 1: everybody's (colour, key).
        let mut mine = Vec::with_capacity(16);
        mine.extend_from_slice(&color.map_or(u64::MAX, u64::from).to_le_bytes());
        mine.extend_from_slice(&key.to_le_bytes());
        let all = self.fcollect(&mine)?;
        let mut members: Vec<(i64, usize)> = Vec::new();
        for r in 0..self.size() {
            let b = &all[16 * r..16 * r + 16];
            let c = u64::from_le_bytes(b[..8].try_into().expect("8"));
            let k = i64::from_le_bytes(b[8..].try_into().expect("8"));
            if color.is_some() && c == color.map_or(u64::MAX, u64::from) {
                members.push((k, r));
            }
        }
        members.sort();
        let split = self.inner.splits.fetch_add(1, Ordering::Relaxed);
        // Round 2: each new member's area address (0 from non-members).
        let area = if color.is_some() {
            new_area(rt.comm(), members.len())
        } else {
            Ok(0)
        };
        // Contribute even if allocation failed (0), then fail everywhere.
        let addrs = self.fcollect(&[*area.as_ref().unwrap_or(&0)]);
        let area = area?;
        let addrs = addrs?;
        if color.is_none() {
            return Ok(None);
        }
        let ranks: Vec<usize> = members.iter().map(|(_, r)| *r).collect();
        let new_me = ranks.iter().position(|r| *r == me).expect("a member");
        Ok(Some(
            Team {
                inner: Arc::new(Inner {
                    rt,
                    members: ranks.iter().map(|r| self.inner.members[*r]).collect(),
                    me: new_me,
                    areas: ranks.iter().map(|r| addrs[*r]).collect(),
                    state: Mutex::new(State::default()),
                    splits: AtomicU64::new(0),
                    name: format!("{}/{split}:{}", self.inner.name, color.unwrap_or(0)),
                }),
            }
            .checked_area(area),
        ))
    }

    // ------------------------------------------------- made by members

    /// Allocates (zeroed) this locale's team area for a team of `n`
    /// members, for [`Team::from_parts`].
    pub fn alloc_area(rt: &Runtime, n: usize) -> Result<u64> {
        new_area(rt.comm(), n.max(1))
    }

    /// A team its members make without a collective over a parent team:
    /// `members` are world locales by rank, `areas` each member's team area
    /// (made by [`Team::alloc_area`] on that member), agreed by the caller
    /// some other way (OpenSHMEM's active sets, where only the set's
    /// members call). This locale must be a member; the team's
    /// collectives then work as any team's.
    pub fn from_parts(
        rt: &'static Runtime,
        members: Vec<Locale>,
        areas: Vec<u64>,
        name: String,
    ) -> Result<Team> {
        let n = rt.num_locales();
        let bad = |reason: String| Error::InvalidLength {
            what: "team members",
            len: members.len() as u64,
            reason,
        };
        if members.is_empty() || members.len() != areas.len() {
            return Err(bad(format!("{} areas given", areas.len())));
        }
        if let Some(l) = members.iter().find(|l| **l >= n) {
            return Err(bad(format!("locale {l} is not in the job of {n}")));
        }
        let mut sorted = members.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(bad(format!("a locale is listed twice: {members:?}")));
        }
        let Some(me) = members.iter().position(|l| *l == rt.here()) else {
            return Err(bad(format!("locale {} is not a member", rt.here())));
        };
        Ok(Team {
            inner: Arc::new(Inner {
                rt,
                members,
                me,
                areas,
                state: Mutex::new(State::default()),
                splits: AtomicU64::new(0),
                name,
            }),
        })
    }
}

fn len_prefixed<T: Pod>(data: &[T]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + std::mem::size_of_val(data));
    v.extend_from_slice(&(data.len() as u64).to_le_bytes());
    v.extend_from_slice(as_bytes(data));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions_combine_as_documented() {
        assert_eq!(u8::combine(250, 10, ReduceOp::Sum), Some(4), "wraps");
        assert_eq!(i32::combine(-3, 2, ReduceOp::Min), Some(-3));
        assert_eq!(u64::combine(6, 3, ReduceOp::Xor), Some(5));
        assert_eq!(f64::combine(1.5, 2.0, ReduceOp::Max), Some(2.0));
        assert_eq!(f32::combine(1.0, 2.0, ReduceOp::And), None);
    }

    #[test]
    fn area_layout_holds_two_phases_of_slots() {
        assert_eq!(crate::team_area::area_bytes(1), FLAGS * 8 + 2 * SLOT);
        assert_eq!(len_prefixed(&[1u16, 2]).len(), 8 + 4);
    }
}
