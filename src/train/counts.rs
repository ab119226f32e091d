//! Counting words: cut out special tokens, normalise, pre-tokenize, and count each piece — in parallel.
//!
//! Performance notes:
//! - Text arrives in batches (a block of a file cut at a line break, or a list of texts from Python). A batch
//!   is cut into contiguous work items of roughly equal size; rayon counts each item into its own small map
//!   whose keys borrow from the batch (no allocation per piece), and the maps are folded into the corpus-wide
//!   map *in item order*. Folding in order is what keeps words in the order of their first appearance
//!   whatever the number of threads — the `first_seen` tie rule depends on it.
//! - Memory is the batch (a few MB per thread) plus one entry per *unique* word, never the corpus.
//! - Files are read by a separate thread (so `.gz` decompression overlaps counting) and are split into lines:
//!   each line with its "\n" is one document, as HF tokenizers and SentencePiece read files.
//! - A document much larger than a work item (a 100 MB line, one huge string) is cut inside, but only where
//!   the pattern is known to split anyway, so the words are exactly those of the uncut text (`safe_cut`).

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use std::collections::HashMap;
use std::hash::BuildHasher;

use hashbrown::HashTable;
use indexmap::IndexMap;
use indexmap::map::RawEntryApiV1;
use indexmap::map::raw_entry_v1::RawEntryMut;
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;

use super::stretches::{StretchBlock, Stretches};
use crate::error::{Error, Result};
use crate::pretokenize::{Pattern, PreTokenizer, Segment, SpecialMatcher, Unmatched};
use crate::tokenizer::Tokenizer;
use crate::vocab::Vocab;

/// Word → count, in order of first appearance.
pub type WordCounts = IndexMap<String, u64, FxBuildHasher>;

/// The counts of one work item, in a hash table of its own (no shared state between threads).
///
/// Counting is dominated by this table (perf: ~55% of the time with an `IndexMap`, mostly the indirection
/// from its index table to its entries and `memcmp` calls), so entries sit in the table itself, each with its
/// full hash (compared before any byte) and the index of its first appearance (to restore the order once,
/// at the end). A key is copied once, when first seen in the item, so that the counts outlive the batch: the
/// next batch is counted while these are folded in (see `count_work`).
#[derive(Default)]
struct LocalCounts {
    table: HashTable<LocalEntry>,
    /// Bytes of special tokens cut out of the item.
    special_bytes: u64,
    /// The item's pieces in order, not counted, when the counter keeps every piece (then `table` stays empty).
    kept: Option<Pieces>,
    /// The item's SuperBPE stretches, as its words, when the counter records them (`record_stretches`).
    stretches: Option<StretchBlock>,
}

/// Pieces of text kept in the order they were cut, each once (`WordCounter::keep_every_piece`): piece `i` is
/// `text[ends[i - 1]..ends[i]]`.
#[derive(Default)]
pub struct Pieces {
    text: String,
    ends: Vec<usize>,
}

impl Pieces {
    /// The pieces, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(start, &end)| &self.text[start..end])
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Piece `i`.
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// Adds a piece after the others.
    pub fn push(&mut self, piece: &str) {
        self.text.push_str(piece);
        self.ends.push(self.text.len());
    }
}

struct LocalEntry {
    hash: u64,
    first: u32,
    count: u64,
    /// The word's first 16 bytes (zero-padded): most words are shorter, and comparing here saves a cache miss
    /// on the text the word points into.
    head: [u8; 16],
    word: Box<str>,
}

/// The first 16 bytes of a word, zero-padded.
#[inline]
fn head(bytes: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    let n = bytes.len().min(16);
    out[..n].copy_from_slice(&bytes[..n]);
    out
}

impl LocalCounts {
    /// Counts `piece`; returns its word's index in the item (in order of first appearance; 0 for kept pieces).
    #[inline]
    fn add(&mut self, piece: &str) -> u32 {
        if let Some(kept) = &mut self.kept {
            kept.push(piece);
            return 0;
        }
        let hash = word_hash(piece);
        let bytes = piece.as_bytes();
        let start = head(bytes);
        let matches = |e: &LocalEntry| {
            e.hash == hash
                && e.head == start
                && e.word.len() == bytes.len()
                && (bytes.len() <= 16 || e.word.as_bytes() == bytes)
        };
        if let Some(entry) = self.table.find_mut(hash, matches) {
            entry.count += 1;
            return entry.first;
        }
        let first = self.table.len() as u32;
        let word: Box<str> = piece.into();
        self.table.insert_unique(hash, LocalEntry { hash, first, count: 1, head: start, word }, |e| e.hash);
        first
    }

    /// The entries in order of first appearance.
    fn into_ordered(self) -> Vec<LocalEntry> {
        let mut entries: Vec<LocalEntry> = self.table.into_iter().collect();
        entries.sort_unstable_by_key(|e| e.first);
        entries
    }
}

/// The hash of a word, shared by the per-item tables and the corpus-wide map (so folding does not rehash).
#[inline]
fn word_hash(word: &str) -> u64 {
    FxBuildHasher.hash_one(word)
}

/// Size of the blocks a file is read in, per thread.
const BLOCK_PER_THREAD: usize = 4 << 20;
/// Work items per thread and batch: more than one, so that a slow item does not leave a core idle.
const ITEMS_PER_THREAD: usize = 4;
/// Work items are never made smaller than this (cutting costs more than it gains below).
const MIN_ITEM: usize = 64 << 10;

/// What to do with bytes that are not valid UTF-8 in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Utf8Errors {
    Strict,
    Replace,
}

impl Utf8Errors {
    pub fn parse(name: &str) -> Result<Utf8Errors> {
        match name {
            "strict" => Ok(Utf8Errors::Strict),
            "replace" => Ok(Utf8Errors::Replace),
            other => Err(Error::value(format!("errors={other:?} is not supported: use \"strict\" or \"replace\""))),
        }
    }
}

pub struct WordCounter {
    pretokenizer: PreTokenizer,
    specials: SpecialMatcher,
    /// The special tokens cut out of the text before counting: `specials`, or none when their text is counted as
    /// ordinary text (`count_special_text`).
    cut: SpecialMatcher,
    lowercase: bool,
    pool: rayon::ThreadPool,
    /// Word → count, in order of first appearance; `pending` still has to be folded in (see `words`).
    words: WordCounts,
    pending: Vec<Result<LocalCounts>>,
    /// Pieces kept in corpus order rather than counted (`keep_every_piece`), not yet folded into `words`.
    kept: Option<Vec<Pieces>>,
    /// SuperBPE's stretches as the words counted (`record_stretches`), and the pre-tokenizer that cuts them.
    stretches: Option<(Stretches, PreTokenizer)>,
    /// Bytes of text seen so far (for progress and reports).
    pub bytes_seen: u64,
    /// Bytes of special tokens cut out of it (folded ones: see `special_bytes`).
    special_bytes: u64,
}

