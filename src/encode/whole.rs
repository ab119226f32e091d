//! The whole-token table: every token that a piece may be looked up as whole (see `piece.rs`), keyed by its
//! bytes, built when the vocabulary loads and shared by every thread. It is the first place a piece the thread
//! has not met yet is looked for, so text the process has never seen finds its whole-token pieces — nearly all
//! the pieces of ordinary text — in one probe.
//!
//! Performance notes:
//! - Flat open-addressing arrays (linear probing, at most 3/4 full), one per length class, with the key in the
//!   slot: a lookup is one cache line, one or three integer compares. Pieces of up to 8 bytes (four fifths of
//!   the OpenAI tokens) take 8-byte slots, eight to a line (`ShortSlot`): 512 KB for r50k, 1 MB for cl100k,
//!   2 MB for o200k; 9–16 bytes take 32-byte slots (0.5 / 1 / 2 MB); the few longer tokens a hash map of their
//!   bytes. o200k's are on huge pages (`huge_pages.rs`, `HUGE_PAGES_FROM`).
//! - The short slots were 16 bytes (the zero-padded bytes, the id, the length): 1 / 2 / 4 MB, of which the
//!   block loop's probes and a new piece's span lookups read lines the caches no longer held. Packed into 8
//!   bytes (the piece's bytes and length as one word, multiplied by an odd constant, which loses nothing: the
//!   slot keeps the product's bits its index does not give): ~4 KB documents of English, `encode_to_numpy`, 3
//!   alternated process pairs each (cold / steady): r50k +1.6–4.4 % / −1.4 to +6.7 %, cl100k +3.3–6.4 % /
//!   +1–7.2 %, o200k +2.3–4.5 % / +0.7–7.2 %; Python source (o200k) the same within 2 %, base64 (cl100k, 4 MB)
//!   1–12 % less time. The cost: a table has at least as many short slots as ids (for the OpenAI vocabularies,
//!   the same number), and 8-byte tokens shaped as a shorter piece's word (`packed_key`) go to a side table.
//! - It replaced a `hashbrown` table of (key, id, boxed bytes) entries, which the per-thread "seen" table stood
//!   in front of: every new piece then missed the seen table, found its token in the big table (control bytes,
//!   then the entry) and was copied into the seen table, growing and rehashing it. Fresh English spent a fifth
//!   of its instructions there (2 MB, r50k, callgrind); whole-token pieces no longer enter the seen table.
//! - A piece of up to 8 bytes finds its slot from its bytes by one 64-bit multiply and a shift
//!   (`short_product`), its bytes masked to its length by a mask from a table (`Key::short`), rather than by the
//!   folded 128-bit product of `Key::hash` and shifts by the length. 1 MB of English encoded a second time
//!   (callgrind, r50k): 21.52 → 20.49 M instructions. ~4 KB documents, 10 MB cold then 10 MB steady, 6–8
//!   alternated process pairs: r50k +3.3 % / +3.8 %, cl100k +5 % / +5 %, o200k +8 % / +3 %. The start's
//!   quality is the old hash's: tokens at their first slot 70 % (r50k), 69 % (cl100k), 72 % (o200k) either way.
//! - The single bytes are in the short table too (at the id a one-byte piece encodes to), so that the block
//!   splitter's loop looks up every piece of up to 8 bytes the same way, without a branch on its length (see
//!   `EncodeSink::pieces_to` in `tokenizer.rs`).

use rustc_hash::FxHashMap;

use super::caches::Key;
use super::huge_pages::{HugeSlice, Pages};
use super::piece::NONE;

/// A token of up to 8 bytes in one word: the low `64 - bits` bits of its packed key's product (`short_product`)
/// above its id (the low `bits`, in a table of `2^bits` slots). The product's top `bits` bits are the slot's
/// index, so the slot and its index hold the whole product, and the product (an odd multiplier) the whole
/// packed key: a slot matches a piece exactly when `slot ^ (product << bits)` is below `2^bits`, and that is
/// the id. `FREE` (an id of all ones, which no table uses) marks a free slot.
type ShortSlot = u64;

const FREE: ShortSlot = u64::MAX;

/// The bytes no UTF-8 text holds: a piece's length is marked with one of them (see `packed_key`), so that no
/// piece of text is ever mistaken for a shorter one.
const NOT_IN_UTF8: [u8; 13] = [0xFF, 0xFE, 0xC0, 0xC1, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0xFA, 0xFB, 0xFC, 0xFD];

