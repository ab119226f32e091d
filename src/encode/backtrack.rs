//! BPE of a piece without a merge queue: longest matches, checked pair by pair, backtracking when a check
//! fails.
//!
//! The idea is the one GitHub's `bpe` crate describes; the code and the argument below are ours.
//!
//! 1. *A sequence of tokens spelling a text is that text's BPE encoding exactly when each token is what BPE
//!    makes of its own bytes and every two neighbours are what BPE makes of their concatenation.* (If the
//!    merges over the whole text ever joined two neighbours' regions, take the first time they do: until then
//!    each region went as it goes alone, so the same merge comes first in those two regions alone — the pair
//!    was not what BPE makes of it. Conversely, the merges of each region of the real encoding are its own.)
//!    So the encoding of a prefix is the only valid token sequence that ends where it ends: a position from
//!    which no valid sequence continues is a dead end whatever led there, and the search below visits each
//!    position at most once.
//! 2. *Checking a pair without merging.* When every token's own last merge joins two tokens of lower rank
//!    (checked at build; true of r50k, p50k, cl100k and o200k and of trained vocabularies), merges happen in
//!    rank order, and the symbols on the two sides of a boundary over time are the tokens down the right
//!    edge of the left token's merge tree and down the left edge of the right one's. Walking both edges from
//!    the top, always into the side built later, meets every pair that faces the boundary; the two tokens
//!    stay apart unless one of those pairs merges before either of its symbols merges on its own side (a
//!    tie goes to the leftmost pair, as in the merge loop). Only a token's own last merge can ever make it
//!    (by 1.), so only those pairs are looked up; and with ids numbered in rank order (checked at build),
//!    "built later" and "merges first" are comparisons of ids.
//! 3. *Candidates.* The longest token the text starts with comes from a trie (a double array: one cache line
//!    per byte); the next ones to try are each token's longest proper prefix that is a token. The walk keeps
//!    the tokens it passes (up to `FOUND`), so trying them needs no lookup of their lengths and prefixes (10 MB
//!    of random letters, cl100k: 0.208 → 0.198 s; beyond them, `len_shorter` has each token's).
//! 4. *Tables for two kinds of tokens.* Digit tokens and tokens of one or two ASCII letters are few (1–2
//!    thousand), and on long numbers and long runs of letters nearly every pair check is between two of
//!    them: their checks are remembered in a table per kind (`ClassPairs`), each pair's when first asked
//!    for. 10 MB of random digits (gpt2): 0.36 → 0.19 s; random letters: gpt2 0.21 → 0.18 s, cl100k 0.23 →
//!    0.20 s (with rows filled at once then; pair by pair, the first 1 MB of random letters 43–55 → 26–30 ms).
//!
//! Cost: a few table lookups per token, no per-byte symbol array and no queue. 10 MB of random letters in
//! one piece: 0.37 → 0.19 s (gpt2), 0.50 → 0.23 s (cl100k); random digits (gpt2) 0.52 → 0.33 s, each
//! against the bucket merge it replaced (before the tables of 4.). Multilingual text, whose unspaced pieces
//! miss the caches: o200k 23 → ~45 MB/s.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::hash_bits::HashBits;
use super::huge_pages::{HugeSlice, Pages};
use super::pair_table::PairTable;

const NONE: u32 = u32::MAX;
/// `class_index` of a token in no class.
const NO_CLASS: u16 = u16::MAX;
/// `class_index`: a token's class above this bit, its index in the class below it.
const CLASS_SHIFT: u32 = 15;
/// What the pair check returns for a pair that fails it, found in `ClassPairs`: no token to prune with.
const FAILS: u32 = NONE - 1;
/// How many of the tokens a text starts with the trie walk keeps (more only when a token has many prefixes
/// that are tokens: a run of one character; the shorter ones are then reached by `len_shorter`).
const FOUND: usize = 8;
/// Vocabularies with a token longer than this (in bytes) get no backtracker: its build merges each token and
/// lays each out in the trie (a rank file with 16 MB of tokens took 9 s), for tokens no real text holds; the
/// merge encodes their pieces instead. The longest tokens of the OpenAI vocabularies have 128 bytes.
const MAX_TOKEN_BYTES: usize = 1 << 16;
/// At most this many tokens of a class get its table (1 MB: two bits per pair, touched only where asked).
const MAX_CLASS_TOKENS: usize = 2048;

/// The kinds of tokens whose pair checks are tabled (see `ClassPairs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TokenClass {
    /// Spelled with ASCII digits only.
    Digits = 0,
    /// One or two ASCII letters.
    ShortLetters = 1,
}

impl TokenClass {
    const ALL: [TokenClass; 2] = [TokenClass::Digits, TokenClass::ShortLetters];

    fn holds(self, bytes: &[u8]) -> bool {
        match self {
            TokenClass::Digits => bytes.iter().all(u8::is_ascii_digit),
            TokenClass::ShortLetters => bytes.len() <= 2 && bytes.iter().all(u8::is_ascii_alphabetic),
        }
    }

    /// The class whose table helps a piece that ends with `last`: pieces of one kind of character, which
    /// the pre-tokenizers keep together.
    fn for_last_byte(last: u8) -> Option<TokenClass> {
        if last.is_ascii_digit() {
            Some(TokenClass::Digits)
        } else if last.is_ascii_alphabetic() {
            Some(TokenClass::ShortLetters)
        } else {
            None
        }
    }
}
/// Ids must be below this for `CanonicalPairs`' packed slots (21 bits each; all ones marks a free slot).
const MAX_IDS: u32 = (1 << 21) - 1;

/// (left, right) → the token whose own last merge it is. Only these pairs can ever merge in a text (a token
/// made by merges in a text was made by its own merges: the merges inside its bytes run as they would alone),
/// so the pair check needs 200 K pairs for o200k instead of tiktoken's 446 K splits; packed in 8-byte slots
/// (21 bits per id) it is a quarter of the merge table's size, and byte pairs have a dense 256 KB table.
#[derive(Clone, Debug)]
struct CanonicalPairs {
    /// On huge pages when 2 MB or more (`huge_pages.rs`): 10 MB of base64 with cl100k, whose short pieces the
    /// backtracker takes, checks ~2 pairs per token here at random; alternated calls on fresh 1 MB texts, 2 MB
    /// of slots on a huge page: 3.5–4.5 % less time; multilingual text (o200k, 4 MB) +0.5 %.
    slots: HugeSlice<u64>,
    shift: u32,
    /// A bit per hash value (16 per pair), set for the pairs present: most pairs looked up are absent, and this
    /// answers them from 128 KB (gpt2) instead of a slot in 1 MB (10 MB of random digits, gpt2: 0.48 → 0.35 s).
    filter: HashBits,
    filter_shift: u32,
    /// The pairs of two ids below 256 (the bytes, in the usual vocabularies), by `left * 256 + right`.
    bytes: Box<[u32]>,
}

