//! Vocabularies whose ids a file gives (tiktoken ranks, GPT-2 and HF vocabularies, and bytepair's own files
//! holding one of those), assembled from the parts the format modules read: tokens at their ids, then merges.
//! Ids are the file's, so encoding gives the ids the models were trained on. No file layout is known here.
//!
//! The kinds differ in what may merge: tiktoken merges any two adjacent parts whose concatenation is a token
//! (lowest rank first), a merges list only the listed pairs. A vocabulary remembers which
//! (`Vocab::rank_by_bytes`) and the encoder follows it, so each gives exactly its own tool's ids.

use std::collections::BTreeMap;

use crate::encode::caches::Scratch;
use crate::encode::piece::PieceEncoder;
use crate::error::{Error, Result, py_repr};
use crate::vocab::{Merge, Mode, SymbolStyle, Token, Vocab, bytes_to_display, char_to_byte};

/// The error for line `line` of a line-based vocabulary file (tiktoken ranks, merges.txt).
pub(crate) fn bad_line(path: &str, line: usize, what: impl std::fmt::Display) -> Error {
    Error::value(format!("{} is not a valid vocabulary file: line {line}: {what}", py_repr(path)))
}

/// The text of a vocabulary file, which must be UTF-8.
pub(crate) fn read_utf8(path: &str) -> Result<String> {
    let bytes = super::read_file(path)?;
    String::from_utf8(bytes).map_err(|e| Error::utf8_vocabulary(path, e.utf8_error().valid_up_to()))
}

/// The style of every existing byte-level vocabulary: bytes, no word markers.
fn byte_style() -> SymbolStyle {
    SymbolStyle { mode: Mode::Byte, prefix: None, suffix: None }
}

/// A vocabulary with ids 0..=`top`, all unused, for `count` tokens to be placed at their ids. Ids far beyond
/// the number of tokens are refused: bytepair keeps one slot per id.
fn empty_explicit(source: &str, style: SymbolStyle, top: u32, count: usize) -> Result<Vocab> {
    if top as usize >= count.saturating_mul(2) + 65_536 {
        return Err(Error::value(format!(
            "{}: id {top} is far beyond the {count} tokens of the vocabulary; bytepair needs ids close to 0..{count}",
            py_repr(source)
        )));
    }
    let mut vocab = Vocab::of_tokens(style, vec![Token::unused(); top as usize + 1]);
    vocab.explicit_ids = true;
    Ok(vocab)
}

/// Lays byte-level tokens out at their ids; `specials` are `(text, id)`.
pub(crate) fn layout(source: &str, tokens: Vec<(Vec<u8>, u32)>, specials: &[(String, u32)]) -> Result<Vocab> {
    let top = tokens.iter().map(|t| t.1).chain(specials.iter().map(|s| s.1)).max().unwrap_or(0);
    let mut vocab = empty_explicit(source, byte_style(), top, tokens.len() + specials.len())?;
    vocab.num_special = specials.len();
    vocab.by_display.reserve(&vocab.tokens, tokens.len() + specials.len());
    for (bytes, id) in tokens {
        let display = bytes_to_display(&bytes);
        if vocab.id_of(&display).is_some() {
            return Err(Error::value(format!("{}: token {} appears twice", py_repr(source), py_repr(&display))));
        }
        let slot = &mut vocab.tokens[id as usize];
        if !slot.display.is_empty() {
            return Err(Error::value(format!("{}: id {id} is given to two tokens", py_repr(source))));
        }
        vocab.num_base += (bytes.len() == 1) as usize;
        *slot = Token {
            units: bytes.len() as u32,
            bytes: bytes.into(),
            display: display.into(),
            special: false,
            continues: false,
            ends_word: false,
        };
        vocab.by_display.insert(&vocab.tokens, id);
    }
    for (text, id) in specials {
        let slot = &mut vocab.tokens[*id as usize];
        if !slot.display.is_empty() {
            return Err(Error::value(format!(
                "special token {} has id {id}, which the vocabulary already gives to {}: check the special tokens' ids",
                py_repr(text),
                py_repr(&slot.display)
            )));
        }
        *slot = Token {
            bytes: text.as_bytes().into(),
            display: text.as_str().into(),
            units: 1,
            special: true,
            continues: false,
            ends_word: false,
        };
        vocab.by_display.insert(&vocab.tokens, *id);
    }
    vocab.rebuild_byte_ids();
    Ok(vocab)
}

