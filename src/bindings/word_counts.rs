//! `WordCounts`: the word counter that training starts from (texts, files, DNA sequences and FASTA files,
//! or words counted elsewhere).

use std::sync::Mutex;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use super::fasta::sequence_options;
use super::{check_signals, guarded, lock, lock_attached, to_py};
use crate::formats::{arrow, counts_tsv, fasta};
use crate::pretokenize::{Pattern, Unmatched};
use crate::progress::Progress;
use crate::train::counts::{FirstSeenCounts, Utf8Errors, WordCounter};
use crate::train::dna::{self, SequenceStats};

/// Counts words for training. Holds the pattern, special tokens and normaliser, which the trained tokenizer
/// then uses for encoding too.
#[pyclass(module = "bytepair._core")]
pub struct WordCounts {
    pub(super) counter: Mutex<WordCounter>,
    /// The reading/counting progress display, shared by all the files and texts of one corpus.
    progress: Mutex<Progress<'static>>,
    /// Bytes of the files counted so far (compressed bytes for `.gz`): where the next file starts on the bar,
    /// whose total is the files' sizes.
    files_read: std::sync::atomic::AtomicU64,
}

impl WordCounts {
    /// The counter, where the GIL is released.
    pub(super) fn counter(&self) -> std::sync::MutexGuard<'_, WordCounter> {
        lock(&self.counter)
    }

    /// The counter, where the GIL is held.
    fn counter_attached(&self, py: Python<'_>) -> std::sync::MutexGuard<'_, WordCounter> {
        lock_attached(py, &self.counter)
    }
}

