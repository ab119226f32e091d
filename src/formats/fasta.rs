//! FASTA and FASTQ: nucleotide sequences in, cleaned sequences (or windows of them) out.
//!
//! - Records are read one at a time from a plain or gzip file (recognised by its first bytes, whatever its
//!   name), in blocks: lines are never held on their own, so a 2 GB single-line sequence costs its 2 GB and
//!   nothing more, and lengths are 64-bit throughout.
//! - FASTA: `>name` then sequence lines (wrapped or not, `\n` or `\r\n`); blank lines and whitespace inside
//!   sequence lines are ignored. FASTQ: `@name`, sequence line(s), `+`, quality line(s) of the same length
//!   (quality is skipped). The first record decides which of the two a file is.
//! - Sequence characters are letters, `-`, `.` and `*`; anything else (digits, punctuation, bytes that are not
//!   ASCII, a binary file) is refused with the file, line and character.
//! - `SequenceOptions` then cleans each sequence: fold lowercase (soft-masked repeats) to uppercase, treat
//!   ambiguous characters — everything but A/C/G/T/U: IUPAC codes such as N, R, Y, gaps — by keeping them,
//!   splitting the sequence at them, or dropping them, and cut windows of `chunk_length`. A piece that is not
//!   the whole record is named `name:start-end` (1-based, inclusive, like samtools; with `drop`, positions
//!   count the bases kept).

use std::io::Read;

use crate::error::{Error, Result, py_repr};

/// Size of the blocks a file is read in.
const BLOCK: usize = 1 << 20;
/// A record this long reserves room for the rest of the file at once (a chromosome on one line) instead of
/// growing by doubling.
const LARGE_RECORD: usize = 64 << 20;

/// What to do with characters other than A, C, G, T, U (in either case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ambiguous {
    /// Keep them in the sequence.
    Keep,
    /// Cut the sequence at each run of them, leaving them out.
    Split,
    /// Leave them out, joining what is on either side.
    Drop,
}

impl Ambiguous {
    pub fn parse(name: &str) -> Result<Ambiguous> {
        match name {
            "keep" => Ok(Ambiguous::Keep),
            "split" => Ok(Ambiguous::Split),
            "drop" => Ok(Ambiguous::Drop),
            other => Err(Error::value(format!(
                "ambiguous={other:?} is not supported: use \"keep\" (N and other IUPAC codes stay in the sequence), \
                 \"split\" (cut the sequence at them) or \"drop\" (remove them)"
            ))),
        }
    }
}

/// How sequences are cleaned and cut.
#[derive(Clone, Copy, Debug)]
pub struct SequenceOptions {
    pub uppercase: bool,
    pub ambiguous: Ambiguous,
    /// Cut each (cleaned) sequence into windows of this many bases; the last one may be shorter.
    pub chunk_length: Option<usize>,
}

/// Whether a byte is a base (A, C, G, T, U in either case); anything else that passes `check` is ambiguous.
#[inline]
fn is_base(b: u8) -> bool {
    matches!(b | 0x20, b'a' | b'c' | b'g' | b't' | b'u')
}

/// Whether a byte may appear in a sequence.
#[inline]
fn is_sequence_char(b: u8) -> bool {
    b.is_ascii_alphabetic() || matches!(b, b'-' | b'.' | b'*')
}

/// Describes a byte for an error message.
fn describe(b: u8) -> String {
    if b.is_ascii_graphic() { format!("{:?}", b as char) } else { format!("byte 0x{b:02X}") }
}

/// Checks a sequence given as text (not from a file): the same characters as in files are allowed.
pub fn check_sequence(seq: &[u8], what: &str) -> Result<()> {
    if let Some(i) = seq.iter().position(|&b| !is_sequence_char(b)) {
        let (shown, at) = match std::str::from_utf8(&seq[i..]).ok().and_then(|s| s.chars().next()) {
            Some(c) if !c.is_ascii() => (format!("{c:?}"), i),
            _ => (describe(seq[i]), i),
        };
        return Err(Error::value(format!(
            "{what} holds {shown} at position {at}, which is not a nucleotide code: sequences are letters (A, C, \
             G, T, N and the other IUPAC codes), '-', '.' or '*'; remove it, or use bytepair.train(..., \
             mode=\"char\") for arbitrary text"
        )));
    }
    Ok(())
}

