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
- `memory`: `release_memory`, the core's freed memory back to the OS;
- `describe`, `viewer`, `compare`, `explain`, `viz`: inspecting, showing and comparing tokenizations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time a name is imported on first use (`_lazy`)
    from ._checks import NAMED_PATTERNS
    from ._tokenizer import Tokenizer
    from .corpus import Corpus, PathLike
    from .dna import DnaStats, FastaRecord, dna_stats, iter_fasta, read_fasta, reverse_complement, train_dna
    from .encodings import ENCODINGS, get_encoding
    from .formats import load_tokenizer
    from .formats.counts import CountedWords
    from .memory import release_memory
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
    "release_memory",
    "reverse_complement",
    "train",
    "train_corpus",
    "train_dna",
    "train_from_counts",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "._checks": "NAMED_PATTERNS",
        "._tokenizer": "Tokenizer",
        ".corpus": "Corpus PathLike",
        ".dna": "DnaStats FastaRecord dna_stats iter_fasta read_fasta reverse_complement train_dna",
        ".encodings": "ENCODINGS get_encoding",
        ".formats": "load_tokenizer",
        ".formats.counts": "CountedWords",
        ".memory": "release_memory",
        ".pipeline": "EncodeResult count_corpus encode_corpus train_corpus",
        ".training": "FORBID_ACROSS_CLASSES MODES SUPERWORDS_PATTERN TIE_BREAKS TrainSettings Veto train "
        "train_from_counts",
    },
    "arrow cli compare compat corpus demo describe dna encodings explain files formats memory pipeline progress "
    "reference streams training viewer viz writing",
    __all__,
)
