//! The Unicode character classes the hand-written pre-tokenizers need, as one small bitmask per code point.
//!
//! The classes are not our own tables: they are built, at first use, from the ranges regex-syntax parses for
//! `\p{L}`, `\s`, ... — the very tables fancy-regex matches the pattern strings with — so the lexer and the
//! regexes cannot disagree about a character, whatever Unicode version regex-syntax ships.
//!
//! Lookup: ASCII goes through a 128-entry table. Everything else through a three-level trie
//! (4096-code-point pages → 64-code-point leaves → class id → mask), with identical pages and leaves stored
//! once: most of the 1.1M code points are unassigned or in long uniform blocks, so the trie is a few tens of KB.

use std::sync::OnceLock;

use regex_syntax::hir::{Class, HirKind};
use rustc_hash::FxHashMap;

/// Bitmask of the classes a character belongs to.
pub(crate) type Classes = u16;

/// `\p{L}`
pub(crate) const LETTER: Classes = 1 << 0;
/// `\p{N}`
pub(crate) const NUMBER: Classes = 1 << 1;
/// `\s` (Unicode White_Space)
pub(crate) const SPACE: Classes = 1 << 2;
/// `\w` (regex-syntax's Unicode word characters)
pub(crate) const WORD: Classes = 1 << 3;
/// `\p{Lu}`
pub(crate) const UPPERCASE_LETTER: Classes = 1 << 4;
/// `\p{Ll}`
pub(crate) const LOWERCASE_LETTER: Classes = 1 << 5;
/// `\p{Lt}`
pub(crate) const TITLECASE_LETTER: Classes = 1 << 6;
/// `\p{Lm}`
pub(crate) const MODIFIER_LETTER: Classes = 1 << 7;
/// `\p{Lo}`
pub(crate) const OTHER_LETTER: Classes = 1 << 8;
/// `\p{M}`
pub(crate) const MARK: Classes = 1 << 9;

/// Each class bit and the regex-syntax class it is built from.
pub(crate) const CLASS_SOURCES: [(Classes, &str); 10] = [
    (LETTER, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (WORD, r"\w"),
    (UPPERCASE_LETTER, r"\p{Lu}"),
    (LOWERCASE_LETTER, r"\p{Ll}"),
    (TITLECASE_LETTER, r"\p{Lt}"),
    (MODIFIER_LETTER, r"\p{Lm}"),
    (OTHER_LETTER, r"\p{Lo}"),
    (MARK, r"\p{M}"),
];

/// The letters of the English contractions (`'s 't 're 've 'm 'll 'd`), which the cl100k and o200k patterns
/// match case-insensitively.
const CONTRACTION_LETTERS: &[u8] = b"sdmtlver";

const CODE_POINTS: usize = 0x11_0000;
const LEAF_BITS: u32 = 6;
const LEAF_LEN: usize = 1 << LEAF_BITS;
const PAGE_BITS: u32 = 12;
const LEAVES_PER_PAGE: usize = 1 << (PAGE_BITS - LEAF_BITS);

/// The character classes of every code point, and the case folds of the contraction letters.
pub(crate) struct ClassTable {
    ascii: [Classes; 128],
    /// Page number (code point >> 12) → index of its page in `pages`.
    page_of: Vec<u16>,
    /// Deduplicated pages, `LEAVES_PER_PAGE` leaf indexes each.
    pages: Vec<u16>,
    /// Deduplicated leaves, `LEAF_LEN` class ids each.
    leaves: Vec<u8>,
    /// Class id → classes.
    classes_of_id: Vec<Classes>,
    /// ASCII byte → the contraction letter it case-folds to (lowercase), or 0.
    ascii_contraction_fold: [u8; 128],
    /// The non-ASCII characters that case-fold to a contraction letter (U+017F LONG S → `s`, ...).
    non_ascii_contraction_folds: Vec<(char, u8)>,
}

/// The table, built on first use (a few milliseconds, once per process).
#[inline]
pub(crate) fn table() -> &'static ClassTable {
    static TABLE: OnceLock<ClassTable> = OnceLock::new();
    TABLE.get_or_init(ClassTable::build)
}

/// The code point ranges (inclusive) regex-syntax gives for a class such as `\p{L}` or `(?i:s)`.
pub(crate) fn regex_syntax_ranges(class: &str) -> Vec<(u32, u32)> {
    let hir = regex_syntax::Parser::new().parse(class).expect("the built-in classes parse");
    match hir.kind() {
        HirKind::Class(Class::Unicode(ranges)) => {
            ranges.ranges().iter().map(|r| (u32::from(r.start()), u32::from(r.end()))).collect()
        }
        // A single character with no case variants parses as a literal.
        HirKind::Literal(literal) => {
            let c = std::str::from_utf8(&literal.0).ok().and_then(|s| s.chars().next()).expect("one character");
            vec![(u32::from(c), u32::from(c))]
        }
        other => panic!("{class:?} is not a character class: {other:?}"),
    }
}

