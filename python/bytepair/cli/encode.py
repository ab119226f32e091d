"""`bytepair encode`, `decode` and `count`: documents to token ids and back, streamed in constant memory."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Iterator
from typing import BinaryIO

from .. import corpus
from .._tokenizer import Tokenizer
from ..corpus import Piece
from ..dna import is_dna_tokenizer
from ..formats.fasta import iter_fasta, looks_like_fasta
from ..progress import Progress
from ..streams import choose_dtype, decode_stream, encode_stream
from .common import (
    CommandError,
    input_documents,
    input_paths,
    load,
    megabytes,
    output,
    plural,
    positive,
    progress_on,
    unescape,
)
from .scale import encode_shards


def cmd_encode(args: argparse.Namespace) -> int:
    positive(args.threads, "--threads")
    if args.output_dir is not None:
        return encode_shards(args)
    sharding = {
        "--engine": args.engine,
        "--workers": args.workers,
        "--ray-address": args.ray_address,
        "--shard-size": args.shard_size,
        "--val-fraction": args.val_fraction,
        "--overwrite": args.overwrite,
        "--verify": args.verify,
        "--format megatron": args.format == "megatron",
    }
    given = [option for option, value in sharding.items() if value]
    if given:
        raise CommandError(f"{', '.join(given)}: for sharded output; add --output-dir DIR")
    args.format = args.format or "text"
    if args.dtype and args.format != "bin":
        raise CommandError("--dtype is for --format bin")
    paths = input_paths(args.files)  # a missing file is reported before the tokenizer is loaded
    check_fasta_options(args, paths)
    tok = load(args.tokenizer, args.data)
    if not args.fasta:
        warn_about_dna(paths, tok)
    dtype = choose_dtype(tok, args.dtype) if args.format == "bin" else None
    separator = chosen_separator(args, tok)
    progress = Progress("encoding", progress_on(args))
    with output(args.output, binary_ok=args.format != "bin") as out:
        summary = encode_stream(
            tok,
            fasta_documents(args, paths, progress) if args.fasta else input_documents(args, tok, progress),
            out,
            format=args.format,
            dtype=dtype,
            separator=separator,
            special=args.special,
            threads=args.threads,
            progress=progress,
        )
    progress.finish()
    if args.output:
        kind = f" as {summary.dtype}" if summary.dtype else ""
        print(
            f"encoded {plural(summary.documents, 'document')}, {megabytes(summary.bytes)} -> {summary.tokens:,} tokens "
            f"({summary.bytes_per_token:.2f} bytes/token){kind} in {summary.seconds:.1f} s -> {args.output}"
            + (f"; {separator} after each document" if separator else ""),
            file=sys.stderr,
        )
    return 0


def check_fasta_options(args: argparse.Namespace, paths: list[str]) -> None:
    """--fasta's companions need it, and it reads files (records are parsed from a path, not standard input)."""
    dna_only = {
        "--keep-case": args.keep_case,
        "--ambiguous": args.ambiguous != "keep",
        "--chunk-length": args.chunk_length is not None,
    }
    given = [name for name, used in dna_only.items() if used]
    if given and not args.fasta:
        raise CommandError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for --fasta input")
    if args.fasta:
        positive(args.chunk_length, "--chunk-length")
        if "-" in paths:
            raise CommandError("--fasta reads FASTA/FASTQ files (plain or .gz), not standard input")
        if args.jsonl_field is not None or args.documents != "file":
            raise CommandError("--fasta makes each record a document: leave out --jsonl-field and --documents")


def fasta_documents(args: argparse.Namespace, paths: list[str], progress: Progress) -> Iterator[Piece]:
    """Each FASTA/FASTQ record (or window) of the files as one document, read as train --fasta reads them."""
    bases = 0
    for path in paths:
        for record in iter_fasta(
            path, uppercase=not args.keep_case, ambiguous=args.ambiguous, chunk_length=args.chunk_length
        ):
            yield Piece(record.sequence, True, f"{path} ({record.name})")
            bases += len(record.sequence)
            progress.update(bases)


def warn_about_dna(paths: list[str], tok: Tokenizer) -> None:
    """Warns when FASTA/FASTQ files are about to be encoded as text (headers and line breaks become tokens, or
    [UNK] with a DNA tokenizer, as do soft-masked lowercase bases): --fasta reads their records."""
    for path in paths:
        if path == "-":
            continue
        kind = fasta_kind(path)
        if kind is not None:
            warnings.warn(
                f"{path} looks like {kind}: encoded as text, its headers and line breaks become tokens"
                + (
                    " ([UNK] for this DNA tokenizer), and so do lowercase (soft-masked) bases"
                    if is_dna_tokenizer(tok)
                    else ""
                )
                + "; pass --fasta to encode each record's sequence (uppercased), as train --fasta reads them",
                RuntimeWarning,
                stacklevel=2,
            )
            return


def fasta_kind(path: str) -> str | None:
    """ "FASTA" or "FASTQ" when a file (plain or gzip) starts like one, else None."""
    try:
        stream, counter = corpus.open_text(path, "replace")
    except (OSError, ValueError):
        return None  # reading it will say what is wrong
    try:
        return looks_like_fasta(stream.read(4096))
    except (OSError, EOFError, ValueError):
        return None
    finally:
        stream.close()
        counter.close()


def chosen_separator(args: argparse.Namespace, tok: Tokenizer) -> str | None:
    """--separator of encode and decode: for --format bin <|endoftext|> by default when the tokenizer has it;
    "none" for none."""
    separator: str | None = args.separator
    if separator is None and args.format == "bin" and "<|endoftext|>" in tok.special_tokens:
        separator = "<|endoftext|>"
    if separator is not None and separator.lower() == "none":
        separator = None
    return separator


def cmd_decode(args: argparse.Namespace) -> int:
    if args.dtype and args.format != "bin":
        raise CommandError("--dtype is for --format bin")
    if args.separator is not None and args.format != "bin":
        raise CommandError("--separator is for --format bin (text and JSON lines end documents at line breaks)")
    if args.file != "-" and os.path.isdir(args.file):
        raise CommandError(f"{args.file} is a folder: give a file of ids, or - for standard input")
    if args.file != "-" and not os.path.isfile(args.file):
        raise FileNotFoundError(f"no such file: {args.file!r}")
    tok = load(args.tokenizer, args.data)
    dtype = choose_dtype(tok, args.dtype) if args.format == "bin" else None
    join = None if args.join is None else unescape(args.join)
    with contextlib.ExitStack() as stack:
        stream: BinaryIO = sys.stdin.buffer if args.file == "-" else stack.enter_context(open(args.file, "rb"))
        out = stack.enter_context(output(args.output))
        decode_stream(
            tok, stream, out, format=args.format, dtype=dtype, join=join, separator=chosen_separator(args, tok)
        )
    return 0


def cmd_count(args: argparse.Namespace) -> int:
    positive(args.threads, "--threads")
    paths = input_paths(args.files)
    tok = load(args.tokenizer, args.data)
    rows = []
    for path in paths:
        one = argparse.Namespace(**{**vars(args), "files": [path]})
        progress = Progress(f"counting {path}", progress_on(args))
        summary = encode_stream(
            tok,
            input_documents(one, tok, progress),
            None,
            special=args.special,
            threads=args.threads,
            progress=progress,
        )
        progress.finish()
        rows.append((summary, "standard input" if path == "-" else path))
    if len(rows) == 1:
        print(rows[0][0].tokens)
        return 0
    for summary, name in rows:
        print(f"{summary.tokens}\t{name}")
    print(f"{sum(s.tokens for s, _ in rows)}\ttotal")
    return 0
