//! `CoreTokenizer`'s numpy outputs: the ids of one text as a `uint32` array, and of many texts as one flat
//! `uint32` array with `int64` document offsets. No Python object per id. A long output's array owns the Rust
//! vector the encoder wrote (`PyArray1::from_vec`, no copy); a short one is copied into an array numpy
//! allocates (`COPIED_BELOW_CHARS`, `COPIED_BELOW_IDS`), one text's from a vector its thread keeps (`SCRATCH`).
//!
//! Performance notes (per ~4 KB document of English, r50k, on the shared development machine):
//! - Before this, `encode_to_numpy` went through the batch path for one text: a thread-pool dispatch, the ids
//!   copied into a `bytearray`, `np.frombuffer` in Python: half the speed of the list API per document.
//! - Texts under `DETACH_FROM` bytes are encoded with the GIL held: releasing and taking it back costs about as
//!   much as encoding a few hundred bytes, and other Python threads wait at most ~0.1 ms.
//! - Short outputs are copied (AMD EPYC Zen 5, 2026-12-07). A caller that keeps its documents' arrays (a list
//!   of them, as the benchmark and most pipelines do) had each in a vector of its own from mimalloc, which hands
//!   the pages of freed vectors back to the system: after a first 10 MB of documents was encoded and its arrays
//!   dropped, the next 10 MB took 1 446–3 202 page faults (r50k, cl100k), against 21–30 with the ids encoded
//!   into a vector the thread keeps warm and copied (a 4 KB copy per ~15 µs document) into numpy's allocation,
//!   which the C library's heap keeps and hands out again. One call per ~4 KB document, alternated processes
//!   pinned to one CPU, medians of the pairs' ratios: steady r50k +17 %, cl100k +28 % (7 pairs each), o200k
//!   +20 % (3); cold +4 % / +9 %; Python source and multilingual documents alike; peak RSS 8–17 MB lower.
//!   Batches of 8 documents: steady-pass faults 960 → 60. Above ~128 KB of ids the C library maps every array
//!   afresh (batches of 64 documents copied: 1 040 → 1 344 faults), so longer batch outputs keep their vector.
//!   One text is copied up to the length encoded in windows (`COPIED_BELOW_CHARS`), first set at 32 K
//!   characters: 10 MB of 64–96 KB documents, one call each (r50k, cl100k, 3 pairs each), had 426–1 423 faults
//!   in the steady pass as handed over, 13–29 copied; cold +3 to +27 %, steady −10 to +24 % (most pairs faster),
//!   peak RSS 10–13 MB lower. A longer text keeps its room reserved once, on huge pages (`id_room`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use numpy::PyArray1;
use pyo3::exceptions::PyImportError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::batch::naming_text;
use super::guarded;
use super::text::{
    PARALLEL_FROM_CHARS, Source, Transcoder, WINDOWS_FROM, batch_threads, chars, encode_str, encode_str_into,
};
use super::tokenizer::CoreTokenizer;
use crate::error::Error;
use crate::tokenizer::SpecialPolicy;

/// The flat ids of a batch and each text's offsets into them.
pub(super) type IdsAndOffsets<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<i64>>);

/// A chunk of texts encoded: their ids one after another, and where each text's end.
type EncodedChunk = (Vec<u32>, Vec<usize>);

/// Most bytes of text in a chunk of a batch encoded in parallel: a chunk's ids wait for the chunks before it in
/// a vector of their own, so that smaller chunks keep fewer of them waiting (and their vectors, reused, warm).
const PARALLEL_CHUNK_MOST: usize = 256 * 1024;

/// Texts from this many bytes on are encoded with the GIL released.
const DETACH_FROM: usize = 32 * 1024;

/// Texts per chunk of a batch: at least this many bytes of text (and, in parallel, 8 chunks per thread, so that
/// no thread waits long for the last). A chunk's texts are transcoded when it is encoded (`text::Source`).
const CHUNK_BYTES: usize = 64 * 1024;

/// Texts of fewer characters than this are encoded into the calling thread's `SCRATCH` vector and their ids
/// copied into an array numpy allocates; a longer text's vector (room reserved once, on huge pages: `id_room`)
/// becomes its array's memory (module notes). The texts encoded whole, not in windows (`text::Text`).
const COPIED_BELOW_CHARS: usize = WINDOWS_FROM;

/// A batch's ids are copied into an array numpy allocates when there are fewer than this (128 KB: the C
/// library's malloc maps larger blocks afresh each time), else its vector becomes the array's memory.
const COPIED_BELOW_IDS: usize = 1 << 15;

/// The most ids' room a thread's `SCRATCH` keeps for its next text (512 KB): a text of few characters but many
/// bytes may grow it further, and that room is freed rather than held.
const SCRATCH_KEPT_IDS: usize = 1 << 17;

