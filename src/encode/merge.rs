//! The merge algorithms: BPE over the units of a piece by pair rank, for pieces that are not whole tokens and
//! that the backtracker does not take (and to find the merges of tiktoken vocabularies); and the general
//! path's rule, which `encode::apply_merges` applies too.
//!
//! Performance notes:
//! - The units are merged by pair rank: a linear scan for short pieces (a few dozen symbols: the scan is
//!   cheaper than any heap), a heap over a linked list for long ones (O(n log n): "a" × 10⁷ or a chromosome
//!   stays fast), buckets by rank for the longest (`merge_in_place`).
//! - Under tiktoken's rule a short ASCII piece merges through the whole-token table instead, a pair's rank being
//!   the id of the token its bytes make (`merge_short_by_tokens`; why, in `piece.rs`).
//! - Pair ranks are looked up by token ids (`(left << 32) | right` → rank and result), never by hashing
//!   bytes in the loop.
//! - Character-level vocabularies keep the general path's rule — the lowest-ranked pair merges *at every
//!   occurrence*, left to right, before the next rank is looked at — which can differ from the heap's order
//!   only when a merge recreates an existing token. A chromosome is one piece: the bucket merge keeps it linear.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::caches::Scratch;
use super::piece::{NONE, PieceEncoder, PieceError, reserve_for_piece};

/// Marks the last position of a symbol longer than one unit in `merge_in_place`'s layout.
pub(super) const END: u32 = 1 << 31;
/// Pieces with more symbols than this merge with the heap.
const LINEAR_LIMIT: usize = 48;
/// Pieces with more symbols than this merge with buckets by rank (a heap of millions of entries is
/// bound by cache misses: "a" × 10⁷ took 4 s).
const HEAP_LIMIT: usize = 4096;

/// How many positions ahead the bucket merge prefetches (a chromosome's symbols are far beyond the caches).
const PREFETCH_DISTANCE: usize = 16;

/// A symbol of `merge_heap`'s doubly linked list (NONE: no neighbour; a merged-away symbol's id is NONE).
#[derive(Clone, Copy)]
pub(super) struct Symbol {
    id: u32,
    prev: u32,
    next: u32,
}

/// The general path's rule on `ids[start..]`: the lowest rank present merges at all its occurrences, left to
/// right; repeat. `rank_of(left, right)` gives a pair's rank and result, `(NONE, NONE)` if it does not merge.
/// (The fast encoder's rule for short pieces in character mode, and `encode::apply_merges`.)
#[inline]
pub(super) fn merge_all_occurrences(ids: &mut Vec<u32>, start: usize, rank_of: impl Fn(u32, u32) -> (u32, u32)) {
    loop {
        let mut best: (u32, u32, u32, u32) = (NONE, NONE, NONE, NONE); // (rank, left, right, result)
        for w in ids[start..].windows(2) {
            let (rank, result) = rank_of(w[0], w[1]);
            if rank < best.0 {
                best = (rank, w[0], w[1], result);
            }
        }
        let (rank, left, right, result) = best;
        if rank == NONE {
            return;
        }
        let (mut read, mut write) = (start, start);
        while read < ids.len() {
            if read + 1 < ids.len() && ids[read] == left && ids[read + 1] == right {
                ids[write] = result;
                read += 2;
            } else {
                ids[write] = ids[read];
                read += 1;
            }
            write += 1;
        }
        ids.truncate(write);
    }
}

impl PieceEncoder {
    /// Rank and result of a pair; NONE if it does not merge or ranks at or above `limit`.
    #[inline]
    pub(super) fn rank(&self, left: u32, right: u32, limit: u32) -> (u32, u32) {
        let v = self.pair_value(left, right);
        match (v >> 32) as u32 {
            rank if rank < limit => (rank, v as u32),
            _ => (NONE, NONE),
        }
    }

