//! What the targets share: a tokenizer's content, to compare one loaded back with the one saved, and a quick
//! use of it (encoding and decoding text), so that a loaded tokenizer that cannot be used is found too.

use bytepair::tokenizer::{SpecialPolicy, Tokenizer};

/// Everything a file holds of a tokenizer: each token (text, bytes, special), the merges, the special tokens,
/// the pattern and normaliser.
#[allow(clippy::type_complexity)]
pub fn content(tok: &Tokenizer) -> (Vec<(String, Vec<u8>, bool)>, Vec<(u32, u32, u32)>, Vec<String>, String) {
    let tokens = tok.vocab.tokens.iter().map(|t| (t.display.to_string(), t.bytes.to_vec(), t.special)).collect();
    let merges = tok.vocab.merges().iter().map(|m| (m.left, m.right, m.result)).collect();
    let settings = format!("{:?} {} {:?}", tok.pretokenizer.pattern, tok.lowercase, tok.vocab.style);
    (tokens, merges, tok.specials.tokens().to_vec(), settings)
}

/// Encodes `data` (as text) and decodes it back: no panic, and a byte-level tokenizer without normalisation
/// gives the text back.
pub fn use_it(tok: &Tokenizer, data: &[u8]) {
    let text = String::from_utf8_lossy(&data[..data.len().min(512)]);
    let n = tok.specials.tokens().len();
    let policy = SpecialPolicy { allowed: vec![true; n], disallowed: vec![false; n] };
    if let Ok(ids) = tok.encode(&text, &policy) {
        let back = tok.decode_bytes(&ids).expect("ids from encode decode");
        if tok.vocab.byte_ids().is_some()
            && !tok.lowercase
            && !tok.pretokenizer.pattern.drops_whitespace()
            && tok.vocab.unk.is_none()
        {
            assert_eq!(back, text.as_bytes(), "encode then decode changed the text");
        }
    }
}
