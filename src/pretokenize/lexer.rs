//! Hand-written splitters for the built-in patterns: the same pieces as fancy-regex gives for `GPT2`, `CL100K`,
//! `O200K` and `WHITESPACE`, for every input, at many times the speed.
//!
//! Each splitter decides, at the start of a piece, which alternative of its pattern the regex engine would take
//! and where that alternative ends: alternatives are tried in order and the first that matches wins (leftmost-
//! first, as in any backtracking engine), and each quantifier's backtracking is worked out once, by hand, in the
//! comment above the splitter. The differential tests (lexer_tests.rs) hold them to fancy-regex.
//!
//! Performance notes. Single-threaded, release build, `cargo run --release --example lexer_speed`, on the
//! 2-core development VM while other work shared it, so each figure is the range over five runs (MB/s):
//!
//! | pattern    | English (Gutenberg, first 20 MiB) | multilingual/ (7.8 MB, 76 files)  |
//! |------------|-----------------------------------|-----------------------------------|
//! |            | lexer       fancy-regex           | lexer       fancy-regex           |
//! | gpt2       | 250–285     20–30                 | 315–445     29–46                 |
//! | cl100k     | 245–305     18–29                 | 350–510     29–48                 |
//! | o200k      | 215–280     35–53                 | 310–440     55–82                 |
//! | whitespace | 255–335     54–72                 | 370–520     55–77                 |
//!
//! - The character classes come from regex-syntax (classes.rs): an ASCII table, and a deduplicated trie for the
//!   rest (28 KB, built in ~3 ms on first use). The hot loops look the byte up in the ASCII table and decode
//!   UTF-8 only when it is ≥ 0x80; the multilingual text is faster per MB because its characters are longer.
//! - English pieces average ~4 bytes (5.0M pieces in 21 MB), so deciding each piece (where its run ends is an
//!   unpredictable branch) should cost more than scanning it; SIMD run scanning was therefore not tried.
//! - Every scan is a forward walk over runs of one class, and no character is looked at more than a constant
//!   number of times, so the time is linear on any input: the regexes' backtracking (`\s+(?!\S)`, `\s*[\r\n]`,
//!   o200k's `UPPER*` before `LOWER+`) is computed directly from one pass over the run.
//! - Pieces are handed to the callback as slices of the input: nothing is allocated.

use super::PieceSink;
use super::blocks;
use super::classes::{
    ClassTable, Classes, LETTER, LOWERCASE_LETTER, MARK, MODIFIER_LETTER, NUMBER, OTHER_LETTER, SPACE,
    TITLECASE_LETTER, UPPERCASE_LETTER, WORD, table,
};

/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`: letters that may start a capitalised word.
const O200K_UPPER: Classes = UPPERCASE_LETTER | TITLECASE_LETTER | MODIFIER_LETTER | OTHER_LETTER | MARK;
/// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`: letters that may continue a word.
const O200K_LOWER: Classes = LOWERCASE_LETTER | MODIFIER_LETTER | OTHER_LETTER | MARK;

/// The text being split, with the class lookups over it.
pub(super) struct Scanner<'t> {
    bytes: &'t [u8],
    table: &'static ClassTable,
}

