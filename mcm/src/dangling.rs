//! Dangling-store tracking: per transmit context, which targets may still have
//! invisible PUTs or non-fetching AMOs.
//!
//! This state is read on every operation (is anything dangling at this
//! target?) and on every boundary (is anything dangling at all?), so both
//! questions must be cheap at thousands of locales. A [`LocaleSet`] is a
//! two-level bitset: one bit per locale in `u64` words, one summary bit per
//! non-zero word, and a count. Membership is O(1), "nothing dangling" is O(1),
//! iteration and clearing touch only non-zero words.

use crate::Locale;

const BITS: usize = u64::BITS as usize;

/// A set of locales, cheap when sparse: O(1) membership, insert, remove and
/// emptiness; iteration in ascending order and [`clear`](LocaleSet::clear)
/// proportional to the number of non-zero 64-locale words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocaleSet {
    /// Bit `l % 64` of word `l / 64` is set iff locale `l` is in the set.
    words: Vec<u64>,
    /// Bit `w % 64` of summary word `w / 64` is set iff `words[w] != 0`.
    summary: Vec<u64>,
    /// Number of locales in the set.
    len: usize,
    /// Locales the set can hold: `0..num_locales`.
    num_locales: usize,
}

impl LocaleSet {
    /// An empty set for locales `0..num_locales`.
    pub fn new(num_locales: usize) -> Self {
        let words = num_locales.div_ceil(BITS);
        LocaleSet {
            words: vec![0; words],
            summary: vec![0; words.div_ceil(BITS)],
            len: 0,
            num_locales,
        }
    }

    /// The locales the set can hold: `0..num_locales()`.
    pub fn num_locales(&self) -> usize {
        self.num_locales
    }

    /// Number of locales in the set (O(1)).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set is empty (O(1)).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `locale` is in the set. Panics if `locale >= num_locales()`.
    #[inline]
    pub fn contains(&self, locale: Locale) -> bool {
        self.check(locale);
        self.words[locale / BITS] & (1 << (locale % BITS)) != 0
    }

    /// Adds `locale`; returns whether it was newly added. Panics if out of range.
    #[inline]
    pub fn insert(&mut self, locale: Locale) -> bool {
        self.check(locale);
        let (w, bit) = (locale / BITS, 1u64 << (locale % BITS));
        if self.words[w] & bit != 0 {
            return false;
        }
        self.words[w] |= bit;
        self.summary[w / BITS] |= 1 << (w % BITS);
        self.len += 1;
        true
    }

    /// Removes `locale`; returns whether it was present. Panics if out of range.
    pub fn remove(&mut self, locale: Locale) -> bool {
        self.check(locale);
        let (w, bit) = (locale / BITS, 1u64 << (locale % BITS));
        if self.words[w] & bit == 0 {
            return false;
        }
        self.words[w] &= !bit;
        if self.words[w] == 0 {
            self.summary[w / BITS] &= !(1 << (w % BITS));
        }
        self.len -= 1;
        true
    }

    /// Empties the set, touching only non-zero words.
    pub fn clear(&mut self) {
        if self.len == 0 {
            return;
        }
        for (s, summary) in self.summary.iter_mut().enumerate() {
            let mut bits = *summary;
            while bits != 0 {
                let w = s * BITS + bits.trailing_zeros() as usize;
                self.words[w] = 0;
                bits &= bits - 1;
            }
            *summary = 0;
        }
        self.len = 0;
    }

    /// The locales in the set, ascending.
    pub fn iter(&self) -> LocaleSetIter<'_> {
        LocaleSetIter(WordUnion::new(self, None))
    }

    #[inline]
    fn check(&self, locale: Locale) {
        assert!(
            locale < self.num_locales,
            "locale {locale} out of range: this set holds locales 0..{}",
            self.num_locales
        );
    }
}

impl<'a> IntoIterator for &'a LocaleSet {
    type Item = Locale;
    type IntoIter = LocaleSetIter<'a>;
    fn into_iter(self) -> LocaleSetIter<'a> {
        self.iter()
    }
}

