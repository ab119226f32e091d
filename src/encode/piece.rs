//! The fast path for byte-level and character-level vocabularies (no word markers): one piece → token ids.
//!
//! The encoder, and the order in which it looks for a piece's ids: the whole-token table, the seen table and
//! the per-thread cache (`caches.rs`; pieces of 2 or 3 bytes are merged at once instead), the backtracker
//! (`backtrack.rs`), the merge (`merge.rs`).
//!
//! Performance notes:
//! - Most pieces of ordinary text are a token as they are (" the", "ing"), so a piece is first looked up
//!   whole. That shortcut is only exact for tokens that BPE would build from their own bytes; a vocabulary
//!   can hold tokens it would split differently (merges that reuse a string, hand-edited vocabularies), so
//!   only the tokens checked to encode to themselves go into the lookup table.
//! - Otherwise, when the vocabulary allows it (all the OpenAI ones and trained ones do), the backtracker in
//!   `backtrack.rs` encodes the piece: longest matches checked pair by pair, no merge queue (10 MB of random
//!   letters: 0.37 → 0.19 s with gpt2, 0.50 → 0.23 s with cl100k; its notes have the rest).
//! - Under tiktoken's rule a pair's rank is the id of the token its bytes make, so a short piece can merge with
//!   the whole-token table alone (`merge_short_by_tokens`): for the rare words of fresh English, whose lines in
//!   the pair table and the backtracker's trie are cold, that took 1 050–1 500 cycles a piece instead of
//!   1 350–2 750 (10 MB of English, r50k / o200k, rdtsc around each), and fresh English encodes 9 % (r50k) to
//!   35 % (o200k) faster (steady, `examples/encode_fresh`, old and new alternated). Only pieces of ASCII
//!   and at most one other character go there (`MOST_NON_ASCII`): a piece of two-byte letters has twice the
//!   merges, and multilingual text, whose pieces mostly need merging and keep the backtracker's lines warm, went
//!   from 63–66 to 46–51 MB/s (o200k) with all pieces of up to 16 bytes; ASCII only, it stays at 63–65.
//! - Under tiktoken's rule the encoder keeps no pair table (`PairRanks::Spelled`): a pair's rank is the lookup
//!   of the token its bytes make. o200k_base loaded (RSS above the interpreter's, numpy imported): 81.5 →
//!   64.6 MB, the load's peak 107 → 88 MB, loading 0.40–0.43 → 0.29 s; cl100k 45.9 → 40.8 MB (peak 62 → 51);
//!   encoding unchanged (one call per 4 KB document of fresh English, old and new alternated).
//! - Character-level vocabularies map each character to its id (ASCII by table, others by hash).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::backtrack::Backtracker;
use super::caches::{
    CACHE_BYTES, CACHE_ENTRY_OVERHEAD, CACHED_PIECE_LIMIT, Key, Lookup, RECENT_IDS, Scratch, Seen, SeenTables,
};
use super::merge::END;
use super::pair_table::PairTable;
use super::whole::{ShortFinder, WholeTable};

/// No token, no rank (and no neighbour, in the merges' layouts).
pub(super) const NONE: u32 = u32::MAX;
/// Pieces longer than this go to the backtracker (when the vocabulary allows it). Even a piece of a few bytes
/// is faster there than merged (interleaved runs: multilingual text with o200k 23 → 37 MB/s from 6 bytes up
/// instead of 48, 44–47 from 3 bytes up; English, mostly whole tokens, unchanged).
const BACKTRACK_FROM: usize = 2;

/// Pieces that need merging and start at most this many bytes after the last one that did are merged closely
/// (`merging_closely`: base64, hex, random text), where few pieces are tokens or come back: the block loop
/// leaves them to the piece-by-piece path and the recent pieces' cache does not keep them; with long pieces
/// among them (`merging_densely`), the short ones read the short tokens' filter before a slot.
///
/// Those dense short pieces once went to the backtracker: 10 MB of base64, when they went to the whole-token
/// merge, r50k 0.35 → 0.49 s and cl100k 0.44 → 0.69 s (benchmark runs). Measured again after the short
/// tokens' filter and the whole-token merge's fetches came in, the whole-token merge was the quicker (first
/// calls on fresh base64, two fresh encoders alternated in one process, medians: cl100k 4 MB 0.875, 10 MB 0.880;
/// r50k 10 MB 0.911; see `merge_bytes`).
const DENSE_GAP: usize = 16;
/// ... and that in a run of this many: in English, rare words come in twos and threes (a name, a foreign
/// phrase), and with one close merge enough, English per document was 5–8 % slower.
const DENSE_RUN: u32 = 4;
/// ... and a piece of more than 16 bytes (which the backtracker merges) was merged at most this many bytes
/// before (r50k and cl100k base64: such a piece every ~130 bytes; o200k cuts letters at case changes, so
/// random letters have one every ~11 KB and base64 none): `merging_densely`, where the short tokens' filter is
/// read (see `encode_short`).
const LONG_GAP: usize = 1024;
/// Where pieces are merged close together (`merging_closely`), mostly-ASCII pieces of 17 up to this many bytes go
/// to the whole-token merge too (`merge_by_tokens`), not the backtracker: base64's runs of letters longer than 16
/// (with cl100k a fifth of the backtracker's pieces there and most of its time once the short ones went to the
/// merge), whose pair checks find the backtracker's tables cold in a first call; and `encode_long` keeps no such
/// piece in the per-thread cache of long pieces (which allocated two boxes a piece for pieces that never come
/// back). First calls on fresh base64, two fresh encoders per round in one process, one each way (medians of 6–8
/// rounds): both together cl100k 4 MB 0.880, 10 MB 0.834, r50k 4 MB 0.892; the merge alone 0.952 and 0.973 (4 MB),
/// the cache left alone 0.931 and 0.966; in one process switched call by call on fresh 0.5 MB slices (the
/// backtracker's tables warm) 1.007 / 0.981 and 0.992 / 0.983. Multilingual documents and Python source (cl100k,
/// o200k), the switch flipped every 15 or 30 documents, within a null run of the same harness.
const DENSE_LONG_MOST: usize = 32;

/// A thread's first encode with this encoder first asks for the whole-token table's lines into its core's cache,
/// in address order (`WholeTable::warm`): those of pieces of up to 8 bytes when they take at most
/// `WARM_SHORT_MOST` (r50k's 1 MB, cl100k's 2 MB, o200k's 4 MB), those of 9–16 bytes too when both take at most
/// `WARM_BOTH_MOST` (r50k's). The thread that loaded the vocabulary has most of them in its cache, a batch's
/// other thread none: it fetched each line when a piece first needed it, one wait at a time. A process's first
/// 10 MB batch of ~4 KB English documents on two threads, alternated processes, medians of the pairs' ratios
/// (wall / CPU per byte): r50k +11 % / +5.7 % (8 pairs), cl100k +8.4 % / +5.8 % (6), o200k +6 % / +7.6 % (6)
/// and again +2 % / +1.5 % (5); the batches after it, and one thread, the same. cl100k's 3 MB swept: +1.7 % only; o200k's 6 MB: +1.6 %.
const WARM_SHORT_MOST: usize = 4 << 20;
const WARM_BOTH_MOST: usize = 2 << 20;

/// Pieces of this many bytes or more (up to 16) have their seen-table slot fetched while the whole-token table
/// is probed, so that when the piece is no token the second lookup does not start with a second wait: of
/// English's pieces of 9 to 16 bytes, 29–61 % are no token (o200k). In-process A/B (a switch flipped every
/// 0.25 MB of ~4 KB documents, 8 processes, the halves swapped between them): o200k cold +3–4 %, steady +2 %;
/// cl100k cold +3.5 %; r50k +1.5–2 %. From 5 bytes on (a fetch for every such piece, most of them tokens) it was
/// 3–6 % slower than from 7; from 9 rather than 8, cold +2 %, steady even.
const SEEN_AHEAD_FROM: usize = 9;

/// When a piece is merged by the whole-token table (`merge_short_by_tokens`), the slots of its spans of 3 up to
/// this many bytes are fetched first, all at once. Each merge step looks up the spans its parts make, one step
/// after the other: 8.7 lookups for a new piece of 8.3 bytes on average (fresh English, o200k), ~1 300 cycles
/// a piece where the same merge with its lines in cache takes ~400 (rdtsc around each; new pieces are ~1 % of
/// English's pieces and a quarter of its time). In-process A/B on ~4 KB English documents (a switch flipped
/// every 0.25 MB, 6–8 processes, the halves swapped between them; three runs): o200k steady +2–6 %, cold +5–8 %;
/// cl100k +1–3 % / +4–7 %; r50k +1–2 % / +1–3 %; Python source +2–3.5 %; multilingual +1 %. Alternated
/// processes (3 pairs) agree with the low end: o200k cold +1–4 %, steady ~+3 %; cl100k +0–2 %. Up to 4 bytes:
/// o200k +2 % / +5.5 %; up to 8, 10 or 16 no better than 6; random letters and base64 (2 MB calls) no slower.
const SPANS_AHEAD_MOST: usize = 6;

/// Whether the piece at address `start`, just noted in `scratch`, is merged densely with long pieces among the
/// merged ones (see `DENSE_GAP`, `DENSE_RUN`, `LONG_GAP`): base64 and the like, whose short pieces are mostly
/// no token.
#[inline]
fn merging_densely(scratch: &Scratch, start: usize) -> bool {
    merging_closely(scratch) && start.wrapping_sub(scratch.long_merged_until) <= LONG_GAP
}

/// Whether the last `DENSE_RUN` pieces merged each began within `DENSE_GAP` bytes of the one before.
#[inline(always)]
fn merging_closely(scratch: &Scratch) -> bool {
    scratch.merged_close >= DENSE_RUN
}

/// Pieces with at most this many bytes of 0x80 and up (one character of up to three bytes: a curly quote or a
/// dash before a word, an accented letter) still merge by the whole-token table (`merge_bytes`). English's new
/// pieces with such a character (“The, ’em: 1 086 of the steady slice's 23 600 new ones, cl100k) went to the
/// backtracker, whose trie is cold there: perf of the steady pass put 4.5 % of it in the backtracker's search,
/// 2.0 % after (what is left: pieces of more than 16 bytes). ~4 KB documents, alternated processes, 4 pairs,
/// medians: English cl100k +3.2 % cold / +2.8 % steady, o200k +3.7 % / +0.9 %, r50k +3.8 % / +1.4 %;
/// multilingual text, whose words are mostly all non-ASCII and stay with the backtracker, even (cl100k, o200k;
/// r50k +10 % / 0 %).
const MOST_NON_ASCII: usize = 3;