impl<'t> Scanner<'t> {
    pub(super) fn new(text: &'t str) -> Scanner<'t> {
        Scanner { bytes: text.as_bytes(), table: table() }
    }

    /// A scanner over the bytes of a `str` (the block scanner holds them as bytes; they must be a `str`'s).
    pub(super) fn new_bytes(bytes: &'t [u8]) -> Scanner<'t> {
        debug_assert!(std::str::from_utf8(bytes).is_ok());
        Scanner { bytes, table: table() }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The classes and the UTF-8 length of the character starting at byte `i` (a char boundary, `i < len`).
    #[inline(always)]
    fn char_at(&self, i: usize) -> (Classes, usize) {
        let byte = self.bytes[i];
        if byte < 0x80 { (self.table.of_ascii(byte), 1) } else { self.non_ascii_char_at(i) }
    }

    /// The classes of the character at `i`, or None at the end of the text.
    #[inline(always)]
    fn classes_at(&self, i: usize) -> Option<Classes> {
        (i < self.len()).then(|| self.char_at(i).0)
    }

    #[inline]
    fn non_ascii_char_at(&self, i: usize) -> (Classes, usize) {
        let (c, len) = decode_non_ascii(self.bytes, i);
        (self.table.of_code_point(c), len)
    }

    /// The end of the run, starting at `i`, of characters whose classes satisfy `member`.
    #[inline(always)]
    fn skip_while(&self, mut i: usize, member: impl Fn(Classes) -> bool) -> usize {
        while i < self.len() {
            let byte = self.bytes[i];
            if byte < 0x80 {
                if !member(self.table.of_ascii(byte)) {
                    break;
                }
                i += 1;
            } else {
                let (classes, len) = self.non_ascii_char_at(i);
                if !member(classes) {
                    break;
                }
                i += len;
            }
        }
        i
    }

    /// The end of the run of characters in any of `classes`.
    #[inline(always)]
    fn skip_any_of(&self, i: usize, classes: Classes) -> usize {
        // The common classes first skip whole 8-byte words of ASCII members (resolved at compile time: `classes`
        // is a constant at every call); the byte loop then finishes the run (non-ASCII, the last bytes).
        let words = match classes {
            LETTER => self.skip_ascii_words(i, |w| ascii_in_range(w | CASE_BITS, b'a', b'z')),
            NUMBER => self.skip_ascii_words(i, |w| ascii_in_range(w, b'0', b'9')),
            O200K_LOWER => self.skip_ascii_words(i, |w| ascii_in_range(w, b'a', b'z')),
            O200K_UPPER => self.skip_ascii_words(i, |w| ascii_in_range(w, b'A', b'Z')),
            _ => Err(i),
        };
        match words {
            Ok(end) => end,
            Err(i) => self.skip_while(i, |c| c & classes != 0),
        }
    }

    /// Skips 8 bytes at a time while `members(word)` marks every byte (its high bit). `Ok(end)` when the run
    /// ends at an ASCII byte it does not mark (no ASCII character outside those ranges is in these classes, so
    /// the byte loop need not look at it again); `Err(at)` when the byte loop must go on from `at`: a non-ASCII
    /// byte, or fewer than 8 bytes left.
    #[inline(always)]
    fn skip_ascii_words(&self, mut i: usize, members: impl Fn(u64) -> u64) -> Result<usize, usize> {
        while i + 8 <= self.len() {
            let word = u64::from_le_bytes(self.bytes[i..i + 8].try_into().expect("8 bytes"));
            let outside = !members(word) & HIGH_BITS;
            if outside != 0 {
                let stop = i + (outside.trailing_zeros() / 8) as usize;
                return if self.bytes[stop] < 0x80 { Ok(stop) } else { Err(stop) };
            }
            i += 8;
        }
        Err(i)
    }

    /// The end of the run of characters in none of `classes`.
    #[inline(always)]
    fn skip_none_of(&self, i: usize, classes: Classes) -> usize {
        self.skip_while(i, |c| c & classes == 0)
    }

    /// The end of the run of bytes in `set` (ASCII only).
    #[inline(always)]
    fn skip_bytes(&self, mut i: usize, set: &[u8]) -> usize {
        while i < self.len() && set.contains(&self.bytes[i]) {
            i += 1;
        }
        i
    }

    /// The end of `\p{N}{1,3}` at `i` (a number).
    #[inline]
    fn skip_up_to_three_numbers(&self, mut i: usize) -> usize {
        for _ in 0..3 {
            if i == self.len() {
                break;
            }
            let (classes, len) = self.char_at(i);
            if classes & NUMBER == 0 {
                break;
            }
            i += len;
        }
        i
    }

    /// The whitespace run starting at `i` (a whitespace character).
    #[inline]
    fn whitespace_run(&self, start: usize) -> WhitespaceRun {
        let mut run = WhitespaceRun { end: start, last_char_start: start, after_last_newline: None };
        while run.end < self.len() {
            let byte = self.bytes[run.end];
            let (classes, len) = self.char_at(run.end);
            if classes & SPACE == 0 {
                break;
            }
            run.last_char_start = run.end;
            run.end += len;
            if byte == b'\n' || byte == b'\r' {
                run.after_last_newline = Some(run.end);
            }
        }
        run
    }

    /// The length of the contraction (`s t re ve m ll d`) right after the apostrophe at `apostrophe`, if any.
    /// Case-sensitive (GPT-2: lowercase ASCII only) or case-insensitive the way regex-syntax folds case.
    #[inline]
    pub(super) fn contraction_len(&self, apostrophe: usize, case_insensitive: bool) -> Option<usize> {
        let first = self.contraction_letter_at(apostrophe + 1, case_insensitive)?;
        if matches!(first.0, b's' | b't' | b'm' | b'd') {
            return Some(1 + first.1);
        }
        let second = self.contraction_letter_at(apostrophe + 1 + first.1, case_insensitive)?;
        match (first.0, second.0) {
            (b'r', b'e') | (b'v', b'e') | (b'l', b'l') => Some(1 + first.1 + second.1),
            _ => None,
        }
    }

    /// The contraction letter the character at `i` matches, with its UTF-8 length.
    #[inline]
    fn contraction_letter_at(&self, i: usize, case_insensitive: bool) -> Option<(u8, usize)> {
        let byte = *self.bytes.get(i)?;
        if !case_insensitive {
            return b"sdmtlver".contains(&byte).then_some((byte, 1));
        }
        if byte < 0x80 {
            return self.table.contraction_fold(char::from(byte)).map(|letter| (letter, 1));
        }
        let (c, len) = decode_non_ascii(self.bytes, i);
        let c = char::from_u32(c).expect("a str holds valid code points");
        self.table.contraction_fold(c).map(|letter| (letter, len))
    }
}

/// The high bit of each byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
/// Setting bit 5 of an ASCII letter lowercases it.
const CASE_BITS: u64 = 0x2020_2020_2020_2020;

/// The high bit of each byte of `word` that is ASCII and in `lo..=hi` (`hi < 0x80`), the other bits clear.
/// Adding `0x80 - lo` to a 7-bit byte sets its high bit exactly when the byte is ≥ `lo`, and no byte carries
/// into the next (7 bits + at most 0x80 < 0x100); likewise `0x7F - hi` for > `hi`.
#[inline(always)]
fn ascii_in_range(word: u64, lo: u8, hi: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let low7 = word & !HIGH_BITS;
    let at_least_lo = low7 + ONES * (0x80 - lo as u64);
    let above_hi = low7 + ONES * (0x7F - hi as u64);
    at_least_lo & !above_hi & !word & HIGH_BITS
}

/// What the `\s` alternatives need to know about a whitespace run.
struct WhitespaceRun {
    /// Just past the run.
    end: usize,
    /// Where the run's last character starts (what `\s+(?!\S)` gives back).
    last_char_start: usize,
    /// Just past the run's last `\r` or `\n` (where `\s*[\r\n]` ends), if it has one.
    after_last_newline: Option<usize>,
}

/// Decodes the multi-byte UTF-8 character starting at `i`. `bytes` is a `str`'s, so the sequence is valid.
#[inline(always)]
pub(super) fn decode_non_ascii(bytes: &[u8], i: usize) -> (u32, usize) {
    let lead = u32::from(bytes[i]);
    let continuation = |k: usize| u32::from(bytes[i + k]) & 0x3F;
    if lead < 0xE0 {
        (((lead & 0x1F) << 6) | continuation(1), 2)
    } else if lead < 0xF0 {
        (((lead & 0x0F) << 12) | (continuation(1) << 6) | continuation(2), 3)
    } else {
        (((lead & 0x07) << 18) | (continuation(1) << 12) | (continuation(2) << 6) | continuation(3), 4)
    }
}

/// Calls `f` on each piece: `piece_end(scanner, start)` is where the piece starting at `start` ends.
#[inline(always)]
fn split_tiling<'t>(text: &'t str, sink: &mut impl PieceSink<'t>, piece_end: impl Fn(&Scanner<'t>, usize) -> usize) {
    let scanner = Scanner::new(text);
    let mut start = 0;
    while start < text.len() {
        let end = piece_end(&scanner, start);
        // Never fails (the tests hold every alternative to non-empty pieces ending at a character), but a slip
        // must neither loop forever nor cut a character.
        assert!(end > start && text.is_char_boundary(end), "bad piece end {end} after byte {start}");
        // SAFETY: `start` is 0 or the previous piece's end, both character boundaries, and so is `end`
        // (just checked); `&text[start..end]` would check all of that again (a tenth of the lexer's work).
        sink.piece(unsafe { text.get_unchecked(start..end) });
        start = end;
    }
}

/// GPT-2: `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
///
/// - The contractions are case-sensitive and come first, so `'s` is cut off even before letters (`'sa` →
///   `'s`, `a`).
/// - Every character is exactly one of letter, number, whitespace, or "other" (`[^\s\p{L}\p{N}]`). A space
///   followed by a non-space joins the run of that character's class (` ?` is tried with the space first); in
///   every other case the run of the first character's class is the piece.
/// - Whitespace: `\s+` is greedy and `(?!\S)` fails only when a non-space follows the run, so backtracking
///   gives back exactly the run's last character (which then starts the next piece, usually as ` word`). A
///   single whitespace character before a non-space fails `\s+(?!\S)` and is taken by the final `\s+`.
pub fn split_gpt2_scalar<'t>(text: &'t str, sink: &mut impl PieceSink<'t>) {
    split_tiling(text, sink, |s, start| gpt2_piece_end(s, start))
}

