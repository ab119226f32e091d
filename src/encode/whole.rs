//! The whole-token table: every token that a piece may be looked up as whole (see `piece.rs`), keyed by its
//! bytes, built when the vocabulary loads and shared by every thread. It is the first place a piece the thread
//! has not met yet is looked for, so text the process has never seen finds its whole-token pieces — nearly all
//! the pieces of ordinary text — in one probe.
//!
//! Performance notes:
//! - Flat open-addressing arrays (linear probing, at most 3/4 full), one per length class, with the key in the
//!   slot: a lookup is one cache line, two or three integer compares. Pieces of up to 8 bytes (four fifths of
//!   the OpenAI tokens) take 16-byte slots, four to a line: 1 MB for r50k, 2 MB for cl100k, 4 MB for o200k;
//!   9–16 bytes take 32-byte slots (0.5 / 1 / 2 MB); the few longer tokens a hash map of their bytes. o200k's
//!   are on huge pages (`huge_pages.rs`, `HUGE_PAGES_FROM`).
//! - It replaced a `hashbrown` table of (key, id, boxed bytes) entries, which the per-thread "seen" table stood
//!   in front of: every new piece then missed the seen table, found its token in the big table (control bytes,
//!   then the entry) and was copied into the seen table, growing and rehashing it. Fresh English spent a fifth
//!   of its instructions there (2 MB, r50k, callgrind); whole-token pieces no longer enter the seen table.
//! - A piece of up to 8 bytes finds its slot from its bytes by one 64-bit multiply and a shift
//!   (`short_start`), its bytes masked to its length by a mask from a table (`Key::short`), rather than by the
//!   folded 128-bit product of `Key::hash` and shifts by the length. 1 MB of English encoded a second time
//!   (callgrind, r50k): 21.52 → 20.49 M instructions. ~4 KB documents, 10 MB cold then 10 MB steady, 6–8
//!   alternated process pairs: r50k +3.3 % / +3.8 %, cl100k +5 % / +5 %, o200k +8 % / +3 %. The start's
//!   quality is the old hash's: tokens at their first slot 70 % (r50k), 69 % (cl100k), 72 % (o200k) either way.
//! - Each short slot also keeps its reach as a probe's start (how far past it the tokens starting there lie), so
//!   that a piece that is no token stops there instead of walking to a free slot (~4 slots at ~0.6 full): first
//!   calls on 4 MB, alternated processes: o200k random letters 130–141 → 98–101 ms (3 pairs), cl100k base64
//!   116–117 → 105 ms (2); ~4 KB English documents r50k +4 % cold / +4 % steady (4 pairs), o200k 0 % / +3 %
//!   (3); Python source cl100k +1 % / −3 % (3, within the noise); documents of pieces met before that are no
//!   token (each a miss here first) 70–76 → 78–82 M pieces/s. (Measured with a 16-bit reach: the same probes.)
//! - Medium slots keep a reach too (2026-12-06): OpenAI's vocabularies fill that table more (r50k 0.66, cl100k
//!   0.60, o200k 0.73 full), where a piece of 9–16 bytes that is no token walked ~5–7 slots, two to four cache
//!   lines. Documents of `" assertEqual"` (a piece met before, r50k): 13.1 → 11.3 ns a piece, the splitter's
//!   instructions per piece 203 → 170 (callgrind); 1 MB of English (cl100k) 0.4 % fewer instructions and 1.5 %
//!   fewer mispredicted branches in the splitter. ~4 KB documents, alternated processes, medians (cold /
//!   steady): Python source r50k +2.4 % / +2.1 % (13 pairs), cl100k −1 % / +0.7 % (8), o200k +1 % / +2 % (5);
//!   English r50k +1.7 % / −0.5 %, cl100k 0 % / +1.4 %, o200k −1 % / +4 % (11 pairs each). 10 MB one-thread
//!   batches: cl100k −4 % / 0 % (13 pairs), r50k −0.6 % / +0.8 % (6). First calls on 4 MB: cl100k base64 −4 %
//!   time (3 pairs); o200k random letters +3–4 % (12 pairs, instructions the same: perf has the wait for the
//!   first slot's line on the load of its reach, which the next branch needs, where the walk went on
//!   speculatively). About even on real text; kept for the fewer lines a miss touches. Then the next line
//!   asked for at once (a prefetch): against the reach alone, ~4 KB English documents cl100k +2.7 % / +3.2 %,
//!   o200k +2 % / +2 %, r50k +1 % / −1 % (6 pairs each), Python source r50k +0.5 % / +0.4 % (6); one-thread
//!   10 MB cl100k batches cold +1 % (6); base64 (cl100k) −2.7 % time, random letters (o200k) −0.5 %, (r50k)
//!   +0.6 % (4–6 pairs). Against the walk before the reach: cl100k batches cold −0.6 %, o200k random letters
//!   +2.3 % time (6 pairs).
//! - A piece of 9–16 bytes first reads a filter of the medium tokens' hashes (a bit per hash value, eight per medium
//!   slot: 16 / 32 / 64 KB for r50k / cl100k / o200k), so that one that is no token — met before, new, or a span a
//!   merge looks up — usually reads no slot of the medium table (0.5–2 MB), whose lines such pieces otherwise take from
//!   the ones tokens use. A simulation of the table's lines (`bench/table_lines.py --every-probe`) had those probes at
//!   13 K (r50k) to 27 K (o200k) of a 768 KB cache's misses per 10 MB of steady English. ~4 KB English documents, in
//!   one process, the filter switched on and off every 61 documents (10 runs of 20 pairs a pass, means of the runs'
//!   medians, less a null run's): cold +2.7 % r50k, +2.9 % cl100k, +2.2 % o200k; steady +2.3 %, +3.9 %, +2.9 % (AMD
//!   EPYC Zen 4, 2026-12-07). Python source documents (no null run): r50k +5.5 % / +3.3 %, cl100k +2.2 % / −0.8 %,
//!   o200k −1 % / +0.2 % (cold / steady, uncorrected).
//! - A short piece merged densely with long ones (base64, random text: `PieceEncoder::encode_short`) first
//!   reads a filter of the short tokens (a bit per value of its product's top bits, eight per short slot:
//!   64 / 128 / 256 KB), so that one that is no token — most there — reads no slot of the 1–4 MB table. When
//!   the backtracker took those pieces, the table's random lines took its lines from the cache: fresh 0.5 MB
//!   slices, the filter switched call by call in one process (medians of 40–60 pairs, AMD EPYC Zen 4): base64
//!   cl100k −10 to −17 % time, r50k −5 to −12 %; o200k's pieces, which the whole-token merge takes (it reads the
//!   slot later anyway), are left alone (with the filter: +0.7 to +4 %). The whole-token merge now takes
//!   cl100k's and r50k's too, and the filter's gain there is within the noise (`PieceEncoder::encode_short`).
//!   The block loop does not read it: there, most pieces are tokens.
//! - The single bytes are in the short table too (at the id a one-byte piece encodes to), so that the block
//!   splitter's loop looks up every piece of up to 8 bytes the same way, without a branch on its length (see
//!   `EncodeSink::pieces_to` in `tokenizer.rs`).

