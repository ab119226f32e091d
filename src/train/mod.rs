//! Training: from word counts to a vocabulary, merging the most frequent adjacent pair until `vocab_size`.
//!
//! `counts` turns text into unique words with counts (in parallel); `merge` runs the merge loop (see its
//! performance notes). This module holds the settings, the base alphabet and the tie rules.
//!
//! Tie rules (see README):
//! - `FirstSeen`: among pairs with the highest count, the one whose first occurrence comes first when the
//!   words are read in order of first appearance, left to right — the textbook's `max_freq < freq` loop.
//! - `Hf`: highest count, then smallest `(id_a, id_b)`, reproducing HF tokenizers' `BpeTrainer`, including
//!   its `max_token_length` rule (a pair created by a merge counts only if the sum of the two lengths is
//!   *below* the limit; the first pairs always count).
//! - `Lexicographic`: highest count, then the greater pair compared as bytes `(left, right)` (Stanford CS336's
//!   rule).
//! - Either way a chosen pair is merged in every word that holds it. (HF's heap entries carry the word set of
//!   the step that pushed them, so when a merge recreates an existing token HF can record the same pair
//!   twice; the merges it saves keep one copy.)

pub mod control;
pub mod counts;
pub mod dna;
pub mod extend;
mod layout;
mod merge;
mod occurrences;
pub mod stretches;

pub use control::{Boundaries, Veto, parse_classes};
pub use layout::{PartSize, SymbolWords, TokenWords};
pub use merge::{Engine, Merger};

use rustc_hash::FxHashSet;

use crate::error::{Error, Result};
use crate::vocab::{Mode, SymbolStyle, Vocab};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieBreak {
    FirstSeen,
    Hf,
    Lexicographic,
}

