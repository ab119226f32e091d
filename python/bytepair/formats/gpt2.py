"""GPT-2's `encoder.json` + `vocab.bpe`, or HF's `vocab.json` + `merges.txt` (byte-level BPE): token → id in
JSON, and one merge per line ("Ġ t") after an optional `#version` line. Parsed by the core
(`src/formats/gpt2.rs`). Merges apply in the file's order, as HF tokenizers does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Literal

from .. import _core
from .._checks import check_pattern, check_unmatched
from .._tokenizer import Tokenizer

__all__ = ["load"]

PathLike = str | os.PathLike[str]


def load(
    vocab_json: PathLike,
    merges_txt: PathLike,
    *,
    special_tokens: Iterable[str] | None = None,
    pattern: str | None = "gpt2",
    unmatched: Literal["keep", "drop", "error"] | None = None,
) -> Tokenizer:
    """A tokenizer from a vocabulary and a merges file (see `Tokenizer.from_gpt2`)."""
    v, m = os.fspath(vocab_json), os.fspath(merges_txt)
    for f in (v, m):
        if not os.path.isfile(f):
            raise FileNotFoundError(f"no such file: {f!r}")
    if special_tokens is None:
        with open(v, "rb") as fh:  # bytes: the core reports a file that is not UTF-8, naming it
            special_tokens = ["<|endoftext|>"] if b'"<|endoftext|>"' in fh.read() else []
    if isinstance(special_tokens, str):
        raise TypeError(f"special_tokens must be a list of strings; write [{special_tokens!r}]")
    check_pattern(pattern)
    rule = check_unmatched(unmatched, pattern) or "keep"
    return Tokenizer(_core.CoreTokenizer.from_gpt2(v, m, list(special_tokens), pattern, rule))
