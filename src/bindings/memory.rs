//! `release_memory`: freed memory back to the OS, for long-running corpus workers and for callers who ask
//! (`bytepair.release_memory`; `crate::release_freed_memory_everywhere`).

use pyo3::prelude::*;

/// Returns the memory that the calling thread and every encoding pool kept hold freed to the OS.
#[pyfunction]
pub(super) fn release_memory(py: Python<'_>) {
    py.detach(crate::release_freed_memory_everywhere);
}
