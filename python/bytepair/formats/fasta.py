"""FASTA and FASTQ files: nucleotide sequences, read record by record (plain or gzip). The reading and cleaning
run in the core (`src/formats/fasta.rs`); this module gives them their Python shape.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "tiny.fa")
>>> with open(path, "w") as f:
...     _ = f.write(">chr1 test\\nACGTac\\ngtNN\\n>chr2\\nTTGA\\n")
>>> [record.id for record in iter_fasta(path)]
['chr1', 'chr2']
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Literal, NamedTuple

from .. import _core

__all__ = [
    "AMBIGUOUS",
    "NUCLEOTIDES",
    "Ambiguous",
    "FastaRecord",
    "check_options",
    "iter_fasta",
    "looks_like_a_path",
    "looks_like_fasta",
    "read_fasta",
]

PathLike = str | os.PathLike[str]
Ambiguous = Literal["keep", "split", "drop"]
AMBIGUOUS = ("keep", "split", "drop")

#: Nucleotide codes (IUPAC), uppercase.
NUCLEOTIDES = "ACGTUNRYKMSWBDHV"


class FastaRecord(NamedTuple):
    """One FASTA/FASTQ record (or a piece of one): `name` is its header line without `>`/`@` — with
    `:start-end` (1-based, inclusive; with ambiguous="drop", in the bases kept) added when the piece is a window
    or a stretch of the record — and `sequence` its bases."""

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


def check_options(uppercase: object, ambiguous: object, chunk_length: object) -> None:
    """Raises TypeError / ValueError unless the reading options are valid (see `iter_fasta`)."""
    if not isinstance(uppercase, bool):
        raise TypeError(f"uppercase must be True or False, not {uppercase!r}")
    if ambiguous not in AMBIGUOUS:
        raise ValueError(
            f'ambiguous={ambiguous!r} is not supported: use "keep" (N and other IUPAC codes stay in '
            f'the sequence), "split" (cut the sequence at them) or "drop" (remove them)'
        )
    if chunk_length is not None and (
        isinstance(chunk_length, bool) or not isinstance(chunk_length, int) or chunk_length < 1
    ):
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
    check_options(uppercase, ambiguous, chunk_length)
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


def looks_like_a_path(text: str) -> bool:
    """A str that is not a file but reads as a path ("genome.fa", "data/x.fq.gz"): a '/', or an extension
    with a letter no sequence has ("ACGT.GT" is a sequence with a gap), and no line break.

    >>> looks_like_a_path("genome.fa"), looks_like_a_path("ACGT.GT")
    (True, False)
    """
    if "\n" in text or len(text) >= 4096:
        return False
    extension = re.search(r"\.([A-Za-z0-9]{1,5})$", text)
    return "/" in text or "\\" in text or bool(extension and set(extension.group(1).upper()) - set(NUCLEOTIDES))


# A sequence line: nucleotide codes (either case), gaps ("-", "."), a stop ("*"); at least 8 of them.
_SEQUENCE_LINE = re.compile(rf"[{NUCLEOTIDES}{NUCLEOTIDES.lower()}\-.*]{{8,}}")


def looks_like_fasta(head: str) -> Literal["FASTA", "FASTQ"] | None:
    """Whether the start of a text is a FASTA file (a `>` header, then sequence lines) or FASTQ (`@` header,
    sequence, `+`), by its first lines: encoding such a file as text makes its headers and line breaks tokens.

    >>> looks_like_fasta(">chr1 E. coli\\nACGTACGTTTGA\\n"), looks_like_fasta("@r1\\nACGTNACGTA\\n+\\nIIIIIIIIII\\n")
    ('FASTA', 'FASTQ')
    >>> looks_like_fasta("> a quoted reply in an e-mail\\nThanks for the note.\\n") is None
    True
    """
    lines = [line.strip() for line in head.splitlines()[:8]]
    lines = [line for line in lines if line]
    if len(lines) >= 2 and lines[0].startswith(">") and _SEQUENCE_LINE.fullmatch(lines[1]):
        return "FASTA"
    if len(lines) >= 3 and lines[0].startswith("@") and _SEQUENCE_LINE.fullmatch(lines[1]) and lines[2][:1] == "+":
        return "FASTQ"
    return None
