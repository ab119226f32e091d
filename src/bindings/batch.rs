//! `CoreTokenizer.encode_batch`'s pipeline: the one piece of scheduling in the bindings. The calling thread
//! encodes chunks alongside the pool and, between them, builds the finished chunks' Python lists and runs
//! Python's cycle collector when it is due, all of which needs the GIL it holds; that interleaving cannot
//! move into the GIL-free core.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyModule};

use super::text::{LISTS_PARALLEL_FROM_CHARS, Source, Transcoder, batch_threads};
use super::tokenizer::CoreTokenizer;
use super::{guarded, to_py};
use crate::error::Error;
use crate::tokenizer::SpecialPolicy;

/// Texts per chunk of a parallel `encode_batch` (a few hundred KB of typical documents).
const BATCH_CHUNK: usize = 64;

/// A bad-input error about `texts[index]` of a batch says so (when the batch has several texts). `files.py`
/// reads the index back from this prefix to place the error in its file.
pub(super) fn naming_text(mut error: Error, index: usize, several: bool) -> Error {
    if several && error.kind == crate::error::ErrorKind::Value {
        error.message = format!("texts[{index}]: {}", error.message);
    }
    error
}

/// The `gc` module and its thresholds, if its collector runs by them (None, and no collection between chunks,
/// when a first threshold of 0 turns it off or an unusual `gc` module does not have them).
fn collector_thresholds(py: Python<'_>) -> Option<(Bound<'_, PyModule>, (i64, i64, i64))> {
    let gc = py.import("gc").ok()?;
    let thresholds: (i64, i64, i64) = gc.call_method0("get_threshold").ok()?.extract().ok()?;
    (thresholds.0 > 0).then_some((gc, thresholds))
}

/// Runs the cycle collector's young (or, when due, middle) generation if the collector would run now: more
/// new containers than its first threshold (and more young collections than its second). `gc`: the module.
fn collect_when_due(gc: &Bound<'_, PyModule>, (young, middle, _): (i64, i64, i64)) -> PyResult<()> {
    let (new, collected, _): (i64, i64, i64) = gc.call_method0("get_count")?.extract()?;
    if new > young {
        gc.call_method1("collect", (if collected > middle { 1 } else { 0 },))?;
    }
    Ok(())
}

