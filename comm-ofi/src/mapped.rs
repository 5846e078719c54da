//! The intra-node mapped path: locales on one host map each other's
//! registered heap and static data, so PUT and GET to them are copies and
//! their atomics CPU atomics, with no provider, no transmit context and no
//! receive poller of the target involved.
//!
//! Set-up (in `Comm::open`, collective): every locale that wants the path
//! (`PGAS_LOCAL_PATH=mapped`, the default) carves its heap from a memfd
//! ([`crate::heap::Heap::new_shared`]); the heap is still registered with
//! libfabric for the fabric path. Each locale advertises (pid, memfd, a
//! random cookie, whether it wants the path); every locale with the same
//! host key (host name and kernel boot id) that wants the path opens
//! `/proc/<pid>/fd/<fd>`, maps the whole heap shared and checks the cookie
//! the owner wrote into its heap (a host-name clash or a pid namespace
//! cannot make it map the wrong memory). A second exchange tells everybody
//! who mapped whom. Peers' heaps sit at other virtual addresses here: a
//! remote address becomes (peer's base in my mapping + offset) through one
//! add ([`Mapped::translate`]).
//!
//! Static data: each locale also moves the executable's static data onto a
//! memfd (`statics::share`) and advertises it beside the heap's; a peer
//! whose heap was mapped (so the pid is the right process) maps it too, if
//! both registered static segments of one size (the same program).
//! `PGAS_LOCAL_PATH=mapped-heap` maps the heaps only: a static of a
//! co-located locale is then reached through the provider (the path before
//! issue 37, kept for comparison and for the litmus control of the copy's
//! ordering after such stores).
//!
//! Atomics: a NIC atomic and a CPU atomic on one word are not atomic with
//! respect to each other. The AM layer applies AMOs-via-AM with CPU atomics
//! on the target, so CPU atomics on mapped words mix correctly with them but
//! not with NIC-native ones. Hence the decision per job: if any locale maps
//! any other, no type's atomics are native anywhere in the job (mapped
//! targets: CPU atomics by the initiator; others: through AMs, applied with
//! CPU atomics by the target). Everybody computes this from the same
//! exchange, so all agree.
//!
//! Doorbell: with every peer mapping it, nothing needs this locale's
//! progress for RMA any more, only its AM poller for incoming requests. The
//! poller then blocks when idle on a futex word in its own heap, and a
//! mapped sender rings it after each send ([`Mapped::ring`]). The memory
//! model of the path is argued in `docs/mcm.md` ("The mapped path"); the
//! copies into a translated address and the boundary's fence are
//! [`crate::publish`] (a word copy `Release`, a word read `Acquire`), the
//! same code the loom models of `tests/loom_publish.rs` run, as the
//! doorbell's protocol is [`crate::doorbell`] (`tests/loom_doorbell.rs`).

use crate::error::{Error, Result};
use mcm::Locale;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// How locales on one host reach each other's heaps (`PGAS_LOCAL_PATH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalPath {
    /// Map co-located peers' heaps and static data (default where possible).
    Mapped,
    /// Map co-located peers' heaps only; their static data through the
    /// provider.
    MappedHeap,
    /// Always through the provider.
    Fabric,
}

impl std::str::FromStr for LocalPath {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<LocalPath, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "mapped" => Ok(LocalPath::Mapped),
            "mapped-heap" => Ok(LocalPath::MappedHeap),
            "fabric" => Ok(LocalPath::Fabric),
            _ => Err("expected mapped, mapped-heap or fabric".into()),
        }
    }
}

impl LocalPath {
    /// Whether co-located heaps are mapped.
    pub fn maps_heaps(self) -> bool {
        self != LocalPath::Fabric
    }
}

impl std::fmt::Display for LocalPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LocalPath::Mapped => "mapped",
            LocalPath::MappedHeap => "mapped-heap",
            LocalPath::Fabric => "fabric",
        })
    }
}

/// Bytes of the block every heap reserves for the mapped path, at the same
/// offset everywhere: the doorbell word (its own cache line), the cookie.
pub const BLOCK_BYTES: usize = 128;
const DOORBELL_AT: u64 = 0;
const COOKIE_AT: u64 = 64;

use crate::doorbell::AWAKE;
use crate::doorbell::{self, KernelFutex};
#[cfg(test)]
use crate::doorbell::{COVERED, SLEEPING};

