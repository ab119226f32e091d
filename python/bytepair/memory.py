"""Memory the encoder freed, given back to the operating system when asked (`release_memory`).

The core allocates with mimalloc, which keeps memory a thread freed for that thread's next allocations rather
than returning it at once: after one large call (say `encode_batch_to_numpy` over 60 MB of text, whose ids
are then dropped), the process stays ~150 MB larger until the encoding threads allocate again. That is the
fast choice for a loop of calls; a long-lived process that encoded something large once and now does other
work can call `release_memory()`.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from . import _core

__all__ = ["release_memory"]


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or None where the C library has none (musl, macOS)."""
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # pragma: no cover (not glibc)
        return None
    return trim


_MALLOC_TRIM = _malloc_trim()


def release_memory() -> None:
    """Gives the memory that bytepair's core holds freed back to the OS: the calling thread's and that of every
    pool of encoding threads, then the C heap's free pages (glibc's `malloc_trim`: Python's large strings,
    Arrow's buffers). Nothing still in use is touched; the next calls are as fast, once they have taken back the
    memory they need. Corpus workers call it between batches above their memory limit.

    >>> import bytepair
    >>> tok = bytepair.train(["low lower lowest"] * 5, vocab_size=259)
    >>> ids = tok.encode_batch_to_numpy(["lower"] * 1000)
    >>> del ids
    >>> bytepair.release_memory()
    """
    _core.release_memory()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
