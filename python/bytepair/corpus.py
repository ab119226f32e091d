"""What a corpus can be, and reading it: paths and globs, iterables of texts (a HF `datasets` column, batches of
texts, FASTA records), and the documents of text files streamed in exact pieces.

- `corpus_files` / `corpus_items`: what `bytepair.train` accepts, as files to read in the core or batches of
  texts to hand to it.
- `expand_path`: a path or glob as the files it names, with errors that say what to pass instead.
- `documents(paths)`: the documents of text files (`.gz`, `-` for stdin, JSON lines), in pieces of about a
  megabyte cut only where the tokenizer's pattern splits anyway — so encoding piece by piece gives exactly the
  ids of encoding each document whole, in constant memory.

>>> list(corpus_items(["a text", ["a batch", "of texts"]]))
[('texts', ['a text', 'a batch', 'of texts'])]
"""

from __future__ import annotations

import glob
import gzip
import io
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, BinaryIO, Literal

from .formats.fasta import FastaRecord

if TYPE_CHECKING:
    from ._tokenizer import Tokenizer
    from .progress import Progress

__all__ = [
    "COMPRESSION_TOOLS",
    "Corpus",
    "PathLike",
    "Piece",
    "can_cut",
    "compression",
    "corpus_files",
    "corpus_items",
    "documents",
    "expand_path",
    "file_compression",
    "open_text",
    "reads_as_a_path",
    "unreadable_compression",
]

PathLike = str | os.PathLike[str]
#: A path (file or glob), or an iterable of texts, batches of texts, FASTA records and Path objects (or of
#: mappings, whose text a `field` names); Arrow-backed columns and datasets are iterables too (see `bytepair.arrow`).
Corpus = PathLike | Iterable[str | os.PathLike[str] | FastaRecord | Sequence[str] | Mapping[str, object]]

# Texts are handed to the core in batches of about this many characters (one GIL release per batch).
BATCH_CHARS = 8 << 20
# Characters per piece of a document (see `documents`).
PIECE_CHARS = 1 << 18


def expand_path(path: PathLike, hint_text: bool = False) -> list[str]:
    """The files `path` names: itself, or the matches of a glob ("data/*.txt", "**" too) in sorted order.
    FileNotFoundError when nothing is there (with `hint_text`, saying how to pass a text instead),
    IsADirectoryError for a folder.

    >>> expand_path("no/such/*.txt")
    Traceback (most recent call last):
    FileNotFoundError: no file matches 'no/such/*.txt'
    """
    p = os.fspath(path)
    if any(ch in p for ch in "*?[") and not os.path.exists(p):
        matches = sorted(glob.glob(p, recursive=True))
        if not matches:
            raise FileNotFoundError(f"no file matches {p!r}")
        return matches
    if not os.path.exists(p):
        hint = " To train on a text, pass it in a list: train([text], ...)." if hint_text else ""
        raise FileNotFoundError(f"no such file: {p!r}.{hint}")
    if os.path.isdir(p):
        raise IsADirectoryError(f"{p!r} is a directory: pass the files in it, e.g. {os.path.join(p, '*.txt')!r}")
    return [p]


# -- compressed files, by their first bytes ------------------------------------------------------------------

# The first bytes ("magic numbers") of compressed formats.
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x04\x22\x4d\x18", "lz4"),
    (b"PK\x03\x04", "zip"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
)

#: For each format `compression` recognises, the command that decompresses a file to standard output.
COMPRESSION_TOOLS = {
    "gzip": "gzip -dc",
    "zstd": "zstd -dc",
    "bzip2": "bzip2 -dc",
    "xz": "xz -dc",
    "lz4": "lz4 -dc",
    "zip": "unzip -p",
    "7z": "7z x -so",
}


def compression(head: bytes) -> str | None:
    """The compressed format whose magic bytes `head` (a file's first bytes) starts with — "gzip", "zstd", "bzip2",
    "xz", "lz4", "zip", "7z" — or None (plain data). Text never starts so: these begin with bytes that are not
    UTF-8 text, but for bzip2's "BZh" + a block size digit + "1AY&SY".

    >>> compression(b"\\x1f\\x8b\\x08\\x00"), compression(b"\\x28\\xb5\\x2f\\xfd..."), compression(b"plain text")
    ('gzip', 'zstd', None)
    """
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if re.match(rb"BZh[1-9]1AY&SY", head):
        return "bzip2"
    return None


