//! Pre-tokenization: cutting text into the pieces ("words") that BPE works inside, and cutting special tokens
//! out of the text before that.
//!
//! Training and encoding share this module, so the two can never split text differently.
//!
//! The built-in patterns (`GPT2`, `CL100K`, `O200K`, `WHITESPACE`) are split by hand-written lexers (`lexer`)
//! that give exactly fancy-regex's pieces for those pattern strings, an order of magnitude faster. A custom
//! pattern runs on `engine` (a lazy DFA, or fancy-regex when it needs backtracking, within a budget of work per
//! byte); what it leaves unmatched is kept, dropped or refused (`split::Unmatched`). A HF tokenizer.json's
//! `Split` step keeps its Oniguruma regex, rewritten for the engine by `oniguruma`, and HF's behaviours
//! (`split::Behavior`).

pub mod blocks;
mod classes;
pub mod engine;
pub mod lexer;
#[cfg(test)]
mod lexer_tests;
pub mod oniguruma;
pub mod split;
mod superwords;

pub use superwords::{SUPERWORDS, split_superwords};

use aho_corasick::{AhoCorasick, MatchKind};

use crate::error::{Error, Result, py_repr_cut};
use engine::BoundedRegex;
pub use split::{Behavior, Unmatched};

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

/// Whether `c` is whitespace (`\s`) and whether it is a letter or number (`\p{L}`, `\p{N}`), by the classes
/// the built-in patterns' splitters use (for `crate::cutting`, which cuts where they always end a piece).
pub fn char_classes(c: char) -> (bool, bool) {
    let classes = classes::table().of_code_point(c as u32);
    (classes & classes::SPACE != 0, classes & (classes::LETTER | classes::NUMBER) != 0)
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
    /// A regex in bytepair's syntax (fancy-regex's), and what becomes of the text it does not match.
    Custom {
        regex: String,
        unmatched: Unmatched,
    },
    /// HF tokenizers' Split step: its regex in Oniguruma's syntax, as the tokenizer.json has it, and what
    /// becomes of the matches.
    HfSplit {
        regex: String,
        behavior: Behavior,
        invert: bool,
    },
}

impl Pattern {
    /// `name` is one of the named patterns; anything else is taken as a regex, which leaves `unmatched` what it
    /// does not match.
    pub fn from_name_or_regex(name: Option<&str>, unmatched: Unmatched) -> Pattern {
        match name {
            None => Pattern::None,
            Some("gpt2") | Some("r50k_base") | Some("p50k_base") => Pattern::Gpt2,
            Some("cl100k") | Some("cl100k_base") => Pattern::Cl100k,
            Some("o200k") | Some("o200k_base") => Pattern::O200k,
            Some("whitespace") => Pattern::Whitespace,
            Some(regex) => Pattern::Custom { regex: regex.to_string(), unmatched },
        }
    }

    /// A custom regex whose unmatched text is dropped (HF's WhitespaceSplit and BertPreTokenizer as regexes).
    pub fn dropping(regex: &str) -> Pattern {
        Pattern::Custom { regex: regex.to_string(), unmatched: Unmatched::Drop }
    }

