//! File formats. `native`: bytepair's own human-readable format; `existing`: tiktoken and GPT-2/HF files;
//! `fasta`: nucleotide sequences (FASTA/FASTQ) to train on.

pub mod existing;
pub mod fasta;
pub mod native;
