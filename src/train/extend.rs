//! Extending an existing tokenizer with merges learned on a corpus, and cutting one down to a smaller size.
//!
//! Extending: each unique word of the corpus starts as the tokenizer makes it — its existing merges applied
//! first, in rank order — and the merge loop continues from there, with the tokenizer's vocabulary as it is
//! (new tokens take the ids after the largest one; unused ids stay unused; special tokens keep theirs). On the
//! corpus a tokenizer was trained on, with the same options, `extend` then makes exactly the merges the
//! longer training run made: the words are where that run was after the same merges, and the merge loop's
//! choices depend only on the words and the vocabulary.
//!
//! How a word is put into its tokens:
//! - by the tokenizer's own encoder (its merge rule: tiktoken's for tiktoken vocabularies, the merges list
//!   for the others) — for every loaded vocabulary, and for trained ones whose merges never made a token
//!   twice;
//! - by replaying the merges one after the other, each at all its occurrences (`replay`), for trained
//!   vocabularies where a merge made a token that already existed. Training applies merges in sequence, and
//!   when a token is made again a pair ranked earlier can reappear after its turn: replaying leaves it, as
//!   training did, where "lowest rank first" (the encoder) would still merge it.
//!
//! Performance notes: the words are encoded in parallel on the counting threads (a per-thread encoder cache
//! makes the frequent short words cheap), so an extension costs its counting plus merges, less than a
//! training run to the same size, which also had to choose the earlier merges. SuperBPE's second stage, whose
//! stretches were recorded as the first stage's words (`stretches`), encodes each distinct word once and lays
//! the stretches out straight from them (`EncodedStretches`: 110 MB of English, 3.45 M stretches from 211 000
//! words, 26 M tokens: encoding and layout 0.23-0.34 s on 2 threads, against 0.45-0.5 s when the stretches'
//! tokens were first put together in parts of their own, 104 MB of fresh memory, and then copied).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::counts::WordCounter;
use super::layout::{PartSize, SymbolPart, SymbolWords, TokenWords};
use super::stretches::{Stretch, StretchBlock, Stretches};
use super::{Engine, Merger, TieBreak, TrainConfig};
use crate::encode::caches::Scratch;
use crate::encode::piece::{PieceEncoder, PieceError};
use crate::error::{Error, Result, py_repr};
use crate::pretokenize::PreTokenizer;
use crate::tokenizer::Tokenizer;
use crate::vocab::{DisplayIndex, Mode, Token, Vocab};

/// Fewest words per parallel task when encoding the corpus's words; tasks are larger on large corpora (a few
/// per thread), so that each thread's encoder cache warms up once rather than once per task.
const WORDS_PER_TASK: usize = 1 << 14;
const TASKS_PER_THREAD: usize = 4;

/// The corpus `words` (unique words in order of first appearance, counted with `counted_with`, the
/// pre-tokenizer the extension will encode with: `tok`'s, or a coarser one for SuperBPE's second stage) as
/// `tok` makes them, for extending it to `config.vocab_size` ids (checked first), encoded on `pool`. The
/// words can be freed before `prepare_extension` lays these out (they are a good part of the peak).
fn encode_for_extension(
    tok: &Tokenizer,
    words: &[(&str, u64)],
    counted_with: &PreTokenizer,
    config: &TrainConfig,
    pool: &rayon::ThreadPool,
) -> Result<SymbolWords> {
    check_extension(tok, config, pool)?;
    encode_words(tok, words, counted_with, pool)
}

/// The merge loop for extending `tok` to `config.vocab_size` ids (checked first) on the words of `counter` as `tok`
/// makes them, consuming them: SuperBPE's stretches when the counter recorded them (laid out straight from the
/// first stage's encoded words: see `EncodedStretches`), else the pieces it kept as they came (each once), else
/// its counted words. Their memory goes back to the OS as soon as they are laid out (or encoded, when they are
/// text): with it, they would make the peak.
pub fn prepare_counted<'c>(
    tok: &Tokenizer,
    counter: &mut WordCounter,
    config: &'c TrainConfig,
    engine: Engine,
) -> Result<Merger<'c>> {
    let merger = if let Some(stretches) = counter.take_stretches()? {
        check_extension(tok, config, counter.pool())?;
        let words = EncodedStretches::new(tok, &stretches, counter.pool())?;
        prepare_extension(tok, &words, config, engine, counter.pool())?
    } else {
        let kept = counter.take_pieces()?;
        let counts = if kept.is_none() { counter.take_words()? } else { Default::default() };
        let words: Vec<(&str, u64)> = match &kept {
            Some(kept) => {
                // (At its size from the start: growing copies it, through fresh pages the kernel zeroes.)
                let mut words = Vec::with_capacity(kept.iter().map(|pieces| pieces.len()).sum());
                words.extend(kept.iter().flat_map(|pieces| pieces.iter().map(|piece| (piece, 1))));
                words
            }
            None => counts.iter().map(|(w, c)| (w.as_str(), *c)).collect(),
        };
        let symbols = encode_for_extension(tok, &words, counter.pretokenizer(), config, counter.pool())?;
        drop(words);
        drop((kept, counts));
        release_counting_memory(counter);
        prepare_extension(tok, &symbols, config, engine, counter.pool())?
    };
    release_counting_memory(counter);
    Ok(merger)
}

/// Hands the memory that `counter`'s threads freed back to the OS (they allocated the words).
fn release_counting_memory(counter: &WordCounter) {
    counter.pool().broadcast(|_| crate::release_freed_memory());
    crate::release_freed_memory();
}

