//! HF `tokenizers`' `tokenizer.json` holding a BPE model: read (`load`) into a tokenizer with HF's ids, and
//! written (`save`) so that `tokenizers` and `transformers` load it with bytepair's ids.
//!
//! Read: byte-level BPE (the ByteLevel pre-tokenizer, alone or after a Split regex or Whitespace; an optional
//! Lowercase normaliser; `ignore_merges`; `byte_fallback` when every byte has a token, where it never acts) and
//! char-level BPE (no ByteLevel step: the model's `unk_token`, `fuse_unk`, `continuing_subword_prefix`,
//! `end_of_word_suffix`, `ignore_merges`; pre-tokenizer none, Whitespace, WhitespaceSplit, BertPreTokenizer or a
//! Split regex; no normaliser or Lowercase). A Split keeps its Oniguruma regex, behaviour and `invert`, and
//! splits as HF does (`pretokenize::split`, `pretokenize::oniguruma`). Added tokens become special tokens.
//! Anything that would give other ids than HF is refused, naming it: other models, normalisers and
//! pre-tokenizers, Split regexes bytepair cannot run as Oniguruma does, byte_fallback that would act, dropout,
//! added tokens with lstrip/rstrip/single_word (or normalized under Lowercase). The file's decoder,
//! post-processor, padding and truncation are not used.
//!
//! The document is walked as a `serde_json::Value` (its structure is open: unknown keys and types are
//! allowed or refused one by one, and messages show values as Python's `repr` does, since the user is in
//! Python); the written file is typed structs.

use std::collections::{BTreeMap, HashSet};

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::explicit_ids::{self, CharModel, MergesIn};
use crate::error::{Error, Result, py_repr};
use crate::pretokenize::{self, Behavior, Pattern, Unmatched, oniguruma};
use crate::tokenizer::Tokenizer;
use crate::vocab::Mode;

/// What `load` reads, said when something else is refused.
const SUPPORTED: &str = "bytepair reads BPE tokenizer.json files: byte-level, or char-level with unk_token, \
                         continuing_subword_prefix and end_of_word_suffix";

/// What char-level files may use as pre-tokenizer.
const CHAR_PRE_TOKENIZERS: &str = "for char-level BPE bytepair supports no pre-tokenizer, Whitespace, \
                                   WhitespaceSplit, BertPreTokenizer, or Split";

/// Reads a tokenizer.json.
pub fn load(path: &str) -> Result<Tokenizer> {
    if !std::path::Path::new(path).is_file() {
        return Err(Error::io(path, &std::io::ErrorKind::NotFound.into()));
    }
    let bytes = super::read_file(path)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::value(format!(
            "{} is not a valid tokenizer.json: it is not UTF-8 (invalid byte sequence at byte offset {})",
            py_repr(path),
            e.utf8_error().valid_up_to()
        ))
    })?;
    load_str(&text, path)
}

/// Reads the text of a tokenizer.json; `source` names it in messages.
pub fn load_str(text: &str, source: &str) -> Result<Tokenizer> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| Error::value(format!("{} is not a valid tokenizer.json: {e}", py_repr(source))))?;
    let Value::Object(doc) = &doc else {
        return Err(Error::value(format!(
            "{} is not a valid tokenizer.json: it holds a JSON {}, not an object",
            py_repr(source),
            type_name(&doc)
        )));
    };
    Reader { source }.tokenizer(doc)
}

/// A bytepair tokenizer as a tokenizer.json: byte-level ones get HF's ByteLevel pre-tokenizer and decoder
/// (after a Split regex for patterns other than gpt2); char-level ones keep unk_token and the markers in the
/// model, and a decoder that takes the markers off. Byte-level tokenizers with word markers are refused.
pub fn save(tok: &Tokenizer) -> Result<String> {
    let v = &tok.vocab;
    let style = &v.style;
    let (pre_tokenizer, post_processor, decoder) = match style.mode {
        Mode::Byte => {
            if nonempty(&style.prefix).is_some() || nonempty(&style.suffix).is_some() {
                return Err(Error::value(
                    "save_hf writes byte-level BPE without word markers or char-level BPE; this tokenizer is \
                     byte-level with continuing_subword_prefix/end_of_word_suffix",
                ));
            }
            let (pre_tokenizer, decoder) = byte_level_steps(&tok.pretokenizer.pattern)?;
            let post_processor = ByteLevel { add_prefix_space: false, trim_offsets: false, use_regex: false };
            (pre_tokenizer, Some(PostProcessor::ByteLevel(post_processor)), decoder)
        }
        Mode::Char => {
            let (pre_tokenizer, decoder) = char_level_steps(&tok.pretokenizer.pattern, &style.prefix, &style.suffix)?;
            (pre_tokenizer, None, decoder)
        }
    };
    let char_model = style.mode == Mode::Char;
    let display = |id: u32| v.tokens[id as usize].display.as_ref();
    let file = File {
        version: "1.0",
        truncation: None,
        padding: None,
        added_tokens: tok
            .specials
            .tokens()
            .iter()
            .map(|s| AddedToken {
                id: v.known_id(s),
                content: s,
                single_word: false,
                lstrip: false,
                rstrip: false,
                normalized: false,
                special: true,
            })
            .collect(),
        normalizer: tok.lowercase.then_some(Normalizer::Lowercase),
        pre_tokenizer,
        post_processor,
        decoder,
        model: Model {
            kind: "BPE",
            dropout: None,
            unk_token: if char_model { v.unk.map(display) } else { None },
            continuing_subword_prefix: if char_model { style.prefix.as_deref() } else { None },
            end_of_word_suffix: if char_model { style.suffix.as_deref() } else { None },
            fuse_unk: char_model && v.fuse_unk,
            byte_fallback: false,
            // tiktoken vocabularies keep a piece that is a token whole, as HF's ignore_merges does.
            ignore_merges: v.whole_pieces || v.rank_by_bytes,
            // Special (and unknown) tokens too, as HF keeps them; unused ids have no token.
            vocab: TokensById(
                v.tokens
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| !t.display.is_empty())
                    .map(|(id, t)| (t.display.as_ref(), id))
                    .collect(),
            ),
            merges: v.merges().iter().map(|m| [display(m.left), display(m.right)]).collect(),
        },
    };
    serde_json::to_string(&file).map_err(|e| Error::value(format!("cannot write the tokenizer.json: {e}")))
}

// -- writing ------------------------------------------------------------------------------------------------

