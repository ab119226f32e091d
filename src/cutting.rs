//! Where a document read in blocks may be cut, so that encoding the parts one by one gives exactly the ids of
//! encoding it whole, in memory bounded by a fixed figure whatever the text (`bytepair encode` on files).
//!
//! Three kinds of cut, tried in this order:
//! 1. *Simple cuts* for the built-in patterns: before a space that follows a non-space, before a line break
//!    that follows a letter or digit, after a line break between a non-space and a letter or digit. No piece of
//!    these patterns runs across such a place, and matching only looks ahead, so the parts split as the whole
//!    does. Found by a scan back from the end of the buffered text: on ordinary text, a few bytes.
//! 2. *Settled pieces*, when the buffered text has no simple cut and has grown past `fallback_from` bytes (a
//!    megabyte of minified JSON, digits, punctuation, or text after a special token): the text is split by the
//!    tokenizer's own pre-tokenizer, and a piece is settled when no text that may follow can change it. The
//!    built-in patterns look at most a few characters past the end of a match, except over whitespace: a match
//!    that starts in a run of whitespace looks at the whole run (cl100k's `\s*[\r\n]+` takes it up to its last
//!    line break). So a piece is settled when it ends `MARGIN` bytes before the end of the buffered text and
//!    does not start in its trailing run of whitespace. After a special token (when special tokens split the
//!    text: allowed, or an error) the text is cut too.
//! 3. *Inside one long piece* (random letters are one GPT-2 piece; so is a whole document without a
//!    pre-tokenizer): by the lemma in `encode/backtrack.rs` (a token sequence is the BPE encoding exactly when
//!    each token is what BPE makes of its own bytes and every two neighbours are what BPE makes of their
//!    concatenation), encoding the piece's first part and the rest apart gives the piece's ids when the pair
//!    of tokens across the cut is such a pair. The first `g` bytes the piece certainly holds are encoded; the
//!    cut goes at a token boundary `window` bytes before `g`, so that the encoding of the text up to it is
//!    settled by the `window` bytes that follow; and the pair across it is checked when the text after it is
//!    encoded (`CutState::left_token`). A vocabulary whose encoding of a piece depended on text more than
//!    `window` bytes away would fail that check: then an error is raised, never other ids. (No vocabulary we
//!    know comes near: the OpenAI ones and trained ones settle within a few tokens.)
//!
//! Where none applies (a custom regex, word markers, the lowercase normaliser for long pieces), nothing is
//! cut and the document is read whole: exact, not bounded.

use crate::encode::caches::Scratch;
use crate::encode::piece::{PieceEncoder, PieceError};
use crate::error::{Error, Result, py_repr};
use crate::pretokenize::{Pattern, char_classes};
use crate::tokenizer::Tokenizer;

/// Bytes past the end of a match that the built-in patterns may look at (contractions: 3), with room to spare.
pub const MARGIN: usize = 16;

/// Sizes that bound the memory; the defaults are what `bytepair encode` uses, tests make them small.
#[derive(Clone, Copy, Debug)]
pub struct CutSizes {
    /// Buffered text without a simple cut is analysed (settled pieces, long pieces) from this many bytes on.
    pub fallback_from: usize,
    /// A cut inside a long piece stays this many bytes before the end of what the piece is known to hold.
    pub window: usize,
}

impl Default for CutSizes {
    fn default() -> CutSizes {
        CutSizes { fallback_from: 4 << 20, window: 256 << 10 }
    }
}

/// A document's cutting, across calls: what was cut last.
#[derive(Clone, Debug, Default)]
pub struct CutState {
    /// When the last cut was inside a piece: the last token before it, whose pair with the first token after it
    /// is checked when the text after it is encoded.
    pub left_token: Option<u32>,
    /// Bytes at the start of the buffered text already searched for simple cuts.
    scanned: usize,
}

/// Cuts one document. `specials_split`: special tokens in the text are tokens (allowed) or errors, so that
/// text on the two sides of one is encoded apart; false when they are encoded as ordinary text.
pub struct Cutter {
    specials_split: bool,
    sizes: CutSizes,
    /// Longest token, in bytes (a cut inside a piece keeps both parts longer than any token, so that neither
    /// is looked up whole).
    longest_token: usize,
    longest_special: usize,
}