use rustc_hash::FxHashMap;

use super::caches::Key;
use super::hash_bits::HashBits;
use super::huge_pages::{HugeSlice, Pages};
use super::piece::NONE;

/// A token of up to 8 bytes (its bytes zero-padded, as `Key::first`); `len` 0: a free slot.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(16))]
struct ShortSlot {
    bytes: u64,
    id: u32,
    len: u16,
    /// Of this slot as a probe's start: how many slots past it the tokens starting here lie at most
    /// (`UNBOUNDED_REACH`: probe to a free slot), so that a piece that is no token stops there. OpenAI's
    /// vocabularies reach 46 (r50k), 57 (cl100k) and 36 (o200k) at most; 85–87 % of starts reach none.
    reach: u8,
}

/// A `ShortSlot::reach` too far to count in it: such a probe goes on to a free slot (only for a table whose
/// tokens pile up on one start, which no real vocabulary's do).
const UNBOUNDED_REACH: u8 = u8::MAX;

/// A token of 9 to 16 bytes: its first and last 8 bytes.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
struct MediumSlot {
    first: u64,
    last: u64,
    id: u32,
    len: u16,
    /// As `ShortSlot::reach`. OpenAI's vocabularies fill this table more (r50k 0.66, cl100k 0.60, o200k 0.73),
    /// where a miss walked ~5–7 slots (two to four cache lines) to a free one.
    reach: u8,
}

