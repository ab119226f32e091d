//! PyO3 bindings: type conversion, releasing the GIL around long work, and mapping errors to Python
//! exceptions. No tokenizer logic lives here.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pyo3::exceptions::{PyFileNotFoundError, PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyModule, PyString};

use crate::error::{Error, ErrorKind};
use crate::formats::fasta::{self, Ambiguous, FastaReader, SequenceOptions};
use crate::formats::native;
use crate::pretokenize::Pattern;
use crate::progress::Progress;
use crate::tokenizer::{SpecialPolicy, Tokenizer};
use crate::train::counts::{Utf8Errors, WordCounter};
use crate::train::dna::{self, SequenceStats};
use crate::train::{self, Alphabet, Engine, StopReason, TieBreak, TrainConfig};
use crate::vocab::{Mode, SymbolStyle};

fn to_py(err: Error) -> PyErr {
    match err.kind {
        ErrorKind::Value | ErrorKind::Utf8 | ErrorKind::OutOfRange => PyValueError::new_err(err.message),
        ErrorKind::Io { not_found: true } => PyFileNotFoundError::new_err(err.message),
        ErrorKind::Io { not_found: false } => PyOSError::new_err(err.message),
        ErrorKind::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
    }
}

/// Runs `f`, turning a Rust panic (a bug) into a RuntimeError that says so, never a PanicException.
fn guarded<T>(f: impl FnOnce() -> Result<T, Error>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result.map_err(to_py),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            Err(PyRuntimeError::new_err(format!(
                "internal error in bytepair's core ({what}); this is a bug — please report it with the input that caused it"
            )))
        }
    }
}

/// Ctrl-C check, for loops running without the GIL.
fn check_signals() -> Result<(), Error> {
    Python::attach(|py| py.check_signals()).map_err(|_| Error::interrupted())
}

