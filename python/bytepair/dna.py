"""BPE for DNA: read FASTA/FASTQ, train k-mer vocabularies (DNABERT-2 style), measure them.

The base vocabulary is the nucleotides (A, C, G, T, N by default, plus special tokens and `[UNK]` for any
other letter); there is no pre-tokenization — a sequence (a chromosome, or a window of `chunk_length` bases)
is one word — and merges become frequent k-mers.

>>> import bytepair
>>> tok = bytepair.train_dna(["ACGTACGTTTACGTAC", "acgtNNNNacgtac"], vocab_size=12)
>>> tok.tokenize("ACGTACGT")
['ACGTACGT']
>>> bytepair.reverse_complement("AACGTN")
'NACGTT'

Parsing, cleaning and counting run in Rust: training from a FASTA path never builds Python strings of the
genome, so memory stays a few bytes per base.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from .corpus import expand_path
from .formats.fasta import (
    NUCLEOTIDES,
    Ambiguous,
    FastaRecord,
    check_options,
    iter_fasta,
    looks_like_a_path,
    read_fasta,
)
from .training import TrainSettings, new_counts, train_counts

if TYPE_CHECKING:
    from ._tokenizer import Tokenizer

__all__ = [
    "DnaStats",
    "FastaRecord",
    "dna_stats",
    "is_dna_tokenizer",
    "iter_fasta",
    "read_fasta",
    "reverse_complement",
    "train_dna",
]

PathLike = str | os.PathLike[str]

# Sequences given as str are handed to the core in batches of about this many bases.
_BATCH_BASES = 8 << 20

_COMPLEMENT = str.maketrans("ACGTUNRYKMBVDHSWacgtunrykmbvdhsw", "TGCAANYRMKVBHDSWtgcaanyrmkvbhdsw")
_COMPLEMENT_RNA = str.maketrans("ACGTUNRYKMBVDHSWacgtunrykmbvdhsw", "UGCAANYRMKVBHDSWugcaanyrmkvbhdsw")


def reverse_complement(sequence: str, rna: bool = False) -> str:
    """The reverse complement of a nucleotide sequence: A↔T (A↔U with rna=True), C↔G, U→A, IUPAC codes
    complemented (R↔Y, K↔M, B↔V, D↔H; N, S, W unchanged), case kept, anything else (gaps) left as it is.

    >>> reverse_complement("AACGTRn")
    'nYACGTT'
    >>> reverse_complement("AACGU", rna=True)
    'ACGUU'
    """
    if not isinstance(sequence, str):
        raise TypeError(f"sequence must be a str, not {type(sequence).__name__}")
    return sequence.translate(_COMPLEMENT_RNA if rna else _COMPLEMENT)[::-1]


def train_dna(
    fasta_or_sequences: PathLike | Iterable[str | FastaRecord | os.PathLike[str]],
    vocab_size: int = 4096,
    *,
    alphabet: str = "ACGTN",
    special_tokens: Iterable[str] = (),
    unk_token: str | None = "[UNK]",
    uppercase: bool = True,
    ambiguous: Ambiguous = "split",
    chunk_length: int | None = None,
    reverse_complement: bool = False,
    tie_break: Literal["first_seen", "hf", "lexicographic"] = "first_seen",
    min_frequency: int = 0,
    max_token_length: int | None = None,
    threads: int | None = None,
    progress: bool | None = None,
) -> Tokenizer:
    """Trains a DNA tokenizer (the `dna` preset): character-level BPE without pre-tokenization on nucleotide
    sequences, whose merges are frequent k-mers.

    fasta_or_sequences: a FASTA/FASTQ path (plain or .gz; a glob such as "genomes/*.fa.gz" works), or an
        iterable of sequences (str), `FastaRecord`s and paths (Path objects). From a path, records are parsed,
        cleaned and counted in Rust, one at a time — no Python strings, a few bytes of memory per base.
    vocab_size: final vocabulary size, special tokens and alphabet included.
    alphabet: the base symbols (default A, C, G, T, N); any other letter becomes `unk_token`. For RNA use
        "ACGUN"; to keep every IUPAC code as a symbol, "ACGTNRYKMSWBDHV" (with ambiguous="keep").
    special_tokens: tokens that get the first ids (e.g. ["[CLS]", "[SEP]", "[MASK]", "[PAD]"]).
    unk_token: stands for letters outside `alphabet`, in training and encoding (None: such letters are an error).
    uppercase: fold lowercase (soft-masked) bases to uppercase before training. The tokenizer itself does not
        change case: encode uppercase sequences (`seq.upper()`).
    ambiguous: characters other than A/C/G/T/U (N-runs of assembly gaps, IUPAC codes): "split" (default: cut
        sequences at them, so no k-mer spans a gap), "drop" (remove them) or "keep" (train on them: N is in the
        default alphabet, other codes become unk_token unless in `alphabet`).
    chunk_length: cut sequences into windows of this many bases before training (e.g. 1000), as DNABERT-2
        does; None trains on whole sequences (a chromosome is one word — still linear time).
    reverse_complement: count both strands: each sequence (window) is followed by its reverse complement (A
        pairs with U when the alphabet is RNA's: it has U and no T), so pair counts do not depend on which strand
        the file holds (nor does the vocabulary with tie_break="hf" or "lexicographic"; "first_seen" breaks ties
        by order of appearance). Training input doubles.
    tie_break, min_frequency, max_token_length, threads, progress: as in `bytepair.train`.

    Encoding a sequence afterwards is linear in its length, even for a whole chromosome:
    `tok.encode_to_numpy(seq)`.

    >>> tok = train_dna(["ACGTACGTTTACGTAC" * 4], vocab_size=10, special_tokens=["[CLS]"])
    >>> tok.special_tokens, tok.merges[:2]
    (['[CLS]'], [('A', 'C'), ('AC', 'G')])
    >>> tok.decode(tok.encode("ACGTRACGT"))  # R is not in the alphabet
    'ACGT[UNK]ACGT'
    """
    check_options(uppercase, ambiguous, chunk_length)
    if not isinstance(reverse_complement, bool):
        raise TypeError(f"reverse_complement must be True or False, not {reverse_complement!r}")
    if not isinstance(alphabet, str) or not alphabet:
        raise ValueError(f'alphabet must be a non-empty str of base symbols such as "ACGTN", got {alphabet!r}')
    symbols = list(dict.fromkeys(alphabet))
    if uppercase and any(c.islower() for c in symbols):
        raise ValueError(
            f"alphabet={alphabet!r} has lowercase letters, but uppercase=True folds every base to "
            f"uppercase: use an uppercase alphabet, or uppercase=False"
        )
    settings = TrainSettings.from_arguments(
        vocab_size,
        mode="char",
        pattern=None,
        special_tokens=special_tokens,
        initial_alphabet=symbols,
        min_frequency=min_frequency,
        unk_token=unk_token,
        max_token_length=max_token_length,
        limit_alphabet=len(symbols),
        tie_break=tie_break,
        threads=threads,
        progress=progress,
    )
    counts = new_counts(settings)
    # An RNA alphabet (U, no T): the other strand pairs A with U, so that it is spelt in the same alphabet.
    rna = "U" in alphabet.upper() and "T" not in alphabet.upper()
    options = (uppercase, ambiguous, chunk_length, reverse_complement, rna)
    read = [0, 0, 0]  # records, pieces, bases

    def add(result: tuple[int, int, int]) -> None:
        for i, n in enumerate(result):
            read[i] += n

    if isinstance(fasta_or_sequences, (str, os.PathLike)):
        p = os.fspath(fasta_or_sequences)
        if (
            isinstance(fasta_or_sequences, str)
            and not os.path.exists(p)
            and not any(ch in p for ch in "*?[")
            and len(p) > 0
            and set(p.upper()) <= set("ACGTUNRYKMSWBDHV-.*")
        ):
            raise FileNotFoundError(
                f"no such FASTA/FASTQ file: {p[:40]!r}. To train on a sequence, pass it in a "
                f"list: train_dna([sequence], ...)"
            )
        files = expand_path(fasta_or_sequences)
        if settings.progress:
            counts.show_progress(None)
        try:
            for f in files:
                add(counts.add_fasta(f, *options))
        finally:
            counts.finish_progress()
    else:
        if isinstance(fasta_or_sequences, (bytes, bytearray)):
            raise TypeError("sequences must be str, not bytes; decode them first (e.g. data.decode('ascii'))")
        try:
            items = iter(fasta_or_sequences)
        except TypeError:
            raise TypeError(
                f"fasta_or_sequences must be a FASTA path or an iterable of sequences, not "
                f"{type(fasta_or_sequences).__name__}"
            ) from None
        batch: list[str] = []
        size = 0
        index = 0  # of the first sequence in `batch`
        for i, item in enumerate(items):
            if isinstance(item, FastaRecord):
                item = item.sequence
            if isinstance(item, os.PathLike):
                if batch:
                    add(counts.add_sequences(batch, index, *options))
                    batch, size = [], 0
                for f in expand_path(item):
                    add(counts.add_fasta(f, *options))
                index = i + 1
                continue
            if not isinstance(item, str):
                raise TypeError(
                    f"sequence {i} is a {type(item).__name__}, not a str (sequence), FastaRecord or Path (FASTA file)"
                )
            if not batch:
                index = i
            batch.append(item)
            size += len(item)
            if size >= _BATCH_BASES:
                add(counts.add_sequences(batch, index, *options))
                batch, size = [], 0
        if batch:
            add(counts.add_sequences(batch, index, *options))
    if read[2] == 0:
        hint = ' (every base was ambiguous and ambiguous="split"/"drop" removed them)' if read[0] else ""
        raise ValueError(f"no sequence to train on: {read[0]} records, 0 bases{hint}")
    try:
        return train_counts(counts, settings, stacklevel=2)
    except ValueError as e:
        if "limit_alphabet" in str(e):
            raise ValueError(
                f"the sequences hold letters outside alphabet={alphabet!r} and unk_token is None: pass "
                f'unk_token="[UNK]", add them to the alphabet, or use ambiguous="split"/"drop" '
                f"for N and IUPAC codes"
            ) from None
        raise


def is_dna_tokenizer(tokenizer: Tokenizer) -> bool:
    """Whether `tokenizer` is a nucleotide tokenizer, as `train_dna` makes: character-level, no pre-tokenization,
    every base symbol a nucleotide code (A, C, G, T, U, N, the IUPAC letters; either case).

    >>> is_dna_tokenizer(train_dna(["ACGTACGTTTACGTAC"] * 4, vocab_size=10))
    True
    >>> import bytepair
    >>> is_dna_tokenizer(bytepair.train(["ACGT ACGT"] * 4, vocab_size=258))
    False
    """
    settings = tokenizer.settings
    if settings["mode"] != "char" or settings["pattern"] is not None:
        return False
    specials, base = tokenizer.core.layout()
    names = set(tokenizer.special_tokens) | {settings["unk_token"]}
    found = (tokenizer.id_to_token(i) for i in range(specials, specials + base))
    symbols = [s for s in found if s is not None and s not in names]
    return bool(symbols) and all(len(s) == 1 and s.upper() in NUCLEOTIDES for s in symbols)


@dataclass
class DnaStats:
    """How a tokenizer cuts sequences (see `dna_stats`)."""

    #: Number of sequences and their total bases (unknown letters included).
    sequences: int
    bases: int
    #: Tokens the sequences encode to.
    tokens: int
    #: bases / tokens: the compression (DNABERT-2 reaches ~4-5 on human DNA at 4 096).
    bases_per_token: float
    #: Mean length in bases of the vocabulary's k-mers (non-special tokens), each counted once.
    mean_kmer_length: float
    #: Token length in bases → how many tokens of that length the encoding holds.
    token_lengths: dict[int, int] = field(default_factory=dict)
    #: Token length in bases → how many vocabulary entries have that length.
    vocab_lengths: dict[int, int] = field(default_factory=dict)
    #: Tokens that are the unknown token.
    unknown: int = 0

    def __str__(self) -> str:
        lines = [
            f"sequences        {self.sequences:,}",
            f"bases            {self.bases:,}",
            f"tokens           {self.tokens:,}" + (f" ({self.unknown:,} unknown)" if self.unknown else ""),
            f"bases per token  {self.bases_per_token:.3f}",
            f"mean k-mer length in the vocabulary  {self.mean_kmer_length:.2f}",
            "token length  tokens in the encoding  entries in the vocabulary",
        ]
        for n in sorted(set(self.token_lengths) | set(self.vocab_lengths)):
            lines.append(f"{n:>12}  {self.token_lengths.get(n, 0):>21,}  {self.vocab_lengths.get(n, 0):>25,}")
        return "\n".join(lines)


def dna_stats(
    tokenizer: Tokenizer,
    sequences: str | Iterable[str | FastaRecord] | PathLike,
    *,
    uppercase: bool = True,
    threads: int | None = None,
) -> DnaStats:
    """Measures how `tokenizer` cuts `sequences` (a sequence, an iterable of sequences or FastaRecords, or a
    FASTA/FASTQ path — read record by record): bases per token, the mean k-mer length of the vocabulary, and
    token-length histograms (of the encoding and of the vocabulary). `bytepair.viz.token_length_histogram`
    draws them.

    A tokenizer that is not a nucleotide tokenizer (`is_dna_tokenizer`: GPT-2's, say) is measured all the same,
    with a RuntimeWarning: its bases per token are rarely what was meant.

    >>> tok = train_dna(["ACGTACGTTTACGTAC" * 4], vocab_size=10)
    >>> s = dna_stats(tok, ["ACGTACGT", "acgt"])
    >>> s.bases, s.tokens, s.bases_per_token
    (12, 2, 6.0)
    """
    import numpy as np

    if not is_dna_tokenizer(tokenizer):
        settings = tokenizer.settings
        warnings.warn(
            f"this is not a DNA tokenizer ({settings['mode']}-level, pattern {settings['pattern']!r}, "
            f"{tokenizer.vocab_size:,} tokens): it is measured all the same, but its bases per token say little "
            f"about DNA. Train one on the sequences with bytepair.train_dna (bytepair train --fasta)",
            RuntimeWarning,
            stacklevel=2,
        )

    strings = [tokenizer.id_to_token(i) or "" for i in range(tokenizer.vocab_size)]
    unk_token = tokenizer.settings["unk_token"]
    specials = set(tokenizer.special_tokens) | ({unk_token} if unk_token else set())
    lengths = np.array(
        [0 if s in specials or not s else len(tokenizer.token_bytes(i)) for i, s in enumerate(strings)], dtype=np.int64
    )
    unk_id = tokenizer.token_to_id(unk_token) if unk_token else None
    vocab_lengths: dict[int, int] = {}
    for n in lengths[lengths > 0].tolist():
        vocab_lengths[n] = vocab_lengths.get(n, 0) + 1
    kmers = lengths[lengths > 0]
    hist = np.zeros(int(lengths.max(initial=0)) + 2, dtype=np.int64)
    count = bases = tokens = unknown = 0

    if isinstance(sequences, os.PathLike) or (isinstance(sequences, str) and os.path.isfile(sequences)):
        source: Iterable[str | FastaRecord] = iter_fasta(sequences, uppercase=uppercase)
    elif isinstance(sequences, str):
        if looks_like_a_path(sequences):  # a path with a typo, not a sequence to measure
            raise FileNotFoundError(
                f"no such FASTA/FASTQ file: {sequences!r}. To measure a sequence, pass it as "
                f"it is (letters only) or in a list"
            )
        source = [sequences]
    else:
        source = sequences
    for item in source:
        seq = item.sequence if isinstance(item, FastaRecord) else item
        if not isinstance(seq, str):
            raise TypeError(f"sequences must be str or FastaRecord, got {type(seq).__name__}")
        if uppercase:
            seq = seq.upper()
        ids = tokenizer.encode_to_numpy(seq, threads=threads)
        count += 1
        bases += len(seq)
        tokens += len(ids)
        token_len = lengths[ids]
        if unk_id is not None:
            unknown += int((ids == unk_id).sum())
            token_len = np.where(ids == unk_id, 1, token_len)
        hist += np.bincount(token_len, minlength=len(hist))[: len(hist)]
    token_lengths = {int(n): int(c) for n, c in enumerate(hist.tolist()) if c}
    return DnaStats(
        sequences=count,
        bases=bases,
        tokens=tokens,
        bases_per_token=bases / tokens if tokens else 0.0,
        mean_kmer_length=float(kmers.mean()) if len(kmers) else 0.0,
        token_lengths=token_lengths,
        vocab_lengths=vocab_lengths,
        unknown=unknown,
    )