/// A slot of either array, for the probes and the build they share (linear probing, each start's reach).
trait Slot: Copy {
    /// Whether it holds the token whose key is `key` (a free slot holds none: its length is 0).
    fn holds(&self, key: Key) -> bool;
    fn is_free(&self) -> bool;
    fn id(&self) -> u32;
    fn reach_mut(&mut self) -> &mut u8;
}

impl Slot for ShortSlot {
    #[inline(always)]
    fn holds(&self, key: Key) -> bool {
        self.bytes == key.first && self.len as u64 == key.len
    }
    #[inline(always)]
    fn is_free(&self) -> bool {
        self.len == 0
    }
    #[inline(always)]
    fn id(&self) -> u32 {
        self.id
    }
    fn reach_mut(&mut self) -> &mut u8 {
        &mut self.reach
    }
}

impl Slot for MediumSlot {
    #[inline(always)]
    fn holds(&self, key: Key) -> bool {
        self.first == key.first && self.last == key.last && self.len as u64 == key.len
    }
    #[inline(always)]
    fn is_free(&self) -> bool {
        self.len == 0
    }
    #[inline(always)]
    fn id(&self) -> u32 {
        self.id
    }
    fn reach_mut(&mut self) -> &mut u8 {
        &mut self.reach
    }
}

/// The token `key` past the first slot of its probe, `at`, whose reach is `reach`: at most that many slots
/// on, and not past a free one; None if none holds it. `mask` is `slots.len() - 1` (a power of two).
#[inline(always)]
fn find_past<S: Slot>(slots: &[S], mask: usize, key: Key, mut at: usize, reach: u8) -> Option<u32> {
    let mut left = if reach == UNBOUNDED_REACH { usize::MAX } else { reach as usize };
    while left > 0 {
        left -= 1;
        at = (at + 1) & mask;
        // SAFETY: `at` is masked by `mask`, which is `slots.len() - 1` (`new` makes at least 16 slots).
        let slot = unsafe { slots.get_unchecked(at) };
        if slot.holds(key) {
            return Some(slot.id());
        }
        if slot.is_free() {
            return None;
        }
    }
    None
}

/// Puts `slot`, the token `key` (its reach 0), into the first free slot from `start` on, and counts how far
/// that is in `start`'s reach. A token listed twice keeps its first id (as a piece looked up whole would have
/// found). (A free slot has no reach: only an occupied start's is ever raised.)
fn place<S: Slot>(slots: &mut [S], start: usize, key: Key, slot: S) {
    let mask = slots.len() - 1;
    let mut at = start;
    while !slots[at].is_free() && !slots[at].holds(key) {
        at = (at + 1) & mask;
    }
    if slots[at].is_free() {
        let reach = u8::try_from(at.wrapping_sub(start) & mask).unwrap_or(UNBOUNDED_REACH);
        slots[at] = slot;
        let first = slots[start].reach_mut();
        *first = (*first).max(reach);
    }
}

#[derive(Clone, Debug)]
pub(super) struct WholeTable {
    short: HugeSlice<ShortSlot>,
    /// `short.len() - 1` (its length is a power of two, at least 16) and `shift_for(short.len())`: kept, so
    /// that a probe reads fields.
    short_mask: usize,
    short_shift: u32,
    medium: HugeSlice<MediumSlot>,
    /// Tokens longer than 16 bytes.
    long: FxHashMap<Box<[u8]>, u32>,
    /// A bit per value of a hash's low bits (eight per medium slot), set for the medium tokens': a piece of 9–16
    /// bytes whose bit is clear is no token, found without reading a slot of `medium` (see the notes above).
    medium_filter: HashBits,
    /// A bit per value of the top bits of a short piece's product (`short_start`'s, `FILTER_BITS_LOG` bits
    /// further: eight per short slot), set for the short tokens' (see `ShortFinder::find_unless_filtered`).
    short_filter: HashBits,
    /// The shift that takes the product to its bit in `short_filter`: `short_shift - FILTER_BITS_LOG`.
    short_filter_shift: u32,
}

