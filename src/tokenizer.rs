//! The whole pipeline, one stage per concern: special tokens → normaliser (lowercase) → pre-tokenizer →
//! BPE model (vocab + merges) → decoder. Training builds one, files save and load one.

use std::sync::OnceLock;

use crate::cutting::Cutter;
use crate::encode::apply_merges;
use crate::encode::caches::{RECENT_IDS, Scratch};
use crate::encode::piece::PieceEncoder;
use crate::encode::piece::PieceError;
use crate::error::{Error, ErrorKind, Result, py_repr, try_reserve};
use crate::id_room::{self, IDS};
use crate::pretokenize::{Pattern, PieceSink, PreTokenizer, Segment, SpecialMatcher, block_pieces, last_start};
use crate::train::TieBreak;
use crate::vocab::{Mode, Vocab};

#[derive(Clone, Debug)]
pub struct Tokenizer {
    pub vocab: Vocab,
    pub pretokenizer: PreTokenizer,
    pub lowercase: bool,
    /// The special tokens that can appear in text (the user's list, in id order; `unk_token` is not among
    /// them unless the user listed it).
    pub specials: SpecialMatcher,
    /// Training record: the tie rule and each merge's pair count, when trained by bytepair.
    pub tie_break: Option<TieBreak>,
    pub merge_counts: Option<Vec<u64>>,
    /// The fast piece encoder, built on first use (None: the vocabulary needs the general path).
    pub fast: OnceLock<Option<PieceEncoder>>,
}

/// Token ids and each token's (start, end) offsets.
pub type IdsAndSpans = (Vec<u32>, Vec<(usize, usize)>);

/// Which special tokens `encode` may produce and which make it fail, by index into `Tokenizer::specials`.
pub struct SpecialPolicy {
    pub allowed: Vec<bool>,
    pub disallowed: Vec<bool>,
}

/// What the next window of a text handed to `Tokenizer::encode_windows` was: how many characters it appended
/// to the buffer, and whether more follow (false: that was the last).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub chars: usize,
    pub more: bool,
}

impl Tokenizer {
    pub fn new(vocab: Vocab, pattern: Pattern, lowercase: bool, special_tokens: &[String]) -> Result<Tokenizer> {
        // (Kept twice, a special made a tokenizer that save/load and pickle refused: from_gpt2's list.)
        if let Some(k) = (1..special_tokens.len()).find(|&k| special_tokens[..k].contains(&special_tokens[k])) {
            return Err(crate::vocab::special_listed_twice(&special_tokens[k]));
        }
        Ok(Tokenizer {
            vocab,
            pretokenizer: PreTokenizer::new(pattern)?,
            lowercase,
            specials: SpecialMatcher::new(special_tokens),
            tie_break: None,
            merge_counts: None,
            fast: OnceLock::new(),
        })
    }

    /// Encodes `text` to ids (a long text's in a vector reserved for them once: `id_room`).
    pub fn encode(&self, text: &str, policy: &SpecialPolicy) -> Result<Vec<u32>> {
        let mut ids = Vec::new();
        self.encode_into(text, policy, &mut ids)?;
        Ok(ids)
    }

    /// `encode` into `ids` (cleared first), whose room a caller may reuse from one text to the next; on an
    /// error some ids may be left in it.
    pub fn encode_into(&self, text: &str, policy: &SpecialPolicy, ids: &mut Vec<u32>) -> Result<()> {
        ids.clear();
        let _room = id_room::reserve(ids, text.len())?;
        self.expect_text(text.len());
        self.encode_append(text, policy, ids)
    }

    /// `encode` for a text handed over in windows: each call of `next` appends the next window's UTF-8 to the
    /// buffer it is given and says how many characters that was and whether more follow (`Window`). After each
    /// window the text is encoded up to the last place where the parts encode as the whole does
    /// (`Cutter::simple_cut`), and only the rest is kept: a text read from another storage (a Python str of
    /// UCS-2) needs a window's UTF-8, not the whole text's. Same ids and errors as `encode` on the whole text (an
    /// error's "at character N" counts from the text's start); a tokenizer without simple cuts keeps the whole
    /// text, as `encode` does. `size_hint`: about the text's length in bytes (to size the ids).
    ///
    /// Each window says how many characters it appended (`Window::chars`), so that an error's position is
    /// counted without reading the text again: counting the characters of every part encoded was 1.4 % of one
    /// call on 10 MB of UCS-2 English (perf); only the short rest kept after a cut is counted now.
    pub fn encode_windows(
        &self,
        policy: &SpecialPolicy,
        size_hint: usize,
        mut next: impl FnMut(&mut String) -> Result<Window>,
    ) -> Result<Vec<u32>> {
        let specials_split = policy.allowed.iter().chain(&policy.disallowed).any(|&on| on);
        let mut ids = Vec::new();
        let _room = id_room::reserve(&mut ids, size_hint)?;
        self.expect_text(size_hint);
        let mut buffer = String::new();
        // Characters encoded so far, and in the buffer; bytes of the buffer already searched for a cut.
        let (mut chars_before, mut chars_held, mut scanned) = (0usize, 0usize, 0usize);
        loop {
            let Window { chars, more } = next(&mut buffer)?;
            chars_held += chars;
            debug_assert_eq!(chars_held, buffer.chars().count(), "a window's characters, as it says");
            let cut = if more {
                Cutter::simple_cut(self, specials_split, &buffer, scanned.saturating_sub(8))
            } else {
                Some(buffer.len())
            };
            if let Some(at) = cut {
                let part = &buffer[..at];
                self.encode_append(part, policy, &mut ids).map_err(|e| at_character_from(e, chars_before))?;
                if !more {
                    return Ok(ids);
                }
                let kept = buffer[at..].chars().count();
                (chars_before, chars_held) = (chars_before + chars_held - kept, kept);
                buffer.drain(..at);
            }
            scanned = buffer.len();
        }
    }

    /// Encodes texts one after another into one list of ids: `ends[i]` is where the ids of `texts[i]` end. For
    /// batches: one allocation a chunk of texts rather than one a text (a vector a text, freed by another
    /// thread, was page faults on every batch).
    pub fn encode_concatenated(&self, texts: &[&str], policy: &SpecialPolicy) -> Result<(Vec<u32>, Vec<usize>)> {
        let (mut ids, mut ends) = (Vec::new(), Vec::new());
        self.encode_concatenated_into(texts, policy, &mut ids, &mut ends)?;
        Ok((ids, ends))
    }

