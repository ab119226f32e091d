//! The vocabulary: what a token is, how a word becomes its initial symbols, and the merge table.
//!
//! Tokens are identified by their *display string* — exactly as the textbook algorithm and HF tokenizers do:
//! two merges that produce the same string produce the same token. Each token also keeps the raw bytes it
//! decodes to (without any `##` prefix or end-of-word suffix marker).
//!
//! Id layout (fixed, documented in the README): special tokens first, then the base alphabet sorted by the
//! code points of its display strings, then one id per merge that produced a new string, in merge order.

use std::hash::BuildHasher;
use std::sync::OnceLock;

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::error::{Error, Result, py_repr, py_repr_bytes};

/// The error for a special token given twice (training, and the loaders' lists of special tokens).
pub(crate) fn special_listed_twice(token: &str) -> Error {
    Error::value(format!("special token {} is listed twice: list each special token once", py_repr(token)))
}

/// How a word is cut into initial symbols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Units are UTF-8 bytes, displayed with GPT-2's byte→unicode table (space → `Ġ`).
    Byte,
    /// Units are Unicode scalar values (characters), displayed as themselves.
    Char,
}

impl Mode {
    pub fn parse(name: &str) -> Result<Mode> {
        match name {
            "byte" => Ok(Mode::Byte),
            "char" => Ok(Mode::Char),
            other => Err(Error::value(format!(
                "unknown mode {other:?}: use \"byte\" (256-byte base vocabulary, GPT-2 style) or \"char\" \
                 (the characters seen in the corpus)"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Byte => "byte",
            Mode::Char => "char",
        }
    }
}

/// Everything that decides the display string of an initial symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolStyle {
    pub mode: Mode,
    /// Put in front of every unit that is not the first of its word (WordPiece-style `##`).
    pub prefix: Option<String>,
    /// Put after the last unit of every word (e.g. `</w>`).
    pub suffix: Option<String>,
}

/// GPT-2's reversible byte → printable character table: printable Latin-1 bytes map to themselves,
/// the other 68 bytes to U+0100.. in byte order. Space (0x20) becomes `Ġ` (U+0120).
pub const fn byte_to_char_table() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut shifted = 0u32;
    let mut b = 0usize;
    while b < 256 {
        let printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        let code = if printable {
            b as u32
        } else {
            shifted += 1;
            255 + shifted
        };
        table[b] = match char::from_u32(code) {
            Some(c) => c,
            None => '\0',
        };
        b += 1;
    }
    table
}

pub static BYTE_TO_CHAR: [char; 256] = byte_to_char_table();

/// Inverse of [`BYTE_TO_CHAR`].
pub fn char_to_byte(c: char) -> Option<u8> {
    let code = c as u32;
    if code < 256 {
        let b = code as u8;
        if BYTE_TO_CHAR[b as usize] == c {
            return Some(b);
        }
        return None;
    }
    if (256..256 + 68).contains(&code) {
        // Shifted bytes are assigned in increasing byte order among the non-printable ones.
        let wanted = code - 256;
        let mut seen = 0u32;
        for (b, &c) in BYTE_TO_CHAR.iter().enumerate() {
            if c as u32 >= 256 {
                if seen == wanted {
                    return Some(b as u8);
                }
                seen += 1;
            }
        }
    }
    None
}

/// Display form of raw bytes in byte mode (`b" is"` → `"Ġis"`).
pub fn bytes_to_display(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| BYTE_TO_CHAR[b as usize]).collect()
}

/// One vocabulary entry.
#[derive(Clone, Debug)]
pub struct Token {
    /// What the token decodes to (markers removed).
    pub bytes: Box<[u8]>,
    /// What users see: `Ġis`, `##ug`, `<|endoftext|>`.
    pub display: Box<str>,
    /// Number of units (bytes in byte mode, characters in char mode) — the length `max_token_length` limits.
    pub units: u32,
    pub special: bool,
    /// Carries the continuing-subword prefix (it does not start a word).
    pub continues: bool,
    /// Carries the end-of-word suffix.
    pub ends_word: bool,
}

impl Token {
    /// What an id no entry uses holds (tiktoken vocabularies have gaps below their special tokens; truncating a
    /// vocabulary with ids of its own leaves them): no bytes, no display string, special.
    pub fn unused() -> Token {
        Token {
            bytes: Box::default(),
            display: Box::default(),
            units: 0,
            special: true,
            continues: false,
            ends_word: false,
        }
    }

