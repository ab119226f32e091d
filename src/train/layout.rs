//! Where the merge loop keeps the symbols of the words, and how merging one occurrence changes them.
//!
//! Two layouts, one interface (`Layout`), so the merge loop — and with it every tie rule — is one piece of
//! code whichever is used, and both give the same merges:
//!
//! - `Slots`: one 24-byte slot per unit position (symbol id, next and previous symbol, the word's count).
//!   Best for ordinary text — many short words, where a merge's cache misses are one slot each.
//! - `Compact`: one symbol id per unit position, 2 bytes (vocabularies up to 65 535 ids) or 4 — for corpora
//!   of few, long words (genomes: a chromosome is one word; SuperBPE's stretches, whose units are the first
//!   stage's tokens). There are no links: a symbol's length in units is its token's (but for a token made
//!   again from other parts, see `Compact`), so the next symbol starts at `p + units(id)`, and the previous
//!   one is found from the id written again at each symbol's *last* position: `p - units(ids[p - 1])`.
//!   Positions inside a symbol hold `DEAD`, and so does one separator position before and after each word. A
//!   word's count is looked up through a table of word ends (skipped when all counts are equal, as for genome
//!   chunks). With 4-byte occurrence lists that are compacted when mostly stale, training holds ~6-8 bytes per
//!   base instead of ~70.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::occurrences::{DeltaList, OccurrenceList};
use crate::error::{Error, Result};
use crate::vocab::{Mode, Vocab};

pub(super) const NONE: u32 = u32::MAX;

/// The symbols of all words, laid end to end (in order of first appearance) by unit position.
pub(super) trait Layout: Sync {
    /// Whether the merge loop saves memory over time (the compact layout exists for memory): it compacts
    /// occurrence lists that are mostly stale, and keeps only the pairs frequent enough to matter soon.
    const LEAN: bool;
    /// How pairs keep their occurrences.
    type List: OccurrenceList;
    /// Number of positions.
    fn positions(&self) -> usize;
    /// The id of the symbol that starts at `p`; NONE where none does. (The compact layout returns the id of
    /// a symbol that *ends* at `p` too; that is harmless to the merge loop's checks, because a position that
    /// started symbol `a` when an occurrence was recorded can later only end a symbol longer than `a` if `a`
    /// was one unit long — so never a symbol with the id `a`.)
    fn id(&self, p: u32) -> u32;
    /// Start of the symbol after the symbol `id` that starts at `p`; NONE at the end of its word.
    fn next(&self, p: u32, id: u32) -> u32;
    /// Calls `f(p, left, right)` for every pair of adjacent symbols (`left` at `p`), in order of position.
    fn for_each_pair(&self, f: impl FnMut(u32, u32, u32)) {
        self.for_each_pair_in(0, self.positions() as u32, f);
    }
    /// The same for the pairs whose left symbol starts in `from..to`; `from` is 0 or a `split_point`.
    fn for_each_pair_in(&self, from: u32, to: u32, f: impl FnMut(u32, u32, u32));
    /// A position between two words near the middle (pairs never span it), for counting in two halves; None
    /// when there is none or the layout is too small to be worth it.
    fn split_point(&self) -> Option<u32> {
        None
    }
    /// Start of the symbol before the one that starts at `p`; NONE at the start of its word.
    fn prev(&self, p: u32) -> u32;
    /// Count of the word that position `p` belongs to.
    fn count(&self, p: u32) -> i64;
    /// Merges symbol `a` at `p` with symbol `b` at `q` (the next one) into `x`; `r` is the symbol after `b`.
    fn merge(&mut self, p: u32, a: u32, q: u32, b: u32, r: u32, x: u32);
    fn prefetch(&self, p: u32);
    /// A second prefetch for `p`, about half as far ahead, of what depends on data the first one fetched.
    fn prefetch_more(&self, _p: u32) {}
    /// A merge made token `id` (new, or one that existed: see the merge loop's notes).
    fn token_added(&mut self, id: u32);
}

/// Words that are already sequences of tokens (an existing tokenizer's encoding of them), in parts laid end to
/// end, which the layouts read part by part on several threads, straight from wherever they are kept: no copy of
/// all the tokens is made in between (SuperBPE's second stage has 26 M of them).
pub trait TokenWords: Sync {
    /// How many parts there are.
    fn part_count(&self) -> usize;
    /// Calls `word(tokens, count)` for each word of part `i`, in order; the same words every time. (Words of
    /// fewer than two tokens may be among them: the layouts leave them out, they have nothing to merge.)
    fn for_each_word(&self, i: usize, word: &mut dyn FnMut(&[u32], u64));