    /// The name saved in files, or None for a regex / no split.
    pub fn name(&self) -> Option<&'static str> {
        match self {
            Pattern::Gpt2 => Some("gpt2"),
            Pattern::Cl100k => Some("cl100k"),
            Pattern::O200k => Some("o200k"),
            Pattern::Whitespace => Some("whitespace"),
            Pattern::None | Pattern::Custom { .. } | Pattern::HfSplit { .. } => None,
        }
    }

    /// The regex (a HF Split's in Oniguruma's syntax), or None for no split.
    pub fn regex_source(&self) -> Option<&str> {
        match self {
            Pattern::Gpt2 => Some(GPT2),
            Pattern::Cl100k => Some(CL100K),
            Pattern::O200k => Some(O200K),
            Pattern::Whitespace => Some(WHITESPACE),
            Pattern::None => None,
            Pattern::Custom { regex, .. } | Pattern::HfSplit { regex, .. } => Some(regex),
        }
    }

    /// What a custom regex does with the text it does not match (None: not a custom regex).
    pub fn unmatched(&self) -> Option<Unmatched> {
        match self {
            Pattern::Custom { unmatched, .. } => Some(*unmatched),
            _ => None,
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
            Pattern::Custom { regex, unmatched: Unmatched::Drop } => regex == WHITESPACE_SPLIT || regex == BERT,
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

    /// Whether the sink takes the next block's pieces at once (`pieces_to`) rather than one by one.
    #[inline(always)]
    fn by_block(&self) -> bool {
        false
    }

    /// The pieces of `text` that end in a block, in order: from `pos` to the first start of `starts` (bit i: a
    /// piece starts at byte `base + i`; at least one bit set), and from each start to the next (a splitter that
    /// finds a block's pieces at once gives them so when the sink asks, that it may loop over them without the
    /// splitter's work in between). The piece from the last start goes on into the next block.
    #[inline(always)]
    fn pieces_to(&mut self, text: &'t str, pos: usize, base: usize, starts: u64) {
        for (start, end) in block_pieces(pos, base, starts) {
            self.piece_in(text, start, end);
        }
    }
}

/// Where the last piece of `starts` starts (bit i: a piece starts at `base + i`; at least one bit set): where the
/// pieces `PieceSink::pieces_to` is given end.
#[inline(always)]
pub fn last_start(base: usize, starts: u64) -> usize {
    debug_assert!(starts != 0);
    base + (63 - starts.leading_zeros() as usize)
}

/// The (start, end) of the pieces `PieceSink::pieces_to` is given: from `pos` to the first start of `starts`
/// (bit i: a piece starts at `base + i`), then from each start to the next.
#[inline(always)]
pub fn block_pieces(pos: usize, base: usize, starts: u64) -> BlockPieces {
    BlockPieces { start: pos, base, starts }
}

/// The iterator of `block_pieces`.
#[derive(Clone, Copy, Debug)]
pub struct BlockPieces {
    /// Where the next piece starts, and the starts of the pieces after it (`starts`' bits from `base`).
    start: usize,
    base: usize,
    starts: u64,
}

impl BlockPieces {
    /// Where the next piece ends, if there is one (without taking it).
    #[inline(always)]
    pub fn next_end(&self) -> Option<usize> {
        (self.starts != 0).then(|| self.base + self.starts.trailing_zeros() as usize)
    }
}

impl Iterator for BlockPieces {
    type Item = (usize, usize);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, usize)> {
        let end = self.next_end()?;
        self.starts &= self.starts - 1;
        let piece = (self.start, end);
        self.start = end;
        Some(piece)
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
/// fancy-regex's pieces many times faster and cannot fail; regexes by `engine`.
#[derive(Clone, Debug)]
enum Splitter {
    Gpt2,
    Cl100k,
    O200k,
    Whitespace,
    /// SuperBPE's second stage (`SUPERWORDS`, a custom regex that is recognised and cut by hand).
    Superwords,
    Whole,
    Regex(BoundedRegex),
}

impl PreTokenizer {
    pub fn new(pattern: Pattern) -> Result<PreTokenizer> {
        let splitter = match &pattern {
            Pattern::Gpt2 => Splitter::Gpt2,
            Pattern::Cl100k => Splitter::Cl100k,
            Pattern::O200k => Splitter::O200k,
            Pattern::Whitespace => Splitter::Whitespace,
            Pattern::None => Splitter::Whole,
            Pattern::Custom { regex, .. } if regex == SUPERWORDS => Splitter::Superwords,
            Pattern::Custom { regex, .. } => Splitter::Regex(BoundedRegex::new(regex, regex)?),
            Pattern::HfSplit { regex, .. } => {
                let translated = oniguruma::translate(regex).map_err(Error::value)?;
                Splitter::Regex(BoundedRegex::new(&translated.regex, regex)?)
            }
        };
        if !matches!(splitter, Splitter::Whole | Splitter::Regex(_)) {
            // The hand-written splitters' character table (~5 ms, once per process): built with the
            // pre-tokenizer, not in the middle of the first text.
            classes::table();
        }
        Ok(PreTokenizer { pattern, splitter })
    }

    /// The regex tiktoken (fancy-regex, which keeps only matches) would run to cut text into this pre-tokenizer's
    /// pieces, or why there is none: no pattern; a HF Split (tiktoken has no behaviours); a custom regex that
    /// keeps the text it does not match and can match the empty string. Keeping the rest is the regex or, where
    /// it does not match, a run of characters up to where it does (exact for a regex whose matches are never
    /// empty: each search then starts with a match of one or the other).
    pub fn tiktoken_regex(&self) -> Result<String> {
        match (&self.pattern, &self.splitter) {
            (Pattern::None, _) => {
                Err(Error::value("tiktoken needs a pre-tokenization pattern; this tokenizer has none (pattern=None)"))
            }
            (Pattern::HfSplit { behavior, invert, .. }, _) => Err(Error::value(format!(
                "tiktoken keeps a pattern's matches as pieces and nothing else; this tokenizer's pre-tokenizer is a \
                 HF Split ({}, invert={invert}), which tiktoken cannot run",
                behavior.name()
            ))),
            (Pattern::Custom { regex, unmatched: Unmatched::Keep }, Splitter::Regex(bounded)) => {
                if bounded.matches_empty() {
                    return Err(Error::value(format!(
                        "tiktoken leaves out the text its pattern does not match, and this tokenizer keeps it \
                         (unmatched=\"keep\"); the pattern {} can match the empty string, so no regex tiktoken \
                         runs cuts text as it does. Make the tokenizer with unmatched=\"drop\", or with a pattern \
                         whose matches are never empty",
                        py_repr_cut(regex, engine::SHOWN_CHARS)
                    )));
                }
                Ok(format!("(?:{regex})|(?:(?!(?:{regex}))[\\s\\S])+"))
            }
            (pattern, _) => Ok(pattern.regex_source().unwrap_or_default().to_string()),
        }
    }

    /// Calls `f` on each non-empty piece of `text`, in order. Only a regex can fail (its budget of work spent,
    /// Ctrl-C, or text that `Unmatched::Error` refuses).
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
            Splitter::Superwords => superwords::split_superwords(text, &mut sink),
            Splitter::Whole => {
                if !text.is_empty() {
                    sink.piece(text);
                }
            }
            Splitter::Regex(regex) => match &self.pattern {
                Pattern::Custom { regex: shown, unmatched } => {
                    split::split_unmatched(text, regex, *unmatched, shown, &mut sink)?
                }
                Pattern::HfSplit { behavior, invert, .. } => split::split(text, regex, *behavior, *invert, &mut sink)?,
                _ => unreachable!("only regexes have a regex splitter"),
            },
        }
        Ok(())
    }
}