/// Whether `piece` has at most `MOST_NON_ASCII` bytes of 0x80 and up.
///
/// ```text
/// " “The" → true (3), " été" → false (4)
/// ```
#[inline(always)]
fn mostly_ascii(piece: &[u8]) -> bool {
    // ASCII first: the word-at-a-time check most pieces stop at (base64's, random letters'), as before.
    piece.is_ascii() || piece.iter().filter(|&&b| b >= 0x80).count() <= MOST_NON_ASCII
}

/// The id of each unit of a piece: bytes, or characters.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // one per encoder; boxing the table would add an indirection per byte
pub enum Units {
    /// Token id of each single byte; NONE when the byte has no token.
    Bytes([u32; 256]),
    /// Token id of each character: ASCII by table, others by hash; NONE / absent when it has no token.
    Chars { ascii: [u32; 128], other: FxHashMap<char, u32> },
}

impl Units {
    /// The id of a one-byte piece (NONE if it has no token).
    #[inline]
    pub(super) fn single(&self, b: u8) -> u32 {
        match self {
            Units::Bytes(ids) => ids[b as usize],
            Units::Chars { ascii, .. } => ascii.get(b as usize).copied().unwrap_or(NONE),
        }
    }
}

/// `PieceEncoder::whole_in` for a loop over a block's pieces: the table's pointer and mask taken once.
#[derive(Clone, Copy, Debug)]
pub struct WholeFinder<'a>(ShortFinder<'a>);

impl WholeFinder<'_> {
    /// `PieceEncoder::whole_in`, without checking that 8 bytes of `text` are there.
    ///
    /// # Safety
    /// `start + 8 <= text.len()` (and `len` is 1 to 8).
    #[inline(always)]
    pub unsafe fn at(&self, text: &[u8], start: usize, len: usize) -> Option<u32> {
        // SAFETY: as the caller guarantees.
        let key = unsafe { Key::of_short_at(text, start, len) };
        self.0.find(key)
    }

    /// Starts loading the slot `at` looks at first for the same piece.
    ///
    /// # Safety
    /// As for `at`: `start + 8 <= text.len()` (and `len` is 1 to 8).
    #[inline(always)]
    pub unsafe fn prefetch_at(&self, text: &[u8], start: usize, len: usize) {
        // SAFETY: as the caller guarantees.
        let key = unsafe { Key::of_short_at(text, start, len) };
        self.0.prefetch(key)
    }
}

#[derive(Clone, Debug)]
pub struct PieceEncoder {
    pub(super) units: Units,
    /// The general path's rule (char mode): a rank merges at all its occurrences before the next rank.
    pub(super) all_occurrences: bool,
    /// HF's `fuse_unk` (char mode): a run of units without a token becomes one unknown token.
    fuse_unk: bool,
    /// Each token's length in units (bytes or characters; the unknown token and specials count one), for
    /// `merge_in_place`, and whether that merge applies: every merge's result is as long as its two parts
    /// (and ids leave the top bit free).
    pub(super) symbol_len: Vec<u32>,
    pub(super) in_place: bool,
    /// Where a pair's rank and result come from.
    pairs: PairRanks,
    /// Byte strings that are one token and that BPE builds back into that token.
    whole: WholeTable,
    /// Identifies this encoder in the per-thread cache (never reused, unlike an address).
    serial: u64,
    /// The pieces met that are no token, and their ids: one table for every thread encoding with this encoder.
    seen: SeenTables,
    /// Stands for bytes without a token, when the vocabulary has an unknown token.
    pub(super) unk: Option<u32>,
    /// Every token's bytes, concatenated (`spelling_ends[id]` ends token `id`'s; specials are empty), kept
    /// to build `backtracker` (byte-level, merge-order rule only; else empty).
    spellings: Vec<u8>,
    spelling_ends: Vec<u32>,
    /// Whether a piece of two bytes is what their pair makes (`merge_two`): not when every token is looked up
    /// whole whatever its merges (HF's `ignore_merges` with listed merges: "ab" may be a token no merge makes).
    two_bytes_by_pair: bool,
    /// The encoder of pieces that are not whole tokens, when the vocabulary allows it (see `backtrack`).
    /// Built by `prepare` (the Python `Tokenizer` does at load) or on first use.
    backtracker: OnceLock<Option<Backtracker>>,
}

static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// Where the rank and result of a pair of tokens come from.
#[derive(Clone, Debug)]
enum PairRanks {
    /// The vocabulary's merges, tabled: `(left, right)` → `(rank << 32) | result`.
    Table(PairTable),
    /// tiktoken's rule with ranks = ids: two tokens merge into the token their bytes make together, at its id,
    /// looked up in the whole-token table (which holds every token under this rule); pairs of two small ids
    /// (bytes, in tiktoken's files) come from `small`, those lookups tabled at build (`PairTable::get_small`).
    ///
    /// No pair table: one of every split of every token into two tokens was 16.8 MB for o200k_base (446 K
    /// pairs in 1 M slots), 8 MB more while being built, and the encoder rarely asks a pair's rank under this
    /// rule — a piece that is not a whole token goes to `merge_short_by_tokens` or the backtracker; the merge
    /// asks only for two-byte pieces (the dense table), at load (each token's own merges) and when a
    /// vocabulary gets no backtracker.
    Spelled { small: PairTable },
}

/// Why a piece could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceError {
    /// A byte that has no token (and there is no unknown token): its offset in the piece.
    UnknownByte(usize),
    /// Memory for this many bytes, sized by the piece, could not be had.
    OutOfMemory(usize),
}

/// Makes room for `additional` more items in `v`, or the piece's out-of-memory error.
pub(super) fn reserve_for_piece<T>(v: &mut Vec<T>, additional: usize) -> Result<(), PieceError> {
    crate::error::try_reserve_moving_items(v, additional)
        .map_err(|_| PieceError::OutOfMemory(v.len().saturating_add(additional).saturating_mul(size_of::<T>())))
}

impl PieceEncoder {
    /// HF's `fuse_unk` for a character-level encoder (tokens hold no unknown units, so the whole-piece table
    /// built by `new` does not depend on it).
    pub fn with_fuse_unk(mut self, fuse_unk: bool) -> PieceEncoder {
        self.fuse_unk = fuse_unk;
        self
    }

    /// `pairs`: every mergeable pair `(left, right)` with its rank and result (lower rank merges first).
    /// `tokens`: each token's bytes by id (None for special tokens and unused ids), for the whole-piece table.
    /// `whole_always`: a piece that is a token is that token, whatever BPE would make of it (tiktoken's rule);
    /// otherwise only tokens that BPE builds back from their bytes are looked up whole.
    /// `all_occurrences`: merge each rank at all its occurrences before the next (character-level rule).
    pub fn new(
        units: Units,
        pairs: impl IntoIterator<Item = (u32, u32, u32, u32)>,
        tokens: &[Option<&[u8]>],
        unk: Option<u32>,
        whole_always: bool,
        all_occurrences: bool,
    ) -> PieceEncoder {
        // A pair given twice keeps its lowest rank, as when merges are applied in order.
        let table = PairTable::new(
            pairs.into_iter().map(|(left, right, rank, result)| (left, right, (rank as u64) << 32 | result as u64)),
        );
        let chars = matches!(units, Units::Chars { .. });
        let symbol_len = symbol_lengths(tokens, chars, unk);
        let len_of = |id: u32| symbol_len.get(id as usize).copied();
        let in_place = tokens.len() < END as usize
            && table.iter().all(|(left, right, v)| {
                let result = v as u32;
                matches!((len_of(left), len_of(right), len_of(result)), (Some(l), Some(r), Some(x)) if l + r == x)
            });
        let mut encoder =
            PieceEncoder::assemble(units, PairRanks::Table(table), tokens, unk, symbol_len, in_place, all_occurrences);
        encoder.two_bytes_by_pair = !whole_always;
        // Which tokens BPE builds from their own bytes, merged on all cores (o200k: 200 K merges, a sixth of
        // loading it on one).
        let builds_itself: Vec<bool> = if whole_always {
            Vec::new()
        } else {
            crate::on_own_pool(|| {
                tokens
                    .par_iter()
                    .enumerate()
                    .map_init(
                        || (Scratch::default(), Vec::new()),
                        |(scratch, out), (id, bytes)| {
                            out.clear();
                            bytes.is_some_and(|bytes| {
                                bytes.len() >= 2
                                    && encoder.merge_by_rank(bytes, NONE, scratch, out).is_ok()
                                    && out[..] == [id as u32]
                            })
                        },
                    )
                    .collect()
            })
        };
        let whole = tokens
            .iter()
            .enumerate()
            .filter(|&(id, bytes)| bytes.is_some() && (whole_always || builds_itself[id]))
            .map(|(id, bytes)| (bytes.expect("filtered"), id as u32));
        encoder.whole = WholeTable::new(whole, &encoder.singles());
        encoder
    }

    /// The encoder of a byte-level vocabulary under tiktoken's rule, ranks being ids (tiktoken's own files):
    /// any two adjacent parts whose bytes together are a token merge into it, lowest id first, and a piece
    /// that is a token is that token. `tokens`: bytes by id (None for specials and unused ids).
    pub fn tiktoken(byte_ids: [u32; 256], tokens: &[Option<&[u8]>], unk: Option<u32>) -> PieceEncoder {
        let symbol_len = symbol_lengths(tokens, false, unk);
        // Every pair that merges spells its result, so a merged symbol's length is its parts' (unless an unknown
        // token, counted as one unit, is among them).
        let in_place = tokens.len() < END as usize && unk.is_none();
        let units = Units::Bytes(byte_ids);
        let no_pairs = PairRanks::Spelled { small: PairTable::new([]) };
        let mut encoder = PieceEncoder::assemble(units, no_pairs, tokens, unk, symbol_len, in_place, false);
        let whole = tokens.iter().enumerate().filter_map(|(id, bytes)| Some(((*bytes)?, id as u32)));
        encoder.whole = WholeTable::new(whole, &encoder.singles());
        let byte_pairs = (0..256u32).flat_map(|left| (0..256u32).map(move |right| (left, right)));
        let small = PairTable::new(byte_pairs.filter_map(|(left, right)| {
            let value = encoder.spelled_pair(left, right);
            (value != u64::MAX).then_some((left, right, value))
        }));
        encoder.pairs = PairRanks::Spelled { small };
        encoder
    }