/// A piece of up to 8 bytes (`Key::first`, zero-padded) as one word: pieces of 1 to 7 bytes with `mark` in the
/// byte after their last, so that no two of them share a word; pieces of 8 bytes as they are. An 8-byte piece
/// whose highest non-zero byte is `mark` (a "twin", `is_twin`) has the word of a shorter piece: the table keeps
/// 8-byte tokens of that shape apart (`WholeTable::twins`), and the lookup that sees any bytes asks for them
/// there. Text never holds `mark` (one of `NOT_IN_UTF8`), so no piece of text is a twin.
///
/// ```text
/// "ab"         → 0x0000_0000_00FF_6261   (mark 0xFF)
/// "ab\xFF"    → 0x0000_0000_FFFF_6261
/// "abcdefgh"   → 0x6867_6665_6463_6261
/// ```
#[inline(always)]
fn packed_key(key: Key, mark: u64) -> u64 {
    debug_assert!((1..=8).contains(&key.len));
    // `mark << 1 << (8 * len - 1)`: the mark at byte `len`, and nothing for 8 bytes (shifted out).
    key.first | ((mark << 1) << (8 * key.len - 1))
}

/// Whether an 8-byte piece's word (`Key::first`) is some shorter piece's packed word under `mark`: its highest
/// non-zero byte, not its first, is `mark`.
#[inline]
fn is_twin(word: u64, mark: u64) -> bool {
    let top = word.checked_ilog2().unwrap_or(0) / 8;
    top > 0 && (word >> (8 * top)) & 0xFF == mark
}

/// The product a packed key is found by: its top bits are the slot probing starts at.
#[inline(always)]
fn short_product(packed: u64) -> u64 {
    packed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A token of 9 to 16 bytes: its first and last 8 bytes.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
struct MediumSlot {
    first: u64,
    last: u64,
    id: u32,
    len: u32,
}

#[derive(Clone, Debug)]
pub(super) struct WholeTable {
    short: HugeSlice<ShortSlot>,
    /// `short.len() - 1` (its length is `2^short_bits`, at least 16, and more than the largest id) and `64 -
    /// short_bits`: kept, so that a probe reads fields.
    short_mask: usize,
    short_shift: u32,
    short_bits: u32,
    /// The byte that marks a short piece's length (`packed_key`), one of `NOT_IN_UTF8`.
    mark: u64,
    /// The 8-byte tokens that are twins under `mark` (`is_twin`), by their bytes: none in the OpenAI
    /// vocabularies, whose 8-byte tokens hold no such byte.
    twins: FxHashMap<u64, u32>,
    medium: HugeSlice<MediumSlot>,
    /// Tokens longer than 16 bytes.
    long: FxHashMap<Box<[u8]>, u32>,
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

/// Slots for `count` tokens: a power of two, at most 3/4 full (at least 16).
fn slots_for(count: usize) -> usize {
    (count * 4 / 3 + 1).next_power_of_two().max(16)
}

/// The slot probing for a piece of 9 to 16 bytes starts at: its hash's high bits.
#[inline(always)]
fn start(hash: u64, slots: usize) -> usize {
    (hash >> 32) as usize & (slots - 1)
}

/// The shift that leaves the top `log2(slots)` bits of a product (`slots` a power of two).
fn shift_for(slots: usize) -> u32 {
    u64::BITS - slots.trailing_zeros()
}

/// `WholeTable::get_up_to_8` with the table's slots and fields copied out (see `WholeTable::short_finder`).
#[derive(Clone, Copy, Debug)]
pub(super) struct ShortFinder<'a> {
    slots: &'a [ShortSlot],
    mask: usize,
    shift: u32,
    bits: u32,
    mark: u64,
    twins: &'a FxHashMap<u64, u32>,
}

impl ShortFinder<'_> {
    /// The token a piece of 1 to 8 bytes is (given its key), if it is one of the table's: for any bytes.
    #[inline(always)]
    pub(super) fn find(&self, key: Key) -> Option<u32> {
        if key.len == 8 && is_twin(key.first, self.mark) {
            return self.twins.get(&key.first).copied();
        }
        self.find_in_text(key)
    }

    /// `find` for a piece of text (UTF-8, so never a twin: see `packed_key`): one probe and no check of the
    /// shape, for the block loop.
    #[inline(always)]
    pub(super) fn find_in_text(&self, key: Key) -> Option<u32> {
        debug_assert!(!(key.len == 8 && is_twin(key.first, self.mark)), "a twin looked up as text");
        let product = short_product(packed_key(key, self.mark));
        let mut at = (product >> self.shift) as usize;
        let rest = product << self.bits;
        let ids = (1u64 << self.bits) - 1;
        loop {
            debug_assert!(at < self.slots.len());
            // SAFETY: `at` is masked by `mask`, which is `slots.len() - 1` (or the top bits of a product for as
            // many slots).
            let slot = unsafe { *self.slots.get_unchecked(at) };
            let id = slot ^ rest;
            if id < ids {
                return Some(id as u32);
            }
            if slot & ids == ids {
                return None;
            }
            at = (at + 1) & self.mask;
        }
    }
}

