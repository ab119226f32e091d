"""Progress on stderr: whether to show it, and the one-line bar the command line's streaming jobs draw (the core
draws its own for training).

>>> show_progress(False)
False
"""

from __future__ import annotations

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
    """A one-line progress bar on stderr (bytes read of the total, tokens, speed), redrawn at most 10 times a
    second; nothing unless enabled (the command line enables it when stderr is a terminal)."""

    def __init__(self, label: str, enabled: bool, stream: IO[str] | None = None) -> None:
        self.label = label
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.total: int | None = None
        self.done = 0
        self.tokens = 0
        self.documents: int | None = None  # shown when set (see `set`)
        self.start = time.perf_counter()
        self._shown = 0.0

    def update(self, done: int | None = None, tokens: int = 0) -> None:
        """Sets the bytes done so far (when given), adds `tokens`, and redraws if the last draw is 0.1 s old."""
        if done is not None:
            self.done = done
        self.tokens += tokens
        now = time.perf_counter()
        if self.enabled and now - self._shown >= 0.1:
            self._shown = now
            self._draw(now)

    def set(self, done: int, tokens: int, documents: int | None = None) -> None:
        """Sets the totals so far (bytes read, tokens, documents: jobs whose workers report running totals), and
        redraws if the last draw is 0.1 s old."""
        self.tokens, self.documents = tokens, documents
        self.update(done)

    def _draw(self, now: float) -> None:
        seconds = max(now - self.start, 1e-9)
        rate = self.done / seconds
        speed = f"{rate / 1e6:.1f} MB/s"
        tokens = f"{self.tokens:,} tokens"
        if self.documents is not None:  # (counting words makes no tokens: then documents only)
            tokens = f"{self.documents:,} docs" + (f"  {tokens}" if self.tokens else "")
        if self.total and rate > 0 and self.done < self.total:
            left = (self.total - self.done) / rate
            speed += f"  ETA {int(left) // 3600}:{int(left) // 60 % 60:02d}:{int(left) % 60:02d}"
        if self.total:
            fraction = min(self.done / self.total, 1.0)
            bar = "█" * int(fraction * 30) + "·" * (30 - int(fraction * 30))
            line = f"{self.label} {bar} {fraction:4.0%}  {self.done / 1e6:.1f}/{self.total / 1e6:.1f} MB"
        else:
            line = f"{self.label} {self.done / 1e6:.1f} MB"
        self.stream.write(f"\r{line}  {tokens}  {speed}\x1b[K")
        self.stream.flush()

    def finish(self) -> None:
        """Draws the final state and ends the line."""
        if self.enabled:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()
