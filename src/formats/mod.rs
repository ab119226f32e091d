//! File formats. `native`: bytepair's own human-readable format (more formats join in the encoder issue).

pub mod native;