    /// The parts `new` and `tiktoken` share; the whole-token table is left empty for them to fill.
    fn assemble(
        units: Units,
        pairs: PairRanks,
        tokens: &[Option<&[u8]>],
        unk: Option<u32>,
        symbol_len: Vec<u32>,
        in_place: bool,
        all_occurrences: bool,
    ) -> PieceEncoder {
        let serial = NEXT_SERIAL.fetch_add(1, Ordering::Relaxed);
        let (mut spellings, mut spelling_ends) = (Vec::new(), Vec::new());
        if matches!(units, Units::Bytes(_)) && !all_occurrences {
            spelling_ends.reserve(tokens.len());
            for t in tokens {
                spellings.extend_from_slice(t.unwrap_or_default());
                spelling_ends.push(spellings.len() as u32);
            }
        }
        PieceEncoder {
            units,
            all_occurrences,
            fuse_unk: false,
            symbol_len,
            in_place,
            pairs,
            whole: WholeTable::default(),
            unk,
            serial,
            seen: SeenTables::default(),
            spellings,
            spelling_ends,
            two_bytes_by_pair: true,
            backtracker: OnceLock::new(),
        }
    }

    /// Whether tiktoken's rule with ranks = ids applies: two parts merge when their bytes together are a token,
    /// at its id (see `merge_short_by_tokens`).
    #[inline]
    pub(super) fn tokens_rank_pairs(&self) -> bool {
        matches!(self.pairs, PairRanks::Spelled { .. })
    }

    /// `(rank << 32) | result` of the pair `(left, right)`; `u64::MAX` if it does not merge.
    #[inline]
    pub(super) fn pair_value(&self, left: u32, right: u32) -> u64 {
        match &self.pairs {
            PairRanks::Table(table) => table.get(left, right),
            PairRanks::Spelled { small } => {
                small.get_small(left, right).unwrap_or_else(|| self.spelled_pair(left, right))
            }
        }
    }

    /// `pair_value` under tiktoken's rule: the token the two tokens' bytes make together, at its id.
    #[inline(never)]
    fn spelled_pair(&self, left: u32, right: u32) -> u64 {
        let (Some(l), Some(r)) = (self.spelling(left), self.spelling(right)) else { return u64::MAX };
        if l.is_empty() || r.is_empty() {
            return u64::MAX;
        }
        let mut joined = [0u8; 64];
        let id = if l.len() + r.len() <= joined.len() {
            joined[..l.len()].copy_from_slice(l);
            joined[l.len()..l.len() + r.len()].copy_from_slice(r);
            self.token_of(&joined[..l.len() + r.len()])
        } else {
            self.token_of(&[l, r].concat())
        };
        if id == NONE { u64::MAX } else { (id as u64) << 32 | id as u64 }
    }

    /// The id each one-byte piece encodes to (NONE: none, the piece needs `unk` or is an error).
    fn singles(&self) -> [u32; 256] {
        std::array::from_fn(|b| self.units.single(b as u8))
    }

    /// The id of the piece `text[start..start + len]` of 1 to 8 bytes, 8 bytes of `text` from `start`, if it is
    /// one token (`encode_next_in` would give that id alone); None if not. One probe of the whole-token table
    /// whatever the length, so that a splitter's loop over a block's pieces has no branch per length.
    #[inline(always)]
    pub fn whole_in(&self, text: &[u8], start: usize, len: usize) -> Option<u32> {
        let key = Key::of_short_in(text, start, len);
        let id = self.whole.get_up_to_8(key);
        (id != NONE).then_some(id)
    }