    /// The size of each part, counted on `pool` (a source that knows them tells without reading its words again).
    fn part_sizes(&self, vocab: &Vocab, pool: &rayon::ThreadPool) -> Vec<PartSize> {
        let size = |i: usize| {
            let mut size = PartSize::default();
            self.for_each_word(i, &mut |w, c| size.add(w.len(), c, || w.iter().map(|&id| vocab.units(id)).sum()));
            size
        };
        pool.install(|| (0..self.part_count()).into_par_iter().map(size).collect())
    }
}

/// What a part of `TokenWords` holds that takes part in merging: its words of two tokens or more (the others have
/// nothing to merge), their tokens, their units (bytes or characters), and the least and greatest count of one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartSize {
    pub words: usize,
    pub tokens: usize,
    pub units: usize,
    /// None without words.
    pub counts: Option<(u64, u64)>,
}

impl PartSize {
    /// Counts a word of `tokens` tokens that occurs `count` times and holds `units()` units.
    #[inline]
    pub fn add(&mut self, tokens: usize, count: u64, units: impl FnOnce() -> usize) {
        if tokens >= 2 {
            self.words += 1;
            self.tokens += tokens;
            self.units += units();
            self.counts = Some(self.counts.map_or((count, count), |(lo, hi)| (lo.min(count), hi.max(count))));
        }
    }

    /// The total of `sizes`.
    pub fn sum(sizes: &[PartSize]) -> PartSize {
        let add = |a: PartSize, b: &PartSize| PartSize {
            words: a.words + b.words,
            tokens: a.tokens + b.tokens,
            units: a.units + b.units,
            counts: match (a.counts, b.counts) {
                (Some((lo, hi)), Some((l, h))) => Some((lo.min(l), hi.max(h))),
                (a, b) => a.or(b),
            },
        };
        sizes.iter().fold(PartSize::default(), add)
    }

    /// The count all the words have, if they all have the same (0 when there are none).
    pub fn uniform_count(&self) -> Option<u64> {
        match self.counts {
            None => Some(0),
            Some((lo, hi)) => (lo == hi).then_some(lo),
        }
    }
}

/// Words given as tokens, in parts as the encoding threads made them (see `TokenWords`).
#[derive(Clone, Debug, Default)]
pub struct SymbolWords {
    pub(super) parts: Vec<SymbolPart>,
}

/// Consecutive words: word `i` is `ids[ends[i - 1]..ends[i]]` and occurs `counts[i]` times.
#[derive(Clone, Debug, Default)]
pub struct SymbolPart {
    pub ids: Vec<u32>,
    pub ends: Vec<u32>,
    pub counts: Vec<u64>,
}

impl SymbolPart {
    /// Appends a word (its tokens are then in `ids`, from the previous word's end).
    pub fn push_word(&mut self, count: u64) -> Result<()> {
        // (A layout holds at most MAX_POSITIONS units, and a token is one unit or more.)
        check_positions(self.ids.len())?;
        self.ends.push(self.ids.len() as u32);
        self.counts.push(count);
        Ok(())
    }

    /// The words with their counts, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u32], u64)> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        let bounds = starts.zip(&self.ends).map(|(start, &end)| (start as usize, end as usize));
        bounds.zip(&self.counts).map(|((start, end), &count)| (&self.ids[start..end], count))
    }
}

impl SymbolWords {
    /// Appends a part of words that come after those already held.
    pub fn push_part(&mut self, part: SymbolPart) {
        self.parts.push(part);
    }

    pub fn len(&self) -> usize {
        self.parts.iter().map(|p| p.ends.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The words with their counts, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u32], u64)> {
        self.parts.iter().flat_map(SymbolPart::iter)
    }
}

impl TokenWords for SymbolWords {
    fn part_count(&self) -> usize {
        self.parts.len()
    }

    fn for_each_word(&self, i: usize, word: &mut dyn FnMut(&[u32], u64)) {
        for (tokens, count) in self.parts[i].iter() {
            word(tokens, count);
        }
    }
}

// -- slots --------------------------------------------------------------------------------------------------

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

