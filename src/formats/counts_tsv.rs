//! Word-counts files (`bytepair words -o counts.tsv`, read by `bytepair train --from-counts`): the words a
//! corpus was cut into and how often each occurs, in order of first appearance, so that one counting job
//! serves several trainings (the `first_seen` tie rule needs that order).
//!
//! Layout, UTF-8 text:
//! ```text
//! #bytepair-word-counts<TAB>1<TAB>{"pattern": "gpt2", "lowercase": false, "special_tokens": [], ...}
//! word<TAB>count
//! ...
//! ```
//! The first line names the layout and its version, then a JSON object with how the words were made (the
//! pre-tokenizer's pattern, lowercasing, the special tokens cut out) and the totals (`words`, lines that
//! follow; `bytes_seen`, `special_bytes`). It may be left out in a file written by hand. Each other line is a
//! word, a tab and its count (a decimal number below 2**64).
//!
//! Words are escaped so that any byte sequence goes through a line of text and back unchanged: `\\` for a
//! backslash, `\t`, `\n`, `\r`, and `\xHH` for any other control byte (below 0x20, and 0x7f); every other byte
//! is written as it is. A reader may also give `\xHH` for any byte; the bytes a word unescapes to must be
//! UTF-8 (words are text).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, py_repr};

/// The first line's start: the layout's name, then its version.
pub const MAGIC: &str = "#bytepair-word-counts";
pub const VERSION: u32 = 1;

/// How the words were made, and the totals: the header line's JSON object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// The pre-tokenizer: a named pattern ("gpt2", ...), a regex, or null (each text one word).
    pub pattern: Option<String>,
    pub lowercase: bool,
    pub special_tokens: Vec<String>,
    /// Number of word lines that follow (checked on reading: a file cut short is an error).
    pub words: u64,
    /// Bytes of text counted, and of special tokens cut out of it.
    pub bytes_seen: u64,
    pub special_bytes: u64,
}

/// The file's text: the header line, then one line per word in the order given.
pub fn write<'a>(header: &Header, words: impl IntoIterator<Item = (&'a str, u64)>) -> Result<Vec<u8>> {
    let json = serde_json::to_string(header).map_err(|e| Error::value(format!("cannot write the header: {e}")))?;
    let mut out = Vec::with_capacity(64 + header.words as usize * 16);
    out.extend_from_slice(format!("{MAGIC}\t{VERSION}\t{json}\n").as_bytes());
    for (word, count) in words {
        escape_into(word.as_bytes(), &mut out);
        out.push(b'\t');
        out.extend_from_slice(count.to_string().as_bytes());
        out.push(b'\n');
    }
    Ok(out)
}

/// Words and their counts, in file order.
pub type Words = Vec<(String, u64)>;

/// Reads a counts file's text: its header (`None` for a file without one) and its words in order. `name`
/// (the file's) goes into messages, which name the line at fault.
pub fn read(data: &[u8], name: &str) -> Result<(Option<Header>, Words)> {
    let mut words = Vec::new();
    let mut header = None;
    let mut number = 0usize;
    for line in data.split_inclusive(|&b| b == b'\n') {
        number += 1;
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if number == 1 && line.starts_with(MAGIC.as_bytes()) {
            header = Some(read_header(line, name)?);
            continue;
        }
        if line.is_empty() {
            return Err(at(name, number, "an empty line; each line is a word, a tab and its count"));
        }
        let Some(tab) = memchr::memrchr(b'\t', line) else {
            return Err(at(name, number, "no tab; each line is a word, a tab and its count"));
        };
        let (word, count) = (&line[..tab], &line[tab + 1..]);
        let count = std::str::from_utf8(count)
            .ok()
            .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|c| c.parse::<u64>().ok())
            .ok_or_else(|| {
                let shown = String::from_utf8_lossy(&count[..count.len().min(30)]).into_owned();
                at(name, number, &format!("the count {} is not a whole number below 2**64", py_repr(&shown)))
            })?;
        let bytes = unescape(word).map_err(|what| at(name, number, &what))?;
        if bytes.is_empty() {
            return Err(at(name, number, "the word is empty"));
        }
        let word = String::from_utf8(bytes).map_err(|e| {
            at(
                name,
                number,
                &format!("the word is not UTF-8 once unescaped (at its byte {})", e.utf8_error().valid_up_to()),
            )
        })?;
        words.push((word, count));
    }
    if let Some(header) = &header
        && header.words != words.len() as u64
    {
        return Err(Error::value(format!(
            "{name}: the header says {} words, the file has {}: it was cut short or edited; count the corpus again \
             (bytepair words)",
            header.words,
            words.len()
        )));
    }
    Ok((header, words))
}

