"""bytepair: Byte-Pair Encoding tokenizers — train, encode, decode — with a Rust core.

>>> import bytepair
>>> tok = bytepair.train(["the cat sat on the mat"] * 10, vocab_size=262)
>>> tok.tokenize("the cat")
['the', 'Ġcat']
>>> tok.decode(tok.encode("the cat"))
'the cat'

`bytepair.reference` is the same algorithm in plain Python, line by line as it is taught.

Where things are (each module's docstring says more):

- `Tokenizer` (`_tokenizer.py`): encoding, decoding, the vocabulary;
- `training`: `train`, `train_from_counts`, their settings (sizes, SuperBPE, merge control, extending);
- `encodings`: tiktoken's named encodings (`get_encoding`);
- `formats`: one module per file format (bytepair's JSON, HF tokenizer.json, tiktoken, GPT-2, FASTA, id files);
- `corpus`: what a corpus can be, and reading text files as documents; `streams`: encoding them to id files;
- `pipeline`: the same at scale — `encode_corpus` (sharded, resumable), `count_corpus` / `train_corpus`
  (words counted by workers), on local processes or Ray;
- `dna`: DNA tokenizers; `reference`: the textbook algorithm; `cli`: the command line;
- `describe`, `viewer`, `compare`, `explain`, `viz`: inspecting, showing and comparing tokenizations.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time each name is imported on first use (below)
    from ._checks import NAMED_PATTERNS
    from ._tokenizer import Tokenizer
    from .corpus import Corpus, PathLike
    from .dna import DnaStats, FastaRecord, dna_stats, iter_fasta, read_fasta, reverse_complement, train_dna
    from .encodings import ENCODINGS, get_encoding
    from .formats import load_tokenizer
    from .formats.counts import CountedWords
    from .pipeline import EncodeResult, count_corpus, encode_corpus, train_corpus
    from .training import (
        FORBID_ACROSS_CLASSES,
        MODES,
        SUPERWORDS_PATTERN,
        TIE_BREAKS,
        TrainSettings,
        Veto,
        train,
        train_from_counts,
    )

    __version__: str

# Each public name, and the module it lives in. `import bytepair` imports none of them: a process that only
# encodes never loads the pipeline, the readers or the trainer (import 0.17 -> 0.0x s, 33 -> 1x MB; a local
# engine's workers and every CLI command start that much sooner).
_HOMES: dict[str, str] = {
    "NAMED_PATTERNS": "._checks",
    "Tokenizer": "._tokenizer",
    "Corpus": ".corpus",
    "PathLike": ".corpus",
    "DnaStats": ".dna",
    "FastaRecord": ".dna",
    "dna_stats": ".dna",
    "iter_fasta": ".dna",
    "read_fasta": ".dna",
    "reverse_complement": ".dna",
    "train_dna": ".dna",
    "ENCODINGS": ".encodings",
    "get_encoding": ".encodings",
    "load_tokenizer": ".formats",
    "CountedWords": ".formats.counts",
    "EncodeResult": ".pipeline",
    "count_corpus": ".pipeline",
    "encode_corpus": ".pipeline",
    "train_corpus": ".pipeline",
    "FORBID_ACROSS_CLASSES": ".training",
    "MODES": ".training",
    "SUPERWORDS_PATTERN": ".training",
    "TIE_BREAKS": ".training",
    "TrainSettings": ".training",
    "Veto": ".training",
    "train": ".training",
    "train_from_counts": ".training",
}

# The package's modules, reachable as attributes after `import bytepair` alone (`bytepair.corpus.documents`).
_SUBMODULES = frozenset(
    {
        "arrow", "cli", "compare", "compat", "corpus", "demo", "describe", "dna", "encodings", "explain", "files",
        "formats", "pipeline", "progress", "reference", "streams", "training", "viewer", "viz", "writing",
    }
)  # fmt: skip


def __getattr__(name: str) -> Any:
    """Imports a public name (or a submodule, or `__version__`) on first use and keeps it in the package.

    >>> import bytepair
    >>> bytepair.Tokenizer.__name__
    'Tokenizer'
    """
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name], __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    elif name == "__version__":
        from importlib.metadata import PackageNotFoundError, version  # 50 ms: only when asked

        try:
            value = version("bytepair")
        except PackageNotFoundError:  # pragma: no cover (run from a source tree that was never installed)
            value = "0+unknown"
    else:
        raise AttributeError(f"module 'bytepair' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_SUBMODULES})


__all__ = [
    "ENCODINGS",
    "FORBID_ACROSS_CLASSES",
    "MODES",
    "NAMED_PATTERNS",
    "SUPERWORDS_PATTERN",
    "TIE_BREAKS",
    "Corpus",
    "CountedWords",
    "DnaStats",
    "EncodeResult",
    "FastaRecord",
    "PathLike",
    "Tokenizer",
    "TrainSettings",
    "Veto",
    "__version__",
    "count_corpus",
    "dna_stats",
    "encode_corpus",
    "get_encoding",
    "iter_fasta",
    "load_tokenizer",
    "read_fasta",
    "reverse_complement",
    "train",
    "train_corpus",
    "train_dna",
    "train_from_counts",
]