/// One unit of parallel work: whole documents, or a piece of a large one.
enum Work<'a> {
    /// Consecutive lines of a file block; each line is a document.
    Lines(&'a str),
    /// Consecutive texts.
    Texts(&'a [&'a str]),
    /// A piece of special-token-free text, cut at a safe point.
    Piece(&'a str),
}

impl WordCounter {
    /// `threads`: 0 means rayon's default (every core, or `RAYON_NUM_THREADS`); never more than the cores.
    pub fn new(pattern: Pattern, special_tokens: &[String], lowercase: bool, threads: usize) -> Result<WordCounter> {
        let threads = crate::at_most_cores(threads);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("bytepair-count-{i}"))
            .build()
            .map_err(|e| Error::value(format!("cannot start {threads} counting threads: {e}")))?;
        Ok(WordCounter {
            pretokenizer: PreTokenizer::new(pattern)?,
            specials: SpecialMatcher::new(special_tokens),
            cut: SpecialMatcher::new(special_tokens),
            lowercase,
            pool,
            words: WordCounts::default(),
            pending: Vec::new(),
            kept: None,
            stretches: None,
            bytes_seen: 0,
            special_bytes: 0,
        })
    }

    /// Counts the text of special tokens found in the corpus as ordinary text from now on, as HF tokenizers'
    /// trainer does (it splits added tokens out only when encoding): the tokens still get the first ids, and the
    /// trained tokenizer still matches them when encoding. For `tie_break="hf"`, whose merges equal HF's.
    pub fn count_special_text(&mut self) {
        self.cut = SpecialMatcher::new(&[]);
    }

    /// Keeps every piece from now on, in corpus order, instead of counting it in a table (see `take_pieces`).
    ///
    /// For SuperBPE's second stage: its stretches of text are nearly all different (110 MB of English: 3.45 M
    /// stretches, 2.0 M distinct, 1.95 M of them seen once), so a table of them costs a hash, a compare and an
    /// allocation per stretch, and more memory than the text itself, to save 5 % of the bytes. The merges are
    /// the same either way: the merge loop's choices depend on pair counts, and on the order in which pairs
    /// first occur, which a word's first appearance and its every appearance give alike. Everything else that
    /// reads the words (`words`, `take_words`) still gets them counted: the pieces are folded in first.
    pub fn keep_every_piece(&mut self) {
        self.kept.get_or_insert_with(Vec::new);
    }

    /// The pieces kept since `keep_every_piece`, in corpus order, each once (the counter is left empty), or
    /// None when some words were counted instead (added as counts): then `take_words`.
    pub fn take_pieces(&mut self) -> Result<Option<Vec<Pieces>>> {
        self.flush()?;
        if !self.words.is_empty() {
            return Ok(None);
        }
        Ok(self.kept.as_mut().map(std::mem::take))
    }

    /// Records SuperBPE's stretches (the pieces of `SUPERWORDS`, with `unmatched` as its pattern's) from now on,
    /// as the words counted: see `stretches`. The counter takes text only (no words counted elsewhere), and
    /// does not cut large documents (a cut safe for the pattern may fall inside a stretch).
    pub fn record_stretches(&mut self, unmatched: Unmatched) -> Result<()> {
        let pattern = Pattern::Custom { regex: crate::pretokenize::SUPERWORDS.to_string(), unmatched };
        self.stretches = Some((Stretches::default(), PreTokenizer::new(pattern)?));
        Ok(())
    }

    /// The stretches recorded since `record_stretches` (None without it), in corpus order, with the text of
    /// every word they refer to; the counter keeps its words (`take_words`, before or after).
    pub fn take_stretches(&mut self) -> Result<Option<Stretches>> {
        self.flush()?;
        let Some((stretches, _)) = &mut self.stretches else { return Ok(None) };
        if !self.words.is_empty() {
            // (Else `take_words` kept them.)
            stretches.keep_words(self.words.keys().map(String::as_str));
        }
        Ok(Some(std::mem::take(stretches)))
    }

    /// The tokenizer an extension on these counts makes, around `vocab`: `tokenizer`, or when stretches are
    /// recorded (`record_stretches`), one that cuts text into them.
    pub fn extension_tokenizer(&self, vocab: Vocab) -> Tokenizer {
        match &self.stretches {
            Some((_, pretokenizer)) => Tokenizer { pretokenizer: pretokenizer.clone(), ..self.tokenizer(vocab) },
            None => self.tokenizer(vocab),
        }
    }

    /// Refuses words counted elsewhere when stretches are recorded: they would have none.
    fn text_only(&self) -> Result<()> {
        match self.stretches {
            Some(_) => Err(Error::value(
                "internal error: this counter records SuperBPE's stretches from text; it cannot take counted words"
                    .to_string(),
            )),
            None => Ok(()),
        }
    }

    /// Whether no word was counted or kept.
    pub fn is_empty(&mut self) -> Result<bool> {
        self.flush()?;
        Ok(self.words.is_empty() && self.kept.iter().flatten().all(Pieces::is_empty))
    }

    /// The counting threads (training's recounts use them too).
    pub fn pool(&self) -> &rayon::ThreadPool {
        &self.pool
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// The pre-tokenizer the words are counted with (an extension compares it with the tokenizer's own).
    pub fn pretokenizer(&self) -> &PreTokenizer {
        &self.pretokenizer
    }

    /// The special tokens, which the trained vocabulary must start with.
    pub fn special_tokens(&self) -> &[String] {
        self.specials.tokens()
    }

    /// A tokenizer around a vocabulary trained from these counts: it splits text with the very pre-tokenizer,
    /// special tokens and normaliser that counted them, so training and encoding cannot drift apart.
    pub fn tokenizer(&self, vocab: Vocab) -> Tokenizer {
        Tokenizer {
            vocab,
            pretokenizer: self.pretokenizer.clone(),
            lowercase: self.lowercase,
            specials: self.specials.clone(),
            tie_break: None,
            merge_counts: None,
            fast: std::sync::OnceLock::new(),
        }
    }

    /// Counts the words of one document. Special tokens are cut out first and never counted.
    pub fn add_text(&mut self, text: &str) -> Result<()> {
        self.add_texts(&[text])
    }

    /// Counts the words of each text (each is one document), in parallel.
    pub fn add_texts(&mut self, texts: &[&str]) -> Result<()> {
        let total: usize = texts.iter().map(|t| t.len()).sum();
        let target = self.item_size(total);
        let mut work = Vec::new();
        let mut start = 0;
        let mut size = 0;
        for (i, text) in texts.iter().enumerate() {
            if text.len() > target {
                if start < i {
                    work.push(Work::Texts(&texts[start..i]));
                }
                self.special_bytes += self.plan_large_document(text, target, &mut work);
                start = i + 1;
                size = 0;
                continue;
            }
            size += text.len();
            if size >= target {
                work.push(Work::Texts(&texts[start..=i]));
                start = i + 1;
                size = 0;
            }
        }
        if start < texts.len() {
            work.push(Work::Texts(&texts[start..]));
        }
        self.count_work(&work)?;
        self.bytes_seen += total as u64;
        Ok(())
    }

    /// Counts the words of a block of whole lines (each line, with its "\n", is a document), as `add_file`
    /// counts a file's lines: a corpus read in blocks elsewhere (a byte range of a file, a decompressed stream)
    /// gives the same counts.
    pub fn add_lines(&mut self, block: &str) -> Result<()> {
        let target = self.item_size(block.len());
        let mut work = Vec::new();
        let mut rest = block;
        while !rest.is_empty() {
            // Cut the next item at the first line break after `target` bytes.
            let cut = match rest.as_bytes().get(target..).and_then(|tail| memchr::memchr(b'\n', tail)) {
                Some(i) => target + i + 1,
                None => rest.len(),
            };
            let (item, tail) = rest.split_at(cut);
            if item.len() > 2 * target {
                // The item holds a very long line: cut that line inside, keep runs of ordinary lines together.
                let mut run_start = 0;
                let mut at = 0;
                for line in item.split_inclusive('\n') {
                    if line.len() > target {
                        if run_start < at {
                            work.push(Work::Lines(&item[run_start..at]));
                        }
                        self.special_bytes += self.plan_large_document(line, target, &mut work);
                        run_start = at + line.len();
                    }
                    at += line.len();
                }
                if run_start < item.len() {
                    work.push(Work::Lines(&item[run_start..]));
                }
            } else {
                work.push(Work::Lines(item));
            }
            rest = tail;
        }
        self.count_work(&work)?;
        self.bytes_seen += block.len() as u64;
        Ok(())
    }

    /// Work item size for a batch of `total` bytes.
    fn item_size(&self, total: usize) -> usize {
        (total / (self.threads() * ITEMS_PER_THREAD)).max(MIN_ITEM)
    }

    /// Cuts a large document into pieces: special tokens come out first (a cut must not split one), then
    /// each stretch of text is cut at safe points, `target` bytes apart or more. Returns the special tokens'
    /// bytes.
    fn plan_large_document<'a>(&self, text: &'a str, target: usize, work: &mut Vec<Work<'a>>) -> u64 {
        let mut special_bytes = 0;
        let _ = self.cut.segments(text, |segment| {
            if let Segment::Special(i) = segment {
                special_bytes += self.cut.tokens()[i].len() as u64;
            }
            if let Segment::Text(mut part) = segment {
                while part.len() > target && self.stretches.is_none() {
                    match safe_cut(&self.pretokenizer.pattern, part, target) {
                        Some(cut) => {
                            work.push(Work::Piece(&part[..cut]));
                            part = &part[cut..];
                        }
                        None => break,
                    }
                }
                if !part.is_empty() {
                    work.push(Work::Piece(part));
                }
            }
            Ok(())
        });
        special_bytes
    }

    /// Counts the work items in parallel, while folding the previous batch's counts into `words` (in order).
    ///
    /// Folding is serial — it is what keeps the order of first appearance — and costs about a fifth of the
    /// counting work; overlapping it with the next batch keeps every core busy (measured: serial folding left
    /// one of two cores idle a fifth of the time).
    fn count_work(&mut self, work: &[Work<'_>]) -> Result<()> {
        let WordCounter { pretokenizer, cut, lowercase, pool, words, pending, special_bytes, kept, stretches, .. } =
            self;
        let (pretokenizer, specials, lowercase) = (&*pretokenizer, &*cut, *lowercase);
        let keep = kept.is_some();
        let record = stretches.is_some();
        let previous = std::mem::take(pending);
        // This thread waits checking for Ctrl-C (a custom regex can be slow), which stops the counting threads'
        // loops too; waiting inside `install` it could check nothing until the batch was done.
        let stop = Default::default();
        let (fresh, folded) = crate::progress::run_interruptible(&stop, || {
            pool.install(|| {
                rayon::join(
                    || {
                        work.par_iter()
                            // A clone per item: a regex shared between threads serialises them on its scratch pool.
                            .map(|item| {
                                crate::progress::sharing_stop(&stop, || {
                                    count_item(&pretokenizer.clone(), specials, lowercase, (keep, record), item)
                                })
                            })
                            .collect::<Vec<_>>()
                    },
                    || fold(words, kept, stretches, special_bytes, previous),
                )
            })
        })?;
        *pending = fresh;
        folded
    }

    /// Folds the counts still pending into `words`.
    fn flush(&mut self) -> Result<()> {
        let pending = std::mem::take(&mut self.pending);
        fold(&mut self.words, &mut self.kept, &mut self.stretches, &mut self.special_bytes, pending)
    }

    /// Folds the pending counts in, and counts the kept pieces (see `keep_every_piece`) after them.
    fn settle(&mut self) -> Result<()> {
        self.flush()?;
        self.count_kept();
        Ok(())
    }

    /// Counts the kept pieces into `words` (in order, so that words keep their order of first appearance).
    fn count_kept(&mut self) {
        let Some(kept) = &mut self.kept else { return };
        for pieces in std::mem::take(kept) {
            for piece in pieces.iter() {
                add_count(&mut self.words, word_hash(piece), piece, 1);
            }
        }
    }

    /// Takes the words out (training consumes them), leaving the counter empty.
    pub fn take_words(&mut self) -> Result<WordCounts> {
        self.settle()?;
        if let Some((stretches, _)) = &mut self.stretches {
            stretches.keep_words(self.words.keys().map(String::as_str));
        }
        self.pool.broadcast(|_| crate::release_freed_memory());
        crate::release_freed_memory();
        Ok(std::mem::take(&mut self.words))
    }

    /// Bytes of special tokens cut out of the text counted so far.
    pub fn special_bytes(&mut self) -> Result<u64> {
        self.flush()?;
        Ok(self.special_bytes)
    }

    /// Word → count, in order of first appearance.
    pub fn words(&mut self) -> Result<&WordCounts> {
        self.settle()?;
        Ok(&self.words)
    }

    /// Counts the words of a UTF-8 text file, one line (with its line break) at a time, as HF tokenizers and
    /// SentencePiece read files. `.gz` files are decompressed on the fly. `on_progress` gets the number of
    /// bytes of the file read so far — for a `.gz` file its compressed bytes, which compare with its size (text
    /// bytes against the file's size made a bar of 28 MB out of 11) — after each block; an error from it (Ctrl-C)
    /// stops counting.
    pub fn add_file(
        &mut self,
        path: &str,
        errors: Utf8Errors,
        mut on_progress: impl FnMut(u64) -> Result<()>,
    ) -> Result<()> {
        let position = std::sync::Arc::new(AtomicU64::new(0));
        let reader = open(path, std::sync::Arc::clone(&position))?;
        let block_size = BLOCK_PER_THREAD * self.threads();
        let (sender, receiver) = mpsc::sync_channel::<std::io::Result<Vec<u8>>>(1);
        std::thread::scope(|scope| {
            scope.spawn(move || read_line_blocks(reader, block_size, sender));
            let mut done = 0u64;
            // Dropping `receiver` on an early return stops the reader thread at its next send.
            for block in receiver {
                let block = block.map_err(|e| Error::io(path, &e))?;
                match std::str::from_utf8(&block) {
                    Ok(text) => self.add_lines(text)?,
                    Err(e) => match errors {
                        Utf8Errors::Strict => return Err(Error::utf8(path, done as usize + e.valid_up_to())),
                        Utf8Errors::Replace => self.add_lines(&String::from_utf8_lossy(&block))?,
                    },
                }
                done += block.len() as u64;
                on_progress(position.load(Ordering::Relaxed))?;
            }
            on_progress(position.load(Ordering::Relaxed))
        })
    }

    /// `add_counted_word` for a word the caller owns (a chromosome need not be copied).
    pub fn add_counted_owned(&mut self, word: String, count: u64) -> Result<()> {
        self.text_only()?;
        self.settle()?;
        if count == 0 || word.is_empty() {
            return Ok(());
        }
        let word = if self.lowercase { word.to_lowercase() } else { word };
        self.bytes_seen += word.len() as u64;
        match self.words.get_mut(word.as_str()) {
            Some(c) => *c = c.saturating_add(count),
            None => {
                self.words.insert(word, count);
            }
        }
        Ok(())
    }

    /// Adds a word counted elsewhere (taken as one piece: it is not pre-tokenized again).
    pub fn add_counted_word(&mut self, word: &str, count: u64) -> Result<()> {
        self.text_only()?;
        self.settle()?;
        if count == 0 || word.is_empty() {
            return Ok(());
        }
        let lowered;
        let word = if self.lowercase {
            lowered = crate::pretokenize::lowercase(word);
            lowered.as_str()
        } else {
            word
        };
        match self.words.get_mut(word) {
            Some(c) => *c = c.saturating_add(count),
            None => {
                self.words.insert(word.to_string(), count);
            }
        }
        Ok(())
    }

    /// Takes in counts merged elsewhere (`FirstSeenCounts`): the words, already normalised and pre-tokenized,
    /// in order of first appearance, and the byte totals they came from.
    pub fn load_counts(&mut self, counts: FirstSeenCounts) -> Result<()> {
        self.text_only()?;
        self.settle()?;
        self.bytes_seen += counts.bytes_seen;
        self.special_bytes += counts.special_bytes;
        for (word, count) in counts.into_ordered() {
            match self.words.get_mut(word.as_str()) {
                Some(c) => *c = c.saturating_add(count),
                None => {
                    self.words.insert(word, count);
                }
            }
        }
        Ok(())
    }

    /// Takes the words counted so far out as the counts of one unit of a larger corpus (see `FirstSeenCounts`),
    /// with the bytes they came from, leaving the counter empty for the next unit.
    pub fn take_unit(&mut self, unit: u64) -> Result<FirstSeenCounts> {
        self.text_only()?;
        self.settle()?;
        let special_bytes = self.special_bytes()?;
        let words = std::mem::take(&mut self.words);
        let mut out = FirstSeenCounts::default();
        out.add_unit(unit, words, self.bytes_seen, special_bytes);
        self.bytes_seen = 0;
        self.special_bytes = 0;
        Ok(out)
    }
}