/// Where the locales of the job live.
#[derive(Debug, Clone)]
pub struct HostLayout {
    /// Host key of every locale (host name, or the test override, and the
    /// kernel's boot id).
    pub keys: Vec<String>,
    /// This locale's index among the locales of its host.
    pub local_rank: usize,
    /// Locales on this host (this one included).
    pub local_count: usize,
}

impl HostLayout {
    /// Builds the layout from every locale's key.
    pub fn new(keys: Vec<String>, me: usize) -> HostLayout {
        let local_rank = keys[..me].iter().filter(|k| **k == keys[me]).count();
        let local_count = keys.iter().filter(|k| **k == keys[me]).count();
        HostLayout {
            keys,
            local_rank,
            local_count,
        }
    }

    /// Whether every locale is on this host.
    pub fn single_host(&self) -> bool {
        self.keys.iter().all(|k| *k == self.keys[0])
    }

    /// The cores this locale owns: the cores available, shared out among
    /// the locales of this host (at least one).
    pub fn cores_owned(&self, available: usize) -> usize {
        (available / self.local_count.max(1)).max(1)
    }
}

/// This process's host key: the host name (or `PGAS_TEST_HOSTNAMES`'s
/// entry for `rank`) and the kernel's boot id.
pub fn host_key(test_hostnames: Option<&[String]>, rank: usize) -> Result<String> {
    let name = match test_hostnames {
        Some(names) => names.get(rank).cloned().ok_or_else(|| Error::Env {
            var: "PGAS_TEST_HOSTNAMES",
            value: names.join(","),
            reason: format!(
                "test-only; names {} ranks, rank {rank} has none",
                names.len()
            ),
        })?,
        None => read_trimmed("/proc/sys/kernel/hostname"),
    };
    let boot = read_trimmed("/proc/sys/kernel/random/boot_id");
    Ok(format!("{name}/{boot}"))
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// What a locale tells the others about its heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Advert {
    pid: u32,
    /// memfd number, or -1 (anonymous heap: nobody can map it).
    fd: i32,
    cookie: u64,
    wants: bool,
    /// memfd of the static data (`statics::share`), or -1: not mappable.
    statics_fd: i32,
}

impl Advert {
    const BYTES: usize = 21;

    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(Self::BYTES);
        v.extend_from_slice(&self.pid.to_le_bytes());
        v.extend_from_slice(&self.fd.to_le_bytes());
        v.extend_from_slice(&self.cookie.to_le_bytes());
        v.push(self.wants as u8);
        v.extend_from_slice(&self.statics_fd.to_le_bytes());
        v
    }

    fn decode(b: &[u8]) -> Option<Advert> {
        if b.len() != Self::BYTES {
            return None;
        }
        Some(Advert {
            pid: u32::from_le_bytes(b[0..4].try_into().ok()?),
            fd: i32::from_le_bytes(b[4..8].try_into().ok()?),
            cookie: u64::from_le_bytes(b[8..16].try_into().ok()?),
            wants: b[16] != 0,
            statics_fd: i32::from_le_bytes(b[17..21].try_into().ok()?),
        })
    }
}

/// One peer range as this locale reaches it: `[lo, hi)` in the peer's
/// addresses, `delta` added to get the address in this process. Not mapped:
/// `lo > hi`, so nothing translates.
#[derive(Debug, Clone, Copy)]
struct Range {
    lo: u64,
    hi: u64,
    delta: u64,
}

const UNMAPPED_RANGE: Range = Range {
    lo: 1,
    hi: 0,
    delta: 0,
};

impl Range {
    #[inline]
    fn translate(&self, addr: u64, end: u64) -> Option<*mut u8> {
        (addr >= self.lo && end <= self.hi).then(|| addr.wrapping_add(self.delta) as *mut u8)
    }
}

/// One peer as this locale reaches it: its heap, and its static data.
#[derive(Debug, Clone, Copy)]
struct Slot {
    lo: u64,
    hi: u64,
    delta: u64,
    statics: Range,
}

const UNMAPPED: Slot = Slot {
    lo: 1,
    hi: 0,
    delta: 0,
    statics: UNMAPPED_RANGE,
};