impl ClassTable {
    fn build() -> ClassTable {
        let mut classes = vec![0 as Classes; CODE_POINTS];
        for (bit, source) in CLASS_SOURCES {
            for (first, last) in regex_syntax_ranges(source) {
                for c in &mut classes[first as usize..=last as usize] {
                    *c |= bit;
                }
            }
        }

        // Class ids, indexed by bitmask (there are only a dozen combinations in use).
        let mut id_of_classes: Vec<Option<u8>> = vec![None; 1 << CLASS_SOURCES.len()];
        let mut classes_of_id = Vec::new();
        let mut leaf_index: FxHashMap<[u8; LEAF_LEN], u16> = FxHashMap::default();
        let mut leaves = Vec::new();
        let mut page_index: FxHashMap<[u16; LEAVES_PER_PAGE], u16> = FxHashMap::default();
        let mut pages = Vec::new();
        let mut page_of = Vec::new();
        for page in classes.chunks(LEAF_LEN * LEAVES_PER_PAGE) {
            let mut leaf_indexes = [0; LEAVES_PER_PAGE];
            for (leaf, index) in page.chunks(LEAF_LEN).zip(&mut leaf_indexes) {
                let mut ids = [0; LEAF_LEN];
                for (&c, id) in leaf.iter().zip(&mut ids) {
                    *id = *id_of_classes[usize::from(c)].get_or_insert_with(|| {
                        classes_of_id.push(c);
                        u8::try_from(classes_of_id.len() - 1).expect("fewer than 256 class combinations")
                    });
                }
                let next = u16::try_from(leaf_index.len()).expect("fewer than 65536 distinct leaves");
                *index = *leaf_index.entry(ids).or_insert_with(|| {
                    leaves.extend_from_slice(&ids);
                    next
                });
            }
            let next = u16::try_from(page_index.len()).expect("fewer than 65536 distinct pages");
            page_of.push(*page_index.entry(leaf_indexes).or_insert_with(|| {
                pages.extend_from_slice(&leaf_indexes);
                next
            }));
        }

        let mut ascii = [0; 128];
        ascii.copy_from_slice(&classes[..128]);

        let mut ascii_contraction_fold = [0; 128];
        let mut non_ascii_contraction_folds = Vec::new();
        for &letter in CONTRACTION_LETTERS {
            let case_insensitive = format!("(?i:{})", letter as char);
            for (first, last) in regex_syntax_ranges(&case_insensitive) {
                for c in (first..=last).filter_map(char::from_u32) {
                    if c.is_ascii() {
                        ascii_contraction_fold[c as usize] = letter;
                    } else {
                        non_ascii_contraction_folds.push((c, letter));
                    }
                }
            }
        }

        ClassTable { ascii, page_of, pages, leaves, classes_of_id, ascii_contraction_fold, non_ascii_contraction_folds }
    }

    /// The classes of an ASCII byte.
    #[inline(always)]
    pub(crate) fn of_ascii(&self, byte: u8) -> Classes {
        self.ascii[usize::from(byte & 0x7F)]
    }

    /// The classes of any code point.
    #[inline]
    pub(crate) fn of_code_point(&self, c: u32) -> Classes {
        let page = usize::from(self.page_of[(c >> PAGE_BITS) as usize]);
        let leaf =
            usize::from(self.pages[page * LEAVES_PER_PAGE + ((c >> LEAF_BITS) as usize & (LEAVES_PER_PAGE - 1))]);
        self.classes_of_id[usize::from(self.leaves[leaf * LEAF_LEN + (c as usize & (LEAF_LEN - 1))])]
    }

    /// The lowercase contraction letter (`s d m t l v e r`) that `c` matches case-insensitively, as regex-syntax
    /// folds case (simple case folding: `S` and U+017F LONG S match `s`), or None.
    #[inline]
    pub(crate) fn contraction_fold(&self, c: char) -> Option<u8> {
        let letter = if c.is_ascii() {
            self.ascii_contraction_fold[c as usize]
        } else {
            self.non_ascii_contraction_folds.iter().find(|&&(other, _)| other == c).map_or(0, |&(_, letter)| letter)
        };
        (letter != 0).then_some(letter)
    }