/// A word's count in part of a corpus, and where it was first seen: `(unit, index)` — the unit of input
/// (units are numbered in input order) and the word's rank of first appearance inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FirstSeen {
    count: u64,
    unit: u64,
    index: u64,
}

impl FirstSeen {
    fn position(&self) -> (u64, u64) {
        (self.unit, self.index)
    }

    /// Adds `other` (the same word counted elsewhere): counts add up, the earlier position stays.
    fn absorb(&mut self, other: FirstSeen) {
        self.count = self.count.saturating_add(other.count);
        if other.position() < self.position() {
            self.unit = other.unit;
            self.index = other.index;
        }
    }
}

/// Word counts of part of a corpus — one unit, or several merged — in which each word carries its first
/// position in input order, so that counts made by many workers can be merged in any order (a tree, in
/// whatever order tasks finish) and still give the words in order of first appearance in the whole corpus,
/// exactly as one counter reading the units one after another would (the `first_seen` tie rule depends on
/// that order).
///
/// Why a position is enough: a word's first occurrence in the corpus lies in the first unit that holds it,
/// and inside that unit its rank of first appearance orders it against the unit's other words; so sorting by
/// the smallest `(unit, index)` seen gives the corpus-wide order. Merging is a sum and a minimum: commutative
/// and associative.
#[derive(Default, Debug, Clone)]
pub struct FirstSeenCounts {
    words: HashMap<String, FirstSeen, FxBuildHasher>,
    /// Bytes of text the counts come from, and of special tokens cut out of it.
    pub bytes_seen: u64,
    pub special_bytes: u64,
}

