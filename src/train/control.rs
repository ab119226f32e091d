//! Merge control: which candidate merges training may make, beyond `max_token_length`.
//!
//! - `Boundaries` (`forbid_across`): character classes a token may not straddle. A merge `left + right` is
//!   refused when the character that ends `left` and the one that starts `right` are on different sides of a
//!   class — one in it, the other not ("newline": no token joins a line break to anything but line breaks).
//!   Only the junction is checked: `left` and `right` passed the check when they were made, so a token never
//!   holds a boundary inside. Checked when a pair is first counted (a refused pair is never counted, like a
//!   pair over `max_token_length`): O(1) per pair from two bitmasks per token, computed once per token.
//! - `Veto`: a callback (in Python: a regex or a function) asked about a pair when it is about to be merged
//!   — it reaches the top of the queue — and never again about that pair. A refused pair is dropped, never
//!   merged, and the next best pair is taken. Asking that late (rather than whenever a pair is first counted)
//!   makes the cost a few calls per merge instead of one per distinct pair of the corpus (millions), and the
//!   merges are the same: a pair's count does not depend on whether another pair may be merged.
//!
//! Byte-level tokens can end or start inside a UTF-8 character. A junction inside a character (`right` starts
//! with a continuation byte) is no class boundary. A character cut by its token's edge (a lead byte without
//! its continuation bytes) has an unknown class: for a class of ASCII characters only it is known not to be
//! in it (it is not ASCII); for other classes the merge is refused, since the class of the character cannot
//! be known from the token alone — so a token never straddles a class boundary, whichever way text is cut.

use regex_syntax::hir::{Class, HirKind};

use crate::error::{Error, Result, py_repr};

/// The named classes `forbid_across` takes, with the regex class each is built from.
pub const NAMED_CLASSES: [(&str, &str); 5] = [
    ("newline", r"[\r\n]"),
    ("whitespace", r"\s"),
    ("digit", r"\p{N}"),
    ("letter", r"\p{L}"),
    ("punctuation", r"[\p{P}\p{S}]"),
];

/// At most this many classes (one bit each in a token's edge masks).
const MAX_CLASSES: usize = 32;

/// A set of characters, as sorted inclusive code point ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CharClass {
    /// The name given (a named class, or the characters themselves).
    pub name: String,
    ranges: Vec<(u32, u32)>,
    ascii_only: bool,
}

impl CharClass {
    /// A named class ("newline", "whitespace", "digit", "letter", "punctuation") or, for any other string,
    /// the set of its characters (e.g. "\n" or "0123456789").
    pub fn parse(spec: &str) -> Result<CharClass> {
        if spec.is_empty() {
            return Err(Error::value(format!(
                "forbid_across got an empty string: give a class name ({}) or the characters of a class, e.g. \"\\n\"",
                class_names()
            )));
        }
        let ranges = match NAMED_CLASSES.iter().find(|(name, _)| *name == spec) {
            Some((_, regex)) => regex_ranges(regex),
            None => {
                let mut chars: Vec<u32> = spec.chars().map(u32::from).collect();
                chars.sort_unstable();
                chars.dedup();
                chars.into_iter().map(|c| (c, c)).collect()
            }
        };
        let ascii_only = ranges.iter().all(|&(_, last)| last < 0x80);
        Ok(CharClass { name: spec.to_string(), ranges, ascii_only })
    }

    fn contains(&self, c: u32) -> bool {
        let i = self.ranges.partition_point(|&(_, last)| last < c);
        self.ranges.get(i).is_some_and(|&(first, _)| first <= c)
    }
}

fn class_names() -> String {
    NAMED_CLASSES.iter().map(|(name, _)| format!("{name:?}")).collect::<Vec<_>>().join(", ")
}

/// The code point ranges regex-syntax gives for a class (the tables the pre-tokenizer's regexes use).
fn regex_ranges(class: &str) -> Vec<(u32, u32)> {
    let hir = regex_syntax::Parser::new().parse(class).expect("the named classes parse");
    match hir.kind() {
        HirKind::Class(Class::Unicode(ranges)) => {
            ranges.ranges().iter().map(|r| (u32::from(r.start()), u32::from(r.end()))).collect()
        }
        other => unreachable!("{class:?} is not a character class: {other:?}"),
    }
}

/// What a token's edges are, for the junction check: per class (one bit each), whether the character at each
/// edge is in it, and whether that is unknown (the character is cut by the edge).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Edges {
    first_in: u32,
    first_unknown: u32,
    last_in: u32,
    last_unknown: u32,
    /// The token starts with a UTF-8 continuation byte: its left junction is inside a character.
    starts_inside: bool,
}

/// The classes that tokens may not straddle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Boundaries {
    classes: Vec<CharClass>,
}