/// Refuses to extend `tok` to `config.vocab_size` ids when that is fewer than it has, or when the extension could
/// not keep its ids.
fn check_extension(tok: &Tokenizer, config: &TrainConfig, pool: &rayon::ThreadPool) -> Result<()> {
    let have = tok.vocab.len();
    if config.vocab_size < have {
        return Err(Error::value(format!(
            "vocab_size={} is smaller than the tokenizer, which already has {have} ids; extending adds tokens \
             after them: use vocab_size > {have} (or Tokenizer.truncate to cut a tokenizer down)",
            config.vocab_size
        )));
    }
    if config.style != tok.vocab.style {
        return Err(Error::value("internal error: an extension must keep the tokenizer's symbol style".to_string()));
    }
    if tok.vocab.rank_by_bytes {
        check_merges_keep_ids(&tok.vocab, pool)?;
    }
    Ok(())
}

/// The merge loop for extending `tok` on its encoding of the corpus's words (`encode_for_extension`), with
/// the layout built on `pool`.
pub fn prepare_extension<'c>(
    tok: &Tokenizer,
    symbols: &impl TokenWords,
    config: &'c TrainConfig,
    engine: Engine,
    pool: &rayon::ThreadPool,
) -> Result<Merger<'c>> {
    Merger::from_symbols(symbols, config, tok.vocab.clone(), engine, pool)
}

/// The extended tokenizer: `extended` (around the trained vocabulary, with the pre-tokenizer the words were
/// counted with) with `old`'s training record continued. A tiktoken vocabulary (whose rule merges any two
/// parts that make a token) merges by its merges list from now on: its new tokens were learned as pairs,
/// and tiktoken's rule could make one of them from another pair of parts, earlier than training did
/// (`prepare_extension` checked that the merges list gives the old ids).
pub fn finish_extension(
    old: &Tokenizer,
    mut extended: Tokenizer,
    tie_break: TieBreak,
    new_counts: Vec<u64>,
) -> Result<Tokenizer> {
    if extended.vocab.merges().len() > old.vocab.merges().len() {
        extended.vocab.rank_by_bytes = false;
    }
    extended.tie_break = Some(tie_break);
    extended.merge_counts = old.merge_counts.as_ref().map(|c| c.iter().copied().chain(new_counts).collect());
    Ok(extended)
}

/// A tiktoken vocabulary can go on by its merges list only if that list gives every token's id, as tiktoken's
/// rule does (OpenAI's vocabularies do: the merges are derived from the ranks); else extending would change
/// how the old tokens are made.
fn check_merges_keep_ids(vocab: &Vocab, pool: &rayon::ThreadPool) -> Result<()> {
    let mut by_merges = vocab.clone();
    by_merges.rank_by_bytes = false;
    let Some(encoder) = crate::encode::piece_encoder_by_rule(&by_merges, false) else {
        return Ok(()); // not byte-level: no tiktoken rule to leave
    };
    let wrong = pool.install(|| {
        vocab.tokens.par_iter().enumerate().find_map_any(|(id, token)| {
            if token.special || token.bytes.len() < 2 {
                return None;
            }
            let mut parts = Vec::new();
            encoder.split_below(&token.bytes, u32::MAX, &mut Scratch::default(), &mut parts);
            (parts != [id as u32]).then_some(id)
        })
    });
    match wrong {
        None => Ok(()),
        Some(id) => Err(Error::value(format!(
            "this tiktoken vocabulary cannot be extended exactly: its token {id} ({}) is not what its merges make              of its bytes, so the new tokens, which are learned as merges, could not be added without changing              how old text is encoded",
            py_repr(&vocab.tokens[id].display)
        ))),
    }
}

/// Each word as `tok` makes it (see the module notes), on `pool`; words of one token are left out (they hold no
/// pair to merge). Words counted with another pattern than `tok`'s (`counted_with`) are longer stretches of text
/// (SuperBPE's second stage): see `Junctions`.
pub fn encode_words(
    tok: &Tokenizer,
    words: &[(&str, u64)],
    counted_with: &PreTokenizer,
    pool: &rayon::ThreadPool,
) -> Result<SymbolWords> {
    let encoder = WordEncoder::new(tok, counted_with.pattern != tok.pretokenizer.pattern);
    let encode_chunk = |scratch: &mut Scratch, chunk: &[(&str, u64)]| -> Result<SymbolPart> {
        let bytes: usize = chunk.iter().map(|(w, _)| w.len()).sum();
        let mut part = symbol_part(bytes, chunk.len());
        for &(word, count) in chunk {
            let before = part.ids.len();
            encoder.encode(word, scratch, &mut part.ids)?;
            push_mergeable(&mut part, before, count)?;
        }
        Ok(part)
    };
    let parts: Vec<Result<SymbolPart>> = pool.install(|| {
        let per_task = WORDS_PER_TASK.max(words.len() / (pool.current_num_threads() * TASKS_PER_THREAD) + 1);
        words.par_chunks(per_task).map_init(Scratch::default, encode_chunk).collect()
    });
    // Kept in parts, as encoded: the layout is built from them (in parallel), not from one copy of them all.
    let mut out = SymbolWords::default();
    for part in parts {
        out.push_part(part?);
    }
    Ok(out)
}

/// SuperBPE's stretches, recorded as the first stage's words (see `stretches`), as `tok` (the first stage) makes
/// them, in order, as `TokenWords` (one part per block of stretches). Each distinct word is encoded once; a stretch
/// is its words' tokens one after the other — put together only as the layout reads them, with no copy of all
/// the tokens in between — unless a merge could join two of its words (`Junctions`): then it is encoded whole
/// here, as are the stretches kept as text.
struct EncodedStretches<'s> {
    stretches: &'s Stretches,
    /// The first stage's words, encoded, with the joins to look out for (None: every stretch is encoded whole).
    words: Option<(EncodedWords, Junctions)>,
    whole: Vec<WholeStretches>,
    /// Per block: what it holds (found while encoding, so that the layout reads the stretches only once).
    sizes: Vec<PartSize>,
}

