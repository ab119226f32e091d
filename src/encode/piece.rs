//! The fast path for byte-level and character-level vocabularies (no word markers): one piece → token ids.
//!
//! Performance notes:
//! - Most pieces of ordinary text are a token as they are (" the", "ing"), so a piece is first looked up
//!   whole. That shortcut is only exact for tokens that BPE would build from their own bytes; a vocabulary
//!   can hold tokens it would split differently (merges that reuse a string, hand-edited vocabularies), so
//!   only the tokens checked to encode to themselves go into the lookup table.
//! - Otherwise, when the vocabulary allows it (all the OpenAI ones and trained ones do), the backtracker in
//!   `backtrack.rs` encodes the piece: longest matches checked pair by pair, no merge queue (10 MB of random
//!   letters: 0.37 → 0.19 s with gpt2, 0.50 → 0.23 s with cl100k; its notes have the rest).
//! - Else the bytes are merged by pair rank: a linear scan for short pieces (a few dozen symbols: the
//!   scan is cheaper than any heap), a heap over a linked list for long ones (O(n log n): "a" × 10⁷ or a
//!   chromosome stays fast).
//! - Pair ranks are looked up by token ids (`(left << 32) | right` → rank and result), never by hashing
//!   bytes in the loop.
//! - The whole-piece table is keyed by a piece's length and two 8-byte words (its first and last 8 bytes;
//!   shorter pieces packed), which identify any piece of up to 16 bytes — most tokens — so a lookup is two
//!   integer compares, no `memcmp`, no pointer to a boxed key (perf: those were 10% and 14% of encoding).
//!   Its hash comes from the same words. In front of it, each thread keeps a direct-mapped table of recent
//!   pieces (32K slots of 32 bytes, 1 MB): the big table's cache misses were a third of encoding. With 4096
//!   slots (L2-sized) a fifth of English's pieces of two bytes or more still missed it and cost ~225
//!   instructions each in the big table and the merge cache; 32K slots encoded 20 MB of English ~10% faster
//!   (gpt2, cl100k, o200k; interleaved runs), 64K no better. The front table also holds short pieces that
//!   merged into several tokens (rare words repeat), so those skip the byte-keyed cache below (its hashing
//!   and `memcmp` were 6% of encoding English).
//! - Behind the front table, each thread's seen table holds every short piece met (up to 128K; 32-byte
//!   entries, open addressing, one or two cache lines per lookup). 20 MB of English has ~80K distinct
//!   pieces, so 8% of its pieces missed the front table and each miss then cost the whole-token table and the
//!   byte-keyed cache (~4 cache misses: control bytes, boxed keys and values): a third of encoding. With the
//!   seen table, English gained 16% (gpt2, cl100k, o200k; interleaved in one process).
//! - Pieces that make more than three ids (gpt2's indentation: a token per space) keep theirs in the seen
//!   table's overflow, so they are front-table hits too (20 MB of Python code, gpt2: +6%).
//! - Tried and left out: handing pieces to the encoder 16 behind the splitter, to prefetch their front- and
//!   seen-table lines. o200k English +10%, but gpt2 on Python code −25% and the rest even or worse
//!   (interleaved in one process); nor did prefetching the ints while building Python lists help.
//! - Longer pieces that needed merging are remembered per thread (a bounded cache).
//! - Character-level vocabularies map each character to its id (ASCII by table, others by hash) and keep
//!   the general path's rule — the lowest-ranked pair merges *at every occurrence*, left to right, before
//!   the next rank is looked at — which can differ from the heap's order only when a merge recreates an
//!   existing token. A chromosome is one piece: the bucket merge keeps it linear.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use hashbrown::HashTable;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::backtrack::Backtracker;
use super::pair_table::PairTable;

const NONE: u32 = u32::MAX;
/// Marks the last position of a symbol longer than one unit in `merge_in_place`'s layout.
const END: u32 = 1 << 31;
/// Pieces longer than this go to the backtracker (when the vocabulary allows it). Even a piece of a few bytes
/// is faster there than merged (interleaved runs: multilingual text with o200k 23 → 37 MB/s from 6 bytes up
/// instead of 48, 44–47 from 3 bytes up; English, mostly whole tokens, unchanged).
const BACKTRACK_FROM: usize = 2;
/// Pieces with more symbols than this merge with the heap.
const LINEAR_LIMIT: usize = 48;
/// Pieces with more symbols than this merge with buckets by rank (a heap of millions of entries is
/// bound by cache misses: "a" × 10⁷ took 4 s).
const HEAP_LIMIT: usize = 4096;

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
    fn single(&self, b: u8) -> u32 {
        match self {
            Units::Bytes(ids) => ids[b as usize],
            Units::Chars { ascii, .. } => ascii.get(b as usize).copied().unwrap_or(NONE),
        }
    }
}

#[derive(Clone, Debug)]
pub struct PieceEncoder {
    units: Units,
    /// The general path's rule (char mode): a rank merges at all its occurrences before the next rank.
    all_occurrences: bool,
    /// HF's `fuse_unk` (char mode): a run of units without a token becomes one unknown token.
    fuse_unk: bool,
    /// Each token's length in units (bytes or characters; the unknown token and specials count one), for
    /// `merge_in_place`, and whether that merge applies: every merge's result is as long as its two parts
    /// (and ids leave the top bit free).
    symbol_len: Vec<u32>,
    in_place: bool,
    /// `(left, right)` → `(rank << 32) | result`.
    pairs: PairTable,
    /// Byte strings that are one token and that BPE builds back into that token.
    whole: HashTable<WholeEntry>,
    /// Identifies this encoder in the per-thread cache (never reused, unlike an address).
    serial: u64,
    /// Stands for bytes without a token, when the vocabulary has an unknown token.
    unk: Option<u32>,
    /// Every token's bytes, concatenated (`spelling_ends[id]` ends token `id`'s; specials are empty), kept
    /// to build `backtracker` (byte-level, merge-order rule only; else empty).
    spellings: Vec<u8>,
    spelling_ends: Vec<u32>,
    /// The encoder of pieces that are not whole tokens, when the vocabulary allows it (see `backtrack`).
    /// Built by `prepare` (the Python `Tokenizer` does at load) or on first use.
    backtracker: OnceLock<Option<Backtracker>>,
}