impl Boundaries {
    pub fn new(classes: Vec<CharClass>) -> Result<Boundaries> {
        if classes.len() > MAX_CLASSES {
            return Err(Error::value(format!(
                "forbid_across takes at most {MAX_CLASSES} classes, got {}; join characters into one class \
                 (\"0123456789\" is one class)",
                classes.len()
            )));
        }
        Ok(Boundaries { classes })
    }

    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// The edges of a token that decodes to `bytes`.
    pub(super) fn edges(&self, bytes: &[u8]) -> Edges {
        let mut edges = Edges { starts_inside: bytes.first().is_some_and(|&b| is_continuation(b)), ..Edges::default() };
        if self.classes.is_empty() || bytes.is_empty() {
            return edges;
        }
        let first = first_char(bytes);
        let last = last_char(bytes);
        for (k, class) in self.classes.iter().enumerate() {
            let bit = 1u32 << k;
            let classify = |c: Option<u32>, is_in: &mut u32, unknown: &mut u32| match c {
                Some(c) if class.contains(c) => *is_in |= bit,
                Some(_) => {}
                // A cut character is not ASCII (ASCII characters are one byte, never cut).
                None if class.ascii_only => {}
                None => *unknown |= bit,
            };
            classify(first, &mut edges.first_in, &mut edges.first_unknown);
            classify(last, &mut edges.last_in, &mut edges.last_unknown);
        }
        edges
    }

    /// Whether `left + right` straddles no class boundary.
    #[inline]
    pub(super) fn allows(left: &Edges, right: &Edges) -> bool {
        if right.starts_inside {
            return true; // the junction is inside one character
        }
        let unknown = left.last_unknown | right.first_unknown;
        unknown == 0 && left.last_in == right.first_in
    }