    /// Readies the encoder for about `bytes` of text about to be encoded, in one call or many (a batch's chunks,
    /// on any threads): the table of pieces met before, when it next grows, grows straight to the size such
    /// text takes it to, instead of step by step (`SeenTables::expect`). `encode` does it for its text.
    pub fn expect_text(&self, bytes: usize) {
        if let Some(fast) = self.fast_encoder() {
            fast.expect_text(bytes);
        }
    }

    /// `encode_concatenated` into vectors given (cleared first), whose room a caller may reuse from one chunk of
    /// texts to the next.
    pub fn encode_concatenated_into(
        &self,
        texts: &[&str],
        policy: &SpecialPolicy,
        ids: &mut Vec<u32>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        let bytes: usize = texts.iter().map(|t| t.len()).sum();
        ids.clear();
        ends.clear();
        try_reserve(ids, bytes / 3 + 1, IDS)?;
        ends.reserve(texts.len());
        for text in texts {
            self.encode_append(text, policy, ids)?;
            ends.push(ids.len());
        }
        Ok(())
    }

    /// Appends the ids of `text` to `ids` (on an error, some may have been appended).
    fn encode_append(&self, text: &str, policy: &SpecialPolicy, ids: &mut Vec<u32>) -> Result<()> {
        let tokens = self.specials.tokens();
        let forbidden = |i: usize| policy.disallowed[i] && !policy.allowed[i];
        let found = if (0..tokens.len()).all(forbidden) {
            self.specials.find_first(text)
        } else {
            // Some allowed or not checked: each forbidden one on its own (a match of another may overlap it).
            (0..tokens.len())
                .filter(|&i| forbidden(i))
                .filter_map(|i| Some((i, text.find(tokens[i].as_str())?)))
                .min_by_key(|&(_, at)| at)
        };
        if let Some((i, at)) = found {
            return Err(Error::value(format!(
                "the text contains the special token {token} (at character {}), which is disallowed. \
                     To encode it as the special token, pass allowed_special={{{token}}} (or \"all\"); to \
                     encode it as ordinary text, pass disallowed_special=() (or use encode_ordinary)",
                char_position(text, at),
                token = py_repr(&tokens[i])
            )));
        }
        let allowed = policy.allowed.iter().filter(|a| **a).count();
        if allowed == 0 {
            self.encode_ordinary_into(text, text, ids)?;
        } else {
            let subset;
            let matcher = if allowed == tokens.len() {
                &self.specials
            } else {
                let chosen: Vec<String> =
                    tokens.iter().zip(&policy.allowed).filter(|(_, a)| **a).map(|(t, _)| t.clone()).collect();
                subset = SpecialMatcher::new(&chosen);
                &subset
            };
            matcher.segments(text, |segment| match segment {
                Segment::Text(part) => self.encode_ordinary_into(part, text, ids),
                Segment::Special(i) => {
                    try_reserve(ids, 1, IDS)?;
                    ids.push(self.vocab.known_id(&matcher.tokens()[i]));
                    Ok(())
                }
            })?;
        }
        Ok(())
    }

    /// Ids and each token's (start, end) in `text`, in bytes or (`chars`) characters. A token that starts or
    /// ends inside a character (byte-level tokens can split one) covers that whole character in character
    /// offsets. Offsets refer to the text as normalised (lowercasing keeps byte lengths only for most
    /// scripts), so tokenizers that lowercase or drop whitespace refuse.
    pub fn encode_with_offsets(&self, text: &str, policy: &SpecialPolicy, chars: bool) -> Result<IdsAndSpans> {
        let ids = self.encode(text, policy)?;
        let bytes = text.as_bytes();
        let mut offsets = Vec::new();
        try_reserve(&mut offsets, ids.len(), "the offsets")?;
        let mut at = 0usize;
        // Character offsets: a running count of character starts (bytes that are not UTF-8 continuations).
        let mut chars_before = 0usize;
        let mut counted_to = 0usize;
        let mut char_index = |byte: usize| {
            while counted_to < byte {
                chars_before += (bytes[counted_to] & 0xC0 != 0x80) as usize;
                counted_to += 1;
            }
            chars_before
        };
        for &id in &ids {
            let token = &self.vocab.tokens[id as usize].bytes;
            let end = at + token.len();
            if bytes.get(at..end) != Some(token.as_ref()) {
                return Err(Error::value(
                    "offsets need tokens that spell the text exactly, and this tokenizer changes it (it \
                     lowercases, drops whitespace, or maps unknown characters to unk_token)"
                        .to_string(),
                ));
            }
            let span = if chars {
                let inside = at < bytes.len() && bytes[at] & 0xC0 == 0x80;
                let start = char_index(at) - inside as usize;
                (start, char_index(end))
            } else {
                (at, end)
            };
            offsets.push(span);
            at = end;
        }
        Ok((ids, offsets))
    }

    /// Encodes bytes that may not be valid UTF-8 (byte-level vocabularies only): each stretch of valid UTF-8
    /// is encoded as text; each byte of an invalid sequence is a piece of its own (its byte token), so
    /// `decode_bytes(encode_bytes(b)) == b` for any bytes.
    pub fn encode_bytes(&self, data: &[u8], policy: &SpecialPolicy) -> Result<Vec<u32>> {
        let Some(byte_ids) = self.vocab.byte_ids().copied() else {
            return Err(Error::value(
                "encode_bytes needs a byte-level vocabulary (mode=\"byte\", no word markers); decode the bytes \
                 to text first"
                    .to_string(),
            ));
        };
        let mut ids = Vec::new();
        try_reserve(&mut ids, data.len() / 3 + 1, IDS)?;
        let mut rest = data;
        let mut offset = 0usize;
        while !rest.is_empty() {
            let (valid, bad) = match std::str::from_utf8(rest) {
                Ok(text) => (text, 0),
                Err(e) => {
                    let valid = std::str::from_utf8(&rest[..e.valid_up_to()]).expect("checked prefix");
                    (valid, e.error_len().unwrap_or(rest.len() - e.valid_up_to()))
                }
            };
            let valid_ids = self.encode(valid, policy).map_err(|e| in_bytes(e, valid, offset))?;
            try_reserve(&mut ids, valid_ids.len() + bad, IDS)?;
            ids.extend(valid_ids);
            for (i, &b) in rest[valid.len()..valid.len() + bad].iter().enumerate() {
                match byte_ids[b as usize] {
                    u32::MAX => {
                        return Err(Error::value(format!(
                            "byte 0x{b:02X} at offset {} has no token in this vocabulary",
                            offset + valid.len() + i
                        )));
                    }
                    id => ids.push(id),
                }
            }
            offset += valid.len() + bad;
            rest = &rest[valid.len() + bad..];
        }
        Ok(ids)
    }

