//! `CoreTokenizer`: a trained or loaded tokenizer — encoding, decoding, its vocabulary and settings, and
//! loading and saving it through `crate::formats`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString};

use super::batch::{self, naming_text};
use super::text::{self, PARALLEL_FROM_CHARS, Source, batch_threads, sources, utf8};
use super::{guarded, numpy_out};
use crate::formats::{hf, native, tiktoken};
use crate::pretokenize::{Pattern, Unmatched};
use crate::tokenizer::{SpecialPolicy, Tokenizer};
use crate::utf8::NoUtf8;

/// (mode, pattern name, custom regex, lowercase, prefix, suffix, unk_token, tie_break)
type Settings =
    (String, Option<String>, Option<String>, bool, Option<String>, Option<String>, Option<String>, Option<String>);

/// A trained or loaded tokenizer (the Python class `bytepair.Tokenizer` wraps it).
#[pyclass(module = "bytepair._core", frozen)]
pub struct CoreTokenizer {
    pub(super) inner: Tokenizer,
    /// One Python int per id, made the first time a list holds that id (see `IdObjects`).
    id_objects: std::sync::OnceLock<IdObjects>,
}

/// One Python int per id, each made the first time a list of ids holds it and kept: a list is then built by
/// reference counting alone (creating an int per id cost ~25 ns, a third of encoding a 4 KB document).
///
/// Made per id rather than all at load: a process that never asks for lists (numpy output, token files)
/// holds none, and English text uses a fraction of a large vocabulary. All made at load, o200k_base's 200 K
/// ints were 5.3 MB of the loaded tokenizer's RSS, and lists per 4 KB document of English were slower (cold
/// 77–84 MB/s, against 87–93 with the ints made as met: fewer, and close together in memory). A slot is a
/// pointer, null until its int is made; the check is one well-predicted branch per id.
struct IdObjects {
    /// An owned reference per id, or null.
    slots: Box<[std::sync::atomic::AtomicPtr<pyo3::ffi::PyObject>]>,
}

impl IdObjects {
    fn new(len: usize) -> IdObjects {
        IdObjects { slots: (0..len).map(|_| std::sync::atomic::AtomicPtr::new(std::ptr::null_mut())).collect() }
    }

    /// A borrowed reference to the int `id` (which must be below the vocabulary's size).
    #[inline(always)]
    fn get(&self, py: Python<'_>, id: u32) -> *mut pyo3::ffi::PyObject {
        let object = self.slots[id as usize].load(std::sync::atomic::Ordering::Acquire);
        if object.is_null() { self.make(py, id) } else { object }
    }

    #[cold]
    #[inline(never)]
    fn make(&self, py: Python<'_>, id: u32) -> *mut pyo3::ffi::PyObject {
        use std::sync::atomic::Ordering;
        let made = id.into_pyobject(py).expect("ints convert").into_any().into_ptr();
        // (Two threads of a free-threaded Python may make the same int: the first one stored stays.)
        match self.slots[id as usize].compare_exchange(std::ptr::null_mut(), made, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => made,
            Err(stored) => {
                // SAFETY: `made` is the owned reference `into_ptr` gave, not stored anywhere.
                unsafe { pyo3::ffi::Py_DECREF(made) };
                stored
            }
        }
    }
}

impl Drop for IdObjects {
    fn drop(&mut self) {
        let slots = std::mem::take(&mut self.slots);
        Python::attach(|_| {
            for slot in slots.iter() {
                let object = slot.load(std::sync::atomic::Ordering::Acquire);
                if !object.is_null() {
                    // SAFETY: each non-null slot holds the one owned reference `make` stored; it is given up once.
                    unsafe { pyo3::ffi::Py_DECREF(object) };
                }
            }
        });
    }
}

impl CoreTokenizer {
    pub(super) fn new(inner: Tokenizer) -> CoreTokenizer {
        CoreTokenizer { inner, id_objects: std::sync::OnceLock::new() }
    }

    /// `new` for a tokenizer just read from a file: the reading's temporaries (parsed files, tables grown
    /// while filled) go back to the OS first, so that `prepare`, which follows, builds on live memory only
    /// (releasing there, from Python, took the peak RSS of loading r50k_base from 53 to 49 MB above the
    /// interpreter's, o200k_base's from 135 to 127).
    fn loaded(inner: Tokenizer) -> CoreTokenizer {
        crate::release_freed_memory();
        CoreTokenizer::new(inner)
    }

