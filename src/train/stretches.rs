//! SuperBPE's second-stage words recorded while the first stage's words are counted: each stretch of text
//! (a piece of `SUPERWORDS`) as the sequence of first-stage words it is made of.
//!
//! The second stage starts from each stretch as the first-stage tokenizer makes it, the stretch taken whole.
//! A stretch made of whole first-stage words encodes to their tokens one after the other unless a merge can
//! join two of them (`extend::Junctions`), whatever split gave the words: so when the text's own first-stage
//! split cuts a stretch into whole words (nearly always), the stretch is recorded as those words' indices in
//! the counted table, and its tokens are put together from each word's tokens, found once per distinct word.
//!
//! Performance notes: counting the stretches apart (a second counter that keeps their text) and splitting and
//! encoding every stretch again in the second stage cost two more passes over the text, each piece looked up
//! again in the encoder's cache: 110 MB of English on 2 threads, ~0.4 s of counting and 0.65 s of encoding,
//! against ~0.1 s to put the stretches together from ~1 M distinct words. A stretch that is not cut into whole
//! words (a first-stage piece goes on past its end, or the pattern leaves text out) is kept as text and
//! encoded as before.

use super::counts::Pieces;
use crate::pretokenize::split_superwords;

/// On a stretch's entry in `StretchBlock::ends`: the stretch is kept as text (the next of `texts`).
const AS_TEXT: u32 = 1 << 31;

/// The stretches of consecutive text, in order: as word indices (in the counting item's table while it is
/// counted, in the corpus-wide table once folded), or as text.
#[derive(Default)]
pub struct StretchBlock {
    words: Vec<u32>,
    /// Per stretch: `AS_TEXT`, or the end of its words in `words`.
    ends: Vec<u32>,
    texts: Pieces,
    /// The stretch ends of the text being recorded (kept for the next text: one allocation per item, not per line).
    scratch: Vec<usize>,
}

/// One stretch of a `StretchBlock`.
#[derive(Debug, PartialEq, Eq)]
pub enum Stretch<'a> {
    Words(&'a [u32]),
    Text(&'a str),
}

impl StretchBlock {
    /// The stretches, in order.
    pub fn iter(&self) -> impl Iterator<Item = Stretch<'_>> {
        let mut start = 0;
        let mut texts = self.texts.iter();
        self.ends.iter().map(move |&end| {
            if end == AS_TEXT {
                Stretch::Text(texts.next().expect("a kept text per stretch marked as text"))
            } else {
                let words = &self.words[start..end as usize];
                start = end as usize;
                Stretch::Words(words)
            }
        })
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Records the stretches of `text` (special-token-free, normalised), whose first-stage pieces are being
    /// counted: call `piece` for each of them, in order, with the index its word got, then `finish`. A block
    /// holds at most 2^31 word entries (a counting item is a few MB).
    pub fn recorder<'t>(&mut self, text: &'t str) -> StretchRecorder<'_, 't> {
        let mut ends = std::mem::take(&mut self.scratch);
        ends.clear();
        let mut sink = |piece: &'t str| ends.push(offset(text, piece) + piece.len());
        split_superwords(text, &mut sink);
        let words_start = self.words.len();
        let mut recorder =
            StretchRecorder { block: self, text, ends, next: 0, start: 0, covered: 0, whole: true, words_start };
        recorder.begin(0);
        recorder
    }

    /// Whether `bytes` more bytes of text can be recorded in this block (it holds fewer than 2^31 words, and a
    /// text has at most one piece per byte).
    pub fn room_for(&self, bytes: usize) -> bool {
        self.words.len().saturating_add(bytes) < AS_TEXT as usize && self.ends.len() < AS_TEXT as usize
    }

    /// Replaces each word index by `map[index]` (the item's table → the corpus-wide one).
    pub fn map_words(&mut self, map: &[u32]) {
        for w in &mut self.words {
            *w = map[*w as usize];
        }
    }
}

/// Byte offset of `piece` (a slice of `text`) in `text`.
fn offset(text: &str, piece: &str) -> usize {
    piece.as_ptr() as usize - text.as_ptr() as usize
}

/// Records one text's stretches (see `StretchBlock::recorder`).
pub struct StretchRecorder<'b, 't> {
    block: &'b mut StretchBlock,
    text: &'t str,
    /// End of every stretch of `text`.
    ends: Vec<usize>,
    /// The stretch being filled: `ends[next]`, starting at `start`.
    next: usize,
    start: usize,
    /// Where the pieces seen so far end.
    covered: usize,
    /// Whether the stretch's pieces so far are whole words that start where it starts, one after the other.
    whole: bool,
    /// Where the stretch's words start in `block.words`.
    words_start: usize,
}

impl StretchRecorder<'_, '_> {
    fn begin(&mut self, start: usize) {
        self.start = start;
        // A piece that went on past the last stretch's end runs into this one; text left out before it was the
        // last stretch's.
        self.whole = self.covered <= start;
        self.covered = self.covered.max(start);
        self.words_start = self.block.words.len();
    }

