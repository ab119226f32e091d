//! Pre-tokenization: cutting text into the pieces ("words") that BPE works inside, and cutting special tokens
//! out of the text before that.
//!
//! Training and encoding share this module, so the two can never split text differently.
//!
//! The built-in patterns (`GPT2`, `CL100K`, `O200K`, `WHITESPACE`) are split by hand-written lexers (`lexer`)
//! that give exactly fancy-regex's pieces for those pattern strings, an order of magnitude faster; a custom
//! pattern is run by fancy-regex.

pub mod blocks;
mod classes;
pub mod lexer;
#[cfg(test)]
mod lexer_tests;

use aho_corasick::{AhoCorasick, MatchKind};
use fancy_regex::Regex;

use crate::error::{Error, Result};

/// GPT-2's pattern, as published with the model (also r50k_base and p50k_base).
pub const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// cl100k_base (GPT-3.5/4), as in tiktoken.
pub const CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// o200k_base (GPT-4o), as in tiktoken.
pub const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);

/// HF tokenizers' `Whitespace` pre-tokenizer: runs of word characters, runs of other non-space characters.
/// Whitespace itself is dropped.
pub const WHITESPACE: &str = r"\w+|[^\w\s]+";

/// HF tokenizers' `WhitespaceSplit` pre-tokenizer: runs of non-whitespace; whitespace is dropped.
pub const WHITESPACE_SPLIT: &str = r"\S+";

/// HF tokenizers' `BertPreTokenizer`: whitespace is dropped and each punctuation character (Unicode `P*`, and
/// the ASCII symbols) is a piece of its own.
pub const BERT: &str = r"[^\s\p{P}!-/:-@\[-`{-~]+|[\p{P}!-/:-@\[-`{-~]";

/// The `lowercase` normaliser: each character lowercased on its own, as HF tokenizers' `Lowercase` does.
/// (`str::to_lowercase` differs only for a capital sigma ending a word, which it makes a final sigma `ς`.)
pub fn lowercase(text: &str) -> String {
    if text.contains('Σ') { text.chars().flat_map(char::to_lowercase).collect() } else { text.to_lowercase() }
}

/// Which pattern splits the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    Gpt2,
    Cl100k,
    O200k,
    Whitespace,
    /// No split: each input text is one word.
    None,
    Custom(String),
}

impl Pattern {
    /// `name` is one of the named patterns; anything else is taken as a regex.
    pub fn from_name_or_regex(name: Option<&str>) -> Pattern {
        match name {
            None => Pattern::None,
            Some("gpt2") | Some("r50k_base") | Some("p50k_base") => Pattern::Gpt2,
            Some("cl100k") | Some("cl100k_base") => Pattern::Cl100k,
            Some("o200k") | Some("o200k_base") => Pattern::O200k,
            Some("whitespace") => Pattern::Whitespace,
            Some(regex) => Pattern::Custom(regex.to_string()),
        }
    }

    /// The name saved in files, or None for a custom regex / no split.
    pub fn name(&self) -> Option<&'static str> {
        match self {
            Pattern::Gpt2 => Some("gpt2"),
            Pattern::Cl100k => Some("cl100k"),
            Pattern::O200k => Some("o200k"),
            Pattern::Whitespace => Some("whitespace"),
            Pattern::None | Pattern::Custom(_) => None,
        }
    }

    pub fn regex_source(&self) -> Option<&str> {
        match self {
            Pattern::Gpt2 => Some(GPT2),
            Pattern::Cl100k => Some(CL100K),
            Pattern::O200k => Some(O200K),
            Pattern::Whitespace => Some(WHITESPACE),
            Pattern::None => None,
            Pattern::Custom(s) => Some(s),
        }
    }

    /// True when the pattern throws text away (whitespace), so decoding cannot restore it exactly.
    pub fn drops_whitespace(&self) -> bool {
        matches!(self, Pattern::Whitespace)
    }

    /// True when pieces are cut at whitespace and never contain it (HF's Whitespace, WhitespaceSplit and
    /// BertPreTokenizer), so word markers show where decoding should put a space back.
    pub fn splits_at_whitespace(&self) -> bool {
        match self {
            Pattern::Whitespace => true,
            Pattern::Custom(regex) => regex == WHITESPACE_SPLIT || regex == BERT,
            _ => false,
        }
    }
}

