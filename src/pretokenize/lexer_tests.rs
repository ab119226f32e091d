//! The hand-written splitters against fancy-regex running the pattern strings: exhaustively on short strings,
//! on seeded random strings, on the shared data files; and on pathological inputs, for linear time. The public
//! splitters run the block scanner (`blocks.rs`) at this CPU's level; the block scanner at every level is also
//! held to the scalar lexer on strings built to cross its 64-byte blocks in every way.

use std::path::PathBuf;

use super::blocks;
use super::lexer::{
    split_cl100k, split_cl100k_scalar, split_gpt2, split_gpt2_scalar, split_o200k, split_o200k_scalar, split_whitespace,
};
use super::{CL100K, GPT2, O200K, WHITESPACE};
use crate::cpu::Level;

/// A splitter and the pattern it must agree with.
struct Case {
    name: &'static str,
    pattern: &'static str,
    split: fn(&str) -> Vec<&str>,
    /// False for `whitespace`, which drops the whitespace between its pieces.
    tiles: bool,
}

macro_rules! collected {
    ($split:ident) => {
        |text| {
            let mut pieces: Vec<&str> = Vec::new();
            let mut sink = |piece| pieces.push(piece);
            $split(text, &mut sink);
            pieces
        }
    };
}

const CASES: [Case; 4] = [
    Case { name: "gpt2", pattern: GPT2, split: collected!(split_gpt2), tiles: true },
    Case { name: "cl100k", pattern: CL100K, split: collected!(split_cl100k), tiles: true },
    Case { name: "o200k", pattern: O200K, split: collected!(split_o200k), tiles: true },
    Case { name: "whitespace", pattern: WHITESPACE, split: collected!(split_whitespace), tiles: false },
];

/// The splitters with their patterns compiled by fancy-regex.
fn cases_with_regexes() -> Vec<(&'static Case, fancy_regex::Regex)> {
    CASES.iter().map(|case| (case, fancy_regex::Regex::new(case.pattern).unwrap())).collect()
}

fn regex_pieces<'t>(regex: &fancy_regex::Regex, text: &'t str) -> Vec<&'t str> {
    regex
        .find_iter(text)
        .map(|m| m.unwrap_or_else(|e| panic!("fancy-regex failed on {text:?}: {e}")).as_str())
        .filter(|piece| !piece.is_empty())
        .collect()
}

/// Asserts that the splitter and fancy-regex cut `text` into the same pieces.
fn assert_agrees(case: &Case, regex: &fancy_regex::Regex, text: &str) {
    let ours = (case.split)(text);
    let expected = regex_pieces(regex, text);
    assert!(ours == expected, "{} on {text:?}:\n  lexer: {ours:?}\n  regex: {expected:?}", case.name);
}

/// The short-string alphabet: one unit each (a unit may be two chars, as `e` + combining acute). Chosen for the
/// corners of the patterns: contraction letters in both cases and U+017F LONG S (which folds to `s`), each kind
/// of number (Nd in two scripts, Nl, No), the o200k letter classes (Lu, Ll, Lt, Lm, Lo, marks alone and after a
/// letter), ASCII and Unicode whitespace with CR/LF apart, the `/` that o200k treats specially, punctuation, a
/// 4-byte emoji, and `_` (a word character that is not a letter).
const ALPHABET: [&str; 37] = [
    "a", "A", "'", "s", "S", "\u{17F}", "t", "l", "v", "e", "r", "d", "m", "1", "\u{663}", "\u{2167}", "½", "\u{2019}",
    " ", "\t", "\n", "\r", "\u{a0}", "\u{2028}", "\u{3000}", "\u{85}", ".", "/", "-", "中", "é", "e\u{301}", "\u{301}",
    "😀", "_", "\u{2B0}", "\u{1C5}",
];

/// Every string of up to four units from `ALPHABET`, each pattern (1.9M strings; split over two threads).
#[test]
fn all_short_strings_agree_with_fancy_regex() {
    const MAX_UNITS: u32 = 4;
    let cases = cases_with_regexes();
    let first_units: Vec<usize> = (0..ALPHABET.len()).collect();
    std::thread::scope(|scope| {
        for half in first_units.chunks(first_units.len().div_ceil(2)) {
            let cases = &cases;
            scope.spawn(move || {
                let mut text = String::new();
                for &first in half {
                    for units in 0..MAX_UNITS {
                        for rest in 0..ALPHABET.len().pow(units) {
                            text.clear();
                            text.push_str(ALPHABET[first]);
                            let mut rest = rest;
                            for _ in 0..units {
                                text.push_str(ALPHABET[rest % ALPHABET.len()]);
                                rest /= ALPHABET.len();
                            }
                            for (case, regex) in cases {
                                assert_agrees(case, regex, &text);
                            }
                        }
                    }
                }
            });
        }
    });
    for (case, regex) in &cases {
        assert_agrees(case, regex, "");
    }
}