    /// The (bytes, id) of every non-special token, for tiktoken: its ranks are the ids. tiktoken's rule
    /// (a piece that is a token stays whole; any two parts whose concatenation is a token merge, lowest id
    /// first) gives this tokenizer's ids when every token is what BPE makes of its own bytes under both rules;
    /// a vocabulary where that fails for some token is refused, naming it.
    pub fn tiktoken_ranks(&self) -> Result<Vec<(&[u8], u32)>> {
        let v = &self.vocab;
        if v.byte_ids().is_none() || self.lowercase || self.pretokenizer.pattern.drops_whitespace() {
            return Err(Error::value(
                "tiktoken holds byte-level BPE without normalisation: this tokenizer is char-level, has word \
                 markers, lowercases, or drops whitespace"
                    .to_string(),
            ));
        }
        // tiktoken has no unknown token: a byte without one made its encoder panic on text holding it.
        let missing: Vec<usize> =
            v.byte_ids().map_or(Vec::new(), |ids| (0..256).filter(|&b| ids[b] == u32::MAX).collect());
        if let [first, ..] = missing[..] {
            return Err(Error::value(format!(
                "tiktoken needs a token for each of the 256 bytes, and this vocabulary has none for {} of them \
                 (the first: {}); train with initial_alphabet=\"all\" (the default) to export it",
                missing.len(),
                crate::error::py_repr_bytes(&[first as u8])
            )));
        }
        let ranks = || v.tokens.iter().enumerate().filter(|(_, t)| !t.special).map(|(i, t)| (&t.bytes[..], i as u32));
        if v.rank_by_bytes {
            return Ok(ranks().collect());
        }
        let ours = self.fast_encoder().expect("byte-level");
        let theirs = crate::encode::piece_encoder_by_rule(v, true).expect("byte-level");
        let (mut a, mut b, mut scratch) = (Vec::new(), Vec::new(), Scratch::default());
        for (id, token) in v.tokens.iter().enumerate() {
            if token.special || token.bytes.len() < 2 {
                continue;
            }
            a.clear();
            b.clear();
            ours.split_below(&token.bytes, u32::MAX, &mut scratch, &mut a);
            theirs.split_below(&token.bytes, id as u32, &mut scratch, &mut b);
            if a != [id as u32] || b.len() != 2 {
                return Err(Error::value(format!(
                    "token {id} ({}) is not what BPE makes of its own bytes, so tiktoken (which keeps such a piece \
                     whole, and merges by rank) would give other ids than this tokenizer; this happens when a \
                     merge recreates an existing token",
                    py_repr(&token.display)
                )));
            }
        }
        Ok(ranks().collect())
    }

    /// The ids of `piece` encoded as one piece (no pre-tokenization, no special tokens), from any bytes —
    /// tiktoken's `encode_single_piece`, which its `_encode_bytes` and `encode_with_unstable` build on. Byte-level
    /// vocabularies only (every byte is a unit).
    pub fn encode_single_piece(&self, piece: &[u8]) -> Result<Vec<u32>> {
        let Some(byte_ids) = self.vocab.byte_ids() else {
            return Err(Error::value(
                "encoding raw bytes needs a byte-level vocabulary (mode=\"byte\", no word markers)".to_string(),
            ));
        };
        if piece.len() >= u32::MAX as usize {
            return Err(piece_too_long(piece.len()));
        }
        let mut ids = Vec::with_capacity(piece.len() / 3 + 1);
        if let Some(fast) = self.fast_encoder() {
            let mut scratch = take_scratch(fast);
            let result = fast.encode(piece, &mut scratch, &mut ids);
            SCRATCHES.with(|s| s.borrow_mut().push(scratch));
            return match result {
                Ok(()) => Ok(ids),
                Err(PieceError::UnknownByte(offset)) => Err(Error::value(format!(
                    "byte 0x{:02X} at offset {offset} has no token in this vocabulary",
                    piece[offset]
                ))),
                Err(PieceError::OutOfMemory(bytes)) => Err(Error::memory(bytes, "encoding a piece")),
            };
        }
        // The general path, as `encode_ordinary_into` takes it, with bytes as the units.
        if self.vocab.whole_pieces
            && let Some(id) = self.vocab.id_of(&crate::vocab::bytes_to_display(piece))
            && !self.vocab.tokens[id as usize].special
        {
            return Ok(vec![id]);
        }
        for (offset, &b) in piece.iter().enumerate() {
            match byte_ids[b as usize] {
                u32::MAX => {
                    return Err(Error::value(format!(
                        "byte 0x{b:02X} at offset {offset} has no token in this vocabulary"
                    )));
                }
                id => ids.push(id),
            }
        }
        apply_merges(&mut ids, self.vocab.merge_rank());
        Ok(ids)
    }

    /// Where the pre-tokenizer cuts `text` (special tokens are not looked for): the (start, end) byte offsets of
    /// each piece, in order. Text the pattern does not match is in no piece.
    pub fn piece_spans(&self, text: &str) -> Result<Vec<(usize, usize)>> {
        let base = text.as_ptr() as usize;
        let mut spans = Vec::new();
        self.pretokenizer.split(text, |piece| {
            let start = piece.as_ptr() as usize - base;
            spans.push((start, start + piece.len()));
        })?;
        Ok(spans)
    }

    /// Number of tokens of `text` (as `encode(text).len()`, without keeping the ids).
    pub fn count(&self, text: &str, policy: &SpecialPolicy) -> Result<usize> {
        // Splitting and merging dominate; keeping ids in a reused buffer costs little, so count = encode's length.
        Ok(self.encode(text, policy)?.len())
    }

    /// Takes `encoder` as this tokenizer's piece encoder, if none is built yet: it must be what
    /// `encode::piece_encoder` makes of this vocabulary (as `vocab_from_tiktoken` returns it).
    pub fn adopt_piece_encoder(&self, encoder: PieceEncoder) {
        let _ = self.fast.set(Some(encoder));
    }

    /// The fast piece encoder, built on first use; None for a vocabulary it does not take.
    fn fast_encoder(&self) -> Option<&PieceEncoder> {
        self.fast.get_or_init(|| crate::encode::piece_encoder(&self.vocab)).as_ref()
    }

