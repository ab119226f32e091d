//! The block pre-tokenizer for the built-in byte-level patterns (GPT-2's, cl100k's, o200k's): the same pieces as
//! the hand-written splitters in `lexer.rs` (and so as fancy-regex), found 64 bytes at a time.
//!
//! Each 64-byte block is classified into one bit mask per character class (letters, upper and lower case,
//! digits, whitespace, CR/LF, space, apostrophe, slash; UTF-8 continuation bytes): a handful of vector compares
//! (`cpu.rs` picks AVX-512BW, AVX2 or plain 64-bit words at run time; all three give the same masks). A non-ASCII
//! character is looked up in the Unicode class table (`classes.rs`) and its class painted over all its bytes, so
//! that a multi-byte character reads, to the masks, as a run of its class. The bytes where pieces start then
//! come out of bit arithmetic on the masks of the block and its two neighbours (`Rules`: one set per pattern,
//! each rule derived, in the comments, from the pattern's alternatives), and the pieces are handed to the sink
//! by walking the set bits. The rare cases the arithmetic leaves open — contractions, digit runs cut in threes,
//! the last line break of a whitespace run — are settled by short loops over their few candidate bits.
//!
//! A block the arithmetic cannot settle is split by the scalar lexer instead, from the last piece start: blocks
//! with characters whose classes overlap in o200k's pattern (modifier and other letters, marks: CJK text), or
//! with non-ASCII numbers under cl100k/o200k (`\p{N}{1,3}` counts characters), their neighbours, and
//! whitespace runs too long to see the end of. Both give the regex's pieces, so the choice changes speed only.
//!
//! Performance notes. Single thread, `cargo run --release --example encode_fresh ENCODING 2 split` (the splitter
//! alone on 2 MB of fresh Gutenberg English), instructions counted by callgrind, which runs the AVX2 code (it
//! has no AVX-512); the development machine was shared, its wall clock too noisy to compare by:
//!
//! | pattern | scalar lexer | block scanner (AVX2) |
//! |---|--:|--:|
//! | r50k/p50k (GPT-2) | 33.2 M | 14.0 M |
//! | cl100k | 37.8 M | 18.5 M |
//! | o200k | 51.2 M | 18.7 M |
//!
//! - Wall clock, same runs, AVX-512, loaded machine: r50k 600 → 1,100–1,500 MB/s.
//! - A fifth of English's 64-byte blocks hold a non-ASCII character (curly quotes, dashes in Gutenberg), and
//!   two fifths are within a block of one: handing those to the scalar lexer would have left half the text on
//!   the slow path, hence the painting.
//! - Multilingual text (1 MB of the multilingual files): most blocks hold more than `DENSE` non-ASCII characters
//!   and go to the scalar lexer; classifying them on the way costs cl100k 38.8 → 45.5 M instructions (+17%),
//!   o200k 51.4 → 52.9 M. Painting every block instead cost more (52.8 M for cl100k).
//! - Classifying with AVX2, the optimiser first turned the 64-bit masks back into bytes (~900 instructions a
//!   block, 39.7 M for r50k): each half's `movemask` now goes through an empty `asm!` it cannot see through.
//! - Per piece the walk costs a `tzcnt`, a clear of the lowest bit and the sink's call; per block, ~150 mask
//!   operations and one unpredictable branch per candidate bit of the rare cases. A sink that asks
//!   (`PieceSink::by_block`: the encoder, on text whose pieces are mostly tokens) gets a block's pieces at once,
//!   as its mask of piece starts, and loops over them without the splitter's work in between.

use super::PieceSink;
use super::classes::{
    ClassTable, Classes, LETTER, LOWERCASE_LETTER, MARK, MODIFIER_LETTER, NUMBER, OTHER_LETTER, SPACE,
    TITLECASE_LETTER, UPPERCASE_LETTER, table,
};
use super::lexer::{
    Scanner, cl100k_piece_end, decode_non_ascii, gpt2_piece_end, o200k_piece_end, split_cl100k_scalar,
    split_gpt2_scalar, split_o200k_scalar,
};
use crate::cpu::Level;

const BLOCK: usize = 64;

/// Which pattern's pieces to find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Gpt2,
    Cl100k,
    O200k,
}

/// Calls `sink` with each piece of `text` under `pattern`, finding them with the `level` instruction set (a
/// level above what the CPU has is lowered to what it has). At the portable level the scalar lexer splits: the
/// rules need vector compares to pay (classifying in plain 64-bit words, 2 MB of English cost 46 M instructions
/// with the rules, against 34 M for the whole scalar lexer; callgrind).
pub fn split<'t>(pattern: Pattern, text: &'t str, sink: &mut impl PieceSink<'t>, level: Level) {
    let level = level.min(crate::cpu::detected());
    match pattern {
        Pattern::Gpt2 => split_at_level::<Gpt2>(text, sink, level),
        Pattern::Cl100k => split_at_level::<Cl100k>(text, sink, level),
        Pattern::O200k => split_at_level::<O200k>(text, sink, level),
    }
}

#[inline(always)]
fn split_at_level<'t, R: Rules>(text: &'t str, sink: &mut impl PieceSink<'t>, level: Level) {
    match level {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `split` lowered `level` to what `cpu::detected` found this CPU has.
        Level::Avx512 => unsafe { split_avx512::<R>(text, sink) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Level::Avx2 => unsafe { split_avx2::<R>(text, sink) },
        _ => R::split_scalar(text, sink),
    }
}