impl CanonicalPairs {
    fn new(split: &[[u32; 2]]) -> CanonicalPairs {
        let n = split.iter().filter(|s| s[0] != NONE).count();
        // At most ~70 % full: probes stay within a cache line or two (8 slots per line).
        let bits = ((n * 10 / 7).max(1).next_power_of_two().trailing_zeros()).max(4);
        let filter_bits = (n.max(1) * 16).next_power_of_two().trailing_zeros().max(6);
        let mut table = CanonicalPairs {
            slots: HugeSlice::filled(1 << bits, u64::MAX, Pages::Huge),
            shift: 64 - bits,
            filter: HashBits::new(1 << filter_bits),
            filter_shift: 64 - filter_bits,
            bytes: vec![NONE; 256 * 256].into_boxed_slice(),
        };
        for (id, &[left, right]) in split.iter().enumerate() {
            if left == NONE {
                continue;
            }
            if left | right < 256 {
                table.bytes[(left * 256 + right) as usize] = id as u32;
                continue;
            }
            let key = Self::key(left, right);
            table.filter.set(table.filter_bit(key));
            let mut i = table.slot(key);
            while table.slots[i] != u64::MAX {
                i = (i + 1) & (table.slots.len() - 1);
            }
            table.slots[i] = key << 21 | id as u64;
        }
        table
    }

    #[inline]
    fn key(left: u32, right: u32) -> u64 {
        (left as u64) << 21 | right as u64
    }

    #[inline]
    fn filter_bit(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.filter_shift) as usize
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The token `(left, right)` is the own last merge of, or NONE.
    #[inline]
    fn get(&self, left: u32, right: u32) -> u32 {
        if left | right < 256 {
            return self.bytes[(left * 256 + right) as usize];
        }
        let key = Self::key(left, right);
        if !self.filter.has(self.filter_bit(key)) {
            return NONE;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            let slot = self.slots[i];
            if slot == u64::MAX {
                return NONE;
            }
            if slot >> 21 == key {
                return (slot & MAX_IDS as u64) as u32;
            }
            i = (i + 1) & mask;
        }
    }
}

#[derive(Clone, Debug)]
pub struct Backtracker {
    /// Each token's own last merge `[left, right]` (NONE for bytes and for tokens BPE does not build).
    split: Vec<[u32; 2]>,
    /// Each token's `[length in bytes, longest proper prefix that is a built token (NONE for a byte)]`.
    len_shorter: Vec<[u32; 2]>,
    /// Ids are in build order: bytes below this, built tokens of two or more bytes at or above it, numbered as
    /// their own last merges are ranked. (So "built later" and "merges earlier" are id comparisons, with no
    /// table of ranks to read: the pair check is one pair lookup and one split per step.)
    first_merged: u32,
    /// Each built token's own last merge, as a pair → token table: only those pairs ever merge (see `meeting`).
    canonical: CanonicalPairs,
    /// The trie of built tokens as a double array: node `i`'s child by byte `b` is `trie[trie[i].base + b]`
    /// if that cell's `parent` is `i`. One cache line per byte matched, no hashing (a hashed edge table spent
    /// half the time of encoding random letters here).
    trie: Vec<TrieCell>,
    /// Each token's class and index in it (`class << CLASS_SHIFT | index`; `NO_CLASS` if none).
    class_index: Vec<u16>,
    /// Each class's table (by `TokenClass as usize`).
    class_pairs: [ClassPairs; 2],
}

/// The pair check's answer for two tokens of a class, remembered once found: two bits per pair.
///
/// A long number is one piece under GPT-2's pattern (r50k, p50k): 10 MB of random digits is 14.6 M pair
/// checks, half of which fail, each a walk down two merge trees with a hash lookup per step. GPT-2 has 994
/// digit tokens: ~1 M pairs. Random letters end up as tokens of one or two letters, 97 % of them (cl100k);
/// 1 215–1 796 such tokens, 1.5–3.2 M pairs.
///
/// Each pair is walked the first time it is asked for and answered from its bits after that, so no pair is
/// walked twice and none that is never asked for is walked at all. (Before, a left token's whole row was
/// filled at its 256th ask: 1 MB of random letters, cl100k, spent 40 of its 55 ms of a first call filling
/// rows, mostly with pairs it never asked for; and up to 256 asks of a row walked the same pairs again.) The
/// table is zeroed memory from the allocator, so that its pages become resident only where pairs are asked
/// for: ordinary text asks for few. Two threads may find a pair at once (see `bits`).
///
/// In a number or a run of letters long enough to ask for a good part of the table (`fills_rows`), the first
/// pair asked for with a left token has that token's whole row answered, by walks that look merges up in dense
/// rows rather than in `canonical` (`Backtracker::fill_row`): ~9 ns a pair against ~35 for a walk when first
/// asked. 4 MB of random digits (r50k) as a first call: 76 → 63 ms (53 once the table is known). The whole
/// table at once did as well there but cost `"a"` × 4 MB ~10 ms (16 → 26) for pairs it never asks for; letting
/// shorter pieces fill did not pay: base64 asks for a small part of the short-letter table. The short letters'
/// rows take ~3 ns a pair (`passes_by_short_edges`: four merges read at once, no walk).
#[derive(Debug)]
struct ClassPairs {
    class: u16,
    /// The class's built tokens, by index.
    members: Vec<u32>,
    /// Groups of 64 right tokens per left token (two words of `bits` each).
    words_per_row: usize,
    /// Per left token (by index) and group of 64 right ones, two words: the pairs found to pass, then those
    /// found to fail. Each bit is set only with its pair's answer, so a bit lost to two threads writing one
    /// word at once (a load and a store, not a locked read-modify-write: 3 M pairs on random letters) leaves
    /// that pair unknown, never wrong.
    bits: Vec<AtomicU64>,
    /// A bit per left token whose row has been answered whole (`Backtracker::fill_row`), or is being.
    rows_filled: Vec<AtomicU64>,
    /// What filling a row needs, made for the first.
    edges: OnceLock<ClassEdges>,
}