/// All words in one flat array of slots (see the merge loop's performance notes).
pub(super) struct Slots {
    slots: Vec<Slot>,
}

impl Slots {
    pub(super) fn new(input: &[(&str, u64)], vocab: &Vocab) -> Result<Slots> {
        // Room for a unit per byte at most, from the start: a vector that grows copies itself into fresh pages,
        // which the kernel zeroes first (110 MB of English: a third of building the layout); room not used is
        // never touched.
        let mut slots: Vec<Slot> = Vec::with_capacity(input.iter().map(|(w, _)| w.len()).sum());
        let mut symbols = Vec::new();
        for (word, count) in input {
            symbols.clear();
            initial_symbols(vocab, word, &mut symbols)?;
            if symbols.len() < 2 {
                continue; // nothing to merge, ever
            }
            check_positions(slots.len() + symbols.len())?;
            push_word(&mut slots, &symbols, *count);
        }
        Ok(Slots { slots })
    }

    /// The layout of words that are already token sequences, one slot per token; their words of two tokens or
    /// more hold `tokens` tokens.
    pub(super) fn from_symbols(words: &impl TokenWords, tokens: usize) -> Result<Slots> {
        check_positions(tokens)?;
        let mut slots: Vec<Slot> = Vec::with_capacity(tokens);
        for i in 0..words.part_count() {
            words.for_each_word(i, &mut |symbols, count| {
                if symbols.len() >= 2 {
                    push_word(&mut slots, symbols, count); // (the others have nothing to merge, ever)
                }
            });
        }
        Ok(Slots { slots })
    }
}

/// Appends a word of `symbols`, counted `count` times, to `slots`.
fn push_word(slots: &mut Vec<Slot>, symbols: &[u32], count: u64) {
    let start = slots.len();
    let count = i64::try_from(count).unwrap_or(i64::MAX);
    for (i, &s) in symbols.iter().enumerate() {
        let pos = (start + i) as u32;
        slots.push(Slot {
            id: s,
            prev: if i == 0 { NONE } else { pos - 1 },
            next: if i + 1 == symbols.len() { NONE } else { pos + 1 },
            count,
        });
    }
}

impl Layout for Slots {
    const LEAN: bool = false;
    type List = Vec<u32>;

    fn positions(&self) -> usize {
        self.slots.len()
    }

    #[inline(always)]
    fn id(&self, p: u32) -> u32 {
        self.slots[p as usize].id
    }

    #[inline(always)]
    fn next(&self, p: u32, _id: u32) -> u32 {
        self.slots[p as usize].next
    }

    fn for_each_pair_in(&self, from: u32, to: u32, mut f: impl FnMut(u32, u32, u32)) {
        for p in from..to {
            let slot = self.slots[p as usize];
            if slot.id != NONE && slot.next != NONE {
                f(p, slot.id, self.slots[slot.next as usize].id);
            }
        }
    }

    #[inline(always)]
    fn prev(&self, p: u32) -> u32 {
        self.slots[p as usize].prev
    }

    #[inline(always)]
    fn count(&self, p: u32) -> i64 {
        self.slots[p as usize].count
    }

    #[inline(always)]
    fn merge(&mut self, p: u32, _a: u32, q: u32, _b: u32, r: u32, x: u32) {
        self.slots[p as usize].id = x;
        self.slots[p as usize].next = r;
        self.slots[q as usize].id = NONE;
        if r != NONE {
            self.slots[r as usize].prev = p;
        }
    }

    #[inline(always)]
    fn prefetch(&self, p: u32) {
        crate::prefetch(&self.slots[p as usize]);
    }

    fn token_added(&mut self, _id: u32) {}
}

// -- compact ------------------------------------------------------------------------------------------------

/// A symbol id stored in 2 or 4 bytes; `DEAD` (all ones) marks positions where no symbol starts or ends.
pub(super) trait Symbol: Copy + Eq + Send + Sync {
    const DEAD: Self;
    /// Largest token id this type can hold (DEAD excluded).
    const MAX_ID: u32;
    fn from_id(id: u32) -> Self;
    fn id(self) -> u32;
}

impl Symbol for u16 {
    const DEAD: u16 = u16::MAX;
    const MAX_ID: u32 = u16::MAX as u32 - 1;
    #[inline(always)]
    fn from_id(id: u32) -> u16 {
        id as u16
    }
    #[inline(always)]
    fn id(self) -> u32 {
        if self == u16::MAX { NONE } else { self as u32 }
    }
}

