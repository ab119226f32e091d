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
//! - Where the symbols live is a `Layout` (see `layout.rs`): 24-byte slots for ordinary text, or 2-4 bytes
//!   per unit for few long words (genomes). The loop below is the same code for both — so are the merges.
//! - The compact layout also runs *lean*, for memory: a genome has ~0.1 distinct adjacent pairs per base
//!   by the end (E. coli at 4 096: 550 000 pairs, most seen once or twice), and a pair with its list, index
//!   and heap entries costs ~100 bytes. So only pairs counted at least `threshold` times are kept. That is
//!   exact because a pair's count never grows after the merge that created it (the one exception, a merge
//!   that recreates an existing token, forces a recount): a forgotten pair stays below the threshold, and while the
//!   best pair kept is at or above it, it is the true best. When the best kept pair falls below it, all pairs
//!   are recounted from the symbols (one pass, O(n)) and the threshold lowered — to an eighth of the best
//!   count, or lower so that at least four pairs per merge still to come are kept; a handful of rescans per
//!   run. Lists keep their stale entries (checking them one by one costs a cache miss each: compacting lists
//!   was a quarter of the time) until the pair is merged or the next recount, which rebuilds every list at
//!   its exact size from one sequential pass over the symbols; one is forced when the lists have grown by
//!   as many entries as they started with. Memory stays a few bytes per unit. A recount of a large layout
//!   counts and fills the lists in two halves on two of the counting threads (split between two words).
//!   A merge that makes a new token creates one pair per neighbour token on each side, nearly all below the
//!   threshold: they are tallied per neighbour (`Newborns`) and only those that reach it become pairs, with
//!   their lists, when the merge ends.
//! - The `first_seen` tie key (a pair's first occurrence) is pushed as a lower bound — the first list entry
//!   not known to be stale — and only checked when the entry reaches the top against an equal count:
//!   checking it for every touched pair at every merge read symbols far apart (a third of a genome's loop).

use rustc_hash::{FxHashMap, FxHashSet};

use super::control::{Boundaries, Edges, Veto};
use super::layout::{Compact, Layout, NONE, PartSize, Slots, Symbol, TokenWords};
use super::occurrences::OccurrenceList;
use super::{StopReason, TieBreak, TrainConfig};
use crate::error::Result;
use crate::vocab::Vocab;

/// How many occurrences ahead the merge loop prefetches (enough to cover a memory access, measured).
const PREFETCH_DISTANCE: usize = 16;
/// Lean runs recount (rebuilding every list without its stale entries) once this many entries were added
/// since the last recount, or as many as it left, whichever is more.
const RECOUNT_FROM_ADDED: u64 = 1 << 16;
/// Pairs per block of a recount's tally over a wide vocabulary (1 MB).
const TALLY_BLOCK: usize = 1 << 16;
/// Lean runs recount pairs in a direct table (rather than sorted by left symbol) up to this many token ids. (The unit
/// tests, whose vocabularies are small, use a small limit so that both ways are exercised.)
#[cfg(not(test))]
const RECOUNT_TABLE_LIMIT: usize = 768;
#[cfg(test)]
const RECOUNT_TABLE_LIMIT: usize = 8;
/// Lean runs return freed memory to the OS after merging a pair whose list held at least this many bytes.
const RELEASE_FROM_BYTES: usize = 1 << 16;
/// Lean runs keep pairs counted at least (best count) / THRESHOLD_DIVISOR times...
const THRESHOLD_DIVISOR: u64 = 8;
/// ...or fewer, so that at least this many pairs per merge still to come are kept.
const KEPT_PER_MERGE: usize = 4;
/// `Engine::Auto` picks the compact layout when the unique words average at least this many units.
const COMPACT_FROM_AVERAGE_UNITS: usize = 32;
/// The initial pair count looks pairs up in a direct table when the base vocabulary is at most this large.
const DIRECT_TABLE_LIMIT: usize = 512;

/// Which layout the merge loop keeps the words in (the merges are the same either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// `Compact` for few long words (their average length is 32 units or more), else `Slots`.
    Auto,
    Slots,
    Compact,
}

impl Engine {
    pub fn parse(name: &str) -> Result<Engine> {
        match name {
            "auto" => Ok(Engine::Auto),
            "slots" => Ok(Engine::Slots),
            "compact" => Ok(Engine::Compact),
            other => Err(crate::error::Error::value(format!(
                "unknown engine {other:?}: use \"auto\", \"slots\" or \"compact\""
            ))),
        }
    }
}

/// Per-pair state.
struct PairState<O: OccurrenceList> {
    left: u32,
    right: u32,
    /// Sum over the live occurrences of their word's count.
    count: i64,
    /// Positions of occurrences, ascending when `sorted`; may include occurrences that have gone since.
    occurrences: O,
    /// Entries before `cursor` are known to have gone (used by the `first_seen` tie key).
    cursor: O::Cursor,
    /// The last merge step that added occurrences (so each step pushes one heap entry per pair).
    stamp: u32,
    sorted: bool,
}

/// What a recount learns about one pair.
#[derive(Clone, Copy, Default)]
struct Tally {
    count: u64,
    /// Size of its occurrence list (see `OccurrenceList::cost`).
    cost: usize,
    /// Occurrences; u32::MAX marks a pair that is not counted.
    n: u32,
    first: u32,
    last: u32,
    /// When counted in two halves: the size of the second half's list on its own.
    tail_cost: u32,
}

/// The tallies of one pair over two consecutive parts: the second part's list starts over from 0, so its
/// first entry's size is taken again from the first part's last entry.
fn join_tallies<O: OccurrenceList>(a: Tally, b: Tally) -> Tally {
    if a.n == u32::MAX || b.n == u32::MAX {
        return Tally { n: u32::MAX, ..a };
    }
    let tail_cost = u32::try_from(b.cost).unwrap_or(u32::MAX); // a capacity hint only
    if b.n == 0 {
        return a;
    }
    if a.n == 0 {
        return Tally { tail_cost, ..b };
    }
    Tally {
        count: a.count.saturating_add(b.count),
        cost: a.cost + b.cost - O::cost(0, b.first) + O::cost(a.last, b.first),
        n: a.n + b.n,
        first: a.first,
        last: b.last,
        tail_cost,
    }
}

/// The pairs of a layout sorted by left symbol, for a recount over a wide vocabulary: in one or two parts
/// (consecutive ranges of positions), each a counting sort of its pairs by left symbol, stable (positions
/// ascend within a left symbol).
struct SortedPairs {
    parts: Vec<SortedPart>,
    count_bits: u32,
    /// The largest count stored in an entry; a pair's counts at or above it are summed in `big`.
    mask: u32,
}

struct SortedPart {
    /// Left symbol `l`'s entries are `starts[l]..starts[l + 1]`.
    starts: Vec<u32>,
    /// Per entry: the right symbol and the word's count packed in one u32 (perf: the tally reads them in
    /// order; the positions are only read again for the pairs that are kept).
    entries: Vec<u32>,
    positions: Vec<u32>,
    big: FxHashMap<u64, u64>,
}