/// A peer heap mapped into this process (unmapped on drop).
#[derive(Debug)]
struct Mapping {
    base: *mut u8,
    size: usize,
}

impl Mapping {
    /// Owns `p`, what mmap returned for `size` bytes of `path`: an error
    /// naming the path if the mapping failed.
    fn made(p: *mut libc::c_void, size: usize, path: &str) -> std::result::Result<Mapping, String> {
        if p == libc::MAP_FAILED {
            return Err(format!("mmap {path}: {}", std::io::Error::last_os_error()));
        }
        Ok(Mapping {
            base: p as *mut u8,
            size,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `map_peer`; nothing uses it any
        // more (the Mapped that owns it is dropped with the Comm).
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.size) };
    }
}

/// The mapped path of one locale: which peers' heaps it reaches and where.
#[derive(Debug)]
pub struct Mapped {
    slots: Box<[Slot]>,
    _maps: Vec<Mapping>,
    me: usize,
    /// Peers (not this locale) whose heap this locale maps.
    mapped_peers: usize,
    /// Whether any locale of the job maps another (then atomics are CPU
    /// atomics job-wide).
    in_use: bool,
    /// Whether every other locale maps this one (so each of them rings the
    /// doorbell after sending, and none needs this locale's progress for RMA).
    rung_by_all: bool,
    /// Doorbell word offset from any heap's base.
    block_off: u64,
    /// This locale's doorbell word.
    own_doorbell: *const AtomicU32,
    path: LocalPath,
}

// SAFETY: the raw pointers point into mappings that live as long as the
// Mapped (its own heap outlives it in Comm's drop order); all accesses
// through them are atomic or copies whose races the program's memory model
// governs, as for any heap word.
unsafe impl Send for Mapped {}
// SAFETY: as above; nothing is mutated through &self but atomics.
unsafe impl Sync for Mapped {}

/// Facts of this locale's heap that the set-up needs.
#[derive(Debug, Clone, Copy)]
pub struct OwnHeap {
    /// Base address.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// memfd of a shared heap.
    pub fd: Option<i32>,
    /// Offset of the [`BLOCK_BYTES`] block reserved for this path.
    pub block_off: u64,
    /// This locale's static data and the memfd it lives in
    /// (`statics::share`), if peers may map it.
    pub statics: Option<(crate::statics::StaticSegment, i32)>,
    /// Test-only (`PGAS_MCM_WEAKEN=mapped-statics-private`): map peers'
    /// static data copy-on-write, so stores through it stay here.
    pub statics_private: bool,
}

/// What every locale registered: its heap (base, size) and static data.
#[derive(Debug, Clone, Copy)]
pub struct PeerRanges {
    /// Heap base and size.
    pub heap: (u64, u64),
    /// Registered static data (size 0: none).
    pub statics: crate::statics::StaticSegment,
}

