//! Errors of the core. Each kind maps to one Python exception type in `python.rs`; the message is written
//! for the user: what was wrong and what to do.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad argument or bad input text → `ValueError`.
    Value,
    /// A file could not be read → `OSError` (FileNotFoundError when missing).
    Io { not_found: bool },
    /// A file is not valid UTF-8 → `UnicodeDecodeError`-like `ValueError` naming file and offset.
    Utf8,
    /// An id that is not in the vocabulary → `IndexError`... reported as `ValueError` with the id.
    OutOfRange,
    /// The user interrupted a long operation (Ctrl-C) → `KeyboardInterrupt`.
    Interrupted,
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
            format!("no such file: {path:?} (check the path; bytepair never downloads anything)")
        } else {
            format!("cannot read {path:?}: {err}")
        };
        Error { kind: ErrorKind::Io { not_found }, message }
    }

    pub fn utf8(path: &str, offset: usize) -> Error {
        Error {
            kind: ErrorKind::Utf8,
            message: format!(
                "{path:?} is not valid UTF-8: invalid byte sequence at byte offset {offset}; \
                 convert the file to UTF-8 (e.g. `iconv -f latin1 -t utf-8`) or pass errors=\"replace\""
            ),
        }
    }

    pub fn interrupted() -> Error {
        Error { kind: ErrorKind::Interrupted, message: "interrupted".to_string() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
