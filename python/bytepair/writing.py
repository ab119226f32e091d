"""Files bytepair writes appear whole or not at all, and never through a link someone else planted: the one
place that writes a file for the library and the command line.

How: the data goes to a new temporary file beside the target — an unpredictable name created with O_EXCL (so a
symlink or file already at that name is never opened), readable as a file the user creates would be (the
umask's permissions) — which is flushed to disk (fsync) and then renamed over the target in one step. A reader
sees the old file or the new one, never a part; a failed or interrupted write removes the temporary file and
leaves the target as it was. Two processes saving the same path at once each write their own temporary file;
the last rename wins, whole.

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
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "PathLike",
    "fsync_folder",
    "open_whole",
    "read_file_set",
    "remove_leftovers",
    "write_file_set",
    "write_whole",
]

PathLike = str | os.PathLike[str]

# Errors of a failed write that name no file (a full disk): the message then names the file being written.
_WRITE_ERRORS = {errno.EFBIG, errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS}


def _umask() -> int:
    """The process's umask (read by setting it and setting it back, once: the umask has no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Read once, at import: setting the umask to read it is not atomic, so it is not done while threads may write.
_UMASK = _umask()
_FILE_MODE = 0o666 & ~_UMASK


@contextlib.contextmanager
def open_whole(path: PathLike) -> Iterator[BinaryIO]:
    """A binary file to write `path` through: it appears under its name only when the `with` block ends without
    an error; otherwise the temporary file is removed and `path` is left as it was.

    FileNotFoundError when the folder does not exist, IsADirectoryError when `path` is a folder.
    """
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(f"{os.fspath(path)!r} is a directory: give a file name")
    if not target.parent.is_dir():
        raise FileNotFoundError(f"the folder of {os.fspath(path)!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    renamed = False
    try:
        with open(fd, "wb", buffering=1 << 20) as f:
            os.fchmod(fd, _FILE_MODE)
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        renamed = True
    except OSError as e:
        if e.filename is None and e.errno in _WRITE_ERRORS:  # a failed write names no file: name it
            raise OSError(e.errno, e.strerror or str(e), os.fspath(path)) from e
        raise
    finally:
        if not renamed:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    fsync_folder(target.parent)


def write_whole(path: PathLike, data: str | bytes, encoding: str = "utf-8") -> None:
    """Writes `data` (text is encoded with `encoding`) to `path`, whole or not at all (see `open_whole`)."""
    with open_whole(path) as f:
        f.write(data.encode(encoding) if isinstance(data, str) else data)


def remove_leftovers(path: PathLike) -> list[Path]:
    """Removes the temporary files a process killed while writing `path` left beside it (a SIGKILL leaves no
    chance to clean up), and returns their paths. Only names this module makes for `path` are touched:
    `.NAME.<8 random characters>.tmp` (`open_whole`) and `.NAME.<16 hex digits>.tmp` (a link being switched);
    folders are left alone, and a link is removed itself, never what it leads to.

    Call it only where no other process may be writing `path` at the same time (its temporary file would go).

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> for name in (".a.json.k2x_9q0z.tmp", ".a.json.notes", "a.json"):
    ...     open(os.path.join(folder, name), "w").close()
    >>> [p.name for p in remove_leftovers(os.path.join(folder, "a.json"))]
    ['.a.json.k2x_9q0z.tmp']
    >>> sorted(os.listdir(folder))
    ['.a.json.notes', 'a.json']
    """
    target = Path(path)
    pattern = re.compile(rf"\.{re.escape(target.name)}\.(?:[a-z0-9_]{{8}}|[0-9a-f]{{16}})\.tmp")
    removed = []
    try:
        entries = list(os.scandir(target.parent))
    except FileNotFoundError:
        return []
    for entry in sorted(entries, key=lambda e: e.name):
        if pattern.fullmatch(entry.name) and not entry.is_dir(follow_symlinks=False):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def fsync_folder(folder: PathLike) -> None:
    """Flushes a folder's entries (a rename into it) to disk, where the system allows it."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# -- sets of files --------------------------------------------------------------------------------------------

#: Where a folder's sets of files live (see `write_file_set`).
SETS = ".bytepair"
CURRENT = "current"


def write_file_set(folder: PathLike, files: dict[str, bytes], *, remove: tuple[str, ...] = ()) -> list[Path]:
    """Writes several files into `folder` (made if missing) so that they change together: a reader sees all of
    the old ones or all of the new ones, never some of each, even if the process is killed midway; the folder's
    other files are left alone. Names in `remove` that the new set does not have leave the folder with the
    switch. Returns the paths of the files written.

    How: the set is written into a new folder `FOLDER/.bytepair/<version>/`, and `FOLDER/.bytepair/current` — a
    symbolic link to the version in use — is switched to it by one atomic rename. Each file's name in `folder` is a
    link through `current` (`tokenizer.json -> .bytepair/current/tokenizer.json`), made before the switch; so
    every name changes at the same instant. (Plain files a folder already has under these names are first moved
    into a version of their own, unchanged, so that the first switch is atomic too.) The version before stays (a
    reader between two opens may still be using it); older ones are removed. Writers take turns (a lock file).
    Where the system has no symbolic links, each file is written whole on its own (see `open_whole`), and a set
    is then not switched as one.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> [p.name for p in write_file_set(folder, {"a.txt": b"1", "b.txt": b"2"})]
    ['a.txt', 'b.txt']
    >>> open(os.path.join(folder, "b.txt")).read()
    '2'
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for name in list(files) + list(remove):
        if not name or name.startswith(".") or os.sep in name or (os.altsep and os.altsep in name):
            raise ValueError(f"{name!r} is not a plain file name")
    if not _symlinks_work(out):
        for name, data in files.items():
            write_whole(out / name, data)
        for name in remove:
            if name not in files:
                with contextlib.suppress(FileNotFoundError):
                    (out / name).unlink()
        return [out / name for name in files]
    sets = out / SETS
    sets.mkdir(exist_ok=True)
    names = list(dict.fromkeys(list(files) + list(remove)))
    with _locked(sets / ".lock"):
        version = _new_version(sets)
        for name, data in files.items():
            write_whole(version / name, data)
        fsync_folder(version)
        previous = _current_version(sets)
        if previous is None:  # plain files from before: they become the current version, as they are
            adopted = _new_version(sets)
            for name in names:
                if (out / name).is_file() and not (out / name).is_symlink():
                    shutil.copy2(out / name, adopted / name)
            fsync_folder(adopted)
            _replace_with_link(sets / CURRENT, adopted.name)
            previous = adopted.name
        for name in names:  # each name a link through `current`; what they show does not change yet
            link, target = out / name, os.path.join(SETS, CURRENT, name)
            if not (link.is_symlink() and os.readlink(link) == target):
                _replace_with_link(link, target)
        _replace_with_link(sets / CURRENT, version.name)  # the switch
        fsync_folder(sets)
        for name in remove:  # gone with the switch (their links lead nowhere now): take the links away
            if name not in files:
                with contextlib.suppress(FileNotFoundError):
                    (out / name).unlink()
        for old in sets.iterdir():
            if old.is_dir() and not old.is_symlink() and old.name not in (version.name, previous):
                shutil.rmtree(old, ignore_errors=True)
        fsync_folder(out)
    return [out / name for name in files]


def read_file_set(folder: PathLike) -> Path:
    """The folder to read a set of files from, resolved once, so that files read one after another come from
    the same set: `FOLDER/.bytepair/<version>` when `write_file_set` wrote the folder, else `folder` itself."""
    out = Path(folder)
    version = _current_version(out / SETS)
    if version is not None and (out / SETS / version).is_dir():
        return out / SETS / version
    return out


def _current_version(sets: Path) -> str | None:
    try:
        return os.readlink(sets / CURRENT)
    except OSError:
        return None


def _replace_with_link(path: Path, target: str) -> None:
    """Makes `path` a symbolic link to `target` in one step (a link made beside it, renamed over it)."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{os.urandom(8).hex()}.tmp")
        try:
            os.symlink(target, tmp)
        except FileExistsError:  # pragma: no cover (a 64-bit random name taken)
            continue
        try:
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return
    raise FileExistsError(f"cannot make a temporary link beside {os.fspath(path)!r}")  # pragma: no cover


def _new_version(sets: Path) -> Path:
    """A new, empty version folder (an unpredictable name), with the permissions a folder the user made has."""
    version = Path(tempfile.mkdtemp(prefix="v", dir=sets))
    os.chmod(version, 0o777 & ~_UMASK)
    return version


_SYMLINKS: dict[str, bool] = {}


def _symlinks_work(folder: Path) -> bool:
    """Whether `folder`'s file system takes symbolic links (not on Windows without the privilege, nor on FAT)."""
    key = os.fspath(folder.resolve())
    if key not in _SYMLINKS:
        probe = folder / f".bytepair-link-probe-{os.urandom(6).hex()}"
        try:
            os.symlink("probe", probe)
            probe.unlink()
            _SYMLINKS[key] = True
        except (OSError, NotImplementedError):
            _SYMLINKS[key] = False
    return _SYMLINKS[key]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (created if missing) for the `with` block; where there is no fcntl, none."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover (Windows: no symbolic links either, so this is not reached)
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
