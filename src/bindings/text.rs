//! A Python `str` as the UTF-8 the core reads, without the copy CPython keeps.
//!
//! PyO3's `&str` arguments come from `PyUnicode_AsUTF8AndSize`, which for a str that is not pure ASCII makes
//! a UTF-8 copy and stores it in the str object for as long as the str lives. Encoding a list of non-ASCII
//! documents therefore left every document's UTF-8 beside it: 74 MB of such documents held 280 MB more after
//! `encode_batch_to_numpy` (the copies, and the heap the encoder's temporaries left fragmented), where ASCII
//! documents, whose bytes are their UTF-8, held none of it. Here an ASCII str is borrowed as it is, and any
//! other is transcoded from its own storage (Latin-1, UCS-2 or UCS-4) into a `String` this call owns and
//! frees — for one long text, a window at a time (`Text`).
//!
//! The transcoders are `crate::utf8`'s.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::types::string::PyStringData;

use super::{guarded, to_py};
use crate::error::Error;
use crate::tokenizer::{SpecialPolicy, Tokenizer, Window};
use crate::utf8::{NoUtf8, push_latin1, push_ucs2, push_ucs4};

/// The UTF-8 of `s`: borrowed when it is ASCII, else transcoded (see the module notes).
pub(super) fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    match stored(s)?.to_utf8() {
        Ok(text) => Ok(text),
        Err(NoUtf8::NotACharacter) => s.to_str().map(Cow::Borrowed), // a lone surrogate: CPython's UnicodeEncodeError
        Err(no) => Err(to_py(no.into_error())),
    }
}

/// Characters transcoded at a time when a long str is encoded in windows (`Text::Windows`). 64 K rather than
/// 256 K: the window stays in the cache beside the encoder's tables. One call on 10 MB of UCS-2 English,
/// alternated processes, medians: cl100k −2.4 % time (6 pairs, each faster), o200k −1.5 % (5). 32 K was no
/// better than 64 K (cl100k, 6 pairs: −0.7 %); worst cases in UCS-2 (`"a"` × 10⁷, 4 MB of random digits,
/// base64, random letters) the same within single runs.
const WINDOW_CHARS: usize = 1 << 16;
/// Strs that are not ASCII are encoded in windows from this many characters on.
pub(super) const WINDOWS_FROM: usize = 2 * WINDOW_CHARS;

/// A str to encode (`encode_str`): its UTF-8 whole, or — long and not ASCII — its storage, transcoded a window
/// at a time while it is encoded (`Tokenizer::encode_windows`), so that the UTF-8 held beside the str is a
/// window's, not the whole text's: one call on 10 MB of UCS-2 English peaked at 126 MB instead of 136 (r50k),
/// at the same speed (145–162 MB/s against 145–161, old and new alternated in fresh processes). Memory the process
/// never touched is dear on this kind of virtual machine: a first 100 MB numpy array took 215 ms, the next 18 ms.
/// A text that also holds a disallowed special token may now raise that error instead of the surrogate's,
/// whichever its windows meet first.
///
/// An ASCII str is encoded whole, borrowed. By windows (each copied into the buffer just before it is encoded)
/// 10 MB of ASCII English took 4–8 % less time (r50k 47.0 → 44.1 ms, cl100k 51.0 → 48.0, alternated
/// processes), but text with few places to cut grew the buffer to its whole length, a copy of the text beside
/// it: `"a"` × 10⁷ 48 → 95 ms and 24 MB more at its peak, 4 MB of random digits (r50k) +20 %, of base64
/// (cl100k) +19 %, of random letters (o200k) +16 % — not kept.
pub(super) enum Text<'a> {
    Whole(Cow<'a, str>),
    /// (Set when a window held a lone surrogate: looking for one first read all of a long text once more,
    /// 3 % of one call on 10 MB of English.)
    Windows {
        source: Source<'a>,
        surrogate: AtomicBool,
    },
}