/// Locks `mutex` where the GIL is released (inside `py.detach`).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Locks `mutex` where the GIL is held: waiting for it, the GIL is released. The holder may be a call that
/// released the GIL and needs it back before it lets go (its progress display checks for Ctrl-C): waiting
/// with the GIL held hung both (a thread reading `bytes_seen` while another counted a file).
fn lock_attached<'a, T>(py: Python<'_>, mutex: &'a Mutex<T>) -> std::sync::MutexGuard<'a, T> {
    use pyo3::sync::MutexExt;
    mutex.lock_py_attached(py).unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Counts words for training. Holds the pattern, special tokens and normaliser, which the trained tokenizer
/// then uses for encoding too.
#[pyclass(module = "bytepair._core")]
pub struct WordCounts {
    counter: Mutex<WordCounter>,
    /// The reading/counting progress display, shared by all the files and texts of one corpus.
    progress: Mutex<Progress<'static>>,
}

impl WordCounts {
    /// The counter, where the GIL is released.
    fn counter(&self) -> std::sync::MutexGuard<'_, WordCounter> {
        lock(&self.counter)
    }

    /// The counter, where the GIL is held.
    fn counter_attached(&self, py: Python<'_>) -> std::sync::MutexGuard<'_, WordCounter> {
        lock_attached(py, &self.counter)
    }
}

#[pymethods]
impl WordCounts {
    #[new]
    #[pyo3(signature = (pattern, special_tokens, lowercase, threads=0))]
    fn new(pattern: Option<&str>, special_tokens: Vec<String>, lowercase: bool, threads: usize) -> PyResult<Self> {
        let pattern = Pattern::from_name_or_regex(pattern);
        let counter = guarded(|| WordCounter::new(pattern, &special_tokens, lowercase, threads))?;
        let progress = Mutex::new(Progress::new(false, None, check_signals));
        Ok(WordCounts { counter: Mutex::new(counter), progress })
    }

    /// Shows reading progress on stderr from now on; `total_bytes` when known.
    #[pyo3(signature = (total_bytes=None))]
    fn show_progress(&self, py: Python<'_>, total_bytes: Option<u64>) {
        *lock_attached(py, &self.progress) = Progress::new(true, total_bytes, check_signals);
    }

    /// Ends the reading progress display.
    fn finish_progress(&self, py: Python<'_>) {
        lock_attached(py, &self.progress).finish();
    }

    /// Counts the words of each text.
    fn add_texts(&self, py: Python<'_>, texts: Vec<String>) -> PyResult<()> {
        py.detach(|| {
            guarded(|| {
                let mut counter = self.counter();
                let mut progress = lock(&self.progress);
                let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                counter.add_texts(&texts)?;
                progress.bytes(counter.bytes_seen)?;
                Ok(())
            })
        })
    }

    /// Counts the words of a UTF-8 file, line by line.
    fn add_file(&self, py: Python<'_>, path: String, errors: &str) -> PyResult<u64> {
        let errors = Utf8Errors::parse(errors).map_err(to_py)?;
        py.detach(|| {
            guarded(|| {
                let mut counter = self.counter();
                let mut progress = lock(&self.progress);
                let start = counter.bytes_seen;
                counter.add_file(&path, errors, |done| progress.bytes(start + done))?;
                Ok(counter.bytes_seen - start)
            })
        })
    }

    /// Counts the cleaned pieces of nucleotide sequences (each piece one word, followed by its reverse
    /// complement if asked; `rna`: A pairs with U). `first` is the index of the first sequence, for messages. Returns (records,
    /// pieces, bases) counted.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (sequences, first, uppercase, ambiguous, chunk_length, reverse_complement, rna=false))]
    fn add_sequences(
        &self,
        py: Python<'_>,
        sequences: Vec<String>,
        first: usize,
        uppercase: bool,
        ambiguous: &str,
        chunk_length: Option<usize>,
        reverse_complement: bool,
        rna: bool,
    ) -> PyResult<(u64, u64, u64)> {
        let options = sequence_options(uppercase, ambiguous, chunk_length)?;
        let reverse_complement = other_strand(reverse_complement, rna);
        py.detach(|| {
            guarded(|| {
                let mut counter = self.counter();
                let mut stats = SequenceStats::default();
                for (i, seq) in sequences.into_iter().enumerate() {
                    let name = format!("sequence {}", first + i);
                    fasta::check_sequence(seq.as_bytes(), &name)?;
                    dna::add_sequence(&mut counter, &name, seq.into_bytes(), &options, reverse_complement, &mut stats)?;
                }
                lock(&self.progress).bytes(counter.bytes_seen)?;
                Ok((stats.records, stats.pieces, stats.bases))
            })
        })
    }

    /// Reads a FASTA/FASTQ file (plain or gzip) and counts the cleaned pieces of its records. Returns
    /// (records, pieces, bases) counted.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (path, uppercase, ambiguous, chunk_length, reverse_complement, rna=false))]
    fn add_fasta(
        &self,
        py: Python<'_>,
        path: String,
        uppercase: bool,
        ambiguous: &str,
        chunk_length: Option<usize>,
        reverse_complement: bool,
        rna: bool,
    ) -> PyResult<(u64, u64, u64)> {
        let options = sequence_options(uppercase, ambiguous, chunk_length)?;
        let reverse_complement = other_strand(reverse_complement, rna);
        py.detach(|| {
            guarded(|| {
                let mut counter = self.counter();
                let mut progress = lock(&self.progress);
                let stats =
                    dna::add_fasta(&mut counter, &path, &options, reverse_complement, |bases| progress.bytes(bases))?;
                Ok((stats.records, stats.pieces, stats.bases))
            })
        })
    }

    /// Adds words counted elsewhere, taken as they are.
    fn add_counted(&self, py: Python<'_>, words: Vec<(String, u64)>) -> PyResult<()> {
        let mut counter = self.counter_attached(py);
        guarded(|| words.iter().try_for_each(|(word, count)| counter.add_counted_word(word, *count)))
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.counter_attached(py).words().map(|w| w.len()).unwrap_or(0)
    }

    /// Number of counting threads.
    #[getter]
    fn threads(&self, py: Python<'_>) -> usize {
        self.counter_attached(py).threads()
    }

    /// Bytes of text counted so far.
    #[getter]
    fn bytes_seen(&self, py: Python<'_>) -> u64 {
        self.counter_attached(py).bytes_seen
    }

    /// Bytes of text inside the counted words (each word's length times its count): what the pattern kept of
    /// `bytes_seen` (less special tokens; lowercasing may change a few lengths).
    fn word_bytes(&self, py: Python<'_>) -> PyResult<u64> {
        guarded(|| {
            Ok(self.counter_attached(py).words()?.iter().map(|(w, c)| (w.len() as u64).saturating_mul(*c)).sum())
        })
    }

    /// Bytes of special tokens cut out of the text counted so far (part of `bytes_seen`, in no word).
    fn special_bytes(&self, py: Python<'_>) -> PyResult<u64> {
        guarded(|| self.counter_attached(py).special_bytes())
    }

    /// The counted words and their counts, in order of first appearance.
    fn items(&self, py: Python<'_>) -> PyResult<Vec<(String, u64)>> {
        guarded(|| Ok(self.counter_attached(py).words()?.iter().map(|(w, c)| (w.clone(), *c)).collect()))
    }
}

fn other_strand(reverse_complement: bool, rna: bool) -> dna::OtherStrand {
    match (reverse_complement, rna) {
        (false, _) => dna::OtherStrand::No,
        (true, false) => dna::OtherStrand::Dna,
        (true, true) => dna::OtherStrand::Rna,
    }
}

fn sequence_options(uppercase: bool, ambiguous: &str, chunk_length: Option<usize>) -> PyResult<SequenceOptions> {
    let ambiguous = Ambiguous::parse(ambiguous).map_err(to_py)?;
    if chunk_length == Some(0) {
        return Err(PyValueError::new_err("chunk_length must be None (whole sequences) or an int >= 1"));
    }
    Ok(SequenceOptions { uppercase, ambiguous, chunk_length })
}

/// FASTA/FASTQ records, read one at a time: an iterator of (name, sequence), sequences cleaned and cut.
#[pyclass(module = "bytepair._core")]
pub struct FastaRecords {
    reader: Mutex<FastaReader>,
    options: SequenceOptions,
    pending: Mutex<std::collections::VecDeque<(String, String)>>,
}

#[pymethods]
impl FastaRecords {
    #[new]
    fn new(path: String, uppercase: bool, ambiguous: &str, chunk_length: Option<usize>) -> PyResult<Self> {
        let options = sequence_options(uppercase, ambiguous, chunk_length)?;
        let reader = guarded(|| FastaReader::open(&path))?;
        Ok(FastaRecords { reader: Mutex::new(reader), options, pending: Mutex::new(Default::default()) })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<(String, String)>> {
        loop {
            if let Some(piece) = lock_attached(py, &self.pending).pop_front() {
                return Ok(Some(piece));
            }
            let done = py.detach(|| {
                guarded(|| {
                    let mut reader = lock(&self.reader);
                    let Some((name, seq)) = reader.next_record()? else { return Ok(true) };
                    let mut pending = lock(&self.pending);
                    fasta::pieces(&name, seq, &self.options, |name, piece| {
                        pending.push_back((name, String::from_utf8(piece).expect("sequences are ASCII")));
                        Ok(())
                    })?;
                    Ok(false)
                })
            })?;
            if done {
                return Ok(None);
            }
        }
    }

    /// Records read so far.
    #[getter]
    fn records(&self, py: Python<'_>) -> u64 {
        lock_attached(py, &self.reader).records
    }

    /// Bases read so far (before cleaning).
    #[getter]
    fn bases(&self, py: Python<'_>) -> u64 {
        lock_attached(py, &self.reader).bases
    }
}

/// Trains a tokenizer from counted words. Returns the tokenizer and why training stopped
/// ("done", "no_pairs_left" or "min_frequency"). `engine` chooses the merge loop's layout ("auto", "slots",
/// "compact"); the merges are the same (tests compare them).
#[pyfunction]
#[pyo3(signature = (counts, vocab_size, mode, alphabet, extra_alphabet, unk_token, continuing_subword_prefix,
                    end_of_word_suffix, min_frequency, max_token_length, tie_break, progress, limit_alphabet=None,
                    engine="auto"))]