/// GPT-2's pieces, by the block scanner (`blocks.rs`) at the CPU's level, which uses `split_gpt2_scalar`'s
/// rules where its own cannot settle a block.
pub fn split_gpt2<'t>(text: &'t str, sink: &mut impl PieceSink<'t>) {
    blocks::split(blocks::Pattern::Gpt2, text, sink, crate::cpu::level())
}

#[inline(always)]
pub(super) fn gpt2_piece_end(s: &Scanner, start: usize) -> usize {
    let first = s.bytes[start];
    // Most pieces of English: ASCII letters, or a space and ASCII letters (the letter run may go on past ASCII).
    if first.is_ascii_alphabetic() {
        return s.skip_any_of(start, LETTER);
    }
    if first == b' ' && s.bytes.get(start + 1).is_some_and(u8::is_ascii_alphabetic) {
        return s.skip_any_of(start + 1, LETTER);
    }
    if first == b'\''
        && let Some(len) = s.contraction_len(start, false)
    {
        return start + len;
    }
    let (mut classes, _) = s.char_at(start);
    let mut run_start = start;
    if first == b' '
        && let Some(next) = s.classes_at(start + 1)
        && next & SPACE == 0
    {
        (classes, run_start) = (next, start + 1);
    }
    if classes & LETTER != 0 {
        s.skip_any_of(run_start, LETTER)
    } else if classes & NUMBER != 0 {
        s.skip_any_of(run_start, NUMBER)
    } else if classes & SPACE == 0 {
        s.skip_none_of(run_start, SPACE | LETTER | NUMBER)
    } else {
        let run = s.whitespace_run(start);
        if run.end < s.len() && run.last_char_start > start { run.last_char_start } else { run.end }
    }
}

