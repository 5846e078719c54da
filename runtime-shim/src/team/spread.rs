//! Reductions of large arrays: reduce-scatter, then gather.
//!
//! The team's one-exchange reduction ([`Team::exchange`]) sends every
//! member's whole array to every member, and each member then combines all
//! of them: `size` times the array read by every member, a heap copy per
//! destination, and (for `co_sum` of 8 MiB at 4 images) a tenth of the
//! speed of a bandwidth-optimal reduction. Past [`TEAM_INLINE`] bytes a
//! reduction goes here instead:
//!
//! 1. each member copies its array once into its registered heap and tells
//!    every member where (one exchange: 24 bytes each, inline);
//! 2. the array is cut into `size` blocks of near-equal length; member `r`
//!    combines block `r` of every member's copy, in rank order
//!    (`((x0 op x1) op x2) ...`, the order of the one-exchange path), a
//!    chunk at a time by GET (a copy on the mapped path), and writes the
//!    result over block `r` of its own copy (nobody else reads that block);
//! 3. a team barrier (agreeing on failure, like every exchange);
//! 4. every member (all-reduce) or the root (reduce) GETs block `r` from
//!    member `r`'s copy.
//!
//! Each element is combined by exactly one member, in a fixed order, so a
//! floating-point result is the same bits on every member (and the same as
//! the one-exchange path's). Each member reads and writes about twice the
//! array, whatever the team's size. The copies are freed after the team's
//! next collective's barrier, when nobody can still be reading them.

use super::combine::Combiner;
use super::{Team, SPREAD_TAG};
use crate::error::{Error, Result};
use crate::pod::{as_bytes, as_bytes_mut, Pod};
use comm_ofi::GlobalAddr;
use std::borrow::Cow;

/// Bytes combined per step: a chunk of the accumulator and one of the next
/// contribution stay in a core's cache.
const CHUNK: usize = 128 * 1024;

/// Where member `r`'s block of `len` elements starts (`r = size`: the end).
pub(crate) fn block_start(len: usize, size: usize, r: usize) -> usize {
    // len * r fits in u128 whatever the sizes.
    ((len as u128 * r as u128) / size as u128) as usize
}

/// [`block_start`] in `T`s for an array of `len` `T`s whose elements are
/// `granule` `T`s long: blocks end at element boundaries.
fn block_of(len: usize, granule: usize, size: usize, r: usize) -> usize {
    let g = granule.max(1);
    block_start(len / g, size, r) * g
}

/// What a member announced in step 1: its element count and its copy.
struct Announce {
    count: u64,
    addr: u64,
}

fn decode(b: &[u8]) -> Option<Announce> {
    let w = |k: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            b.get(8 * k..8 * k + 8)?.try_into().ok()?,
        ))
    };
    (b.len() == 24 && w(0)? == SPREAD_TAG).then(|| Announce {
        count: w(1).unwrap_or(0),
        addr: w(2).unwrap_or(0),
    })
}

impl Team {
    /// Reduces `data` (same length on every member) element-wise with
    /// `c` by reduce-scatter and gather (the module comment); the result
    /// replaces `data` on every member (`root` `None`) or on `root` only
    /// (elsewhere `data` is left as it was). Returns whether `data` holds
    /// the result.
    pub(super) fn spread_reduce<T: Pod>(
        &self,
        root: Option<usize>,
        data: &mut [T],
        c: &mut dyn Combiner<T>,
    ) -> Result<bool> {
        let peers = self.spread_scatter(data, c)?;
        if root.is_some_and(|r| r != self.inner.me) {
            return Ok(false);
        }
        self.spread_gather(&peers, data, c.granule())?;
        Ok(true)
    }

    /// [`Team::spread_reduce`] at a member that is not `root`: its `data`
    /// is only read.
    pub(super) fn spread_reduce_off_root<T: Pod>(
        &self,
        data: &[T],
        c: &mut dyn Combiner<T>,
    ) -> Result<()> {
        self.spread_scatter(data, c).map(|_| ())
    }

