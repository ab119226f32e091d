//! Training: from word counts to a vocabulary, merging the most frequent adjacent pair until `vocab_size`.
//!
//! Performance notes (the algorithm, not yet the tuning):
//! - Words are unique pieces with 64-bit counts; each is a `Vec<u32>` of symbol ids.
//! - Pair counts are kept incrementally. Merging `(a, b) → x` only *removes* occurrences of existing pairs
//!   and *creates* pairs that contain `x`, so an old pair's count never grows and its first occurrence
//!   never moves earlier. A max-heap with lazy invalidation is therefore exact: pop, compare with the live
//!   count (and live tie key), push back corrected if stale.
//! - Each pair keeps the list of words that hold it, so a merge visits only the affected words.
//! - The one exception to "never grows" is a merge whose result string already is a token (it reuses the
//!   id, so pairs around that id can gain occurrences): every step pushes a fresh entry for each pair that
//!   gained occurrences, which keeps the heap exact in that case too.
//!
//! Tie rules (see README):
//! - `FirstSeen`: among pairs with the highest count, the one whose first occurrence comes first when the
//!   words are read in order of first appearance, left to right — the textbook's `max_freq < freq` loop.
//! - `Hf`: highest count, then smallest `(id_a, id_b)`, reproducing HF tokenizers' `BpeTrainer`, including
//!   its `max_token_length` rule (a pair created by a merge counts only if the sum of the two lengths is
//!   *below* the limit; the first pairs always count).
//! - Either way a chosen pair is merged in every word that holds it. (HF's heap entries carry the word set of
//!   the step that pushed them, so when a merge recreates an existing token HF can record the same pair
//!   twice; the merges it saves keep one copy.)

pub mod counts;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{Error, Result};
use crate::vocab::{Mode, SymbolStyle, Vocab};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieBreak {
    FirstSeen,
    Hf,
}