impl SortedPairs {
    /// Calls `f(right, count)` for the pairs of left symbol `left`; a count stored as `mask` is given as 0 (it
    /// is summed in the parts' `big`).
    #[inline]
    fn for_each_packed(&self, left: usize, mut f: impl FnMut(u32, u64)) {
        for part in &self.parts {
            for &entry in &part.entries[part.starts[left] as usize..part.starts[left + 1] as usize] {
                let count = entry & self.mask;
                f(((entry as u64) >> self.count_bits) as u32, if count == self.mask { 0 } else { count as u64 });
            }
        }
    }

    /// Calls `f(right, position)` for the pairs of left symbol `left` in position order.
    #[inline]
    fn for_each_entry(&self, left: usize, mut f: impl FnMut(u32, u32)) {
        for part in &self.parts {
            let range = part.starts[left] as usize..part.starts[left + 1] as usize;
            for (&entry, &pos) in part.entries[range.clone()].iter().zip(&part.positions[range]) {
                f(((entry as u64) >> self.count_bits) as u32, pos);
            }
        }
    }

    /// The left symbol that splits the entries nearest to two halves.
    fn middle_left(&self) -> usize {
        let width = self.parts[0].starts.len() - 1;
        let before = |left: usize| self.parts.iter().map(|p| p.starts[left] as u64).sum::<u64>();
        let half = before(width) / 2;
        let (mut lo, mut hi) = (0, width);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if before(mid) < half { lo = mid + 1 } else { hi = mid }
        }
        lo
    }
}

/// A heap entry: a pair with its count and tie key when pushed.
#[derive(Clone, Copy)]
struct Entry {
    count: u64,
    /// first_seen: position of the first occurrence; hf: `(left << 32) | right`; lexicographic: unused.
    tie: u64,
    pair: u32,
}

/// The merge loop, ready to run (see `train::prepare`).
pub struct Merger<'c> {
    inner: Inner<'c>,
}

enum Inner<'c> {
    Slots(Core<'c, Slots>),
    Compact16(Core<'c, Compact<u16>>),
    Compact32(Core<'c, Compact<u32>>),
}

impl<'c> Merger<'c> {
    pub(super) fn new(
        input: &[(&str, u64)],
        config: &'c TrainConfig,
        vocab: Vocab,
        engine: Engine,
    ) -> Result<Merger<'c>> {
        let size = || (input.len(), input.iter().map(|(w, _)| w.len()).sum::<usize>());
        let inner = match choose_layout(engine, size, config, &vocab) {
            Chosen::Slots => Inner::Slots(Core::new(config, Slots::new(input, &vocab)?, vocab)),
            Chosen::Compact16 => Inner::Compact16(Core::new(config, Compact::<u16>::new(input, &vocab)?, vocab)),
            Chosen::Compact32 => Inner::Compact32(Core::new(config, Compact::<u32>::new(input, &vocab)?, vocab)),
        };
        Ok(Merger { inner })
    }

    /// The merge loop over words that are already sequences of tokens of `vocab` (an existing tokenizer's
    /// encoding of them: see `extend`).
    pub(super) fn from_symbols(
        words: &impl TokenWords,
        config: &'c TrainConfig,
        vocab: Vocab,
        engine: Engine,
        pool: &rayon::ThreadPool,
    ) -> Result<Merger<'c>> {
        // (Averaged over the words that take part, as the layouts hold only those: `encode_words` leaves out words
        // of one token, but a caller's words may have some.)
        let sizes = words.part_sizes(&vocab, pool);
        let all = PartSize::sum(&sizes);
        let inner = match choose_layout(engine, || (all.words, all.units), config, &vocab) {
            Chosen::Slots => Inner::Slots(Core::new(config, Slots::from_symbols(words, all.tokens)?, vocab)),
            Chosen::Compact16 => {
                Inner::Compact16(Core::new(config, Compact::<u16>::from_symbols(words, &sizes, &vocab, pool)?, vocab))
            }
            Chosen::Compact32 => {
                Inner::Compact32(Core::new(config, Compact::<u32>::from_symbols(words, &sizes, &vocab, pool)?, vocab))
            }
        };
        Ok(Merger { inner })
    }

    /// Which layout the words are in: "slots" or "compact".
    pub fn engine(&self) -> &'static str {
        match self.inner {
            Inner::Slots(_) => "slots",
            Inner::Compact16(_) | Inner::Compact32(_) => "compact",
        }
    }

    /// Lets lean runs count pairs on two threads of `pool` (the merge loop itself stays on the calling thread,
    /// where Ctrl-C is seen).
    pub fn with_pool(mut self, pool: &'c rayon::ThreadPool) -> Merger<'c> {
        match &mut self.inner {
            Inner::Slots(core) => core.pool = Some(pool),
            Inner::Compact16(core) => core.pool = Some(pool),
            Inner::Compact32(core) => core.pool = Some(pool),
        }
        self
    }

    /// Sets the merge control: classes no token may straddle, and a veto asked about each pair before it is
    /// merged (see `control`).
    pub fn with_control(mut self, boundaries: Boundaries, veto: Option<Box<dyn Veto + 'c>>) -> Merger<'c> {
        match &mut self.inner {
            Inner::Slots(core) => core.set_control(boundaries, veto),
            Inner::Compact16(core) => core.set_control(boundaries, veto),
            Inner::Compact32(core) => core.set_control(boundaries, veto),
        }
        self
    }

    pub fn run(self, observer: &mut dyn super::Observer) -> Result<super::Trained> {
        match self.inner {
            Inner::Slots(core) => core.run(observer),
            Inner::Compact16(core) => core.run(observer),
            Inner::Compact32(core) => core.run(observer),
        }
    }
}

/// The layout `Merger` puts the words in.
enum Chosen {
    Slots,
    Compact16,
    Compact32,
}

/// `size`: the number of words and the units they hold (computed only for `Engine::Auto`).
fn choose_layout(engine: Engine, size: impl FnOnce() -> (usize, usize), config: &TrainConfig, vocab: &Vocab) -> Chosen {
    let compact = match engine {
        Engine::Slots => false,
        Engine::Compact => true,
        Engine::Auto => {
            let (words, units) = size();
            words > 0 && units / words >= COMPACT_FROM_AVERAGE_UNITS
        }
    };
    if !compact {
        Chosen::Slots
    } else if config.vocab_size.max(vocab.len()) <= u16::MAX_ID as usize + 1 {
        Chosen::Compact16
    } else {
        Chosen::Compact32
    }
}

struct Core<'c, L: Layout> {
    config: &'c TrainConfig,
    vocab: Vocab,
    layout: L,
    pair_index: FxHashMap<u64, u32>,
    pairs: Vec<PairState<L::List>>,
    /// Decoded positions of the pair being merged.
    scratch: Vec<u32>,
    heap: Vec<Entry>,
    merge_counts: Vec<u64>,
    step: u32,
    touched: Vec<u32>,
    /// Threads for recounting (None: the calling thread only).
    pool: Option<&'c rayon::ThreadPool>,
    /// Lean runs: list entries left by the last recount, and added since.
    entries_recounted: u64,
    entries_added: u64,
    /// Lean runs: pairs counted fewer times than this are not kept (1: every pair is kept).
    threshold: u64,
    /// Lean runs: some pair with a count below `threshold` has been left out since the last recount.
    dropped: bool,
    /// Lean runs: pairs created during the current merge; indices of forgotten pairs, for reuse (never
    /// one that is in the heap).
    born: Vec<u32>,
    free: Vec<u32>,
    /// Per merge `(a, b) → x`: for a left neighbour `l`, the indices of `(l, a)` and `(l, x)`; for a right
    /// neighbour `r`, those of `(b, r)` and `(x, r)` — so each merge hashes a pair once per distinct
    /// neighbour, not once per occurrence (perf: the hash lookups were a fifth of the merge loop).
    left_cache: NeighbourCache,
    right_cache: NeighbourCache,
    /// Lean runs: the pairs of a merge's new token, tallied (kept between merges for its memory).
    newborns: Newborns,
    /// `forbid_across`: the classes, and each token's edges (empty when there are none).
    boundaries: Boundaries,
    edges: Vec<Edges>,
    /// The veto, asked about a pair when it reaches the top of the queue; the pairs it refused (by key).
    veto: Option<Box<dyn Veto + 'c>>,
    banned: FxHashSet<u64>,
    /// Which of the tokens the run started with are special (perf: read at every new neighbour of a merge,
    /// 1 byte each here against a cache miss into the 56-byte tokens: 12 % of SuperBPE's second merge loop).
    special: Vec<bool>,
}

