"""Where a corpus file's bytes come from: local files or URLs (any filesystem pyarrow understands — `s3://`,
`gs://`, `hdfs://`, `file://` — or, when fsspec is installed, any of fsspec's), decompressed on the fly: gzip,
zstd, xz and bzip2, told by a file's first bytes (its ending, `.gz`, `.zst` (`.zstd`), `.xz`, `.bz2`, is what
plans a job: a compressed file cannot be entered in the middle). Other compressed formats (lz4, zip, 7z) are
refused with the command that decompresses them — never decoded as text, which `errors="replace"` would turn
into garbage tokens without a word. The one place that knows compression.

Decompression is streamed in bounded steps, so memory does not depend on the size of a file nor on its
compression ratio (a "decompression bomb" only takes time): every read returns at most what was asked, xz's
dictionary is capped (`XZ_MEMORY_LIMIT`), zstd's window too (`ZSTD_MAX_WINDOW`). A stream cut short or
damaged is a `ValueError` naming the file — never text silently missing (python-zstandard's own stream reader
ends quietly on a cut stream, so the frames are followed here).

>>> import gzip, io, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "a.txt.gz")
>>> with open(path, "wb") as f:
...     _ = f.write(gzip.compress(b"hello"))
>>> compression_of(path), inner_suffix(path)
('gzip', '.txt')
>>> with open_input(path) as stream:
...     stream.read()
b'hello'
"""

from __future__ import annotations

import bz2
import fnmatch
import io
import itertools
import lzma
import os
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = [
    "COMPRESSIONS",
    "COMPRESSION_TOOLS",
    "READABLE",
    "XZ_MEMORY_LIMIT",
    "ZSTD_MAX_WINDOW",
    "FileInfo",
    "compression",
    "compression_of",
    "file_compression",
    "file_info",
    "glob_url",
    "inner_suffix",
    "is_url",
    "open_input",
    "open_raw",
    "open_seekable",
    "unreadable_compression",
]

#: File endings and the compression they mean.
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd", ".xz": "xz", ".bz2": "bzip2"}
#: The largest dictionary an xz stream may ask for (xz -9 uses 64 MiB).
XZ_MEMORY_LIMIT = 256 << 20
#: The largest window a zstd frame may ask for (zstd's own default limit; --long uses 128 MiB).
ZSTD_MAX_WINDOW = 1 << 27
# Compressed bytes fed to zstd per step: it has no output limit per call, and a step's output is at most
# ~32 000 times its input (run-length blocks), so 2 KiB in gives at most ~64 MiB out.
_ZSTD_STEP = 2048
# Largest output of one decompression step of the other formats.
_STEP_OUTPUT = 1 << 20


def compression_of(path: str) -> str | None:
    """The compression a file's name says it has ("gzip", "zstd", "xz", "bzip2"), or None."""
    return COMPRESSIONS.get(os.path.splitext(path)[1].lower())


# The first bytes ("magic numbers") of compressed formats.
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x04\x22\x4d\x18", "lz4"),
    (b"PK\x03\x04", "zip"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
)
#: The compressed formats read (decompressed on the fly).
READABLE = frozenset({"gzip", "zstd", "xz", "bzip2"})
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


def file_compression(path: str) -> str | None:
    """`compression` of a local file's first bytes; for a URL or standard input ("-"), which are not opened
    twice, what the name says."""
    if path == "-":
        return None
    if is_url(path):
        return compression_of(path)
    with open(path, "rb") as f:
        return compression(f.read(16))


def unreadable_compression(name: str, kind: str) -> ValueError:
    """The error for a file compressed in a format not read here: decoding it as text would give garbage, which
    errors="replace" would let through unseen."""
    return ValueError(
        f"{name} is {kind}-compressed, which bytepair does not read (it reads plain text, gzip, zstd, xz and "
        f"bzip2): decompress it first, or pipe it in: {COMPRESSION_TOOLS[kind]} {name} | bytepair ... -"
    )


def inner_suffix(path: str) -> str:
    """The ending of the file inside the compression, lowercased: "data.jsonl.zst" → ".jsonl"."""
    stem = path
    if compression_of(path):
        stem = os.path.splitext(path)[0]
    return os.path.splitext(stem)[1].lower()


def is_url(path: str) -> bool:
    """Whether `path` is a URL ("s3://bucket/x"), read through pyarrow or fsspec, not the local file system."""
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme.isidentifier()