/// Each byte value once, in order (the single bytes' keys are made from slices of it).
static EVERY_BYTE: [u8; 256] = {
    let mut bytes = [0; 256];
    let mut b = 0;
    while b < 256 {
        bytes[b] = b as u8;
        b += 1;
    }
    bytes
};

/// The table's arrays go on huge pages when together they take this much (o200k's: 6 MB; not cl100k's 3 MB
/// nor r50k's 1.5). In-process A/B (the copy chosen by a switch every 0.25 MB of ~4 KB English documents, 8
/// processes): o200k's 4 MB short array on huge pages cold +4–6 %, steady +2–4 %, its 2 MB medium one besides
/// cold +3 %; cl100k's 2 MB short array 2–3.5 % *slower* there, cold and steady (three runs, and Python
/// source −1.5–2 %), for a reason not found (its 512 small pages fit the second-level TLB).
const HUGE_PAGES_FROM: usize = 4 << 20;

/// Bits of the tokens' filters per slot of their table, as a power of two: eight (at most 3/4 of the slots hold a
/// token: ~11 bits a token, a piece that is no token let through ~1 time in 9–12). With at least 16 slots, a
/// filter has at least 128 bits.
const FILTER_BITS_LOG: u32 = 3;

/// Slots for `count` tokens: a power of two, at most 3/4 full (at least 16).
fn slots_for(count: usize) -> usize {
    (count * 4 / 3 + 1).next_power_of_two().max(16)
}

/// The slot probing for a piece of 9 to 16 bytes starts at: its hash's high bits.
#[inline(always)]
fn start(hash: u64, slots: usize) -> usize {
    (hash >> 32) as usize & (slots - 1)
}

/// The slot probing for a piece of up to 8 bytes starts at, in a table of `2^(64 - shift)` slots: the top bits
/// of its bytes (`Key::first`) times an odd constant. Not `Key::hash`: a piece's hash is on the path from its
/// bytes to the load of its slot, once per piece of the block loop, and one 64-bit multiply and a shift are
/// shorter than the folded 128-bit product, its xor, shift and mask (see the notes above). The length is left
/// out (the slot holds it; pieces that differ only in length end in zero bytes and share a start).
#[inline(always)]
fn short_start(first: u64, shift: u32) -> usize {
    (short_product(first) >> shift) as usize
}

/// `short_start`'s odd constant (2^64 over the golden ratio).
const SHORT_MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

/// The shift `short_start` takes for a table of `slots` slots (a power of two).
fn shift_for(slots: usize) -> u32 {
    u64::BITS - slots.trailing_zeros()
}

/// `WholeTable::get_up_to_8` with the table's slots and mask copied out (see `WholeTable::short_finder`).
#[derive(Clone, Copy, Debug)]
pub(super) struct ShortFinder<'a> {
    slots: &'a [ShortSlot],
    mask: usize,
    shift: u32,
    filter: &'a HashBits,
    filter_shift: u32,
}

/// The product a short piece's slot and its bit in the short tokens' filter are taken from (of its bytes,
/// `Key::first`).
#[inline(always)]
fn short_product(first: u64) -> u64 {
    first.wrapping_mul(SHORT_MULTIPLIER)
}

