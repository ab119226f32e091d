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

import itertools
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from .._tokenizer import Tokenizer
from . import folder, hf, native, tiktoken
from .compressed import COMPRESSION_TOOLS, compression

__all__ = ["describe_file", "load_tokenizer"]

# A line of a tiktoken rank file: a token's bytes in base64, a space, its rank.
_TIKTOKEN_LINE = re.compile(rb"^[A-Za-z0-9+/]+={0,2} \d+\r?$")


def load_tokenizer(
    spec: str | os.PathLike[str],
    *,
    data: str | os.PathLike[str] | None = None,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> Tokenizer:
    """A tokenizer from what a user has:

    - a folder written by `bytepair train -o` or `save_pretrained` (its `bytepair.json`), or any folder holding a
      HF `tokenizer.json` (as transformers writes it) or GPT-2's `vocab.json` + `merges.txt`;
    - a file: bytepair's JSON, HF's `tokenizer.json`, or a tiktoken rank file — named after its encoding
      (`cl100k_base.tiktoken`, ...) or with its `pattern` given (and its `special_tokens`, text -> id);
    - an encoding name: gpt2, r50k_base, p50k_base, cl100k_base, o200k_base, or r50k, p50k, cl100k, o200k (files
      found in `data`, $BYTEPAIR_DATA or tiktoken's cache; never downloaded).

    What cannot be loaded is a ValueError (FileNotFoundError for a folder without a tokenizer) saying what was
    found: a compressed file, a vocab.json without its merges.txt, a transformers config, plain text, ...
    """
    from .._checks import did_you_mean
    from ..encodings import ENCODINGS, SHORT_NAMES, get_encoding

    text = os.fspath(spec)
    if not text.strip():  # Path("") is the current folder
        raise ValueError("the tokenizer is empty: give a folder, a file, or a name such as gpt2")
    path = Path(text)
    if path.is_dir():
        return folder.load(path)
    if path.is_file():
        return _load_file(path, pattern, special_tokens)
    if text in ENCODINGS or text in SHORT_NAMES:
        return get_encoding(text, data)
    names = list(ENCODINGS) + list(SHORT_NAMES)
    if os.sep in text or (os.altsep and os.altsep in text) or "." in text:
        raise FileNotFoundError(f"no such file or folder: {text!r} (nor is it one of the names {', '.join(ENCODINGS)})")
    raise ValueError(
        f"unknown tokenizer {text!r}{did_you_mean(text, names)}: not a file or folder, nor one of the names "
        f"{', '.join(ENCODINGS)} (or {', '.join(SHORT_NAMES)} for short)"
    )


def _load_file(path: Path, pattern: str | None, special_tokens: Mapping[str, int] | None) -> Tokenizer:
    from ..encodings import ENCODINGS

    text = os.fspath(path)
    with open(path, "rb") as f:
        head = f.read(4096)
    is_tiktoken = path.suffix == ".tiktoken" or _looks_like_tiktoken(head)
    if is_tiktoken:
        if pattern is None and path.stem not in ENCODINGS:
            raise ValueError(
                f"{text!r} is a tiktoken rank file, which does not say which pattern it was made with: pass "
                f"pattern= (gpt2, cl100k, o200k or a regex) and special_tokens= (e.g. "
                f"Tokenizer.load(path, pattern='cl100k', special_tokens={{'<|endoftext|>': 100257}})), load the "
                f"{folder.OUR_FILE} or {folder.HF_FILE} written beside it, or name the file after its encoding "
                f"({', '.join(n for n in ENCODINGS if n != 'gpt2')})"
            )
        if pattern is None:
            _, pattern, named_specials = ENCODINGS[path.stem]
            special_tokens = named_specials if special_tokens is None else special_tokens
        return tiktoken.load(path, pattern=pattern, special_tokens=special_tokens)
    if pattern is not None or special_tokens is not None:
        raise ValueError(
            f"pattern= and special_tokens= are for tiktoken rank files; {text!r} is not one (its file says how it "
            f"splits text and which special tokens it has)"
        )
    if head.lstrip()[:1] != b"{":
        raise ValueError(f"{text!r} is not a tokenizer file: it is {describe_file(path, head)}")
    if native.looks_native(head) or re.match(rb'\s*\{\s*"format"\s*:', head):  # ours (or damaged)
        return native.load(path)
    try:
        return hf.load(path)
    except ValueError:
        if _is_hf_tokenizer_json(path):
            raise  # HF's file, with something bytepair cannot read: the message names it
        raise ValueError(f"{text!r} is not a tokenizer file: it is {describe_file(path, head)}") from None


def _is_hf_tokenizer_json(path: Path) -> bool:
    """Whether a JSON file has the "model" object of HF's tokenizer.json (read only when loading it failed)."""
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError, OSError):
        return False
    except RecursionError:  # nested deeper than Python's parser goes: the core's message says where
        return True
    return isinstance(value, dict) and isinstance(value.get("model"), dict)