thread_local! {
    /// The vector a thread encodes its short texts into (`encode`), reused from one text to the next.
    static SCRATCH: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Whether numpy was found once (`numpy_ready`).
static NUMPY_FOUND: AtomicBool = AtomicBool::new(false);

/// Ok if numpy can be imported, else an ImportError that says what to do: numpy is no dependency of bytepair, and
/// the numpy crate panics when it cannot load numpy's C API. Imports it until found once, then one load.
fn numpy_ready(py: Python<'_>) -> PyResult<()> {
    if NUMPY_FOUND.load(Ordering::Relaxed) {
        return Ok(());
    }
    match py.import("numpy") {
        Ok(_) => {
            NUMPY_FOUND.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(error) => Err(PyImportError::new_err(format!(
            "numpy arrays need numpy, which could not be imported ({error}): `pip install numpy`, or use encode, \
             encode_batch or encode_batch_packed, which give lists and bytes"
        ))),
    }
}

/// The ids of `text` as a `uint32` array.
pub(super) fn encode<'py>(
    tok: &CoreTokenizer,
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    policy: &SpecialPolicy,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    numpy_ready(py)?;
    if chars(text)? < COPIED_BELOW_CHARS {
        let mut ids = SCRATCH.take();
        let array = encode_str_into(py, text, &tok.inner, policy, DETACH_FROM, &mut ids)
            .map(|()| PyArray1::from_slice(py, &ids));
        if ids.capacity() <= SCRATCH_KEPT_IDS {
            SCRATCH.set(ids);
        }
        return array;
    }
    let ids = encode_str(py, text, &tok.inner, policy, DETACH_FROM)?;
    Ok(PyArray1::from_vec(py, fitted(ids)))
}

/// The ids of `texts`, one after another, as one `uint32` array, and where each text's ids start and end
/// (`len(texts) + 1` offsets, `int64`); on `threads` threads (0: every core).
pub(super) fn encode_batch<'py>(
    tok: &CoreTokenizer,
    py: Python<'py>,
    texts: &[Source<'_>],
    policy: &SpecialPolicy,
    threads: usize,
) -> PyResult<IdsAndOffsets<'py>> {
    numpy_ready(py)?;
    let threads = batch_threads(threads, texts, PARALLEL_FROM_CHARS);
    let several = texts.len() > 1;
    let (ids, offsets) = py.detach(|| {
        guarded(|| {
            let bytes: usize = texts.iter().map(|t| t.size()).sum();
            tok.inner.expect_text(bytes);
            // One thread: chunk by chunk on this one, each chunk's texts transcoded (when not ASCII) as it comes.
            let (chunks, helpers) = if threads == 1 {
                (chunks_of(texts, |_| CHUNK_BYTES), None)
            } else {
                // The last chunks smaller, down to `CHUNK_BYTES`, so that the threads finish together: with
                // them all alike, one thread went on alone for ~2 ms of a 10 MB batch's 35 (perf, cold).
                let most = (bytes / (8 * threads)).clamp(CHUNK_BYTES, PARALLEL_CHUNK_MOST);
                let target = |left: usize| (left / (4 * threads)).clamp(CHUNK_BYTES, most);
                (chunks_of(texts, target), Some(crate::thread_pool(threads - 1)?))
            };
            let (ids, ends) = encode_in_order(tok, &chunks, policy, several, helpers.as_deref(), bytes, texts.len())?;
            Ok((ids, offsets_of(&ends)))
        })
    })?;
    Ok((array_of(py, ids), PyArray1::from_vec(py, offsets)))
}

/// Encodes `chunk` (which starts at `texts[first]`, transcoded by `transcoder`) into `ids`, and where each
/// text's ids end in them into `ends` (both cleared first); an error names the text it is about.
#[allow(clippy::too_many_arguments)]
fn encode_chunk_into(
    tok: &CoreTokenizer,
    chunk: &[Source<'_>],
    first: usize,
    policy: &SpecialPolicy,
    several: bool,
    transcoder: &mut Transcoder,
    ids: &mut Vec<u32>,
    ends: &mut Vec<usize>,
) -> Result<(), Error> {
    let chunk = transcoder.texts(chunk)?;
    tok.inner.encode_concatenated_into(&chunk, policy, ids, ends).map_err(|e| {
        // Which text: the first of the chunk that fails alone.
        let j = chunk.iter().position(|t| tok.inner.encode(t, policy).is_err()).unwrap_or(0);
        naming_text(e, first + j, several)
    })
}

/// Contiguous chunks of `texts` (each with the index of its first text) of at least `target(left)` bytes
/// (about; the last may be shorter), `left` being the bytes of the texts not yet in a chunk.
fn chunks_of<'a, 't>(texts: &'a [Source<'t>], target: impl Fn(usize) -> usize) -> Vec<(usize, &'a [Source<'t>])> {
    let mut chunks = Vec::new();
    let mut left: usize = texts.iter().map(|t| t.size()).sum();
    let (mut start, mut size) = (0, 0);
    let mut wanted = target(left);
    for (i, text) in texts.iter().enumerate() {
        size += text.size();
        if size >= wanted {
            chunks.push((start, &texts[start..=i]));
            left -= size;
            (start, size, wanted) = (i + 1, 0, target(left));
        }
    }
    if start < texts.len() {
        chunks.push((start, &texts[start..]));
    }
    chunks
}

