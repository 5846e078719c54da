//! The launcher's collective engine as a plain state machine (no sockets), so
//! the matching rules are unit-tested: every locale calls the same sequence of
//! collectives, at most one is in flight, and a mismatch is a named error.

use std::fmt;

use crate::wire::{self, Op};

/// A collective that every locale has joined.
#[derive(Debug, PartialEq)]
pub struct Completed {
    pub seq: u64,
    pub op: Op,
    /// The reply payload, or why the collective cannot be answered.
    pub outcome: Result<Vec<u8>, String>,
}

/// A contribution that breaks the calling rules.
#[derive(Debug, PartialEq)]
pub enum CollError {
    /// The locale's sequence number is not the job's next collective.
    BadSeq {
        rank: usize,
        got: u64,
        expected: u64,
    },
    /// Kind or root differ from what the first locale called.
    Mismatch {
        seq: u64,
        rank: usize,
        got: (Op, u32),
        first_rank: usize,
        expected: (Op, u32),
    },
    /// Broadcast root outside the job.
    BadRoot { rank: usize, root: u32, size: usize },
}

fn call(op: Op, root: u32) -> String {
    match op {
        Op::Broadcast => format!("broadcast(root {root})"),
        _ => op.name().to_owned(),
    }
}

impl fmt::Display for CollError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CollError::BadSeq {
                rank,
                got,
                expected,
            } => write!(
                f,
                "locale {rank} sent collective #{got} but the job is at #{expected} (protocol error)"
            ),
            CollError::Mismatch {
                seq,
                rank,
                got,
                first_rank,
                expected,
            } => write!(
                f,
                "collective mismatch at collective #{seq}: locale {rank} called {} but locale \
                 {first_rank} called {} (all locales must call the same collectives in the same order)",
                call(got.0, got.1),
                call(expected.0, expected.1)
            ),
            CollError::BadRoot { rank, root, size } => write!(
                f,
                "locale {rank} called broadcast with root {root} but the job has {size} locales"
            ),
        }
    }
}

struct Pending {
    op: Op,
    root: u32,
    first_rank: usize,
    parts: Vec<Option<Vec<u8>>>,
    joined: usize,
}

/// The job's collective state.
pub struct Collectives {
    size: usize,
    next_seq: u64,
    pending: Option<Pending>,
    /// Largest allgather reply payload.
    max_result: usize,
}

impl Collectives {
    pub fn new(size: usize) -> Collectives {
        Collectives::with_limit(size, wire::MAX_FRAME - 64)
    }

    /// `max_result`: largest reply payload (tests use a small one).
    pub fn with_limit(size: usize, max_result: usize) -> Collectives {
        Collectives {
            size,
            next_seq: 0,
            pending: None,
            max_result,
        }
    }

    /// Records `rank`'s part of collective `seq`. Returns the completed
    /// collective when `rank` was the last one missing.
    pub fn contribute(
        &mut self,
        rank: usize,
        seq: u64,
        op: Op,
        root: u32,
        data: Vec<u8>,
    ) -> Result<Option<Completed>, CollError> {
        if seq != self.next_seq {
            return Err(CollError::BadSeq {
                rank,
                got: seq,
                expected: self.next_seq,
            });
        }
        let root = if op == Op::Broadcast { root } else { 0 };
        if op == Op::Broadcast && root as usize >= self.size {
            return Err(CollError::BadRoot {
                rank,
                root,
                size: self.size,
            });
        }
        let size = self.size;
        let p = self.pending.get_or_insert_with(|| Pending {
            op,
            root,
            first_rank: rank,
            parts: vec![None; size],
            joined: 0,
        });
        if (p.op, p.root) != (op, root) {
            return Err(CollError::Mismatch {
                seq,
                rank,
                got: (op, root),
                first_rank: p.first_rank,
                expected: (p.op, p.root),
            });
        }
        if p.parts[rank].is_some() {
            // Its next collective before this one completed: impossible for a
            // well-behaved locale, which waits for the reply.
            return Err(CollError::BadSeq {
                rank,
                got: seq,
                expected: seq + 1,
            });
        }
        p.parts[rank] = Some(data);
        p.joined += 1;
        if p.joined < self.size {
            return Ok(None);
        }
        let p = self.pending.take().expect("pending collective");
        self.next_seq += 1;
        let parts = p.parts.into_iter().map(|x| x.expect("every part present"));
        let outcome = match p.op {
            Op::Barrier => Ok(Vec::new()),
            Op::Broadcast => Ok(parts.into_iter().nth(p.root as usize).expect("root part")),
            Op::Allgather => {
                let parts: Vec<Vec<u8>> = parts.collect();
                let len = wire::encoded_parts_len(parts.iter().map(|v| v.as_slice()));
                if len > self.max_result {
                    Err(format!(
                        "allgather result of {len} bytes exceeds the OOB limit of {} bytes",
                        self.max_result
                    ))
                } else {
                    Ok(wire::encode_parts(parts.iter().map(|v| v.as_slice())))
                }
            }
        };
        Ok(Some(Completed {
            seq,
            op: p.op,
            outcome,
        }))
    }

