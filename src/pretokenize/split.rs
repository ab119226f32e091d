//! HF tokenizers' `Split` pre-tokenizer: the text is cut into the regex's matches and the stretches between
//! them, which `invert` swaps, and a behaviour says what becomes of the matches (with HF's docs' example, the
//! regex `-` on "the-final--countdown"):
//!
//! - `Removed`: dropped — `the`, `final`, `countdown`;
//! - `Isolated`: pieces of their own — `the`, `-`, `final`, `-`, `-`, `countdown`;
//! - `MergedWithPrevious`: joined to the stretch before — `the-`, `final-`, `-`, `countdown`;
//! - `MergedWithNext`: joined to the stretch after — `the`, `-final`, `-`, `-countdown`;
//! - `Contiguous`: runs of matches joined — `the`, `-`, `final`, `--`, `countdown`.
//!
//! Empty matches count (they cut the text, and a merge rule sees them as matches); empty pieces are dropped,
//! as HF drops them. bytepair's own `unmatched` setting is the same machinery: "keep" is `Isolated`, "drop" is
//! `Removed` inverted (the pieces are the matches), "error" is `Isolated` that refuses a non-empty stretch
//! between matches.

use super::PieceSink;
use super::engine::BoundedRegex;
use crate::error::{Error, Result, py_repr, py_repr_cut};

/// What a Split does with the matches of its regex (HF's `SplitDelimiterBehavior`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

impl Behavior {
    pub const ALL: [Behavior; 5] = [
        Behavior::Removed,
        Behavior::Isolated,
        Behavior::MergedWithPrevious,
        Behavior::MergedWithNext,
        Behavior::Contiguous,
    ];

    /// HF's name for it, as tokenizer.json writes it.
    pub fn name(self) -> &'static str {
        match self {
            Behavior::Removed => "Removed",
            Behavior::Isolated => "Isolated",
            Behavior::MergedWithPrevious => "MergedWithPrevious",
            Behavior::MergedWithNext => "MergedWithNext",
            Behavior::Contiguous => "Contiguous",
        }
    }

    /// The behaviour HF's name (or, as HF's Python API takes them, its snake_case name) stands for.
    pub fn parse(name: &str) -> Option<Behavior> {
        Behavior::ALL.into_iter().find(|b| {
            b.name() == name
                || b.name().chars().enumerate().fold(String::new(), |mut snake, (i, c)| {
                    if c.is_ascii_uppercase() && i > 0 {
                        snake.push('_');
                    }
                    snake.push(c.to_ascii_lowercase());
                    snake
                }) == name
        })
    }
}

/// What bytepair's own pattern does with the text it does not match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unmatched {
    /// Each stretch between matches is a piece of its own (HF's Split, Isolated): no text is lost.
    Keep,
    /// Only the matches are pieces; the rest is neither trained on nor encoded (tiktoken's way, and bytepair's
    /// before the setting existed).
    Drop,
    /// Text between matches is an error naming it.
    Error,
}

impl Unmatched {
    pub fn name(self) -> &'static str {
        match self {
            Unmatched::Keep => "keep",
            Unmatched::Drop => "drop",
            Unmatched::Error => "error",
        }
    }

    pub fn parse(name: &str) -> Result<Unmatched> {
        match name {
            "keep" => Ok(Unmatched::Keep),
            "drop" => Ok(Unmatched::Drop),
            "error" => Ok(Unmatched::Error),
            other => Err(Error::value(format!(
                "unmatched={} is not a choice: use \"keep\" (text the pattern does not match becomes pieces of its \
                 own), \"drop\" (it is left out, as tiktoken does) or \"error\" (it raises ValueError)",
                py_repr(other)
            ))),
        }
    }
}

/// A stretch of the text: a match of the regex or the text between two.
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    /// A match (after `invert`).
    matched: bool,
}

/// Turns the stream of spans into pieces, as one behaviour does, holding at most one piece back.
struct Assembler<'s, 't, S: PieceSink<'t>> {
    text: &'t str,
    behavior: Behavior,
    sink: &'s mut S,
    /// The piece being built (Contiguous, MergedWithPrevious) or the match waiting for what follows it
    /// (MergedWithNext).
    held: Option<(usize, usize)>,
    previous_matched: bool,
}

impl<'t, S: PieceSink<'t>> Assembler<'_, 't, S> {
    fn emit(&mut self, start: usize, end: usize) {
        if start < end {
            self.sink.piece(&self.text[start..end]);
        }
    }

    fn take_held(&mut self) {
        if let Some((start, end)) = self.held.take() {
            self.emit(start, end);
        }
    }

    fn span(&mut self, span: Span) {
        let Span { start, end, matched } = span;
        match self.behavior {
            Behavior::Isolated => self.emit(start, end),
            Behavior::Removed => {
                if !matched {
                    self.emit(start, end)
                }
            }
            Behavior::Contiguous | Behavior::MergedWithPrevious => {
                let joins = if self.behavior == Behavior::Contiguous {
                    matched == self.previous_matched
                } else {
                    matched && !self.previous_matched
                };
                match &mut self.held {
                    Some(held) if joins => held.1 = end,
                    _ => {
                        self.take_held();
                        self.held = Some((start, end));
                    }
                }
            }
            Behavior::MergedWithNext => {
                if matched {
                    // A match joins the stretch after it, if one follows; otherwise it stands alone.
                    self.take_held();
                    self.held = Some((start, end));
                } else {
                    let from = self.held.take().map_or(start, |(held_start, _)| held_start);
                    self.emit(from, end);
                }
            }
        }
        self.previous_matched = matched;
    }
}

