//! The pairs tiktoken's rule merges: every split of a token into two tokens, `(left, right)` → that token.
//!
//! Performance notes: looking up each prefix and suffix of each token in a hash of the tokens hashes k bytes
//! for the k-th split, so a token of n bytes cost n²/2 hashed bytes — a rank file with one 1 MB token took 29 s
//! to load. Here the tokens are sorted once; in sorted order the tokens that are prefixes of a token are the
//! ones still on a stack whose entries are popped when the common prefix with the next token (one comparison
//! of neighbours) gets shorter than them, so all of a token's prefix tokens are found in time linear in the
//! total size; suffixes the same way on the reversed tokens. A 10 MB token loads in well under a second.
//! - The stack's entries are nested prefixes, so each token keeps only the entry below it when it was pushed:
//!   one link per token instead of a list of its prefixes, and suffixes are sorted by comparing backwards
//!   rather than on reversed copies: o200k_base's RSS at the end of this step, freed memory released before
//!   it, 103 → 64 MB (a list per token twice, and a reversed copy of every token, were ~40 MB).

use rustc_hash::FxHashMap;

/// For each token (by id; None for specials and unused ids), the token that was on top of the stack when it
/// was pushed (NONE if none): following these links from `out[id]` lists, longest first, the tokens that are
/// prefixes of token `id` (with `reversed`, suffixes), and maybe one of its own length (a duplicate), which
/// callers skip.
fn affixes(tokens: &[Option<&[u8]>], reversed: bool) -> Vec<u32> {
    let bytes = |id: u32| tokens[id as usize].unwrap_or_default();
    let mut order: Vec<u32> = (0..tokens.len() as u32).filter(|&id| tokens[id as usize].is_some()).collect();
    if reversed {
        order.sort_unstable_by(|&a, &b| bytes(a).iter().rev().cmp(bytes(b).iter().rev()).then(a.cmp(&b)));
    } else {
        order.sort_unstable_by(|&a, &b| bytes(a).cmp(bytes(b)).then(a.cmp(&b)));
    }
    let mut out = vec![NONE; tokens.len()];
    // The tokens that are prefixes of the previous one (itself included), shortest first.
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut previous: &[u8] = &[];
    for &id in &order {
        let token = bytes(id);
        let common = if reversed {
            previous.iter().rev().zip(token.iter().rev()).take_while(|(a, b)| a == b).count()
        } else {
            previous.iter().zip(token).take_while(|(a, b)| a == b).count()
        } as u32;
        // An entry longer than the common prefix is no prefix of this token, nor of any later one (sorted
        // order: their common prefix with it can only be shorter).
        while stack.last().is_some_and(|&(len, _)| len > common) {
            stack.pop();
        }
        out[id as usize] = stack.last().map_or(NONE, |&(_, below)| below);
        stack.push((token.len() as u32, id));
        previous = token;
    }
    out
}

/// No token (the end of a list of `affixes`).
const NONE: u32 = u32::MAX;

/// Every split of every token into two tokens, as `(left, right, rank, result)` with rank = result = the
/// token's id (tiktoken's ranks are its ids), in time linear in the tokens' total size.
pub(crate) fn tiktoken_pairs(tokens: &[Option<&[u8]>]) -> Vec<(u32, u32, u32, u32)> {
    let prefixes = affixes(tokens, false);
    let suffixes = affixes(tokens, true);
    let len = |id: u32| tokens[id as usize].map_or(0, |t| t.len() as u32);
    // A token's list of affixes, shortest first (the links give it longest first).
    let list = |links: &[u32], id: usize, n: u32, out: &mut Vec<(u32, u32)>| {
        out.clear();
        let mut at = links[id];
        while at != NONE {
            if len(at) < n {
                out.push((len(at), at));
            }
            at = links[at as usize];
        }
        out.reverse();
    };
    let mut pairs = Vec::new();
    let (mut prefix_list, mut suffix_list) = (Vec::new(), Vec::new());
    let mut suffix_at: FxHashMap<u32, u32> = FxHashMap::default();
    for (id, bytes) in tokens.iter().enumerate() {
        let Some(bytes) = bytes else { continue };
        let n = bytes.len() as u32;
        list(&suffixes, id, n, &mut suffix_list);
        suffix_at.clear();
        // A suffix of length m starts at n - m.
        suffix_at.extend(suffix_list.iter().map(|&(m, suffix)| (n - m, suffix)));
        list(&prefixes, id, n, &mut prefix_list);
        for &(k, prefix) in &prefix_list {
            if let Some(&suffix) = suffix_at.get(&k) {
                pairs.push((prefix, suffix, id as u32, id as u32));
            }
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every split looked up by hashing both parts: the quadratic definition.
    fn by_hashing(tokens: &[Option<&[u8]>]) -> Vec<(u32, u32, u32, u32)> {
        let by_bytes: FxHashMap<&[u8], u32> =
            tokens.iter().enumerate().filter_map(|(id, t)| t.map(|b| (b, id as u32))).collect();
        let mut pairs = Vec::new();
        for (id, t) in tokens.iter().enumerate() {
            let bytes = t.unwrap_or_default();
            for k in 1..bytes.len() {
                if let (Some(&l), Some(&r)) = (by_bytes.get(&bytes[..k]), by_bytes.get(&bytes[k..])) {
                    pairs.push((l, r, id as u32, id as u32));
                }
            }
        }
        pairs
    }

    #[test]
    fn finds_the_same_splits_as_hashing_every_split() {
        let mut x = 5u64;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..300 {
            let mut words: Vec<Vec<u8>> = Vec::new();
            while words.len() < 3 + next(80) as usize {
                let w: Vec<u8> = (0..1 + next(9)).map(|_| b"aab"[next(3) as usize]).collect();
                if !words.contains(&w) {
                    words.push(w);
                }
            }
            let mut tokens: Vec<Option<&[u8]>> = words.iter().map(|w| Some(w.as_slice())).collect();
            tokens.insert(next(tokens.len() as u64) as usize, None); // a special token's id
            let mut fast = tiktoken_pairs(&tokens);
            let mut slow = by_hashing(&tokens);
            fast.sort_unstable();
            slow.sort_unstable();
            assert_eq!(fast, slow, "{words:?}");
        }
    }

    #[test]
    fn a_token_of_megabytes_is_split_in_linear_time() {
        // "a" × 2^k for k = 0..=22 (4 MB): every power-of-two split of each is a pair. Hashing every split
        // was ~8·10¹² hashed bytes here; this finishes in a fraction of a second even in a debug build.
        let words: Vec<Vec<u8>> = (0..=22).map(|k| vec![b'a'; 1 << k]).collect();
        let mut tokens: Vec<Option<&[u8]>> = words.iter().map(|w| Some(w.as_slice())).collect();
        let long = [b"ab".repeat(1 << 20), b"b".to_vec()].concat();
        tokens.push(Some(&long));
        tokens.push(Some(b"b"));
        let started = std::time::Instant::now();
        let pairs = tiktoken_pairs(&tokens);
        assert!(started.elapsed().as_secs_f64() < 20.0, "{:?}", started.elapsed());
        // a^(2^k) splits into a^j + a^(2^k - j) where both are powers of two: only j = 2^(k-1).
        let mut expected: Vec<(u32, u32, u32, u32)> = (1..=22u32).map(|k| (k - 1, k - 1, k, k)).collect();
        expected.sort_unstable();
        let mut got = pairs;
        got.sort_unstable();
        assert_eq!(got, expected);
    }
}