    /// Builds the fast piece encoder now instead of on the first encode: 25–200 ms for the OpenAI vocabularies
    /// (pairs, whole-token table), and 60–125 ms more for its backtracker, which a first request should not pay.
    pub fn prepare(&self) {
        if let Some(fast) = self.fast_encoder() {
            fast.prepare();
        }
    }

    /// Encodes text with no special-token handling. `whole` is the full input, for error positions.
    fn encode_ordinary_into(&self, part: &str, whole: &str, ids: &mut Vec<u32>) -> Result<()> {
        let lowered;
        let normalized = if self.lowercase {
            lowered = lowercase_fallibly(part)?;
            lowered.as_str()
        } else {
            part
        };
        if let Some(fast) = self.fast_encoder() {
            let mut scratch = take_scratch(fast);
            try_reserve(ids, normalized.len() / 4, IDS)?;
            let mut stopped = None;
            let result = self.pretokenizer.split_into(
                normalized,
                EncodeSink {
                    encoder: fast,
                    scratch: &mut scratch,
                    first_id: ids.len(),
                    ids: &mut *ids,
                    text: normalized,
                    stopped: &mut stopped,
                },
            );
            SCRATCHES.with(|s| s.borrow_mut().push(scratch));
            result?;
            return match stopped {
                Some((piece, Stop::UnknownByte(offset))) => {
                    Err(self.unknown_in_piece(offset, piece, whole, part, normalized))
                }
                Some((piece, Stop::TooLong)) => Err(piece_too_long(piece.len())),
                Some((_, Stop::OutOfMemory(bytes))) => Err(Error::memory(bytes, "encoding a piece of the text")),
                None => Ok(()),
            };
        }
        let mut failure = None;
        let mut symbols = Vec::new();
        self.pretokenizer.split(normalized, |piece| {
            if failure.is_some() {
                return;
            }
            // HF's ignore_merges: a piece that is a token of the model (not a special token cut out before) is
            // that token, markers or not.
            // Room for the piece's ids (at most one per byte), had or refused here.
            if let Err(e) = try_reserve(ids, piece.len(), IDS) {
                failure = Some(e);
                return;
            }
            if self.vocab.whole_pieces
                && let Some(id) = self.vocab.id_of(piece)
                && (!self.vocab.tokens[id as usize].special || self.vocab.unk == Some(id))
            {
                ids.push(id);
                return;
            }
            symbols.clear();
            match self.vocab.initial_symbols(piece, &mut symbols) {
                Ok(()) => {
                    apply_merges(&mut symbols, self.vocab.merge_rank());
                    ids.extend_from_slice(&symbols);
                }
                Err(unknown) => {
                    let at = offset_in(whole, part, normalized, piece) + unknown.offset;
                    failure = Some(self.unknown_unit_error(&unknown, whole, at));
                }
            }
        })?;
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The error for a unit without a token at byte `offset` of `piece`.
    #[cold]
    fn unknown_in_piece(&self, offset: usize, piece: &str, whole: &str, part: &str, normalized: &str) -> Error {
        let at = offset_in(whole, part, normalized, piece) + offset;
        let b = piece.as_bytes()[offset];
        let unit = match (self.vocab.style.mode, piece.get(offset..).and_then(|s| s.chars().next())) {
            (Mode::Char, Some(c)) => {
                crate::vocab::UnknownUnit { unit: c.to_string(), raw: c.to_string().into_bytes(), offset }
            }
            _ => crate::vocab::UnknownUnit {
                unit: crate::vocab::BYTE_TO_CHAR[b as usize].to_string(),
                raw: vec![b],
                offset,
            },
        };
        self.unknown_unit_error(&unit, whole, at)
    }

    fn unknown_unit_error(&self, unknown: &crate::vocab::UnknownUnit, whole: &str, byte_at: usize) -> Error {
        let position = char_position(whole, byte_at);
        let what = match self.vocab.style.mode {
            Mode::Char => {
                let c = unknown.unit.chars().next().unwrap_or('\0');
                format!("character {} (U+{:04X}) at character {position}", py_repr(&unknown.unit), c as u32)
            }
            Mode::Byte => format!(
                "byte 0x{:02X} (shown as {}) at character {position}",
                unknown.raw.first().copied().unwrap_or(0),
                py_repr(&unknown.unit)
            ),
        };
        Error::value(format!(
            "{what} of the text is not in the vocabulary, and the tokenizer has no unk_token. Train with \
             unk_token=\"[UNK]\" to map unseen {} to it{}",
            if self.vocab.style.mode == Mode::Char { "characters" } else { "bytes" },
            if self.vocab.style.mode == Mode::Byte {
                ", or with initial_alphabet=\"all\" so every byte has a token"
            } else {
                ", or pass initial_alphabet=[...] with the characters you need"
            }
        ))
    }

    /// The bytes that `ids` stand for. With the `whitespace` pattern (and HF's WhitespaceSplit and
    /// BertPreTokenizer patterns), which drop spaces, a space is put back between words where the `##` prefix or
    /// the end-of-word suffix shows a word boundary.
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        let n = self.vocab.len();
        let mut out = Vec::new();
        try_reserve(&mut out, ids.len().saturating_mul(4), "the decoded bytes")?;
        let restore_spaces = self.pretokenizer.pattern.splits_at_whitespace()
            && (self.vocab.style.prefix.is_some() || self.vocab.style.suffix.is_some());
        let mut previous: Option<&crate::vocab::Token> = None;
        for (position, &id) in ids.iter().enumerate() {
            let Some(token) = self.vocab.tokens.get(id as usize) else {
                return Err(Error {
                    kind: ErrorKind::OutOfRange,
                    message: format!(
                        "id {id} (at position {position}) is not in the vocabulary: valid ids are 0 to {}",
                        n.saturating_sub(1)
                    ),
                });
            };
            if token.special && token.display.is_empty() {
                return Err(Error {
                    kind: ErrorKind::OutOfRange,
                    message: format!("id {id} (at position {position}) is unused in this vocabulary: no token has it"),
                });
            }
            if restore_spaces && let Some(prev) = previous {
                let boundary = if self.vocab.style.prefix.is_some() {
                    !token.continues && !token.special && !prev.special
                } else {
                    prev.ends_word && !token.special
                };
                if boundary {
                    out.push(b' ');
                }
            }
            out.extend_from_slice(&token.bytes);
            previous = Some(token);
        }
        Ok(out)
    }
}

/// Most encoders a thread keeps caches for.
const SCRATCHES_PER_THREAD: usize = 4;