@dataclass(frozen=True)
class FileInfo:
    """What identifies an input file's content for resuming: its size and modification time (nanoseconds)."""

    size: int
    mtime_ns: int


def _filesystem(url: str) -> tuple[pyarrow.fs.FileSystem, str]:
    """pyarrow's filesystem for a URL and the path in it; fsspec's (wrapped for pyarrow) where pyarrow has none."""
    try:
        import pyarrow.fs as pafs
    except ImportError:  # pragma: no cover (pyarrow is a dependency)
        raise ImportError(f"reading {url!r} needs pyarrow: pip install pyarrow") from None
    try:
        fs, path = pafs.FileSystem.from_uri(url)
        return fs, str(path)
    except (ValueError, NotImplementedError) as e:  # pyarrow's ArrowInvalid, ArrowNotImplementedError
        try:
            import fsspec
        except ImportError:
            raise ValueError(
                f"{url!r}: pyarrow has no filesystem for this URL ({e}); install fsspec and the package for "
                f"its scheme (e.g. pip install fsspec gcsfs)"
            ) from None
        fs, path = fsspec.core.url_to_fs(url)
        return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), str(path)


def file_info(path: str) -> FileInfo:
    """Size and modification time of a local file or a URL."""
    if not is_url(path):
        st = os.stat(path)
        return FileInfo(st.st_size, st.st_mtime_ns)
    import pyarrow.fs as pafs

    fs, inner = _filesystem(path)
    info = fs.get_file_info(inner)
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"no such file: {path!r}")
    mtime = info.mtime_ns if info.mtime_ns is not None else 0
    return FileInfo(int(info.size or 0), int(mtime))


def glob_url(url: str) -> list[str]:
    """The files a URL names: itself, every file under it (a folder), or a glob's matches, sorted."""
    import pyarrow.fs as pafs

    scheme = url.partition("://")[0]
    fs, inner = _filesystem(url)
    pattern = inner if any(c in inner for c in "*?[") else None
    base = inner
    if pattern is not None:  # the folder before the first part with a wildcard
        base = "/".join(itertools.takewhile(lambda part: not any(c in part for c in "*?["), inner.split("/")))
    info = fs.get_file_info(base)
    if pattern is None and info.type == pafs.FileType.File:
        return [url]
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"no such file or folder: {url!r}")
    found = fs.get_file_info(pafs.FileSelector(base, recursive=True))
    files = sorted(f.path for f in found if f.type == pafs.FileType.File)
    if pattern is not None:
        files = [f for f in files if fnmatch.fnmatchcase(f, pattern)]
    else:
        files = [f for f in files if not os.path.basename(f).startswith(".")]
    if not files:
        raise FileNotFoundError(f"no file matches {url!r}")
    return [f"{scheme}://{f}" if not f.startswith(f"{scheme}://") else f for f in files]


def open_raw(path: str) -> BinaryIO:
    """The file's bytes as stored (not decompressed): a local file, or a URL's input stream."""
    if not is_url(path):
        if os.path.isdir(path):
            raise IsADirectoryError(f"{path!r} is a directory: pass the files in it")
        return open(path, "rb")  # the caller closes it
    fs, inner = _filesystem(path)
    # compression=None: pyarrow would decompress by the file's ending itself ("detect"); that is done here.
    stream: BinaryIO = fs.open_input_stream(inner, compression=None)
    return stream


def open_seekable(path: str) -> BinaryIO:
    """The file's stored bytes with random access (parquet files are read from their end): a local file, or a
    URL's random-access file."""
    if not is_url(path):
        return open_raw(path)
    fs, inner = _filesystem(path)
    stream: BinaryIO = fs.open_input_file(inner)
    return stream


def open_input(path: str, raw: BinaryIO | None = None) -> BinaryIO:
    """The decompressed bytes of `path` (`-`: standard input), streamed; `raw` is its stored bytes if already
    opened. The compression is told by the first bytes (a gzip file named `.txt` is read as gzip); a format not
    read here is a ValueError saying how to decompress it. Closing the result closes `raw`."""
    raw = open_raw(path) if raw is None else raw
    peekable = raw if hasattr(raw, "peek") else io.BufferedReader(raw, 1 << 16)  # type: ignore[type-var]
    kind = compression(peekable.peek(16)[:16])
    if kind is None:
        return peekable
    name = "standard input" if path == "-" else path
    if kind not in READABLE:
        peekable.close()
        raise unreadable_compression(name, kind)
    return io.BufferedReader(Decompressed(peekable, name, kind), 1 << 16)


