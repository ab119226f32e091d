"""Compare tokenizers on a corpus: bytes per token, tokens per word, how much of each vocabulary the corpus
uses, unknown tokens — as a table and a PNG bar chart. `bytepair compare` prints these.

Besides tokenizers, three baselines without merges show the two ends of the scale: "bytes" (one token per
UTF-8 byte: 256 symbols), "chars" (one token per character) and "words" (one token per whitespace-separated
word: the vocabulary a word-level tokenizer would need).

>>> import bytepair
>>> tok = bytepair.train(["the cat sat on the mat"] * 10, vocab_size=268)
>>> rows = compare({"bpe": tok, "bytes": "bytes", "words": "words"}, ["the cat sat", "on the mat"])
>>> [(r.name, r.tokens, round(r.tokens_per_word, 2)) for r in rows]  # "on" at the start of a text is rare
[('bpe', 7, 1.17), ('bytes', 21, 3.5), ('words', 6, 1.0)]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ._tokenizer import Tokenizer
from .viewer import PerToken
from .writing import open_whole

__all__ = ["BASELINES", "Row", "chart", "compare", "table"]

BASELINES = ("bytes", "chars", "words")


@dataclass
class Row(PerToken):
    """One tokenizer's numbers on the corpus."""

    name: str
    vocab_size: int | None  # None for the "chars" and "words" baselines (open vocabularies)
    tokens: int = 0
    bytes: int = 0
    characters: int = 0
    words: int = 0
    documents: int = 0
    unknown: int = 0  # unk_token occurrences (char-level tokenizers)
    has_unk: bool = False  # the tokenizer has an unk_token
    used: set[int | str] = field(default_factory=set, repr=False)  # ids (or units) seen

    @property
    def tokens_per_word(self) -> float:
        return self.tokens / self.words if self.words else 0.0

    @property
    def distinct(self) -> int:
        return len(self.used)

    @property
    def vocab_used(self) -> float | None:
        """Share of the vocabulary the corpus uses (None for open vocabularies)."""
        return self.distinct / self.vocab_size if self.vocab_size else None

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "vocab_size": self.vocab_size,
            "documents": self.documents,
            "bytes": self.bytes,
            "characters": self.characters,
            "words": self.words,
            "tokens": self.tokens,
            "bytes_per_token": round(self.bytes_per_token, 4),
            "chars_per_token": round(self.chars_per_token, 4),
            "tokens_per_word": round(self.tokens_per_word, 4),
            "distinct_tokens": self.distinct,
            "vocab_used": None if self.vocab_used is None else round(self.vocab_used, 6),
            "unknown": self.unknown,
        }


def compare(
    tokenizers: Mapping[str, Tokenizer | str],
    texts: Iterable[str] | Iterable[list[str]],
    *,
    threads: int | None = None,
) -> list[Row]:
    """Encodes the texts with every tokenizer (in one pass over them) and counts. `tokenizers` maps a name to a
    Tokenizer or to a baseline name ("bytes", "chars", "words"). `texts` is an iterable of texts or of lists
    of texts (batches, encoded in parallel). Special-token text in the corpus is encoded as ordinary text."""
    if not tokenizers:
        raise ValueError("nothing to compare: give at least one tokenizer")
    rows: list[Row] = []
    unk_ids: list[int | None] = []
    for name, tok in tokenizers.items():
        if isinstance(tok, str):
            if tok not in BASELINES:
                raise ValueError(f"unknown baseline {tok!r}: use one of {', '.join(BASELINES)}")
            rows.append(Row(name, 256 if tok == "bytes" else None))
            unk_ids.append(None)
        else:
            rows.append(Row(name, tok.vocab_size))
            unk = tok.settings["unk_token"]
            unk_ids.append(tok.token_to_id(unk) if isinstance(unk, str) else None)
            rows[-1].has_unk = unk_ids[-1] is not None
    words = documents = nbytes = chars = 0
    for batch in texts:
        group = [batch] if isinstance(batch, str) else list(batch)
        documents += len(group)
        words += sum(len(t.split()) for t in group)
        nbytes += sum(len(t.encode("utf-8")) for t in group)
        chars += sum(len(t) for t in group)
        for row, tok, unk_id in zip(rows, tokenizers.values(), unk_ids):
            if isinstance(tok, str):
                _baseline(row, tok, group)
                continue
            try:
                encoded = tok.encode_batch(group, disallowed_special=(), threads=threads)
            except ValueError as e:
                raise ValueError(f"{row.name} cannot encode this corpus: {e}") from None
            for ids in encoded:
                row.tokens += len(ids)
                row.used.update(ids)
                if unk_id is not None:
                    row.unknown += ids.count(unk_id)
    for row in rows:
        row.words, row.documents, row.bytes, row.characters = words, documents, nbytes, chars
    return rows


