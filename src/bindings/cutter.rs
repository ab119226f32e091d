//! `DocumentCutter`: where a document read in blocks may be cut (the rules are `crate::cutting`'s).

use std::sync::Mutex;

use pyo3::prelude::*;

use super::tokenizer::CoreTokenizer;
use super::{guarded, lock};
use crate::cutting::{CutSizes, CutState, Cutter};

/// Cuts one document of a tokenizer, block after block: `cut(text)` says how many characters of the text not
/// yet handed out may be encoded apart now, `finish(rest)` checks the end.
#[pyclass(module = "bytepair._core")]
pub struct DocumentCutter {
    tokenizer: Py<CoreTokenizer>,
    cutter: Cutter,
    state: Mutex<CutState>,
}

#[pymethods]
impl DocumentCutter {
    /// `specials_split`: special-token text is a token or an error (not ordinary text). `fallback_from`,
    /// `window`: sizes in bytes (0: the defaults), small only in tests.
    #[new]
    #[pyo3(signature = (tokenizer, specials_split, fallback_from=0, window=0))]
    fn new(tokenizer: Bound<'_, CoreTokenizer>, specials_split: bool, fallback_from: usize, window: usize) -> Self {
        let defaults = CutSizes::default();
        let sizes = CutSizes {
            fallback_from: if fallback_from == 0 { defaults.fallback_from } else { fallback_from },
            window: if window == 0 { defaults.window } else { window },
        };
        let cutter = Cutter::new(&tokenizer.borrow().inner, specials_split, sizes);
        DocumentCutter { tokenizer: tokenizer.unbind(), cutter, state: Mutex::new(CutState::default()) }
    }

    /// Whether documents of `tokenizer` can be cut at all (else each is read whole).
    #[staticmethod]
    fn can_cut(tokenizer: Bound<'_, CoreTokenizer>) -> bool {
        Cutter::can_cut(&tokenizer.borrow().inner)
    }

    /// How many characters at the start of `text` may be cut off and encoded apart now (0: none yet).
    fn cut(&self, py: Python<'_>, text: &str) -> PyResult<usize> {
        let tokenizer = self.tokenizer.borrow(py);
        let tok = &tokenizer.inner;
        let at = py.detach(|| guarded(|| self.cutter.cut(tok, &mut lock(&self.state), text)))?;
        Ok(text[..at].chars().count())
    }

    /// The end of the document (`rest`: the text after the last cut).
    fn finish(&self, py: Python<'_>, rest: &str) -> PyResult<()> {
        let tokenizer = self.tokenizer.borrow(py);
        let tok = &tokenizer.inner;
        py.detach(|| guarded(|| self.cutter.finish(tok, &mut lock(&self.state), rest)))
    }
}