#[derive(Clone, Debug)]
struct WholeEntry {
    key: Key,
    id: u32,
    /// All the bytes, for tokens longer than 16 bytes (the key does not identify those); else empty.
    long: Box<[u8]>,
}

/// A piece's length and two 8-byte words: its first and last 8 bytes (overlapping when shorter than 16),
/// or for pieces under 8 bytes a packing of them. Equal keys mean equal pieces up to 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct Key {
    first: u64,
    last: u64,
    len: u64,
}

#[inline]
fn load8(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[inline]
fn load4(b: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")) as u64
}

impl Key {
    #[inline]
    fn of(piece: &[u8]) -> Key {
        let n = piece.len();
        let (first, last) = if n >= 8 {
            (load8(piece, 0), load8(piece, n - 8))
        } else if n >= 4 {
            (load4(piece, 0) | (load4(piece, n - 4) << 32), 0)
        } else if n > 0 {
            (piece[0] as u64 | (piece[n / 2] as u64) << 8 | (piece[n - 1] as u64) << 16, 0)
        } else {
            (0, 0)
        };
        Key { first, last, len: n as u64 }
    }

    /// A folded multiply (the 128-bit product's halves xored): every bit of the key reaches the low bits, which
    /// pick the front-table slot. (`h ^ (h >> 29)` of a 64-bit product left the top 20 bits of the key out of
    /// them: " then", " they" and " them" shared a slot, and ~9.2% of 20 MB of English's pieces missed the
    /// front table instead of ~6.6%, counted with gpt2.)
    #[inline]
    fn hash(&self) -> u64 {
        let x = self.first ^ self.last.rotate_left(29) ^ self.len.rotate_left(53);
        let product = x as u128 * 0x9E37_79B9_7F4A_7C15;
        product as u64 ^ (product >> 64) as u64
    }
}

/// How many positions ahead the bucket merge prefetches (a chromosome's symbols are far beyond the caches).
const PREFETCH_DISTANCE: usize = 16;

/// Slots of the per-thread front table.
const FRONT_SLOTS: usize = 1 << 15;

/// The front-table slot of a piece's key hash.
#[inline(always)]
fn front_slot(hash: u64) -> usize {
    (hash as usize) & (FRONT_SLOTS - 1)
}

static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// Longest piece the cache remembers (words repeat; a 10 MB run of one letter need not stay in memory).
const CACHED_PIECE_LIMIT: usize = 256;
/// Most pieces a thread's cache remembers before it starts afresh.
const CACHE_LIMIT: usize = 1 << 16;

/// Reusable buffers, and the caches (valid for the encoder `serial` names).
#[derive(Default)]
pub struct Scratch {
    symbols: Vec<Symbol>,
    heap: BinaryHeap<Reverse<(u32, u32)>>,
    pending: Vec<Reverse<(u32, u32)>>,
    /// The backtracker's dead ends, one bit per position.
    dead: Vec<u64>,
    serial: u64,
    /// Recent pieces of up to 16 bytes and their ids (copies of seen-table entries; len 0 = empty slot).
    front: Vec<Entry>,
    /// Every piece of up to 16 bytes seen (up to `SEEN_MOST_SLOTS / 2`) and its ids.
    seen: Seen,
    /// Longer pieces that needed merging.
    cache: FxHashMap<Box<[u8]>, Box<[u32]>>,
}

/// A piece of up to 16 bytes (identified by its key: first and last 8 bytes, length) and the ids it encodes
/// to: up to `FRONT_IDS` of them here, more in the seen table's `overflow` (`ids[0]` is where they start).
/// 32 bytes, aligned, so that a lookup touches one cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Entry {
    first: u64,
    last: u64,
    ids: [u32; FRONT_IDS],
    /// The piece's length (0: empty slot).
    len: u16,
    /// How many ids it makes.
    n: u16,
}

impl Entry {
    #[inline(always)]
    fn holds(&self, key: Key) -> bool {
        self.first == key.first && self.last == key.last && self.len as u64 == key.len
    }
}

/// Most ids an entry holds itself: a rare word is usually two or three tokens.
const FRONT_IDS: usize = 3;

/// Slots the seen table starts with, and most it grows to (8 MB); it starts afresh when that is half full.
const SEEN_FIRST_SLOTS: usize = 1 << 12;
const SEEN_MOST_SLOTS: usize = 1 << 18;

/// An open-addressing table (linear probing) of pieces of up to 16 bytes, grown by doubling: where a piece
/// that missed the front table is found in one or two cache lines, instead of the whole-token table and the
/// byte-keyed cache (together ~4 cache misses: their control bytes, boxed keys and values).
#[derive(Default)]
struct Seen {
    slots: Vec<Entry>,
    used: usize,
    /// The ids of the entries that make more than `FRONT_IDS` (indentation, in gpt2: each space a token).
    overflow: Vec<u32>,
}

impl Seen {
    /// The slot probing starts at (the hash's high bits: the front table uses the low ones).
    #[inline(always)]
    fn start(&self, hash: u64) -> usize {
        (hash >> 32) as usize & (self.slots.len() - 1)
    }

