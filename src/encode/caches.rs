//! The tables that remember encoded pieces that are not whole tokens — the seen table (one per encoder, shared by
//! its threads: `SeenTables`) and each thread's `Scratch` (its view of the seen table, the cache of longer
//! pieces, the merges' buffers) — and the piece keys they and the whole-token table (`whole.rs`) use.
//!
//! Performance notes:
//! - A key is a piece's length and two 8-byte words: up to 8 bytes, the bytes zero-padded (so one masked
//!   8-byte load of the text gives it); longer, its first and last 8 bytes. They identify any piece of up to 16
//!   bytes — most pieces — so a lookup is two or three integer compares, no `memcmp`, no pointer to a boxed key
//!   (perf: those were 10% and 14% of encoding). The hash is a folded multiply of the same words.
//! - A piece of 2 to 16 bytes is looked up in the whole-token table first (shared, built at load); the seen
//!   table, shared by the threads that encode with the encoder, holds only the pieces that merged into several
//!   tokens (up to 64K per thread; 32-byte entries, open addressing, a tag byte per slot read first, so that a
//!   piece it lacks costs no slot): rare words repeat.
//! - Until this change a per-thread direct-mapped front table of recent pieces (32K slots, 1 MB) came first, and
//!   every new piece then went through the seen table and a `hashbrown` whole-token table and was copied into
//!   both small tables. On text the process had not seen, 17.7% of the pieces missed it (2 MB of English, r50k).
//!   Without it, the front table's cache lines are free for the whole-token table's: interleaved runs on fresh
//!   English (`examples/encode_fresh`, 4 MB slices, medians of 10 alternated runs, shared machine): r50k cold
//!   149 → 189 MB/s, steady 195 → 221; cl100k 104 → 127, 139 → 147; o200k 99 → 122, 140 → 138.
//! - Pieces that make more than three ids (gpt2's indentation: a token per space) keep theirs in the seen
//!   table's overflow (20 MB of Python code, gpt2: +6% when it came in).
//! - Tried and left out: handing pieces to the encoder 16 behind the splitter, to prefetch their table lines
//!   (o200k English +10%, but gpt2 on Python code −25%, the rest even or worse); prefetching each block's
//!   pieces' whole-token slots before encoding them (the block scanner knows them all at once): r50k steady
//!   182 → 153 MB/s, the keys computed twice; prefetching the ints while building Python lists.
//! - Longer pieces that needed merging are remembered per thread (a bounded cache).
//! - Ahead of a batch or a long text the seen table's next growth goes straight to what the text's length calls
//!   for (`SeenTables::expect`) rather than through five doublings, each copying every entry into new memory:
//!   10 MB one-thread batches of fresh English +4 to +6 % cold (4–5 pairs per encoding), steady the same.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, TryLockError};

use rustc_hash::FxHashMap;

use super::huge_pages::{HugeSlice, Pages, ZeroedU32s};
use super::merge::Symbol;

/// A piece's length and two 8-byte words: its first and last 8 bytes (overlapping when shorter than 16),
/// or for pieces under 8 bytes a packing of them. Equal keys mean equal pieces up to 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) struct Key {
    pub(super) first: u64,
    pub(super) last: u64,
    pub(super) len: u64,
}

