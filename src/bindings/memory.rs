//! `release_memory`: freed memory back to the OS, for long-running corpus workers (`crate::release_freed_memory_in`)
//! and for callers who ask (`bytepair.release_memory`).

use pyo3::prelude::*;

use super::to_py;

/// Returns the memory that the calling thread and the encoding pool of `threads` threads hold freed to the OS;
/// `threads` None: every pool kept (`bytepair.release_memory`).
#[pyfunction]
#[pyo3(signature = (threads=None))]
pub(super) fn release_memory(py: Python<'_>, threads: Option<usize>) -> PyResult<()> {
    match threads {
        Some(threads) => py.detach(|| crate::release_freed_memory_in(threads)).map_err(to_py),
        None => {
            py.detach(crate::release_freed_memory_everywhere);
            Ok(())
        }
    }
}