impl Cutter {
    /// The cutter of `tok`'s documents (which its methods are then given).
    pub fn new(tok: &Tokenizer, specials_split: bool, sizes: CutSizes) -> Cutter {
        let longest_token = tok.vocab.tokens.iter().map(|t| t.bytes.len()).max().unwrap_or(0);
        let longest_special = tok.specials.tokens().iter().map(String::len).max().unwrap_or(0);
        // Both parts of a cut inside a piece longer than any token; the window at least that.
        let window = sizes.window.max(2 * longest_token + MARGIN);
        Cutter { specials_split, sizes: CutSizes { window, ..sizes }, longest_token, longest_special }
    }

    /// Whether this tokenizer's documents can be cut at all (else each is read whole).
    pub fn can_cut(tok: &Tokenizer) -> bool {
        matches!(
            tok.pretokenizer.pattern,
            Pattern::Gpt2 | Pattern::Cl100k | Pattern::O200k | Pattern::Whitespace | Pattern::None
        )
    }

    /// Where `text` (the document's text not handed out yet) may be cut now, in bytes; 0 when not yet (more
    /// text is needed). `text` starts where the previous cut was.
    pub fn cut(&self, tok: &Tokenizer, state: &mut CutState, text: &str) -> Result<usize> {
        if !Self::can_cut(tok) {
            return Ok(0);
        }
        let simple_ok = state.left_token.is_none() && Self::simple_cuts_hold(tok, self.specials_split);
        if simple_ok && let Some(at) = last_simple_cut(text, state.scanned.saturating_sub(8)) {
            state.scanned = text.len() - at;
            return Ok(at);
        }
        state.scanned = text.len();
        // (Also after a cut inside a long piece: the next one comes `fallback_from` bytes on, so that the
        // `window` bytes encoded twice are a small part of it.)
        if text.len() < self.sizes.fallback_from {
            return Ok(0);
        }
        let at = self.settled_or_inside(tok, state, text)?;
        if at > 0 {
            state.scanned = state.scanned.saturating_sub(at);
        }
        Ok(at)
    }

    /// The last simple cut (the first kind only, see the module's notes) of `text` at or after byte `floor`, when
    /// `tok`'s pattern and special tokens allow such cuts (`specials_split` as for `new`); else None. Nothing is
    /// encoded twice and no state is kept: for a text handed over in windows (`Tokenizer::encode_windows`). With
    /// GPT-2's pattern, "hello world" is cut at 5, before " world".
    pub fn simple_cut(tok: &Tokenizer, specials_split: bool, text: &str, floor: usize) -> Option<usize> {
        if !Self::can_cut(tok) || !Self::simple_cuts_hold(tok, specials_split) {
            return None;
        }
        last_simple_cut(text, floor)
    }

    /// Whether simple cuts hold for `tok`: a pattern that splits (not `None`), and no special token that could
    /// straddle one (one with whitespace in it, when specials split the text).
    fn simple_cuts_hold(tok: &Tokenizer, specials_split: bool) -> bool {
        tok.pretokenizer.pattern != Pattern::None
            && !(specials_split && tok.specials.tokens().iter().any(|s| s.chars().any(char::is_whitespace)))
    }

    /// The end of the document: the pair across the last cut inside a piece is checked.
    pub fn finish(&self, tok: &Tokenizer, state: &mut CutState, text: &str) -> Result<()> {
        if let Some(left) = state.left_token.take() {
            let first = Self::first_piece(tok, text, text.len())?.map_or(0, |(_, end)| end);
            self.check_junction(tok, left, &text[..first])?;
        }
        Ok(())
    }

    /// Cuts of kinds 2 and 3 (see the module's notes).
    fn settled_or_inside(&self, tok: &Tokenizer, state: &mut CutState, text: &str) -> Result<usize> {
        let mut end = text.len();
        // Whether the text being analysed really ends at `end` (a special token follows): then its last piece
        // is settled too.
        let mut segment_ends = false;
        if self.specials_split && self.longest_special > 0 {
            // After the last special token that no longer one could overlap: the text on its two sides is
            // encoded apart. (One may straddle the end of the buffered text: the text before it waits.)
            let settled = text.len().saturating_sub(self.longest_special);
            let (mut at, mut first_start, mut after_last) = (0, None, 0);
            while let Some((i, start)) = tok.specials.find_first(&text[at..]).map(|(i, s)| (i, at + s)) {
                let stop = start + tok.specials.tokens()[i].len();
                if stop > settled {
                    break;
                }
                first_start.get_or_insert(start);
                (at, after_last) = (stop, stop);
            }
            if after_last > 0 && state.left_token.is_none() {
                return Ok(after_last);
            }
            // The piece being cut ends at the first special token, at the latest.
            (end, segment_ends) = match first_start {
                Some(start) => (start, true),
                None => (floor_char_boundary(text, settled + 1), false),
            };
        }
        if tok.lowercase {
            return Ok(0); // pieces are found in the lowercased text: not cut (read whole)
        }
        let Some(Pieces { first_start, first_end, settled_end }) = self.pieces_settled(tok, text, end, segment_ends)?
        else {
            return Ok(0);
        };
        if let Some(left) = state.left_token {
            // The text starts inside a piece: its first piece is that piece's rest.
            if settled_end >= first_end && Self::first_piece(tok, text, first_end)? == Some((0, first_end)) {
                self.check_junction(tok, left, &text[..first_end])?;
                state.left_token = None;
                return Ok(first_end);
            }
        } else if settled_end > 0 {
            return Ok(settled_end);
        } else if first_start > 0 {
            return Ok(first_start); // whitespace that the pattern drops, before a long piece
        }
        self.inside_piece(tok, state, text, first_end.min(end))
    }