/// Iterator over a [`LocaleSet`], ascending.
#[derive(Clone, Debug)]
pub struct LocaleSetIter<'a>(WordUnion<'a>);

impl Iterator for LocaleSetIter<'_> {
    type Item = Locale;
    fn next(&mut self) -> Option<Locale> {
        self.0.next()
    }
}

/// Iterator over the union of the PUT- and AMO-dangling sets of a
/// [`DanglingStores`], ascending: the same walk as over one set.
pub type Targets<'a> = LocaleSetIter<'a>;

/// Walks the set bits of one set, or of the union of two sets of the same
/// size, word by word, skipping zero words through the summary.
#[derive(Clone, Debug)]
struct WordUnion<'a> {
    a: &'a LocaleSet,
    b: Option<&'a LocaleSet>,
    /// Index of the summary word being walked.
    summary_index: usize,
    /// Its bits not yet visited.
    summary_bits: u64,
    /// Index of the word being walked.
    word_index: usize,
    /// Its bits not yet visited.
    word_bits: u64,
}

impl<'a> WordUnion<'a> {
    fn new(a: &'a LocaleSet, b: Option<&'a LocaleSet>) -> Self {
        let mut it = WordUnion {
            a,
            b,
            summary_index: 0,
            summary_bits: 0,
            word_index: 0,
            word_bits: 0,
        };
        it.summary_bits = it.summary_at(0);
        it
    }

    fn summary_at(&self, s: usize) -> u64 {
        let a = self.a.summary.get(s).copied().unwrap_or(0);
        let b = self.b.and_then(|b| b.summary.get(s).copied()).unwrap_or(0);
        a | b
    }

    fn word_at(&self, w: usize) -> u64 {
        self.a.words[w] | self.b.map_or(0, |b| b.words[w])
    }
}

impl Iterator for WordUnion<'_> {
    type Item = Locale;

    fn next(&mut self) -> Option<Locale> {
        loop {
            if self.word_bits != 0 {
                let bit = self.word_bits.trailing_zeros() as usize;
                self.word_bits &= self.word_bits - 1;
                return Some(self.word_index * BITS + bit);
            }
            while self.summary_bits == 0 {
                self.summary_index += 1;
                if self.summary_index >= self.a.summary.len() {
                    return None;
                }
                self.summary_bits = self.summary_at(self.summary_index);
            }
            let w = self.summary_index * BITS + self.summary_bits.trailing_zeros() as usize;
            self.summary_bits &= self.summary_bits - 1;
            self.word_index = w;
            self.word_bits = self.word_at(w);
        }
    }
}

/// The dangling stores of one transmit context: the targets with PUTs
/// (`put`) and with non-fetching native AMOs (`amo`) whose effect may not be
/// visible yet.
///
/// Kept apart because they are made visible differently: a PUT by an order
/// GET behind it, an AMO only by a proof of visibility at the target (see
/// [`Transport::post_prove_amo_visible`](crate::Transport::post_prove_amo_visible)).
/// In delivery-complete mode `put` holds targets of non-blocking PUTs not yet
/// known to be delivered.
///
/// A third set, `read`, is not about stores: it holds the targets of
/// non-blocking GETs that may still be in flight. No mode asks the provider
/// for write-after-read ordering, so a later PUT, writing AMO or AM send to
/// such a target could overtake the GET and let it read the newer value; the
/// policy *settles* (waits out) those GETs first (see `docs/mcm.md`, "Non-
/// blocking GET then PUT"). It is kept here because it lives and dies with
/// the same transmit context.
///
/// In delivery-complete mode a non-blocking PUT also records the remote
/// range it writes ([`mark_put_range`](Self::mark_put_range)), so that a
/// later PUT or GET to the same target waits it out only if the two may
/// touch the same bytes ([`put_overlaps`](Self::put_overlaps)): a window of
/// non-blocking PUTs to disjoint parts of one locale then pipelines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DanglingStores {
    put: LocaleSet,
    amo: LocaleSet,
    read: LocaleSet,
    /// (target, start, end) of the ranged PUTs marked since the last clear.
    ranges: Vec<(Locale, u64, u64)>,
    /// A PUT was marked without its range, or more than [`MAX_RANGES`]
    /// were: every dangling target counts as overlapping until cleared.
    ranges_lost: bool,
}

