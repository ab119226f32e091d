//! The merge loop: repeatedly merge the best adjacent pair, touching only the places where it occurs.
//!
//! Performance notes:
//! - All words live in one flat array indexed by *unit position* (words laid end to end in order of first
//!   appearance). Each slot holds the symbol id starting there, the next and previous symbol of the same word
//!   (a doubly linked list) and the count of its word — together, because a merge reads all of them for a
//!   position and its neighbours. The merge loop is bound by cache misses on these slots (perf: ~80% of its
//!   time with separate arrays and a word → count table), so: one slot, and the next occurrences' slots are
//!   prefetched while the current one is merged. Merging an occurrence is O(1): relink, update four pair
//!   counts. No `Vec::insert`/`remove`, so a 10 MB word or a run of one repeated symbol stays linear.
//! - Each pair keeps the positions of its occurrences (its left symbol's position). Positions are appended in
//!   increasing order — a pair's occurrences are all created during one merge, which visits positions in
//!   order — so the list is sorted without sorting (the exception, a merge that recreates an existing token,
//!   marks the list unsorted and it is sorted when next read). Entries whose occurrence has gone are skipped
//!   when read (checking one is O(1)); a pair whose count drops to zero frees its list.
//! - The queue is a binary max-heap with lazy invalidation: merging `(a, b) → x` only removes occurrences of
//!   existing pairs and creates pairs that contain `x`, so an old pair's count never grows and its first
//!   occurrence never moves earlier. A popped entry is compared with the live count (and live tie key) and
//!   pushed back corrected if stale; the first entry that is up to date is the true best. Each merge pushes
//!   one entry per pair that gained occurrences (which also covers the "recreated token" exception).
//! - Counts are 64-bit (HF's are 32-bit and overflow silently past 2^31).

use rustc_hash::FxHashMap;

use super::{StopReason, TieBreak, TrainConfig};
use crate::error::{Error, Result};
use crate::vocab::Vocab;

const NONE: u32 = u32::MAX;
/// How many occurrences ahead the merge loop prefetches (enough to cover a memory access, measured).
const PREFETCH_DISTANCE: usize = 16;

