//! `train_counts`: training from a `WordCounts`; `extend_counts`: an existing tokenizer extended on one.

use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::tokenizer::CoreTokenizer;
use super::word_counts::WordCounts;
use super::{check_signals, guarded, lock, to_py};
use crate::error::Error;
use crate::progress::Progress;
use crate::train::{self, Alphabet, Engine, StopReason, TieBreak, TrainConfig, Veto};
use crate::vocab::{Mode, SymbolStyle};

/// Trains a tokenizer from counted words. Returns the tokenizer and why training stopped
/// ("done", "no_pairs_left" or "min_frequency"). `engine` chooses the merge loop's layout ("auto", "slots",
/// "compact"); the merges are the same (tests compare them).
#[pyfunction]
#[pyo3(signature = (counts, vocab_size, mode, alphabet, extra_alphabet, unk_token, continuing_subword_prefix,
                    end_of_word_suffix, min_frequency, max_token_length, tie_break, progress, limit_alphabet=None,
                    engine="auto", forbid_across=Vec::new(), veto=None))]
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
    forbid_across: Vec<String>,
    veto: Option<Py<PyAny>>,
) -> PyResult<(CoreTokenizer, &'static str)> {
    let boundaries = train::parse_classes(&forbid_across).map_err(to_py)?;
    let (veto, veto_error) = python_veto(veto);
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
    let trained = py.detach(|| {
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
            let merger = merger.with_pool(counter.pool()).with_control(boundaries, veto);
            let mut display = Progress::new(progress, None, check_signals);
            let trained = merger.run(&mut display)?;
            display.finish();
            let mut tok = counter.tokenizer(trained.vocab);
            tok.tie_break = Some(tie_break);
            tok.merge_counts = Some(trained.merge_counts);
            Ok((CoreTokenizer::new(tok), stop_name(trained.stop)))
        })
    });
    raise_veto_error(trained, &veto_error)
}

fn stop_name(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Done => "done",
        StopReason::NoPairsLeft => "no_pairs_left",
        StopReason::MinFrequency => "min_frequency",
    }
}

/// Extends `tokenizer` on counted words (consuming the counts) up to `vocab_size` ids: its merges are applied
/// to each word first, then merging continues; new tokens get the ids after its largest. The counts must have
/// been counted with the special tokens and normaliser of the tokenizer, and with the pattern the result
/// is to encode with (the tokenizer's own, or another: SuperBPE's second stage). Returns the tokenizer and
/// why training stopped.
#[pyfunction]
#[pyo3(signature = (tokenizer, counts, vocab_size, min_frequency, max_token_length, tie_break, progress,
                    forbid_across=Vec::new(), veto=None, engine="auto"))]
#[allow(clippy::too_many_arguments)]
pub(super) fn extend_counts(
    py: Python<'_>,
    tokenizer: &CoreTokenizer,
    counts: &WordCounts,
    vocab_size: usize,
    min_frequency: u64,
    max_token_length: Option<usize>,
    tie_break: &str,
    progress: bool,
    forbid_across: Vec<String>,
    veto: Option<Py<PyAny>>,
    engine: &str,
) -> PyResult<(CoreTokenizer, &'static str)> {
    let boundaries = train::parse_classes(&forbid_across).map_err(to_py)?;
    let (veto, veto_error) = python_veto(veto);
    let engine = Engine::parse(engine).map_err(to_py)?;
    let tie_break = TieBreak::parse(tie_break).map_err(to_py)?;
    let old = &tokenizer.inner;
    let extended = py.detach(|| {
        guarded(|| {
            let mut counter = counts.counter();
            if counter.special_tokens() != old.specials.tokens() {
                return Err(Error::value(
                    "internal error: the words were counted with other special tokens than the tokenizer's".to_string(),
                ));
            }
            let config = TrainConfig {
                vocab_size,
                style: old.vocab.style.clone(),
                special_tokens: counter.special_tokens().to_vec(),
                unk_token: None,
                alphabet: Alphabet::Corpus,
                limit_alphabet: None,
                min_frequency,
                max_token_length,
                tie_break,
            };
            let merger = train::extend::prepare_counted(old, &mut counter, &config, engine)?;
            let merger = merger.with_pool(counter.pool()).with_control(boundaries, veto);
            let mut display = Progress::new(progress, None, check_signals);
            let trained = merger.run(&mut display)?;
            display.finish();
            let stop = stop_name(trained.stop);
            let tok = train::extend::finish_extension(
                old,
                counter.extension_tokenizer(trained.vocab),
                tie_break,
                trained.merge_counts,
            )?;
            Ok((CoreTokenizer::new(tok), stop))
        })
    });
    raise_veto_error(extended, &veto_error)
}

/// A Python callable as the merge veto: `veto(left: bytes, right: bytes)`, truthy to refuse the merge. What
/// it raises is kept (the second value) and raised again once training has stopped.
type VetoError = std::sync::Arc<Mutex<Option<PyErr>>>;

fn python_veto(callable: Option<Py<PyAny>>) -> (Option<Box<dyn Veto>>, VetoError) {
    let error = VetoError::default();
    let veto = callable.map(|callable| Box::new(PythonVeto { callable, error: error.clone() }) as Box<dyn Veto>);
    (veto, error)
}

struct PythonVeto {
    callable: Py<PyAny>,
    error: VetoError,
}

impl Veto for PythonVeto {
    fn refuses(&mut self, left: &[u8], right: &[u8]) -> crate::error::Result<bool> {
        Python::attach(|py| {
            let answer = self.callable.call1(py, (PyBytes::new(py, left), PyBytes::new(py, right)));
            answer.and_then(|a| a.bind(py).is_truthy()).map_err(|e| {
                *lock(&self.error) = Some(e);
                Error::value("the veto raised an exception".to_string())
            })
        })
    }
}

/// The result, or the exception the veto raised (which stopped training) as it was raised.
fn raise_veto_error<T>(result: PyResult<T>, error: &VetoError) -> PyResult<T> {
    match (result, lock(error).take()) {
        (Err(_), Some(raised)) => Err(raised),
        (result, _) => result,
    }
}