impl Mapped {
    /// Collective: exchanges adverts, maps the co-located peers that want
    /// the path, exchanges who mapped whom. `peers[i]` is what locale i
    /// registered.
    pub fn establish(
        oob: &dyn bootstrap::Oob,
        hosts: &HostLayout,
        path: LocalPath,
        own: OwnHeap,
        peers: &[PeerRanges],
    ) -> Result<Mapped> {
        let me = oob.rank();
        let n = peers.len();
        let cookie = random_u64();
        let block = own.base + own.block_off;
        // SAFETY: the block is BLOCK_BYTES of our own heap reserved for this
        // path at start-up; these words are only accessed atomically.
        unsafe {
            AtomicU64::from_ptr((block + COOKIE_AT) as *mut u64).store(cookie, Ordering::Release);
            AtomicU32::from_ptr((block + DOORBELL_AT) as *mut u32).store(AWAKE, Ordering::Release);
        }
        let wants = path.maps_heaps() && own.fd.is_some();
        let own_statics = own.statics.filter(|_| path == LocalPath::Mapped);
        let advert = Advert {
            pid: std::process::id(),
            fd: own.fd.unwrap_or(-1),
            cookie,
            wants,
            statics_fd: own_statics.map_or(-1, |(_, fd)| fd),
        };
        let all = oob.allgather(&advert.encode())?;
        let adverts: Vec<Advert> = all
            .iter()
            .enumerate()
            .map(|(i, b)| {
                Advert::decode(b).ok_or_else(|| {
                    Error::Exchange(format!("locale {i} sent {} mapping bytes", b.len()))
                })
            })
            .collect::<Result<_>>()?;
        let mut slots = vec![UNMAPPED; n];
        slots[me] = Slot {
            lo: own.base,
            hi: own.base + own.size,
            delta: 0,
            statics: UNMAPPED_RANGE,
        };
        let mut maps = Vec::new();
        let mut mine = vec![false; n];
        mine[me] = wants;
        for j in 0..n {
            let a = adverts[j];
            if j == me || !wants || !a.wants || hosts.keys[j] != hosts.keys[me] {
                continue;
            }
            let (base, size) = peers[j].heap;
            match map_peer(a, size as usize, own.block_off) {
                Ok(m) => {
                    slots[j] = Slot {
                        lo: base,
                        hi: base + size,
                        delta: (m.base as u64).wrapping_sub(base),
                        statics: UNMAPPED_RANGE,
                    };
                    maps.push(m);
                    mine[j] = true;
                    // Its static data too, where both sides shared theirs
                    // and it is the same program (one segment size).
                    let theirs = peers[j].statics;
                    let same = own_statics.is_some_and(|(s, _)| s.size == theirs.size);
                    if a.statics_fd >= 0 && same && theirs.size > 0 {
                        match map_peer_statics(a, theirs.size as usize, own.statics_private) {
                            Ok(sm) => {
                                slots[j].statics = Range {
                                    lo: theirs.base,
                                    hi: theirs.base + theirs.size,
                                    delta: (sm.base as u64).wrapping_sub(theirs.base),
                                };
                                maps.push(sm);
                            }
                            Err(why) => tracing::warn!(
                                peer = j,
                                "cannot map the static data of locale {j}: {why}; its statics \
                                 are reached through the fabric"
                            ),
                        }
                    }
                }
                Err(why) => {
                    tracing::warn!(
                        peer = j,
                        "cannot map the heap of locale {j}: {why}; using the fabric path to it"
                    )
                }
            }
        }
        // Who maps whom: row i = the peers locale i maps.
        let row: Vec<u8> = mine.iter().map(|b| *b as u8).collect();
        let rows = oob.allgather(&row)?;
        if rows.iter().any(|r| r.len() != n) {
            return Err(Error::Exchange("garbled mapping table".into()));
        }
        let maps_other = |i: usize| (0..n).any(|j| j != i && rows[i][j] != 0);
        let in_use = (0..n).any(maps_other);
        let rung_by_all = (0..n).all(|i| i == me || rows[i][me] != 0);
        Ok(Mapped {
            slots: slots.into_boxed_slice(),
            mapped_peers: mine
                .iter()
                .enumerate()
                .filter(|(j, b)| *j != me && **b)
                .count(),
            _maps: maps,
            me,
            in_use,
            rung_by_all: rung_by_all && n > 1 && wants,
            block_off: own.block_off,
            own_doorbell: block as *const AtomicU32,
            path,
        })
    }

    /// The address in this process of `len` bytes at `addr` on `locale`,
    /// if this locale reaches that heap by mapping (this locale's own heap
    /// included) and the range lies inside it, or in that locale's static
    /// data mapped here (not this locale's own: see [`Mapped::translate_static`]).
    #[inline]
    pub fn translate(&self, locale: Locale, addr: u64, len: usize) -> Option<*mut u8> {
        let s = self.slots.get(locale)?;
        let end = addr.checked_add(len as u64)?;
        if addr >= s.lo && end <= s.hi {
            Some(addr.wrapping_add(s.delta) as *mut u8)
        } else {
            s.statics.translate(addr, end)
        }
    }

    /// The address in this process of `len` bytes at `addr` in the static
    /// data of `locale`, if this locale maps it (a co-located peer's).
    #[inline]
    pub fn translate_static(&self, locale: Locale, addr: u64, len: usize) -> Option<*mut u8> {
        let end = addr.checked_add(len as u64)?;
        self.slots.get(locale)?.statics.translate(addr, end)
    }

    /// Whether this locale maps `locale`'s static data.
    pub fn maps_statics(&self, locale: Locale) -> bool {
        self.slots
            .get(locale)
            .is_some_and(|s| s.statics.lo <= s.statics.hi)
    }