/// The class's merges and its tokens' left edges, for `Backtracker::fill_row`.
#[derive(Clone, Debug)]
struct ClassEdges {
    /// Each member's merges with a member on its right: (the right one's index, the token they make).
    merges: Vec<Vec<(u32, u32)>>,
    /// Each member's left edge, top down to a byte: its tokens' ids and class indices (None if one is not a
    /// member: it never is, as both classes hold the parts of their tokens, which were built before them).
    lefts: Vec<Option<(Vec<u32>, Vec<u32>)>>,
    /// When every member's left edge is one or two tokens (as in a class of tokens of up to two bytes), the
    /// edges again, flat for `passes_by_short_edges`: `[top, below, top's index, below's index]` (a byte's `below`
    /// is itself, never read). None otherwise.
    short_lefts: Option<Vec<[u32; 4]>>,
}

impl Clone for ClassPairs {
    fn clone(&self) -> ClassPairs {
        ClassPairs {
            class: self.class,
            members: self.members.clone(),
            words_per_row: self.words_per_row,
            bits: self.bits.iter().map(|b| AtomicU64::new(b.load(Ordering::Relaxed))).collect(),
            rows_filled: self.rows_filled.iter().map(|b| AtomicU64::new(b.load(Ordering::Relaxed))).collect(),
            edges: self.edges.clone(),
        }
    }
}

/// The table given to the search that does not use one.
static NO_CLASS_PAIRS: ClassPairs = ClassPairs {
    class: NO_CLASS,
    members: Vec::new(),
    words_per_row: 0,
    bits: Vec::new(),
    rows_filled: Vec::new(),
    edges: OnceLock::new(),
};

impl ClassPairs {
    /// An empty table for `members`, the tokens of `class`.
    fn new(class: TokenClass, members: Vec<u32>) -> ClassPairs {
        let words_per_row = members.len().div_ceil(64);
        // SAFETY: an all-zero AtomicU64 is a valid 0. (Zeroed by the allocator: fresh pages stay untouched.)
        let bits = unsafe { Box::<[AtomicU64]>::new_zeroed_slice(2 * members.len() * words_per_row).assume_init() };
        let bits = bits.into_vec();
        let rows_filled = (0..members.len().div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        ClassPairs { class: class as u16, words_per_row, bits, members, rows_filled, edges: OnceLock::new() }
    }

    /// Whether a piece of `len` bytes fills whole rows here (`Backtracker::fill_row`): a number or a run of
    /// letters of at least as many bytes as the table has pairs. (4 MB of random digits, r50k: 994 digit
    /// tokens, ~1 M pairs, 630 K of them asked for. 4 MB of random letters, cl100k: 788 K of the short
    /// letters' 2.3 M pairs asked for; rows filled by walks took as long as no rows, 76.2 against 75.8 ms, and
    /// came in with `passes_by_short_edges`: first calls on fresh text, alternated processes, −10 % at 4 MB,
    /// −23 % at 10 MB.)
    #[inline]
    fn fills_rows(&self, len: usize) -> bool {
        len >= self.members.len() * self.members.len()
    }

    /// The class index of token `id`, if it is in the class.
    fn index_of(&self, class_index: &[u16], id: u32) -> Option<u32> {
        let c = class_index[id as usize];
        (c != NO_CLASS && c >> CLASS_SHIFT == self.class).then_some(u32::from(c & ((1 << CLASS_SHIFT) - 1)))
    }

    /// Where the bits of the pair (`left`, `right`) are: the index of its "passes" word (its "fails" word is
    /// the next), and its bit.
    #[inline(always)]
    fn place(&self, left: u16, right: u16) -> (usize, u64) {
        (2 * (left as usize * self.words_per_row + right as usize / 64), 1 << (right % 64))
    }

    /// The pair's check if known: whether it passes.
    #[inline(always)]
    fn known(&self, left: u16, right: u16) -> Option<bool> {
        let (at, bit) = self.place(left, right);
        if self.bits[at].load(Ordering::Relaxed) & bit != 0 {
            Some(true)
        } else if self.bits[at + 1].load(Ordering::Relaxed) & bit != 0 {
            Some(false)
        } else {
            None
        }
    }

    /// Remembers the pair's check.
    #[inline(always)]
    fn remember(&self, left: u16, right: u16, passes: bool) {
        let (at, bit) = self.place(left, right);
        let word = &self.bits[at + usize::from(!passes)];
        word.store(word.load(Ordering::Relaxed) | bit, Ordering::Relaxed);
    }
}

/// `meeting_by_rows` for a left token `a` whose right edge and a right one `b` whose left edge are one or two
/// tokens (as for tokens of at most two bytes): `a` is a byte or merges from `[a0, a1]` with `a1` a byte
/// (`xs = [a, a1]`, else `[a, a]`), `b` likewise from `[b0, b1]` with `b0` a byte (`left = [b, b0, b's index,
/// b0's index]`, `ClassEdges::short_lefts`), with `m(x, y)`, the token `x` makes with member `y`, at
/// `rows[i * n + y's index]` for `x = xs[i]`. Its walk is at most three steps, which come to four tests of
/// the merges that can meet there, all read at once rather than step after step (in a row of random pairs
/// the walk's branches went either way: a branch miss or two per pair was most of `fill_row`'s ~13 ns a
/// pair with cl100k's short letters). The pair passes when none holds:
/// - `m(a, b)` is a token;
/// - `a` is undone first (it merges, and `b` is a byte or built before it) and `m(a1, b) < a`;
/// - `b` is undone first (it merges, and `a` is a byte or built no later) and `m(a, b0) <= b`;
/// - both merge, and `m(a1, b0)` is built before `a` and no later than `b`.
#[inline(always)]
fn passes_by_short_edges(first_merged: u32, xs: [u32; 2], rows: &[u32], n: usize, left: &[u32; 4]) -> bool {
    let (a, b) = (xs[0], left[0]);
    let (a_merges, b_merges) = (a >= first_merged, b >= first_merged);
    let (b_at, b0_at) = (left[2] as usize, left[3] as usize);
    let (a_b, a1_b, a_b0, a1_b0) = (rows[b_at], rows[n + b_at], rows[b0_at], rows[n + b0_at]);
    let a_first = a_merges & (!b_merges | (a > b));
    let b_first = b_merges & (!a_merges | (b >= a));
    let meets = (a_b != NONE)
        | (a_first & (a1_b < a))
        | (b_first & (a_b0 <= b))
        | (a_merges & b_merges & (a1_b0 < a) & (a1_b0 <= b));
    !meets
}

/// A cell of the double array: a node (its parent, its children's base, the token ending there) or free.
#[derive(Clone, Copy, Debug)]
struct TrieCell {
    parent: u32,
    base: u32,
    token: u32,
}

const FREE: TrieCell = TrieCell { parent: NONE, base: 0, token: NONE };

/// The trie of `keys` (tokens in the order of their spellings, `spell`) as a double array; cell 0 is the root.
/// Sets each key's longest proper prefix among the keys in `len_shorter[token][1]`.
fn double_array<'t>(keys: &[u32], spell: impl Fn(u32) -> &'t [u8], len_shorter: &mut [[u32; 2]]) -> Vec<TrieCell> {
    // Room for the trie's nodes (each key adds the bytes past its common prefix with the one before) and an
    // eighth more: the array is nearly dense (o200k: 421 661 nodes, 421 885 cells). Grown by doubling from 512
    // cells instead, the copies left behind raised the peak of preparing o200k_base by ~9 MB.
    let nodes = 1
        + keys.first().map_or(0, |&k| spell(k).len())
        + keys
            .windows(2)
            .map(|w| {
                let (a, b) = (spell(w[0]), spell(w[1]));
                b.len() - a.iter().zip(b).take_while(|(x, y)| x == y).count()
            })
            .sum::<usize>();
    let mut cells = Vec::with_capacity(nodes + nodes / 8 + 512);
    cells.resize(512, FREE);
    cells[0] = TrieCell { parent: NONE, base: 0, token: NONE };
    // A bit per cell, set when taken: the search for a base skips 64 cells at a time.
    let mut taken: Vec<u64> = vec![0; cells.len() / 64];
    taken[0] = 1; // the root
    let is_taken = |taken: &Vec<u64>, i: usize| taken.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 != 0);
    let next_free = |taken: &Vec<u64>, from: usize| {
        let mut word = from / 64;
        let mut bits = taken.get(word).map_or(0, |w| !w & (u64::MAX << (from % 64)));
        while bits == 0 {
            word += 1;
            match taken.get(word) {
                Some(w) => bits = !w,
                None => return word * 64,
            }
        }
        word * 64 + bits.trailing_zeros() as usize
    };
    // Breadth first: (cell, depth, the keys below it, the nearest token above it), in u32s: o200k's queue
    // holds up to 66 K entries.
    let mut queue = std::collections::VecDeque::from([(0u32, 0u32, 0..keys.len() as u32, NONE)]);
    let mut edges: Vec<(u8, std::ops::Range<u32>)> = Vec::new();
    let mut first_free = 1; // no free cell below it
    while let Some((cell, depth, mut below, above)) = queue.pop_front() {
        let (cell, depth) = (cell as usize, depth as usize);
        if below.start < below.end && spell(keys[below.start as usize]).len() == depth {
            // The key spelled by the path to this cell (sorted first among those below it).
            let token = keys[below.start as usize];
            cells[cell].token = token;
            len_shorter[token as usize][1] = above;
            below.start += 1;
        }
        let above = if cells[cell].token != NONE { cells[cell].token } else { above };
        edges.clear();
        for i in below.clone() {
            let b = spell(keys[i as usize])[depth];
            match edges.last_mut() {
                Some((last, range)) if *last == b => range.end = i + 1,
                _ => edges.push((b, i..i + 1)),
            }
        }
        let Some(lowest) = edges.first().map(|e| e.0 as usize) else { continue };
        // The first base (from the first free cell on) where every child's cell is free; after 256 tries,
        // past the end (the array stays sparse there, and building stays linear).
        first_free = next_free(&taken, first_free);
        let mut candidate = next_free(&taken, first_free.max(lowest + 1));
        let mut tries = 0;
        let base = loop {
            let base = candidate - lowest;
            if edges.iter().all(|(b, _)| !is_taken(&taken, base + *b as usize)) {
                break base;
            }
            tries += 1;
            candidate = next_free(&taken, if tries > 256 { cells.len().max(candidate + 1) } else { candidate + 1 });
        };
        if cells.len() < base + 257 {
            cells.resize(base + 257, FREE);
            taken.resize(cells.len().div_ceil(64), 0);
        }
        cells[cell].base = base as u32;
        for (b, range) in edges.drain(..) {
            let at = base + b as usize;
            cells[at] = TrieCell { parent: cell as u32, base: 0, token: NONE };
            taken[at / 64] |= 1 << (at % 64);
            queue.push_back((at as u32, depth as u32 + 1, range, above));
        }
    }
    cells
}

