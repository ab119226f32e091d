//! SuperBPE's second-stage pre-tokenizer (Liu et al. 2025, "SuperBPE: Space Travel for Language Models"),
//! which lets merges cross whitespace: training continues past its transition size with these pieces.
//!
//! The rule is the authors' released stage-2 split: the pieces of the regex
//! `\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)` (numbers in groups of up to three digits, runs of two or
//! more punctuation marks, spaces that do not precede a word) are isolated, and the text between them is a
//! piece too — words, the single spaces between them and single punctuation marks. Their training reads a
//! line at a time, so no piece goes on past a line break; `SUPERWORDS` says so explicitly (a stretch between
//! isolated pieces ends after its line breaks), so that a text of many lines is cut as its lines would be.
//!
//! `SUPERWORDS` is a regex that any regex engine with look-ahead runs (fancy-regex, Oniguruma for HF's
//! tokenizer.json), and it is what files store. Run by fancy-regex it is slow (its look-ahead at every
//! character of a stretch: 110 MB of English counted in ~14 s instead of ~2 s), so `split_superwords` cuts
//! text by hand into exactly its pieces (`tests` hold it to fancy-regex on random and real text).

use super::PieceSink;
use super::classes::{self, Classes};

/// The stage-2 pattern (see the module notes): the authors' isolated pieces, then the stretches between
/// them, each ending after its line breaks, then line breaks on their own.
pub const SUPERWORDS: &str = concat!(
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)",
    r"|(?:(?!\p{N}| ?[^\s\p{L}\p{N}]{2}| +(?!\S))[^\r\n])+[\r\n]*",
    r"|[\r\n]+",
);

/// What a character is, for this pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Number,
    Letter,
    /// ' ' (the pattern's ` `), which starts its isolated space pieces.
    Space,
    /// '\r' or '\n'.
    LineBreak,
    /// Other whitespace (`\s`: tabs, no-break spaces...).
    OtherSpace,
    /// Neither whitespace, letter nor number (`[^\s\p{L}\p{N}]`).
    Punct,
}

/// The kind and length of the character at byte `i` of `text` (None at the end).
#[inline]
fn kind_at(text: &str, i: usize) -> Option<(Kind, usize)> {
    let bytes = text.as_bytes();
    let &b = bytes.get(i)?;
    let (classes, len): (Classes, usize) = if b < 0x80 {
        match b {
            b' ' => return Some((Kind::Space, 1)),
            b'\r' | b'\n' => return Some((Kind::LineBreak, 1)),
            _ => (classes::table().of_ascii(b), 1),
        }
    } else {
        let c = text[i..].chars().next().expect("a character starts at a char boundary");
        (classes::table().of_code_point(c as u32), c.len_utf8())
    };
    let kind = if classes & classes::NUMBER != 0 {
        Kind::Number
    } else if classes & classes::LETTER != 0 {
        Kind::Letter
    } else if classes & classes::SPACE != 0 {
        Kind::OtherSpace
    } else {
        Kind::Punct
    };
    Some((kind, len))
}

fn is_whitespace(kind: Option<(Kind, usize)>) -> bool {
    matches!(kind, Some((Kind::Space | Kind::LineBreak | Kind::OtherSpace, _)))
}

/// The end of the run of `kind` characters from byte `i`, after at most `most` of them.
fn run_end(text: &str, mut i: usize, kind: Kind, most: usize) -> usize {
    let mut n = 0;
    while n < most
        && let Some((k, len)) = kind_at(text, i)
        && k == kind
    {
        i += len;
        n += 1;
    }
    i
}

/// The end of `[\r\n/]*` from byte `i`.
fn breaks_and_slashes_end(text: &str, mut i: usize) -> usize {
    while let Some(&b) = text.as_bytes().get(i)
        && matches!(b, b'\r' | b'\n' | b'/')
    {
        i += 1;
    }
    i
}