/// The chunks being encoded in parallel and placed, in text order, into one vector (see `encode_in_order`).
struct Placing {
    ids: Vec<u32>,
    ends: Vec<usize>,
    /// The chunk to place next, and the chunks encoded before it was.
    next: usize,
    waiting: BTreeMap<usize, EncodedChunk>,
    /// Vectors of chunks already placed, for the next chunks to encode into.
    spare: Vec<EncodedChunk>,
    /// The first failure in text order (a chunk's index, its error).
    failed: Option<(usize, Error)>,
}

/// Encodes `chunks` on this thread and every thread of `helpers` (or on this thread alone, without them),
/// taking them in text order; a chunk is copied into the batch's vector as soon as the chunks before it are (by
/// the thread that encoded it, or the one whose chunk was the last missing), and its vectors go back to be
/// encoded into again.
///
/// The chunks used to be encoded all into vectors of their own and copied into a new vector at the end: twice
/// the ids' size in memory the process had not touched, and page faults in two threads of one process wait
/// for each other; a 2-thread batch's CPU ÷ wall dropped to ~1.0 in some cold passes (10 MB of English, r50k).
fn encode_in_order(
    tok: &CoreTokenizer,
    chunks: &[(usize, &[Source<'_>])],
    policy: &SpecialPolicy,
    several: bool,
    helpers: Option<&rayon::ThreadPool>,
    bytes: usize,
    texts: usize,
) -> Result<(Vec<u32>, Vec<usize>), Error> {
    let mut ids = Vec::new();
    let _room = crate::id_room::reserve(&mut ids, bytes)?;
    let placing = Mutex::new(Placing {
        ids,
        ends: Vec::with_capacity(texts),
        next: 0,
        waiting: BTreeMap::new(),
        spare: Vec::new(),
        failed: None,
    });
    let lock = || placing.lock().unwrap_or_else(PoisonError::into_inner);
    let taken = AtomicUsize::new(0);
    let work = || {
        let mut transcoder = Transcoder::default();
        loop {
            let k = taken.fetch_add(1, Ordering::Relaxed);
            let Some(&(first, chunk)) = chunks.get(k) else { break };
            let (mut chunk_ids, mut chunk_ends) = lock().spare.pop().unwrap_or_default();
            let encoded =
                encode_chunk_into(tok, chunk, first, policy, several, &mut transcoder, &mut chunk_ids, &mut chunk_ends);
            let mut p = lock();
            let placed = encoded.and_then(|()| {
                p.waiting.insert(k, (chunk_ids, chunk_ends));
                place_ready(&mut p)
            });
            if let Err(e) = placed {
                // Every chunk before this one was taken before it, and is finished by its thread.
                if p.failed.as_ref().is_none_or(|&(at, _)| k < at) {
                    p.failed = Some((k, e));
                }
                taken.store(chunks.len(), Ordering::Relaxed);
                break;
            }
        }
    };
    match helpers {
        // This thread works too, rather than waiting for a pool of `threads`: the first batch of a process
        // started its new threads on one core, and the second found a core of its own 1.5–2.7 ms later (perf
        // timelines, 10 MB of ~4 KB English documents, cold: ~35 ms on two threads).
        Some(helpers) => helpers.in_place_scope(|scope| {
            scope.spawn_broadcast(|_, _| work());
            work();
        }),
        None => work(),
    }
    let p = placing.into_inner().unwrap_or_else(PoisonError::into_inner);
    match p.failed {
        Some((_, e)) => Err(e),
        None => Ok((p.ids, p.ends)),
    }
}

/// Copies the chunks that are next in text order into the batch's vectors.
fn place_ready(p: &mut Placing) -> Result<(), Error> {
    while let Some((ids, ends)) = p.waiting.remove(&p.next) {
        let base = p.ids.len();
        crate::error::try_reserve(&mut p.ids, ids.len(), crate::id_room::IDS)?;
        p.ids.extend_from_slice(&ids);
        p.ends.extend(ends.iter().map(|&end| base + end));
        p.next += 1;
        p.spare.push((ids, ends));
    }
    Ok(())
}

/// The offsets of each text's ids in the batch's vector (0, then where each text's ids end).
fn offsets_of(ends: &[usize]) -> Vec<i64> {
    std::iter::once(0).chain(ends.iter().map(|&end| end as i64)).collect()
}

/// `ids` as an array: copied into one numpy allocates when they are few (`COPIED_BELOW_IDS`), else the
/// vector itself, fitted.
fn array_of(py: Python<'_>, ids: Vec<u32>) -> Bound<'_, PyArray1<u32>> {
    if ids.len() < COPIED_BELOW_IDS { PyArray1::from_slice(py, &ids) } else { PyArray1::from_vec(py, fitted(ids)) }
}

/// `ids` without much unused room (the array keeps the vector's whole allocation alive): `id_room::fit`.
fn fitted(mut ids: Vec<u32>) -> Vec<u32> {
    crate::id_room::fit(&mut ids);
    ids
}