/// The last merge BPE makes over `bytes` (left, right, rank, result) when it ends in one token; None when it
/// ends in several (or in one byte). `symbols` is scratch space.
///
/// The lowest-ranked pair merges first, the leftmost among equals (the merge loop's rule), by a heap of
/// `(rank, position)` over a linked list of symbols: O(n log n). (A scan of all pairs per merge was O(n²): a
/// vocabulary holding "a" × 2^k for k up to 16 took 9.6 s to load, and a 10 MB token would have taken hours.)
fn own_last_merge(
    bytes: &[u8],
    byte_ids: &[u32; 256],
    pair_value: &impl Fn(u32, u32) -> u64,
    symbols: &mut Vec<[u32; 3]>,
) -> Option<(u32, u32, u32, u32)> {
    use std::cmp::Reverse;
    // symbols[i] = [id, previous, next] (NONE: none; a merged-away symbol's id is NONE).
    let n = bytes.len();
    symbols.clear();
    symbols.extend(bytes.iter().enumerate().map(|(i, &b)| {
        [byte_ids[b as usize], if i == 0 { NONE } else { i as u32 - 1 }, if i + 1 == n { NONE } else { i as u32 + 1 }]
    }));
    let rank_of = |left: u32, right: u32| {
        let v = pair_value(left, right);
        ((v >> 32) as u32, v as u32)
    };
    let mut heap: std::collections::BinaryHeap<Reverse<(u32, u32)>> = (0..n.saturating_sub(1))
        .filter_map(|i| {
            let (rank, _) = rank_of(symbols[i][0], symbols[i + 1][0]);
            (rank != NONE).then_some(Reverse((rank, i as u32)))
        })
        .collect();
    let (mut last, mut remaining) = (None, n);
    while let Some(Reverse((rank, pos))) = heap.pop() {
        let [left, _, next] = symbols[pos as usize];
        if left == NONE || next == NONE {
            continue; // merged away, or no longer followed by a symbol
        }
        let right = symbols[next as usize][0];
        let (live, result) = rank_of(left, right);
        if live != rank {
            continue; // the pair here changed since it was queued
        }
        last = Some((left, right, rank, result));
        remaining -= 1;
        let after = symbols[next as usize][2];
        symbols[pos as usize][0] = result;
        symbols[pos as usize][2] = after;
        symbols[next as usize][0] = NONE;
        if after != NONE {
            symbols[after as usize][1] = pos;
            let (r, _) = rank_of(result, symbols[after as usize][0]);
            if r != NONE {
                heap.push(Reverse((r, pos)));
            }
        }
        let before = symbols[pos as usize][1];
        if before != NONE {
            let (r, _) = rank_of(symbols[before as usize][0], result);
            if r != NONE {
                heap.push(Reverse((r, before)));
            }
        }
    }
    if remaining == 1 { last } else { None }
}

