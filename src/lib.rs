//! bytepair's core: Byte-Pair Encoding training and encoding.
//!
//! One module per stage: `pretokenize` (special tokens, pattern split), `train` (word counts → merges),
//! `encode` (merges applied to pieces), `vocab` (tokens and ids), `formats` (files), `tokenizer` (the
//! pipeline). `python` holds the PyO3 bindings only.

pub mod encode;
pub mod error;
pub mod formats;
pub mod pretokenize;
pub mod progress;
pub mod tokenizer;
pub mod train;
pub mod vocab;

#[cfg(feature = "python")]
mod python;