def _baseline(row: Row, kind: str, texts: list[str]) -> None:
    for text in texts:
        if kind == "bytes":
            data = text.encode("utf-8")
            row.tokens += len(data)
            row.used.update(data)
        elif kind == "chars":
            row.tokens += len(text)
            row.used.update(text)
        else:
            split = text.split()
            row.tokens += len(split)
            row.used.update(split)


def table(rows: list[Row], *, markdown: bool = False) -> str:
    """The numbers as an aligned text table (or a markdown table); the "unknown" column (unk_token
    occurrences) only when a tokenizer has an unk_token."""
    unknown = any(r.has_unk for r in rows)
    head = ["tokenizer", "vocab", "tokens", "bytes/token", "chars/token", "tokens/word", "distinct", "vocab used"]
    head += ["unknown"] if unknown else []
    body = []
    for r in rows:
        body.append(
            [
                r.name,
                f"{r.vocab_size:,}" if r.vocab_size else "open",
                f"{r.tokens:,}",
                f"{r.bytes_per_token:.2f}",
                f"{r.chars_per_token:.2f}",
                f"{r.tokens_per_word:.2f}",
                f"{r.distinct:,}",
                f"{r.vocab_used:.1%}" if r.vocab_used is not None else "-",
            ]
            + ([f"{r.unknown:,}" if r.has_unk else "-"] if unknown else [])
        )
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|---|" + "--:|" * (len(head) - 1)]
        lines += ["| " + " | ".join(cells) + " |" for cells in body]
        return "\n".join(lines)
    widths = [max(len(c[i]) for c in [head] + body) for i in range(len(head))]

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths)] + [fmt(c) for c in body])


def chart(rows: list[Row], path: str | os.PathLike[str], *, title: str = "") -> None:
    """A PNG with one bar chart per measure: bytes per token (higher: fewer tokens for the same text), tokens
    per word, and the share of the vocabulary used. Needs matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("the chart needs matplotlib: pip install matplotlib (or leave out --png)") from None
    names = [r.name for r in rows]
    measures = [
        ("bytes per token (higher: shorter sequences)", [r.bytes_per_token for r in rows], "{:.2f}"),
        ("tokens per word", [r.tokens_per_word for r in rows], "{:.2f}"),
        ("vocabulary used", [100 * (r.vocab_used or 0) for r in rows], "{:.1f}%"),
    ]
    height = 1.2 + 0.45 * len(rows)
    fig, axes = plt.subplots(1, len(measures), figsize=(13, height), sharey=True)
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]
    for ax, (label, values, fmt) in zip(axes, measures):
        bars = ax.barh(names, values, color=[colours[i % len(colours)] for i in range(len(rows))])
        ax.set_title(label, fontsize=10)
        ax.invert_yaxis()
        top = max(values) if values and max(values) > 0 else 1
        ax.set_xlim(0, top * 1.25)
        for bar, value, row in zip(bars, values, rows):
            text = "open" if label.startswith("vocabulary") and row.vocab_used is None else fmt.format(value)
            ax.text(bar.get_width() + top * 0.02, bar.get_y() + bar.get_height() / 2, text, va="center", fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    with open_whole(path) as out:
        fig.savefig(out, dpi=110, format=os.path.splitext(path)[1][1:].lower() or "png")
    plt.close(fig)
