//! Encoding a piece: initial symbols, then merges applied in rank order.
//!
//! Applying "the lowest-ranked pair present, at every occurrence, left to right" until none is left gives
//! exactly the textbook's "apply each merge in order to the whole word": a pair created by merge r always
//! contains r's result, so its rank is above r.

mod backtrack;
pub mod caches;
mod hash_bits;
pub(crate) mod huge_pages;
mod merge;
mod pair_table;
pub mod piece;
mod whole;

use rustc_hash::FxHashMap;

use crate::vocab::Vocab;

/// The fast piece encoder for a vocabulary, when it has no word markers (else None: the general path
/// applies the merges symbol by symbol).
pub fn piece_encoder(vocab: &Vocab) -> Option<piece::PieceEncoder> {
    piece_encoder_by_rule(vocab, vocab.rank_by_bytes)
}

/// The same with the merge rule given: `tiktoken_rule` (any split of a token merges into it, at its id) or the
/// vocabulary's listed merges.
pub fn piece_encoder_by_rule(vocab: &Vocab, tiktoken_rule: bool) -> Option<piece::PieceEncoder> {
    let Some(&byte_ids) = vocab.byte_ids() else {
        return char_encoder(vocab);
    };
    let tokens: Vec<Option<&[u8]>> =
        vocab.tokens.iter().map(|t| if t.special { None } else { Some(t.bytes.as_ref()) }).collect();
    if tiktoken_rule {
        // tiktoken: every split of a token into two tokens may merge into it, at the token's rank (= id).
        return Some(piece::PieceEncoder::tiktoken(byte_ids, &tokens, vocab.unk));
    }
    let pairs = vocab.merge_rank().iter().map(|(&(left, right), &(rank, result))| (left, right, rank, result));
    let units = piece::Units::Bytes(byte_ids);
    Some(piece::PieceEncoder::new(units, pairs, &tokens, vocab.unk, vocab.whole_pieces, false))
}

/// The fast piece encoder of a character-level vocabulary without word markers; it keeps `apply_merges`'
/// rule (each rank at all its occurrences), so its ids are the general path's.
fn char_encoder(vocab: &Vocab) -> Option<piece::PieceEncoder> {
    use crate::vocab::Mode;
    if vocab.style.mode != Mode::Char || vocab.style.prefix.is_some() || vocab.style.suffix.is_some() {
        return None;
    }
    // Each character's initial symbol is the token displayed as that character, as `Vocab::initial_symbols`
    // finds it (a one-character special token included).
    let mut ascii = [u32::MAX; 128];
    let mut other = FxHashMap::default();
    for id in vocab.by_display.ids() {
        let display = &vocab.tokens[id as usize].display;
        let mut chars = display.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else { continue };
        if c.is_ascii() {
            ascii[c as usize] = id;
        } else {
            other.insert(c, id);
        }
    }
    let tokens: Vec<Option<&[u8]>> =
        vocab.tokens.iter().map(|t| if t.special { None } else { Some(t.bytes.as_ref()) }).collect();
    let pairs = vocab.merge_rank().iter().map(|(&(left, right), &(rank, result))| (left, right, rank, result));
    let units = piece::Units::Chars { ascii, other };
    let encoder = piece::PieceEncoder::new(units, pairs, &tokens, vocab.unk, vocab.whole_pieces, true);
    Some(encoder.with_fuse_unk(vocab.fuse_unk))
}