/// The rules with the masks computed in plain 64-bit words: what the vector levels compute, on any CPU (the
/// tests hold it to the scalar lexer where no vector level exists).
#[cfg(test)]
pub(super) fn split_portable_rules<'t>(pattern: Pattern, text: &'t str, sink: &mut impl PieceSink<'t>) {
    match pattern {
        Pattern::Gpt2 => split_with::<Portable, Gpt2>(text, sink),
        Pattern::Cl100k => split_with::<Portable, Cl100k>(text, sink),
        Pattern::O200k => split_with::<Portable, O200k>(text, sink),
    }
}

/// `split_with` compiled for AVX-512BW (its classification inlined with the vector instructions).
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,bmi1,bmi2,popcnt,lzcnt")]
unsafe fn split_avx512<'t, R: Rules>(text: &'t str, sink: &mut impl PieceSink<'t>) {
    split_with::<Avx512, R>(text, sink)
}

/// `split_with` compiled for AVX2.
///
/// # Safety
/// The CPU must have AVX2, BMI1/2, POPCNT and LZCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt,lzcnt")]
unsafe fn split_avx2<'t, R: Rules>(text: &'t str, sink: &mut impl PieceSink<'t>) {
    split_with::<Avx2, R>(text, sink)
}

// -- classification -----------------------------------------------------------------------------------------

/// The ASCII classes of a block's bytes, one bit per byte (bit i: byte i), as the vector code finds them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Ascii {
    upper: u64,
    lower: u64,
    digit: u64,
    /// `\s` among ASCII: tab, LF, VT, FF, CR, space.
    ws: u64,
    /// CR or LF.
    nl: u64,
    space: u64,
    apos: u64,
    slash: u64,
    /// Bytes 0x80 and up.
    non_ascii: u64,
    /// UTF-8 continuation bytes (0x80–0xBF).
    cont: u64,
}

/// Classifies 64 bytes.
trait Classifier {
    /// # Safety
    /// `block` must point to 64 readable bytes, and the CPU must have the instructions of the implementation's
    /// level. (A pointer, not a `&[u8; 64]`: given an array, the compiler assembled the vector byte by byte.)
    unsafe fn ascii(block: *const u8) -> Ascii;
}

/// Plain 64-bit words, eight bytes at a time: any CPU (for the tests: see `split`).
#[cfg(test)]
struct Portable;

#[cfg(test)]
impl Classifier for Portable {
    #[inline(always)]
    unsafe fn ascii(block: *const u8) -> Ascii {
        // SAFETY: the caller gives 64 readable bytes.
        portable_ascii(unsafe { &*block.cast::<[u8; BLOCK]>() })
    }
}

/// The high bit of each byte of a word.
#[cfg(test)]
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that is ASCII and in `lo..=hi` (see `lexer::ascii_in_range`).
#[cfg(test)]
#[inline(always)]
fn in_range(word: u64, lo: u8, hi: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let low7 = word & !HIGH;
    let at_least_lo = low7 + ONES * (0x80 - lo as u64);
    let above_hi = low7 + ONES * (0x7F - hi as u64);
    at_least_lo & !above_hi & !word & HIGH
}

/// The eight high bits of a word's bytes, as the low eight bits (byte k → bit k): the multiply moves each
/// byte's flag to a distinct bit of the top byte, with no two partial products overlapping.
#[cfg(test)]
#[inline(always)]
fn gather(high_bits: u64) -> u64 {
    ((high_bits >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

#[cfg(test)]
fn portable_ascii(block: &[u8; BLOCK]) -> Ascii {
    let mut m = Ascii::default();
    for (k, chunk) in block.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let at = 8 * k;
        let eq = |c: u8| in_range(word, c, c);
        let space = eq(b' ');
        m.upper |= gather(in_range(word, b'A', b'Z')) << at;
        m.lower |= gather(in_range(word, b'a', b'z')) << at;
        m.digit |= gather(in_range(word, b'0', b'9')) << at;
        m.ws |= gather(in_range(word, b'\t', b'\r') | space) << at;
        m.nl |= gather(eq(b'\n') | eq(b'\r')) << at;
        m.space |= gather(space) << at;
        m.apos |= gather(eq(b'\'')) << at;
        m.slash |= gather(eq(b'/')) << at;
        m.non_ascii |= gather(word & HIGH) << at;
        // 10xxxxxx: the high bit set, the next one clear (shifted up into the high bit's place).
        m.cont |= gather(word & HIGH & !(word << 1)) << at;
    }
    m
}

/// AVX-512BW: one 64-byte register, a mask per compare.
#[cfg(target_arch = "x86_64")]
struct Avx512;

#[cfg(target_arch = "x86_64")]
impl Classifier for Avx512 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn ascii(block: *const u8) -> Ascii {
        use std::arch::x86_64::*;
        // SAFETY: an unaligned load of the 64 bytes the caller gives.
        let v = unsafe { _mm512_loadu_si512(block.cast()) };
        // Bytes in lo..=lo+span (unsigned): subtract lo, compare.
        macro_rules! range {
            ($lo:expr, $span:expr) => {
                _mm512_cmple_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8($lo as i8)), _mm512_set1_epi8($span as i8))
            };
        }
        macro_rules! eq {
            ($c:expr) => {
                _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8($c as i8))
            };
        }
        let space = eq!(b' ');
        Ascii {
            upper: range!(b'A', 25),
            lower: range!(b'a', 25),
            digit: range!(b'0', 9),
            ws: range!(b'\t', 4) | space,
            nl: eq!(b'\n') | eq!(b'\r'),
            space,
            apos: eq!(b'\''),
            slash: eq!(b'/'),
            non_ascii: _mm512_movepi8_mask(v),
            cont: range!(0x80u8, 0x3F),
        }
    }
}