/// A block's stretches encoded whole, in order (one word each), and their places in the block.
type WholeStretches = (SymbolPart, Vec<u32>);

impl<'s> EncodedStretches<'s> {
    fn new(tok: &Tokenizer, stretches: &'s Stretches, pool: &rayon::ThreadPool) -> Result<EncodedStretches<'s>> {
        let mut encoder = WordEncoder::new(tok, true);
        let words = match encoder.junctions.take() {
            Some(junctions) => Some((EncodedWords::new(&encoder, stretches, pool)?, junctions)),
            None => None,
        };
        let vocab = &tok.vocab;
        let encode_whole = |(scratch, text): &mut (Scratch, String), block: &StretchBlock| {
            let (mut part, mut places, mut size) = (SymbolPart::default(), Vec::new(), PartSize::default());
            for (place, stretch) in block.iter().enumerate() {
                let before = part.ids.len();
                match stretch {
                    Stretch::Text(t) => match &words {
                        // (Piece by piece when no merge joins two pieces: the encoder's cache has them.)
                        Some((_, junctions)) => encoder.encode_pieces(t, junctions, scratch, &mut part.ids)?,
                        None => encoder.encode_whole(t, scratch, &mut part.ids)?,
                    },
                    Stretch::Words(ws) => match &words {
                        Some((words, junctions)) if !words.joinable(ws, junctions) => {
                            let tokens = ws.iter().map(|&w| words.ids(w).len()).sum();
                            size.add(tokens, 1, || ws.iter().map(|&w| words.units[w as usize] as usize).sum());
                            continue;
                        }
                        _ => {
                            text.clear();
                            text.extend(ws.iter().map(|&w| stretches.word(w)));
                            encoder.encode_whole(text, scratch, &mut part.ids)?;
                        }
                    },
                }
                let tokens = &part.ids[before..];
                size.add(tokens.len(), 1, || tokens.iter().map(|&id| vocab.units(id)).sum());
                part.push_word(1)?;
                places.push(place as u32);
            }
            Ok(((part, places), size))
        };
        let done: Result<Vec<(WholeStretches, PartSize)>> = pool.install(|| {
            let fresh = || (Scratch::default(), String::new());
            stretches.blocks.par_iter().map_init(fresh, encode_whole).collect()
        });
        let (whole, sizes) = done?.into_iter().unzip();
        Ok(EncodedStretches { stretches, words, whole, sizes })
    }
}

impl TokenWords for EncodedStretches<'_> {
    fn part_count(&self) -> usize {
        self.stretches.blocks.len()
    }

    fn part_sizes(&self, _vocab: &Vocab, _pool: &rayon::ThreadPool) -> Vec<PartSize> {
        self.sizes.clone()
    }

    fn for_each_word(&self, i: usize, word: &mut dyn FnMut(&[u32], u64)) {
        let (part, places) = &self.whole[i];
        let mut whole = part.iter().zip(places).peekable();
        let mut tokens = Vec::new();
        for (place, stretch) in self.stretches.blocks[i].iter().enumerate() {
            if let Some(((ids, count), _)) = whole.next_if(|(_, at)| **at as usize == place) {
                word(ids, count);
            } else if let (Stretch::Words(ws), Some((words, _))) = (stretch, &self.words) {
                tokens.clear();
                for &w in ws {
                    words.push_ids(w, &mut tokens);
                }
                word(&tokens, 1);
            }
        }
    }
}

/// Room for a part of `words` words of `bytes` bytes: two bytes per token, seldom outgrown (English encodes to
/// ~4): a growing vector copies itself into fresh pages, which the kernel zeroes first, and holds up to twice its
/// size meanwhile.
fn symbol_part(bytes: usize, words: usize) -> SymbolPart {
    SymbolPart {
        ids: Vec::with_capacity(bytes / 2 + 16),
        ends: Vec::with_capacity(words),
        counts: Vec::with_capacity(words),
    }
}

/// Ends the word whose tokens start at `before` in `part`, occurring `count` times, or drops it when it is one
/// token: no pair to merge, ever (most of SuperBPE's pieces are).
fn push_mergeable(part: &mut SymbolPart, before: usize, count: u64) -> Result<()> {
    if part.ids.len() - before < 2 {
        part.ids.truncate(before);
        return Ok(());
    }
    part.push_word(count)
}

/// How a word becomes `tok`'s tokens (see the module notes).
struct WordEncoder<'t> {
    vocab: &'t Vocab,
    pretokenizer: &'t PreTokenizer,
    replay: Option<Replay>,
    fast: Option<&'t PieceEncoder>,
    /// For words longer than `tok`'s pieces (stretches), encoded piece by piece when no merge joins two pieces.
    junctions: Option<Junctions>,
}