    /// Steps 1 to 3: returns every member's copy, by rank, each holding
    /// the result in its member's block.
    fn spread_scatter<T: Pod>(
        &self,
        data: &[T],
        c: &mut dyn Combiner<T>,
    ) -> Result<Vec<GlobalAddr>> {
        let rt = self.inner.rt;
        let comm = rt.comm();
        let n = self.size();
        let bytes = std::mem::size_of_val(data);
        // 1. My copy, announced to everyone (a member without room still
        //    takes part: the exchange fails everywhere, naming it).
        let copy = comm
            .alloc(bytes.max(1), 64)
            .map_err(|e| Error::InvalidLength {
                what: "reduction input",
                len: bytes as u64,
                reason: format!("no room for its copy in this locale's heap: {e}"),
            });
        let copy = copy.inspect(|c| {
            // A store to this locale's own memory: a copy, whatever the
            // path (a PUT to itself would go through the provider on
            // PGAS_LOCAL_PATH=fabric).
            // SAFETY: a fresh heap allocation of at least `bytes` bytes
            // that nobody else knows of yet; `data` is a live slice.
            unsafe {
                std::ptr::copy_nonoverlapping(as_bytes(data).as_ptr(), c.addr as *mut u8, bytes)
            };
        });
        let mine = match &copy {
            Ok(c) => {
                let mut m = SPREAD_TAG.to_le_bytes().to_vec();
                m.extend_from_slice(&(data.len() as u64).to_le_bytes());
                m.extend_from_slice(&c.addr.to_le_bytes());
                Ok(m)
            }
            Err(e) => Err(Error::State(e.to_string())),
        };
        let got = self.exchange(
            "reduction",
            |_| match &mine {
                Ok(m) => Ok(Cow::Borrowed(&m[..])),
                Err(e) => Err(Error::State(e.to_string())),
            },
            |_| true,
        );
        let copy = match (copy, got) {
            (Ok(c), Ok(got)) => (c, got),
            (c, got) => {
                // Agreed failure: nobody reads any copy.
                if let Ok(c) = c {
                    let _ = comm.free(c);
                }
                return Err(match got {
                    Err(e) => e,
                    Ok(_) => Error::State("reduction input copy failed".into()),
                });
            }
        };
        let (mine_at, got) = copy;
        // Every member got the same announcements, so every member takes
        // the same decision here.
        let mut peers = Vec::with_capacity(n);
        for (r, b) in got.iter().enumerate() {
            let a = match decode(b) {
                Some(a) if a.count == data.len() as u64 => a,
                other => {
                    let _ = comm.free(mine_at);
                    let theirs = other.map_or_else(
                        || "a different reduction (or size class)".to_string(),
                        |a| format!("{} elements", a.count),
                    );
                    return Err(Error::InvalidLength {
                        what: "reduction input",
                        len: data.len() as u64,
                        reason: format!(
                            "rank {r} gave {theirs} and this member {} elements",
                            data.len()
                        ),
                    });
                }
            };
            peers.push(GlobalAddr::new(self.inner.members[r], a.addr));
        }
        // 2. My block, combined in rank order.
        let part = self.combine_block::<T>(&peers, data.len(), c);
        // 3. Everyone's block is done (or a failure is agreed).
        let agreed = self.exchange(
            "reduction",
            |_| match &part {
                Ok(()) => Ok(Cow::Borrowed(&[][..])),
                Err(e) => Err(Error::State(e.to_string())),
            },
            |_| false,
        );
        // Freed after the next collective's barrier (others read it until
        // their step 4 is done).
        self.defer_free(mine_at);
        part?;
        agreed?;
        Ok(peers)
    }

    /// Step 4: block `r` of `out` from member `r`'s copy, for every `r`
    /// (blocks of whole elements of `granule` `T`s).
    fn spread_gather<T: Pod>(
        &self,
        peers: &[GlobalAddr],
        out: &mut [T],
        granule: usize,
    ) -> Result<()> {
        let comm = self.inner.rt.comm();
        let (n, len, elem) = (self.size(), out.len(), std::mem::size_of::<T>());
        let out = as_bytes_mut(out);
        for (r, at) in peers.iter().enumerate() {
            let (s, e) = (
                block_of(len, granule, n, r),
                block_of(len, granule, n, r + 1),
            );
            let (dst, src) = (&mut out[s * elem..e * elem], at.offset((s * elem) as u64));
            match self.local_src(src, dst.len()) {
                // SAFETY: `p` reaches dst.len() bytes of member r's copy
                // (`local_src`), which nobody writes until the team's next
                // collective; `dst` is a live slice of ours.
                Some(p) => unsafe { std::ptr::copy_nonoverlapping(p, dst.as_mut_ptr(), dst.len()) },
                None if dst.is_empty() => {}
                None => comm.get(dst, src)?,
            }
        }
        Ok(())
    }

