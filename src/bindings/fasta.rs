//! `FastaRecords`: FASTA/FASTQ records read one at a time (the reader is `crate::formats::fasta`), and the
//! sequence options it shares with `WordCounts`.

use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::{guarded, lock, lock_attached, to_py};
use crate::formats::fasta::{self, Ambiguous, FastaReader, SequenceOptions};

/// How sequences are cleaned and cut, from the Python arguments.
pub(super) fn sequence_options(
    uppercase: bool,
    ambiguous: &str,
    chunk_length: Option<usize>,
) -> PyResult<SequenceOptions> {
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