/// Lean runs, while a merge makes a new token `x`: its pairs with `x` — all new, one per neighbour token on each
/// side (0: left, `(n, x)`; 1: right, `(x, n)`) — are tallied here rather than created as pairs, and only those
/// counted at least the threshold become pairs when the merge ends (`Core::keep_frequent_newborns`); the others
/// would have been forgotten then (perf: SuperBPE's second stage meets 4.2 M neighbours in 8 000 merges, and
/// 99.7 % of their pairs stay below the threshold; each was a pair created, indexed, given a list and forgotten).
#[derive(Default)]
struct Newborns {
    /// Per side, per neighbour id: the pair's count so far (valid for the neighbours met in this merge).
    counts: [Vec<i64>; 2],
    /// Per side: the neighbours met, in order.
    met: [Vec<u32>; 2],
    /// Per side: each occurrence of a pair with `x`, as (neighbour, position), in position order.
    occurrences: [Vec<(u32, u32)>; 2],
}

impl Newborns {
    /// Starts the tally of the pair with neighbour `n` on `side`.
    #[inline]
    fn meet(&mut self, side: usize, n: u32) {
        self.met[side].push(n);
        self.counts[side][n as usize] = 0;
    }

    /// Tallies an occurrence at `pos`, in a word counted `count` times, of the pair with neighbour `n` on `side`.
    #[inline]
    fn add(&mut self, side: usize, n: u32, pos: u32, count: i64) {
        self.counts[side][n as usize] += count;
        self.occurrences[side].push((n, pos));
    }

    fn fit(&mut self, vocab_len: usize) {
        for counts in &mut self.counts {
            if counts.len() < vocab_len {
                counts.resize(vocab_len, 0);
            }
        }
    }
}

/// Merges of at most this many occurrences tally their new pairs (`Newborns`), whose occurrence buffers then hold at
/// most 16 MB: a lean run is for memory (the first merges of a 3 GB genome have hundreds of millions). (The unit
/// tests, whose merges are small, use a small limit so that both ways are exercised.)
#[cfg(not(test))]
const TALLY_UP_TO: usize = 1 << 20;
#[cfg(test)]
const TALLY_UP_TO: usize = 8;

/// In a `NeighbourCache` during a merge that tallies `Newborns`: the pair with the new token is tallied.
const TALLIED: u32 = NONE - 1;

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

/// Whether the pair `(a, b)` still occurs at `p`.
#[inline(always)]
fn occurs<L: Layout>(layout: &L, p: u32, a: u32, b: u32) -> bool {
    if layout.id(p) != a {
        return false;
    }
    let q = layout.next(p, a);
    q != NONE && layout.id(q) == b
}