#[inline]
fn load8(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[inline]
fn load4(b: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")) as u64
}

/// `SHORT_MASKS[n]`: the low `n` bytes of a word (`n` up to 8; the rest, never asked for, all of it).
static SHORT_MASKS: [u64; 16] = {
    let mut masks = [u64::MAX; 16];
    let mut n = 0;
    while n < 8 {
        masks[n] = (1 << (8 * n)) - 1;
        n += 1;
    }
    masks
};

impl Key {
    /// Up to 8 bytes: the bytes themselves, zero-padded (little-endian), so that a piece's key can also come from
    /// one 8-byte load of the text it is in (`of_text`); longer: the first and the last 8 bytes.
    #[inline]
    pub(super) fn of(piece: &[u8]) -> Key {
        let n = piece.len();
        let (first, last) = if n > 8 {
            (load8(piece, 0), load8(piece, n - 8))
        } else if n >= 4 {
            // Two 4-byte loads, the second moved to its place (overlapping bytes are equal, so ORing is exact).
            (load4(piece, 0) | (load4(piece, n - 4) << (8 * (n - 4))), 0)
        } else if n > 0 {
            (piece[0] as u64 | (piece[n / 2] as u64) << (8 * (n / 2)) | (piece[n - 1] as u64) << (8 * (n - 1)), 0)
        } else {
            (0, 0)
        };
        Key { first, last, len: n as u64 }
    }

    /// `Key::of(&text[start..end])` for a piece of 1 to 8 bytes with 8 bytes of `text` from `start`: one load,
    /// masked to the piece's length.
    #[inline(always)]
    pub(super) fn of_short_in(text: &[u8], start: usize, len: usize) -> Key {
        debug_assert!((1..=8).contains(&len) && start + 8 <= text.len());
        Key::short(load8(text, start), len)
    }

    /// The key of a piece of 1 to 8 bytes that are the first `len` of `word`'s (little-endian).
    #[inline(always)]
    fn short(word: u64, len: usize) -> Key {
        debug_assert!((1..=8).contains(&len));
        // A mask from a table rather than shifts by `64 - 8 * len`: two instructions per piece, not five.
        Key { first: word & SHORT_MASKS[len & 15], last: 0, len: len as u64 }
    }

    /// `of_short_in` without the check that 8 bytes of the text are there from `start`.
    ///
    /// # Safety
    /// `start + 8 <= text.len()`.
    #[inline(always)]
    pub(super) unsafe fn of_short_at(text: &[u8], start: usize, len: usize) -> Key {
        debug_assert!((1..=8).contains(&len) && start + 8 <= text.len());
        // SAFETY: the caller guarantees the 8 bytes; an unaligned read of them.
        let word = u64::from_le(unsafe { text.as_ptr().add(start).cast::<u64>().read_unaligned() });
        Key::short(word, len)
    }

    /// A folded multiply (the 128-bit product's halves xored): every bit of the key reaches every bit of the
    /// hash. The seen table and the whole-token table of 9–16-byte pieces start probing at its bits from 32 up;
    /// pieces of up to 8 bytes find their whole-token slot by a cheaper start of their own (`whole.rs`,
    /// `short_start`). (`h ^ (h >> 29)` of a 64-bit product once left the top 20 bits of the key out of the low
    /// bits a table then used: " then", " they" and " them" shared a slot.)
    #[inline]
    pub(super) fn hash(&self) -> u64 {
        let x = self.first ^ self.last.rotate_left(29) ^ self.len.rotate_left(53);
        let product = x as u128 * 0x9E37_79B9_7F4A_7C15;
        product as u64 ^ (product >> 64) as u64
    }
}

/// Longest piece the cache remembers (words repeat; a 10 MB run of one letter need not stay in memory).
pub(super) const CACHED_PIECE_LIMIT: usize = 256;
/// About how many bytes a thread's cache holds before it starts afresh (so at most ~12 K pieces: an entry is at
/// least 85 bytes with `CACHE_ENTRY_OVERHEAD`). Bounded by count alone, it held 65 536
/// pieces of up to 256 bytes and their ids: on multilingual text, whose unspaced runs are long pieces that
/// rarely come back, several MB that seldom answered. With 1 MB, one call per document of multilingual text
/// (old and new alternated): peak RSS r50k 129 → 122 MB, cl100k 133–135 → 127–129, fresh text as fast or
/// faster (cl100k cold 21–26 → 32–33 MB/s); Python source, whose long pieces (indentation) do come back, the
/// same speed and peak.
pub(super) const CACHE_BYTES: usize = 1 << 20;
/// What an entry of the cache holds beyond its piece and ids, about: its slot (two boxed slices and a control
/// byte) and the two allocations' rounding.
pub(super) const CACHE_ENTRY_OVERHEAD: usize = 64;

/// Reusable buffers, and the caches (valid for the encoder `serial` names).
#[derive(Default)]
pub struct Scratch {
    pub(super) symbols: Vec<Symbol>,
    pub(super) heap: BinaryHeap<Reverse<(u32, u32)>>,
    pub(super) pending: Vec<Reverse<(u32, u32)>>,
    /// The backtracker's dead ends, one bit per position.
    pub(super) dead: Vec<u64>,
    pub(super) serial: u64,
    /// This thread's view of its encoder's seen table: every piece of 2 to 16 bytes met that is not a whole
    /// token, and its ids, unless pieces pass it (`Seen::look_up`).
    pub(super) seen: Seen,
    /// Longer pieces that needed merging.
    pub(super) cache: FxHashMap<Box<[u8]>, Box<[u32]>>,
    /// About how many bytes `cache` holds (see `CACHE_ENTRY_OVERHEAD`).
    pub(super) cache_bytes: usize,
    /// Where the last piece merged ended (its address in its text), and how many merged pieces in a row began
    /// close after the one before: to tell sparse merging from dense (see `PieceEncoder::merge_bytes`).
    pub(super) merged_until: usize,
    pub(super) merged_close: u32,
    /// Where the last piece of more than 16 bytes that was merged ended (see `PieceEncoder::merge_bytes`).
    pub(super) long_merged_until: usize,
    /// The last pieces of up to 8 bytes that were no whole token, and their ids (see `Recent`).
    pub(super) recent: Recent,
}

/// Most ids a piece held by `Recent` has: one per byte of up to 8. The block loop writes them as one array of
/// this many (`tokenizer.rs`, `pieces_before_the_end`), with room for that many more ids than bytes.
pub const RECENT_IDS: usize = 8;

/// Pieces `Recent` holds, one per slot (a power of two): 32 KB a thread. 256 or 1 024 gave the same within
/// the machine's noise (~4 KB English documents, r50k; Python source, o200k; 4 alternated pairs each).
const RECENT_SLOTS: usize = 1 << 9;

/// A piece of up to 8 bytes that is no whole token (its bytes zero-padded, as `Key::short`; `len` 0: empty) and
/// the ids it encodes to, one cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
pub(super) struct RecentSlot {
    bytes: u64,
    len: u32,
    count: u32,
    ids: [u32; RECENT_IDS],
}

/// The last pieces of up to 8 bytes that were no whole token, with their ids, one per slot (by their bytes, a
/// newer one taking an older one's place): one found here is encoded in the block loop itself, without the
/// calls, the hash and the two loads of the seen table (and the merge of three or four bytes).
///
/// Performance notes: such a piece comes back soon more often than not: of the pieces of 2 to 8 bytes that are
/// no token, counted with tiktoken's splits on the benchmark's steady slices (the same found in 512 slots by a
/// multiply of their bytes), English 45 % (r50k) and 32 % (o200k), Python source 83 % (r50k: indentation,
/// `"\n" + 7 spaces` alone 3.5 % of its pieces, eight ids) and 68 % (o200k). A find in the seen table takes a
/// mispredicted branch, two calls and its own hash and tag before the slot; the slot of a piece met lately is
/// in cache either way. ~4 KB documents, one call each, alternated processes against the build before, medians
/// of the pairs' ratios (cold / steady; two sets of pairs where two are given): Python source r50k +6 % / +6 %
/// and +7 % / +9 % (5 and 4 pairs), o200k +2 % / −1 % and +2 % / +13 % (the machine swinging 0.8–1.3× from one
/// process to the next); English r50k +2 % / +3 % and +4 % / +3 % (5 and 4), o200k +3 % / +2 % (5), cl100k
/// −4 % / +1 % and +2 % / −4 % (5 each); 10 MB batches on one thread, cl100k +9 % / +5.5 % (4). The ids first
/// copied by `copy_nonoverlapping` of their count called `memmove` (3 % of the Python source pass): one store
/// of `RECENT_IDS` instead.
///
/// Made at the first piece kept (a `Scratch` made for one call needs none), dropped when the encoder changes.
#[derive(Default)]
pub(super) struct Recent(Box<[RecentSlot]>);

impl Recent {
    /// The slot of a piece with this key: the top bits of its bytes times an odd constant.
    #[inline(always)]
    fn slot_of(key: Key) -> usize {
        (key.first.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> (64 - RECENT_SLOTS.trailing_zeros())) as usize
    }

    /// The ids of the piece with this key (of up to 8 bytes), if held: the array's first `count`.
    #[inline(always)]
    pub(super) fn get(&self, key: Key) -> Option<(&[u32; RECENT_IDS], usize)> {
        let slot = self.0.get(Recent::slot_of(key))?;
        (slot.bytes == key.first && slot.len as u64 == key.len).then_some((&slot.ids, slot.count as usize))
    }

    /// Holds `ids`, what the piece with this key (of up to 8 bytes) encodes to — if they are at most one per byte
    /// of it, which the block loop's room for them counts on (every vocabulary's pieces so far; a piece that made
    /// more is simply not held).
    #[inline]
    pub(super) fn put(&mut self, key: Key, ids: &[u32]) {
        debug_assert!(key.len <= RECENT_IDS as u64);
        if ids.len() as u64 > key.len {
            return;
        }
        if self.0.is_empty() {
            self.0 = vec![RecentSlot::default(); RECENT_SLOTS].into_boxed_slice();
        }
        let slot = &mut self.0[Recent::slot_of(key)];
        (slot.bytes, slot.len, slot.count) = (key.first, key.len as u32, ids.len() as u32);
        slot.ids[..ids.len()].copy_from_slice(ids);
    }

    /// Holds nothing (and no memory).
    pub(super) fn clear(&mut self) {
        self.0 = Box::default();
    }
}

/// A piece of up to 16 bytes (identified by its key: first and last 8 bytes, length) and the ids it encodes
/// to: up to `FRONT_IDS` of them here, more in the seen table's `overflow` (`ids[0]` is where they start).
/// 32 bytes, aligned, so that a lookup touches one cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub(super) struct Entry {
    first: u64,
    last: u64,
    pub(super) ids: [u32; FRONT_IDS],
    /// The piece's length (0: empty slot).
    len: u16,
    /// How many ids it makes.
    pub(super) n: u16,
}

impl Entry {
    /// The entry of the piece `key` that makes the ids `made`: held here if `FRONT_IDS` or fewer, else their
    /// place in the overflow (`overflow_at`).
    fn new(key: Key, made: &[u32], overflow_at: usize) -> Entry {
        let mut ids = [0; FRONT_IDS];
        if made.len() <= FRONT_IDS {
            ids[..made.len()].copy_from_slice(made);
        } else {
            ids[0] = overflow_at as u32;
        }
        Entry { first: key.first, last: key.last, ids, len: key.len as u16, n: made.len() as u16 }
    }

    #[inline(always)]
    pub(super) fn holds(&self, key: Key) -> bool {
        self.first == key.first && self.last == key.last && self.len as u64 == key.len
    }
}

