"""Token-id files, as `bytepair encode` writes them and `bytepair decode` reads them:

- "text": one line per document, ids separated by spaces;
- "json": one JSON array per document and line (JSON lines);
- "bin": raw little-endian ids (`dtype` uint16 or uint32), one after the other, no header
  (`numpy.memmap(path, dtype="<u2")` reads it); documents are told apart by a separator token, if any.
  A bin shard (`bytepair encode --output-dir`) comes with `NAME.offsets.npy`: where each document starts, in
  tokens, and the total at the end (uint64, n + 1 numbers; `numpy.load` reads it), written by `offsets_npy`.

>>> import io
>>> out = io.BytesIO()
>>> writer = IdWriter(out, "json", 4, None)
>>> writer.write((1).to_bytes(4, "little") + (2).to_bytes(4, "little"), last=True)
>>> out.getvalue()
b'[1,2]\\n'
>>> [(ids.tolist(), ends) for ids, ends in read_ids(io.BytesIO(b"1 2\\n3\\n"), "text")]
[([1, 2], True), ([3], True)]
"""

from __future__ import annotations

import array
import ast
import io
import re
import struct
import sys
from collections.abc import Iterator
from typing import BinaryIO, Literal

__all__ = ["Format", "IdWriter", "offsets_npy", "read_ids", "read_offsets"]

Format = Literal["text", "json", "bin"]


class IdWriter:
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


_ID_OR_MARK = re.compile(r"\d+|[\[\],\s]|[^\d\[\],\s]+")


def read_ids(
    stream: BinaryIO, format: Format, dtype: str = "uint32", block: int = 1 << 20
) -> Iterator[tuple[array.array[int], bool]]:
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
            raise ValueError(
                f"the binary token file ends with {len(rest)} stray byte(s): it is not {dtype} "
                f"(a length that is not a multiple of {size}); check --dtype"
            )
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
        raise ValueError(
            f"line {line}: the token file has bytes that are not ids (is it a binary file? pass --format bin)"
        ) from None
    finally:
        reader.detach()
    if len(ids):
        yield ids, format == "text"


def _bad_id(item: str, line: int) -> None:
    raise ValueError(f"line {line}: {item[:20]!r} is not a token id (ids are whole numbers from 0)")


# NumPy's .npy layout, version 1.0: a magic string, the version, a little-endian u16 header length, and a
# Python-literal header padded with spaces to a multiple of 64 bytes and ended by "\n"; then the data.
_NPY_MAGIC = b"\x93NUMPY\x01\x00"


def offsets_npy(lengths: array.array[int]) -> Iterator[bytes]:
    """A .npy file (uint64, little-endian) of document offsets for documents of `lengths` tokens: 0, then the
    running total after each document — `ids[offsets[i]:offsets[i + 1]]` is document i.

    >>> read_offsets(b"".join(offsets_npy(array.array("i", [3, 0, 2]))))
    [0, 3, 3, 5]
    """
    n = len(lengths) + 1
    header = f"{{'descr': '<u8', 'fortran_order': False, 'shape': ({n},), }}"
    padded = len(_NPY_MAGIC) + 2 + len(header) + 1
    header += " " * (-padded % 64) + "\n"
    yield _NPY_MAGIC + struct.pack("<H", len(header)) + header.encode("latin-1")
    total = 0
    block = array.array("Q", [0])
    for length in lengths:
        total += length
        block.append(total)
        if len(block) >= 1 << 16:
            yield _little(block)
            block = array.array("Q")
    yield _little(block)


def _little(values: array.array[int]) -> bytes:
    if sys.byteorder == "big":  # pragma: no cover
        values = array.array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def read_offsets(data: bytes) -> list[int]:
    """The offsets of an `offsets_npy` file's bytes (uint64 .npy of one dimension); ValueError for anything else."""
    if not data.startswith(_NPY_MAGIC) or len(data) < 10:
        raise ValueError("not a .npy file of version 1.0")
    (size,) = struct.unpack_from("<H", data, 8)
    try:
        header = ast.literal_eval(data[10 : 10 + size].decode("latin-1"))
    except (ValueError, SyntaxError):
        raise ValueError("the .npy header is not readable") from None
    if not isinstance(header, dict) or header.get("descr") != "<u8" or header.get("fortran_order"):
        raise ValueError(f"the .npy file does not hold little-endian uint64 offsets ({header})")
    (n,) = header["shape"]
    values = array.array("Q")
    values.frombytes(data[10 + size : 10 + size + 8 * n])
    if len(values) != n:
        raise ValueError(f"the .npy file is cut short: {len(values)} of {n} offsets")
    if sys.byteorder == "big":  # pragma: no cover
        values.byteswap()
    return values.tolist()
