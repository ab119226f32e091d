"""bytepair's own tokenizer file: one human-readable JSON document (settings, special tokens, alphabet, then one
merge per line with its count). Its layout is described, parsed and written in the core
(`src/formats/native.rs`); `load(save(tok)) == tok` exactly.

>>> import bytepair, os, tempfile
>>> tok = bytepair.train(["low lower lowest"] * 5, vocab_size=259)
>>> path = os.path.join(tempfile.mkdtemp(), "bytepair.json")
>>> save(tok, path)
>>> load(path) == tok
True
"""

from __future__ import annotations

import os
import re

from .. import _core
from .._tokenizer import Tokenizer
from ..writing import write_whole

__all__ = ["dumps", "load", "loads", "looks_native", "save"]

PathLike = str | os.PathLike[str]


def dumps(tok: Tokenizer) -> str:
    """`tok` as the text of a bytepair tokenizer file."""
    return tok.core.to_native()


def loads(text: str, source: str = "<string>") -> Tokenizer:
    """A tokenizer from the text of a bytepair tokenizer file; errors name `source`."""
    return Tokenizer(_core.CoreTokenizer.from_native(text, source))


def save(tok: Tokenizer, path: PathLike) -> None:
    """Writes `tok` to `path`, whole or not at all."""
    write_whole(path, dumps(tok), "utf-8")


def load(path: PathLike) -> Tokenizer:
    """Reads a tokenizer file written by `save`."""
    p = os.fspath(path)
    try:
        with open(p, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"no such tokenizer file: {p!r}") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{p!r} is not a bytepair tokenizer file: not UTF-8 at byte {e.start}") from None
    return loads(text, p)


def looks_native(head: bytes) -> bool:
    """Whether the first bytes of a JSON file are those of a bytepair tokenizer file (its `"format"` key).

    >>> looks_native(b'{\\n  "format": "bytepair",'), looks_native(b'{"version": "1.0"')
    (True, False)
    """
    return re.search(rb'"format"\s*:\s*"bytepair"', head) is not None