    /// The classes, as given (for messages and tests).
    pub fn names(&self) -> Vec<&str> {
        self.classes.iter().map(|c| c.name.as_str()).collect()
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Length of the UTF-8 sequence a lead byte starts (1 for ASCII and for bytes that start none).
fn sequence_length(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// The character `bytes` starts with, or None if it is cut (or `bytes` starts inside one).
fn first_char(bytes: &[u8]) -> Option<u32> {
    let n = sequence_length(bytes[0]);
    if is_continuation(bytes[0]) || bytes.len() < n {
        return None;
    }
    std::str::from_utf8(&bytes[..n]).ok().and_then(|s| s.chars().next()).map(u32::from)
}

/// The character `bytes` ends with, or None if it is cut.
fn last_char(bytes: &[u8]) -> Option<u32> {
    let start = bytes.iter().rposition(|&b| !is_continuation(b))?;
    if start + sequence_length(bytes[start]) != bytes.len() {
        return None;
    }
    std::str::from_utf8(&bytes[start..]).ok().and_then(|s| s.chars().next()).map(u32::from)
}

/// Asked about a candidate merge once, when it is about to be made: `true` refuses it for good.
pub trait Veto: Send + Sync {
    fn refuses(&mut self, left: &[u8], right: &[u8]) -> Result<bool>;
}

/// Checks `forbid_across` specs and names the problem.
pub fn parse_classes(specs: &[String]) -> Result<Boundaries> {
    let mut classes = Vec::with_capacity(specs.len());
    for spec in specs {
        let class = CharClass::parse(spec)?;
        if classes.iter().any(|c: &CharClass| c.ranges == class.ranges) {
            return Err(Error::value(format!(
                "forbid_across lists {} twice (or two names for the same characters): list each class once",
                py_repr(spec)
            )));
        }
        classes.push(class);
    }
    Boundaries::new(classes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boundaries(specs: &[&str]) -> Boundaries {
        parse_classes(&specs.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    fn allows(b: &Boundaries, left: &str, right: &[u8]) -> bool {
        Boundaries::allows(&b.edges(left.as_bytes()), &b.edges(right))
    }

    #[test]
    fn a_junction_between_classes_is_refused() {
        let b = boundaries(&["newline"]);
        assert!(!allows(&b, "end", b"\n"));
        assert!(!allows(&b, "\n", b"next"));
        assert!(allows(&b, "\n", b"\n"));
        assert!(allows(&b, "a", b"b"));
        let b = boundaries(&["digit", "letter"]);
        assert!(!allows(&b, "a", b"1"));
        assert!(allows(&b, "12", b"3"));
        assert!(allows(&b, " ", b"."), "neither side is a digit or a letter");
        assert!(!allows(&b, " ", b"a"));
        assert!(allows(&b, "é", "ß".as_bytes()));
    }

    #[test]
    fn characters_cut_by_byte_tokens() {
        let b = boundaries(&["letter"]);
        let zhong = "中".as_bytes();
        // Inside one character: always allowed.
        assert!(Boundaries::allows(&b.edges(&zhong[..1]), &b.edges(&zhong[1..])));
        // A lead byte alone: its character's class is unknown, so a letter class refuses.
        assert!(!allows(&b, "a", &zhong[..1]));
        assert!(!Boundaries::allows(&b.edges(&zhong[1..]), &b.edges(b"a")), "the last character is cut");
        assert!(allows(&b, "文", zhong));
        // An ASCII class knows a cut character is not in it.
        let b = boundaries(&["newline"]);
        assert!(allows(&b, "a", &zhong[..1]));
        assert!(!allows(&b, "\n", &zhong[..1]));
    }

    #[test]
    fn custom_classes_and_bad_specs() {
        let b = boundaries(&["-_"]);
        assert!(!allows(&b, "a", b"-"));
        assert!(allows(&b, "-", b"_"));
        assert_eq!(b.names(), ["-_"]);
        let err = parse_classes(&["".to_string()]).unwrap_err();
        assert!(err.message.contains("\"newline\""), "{}", err.message);
        let err = parse_classes(&["\n".to_string(), "newline".to_string(), "\r\n".to_string()]).unwrap_err();
        assert!(err.message.contains("twice"), "{}", err.message);
    }

    fn words(seed: u64, alphabet: &[char]) -> Vec<(String, u64)> {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        (0..60)
            .map(|_| ((0..1 + next() % 30).map(|_| alphabet[next() % alphabet.len()]).collect(), 1 + next() as u64 % 5))
            .collect()
    }

    fn run(
        words: &[(String, u64)],
        engine: crate::train::Engine,
        boundaries: &Boundaries,
        veto: Option<Box<dyn Veto>>,
    ) -> crate::train::Trained {
        use crate::train::{Silent, TrainConfig, prepare_with};
        use crate::vocab::Mode;
        let words: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
        let config = Box::leak(Box::new(TrainConfig::for_test(400, Mode::Byte)));
        prepare_with(&words, config, engine).unwrap().with_control(boundaries.clone(), veto).run(&mut Silent).unwrap()
    }

    #[test]
    fn trained_tokens_never_straddle_a_boundary() {
        let b = boundaries(&["newline", "digit"]);
        let classes = |c: char| (c == '\n' || c == '\r', c.is_numeric());
        for seed in 0..6 {
            let words = words(seed, &['a', '1', '2', ' ', '\n', 'é', '中']);
            let slots = run(&words, crate::train::Engine::Slots, &b, None);
            let compact = run(&words, crate::train::Engine::Compact, &b, None);
            assert_eq!(slots.vocab.merges(), compact.vocab.merges(), "seed {seed}");
            assert!(slots.vocab.merges().len() > 40, "seed {seed}: training went on");
            for t in slots.vocab.tokens.iter().filter(|t| !t.special) {
                let text = String::from_utf8_lossy(&t.bytes);
                let kinds: Vec<_> = text.chars().filter(|&c| c != '\u{FFFD}').map(classes).collect();
                assert!(kinds.windows(2).all(|w| w[0] == w[1]), "seed {seed}: token {:?} straddles a class", t.display);
            }
            let free = run(&words, crate::train::Engine::Slots, &Boundaries::default(), None);
            assert_ne!(free.vocab.merges(), slots.vocab.merges(), "the boundaries changed something");
        }
    }

    struct Refusing {
        asked: std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
    }

    impl Veto for Refusing {
        fn refuses(&mut self, left: &[u8], right: &[u8]) -> Result<bool> {
            let token = [left, right].concat();
            self.asked.lock().unwrap().push(token.clone());
            Ok(token.contains(&b'b'))
        }
    }

    #[test]
    fn a_veto_is_asked_once_per_pair_about_to_be_merged() {
        for seed in 0..6 {
            let words = words(seed, &['a', 'b', 'c']);
            let mut results = Vec::new();
            for engine in [crate::train::Engine::Slots, crate::train::Engine::Compact] {
                let asked = std::sync::Arc::default();
                let veto = Box::new(Refusing { asked: std::sync::Arc::clone(&asked) });
                let t = run(&words, engine, &Boundaries::default(), Some(veto));
                let asked = asked.lock().unwrap().clone();
                assert!(t.vocab.tokens.iter().all(|t| t.special || t.bytes.len() < 2 || !t.bytes.contains(&b'b')));
                assert_eq!(asked.len(), t.vocab.merges().len() + t.vetoed as usize, "seed {seed}");
                assert!(t.vetoed > 0 && !t.vocab.merges().is_empty());
                results.push((t.vocab.merges().to_vec(), asked));
            }
            assert_eq!(results[0], results[1], "seed {seed}: both layouts ask the same, in the same order");
        }
    }
}