impl Text<'_> {
    /// The ids of the text by `tok`, into `ids` (cleared first; the calling thread need not hold the GIL).
    fn encode_into(&self, tok: &Tokenizer, policy: &SpecialPolicy, ids: &mut Vec<u32>) -> Result<(), Error> {
        match self {
            Text::Whole(text) => tok.encode_into(text, policy, ids),
            Text::Windows { source, surrogate } => {
                let (mut at, n) = (0, source.size());
                *ids = tok.encode_windows(policy, n, |buffer| {
                    let end = (at + WINDOW_CHARS).min(n);
                    source.slice(at, end).push_utf8(buffer).map_err(|no| {
                        surrogate.store(no == NoUtf8::NotACharacter, Ordering::Relaxed);
                        no.into_error()
                    })?;
                    let window = Window { chars: end - at, more: end < n };
                    at = end;
                    Ok(window)
                })?;
                Ok(())
            }
        }
    }

    /// Its length in characters.
    fn size(&self) -> usize {
        match self {
            Text::Whole(text) => text.len(),
            Text::Windows { source, .. } => source.size(),
        }
    }
}

/// The ids of `s` by `tok`, encoded without the GIL when it has `detach_from` characters or more; a lone
/// surrogate raises CPython's `UnicodeEncodeError`, as `utf8` does.
pub(super) fn encode_str(
    py: Python<'_>,
    s: &Bound<'_, PyString>,
    tok: &Tokenizer,
    policy: &SpecialPolicy,
    detach_from: usize,
) -> PyResult<Vec<u32>> {
    let mut ids = Vec::new();
    encode_str_into(py, s, tok, policy, detach_from, &mut ids)?;
    Ok(ids)
}

/// `encode_str` into `ids` (cleared first), whose room a caller may reuse from one str to the next.
pub(super) fn encode_str_into(
    py: Python<'_>,
    s: &Bound<'_, PyString>,
    tok: &Tokenizer,
    policy: &SpecialPolicy,
    detach_from: usize,
    ids: &mut Vec<u32>,
) -> PyResult<()> {
    let source = stored(s)?;
    let text = if !matches!(source, Source::Ascii(_)) && source.size() >= WINDOWS_FROM {
        Text::Windows { source, surrogate: AtomicBool::new(false) }
    } else {
        Text::Whole(utf8(s)?)
    };
    let mut run = || guarded(|| text.encode_into(tok, policy, ids));
    let encoded = if text.size() < detach_from { run() } else { py.detach(run) };
    if let Text::Windows { surrogate, .. } = &text
        && surrogate.load(Ordering::Relaxed)
    {
        s.to_str()?; // CPython raises
    }
    encoded
}

