//! GPT-2's vocabulary files, as OpenAI published them (`encoder.json` + `vocab.bpe`) and as HF names them
//! (`vocab.json` + `merges.txt`): a JSON object of token (GPT-2's byte-level form) → id, and the merges in
//! order, one `left right` per line after a `#version` line.

use std::collections::BTreeMap;

use super::explicit_ids::{self, MergesIn, bad_line};
use crate::error::{Error, Result, py_repr};
use crate::pretokenize::Pattern;
use crate::tokenizer::Tokenizer;

/// A tokenizer from `vocab.json` + `merges.txt`; `specials` are entries of the vocabulary that are special
/// tokens (GPT-2's `<|endoftext|>`).
pub fn load(vocab_path: &str, merges_path: &str, specials: &[String], pattern: Pattern) -> Result<Tokenizer> {
    let json = explicit_ids::read_utf8(vocab_path)?;
    let entries: BTreeMap<String, u32> = serde_json::from_str(&json).map_err(|e| {
        Error::value(format!(
            "{} is not a valid vocab.json: line {}: {e} (expected a JSON object of token -> id)",
            py_repr(vocab_path),
            e.line()
        ))
    })?;
    let text = explicit_ids::read_utf8(merges_path)?;
    // Split when the vocabulary is checked (its errors come first).
    let merges =
        text.lines().enumerate().filter(|(_, line)| !line.starts_with("#version") && !line.trim().is_empty()).map(
            |(i, line)| {
                let mut parts = line.split(' ');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(a), Some(b), None) => Ok((i + 1, a, b)),
                    _ => Err(bad_line(
                        merges_path,
                        i + 1,
                        format!("expected two tokens separated by a space, got {}", py_repr(line)),
                    )),
                }
            },
        );
    let vocab = explicit_ids::from_byte_merges(vocab_path, &entries, merges, MergesIn::Lines(merges_path), specials)?;
    let mut names = specials.to_vec();
    names.sort_by_key(|s| vocab.known_id(s));
    Tokenizer::new(vocab, pattern, false, &names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::SpecialPolicy;

    fn write(name: &str, text: &str) -> String {
        let path = std::env::temp_dir().join(format!("bytepair-gpt2-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn loads_vocab_and_merges_at_their_ids() {
        let vocab = write("vocab.json", r#"{"a": 0, "b": 1, "ab": 2, "Ġ": 3, "Ġab": 4, "<|endoftext|>": 5}"#);
        let merges = write("merges.txt", "#version: 0.2\na b\nĠ ab\n");
        let tok = load(&vocab, &merges, &["<|endoftext|>".into()], Pattern::Gpt2).unwrap();
        let policy = SpecialPolicy { allowed: vec![true], disallowed: vec![true] };
        assert_eq!(tok.encode("ab ab<|endoftext|>", &policy).unwrap(), [2, 4, 5]);
        assert_eq!(tok.vocab.merge_rank()[&(3, 2)], (1, 4));
    }

    #[test]
    fn bad_merge_lines_are_named() {
        let vocab = write("vocab2.json", r#"{"a": 0, "b": 1, "ab": 2}"#);
        let merges = write("merges2.txt", "#version: 0.2\na b c\n");
        let err = load(&vocab, &merges, &[], Pattern::Gpt2).unwrap_err();
        assert!(err.message.ends_with("line 2: expected two tokens separated by a space, got 'a b c'"), "{}", err);
        let merges = write("merges3.txt", "a b\nab ab\n");
        let err = load(&vocab, &merges, &[], Pattern::Gpt2).unwrap_err();
        assert!(err.message.ends_with(&format!("line 2: 'abab' is not in '{vocab}'")), "{}", err);
    }
}