/// AVX2: two 32-byte halves, a `movemask` per compare.
#[cfg(target_arch = "x86_64")]
struct Avx2;

#[cfg(target_arch = "x86_64")]
impl Classifier for Avx2 {
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn ascii(block: *const u8) -> Ascii {
        use std::arch::x86_64::*;
        // SAFETY: unaligned loads of the two 32-byte halves of the 64 bytes the caller gives.
        let (lo, hi) = unsafe { (_mm256_loadu_si256(block.cast()), _mm256_loadu_si256(block.add(32).cast())) };
        // Each half's mask passes through `opaque`: seen as the bits of a vector compare, the 64-bit masks were
        // turned back into bytes, shuffled and repacked by the optimiser (~900 instructions a block, callgrind).
        macro_rules! both {
            (|$v:ident| $e:expr) => {{
                let low = {
                    let $v = lo;
                    opaque(_mm256_movemask_epi8($e)) as u32 as u64
                };
                let high = {
                    let $v = hi;
                    opaque(_mm256_movemask_epi8($e)) as u32 as u64
                };
                low | high << 32
            }};
        }
        // Unsigned `x - lo <= span`: the minimum of (x - lo) and span is (x - lo).
        macro_rules! range {
            ($v:ident, $lo:expr, $span:expr) => {{
                let shifted = _mm256_sub_epi8($v, _mm256_set1_epi8($lo as i8));
                _mm256_cmpeq_epi8(_mm256_min_epu8(shifted, _mm256_set1_epi8($span as i8)), shifted)
            }};
        }
        macro_rules! eq {
            ($v:ident, $c:expr) => {
                _mm256_cmpeq_epi8($v, _mm256_set1_epi8($c as i8))
            };
        }
        let space = both!(|v| eq!(v, b' '));
        Ascii {
            upper: both!(|v| range!(v, b'A', 25)),
            lower: both!(|v| range!(v, b'a', 25)),
            digit: both!(|v| range!(v, b'0', 9)),
            ws: both!(|v| range!(v, b'\t', 4)) | space,
            nl: both!(|v| eq!(v, b'\n')) | both!(|v| eq!(v, b'\r')),
            space,
            apos: both!(|v| eq!(v, b'\'')),
            slash: both!(|v| eq!(v, b'/')),
            non_ascii: both!(|v| v),
            cont: both!(|v| range!(v, 0x80u8, 0x3F)),
        }
    }
}

/// `x`, which the optimiser cannot see through (an empty assembly block claims to change it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn opaque(mut x: i32) -> i32 {
    // SAFETY: the assembly is empty: it reads and writes nothing but the register holding `x`.
    unsafe { std::arch::asm!("/* {0:e} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags)) };
    x
}

/// A block's classes once its non-ASCII characters are painted in: what the rules read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Masks {
    /// `\p{L}` (o200k: only Lu, Lt and Ll; its other letters are `complex`).
    letter: u64,
    /// Lu or Lt (o200k's UPPER without its overlap with LOWER).
    upper: u64,
    /// Ll.
    lower: u64,
    /// `\p{N}`.
    digit: u64,
    /// `\s`.
    ws: u64,
    /// Neither a letter, a number nor whitespace (for these patterns, "other"). Bytes past the text count here.
    other: u64,
    nl: u64,
    space: u64,
    apos: u64,
    slash: u64,
    cont: u64,
    /// Bytes of characters the rules cannot place for this pattern (see `Rules::COMPLEX`).
    complex: u64,
    /// Bytes past the end of the text.
    end: u64,
}

impl Masks {
    /// What comes before the text: nothing, of no class.
    const BEFORE: Masks = Masks {
        letter: 0,
        upper: 0,
        lower: 0,
        digit: 0,
        ws: 0,
        other: 0,
        nl: 0,
        space: 0,
        apos: 0,
        slash: 0,
        cont: 0,
        complex: 0,
        end: 0,
    };
    /// A block wholly past the end of the text.
    const PAST_END: Masks = Masks { other: !0, end: !0, ..Masks::BEFORE };
}

/// The classes of block `j` of `bytes`, non-ASCII characters painted (`complex`: the classes this pattern's
/// rules cannot place).
#[inline(always)]
fn classify<C: Classifier>(bytes: &[u8], j: usize, complex: Classes, table: &ClassTable) -> Masks {
    let base = j * BLOCK;
    let valid = (bytes.len() - base).min(BLOCK);
    let ascii = if valid == BLOCK {
        // SAFETY: 64 bytes from `base` are in `bytes` (`valid`), and `split_with::<C>` runs only at a level
        // `split` checked this CPU has.
        unsafe { C::ascii(bytes.as_ptr().add(base)) }
    } else {
        // The last block: zeros past the end (class "other", never a piece start: `end` masks them).
        let mut block = [0u8; BLOCK];
        block[..valid].copy_from_slice(&bytes[base..]);
        // SAFETY: as above, with the 64 bytes of `block`.
        unsafe { C::ascii(block.as_ptr()) }
    };
    let end = if valid == BLOCK { 0 } else { !0u64 << valid };
    let mut m = Masks {
        letter: ascii.upper | ascii.lower,
        upper: ascii.upper,
        lower: ascii.lower,
        digit: ascii.digit,
        ws: ascii.ws,
        other: 0,
        nl: ascii.nl,
        space: ascii.space,
        apos: ascii.apos,
        slash: ascii.slash,
        cont: ascii.cont,
        complex: 0,
        end,
    };
    if ascii.non_ascii != 0 {
        paint(&mut m, ascii.non_ascii, bytes, base, complex, table);
    }
    m.other = !(m.letter | m.digit | m.ws);
    m
}