impl ShortFinder<'_> {
    /// `find`, unless the short tokens' filter says the piece is none of them: for pieces that are mostly no
    /// token (base64, random text), which then read a bit of a filter of 1/16 the table's size instead of a slot
    /// of the table, whose lines stay out of the cache the merges use. A token always gets through; of the pieces
    /// that are none ~1 in 9 do (the test's table, 0.61 full).
    #[inline(always)]
    pub(super) fn find_unless_filtered(&self, key: Key) -> Option<u32> {
        let product = short_product(key.first);
        if !self.filter.has((product >> self.filter_shift) as usize) {
            return None;
        }
        self.find_from(key, (product >> self.shift) as usize)
    }

    /// Whether the short tokens' filter lets the piece whose key is `key` through to the table.
    #[cfg(test)]
    fn may_hold(&self, key: Key) -> bool {
        self.filter.has((short_product(key.first) >> self.filter_shift) as usize)
    }

    /// Starts loading the slot `find` looks at first for `key`.
    #[inline(always)]
    pub(super) fn prefetch(&self, key: Key) {
        let at = short_start(key.first, self.shift) & self.mask;
        // SAFETY: `at` is masked by `mask`, which is `slots.len() - 1`.
        crate::prefetch(unsafe { self.slots.get_unchecked(at) });
    }

    /// The token a piece of 1 to 8 bytes is (given its key), if it is one of the table's.
    ///
    /// A piece that is no token stops at its start's reach (most starts have none or one token moved past
    /// them) rather than at the next free slot: at the ~0.6 full of OpenAI's vocabularies, linear probing
    /// walks ~4 slots to one.
    #[inline(always)]
    pub(super) fn find(&self, key: Key) -> Option<u32> {
        self.find_from(key, short_start(key.first, self.shift))
    }

    /// `find` from the slot `short_start` gives for `key`.
    #[inline(always)]
    fn find_from(&self, key: Key, at: usize) -> Option<u32> {
        debug_assert!((1..=8).contains(&key.len));
        debug_assert!(at == short_start(key.first, self.shift) && at < self.slots.len());
        // SAFETY: `at` is `short_start`'s, an index below `slots.len()` (a power of two: the shift keeps its bits).
        let first = unsafe { self.slots.get_unchecked(at) };
        if first.holds(key) {
            return Some(first.id);
        }
        find_past(self.slots, self.mask, key, at, first.reach)
    }
}

impl Default for WholeTable {
    /// A table of no tokens (its arrays as small as `new` makes them, so that a probe needs no length check).
    fn default() -> WholeTable {
        WholeTable::new(std::iter::empty(), &[NONE; 256])
    }
}