/// SplitMix64: a tiny seeded generator, so the random cases are the same on every run.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// How many random strings to try: `BYTEPAIR_LEXER_CASES`, else a count that keeps a debug `cargo test` quick.
fn random_case_count() -> usize {
    match std::env::var("BYTEPAIR_LEXER_CASES") {
        Ok(count) => count.parse().expect("BYTEPAIR_LEXER_CASES is a number of strings"),
        Err(_) if cfg!(debug_assertions) => 30_000,
        Err(_) => 300_000,
    }
}

/// Seeded random strings of up to 40 units; a quarter of the units repeat the one before, so that runs (of
/// spaces, capitals, digits, marks, ...) get long enough for the quantifiers to matter.
#[test]
fn random_strings_agree_with_fancy_regex() {
    let cases = cases_with_regexes();
    let mut random = SplitMix64(0x5EED_B17E_0A1B);
    let mut text = String::new();
    for _ in 0..random_case_count() {
        text.clear();
        let mut unit = random.below(ALPHABET.len());
        for _ in 0..random.below(41) {
            if random.below(4) != 0 {
                unit = random.below(ALPHABET.len());
            }
            text.push_str(ALPHABET[unit]);
        }
        for (case, regex) in &cases {
            assert_agrees(case, regex, &text);
        }
    }
}

/// Long ASCII runs (the splitters skip letters and digits 8 bytes at a time): random strings of up to 80 units,
/// mostly ASCII letters of both cases and digits, broken by a few units of every other kind, so that runs end
/// at every offset within a word, next to non-ASCII letters, and near the end of the text.
#[test]
fn long_ascii_runs_agree_with_fancy_regex() {
    const RUNS: [&str; 8] = ["a", "z", "A", "Z", "m", "Q", "0", "9"];
    let cases = cases_with_regexes();
    let mut random = SplitMix64(0xA5C1_1E77);
    let mut text = String::new();
    for _ in 0..random_case_count() / 4 {
        text.clear();
        for _ in 0..random.below(81) {
            let unit = if random.below(6) == 0 {
                ALPHABET[random.below(ALPHABET.len())]
            } else if random.below(12) == 0 {
                // The ASCII neighbours of the letter and digit ranges.
                ["@", "[", "`", "{", "/", ":", "\x7f", "\u{80}"][random.below(8)]
            } else {
                let kinds = if random.below(3) == 0 { RUNS.len() } else { 4 };
                RUNS[random.below(kinds)]
            };
            text.push_str(unit);
        }
        for (case, regex) in &cases {
            assert_agrees(case, regex, &text);
        }
    }
}

/// Hand-picked inputs that pin down the behaviours the comments in lexer.rs describe.
#[test]
fn documented_behaviours() {
    let gpt2 = CASES[0].split;
    let cl100k = CASES[1].split;
    let o200k = CASES[2].split;
    let whitespace = CASES[3].split;
    assert_eq!(gpt2("it'sa 'S  x\n"), ["it", "'s", "a", " '", "S", " ", " x", "\n"]);
    assert_eq!(cl100k("it'Sa 'ſ"), ["it", "'S", "a", " '", "ſ"]);
    assert_eq!(cl100k("x \u{17F}'\u{17F}"), ["x", " \u{17F}", "'\u{17F}"]);
    assert_eq!(cl100k("12345!!\n\nx  \n  "), ["123", "45", "!!\n\n", "x", "  \n  "]);
    assert_eq!(cl100k("a \n b"), ["a", " \n", " b"]);
    assert_eq!(o200k("DON'T don'ts HTMLParser"), ["DON'T", " don't", "s", " HTMLParser"]);
    assert_eq!(o200k("x!\n/y"), ["x", "!\n/", "y"]);
    assert_eq!(o200k("a\n\n  "), ["a", "\n\n", "  "]);
    assert_eq!(o200k("ʰAB"), ["ʰ", "AB"]);
    assert_eq!(whitespace("a½ Ⅷ_x, \t!"), ["a", "½", "Ⅷ_x", ",", "!"]);
    for (case, regex) in cases_with_regexes() {
        for text in ["it'sa 'S  x\n", "12345!!\n\nx  \n  ", "DON'T don'ts HTMLParser", "x!\n/y", "ʰAB", "a½ Ⅷ_x, \t!"]
        {
            assert_agrees(case, &regex, text);
        }
    }
}

