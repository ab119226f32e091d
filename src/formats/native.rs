//! bytepair's own tokenizer file: one JSON document, laid out to be read by people — settings first, then
//! the special tokens, the base alphabet, and one merge per line with the pair count it was chosen with.
//!
//! ```text
//! {
//!   "format": "bytepair",
//!   "version": 1,
//!   "mode": "byte",
//!   "pattern": "gpt2",
//!   "lowercase": false,
//!   "continuing_subword_prefix": null,
//!   "end_of_word_suffix": null,
//!   "unk_token": null,
//!   "tie_break": "first_seen",
//!   "special_tokens": ["<|endoftext|>"],
//!   "alphabet": [
//!     "!", "\"", "#", ...
//!   ],
//!   "merges": [
//!     ["Ġ", "t", 7],
//!     ["i", "s", 5],
//!     ...
//!   ]
//! }
//! ```
//!
//! Ids are not stored: they follow from the order (specials, alphabet sorted by code point, then each merge
//! whose result is a new string), so a file cannot contradict itself. `pattern` is a name, `null` (no split),
//! `{"regex": "..."}` (then `"unmatched"` says what becomes of the text it does not match: "keep", "drop" or
//! "error"; files written before the setting have none and read as "drop", what they were made with), or
//! `{"hf_split": {"regex": "...", "behavior": "Isolated", "invert": false}}` (a HF tokenizer.json's Split step,
//! its regex in Oniguruma's syntax). The count of a merge is omitted when unknown (tokenizers not trained here).

use serde::Deserialize;
use serde_json::Value;

use super::explicit_ids;
use crate::error::{Error, Result, py_repr};
use crate::pretokenize::{Behavior, Pattern, Unmatched};
use crate::tokenizer::Tokenizer;
use crate::train::TieBreak;
use crate::vocab::{Mode, SymbolStyle, Vocab};

pub const FORMAT: &str = "bytepair";
pub const VERSION: u64 = 1;

fn json(s: &str) -> String {
    serde_json::to_string(s).expect("strings always serialise")
}

fn json_opt(s: Option<&str>) -> String {
    s.map_or_else(|| "null".to_string(), json)
}

