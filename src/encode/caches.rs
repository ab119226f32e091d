//! The per-thread tables that remember encoded pieces that are not whole tokens (`Scratch`: the seen table, the
//! cache of longer pieces, and the merges' buffers), and the piece keys they and the whole-token table
//! (`whole.rs`) use.
//!
//! Performance notes:
//! - A key is a piece's length and two 8-byte words: up to 8 bytes, the bytes zero-padded (so one masked
//!   8-byte load of the text gives it); longer, its first and last 8 bytes. They identify any piece of up to 16
//!   bytes — most pieces — so a lookup is two or three integer compares, no `memcmp`, no pointer to a boxed key
//!   (perf: those were 10% and 14% of encoding). The hash is a folded multiply of the same words.
//! - A piece of 2 to 16 bytes is looked up in the whole-token table first (shared, built at load); the seen
//!   table, per thread, holds only the pieces that merged into several tokens (up to 64K; 32-byte entries,
//!   open addressing, a tag byte per slot read first, so that a piece it lacks costs no slot): rare words
//!   repeat.
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

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::huge_pages::{HugeSlice, Pages};
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
    /// Every piece of 2 to 16 bytes met that is not a whole token (up to `SEEN_MOST_SLOTS / 2`) and its ids,
    /// unless pieces pass it (`Seen::look_up`).
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
    #[inline(always)]
    pub(super) fn holds(&self, key: Key) -> bool {
        self.first == key.first && self.last == key.last && self.len as u64 == key.len
    }
}

/// Most ids an entry holds itself: a rare word is usually two or three tokens.
const FRONT_IDS: usize = 3;

/// Slots the seen table starts with, and most it grows to (4 MB); it starts afresh when that is half full. 20 MB
/// of English documents never fill it; multilingual text did, at 8 MB (2^18 slots), which with the 4 MB table it
/// grew from took 9–10 MB more at the peak than now, for no speed (~4 KB documents, 4 MB after 4 MB,
/// alternated: r50k 39–46 → 44–54 MB/s, o200k 27–32 → 30–33). At 2 MB, English's steady documents were ~8 %
/// slower (r50k 191–192 → 172–180 MB/s).
const SEEN_FIRST_SLOTS: usize = 1 << 12;
const SEEN_MOST_SLOTS: usize = 1 << 17;

/// Pieces looked up in a window of the seen table's finds...
const SEEN_WINDOW: u32 = 4096;
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
/// While pieces pass, this many in a row merged far apart (`PieceEncoder::merge_bytes`: not in a run of close
/// merges) end the pass: the text changed (ordinary text after base64, whose rare words do come back), so it
/// does not pass the table for up to a million pieces. Of the lookups, random letters (o200k) come in close
/// runs two times in three, base64 nineteen in twenty, multilingual text three in ten, English one in 400.
/// At 64, o200k base64 (its short pieces merged without the table, the rest further apart) ended its passes
/// again and again: 35 → 41–42 ms.
const SEEN_APART: u32 = 1024;

/// An open-addressing table (linear probing) of pieces of up to 16 bytes, grown by doubling: where a piece
/// that is no token is found in one or two cache lines, instead of the whole-token table and the
/// byte-keyed cache (together ~4 cache misses: their control bytes, boxed keys and values).
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
/// Each slot has a tag beside it, in an array of its own (a byte per slot, 128 KB at most): most lookups of a
/// new piece, which miss, read only tags — an array 32 times smaller than the slots, mostly in cache — rather
/// than wait for a slot of up to 4 MB; a find reads the tag and then its slot. ~4 KB English documents,
/// alternated processes, 4 pairs per encoding (medians): r50k cold +1.4 %, steady +2 %; cl100k +4 % / +3.4 %;
/// o200k +3.7 % / +2.4 %; Python source (cl100k) +1.5 % / +1.2 %, multilingual (r50k) +1.7 % / +2.3 %; the
/// worst cases' first calls (4 MB of random letters and base64) within ±2.5 %.
#[derive(Default)]
pub(super) struct Seen {
    slots: HugeSlice<Entry>,
    /// A byte of each slot's piece's hash (0: the slot is empty), read before the slot: a piece the table does
    /// not hold is told by these bytes alone, without loading a slot.
    tags: Vec<u8>,
    used: usize,
    /// The ids of the entries that make more than `FRONT_IDS` (indentation, in gpt2: each space a token).
    overflow: Vec<u32>,
    /// Lookups in this window, and how many found their piece.
    asked: u32,
    found: u32,
    /// Pieces still to pass the table; windows in a row that found too few; pieces in a row merged far apart
    /// while passing.
    passing: u32,
    fails: u32,
    apart: u32,
}