/// Ranges remembered before [`DanglingStores::put_overlaps`] gives up
/// (answers yes): the window it pipelines.
pub const MAX_RANGES: usize = 128;

impl DanglingStores {
    /// Nothing dangling, for locales `0..num_locales`.
    pub fn new(num_locales: usize) -> Self {
        DanglingStores {
            put: LocaleSet::new(num_locales),
            amo: LocaleSet::new(num_locales),
            read: LocaleSet::new(num_locales),
            ranges: Vec::new(),
            ranges_lost: false,
        }
    }

    /// The locales tracked: `0..num_locales()`.
    pub fn num_locales(&self) -> usize {
        self.put.num_locales()
    }

    /// Whether nothing dangles anywhere (O(1)).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.put.is_empty() && self.amo.is_empty()
    }

    /// Whether nothing dangles anywhere but at `target` (O(1)).
    #[inline]
    pub fn only_at(&self, target: Locale) -> bool {
        self.put.len() <= 1
            && self.amo.len() <= 1
            && (self.put.is_empty() || self.put.contains(target))
            && (self.amo.is_empty() || self.amo.contains(target))
    }

    /// Targets with dangling PUTs.
    pub fn puts(&self) -> &LocaleSet {
        &self.put
    }

    /// Targets with dangling non-fetching AMOs.
    pub fn amos(&self) -> &LocaleSet {
        &self.amo
    }

    /// Whether a PUT dangles at `target`.
    #[inline]
    pub fn put_dangles(&self, target: Locale) -> bool {
        self.put.contains(target)
    }

    /// Whether a non-fetching AMO dangles at `target`.
    #[inline]
    pub fn amo_dangles(&self, target: Locale) -> bool {
        self.amo.contains(target)
    }

    /// Whether a PUT or an AMO dangles at `target`.
    pub fn dangles(&self, target: Locale) -> bool {
        self.put_dangles(target) || self.amo_dangles(target)
    }

    /// Records a PUT to `target` that may not be visible yet.
    #[inline]
    pub fn mark_put(&mut self, target: Locale) {
        self.put.insert(target);
        self.ranges_lost = true;
    }

    /// Records a PUT to `target` that may not be visible yet and the remote
    /// bytes `[start, end)` it writes (`None`: unknown, it may write
    /// anywhere there).
    pub fn mark_put_range(&mut self, target: Locale, range: Option<(u64, u64)>) {
        self.put.insert(target);
        match range {
            Some((start, end)) if self.ranges.len() < MAX_RANGES => {
                self.ranges.push((target, start, end));
            }
            _ => self.ranges_lost = true,
        }
    }

    /// Whether a PUT dangling at `target` may write some of the remote
    /// bytes `range` (`None`: unknown, any byte there).
    pub fn put_overlaps(&self, target: Locale, range: Option<(u64, u64)>) -> bool {
        if !self.put_dangles(target) {
            return false;
        }
        let Some((start, end)) = range else {
            return true;
        };
        self.ranges_lost
            || self
                .ranges
                .iter()
                .any(|&(t, s, e)| t == target && s < end && start < e)
    }

    /// Records a non-fetching AMO on `target` that may not be visible yet.
    #[inline]
    pub fn mark_amo(&mut self, target: Locale) {
        self.amo.insert(target);
    }

    /// Forgets the dangling PUTs of `target` (they are now visible).
    pub fn clear_put(&mut self, target: Locale) {
        self.put.remove(target);
        if !self.ranges.is_empty() {
            self.ranges.retain(|&(t, _, _)| t != target);
        }
        if self.put.is_empty() {
            self.ranges_lost = false;
        }
    }

    /// Forgets the dangling AMOs of `target` (they are now visible).
    pub fn clear_amo(&mut self, target: Locale) {
        self.amo.remove(target);
    }

    /// Forgets everything dangling at `target`.
    pub fn clear_target(&mut self, target: Locale) {
        self.clear_put(target);
        self.clear_amo(target);
    }

    /// Forgets every dangling store, touching only non-zero words. (Pending
    /// reads are kept: see [`clear_reads`](Self::clear_reads).)
    pub fn clear_all(&mut self) {
        self.put.clear();
        self.amo.clear();
        self.ranges.clear();
        self.ranges_lost = false;
    }

    /// Records a non-blocking GET from `target` that may still be in flight.
    pub fn mark_read(&mut self, target: Locale) {
        self.read.insert(target);
    }

    /// Whether a non-blocking GET from `target` may still be in flight.
    pub fn read_pending(&self, target: Locale) -> bool {
        self.read.contains(target)
    }

    /// Whether any non-blocking GET may still be in flight (O(1)).
    pub fn reads_pending(&self) -> bool {
        !self.read.is_empty()
    }

    /// Forgets every pending read (the context has waited for everything it
    /// posted).
    pub fn clear_reads(&mut self) {
        self.read.clear();
    }

    /// Every target with something dangling (PUT or AMO), ascending, walking
    /// the two sets' words together.
    pub fn targets(&self) -> Targets<'_> {
        LocaleSetIter(WordUnion::new(&self.put, Some(&self.amo)))
    }
}

