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

/// mimalloc for the core's own allocations: training makes millions of small ones (per-pair occurrence
/// lists, per-item words), and glibc's malloc/free took ~15% of the merge loop (perf).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
