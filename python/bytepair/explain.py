"""BPE as a lecture: train on a tiny corpus with the textbook implementation (`bytepair.reference`) and tell
every step — the pair counts, the pair chosen and why, the corpus after the merge, the vocabulary — then
tokenize a few new words with the merges learned. `bytepair explain` prints it.

>>> lecture = explain_steps()
>>> [(step.pair, step.count) for step in lecture.steps][:3]
[(('u', 'g'), 20), (('u', 'n'), 16), (('h', 'ug'), 15)]
>>> print(explain(merges=1))  # doctest: +ELLIPSIS
Byte-Pair Encoding, step by step: the textbook example ...
Merge 1. Count every pair of neighbouring symbols, weighted by the count of its word:
    (h, u) 15   (u, g) 20   (p, u) 17   (u, n) 16   (b, u) 4   (g, s) 5
  The most frequent pair is (u, g), 20 times: merge it into the new token "ug".
...
"""

from __future__ import annotations

import textwrap
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import reference

__all__ = ["TEXTBOOK", "Lecture", "explain", "explain_steps"]

#: The textbook corpus (Hugging Face course, chapter 6): word → count.
TEXTBOOK: dict[str, int] = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
#: Words the textbook tokenizes after training: known pieces, an unknown letter, a word never seen.
TEXTBOOK_WORDS = ["bugs", "mug", "thug", "hugs"]

_TIE_RULES = {
    "first_seen": 'the textbook rule (tie_break="first_seen") takes the one met first, reading the words in '
    "corpus order, each from left to right",
    "hf": 'HF tokenizers\' rule (tie_break="hf") takes the one with the smallest ids',
    "lexicographic": 'CS336\'s rule (tie_break="lexicographic") takes the greater pair, compared as bytes',
}
_WIDTH = 100