    /// A token of the base alphabet (one unit), from `SymbolStyle::parse_base`'s parts.
    pub fn base(bytes: Vec<u8>, display: &str, continues: bool, ends_word: bool) -> Token {
        Token { bytes: bytes.into(), display: display.into(), units: 1, special: false, continues, ends_word }
    }
}

/// A learned merge: `left + right → result`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Merge {
    pub left: u32,
    pub right: u32,
    pub result: u32,
}

#[derive(Clone, Debug)]
pub struct Vocab {
    pub style: SymbolStyle,
    pub tokens: Vec<Token>,
    /// Display string → id (`Vocab::id_of`); the strings are the tokens' own.
    pub by_display: DisplayIndex,
    pub num_special: usize,
    pub num_base: usize,
    /// The merges in rank order (read by `merges`, added by `push_merge` or `add_merge`, changed by `merges_mut`).
    merges: Vec<Merge>,
    /// (left, right) → (rank, result), made from `merges` when first asked for (`merge_rank`). A pair merged
    /// twice keeps its later rank, as HF tokenizers does. Only the general encoding path, the piece encoder of a
    /// vocabulary that encodes by its listed merges, and training on from a vocabulary read it: a tiktoken
    /// file's encoder does not (its rule needs no merge list), and o200k_base loaded with the map made at once
    /// held 4.4 MB more (cl100k_base 2.2 MB).
    merge_rank: OnceLock<FxHashMap<(u32, u32), (u32, u32)>>,
    pub unk: Option<u32>,
    /// HF's `fuse_unk`: a run of unknown units in one word becomes a single `unk` (else one `unk` per unit).
    /// Only vocabularies read from HF files set it, and only in char mode.
    pub fuse_unk: bool,
    /// Byte mode without markers: byte → id of its base token, for the encoder's fast path.
    pub(crate) byte_ids: Option<[u32; 256]>,
    /// Ids come from a file (tiktoken, GPT-2), not from bytepair's layout (specials, base, merges in order).
    pub explicit_ids: bool,
    /// tiktoken's rule: any two adjacent parts whose concatenation is a token may merge (lowest rank first);
    /// otherwise only the listed merges.
    pub rank_by_bytes: bool,
    /// HF's `ignore_merges`: a piece that is a token is that token, whatever the merges would make of it.
    pub whole_pieces: bool,
}

/// The ids of the tokens by their display strings, which it does not copy: an entry is an id, its key the
/// token's `display`. A `FxHashMap<String, u32>` held a second copy of every string in 32-byte entries: a
/// loaded o200k_base held 9 MB more (live bytes 73 → 64 MB; r50k_base 19 → 17 MB). The tokens must not change
/// their display strings while indexed: a token is indexed once it is in place, and the index rebuilt after
/// removing any.
#[derive(Clone, Debug, Default)]
pub struct DisplayIndex {
    table: HashTable<u32>,
}

impl DisplayIndex {
    fn hash(display: &str) -> u64 {
        FxBuildHasher.hash_one(display)
    }

    /// An index of the tokens at `ids` (of a display string given twice, the later id, as a map's `collect`).
    pub fn of(tokens: &[Token], ids: impl Iterator<Item = u32>) -> DisplayIndex {
        let mut index = DisplayIndex::default();
        for id in ids {
            index.insert(tokens, id);
        }
        index
    }

    /// Room for `additional` more tokens, so that loading a vocabulary does not regrow the table.
    pub fn reserve(&mut self, tokens: &[Token], additional: usize) {
        self.table.reserve(additional, |&id| Self::hash(&tokens[id as usize].display));
    }

    /// The id of the token displayed as `display`.
    pub fn get(&self, tokens: &[Token], display: &str) -> Option<u32> {
        self.table.find(Self::hash(display), |&id| *tokens[id as usize].display == *display).copied()
    }

    /// Indexes token `id` by its display string; a token already indexed under that string is replaced (as
    /// a map's `insert` replaces the value).
    pub fn insert(&mut self, tokens: &[Token], id: u32) {
        let display = tokens[id as usize].display.as_ref();
        let hash = Self::hash(display);
        match self.table.find_mut(hash, |&other| *tokens[other as usize].display == *display) {
            Some(existing) => *existing = id,
            None => {
                self.table.insert_unique(hash, id, |&other| Self::hash(&tokens[other as usize].display));
            }
        }
    }