/// The mark for a vocabulary's 8-byte tokens: the byte of `NOT_IN_UTF8` that the fewest of them are twins
/// under (none, for any vocabulary trained on text).
fn choose_mark<'a>(eight_byte_tokens: impl Iterator<Item = &'a [u8]>) -> u64 {
    let mut twins = [0usize; 256];
    for bytes in eight_byte_tokens {
        let word = Key::of(bytes).first;
        let top = word.checked_ilog2().unwrap_or(0) / 8;
        if top > 0 {
            twins[(word >> (8 * top)) as usize & 0xFF] += 1;
        }
    }
    let fewest = NOT_IN_UTF8.iter().min_by_key(|&&b| twins[b as usize]).expect("13 bytes");
    *fewest as u64
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
        // A short slot's id takes the index's bits: at least as many slots as ids, and one more (`FREE`).
        let largest_id = tokens.clone().map(|(_, id)| id).chain(singles.iter().copied().filter(|&id| id != NONE)).max();
        let for_ids = largest_id.map_or(0, |id| id as usize + 2).next_power_of_two();
        let short_slots = slots_for(count(2..=8) + single_count).max(for_ids);
        let medium_slots = slots_for(count(9..=16));
        let bytes = short_slots * size_of::<ShortSlot>() + medium_slots * size_of::<MediumSlot>();
        let pages = if bytes >= HUGE_PAGES_FROM { Pages::Huge } else { Pages::Small };
        let mut table = WholeTable {
            short: HugeSlice::filled(short_slots, FREE, pages),
            short_mask: short_slots - 1,
            short_shift: shift_for(short_slots),
            short_bits: short_slots.trailing_zeros(),
            mark: choose_mark(tokens.clone().map(|(bytes, _)| bytes).filter(|bytes| bytes.len() == 8)),
            twins: FxHashMap::default(),
            medium: HugeSlice::filled(medium_slots, MediumSlot::default(), pages),
            long: FxHashMap::default(),
        };
        let singles = (0..256).filter(|&b| singles[b] != NONE).map(|b| (&EVERY_BYTE[b..=b], singles[b]));
        let tokens = tokens.filter(|(bytes, _)| bytes.len() != 1);
        for (bytes, id) in singles.chain(tokens) {
            let key = Key::of(bytes);
            match bytes.len() {
                0 => {}
                // A token listed twice keeps its first id (as a piece looked up whole would have found).
                8 if is_twin(key.first, table.mark) => {
                    table.twins.entry(key.first).or_insert(id);
                }
                1..=8 => {
                    if table.short_finder().find_in_text(key).is_none() {
                        let product = short_product(packed_key(key, table.mark));
                        let mut at = (product >> table.short_shift) as usize;
                        while table.short[at] != FREE {
                            at = (at + 1) & table.short_mask;
                        }
                        table.short[at] = (product << table.short_bits) | id as u64;
                    }
                }
                9..=16 => {
                    let mask = table.medium.len() - 1;
                    let mut at = start(key.hash(), table.medium.len());
                    while table.medium[at].len != 0
                        && !(table.medium[at].first == key.first
                            && table.medium[at].last == key.last
                            && table.medium[at].len as u64 == key.len)
                    {
                        at = (at + 1) & mask;
                    }
                    if table.medium[at].len == 0 {
                        table.medium[at] = MediumSlot { first: key.first, last: key.last, id, len: key.len as u32 };
                    }
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
            _ => {
                let mask = self.medium.len() - 1;
                let mut at = start(hash, self.medium.len());
                loop {
                    let slot = &self.medium[at];
                    if slot.first == key.first && slot.last == key.last && slot.len as u64 == key.len {
                        return slot.id;
                    }
                    if slot.len == 0 {
                        return NONE;
                    }
                    at = (at + 1) & mask;
                }
            }
        }
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
            bits: self.short_bits,
            mark: self.mark,
            twins: &self.twins,
        }
    }

    /// Starts loading the slot where a piece of 1 to 8 bytes with this key is first looked for.
    #[inline(always)]
    pub(super) fn prefetch_up_to_8(&self, key: Key) {
        crate::prefetch(&self.short[(short_product(packed_key(key, self.mark)) >> self.short_shift) as usize]);
    }

    /// The token a piece of more than 16 bytes is, if it is one of the table's; NONE if not.
    #[inline]
    pub(super) fn get_long(&self, piece: &[u8]) -> u32 {
        self.long.get(piece).copied().unwrap_or(NONE)
    }

    /// Bytes the table takes (for the notes; the test keeps them honest).
    #[cfg(test)]
    fn size_in_bytes(&self) -> usize {
        self.short.len() * size_of::<ShortSlot>() + self.medium.len() * size_of::<MediumSlot>()
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

    /// Pieces of up to 8 bytes that differ only in their last bytes (the top bytes of their key) start at
    /// different slots: the multiply carries every byte into the top bits the table's index keeps.
    #[test]
    fn short_starts_depend_on_every_byte_of_a_piece() {
        for prefix in [&b" th"[..], b"ing", b" ", b"abcdef"] {
            let pieces: Vec<Vec<u8>> =
                (b'a'..=b'z').flat_map(|x| (b'a'..=b'z').map(move |y| [prefix, &[x, y]].concat())).collect();
            let starts: std::collections::HashSet<usize> = pieces
                .iter()
                .map(|p| (short_product(packed_key(Key::of(p), 0xFF)) >> shift_for(1 << 15)) as usize)
                .collect();
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

    /// Pieces of 1 to 7 bytes never share a packed word, whatever their bytes (the mark among them, and zeros):
    /// all 1- and 2-byte pieces, and longer ones built from the bytes most likely to confuse the packing.
    #[test]
    fn packed_words_of_shorter_pieces_are_distinct() {
        let tricky = [0x00u8, 0x01, 0x61, 0xFE, 0xFF];
        let mut pieces: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        pieces.extend((0..=255u8).flat_map(|a| (0..=255u8).map(move |b| vec![a, b])));
        for len in 3..=7u32 {
            for n in 0..tricky.len().pow(len.min(5)) {
                let mut p: Vec<u8> = (0..len.min(5)).map(|i| tricky[n / tricky.len().pow(i) % tricky.len()]).collect();
                p.resize(len as usize, 0xFF);
                pieces.push(p);
            }
        }
        let mut seen = std::collections::HashMap::new();
        for p in &pieces {
            if let Some(other) = seen.insert(packed_key(Key::of(p), 0xFF), p.clone()) {
                assert_eq!(&other, p, "two pieces share a packed word");
            }
        }
    }

    /// An 8-byte piece whose highest non-zero byte is the mark (a twin) is never found as the shorter piece
    /// it shares a word with, as a token or as a query, whichever mark the table chose.
    #[test]
    fn twins_are_found_only_as_themselves() {
        // "ab" and "ab\xFF\0\0\0\0\0" share a word under the mark 0xFF.
        let twin = b"ab\xFF\0\0\0\0\0";
        let short_only = WholeTable::new([(&b"ab"[..], 3)].into_iter(), &[NONE; 256]);
        assert_eq!(short_only.get_up_to_8(Key::of(twin)), NONE);
        assert_eq!(short_only.get_up_to_8(Key::of(b"ab")), 3);
        let both = WholeTable::new([(&b"ab"[..], 3), (&twin[..], 4)].into_iter(), &[NONE; 256]);
        assert_eq!(both.get_up_to_8(Key::of(twin)), 4);
        assert_eq!(both.get_up_to_8(Key::of(b"ab")), 3);
        assert_ne!(both.mark, 0xFF, "a mark no 8-byte token is a twin under");
        // Twins under every mark a table may choose: some stay twins, kept apart and still found.
        let mut tokens: Vec<Vec<u8>> = vec![b"ab".to_vec(), b"abcdefg".to_vec()];
        for &mark in &NOT_IN_UTF8 {
            tokens.push([&b"abcdefg"[..], &[mark]].concat());
            tokens.push([&b"ab"[..], &[mark], &[0; 5]].concat());
        }
        let table = WholeTable::new(tokens.iter().enumerate().map(|(id, t)| (t.as_slice(), id as u32)), &[NONE; 256]);
        assert!(!table.twins.is_empty());
        for (id, t) in tokens.iter().enumerate() {
            assert_eq!(table.get_up_to_8(Key::of(t)), id as u32, "{t:?}");
        }
        for absent in [&b"abcdefg\x01"[..], b"ab\x01\0\0\0\0\0", b"abcdef"] {
            assert_eq!(table.get_up_to_8(Key::of(absent)), NONE, "{absent:?}");
        }
    }

    /// The ids a short slot holds take the index's bits: a table of few short tokens but large ids still finds
    /// them (it has at least as many slots as ids).
    #[test]
    fn large_ids_fit_their_slots() {
        let tokens: Vec<(Vec<u8>, u32)> = (0..40u32).map(|i| (format!("t{i}").into_bytes(), 100_000 + i)).collect();
        let table = WholeTable::new(tokens.iter().map(|(t, id)| (t.as_slice(), *id)), &[NONE; 256]);
        for (t, id) in &tokens {
            assert_eq!(table.get_up_to_8(Key::of(t)), *id);
        }
        assert_eq!(table.get_up_to_8(Key::of(b"t40")), NONE);
        assert!(table.short.len() > 100_040);
    }
}