    /// BPE over the bytes of a piece by merging: a linear scan, a heap, or buckets, by length.
    pub(super) fn merge_by_rank(
        &self,
        piece: &[u8],
        limit: u32,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), PieceError> {
        let start = out.len();
        reserve_for_piece(out, piece.len())?;
        self.push_units(piece, out)?;
        let n = out.len() - start;
        if n <= LINEAR_LIMIT {
            if self.all_occurrences {
                merge_all_occurrences(out, start, |left, right| self.rank(left, right, limit));
            } else {
                self.merge_linear(out, start, limit);
            }
        } else if n <= HEAP_LIMIT {
            self.merge_heap(out, start, limit, scratch);
        } else if self.in_place {
            self.merge_in_place(out, start, limit)?;
        } else {
            // The heap's room, had here (or refused) rather than grown while merging.
            reserve_for_piece(&mut scratch.symbols, n)?;
            scratch.heap.try_reserve(n).map_err(|_| PieceError::OutOfMemory(n.saturating_mul(8)))?;
            self.merge_heap(out, start, limit, scratch);
        }
        Ok(())
    }

    /// BPE of a piece of 2 to 16 bytes under tiktoken's rule, with the whole-token table as the only table:
    /// under that rule two adjacent parts merge when their bytes together are a token, at that token's id, so
    /// a pair's rank is the lookup of the bytes it spans (as tiktoken finds it). The whole-token table is the one
    /// every piece probes, warm in cache, where the pair table and the backtracker's trie are large and cold for
    /// a word the thread has not met (see the notes in `piece.rs`). Leftmost lowest rank first, as tiktoken.
    /// False (nothing appended) when a byte has no token: the caller's other paths then deal with it.
    ///
    /// ```text
    /// r50k: " unpacked" (no token) → [8593 " unp", 6021 "acked"], as tiktoken gives it
    /// ```
    pub(super) fn merge_short_by_tokens(&self, piece: &[u8], out: &mut Vec<u32>) -> bool {
        self.merge_by_tokens::<16>(piece, out)
    }

    /// `merge_short_by_tokens` for a piece of up to `N` bytes (at most 255): its spans of more than 16 bytes are
    /// looked up among the long tokens, and above 16 bytes no span's slot is fetched ahead.
    #[inline(always)]
    pub(super) fn merge_by_tokens<const N: usize>(&self, piece: &[u8], out: &mut Vec<u32>) -> bool {
        debug_assert!((2..=N).contains(&piece.len()) && N <= 255 && self.tokens_rank_pairs());
        let super::piece::Units::Bytes(byte_ids) = &self.units else { return false };
        let n = piece.len();
        // By byte position: a part starts at p when p is 0 or `next` of the part before; it spans p..next[p], its
        // token is ids[p], and ranks[p] is the rank (= id) of joining it to the part after it — NONE if there
        // is none, or p starts no part. Nothing moves as parts join: moving the arrays down was a `memmove`
        // call each time, and this way the merge takes 17% fewer instructions (callgrind, fresh English, r50k).
        let mut next = [0u8; N];
        let mut prev = [0u8; N];
        let mut ids = [NONE; N];
        let mut ranks = [NONE; N];
        for (i, &b) in piece.iter().enumerate() {
            ids[i] = byte_ids[b as usize];
            if ids[i] == NONE {
                return false;
            }
            next[i] = i as u8 + 1;
            prev[i] = (i as u8).wrapping_sub(1);
        }
        // The slots of its short spans, fetched at once: the steps below look spans up one after another.
        if piece.len() <= 16 {
            self.fetch_spans_ahead(piece);
        }
        let token = |from: u8, to: u8| {
            let span = &piece[from as usize..to as usize];
            // (`token_of` asks the length itself: only the longer merge needs that branch.)
            if N <= 16 { self.whole_token(span) } else { self.token_of(span) }
        };
        // Pairs of bytes from the dense table of byte pairs (a rank is the id of the token they make): for
        // random pairs, a probe of the whole-token table was a miss in a table of up to 4 MB.
        for (i, rank) in ranks.iter_mut().enumerate().take(n - 1) {
            *rank = (self.pair_value(ids[i], ids[i + 1]) >> 32) as u32;
        }
        let n = n as u8;
        loop {
            let mut p = 0;
            for i in 1..n as usize - 1 {
                if ranks[i] < ranks[p] {
                    p = i;
                }
            }
            let best = ranks[p];
            if best == NONE {
                break;
            }
            let p = p as u8;
            // The part at p takes in the one after it.
            let q = next[p as usize];
            let after = next[q as usize];
            ids[p as usize] = best;
            ranks[q as usize] = NONE;
            next[p as usize] = after;
            ranks[p as usize] = if after < n {
                prev[after as usize] = p;
                token(p, next[after as usize])
            } else {
                NONE
            };
            if p > 0 {
                let before = prev[p as usize];
                ranks[before as usize] = token(before, after);
            }
        }
        let mut p = 0;
        while p < n {
            out.push(ids[p as usize]);
            p = next[p as usize];
        }
        true
    }