/// Writes `tok` in the native format.
pub fn save(tok: &Tokenizer) -> String {
    let v = &tok.vocab;
    let mut out = String::with_capacity(64 * (v.merges().len() + 64));
    out.push_str("{\n");
    out.push_str(&format!("  \"format\": {},\n  \"version\": {VERSION},\n", json(FORMAT)));
    out.push_str(&format!("  \"mode\": {},\n", json(v.style.mode.name())));
    let pattern = match (&tok.pretokenizer.pattern, tok.pretokenizer.pattern.name()) {
        (_, Some(name)) => json(name),
        (Pattern::Custom { regex, .. }, None) => format!("{{\"regex\": {}}}", json(regex)),
        (Pattern::HfSplit { regex, behavior, invert }, None) => format!(
            "{{\"hf_split\": {{\"regex\": {}, \"behavior\": {}, \"invert\": {invert}}}}}",
            json(regex),
            json(behavior.name())
        ),
        _ => "null".to_string(),
    };
    out.push_str(&format!("  \"pattern\": {pattern},\n"));
    if let Some(unmatched) = tok.pretokenizer.pattern.unmatched() {
        out.push_str(&format!("  \"unmatched\": {},\n", json(unmatched.name())));
    }
    out.push_str(&format!("  \"lowercase\": {},\n", tok.lowercase));
    out.push_str(&format!("  \"continuing_subword_prefix\": {},\n", json_opt(v.style.prefix.as_deref())));
    out.push_str(&format!("  \"end_of_word_suffix\": {},\n", json_opt(v.style.suffix.as_deref())));
    let unk = v.unk.map(|id| v.tokens[id as usize].display.as_ref());
    out.push_str(&format!("  \"unk_token\": {},\n", json_opt(unk)));
    out.push_str(&format!("  \"tie_break\": {},\n", json_opt(tok.tie_break.map(TieBreak::name))));
    let specials: Vec<String> = tok.specials.tokens().iter().map(|s| json(s)).collect();
    out.push_str(&format!("  \"special_tokens\": [{}],\n", specials.join(", ")));
    if v.explicit_ids {
        // A vocabulary loaded from tiktoken / GPT-2 files keeps its ids: every token is listed at its id.
        let ids: Vec<String> = tok.specials.tokens().iter().map(|s| v.known_id(s).to_string()).collect();
        out.push_str(&format!("  \"special_token_ids\": [{}],\n", ids.join(", ")));
        let rule = match (v.rank_by_bytes, v.whole_pieces) {
            (true, _) => "tiktoken",
            (false, true) => "whole_pieces_then_merges",
            (false, false) => "merges",
        };
        out.push_str(&format!("  \"merge_rule\": {},\n", json(rule)));
        if v.fuse_unk {
            out.push_str("  \"fuse_unk\": true,\n");
        }
        out.push_str("  \"tokens\": [");
        for (i, token) in v.tokens.iter().enumerate() {
            out.push_str(if i % 16 == 0 { "\n    " } else { " " });
            // Special tokens are listed under "special_tokens"; an unknown token that is not one stays here.
            let listed = !token.special
                || (v.unk == Some(i as u32) && !tok.specials.tokens().iter().any(|s| **s == *token.display));
            out.push_str(&if listed { json(&token.display) } else { "null".to_string() });
            if i + 1 < v.tokens.len() {
                out.push(',');
            }
        }
        out.push_str("\n  ],\n");
    }
    out.push_str("  \"alphabet\": [");
    let base = if v.explicit_ids { &v.tokens[..0] } else { &v.tokens[v.num_special..v.num_special + v.num_base] };
    for (i, token) in base.iter().enumerate() {
        out.push_str(if i % 16 == 0 { "\n    " } else { " " });
        out.push_str(&json(&token.display));
        if i + 1 < base.len() {
            out.push(',');
        }
    }
    out.push_str(if base.is_empty() { "],\n" } else { "\n  ],\n" });
    out.push_str("  \"merges\": [");
    for (i, m) in v.merges().iter().enumerate() {
        out.push_str("\n    [");
        out.push_str(&json(&v.tokens[m.left as usize].display));
        out.push_str(", ");
        out.push_str(&json(&v.tokens[m.right as usize].display));
        if let Some(count) = tok.merge_counts.as_ref().and_then(|c| c.get(i)) {
            out.push_str(&format!(", {count}"));
        }
        out.push(']');
        if i + 1 < v.merges().len() {
            out.push(',');
        }
    }
    out.push_str(if v.merges().is_empty() { "]\n" } else { "\n  ]\n" });
    out.push_str("}\n");
    out
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: String,
    version: u64,
    mode: String,
    pattern: Value,
    /// What a regex pattern does with the text it does not match; absent in files written before the setting.
    unmatched: Option<String>,
    lowercase: bool,
    continuing_subword_prefix: Option<String>,
    end_of_word_suffix: Option<String>,
    unk_token: Option<String>,
    tie_break: Option<String>,
    special_tokens: Vec<String>,
    /// Vocabularies with ids of their own (loaded from tiktoken / GPT-2 files):
    special_token_ids: Option<Vec<u32>>,
    merge_rule: Option<String>,
    /// HF's fuse_unk (char-level vocabularies read from HF files); absent means false.
    fuse_unk: Option<bool>,
    tokens: Option<Vec<Option<String>>>,
    alphabet: Vec<String>,
    merges: Vec<Vec<Value>>,
}