/// Paints each non-ASCII character overlapping the block with its classes, over all its bytes (a character
/// begun in the block before, or running into the next, is painted over its bytes in this block).
///
/// A block the rules will not settle — one holding a character of a `complex` class, or more than `DENSE`
/// non-ASCII characters — is left unpainted after that character (after its first, when dense), and its bytes
/// from that character on are marked `complex`: the scalar lexer splits it, and what its neighbours' rules read
/// of it is its bytes up to there (the block before needs the class of the character after its last one) and
/// that it is `complex` from there (where they stop). Painting costs about what the scalar lexer spends on a
/// character (decoding it and looking up its classes): on 1 MB of the multilingual files, cl100k, painting
/// every block took 52.8 M instructions to split against the scalar lexer's 38.8 M (callgrind).
#[cold]
#[inline(never)]
fn paint(m: &mut Masks, non_ascii: u64, bytes: &[u8], base: usize, complex: Classes, table: &ClassTable) {
    let mut leads = non_ascii & !m.cont;
    if m.cont & 1 != 0 {
        // The block starts inside a character: paint its tail here too (its lead is at most 3 bytes back).
        let mut lead = base;
        while lead > 0 && bytes[lead] & 0xC0 == 0x80 {
            lead -= 1;
        }
        if paint_char(m, bytes, base, lead, table) & complex != 0 {
            m.complex = !0;
            return;
        }
    }
    let dense = leads.count_ones() > DENSE;
    while leads != 0 {
        let i = leads.trailing_zeros() as usize;
        leads &= leads - 1;
        // The first character painted is always painted whole: the block before reads the class of the
        // character after its last one (here, when that one ends in this block).
        if paint_char(m, bytes, base, base + i, table) & complex != 0 || dense {
            m.complex |= !0 << i;
            return;
        }
    }
}

/// More non-ASCII characters than this in a block, and the scalar lexer splits it (see `paint`).
const DENSE: u32 = 8;

/// Paints the character at `lead` over its bytes in the block at `base`; returns its classes.
#[inline]
fn paint_char(m: &mut Masks, bytes: &[u8], base: usize, lead: usize, table: &ClassTable) -> Classes {
    let (c, len) = decode_non_ascii(bytes, lead);
    let classes = table.of_code_point(c);
    // The character's bytes within this block.
    let first = lead.max(base) - base;
    let last = (lead + len).min(base + BLOCK) - base; // exclusive
    let bits = (u64::MAX >> (BLOCK - (last - first))) << first;
    if classes & LETTER != 0 {
        m.letter |= bits;
    }
    if classes & (UPPERCASE_LETTER | TITLECASE_LETTER) != 0 {
        m.upper |= bits;
    }
    if classes & LOWERCASE_LETTER != 0 {
        m.lower |= bits;
    }
    if classes & NUMBER != 0 {
        m.digit |= bits;
    }
    if classes & SPACE != 0 {
        m.ws |= bits;
    }
    classes
}

// -- bit helpers ---------------------------------------------------------------------------------------------

/// Bit i: bit i-1 of the block (bit 63 of the previous block for i = 0): "the byte before is ...".
#[inline(always)]
fn before(cur: u64, prev: u64) -> u64 {
    (cur << 1) | (prev >> 63)
}

#[inline(always)]
fn wide(low: u64, high: u64) -> u128 {
    low as u128 | (high as u128) << 64
}

/// The lead bytes of the characters `last` marks bytes of (in this block and the next: a character led in this
/// block may end in the next): each bit moved back over continuation bytes, at most three.
#[inline(always)]
fn leads_of(last: u128, cont: u128) -> u64 {
    let mut t = last;
    for _ in 0..3 {
        t |= (t & cont) >> 1;
    }
    (t & !cont) as u64
}

/// Spreads each bit of `seeds` forward along the runs of `run` it is in (seeds outside `run` stay as they are).
#[inline(always)]
fn spread(seeds: u64, run: u64) -> u64 {
    let mut x = seeds;
    let mut m = run;
    let mut step = 1;
    while step < BLOCK {
        x |= (x << step) & m;
        m &= m << step;
        step *= 2;
    }
    x
}

/// The digit-chunk starts of `\p{N}{1,3}` (ASCII digits): every third byte of a run from its start; `carried`:
/// the previous block's chunk starts, whose runs may go on here.
#[inline(always)]
fn chunk_starts(digit: u64, prev_digit: u64, carried: u64) -> u64 {
    // Bit i: bytes i-2, i-1, i are digits (a step of 3 from i-3 stays in the run).
    let three = digit & before(digit, prev_digit) & ((digit << 2) | (prev_digit >> 62));
    let mut x = (digit & !before(digit, prev_digit)) | ((carried >> 61) & three & 0b111);
    let mut m = three;
    let mut step = 3;
    while step < BLOCK {
        x |= (x << step) & m;
        m &= m << step;
        step *= 2;
    }
    x
}

// -- the rules ------------------------------------------------------------------------------------------------

