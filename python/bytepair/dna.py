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
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Union

from . import _core

__all__ = ["FastaRecord", "DnaStats", "iter_fasta", "read_fasta", "reverse_complement", "train_dna", "dna_stats"]

PathLike = Union[str, "os.PathLike[str]"]
Ambiguous = Literal["keep", "split", "drop"]
AMBIGUOUS = ("keep", "split", "drop")

# Sequences given as str are handed to the core in batches of about this many bases.
_BATCH_BASES = 8 << 20

_COMPLEMENT = str.maketrans("ACGTUNRYKMBVDHSWacgtunrykmbvdhsw", "TGCAANYRMKVBHDSWtgcaanyrmkvbhdsw")
_NUCLEOTIDES = "ACGTUNRYKMSWBDHV"
_COMPLEMENT_RNA = str.maketrans("ACGTUNRYKMBVDHSWacgtunrykmbvdhsw", "UGCAANYRMKVBHDSWugcaanyrmkvbhdsw")


class FastaRecord(NamedTuple):
    """One FASTA/FASTQ record (or a piece of one): `name` is its header line without `>`/`@` — with
    `:start-end` (1-based, inclusive; with ambiguous="drop", in the bases kept) added when the piece is a window or a stretch of the record — and
    `sequence` its bases."""

    name: str
    sequence: str

    @property
    def id(self) -> str:
        """The name up to the first whitespace (FASTA's sequence identifier).

        >>> FastaRecord("NC_000913.3 Escherichia coli", "ACGT").id
        'NC_000913.3'
        """
        return self.name.split(maxsplit=1)[0] if self.name.strip() else ""

    def __len__(self) -> int:
        """Number of bases (not the tuple's 2 fields: a record is measured by its sequence)."""
        return len(self.sequence)


def _check_options(uppercase: object, ambiguous: object, chunk_length: object) -> None:
    if not isinstance(uppercase, bool):
        raise TypeError(f"uppercase must be True or False, not {uppercase!r}")
    if ambiguous not in AMBIGUOUS:
        raise ValueError(f"ambiguous={ambiguous!r} is not supported: use \"keep\" (N and other IUPAC codes stay in "
                         f"the sequence), \"split\" (cut the sequence at them) or \"drop\" (remove them)")
    if chunk_length is not None and (isinstance(chunk_length, bool) or not isinstance(chunk_length, int)
                                     or chunk_length < 1):
        raise ValueError(f"chunk_length must be None (whole sequences) or an int >= 1, got {chunk_length!r}")


def _fasta_path(path: object) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    p = os.fspath(path)
    if not os.path.exists(p):
        raise FileNotFoundError(f"no such FASTA/FASTQ file: {p!r}")
    if os.path.isdir(p):
        raise IsADirectoryError(f"{p!r} is a directory: pass the FASTA/FASTQ files in it")
    return p


def iter_fasta(
    path: PathLike,
    *,
    uppercase: bool = True,
    ambiguous: Ambiguous = "keep",
    chunk_length: int | None = None,
) -> Iterator[FastaRecord]:
    """Yields the records of a FASTA or FASTQ file (plain or gzip) one at a time: memory holds one record.

    uppercase: fold lowercase (soft-masked repeats) to uppercase.
    ambiguous: characters other than A/C/G/T/U — N and the other IUPAC codes, gaps: "keep" them, "split" the
        sequence at each run of them (one record per stretch), or "drop" them.
    chunk_length: cut each sequence into windows of this many bases (the last may be shorter).

    Pieces that are not a whole record are named `name:start-end` (1-based, inclusive; with ambiguous="drop",
    positions count the bases kept, as the pieces are cut after dropping). FASTQ quality lines
    are skipped. A file that is not FASTA/FASTQ, or a sequence with characters that are not nucleotide codes,
    raises ValueError naming the file and line.
    """
    _check_options(uppercase, ambiguous, chunk_length)
    for name, sequence in _core.FastaRecords(_fasta_path(path), uppercase, ambiguous, chunk_length):
        yield FastaRecord(name, sequence)


def read_fasta(
    path: PathLike,
    *,
    uppercase: bool = True,
    ambiguous: Ambiguous = "keep",
    chunk_length: int | None = None,
) -> list[FastaRecord]:
    """All records of a FASTA or FASTQ file (plain or gzip) as a list of `FastaRecord(name, sequence)`.

    Multi-record files, wrapped lines, Windows line endings, blank lines and FASTQ are read; headers are kept as
    record names. The whole file is held as Python strings (~1 byte per base); to train on a genome pass its
    path to `train_dna` instead (it never builds Python strings), or use `iter_fasta` for one record at a time.
    Options as in `iter_fasta`.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.fa")
    >>> with open(path, "w") as f:
    ...     _ = f.write(">chr1 test\\nACGTac\\ngtNN\\n>chr2\\nTTGA\\n")
    >>> read_fasta(path)
    [FastaRecord(name='chr1 test', sequence='ACGTACGTNN'), FastaRecord(name='chr2', sequence='TTGA')]
    >>> [r.name for r in read_fasta(path, ambiguous="split", chunk_length=4)]
    ['chr1 test:1-4', 'chr1 test:5-8', 'chr2']
    """
    return list(iter_fasta(path, uppercase=uppercase, ambiguous=ambiguous, chunk_length=chunk_length))