impl Backtracker {
    /// The backtracker for a byte-level vocabulary, or None when one of its preconditions fails: each byte's
    /// token spells it; every merge's result spells its two parts; each token BPE builds from its own bytes was
    /// last merged from two tokens built before it, and those tokens are numbered in that order, after the
    /// bytes. `tokens`: bytes by id (None for specials). r50k, p50k, cl100k, o200k, GPT-2's merges.txt and
    /// bytepair's trained vocabularies meet them. `pair_value`: `(rank << 32) | result` of a pair, `u64::MAX`
    /// if it does not merge; `listed`: the table of every pair that merges, to check that each spells its
    /// result (None when the vocabulary's rule makes it so: tiktoken's).
    pub fn build(
        byte_ids: &[u32; 256],
        pair_value: &(impl Fn(u32, u32) -> u64 + Sync),
        listed: Option<&PairTable>,
        tokens: &[Option<&[u8]>],
    ) -> Option<Backtracker> {
        let spells = |id: u32| tokens.get(id as usize).copied().flatten();
        if tokens.len() >= MAX_IDS as usize || tokens.iter().flatten().any(|t| t.len() > MAX_TOKEN_BYTES) {
            return None;
        }
        for (b, &id) in byte_ids.iter().enumerate() {
            if id != NONE && spells(id) != Some(&[b as u8][..]) {
                return None;
            }
        }
        for (left, right, v) in listed.into_iter().flat_map(PairTable::iter) {
            let (Some(l), Some(r), Some(x)) = (spells(left), spells(right), spells(v as u32)) else { return None };
            if x.len() != l.len() + r.len() || !x.starts_with(l) || !x.ends_with(r) {
                return None;
            }
        }
        let mut split = vec![[NONE, NONE]; tokens.len()];
        let mut built = vec![false; tokens.len()];
        let mut len_shorter = vec![[0, NONE]; tokens.len()];
        for &id in byte_ids.iter().filter(|&&id| id != NONE) {
            built[id as usize] = true;
            len_shorter[id as usize][0] = 1;
        }
        // Each token's own merges (on all cores: ~0.1 s of o200k's build on one).
        let own: Vec<Option<(u32, u32, u32)>> = crate::on_own_pool(|| {
            tokens
                .par_iter()
                .enumerate()
                .map_init(Vec::new, |symbols, (id, bytes)| match bytes {
                    Some(bytes) if bytes.len() >= 2 => own_last_merge(bytes, byte_ids, pair_value, symbols)
                        .and_then(|(left, right, rank, result)| (result == id as u32).then_some((left, right, rank))),
                    _ => None,
                })
                .collect()
        });
        let mut merged: Vec<(u32, u32)> = Vec::new(); // (id, rank of its own last merge), by id
        for (id, own) in own.into_iter().enumerate() {
            if let (Some((left, right, rank)), Some(bytes)) = (own, tokens[id]) {
                split[id] = [left, right];
                built[id] = true;
                len_shorter[id][0] = bytes.len() as u32;
                merged.push((id as u32, rank));
            }
        }
        let first_merged = merged.first().map_or(NONE, |m| m.0);
        if byte_ids.iter().any(|&id| id != NONE && id >= first_merged) || merged.windows(2).any(|w| w[1].1 <= w[0].1) {
            return None; // ids not in build order
        }
        for (id, &[left, right]) in split.iter().enumerate() {
            if left != NONE && !(built[left as usize] && built[right as usize] && left.max(right) < id as u32) {
                return None; // not built from tokens built before it
            }
        }
        // What finding each token's own merge freed (on this thread and the pool's) goes back to the OS before
        // the tables are built: the peak of preparing o200k_base 88 → 78 MB with the room above, r50k 46 → 42.
        drop(merged);
        crate::release_freed_memory();
        let canonical = CanonicalPairs::new(&split);
        // The trie of the built tokens, from their spellings in order (ids sorted by spelling: 4 bytes a key
        // rather than a 24-byte (spelling, id), o200k 4.8 → 0.8 MB at the peak of preparing it).
        let spell = |id: u32| tokens[id as usize].unwrap_or_default();
        let mut keys: Vec<u32> =
            (0..tokens.len() as u32).filter(|&id| built[id as usize] && tokens[id as usize].is_some()).collect();
        keys.sort_unstable_by(|&a, &b| spell(a).cmp(spell(b)).then(a.cmp(&b)));
        let trie = double_array(&keys, spell, &mut len_shorter);
        let mut class_index = vec![NO_CLASS; tokens.len()];
        let class_pairs = TokenClass::ALL.map(|class| {
            let members: Vec<u32> = (0..tokens.len() as u32)
                .filter(|&id| built[id as usize] && tokens[id as usize].is_some_and(|b| class.holds(b)))
                .take(MAX_CLASS_TOKENS)
                .collect();
            for (index, &id) in members.iter().enumerate() {
                class_index[id as usize] = (class as u16) << CLASS_SHIFT | index as u16;
            }
            ClassPairs::new(class, members)
        });
        Some(Backtracker { split, len_shorter, first_merged, canonical, trie, class_index, class_pairs })
    }

    /// How many pairs' checks the class tables hold.
    #[cfg(test)]
    pub fn class_pairs_known(&self) -> usize {
        self.class_pairs.iter().flat_map(|t| &t.bits).map(|w| w.load(Ordering::Relaxed).count_ones() as usize).sum()
    }

