"""tiktoken rank files (`*.tiktoken`): one token per line, its bytes in base64, a space, its rank (= its id).
Special tokens and the pre-tokenization pattern are not in the file: the caller names them. Parsed and written
by the core (`src/formats/tiktoken.rs`).

>>> import bytepair, os, tempfile
>>> tok = bytepair.train(["low lower lowest"] * 5, vocab_size=259)
>>> path = os.path.join(tempfile.mkdtemp(), "tok.tiktoken")
>>> save(tok, path)
>>> load(path, pattern="gpt2").encode("lowest") == tok.encode("lowest")
True
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from .. import _core
from .._checks import check_pattern, check_unmatched
from .._tokenizer import Tokenizer
from ..writing import write_whole

if TYPE_CHECKING:
    import tiktoken

__all__ = ["dumps", "load", "save", "to_encoding"]

PathLike = str | os.PathLike[str]


def load(
    path: PathLike,
    *,
    pattern: str | None = "cl100k",
    special_tokens: Mapping[str, int] | None = None,
    unmatched: Literal["keep", "drop", "error"] | None = None,
) -> Tokenizer:
    """A tokenizer from a tiktoken rank file (see `Tokenizer.from_tiktoken`)."""
    check_pattern(pattern)
    rule = check_unmatched(unmatched, pattern) or "keep"
    specials = dict(special_tokens or {})
    for name, i in specials.items():
        if not isinstance(name, str) or not name or isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise TypeError(f"special_tokens must map non-empty str -> int >= 0, got {name!r}: {i!r}")
        if i >= 1 << 31:
            raise ValueError(f"special token {name!r} has id {i}: ids must be below 2**31")
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise FileNotFoundError(f"no such tiktoken file: {p!r}")
    return Tokenizer(_core.CoreTokenizer.from_tiktoken(p, pattern, list(specials.items()), rule))


def dumps(tok: Tokenizer) -> str:
    """`tok`'s rank file as text (see `Tokenizer.save_tiktoken`)."""
    return tok.core.to_tiktoken()


def save(tok: Tokenizer, path: PathLike) -> None:
    """Writes `tok`'s rank file (see `Tokenizer.save_tiktoken`), whole or not at all."""
    write_whole(path, dumps(tok), "ascii")


def to_encoding(tok: Tokenizer, name: str = "bytepair") -> tiktoken.Encoding:
    """A `tiktoken.Encoding` with `tok`'s pattern, ranks and special tokens (see `Tokenizer.to_tiktoken`)."""
    import tiktoken

    pattern = tok.core.tiktoken_pattern()
    ranks: dict[bytes, int] = dict(tok.core.tiktoken_ranks())
    specials: dict[str, Any] = {s: tok.token_to_id(s) for s in tok.special_tokens}
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