/// Most ids an entry holds itself: a rare word is usually two or three tokens.
const FRONT_IDS: usize = 3;

/// Slots the seen table starts with, and most it grows to per thread that uses it (4 MB), up to
/// `SEEN_MOST_USERS` threads; it starts afresh when that is half full. 20 MB of English documents never fill it
/// (one thread); multilingual text did, at 8 MB (2^18 slots), which with the 4 MB table it grew from took 9–10 MB
/// more at the peak than now, for no speed (~4 KB documents, 4 MB after 4 MB, alternated: r50k 39–46 → 44–54
/// MB/s, o200k 27–32 → 30–33). At 2 MB, English's steady documents were ~8 % slower (r50k 191–192 → 172–180
/// MB/s).
const SEEN_FIRST_SLOTS: usize = 1 << 12;
const SEEN_MOST_SLOTS: usize = 1 << 17;
const SEEN_MOST_USERS: usize = 4;
/// Bytes of text per slot of the table grown ahead of a batch or a long text (`SeenTables::expect`), rounded
/// down to a power of two. Fresh English keeps fewer pieces per byte the more there is (r50k, distinct pieces
/// of 5–16 bytes that are no token: 12 K in its first 2 MB, 34 K in 10 MB, 55 K in 20 MB), and a table holds at
/// most half its slots: 10 MB of text gets 2^17 slots (4 MB), what the table grows to on its way through such
/// text; 2 MB gets 2^14 and 4 MB 2^15, from which English of those sizes doubles it once more (rather low than
/// high: a text that keeps nothing there, random digits, holds the table all the same); 20 MB gets 2^18 where
/// two threads use the table (one thread's most is 2^17).
const SEEN_BYTES_PER_SLOT: usize = 64;

/// Slots a thread reserves at a time in its encoder's seen table (see `SeenTable::reserve`): one shared count
/// written per 32 pieces kept, not per piece.
const SEEN_RESERVE: usize = 32;
/// The overflow's room, in ids per slot: enough for every entry the table may hold (half its slots) to make 16
/// ids (one per byte), so it never fills. Zeroed memory the system gives only as it is written: ids of entries
/// that make more than `FRONT_IDS`, as many as a growing vector of them held.
const SEEN_OVERFLOW_PER_SLOT: usize = 8;
/// The tag of a slot a thread has claimed and is writing (a published slot's tag is odd, see `tag_of`).
const CLAIMED: u8 = 2;

/// Pieces looked up in a window of the seen table's finds...
pub(super) const SEEN_WINDOW: u32 = 4096;
/// ...and fewer found than this in one (base64, hex, random text: pieces that rarely come back)... Found per
/// window, measured: English, multilingual text and Python source 28–97 % from the first window on (o200k's
/// multilingual lowest); base64 2–13 % (r50k, cl100k), 7–25 % (o200k); o200k's random letters 6–20 %. At 1/8
/// rather than 1/32, 4 MB of base64 (cl100k) 204–213 → 180–190 ms, random letters (o200k) 342–346 → 311–330.
/// (Measured while pieces of 2 and 3 bytes still went there: of random text, most of the finds. They no longer
/// do (`PieceEncoder::merge_two`, `merge_three`); the longer pieces of random letters and base64 come back 1–2 %
/// in their first megabyte.)
const SEEN_FEW: u32 = SEEN_WINDOW / 8;
/// ...let this many pieces pass the table (neither looked up nor kept) before it is tried again. Each piece
/// kept was a miss in a table of up to 4 MB and a write there; and the table, grown to hold what never comes
/// back, was memory the process had to be given (page faults: a fifth of the first call on 4 MB of base64).
const SEEN_PASS: u32 = 1 << 16;
/// Each window in a row that finds too few doubles the pass, up to this many times: on random letters (o200k)
/// and base64 a window came every 16 passes, and its 4 096 lookups — misses, writes, the table grown to 2–4 MB
/// — were ~6 % of the pieces that reach the table (counted) and more of their time. 2 MB calls, median of 4,
/// alternated processes (ms): o200k random letters 59–68 → 55–60, cl100k base64 50.8–60 → 48–52, r50k base64
/// 42–45 → 41–42, o200k base64 and cl100k random letters the same; English, Python source and multilingual
/// documents the same.
const SEEN_PASS_DOUBLINGS: u32 = 4;
/// While pieces pass, the hashes of the last ones are kept in this many slots (`Seen::pass`), so that a
/// window of them that come back (`SEEN_FEW` or more found there) ends the pass: the text changed (ordinary
/// text after base64, whose words do come back), and it does not pass the table for up to a million pieces.
/// Windows of passing pieces, counted: base64 and random letters (r50k, cl100k, o200k) 0–1 found of 4 096,
/// English after them 770–1 970 in its first window. 32 KB a thread, only once pieces pass.
///
/// It replaced a run of 1 024 pieces merged far apart (not in a run of close merges), which English met only
/// when it merged few pieces: while pieces pass, every one that is no token is merged, and 1–6 % of English's
/// came close after the one before, so runs of 1 024 were rare. English after 4 MB of base64 (cl100k) passed
/// the table for ~100 K of its pieces, ~7 MB: 10 MB of it took 48–50 ms instead of 35–40 (one process each,
/// alternated, three pairs: 48.4 / 48.4 / 46.2 → 35.7 / 38.2 / 36.7 ms); the worst cases' own calls the same
/// (4 MB of base64 and random letters, three pairs each).
const CAME_BACK_SLOTS: usize = 1 << 12;

/// An open-addressing table (linear probing) of pieces of up to 16 bytes: where a piece that is no token is
/// found in one or two cache lines, instead of the whole-token table and the byte-keyed cache (together ~4
/// cache misses: their control bytes, boxed keys and values). One per encoder, shared by the threads that
/// encode with it (`SeenTables`), so that each finds what the others merged: a batch's threads each see part of
/// the text, and a table per thread learned from that part only (two threads' encoding took 18–35 % more CPU
/// than one thread's for the same 10 MB). Shared, 10 MB batches of ~4 KB English documents on two threads,
/// alternated processes, medians: steady +20 % wall (CPU +13 %) r50k (6 pairs), +23 % (+21 %) cl100k, +8 %
/// (+9 %) o200k (5 pairs each); cold −8 % to +10 % wall, CPU −6 % to +2 %; 60 MB (six such batches in a row)
/// r50k +12 to +33 % (3 pairs). One thread's documents and the worst cases' first calls: the same.
///
/// Filled without locks: a thread reserves room (`reserve`, a count of slots kept at most half of them), claims
/// an empty slot by its tag (0 → `CLAIMED`), writes the entry and then publishes the slot's tag (release);
/// readers read a slot only after reading its published tag (acquire), and a published slot is never written
/// again — the table grows, or starts afresh, by being replaced (`SeenTables::replace`; emptied where it is
/// when no other thread holds it). A reader that meets a
/// slot being written passes it: at worst it merges the piece itself and keeps it a second time.
///
/// Its slots are on 2 MB pages once they fill one (2 and 4 MB: English grows the table there within its first
/// few MB). perf annotate: over half of the time of `encode_merged` waited on the first slot's load, and in a
/// virtual machine a TLB miss walks two sets of page tables. ~4 KB English documents, alternated processes,
/// 7 pairs (cold / steady MB/s): r50k 183–192 / 236–246 → 191–204 / 237–250 (cold faster in every pair,
/// steady −2 to +6 %), o200k 171–177 / 219–223 → 168–187 / 212–226, cl100k +4–6 % cold; Python source (o200k)
/// +1–5 %; random letters, base64 and the peak RSS the same (every slot is written when the table grows, so
/// every page was resident already). The backtracker's trie (5 MB for o200k) on 2 MB pages gave nothing the
/// machine's noise did not hide (random letters, base64, multilingual text), and is left as it was.
///
/// Each slot has a tag beside it, in an array of its own (a byte per slot, 128 KB a 4 MB table): most lookups
/// of a new piece, which miss, read only tags — an array 32 times smaller than the slots, mostly in cache —
/// rather than wait for a slot of up to 4 MB; a find reads the tag and then its slot. ~4 KB English documents,
/// alternated processes, 4 pairs per encoding (medians): r50k cold +1.4 %, steady +2 %; cl100k +4 % / +3.4 %;
/// o200k +3.7 % / +2.4 %; Python source (cl100k) +1.5 % / +1.2 %, multilingual (r50k) +1.7 % / +2.3 %; the
/// worst cases' first calls (4 MB of random letters and base64) within ±2.5 %.
pub(super) struct SeenTable {
    /// Written only through `shared_ptr`, by the thread that claimed the slot; read only once published.
    slots: HugeSlice<Entry>,
    /// A byte of each slot's piece's hash, odd (0: the slot is empty; `CLAIMED`: being written), read before
    /// the slot: a piece the table does not hold is told by these bytes alone, without loading a slot.
    tags: Box<[AtomicU8]>,
    /// Slots reserved by the threads that fill the table (more than half: it is as full as it may be).
    reserved: AtomicUsize,
    /// The ids of the entries that make more than `FRONT_IDS` (indentation, in gpt2: each space a token),
    /// published with their entry's tag; and how many of them are taken (more than its length: full).
    overflow: ZeroedU32s,
    overflow_used: AtomicUsize,
}