impl Symbol for u32 {
    const DEAD: u32 = u32::MAX;
    const MAX_ID: u32 = u32::MAX - 1;
    #[inline(always)]
    fn from_id(id: u32) -> u32 {
        id
    }
    #[inline(always)]
    fn id(self) -> u32 {
        self
    }
}

/// Layouts with fewer positions are recounted by one thread (two do not pay off). (The unit tests split
/// small ones, so that both ways are exercised.)
#[cfg(not(test))]
const SPLIT_FROM_POSITIONS: u32 = 1 << 20;
#[cfg(test)]
const SPLIT_FROM_POSITIONS: u32 = 64;

/// Positions per entry of the word-count table's index.
const COUNT_BLOCK_SHIFT: u32 = 6;

/// The count of the word a position is in: all equal (`uniform`), or looked up by the word ends.
struct WordCountIndex {
    uniform: Option<i64>,
    /// Per word: the position of the separator after it; ascending (kept even when counts are uniform).
    ends: Vec<u32>,
    counts: Vec<i64>,
    /// Per block of 2^COUNT_BLOCK_SHIFT positions: the first word that ends at or after the block's start.
    block_word: Vec<u32>,
}

impl WordCountIndex {
    #[inline(always)]
    fn prefetch_block(&self, p: u32) {
        if self.uniform.is_none() {
            crate::prefetch(&self.block_word[(p >> COUNT_BLOCK_SHIFT) as usize]);
        }
    }

    #[inline(always)]
    fn prefetch_word(&self, p: u32) {
        if self.uniform.is_none() {
            let w = self.block_word[(p >> COUNT_BLOCK_SHIFT) as usize] as usize;
            crate::prefetch(&self.ends[w]);
            crate::prefetch(&self.counts[w]);
        }
    }

    #[inline(always)]
    fn count(&self, p: u32) -> i64 {
        if let Some(c) = self.uniform {
            return c;
        }
        let mut w = self.block_word[(p >> COUNT_BLOCK_SHIFT) as usize] as usize;
        while self.ends[w] < p {
            w += 1;
        }
        self.counts[w]
    }
}

/// Few long words: 2 or 4 bytes per unit (see the module notes).
///
/// A unit is one of the words' initial symbols: a byte or character of words given as text (`new`), a token of
/// words given as tokens (`from_symbols`: SuperBPE's second stage lays out its 26 M tokens, not their 96 M
/// bytes). A symbol takes as many positions as the initial symbols it was merged from, which its id tells —
/// except for a token made again from other parts (an existing token recreated by a merge): when that occurrence
/// spans another number of initial symbols than the id's others, its span is kept by position in `irregular`.
pub(super) struct Compact<T: Symbol> {
    ids: Vec<T>,
    /// Positions each token's symbols take, by id (0 until one is made); `IRREGULAR` marks a token some of whose
    /// symbols take another number (see `span`).
    units: Vec<u32>,
    /// Start and end position → positions taken, of each symbol that does not take its id's.
    irregular: FxHashMap<u32, u32>,
    counts: WordCountIndex,
}

/// On `Compact::units`: some symbols of the token take another number of positions.
const IRREGULAR: u32 = 1 << 31;

impl<T: Symbol> Compact<T> {
    pub(super) fn new(input: &[(&str, u64)], vocab: &Vocab) -> Result<Compact<T>> {
        let mapper = UnitMapper::new(vocab);
        // Pass 1: the number of positions, so the id array is allocated once, at its exact size.
        let mut total: usize = 1;
        for (word, _) in input {
            let n = mapper.unit_count(word);
            if n >= 2 {
                total += n + 1;
            }
        }
        check_positions(total)?;
        let mut ids: Vec<T> = Vec::with_capacity(total);
        ids.push(T::DEAD);
        let mut ends = Vec::new();
        let mut counts = Vec::new();
        let mut scratch = Vec::new();
        for (word, count) in input {
            if mapper.unit_count(word) < 2 {
                continue;
            }
            mapper.push_symbols(vocab, word, &mut ids, &mut scratch)?;
            ends.push(ids.len() as u32);
            counts.push(i64::try_from(*count).unwrap_or(i64::MAX));
            ids.push(T::DEAD);
        }
        debug_assert_eq!(ids.len(), total);
        let units = vocab.tokens.iter().map(|t| t.units.max(1)).collect();
        let counts = WordCountIndex::new(ends, counts, ids.len());
        Ok(Compact { counts, ids, units, irregular: FxHashMap::default() })
    }