    /// Checks that every pair in a row filled whole (`fill_row`) has its walk's answer there, and counts them
    /// (panics on the first that has not).
    #[cfg(test)]
    pub fn check_filled_class_pairs(&self) -> usize {
        let mut checked = 0;
        for table in &self.class_pairs {
            for (i, &a) in table.members.iter().enumerate() {
                if table.rows_filled[i / 64].load(Ordering::Relaxed) >> (i % 64) & 1 == 0 {
                    continue;
                }
                for (j, &b) in table.members.iter().enumerate() {
                    let walked = self.meeting(a, b, false) == NONE;
                    assert_eq!(table.known(i as u16, j as u16), Some(walked), "pair ({a}, {b}) of a filled row");
                    checked += 1;
                }
            }
        }
        checked
    }

    /// A copy that checks every pair by walking the merge trees (no class tables).
    #[cfg(test)]
    pub fn without_class_pairs(&self) -> Backtracker {
        let mut copy = self.clone();
        copy.class_index.fill(NO_CLASS);
        copy
    }

    /// Answers the pair check of the member `a_index` of `table`'s class with every member on its right, once
    /// per row (a thread that finds another at it walks its own pair meanwhile): `meeting` for each pair, its
    /// lookups of merges made in a dense row per token on the left one's right edge, filled from the class's
    /// merges, rather than in `canonical`.
    #[cold]
    #[inline(never)]
    fn fill_row(&self, table: &ClassPairs, a_index: usize) {
        let bit = 1u64 << (a_index % 64);
        if table.rows_filled[a_index / 64].fetch_or(bit, Ordering::Relaxed) & bit != 0 {
            return;
        }
        let edges = table.edges.get_or_init(|| self.class_edges(table));
        let Some((xs, x_indices)) = self.class_edge(table, table.members[a_index], 1) else { return };
        let n = table.members.len();
        // rows[i * n + r]: the token that `xs[i]` and the member of index r make (NONE: none). At least two
        // rows: `passes_by_short_edges` reads the second whether or not `xs` has one (a byte's: all NONE).
        let mut rows = vec![NONE; x_indices.len().max(2) * n];
        for (i, &x) in x_indices.iter().enumerate() {
            for &(r, made) in &edges.merges[x as usize] {
                rows[i * n + r as usize] = made;
            }
        }
        // Per group of 64 members on the right: the passing pairs' bits, then the failing ones'.
        let mut words = vec![0u64; 2 * table.words_per_row];
        if let (Some(short_lefts), 1..=2) = (&edges.short_lefts, xs.len()) {
            let xs = [xs[0], xs[xs.len() - 1]];
            for (group, lefts) in short_lefts.chunks(64).enumerate() {
                let mut passing = 0u64;
                for (bit, left) in lefts.iter().enumerate() {
                    passing |= u64::from(passes_by_short_edges(self.first_merged, xs, &rows, n, left)) << bit;
                }
                words[2 * group] = passing;
                words[2 * group + 1] = !passing & (u64::MAX >> (64 - lefts.len()));
            }
        } else {
            for (b_index, left) in edges.lefts.iter().enumerate() {
                if let Some((ys, y_indices)) = left {
                    let passes = self.meeting_by_rows(&xs, &rows, n, ys, y_indices);
                    words[2 * (b_index / 64) + usize::from(!passes)] |= 1 << (b_index % 64);
                }
            }
        }
        let row_start = 2 * a_index * table.words_per_row;
        for (word, &found) in table.bits[row_start..row_start + words.len()].iter().zip(&words) {
            word.fetch_or(found, Ordering::Relaxed);
        }
    }

    /// `table`'s `ClassEdges`.
    fn class_edges(&self, table: &ClassPairs) -> ClassEdges {
        let mut merges: Vec<Vec<(u32, u32)>> = vec![Vec::new(); table.members.len()];
        for (id, &[left, right]) in self.split.iter().enumerate().filter(|(_, s)| s[0] != NONE) {
            let (l, r) = (table.index_of(&self.class_index, left), table.index_of(&self.class_index, right));
            if let (Some(l), Some(r)) = (l, r) {
                merges[l as usize].push((r, id as u32));
            }
        }
        let lefts: Vec<Option<(Vec<u32>, Vec<u32>)>> =
            table.members.iter().map(|&b| self.class_edge(table, b, 0)).collect();
        let short_lefts = lefts
            .iter()
            .map(|left| match left.as_ref()? {
                (ys, indices) if ys.len() <= 2 => {
                    let below = ys.len() - 1;
                    Some([ys[0], ys[below], indices[0], indices[below]])
                }
                _ => None,
            })
            .collect();
        ClassEdges { merges, lefts, short_lefts }
    }

    /// The edge of `top` on `side` (0: left), down to a byte: its tokens' ids and class indices in `table`
    /// (None if one is not in the class).
    fn class_edge(&self, table: &ClassPairs, top: u32, side: usize) -> Option<(Vec<u32>, Vec<u32>)> {
        let mut ids = vec![top];
        while ids[ids.len() - 1] >= self.first_merged {
            ids.push(self.split[ids[ids.len() - 1] as usize][side]);
        }
        let indices = ids.iter().map(|&id| table.index_of(&self.class_index, id)).collect::<Option<Vec<u32>>>()?;
        Some((ids, indices))
    }

    /// `meeting(xs[0], ys[0], false) == NONE`, from the two edges (`xs` down the left token's right edge,
    /// `ys` down the right one's left edge, each to a byte) and, for `xs[i]`, the tokens its merges make with
    /// each member on the right, by class index (`rows[i * n + index]`; `y_indices`: the class index of each of
    /// `ys`).
    #[inline]
    fn meeting_by_rows(&self, xs: &[u32], rows: &[u32], n: usize, ys: &[u32], y_indices: &[u32]) -> bool {
        let (mut i, mut j) = (0, 0);
        let (mut x_becomes, mut y_becomes) = (NONE, NONE);
        loop {
            let (x, y) = (xs[i], ys[j]);
            let merged = rows[i * n + y_indices[j] as usize];
            if merged < x_becomes && merged <= y_becomes && merged != NONE {
                return false;
            }
            if x > y {
                if x < self.first_merged {
                    return true;
                }
                x_becomes = x;
                i += 1;
            } else {
                if y < self.first_merged {
                    return true;
                }
                y_becomes = y;
                j += 1;
            }
        }
    }

