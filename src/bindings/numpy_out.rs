//! `CoreTokenizer`'s numpy outputs: the ids of one text as a `uint32` array, and of many texts as one flat
//! `uint32` array with `int64` document offsets. No Python object per id: the arrays own the Rust vectors the
//! encoder wrote (`PyArray1::from_vec`), so the ids are never copied for one text, and copied once (in
//! parallel) for a batch encoded in parallel chunks.
//!
//! Performance notes (per ~4 KB document of English, r50k, on the shared development machine):
//! - Before this, `encode_to_numpy` went through the batch path for one text: a thread-pool dispatch, the ids
//!   copied into a `bytearray`, `np.frombuffer` in Python: half the speed of the list API per document.
//! - Texts under `DETACH_FROM` bytes are encoded with the GIL held: releasing and taking it back costs about as
//!   much as encoding a few hundred bytes, and other Python threads wait at most ~0.1 ms.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::batch::naming_text;
use super::guarded;
use super::text::{PARALLEL_FROM_CHARS, Source, as_strs, batch_threads, chunk_utf8, encode_str};
use super::tokenizer::CoreTokenizer;
use crate::error::Error;
use crate::tokenizer::SpecialPolicy;

/// The flat ids of a batch and each text's offsets into them.
pub(super) type IdsAndOffsets<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<i64>>);

/// A chunk of texts encoded: their ids one after another, and where each text's end.
type EncodedChunk = (Vec<u32>, Vec<usize>);

/// Texts from this many bytes on are encoded with the GIL released.
const DETACH_FROM: usize = 32 * 1024;

/// Texts per chunk of a batch: at least this many bytes of text (and, in parallel, 8 chunks per thread, so that
/// no thread waits long for the last). A chunk's texts are transcoded when it is encoded (`text::Source`).
const CHUNK_BYTES: usize = 64 * 1024;

/// The ids of `text` as a `uint32` array.
pub(super) fn encode<'py>(
    tok: &CoreTokenizer,
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    policy: &SpecialPolicy,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
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
    let threads = batch_threads(threads, texts, PARALLEL_FROM_CHARS);
    let several = texts.len() > 1;
    let (ids, offsets) = py.detach(|| {
        guarded(|| {
            let bytes: usize = texts.iter().map(|t| t.size()).sum();
            if threads == 1 {
                // Chunk by chunk on this thread: a chunk's texts are transcoded (when not ASCII) as it comes.
                // Room for the whole batch at once (as one chunk had it), so that appending chunks copies each once.
                let mut ids = Vec::new();
                crate::error::try_reserve(&mut ids, bytes / 3 + 1, "the token ids")?;
                let mut ends = Vec::with_capacity(texts.len());
                for (first, chunk) in chunks_of(texts, CHUNK_BYTES) {
                    let (chunk_ids, chunk_ends) = encode_chunk(tok, chunk, first, policy, several)?;
                    ends.extend(chunk_ends.into_iter().map(|end| end + ids.len()));
                    ids.extend_from_slice(&chunk_ids);
                }
                return Ok((fitted(ids), offsets_of(&[ends])));
            }
            let chunks = chunks_of(texts, (bytes / (8 * threads)).max(CHUNK_BYTES));
            let pool = crate::thread_pool(threads)?;
            let encoded: Vec<Result<EncodedChunk, Error>> = pool.install(|| {
                use rayon::prelude::*;
                chunks.par_iter().map(|&(first, chunk)| encode_chunk(tok, chunk, first, policy, several)).collect()
            });
            // The first failure in text order (each chunk's own is its first).
            let encoded: Vec<EncodedChunk> = encoded.into_iter().collect::<Result<_, _>>()?;
            let ends: Vec<Vec<usize>> = encoded.iter().map(|(_, ends)| ends.clone()).collect();
            Ok((joined(&pool, encoded.into_iter().map(|(ids, _)| ids).collect()), offsets_of(&ends)))
        })
    })?;
    Ok((PyArray1::from_vec(py, ids), PyArray1::from_vec(py, offsets)))
}

/// Encodes `chunk` (which starts at `texts[first]`) into one vector, and where each text's ids end in it; an
/// error names the text it is about.
fn encode_chunk(
    tok: &CoreTokenizer,
    chunk: &[Source<'_>],
    first: usize,
    policy: &SpecialPolicy,
    several: bool,
) -> Result<EncodedChunk, Error> {
    let utf8 = chunk_utf8(chunk)?;
    let chunk = as_strs(&utf8);
    tok.inner.encode_concatenated(&chunk, policy).map_err(|e| {
        // Which text: the first of the chunk that fails alone.
        let j = chunk.iter().position(|t| tok.inner.encode(t, policy).is_err()).unwrap_or(0);
        naming_text(e, first + j, several)
    })
}

/// Contiguous chunks of `texts` (each with the index of its first text) of at least `target` bytes (about; the
/// last may be shorter).
fn chunks_of<'a, 't>(texts: &'a [Source<'t>], target: usize) -> Vec<(usize, &'a [Source<'t>])> {
    let mut chunks = Vec::new();
    let (mut start, mut size) = (0, 0);
    for (i, text) in texts.iter().enumerate() {
        size += text.size();
        if size >= target {
            chunks.push((start, &texts[start..=i]));
            (start, size) = (i + 1, 0);
        }
    }
    if start < texts.len() {
        chunks.push((start, &texts[start..]));
    }
    chunks
}

/// The chunks' ids in one vector, copied in parallel on `pool`.
fn joined(pool: &rayon::ThreadPool, parts: Vec<Vec<u32>>) -> Vec<u32> {
    use rayon::prelude::*;
    let total: usize = parts.iter().map(Vec::len).sum();
    let mut all: Vec<u32> = Vec::with_capacity(total);
    let mut rest = &mut all.spare_capacity_mut()[..total];
    let mut places = Vec::with_capacity(parts.len());
    for part in &parts {
        let (place, after) = rest.split_at_mut(part.len());
        places.push(place);
        rest = after;
    }
    pool.install(|| {
        places.into_par_iter().zip(parts.par_iter()).for_each(|(place, part)| {
            for (slot, &id) in place.iter_mut().zip(part) {
                slot.write(id);
            }
        })
    });
    // SAFETY: the places split the first `total` slots of the capacity between them, and each was written whole
    // (each place is as long as its part).
    unsafe { all.set_len(total) };
    all
}

/// The offsets of each text's ids in the joined vector, from each chunk's ends.
fn offsets_of(ends: &[Vec<usize>]) -> Vec<i64> {
    let mut offsets = Vec::with_capacity(ends.iter().map(Vec::len).sum::<usize>() + 1);
    offsets.push(0);
    let mut base = 0;
    for chunk in ends {
        offsets.extend(chunk.iter().map(|&end| (base + end) as i64));
        base += chunk.last().copied().unwrap_or(0);
    }
    offsets
}

/// `ids` without much unused capacity (the array keeps the vector's whole allocation alive).
fn fitted(mut ids: Vec<u32>) -> Vec<u32> {
    if ids.capacity() - ids.len() > ids.len() / 8 + 64 {
        ids.shrink_to_fit();
    }
    ids
}