#[pymethods]
impl WordCounts {
    /// `count_special_text`: special tokens found in the text are counted as ordinary text (HF's trainer does).
    /// `keep_every_piece`: the pieces are kept in corpus order rather than counted, until something asks for the
    /// counts (SuperBPE's second stage extends a tokenizer on them as they are: see `WordCounter::keep_every_piece`).
    /// `record_stretches`: SuperBPE's stretches are recorded too, as the words counted, for its second stage (see
    /// `WordCounter::record_stretches`).
    #[new]
    #[pyo3(signature = (
        pattern, special_tokens, lowercase, threads=0, unmatched="keep", count_special_text=false,
        keep_every_piece=false, record_stretches=false,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        pattern: Option<&str>,
        special_tokens: Vec<String>,
        lowercase: bool,
        threads: usize,
        unmatched: &str,
        count_special_text: bool,
        keep_every_piece: bool,
        record_stretches: bool,
    ) -> PyResult<Self> {
        let unmatched = Unmatched::parse(unmatched).map_err(to_py)?;
        let pattern = Pattern::from_name_or_regex(pattern, unmatched);
        let mut counter = guarded(|| WordCounter::new(pattern, &special_tokens, lowercase, threads))?;
        if count_special_text {
            counter.count_special_text();
        }
        if keep_every_piece {
            counter.keep_every_piece();
        }
        if record_stretches {
            guarded(|| counter.record_stretches(unmatched))?;
        }
        let progress = Mutex::new(Progress::new(false, None, check_signals));
        Ok(WordCounts { counter: Mutex::new(counter), progress, files_read: Default::default() })
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
    fn add_texts(&self, py: Python<'_>, texts: Vec<Bound<'_, PyString>>) -> PyResult<()> {
        let sources = super::text::sources(&texts)?;
        let counted = py.detach(|| {
            guarded(|| {
                let mut counter = self.counter();
                let mut progress = lock(&self.progress);
                let mut transcoder = super::text::Transcoder::default();
                counter.add_texts(&transcoder.texts(&sources)?)?;
                progress.bytes(counter.bytes_seen)?;
                Ok(())
            })
        });
        super::text::surrogate_first(&texts, counted)
    }

    /// Counts the words of a block of whole lines (each line with its line break is one text), as `add_file`
    /// counts a file's lines.
    fn add_lines(&self, py: Python<'_>, text: String) -> PyResult<()> {
        py.detach(|| {
            guarded(|| {
                let mut counter = self.counter();
                counter.add_lines(&text)?;
                lock(&self.progress).bytes(counter.bytes_seen)?;
                Ok(())
            })
        })
    }

    /// Counts the words of rows `first..first + length` of an Arrow string array (each row one text), given its
    /// value and offset buffers (`width`-byte offsets) as read-only byte buffers: read in place, no string per row.
    fn add_arrow_strings(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        offsets: &Bound<'_, PyAny>,
        width: usize,
        first: usize,
        length: usize,
    ) -> PyResult<()> {
        let values = ByteView::of(values)?;
        let offsets = ByteView::of(offsets)?;
        py.detach(|| {
            guarded(|| {
                let texts = arrow::strings(values.bytes(), offsets.bytes(), width, first, length)?;
                let mut counter = self.counter();
                let mut progress = lock(&self.progress);
                counter.add_texts(&texts)?;
                progress.bytes(counter.bytes_seen)?;
                Ok(())
            })
        })
    }

    /// The words counted so far as the counts of unit `unit` of a larger corpus, each with its first position;
    /// the counter is left empty for the next unit.
    fn take_unit(&self, py: Python<'_>, unit: u64) -> PyResult<PartialCounts> {
        let counts = py.detach(|| guarded(|| self.counter().take_unit(unit)))?;
        Ok(PartialCounts { counts: Mutex::new(counts) })
    }

    /// Adds counts merged elsewhere, their words in order of first appearance; `consume` empties `counts`
    /// (no copy), else they are copied and stay.
    #[pyo3(signature = (counts, consume=false))]
    fn load_counts(&self, py: Python<'_>, counts: &PartialCounts, consume: bool) -> PyResult<()> {
        let taken = {
            let mut held = lock_attached(py, &counts.counts);
            if consume { std::mem::take(&mut *held) } else { held.clone() }
        };
        py.detach(|| guarded(|| self.counter().load_counts(taken)))
    }

    /// Counts the words of a UTF-8 file, line by line.
    fn add_file(&self, py: Python<'_>, path: String, errors: &str) -> PyResult<u64> {
        let errors = Utf8Errors::parse(errors).map_err(to_py)?;
        py.detach(|| {
            guarded(|| {
                use std::sync::atomic::Ordering::Relaxed;
                let mut counter = self.counter();
                let mut progress = lock(&self.progress);
                let (text_before, start) = (counter.bytes_seen, self.files_read.load(Relaxed));
                let mut read = 0;
                counter.add_file(&path, errors, |position| {
                    read = position;
                    progress.bytes(start + position)
                })?;
                self.files_read.fetch_add(read, Relaxed);
                Ok(counter.bytes_seen - text_before)
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

    /// Number of distinct words. Counting's errors surface here at the latest (a batch's counts are folded in
    /// with the next one's, or when asked for): taking one for "no words" told a pattern that failed on the text
    /// as "the corpus is empty".
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        guarded(|| Ok(self.counter_attached(py).words()?.len()))
    }

    /// Whether no word was counted (cheaper than `len(...) == 0` when the pieces are kept, not counted). Counting's
    /// errors surface here too.
    fn is_empty(&self, py: Python<'_>) -> PyResult<bool> {
        guarded(|| self.counter_attached(py).is_empty())
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

/// Word counts of part of a corpus, each word with its first position in input order: counts from many workers
/// merge in any order into the counts of the whole corpus, words in order of first appearance.
#[pyclass(module = "bytepair._core")]
pub struct PartialCounts {
    counts: Mutex<FirstSeenCounts>,
}

#[pymethods]
impl PartialCounts {
    #[new]
    fn new() -> Self {
        PartialCounts { counts: Mutex::new(FirstSeenCounts::default()) }
    }

    /// Adds `other`'s counts, leaving it empty.
    fn merge(&self, py: Python<'_>, other: &PartialCounts) -> PyResult<()> {
        if std::ptr::eq(self, other) {
            return Err(PyValueError::new_err("cannot merge counts into themselves"));
        }
        let taken = std::mem::take(&mut *lock_attached(py, &other.counts));
        py.detach(|| {
            lock(&self.counts).merge(taken);
        });
        Ok(())
    }

    /// The counts as bytes for another process (`from_bytes` reads them back).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let data = py.detach(|| lock(&self.counts).to_bytes());
        PyBytes::new(py, &data)
    }

    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<PartialCounts> {
        let counts = py.detach(|| guarded(|| FirstSeenCounts::from_bytes(data)))?;
        Ok(PartialCounts { counts: Mutex::new(counts) })
    }

    /// A word-counts file's text (see `crate::formats::counts_tsv`), words in order of first appearance.
    fn to_tsv<'py>(
        &self,
        py: Python<'py>,
        pattern: Option<String>,
        lowercase: bool,
        special_tokens: Vec<String>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let data = py.detach(|| {
            guarded(|| {
                let counts = lock(&self.counts);
                let header = counts_tsv::Header {
                    pattern,
                    lowercase,
                    special_tokens,
                    words: counts.len() as u64,
                    bytes_seen: counts.bytes_seen,
                    special_bytes: counts.special_bytes,
                };
                counts_tsv::write(&header, counts.ordered())
            })
        })?;
        Ok(PyBytes::new(py, &data))
    }

    /// Reads a word-counts file's text (`name` for messages): the counts (first positions: the line order) and
    /// the header's (pattern, lowercase, special_tokens), or None for a file without a header.
    #[staticmethod]
    #[allow(clippy::type_complexity)]
    fn from_tsv(
        py: Python<'_>,
        data: &[u8],
        name: &str,
    ) -> PyResult<(PartialCounts, Option<(Option<String>, bool, Vec<String>)>)> {
        let (header, words) = py.detach(|| guarded(|| counts_tsv::read(data, name)))?;
        let mut counts = FirstSeenCounts::default();
        counts.add_ordered(0, words);
        let settings = header.map(|h| {
            counts.bytes_seen = h.bytes_seen;
            counts.special_bytes = h.special_bytes;
            (h.pattern, h.lowercase, h.special_tokens)
        });
        Ok((PartialCounts { counts: Mutex::new(counts) }, settings))
    }

    /// An independent copy.
    fn copy(&self, py: Python<'_>) -> PartialCounts {
        PartialCounts { counts: Mutex::new(lock_attached(py, &self.counts).clone()) }
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        lock_attached(py, &self.counts).len()
    }

    #[getter]
    fn bytes_seen(&self, py: Python<'_>) -> u64 {
        lock_attached(py, &self.counts).bytes_seen
    }

    #[getter]
    fn special_bytes(&self, py: Python<'_>) -> u64 {
        lock_attached(py, &self.counts).special_bytes
    }

    /// The words and their counts, in order of first appearance.
    fn items(&self, py: Python<'_>) -> Vec<(String, u64)> {
        let counts = lock_attached(py, &self.counts);
        counts.ordered().into_iter().map(|(w, c)| (w.to_string(), c)).collect()
    }
}

fn other_strand(reverse_complement: bool, rna: bool) -> dna::OtherStrand {
    match (reverse_complement, rna) {
        (false, _) => dna::OtherStrand::No,
        (true, false) => dna::OtherStrand::Dna,
        (true, true) => dna::OtherStrand::Rna,
    }
}

/// The bytes of a Python buffer (a `memoryview` of an Arrow buffer): borrowed in place when it is read-only and
/// contiguous, else copied.
struct ByteView {
    buffer: PyBuffer<u8>,
    copy: Option<Vec<u8>>,
}

impl ByteView {
    fn of(object: &Bound<'_, PyAny>) -> PyResult<ByteView> {
        let buffer = PyBuffer::<u8>::get(object)?;
        let copy = if buffer.readonly() && buffer.is_c_contiguous() { None } else { Some(buffer.to_vec(object.py())?) };
        Ok(ByteView { buffer, copy })
    }

    fn bytes(&self) -> &[u8] {
        match &self.copy {
            Some(copy) => copy,
            // SAFETY: the buffer is C-contiguous and read-only, and `self.buffer` keeps the exporting object and its
            // memory alive (and unchanged: nobody may write a read-only buffer) for as long as `self` lives, which
            // outlives the returned slice.
            None => match self.buffer.as_slice_ptr() {
                Some(ptr) => unsafe { &*(ptr.as_ptr() as *const [u8]) },
                None => &[],
            },
        }
    }
}