#[derive(Serialize)]
struct File<'a> {
    version: &'static str,
    truncation: Option<()>,
    padding: Option<()>,
    added_tokens: Vec<AddedToken<'a>>,
    normalizer: Option<Normalizer>,
    pre_tokenizer: Option<PreTokenizer>,
    post_processor: Option<PostProcessor>,
    decoder: Decoder<'a>,
    model: Model<'a>,
}

#[derive(Serialize)]
struct AddedToken<'a> {
    id: u32,
    content: &'a str,
    single_word: bool,
    lstrip: bool,
    rstrip: bool,
    normalized: bool,
    special: bool,
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum Normalizer {
    Lowercase,
}

/// HF's ByteLevel step (pre-tokenizer, post-processor or decoder: the same fields).
#[derive(Serialize, Clone, Copy)]
struct ByteLevel {
    add_prefix_space: bool,
    trim_offsets: bool,
    use_regex: bool,
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum PostProcessor {
    ByteLevel(ByteLevel),
}

#[derive(Serialize)]
struct Regex {
    #[serde(rename = "Regex")]
    regex: String,
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum PreTokenizer {
    ByteLevel(ByteLevel),
    Whitespace,
    WhitespaceSplit,
    #[serde(rename = "BertPreTokenizer")]
    Bert,
    Split {
        pattern: Regex,
        behavior: &'static str,
        invert: bool,
    },
    Sequence {
        pretokenizers: Vec<PreTokenizer>,
    },
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum Decoder<'a> {
    ByteLevel(ByteLevel),
    WordPiece {
        prefix: &'a str,
        cleanup: bool,
    },
    #[serde(rename = "BPEDecoder")]
    Bpe {
        suffix: &'a str,
    },
    Replace {
        pattern: Regex,
        content: &'static str,
    },
    Fuse,
    Sequence {
        decoders: Vec<Decoder<'a>>,
    },
}

#[derive(Serialize)]
struct Model<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    dropout: Option<f64>,
    unk_token: Option<&'a str>,
    continuing_subword_prefix: Option<&'a str>,
    end_of_word_suffix: Option<&'a str>,
    fuse_unk: bool,
    byte_fallback: bool,
    ignore_merges: bool,
    vocab: TokensById<'a>,
    merges: Vec<[&'a str; 2]>,
}

/// The model's vocabulary: a JSON object of token → id, in id order.
struct TokensById<'a>(Vec<(&'a str, usize)>);

impl Serialize for TokensById<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().copied())
    }
}

/// A marker that is set and not empty (HF treats "" as no marker).
fn nonempty(marker: &Option<String>) -> Option<&str> {
    marker.as_deref().filter(|m| !m.is_empty())
}

/// The HF pre-tokenizer that cuts text at whitespace, dropping it, as `pattern` does, if there is one.
fn word_splitter(pattern: &Pattern) -> Option<PreTokenizer> {
    match pattern {
        Pattern::Whitespace => Some(PreTokenizer::Whitespace),
        Pattern::Custom { regex, unmatched: Unmatched::Drop } if regex == pretokenize::WHITESPACE_SPLIT => {
            Some(PreTokenizer::WhitespaceSplit)
        }
        Pattern::Custom { regex, unmatched: Unmatched::Drop } if regex == pretokenize::BERT => Some(PreTokenizer::Bert),
        _ => None,
    }
}

/// A Split step that cuts text as `pattern` does. The named patterns match all of any text: Isolated. A custom
/// regex: Isolated when the text it does not match is kept (or refused: HF cannot refuse, and keeps it), the
/// inverted Removed when it is dropped (the pieces are the matches). A HF Split is written back as it was read.
/// A custom regex that Oniguruma, HF's engine, would read differently is refused, naming the construct.
fn split(pattern: &Pattern) -> Result<PreTokenizer> {
    let (regex, behavior, invert) = match pattern {
        Pattern::Custom { regex, unmatched } => {
            let differs = match oniguruma::translate(regex) {
                Ok(translation) => translation.differs,
                Err(reason) => Some(reason),
            };
            if let Some(construct) = differs {
                return Err(Error::value(format!(
                    "save_hf cannot write the pattern {}: HF tokenizers runs a Split regex with Oniguruma, which \
                     reads it differently ({construct}), so HF would give other ids. Write the pattern so that both \
                     read it alike: \\p{{L}}, \\p{{N}}, \\s, \\d and explicit classes are read alike; \\w, \\b, \
                     ^, $, POSIX classes and counted repeats followed by + or ? are not",
                    crate::error::py_repr_cut(regex, pretokenize::engine::SHOWN_CHARS)
                )));
            }
            let behavior = if *unmatched == Unmatched::Drop { Behavior::Removed } else { Behavior::Isolated };
            (regex.clone(), behavior, *unmatched == Unmatched::Drop)
        }
        Pattern::HfSplit { regex, behavior, invert } => (regex.clone(), *behavior, *invert),
        named => (hf_regex(named.regex_source().unwrap_or_default()), Behavior::Isolated, false),
    };
    Ok(PreTokenizer::Split { pattern: Regex { regex }, behavior: behavior.name(), invert })
}

/// Pre-tokenizer and decoder of a byte-level tokenizer.
fn byte_level_steps(pattern: &Pattern) -> Result<(Option<PreTokenizer>, Decoder<'static>)> {
    let byte_level =
        |use_regex| PreTokenizer::ByteLevel(ByteLevel { add_prefix_space: false, trim_offsets: true, use_regex });
    let pre_tokenizer = match pattern {
        Pattern::Gpt2 => byte_level(true),
        Pattern::None => byte_level(false),
        // HF's Whitespace pre-tokenizer is the same \w+|[^\w\s]+, dropping spaces.
        Pattern::Whitespace => {
            PreTokenizer::Sequence { pretokenizers: vec![PreTokenizer::Whitespace, byte_level(false)] }
        }
        _ => PreTokenizer::Sequence { pretokenizers: vec![split(pattern)?, byte_level(false)] },
    };
    Ok((
        Some(pre_tokenizer),
        Decoder::ByteLevel(ByteLevel { add_prefix_space: false, trim_offsets: true, use_regex: false }),
    ))
}

