"""What is in a tokenizer: sizes, special tokens, the longest tokens, the first and last merges with their
training counts, and a readable dump of the vocabulary (`bytepair inspect` prints these).

Tokens are shown as the text they stand for, quoted, with invisible characters escaped (`"\\n"`, `"\\t"`,
`"\\x00"`, `"\\u200b"`) and bytes that are not a whole UTF-8 character as `\\xNN`:

>>> import bytepair
>>> tok = bytepair.train(["low lower lowest\\n"] * 5, vocab_size=262)
>>> show_token(tok, tok.token_to_id("Ġlow"))
'" low"'
>>> show_token(tok, tok.token_to_id("Ċ"))
'"\\\\n"'
>>> describe(tok).merges
6
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from ._tokenizer import Tokenizer, TokenizerSettings
from .reference import merge_strings

__all__ = ["Description", "describe", "escape", "show_token", "vocabulary_lines"]

_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", '"': '\\"'}


def escape(data: bytes | str) -> str:
    """Text with control, format and other invisible characters escaped (spaces stay); for bytes, sequences
    that are not valid UTF-8 become `\\xNN`.

    >>> escape("a\\tb\\u200b")
    'a\\\\tb\\\\u200b'
    >>> escape(b"caf\\xc3")
    'caf\\\\xc3'
    """
    if isinstance(data, bytes):
        text = data.decode("utf-8", errors="surrogateescape")
    else:
        text = data
    out = []
    for c in text:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif 0xDC80 <= ord(c) <= 0xDCFF and isinstance(data, bytes):  # a byte that is not UTF-8
            out.append(f"\\x{ord(c) - 0xDC00:02x}")
        elif c != " " and unicodedata.category(c)[0] in "CZ":
            out.append(
                f"\\x{ord(c):02x}" if ord(c) <= 0xFF else f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"
            )
        else:
            out.append(c)
    return "".join(out)


def show_token(tok: Tokenizer, id: int) -> str:
    """One token for people: special tokens as they are; byte-level tokens as the text of their bytes,
    char-level tokens with their `##`/suffix markers — quoted and escaped."""
    display = tok.id_to_token(id)
    if display is None:
        if 0 <= id < tok.vocab_size:  # a gap in the ids (cl100k has no 100256..100276 but its specials)
            return "(unused id)"
        raise ValueError(f"id {id} is not in the vocabulary")
    if display in _specials(tok):
        return display
    if tok.settings["mode"] == "byte":
        return f'"{escape(tok.token_bytes(id))}"'
    return f'"{escape(display)}"'


@dataclass
class Description:
    """A summary of a tokenizer (see `describe`); `render()` gives the text `bytepair inspect` prints."""

    summary: str
    vocab_size: int
    unused_ids: int
    settings: TokenizerSettings
    special_tokens: list[tuple[int, str]]
    base_tokens: int
    merges: int
    length_histogram: dict[int, int]  # token length in bytes → number of tokens (special tokens left out)
    longest: list[tuple[int, str, int]] = field(default_factory=list)  # (id, shown, bytes)
    first_merges: list[tuple[int, str, str, str, int | None]] = field(default_factory=list)  # (rank, a, b, new, count)
    last_merges: list[tuple[int, str, str, str, int | None]] = field(default_factory=list)

    def render(self) -> str:
        s = self.settings
        lines = [self.summary, ""]
        lines.append(
            f"vocabulary    {self.vocab_size} ids: {len(self.special_tokens)} special, {self.base_tokens} "
            f"base symbols, {self.merges} merges" + (f", {self.unused_ids} unused ids" if self.unused_ids else "")
        )
        lines.append(
            f"mode          {s['mode']}"
            + ("  (symbols are UTF-8 bytes)" if s["mode"] == "byte" else "  (symbols are characters)")
        )
        pattern = s["pattern"]
        lines.append(f"pattern       {pattern if pattern is not None else 'none (each text is one word)'}")
        if s.get("unmatched"):
            lines.append(f"unmatched     {s['unmatched']} (text the regex does not match)")
        split = s.get("split")
        if split:
            lines.append(f"split         HF Split, {split['behavior']}, invert={split['invert']}")
        extras = [
            f"{k}={s[k]!r}"
            for k in ("lowercase", "continuing_subword_prefix", "end_of_word_suffix", "unk_token", "tie_break")
            if s.get(k)
        ]
        if extras:
            lines.append("options       " + ", ".join(extras))
        if self.special_tokens:
            lines.append("special       " + "  ".join(f"{t} ({i})" for i, t in self.special_tokens))
        if self.length_histogram:
            buckets: dict[str, int] = {}
            for n, c in sorted(self.length_histogram.items()):
                low = n if n <= 16 else 1 << (n - 1).bit_length() - 1
                key = str(n) if n <= 16 else f"{low + 1}-{2 * low}"
                buckets[key] = buckets.get(key, 0) + c
            lines.append(
                "token bytes   "
                + "  ".join(f"{k}:{c}" for k, c in buckets.items())
                + "   (length in bytes: number of tokens)"
            )
        if self.longest:
            lines.append("")
            lines.append("Longest tokens (bytes, id, token):")
            lines += [f"  {n:>4}  {i:>7}  {shown}" for i, shown, n in self.longest]
        for title, rows in (("First merges", self.first_merges), ("Last merges", self.last_merges)):
            if not rows:
                continue
            lines.append("")
            counted = any(count is not None for *_, count in rows)
            lines.append(f"{title} (rank: left + right → new token" + (", training count" if counted else "") + "):")
            for rank, a, b, new, count in rows:
                lines.append(f"  {rank:>7}: {a} + {b} → {new}" + (f"   {count}" if count is not None else ""))
        if self.first_merges and not any(count is not None for *_, count in self.first_merges):
            lines.append("  (no training counts: this vocabulary was not trained by bytepair)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


def describe(tok: Tokenizer, *, longest: int = 10, merges: int = 10) -> Description:
    """Sizes, settings, special tokens, the `longest` longest tokens and the first and last `merges` merges
    (with their training counts when known) of a tokenizer."""
    strings = [tok.id_to_token(i) or "" for i in range(tok.vocab_size)]
    specials = [(tok.token_to_id(t) or 0, t) for t in _specials(tok)]
    special_ids = {i for i, _ in specials}
    lengths = {i: len(tok.token_bytes(i)) for i, s in enumerate(strings) if s and i not in special_ids}
    by_length = sorted(lengths, key=lambda i: (-lengths[i], i))[:longest]
    trace = tok.trace
    merge_list = tok.merges
    counts: list[int | None] = [n for _, n in trace] if trace is not None else [None] * len(merge_list)
    prefix = tok.settings["continuing_subword_prefix"]

    def merge_row(rank: int) -> tuple[int, str, str, str, int | None]:
        a, b = merge_list[rank]
        new = tok.token_to_id(merge_strings(a, b, prefix if isinstance(prefix, str) else None))
        ids = (tok.token_to_id(a), tok.token_to_id(b))
        shown = [show_token(tok, i) if i is not None else repr(s) for i, s in zip(ids, (a, b))]
        return rank, shown[0], shown[1], show_token(tok, new) if new is not None else "?", counts[rank]

    first = [merge_row(r) for r in range(min(merges, len(merge_list)))]
    last = [merge_row(r) for r in range(max(len(first), len(merge_list) - merges), len(merge_list))]
    _, num_base = tok._core.layout()
    return Description(
        summary=repr(tok),
        vocab_size=tok.vocab_size,
        unused_ids=sum(1 for s in strings if s == ""),
        settings=tok.settings,
        special_tokens=specials,
        base_tokens=num_base,
        merges=len(merge_list),
        length_histogram=dict(Counter(lengths.values())),
        longest=[(i, show_token(tok, i), lengths[i]) for i in by_length],
        first_merges=first,
        last_merges=last,
    )


def _specials(tok: Tokenizer) -> list[str]:
    """The special tokens, and unk_token (also outside the text's alphabet)."""
    unk = tok.settings["unk_token"]
    return tok.special_tokens + ([unk] if isinstance(unk, str) and unk not in tok.special_tokens else [])


def vocabulary_lines(tok: Tokenizer) -> Iterator[str]:
    """One line per id: `id<TAB>token` (token as `show_token` shows it), special tokens marked.

    >>> import bytepair
    >>> tok = bytepair.train(["ab ab"], vocab_size=258, special_tokens=["<s>"])
    >>> list(vocabulary_lines(tok))[:2]
    ['0\\t<s>\\t(special)', '1\\t"!"']
    """
    specials = set(_specials(tok))
    for i in range(tok.vocab_size):
        display = tok.id_to_token(i)
        shown = show_token(tok, i)
        yield f"{i}\t{shown}" + ("\t(special)" if display in specials else "")