/// Receives the pieces of a text, in order. Any `FnMut(&str)` closure is one. The encoder's sink is a struct
/// whose `piece` is `#[inline(always)]`: a closure's body is inlined at the splitters' call sites only when the
/// compiler finds it small, and the encoder's was not (a call per piece, ~15 instructions of ~100).
pub trait PieceSink<'t> {
    fn piece(&mut self, piece: &'t str);

    /// The piece `text[start..end]` (a splitter that has the whole text gives it, so that the sink may read
    /// the bytes around the piece).
    #[inline(always)]
    fn piece_in(&mut self, text: &'t str, start: usize, end: usize) {
        self.piece(&text[start..end]);
    }
}

impl<'t, F: FnMut(&'t str)> PieceSink<'t> for F {
    #[inline(always)]
    fn piece(&mut self, piece: &'t str) {
        self(piece)
    }
}

/// Cuts text into pieces with a pattern.
#[derive(Clone, Debug)]
pub struct PreTokenizer {
    pub pattern: Pattern,
    splitter: Splitter,
}

/// How a `PreTokenizer` splits: the built-in patterns by their hand-written splitters (`lexer`), which give
/// fancy-regex's pieces many times faster and cannot fail; custom patterns by fancy-regex itself.
#[derive(Clone, Debug)]
enum Splitter {
    Gpt2,
    Cl100k,
    O200k,
    Whitespace,
    Whole,
    Regex(Regex),
}

impl PreTokenizer {
    pub fn new(pattern: Pattern) -> Result<PreTokenizer> {
        let splitter = match &pattern {
            Pattern::Gpt2 => Splitter::Gpt2,
            Pattern::Cl100k => Splitter::Cl100k,
            Pattern::O200k => Splitter::O200k,
            Pattern::Whitespace => Splitter::Whitespace,
            Pattern::None => Splitter::Whole,
            Pattern::Custom(src) => Splitter::Regex(Regex::new(src).map_err(|e| {
                Error::value(format!(
                    "pattern {src:?} is not a valid regex: {e}. Use one of \"gpt2\", \"cl100k\", \"o200k\", \
                     \"whitespace\", None (no split), or a valid regex"
                ))
            })?),
        };
        if !matches!(splitter, Splitter::Whole | Splitter::Regex(_)) {
            // The hand-written splitters' character table (~5 ms, once per process): built with the
            // pre-tokenizer, not in the middle of the first text.
            classes::table();
        }
        Ok(PreTokenizer { pattern, splitter })
    }

    /// Calls `f` on each non-empty piece of `text`, in order. Only a custom regex can fail.
    pub fn split<'t>(&self, text: &'t str, f: impl FnMut(&'t str)) -> Result<()> {
        self.split_into(text, f)
    }

    /// `split`, giving the pieces to a `PieceSink`.
    pub fn split_into<'t>(&self, text: &'t str, mut sink: impl PieceSink<'t>) -> Result<()> {
        match &self.splitter {
            Splitter::Gpt2 => lexer::split_gpt2(text, &mut sink),
            Splitter::Cl100k => lexer::split_cl100k(text, &mut sink),
            Splitter::O200k => lexer::split_o200k(text, &mut sink),
            Splitter::Whitespace => lexer::split_whitespace(text, &mut sink),
            Splitter::Whole => {
                if !text.is_empty() {
                    sink.piece(text);
                }
            }
            Splitter::Regex(regex) => {
                for m in regex.find_iter(text) {
                    let m = m.map_err(|e| {
                        Error::value(format!(
                            "the pre-tokenization pattern failed on this input ({e}); the pattern backtracks too \
                             much — simplify it (avoid nested quantifiers and look-arounds)"
                        ))
                    })?;
                    if !m.as_str().is_empty() {
                        sink.piece(m.as_str());
                    }
                }
            }
        }
        Ok(())
    }
}

/// Finds special tokens in text (leftmost, then longest).
#[derive(Clone, Debug)]
pub struct SpecialMatcher {
    tokens: Vec<String>,
    automaton: Option<AhoCorasick>,
}

/// A part of a text: ordinary text, or the special token with this index (into the matcher's list).
#[derive(Debug, PartialEq, Eq)]
pub enum Segment<'t> {
    Text(&'t str),
    Special(usize),
}