/// Special tokens longer than this (in bytes) are found by a substring search of their own, not by the
/// automaton (see `SpecialMatcher`).
const LONG_SPECIAL_TOKEN: usize = 256;

/// Finds special tokens in text (leftmost, then longest).
///
/// Short tokens go into one Aho-Corasick automaton; each long one (over `LONG_SPECIAL_TOKEN` bytes) has a
/// substring finder (memchr's two-way search: linear time, memory independent of its length). An automaton
/// holding a long token cost time quadratic in its length to build as a DFA (100 000 characters: 31 s), and
/// ~80 bytes per byte of it as an NFA (a 10 MB token: 800 MB and 3 s).
#[derive(Clone, Debug)]
pub struct SpecialMatcher {
    tokens: Vec<String>,
    /// The short tokens' automaton, and each of its patterns' index in `tokens`.
    automaton: Option<(AhoCorasick, Vec<usize>)>,
    /// Each long token's index in `tokens` and its finder.
    long: Vec<(usize, memchr::memmem::Finder<'static>)>,
}

/// A part of a text: ordinary text, or the special token with this index (into the matcher's list).
#[derive(Debug, PartialEq, Eq)]
pub enum Segment<'t> {
    Text(&'t str),
    Special(usize),
}

impl SpecialMatcher {
    pub fn new(tokens: &[String]) -> SpecialMatcher {
        let (short, long): (Vec<usize>, Vec<usize>) =
            (0..tokens.len()).partition(|&i| tokens[i].len() <= LONG_SPECIAL_TOKEN);
        let automaton = (!short.is_empty()).then(|| {
            let automaton = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(short.iter().map(|&i| &tokens[i]))
                .expect("special tokens are plain strings, which always build");
            (automaton, short)
        });
        let long =
            long.into_iter().map(|i| (i, memchr::memmem::Finder::new(tokens[i].as_bytes()).into_owned())).collect();
        SpecialMatcher { tokens: tokens.to_vec(), automaton, long }
    }

    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// The first special token in `text`: (its index, its byte offset). One pass for all of them (finding
    /// each in turn was five passes over every text for cl100k, a fifth of `encode`'s time on English).
    pub fn find_first(&self, text: &str) -> Option<(usize, usize)> {
        let mut next_long = vec![None; self.long.len()];
        self.next_match(text, 0, &mut next_long).map(|(i, start, _)| (i, start))
    }