/// Cleans one sequence and hands its pieces to `f` as (name, bases). `seq` must hold only sequence
/// characters (see `check_sequence`).
pub fn pieces(
    name: &str,
    mut seq: Vec<u8>,
    options: &SequenceOptions,
    mut f: impl FnMut(String, Vec<u8>) -> Result<()>,
) -> Result<()> {
    if options.uppercase {
        seq.make_ascii_uppercase();
    }
    if let Some(0) = options.chunk_length {
        return Err(Error::value("chunk_length must be at least 1 (or None: no chunks)".to_string()));
    }
    match options.ambiguous {
        Ambiguous::Keep => windows(name, seq, 0, true, options.chunk_length, &mut f),
        Ambiguous::Drop => {
            seq.retain(|&b| is_base(b));
            windows(name, seq, 0, true, options.chunk_length, &mut f)
        }
        Ambiguous::Split => {
            // Stretches of bases between runs of ambiguous characters.
            let n = seq.len();
            let mut stretches = Vec::new();
            let mut i = 0;
            while i < n {
                while i < n && !is_base(seq[i]) {
                    i += 1;
                }
                let start = i;
                while i < n && is_base(seq[i]) {
                    i += 1;
                }
                if start < i {
                    stretches.push((start, i));
                }
            }
            if let [(0, end)] = stretches[..]
                && end == n
            {
                return windows(name, seq, 0, true, options.chunk_length, &mut f);
            }
            for (start, end) in stretches {
                windows(name, seq[start..end].to_vec(), start, false, options.chunk_length, &mut f)?;
            }
            Ok(())
        }
    }
}

/// Hands out `seq` (which starts at `offset` of its record) whole or in windows, with names.
fn windows(
    name: &str,
    seq: Vec<u8>,
    offset: usize,
    whole_record: bool,
    chunk: Option<usize>,
    f: &mut impl FnMut(String, Vec<u8>) -> Result<()>,
) -> Result<()> {
    let located = |start: usize, end: usize| format!("{name}:{}-{}", offset + start + 1, offset + end);
    match chunk {
        Some(size) if seq.len() > size => {
            let mut start = 0;
            while start < seq.len() {
                let end = (start + size).min(seq.len());
                f(located(start, end), seq[start..end].to_vec())?;
                start = end;
            }
            Ok(())
        }
        _ if seq.is_empty() && !whole_record => Ok(()),
        _ if whole_record => f(name.to_string(), seq),
        _ => {
            let n = seq.len();
            f(located(0, n), seq)
        }
    }
}

/// The reverse complement of a nucleotide sequence (IUPAC codes complemented, case kept; other characters —
/// gaps — kept as they are). `rna`: A pairs with U (else with T).
pub fn reverse_complement(seq: &[u8], rna: bool) -> Vec<u8> {
    seq.iter().rev().map(|&b| complement(b, rna)).collect()
}

#[inline]
fn complement(b: u8, rna: bool) -> u8 {
    let upper = match b.to_ascii_uppercase() {
        b'A' if rna => b'U',
        b'A' => b'T',
        b'T' | b'U' => b'A',
        b'C' => b'G',
        b'G' => b'C',
        b'R' => b'Y',
        b'Y' => b'R',
        b'K' => b'M',
        b'M' => b'K',
        b'B' => b'V',
        b'V' => b'B',
        b'D' => b'H',
        b'H' => b'D',
        _ => return b, // N, S, W, gaps: their own complement
    };
    if b.is_ascii_lowercase() { upper.to_ascii_lowercase() } else { upper }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Fasta,
    Fastq,
}

/// Reads FASTA or FASTQ records one at a time.
pub struct FastaReader {
    path: String,
    source: Box<dyn Read + Send>,
    buf: Vec<u8>,
    at: usize,
    eof: bool,
    /// 1-based number of the line being read.
    line: u64,
    format: Option<Format>,
    /// Bytes of the file not read yet (plain files; for gzip, unknown).
    remaining_hint: Option<u64>,
    /// Statistics: records and bases read.
    pub records: u64,
    pub bases: u64,
}

/// Opens a file, decompressing gzip (recognised by its magic bytes).
fn open(path: &str) -> Result<(Box<dyn Read + Send>, Option<u64>)> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
    if meta.is_dir() {
        return Err(Error::value(format!("{} is a directory, not a FASTA/FASTQ file", py_repr(path))));
    }
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    let mut magic = [0u8; 2];
    let got = read_full(&mut file, &mut magic).map_err(|e| Error::io(path, &e))?;
    let head = std::io::Cursor::new(magic[..got].to_vec());
    let reader = std::io::BufReader::with_capacity(BLOCK, head.chain(file));
    if got == 2 && magic == [0x1f, 0x8b] {
        let gz = flate2::bufread::MultiGzDecoder::new(reader);
        let path = path.to_string();
        Ok((Box::new(GzErrors { inner: gz, path }), None))
    } else {
        Ok((Box::new(reader), Some(meta.len())))
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A gzip stream whose errors say that the file is damaged.
struct GzErrors<R: std::io::BufRead> {
    inner: flate2::bufread::MultiGzDecoder<R>,
    path: String,
}

impl<R: std::io::BufRead> Read for GzErrors<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            std::io::Error::new(e.kind(), format!("{} is not a valid gzip file ({e})", py_repr(&self.path)))
        })
    }
}

