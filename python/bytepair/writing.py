"""Files bytepair writes appear whole or not at all: written under a temporary name beside the target, renamed
over it when complete, removed when writing fails. The one place that writes a file for the library and the
command line.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "ids.txt")
>>> write_whole(path, "1 2 3\\n")
>>> open(path).read()
'1 2 3\\n'
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

PathLike = str | os.PathLike[str]

# Errors of a failed write that name no file (a full disk): the message then names the file being written.
_WRITE_ERRORS = {errno.EFBIG, errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS}


@contextlib.contextmanager
def open_whole(path: PathLike) -> Iterator[BinaryIO]:
    """A binary file to write `path` through: it appears under its name only when the `with` block ends without
    an error; otherwise the temporary file is removed and `path` is left as it was.

    FileNotFoundError when the folder does not exist, IsADirectoryError when `path` is a folder.
    """
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(f"{os.fspath(path)!r} is a directory: give a file name")
    if not target.parent.exists():
        raise FileNotFoundError(f"the folder of {os.fspath(path)!r} does not exist")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb", buffering=1 << 20) as f:
            yield f
        os.replace(tmp, target)
    except OSError as e:
        if e.filename is None and e.errno in _WRITE_ERRORS:  # a failed write names no file: name it
            raise OSError(e.errno, e.strerror or str(e), os.fspath(path)) from e
        raise
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def write_whole(path: PathLike, data: str | bytes, encoding: str = "utf-8") -> None:
    """Writes `data` (text is encoded with `encoding`) to `path`, whole or not at all (see `open_whole`)."""
    with open_whole(path) as f:
        f.write(data.encode(encoding) if isinstance(data, str) else data)
