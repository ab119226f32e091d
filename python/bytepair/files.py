"""Tokenizers and corpora on disk, streamed: what the `bytepair` command line reads and writes.

- `load_tokenizer(spec)`: a tokenizer from a folder, a file in any supported format, or an encoding name.
- `documents(paths)`: the documents of text files (`.gz`, `-` for stdin, JSON lines), in pieces of about a
  megabyte cut only where the tokenizer's pattern splits anyway — so encoding piece by piece gives exactly the
  ids of encoding each document whole, in constant memory.
- `encode_stream` / `decode_stream`: ids as text, JSON lines, or a raw binary token file that `numpy.memmap`
  reads (`dtype="uint16"` or `"uint32"`, little-endian, a chosen special token after each document).
"""

from __future__ import annotations

import array
import gzip
import io
import json
import os
import re
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO, Literal

from . import ENCODINGS, Tokenizer, _thread_request, get_encoding

__all__ = [
    "OUR_FILE", "HF_FILE", "TIKTOKEN_FILE", "load_tokenizer", "documents", "Piece", "encode_stream",
    "decode_stream", "EncodeSummary", "Progress", "choose_dtype", "can_cut",
]

#: The files `bytepair train -o DIR` writes: ours, HF's tokenizer.json, and (byte-level) a tiktoken rank file.
OUR_FILE = "bytepair.json"
HF_FILE = "tokenizer.json"
TIKTOKEN_FILE = "tokenizer.tiktoken"

Format = Literal["text", "json", "bin"]
# Patterns whose pieces never run across a line break that follows a letter or digit (see `can_cut`).
_CUTTABLE_PATTERNS = {"gpt2", "cl100k", "o200k", "whitespace"}
_PIECE_CHARS = 1 << 18  # characters per piece of a document
_BATCH_CHARS = 2 << 20  # characters per batch encoded in parallel (the core needs ~10 bytes per character)


def load_tokenizer(spec: str | os.PathLike[str], *, data: str | os.PathLike[str] | None = None) -> Tokenizer:
    """A tokenizer from:

    - a folder written by `bytepair train` (its `bytepair.json`), or any folder holding a HF `tokenizer.json`
      or GPT-2's `vocab.json` + `merges.txt`;
    - a file: bytepair's JSON, HF's `tokenizer.json` (byte-level BPE), or a tiktoken rank file named after its
      encoding (`cl100k_base.tiktoken`, ...);
    - an encoding name: gpt2, r50k_base, p50k_base, cl100k_base, o200k_base (files found in `data`,
      $BYTEPAIR_DATA or tiktoken's cache; never downloaded).
    """
    text = os.fspath(spec)
    if not text.strip():  # Path("") is the current folder
        raise ValueError("the tokenizer is empty: give a folder, a file, or a name such as gpt2")
    path = Path(text)
    if path.is_dir():
        for name in (OUR_FILE, HF_FILE):
            if (path / name).is_file():
                return load_tokenizer(path / name)
        if (path / "vocab.json").is_file() and (path / "merges.txt").is_file():
            return Tokenizer.from_gpt2(path / "vocab.json", path / "merges.txt")
        raise FileNotFoundError(f"{text!r} holds no tokenizer: expected {OUR_FILE}, {HF_FILE}, or vocab.json + "
                                f"merges.txt (write one with `bytepair train ... -o {text}`)")
    if path.is_file():
        if path.suffix == ".tiktoken":
            stem = path.stem
            if stem not in ENCODINGS:
                raise ValueError(f"{text!r}: a .tiktoken file does not say which pattern it was made with; load "
                                 f"the {OUR_FILE} or {HF_FILE} written beside it, or name the file after its "
                                 f"encoding ({', '.join(n for n in ENCODINGS if n != 'gpt2')})")
            _, pattern, specials = ENCODINGS[stem]
            return Tokenizer.from_tiktoken(path, pattern=pattern, special_tokens=specials)
        with open(path, "rb") as f:
            head = f.read(4096)
        if head.lstrip()[:1] != b"{":
            raise ValueError(f"{text!r} is not a tokenizer file: expected bytepair's or HF's JSON, or a .tiktoken "
                             f"rank file")
        if re.search(rb'"format"\s*:\s*"bytepair"', head):
            return Tokenizer.load(path)
        return Tokenizer.from_hf(path)
    if text in ENCODINGS:
        return get_encoding(text, data)
    raise ValueError(f"unknown tokenizer {text!r}: not a file or folder, nor one of "
                     f"{', '.join(ENCODINGS)}")