    /// The pair check (`meeting`), from `table` when `TABLED` and both are tokens of its class (`FAILS` when
    /// it fails there): found once, remembered there — with the rest of `a`'s row when `fill_rows`.
    #[inline(always)]
    fn pair_check<const TABLED: bool>(
        &self,
        table: &ClassPairs,
        a: u32,
        b: u32,
        a_is_longest: bool,
        fill_rows: bool,
    ) -> u32 {
        if TABLED {
            // (Decoded here, not by `ClassPairs::index_of`: that form came out ~2–3 % slower on random digits'
            // pair checks, r50k, 4 pairs of processes.)
            let (a_class, b_class) = (self.class_index[a as usize], self.class_index[b as usize]);
            let in_class = |c: u16| c != NO_CLASS && c >> CLASS_SHIFT == table.class;
            if in_class(a_class) && in_class(b_class) {
                let index = |c: u16| c & ((1 << CLASS_SHIFT) - 1);
                let (left, right) = (index(a_class), index(b_class));
                return match table.known(left, right) {
                    Some(true) => NONE,
                    Some(false) => FAILS,
                    None => {
                        if fill_rows {
                            self.fill_row(table, left as usize);
                            if let Some(passes) = table.known(left, right) {
                                return if passes { NONE } else { FAILS };
                            }
                        }
                        let met = self.meeting(a, b, a_is_longest);
                        table.remember(left, right, met == NONE);
                        met
                    }
                };
            }
        }
        self.meeting(a, b, a_is_longest)
    }

    /// The buildable tokens `text[pos..]` starts with (`pos < text.len()`), as `[token, length]`, longest
    /// last: how many are in `found` (at most `KEEP`), and, when shorter ones were left out, the shortest kept
    /// (they are its prefixes, by `len_shorter`), else NONE.
    #[inline]
    fn matches<const KEEP: usize>(&self, text: &[u8], pos: usize, found: &mut [[u32; 2]; KEEP]) -> (usize, u32) {
        let mut node = 0usize;
        let (mut count, mut left_out) = (0, false);
        for (depth, &b) in text[pos..].iter().enumerate() {
            let at = self.trie[node].base as usize + b as usize;
            let cell = self.trie[at];
            if cell.parent != node as u32 {
                break;
            }
            node = at;
            if cell.token != NONE {
                if count == KEEP {
                    found.copy_within(1.., 0);
                    count -= 1;
                    left_out = true;
                }
                found[count] = [cell.token, depth as u32 + 1];
                count += 1;
            }
        }
        (count, if left_out { found[0][0] } else { NONE })
    }

    /// Whether BPE over the bytes of `a` then `b` gives `a`, `b` (both built tokens): NONE if so; if not, the
    /// token on `b`'s left edge whose pair with `a`'s side merges too early (see `fails_as_well`).
    /// `a_is_longest`: `a` is the longest built token at its position, so no built token spells `a` and one of
    /// `b`'s prefixes — and the pairs looked up here only ever make built tokens: those pairs need no lookup
    /// (about half of all lookups on random letters).
    #[inline(always)] // (out of line, the search paid for the calls: 10% more instructions on random letters)
    fn meeting(&self, a: u32, b: u32, a_is_longest: bool) -> u32 {
        let (mut x, mut y) = (a, b);
        // The tokens x and y become on their own sides (NONE: never, for a and b themselves).
        let (mut x_becomes, mut y_becomes) = (NONE, NONE);
        loop {
            let merged = if a_is_longest && x == a { NONE } else { self.canonical.get(x, y) };
            // x's own merge is to the left of (x, y), so it wins a tie; y's is to the right and loses one.
            if merged < x_becomes && merged <= y_becomes && merged != NONE {
                return y;
            }
            // Step back in time: undo the later of the two (ids are in build order; a tie is the same token on
            // both sides, built left first).
            if x > y {
                if x < self.first_merged {
                    return NONE; // both bytes
                }
                x_becomes = x;
                x = self.split[x as usize][1];
            } else {
                if y < self.first_merged {
                    return NONE;
                }
                y_becomes = y;
                y = self.split[y as usize][0];
            }
        }
    }

    /// Whether `shorter` (a candidate after `failed` at the same position) is known to fail the pair check
    /// with the same left token, without walking it, because `failed`'s walk failed at `met`.
    ///
    /// If `shorter` is on `failed`'s left edge and `met` is at or below it there, `shorter`'s walk visits the
    /// state where `failed`'s met its merge: below `shorter` both walks step through the same tokens on both
    /// sides with the same bounds, and at `shorter` itself `failed`'s walk is bounded by the token above it
    /// where `shorter`'s is unbounded. The same pair then merges first in `shorter`'s walk too. (10 MB of
    /// random digits, gpt2: 3.2 M of 14.6 M pair checks, 7.4 M of which fail, are answered so.)
    #[inline]
    fn fails_as_well(&self, failed: u32, met: u32, shorter: u32) -> bool {
        if met > shorter {
            return false;
        }
        let mut y = failed;
        while y > shorter && y >= self.first_merged {
            y = self.split[y as usize][0];
        }
        y == shorter
    }

    /// Appends the BPE encoding of `text` to `out` and returns true; false (`out` as it was) if `text` holds a
    /// byte without a token (the caller's merge then reports it or uses the unknown token) or if the search
    /// found no encoding, which the build's checks rule out.
    /// `dead` is scratch space.
    pub fn encode(&self, text: &[u8], dead: &mut Vec<u64>, out: &mut Vec<u32>) -> bool {
        self.encode_keeping::<FOUND>(text, dead, out)
    }

    /// `encode` with a search that keeps only the longest match of each trie walk (the others come from
    /// `len_shorter`), so that tests reach that path, which ordinary texts almost never need with `FOUND`.
    #[cfg(test)]
    pub fn encode_keeping_one_match(&self, text: &[u8], dead: &mut Vec<u64>, out: &mut Vec<u32>) -> bool {
        self.encode_keeping::<1>(text, dead, out)
    }

    /// `encode`, the search keeping `KEEP` of the tokens each trie walk finds.
    #[inline(always)]
    fn encode_keeping<const KEEP: usize>(&self, text: &[u8], dead: &mut Vec<u64>, out: &mut Vec<u32>) -> bool {
        // Two copies of the search: pieces that end with a digit (numbers, " 2024" under GPT-2's pattern) or a
        // letter check pairs of that class's tokens by its table; the others have no test for it in their loop
        // (in every pair check, it made random letters 3% slower).
        let class = text.last().and_then(|&last| TokenClass::for_last_byte(last));
        match class.map(|class| &self.class_pairs[class as usize]) {
            Some(table) if !table.members.is_empty() => {
                self.search::<true, KEEP>(text, table, table.fills_rows(text.len()), dead, out)
            }
            _ => self.search::<false, KEEP>(text, &NO_CLASS_PAIRS, false, dead, out),
        }
    }