/// A byte-level vocabulary from tiktoken-style ranks (each token's rank is its id). Merges are derived (each
/// multi-byte token is the two parts that BPE over the lower ranks leaves of its bytes) for display and
/// saving; encoding follows tiktoken's own rule. Also returns the piece encoder that derived them: the one a
/// tokenizer of this vocabulary encodes with, for `Tokenizer::adopt_piece_encoder` (loading then builds it
/// once).
pub(crate) fn from_ranks(
    source: &str,
    ranks: Vec<(Vec<u8>, u32)>,
    specials: &[(String, u32)],
) -> Result<(Vocab, PieceEncoder)> {
    use rayon::prelude::*;
    let mut vocab = layout(source, ranks, specials)?;
    vocab.rank_by_bytes = true;
    let encoder = crate::encode::piece_encoder(&vocab).ok_or_else(|| {
        Error::value(format!("{}: a tiktoken vocabulary must have a token for each of the 256 bytes", py_repr(source)))
    })?;
    // Each token's two parts, on all cores (o200k: 200 K merges); then, in id order (ids are ranks), the merges.
    let parts: Vec<Option<(u32, u32)>> = crate::on_own_pool(|| {
        vocab
            .tokens
            .par_iter()
            .enumerate()
            .map_init(
                || (Scratch::default(), Vec::new()),
                |(scratch, parts), (id, token)| {
                    if token.special || token.bytes.len() < 2 {
                        return None;
                    }
                    parts.clear();
                    encoder.split_below(&token.bytes, id as u32, scratch, parts);
                    match parts[..] {
                        [left, right] => Some((left, right)),
                        _ => None,
                    }
                },
            )
            .collect()
    });
    // Sized once: grown by doubling, the merge table left ~2× its final size of freed tables behind (o200k).
    let count = parts.iter().flatten().count();
    vocab.merges_mut().reserve_exact(count);
    for (id, (left, right)) in parts.into_iter().enumerate().filter_map(|(id, p)| Some((id as u32, p?))) {
        vocab.add_merge(Merge { left, right, result: id });
    }
    Ok((vocab, encoder))
}

/// Where a list of merges was read, to name a bad merge in messages.
#[derive(Clone, Copy)]
pub(crate) enum MergesIn<'a> {
    /// A merges.txt at this path, beside its vocab.json: a merge is named by its line number.
    Lines(&'a str),
    /// The `model.merges` list of the tokenizer.json that also holds the vocabulary: named by its index.
    TokenizerJson,
}

/// A byte-level vocabulary from token (GPT-2's byte-level form) → id and the merges in order, as
/// `(line number or index, left, right)` (see `MergesIn`), taken after the tokens are checked (a merge that
/// cannot be read is an error then). `special_tokens` are entries that are not in byte-level form.
pub(crate) fn from_byte_merges<'m>(
    vocab_source: &str,
    entries: &BTreeMap<String, u32>,
    merges: impl IntoIterator<Item = Result<(usize, &'m str, &'m str)>>,
    merges_in: MergesIn<'_>,
    special_tokens: &[String],
) -> Result<Vocab> {
    let mut tokens = Vec::with_capacity(entries.len());
    let mut specials = Vec::new();
    for (display, id) in entries {
        if special_tokens.contains(display) {
            specials.push((display.clone(), *id));
            continue;
        }
        let bytes: Option<Vec<u8>> = display.chars().map(char_to_byte).collect();
        let Some(bytes) = bytes.filter(|b| !b.is_empty()) else {
            return Err(Error::value(format!(
                "{}: token {} is not in GPT-2's byte-level form (and is not listed in special_tokens); this \
                 loader reads byte-level BPE vocabularies — pass it in special_tokens if it is one",
                py_repr(vocab_source),
                py_repr(display)
            )));
        };
        tokens.push((bytes, *id));
    }
    for s in special_tokens {
        if !entries.contains_key(s) {
            return Err(Error::value(format!(
                "special token {} is not in {}: its id is unknown",
                py_repr(s),
                py_repr(vocab_source)
            )));
        }
    }
    let mut vocab = layout(vocab_source, tokens, &specials)?;
    for merge in merges {
        let (number, a, b) = merge?;
        let id_of = |s: &str| {
            vocab.id_of(s).ok_or_else(|| match merges_in {
                MergesIn::Lines(path) => {
                    bad_line(path, number, format!("{} is not in {}", py_repr(s), py_repr(vocab_source)))
                }
                MergesIn::TokenizerJson => Error::value(format!(
                    "{}: model.merges[{number}]: {} is not in model.vocab",
                    py_repr(vocab_source),
                    py_repr(s)
                )),
            })
        };
        let (left, right) = (id_of(a)?, id_of(b)?);
        let result = id_of(&format!("{a}{b}"))?;
        vocab.add_merge(Merge { left, right, result });
    }
    Ok(vocab)
}