@dataclass
class Lecture:
    """What `explain_steps` found: the corpus, the base vocabulary, every merge step, and new words tokenized."""

    word_counts: dict[str, int]
    mode: str
    tie_break: str
    base_vocab: list[str]
    initial_splits: dict[str, list[str]]
    steps: list[reference.MergeStep] = field(default_factory=list)
    finished: bool = True  # True: no pair was left to merge; False: stopped at the number of merges asked for
    tokenized: list[tuple[str, list[tuple[list[str], tuple[str, str] | None]]]] = field(default_factory=list)
    title: str = ""
    show_pairs: int = 12

    @property
    def merges(self) -> list[tuple[str, str]]:
        return [step.pair for step in self.steps]

    def render(self) -> str:
        """The lecture as text."""
        out: list[str] = []
        symbols = "characters" if self.mode == "char" else "bytes (shown with GPT-2's table: space is Ġ)"
        out.append(
            f"Byte-Pair Encoding, step by step: {self.title}" if self.title else "Byte-Pair Encoding, step by step"
        )
        out.append("")
        out.append(f"The corpus, as counts of its {len(self.word_counts)} distinct words:")
        out += _wrap(f"{self._word(w)} ×{n}" for w, n in self.word_counts.items())
        out.append("")
        base = list(self.base_vocab)
        out.append(f"Step 0. Split every word into {symbols}. The base vocabulary has {len(base)} symbols:")
        out += _wrap((_show(s) for s in base), sep="  ")
        out.append("and the corpus becomes")
        out += self._corpus(self.initial_splits)
        for number, step in enumerate(self.steps, 1):
            out.append("")
            out.append(f"Merge {number}. Count every pair of neighbouring symbols, weighted by the count of its word:")
            out += self._pairs(step.pair_freqs)
            out.append(
                f"  The most frequent pair is {_pair(step.pair)}, {_times(step.count)}: merge it into the "
                f'new token "{_show(step.new_token)}".'
            )
            ties = [p for p, n in step.pair_freqs.items() if n == step.count and p != step.pair]
            if ties:
                others = ", ".join(_pair(p) for p in ties[:4]) + (" …" if len(ties) > 4 else "")
                out += textwrap.wrap(
                    f"A tie: {others} also occur{'s' if len(ties) == 1 else ''} "
                    f"{_times(step.count)}; {_TIE_RULES[self.tie_break]}.",
                    _WIDTH,
                    initial_indent="  ",
                    subsequent_indent="  ",
                )
            out.append("  The corpus after the merge:")
            out += self._corpus(step.splits)
            out.append(f"  Vocabulary ({len(step.vocab)}):")
            out += _wrap((_show(s) for s in step.vocab), sep="  ", indent="    ")
        out.append("")
        if self.finished:
            out.append(
                "No pair is left to merge: every word is a single token."
                if self.steps
                else "There is no pair to merge: every word is a single symbol."
            )
        else:
            out.append(f"Stopped after {len(self.steps)} merge{'s' if len(self.steps) != 1 else ''}, as asked.")
        if self.steps:
            out.append("The merges, in the order learned; this list and the vocabulary are the tokenizer:")
            out += _wrap(
                (
                    f"{i}. {_show(s.pair[0])} + {_show(s.pair[1])} → {_show(s.new_token)}"
                    for i, s in enumerate(self.steps, 1)
                ),
                sep="   ",
            )
        if self.tokenized:
            out.append("")
            unseen = (
                "a symbol never seen becomes [UNK]" if self.mode == "char" else "every byte has a symbol, seen or not"
            )
            out += textwrap.wrap(
                f"To tokenize a new word, split it the same way ({unseen}) and apply the merges in that order:", _WIDTH
            )
            for word, history in self.tokenized:
                parts = [" ".join(map(_show, history[0][0]))]
                for split, pair in history[1:]:
                    parts.append(
                        f"({_show(pair[0])}+{_show(pair[1])}) {' '.join(map(_show, split))}"
                        if pair
                        else " ".join(map(_show, split))
                    )
                out.append(f"    {self._word(word)}: " + " → ".join(parts))
        return "\n".join(out)

    def __str__(self) -> str:
        return self.render()

    def _word(self, word: str) -> str:
        """A word as its symbols spell it: in byte mode with GPT-2's table (a space is Ġ)."""
        return "".join(reference.unit_strings(word, "byte")) if self.mode == "byte" else _show(word)

    def _corpus(self, splits: Mapping[str, list[str]]) -> list[str]:
        return _wrap(f"{' '.join(map(_show, splits[w]))} ×{n}" for w, n in self.word_counts.items())

    def _pairs(self, pair_freqs: Mapping[tuple[str, str], int]) -> list[str]:
        items = [(p, n) for p, n in pair_freqs.items() if n > 0]
        more = ""
        if len(items) > self.show_pairs:
            more = f"… and {len(items) - self.show_pairs} less frequent pairs"
            items = sorted(items, key=lambda item: -item[1])[: self.show_pairs]  # stable: first-seen among equals
        lines = _wrap(f"{_pair(p)} {n}" for p, n in items)
        return lines + ([f"    {more}"] if more else [])


class _Enough(Exception):
    pass


