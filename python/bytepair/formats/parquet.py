"""Parquet corpora: one document per row, the text in a string column (`field`). Read with pyarrow, a column
at a time, in batches of rows — memory is a batch plus the pages being decoded, not the file. The only place
that knows the layout.

A file is split into parts by row groups (`row_groups`), each read on its own; a record's key is its row
number in the file (for the validation split and messages).

>>> import os, tempfile
>>> import pyarrow as pa, pyarrow.parquet as pq
>>> path = os.path.join(tempfile.mkdtemp(), "docs.parquet")
>>> pq.write_table(pa.table({"text": ["a", "b"], "id": [1, 2]}), path)
>>> [(row, text) for row, text in records(path, "text")]
[(0, 'a'), (1, 'b')]
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from .compressed import compression_of, open_input, open_seekable

if TYPE_CHECKING:
    import pyarrow.parquet as pq

__all__ = ["SUFFIXES", "open_parquet", "records", "row_groups"]

SUFFIXES = (".parquet",)
# Rows per batch read: ~1 MB of text for ordinary documents (1 024 rows held ~8 MB more at once, for no speed).
BATCH_ROWS = 256


@contextlib.contextmanager
def open_parquet(path: str) -> Iterator[pq.ParquetFile]:
    """A parquet file opened for reading (a URL too). A compressed one (`.parquet.gz`: parquet needs to seek,
    which a compressed stream cannot) is first decompressed into a temporary file, removed afterwards."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover (pyarrow is a dependency)
        raise ImportError(f"reading {path!r} needs pyarrow: pip install pyarrow") from None
    with contextlib.ExitStack() as stack:
        source: BinaryIO
        if compression_of(path):
            spool = stack.enter_context(tempfile.TemporaryDirectory(prefix="bytepair-parquet-"))
            plain = os.path.join(spool, "file.parquet")
            with open_input(path) as stream, open(plain, "wb") as f:
                shutil.copyfileobj(stream, f, 1 << 20)
            source = stack.enter_context(open(plain, "rb"))
        else:
            source = stack.enter_context(open_seekable(path))
        try:
            file = pq.ParquetFile(source, buffer_size=1 << 20, pre_buffer=False)
        except (pa.ArrowInvalid, OSError) as e:
            raise ValueError(f"{path}: not a readable parquet file ({e})") from None
        yield file


def row_groups(file: pq.ParquetFile) -> list[int]:
    """The number of rows of each row group."""
    meta = file.metadata
    return [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]


def records(
    path: str, field: str, *, groups: Sequence[int] | None = None, name: str | None = None
) -> Iterator[tuple[int, str]]:
    """(row number, text) for each row of the row groups `groups` (all when None), in order.

    Errors (ValueError naming the file, and the row where it applies): no column `field` (the message lists
    the columns), a column that does not hold strings, a null value, a damaged file."""
    import pyarrow as pa

    name = name or path
    with open_parquet(path) as file:
        schema = file.schema_arrow
        if field not in schema.names:
            raise ValueError(
                f"{name}: no column {field!r} (its columns: {schema.names[:12]}); choose the text column with "
                f"--field (field=)"
            )
        kind = schema.field(field).type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)):
            raise ValueError(f"{name}: column {field!r} holds {kind}, not strings; choose the text column with --field")
        sizes = row_groups(file)
        chosen = list(range(len(sizes))) if groups is None else list(groups)
        for group in chosen:
            row = sum(sizes[:group])
            try:
                # One column, decoded on the caller's thread: Arrow's pool of threads would keep memory per
                # thread (a worker held ~20 MB more) for no gain in speed.
                batches: Any = file.iter_batches(
                    batch_size=BATCH_ROWS, row_groups=[group], columns=[field], use_threads=False
                )
                for batch in batches:
                    for text in batch.column(0).to_pylist():
                        if text is None:
                            raise ValueError(f"{name}, row {row}: {field!r} is null, not a string")
                        yield row, text
                        row += 1
            except (pa.ArrowInvalid, OSError) as e:
                raise ValueError(f"{name}, row group {group}: cannot read it ({e})") from None
