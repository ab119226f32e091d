"""The `bytepair` command.

    bytepair train corpus.txt --vocab-size 32000 -o tok/           # text (byte-level, GPT-2 pattern)
    bytepair train --fasta genome.fa.gz --vocab-size 4096 -o dna/  # DNA: the `dna` preset (see train_dna)
    bytepair stats dna/ --fasta genome.fa.gz --png lengths.png     # bases per token, k-mer lengths

Each subcommand is a function `add_NAME(subparsers)` that defines its arguments and sets `run` to a
function of the parsed arguments returning the exit status; `main` looks after errors: one line on stderr
and a non-zero status (`--verbose` shows the traceback). New subcommands slot in by adding to `COMMANDS`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["main"]

#: File name of the tokenizer inside an output directory.
TOKENIZER_FILE = "bytepair.json"


def _common() -> argparse.ArgumentParser:
    """Options every subcommand takes (also accepted after the subcommand's name)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of errors")
    return common


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def _tokenizer_path(path: str) -> Path:
    p = Path(path)
    return p / TOKENIZER_FILE if p.is_dir() else p


def _load(path: str):
    import bytepair

    p = _tokenizer_path(path)
    if not p.exists():
        raise FileNotFoundError(f"no tokenizer at {str(p)!r} (give a file saved by bytepair, or the directory "
                                f"`bytepair train -o` wrote)")
    return bytepair.Tokenizer.load(p)


# -- train ----------------------------------------------------------------------------------------------


def add_train(subparsers) -> None:
    p = subparsers.add_parser(
        "train", parents=[_common()], help="train a tokenizer on text files or FASTA/FASTQ files",
        description="Train a BPE tokenizer and save it as DIR/" + TOKENIZER_FILE + ". Text files are read line by "
                    "line (.gz decompressed); with --fasta, the DNA preset: nucleotides as the alphabet, no "
                    "pre-tokenization, [UNK] for other letters.")
    p.add_argument("files", nargs="*", metavar="FILE", help="text files to train on (globs are expanded)")
    p.add_argument("--fasta", nargs="+", metavar="FASTA", default=[],
                   help="FASTA/FASTQ files (plain or .gz) to train a DNA tokenizer on")
    p.add_argument("--vocab-size", type=_positive_int, required=True, help="size of the final vocabulary")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write the tokenizer to")
    p.add_argument("--special-token", action="append", default=[], metavar="TOKEN", dest="special_tokens",
                   help="a special token (repeatable); they get the first ids")
    p.add_argument("--tie-break", choices=["first_seen", "hf", "lexicographic"], default="first_seen",
                   help="which of equally frequent pairs to merge (default: first_seen)")
    p.add_argument("--min-frequency", type=int, default=0, help="stop when the best pair is rarer")
    p.add_argument("--max-token-length", type=_positive_int, help="longest token, in bytes/characters/bases")
    p.add_argument("--threads", type=_positive_int, help="threads for reading (default: all cores)")
    progress = p.add_mutually_exclusive_group()
    progress.add_argument("--progress", action="store_true", default=None, help="show progress (default: on a "
                          "terminal)")
    progress.add_argument("--no-progress", action="store_false", dest="progress", help="never show progress")
    text = p.add_argument_group("text options")
    text.add_argument("--mode", choices=["byte", "char"], default="byte", help="symbols: bytes (default) or "
                      "characters")
    text.add_argument("--pattern", default="gpt2", help="pre-tokenizer: gpt2 (default), cl100k, o200k, "
                      "whitespace, none, or a regex")
    text.add_argument("--unk-token", help="token for unknown characters (char mode)")
    text.add_argument("--lowercase", action="store_true", help="lowercase the text first")
    text.add_argument("--limit-alphabet", type=_positive_int, help="char mode: keep this many characters")
    text.add_argument("--errors", choices=["strict", "replace"], default="strict",
                      help="bytes that are not UTF-8: error (default) or replace")
    dna = p.add_argument_group("DNA options (with --fasta)")
    dna.add_argument("--alphabet", default="ACGTN", help="base symbols (default ACGTN; other letters are [UNK])")
    dna.add_argument("--chunk-length", type=_positive_int, metavar="N",
                     help="cut sequences into windows of N bases (default: whole sequences)")
    dna.add_argument("--ambiguous", choices=["split", "drop", "keep"], default="split",
                     help="N and other IUPAC codes: split sequences at them (default), drop or keep them")
    dna.add_argument("--reverse-complement", action="store_true", help="count both strands")
    dna.add_argument("--keep-case", action="store_true", help="do not fold lowercase (soft-masked) bases to "
                     "uppercase")
    p.set_defaults(run=run_train)


def run_train(args: argparse.Namespace) -> int:
    import bytepair

    if args.files and args.fasta:
        raise ValueError("give either text FILEs or --fasta files, not both")
    if not args.files and not args.fasta:
        raise ValueError("nothing to train on: give text FILEs, or --fasta FILE for DNA")
    out_dir = Path(args.output)
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"-o {args.output!r} is a file; give a directory (it is created if needed)")
    start = time.perf_counter()
    if args.fasta:
        files = [f for pattern in args.fasta for f in _expand(pattern)]
        tok = bytepair.train_dna(
            [Path(f) for f in files], args.vocab_size, alphabet=args.alphabet,
            special_tokens=args.special_tokens, uppercase=not args.keep_case, ambiguous=args.ambiguous,
            chunk_length=args.chunk_length, reverse_complement=args.reverse_complement, tie_break=args.tie_break,
            min_frequency=args.min_frequency, max_token_length=args.max_token_length, threads=args.threads,
            progress=args.progress)
    else:
        files = [f for pattern in args.files for f in _expand(pattern)]
        pattern = None if args.pattern.lower() == "none" else args.pattern
        tok = bytepair.train(
            [Path(f) for f in files], args.vocab_size, mode=args.mode, pattern=pattern,
            special_tokens=args.special_tokens, min_frequency=args.min_frequency, lowercase=args.lowercase,
            unk_token=args.unk_token, max_token_length=args.max_token_length, limit_alphabet=args.limit_alphabet,
            tie_break=args.tie_break, threads=args.threads, progress=args.progress, errors=args.errors,
            initial_alphabet="all" if args.mode == "byte" else "corpus")
    seconds = time.perf_counter() - start
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / TOKENIZER_FILE
    tok.save(path)
    print(f"trained {tok.vocab_size} tokens ({len(tok.merges)} merges) from {len(files)} file(s) in "
          f"{seconds:.2f} s -> {path}")
    return 0