    /// The indexed ids, in no particular order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.table.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

impl SymbolStyle {
    /// Display string of a unit (already in display form) at a position of its word.
    pub fn symbol_display(&self, unit_display: &str, first: bool, last: bool, out: &mut String) {
        out.clear();
        if !first && let Some(p) = &self.prefix {
            out.push_str(p);
        }
        out.push_str(unit_display);
        if last && let Some(s) = &self.suffix {
            out.push_str(s);
        }
    }

    /// Calls `f(unit_display, unit_bytes, byte_offset)` for each unit of `word`.
    pub fn for_each_unit(&self, word: &str, mut f: impl FnMut(&str, &[u8], usize)) {
        let mut buf = [0u8; 4];
        match self.mode {
            Mode::Byte => {
                for (i, &b) in word.as_bytes().iter().enumerate() {
                    let c = BYTE_TO_CHAR[b as usize];
                    f(c.encode_utf8(&mut buf), &[b], i);
                }
            }
            Mode::Char => {
                for (i, c) in word.char_indices() {
                    let s = c.encode_utf8(&mut buf);
                    let bytes = &word.as_bytes()[i..i + c.len_utf8()];
                    f(s, bytes, i);
                }
            }
        }
    }

    pub fn unit_count(&self, word: &str) -> usize {
        match self.mode {
            Mode::Byte => word.len(),
            Mode::Char => word.chars().count(),
        }
    }

    /// Splits a base-symbol display string into (unit display, has prefix, has suffix), or None when it is
    /// not exactly one unit with optional markers.
    pub fn parse_base(&self, display: &str) -> Option<(Vec<u8>, bool, bool)> {
        let try_parse = |s: &str, prefixed: bool| -> Option<(Vec<u8>, bool, bool)> {
            let (core, suffixed) = match &self.suffix {
                Some(suf) if s.len() > suf.len() && s.ends_with(suf.as_str()) => (&s[..s.len() - suf.len()], true),
                _ => (s, false),
            };
            let mut chars = core.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            let bytes = match self.mode {
                Mode::Byte => vec![char_to_byte(c)?],
                Mode::Char => core.as_bytes().to_vec(),
            };
            Some((bytes, prefixed, suffixed))
        };
        if let Some(p) = &self.prefix
            && let Some(rest) = display.strip_prefix(p.as_str())
            && let Some(parsed) = try_parse(rest, true)
        {
            return Some(parsed);
        }
        try_parse(display, false)
    }
}

impl Vocab {
    /// The units (bytes or characters) token `id` was made of; 1 for a special token.
    #[inline]
    pub fn units(&self, id: u32) -> usize {
        self.tokens[id as usize].units.max(1) as usize
    }

    /// A vocabulary of these tokens (not indexed yet) and no merges, laid out as bytepair lays out ids (not
    /// `explicit_ids`), with the rules' defaults.
    pub(crate) fn of_tokens(style: SymbolStyle, tokens: Vec<Token>) -> Vocab {
        Vocab {
            style,
            tokens,
            by_display: DisplayIndex::default(),
            num_special: 0,
            num_base: 0,
            merges: Vec::new(),
            merge_rank: OnceLock::new(),
            unk: None,
            fuse_unk: false,
            byte_ids: None,
            explicit_ids: false,
            rank_by_bytes: false,
            whole_pieces: false,
        }
    }

    /// A vocabulary with special tokens and a base alphabet (display strings, any order: they are sorted here).
    pub fn new(style: SymbolStyle, specials: &[String], unk: Option<&str>, base: &[String]) -> Result<Vocab> {
        let mut vocab = Vocab::of_tokens(style, Vec::new());
        for s in specials {
            if vocab.id_of(s).is_some() {
                return Err(special_listed_twice(s));
            }
            if s.is_empty() {
                return Err(Error::value("a special token cannot be the empty string".to_string()));
            }
            vocab.refuse_a_display_lookalike(s, "special token")?;
            vocab.push_token(Token {
                bytes: s.as_bytes().into(),
                display: s.as_str().into(),
                units: 1,
                special: true,
                continues: false,
                ends_word: false,
            });
        }
        if let Some(u) = unk {
            if vocab.id_of(u).is_none() {
                if u.is_empty() {
                    return Err(Error::value("unk_token cannot be the empty string".to_string()));
                }
                vocab.refuse_a_display_lookalike(u, "unk_token")?;
                vocab.push_token(Token {
                    bytes: u.as_bytes().into(),
                    display: u.into(),
                    units: 1,
                    special: true,
                    continues: false,
                    ends_word: false,
                });
            }
            vocab.unk = vocab.id_of(u);
        }
        vocab.num_special = vocab.tokens.len();

        let mut sorted: Vec<&String> = base.iter().collect();
        sorted.sort(); // byte order of UTF-8 == code-point order
        sorted.dedup();
        for display in sorted {
            if vocab.id_of(display).is_some() {
                continue; // a special token with the same text already has the id
            }
            let Some((bytes, continues, ends_word)) = vocab.style.parse_base(display) else {
                return Err(Error::value(format!(
                    "{} is not a valid base symbol in {} mode: a base symbol is one {}{}{}",
                    py_repr(display),
                    vocab.style.mode.name(),
                    if vocab.style.mode == Mode::Byte { "byte (in GPT-2 display form)" } else { "character" },
                    if vocab.style.prefix.is_some() { ", optionally after the continuing-subword prefix" } else { "" },
                    if vocab.style.suffix.is_some() { ", optionally before the end-of-word suffix" } else { "" },
                )));
            };
            vocab.push_token(Token::base(bytes, display, continues, ends_word));
        }
        vocab.num_base = vocab.tokens.len() - vocab.num_special;
        vocab.rebuild_byte_ids();
        Ok(vocab)
    }