/// cl100k: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+`
/// `|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
///
/// - Contractions first, case-insensitive with regex-syntax's simple case folding (`'S`, `'ſ`, `'Ll` count).
/// - `[^\r\n\p{L}\p{N}]?+\p{L}++`: the optional prefix class excludes letters, so possessive and greedy agree:
///   a letter run, or one prefix character (punctuation, an apostrophe, any whitespace but CR/LF) and the letter
///   run after it.
/// - `\p{N}{1,3}+`: numbers in chunks of at most three.
/// - ` ?[^\s\p{L}\p{N}]++[\r\n]*+`: a run of "other" characters, with a space before it (if the piece starts
///   with a space and the other run follows), then any CR/LF right after. Possessiveness changes nothing here:
///   each quantified class is disjoint from what follows it.
/// - Whitespace, in this order: the run when it reaches the end of the text (`$` is end of text, no multiline);
///   else up to and including the run's last CR/LF (`\s*` backtracks to it); else the run minus its last
///   character when that leaves at least one; else a single whitespace character.
pub fn split_cl100k_scalar<'t>(text: &'t str, sink: &mut impl PieceSink<'t>) {
    split_tiling(text, sink, |s, start| cl100k_piece_end(s, start))
}

/// cl100k's pieces, by the block scanner (see `split_gpt2`).
pub fn split_cl100k<'t>(text: &'t str, sink: &mut impl PieceSink<'t>) {
    blocks::split(blocks::Pattern::Cl100k, text, sink, crate::cpu::level())
}