/// Where the isolated piece starting at byte `i` ends, if one does (`\p{N}{1,3}`, ` ?[^\s\p{L}\p{N}]{2,}[\r\n/]*`,
/// ` +(?!\S)`, tried in that order).
#[inline]
fn isolated_end(text: &str, i: usize) -> Option<usize> {
    let (kind, len) = kind_at(text, i)?;
    match kind {
        Kind::Number => Some(run_end(text, i, Kind::Number, 3)),
        Kind::Punct | Kind::Space => {
            let marks = if kind == Kind::Space { i + len } else { i };
            let end = run_end(text, marks, Kind::Punct, usize::MAX);
            let count = text[marks..end].chars().count();
            if count >= 2 {
                return Some(breaks_and_slashes_end(text, end));
            }
            if kind == Kind::Punct {
                return None;
            }
            // ` +(?!\S)`: the spaces, or all but the last when a non-space character follows them.
            let spaces_end = run_end(text, i, Kind::Space, usize::MAX);
            if spaces_end == text.len() || is_whitespace(kind_at(text, spaces_end)) {
                Some(spaces_end)
            } else if spaces_end - i >= 2 {
                Some(spaces_end - 1)
            } else {
                None
            }
        }
        Kind::Letter | Kind::LineBreak | Kind::OtherSpace => None,
    }
}

/// Whether an isolated piece starts at byte `i` (without finding where it ends).
#[inline]
fn isolated_starts(text: &str, i: usize) -> bool {
    match kind_at(text, i) {
        Some((Kind::Number, _)) => true,
        Some((Kind::Punct, len)) => matches!(kind_at(text, i + len), Some((Kind::Punct, _))),
        Some((Kind::Space, _)) => {
            let next = kind_at(text, i + 1);
            match next {
                None => true,
                Some((Kind::Punct, len)) => matches!(kind_at(text, i + 1 + len), Some((Kind::Punct, _))),
                _ => is_whitespace(next),
            }
        }
        _ => false,
    }
}