    /// The leftmost-longest match at or after `from`: (index, start, end). `next_long[k]` caches where long
    /// token k occurs next (None: not searched yet; `usize::MAX`: nowhere after the last search), so that a
    /// text with many matches searches for each long token about once, not from every match on.
    fn next_match(&self, text: &str, from: usize, next_long: &mut [Option<usize>]) -> Option<(usize, usize, usize)> {
        let mut best = self.automaton.as_ref().and_then(|(ac, index)| {
            let m = ac.find(aho_corasick::Input::new(text).range(from..))?;
            Some((index[m.pattern().as_usize()], m.start(), m.end()))
        });
        for ((i, finder), next) in self.long.iter().zip(next_long.iter_mut()) {
            let at = match *next {
                Some(at) if at >= from => at,
                _ => *next.insert(finder.find(&text.as_bytes()[from..]).map_or(usize::MAX, |at| from + at)),
            };
            if at == usize::MAX {
                continue;
            }
            let end = at + self.tokens[*i].len();
            if best.is_none_or(|(_, start, best_end)| at < start || (at == start && end > best_end)) {
                best = Some((*i, at, end));
            }
        }
        best
    }

    /// Calls `f` on the ordinary-text parts and the special tokens of `text`, in order.
    pub fn segments<'t>(&self, text: &'t str, mut f: impl FnMut(Segment<'t>) -> Result<()>) -> Result<()> {
        let mut next_long = vec![None; self.long.len()];
        let mut last = 0;
        while let Some((i, start, end)) = self.next_match(text, last, &mut next_long) {
            if start > last {
                f(Segment::Text(&text[last..start]))?;
            }
            f(Segment::Special(i))?;
            last = end;
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
            let regex = fancy_regex::Regex::new(pattern.regex_source().unwrap()).unwrap();
            let expected: Vec<&str> = regex.find_iter(text).map(|m| m.unwrap().as_str()).collect();
            assert_eq!(pieces(pattern.clone(), text), expected, "{pattern:?}");
            // The same string as a custom pattern goes through fancy-regex, and agrees.
            let custom = Pattern::dropping(pattern.regex_source().unwrap());
            assert_eq!(pieces(custom, text), expected, "{pattern:?} as a custom regex");
        }
    }

