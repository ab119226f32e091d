"""The `bytepair` command line (also `python -m bytepair`): train, encode, decode, count, inspect, viz,
compare, explain, dna-stats. Each subcommand is one function over the library (`bytepair`, `files`, `describe`,
`viewer`, `compare`, `explain`); this module only parses arguments and prints.

Errors print one line, `bytepair <command>: error: ...`, and exit with status 1 (2 for bad arguments);
`--verbose` shows the traceback too.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

import bytepair

from . import files

EXAMPLES = """\
examples:
  bytepair train corpus.txt --vocab-size 8192 -o tok/
      train a byte-level tokenizer; writes tok/bytepair.json, tok/tokenizer.json (HF) and tok/tokenizer.tiktoken
  zcat books/*.gz | bytepair train - --vocab-size 32000 --special-token '<|endoftext|>' -o tok/
  bytepair train docs.jsonl.gz --jsonl-field text --vocab-size 16000 -o tok/
  bytepair train --fasta genome.fa.gz --vocab-size 4096 --chunk-length 1000 -o dna/
      a DNA tokenizer (A/C/G/T/N, no pre-tokenization, [UNK] for other letters)
  bytepair dna-stats -t dna/ genome.fa.gz --png lengths.png     bases per token, k-mer lengths
  printf "Hello world" | bytepair encode -t gpt2               ->  15496 995
  bytepair encode corpus.txt -t tok/ --format bin --dtype uint16 -o corpus.bin
  bytepair decode corpus.bin -t tok/ --format bin --dtype uint16
  bytepair count -t cl100k_base README.md
  bytepair inspect tok/
  bytepair viz cl100k_base "Hello, world! 🎉"
  bytepair viz tok/ README.md --html tokens.html
  bytepair compare -t gpt2 -t o200k_base --baseline bytes corpus.txt --png compare.png
  bytepair explain                                              BPE step by step, on the textbook example

Tokenizers (-t/--tokenizer): a folder written by `bytepair train`, a bytepair or HF tokenizer.json file, or
one of gpt2, r50k_base, p50k_base, cl100k_base, o200k_base (files from --data, $BYTEPAIR_DATA or tiktoken's
cache; nothing is downloaded). Add --verbose to see the traceback of an error.
"""


class CommandError(Exception):
    """A mistake in how the command was called: one line, exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line with `argv` (default: sys.argv[1:]) and returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    name = f"bytepair {args.command}"
    verbose = getattr(args, "verbose", False)
    try:
        with warnings.catch_warnings():
            if not verbose:  # "bytepair train: warning: ...", not Python's file, line and source line
                warnings.showwarning = lambda message, *_, **__: print(f"{name}: warning: {_in_option_words(str(message))}",
                                                                      file=sys.stderr)
            return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print(f"\n{name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `bytepair encode ... | head`: the reader has gone, which is fine
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 0
    except CommandError as e:
        if verbose:
            traceback.print_exc()
        print(f"{name}: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - every error becomes one clear line
        if verbose:
            traceback.print_exc()
        print(f"{name}: error: {_message(e)}", file=sys.stderr)
        return 1


# The library's messages name its arguments; on the command line, the options that set them.
_OPTION_WORDS = [
    (re.compile(r"\bvocab_size=(\d+)"), r"--vocab-size \1"),
    (re.compile(r'\bunk_token="\[UNK\]"'), "--unk-token '[UNK]'"),
    (re.compile(r"\binitial_alphabet=\[\.\.\.\]"), "--initial-alphabet CHARS"),
    (re.compile(r'\berrors="replace"'), "--errors replace"),
    (re.compile(r"\(path=\.\.\. in Python, or set BYTEPAIR_DATA=folder for the command line\)"),
     "(--data FOLDER, or BYTEPAIR_DATA=FOLDER)"),
    (re.compile(r"None \(no split\)"), "none (no split)"),
    (re.compile(r"bytepair\.train\b(\(\.\.\., [^)]*\))?"), "train without --fasta"),
    (re.compile(r"\bvocab_size\b"), "--vocab-size"),
]


def _in_option_words(text: str) -> str:
    """A library message with the command line's options in place of the arguments they set."""
    for words, option in _OPTION_WORDS:
        text = words.sub(option, text)
    return text


def _message(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename and e.strerror:
        return f"{e.strerror}: {e.filename!r}"
    text = _in_option_words(str(e).strip() or type(e).__name__)
    if isinstance(e, (MemoryError, RecursionError)):
        return f"{type(e).__name__}: {text}"
    return text.splitlines()[0] if "\n" in text and len(text) > 300 else text


# -- parser -------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an error")
    parser = argparse.ArgumentParser(
        prog="bytepair",
        description="Byte-Pair Encoding tokenizers: train, encode, decode, count, inspect, view and compare them.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter, parents=[common],
    )
    # No default for --verbose here: set_defaults would reach the action the subcommands share (`parents`), and
    # each subcommand would then reset a `bytepair -v COMMAND` to False.
    parser.add_argument("--version", action="version", version=f"bytepair {bytepair.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, help: str, examples: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help, parents=[common],
                           epilog="examples:\n" + examples, formatter_class=argparse.RawDescriptionHelpFormatter)
        return p

    # train
    p = command("train", "train a BPE tokenizer on text files (or standard input), or on FASTA/FASTQ files (DNA), "
                "and save it", """\
  bytepair train corpus.txt --vocab-size 8192 -o tok/
  bytepair train 'data/*.txt.gz' --vocab-size 32000 --special-token '<|endoftext|>' -o tok/
  cat corpus.txt | bytepair train - --vocab-size 1000 --mode char --unk-token '[UNK]' -o tok/
  bytepair train docs.jsonl --jsonl-field text --vocab-size 16000 --tie-break hf -o tok/
  bytepair train --fasta genome.fa.gz --vocab-size 4096 --chunk-length 1000 -o dna/
  bytepair train --fasta 'reads/*.fq.gz' --vocab-size 4096 --reverse-complement -o dna/""")
    p.add_argument("files", nargs="*", metavar="FILE", help="text files (UTF-8; .gz read directly; globs "
                   "expanded), or - for standard input; each line is one text")
    p.add_argument("--fasta", nargs="+", default=[], metavar="FASTA", help="FASTA/FASTQ files (plain or .gz) "
                   "to train a DNA tokenizer on instead: the `dna` preset (see bytepair.train_dna)")
    p.add_argument("--vocab-size", type=int, required=True, metavar="N",
                   help="size of the vocabulary, special tokens and base alphabet included")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="folder to write the tokenizer to "
                   f"({files.OUR_FILE}, {files.HF_FILE}, and {files.TIKTOKEN_FILE} for byte-level ones)")
    # Options of one kind of training only default to None (resolved in cmd_train), so that giving one with
    # its default value to the other kind is still seen and refused.
    p.add_argument("--mode", choices=["byte", "char"],
                   help="symbols are UTF-8 bytes (default) or characters")
    p.add_argument("--pattern", metavar="PATTERN",
                   help="pre-tokenization: gpt2 (default), cl100k, o200k, whitespace, none, or a regex")
    p.add_argument("--special-token", action="append", default=[], metavar="TOKEN", dest="special_tokens",
                   help="a special token (repeat for several); they get the first ids")
    p.add_argument("--initial-alphabet", metavar="ALPHABET",
                   help='"all" (every byte, default), "corpus" (symbols seen), or characters to add, e.g. ACGT')
    p.add_argument("--min-frequency", type=int, default=0, metavar="N", help="stop when the best pair occurs "
                   "fewer times")
    p.add_argument("--lowercase", action="store_true", help="lowercase the text (when encoding too)")
    p.add_argument("--continuing-subword-prefix", metavar="PREFIX", help='e.g. "##"')
    p.add_argument("--end-of-word-suffix", metavar="SUFFIX", help='e.g. "</w>"')
    p.add_argument("--unk-token", metavar="TOKEN", help='token for unknown characters (char mode), e.g. "[UNK]"')
    p.add_argument("--max-token-length", type=int, metavar="N", help="longest token, in symbols")
    p.add_argument("--limit-alphabet", type=int, metavar="N", help="char mode: keep the N most frequent characters")
    p.add_argument("--tie-break", choices=["first_seen", "hf", "lexicographic"], default="first_seen",
                   help="which of several equally frequent pairs to merge (default: first_seen, the textbook's)")
    p.add_argument("--jsonl-field", metavar="FIELD", help="the files are JSON lines; train on this field of each")
    p.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="bytes that are not UTF-8: stop (default) or replace them")
    dna = p.add_argument_group("DNA options (with --fasta)")
    dna.add_argument("--alphabet", help="base symbols (default ACGTN); other letters are "
                     "[UNK]")
    dna.add_argument("--chunk-length", type=int, metavar="N", help="cut sequences into windows of N bases "
                     "(default: whole sequences)")
    dna.add_argument("--ambiguous", choices=["split", "drop", "keep"],
                     help="N and other IUPAC codes: split sequences at them (default), drop or keep them")
    dna.add_argument("--reverse-complement", action="store_true", help="count both strands: each sequence "
                     "and its reverse complement")
    dna.add_argument("--keep-case", action="store_true", help="do not fold lowercase (soft-masked) bases to "
                     "uppercase")
    _threads_progress(p)
    p.set_defaults(run=cmd_train)

    # encode
    p = command("encode", "encode text files (or standard input) to token ids", """\
  echo "Hello world" | bytepair encode -t gpt2
  bytepair encode a.txt b.txt -t tok/ --format json -o ids.jsonl
  bytepair encode corpus.txt.gz -t tok/ --format bin --dtype uint16 --separator '<|endoftext|>' -o corpus.bin
      python: numpy.memmap("corpus.bin", dtype=numpy.uint16, mode="r")
  bytepair encode docs.jsonl --jsonl-field text -t cl100k_base --format bin --dtype uint32 -o docs.bin""")
    _tokenizer_option(p)
    p.add_argument("files", nargs="*", default=["-"], metavar="FILE",
                   help="text files (.gz read directly), or - for standard input (the default)")
    p.add_argument("-o", "--output", metavar="FILE", help="where to write (default: standard output)")
    p.add_argument("--format", choices=["text", "json", "bin"], default="text",
                   help="text: ids separated by spaces, one line per document (default); json: a JSON array per "
                   "document and line; bin: raw little-endian integers, numpy.memmap-readable")
    p.add_argument("--dtype", choices=["uint16", "uint32"],
                   help="integer type of --format bin (default: uint16 if every id fits, else uint32)")
    p.add_argument("--separator", metavar="TOKEN", help="a special token written after each document (default "
                   "for --format bin: <|endoftext|> if the tokenizer has it; 'none' for no separator)")
    _document_options(p)
    _threads_progress(p)
    p.set_defaults(run=cmd_encode)

    # decode
    p = command("decode", "decode token ids (text, JSON lines, or a binary token file) back to text", """\
  echo 15496 995 | bytepair decode -t gpt2
  bytepair decode ids.jsonl -t tok/ --format json
  bytepair decode corpus.bin -t tok/ --format bin --dtype uint16 -o corpus.txt""")
    _tokenizer_option(p)
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="ids to decode (default: standard input)")
    p.add_argument("-o", "--output", metavar="FILE", help="where to write the text (default: standard output)")
    p.add_argument("--format", choices=["text", "json", "bin"], default="text",
                   help="how the ids are written (as `bytepair encode --format` writes them)")
    p.add_argument("--dtype", choices=["uint16", "uint32"], help="integer type of --format bin (default: as encode)")
    p.add_argument("--join", metavar="TEXT", help=r"written between documents (default: a line break; "
                   r"escapes like \n are understood)")
    p.add_argument("--separator", metavar="TOKEN", help="--format bin: the special token that ends each document, "
                   "replaced by --join (default: <|endoftext|> if the tokenizer has it, as encode writes it; 'none' "
                   "to decode it as text)")
    p.set_defaults(run=cmd_decode)

    # count
    p = command("count", "count the tokens of text files (or standard input)", """\
  bytepair count -t cl100k_base README.md
  cat notes.txt | bytepair count -t o200k_base
  bytepair count -t tok/ data/*.txt""")
    _tokenizer_option(p)
    p.add_argument("files", nargs="*", default=["-"], metavar="FILE", help="text files, or - for standard input")
    _document_options(p)
    _threads_progress(p)
    p.set_defaults(run=cmd_count)

    # inspect
    p = command("inspect", "show what is in a tokenizer: sizes, special tokens, longest tokens, merges, vocabulary",
                """\
  bytepair inspect tok/
  bytepair inspect cl100k_base --top 20
  bytepair inspect tok/ --vocab > vocab.tsv""")
    p.add_argument("tokenizer", metavar="TOKENIZER", help="a folder, a tokenizer file or an encoding name")
    _data_option(p)
    p.add_argument("--top", type=int, default=10, metavar="N", help="how many longest tokens and first/last "
                   "merges to show (default 10)")
    p.add_argument("--vocab", action="store_true", help="print the whole vocabulary, one `id<TAB>token` line each "
                   "(invisible characters escaped)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON (not with --vocab)")
    p.set_defaults(run=cmd_inspect)

    # viz
    p = command("viz", "show how a text is tokenized: coloured tokens in the terminal, or an HTML page", """\
  bytepair viz cl100k_base "Hello, world! 🎉"
  bytepair viz tok/ README.md --ids
  bytepair viz gpt2 story.txt --html tokens.html""")
    p.add_argument("tokenizer", metavar="TOKENIZER", help="a folder, a tokenizer file or an encoding name")
    p.add_argument("text", nargs="?", default="-", metavar="TEXT|FILE",
                   help="the text, or a file to read (default: standard input)")
    _data_option(p)
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML page instead")
    p.add_argument("--ids", action="store_true", help="show each token's id")
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                   help="colour the tokens (auto: when writing to a terminal and NO_COLOR is not set); without "
                   "colour, tokens are separated by |")
    p.add_argument("--special", choices=["allow", "text"], default="allow",
                   help="special-token text: show it as the special token (default) or as ordinary text")
    p.add_argument("--max-chars", type=int, default=1_000_000, metavar="N",
                   help="show at most this many characters of the text (default 1000000)")
    p.set_defaults(run=cmd_viz)

    # compare
    p = command("compare", "compare tokenizers on a corpus: bytes per token, tokens per word, vocabulary use", """\
  bytepair compare -t gpt2 -t cl100k_base -t o200k_base corpus.txt
  bytepair compare -t char=tok-char/ -t byte=tok-byte/ --baseline chars --baseline words corpus.txt --png cmp.png
  bytepair compare -t cl100k_base --baseline bytes docs.jsonl --jsonl-field text --json""")
    p.add_argument("files", nargs="+", metavar="FILE", help="the corpus: text files (.gz), or - for standard input")
    p.add_argument("-t", "--tokenizer", action="append", default=[], metavar="[NAME=]TOKENIZER", dest="tokenizers",
                   help="a tokenizer to compare (repeat for several); NAME= labels it")
    p.add_argument("--baseline", action="append", default=[], choices=["bytes", "chars", "words"],
                   dest="baselines", help="add a level without merges: one token per byte, character or "
                   "whitespace-separated word")
    _data_option(p)
    p.add_argument("--png", metavar="FILE", help="write a bar chart (needs matplotlib)")
    p.add_argument("--json", action="store_true", help="print the numbers as JSON")
    p.add_argument("--markdown", action="store_true", help="print a markdown table (not with --json)")
    p.add_argument("--jsonl-field", metavar="FIELD", help="the files are JSON lines; use this field of each")
    p.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="bytes that are not UTF-8: stop (default) or replace them")
    _threads_progress(p)
    p.set_defaults(run=cmd_compare)

    # dna-stats
    p = command("dna-stats", "how DNA tokenizers cut FASTA/FASTQ sequences: bases per token, k-mer lengths, "
                "token-length histograms (several tokenizers side by side)", """\
  bytepair dna-stats -t dna/ genome.fa.gz
  bytepair dna-stats -t dna/ genome.fa.gz --chunk-length 1000 --png lengths.png
  bytepair dna-stats -t 4k=dna4k/ -t 16k=dna16k/ genome.fa.gz --png compare.png
  bytepair dna-stats -t dna/ reads.fq.gz --json""")
    p.add_argument("-t", "--tokenizer", action="append", required=True, metavar="[NAME=]TOKENIZER",
                   dest="tokenizers", help="a DNA tokenizer (a folder written by `bytepair train --fasta`, or a "
                   "tokenizer file); repeat to compare several, NAME= labels one")
    _data_option(p)
    p.add_argument("fasta", nargs="+", metavar="FASTA", help="FASTA/FASTQ files (plain or .gz)")
    p.add_argument("--chunk-length", type=int, metavar="N", help="encode windows of N bases (default: whole "
                   "sequences)")
    p.add_argument("--ambiguous", choices=["keep", "split", "drop"], default="keep",
                   help="N and IUPAC codes: keep them (default: they encode as N or [UNK]), split or drop")
    p.add_argument("--keep-case", action="store_true", help="do not uppercase the sequences before encoding")
    p.add_argument("--png", metavar="FILE", help="write token-length histograms (needs matplotlib)")
    p.add_argument("--json", action="store_true", help="print the numbers as JSON")
    p.add_argument("--threads", type=int, metavar="N", help="threads to use (default, and at most: every core)")
    p.set_defaults(run=cmd_dna_stats)

    # explain
    p = command("explain", "BPE step by step on a small corpus: pair counts, each merge, the corpus after it", """\
  bytepair explain                                   the textbook example: hug pug pun bun hugs
  bytepair explain low:5 lower:2 newest:6 widest:3   your own word counts
  bytepair explain --text "the cat sat on the mat" --merges 4
  bytepair explain --tie-break hf""")
    p.add_argument("words", nargs="*", metavar="WORD[:COUNT]", help="words with their counts (default: the textbook's)")
    p.add_argument("--text", help="a text whose words to count instead")
    p.add_argument("--merges", type=int, metavar="N", help="stop after N merges (default: when no pair is left)")
    p.add_argument("--mode", choices=["char", "byte"], default="char", help="symbols: characters (default) or bytes")
    p.add_argument("--pattern", default="whitespace", help="how --text is cut into words (default: whitespace)")
    p.add_argument("--tie-break", choices=["first_seen", "hf", "lexicographic"], default="first_seen")
    p.add_argument("--tokenize", action="append", metavar="WORD", help="a new word to tokenize at the end (repeat)")
    p.set_defaults(run=cmd_explain)

    # demo
    p = command("demo", "train on the Python standard library's sources and show the result (as `make demo`)",
                "  bytepair demo --vocab-size 4096")
    p.add_argument("--vocab-size", type=int, default=8192)
    p.add_argument("--save", metavar="PATH", help="where to write the tokenizer (bytepair format)")
    p.set_defaults(run=cmd_demo)
    return parser


def _tokenizer_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--tokenizer", required=True, metavar="TOKENIZER",
                   help="a folder written by `bytepair train`, a tokenizer file, or gpt2, r50k_base, p50k_base, "
                   "cl100k_base, o200k_base")
    _data_option(p)


def _data_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", metavar="DIR", help="folder with the files of named encodings (default: "
                   "$BYTEPAIR_DATA, then tiktoken's cache)")


def _document_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--documents", choices=["file", "line"], default="file",
                   help="what one document is: a whole file (default) or each line (its line break left out)")
    p.add_argument("--jsonl-field", metavar="FIELD", help="the files are JSON lines: each line's FIELD is a document")
    p.add_argument("--special", choices=["error", "allow", "text"], default="error",
                   help="special-token text such as <|endoftext|> in the input: error (default, as tiktoken), "
                   "allow (encode it as the special token) or text (encode it as ordinary text)")
    p.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="bytes that are not UTF-8: stop (default) or replace them")


def _threads_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=int, metavar="N", help="threads to use (default, and at most: every core)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar on stderr (default: when stderr is a terminal)")


# -- helpers ------------------------------------------------------------------------------------------------


def _positive(value: int | None, name: str, minimum: int = 1) -> None:
    if value is not None and value < minimum:
        raise CommandError(f"{name} must be at least {minimum}, got {value}")


def _progress_on(args: argparse.Namespace) -> bool:
    if args.progress is not None:
        return bool(args.progress)
    return sys.stderr.isatty()


def _load(spec: str, data: str | None) -> bytepair.Tokenizer:
    return files.load_tokenizer(spec, data=data)


def _input_paths(paths: Sequence[str]) -> list[str]:
    """Files named on the command line: globs expanded (for shells that do not), each checked to exist."""
    import glob

    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
        elif not os.path.exists(p) and any(c in p for c in "*?["):
            matches = sorted(glob.glob(p, recursive=True))
            if not matches:
                raise FileNotFoundError(f"no file matches {p!r}")
            out += matches
        elif not os.path.exists(p):
            raise FileNotFoundError(f"no such file: {p!r}")
        elif os.path.isdir(p):
            raise IsADirectoryError(f"{p!r} is a directory: pass the files in it, e.g. {os.path.join(p, '*.txt')!r}")
        else:
            out.append(p)
    if out.count("-") > 1:
        raise CommandError("standard input (-) can be read only once")
    return out


_WRITE_ERRORS = {errno.EFBIG, errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS}


@contextlib.contextmanager
def _output(path: str | None, binary_ok: bool = True) -> Iterator[BinaryIO]:
    """Standard output, or a file written under a temporary name and renamed when complete (no half-written
    file is left behind after an error)."""
    if path is None or path == "-":
        if not binary_ok and sys.stdout.isatty():
            raise CommandError("binary output to a terminal: write it to a file with -o FILE")
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(f"{path!r} is a directory: give a file name")
    if not target.parent.exists():
        raise FileNotFoundError(f"the folder of {path!r} does not exist")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb", buffering=1 << 20) as f:
            yield f
        os.replace(tmp, target)
    except OSError as e:
        if e.filename is None and e.errno in _WRITE_ERRORS:  # a failed write names no file: name it
            raise OSError(e.errno, e.strerror or str(e), path) from e
        raise
    finally:
        if tmp.exists():
            tmp.unlink()


def _documents(args: argparse.Namespace, tok: bytepair.Tokenizer | None, progress: files.Progress | None
               ) -> Iterator[files.Piece]:
    if args.jsonl_field is not None and getattr(args, "documents", "file") != "file":
        raise CommandError("--jsonl-field makes each record a document: leave out --documents")
    return files.documents(
        _input_paths(args.files), split=getattr(args, "documents", "file"), jsonl_field=args.jsonl_field,
        cut=tok is None or files.can_cut(tok), errors=args.errors, progress=progress,
    )


def _unescape(text: str) -> bytes:
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


def _megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n:,} bytes"


# -- commands -----------------------------------------------------------------------------------------------


def cmd_train(args: argparse.Namespace) -> int:
    if args.vocab_size < 1:
        raise CommandError(f"--vocab-size must be a positive number, got {args.vocab_size}")
    _positive(args.min_frequency, "--min-frequency", 0)
    _positive(args.threads, "--threads")
    if args.fasta:
        if args.files:
            raise CommandError("give text FILEs or --fasta files, not both")
        return _train_fasta(args)
    dna_only = {"--alphabet": args.alphabet is not None, "--chunk-length": args.chunk_length is not None,
                "--ambiguous": args.ambiguous is not None, "--reverse-complement": args.reverse_complement,
                "--keep-case": args.keep_case}
    given = [name for name, used in dna_only.items() if used]
    if given:
        raise CommandError(f"{', '.join(given)} {'is a DNA option' if len(given) == 1 else 'are DNA options'}, "
                           f"for --fasta FILE (for text, --initial-alphabet adds characters)")
    args.mode, args.pattern = args.mode or "byte", args.pattern or "gpt2"
    args.initial_alphabet = args.initial_alphabet or "all"
    if not args.files:
        raise CommandError("nothing to train on: give text FILEs (or - for standard input), or --fasta FILE")
    paths = _input_paths(args.files)
    out = _output_folder(args.output)
    pattern = None if args.pattern.lower() == "none" else args.pattern
    alphabet: str | list[str] = args.initial_alphabet
    if alphabet not in ("all", "corpus"):
        alphabet = list(dict.fromkeys(args.initial_alphabet))  # the characters, each once
    options = dict(
        mode=args.mode, pattern=pattern, special_tokens=args.special_tokens, initial_alphabet=alphabet,
        min_frequency=args.min_frequency, lowercase=args.lowercase,
        continuing_subword_prefix=args.continuing_subword_prefix, end_of_word_suffix=args.end_of_word_suffix,
        unk_token=args.unk_token, max_token_length=args.max_token_length, limit_alphabet=args.limit_alphabet,
        tie_break=args.tie_break, threads=args.threads, progress=_progress_on(args),
    )
    with contextlib.ExitStack() as stack:
        if "-" in paths:  # standard input is kept in a temporary file: it is read again for the summary
            spool = stack.enter_context(tempfile.TemporaryDirectory(prefix="bytepair-"))
            kept = os.path.join(spool, "stdin.txt")
            with open(kept, "wb") as f:
                shutil.copyfileobj(sys.stdin.buffer, f, 1 << 20)
            paths = [kept if p == "-" else p for p in paths]
        size = sum(os.path.getsize(p) for p in paths)
        start = time.perf_counter()
        if args.jsonl_field is not None:
            texts = (piece.text for piece in files.documents(paths, jsonl_field=args.jsonl_field,
                                                             errors=args.errors))
            tok = bytepair.train(texts, args.vocab_size, **options)
        else:
            tok = bytepair.train([Path(p) for p in paths], args.vocab_size, errors=args.errors, **options)
        seconds = time.perf_counter() - start
        written, notes = _write_tokenizer_files(tok, out)
        # Bytes per token on the training text, encoded as the tokenizer will encode it.
        progress = files.Progress("measuring bytes per token", bool(options["progress"]))
        try:
            summary = files.encode_stream(
                tok, files.documents(paths, jsonl_field=args.jsonl_field, cut=files.can_cut(tok),
                                     errors=args.errors, progress=progress),
                None, special="allow" if tok.special_tokens else "text", threads=args.threads, progress=progress)
        except ValueError as e:
            # Training reads each line of a file as one text, encoding reads the file whole: whitespace across
            # lines ("\n\n") then makes pieces training never saw, which a character-level tokenizer with word
            # markers may have no symbol for. The tokenizer is written and usable; say what it cannot encode.
            summary, unencodable = None, str(e)
        progress.finish()
    counted = tok.trace
    print(f"Trained in {seconds:.1f} s: {tok!r}")
    specials = len(tok.special_tokens) + (1 if tok.settings["unk_token"] and
                                          tok.settings["unk_token"] not in tok.special_tokens else 0)
    print(f"  vocabulary: {tok.vocab_size} tokens = {specials} special + {tok._core.layout()[1]} base + "
          f"{tok.vocab_size - specials - tok._core.layout()[1]} from {len(tok.merges)} merges"
          + (f" (last merge count {counted[-1][1]})" if counted else ""))
    in_files = f"in {len(paths)} file{'s' if len(paths) != 1 else ''}"
    if summary is None:
        print(f"  training text: {_megabytes(size)} {in_files} (on disk)")
    else:  # the text's size (a .gz file's is its compressed size on disk)
        print(f"  training text: {_megabytes(summary.bytes)} {in_files}, "
              f"{summary.documents if args.jsonl_field else len(paths)} document(s) -> {summary.tokens:,} tokens, "
              f"{summary.bytes_per_token:.2f} bytes per token")
    print("  wrote " + ", ".join(str(p) for p in written))
    for note in notes:
        print(f"  {note}")
    if summary is None:
        print(f"bytepair train: warning: this tokenizer cannot encode its training files read whole: {unencodable}\n"
              f"  (training reads each line of a file as one text, so pieces that span lines, such as a blank "
              f"line's \"\\n\\n\", were never seen; add --unk-token '[UNK]', or use --pattern whitespace, which "
              f"drops whitespace)", file=sys.stderr)
    return 0


def _labelled(spec: str) -> tuple[str, str]:
    """-t LABEL=TOKENIZER or -t TOKENIZER (labelled by itself) → (label, tokenizer)."""
    name, _, rest = spec.partition("=")
    if rest and "/" not in name and not os.path.exists(spec):
        if not name.strip():
            raise CommandError(f"-t {spec}: the label before '=' is empty; write -t LABEL={rest} or -t {rest}")
        return name, rest
    return spec.rstrip("/"), spec


def _output_folder(value: str) -> Path:
    """train's -o: a folder (made if missing), never a file, nor an empty name (which would be the current one)."""
    if not value.strip():
        raise CommandError("-o is empty: give the folder to write the tokenizer files into (e.g. -o tok/)")
    out = Path(value)
    if out.exists() and not out.is_dir():
        raise CommandError(f"-o {value!r} is a file; give a folder to write the tokenizer files into")
    return out


def _png_path(path: str) -> str:
    """The file a chart goes to: `path`, with ".png" added when it has no such ending (as matplotlib would add
    it), and not a folder."""
    png = path if path.lower().endswith(".png") else path + ".png"
    if os.path.isdir(png):
        raise CommandError(f"--png {path}: {png} is a folder; give a file name such as chart.png")
    return png


def _write_tokenizer_files(tok: bytepair.Tokenizer, out: Path) -> tuple[list[Path], list[str]]:
    """Writes the tokenizer into folder `out` in every format it fits: ours always, HF's tokenizer.json, and a
    tiktoken rank file for byte-level tokenizers with a pattern. Returns the files written and why others
    were not."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / files.OUR_FILE]
    tok.save(written[0])
    notes: list[str] = []
    try:
        tok.save_hf(out / files.HF_FILE)
        written.append(out / files.HF_FILE)
    except ValueError as e:
        notes.append(f"no {files.HF_FILE}: {e}")
    if tok.settings["mode"] == "byte":
        try:
            if tok.settings["pattern"] is None:
                raise ValueError("tiktoken needs a pre-tokenization pattern (this tokenizer has none)")
            tok.save_tiktoken(out / files.TIKTOKEN_FILE)
            written.append(out / files.TIKTOKEN_FILE)
        except ValueError as e:
            notes.append(f"no {files.TIKTOKEN_FILE}: {e}")
    # A file of a format this tokenizer does not fit is an earlier tokenizer's, trained into the same folder: left
    # there, it would be taken for this one.
    for name in (files.HF_FILE, files.TIKTOKEN_FILE):
        if out / name not in written and (out / name).is_file():
            (out / name).unlink()
            notes.append(f"removed the {name} an earlier training left in {out}")
    return written, notes


def _train_fasta(args: argparse.Namespace) -> int:
    """`train --fasta`: the DNA preset on FASTA/FASTQ files (parsed and counted in the core)."""
    _positive(args.chunk_length, "--chunk-length")
    text_only = {"--mode": args.mode is not None, "--pattern": args.pattern is not None, "--jsonl-field":
                 args.jsonl_field, "--initial-alphabet": args.initial_alphabet is not None, "--lowercase": args.lowercase,
                 "--continuing-subword-prefix": args.continuing_subword_prefix, "--end-of-word-suffix":
                 args.end_of_word_suffix, "--limit-alphabet": args.limit_alphabet}
    given = [name for name, used in text_only.items() if used]
    if given:
        raise CommandError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for text; with --fasta use "
                           "--alphabet, --chunk-length, --ambiguous, --reverse-complement, --keep-case")
    args.alphabet, args.ambiguous = args.alphabet or "ACGTN", args.ambiguous or "split"
    if "-" in args.fasta:
        raise CommandError("--fasta reads files (plain or .gz), not standard input")
    paths = _input_paths(args.fasta)
    out = _output_folder(args.output)
    start = time.perf_counter()
    tok = bytepair.train_dna(
        [Path(p) for p in paths], args.vocab_size, alphabet=args.alphabet, special_tokens=args.special_tokens,
        unk_token=args.unk_token or "[UNK]", uppercase=not args.keep_case, ambiguous=args.ambiguous,
        chunk_length=args.chunk_length, reverse_complement=args.reverse_complement, tie_break=args.tie_break,
        min_frequency=args.min_frequency, max_token_length=args.max_token_length, threads=args.threads,
        progress=_progress_on(args))
    seconds = time.perf_counter() - start
    written, notes = _write_tokenizer_files(tok, out)
    records = (r for p in paths for r in bytepair.iter_fasta(p, uppercase=not args.keep_case,
                                                               ambiguous=args.ambiguous,
                                                               chunk_length=args.chunk_length))
    stats = bytepair.dna_stats(tok, records, threads=args.threads)
    print(f"Trained in {seconds:.1f} s: {tok!r}")
    print(f"  training sequences: {stats.sequences:,} ({stats.bases:,} bases) from {len(paths)} file"
          f"{'s' if len(paths) != 1 else ''}" + (", both strands" if args.reverse_complement else ""))
    print(f"  {stats.bases_per_token:.2f} bases per token; mean k-mer length in the vocabulary "
          f"{stats.mean_kmer_length:.2f}")
    print("  wrote " + ", ".join(str(p) for p in written))
    for note in notes:
        print(f"  {note}")
    return 0


def cmd_dna_stats(args: argparse.Namespace) -> int:
    png = _png_path(args.png) if args.png else None  # checked before the work
    _positive(args.chunk_length, "--chunk-length")
    _positive(args.threads, "--threads")
    paths = _input_paths(args.fasta)
    if "-" in paths:
        raise CommandError("dna-stats reads FASTA/FASTQ files (plain or .gz), not standard input")
    tokenizers: dict[str, bytepair.Tokenizer] = {}
    for spec in args.tokenizers:
        label, spec = _labelled(spec)
        if label in tokenizers:
            raise CommandError(f"two tokenizers are named {label!r}: label them, e.g. -t a={spec}")
        tokenizers[label] = _load(spec, args.data)
    uppercase = not args.keep_case
    results: dict[str, bytepair.DnaStats] = {}
    for label, tok in tokenizers.items():  # the files are read again for each: memory holds one record
        records = (r for p in paths for r in bytepair.iter_fasta(p, uppercase=uppercase, ambiguous=args.ambiguous,
                                                                   chunk_length=args.chunk_length))
        results[label] = bytepair.dna_stats(tok, records, uppercase=uppercase, threads=args.threads)
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
        from .viz import token_length_histogram

        names = ", ".join(os.path.basename(p) for p in paths)
        title = f"{', '.join(results)}: {names}"[:100]
        token_length_histogram(results if len(results) > 1 else next(iter(results.values())), png, title=title)
        print(f"wrote {png}", file=sys.stderr)
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    _positive(args.threads, "--threads")
    if args.dtype and args.format != "bin":
        raise CommandError("--dtype is for --format bin")
    _input_paths(args.files)  # a missing file is reported before the tokenizer is loaded
    tok = _load(args.tokenizer, args.data)
    dtype = files.choose_dtype(tok, args.dtype) if args.format == "bin" else None
    separator = _separator(args, tok)
    progress = files.Progress("encoding", _progress_on(args))
    with _output(args.output, binary_ok=args.format != "bin") as out:
        summary = files.encode_stream(tok, _documents(args, tok, progress), out, format=args.format, dtype=dtype,
                                      separator=separator, special=args.special, threads=args.threads,
                                      progress=progress)
    progress.finish()
    if args.output:
        kind = f" as {summary.dtype}" if summary.dtype else ""
        print(f"encoded {summary.documents} document(s), {_megabytes(summary.bytes)} -> {summary.tokens:,} tokens "
              f"({summary.bytes_per_token:.2f} bytes/token){kind} in {summary.seconds:.1f} s -> {args.output}"
              + (f"; {separator} after each document" if separator else ""), file=sys.stderr)
    return 0


def _separator(args: argparse.Namespace, tok: bytepair.Tokenizer) -> str | None:
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
    tok = _load(args.tokenizer, args.data)
    dtype = files.choose_dtype(tok, args.dtype) if args.format == "bin" else None
    join = None if args.join is None else _unescape(args.join)
    with contextlib.ExitStack() as stack:
        stream: BinaryIO = sys.stdin.buffer if args.file == "-" else stack.enter_context(open(args.file, "rb"))
        out = stack.enter_context(_output(args.output))
        files.decode_stream(tok, stream, out, format=args.format, dtype=dtype, join=join,
                            separator=_separator(args, tok))
    return 0


def cmd_count(args: argparse.Namespace) -> int:
    _positive(args.threads, "--threads")
    paths = _input_paths(args.files)
    tok = _load(args.tokenizer, args.data)
    rows = []
    for path in paths:
        one = argparse.Namespace(**{**vars(args), "files": [path]})
        progress = files.Progress(f"counting {path}", _progress_on(args))
        summary = files.encode_stream(tok, _documents(one, tok, progress), None, special=args.special,
                                      threads=args.threads, progress=progress)
        progress.finish()
        rows.append((summary, "standard input" if path == "-" else path))
    if len(rows) == 1:
        print(rows[0][0].tokens)
        return 0
    for summary, name in rows:
        print(f"{summary.tokens}\t{name}")
    print(f"{sum(s.tokens for s, _ in rows)}\ttotal")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from . import describe

    _positive(args.top, "--top", 0)
    if args.vocab and args.json:
        raise CommandError("--vocab and --json: choose one (the vocabulary as id<TAB>token lines, or the summary "
                           "as JSON)")
    tok = _load(args.tokenizer, args.data)
    out = sys.stdout
    if args.vocab:
        for line in describe.vocabulary_lines(tok):
            out.write(line + "\n")
        return 0
    info = describe.describe(tok, longest=args.top, merges=args.top)
    if args.json:
        import dataclasses

        json.dump(dataclasses.asdict(info), out, ensure_ascii=False, indent=1)
        out.write("\n")
    else:
        out.write(info.render() + "\n")
    return 0


def _read_text_argument(value: str, errors: str = "strict") -> tuple[str, str]:
    """The text of `viz`: standard input, a file's content, or the argument itself. Returns (text, label)."""
    if value == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors=errors), "standard input"
    if "\n" not in value and len(value) < 4096 and os.path.isfile(value):
        stream, _ = files.open_text(value, errors)
        try:
            with stream:
                return stream.read(), value
        except UnicodeDecodeError as e:
            raise CommandError(f"{value} is not UTF-8 ({e.reason} at byte {e.start}); pipe a converted copy "
                               f"(e.g. iconv -f latin1 {value} | bytepair viz ...)") from None
    if "\n" not in value and len(value) < 4096 and os.path.isdir(value):
        raise CommandError(f"{value} is a folder: give a file, a text, or - for standard input")
    if bytepair._reads_as_a_path(value):
        # A word that looks like a path: most likely a file name mistyped, so say that it is shown as text.
        print(f"bytepair viz: note: there is no file {value!r}; showing the argument itself as text",
              file=sys.stderr)
    return value, "text"


def cmd_viz(args: argparse.Namespace) -> int:
    from . import viewer

    _positive(args.max_chars, "--max-chars")
    tok = _load(args.tokenizer, args.data)
    text, label = _read_text_argument(args.text)
    note = ""
    if len(text) > args.max_chars:
        note = f" (the first {args.max_chars:,} of {len(text):,} characters)"
        text = text[: args.max_chars]
    allowed = "all" if args.special == "allow" else ()
    if args.html:
        page = viewer.html_page(tok, text, title=f"bytepair: {label}{note}", name=f"{args.tokenizer}: {tok!r}",
                                allowed_special=allowed)
        with _output(args.html) as out:
            out.write(page.encode("utf-8"))
        st = viewer.stats(text, viewer.segments(tok, text, allowed_special=allowed))
        print(f"wrote {args.html}: {st.line()}", file=sys.stderr)
        return 0
    if args.color == "auto":
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    else:
        color = args.color == "always"
    segs = viewer.segments(tok, text, allowed_special=allowed)
    sys.stdout.write(viewer.terminal(tok, text, color=color, ids=args.ids, allowed_special=allowed) + "\n")
    dim, reset = ("\x1b[2m", "\x1b[0m") if color else ("", "")
    sys.stdout.write(f"{dim}{viewer.stats(text, segs).line()}{note}{reset}\n")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    png = _png_path(args.png) if args.png else None  # checked before the work
    from . import compare

    _positive(args.threads, "--threads")
    if args.json and args.markdown:
        raise CommandError("--json and --markdown: choose one")
    if not args.tokenizers and not args.baselines:
        raise CommandError("nothing to compare: give tokenizers with -t (and/or --baseline bytes|chars|words)")
    tokenizers: dict[str, bytepair.Tokenizer | str] = {}
    for spec in args.tokenizers:
        label, spec = _labelled(spec)
        if label in tokenizers:
            raise CommandError(f"two tokenizers are named {label!r}: label them, e.g. -t a={spec}")
        tokenizers[label] = _load(spec, args.data)
    for base in args.baselines:
        tokenizers[base] = base
    progress = files.Progress("comparing", _progress_on(args))
    pieces = files.documents(_input_paths(args.files), jsonl_field=args.jsonl_field,
                             cut=all(isinstance(t, str) or files.can_cut(t) for t in tokenizers.values()),
                             errors=args.errors, progress=progress)
    rows = compare.compare(tokenizers, ([p.text for p in batch] for batch in files.batches(pieces)),
                           threads=args.threads)
    progress.finish()
    if args.json:
        json.dump([r.as_dict() for r in rows], sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        corpus = rows[0]
        print(f"corpus: {', '.join(args.files)}: {_megabytes(corpus.bytes)}, {corpus.characters:,} characters, "
              f"{corpus.words:,} words (split at whitespace)")
        print(compare.table(rows, markdown=args.markdown))
    if png:
        compare.chart(rows, png, title=f"{', '.join(os.path.basename(f) for f in args.files)[:80]}")
        print(f"wrote {png}", file=sys.stderr)
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from .explain import explain

    if args.merges is not None:
        _positive(args.merges, "--merges", 0)
    counts: dict[str, int] | None = None
    if args.words:
        if args.text is not None:
            raise CommandError("give words or --text, not both")
        counts = {}
        for item in args.words:
            word, colon, number = item.rpartition(":")
            if not colon:
                word, number = item, "1"
            if not word or not number.isdigit():
                raise CommandError(f"{item!r}: write a word with its count, like hug:10")
            counts[word] = counts.get(word, 0) + int(number)
    pattern = None if args.pattern.lower() == "none" else args.pattern
    lecture = explain(counts, text=args.text, merges=args.merges, mode=args.mode, pattern=pattern,
                      tie_break=args.tie_break, words=args.tokenize)
    print(lecture)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from . import demo

    argv = ["--vocab-size", str(args.vocab_size)] + (["--save", args.save] if args.save else [])
    return demo.main(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
