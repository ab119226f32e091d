//! `simd_level` / `set_simd_level`: which instruction set the kernels use (`crate::cpu`), for the tests, which
//! run every level this CPU has in one process, and for the benchmark's report; `build_profile`: how the
//! extension was compiled (`crate::build_profile`), for that report too.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::cpu::{self, Level};

/// The kernels' instruction set now: "avx512", "avx2" or "portable" (the environment's `BYTEPAIR_SIMD` caps it).
#[pyfunction]
pub(super) fn simd_level() -> &'static str {
    cpu::level().name()
}

/// Uses `name` ("portable", "avx2", "avx512") from now on, or the best level below it this CPU has; returns the
/// level now in use. Ids are the same at every level: this changes speed only.
#[pyfunction]
pub(super) fn set_simd_level(name: &str) -> PyResult<&'static str> {
    let wanted = Level::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!("unknown SIMD level {name:?}: use \"portable\", \"avx2\" or \"avx512\""))
    })?;
    Ok(cpu::set_level(wanted).name())
}

/// How the extension was compiled: "pgo:…" (profile-guided, `tools/pgo.py`), "release" or "debug".
#[pyfunction]
pub(super) fn build_profile() -> &'static str {
    crate::build_profile()
}