#[inline(always)]
pub(super) fn cl100k_piece_end(s: &Scanner, start: usize) -> usize {
    let first = s.bytes[start];
    // Most pieces of English: ASCII letters, or one ASCII prefix character (not an apostrophe, which may start
    // a contraction, nor a digit or CR/LF) and ASCII letters (the letter run may go on past ASCII).
    if first.is_ascii_alphabetic() {
        return s.skip_any_of(start, LETTER);
    }
    if first < 0x80
        && !first.is_ascii_digit()
        && !matches!(first, b'\'' | b'\r' | b'\n')
        && s.bytes.get(start + 1).is_some_and(u8::is_ascii_alphabetic)
    {
        return s.skip_any_of(start + 1, LETTER);
    }
    if first == b'\''
        && let Some(len) = s.contraction_len(start, true)
    {
        return start + len;
    }
    let (classes, len) = s.char_at(start);
    if classes & LETTER != 0 {
        return s.skip_any_of(start, LETTER);
    }
    let is_prefix = classes & NUMBER == 0 && first != b'\r' && first != b'\n';
    if is_prefix && s.classes_at(start + len).is_some_and(|next| next & LETTER != 0) {
        return s.skip_any_of(start + len, LETTER);
    }
    if classes & NUMBER != 0 {
        return s.skip_up_to_three_numbers(start);
    }
    if let Some(other_start) = other_run_start(s, start, classes) {
        let end = s.skip_none_of(other_start, SPACE | LETTER | NUMBER);
        return s.skip_bytes(end, b"\r\n");
    }
    let run = s.whitespace_run(start);
    if run.end == s.len() {
        run.end
    } else if let Some(end) = run.after_last_newline {
        end
    } else if run.last_char_start > start {
        run.last_char_start
    } else {
        start + len
    }
}

/// Where ` ?[^\s\p{L}\p{N}]+` starts its run of "other" characters at `start` (whose character has `classes`
/// and is neither a letter nor a number), if it matches there.
#[inline(always)]
fn other_run_start(s: &Scanner, start: usize, classes: Classes) -> Option<usize> {
    if classes & SPACE == 0 {
        Some(start)
    } else if s.bytes[start] == b' '
        && s.classes_at(start + 1).is_some_and(|next| next & (SPACE | LETTER | NUMBER) == 0)
    {
        Some(start + 1)
    } else {
        None
    }
}