    #[test]
    fn custom_regex_splits_with_fancy_regex() {
        assert_eq!(pieces(Pattern::dropping(r"\d+|(?<=\d)[a-z]"), "a12b3c"), ["12", "b", "3", "c"]);
        let keeping = Pattern::from_name_or_regex(Some(r"\d+|(?<=\d)[a-z]"), Unmatched::Keep);
        assert_eq!(pieces(keeping, "a12b3c"), ["a", "12", "b", "3", "c"]);
    }

    #[test]
    fn hf_whitespace_split_and_bert_patterns() {
        assert_eq!(pieces(Pattern::dropping(WHITESPACE_SPLIT), "Hi, you!\t¿no?"), ["Hi,", "you!", "¿no?"]);
        assert_eq!(
            pieces(Pattern::dropping(BERT), "Hi, 2+2=4 «you»!"),
            ["Hi", ",", "2", "+", "2", "=", "4", "«", "you", "»", "!"]
        );
    }

    #[test]
    fn tiktoken_gets_a_regex_that_keeps_what_the_pattern_keeps() {
        let keeping = |regex: &str| PreTokenizer::new(Pattern::from_name_or_regex(Some(regex), Unmatched::Keep));
        let regex = keeping("[a-z]+").unwrap().tiktoken_regex().unwrap();
        let tiktoken = fancy_regex::Regex::new(&regex).unwrap();
        let text = "ab, cd!";
        let theirs: Vec<&str> = tiktoken.find_iter(text).map(|m| m.unwrap().as_str()).collect();
        assert_eq!(theirs, pieces(Pattern::from_name_or_regex(Some("[a-z]+"), Unmatched::Keep), text));
        assert!(keeping(r"\s*").unwrap().tiktoken_regex().unwrap_err().message.contains("can match the empty string"));
        let dropping = PreTokenizer::new(Pattern::dropping(r"\s*")).unwrap();
        assert_eq!(dropping.tiktoken_regex().unwrap(), r"\s*");
        assert_eq!(PreTokenizer::new(Pattern::Gpt2).unwrap().tiktoken_regex().unwrap(), GPT2);
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
        let err = PreTokenizer::new(Pattern::dropping("(")).unwrap_err();
        assert!(err.message.contains("not a valid regex"));
    }

    #[test]
    fn long_special_tokens_are_found_like_short_ones() {
        // Leftmost, then longest, among short tokens (the automaton) and long ones (their own finders).
        let long_a = format!("<{}>", "a".repeat(300));
        let long_b = format!("<{}", "a".repeat(400));
        let tokens: Vec<String> = vec!["<".into(), long_a.clone(), "<a".into(), long_b.clone(), "a>".into()];
        let naive = |text: &str| {
            let mut out = Vec::new();
            let mut at = 0;
            while at < text.len() {
                let found = tokens.iter().enumerate().filter(|(_, t)| text[at..].starts_with(t.as_str()));
                match found.max_by_key(|(i, t)| (t.len(), usize::MAX - i)) {
                    Some((i, t)) => {
                        out.push(format!("#{i}"));
                        at += t.len();
                    }
                    None => {
                        out.push(text[at..at + 1].to_string());
                        at += 1;
                    }
                }
            }
            out
        };
        let matcher = SpecialMatcher::new(&tokens);
        assert_eq!(matcher.long.len(), 2);
        for text in [
            format!("x{long_a}y{long_b}z{long_a}{long_a}<a"),
            format!("{long_b}a>{long_a}"),
            format!("<{}", "a".repeat(399)),
            format!("{}{}", long_a, "a".repeat(50)),
        ] {
            let mut got = Vec::new();
            matcher
                .segments(&text, |s| {
                    match s {
                        Segment::Text(t) => got.extend(t.chars().map(String::from)),
                        Segment::Special(i) => got.push(format!("#{i}")),
                    }
                    Ok(())
                })
                .unwrap();
            assert_eq!(got, naive(&text));
            let first = naive(&text).iter().position(|p| p.starts_with('#'));
            assert_eq!(matcher.find_first(&text).is_some(), first.is_some());
        }
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