thread_local! {
    /// Each thread's scratch (front table, seen table, piece cache) for the encoders it ran last, least recent
    /// first; kept across calls, so that batches of small documents share them. Several, so that alternating
    /// tokenizers (comparing two on each document) do not clear their tables (a 1 MB front table, a seen table
    /// of up to 8 MB) on every call.
    static SCRATCHES: std::cell::RefCell<Vec<Scratch>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// This thread's scratch for `encoder`, ready (`begin`): its own if kept, else a new one, or the least
/// recently used one's buffers once the thread keeps `SCRATCHES_PER_THREAD` (given back by pushing it).
fn take_scratch(encoder: &PieceEncoder) -> Scratch {
    let mut scratch = SCRATCHES.with(|scratches| {
        let mut scratches = scratches.borrow_mut();
        match scratches.iter().position(|s| encoder.owns(s)) {
            Some(i) => scratches.remove(i),
            None if scratches.len() >= SCRATCHES_PER_THREAD => scratches.remove(0),
            None => Scratch::default(),
        }
    });
    encoder.begin(&mut scratch);
    scratch
}

/// Gives each piece of a text to the fast encoder. A struct, not a closure, so that `piece` can be
/// `#[inline(always)]`: the splitters' loops then hold the encoder's common cases (see `PieceSink`).
struct EncodeSink<'a, 't> {
    encoder: &'a PieceEncoder,
    scratch: &'a mut Scratch,
    ids: &'a mut Vec<u32>,
    /// Where this text's ids start in `ids`, and the text its pieces are cut from (see `grow_ids`).
    first_id: usize,
    text: &'t str,
    /// The piece encoding stopped at, and why.
    stopped: &'a mut Option<(&'t str, Stop)>,
}

/// Why `EncodeSink` stopped at a piece.
#[derive(Clone, Copy)]
enum Stop {
    /// A unit without a token, at this offset in the piece.
    UnknownByte(usize),
    /// Longer than the encoder can index.
    TooLong,
    /// Memory for this many bytes could not be had.
    OutOfMemory(usize),
}

/// The `lowercase` normaliser's text, its memory had or refused (`MemoryError`) rather than aborting: the text
/// is lowercased in blocks into one string reserved up front (the normaliser lowercases each character on its
/// own, so blocks cut between characters give the same text).
fn lowercase_fallibly(text: &str) -> Result<String> {
    const BLOCK: usize = 1 << 16;
    let mut out = String::new();
    out.try_reserve(text.len()).map_err(|_| Error::memory(text.len(), "the lowercased text"))?;
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = rest.len().min(BLOCK);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        out.push_str(&crate::pretokenize::lowercase(&rest[..cut]));
        rest = &rest[cut..];
    }
    Ok(out)
}

impl<'t> PieceSink<'t> for EncodeSink<'_, 't> {
    #[inline(always)]
    fn piece(&mut self, piece: &'t str) {
        if self.room_for(piece) {
            let result = self.encoder.encode_next(piece.as_bytes(), self.scratch, self.ids);
            self.stop_on(piece, result);
        }
    }

    #[inline(always)]
    fn piece_in(&mut self, text: &'t str, start: usize, end: usize) {
        let piece = &text[start..end];
        if self.room_for(piece) {
            let result = self.encoder.encode_next_in(text.as_bytes(), start, end, self.scratch, self.ids);
            self.stop_on(piece, result);
        }
    }

    /// By block while the text's pieces are mostly tokens: not where the last pieces merged came one close after
    /// another (base64, random text), whose pieces `whole_in` would look up in vain.
    #[inline(always)]
    fn by_block(&self) -> bool {
        !self.encoder.merging_closely(self.scratch)
    }

    /// A block's pieces: room for their ids made once, and each piece of up to 8 bytes that is one token found
    /// in one probe whatever its length (`PieceEncoder::whole_in`); the others as `piece_in` (not looked up
    /// again). Per piece, `piece_in` checked the room, then branched on the length (one byte: the byte table;
    /// two: the pair table; up to 8: the whole-token table), with ~1/5 of English's pieces of one byte. 1 MB of
    /// fresh English, one call (callgrind): r50k 47.1 → 44.2 M instructions, cl100k 49.3 → 44.6, o200k 49.5 →
    /// 46.7; cl100k's random digits (3-digit pieces, all tokens) 42.9 → 31.7 M. ~4 KB documents, 10 MB after
    /// 10 MB, alternated processes: steady r50k 191–195 → 205–210 MB/s, cl100k 174–175 → 189–197, o200k
    /// 158–160 → 180–183.
    ///
    /// Blocks whose pieces all end 8 bytes or more before the text's end (all but the last one or two) take
    /// `pieces_before_the_end`: its loop held ~57 instructions per whole-token piece (perf annotate), among them a
    /// bounds check of the 8-byte load, the table's length reloaded and checked, the list's capacity checked
    /// and its length stored and reloaded, and spills; now ~37. ~4 KB documents, 10 MB after 10 MB, `encode_to_numpy`,
    /// 3 alternated process pairs (cold / steady MB/s): r50k 178 / 221 → 186–189 / 235–241, cl100k 168–172 /
    /// 207–213 → 172–177 / 213–222, o200k 160–162 / 198–202 → 165–170 / 207–212; Python source +2–5 %.
    ///
    /// The splitter hands over the block's mask of piece starts, walked here, rather than an array of bounds it
    /// wrote for this loop to read back (a store, two loads and a loop of its own per piece). Same measure, 3
    /// pairs: r50k 178–185 / 224–234 → 185–194 / 244–249, cl100k 168–172 / 202–215 → 168–178 / 230–233, o200k
    /// 161–171 / 209–212 → 172–177 / 223–226; Python source (o200k) 205–211 / 218–223 → 224–230 / 240–244;
    /// random letters, base64 and multilingual text the same.
    #[inline(always)]
    fn pieces_to(&mut self, text: &'t str, pos: usize, base: usize, starts: u64) {
        // Where the block's last piece ends (the next one starts).
        let last = last_start(base, starts);
        let room = self.ids.capacity() - self.ids.len() >= last - pos
            || (last - pos < u32::MAX as usize && self.grow_ids(&text[pos..last]).is_ok());
        // `RECENT_IDS` more for the loop, which writes a recent piece's ids as one array of that many (else, at
        // the room's very end, piece by piece rather than grown further).
        let room_for_loop = self.ids.capacity() - self.ids.len() >= last - pos + RECENT_IDS;
        if self.stopped.is_none() && room && room_for_loop && last + 8 <= text.len() {
            self.pieces_before_the_end(text, pos, base, starts);
            return;
        }
        // Stopped, no room for all at once (piece by piece, to stop at the right one), or the text's last bytes
        // (where a piece's 8-byte key would read past the text): piece by piece.
        for (start, end) in block_pieces(pos, base, starts) {
            self.piece_in(text, start, end);
        }
    }
}