/// The three blocks a block's piece starts depend on, and what the rules carry from block to block.
struct Window<'a> {
    prev: &'a Masks,
    cur: &'a Masks,
    next: &'a Masks,
    /// CR/LF (and, for o200k, `/`) taken into the piece of the punctuation before them (`[\r\n]*`), this block
    /// and the one before.
    absorbed: u64,
    prev_absorbed: u64,
    /// The digit-chunk starts of this block.
    chunks: u64,
}

/// What carries from one block to the next.
#[derive(Clone, Copy, Debug)]
struct Carry {
    absorbed: u64,
    chunks: u64,
    /// False when a run that reaches into the next block went through a character the masks do not place
    /// (`absorbed` and `chunks` may then be wrong there): the next block goes to the scalar lexer.
    exact: bool,
    /// The contraction effects of this block's pieces on the next block, when this block went through the rules
    /// (else unknown): starts to clear, starts to set.
    clear: u64,
    set: u64,
    known: bool,
    /// o200k: where the last contraction a word took ends (a word ending there has taken one already).
    contraction_end: usize,
}

impl Carry {
    const START: Carry =
        Carry { absorbed: 0, chunks: 0, exact: true, clear: 0, set: 0, known: true, contraction_end: usize::MAX };
}

/// A pattern's rules: where its pieces start in a block, and its scalar lexer for the blocks they leave open.
trait Rules {
    /// Classes of non-ASCII characters the rules cannot place for this pattern.
    const COMPLEX: Classes;
    /// Whether `[\r\n]*` after punctuation takes line breaks into its piece (cl100k, o200k; o200k also `/`).
    const ABSORBS: bool;
    /// o200k: `[\r\n/]*` rather than `[\r\n]*`.
    const ABSORBS_SLASH: bool = false;
    /// `\p{N}{1,3}` (cl100k, o200k) rather than `\p{N}+` (GPT-2).
    const CHUNKS_DIGITS: bool;

    /// The piece starts of the window's block (bit i: a piece starts at byte i), or None when the rules cannot
    /// settle them; `text` at `base` is the block.
    fn starts(w: &Window, text: &[u8], base: usize, carry: &mut Carry) -> Option<u64>;

    /// The scalar lexer: the end of the piece starting at `start`.
    fn piece_end(s: &Scanner, start: usize) -> usize;

    /// The scalar lexer on the whole text.
    fn split_scalar<'t>(text: &'t str, sink: &mut impl PieceSink<'t>);
}

/// Whitespace-run rules the three patterns share: the run's first character starts a piece; so does the last
/// character of a run of two or more before a non-space (`\s+(?!\S)` gives it back). Returns (first characters,
/// last characters of longer runs) for `ws` runs (cl100k/o200k: without the line breaks taken by punctuation),
/// where "longer" counts only `tail` characters (cl100k/o200k: a line break before the last character makes it
/// the first of its own part, which `line_break_tails` settles).
#[inline(always)]
fn ws_run_starts(w: &Window, ws: u64, prev_ws: u64, tail: u64, prev_tail: u64) -> u64 {
    let (cur, next) = (w.cur, w.next);
    let first = ws & !before(ws, prev_ws);
    // The last byte of a whitespace character followed by a character of the text that is not whitespace, moved
    // to the character's first byte (this block and the next: the character may cross into it).
    let ws2 = wide(cur.ws, next.ws);
    let end2 = wide(cur.end, next.end);
    let tail2 = wide(tail, next.ws & !next.nl);
    let last = tail2 & !(ws2 >> 1) & !(end2 >> 1);
    let last = leads_of(last, wide(cur.cont, next.cont));
    first | (last & before(tail, prev_tail))
}

/// cl100k and o200k: after a line break inside a whitespace run, the rest of the run (if it holds no further line
/// break) starts a piece: `\s*[\r\n]` ends at the run's last line break. cl100k only when the run does not reach
/// the end of the text (`\s++$` takes such a run whole). None when a run goes past the next block.
#[inline(always)]
fn line_break_tails(w: &Window, tail: u64, ws_kept: u64, prev_ws_kept: u64, to_end: bool) -> Option<u64> {
    let (prev, cur, next) = (w.prev, w.cur, w.next);
    let mut candidates = tail & before(cur.nl & ws_kept, prev.nl & prev_ws_kept);
    if candidates == 0 {
        return Some(0);
    }
    let tail2 = wide(tail, next.ws & !next.nl);
    let ws2 = wide(cur.ws, next.ws);
    let end2 = wide(cur.end, next.end);
    let mut starts = 0;
    while candidates != 0 {
        let c = candidates.trailing_zeros();
        candidates &= candidates - 1;
        let run_end = c + (tail2 >> c).trailing_ones();
        if run_end >= 128 || (wide(cur.complex, next.complex) >> c) & (u128::MAX >> (127 - (run_end - c))) != 0 {
            return None; // the run goes past the next block, or into bytes left unpainted
        }
        let ends_at_non_space = ws2 >> run_end & 1 == 0;
        if ends_at_non_space && (to_end || end2 >> run_end & 1 == 0) {
            starts |= 1 << c;
        }
    }
    Some(starts)
}

/// The bytes of the first character of each run of `other` that starts a piece (`starts`), in this block (a
/// character begun in the block before counts: its first byte is there).
#[inline(always)]
fn first_chars(starts: u64, prev_starts: u64, cur: &Masks, prev: &Masks) -> u128 {
    let cont = wide(prev.cont, cur.cont);
    let mut f = wide(prev_starts, starts);
    for _ in 0..3 {
        f |= (f << 1) & cont;
    }
    f
}