impl WholeTable {
    /// The table of `tokens` (bytes, id) and of the single bytes: `singles[b]` is the id a one-byte piece `b`
    /// encodes to (NONE: none). Empty byte strings and tokens of one byte are left out of `tokens`' (the byte
    /// table's id is the one a piece of one byte gets), so that every piece of up to 8 bytes finds its token
    /// here in one probe, whatever its length (see `get_up_to_8`).
    pub(super) fn new<'a>(tokens: impl Iterator<Item = (&'a [u8], u32)> + Clone, singles: &[u32; 256]) -> WholeTable {
        let count =
            |range: std::ops::RangeInclusive<usize>| tokens.clone().filter(|(b, _)| range.contains(&b.len())).count();
        let single_count = singles.iter().filter(|&&id| id != NONE).count();
        let (short_slots, medium_slots) = (slots_for(count(2..=8) + single_count), slots_for(count(9..=16)));
        let bytes = short_slots * size_of::<ShortSlot>() + medium_slots * size_of::<MediumSlot>();
        let pages = if bytes >= HUGE_PAGES_FROM { Pages::Huge } else { Pages::Small };
        let mut table = WholeTable {
            short: HugeSlice::filled(short_slots, ShortSlot::default(), pages),
            short_mask: short_slots - 1,
            short_shift: shift_for(short_slots),
            medium: HugeSlice::filled(medium_slots, MediumSlot::default(), pages),
            long: FxHashMap::default(),
            medium_filter: HashBits::new(medium_slots << FILTER_BITS_LOG),
            short_filter: HashBits::new(short_slots << FILTER_BITS_LOG),
            short_filter_shift: shift_for(short_slots) - FILTER_BITS_LOG,
        };
        let singles = (0..256).filter(|&b| singles[b] != NONE).map(|b| (&EVERY_BYTE[b..=b], singles[b]));
        let tokens = tokens.filter(|(bytes, _)| bytes.len() != 1);
        for (bytes, id) in singles.chain(tokens) {
            let key = Key::of(bytes);
            match bytes.len() {
                0 => {}
                1..=8 => {
                    table.short_filter.set((short_product(key.first) >> table.short_filter_shift) as usize);
                    let start = short_start(key.first, table.short_shift);
                    let slot = ShortSlot { bytes: key.first, id, len: key.len as u16, reach: 0 };
                    place(&mut table.short, start, key, slot);
                }
                9..=16 => {
                    let hash = key.hash();
                    table.medium_filter.set(hash as usize); // (its low bits: the slot's start takes the high ones)
                    let start = start(hash, table.medium.len());
                    let slot = MediumSlot { first: key.first, last: key.last, id, len: key.len as u16, reach: 0 };
                    place(&mut table.medium, start, key, slot);
                }
                _ => {
                    table.long.entry(bytes.into()).or_insert(id);
                }
            }
        }
        table
    }

    /// The token `piece` is (whose key and hash are given), if it is one of the table's; NONE if not.
    #[cfg(test)]
    fn get(&self, piece: &[u8], key: Key, hash: u64) -> u32 {
        match piece.len() {
            0 | 1 => NONE,
            2..=16 => self.get_short(piece.len(), key, hash),
            _ => self.get_long(piece),
        }
    }

    /// The token a piece of `len` bytes, 2 to 16, is (given its key and hash), if it is one of the table's; NONE
    /// if not.
    #[inline(always)]
    pub(super) fn get_short(&self, len: usize, key: Key, hash: u64) -> u32 {
        debug_assert!((2..=16).contains(&len));
        match len {
            2..=8 => self.get_up_to_8(key),
            _ => self.get_medium(key, hash),
        }
    }

    /// Whether the filter lets a medium piece (given its hash) through to the table: always for a token.
    #[inline(always)]
    fn medium_filter_passes(&self, hash: u64) -> bool {
        self.medium_filter.has(hash as usize)
    }

    /// The token a piece of 9 to 16 bytes is (given its key and hash), if it is one of the table's; NONE if
    /// not. A piece that is no token stops at its start's reach, as in `ShortFinder::find`.
    #[inline(always)]
    fn get_medium(&self, key: Key, hash: u64) -> u32 {
        if !self.medium_filter_passes(hash) {
            return NONE;
        }
        let mask = self.medium.len() - 1;
        let at = start(hash, self.medium.len());
        // The line after the first slot's (two slots to a line), asked for now: a walk past the first slot
        // waited for it only once the reach was read, where a walk to a free slot had asked for it at once.
        // SAFETY: the index is masked by `mask`, which is `medium.len() - 1`.
        crate::prefetch(unsafe { self.medium.get_unchecked(((at | 1) + 1) & mask) });
        // SAFETY: `at` is masked by `mask`, which is `medium.len() - 1` (a power of two, at least 16).
        let first = unsafe { self.medium.get_unchecked(at) };
        if first.holds(key) {
            return first.id;
        }
        find_past(&self.medium, mask, key, at, first.reach).unwrap_or(NONE)
    }

    /// The token a piece of 1 to 8 bytes is (given its key), if it is one of the table's (for one byte,
    /// the id the piece encodes to); NONE if not.
    #[inline(always)]
    pub(super) fn get_up_to_8(&self, key: Key) -> u32 {
        self.short_finder().find(key).unwrap_or(NONE)
    }

    /// The table of pieces of 1 to 8 bytes as a `ShortFinder` (its pointer and mask, for a loop to keep in
    /// registers).
    #[inline(always)]
    pub(super) fn short_finder(&self) -> ShortFinder<'_> {
        ShortFinder {
            slots: &self.short,
            mask: self.short_mask,
            shift: self.short_shift,
            filter: &self.short_filter,
            filter_shift: self.short_filter_shift,
        }
    }

    /// Asks for the lines of the slots of pieces of up to 8 bytes, if they take at most `short_most` bytes, and
    /// of 9 to 16 bytes too, if both take at most `both_most`, one after another, into this core's second-level
    /// cache. For a thread about to encode with the table for the first time (see `PieceEncoder::begin`).
    pub(super) fn warm(&self, short_most: usize, both_most: usize) {
        let short = size_of_val::<[ShortSlot]>(&self.short);
        let medium = size_of_val::<[MediumSlot]>(&self.medium);
        if short <= short_most {
            crate::prefetch_lines(self.short.as_ptr().cast(), short);
        }
        if short + medium <= both_most {
            crate::prefetch_lines(self.medium.as_ptr().cast(), medium);
        }
    }

    /// The token a piece of more than 16 bytes is, if it is one of the table's; NONE if not.
    #[inline]
    pub(super) fn get_long(&self, piece: &[u8]) -> u32 {
        self.long.get(piece).copied().unwrap_or(NONE)
    }

    /// Bytes the table takes (for the notes; the test keeps them honest).
    #[cfg(test)]
    fn size_in_bytes(&self) -> usize {
        self.short.len() * size_of::<ShortSlot>()
            + self.medium.len() * size_of::<MediumSlot>()
            + self.medium_filter.size_in_bytes()
            + self.short_filter.size_in_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_token_and_nothing_else() {
        let mut tokens: Vec<Vec<u8>> = Vec::new();
        for n in 2..=40usize {
            for k in 0..60u8 {
                // Tokens that share first and last bytes, zero bytes, every length.
                tokens.push((0..n).map(|i| if i == n / 2 { k } else { (i % 3) as u8 }).collect());
            }
        }
        tokens.push(b"a\0".to_vec());
        tokens.push(b"a\0\0".to_vec());
        let table = WholeTable::new(tokens.iter().enumerate().map(|(id, t)| (t.as_slice(), id as u32)), &[NONE; 256]);
        for (id, t) in tokens.iter().enumerate() {
            let key = Key::of(t);
            assert_eq!(table.get(t, key, key.hash()), id as u32, "{t:?}");
        }
        for absent in [&b"a"[..], b"a\0\0\0", b"zz", &[0u8; 17], &[1u8; 9]] {
            let key = Key::of(absent);
            assert_eq!(table.get(absent, key, key.hash()), NONE, "{absent:?}");
        }
        // A token listed twice keeps its first id.
        let twice = WholeTable::new([(&b"ab"[..], 7), (&b"ab"[..], 9)].into_iter(), &[NONE; 256]);
        assert_eq!(twice.get(b"ab", Key::of(b"ab"), Key::of(b"ab").hash()), 7);
        assert!(table.size_in_bytes() < 200_000);
    }

    /// The medium tokens' filter lets every token through (the test above finds each) and turns most pieces of
    /// 9–16 bytes that are no token away before any slot is read.
    #[test]
    fn the_medium_filter_turns_most_pieces_that_are_no_token_away() {
        let tokens: Vec<Vec<u8>> = (0..3_000u32).map(|i| format!("token{i:07}").into_bytes()).collect();
        let table = WholeTable::new(tokens.iter().enumerate().map(|(id, t)| (t.as_slice(), id as u32)), &[NONE; 256]);
        let passes = |piece: &[u8]| table.medium_filter_passes(Key::of(piece).hash());
        assert!(tokens.iter().all(|t| passes(t)));
        let absent: Vec<Vec<u8>> = (0..10_000u32).map(|i| format!("absent{i:06}").into_bytes()).collect();
        let let_through = absent.iter().filter(|p| passes(p)).count();
        assert!(let_through < absent.len() / 5, "{let_through} of {} let through", absent.len());
        for piece in &absent {
            let key = Key::of(piece);
            assert_eq!(table.get(piece, key, key.hash()), NONE);
        }
    }

    /// The short tokens' filter lets every token of up to 8 bytes through and turns most pieces that are no token
    /// away (2 248 of these 20 000 let through, the table 0.61 full).
    #[test]
    fn the_short_filter_turns_most_pieces_that_are_no_token_away() {
        let tokens: Vec<Vec<u8>> = (0..20_000u32).map(|i| format!("t{i:05}").into_bytes()).collect();
        let table = WholeTable::new(tokens.iter().enumerate().map(|(id, t)| (t.as_slice(), id as u32)), &[NONE; 256]);
        let short = table.short_finder();
        assert!(tokens.iter().all(|t| short.may_hold(Key::of(t))));
        assert!(tokens.iter().enumerate().all(|(id, t)| short.find_unless_filtered(Key::of(t)) == Some(id as u32)));
        let absent: Vec<Vec<u8>> = (0..20_000u32).map(|i| format!("a{i:05}").into_bytes()).collect();
        let let_through = absent.iter().filter(|p| short.may_hold(Key::of(p))).count();
        assert!(let_through < absent.len() / 5, "{let_through} of {} let through", absent.len());
        assert!(absent.iter().all(|p| short.find_unless_filtered(Key::of(p)).is_none()));
    }

    /// Tokens piled up on one start (made from the multiplier's inverse, so that their products are small and
    /// their starts all 0): 100 of them, which the start's reach counts (99 slots past it), and 400, beyond
    /// what a reach counts. Every one is found, and pieces that are no token are not, at that start or near it.
    #[test]
    fn tokens_piled_on_one_start_are_found_within_and_past_its_reach() {
        const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut inverse = MULTIPLIER; // Newton's iteration: each step doubles the correct low bits
        for _ in 0..6 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(MULTIPLIER.wrapping_mul(inverse)));
        }
        assert_eq!(MULTIPLIER.wrapping_mul(inverse), 1);
        let piled = |i: u64| i.wrapping_mul(inverse).to_le_bytes();
        for (count, reach) in [(100, 99), (400, UNBOUNDED_REACH)] {
            let tokens: Vec<[u8; 8]> = (1..=count).map(piled).collect();
            let others = [&b"ab"[..], b"piece"];
            let table = WholeTable::new(
                tokens.iter().map(|t| &t[..]).chain(others).enumerate().map(|(id, t)| (t, id as u32)),
                &[NONE; 256],
            );
            assert_eq!(short_start(Key::of(&tokens[count as usize - 1]).first, table.short_shift), 0);
            assert_eq!(table.short[0].reach, reach, "{count} tokens");
            for (id, t) in tokens.iter().map(|t| &t[..]).chain(others).enumerate() {
                assert_eq!(table.get_up_to_8(Key::of(t)), id as u32, "token {id} of {count}");
            }
            for absent in [piled(count + 1), piled(0), *b"abcdefgh"] {
                assert_eq!(table.get_up_to_8(Key::of(&absent)), NONE, "{absent:?}");
            }
            assert_eq!(table.get_up_to_8(Key::of(b"abc")), NONE);
        }
    }

    /// The same for tokens of 9 to 16 bytes, found by search among numbered 12-byte strings: those whose hash
    /// starts them at slot 0 of the table that `count` of them make. 100 are counted by the start's reach, 400
    /// are beyond it; every one is found, and strings that are no token, at that start or not, are not.
    #[test]
    fn medium_tokens_piled_on_one_start_are_found_within_and_past_its_reach() {
        let numbered = |i: u64| format!("piled{i:07}").into_bytes();
        for (count, reach) in [(100usize, 99), (400, UNBOUNDED_REACH)] {
            let slots = slots_for(count);
            let at_zero = |b: &Vec<u8>| start(Key::of(b).hash(), slots) == 0;
            let mut strings = (0u64..).map(numbered);
            let tokens: Vec<Vec<u8>> = strings.by_ref().filter(at_zero).take(count).collect();
            let elsewhere: Vec<u8> = strings.by_ref().find(|b| !at_zero(b)).unwrap();
            let absent_at_zero: Vec<u8> = strings.find(at_zero).unwrap();
            let table =
                WholeTable::new(tokens.iter().enumerate().map(|(id, t)| (t.as_slice(), id as u32)), &[NONE; 256]);
            assert_eq!(table.medium.len(), slots);
            assert_eq!(table.medium[0].reach, reach, "{count} tokens");
            for (id, t) in tokens.iter().enumerate() {
                let key = Key::of(t);
                assert_eq!(table.get_short(t.len(), key, key.hash()), id as u32, "token {id} of {count}");
            }
            for absent in [absent_at_zero, elsewhere, b"piled-absent".to_vec()] {
                let key = Key::of(&absent);
                assert_eq!(table.get_short(absent.len(), key, key.hash()), NONE, "{absent:?}");
            }
        }
    }

    /// Pieces of up to 8 bytes that differ only in their last bytes (the top bytes of their key) start at
    /// different slots: the multiply carries every byte into the top bits `short_start` keeps.
    #[test]
    fn short_starts_depend_on_every_byte_of_a_piece() {
        for prefix in [&b" th"[..], b"ing", b" ", b"abcdef"] {
            let pieces: Vec<Vec<u8>> =
                (b'a'..=b'z').flat_map(|x| (b'a'..=b'z').map(move |y| [prefix, &[x, y]].concat())).collect();
            let starts: std::collections::HashSet<usize> =
                pieces.iter().map(|p| short_start(Key::of(p).first, shift_for(1 << 15))).collect();
            // 676 pieces in 32K slots: ~7 collide by chance.
            assert!(
                starts.len() >= 650,
                "{:?}…: {} starts for 676 pieces",
                String::from_utf8_lossy(prefix),
                starts.len()
            );
            assert!(starts.iter().all(|&at| at < 1 << 15));
        }
    }
}
