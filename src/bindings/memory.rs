//! `release_memory`: freed memory back to the OS, for long-running corpus workers (`crate::release_freed_memory_in`).

use pyo3::prelude::*;

use super::to_py;

/// Returns the memory that the calling thread and the encoding pool of `threads` threads hold freed to the OS.
#[pyfunction]
pub(super) fn release_memory(py: Python<'_>, threads: usize) -> PyResult<()> {
    py.detach(|| crate::release_freed_memory_in(threads)).map_err(to_py)
}