    /// The ids of many texts, encoded in parallel (order kept); `threads` 0 = every core.
    fn encode_batch_ids(
        &self,
        py: Python<'_>,
        texts: &[Source<'_>],
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
        threads: usize,
    ) -> PyResult<Vec<Vec<u32>>> {
        let policy = self.policy(allowed, disallowed)?;
        let encode = |t: &Source<'_>| self.inner.encode(&t.to_utf8().map_err(NoUtf8::into_error)?, &policy);
        py.detach(|| {
            self.inner.expect_text(texts.iter().map(|t| t.size()).sum());
            guarded(|| {
                // Every result, then the first error in text order (collecting into a Result would stop at
                // whichever error a thread met first: a different message from one run to the next). On the
                // pool, this thread checks for Ctrl-C, which stops the pool's threads too; a small batch is
                // encoded on this thread.
                let results: Vec<crate::error::Result<Vec<u32>>> =
                    if batch_threads(threads, texts, PARALLEL_FROM_CHARS) == 1 {
                        texts.iter().map(encode).collect()
                    } else {
                        let pool = crate::thread_pool(threads)?;
                        crate::progress::map_interruptible(&pool, &Default::default(), texts, encode)?
                    };
                let several = texts.len() > 1;
                results.into_iter().enumerate().map(|(i, r)| r.map_err(|e| naming_text(e, i, several))).collect()
            })
        })
    }

    /// Which special tokens may be produced / are errors, one flag per special token.
    pub(super) fn policy(&self, allowed: Vec<bool>, disallowed: Vec<bool>) -> PyResult<SpecialPolicy> {
        let n = self.inner.specials.tokens().len();
        if allowed.len() != n || disallowed.len() != n {
            return Err(PyValueError::new_err("allowed/disallowed must have one flag per special token"));
        }
        Ok(SpecialPolicy { allowed, disallowed })
    }

    /// `policy`, or with both None the default one: no special token allowed, every one disallowed.
    fn policy_or_default(&self, allowed: Option<Vec<bool>>, disallowed: Option<Vec<bool>>) -> PyResult<SpecialPolicy> {
        let n = self.inner.specials.tokens().len();
        match (allowed, disallowed) {
            (None, None) => Ok(SpecialPolicy { allowed: vec![false; n], disallowed: vec![true; n] }),
            (Some(allowed), Some(disallowed)) => self.policy(allowed, disallowed),
            _ => Err(PyValueError::new_err("give both allowed and disallowed, or neither")),
        }
    }

    /// The table of one Python int per id (each made when a list first holds it).
    fn id_objects(&self) -> &IdObjects {
        self.id_objects.get_or_init(|| IdObjects::new(self.inner.vocab.len()))
    }

    /// `ids` as a Python list of ints.
    pub(super) fn id_list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let objects = self.id_objects();
        // Filled by hand: `PyList::new` over an iterator spent ~15 instructions per id, this loop ~11 (lists
        // of ids are a sixth of encoding a document).
        // SAFETY: `PyList_New` gives a list of `len` empty slots (or NULL with an exception set); each slot is
        // set once with a new reference (Py_INCREF) to a live int (`IdObjects` keeps one reference to each), as
        // `PyList_SET_ITEM` requires, before the list is handed to Python.
        unsafe {
            let list = pyo3::ffi::PyList_New(ids.len() as pyo3::ffi::Py_ssize_t);
            if list.is_null() {
                let err = PyErr::fetch(py);
                if err.is_instance_of::<pyo3::exceptions::PyMemoryError>(py) {
                    return Err(super::to_py(crate::error::Error::memory(
                        ids.len().saturating_mul(size_of::<usize>()),
                        &format!("a list of {} ids", ids.len()),
                    )));
                }
                return Err(err);
            }
            for (k, &id) in ids.iter().enumerate() {
                let object = objects.get(py, id);
                pyo3::ffi::Py_INCREF(object);
                pyo3::ffi::PyList_SET_ITEM(list, k as pyo3::ffi::Py_ssize_t, object);
            }
            Ok(Bound::from_owned_ptr(py, list).cast_into_unchecked())
        }
    }
}