    /// The first piece of `text[..end]` and the end of its last settled piece (0: none), or None when it has
    /// no piece.
    ///
    /// A settled piece can still split otherwise when the text is cut right after it: a run of whitespace
    /// before a letter gives its last space to the next piece (`\s+(?!\S)`), and cut there it keeps it. So a
    /// cut is also checked: the text before it, split alone, must give the same pieces (the last few settled
    /// ends are tried).
    /// `segment_ends`: the text ends at `end` whatever follows (a special token is there).
    fn pieces_settled(&self, tok: &Tokenizer, text: &str, end: usize, segment_ends: bool) -> Result<Option<Pieces>> {
        let text = &text[..end];
        // Where the trailing run of whitespace starts: a piece starting there may take all of it.
        let trailing = if segment_ends { end } else { text.trim_end_matches(|c: char| char_classes(c).0).len() };
        let margin = if segment_ends { 0 } else { MARGIN };
        let pieces = Self::split_spans(tok, text)?;
        let Some(&(first_start, first_end)) = pieces.first() else { return Ok(None) };
        let settled =
            pieces.iter().rposition(|&(start, stop)| stop + margin <= end && (start < trailing || segment_ends));
        let mut settled_end = 0;
        for k in settled.map_or(0..0, |k| k.saturating_sub(3)..k + 1).rev() {
            let cut = pieces[k].1;
            if Self::split_spans(tok, &text[..cut])? == pieces[..=k] {
                settled_end = cut;
                break;
            }
        }
        Ok(Some(Pieces { first_start, first_end, settled_end }))
    }

    /// The pieces of `text`, as (start, end).
    fn split_spans(tok: &Tokenizer, text: &str) -> Result<Vec<(usize, usize)>> {
        let base = text.as_ptr() as usize;
        let mut spans = Vec::new();
        tok.pretokenizer.split(text, |piece| {
            let start = piece.as_ptr() as usize - base;
            spans.push((start, start + piece.len()));
        })?;
        Ok(spans)
    }

    /// The first piece of `text[..end]`: (start, end), or None.
    fn first_piece(tok: &Tokenizer, text: &str, end: usize) -> Result<Option<(usize, usize)>> {
        let mut first = None;
        let base = text.as_ptr() as usize;
        tok.pretokenizer.split(&text[..end], |piece| {
            if first.is_none() {
                let start = piece.as_ptr() as usize - base;
                first = Some((start, start + piece.len()));
            }
        })?;
        Ok(first)
    }

    /// A cut inside the piece that starts `text` and holds at least its first `known` bytes (kind 3), or 0.
    fn inside_piece(&self, tok: &Tokenizer, state: &mut CutState, text: &str, known: usize) -> Result<usize> {
        let Some(encoder) = Self::encoder(tok) else { return Ok(0) };
        // Its end may still move back a character (`\s+(?!\S)` gives the last space to the next piece).
        let holds = known.saturating_sub(MARGIN);
        if holds < self.sizes.window + self.longest_token + 1 {
            return Ok(0);
        }
        let part = floor_char_boundary(text, holds);
        let mut ids = Vec::new();
        let mut scratch = Scratch::default();
        encoder.begin(&mut scratch);
        match encoder.encode_pure(&text.as_bytes()[..part], &mut scratch, &mut ids) {
            Ok(()) => {}
            // Encoding that text will report the byte, with its place in the file.
            Err(PieceError::UnknownByte(_)) => return Ok(0),
            Err(PieceError::OutOfMemory(bytes)) => return Err(Error::memory(bytes, "cutting a long piece")),
        }
        if let (Some(left), Some(&first)) = (state.left_token, ids.first()) {
            self.check_pair(tok, left, first)?;
        }
        // The last token boundary `window` bytes before the end of the encoded part, past the longest token.
        let limit = part - self.sizes.window;
        let (mut at, mut cut, mut last) = (0usize, 0usize, None);
        for &id in &ids {
            let next = at + tok.vocab.tokens[id as usize].bytes.len();
            if next > limit {
                break;
            }
            at = next;
            if text.is_char_boundary(at) && at > self.longest_token {
                (cut, last) = (at, Some(id));
            }
        }
        if cut == 0 {
            return Ok(0);
        }
        // Encoded on its own, the text before the cut must be that one piece (cl100k's `\s*[\r\n]+` cut short
        // is two pieces: then wait for more text).
        if Self::first_piece(tok, text, cut)? != Some((0, cut)) {
            return Ok(0);
        }
        state.left_token = last;
        Ok(cut)
    }

