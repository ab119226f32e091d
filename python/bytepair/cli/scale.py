"""The command line at scale: `bytepair encode --output-dir` (shards), `bytepair train --engine` / `--from-counts`
(training from words counted by workers, or from a counts file) and `bytepair words` (the counts file), over
`bytepair.pipeline`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Literal

from ..formats import folder
from ..formats.counts import CountedWords
from ..pipeline import count_corpus, encode_corpus, parse_size
from ..training import train_from_counts
from .common import CommandError, load, megabytes, output_folder, positive, progress_on


def _scale_arguments(args: argparse.Namespace) -> dict[str, object]:
    """The engine options of a command, checked."""
    positive(args.workers, "--workers")
    positive(args.threads, "--threads")
    if args.ray_address is not None and args.engine != "ray":
        raise CommandError("--ray-address is for --engine ray")
    return {
        "engine": args.engine or "local",
        "workers": args.workers,
        "threads": args.threads,
        "ray_address": args.ray_address,
        "max_record_bytes": _size(args.max_record_size, "--max-record-size"),
    }


def _size(value: str, option: str) -> int:
    try:
        return parse_size(value)
    except ValueError as e:
        raise CommandError(f"{option}: {e}") from None


def _inputs(files: list[str]) -> list[str]:
    if not files or "-" in files:
        raise CommandError("give input files, folders or globs (standard input cannot be split between workers)")
    return files


def _workers_text(engine: str, workers: int, threads: int) -> str:
    where = "Ray" if engine == "ray" else "local"
    return f"{workers} {where} worker{'s' if workers != 1 else ''} x {threads} thread{'s' if threads != 1 else ''}"


def encode_shards(args: argparse.Namespace) -> int:
    """`bytepair encode INPUTS -t TOK --output-dir OUT`."""
    if args.output is not None:
        raise CommandError("give -o FILE (one file) or --output-dir DIR (shards), not both")
    fmt: Literal["megatron", "bin"] = "bin" if args.format == "bin" else "megatron"
    if args.format not in (None, "megatron", "bin"):
        raise CommandError(f"--format {args.format} is for -o FILE; shards (--output-dir) are megatron or bin")
    if args.dtype and fmt != "bin":
        raise CommandError("--dtype is for --format bin (megatron shards use Megatron's rule: uint16 below 65 500 ids)")
    if args.jsonl_field is not None and args.documents != "file":
        raise CommandError("--field makes each record a document: leave out --documents")
    options = _scale_arguments(args)
    tok = load(args.tokenizer, args.data)
    result = encode_corpus(
        _inputs(args.files),
        tok,
        args.output_dir,
        format=fmt,
        shard_size=_size(args.shard_size or "1GB", "--shard-size"),
        val_fraction=args.val_fraction,
        separator="auto" if args.separator is None else args.separator,
        field=args.jsonl_field,
        documents=args.documents,
        special=args.special,
        errors=args.errors,
        dtype=args.dtype,
        overwrite=args.overwrite,
        verify=args.verify,
        progress=progress_on(args),
        **options,  # type: ignore[arg-type]
    )
    totals = result.manifest["totals"]
    train, val = totals.get("train", {}), totals.get("val")
    shards = f"{train.get('shards', 0)} shard{'s' if train.get('shards', 0) != 1 else ''}"
    if val is not None:
        shards += f" + {val['shards']} validation ({val['documents']:,} documents)"
    if result.tasks_run == 0:
        print(f"{args.output_dir}: all {shards} are up to date (nothing to do)", file=sys.stderr)
        return 0
    seconds = result.seconds - result.engine_start_seconds - result.engine_stop_seconds
    rate = result.text_bytes / max(seconds, 1e-9) / 1e6
    per_token = result.text_bytes / result.tokens if result.tokens else 0.0
    print(
        f"encoded {result.documents:,} document(s), {megabytes(result.text_bytes)} -> {result.tokens:,} tokens "
        f"({per_token:.2f} bytes/token) into {shards} in {seconds:.1f} s ({rate:.1f} MB/s) with "
        f"{_workers_text(str(options['engine']), result.workers, result.threads)} -> {args.output_dir}"
        + (f"; kept {result.tasks_kept} task(s) from an earlier run" if result.tasks_kept else "")
        + (
            f"; Ray start {result.engine_start_seconds:.1f} s, stop {result.engine_stop_seconds:.1f} s"
            if result.engine_start_seconds
            else ""
        ),
        file=sys.stderr,
    )
    return 0


def _count(args: argparse.Namespace, pattern: str | None, scale: dict[str, object]) -> CountedWords:
    """The words of the command's INPUTS counted by workers (`bytepair words`, `train --engine`)."""
    return count_corpus(
        _inputs(args.files),
        pattern=pattern,
        lowercase=args.lowercase,
        special_tokens=args.special_tokens,
        field=args.jsonl_field,
        errors=args.errors,
        progress=progress_on(args),
        **scale,  # type: ignore[arg-type]
    )