/// The wire format's first bytes (`to_bytes`): a name and a version.
const WIRE_MAGIC: &[u8; 8] = b"BPWCNT01";

impl FirstSeenCounts {
    /// Number of distinct words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Adds the counts of unit `unit` (words in their order of first appearance in it).
    pub fn add_unit(&mut self, unit: u64, words: WordCounts, bytes_seen: u64, special_bytes: u64) {
        self.bytes_seen = self.bytes_seen.saturating_add(bytes_seen);
        self.special_bytes = self.special_bytes.saturating_add(special_bytes);
        self.words.reserve(words.len());
        for (index, (word, count)) in words.into_iter().enumerate() {
            self.insert(word, FirstSeen { count, unit, index: index as u64 });
        }
    }

    /// Adds words in the order given, as unit `unit` (a counts file read back).
    pub fn add_ordered(&mut self, unit: u64, words: impl IntoIterator<Item = (String, u64)>) {
        for (index, (word, count)) in words.into_iter().enumerate() {
            self.insert(word, FirstSeen { count, unit, index: index as u64 });
        }
    }

    fn insert(&mut self, word: String, seen: FirstSeen) {
        match self.words.get_mut(word.as_str()) {
            Some(entry) => entry.absorb(seen),
            None => {
                self.words.insert(word, seen);
            }
        }
    }