impl SpecialMatcher {
    pub fn new(tokens: &[String]) -> SpecialMatcher {
        let automaton = if tokens.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(tokens)
                    .expect("special tokens are plain strings, which always build"),
            )
        };
        SpecialMatcher { tokens: tokens.to_vec(), automaton }
    }

    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// The first special token in `text`: (its index, its byte offset). One pass for all of them (finding
    /// each in turn was five passes over every text for cl100k, a fifth of `encode`'s time on English).
    pub fn find_first(&self, text: &str) -> Option<(usize, usize)> {
        let m = self.automaton.as_ref()?.find(text)?;
        Some((m.pattern().as_usize(), m.start()))
    }

    /// Calls `f` on the ordinary-text parts and the special tokens of `text`, in order.
    pub fn segments<'t>(&self, text: &'t str, mut f: impl FnMut(Segment<'t>) -> Result<()>) -> Result<()> {
        let Some(ac) = &self.automaton else {
            return if text.is_empty() { Ok(()) } else { f(Segment::Text(text)) };
        };
        let mut last = 0;
        for m in ac.find_iter(text) {
            if m.start() > last {
                f(Segment::Text(&text[last..m.start()]))?;
            }
            f(Segment::Special(m.pattern().as_usize()))?;
            last = m.end();
        }
        if last < text.len() {
            f(Segment::Text(&text[last..]))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(p: Pattern, text: &str) -> Vec<String> {
        let pt = PreTokenizer::new(p).unwrap();
        let mut out = Vec::new();
        pt.split(text, |s| out.push(s.to_string())).unwrap();
        out
    }

    #[test]
    fn gpt2_keeps_the_space_with_the_next_word() {
        assert_eq!(pieces(Pattern::Gpt2, "Hello  world's 123!\n"), ["Hello", " ", " world", "'s", " 123", "!", "\n"]);
    }

    #[test]
    fn cl100k_caps_digit_runs_at_three() {
        assert_eq!(pieces(Pattern::Cl100k, "12345 abc"), ["123", "45", " abc"]);
    }

    #[test]
    fn whitespace_drops_spaces() {
        assert_eq!(pieces(Pattern::Whitespace, "Hi, you!"), ["Hi", ",", "you", "!"]);
    }

    #[test]
    fn built_in_patterns_split_as_their_regexes_do() {
        let text = "Don't stop: 12345 apples, \tsaid   O'NEIL's niña\r\n\n  ſ'Ll  ";
        for pattern in [Pattern::Gpt2, Pattern::Cl100k, Pattern::O200k, Pattern::Whitespace] {
            let regex = Regex::new(pattern.regex_source().unwrap()).unwrap();
            let expected: Vec<&str> = regex.find_iter(text).map(|m| m.unwrap().as_str()).collect();
            assert_eq!(pieces(pattern.clone(), text), expected, "{pattern:?}");
            // The same string as a custom pattern goes through fancy-regex, and agrees.
            let custom = Pattern::Custom(pattern.regex_source().unwrap().to_string());
            assert_eq!(pieces(custom, text), expected, "{pattern:?} as a custom regex");
        }
    }

    #[test]
    fn custom_regex_splits_with_fancy_regex() {
        assert_eq!(pieces(Pattern::Custom(r"\d+|(?<=\d)[a-z]".into()), "a12b3c"), ["12", "b", "3", "c"]);
    }

    #[test]
    fn hf_whitespace_split_and_bert_patterns() {
        assert_eq!(pieces(Pattern::Custom(WHITESPACE_SPLIT.into()), "Hi, you!\t¿no?"), ["Hi,", "you!", "¿no?"]);
        assert_eq!(
            pieces(Pattern::Custom(BERT.into()), "Hi, 2+2=4 «you»!"),
            ["Hi", ",", "2", "+", "2", "=", "4", "«", "you", "»", "!"]
        );
    }

    #[test]
    fn lowercase_is_per_character_as_in_hf() {
        assert_eq!(lowercase("ΟΔΟΣ ΣΑΣ İx"), "οδοσ σασ i\u{307}x");
    }

    #[test]
    fn no_pattern_keeps_the_text_whole() {
        assert_eq!(pieces(Pattern::None, "a b"), ["a b"]);
    }

    #[test]
    fn bad_regex_is_a_value_error() {
        let err = PreTokenizer::new(Pattern::Custom("(".into())).unwrap_err();
        assert!(err.message.contains("not a valid regex"));
    }

    #[test]
    fn specials_are_cut_leftmost_longest() {
        let m = SpecialMatcher::new(&["<a>".into(), "<a><b>".into()]);
        let mut out = Vec::new();
        m.segments("x<a><b>y<a>", |s| {
            out.push(format!("{s:?}"));
            Ok(())
        })
        .unwrap();
        assert_eq!(out, ["Text(\"x\")", "Special(1)", "Text(\"y\")", "Special(0)"]);
    }
}
