"""Argument checks shared by the API modules: each raises TypeError or ValueError saying what was wrong and what to
pass instead. (A private module with public names: the seam between the modules that check the same arguments.)

>>> check_threads(2)
>>> thread_request(None), thread_request(10**9)
(0, 65536)
>>> check_ids([1, 2, 3])
[1, 2, 3]
"""

from __future__ import annotations

import difflib
import operator
from collections.abc import Iterable
from typing import cast

#: Pattern names the core knows (the tiktoken encodings' names are aliases of their patterns).
NAMED_PATTERNS = ("gpt2", "cl100k", "o200k", "whitespace", "r50k_base", "p50k_base", "cl100k_base", "o200k_base")


def check_str(text: object, name: str) -> None:
    """Raises TypeError unless `text` is a str."""
    if not isinstance(text, str):
        raise TypeError(
            f"{name} must be a str, not {type(text).__name__}"
            + ("; decode bytes first" if isinstance(text, (bytes, bytearray)) else "")
        )


def check_texts(texts: Iterable[object]) -> list[str]:
    """`texts` as a list, checked to hold only str; TypeError naming the first that is not. An Arrow-backed column
    (a HF `datasets` column, a pyarrow array) is read a batch at a time (see `bytepair.arrow`), not row by row."""
    from .arrow import texts as arrow_texts

    from_arrow = arrow_texts(texts)
    if from_arrow is not None:
        return from_arrow
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is a {type(text).__name__}, not a str")
    return cast("list[str]", items)  # every item was checked


def check_threads(threads: object) -> None:
    """Raises ValueError unless `threads` is None (every core) or an int >= 1."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be None (all cores) or an int >= 1, got {threads!r}")


def thread_request(threads: int | None) -> int:
    """`threads` as the core takes it: 0 for the default; the core gives no more threads than cores, and this
    keeps a number of any size within what it can take."""
    return 0 if threads is None else min(threads, 1 << 16)


def check_pattern(pattern: object) -> None:
    """A pattern is a name, None or a regex; a plain word that is not a name is a misspelt name (taken as a regex,
    "gtp2" would match nothing, and every text would encode to [])."""
    if pattern is not None and not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str or None, not {type(pattern).__name__}")
    if isinstance(pattern, str) and pattern.strip() == "":
        raise ValueError(f"pattern={pattern!r} is empty: use one of {', '.join(NAMED_PATTERNS[:4])}, None, or a regex")
    if isinstance(pattern, str) and pattern.isidentifier() and pattern not in NAMED_PATTERNS:
        raise ValueError(
            f"unknown pattern {pattern!r}: use one of {', '.join(map(repr, NAMED_PATTERNS[:4]))}, "
            f"None (no split), or a regex (a plain word like {pattern!r} is taken for a misspelt name)"
        )


#: What a regex pattern may do with the text it does not match.
UNMATCHED = ("keep", "drop", "error")


def check_unmatched(unmatched: object, pattern: str | None) -> str | None:
    """`unmatched` for `pattern`, its default filled in: "keep" for a regex; None for a named pattern or None,
    which decide for themselves (gpt2, cl100k and o200k match all text; whitespace drops whitespace).

    >>> check_unmatched(None, r"[a-z]+"), check_unmatched("drop", r"[a-z]+"), check_unmatched(None, "gpt2")
    ('keep', 'drop', None)
    >>> check_unmatched("drop", "gpt2")
    Traceback (most recent call last):
    ValueError: unmatched='drop' applies to a regex pattern; pattern='gpt2' decides for itself what it leaves out
    """
    if unmatched is not None and unmatched not in UNMATCHED:
        raise ValueError(
            f'unmatched={unmatched!r} is not a choice: use "keep" (text the pattern does not match becomes pieces '
            f'of its own), "drop" (it is left out, as tiktoken does) or "error" (it raises ValueError)'
        )
    regex = pattern is not None and pattern not in NAMED_PATTERNS
    if not regex:
        if unmatched is not None:
            raise ValueError(
                f"unmatched={unmatched!r} applies to a regex pattern; pattern={pattern!r} decides for itself what "
                f"it leaves out"
            )
        return None
    return unmatched if isinstance(unmatched, str) else "keep"


def check_special_tokens(special_tokens: object) -> list[str]:
    """Special tokens as a list: non-empty str, each once."""
    if isinstance(special_tokens, str):
        raise TypeError(f"special_tokens must be a list of strings, not a single string; write [{special_tokens!r}]")
    if not isinstance(special_tokens, Iterable):
        raise TypeError(f"special_tokens must be a list of strings, not {type(special_tokens).__name__}")
    specials = list(special_tokens)
    for s in specials:
        if not isinstance(s, str):
            raise TypeError(f"special tokens must be str, got {type(s).__name__} ({s!r})")
        if s == "":
            raise ValueError("a special token cannot be the empty string")
    duplicates = sorted({s for s in specials if specials.count(s) > 1})
    if duplicates:
        raise ValueError(f"special_tokens lists {duplicates!r} more than once: list each special token once")
    return specials


def as_id(value: object) -> int:
    """`value` as a token id (an int, or a numpy integer); TypeError for anything else, bool included."""
    if isinstance(value, bool):
        raise TypeError("an id must be an int, not bool")
    try:
        return operator.index(value)  # type: ignore[arg-type]  # TypeError below for what has no index
    except TypeError:
        raise TypeError(f"an id must be an int, not {type(value).__name__}") from None


def check_ids(ids: Iterable[object]) -> list[int]:
    """Token ids as a list of ints from 0 to 2**32 - 1, or TypeError / ValueError naming the first bad one."""
    if isinstance(ids, (bytes, bytearray, memoryview, str)):  # iterable, but not ids (b"ab" would be [97, 98])
        raise TypeError(
            f"ids must be a list of token ids (ints), not {type(ids).__name__}; to read a binary id "
            f"file, use numpy.frombuffer(data, dtype='<u2' or '<u4')"
        )
    out = []
    for position, item in enumerate(ids):
        try:
            if isinstance(item, bool):
                raise TypeError
            i = operator.index(item)  # type: ignore[arg-type]  # int, numpy integers; TypeError otherwise
        except TypeError:
            raise TypeError(f"ids must be ints; item {position} is {type(item).__name__} ({item!r})") from None
        if i < 0 or i >= 1 << 32:
            raise ValueError(f"id {i} (at position {position}) is not in the vocabulary")
        out.append(i)
    return out


def nearest(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to a misspelt `word` (by `difflib`'s similarity, case ignored), or None if none is close.

    >>> nearest("cl100kbase", ["gpt2", "cl100k_base", "o200k_base"]), nearest("xyz", ["gpt2"])
    ('cl100k_base', None)
    """
    options = list(choices)
    by_lower = {c.lower(): c for c in options}
    found = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[found[0]] if found else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean X?)' for the choice nearest to `word`, or '' when none is near: the end of an error message.

    >>> "unknown command 'trian'" + did_you_mean("trian", ["train", "encode"])
    "unknown command 'trian' (did you mean 'train'?)"
    """
    found = nearest(word, choices)
    return f" (did you mean {found!r}?)" if found else ""
