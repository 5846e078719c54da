//! Strided transfers: the description (count per level, strides on each
//! side), its validation, and the walk over its contiguous chunks.
//!
//! The convention is GASNet's / the original's: `count[0]` is the number of
//! contiguous elements of one chunk, `count[i]` (i >= 1) how many times level
//! i-1 repeats, `strides[i-1]` the distance in elements between successive
//! repetitions at level i. So a 2-D block of `rows x cols` out of a row-major
//! matrix with `ld` columns is `count = [cols, rows]`, `strides = [ld]`.
//! Strides may be anything (odd, smaller than the chunk: overlapping source
//! chunks are fine; overlapping destination chunks are written in walk order
//! locally and in an unspecified order remotely).

use crate::error::{Error, Result};

/// Most levels a description may have (count.len() <= MAX_LEVELS + 1).
pub const MAX_LEVELS: usize = 32;

/// A validated strided transfer, in bytes.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Bytes per contiguous chunk.
    pub chunk: usize,
    /// Number of chunks.
    pub chunks: usize,
    counts: Vec<usize>,
    local: Vec<u64>,
    remote: Vec<u64>,
    /// Bytes the remote side spans from its first byte.
    pub remote_extent: u64,
}

fn checked_extent(
    side: &str,
    elem: usize,
    count: &[usize],
    strides: &[usize],
    chunk: usize,
) -> Result<u64> {
    let mut ext = chunk as u64;
    for (lvl, (&c, &s)) in count[1..].iter().zip(strides).enumerate() {
        let step = (s as u64)
            .checked_mul(elem as u64)
            .and_then(|b| b.checked_mul(c as u64 - 1))
            .ok_or_else(|| {
                Error::Strides(format!(
                    "{side} stride {s} x count {c} at level {} overflows",
                    lvl + 1
                ))
            })?;
        ext = ext.checked_add(step).ok_or_else(|| {
            Error::Strides(format!("{side} extent overflows at level {}", lvl + 1))
        })?;
    }
    Ok(ext)
}

/// The bytes a strided description spans on one side (`elem`-byte
/// elements, strides in elements), checked for overflow.
pub fn extent(elem: usize, count: &[usize], strides: &[usize]) -> Result<usize> {
    if count.is_empty() || strides.len() + 1 != count.len() {
        return Err(Error::Strides(format!(
            "count has {} entries and there are {} strides; count needs one more entry than \
             strides",
            count.len(),
            strides.len()
        )));
    }
    if count.contains(&0) {
        return Ok(0);
    }
    let chunk = count[0]
        .checked_mul(elem)
        .ok_or_else(|| Error::Strides(format!("count[0] = {} overflows", count[0])))?;
    let e = checked_extent("local", elem, count, strides, chunk)?;
    usize::try_from(e)
        .ok()
        .filter(|e| *e <= isize::MAX as usize)
        .ok_or_else(|| Error::Strides(format!("extent {e} is larger than any buffer")))
}

impl Plan {
    /// Validates a description. `local_len` is the local buffer's length in
    /// bytes; `elem` the element size. `Ok(None)`: nothing to move (a zero count).
    pub fn new(
        elem: usize,
        count: &[usize],
        local_strides: &[usize],
        remote_strides: &[usize],
        local_len: usize,
    ) -> Result<Option<Plan>> {
        if count.is_empty() {
            return Err(Error::Strides(
                "count is empty: count[0] is the contiguous length".into(),
            ));
        }
        let levels = count.len() - 1;
        if levels > MAX_LEVELS {
            return Err(Error::Strides(format!(
                "{levels} stride levels; at most {MAX_LEVELS}"
            )));
        }
        for (side, s) in [("local", local_strides), ("remote", remote_strides)] {
            if s.len() != levels {
                return Err(Error::Strides(format!(
                    "count has {} entries, so {levels} {side} strides are needed, got {}",
                    count.len(),
                    s.len()
                )));
            }
        }
        if count.contains(&0) {
            return Ok(None);
        }
        let chunk = count[0]
            .checked_mul(elem)
            .ok_or_else(|| Error::Strides(format!("count[0] = {} overflows", count[0])))?;
        let chunks = count[1..]
            .iter()
            .try_fold(1usize, |a, &c| a.checked_mul(c))
            .ok_or_else(|| Error::Strides(format!("chunk count {:?} overflows", &count[1..])))?;
        let lext = checked_extent("local", elem, count, local_strides, chunk)?;
        let remote_extent = checked_extent("remote", elem, count, remote_strides, chunk)?;
        if lext > local_len as u64 {
            return Err(Error::InvalidLength {
                what: "strided transfer's local buffer",
                len: local_len as u64,
                reason: format!(
                    "the description {count:?} with local strides {local_strides:?} reaches \
                     byte {lext}"
                ),
            });
        }
        let bytes = |s: &[usize]| s.iter().map(|&x| x as u64 * elem as u64).collect();
        Ok(Some(Plan {
            chunk,
            chunks,
            counts: count[1..].to_vec(),
            local: bytes(local_strides),
            remote: bytes(remote_strides),
            remote_extent,
        }))
    }

    /// (local byte offset, remote byte offset) of every chunk, in walk order
    /// (level 1 fastest).
    pub fn offsets(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let mut idx = vec![0usize; self.counts.len()];
        let mut left = self.chunks;
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            left -= 1;
            let mut l = 0u64;
            let mut r = 0u64;
            for (k, &i) in idx.iter().enumerate() {
                l += i as u64 * self.local[k];
                r += i as u64 * self.remote[k];
            }
            for (k, i) in idx.iter_mut().enumerate() {
                *i += 1;
                if *i < self.counts[k] {
                    break;
                }
                *i = 0;
            }
            Some((l as usize, r))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_a_2d_block() {
        // 3 rows of 2 u32 out of rows of 5 locally, 7 remotely.
        let p = Plan::new(4, &[2, 3], &[5], &[7], 4 * 12).unwrap().unwrap();
        assert_eq!(p.chunk, 8);
        assert_eq!(p.chunks, 3);
        let o: Vec<_> = p.offsets().collect();
        assert_eq!(o, vec![(0, 0), (20, 28), (40, 56)]);
    }

    #[test]
    fn three_levels_odd_strides() {
        let p = Plan::new(1, &[1, 2, 3], &[3, 7], &[5, 11], 1 + 3 + 14)
            .unwrap()
            .unwrap();
        let o: Vec<_> = p.offsets().collect();
        assert_eq!(o.len(), 6);
        assert_eq!(o[0], (0, 0));
        assert_eq!(o[1], (3, 5));
        assert_eq!(o[2], (7, 11));
        assert_eq!(o[5], (3 + 14, 5 + 22));
    }

    #[test]
    fn bad_descriptions_name_the_problem() {
        let e = Plan::new(1, &[], &[], &[], 0).unwrap_err().to_string();
        assert!(e.contains("count is empty"), "{e}");
        let e = Plan::new(1, &[2, 2], &[], &[3], 8).unwrap_err().to_string();
        assert!(e.contains("1 local strides are needed, got 0"), "{e}");
        let e = Plan::new(8, &[2, 3], &[4], &[4], 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("reaches byte 80"), "{e}");
        let e = Plan::new(8, &[2, usize::MAX], &[usize::MAX], &[1], 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("overflows"), "{e}");
        assert!(Plan::new(8, &[0, 3], &[4], &[4], 0).unwrap().is_none());
    }
}