impl<'t> EncodeSink<'_, 't> {
    /// `pieces_to` for a block whose pieces all end 8 bytes or more before the text's end, room for their ids
    /// made: each piece's key is one unchecked load, and a whole token's id is written without a capacity check
    /// (the ids' length is stored once, before any other call that appends to them, and at the end).
    ///
    /// A piece of up to 8 bytes that is no whole token is then looked for among the thread's recent ones
    /// (`PieceEncoder::recent_at`: indentation, a name in a story) and its ids written from there, as one array
    /// of `RECENT_IDS` (room for that many more was made); else encoded and kept there.
    ///
    /// A piece that is no whole token first asks for the whole-token slot of the piece after it: its merge takes
    /// longer than that load, which then does not wait. Where most pieces are merged and the table is larger
    /// than the cache (random letters with o200k: three in four pieces of three bytes or more, a 4 MB table),
    /// 4 MB in one call took 4–5 % less time (alternated processes, 4 pairs, twice); ~4 KB English documents,
    /// whose pieces are ~1 % merged, multilingual text and Python source the same. (Asking for the slots of all
    /// of a block's pieces before its loop, when the block before had merges, cost English documents 1.5–2.5 %;
    /// two pieces ahead gave no more than one.)
    #[inline(always)]
    fn pieces_before_the_end(&mut self, text: &'t str, pos: usize, base: usize, starts: u64) {
        let bytes = text.as_bytes();
        debug_assert!(last_start(base, starts) + 8 <= bytes.len());
        debug_assert!(self.ids.capacity() - self.ids.len() >= last_start(base, starts) - pos + RECENT_IDS);
        let mut len = self.ids.len();
        let mut out = self.ids.as_mut_ptr();
        let whole = self.encoder.whole_finder();
        let mut pieces = block_pieces(pos, base, starts);
        while let Some((start, end)) = pieces.next() {
            let short = end - start <= 8;
            // SAFETY: every piece of the block ends 8 bytes or more before the text's end (checked by the caller
            // for the last one).
            if short && let Some(id) = unsafe { whole.at(bytes, start, end - start) } {
                // SAFETY: room for the block's ids, at most one per byte, was made (`pieces_to`); the pieces
                // before this one took at most one id per byte of theirs.
                unsafe { out.add(len).write(id) };
                len += 1;
                continue;
            }
            if short
                // SAFETY: as above.
                && let Some((ids, count)) = unsafe { self.encoder.recent_at(self.scratch, bytes, start, end - start) }
            {
                // SAFETY: room as above, and `RECENT_IDS` more: the piece's ids are at most one per byte of it
                // (`Recent::put` holds no other), the rest of the array is written over by the ids that follow.
                unsafe { out.add(len).cast::<[u32; RECENT_IDS]>().write_unaligned(*ids) };
                len += count;
                continue;
            }
            // SAFETY: the ids up to `len` were written.
            unsafe { self.ids.set_len(len) };
            if let Some(after) = pieces.next_end()
                && after - end <= 8
            {
                // SAFETY: the next piece ends 8 bytes or more before the text's end, as every one here.
                unsafe { whole.prefetch_at(bytes, end, after - end) };
            }
            let result = if short {
                self.encoder.encode_not_whole_in(bytes, start, end, self.scratch, self.ids)
            } else {
                self.encoder.encode_next_in(bytes, start, end, self.scratch, self.ids)
            };
            if result.is_err() {
                self.stop_on(&text[start..end], result);
                return;
            }
            (len, out) = (self.ids.len(), self.ids.as_mut_ptr());
        }
        // SAFETY: as above.
        unsafe { self.ids.set_len(len) };
    }

    /// Whether `piece` is to be encoded: nothing stopped the text yet, the encoder can index it, and room for
    /// its ids (at most one per byte) was had — or refused here, so that no push in the encoder grows the list
    /// (growing it cannot fail softly). One comparison per piece.
    #[inline(always)]
    fn room_for(&mut self, piece: &'t str) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        if piece.len() >= u32::MAX as usize {
            *self.stopped = Some((piece, Stop::TooLong)); // the encoder indexes symbols with u32
            return false;
        }
        if self.ids.capacity() - self.ids.len() < piece.len() && self.grow_ids(piece).is_err() {
            let bytes = (self.ids.len() + piece.len()).saturating_mul(size_of::<u32>());
            *self.stopped = Some((piece, Stop::OutOfMemory(bytes)));
            return false;
        }
        true
    }

    /// Room for the ids of `piece` and, at the rate of ids per byte so far, of the rest of the text (an eighth
    /// more), so that a text that needs more ids than reserved up front (`id_room::reserve`) moves them once
    /// rather than at each doubling. 10 MB of base64 (o200k, 6.8 M ids) moved twice, 3.3 M → 6.7 M → 13.3 M
    /// ids, each time into pages new to the process; then once, to ~7 M (first call 490–531 → 321–335 ms; it
    /// now has room for an id per byte from the start). At least half as much again as is there, so that a
    /// rate that keeps rising still grows geometrically — but never more than the bytes left in the text, as
    /// no id takes less than a byte: the block loop asks room for a block's bytes, and near the end of a text
    /// whose up-front room was just enough (4 MB of random digits, o200k: 1.33 M ids) that grew the ids by
    /// half, 5.3 → 8 MB, and then moved them back to fit.
    #[cold]
    #[inline(never)]
    fn grow_ids(&mut self, piece: &'t str) -> std::result::Result<(), std::collections::TryReserveError> {
        let done = (piece.as_ptr() as usize).wrapping_sub(self.text.as_ptr() as usize);
        let made = self.ids.len() - self.first_id;
        let left = self.text.len().checked_sub(done); // None: a piece from elsewhere
        let expected = match left {
            Some(left) if done >= 1 << 12 => usize::try_from(made as u128 * left as u128 / done as u128),
            _ => Ok(0), // too little done to tell, or a piece from elsewhere
        }
        .unwrap_or(usize::MAX);
        let wanted = expected.saturating_add(expected / 8).max(self.ids.len() / 2);
        let room = piece.len().max(left.map_or(wanted, |left| wanted.min(left)));
        crate::error::try_grow_to(self.ids, self.ids.len().saturating_add(room))
    }

    #[inline(always)]
    fn stop_on(&mut self, piece: &'t str, result: std::result::Result<(), PieceError>) {
        match result {
            Ok(()) => {}
            Err(PieceError::UnknownByte(offset)) => *self.stopped = Some((piece, Stop::UnknownByte(offset))),
            Err(PieceError::OutOfMemory(bytes)) => *self.stopped = Some((piece, Stop::OutOfMemory(bytes))),
        }
    }
}