    /// `encode`, with the pair checks between tokens of `table`'s class from it if `TABLED`, keeping `KEEP`
    /// of the tokens each trie walk finds.
    #[inline(never)]
    fn search<const TABLED: bool, const KEEP: usize>(
        &self,
        text: &[u8],
        table: &ClassPairs,
        fill_rows: bool,
        dead: &mut Vec<u64>,
        out: &mut Vec<u32>,
    ) -> bool {
        let n = text.len();
        let start = out.len();
        if n == 0 {
            return true;
        }
        dead.clear();
        dead.resize(n / 64 + 1, 0);
        // At most a token per byte. Reserved at once: growing by doubling copied and page-faulted the ids of a
        // 10 MB piece twice over; pages reserved but not written cost nothing.
        out.reserve(n);
        let is_dead = |dead: &Vec<u64>, p: usize| dead[p / 64] >> (p % 64) & 1 != 0;
        let mut pos = 0;
        // The candidates at `pos`: those the trie walk found (`found[..count]`, tried from the end, so their
        // lengths and order need no `len_shorter` lookup), then the longest prefix of `chain`, of that one, ...
        let mut found = [[0u32; 2]; KEEP];
        let (mut count, mut chain) = self.matches(text, 0, &mut found);
        if count == 0 {
            return false; // a byte without a token
        }
        let mut longest = found[count - 1][0];
        // Whether the last token pushed was the longest match at its position.
        let mut last_is_longest = false;
        loop {
            // The last candidate here that failed the pair check, and the token its check failed at.
            let (mut failed, mut met) = (NONE, NONE);
            let fitting = loop {
                let [candidate, len] = if count > 0 {
                    count -= 1;
                    found[count]
                } else {
                    let shorter = if chain == NONE { NONE } else { self.len_shorter[chain as usize][1] };
                    if shorter == NONE {
                        break None;
                    }
                    chain = shorter;
                    [shorter, self.len_shorter[shorter as usize][0]]
                };
                let end = pos + len as usize;
                let fits = (end == n || !is_dead(dead, end))
                    && (out.len() == start
                        || (!(failed != NONE && self.fails_as_well(failed, met, candidate)) && {
                            let at = self.pair_check::<TABLED>(
                                table,
                                out[out.len() - 1],
                                candidate,
                                last_is_longest,
                                fill_rows,
                            );
                            if at != NONE {
                                (failed, met) = (candidate, at);
                            }
                            at == NONE
                        }));
                if fits {
                    break Some((candidate, end));
                }
            };
            if let Some((candidate, end)) = fitting {
                out.push(candidate);
                last_is_longest = candidate == longest;
                pos = end;
                if pos == n {
                    return true;
                }
                (count, chain) = self.matches(text, pos, &mut found);
                if count == 0 {
                    out.truncate(start);
                    return false;
                }
                longest = found[count - 1][0];
            } else {
                // No token fits here after the encoding of text[..pos]: a dead end; try the previous token shorter.
                dead[pos / 64] |= 1 << (pos % 64);
                if out.len() == start {
                    return false;
                }
                let last = out.pop().expect("not empty");
                pos -= self.len_shorter[last as usize][0] as usize;
                (count, chain) = (0, last);
                longest = NONE; // the candidates here now are shorter ones
                last_is_longest = false; // (not known for the token now last)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: scan every pair, merge the lowest-ranked (leftmost among equals), repeat.
    fn own_last_merge_by_scanning(
        bytes: &[u8],
        byte_ids: &[u32; 256],
        pairs: &PairTable,
    ) -> Option<(u32, u32, u32, u32)> {
        let mut symbols: Vec<u32> = bytes.iter().map(|&b| byte_ids[b as usize]).collect();
        let mut last = None;
        while symbols.len() > 1 {
            let (mut best, mut at) = (u64::MAX, 0);
            for (i, w) in symbols.windows(2).enumerate() {
                let v = pairs.get(w[0], w[1]);
                if v >> 32 != NONE as u64 && v < best {
                    (best, at) = (v, i);
                }
            }
            if best == u64::MAX {
                return None;
            }
            last = Some((symbols[at], symbols[at + 1], (best >> 32) as u32, best as u32));
            symbols[at] = best as u32;
            symbols.remove(at + 1);
        }
        last
    }

    fn byte_ids() -> [u32; 256] {
        std::array::from_fn(|b| b as u32)
    }

    #[test]
    fn own_last_merge_equals_the_scan_on_random_vocabularies() {
        let mut x = 9u64;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..200 {
            // Random pairs over a, b, c and the tokens they make, ranked at random (merges may make pairs of
            // lower rank than their own).
            let mut entries = Vec::new();
            for result in 256..256 + 4 + next(30) as u32 {
                let pick = |r: u64| if r < 3 { b'a' as u32 + r as u32 } else { 256 + (r as u32 - 3) };
                let (left, right) = (pick(next(3 + (result - 256) as u64)), pick(next(3 + (result - 256) as u64)));
                entries.push((left, right, next(50) << 32 | result as u64));
            }
            let pairs = PairTable::new(entries);
            for len in [2usize, 3, 7, 40, 300] {
                let text: Vec<u8> = (0..len).map(|_| b"abc"[next(3) as usize]).collect();
                assert_eq!(
                    own_last_merge(&text, &byte_ids(), &|l, r| pairs.get(l, r), &mut Vec::new()),
                    own_last_merge_by_scanning(&text, &byte_ids(), &pairs),
                    "{}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
    }

    #[test]
    fn own_last_merge_of_a_token_of_megabytes_takes_linear_time() {
        // "a" × 2^k built from two halves, k = 1..=20: the last merge of "a" × 2^20 (1 MB) joins its halves.
        // Scanning every pair per merge was ~3·10¹¹ steps here (hours); this is seconds in a debug build.
        let pairs = PairTable::new((1..=20u32).map(|k| {
            let half = if k == 1 { b'a' as u32 } else { 255 + k - 1 };
            (half, half, (k as u64) << 32 | (255 + k) as u64)
        }));
        let started = std::time::Instant::now();
        let text = vec![b'a'; 1 << 20];
        let last = own_last_merge(&text, &byte_ids(), &|l, r| pairs.get(l, r), &mut Vec::new());
        assert_eq!(last, Some((255 + 19, 255 + 19, 20, 255 + 20)));
        assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    }
}