    /// Repeatedly merges the lowest-ranked pair (leftmost among equals) of `ids[start..]`.
    fn merge_linear(&self, ids: &mut Vec<u32>, start: usize, limit: u32) {
        // ranks[i]: rank and result of (ids[start + i], ids[start + i + 1]).
        let mut ranks: [(u32, u32); LINEAR_LIMIT] = [(NONE, NONE); LINEAR_LIMIT];
        let mut n = ids.len() - start;
        for i in 0..n.saturating_sub(1) {
            ranks[i] = self.rank(ids[start + i], ids[start + i + 1], limit);
        }
        while n > 1 {
            let mut best = 0;
            for i in 1..n - 1 {
                if ranks[i].0 < ranks[best].0 {
                    best = i;
                }
            }
            let (rank, result) = ranks[best];
            if rank == NONE {
                break;
            }
            ids[start + best] = result;
            ids.remove(start + best + 1);
            ranks.copy_within(best + 1..n - 1, best);
            n -= 1;
            if best > 0 {
                ranks[best - 1] = self.rank(ids[start + best - 1], result, limit);
            }
            if best + 1 < n {
                ranks[best] = self.rank(result, ids[start + best + 1], limit);
            } else {
                ranks[best] = (NONE, NONE);
            }
        }
    }