/// How a HF char-level BPE model cuts words: its unknown token, `##`-style prefix, `</w>`-style suffix, and
/// whether runs of unknown characters fuse into one unknown token.
pub(crate) struct CharModel<'a> {
    pub unk: Option<&'a str>,
    pub prefix: Option<String>,
    pub suffix: Option<String>,
    pub fuse_unk: bool,
}

/// A char-level vocabulary from the parts of a HF `tokenizer.json` BPE model (or a native file holding one):
/// every token (special tokens included) → id, and the merges as (left, right) in order. Ids are the file's.
///
/// As in HF, a merge's result is `left` + `right` without its continuing-subword prefix, and must be a token.
/// What a token decodes to (its characters without markers) comes from the merge that makes it, or from its
/// own text for base symbols (one character, optionally with the markers) and for tokens no merge makes.
pub(crate) fn from_char_merges(
    source: &str,
    entries: &BTreeMap<String, u32>,
    merges: &[(&str, &str)],
    special_tokens: &[String],
    model: CharModel<'_>,
) -> Result<Vocab> {
    let style = SymbolStyle { mode: Mode::Char, prefix: model.prefix, suffix: model.suffix };
    let specials: std::collections::HashSet<&str> = special_tokens.iter().map(String::as_str).collect();
    for s in special_tokens {
        if !entries.contains_key(s) {
            return Err(Error::value(format!("{}: special token {} has no id", py_repr(source), py_repr(s))));
        }
    }
    let top = entries.values().copied().max().unwrap_or(0);
    let mut vocab = empty_explicit(source, style, top, entries.len())?;
    // Whether a token's bytes and markers are settled (special tokens, base symbols, merge results).
    let mut settled = vec![false; vocab.tokens.len()];
    for (display, &id) in entries {
        if display.is_empty() {
            return Err(Error::value(format!("{}: the empty string is not a valid token (id {id})", py_repr(source))));
        }
        if !vocab.tokens[id as usize].display.is_empty() {
            return Err(Error::value(format!(
                "{}: id {id} is given to two tokens, {} and {}",
                py_repr(source),
                py_repr(&vocab.tokens[id as usize].display),
                py_repr(display)
            )));
        }
        // The unknown token is special (never merged, no space put back around it when decoding), as in
        // vocabularies trained here, even when the file does not list it among the added tokens.
        let token = if specials.contains(display.as_str()) || model.unk == Some(display.as_str()) {
            vocab.num_special += 1;
            settled[id as usize] = true;
            Token {
                bytes: display.as_bytes().into(),
                display: display.as_str().into(),
                units: 1,
                special: true,
                continues: false,
                ends_word: false,
            }
        } else if let Some((bytes, continues, ends_word)) = vocab.style.parse_base(display) {
            vocab.num_base += 1;
            settled[id as usize] = true;
            Token::base(bytes, display, continues, ends_word)
        } else {
            guess_token(&vocab.style, display)
        };
        vocab.tokens[id as usize] = token;
        vocab.by_display.insert(&vocab.tokens, id);
    }
    for (i, &(a, b)) in merges.iter().enumerate() {
        let at = |what: String| {
            Error::value(format!("{}: merge {i} ({} {}): {what}", py_repr(source), py_repr(a), py_repr(b)))
        };
        let id_of = |s: &str| vocab.id_of(s).ok_or_else(|| at(format!("{} is not in the vocabulary", py_repr(s))));
        let (left, right) = (id_of(a)?, id_of(b)?);
        let rest = match &vocab.style.prefix {
            Some(p) => b.strip_prefix(p.as_str()).ok_or_else(|| {
                at(format!(
                    "the right part does not start with the continuing_subword_prefix {} (HF cannot load such a \
                     merge either)",
                    py_repr(p)
                ))
            })?,
            None => b,
        };
        let result = id_of(&format!("{a}{rest}"))?;
        if !settled[result as usize] {
            let (l, r) = (&vocab.tokens[left as usize], &vocab.tokens[right as usize]);
            let bytes = [&l.bytes[..], &r.bytes[..]].concat();
            let (units, continues, ends_word) = (l.units + r.units, l.continues, r.ends_word);
            let token = &mut vocab.tokens[result as usize];
            (token.bytes, token.units, token.continues, token.ends_word) = (bytes.into(), units, continues, ends_word);
            settled[result as usize] = true;
        }
        vocab.add_merge(Merge { left, right, result });
    }
    if let Some(unk) = model.unk {
        let id = vocab.id_of(unk).ok_or_else(|| {
            Error::value(format!(
                "{}: unk_token {} is not in the vocabulary (HF would fail on the first unknown character)",
                py_repr(source),
                py_repr(unk)
            ))
        })?;
        vocab.unk = Some(id);
    }
    vocab.fuse_unk = model.fuse_unk;
    Ok(vocab)
}

