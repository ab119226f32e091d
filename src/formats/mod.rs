//! File formats, one module per format: the only place that knows its layout. Tokenizer files have
//! `load` (→ a finished `Tokenizer`) and, where bytepair writes them, `save`:
//! - `native`: bytepair's own human-readable JSON;
//! - `tiktoken`: tiktoken rank files;
//! - `gpt2`: GPT-2 / HF `vocab.json` + `merges.txt`;
//! - `hf`: HF tokenizers' `tokenizer.json` (BPE models);
//! - `fasta`: nucleotide sequences (FASTA/FASTQ) to train on;
//! - `counts_tsv`: word counts (`bytepair words`), to train from without the corpus;
//! - `arrow`: Arrow string arrays (HF `datasets` columns) to train on, read in place.
//!
//! `explicit_ids` builds the vocabularies whose ids a file gives, from the parts the formats read.

pub mod arrow;
pub mod counts_tsv;
pub(crate) mod explicit_ids;
pub mod fasta;
pub mod gpt2;
pub mod hf;
pub mod native;
pub mod tiktoken;

use crate::error::{Error, Result};

/// The bytes of a file, its buffer reserved fallibly (a `MemoryError` naming the size, not an abort, when a
/// huge file does not fit).
pub(crate) fn read_file(path: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    let size = file.metadata().map_or(0, |m| m.len() as usize);
    let mut bytes = Vec::new();
    crate::error::try_reserve(&mut bytes, size.saturating_add(1), "reading the file")?;
    file.read_to_end(&mut bytes).map_err(|e| Error::io(path, &e))?;
    Ok(bytes)
}