impl<'t> WordEncoder<'t> {
    /// `stretches`: the words may be longer than `tok`'s pieces (they were cut with another pattern).
    fn new(tok: &'t Tokenizer, stretches: bool) -> WordEncoder<'t> {
        let vocab = &tok.vocab;
        let replay = (!vocab.explicit_ids && makes_a_token_twice(vocab)).then(|| Replay::new(vocab));
        let fast =
            if replay.is_none() { tok.fast.get_or_init(|| crate::encode::piece_encoder(vocab)).as_ref() } else { None };
        let junctions = (fast.is_some() && stretches && !vocab.whole_pieces).then(|| Junctions::new(vocab));
        WordEncoder { vocab, pretokenizer: &tok.pretokenizer, replay, fast, junctions }
    }

    /// Appends `word`'s tokens to `ids`.
    fn encode(&self, word: &str, scratch: &mut Scratch, ids: &mut Vec<u32>) -> Result<()> {
        match &self.junctions {
            Some(junctions) => self.encode_pieces(word, junctions, scratch, ids),
            None => self.encode_whole(word, scratch, ids),
        }
    }

    /// Appends `word`'s tokens to `ids`, the word cut into `tok`'s pieces, which `junctions` (`tok`'s) tell
    /// whether a merge could join.
    fn encode_pieces(
        &self,
        word: &str,
        junctions: &Junctions,
        scratch: &mut Scratch,
        ids: &mut Vec<u32>,
    ) -> Result<()> {
        let Some(encoder) = self.fast else {
            return self.encode_whole(word, scratch, ids);
        };
        // Piece by piece (the frequent pieces come from the encoder's cache), unless a merge could join two
        // pieces: then the whole stretch.
        // (A pattern that leaves text out of its pieces does not cut the stretch: whole, then.)
        let before = ids.len();
        let mut covered = 0;
        let mut joinable = false;
        let mut failed = Ok(());
        self.pretokenizer.split(word, |piece| {
            let at = piece.as_ptr() as usize - word.as_ptr() as usize;
            let bytes = piece.as_bytes();
            joinable |= at != covered || (at > 0 && junctions.joins(word.as_bytes()[at - 1], bytes[0]));
            covered = at + bytes.len();
            if !joinable && failed.is_ok() {
                failed = encode_fast(encoder, self.vocab, piece, scratch, ids);
            }
        })?;
        joinable |= covered != word.len();
        if joinable {
            ids.truncate(before);
            encode_fast(encoder, self.vocab, word, scratch, ids)
        } else {
            failed
        }
    }

    /// Appends `word`'s tokens to `ids`, the word taken as one piece.
    fn encode_whole(&self, word: &str, scratch: &mut Scratch, ids: &mut Vec<u32>) -> Result<()> {
        match (&self.replay, self.fast) {
            (Some(replay), _) => {
                let before = ids.len();
                initial_symbols(self.vocab, word, ids)?;
                replay.apply(ids, before);
                Ok(())
            }
            (None, Some(encoder)) => encode_fast(encoder, self.vocab, word, scratch, ids),
            (None, None) => encode_general(self.vocab, word, ids),
        }
    }
}

/// The tokens of every word the stretches refer to, each encoded once, with the bytes at its two ends.
struct EncodedWords {
    ids: Vec<u32>,
    /// Word `i`'s tokens are `ids[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    /// Each word's first and last byte.
    edges: Vec<(u8, u8)>,
    /// Units (bytes or characters) each word's tokens were made of.
    units: Vec<u32>,
    /// Each word's token when it is one, else `NOT_SINGLE`.
    single: Vec<u32>,
}

/// On `EncodedWords::single`: the word is more than one token.
const NOT_SINGLE: u32 = u32::MAX;

impl EncodedWords {
    fn new(encoder: &WordEncoder<'_>, stretches: &Stretches, pool: &rayon::ThreadPool) -> Result<EncodedWords> {
        let n = stretches.word_count() as u32;
        let per_task = WORDS_PER_TASK.max(n as usize / (pool.current_num_threads() * TASKS_PER_THREAD) + 1) as u32;
        // Per task: its words' tokens, how many each has, their edges, their units.
        type Chunk = (Vec<u32>, Vec<u32>, Vec<(u8, u8)>, Vec<u32>);
        let encode_range = |scratch: &mut Scratch, from: u32| -> Result<Chunk> {
            let (mut ids, mut lengths, mut edges, mut units) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for w in from..(from + per_task).min(n) {
                let word = stretches.word(w);
                let before = ids.len();
                encoder.encode_whole(word, scratch, &mut ids)?;
                lengths.push((ids.len() - before) as u32);
                edges.push((word.as_bytes()[0], word.as_bytes()[word.len() - 1]));
                units.push(ids[before..].iter().map(|&id| encoder.vocab.units(id) as u32).sum());
            }
            Ok((ids, lengths, edges, units))
        };
        let chunks: Vec<Result<Chunk>> = pool.install(|| {
            (0..n.div_ceil(per_task))
                .into_par_iter()
                .map_init(Scratch::default, |s, i| encode_range(s, i * per_task))
                .collect()
        });
        let mut out = EncodedWords {
            ids: Vec::new(),
            starts: vec![0],
            edges: Vec::with_capacity(n as usize),
            units: Vec::with_capacity(n as usize),
            single: Vec::with_capacity(n as usize),
        };
        for chunk in chunks {
            let (ids, lengths, edges, units) = chunk?;
            out.units.extend_from_slice(&units);
            let mut at = 0;
            for length in lengths {
                out.single.push(if length == 1 { ids[at] } else { NOT_SINGLE });
                at += length as usize;
                let end = out.starts.last().copied().unwrap_or(0) as u64 + length as u64;
                out.starts.push(u32::try_from(end).map_err(|_| {
                    Error::value(
                        "the first stage's words hold more than 2^32 tokens: train SuperBPE on a sample".to_string(),
                    )
                })?);
            }
            out.ids.extend_from_slice(&ids);
            out.edges.extend_from_slice(&edges);
        }
        Ok(out)
    }

    /// Appends word `w`'s tokens to `tokens`.
    #[inline]
    fn push_ids(&self, w: u32, tokens: &mut Vec<u32>) {
        // (Most words are one token: one read, not two far apart.)
        match self.single[w as usize] {
            NOT_SINGLE => tokens.extend_from_slice(self.ids(w)),
            id => tokens.push(id),
        }
    }

    fn ids(&self, w: u32) -> &[u32] {
        &self.ids[self.starts[w as usize] as usize..self.starts[w as usize + 1] as usize]
    }