    /// The layout of words that are already token sequences: each token is one unit, one position. Built on
    /// `pool`, one part per task.
    pub(super) fn from_symbols(
        words: &impl TokenWords,
        sizes: &[PartSize],
        vocab: &Vocab,
        pool: &rayon::ThreadPool,
    ) -> Result<Compact<T>> {
        // Positions each part takes: its words of two symbols or more, each followed by a separator.
        let total: usize = 1 + sizes.iter().map(|s| s.tokens + s.words).sum::<usize>();
        check_positions(total)?;
        let mut ids: Vec<T> = Vec::with_capacity(total);
        pool.install(|| ids.par_extend(rayon::iter::repeat_n(T::DEAD, total)));
        // Each part's slices of the layout (after the separator at 0), of the word ends and of the counts (none
        // when all are the same, as SuperBPE's 3.45 M stretches'), and its first position: filled in parallel.
        let all = PartSize::sum(sizes);
        let uniform = all.uniform_count();
        let mut ends = vec![0u32; all.words];
        let mut counts = if uniform.is_some() { Vec::new() } else { vec![0i64; all.words] };
        let mut slices = Vec::with_capacity(sizes.len());
        let (mut rest, mut ends_rest, mut counts_rest) = (&mut ids[1..], &mut ends[..], &mut counts[..]);
        let mut start = 1usize;
        for (i, size) in sizes.iter().enumerate() {
            let (slice, after) = rest.split_at_mut(size.tokens + size.words);
            let (part_ends, ends_after) = ends_rest.split_at_mut(size.words);
            let (part_counts, counts_after) = counts_rest.split_at_mut(if uniform.is_some() { 0 } else { size.words });
            slices.push((i, slice, part_ends, part_counts, start));
            (rest, ends_rest, counts_rest) = (after, ends_after, counts_after);
            start += size.tokens + size.words;
        }
        let fill = |(i, slice, ends, counts, start): (usize, &mut [T], &mut [u32], &mut [i64], usize)| {
            let (mut p, mut w) = (0, 0);
            words.for_each_word(i, &mut |symbols, count| {
                if symbols.len() < 2 {
                    return;
                }
                for (at, &s) in slice[p..p + symbols.len()].iter_mut().zip(symbols) {
                    *at = T::from_id(s);
                }
                p += symbols.len();
                ends[w] = (start + p) as u32;
                if let Some(c) = counts.get_mut(w) {
                    *c = i64::try_from(count).unwrap_or(i64::MAX);
                }
                w += 1;
                p += 1; // the separator, DEAD already
            });
            debug_assert_eq!((p, w), (slice.len(), ends.len()));
        };
        pool.install(|| slices.into_par_iter().for_each(fill));
        let counts = match uniform {
            Some(c) => WordCountIndex::uniform(ends, i64::try_from(c).unwrap_or(i64::MAX)),
            None => WordCountIndex::new(ends, counts, ids.len()),
        };
        Ok(Compact { counts, ids, units: vec![1; vocab.len()], irregular: FxHashMap::default() })
    }

    /// Positions taken by the symbol `id` that starts or ends at `at`.
    #[inline(always)]
    fn span(&self, id: u32, at: u32) -> u32 {
        let units = self.units[id as usize];
        if units & IRREGULAR == 0 { units } else { self.irregular.get(&at).copied().unwrap_or(units & !IRREGULAR) }
    }
}

impl WordCountIndex {
    /// The index of words ending (their separator) at `ends`, all counted `count` times.
    fn uniform(ends: Vec<u32>, count: i64) -> WordCountIndex {
        WordCountIndex { uniform: Some(count), ends, counts: Vec::new(), block_word: Vec::new() }
    }

