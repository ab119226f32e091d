//! Pair of token ids → merge rank and result: the lookup every merge step makes.
//!
//! A general hash map spent ~25 instructions a lookup here (a hash, a 16-byte control group, a bit mask, the
//! compare). Keys and values are plain `u64`s and the table never changes after it is built, so this one is
//! open addressing with linear probing over a flat array, kept at most half full: a multiply and a shift
//! pick the slot, and a hit is usually the first compare. A miss (most pairs of neighbours do not merge) ends
//! at the first empty slot, on average within 1.5 probes at half load.
//!
//! Pairs of two ids below `SMALL_IDS` (the byte tokens, in the usual vocabularies) are read from a dense table
//! instead: a piece's first pairs are all of bytes, and a long one looks them up about three times each (a hash
//! lookup was most of encoding random letters).

/// Marks a free slot: the key of (NONE, NONE), which is never a merge (NONE, `u32::MAX`, is no token's id).
const EMPTY: u64 = u64::MAX;

/// Pairs of ids below this are in `PairTable::small`.
const SMALL_IDS: u32 = 256;

#[derive(Clone, Debug)]
pub struct PairTable {
    /// `(key, value)` per slot; `key == EMPTY` marks a free one.
    slots: Box<[(u64, u64)]>,
    /// 64 minus log₂ of the slot count: the multiply's top bits are the slot.
    shift: u32,
    /// The values of the pairs of ids below `SMALL_IDS`, at `left * SMALL_IDS + right` (`u64::MAX`: none).
    small: Box<[u64]>,
}

#[inline]
fn key(left: u32, right: u32) -> u64 {
    ((left as u64) << 32) | right as u64
}

impl PairTable {
    /// Builds the table; for a key given twice, the lower value stays (values are `rank << 32 | result`: the
    /// lower rank, as when merges are applied in order).
    ///
    /// Sized from the iterator's count when it gives one, and grown (doubled) past half full otherwise: a
    /// collected copy of the entries, to count them, was 9 MB at the peak of loading o200k_base.
    pub fn new(entries: impl IntoIterator<Item = (u32, u32, u64)>) -> PairTable {
        let entries = entries.into_iter();
        let mut table = PairTable::with_room(entries.size_hint().0);
        let mut stored = 0;
        for (left, right, value) in entries {
            if stored * 2 >= table.slots.len() {
                table = table.doubled();
            }
            stored += table.insert(key(left, right), value) as usize;
        }
        for &(k, value) in table.slots.iter().filter(|(k, _)| *k != EMPTY) {
            let (left, right) = ((k >> 32) as u32, k as u32);
            if left | right < SMALL_IDS {
                table.small[(left * SMALL_IDS + right) as usize] = value;
            }
        }
        table
    }

    /// An empty table with room for `count` keys at most half full.
    fn with_room(count: usize) -> PairTable {
        let bits = (count.max(1) * 2).next_power_of_two().trailing_zeros().max(4);
        PairTable {
            slots: vec![(EMPTY, 0); 1 << bits].into_boxed_slice(),
            shift: 64 - bits,
            small: vec![u64::MAX; (SMALL_IDS * SMALL_IDS) as usize].into_boxed_slice(),
        }
    }

    /// The same keys in twice the slots.
    fn doubled(self) -> PairTable {
        let mut bigger = PairTable::with_room(self.slots.len());
        for &(k, value) in self.slots.iter().filter(|(k, _)| *k != EMPTY) {
            bigger.insert(k, value);
        }
        bigger
    }

    /// Stores `value` for `k` (the lower value if `k` is there already); whether `k` is new. There must be a
    /// free slot.
    fn insert(&mut self, k: u64, value: u64) -> bool {
        let mut i = self.slot(k);
        loop {
            match self.slots[i].0 {
                EMPTY => {
                    self.slots[i] = (k, value);
                    return true;
                }
                existing if existing == k => {
                    self.slots[i].1 = self.slots[i].1.min(value);
                    return false;
                }
                _ => i = (i + 1) & (self.slots.len() - 1),
            }
        }
    }

    #[inline]
    fn slot(&self, k: u64) -> usize {
        (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The value stored for `(left, right)` when both ids are below `SMALL_IDS` (from the dense table; `u64::MAX`
    /// if none); None for other pairs.
    #[inline]
    pub fn get_small(&self, left: u32, right: u32) -> Option<u64> {
        (left | right < SMALL_IDS).then(|| self.small[(left * SMALL_IDS + right) as usize])
    }

    /// The value stored for `(left, right)`, or `u64::MAX`.
    #[inline]
    pub fn get(&self, left: u32, right: u32) -> u64 {
        if let Some(value) = self.get_small(left, right) {
            return value;
        }
        let k = key(left, right);
        let mask = self.slots.len() - 1;
        let mut i = self.slot(k);
        loop {
            // In bounds: `i` is masked to the table's (power-of-two) length.
            let (stored, value) = unsafe { *self.slots.get_unchecked(i) };
            if stored == EMPTY {
                return u64::MAX;
            }
            if stored == k {
                return value;
            }
            i = (i + 1) & mask;
        }
    }

    /// Every `(left, right, value)`, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32, u64)> + '_ {
        self.slots.iter().filter(|(k, _)| *k != EMPTY).map(|&(k, v)| ((k >> 32) as u32, k as u32, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_key_keeps_the_lowest_value_and_misses_the_rest() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let entries: Vec<(u32, u32, u64)> =
            (0..5000).map(|i| ((next() % 3000) as u32, (next() % 3000) as u32, i)).collect();
        let table = PairTable::new(entries.iter().copied());
        let mut first = rustc_hash::FxHashMap::default();
        for &(l, r, v) in &entries {
            first.entry((l, r)).and_modify(|lowest: &mut u64| *lowest = (*lowest).min(v)).or_insert(v);
        }
        assert_eq!(table.iter().count(), first.len());
        for l in 0..3000 {
            for r in (0..3000).step_by(7) {
                assert_eq!(table.get(l, r), first.get(&(l, r)).copied().unwrap_or(u64::MAX));
            }
        }
        // Keys that share a slot's neighbourhood at the top of the id range, and an empty table.
        let high = PairTable::new([(u32::MAX >> 1, 0, 1), (0, u32::MAX >> 1, 2)]);
        assert_eq!((high.get(u32::MAX >> 1, 0), high.get(0, u32::MAX >> 1), high.get(0, 0)), (1, 2, u64::MAX));
        assert_eq!(PairTable::new([]).get(1, 2), u64::MAX);
        // An iterator that does not know its length: the table grows as it fills, with the same answers.
        let grown = PairTable::new(entries.iter().copied().filter(|_| true));
        assert!(grown.slots.len() >= 2 * first.len());
        let mut listed: Vec<_> = grown.iter().collect();
        let mut expected: Vec<_> = table.iter().collect();
        listed.sort_unstable();
        expected.sort_unstable();
        assert_eq!(listed, expected);
        assert_eq!(table.get(u32::MAX, u32::MAX), u64::MAX);
    }
}