/// A slot's tag: 8 bits of the hash that the slot's index does not use (those are from bit 32 up), odd.
#[inline(always)]
fn tag_of(hash: u64) -> u8 {
    (hash >> 24) as u8 | 1
}

impl SeenTable {
    /// An empty table of `n` slots (a power of two, or none).
    fn with_slots(n: usize) -> SeenTable {
        SeenTable {
            slots: HugeSlice::filled(n, Entry::default(), Pages::Huge),
            // (Written at once, as the slots are: a random insert soon touches every page of either.)
            tags: (0..n).map(|_| AtomicU8::new(0)).collect(),
            reserved: AtomicUsize::new(0),
            overflow: ZeroedU32s::new(n * SEEN_OVERFLOW_PER_SLOT),
            overflow_used: AtomicUsize::new(0),
        }
    }

    fn slot_count(&self) -> usize {
        self.tags.len()
    }

    /// The slot probing starts at: the hash's bits from 32 up.
    #[inline(always)]
    fn start(&self, hash: u64) -> usize {
        (hash >> 32) as usize & (self.slot_count() - 1)
    }

    /// The published entry in slot `at`, if any.
    #[inline(always)]
    fn published(&self, at: usize, tag: u8) -> Option<Entry> {
        // SAFETY: `at` is a slot; its tag, odd, was read with acquire ordering after the writer's release store
        // of it, and a published slot is never written again.
        (tag & 1 == 1).then(|| unsafe { self.slots.shared_ptr().add(at).read() })
    }

    /// The slot of the piece's published entry, if the table holds it.
    #[inline(always)]
    fn find(&self, key: Key, hash: u64) -> Option<usize> {
        if self.slot_count() == 0 {
            return None;
        }
        let mask = self.slot_count() - 1;
        let tag = tag_of(hash); // odd: only a published slot's tag equals it
        let mut at = self.start(hash);
        loop {
            // SAFETY: `at` is masked to the slots.
            let t = unsafe { self.tags.get_unchecked(at) }.load(Ordering::Acquire);
            if t == tag {
                // SAFETY: the slot is published (its tag, odd, was read with acquire ordering after the writer's
                // release store of it) and never written again.
                if unsafe { &*self.slots.shared_ptr().add(at) }.holds(key) {
                    return Some(at);
                }
            } else if t == 0 {
                return None;
            }
            at = (at + 1) & mask;
        }
    }

    /// Reserves `n` slots; false if the table is as full as it may be (half its slots).
    fn reserve(&self, n: usize) -> bool {
        self.reserved.fetch_add(n, Ordering::Relaxed) + n <= self.slot_count() / 2
    }

    /// The entry of a piece of up to 16 bytes and the ids it makes (more than `FRONT_IDS` go to the overflow);
    /// None if the overflow has no room for them (only if more entries were made than the table may hold).
    fn entry(&self, key: Key, made: &[u32]) -> Option<Entry> {
        if made.len() <= FRONT_IDS {
            return Some(Entry::new(key, made, 0));
        }
        let at = self.overflow_used.fetch_add(made.len(), Ordering::Relaxed);
        self.write_overflow(at, made)?;
        Some(Entry::new(key, made, at))
    }

    /// Writes ids into the overflow from `at`; None if they do not fit.
    fn write_overflow(&self, at: usize, made: &[u32]) -> Option<()> {
        let room = self.overflow.atomics().get(at..at.checked_add(made.len())?)?;
        for (cell, &id) in room.iter().zip(made) {
            cell.store(id, Ordering::Relaxed);
        }
        Some(())
    }

    /// `entry` and `place` for a table no other thread can reach yet (`grown` filling the next one): plain
    /// writes instead of their atomics. Claiming each slot by compare-exchange was ~40 % of a growth's samples
    /// (perf: one call on 10 MB of English, multilingual documents). False if the overflow had no room.
    fn keep_owned(&mut self, key: Key, made: &[u32]) -> bool {
        let entry = if made.len() <= FRONT_IDS {
            Entry::new(key, made, 0)
        } else {
            let at = *self.overflow_used.get_mut();
            if self.write_overflow(at, made).is_none() {
                return false;
            }
            *self.overflow_used.get_mut() = at + made.len();
            Entry::new(key, made, at)
        };
        let hash = key.hash();
        let mask = self.slot_count() - 1;
        let mut at = self.start(hash);
        while *self.tags[at].get_mut() != 0 {
            at = (at + 1) & mask;
        }
        self.slots[at] = entry;
        *self.tags[at].get_mut() = tag_of(hash);
        true
    }

    /// Writes `entry` into an empty slot and publishes it; the caller holds a reservation (so one is empty).
    fn place(&self, entry: Entry, hash: u64) {
        let mask = self.slot_count() - 1;
        let mut at = self.start(hash);
        loop {
            let tag = &self.tags[at];
            if tag.load(Ordering::Relaxed) == 0
                && tag.compare_exchange(0, CLAIMED, Ordering::Relaxed, Ordering::Relaxed).is_ok()
            {
                // SAFETY: `at` is a slot this thread alone claimed; no one reads it before the store below.
                unsafe { self.slots.shared_ptr().add(at).write(entry) };
                tag.store(tag_of(hash), Ordering::Release);
                return;
            }
            at = (at + 1) & mask;
        }
    }

    /// Appends the ids of the entry `find` found in slot `at` to `out`.
    #[inline(always)]
    fn extend_ids_at(&self, at: usize, out: &mut Vec<u32>) {
        debug_assert!(self.tags[at].load(Ordering::Relaxed) & 1 == 1, "a published slot");
        // SAFETY: as in `find`, which found the slot.
        self.extend_ids(unsafe { &*self.slots.shared_ptr().add(at) }, out);
    }