/// Asks the CPU to start loading a slot into cache (no-op where there is no prefetch instruction).
#[inline(always)]
fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults and has no visible effect but timing.
    unsafe {
        std::arch::x86_64::_mm_prefetch(item as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// Per-pair state.
struct PairState {
    left: u32,
    right: u32,
    /// Sum over the live occurrences of their word's count.
    count: i64,
    /// Positions of occurrences, ascending when `sorted`; may include occurrences that have gone since.
    occurrences: Vec<u32>,
    /// Entries before `cursor` are known to have gone (used by the `first_seen` tie key).
    cursor: u32,
    sorted: bool,
    /// The last merge step that added occurrences (so each step pushes one heap entry per pair).
    stamp: u32,
}

/// A heap entry: a pair with its count and tie key when pushed.
#[derive(Clone, Copy)]
struct Entry {
    count: u64,
    /// first_seen: position of the first occurrence; hf: `(left << 32) | right`; lexicographic: unused.
    tie: u64,
    pair: u32,
}

/// One unit position of the corpus of unique words.
#[derive(Clone, Copy)]
struct Slot {
    /// Symbol id starting here; NONE inside a merged symbol.
    id: u32,
    /// Start of the next / previous symbol of the same word, or NONE.
    next: u32,
    prev: u32,
    /// The count of the word this position belongs to.
    count: i64,
}

pub struct Merger<'c> {
    config: &'c TrainConfig,
    vocab: Vocab,
    slots: Vec<Slot>,
    pair_index: FxHashMap<u64, u32>,
    pairs: Vec<PairState>,
    heap: Vec<Entry>,
    merge_counts: Vec<u64>,
    step: u32,
    touched: Vec<u32>,
    /// Per merge `(a, b) → x`: for a left neighbour `l`, the indices of `(l, a)` and `(l, x)`; for a right
    /// neighbour `r`, those of `(b, r)` and `(x, r)` — so each merge hashes a pair once per distinct
    /// neighbour, not once per occurrence (perf: the hash lookups were a fifth of the merge loop).
    left_cache: NeighbourCache,
    right_cache: NeighbourCache,
}

/// Pair indices by neighbour token id, valid for one merge step (entries of older steps are ignored).
#[derive(Default)]
struct NeighbourCache {
    entries: Vec<(u32, (u32, u32))>,
}

impl NeighbourCache {
    fn fit(&mut self, vocab_len: usize) {
        if self.entries.len() < vocab_len {
            self.entries.resize(vocab_len, (u32::MAX, (NONE, NONE)));
        }
    }

    #[inline]
    fn get(&self, id: u32, step: u32) -> Option<(u32, u32)> {
        let (stamp, pairs) = self.entries[id as usize];
        (stamp == step).then_some(pairs)
    }

    #[inline]
    fn set(&mut self, id: u32, step: u32, pairs: (u32, u32)) {
        self.entries[id as usize] = (step, pairs);
    }
}

fn key(left: u32, right: u32) -> u64 {
    ((left as u64) << 32) | right as u64
}

impl<'c> Merger<'c> {
    pub(super) fn new(input: &[(&str, u64)], config: &'c TrainConfig, vocab: Vocab) -> Result<Merger<'c>> {
        let mut merger = Merger {
            config,
            vocab,
            slots: Vec::new(),
            pair_index: FxHashMap::default(),
            pairs: Vec::new(),
            heap: Vec::new(),
            merge_counts: Vec::new(),
            step: 0,
            touched: Vec::new(),
            left_cache: NeighbourCache::default(),
            right_cache: NeighbourCache::default(),
        };
        let mut symbols = Vec::new();
        for (word, count) in input {
            symbols.clear();
            merger.vocab.initial_symbols(word, &mut symbols).map_err(|u| {
                Error::value(format!("internal error: unit {:?} of word {word:?} has no base symbol", u.unit))
            })?;
            if symbols.len() < 2 {
                continue; // nothing to merge, ever
            }
            let start = merger.slots.len();
            if start + symbols.len() >= NONE as usize {
                return Err(Error::value(format!(
                    "the unique words of this corpus hold more than {} units, more than one training run can \
                     index; train on a sample of the corpus (BPE merges settle long before that)",
                    NONE - 1
                )));
            }
            let count = i64::try_from(*count).unwrap_or(i64::MAX);
            for (i, &s) in symbols.iter().enumerate() {
                let pos = (start + i) as u32;
                merger.slots.push(Slot {
                    id: s,
                    prev: if i == 0 { NONE } else { pos - 1 },
                    next: if i + 1 == symbols.len() { NONE } else { pos + 1 },
                    count,
                });
            }
        }
        merger.count_initial_pairs();
        Ok(merger)
    }

    fn count_initial_pairs(&mut self) {
        for pos in 0..self.slots.len() {
            let next = self.slots[pos].next;
            if next == NONE {
                continue;
            }
            let (left, right) = (self.slots[pos].id, self.slots[next as usize].id);
            let initial_ok = match self.config.tie_break {
                TieBreak::Hf => !self.is_special(left) && !self.is_special(right), // HF never limits the first merges
                _ => self.allowed(left, right),
            };
            if initial_ok {
                let count = self.slots[pos].count;
                self.add_occurrence(left, right, pos as u32, count);
            }
        }
        for k in std::mem::take(&mut self.touched) {
            self.push_entry(k);
        }
    }

    pub fn run(mut self, observer: &mut dyn super::Observer) -> Result<super::Trained> {
        let planned = self.config.vocab_size.saturating_sub(self.vocab.len()) as u64;
        observer.merges_planned(planned);
        let stop = loop {
            if self.vocab.len() >= self.config.vocab_size {
                break StopReason::Done;
            }
            let Some(top) = self.pop() else {
                break StopReason::NoPairsLeft;
            };
            let live = self.pairs[top.pair as usize].count;
            if live <= 0 {
                continue;
            }
            let live_tie = match self.config.tie_break {
                TieBreak::FirstSeen => match self.first_occurrence(top.pair) {
                    Some(pos) => pos as u64,
                    None => continue,
                },
                _ => top.tie,
            };
            if live as u64 != top.count || live_tie != top.tie {
                self.push(Entry { count: live as u64, tie: live_tie, pair: top.pair });
                continue;
            }
            if top.count < self.config.min_frequency {
                break StopReason::MinFrequency;
            }
            self.merge(top.pair, top.count);
            observer.merge_done(self.merge_counts.len() as u64)?;
        };
        Ok(super::Trained { vocab: self.vocab, merge_counts: self.merge_counts, stop })
    }

    /// Merges every occurrence of a pair, left to right within each word.
    fn merge(&mut self, k: u32, count: u64) {
        self.step += 1;
        let (a, b) = (self.pairs[k as usize].left, self.pairs[k as usize].right);
        let x = self.vocab.push_merge(a, b);
        self.merge_counts.push(count);
        let state = &mut self.pairs[k as usize];
        if !state.sorted {
            state.occurrences.sort_unstable();
            state.occurrences.dedup();
        }
        let occurrences = std::mem::take(&mut state.occurrences);
        let mut left_cache = std::mem::take(&mut self.left_cache);
        let mut right_cache = std::mem::take(&mut self.right_cache);
        left_cache.fit(self.vocab.len());
        right_cache.fit(self.vocab.len());
        for (i, &p) in occurrences.iter().enumerate() {
            if let Some(&ahead) = occurrences.get(i + PREFETCH_DISTANCE) {
                prefetch(&self.slots[ahead as usize]);
            }
            let slot = self.slots[p as usize];
            let q = slot.next;
            // Gone since it was recorded (merged away, or overlapped by the previous occurrence: "aaa").
            if slot.id != a || q == NONE || self.slots[q as usize].id != b {
                continue;
            }
            let count = slot.count;
            let (l, r) = (slot.prev, self.slots[q as usize].next);
            if l != NONE {
                let left = self.slots[l as usize].id;
                self.move_neighbour_pair(&mut left_cache, left, (left, a), (left, x), l, count);
            }
            if r != NONE {
                let right = self.slots[r as usize].id;
                self.move_neighbour_pair(&mut right_cache, right, (b, right), (x, right), p, count);
            }
            self.slots[p as usize].id = x;
            self.slots[p as usize].next = r;
            self.slots[q as usize].id = NONE;
            if r != NONE {
                self.slots[r as usize].prev = p;
            }
        }
        self.left_cache = left_cache;
        self.right_cache = right_cache;
        // Left-to-right merging leaves no adjacent (a, b).
        let state = &mut self.pairs[k as usize];
        state.count = 0;
        state.cursor = 0;
        state.sorted = true;
        for k in std::mem::take(&mut self.touched) {
            if self.pairs[k as usize].count > 0 {
                self.push_entry(k);
            }
        }
    }

    /// One occurrence next to a merged pair changes pairs: `gone` (with the old symbol) loses it, `made` (with
    /// the merged token, if it may be counted) gains it at `at`. The two pair indices are looked up once per
    /// neighbour token and merge, through `cache`.
    #[inline]
    fn move_neighbour_pair(
        &mut self,
        cache: &mut NeighbourCache,
        neighbour: u32,
        gone: (u32, u32),
        made: (u32, u32),
        at: u32,
        count: i64,
    ) {
        let (gone, made) = match cache.get(neighbour, self.step) {
            Some(pairs) => pairs,
            None => {
                let gone = self.pair_if_counted(gone.0, gone.1);
                let made = if self.allowed(made.0, made.1) { self.pair_or_insert(made.0, made.1) } else { NONE };
                cache.set(neighbour, self.step, (gone, made));
                (gone, made)
            }
        };
        self.remove_occurrence_of(gone, count);
        if made != NONE {
            self.add_occurrence_of(made, at, count);
        }
    }

    fn is_special(&self, id: u32) -> bool {
        (id as usize) < self.vocab.num_special
    }

    /// Whether a pair may be counted: never with a special token (the unknown token among them), and within
    /// `max_token_length` by the tie mode's rule.
    fn allowed(&self, left: u32, right: u32) -> bool {
        if self.is_special(left) || self.is_special(right) {
            return false;
        }
        let Some(max) = self.config.max_token_length else {
            return true;
        };
        let units = self.vocab.tokens[left as usize].units as usize + self.vocab.tokens[right as usize].units as usize;
        match self.config.tie_break {
            TieBreak::Hf => units < max,
            TieBreak::FirstSeen | TieBreak::Lexicographic => units <= max,
        }
    }

    /// The index of pair `(left, right)`, created if it is new.
    fn pair_or_insert(&mut self, left: u32, right: u32) -> u32 {
        let next_index = self.pairs.len() as u32;
        let k = *self.pair_index.entry(key(left, right)).or_insert(next_index);
        if k == next_index {
            self.pairs.push(PairState {
                left,
                right,
                count: 0,
                occurrences: Vec::new(),
                cursor: 0,
                sorted: true,
                stamp: u32::MAX,
            });
        }
        k
    }

    /// The index of pair `(left, right)`, or NONE if it was never counted (max_token_length, special tokens).
    fn pair_if_counted(&self, left: u32, right: u32) -> u32 {
        self.pair_index.get(&key(left, right)).copied().unwrap_or(NONE)
    }

    fn add_occurrence(&mut self, left: u32, right: u32, pos: u32, count: i64) {
        let k = self.pair_or_insert(left, right);
        self.add_occurrence_of(k, pos, count);
    }

    fn add_occurrence_of(&mut self, k: u32, pos: u32, count: i64) {
        let state = &mut self.pairs[k as usize];
        state.count += count;
        if state.occurrences.last().is_some_and(|&last| last > pos) {
            state.sorted = false;
        }
        state.occurrences.push(pos);
        if state.stamp != self.step {
            state.stamp = self.step;
            self.touched.push(k);
        }
    }

    fn remove_occurrence_of(&mut self, k: u32, count: i64) {
        if k == NONE {
            return;
        }
        let state = &mut self.pairs[k as usize];
        state.count -= count;
        if state.count <= 0 {
            state.occurrences = Vec::new();
            state.cursor = 0;
            state.sorted = true;
        }
    }

    /// `first_seen` tie key: the position of the pair's first occurrence that is still there.
    fn first_occurrence(&mut self, k: u32) -> Option<u32> {
        let state = &mut self.pairs[k as usize];
        if !state.sorted {
            state.occurrences.sort_unstable();
            state.occurrences.dedup();
            state.sorted = true;
            state.cursor = 0;
        }
        let (a, b) = (state.left, state.right);
        while let Some(&p) = state.occurrences.get(state.cursor as usize) {
            let slot = self.slots[p as usize];
            if slot.id == a && slot.next != NONE && self.slots[slot.next as usize].id == b {
                return Some(p);
            }
            state.cursor += 1;
        }
        None
    }

    fn push_entry(&mut self, k: u32) {
        let state = &self.pairs[k as usize];
        let count = state.count as u64;
        let tie = match self.config.tie_break {
            TieBreak::Hf => key(state.left, state.right),
            TieBreak::Lexicographic => 0,
            TieBreak::FirstSeen => match self.first_occurrence(k) {
                Some(pos) => pos as u64,
                None => return,
            },
        };
        self.push(Entry { count, tie, pair: k });
    }

    /// Whether heap entry `x` ranks above `y`.
    fn better(&self, x: &Entry, y: &Entry) -> bool {
        if x.count != y.count {
            return x.count > y.count;
        }
        match self.config.tie_break {
            TieBreak::FirstSeen | TieBreak::Hf => x.tie < y.tie,
            TieBreak::Lexicographic => {
                // The greater pair wins, compared as (bytes of left, bytes of right).
                let (px, py) = (&self.pairs[x.pair as usize], &self.pairs[y.pair as usize]);
                let t = &self.vocab.tokens;
                let left = t[px.left as usize].bytes.cmp(&t[py.left as usize].bytes);
                let order = left.then_with(|| t[px.right as usize].bytes.cmp(&t[py.right as usize].bytes));
                // Equal bytes (marker variants such as "##a" and "a"): the greater display wins.
                let order = order
                    .then_with(|| t[px.left as usize].display.cmp(&t[py.left as usize].display))
                    .then_with(|| t[px.right as usize].display.cmp(&t[py.right as usize].display));
                order == std::cmp::Ordering::Greater
            }
        }
    }

    fn push(&mut self, entry: Entry) {
        self.heap.push(entry);
        let mut i = self.heap.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.better(&self.heap[i], &self.heap[parent]) {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    fn pop(&mut self) -> Option<Entry> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.heap[0], last);
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut best = i;
            if l < n && self.better(&self.heap[l], &self.heap[best]) {
                best = l;
            }
            if r < n && self.better(&self.heap[r], &self.heap[best]) {
                best = r;
            }
            if best == i {
                break;
            }
            self.heap.swap(i, best);
            i = best;
        }
        Some(top)
    }
}