def _expand(pattern: str) -> list[str]:
    import glob

    if os.path.exists(pattern) or not any(ch in pattern for ch in "*?["):
        if not os.path.exists(pattern):
            raise FileNotFoundError(f"no such file: {pattern!r}")
        return [pattern]
    found = sorted(glob.glob(pattern, recursive=True))
    if not found:
        raise FileNotFoundError(f"no file matches {pattern!r}")
    return found


# -- stats ----------------------------------------------------------------------------------------------


def add_stats(subparsers) -> None:
    p = subparsers.add_parser(
        "stats", parents=[_common()], help="how a DNA tokenizer cuts sequences: bases per token, k-mer lengths, histogram",
        description="Encode FASTA/FASTQ sequences with a trained tokenizer and report bases per token, the mean "
                    "k-mer length of the vocabulary and token-length histograms (optionally as a PNG).")
    p.add_argument("tokenizer", metavar="TOKENIZER", help="a tokenizer file, or the directory `train -o` wrote")
    p.add_argument("--fasta", nargs="+", metavar="FASTA", required=True, help="FASTA/FASTQ files to encode")
    p.add_argument("--chunk-length", type=_positive_int, metavar="N", help="encode windows of N bases")
    p.add_argument("--ambiguous", choices=["keep", "split", "drop"], default="keep",
                   help="N and IUPAC codes: keep (default: they encode as N or [UNK]), split or drop")
    p.add_argument("--png", metavar="FILE", help="write token-length histograms to this PNG (needs matplotlib)")
    p.set_defaults(run=run_stats)


def run_stats(args: argparse.Namespace) -> int:
    import bytepair

    tok = _load(args.tokenizer)
    files = [f for pattern in args.fasta for f in _expand(pattern)]

    def records():
        for f in files:
            yield from bytepair.iter_fasta(f, ambiguous=args.ambiguous, chunk_length=args.chunk_length)

    stats = bytepair.dna_stats(tok, records())
    print(stats)
    if args.png:
        from .viz import token_length_histogram

        written = token_length_histogram(stats, args.png, title=f"{Path(args.tokenizer).name}: "
                                                                f"{', '.join(Path(f).name for f in files)}")
        print(f"histogram -> {written}")
    return 0


# -- main -----------------------------------------------------------------------------------------------

#: The subcommands, in the order `--help` lists them.
COMMANDS: list[Callable] = [add_train, add_stats]


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="bytepair", description="Byte-Pair Encoding tokenizers: train, inspect.")
    parser.add_argument("--version", action="version", version=f"bytepair {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the traceback of errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in COMMANDS:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the `bytepair` command with `argv` (default: sys.argv[1:]); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("bytepair: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `bytepair stats ... | head`: the reader has gone, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # noqa: BLE001 — every error becomes one line (the traceback with --verbose)
        if args.verbose:
            traceback.print_exc()
        else:
            message = " ".join(str(e).split()) or type(e).__name__
            print(f"bytepair: error: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