/// Reads a tokenizer in the native format from the file's text (Python reads the file; a pickled tokenizer
/// is the same text). `source` names the file in error messages.
pub fn load(text: &str, source: &str) -> Result<Tokenizer> {
    let bad = |what: String| Error::value(format!("{source} is not a valid bytepair tokenizer file: {what}"));
    let file: File = serde_json::from_str(text).map_err(|e| bad(format!("{e}")))?;
    if file.format != FORMAT {
        return Err(bad(format!("\"format\" is {:?}, expected {FORMAT:?}", file.format)));
    }
    if file.version != VERSION {
        return Err(bad(format!(
            "version {} is not supported by this bytepair (it reads version {VERSION}); upgrade bytepair",
            file.version
        )));
    }
    let mode = Mode::parse(&file.mode).map_err(|e| bad(e.message))?;
    let pattern = pattern(&file).map_err(bad)?;
    let tie_break = file.tie_break.as_deref().map(TieBreak::parse).transpose().map_err(|e| bad(e.message))?;
    if let Some(tokens) = &file.tokens {
        let mut tok = explicit_from_file(&file, tokens, pattern, source).map_err(|e| bad(e.message))?;
        tok.tie_break = tie_break; // (an extended vocabulary was trained further with a tie rule)
        return Ok(tok);
    }
    let style = SymbolStyle { mode, prefix: file.continuing_subword_prefix, suffix: file.end_of_word_suffix };
    let mut vocab = Vocab::new(style, &file.special_tokens, file.unk_token.as_deref(), &file.alphabet)
        .map_err(|e| bad(e.message))?;
    let mut counts = Vec::with_capacity(file.merges.len());
    for (i, merge) in file.merges.iter().enumerate() {
        let at = |what: &str| bad(format!("merge {} (line {} of the merges list): {what}", i, i + 1));
        let (left, right) = match merge.as_slice() {
            [Value::String(a), Value::String(b), ..] if merge.len() <= 3 => (a, b),
            _ => return Err(at("expected [left, right] or [left, right, count]")),
        };
        counts.push(match merge.get(2) {
            Some(c) => Some(c.as_u64().ok_or_else(|| at("the count must be a non-negative integer"))?),
            None => None,
        });
        let find = |s: &String| {
            vocab.id_of(s).ok_or_else(|| at(&format!("{} is not a token defined before this merge", py_repr(s))))
        };
        let (l, r) = (find(left)?, find(right)?);
        if vocab.tokens[l as usize].special || vocab.tokens[r as usize].special {
            return Err(at("special tokens cannot be merged"));
        }
        vocab.push_merge(l, r);
    }
    let mut tok = Tokenizer::new(vocab, pattern, file.lowercase, &file.special_tokens).map_err(|e| bad(e.message))?;
    tok.tie_break = tie_break;
    tok.merge_counts = if counts.iter().all(Option::is_some) && !counts.is_empty() {
        Some(counts.into_iter().flatten().collect())
    } else if counts.iter().all(Option::is_none) {
        None
    } else {
        return Err(bad("some merges have counts and others do not: give all or none".to_string()));
    };
    Ok(tok)
}

/// The file's pattern, or what is wrong with it.
fn pattern(file: &File) -> std::result::Result<Pattern, String> {
    const SHAPES: &str = "\"pattern\" must be a name, null, {\"regex\": \"...\"} or {\"hf_split\": {\"regex\": ..., \"behavior\": ..., \
         \"invert\": ...}}";
    let unmatched = file.unmatched.as_deref().map(Unmatched::parse).transpose().map_err(|e| e.message)?;
    let pattern = match &file.pattern {
        Value::Null => Pattern::None,
        Value::String(name) => match Pattern::from_name_or_regex(Some(name), Unmatched::Drop) {
            Pattern::Custom { .. } => return Err(format!("unknown pattern name {name:?}")),
            p => p,
        },
        Value::Object(map) if map.len() == 1 => match (map.get("regex"), map.get("hf_split")) {
            // Files from before the setting drop the text the regex does not match: they were trained so.
            (Some(Value::String(regex)), _) => {
                return Ok(Pattern::Custom { regex: regex.clone(), unmatched: unmatched.unwrap_or(Unmatched::Drop) });
            }
            (_, Some(Value::Object(split))) => {
                let regex = split.get("regex").and_then(Value::as_str);
                let behavior = split.get("behavior").and_then(Value::as_str).and_then(Behavior::parse);
                let invert = split.get("invert").and_then(Value::as_bool);
                match (regex, behavior, invert, split.len()) {
                    (Some(regex), Some(behavior), Some(invert), 3) => {
                        Pattern::HfSplit { regex: regex.to_string(), behavior, invert }
                    }
                    _ => return Err(format!("{SHAPES}; its \"hf_split\" is {}", Value::Object(split.clone()))),
                }
            }
            _ => return Err(SHAPES.to_string()),
        },
        _ => return Err(SHAPES.to_string()),
    };
    match unmatched {
        Some(_) => Err("\"unmatched\" applies to a \"pattern\" that is {\"regex\": \"...\"} only".to_string()),
        None => Ok(pattern),
    }
}