    /// The index of words ending (their separator) at `ends`, with `counts`, over `positions` positions.
    fn new(ends: Vec<u32>, mut counts: Vec<i64>, positions: usize) -> WordCountIndex {
        let uniform = match counts.first() {
            Some(&c) if counts.iter().all(|&x| x == c) => Some(c),
            None => Some(0),
            _ => None,
        };
        let mut block_word = Vec::new();
        if uniform.is_none() {
            let blocks = positions.div_ceil(1 << COUNT_BLOCK_SHIFT);
            block_word.reserve_exact(blocks);
            let mut w = 0usize;
            for b in 0..blocks {
                let start = (b << COUNT_BLOCK_SHIFT) as u32;
                while w < ends.len() && ends[w] < start {
                    w += 1;
                }
                block_word.push(w.min(ends.len().saturating_sub(1)) as u32);
            }
        } else {
            counts = Vec::new(); // the ends stay: they are where the symbols may be counted in parts
        }
        WordCountIndex { uniform, ends, counts, block_word }
    }
}

/// How far around an occurrence the merge loop also prefetches, in bytes of the layout: the symbols before and
/// after the pair it merges are a position or two away, on the line before or after the occurrence's when it
/// sits at a line's edge (SuperBPE's 8 000 second-stage merges, alternated runs: 0.82-0.89 s, 0.87-0.93 s
/// without; 48 bytes measured no better than 8).
const NEIGHBOUR_REACH_BYTES: usize = 8;

impl<T: Symbol> Layout for Compact<T> {
    const LEAN: bool = true;
    type List = DeltaList;

    fn positions(&self) -> usize {
        self.ids.len()
    }

    #[inline(always)]
    fn id(&self, p: u32) -> u32 {
        self.ids[p as usize].id()
    }

    #[inline(always)]
    fn next(&self, p: u32, id: u32) -> u32 {
        let e = p + self.span(id, p);
        if self.ids[e as usize] == T::DEAD { NONE } else { e }
    }

    fn for_each_pair_in(&self, from: u32, to: u32, mut f: impl FnMut(u32, u32, u32)) {
        // Symbols are skipped whole, so only symbol starts and separators are read (one length per symbol).
        let n = to as usize;
        let mut p = from as usize;
        while p < n {
            let left = self.ids[p];
            if left == T::DEAD {
                p += 1; // a separator
                continue;
            }
            let q = p + self.span(left.id(), p as u32) as usize;
            let right = self.ids[q];
            if right != T::DEAD {
                f(p as u32, left.id(), right.id());
            }
            p = q;
        }
    }

    fn split_point(&self) -> Option<u32> {
        let n = self.ids.len() as u32;
        if n < SPLIT_FROM_POSITIONS {
            return None;
        }
        // The separator after the word that ends nearest the middle.
        let ends = &self.counts.ends;
        let i = ends.partition_point(|&e| e < n / 2);
        let candidates = [i.checked_sub(1).map(|j| ends[j]), ends.get(i).copied()];
        let best = candidates.into_iter().flatten().min_by_key(|&e| e.abs_diff(n / 2))?;
        (best > n / 4 && best < n - n / 4).then_some(best)
    }

    #[inline(always)]
    fn prev(&self, p: u32) -> u32 {
        let v = self.ids[p as usize - 1];
        if v == T::DEAD { NONE } else { p - self.span(v.id(), p - 1) }
    }

    #[inline(always)]
    fn count(&self, p: u32) -> i64 {
        self.counts.count(p)
    }

    #[inline(always)]
    fn merge(&mut self, p: u32, a: u32, q: u32, b: u32, _r: u32, x: u32) {
        let end = q + self.span(b, q) - 1;
        if (self.units[a as usize] | self.units[b as usize]) & IRREGULAR != 0 {
            for at in [p, q - 1, q, end] {
                self.irregular.remove(&at);
            }
        }
        // The first symbol of a token sets its span; a recreated token may take another.
        let span = end - p + 1;
        let units = &mut self.units[x as usize];
        if *units == 0 {
            *units = span;
        } else if *units & !IRREGULAR != span {
            *units |= IRREGULAR;
            self.irregular.insert(p, span);
            self.irregular.insert(end, span);
        }
        let x = T::from_id(x);
        self.ids[p as usize] = x;
        self.ids[end as usize] = x;
        // `a`'s last position and `b`'s first are inside `x` now (unless they are its first and last).
        if q - 1 != p {
            self.ids[q as usize - 1] = T::DEAD;
        }
        if q != end {
            self.ids[q as usize] = T::DEAD;
        }
    }