fn read_header(line: &[u8], name: &str) -> Result<Header> {
    let text = std::str::from_utf8(line).map_err(|_| at(name, 1, "the header line is not UTF-8"))?;
    let mut parts = text.splitn(3, '\t');
    let (_, version, json) = (parts.next(), parts.next(), parts.next());
    match version.and_then(|v| v.parse::<u32>().ok()) {
        Some(VERSION) => {}
        Some(other) => {
            return Err(at(
                name,
                1,
                &format!("version {other} of the counts layout; this bytepair reads version {VERSION}: upgrade it"),
            ));
        }
        None => return Err(at(name, 1, "the header line has no version")),
    }
    let json = json.ok_or_else(|| at(name, 1, "the header line has no settings"))?;
    serde_json::from_str(json).map_err(|e| at(name, 1, &format!("the header's settings are not valid ({e})")))
}

fn at(name: &str, line: usize, what: &str) -> Error {
    Error::value(format!("{name}, line {line}: {what}"))
}

/// Appends `bytes` escaped (see the module notes).
pub fn escape_into(bytes: &[u8], out: &mut Vec<u8>) {
    for &b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0..0x20 | 0x7f => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
            _ => out.push(b),
        }
    }
}

/// The bytes an escaped word stands for; an unknown or cut escape is an error saying which.
pub fn unescape(escaped: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(escaped.len());
    let mut i = 0;
    while i < escaped.len() {
        let b = escaped[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        match escaped.get(i + 1) {
            Some(b'\\') => out.push(b'\\'),
            Some(b't') => out.push(b'\t'),
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(b'x') => {
                let hex = escaped.get(i + 2..i + 4).and_then(|h| std::str::from_utf8(h).ok());
                let value = hex
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| "a \\x escape without two hex digits (write a backslash as \\\\)".to_string())?;
                out.push(value);
                i += 4;
                continue;
            }
            Some(&other) => {
                return Err(format!(
                    "unknown escape \\{} (escapes are \\\\, \\t, \\n, \\r and \\xHH; write a backslash as \\\\)",
                    other as char
                ));
            }
            None => return Err("the word ends in a lone backslash (write a backslash as \\\\)".to_string()),
        }
        i += 2;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(words: u64) -> Header {
        Header { pattern: Some("gpt2".into()), words, ..Header::default() }
    }

    #[test]
    fn every_byte_goes_through_and_back() {
        let all: Vec<u8> = (0..=255u8).collect();
        let mut escaped = Vec::new();
        escape_into(&all, &mut escaped);
        assert!(!escaped.contains(&b'\n') && !escaped.contains(&b'\t') && !escaped.contains(&b'\r'));
        assert_eq!(unescape(&escaped).unwrap(), all);
        // A backslash followed by letters that look like an escape stays itself.
        let tricky = b"\\x41\\n\\".to_vec();
        let mut escaped = Vec::new();
        escape_into(&tricky, &mut escaped);
        assert_eq!(unescape(&escaped).unwrap(), tricky);
    }

    #[test]
    fn words_round_trip_in_order() {
        let words = [("Ġthe", 5u64), ("a\tb\nc\\d\r", 2), ("\u{0}\u{7f}é🎉", u64::MAX), ("#x", 1)];
        let data = write(&header(4), words.iter().map(|(w, c)| (*w, *c))).unwrap();
        let (read_header, read_words) = read(&data, "c.tsv").unwrap();
        assert_eq!(read_header, Some(header(4)));
        let expected: Vec<(String, u64)> = words.iter().map(|(w, c)| (w.to_string(), *c)).collect();
        assert_eq!(read_words, expected);
        // Without a header (written by hand), CRLF line ends.
        let (none, hand) = read(b"the\t3\r\nx\\ty\t1\n", "hand.tsv").unwrap();
        assert_eq!(none, None);
        assert_eq!(hand, [("the".to_string(), 3), ("x\ty".to_string(), 1)]);
    }

    #[test]
    fn damaged_files_name_the_line() {
        let cases: [(&[u8], &str); 8] = [
            (b"a\t1\nb 2\n", "line 2: no tab"),
            (b"a\tx\n", "line 1: the count 'x'"),
            (b"a\t-1\n", "is not a whole number"),
            (b"a\t18446744073709551616\n", "below 2**64"),
            (b"a\\q\t1\n", "unknown escape \\q"),
            (b"a\\x4\t1\n", "two hex digits"),
            (b"\\xff\t1\n", "not UTF-8"),
            (b"\t1\n", "the word is empty"),
        ];
        for (data, expected) in cases {
            let err = read(data, "bad.tsv").unwrap_err();
            assert!(err.message.contains(expected), "{:?}: {}", String::from_utf8_lossy(data), err.message);
            assert!(err.message.starts_with("bad.tsv, line "), "{}", err.message);
        }
        let cut = write(&header(3), [("a", 1u64), ("b", 2)]).unwrap();
        assert!(read(&cut, "cut.tsv").unwrap_err().message.contains("says 3 words, the file has 2"));
        let future = b"#bytepair-word-counts\t9\t{}\n";
        assert!(read(future, "f.tsv").unwrap_err().message.contains("version 9"));
        let extra = b"#bytepair-word-counts\t1\t{\"surprise\": 1}\n";
        assert!(read(extra, "f.tsv").unwrap_err().message.contains("not valid"));
    }
}