# -- reading ----------------------------------------------------------------------------------------------


class _CountingReader(io.RawIOBase):
    """A binary file that counts the bytes read from it (for progress on compressed files)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = self.raw.readinto(buffer)  # type: ignore[attr-defined]
        self.count += n or 0
        return n

    def close(self) -> None:
        if self.raw is not sys.stdin.buffer:
            self.raw.close()
        super().close()


def open_text(path: str, errors: str = "strict") -> tuple[IO[str], _CountingReader]:
    """A text stream of a file (`-`: standard input; `.gz`: decompressed), UTF-8, line breaks kept as they
    are, and the counter of raw bytes read."""
    if path == "-":
        raw: BinaryIO = sys.stdin.buffer
    else:
        if os.path.isdir(path):
            raise IsADirectoryError(f"{path!r} is a directory: pass the files in it")
        raw = open(path, "rb")
    counter = _CountingReader(raw)
    stream: IO[bytes] = io.BufferedReader(counter, 1 << 16)
    if path.endswith(".gz"):
        stream = gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[assignment]
    # newline="\n": lines end at "\n" only, and nothing is translated ("\r\n" stays as it is).
    return io.TextIOWrapper(stream, encoding="utf-8", errors=errors, newline="\n"), counter


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
        message = re.sub(r"at character (\d+)( of the text)?",
                          lambda m: f"at character {self.start + int(m.group(1))} of the {within}", message)
        return f"{self.source}{'' if self.line is None else f', line {self.line}'}: {message}"


def documents(
    paths: Sequence[str],
    *,
    split: Literal["file", "line"] = "file",
    jsonl_field: str | None = None,
    cut: bool = True,
    errors: str = "strict",
    progress: Progress | None = None,
    piece_chars: int = _PIECE_CHARS,
) -> Iterator[Piece]:
    """The documents of `paths`, in pieces.

    split="file": each file is one document, in pieces of about `piece_chars` characters cut where the
    tokenizer cuts anyway (`cut=True`, see `can_cut`); with `cut=False` each file is read whole.
    split="line": each line is one document (its line break, "\n" or "\r\n", is not part of it).
    jsonl_field: each line is a JSON object; its `jsonl_field` (a string) is one document.
    """
    if progress is not None:
        progress.total = None if "-" in paths or any(not os.path.isfile(p) for p in paths) else \
            sum(os.path.getsize(p) for p in paths)
    done = 0
    for path in paths:
        if path != "-" and not os.path.exists(path):
            raise FileNotFoundError(f"no such file: {path!r}")
        stream, counter = open_text(path, errors)
        name = "standard input" if path == "-" else path
        try:
            if jsonl_field is not None:
                for number, line in enumerate(stream, 1):
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as e:
                        raise ValueError(f"{name}, line {number}: not JSON ({e.msg})") from None
                    if not isinstance(record, dict) or jsonl_field not in record:
                        keys = list(record)[:8] if isinstance(record, dict) else type(record).__name__
                        raise ValueError(f"{name}, line {number}: no field {jsonl_field!r} (it has {keys}); choose "
                                         f"the text field with --jsonl-field")
                    value = record[jsonl_field]
                    if not isinstance(value, str):
                        raise ValueError(f"{name}, line {number}: field {jsonl_field!r} is a "
                                         f"{type(value).__name__}, not a string")
                    yield Piece(value, True, name, line=number)
                    if progress is not None:
                        progress.update(done + counter.count)
            elif split == "line":
                for number, line in enumerate(stream, 1):
                    if line.endswith("\n"):
                        line = line[:-2] if line.endswith("\r\n") else line[:-1]
                    yield Piece(line, True, name, line=number)
                    if progress is not None:
                        progress.update(done + counter.count)
            else:
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
                    if progress is not None:
                        progress.update(done + counter.count)
                yield Piece(buffer, True, name, start)
        except UnicodeDecodeError as e:
            raise ValueError(f"{name} is not UTF-8 ({e.reason} at byte {e.start} of a block); pass --errors "
                             f"replace to read it anyway") from None
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


def batches(pieces: Iterable[Piece], chars: int = _BATCH_CHARS) -> Iterator[list[Piece]]:
    """Pieces grouped into batches of about `chars` characters (encoded in parallel)."""
    batch: list[Piece] = []
    size = 0
    for piece in pieces:
        batch.append(piece)
        size += len(piece.text)
        if size >= chars or len(batch) >= 65536:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


# -- progress ---------------------------------------------------------------------------------------------


class Progress:
    """A one-line progress bar on stderr (bytes read of the total, tokens, speed), redrawn at most 10 times a
    second; nothing unless enabled (the command line enables it when stderr is a terminal)."""

    def __init__(self, label: str, enabled: bool, stream: IO[str] | None = None) -> None:
        self.label = label
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.total: int | None = None
        self.done = 0
        self.tokens = 0
        self.start = time.perf_counter()
        self._shown = 0.0

    def update(self, done: int | None = None, tokens: int = 0) -> None:
        if done is not None:
            self.done = done
        self.tokens += tokens
        now = time.perf_counter()
        if self.enabled and now - self._shown >= 0.1:
            self._shown = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        seconds = max(now - self.start, 1e-9)
        speed = f"{self.done / seconds / 1e6:.1f} MB/s"
        tokens = f"{self.tokens:,} tokens"
        if self.total:
            fraction = min(self.done / self.total, 1.0)
            bar = "█" * int(fraction * 30) + "·" * (30 - int(fraction * 30))
            line = f"{self.label} {bar} {fraction:4.0%}  {self.done / 1e6:.1f}/{self.total / 1e6:.1f} MB"
        else:
            line = f"{self.label} {self.done / 1e6:.1f} MB"
        self.stream.write(f"\r{line}  {tokens}  {speed}\x1b[K")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()


# -- encoding ---------------------------------------------------------------------------------------------


def choose_dtype(tok: Tokenizer, dtype: str | None) -> str:
    """The dtype of a binary token file: `dtype` if given (checked), else uint16 when every id fits, uint32
    otherwise."""
    if dtype is None:
        return "uint16" if tok.vocab_size <= 1 << 16 else "uint32"
    if dtype not in ("uint16", "uint32"):
        raise ValueError(f"dtype must be uint16 or uint32, not {dtype!r}")
    if dtype == "uint16" and tok.vocab_size > 1 << 16:
        raise ValueError(f"this tokenizer has {tok.vocab_size} ids; uint16 holds ids up to 65535: use uint32")
    return dtype


@dataclass
class EncodeSummary:
    documents: int = 0
    tokens: int = 0
    bytes: int = 0  # UTF-8 bytes of the text encoded
    characters: int = 0
    seconds: float = 0.0
    dtype: str | None = None

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0


def special_policy(tok: Tokenizer, special: str) -> dict[str, object]:
    """encode() arguments for the command line's --special: "error" (tiktoken's default: special-token text
    in the input is an error), "allow" (it becomes the special token) or "text" (it is encoded as text)."""
    if special == "error":
        return {}
    if special == "allow":
        return {"allowed_special": "all"}
    if special == "text":
        return {"disallowed_special": ()}
    raise ValueError(f'special must be "error", "allow" or "text", not {special!r}')


def encode_stream(
    tok: Tokenizer,
    pieces: Iterable[Piece],
    out: BinaryIO | None,
    *,
    format: Format = "text",
    dtype: str | None = None,
    separator: str | None = None,
    special: str = "error",
    threads: int | None = None,
    progress: Progress | None = None,
) -> EncodeSummary:
    """Encodes documents piece by piece and writes their ids to `out` as they come (constant memory):

    - "text": one line per document, ids separated by spaces;
    - "json": one JSON array per document and line (JSON lines);
    - "bin": raw little-endian `dtype` ids, one after the other (`numpy.memmap(path, dtype="<u2")` reads it).

    separator: a special token written after each document (e.g. "<|endoftext|>"), or None.
    special: what to do with special-token text in the input (see `special_policy`).
    With `out=None` nothing is written (counting)."""
    policy = special_policy(tok, special)
    allowed, disallowed = tok._policy(policy.get("allowed_special", frozenset()),
                                      policy.get("disallowed_special", "all"))
    if format not in ("text", "json", "bin"):
        raise ValueError(f"format must be text, json or bin, not {format!r}")
    if format == "bin":
        dtype = choose_dtype(tok, dtype)
    sep_id = None if separator is None else _separator_id(tok, separator)
    summary = EncodeSummary(dtype=dtype if format == "bin" else None)
    start = time.perf_counter()
    width = 2 if format == "bin" and dtype == "uint16" else 4  # bytes per id from the encoder
    writer = _IdWriter(out, format, width, sep_id) if out is not None else None
    for batch in batches(pieces):
        texts = [p.text for p in batch]
        try:
            packed, lengths = tok._core.encode_packed(texts, allowed, disallowed, _thread_request(threads), width)
        except ValueError as e:
            # The core names the first text that failed ("texts[i]: ..." when it was given several).
            named = re.match(r"texts\[(\d+)\]: ", str(e))
            piece = batch[int(named.group(1))] if named else batch[0]
            message = str(e)[named.end():] if named else str(e)
            found = re.search(r"special token ('.*?') \(at", message)
            if found is None:
                raise ValueError(piece.place(message)) from None
            sources = sorted({p.source for p in batch})
            raise ValueError(f"{', '.join(sources)}: the text contains the special token {found.group(1)}: pass "
                             f"--special allow to encode it as the special token, or --special text to encode it "
                             f"as ordinary text (special=\"allow\" or \"text\" in Python)") from None
        offset = 0
        for piece, n in zip(batch, lengths):
            summary.tokens += n
            summary.characters += len(piece.text)
            summary.bytes += len(piece.text.encode("utf-8"))
            summary.documents += piece.last
            if writer is not None:
                writer.write(packed[width * offset:width * (offset + n)], piece.last)
            offset += n
        if progress is not None:
            progress.update(tokens=sum(lengths))
    summary.seconds = time.perf_counter() - start
    return summary


class _IdWriter:
    """Writes ids (given as little-endian bytes, `width` per id: 2 for uint16 "bin", else 4) in one of the
    formats, keeping track of where in a document it is."""

    def __init__(self, out: BinaryIO, format: str, width: int, separator: int | None) -> None:
        self.out, self.format = out, format
        self.separator = b"" if separator is None else separator.to_bytes(width, "little")
        self.open = False  # a document is started (json: "[" written)
        self.empty = True  # no id written yet in the current document

    def write(self, packed: bytes | bytearray, last: bool) -> None:
        if last:
            packed += self.separator
        if self.format == "bin":
            self.out.write(packed)
            return
        ids = array.array("I")
        ids.frombytes(packed)
        if sys.byteorder == "big":  # pragma: no cover
            ids.byteswap()
        comma = " " if self.format == "text" else ","
        text = comma.join(map(str, ids))
        head = "[" if self.format == "json" and not self.open else ""
        if text and not self.empty:
            head += comma
        tail = ("\n" if self.format == "text" else "]\n") if last else ""
        self.out.write((head + text + tail).encode("ascii"))
        self.open = not last
        self.empty = last or (self.empty and not text)


# -- decoding ---------------------------------------------------------------------------------------------

_ID_OR_MARK = re.compile(r"\d+|[\[\],\s]|[^\d\[\],\s]+")


def read_ids(stream: BinaryIO, format: Format, dtype: str = "uint32",
             block: int = 1 << 20) -> Iterator[tuple[array.array, bool]]:
    """Ids from a token file, in blocks: (ids, ends_a_document). "bin" has no documents (separators, if any,
    are tokens among the ids); "text" ends a document at each line break, "json" at each `]`."""
    if format == "bin":
        if dtype not in ("uint16", "uint32"):
            raise ValueError(f"dtype must be uint16 or uint32, not {dtype!r}")
        size = 2 if dtype == "uint16" else 4
        code = "H" if size == 2 else "I"
        rest = b""
        while True:
            data = stream.read(block * size)
            if not data:
                break
            data = rest + data
            whole = len(data) - len(data) % size
            ids = array.array(code)
            ids.frombytes(data[:whole])
            rest = data[whole:]
            if sys.byteorder == "big":  # pragma: no cover
                ids.byteswap()
            yield array.array("I", ids), False
        if rest:
            raise ValueError(f"the binary token file ends with {len(rest)} stray byte(s): it is not {dtype} "
                             f"(a length that is not a multiple of {size}); check --dtype")
        return
    line = 1
    carry = ""
    ids = array.array("I")
    reader = io.TextIOWrapper(stream, encoding="ascii", errors="strict", newline="")
    ended = "\n" if format == "text" else "]"
    try:
        while True:
            text = reader.read(block)
            chunk = carry + text
            carry = ""
            if text and chunk and chunk[-1].isdigit():  # a number may go on in the next block
                k = len(chunk.rstrip("0123456789"))
                chunk, carry = chunk[:k], chunk[k:]
            for m in _ID_OR_MARK.finditer(chunk):
                item = m.group()
                if item[0].isdigit():
                    if len(item) > 10 or int(item) >= 1 << 32:
                        raise ValueError(f"line {line}: id {item[:20]} is not in any vocabulary")
                    ids.append(int(item))
                elif item == ended:
                    yield ids, True
                    ids = array.array("I")
                    if item == "\n":
                        line += 1
                elif item == "\n":
                    line += 1
                elif not (item.isspace() or (format == "json" and item in "[,")):
                    _bad_id(item, line)
            if not text:
                break
    except UnicodeDecodeError:
        raise ValueError(f"line {line}: the token file has bytes that are not ids (is it a binary file? pass "
                         f"--format bin)") from None
    finally:
        reader.detach()
    if len(ids):
        yield ids, format == "text"


def _bad_id(item: str, line: int) -> None:
    raise ValueError(f"line {line}: {item[:20]!r} is not a token id (ids are whole numbers from 0)")


def decode_stream(tok: Tokenizer, stream: BinaryIO, out: BinaryIO, *, format: Format = "text",
                  dtype: str | None = None, join: bytes | None = None, separator: str | None = None) -> int:
    """Decodes a token file (as `encode_stream` writes it) to `out`, writing `join` between documents
    (default: a line break). Text and JSON lines end a document at each line; "bin" has no lines, so there the
    special token `separator` (as given to `encode_stream`) ends one, and is not written. Returns the number of
    ids read."""
    if format == "bin":
        dtype = choose_dtype(tok, dtype) if dtype is None else dtype
    if join is None:
        join = b"\n"
    sep_id = _separator_id(tok, separator) if format == "bin" and separator is not None else None
    total = 0
    pending_join = False  # a document ended: join goes before whatever comes next
    for ids, ends in read_ids(stream, format, dtype or "uint32"):
        total += len(ids)
        for part, part_ends in _split_at(ids.tolist(), sep_id, ends):
            if not part and not part_ends:
                continue  # nothing yet: a pending join waits for what follows (none after a last separator)
            if pending_join:
                out.write(join)
            if part:
                out.write(tok.decode_bytes(part))
            pending_join = part_ends
    return total


def _separator_id(tok: Tokenizer, separator: str) -> int:
    sep_id = tok.token_to_id(separator)
    if separator not in tok.special_tokens or sep_id is None:
        raise ValueError(f"the separator {separator!r} is not a special token of this tokenizer (its special "
                         f"tokens: {tok.special_tokens or 'none'})")
    return sep_id


def _split_at(ids: list[int], sep_id: int | None, ends: bool) -> Iterator[tuple[list[int], bool]]:
    """`ids` cut at each `sep_id` (dropped): (part, ends_a_document); the last part ends one if `ends`.

    >>> list(_split_at([1, 9, 2, 3, 9], 9, False))
    [([1], True), ([2, 3], True), ([], False)]
    """
    start = 0
    if sep_id is not None:
        for at, i in enumerate(ids):
            if i == sep_id:
                yield ids[start:at], True
                start = at + 1
    yield ids[start:], ends