/// Contraction effects (`'s`, `'ll`, ... at `apostrophe`, of `len` bytes with the apostrophe): no piece starts
/// inside it, one starts after it. Effects past the block go to the next block through `carry`.
#[inline(always)]
fn contraction(starts: &mut u64, carry: &mut Carry, at: usize, len: usize, base: usize, text_len: usize) {
    for k in 1..=len {
        let p = at + k;
        let bit = |p: usize| p - base;
        if k < len {
            if bit(p) < BLOCK {
                *starts &= !(1 << bit(p));
            } else {
                carry.clear |= 1 << (bit(p) - BLOCK);
            }
        } else if p < text_len {
            if bit(p) < BLOCK {
                *starts |= 1 << bit(p);
            } else {
                carry.set |= 1 << (bit(p) - BLOCK);
            }
        }
    }
}

/// GPT-2's and cl100k's last step: `starts` with the previous block's contraction effects applied, then the
/// contractions at apostrophes that start a piece (`any_case`: cl100k's `(?i:...)`); effects past this block go
/// into `carry`.
#[inline(always)]
fn starts_with_contractions(
    starts: u64,
    apostrophes: u64,
    carry: &mut Carry,
    text: &[u8],
    base: usize,
    any_case: bool,
) -> u64 {
    let mut starts = (starts & !carry.clear) | carry.set;
    carry.clear = 0;
    carry.set = 0;
    let mut apostrophes = apostrophes & starts;
    if apostrophes != 0 {
        let scanner = Scanner::new_bytes(text);
        while apostrophes != 0 {
            let at = base + apostrophes.trailing_zeros() as usize;
            apostrophes &= apostrophes - 1;
            if let Some(len) = scanner.contraction_len(at, any_case) {
                contraction(&mut starts, carry, at, len, base, text.len());
            }
        }
    }
    starts
}

/// GPT-2: `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
struct Gpt2;

impl Rules for Gpt2 {
    const COMPLEX: Classes = 0;
    const ABSORBS: bool = false;
    const CHUNKS_DIGITS: bool = false;

    /// - A letter, number or other character starts a piece where its class changes, unless a space comes
    ///   before it (` ?` joins the space to the run).
    /// - Whitespace: the first character of a run, and the last of a run of two or more when a non-space
    ///   follows (`\s+(?!\S)` gives it back; the final `\s+` or the next piece takes it).
    /// - Contractions (lowercase ASCII) at an apostrophe that starts a piece: none inside, one after.
    #[inline(always)]
    fn starts(w: &Window, text: &[u8], base: usize, carry: &mut Carry) -> Option<u64> {
        let (prev, cur) = (w.prev, w.cur);
        let (l, d, o) = (cur.letter, cur.digit, cur.other);
        let class_change = (l & !before(l, prev.letter)) | (d & !before(d, prev.digit)) | (o & !before(o, prev.other));
        let starts = (class_change & !cur.ws & !before(cur.space, prev.space))
            | ws_run_starts(w, cur.ws, prev.ws, cur.ws, prev.ws);
        Some(starts_with_contractions(starts, cur.apos, carry, text, base, false))
    }

    #[inline(always)]
    fn piece_end(s: &Scanner, start: usize) -> usize {
        gpt2_piece_end(s, start)
    }

    fn split_scalar<'t>(text: &'t str, sink: &mut impl PieceSink<'t>) {
        split_gpt2_scalar(text, sink)
    }
}

/// cl100k: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+`
/// `|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
struct Cl100k;

impl Rules for Cl100k {
    const COMPLEX: Classes = NUMBER;
    const ABSORBS: bool = true;
    const CHUNKS_DIGITS: bool = true;

    /// - Letters: a run starts a piece, unless the character before it is its prefix: whitespace other than
    ///   CR/LF (the whitespace rules make it start a piece: it is a run's last character), or a run of one
    ///   other character that starts a piece itself (not after a space, which takes it: ` ?[^\s...]`).
    /// - Digits: every third from a run's start.
    /// - Other characters: a run starts a piece unless a space comes before it; the CR/LF right after it are
    ///   its piece's (`[\r\n]*+`).
    /// - Whitespace (without those CR/LF): a run's first character; after its last CR/LF, what is left of the
    ///   run unless it reaches the end of the text (`\s*[\r\n]`, `\s++$`); the last character of two or more
    ///   (no CR/LF) before a non-space.
    /// - Contractions (case-insensitive) at an apostrophe that starts a piece: none inside, one after.
    #[inline(always)]
    fn starts(w: &Window, text: &[u8], base: usize, carry: &mut Carry) -> Option<u64> {
        let (prev, cur) = (w.prev, w.cur);
        let kept = cur.ws & !w.absorbed;
        let prev_kept = prev.ws & !w.prev_absorbed;
        let tail = cur.ws & !cur.nl;
        let prev_tail = prev.ws & !prev.nl;
        let whitespace =
            ws_run_starts(w, kept, prev_kept, tail, prev_tail) | line_break_tails(w, tail, kept, prev_kept, false)?;
        let other = cur.other & !before(cur.other, prev.other) & !before(cur.space, prev.space);
        let prev_other = prev.other & !((prev.other << 1) | 1) & !(prev.space << 1) & !prev.cont & !prev.end & !prev.ws;
        let firsts = first_chars(other & !cur.cont, prev_other, cur, prev);
        let prefixed = before(tail, prev_tail) | ((firsts << 1) >> 64) as u64;
        let letters = cur.letter & !before(cur.letter, prev.letter) & !prefixed;
        let starts = whitespace | letters | other | w.chunks;
        Some(starts_with_contractions(starts, cur.apos, carry, text, base, true))
    }

