"""`bytepair dna-stats`: how tokenizers cut nucleotide sequences (bases per token, k-mer lengths)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .._tokenizer import Tokenizer
from ..dna import DnaStats, dna_stats, iter_fasta
from .common import CommandError, input_paths, labelled, load, png_path, positive


def cmd_dna_stats(args: argparse.Namespace) -> int:
    png = png_path(args.png) if args.png else None  # checked before the work
    positive(args.chunk_length, "--chunk-length")
    positive(args.threads, "--threads")
    paths = input_paths(args.fasta)
    if "-" in paths:
        raise CommandError("dna-stats reads FASTA/FASTQ files (plain or .gz), not standard input")
    tokenizers: dict[str, Tokenizer] = {}
    for spec in args.tokenizers:
        label, spec = labelled(spec)
        if label in tokenizers:
            raise CommandError(f"two tokenizers are named {label!r}: label them, e.g. -t a={spec}")
        tokenizers[label] = load(spec, args.data)
    uppercase = not args.keep_case
    results: dict[str, DnaStats] = {}
    for label, tok in tokenizers.items():  # the files are read again for each: memory holds one record
        records = (
            r
            for p in paths
            for r in iter_fasta(p, uppercase=uppercase, ambiguous=args.ambiguous, chunk_length=args.chunk_length)
        )
        results[label] = dna_stats(tok, records, uppercase=uppercase, threads=args.threads)
    if args.json:
        import dataclasses

        numbers = {label: dataclasses.asdict(st) for label, st in results.items()}
        json.dump(numbers if len(numbers) > 1 else next(iter(numbers.values())), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for i, (label, st) in enumerate(results.items()):
            if len(results) > 1:
                print(("\n" if i else "") + f"{label}:")
            print(st)
    if png:
        from ..viz import token_length_histogram

        names = ", ".join(os.path.basename(p) for p in paths)
        title = f"{', '.join(results)}: {names}"[:100]
        token_length_histogram(results if len(results) > 1 else next(iter(results.values())), png, title=title)
        print(f"wrote {png}", file=sys.stderr)
    return 0