    /// Appends an entry's ids (`entry` from this table) to `out`.
    ///
    /// The ids an entry holds are written as all `FRONT_IDS` of them, those past its count beyond the list's
    /// new length, when the list has the room: `extend_from_slice` of a count known only here was a call to
    /// `memcpy` on every find. Documents of 1 000 pieces of 5–8 bytes that are no token, all in the table
    /// (r50k): 53–57 → 62–68 M pieces/s; ~4 KB documents, alternated processes (medians, 4–5 pairs): English
    /// cl100k +3 % cold / +4 % steady, o200k +5 % / +4 %, Python source r50k +3 % / +2 %; English r50k, Python
    /// source cl100k and multilingual text within ±2 % (their finds wait on memory more than on the copy).
    #[inline(always)]
    fn extend_ids(&self, entry: &Entry, out: &mut Vec<u32>) {
        let n = entry.n as usize;
        if n <= FRONT_IDS {
            if out.capacity() - out.len() >= FRONT_IDS {
                // SAFETY: room for `FRONT_IDS` more ids; the first `n` of them, written, become the list's.
                unsafe {
                    out.as_mut_ptr().add(out.len()).cast::<[u32; FRONT_IDS]>().write_unaligned(entry.ids);
                    out.set_len(out.len() + n);
                }
            } else {
                out.extend_from_slice(&entry.ids[..n]);
            }
        } else {
            let at = entry.ids[0] as usize;
            out.extend(self.overflow.atomics()[at..at + n].iter().map(|id| id.load(Ordering::Relaxed)));
        }
    }

    /// Empties the table (no other thread can reach it).
    fn clear(&mut self) {
        self.tags.iter_mut().for_each(|tag| *tag.get_mut() = 0);
        self.slots.fill(Entry::default());
        (*self.reserved.get_mut(), *self.overflow_used.get_mut()) = (0, 0);
    }

    /// A table of `slots` slots (a power of two, more than twice this one's entries) holding the entries
    /// published here.
    fn grown_to(&self, slots: usize) -> SeenTable {
        let mut next = SeenTable::with_slots(slots);
        let mut ids = Vec::new();
        let mut held = 0;
        for at in 0..self.slot_count() {
            if let Some(entry) = self.published(at, self.tags[at].load(Ordering::Acquire)) {
                ids.clear();
                self.extend_ids(&entry, &mut ids);
                let key = Key { first: entry.first, last: entry.last, len: entry.len as u64 };
                held += usize::from(next.keep_owned(key, &ids));
            }
        }
        *next.reserved.get_mut() = held;
        next
    }
}

/// An encoder's seen table, shared by every thread that encodes with it (and with its clones, which are the same
/// encoder): the one in use, replaced by a larger copy as it fills, and by an empty one once it may grow no
/// more (`replace`).
#[derive(Clone, Default)]
pub(crate) struct SeenTables(Arc<SeenTablesInner>);

/// An encoder's seen table in use, and its generation (`SeenTablesInner::generation`).
type InUse = (Arc<SeenTable>, u64);

#[derive(Default)]
struct SeenTablesInner {
    current: Mutex<Arc<SeenTable>>,
    /// Counts the replacements, so that a thread tells by one load whether its table is still the one in use.
    generation: AtomicU64,
    /// Threads' scratches that took up this encoder (the table may grow to `SEEN_MOST_SLOTS` for each, up to
    /// `SEEN_MOST_USERS`).
    users: AtomicUsize,
    /// The most slots a text announced it calls for (`SeenTables::expect`): the table's next growth goes at
    /// least that far.
    expected: AtomicUsize,
}

impl Default for SeenTable {
    fn default() -> SeenTable {
        SeenTable::with_slots(0)
    }
}

impl std::fmt::Debug for SeenTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let slots = self.current().0.slot_count();
        f.debug_struct("SeenTables").field("slots", &slots).finish_non_exhaustive()
    }
}