    /// BPE over a long piece in linear time, on the ids themselves: one bucket of start positions per rank,
    /// taken lowest rank first and sorted when its turn comes (the heap's order: lowest rank, leftmost first).
    ///
    /// Layout (4 bytes per symbol, not the linked list's 12: a 10 MB piece or a chromosome is far beyond the
    /// caches, and the page faults of fresh memory were a third of the time): a symbol covering positions
    /// `s..=e` has its id at `s`, its id with `END` set at `e` when longer than one unit, and `NONE` inside.
    /// The symbol after the one at `p` starts at `p + len(id)`; the one before ends at `p - 1`.
    ///
    /// A merge can make a pair of lower rank than the one being merged (tiktoken vocabularies allow it); then
    /// the rest of the bucket waits and the lower rank goes first, as the heap would do it — except under the
    /// character rule (`all_occurrences`), where a rank finishes first.
    fn merge_in_place(&self, ids: &mut Vec<u32>, start: usize, limit: u32) -> Result<(), PieceError> {
        let sym = &mut ids[start..];
        let n = sym.len();
        let len = |id: u32| self.symbol_len.get(id as usize).copied().unwrap_or(1) as usize;
        // The initial pairs, counted first so that each bucket is allocated once, at its size (growing them
        // by doubling cost a sixth of encoding a chromosome in page faults and copies). Their ranks are looked
        // up again below rather than kept (4 more bytes per symbol; a pair of bytes is a table read).
        let mut sizes: Vec<u32> = Vec::new();
        for w in sym.windows(2) {
            let (rank, _) = self.rank(w[0], w[1], limit);
            if rank != NONE {
                if sizes.len() <= rank as usize {
                    sizes.resize(rank as usize + 1, 0);
                }
                sizes[rank as usize] += 1;
            }
        }
        let mut buckets: Vec<Vec<u32>> = Vec::new();
        reserve_for_piece(&mut buckets, sizes.len())?;
        for &size in &sizes {
            let mut bucket = Vec::new();
            reserve_for_piece(&mut bucket, size as usize)?;
            buckets.push(bucket);
        }
        drop(sizes);
        let mut ranks: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
        /// Queues the pair starting at `pos` under `rank`.
        #[inline(always)]
        fn add(buckets: &mut Vec<Vec<u32>>, ranks: &mut BinaryHeap<Reverse<u32>>, rank: u32, pos: usize) {
            if buckets.len() <= rank as usize {
                buckets.resize_with(rank as usize + 1, Vec::new);
            }
            let bucket = &mut buckets[rank as usize];
            if bucket.is_empty() {
                ranks.push(Reverse(rank));
            }
            bucket.push(pos as u32);
        }
        for (i, w) in sym.windows(2).enumerate() {
            let (rank, _) = self.rank(w[0], w[1], limit);
            if rank != NONE {
                add(&mut buckets, &mut ranks, rank, i);
            }
        }
        while let Some(Reverse(rank)) = ranks.pop() {
            let mut positions = std::mem::take(&mut buckets[rank as usize]);
            if positions.is_empty() {
                continue;
            }
            positions.sort_unstable();
            positions.dedup();
            let mut done = 0;
            let mut interrupted = false;
            // The right pair of the last merge (rank, position), held back while the symbol after it is the
            // next position of this bucket: if that one merges, its left pair supersedes the held one, which
            // would only go stale (in a run like "aaaa…" that was half of all queued pairs).
            let mut held: Option<(u32, usize)> = None;
            while done < positions.len() && !interrupted {
                if let Some(&ahead) = positions.get(done + PREFETCH_DISTANCE) {
                    crate::prefetch(&sym[ahead as usize]);
                }
                let p = positions[done] as usize;
                done += 1;
                // Still the start of a symbol, followed by one that makes a pair of this rank? (A recorded
                // start can since only have become the inside of a longer symbol (NONE), its end (END set), or
                // the start of a longer symbol — whose pair the rank check then judges.)
                let a = sym[p];
                let q = p + len(a & !END);
                let (live, x) = if a & END == 0 && q < n { self.rank(a, sym[q], limit) } else { (NONE, NONE) };
                if live != rank {
                    if let Some((r, at)) = held.take() {
                        add(&mut buckets, &mut ranks, r, at);
                    }
                    continue;
                }
                held = None; // superseded by this merge's left pair
                let end = q + len(sym[q]) - 1;
                sym[p] = x;
                sym[end] = x | END;
                if q - 1 != p {
                    sym[q - 1] = NONE;
                }
                if q != end {
                    sym[q] = NONE;
                }
                // Queued positions inside the new symbol are stale now: pass them (which also lets the right
                // pair below be held when the next symbol is queued, as in a run of one letter).
                while positions.get(done).is_some_and(|&next| next as usize <= end) {
                    done += 1;
                }
                if end + 1 < n {
                    let (r, _) = self.rank(x, sym[end + 1], limit);
                    if r != NONE {
                        if r > rank && positions.get(done) == Some(&((end + 1) as u32)) {
                            held = Some((r, p));
                        } else {
                            add(&mut buckets, &mut ranks, r, p);
                            interrupted |= r < rank && !self.all_occurrences;
                        }
                    }
                }
                if p > 0 {
                    let before = sym[p - 1] & !END;
                    let left = p - len(before);
                    let (r, _) = self.rank(before, x, limit);
                    if r != NONE {
                        add(&mut buckets, &mut ranks, r, left);
                        interrupted |= r < rank && !self.all_occurrences;
                    }
                }
            }
            if let Some((r, at)) = held {
                add(&mut buckets, &mut ranks, r, at);
            }
            if done < positions.len() {
                // A lower rank appeared: it goes first; the rest of this bucket waits its turn again.
                let bucket = &mut buckets[rank as usize];
                if bucket.is_empty() {
                    ranks.push(Reverse(rank));
                }
                bucket.extend_from_slice(&positions[done..]);
            }
        }
        // The symbols, left to right.
        let mut write = start;
        let mut p = 0;
        while p < n {
            let id = ids[start + p];
            ids[write] = id;
            write += 1;
            p += len(id);
        }
        ids.truncate(write);
        Ok(())
    }

    /// Merges the pair at `pos` if it is still there with this rank (entries go stale: the symbol was merged
    /// away, or its pair changed since it was queued). Returns the two new pairs (rank, position; NONE rank
    /// when there is none), or None if the entry was stale.
    #[inline]
    fn merge_at(&self, symbols: &mut [Symbol], pos: u32, rank: u32, limit: u32) -> Option<[(u32, u32); 2]> {
        let left = symbols[pos as usize];
        if left.id == NONE || left.next == NONE {
            return None;
        }
        let right = symbols[left.next as usize];
        let (live_rank, result) = self.rank(left.id, right.id, limit);
        if live_rank != rank {
            return None;
        }
        symbols[pos as usize].id = result;
        symbols[pos as usize].next = right.next;
        symbols[left.next as usize].id = NONE;
        let mut new_pairs = [(NONE, NONE); 2];
        if right.next != NONE {
            symbols[right.next as usize].prev = pos;
            new_pairs[0] = (self.rank(result, symbols[right.next as usize].id, limit).0, pos);
        }
        if left.prev != NONE {
            new_pairs[1] = (self.rank(symbols[left.prev as usize].id, result, limit).0, left.prev);
        }
        Some(new_pairs)
    }

