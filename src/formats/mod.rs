//! File formats, one module per format: the only place that knows its layout. Tokenizer files have
//! `load` (→ a finished `Tokenizer`) and, where bytepair writes them, `save`:
//! - `native`: bytepair's own human-readable JSON;
//! - `tiktoken`: tiktoken rank files;
//! - `gpt2`: GPT-2 / HF `vocab.json` + `merges.txt`;
//! - `hf`: HF tokenizers' `tokenizer.json` (BPE models);
//! - `fasta`: nucleotide sequences (FASTA/FASTQ) to train on;
//! - `arrow`: Arrow string arrays (HF `datasets` columns) to train on, read in place.
//!
//! `explicit_ids` builds the vocabularies whose ids a file gives, from the parts the formats read.

pub mod arrow;
pub(crate) mod explicit_ids;
pub mod fasta;
pub mod gpt2;
pub mod hf;
pub mod native;
pub mod tiktoken;