impl FastaReader {
    pub fn open(path: &str) -> Result<FastaReader> {
        let (source, remaining_hint) = open(path)?;
        Ok(FastaReader::new(path, source, remaining_hint))
    }

    /// A reader over any byte stream (`path` names it in messages).
    pub fn new(path: &str, source: Box<dyn Read + Send>, remaining_hint: Option<u64>) -> FastaReader {
        FastaReader {
            path: path.to_string(),
            source,
            buf: Vec::new(),
            at: 0,
            eof: false,
            line: 1,
            format: None,
            remaining_hint,
            records: 0,
            bases: 0,
        }
    }

    fn io_error(&self, e: std::io::Error) -> Error {
        if e.to_string().contains("gzip") { Error::value(e.to_string()) } else { Error::io(&self.path, &e) }
    }

    /// Makes sure unread bytes are buffered; false at the end of the input.
    fn fill(&mut self) -> Result<bool> {
        if self.at < self.buf.len() {
            return Ok(true);
        }
        if self.eof {
            return Ok(false);
        }
        self.buf.resize(BLOCK, 0);
        self.at = 0;
        loop {
            match self.source.read(&mut self.buf) {
                Ok(0) => {
                    self.buf.clear();
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.buf.truncate(n);
                    if let Some(h) = self.remaining_hint.as_mut() {
                        *h = h.saturating_sub(n as u64);
                    }
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(e)),
            }
        }
    }

    fn peek(&mut self) -> Result<Option<u8>> {
        Ok(if self.fill()? { Some(self.buf[self.at]) } else { None })
    }

    /// Skips blank lines (and whitespace at line starts); returns the next byte, not consumed.
    fn skip_blank(&mut self) -> Result<Option<u8>> {
        while let Some(b) = self.peek()? {
            if b == b'\n' {
                self.line += 1;
            } else if !b.is_ascii_whitespace() {
                return Ok(Some(b));
            }
            self.at += 1;
        }
        Ok(None)
    }

    fn skip_bom(&mut self) -> Result<()> {
        for expected in [0xEF, 0xBB, 0xBF] {
            match self.peek()? {
                Some(b) if b == expected => self.at += 1,
                _ => return Err(self.not_fasta("starts with bytes that are not text")),
            }
        }
        Ok(())
    }

    /// The rest of the current line (without its line break), consumed with it.
    fn rest_of_line(&mut self, limit: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        while self.fill()? {
            let chunk = &self.buf[self.at..];
            match memchr::memchr(b'\n', chunk) {
                Some(i) => {
                    if out.len() < limit {
                        out.extend_from_slice(&chunk[..i.min(limit - out.len())]);
                    }
                    self.at += i + 1;
                    self.line += 1;
                    break;
                }
                None => {
                    if out.len() < limit {
                        out.extend_from_slice(&chunk[..chunk.len().min(limit - out.len())]);
                    }
                    self.at = self.buf.len();
                }
            }
        }
        while out.last().is_some_and(|b| b.is_ascii_whitespace()) {
            out.pop();
        }
        Ok(out)
    }

    fn not_fasta(&self, what: &str) -> Error {
        Error::value(format!(
            "{} is not a FASTA/FASTQ file: it {what}. FASTA records start with a '>name' line followed by \
             sequence lines, FASTQ records with '@name'; for plain text use bytepair.train",
            py_repr(&self.path)
        ))
    }

    fn bad_char(&self, b: u8, name: &str) -> Error {
        Error::value(format!(
            "{} line {}: {} in the sequence of record {} is not a nucleotide code (letters, '-', '.' or '*'); \
             fix or remove that line",
            py_repr(&self.path),
            self.line,
            describe(b),
            py_repr(name)
        ))
    }

