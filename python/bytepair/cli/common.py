"""What the commands share: the error for a badly called command, reading inputs, writing outputs."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from .. import corpus
from .._tokenizer import Tokenizer
from ..corpus import Piece
from ..formats import compressed, load_tokenizer
from ..progress import Progress
from ..writing import open_whole


class CommandError(Exception):
    """A mistake in how the command was called: one line, exit status 2."""


def positive(value: int | None, name: str, minimum: int = 1) -> None:
    if value is not None and value < minimum:
        raise CommandError(f"{name} must be at least {minimum}, got {value}")


def progress_on(args: argparse.Namespace) -> bool:
    if args.progress is not None:
        return bool(args.progress)
    return sys.stderr.isatty()


def load(spec: str, data: str | None) -> Tokenizer:
    return load_tokenizer(spec, data=data)


def input_paths(paths: Sequence[str]) -> list[str]:
    """Files named on the command line: globs expanded (for shells that do not), folders into the files under
    them, each checked to exist; URLs; `-` is standard input, at most once."""
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
        elif compressed.is_url(p) or os.path.isdir(p):  # a folder's files, a URL's
            out += [f.path for f in corpus.expand_inputs([p])]
        else:
            out += corpus.expand_path(p)
    if out.count("-") > 1:
        raise CommandError("standard input (-) can be read only once")
    return out


@contextlib.contextmanager
def output(path: str | None, binary_ok: bool = True) -> Iterator[BinaryIO]:
    """Standard output, or a file written whole or not at all (see `bytepair.writing.open_whole`)."""
    if path is None or path == "-":
        if not binary_ok and sys.stdout.isatty():
            raise CommandError("binary output to a terminal: write it to a file with -o FILE")
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    with open_whole(path) as f:
        yield f


def input_documents(args: argparse.Namespace, tok: Tokenizer | None, progress: Progress | None) -> Iterator[Piece]:
    if args.jsonl_field is not None and getattr(args, "documents", "file") != "file":
        raise CommandError("--jsonl-field makes each record a document: leave out --documents")
    return corpus.documents(
        input_paths(args.files),
        split=getattr(args, "documents", "file"),
        jsonl_field=args.jsonl_field,
        cut=tok is None or corpus.can_stream(tok),
        errors=args.errors,
        progress=progress,
        tokenizer=tok,
        special=getattr(args, "special", "error"),
    )


def unescape(text: str) -> bytes:
    r"""--join's text with \n, \t, \r and \\ understood (and any other character kept as it is)."""
    out = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in "ntr\\":
            out.append({"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}[text[i + 1]])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out).encode("utf-8")


def plural(n: int, word: str) -> str:
    """`n` and `word`, in the plural unless `n` is 1: "1 document", "2 documents", "1,000 files".

    >>> plural(1, "document"), plural(0, "document"), plural(2500, "file")
    ('1 document', '0 documents', '2,500 files')
    """
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n:,} bytes"


def labelled(spec: str) -> tuple[str, str]:
    """-t LABEL=TOKENIZER or -t TOKENIZER (labelled by itself) → (label, tokenizer)."""
    name, _, rest = spec.partition("=")
    if rest and "/" not in name and not os.path.exists(spec):
        if not name.strip():
            raise CommandError(f"-t {spec}: the label before '=' is empty; write -t LABEL={rest} or -t {rest}")
        return name, rest
    return spec.rstrip("/"), spec


def output_folder(value: str) -> Path:
    """train's -o: a folder (made if missing), never a file, nor an empty name (which would be the current one)."""
    if not value.strip():
        raise CommandError("-o is empty: give the folder to write the tokenizer files into (e.g. -o tok/)")
    out = Path(value)
    if out.exists() and not out.is_dir():
        raise CommandError(f"-o {value!r} is a file; give a folder to write the tokenizer files into")
    return out


def png_path(path: str) -> str:
    """The file a chart goes to: `path`, with ".png" added when it has no such ending (as matplotlib would add
    it), and not a folder."""
    png = path if path.lower().endswith(".png") else path + ".png"
    if os.path.isdir(png):
        raise CommandError(f"--png {path}: {png} is a folder; give a file name such as chart.png")
    return png