/// A piece the encoder cannot index with u32: refused rather than wrapped around.
#[cold]
fn piece_too_long(len: usize) -> Error {
    Error::value(format!(
        "a piece of {len} bytes (one word without pre-tokenization, e.g. a whole genome) is more than can be \
         encoded at once (4 GiB); encode it in parts"
    ))
}

/// Character index of byte offset `at` in `text` (clamped to the text).
pub fn char_position(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text[..at].chars().count()
}

/// Byte offset in `whole` of `piece`, a slice of `normalized` (which is `part` or a lowercased copy of it;
/// `part` is a slice of `whole`). Lowercasing can change lengths, so then the offset is approximate.
fn offset_in(whole: &str, part: &str, normalized: &str, piece: &str) -> usize {
    let part_start = (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize);
    let in_normalized = (piece.as_ptr() as usize).saturating_sub(normalized.as_ptr() as usize);
    part_start + in_normalized.min(part.len())
}

/// An error that says "at character N" of a part of a text, said of the whole text (`chars_before` characters
/// precede the part).
fn at_character_from(error: Error, chars_before: usize) -> Error {
    if chars_before == 0 {
        return error;
    }
    restating_position(error, |n| format!("at character {}", chars_before + n))
}

/// `error` with its "at character N" restated by `restate(N)`.
fn restating_position(mut error: Error, restate: impl FnOnce(usize) -> String) -> Error {
    const AT: &str = "at character ";
    if let Some(start) = error.message.find(AT) {
        let digits = &error.message[start + AT.len()..];
        let len = digits.bytes().take_while(u8::is_ascii_digit).count();
        if let Ok(n) = digits[..len].parse::<usize>() {
            error.message.replace_range(start..start + AT.len() + len, &restate(n));
        }
    }
    error
}

