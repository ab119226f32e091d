"""Word counts (`bytepair words -o counts.tsv`): the words a corpus was pre-tokenized into and how often each
occurs, in order of first appearance, with how they were made (pattern, lowercasing, special tokens) — so one
counting job serves several trainings (`bytepair train --from-counts`, `train_from_counts(path, ...)`), with the
merges training on the corpus itself gives. The layout (a header line, then `word<TAB>count` lines with words
escaped so that any byte sequence goes through unchanged) is parsed and written in the core
(`src/formats/counts_tsv.rs`).

>>> import os, tempfile
>>> import bytepair
>>> words = CountedWords.from_texts(["low lower lowest"] * 5)
>>> words.items()
[('low', 5), (' lower', 5), (' lowest', 5)]
>>> path = os.path.join(tempfile.mkdtemp(), "counts.tsv")
>>> words.save(path)
>>> CountedWords.load(path).items() == words.items()
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from .. import _core
from .._checks import check_pattern, check_special_tokens
from ..writing import write_whole

__all__ = ["CountedWords", "load", "save"]

PathLike = str | os.PathLike[str]


@dataclass
class CountedWords:
    """Words counted in a corpus, in order of first appearance, each with its count, and how they were made.
    Train from them with `bytepair.train_from_counts(counted, vocab_size, ...)` (as often as you like: they
    are not used up), save them with `save`.

    `counts` holds the words (a `_core.PartialCounts`); `pattern`, `lowercase` and `special_tokens` are the
    pre-tokenizer, normaliser and special tokens that made them, which a tokenizer trained on them uses."""

    counts: _core.PartialCounts
    pattern: str | None = "gpt2"
    lowercase: bool = False
    special_tokens: tuple[str, ...] = field(default=())
    #: The largest peak memory of a worker that counted them (MB), when workers did (`count_corpus`).
    worker_peak_rss_mb: float | None = field(default=None, compare=False)

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        *,
        pattern: str | None = "gpt2",
        lowercase: bool = False,
        special_tokens: Iterable[str] = (),
    ) -> CountedWords:
        """The words of `texts` (each text one document), counted as `train` counts them."""
        check_pattern(pattern)
        specials = tuple(check_special_tokens(special_tokens))
        counter = _core.WordCounts(pattern, list(specials), lowercase)
        batch: list[str] = []
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be str, not {type(text).__name__}")
            batch.append(text)
            if len(batch) >= 4096:
                counter.add_texts(batch)
                batch = []
        counter.add_texts(batch)
        return cls(counter.take_unit(0), pattern, lowercase, specials)

    def __len__(self) -> int:
        return len(self.counts)

    def items(self) -> list[tuple[str, int]]:
        """(word, count) in order of first appearance, words as the pre-tokenizer cut them (plain text: GPT-2's
        "Ġ" appears only in a trained vocabulary)."""
        return self.counts.items()

    @property
    def bytes_seen(self) -> int:
        """Bytes of text the words were counted in."""
        return self.counts.bytes_seen

    @property
    def total(self) -> int:
        """Sum of the counts."""
        return sum(count for _, count in self.items())

    def save(self, path: PathLike) -> None:
        """Writes the counts file, whole or not at all."""
        save(self, path)

    @classmethod
    def load(cls, path: PathLike) -> CountedWords:
        """Reads a counts file (`save`'s, or `word<TAB>count` lines written by hand: those are taken as made
        with the gpt2 pattern, unless the trainer is told otherwise)."""
        return load(path)


def dumps(counted: CountedWords) -> bytes:
    """The counts file's bytes."""
    return counted.counts.to_tsv(counted.pattern, counted.lowercase, list(counted.special_tokens))


def save(counted: CountedWords, path: PathLike) -> None:
    """Writes `counted` to `path` (see the module notes), whole or not at all."""
    write_whole(path, dumps(counted))


def load(path: PathLike) -> CountedWords:
    """Reads a counts file; a damaged one is a ValueError naming the file and line."""
    p = os.fspath(path)
    if os.path.isdir(p):
        raise IsADirectoryError(f"{p!r} is a directory: give the counts file (bytepair words -o counts.tsv)")
    try:
        with open(p, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"no such counts file: {p!r}") from None
    counts, header = _core.PartialCounts.from_tsv(data, p)
    if header is None:
        return CountedWords(counts)
    pattern, lowercase, specials = header
    return CountedWords(counts, pattern, lowercase, tuple(specials))