    /// In byte mode, tokens are known by their display form (a byte 0xB6 is "¶", the bytes " the" are "Ġthe"),
    /// and a special token shares the id of a token displayed as its text. That is harmless when both spell the
    /// same bytes ("<|endoftext|>" is both), but a special "¶" or "Ġthe" took the id of byte 0xB6 or of the
    /// merge " the": ordinary text then encoded to the special's id and decoded to other text. Such a text (only
    /// display characters, not all of them printable ASCII) is refused.
    fn refuse_a_display_lookalike(&self, text: &str, what: &str) -> Result<()> {
        if self.style.mode != Mode::Byte {
            return Ok(());
        }
        let displayed: Option<Vec<u8>> = text.chars().map(char_to_byte).collect();
        match displayed {
            Some(bytes) if bytes != text.as_bytes() => Err(Error::value(format!(
                "{what} {} is also how the bytes {} are shown in a byte-level vocabulary, so the two would share an \
                 id and ordinary text would decode wrongly; name it with printable ASCII only (such as \
                 \"<|name|>\"), or include a character that is not one of the 256 byte display characters",
                py_repr(text),
                py_repr_bytes(&bytes),
            ))),
            _ => Ok(()),
        }
    }

    fn push_token(&mut self, token: Token) -> u32 {
        let id = self.tokens.len() as u32;
        self.tokens.push(token);
        self.by_display.insert(&self.tokens, id);
        id
    }

    /// Token id of each byte, when the vocabulary is byte-level without word markers.
    pub fn byte_ids(&self) -> Option<&[u32; 256]> {
        self.byte_ids.as_ref()
    }

