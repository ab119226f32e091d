"""What a corpus can be, and reading it: paths and globs, iterables of texts (a HF `datasets` column, batches of
texts, FASTA records), and the documents of text files streamed in exact pieces.

- `corpus_files` / `corpus_items`: what `bytepair.train` accepts, as files to read in the core or batches of
  texts to hand to it.
- `expand_path`: a path or glob as the files it names, with errors that say what to pass instead.
- `documents(paths)`: the documents of corpus files (text, JSON lines and parquet records; `.gz`, `.zst`, `.xz`,
  `.bz2`; URLs; `-` for stdin). A text file is read in pieces cut only where encoding the pieces one by one gives
  exactly the ids of encoding each document whole; with a tokenizer, the core finds the cuts
  (`_core.DocumentCutter`), even inside one long piece, so memory stays bounded whatever the text.
- At scale (`bytepair.pipeline`): `expand_inputs` (files, folders, globs, URLs → `InputFile`s), `plan_parts`
  (the parts workers read: whole files, byte ranges of plain files, row groups of parquet files — fixed by the
  inputs alone), and what a part holds: `part_pieces` (documents, to encode) and `part_texts` (to count words).

>>> list(corpus_items(["a text", ["a batch", "of texts"]]))
[('texts', ['a text', 'a batch', 'of texts'])]
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import io
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, BinaryIO, Literal

from . import _core
from .formats import compressed, jsonl, parquet
from .formats.fasta import FastaRecord

if TYPE_CHECKING:
    from ._tokenizer import Tokenizer
    from .progress import Progress

__all__ = [
    "PART_BYTES",
    "Corpus",
    "InputFile",
    "InputKind",
    "Part",
    "PathLike",
    "Piece",
    "can_cut",
    "can_stream",
    "corpus_files",
    "corpus_items",
    "documents",
    "expand_inputs",
    "expand_path",
    "file_texts",
    "input_kind",
    "open_text",
    "part_pieces",
    "part_texts",
    "plan_parts",
    "read_natively",
    "reads_as_a_path",
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
    """A text stream of a file (`-`: standard input; a URL; gzip, zstd, xz and bzip2, told by their first bytes,
    decompressed), UTF-8, line breaks kept as they are, and the counter of raw bytes read. ValueError for other
    compressed formats."""
    counter, stream = open_counted(path)
    # newline="\n": lines end at "\n" only, and nothing is translated ("\r\n" stays as it is).
    return io.TextIOWrapper(stream, encoding="utf-8", errors=errors, newline="\n"), counter


def open_counted(path: str) -> tuple[CountingReader, BinaryIO]:
    """The decompressed bytes of a file (`-`: standard input), and the counter of its stored bytes read."""
    if path == "-":
        raw: BinaryIO = sys.stdin.buffer
    else:
        raw = compressed.open_raw(path)
    counter = CountingReader(raw)
    # What the file is comes from its first bytes, not its name: gzip is read whatever the file is called, and a
    # format not read is refused rather than decoded as text.
    try:
        return counter, compressed.open_input(path, io.BufferedReader(counter, 1 << 16))
    except BaseException:
        counter.close()
        raise


# Patterns whose pieces never run across a line break that follows a letter or digit (see `can_cut`).
_CUTTABLE_PATTERNS = {"gpt2", "cl100k", "o200k", "whitespace"}


def can_cut(tok: Tokenizer) -> bool:
    """Whether a text may be encoded in pieces cut at the places `_CUT` finds, with the same ids as encoding it
    whole. True for the built-in patterns (gpt2, cl100k, o200k, whitespace): none of their pieces runs across
    such a place. Not for pattern=None (each text is one word) or custom regexes, nor when a special token
    holds whitespace (it could straddle a cut). (`documents(tokenizer=tok)` cuts in the core instead: see
    `can_stream`.)"""
    pattern = tok.settings["pattern"]
    return pattern in _CUTTABLE_PATTERNS and not any(c.isspace() for s in tok.special_tokens for c in s)


def can_stream(tok: Tokenizer) -> bool:
    """Whether `documents(..., tokenizer=tok)` can cut `tok`'s documents (in memory bounded whatever the text,
    with the ids of encoding each whole): for the built-in patterns and pattern=None, whatever the special
    tokens; not for custom regexes (a match may depend on text any distance away: such documents are read
    whole).

    >>> import bytepair
    >>> can_stream(bytepair.train(["ab ab"], 257, pattern=None))
    True
    >>> can_stream(bytepair.train(["ab ab"], 257, pattern="[^ ]+| "))
    False
    """
    return _core.DocumentCutter.can_cut(tok.core)


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
    # The document's place in its file, which names it for the validation split: the byte offset of its line
    # (documents that are lines or JSON records), its row (parquet), 0 for a whole file.
    key: int = 0

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
    tokenizer: Tokenizer | None = None,
    special: str = "error",
    cut_sizes: tuple[int, int] = (0, 0),
) -> Iterator[Piece]:
    """The documents of `paths`, in pieces.

    split="file": each file is one document, read in blocks of `piece_chars` characters and cut (`cut=True`)
    where encoding the parts apart gives the ids of the whole: with `tokenizer`, where its core says (memory
    bounded whatever the text; `special` is how its special-token text will be encoded, "error", "allow" or
    "text"; `cut_sizes` = (fallback_from, window) in bytes, for tests), else where the built-in patterns always
    split (`_CUT`). With `cut=False` each file is read whole.
    split="line": each line is one document (its line break, "\\n" or "\\r\\n", is not part of it).
    Records: in JSON lines files (`.jsonl`, `.ndjson`; with `jsonl_field` given, any file) each line is a JSON
    object whose `jsonl_field` (default "text") is one document; in parquet files, each row's `jsonl_field`
    column. (split="line" on a `.jsonl` file without `jsonl_field` reads its lines as text.)
    """
    if progress is not None:
        progress.total = (
            None
            if "-" in paths or any(not os.path.isfile(p) for p in paths)
            else sum(os.path.getsize(p) for p in paths)
        )
    done = 0
    for path in paths:
        if path != "-" and not compressed.is_url(path) and not os.path.exists(path):
            raise FileNotFoundError(f"no such file: {path!r}")
        name = "standard input" if path == "-" else path
        kind = input_kind(path, jsonl_field is not None)
        field = "text" if jsonl_field is None else jsonl_field
        if kind == "parquet":
            for row, text in parquet.records(path, field, name=name):
                yield Piece(text, True, name, key=row)
            done += compressed.file_info(path).size
            if progress is not None:
                progress.update(done)
            continue
        as_records = kind == "jsonl" and (jsonl_field is not None or split == "file")
        stream: IO[str] | BinaryIO
        if as_records:
            counter, binary = open_counted(path)
            stream = binary
            pieces: Iterator[Piece] = (
                Piece(r.text, True, name, line=r.line, key=r.offset)
                for r in jsonl.records(binary, name, field, errors=errors)
            )
        else:
            text_stream, counter = open_text(path, errors)
            stream = text_stream
            if split == "line":
                pieces = _lines(text_stream, name)
            else:
                cutter = None
                if cut and tokenizer is not None:
                    cutter = _core.DocumentCutter(tokenizer.core, special != "text", *cut_sizes)
                pieces = _file_pieces(text_stream, name, cut, piece_chars, cutter)
        try:
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


def _lines(stream: IO[str], name: str) -> Iterator[Piece]:
    """Each line (without its line break) as one document."""
    for number, line in enumerate(stream, 1):
        if line.endswith("\n"):
            line = line[:-2] if line.endswith("\r\n") else line[:-1]
        yield Piece(line, True, name, line=number)


def _file_pieces(
    stream: IO[str], name: str, cut: bool, piece_chars: int, cutter: _core.DocumentCutter | None
) -> Iterator[Piece]:
    """The whole file as one document, in pieces cut where `cutter` says (else where `_CUT` finds a place)."""
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
        try:
            k = cutter.cut(buffer) if cutter is not None else _last_cut(buffer, max(scanned - 2, 0))
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
        if k > 0:
            yield Piece(buffer[:k], False, name, start)
            buffer = buffer[k:]
            start += k
        scanned = len(buffer)
    if cutter is not None:
        try:
            cutter.finish(buffer)
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    yield Piece(buffer, True, name, start)


# -- corpora at scale: input files, the parts workers read, and what a part holds ---------------------------

InputKind = Literal["text", "jsonl", "parquet"]
#: Bytes of text per part of a plain file read by byte ranges (a compressed file is read whole: it cannot
#: be entered in the middle).
PART_BYTES = 64 << 20
# How much more text than its stored size a compressed file is assumed to hold, to plan parts and shards
# (text compresses 3-5x; the plan only needs an estimate).
_COMPRESSION_RATIO = 4


def input_kind(path: str, field_given: bool = False) -> InputKind:
    """How a file is read, by its name inside any compression: ".parquet" → "parquet" (records), ".jsonl" /
    ".ndjson" → "jsonl" (records), anything else "text" — or "jsonl" when a record field was given.

    >>> input_kind("docs.jsonl.zst"), input_kind("a.txt"), input_kind("a.txt", field_given=True)
    ('jsonl', 'text', 'jsonl')
    """
    suffix = compressed.inner_suffix(path)
    if suffix in parquet.SUFFIXES:
        return "parquet"
    if suffix in jsonl.SUFFIXES or field_given:
        return "jsonl"
    return "text"


@dataclass(frozen=True)
class InputFile:
    """An input file of a corpus: where it is read from (`path`, a local path or URL), its `name` relative to
    the folder or glob that named it (what the validation split hashes: moving the corpus keeps the split), what
    identifies its content (`size`, `mtime_ns`), and how it is read (`kind`)."""

    path: str
    name: str
    size: int
    mtime_ns: int
    kind: InputKind


def expand_inputs(inputs: Sequence[PathLike], *, field_given: bool = False) -> list[InputFile]:
    """The files of a corpus given as files, folders (every file under them, hidden ones left out), globs
    ("data/*.jsonl.zst", "**" too) and URLs, in order: each argument's files sorted by name, arguments in the
    order given. A file named twice is read once. FileNotFoundError names what matched nothing.

    >>> expand_inputs(["no/such/folder/"])
    Traceback (most recent call last):
    FileNotFoundError: no such file or folder: 'no/such/folder/'
    """
    found: list[InputFile] = []
    seen: set[str] = set()
    for item in inputs:
        given = os.fspath(item)
        if compressed.is_url(given):
            paths = compressed.glob_url(given)
            if any(c in given.partition("://")[2] for c in "*?["):
                base = _glob_base(given)
            elif paths == [given]:  # a file
                base = given.rsplit("/", 1)[0]
            else:  # a folder
                base = given
        elif os.path.isdir(given):
            paths = sorted(
                os.path.join(folder, name)
                for folder, subfolders, names in os.walk(given)
                for name in names
                if not name.startswith(".") and not any(part.startswith(".") for part in _parts(folder, given))
            )
            if not paths:
                raise FileNotFoundError(f"the folder {given!r} holds no files")
            base = given
        elif any(c in given for c in "*?[") and not os.path.exists(given):
            paths = expand_path(given)
            base = _glob_base(given)
        elif os.path.isfile(given):
            paths, base = [given], os.path.dirname(given)
        else:
            raise FileNotFoundError(f"no such file or folder: {given!r}")
        for path in paths:
            if path in seen:
                continue
            seen.add(path)
            info = compressed.file_info(path)
            name = _relative(path, base)
            found.append(InputFile(path, name, info.size, info.mtime_ns, input_kind(path, field_given)))
    return found


def _parts(folder: str, top: str) -> list[str]:
    """The folder names between `top` and `folder` (to leave out hidden folders)."""
    rel = os.path.relpath(folder, top)
    return [] if rel == "." else rel.split(os.sep)


def _glob_base(pattern: str) -> str:
    """The fixed folder a glob starts from: "data/**/x*.txt" → "data"."""
    parts = pattern.split("/")
    fixed = []
    for part in parts:
        if any(c in part for c in "*?["):
            break
        fixed.append(part)
    return "/".join(fixed[: len(parts) - 1] if len(fixed) == len(parts) else fixed)


def _relative(path: str, base: str) -> str:
    if not base:
        return path.replace(os.sep, "/")
    if compressed.is_url(path):
        return path[len(base) :].lstrip("/") if path.startswith(base) else path
    return os.path.relpath(path, base).replace(os.sep, "/")


@dataclass(frozen=True)
class Part:
    """A part of a corpus that one task reads: a whole file, the lines or records of a plain file that start in
    the byte range [`start`, `stop`), or row groups [`start`, `stop`) of a parquet file (`stop` None: to the
    end). `index` is its place in input order; `estimate` the bytes of text it is expected to hold."""

    index: int
    file: InputFile
    start: int = 0
    stop: int | None = None
    estimate: int = 0

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.stop is None


def plan_parts(files: Sequence[InputFile], *, whole_files: bool = False, part_bytes: int = PART_BYTES) -> list[Part]:
    """The parts of a corpus, in input order: a function of the files (their sizes, and parquet files' row
    groups) alone, never of how many workers read them.

    Plain local text and JSON lines files are cut into byte ranges of `part_bytes` (lines and records are
    whole in the part where they start), parquet files into runs of row groups of about `part_bytes` of text;
    compressed files and URLs of text are read whole, and so is every text file with `whole_files` (where a
    file is one document).
    """
    if part_bytes < 1:
        raise ValueError(f"part_bytes must be positive, got {part_bytes}")
    parts: list[Part] = []

    def add(file: InputFile, start: int = 0, stop: int | None = None, estimate: int = 0) -> None:
        parts.append(Part(len(parts), file, start, stop, estimate))

    for file in files:
        packed = compressed.compression_of(file.path) is not None
        if file.kind == "parquet" and not packed:
            with parquet.open_parquet(file.path) as pf:
                meta = pf.metadata
                sizes = [meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)]
            if not sizes:
                add(file, 0, None, 0)
                continue
            first, size = 0, 0
            for group, group_size in enumerate(sizes):
                size += group_size
                if size >= part_bytes and group + 1 < len(sizes):
                    add(file, first, group + 1, size)
                    first, size = group + 1, 0
            add(file, first, None if first == 0 else len(sizes), size)
        elif packed or compressed.is_url(file.path) or (whole_files and file.kind == "text"):
            add(file, 0, None, file.size * (_COMPRESSION_RATIO if packed else 1))
        else:
            starts = list(range(0, file.size, part_bytes)) or [0]
            for i, start in enumerate(starts):
                stop = starts[i + 1] if i + 1 < len(starts) else None
                add(file, start, stop, (stop if stop is not None else file.size) - start)
    return parts


def _line_start(stream: BinaryIO, offset: int) -> int:
    """Moves `stream` to the first line start at or after `offset` (0, or just after a "\\n"); returns it."""
    if offset == 0:
        stream.seek(0)
        return 0
    stream.seek(offset - 1)
    at = offset - 1
    while True:
        block = stream.read(1 << 16)
        if not block:
            return at
        i = block.find(b"\n")
        if i >= 0:
            at += i + 1
            stream.seek(at)
            return at
        at += len(block)


def line_number(path: str, offset: int) -> int:
    """The line number (from 1) of the line starting at byte `offset` of a plain local file (for messages)."""
    lines = 1
    with open(path, "rb") as f:
        left = offset
        while left > 0:
            block = f.read(min(left, 1 << 20))
            if not block:
                break
            lines += block.count(b"\n")
            left -= len(block)
    return lines


@contextlib.contextmanager
def _opened(part: Part) -> Iterator[tuple[BinaryIO, CountingReader, int]]:
    """The part's decompressed bytes positioned at its first line, the counter of stored bytes read, and the
    offset of that first line in the (decompressed) file."""
    if part.start == 0:
        counter, stream = open_counted(part.file.path)
        start = 0
    else:  # a byte range of a plain local file: find its first line in the file itself, then count from there
        raw = open(part.file.path, "rb")  # noqa: SIM115  # closed with the counter
        try:
            start = _line_start(raw, part.start)
        except BaseException:
            raw.close()
            raise
        counter = CountingReader(raw)
        stream = io.BufferedReader(counter, 1 << 16)
    try:
        yield stream, counter, start
    finally:
        stream.close()
        counter.close()


def _line_blocks(
    stream: BinaryIO, start: int, stop: int | None, name: str, max_line: int, block: int = 4 << 20
) -> Iterator[tuple[bytes, int]]:
    """Blocks of whole lines (bytes, and where each starts in the file) of the lines that start in
    [`start`, `stop`). A line longer than `max_line` bytes is an error."""
    at, carry = start, b""
    while stop is None or at < stop:
        data = stream.read(block)
        buf = carry + data
        if not data:
            if buf:
                yield buf, at
            return
        if stop is not None and at + len(buf) >= stop:
            end = buf.find(b"\n", stop - at - 1)  # the line holding byte stop - 1 is the last one
            if end >= 0:
                yield buf[: end + 1], at
                return
        else:
            end = buf.rfind(b"\n")
            if end >= 0:
                yield buf[: end + 1], at
                at += end + 1
                carry = buf[end + 1 :]
                continue
        if len(buf) > max_line:
            raise ValueError(
                f"{name}, the line at byte {at}: longer than {max_line:,} bytes; if that is a real document, "
                f"allow it with max_record_bytes= (--max-record-size)"
            )
        carry = buf


def _decoded(block: bytes, at: int, name: str, errors: str) -> str:
    try:
        return block.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{name} is not UTF-8 ({e.reason} at byte {at + e.start} of the file); pass --errors replace "
            f"(errors='replace') to read it anyway"
        ) from None


def part_pieces(
    part: Part,
    *,
    field: str = "text",
    split: Literal["file", "line"] = "file",
    cut: bool = True,
    errors: str = "strict",
    max_record_bytes: int = jsonl.MAX_RECORD_BYTES,
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[Piece]:
    """The documents of a part, in pieces, as `documents` reads whole files: a text file is one document
    (`split="file"`, in pieces cut where the tokenizer cuts anyway when `cut`) or one per line (`split="line"`,
    line breaks left out); JSON lines and parquet files one per record (`field`). `on_bytes` is told the
    stored bytes read so far (for progress). Each piece's `key` names its document for the validation split."""
    file = part.file
    name = file.path
    if file.kind == "parquet":
        groups = None if part.whole else range(part.start, part.stop if part.stop is not None else part.start + 1)
        if part.stop is None and not part.whole:
            with parquet.open_parquet(file.path) as pf:
                groups = range(part.start, pf.metadata.num_row_groups)
        for row, text in parquet.records(file.path, field, groups=groups, name=name):
            yield Piece(text, True, name, key=row)
        if on_bytes is not None:
            on_bytes(file.size if part.whole else part.estimate)
        return
    if file.kind == "text" and split == "file":
        if not part.whole:
            raise ValueError(f"{name}: a whole-file document cannot be read in parts")  # pragma: no cover
        done = 0
        for piece in documents([file.path], split="file", cut=cut, errors=errors):
            yield piece
            if on_bytes is not None and piece.last:
                on_bytes(file.size - done)
                done = file.size
        return
    plain = compressed.compression_of(file.path) is None and not compressed.is_url(file.path)
    with _opened(part) as (stream, counter, start):
        if file.kind == "jsonl":
            line_of = (lambda offset: line_number(file.path, offset)) if plain else None
            for i, record in enumerate(
                jsonl.records(
                    stream,
                    name,
                    field,
                    offset=start,
                    stop=part.stop,
                    errors=errors,
                    max_record_bytes=max_record_bytes,
                    line_of=line_of,
                )
            ):
                yield Piece(record.text, True, name, line=record.line, key=record.offset)
                if on_bytes is not None and i % 256 == 255:
                    on_bytes(counter.count)
        else:
            for block, at in _line_blocks(stream, start, part.stop, name, max_record_bytes):
                text = _decoded(block, at, name, errors)
                offset = at
                for line in text.split("\n")[: -1 if text.endswith("\n") else None]:
                    size = len(line.encode("utf-8")) + 1 if not line.isascii() else len(line) + 1
                    if line.endswith("\r"):
                        line = line[:-1]
                    yield Piece(line, True, name, key=offset)
                    offset += size
                if on_bytes is not None:
                    on_bytes(counter.count)
        if on_bytes is not None:
            on_bytes(counter.count)