/// The variant for vocabularies with ids of their own.
fn explicit_from_file(file: &File, tokens: &[Option<String>], pattern: Pattern, source: &str) -> Result<Tokenizer> {
    let ids = file.special_token_ids.clone().unwrap_or_default();
    if ids.len() != file.special_tokens.len() {
        return Err(Error::value("\"special_token_ids\" must give one id per special token".to_string()));
    }
    let specials: Vec<(String, u32)> = file.special_tokens.iter().cloned().zip(ids).collect();
    if file.mode == "char" {
        return explicit_char_from_file(file, tokens, &specials, pattern, source);
    }
    if file.fuse_unk.is_some() {
        return Err(Error::value("\"fuse_unk\" applies to char-level vocabularies only".to_string()));
    }
    let mut entries = Vec::new();
    for (id, display) in tokens.iter().enumerate() {
        let Some(display) = display else { continue };
        let bytes: Option<Vec<u8>> = display.chars().map(crate::vocab::char_to_byte).collect();
        let bytes = bytes.filter(|b| !b.is_empty()).ok_or_else(|| {
            Error::value(format!("token {id} ({}) is not a byte string in GPT-2's form", py_repr(display)))
        })?;
        entries.push((bytes, id as u32));
    }
    let (vocab, encoder) = match file.merge_rule.as_deref() {
        Some("tiktoken") => {
            let (vocab, encoder) = explicit_ids::from_ranks(source, entries, &specials)?;
            (vocab, Some(encoder))
        }
        Some(rule @ ("merges" | "whole_pieces_then_merges")) => {
            let mut vocab = explicit_ids::layout(source, entries, &specials)?;
            for (i, merge) in file.merges.iter().enumerate() {
                let (Some(Value::String(a)), Some(Value::String(b))) = (merge.first(), merge.get(1)) else {
                    return Err(Error::value(format!("merge {i}: expected [left, right]")));
                };
                let find = |s: &str| {
                    vocab.id_of(s).ok_or_else(|| {
                        Error::value(format!(
                            "merge {i} (line {} of the merges list): {} is not a token",
                            i + 1,
                            py_repr(s)
                        ))
                    })
                };
                let (left, right, result) = (find(a)?, find(b)?, find(&format!("{a}{b}"))?);
                vocab.add_merge(crate::vocab::Merge { left, right, result });
            }
            vocab.whole_pieces = rule == "whole_pieces_then_merges";
            (vocab, None)
        }
        _ => {
            return Err(Error::value(
                "\"merge_rule\" must be \"tiktoken\", \"merges\" or \"whole_pieces_then_merges\"".to_string(),
            ));
        }
    };
    let tokenizer = Tokenizer::new(vocab, pattern, file.lowercase, &file.special_tokens)?;
    if let Some(encoder) = encoder {
        tokenizer.adopt_piece_encoder(encoder);
    }
    Ok(tokenizer)
}