    #[inline(always)]
    fn piece_end(s: &Scanner, start: usize) -> usize {
        cl100k_piece_end(s, start)
    }

    fn split_scalar<'t>(text: &'t str, sink: &mut impl PieceSink<'t>) {
        split_cl100k_scalar(text, sink)
    }
}

/// o200k: `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
/// `|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
/// `|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
struct O200k;

impl Rules for O200k {
    const COMPLEX: Classes = NUMBER | MODIFIER_LETTER | OTHER_LETTER | MARK;
    const ABSORBS: bool = true;
    const ABSORBS_SLASH: bool = true;
    const CHUNKS_DIGITS: bool = true;

    /// With no Lm, Lo or marks (the blocks holding them go to the scalar lexer), UPPER and LOWER do not overlap
    /// and a word is a run of upper case then a run of lower case:
    /// - Letters: a run starts a piece unless its prefix comes before it (as in cl100k); inside a run, an upper
    ///   case letter after a lower case one starts a piece.
    /// - A word's optional contraction (`'s`... case-insensitive) follows it directly: an apostrophe right after
    ///   a letter, unless that letter ends a contraction already taken, is the word's when the letters after
    ///   it make a contraction: no piece starts inside, one after.
    /// - Digits, other characters, whitespace: as in cl100k, but `[\r\n/]*` also takes slashes after the line
    ///   breaks, and after its last CR/LF a run's rest starts a piece even at the end of the text (the CR/LF
    ///   rule comes before `\s+(?!\S)` here).
    #[inline(always)]
    fn starts(w: &Window, text: &[u8], base: usize, carry: &mut Carry) -> Option<u64> {
        let (prev, cur) = (w.prev, w.cur);
        let kept = cur.ws & !w.absorbed;
        let prev_kept = prev.ws & !w.prev_absorbed;
        let tail = cur.ws & !cur.nl;
        let prev_tail = prev.ws & !prev.nl;
        let whitespace =
            ws_run_starts(w, kept, prev_kept, tail, prev_tail) | line_break_tails(w, tail, kept, prev_kept, true)?;
        let own = cur.other & !w.absorbed;
        let prev_own = prev.other & !w.prev_absorbed;
        let other = own & !before(own, prev_own) & !before(cur.space, prev.space);
        let prev_other = prev_own & !((prev_own << 1) | 1) & !(prev.space << 1) & !prev.cont & !prev.end;
        let firsts = first_chars(other & !cur.cont, prev_other, cur, prev);
        let prefixed = before(tail, prev_tail) | ((firsts << 1) >> 64) as u64;
        let letters =
            (cur.letter & !before(cur.letter, prev.letter) & !prefixed) | (cur.upper & before(cur.lower, prev.lower));
        let mut starts = whitespace | letters | other | w.chunks;
        starts = (starts & !carry.clear) | carry.set;
        carry.clear = 0;
        carry.set = 0;
        let mut apostrophes = cur.apos & before(cur.letter, prev.letter);
        if apostrophes != 0 {
            let scanner = Scanner::new_bytes(text);
            while apostrophes != 0 {
                let at = base + apostrophes.trailing_zeros() as usize;
                apostrophes &= apostrophes - 1;
                if at == carry.contraction_end {
                    continue; // the word before took its contraction already
                }
                if let Some(len) = scanner.contraction_len(at, true) {
                    starts &= !(1 << (at - base)); // the apostrophe is the word's
                    contraction(&mut starts, carry, at, len, base, text.len());
                    carry.contraction_end = at + len;
                }
            }
        }
        Some(starts)
    }

    #[inline(always)]
    fn piece_end(s: &Scanner, start: usize) -> usize {
        o200k_piece_end(s, start)
    }

    fn split_scalar<'t>(text: &'t str, sink: &mut impl PieceSink<'t>) {
        split_o200k_scalar(text, sink)
    }
}

// -- the driver ------------------------------------------------------------------------------------------------

/// The line breaks (and o200k's slashes) that the punctuation before them takes into its piece: the run of
/// CR/LF (o200k: CR, LF, `/`) after an "other" character, from its first CR/LF.
#[inline(always)]
fn absorbed<R: Rules>(cur: &Masks, prev: &Masks, carried: u64) -> u64 {
    let run = if R::ABSORBS_SLASH { cur.nl | cur.slash } else { cur.nl };
    let seeds = (cur.nl & before(cur.other, prev.other)) | (carried >> 63 & run & 1);
    spread(seeds, run)
}