/// `../shared/data` beside the crate, or `BYTEPAIR_SHARED_DATA`; None when absent.
fn shared_data() -> Option<PathBuf> {
    let dir = match std::env::var_os("BYTEPAIR_SHARED_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
    };
    dir.is_dir().then_some(dir)
}

fn files_under(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|entry| entry.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The multilingual files, the big list of naughty strings and tiny Shakespeare: whole, and line by line.
#[test]
fn shared_data_files_agree_with_fancy_regex() {
    let Some(data) = shared_data() else { return };
    let mut files = Vec::new();
    files_under(&data.join("multilingual"), &mut files);
    files.push(data.join("testvectors/naughty_strings/blns.txt"));
    files.push(data.join("text/tinyshakespeare/input.txt"));
    let cases = cases_with_regexes();
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for (case, regex) in &cases {
            assert_agrees(case, regex, &text);
            for line in text.split_inclusive('\n') {
                assert_agrees(case, regex, line);
            }
        }
    }
}

/// Checks that the pieces are non-empty slices of `text`, in order, and — for tiling splitters — cover it
/// exactly; for `whitespace`, that only whitespace is left between them.
fn assert_pieces_cover(case: &Case, text: &str) {
    let pieces = (case.split)(text);
    let mut covered = 0;
    for piece in &pieces {
        assert!(!piece.is_empty(), "{}: empty piece", case.name);
        let start = piece.as_ptr() as usize - text.as_ptr() as usize;
        assert!(start >= covered && start + piece.len() <= text.len(), "{}: piece out of order", case.name);
        let gap = &text[covered..start];
        assert!(if case.tiles { gap.is_empty() } else { gap.chars().all(char::is_whitespace) }, "{}: gap", case.name);
        covered = start + piece.len();
    }
    let rest = &text[covered..];
    assert!(if case.tiles { rest.is_empty() } else { rest.chars().all(char::is_whitespace) }, "{}: tail", case.name);
}

/// Megabytes of the inputs that make backtracking engines (or a careless lexer) quadratic. A quadratic splitter
/// would not finish; the pieces must still cover the text, and agree with fancy-regex on a shorter prefix.
#[test]
fn pathological_inputs_split_in_linear_time() {
    let mut random = SplitMix64(42);
    let mut random_text = |alphabet: &[&str], units: usize| -> String {
        (0..units).map(|_| alphabet[random.below(alphabet.len())]).collect()
    };
    let letters: Vec<String> = ('a'..='z').map(String::from).collect();
    let letters: Vec<&str> = letters.iter().map(String::as_str).collect();
    let json_record = r#"{"id":12345,"name":"x\u00e9y","tags":["a","b"],"score":-1.5e3,"ok":true,"path":"/a/b"},"#;
    let inputs: Vec<(&str, String)> = vec![
        ("a*N", "a".repeat(4 << 20)),
        ("A*N", "A".repeat(2 << 20)),
        ("space*N", " ".repeat(4 << 20)),
        ("space*N then x", " ".repeat(2 << 20) + "x"),
        ("^*1M", "^".repeat(1_000_000)),
        ("newline*N", "\n".repeat(4 << 20)),
        ("CRLF*N then x", "\r\n".repeat(1 << 20) + "x"),
        ("digits", "7".repeat(2 << 20)),
        ("apostrophes", "'".repeat(2 << 20)),
        ("'s*N", "'s".repeat(1 << 20)),
        ("slashes after newline", "!\n".to_string() + &"/".repeat(2 << 20)),
        ("random letters", random_text(&letters, 4 << 20)),
        ("DNA", random_text(&["A", "C", "G", "T"], 4 << 20)),
        ("minified JSON", json_record.repeat((2 << 20) / json_record.len())),
        ("mixed whitespace", " \t\u{a0}\n\r\u{2028}".repeat(300_000)),
        ("mixed whitespace then x", " \t\u{a0}\u{2028}\u{3000}".repeat(300_000) + "x"),
        ("marks", "\u{301}".repeat(1 << 20)),
        ("capitals and modifier letters", "AʰB".repeat(400_000)),
        ("titlecase", "\u{1C5}".repeat(1 << 20)),
        ("capitals then mark", "A".repeat(1 << 20) + "\u{301}"),
        ("spaced capitals", " A".repeat(1 << 20)),
        ("punctuation before letters", "!a".repeat(1 << 20)),
    ];
    let cases = cases_with_regexes();
    for (name, text) in &inputs {
        for (case, regex) in &cases {
            assert_pieces_cover(case, text);
            let mut prefix_end = text.len().min(20_000);
            while !text.is_char_boundary(prefix_end) {
                prefix_end -= 1;
            }
            let prefix = &text[..prefix_end];
            let ours = (case.split)(prefix);
            assert!(ours == regex_pieces(regex, prefix), "{} disagrees on a prefix of {name}", case.name);
        }
    }
}

