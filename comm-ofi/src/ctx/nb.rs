//! The pure bookkeeping of a transmit context: how a large RMA is cut into
//! pieces the provider takes ([`chunks`]), and which non-blocking
//! operations are still in flight ([`NbTracker`]). No libfabric here, so
//! both are unit-tested without a provider.

/// The pieces of a transfer of `len` bytes cut at `max` bytes (the
/// provider's `max_msg_size`): `(offset, length)` in order, each at most
/// `max` long, together covering `0..len` exactly. An empty transfer is one
/// empty piece (it is still posted, and completes); a `max` of 0 counts as 1.
pub(crate) fn chunks(len: usize, max: usize) -> impl ExactSizeIterator<Item = (usize, usize)> {
    let max = max.max(1);
    let pieces = len.div_ceil(max).max(1);
    (0..pieces).map(move |i| {
        let off = i * max;
        (off, max.min(len - off))
    })
}

/// The non-blocking operations of one context in flight: each has a
/// sequence number (never 0: 0 is the context value of an untracked
/// operation) and a count of its pieces not yet completed; it is done when
/// none is left.
#[derive(Debug)]
pub(crate) struct NbTracker {
    /// (sequence number, pieces left), in no order.
    inflight: Vec<(u64, usize)>,
    /// The next sequence number to hand out.
    next_seq: u64,
}

impl NbTracker {
    /// Nothing in flight; the first sequence number is 1.
    pub(crate) fn new() -> NbTracker {
        NbTracker {
            inflight: Vec::new(),
            next_seq: 1,
        }
    }

    /// A fresh sequence number.
    pub(crate) fn next_seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    /// Whether nothing is in flight (the completion path skips the lookup).
    pub(crate) fn is_empty(&self) -> bool {
        self.inflight.is_empty()
    }

    /// Whether `seq` has no piece left in flight (an unknown number, and
    /// one never posted, count as done).
    pub(crate) fn is_done(&self, seq: u64) -> bool {
        !self.inflight.iter().any(|(s, _)| *s == seq)
    }

    /// `seq` is about to be posted in `pieces` pieces.
    pub(crate) fn posting(&mut self, seq: u64, pieces: usize) {
        if pieces > 0 {
            self.inflight.push((seq, pieces));
        }
    }

    /// A completion came back with context `seq` (0: an untracked
    /// operation, ignored).
    pub(crate) fn completed(&mut self, seq: u64) {
        self.take(seq, 1);
    }

    /// The last `pieces` pieces of `seq` were never posted (the post
    /// failed): they will never complete.
    pub(crate) fn unposted(&mut self, seq: u64, pieces: usize) {
        self.take(seq, pieces);
    }

    fn take(&mut self, seq: u64, pieces: usize) {
        if seq == 0 {
            return;
        }
        if let Some(i) = self.inflight.iter().position(|(s, _)| *s == seq) {
            let left = &mut self.inflight[i].1;
            *left = left.saturating_sub(pieces);
            if *left == 0 {
                self.inflight.swap_remove(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(len: usize, max: usize) -> Vec<(usize, usize)> {
        chunks(len, max).collect()
    }

    #[test]
    fn an_empty_transfer_is_one_empty_piece() {
        assert_eq!(all(0, 4096), vec![(0, 0)]);
        assert_eq!(chunks(0, 4096).len(), 1);
    }

    #[test]
    fn a_transfer_up_to_the_maximum_is_one_piece() {
        assert_eq!(all(1, 4096), vec![(0, 1)]);
        assert_eq!(all(4095, 4096), vec![(0, 4095)]);
        assert_eq!(all(4096, 4096), vec![(0, 4096)]);
    }

    #[test]
    fn one_byte_over_the_maximum_is_a_second_piece_of_one_byte() {
        assert_eq!(all(4097, 4096), vec![(0, 4096), (4096, 1)]);
        assert_eq!(all(2 * 4096, 4096), vec![(0, 4096), (4096, 4096)]);
        assert_eq!(
            all(2 * 4096 + 1, 4096),
            vec![(0, 4096), (4096, 4096), (8192, 1)]
        );
    }

    #[test]
    fn a_zero_maximum_counts_as_one_byte() {
        assert_eq!(all(3, 0), vec![(0, 1), (1, 1), (2, 1)]);
    }

    #[test]
    fn huge_transfers_are_covered_exactly_without_overflow() {
        let max = 1 << 30;
        let len = (1usize << 40) + 1;
        let c = chunks(len, max);
        assert_eq!(c.len(), (1 << 10) + 1);
        let v: Vec<_> = c.collect();
        assert_eq!(v[0], (0, max));
        assert_eq!(*v.last().unwrap(), (1 << 40, 1));
        let mut next = 0;
        for (off, n) in &v {
            assert_eq!(*off, next, "pieces are contiguous");
            assert!(*n <= max && *n > 0);
            next = off + n;
        }
        assert_eq!(next, len);
        // The largest sizes: one piece, and as many pieces as bytes.
        assert_eq!(all(usize::MAX, usize::MAX), vec![(0, usize::MAX)]);
        assert_eq!(chunks(usize::MAX, 1).len(), usize::MAX);
        assert_eq!(
            chunks(usize::MAX, usize::MAX - 1).last(),
            Some((usize::MAX - 1, 1))
        );
    }

    #[test]
    fn sequence_numbers_start_at_one_and_never_repeat() {
        let mut t = NbTracker::new();
        let s: Vec<u64> = (0..4).map(|_| t.next_seq()).collect();
        assert_eq!(s, vec![1, 2, 3, 4]);
    }

    #[test]
    fn an_operation_is_done_once_every_piece_completed() {
        let mut t = NbTracker::new();
        let (a, b) = (t.next_seq(), t.next_seq());
        t.posting(a, 3);
        t.posting(b, 1);
        assert!(!t.is_done(a) && !t.is_done(b) && !t.is_empty());
        t.completed(a);
        t.completed(b);
        assert!(!t.is_done(a) && t.is_done(b));
        t.completed(a);
        assert!(!t.is_done(a));
        t.completed(a);
        assert!(t.is_done(a) && t.is_empty());
        // A late or unknown completion changes nothing.
        t.completed(a);
        t.completed(99);
        assert!(t.is_empty());
    }

    #[test]
    fn untracked_completions_are_ignored() {
        let mut t = NbTracker::new();
        let a = t.next_seq();
        t.posting(a, 1);
        t.completed(0);
        assert!(!t.is_done(a));
        t.unposted(0, 5);
        assert!(!t.is_done(a));
    }

    #[test]
    fn pieces_never_posted_do_not_keep_an_operation_in_flight() {
        let mut t = NbTracker::new();
        let a = t.next_seq();
        t.posting(a, 4);
        // Pieces 0 and 1 were posted, the post of piece 2 failed: 2 never come.
        t.unposted(a, 2);
        assert!(!t.is_done(a));
        t.completed(a);
        t.completed(a);
        assert!(t.is_done(a) && t.is_empty());
        // All unposted at once.
        let b = t.next_seq();
        t.posting(b, 4);
        t.unposted(b, 4);
        assert!(t.is_done(b) && t.is_empty());
    }

    #[test]
    fn an_operation_of_no_pieces_is_done_at_once() {
        let mut t = NbTracker::new();
        let a = t.next_seq();
        t.posting(a, 0);
        assert!(t.is_done(a) && t.is_empty());
    }
}