    /// The same, in O(n log n): a heap of (rank, position) over a linked list of symbols. With
    /// `all_occurrences`, pairs made while a rank is merged wait until that rank is done.
    fn merge_heap(&self, ids: &mut Vec<u32>, start: usize, limit: u32, scratch: &mut Scratch) {
        let n = ids.len() - start;
        let Scratch { symbols, heap, pending, .. } = scratch;
        link(symbols, &ids[start..]);
        heap.clear();
        pending.clear();
        for i in 0..n - 1 {
            let (rank, _) = self.rank(symbols[i].id, symbols[i + 1].id, limit);
            if rank != NONE {
                heap.push(Reverse((rank, i as u32)));
            }
        }
        let mut current = NONE;
        loop {
            if !pending.is_empty() && !matches!(heap.peek(), Some(Reverse((r, _))) if *r == current) {
                heap.extend(pending.drain(..)); // rank `current` is done
            }
            let Some(Reverse((rank, pos))) = heap.pop() else { break };
            current = rank;
            let Some(new_pairs) = self.merge_at(symbols, pos, rank, limit) else { continue };
            for (r, p) in new_pairs {
                if r != NONE {
                    if self.all_occurrences {
                        pending.push(Reverse((r, p)));
                    } else {
                        heap.push(Reverse((r, p)));
                    }
                }
            }
        }
        unlink(symbols, ids, start);
    }
}

/// Lays `ids` out as a doubly linked list of symbols.
fn link(symbols: &mut Vec<Symbol>, ids: &[u32]) {
    let n = ids.len();
    symbols.clear();
    symbols.extend(ids.iter().enumerate().map(|(i, &id)| Symbol {
        id,
        prev: if i == 0 { NONE } else { i as u32 - 1 },
        next: if i + 1 == n { NONE } else { i as u32 + 1 },
    }));
}