/// The block scanner at `level` (at the portable level: its rules with the masks of plain 64-bit words, which
/// production leaves to the scalar lexer) and the scalar lexer, on `text`.
fn assert_blocks_agree(pattern: blocks::Pattern, level: Level, text: &str) {
    let mut ours: Vec<&str> = Vec::new();
    if level == Level::Portable {
        blocks::split_portable_rules(pattern, text, &mut |piece| ours.push(piece));
    } else {
        blocks::split(pattern, text, &mut |piece| ours.push(piece), level);
    }
    let mut scalar: Vec<&str> = Vec::new();
    let mut sink = |piece| scalar.push(piece);
    match pattern {
        blocks::Pattern::Gpt2 => split_gpt2_scalar(text, &mut sink),
        blocks::Pattern::Cl100k => split_cl100k_scalar(text, &mut sink),
        blocks::Pattern::O200k => split_o200k_scalar(text, &mut sink),
    }
    if ours != scalar {
        let first = ours.iter().zip(&scalar).position(|(a, b)| a != b).unwrap_or(ours.len().min(scalar.len()));
        let at: usize = scalar[..first].iter().map(|p| p.len()).sum();
        panic!(
            "{pattern:?} at {level:?} differs from the scalar lexer at byte {at} (block {}, offset {}) of {text:?}:\n  \
             blocks: {:?}\n  scalar: {:?}",
            at / 64,
            at % 64,
            &ours[first.saturating_sub(2)..(first + 3).min(ours.len())],
            &scalar[first.saturating_sub(2)..(first + 3).min(scalar.len())],
        );
    }
}

const BLOCK_PATTERNS: [blocks::Pattern; 3] = [blocks::Pattern::Gpt2, blocks::Pattern::Cl100k, blocks::Pattern::O200k];

/// The levels this CPU can run (the portable one always).
fn levels() -> Vec<Level> {
    Level::ALL.into_iter().filter(|&level| level <= crate::cpu::detected()).collect()
}

/// Units for texts that cross blocks: those of `ALPHABET`, and what the block rules treat apart — contractions
/// and their case, CR LF, runs, curly quotes and dashes (painted multi-byte "other" characters), non-ASCII
/// whitespace, letters of each case and script, a non-ASCII digit, marks, CJK (o200k leaves these to the scalar
/// lexer), slashes after line breaks, 4-byte characters.
const BLOCK_UNITS: [&str; 34] = [
    "'s",
    "'ll",
    "'RE",
    "'Ve",
    "'d",
    "'M",
    "'\u{17F}",
    "\r\n",
    "\n\n",
    "   ",
    "\t",
    "123",
    "4567",
    "AB",
    "Ab",
    "aB",
    "abc",
    "XYZ",
    "\u{201C}",
    "\u{201D}",
    "\u{2014}",
    "\u{2019}",
    "\u{a0}",
    "\u{3000}",
    "\u{e9}t\u{e9}",
    "\u{c9}T",
    "\u{3b1}\u{3b2}",
    "\u{663}",
    "a\u{301}",
    "\u{4e2d}\u{6587}",
    "/",
    "!\n/",
    "\u{1F600}",
    "x",
];