    /// Where this process reads the `len` bytes at `at` directly: this
    /// locale's own heap, or a co-located member's heap mapped here (the
    /// mapped path); `None`: by GET.
    fn local_src(&self, at: GlobalAddr, len: usize) -> Option<*const u8> {
        let comm = self.inner.rt.comm();
        if at.locale == comm.here() && comm.heap().contains(at.addr, len) {
            return Some(at.addr as *const u8);
        }
        comm.mapped_ptr(at, len).map(|p| p as *const u8)
    }

    /// Step 2: block `me` of every member's copy combined in rank order,
    /// written over block `me` of this member's copy.
    fn combine_block<T: Pod>(
        &self,
        peers: &[GlobalAddr],
        len: usize,
        c: &mut dyn Combiner<T>,
    ) -> Result<()> {
        let comm = self.inner.rt.comm();
        let n = self.size();
        let me = self.inner.me;
        let elem = std::mem::size_of::<T>().max(1);
        let granule = c.granule();
        let (start, end) = (
            block_of(len, granule, n, me),
            block_of(len, granule, n, me + 1),
        );
        for at in peers {
            comm.check_range(at.offset((start * elem) as u64), (end - start) * elem)?;
        }
        // Whole elements per step.
        let step = (CHUNK / elem).max(1).next_multiple_of(granule);
        let zero = <T as bytemuck::Zeroable>::zeroed();
        let mut acc = vec![zero; step.min(end - start)];
        let mut next = Vec::new();
        let mut s = start;
        while s < end {
            let k = step.min(end - s);
            let off = (s * elem) as u64;
            let acc = &mut acc[..k];
            for (r, at) in peers.iter().enumerate() {
                let at = at.offset(off);
                let src: &[T] = match self.local_src(at, k * elem) {
                    Some(p) if (p as usize) % std::mem::align_of::<T>() == 0 => {
                        // SAFETY: k aligned Ts of member r's copy (local_src
                        // checked the range, alignment checked here), which
                        // nobody writes during this step: block `me` of a
                        // copy is written only by this member, below, after
                        // its last read.
                        unsafe { std::slice::from_raw_parts(p as *const T, k) }
                    }
                    _ => {
                        next.resize(k, zero);
                        comm.get(as_bytes_mut(&mut next[..k]), at)?;
                        &next[..k]
                    }
                };
                if r == 0 {
                    acc.copy_from_slice(src);
                } else {
                    c.combine(acc, src)?;
                }
            }
            let mine = peers[me].offset(off);
            match self.local_src(mine, k * elem) {
                // SAFETY: our own copy's block (local_src: in our heap),
                // read by nobody else; acc is a live slice.
                Some(p) => unsafe {
                    std::ptr::copy_nonoverlapping(as_bytes(acc).as_ptr(), p as *mut u8, k * elem)
                },
                None => comm.put(mine, as_bytes(acc))?,
            }
            s += k;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_array_once() {
        for len in [0usize, 1, 3, 7, 8, 1000, 1 << 20] {
            for n in 1..=5 {
                assert_eq!(block_start(len, n, 0), 0);
                assert_eq!(block_start(len, n, n), len);
                for r in 0..n {
                    let (s, e) = (block_start(len, n, r), block_start(len, n, r + 1));
                    assert!(s <= e && e - s <= len.div_ceil(n), "{len} {n} {r}");
                }
            }
        }
    }

    #[test]
    fn announcements_are_told_from_prefixed_data() {
        let mut m = SPREAD_TAG.to_le_bytes().to_vec();
        m.extend_from_slice(&5u64.to_le_bytes());
        m.extend_from_slice(&0x1000u64.to_le_bytes());
        let a = decode(&m).expect("an announcement");
        assert_eq!((a.count, a.addr), (5, 0x1000));
        // The one-exchange path's contribution of two u64s: a count first.
        assert!(decode(&super::super::len_prefixed(&[7u64, 9])).is_none());
    }
}