def explain_steps(
    word_counts: Mapping[str, int] | None = None,
    *,
    text: str | Iterable[str] | None = None,
    merges: int | None = None,
    mode: str = "char",
    pattern: str | None = "whitespace",
    tie_break: str = "first_seen",
    continuing_subword_prefix: str | None = None,
    end_of_word_suffix: str | None = None,
    words: Iterable[str] | None = None,
    show_pairs: int = 12,
) -> Lecture:
    """Runs the textbook algorithm (`bytepair.reference`) and records every step.

    word_counts: {word: count} (default: the textbook's hug/pug/pun/bun/hugs); or `text` (a str or texts),
        whose words are counted with `pattern` ("whitespace" by default: words and punctuation, no spaces).
    merges: stop after this many merges (default: when no pair is left).
    mode: "char" (the textbook's) or "byte". tie_break: as in `bytepair.train`.
    words: new words to tokenize at the end (default for the textbook: bugs, mug, thug, hugs).
    """
    if word_counts is not None and text is not None:
        raise ValueError("give word_counts or text, not both")
    title = ""
    if text is not None:
        texts = [text] if isinstance(text, str) else list(text)
        counts = reference.word_frequencies(texts, pattern)
        title = "your text"
    elif word_counts is None:
        counts = dict(TEXTBOOK)
        title = "the textbook example (Hugging Face course, chapter 6)"
        if words is None:
            words = TEXTBOOK_WORDS
    else:
        counts = dict(word_counts)
        title = "your word counts"
    if mode not in ("char", "byte"):
        raise ValueError(f'unknown mode {mode!r}: use "char" or "byte"')
    if tie_break not in _TIE_RULES:
        raise ValueError(f"unknown tie_break {tie_break!r}: use one of {', '.join(_TIE_RULES)}")
    if merges is not None and (isinstance(merges, bool) or not isinstance(merges, int) or merges < 0):
        raise ValueError(f"merges must be None or an int >= 0, got {merges!r}")
    for word, n in counts.items():
        if not isinstance(word, str) or isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"word counts must be str -> int >= 0, got {word!r}: {n!r}")
    counts = {w: n for w, n in counts.items() if w and n > 0}
    if not counts:
        raise ValueError("there are no words to learn from: give some text or word counts")

    prefix, suffix = continuing_subword_prefix, end_of_word_suffix
    unk = "[UNK]" if mode == "char" else None
    initial = "corpus"  # the symbols seen: 256 bytes would drown the lecture
    base = reference.base_vocabulary(counts, mode, (), initial, prefix, suffix)
    steps: list[reference.MergeStep] = []

    def record(step: reference.MergeStep) -> None:
        steps.append(step)
        if merges is not None and len(steps) >= merges:
            raise _Enough

    finished = True
    if merges == 0:
        # No merge asked for: finished only if there was nothing to merge anyway (every word one symbol).
        finished = all(len(reference.symbols_of(w, mode, prefix, suffix)) == 1 for w in counts)
    else:
        try:
            reference.train_from_counts(
                counts,
                vocab_size=1 << 62,
                mode=mode,
                initial_alphabet=initial,
                continuing_subword_prefix=prefix,
                end_of_word_suffix=suffix,
                tie_break=tie_break,
                on_merge=record,
            )
        except _Enough:
            # Stopped on request; finished only if nothing is left to merge anyway.
            finished = all(len(split) == 1 for split in steps[-1].splits.values())
    lecture = Lecture(
        word_counts=counts,
        mode=mode,
        tie_break=tie_break,
        base_vocab=base,
        initial_splits={w: reference.symbols_of(w, mode, prefix, suffix) for w in counts},
        steps=steps,
        finished=finished,
        title=title,
        show_pairs=show_pairs,
    )
    known = set(base) | {s.new_token for s in steps}
    for word in words or ():
        split = [s if s in known else (unk or s) for s in reference.symbols_of(word, mode, prefix, suffix)]
        history: list[tuple[list[str], tuple[str, str] | None]] = [(split, None)]
        for step in steps:
            merged = reference.merge_pair_in_split(*step.pair, split, prefix)
            if merged != split:
                history.append((merged, step.pair))
                split = merged
        lecture.tokenized.append((word, history))
    return lecture


def explain(word_counts: Mapping[str, int] | None = None, **options: Any) -> str:
    """The lecture as text: `explain_steps(...).render()`. With no arguments, the textbook example.

    >>> text = explain(merges=3)
    >>> "1. u + g → ug   2. u + n → un   3. h + ug → hug" in text
    True
    """
    return explain_steps(word_counts, **options).render()


def _show(symbol: str) -> str:
    """A symbol for display: spaces, line breaks and other invisible characters made visible."""
    out = []
    for c in symbol:
        if c == " ":
            out.append("␣")
        elif c == "\n":
            out.append("↵")
        elif c == "\t":
            out.append("⇥")
        elif unicodedata.category(c)[0] in "CZ":
            out.append(f"\\u{ord(c):04x}" if ord(c) > 0xFF else f"\\x{ord(c):02x}")
        else:
            out.append(c)
    return "".join(out)


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _pair(pair: tuple[str, str]) -> str:
    return f"({_show(pair[0])}, {_show(pair[1])})"


def _wrap(items: Iterable[str], sep: str = "   ", indent: str = "    ") -> list[str]:
    """Items on lines of at most _WIDTH characters, never cutting an item."""
    lines: list[str] = []
    line = ""
    for item in items:
        if line and len(indent) + len(line) + len(sep) + len(item) > _WIDTH:
            lines.append(indent + line)
            line = item
        else:
            line = line + sep + item if line else item
    lines.append(indent + line)
    return lines