    #[inline(always)]
    fn prefetch(&self, p: u32) {
        let (p, reach) = (p as usize, NEIGHBOUR_REACH_BYTES / std::mem::size_of::<T>());
        crate::prefetch(&self.ids[p]);
        crate::prefetch(&self.ids[p.saturating_sub(reach)]);
        crate::prefetch(&self.ids[(p + reach).min(self.ids.len() - 1)]);
        self.counts.prefetch_block(p as u32);
    }

    /// The word's end and count, found through the block fetched by `prefetch` (perf: the three dependent
    /// misses of a count lookup were two thirds of the merge loop of SuperBPE's second stage).
    #[inline(always)]
    fn prefetch_more(&self, p: u32) {
        self.counts.prefetch_word(p);
    }

    fn token_added(&mut self, id: u32) {
        if self.units.len() <= id as usize {
            self.units.resize(id as usize + 1, 0);
        }
    }
}

// -- initial symbols ----------------------------------------------------------------------------------------

/// Positions are u32 and NONE (u32::MAX) marks "no position": a layout may hold at most this many.
const MAX_POSITIONS: usize = NONE as usize - 1;

/// Refuses a corpus whose positions would not fit in 32 bits (never wraps around silently).
fn check_positions(total: usize) -> Result<()> {
    if total <= MAX_POSITIONS {
        return Ok(());
    }
    Err(Error::value(format!(
        "the unique words of this corpus hold {total} units, more than the {MAX_POSITIONS} one training run can \
         index (a genome over ~4.29 Gbp; ~2.1 Gbp with reverse_complement=True); train on a sample of the corpus \
         — BPE merges settle long before that — or on fewer chromosomes"
    )))
}

fn unknown_unit(word: &str, unit: &str) -> Error {
    let shown: String = word.chars().take(40).collect();
    Error::value(format!("internal error: unit {unit:?} of word {shown:?} has no base symbol"))
}

/// The initial symbols of a word (as `Vocab::initial_symbols`), or an internal error.
fn initial_symbols(vocab: &Vocab, word: &str, out: &mut Vec<u32>) -> Result<()> {
    vocab.initial_symbols(word, out).map_err(|u| unknown_unit(word, &u.unit))
}

/// Units → initial symbol ids without a hash lookup per unit, where markers do not depend on the position
/// (a 100 Mbp genome is 10^8 units).
struct UnitMapper {
    /// Byte mode: every byte; char mode: ASCII characters. NONE: no symbol (and no unknown token).
    table: [u32; 256],
    /// Symbols do not depend on their position in the word (no `##` prefix, no end-of-word suffix).
    plain: bool,
    mode: Mode,
}

impl UnitMapper {
    fn new(vocab: &Vocab) -> UnitMapper {
        let plain = vocab.style.prefix.is_none() && vocab.style.suffix.is_none();
        let mut table = [NONE; 256];
        if plain {
            let mut out = Vec::new();
            let mut buf = [0u8; 4];
            for (u, slot) in table.iter_mut().enumerate() {
                let unit: &str = match vocab.style.mode {
                    // A byte on its own is rarely valid UTF-8: look it up through the byte table.
                    Mode::Byte => {
                        if let Some(ids) = vocab.byte_ids() {
                            *slot = if ids[u] != NONE { ids[u] } else { vocab.unk.unwrap_or(NONE) };
                        }
                        continue;
                    }
                    Mode::Char if u < 128 => (u as u8 as char).encode_utf8(&mut buf),
                    Mode::Char => continue,
                };
                out.clear();
                if vocab.initial_symbols(unit, &mut out).is_ok() && out.len() == 1 {
                    *slot = out[0];
                }
            }
        }
        UnitMapper { table, plain, mode: vocab.style.mode }
    }

    fn unit_count(&self, word: &str) -> usize {
        match self.mode {
            Mode::Byte => word.len(),
            Mode::Char => word.chars().count(),
        }
    }

