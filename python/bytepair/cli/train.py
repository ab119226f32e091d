"""`bytepair train`: a tokenizer from text files (or FASTA files, the DNA preset), written into a folder in every
format it fits, with a summary of what it does to its training text."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from .. import corpus
from .._tokenizer import Tokenizer
from ..compat.transformers import Roles, choose_roles
from ..dna import dna_stats, iter_fasta, train_dna
from ..formats import compressed, folder
from ..progress import Progress
from ..streams import encode_stream
from ..training import train
from .common import CommandError, input_paths, load, megabytes, output_folder, plural, positive, progress_on
from .scale import train_at_scale

#: The summary's bytes per token is measured on the first SUMMARY_CHARS characters of the training text:
#: encoding all of it again doubled the time of training on a large corpus (2 GB: ~30 s of ~66).
#: `bytepair compare -t DIR FILES` measures all of it.
SUMMARY_CHARS = 64_000_000


class FirstPieces:
    """The pieces of `pieces` up to the one during which their text reaches `limit` characters; `cut` says
    afterwards whether any were left out. (Documents are read in pieces cut where encoding them apart gives the
    ids of the whole, so the ids of these pieces are those of this much of the text.)

    >>> from bytepair.corpus import Piece
    >>> first = FirstPieces([Piece("ab", False, "f"), Piece("c", True, "f"), Piece("d", True, "f")], 2)
    >>> [p.text for p in first], first.cut
    (['ab'], True)
    """

    def __init__(self, pieces: Iterable[corpus.Piece], limit: int) -> None:
        self.pieces, self.limit, self.cut = pieces, limit, False

    def __iter__(self) -> Iterator[corpus.Piece]:
        seen = 0
        try:
            for piece in self.pieces:
                if seen >= self.limit:
                    self.cut = True
                    return
                yield piece
                seen += len(piece.text)
        finally:
            close = getattr(self.pieces, "close", None)
            if close is not None:  # a generator: its files are closed now, not when it is collected
                close()


def vocab_sizes(value: str) -> int | list[int]:
    """--vocab-size: one size, or several separated by commas (a list, even of one: "8000,")."""
    parts = [part.strip() for part in value.split(",") if part.strip()]
    try:
        sizes = [int(part) for part in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid size {value!r}: give a number, or numbers separated by commas (8000,16000,32000)"
        ) from None
    if not sizes:
        raise argparse.ArgumentTypeError(f"invalid size {value!r}: give a number such as 8000")
    return sizes if "," in value else sizes[0]


def cmd_train(args: argparse.Namespace) -> int:
    sizes = args.vocab_size if isinstance(args.vocab_size, list) else [args.vocab_size]
    for size in sizes:
        if size < 1:
            raise CommandError(f"--vocab-size must be a positive number, got {size}")
    if len(set(sizes)) != len(sizes):
        raise CommandError(f"--vocab-size lists a size twice: {','.join(map(str, sizes))}")
    positive(args.min_frequency, "--min-frequency", 0)
    positive(args.threads, "--threads")
    positive(args.superwords_after, "--superwords-after")
    if args.veto is not None and args.veto_bytes is not None:
        raise CommandError("give --veto (a regex over the token's text) or --veto-bytes (over its bytes), not both")
    if args.fasta:
        if args.files:
            raise CommandError("give text FILEs or --fasta files, not both")
        if args.engine is not None or args.from_counts is not None:
            raise CommandError("--engine and --from-counts are for text FILEs, not --fasta")
        return train_fasta(args)
    dna_only = {
        "--alphabet": args.alphabet is not None,
        "--chunk-length": args.chunk_length is not None,
        "--ambiguous": args.ambiguous is not None,
        "--reverse-complement": args.reverse_complement,
        "--keep-case": args.keep_case,
    }
    given = [name for name, used in dna_only.items() if used]
    if given:
        raise CommandError(
            f"{', '.join(given)} {'is a DNA option' if len(given) == 1 else 'are DNA options'}, "
            f"for --fasta FILE (for text, --initial-alphabet adds characters)"
        )
    if args.engine is not None or args.from_counts is not None:
        in_one_process = {
            "--extend": args.extend is not None,
            "several --vocab-size": isinstance(args.vocab_size, list),
            "--superwords-after": args.superwords_after is not None,
            "--veto": args.veto is not None,
            "--veto-bytes": args.veto_bytes is not None,
            "--forbid-across": bool(args.forbid_across),
        }
        given = [name for name, used in in_one_process.items() if used]
        if given:
            raise CommandError(
                f"{', '.join(given)} cannot be used with --engine or --from-counts yet: they train in one process "
                f"on the text itself; leave out --engine / --from-counts"
            )
        return train_at_scale(args)
    for option, value in (("--workers", args.workers), ("--ray-address", args.ray_address)):
        if value is not None:
            raise CommandError(f"{option} is for training at scale: add --engine local (or ray)")
    if args.extend is not None:
        from_the_tokenizer = {
            "--mode": args.mode is not None,
            "--pattern": args.pattern is not None,
            "--special-token": bool(args.special_tokens),
            "--initial-alphabet": args.initial_alphabet is not None,
            "--lowercase": args.lowercase,
            "--continuing-subword-prefix": args.continuing_subword_prefix is not None,
            "--end-of-word-suffix": args.end_of_word_suffix is not None,
            "--unk-token": args.unk_token is not None,
            "--limit-alphabet": args.limit_alphabet is not None,
            "--superwords-after": args.superwords_after is not None,
        }
        given = [name for name, used in from_the_tokenizer.items() if used]
        if given:
            raise CommandError(
                f"{', '.join(given)} cannot be used with --extend: the tokenizer extended keeps its own pattern, "
                f"special tokens, normaliser and symbols"
            )
    args.mode, args.pattern = args.mode or "byte", args.pattern or "gpt2"
    args.initial_alphabet = args.initial_alphabet or "all"
    if not args.files:
        raise CommandError(
            "nothing to train on: give text FILEs (or - for standard input), --from-counts COUNTS, or --fasta FILE"
        )
    paths = input_paths(args.files)
    out = output_folder(args.output)
    pattern = None if args.pattern.lower() == "none" else args.pattern
    alphabet: str | list[str] = args.initial_alphabet
    if alphabet not in ("all", "corpus"):
        alphabet = list(dict.fromkeys(args.initial_alphabet))  # the characters, each once
    control = dict(
        min_frequency=args.min_frequency,
        max_token_length=args.max_token_length,
        forbid_across=args.forbid_across,
        veto=args.veto if args.veto_bytes is None else args.veto_bytes.encode("utf-8"),
        threads=args.threads,
        progress=progress_on(args),
    )
    options = dict(
        control,
        mode=args.mode,
        pattern=pattern,
        special_tokens=with_role_tokens(args),
        initial_alphabet=alphabet,
        lowercase=args.lowercase,
        continuing_subword_prefix=args.continuing_subword_prefix,
        end_of_word_suffix=args.end_of_word_suffix,
        unk_token=args.unk_token,
        limit_alphabet=args.limit_alphabet,
        tie_break=args.tie_break or "first_seen",
        superwords_after=args.superwords_after,
        unmatched=args.unmatched,
    )
    base = load(args.extend, args.data) if args.extend is not None else None
    with contextlib.ExitStack() as stack:
        if "-" in paths:  # standard input is kept in a temporary file: it is read again for the summary
            spool = stack.enter_context(tempfile.TemporaryDirectory(prefix="bytepair-"))
            kept = os.path.join(spool, "stdin.txt")
            with open(kept, "wb") as f:
                shutil.copyfileobj(sys.stdin.buffer, f, 1 << 20)
            paths = [kept if p == "-" else p for p in paths]
        size = sum(compressed.file_info(p).size for p in paths)
        start = time.perf_counter()
        source: corpus.Corpus = [Path(p) for p in paths]
        if args.jsonl_field is not None:
            source = (piece.text for piece in corpus.documents(paths, jsonl_field=args.jsonl_field, errors=args.errors))
        vocab_size = args.vocab_size
        if base is not None:
            trained = base.extend(source, vocab_size, tie_break=args.tie_break, errors=args.errors, **control)
        else:
            trained = train(source, vocab_size, errors=args.errors, **options)
        seconds = time.perf_counter() - start
        if isinstance(trained, list):
            print(f"Trained {len(trained)} sizes in one run in {seconds:.1f} s")
            for tok, wanted in zip(trained, sizes):
                report(tok, None, args, paths, size, out / str(wanted), label=f"{wanted}: ")
        else:
            report(trained, seconds, args, paths, size, out)
    return 0


def report(
    tok: Tokenizer,
    seconds: float | None,
    args: argparse.Namespace,
    paths: list[str],
    size: int,
    out: Path,
    label: str = "",
) -> None:
    """Writes `tok` into `out` and says what it is and what it does to its training text."""
    roles = chosen_roles(tok, args)
    written, notes = folder.save(tok, out, roles=roles)
    # Bytes per token on the training text (its first SUMMARY_CHARS), encoded as the tokenizer will encode it.
    progress = Progress("measuring bytes per token", progress_on(args))
    first = FirstPieces(
        corpus.documents(
            paths,
            jsonl_field=args.jsonl_field,
            cut=corpus.can_cut(tok),
            errors=args.errors,
            # (A bar over the files' sizes would stop part way when only the first pieces are read.)
            progress=progress if size <= SUMMARY_CHARS else None,
        ),
        SUMMARY_CHARS,
    )
    try:
        summary = encode_stream(
            tok,
            first,
            None,
            special="allow" if tok.special_tokens else "text",
            threads=args.threads,
            progress=progress,
        )
    except ValueError as e:
        # Training reads each line of a file as one text, encoding reads the file whole: whitespace across
        # lines ("\n\n") then makes pieces training never saw, which a character-level tokenizer with word
        # markers may have no symbol for. The tokenizer is written and usable; say what it cannot encode.
        summary, unencodable = None, str(e)
    progress.finish()
    counted = tok.trace
    print(f"{label}Trained in {seconds:.1f} s: {tok!r}" if seconds is not None else f"{label}{tok!r}")
    specials = len(tok.special_tokens) + (
        1 if tok.settings["unk_token"] and tok.settings["unk_token"] not in tok.special_tokens else 0
    )
    print(
        f"  vocabulary: {tok.vocab_size} tokens = {specials} special + {tok.core.layout()[1]} base + "
        f"{tok.vocab_size - specials - tok.core.layout()[1]} from {len(tok.merges)} merges"
        + (f" (last merge count {counted[-1][1]})" if counted else "")
    )
    in_files = f"in {plural(len(paths), 'file')}"
    records = args.jsonl_field is not None or any(corpus.input_kind(p) != "text" for p in paths)
    if summary is None:
        print(f"  training text: {megabytes(size)} {in_files} (on disk)")
    elif first.cut:
        print(
            f"  training text: {megabytes(size)} {in_files} (on disk); its first {megabytes(summary.bytes)}, "
            f"{plural(summary.documents, 'document')} -> {summary.tokens:,} tokens, "
            f"{summary.bytes_per_token:.2f} bytes per token"
        )
    else:  # the text's size (a .gz file's is its compressed size on disk)
        print(
            f"  training text: {megabytes(summary.bytes)} {in_files}, "
            f"{plural(summary.documents if records else len(paths), 'document')} -> {summary.tokens:,} tokens, "
            f"{summary.bytes_per_token:.2f} bytes per token"
        )
    print("  wrote " + ", ".join(str(p) for p in written))
    print_roles(roles, written)
    for note in notes:
        print(f"  {note}")
    if summary is None:
        print(
            f"bytepair train: warning: this tokenizer cannot encode its training files read whole: {unencodable}\n"
            f"  (training reads each line of a file as one text, so pieces that span lines, such as a blank "
            f"line's \"\\n\\n\", were never seen; add --unk-token '[UNK]', or use --pattern whitespace, which "
            f"drops whitespace)",
            file=sys.stderr,
        )


def train_fasta(args: argparse.Namespace) -> int:
    """`train --fasta`: the DNA preset on FASTA/FASTQ files (parsed and counted in the core)."""
    positive(args.chunk_length, "--chunk-length")
    text_only = {
        "--mode": args.mode is not None,
        "--pattern": args.pattern is not None,
        "--unmatched": args.unmatched is not None,
        "--jsonl-field": args.jsonl_field,
        "--initial-alphabet": args.initial_alphabet is not None,
        "--lowercase": args.lowercase,
        "--continuing-subword-prefix": args.continuing_subword_prefix,
        "--end-of-word-suffix": args.end_of_word_suffix,
        "--limit-alphabet": args.limit_alphabet,
    }
    given = [name for name, used in text_only.items() if used]
    if given:
        raise CommandError(
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for text; with --fasta use "
            "--alphabet, --chunk-length, --ambiguous, --reverse-complement, --keep-case"
        )
    growth = {
        "--extend": args.extend is not None,
        "--superwords-after": args.superwords_after is not None,
        "--veto": args.veto is not None or args.veto_bytes is not None,
        "--forbid-across": bool(args.forbid_across),
        "several --vocab-size": isinstance(args.vocab_size, list),
    }
    given = [name for name, used in growth.items() if used]
    if given:
        raise CommandError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for text, not with --fasta")
    args.alphabet, args.ambiguous = args.alphabet or "ACGTN", args.ambiguous or "split"
    if "-" in args.fasta:
        raise CommandError("--fasta reads files (plain or .gz), not standard input")
    paths = input_paths(args.fasta)
    out = output_folder(args.output)
    start = time.perf_counter()
    tok = train_dna(
        [Path(p) for p in paths],
        args.vocab_size,
        alphabet=args.alphabet,
        special_tokens=with_role_tokens(args),
        unk_token=args.unk_token or "[UNK]",
        uppercase=not args.keep_case,
        ambiguous=args.ambiguous,
        chunk_length=args.chunk_length,
        reverse_complement=args.reverse_complement,
        tie_break=args.tie_break or "first_seen",
        min_frequency=args.min_frequency,
        max_token_length=args.max_token_length,
        threads=args.threads,
        progress=progress_on(args),
    )
    seconds = time.perf_counter() - start
    roles = chosen_roles(tok, args)
    written, notes = folder.save(tok, out, roles=roles)
    records = (
        r
        for p in paths
        for r in iter_fasta(p, uppercase=not args.keep_case, ambiguous=args.ambiguous, chunk_length=args.chunk_length)
    )
    stats = dna_stats(tok, records, threads=args.threads)
    print(f"Trained in {seconds:.1f} s: {tok!r}")
    print(
        f"  training sequences: {stats.sequences:,} ({stats.bases:,} bases) from {len(paths)} file"
        f"{'s' if len(paths) != 1 else ''}" + (", both strands" if args.reverse_complement else "")
    )
    print(
        f"  {stats.bases_per_token:.2f} bases per token; mean k-mer length in the vocabulary "
        f"{stats.mean_kmer_length:.2f}"
    )
    print("  wrote " + ", ".join(str(p) for p in written))
    print_roles(roles, written)
    for note in notes:
        print(f"  {note}")
    return 0


def with_role_tokens(args: argparse.Namespace) -> list[str]:
    """The --special-token list, with the --bos-token, --eos-token and --pad-token it does not list added (so that
    naming a role is enough to have its token)."""
    specials = list(args.special_tokens)
    for token in (args.bos_token, args.eos_token, args.pad_token):
        if token is not None and token not in specials and token != args.unk_token:
            specials.append(token)
    return specials


def chosen_roles(tok: Tokenizer, args: argparse.Namespace) -> Roles:
    """The roles written for transformers: --bos/--eos/--pad/--unk-token, and the defaults for the others."""
    return choose_roles(
        tok, bos_token=args.bos_token, eos_token=args.eos_token, pad_token=args.pad_token, unk_token=args.unk_token
    )


def print_roles(roles: Roles, written: list[Path]) -> None:
    """The summary's line on the special tokens' roles (when the files for transformers were written)."""
    named = roles.as_dict()
    if named and any(p.name == "tokenizer_config.json" for p in written):
        print("  roles for transformers: " + ", ".join(f"{k.removesuffix('_token')} {v}" for k, v in named.items()))