/// A str read where it is stored: its bytes when it is ASCII, else its Latin-1, UCS-2 or UCS-4 units. In a batch
/// each is transcoded by the thread that encodes it (`to_utf8`), a chunk at a time — not all of a batch at once
/// before it starts, on the thread that holds the GIL.
#[derive(Clone, Copy)]
pub(super) enum Source<'a> {
    Ascii(&'a str),
    Latin1(&'a [u8]),
    /// One byte per character, ASCII or Latin-1, not looked at yet (a batch's texts: `sources`).
    Ucs1(&'a [u8]),
    Ucs2(&'a [u16]),
    Ucs4(&'a [u32]),
}

impl<'a> Source<'a> {
    /// The same text, `Ucs1` told apart as `Ascii` or `Latin1` (by reading it).
    fn resolved(self) -> Source<'a> {
        match self {
            // SAFETY: ASCII bytes are UTF-8 (the same characters, as they are Latin-1).
            Source::Ucs1(bytes) if bytes.is_ascii() => Source::Ascii(unsafe { std::str::from_utf8_unchecked(bytes) }),
            Source::Ucs1(bytes) => Source::Latin1(bytes),
            other => other,
        }
    }

    /// The text as UTF-8 (transcoded unless it is ASCII).
    pub(super) fn to_utf8(self) -> Result<Cow<'a, str>, NoUtf8> {
        match self.resolved() {
            Source::Ascii(text) => Ok(Cow::Borrowed(text)),
            other => {
                let mut out = String::new();
                other.push_utf8(&mut out).map(|()| Cow::Owned(out))
            }
        }
    }

    /// `to_utf8`, appended to `out` (which keeps its room from one window to the next). A `Ucs1` is transcoded
    /// as Latin-1 without being read first (ASCII is Latin-1 too).
    fn push_utf8(self, out: &mut String) -> Result<(), NoUtf8> {
        match self {
            Source::Ascii(text) => {
                out.push_str(text);
                Ok(())
            }
            Source::Latin1(latin1) | Source::Ucs1(latin1) => push_latin1(latin1, out),
            Source::Ucs2(units) => push_ucs2(units, out),
            Source::Ucs4(chars) => push_ucs4(chars, out),
        }
    }

    /// Characters `start..end` of it.
    fn slice(self, start: usize, end: usize) -> Source<'a> {
        match self {
            Source::Ascii(text) => Source::Ascii(&text[start..end]),
            Source::Latin1(units) => Source::Latin1(&units[start..end]),
            Source::Ucs1(units) => Source::Ucs1(&units[start..end]),
            Source::Ucs2(units) => Source::Ucs2(&units[start..end]),
            Source::Ucs4(units) => Source::Ucs4(&units[start..end]),
        }
    }

    /// Its length in characters, which is about its length in bytes for ordinary text (for sizing chunks).
    pub(super) fn size(self) -> usize {
        match self {
            Source::Ascii(text) => text.len(),
            Source::Latin1(units) | Source::Ucs1(units) => units.len(),
            Source::Ucs2(units) => units.len(),
            Source::Ucs4(units) => units.len(),
        }
    }

    /// Whether it holds a lone surrogate (which has no UTF-8): looked for only once a batch has failed.
    fn has_surrogate(self) -> bool {
        match self {
            Source::Ascii(_) | Source::Latin1(_) | Source::Ucs1(_) => false,
            Source::Ucs2(units) => units.iter().any(|&u| u & 0xF800 == 0xD800),
            Source::Ucs4(units) => units.iter().any(|&u| u & 0xFFFF_F800 == 0xD800),
        }
    }
}

/// How `s` is stored, a str of one byte per character read to tell ASCII (its own bytes) from Latin-1.
fn stored<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Source<'a>> {
    Ok(unread(s)?.resolved())
}

/// Each str of `strings` as a `Source`, none of them read yet: whether a text is ASCII, and whether it holds a
/// lone surrogate, the thread that encodes it finds out as it transcodes its chunk (`chunk_utf8`), with the
/// text then in its cache. Looking at every text on the calling thread first was ~1 ms of a two-thread batch's
/// 35 (10 MB of ~4 KB English documents, cold; perf), during which no other thread had work. A caller gives
/// the batch's result to `surrogate_first`, which raises CPython's error for a lone surrogate as before.
pub(super) fn sources<'a>(strings: &'a [Bound<'_, PyString>]) -> PyResult<Vec<Source<'a>>> {
    strings.iter().map(unread).collect()
}

/// The length of `s` in characters, as CPython stores it: not `len()`, which a subclass of str may override
/// (or make raise).
pub(super) fn chars(s: &Bound<'_, PyString>) -> PyResult<usize> {
    Ok(unread(s)?.size())
}

/// How `s` is stored, without reading it (a str of one byte per character is `Ucs1`).
fn unread<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Source<'a>> {
    // SAFETY: `s` is a str, whose canonical data never change and live as long as it does; `s` is borrowed
    // for as long as the returned data are.
    Ok(match unsafe { s.data() }? {
        PyStringData::Ucs1(bytes) => Source::Ucs1(bytes),
        PyStringData::Ucs2(units) => Source::Ucs2(units),
        PyStringData::Ucs4(chars) => Source::Ucs4(chars),
    })
}