#[pymethods]
impl CoreTokenizer {
    /// Builds what encoding needs — the fast piece encoder — now rather than on the first call. (The ints of
    /// lists of ids are made as lists first hold them: see `IdObjects`.)
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
    }

    /// Encodes text. `allowed` / `disallowed` give, per special token (in `special_tokens()` order), whether it
    /// may be produced and whether finding it in the text is an error.
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
    ) -> PyResult<Bound<'py, PyList>> {
        let policy = self.policy(allowed, disallowed)?;
        let ids = text::encode_str(py, text, &self.inner, &policy, 0)?;
        self.id_list(py, &ids)
    }
    /// Encodes many texts in parallel (order kept); `threads` 0 = every core. `collect_young`: the caller has
    /// paused Python's cycle collector, which was on; the young lists are then collected between chunks while
    /// other threads encode (see `batch`).
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
        let lists = batch::encode_pipelined(self, py, &sources(&texts)?, &policy, threads, collect_young);
        text::surrogate_first(&texts, lists)
    }

    /// Ids of `text` as a `uint32` numpy array; `allowed` / `disallowed` None: the default policy (no special
    /// token allowed, all disallowed). See `numpy_out`.
    #[pyo3(signature = (text, allowed=None, disallowed=None))]
    fn encode_numpy<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: Option<Vec<bool>>,
        disallowed: Option<Vec<bool>>,
    ) -> PyResult<Bound<'py, numpy::PyArray1<u32>>> {
        let policy = self.policy_or_default(allowed, disallowed)?;
        numpy_out::encode(self, py, text, &policy)
    }

    /// Ids of many texts as one flat `uint32` array and `int64` offsets (`len(texts) + 1`), encoded in parallel
    /// on `threads` threads (0: every core). See `numpy_out`.
    #[pyo3(signature = (texts, threads, allowed=None, disallowed=None))]
    fn encode_batch_numpy<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        threads: usize,
        allowed: Option<Vec<bool>>,
        disallowed: Option<Vec<bool>>,
    ) -> PyResult<numpy_out::IdsAndOffsets<'py>> {
        let policy = self.policy_or_default(allowed, disallowed)?;
        let arrays = numpy_out::encode_batch(self, py, &sources(&texts)?, &policy, threads);
        text::surrogate_first(&texts, arrays)
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
        let batches = self.encode_batch_ids(py, &sources(&texts)?, allowed, disallowed, threads);
        let batches = text::surrogate_first(&texts, batches)?;
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
        text: &Bound<'_, PyString>,
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
        chars: bool,
    ) -> PyResult<Vec<(u32, usize, usize)>> {
        let policy = self.policy(allowed, disallowed)?;
        let text = utf8(text)?;
        let (ids, spans) = py.detach(|| guarded(|| self.inner.encode_with_offsets(&text, &policy, chars)))?;
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

    /// Ids of bytes encoded as one piece, without pre-tokenization (tiktoken's `encode_single_piece`).
    fn encode_single_piece(&self, py: Python<'_>, piece: Vec<u8>) -> PyResult<Vec<u32>> {
        py.detach(|| guarded(|| self.inner.encode_single_piece(&piece)))
    }

    /// (start, end) byte offsets of the pieces the pre-tokenizer cuts `text` into.
    fn piece_spans(&self, py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<Vec<(usize, usize)>> {
        let text = utf8(text)?;
        py.detach(|| guarded(|| self.inner.piece_spans(&text)))
    }

    /// Number of tokens of a text.
    fn count(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
    ) -> PyResult<usize> {
        let policy = self.policy(allowed, disallowed)?;
        let text = utf8(text)?;
        py.detach(|| guarded(|| self.inner.count(&text, &policy)))
    }

    /// A tokenizer from a tiktoken rank file; `specials` are (text, id); `unmatched` for a regex pattern.
    #[staticmethod]
    #[pyo3(signature = (path, pattern, specials, unmatched="keep"))]
    fn from_tiktoken(
        py: Python<'_>,
        path: String,
        pattern: Option<&str>,
        specials: Vec<(String, u32)>,
        unmatched: &str,
    ) -> PyResult<CoreTokenizer> {
        let pattern = Pattern::from_name_or_regex(pattern, Unmatched::parse(unmatched).map_err(super::to_py)?);
        py.detach(|| guarded(|| crate::formats::tiktoken::load(&path, pattern, &specials).map(CoreTokenizer::loaded)))
    }

    /// A tokenizer from a HF `tokenizer.json` holding a BPE model (see `formats::hf`).
    #[staticmethod]
    fn from_hf(py: Python<'_>, path: String) -> PyResult<CoreTokenizer> {
        py.detach(|| guarded(|| hf::load(&path)).map(CoreTokenizer::loaded))
    }

    /// The tokenizer as a HF `tokenizer.json` (see `formats::hf`).
    fn to_hf(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| guarded(|| hf::save(&self.inner)))
    }

    /// A tokenizer from GPT-2 / HF `vocab.json` + `merges.txt`; `unmatched` for a regex pattern.
    #[staticmethod]
    #[pyo3(signature = (vocab_path, merges_path, specials, pattern, unmatched="keep"))]
    fn from_gpt2(
        py: Python<'_>,
        vocab_path: String,
        merges_path: String,
        specials: Vec<String>,
        pattern: Option<&str>,
        unmatched: &str,
    ) -> PyResult<CoreTokenizer> {
        let pattern = Pattern::from_name_or_regex(pattern, Unmatched::parse(unmatched).map_err(super::to_py)?);
        py.detach(|| {
            guarded(|| {
                crate::formats::gpt2::load(&vocab_path, &merges_path, &specials, pattern).map(CoreTokenizer::loaded)
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
        self.inner.vocab.tokens.iter().map(|t| t.display.to_string()).collect()
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
        self.inner.vocab.merges().iter().map(|m| (m.left, m.right, m.result)).collect()
    }

    fn merge_counts(&self) -> Option<Vec<u64>> {
        self.inner.merge_counts.clone()
    }

    fn special_tokens(&self) -> Vec<String> {
        self.inner.specials.tokens().to_vec()
    }

    /// The pre-tokenizer's regex (None: no split).
    fn pattern_regex(&self) -> Option<String> {
        self.inner.pretokenizer.pattern.regex_source().map(String::from)
    }

    /// The regex a `tiktoken.Encoding` needs to cut text as this tokenizer does (see
    /// `PreTokenizer::tiktoken_regex`).
    fn tiktoken_pattern(&self) -> PyResult<String> {
        guarded(|| self.inner.pretokenizer.tiktoken_regex())
    }

    /// The tokenizer as a tiktoken rank file (see `formats::tiktoken`).
    fn to_tiktoken(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| guarded(|| tiktoken::save(&self.inner)))
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
                Pattern::Custom { regex, .. } | Pattern::HfSplit { regex, .. } => Some(regex.clone()),
                _ => None,
            },
            self.inner.lowercase,
            v.style.prefix.clone(),
            v.style.suffix.clone(),
            v.unk.map(|id| v.tokens[id as usize].display.to_string()),
            self.inner.tie_break.map(|t| t.name().to_string()),
        )
    }

    /// What the pattern does beyond its matches: (unmatched, for a custom regex: "keep", "drop" or "error";
    /// (behavior, invert) for a HF Split step).
    fn split_settings(&self) -> (Option<&'static str>, Option<(&'static str, bool)>) {
        let pattern = &self.inner.pretokenizer.pattern;
        let split = match pattern {
            Pattern::HfSplit { behavior, invert, .. } => Some((behavior.name(), *invert)),
            _ => None,
        };
        (pattern.unmatched().map(Unmatched::name), split)
    }

    /// Number of special tokens and of base symbols (they take the first ids).
    fn layout(&self) -> (usize, usize) {
        (self.inner.vocab.num_special, self.inner.vocab.num_base)
    }

    /// This tokenizer cut down to `size` ids (see `train::extend::truncated`).
    fn truncated(&self, py: Python<'_>, size: usize) -> PyResult<CoreTokenizer> {
        py.detach(|| guarded(|| crate::train::extend::truncated(&self.inner, size))).map(CoreTokenizer::new)
    }

    fn to_native(&self) -> String {
        native::save(&self.inner)
    }

    #[staticmethod]
    fn from_native(text: &str, source: &str) -> PyResult<CoreTokenizer> {
        guarded(|| native::load(text, source)).map(CoreTokenizer::loaded)
    }
}
