//! PyO3 bindings of `bytepair._core`: type conversion, releasing the GIL around long work, and mapping errors
//! to Python exceptions. No tokenizer logic lives here, and no file layout (that is `crate::formats`). One
//! file per Python class: `word_counts` (WordCounts), `tokenizer` (CoreTokenizer), `fasta` (FastaRecords),
//! `training` (train_counts), `cpu` (simd_level); `batch` is `CoreTokenizer.encode_batch`'s pipeline,
//! `numpy_out` its numpy outputs. Here: what they share.

mod batch;
mod cpu;
mod fasta;
mod numpy_out;
mod tokenizer;
mod training;
mod word_counts;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use pyo3::exceptions::{PyFileNotFoundError, PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyModule;

use crate::error::{Error, ErrorKind};

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

/// bytepair's Rust core: word counting and training (`WordCounts`, `train_counts`), tokenizers (`CoreTokenizer`:
/// encoding, decoding, loading and saving files) and FASTA/FASTQ reading (`FastaRecords`). The Python package
/// wraps it; `bytepair.Tokenizer` is the API.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<word_counts::WordCounts>()?;
    m.add_class::<tokenizer::CoreTokenizer>()?;
    m.add_class::<fasta::FastaRecords>()?;
    m.add_function(wrap_pyfunction!(training::train_counts, m)?)?;
    m.add_function(wrap_pyfunction!(cpu::simd_level, m)?)?;
    m.add_function(wrap_pyfunction!(cpu::set_simd_level, m)?)?;
    Ok(())
}
