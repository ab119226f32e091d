"""JSON lines corpora (`.jsonl`, `.ndjson`, compressed or not): one JSON object per line, whose `field` (a string)
is one document. The only place that knows the layout.

Each record comes with its line's byte offset in the (decompressed) file, which identifies it for the
validation split whatever part of the file a worker reads, and its line number when the reader started at the
file's start (a reader that starts inside a file finds its line numbers only when it has a message to give:
see `records`' `line_of`).

>>> import io
>>> [(r.offset, r.line, r.text) for r in records(io.BytesIO(b'{"text": "a"}\\n\\n{"text": "b"}\\n'), "x.jsonl", "text")]
[(0, 1, 'a'), (15, 3, 'b')]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["MAX_RECORD_BYTES", "SUFFIXES", "Record", "records"]

#: Endings of JSON lines files (inside any compression).
SUFFIXES = (".jsonl", ".ndjson")
#: The longest line read by default (a longer one is an error saying how to allow it): memory per worker is
#: bounded by it, not by what a file holds.
MAX_RECORD_BYTES = 64 << 20


@dataclass(frozen=True)
class Record:
    """One document of a corpus: its text, where its line starts in the file (bytes), and its line number
    (None when the reader started inside the file)."""

    text: str
    offset: int
    line: int | None


def records(
    stream: BinaryIO,
    name: str,
    field: str,
    *,
    offset: int = 0,
    stop: int | None = None,
    errors: str = "strict",
    max_record_bytes: int = MAX_RECORD_BYTES,
    line_of: Callable[[int], int] | None = None,
) -> Iterator[Record]:
    """The records of a JSON lines stream positioned at a line start `offset` bytes into the file: those whose
    line starts before `stop` (all to the end when None). Line numbers count from 1 when `offset` is 0; else
    they are None, and a message finds the line with `line_of(byte offset)`.

    Errors (ValueError naming the file and line): a line that is not JSON, not an object, without `field`,
    whose `field` is not a string; bytes that are not UTF-8 (unless `errors="replace"`); a line longer than
    `max_record_bytes`. Blank lines are skipped.
    """
    number = 1 if offset == 0 else None
    at = offset

    def where(line_start: int) -> str:
        if number is not None:
            return f"{name}, line {number}"
        if line_of is not None:
            return f"{name}, line {line_of(line_start)}"
        return f"{name}, the line at byte {line_start}"

    while stop is None or at < stop:
        line = stream.readline(max_record_bytes + 1)
        if not line:
            break
        start = at
        at += len(line)
        if len(line) > max_record_bytes and not line.endswith(b"\n"):
            raise ValueError(
                f"{where(start)}: the line is longer than {max_record_bytes:,} bytes; if that is a real "
                f"document, allow it with max_record_bytes= (--max-record-size)"
            )
        try:
            if line.strip():
                yield _record(line, field, errors, start, number)
        except ValueError as e:
            raise ValueError(f"{where(start)}: {e}") from None
        if number is not None:
            number += 1


def _record(line: bytes, field: str, errors: str, offset: int, number: int | None) -> Record:
    try:
        text = line.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise ValueError(
            f"not UTF-8 ({e.reason} at byte {e.start} of the line); pass errors='replace' (--errors replace) to "
            f"read it anyway"
        ) from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e.msg} at character {e.pos})") from None
    if not isinstance(record, dict):
        raise ValueError(f"a JSON {type(record).__name__}, not an object with a {field!r} field")
    if field not in record:
        keys = list(record)[:8]
        raise ValueError(f"no field {field!r} (it has {keys}); choose the text field with --field (field=)")
    value = record[field]
    if not isinstance(value, str):
        kind = "null" if value is None else f"a {type(value).__name__}"
        raise ValueError(f"field {field!r} is {kind}, not a string")
    return Record(value, offset, number)