def cmd_words(args: argparse.Namespace) -> int:
    """`bytepair words INPUTS -o counts.tsv`."""
    options = _scale_arguments(args)
    out = Path(args.output)
    if out.is_dir():
        raise CommandError(f"-o {args.output} is a folder: give the counts file to write (e.g. counts.tsv)")
    pattern = None if args.pattern.lower() == "none" else args.pattern
    start = time.perf_counter()
    counted = _count(args, pattern, options)
    seconds = time.perf_counter() - start
    if len(counted) == 0:
        raise ValueError("the corpus holds no words (empty files, or text the pattern does not match)")
    counted.save(out)
    print(
        f"counted {len(counted):,} distinct words ({counted.total:,} in all) in {megabytes(counted.bytes_seen)} of "
        f"text in {seconds:.1f} s -> {args.output}",
        file=sys.stderr,
    )
    return 0


def train_at_scale(args: argparse.Namespace) -> int:
    """`bytepair train INPUTS --engine local|ray` (words counted by workers) and `bytepair train --from-counts
    COUNTS`; the other training options as `bytepair train`."""
    out = output_folder(args.output)
    alphabet: str | list[str] = args.initial_alphabet or "all"
    if alphabet not in ("all", "corpus"):
        alphabet = list(dict.fromkeys(alphabet))  # the characters, each once
    options = dict(
        mode=args.mode or "byte",
        initial_alphabet=alphabet,
        min_frequency=args.min_frequency,
        continuing_subword_prefix=args.continuing_subword_prefix,
        end_of_word_suffix=args.end_of_word_suffix,
        unk_token=args.unk_token,
        max_token_length=args.max_token_length,
        limit_alphabet=args.limit_alphabet,
        tie_break=args.tie_break or "first_seen",
        progress=progress_on(args),
    )
    pattern = None if (args.pattern or "gpt2").lower() == "none" else (args.pattern or "gpt2")
    start = time.perf_counter()
    if args.from_counts is not None:
        if args.files:
            raise CommandError("give text FILEs or --from-counts COUNTS, not both")
        if args.engine is not None or args.workers is not None or args.ray_address is not None:
            raise CommandError("--engine, --workers and --ray-address are for counting FILEs, not --from-counts")
        counted = CountedWords.load(args.from_counts)
        clashes = []
        if args.pattern is not None and pattern != counted.pattern:
            clashes.append(f"--pattern {args.pattern} (the words were made with {counted.pattern})")
        if args.lowercase and not counted.lowercase:
            clashes.append("--lowercase (the words were not lowercased)")
        if args.special_tokens and tuple(args.special_tokens) != counted.special_tokens:
            clashes.append(
                f"--special-token {args.special_tokens} (the words were cut at {list(counted.special_tokens)})"
            )
        if clashes:
            raise CommandError(
                f"{args.from_counts} was counted otherwise: {'; '.join(clashes)}; leave these out, or count again"
            )
        source = f"{args.from_counts}: {len(counted):,} distinct words"
    else:
        scale = _scale_arguments(args)
        counted = _count(args, pattern, scale)
        source = f"{megabytes(counted.bytes_seen)} counted by workers into {len(counted):,} distinct words"
    counted_seconds = time.perf_counter() - start
    tok = train_from_counts(counted, args.vocab_size, **options)
    seconds = time.perf_counter() - start
    written, notes = folder.save(tok, out)
    print(f"Trained in {seconds:.1f} s ({counted_seconds:.1f} s reading and counting): {tok!r}")
    print(f"  training text: {source}")
    print(f"  vocabulary: {tok.vocab_size} tokens from {len(tok.merges)} merges")
    print("  wrote " + ", ".join(str(p) for p in written))
    for note in notes:
        print(f"  {note}")
    return 0