#[cfg(test)]
mod tests {
    use super::DanglingStores as D;

    #[test]
    fn ranged_puts_overlap_only_their_own_bytes() {
        let mut d = D::new(4);
        assert!(!d.put_overlaps(1, None), "nothing dangles");
        d.mark_put_range(1, Some((0, 8)));
        d.mark_put_range(1, Some((16, 24)));
        assert!(d.put_overlaps(1, Some((4, 12))));
        assert!(d.put_overlaps(1, Some((20, 21))));
        assert!(!d.put_overlaps(1, Some((8, 16))), "between the two");
        assert!(!d.put_overlaps(2, Some((0, 8))), "another target");
        assert!(d.put_overlaps(1, None), "unknown range");
        // Clearing the target forgets its ranges; a PUT marked without a
        // range overlaps everything at its target until cleared.
        d.clear_put(1);
        assert!(!d.put_overlaps(1, Some((0, 8))));
        d.mark_put_range(2, Some((0, 8)));
        d.mark_put(2);
        assert!(d.put_overlaps(2, Some((100, 108))));
        d.clear_all();
        d.mark_put_range(2, Some((0, 8)));
        assert!(!d.put_overlaps(2, Some((100, 108))));
        // More ranges than remembered: everything overlaps.
        for k in 0..super::MAX_RANGES as u64 {
            d.mark_put_range(3, Some((1000 + 8 * k, 1008 + 8 * k)));
        }
        assert!(d.put_overlaps(3, Some((0, 1))), "too many: given up");
    }

    #[test]
    fn only_at_is_true_while_nothing_dangles_elsewhere() {
        let mut d = D::new(4);
        assert!(d.only_at(1), "nothing dangles");
        d.mark_amo(1);
        d.mark_put(1);
        assert!(d.only_at(1));
        assert!(!d.only_at(2), "1 dangles, not 2");
        d.mark_put(2);
        assert!(!d.only_at(1), "a PUT at 2");
        d.clear_put(2);
        d.mark_amo(3);
        assert!(!d.only_at(1), "an AMO at 3");
        d.clear_all();
        d.mark_amo(3);
        assert!(d.only_at(3) && !d.only_at(1));
    }

    use super::*;

    #[test]
    fn empty_set_has_nothing() {
        let s = LocaleSet::new(5000);
        assert!(s.is_empty());
        assert_eq!(s.len(), 0);
        assert_eq!(s.iter().count(), 0);
        assert!(!s.contains(4999));
        assert_eq!(LocaleSet::new(0).iter().count(), 0);
    }