    /// The whole-token table's lookup of pieces of up to 8 bytes, for a loop over many (`WholeFinder::at`).
    #[inline(always)]
    pub fn whole_finder(&self) -> WholeFinder<'_> {
        WholeFinder(self.whole.short_finder())
    }

    /// Whether the last pieces merged came close one after another (`DENSE_GAP`, `DENSE_RUN`): base64, hex,
    /// random text, where most pieces are no token (`whole_in` would look most of them up in vain).
    #[inline(always)]
    pub fn merging_closely(&self, scratch: &Scratch) -> bool {
        merging_closely(scratch)
    }

    /// The ids of the piece `text[start..start + len]` (1 to 8 bytes, no whole token) if it is among the recent
    /// ones `encode_not_whole_in` kept in `scratch` (see `caches::Recent`): the first `count` of the array.
    ///
    /// # Safety
    /// `start + 8 <= text.len()`.
    #[inline(always)]
    pub unsafe fn recent_at<'s>(
        &self,
        scratch: &'s Scratch,
        text: &[u8],
        start: usize,
        len: usize,
    ) -> Option<(&'s [u32; RECENT_IDS], usize)> {
        // SAFETY: as the caller guarantees.
        let key = unsafe { Key::of_short_at(text, start, len) };
        scratch.recent.get(key)
    }

    /// `encode_next_in` for a piece of 1 to 8 bytes, 8 bytes of `text` from `start`, that `whole_in` found no
    /// token for (not looked up again); the piece and its ids are then held among the recent ones (`recent_at`),
    /// unless pieces are being merged densely (base64, random text: few come back).
    #[inline]
    pub fn encode_not_whole_in(
        &self,
        text: &[u8],
        start: usize,
        end: usize,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), PieceError> {
        debug_assert!(self.owns(scratch), "encode_not_whole_in without begin");
        let piece = &text[start..end];
        let key = Key::of_short_in(text, start, piece.len());
        let before = out.len();
        match piece.len() {
            1 => self.unit_without_token(out)?, // (every byte with a token is in the table)
            2 if self.merge_two(piece, out) => {}
            _ => self.encode_merged(piece, key, key.hash(), scratch, out)?,
        }
        if !merging_closely(scratch) {
            scratch.recent.put(key, &out[before..]);
        }
        Ok(())
    }

    /// The bytes of token `id` (empty for specials); None if there is no such id.
    fn spelling(&self, id: u32) -> Option<&[u8]> {
        let end = *self.spelling_ends.get(id as usize)? as usize;
        let start = if id == 0 { 0 } else { self.spelling_ends[id as usize - 1] as usize };
        Some(&self.spellings[start..end])
    }

    /// The token of the whole-token table whose bytes are `bytes` (two or more of them); NONE if none.
    pub(super) fn token_of(&self, bytes: &[u8]) -> u32 {
        match bytes.len() {
            0 | 1 => NONE,
            2..=16 => self.whole_token(bytes),
            _ => self.whole.get_long(bytes),
        }
    }

    /// Appends the ids of one piece to `out`.
    #[inline]
    pub fn encode(&self, piece: &[u8], scratch: &mut Scratch, out: &mut Vec<u32>) -> Result<(), PieceError> {
        self.begin(scratch);
        self.encode_next(piece, scratch, out)
    }

    /// The token whose bytes are `bytes` (2 to 16 of them), from the whole-token table; NONE if none.
    #[inline(always)]
    pub(super) fn whole_token(&self, bytes: &[u8]) -> u32 {
        let key = Key::of(bytes);
        self.whole.get_short(bytes.len(), key, key.hash())
    }

    /// Starts loading the whole-token slots of `piece`'s spans of 3 to `SPANS_AHEAD_MOST` bytes (a piece of up to
    /// 16 bytes about to be merged by `merge_short_by_tokens`, whose steps look spans up one after another).
    #[inline(always)]
    pub(super) fn fetch_spans_ahead(&self, piece: &[u8]) {
        debug_assert!(piece.len() <= 16);
        // Zero-padded, so that every span's key is one load of 8 bytes.
        let mut padded = [0u8; 24];
        padded[..piece.len()].copy_from_slice(piece);
        let short = self.whole.short_finder();
        for len in 3..=SPANS_AHEAD_MOST.min(piece.len()) {
            for at in 0..=piece.len() - len {
                short.prefetch(Key::of_short_in(&padded, at, len));
            }
        }
    }

    /// Readies the encoder's seen table for `bytes` of text about to be encoded, in one call or many (a batch's
    /// chunks, on any threads): see `SeenTables::expect`.
    pub fn expect_text(&self, bytes: usize) {
        self.seen.expect(bytes);
    }

    /// Whether `scratch` holds this encoder's caches (else `begin` clears them).
    pub fn owns(&self, scratch: &Scratch) -> bool {
        scratch.serial == self.serial
    }

    /// Readies `scratch` for this encoder: its caches, if another encoder filled them, start afresh. Once per
    /// text, before `encode_next` on its pieces (per piece, this check was 5% of encoding English).
    #[inline]
    pub fn begin(&self, scratch: &mut Scratch) {
        if !self.owns(scratch) {
            scratch.cache.clear();
            scratch.cache_bytes = 0;
            scratch.recent.clear();
            scratch.seen = Seen::default();
            scratch.serial = self.serial;
            self.seen.attach();
            self.whole.warm(WARM_SHORT_MOST, WARM_BOTH_MOST);
        }
        scratch.seen.refresh(&self.seen);
    }

    /// `encode` for the next piece of a text, after `begin` with this `scratch` (and no other encoder since).
    /// Only the common cases are here — one byte, a whole token of up to 16 bytes — so that this stays small
    /// where it is inlined, in each pre-tokenizer's loop.
    #[inline(always)]
    pub fn encode_next(&self, piece: &[u8], scratch: &mut Scratch, out: &mut Vec<u32>) -> Result<(), PieceError> {
        debug_assert!(self.owns(scratch), "encode_next without begin");
        match piece.len() {
            1 => self.encode_byte(piece[0], out),
            2 if self.merge_two(piece, out) => Ok(()),
            2..=16 => self.encode_short(piece, Key::of(piece), scratch, out),
            _ => self.encode_long(piece, scratch, out),
        }
    }

    /// `encode_next` for the piece `text[start..end]`: the key of a piece of up to 8 bytes comes from one load
    /// of the text when 8 bytes of it follow the piece's start.
    #[inline(always)]
    pub fn encode_next_in(
        &self,
        text: &[u8],
        start: usize,
        end: usize,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), PieceError> {
        debug_assert!(self.owns(scratch), "encode_next_in without begin");
        let piece = &text[start..end];
        match piece.len() {
            1 => self.encode_byte(piece[0], out),
            2 if self.merge_two(piece, out) => Ok(()),
            2..=8 if start + 8 <= text.len() => {
                self.encode_short(piece, Key::of_short_in(text, start, piece.len()), scratch, out)
            }
            2..=16 => self.encode_short(piece, Key::of(piece), scratch, out),
            _ => self.encode_long(piece, scratch, out),
        }
    }

    #[inline(always)]
    fn encode_byte(&self, byte: u8, out: &mut Vec<u32>) -> Result<(), PieceError> {
        match self.units.single(byte) {
            NONE => self.unit_without_token(out),
            id => {
                out.push(id);
                Ok(())
            }
        }
    }

    /// A piece of 2 to 16 bytes with its key: a whole token (one probe of the shared table), else `encode_merged`.
    #[inline(always)]
    fn encode_short(
        &self,
        piece: &[u8],
        key: Key,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), PieceError> {
        let hash = key.hash();
        if piece.len() >= SEEN_AHEAD_FROM {
            scratch.seen.prefetch(hash);
        }
        // Merging densely (`merging_densely`: base64, random text) most short pieces are no token: a filter turns
        // them away before a slot of the table (1–4 MB, random lines) is read. Fresh 0.5 MB slices, the filter
        // switched call by call in one process (medians of 40–60 pairs), when the backtracker took those pieces
        // and its lines stayed in the cache so: base64 cl100k −10 to −17 % time, r50k −5 to −12 %; o200k's base64
        // and letters, where it is rarely asked, −0.5 to +2.7 % (the noise). Since the whole-token merge takes
        // them (`merge_bytes`), without the filter: 20 slices each, cl100k −2.3 %, r50k −5.5 %; first calls on 4
        // MB (8 pairs of fresh encoders), −1.3 % and +0.2 %: kept for now, the gain being within the noise.
        let id = if piece.len() <= 8 && merging_densely(scratch, piece.as_ptr() as usize) {
            self.whole.short_finder().find_unless_filtered(key).unwrap_or(NONE)
        } else {
            self.whole.get_short(piece.len(), key, hash)
        };
        if id != NONE {
            out.push(id);
            return Ok(());
        }
        self.encode_merged(piece, key, hash, scratch, out)
    }

    /// A one-unit piece without a token: the unknown token, or the error.
    #[cold]
    fn unit_without_token(&self, out: &mut Vec<u32>) -> Result<(), PieceError> {
        let unk = self.unk.ok_or(PieceError::UnknownByte(0))?;
        out.push(unk);
        Ok(())
    }

    /// A piece of 2 to 16 bytes that is not a whole token: of 3 or 4 bytes, merged at once (`merge_three`,
    /// `merge_four`); else met before (the encoder's seen table), else merged and remembered there — or merged
    /// alone while few pieces come back (see `Seen::look_up`).
    #[inline(never)]
    fn encode_merged(
        &self,
        piece: &[u8],
        key: Key,
        hash: u64,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), PieceError> {
        if piece.len() == 3 && self.merge_three(piece, out)? {
            return Ok(());
        }
        if piece.len() == 4 && self.merge_four(piece, out)? {
            return Ok(());
        }
        match scratch.seen.look_up(key, hash) {
            Lookup::Found(at) => {
                scratch.seen.extend_ids(at, out);
                return Ok(());
            }
            Lookup::Passed => return self.merge_bytes(piece, scratch, out),
            Lookup::Missing => {}
        }
        let start = out.len();
        self.merge_bytes(piece, scratch, out)?;
        scratch.seen.keep(&self.seen, key, &out[start..], hash);
        Ok(())
    }

    /// BPE of a piece of two bytes (byte-level vocabularies): their pair's merge, or the two bytes; false
    /// (nothing appended) if a byte has no token, units are characters, or tokens are whole whatever their
    /// merges (`two_bytes_by_pair`). Two units merge exactly when their
    /// pair does, so no whole-token lookup is needed: the dense table of byte pairs answers (a probe of o200k's
    /// 4 MB whole-token table, cold for the random pairs of random letters and base64, where a quarter of the
    /// pieces have two bytes).
    #[inline(always)]
    fn merge_two(&self, piece: &[u8], out: &mut Vec<u32>) -> bool {
        let Units::Bytes(byte_ids) = &self.units else { return false };
        if !self.two_bytes_by_pair {
            return false;
        }
        let (a, b) = (byte_ids[piece[0] as usize], byte_ids[piece[1] as usize]);
        if a == NONE || b == NONE {
            return false;
        }
        match self.pair_value(a, b) {
            u64::MAX => {
                out.push(a);
                out.push(b);
            }
            value => out.push(value as u32), // the result, from `(rank << 32) | result`
        }
        true
    }

    /// BPE of a piece of three bytes that is not a whole token (byte-level vocabularies), from its pairs' values
    /// alone: false (nothing appended) if a byte has no token or units are characters. Cheaper than a lookup in
    /// the seen table, so these pieces don't go there: in random letters and base64 a third of the pieces that
    /// are not whole tokens have two or three bytes (o200k), and they took the seen table's finds above its
    /// pass-by rule while the longer ones, which never came back, paid a miss there each (`Seen::look_up`).
    ///
    /// ```text
    /// o200k: "Yab" (no token): "Ya" ranks 41 035, "ab" 378 → [56 "Y", 378 "ab"]; "Kqv": no pair → [42, 80, 85]
    /// ```
    #[inline]
    fn merge_three(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<bool, PieceError> {
        let Units::Bytes(byte_ids) = &self.units else { return Ok(false) };
        let ids @ [a, b, c] = [0, 1, 2].map(|i| byte_ids[piece[i] as usize]);
        if ids.contains(&NONE) || self.all_occurrences {
            return Ok(false);
        }
        reserve_for_piece(out, 3)?;
        let joined = |value: u64| value as u32; // the result's id, from `(rank << 32) | result`
        let (first, second) = (self.pair_value(a, b), self.pair_value(b, c));
        // The lower rank merges first, the left pair on a tie (the same pair twice: "aaa"); then the merged
        // token may merge with the byte left over. Under tiktoken's rule it never does here: the three bytes
        // would then be a token that BPE builds from its own bytes, and a whole token is not merged.
        let rest = |left: u32, right: u32| {
            if self.tokens_rank_pairs() { u64::MAX } else { self.pair_value(left, right) }
        };
        let (left, right, value) = match (first, second) {
            (u64::MAX, u64::MAX) => {
                out.extend_from_slice(&ids);
                return Ok(true);
            }
            _ if first <= second => (joined(first), c, rest(joined(first), c)),
            _ => (a, joined(second), rest(a, joined(second))),
        };
        match value {
            u64::MAX => out.extend_from_slice(&[left, right]),
            value => out.push(joined(value)),
        }
        Ok(true)
    }

    /// BPE of a piece of four bytes that is not a whole token, under tiktoken's rule (a pair's rank is the id of
    /// the token its bytes make): from its three pairs' values and at most two lookups of three-byte spans, made
    /// side by side. The four bytes never end as one token (they would be a whole token). False (nothing
    /// appended) if a byte has no token, units are characters, or the rule is another.
    ///
    /// A fifth of the pieces of random letters cut at case changes (o200k) have four bytes: the general short
    /// merge took them in a loop of dependent steps, and the seen table kept them though they never come back.
    /// Alternated processes (2 MB texts, median of 4 calls, 3 pairs): o200k base64 9–11 % less time, random
    /// letters 0.5–3 %, cl100k base64 the same; ~4 KB documents of English (o200k) and Python source (cl100k,
    /// o200k) the same, cold and steady. (An in-process A/B on documents, the switch flipped every 0.25 MB,
    /// showed Python source +12 % steady: both arms share the seen table, which only one of them filled with
    /// four-byte pieces.)
    ///
    /// ```text
    /// o200k: "hodz" (no token): "ho" 1 555, "od" 368, "dz" 27 013 → "od" first; then "hod" 36 538 against
    /// "odz" 165 797 → [36 538 "hod", 89 "z"]
    /// ```
    #[inline]
    fn merge_four(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<bool, PieceError> {
        let Units::Bytes(byte_ids) = &self.units else { return Ok(false) };
        if !self.tokens_rank_pairs() {
            return Ok(false);
        }
        let ids @ [a, b, c, d] = [0, 1, 2, 3].map(|i| byte_ids[piece[i] as usize]);
        if ids.contains(&NONE) {
            return Ok(false);
        }
        reserve_for_piece(out, 4)?;
        // Under the rule a value is `(id << 32) | id` (u64::MAX: no token), so values order as ranks do, and two
        // pairs tie only when they make the same token.
        let (ab, bc, cd) = (self.pair_value(a, b), self.pair_value(b, c), self.pair_value(c, d));
        let id = |value: u64| value as u32;
        // The token of three bytes from `at` (NONE if none): its rank as a pair, by the rule.
        let three = |at: usize| self.whole_token(&piece[at..at + 3]);
        let rank = |value: u64| (value >> 32) as u32; // (NONE for no token)
        if ab == u64::MAX && bc == u64::MAX && cd == u64::MAX {
            out.extend_from_slice(&ids);
            return Ok(true);
        }
        // The lowest pair merges first (the leftmost on a tie); then the two pairs its part now makes with its
        // neighbours, or with the bytes left over, compete: the lower rank merges (different spans are different
        // tokens, so they tie only when neither is one).
        let (left, right, left_merged, right_merged, neither) = if ab <= bc && ab <= cd {
            let abc = three(0); // "ab" + "c", or "c" + "d"
            (abc, rank(cd), [abc, d], [id(ab), id(cd)], [id(ab), c, d])
        } else if bc <= cd {
            let (abc, bcd) = (three(0), three(1)); // "a" + "bc", or "bc" + "d"
            (abc, bcd, [abc, d], [a, bcd], [a, id(bc), d])
        } else {
            let bcd = three(1); // "a" + "b", or "b" + "cd"
            (rank(ab), bcd, [id(ab), id(cd)], [a, bcd], [a, b, id(cd)])
        };
        if left == NONE && right == NONE {
            out.extend_from_slice(&neither);
        } else if left < right {
            out.extend_from_slice(&left_merged);
        } else {
            out.extend_from_slice(&right_merged);
        }
        Ok(true)
    }

    /// A piece of more than 16 bytes: a whole token, a piece this thread merged before (its cache), or merged
    /// (and cached, up to `CACHED_PIECE_LIMIT` bytes).
    #[inline(never)]
    fn encode_long(&self, piece: &[u8], scratch: &mut Scratch, out: &mut Vec<u32>) -> Result<(), PieceError> {
        let id = self.whole.get_long(piece);
        if id != NONE {
            out.push(id);
            return Ok(());
        }
        // Merging close together (base64, random text), long pieces do not come back (`DENSE_LONG_MOST`).
        let keeps = !merging_closely(scratch);
        if keeps && let Some(ids) = scratch.cache.get(piece) {
            out.extend_from_slice(ids);
            return Ok(());
        }
        let start = out.len();
        self.merge_bytes(piece, scratch, out)?;
        if keeps && piece.len() <= CACHED_PIECE_LIMIT {
            let ids = &out[start..];
            let size = piece.len() + 4 * ids.len() + CACHE_ENTRY_OVERHEAD;
            if scratch.cache_bytes + size > CACHE_BYTES {
                scratch.cache.clear();
                scratch.cache_bytes = 0;
            }
            scratch.cache_bytes += size;
            scratch.cache.insert(piece.into(), ids.into());
        }
        Ok(())
    }

    /// BPE over `bytes` with only the pairs ranked below `limit` (how a tiktoken token's own merge is found).
    pub fn split_below(&self, bytes: &[u8], limit: u32, scratch: &mut Scratch, out: &mut Vec<u32>) {
        let _ = self.merge_by_rank(bytes, limit, scratch, out);
    }

    /// What BPE makes of the bytes of `piece`, with no table looked up: no caches, and no whole-token
    /// shortcut (for a part of a longer piece, which must not be taken for a token; see `crate::cutting`).
    pub fn encode_pure(&self, piece: &[u8], scratch: &mut Scratch, out: &mut Vec<u32>) -> Result<(), PieceError> {
        self.merge_bytes(piece, scratch, out)
    }

    /// Builds the backtracker now rather than on the first piece that needs it.
    pub fn prepare(&self) {
        let _ = self.backtracker();
    }

    /// The backtracker, built on first use; None when the vocabulary does not allow it.
    pub(super) fn backtracker(&self) -> Option<&Backtracker> {
        self.backtracker
            .get_or_init(|| {
                let Units::Bytes(byte_ids) = &self.units else { return None };
                if self.spelling_ends.is_empty() {
                    return None;
                }
                let tokens: Vec<Option<&[u8]>> = (0..self.spelling_ends.len() as u32)
                    .map(|id| self.spelling(id).filter(|spelling| !spelling.is_empty()))
                    .collect();
                let listed = match &self.pairs {
                    PairRanks::Table(table) => Some(table),
                    PairRanks::Spelled { .. } => None, // (every pair spells its result, by the rule)
                };
                Backtracker::build(byte_ids, &|left, right| self.pair_value(left, right), listed, &tokens)
            })
            .as_ref()
    }

    /// BPE over the bytes of a piece: short, mostly ASCII pieces under tiktoken's rule by the whole-token table
    /// (`merge_short_by_tokens`; up to `DENSE_LONG_MOST` bytes where pieces are merged close together), the others
    /// by the backtracker when the vocabulary allows it, else merged.
    fn merge_bytes(&self, piece: &[u8], scratch: &mut Scratch, out: &mut Vec<u32>) -> Result<(), PieceError> {
        // Where the last pieces merged came close (`DENSE_GAP`): the gaps are read from the pieces' addresses,
        // which only guide the choices (every way gives the same ids). Short pieces go to the whole-token merge
        // there too: in one process, switched call by call on fresh 0.5 MB slices of base64 (20 pairs), their
        // merge there rather than by the backtracker took cl100k −6.5 % time, r50k −2.7 %; random letters (one
        // piece) ±1 %; the pieces merged densely in English and code are ~1 % of the short ones merged.
        let start = piece.as_ptr() as usize;
        let close = start.wrapping_sub(scratch.merged_until) <= DENSE_GAP;
        scratch.merged_close = if close { scratch.merged_close.saturating_add(1) } else { 0 };
        scratch.merged_until = start + piece.len();
        if piece.len() > 16 {
            scratch.long_merged_until = start + piece.len();
        }
        // Short pieces anywhere, longer ones where pieces come close together (`DENSE_LONG_MOST`); the length is
        // asked first, as `mostly_ascii` may read the whole piece.
        let by_tokens = match piece.len() {
            2..=16 => true,
            17..=DENSE_LONG_MOST => merging_closely(scratch),
            _ => false,
        };
        if by_tokens && self.tokens_rank_pairs() && mostly_ascii(piece) {
            reserve_for_piece(out, piece.len())?;
            let merged = if piece.len() <= 16 {
                self.merge_short_by_tokens(piece, out)
            } else {
                self.merge_by_tokens::<DENSE_LONG_MOST>(piece, out)
            };
            if merged {
                return Ok(());
            }
        }
        if piece.len() > BACKTRACK_FROM
            && let Some(backtracker) = self.backtracker()
        {
            // The search's room (a bit per byte, at most an id per byte), had here or refused with an error.
            reserve_for_piece(&mut scratch.dead, piece.len() / 64 + 1)?;
            reserve_for_piece(out, piece.len())?;
            if backtracker.encode(piece, &mut scratch.dead, out) {
                return Ok(());
            }
        }
        self.merge_by_rank(piece, NONE, scratch, out)
    }

    /// Appends the id of each unit of `piece` (the unknown token for units without one, if there is one).
    #[inline]
    pub(super) fn push_units(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), PieceError> {
        match &self.units {
            Units::Bytes(ids) => {
                for (i, &b) in piece.iter().enumerate() {
                    match ids[b as usize] {
                        NONE => out.push(self.unk.ok_or(PieceError::UnknownByte(i))?),
                        id => out.push(id),
                    }
                }
            }
            Units::Chars { ascii, other } => {
                let mut after_unknown = false;
                let mut i = 0;
                while i < piece.len() {
                    let b = piece[i];
                    let (id, len) = if b < 128 {
                        (ascii[b as usize], 1)
                    } else {
                        // Pieces come from `str`s and tokens of a character vocabulary: valid UTF-8.
                        let len = utf8_len(b);
                        let c = std::str::from_utf8(&piece[i..(i + len).min(piece.len())])
                            .ok()
                            .and_then(|s| s.chars().next());
                        (c.and_then(|c| other.get(&c).copied()).unwrap_or(NONE), len)
                    };
                    match id {
                        NONE => {
                            let unk = self.unk.ok_or(PieceError::UnknownByte(i))?;
                            if !(self.fuse_unk && after_unknown) {
                                out.push(unk);
                            }
                            after_unknown = true;
                        }
                        id => {
                            out.push(id);
                            after_unknown = false;
                        }
                    }
                    i += len;
                }
            }
        }
        Ok(())
    }
}

/// Each token's length in units (bytes, or characters with `chars`); 1 for specials and the unknown token.
fn symbol_lengths(tokens: &[Option<&[u8]>], chars: bool, unk: Option<u32>) -> Vec<u32> {
    let mut symbol_len: Vec<u32> = tokens
        .iter()
        .map(|t| match t {
            Some(b) if chars => std::str::from_utf8(b).map_or(1, |s| s.chars().count().max(1) as u32),
            Some(b) => b.len().max(1) as u32,
            None => 1,
        })
        .collect();
    if let Some(unk) = unk
        && let Some(len) = symbol_len.get_mut(unk as usize)
    {
        *len = 1;
    }
    symbol_len
}

/// Length of the UTF-8 sequence a lead byte starts (1 for a stray continuation byte).
#[inline]
fn utf8_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Bytes a=0 b=1; merges: (a,b)→ab=2 rank 0, (ab,ab)→abab=3 rank 1, (a,a)→aa=4 rank 2.
    pub(in crate::encode) fn encoder() -> PieceEncoder {
        let mut byte_ids = [NONE; 256];
        byte_ids[b'a' as usize] = 0;
        byte_ids[b'b' as usize] = 1;
        let tokens: Vec<Option<&[u8]>> = vec![Some(b"a"), Some(b"b"), Some(b"ab"), Some(b"abab"), Some(b"aa")];
        PieceEncoder::new(
            Units::Bytes(byte_ids),
            [(0, 1, 0, 2), (2, 2, 1, 3), (0, 0, 2, 4)],
            &tokens,
            None,
            false,
            false,
        )
    }

    pub(in crate::encode) fn encode(e: &PieceEncoder, s: &[u8]) -> Vec<u32> {
        let mut out = Vec::new();
        e.encode(s, &mut Scratch::default(), &mut out).unwrap();
        out
    }

    /// Bytes a b c; tiktoken's rule (every split of a token merges into it at its id), with tokens whose
    /// merges make pairs of lower rank than their own ("aa" at 11 makes ("aa", "a") → "aaa" at 4).
    pub(in crate::encode) fn tiktoken_style_encoder() -> PieceEncoder {
        let mut byte_ids = [NONE; 256];
        let words: [&[u8]; 14] =
            [b"a", b"b", b"c", b"ab", b"aaa", b"ba", b"aab", b"abab", b"cab", b"bc", b"aaab", b"aa", b"abc", b"aaaa"];
        for (id, w) in words.iter().enumerate().take(3) {
            byte_ids[w[0] as usize] = id as u32;
        }
        let mut pairs = Vec::new();
        for (id, w) in words.iter().enumerate() {
            for k in 1..w.len() {
                let left = words.iter().position(|t| *t == &w[..k]);
                let right = words.iter().position(|t| *t == &w[k..]);
                if let (Some(l), Some(r)) = (left, right) {
                    pairs.push((l as u32, r as u32, id as u32, id as u32));
                }
            }
        }
        let tokens: Vec<Option<&[u8]>> = words.iter().map(|w| Some(*w)).collect();
        PieceEncoder::new(Units::Bytes(byte_ids), pairs, &tokens, None, true, false)
    }

    /// Pseudo-random numbers from `seed`: each call `next(m)` gives one below `m`.
    fn numbers_below(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed;
        move |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        }
    }

    /// A text over `alphabet` with long runs of its first letter (they make long chains of merges and, for the
    /// backtracker, dead ends).
    fn random_text(next: &mut impl FnMut(u64) -> u64, alphabet: &[u8], len: usize) -> Vec<u8> {
        let weight = 1 + next(4);
        (0..len)
            .map(|_| if next(weight + 1) != 0 { alphabet[0] } else { alphabet[next(alphabet.len() as u64) as usize] })
            .collect()
    }

    /// A byte-level vocabulary trained on `words` random texts over `alphabet` of `shortest` to `shortest + 399`
    /// bytes, each counted 1 to 3 times, with all 256 bytes and 10 merges more, and `next(more)` more again
    /// (150 when `more` is 0).
    fn trained_on_random_words(
        next: &mut impl FnMut(u64) -> u64,
        alphabet: &[u8],
        words: usize,
        shortest: usize,
        more: u64,
    ) -> crate::vocab::Vocab {
        use crate::train::{Silent, TrainConfig, train};
        let words: Vec<(String, u64)> = (0..words)
            .map(|_| {
                let len = shortest + next(400) as usize;
                (String::from_utf8(random_text(&mut *next, alphabet, len)).unwrap(), 1 + next(3))
            })
            .collect();
        let words: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
        let vocab_size = 256 + 10 + if more == 0 { 150 } else { next(more) as usize };
        let mut config = TrainConfig::for_test(vocab_size, crate::vocab::Mode::Byte);
        config.alphabet = crate::train::Alphabet::All;
        train(&words, &config, &mut Silent).unwrap().vocab
    }

    /// The backtracker's ids of `text`, and the heap merge's.
    fn backtracked_and_merged(e: &PieceEncoder, text: &[u8]) -> (Vec<u32>, Vec<u32>) {
        let backtracker = e.backtracker().expect("the vocabulary meets the backtracker's conditions");
        let mut backtracked = vec![7]; // after other ids, as in a text of several pieces
        assert!(backtracker.encode(text, &mut Vec::new(), &mut backtracked), "no encoding found");
        // The same with every pair walked down the merge trees (`backtracker` checks pairs of digit tokens and
        // of short letter tokens in its tables).
        let mut walked = vec![7];
        assert!(backtracker.without_class_pairs().encode(text, &mut Vec::new(), &mut walked), "no encoding found");
        assert_eq!(walked, backtracked, "without the class pairs' tables, {:?}", String::from_utf8_lossy(text));
        // And keeping only the longest of the tokens found at each position, the others reached one by one.
        let mut one_kept = vec![7];
        assert!(backtracker.encode_keeping_one_match(text, &mut Vec::new(), &mut one_kept), "no encoding found");
        assert_eq!(one_kept, backtracked, "keeping one match, {:?}", String::from_utf8_lossy(text));
        let mut merged = Vec::new();
        e.merge_heap_for_test(text, &mut merged);
        (backtracked[1..].to_vec(), merged)
    }

    /// Byte-level vocabularies trained on random text over small alphabets (the merge rule, and tiktoken's rule
    /// on the same tokens): the backtracker gives the merge's ids on random texts, dead ends and all.
    #[test]
    fn backtracker_equals_the_merge_on_trained_vocabularies() {
        let mut next = numbers_below(3);
        let (mut checked, mut tiktoken_rule_built, mut short_checked, mut pairs_known) = (0, 0, 0, 0);
        let (mut tiny_checked, mut fours_checked) = (0, 0);
        // (Long runs of one letter make tokens with many prefixes that are tokens: more than the search keeps
        // from its trie walk.)
        let alphabets = [&b"ab"[..], b"abc", b"aab", b"aBcD", b"0123456789", b"ab c", b"0012 3a", b"aaaaaaaaab"];
        for (round, alphabet) in alphabets.iter().cycle().take(32).enumerate() {
            let vocab = trained_on_random_words(&mut next, alphabet, 6, 50, 120);
            let by_merges = crate::encode::piece_encoder_by_rule(&vocab, false).unwrap();
            let by_ranks = crate::encode::piece_encoder_by_rule(&vocab, true).unwrap();
            tiktoken_rule_built += by_ranks.backtracker().is_some() as usize;
            // Short pieces under tiktoken's rule merge by looking their pairs' bytes up whole: the merge's ids.
            assert!(by_ranks.tokens_rank_pairs() && !by_merges.tokens_rank_pairs());
            for len in (2..=16).chain(2..=16) {
                let text = random_text(&mut next, alphabet, len);
                let (mut by_tokens, mut merged) = (Vec::new(), Vec::new());
                assert!(by_ranks.merge_short_by_tokens(&text, &mut by_tokens), "every letter has a token");
                by_ranks.merge_heap_for_test(&text, &mut merged);
                assert_eq!(by_tokens, merged, "round {round}, text {:?}", String::from_utf8_lossy(&text));
                short_checked += 1;
            }
            // Pieces of 2 bytes, and of 3 and 4 that are not whole tokens, merged from their pairs' values (and,
            // of 4 under tiktoken's rule, lookups of their three-byte spans).
            let mut letters = alphabet.to_vec();
            letters.sort_unstable();
            letters.dedup();
            let twos = letters.iter().flat_map(|&x| letters.iter().map(move |&y| vec![x, y]));
            let longer = |shorter: Vec<u8>| letters.iter().map(move |&z| [&shorter[..], &[z]].concat());
            let threes: Vec<Vec<u8>> = twos.clone().flat_map(longer).collect();
            let fours: Vec<Vec<u8>> = threes.iter().cloned().flat_map(longer).collect();
            for text in twos.chain(threes).chain(fours) {
                for e in [&by_merges, &by_ranks] {
                    if text.len() >= 3 && e.whole_token(&text) != NONE {
                        continue; // (a whole token of three or four bytes is not merged; any two bytes are)
                    }
                    let (mut from_pairs, mut merged) = (vec![7], Vec::new());
                    if text.len() == 2 {
                        assert!(e.merge_two(&text, &mut from_pairs));
                    } else if text.len() == 3 {
                        assert_eq!(e.merge_three(&text, &mut from_pairs), Ok(true));
                    } else if e.tokens_rank_pairs() {
                        assert_eq!(e.merge_four(&text, &mut from_pairs), Ok(true));
                        fours_checked += 1;
                    } else {
                        assert_eq!(e.merge_four(&text, &mut from_pairs), Ok(false), "(only under tiktoken's rule)");
                        continue;
                    }
                    e.merge_heap_for_test(&text, &mut merged);
                    assert_eq!(from_pairs[1..], merged, "round {round}, text {:?}", String::from_utf8_lossy(&text));
                    tiny_checked += 1;
                }
            }
            for e in [Some(&by_merges), by_ranks.backtracker().map(|_| &by_ranks)].into_iter().flatten() {
                for len in [1usize, 2, 3, 10, 60, 500, 3000] {
                    for _ in 0..6 {
                        let text = random_text(&mut next, alphabet, len);
                        let (backtracked, merged) = backtracked_and_merged(e, &text);
                        assert_eq!(backtracked, merged, "round {round}, text {:?}", String::from_utf8_lossy(&text));
                        checked += 1;
                    }
                }
                // (The texts ask for pairs of class tokens again: those answers came from the tables.)
                pairs_known += e.backtracker().unwrap().class_pairs_known();
            }
        }
        assert!(
            checked > 32 * 42
                && tiktoken_rule_built >= 8
                && short_checked == 32 * 30
                && pairs_known > 1000
                && tiny_checked > 1000
                && fours_checked > 1000,
            "{checked} texts, {tiktoken_rule_built} tiktoken-rule vocabularies, {short_checked} short pieces, \
             {pairs_known} pairs known, {tiny_checked} tiny pieces, {fours_checked} of four bytes"
        );
    }

    /// In a number or a run of letters of at least as many bytes as its class's table has pairs, a left token's
    /// first pair check answers its whole row (`Backtracker::fill_row`; tokens of up to two letters by
    /// `passes_by_short_edges`): every pair as its walk answers it, pairs answered before by their walks kept,
    /// and the merge's ids.
    #[test]
    fn rows_answered_at_once_agree_with_the_walks() {
        let mut next = numbers_below(11);
        let (mut digit_pairs, mut letter_pairs, mut encoders) = (0, 0, 0);
        for alphabet in [&b"0123456789"[..], b"0012345", b"aBcD", b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"] {
            let vocab = trained_on_random_words(&mut next, alphabet, 8, 100, 0);
            for by_ranks in [false, true] {
                let e = crate::encode::piece_encoder_by_rule(&vocab, by_ranks).unwrap();
                let Some(backtracker) = e.backtracker() else { continue };
                // A short piece first: its pairs are walked as asked for, and in the table before the rows.
                let short = random_text(&mut next, alphabet, 300);
                let (backtracked, merged) = backtracked_and_merged(&e, &short);
                assert_eq!(backtracked, merged);
                assert_eq!(backtracker.check_filled_class_pairs(), 0, "rows filled before a long piece");
                let long = random_text(&mut next, alphabet, 60_000);
                let (backtracked, merged) = backtracked_and_merged(&e, &long);
                assert_eq!(backtracked, merged, "{:?}", String::from_utf8_lossy(&long[..100]));
                let filled = backtracker.check_filled_class_pairs();
                encoders += 1;
                if alphabet[0].is_ascii_digit() {
                    digit_pairs += filled;
                } else {
                    letter_pairs += filled;
                }
            }
        }
        assert!(
            encoders >= 6 && digit_pairs > 10_000 && letter_pairs > 10_000,
            "{encoders} encoders, {digit_pairs} digit pairs and {letter_pairs} letter pairs filled"
        );
    }

    /// Short pieces merged one right after another (base64, random text) with long ones among them read the
    /// short tokens' filter before the whole-token table, others the table (`encode_short`); long ones merged so
    /// go to the whole-token merge up to `DENSE_LONG_MOST` bytes (`merge_bytes`), others to the backtracker: the
    /// same ids whichever way, and each way taken.
    #[test]
    fn dense_and_sparse_merging_give_the_same_ids() {
        use crate::train::{Silent, TrainConfig, train};
        use crate::vocab::Mode;
        let mut next = numbers_below(11);
        for alphabet in [&b"abc"[..], b"aBcD", b"ab c"] {
            let words: Vec<String> =
                (0..6).map(|_| String::from_utf8(random_text(&mut next, alphabet, 300)).unwrap()).collect();
            let words: Vec<(&str, u64)> = words.iter().map(|w| (w.as_str(), 1)).collect();
            let mut config = TrainConfig::for_test(256 + 60, Mode::Byte);
            config.alphabet = crate::train::Alphabet::All;
            let vocab = train(&words, &config, &mut Silent).unwrap().vocab;
            let e = crate::encode::piece_encoder_by_rule(&vocab, true).unwrap();
            let text = random_text(&mut next, alphabet, 12_000);
            let (mut dense, mut was_dense, mut was_not) = (Scratch::default(), 0, 0);
            let (mut long_close, mut long_apart) = (0, 0);
            let mut at = 0;
            while at < text.len() {
                // Long pieces (over 16 bytes) in the first half only: dense short pieces after them, then without.
                let most = if at < text.len() / 2 { 25 } else { 15 };
                let piece = &text[at..(at + 2 + next(most) as usize).min(text.len())];
                let (mut together, mut alone) = (Vec::new(), Vec::new());
                e.encode(piece, &mut dense, &mut together).unwrap();
                e.encode(piece, &mut Scratch::default(), &mut alone).unwrap();
                assert_eq!(together, alone, "{:?}", String::from_utf8_lossy(piece));
                if piece.len() <= 8 {
                    let densely = merging_densely(&dense, piece.as_ptr() as usize);
                    (was_dense, was_not) = (was_dense + densely as usize, was_not + !densely as usize);
                }
                if piece.len() > 16 && e.token_of(piece) == NONE {
                    let close = merging_closely(&dense);
                    (long_close, long_apart) = (long_close + close as usize, long_apart + !close as usize);
                }
                at += piece.len();
            }
            assert!(was_dense > 100 && was_not > 100, "{was_dense} short pieces merged densely, {was_not} not");
            assert!(long_close > 50 && long_apart > 0, "{long_close} long pieces merged closely, {long_apart} not");
        }
    }

    /// Under HF's `ignore_merges` a piece that is a token is that token even when no merge makes it: a piece of
    /// two bytes too (not their pair's merge); without it, the pair decides.
    #[test]
    fn two_byte_tokens_no_merge_makes_are_whole_only_when_tokens_are_always_whole() {
        let mut byte_ids = [NONE; 256];
        byte_ids[b'a' as usize] = 0;
        byte_ids[b'b' as usize] = 1;
        let tokens: Vec<Option<&[u8]>> = vec![Some(b"a"), Some(b"b"), Some(b"ab"), Some(b"ba")];
        let make = |whole_always| {
            PieceEncoder::new(Units::Bytes(byte_ids), [(1, 0, 0, 3)], &tokens, None, whole_always, false)
        };
        let (always, by_merges) = (make(true), make(false));
        assert_eq!((encode(&always, b"ab"), encode(&always, b"ba")), (vec![2], vec![3]));
        assert_eq!((encode(&by_merges, b"ab"), encode(&by_merges, b"ba")), (vec![0, 1], vec![3]));
        let mut out = Vec::new();
        let mut scratch = Scratch::default();
        always.begin(&mut scratch);
        always.encode_next_in(b"abba----", 0, 2, &mut scratch, &mut out).unwrap();
        assert_eq!(out, [2]);
    }

    /// A vocabulary trained on a few letters has no token for other bytes: a piece holding one is left to the
    /// merge, which reports the byte or uses the unknown token, exactly as without the backtracker.
    #[test]
    fn pieces_with_bytes_without_a_token_are_merged_instead() {
        use crate::train::{Silent, TrainConfig, train};
        use crate::vocab::Mode;
        let words = [("abcabcaabbcc", 3u64), ("cabbage", 2)];
        let vocab = train(&words, &TrainConfig::for_test(300, Mode::Byte), &mut Silent).unwrap().vocab;
        let mut e = crate::encode::piece_encoder_by_rule(&vocab, false).unwrap();
        let backtracker = e.backtracker().expect("built: every byte that has a token spells it");
        let piece = b"abcabcaabbccxabcab";
        assert!(!backtracker.encode(piece, &mut Vec::new(), &mut vec![1, 2]), "no token for x");
        let unk = e.unk.expect("the trained vocabulary has [UNK]");
        let mut ids = Vec::new();
        e.encode(piece, &mut Scratch::default(), &mut ids).unwrap();
        let (mut left, mut right) = (Vec::new(), Vec::new());
        e.encode(b"abcabcaabbcc", &mut Scratch::default(), &mut left).unwrap();
        e.encode(b"abcab", &mut Scratch::default(), &mut right).unwrap();
        assert_eq!(ids, [left, vec![unk], right].concat());
        e.unk = None;
        assert_eq!(e.encode(piece, &mut Scratch::default(), &mut Vec::new()), Err(PieceError::UnknownByte(12)));
    }

    /// Tokens whose own merge joins a token built later, or merges whose results are out of rank order: no
    /// backtracker (the merge applies), and the encoder's ids stay right.
    #[test]
    fn backtracker_refuses_vocabularies_outside_its_conditions() {
        let bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let (a, b, c) = (b'a' as u32, b'b' as u32, b'c' as u32);
        let make = |extra: &[&[u8]], pairs: Vec<(u32, u32, u32, u32)>| {
            let mut tokens: Vec<Option<&[u8]>> = bytes.iter().map(|t| Some(t.as_slice())).collect();
            tokens.extend(extra.iter().map(|t| Some(*t)));
            let mut byte_ids = [NONE; 256];
            for (i, id) in byte_ids.iter_mut().enumerate() {
                *id = i as u32;
            }
            PieceEncoder::new(Units::Bytes(byte_ids), pairs, &tokens, None, false, false)
        };
        // bc = 256 (rank 1), abc = 257 built from (a, bc) at rank 0: its part bc merges after it would.
        let e = make(&[b"bc", b"abc"], vec![(b, c, 1, 256), (a, 256, 0, 257)]);
        assert!(e.backtracker().is_none());
        assert_eq!(encode(&e, &b"abc".repeat(30)), vec![257; 30]);
        // The same tokens with their results in rank order: accepted.
        let e = make(&[b"bc", b"abc"], vec![(b, c, 0, 256), (a, 256, 1, 257)]);
        assert!(e.backtracker().is_some());
        let (backtracked, merged) = backtracked_and_merged(&e, &b"abcbcab".repeat(20));
        assert_eq!(backtracked, merged);
        // Results numbered against their ranks.
        let e = make(&[b"ab", b"bc"], vec![(a, b, 1, 256), (b, c, 0, 257)]);
        assert!(e.backtracker().is_none());
        // A merge whose result does not spell its parts.
        let e = make(&[b"ab", b"xy"], vec![(a, b, 0, 256), (a, c, 1, 257)]);
        assert!(e.backtracker().is_none());
    }

    #[test]
    fn pieces_encode_the_same_whichever_table_they_come_from() {
        // First sight (whole, or merged), then the seen table (pieces of up to 16 bytes) or the cache (longer);
        // each piece also as a slice of a text, whose key may come from one load of the text.
        let e = tiktoken_style_encoder();
        let mut state = 7u64;
        let mut next = |n: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let pieces: Vec<Vec<u8>> =
            (0..3000).map(|_| (0..2 + next(20)).map(|_| b"abc"[next(3) as usize]).collect()).collect();
        let expected: Vec<Vec<u32>> = pieces.iter().map(|p| encode(&e, p)).collect();
        let mut scratch = Scratch::default();
        e.begin(&mut scratch);
        for round in 0..3 {
            for (piece, want) in pieces.iter().zip(&expected) {
                let mut out = Vec::new();
                e.encode_next(piece, &mut scratch, &mut out).unwrap();
                assert_eq!(&out, want, "round {round}");
            }
        }
        let text = pieces.concat();
        let mut start = 0;
        for (piece, want) in pieces.iter().zip(&expected) {
            let mut out = Vec::new();
            e.encode_next_in(&text, start, start + piece.len(), &mut scratch, &mut out).unwrap();
            assert_eq!(&out, want, "{piece:?} at {start} of the text");
            start += piece.len();
        }
    }

    /// tiktoken's rule without a pair table (`PieceEncoder::tiktoken`: a pair's rank is the lookup of the
    /// token its bytes make) gives the ids of a table of every split of every token, by every path: whole
    /// pieces, the short merge, the backtracker, and the merge with and without a rank limit. Ids from 300 on
    /// (beyond the dense table of pairs below 256), a gap of unused ids, tokens joined beyond the join buffer.
    #[test]
    fn spelled_pairs_merge_as_a_table_of_every_split() {
        let long = [b"ab".repeat(20), b"c".repeat(30)].concat();
        let cs: Vec<Vec<u8>> = (3..=7).map(|k| b"c".repeat(1 << k)).collect(); // up to 128 c: 64 + 64
        // (In build order, as the backtracker needs: a token's parts have lower ids.)
        let mut words: Vec<&[u8]> = vec![
            b"aa",
            b"ab",
            b"ba",
            b"bc",
            b"cc",
            b"aaa",
            b"aab",
            b"abc",
            b"cab",
            b"aaaa",
            b"aaab",
            b"abab",
            b"cccc",
            b"ababab",
            &long[..40],
            &long[40..],
            &long,
        ];
        words.extend(cs.iter().map(|c| c.as_slice()));
        let mut tokens: Vec<Option<&[u8]>> = vec![Some(b"a"), Some(b"b"), Some(b"c")];
        tokens.resize(300, None);
        tokens.extend(words.iter().map(|w| Some(*w)));
        let mut byte_ids = [NONE; 256];
        for (id, b) in [b'a', b'b', b'c'].into_iter().enumerate() {
            byte_ids[b as usize] = id as u32;
        }
        let id_of = |bytes: &[u8]| tokens.iter().position(|t| *t == Some(bytes)).map(|id| id as u32);
        let mut splits = Vec::new();
        for (id, t) in tokens.iter().enumerate() {
            for k in 1..t.map_or(0, |t| t.len()) {
                let t = t.unwrap();
                if let (Some(l), Some(r)) = (id_of(&t[..k]), id_of(&t[k..])) {
                    splits.push((l, r, id as u32, id as u32));
                }
            }
        }
        let tabled = PieceEncoder::new(Units::Bytes(byte_ids), splits, &tokens, None, true, false);
        let spelled = PieceEncoder::tiktoken(byte_ids, &tokens, None);
        assert!(tabled.backtracker().is_some() && spelled.backtracker().is_some());
        let mut next = numbers_below(5);
        let fixed: Vec<Vec<u8>> =
            vec![long.clone(), [&long[..], b"a"].concat(), b"c".repeat(128), b"c".repeat(129), b"c".repeat(300)];
        for round in 0..2000 {
            let len = 1 + next(if round % 10 == 0 { 120 } else { 14 }) as usize;
            let piece = fixed.get(round).cloned().unwrap_or_else(|| random_text(&mut next, b"abc", len));
            let limit = 300 + next(20) as u32;
            let run = |e: &PieceEncoder, path: u8, limit: u32| {
                let (mut out, mut scratch) = (Vec::new(), Scratch::default());
                match path {
                    0 => e.encode(&piece, &mut scratch, &mut out).unwrap(),
                    1 => e.encode_pure(&piece, &mut scratch, &mut out).unwrap(),
                    _ => e.split_below(&piece, limit, &mut scratch, &mut out),
                }
                out
            };
            for (path, limit) in [(0, NONE), (1, NONE), (2, NONE), (2, limit)] {
                assert_eq!(run(&tabled, path, limit), run(&spelled, path, limit), "{path} {limit} {piece:?}");
            }
        }
    }

    /// The cache of long pieces stays within its byte budget, starting afresh when full, and a piece encodes
    /// the same whether it was cached, evicted or never seen.
    #[test]
    fn the_long_piece_cache_keeps_to_its_budget() {
        let e = tiktoken_style_encoder();
        let mut next = numbers_below(17);
        let pieces: Vec<Vec<u8>> = (0..3000)
            .map(|_| {
                let len = 17 + next(240) as usize;
                random_text(&mut next, b"abc", len)
            })
            .collect();
        let mut scratch = Scratch::default();
        e.begin(&mut scratch);
        let (mut most, mut cleared) = (0, 0);
        for round in 0..2 {
            for piece in &pieces {
                let before = scratch.cache.len();
                let mut out = Vec::new();
                e.encode_next(piece, &mut scratch, &mut out).unwrap();
                assert_eq!(out, encode(&e, piece), "round {round}");
                cleared += (scratch.cache.len() < before) as usize;
                most = most.max(scratch.cache_bytes);
            }
        }
        assert!(most <= CACHE_BYTES && cleared > 0, "{most} bytes at most, {cleared} times afresh");
    }

    /// Short pieces that never come back (base64, random text) pass the seen table once a window of them found
    /// nothing there, and are not kept; pieces that come back keep being found. The same ids either way.
    #[test]
    fn pieces_that_never_come_back_pass_the_seen_table() {
        let mut next = numbers_below(23);
        let unique: Vec<Vec<u8>> = (0..20_000)
            .map(|_| {
                let len = 12 + next(5) as usize;
                (0..len).map(|_| b"abc"[next(3) as usize]).collect()
            })
            .collect();
        let few: Vec<Vec<u8>> = unique[..40].iter().cycle().take(20_000).cloned().collect();
        for (pieces, should_pass) in [(&unique, true), (&few, false)] {
            // An encoder each: its seen table is its threads' one.
            let e = tiktoken_style_encoder();
            let mut scratch = Scratch::default();
            e.begin(&mut scratch);
            let (mut passed, mut most_held) = (0, 0);
            for piece in pieces {
                let mut out = Vec::new();
                e.encode_next(piece, &mut scratch, &mut out).unwrap();
                assert_eq!(out, encode(&e, piece));
                let (passing, held) = scratch.seen.passing_and_held();
                passed += passing as usize;
                most_held = most_held.max(held);
            }
            if should_pass {
                assert!(passed > 10_000 && most_held < 5000, "{passed} passed, {most_held} held");
            } else {
                assert!(passed == 0 && most_held == 40, "{passed} passed, {most_held} held");
            }
        }
    }

    /// Pieces that come back after a pass began (ordinary text after base64) end it within two windows of them
    /// (the one under way, then 4 096 pieces), not after the pass's length (up to a million pieces).
    #[test]
    fn a_pass_ends_when_pieces_come_back() {
        let mut next = numbers_below(37);
        let mut pieces = |n: usize| -> Vec<Vec<u8>> {
            (0..n).map(|_| (0..12 + next(5) as usize).map(|_| b"abc"[next(3) as usize]).collect()).collect()
        };
        let unique = pieces(20_000);
        let returning: Vec<Vec<u8>> = pieces(40).into_iter().cycle().take(20_000).collect();
        let e = tiktoken_style_encoder();
        let mut scratch = Scratch::default();
        e.begin(&mut scratch);
        let mut out = Vec::new();
        for piece in &unique {
            e.encode_next(piece, &mut scratch, &mut out).unwrap();
        }
        assert!(scratch.seen.passing_and_held().0, "pieces that never come back pass the table");
        let mut passed = 0;
        for piece in &returning {
            out.clear();
            e.encode_next(piece, &mut scratch, &mut out).unwrap();
            assert_eq!(out, encode(&e, piece));
            passed += scratch.seen.passing_and_held().0 as usize;
        }
        let two_windows = 2 * crate::encode::caches::SEEN_WINDOW as usize;
        assert!(passed <= two_windows, "{passed} pieces passed after the text changed");
        assert!(!scratch.seen.passing_and_held().0, "the table in use again");
    }

    /// Threads encoding with one encoder share its seen table (each finds what the others merged, while it grows
    /// from its first size to 32 K slots): every piece's ids are what BPE makes of it with no table.
    #[test]
    fn threads_sharing_the_seen_table_encode_as_bpe_does() {
        let e = tiktoken_style_encoder();
        let mut next = numbers_below(29);
        // 12 000 pieces of 5–16 bytes (most are no token), each met by both threads, in different orders.
        let pieces: Vec<Vec<u8>> = (0..12_000)
            .map(|_| {
                let len = 5 + next(12) as usize;
                (0..len).map(|_| b"abc"[next(3) as usize]).collect()
            })
            .collect();
        let expected: Vec<Vec<u32>> = pieces
            .iter()
            .map(|p| {
                let mut out = Vec::new();
                e.encode_pure(p, &mut Scratch::default(), &mut out).unwrap();
                out
            })
            .collect();
        std::thread::scope(|scope| {
            for t in 0..2u64 {
                let (e, pieces, expected) = (&e, &pieces, &expected);
                scope.spawn(move || {
                    let mut scratch = Scratch::default();
                    let mut order = numbers_below(t + 31);
                    for round in 0..3 {
                        e.begin(&mut scratch);
                        for i in 0..pieces.len() {
                            let k = if t == 0 { i } else { pieces.len() - 1 - i };
                            let k = if round == 2 { order(pieces.len() as u64) as usize } else { k };
                            let mut out = Vec::new();
                            e.encode_next(&pieces[k], &mut scratch, &mut out).unwrap();
                            assert_eq!(out, expected[k], "thread {t}, round {round}, piece {:?}", pieces[k]);
                        }
                    }
                });
            }
        });
        let (passing, held) = {
            let mut scratch = Scratch::default();
            e.begin(&mut scratch);
            scratch.seen.passing_and_held()
        };
        assert!(!passing && held >= 8_000, "{held} pieces held");
    }

    /// A splitter's loop over a block's pieces takes a piece of up to 8 bytes as `whole_in`'s token, else as
    /// `encode_not_whole_in` encodes it: together exactly `encode_next_in`, ids and errors, for every piece of
    /// 1 to 8 bytes of a text — one-byte pieces (with and without a token, with and without `unk`), two-byte
    /// pieces under either rule, and pieces that merge.
    #[test]
    fn whole_in_and_its_misses_encode_as_encode_next_in() {
        let mut with_unk = encoder();
        with_unk.unk = Some(1);
        let mut byte_ids = [NONE; 256];
        byte_ids[b'a' as usize] = 0;
        byte_ids[b'b' as usize] = 1;
        let tokens: Vec<Option<&[u8]>> = vec![Some(b"a"), Some(b"b"), Some(b"ab"), Some(b"ba")];
        let ignore_merges = PieceEncoder::new(Units::Bytes(byte_ids), [(1, 0, 0, 3)], &tokens, None, true, false);
        let mut encoders = [tiktoken_style_encoder(), encoder(), with_unk, ignore_merges];
        let text = b"aababcabbbaaaacxbcaaabababcab\0aa--------";
        let (mut whole, mut missed) = (0, 0);
        for e in encoders.iter_mut() {
            let mut scratch = Scratch::default();
            e.begin(&mut scratch);
            for start in 0..text.len() - 8 {
                for end in start + 1..=start + 8 {
                    let (mut want, mut got) = (vec![9], vec![9]);
                    let expected = e.encode_next_in(text, start, end, &mut scratch, &mut want);
                    let result = match e.whole_in(text, start, end - start) {
                        Some(id) => {
                            whole += 1;
                            got.push(id);
                            Ok(())
                        }
                        None => {
                            missed += 1;
                            e.encode_not_whole_in(text, start, end, &mut scratch, &mut got)
                        }
                    };
                    let piece = String::from_utf8_lossy(&text[start..end]);
                    assert_eq!(result, expected, "{piece:?}");
                    if expected.is_ok() {
                        assert_eq!(got, want, "{piece:?}");
                    }
                }
            }
        }
        assert!(whole > 100 && missed > 100, "{whole} whole, {missed} missed");
    }

    #[test]
    fn unknown_bytes_are_reported_or_become_unk() {
        let e = encoder();
        assert_eq!(e.encode(b"axb", &mut Scratch::default(), &mut Vec::new()), Err(PieceError::UnknownByte(1)));
    }
}