    /// What to add to an address of `locale`'s heap to reach it here, if
    /// this locale reaches that heap by mapping (this locale's own heap
    /// included): [`Mapped::translate`] of a range inside that heap.
    pub fn delta(&self, locale: Locale) -> Option<u64> {
        self.slots
            .get(locale)
            .filter(|s| s.lo <= s.hi)
            .map(|s| s.delta)
    }

    /// Whether this locale reaches `locale`'s heap by mapping (not itself).
    #[inline]
    pub fn maps(&self, locale: Locale) -> bool {
        locale != self.me && self.slots.get(locale).is_some_and(|s| s.lo <= s.hi)
    }

    /// Whether any locale of the job maps another (atomics are then CPU
    /// atomics job-wide).
    pub fn in_use(&self) -> bool {
        self.in_use
    }

    /// Peers whose heap this locale maps.
    pub fn mapped_peers(&self) -> usize {
        self.mapped_peers
    }

    /// The path asked for.
    pub fn path(&self) -> LocalPath {
        self.path
    }

    /// Whether every other locale maps this one: nothing needs this locale's
    /// progress for RMA, and every sender rings its doorbell, so its poller
    /// may block when idle.
    pub fn rung_by_all(&self) -> bool {
        self.rung_by_all
    }

    /// Wakes `locale`'s poller if it sleeps on its doorbell. Called after
    /// (and before) every send to a mapped peer (`doorbell::ring`).
    #[inline]
    pub fn ring(&self, locale: Locale) {
        let Some(s) = self.slots.get(locale) else {
            return;
        };
        if s.lo > s.hi {
            return;
        }
        let word = s.lo.wrapping_add(s.delta) + self.block_off + DOORBELL_AT;
        // SAFETY: the doorbell word of a mapped heap (reserved at the same
        // offset in every heap), only accessed atomically.
        let bell = unsafe { AtomicU32::from_ptr(word as *mut u32) };
        doorbell::ring(bell, &KernelFutex);
    }

    /// Wakes this locale's own poller whatever the state (shutdown).
    pub fn ring_self(&self) {
        doorbell::ring_always(self.own(), &KernelFutex);
    }

    /// Announces that this locale's poller is about to sleep. The caller
    /// must poll once more after this and call [`Mapped::sleep`] only if
    /// that found nothing (else [`Mapped::cancel_sleep`]).
    pub fn prepare_sleep(&self) {
        doorbell::prepare_sleep(self.own());
    }

    /// Takes back [`Mapped::prepare_sleep`].
    pub fn cancel_sleep(&self) {
        doorbell::cancel_sleep(self.own());
    }

    /// Whether an idle worker polls in the poller's place.
    pub fn covered(&self) -> bool {
        doorbell::covered(self.own())
    }

    /// Sleeps until rung or `timeout` passed (after [`Mapped::prepare_sleep`],
    /// or while [`Mapped::covered`]). Returns with the state `AWAKE`, or
    /// still `COVERED` (a worker polls: the caller sleeps again).
    pub fn sleep(&self, timeout: Duration) {
        doorbell::sleep(self.own(), &KernelFutex, timeout);
    }

    /// An idle worker takes over polling: from now on senders do not wake
    /// the poller, which sleeps (it sees [`Mapped::covered`]). Until
    /// [`Mapped::uncover`], the worker must keep polling.
    pub fn cover(&self) {
        doorbell::cover(self.own());
    }

    /// The poller takes over from a worker that covers for it but has
    /// stopped polling (it runs a task): senders wake the poller again.
    /// Returns whether it did (false: the cover was gone already).
    pub fn take_over(&self) -> bool {
        doorbell::take_over(self.own())
    }

    /// The worker stops polling: senders wake the poller again. The worker
    /// must poll once more after this (a sender that saw the cover did not
    /// ring) and handle what it finds.
    pub fn uncover(&self) {
        doorbell::uncover(self.own());
    }

    fn own(&self) -> &AtomicU32 {
        // SAFETY: our own doorbell word (see establish), only accessed atomically.
        unsafe { &*self.own_doorbell }
    }
}