def _looks_like_a_path(text: str) -> bool:
    """A str that is not a file but reads as a path ("genome.fa", "data/x.fq.gz"): a '/', or an extension
    with a letter no sequence has ("ACGT.GT" is a sequence with a gap), and no line break."""
    if "\n" in text or len(text) >= 4096:
        return False
    extension = re.search(r"\.([A-Za-z0-9]{1,5})$", text)
    return "/" in text or "\\" in text or bool(extension and set(extension.group(1).upper()) - set(_NUCLEOTIDES))


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
    fasta_or_sequences: PathLike | Iterable[Union[str, FastaRecord, "os.PathLike[str]"]],
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
):
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
    from . import _new_counts, _show_progress, _train, _expand_path

    _check_options(uppercase, ambiguous, chunk_length)
    if not isinstance(reverse_complement, bool):
        raise TypeError(f"reverse_complement must be True or False, not {reverse_complement!r}")
    if not isinstance(alphabet, str) or not alphabet:
        raise ValueError(f"alphabet must be a non-empty str of base symbols such as \"ACGTN\", got {alphabet!r}")
    symbols = list(dict.fromkeys(alphabet))
    if uppercase and any(c.islower() for c in symbols):
        raise ValueError(f"alphabet={alphabet!r} has lowercase letters, but uppercase=True folds every base to "
                         f"uppercase: use an uppercase alphabet, or uppercase=False")
    counts = _new_counts(None, special_tokens, False, threads)
    show = _show_progress(progress)
    # An RNA alphabet (U, no T): the other strand pairs A with U, so that it is spelt in the same alphabet.
    rna = "U" in alphabet.upper() and "T" not in alphabet.upper()
    options = (uppercase, ambiguous, chunk_length, reverse_complement, rna)
    read = [0, 0, 0]  # records, pieces, bases

    def add(result: tuple[int, int, int]) -> None:
        for i, n in enumerate(result):
            read[i] += n

    if isinstance(fasta_or_sequences, (str, os.PathLike)):
        p = os.fspath(fasta_or_sequences)
        if isinstance(fasta_or_sequences, str) and not os.path.exists(p) and not any(ch in p for ch in "*?[") \
                and len(p) > 0 and set(p.upper()) <= set("ACGTUNRYKMSWBDHV-.*"):
            raise FileNotFoundError(f"no such FASTA/FASTQ file: {p[:40]!r}. To train on a sequence, pass it in a "
                                    f"list: train_dna([sequence], ...)")
        files = _expand_path(fasta_or_sequences, hint_text=False)
        if show:
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
            raise TypeError(f"fasta_or_sequences must be a FASTA path or an iterable of sequences, not "
                            f"{type(fasta_or_sequences).__name__}") from None
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
                for f in _expand_path(item, hint_text=False):
                    add(counts.add_fasta(f, *options))
                index = i + 1
                continue
            if not isinstance(item, str):
                raise TypeError(f"sequence {i} is a {type(item).__name__}, not a str (sequence), FastaRecord or "
                                f"Path (FASTA file)")
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
        hint = " (every base was ambiguous and ambiguous=\"split\"/\"drop\" removed them)" if read[0] else ""
        raise ValueError(f"no sequence to train on: {read[0]} records, 0 bases{hint}")
    try:
        return _train(counts, vocab_size, "char", symbols, min_frequency, None, None, unk_token, max_token_length,
                      tie_break, show, len(symbols))
    except ValueError as e:
        if "limit_alphabet" in str(e):
            raise ValueError(f"the sequences hold letters outside alphabet={alphabet!r} and unk_token is None: pass "
                             f"unk_token=\"[UNK]\", add them to the alphabet, or use ambiguous=\"split\"/\"drop\" "
                             f"for N and IUPAC codes") from None
        raise


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


def dna_stats(tokenizer, sequences: str | Iterable[str | FastaRecord] | PathLike, *, uppercase: bool = True,
              threads: int | None = None) -> DnaStats:
    """Measures how `tokenizer` cuts `sequences` (a sequence, an iterable of sequences or FastaRecords, or a
    FASTA/FASTQ path — read record by record): bases per token, the mean k-mer length of the vocabulary, and
    token-length histograms (of the encoding and of the vocabulary). `bytepair.viz.token_length_histogram`
    draws them.

    >>> tok = train_dna(["ACGTACGTTTACGTAC" * 4], vocab_size=10)
    >>> s = dna_stats(tok, ["ACGTACGT", "acgt"])
    >>> s.bases, s.tokens, s.bases_per_token
    (12, 2, 6.0)
    """
    import numpy as np

    strings = tokenizer._strings
    specials = set(tokenizer.special_tokens) | ({tokenizer.settings["unk_token"]} - {None})
    lengths = np.array([0 if s in specials or not s else len(tokenizer.token_bytes(i))
                        for i, s in enumerate(strings)], dtype=np.int64)
    unk_id = tokenizer.token_to_id(tokenizer.settings["unk_token"]) if tokenizer.settings["unk_token"] else None
    vocab_lengths: dict[int, int] = {}
    for n in lengths[lengths > 0].tolist():
        vocab_lengths[n] = vocab_lengths.get(n, 0) + 1
    kmers = lengths[lengths > 0]
    hist = np.zeros(int(lengths.max(initial=0)) + 2, dtype=np.int64)
    count = bases = tokens = unknown = 0

    if isinstance(sequences, os.PathLike) or (isinstance(sequences, str) and os.path.isfile(sequences)):
        source: Iterable = iter_fasta(sequences, uppercase=uppercase)
    elif isinstance(sequences, str):
        if _looks_like_a_path(sequences):  # a path with a typo, not a sequence to measure
            raise FileNotFoundError(f"no such FASTA/FASTQ file: {sequences!r}. To measure a sequence, pass it as "
                                    f"it is (letters only) or in a list")
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