/// Merges `symbols` in place by rank, each rank at all its occurrences (the general path's rule).
pub fn apply_merges(symbols: &mut Vec<u32>, merge_rank: &FxHashMap<(u32, u32), (u32, u32)>) {
    const NONE: (u32, u32) = (u32::MAX, u32::MAX);
    merge::merge_all_occurrences(symbols, 0, |left, right| merge_rank.get(&(left, right)).copied().unwrap_or(NONE));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A character vocabulary trained on random words over `alphabet`.
    fn char_vocab(alphabet: &[char], seed: u64, vocab_size: usize) -> Vocab {
        use crate::train::{Silent, TrainConfig, train};
        use crate::vocab::Mode;
        let mut x = seed;
        let mut next = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        let words: Vec<(String, u64)> =
            (0..8).map(|_| ((0..300 + next() % 700).map(|_| alphabet[next() % alphabet.len()]).collect(), 1)).collect();
        let words: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
        train(&words, &TrainConfig::for_test(vocab_size, Mode::Char), &mut Silent).unwrap().vocab
    }

    /// The general path's ids of `text` (one piece).
    fn general_ids(vocab: &Vocab, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        vocab.initial_symbols(text, &mut ids).unwrap();
        apply_merges(&mut ids, vocab.merge_rank());
        ids
    }

    /// The fast encoder's ids of `text` (one piece), with a fresh scratch.
    fn fast_ids(encoder: &piece::PieceEncoder, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        encoder.encode(text.as_bytes(), &mut caches::Scratch::default(), &mut ids).unwrap();
        ids
    }

    #[test]
    fn char_encoder_equals_the_general_path_at_every_length() {
        for (seed, alphabet) in [(1u64, &['A', 'C', 'G', 'T'][..]), (2, &['a', 'b']), (3, &['a', 'é', '日', 'b'])] {
            let vocab = char_vocab(alphabet, seed, 300);
            let encoder = char_encoder(&vocab).expect("plain character vocabulary");
            let mut scratch = caches::Scratch::default();
            let mut x = seed;
            for len in [1usize, 2, 5, 47, 48, 49, 200, 4095, 4096, 4097, 20_000] {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                let text: String =
                    (0..len).map(|i| alphabet[((x >> 20) as usize + i * (i + 7) / 3) % alphabet.len()]).collect();
                let text = format!("{text}?"); // an unknown character too
                let mut fast = Vec::new();
                encoder.encode(text.as_bytes(), &mut scratch, &mut fast).unwrap();
                assert_eq!(fast, general_ids(&vocab, &text), "seed {seed} length {len}");
            }
        }
    }

    #[test]
    fn char_encoder_keeps_the_general_rule_when_merges_recreate_tokens() {
        use crate::vocab::{Mode, SymbolStyle};
        let style = SymbolStyle { mode: Mode::Char, prefix: None, suffix: None };
        let base: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let mut v = Vocab::new(style, &[], None, &base).unwrap();
        let (a, b, c) = (0, 1, 2);
        // "abcabc" → a bc a bc; then (a, bc) recreates "abc", and (abc, a) ranks lower than it: the general
        // rule merges both (a, bc) first (abc abc), a heap would merge (abc, a) in between (abca bc).
        let bc = v.push_merge(b, c);
        let ab = v.push_merge(a, b);
        let abc = v.push_merge(ab, c);
        v.push_merge(abc, a);
        assert_eq!(v.push_merge(a, bc), abc); // recreated
        v.push_merge(abc, ab);
        v.push_merge(c, a);
        assert_eq!(general_ids(&v, "abcabc"), [abc, abc]);
        let encoder = char_encoder(&v).unwrap();
        let mut x = 5u64;
        for len in [3usize, 6, 10, 40, 60, 500, 5000] {
            for _ in 0..50 {
                let text: String = (0..len)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        ['a', 'b', 'c'][(x >> 40) as usize % 3]
                    })
                    .collect();
                assert_eq!(fast_ids(&encoder, &text), general_ids(&v, &text), "{text}");
            }
        }
    }

    #[test]
    fn char_encoder_fuses_unknown_runs_and_maps_one_character_specials_like_the_general_path() {
        use crate::vocab::{Mode, SymbolStyle};
        let style = SymbolStyle { mode: Mode::Char, prefix: None, suffix: None };
        let base: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        for fuse in [false, true] {
            let mut v = Vocab::new(style.clone(), &["#".into()], Some("[UNK]"), &base).unwrap();
            let (a, b, c) = (v.known_id("a"), v.known_id("b"), v.known_id("c"));
            let ab = v.push_merge(a, b);
            v.push_merge(ab, c);
            v.push_merge(c, c);
            v.fuse_unk = fuse;
            let encoder = char_encoder(&v).unwrap();
            let mut x = 11u64;
            for len in [1usize, 5, 40, 60, 300, 5000] {
                let text: String = (0..len)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        ['a', 'b', 'c', '#', 'x', 'é', 'c'][(x >> 40) as usize % 7]
                    })
                    .collect();
                assert_eq!(fast_ids(&encoder, &text), general_ids(&v, &text), "fuse_unk={fuse} {text}");
            }
        }
    }

    #[test]
    fn merges_apply_in_rank_order() {
        // h=0 u=1 g=2 ug=3 hug=4
        let mut ranks = FxHashMap::default();
        ranks.insert((1, 2), (0, 3));
        ranks.insert((0, 3), (1, 4));
        let mut s = vec![0, 1, 2, 1, 2];
        apply_merges(&mut s, &ranks);
        assert_eq!(s, vec![4, 3]);
    }
}