/// Maps the heap a peer advertised and checks its cookie.
fn map_peer(a: Advert, size: usize, block_off: u64) -> std::result::Result<Mapping, String> {
    use std::os::fd::AsRawFd;
    let (f, path, len) = open_peer_fd(a.pid, a.fd)?;
    if len < size as u64 {
        return Err(format!("{path} holds {len} bytes, the heap is {size}"));
    }
    // Unmapped by Mapping's drop.
    let m = Mapping::made(crate::heap::map_shared(f.as_raw_fd(), size), size, &path)?;
    // SAFETY: the cookie word lies inside the mapping just made; the owner
    // wrote it before the exchange, atomically.
    let seen = unsafe { AtomicU64::from_ptr((m.base as u64 + block_off + COOKIE_AT) as *mut u64) }
        .load(Ordering::Acquire);
    if seen != a.cookie {
        return Err(format!(
            "{path} is not that locale's heap (cookie {seen:#x}, expected {:#x})",
            a.cookie
        ));
    }
    Ok(m)
}

/// Maps the static data a peer advertised (whose heap, and so whose pid,
/// was checked by its cookie just before); copy-on-write for the negative
/// control only (`private`).
fn map_peer_statics(a: Advert, size: usize, private: bool) -> std::result::Result<Mapping, String> {
    use std::os::fd::AsRawFd;
    let (f, path, len) = open_peer_fd(a.pid, a.statics_fd)?;
    if len != size as u64 {
        return Err(format!(
            "{path} holds {len} bytes, the static data is {size}"
        ));
    }
    // Checked and unmapped by Mapping.
    let p = if private {
        crate::heap::map_fd(f.as_raw_fd(), size, libc::MAP_PRIVATE)
    } else {
        crate::heap::map_shared(f.as_raw_fd(), size)
    };
    Mapping::made(p, size, &path)
}

/// Opens file descriptor `fd` of process `pid` (a co-located peer's
/// advertised memfd) for reading and writing: the file, its path (for
/// errors) and its length.
fn open_peer_fd(pid: u32, fd: i32) -> std::result::Result<(std::fs::File, String, u64), String> {
    let path = format!("/proc/{pid}/fd/{fd}");
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| format!("open {path}: {e}"))?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    Ok((f, path, len))
}

fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish() | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_path_parses_and_names_bad_values() {
        assert_eq!("mapped".parse::<LocalPath>(), Ok(LocalPath::Mapped));
        assert_eq!(
            "mapped-heap".parse::<LocalPath>(),
            Ok(LocalPath::MappedHeap)
        );
        assert_eq!(LocalPath::MappedHeap.to_string(), "mapped-heap");
        assert!(LocalPath::MappedHeap.maps_heaps() && !LocalPath::Fabric.maps_heaps());
        assert_eq!(" FABRIC ".parse::<LocalPath>(), Ok(LocalPath::Fabric));
        assert!("shm".parse::<LocalPath>().is_err());
    }

    #[test]
    fn host_layout_counts_co_located_locales() {
        let keys = ["a", "b", "a", "a"].map(String::from).to_vec();
        let l = HostLayout::new(keys.clone(), 2);
        assert_eq!((l.local_rank, l.local_count), (1, 3));
        assert!(!l.single_host());
        assert_eq!(l.cores_owned(2), 1);
        assert_eq!(l.cores_owned(8), 2);
        let l = HostLayout::new(keys, 1);
        assert_eq!((l.local_rank, l.local_count), (0, 1));
        assert_eq!(l.cores_owned(2), 2);
    }

    #[test]
    fn test_hostnames_pick_by_rank() {
        let names = ["x".to_string(), "y".to_string()];
        let k = host_key(Some(&names), 1).unwrap();
        assert!(k.starts_with("y/"), "{k}");
        let e = host_key(Some(&names), 2).unwrap_err().to_string();
        assert!(e.contains("PGAS_TEST_HOSTNAMES"), "{e}");
    }

    #[test]
    fn adverts_round_trip() {
        let a = Advert {
            pid: 77,
            fd: -1,
            cookie: 0xdead_beef,
            wants: true,
            statics_fd: 9,
        };
        assert_eq!(Advert::decode(&a.encode()), Some(a));
        assert_eq!(Advert::decode(&[1, 2, 3]), None);
    }

    #[test]
    fn translate_adds_the_delta_inside_the_range_only() {
        let m = Mapped {
            slots: vec![
                Slot {
                    lo: 0x1000,
                    hi: 0x2000,
                    delta: 0,
                    statics: UNMAPPED_RANGE,
                },
                Slot {
                    lo: 0x10_000,
                    hi: 0x11_000,
                    delta: 0x5000u64.wrapping_sub(0x10_000),
                    statics: Range {
                        lo: 0x40_000,
                        hi: 0x41_000,
                        delta: 0x9000u64.wrapping_sub(0x40_000),
                    },
                },
                UNMAPPED,
            ]
            .into_boxed_slice(),
            _maps: Vec::new(),
            me: 0,
            mapped_peers: 1,
            in_use: true,
            rung_by_all: false,
            block_off: 0,
            own_doorbell: std::ptr::null(),
            path: LocalPath::Mapped,
        };
        assert_eq!(m.translate(1, 0x10_008, 8), Some(0x5008 as *mut u8));
        assert_eq!(m.translate(1, 0x10_ff8, 9), None, "runs past the end");
        assert_eq!(m.translate(1, 0xfff8, 8), None, "before the start");
        assert_eq!(m.translate(0, 0x1000, 0x1000), Some(0x1000 as *mut u8));
        assert_eq!(m.translate(2, 0x10_008, 8), None, "not mapped");
        assert_eq!(m.translate(3, 0x10_008, 8), None, "no such locale");
        assert_eq!(m.translate(1, u64::MAX, 8), None, "overflow");
        assert!(m.maps(1) && !m.maps(0) && !m.maps(2) && !m.maps(3));
        // Static data: its own range and delta.
        assert_eq!(m.translate(1, 0x40_010, 8), Some(0x9010 as *mut u8));
        assert_eq!(m.translate_static(1, 0x40_010, 8), Some(0x9010 as *mut u8));
        assert_eq!(m.translate_static(1, 0x10_008, 8), None, "a heap address");
        assert_eq!(m.translate(1, 0x40_ffc, 8), None, "runs past the statics");
        assert_eq!(m.translate_static(0, 0x1008, 8), None, "own: not mapped");
        assert!(m.maps_statics(1) && !m.maps_statics(0) && !m.maps_statics(2));
    }

    #[test]
    fn a_covered_bell_is_not_rung_and_uncovering_makes_it_ringable() {
        let word = Box::leak(Box::new(AtomicU32::new(AWAKE)));
        let m = Mapped {
            slots: vec![Slot {
                lo: 0,
                hi: BLOCK_BYTES as u64,
                delta: (word as *const AtomicU32 as u64),
                statics: UNMAPPED_RANGE,
            }]
            .into_boxed_slice(),
            _maps: Vec::new(),
            me: 0,
            mapped_peers: 0,
            in_use: true,
            rung_by_all: true,
            block_off: 0,
            own_doorbell: word,
            path: LocalPath::Mapped,
        };
        m.cover();
        assert!(m.covered());
        m.ring(0);
        assert_eq!(
            word.load(Ordering::SeqCst),
            COVERED,
            "a covered poller is left asleep"
        );
        m.prepare_sleep();
        assert!(m.covered(), "the poller's sleep does not undo a cover");
        m.uncover();
        assert_eq!(word.load(Ordering::SeqCst), SLEEPING);
        m.ring(0);
        assert_eq!(
            word.load(Ordering::SeqCst),
            AWAKE,
            "a sleeping poller is woken"
        );
        m.prepare_sleep();
        m.cancel_sleep();
        assert_eq!(word.load(Ordering::SeqCst), AWAKE);
    }

    #[test]
    fn doorbell_wakes_a_sleeper() {
        use crate::futex;
        let word = Box::leak(Box::new(AtomicU32::new(AWAKE)));
        word.store(SLEEPING, Ordering::SeqCst);
        let w: &'static AtomicU32 = word;
        let t = std::thread::spawn(move || {
            let t0 = std::time::Instant::now();
            while w.load(Ordering::Acquire) == SLEEPING {
                futex::wait(w, SLEEPING, Duration::from_secs(5));
            }
            t0.elapsed()
        });
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(word.swap(AWAKE, Ordering::AcqRel), SLEEPING);
        futex::wake(word);
        let slept = t.join().unwrap();
        assert!(
            slept < Duration::from_secs(4),
            "woken, not timed out: {slept:?}"
        );
    }
}
