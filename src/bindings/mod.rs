//! PyO3 bindings of `bytepair._core`: type conversion, releasing the GIL around long work, and mapping errors
//! to Python exceptions. No tokenizer logic lives here, and no file layout (that is `crate::formats`). One
//! file per Python class: `word_counts` (WordCounts, and PartialCounts: counts merged across workers),
//! `tokenizer` (CoreTokenizer), `fasta` (FastaRecords), `training` (train_counts), `cutter`
//! (DocumentCutter), `cpu` (simd_level); `batch` is `CoreTokenizer.encode_batch`'s pipeline, `numpy_out`
//! its numpy outputs, `text` how a Python str is read. Here: what they share.

mod batch;
mod cpu;
mod cutter;
mod fasta;
mod memory;
mod numpy_out;
mod text;
mod tokenizer;
mod training;
mod word_counts;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use pyo3::exceptions::{
    PyFileNotFoundError, PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyModule;

use crate::error::{Error, ErrorKind};

fn to_py(err: Error) -> PyErr {
    match err.kind {
        ErrorKind::Value | ErrorKind::Utf8 | ErrorKind::OutOfRange => PyValueError::new_err(err.message),
        ErrorKind::Io { not_found: true } => PyFileNotFoundError::new_err(err.message),
        ErrorKind::Io { not_found: false } => PyOSError::new_err(err.message),
        ErrorKind::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
        ErrorKind::Memory => PyMemoryError::new_err(err.message),
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

/// Python's main thread, when bytepair was imported there: the only thread Python delivers Ctrl-C to.
static MAIN_THREAD: std::sync::OnceLock<std::thread::ThreadId> = std::sync::OnceLock::new();

/// The Ctrl-C check of the core's long loops (`progress::Pulse`), which run on any thread: on Python's main
/// thread it asks Python; elsewhere it does nothing (other threads learn of Ctrl-C through their job's stop
/// flag). Never on a pool's thread: taking the GIL there could wait for a thread that holds it while it waits
/// for the pool.
fn check_signals_on_main_thread() -> Result<(), Error> {
    let main = MAIN_THREAD.get().is_none_or(|id| *id == std::thread::current().id());
    if main && rayon::current_thread_index().is_none() { check_signals() } else { Ok(()) }
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
    let threading = m.py().import("threading")?;
    if threading.call_method0("current_thread")?.is(&threading.call_method0("main_thread")?) {
        let _ = MAIN_THREAD.set(std::thread::current().id());
    }
    crate::progress::set_signal_check(check_signals_on_main_thread);
    m.add_class::<word_counts::WordCounts>()?;
    m.add_class::<word_counts::PartialCounts>()?;
    m.add_class::<tokenizer::CoreTokenizer>()?;
    m.add_class::<fasta::FastaRecords>()?;
    m.add_class::<cutter::DocumentCutter>()?;
    m.add_function(wrap_pyfunction!(training::train_counts, m)?)?;
    m.add_function(wrap_pyfunction!(training::extend_counts, m)?)?;
    m.add("SUPERWORDS", crate::pretokenize::SUPERWORDS)?;
    m.add_function(wrap_pyfunction!(cpu::simd_level, m)?)?;
    m.add_function(wrap_pyfunction!(cpu::set_simd_level, m)?)?;
    m.add_function(wrap_pyfunction!(cpu::build_profile, m)?)?;
    m.add_function(wrap_pyfunction!(memory::release_memory, m)?)?;
    Ok(())
}
