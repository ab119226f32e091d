//! Encoding a piece: initial symbols, then merges applied in rank order.
//!
//! Applying "the lowest-ranked pair present, at every occurrence, left to right" until none is left gives
//! exactly the textbook's "apply each merge in order to the whole word": a pair created by merge r always
//! contains r's result, so its rank is above r.

pub mod piece;

use rustc_hash::FxHashMap;

use crate::vocab::Vocab;

/// The fast piece encoder for a vocabulary, when it is byte-level without word markers (else None: the
/// general path applies the merges symbol by symbol).
pub fn piece_encoder(vocab: &Vocab) -> Option<piece::PieceEncoder> {
    piece_encoder_by_rule(vocab, vocab.rank_by_bytes)
}

/// The same with the merge rule given: `tiktoken_rule` (any split of a token merges into it, at its id) or the
/// vocabulary's listed merges.
pub fn piece_encoder_by_rule(vocab: &Vocab, tiktoken_rule: bool) -> Option<piece::PieceEncoder> {
    let byte_ids = *vocab.byte_ids()?;
    let tokens: Vec<Option<&[u8]>> =
        vocab.tokens.iter().map(|t| if t.special { None } else { Some(t.bytes.as_slice()) }).collect();
    if tiktoken_rule {
        // tiktoken: every split of a token into two tokens may merge into it, at the token's rank (= id).
        let by_bytes: FxHashMap<&[u8], u32> =
            tokens.iter().enumerate().filter_map(|(id, t)| t.map(|b| (b, id as u32))).collect();
        let mut pairs = Vec::new();
        for (id, bytes) in tokens.iter().enumerate() {
            let Some(bytes) = bytes else { continue };
            for k in 1..bytes.len() {
                if let (Some(&left), Some(&right)) = (by_bytes.get(&bytes[..k]), by_bytes.get(&bytes[k..])) {
                    pairs.push((left, right, id as u32, id as u32));
                }
            }
        }
        return Some(piece::PieceEncoder::new(byte_ids, pairs, &tokens, vocab.unk, true));
    }
    let pairs = vocab.merge_rank.iter().map(|(&(left, right), &(rank, result))| (left, right, rank, result));
    Some(piece::PieceEncoder::new(byte_ids, pairs, &tokens, vocab.unk, vocab.whole_pieces))
}

/// Merges `symbols` in place by rank.
pub fn apply_merges(symbols: &mut Vec<u32>, merge_rank: &FxHashMap<(u32, u32), (u32, u32)>) {
    loop {
        let mut best: Option<(u32, u32, u32, u32)> = None; // (rank, left, right, result)
        for window in symbols.windows(2) {
            if let Some(&(rank, result)) = merge_rank.get(&(window[0], window[1]))
                && best.is_none_or(|(r, ..)| rank < r)
            {
                best = Some((rank, window[0], window[1], result));
            }
        }
        let Some((_, left, right, result)) = best else {
            return;
        };
        let mut write = 0;
        let mut read = 0;
        while read < symbols.len() {
            if read + 1 < symbols.len() && symbols[read] == left && symbols[read + 1] == right {
                symbols[write] = result;
                read += 2;
            } else {
                symbols[write] = symbols[read];
                read += 1;
            }
            write += 1;
        }
        symbols.truncate(write);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