    /// Appends sequence characters up to the end of the line (whitespace skipped); errors on anything else.
    fn sequence_line(&mut self, seq: &mut Vec<u8>, name: &str) -> Result<()> {
        while self.fill()? {
            let chunk = &self.buf[self.at..];
            let (body, ends) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], Some(i)),
                None => (chunk, None),
            };
            let start = seq.len();
            if seq.capacity() - start < body.len() && start >= LARGE_RECORD {
                // A huge record (a chromosome on one line): room for the rest of the file at once.
                if let Some(rest) = self.remaining_hint {
                    seq.reserve_exact(body.len() + rest as usize);
                }
            }
            seq.extend_from_slice(body);
            if let Some(i) = seq[start..].iter().position(|&b| !is_sequence_char(b)) {
                // Whitespace ("\r", spaces between blocks of bases) is dropped; anything else is an error.
                let mut k = start + i;
                for j in start + i..seq.len() {
                    let b = seq[j];
                    if is_sequence_char(b) {
                        seq[k] = b;
                        k += 1;
                    } else if !b.is_ascii_whitespace() {
                        return Err(self.bad_char(b, name));
                    }
                }
                seq.truncate(k);
            }
            match ends {
                Some(i) => {
                    self.at += i + 1;
                    self.line += 1;
                    return Ok(());
                }
                None => self.at = self.buf.len(),
            }
        }
        Ok(())
    }

    /// The next record as (name, sequence as read: letters in their case, gaps kept), or None at the end.
    pub fn next_record(&mut self) -> Result<Option<(String, Vec<u8>)>> {
        let Some(mut first) = self.skip_blank()? else {
            return Ok(None);
        };
        if self.format.is_none() && first == 0xEF {
            self.skip_bom()?; // a UTF-8 byte order mark
            match self.skip_blank()? {
                Some(b) => first = b,
                None => return Ok(None),
            }
        }
        let format = match (self.format, first) {
            (None, b'>') | (Some(Format::Fasta), b'>') => Format::Fasta,
            (None, b'@') | (Some(Format::Fastq), b'@') => Format::Fastq,
            (None, b) => {
                let line = self.rest_of_line(40)?;
                let shown = String::from_utf8_lossy(&line).into_owned();
                return Err(if b.is_ascii() && !b.is_ascii_control() {
                    self.not_fasta(&format!("starts with {}", py_repr(&shown)))
                } else {
                    self.not_fasta("starts with bytes that are not text (a binary file?)")
                });
            }
            (Some(format), b) => {
                return Err(Error::value(format!(
                    "{} line {}: expected the next record ('{}name'), found {}",
                    py_repr(&self.path),
                    self.line,
                    if format == Format::Fasta { '>' } else { '@' },
                    describe(b)
                )));
            }
        };
        self.format = Some(format);
        self.at += 1; // '>' or '@'
        let header_line = self.line;
        let header = self.rest_of_line(1 << 16)?;
        let name = String::from_utf8_lossy(&header).trim().to_string();
        if name.contains('\r') {
            return Err(Error::value(format!(
                "{} line {header_line}: the file's lines end with a lone carriage return (old Mac line endings); \
                 convert them first, e.g. `tr '\\r' '\\n' < in.fa > out.fa`",
                py_repr(&self.path)
            )));
        }
        let mut seq = Vec::new();
        match format {
            Format::Fasta => {
                while let Some(b) = self.skip_blank()? {
                    if b == b'>' {
                        break;
                    }
                    self.sequence_line(&mut seq, &name)?;
                }
            }
            Format::Fastq => {
                loop {
                    match self.skip_blank()? {
                        Some(b'+') => break,
                        Some(_) => self.sequence_line(&mut seq, &name)?,
                        None => return Err(self.truncated(&name, header_line, "no '+' line")),
                    }
                }
                self.rest_of_line(0)?; // the '+' line
                let mut quality = 0usize;
                while quality < seq.len() {
                    if self.skip_blank()?.is_none() {
                        return Err(self.truncated(
                            &name,
                            header_line,
                            "the quality line is shorter than the sequence",
                        ));
                    }
                    let line = self.rest_of_line(usize::MAX)?;
                    quality += line.len();
                }
                if quality != seq.len() {
                    return Err(self.truncated(&name, header_line, "the quality line is longer than the sequence"));
                }
            }
        }
        if seq.capacity() > 2 * seq.len() + 4096 {
            seq.shrink_to_fit();
        }
        self.records += 1;
        self.bases += seq.len() as u64;
        Ok(Some((name, seq)))
    }

    fn truncated(&self, name: &str, line: u64, what: &str) -> Error {
        Error::value(format!(
            "{}: the FASTQ record {} (line {line}) is incomplete: {what}; the file may be cut short",
            py_repr(&self.path),
            py_repr(name)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(text: &[u8]) -> FastaReader {
        FastaReader::new("test.fa", Box::new(std::io::Cursor::new(text.to_vec())), None)
    }

    fn records(text: &[u8]) -> Result<Vec<(String, String)>> {
        let mut r = reader(text);
        let mut out = Vec::new();
        while let Some((name, seq)) = r.next_record()? {
            out.push((name, String::from_utf8(seq).unwrap()));
        }
        Ok(out)
    }

    fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn fasta_records_with_wrapped_lines_crlf_and_blank_lines() {
        let got = records(b">chr1 first\r\nACGT\r\nacgn\r\n\r\n>chr2\nGG\nTT\n>empty\n").unwrap();
        assert_eq!(got, owned(&[("chr1 first", "ACGTacgn"), ("chr2", "GGTT"), ("empty", "")]));
        assert_eq!(records(b"").unwrap(), vec![]);
        assert_eq!(records(b"\xEF\xBB\xBF>x\nAC").unwrap(), owned(&[("x", "AC")]));
    }

    #[test]
    fn old_mac_line_endings_are_refused_clearly() {
        let err = records(b">x\rACGT\rACGT\r").unwrap_err();
        assert!(err.message.contains("lone carriage return"), "{}", err.message);
    }

    #[test]
    fn fastq_quality_is_skipped() {
        let got = records(b"@r1\nACGT\n+\nIIII\n@r2\nGG\n+r2\n@@\n").unwrap();
        assert_eq!(got, owned(&[("r1", "ACGT"), ("r2", "GG")]));
        let err = records(b"@r1\nACGT\n+\nII\n").unwrap_err();
        assert!(err.message.contains("shorter than the sequence"), "{}", err.message);
        let err = records(b"@r1\nACGT\n").unwrap_err();
        assert!(err.message.contains("no '+' line"), "{}", err.message);
    }

    #[test]
    fn other_files_are_refused_clearly() {
        let err = records(b"hello world\nthis is text\n").unwrap_err();
        assert!(
            err.message.contains("not a FASTA/FASTQ file") && err.message.contains("'hello world'"),
            "{}",
            err.message
        );
        let err = records(b"\x00\x01\x02binary").unwrap_err();
        assert!(err.message.contains("binary"), "{}", err.message);
        let err = records(b">x\nACGT\nAC1T\n").unwrap_err();
        assert!(err.message.contains("line 3") && err.message.contains("'1'"), "{}", err.message);
        let err = records(b">x\nAC\xC3\xA9\n").unwrap_err();
        assert!(err.message.contains("0xC3"), "{}", err.message);
    }

    fn cut(seq: &str, ambiguous: Ambiguous, chunk: Option<usize>) -> Vec<(String, String)> {
        let options = SequenceOptions { uppercase: true, ambiguous, chunk_length: chunk };
        let mut out = Vec::new();
        pieces("r", seq.as_bytes().to_vec(), &options, |n, s| {
            out.push((n, String::from_utf8(s).unwrap()));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn ambiguous_codes_are_kept_split_or_dropped_and_windows_are_named() {
        assert_eq!(cut("acNNgtRa", Ambiguous::Keep, None), owned(&[("r", "ACNNGTRA")]));
        assert_eq!(cut("acNNgtRa", Ambiguous::Split, None), owned(&[("r:1-2", "AC"), ("r:5-6", "GT"), ("r:8-8", "A")]));
        assert_eq!(cut("NNNN", Ambiguous::Split, None), owned(&[]));
        assert_eq!(cut("ACGT", Ambiguous::Split, None), owned(&[("r", "ACGT")]));
        assert_eq!(cut("acNNgtRa", Ambiguous::Drop, None), owned(&[("r", "ACGTA")]));
        assert_eq!(
            cut("ACGTACG", Ambiguous::Keep, Some(3)),
            owned(&[("r:1-3", "ACG"), ("r:4-6", "TAC"), ("r:7-7", "G")])
        );
        assert_eq!(
            cut("ACGNNACGTA", Ambiguous::Split, Some(3)),
            owned(&[("r:1-3", "ACG"), ("r:6-8", "ACG"), ("r:9-10", "TA")])
        );
    }

    #[test]
    fn reverse_complement_keeps_case_and_iupac() {
        assert_eq!(reverse_complement(b"ACGTNacgtRYn-", false), b"-nRYacgtNACGT");
        assert_eq!(reverse_complement(b"AACGTt", false), b"aACGTT");
        assert_eq!(reverse_complement(b"RYKMBVDHSWN", false), b"NWSDHBVKMRY");
        assert_eq!(reverse_complement(b"AACGUu", true), b"aACGUU"); // RNA: A pairs with U
    }
}
