//! File formats. `native`: bytepair's own human-readable format; `existing`: tiktoken and GPT-2/HF files.

pub mod existing;
pub mod native;