    /// Adds counts made elsewhere (the smaller map is folded into the larger one).
    pub fn merge(&mut self, mut other: FirstSeenCounts) {
        if other.words.len() > self.words.len() {
            std::mem::swap(self, &mut other);
        }
        self.bytes_seen = self.bytes_seen.saturating_add(other.bytes_seen);
        self.special_bytes = self.special_bytes.saturating_add(other.special_bytes);
        for (word, seen) in other.words {
            self.insert(word, seen);
        }
    }

    /// The words and their counts in order of first appearance.
    pub fn into_ordered(self) -> Vec<(String, u64)> {
        let mut entries: Vec<(String, FirstSeen)> = self.words.into_iter().collect();
        entries.sort_unstable_by_key(|(_, seen)| seen.position());
        entries.into_iter().map(|(word, seen)| (word, seen.count)).collect()
    }

    /// The words and their counts in order of first appearance, borrowed.
    pub fn ordered(&self) -> Vec<(&str, u64)> {
        let mut entries: Vec<(&str, &FirstSeen)> = self.words.iter().map(|(w, s)| (w.as_str(), s)).collect();
        entries.sort_unstable_by_key(|(_, seen)| seen.position());
        entries.into_iter().map(|(word, seen)| (word, seen.count)).collect()
    }

    /// The counts as bytes, to send to another process (`from_bytes` reads them): a name and version, the two
    /// byte totals and the word count, then per word its count, unit, index (u64 each), byte length (u32) and
    /// bytes, all little-endian. Not a file format: words come in no particular order.
    pub fn to_bytes(&self) -> Vec<u8> {
        let size: usize = self.words.keys().map(|w| w.len() + 28).sum::<usize>() + 32;
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(WIRE_MAGIC);
        out.extend_from_slice(&self.bytes_seen.to_le_bytes());
        out.extend_from_slice(&self.special_bytes.to_le_bytes());
        out.extend_from_slice(&(self.words.len() as u64).to_le_bytes());
        for (word, seen) in &self.words {
            out.extend_from_slice(&seen.count.to_le_bytes());
            out.extend_from_slice(&seen.unit.to_le_bytes());
            out.extend_from_slice(&seen.index.to_le_bytes());
            out.extend_from_slice(&(word.len() as u32).to_le_bytes());
            out.extend_from_slice(word.as_bytes());
        }
        out
    }

    /// Reads what `to_bytes` wrote; anything else (cut short, another layout) is an error, never a panic.
    pub fn from_bytes(data: &[u8]) -> Result<FirstSeenCounts> {
        let bad = |what: &str| Error::value(format!("these are not word counts bytepair sent ({what})"));
        let mut reader = WireReader { data, at: 0 };
        if reader.take(8).ok_or_else(|| bad("too short"))? != WIRE_MAGIC {
            return Err(bad("wrong header"));
        }
        let bytes_seen = reader.u64().ok_or_else(|| bad("too short"))?;
        let special_bytes = reader.u64().ok_or_else(|| bad("too short"))?;
        let n = reader.u64().ok_or_else(|| bad("too short"))?;
        // Each word takes at least 29 bytes: a count larger than the data allows is refused before reserving.
        if n > (data.len() / 29) as u64 {
            return Err(bad("more words than bytes"));
        }
        let mut words = HashMap::with_capacity_and_hasher(n as usize, FxBuildHasher);
        for _ in 0..n {
            let count = reader.u64().ok_or_else(|| bad("cut short"))?;
            let unit = reader.u64().ok_or_else(|| bad("cut short"))?;
            let index = reader.u64().ok_or_else(|| bad("cut short"))?;
            let len = reader.u32().ok_or_else(|| bad("cut short"))? as usize;
            let bytes = reader.take(len).ok_or_else(|| bad("cut short"))?;
            let word = std::str::from_utf8(bytes).map_err(|_| bad("a word is not UTF-8"))?;
            if words.insert(word.to_string(), FirstSeen { count, unit, index }).is_some() {
                return Err(bad("a word twice"));
            }
        }
        if reader.at != data.len() {
            return Err(bad("bytes after the last word"));
        }
        Ok(FirstSeenCounts { words, bytes_seen, special_bytes })
    }
}

/// Reads little-endian numbers and byte strings off a slice, `None` past its end.
struct WireReader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> WireReader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.data.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

/// Folds per-item counts into the corpus-wide map, in item order.
fn fold(
    words: &mut WordCounts,
    kept: &mut Option<Vec<Pieces>>,
    stretches: &mut Option<(Stretches, PreTokenizer)>,
    special_bytes: &mut u64,
    locals: Vec<Result<LocalCounts>>,
) -> Result<()> {
    for local in locals {
        let mut local = local?;
        *special_bytes += local.special_bytes;
        if let (Some(all), Some(pieces)) = (kept.as_mut(), local.kept.take()) {
            all.push(pieces);
            continue;
        }
        let block = local.stretches.take();
        // The item's word indices, in the corpus-wide table (for its stretches).
        let mut index = Vec::with_capacity(if block.is_some() { local.table.len() } else { 0 });
        for entry in local.into_ordered() {
            let i = add_count(words, entry.hash, entry.word, entry.count);
            if block.is_some() {
                index.push(u32::try_from(i).map_err(|_| {
                    Error::value("the corpus holds more than 2^32 distinct words: train on a sample".to_string())
                })?);
            }
        }
        if let (Some((all, _)), Some(mut block)) = (stretches.as_mut(), block) {
            block.map_words(&index);
            all.blocks.push(block);
        }
    }
    Ok(())
}