    #[test]
    fn insert_remove_contains_and_len() {
        let mut s = LocaleSet::new(200);
        assert!(s.insert(3));
        assert!(!s.insert(3), "second insert is not new");
        assert!(s.insert(64));
        assert!(s.insert(199));
        assert_eq!(s.len(), 3);
        assert!(s.contains(3) && s.contains(64) && s.contains(199));
        assert!(!s.contains(4) && !s.contains(63) && !s.contains(65));
        assert!(s.remove(64));
        assert!(!s.remove(64), "second remove finds nothing");
        assert_eq!(s.len(), 2);
        assert!(!s.contains(64));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![3, 199]);
    }

    #[test]
    fn summary_tracks_zero_words() {
        // Locales 70 and 71 share word 1; removing one keeps the word live.
        let mut s = LocaleSet::new(10_000);
        s.insert(70);
        s.insert(71);
        s.remove(70);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![71]);
        s.remove(71);
        assert!(s.is_empty());
        assert_eq!(s.summary.iter().filter(|w| **w != 0).count(), 0);
    }

    #[test]
    fn iteration_is_ascending_across_summary_words() {
        // 64 * 64 = 4096 locales per summary word: cross that boundary.
        let picks = [0, 1, 63, 64, 4095, 4096, 4097, 8191, 9999];
        let mut s = LocaleSet::new(10_000);
        for &l in picks.iter().rev() {
            s.insert(l);
        }
        assert_eq!(s.iter().collect::<Vec<_>>(), picks.to_vec());
        assert_eq!(s.len(), picks.len());
    }

    #[test]
    fn clear_empties_and_set_is_reusable() {
        let mut s = LocaleSet::new(9000);
        for l in (0..9000).step_by(97) {
            s.insert(l);
        }
        s.clear();
        assert!(s.is_empty());
        assert_eq!(s.iter().count(), 0);
        assert!(s.words.iter().all(|w| *w == 0));
        assert!(s.summary.iter().all(|w| *w == 0));
        s.insert(8999);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![8999]);
    }

    #[test]
    #[should_panic(expected = "locale 10 out of range")]
    fn out_of_range_locale_panics_with_its_value() {
        LocaleSet::new(10).insert(10);
    }

    #[test]
    fn dangling_stores_track_puts_and_amos_apart() {
        let mut d = DanglingStores::new(300);
        assert!(d.is_empty());
        d.mark_put(5);
        d.mark_amo(5);
        d.mark_amo(260);
        assert!(!d.is_empty());
        assert!(d.put_dangles(5) && d.amo_dangles(5) && d.dangles(5));
        assert!(!d.put_dangles(260) && d.amo_dangles(260));
        assert_eq!(d.targets().collect::<Vec<_>>(), vec![5, 260]);
        d.clear_put(5);
        assert!(d.dangles(5), "the AMO still dangles");
        d.clear_target(5);
        assert!(!d.dangles(5));
        assert_eq!(d.targets().collect::<Vec<_>>(), vec![260]);
        d.clear_all();
        assert!(d.is_empty());
        assert_eq!(d.targets().count(), 0);
    }

    #[test]
    fn union_iteration_merges_words_without_duplicates() {
        let mut d = DanglingStores::new(5000);
        for l in [1, 64, 4100] {
            d.mark_put(l);
        }
        for l in [1, 2, 4100, 4999] {
            d.mark_amo(l);
        }
        assert_eq!(d.targets().collect::<Vec<_>>(), vec![1, 2, 64, 4100, 4999]);
        assert_eq!(d.puts().len(), 3);
        assert_eq!(d.amos().len(), 4);
    }

    #[test]
    fn default_is_empty_for_zero_locales() {
        let d = DanglingStores::default();
        assert!(d.is_empty());
        assert_eq!(d.num_locales(), 0);
        assert_eq!(d.targets().count(), 0);
    }
}