/// An error about `text` (a valid stretch starting at byte `offset` of the bytes given to `encode_bytes`) that
/// says "at character N" of the stretch: said as the byte offset in the bytes instead, which is what their
/// caller can look up.
fn in_bytes(error: Error, text: &str, offset: usize) -> Error {
    restating_position(error, |n| {
        let byte = text.char_indices().nth(n).map_or(text.len(), |(b, _)| b);
        format!("at byte {}", offset + byte)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::{Alphabet, Silent, TrainConfig, train};
    use crate::vocab::SymbolStyle;

    fn trained(words: &[(&str, u64)], vocab_size: usize, mode: Mode, unk: Option<&str>) -> Tokenizer {
        let config = TrainConfig {
            vocab_size,
            style: SymbolStyle { mode, prefix: None, suffix: None },
            special_tokens: vec!["<eot>".into()],
            unk_token: unk.map(String::from),
            alphabet: Alphabet::All,
            limit_alphabet: None,
            min_frequency: 0,
            max_token_length: None,
            tie_break: TieBreak::FirstSeen,
        };
        let t = train(words, &config, &mut Silent).unwrap();
        Tokenizer::new(t.vocab, Pattern::Gpt2, false, &["<eot>".into()]).unwrap()
    }

    fn all(tok: &Tokenizer, allowed: bool) -> SpecialPolicy {
        let n = tok.specials.tokens().len();
        SpecialPolicy { allowed: vec![allowed; n], disallowed: vec![true; n] }
    }

    /// Texts handed over in windows of every size encode as they do whole: same ids, same errors (positions
    /// counted from the text's start), with specials allowed, disallowed or ordinary, and with stretches where
    /// no simple cut falls (a window then waits for the next).
    #[test]
    fn windows_encode_as_the_whole_text() {
        let tok = trained(&[("héllo wörld", 5), ("日本語 text", 3), ("low lower", 4)], 300, Mode::Byte, None);
        let n = tok.specials.tokens().len();
        let ordinary = || SpecialPolicy { allowed: vec![false; n], disallowed: vec![false; n] };
        let mut x = 7u64;
        let mut next = move |k: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) % k) as usize
        };
        let words = ["héllo", " wörld", "\n", " ", "日本語", "lowest", "  ", ".\n\n", "<eot>", "ab", "12345"];
        let mut in_many_windows = 0;
        for round in 0..200 {
            let text: String = (0..next(400)).map(|_| words[next(words.len() as u64)]).collect();
            let text = if round % 5 == 0 { text.replace("<eot>", "") } else { text };
            let chars: Vec<char> = text.chars().collect();
            for policy in [all(&tok, true), all(&tok, false), ordinary()] {
                let whole = tok.encode(&text, &policy).map_err(|e| e.message);
                let window = 1 + next(40);
                let mut at = 0;
                let mut handed = 0;
                let parts = tok
                    .encode_windows(&policy, text.len(), |buffer| {
                        let end = (at + window).min(chars.len());
                        buffer.extend(&chars[at..end]);
                        let window = Window { chars: end - at, more: end < chars.len() };
                        at = end;
                        handed += 1;
                        Ok(window)
                    })
                    .map_err(|e| e.message);
                assert_eq!(parts, whole, "round {round}, windows of {window}: {text:?}");
                in_many_windows += usize::from(handed > 2);
            }
        }
        assert!(in_many_windows > 300, "texts handed over in more than two windows: {in_many_windows}");
    }

    #[test]
    fn a_first_encode_inside_a_callers_pool_does_not_hang() {
        // The first encode builds the piece encoder (and a long piece its backtracker) in a OnceLock, on several
        // threads. From a thread of a caller's pool, waiting for that work let the thread take the pool's next
        // text, whose encode waited on the OnceLock this same thread was initialising: a hang.
        use rayon::prelude::*;
        let tok = trained(&[("hello", 5), (" world", 3), ("123", 4)], 280, Mode::Byte, None);
        let policy = all(&tok, false);
        let (done, result) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
            let texts: Vec<String> = (0..64).map(|i| format!("hello world {i}{}", "1".repeat(300))).collect();
            let ids: Vec<Vec<u32>> =
                pool.install(|| texts.par_iter().map(|t| tok.encode(t, &policy).unwrap()).collect());
            let alone = Tokenizer::new(tok.vocab.clone(), Pattern::Gpt2, false, &["<eot>".into()]).unwrap();
            let _ = done.send(texts.iter().zip(&ids).all(|(t, ids)| alone.encode(t, &policy).unwrap() == *ids));
        });
        let same = result.recv_timeout(std::time::Duration::from_secs(60)).expect("encoding in a 1-thread pool hung");
        assert!(same, "ids differ from encoding one text at a time");
    }

    /// A text whose ids just fill the room reserved up front (a third of its bytes, below `id_room::WHOLE_ROOM`)
    /// grows it, near its end, by no more than the bytes left (a block's worth), not by half the ids.
    #[test]
    fn ids_that_just_fit_grow_by_no_more_than_the_bytes_left() {
        let tok = trained(&[(" ab", 5)], 270, Mode::Byte, None);
        let policy = all(&tok, false);
        let text = " ab".repeat(80_000);
        assert!(text.len() < *id_room::WHOLE_ROOM.start());
        let ids = tok.encode(&text, &policy).unwrap();
        assert_eq!(ids.len(), 80_000, "\" ab\" is one token");
        assert!(ids.capacity() <= ids.len() + 128, "{} ids, room for {}", ids.len(), ids.capacity());
    }

    /// A text that needs more ids than reserved up front (a third of its bytes, below `id_room::WHOLE_ROOM`)
    /// grows its ids by the rate so far, once, rather than doubling; one whose rate rises midway grows again.
    /// Either way the ids are the pieces' own.
    #[test]
    fn ids_grow_by_the_rate_so_far() {
        let tok = trained(&[("hello", 5), (" world", 3)], 270, Mode::Byte, None);
        let policy = all(&tok, false);
        let dense = "q,".repeat(100_000); // a token per byte
        let ids = tok.encode(&dense, &policy).unwrap();
        assert_eq!(ids, tok.encode("q,", &policy).unwrap().repeat(100_000));
        // Doubling from a third of the bytes would have ended at 267 K ids of room.
        assert!(ids.capacity() <= ids.len() * 9 / 8 + 64, "{} ids, room for {}", ids.len(), ids.capacity());
        let mixed = format!("{}{dense}", " hello world".repeat(4_000));
        assert!(mixed.len() < *id_room::WHOLE_ROOM.start());
        let ids = tok.encode(&mixed, &policy).unwrap();
        let mut expected = tok.encode(&" hello world".repeat(4_000), &policy).unwrap();
        expected.extend(tok.encode(&dense, &policy).unwrap());
        assert_eq!(ids, expected);
    }

    #[test]
    fn byte_mode_round_trips_anything() {
        let tok = trained(&[("hello", 5), (" world", 3)], 270, Mode::Byte, None);
        let text = "hello world — ünïcödé 🎉\0";
        let ids = tok.encode(text, &all(&tok, false)).unwrap();
        assert_eq!(tok.decode_bytes(&ids).unwrap(), text.as_bytes());
    }

    #[test]
    fn special_tokens_follow_the_policy() {
        let tok = trained(&[("hello", 5)], 262, Mode::Byte, None);
        let err = tok.encode("a<eot>b", &all(&tok, false)).unwrap_err();
        assert!(err.message.contains("allowed_special"), "{}", err.message);
        let ids = tok.encode("a<eot>b", &all(&tok, true)).unwrap();
        assert_eq!(ids[1], 0);
        let ordinary = SpecialPolicy { allowed: vec![false], disallowed: vec![false] };
        let ids = tok.encode("a<eot>b", &ordinary).unwrap();
        assert!(!ids.contains(&0));
    }

    #[test]
    fn unknown_characters_name_the_character_and_position() {
        let tok = trained(&[("hug", 5)], 8, Mode::Char, None);
        let err = tok.encode("hum", &all(&tok, false)).unwrap_err();
        assert!(err.message.contains("'m'") || err.message.contains("\"m\""), "{}", err.message);
        assert!(err.message.contains("character 2"), "{}", err.message);
    }

    #[test]
    fn the_first_unknown_character_is_named_with_others_after_it() {
        // Encoding stops at the first bad character, wherever it is (first piece, last, or between), and every
        // piece of a text without one is encoded.
        let tok = trained(&[("hug", 5), (" hug", 7)], 12, Mode::Char, None);
        for words in 1..100 {
            for bad in 0..words {
                let text: Vec<&str> = (0..words).map(|w| if w == bad { "hum" } else { "hug" }).collect();
                let text = text.join(" ") + " mug hum";
                let at = 4 * bad + 2;
                let err = tok.encode(&text, &all(&tok, false)).unwrap_err();
                assert!(err.message.contains(&format!("character {at}")), "{words} {bad}: {}", err.message);
            }
            let fine: Vec<&str> = vec!["hug"; words];
            let ids = tok.encode(&fine.join(" "), &all(&tok, false)).unwrap();
            assert_eq!(ids.len(), words, "every piece encoded");
        }
    }

    /// A text encoded block by block (its pieces of up to 8 bytes looked up whole, their ids written past the
    /// list's length until the block ends) gives the ids of its pieces encoded one by one: pieces of every length,
    /// tokens and not, near the text's end and far from it.
    #[test]
    fn blocks_encode_as_their_pieces_one_by_one() {
        let words = [("hello", 9), (" world", 7), (" lower", 5), (" lowest", 4), (" newest", 3), ("!!", 2)];
        let tok = trained(&words, 300, Mode::Byte, None);
        let policy = all(&tok, false);
        let parts =
            [" hello", " world", " lowerest", " low", " newer", " abcdefghijk", " xyz", "!!", " 1234", "\n", "  "];
        let mut x = 11u64;
        let mut blocks = 0;
        for round in 0..300 {
            let text: String = (0..round % 150)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    parts[(x >> 33) as usize % parts.len()]
                })
                .collect();
            let one_by_one: Vec<u32> = tok
                .piece_spans(&text)
                .unwrap()
                .into_iter()
                .flat_map(|(start, end)| tok.encode_single_piece(&text.as_bytes()[start..end]).unwrap())
                .collect();
            assert_eq!(tok.encode(&text, &policy).unwrap(), one_by_one, "{text:?}");
            blocks += text.len() / 64;
        }
        assert!(blocks > 1000, "{blocks} blocks");
    }

    #[test]
    fn decode_rejects_ids_out_of_range() {
        let tok = trained(&[("hug", 5)], 8, Mode::Char, Some("[UNK]"));
        let err = tok.decode_bytes(&[1, 99]).unwrap_err();
        assert!(err.message.contains("id 99 (at position 1)"), "{}", err.message);
    }
}