    /// Bytes the lookup structures take (for the notes; the tests keep it honest).
    #[cfg(test)]
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.ascii.len() * 2
            + self.page_of.len() * 2
            + self.pages.len() * 2
            + self.leaves.len()
            + self.classes_of_id.len() * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_chars() -> impl Iterator<Item = char> {
        (0..=0x10_FFFF).filter_map(char::from_u32)
    }

    /// Every code point's lookup equals what regex-syntax's parsed class says, class by class.
    #[test]
    fn every_char_has_the_classes_regex_syntax_gives() {
        let table = table();
        for (bit, source) in CLASS_SOURCES {
            let ranges = regex_syntax_ranges(source);
            // Walk the ranges in step with the characters instead of searching them: 1.1M lookups stay fast.
            let mut range = 0;
            for c in all_chars() {
                let c = u32::from(c);
                while range < ranges.len() && ranges[range].1 < c {
                    range += 1;
                }
                let expected = range < ranges.len() && ranges[range].0 <= c;
                assert_eq!(table.of_code_point(c) & bit != 0, expected, "{source} at U+{c:04X}");
                if c < 128 {
                    assert_eq!(table.of_ascii(c as u8) & bit != 0, expected, "{source} at ASCII {c:#x}");
                }
            }
        }
    }

    /// A few thousand characters, spread over the whole range, against fancy-regex itself.
    #[test]
    fn classes_agree_with_fancy_regex() {
        let table = table();
        let regexes: Vec<(Classes, fancy_regex::Regex)> = CLASS_SOURCES
            .iter()
            .map(|&(bit, source)| (bit, fancy_regex::Regex::new(&format!("^{source}$")).unwrap()))
            .collect();
        let sample = all_chars().step_by(397).chain((0..0x3000).filter_map(char::from_u32).step_by(3));
        let mut checked = 0;
        for c in sample {
            let text = c.to_string();
            for (bit, regex) in &regexes {
                assert_eq!(
                    table.of_code_point(u32::from(c)) & bit != 0,
                    regex.is_match(&text).unwrap(),
                    "{regex} at U+{:04X}",
                    u32::from(c)
                );
            }
            checked += 1;
        }
        assert!(checked > 4000);
    }

    #[test]
    fn known_characters() {
        let table = table();
        let of = |c: char| table.of_code_point(u32::from(c));
        assert_eq!(of('a'), LETTER | WORD | LOWERCASE_LETTER);
        assert_eq!(of('Ǆ') & (UPPERCASE_LETTER | TITLECASE_LETTER), UPPERCASE_LETTER);
        assert_eq!(of('ǅ') & (UPPERCASE_LETTER | TITLECASE_LETTER), TITLECASE_LETTER);
        assert_eq!(of('\u{0301}'), MARK | WORD);
        assert_eq!(of('\u{2167}'), NUMBER | WORD);
        assert_eq!(of('\u{a0}'), SPACE);
        assert_eq!(of('\u{85}'), SPACE);
        assert_eq!(of('_'), WORD);
        assert_eq!(of('中') & (LETTER | OTHER_LETTER), LETTER | OTHER_LETTER);
        assert_eq!(of('\u{10FFFF}'), 0);
        eprintln!(
            "class table: {} bytes, {} pages, {} leaves, {} class ids",
            table.size_in_bytes(),
            table.pages.len() / LEAVES_PER_PAGE,
            table.leaves.len() / LEAF_LEN,
            table.classes_of_id.len()
        );
        assert!(table.size_in_bytes() < 200_000, "the trie should stay compact: {} bytes", table.size_in_bytes());
    }

    #[test]
    fn contraction_letters_fold_as_regex_syntax_does() {
        let table = table();
        assert_eq!(table.contraction_fold('S'), Some(b's'));
        assert_eq!(table.contraction_fold('\u{017F}'), Some(b's'));
        assert_eq!(table.contraction_fold('L'), Some(b'l'));
        assert_eq!(table.contraction_fold('k'), None);
        assert_eq!(table.contraction_fold('\u{212A}'), None);
        // A character folds to a contraction letter exactly when fancy-regex's `(?i:letter)` matches it: every
        // character below U+2200 (Latin, Greek, Cyrillic, the letterlike symbols), a sample of the rest.
        let sample: Vec<char> = all_chars().take_while(|&c| c < '\u{2200}').chain(all_chars().step_by(101)).collect();
        for &letter in CONTRACTION_LETTERS {
            let regex = fancy_regex::Regex::new(&format!("^(?i:{})$", letter as char)).unwrap();
            for &c in &sample {
                let matches = regex.is_match(&c.to_string()).unwrap();
                assert_eq!(table.contraction_fold(c) == Some(letter), matches, "{c:?} vs {}", letter as char);
            }
        }
    }
}