/// Gives `sink` the pieces HF's Split (`regex`, `behavior`, `invert`) makes of `text`.
pub fn split<'t>(
    text: &'t str,
    regex: &BoundedRegex,
    behavior: Behavior,
    invert: bool,
    sink: &mut impl PieceSink<'t>,
) -> Result<()> {
    if text.is_empty() {
        return Ok(());
    }
    let mut out = Assembler { text, behavior, sink, held: None, previous_matched: false };
    let mut covered = 0;
    regex.for_each_match(text, |start, end| {
        if covered < start {
            out.span(Span { start: covered, end: start, matched: invert });
        }
        out.span(Span { start, end, matched: !invert });
        covered = end;
    })?;
    if covered < text.len() {
        out.span(Span { start: covered, end: text.len(), matched: invert });
    }
    out.take_held();
    Ok(())
}

/// Gives `sink` the pieces of bytepair's own pattern: its matches, and what `unmatched` says of the rest.
/// `shown`: the pattern, for the message of `Unmatched::Error`.
pub fn split_unmatched<'t>(
    text: &'t str,
    regex: &BoundedRegex,
    unmatched: Unmatched,
    shown: &str,
    sink: &mut impl PieceSink<'t>,
) -> Result<()> {
    match unmatched {
        Unmatched::Keep => split(text, regex, Behavior::Isolated, false, sink),
        Unmatched::Drop => split(text, regex, Behavior::Removed, true, sink),
        Unmatched::Error => {
            let mut gap = None;
            let mut covered = 0;
            regex.for_each_match(text, |start, end| {
                if gap.is_none() {
                    if covered < start {
                        gap = Some((covered, start));
                        return;
                    }
                    if start < end {
                        sink.piece(&text[start..end]);
                    }
                    covered = end;
                }
            })?;
            let gap = gap.or((covered < text.len()).then_some((covered, text.len())));
            match gap {
                None => Ok(()),
                Some((start, end)) => Err(unmatched_text(text, start, end, shown)),
            }
        }
    }
}

#[cold]
fn unmatched_text(text: &str, start: usize, end: usize, shown: &str) -> Error {
    let mut cut = (start + 40).min(end);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let more = if cut < end { "…" } else { "" };
    Error::value(format!(
        "the pattern {} does not match {}{more} (at character {}), which unmatched=\"error\" refuses. Make the \
         pattern match all text (appending |\\s+|. to it does), or use unmatched=\"keep\" (such text becomes \
         pieces of its own) or unmatched=\"drop\" (it is left out, and decode(encode(text)) loses it)",
        py_repr_cut(shown, super::engine::SHOWN_CHARS),
        py_repr(&text[start..cut]),
        crate::tokenizer::char_position(text, start)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(regex: &str, behavior: Behavior, invert: bool, text: &str) -> Vec<String> {
        let regex = BoundedRegex::new(regex, regex).unwrap();
        let mut out = Vec::new();
        split(text, &regex, behavior, invert, &mut |p: &str| out.push(p.to_string())).unwrap();
        out
    }

    #[test]
    fn hf_docs_example() {
        let text = "the-final--countdown";
        let expected: [(Behavior, &[&str]); 5] = [
            (Behavior::Removed, &["the", "final", "countdown"]),
            (Behavior::Isolated, &["the", "-", "final", "-", "-", "countdown"]),
            (Behavior::MergedWithPrevious, &["the-", "final-", "-", "countdown"]),
            (Behavior::MergedWithNext, &["the", "-final", "-", "-countdown"]),
            (Behavior::Contiguous, &["the", "-", "final", "--", "countdown"]),
        ];
        for (behavior, want) in expected {
            assert_eq!(pieces("-", behavior, false, text), want, "{behavior:?}");
        }
    }

    #[test]
    fn empty_matches_cut_and_merge_like_matches() {
        // HF tokenizers 0.23 on these (tests/adversarial/test_hf_split.py checks many more against it).
        let text = "Hello  World a";
        assert_eq!(
            pieces(r"\s*", Behavior::Removed, false, text),
            ["H", "e", "l", "l", "o", "W", "o", "r", "l", "d", "a"]
        );
        assert_eq!(pieces(r"\s*", Behavior::Removed, true, text), ["  ", " "]);
        assert_eq!(
            pieces(r"\s*", Behavior::MergedWithPrevious, false, text),
            ["H", "e", "l", "l", "o  ", "W", "o", "r", "l", "d ", "a"]
        );
        assert_eq!(
            pieces(r"\s*", Behavior::MergedWithNext, false, text),
            ["H", "e", "l", "l", "o", "  W", "o", "r", "l", "d", " a"]
        );
        assert_eq!(pieces(r"(?=[A-Z])", Behavior::Isolated, false, "HelloWorld"), ["Hello", "World"]);
    }

    #[test]
    fn unmatched_text_is_kept_dropped_or_refused() {
        let regex = BoundedRegex::new("[a-z]+", "[a-z]+").unwrap();
        let run = |unmatched| {
            let mut out = Vec::new();
            split_unmatched("ab, cd!", &regex, unmatched, "[a-z]+", &mut |p: &str| out.push(p.to_string()))
                .map(|()| out)
        };
        assert_eq!(run(Unmatched::Keep).unwrap(), ["ab", ", ", "cd", "!"]);
        assert_eq!(run(Unmatched::Drop).unwrap(), ["ab", "cd"]);
        let message = run(Unmatched::Error).unwrap_err().message;
        assert!(message.starts_with("the pattern '[a-z]+' does not match ', ' (at character 2)"), "{message}");
        assert_eq!(Behavior::parse("merged_with_next"), Some(Behavior::MergedWithNext));
        assert_eq!(Behavior::parse("Contiguous"), Some(Behavior::Contiguous));
        assert_eq!(Behavior::parse("contiguous_"), None);
    }
}
