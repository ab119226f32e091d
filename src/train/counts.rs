//! Counting words: normalise, cut out special tokens, pre-tokenize, and count each piece.
//!
//! Words keep the order of their first appearance in the corpus: the `first_seen` tie rule depends on it.

use std::io::Read;

use indexmap::IndexMap;
use rustc_hash::FxBuildHasher;

use crate::error::{Error, Result};
use crate::pretokenize::{Pattern, PreTokenizer, Segment, SpecialMatcher};
use crate::tokenizer::Tokenizer;
use crate::vocab::Vocab;

/// Word → count, in order of first appearance.
pub type WordCounts = IndexMap<String, u64, FxBuildHasher>;

/// What to do with bytes that are not valid UTF-8 in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Utf8Errors {
    Strict,
    Replace,
}

impl Utf8Errors {
    pub fn parse(name: &str) -> Result<Utf8Errors> {
        match name {
            "strict" => Ok(Utf8Errors::Strict),
            "replace" => Ok(Utf8Errors::Replace),
            other => Err(Error::value(format!("errors={other:?} is not supported: use \"strict\" or \"replace\""))),
        }
    }
}

pub struct WordCounter {
    pretokenizer: PreTokenizer,
    specials: SpecialMatcher,
    lowercase: bool,
    pub words: WordCounts,
    /// Bytes of text seen so far (for progress and reports).
    pub bytes_seen: u64,
}

impl WordCounter {
    pub fn new(pattern: Pattern, special_tokens: &[String], lowercase: bool) -> Result<WordCounter> {
        Ok(WordCounter {
            pretokenizer: PreTokenizer::new(pattern)?,
            specials: SpecialMatcher::new(special_tokens),
            lowercase,
            words: WordCounts::default(),
            bytes_seen: 0,
        })
    }

    /// The special tokens, which the trained vocabulary must start with.
    pub fn special_tokens(&self) -> &[String] {
        self.specials.tokens()
    }

    /// A tokenizer around a vocabulary trained from these counts: it splits text with the very pre-tokenizer,
    /// special tokens and normaliser that counted them, so training and encoding cannot drift apart.
    pub fn tokenizer(&self, vocab: Vocab) -> Tokenizer {
        Tokenizer {
            vocab,
            pretokenizer: self.pretokenizer.clone(),
            lowercase: self.lowercase,
            specials: self.specials.clone(),
            tie_break: None,
            merge_counts: None,
        }
    }

    /// Counts the words of one document. Special tokens are cut out first and never counted.
    pub fn add_text(&mut self, text: &str) -> Result<()> {
        self.bytes_seen += text.len() as u64;
        let WordCounter { pretokenizer, specials, lowercase, words, .. } = self;
        specials.segments(text, |segment| {
            if let Segment::Text(part) = segment {
                let lowered;
                let part = if *lowercase {
                    lowered = part.to_lowercase();
                    lowered.as_str()
                } else {
                    part
                };
                pretokenizer.split(part, |piece| match words.get_mut(piece) {
                    Some(count) => *count += 1,
                    None => {
                        words.insert(piece.to_string(), 1);
                    }
                })?;
            }
            Ok(())
        })
    }

    /// Counts the words of a UTF-8 text file, one line (with its line break) at a time, as HF tokenizers and
    /// SentencePiece read files. `on_progress` gets the number of bytes done so far.
    pub fn add_file(
        &mut self,
        path: &str,
        errors: Utf8Errors,
        mut on_progress: impl FnMut(u64) -> Result<()>,
    ) -> Result<()> {
        let bytes = read_file(path)?;
        let text: std::borrow::Cow<str> = match std::str::from_utf8(&bytes) {
            Ok(s) => s.into(),
            Err(e) => match errors {
                Utf8Errors::Strict => return Err(Error::utf8(path, e.valid_up_to())),
                Utf8Errors::Replace => String::from_utf8_lossy(&bytes),
            },
        };
        let mut done = 0u64;
        let mut since_report = 0usize;
        for line in text.split_inclusive('\n') {
            self.add_text(line)?;
            done += line.len() as u64;
            since_report += line.len();
            if since_report >= 1 << 20 {
                since_report = 0;
                on_progress(done)?;
            }
        }
        on_progress(done)
    }

    /// Adds a word counted elsewhere (taken as one piece: it is not pre-tokenized again).
    pub fn add_counted_word(&mut self, word: &str, count: u64) {
        if count == 0 || word.is_empty() {
            return;
        }
        let lowered;
        let word = if self.lowercase {
            lowered = word.to_lowercase();
            lowered.as_str()
        } else {
            word
        };
        match self.words.get_mut(word) {
            Some(c) => *c = c.saturating_add(count),
            None => {
                self.words.insert(word.to_string(), count);
            }
        }
    }
}

/// The bytes of a file; `.gz` files are decompressed (several gzip members are read one after another).
fn read_file(path: &str) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, &e))?;
    if !path.ends_with(".gz") {
        return Ok(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() * 3);
    flate2::read::MultiGzDecoder::new(&bytes[..])
        .read_to_end(&mut out)
        .map_err(|e| Error::io(path, &std::io::Error::new(e.kind(), format!("not a valid gzip file ({e})"))))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_keep_first_appearance_order_and_skip_specials() {
        let mut c = WordCounter::new(Pattern::Gpt2, &["<|endoftext|>".into()], false).unwrap();
        c.add_text("b a<|endoftext|>b a a").unwrap();
        let got: Vec<(&str, u64)> = c.words.iter().map(|(w, n)| (w.as_str(), *n)).collect();
        assert_eq!(got, [("b", 2), (" a", 3)]);
    }

    #[test]
    fn lowercase_happens_before_splitting() {
        let mut c = WordCounter::new(Pattern::Gpt2, &[], true).unwrap();
        c.add_text("Hello HELLO").unwrap();
        let got: Vec<(&str, u64)> = c.words.iter().map(|(w, n)| (w.as_str(), *n)).collect();
        assert_eq!(got, [("hello", 1), (" hello", 1)]);
    }
}
