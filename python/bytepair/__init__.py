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
- `dna`: DNA tokenizers; `reference`: the textbook algorithm; `cli`: the command line;
- `describe`, `viewer`, `compare`, `explain`, `viz`: inspecting, showing and comparing tokenizations.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from ._checks import NAMED_PATTERNS
from ._tokenizer import Tokenizer
from .corpus import Corpus, PathLike
from .dna import DnaStats, FastaRecord, dna_stats, iter_fasta, read_fasta, reverse_complement, train_dna
from .encodings import ENCODINGS, get_encoding
from .formats import load_tokenizer
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

try:
    __version__ = version("bytepair")
except PackageNotFoundError:  # pragma: no cover (run from a source tree that was never installed)
    __version__ = "0+unknown"

__all__ = [
    "ENCODINGS",
    "FORBID_ACROSS_CLASSES",
    "MODES",
    "NAMED_PATTERNS",
    "SUPERWORDS_PATTERN",
    "TIE_BREAKS",
    "Corpus",
    "DnaStats",
    "FastaRecord",
    "PathLike",
    "Tokenizer",
    "TrainSettings",
    "Veto",
    "__version__",
    "dna_stats",
    "get_encoding",
    "iter_fasta",
    "load_tokenizer",
    "read_fasta",
    "reverse_complement",
    "train",
    "train_dna",
    "train_from_counts",
]