/// A seeded random text of about `len` bytes: units from `BLOCK_UNITS` and `ALPHABET`, often repeated (long runs
/// of one kind cross blocks), mostly ASCII.
fn block_text(random: &mut SplitMix64, len: usize) -> String {
    let mut text = String::new();
    let ascii_heavy = random.below(3) != 0;
    while text.len() < len {
        let unit = match random.below(10) {
            0..=3 => BLOCK_UNITS[random.below(BLOCK_UNITS.len())],
            4..=5 if !ascii_heavy => ALPHABET[random.below(ALPHABET.len())],
            _ => ["a", "b", "e", "s", "t", " ", "A", "T", ".", ",", "7", "\n", "'", "-"][random.below(14)],
        };
        let repeat = if random.below(6) == 0 { 1 + random.below(70) } else { 1 };
        for _ in 0..repeat {
            text.push_str(unit);
        }
    }
    text
}

/// The block scanner, at every level this CPU has, gives the scalar lexer's pieces on seeded random texts of up to
/// 400 bytes, built to cross blocks with runs of every kind.
#[test]
fn block_scanner_equals_the_scalar_lexer_on_random_texts() {
    let mut random = SplitMix64(0xB10C_5CA7);
    let levels = levels();
    for _ in 0..random_case_count() / 3 {
        let len = random.below(400);
        let text = block_text(&mut random, len);
        for pattern in BLOCK_PATTERNS {
            for &level in &levels {
                assert_blocks_agree(pattern, level, &text);
            }
        }
    }
}

/// Every string of up to three `ALPHABET` units, placed so that it straddles a block boundary after each of
/// several contexts (letters, spaces, digits, punctuation, a line break, a curly quote), at every level.
#[test]
fn short_strings_across_a_block_boundary_equal_the_scalar_lexer() {
    let contexts = [
        "abcdefgh",
        "        ",
        "12345678",
        "........",
        "\n\n\n\n\n\n\n\n",
        "\u{201C}\u{201C}\u{201C}",
        "ab'",
        "a \n ",
    ];
    let levels = levels();
    let mut text = String::new();
    for units in 1..=3u32 {
        for k in 0..ALPHABET.len().pow(units) {
            let mut unit_text = String::new();
            let mut k = k;
            for _ in 0..units {
                unit_text.push_str(ALPHABET[k % ALPHABET.len()]);
                k /= ALPHABET.len();
            }
            for context in contexts {
                // The string ends at, or starts at, or sits across the boundary at byte 64.
                for offset in [62usize, 64 - unit_text.len().min(64), 63] {
                    text.clear();
                    while text.len() + context.len() <= offset {
                        text.push_str(context);
                    }
                    while text.len() < offset {
                        text.push('x');
                    }
                    text.push_str(&unit_text);
                    text.push_str(context);
                    for pattern in BLOCK_PATTERNS {
                        for &level in &levels {
                            assert_blocks_agree(pattern, level, &text);
                        }
                    }
                }
            }
        }
    }
}

/// Long runs across several blocks — whitespace with a line break at each offset (the last line break's rule
/// looks past the next block), digits (cut in threes across blocks), line breaks after punctuation — at every
/// level.
#[test]
fn long_runs_across_blocks_equal_the_scalar_lexer() {
    let levels = levels();
    let mut texts = Vec::new();
    for run in [60usize, 63, 64, 65, 127, 128, 129, 200] {
        for at in [0, 1, run / 2, run.saturating_sub(2), run.saturating_sub(1)] {
            for (ws, before, after) in [(" ", "x", "y"), ("\t", "!", "1"), (" ", "x", ""), ("\u{a0}", "x", "y")] {
                let mut text = before.to_string();
                for i in 0..run {
                    text.push_str(if i == at { "\n" } else { ws });
                }
                text.push_str(after);
                texts.push(text);
            }
        }
        texts.push(format!("x{}y", "7".repeat(run)));
        texts.push(format!("x {}", "7".repeat(run)));
        texts.push(format!("!{}x", "\n".repeat(run)));
        texts.push(format!("!{}/x", "\r\n".repeat(run / 2)));
        texts.push(format!("a{}b", "'s".repeat(run / 2)));
        texts.push(format!("{}x", "\u{201C}".repeat(run / 3)));
    }
    for text in &texts {
        for pattern in BLOCK_PATTERNS {
            for &level in &levels {
                assert_blocks_agree(pattern, level, text);
            }
        }
    }
}