/// A batch's `result`, unless it failed and one of its `strings` holds a lone surrogate: then CPython's
/// `UnicodeEncodeError` for the first that does, whatever the batch stopped at — as when every text was checked
/// before any was encoded. (A text with a surrogate fails its chunk's `chunk_utf8`, so the batch fails.)
pub(super) fn surrogate_first<T>(strings: &[Bound<'_, PyString>], result: PyResult<T>) -> PyResult<T> {
    if result.is_err() {
        for s in strings {
            if unread(s)?.has_surrogate() {
                s.to_str()?; // CPython raises
            }
        }
    }
    result
}

/// A chunk of a batch's texts as UTF-8: an ASCII text borrowed where Python keeps it, the others transcoded one
/// after another into one buffer, which a thread keeps from one chunk to the next, and from one batch to the
/// next (`TRANSCODED`). (Each text used to be transcoded into a string of its own: an allocation per text, and
/// memory new to the process for a new thread's first chunks.)
pub(super) struct Transcoder {
    buffer: String,
}

/// The most room a thread keeps in `TRANSCODED` for its next batch (a chunk of 256 KB of UCS-2 text is ~0.4 MB
/// of UTF-8; a larger buffer is freed rather than held).
const TRANSCODED_KEPT_BYTES: usize = 2 << 20;

thread_local! {
    /// The buffer of a thread's last `Transcoder`, kept for its next. Made afresh for each batch, the buffer
    /// grew by doubling into memory the allocator had given back to the system meanwhile: in a 2-thread batch of
    /// 10 MB of ~4 KB English documents (o200k, steady), ~60 % of the 318 page faults were there (perf).
    static TRANSCODED: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

impl Default for Transcoder {
    /// A transcoder with the buffer this thread's last one left.
    fn default() -> Transcoder {
        Transcoder { buffer: TRANSCODED.take() }
    }
}

impl Drop for Transcoder {
    fn drop(&mut self) {
        if self.buffer.capacity() <= TRANSCODED_KEPT_BYTES {
            TRANSCODED.set(std::mem::take(&mut self.buffer));
        }
    }
}

impl Transcoder {
    /// The UTF-8 of each text of `chunk` (a lone surrogate is a `ValueError` here, which `surrogate_first` turns
    /// into CPython's error; room that cannot be had is a MemoryError). What an earlier call returned is gone.
    pub(super) fn texts<'s, 'a: 's>(&'s mut self, chunk: &[Source<'a>]) -> Result<Vec<&'s str>, Error> {
        /// Where a text's UTF-8 is: borrowed, or a span of the buffer (known once it stops moving).
        enum Part<'a> {
            Borrowed(&'a str),
            Transcoded(usize, usize),
        }
        self.buffer.clear();
        let mut parts = Vec::with_capacity(chunk.len());
        for source in chunk {
            parts.push(match source.resolved() {
                Source::Ascii(text) => Part::Borrowed(text),
                other => {
                    let start = self.buffer.len();
                    other.push_utf8(&mut self.buffer).map_err(NoUtf8::into_error)?;
                    Part::Transcoded(start, self.buffer.len())
                }
            });
        }
        let buffer = self.buffer.as_str();
        Ok(parts
            .into_iter()
            .map(|part| match part {
                Part::Borrowed(text) => text,
                Part::Transcoded(start, end) => &buffer[start..end],
            })
            .collect())
    }
}

/// Batches of fewer characters than this are encoded on the calling thread alone: waking another thread and
/// waiting for it costs more than it saves. Measured (o200k, 4 KB English documents, best of three, Intel Xeon,
/// 2 cores), 2 threads against 1: one document 57-78 µs against 13-17 µs, 4 documents 70-147 µs against
/// 45-57 µs; 16 documents (64 KB) 0.86× (ids packed) to 1.0× (numpy) of one thread's speed, 32 and more
/// 1.1-1.8× faster.
pub(super) const PARALLEL_FROM_CHARS: usize = 128 * 1024;
/// The same for `encode_batch`'s lists, whose building on the calling thread overlaps the other's encoding:
/// 16 documents were 1.33× faster on 2 threads, 4 documents 0.81×.
pub(super) const LISTS_PARALLEL_FROM_CHARS: usize = 32 * 1024;

/// The threads to encode `texts` on, for `requested` (0: every core; never more than the cores): one for a
/// batch of fewer than `parallel_from` characters.
pub(super) fn batch_threads(requested: usize, texts: &[Source<'_>], parallel_from: usize) -> usize {
    let threads = match crate::at_most_cores(requested) {
        0 => crate::cores(),
        n => n,
    };
    if threads > 1 && texts.iter().map(|t| t.size()).sum::<usize>() < parallel_from { 1 } else { threads }
}
