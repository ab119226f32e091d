"""Megatron-LM's indexed dataset (`PREFIX.bin` + `PREFIX.idx`, the "MMIDIDX" layout, version 1), which
Megatron-LM, NeMo and datatrove's `MegatronDocumentTokenizer` write and Megatron's `IndexedDataset`
memory-maps. The only place that knows the layout:

- `PREFIX.bin`: the token ids of every sequence, one after the other, little-endian `dtype`;
- `PREFIX.idx`: `b"MMIDIDX\\x00\\x00"`, the version (`<Q`, 1), the dtype's code (`<B`: uint16 = 8, int32 = 4),
  the number of sequences (`<Q`) and of document indices (`<Q`, one more than the documents), then each
  sequence's length in tokens (int32), each sequence's byte offset in the `.bin` (int64), and the document
  indices (int64: 0, then the sequence count at the end of each document).

bytepair writes one sequence per document, so the document indices are 0, 1, ..., n. Token ids are uint16
when the vocabulary has fewer than 65 500 ids, else int32 (Megatron's own rule, `DType.optimal_dtype`).

>>> import io
>>> bin_file = io.BytesIO()
>>> writer = MegatronWriter(bin_file, "uint16")
>>> writer.add((5).to_bytes(2, "little") + (7).to_bytes(2, "little"))
>>> writer.end_document()
>>> writer.add((9).to_bytes(2, "little"))
>>> writer.end_document()
>>> index = read_index(writer.index())
>>> index.dtype, index.lengths, index.pointers, index.document_indices
('uint16', [2, 1], [0, 4], [0, 1, 2])
"""

from __future__ import annotations

import array
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["DTYPE_CODES", "HEADER", "MegatronIndex", "MegatronWriter", "dtype_for", "read_index"]

HEADER = b"MMIDIDX\x00\x00"
VERSION = 1
#: Megatron's dtype codes (`megatron.core.datasets.indexed_dataset.DType`) for the dtypes bytepair writes.
DTYPE_CODES = {"uint16": 8, "int32": 4}
_SIZES = {"uint16": 2, "int32": 4}
_CODE_NAMES = {1: "uint8", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "float64", 7: "float32", 8: "uint16"}


def dtype_for(vocab_size: int) -> str:
    """Megatron's choice of token dtype: uint16 below 65 500 ids, else int32.

    >>> dtype_for(50257), dtype_for(100277)
    ('uint16', 'int32')
    """
    return "uint16" if vocab_size < 65500 else "int32"


class MegatronWriter:
    """Writes one indexed dataset: token bytes go to `bin_file` as they come (`add`), sequence lengths are kept
    (4 bytes per document), and `index()` gives the `.idx` file's bytes at the end."""

    def __init__(self, bin_file: BinaryIO, dtype: str) -> None:
        if dtype not in DTYPE_CODES:
            raise ValueError(f"dtype must be one of {sorted(DTYPE_CODES)}, not {dtype!r}")
        self.bin_file, self.dtype = bin_file, dtype
        self.width = _SIZES[dtype]
        self.lengths = array.array("i")  # int32, as the .idx holds them
        self.current = 0  # tokens of the document being written

    def add(self, packed: bytes | bytearray | memoryview) -> None:
        """Adds token ids (little-endian, `width` bytes each) to the current document."""
        self.bin_file.write(packed)
        self.current += len(packed) // self.width

    def end_document(self) -> None:
        if self.current >= 1 << 31:
            raise ValueError(
                f"a document of {self.current:,} tokens: Megatron's index holds lengths below 2**31; split it"
            )
        self.lengths.append(self.current)
        self.current = 0

    @property
    def documents(self) -> int:
        return len(self.lengths)

    def index(self) -> bytes:
        """The `.idx` file's bytes for the documents written so far."""
        return b"".join(index_chunks(self.lengths, self.dtype))


def index_chunks(lengths: array.array[int], dtype: str) -> Iterator[bytes]:
    """The `.idx` layout for sequences of `lengths` (one per document), in pieces."""
    n = len(lengths)
    yield HEADER + struct.pack("<QBQQ", VERSION, DTYPE_CODES[dtype], n, n + 1)
    body = array.array("i", lengths)
    if sys.byteorder == "big":  # pragma: no cover
        body.byteswap()
    yield body.tobytes()
    width = _SIZES[dtype]
    block = 1 << 16
    pointer = 0
    for start in range(0, n, block):
        pointers = array.array("q")
        for length in lengths[start : start + block]:
            pointers.append(pointer)
            pointer += length * width
        if sys.byteorder == "big":  # pragma: no cover
            pointers.byteswap()
        yield pointers.tobytes()
    for start in range(0, n + 1, block):
        indices = array.array("q", range(start, min(start + block, n + 1)))
        if sys.byteorder == "big":  # pragma: no cover
            indices.byteswap()
        yield indices.tobytes()


@dataclass
class MegatronIndex:
    """An `.idx` file read back: the token dtype, and per sequence its length and byte offset in the `.bin`;
    the document indices (sequence numbers where documents start, and the count at the end)."""

    dtype: str
    lengths: list[int]
    pointers: list[int]
    document_indices: list[int]


def read_index(data: bytes) -> MegatronIndex:
    """Reads an `.idx` file's bytes; anything else is a ValueError saying what is wrong."""
    fixed = len(HEADER) + struct.calcsize("<QBQQ")
    if len(data) < fixed or not data.startswith(HEADER):
        raise ValueError("not a Megatron index: it does not start with MMIDIDX")
    version, code, sequences, documents = struct.unpack_from("<QBQQ", data, len(HEADER))
    if version != VERSION:
        raise ValueError(f"Megatron index version {version}; version {VERSION} is the one in use")
    if code not in _CODE_NAMES:
        raise ValueError(f"unknown dtype code {code} in the Megatron index")
    expected = fixed + 4 * sequences + 8 * sequences + 8 * documents
    if len(data) < expected:
        raise ValueError(f"the Megatron index is cut short: {len(data)} bytes, its counts need {expected}")

    def numbers(code: str, count: int, offset: int) -> list[int]:
        values = array.array(code)
        values.frombytes(data[offset : offset + values.itemsize * count])
        if sys.byteorder == "big":  # pragma: no cover
            values.byteswap()
        return values.tolist()

    lengths = numbers("i", sequences, fixed)
    pointers = numbers("q", sequences, fixed + 4 * sequences)
    indices = numbers("q", documents, fixed + 12 * sequences)
    return MegatronIndex(_CODE_NAMES[code], lengths, pointers, indices)