    /// Whether a merge could join two consecutive words of `words`.
    fn joinable(&self, words: &[u32], junctions: &Junctions) -> bool {
        words.windows(2).any(|pair| junctions.joins(self.edges[pair[0] as usize].1, self.edges[pair[1] as usize].0))
    }
}

/// The pairs of bytes that a merge can join: the last byte of its left part and the first of its right part
/// (tiktoken's rule, which merges any split of a token: every two adjacent bytes of a token).
///
/// A stretch of text cut into pieces encodes to its pieces' tokens one after the other unless some merge
/// joins two of them: the first token to cross a cut would be made by a merge whose left part ends at the
/// cut and whose right part starts there, so if no merge joins the two bytes around any cut, no token
/// crosses one, and each piece is merged as if it were alone (in the same order: lowest rank first). So the
/// second stage of SuperBPE, whose words (stretches of several first-stage words, millions of them, nearly all
/// seen once) would each go through the merge, encodes their first-stage words instead, which the encoder's
/// cache holds (110 MB of English on 2 threads: ~9 s whole, 0.6-0.9 s so), and only a stretch with a cut that
/// a merge could join is encoded whole (with gpt2's pattern: "'tis", where the contraction "'t" meets "is").
struct Junctions {
    bits: Vec<u64>,
}

impl Junctions {
    fn new(vocab: &Vocab) -> Junctions {
        let mut junctions = Junctions { bits: vec![0; 256 * 256 / 64] };
        if vocab.rank_by_bytes {
            for token in vocab.tokens.iter().filter(|t| !t.special) {
                for pair in token.bytes.windows(2) {
                    junctions.add(pair[0], pair[1]);
                }
            }
        } else {
            for m in vocab.merges() {
                let (left, right) = (&vocab.tokens[m.left as usize].bytes, &vocab.tokens[m.right as usize].bytes);
                if let (Some(&last), Some(&first)) = (left.last(), right.first()) {
                    junctions.add(last, first);
                }
            }
        }
        junctions
    }

    fn add(&mut self, last: u8, first: u8) {
        let k = (last as usize) << 8 | first as usize;
        self.bits[k / 64] |= 1 << (k % 64);
    }

    /// Whether a merge could join a piece ending with `last` to one starting with `first`.
    fn joins(&self, last: u8, first: u8) -> bool {
        let k = (last as usize) << 8 | first as usize;
        self.bits[k / 64] & (1 << (k % 64)) != 0
    }
}

/// Whether some merge of a trained vocabulary made a token that already existed.
fn makes_a_token_twice(vocab: &Vocab) -> bool {
    let base = vocab.num_special + vocab.num_base;
    let mut made = vec![false; vocab.len()];
    vocab.merges().iter().any(|m| {
        let twice = (m.result as usize) < base || made[m.result as usize];
        made[m.result as usize] = true;
        twice
    })
}

/// The error for a word with a unit no token stands for (and no unknown token).
fn unknown_unit(vocab: &Vocab, word: &str, offset: usize) -> Error {
    let unit = match vocab.style.mode {
        Mode::Char => {
            word[offset..].chars().next().map(|c| format!("character {} (U+{:04X})", py_repr(&c.to_string()), c as u32))
        }
        Mode::Byte => word.as_bytes().get(offset).map(|b| format!("byte 0x{b:02X}")),
    }
    .unwrap_or_default();
    Error::value(format!(
        "the corpus holds the {unit} (in the word {}), which this tokenizer has no token for and no unk_token to \
         stand for: extending keeps the tokenizer's base symbols, so it cannot learn tokens with it. Remove such \
         text from the corpus, or extend a tokenizer with a token for every unit (byte-level ones have all 256 \
         bytes)",
        py_repr(&word.chars().take(40).collect::<String>())
    ))
}

fn initial_symbols(vocab: &Vocab, word: &str, out: &mut Vec<u32>) -> Result<()> {
    vocab.initial_symbols(word, out).map_err(|u| unknown_unit(vocab, word, u.offset))
}

/// A word through the fast piece encoder (the tokenizer's own).
fn encode_fast(
    encoder: &PieceEncoder,
    vocab: &Vocab,
    word: &str,
    scratch: &mut Scratch,
    out: &mut Vec<u32>,
) -> Result<()> {
    encoder.encode(word.as_bytes(), scratch, out).map_err(|error| match error {
        PieceError::UnknownByte(offset) => unknown_unit(vocab, word, offset),
        PieceError::OutOfMemory(bytes) => Error::memory(bytes, "extending (encoding a word)"),
    })
}

/// A word through the general path (vocabularies with word markers), as `Tokenizer::encode` takes it.
fn encode_general(vocab: &Vocab, word: &str, out: &mut Vec<u32>) -> Result<()> {
    if vocab.whole_pieces
        && let Some(id) = vocab.id_of(word)
        && (!vocab.tokens[id as usize].special || vocab.unk == Some(id))
    {
        out.push(id);
        return Ok(());
    }
    let start = out.len();
    initial_symbols(vocab, word, out)?;
    let mut symbols = out.split_off(start);
    crate::encode::apply_merges(&mut symbols, vocab.merge_rank());
    out.extend_from_slice(&symbols);
    Ok(())
}

/// Merges replayed in sequence: a pair merges at each rank it was merged at, and an occurrence that appears
/// after the last of them stays (see the module notes).
struct Replay {
    /// `(left, right)` → its merges as `(rank, result)`, by rank.
    ranks: FxHashMap<(u32, u32), Vec<(u32, u32)>>,
}

impl Replay {
    fn new(vocab: &Vocab) -> Replay {
        let mut ranks: FxHashMap<(u32, u32), Vec<(u32, u32)>> = FxHashMap::default();
        for (rank, m) in vocab.merges().iter().enumerate() {
            ranks.entry((m.left, m.right)).or_default().push((rank as u32, m.result));
        }
        Replay { ranks }
    }