/// Encodes many texts in parallel (order kept) into Python lists of ids; `threads` 0 = every core.
/// `collect_young`: the caller has paused Python's cycle collector, which was on (see below).
pub(super) fn encode_pipelined<'py>(
    tok: &CoreTokenizer,
    py: Python<'py>,
    texts: &[Source<'_>],
    policy: &SpecialPolicy,
    threads: usize,
    collect_young: bool,
) -> PyResult<Bound<'py, PyList>> {
    let threads = batch_threads(threads, texts, LISTS_PARALLEL_FROM_CHARS);
    // (A few loads: not worth releasing the GIL for, which a batch of one short text would pay.)
    tok.inner.expect_text(texts.iter().map(|t| t.size()).sum());
    // Pipelined: `threads - 1` pool threads and this one take chunks of texts in turn, and this thread, which
    // holds the GIL, also turns finished chunks into lists, in order. Building the lists is a fifth of the
    // work and needs the GIL. Done while a full pool encoded (three busy threads on two cores), threads=2
    // was ~11% slower than this (interleaved runs in one process).
    // Chunks: one thread takes longer ones (its encoder's tables stay in cache while it encodes, then the
    // lists' ints do; 512 texts was ~10% faster than 64), several take short ones, at least four each, so
    // that none waits long for the last.
    let chunk = if threads == 1 { 8 * BATCH_CHUNK } else { (texts.len() / (4 * threads)).clamp(1, BATCH_CHUNK) };
    let chunks: Vec<&[Source<'_>]> = texts.chunks(chunk).collect();
    let claimed = AtomicUsize::new(0);
    // Set when a chunk fails or Ctrl-C is pressed: no chunk is claimed after that, and a claimed chunk is
    // always encoded, so every chunk before the first failing one is encoded and the error reported is the
    // first in text order, as when encoding one text after another.
    let failed = AtomicBool::new(false);
    // Ctrl-C seen by this thread (inside a long custom-regex split, or between chunks) stops the helpers' loops
    // too, not only their next claim.
    let stop: std::sync::Arc<AtomicBool> = Default::default();
    let claim = || {
        if failed.load(Ordering::Relaxed) {
            return None;
        }
        let k = claimed.fetch_add(1, Ordering::Relaxed);
        (k < chunks.len()).then_some(k)
    };
    // (Each thread passes its own transcoder, kept from one chunk to the next.)
    let encode_chunk = |k: usize, transcoder: &mut Transcoder| {
        let result = guarded(|| {
            let texts_here = transcoder.texts(chunks[k])?;
            crate::progress::sharing_stop(&stop, || tok.inner.encode_concatenated(&texts_here, policy)).map_err(|e| {
                if e.kind == crate::error::ErrorKind::Interrupted {
                    return e;
                }
                // Which text: the first of the chunk that fails alone (a chunk is at most a few hundred).
                let j = texts_here.iter().position(|t| tok.inner.encode(t, policy).is_err()).unwrap_or(0);
                naming_text(e, k * chunk + j, texts.len() > 1)
            })
        });
        if result.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        result
    };
    type Encoded = PyResult<(Vec<u32>, Vec<usize>)>;
    let (sender, receiver) = std::sync::mpsc::channel::<(usize, Encoded)>();
    let mut lists: Vec<Bound<'py, PyList>> = Vec::with_capacity(texts.len());
    let mut failure = None;
    // The cycle collector walks every new list, ids and all, when it next runs: paused during the batch, it ran
    // as soon as the batch returned, on this thread alone while the others waited (a quarter of a 2-thread
    // batch of 4 KB documents, o200k: ~30 ms of ~120). With other threads encoding, this thread runs it
    // between chunks instead, when and as the collector would have run itself (its thresholds), so the walk
    // overlaps their encoding: the young and middle generations' collections are those the collector would
    // have made; a full one (which has a further condition) waits for the collector, as before.
    let collector = if collect_young && threads > 1 { collector_thresholds(py) } else { None };
    // This thread's part: lists from finished chunks, in order; else a chunk to encode; else wait.
    let mut pump = |mut receiver: std::sync::mpsc::Receiver<(usize, Encoded)>| {
        let mut transcoder = Transcoder::default();
        let mut waiting = std::collections::BTreeMap::<usize, Encoded>::new();
        let mut next = 0;
        while next < chunks.len() {
            while let Ok((k, result)) = receiver.try_recv() {
                waiting.insert(k, result);
            }
            if let Some(result) = waiting.remove(&next) {
                next += 1;
                match result {
                    Ok((ids, ends)) if failure.is_none() => {
                        let mut start = 0;
                        for end in ends {
                            match tok.id_list(py, &ids[start..end]) {
                                Ok(list) => lists.push(list),
                                Err(e) => {
                                    failure = Some(e);
                                    break;
                                }
                            }
                            start = end;
                        }
                        if failure.is_none()
                            && let Err(e) = py.check_signals()
                        {
                            failure = Some(e);
                        }
                        if failure.is_none()
                            && next < chunks.len()
                            && let Some((gc, thresholds)) = &collector
                            && let Err(e) = collect_when_due(gc, *thresholds)
                        {
                            failure = Some(e);
                        }
                        if failure.is_some() {
                            failed.store(true, Ordering::Relaxed);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    Ok(_) => {}
                    Err(e) => failure = failure.take().or(Some(e)),
                }
            } else if let Some(k) = claim() {
                waiting.insert(k, py.detach(|| encode_chunk(k, &mut transcoder)));
            } else {
                // Every chunk is taken and the next one is still with a helper: wait for it.
                let (back, message) = py.detach(move || {
                    let message = receiver.recv();
                    (receiver, message)
                });
                receiver = back;
                match message {
                    Ok((k, result)) => {
                        waiting.insert(k, result);
                    }
                    // Every helper has stopped: the chunks left were never claimed, after a failure.
                    Err(_) => break,
                }
            }
        }
    };
    if threads == 1 {
        drop(sender);
        pump(receiver);
    } else {
        let helpers = crate::thread_pool(threads - 1).map_err(to_py)?;
        helpers.in_place_scope(|scope| {
            for _ in 1..threads {
                let sender = sender.clone();
                let (claim, encode_chunk) = (&claim, &encode_chunk);
                scope.spawn(move |_| {
                    let mut transcoder = Transcoder::default();
                    while let Some(k) = claim() {
                        if sender.send((k, encode_chunk(k, &mut transcoder))).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(sender);
            pump(receiver);
        });
    }
    match failure {
        Some(e) => Err(e),
        None if lists.len() != texts.len() => Err(PyRuntimeError::new_err(format!(
            "internal error in bytepair's core (encode_batch made {} lists for {} texts); this is a bug — \
             please report it",
            lists.len(),
            texts.len()
        ))),
        None => PyList::new(py, lists),
    }
}