    /// Ends the stretch being filled: as words if they covered it exactly, else as text.
    fn close(&mut self) {
        let end = self.ends[self.next];
        if self.whole && self.covered == end {
            self.block.ends.push(self.block.words.len() as u32);
        } else {
            self.block.words.truncate(self.words_start);
            self.block.texts.push(&self.text[self.start..end]);
            self.block.ends.push(AS_TEXT);
        }
        self.next += 1;
        self.begin(end);
    }

    /// The next first-stage piece of the text, whose word has index `word`.
    pub fn piece(&mut self, piece: &str, word: u32) {
        let start = offset(self.text, piece);
        while self.next < self.ends.len() && start >= self.ends[self.next] {
            self.close();
        }
        if self.next == self.ends.len() {
            return; // (pieces past the last stretch: none, the stretches cover the text)
        }
        let end = start + piece.len();
        self.whole &= start == self.covered && end <= self.ends[self.next];
        self.covered = end;
        if self.whole {
            self.block.words.push(word);
        }
    }

    /// Ends the text's last stretches.
    pub fn finish(mut self) {
        while self.next < self.ends.len() {
            self.close();
        }
        self.block.scratch = std::mem::take(&mut self.ends);
    }
}

/// The corpus's stretches, in order, with the text of every word their indices refer to.
#[derive(Default)]
pub struct Stretches {
    pub blocks: Vec<StretchBlock>,
    /// Word `i`'s text is the `i`-th of these.
    words: Pieces,
}

impl Stretches {
    /// Keeps the words' text, in index order (the table is about to be consumed by the first stage).
    pub fn keep_words<'w>(&mut self, words: impl Iterator<Item = &'w str>) {
        self.words = Pieces::default();
        words.for_each(|word| self.words.push(word));
    }

    pub fn word_count(&self) -> usize {
        self.words.len()
    }

    /// The text of word `i`.
    pub fn word(&self, i: u32) -> &str {
        self.words.get(i as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::{Pattern, PreTokenizer};

    /// Records `text` with `pattern` as the first stage, numbering words by first appearance.
    fn recorded(pattern: Pattern, text: &str) -> (Vec<String>, Vec<String>) {
        let pretokenizer = PreTokenizer::new(pattern).unwrap();
        let mut table: Vec<String> = Vec::new();
        let mut block = StretchBlock::default();
        let mut recorder = block.recorder(text);
        pretokenizer
            .split(text, |piece| {
                let index = table.iter().position(|w| w == piece).unwrap_or_else(|| {
                    table.push(piece.to_string());
                    table.len() - 1
                });
                recorder.piece(piece, index as u32);
            })
            .unwrap();
        recorder.finish();
        let shown = block
            .iter()
            .map(|s| match s {
                Stretch::Words(ws) => ws.iter().map(|&w| table[w as usize].as_str()).collect::<Vec<_>>().join("|"),
                Stretch::Text(t) => format!("TEXT:{t}"),
            })
            .collect();
        let mut stretches = Vec::new();
        split_superwords(text, &mut |p: &str| stretches.push(p.to_string()));
        (shown, stretches)
    }

    #[test]
    fn stretches_are_their_words_or_their_text() {
        let (shown, stretches) = recorded(Pattern::Gpt2, "By the way, I am a fan... of 1234 things\n\nYes  no");
        assert_eq!(stretches, ["By the way, I am a fan", "...", " of ", "123", "4", " things\n\n", "Yes", " ", " no"]);
        // gpt2's " 1234" starts inside the stretch " of " and goes on past its end: that stretch and the two
        // it reaches into are kept as text.
        let expected = [
            "By| the| way|,| I| am| a| fan",
            "...",
            "TEXT: of ",
            "TEXT:123",
            "TEXT:4",
            " things|\n|\n",
            "Yes",
            " ",
            " no",
        ];
        assert_eq!(shown, expected);
    }

    #[test]
    fn a_piece_across_a_stretch_end_keeps_both_stretches_as_text() {
        // With no pattern the whole text is one first-stage piece: every stretch after the first is crossed.
        let (shown, stretches) = recorded(Pattern::None, "ab 12 cd");
        assert_eq!(stretches, ["ab ", "12", " cd"]);
        assert_eq!(shown, ["TEXT:ab ", "TEXT:12", "TEXT: cd"]);
        // The whitespace pattern leaves spaces out of its pieces: stretches with a space are kept as text.
        let (shown, _) = recorded(Pattern::Whitespace, "ab cd 12");
        assert_eq!(shown, ["TEXT:ab cd ", "12"]);
    }

    #[test]
    fn a_block_holds_fewer_than_two_to_the_31_words() {
        let block = StretchBlock::default();
        assert!(block.room_for(1 << 20) && block.room_for((1 << 31) - 1));
        assert!(!block.room_for(1 << 31) && !block.room_for(usize::MAX));
    }

    #[test]
    fn words_are_mapped_to_the_corpus_table() {
        let mut block = StretchBlock::default();
        let text = "a b";
        let mut recorder = block.recorder(text);
        recorder.piece(&text[0..1], 0);
        recorder.piece(&text[1..3], 1);
        recorder.finish();
        block.map_words(&[7, 3]);
        assert_eq!(block.iter().collect::<Vec<_>>(), [Stretch::Words(&[7, 3])]);
    }
}