/// o200k:
/// `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
/// `|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
/// `|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
///
/// Call the two letter classes UPPER and LOWER; they overlap (Lm, Lo and marks are in both), and marks are
/// also in the prefix class `[^\r\n\p{L}\p{N}]`, which is why both branches of the optional prefix matter.
/// - First alternative, `prefix? UPPER* LOWER+ contraction?`: the contraction is optional and last, so the
///   first success of `prefix? UPPER* LOWER+` wins. With the prefix taken first (if the character can be one),
///   then without it: `UPPER*` takes its whole run and gives back one character at a time until a LOWER
///   character follows. That is the run's end if a LOWER (necessarily Ll) character follows the run, and then
///   `LOWER+` takes that whole LOWER run; otherwise the last character inside the run that is also LOWER, and
///   `LOWER+` takes just it (the characters after it in the run are Lu/Lt). Neither: the branch fails.
/// - Second alternative, `prefix? UPPER+ LOWER* contraction?`: with the prefix first, then without; the first
///   UPPER run found wins, with the LOWER run after it.
/// - Contractions are case-insensitive, folded as regex-syntax folds (`'S`, `'ſ`).
/// - `\p{N}{1,3}`: numbers in chunks of at most three.
/// - ` ?[^\s\p{L}\p{N}]+[\r\n/]*`: as in cl100k, but the trailing run also takes `/` (which can only appear
///   after a CR/LF there: a `/` right after the other run belongs to the other run).
/// - Whitespace, in this order: up to and including the run's last CR/LF (`\s*` backtracks to it); else the run
///   if it reaches the end of the text; else the run minus its last character when that leaves at least one;
///   else the single whitespace character (`\s+`).
pub fn split_o200k_scalar<'t>(text: &'t str, sink: &mut impl PieceSink<'t>) {
    split_tiling(text, sink, |s, start| o200k_piece_end(s, start))
}

/// o200k's pieces, by the block scanner (see `split_gpt2`).
pub fn split_o200k<'t>(text: &'t str, sink: &mut impl PieceSink<'t>) {
    blocks::split(blocks::Pattern::O200k, text, sink, crate::cpu::level())
}

#[inline(always)]
pub(super) fn o200k_piece_end(s: &Scanner, start: usize) -> usize {
    let first = s.bytes[start];
    if let Some(end) = o200k_ascii_word_end(s, start) {
        return with_contraction(s, end);
    }
    let (classes, len) = s.char_at(start);
    let prefix_then_more =
        classes & (LETTER | NUMBER) == 0 && first != b'\r' && first != b'\n' && start + len < s.len();
    let may_start_word = classes & (O200K_UPPER | O200K_LOWER) != 0;
    // Both word alternatives need an UPPER or LOWER character where they start (after the prefix, or at the
    // start): punctuation, spaces and numbers skip the four tries.
    let word_after_prefix =
        prefix_then_more && s.classes_at(start + len).is_some_and(|next| next & (O200K_UPPER | O200K_LOWER) != 0);
    let mut word_end = None;
    if word_after_prefix {
        word_end = o200k_lower_ending_word_end(s, start + len);
    }
    if word_end.is_none() && may_start_word {
        word_end = o200k_lower_ending_word_end(s, start);
    }
    if word_end.is_none() && word_after_prefix {
        word_end = o200k_upper_starting_word_end(s, start + len);
    }
    if word_end.is_none() && may_start_word {
        word_end = o200k_upper_starting_word_end(s, start);
    }
    if let Some(end) = word_end {
        return with_contraction(s, end);
    }
    if classes & NUMBER != 0 {
        return s.skip_up_to_three_numbers(start);
    }
    if let Some(other_start) = other_run_start(s, start, classes) {
        let end = s.skip_none_of(other_start, SPACE | LETTER | NUMBER);
        return s.skip_bytes(end, b"\r\n/");
    }
    let run = s.whitespace_run(start);
    if let Some(end) = run.after_last_newline {
        end
    } else if run.end < s.len() && run.last_char_start > start {
        run.last_char_start
    } else {
        run.end
    }
}

/// o200k's optional contraction after a word's letters ending at `end`: where the piece ends.
#[inline(always)]
fn with_contraction(s: &Scanner, end: usize) -> usize {
    if s.bytes.get(end) == Some(&b'\'') { end + s.contraction_len(end, true).unwrap_or(0) } else { end }
}