/// What `Seen::look_up` found.
pub(super) enum Lookup {
    Found(Entry),
    Missing,
    /// Not looked for: few pieces came back lately (nor is the piece to be kept).
    Passed,
}

/// A slot's tag: 8 bits of the hash that the slot's index does not use (those are from bit 32 up), never 0.
#[inline(always)]
fn tag_of(hash: u64) -> u8 {
    (hash >> 24) as u8 | 1
}

impl Seen {
    /// The slot probing starts at: the hash's bits from 32 up.
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
        let tag = tag_of(hash);
        let mut at = self.start(hash);
        loop {
            let t = self.tags[at];
            if t == 0 {
                return None;
            }
            if t == tag {
                let entry = &self.slots[at];
                if entry.holds(key) {
                    return Some(entry);
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// Starts loading the slot a piece with this hash is first looked for at, and its tag.
    #[inline(always)]
    pub(super) fn prefetch(&self, hash: u64) {
        if !self.slots.is_empty() {
            let at = self.start(hash);
            crate::prefetch(&self.tags[at]);
            crate::prefetch(&self.slots[at]);
        }
    }

    /// The piece's entry if the table holds it; or `Passed` while pieces pass the table. `closely`: whether
    /// the piece comes in a run of pieces merged close together (see `SEEN_APART`).
    #[inline]
    pub(super) fn look_up(&mut self, key: Key, hash: u64, closely: bool) -> Lookup {
        if self.passing > 0 {
            self.apart = if closely { 0 } else { self.apart + 1 };
            if self.apart < SEEN_APART {
                self.passing -= 1;
                return Lookup::Passed;
            }
            (self.passing, self.fails, self.apart) = (0, 0, 0);
        }
        let entry = self.get(key, hash).copied();
        self.asked += 1;
        self.found += u32::from(entry.is_some());
        if self.asked == SEEN_WINDOW {
            if self.found < SEEN_FEW {
                self.passing = SEEN_PASS << self.fails.min(SEEN_PASS_DOUBLINGS);
                self.fails += 1;
            } else {
                self.fails = 0;
            }
            (self.asked, self.found) = (0, 0);
        }
        entry.map_or(Lookup::Missing, Lookup::Found)
    }

    /// Whether pieces pass the table now, and how many it holds.
    #[cfg(test)]
    pub(super) fn passing_and_held(&self) -> (bool, usize) {
        (self.passing > 0, self.used)
    }

    /// The entry of a piece and the ids it makes (any number of them: more than `FRONT_IDS` go to `overflow`).
    pub(super) fn entry(&mut self, key: Key, made: &[u32]) -> Entry {
        let mut ids = [0; FRONT_IDS];
        if made.len() <= FRONT_IDS {
            ids[..made.len()].copy_from_slice(made);
        } else {
            ids[0] = self.overflow.len() as u32;
            self.overflow.extend_from_slice(made);
        }
        Entry { first: key.first, last: key.last, ids, len: key.len as u16, n: made.len() as u16 }
    }

    /// The ids of an entry made by this table.
    #[inline(always)]
    pub(super) fn ids<'a>(&'a self, entry: &'a Entry) -> &'a [u32] {
        let n = entry.n as usize;
        if n <= FRONT_IDS { &entry.ids[..n] } else { &self.overflow[entry.ids[0] as usize..][..n] }
    }

    /// Whether the table is as full as it may be (the caller starts it afresh).
    pub(super) fn full(&self) -> bool {
        self.slots.len() >= SEEN_MOST_SLOTS && 2 * (self.used + 1) > self.slots.len()
    }

    /// Adds an entry whose key is not in the table (which is not `full`).
    pub(super) fn insert(&mut self, entry: Entry, hash: u64) {
        if 2 * (self.used + 1) > self.slots.len() {
            self.grow();
        }
        self.place(entry, hash);
        self.used += 1;
    }

    fn place(&mut self, entry: Entry, hash: u64) {
        let mask = self.slots.len() - 1;
        let mut at = self.start(hash);
        while self.tags[at] != 0 {
            at = (at + 1) & mask;
        }
        self.slots[at] = entry;
        self.tags[at] = tag_of(hash);
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(SEEN_FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, HugeSlice::filled(size, Entry::default(), Pages::Huge));
        self.tags = vec![0; size];
        for &entry in old.iter().filter(|e| e.len != 0) {
            let key = Key { first: entry.first, last: entry.last, len: entry.len as u64 };
            self.place(entry, key.hash());
        }
    }

    pub(super) fn clear(&mut self) {
        self.overflow.clear();
        self.slots.fill(Entry::default());
        self.tags.fill(0);
        self.used = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // A tag for every slot used and none for the others (128 tags for 64 K pieces: most probes pass slots
        // whose tag is the piece's but whose piece is another).
        assert_eq!(seen.tags.iter().filter(|&&t| t != 0).count(), seen.used);
        assert!(seen.slots.iter().zip(&seen.tags).all(|(entry, &t)| (entry.len == 0) == (t == 0)));
        seen.clear();
        assert!(seen.get(key(0), key(0).hash()).is_none() && seen.overflow.is_empty());
        assert!(seen.tags.iter().all(|&t| t == 0));
        let entry = seen.entry(key(5), &made(5));
        seen.insert(entry, key(5).hash());
        assert_eq!(seen.ids(seen.get(key(5), key(5).hash()).unwrap()), made(5));
    }

    /// Pieces that never come back, in close runs: each window in a row that finds too few doubles the pass
    /// (up to `SEEN_PASS_DOUBLINGS` times), a window that finds enough starts the doubling over, and a run of
    /// `SEEN_APART` pieces merged far apart ends a pass at once.
    #[test]
    fn passes_double_while_nothing_comes_back_and_end_when_the_text_changes() {
        let key = |k: u64| Key::of(format!("piece{k}").as_bytes());
        let mut seen = Seen::default();
        // Looks up (and keeps, when missing) `n` pieces from `first` on; the lengths of the passes seen.
        let run = |seen: &mut Seen, first: u64, n: u64, closely: bool, again: bool| {
            let (mut passes, mut passing) = (Vec::new(), 0u64);
            for k in first..first + n {
                let k = if again { k % 8 } else { k };
                match seen.look_up(key(k), key(k).hash(), closely) {
                    Lookup::Passed => passing += 1,
                    found => {
                        if passing > 0 {
                            passes.push(passing);
                            passing = 0;
                        }
                        if let Lookup::Missing = found {
                            let entry = seen.entry(key(k), &[k as u32]);
                            if seen.full() {
                                seen.clear();
                            }
                            seen.insert(entry, key(k).hash());
                        }
                    }
                }
            }
            passes
        };
        let pass = SEEN_PASS as u64;
        let window = SEEN_WINDOW as u64;
        // (The last pass is counted once a lookup follows it.)
        let passes = run(&mut seen, 0, 7 * window + 63 * pass, true, false);
        assert_eq!(passes, [pass, 2 * pass, 4 * pass, 8 * pass, 16 * pass, 16 * pass], "doubling, then no further");
        // A window of pieces that come back: the next pass starts from one again.
        assert_eq!(run(&mut seen, 0, window, true, true), [0u64; 0]);
        let passes = run(&mut seen, 1 << 40, window + pass + 1, true, false);
        assert_eq!(passes, [pass]);
        // Passing again (twice as long), until a run of pieces merged far apart: lookups resume at once.
        let n = window + SEEN_APART as u64;
        assert_eq!(run(&mut seen, 1 << 41, n, true, false), [0u64; 0]);
        let (asked, passing) = (seen.asked, seen.passing);
        assert_eq!(run(&mut seen, 1 << 42, SEEN_APART as u64 - 1, false, false), [0u64; 0]);
        assert_eq!((seen.asked, seen.passing), (asked, passing - (SEEN_APART - 1)), "far apart, still passing");
        assert_eq!(run(&mut seen, 1 << 43, 1, false, false), [0u64; 0]);
        assert_eq!((seen.asked, seen.passing, seen.fails), (asked + 1, 0, 0), "the pass ended");
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