/// Splits with the rules `R`, classifying with `C`.
#[inline(always)]
fn split_with<'t, C: Classifier, R: Rules>(text: &'t str, sink: &mut impl PieceSink<'t>) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    if n == 0 {
        return;
    }
    let table = table();
    let scanner = Scanner::new(text);
    let blocks = n.div_ceil(BLOCK);
    let mut prev = Masks::BEFORE;
    let mut cur = classify::<C>(bytes, 0, R::COMPLEX, table);
    let mut carry = Carry::START;
    // Where the piece being built starts (a true piece start: each one emitted ends there).
    let mut pos = 0;
    // Pieces go to the sink as `emit!(end)`: `pos` and `end` are character boundaries — 0, the text's length, ends
    // the scalar lexer gives, or bits of `starts`, which are never continuation bytes (masked below) — and
    // `pos < end <= n`.
    macro_rules! emit {
        ($end:expr) => {{
            let end = $end;
            sink.piece_in(text, pos, end);
            pos = end;
        }};
    }
    for j in 0..blocks {
        let base = j * BLOCK;
        let next = if j + 1 < blocks { classify::<C>(bytes, j + 1, R::COMPLEX, table) } else { Masks::PAST_END };
        // (Not for a block the rules leave to the scalar lexer: the block after it goes there too.)
        let placed = cur.complex == 0;
        let absorbed = if R::ABSORBS && placed { absorbed::<R>(&cur, &prev, carry.absorbed) } else { 0 };
        let chunks = if R::CHUNKS_DIGITS && placed { chunk_starts(cur.digit, prev.digit, carry.chunks) } else { 0 };
        // After the scalar lexer, the block before's contraction effects on this one are unknown: none can be
        // pending if it had no apostrophe in its last bytes (a contraction is at most 4 bytes).
        if !carry.known && prev.apos >> (BLOCK - 4) == 0 {
            carry = Carry { clear: 0, set: 0, known: true, contraction_end: usize::MAX, ..carry };
        }
        // The rules need exact carries, no character they cannot place here or just before, and those effects.
        let settled = carry.exact && cur.complex == 0 && prev.complex == 0 && carry.known;
        let window = Window { prev: &prev, cur: &cur, next: &next, absorbed, prev_absorbed: carry.absorbed, chunks };
        let starts = if settled { R::starts(&window, bytes, base, &mut carry) } else { None };
        match starts {
            Some(mut starts) => {
                starts &= !cur.cont & !cur.end;
                // Starts at or before the piece being built are behind (the scalar lexer went past them).
                if pos >= base {
                    let behind = pos - base + 1;
                    starts &= if behind >= BLOCK { 0 } else { !0 << behind };
                }
                if sink.by_block() {
                    // The block's pieces at once: from the one being built to each start in the block.
                    if starts != 0 {
                        sink.pieces_to(text, pos, base, starts);
                        pos = super::last_start(base, starts);
                    }
                } else {
                    while starts != 0 {
                        let start = base + starts.trailing_zeros() as usize;
                        starts &= starts - 1;
                        emit!(start);
                    }
                }
                carry.known = true;
            }
            None => {
                let end = (base + BLOCK).min(n);
                while pos < end {
                    emit!(R::piece_end(&scanner, pos));
                }
                carry.known = false;
            }
        }
        // Runs that reach the next block through characters the masks do not place leave its carries unknown.
        let through = cur.digit != !0 && (cur.nl | cur.slash) != !0;
        carry.exact = cur.complex == 0 && (carry.exact || through);
        carry.absorbed = absorbed;
        carry.chunks = chunks;
        prev = cur;
        cur = next;
    }
    if pos < n {
        sink.piece_in(text, pos, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value, in each position of a block: the three classifiers give the same masks.
    #[test]
    fn the_classifiers_agree_on_every_byte() {
        let mut blocks: Vec<[u8; BLOCK]> = Vec::new();
        for first in (0..=255u8).step_by(64) {
            let mut block = [0u8; BLOCK];
            for (i, b) in block.iter_mut().enumerate() {
                *b = first.wrapping_add(i as u8);
            }
            blocks.push(block);
            block.reverse();
            blocks.push(block);
        }
        let mut state = 1u64;
        for _ in 0..200 {
            let mut block = [0u8; BLOCK];
            for b in &mut block {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                *b = (state >> 56) as u8;
            }
            blocks.push(block);
        }
        for block in &blocks {
            let portable = portable_ascii(block);
            // The portable masks are the bytes' classes, one by one.
            for (i, &b) in block.iter().enumerate() {
                let bit = |m: u64| m >> i & 1 != 0;
                assert_eq!(bit(portable.upper), b.is_ascii_uppercase());
                assert_eq!(bit(portable.lower), b.is_ascii_lowercase());
                assert_eq!(bit(portable.digit), b.is_ascii_digit());
                let class_ws = b < 0x80 && table().of_ascii(b) & SPACE != 0;
                assert_eq!(bit(portable.ws), class_ws, "byte {b:#x}");
                assert_eq!(bit(portable.nl), b == b'\n' || b == b'\r');
                assert_eq!(bit(portable.space), b == b' ');
                assert_eq!(bit(portable.apos), b == b'\'');
                assert_eq!(bit(portable.slash), b == b'/');
                assert_eq!(bit(portable.non_ascii), b >= 0x80);
                assert_eq!(bit(portable.cont), (0x80..0xC0).contains(&b));
            }
            #[cfg(target_arch = "x86_64")]
            {
                let detected = crate::cpu::detected();
                if detected >= Level::Avx2 {
                    // SAFETY: 64 bytes; the CPU has AVX2 (just checked).
                    assert_eq!(unsafe { Avx2::ascii(block.as_ptr()) }, portable);
                }
                if detected >= Level::Avx512 {
                    // SAFETY: 64 bytes; the CPU has AVX-512BW.
                    assert_eq!(unsafe { Avx512::ascii(block.as_ptr()) }, portable);
                }
            }
        }
    }

    #[test]
    #[allow(clippy::unusual_byte_groupings)] // the digit runs shown apart
    fn digit_chunks_are_every_third_byte_of_a_run() {
        let digits: u64 = 0b1111111_0_11_0_1111;
        assert_eq!(chunk_starts(digits, 0, 0), 0b1001001_0_01_0_1001);
        // A run going on from the block before, whose last chunk started at its bit 62: this block's first chunk
        // starts at bit 1.
        assert_eq!(chunk_starts(0b1111, !0, 1 << 62), 0b0010);
    }
}