impl<'c, L: Layout> Core<'c, L> {
    fn new(config: &'c TrainConfig, layout: L, vocab: Vocab) -> Core<'c, L> {
        let special = vocab.tokens.iter().map(|t| t.special).collect();
        Core {
            config,
            vocab,
            layout,
            pair_index: FxHashMap::default(),
            pairs: Vec::new(),
            scratch: Vec::new(),
            heap: Vec::new(),
            merge_counts: Vec::new(),
            step: 0,
            touched: Vec::new(),
            pool: None,
            entries_recounted: 0,
            entries_added: 0,
            threshold: 1,
            dropped: false,
            born: Vec::new(),
            free: Vec::new(),
            left_cache: NeighbourCache::default(),
            right_cache: NeighbourCache::default(),
            newborns: Newborns::default(),
            boundaries: Boundaries::default(),
            edges: Vec::new(),
            veto: None,
            banned: FxHashSet::default(),
            special,
        }
    }

    fn set_control(&mut self, boundaries: Boundaries, veto: Option<Box<dyn Veto + 'c>>) {
        self.edges = if boundaries.is_empty() {
            Vec::new()
        } else {
            self.vocab.tokens.iter().map(|t| boundaries.edges(&t.bytes)).collect()
        };
        self.boundaries = boundaries;
        self.veto = veto;
    }

    /// Whether a pair is counted: a pair of two base symbols (one unit each) by the rule for the first pairs,
    /// any other (made by merges — during this run, or before it when an existing tokenizer is extended) by
    /// `allowed`.
    fn counts_pair(&self, left: u32, right: u32) -> bool {
        let t = &self.vocab.tokens;
        if t[left as usize].units == 1 && t[right as usize].units == 1 {
            self.initial_ok(left, right)
        } else {
            self.allowed(left, right)
        }
    }

    /// Whether a pair of base symbols is counted.
    fn initial_ok(&self, left: u32, right: u32) -> bool {
        match self.config.tie_break {
            // HF never limits the first merges by length.
            TieBreak::Hf => !self.is_special(left) && !self.is_special(right) && self.controlled_ok(left, right),
            _ => self.allowed(left, right),
        }
    }

    /// The pair index of an initial pair (NONE if it is not counted), through a direct table for small base
    /// vocabularies.
    #[inline]
    fn initial_pair(&mut self, table: &mut [u32], base: usize, left: u32, right: u32) -> u32 {
        const UNKNOWN: u32 = NONE - 1;
        let slot = if table.is_empty() { None } else { Some(left as usize * base + right as usize) };
        if let Some(s) = slot
            && table[s] != UNKNOWN
        {
            return table[s];
        }
        let k = if !self.counts_pair(left, right) {
            NONE
        } else if slot.is_some() {
            self.pair_or_insert(left, right)
        } else {
            match self.pair_index.get(&key(left, right)) {
                Some(&k) => k,
                None => self.pair_or_insert(left, right),
            }
        };
        if let Some(s) = slot {
            table[s] = k;
        }
        k
    }

    /// Counts the pairs of the words and builds the occurrence lists, each allocated at its final size (a
    /// first pass counts them): done when the merge loop starts, after the caller has freed the word counts.
    fn count_initial_pairs(&mut self) {
        let base = self.vocab.len();
        let mut table = if base <= DIRECT_TABLE_LIMIT { vec![NONE - 1; base * base] } else { Vec::new() };
        let n = self.layout.positions() as u32;
        let mut sizes: Vec<u32> = Vec::new();
        for pass in 0..2 {
            for pos in 0..n {
                let left = self.layout.id(pos);
                if left == NONE {
                    continue;
                }
                let next = self.layout.next(pos, left);
                if next == NONE {
                    continue;
                }
                let right = self.layout.id(next);
                let k = self.initial_pair(&mut table, base, left, right);
                if k == NONE {
                    continue;
                }
                let state = &mut self.pairs[k as usize];
                if pass == 0 {
                    state.count += self.layout.count(pos);
                    sizes.resize(self.pairs.len(), 0);
                    sizes[k as usize] += 1;
                } else {
                    state.occurrences.add(pos);
                }
            }
            if pass == 0 {
                for (state, &size) in self.pairs.iter_mut().zip(&sizes) {
                    state.occurrences = L::List::with_capacity(size as usize);
                }
            }
        }
        drop(table);
        for k in 0..self.pairs.len() as u32 {
            self.push_entry(k);
        }
    }

    fn run(mut self, observer: &mut dyn super::Observer) -> Result<super::Trained> {
        if L::LEAN {
            self.recount();
        } else {
            self.count_initial_pairs();
        }
        let planned = self.config.vocab_size.saturating_sub(self.vocab.len()) as u64;
        observer.merges_planned(planned);
        let stop = loop {
            if self.vocab.len() >= self.config.vocab_size {
                break StopReason::Done;
            }
            let Some(top) = self.pop() else {
                if self.dropped {
                    self.recount(); // the pairs left out may still be merged
                    continue;
                }
                break StopReason::NoPairsLeft;
            };
            let live = self.pairs[top.pair as usize].count;
            if live <= 0 {
                continue;
            }
            // A tie key only matters against an equal count: when every other entry counts less (entries
            // never count less than their pair), the first occurrence need not be looked up (perf: the scan
            // reads symbols far apart, a cache miss per stale entry).
            let tie_matters = self.heap.first().is_some_and(|next| next.count >= top.count);
            let live_tie = match self.config.tie_break {
                TieBreak::FirstSeen if live as u64 == top.count && !tie_matters => top.tie,
                TieBreak::FirstSeen => match self.first_occurrence(top.pair) {
                    Some(pos) => pos as u64,
                    None => continue,
                },
                TieBreak::Hf => {
                    let state = &self.pairs[top.pair as usize];
                    key(state.left, state.right) // a lean run may have reused the index for another pair
                }
                TieBreak::Lexicographic => top.tie,
            };
            if live as u64 != top.count || live_tie != top.tie {
                self.push(Entry { count: live as u64, tie: live_tie, pair: top.pair });
                continue;
            }
            if self.dropped && top.count < self.threshold {
                self.recount(); // a pair left out might be as frequent
                continue;
            }
            if top.count < self.config.min_frequency {
                break StopReason::MinFrequency;
            }
            if self.vetoed(top.pair)? {
                continue;
            }
            self.merge(top.pair, top.count);
            observer.merge_done(self.merge_counts.len() as u64)?;
        };
        let vetoed = self.banned.len() as u64;
        Ok(super::Trained { vocab: self.vocab, merge_counts: self.merge_counts, stop, vetoed })
    }

    /// Merges every occurrence of a pair, left to right within each word.
    fn merge(&mut self, k: u32, count: u64) {
        self.step += 1;
        let (a, b) = (self.pairs[k as usize].left, self.pairs[k as usize].right);
        let known = self.vocab.len();
        let x = self.vocab.push_merge(a, b);
        let recreated = (x as usize) < known;
        self.layout.token_added(x);
        if !self.edges.is_empty() && !recreated {
            self.edges.push(self.boundaries.edges(&self.vocab.tokens[x as usize].bytes));
        }
        self.merge_counts.push(count);
        let state = &mut self.pairs[k as usize];
        if !state.sorted {
            state.occurrences.sort_dedup();
        }
        let list = std::mem::take(&mut state.occurrences);
        let mut scratch = std::mem::take(&mut self.scratch);
        let occurrences = list.positions(&mut scratch);
        let mut left_cache = std::mem::take(&mut self.left_cache);
        let mut right_cache = std::mem::take(&mut self.right_cache);
        left_cache.fit(self.vocab.len());
        right_cache.fit(self.vocab.len());
        // (A token made before may have pairs already: those are looked up and created one by one. So are the
        // pairs of a merge with more occurrences than the tally holds: they have few neighbours for so many.)
        let mut newborns = (L::LEAN && !recreated && occurrences.len() <= TALLY_UP_TO).then(|| {
            let mut newborns = std::mem::take(&mut self.newborns);
            newborns.fit(self.vocab.len());
            newborns
        });
        for (i, &p) in occurrences.iter().enumerate() {
            if let Some(&ahead) = occurrences.get(i + PREFETCH_DISTANCE) {
                self.layout.prefetch(ahead);
            }
            if let Some(&ahead) = occurrences.get(i + PREFETCH_DISTANCE / 2) {
                self.layout.prefetch_more(ahead);
            }
            // Gone since it was recorded (merged away, or overlapped by the previous occurrence: "aaa").
            if self.layout.id(p) != a {
                continue;
            }
            let q = self.layout.next(p, a);
            if q == NONE || self.layout.id(q) != b {
                continue;
            }
            let count = self.layout.count(p);
            let (l, r) = (self.layout.prev(p), self.layout.next(q, b));
            if l != NONE {
                let left = self.layout.id(l);
                let (gone, made) = ((left, a), (left, x));
                match &mut newborns {
                    Some(newborns) => {
                        self.move_to_new(newborns, 0, &mut left_cache, &right_cache, gone, made, l, count)
                    }
                    None => self.move_neighbour_pair(&mut left_cache, left, gone, made, l, count),
                }
            }
            if r != NONE {
                let right = self.layout.id(r);
                let (gone, made) = ((b, right), (x, right));
                match &mut newborns {
                    Some(newborns) => {
                        self.move_to_new(newborns, 1, &mut right_cache, &left_cache, gone, made, p, count)
                    }
                    None => self.move_neighbour_pair(&mut right_cache, right, gone, made, p, count),
                }
            }
            self.layout.merge(p, a, q, b, r, x);
        }
        if let Some(mut newborns) = newborns {
            self.keep_frequent_newborns(&mut newborns, [&mut left_cache, &mut right_cache], x);
            self.newborns = newborns;
        }
        // A lean run hands big freed lists back to the OS at once (mimalloc would keep them a while, and
        // RSS would climb by tens of MB through the first merges of a genome while the lists shrink).
        let release = L::LEAN && list.heap_bytes() >= RELEASE_FROM_BYTES;
        drop(list);
        scratch.clear();
        self.scratch = scratch; // kept: allocating it afresh for every merge leaves the allocator fragmented
        self.left_cache = left_cache;
        self.right_cache = right_cache;
        // Left-to-right merging leaves no adjacent (a, b).
        let state = &mut self.pairs[k as usize];
        state.count = 0;
        state.cursor = Default::default();
        state.sorted = true;
        if L::LEAN {
            self.forget_rare_newborns();
        }
        for k in std::mem::take(&mut self.touched) {
            if self.pairs[k as usize].count > 0 {
                self.push_entry(k);
            }
        }
        if release {
            crate::release_freed_memory();
        }
        if recreated && self.dropped {
            // Pairs with the recreated token gained occurrences; any of them may have been forgotten before
            // with a count that is now incomplete.
            self.recount();
        } else if L::LEAN && self.entries_added > self.entries_recounted.max(RECOUNT_FROM_ADDED) {
            self.recount(); // the lists have doubled: drop their stale entries
        }
    }

    /// Lean runs: forgets the pairs created by this merge that are below the threshold (they stay below it,
    /// see the notes). They were never in the heap, so their indices can be reused.
    fn forget_rare_newborns(&mut self) {
        for k in std::mem::take(&mut self.born) {
            let state = &mut self.pairs[k as usize];
            if state.count as u64 >= self.threshold && state.count > 0 {
                continue;
            }
            if state.count > 0 {
                self.dropped = true;
            }
            let (left, right) = (state.left, state.right);
            state.count = 0;
            state.occurrences = Default::default();
            self.pair_index.remove(&key(left, right));
            self.free.push(k);
        }
    }

    /// Lean runs: recounts every pair from the symbols, sets a new threshold, and keeps the pairs at or above
    /// it — their lists allocated at their exact size, the heap rebuilt.
    fn recount(&mut self) {
        self.pairs = Vec::new();
        self.pair_index = FxHashMap::default();
        self.heap = Vec::new();
        self.free.clear();
        self.born.clear();
        self.touched.clear();
        crate::release_freed_memory();
        // Pass 1: count, occurrences, list size of every pair that may be counted — in a direct table while
        // the vocabulary is small (a hash probe per position of a genome mispredicts), else sorted by left
        // symbol. A large layout is counted in two halves on two threads, split between two words.
        let width = self.vocab.len();
        let direct = width <= RECOUNT_TABLE_LIMIT;
        let n = self.layout.positions() as u32;
        // (A second table costs memory: only split when it is small beside the layout.)
        let second_table = width * width * std::mem::size_of::<Tally>();
        let split = match (direct, self.pool) {
            (true, Some(pool)) if pool.current_num_threads() > 1 && second_table <= n as usize / 8 => {
                self.layout.split_point()
            }
            _ => None,
        };
        // Then the threshold: an eighth of the best count, or lower so that enough pairs are kept.
        let mut by_left = None;
        let (mut tallies, counted) = if direct {
            let mut table = match (split, self.pool) {
                (Some(s), Some(pool)) => {
                    let (head, tail) = pool.join(|| self.tally_direct(0, s, width), || self.tally_direct(s, n, width));
                    let mut table = head;
                    for (a, b) in table.iter_mut().zip(&tail) {
                        *a = join_tallies::<L::List>(*a, *b);
                    }
                    table
                }
                _ => self.tally_direct(0, n, width),
            };
            let counted = table.iter_mut().enumerate().filter(|(_, t)| t.n != 0 && t.n != u32::MAX);
            let mut tallies: Vec<(u64, Tally)> =
                counted.map(|(i, t)| (key((i / width) as u32, (i % width) as u32), *t)).collect();
            drop(table);
            self.threshold = self.new_threshold(tallies.iter().map(|t| t.1.count).collect());
            let counted = tallies.len();
            tallies.retain(|t| t.1.count >= self.threshold);
            (tallies, counted)
        } else {
            // The pairs sorted by left symbol (with their positions, for pass 2), then only (key, count) per pair
            // — late in a run there can be millions of pairs.
            let sorted = self.sort_by_left(width);
            let blocks = self.tally_by_left(width, &sorted);
            let counted = blocks.iter().map(Vec::len).sum();
            let mut counts = Vec::with_capacity(counted);
            counts.extend(blocks.iter().flatten().map(|t| t.1));
            self.threshold = self.new_threshold(counts);
            // (Their occurrences and list sizes are found when the lists are filled.)
            let kept = blocks.into_iter().flatten().filter(|t| t.1 >= self.threshold);
            let tallies = kept.map(|(k, count)| (k, Tally { count, ..Tally::default() }));
            by_left = Some(sorted);
            (tallies.collect::<Vec<_>>(), counted)
        };
        self.dropped = tallies.len() < counted;
        tallies.sort_unstable_by_key(|t| t.0); // a fixed order (the heap's order does not depend on it)
        tallies.shrink_to_fit();
        self.pairs.reserve_exact(tallies.len());
        self.entries_recounted = tallies.iter().map(|t| t.1.n as u64).sum();
        self.entries_added = 0;
        let mut tail_costs: Vec<u32> = Vec::with_capacity(if split.is_some() { tallies.len() } else { 0 });
        for (k, tally) in tallies {
            if split.is_some() {
                tail_costs.push(tally.tail_cost);
            }
            let index = self.pairs.len() as u32;
            self.pair_index.insert(k, index);
            self.pairs.push(PairState {
                left: (k >> 32) as u32,
                right: k as u32,
                count: tally.count.min(i64::MAX as u64) as i64,
                occurrences: L::List::with_capacity(tally.cost),
                cursor: Default::default(),
                stamp: u32::MAX,
                sorted: true,
            });
        }
        match by_left {
            None => self.fill_lists_direct(width, split, tail_costs),
            Some(sorted) => {
                self.entries_recounted = self.fill_lists_by_left(width, &sorted);
            }
        }
        // The tables are gone: give their memory back now (the pool threads' too, when they counted), or it
        // stays resident through the rest of the run.
        if let (Some(_), Some(pool)) = (self.layout.split_point(), self.pool) {
            pool.broadcast(|_| crate::release_freed_memory());
        }
        crate::release_freed_memory();
        for k in 0..self.pairs.len() as u32 {
            self.push_entry(k);
        }
    }

    /// Pass 2 of a recount in a direct table: the positions of the kept pairs, looked up by index; when
    /// `split`, the second half's lists are built on their own (at `tail_costs`) and appended.
    fn fill_lists_direct(&mut self, width: usize, split: Option<u32>, tail_costs: Vec<u32>) {
        let n = self.layout.positions() as u32;
        let mut indices: Vec<u32> = vec![NONE; width * width];
        for (k, state) in self.pairs.iter().enumerate() {
            indices[state.left as usize * width + state.right as usize] = k as u32;
        }
        let (layout, pairs) = (&self.layout, &mut self.pairs);
        let lookup = |left: u32, right: u32| indices[left as usize * width + right as usize];
        match (split, self.pool) {
            (Some(s), Some(pool)) => {
                let mut tails: Vec<L::List> = tail_costs.iter().map(|&c| L::List::with_capacity(c as usize)).collect();
                drop(tail_costs);
                pool.join(
                    || {
                        layout.for_each_pair_in(0, s, |pos, left, right| {
                            let k = lookup(left, right);
                            if k != NONE {
                                pairs[k as usize].occurrences.add(pos);
                            }
                        })
                    },
                    || {
                        layout.for_each_pair_in(s, n, |pos, left, right| {
                            let k = lookup(left, right);
                            if k != NONE {
                                tails[k as usize].add(pos);
                            }
                        })
                    },
                );
                for (state, tail) in pairs.iter_mut().zip(tails) {
                    state.occurrences.append(tail);
                }
            }
            _ => layout.for_each_pair(|pos, left, right| {
                let k = lookup(left, right);
                if k != NONE {
                    pairs[k as usize].occurrences.add(pos);
                }
            }),
        }
    }

    /// Pass 2 of a recount over a wide vocabulary: the positions of the kept pairs, from pass 1's entries;
    /// returns how many there are. A left symbol's kept pairs are consecutive (the pairs are in key order) and
    /// its entries are in position order (one part after the other), so the pair of an entry is found through
    /// a table by right symbol that stays in cache, and each list is sized by a first scan of the entries,
    /// then written in order. The left symbols are split in two halves for two threads.
    fn fill_lists_by_left(&mut self, width: usize, sorted: &SortedPairs) -> u64 {
        let mut first = vec![0u32; width + 1];
        for state in &self.pairs {
            first[state.left as usize + 1] += 1;
        }
        for i in 1..=width {
            first[i] += first[i - 1];
        }
        let fill = |pairs: &mut [PairState<L::List>], base: usize, lefts: std::ops::Range<usize>| {
            // Per right symbol: the kept pair's index in `pairs` (or NONE), its last position and list size.
            let mut table = vec![(NONE, 0u32, 0usize); width];
            let mut entries = 0u64;
            for left in lefts {
                let kept = first[left] as usize - base..first[left + 1] as usize - base;
                if kept.is_empty() {
                    continue;
                }
                for k in kept.clone() {
                    table[pairs[k].right as usize] = (k as u32, 0, 0);
                }
                sorted.for_each_entry(left, |right, pos| {
                    let (k, last, cost) = &mut table[right as usize];
                    if *k != NONE {
                        *cost += L::List::cost(std::mem::replace(last, pos), pos);
                        entries += 1;
                    }
                });
                for k in kept.clone() {
                    pairs[k].occurrences = L::List::with_capacity(table[pairs[k].right as usize].2);
                }
                sorted.for_each_entry(left, |right, pos| {
                    let k = table[right as usize].0;
                    if k != NONE {
                        pairs[k as usize].occurrences.add(pos);
                    }
                });
                for k in kept {
                    table[pairs[k].right as usize].0 = NONE;
                }
            }
            entries
        };
        match self.pool {
            Some(pool) if sorted.parts.len() > 1 => {
                let middle = sorted.middle_left();
                let (head, tail) = self.pairs.split_at_mut(first[middle] as usize);
                let (a, b) =
                    pool.join(|| fill(head, 0, 0..middle), || fill(tail, first[middle] as usize, middle..width));
                a + b
            }
            _ => fill(&mut self.pairs, 0, 0..width),
        }
    }

    /// Pass 1 of a recount over the pairs whose left symbol starts in `from..to`, in a direct table.
    fn tally_direct(&self, from: u32, to: u32, width: usize) -> Vec<Tally> {
        let mut table = vec![Tally::default(); width * width];
        let layout = &self.layout;
        layout.for_each_pair_in(from, to, |pos, left, right| {
            let tally = &mut table[left as usize * width + right as usize];
            if tally.n == 0 {
                if !self.counts_pair(left, right) {
                    tally.n = u32::MAX;
                    return;
                }
                tally.first = pos;
            }
            if tally.n != u32::MAX {
                tally.count = tally.count.saturating_add(layout.count(pos) as u64);
                tally.cost += L::List::cost(tally.last, pos);
                tally.last = pos;
                tally.n += 1;
            }
        });
        table
    }

    /// The threshold of a recount that counted pairs `counts` times: an eighth of the best count, or lower so
    /// that at least `KEPT_PER_MERGE` pairs per merge still to come are kept.
    fn new_threshold(&self, mut counts: Vec<u64>) -> u64 {
        let remaining = self.config.vocab_size.saturating_sub(self.vocab.len()).max(1);
        let wanted = remaining.saturating_mul(KEPT_PER_MERGE);
        let best = counts.iter().copied().max().unwrap_or(0);
        let kth = if counts.len() > wanted {
            let at = counts.len() - wanted;
            *counts.select_nth_unstable(at).1
        } else {
            counts.iter().copied().min().unwrap_or(1) // fewer pairs than wanted: keep them all
        };
        (best / THRESHOLD_DIVISOR).min(kth).max(1)
    }

    /// Pass 1 of a recount over a wide vocabulary, part 1: the pairs sorted by left symbol (see `SortedPairs`),
    /// the two halves of a large layout on two threads.
    fn sort_by_left(&self, width: usize) -> SortedPairs {
        let right_bits = usize::BITS - width.saturating_sub(1).leading_zeros();
        let count_bits = u32::BITS.saturating_sub(right_bits);
        // A count at or above `mask` is stored as `mask`, the count itself summed in `big` (none fits when
        // the right symbol takes all 32 bits).
        let mask = ((1u64 << count_bits) - 1) as u32;
        let sort = |from: u32, to: u32| {
            let layout = &self.layout;
            let mut starts = vec![0u32; width + 1];
            layout.for_each_pair_in(from, to, |_, left, _| starts[left as usize + 1] += 1);
            for i in 1..=width {
                starts[i] += starts[i - 1];
            }
            let mut fill = starts[..width].to_vec();
            let mut entries = vec![0u32; starts[width] as usize];
            let mut positions = vec![0u32; starts[width] as usize];
            let mut big: FxHashMap<u64, u64> = FxHashMap::default();
            layout.for_each_pair_in(from, to, |pos, left, right| {
                let count = layout.count(pos) as u64;
                let field = if count < mask as u64 { count as u32 } else { mask };
                let at = &mut fill[left as usize];
                entries[*at as usize] = ((right as u64) << count_bits) as u32 | field;
                positions[*at as usize] = pos;
                *at += 1;
                if field == mask {
                    let total = big.entry(key(left, right)).or_default();
                    *total = total.saturating_add(count);
                }
            });
            SortedPart { starts, entries, positions, big }
        };
        let n = self.layout.positions() as u32;
        let parts = match (self.layout.split_point(), self.pool) {
            (Some(s), Some(pool)) if pool.current_num_threads() > 1 => {
                let (head, tail) = pool.join(|| sort(0, s), || sort(s, n));
                vec![head, tail]
            }
            _ => vec![sort(0, n)],
        };
        SortedPairs { parts, count_bits, mask }
    }

    /// Pass 1 of a recount over a wide vocabulary, part 2: (key, count) of every pair counted, in blocks of
    /// `TALLY_BLOCK` (a vector that grew by doubling would touch twice the memory: late in a run there are
    /// millions of pairs). Each left symbol's entries are tallied in a dense table by right symbol, which stays
    /// in cache (perf: a hash probe per position was 1.35 s of the 2.3 s recount of SuperBPE's 25.7 M symbols,
    /// 2.6 M distinct pairs). The left symbols are independent: two halves are tallied on two threads.
    fn tally_by_left(&self, width: usize, sorted: &SortedPairs) -> Vec<Vec<(u64, u64)>> {
        let tally = |from: usize, to: usize| {
            // Per right symbol: count and occurrences (u32::MAX: not counted).
            let mut table = vec![(0u64, 0u32); width];
            let mut seen: Vec<u32> = Vec::new();
            let mut blocks: Vec<Vec<(u64, u64)>> = Vec::new();
            for left in from..to {
                sorted.for_each_packed(left, |right, count| {
                    let (total, n) = &mut table[right as usize];
                    if *n == 0 {
                        seen.push(right);
                        if !self.counts_pair(left as u32, right) {
                            *n = u32::MAX;
                        }
                    }
                    if *n != u32::MAX {
                        *total = total.saturating_add(count);
                        *n += 1;
                    }
                });
                for right in seen.drain(..) {
                    let (count, n) = std::mem::take(&mut table[right as usize]);
                    if n == u32::MAX {
                        continue;
                    }
                    if blocks.last().is_none_or(|b| b.len() == TALLY_BLOCK) {
                        blocks.push(Vec::with_capacity(TALLY_BLOCK));
                    }
                    blocks.last_mut().expect("a block").push((key(left as u32, right), count));
                }
            }
            blocks
        };
        let mut blocks = match self.pool {
            Some(pool) if sorted.parts.len() > 1 => {
                let middle = sorted.middle_left();
                let (mut head, tail) = pool.join(|| tally(0, middle), || tally(middle, width));
                head.extend(tail);
                head
            }
            _ => tally(0, width),
        };
        for big in sorted.parts.iter().map(|p| &p.big).filter(|big| !big.is_empty()) {
            for (k, count) in blocks.iter_mut().flatten() {
                if let Some(&extra) = big.get(k) {
                    *count = count.saturating_add(extra);
                }
            }
        }
        blocks
    }

    /// `move_neighbour_pair` in a lean run's merge that makes a new token `x` (see `Newborns`): the neighbour on
    /// `side` (0: left, `made` = (n, x); 1: right, `made` = (x, n)) moves its occurrence at `at` from `gone` to
    /// `made`, which is tallied. A `gone` pair that starts with `x` is one this merge made with the right
    /// neighbour of an earlier occurrence ("abab": `(x, a)`), found in the tally through `other` (the other side's
    /// cache). (No `gone` pair ends with `x`: occurrences are merged left to right, so the symbol after one has not
    /// been merged yet.)
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn move_to_new(
        &mut self,
        newborns: &mut Newborns,
        side: usize,
        cache: &mut NeighbourCache,
        other: &NeighbourCache,
        gone: (u32, u32),
        made: (u32, u32),
        at: u32,
        count: i64,
    ) {
        let (neighbour, x) = if side == 0 { made } else { (made.1, made.0) };
        let (gone_pair, tallied) = match cache.get(neighbour, self.step) {
            Some(pairs) => pairs,
            None => {
                let gone_pair = if gone.0 == x { NONE } else { self.pair_if_counted(gone.0, gone.1) };
                let tallied = if self.allowed(made.0, made.1) { TALLIED } else { NONE };
                cache.set(neighbour, self.step, (gone_pair, tallied));
                if tallied == TALLIED {
                    newborns.meet(side, neighbour);
                }
                (gone_pair, tallied)
            }
        };
        if gone.0 == x {
            if other.get(gone.1, self.step).is_some_and(|(_, t)| t == TALLIED) {
                newborns.counts[1][gone.1 as usize] -= count;
            }
        } else {
            self.remove_occurrence_of(gone_pair, count);
        }
        if tallied == TALLIED {
            newborns.add(side, neighbour, at, count);
        }
    }

    /// Ends a merge that tallied its pairs with the new token `x` in `newborns`: those counted at least the
    /// threshold become pairs, with their occurrences (in position order on each side), and are pushed to
    /// the queue; the others are left out, as `forget_rare_newborns` would have.
    fn keep_frequent_newborns(&mut self, newborns: &mut Newborns, caches: [&mut NeighbourCache; 2], x: u32) {
        for (side, cache) in caches.into_iter().enumerate() {
            for &n in &newborns.met[side] {
                let count = newborns.counts[side][n as usize];
                let mut kept = NONE;
                if count > 0 && count as u64 >= self.threshold {
                    let (left, right) = if side == 0 { (n, x) } else { (x, n) };
                    kept = self.pair_or_insert(left, right);
                    let state = &mut self.pairs[kept as usize];
                    state.count = count;
                    state.stamp = self.step;
                    self.touched.push(kept);
                } else if count > 0 {
                    self.dropped = true;
                }
                cache.set(n, self.step, (NONE, kept)); // (the merge is done with its `gone` pairs)
            }
            for &(n, pos) in &newborns.occurrences[side] {
                let k = cache.get(n, self.step).map_or(NONE, |(_, kept)| kept);
                if k != NONE {
                    self.pairs[k as usize].occurrences.add(pos);
                    self.entries_added += 1;
                }
            }
            newborns.met[side].clear();
            newborns.occurrences[side].clear();
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

    /// Special tokens (the unknown token among them) and unused ids of loaded vocabularies never merge.
    fn is_special(&self, id: u32) -> bool {
        // (Tokens made by merges, after `special`'s end, never are.)
        self.special.get(id as usize).is_some_and(|&s| s)
    }

    /// Whether a pair may be counted: never with a special token, within `max_token_length` by the tie
    /// mode's rule, and not refused by the merge control.
    fn allowed(&self, left: u32, right: u32) -> bool {
        if self.is_special(left) || self.is_special(right) || !self.controlled_ok(left, right) {
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

    /// The merge control's part of `allowed`: no class boundary at the junction, not vetoed before.
    #[inline]
    fn controlled_ok(&self, left: u32, right: u32) -> bool {
        if !self.edges.is_empty() && !Boundaries::allows(&self.edges[left as usize], &self.edges[right as usize]) {
            return false;
        }
        self.banned.is_empty() || !self.banned.contains(&key(left, right))
    }

    /// Asks the veto about pair `k`, about to be merged. A refused pair is forgotten and never counted again
    /// (its stale heap entries find it with count 0).
    fn vetoed(&mut self, k: u32) -> Result<bool> {
        let Some(veto) = self.veto.as_mut() else {
            return Ok(false);
        };
        let state = &self.pairs[k as usize];
        let (left, right) = (state.left, state.right);
        let t = &self.vocab.tokens;
        if !veto.refuses(&t[left as usize].bytes, &t[right as usize].bytes)? {
            return Ok(false);
        }
        self.banned.insert(key(left, right));
        self.pair_index.remove(&key(left, right));
        let state = &mut self.pairs[k as usize];
        state.count = 0;
        state.occurrences = Default::default();
        state.cursor = Default::default();
        state.sorted = true;
        Ok(true)
    }

    /// The index of pair `(left, right)`, created if it is new.
    fn pair_or_insert(&mut self, left: u32, right: u32) -> u32 {
        let next_index = self.free.last().copied().unwrap_or(self.pairs.len() as u32);
        let k = *self.pair_index.entry(key(left, right)).or_insert(next_index);
        if k == next_index {
            let state = PairState {
                left,
                right,
                count: 0,
                occurrences: Default::default(),
                cursor: Default::default(),
                stamp: u32::MAX,
                sorted: true,
            };
            if self.free.pop().is_some() {
                self.pairs[k as usize] = state;
            } else {
                self.pairs.push(state);
            }
            if L::LEAN {
                self.born.push(k);
            }
        }
        k
    }

    /// The index of pair `(left, right)`, or NONE if it was never counted (max_token_length, special tokens).
    fn pair_if_counted(&self, left: u32, right: u32) -> u32 {
        self.pair_index.get(&key(left, right)).copied().unwrap_or(NONE)
    }

    fn add_occurrence_of(&mut self, k: u32, pos: u32, count: i64) {
        let state = &mut self.pairs[k as usize];
        state.count += count;
        if L::LEAN {
            self.entries_added += 1;
        }
        if state.occurrences.last_entry().is_some_and(|last| last > pos) {
            state.sorted = false;
        }
        state.occurrences.add(pos);
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
            state.occurrences = Default::default();
            state.cursor = Default::default();
            state.sorted = true;
        }
    }

    /// `first_seen` tie key: the position of the pair's first occurrence that is still there.
    fn first_occurrence(&mut self, k: u32) -> Option<u32> {
        let state = &mut self.pairs[k as usize];
        if !state.sorted {
            state.occurrences.sort_dedup();
            state.sorted = true;
            state.cursor = Default::default();
        }
        let (a, b) = (state.left, state.right);
        let mut cursor = state.cursor;
        // A second cursor runs ahead to prefetch the symbols the scan is about to check.
        let mut front = cursor;
        for _ in 0..super::occurrences::LOOKAHEAD / 2 {
            match state.occurrences.next(front) {
                Some((_, after)) => front = after,
                None => break,
            }
        }
        while let Some((p, after)) = state.occurrences.next(cursor) {
            if let Some((q, next_front)) = state.occurrences.next(front) {
                self.layout.prefetch(q);
                front = next_front;
            }
            if occurs(&self.layout, p, a, b) {
                state.cursor = cursor;
                return Some(p);
            }
            cursor = after;
        }
        state.cursor = cursor;
        None
    }

    /// Pushes a heap entry for pair `k`. The `first_seen` tie key pushed is the list's first entry not known
    /// to be stale — a lower bound of the true first occurrence, which is only checked (a scan that reads
    /// the symbols, cache misses) when the entry reaches the top: like a count, a key that ranks too high is
    /// corrected when popped, and the first entry that is up to date is still the true best (perf: checking
    /// every touched pair at every merge was a third of a genome's merge loop).
    fn push_entry(&mut self, k: u32) {
        let state = &mut self.pairs[k as usize];
        let count = state.count as u64;
        let tie = match self.config.tie_break {
            TieBreak::Hf => key(state.left, state.right),
            TieBreak::Lexicographic => 0,
            TieBreak::FirstSeen => {
                if !state.sorted {
                    state.occurrences.sort_dedup();
                    state.sorted = true;
                    state.cursor = Default::default();
                }
                match state.occurrences.next(state.cursor) {
                    Some((pos, _)) => pos as u64,
                    None => return,
                }
            }
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

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BTreeMap;

    use super::*;
    use crate::vocab::Mode;

    /// The pairs a recount keeps — (left, right, count, positions) each — and its threshold.
    type Kept = (Vec<(u32, u32, u64, Vec<u32>)>, u64);

    /// What a recount should keep, counted the plain way: (left, right, count, positions) of every pair at or
    /// above the threshold, and the threshold.
    fn recount_by_hand<L: Layout>(core: &Core<L>) -> Kept {
        let mut pairs: BTreeMap<(u32, u32), (u64, Vec<u32>)> = BTreeMap::new();
        core.layout.for_each_pair(|pos, left, right| {
            if core.counts_pair(left, right) {
                let (count, positions) = pairs.entry((left, right)).or_default();
                *count = count.saturating_add(core.layout.count(pos) as u64);
                positions.push(pos);
            }
        });
        let mut counts: Vec<u64> = pairs.values().map(|p| p.0).collect();
        counts.sort_unstable();
        let wanted = (core.config.vocab_size - core.vocab.len()).max(1) * KEPT_PER_MERGE;
        let best = counts.last().copied().unwrap_or(0);
        let kth =
            if counts.len() > wanted { counts[counts.len() - wanted] } else { counts.first().copied().unwrap_or(1) };
        let threshold = (best / THRESHOLD_DIVISOR).min(kth).max(1);
        let kept = pairs.into_iter().filter(|p| p.1.0 >= threshold);
        let kept = kept.map(|((left, right), (count, positions))| (left, right, count.min(i64::MAX as u64), positions));
        (kept.collect(), threshold)
    }

    fn recounted<L: Layout>(core: &Core<L>) -> Kept {
        let mut scratch = Vec::new();
        let pairs = core.pairs.iter().map(|s| {
            let positions = s.occurrences.positions(&mut scratch).to_vec();
            (s.left, s.right, s.count as u64, positions)
        });
        (pairs.collect(), core.threshold)
    }

    #[test]
    fn recounts_equal_a_plain_count_in_both_ways_with_huge_counts() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        // Alphabets below and above RECOUNT_TABLE_LIMIT ids (a direct table, or the sort by left symbol); counts
        // around what fits beside the right symbol in the sort's entries (2^28 - 1 with 16 ids) and far above.
        for (letters, seed) in [("abcde", 1u64), ("abcdefghijklmno", 2), ("abcdefghijklmnopqrstuvwxyz", 3)] {
            let letters: Vec<char> = letters.chars().collect();
            let mut x = seed;
            let mut next = || {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) as usize
            };
            let huge = [(1u64 << 26) - 1, 1 << 26, (1 << 27) - 1, 1 << 27, (1 << 28) - 1, 1 << 28, 1 << 40];
            let words: Vec<(String, u64)> = (0..60)
                .map(|i| {
                    let word: String = (0..40 + next() % 100).map(|_| letters[next() % letters.len()]).collect();
                    (word, if i % 7 == 3 { huge[i / 7 % huge.len()] } else { 1 + next() as u64 % 5 })
                })
                .collect();
            let words: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
            for pooled in [false, true] {
                let config = super::super::TrainConfig::for_test(400, Mode::Char);
                let merger = super::super::prepare_with(&words, &config, Engine::Compact).unwrap();
                let merger = if pooled { merger.with_pool(&pool) } else { merger };
                let Inner::Compact16(mut core) = merger.inner else { panic!("a compact layout") };
                // Some merges first (symbols of several units), then recounts at several widths.
                core.recount();
                assert!(recounted(&core) == recount_by_hand(&core), "{letters:?} {pooled}");
                for _ in 0..12 {
                    let best = (0..core.pairs.len()).max_by_key(|&k| (core.pairs[k].count, Reverse(k))).unwrap();
                    core.merge(best as u32, core.pairs[best].count as u64);
                    core.recount();
                    assert!(recounted(&core) == recount_by_hand(&core), "{letters:?} {pooled}");
                }
            }
        }
    }
}