    #[inline]
    fn get(&self, key: Key, hash: u64) -> Option<&Entry> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut at = self.start(hash);
        loop {
            let entry = &self.slots[at];
            if entry.len == 0 {
                return None;
            }
            if entry.holds(key) {
                return Some(entry);
            }
            at = (at + 1) & mask;
        }
    }

    /// The entry of a piece and the ids it makes (any number of them: more than `FRONT_IDS` go to `overflow`).
    fn entry(&mut self, key: Key, made: &[u32]) -> Entry {
        let mut ids = [0; FRONT_IDS];
        if made.len() <= FRONT_IDS {
            ids[..made.len()].copy_from_slice(made);
        } else {
            ids[0] = self.overflow.len() as u32;
            self.overflow.extend_from_slice(made);
        }
        Entry { first: key.first, last: key.last, ids, len: key.len as u16, n: made.len() as u16 }
    }

    /// The ids of an entry made by this table (or a copy of one, in the front table).
    #[inline(always)]
    fn ids<'a>(&'a self, entry: &'a Entry) -> &'a [u32] {
        let n = entry.n as usize;
        if n <= FRONT_IDS { &entry.ids[..n] } else { &self.overflow[entry.ids[0] as usize..][..n] }
    }

    /// Whether the table is as full as it may be (the caller starts it afresh, and with it the front table,
    /// whose entries may point into `overflow`).
    fn full(&self) -> bool {
        self.slots.len() >= SEEN_MOST_SLOTS && 2 * (self.used + 1) > self.slots.len()
    }

    /// Adds an entry whose key is not in the table (which is not `full`).
    fn insert(&mut self, entry: Entry, hash: u64) {
        if 2 * (self.used + 1) > self.slots.len() {
            self.grow();
        }
        self.place(entry, hash);
        self.used += 1;
    }

    fn place(&mut self, entry: Entry, hash: u64) {
        let mask = self.slots.len() - 1;
        let mut at = self.start(hash);
        while self.slots[at].len != 0 {
            at = (at + 1) & mask;
        }
        self.slots[at] = entry;
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(SEEN_FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![Entry::default(); size]);
        for entry in old.into_iter().filter(|e| e.len != 0) {
            let key = Key { first: entry.first, last: entry.last, len: entry.len as u64 };
            self.place(entry, key.hash());
        }
    }

    fn clear(&mut self) {
        self.overflow.clear();
        self.slots.fill(Entry::default());
        self.used = 0;
    }
}

#[derive(Clone, Copy)]
struct Symbol {
    id: u32,
    prev: u32,
    next: u32,
}