/// Writes the symbols left after merging back into `ids[start..]`.
fn unlink(symbols: &[Symbol], ids: &mut Vec<u32>, start: usize) {
    ids.truncate(start);
    let mut i = 0u32;
    while i != NONE {
        ids.push(symbols[i as usize].id);
        i = symbols[i as usize].next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::piece::Units;
    use crate::encode::piece::tests::{encode, encoder, tiktoken_style_encoder};

    #[test]
    fn merges_by_rank_and_leftmost_first() {
        let e = encoder();
        assert_eq!(encode(&e, b"abab"), [3]);
        assert_eq!(encode(&e, b"aaa"), [4, 0]);
        assert_eq!(encode(&e, b"aab"), [0, 2]); // (a,b) outranks (a,a)
    }

    #[test]
    fn long_pieces_give_the_same_ids_as_short_ones() {
        let mut x: u64 = 7;
        for (e, alphabet) in
            [(encoder(), &b"ab"[..]), (tiktoken_style_encoder(), b"abc"), (tiktoken_style_encoder(), b"ab")]
        {
            assert!(e.in_place);
            for len in [2usize, 3, 49, 50, 100, 1000, 5000, 20_000] {
                for weight in [2u64, 3, 7] {
                    let piece: Vec<u8> = (0..len)
                        .map(|_| {
                            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                            // Runs of the first letter are common: they make the long chains of merges.
                            let r = x >> 33;
                            if !r.is_multiple_of(weight) {
                                alphabet[0]
                            } else {
                                alphabet[(r / weight) as usize % alphabet.len()]
                            }
                        })
                        .collect();
                    let mut by_heap = Vec::new();
                    e.merge_heap_for_test(&piece, &mut by_heap);
                    let mut in_place: Vec<u32> = piece.iter().map(|&b| e.units.single(b)).collect();
                    e.merge_in_place(&mut in_place, 0, NONE).unwrap();
                    assert_eq!(in_place, by_heap, "length {len}");
                    let mut linear: Vec<u32> = piece.iter().map(|&b| e.units.single(b)).collect();
                    e.merge_linear_unbounded(&mut linear);
                    assert_eq!(by_heap, linear, "length {len}");
                    // After other ids (`start` > 0), as when a text has several pieces.
                    let mut after: Vec<u32> = vec![1, 0];
                    after.extend(piece.iter().map(|&b| e.units.single(b)));
                    e.merge_in_place(&mut after, 2, NONE).unwrap();
                    assert_eq!(after[2..], by_heap[..]);
                }
            }
        }
    }

    /// Random tiktoken-style vocabularies over a, b, c (random strings, random ranks, so merges often make
    /// pairs ranked below their own) on random texts: the in-place merge equals the textbook loop.
    #[test]
    fn in_place_merge_equals_the_textbook_on_random_vocabularies() {
        let mut x: u64 = 11;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..400 {
            let mut words: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
            while words.len() < 3 + 4 + next(60) as usize {
                let w: Vec<u8> = (0..2 + next(4))
                    .map(|_| {
                        let spread = if next(3) == 0 { 3 } else { 1 };
                        b"abc"[next(spread) as usize]
                    })
                    .collect();
                if !words.contains(&w) {
                    words.push(w);
                }
            }
            let mut byte_ids = [NONE; 256];
            for (id, w) in words.iter().enumerate().take(3) {
                byte_ids[w[0] as usize] = id as u32;
            }
            let mut pairs = Vec::new();
            for (id, w) in words.iter().enumerate() {
                for k in 1..w.len() {
                    let left = words.iter().position(|t| *t == w[..k]);
                    let right = words.iter().position(|t| *t == w[k..]);
                    if let (Some(l), Some(r)) = (left, right) {
                        pairs.push((l as u32, r as u32, id as u32, id as u32));
                    }
                }
            }
            let tokens: Vec<Option<&[u8]>> = words.iter().map(|w| Some(w.as_slice())).collect();
            let e = PieceEncoder::new(Units::Bytes(byte_ids), pairs, &tokens, None, true, false);
            for len in [60usize, 300, 3000] {
                let piece: Vec<u8> = (0..len)
                    .map(|_| {
                        let spread = if next(4) == 0 { 3 } else { 1 };
                        b"abc"[next(spread) as usize]
                    })
                    .collect();
                let mut textbook: Vec<u32> = piece.iter().map(|&b| e.units.single(b)).collect();
                e.merge_linear_unbounded(&mut textbook);
                let mut in_place: Vec<u32> = piece.iter().map(|&b| e.units.single(b)).collect();
                e.merge_in_place(&mut in_place, 0, NONE).unwrap();
                assert_eq!(in_place, textbook, "vocabulary {words:?}, text {:?}", String::from_utf8_lossy(&piece));
            }
        }
    }

    #[test]
    fn merges_that_do_not_add_up_leave_long_pieces_to_the_heap() {
        // A merge whose result is not as long as its parts (a hand-edited vocabulary): no in-place layout.
        let mut byte_ids = [NONE; 256];
        byte_ids[b'a' as usize] = 0;
        byte_ids[b'b' as usize] = 1;
        let tokens: Vec<Option<&[u8]>> = vec![Some(b"a"), Some(b"b"), Some(b"abc")];
        let e = PieceEncoder::new(Units::Bytes(byte_ids), [(0, 1, 0, 2)], &tokens, None, false, false);
        assert!(!e.in_place);
        let piece = b"ab".repeat(5000);
        assert_eq!(encode(&e, &piece), vec![2; 5000]);
    }

    impl PieceEncoder {
        pub(crate) fn merge_heap_for_test(&self, piece: &[u8], out: &mut Vec<u32>) {
            out.extend(piece.iter().map(|&b| self.units.single(b)));
            self.merge_heap(out, 0, NONE, &mut Scratch::default());
        }

        /// The textbook loop without the length limit of `merge_linear`'s stack buffer.
        fn merge_linear_unbounded(&self, ids: &mut Vec<u32>) {
            loop {
                let mut best: Option<(u32, usize, u32)> = None;
                for i in 0..ids.len().saturating_sub(1) {
                    let (rank, result) = self.rank(ids[i], ids[i + 1], NONE);
                    if rank != NONE && best.is_none_or(|(r, ..)| rank < r) {
                        best = Some((rank, i, result));
                    }
                }
                let Some((_, i, result)) = best else { return };
                ids[i] = result;
                ids.remove(i + 1);
            }
        }
    }
}
