//! Errors of the core. Each kind maps to one Python exception type in `bindings`; the message is written
//! for the user: what was wrong and what to do.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad argument or bad input text → `ValueError`.
    Value,
    /// A file could not be read → `OSError` (FileNotFoundError when missing).
    Io { not_found: bool },
    /// A file is not valid UTF-8 → `ValueError` naming file and byte offset.
    Utf8,
    /// An id that is not in the vocabulary → `ValueError` naming the id and its position.
    OutOfRange,
    /// The user interrupted a long operation (Ctrl-C) → `KeyboardInterrupt`.
    Interrupted,
    /// Memory sized by the input could not be had → `MemoryError` (the process goes on).
    Memory,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn value(message: impl Into<String>) -> Error {
        Error { kind: ErrorKind::Value, message: message.into() }
    }

    pub fn io(path: &str, err: &std::io::Error) -> Error {
        let not_found = err.kind() == std::io::ErrorKind::NotFound;
        let message = if not_found {
            format!("no such file: {} (check the path; bytepair never downloads anything)", py_repr(path))
        } else {
            format!("cannot read {}: {err}", py_repr(path))
        };
        Error { kind: ErrorKind::Io { not_found }, message }
    }

    pub fn utf8(path: &str, offset: usize) -> Error {
        Error {
            kind: ErrorKind::Utf8,
            message: format!(
                "{} is not valid UTF-8: invalid byte sequence at byte offset {offset}; \
                 convert the file to UTF-8 (e.g. `iconv -f latin1 -t utf-8`) or pass errors=\"replace\"",
                py_repr(path)
            ),
        }
    }

    /// A vocabulary file that is not UTF-8 (these have no `errors=` to read past it).
    pub fn utf8_vocabulary(path: &str, offset: usize) -> Error {
        Error {
            kind: ErrorKind::Utf8,
            message: format!(
                "{} is not valid UTF-8: invalid byte sequence at byte offset {offset}; vocabulary and merges \
                 files are UTF-8 text (GPT-2's, HF's and tiktoken's all are): check that this is the right file, \
                 or convert it (e.g. `iconv -f latin1 -t utf-8`)",
                py_repr(path)
            ),
        }
    }

    /// Memory for `bytes` bytes (of `what`) could not be had.
    pub fn memory(bytes: usize, what: &str) -> Error {
        Error {
            kind: ErrorKind::Memory,
            message: format!(
                "out of memory: could not allocate {bytes} bytes for {what}; encode the text in smaller parts \
                 (or stream it: `bytepair encode` reads files in bounded memory), or free memory"
            ),
        }
    }

    pub fn interrupted() -> Error {
        Error { kind: ErrorKind::Interrupted, message: "interrupted".to_string() }
    }
}

/// Makes room for `additional` more items in `v` (amortised, as `Vec::reserve`), or the error saying how many
/// bytes could not be had: for every allocation whose size the input sets, so that running out of memory is a
/// `MemoryError`, not an abort of the whole process.
pub fn try_reserve<T>(v: &mut Vec<T>, additional: usize, what: &str) -> Result<()> {
    try_reserve_moving_items(v, additional)
        .map_err(|_| Error::memory(v.len().saturating_add(additional).saturating_mul(std::mem::size_of::<T>()), what))
}

/// `Vec::try_reserve`, except that a vector less than half full that must move copies only its items: a
/// reallocation copies the whole old allocation, spare room and all, and the ids' vector is reserved ahead
/// (a third of the text's length), so the one piece of 10 MB of random letters copied 13 MB of room never
/// written, into pages new to the process (a tenth of that call's time, in page faults and the copy).
pub fn try_reserve_moving_items<T>(
    v: &mut Vec<T>,
    additional: usize,
) -> std::result::Result<(), std::collections::TryReserveError> {
    if v.capacity() - v.len() >= additional {
        return Ok(());
    }
    try_grow_to(v, v.len().saturating_add(additional).max(v.capacity().saturating_mul(2)))
}

/// Room for `total` items in `v` (nothing if it has it), exactly; a vector less than half full that must
/// move copies only its items (see `try_reserve_moving_items`).
pub fn try_grow_to<T>(v: &mut Vec<T>, total: usize) -> std::result::Result<(), std::collections::TryReserveError> {
    if v.capacity() >= total {
        return Ok(());
    }
    if v.len() >= v.capacity() / 2 {
        return v.try_reserve_exact(total - v.len());
    }
    let mut moved = Vec::new();
    moved.try_reserve_exact(total)?;
    moved.append(v);
    *v = moved;
    Ok(())
}

/// A string as Python's `repr` shows it (`'m'`, `'\\n'`), so messages read naturally to Python users.
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `py_repr` of at most the first `max` characters of `s` (a pattern, a stretch of text in a message), saying
/// how long the whole is when it was cut.
pub fn py_repr_cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => py_repr(s),
        Some((cut, _)) => format!("{}… ({} characters)", py_repr(&s[..cut]), s.chars().count()),
    }
}

/// Bytes as Python's `repr` shows them (`b' the'`, `b'\\xb6'`).
pub fn py_repr_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("b'");
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('\'');
    out
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::{py_repr, try_reserve_moving_items};

    /// A vector mostly spare room moves its items to a new allocation (keeping them); a fuller one grows as
    /// `Vec` does; enough room is left alone; a size that cannot be had is an error, the vector as it was.
    #[test]
    fn reserving_keeps_the_items_whichever_way_the_vector_grows() {
        for (capacity, len, additional) in [(1000, 10, 5000), (1000, 900, 5000), (1000, 10, 500), (0, 0, 7)] {
            let mut v: Vec<u32> = Vec::with_capacity(capacity);
            v.extend(0..len as u32);
            let before = v.as_ptr();
            try_reserve_moving_items(&mut v, additional).unwrap();
            assert!(v.capacity() - v.len() >= additional, "{capacity} {len} {additional}");
            assert_eq!(v, (0..len as u32).collect::<Vec<_>>());
            if len + additional <= capacity {
                assert_eq!(v.as_ptr(), before, "moved without need");
            }
        }
        let mut v: Vec<u32> = (0..10).collect();
        v.reserve(1000);
        assert!(try_reserve_moving_items(&mut v, usize::MAX / 2).is_err());
        assert_eq!(v, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(py_repr("m"), "'m'");
        assert_eq!(py_repr("it's"), "\"it's\"");
        assert_eq!(py_repr("a\nb\x00"), "'a\\nb\\x00'");
    }
}