    fn push_symbols<T: Symbol>(
        &self,
        vocab: &Vocab,
        word: &str,
        ids: &mut Vec<T>,
        scratch: &mut Vec<u32>,
    ) -> Result<()> {
        let fast = self.plain && (self.mode == Mode::Byte || word.is_ascii());
        if fast {
            for &b in word.as_bytes() {
                let id = self.table[b as usize];
                if id == NONE {
                    return Err(unknown_unit(word, &String::from_utf8_lossy(&[b])));
                }
                ids.push(T::from_id(id));
            }
            return Ok(());
        }
        scratch.clear();
        initial_symbols(vocab, word, scratch)?;
        ids.extend(scratch.iter().map(|&id| T::from_id(id)));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_beyond_32_bits_are_refused_not_wrapped() {
        assert!(check_positions(0).is_ok());
        assert!(check_positions(MAX_POSITIONS).is_ok());
        let err = check_positions(MAX_POSITIONS + 1).unwrap_err();
        assert!(err.message.contains("4294967295 units") && err.message.contains("reverse_complement"), "{}", err);
        // A 2 GB single-line sequence (2^31 bases) fits, with its separators; twice that does not.
        assert!(check_positions((1usize << 31) + 2).is_ok());
        assert!(check_positions((1usize << 32) + 3).is_err());
    }
}

#[cfg(test)]
mod symbol_tests {
    use super::*;
    use crate::vocab::SymbolStyle;

    /// The compact layout of `words` built one word after the other (the layout `from_symbols` must give).
    fn laid_out_in_order(words: &SymbolWords, units: &[u32]) -> (Vec<u16>, Vec<u32>, Vec<i64>) {
        let (mut ids, mut ends, mut counts) = (vec![u16::DEAD], Vec::new(), Vec::new());
        for (symbols, count) in words.iter() {
            if symbols.len() < 2 {
                continue;
            }
            for &s in symbols {
                let n = units[s as usize] as usize;
                ids.push(s as u16);
                if n > 1 {
                    ids.extend(std::iter::repeat_n(u16::DEAD, n - 2));
                    ids.push(s as u16);
                }
            }
            ends.push(ids.len() as u32);
            counts.push(count as i64);
            ids.push(u16::DEAD);
        }
        (ids, ends, counts)
    }

    #[test]
    fn compact_layout_from_parts_equals_one_word_after_the_other() {
        let style = SymbolStyle { mode: Mode::Char, prefix: None, suffix: None };
        let mut vocab = Vocab::new(style, &[], None, &["a".to_string(), "b".to_string()]).unwrap();
        let ab = vocab.push_merge(0, 1);
        let abab = vocab.push_merge(ab, ab);
        let aabab = vocab.push_merge(0, abab);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let mut x = 7u64;
        let mut next = |n: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let tokens = [0, 1, ab, abab, aabab];
        for round in 0..20 {
            let mut words = SymbolWords::default();
            // Parts of 0 to 9 words of 0 to 5 tokens (words of fewer than two take no positions), some counts
            // equal for all words (the uniform case) and some not.
            for _ in 0..next(6) {
                let mut part = SymbolPart::default();
                for _ in 0..next(10) {
                    for _ in 0..next(6) {
                        part.ids.push(tokens[next(tokens.len() as u64) as usize]);
                    }
                    part.push_word(if round % 3 == 0 { 1 } else { 1 + next(4) }).unwrap();
                }
                words.push_part(part);
            }
            let sizes = words.part_sizes(&vocab, &pool);
            let layout = Compact::<u16>::from_symbols(&words, &sizes, &vocab, &pool).unwrap();
            let (ids, ends, counts) = laid_out_in_order(&words, &layout.units);
            assert!(layout.ids == ids, "round {round}");
            assert_eq!(layout.counts.ends, ends, "round {round}");
            for (i, &end) in ends.iter().enumerate() {
                assert_eq!(layout.counts.count(end - 1), counts[i], "round {round}");
            }
            let mergeable: Vec<&[u32]> = words.iter().map(|(w, _)| w).filter(|w| w.len() >= 2).collect();
            // (Each token is one position of the layout; the layout is chosen by the words' length in units.)
            assert!(layout.units.iter().all(|&u| u == 1));
            let units = |s: u32| vocab.tokens[s as usize].units as usize;
            let all: usize = mergeable.iter().map(|w| w.iter().map(|&s| units(s)).sum::<usize>()).sum();
            let tokens = mergeable.iter().map(|w| w.len()).sum();
            let counts: Vec<u64> = words.iter().filter(|(w, _)| w.len() >= 2).map(|(_, c)| c).collect();
            let range = counts.iter().min().map(|&lo| (lo, *counts.iter().max().unwrap()));
            let want = PartSize { words: mergeable.len(), tokens, units: all, counts: range };
            assert_eq!(PartSize::sum(&sizes), want);
        }
    }
}