/// A byte that has no token (and there is no unknown token): its offset in the piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownByte(pub usize);

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
        let len_of = |id: u32| symbol_len.get(id as usize).copied();
        let in_place = tokens.len() < END as usize
            && table.iter().all(|(left, right, v)| {
                let result = v as u32;
                matches!((len_of(left), len_of(right), len_of(result)), (Some(l), Some(r), Some(x)) if l + r == x)
            });
        let serial = NEXT_SERIAL.fetch_add(1, Ordering::Relaxed);
        let (mut spellings, mut spelling_ends) = (Vec::new(), Vec::new());
        if matches!(units, Units::Bytes(_)) && !all_occurrences {
            spelling_ends.reserve(tokens.len());
            for t in tokens {
                spellings.extend_from_slice(t.unwrap_or_default());
                spelling_ends.push(spellings.len() as u32);
            }
        }
        let mut encoder = PieceEncoder {
            units,
            all_occurrences,
            fuse_unk: false,
            symbol_len,
            in_place,
            pairs: table,
            whole: HashTable::new(),
            unk,
            serial,
            spellings,
            spelling_ends,
            backtracker: OnceLock::new(),
        };
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
        let mut whole = HashTable::new();
        for (id, bytes) in tokens.iter().enumerate() {
            let Some(bytes) = bytes else { continue };
            if bytes.len() < 2 {
                continue;
            }
            if whole_always || builds_itself[id] {
                let key = Key::of(bytes);
                let long: Box<[u8]> = if bytes.len() > 16 { (*bytes).into() } else { Box::default() };
                whole.insert_unique(key.hash(), WholeEntry { key, id: id as u32, long }, |e| e.key.hash());
            }
        }
        encoder.whole = whole;
        encoder
    }

    /// Appends the ids of one piece to `out`.
    #[inline]
    pub fn encode(&self, piece: &[u8], scratch: &mut Scratch, out: &mut Vec<u32>) -> Result<(), UnknownByte> {
        self.begin(scratch);
        self.encode_next(piece, scratch, out)
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
            scratch.seen = Seen::default();
            scratch.front.clear();
            scratch.front.resize(FRONT_SLOTS, Entry::default());
            scratch.serial = self.serial;
        }
    }

    /// `encode` for the next piece of a text, after `begin` with this `scratch` (and no other encoder since).
    /// Only the common cases are here — one byte, a piece in the front table — so that this stays small where
    /// it is inlined, in each pre-tokenizer's loop.
    #[inline(always)]
    pub fn encode_next(&self, piece: &[u8], scratch: &mut Scratch, out: &mut Vec<u32>) -> Result<(), UnknownByte> {
        debug_assert!(self.owns(scratch), "encode_next without begin");
        if piece.len() == 1 {
            return match self.units.single(piece[0]) {
                NONE => self.unit_without_token(out),
                id => {
                    out.push(id);
                    Ok(())
                }
            };
        }
        let key = Key::of(piece);
        let hash = key.hash();
        if piece.len() <= 16 {
            let entry = &scratch.front[front_slot(hash)];
            if entry.holds(key) {
                // Pushed one by one: `extend_from_slice` of a variable length calls `memcpy` (10% of a hit).
                match entry.n {
                    1 => out.push(entry.ids[0]),
                    2 => {
                        out.push(entry.ids[0]);
                        out.push(entry.ids[1]);
                    }
                    _ => out.extend_from_slice(scratch.seen.ids(entry)),
                }
                return Ok(());
            }
        }
        self.encode_uncommon(piece, key, hash, scratch, out)
    }

    /// A one-unit piece without a token: the unknown token, or the error.
    #[cold]
    fn unit_without_token(&self, out: &mut Vec<u32>) -> Result<(), UnknownByte> {
        let unk = self.unk.ok_or(UnknownByte(0))?;
        out.push(unk);
        Ok(())
    }

    /// A piece not in the front table: a piece seen before, a whole token, a cached piece, or merged; then
    /// remembered in the front table and the seen table when it is short, else in the cache.
    #[inline(never)]
    fn encode_uncommon(
        &self,
        piece: &[u8],
        key: Key,
        hash: u64,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), UnknownByte> {
        // (An empty piece, which no splitter makes, would look like an empty slot: it just is not remembered.)
        let short = (1..=16).contains(&piece.len());
        let slot = front_slot(hash);
        if short && let Some(&entry) = scratch.seen.get(key, hash) {
            out.extend_from_slice(scratch.seen.ids(&entry));
            scratch.front[slot] = entry;
            return Ok(());
        }
        let start = out.len();
        if let Some(id) = self.whole_token(piece, key, hash) {
            out.push(id);
        } else if !short && let Some(ids) = scratch.cache.get(piece) {
            // (Short pieces are remembered in the seen table, never here: hashing them was wasted.)
            out.extend_from_slice(ids);
        } else {
            self.merge_bytes(piece, scratch, out)?;
            if !short && piece.len() <= CACHED_PIECE_LIMIT {
                if scratch.cache.len() >= CACHE_LIMIT {
                    scratch.cache.clear();
                }
                scratch.cache.insert(piece.into(), out[start..].into());
            }
        }
        if short {
            if scratch.seen.full() {
                scratch.seen.clear();
                scratch.front.fill(Entry::default());
            }
            let entry = scratch.seen.entry(key, &out[start..]);
            scratch.front[slot] = entry;
            scratch.seen.insert(entry, hash);
        }
        Ok(())
    }

    /// The token a piece is, when it is one (and may be looked up whole).
    #[inline]
    fn whole_token(&self, piece: &[u8], key: Key, hash: u64) -> Option<u32> {
        self.whole.find(hash, |e| e.key == key && (piece.len() <= 16 || *e.long == *piece)).map(|e| e.id)
    }

    /// BPE over `bytes` with only the pairs ranked below `limit` (how a tiktoken token's own merge is found).
    pub fn split_below(&self, bytes: &[u8], limit: u32, scratch: &mut Scratch, out: &mut Vec<u32>) {
        let _ = self.merge_by_rank(bytes, limit, scratch, out);
    }

    /// Rank and result of a pair; NONE if it does not merge or ranks at or above `limit`.
    #[inline]
    fn rank(&self, left: u32, right: u32, limit: u32) -> (u32, u32) {
        let v = self.pairs.get(left, right);
        match (v >> 32) as u32 {
            rank if rank < limit => (rank, v as u32),
            _ => (NONE, NONE),
        }
    }

    /// Builds the backtracker now rather than on the first piece that needs it.
    pub fn prepare(&self) {
        let _ = self.backtracker();
    }

    /// The backtracker, built on first use; None when the vocabulary does not allow it.
    fn backtracker(&self) -> Option<&Backtracker> {
        self.backtracker
            .get_or_init(|| {
                let Units::Bytes(byte_ids) = &self.units else { return None };
                if self.spelling_ends.is_empty() {
                    return None;
                }
                let mut start = 0;
                let tokens: Vec<Option<&[u8]>> = self
                    .spelling_ends
                    .iter()
                    .map(|&end| {
                        let spelling = &self.spellings[start..end as usize];
                        start = end as usize;
                        (!spelling.is_empty()).then_some(spelling)
                    })
                    .collect();
                Backtracker::build(byte_ids, &self.pairs, &tokens)
            })
            .as_ref()
    }

    /// BPE over the bytes of a piece: by the backtracker when the vocabulary allows it, else merged.
    fn merge_bytes(&self, piece: &[u8], scratch: &mut Scratch, out: &mut Vec<u32>) -> Result<(), UnknownByte> {
        if piece.len() > BACKTRACK_FROM
            && let Some(backtracker) = self.backtracker()
            && backtracker.encode(piece, &mut scratch.dead, out)
        {
            return Ok(());
        }
        self.merge_by_rank(piece, NONE, scratch, out)
    }

    /// BPE over the bytes of a piece by merging: a linear scan, a heap, or buckets, by length.
    fn merge_by_rank(
        &self,
        piece: &[u8],
        limit: u32,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), UnknownByte> {
        let start = out.len();
        out.reserve(piece.len());
        self.push_units(piece, out)?;
        let n = out.len() - start;
        if n <= LINEAR_LIMIT {
            if self.all_occurrences {
                self.merge_linear_all(out, start, limit);
            } else {
                self.merge_linear(out, start, limit);
            }
        } else if n <= HEAP_LIMIT {
            self.merge_heap(out, start, limit, scratch);
        } else if self.in_place {
            self.merge_in_place(out, start, limit);
        } else {
            self.merge_heap(out, start, limit, scratch);
        }
        Ok(())
    }

    /// Appends the id of each unit of `piece` (the unknown token for units without one, if there is one).
    #[inline]
    fn push_units(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), UnknownByte> {
        match &self.units {
            Units::Bytes(ids) => {
                for (i, &b) in piece.iter().enumerate() {
                    match ids[b as usize] {
                        NONE => out.push(self.unk.ok_or(UnknownByte(i))?),
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
                            let unk = self.unk.ok_or(UnknownByte(i))?;
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

    /// The general path's rule on a short piece: the lowest rank present merges at all its occurrences, left
    /// to right; repeat.
    fn merge_linear_all(&self, ids: &mut Vec<u32>, start: usize, limit: u32) {
        loop {
            let mut best: (u32, u32, u32, u32) = (NONE, NONE, NONE, NONE); // (rank, left, right, result)
            for w in ids[start..].windows(2) {
                let (rank, result) = self.rank(w[0], w[1], limit);
                if rank < best.0 {
                    best = (rank, w[0], w[1], result);
                }
            }
            let (rank, left, right, result) = best;
            if rank == NONE {
                return;
            }
            let (mut read, mut write) = (start, start);
            while read < ids.len() {
                if read + 1 < ids.len() && ids[read] == left && ids[read + 1] == right {
                    ids[write] = result;
                    read += 2;
                } else {
                    ids[write] = ids[read];
                    read += 1;
                }
                write += 1;
            }
            ids.truncate(write);
        }
    }

    /// Repeatedly merges the lowest-ranked pair (leftmost among equals) of `ids[start..]`.
    fn merge_linear(&self, ids: &mut Vec<u32>, start: usize, limit: u32) {
        // ranks[i]: rank and result of (ids[start + i], ids[start + i + 1]).
        let mut ranks: [(u32, u32); LINEAR_LIMIT] = [(NONE, NONE); LINEAR_LIMIT];
        let mut n = ids.len() - start;
        for i in 0..n.saturating_sub(1) {
            ranks[i] = self.rank(ids[start + i], ids[start + i + 1], limit);
        }
        while n > 1 {
            let mut best = 0;
            for i in 1..n - 1 {
                if ranks[i].0 < ranks[best].0 {
                    best = i;
                }
            }
            let (rank, result) = ranks[best];
            if rank == NONE {
                break;
            }
            ids[start + best] = result;
            ids.remove(start + best + 1);
            ranks.copy_within(best + 1..n - 1, best);
            n -= 1;
            if best > 0 {
                ranks[best - 1] = self.rank(ids[start + best - 1], result, limit);
            }
            if best + 1 < n {
                ranks[best] = self.rank(result, ids[start + best + 1], limit);
            } else {
                ranks[best] = (NONE, NONE);
            }
        }
    }

    /// BPE over a long piece in linear time, on the ids themselves: one bucket of start positions per rank,
    /// taken lowest rank first and sorted when its turn comes (the heap's order: lowest rank, leftmost first).
    ///
    /// Layout (4 bytes per symbol, not the linked list's 12: a 10 MB piece or a chromosome is far beyond the
    /// caches, and the page faults of fresh memory were a third of the time): a symbol covering positions
    /// `s..=e` has its id at `s`, its id with `END` set at `e` when longer than one unit, and `NONE` inside.
    /// The symbol after the one at `p` starts at `p + len(id)`; the one before ends at `p - 1`.
    ///
    /// A merge can make a pair of lower rank than the one being merged (tiktoken vocabularies allow it); then
    /// the rest of the bucket waits and the lower rank goes first, as the heap would do it — except under the
    /// character rule (`all_occurrences`), where a rank finishes first.
    fn merge_in_place(&self, ids: &mut Vec<u32>, start: usize, limit: u32) {
        let sym = &mut ids[start..];
        let n = sym.len();
        let len = |id: u32| self.symbol_len.get(id as usize).copied().unwrap_or(1) as usize;
        // The initial pairs, counted first so that each bucket is allocated once, at its size (growing them
        // by doubling cost a sixth of encoding a chromosome in page faults and copies). Their ranks are looked
        // up again below rather than kept (4 more bytes per symbol; a pair of bytes is a table read).
        let mut sizes: Vec<u32> = Vec::new();
        for w in sym.windows(2) {
            let (rank, _) = self.rank(w[0], w[1], limit);
            if rank != NONE {
                if sizes.len() <= rank as usize {
                    sizes.resize(rank as usize + 1, 0);
                }
                sizes[rank as usize] += 1;
            }
        }
        let mut buckets: Vec<Vec<u32>> = sizes.iter().map(|&size| Vec::with_capacity(size as usize)).collect();
        drop(sizes);
        let mut ranks: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
        /// Queues the pair starting at `pos` under `rank`.
        #[inline(always)]
        fn add(buckets: &mut Vec<Vec<u32>>, ranks: &mut BinaryHeap<Reverse<u32>>, rank: u32, pos: usize) {
            if buckets.len() <= rank as usize {
                buckets.resize_with(rank as usize + 1, Vec::new);
            }
            let bucket = &mut buckets[rank as usize];
            if bucket.is_empty() {
                ranks.push(Reverse(rank));
            }
            bucket.push(pos as u32);
        }
        for (i, w) in sym.windows(2).enumerate() {
            let (rank, _) = self.rank(w[0], w[1], limit);
            if rank != NONE {
                add(&mut buckets, &mut ranks, rank, i);
            }
        }
        while let Some(Reverse(rank)) = ranks.pop() {
            let mut positions = std::mem::take(&mut buckets[rank as usize]);
            if positions.is_empty() {
                continue;
            }
            positions.sort_unstable();
            positions.dedup();
            let mut done = 0;
            let mut interrupted = false;
            // The right pair of the last merge (rank, position), held back while the symbol after it is the
            // next position of this bucket: if that one merges, its left pair supersedes the held one, which
            // would only go stale (in a run like "aaaa…" that was half of all queued pairs).
            let mut held: Option<(u32, usize)> = None;
            while done < positions.len() && !interrupted {
                if let Some(&ahead) = positions.get(done + PREFETCH_DISTANCE) {
                    crate::prefetch(&sym[ahead as usize]);
                }
                let p = positions[done] as usize;
                done += 1;
                // Still the start of a symbol, followed by one that makes a pair of this rank? (A recorded
                // start can since only have become the inside of a longer symbol (NONE), its end (END set), or
                // the start of a longer symbol — whose pair the rank check then judges.)
                let a = sym[p];
                let q = p + len(a & !END);
                let (live, x) = if a & END == 0 && q < n { self.rank(a, sym[q], limit) } else { (NONE, NONE) };
                if live != rank {
                    if let Some((r, at)) = held.take() {
                        add(&mut buckets, &mut ranks, r, at);
                    }
                    continue;
                }
                held = None; // superseded by this merge's left pair
                let end = q + len(sym[q]) - 1;
                sym[p] = x;
                sym[end] = x | END;
                if q - 1 != p {
                    sym[q - 1] = NONE;
                }
                if q != end {
                    sym[q] = NONE;
                }
                // Queued positions inside the new symbol are stale now: pass them (which also lets the right
                // pair below be held when the next symbol is queued, as in a run of one letter).
                while positions.get(done).is_some_and(|&next| next as usize <= end) {
                    done += 1;
                }
                if end + 1 < n {
                    let (r, _) = self.rank(x, sym[end + 1], limit);
                    if r != NONE {
                        if r > rank && positions.get(done) == Some(&((end + 1) as u32)) {
                            held = Some((r, p));
                        } else {
                            add(&mut buckets, &mut ranks, r, p);
                            interrupted |= r < rank && !self.all_occurrences;
                        }
                    }
                }
                if p > 0 {
                    let before = sym[p - 1] & !END;
                    let left = p - len(before);
                    let (r, _) = self.rank(before, x, limit);
                    if r != NONE {
                        add(&mut buckets, &mut ranks, r, left);
                        interrupted |= r < rank && !self.all_occurrences;
                    }
                }
            }
            if let Some((r, at)) = held {
                add(&mut buckets, &mut ranks, r, at);
            }
            if done < positions.len() {
                // A lower rank appeared: it goes first; the rest of this bucket waits its turn again.
                let bucket = &mut buckets[rank as usize];
                if bucket.is_empty() {
                    ranks.push(Reverse(rank));
                }
                bucket.extend_from_slice(&positions[done..]);
            }
        }
        // The symbols, left to right.
        let mut write = start;
        let mut p = 0;
        while p < n {
            let id = ids[start + p];
            ids[write] = id;
            write += 1;
            p += len(id);
        }
        ids.truncate(write);
    }

    /// Merges the pair at `pos` if it is still there with this rank (entries go stale: the symbol was merged
    /// away, or its pair changed since it was queued). Returns the two new pairs (rank, position; NONE rank
    /// when there is none), or None if the entry was stale.
    #[inline]
    fn merge_at(&self, symbols: &mut [Symbol], pos: u32, rank: u32, limit: u32) -> Option<[(u32, u32); 2]> {
        let left = symbols[pos as usize];
        if left.id == NONE || left.next == NONE {
            return None;
        }
        let right = symbols[left.next as usize];
        let (live_rank, result) = self.rank(left.id, right.id, limit);
        if live_rank != rank {
            return None;
        }
        symbols[pos as usize].id = result;
        symbols[pos as usize].next = right.next;
        symbols[left.next as usize].id = NONE;
        let mut new_pairs = [(NONE, NONE); 2];
        if right.next != NONE {
            symbols[right.next as usize].prev = pos;
            new_pairs[0] = (self.rank(result, symbols[right.next as usize].id, limit).0, pos);
        }
        if left.prev != NONE {
            new_pairs[1] = (self.rank(symbols[left.prev as usize].id, result, limit).0, left.prev);
        }
        Some(new_pairs)
    }

    /// The same, in O(n log n): a heap of (rank, position) over a linked list of symbols. With
    /// `all_occurrences`, pairs made while a rank is merged wait until that rank is done.
    fn merge_heap(&self, ids: &mut Vec<u32>, start: usize, limit: u32, scratch: &mut Scratch) {
        let n = ids.len() - start;
        let Scratch { symbols, heap, pending, .. } = scratch;
        link(symbols, &ids[start..]);
        heap.clear();
        pending.clear();
        for i in 0..n - 1 {
            let (rank, _) = self.rank(symbols[i].id, symbols[i + 1].id, limit);
            if rank != NONE {
                heap.push(Reverse((rank, i as u32)));
            }
        }
        let mut current = NONE;
        loop {
            if !pending.is_empty() && !matches!(heap.peek(), Some(Reverse((r, _))) if *r == current) {
                heap.extend(pending.drain(..)); // rank `current` is done
            }
            let Some(Reverse((rank, pos))) = heap.pop() else { break };
            current = rank;
            let Some(new_pairs) = self.merge_at(symbols, pos, rank, limit) else { continue };
            for (r, p) in new_pairs {
                if r != NONE {
                    if self.all_occurrences {
                        pending.push(Reverse((r, p)));
                    } else {
                        heap.push(Reverse((r, p)));
                    }
                }
            }
        }
        unlink(symbols, ids, start);
    }
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

/// Lays `ids` out as a doubly linked list of symbols.
fn link(symbols: &mut Vec<Symbol>, ids: &[u32]) {
    let n = ids.len();
    symbols.clear();
    symbols.extend(ids.iter().enumerate().map(|(i, &id)| Symbol {
        id,
        prev: if i == 0 { NONE } else { i as u32 - 1 },
        next: if i + 1 == n { NONE } else { i as u32 + 1 },
    }));
}

/// Writes the symbols left after merging back into `ids[start..]`.
fn unlink(symbols: &[Symbol], ids: &mut Vec<u32>, start: usize) {
    ids.truncate(start);
    let mut i = 0u32;
    while i != NONE {
        ids.push(symbols[i as usize].id);
        i = symbols[i as usize].next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes a=0 b=1; merges: (a,b)→ab=2 rank 0, (ab,ab)→abab=3 rank 1, (a,a)→aa=4 rank 2.
    fn encoder() -> PieceEncoder {
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

    fn encode(e: &PieceEncoder, s: &[u8]) -> Vec<u32> {
        let mut out = Vec::new();
        e.encode(s, &mut Scratch::default(), &mut out).unwrap();
        out
    }

    #[test]
    fn merges_by_rank_and_leftmost_first() {
        let e = encoder();
        assert_eq!(encode(&e, b"abab"), [3]);
        assert_eq!(encode(&e, b"aaa"), [4, 0]);
        assert_eq!(encode(&e, b"aab"), [0, 2]); // (a,b) outranks (a,a)
    }

    /// Bytes a b c; tiktoken's rule (every split of a token merges into it at its id), with tokens whose
    /// merges make pairs of lower rank than their own ("aa" at 11 makes ("aa", "a") → "aaa" at 4).
    fn tiktoken_style_encoder() -> PieceEncoder {
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

    #[test]
    fn long_pieces_give_the_same_ids_as_short_ones() {
        let mut x: u64 = 7;
        for (e, alphabet) in
            [(encoder(), &b"ab"[..]), (tiktoken_style_encoder(), b"abc"), (tiktoken_style_encoder(), b"ab")]
        {
            assert!(e.in_place);
            for len in [2usize, 3, 49, 50, 100, 1000, 5000, 20_000] {
                for weight in [2u64, 3, 7] {
                    let piece: Vec<u8> = (0..len)
                        .map(|_| {
                            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                            // Runs of the first letter are common: they make the long chains of merges.
                            let r = x >> 33;
                            if !r.is_multiple_of(weight) {
                                alphabet[0]
                            } else {
                                alphabet[(r / weight) as usize % alphabet.len()]
                            }
                        })
                        .collect();
                    let mut by_heap = Vec::new();
                    e.merge_heap_for_test(&piece, &mut by_heap);
                    let mut in_place: Vec<u32> = piece.iter().map(|&b| e.units.single(b)).collect();
                    e.merge_in_place(&mut in_place, 0, NONE);
                    assert_eq!(in_place, by_heap, "length {len}");
                    let mut linear: Vec<u32> = piece.iter().map(|&b| e.units.single(b)).collect();
                    e.merge_linear_unbounded(&mut linear);
                    assert_eq!(by_heap, linear, "length {len}");
                    // After other ids (`start` > 0), as when a text has several pieces.
                    let mut after: Vec<u32> = vec![1, 0];
                    after.extend(piece.iter().map(|&b| e.units.single(b)));
                    e.merge_in_place(&mut after, 2, NONE);
                    assert_eq!(after[2..], by_heap[..]);
                }
            }
        }
    }

    /// Random tiktoken-style vocabularies over a, b, c (random strings, random ranks, so merges often make
    /// pairs ranked below their own) on random texts: the in-place merge equals the textbook loop.
    #[test]
    fn in_place_merge_equals_the_textbook_on_random_vocabularies() {
        let mut x: u64 = 11;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..400 {
            let mut words: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
            while words.len() < 3 + 4 + next(60) as usize {
                let w: Vec<u8> = (0..2 + next(4))
                    .map(|_| {
                        let spread = if next(3) == 0 { 3 } else { 1 };
                        b"abc"[next(spread) as usize]
                    })
                    .collect();
                if !words.contains(&w) {
                    words.push(w);
                }
            }
            let mut byte_ids = [NONE; 256];
            for (id, w) in words.iter().enumerate().take(3) {
                byte_ids[w[0] as usize] = id as u32;
            }
            let mut pairs = Vec::new();
            for (id, w) in words.iter().enumerate() {
                for k in 1..w.len() {
                    let left = words.iter().position(|t| *t == w[..k]);
                    let right = words.iter().position(|t| *t == w[k..]);
                    if let (Some(l), Some(r)) = (left, right) {
                        pairs.push((l as u32, r as u32, id as u32, id as u32));
                    }
                }
            }
            let tokens: Vec<Option<&[u8]>> = words.iter().map(|w| Some(w.as_slice())).collect();
            let e = PieceEncoder::new(Units::Bytes(byte_ids), pairs, &tokens, None, true, false);
            for len in [60usize, 300, 3000] {
                let piece: Vec<u8> = (0..len)
                    .map(|_| {
                        let spread = if next(4) == 0 { 3 } else { 1 };
                        b"abc"[next(spread) as usize]
                    })
                    .collect();
                let mut textbook: Vec<u32> = piece.iter().map(|&b| e.units.single(b)).collect();
                e.merge_linear_unbounded(&mut textbook);
                let mut in_place: Vec<u32> = piece.iter().map(|&b| e.units.single(b)).collect();
                e.merge_in_place(&mut in_place, 0, NONE);
                assert_eq!(in_place, textbook, "vocabulary {words:?}, text {:?}", String::from_utf8_lossy(&piece));
            }
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
        use crate::train::{Silent, TrainConfig, train};
        use crate::vocab::Mode;
        let mut x: u64 = 3;
        let mut next = move |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let (mut checked, mut tiktoken_rule_built) = (0, 0);
        // (Long runs of one letter make tokens with many prefixes that are tokens: more than the search keeps
        // from its trie walk.)
        let alphabets = [&b"ab"[..], b"abc", b"aab", b"aBcD", b"0123456789", b"ab c", b"0012 3a", b"aaaaaaaaab"];
        for (round, alphabet) in alphabets.iter().cycle().take(32).enumerate() {
            let words: Vec<(String, u64)> = (0..6)
                .map(|_| {
                    let len = 50 + next(400) as usize;
                    (String::from_utf8(random_text(&mut next, alphabet, len)).unwrap(), 1 + next(3))
                })
                .collect();
            let words: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
            let vocab_size = 256 + 10 + next(120) as usize;
            let mut config = TrainConfig::for_test(vocab_size, Mode::Byte);
            config.alphabet = crate::train::Alphabet::All;
            let vocab = train(&words, &config, &mut Silent).unwrap().vocab;
            let by_merges = crate::encode::piece_encoder_by_rule(&vocab, false).unwrap();
            let by_ranks = crate::encode::piece_encoder_by_rule(&vocab, true).unwrap();
            tiktoken_rule_built += by_ranks.backtracker().is_some() as usize;
            for e in [Some(&by_merges), by_ranks.backtracker().map(|_| &by_ranks)].into_iter().flatten() {
                for len in [1usize, 2, 3, 10, 60, 500, 3000] {
                    for _ in 0..6 {
                        let text = random_text(&mut next, alphabet, len);
                        let (backtracked, merged) = backtracked_and_merged(e, &text);
                        assert_eq!(backtracked, merged, "round {round}, text {:?}", String::from_utf8_lossy(&text));
                        checked += 1;
                    }
                }
            }
        }
        assert!(
            checked > 32 * 42 && tiktoken_rule_built >= 8,
            "{checked} texts, {tiktoken_rule_built} tiktoken-rule vocabularies"
        );
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
        assert_eq!(e.encode(piece, &mut Scratch::default(), &mut Vec::new()), Err(UnknownByte(12)));
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
    fn merges_that_do_not_add_up_leave_long_pieces_to_the_heap() {
        // A merge whose result is not as long as its parts (a hand-edited vocabulary): no in-place layout.
        let mut byte_ids = [NONE; 256];
        byte_ids[b'a' as usize] = 0;
        byte_ids[b'b' as usize] = 1;
        let tokens: Vec<Option<&[u8]>> = vec![Some(b"a"), Some(b"b"), Some(b"abc")];
        let e = PieceEncoder::new(Units::Bytes(byte_ids), [(0, 1, 0, 2)], &tokens, None, false, false);
        assert!(!e.in_place);
        let piece = b"ab".repeat(5000);
        assert_eq!(encode(&e, &piece), vec![2; 5000]);
    }

    #[test]
    fn the_seen_table_finds_what_it_holds_as_it_grows_until_full() {
        let key = |k: u64| Key::of(format!("piece{k}").as_bytes());
        // Some pieces make more ids than an entry holds (up to 16, one per byte).
        let made = |k: u64| -> Vec<u32> { (0..1 + k % 16).map(|i| (k * 31 + i) as u32).collect() };
        let mut seen = Seen::default();
        assert!(seen.get(key(0), key(0).hash()).is_none());
        let mut k = 0;
        while !seen.full() {
            let entry = seen.entry(key(k), &made(k));
            seen.insert(entry, key(k).hash());
            if k % 4099 == 0 {
                for j in (0..=k).step_by(97) {
                    let entry = seen.get(key(j), key(j).hash()).expect("held");
                    assert_eq!(seen.ids(entry), made(j), "piece {j} after {k}");
                }
                assert!(seen.get(key(k + 1), key(k + 1).hash()).is_none());
            }
            k += 1;
        }
        assert_eq!((seen.slots.len(), k as usize), (SEEN_MOST_SLOTS, SEEN_MOST_SLOTS / 2));
        seen.clear();
        assert!(seen.get(key(0), key(0).hash()).is_none() && seen.overflow.is_empty());
        let entry = seen.entry(key(5), &made(5));
        seen.insert(entry, key(5).hash());
        assert_eq!(seen.ids(seen.get(key(5), key(5).hash()).unwrap()), made(5));
    }

    #[test]
    fn an_entry_holds_only_its_own_piece() {
        // Pieces of 9-16 bytes share words when they share their first and last 8 bytes: the length tells them
        // apart; pieces under 8 bytes are packed whole.
        let pieces: [&[u8]; 10] = [
            b"xxxxxxxxx",
            b"xxxxxxxxxx",
            b"xxxxxxxxxxxxxxxx",
            b"xxxxxxxxxxxx",
            b"xxxxxxxxxxxy",
            b"ab",
            b"ba",
            b"abc",
            b"acb",
            b"a\0",
        ];
        let mut seen = Seen::default();
        for (i, p) in pieces.iter().enumerate() {
            let entry = seen.entry(Key::of(p), &[i as u32]);
            for (j, q) in pieces.iter().enumerate() {
                assert_eq!(entry.holds(Key::of(q)), i == j, "{:?} {:?}", p, q);
            }
        }
        assert!(!Entry::default().holds(Key::of(b"\0\0")), "an empty slot holds no piece");
    }

    /// Pieces that differ only in their last bytes get different front-table slots (with the old hash, the
    /// 676 pieces " thaa" … " thzz" shared 26 slots).
    #[test]
    fn front_slots_depend_on_every_byte_of_a_piece() {
        for prefix in [&b" th"[..], b"ing", b" ", b"abcdefghijk"] {
            let pieces: Vec<Vec<u8>> =
                (b'a'..=b'z').flat_map(|x| (b'a'..=b'z').map(move |y| [prefix, &[x, y]].concat())).collect();
            let slots: std::collections::HashSet<usize> =
                pieces.iter().map(|p| front_slot(Key::of(p).hash())).collect();
            // 676 pieces in 32K slots: ~7 collide by chance.
            assert!(slots.len() >= 650, "{:?}…: {} slots for 676 pieces", String::from_utf8_lossy(prefix), slots.len());
        }
    }

    #[test]
    fn pieces_encode_the_same_whichever_table_they_come_from() {
        // First sight (merged or whole), then the seen table (front slot taken by another piece), then the front.
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
            if round == 1 {
                scratch.front.fill(Entry::default()); // so that this round finds them in the seen table
            }
            for (piece, want) in pieces.iter().zip(&expected) {
                let mut out = Vec::new();
                e.encode_next(piece, &mut scratch, &mut out).unwrap();
                assert_eq!(&out, want, "round {round}");
            }
        }
    }

    #[test]
    fn unknown_bytes_are_reported_or_become_unk() {
        let e = encoder();
        assert_eq!(e.encode(b"axb", &mut Scratch::default(), &mut Vec::new()), Err(UnknownByte(1)));
    }

    impl PieceEncoder {
        fn merge_heap_for_test(&self, piece: &[u8], out: &mut Vec<u32>) {
            out.extend(piece.iter().map(|&b| self.units.single(b)));
            self.merge_heap(out, 0, NONE, &mut Scratch::default());
        }

        /// The textbook loop without the length limit of `merge_linear`'s stack buffer.
        fn merge_linear_unbounded(&self, ids: &mut Vec<u32>) {
            loop {
                let mut best: Option<(u32, usize, u32)> = None;
                for i in 0..ids.len().saturating_sub(1) {
                    let (rank, result) = self.rank(ids[i], ids[i + 1], NONE);
                    if rank != NONE && best.is_none_or(|(r, ..)| rank < r) {
                        best = Some((rank, i, result));
                    }
                }
                let Some((_, i, result)) = best else { return };
                ids[i] = result;
                ids.remove(i + 1);
            }
        }
    }
}
