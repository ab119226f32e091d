"""Encoding document streams into token-id files and decoding them back, in constant memory: what `bytepair
encode`, `decode` and `count` do. The documents come from `bytepair.corpus.documents`, the id files' layouts from
`bytepair.formats.ids`.

>>> import bytepair, io
>>> tok = bytepair.train(["low lower lowest"] * 5, vocab_size=259)
>>> out = io.BytesIO()
>>> summary = encode_stream(tok, [Piece("lower", True, "x")], out)
>>> out.getvalue(), summary.tokens
(b'257 68 81\\n', 3)
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from .corpus import Piece
from .formats.ids import Format, IdWriter, read_ids

if TYPE_CHECKING:
    from ._tokenizer import Tokenizer
    from .progress import Progress

__all__ = [
    "EncodeSummary",
    "batches",
    "choose_dtype",
    "decode_stream",
    "encode_batches",
    "encode_stream",
    "separator_id",
    "special_policy",
]

# Characters per batch encoded in parallel (the core needs ~10 bytes per character).
BATCH_CHARS = 2 << 20


def batches(pieces: Iterable[Piece], chars: int = BATCH_CHARS) -> Iterator[list[Piece]]:
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


def special_policy(tok: Tokenizer, special: str) -> dict[str, Any]:
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
    special_policy(tok, special)  # an unknown value is refused before anything is read
    if format not in ("text", "json", "bin"):
        raise ValueError(f"format must be text, json or bin, not {format!r}")
    if format == "bin":
        dtype = choose_dtype(tok, dtype)
    sep_id = None if separator is None else _separator_id(tok, separator)
    summary = EncodeSummary(dtype=dtype if format == "bin" else None)
    start = time.perf_counter()
    width: Literal[2, 4] = 2 if format == "bin" and dtype == "uint16" else 4  # bytes per id from the encoder
    writer = IdWriter(out, format, width, sep_id) if out is not None else None
    for batch, packed, lengths in encode_batches(tok, pieces, width=width, threads=threads, special=special):
        offset = 0
        for piece, n in zip(batch, lengths):
            summary.tokens += n
            summary.characters += len(piece.text)
            summary.bytes += len(piece.text.encode("utf-8"))
            summary.documents += piece.last
            if writer is not None:
                writer.write(packed[width * offset : width * (offset + n)], piece.last)
            offset += n
        if progress is not None:
            progress.update(tokens=sum(lengths))
    summary.seconds = time.perf_counter() - start
    return summary


def encode_batches(
    tok: Tokenizer,
    pieces: Iterable[Piece],
    *,
    width: Literal[2, 4] = 4,
    threads: int | None = None,
    special: str = "error",
    chars: int = BATCH_CHARS,
) -> Iterator[tuple[list[Piece], bytearray, list[int]]]:
    """Pieces encoded a batch at a time (in parallel): (batch, its ids as little-endian `width`-byte integers one
    piece after another, each piece's number of ids). What `encode_stream` writes from, and the sharded
    pipeline too. An error names the piece's file (and line) where the core names the text at fault.

    >>> import bytepair
    >>> tok = bytepair.train(["low lower lowest"] * 5, vocab_size=259)
    >>> [(len(batch), lengths) for batch, _, lengths in encode_batches(tok, [Piece("low", True, "x")], width=2)]
    [(1, [1])]
    """
    policy = special_policy(tok, special)
    for batch in batches(pieces, chars):
        texts = [p.text for p in batch]
        try:
            packed, lengths = tok.encode_batch_packed(texts, width=width, threads=threads, **policy)
        except ValueError as e:
            raise _named(e, batch) from None
        yield batch, packed, lengths


def _named(e: ValueError, batch: list[Piece]) -> ValueError:
    """An encoding error of a batch, naming the piece at fault where the core says which it was."""
    # The core names the first text that failed ("texts[i]: ..." when it was given several).
    named = re.match(r"texts\[(\d+)\]: ", str(e))
    piece = batch[int(named.group(1))] if named else batch[0]
    message = str(e)[named.end() :] if named else str(e)
    found = re.search(r"special token ('.*?') \(at", message)
    if found is None:
        return ValueError(piece.place(message))
    sources = sorted({p.source for p in batch})
    return ValueError(
        f"{', '.join(sources)}: the text contains the special token {found.group(1)}: pass "
        f"--special allow to encode it as the special token, or --special text to encode it "
        f'as ordinary text (special="allow" or "text" in Python)'
    )


def decode_stream(
    tok: Tokenizer,
    stream: BinaryIO,
    out: BinaryIO,
    *,
    format: Format = "text",
    dtype: str | None = None,
    join: bytes | None = None,
    separator: str | None = None,
) -> int:
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


def separator_id(tok: Tokenizer, separator: str) -> int:
    """The id of the special token `separator` (written after each document); ValueError naming the tokenizer's
    special tokens when it is not one of them."""
    return _separator_id(tok, separator)


def _separator_id(tok: Tokenizer, separator: str) -> int:
    sep_id = tok.token_to_id(separator)
    if separator not in tok.special_tokens or sep_id is None:
        raise ValueError(
            f"the separator {separator!r} is not a special token of this tokenizer (its special "
            f"tokens: {tok.special_tokens or 'none'})"
        )
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
