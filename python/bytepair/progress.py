"""Progress on stderr: whether to show it, and the one-line bar the command line's streaming jobs draw (the core
draws its own for training).

>>> show_progress(False)
False
"""

from __future__ import annotations

import os
import sys
import time
from typing import IO

__all__ = ["Progress", "show_progress"]


def show_progress(progress: object) -> bool:
    """A `progress=` argument resolved: True/False as given; None shows progress when stderr is a terminal."""
    if progress is None:
        return sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, not {progress!r}")
    return progress


class Progress:
    """A progress line on stderr (bytes read of the total, tokens, speed); nothing unless enabled (the command line
    enables it when stderr is a terminal, or with --progress).

    On a terminal the line is redrawn in place at most 10 times a second, fitted to the terminal's width (a line
    wider than the terminal wraps, and each redraw then leaves a stale copy above), and cleared when done or when
    `clear` is called (the output that follows says what came of it). Elsewhere — a log file, with --progress — a
    plain line every 5 seconds and one at the end, as the core's training progress does.

    >>> import io
    >>> progress = Progress("encoding", True, io.StringIO())
    >>> progress.total = 2_000_000
    >>> progress.update(1_000_000, tokens=250_000)
    >>> progress.line(72, now=progress.start + 2.0)  # on a terminal 72 columns wide, 2 s after the start
    'encoding █████████··········  50%  1.0/2.0 MB  250,000 tokens  0.5 MB/s'
    >>> progress.line(40, now=progress.start + 2.0)
    'encoding  50%  1.0/2.0 MB  250,000 tok…'
    """

    #: Seconds between redraws on a terminal, and between plain lines elsewhere.
    REDRAW = 0.1
    LOG_EVERY = 5.0

    def __init__(self, label: str, enabled: bool, stream: IO[str] | None = None) -> None:
        self.label = label
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = enabled and _is_terminal(self.stream)
        self.total: int | None = None
        self.done = 0
        self.tokens = 0
        self.documents: int | None = None  # shown when set (see `set`)
        self.start = time.perf_counter()
        self._shown = self.start if enabled and not self.terminal else 0.0
        self._drawn = False  # a line is on the terminal, to redraw or clear

    def update(self, done: int | None = None, tokens: int = 0) -> None:
        """Sets the bytes done so far (when given), adds `tokens`, and redraws when it is time."""
        if done is not None:
            self.done = done
        self.tokens += tokens
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._shown >= (self.REDRAW if self.terminal else self.LOG_EVERY):
            self._shown = now
            self._show(now)

    def set(self, done: int, tokens: int, documents: int | None = None) -> None:
        """Sets the totals so far (bytes read, tokens, documents: jobs whose workers report running totals), and
        redraws when it is time."""
        self.tokens, self.documents = tokens, documents
        self.update(done)

    def finish(self) -> None:
        """Ends the progress: the line is cleared from a terminal; elsewhere the final state is written."""
        if not self.enabled:
            return
        if self.terminal:
            self.clear()
        else:
            self._show(time.perf_counter())

    def clear(self) -> None:
        """Takes the line off the terminal (before an error message, say), if one is drawn."""
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def line(self, width: int | None = None, now: float | None = None) -> str:
        """The progress as one line of at most `width` characters (None: any length, with a 30-cell bar)."""
        seconds = max((now if now is not None else time.perf_counter()) - self.start, 1e-9)
        tokens = f"{self.tokens:,} tokens"
        if self.documents is not None:  # (counting words makes no tokens: then documents only)
            tokens = f"{self.documents:,} docs" + (f"  {tokens}" if self.tokens else "")
        tail = f"{tokens}  {self.done / seconds / 1e6:.1f} MB/s"
        if not self.total:
            return _fit(f"{self.label}  {self.done / 1e6:.1f} MB  {tail}", width)
        fraction = min(self.done / self.total, 1.0)
        numbers = f"{fraction:4.0%}  {self.done / 1e6:.1f}/{self.total / 1e6:.1f} MB  {tail}"
        cells = 30 if width is None else min(30, width - 1 - len(self.label) - 1 - 1 - len(numbers))
        if cells < 8:  # no room for a bar worth the name
            return _fit(f"{self.label} {numbers}", width)
        filled = int(fraction * cells)
        return f"{self.label} {'█' * filled}{'·' * (cells - filled)} {numbers}"

    def _show(self, now: float) -> None:
        if self.terminal:
            self.stream.write(f"\r{self.line(_columns(self.stream), now)}\x1b[K")
            self._drawn = True
        else:
            self.stream.write(self.line(None, now) + "\n")
        self.stream.flush()


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def _columns(stream: IO[str]) -> int:
    """The width of the terminal `stream` writes to ($COLUMNS, else 80, when it cannot be asked)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        try:
            return int(os.environ.get("COLUMNS", "80"))
        except ValueError:
            return 80


def _fit(text: str, width: int | None) -> str:
    """`text` cut to fit `width - 1` characters (the last column left free: writing it wraps some terminals)."""
    if width is None or len(text) < width:
        return text
    return text[: max(width - 2, 0)] + "…"