/// Pre-tokenizer and decoder of a char-level tokenizer. The decoder takes the markers off: BPEDecoder (suffix)
/// or WordPiece (prefix), which put spaces back between words, for patterns that drop whitespace; otherwise
/// Replace steps and Fuse, which give exactly bytepair's `decode`.
fn char_level_steps<'a>(
    pattern: &Pattern,
    prefix: &'a Option<String>,
    suffix: &'a Option<String>,
) -> Result<(Option<PreTokenizer>, Decoder<'a>)> {
    let word_splitter = word_splitter(pattern);
    let splits_words = word_splitter.is_some();
    let pre_tokenizer = match pattern {
        Pattern::None => None,
        _ => Some(match word_splitter {
            Some(step) => step,
            None => split(pattern)?,
        }),
    };
    let (prefix, suffix) = (nonempty(prefix), nonempty(suffix));
    let strip_prefix =
        |p: &str| Decoder::Replace { pattern: Regex { regex: format!(r"\A{}", onig_escape(p)) }, content: "" };
    let strip_suffix =
        |s: &str| Decoder::Replace { pattern: Regex { regex: format!(r"{}\z", onig_escape(s)) }, content: "" };
    let mut decoders = Vec::new();
    match (prefix, suffix) {
        // Words start where a token lacks the prefix.
        (Some(prefix), suffix) if splits_words => {
            decoders.extend(suffix.map(strip_suffix));
            decoders.push(Decoder::WordPiece { prefix, cleanup: false });
        }
        // Words end at the suffix.
        (None, Some(suffix)) if splits_words => decoders.push(Decoder::Bpe { suffix }),
        // Pieces keep their whitespace: take the markers off and join.
        (prefix, suffix) => {
            decoders.extend(prefix.map(strip_prefix));
            decoders.extend(suffix.map(strip_suffix));
            decoders.push(Decoder::Fuse);
        }
    }
    let decoder = if decoders.len() == 1 { decoders.remove(0) } else { Decoder::Sequence { decoders } };
    Ok((pre_tokenizer, decoder))
}

/// A pattern in the form HF's regex engine reads the same way: Oniguruma takes "{1,3}+" for a repeated
/// repetition, not a possessive one; in cl100k/o200k possessiveness changes nothing, so the mark is dropped.
fn hf_regex(regex: &str) -> String {
    let bytes = regex.as_bytes();
    let mut out = String::with_capacity(regex.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        // "{" digits ("," digits?)? "}" "+"
        if bytes[i] == b'{' {
            let mut j = i + 1;
            let digits = |j: &mut usize| {
                let start = *j;
                while *j < bytes.len() && bytes[*j].is_ascii_digit() {
                    *j += 1;
                }
                *j > start
            };
            if digits(&mut j) {
                if bytes.get(j) == Some(&b',') {
                    j += 1;
                    digits(&mut j);
                }
                if bytes.get(j) == Some(&b'}') && bytes.get(j + 1) == Some(&b'+') {
                    out.push_str(&regex[copied..=j]);
                    copied = j + 2;
                    i = j + 2;
                    continue;
                }
            }
        }
        i += 1;
    }
    out.push_str(&regex[copied..]);
    out
}

/// `text` as a literal in a regex (the same in Oniguruma, HF's engine, and fancy-regex, bytepair's).
fn onig_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

// -- reading ------------------------------------------------------------------------------------------------

/// Python's name for the type of a JSON value (`json.load` makes dict, list, str, int, float, bool, None).
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Whether Python would take the value for true.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Whether `map[key]` is there and true.
fn flag(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).is_some_and(truthy)
}

/// `map[key]`, or JSON null.
fn get<'v>(map: &'v Map<String, Value>, key: &str) -> &'v Value {
    map.get(key).unwrap_or(&Value::Null)
}

/// Whether `map[key]` is the string `want`.
fn is(map: &Map<String, Value>, key: &str, want: &str) -> bool {
    map.get(key).and_then(Value::as_str) == Some(want)
}

/// An id: an int (not a bool) from 0 to 2**32 - 1.
fn as_id(v: &Value) -> Option<u32> {
    v.as_u64().and_then(|i| u32::try_from(i).ok())
}

/// A JSON value as Python's `repr` shows what `json.load` made of it.
fn py(v: &Value) -> String {
    match v {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(x)) => py_float(x),
            _ => n.to_string(),
        },
        Value::String(s) => py_repr(s),
        Value::Array(items) => format!("[{}]", items.iter().map(py).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => {
            let items: Vec<String> = map.iter().map(|(k, v)| format!("{}: {}", py_repr(k), py(v))).collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// A float as Python's `repr` writes it: the shortest digits that read back, positional from 1e-4 to below
/// 1e16 (with ".0" when whole), else with an exponent of at least two digits ("1e-05", "1.5e+16").
fn py_float(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan"
        } else if x > 0.0 {
            "inf"
        } else {
            "-inf"
        }
        .to_string();
    }
    let scientific = format!("{x:e}");
    let (digits, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..16).contains(&exponent) {
        let positional = format!("{x}");
        if positional.contains('.') { positional } else { positional + ".0" }
    } else {
        format!("{digits}e{}{:02}", if exponent < 0 { '-' } else { '+' }, exponent.unsigned_abs())
    }
}

/// The pieces of a tokenizer.json `load` needs: every token (the model's and the added ones) → id, the merges
/// as (left, right) in order, and the added tokens (the special tokens) in file order.
struct Parts<'d> {
    entries: BTreeMap<String, u32>,
    merges: Vec<(&'d str, &'d str)>,
    specials: Vec<String>,
}

/// Reads one document, walking its JSON values.
struct Reader<'s> {
    /// The file, for messages.
    source: &'s str,
}