/// Adds `count` to `word`'s count (`hash` is its `word_hash`), after the words before it when it is new;
/// returns the word's index.
fn add_count<W: AsRef<str> + Into<String>>(words: &mut WordCounts, hash: u64, word: W, count: u64) -> usize {
    let new = words.len();
    match words.raw_entry_mut_v1().from_hash(hash, |w| w.as_str() == word.as_ref()) {
        RawEntryMut::Occupied(mut e) => {
            *e.get_mut() += count;
            e.index()
        }
        RawEntryMut::Vacant(e) => {
            e.insert_hashed_nocheck(hash, word.into(), count);
            new
        }
    }
}

/// Counts the words of one work item.
fn count_item(
    pretokenizer: &PreTokenizer,
    specials: &SpecialMatcher,
    lowercase: bool,
    (keep, record): (bool, bool),
    item: &Work<'_>,
) -> Result<LocalCounts> {
    let mut local = LocalCounts {
        kept: keep.then(Pieces::default),
        stretches: record.then(StretchBlock::default),
        ..LocalCounts::default()
    };
    // Special tokens are cut out of each document first; they are never counted.
    let mut document = |text: &str| {
        specials.segments(text, |segment| match segment {
            Segment::Text(part) => count_text(pretokenizer, lowercase, part, &mut local),
            Segment::Special(i) => {
                local.special_bytes += specials.tokens()[i].len() as u64;
                Ok(())
            }
        })
    };
    match item {
        Work::Lines(block) => block.split_inclusive('\n').try_for_each(&mut document)?,
        Work::Texts(texts) => texts.iter().try_for_each(|text| document(text))?,
        Work::Piece(piece) => count_text(pretokenizer, lowercase, piece, &mut local)?,
    }
    Ok(local)
}

/// Normalises and pre-tokenizes special-token-free text, counting each piece (and recording its stretches, when
/// the item records them).
fn count_text(pretokenizer: &PreTokenizer, lowercase: bool, text: &str, local: &mut LocalCounts) -> Result<()> {
    let lowered;
    let text = if lowercase {
        lowered = crate::pretokenize::lowercase(text);
        lowered.as_str()
    } else {
        text
    };
    let Some(mut block) = local.stretches.take() else {
        return pretokenizer.split(text, |piece| {
            local.add(piece);
        });
    };
    if !block.room_for(text.len()) {
        return Err(Error::value(format!(
            "a document of {} bytes is too large for SuperBPE (superwords_after), which records at most 2 GB of one \
             document at a time: split it into smaller documents (a list of texts, or the lines of a file)",
            text.len()
        )));
    }
    let mut recorder = block.recorder(text);
    let split = pretokenizer.split(text, |piece| {
        let word = local.add(piece);
        recorder.piece(piece, word);
    });
    recorder.finish();
    local.stretches = Some(block);
    split
}

/// A byte offset at or after `from` where `text` may be cut without changing its words: the pattern splits
/// there whatever follows, and its matches never look back across the cut.
///
/// - gpt2 / cl100k / o200k: before a space that follows a visible ASCII character and precedes an ASCII
///   letter ("…x| word"). The piece before ends at that space in all three patterns (no alternative that
///   covers a visible character continues into a space, and no whitespace run ends here), and the piece
///   from the space on starts fresh (" word" is a letter run with its optional leading space).
/// - whitespace: at any ASCII whitespace (it is dropped).
/// - no pattern, a custom regex or a HF Split: never (the text is one piece, or the regex is unknown).
pub fn safe_cut(pattern: &Pattern, text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    match pattern {
        Pattern::Gpt2 | Pattern::Cl100k | Pattern::O200k => {
            let mut at = from.max(1);
            while let Some(i) = memchr::memchr(b' ', bytes.get(at..)?) {
                let i = at + i;
                let before = bytes[i - 1];
                let after = *bytes.get(i + 1)?;
                if before.is_ascii_graphic() && after.is_ascii_alphabetic() {
                    return Some(i);
                }
                at = i + 1;
            }
            None
        }
        Pattern::Whitespace => {
            let i = bytes.get(from..)?.iter().position(|b| b.is_ascii_whitespace())?;
            Some(from + i)
        }
        Pattern::None | Pattern::Custom { .. } | Pattern::HfSplit { .. } => None,
    }
}

/// Opens a file for reading; `.gz` files are decompressed (several gzip members are read one after another).
/// `position` counts the bytes read from the file itself.
fn open(path: &str, position: std::sync::Arc<AtomicU64>) -> Result<Box<dyn Read + Send>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    if std::fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false) {
        return Err(Error::value(format!("{path:?} is a directory: pass the files in it (for example a glob)")));
    }
    let file = std::io::BufReader::with_capacity(1 << 20, Tally { inner: file, position });
    if path.ends_with(".gz") {
        Ok(Box::new(GzReader { inner: flate2::bufread::MultiGzDecoder::new(file) }))
    } else {
        Ok(Box::new(file))
    }
}

/// A reader that counts the bytes read through it (a file's position, for progress).
struct Tally<R> {
    inner: R,
    position: std::sync::Arc<AtomicU64>,
}

impl<R: Read> Read for Tally<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.position.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A gzip stream whose errors say that the file is not valid gzip.
struct GzReader<R: std::io::BufRead> {
    inner: flate2::bufread::MultiGzDecoder<R>,
}

impl<R: std::io::BufRead> Read for GzReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| std::io::Error::new(e.kind(), format!("not a valid gzip file ({e})")))
    }
}