impl TieBreak {
    pub fn parse(name: &str) -> Result<TieBreak> {
        match name {
            "first_seen" => Ok(TieBreak::FirstSeen),
            "hf" => Ok(TieBreak::Hf),
            other => Err(Error::value(format!(
                "unknown tie_break {other:?}: use \"first_seen\" (the textbook rule: the pair seen first in the \
                 corpus wins) or \"hf\" (HF tokenizers' rule: the pair with the smallest ids wins)"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TieBreak::FirstSeen => "first_seen",
            TieBreak::Hf => "hf",
        }
    }
}

/// Which units the base vocabulary holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Alphabet {
    /// Every byte (byte mode); in char mode the same as `Corpus`.
    All,
    /// Only the units seen in the corpus.
    Corpus,
    /// The units seen in the corpus plus these characters (in byte mode: their UTF-8 bytes).
    CorpusPlus(Vec<char>),
}

#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub vocab_size: usize,
    pub style: SymbolStyle,
    pub special_tokens: Vec<String>,
    pub unk_token: Option<String>,
    pub alphabet: Alphabet,
    pub min_frequency: u64,
    pub max_token_length: Option<usize>,
    pub tie_break: TieBreak,
}

/// Hooks for progress display and interruption.
pub trait Observer {
    fn merges_planned(&mut self, _planned: u64) {}
    /// Called after each merge; an error (e.g. Ctrl-C) stops training.
    fn merge_done(&mut self, _done: u64) -> Result<()> {
        Ok(())
    }
}

/// An observer that does nothing.
pub struct Silent;
impl Observer for Silent {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The vocabulary reached `vocab_size`.
    Done,
    /// No pair was left to merge.
    NoPairsLeft,
    /// The best pair occurs fewer than `min_frequency` times.
    MinFrequency,
}

#[derive(Debug)]
pub struct Trained {
    pub vocab: Vocab,
    /// The count of each merge's pair when it was chosen.
    pub merge_counts: Vec<u64>,
    pub stop: StopReason,
}

type Pair = (u32, u32);

/// Per-pair state of the merge loop.
#[derive(Default)]
struct PairInfo {
    count: i64,
    /// Words holding the pair (may hold stale entries: words that lost it since).
    words: Vec<u32>,
    /// `words` is sorted and deduplicated; entries before `cursor` no longer hold the pair.
    sorted: bool,
    cursor: u32,
    /// Last merge step that added occurrences.
    touched_at: u32,
}

#[derive(PartialEq, Eq)]
struct Entry {
    count: u64,
    /// Smaller wins among equal counts.
    tie: u64,
    pair: Pair,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.count.cmp(&other.count).then_with(|| other.tie.cmp(&self.tie))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The base symbols (display strings) that `words` need, plus those `alphabet` forces in.
pub fn base_alphabet(words: &[(&str, u64)], style: &SymbolStyle, alphabet: &Alphabet) -> Vec<String> {
    let mut seen: FxHashSet<String> = FxHashSet::default();
    let mut display = String::new();
    for (word, _) in words {
        let n = style.unit_count(word);
        let mut k = 0;
        style.for_each_unit(word, |unit, _, _| {
            style.symbol_display(unit, k == 0, k + 1 == n, &mut display);
            k += 1;
            if !seen.contains(display.as_str()) {
                seen.insert(display.clone());
            }
        });
    }
    let forced_units: Vec<String> = match (alphabet, style.mode) {
        (Alphabet::All, Mode::Byte) => {
            (0..=255u8).map(|b| crate::vocab::BYTE_TO_CHAR[b as usize].to_string()).collect()
        }
        (Alphabet::All, Mode::Char) | (Alphabet::Corpus, _) => Vec::new(),
        (Alphabet::CorpusPlus(chars), Mode::Char) => chars.iter().map(|c| c.to_string()).collect(),
        (Alphabet::CorpusPlus(chars), Mode::Byte) => chars
            .iter()
            .flat_map(|c| c.to_string().into_bytes())
            .map(|b| crate::vocab::BYTE_TO_CHAR[b as usize].to_string())
            .collect(),
    };
    // A forced unit must be encodable wherever it stands in a word, so it comes with every marker variant.
    for unit in forced_units {
        for (first, last) in [(true, false), (false, false), (true, true), (false, true)] {
            style.symbol_display(&unit, first, last, &mut display);
            seen.insert(display.clone());
        }
    }
    seen.into_iter().collect()
}

/// Trains a vocabulary from word counts (in order of first appearance).
pub fn train(words: &[(&str, u64)], config: &TrainConfig, observer: &mut dyn Observer) -> Result<Trained> {
    let base = base_alphabet(words, &config.style, &config.alphabet);
    let vocab = Vocab::new(config.style.clone(), &config.special_tokens, config.unk_token.as_deref(), &base)?;
    if config.vocab_size < vocab.len() {
        return Err(Error::value(format!(
            "vocab_size={} is smaller than the base vocabulary, which already has {} tokens ({} special, {} base \
             symbols); use vocab_size >= {}",
            config.vocab_size,
            vocab.len(),
            vocab.num_special,
            vocab.num_base,
            vocab.len()
        )));
    }
    Merger::new(words, config, vocab)?.run(observer)
}

struct Merger<'c> {
    config: &'c TrainConfig,
    vocab: Vocab,
    words: Vec<Vec<u32>>,
    counts: Vec<u64>,
    pairs: FxHashMap<Pair, PairInfo>,
    heap: BinaryHeap<Entry>,
    merge_counts: Vec<u64>,
}

impl<'c> Merger<'c> {
    fn new(input: &[(&str, u64)], config: &'c TrainConfig, vocab: Vocab) -> Result<Merger<'c>> {
        let mut words = Vec::with_capacity(input.len());
        let mut counts = Vec::with_capacity(input.len());
        for (word, count) in input {
            let mut symbols = Vec::with_capacity(word.len());
            vocab.initial_symbols(word, &mut symbols).map_err(|u| {
                Error::value(format!("internal error: unit {:?} of word {word:?} has no base symbol", u.unit))
            })?;
            words.push(symbols);
            counts.push(*count);
        }
        let mut merger = Merger {
            config,
            vocab,
            words,
            counts,
            pairs: FxHashMap::default(),
            heap: BinaryHeap::new(),
            merge_counts: Vec::new(),
        };
        merger.count_initial_pairs();
        Ok(merger)
    }

    fn count_initial_pairs(&mut self) {
        let initial_ok = match (self.config.tie_break, self.config.max_token_length) {
            (TieBreak::FirstSeen, Some(max)) => max >= 2,
            _ => true, // HF never limits the first merges
        };
        if !initial_ok {
            return;
        }
        for (w, symbols) in self.words.iter().enumerate() {
            let count = self.counts[w] as i64;
            for window in symbols.windows(2) {
                let info = self.pairs.entry((window[0], window[1])).or_default();
                info.count += count;
                if info.words.last() != Some(&(w as u32)) {
                    info.words.push(w as u32);
                }
            }
        }
        let pairs: Vec<Pair> = self.pairs.keys().copied().collect();
        for pair in pairs {
            let info = self.pairs.get_mut(&pair).unwrap();
            info.sorted = true;
            if info.count > 0 {
                self.push_entry(pair);
            }
        }
    }

    fn run(mut self, observer: &mut dyn Observer) -> Result<Trained> {
        let planned = self.config.vocab_size.saturating_sub(self.vocab.len()) as u64;
        observer.merges_planned(planned);
        let mut changes: Vec<(Pair, i64)> = Vec::new();
        let mut touched: Vec<Pair> = Vec::new();
        let mut step: u32 = 0;
        let stop = loop {
            if self.vocab.len() >= self.config.vocab_size {
                break StopReason::Done;
            }
            let Some(top) = self.heap.pop() else {
                break StopReason::NoPairsLeft;
            };
            let live = self.pairs[&top.pair].count;
            if live <= 0 {
                continue;
            }
            let live_tie = match self.config.tie_break {
                TieBreak::Hf => top.tie,
                TieBreak::FirstSeen => match self.first_occurrence(top.pair) {
                    Some(tie) => tie,
                    None => continue,
                },
            };
            if live as u64 != top.count || live_tie != top.tie {
                self.heap.push(Entry { count: live as u64, tie: live_tie, ..top });
                continue;
            }
            if top.count < self.config.min_frequency {
                break StopReason::MinFrequency;
            }

            step += 1;
            let (a, b) = top.pair;
            let x = self.vocab.push_merge(a, b);
            self.merge_counts.push(top.count);
            let targets = self.take_targets(top.pair);
            touched.clear();
            for &w in &targets {
                changes.clear();
                self.merge_word(w as usize, a, b, x, &mut changes);
                let count = self.counts[w as usize] as i64;
                for &(pair, delta) in &changes {
                    self.record_change(pair, delta * count, w, step, &mut touched);
                }
            }
            // Every occurrence is gone: left-to-right merging leaves no adjacent (a, b).
            self.pairs.get_mut(&top.pair).unwrap().count = 0;
            for &pair in &touched {
                if self.pairs[&pair].count > 0 {
                    self.push_entry(pair);
                }
            }
            observer.merge_done(self.merge_counts.len() as u64)?;
        };
        Ok(Trained { vocab: self.vocab, merge_counts: self.merge_counts, stop })
    }

    fn push_entry(&mut self, pair: Pair) {
        let count = self.pairs[&pair].count as u64;
        let tie = match self.config.tie_break {
            TieBreak::Hf => ((pair.0 as u64) << 32) | pair.1 as u64,
            TieBreak::FirstSeen => match self.first_occurrence(pair) {
                Some(tie) => tie,
                None => return,
            },
        };
        self.heap.push(Entry { count, tie, pair });
    }

    /// The words that hold a chosen pair, in corpus order.
    fn take_targets(&mut self, pair: Pair) -> Vec<u32> {
        let info = self.pairs.get_mut(&pair).unwrap();
        sort_words(info);
        let mut words = std::mem::take(&mut info.words);
        words.drain(..info.cursor as usize);
        info.cursor = 0;
        words
    }

    fn record_change(&mut self, pair: Pair, delta: i64, word: u32, step: u32, touched: &mut Vec<Pair>) {
        let info = self.pairs.entry(pair).or_default();
        info.count += delta;
        if delta <= 0 {
            return;
        }
        if info.touched_at != step {
            info.touched_at = step;
            touched.push(pair);
            if info.words.is_empty() {
                info.sorted = true;
                info.cursor = 0;
            }
        }
        match info.words.last() {
            Some(&last) if last == word => {}
            Some(&last) => {
                if word < last {
                    info.sorted = false;
                }
                info.words.push(word);
            }
            None => info.words.push(word),
        }
    }

    /// `FirstSeen` tie key of a pair: (word index, unit offset) of its first live occurrence.
    fn first_occurrence(&mut self, pair: Pair) -> Option<u64> {
        let info = self.pairs.get_mut(&pair)?;
        sort_words(info);
        while (info.cursor as usize) < info.words.len() {
            let w = info.words[info.cursor as usize];
            let symbols = &self.words[w as usize];
            let mut offset = 0u64;
            for i in 0..symbols.len().saturating_sub(1) {
                if symbols[i] == pair.0 && symbols[i + 1] == pair.1 {
                    return Some(((w as u64) << 32) | offset);
                }
                offset += self.vocab.tokens[symbols[i] as usize].units as u64;
            }
            info.cursor += 1;
        }
        None
    }

    /// Whether a pair created by a merge may be counted (the `max_token_length` rule of the tie mode).
    fn allowed(&self, left: u32, right: u32) -> bool {
        let Some(max) = self.config.max_token_length else {
            return true;
        };
        let units = self.vocab.tokens[left as usize].units as usize + self.vocab.tokens[right as usize].units as usize;
        match self.config.tie_break {
            TieBreak::FirstSeen => units <= max,
            TieBreak::Hf => units < max,
        }
    }

    /// Merges every non-overlapping `(a, b)` of word `w`, left to right, into `x`, and lists the pair-count
    /// changes (per occurrence) in the same order and form as HF tokenizers' `Word::merge`.
    fn merge_word(&mut self, w: usize, a: u32, b: u32, x: u32, changes: &mut Vec<(Pair, i64)>) {
        let symbols = std::mem::take(&mut self.words[w]);
        let mut out = Vec::with_capacity(symbols.len());
        let mut i = 0;
        while i < symbols.len() {
            if i + 1 < symbols.len() && symbols[i] == a && symbols[i + 1] == b {
                if let Some(&prev) = out.last() {
                    changes.push(((prev, a), -1));
                    if self.allowed(prev, x) {
                        changes.push(((prev, x), 1));
                    }
                }
                if let Some(&next) = symbols.get(i + 2) {
                    changes.push(((b, next), -1));
                    if self.allowed(x, next) {
                        changes.push(((x, next), 1));
                    }
                }
                out.push(x);
                i += 2;
            } else {
                out.push(symbols[i]);
                i += 1;
            }
        }
        self.words[w] = out;
    }
}

fn sort_words(info: &mut PairInfo) {
    if !info.sorted {
        info.words.sort_unstable();
        info.words.dedup();
        info.sorted = true;
        info.cursor = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vocab_size: usize, mode: Mode, tie_break: TieBreak) -> TrainConfig {
        TrainConfig {
            vocab_size,
            style: SymbolStyle { mode, prefix: None, suffix: None },
            special_tokens: vec![],
            unk_token: Some("[UNK]".into()),
            alphabet: Alphabet::Corpus,
            min_frequency: 0,
            max_token_length: None,
            tie_break,
        }
    }

    fn merges(t: &Trained) -> Vec<(String, String, u64)> {
        t.vocab
            .merges
            .iter()
            .zip(&t.merge_counts)
            .map(|(m, &c)| {
                (t.vocab.tokens[m.left as usize].display.clone(), t.vocab.tokens[m.right as usize].display.clone(), c)
            })
            .collect()
    }

    const HUG: [(&str, u64); 5] = [("hug", 10), ("pug", 5), ("pun", 12), ("bun", 4), ("hugs", 5)];

    #[test]
    fn textbook_char_example() {
        let t = train(&HUG, &config(11, Mode::Char, TieBreak::FirstSeen), &mut Silent).unwrap();
        let want = [("u", "g", 20), ("u", "n", 16), ("h", "ug", 15)];
        let got = merges(&t);
        assert_eq!(got.len(), 3);
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0.as_str(), g.1.as_str(), g.2), w);
        }
        assert_eq!(t.stop, StopReason::Done);
    }

    #[test]
    fn vocab_size_below_base_is_rejected() {
        let err = train(&HUG, &config(5, Mode::Char, TieBreak::FirstSeen), &mut Silent).unwrap_err();
        assert!(err.message.contains("use vocab_size >= 8"), "{}", err.message);
    }

    #[test]
    fn stops_early_when_no_pairs_are_left() {
        let t = train(&[("ab", 1)], &config(100, Mode::Char, TieBreak::Hf), &mut Silent).unwrap();
        assert_eq!(t.vocab.merges.len(), 1);
        assert_eq!(t.stop, StopReason::NoPairsLeft);
    }

    #[test]
    fn runs_of_one_symbol_merge_left_to_right() {
        // "aaaaa": (a,a) occurs 4 times as windows; merged left to right it becomes aa aa a.
        let t = train(&[("aaaaa", 1)], &config(4, Mode::Char, TieBreak::FirstSeen), &mut Silent).unwrap();
        let got = merges(&t);
        assert_eq!((got[0].0.as_str(), got[0].1.as_str(), got[0].2), ("a", "a", 4));
        assert_eq!((got[1].0.as_str(), got[1].1.as_str(), got[1].2), ("aa", "aa", 1));
    }

    #[test]
    fn max_token_length_rules_differ_by_tie_mode() {
        let words = [("abcd", 3)];
        let mut c = config(100, Mode::Char, TieBreak::FirstSeen);
        c.max_token_length = Some(3);
        let t = train(&words, &c, &mut Silent).unwrap();
        assert!(t.vocab.tokens.iter().all(|t| t.units <= 3));
        assert!(t.vocab.tokens.iter().any(|t| t.units == 3));
        c.tie_break = TieBreak::Hf;
        let t = train(&words, &c, &mut Silent).unwrap();
        assert!(t.vocab.tokens.iter().all(|t| t.units <= 2), "HF only counts merged pairs below the limit");
    }
}