/// A char-level token no merge makes: its text without the continuing-subword prefix and end-of-word suffix.
fn guess_token(style: &SymbolStyle, display: &str) -> Token {
    let mut core = display;
    let mut continues = false;
    let mut ends_word = false;
    if let Some(p) = &style.prefix
        && core.len() > p.len()
        && let Some(rest) = core.strip_prefix(p.as_str())
    {
        (core, continues) = (rest, true);
    }
    if let Some(s) = &style.suffix
        && core.len() > s.len()
        && let Some(rest) = core.strip_suffix(s.as_str())
    {
        (core, ends_word) = (rest, true);
    }
    Token {
        bytes: core.as_bytes().into(),
        display: display.into(),
        units: core.chars().count() as u32,
        special: false,
        continues,
        ends_word,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(tokens: &[(&str, u32)]) -> BTreeMap<String, u32> {
        tokens.iter().map(|(s, i)| (s.to_string(), *i)).collect()
    }

    fn model(prefix: Option<&str>, suffix: Option<&str>) -> CharModel<'static> {
        CharModel {
            unk: Some("[UNK]"),
            prefix: prefix.map(String::from),
            suffix: suffix.map(String::from),
            fuse_unk: false,
        }
    }

    #[test]
    fn char_vocab_derives_bytes_and_markers_from_merges() {
        let e = entries(&[("[UNK]", 0), ("#", 1), ("###", 2), ("##", 3), ("t", 4), ("##h</w>", 5), ("th</w>", 6)]);
        let merges = [("#", "###"), ("t", "##h</w>")];
        let v = from_char_merges("t.json", &e, &merges, &["[UNK]".into()], model(Some("##"), Some("</w>"))).unwrap();
        // "##" is '#' + '#' at the start of a word, not an empty continuing symbol.
        assert_eq!((v.tokens[3].bytes.as_ref(), v.tokens[3].continues), (&b"##"[..], false));
        assert_eq!((v.tokens[2].bytes.as_ref(), v.tokens[2].continues), (&b"#"[..], true));
        assert_eq!((v.tokens[6].bytes.as_ref(), v.tokens[6].ends_word), (&b"th"[..], true));
        assert_eq!(v.unk, Some(0));
        assert!(v.tokens[0].special && !v.tokens[1].special);
        assert_eq!(v.merge_rank()[&(4, 5)], (1, 6));
    }

    #[test]
    fn char_vocab_errors_name_the_problem() {
        let e = entries(&[("[UNK]", 0), ("a", 1), ("b", 2), ("ab", 3)]);
        let merges = [("a", "b")];
        let err = from_char_merges("t.json", &e, &merges, &[], model(Some("##"), None)).unwrap_err();
        assert!(err.message.contains("does not start with the continuing_subword_prefix '##'"), "{}", err.message);
        let merges = [("a", "c")];
        let err = from_char_merges("t.json", &e, &merges, &[], model(None, None)).unwrap_err();
        assert!(err.message.contains("'c' is not in the vocabulary"), "{}", err.message);
        let e = entries(&[("a", 0)]);
        let err = from_char_merges("t.json", &e, &[], &[], model(None, None)).unwrap_err();
        assert!(err.message.contains("unk_token '[UNK]' is not in the vocabulary"), "{}", err.message);
        let e = entries(&[("a", 0), ("b", 4_000_000_000)]);
        let err = from_char_merges("t.json", &e, &[], &[], CharModel { unk: None, ..model(None, None) }).unwrap_err();
        assert!(err.message.contains("far beyond"), "{}", err.message);
    }

    #[test]
    fn byte_merges_are_named_where_they_were_read() {
        let e = entries(&[("a", 0), ("b", 1), ("ab", 2)]);
        let err = from_byte_merges("v.json", &e, [Ok((3, "a", "c"))], MergesIn::Lines("m.txt"), &[]).unwrap_err();
        assert_eq!(err.message, "'m.txt' is not a valid vocabulary file: line 3: 'c' is not in 'v.json'");
        let err = from_byte_merges("t.json", &e, [Ok((0, "b", "a"))], MergesIn::TokenizerJson, &[]).unwrap_err();
        assert_eq!(err.message, "'t.json': model.merges[0]: 'ba' is not in model.vocab");
        let v = from_byte_merges("t.json", &e, [Ok((0, "a", "b"))], MergesIn::TokenizerJson, &[]).unwrap();
        assert_eq!(v.merge_rank()[&(0, 1)], (0, 2));
    }
}
