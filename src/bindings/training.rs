//! `train_counts`: training from a `WordCounts`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::tokenizer::CoreTokenizer;
use super::word_counts::WordCounts;
use super::{check_signals, guarded, to_py};
use crate::progress::Progress;
use crate::train::{self, Alphabet, Engine, StopReason, TieBreak, TrainConfig};
use crate::vocab::{Mode, SymbolStyle};

/// Trains a tokenizer from counted words. Returns the tokenizer and why training stopped
/// ("done", "no_pairs_left" or "min_frequency"). `engine` chooses the merge loop's layout ("auto", "slots",
/// "compact"); the merges are the same (tests compare them).
#[pyfunction]
#[pyo3(signature = (counts, vocab_size, mode, alphabet, extra_alphabet, unk_token, continuing_subword_prefix,
                    end_of_word_suffix, min_frequency, max_token_length, tie_break, progress, limit_alphabet=None,
                    engine="auto"))]
#[allow(clippy::too_many_arguments)]
pub(super) fn train_counts(
    py: Python<'_>,
    counts: &WordCounts,
    vocab_size: usize,
    mode: &str,
    alphabet: &str,
    extra_alphabet: Vec<char>,
    unk_token: Option<String>,
    continuing_subword_prefix: Option<String>,
    end_of_word_suffix: Option<String>,
    min_frequency: u64,
    max_token_length: Option<usize>,
    tie_break: &str,
    progress: bool,
    limit_alphabet: Option<usize>,
    engine: &str,
) -> PyResult<(CoreTokenizer, &'static str)> {
    let mode = Mode::parse(mode).map_err(to_py)?;
    let engine = Engine::parse(engine).map_err(to_py)?;
    let tie_break = TieBreak::parse(tie_break).map_err(to_py)?;
    let alphabet = match (alphabet, extra_alphabet.is_empty()) {
        ("all", _) if mode == Mode::Byte => Alphabet::All,
        (_, false) => Alphabet::CorpusPlus(extra_alphabet),
        ("all", true) | ("corpus", true) => Alphabet::Corpus,
        (other, _) => return Err(PyValueError::new_err(format!("unknown initial_alphabet {other:?}"))),
    };
    let style = SymbolStyle { mode, prefix: continuing_subword_prefix, suffix: end_of_word_suffix };
    py.detach(|| {
        guarded(|| {
            let mut counter = counts.counter();
            let config = TrainConfig {
                vocab_size,
                style,
                special_tokens: counter.special_tokens().to_vec(),
                unk_token,
                alphabet,
                limit_alphabet,
                min_frequency,
                max_token_length,
                tie_break,
            };
            let merger = {
                // Training consumes the counts: the words are freed before the merge loop grows.
                let counts = counter.take_words()?;
                let words: Vec<(&str, u64)> = counts.iter().map(|(w, c)| (w.as_str(), *c)).collect();
                train::prepare_with(&words, &config, engine)?
            };
            let merger = merger.with_pool(counter.pool());
            let mut display = Progress::new(progress, None, check_signals);
            let trained = merger.run(&mut display)?;
            display.finish();
            let mut tok = counter.tokenizer(trained.vocab);
            tok.tie_break = Some(tie_break);
            tok.merge_counts = Some(trained.merge_counts);
            let stop = match trained.stop {
                StopReason::Done => "done",
                StopReason::NoPairsLeft => "no_pairs_left",
                StopReason::MinFrequency => "min_frequency",
            };
            Ok((CoreTokenizer::new(tok), stop))
        })
    })
}