class _Step(Protocol):
    """One compressed stream (a gzip member, an xz or bz2 stream, a zstd frame) being decompressed."""

    eof: bool

    def feed(self, data: bytes) -> bytes: ...
    def wants_input(self) -> bool: ...
    def unused(self) -> bytes: ...


class _Limited:
    """zlib (gzip), lzma (xz) and bz2 decompressors, which take an output limit per call."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.d = make()
        self.tail = b""  # zlib keeps unconsumed input outside the decompressor
        self.eof = False

    def feed(self, data: bytes) -> bytes:
        d = self.d
        if isinstance(d, type(zlib.decompressobj())):
            out: bytes = d.decompress(self.tail + data, _STEP_OUTPUT)
            self.tail = d.unconsumed_tail
        else:
            out = d.decompress(data, _STEP_OUTPUT)
        self.eof = d.eof
        return out

    def wants_input(self) -> bool:
        if isinstance(self.d, type(zlib.decompressobj())):
            return not self.tail
        return bool(self.d.needs_input)

    def unused(self) -> bytes:
        return bytes(self.d.unused_data)


class _Zstd:
    """A zstd frame: python-zstandard's decompressobj has no output limit, so input goes in small steps."""

    def __init__(self) -> None:
        import zstandard

        self.d = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW).decompressobj()
        self.tail = b""
        self.eof = False

    def feed(self, data: bytes) -> bytes:
        self.tail += data
        step, self.tail = self.tail[:_ZSTD_STEP], self.tail[_ZSTD_STEP:]
        out: bytes = self.d.decompress(step)
        self.eof = bool(self.d.eof)
        return out

    def wants_input(self) -> bool:
        return not self.tail

    def unused(self) -> bytes:
        return bytes(self.d.unused_data) + self.tail


def _maker(kind: str) -> Callable[[], _Step]:
    if kind == "gzip":
        return lambda: _Limited(lambda: zlib.decompressobj(wbits=31))
    if kind == "xz":
        return lambda: _Limited(lambda: lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=XZ_MEMORY_LIMIT))
    if kind == "bzip2":
        return lambda: _Limited(bz2.BZ2Decompressor)
    if kind == "zstd":
        return _Zstd
    raise ValueError(f"unknown compression {kind!r}")  # pragma: no cover


class Decompressed(io.RawIOBase):
    """The decompressed bytes of a compressed stream, read in bounded steps; a stream may hold several
    members / frames one after another (as `cat a.gz b.gz` makes). A cut or damaged stream is a ValueError
    naming the file."""

    def __init__(self, raw: BinaryIO, name: str, kind: str) -> None:
        self.raw, self.name, self.kind = raw, name, kind
        self.make = _maker(kind)
        self.step: _Step | None = None  # the member being read; None between members
        self.pending = b""  # compressed bytes read but not yet given to a member
        self.out = b""  # decompressed bytes not yet returned
        self.done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while not self.out and not self.done:
            self._advance()
        n = min(len(view), len(self.out))
        view[:n] = self.out[:n]
        self.out = self.out[n:]
        return n

    def _advance(self) -> None:
        try:
            if self.step is not None and self.step.eof:
                self.pending = self.step.unused() + self.pending
                self.step = None
            if self.step is None:
                if not self.pending:
                    self.pending = self.raw.read(1 << 16)
                if not self.pending:
                    self.done = True  # the input ends between members: a clean end
                    return
                if self.kind == "gzip" and not self.pending.strip(b"\0"):
                    self.pending = b""  # zero padding after the last member (tape blocks), as gzip allows
                    return
                self.step = self.make()
            data = b""
            if self.step.wants_input():
                data, self.pending = self.pending, b""
                if not data:
                    data = self.raw.read(1 << 16)
                    if not data:
                        raise ValueError(
                            f"{self.name}: the {self.kind} stream is cut short (the file ends inside it): the file "
                            f"is incomplete; download or copy it again"
                        )
            self.out = self.step.feed(data)
        except (zlib.error, lzma.LZMAError, OSError, EOFError) as e:
            if isinstance(e, OSError) and not isinstance(e, (EOFError,)) and e.errno is not None:
                raise  # a read error of the file itself, not of its content
            raise ValueError(f"{self.name}: not a valid {self.kind} stream ({e})") from None
        except Exception as e:
            if type(e).__name__ == "ZstdError":
                raise ValueError(f"{self.name}: not a valid zstd stream ({e})") from None
            raise

    def close(self) -> None:
        if not self.closed:
            self.raw.close()
        super().close()
