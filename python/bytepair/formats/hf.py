"""HF `tokenizer.json` files holding a BPE model: read into a bytepair tokenizer with HF's ids, and written from
one so that HF `tokenizers` and `transformers` load it with bytepair's ids. The layout is parsed and written in the
core (`src/formats/hf.rs`, with serde); what is supported, and where HF and bytepair differ, is in the docstrings
of `Tokenizer.from_hf` and `Tokenizer.save_hf`.

>>> import bytepair, os, tempfile
>>> tok = bytepair.train(["low lower lowest"] * 5, vocab_size=259)
>>> path = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
>>> save(tok, path)
>>> load(path).encode("lowest lower") == tok.encode("lowest lower")
True
"""

from __future__ import annotations

import os

from .. import _core
from .._tokenizer import Tokenizer
from ..writing import write_whole

__all__ = ["dumps", "load", "save"]

PathLike = str | os.PathLike[str]


def load(tokenizer_json: PathLike) -> Tokenizer:
    """A tokenizer from a HF tokenizer.json (see `Tokenizer.from_hf`)."""
    return Tokenizer(_core.CoreTokenizer.from_hf(os.fspath(tokenizer_json)))


def dumps(tok: Tokenizer) -> str:
    """`tok` as the text of a HF tokenizer.json (see `Tokenizer.save_hf`)."""
    return tok.core.to_hf()


def save(tok: Tokenizer, path: PathLike) -> None:
    """Writes `tok` as a HF tokenizer.json (see `Tokenizer.save_hf`), whole or not at all."""
    write_whole(path, dumps(tok), "utf-8")
