"""tiktoken's named encodings — gpt2, r50k_base, p50k_base, cl100k_base, o200k_base — with their patterns and
special tokens, and where their files are found (never downloaded; checked against the SHA-256 tiktoken pins).

>>> sorted(ENCODINGS)
['cl100k_base', 'gpt2', 'o200k_base', 'p50k_base', 'r50k_base']
"""

from __future__ import annotations

import hashlib
import os
import tempfile

from ._checks import did_you_mean
from ._tokenizer import Tokenizer
from .formats import gpt2, tiktoken

__all__ = ["ENCODINGS", "SHORT_NAMES", "get_encoding", "resolve_encoding_name"]

PathLike = str | os.PathLike[str]

# Name → (file names, pattern, special tokens) of tiktoken's encodings.
ENCODINGS: dict[str, tuple[tuple[str, ...], str, dict[str, int]]] = {
    "gpt2": (("vocab.bpe", "encoder.json"), "gpt2", {"<|endoftext|>": 50256}),
    "r50k_base": (("r50k_base.tiktoken",), "gpt2", {"<|endoftext|>": 50256}),
    "p50k_base": (("p50k_base.tiktoken",), "gpt2", {"<|endoftext|>": 50256}),
    "cl100k_base": (
        ("cl100k_base.tiktoken",),
        "cl100k",
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": (("o200k_base.tiktoken",), "o200k", {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
}

#: Short names accepted for the encodings (the command line's `-t cl100k`), each standing for its full name.
SHORT_NAMES = {"r50k": "r50k_base", "p50k": "p50k_base", "cl100k": "cl100k_base", "o200k": "o200k_base"}


def resolve_encoding_name(name: str) -> str:
    """The encoding `name` stands for: itself, or the full name of a short one (`SHORT_NAMES`). ValueError for
    another name, listing the names and suggesting the nearest.

    >>> resolve_encoding_name("cl100k"), resolve_encoding_name("gpt2")
    ('cl100k_base', 'gpt2')
    >>> resolve_encoding_name("cl100kbase")
    Traceback (most recent call last):
    ValueError: unknown encoding 'cl100kbase' (did you mean 'cl100k_base'?): the encodings are gpt2, r50k_base, p50k_base, cl100k_base, o200k_base (or r50k, p50k, cl100k, o200k for short)
    """
    if not isinstance(name, str):
        raise TypeError(f"an encoding name is a str, not {type(name).__name__}")
    if name in ENCODINGS:
        return name
    if name in SHORT_NAMES:
        return SHORT_NAMES[name]
    raise ValueError(
        f"unknown encoding {name!r}{did_you_mean(name, list(ENCODINGS) + list(SHORT_NAMES))}: the encodings are "
        f"{', '.join(ENCODINGS)} (or {', '.join(SHORT_NAMES)} for short)"
    )


_TIKTOKEN_URLS = {
    "r50k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
    "p50k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken",
    "cl100k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "vocab.bpe": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
    "encoder.json": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
}


# The SHA-256 of OpenAI's files, as tiktoken pins them: get_encoding refuses a truncated, edited or mislabelled
# file, which would load as another vocabulary (60,000 lines of cl100k_base gave other ids, silently).
_SHA256 = {
    "r50k_base.tiktoken": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base.tiktoken": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base.tiktoken": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
}


def _check_encoding_file(name: str, found: str) -> None:
    """Raises ValueError unless `found` is OpenAI's `name` (its SHA-256; ~5 ms for o200k_base)."""
    with open(found, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != _SHA256[name]:
        raise ValueError(
            f"{found!r} is not OpenAI's {name} (SHA-256 {digest[:16]}…, expected {_SHA256[name][:16]}…): it is "
            f"truncated, edited or another file under that name, and would give other ids. Replace it with the "
            f"original, or load it on purpose with Tokenizer.from_tiktoken(path, pattern=..., special_tokens=...) "
            f"(Tokenizer.from_gpt2 for vocab.bpe / encoder.json)"
        )


def _find_encoding_file(name: str, path: PathLike | None) -> str:
    """A vocabulary file: in `path`, in $BYTEPAIR_DATA, or in tiktoken's cache (files named by the SHA-1 of
    their URL). Never downloads."""
    if path is not None and not os.path.isdir(path):  # a typo would otherwise fall through to other places
        raise FileNotFoundError(
            f"no such folder: {os.fspath(path)!r} (path= / --data names the folder that holds {name})"
        )
    places = [os.fspath(p) for p in (path, os.environ.get("BYTEPAIR_DATA")) if p]
    for place in places:
        for candidate in (
            os.path.join(place, name),
            os.path.join(place, "tiktoken", name),
            os.path.join(place, "gpt2", name),
        ):
            if os.path.isfile(candidate):
                return candidate
    cache_dirs = [
        os.environ.get("TIKTOKEN_CACHE_DIR"),
        os.environ.get("DATA_GYM_CACHE_DIR"),
        os.path.join(tempfile.gettempdir(), "data-gym-cache"),
    ]
    key = hashlib.sha1(_TIKTOKEN_URLS[name].encode()).hexdigest()
    for d in filter(None, cache_dirs):
        if os.path.isfile(os.path.join(d, key)):
            return os.path.join(d, key)
    looked = f"in {', '.join(map(repr, places))} and in" if places else "in"
    unset = "" if places else "; no path was given and $BYTEPAIR_DATA is not set"
    raise FileNotFoundError(
        f"{name} not found (looked {looked} tiktoken's cache{unset}). bytepair never downloads: pass the folder "
        f"that holds {name} (path=... in Python, or set BYTEPAIR_DATA=folder for the command line)"
    )


def get_encoding(name: str, path: PathLike | None = None) -> Tokenizer:
    """tiktoken's encodings by name — "gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base" (or "r50k",
    "p50k", "cl100k", "o200k") — with their exact patterns and special tokens; ids equal tiktoken's. The files are found in `path`,
    $BYTEPAIR_DATA, or tiktoken's cache directory (never downloaded), and checked against the SHA-256 that
    tiktoken pins for them (ValueError if they differ)."""
    name = resolve_encoding_name(name)
    files, pattern, specials = ENCODINGS[name]
    found = [_find_encoding_file(f, path) for f in files]
    for file, place in zip(files, found):
        _check_encoding_file(file, place)
    if name == "gpt2":
        return gpt2.load(found[1], found[0], special_tokens=list(specials), pattern=pattern)
    return tiktoken.load(found[0], pattern=pattern, special_tokens=specials)