/// Reads `reader` in blocks of about `block_size` bytes that end at a line break (or at the end of the input)
/// and sends them on. A line longer than a block makes its block longer: lines are never split.
fn read_line_blocks(
    mut reader: Box<dyn Read + Send>,
    block_size: usize,
    sender: mpsc::SyncSender<std::io::Result<Vec<u8>>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut block = std::mem::take(&mut carry);
        let searched_up_to = block.len();
        block.reserve(block_size);
        let target = block.len() + block_size;
        // Fill up to `target` bytes (or the end of input).
        let mut eof = false;
        while block.len() < target {
            let len = block.len();
            block.resize(target, 0);
            match reader.read(&mut block[len..]) {
                Ok(0) => {
                    block.truncate(len);
                    eof = true;
                    break;
                }
                Ok(n) => block.truncate(len + n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => block.truncate(len),
                Err(e) => {
                    let _ = sender.send(Err(e));
                    return;
                }
            }
        }
        if eof {
            if !block.is_empty() {
                let _ = sender.send(Ok(block));
            }
            return;
        }
        // Keep the partial last line for the next block; only the new bytes need searching.
        match memchr::memrchr(b'\n', &block[searched_up_to..]) {
            Some(i) => {
                carry = block.split_off(searched_up_to + i + 1);
                if sender.send(Ok(block)).is_err() {
                    return;
                }
            }
            None => carry = block,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::stretches::Stretch;
    use super::*;

    fn counter(pattern: Pattern, specials: &[&str], lowercase: bool, threads: usize) -> WordCounter {
        let specials: Vec<String> = specials.iter().map(|s| s.to_string()).collect();
        WordCounter::new(pattern, &specials, lowercase, threads).unwrap()
    }

    #[test]
    fn a_counter_recording_stretches_counts_the_same_words_and_takes_only_text() {
        let text = ["By the way, I am a fan... of 12345 things\n", "x  y\n", "By the way\n"];
        let mut plain = counter(Pattern::Gpt2, &[], false, 2);
        let mut recording = counter(Pattern::Gpt2, &[], false, 2);
        recording.record_stretches(Unmatched::Keep).unwrap();
        for c in [&mut plain, &mut recording] {
            c.add_texts(&text).unwrap();
        }
        assert_eq!(items(&mut plain), items(&mut recording));
        // Taking the words (the first stage trains on them) keeps their text for the stretches.
        let words: Vec<String> = recording.take_words().unwrap().into_keys().collect();
        let stretches = recording.take_stretches().unwrap().expect("recorded");
        assert_eq!(stretches.word_count(), words.len());
        let shown: Vec<String> = stretches
            .blocks
            .iter()
            .flat_map(|b| b.iter())
            .map(|s| match s {
                Stretch::Words(ws) => ws.iter().map(|&w| stretches.word(w)).collect(),
                Stretch::Text(t) => format!("[{t}]"),
            })
            .collect();
        let mut superwords = Vec::new();
        for t in text {
            crate::pretokenize::split_superwords(t, &mut |p: &str| superwords.push(p.to_string()));
        }
        assert_eq!(shown.len(), superwords.len());
        for (s, want) in shown.iter().zip(&superwords) {
            assert!(s == want || *s == format!("[{want}]"), "{s:?} {want:?}");
        }
        assert!(shown.contains(&"By the way, I am a fan".to_string()), "{shown:?}");
        assert!(shown.contains(&"[ of ]".to_string()), "{shown:?}");
        // The second stage's tokenizer cuts text into stretches.
        let style = crate::vocab::SymbolStyle { mode: crate::vocab::Mode::Byte, prefix: None, suffix: None };
        let vocab = Vocab::new(style, &[], None, &[]).unwrap();
        let tok = recording.extension_tokenizer(vocab);
        assert_eq!(
            tok.pretokenizer.pattern,
            Pattern::Custom { regex: crate::pretokenize::SUPERWORDS.to_string(), unmatched: Unmatched::Keep }
        );
        // Words counted elsewhere have no stretches: refused.
        for refused in [recording.add_counted_word("x", 1), recording.add_counted_owned("x".into(), 1)] {
            assert!(refused.unwrap_err().to_string().contains("stretches"));
        }
        assert!(recording.take_unit(0).is_err());
    }

    fn items(c: &mut WordCounter) -> Vec<(String, u64)> {
        c.words().unwrap().iter().map(|(w, n)| (w.clone(), *n)).collect()
    }

    #[test]
    fn counts_keep_first_appearance_order_and_skip_specials() {
        let mut c = counter(Pattern::Gpt2, &["<|endoftext|>"], false, 1);
        c.add_text("b a<|endoftext|>b a a").unwrap();
        assert_eq!(items(&mut c), [("b".to_string(), 2), (" a".to_string(), 3)]);
    }

    #[test]
    fn special_text_can_be_counted_as_text_while_the_tokens_stay() {
        let mut c = counter(Pattern::Gpt2, &["<|endoftext|>"], false, 1);
        c.count_special_text();
        c.add_text("b<|endoftext|>b").unwrap();
        let words: Vec<String> = items(&mut c).into_iter().map(|(w, _)| w).collect();
        assert_eq!(words, ["b", "<|", "endoftext", "|>"]);
        assert_eq!(c.special_tokens(), ["<|endoftext|>"]);
        assert_eq!(c.special_bytes().unwrap(), 0);
    }

    #[test]
    fn lowercase_happens_before_splitting() {
        let mut c = counter(Pattern::Gpt2, &[], true, 1);
        c.add_text("Hello HELLO").unwrap();
        assert_eq!(items(&mut c), [("hello".to_string(), 1), (" hello".to_string(), 1)]);
    }

    /// A text of `n` words where new words keep appearing, so the order of first appearance is meaningful.
    fn long_text(n: usize) -> String {
        let mut s = String::new();
        let mut x: u64 = 12345;
        for i in 0..n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let word = format!("w{}", (x >> 40) % (i as u64 + 10));
            s.push_str(&word);
            s.push(if i % 17 == 0 { '\n' } else { ' ' });
            if i % 101 == 0 {
                s.push_str("<|s|>");
            }
        }
        s
    }

    #[test]
    fn thread_count_and_cutting_do_not_change_counts_or_order() {
        let text = long_text(200_000);
        let mut one = counter(Pattern::Gpt2, &["<|s|>"], false, 1);
        one.add_texts(&[&text[..10], &text[10..]]).unwrap();
        let mut four = counter(Pattern::Gpt2, &["<|s|>"], false, 4);
        four.add_texts(&[text.as_str()]).unwrap();
        assert_eq!(items(&mut one), items(&mut four));
        // Lines of a file are documents of their own; here no word crosses a line, so the counts agree too.
        let path = std::env::temp_dir().join(format!("bytepair-counts-{}.txt", std::process::id()));
        std::fs::write(&path, &text).unwrap();
        let mut file = counter(Pattern::Gpt2, &["<|s|>"], false, 3);
        file.add_file(path.to_str().unwrap(), Utf8Errors::Strict, |_| Ok(())).unwrap();
        std::fs::remove_file(&path).unwrap();
        let mut lines = counter(Pattern::Gpt2, &["<|s|>"], false, 1);
        let docs: Vec<&str> = text.split_inclusive('\n').collect();
        lines.add_texts(&docs).unwrap();
        assert_eq!(items(&mut file), items(&mut lines));
    }

    #[test]
    fn safe_cuts_split_where_the_pattern_splits() {
        let text = "x, abc  def\n ghi.jkl 12 mno";
        for pattern in [Pattern::Gpt2, Pattern::Cl100k, Pattern::O200k] {
            let pt = PreTokenizer::new(pattern.clone()).unwrap();
            let mut whole = Vec::new();
            pt.split(text, |p| whole.push(p.to_string())).unwrap();
            let mut at = 0;
            let mut cut_pieces = Vec::new();
            let mut cuts = 0;
            while let Some(cut) = safe_cut(&pattern, text, at + 1) {
                pt.split(&text[at..cut], |p| cut_pieces.push(p.to_string())).unwrap();
                at = cut;
                cuts += 1;
            }
            pt.split(&text[at..], |p| cut_pieces.push(p.to_string())).unwrap();
            assert_eq!(cuts, 2, "{pattern:?}: cuts before \" abc\" and \" mno\" only");
            assert_eq!(whole, cut_pieces, "{pattern:?}");
        }
        assert_eq!(safe_cut(&Pattern::None, "a b", 0), None);
    }

    #[test]
    fn kept_pieces_come_in_corpus_order_and_count_as_counted_ones() {
        let text = "b a<|endoftext|>b a a\n c b\n";
        let mut kept = counter(Pattern::Gpt2, &["<|endoftext|>"], false, 2);
        kept.keep_every_piece();
        kept.add_lines(text).unwrap();
        kept.add_texts(&["a b"]).unwrap();
        assert!(!kept.is_empty().unwrap());
        let pieces = kept.take_pieces().unwrap().unwrap();
        let all: Vec<&str> = pieces.iter().flat_map(Pieces::iter).collect();
        assert_eq!(all, ["b", " a", "b", " a", " a", "\n", " c", " b", "\n", "a", " b"]);
        assert!(kept.is_empty().unwrap());
        // Asked for counts, the pieces are counted (after which words added as counts come).
        let mut counted = counter(Pattern::Gpt2, &["<|endoftext|>"], false, 2);
        kept.add_lines(text).unwrap();
        counted.add_lines(text).unwrap();
        for c in [&mut kept, &mut counted] {
            c.add_counted_word("zz", 2).unwrap();
        }
        assert_eq!(items(&mut kept), items(&mut counted));
        assert!(kept.take_pieces().unwrap().is_none(), "counted words are not pieces in order");
    }

    #[test]
    fn a_huge_line_is_cut_safely() {
        // 3 MB without a line break: cut inside, counts equal the uncut single-thread result.
        let text: String = (0..300_000).map(|i| format!("ab{} ", i % 1000)).collect();
        let mut cut = counter(Pattern::Gpt2, &[], false, 2);
        cut.add_lines(&text).unwrap();
        let mut whole = counter(Pattern::Gpt2, &[], false, 1);
        let mut local = LocalCounts::default();
        count_text(&whole.pretokenizer, false, &text, &mut local).unwrap();
        for e in local.into_ordered() {
            whole.words.insert(e.word.into(), e.count);
        }
        assert_eq!(items(&mut cut), items(&mut whole));
    }

    #[test]
    fn invalid_utf8_names_the_offset() {
        let path = std::env::temp_dir().join(format!("bytepair-bad-{}.txt", std::process::id()));
        std::fs::write(&path, b"good line\nbad \xff here\n").unwrap();
        let mut c = counter(Pattern::Gpt2, &[], false, 1);
        let err = c.add_file(path.to_str().unwrap(), Utf8Errors::Strict, |_| Ok(())).unwrap_err();
        assert!(err.message.contains("14"), "{}", err.message);
        let mut c = counter(Pattern::Gpt2, &[], false, 1);
        c.add_file(path.to_str().unwrap(), Utf8Errors::Replace, |_| Ok(())).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(c.words().unwrap().contains_key(" \u{fffd}"));
    }
    #[test]
    fn counts_of_units_merged_in_any_order_equal_one_counter_over_all() {
        let text = long_text(60_000);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut whole = counter(Pattern::Gpt2, &["<|s|>"], false, 2);
        whole.add_lines(&text).unwrap();
        let expected = items(&mut whole);
        // Units of uneven size, counted separately, then merged in several orders (as a tree would).
        let mut units = Vec::new();
        let mut part = counter(Pattern::Gpt2, &["<|s|>"], false, 1);
        let mut start = 0;
        for (unit, size) in [7usize, 1, 400, 30, 2000, 5].iter().cycle().enumerate() {
            if start >= lines.len() {
                break;
            }
            let end = (start + size).min(lines.len());
            part.add_lines(&lines[start..end].concat()).unwrap();
            units.push(part.take_unit(unit as u64).unwrap());
            start = end;
        }
        assert!(units.len() > 10);
        let bytes_seen: u64 = units.iter().map(|u| u.bytes_seen).sum();
        assert_eq!(bytes_seen, text.len() as u64);
        for order in 0..3 {
            let mut pending: Vec<FirstSeenCounts> =
                units.iter().map(|u| FirstSeenCounts::from_bytes(&u.to_bytes()).unwrap()).collect();
            match order {
                0 => pending.reverse(),
                1 => pending.rotate_left(5),
                _ => {}
            }
            // A tree: merge neighbours pairwise until one is left.
            while pending.len() > 1 {
                let mut next = Vec::new();
                let mut it = pending.into_iter();
                while let Some(mut a) = it.next() {
                    if let Some(b) = it.next() {
                        a.merge(b);
                    }
                    next.push(a);
                }
                pending = next;
            }
            let merged = pending.pop().unwrap();
            assert_eq!(merged.special_bytes, whole.special_bytes().unwrap());
            let mut loaded = counter(Pattern::Gpt2, &["<|s|>"], false, 1);
            loaded.load_counts(merged).unwrap();
            assert_eq!(items(&mut loaded), expected, "merge order {order}");
        }
    }

    #[test]
    fn first_seen_wire_bytes_that_are_not_ours_are_refused() {
        let mut c = counter(Pattern::Gpt2, &[], false, 1);
        c.add_text("a b c a").unwrap();
        let bytes = c.take_unit(3).unwrap().to_bytes();
        assert_eq!(FirstSeenCounts::from_bytes(&bytes).unwrap().len(), 4); // "a", " b", " c", " a"
        for cut in [0, 5, 8, 20, 40, bytes.len() - 1] {
            assert!(FirstSeenCounts::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(FirstSeenCounts::from_bytes(&longer).is_err());
        let mut huge = bytes.clone();
        huge[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(FirstSeenCounts::from_bytes(&huge).is_err());
    }
}