def _looks_like_tiktoken(head: bytes) -> bool:
    """Whether a file's first bytes are a rank file's lines: base64 (whole groups of 4), a space, and ranks that
    count up (not, say, a list of words with counts)."""
    lines = head.split(b"\n")[:-1] if len(head) == 4096 else head.split(b"\n")
    lines = [line for line in lines if line.strip()][:50]
    if not lines or not all(_TIKTOKEN_LINE.match(line) for line in lines):
        return False
    tokens, ranks = zip(*(line.split() for line in lines))
    numbers = [int(r) for r in ranks]
    return all(len(t) % 4 == 0 for t in tokens) and all(a < b for a, b in itertools.pairwise(numbers))


def describe_file(path: str | os.PathLike[str], head: bytes | None = None) -> str:
    """What a file that is not a tokenizer looks like, for an error message: "a gzip-compressed file", "GPT-2's
    vocab.json (its merges.txt must go with it)", "a text file starting 'The quick…'", ...

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "notes.txt")
    >>> _ = open(path, "w").write("Hello there\\n")
    >>> describe_file(path)
    "a text file starting 'Hello there'"
    """
    if head is None:
        with open(path, "rb") as f:
            head = f.read(4096)
    kind = compression(head)
    if kind is not None:
        return f"a {kind}-compressed file (`{COMPRESSION_TOOLS[kind]} FILE` decompresses it)"
    name = Path(path).name
    if head.lstrip()[:1] in (b"{", b"["):
        try:
            with open(path, encoding="utf-8") as f:
                value = json.load(f)
        except (UnicodeDecodeError, json.JSONDecodeError, OSError):
            return "JSON that does not parse (cut short?)"
        except RecursionError:  # no tokenizer file nests deeply; Python's parser recurses per level
            return "JSON nested deeper than any tokenizer file"
        if isinstance(value, dict):
            keys = list(value)
            if keys and all(isinstance(v, int) for v in list(value.values())[:100]):
                return (
                    f"a token -> id table ({name}, as in GPT-2's vocab.json), which needs its merges: load the folder "
                    f"that holds it with merges.txt, or Tokenizer.from_gpt2(vocab.json, merges.txt)"
                )
            if "tokenizer_class" in value or "added_tokens_decoder" in value:
                return "a transformers tokenizer_config.json: load the folder that holds it (with its tokenizer.json)"
            if all(k.endswith(("_token", "_tokens")) for k in keys):
                return "a transformers special_tokens_map.json: load the folder that holds it (with tokenizer.json)"
            return f"JSON with the keys {keys[:6]}, neither bytepair's tokenizer file nor HF's tokenizer.json"
        return f"a JSON {type(value).__name__}, neither bytepair's tokenizer file nor HF's tokenizer.json"
    first = head.split(b"\n", 1)[0]
    if first.startswith(b"#version") or (name.startswith("merges") and first.count(b" ") == 1):
        return "a merges.txt, which needs its vocab.json: load the folder that holds both"
    try:
        line = head.decode("utf-8").splitlines()[0] if head.strip() else ""
    except UnicodeDecodeError:
        return "a binary file (not UTF-8 text)"
    if not head.strip():
        return "empty" if not head else "blank"
    return f"a text file starting {line[:40] + ('…' if len(line) > 40 else '')!r}"
