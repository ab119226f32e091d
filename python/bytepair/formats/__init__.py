"""File formats: one module per format, each the only Python code that knows its layout, each with `load` and
(where bytepair writes it) `save`, returning or taking a finished `Tokenizer`. The layouts themselves are parsed
and written in the core (`src/formats/`).

- `native`: bytepair's own JSON file (`Tokenizer.save` / `Tokenizer.load`);
- `hf`: HF `tokenizer.json` (BPE models);
- `tiktoken`: tiktoken rank files (`*.tiktoken`);
- `gpt2`: GPT-2 / HF `vocab.json` + `merges.txt`;
- `folder`: the folder `bytepair train -o` writes (the formats above, side by side);
- `fasta`: FASTA / FASTQ nucleotide sequences (a corpus format);
- `ids`: token-id files (text, JSON lines, raw binary).

`load_tokenizer` loads any of them by what it is given: a folder, a file, or an encoding name.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._tokenizer import Tokenizer
from . import folder, hf, native, tiktoken

__all__ = ["load_tokenizer"]


def load_tokenizer(spec: str | os.PathLike[str], *, data: str | os.PathLike[str] | None = None) -> Tokenizer:
    """A tokenizer from:

    - a folder written by `bytepair train` (its `bytepair.json`), or any folder holding a HF `tokenizer.json`
      or GPT-2's `vocab.json` + `merges.txt`;
    - a file: bytepair's JSON, HF's `tokenizer.json` (byte-level BPE), or a tiktoken rank file named after its
      encoding (`cl100k_base.tiktoken`, ...);
    - an encoding name: gpt2, r50k_base, p50k_base, cl100k_base, o200k_base (files found in `data`,
      $BYTEPAIR_DATA or tiktoken's cache; never downloaded).
    """
    from ..encodings import ENCODINGS, get_encoding

    text = os.fspath(spec)
    if not text.strip():  # Path("") is the current folder
        raise ValueError("the tokenizer is empty: give a folder, a file, or a name such as gpt2")
    path = Path(text)
    if path.is_dir():
        return folder.load(path)
    if path.is_file():
        if path.suffix == ".tiktoken":
            stem = path.stem
            if stem not in ENCODINGS:
                raise ValueError(
                    f"{text!r}: a .tiktoken file does not say which pattern it was made with; load the "
                    f"{folder.OUR_FILE} or {folder.HF_FILE} written beside it, or name the file after its encoding "
                    f"({', '.join(n for n in ENCODINGS if n != 'gpt2')})"
                )
            _, pattern, specials = ENCODINGS[stem]
            return tiktoken.load(path, pattern=pattern, special_tokens=specials)
        with open(path, "rb") as f:
            head = f.read(4096)
        if head.lstrip()[:1] != b"{":
            raise ValueError(
                f"{text!r} is not a tokenizer file: expected bytepair's or HF's JSON, or a .tiktoken rank file"
            )
        if native.looks_native(head):
            return native.load(path)
        return hf.load(path)
    if text in ENCODINGS:
        return get_encoding(text, data)
    raise ValueError(f"unknown tokenizer {text!r}: not a file or folder, nor one of {', '.join(ENCODINGS)}")