impl TieBreak {
    pub fn parse(name: &str) -> Result<TieBreak> {
        match name {
            "first_seen" => Ok(TieBreak::FirstSeen),
            "hf" => Ok(TieBreak::Hf),
            "lexicographic" => Ok(TieBreak::Lexicographic),
            other => Err(Error::value(format!(
                "unknown tie_break {other:?}: use \"first_seen\" (the textbook rule: the pair seen first in the \
                 corpus wins), \"hf\" (HF tokenizers' rule: the pair with the smallest ids wins) or \
                 \"lexicographic\" (the greater pair, compared as bytes, wins)"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TieBreak::FirstSeen => "first_seen",
            TieBreak::Hf => "hf",
            TieBreak::Lexicographic => "lexicographic",
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
    /// Char mode: keep only this many characters (the most frequent; forced ones always stay).
    pub limit_alphabet: Option<usize>,
    pub min_frequency: u64,
    pub max_token_length: Option<usize>,
    pub tie_break: TieBreak,
}

#[cfg(test)]
impl TrainConfig {
    /// A plain configuration for tests: no prefix or suffix, no special tokens, `[UNK]`, the corpus's
    /// alphabet, no limits, first-seen ties. Tests change fields with `..TrainConfig::for_test(..)`.
    pub(crate) fn for_test(vocab_size: usize, mode: Mode) -> TrainConfig {
        TrainConfig {
            vocab_size,
            style: SymbolStyle { mode, prefix: None, suffix: None },
            special_tokens: vec![],
            unk_token: Some("[UNK]".into()),
            alphabet: Alphabet::Corpus,
            limit_alphabet: None,
            min_frequency: 0,
            max_token_length: None,
            tie_break: TieBreak::FirstSeen,
        }
    }
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
    /// How many pairs the veto refused (see `control`).
    pub vetoed: u64,
}

/// The base symbols (display strings) that `words` need, plus those the alphabet setting forces in, minus the
/// characters `limit_alphabet` leaves out.
pub fn base_alphabet(words: &[(&str, u64)], config: &TrainConfig) -> Result<Vec<String>> {
    let style = &config.style;
    let kept = match config.limit_alphabet {
        None => None,
        Some(limit) => Some(limited_characters(words, config, limit)?),
    };
    let mut seen: FxHashSet<String> = FxHashSet::default();
    if style.mode == Mode::Byte && style.prefix.is_none() && style.suffix.is_none() {
        // Fast path (a 10 MB word must not cost a hash lookup per byte).
        let mut present = [false; 256];
        for (word, _) in words {
            for &b in word.as_bytes() {
                present[b as usize] = true;
            }
        }
        seen.extend((0..256).filter(|&b| present[b]).map(|b| crate::vocab::BYTE_TO_CHAR[b].to_string()));
    } else if style.mode == Mode::Char && style.prefix.is_none() && style.suffix.is_none() {
        // Fast path for plain characters (a genome is 10^8 of them): ASCII in a table, the rest in a set.
        let mut ascii = [false; 128];
        let mut other: FxHashSet<char> = FxHashSet::default();
        for (word, _) in words {
            if word.is_ascii() {
                for &b in word.as_bytes() {
                    ascii[b as usize] = true;
                }
            } else {
                for c in word.chars() {
                    if c.is_ascii() {
                        ascii[c as usize] = true;
                    } else {
                        other.insert(c);
                    }
                }
            }
        }
        let keep = |c: &char| kept.as_ref().is_none_or(|kept| kept.contains(c));
        let chars = (0..128u8).filter(|&b| ascii[b as usize]).map(char::from).chain(other);
        seen.extend(chars.filter(keep).map(String::from));
    } else {
        let mut display = String::new();
        for (word, _) in words {
            let n = style.unit_count(word);
            let mut k = 0;
            style.for_each_unit(word, |unit, _, _| {
                let keep = kept.as_ref().is_none_or(|kept| unit.chars().next().is_some_and(|c| kept.contains(&c)));
                if keep {
                    style.symbol_display(unit, k == 0, k + 1 == n, &mut display);
                    if !seen.contains(display.as_str()) {
                        seen.insert(display.clone());
                    }
                }
                k += 1;
            });
        }
    }
    let forced_units: Vec<String> = match (&config.alphabet, style.mode) {
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
    let mut display = String::new();
    for unit in forced_units {
        for (first, last) in [(true, false), (false, false), (true, true), (false, true)] {
            style.symbol_display(&unit, first, last, &mut display);
            seen.insert(display.clone());
        }
    }
    Ok(seen.into_iter().collect())
}

/// `limit_alphabet` in char mode: the characters kept — those forced in by `initial_alphabet`, then the most
/// frequent (ties: the smaller code point) up to `limit` in all. Leaving characters out needs an unknown
/// token to stand for them.
fn limited_characters(words: &[(&str, u64)], config: &TrainConfig, limit: usize) -> Result<FxHashSet<char>> {
    if config.style.mode != Mode::Char {
        return Err(Error::value(format!(
            "limit_alphabet={limit} only applies to mode=\"char\": in byte mode the base vocabulary is the 256 \
             bytes; drop limit_alphabet or use mode=\"char\""
        )));
    }
    let mut frequency: rustc_hash::FxHashMap<char, u64> = rustc_hash::FxHashMap::default();
    let mut ascii = [0u64; 128];
    for (word, count) in words {
        if word.is_ascii() {
            for &b in word.as_bytes() {
                ascii[b as usize] = ascii[b as usize].saturating_add(*count);
            }
        } else {
            for c in word.chars() {
                let n = frequency.entry(c).or_default();
                *n = n.saturating_add(*count);
            }
        }
    }
    for (b, &n) in ascii.iter().enumerate() {
        if n > 0 {
            let total = frequency.entry(char::from(b as u8)).or_default();
            *total = total.saturating_add(n);
        }
    }
    let forced: Vec<char> = match &config.alphabet {
        Alphabet::CorpusPlus(chars) => chars.clone(),
        _ => Vec::new(),
    };
    let mut ranked: Vec<(char, u64)> =
        frequency.iter().filter(|(c, _)| !forced.contains(c)).map(|(&c, &n)| (c, n)).collect();
    ranked.sort_unstable_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    let room = limit.saturating_sub(forced.len());
    let mut kept: FxHashSet<char> = forced.iter().copied().collect();
    kept.extend(ranked.iter().take(room).map(|&(c, _)| c));
    if ranked.len() > room && config.unk_token.is_none() {
        let (c, n) = ranked[room];
        return Err(Error::value(format!(
            "limit_alphabet={limit} leaves out {} of the {} characters in the corpus (the most frequent of them: \
             {} seen {n} times), and without an unknown token they could not be encoded; pass \
             unk_token=\"[UNK]\" (or another string) or raise limit_alphabet",
            ranked.len() - room,
            frequency.len(),
            crate::error::py_repr(&c.to_string()),
        )));
    }
    Ok(kept)
}

/// Trains a vocabulary from word counts (in order of first appearance).
pub fn train(words: &[(&str, u64)], config: &TrainConfig, observer: &mut dyn Observer) -> Result<Trained> {
    prepare(words, config)?.run(observer)
}

/// The merge loop, ready to run: the words are copied into it, so the caller may free them first (the
/// corpus-wide word map is a good part of peak memory otherwise).
pub fn prepare<'c>(words: &[(&str, u64)], config: &'c TrainConfig) -> Result<Merger<'c>> {
    prepare_with(words, config, Engine::Auto)
}

/// `prepare` with the merge loop's layout chosen (the merges are the same; memory and speed differ).
pub fn prepare_with<'c>(words: &[(&str, u64)], config: &'c TrainConfig, engine: Engine) -> Result<Merger<'c>> {
    let base = base_alphabet(words, config)?;
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
    Merger::new(words, config, vocab, engine)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vocab_size: usize, mode: Mode, tie_break: TieBreak) -> TrainConfig {
        TrainConfig { tie_break, ..TrainConfig::for_test(vocab_size, mode) }
    }

    fn merges(t: &Trained) -> Vec<(String, String, u64)> {
        t.vocab
            .merges()
            .iter()
            .zip(&t.merge_counts)
            .map(|(m, &c)| {
                (
                    t.vocab.tokens[m.left as usize].display.to_string(),
                    t.vocab.tokens[m.right as usize].display.to_string(),
                    c,
                )
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
        assert_eq!(t.vocab.merges().len(), 1);
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

#[cfg(test)]
mod engine_tests {
    //! The compact layout must give exactly the merges of the slots layout, whatever the input and settings.
    use super::*;

    fn config(vocab_size: usize, mode: Mode, tie_break: TieBreak, max_len: Option<usize>) -> TrainConfig {
        TrainConfig {
            special_tokens: vec!["<s>".into()],
            max_token_length: max_len,
            tie_break,
            ..TrainConfig::for_test(vocab_size, mode)
        }
    }

    fn random_words(seed: u64, n: usize, len: (usize, usize), alphabet: &[char]) -> Vec<(String, u64)> {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        (0..n)
            .map(|_| {
                let l = len.0 + next() % (len.1 - len.0 + 1);
                let word: String = (0..l).map(|_| alphabet[next() % alphabet.len()]).collect();
                (word, 1 + (next() % 4) as u64)
            })
            .collect()
    }

    fn run(words: &[(String, u64)], config: &TrainConfig, engine: Engine) -> (Vec<(u32, u32, u32)>, Vec<u64>) {
        let words: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
        let t = prepare_with(&words, config, engine).unwrap().run(&mut Silent).unwrap();
        let sequential = (t.vocab.merges().iter().map(|m| (m.left, m.right, m.result)).collect(), t.merge_counts);
        // Recounting on two threads (split between words) changes nothing.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let t = prepare_with(&words, config, engine).unwrap().with_pool(&pool).run(&mut Silent).unwrap();
        let pooled = (t.vocab.merges().iter().map(|m| (m.left, m.right, m.result)).collect(), t.merge_counts);
        assert_eq!(sequential, pooled, "with a pool");
        sequential
    }

    #[test]
    fn compact_layout_equals_slots_on_words_given_as_tokens() {
        // Words that are already tokens (an extension, SuperBPE's second stage) take one position per token in
        // the compact layout; a merge that makes an existing token again from other parts ("a" + "b" when "ab"
        // is one of the initial tokens) leaves symbols of one id that take different numbers of positions.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        for seed in 0..48u64 {
            let alphabet: &[char] = if seed % 2 == 0 { &['a', 'b'] } else { &['a', 'b', 'c', '日'] };
            let mode = if seed % 4 < 2 { Mode::Char } else { Mode::Byte };
            let first = config(280, mode, TieBreak::FirstSeen, None);
            let text = random_words(seed, 60, (1, 10), alphabet);
            let text: Vec<(&str, u64)> = text.iter().map(|(w, c)| (w.as_str(), *c)).collect();
            let trained = prepare_with(&text, &first, Engine::Slots).unwrap().run(&mut Silent).unwrap();
            let tokens: Vec<u32> =
                (0..trained.vocab.len() as u32).filter(|&t| !trained.vocab.tokens[t as usize].special).collect();
            let mut x = seed + 1;
            let mut next = |n: usize| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) as usize % n
            };
            let mut words = layout::SymbolWords::default();
            for _ in 0..1 + next(4) {
                let mut part = layout::SymbolPart::default();
                for _ in 0..5 + next(40) {
                    for _ in 0..2 + next(30) {
                        part.ids.push(tokens[next(tokens.len())]);
                    }
                    part.push_word(1 + next(3) as u64).unwrap();
                }
                words.push_part(part);
            }
            for tie in [TieBreak::FirstSeen, TieBreak::Hf, TieBreak::Lexicographic] {
                for max_len in [None, Some(4)] {
                    let c = config(trained.vocab.len() + 60, mode, tie, max_len);
                    let run = |engine: Engine| {
                        let merger = Merger::from_symbols(&words, &c, trained.vocab.clone(), engine, &pool).unwrap();
                        assert_eq!(merger.engine(), if engine == Engine::Slots { "slots" } else { "compact" });
                        let t = merger.with_pool(&pool).run(&mut Silent).unwrap();
                        (
                            t.vocab.merges().iter().map(|m| (m.left, m.right, m.result)).collect::<Vec<_>>(),
                            t.merge_counts,
                        )
                    };
                    let slots = run(Engine::Slots);
                    let merged = slots.0.len() > trained.vocab.merges().len();
                    assert!(merged || max_len.is_some(), "seed {seed}: the words had pairs to merge");
                    assert_eq!(slots, run(Engine::Compact), "seed {seed} {tie:?} {max_len:?} {mode:?}");
                }
            }
        }
    }

    #[test]
    fn compact_layout_equals_slots() {
        let alphabets: [&[char]; 3] = [&['A', 'C', 'G', 'T'], &['a', 'b'], &['a', 'b', 'é', '日']];
        for seed in 0..12u64 {
            let alphabet = alphabets[seed as usize % 3];
            let len = if seed % 2 == 0 { (1, 12) } else { (50, 400) };
            let words = random_words(seed, 40, len, alphabet);
            for tie in [TieBreak::FirstSeen, TieBreak::Hf, TieBreak::Lexicographic] {
                for max_len in [None, Some(3)] {
                    for mode in [Mode::Char, Mode::Byte] {
                        let c = config(300, mode, tie, max_len);
                        let slots = run(&words, &c, Engine::Slots);
                        let compact = run(&words, &c, Engine::Compact);
                        assert_eq!(slots, compact, "seed {seed} {tie:?} {max_len:?} {mode:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn compact_layout_equals_slots_with_markers_min_frequency_and_limits() {
        let words = random_words(99, 30, (40, 300), &['A', 'C', 'G', 'T', 'N']);
        for tie in [TieBreak::FirstSeen, TieBreak::Hf, TieBreak::Lexicographic] {
            let mut c = config(400, Mode::Char, tie, None);
            c.style.prefix = Some("##".into());
            assert_eq!(run(&words, &c, Engine::Slots), run(&words, &c, Engine::Compact), "prefix {tie:?}");
            c.style.prefix = None;
            c.style.suffix = Some("</w>".into());
            assert_eq!(run(&words, &c, Engine::Slots), run(&words, &c, Engine::Compact), "suffix {tie:?}");
            c.style.suffix = None;
            c.min_frequency = 6;
            assert_eq!(run(&words, &c, Engine::Slots), run(&words, &c, Engine::Compact), "min_frequency {tie:?}");
            c.min_frequency = 0;
            c.alphabet = Alphabet::CorpusPlus(vec!['A', 'C']);
            c.limit_alphabet = Some(3);
            assert_eq!(run(&words, &c, Engine::Slots), run(&words, &c, Engine::Compact), "limit {tie:?}");
        }
        // All counts equal (the usual case for genome chunks): no per-word count lookups.
        let uniform: Vec<(String, u64)> = words.iter().map(|(w, _)| (w.clone(), 1)).collect();
        let c = config(400, Mode::Char, TieBreak::FirstSeen, Some(6));
        assert_eq!(run(&uniform, &c, Engine::Slots), run(&uniform, &c, Engine::Compact));
    }

    #[test]
    fn compact_layout_equals_slots_on_two_letters_to_the_last_pair() {
        // Training until no pair is left goes through every threshold down to 1 (several recounts).
        for seed in 0..20u64 {
            let words = random_words(seed, 6, (100, 1500), &['a', 'b']);
            let c = config(60_000, Mode::Char, TieBreak::FirstSeen, None);
            assert_eq!(run(&words, &c, Engine::Slots), run(&words, &c, Engine::Compact), "seed {seed}");
        }
    }

    #[test]
    fn compact_layout_handles_runs_and_wide_vocabularies() {
        // A run of one symbol (overlapping pairs) and a vocabulary above 65 535 ids (4-byte symbols).
        let words = vec![("a".repeat(5000), 1), ("ab".repeat(3000), 2)];
        for vocab_size in [40, 70_000] {
            let c = config(vocab_size, Mode::Char, TieBreak::FirstSeen, None);
            assert_eq!(run(&words, &c, Engine::Slots), run(&words, &c, Engine::Compact), "{vocab_size}");
        }
    }
}