/// The same for char-level vocabularies (read from HF files): tokens are their display strings.
fn explicit_char_from_file(
    file: &File,
    tokens: &[Option<String>],
    specials: &[(String, u32)],
    pattern: Pattern,
    source: &str,
) -> Result<Tokenizer> {
    let mut entries = std::collections::BTreeMap::new();
    for (id, display) in tokens.iter().enumerate() {
        if let Some(display) = display
            && entries.insert(display.clone(), id as u32).is_some()
        {
            return Err(Error::value(format!("token {} is listed twice", py_repr(display))));
        }
    }
    for (name, id) in specials {
        if entries.insert(name.clone(), *id).is_some() {
            return Err(Error::value(format!("special token {} is also listed in \"tokens\"", py_repr(name))));
        }
    }
    let mut merges = Vec::with_capacity(file.merges.len());
    for (i, merge) in file.merges.iter().enumerate() {
        let [Value::String(a), Value::String(b)] = merge.as_slice() else {
            return Err(Error::value(format!("merge {i}: expected [left, right]")));
        };
        merges.push((a.as_str(), b.as_str()));
    }
    let whole_pieces = match file.merge_rule.as_deref() {
        Some("merges") => false,
        Some("whole_pieces_then_merges") => true,
        _ => {
            return Err(Error::value(
                "\"merge_rule\" of a char-level vocabulary must be \"merges\" or \"whole_pieces_then_merges\""
                    .to_string(),
            ));
        }
    };
    let names: Vec<String> = specials.iter().map(|s| s.0.clone()).collect();
    let model = explicit_ids::CharModel {
        unk: file.unk_token.as_deref(),
        prefix: file.continuing_subword_prefix.clone(),
        suffix: file.end_of_word_suffix.clone(),
        fuse_unk: file.fuse_unk.unwrap_or(false),
    };
    let mut vocab = explicit_ids::from_char_merges(source, &entries, &merges, &names, model)?;
    vocab.whole_pieces = whole_pieces;
    Tokenizer::new(vocab, pattern, file.lowercase, &names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::{Alphabet, Silent, TrainConfig, train};

    #[test]
    fn patterns_keep_what_becomes_of_unmatched_text_and_hf_splits() {
        let config = TrainConfig {
            vocab_size: 270,
            style: SymbolStyle { mode: Mode::Byte, prefix: None, suffix: None },
            special_tokens: vec![],
            unk_token: None,
            alphabet: Alphabet::All,
            limit_alphabet: None,
            min_frequency: 0,
            max_token_length: None,
            tie_break: TieBreak::FirstSeen,
        };
        let vocab = train(&[("hello", 5), (" world", 3)], &config, &mut Silent).unwrap().vocab;
        for pattern in [
            Pattern::Custom { regex: "[a-z]+".into(), unmatched: Unmatched::Error },
            Pattern::dropping("[a-z]+"),
            Pattern::HfSplit { regex: r"\s*".into(), behavior: Behavior::MergedWithPrevious, invert: true },
        ] {
            let tok = Tokenizer::new(vocab.clone(), pattern.clone(), false, &[]).unwrap();
            let text = save(&tok);
            assert_eq!(load(&text, "t").unwrap().pretokenizer.pattern, pattern, "{text}");
            if pattern.unmatched().is_some() {
                // Written before the setting existed: the text its regex does not match was dropped.
                let old = text.lines().filter(|l| !l.contains("\"unmatched\"")).collect::<Vec<_>>().join("\n");
                assert_eq!(load(&old, "t").unwrap().pretokenizer.pattern, Pattern::dropping("[a-z]+"));
            } else {
                let wrong = text.replace("\"pattern\": {", "\"unmatched\": \"keep\",\n  \"pattern\": {");
                let message = load(&wrong, "t").unwrap_err().message;
                assert!(message.contains("\"unmatched\" applies to a \"pattern\" that is {\"regex\""), "{message}");
            }
        }
    }

    #[test]
    fn round_trip_is_exact() {
        let config = TrainConfig {
            vocab_size: 300,
            style: SymbolStyle { mode: Mode::Byte, prefix: Some("##".into()), suffix: None },
            special_tokens: vec!["<|endoftext|>".into()],
            unk_token: None,
            alphabet: Alphabet::Corpus,
            limit_alphabet: None,
            min_frequency: 0,
            max_token_length: None,
            tie_break: TieBreak::FirstSeen,
        };
        let words = [("Ġhello", 5), ("Ġworld", 3), ("\"quoted\"\n", 2)];
        let t = train(&words, &config, &mut Silent).unwrap();
        let pattern = Pattern::Custom { regex: r"\S+\s*".into(), unmatched: Unmatched::Keep };
        let mut tok = Tokenizer::new(t.vocab, pattern, true, &config.special_tokens).unwrap();
        tok.merge_counts = Some(t.merge_counts);
        tok.tie_break = Some(TieBreak::FirstSeen);
        let text = save(&tok);
        let back = load(&text, "test").unwrap();
        assert_eq!(save(&back), text);
        assert_eq!(back.vocab.len(), tok.vocab.len());
        assert_eq!(back.vocab.merges(), tok.vocab.merges());
    }

    #[test]
    fn errors_name_the_problem() {
        let err = load("{", "x.json").unwrap_err();
        assert!(err.message.starts_with("x.json is not a valid bytepair tokenizer file"), "{}", err.message);
        assert!(err.message.contains("line 1"), "{}", err.message);
    }
}