#[allow(clippy::too_many_arguments)]
fn train_counts(
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

/// Texts per chunk of a parallel `encode_batch` (a few hundred KB of typical documents).
const BATCH_CHUNK: usize = 64;

/// A bad-input error about `texts[index]` of a batch says so (when the batch has several texts). `files.py`
/// reads the index back from this prefix to place the error in its file.
fn naming_text(mut error: Error, index: usize, several: bool) -> Error {
    if several && error.kind == crate::error::ErrorKind::Value {
        error.message = format!("texts[{index}]: {}", error.message);
    }
    error
}

/// The `gc` module and its thresholds, if its collector runs by them (None, and no collection between chunks,
/// when a first threshold of 0 turns it off or an unusual `gc` module does not have them).
fn collector_thresholds(py: Python<'_>) -> Option<(Bound<'_, PyModule>, (i64, i64, i64))> {
    let gc = py.import("gc").ok()?;
    let thresholds: (i64, i64, i64) = gc.call_method0("get_threshold").ok()?.extract().ok()?;
    (thresholds.0 > 0).then_some((gc, thresholds))
}

/// Runs the cycle collector's young (or, when due, middle) generation if the collector would run now: more
/// new containers than its first threshold (and more young collections than its second). `gc`: the module.
fn collect_when_due(gc: &Bound<'_, PyModule>, (young, middle, _): (i64, i64, i64)) -> PyResult<()> {
    let (new, collected, _): (i64, i64, i64) = gc.call_method0("get_count")?.extract()?;
    if new > young {
        gc.call_method1("collect", (if collected > middle { 1 } else { 0 },))?;
    }
    Ok(())
}

/// The UTF-8 of each Python str, borrowed (no copy: copying was serial work before a parallel batch could
/// start); `strings` holds a reference to each, so they outlive the slices whatever other threads do.
fn borrow_texts<'a>(strings: &'a [Bound<'_, PyString>]) -> PyResult<Vec<&'a str>> {
    strings.iter().map(|s| s.to_str()).collect()
}

/// (mode, pattern name, custom regex, lowercase, prefix, suffix, unk_token, tie_break)
type Settings =
    (String, Option<String>, Option<String>, bool, Option<String>, Option<String>, Option<String>, Option<String>);

/// A trained or loaded tokenizer (the Python class `bytepair.Tokenizer` wraps it).
#[pyclass(module = "bytepair._core", frozen)]
pub struct CoreTokenizer {
    inner: Tokenizer,
    /// One Python int per id, made once: a list of ids is then built by reference counting alone (creating
    /// an int per id cost ~25 ns, a third of encoding a 4 KB document).
    id_objects: std::sync::OnceLock<Vec<Py<PyAny>>>,
}

impl CoreTokenizer {
    fn new(inner: Tokenizer) -> CoreTokenizer {
        CoreTokenizer { inner, id_objects: std::sync::OnceLock::new() }
    }

    /// The ids of many texts, encoded in parallel (order kept); `threads` 0 = every core.
    fn encode_batch_ids(
        &self,
        py: Python<'_>,
        texts: &[&str],
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
        threads: usize,
    ) -> PyResult<Vec<Vec<u32>>> {
        use rayon::prelude::*;
        let policy = self.policy(allowed, disallowed)?;
        py.detach(|| {
            guarded(|| {
                let pool = crate::thread_pool(threads)?;
                // Every result, then the first error in text order (collecting into a Result would stop at
                // whichever error a thread met first: a different message from one run to the next).
                let results: Vec<_> =
                    pool.install(|| texts.par_iter().map(|t| self.inner.encode(t, &policy)).collect());
                let several = texts.len() > 1;
                results.into_iter().enumerate().map(|(i, r)| r.map_err(|e| naming_text(e, i, several))).collect()
            })
        })
    }

    /// Which special tokens may be produced / are errors, one flag per special token.
    fn policy(&self, allowed: Vec<bool>, disallowed: Vec<bool>) -> PyResult<SpecialPolicy> {
        let n = self.inner.specials.tokens().len();
        if allowed.len() != n || disallowed.len() != n {
            return Err(PyValueError::new_err("allowed/disallowed must have one flag per special token"));
        }
        Ok(SpecialPolicy { allowed, disallowed })
    }

    /// One Python int per id, made on first use.
    fn id_objects(&self, py: Python<'_>) -> &[Py<PyAny>] {
        self.id_objects.get_or_init(|| {
            (0..self.inner.vocab.len() as u32)
                .map(|i| i.into_pyobject(py).expect("ints convert").into_any().unbind())
                .collect()
        })
    }

    /// `ids` as a Python list of ints.
    fn id_list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let objects = self.id_objects(py);
        // Filled by hand: `PyList::new` over an iterator spent ~15 instructions per id, this loop ~11 (lists
        // of ids are a sixth of encoding a document).
        // SAFETY: `PyList_New` gives a list of `len` empty slots (or NULL with an exception set); each slot is
        // set once with a new reference (Py_INCREF) to a live int, as `PyList_SET_ITEM` requires, before the
        // list is handed to Python.
        unsafe {
            let list = pyo3::ffi::PyList_New(ids.len() as pyo3::ffi::Py_ssize_t);
            if list.is_null() {
                return Err(PyErr::fetch(py));
            }
            for (k, &id) in ids.iter().enumerate() {
                let object = objects[id as usize].as_ptr();
                pyo3::ffi::Py_INCREF(object);
                pyo3::ffi::PyList_SET_ITEM(list, k as pyo3::ffi::Py_ssize_t, object);
            }
            Ok(Bound::from_owned_ptr(py, list).cast_into_unchecked())
        }
    }
}

#[pymethods]
impl CoreTokenizer {
    /// Builds what encoding needs — the fast piece encoder, one int object per id — now rather than on the
    /// first call.
    fn prepare(&self, py: Python<'_>) {
        // Building makes temporaries on this thread and the pool's (o200k_base: ~45 MB) that mimalloc would keep
        // resident: they go back to the OS now (the pool's threads when they are free: waiting for them could
        // mean waiting for another caller's long job).
        py.detach(|| {
            self.inner.prepare();
            crate::release_freed_memory();
            if let Ok(pool) = crate::thread_pool(0) {
                pool.spawn_broadcast(|_| crate::release_freed_memory());
            }
        });
        self.id_objects(py);
    }

    /// Encodes text. `allowed` / `disallowed` give, per special token (in `special_tokens()` order), whether it
    /// may be produced and whether finding it in the text is an error.
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
    ) -> PyResult<Bound<'py, PyList>> {
        let policy = self.policy(allowed, disallowed)?;
        let ids = py.detach(|| guarded(|| self.inner.encode(text, &policy)))?;
        self.id_list(py, &ids)
    }

    /// Encodes many texts in parallel (order kept); `threads` 0 = every core. `collect_young`: the caller has
    /// paused Python's cycle collector, which was on; the young lists are then collected between chunks while
    /// other threads encode (see below).
    #[pyo3(signature = (texts, allowed, disallowed, threads, collect_young=false))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
        threads: usize,
        collect_young: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let policy = self.policy(allowed, disallowed)?;
        let texts = borrow_texts(&texts)?;
        let threads = match crate::at_most_cores(threads) {
            0 => crate::cores(),
            n => n,
        };
        // Pipelined: `threads - 1` pool threads and this one take chunks of texts in turn, and this thread, which
        // holds the GIL, also turns finished chunks into lists, in order. Building the lists is a fifth of the
        // work and needs the GIL. Done while a full pool encoded (three busy threads on two cores), threads=2
        // was ~11% slower than this (interleaved runs in one process).
        // Chunks: one thread takes longer ones (its encoder's tables stay in cache while it encodes, then the
        // lists' ints do; 512 texts was ~10% faster than 64), several take short ones, at least four each, so
        // that none waits long for the last.
        let chunk = if threads == 1 { 8 * BATCH_CHUNK } else { (texts.len() / (4 * threads)).clamp(1, BATCH_CHUNK) };
        let chunks: Vec<&[&str]> = texts.chunks(chunk).collect();
        let claimed = AtomicUsize::new(0);
        // Set when a chunk fails or Ctrl-C is pressed: no chunk is claimed after that, and a claimed chunk is
        // always encoded, so every chunk before the first failing one is encoded and the error reported is the
        // first in text order, as when encoding one text after another.
        let failed = AtomicBool::new(false);
        let claim = || {
            if failed.load(Ordering::Relaxed) {
                return None;
            }
            let k = claimed.fetch_add(1, Ordering::Relaxed);
            (k < chunks.len()).then_some(k)
        };
        let encode_chunk = |k: usize| {
            let result = guarded(|| {
                self.inner.encode_concatenated(chunks[k], &policy).map_err(|e| {
                    // Which text: the first of the chunk that fails alone (a chunk is at most a few hundred).
                    let j = chunks[k].iter().position(|t| self.inner.encode(t, &policy).is_err()).unwrap_or(0);
                    naming_text(e, k * chunk + j, texts.len() > 1)
                })
            });
            if result.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            result
        };
        type Encoded = PyResult<(Vec<u32>, Vec<usize>)>;
        let (sender, receiver) = std::sync::mpsc::channel::<(usize, Encoded)>();
        let mut lists: Vec<Bound<'py, PyList>> = Vec::with_capacity(texts.len());
        let mut failure = None;
        // The cycle collector walks every new list, ids and all, when it next runs: paused during the batch, it ran
        // as soon as the batch returned, on this thread alone while the others waited (a quarter of a 2-thread
        // batch of 4 KB documents, o200k: ~30 ms of ~120). With other threads encoding, this thread runs it
        // between chunks instead, when and as the collector would have run itself (its thresholds), so the walk
        // overlaps their encoding: the young and middle generations' collections are those the collector would
        // have made; a full one (which has a further condition) waits for the collector, as before.
        let collector = if collect_young && threads > 1 { collector_thresholds(py) } else { None };
        // This thread's part: lists from finished chunks, in order; else a chunk to encode; else wait.
        let mut pump = |mut receiver: std::sync::mpsc::Receiver<(usize, Encoded)>| {
            let mut waiting = std::collections::BTreeMap::<usize, Encoded>::new();
            let mut next = 0;
            while next < chunks.len() {
                while let Ok((k, result)) = receiver.try_recv() {
                    waiting.insert(k, result);
                }
                if let Some(result) = waiting.remove(&next) {
                    next += 1;
                    match result {
                        Ok((ids, ends)) if failure.is_none() => {
                            let mut start = 0;
                            for end in ends {
                                match self.id_list(py, &ids[start..end]) {
                                    Ok(list) => lists.push(list),
                                    Err(e) => {
                                        failure = Some(e);
                                        break;
                                    }
                                }
                                start = end;
                            }
                            if failure.is_none()
                                && let Err(e) = py.check_signals()
                            {
                                failure = Some(e);
                            }
                            if failure.is_none()
                                && next < chunks.len()
                                && let Some((gc, thresholds)) = &collector
                                && let Err(e) = collect_when_due(gc, *thresholds)
                            {
                                failure = Some(e);
                            }
                            if failure.is_some() {
                                failed.store(true, Ordering::Relaxed);
                            }
                        }
                        Ok(_) => {}
                        Err(e) => failure = failure.take().or(Some(e)),
                    }
                } else if let Some(k) = claim() {
                    waiting.insert(k, py.detach(|| encode_chunk(k)));
                } else {
                    // Every chunk is taken and the next one is still with a helper: wait for it.
                    let (back, message) = py.detach(move || {
                        let message = receiver.recv();
                        (receiver, message)
                    });
                    receiver = back;
                    match message {
                        Ok((k, result)) => {
                            waiting.insert(k, result);
                        }
                        // Every helper has stopped: the chunks left were never claimed, after a failure.
                        Err(_) => break,
                    }
                }
            }
        };
        if threads == 1 {
            drop(sender);
            pump(receiver);
        } else {
            let helpers = crate::thread_pool(threads - 1).map_err(to_py)?;
            helpers.in_place_scope(|scope| {
                for _ in 1..threads {
                    let sender = sender.clone();
                    let (claim, encode_chunk) = (&claim, &encode_chunk);
                    scope.spawn(move |_| {
                        while let Some(k) = claim() {
                            if sender.send((k, encode_chunk(k))).is_err() {
                                break;
                            }
                        }
                    });
                }
                drop(sender);
                pump(receiver);
            });
        }
        match failure {
            Some(e) => Err(e),
            None if lists.len() != texts.len() => Err(PyRuntimeError::new_err(format!(
                "internal error in bytepair's core (encode_batch made {} lists for {} texts); this is a bug — \
                 please report it",
                lists.len(),
                texts.len()
            ))),
            None => PyList::new(py, lists),
        }
    }

    /// Ids of each text as one little-endian buffer of `width`-byte ids (4, or 2 when every id fits), with each
    /// text's token count. A `bytearray`: numpy views it writable without a copy (the ids are copied once, from
    /// Rust into it; through `bytes` and `astype` they were copied three times, which made a 10 MB text slower
    /// to get as an array than as a list).
    fn encode_packed<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
        threads: usize,
        width: usize,
    ) -> PyResult<(Bound<'py, PyByteArray>, Vec<usize>)> {
        if width != 2 && width != 4 {
            return Err(PyValueError::new_err(format!("width must be 2 or 4 (bytes per id), not {width}")));
        }
        let batches = self.encode_batch_ids(py, &borrow_texts(&texts)?, allowed, disallowed, threads)?;
        let lengths: Vec<usize> = batches.iter().map(Vec::len).collect();
        let total: usize = lengths.iter().sum();
        if width == 2
            && let Some(id) = batches.iter().flatten().find(|&&id| id > u16::MAX as u32)
        {
            return Err(PyValueError::new_err(format!(
                "token id {id} does not fit in 2 bytes (uint16); use uint32 for this vocabulary"
            )));
        }
        let packed = PyByteArray::new_with(py, total * width, |buf| {
            let ids = batches.iter().flatten();
            if width == 4 {
                for (out, id) in buf.chunks_exact_mut(4).zip(ids) {
                    out.copy_from_slice(&id.to_le_bytes());
                }
            } else {
                for (out, &id) in buf.chunks_exact_mut(2).zip(ids) {
                    out.copy_from_slice(&(id as u16).to_le_bytes());
                }
            }
            Ok(())
        })?;
        Ok((packed, lengths))
    }

    /// (id, start, end) of each token, offsets in the text in bytes or characters. Made here as the final
    /// tuples: a list of ids and a list of spans zipped in Python held three lists at once (100 MB of English:
    /// 6.9 GB).
    fn encode_with_offsets(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
        chars: bool,
    ) -> PyResult<Vec<(u32, usize, usize)>> {
        let policy = self.policy(allowed, disallowed)?;
        let (ids, spans) = py.detach(|| guarded(|| self.inner.encode_with_offsets(text, &policy, chars)))?;
        Ok(ids.into_iter().zip(spans).map(|(id, (start, end))| (id, start, end)).collect())
    }

    /// Encodes bytes that may not be valid UTF-8.
    fn encode_bytes(
        &self,
        py: Python<'_>,
        data: Vec<u8>,
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
    ) -> PyResult<Vec<u32>> {
        let policy = self.policy(allowed, disallowed)?;
        py.detach(|| guarded(|| self.inner.encode_bytes(&data, &policy)))
    }

    /// Number of tokens of a text.
    fn count(&self, py: Python<'_>, text: &str, allowed: Vec<bool>, disallowed: Vec<bool>) -> PyResult<usize> {
        let policy = self.policy(allowed, disallowed)?;
        py.detach(|| guarded(|| self.inner.count(text, &policy)))
    }

    /// A tokenizer from a tiktoken rank file; `specials` are (text, id).
    #[staticmethod]
    fn from_tiktoken(
        py: Python<'_>,
        path: String,
        pattern: Option<&str>,
        specials: Vec<(String, u32)>,
    ) -> PyResult<CoreTokenizer> {
        let pattern = Pattern::from_name_or_regex(pattern);
        py.detach(|| guarded(|| crate::formats::tiktoken::load(&path, pattern, &specials).map(CoreTokenizer::new)))
    }

    /// A tokenizer from the parts of a HF `tokenizer.json` (byte-level BPE): vocab, merges ("left right"),
    /// special tokens, whether a piece that is a token stays whole (`ignore_merges`).
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn from_hf_parts(
        py: Python<'_>,
        source: String,
        vocab: Vec<(String, u32)>,
        merges: Vec<String>,
        specials: Vec<String>,
        pattern: Option<&str>,
        lowercase: bool,
        ignore_merges: bool,
    ) -> PyResult<CoreTokenizer> {
        let pattern = Pattern::from_name_or_regex(pattern);
        py.detach(|| {
            guarded(|| {
                use crate::formats::explicit_ids::{self, MergesIn};
                let entries: std::collections::BTreeMap<String, u32> = vocab.into_iter().collect();
                let lines = merges.iter().enumerate().map(|(i, m)| {
                    let mut parts = m.split(' ');
                    match (parts.next(), parts.next(), parts.next()) {
                        (Some(a), Some(b), None) => Ok((i, a, b)),
                        _ => Err(crate::error::Error::value(format!(
                            "{}: model.merges[{i}]: expected two tokens separated by a space, got {}",
                            crate::error::py_repr(&source),
                            crate::error::py_repr(m)
                        ))),
                    }
                });
                let mut vocab =
                    explicit_ids::from_byte_merges(&source, &entries, lines, MergesIn::TokenizerJson, &specials)?;
                vocab.whole_pieces = ignore_merges;
                let mut names = specials.clone();
                names.sort_by_key(|s| vocab.by_display[s]);
                Tokenizer::new(vocab, pattern, lowercase, &names).map(CoreTokenizer::new)
            })
        })
    }

    /// A tokenizer from the parts of a HF `tokenizer.json` holding a char-level BPE model: every token (added
    /// tokens included) → id, merges as (left, right), the special tokens, the model's unk_token, prefix,
    /// suffix and fuse_unk, the pre-tokenization pattern, Lowercase, and ignore_merges.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn from_hf_char_parts(
        py: Python<'_>,
        source: String,
        vocab: Vec<(String, u32)>,
        merges: Vec<(String, String)>,
        specials: Vec<String>,
        unk_token: Option<String>,
        prefix: Option<String>,
        suffix: Option<String>,
        fuse_unk: bool,
        pattern: Option<&str>,
        lowercase: bool,
        ignore_merges: bool,
    ) -> PyResult<CoreTokenizer> {
        let pattern = Pattern::from_name_or_regex(pattern);
        py.detach(|| {
            guarded(|| {
                let entries: std::collections::BTreeMap<String, u32> = vocab.into_iter().collect();
                use crate::formats::explicit_ids;
                let model = explicit_ids::CharModel { unk: unk_token.as_deref(), prefix, suffix, fuse_unk };
                let mut vocab = explicit_ids::from_char_merges(&source, &entries, &merges, &specials, model)?;
                vocab.whole_pieces = ignore_merges;
                let mut names = specials.clone();
                names.sort_by_key(|s| vocab.by_display[s]);
                Tokenizer::new(vocab, pattern, lowercase, &names).map(CoreTokenizer::new)
            })
        })
    }

    /// A tokenizer from GPT-2 / HF `vocab.json` + `merges.txt`.
    #[staticmethod]
    fn from_gpt2(
        py: Python<'_>,
        vocab_path: String,
        merges_path: String,
        specials: Vec<String>,
        pattern: Option<&str>,
    ) -> PyResult<CoreTokenizer> {
        let pattern = Pattern::from_name_or_regex(pattern);
        py.detach(|| {
            guarded(|| {
                crate::formats::gpt2::load(&vocab_path, &merges_path, &specials, pattern).map(CoreTokenizer::new)
            })
        })
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = guarded(|| self.inner.decode_bytes(&ids))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Number of tokens, special tokens included.
    fn vocab_size(&self) -> usize {
        self.inner.vocab.tokens.len()
    }

    /// Display string of every token, by id.
    fn token_strings(&self) -> Vec<String> {
        self.inner.vocab.tokens.iter().map(|t| t.display.clone()).collect()
    }

    /// Raw bytes of one token.
    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        match self.inner.vocab.tokens.get(id as usize) {
            Some(t) => Ok(PyBytes::new(py, &t.bytes)),
            None => Err(PyValueError::new_err(format!("id {id} is not in the vocabulary"))),
        }
    }

    /// Merges as (left id, right id, result id), in order.
    fn merges(&self) -> Vec<(u32, u32, u32)> {
        self.inner.vocab.merges.iter().map(|m| (m.left, m.right, m.result)).collect()
    }

    fn merge_counts(&self) -> Option<Vec<u64>> {
        self.inner.merge_counts.clone()
    }

    fn special_tokens(&self) -> Vec<String> {
        self.inner.specials.tokens().to_vec()
    }

    /// Whether the vocabulary follows tiktoken's merge rule (loaded from a rank file).
    fn rank_by_bytes(&self) -> bool {
        self.inner.vocab.rank_by_bytes
    }

    /// HF's model options: (ignore_merges — a piece that is a token stays whole —, fuse_unk).
    fn hf_options(&self) -> (bool, bool) {
        let v = &self.inner.vocab;
        (v.whole_pieces || v.rank_by_bytes, v.fuse_unk)
    }

    /// The pre-tokenizer's regex (None: no split).
    fn pattern_regex(&self) -> Option<String> {
        self.inner.pretokenizer.pattern.regex_source().map(String::from)
    }

    /// tiktoken ranks (token bytes, id) of the non-special tokens, after checking that tiktoken's rule gives
    /// this tokenizer's ids (see `Tokenizer::tiktoken_ranks`).
    fn tiktoken_ranks<'py>(&self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyBytes>, u32)>> {
        let ranks = guarded(|| self.inner.tiktoken_ranks())?;
        Ok(ranks.into_iter().map(|(b, id)| (PyBytes::new(py, b), id)).collect())
    }

    /// Settings, for `repr`, saving and the Python API.
    fn settings(&self) -> Settings {
        let v = &self.inner.vocab;
        let pattern = &self.inner.pretokenizer.pattern;
        (
            v.style.mode.name().to_string(),
            pattern.name().map(String::from),
            match pattern {
                Pattern::Custom(regex) => Some(regex.clone()),
                _ => None,
            },
            self.inner.lowercase,
            v.style.prefix.clone(),
            v.style.suffix.clone(),
            v.unk.map(|id| v.tokens[id as usize].display.clone()),
            self.inner.tie_break.map(|t| t.name().to_string()),
        )
    }

    /// Number of special tokens and of base symbols (they take the first ids).
    fn layout(&self) -> (usize, usize) {
        (self.inner.vocab.num_special, self.inner.vocab.num_base)
    }

    fn to_native(&self) -> String {
        native::save(&self.inner)
    }

    #[staticmethod]
    fn from_native(text: &str, source: &str) -> PyResult<CoreTokenizer> {
        guarded(|| native::load(text, source)).map(CoreTokenizer::new)
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<WordCounts>()?;
    m.add_class::<CoreTokenizer>()?;
    m.add_class::<FastaRecords>()?;
    m.add_function(wrap_pyfunction!(train_counts, m)?)?;
    Ok(())
}