    /// The collective in flight: its number, kind and the ranks that have
    /// not joined yet.
    pub fn waiting(&self) -> Option<(u64, Op, Vec<usize>)> {
        let p = self.pending.as_ref()?;
        let missing = (0..self.size).filter(|&r| p.parts[r].is_none()).collect();
        Some((self.next_seq, p.op, missing))
    }

    /// Ranks that have joined the collective in flight.
    pub fn joined(&self) -> Vec<usize> {
        match &self.pending {
            Some(p) => (0..self.size).filter(|&r| p.parts[r].is_some()).collect(),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allgather_completes_on_last_part_in_rank_order() {
        let mut c = Collectives::new(3);
        assert_eq!(
            c.contribute(2, 0, Op::Allgather, 0, b"cc".to_vec()),
            Ok(None)
        );
        assert_eq!(c.contribute(0, 0, Op::Allgather, 9, b"".to_vec()), Ok(None));
        assert_eq!(c.waiting(), Some((0, Op::Allgather, vec![1])));
        assert_eq!(c.joined(), vec![0, 2]);
        let done = c
            .contribute(1, 0, Op::Allgather, 0, b"b".to_vec())
            .unwrap()
            .unwrap();
        assert_eq!(done.seq, 0);
        let parts = wire::decode_parts(&done.outcome.unwrap(), 3).unwrap();
        assert_eq!(parts, vec![b"".to_vec(), b"b".to_vec(), b"cc".to_vec()]);
        assert_eq!(c.waiting(), None);
    }

    #[test]
    fn broadcast_returns_root_data_and_barrier_is_empty() {
        let mut c = Collectives::new(2);
        assert_eq!(c.contribute(0, 0, Op::Broadcast, 1, vec![]), Ok(None));
        let d = c
            .contribute(1, 0, Op::Broadcast, 1, b"root".to_vec())
            .unwrap()
            .unwrap();
        assert_eq!(d.outcome, Ok(b"root".to_vec()));
        assert_eq!(c.contribute(1, 1, Op::Barrier, 0, vec![]), Ok(None));
        let d = c.contribute(0, 1, Op::Barrier, 0, vec![]).unwrap().unwrap();
        assert_eq!((d.seq, d.op, d.outcome), (1, Op::Barrier, Ok(vec![])));
    }

    #[test]
    fn mismatched_kind_or_root_is_named() {
        let mut c = Collectives::new(2);
        c.contribute(0, 0, Op::Barrier, 0, vec![]).unwrap();
        let e = c.contribute(1, 0, Op::Allgather, 0, vec![]).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("locale 1 called allgather") && m.contains("locale 0 called barrier"),
            "{m}"
        );

        let mut c = Collectives::new(2);
        c.contribute(1, 0, Op::Broadcast, 0, vec![]).unwrap();
        let m = c
            .contribute(0, 0, Op::Broadcast, 1, vec![])
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("broadcast(root 1)") && m.contains("broadcast(root 0)"),
            "{m}"
        );
    }

    #[test]
    fn sequence_errors_and_bad_root() {
        let mut c = Collectives::new(2);
        assert!(matches!(
            c.contribute(0, 1, Op::Barrier, 0, vec![]),
            Err(CollError::BadSeq {
                got: 1,
                expected: 0,
                ..
            })
        ));
        c.contribute(0, 0, Op::Barrier, 0, vec![]).unwrap();
        assert!(matches!(
            c.contribute(0, 0, Op::Barrier, 0, vec![]),
            Err(CollError::BadSeq { .. })
        ));
        assert!(matches!(
            Collectives::new(2).contribute(0, 0, Op::Broadcast, 2, vec![]),
            Err(CollError::BadRoot { root: 2, .. })
        ));
    }

    #[test]
    fn oversized_allgather_fails_the_collective_not_the_launcher() {
        let mut c = Collectives::with_limit(2, 16);
        c.contribute(0, 0, Op::Allgather, 0, vec![0; 10]).unwrap();
        let d = c
            .contribute(1, 0, Op::Allgather, 0, vec![0; 10])
            .unwrap()
            .unwrap();
        assert!(d.outcome.unwrap_err().contains("exceeds"));
        // The job moves on to the next collective.
        assert_eq!(c.contribute(0, 1, Op::Barrier, 0, vec![]), Ok(None));
    }
}