impl Reader<'_> {
    fn value_error(&self, what: String) -> Error {
        Error::value(format!("{}: {what}", py_repr(self.source)))
    }

    fn unsupported(&self, what: String, supported: &str) -> Error {
        self.value_error(format!("{what} is not supported ({supported})"))
    }

    /// The tokenizer a document describes: byte-level when a pre-tokenizer step is ByteLevel, else char-level.
    fn tokenizer(&self, doc: &Map<String, Value>) -> Result<Tokenizer> {
        let empty = Map::new();
        let model = match doc.get("model").filter(|m| truthy(m)) {
            None => &empty,
            Some(Value::Object(model)) => model,
            Some(other) => {
                // (Python counts a bool as an int here.)
                let numbers = |v: &Value| v.is_i64() || v.is_u64() || v.is_boolean();
                if doc.values().take(100).all(numbers) {
                    return Err(Error::value(format!(
                        "{} is a vocabulary (token -> id), not a tokenizer.json: for GPT-2's vocab.json with \
                         merges.txt use Tokenizer.from_gpt2(vocab_json, merges_txt) (the command line: -t with the \
                         folder that holds both)",
                        py_repr(self.source)
                    )));
                }
                return Err(self.unsupported(format!("model type {}", py(other)), SUPPORTED));
            }
        };
        if !is(model, "type", "BPE") {
            return Err(self.unsupported(format!("model type {}", py(get(model, "type"))), SUPPORTED));
        }
        let pre = match doc.get("pre_tokenizer").filter(|p| truthy(p)) {
            None => &empty,
            Some(Value::Object(pre)) => pre,
            Some(other) => {
                return Err(self.value_error(format!("pre_tokenizer must be an object or null, not {}", py(other))));
            }
        };
        let steps: Vec<&Map<String, Value>> = if is(pre, "type", "Sequence") {
            let bad =
                |steps: &Value| self.value_error(format!("pre_tokenizer steps must be objects, got {}", py(steps)));
            match pre.get("pretokenizers") {
                None => Vec::new(),
                Some(all @ Value::Array(steps)) => {
                    steps.iter().map(Value::as_object).collect::<Option<_>>().ok_or_else(|| bad(all))?
                }
                Some(empty) if !truthy(empty) && (empty.is_object() || empty.is_string()) => Vec::new(),
                Some(other) => return Err(bad(other)),
            }
        } else if pre.is_empty() {
            Vec::new()
        } else {
            vec![pre]
        };
        if steps.iter().any(|s| is(s, "type", "ByteLevel")) {
            self.byte_level(doc, model, pre, &steps)
        } else {
            self.char_level(doc, model, &steps)
        }
    }

    /// The types of the steps, for messages (`['Whitespace', 'Digits']`).
    fn step_types(steps: &[&Map<String, Value>]) -> String {
        py(&Value::Array(steps.iter().map(|s| get(s, "type").clone()).collect()))
    }

    /// A byte-level BPE tokenizer; `steps` are the pre-tokenizer's (`pre`, or its Sequence's steps).
    fn byte_level(
        &self,
        doc: &Map<String, Value>,
        model: &Map<String, Value>,
        pre: &Map<String, Value>,
        steps: &[&Map<String, Value>],
    ) -> Result<Tokenizer> {
        for key in ["continuing_subword_prefix", "end_of_word_suffix", "unk_token", "dropout"] {
            if flag(model, key) {
                let what = format!("model.{key}={} with a ByteLevel pre-tokenizer", py(get(model, key)));
                return Err(self.unsupported(what, SUPPORTED));
            }
        }
        // The ByteLevel step turns text into the 256 byte characters: byte_fallback acts only on one of them
        // without a token (checked below, once the vocabulary is read).
        let byte_fallback = flag(model, "byte_fallback");
        let normalizer = get(doc, "normalizer");
        let lowercase = matches!(normalizer, Value::Object(n) if n.len() == 1 && is(n, "type", "Lowercase"));
        if !normalizer.is_null() && !lowercase {
            let kind = match normalizer {
                Value::Object(n) => get(n, "type"),
                other => other,
            };
            return Err(self.unsupported(format!("normalizer {}", py(kind)), SUPPORTED));
        }
        let (first, last) = (steps[0], steps[steps.len() - 1]);
        if !is(last, "type", "ByteLevel") || flag(last, "add_prefix_space") {
            let what = format!("pre-tokenizer {} (need ByteLevel without add_prefix_space)", py(get(pre, "type")));
            return Err(self.unsupported(what, SUPPORTED));
        }
        let use_regex = |step: &Map<String, Value>| step.get("use_regex").is_none_or(truthy);
        let pattern = if steps.len() == 1 {
            if use_regex(first) { Pattern::Gpt2 } else { Pattern::None }
        } else if use_regex(last) {
            // HF splits each piece of the steps before again with GPT-2's regex: two splits in a row.
            return Err(self.unsupported(
                format!(
                    "ByteLevel with use_regex=True after {} (GPT-2's regex inside each piece of the first split)",
                    py(get(first, "type"))
                ),
                "set use_regex to false, as after a Split it usually is, or use the ByteLevel pre-tokenizer alone",
            ));
        } else if steps.len() == 2 && is(first, "type", "Split") {
            // Which text the split keeps (Isolated keeps what is between matches too) as one of our patterns.
            self.split_pattern(first, SUPPORTED)?
        } else if steps.len() == 2 && is(first, "type", "Whitespace") {
            Pattern::Whitespace
        } else {
            return Err(self.unsupported(format!("pre-tokenizer sequence {}", Self::step_types(steps)), SUPPORTED));
        };
        let parts = self.parts(doc, model)?;
        self.refuse_added_token_options(doc, lowercase)?;
        // Byte-level tokens hold no space (GPT-2's form writes it Ġ): a part with one is a malformed merge.
        let merges = parts.merges.iter().enumerate().map(|(i, &(a, b))| {
            if a.contains(' ') || b.contains(' ') {
                let what = format!("expected two tokens separated by a space, got {}", py_repr(&format!("{a} {b}")));
                return Err(self.value_error(format!("model.merges[{i}]: {what}")));
            }
            Ok((i, a, b))
        });
        let mut vocab = explicit_ids::from_byte_merges(
            self.source,
            &parts.entries,
            merges,
            MergesIn::TokenizerJson,
            &parts.specials,
        )?;
        vocab.whole_pieces = flag(model, "ignore_merges");
        if byte_fallback && let Some(byte) = vocab.byte_ids().and_then(|ids| ids.iter().position(|&id| id == u32::MAX))
        {
            let what = format!(
                "model.byte_fallback=True with a ByteLevel pre-tokenizer and no token for byte 0x{byte:02X} (HF would \
                 look for <0x..> tokens of that character's UTF-8 bytes; with every byte in the vocabulary, \
                 byte_fallback never acts and is accepted)"
            );
            return Err(self.unsupported(what, SUPPORTED));
        }
        let mut names = parts.specials;
        names.sort_by_key(|s| vocab.known_id(s));
        // (A Split's regex is built here: an error names the file.)
        Tokenizer::new(vocab, pattern, lowercase, &names).map_err(|e| self.value_error(e.message))
    }

    /// A char-level BPE tokenizer; `steps` are the pre-tokenizer's.
    fn char_level(
        &self,
        doc: &Map<String, Value>,
        model: &Map<String, Value>,
        steps: &[&Map<String, Value>],
    ) -> Result<Tokenizer> {
        if flag(model, "byte_fallback") {
            let what = "model.byte_fallback=True (SentencePiece-style <0x..> byte tokens)".to_string();
            return Err(self.unsupported(what, SUPPORTED));
        }
        // (0 and false are no dropout, as in Python.)
        if flag(model, "dropout")
            || matches!(model.get("dropout"), Some(Value::String(_) | Value::Array(_) | Value::Object(_)))
        {
            let what = format!(
                "model.dropout={} (BPE-dropout is random; bytepair encodes deterministically: set it to null)",
                py(get(model, "dropout"))
            );
            return Err(self.unsupported(what, SUPPORTED));
        }
        let mut options = Vec::new();
        for key in ["unk_token", "continuing_subword_prefix", "end_of_word_suffix"] {
            options.push(match get(model, key) {
                Value::Null => None,
                Value::String(s) if s.is_empty() => None, // HF treats "" as no marker
                Value::String(s) => Some(s.clone()),
                other => {
                    return Err(self.value_error(format!("model.{key} must be a string or null, not {}", py(other))));
                }
            });
        }
        let [unk, prefix, suffix] = <[Option<String>; 3]>::try_from(options).expect("three options");
        let lowercase = self.char_lowercase(get(doc, "normalizer"))?;
        let pattern = self.char_pattern(steps)?;
        let parts = self.parts(doc, model)?;
        self.refuse_added_token_options(doc, lowercase)?;
        let model_options = CharModel { unk: unk.as_deref(), prefix, suffix, fuse_unk: flag(model, "fuse_unk") };
        let mut vocab =
            explicit_ids::from_char_merges(self.source, &parts.entries, &parts.merges, &parts.specials, model_options)?;
        vocab.whole_pieces = flag(model, "ignore_merges");
        let mut names = parts.specials;
        names.sort_by_key(|s| vocab.known_id(s));
        // (A Split's regex is built here: an error names the file.)
        Tokenizer::new(vocab, pattern, lowercase, &names).map_err(|e| self.value_error(e.message))
    }

    /// Whether a char-level file's normaliser is Lowercase (else none); any other is refused.
    fn char_lowercase(&self, normalizer: &Value) -> Result<bool> {
        if normalizer.is_null() {
            return Ok(false);
        }
        // A Sequence's parts (iterated as Python would: a list's items, an object's keys, a string's
        // characters), else the normaliser itself.
        let parts: Vec<Value> = match normalizer {
            Value::Object(n) if is(n, "type", "Sequence") => match get(n, "normalizers") {
                Value::Array(items) => items.clone(),
                Value::Object(keys) => keys.keys().map(|k| Value::String(k.clone())).collect(),
                Value::String(s) => s.chars().map(|c| Value::String(c.to_string())).collect(),
                other if !truthy(other) => Vec::new(),
                other => {
                    return Err(self.unsupported(
                        format!("normalizer {}", py(other)),
                        "bytepair supports no normaliser or Lowercase",
                    ));
                }
            },
            other => vec![other.clone()],
        };
        let types: Vec<&Value> = parts
            .iter()
            .map(|part| match part {
                Value::Object(n) => get(n, "type"),
                other => other,
            })
            .collect();
        if let Some(other) = types.iter().find(|t| t.as_str() != Some("Lowercase")) {
            let hint = if other.as_str() == Some("BertNormalizer") {
                " (CharBPETokenizer adds it unless bert_normalizer=False)"
            } else {
                ""
            };
            let what = format!("normalizer {}{hint}", py(other));
            return Err(self.unsupported(what, "bytepair supports no normaliser or Lowercase"));
        }
        Ok(!types.is_empty())
    }

    /// The pattern that splits text as a char-level file's pre-tokenizer does.
    fn char_pattern(&self, steps: &[&Map<String, Value>]) -> Result<Pattern> {
        let step = match steps {
            [] => return Ok(Pattern::None),
            [step] => step,
            _ => {
                let what = format!("pre-tokenizer sequence {}", Self::step_types(steps));
                return Err(self.unsupported(what, CHAR_PRE_TOKENIZERS));
            }
        };
        match get(step, "type") {
            Value::String(kind) => match kind.as_str() {
                "Whitespace" => Ok(Pattern::Whitespace),
                "WhitespaceSplit" => Ok(Pattern::dropping(pretokenize::WHITESPACE_SPLIT)),
                "BertPreTokenizer" => Ok(Pattern::dropping(pretokenize::BERT)),
                "Split" => self.split_pattern(step, CHAR_PRE_TOKENIZERS),
                _ => Err(self.unsupported(format!("pre-tokenizer {}", py_repr(kind)), CHAR_PRE_TOKENIZERS)),
            },
            other => Err(self.unsupported(format!("pre-tokenizer type {}", py(other)), CHAR_PRE_TOKENIZERS)),
        }
    }

    /// The pattern that splits text as a HF Split step does: a named pattern when the regex is one of theirs in
    /// the form HF reads as they are meant (they match all of any text, so keeping or dropping the text between
    /// matches is the same), a custom regex when Oniguruma and bytepair read it alike and the step keeps (Isolated)
    /// or drops (inverted Removed) the text between matches, else the Split itself. A regex bytepair cannot run
    /// as Oniguruma does is refused, naming the construct.
    fn split_pattern(&self, step: &Map<String, Value>, supported: &str) -> Result<Pattern> {
        let pattern = get(step, "pattern");
        let regex = match (pattern.get("Regex"), pattern.get("String")) {
            (Some(Value::String(regex)), None) => regex.clone(),
            // HF escapes a String pattern and runs it as a regex.
            (None, Some(Value::String(literal))) => onig_escape(literal),
            _ => return Err(self.unsupported(format!("Split pattern {}", py(pattern)), supported)),
        };
        let behavior = match get(step, "behavior") {
            Value::String(name) => Behavior::parse(name),
            _ => None,
        };
        let Some(behavior) = behavior else {
            let what = format!("Split behavior {}", py(get(step, "behavior")));
            return Err(self.unsupported(
                what,
                "HF's behaviors are Removed, Isolated, MergedWithPrevious, \
                                               MergedWithNext and Contiguous",
            ));
        };
        let invert = match step.get("invert") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(invert)) => *invert,
            Some(other) => {
                return Err(self.value_error(format!("Split invert must be true or false, not {}", py(other))));
            }
        };
        let keeps_gaps = behavior == Behavior::Isolated && !invert;
        let drops_gaps = behavior == Behavior::Removed && invert;
        let named = [
            (pretokenize::GPT2, Pattern::Gpt2),
            (pretokenize::CL100K, Pattern::Cl100k),
            (pretokenize::O200K, Pattern::O200k),
        ]
        .into_iter()
        // (cl100k's own form has `{1,3}+`, which Oniguruma reads as a repeated repeat: only the form save
        // writes is cl100k.)
        .find(|(source, _)| regex == hf_regex(source))
        .map(|(_, pattern)| pattern);
        if let Some(named) = named.filter(|_| keeps_gaps || drops_gaps) {
            return Ok(named);
        }
        let translation = oniguruma::translate(&regex).map_err(|reason| self.value_error(reason))?;
        Ok(match translation.differs {
            None if keeps_gaps => Pattern::Custom { regex, unmatched: Unmatched::Keep },
            None if drops_gaps => Pattern::Custom { regex, unmatched: Unmatched::Drop },
            _ => Pattern::HfSplit { regex, behavior, invert },
        })
    }

    /// Every token (model vocabulary and added tokens) → id, the merges, and the added tokens, checked so that
    /// a damaged file is an error naming the entry.
    fn parts<'d>(&self, doc: &'d Map<String, Value>, model: &'d Map<String, Value>) -> Result<Parts<'d>> {
        let Value::Object(vocab) = get(model, "vocab") else {
            let what = type_name(get(model, "vocab"));
            return Err(self.value_error(format!("model.vocab must be an object of token -> id, not {what}")));
        };
        let mut entries = BTreeMap::new();
        for (token, id) in vocab {
            let Some(id) = as_id(id) else {
                return Err(self.value_error(format!(
                    "model.vocab gives {} the id {}; ids are ints from 0 to 2**32 - 1",
                    py_repr(token),
                    py(id)
                )));
            };
            entries.insert(token.clone(), id);
        }
        let raw: &[Value] = match model.get("merges") {
            None => &[],
            Some(Value::Array(raw)) => raw,
            Some(other) => {
                return Err(self.value_error(format!("model.merges must be a list, not {}", type_name(other))));
            }
        };
        let mut merges = Vec::with_capacity(raw.len());
        for (n, merge) in raw.iter().enumerate() {
            let pair = match merge {
                Value::String(m) => m.split_once(' ').filter(|(_, b)| !b.contains(' ')),
                Value::Array(parts) => match parts.as_slice() {
                    [Value::String(a), Value::String(b)] => Some((a.as_str(), b.as_str())),
                    _ => None,
                },
                _ => None,
            };
            let Some(pair) = pair else {
                return Err(self.value_error(format!(
                    "model.merges[{n}] is {}; a merge is [left, right] or \"left right\"",
                    py(merge)
                )));
            };
            merges.push(pair);
        }
        let added = doc.get("added_tokens").filter(|a| truthy(a));
        let added: &[Value] = match added {
            None => &[],
            Some(Value::Array(added)) => added,
            Some(other) => {
                return Err(self.value_error(format!("added_tokens must be a list, not {}", type_name(other))));
            }
        };
        let model_size = entries.len() as u64;
        let mut specials: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        let mut top: Option<u64> = None; // the highest id of the added tokens so far
        for token in added {
            let content = token.get("content").and_then(Value::as_str).filter(|c| !c.is_empty());
            let (Some(content), Some(_)) = (content, token.get("id").and_then(as_id)) else {
                return Err(self.value_error(format!(
                    "added token {} needs a non-empty \"content\" and an int \"id\"",
                    py(token)
                )));
            };
            if !seen.insert(content) {
                continue;
            }
            let id = match entries.get(content) {
                Some(&id) => id as u64,
                None => {
                    // HF gives an added token that is not in the model the next id after the model's tokens and
                    // the added tokens before it, whatever "id" the file says (files HF writes agree).
                    let id = match top {
                        Some(top) if top >= model_size || model_size == 0 => top + 1,
                        _ => model_size,
                    };
                    let id = u32::try_from(id).map_err(|_| {
                        self.value_error(format!(
                            "added token {} would get id {id}, beyond 2**32 - 1",
                            py_repr(content)
                        ))
                    })?;
                    entries.insert(content.to_string(), id);
                    id as u64
                }
            };
            top = Some(top.map_or(id, |top| top.max(id)));
            specials.push(content.to_string());
        }
        Ok(Parts { entries, merges, specials })
    }

    /// Added tokens are matched as they are written, where they are; HF's options that change where or how
    /// they match (eating spaces beside them, whole words only, matching in the lowercased text) are refused
    /// rather than ignored, which gave other ids than HF (RoBERTa's "<mask>" has lstrip=True).
    fn refuse_added_token_options(&self, doc: &Map<String, Value>, lowercase: bool) -> Result<()> {
        let Some(Value::Array(added)) = doc.get("added_tokens") else { return Ok(()) };
        for token in added.iter().filter_map(Value::as_object) {
            let content = py(get(token, "content"));
            for option in ["lstrip", "rstrip", "single_word"] {
                if flag(token, option) {
                    return Err(self.unsupported(format!("added token {content} with {option}=True"), SUPPORTED));
                }
            }
            // HF would look for it in the lowercased text.
            if lowercase && flag(token, "normalized") {
                let what = format!("added token {content} with normalized=True under Lowercase");
                return Err(self.unsupported(what, SUPPORTED));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::{Alphabet, Silent, TieBreak, TrainConfig, train};
    use crate::vocab::SymbolStyle;

    const WORDS: [(&str, u64); 5] = [("hug", 10), ("pug", 5), ("pun", 12), ("bun", 4), ("hugs", 5)];

    fn trained(style: SymbolStyle, unk: Option<&str>, pattern: Pattern, lowercase: bool) -> Tokenizer {
        let specials = vec!["<s>".to_string(), "</s>".to_string()];
        let config = TrainConfig {
            vocab_size: if style.mode == Mode::Byte { 270 } else { 25 },
            style,
            special_tokens: specials.clone(),
            unk_token: unk.map(String::from),
            alphabet: if unk.is_some() { Alphabet::Corpus } else { Alphabet::All },
            limit_alphabet: None,
            min_frequency: 0,
            max_token_length: None,
            tie_break: TieBreak::FirstSeen,
        };
        let vocab = train(&WORDS, &config, &mut Silent).unwrap().vocab;
        Tokenizer::new(vocab, pattern, lowercase, &specials).unwrap()
    }

    /// `tok` written and read back: the same tokens at the same ids, merges, settings and special tokens.
    fn assert_round_trip(tok: &Tokenizer) -> Tokenizer {
        let text = save(tok).unwrap();
        let back = load_str(&text, "t.json").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let displays = |t: &Tokenizer| t.vocab.tokens.iter().map(|t| t.display.clone()).collect::<Vec<_>>();
        assert_eq!(displays(&back), displays(tok));
        assert_eq!(back.vocab.merges(), tok.vocab.merges());
        assert_eq!(back.vocab.style, tok.vocab.style);
        assert_eq!((back.vocab.unk, back.vocab.fuse_unk), (tok.vocab.unk, tok.vocab.fuse_unk));
        assert_eq!((&back.pretokenizer.pattern, back.lowercase), (&tok.pretokenizer.pattern, tok.lowercase));
        assert_eq!(back.specials.tokens(), tok.specials.tokens());
        for (a, b) in back.vocab.tokens.iter().zip(&tok.vocab.tokens) {
            assert_eq!((&a.bytes, a.continues, a.ends_word), (&b.bytes, b.continues, b.ends_word), "{}", a.display);
        }
        back
    }

    #[test]
    fn byte_level_round_trip() {
        for pattern in [
            Pattern::Gpt2,
            Pattern::Cl100k,
            Pattern::None,
            Pattern::Whitespace,
            Pattern::Custom { regex: r"\S+".into(), unmatched: Unmatched::Keep },
            Pattern::dropping(r"\S+"),
            Pattern::HfSplit { regex: r"\s*".into(), behavior: Behavior::MergedWithNext, invert: true },
            Pattern::HfSplit { regex: r"\w+".into(), behavior: Behavior::Isolated, invert: false },
        ] {
            let style = SymbolStyle { mode: Mode::Byte, prefix: None, suffix: None };
            let tok = trained(style, None, pattern, true);
            let back = assert_round_trip(&tok);
            let policy = crate::tokenizer::SpecialPolicy { allowed: vec![true; 2], disallowed: vec![true; 2] };
            let text = "hugs pun<s> bun";
            assert_eq!(back.encode(text, &policy).unwrap(), tok.encode(text, &policy).unwrap());
        }
    }

    #[test]
    fn char_level_round_trip_with_markers_and_unk() {
        let markers = [(Some("##"), None), (None, Some("</w>")), (Some("##"), Some("</w>"))];
        for (pattern, (prefix, suffix)) in [Pattern::Whitespace, Pattern::Gpt2, Pattern::None].into_iter().zip(markers)
        {
            let style =
                SymbolStyle { mode: Mode::Char, prefix: prefix.map(String::from), suffix: suffix.map(String::from) };
            let tok = trained(style, Some("[UNK]"), pattern, false);
            let back = assert_round_trip(&tok);
            assert!(back.vocab.unk.is_some());
            let policy = crate::tokenizer::SpecialPolicy { allowed: vec![true; 2], disallowed: vec![true; 2] };
            let text = "hugs xpun<s>bun";
            assert_eq!(back.encode(text, &policy).unwrap(), tok.encode(text, &policy).unwrap());
        }
    }

    #[test]
    fn written_decoders_take_the_markers_off() {
        let style = SymbolStyle { mode: Mode::Char, prefix: Some("##".into()), suffix: Some("</w>".into()) };
        let doc: Value =
            serde_json::from_str(&save(&trained(style, Some("[UNK]"), Pattern::Whitespace, false)).unwrap()).unwrap();
        let decoder = &doc["decoder"];
        assert_eq!(decoder["type"], "Sequence");
        assert_eq!(decoder["decoders"][0]["pattern"]["Regex"], r"</w>\z");
        assert_eq!(decoder["decoders"][1], serde_json::json!({"type": "WordPiece", "prefix": "##", "cleanup": false}));
        assert_eq!(doc["pre_tokenizer"], serde_json::json!({"type": "Whitespace"}));
        let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "version",
                "truncation",
                "padding",
                "added_tokens",
                "normalizer",
                "pre_tokenizer",
                "post_processor",
                "decoder",
                "model"
            ]
        );
    }

    fn base() -> Value {
        serde_json::json!({
            "version": "1.0",
            "added_tokens": [{"id": 0, "content": "[UNK]", "single_word": false, "lstrip": false, "rstrip": false,
                              "normalized": false, "special": true}],
            "normalizer": null,
            "pre_tokenizer": {"type": "Whitespace"},
            "decoder": null,
            "model": {"type": "BPE", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "vocab": {"[UNK]": 0, "a": 1, "##b": 2, "ab": 3}, "merges": [["a", "##b"]]}
        })
    }

    /// A change to a document.
    type Edit = fn(&mut Value);

    fn refused(edit: impl FnOnce(&mut Value)) -> String {
        let mut doc = base();
        edit(&mut doc);
        match load_str(&doc.to_string(), "t.json") {
            Ok(_) => panic!("accepted {doc}"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn the_base_document_loads() {
        let tok = load_str(&base().to_string(), "t.json").unwrap();
        let policy = crate::tokenizer::SpecialPolicy { allowed: vec![false], disallowed: vec![false] };
        assert_eq!(tok.encode("ab abb c", &policy).unwrap(), [3, 3, 2, 0]);
    }

    #[test]
    fn refused_files_say_what_and_why() {
        let cases: [(Edit, &str); 10] = [
            (|d| d["model"]["dropout"] = 0.1.into(), "'t.json': model.dropout=0.1 (BPE-dropout is random"),
            (
                |d| d["normalizer"] = serde_json::json!({"type": "NFKC"}),
                "'t.json': normalizer 'NFKC' is not supported (bytepair supports no normaliser or Lowercase)",
            ),
            (
                |d| {
                    d["pre_tokenizer"] = serde_json::json!({"type": "Sequence",
                        "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Punctuation"}]})
                },
                "'t.json': pre-tokenizer sequence ['WhitespaceSplit', 'Punctuation'] is not supported",
            ),
            (
                |d| d["model"]["merges"] = serde_json::json!([["a", "##b", "c"]]),
                "'t.json': model.merges[0] is ['a', '##b', 'c']; a merge is [left, right] or \"left right\"",
            ),
            (|d| d["model"]["merges"] = 5.into(), "'t.json': model.merges must be a list, not int"),
            (
                |d| d["model"]["vocab"]["c"] = (-1).into(),
                "'t.json': model.vocab gives 'c' the id -1; ids are ints from 0 to 2**32 - 1",
            ),
            (|d| d["model"]["type"] = "Unigram".into(), "'t.json': model type 'Unigram' is not supported"),
            (
                |d| d["added_tokens"][0]["lstrip"] = true.into(),
                "'t.json': added token '[UNK]' with lstrip=True is not supported",
            ),
            (|d| d["model"]["unk_token"] = "<unk>".into(), "'t.json': unk_token '<unk>' is not in the vocabulary"),
            (
                |d| *d = serde_json::json!({"model": 19849, "a": 0}),
                "'t.json' is a vocabulary (token -> id), not a tokenizer.json",
            ),
        ];
        for (edit, message) in cases {
            let got = refused(edit);
            assert!(got.starts_with(message), "{got}\n  does not start with\n{message}");
        }
        let err = load_str("[1, 2]", "t.json").unwrap_err();
        assert_eq!(err.message, "'t.json' is not a valid tokenizer.json: it holds a JSON list, not an object");
        assert!(
            load_str("{not json", "t.json")
                .unwrap_err()
                .message
                .starts_with("'t.json' is not a valid tokenizer.json: ")
        );
    }

    #[test]
    fn byte_level_files_refuse_what_would_give_other_ids() {
        let style = SymbolStyle { mode: Mode::Byte, prefix: None, suffix: None };
        let text = save(&trained(style, None, Pattern::Gpt2, false)).unwrap();
        let edited = |edit: &dyn Fn(&mut Value)| {
            let mut doc: Value = serde_json::from_str(&text).unwrap();
            edit(&mut doc);
            load_str(&doc.to_string(), "b.json").map(|_| ()).unwrap_err().message
        };
        let message = edited(&|d| {
            d["pre_tokenizer"] = serde_json::json!({"type": "Sequence", "pretokenizers": [{"type": "Whitespace"},
                {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}]})
        });
        assert!(message.contains("ByteLevel with use_regex=True after 'Whitespace'"), "{message}");
        let message = edited(&|d| d["normalizer"] = serde_json::json!([{"type": "Lowercase"}]));
        assert!(message.contains("normalizer [{'type': 'Lowercase'}] is not supported"), "{message}");
        let message = edited(&|d| {
            let merges = d["model"]["merges"].as_array_mut().unwrap();
            merges[5] = serde_json::json!(["zz", "q"]);
        });
        assert_eq!(message, "'b.json': model.merges[5]: 'zz' is not in model.vocab");
    }

    /// A byte-level document (trained on `WORDS`, vocab 270) whose pre-tokenizer is `Split` then ByteLevel.
    fn with_split(regex: &str, behavior: &str, invert: bool) -> Value {
        let style = SymbolStyle { mode: Mode::Byte, prefix: None, suffix: None };
        let mut doc: Value = serde_json::from_str(&save(&trained(style, None, Pattern::None, false)).unwrap()).unwrap();
        doc["pre_tokenizer"] = serde_json::json!({"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": regex}, "behavior": behavior, "invert": invert},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]});
        doc
    }

    #[test]
    fn a_split_is_read_as_the_pattern_that_cuts_as_it_does() {
        let read = |regex: &str, behavior: &str, invert: bool| {
            load_str(&with_split(regex, behavior, invert).to_string(), "s.json").unwrap().pretokenizer.pattern
        };
        // The named patterns in the form save writes them (they match all text: keeping or dropping the rest is
        // the same).
        assert_eq!(read(pretokenize::GPT2, "Isolated", false), Pattern::Gpt2);
        assert_eq!(read(&hf_regex(pretokenize::CL100K), "Removed", true), Pattern::Cl100k);
        // cl100k as tiktoken writes it reads otherwise in Oniguruma (`{1,3}+` repeats the repeat).
        assert!(matches!(read(pretokenize::CL100K, "Isolated", false), Pattern::HfSplit { .. }));
        // A regex both engines read alike, kept or dropped between matches: bytepair's own pattern.
        assert_eq!(
            read(r"\s+", "Isolated", false),
            Pattern::Custom { regex: r"\s+".into(), unmatched: Unmatched::Keep }
        );
        assert_eq!(read(r"\s+", "Removed", true), Pattern::dropping(r"\s+"));
        // Otherwise the Split itself.
        let split = Pattern::HfSplit { regex: r"\s*".into(), behavior: Behavior::Contiguous, invert: false };
        assert_eq!(read(r"\s*", "Contiguous", false), split);
        let split = Pattern::HfSplit { regex: r"\w+".into(), behavior: Behavior::Removed, invert: true };
        assert_eq!(read(r"\w+", "Removed", true), split);
        let message = load_str(&with_split(r"(a)\1", "Isolated", false).to_string(), "s.json").unwrap_err().message;
        assert!(message.starts_with("'s.json': the Split regex '(a)\\\\1' uses '\\1'"), "{message}");
    }

    #[test]
    fn save_refuses_a_custom_regex_oniguruma_reads_differently() {
        let style = SymbolStyle { mode: Mode::Byte, prefix: None, suffix: None };
        let pattern = Pattern::Custom { regex: r"\w+|\s+".into(), unmatched: Unmatched::Keep };
        let message = save(&trained(style, None, pattern, false)).unwrap_err().message;
        assert!(message.starts_with(r"save_hf cannot write the pattern '\\w+|\\s+'"), "{message}");
    }

    #[test]
    fn byte_fallback_is_taken_only_where_it_cannot_act() {
        let mut doc = with_split(r"\s+", "Isolated", false);
        doc["model"]["byte_fallback"] = true.into();
        assert!(load_str(&doc.to_string(), "b.json").is_ok(), "every byte has a token");
        doc["model"]["vocab"].as_object_mut().unwrap().shift_remove("Ā").unwrap(); // byte 0x00
        let message = load_str(&doc.to_string(), "b.json").unwrap_err().message;
        assert!(message.contains("byte_fallback=True with a ByteLevel pre-tokenizer and no token for byte 0x00"));
    }

    #[test]
    fn python_reprs() {
        assert_eq!(py(&serde_json::json!({"a": [1, 2.5, null, true, "x'"]})), r#"{'a': [1, 2.5, None, True, "x'"]}"#);
        for (x, want) in [
            (0.1, "0.1"),
            (1.0, "1.0"),
            (1e16, "1e+16"),
            (1.5e-7, "1.5e-07"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (-2.5e20, "-2.5e+20"),
        ] {
            assert_eq!(py_float(x), want);
        }
    }

    #[test]
    fn hf_regex_drops_possessive_marks_after_counted_repetitions() {
        assert_eq!(hf_regex(r"\p{N}{1,3}+|a{2}+b{3,}+c++"), r"\p{N}{1,3}|a{2}b{3,}c++");
        assert_eq!(hf_regex(r"{1,3}++{x}+"), r"{1,3}+{x}+");
        assert_eq!(onig_escape("a.b##</w>"), r"a\.b##</w>");
    }
}