    pub(crate) fn rebuild_byte_ids(&mut self) {
        self.byte_ids = None;
        if self.style.mode != Mode::Byte || self.style.prefix.is_some() || self.style.suffix.is_some() {
            return;
        }
        let mut ids = [u32::MAX; 256];
        let mut buf = [0u8; 4];
        for (b, slot) in ids.iter_mut().enumerate() {
            if let Some(id) = self.id_of(BYTE_TO_CHAR[b].encode_utf8(&mut buf)) {
                *slot = id;
            }
        }
        self.byte_ids = Some(ids);
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// The id of the token displayed as `display`.
    pub fn id_of(&self, display: &str) -> Option<u32> {
        self.by_display.get(&self.tokens, display)
    }

    /// `id_of` for a display string known to be a token's.
    pub fn known_id(&self, display: &str) -> u32 {
        self.id_of(display).unwrap_or_else(|| panic!("{display:?} is not a token"))
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Display string of `left + right`: the right part's continuing-subword prefix is dropped.
    pub fn merged_display(&self, left: u32, right: u32) -> String {
        let a = &self.tokens[left as usize];
        let b = &self.tokens[right as usize];
        let b_display = match (&self.style.prefix, b.continues) {
            (Some(p), true) => &b.display[p.len()..],
            _ => b.display.as_ref(),
        };
        let mut s = String::with_capacity(a.display.len() + b_display.len());
        s.push_str(&a.display);
        s.push_str(b_display);
        s
    }

    /// Records the merge `left + right` and returns the id of its result (an existing id when the merged
    /// string is already a token).
    pub fn push_merge(&mut self, left: u32, right: u32) -> u32 {
        let display = self.merged_display(left, right);
        let result = match self.id_of(&display) {
            Some(id) => id,
            None => {
                let a = &self.tokens[left as usize];
                let b = &self.tokens[right as usize];
                let bytes = [&a.bytes[..], &b.bytes[..]].concat();
                let token = Token {
                    bytes: bytes.into(),
                    display: display.into(),
                    units: a.units + b.units,
                    special: false,
                    continues: a.continues,
                    ends_word: b.ends_word,
                };
                self.push_token(token)
            }
        };
        self.add_merge(Merge { left, right, result });
        result
    }

    /// The merges, in rank order.
    pub fn merges(&self) -> &[Merge] {
        &self.merges
    }

    /// Appends a merge whose tokens are in place (the next rank).
    pub fn add_merge(&mut self, merge: Merge) {
        let rank = self.merges.len() as u32;
        self.merges.push(merge);
        if let Some(ranks) = self.merge_rank.get_mut() {
            ranks.insert((merge.left, merge.right), (rank, merge.result));
        }
    }

    /// The merges, to change them in place (the map of their ranks is made again when next asked for).
    pub fn merges_mut(&mut self) -> &mut Vec<Merge> {
        self.merge_rank.take();
        &mut self.merges
    }

    /// (left, right) → (rank, result) of every merge; a pair merged twice keeps its later rank.
    ///
    /// ```
    /// use bytepair::vocab::{Mode, SymbolStyle, Vocab};
    /// let style = SymbolStyle { mode: Mode::Char, prefix: None, suffix: None };
    /// let mut vocab = Vocab::new(style, &[], None, &["a".into(), "b".into()]).unwrap();
    /// let ab = vocab.push_merge(0, 1); // "a" + "b"
    /// assert_eq!(vocab.merge_rank()[&(0, 1)], (0, ab));
    /// ```
    pub fn merge_rank(&self) -> &FxHashMap<(u32, u32), (u32, u32)> {
        self.merge_rank.get_or_init(|| {
            self.merges.iter().enumerate().map(|(rank, m)| ((m.left, m.right), (rank as u32, m.result))).collect()
        })
    }

    /// Appends the initial symbols of `word` to `out`. Units missing from the vocabulary become the unknown
    /// token, or an error naming the unit when there is none.
    pub fn initial_symbols(&self, word: &str, out: &mut Vec<u32>) -> std::result::Result<(), UnknownUnit> {
        if let Some(ids) = &self.byte_ids {
            for (i, &b) in word.as_bytes().iter().enumerate() {
                let id = ids[b as usize];
                if id != u32::MAX {
                    out.push(id);
                } else if let Some(unk) = self.unk {
                    out.push(unk);
                } else {
                    return Err(UnknownUnit { unit: BYTE_TO_CHAR[b as usize].to_string(), raw: vec![b], offset: i });
                }
            }
            return Ok(());
        }
        let n = self.style.unit_count(word);
        let mut display = String::new();
        let mut k = 0usize;
        let mut failure = None;
        let mut after_unknown = false; // the previous unit was unknown (for fuse_unk)
        self.style.for_each_unit(word, |unit, raw, offset| {
            if failure.is_some() {
                return;
            }
            self.style.symbol_display(unit, k == 0, k + 1 == n, &mut display);
            k += 1;
            match self.id_of(&display) {
                Some(id) => {
                    out.push(id);
                    after_unknown = false;
                }
                None => match self.unk {
                    Some(unk) => {
                        if !(self.fuse_unk && after_unknown) {
                            out.push(unk);
                        }
                        after_unknown = true;
                    }
                    None => failure = Some(UnknownUnit { unit: unit.to_string(), raw: raw.to_vec(), offset }),
                },
            }
        });
        match failure {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }
}

/// A unit of the input that has no base token (and there is no unknown token).
#[derive(Debug, Clone)]
pub struct UnknownUnit {
    /// Display form of the unit.
    pub unit: String,
    /// Its raw bytes.
    pub raw: Vec<u8>,
    /// Byte offset inside the word.
    pub offset: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_merge_rank_map_follows_the_merges_however_they_change() {
        let base: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let mut vocab = Vocab::new(style(Mode::Char, None), &[], None, &base).unwrap();
        let ab = vocab.push_merge(0, 1);
        let expected = |v: &Vocab| -> FxHashMap<(u32, u32), (u32, u32)> {
            let mut ranks = FxHashMap::default();
            for (rank, m) in v.merges().iter().enumerate() {
                ranks.insert((m.left, m.right), (rank as u32, m.result));
            }
            ranks
        };
        assert_eq!(*vocab.merge_rank(), expected(&vocab), "made when first asked for");
        let abc = vocab.push_merge(ab, 2);
        vocab.add_merge(Merge { left: 0, right: 1, result: ab }); // a pair merged twice: its later rank
        assert_eq!(vocab.merge_rank()[&(0, 1)], (2, ab), "kept up to date once made");
        assert_eq!(*vocab.merge_rank(), expected(&vocab));
        vocab.merges_mut().truncate(1);
        assert_eq!(*vocab.merge_rank(), expected(&vocab), "made again after a change in place");
        assert!(!vocab.merge_rank().contains_key(&(ab, 2)) && abc == 4);
    }

    #[test]
    fn gpt2_byte_table_is_a_bijection_in_code_point_order() {
        assert_eq!(BYTE_TO_CHAR[b' ' as usize], 'Ġ');
        assert_eq!(BYTE_TO_CHAR[b'\n' as usize], 'Ċ');
        assert_eq!(BYTE_TO_CHAR[b'A' as usize], 'A');
        for b in 0..=255u8 {
            assert_eq!(char_to_byte(BYTE_TO_CHAR[b as usize]), Some(b));
        }
        assert_eq!(char_to_byte('x'), Some(b'x'));
        assert_eq!(char_to_byte('€'), None);
    }

    fn style(mode: Mode, prefix: Option<&str>) -> SymbolStyle {
        SymbolStyle { mode, prefix: prefix.map(String::from), suffix: None }
    }

    #[test]
    fn ids_are_specials_then_sorted_base_then_merges() {
        let base: Vec<String> = ["u", "h", "g"].iter().map(|s| s.to_string()).collect();
        let mut v = Vocab::new(style(Mode::Char, None), &["<s>".into()], Some("[UNK]"), &base).unwrap();
        let names: Vec<&str> = v.tokens.iter().map(|t| t.display.as_ref()).collect();
        assert_eq!(names, ["<s>", "[UNK]", "g", "h", "u"]);
        let ug = v.push_merge(4, 2);
        assert_eq!(&*v.tokens[ug as usize].display, "ug");
        let hug = v.push_merge(3, ug);
        assert_eq!(&*v.tokens[hug as usize].bytes, b"hug");
        // A merge that yields an existing string reuses its id.
        let again = v.push_merge(3, ug);
        assert_eq!(again, hug);
        assert_eq!(v.len(), 7);
    }

    #[test]
    fn prefix_is_dropped_from_the_right_part() {
        let base: Vec<String> = ["t", "##h", "##e"].iter().map(|s| s.to_string()).collect();
        let mut v = Vocab::new(style(Mode::Char, Some("##")), &[], None, &base).unwrap();
        let t = v.known_id("t");
        let h = v.known_id("##h");
        let e = v.known_id("##e");
        let th = v.push_merge(t, h);
        assert_eq!(&*v.tokens[th as usize].display, "th");
        let he = v.push_merge(h, e);
        assert_eq!(&*v.tokens[he as usize].display, "##he");
        assert!(v.tokens[he as usize].continues);
    }

    #[test]
    fn unknown_units_are_reported_or_mapped_to_unk() {
        let base: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let v = Vocab::new(style(Mode::Char, None), &[], None, &base).unwrap();
        let mut out = Vec::new();
        let err = v.initial_symbols("abé", &mut out).unwrap_err();
        assert_eq!((err.unit.as_str(), err.offset), ("é", 2));
        let v = Vocab::new(style(Mode::Char, None), &[], Some("[UNK]"), &base).unwrap();
        out.clear();
        v.initial_symbols("abé", &mut out).unwrap();
        assert_eq!(out, vec![1, 2, 0]);
    }

    #[test]
    fn fuse_unk_makes_one_unk_per_run_of_unknown_units() {
        let base: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let mut v = Vocab::new(style(Mode::Char, None), &[], Some("[UNK]"), &base).unwrap();
        let mut out = Vec::new();
        v.initial_symbols("aéèbç", &mut out).unwrap();
        assert_eq!(out, vec![1, 0, 0, 2, 0]);
        v.fuse_unk = true;
        out.clear();
        v.initial_symbols("aéèbçà", &mut out).unwrap();
        assert_eq!(out, vec![1, 0, 2, 0]);
    }

    #[test]
    fn duplicate_specials_are_rejected() {
        let err = Vocab::new(style(Mode::Byte, None), &["<a>".into(), "<a>".into()], None, &[]).unwrap_err();
        assert!(err.to_string().contains("listed twice"));
    }
}