/// The end of the letters of a word that starts in ASCII — an ASCII letter, or an ASCII prefix character and
/// an ASCII letter — before any contraction, when the general rules below are not needed: most pieces of
/// English, decided without their four-way search (half of o200k's splitting time). None: use those rules.
///
/// - `prefix? UPPER* LOWER+` is tried first, with the prefix first. From an ASCII lowercase letter `UPPER*` is
///   empty and `LOWER+` takes the whole lowercase run (which may go on past ASCII). From ASCII capitals, `UPPER*`
///   takes them all (none is also LOWER, so it never gives one back); lowercase after them continues the word.
/// - Otherwise (capitals then an ASCII non-letter or the end) only `prefix? UPPER+ LOWER*` matches: the capitals.
/// - An ASCII prefix is never a letter, so trying the alternatives without it finds nothing new; capitals
///   followed by a non-ASCII character go to the general rules (`UPPER*` may give back a character there).
#[inline(always)]
fn o200k_ascii_word_end(s: &Scanner, start: usize) -> Option<usize> {
    let bytes = s.bytes;
    let first = bytes[start];
    let word = if first.is_ascii_alphabetic() {
        start
    } else if first < 0x80
        && !first.is_ascii_digit()
        && first != b'\r'
        && first != b'\n'
        && bytes.get(start + 1).is_some_and(u8::is_ascii_alphabetic)
    {
        start + 1
    } else {
        return None;
    };
    if bytes[word].is_ascii_lowercase() {
        return Some(s.skip_any_of(word, O200K_LOWER));
    }
    let (Ok(mut capitals_end) | Err(mut capitals_end)) = s.skip_ascii_words(word, |w| ascii_in_range(w, b'A', b'Z'));
    while capitals_end < bytes.len() && bytes[capitals_end].is_ascii_uppercase() {
        capitals_end += 1;
    }
    match bytes.get(capitals_end) {
        Some(b) if b.is_ascii_lowercase() => Some(s.skip_any_of(capitals_end, O200K_LOWER)),
        Some(b) if *b >= 0x80 => None,
        _ => Some(capitals_end),
    }
}

/// `UPPER* LOWER+` at `i` (see `split_o200k`): where it ends, or None if it does not match.
#[inline(always)]
fn o200k_lower_ending_word_end(s: &Scanner, mut i: usize) -> Option<usize> {
    let mut last_lower_in_upper_run = None;
    while i < s.len() {
        let (classes, len) = s.char_at(i);
        if classes & O200K_UPPER == 0 {
            if classes & O200K_LOWER != 0 {
                return Some(s.skip_any_of(i, O200K_LOWER));
            }
            break;
        }
        if classes & O200K_LOWER != 0 {
            last_lower_in_upper_run = Some(i);
        }
        i += len;
    }
    last_lower_in_upper_run.map(|lower| s.skip_any_of(lower, O200K_LOWER))
}

/// `UPPER+ LOWER*` at `i`: where it ends, or None if it does not match.
#[inline(always)]
fn o200k_upper_starting_word_end(s: &Scanner, i: usize) -> Option<usize> {
    let upper_end = s.skip_any_of(i, O200K_UPPER);
    (upper_end > i).then(|| s.skip_any_of(upper_end, O200K_LOWER))
}

/// HF `Whitespace`: `\w+|[^\w\s]+`. Runs of word characters, runs of characters that are neither word nor
/// whitespace; whitespace separates pieces and is dropped. `\w` is regex-syntax's (letters, marks, decimal
/// digits, connector punctuation such as `_`, join controls): `Ⅷ` (a letter number, alphabetic) is one, `½` is not.
pub fn split_whitespace<'t>(text: &'t str, sink: &mut impl PieceSink<'t>) {
    let s = Scanner::new(text);
    let mut start = 0;
    while start < s.len() {
        let (classes, len) = s.char_at(start);
        if classes & WORD != 0 {
            let end = s.skip_any_of(start, WORD);
            sink.piece(&text[start..end]);
            start = end;
        } else if classes & SPACE == 0 {
            let end = s.skip_none_of(start, WORD | SPACE);
            sink.piece(&text[start..end]);
            start = end;
        } else {
            start = s.skip_while(start + len, |c| c & (WORD | SPACE) == SPACE);
        }
    }
}