    /// The first merge of `(left, right)` at rank `from` or later.
    fn next(&self, left: u32, right: u32, from: u32) -> Option<(u32, u32)> {
        let merges = self.ranks.get(&(left, right))?;
        merges.iter().copied().find(|&(rank, _)| rank >= from)
    }

    /// Replays the merges on `symbols[start..]`: a heap of (rank, position) over a linked list, so a long word
    /// costs O(n log n) (popping in rank then position order merges each rank left to right).
    fn apply(&self, symbols: &mut Vec<u32>, start: usize) {
        const GONE: u32 = u32::MAX;
        let word = &mut symbols[start..];
        let n = word.len();
        if n < 2 {
            return;
        }
        let mut next: Vec<u32> = (1..=n as u32).collect();
        next[n - 1] = GONE;
        let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
        prev[0] = GONE;
        let mut heap = BinaryHeap::new();
        for p in 0..n - 1 {
            if let Some((rank, _)) = self.next(word[p], word[p + 1], 0) {
                heap.push(Reverse((rank, p as u32)));
            }
        }
        while let Some(Reverse((rank, p))) = heap.pop() {
            let q = next[p as usize];
            if word[p as usize] == GONE || q == GONE {
                continue;
            }
            // Still this pair, and `rank` its turn? (Entries are pushed again when a neighbour changes.)
            let Some((due, result)) = self.next(word[p as usize], word[q as usize], rank) else { continue };
            if due != rank {
                continue;
            }
            word[p as usize] = result;
            word[q as usize] = GONE;
            let after = next[q as usize];
            next[p as usize] = after;
            if after != GONE {
                prev[after as usize] = p;
                if let Some((r, _)) = self.next(result, word[after as usize], rank) {
                    heap.push(Reverse((r, p)));
                }
            }
            let before = prev[p as usize];
            if before != GONE
                && let Some((r, _)) = self.next(word[before as usize], result, rank)
            {
                heap.push(Reverse((r, before)));
            }
        }
        let mut kept = start;
        for i in start..start + n {
            if symbols[i] != GONE {
                symbols[kept] = symbols[i];
                kept += 1;
            }
        }
        symbols.truncate(kept);
    }
}

/// `tok` cut down to `size` ids: for a tokenizer trained here, exactly what training with `vocab_size=size`
/// gives (its merges are a prefix of the longer run's, up to the one that made token `size - 1`). For a
/// vocabulary whose ids a file gives (tiktoken, GPT-2, HF), the tokens with ids below `size` and the merges
/// among them; special tokens keep their ids.
pub fn truncated(tok: &Tokenizer, size: usize) -> Result<Tokenizer> {
    let v = &tok.vocab;
    if size > v.len() {
        return Err(Error::value(format!(
            "cannot truncate to {size} ids: this tokenizer has {} ids; truncate to a smaller size (extend makes \
             a larger one)",
            v.len()
        )));
    }
    let (vocab, kept_merges) = if v.explicit_ids { truncated_explicit(v, size)? } else { truncated_layout(v, size)? };
    let merge_counts = tok.merge_counts.as_ref().map(|c| c[..kept_merges.min(c.len())].to_vec());
    Ok(Tokenizer {
        vocab,
        pretokenizer: tok.pretokenizer.clone(),
        lowercase: tok.lowercase,
        specials: tok.specials.clone(),
        tie_break: tok.tie_break,
        merge_counts,
        fast: std::sync::OnceLock::new(),
    })
}

/// Truncation of a vocabulary laid out by training: specials, base symbols, then one id per merge that made
/// a new token.
fn truncated_layout(v: &Vocab, size: usize) -> Result<(Vocab, usize)> {
    let base = v.num_special + v.num_base;
    if size < base {
        return Err(Error::value(format!(
            "cannot truncate to {size} ids: the special tokens and base symbols alone take {base}; use size >= {base}"
        )));
    }
    // Training stops right after the merge that makes token `size - 1` (later merges that make an existing
    // token again are not part of the shorter run).
    let kept = if size == base {
        0
    } else {
        v.merges().iter().position(|m| m.result as usize == size - 1).map_or(v.merges().len(), |i| i + 1)
    };
    let mut vocab = v.clone();
    vocab.tokens.truncate(size);
    vocab.merges_mut().truncate(kept);
    rebuild_indexes(&mut vocab);
    Ok((vocab, kept))
}

/// Truncation of a vocabulary with ids of its own: ids below `size` stay, special tokens keep theirs.
fn truncated_explicit(v: &Vocab, size: usize) -> Result<(Vocab, usize)> {
    let mut vocab = v.clone();
    for (id, token) in vocab.tokens.iter_mut().enumerate() {
        let is_special_token = token.special && !token.display.is_empty(); // (an unused id is special and empty)
        if id >= size && !is_special_token {
            *token = Token::unused();
        }
    }
    while vocab.tokens.last().is_some_and(|t| t.display.is_empty()) {
        vocab.tokens.pop();
    }
    let count = vocab.tokens.iter().filter(|t| !t.display.is_empty()).count();
    let top = vocab.tokens.len().saturating_sub(1);
    // The files that hold such vocabularies keep one slot per id, and refuse ids far beyond the tokens.
    if top >= count.saturating_mul(2) + 65_536 {
        return Err(Error::value(format!(
            "cannot truncate to {size} ids: the special tokens keep their ids (up to {top}), which would leave \
             {} unused ids below them, more than a vocabulary file can hold; truncate to at least {}",
            top + 1 - count,
            (top + 1).saturating_sub(65_536) / 2 + 1
        )));
    }
    let known = |id: u32| (id as usize) < size;
    // Merges after the last one that makes a kept token for the first time only make existing tokens again:
    // a run that stopped at this size (extending a loaded vocabulary) would not have made them.
    let mut made = vec![false; v.len()];
    let last_new = v.merges().iter().enumerate().fold(0, |last, (i, m)| {
        let first = known(m.result) && !std::mem::replace(&mut made[m.result as usize], true);
        if first { i + 1 } else { last }
    });
    vocab.merges_mut().truncate(last_new);
    vocab.merges_mut().retain(|m| known(m.left) && known(m.right) && known(m.result));
    let kept = vocab.merges().len();
    rebuild_indexes(&mut vocab);
    vocab.num_base = vocab.tokens.iter().filter(|t| !t.special && t.units == 1).count();
    Ok((vocab, kept))
}

/// `by_display` and the byte table after tokens or merges were removed (the merges' ranks are made again when
/// asked for: `Vocab::merges_mut`).
fn rebuild_indexes(vocab: &mut Vocab) {
    let shown = vocab.tokens.iter().enumerate().filter(|(_, t)| !t.display.is_empty()).map(|(id, _)| id as u32);
    vocab.by_display = DisplayIndex::of(&vocab.tokens, shown);
    vocab.rebuild_byte_ids();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::Pattern;
    use crate::train::{Alphabet, Silent, prepare_with};

    fn random_words(seed: u64, n: usize, len: (usize, usize), alphabet: &[char]) -> Vec<(String, u64)> {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        (0..n)
            .map(|_| {
                let l = len.0 + next() % (len.1 - len.0 + 1);
                ((0..l).map(|_| alphabet[next() % alphabet.len()]).collect(), 1 + (next() % 4) as u64)
            })
            .collect()
    }

    fn config(vocab_size: usize, mode: Mode, tie_break: TieBreak, max_len: Option<usize>) -> TrainConfig {
        TrainConfig {
            special_tokens: vec!["<s>".into()],
            alphabet: Alphabet::All,
            max_token_length: max_len,
            tie_break,
            ..TrainConfig::for_test(vocab_size, mode)
        }
    }

    fn trained(words: &[(&str, u64)], config: &TrainConfig, engine: Engine) -> Tokenizer {
        let t = prepare_with(words, config, engine).unwrap().run(&mut Silent).unwrap();
        let mut tok = Tokenizer::new(t.vocab, Pattern::None, false, &config.special_tokens).unwrap();
        tok.merge_counts = Some(t.merge_counts);
        tok
    }

    fn merges(tok: &Tokenizer) -> Vec<(u32, u32, u32)> {
        tok.vocab.merges().iter().map(|m| (m.left, m.right, m.result)).collect()
    }

    fn pool() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap()
    }