/// The end of the ASCII letters from byte `i`, each alone or after one space: none of them starts an isolated
/// piece (a space does only before whitespace, a number or two marks) or a line break, so a stretch goes on
/// over them without asking what each character is (perf: classifying every character three times was a third of
/// counting 110 MB of English for SuperBPE's second stage).
///
/// Eight bytes at a time (perf: byte by byte, this loop was ~12 % of counting with stretches recorded).
#[inline]
fn ascii_words_end(bytes: &[u8], mut i: usize) -> usize {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const EACH: u64 = 0x0101_0101_0101_0101;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // Per byte, in its high bit: an ASCII letter (case folded, 'a'..='z'), a space.
        let folded = (w | (0x20 * EACH)) & LOW;
        let from_a = (folded + (0x80 - b'a' as u64) * EACH) & HIGH;
        let past_z = (folded + (0x80 - b'z' as u64 - 1) * EACH) & HIGH;
        let letter = from_a & !past_z & !w & HIGH;
        let not_space = w ^ (b' ' as u64 * EACH);
        let space = !(((not_space & LOW) + LOW) | not_space) & HIGH;
        // A space goes on when the next byte is a letter (the ninth byte's, for the last one).
        let ninth = bytes.get(i + 8).is_some_and(u8::is_ascii_alphabetic) as u64;
        let next_letter = (letter >> 8) | (ninth << 63);
        let stop = !(letter | (space & next_letter)) & HIGH;
        if stop != 0 {
            return i + (stop.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    ascii_words_end_bytewise(bytes, i)
}

/// `ascii_words_end` a byte at a time.
fn ascii_words_end_bytewise(bytes: &[u8], mut i: usize) -> usize {
    loop {
        match bytes.get(i) {
            Some(b) if b.is_ascii_alphabetic() => i += 1,
            Some(b' ') if bytes.get(i + 1).is_some_and(u8::is_ascii_alphabetic) => i += 2,
            _ => return i,
        }
    }
}

/// Cuts `text` into the pieces of `SUPERWORDS`.
pub fn split_superwords<'t>(text: &'t str, sink: &mut impl PieceSink<'t>) {
    let mut i = 0;
    while let Some((kind, len)) = kind_at(text, i) {
        let end = if let Some(end) = isolated_end(text, i) {
            end
        } else if kind == Kind::LineBreak {
            run_end(text, i, Kind::LineBreak, usize::MAX)
        } else {
            // A stretch: up to the next isolated piece or line break, then its line breaks.
            let mut j = i + len;
            loop {
                j = ascii_words_end(text.as_bytes(), j);
                let Some((k, l)) = kind_at(text, j) else { break };
                if k == Kind::LineBreak || isolated_starts(text, j) {
                    break;
                }
                j += l;
            }
            run_end(text, j, Kind::LineBreak, usize::MAX)
        };
        sink.piece(&text[i..end]);
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut sink = |piece| out.push(piece);
        split_superwords(text, &mut sink);
        out
    }

    fn regex_pieces<'t>(regex: &fancy_regex::Regex, text: &'t str) -> Vec<&'t str> {
        regex.find_iter(text).map(|m| m.unwrap().as_str()).filter(|p| !p.is_empty()).collect()
    }

    #[test]
    fn examples() {
        assert_eq!(pieces("By the way, I am a fan of the Milky Way."), ["By the way, I am a fan of the Milky Way."]);
        assert_eq!(pieces("in 1887, he said--no!\n\nThen"), ["in ", "188", "7", ", he said", "--", "no!\n\n", "Then"]);
        assert_eq!(pieces("a  b \n"), ["a", " ", " b", " ", "\n"]);
        assert_eq!(pieces("x ... y"), ["x", " ...", " y"]);
    }

    /// Every string over a small alphabet of the characters the pattern tells apart, up to a length.
    #[test]
    fn equals_the_regex_on_every_short_string() {
        let regex = fancy_regex::Regex::new(SUPERWORDS).unwrap();
        let alphabet = ['a', '1', ' ', ',', '/', '\n', '\r', '\t', 'é', '²', '\u{a0}', '中'];
        let mut text = String::new();
        let mut index = vec![0usize; 0];
        for len in 1..=5usize {
            index.clear();
            index.resize(len, 0);
            loop {
                text.clear();
                text.extend(index.iter().map(|&k| alphabet[k]));
                assert_eq!(pieces(&text), regex_pieces(&regex, &text), "{text:?}");
                let Some(pos) = index.iter().rposition(|&k| k + 1 < alphabet.len()) else { break };
                index[pos] += 1;
                for k in &mut index[pos + 1..] {
                    *k = 0;
                }
            }
        }
    }

    #[test]
    fn words_end_where_they_do_byte_by_byte() {
        let alphabet = b"aZz@[`{ \n.0\x80\xc3\xa9AyY";
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 40) as usize;
            let bytes: Vec<u8> =
                (0..len).map(|k| alphabet[((state >> (k % 50)) as usize + k * 7 + round) % alphabet.len()]).collect();
            for from in 0..=len {
                assert_eq!(
                    ascii_words_end(&bytes, from),
                    ascii_words_end_bytewise(&bytes, from),
                    "{bytes:?} from {from}"
                );
            }
        }
        // Every byte value, alone and before a letter, at every place of a chunk.
        for b in 0..=255u8 {
            for at in 0..10 {
                for next in [b'a', b' ', b'1'] {
                    let mut bytes = vec![b'a'; 12];
                    bytes[at] = b;
                    bytes[at + 1] = next;
                    assert_eq!(ascii_words_end(&bytes, 0), ascii_words_end_bytewise(&bytes, 0), "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn equals_the_regex_on_random_and_real_text() {
        let regex = fancy_regex::Regex::new(SUPERWORDS).unwrap();
        let alphabet: Vec<char> = "aB  1,.-/\n\r\t'\"é中²\u{a0}?!".chars().collect();
        let mut x = 7u64;
        for _ in 0..400 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = (x >> 40) as usize % 300;
            let text: String = (0..len)
                .map(|k| {
                    let y = x.rotate_left(k as u32 % 64) ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    alphabet[(y >> 33) as usize % alphabet.len()]
                })
                .collect();
            assert_eq!(pieces(&text), regex_pieces(&regex, &text), "{text:?}");
        }
        let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
        for file in ["text/tinyshakespeare/input.txt", "multilingual/udhr/eng.txt", "multilingual/udhr/cmn_hans.txt"] {
            let Ok(text) = std::fs::read_to_string(shared.join(file)) else { continue };
            let text = &text[..text.len().min(200_000)];
            let text = &text[..text.floor_char_boundary(text.len())];
            assert_eq!(pieces(text), regex_pieces(&regex, text), "{file}");
        }
    }

    #[test]
    fn long_runs_are_linear() {
        for text in [" ".repeat(1 << 20), ",".repeat(1 << 20), "a ".repeat(1 << 19), "1".repeat(1 << 20)] {
            let joined: String = pieces(&text).concat();
            assert_eq!(joined, text);
        }
    }
}