impl SeenTables {
    fn lock(&self) -> std::sync::MutexGuard<'_, Arc<SeenTable>> {
        // A panic elsewhere while it was held left the table whole: every change is one assignment.
        self.0.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `lock`, unless another thread holds the lock (growing the table, which takes milliseconds: a thread
    /// rather goes on with the table it has than waits).
    fn try_lock(&self) -> Option<std::sync::MutexGuard<'_, Arc<SeenTable>>> {
        match self.0.current.try_lock() {
            Ok(current) => Some(current),
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// The table in use and its generation.
    fn current(&self) -> InUse {
        let current = self.lock();
        (Arc::clone(&current), self.0.generation.load(Ordering::Relaxed))
    }

    /// The table in use, after replacing `full` if it still is: by a copy twice its size (or the size a text
    /// announced, `expect`) while it may grow (`SEEN_MOST_SLOTS` per user), else by an empty table of its size —
    /// the same table emptied when no other thread holds it (the entries found again are not worth keeping,
    /// measured: see docs/encoding-profile.md).
    /// `Err(full)` if another thread is replacing it.
    fn replace(&self, full: Option<Arc<SeenTable>>) -> Result<InUse, Option<Arc<SeenTable>>> {
        let Some(mut current) = self.try_lock() else { return Err(full) };
        if let Some(full) = full
            && Arc::ptr_eq(&full, &current)
        {
            drop(full);
            let users = self.0.users.load(Ordering::Relaxed).clamp(1, SEEN_MOST_USERS);
            if current.slot_count() < SEEN_MOST_SLOTS * users {
                // Twice the slots, or as many as a text announced (`expect`).
                let expected = self.0.expected.load(Ordering::Relaxed);
                *current = Arc::new(current.grown_to((current.slot_count() * 2).max(SEEN_FIRST_SLOTS).max(expected)));
            } else if let Some(table) = Arc::get_mut(&mut current) {
                // No thread holds it, and none can take it while the lock is held: emptied where it is, rather
                // than a second table's memory for a while.
                table.clear();
            } else {
                *current = Arc::new(SeenTable::with_slots(current.slot_count()));
            }
            self.0.generation.fetch_add(1, Ordering::Relaxed);
        }
        Ok((Arc::clone(&current), self.0.generation.load(Ordering::Relaxed)))
    }

    /// Readies the table for `bytes` of text about to be encoded (a batch, a long text): when it next grows (or
    /// is first made), it goes straight to the slots such text takes it to (`SEEN_BYTES_PER_SLOT`; at most the
    /// most it may have), rather than doubling on the way, each time copying every entry into memory new to the
    /// process while the text waits. Nothing is made now: a text that keeps nothing here (random digits, one
    /// long run of a letter) costs no table.
    ///
    /// ```text
    /// 10 MB of documents: the table of 2^12 slots, once half full, → 2^17 slots (4 MB), its entries copied once
    /// ```
    pub(super) fn expect(&self, bytes: usize) {
        // (Every `encode` asks, most for a short text: that is told from its length alone.)
        let slots = bytes / SEEN_BYTES_PER_SLOT;
        if slots <= SEEN_FIRST_SLOTS {
            return;
        }
        let users = self.0.users.load(Ordering::Relaxed).clamp(1, SEEN_MOST_USERS);
        let slots = slots.min(SEEN_MOST_SLOTS * users);
        self.0.expected.fetch_max(1 << slots.ilog2(), Ordering::Relaxed);
    }

    /// Counts a thread's scratch that takes up this encoder.
    pub(super) fn attach(&self) {
        self.0.users.fetch_add(1, Ordering::Relaxed);
    }
}

/// A thread's view of its encoder's seen table: the table it uses (until the encoder's is replaced), its
/// reserved slots there, and whether pieces pass it (counted per thread: its own text).
#[derive(Default)]
pub(super) struct Seen {
    table: Option<Arc<SeenTable>>,
    generation: u64,
    /// Slots reserved in `table` and not yet filled.
    reserved: usize,
    /// Lookups in this window, and how many found their piece.
    asked: u32,
    found: u32,
    /// Pieces still to pass the table; windows in a row that found too few.
    passing: u32,
    fails: u32,
    /// While pieces pass: the hash of the last one in each slot (see `CAME_BACK_SLOTS`; made at the first pass).
    came_back: Option<Box<[u64]>>,
}

/// What `Seen::look_up` found.
pub(super) enum Lookup {
    /// In this slot of the thread's table (`Seen::extend_ids`).
    Found(usize),
    Missing,
    /// Not looked for: few pieces came back lately (nor is the piece to be kept).
    Passed,
}

impl Seen {
    /// Takes up the encoder's table in use if it was replaced since this thread took one (once per text; or
    /// the next time, while another thread is replacing it).
    #[inline]
    pub(super) fn refresh(&mut self, tables: &SeenTables) {
        if self.generation != tables.0.generation.load(Ordering::Relaxed)
            && let Some(current) = tables.try_lock()
        {
            self.adopt((Arc::clone(&current), tables.0.generation.load(Ordering::Relaxed)));
        }
    }

    fn adopt(&mut self, (table, generation): InUse) {
        (self.table, self.generation, self.reserved) = (Some(table), generation, 0);
    }

    /// Starts loading the slot a piece with this hash is first looked for at, and its tag.
    #[inline(always)]
    pub(super) fn prefetch(&self, hash: u64) {
        if let Some(table) = &self.table
            && table.slot_count() > 0
        {
            let at = table.start(hash);
            crate::prefetch(&table.tags[at]);
            // (A prefetch reads no memory: no reference to the slot is made.)
            crate::prefetch_ptr(table.slots.shared_ptr().wrapping_add(at));
        }
    }

    /// The piece's entry if the table holds it; or `Passed` while pieces pass the table.
    ///
    /// Inline, the entry left in its slot, the pacing's rarer steps out of line: a find was ~70 instructions
    /// in a function of its own, the entry copied out and back through the result. Documents of pieces met
    /// before that are no token (r50k): 67–69 → 72–74 M pieces/s; ~4 KB documents, alternated processes
    /// (medians of 4 pairs, cold / steady): English r50k +2 % / +2 %, o200k +3 % / +2 %, cl100k +3 % / −2 %,
    /// Python source r50k +3 % / +1.5 %; multilingual text the same (4–5 pairs).
    #[inline(always)]
    pub(super) fn look_up(&mut self, key: Key, hash: u64) -> Lookup {
        if self.passing > 0 && self.pass(hash) {
            return Lookup::Passed;
        }
        let found = self.table.as_ref().and_then(|table| table.find(key, hash));
        self.asked += 1;
        self.found += u32::from(found.is_some());
        if self.asked == SEEN_WINDOW {
            self.end_window();
        }
        found.map_or(Lookup::Missing, Lookup::Found)
    }

    /// Whether the piece with this hash passes the table (pieces are passing it: `passing > 0`). The pieces that
    /// pass are counted in windows as lookups are, each found if the last one in its slot of `came_back` had
    /// the same hash: a window that finds enough ends the pass (see `CAME_BACK_SLOTS`).
    #[cold]
    #[inline(never)]
    fn pass(&mut self, hash: u64) -> bool {
        let came_back = self.came_back.get_or_insert_with(|| vec![0; CAME_BACK_SLOTS].into_boxed_slice());
        let last = &mut came_back[hash as usize & (CAME_BACK_SLOTS - 1)];
        self.found += u32::from(*last == hash);
        *last = hash;
        self.asked += 1;
        if self.asked == SEEN_WINDOW {
            if self.found >= SEEN_FEW {
                (self.passing, self.fails) = (1, 0); // this piece is the pass's last
            }
            (self.asked, self.found) = (0, 0);
        }
        self.passing -= 1;
        if self.passing == 0 {
            (self.asked, self.found) = (0, 0); // a window of lookups starts with the next piece
        }
        true
    }

    /// At the end of a window of lookups: pieces pass the table for a while if too few were found in it.
    #[cold]
    #[inline(never)]
    fn end_window(&mut self) {
        if self.found < SEEN_FEW {
            self.passing = SEEN_PASS << self.fails.min(SEEN_PASS_DOUBLINGS);
            self.fails += 1;
        } else {
            self.fails = 0;
        }
        (self.asked, self.found) = (0, 0);
    }

    /// Whether pieces pass the table now, and how many entries it holds (as far as this thread knows: those
    /// kept, or being kept, by the others count once they reserved their room).
    #[cfg(test)]
    pub(super) fn passing_and_held(&self) -> (bool, usize) {
        let held = self.table.as_ref().map_or(0, |t| t.reserved.load(Ordering::Relaxed) - self.reserved);
        (self.passing > 0, held)
    }

    /// Appends the ids of the entry `look_up` found (in slot `at`) to `out`.
    #[inline(always)]
    pub(super) fn extend_ids(&self, at: usize, out: &mut Vec<u32>) {
        self.table.as_ref().expect("an entry found in a table").extend_ids_at(at, out);
    }

    /// Keeps a piece (not in the table) and the ids it makes; in a larger or a fresh table if this thread's is as
    /// full as it may be (see `SeenTables::replace`).
    pub(super) fn keep(&mut self, tables: &SeenTables, key: Key, made: &[u32], hash: u64) {
        if self.reserved == 0 && !self.reserve(tables) {
            return;
        }
        let table = self.table.as_ref().expect("room reserved in a table");
        if let Some(entry) = table.entry(key, made) {
            table.place(entry, hash);
            self.reserved -= 1;
        }
    }

    /// Reserves `SEEN_RESERVE` slots in this thread's table, or in the one that replaces it when full. False
    /// while another thread is replacing it (the piece is not kept), or if tables fill faster than they are
    /// replaced (other threads filling each before this one can).
    #[cold]
    fn reserve(&mut self, tables: &SeenTables) -> bool {
        for _ in 0..4 {
            if let Some(table) = &self.table
                && table.reserve(SEEN_RESERVE)
            {
                self.reserved = SEEN_RESERVE;
                return true;
            }
            match tables.replace(self.table.take()) {
                Ok(current) => self.adopt(current),
                Err(table) => {
                    self.table = table;
                    return false;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps `key(k)` for each `k` in `ks` through `seen`, each making `made(k)`.
    fn keep_all(seen: &mut Seen, tables: &SeenTables, ks: impl Iterator<Item = u64>) {
        for k in ks {
            seen.keep(tables, key(k), &made(k), key(k).hash());
        }
    }

    fn key(k: u64) -> Key {
        Key::of(format!("piece{k}").as_bytes())
    }

    /// Some pieces make more ids than an entry holds (up to 16, one per byte).
    fn made(k: u64) -> Vec<u32> {
        (0..1 + k % 16).map(|i| (k * 31 + i) as u32).collect()
    }

    /// An encoder's tables with one user, and that user's `Seen`.
    fn one_user() -> (SeenTables, Seen) {
        let tables = SeenTables::default();
        tables.attach();
        let mut seen = Seen::default();
        seen.refresh(&tables);
        (tables, seen)
    }

    /// The ids `seen` finds for `key(k)`, if any.
    fn found(seen: &mut Seen, k: u64) -> Option<Vec<u32>> {
        let mut out = Vec::new();
        match seen.look_up(key(k), key(k).hash()) {
            Lookup::Found(at) => seen.extend_ids(at, &mut out),
            Lookup::Missing => return None,
            Lookup::Passed => panic!("passed"),
        }
        Some(out)
    }

    /// A find's ids follow those already in the list, exactly, whether the list has room for all an entry holds
    /// (written whole, the length moved by the entry's count) or not.
    #[test]
    fn found_ids_are_appended_exactly_with_or_without_room() {
        let (tables, mut seen) = one_user();
        keep_all(&mut seen, &tables, 0..40);
        for k in 0..40 {
            let Lookup::Found(at) = seen.look_up(key(k), key(k).hash()) else { panic!("piece {k} kept") };
            for room in [0, FRONT_IDS - 1, FRONT_IDS, 64] {
                let mut out = Vec::with_capacity(2 + room);
                out.extend([7, 8]);
                seen.extend_ids(at, &mut out);
                assert_eq!(out, [&[7, 8][..], &made(k)].concat(), "piece {k}, room {room}");
            }
        }
    }

    #[test]
    fn the_seen_table_finds_what_it_holds_as_it_grows_until_full() {
        let (tables, mut seen) = one_user();
        assert!(found(&mut seen, 0).is_none());
        let mut k = 0;
        // Until the table is emptied, at the most slots one user's table may have.
        let (mut sizes, mut largest) = (Vec::new(), std::ptr::null());
        loop {
            keep_all(&mut seen, &tables, k..k + 1);
            let table = seen.table.clone().expect("a table");
            if sizes.last() != Some(&table.slot_count()) {
                sizes.push(table.slot_count());
                largest = Arc::as_ptr(&table);
            }
            if table.reserved.load(Ordering::Relaxed) - seen.reserved == 1 && k > 0 {
                break; // just replaced by a fresh table: the piece kept is its only one
            }
            if k % 4099 == 0 {
                // Every 97th piece kept so far, across the table's growth (within one table the reads are
                // `found`'s own); the next piece is not there.
                for j in (0..=k).step_by(97) {
                    assert_eq!(found(&mut seen, j), Some(made(j)), "piece {j} after {k}");
                }
                assert!(found(&mut seen, k + 1).is_none());
            }
            k += 1;
        }
        let expected: Vec<usize> = (12..=17).map(|bits| 1 << bits).collect();
        assert_eq!(sizes, expected);
        assert_eq!(k as usize, SEEN_MOST_SLOTS / 2, "emptied once it held half its slots");
        let table = seen.table.clone().expect("a table");
        assert_eq!(Arc::as_ptr(&table), largest, "emptied where it is: no other thread held it");
        // One published tag, the emptied table's one piece; every other slot empty.
        let tags: Vec<u8> = table.tags.iter().map(|t| t.load(Ordering::Relaxed)).collect();
        assert_eq!(tags.iter().filter(|&&t| t != 0).count(), 1);
        assert_eq!(found(&mut seen, k), Some(made(k)));
        assert!(found(&mut seen, 0).is_none());
        // Another thread's view (a fresh `Seen`) finds what this one kept.
        let mut other = Seen::default();
        other.refresh(&tables);
        assert_eq!(found(&mut other, k), Some(made(k)));
        // Filled again while the other thread holds it: replaced by a new table, and the other thread's, until
        // it takes up the new one, still finds what it found.
        drop(table);
        keep_all(&mut seen, &tables, k + 1..k + SEEN_MOST_SLOTS as u64 / 2 + 1);
        let table = seen.table.clone().expect("a table");
        assert!(Arc::as_ptr(&table) != largest && table.slot_count() == SEEN_MOST_SLOTS);
        assert_eq!(found(&mut other, k), Some(made(k)));
        other.refresh(&tables);
        assert!(found(&mut other, k).is_none());
        assert_eq!(found(&mut other, k + SEEN_MOST_SLOTS as u64 / 2), Some(made(k + SEEN_MOST_SLOTS as u64 / 2)));
    }

    /// Readied for a batch or a long text, the table grows at its next growth straight to the slots the text's
    /// bytes call for (rounded down to a power of two; at most the most its users may have), every entry still
    /// found; not before it needs to, and never smaller than it would have.
    #[test]
    fn the_seen_table_grows_straight_to_the_size_a_long_text_calls_for() {
        let (tables, mut seen) = one_user();
        let slots = || tables.current().0.slot_count();
        tables.expect(200_000); // 3 125 slots' worth: no more than the first table
        keep_all(&mut seen, &tables, 0..1000);
        assert_eq!(slots(), SEEN_FIRST_SLOTS);
        tables.expect(2_000_000); // 31 250 slots' worth
        tables.expect(1_000_000); // (the most announced counts)
        assert_eq!(slots(), SEEN_FIRST_SLOTS, "not grown before it is full");
        keep_all(&mut seen, &tables, 1000..3000); // past half the first table's slots
        assert_eq!(slots(), 1 << 14, "straight from 2^12");
        tables.expect(1 << 40);
        keep_all(&mut seen, &tables, 3000..9000); // past half of 2^14
        assert_eq!(slots(), SEEN_MOST_SLOTS, "no more than one user's most");
        seen.refresh(&tables);
        for k in 0..9000 {
            assert_eq!(found(&mut seen, k), Some(made(k)), "piece {k}");
        }
        assert!(found(&mut seen, 9000).is_none());
        // Nothing announced: the first table is the smallest, whatever another encoder was told.
        let other = SeenTables::default();
        other.attach();
        let mut other_seen = Seen::default();
        keep_all(&mut other_seen, &other, 0..10);
        assert_eq!(other.current().0.slot_count(), SEEN_FIRST_SLOTS);
    }

    /// Threads filling one table at once, with overlapping pieces, through its growth and two fresh starts:
    /// every find is the piece's own ids, and what a thread kept is found by the others.
    #[test]
    fn threads_share_the_seen_table() {
        let tables = SeenTables::default();
        let threads = 3u64;
        let per_thread = 2 * SEEN_MOST_SLOTS as u64;
        let start = std::sync::Barrier::new(threads as usize);
        std::thread::scope(|scope| {
            for t in 0..threads {
                let (tables, start) = (&tables, &start);
                scope.spawn(move || {
                    tables.attach();
                    let mut seen = Seen::default();
                    seen.refresh(tables);
                    start.wait();
                    for i in 0..per_thread {
                        // Each thread's own pieces, each looked up twice in a row (so that a window finds
                        // enough, and pieces do not pass the table), and in every other pair one of the next
                        // thread's, a little behind.
                        let k =
                            if i % 4 == 3 { (i / 2 - 1) * threads + (t + 1) % threads } else { i / 2 * threads + t };
                        // While another thread grows the table nothing is kept, so the second lookup of a
                        // piece misses and a window may find too few: pieces then pass the table, until a
                        // window of them came back (each piece comes twice in a row).
                        match seen.look_up(key(k), key(k).hash()) {
                            Lookup::Found(at) => {
                                let mut ids = Vec::new();
                                seen.extend_ids(at, &mut ids);
                                assert_eq!(ids, made(k), "piece {k}");
                            }
                            Lookup::Missing => keep_all(&mut seen, tables, k..k + 1),
                            Lookup::Passed => {}
                        }
                        if i % 1024 == 0 {
                            seen.refresh(tables);
                        }
                    }
                });
            }
        });
        let (table, _) = tables.current();
        assert_eq!(table.slot_count(), (SEEN_MOST_SLOTS * threads as usize).next_power_of_two(), "grown for each user");
    }

    /// Pieces that never come back: each window in a row that finds too few doubles the pass (up to
    /// `SEEN_PASS_DOUBLINGS` times), a window that finds enough starts the doubling over, and a window of
    /// passing pieces that came back ends a pass at once.
    #[test]
    fn passes_double_while_nothing_comes_back_and_end_when_the_text_changes() {
        let (mut seen, tables) = (Seen::default(), SeenTables::default());
        // Looks up (and keeps, when missing) `n` pieces from `first` on; the lengths of the passes seen.
        let run = |seen: &mut Seen, first: u64, n: u64, again: bool| {
            let (mut passes, mut passing) = (Vec::new(), 0u64);
            for k in first..first + n {
                let k = if again { k % 8 } else { k };
                match seen.look_up(key(k), key(k).hash()) {
                    Lookup::Passed => passing += 1,
                    found => {
                        if passing > 0 {
                            passes.push(passing);
                            passing = 0;
                        }
                        if let Lookup::Missing = found {
                            seen.keep(&tables, key(k), &[k as u32], key(k).hash());
                        }
                    }
                }
            }
            passes
        };
        let pass = SEEN_PASS as u64;
        let window = SEEN_WINDOW as u64;
        // (The last pass is counted once a lookup follows it.)
        let passes = run(&mut seen, 0, 7 * window + 63 * pass, false);
        assert_eq!(passes, [pass, 2 * pass, 4 * pass, 8 * pass, 16 * pass, 16 * pass], "doubling, then no further");
        // A window of pieces that come back: the next pass starts from one again.
        assert_eq!(run(&mut seen, 0, window, true), [0u64; 0]);
        let passes = run(&mut seen, 1 << 40, window + pass + 1, false);
        assert_eq!(passes, [pass]);
        // Passing again (twice as long), until a window of the passing pieces came back (eight pieces over and
        // over): lookups resume after that window, whatever the pass had left.
        assert_eq!(run(&mut seen, 1 << 41, window - 1, false), [0u64; 0]);
        assert_eq!((seen.passing, seen.asked), (2 * SEEN_PASS, 0), "a window found too few: passing");
        assert_eq!(run(&mut seen, 1 << 42, window - 1, true), [0u64; 0]);
        assert_eq!(seen.passing, 2 * SEEN_PASS - (SEEN_WINDOW - 1), "came back, but the window is not over");
        assert_eq!(run(&mut seen, 1 << 43, 2, false), [1], "the window's last piece passed, the next looked up");
        assert_eq!((seen.passing, seen.fails, seen.asked), (0, 0, 1), "the pass ended; the next piece looked up");
        // Pieces that do not come back while passing keep the pass going to its end.
        assert_eq!(run(&mut seen, 1 << 44, window - 1, false), [0u64; 0]);
        assert_eq!(run(&mut seen, 1 << 45, pass + 1, false), [pass]);
    }

    /// The recent pieces: a piece's ids only for the same bytes and length (zero bytes too), a newer piece in
    /// the same slot taking the older one's place, none of more ids than bytes, and no memory until the first is
    /// kept or after `clear`.
    #[test]
    fn recent_pieces_hold_their_own_ids() {
        let mut recent = Recent::default();
        assert!(recent.get(Key::of(b"ab")).is_none() && recent.0.is_empty());
        recent.put(Key::of(b"ab\0"), &[1, 2]);
        assert!(recent.get(Key::of(b"ab")).is_none(), "the same bytes zero-padded, another length");
        let (ids, count) = recent.get(Key::of(b"ab\0")).expect("kept");
        assert_eq!(&ids[..count], [1, 2]);
        let pieces: Vec<Vec<u8>> = (0..4 * RECENT_SLOTS as u32).map(|k| format!("{k:08}").into_bytes()).collect();
        let (a, b) = (0..pieces.len())
            .flat_map(|i| (i + 1..pieces.len()).map(move |j| (i, j)))
            .find(|&(i, j)| Recent::slot_of(Key::of(&pieces[i])) == Recent::slot_of(Key::of(&pieces[j])))
            .expect("two pieces that share a slot");
        recent.put(Key::of(&pieces[a]), &[7; 8]);
        assert_eq!(recent.get(Key::of(&pieces[a])).map(|(ids, n)| ids[..n].to_vec()), Some(vec![7; 8]));
        recent.put(Key::of(&pieces[b]), &[9]);
        assert!(recent.get(Key::of(&pieces[a])).is_none(), "replaced");
        assert_eq!(recent.get(Key::of(&pieces[b])).map(|(ids, n)| ids[..n].to_vec()), Some(vec![9]));
        recent.put(Key::of(b"abc"), &[1, 2, 3, 4]);
        assert!(recent.get(Key::of(b"abc")).is_none(), "more ids than bytes: not held");
        recent.clear();
        assert!(recent.get(Key::of(&pieces[b])).is_none() && recent.0.is_empty());
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
        let table = SeenTable::default();
        for (i, p) in pieces.iter().enumerate() {
            let entry = table.entry(Key::of(p), &[i as u32]).expect("no overflow");
            for (j, q) in pieces.iter().enumerate() {
                assert_eq!(entry.holds(Key::of(q)), i == j, "{:?} {:?}", p, q);
            }
        }
        assert!(!Entry::default().holds(Key::of(b"\0\0")), "an empty slot holds no piece");
    }

    /// A short piece's key from an 8-byte load of the text it is in, masked to its length, is `Key::of` the
    /// piece: every length, and bytes that are not zero on either side.
    #[test]
    fn a_short_key_from_its_text_equals_the_pieces_key() {
        let text: Vec<u8> = (1..=40u8).map(|b| b.wrapping_mul(37) | 0x80).collect();
        for len in 1..=8 {
            for start in 0..=text.len() - 8 {
                let piece = &text[start..start + len];
                assert_eq!(Key::of_short_in(&text, start, len), Key::of(piece), "{piece:?}");
                // SAFETY: 8 bytes of `text` from `start`.
                assert_eq!(unsafe { Key::of_short_at(&text, start, len) }, Key::of(piece), "{piece:?}");
            }
        }
    }

    /// Pieces that differ only in their last bytes start their probes at different slots: the hash's bits from
    /// 32 up, which the seen table and the 9–16-byte whole-token table start at (with an older hash, the 676
    /// pieces " thaa" … " thzz" shared 26 slots of the table then in use).
    #[test]
    fn slots_depend_on_every_byte_of_a_piece() {
        for prefix in [&b" th"[..], b"ing", b" ", b"abcdefghijk"] {
            let pieces: Vec<Vec<u8>> =
                (b'a'..=b'z').flat_map(|x| (b'a'..=b'z').map(move |y| [prefix, &[x, y]].concat())).collect();
            let slots: std::collections::HashSet<u64> =
                pieces.iter().map(|p| Key::of(p).hash() >> 32 & ((1 << 15) - 1)).collect();
            // 676 pieces in 32K slots: ~7 collide by chance.
            assert!(slots.len() >= 650, "{:?}…: {} slots for 676 pieces", String::from_utf8_lossy(prefix), slots.len());
        }
    }
}