def file_compression(path: PathLike) -> str | None:
    """`compression` of a file's first bytes (None for standard input, "-", which cannot be peeked at)."""
    if os.fspath(path) == "-":
        return None
    with open(path, "rb") as f:
        return compression(f.read(16))


def unreadable_compression(path: PathLike, kind: str) -> ValueError:
    """The error for a file compressed in a format bytepair does not read (it reads plain text and gzip): decoding
    it as text would give garbage, which --errors replace would let through unseen."""
    name = os.fspath(path)
    return ValueError(
        f"{name} is {kind}-compressed, which bytepair does not read (it reads plain text and gzip): decompress it "
        f"first, or pipe it in: {COMPRESSION_TOOLS[kind]} {name} | bytepair ... -"
    )


def reads_as_a_path(text: str) -> bool:
    """A word without spaces that has a path separator or ends in a file extension ("data/a.txt", "b.jsonl").

    >>> reads_as_a_path("data/a.txt"), reads_as_a_path("a sentence.")
    (True, False)
    """
    return not any(c.isspace() for c in text) and bool(re.search(r"[/\\]|\.[A-Za-z][A-Za-z0-9]{0,5}$", text))


def corpus_files(corpus: object) -> list[str] | None:
    """The files of a corpus made only of files (a path, a glob, or a list/tuple of paths), else None."""
    if isinstance(corpus, (str, os.PathLike)):
        return expand_path(corpus, hint_text=isinstance(corpus, str))
    if isinstance(corpus, (list, tuple)) and corpus:
        if all(isinstance(x, os.PathLike) for x in corpus):
            return [p for x in corpus for p in expand_path(x)]
        # HF-style list of file names: str items that all name existing files.
        names = [x for x in corpus if isinstance(x, str) and "\n" not in x and len(x) < 4096]
        if len(names) == len(corpus) and all(os.path.isfile(x) for x in names):
            return names
        # Some name files and the others read as paths too: a typo, not a corpus of file names as text.
        if (
            len(names) == len(corpus)
            and any(os.path.isfile(x) for x in names)
            and all(os.path.isfile(x) or reads_as_a_path(x) for x in names)
        ):
            missing = [x for x in names if not os.path.isfile(x)]
            found = len(names) - len(missing)
            raise FileNotFoundError(
                f"no such file: {missing[0]!r}"
                + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                + f"; the list's other {found} item{' is a file' if found == 1 else 's are files'}. (A list of str "
                f"is read as file names when all of them are files, else as texts.)"
            )
    return None


def corpus_items(
    corpus: object, field: str | None = None
) -> Iterator[tuple[Literal["file", "texts"], str | list[str]]]:
    """Yields ("file", path) and ("texts", [str, ...]) batches of a corpus that is not only files; with `field`, a
    mapping item (a dict, a dataset row) gives its `field`."""
    if isinstance(corpus, (bytes, bytearray)):
        raise TypeError("corpus must be text (str), a path, or an iterable of those, not bytes; decode it first")
    if not isinstance(corpus, Iterable):
        raise TypeError(f"corpus must be a path or an iterable of str, not {type(corpus).__name__}")
    batch: list[str] = []
    size = 0
    for index, item in enumerate(corpus):
        if field is not None and isinstance(item, Mapping):
            if field not in item:
                raise ValueError(f"corpus item {index} has no field {field!r} (its keys: {list(item)[:8]!r})")
            item = item[field]
            if not isinstance(item, str):
                raise TypeError(f"the field {field!r} of corpus item {index} is a {type(item).__name__}, not a str")
        if isinstance(item, str):
            batch.append(item)
            size += len(item)
        elif isinstance(item, FastaRecord):  # a tuple (name, sequence): train on the sequence only
            batch.append(item.sequence)
            size += len(item.sequence)
        elif isinstance(item, (list, tuple)) and all(isinstance(x, str) for x in item):
            batch.extend(item)  # a batch of texts, as HF's train_from_iterator accepts
            size += sum(map(len, item))
        elif isinstance(item, os.PathLike):
            if batch:
                yield ("texts", batch)
                batch, size = [], 0
            yield from (("file", p) for p in expand_path(item))
            continue
        elif isinstance(item, Mapping):
            keys = [k for k, v in item.items() if isinstance(v, str)]
            hint = f" (its text field? pass field={keys[0]!r})" if keys else ""
            raise TypeError(
                f"corpus item {index} is a {type(item).__name__} with keys {list(item)[:5]!r}, not a "
                f"str: pass the column of texts{hint}"
            )
        else:
            raise TypeError(
                f"corpus item {index} is a {type(item).__name__}, not a str (text), a list of str "
                f"(a batch of texts) or a Path (file)"
            )
        if size >= BATCH_CHARS:
            yield ("texts", batch)
            batch, size = [], 0
    if batch:
        yield ("texts", batch)