    /// The piece encoder, when the vocabulary has one (no word markers: a piece's end changes its tokens).
    fn encoder(tok: &Tokenizer) -> Option<&PieceEncoder> {
        tok.fast.get_or_init(|| crate::encode::piece_encoder(&tok.vocab)).as_ref()
    }

    /// Checks the pair across a cut inside a piece: `left`, then the first token of `rest` (the whole rest of
    /// that piece, longer than any token: encoded by BPE, as encoding the text will).
    fn check_junction(&self, tok: &Tokenizer, left: u32, rest: &str) -> Result<()> {
        let Some(encoder) = Self::encoder(tok) else { return Ok(()) };
        let mut ids = Vec::new();
        let mut scratch = Scratch::default();
        encoder.begin(&mut scratch);
        match encoder.encode_pure(rest.as_bytes(), &mut scratch, &mut ids) {
            Ok(()) => ids.first().map_or(Ok(()), |&first| self.check_pair(tok, left, first)),
            Err(PieceError::UnknownByte(_)) => Ok(()), // encoding the text reports it, with its place
            Err(PieceError::OutOfMemory(bytes)) => Err(Error::memory(bytes, "cutting a long piece")),
        }
    }

    /// The pair `(left, right)` must be what BPE makes of the two tokens' bytes together.
    fn check_pair(&self, tok: &Tokenizer, left: u32, right: u32) -> Result<()> {
        let Some(encoder) = Self::encoder(tok) else { return Ok(()) };
        let tokens = &tok.vocab.tokens;
        let bytes = [tokens[left as usize].bytes.as_ref(), tokens[right as usize].bytes.as_ref()].concat();
        let mut ids = Vec::new();
        let mut scratch = Scratch::default();
        encoder.begin(&mut scratch);
        let _ = encoder.encode_pure(&bytes, &mut scratch, &mut ids);
        if ids == [left, right] {
            return Ok(());
        }
        Err(Error::value(format!(
            "cannot encode this document exactly in bounded memory: this vocabulary's encoding of a long piece \
             depends on text more than {} bytes away (tokens {} and {} do not meet as BPE would have them); \
             encode the document whole (`bytepair encode --documents line`, or Tokenizer.encode)",
            self.sizes.window,
            py_repr(&tokens[left as usize].display),
            py_repr(&tokens[right as usize].display)
        )))
    }
}

/// What `Cutter::pieces_settled` finds in buffered text.
struct Pieces {
    first_start: usize,
    first_end: usize,
    /// The end of the last settled piece (0: none).
    settled_end: usize,
}

/// The largest char boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The last simple cut of `text` at or after `floor` (see the module's notes), scanning back from the end.
fn last_simple_cut(text: &str, floor: usize) -> Option<usize> {
    let mut chars = text.char_indices().rev();
    let mut current = chars.next()?;
    for previous in chars {
        let (at, c) = current;
        if at < floor {
            return None;
        }
        let (previous_space, previous_alphanumeric) = char_classes(previous.1);
        // Before a space that follows a non-space.
        if c == ' ' && !previous_space {
            return Some(at);
        }
        // Before a line break ("\n" or "\r\n") that follows a letter or digit.
        if (c == '\n' || (c == '\r' && text.as_bytes().get(at + 1) == Some(&b'\n'))) && previous_alphanumeric {
            return Some(at);
        }
        // After a line break between a non-space and a letter or digit.
        if previous.1 == '\n'
            && char_classes(c).1
            && text[..previous.0].chars().next_back().is_some_and(|b| !char_classes(b).0)
        {
            return Some(at);
        }
        current = previous;
    }
    None
}

#[cfg(test)]
mod tests;