def part_texts(
    part: Part,
    *,
    field: str = "text",
    errors: str = "strict",
    max_record_bytes: int = jsonl.MAX_RECORD_BYTES,
    batch_chars: int = 4 << 20,
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[tuple[Literal["lines", "texts"], str | list[str]]]:
    """What a part holds for counting words, as `train` reads files: ("lines", block) — a block of whole lines
    of a text file, each line with its line break one text — or ("texts", [record, ...]) for JSON lines and
    parquet files. `on_bytes` is told the stored bytes read so far."""
    file = part.file
    if file.kind == "text":
        with _opened(part) as (stream, counter, start):
            for block, at in _line_blocks(stream, start, part.stop, file.path, max_record_bytes):
                yield "lines", _decoded(block, at, file.path, errors)
                if on_bytes is not None:
                    on_bytes(counter.count)
        return
    batch: list[str] = []
    size = 0
    done = 0

    def done_at(n: int) -> None:
        nonlocal done
        done = n

    for piece in part_pieces(part, field=field, errors=errors, max_record_bytes=max_record_bytes, on_bytes=done_at):
        batch.append(piece.text)
        size += len(piece.text)
        if size >= batch_chars:
            yield "texts", batch
            batch, size = [], 0
            if on_bytes is not None:
                on_bytes(done)
    if batch:
        yield "texts", batch
    if on_bytes is not None:
        on_bytes(done)


def read_natively(path: str) -> bool:
    """Whether the core reads `path` itself as a text file, line by line (`WordCounts.add_file`): a local text
    file, plain or gzip named `.gz` (the core goes by the name). Other files — records, zstd/xz/bzip2, gzip by
    another name, URLs — go through `file_texts`, which tells compression by the first bytes (and refuses the
    formats it does not read)."""
    if input_kind(path) != "text" or compressed.is_url(path):
        return False
    by_name, by_bytes = compressed.compression_of(path), compressed.file_compression(path)
    return by_bytes == by_name and by_bytes in (None, "gzip") and not path.lower().endswith(".zstd")


def file_texts(
    path: str, *, field: str | None = None, errors: str = "strict", max_record_bytes: int = jsonl.MAX_RECORD_BYTES
) -> Iterator[tuple[Literal["lines", "texts"], str | list[str]]]:
    """What `train` counts in a whole file (see `part_texts`): blocks of lines of a text file, batches of records
    of a JSON lines or parquet file (`field`, default "text"; given for another file, it is read as JSON lines)."""
    info = compressed.file_info(path)
    file = InputFile(path, path, info.size, info.mtime_ns, input_kind(path, field is not None))
    return part_texts(
        Part(0, file), field="text" if field is None else field, errors=errors, max_record_bytes=max_record_bytes
    )
