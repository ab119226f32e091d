"""Charts of tokenizers (PNG, with matplotlib — an optional dependency: `pip install matplotlib`).

>>> from bytepair.viz import token_length_histogram        # doctest: +SKIP
>>> token_length_histogram(bytepair.dna_stats(tok, "genome.fa"), "lengths.png")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .dna import DnaStats
from .writing import open_whole

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["token_length_histogram"]


def _figure(width: float, height: float) -> Figure:
    """A matplotlib Figure that is not tied to pyplot (no global state, no GUI backend)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("PNG charts need matplotlib, which is not installed: pip install matplotlib") from None
    return Figure(figsize=(width, height), dpi=110)


def token_length_histogram(
    stats: DnaStats | Mapping[str, DnaStats],
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
) -> Path:
    """Draws token-length histograms to a PNG: left, the share of the encoding's tokens of each length (in
    bases); right, how many vocabulary entries have each length. `stats` is one `DnaStats` or several by
    label (e.g. {"bytepair": s1, "HF": s2}), drawn side by side. Returns the path written.
    """
    runs = {"": stats} if isinstance(stats, DnaStats) else dict(stats)
    if not runs or not all(isinstance(s, DnaStats) for s in runs.values()):
        raise TypeError("stats must be a DnaStats (from bytepair.dna_stats) or a mapping of labels to DnaStats")
    fig = _figure(11, 4.2)
    left, right = fig.subplots(1, 2)
    lengths = sorted({n for s in runs.values() for n in (*s.token_lengths, *s.vocab_lengths)})
    width = 0.8 / len(runs)
    for i, (label, s) in enumerate(runs.items()):
        shift = (i - (len(runs) - 1) / 2) * width
        share = [100 * s.token_lengths.get(n, 0) / max(s.tokens, 1) for n in lengths]
        name = f"{label}: " if label else ""
        left.bar([n + shift for n in lengths], share, width=width, label=f"{name}{s.bases_per_token:.2f} bases/token")
        right.bar(
            [n + shift for n in lengths],
            [s.vocab_lengths.get(n, 0) for n in lengths],
            width=width,
            label=f"{name}mean k-mer {s.mean_kmer_length:.2f}",
        )
    left.set_xlabel("token length (bases)")
    left.set_ylabel("% of tokens in the encoding")
    left.set_title("Tokens of the encoded sequences")
    right.set_xlabel("token length (bases)")
    right.set_ylabel("vocabulary entries")
    right.set_title("Vocabulary")
    from matplotlib.ticker import MaxNLocator

    for ax in (left, right):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(frameon=False)
        ax.grid(axis="y", alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open_whole(out) as f:
        fig.savefig(f, format=out.suffix[1:].lower() or "png")
    return out