    #[test]
    fn extending_a_shorter_run_gives_the_longer_run() {
        let pool = pool();
        let alphabets: [&[char]; 3] = [&['a', 'b'], &['a', 'b', 'c', ' '], &['a', 'é', '日', 'b']];
        for seed in 0..18u64 {
            let words =
                random_words(seed, 60, if seed % 3 == 2 { (40, 120) } else { (1, 14) }, alphabets[seed as usize % 3]);
            let words: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
            for tie in [TieBreak::FirstSeen, TieBreak::Hf, TieBreak::Lexicographic] {
                for max_len in [None, Some(4)] {
                    for engine in [Engine::Slots, Engine::Compact] {
                        let mode = if seed % 2 == 0 { Mode::Byte } else { Mode::Char };
                        let short = config(if mode == Mode::Byte { 275 } else { 20 }, mode, tie, max_len);
                        let long = TrainConfig { vocab_size: short.vocab_size + 40, ..short.clone() };
                        let base = trained(&words, &short, engine);
                        let want = trained(&words, &long, engine);
                        let symbols = encode_for_extension(&base, &words, &base.pretokenizer, &long, &pool).unwrap();
                        let merger = prepare_extension(&base, &symbols, &long, engine, &pool).unwrap();
                        let got = merger.run(&mut Silent).unwrap();
                        let got: Vec<_> = got.vocab.merges().iter().map(|m| (m.left, m.right, m.result)).collect();
                        assert_eq!(got, merges(&want), "seed {seed} {tie:?} {max_len:?} {engine:?} {mode:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn truncating_gives_the_shorter_run() {
        for seed in 0..8u64 {
            let words = random_words(seed, 50, (1, 12), &['a', 'b', 'c']);
            let words: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
            for tie in [TieBreak::FirstSeen, TieBreak::Hf, TieBreak::Lexicographic] {
                let long = trained(&words, &config(320, Mode::Byte, tie, None), Engine::Slots);
                for size in [258, 259, 270, 300, 320] {
                    let short = trained(&words, &config(size, Mode::Byte, tie, None), Engine::Slots);
                    let cut = truncated(&long, size).unwrap();
                    assert_eq!(merges(&cut), merges(&short), "seed {seed} {tie:?} {size}");
                    assert_eq!(cut.vocab.len(), short.vocab.len());
                    assert_eq!(cut.merge_counts, short.merge_counts);
                    let index = |v: &Vocab| {
                        let mut entries: Vec<(String, u32)> =
                            v.by_display.ids().map(|id| (v.tokens[id as usize].display.to_string(), id)).collect();
                        entries.sort();
                        entries
                    };
                    assert_eq!(index(&cut.vocab), index(&short.vocab));
                }
                let err = truncated(&long, 100).unwrap_err();
                assert!(err.message.contains("use size >= 258"), "{}", err.message);
                assert!(truncated(&long, 321).unwrap_err().message.contains("has 320 ids"));
            }
        }
    }

    #[test]
    fn stretches_encode_piece_by_piece_as_they_would_whole() {
        use crate::pretokenize::split::Unmatched;
        use crate::pretokenize::{PreTokenizer, SUPERWORDS};
        let text = "'Tis the season, 'tis said; don'tcha know it's 1887? The quick brown fox's den\tis here. \
                    We'll see--you'd better 'twas a 'sup, o'clock rock'n'roll. Ünïcødé wörds, naïve café!\n";
        let lines: Vec<String> = (0..40).map(|i| text.replace("the", ["the", "a", "one"][i % 3])).collect();
        let gpt2 = PreTokenizer::new(Pattern::Gpt2).unwrap();
        let mut counts: indexmap::IndexMap<&str, u64> = indexmap::IndexMap::new();
        for line in &lines {
            gpt2.split(line, |w| *counts.entry(w).or_default() += 1).unwrap();
        }
        let words: Vec<(&str, u64)> = counts.into_iter().collect();
        let pool = pool();
        for vocab_size in [300, 400, 600] {
            let tok = trained(&words, &config(vocab_size, Mode::Byte, TieBreak::FirstSeen, None), Engine::Slots);
            let tok = Tokenizer { pretokenizer: gpt2.clone(), ..tok };
            let superwords =
                PreTokenizer::new(Pattern::Custom { regex: SUPERWORDS.to_string(), unmatched: Unmatched::Keep })
                    .unwrap();
            let mut stretches = Vec::new();
            for line in &lines {
                superwords.split(line, |w| stretches.push((w, 1u64))).unwrap();
            }
            let by_pieces = encode_words(&tok, &stretches, &superwords, &pool).unwrap();
            let whole = encode_words(&tok, &stretches, &tok.pretokenizer, &pool).unwrap();
            let flat = |w: &SymbolWords| w.iter().map(|(s, c)| (s.to_vec(), c)).collect::<Vec<_>>();
            assert_eq!(flat(&by_pieces), flat(&whole), "{vocab_size}");
        }
    }

    #[test]
    fn stretches_laid_out_from_their_words_are_the_stretches_encoded_whole() {
        use crate::pretokenize::split::Unmatched;
        use crate::pretokenize::split_superwords;
        let text = "'Tis the season, 'tis said; don'tcha know it's 1887? The quick brown fox's den\tis here. \
                    We'll see--you'd better 'twas a 'sup, o'clock rock'n'roll. Ünïcødé wörds, naïve café!\n";
        let lines: Vec<String> = (0..40).map(|i| text.replace("the", ["the", "a", "one"][i % 3])).collect();
        let pool = pool();
        for vocab_size in [300, 400, 600] {
            let mut counter = WordCounter::new(Pattern::Gpt2, &[], false, 2).unwrap();
            counter.record_stretches(Unmatched::Keep).unwrap();
            counter.add_texts(&lines.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
            let counts = counter.take_words().unwrap();
            let words: Vec<(&str, u64)> = counts.iter().map(|(w, c)| (w.as_str(), *c)).collect();
            let tok = trained(&words, &config(vocab_size, Mode::Byte, TieBreak::FirstSeen, None), Engine::Slots);
            let tok = Tokenizer { pretokenizer: PreTokenizer::new(Pattern::Gpt2).unwrap(), ..tok };
            let stretches = counter.take_stretches().unwrap().expect("recorded");
            let encoded = EncodedStretches::new(&tok, &stretches, &pool).unwrap();
            let mut got = Vec::new();
            for i in 0..encoded.part_count() {
                encoded.for_each_word(i, &mut |w, c| got.push((w.to_vec(), c)));
            }
            let mut texts = Vec::new();
            for line in &lines {
                split_superwords(line, &mut |p: &str| texts.push((p.to_string(), 1u64)));
            }
            assert_eq!(got.len(), texts.len(), "one word per stretch");
            let texts: Vec<(&str, u64)> = texts.iter().map(|(t, c)| (t.as_str(), *c)).collect();
            let whole = encode_words(&tok, &texts, &tok.pretokenizer, &pool).unwrap();
            let mergeable: Vec<(Vec<u32>, u64)> = got.into_iter().filter(|(w, _)| w.len() >= 2).collect();
            let want: Vec<(Vec<u32>, u64)> = whole.iter().map(|(w, c)| (w.to_vec(), c)).collect();
            assert_eq!(mergeable, want, "{vocab_size}");
            // The sizes found while encoding are those of the words.
            let mut size = PartSize::default();
            for (w, _) in &mergeable {
                size.add(w.len(), 1, || w.iter().map(|&id| tok.vocab.units(id)).sum());
            }
            assert_eq!(PartSize::sum(&encoded.part_sizes(&tok.vocab, &pool)), size, "{vocab_size}");
            assert!(encoded.whole.iter().any(|(part, _)| !part.ends.is_empty()), "some stretch encoded whole");
        }
    }

    #[test]
    fn replay_applies_merges_in_sequence() {
        // a+a -> aa (rank 0), aa+a -> aaa (rank 1), a+aa -> aaa again (rank 2), aaa+b (rank 3).
        let base = vec!["a".to_string(), "b".to_string()];
        let style = crate::vocab::SymbolStyle { mode: Mode::Char, prefix: None, suffix: None };
        let mut vocab = Vocab::new(style, &[], None, &base).unwrap();
        let aa = vocab.push_merge(0, 0);
        let aaa = vocab.push_merge(aa, 0);
        assert_eq!(vocab.push_merge(0, aa), aaa);
        let aaab = vocab.push_merge(aaa, 1);
        assert!(makes_a_token_twice(&vocab));
        let replay = Replay::new(&vocab);
        let mut ids = vec![0, 0, 0, 1];
        replay.apply(&mut ids, 0);
        assert_eq!(ids, [aaab]);
        // "aaaa": aa aa after rank 0; nothing else applies.
        let mut ids = vec![9, 0, 0, 0, 0];
        replay.apply(&mut ids, 1);
        assert_eq!(ids, [9, aa, aa]);
    }
}
