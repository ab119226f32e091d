//! tiktoken rank files (`*.tiktoken`): one `base64(token) rank` per line, ranks being the ids. Special tokens
//! are not in the file: the caller gives them with their ids. A piece that is a token is that token, and
//! tokens merge by tiktoken's rule (see `explicit_ids::from_ranks`).

use base64::Engine;

use super::explicit_ids::{self, bad_line};
use crate::error::{Error, Result, py_repr};
use crate::pretokenize::Pattern;
use crate::tokenizer::Tokenizer;

/// Reads a tiktoken rank file: one `base64(token) rank` per line.
pub fn read_ranks(path: &str) -> Result<Vec<(Vec<u8>, u32)>> {
    parse_ranks(&explicit_ids::read_utf8(path)?, path)
}

/// The ranks in the text of a tiktoken rank file; `path` names it in messages.
pub fn parse_ranks(text: &str, path: &str) -> Result<Vec<(Vec<u8>, u32)>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut parts = line.split(' ');
        let (Some(token), Some(rank), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad_line(path, i + 1, "expected \"<base64 token> <rank>\""));
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(token)
            .map_err(|e| bad_line(path, i + 1, format!("{} is not base64 ({e})", py_repr(token))))?;
        let rank: u32 = rank.parse().map_err(|_| {
            let what = if rank.parse::<i128>().is_ok() { "is outside 0 to 4294967295" } else { "is not a number" };
            bad_line(path, i + 1, format!("rank {} {what}", py_repr(rank)))
        })?;
        if bytes.is_empty() {
            return Err(bad_line(path, i + 1, "empty token"));
        }
        out.push((bytes, rank));
    }
    if out.is_empty() {
        return Err(Error::value(format!("{} holds no tokens: it is not a tiktoken rank file", py_repr(path))));
    }
    Ok(out)
}

/// A tokenizer from a tiktoken rank file, with the pattern and the special tokens `(text, id)` of its
/// encoding (neither is in the file).
pub fn load(path: &str, pattern: Pattern, specials: &[(String, u32)]) -> Result<Tokenizer> {
    tokenizer_of(path, read_ranks(path)?, pattern, specials)
}

/// `load` from the text of a rank file (`source` names it in messages).
pub fn load_str(text: &str, source: &str, pattern: Pattern, specials: &[(String, u32)]) -> Result<Tokenizer> {
    tokenizer_of(source, parse_ranks(text, source)?, pattern, specials)
}

fn tokenizer_of(
    path: &str,
    ranks: Vec<(Vec<u8>, u32)>,
    pattern: Pattern,
    specials: &[(String, u32)],
) -> Result<Tokenizer> {
    let (vocab, encoder) = explicit_ids::from_ranks(path, ranks, specials)?;
    let mut ordered = specials.to_vec();
    ordered.sort_by_key(|s| s.1);
    let names: Vec<String> = ordered.into_iter().map(|s| s.0).collect();
    let tokenizer = Tokenizer::new(vocab, pattern, false, &names)?;
    tokenizer.adopt_piece_encoder(encoder);
    Ok(tokenizer)
}

/// The rank file of a tokenizer: each non-special token's bytes in base64 and its id, one per line, after
/// checking that tiktoken's rule gives this tokenizer's ids (see `Tokenizer::tiktoken_ranks`).
pub fn save(tok: &Tokenizer) -> Result<String> {
    let base64 = base64::engine::general_purpose::STANDARD;
    let mut out = String::new();
    for (bytes, id) in tok.tiktoken_ranks()? {
        base64.encode_string(bytes, &mut out);
        out.push(' ');
        out.push_str(&id.to_string());
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::SpecialPolicy;

    fn write(name: &str, text: &str) -> String {
        let path = std::env::temp_dir().join(format!("bytepair-tiktoken-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// Every byte, then "ab" (256), "abc" (257).
    fn small_rank_file() -> String {
        let base64 = base64::engine::general_purpose::STANDARD;
        let mut text: String = (0..=255u8).map(|b| format!("{} {b}\n", base64.encode([b]))).collect();
        text.push_str(&format!("{} 256\n{} 257\n", base64.encode(b"ab"), base64.encode(b"abc")));
        text
    }

    #[test]
    fn save_writes_what_load_reads() {
        let path = write("small.tiktoken", &small_rank_file());
        let specials = [("<|end|>".to_string(), 258)];
        let tok = load(&path, Pattern::Gpt2, &specials).unwrap();
        let policy = SpecialPolicy { allowed: vec![true], disallowed: vec![true] };
        assert_eq!(tok.encode("abcab<|end|>", &policy).unwrap(), [257, 256, 258]);
        assert_eq!(save(&tok).unwrap(), small_rank_file());
        let again = load(&write("again.tiktoken", &save(&tok).unwrap()), Pattern::Gpt2, &specials).unwrap();
        assert_eq!(again.vocab.merges(), tok.vocab.merges());
    }

    #[test]
    fn bad_lines_are_named() {
        let path = write("bad.tiktoken", "YQ== 0\nYg== 4294967296\n");
        let err = read_ranks(&path).unwrap_err();
        assert!(err.message.ends_with("line 2: rank '4294967296' is outside 0 to 4294967295"), "{}", err.message);
        let path = write("empty.tiktoken", "\n\n");
        assert!(read_ranks(&path).unwrap_err().message.contains("holds no tokens"));
    }
}