# -- text files ---------------------------------------------------------------------------------------------


class CountingReader(io.RawIOBase):
    """A binary file that counts the bytes read from it (for progress on compressed files)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]  # RawIOBase's takes a Buffer
        n = self.raw.readinto(buffer)  # type: ignore[attr-defined]  # every binary file we open has it
        self.count += n or 0
        return int(n or 0)

    def close(self) -> None:
        if self.raw is not sys.stdin.buffer:
            self.raw.close()
        super().close()


def open_text(path: str, errors: str = "strict") -> tuple[IO[str], CountingReader]:
    """A text stream of a file (`-`: standard input; gzip, by its first bytes, decompressed), UTF-8, line breaks
    kept as they are, and the counter of raw bytes read. ValueError for other compressed formats."""
    if path == "-":
        raw: BinaryIO = sys.stdin.buffer
    else:
        if os.path.isdir(path):
            raise IsADirectoryError(f"{path!r} is a directory: pass the files in it")
        raw = open(path, "rb")  # noqa: SIM115  # closed by the counter, which the caller closes
    counter = CountingReader(raw)
    stream: io.BufferedReader | gzip.GzipFile = io.BufferedReader(counter, 1 << 16)
    # What the file is comes from its first bytes, not its name: gzip is read whatever the file is called, and a
    # format bytepair does not read is refused rather than decoded as text.
    kind = compression(stream.peek(16)[:16])
    if kind == "gzip" or (kind is None and path.endswith(".gz")):
        stream = gzip.GzipFile(fileobj=stream, mode="rb")
    elif kind is not None:
        counter.close()
        raise unreadable_compression("standard input" if path == "-" else path, kind)
    # newline="\n": lines end at "\n" only, and nothing is translated ("\r\n" stays as it is).
    return io.TextIOWrapper(stream, encoding="utf-8", errors=errors, newline="\n"), counter


# Patterns whose pieces never run across a line break that follows a letter or digit (see `can_cut`).
_CUTTABLE_PATTERNS = {"gpt2", "cl100k", "o200k", "whitespace"}


def can_cut(tok: Tokenizer) -> bool:
    """Whether a text may be encoded in pieces cut at the places `_CUT` finds, with the same ids as encoding it
    whole. True for the built-in patterns (gpt2, cl100k, o200k, whitespace): none of their pieces runs across
    such a place. Not for pattern=None (each text is one word) or custom regexes, nor when a special token
    holds whitespace (it could straddle a cut)."""
    pattern = tok.settings["pattern"]
    return pattern in _CUTTABLE_PATTERNS and not any(c.isspace() for s in tok.special_tokens for c in s)


# Where the built-in patterns always end a piece (regex matching only looks ahead, so a piece that starts at
# such a place is the same whether the text goes on before it or not):
# - before a space that follows a non-space: no piece holds a non-space followed by a space;
# - before a line break ("\n" or "\r\n") that follows a letter or digit: letters and digits never take a
#   line break into their piece (punctuation can: cl100k's and o200k's " ?[^\s\p{L}\p{N}]+[\r\n]*");
# - after a line break that follows a non-space and comes before a letter or digit: the break is then the
#   whole whitespace run (so gpt2's "\s+(?!\S)" cannot cut it differently at the end of a piece), and
#   whatever took it (a punctuation piece, or the break alone) ends there.
# Python's whitespace includes all of Unicode's White_Space, so "non-space" here is non-space for the core.
_CUT = re.compile(r"(?<=\S) |(?<=[^\W_])\r?\n|(?<=\S\n)(?=[^\W_])")


def _last_cut(text: str, floor: int) -> int:
    """The last place after `floor` where `text` may be cut (see `_CUT`), or -1. Looks at the end first."""
    window = 256
    while True:
        start = max(floor, len(text) - window)
        last = -1
        for m in _CUT.finditer(text, start):
            last = m.start()
        if last > floor:
            return last
        if start == floor:
            return -1
        window *= 16


@dataclass
class Piece:
    """A piece of a document: `last` is True for the piece that ends it."""

    text: str
    last: bool
    source: str  # file name, for messages
    start: int = 0  # where the piece starts in its file, in characters (split="file")
    line: int | None = None  # its line number (split="line": the piece is the line; jsonl_field: its field)

    def place(self, message: str) -> str:
        """`message` (about this piece) with the file name, the line, and positions in the file or line."""
        within = "file" if self.line is None else "text"
        message = re.sub(
            r"at character (\d+)( of the text)?",
            lambda m: f"at character {self.start + int(m.group(1))} of the {within}",
            message,
        )
        return f"{self.source}{'' if self.line is None else f', line {self.line}'}: {message}"


def documents(
    paths: Sequence[str],
    *,
    split: Literal["file", "line"] = "file",
    jsonl_field: str | None = None,
    cut: bool = True,
    errors: str = "strict",
    progress: Progress | None = None,
    piece_chars: int = PIECE_CHARS,
) -> Iterator[Piece]:
    """The documents of `paths`, in pieces.

    split="file": each file is one document, in pieces of about `piece_chars` characters cut where the
    tokenizer cuts anyway (`cut=True`, see `can_cut`); with `cut=False` each file is read whole.
    split="line": each line is one document (its line break, "\\n" or "\\r\\n", is not part of it).
    jsonl_field: each line is a JSON object; its `jsonl_field` (a string) is one document.
    """
    if progress is not None:
        progress.total = (
            None
            if "-" in paths or any(not os.path.isfile(p) for p in paths)
            else sum(os.path.getsize(p) for p in paths)
        )
    done = 0
    for path in paths:
        if path != "-" and not os.path.exists(path):
            raise FileNotFoundError(f"no such file: {path!r}")
        stream, counter = open_text(path, errors)
        name = "standard input" if path == "-" else path
        try:
            if jsonl_field is not None:
                pieces = _records(stream, name, jsonl_field)
            elif split == "line":
                pieces = _lines(stream, name)
            else:
                pieces = _file_pieces(stream, name, cut, piece_chars)
            for piece in pieces:
                yield piece
                if progress is not None:
                    progress.update(done + counter.count)
        except UnicodeDecodeError as e:
            raise ValueError(
                f"{name} is not UTF-8 ({e.reason} at byte {e.start} of a block); pass --errors replace to read "
                f"it anyway"
            ) from None
        except EOFError as e:  # a truncated .gz
            raise ValueError(f"{name}: {e}") from None
        except (gzip.BadGzipFile, OSError) as e:
            if isinstance(e, (FileNotFoundError, IsADirectoryError)):
                raise
            raise ValueError(f"{name}: cannot read it ({e})") from None
        finally:
            done += counter.count
            stream.close()
            counter.close()  # a GzipFile leaves the file under it open
    if progress is not None:
        progress.update(done)


def _records(stream: IO[str], name: str, field: str) -> Iterator[Piece]:
    """Each JSON line's `field` as one document."""
    for number, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{name}, line {number}: not JSON ({e.msg})") from None
        if not isinstance(record, dict) or field not in record:
            keys = list(record)[:8] if isinstance(record, dict) else type(record).__name__
            raise ValueError(
                f"{name}, line {number}: no field {field!r} (it has {keys}); choose the text field with --jsonl-field"
            )
        value = record[field]
        if not isinstance(value, str):
            raise ValueError(f"{name}, line {number}: field {field!r} is a {type(value).__name__}, not a string")
        yield Piece(value, True, name, line=number)


def _lines(stream: IO[str], name: str) -> Iterator[Piece]:
    """Each line (without its line break) as one document."""
    for number, line in enumerate(stream, 1):
        if line.endswith("\n"):
            line = line[:-2] if line.endswith("\r\n") else line[:-1]
        yield Piece(line, True, name, line=number)


def _file_pieces(stream: IO[str], name: str, cut: bool, piece_chars: int) -> Iterator[Piece]:
    """The whole file as one document, in pieces of about `piece_chars` cut where the pattern splits anyway."""
    buffer = ""
    start = 0  # where `buffer` starts in the file
    scanned = 0  # no cut before this position of `buffer` (already searched)
    while True:
        block = stream.read(piece_chars)
        if not block:
            break
        buffer += block
        if not cut or len(buffer) < piece_chars:
            continue
        k = _last_cut(buffer, max(scanned - 2, 0))
        if k > 0:
            yield Piece(buffer[:k], False, name, start)
            buffer = buffer[k:]
            start += k
        scanned = len(buffer)
    yield Piece(buffer, True, name, start)
