"""The command line's arguments: one subparser per command, each run by a `cmd_*` function of the module for
its command. A misspelt command, choice or option gets the nearest one suggested (`Parser`, `misspelt_option`)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import NoReturn

from .. import __version__
from .._checks import did_you_mean, nearest
from ..compat.transformers import CONFIG_FILE, SPECIAL_TOKENS_MAP_FILE
from ..formats.folder import HF_FILE, OUR_FILE, TIKTOKEN_FILE
from ..viewer import MAX_PAGE_TOKENS
from .encode import cmd_count, cmd_decode, cmd_encode
from .scale import cmd_words
from .show import cmd_compare, cmd_demo, cmd_explain, cmd_inspect, cmd_viz
from .stats import cmd_dna_stats
from .train import cmd_train, vocab_sizes

EXAMPLES = """\
examples:
  bytepair train corpus.txt --vocab-size 8192 -o tok/
      train a byte-level tokenizer; writes tok/bytepair.json, tok/tokenizer.json (HF) and tok/tokenizer.tiktoken
  zcat books/*.gz | bytepair train - --vocab-size 32000 --special-token '<|endoftext|>' -o tok/
  bytepair train docs.jsonl.gz --field text --vocab-size 16000 -o tok/
  bytepair train --fasta genome.fa.gz --vocab-size 4096 --chunk-length 1000 -o dna/
      a DNA tokenizer (A/C/G/T/N, no pre-tokenization, [UNK] for other letters)
  bytepair dna-stats -t dna/ genome.fa.gz --png lengths.png     bases per token, k-mer lengths
  printf "Hello world" | bytepair encode -t gpt2               ->  15496 995
  bytepair encode corpus.txt -t tok/ --format bin --dtype uint16 -o corpus.bin
  bytepair encode 'data/*.jsonl.zst' -t gpt2 --output-dir shards/ --shard-size 1GB --workers 8
      Megatron .bin/.idx shards with a manifest; resumable; --engine ray for a Ray cluster
  bytepair words data/ -o counts.tsv && bytepair train --from-counts counts.tsv --vocab-size 32000 -o tok/
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


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors for a misspelt command or choice suggest the nearest one ("invalid choice:
    'trian' ... (did you mean 'train'?)"), and which knows its subcommands' parsers (`commands`)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.commands: dict[str, Parser] = {}

    @property
    def option_names(self) -> list[str]:
        """Every option string this parser takes (--vocab-size, -o, ...), its groups' included."""
        return [name for action in self._actions for name in action.option_strings]

    def error(self, message: str) -> NoReturn:
        found = re.match(r"(argument .*?: invalid choice: '(.*?)') \(choose from (.*)\)$", message)
        if found:
            choices = [c.strip().strip("'\"") for c in found.group(3).split(",")]
            suggestion = did_you_mean(found.group(2), choices)
            if suggestion:
                message = f"{found.group(1)}{suggestion}; the choices are {found.group(3)}"
        super().error(message)


def misspelt_option(parser: Parser, argv: Sequence[str]) -> tuple[Parser, str] | None:
    """The parser to report with and its message, for the first long option in `argv` that its command does not
    take (nor any of its options start with: argparse takes unique prefixes) but that is near one of them:
    "unrecognized option --vocab-szie (did you mean --vocab-size?)". None when every option is known, or an unknown
    one is near none (argparse then says what it says).

    >>> misspelt_option(build_parser(), ["train", "x.txt", "--vocab-szie", "300"])[1]
    'unrecognized option --vocab-szie (did you mean --vocab-size?)'
    """
    command = parser
    for token in argv:
        if token == "--":
            break
        if command is parser and token in parser.commands:
            command = parser.commands[token]
            continue
        if not token.startswith("--") or token == "--":
            continue
        name = token.split("=", 1)[0]
        known = command.option_names + (parser.option_names if command is not parser else [])
        if any(option.startswith(name) for option in known):
            continue
        near = nearest(name, [option for option in known if option.startswith("--")])
        if near is not None:
            return command, f"unrecognized option {name} (did you mean {near}?)"
    return None


def build_parser() -> Parser:
    common = Parser(add_help=False)
    common.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an error"
    )
    parser = Parser(
        prog="bytepair",
        description="Byte-Pair Encoding tokenizers: train, encode, decode, count, inspect, view and compare them.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    # No default for --verbose here: set_defaults would reach the action the subcommands share (`parents`), and
    # each subcommand would then reset a `bytepair -v COMMAND` to False.
    parser.add_argument("--version", action="version", version=f"bytepair {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    def command(name: str, help: str, examples: str) -> Parser:
        p = sub.add_parser(
            name,
            help=help,
            description=help,
            parents=[common],
            epilog="examples:\n" + examples,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        assert isinstance(p, Parser)
        parser.commands[name] = p
        return p

    # train
    p = command(
        "train",
        "train a BPE tokenizer on text files (or standard input), or on FASTA/FASTQ files (DNA), and save it",
        """\
  bytepair train corpus.txt --vocab-size 8192 -o tok/
  bytepair train 'data/*.txt.gz' --vocab-size 32000 --special-token '<|endoftext|>' -o tok/
  cat corpus.txt | bytepair train - --vocab-size 1000 --mode char --unk-token '[UNK]' -o tok/
  bytepair train docs.jsonl --vocab-size 16000 --tie-break hf -o tok/       (each record's "text")
  bytepair train 'data/*.parquet' --field content --vocab-size 32000 --engine local --workers 4 -o tok/
  bytepair train --from-counts counts.tsv --vocab-size 32000 -o tok/
  bytepair train --fasta genome.fa.gz --vocab-size 4096 --chunk-length 1000 -o dna/
  bytepair train --fasta 'reads/*.fq.gz' --vocab-size 4096 --reverse-complement -o dna/
  bytepair train corpus.txt --vocab-size 8000,16000,32000 -o sweep/
      one run, one folder per size: sweep/8000/, sweep/16000/, sweep/32000/
  bytepair train code.txt --extend gpt2 --vocab-size 52000 -o gpt2-code/
      GPT-2's 50257 ids kept, new tokens learned on code.txt from id 50257 on
  bytepair train corpus.txt --vocab-size 32000 --superwords-after 24000 -o super/
      SuperBPE: tokens may cross spaces past 24000 ("ĠofĠthe")
  bytepair train corpus.txt --vocab-size 8000 --forbid-across newline --veto '\\d\\p{L}|\\p{L}\\d' -o tok/""",
    )
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="files, folders or globs of text (each line one text), JSON lines or parquet files (each record one "
        "text), plain or .gz/.zst/.xz/.bz2; - for standard input",
    )
    p.add_argument(
        "--fasta",
        nargs="+",
        default=[],
        metavar="FASTA",
        help="FASTA/FASTQ files (plain or .gz) "
        "to train a DNA tokenizer on instead: the `dna` preset (see bytepair.train_dna)",
    )
    p.add_argument(
        "--vocab-size",
        type=vocab_sizes,
        required=True,
        metavar="N",
        help="size of the vocabulary, special tokens and base alphabet included; or sizes separated by commas "
        "(8000,16000,32000): one run, written to one folder per size under -o",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="DIR",
        help=f"folder to write the tokenizer to ({OUR_FILE}, {HF_FILE} with transformers' {CONFIG_FILE} and "
        f"{SPECIAL_TOKENS_MAP_FILE}, and {TIKTOKEN_FILE} for byte-level ones)",
    )
    # Options of one kind of training only default to None (resolved in cmd_train), so that giving one with
    # its default value to the other kind is still seen and refused.
    p.add_argument("--mode", choices=["byte", "char"], help="symbols are UTF-8 bytes (default) or characters")
    p.add_argument(
        "--pattern",
        metavar="PATTERN",
        help="pre-tokenization: gpt2 (default), cl100k, o200k, whitespace, none, or a regex",
    )
    p.add_argument(
        "--unmatched",
        choices=["keep", "drop", "error"],
        help="with a regex --pattern, text it does not match: keep (default: pieces of its own), drop, or error",
    )
    p.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="TOKEN",
        dest="special_tokens",
        help="a special token (repeat for several); they get the first ids",
    )
    p.add_argument(
        "--initial-alphabet",
        metavar="ALPHABET",
        help='"all" (every byte, default), "corpus" (symbols seen), or characters to add, e.g. ACGT',
    )
    p.add_argument(
        "--min-frequency", type=int, default=0, metavar="N", help="stop when the best pair occurs fewer times"
    )
    p.add_argument("--lowercase", action="store_true", help="lowercase the text (when encoding too)")
    p.add_argument("--continuing-subword-prefix", metavar="PREFIX", help='e.g. "##"')
    p.add_argument("--end-of-word-suffix", metavar="SUFFIX", help='e.g. "</w>"')
    p.add_argument(
        "--unk-token",
        metavar="TOKEN",
        help='token for unknown characters (char mode), e.g. "[UNK]"; also its role for transformers',
    )
    roles_options(p)
    p.add_argument("--max-token-length", type=int, metavar="N", help="longest token, in symbols")
    p.add_argument("--limit-alphabet", type=int, metavar="N", help="char mode: keep the N most frequent characters")
    p.add_argument(
        "--tie-break",
        choices=["first_seen", "hf", "lexicographic"],
        help="which of several equally frequent pairs to merge (default: first_seen, the textbook's; with "
        "--extend, the tokenizer's own)",
    )
    field_option(p)
    p.add_argument(
        "--errors",
        choices=["strict", "replace"],
        default="strict",
        help="bytes that are not UTF-8: stop (default) or replace them",
    )
    grow = p.add_argument_group("extending, superwords and merge control")
    grow.add_argument(
        "--extend",
        metavar="TOKENIZER",
        help="continue this tokenizer (a folder, a tokenizer file, or gpt2, cl100k_base...): its ids and merges "
        "stay, new tokens follow; it gives the pattern, special tokens and normaliser",
    )
    grow.add_argument(
        "--data",
        metavar="DIR",
        help="folder with the files of named encodings for --extend (default: $BYTEPAIR_DATA, then tiktoken's cache)",
    )
    grow.add_argument(
        "--superwords-after",
        type=int,
        metavar="N",
        help="SuperBPE: from vocabulary size N on, merges may cross the spaces between words",
    )
    grow.add_argument(
        "--veto",
        metavar="REGEX",
        help="never make a token whose text this regex matches (searched in it)",
    )
    grow.add_argument(
        "--veto-bytes",
        metavar="REGEX",
        help="the same for a regex over the token's bytes (\\xNN for a byte)",
    )
    grow.add_argument(
        "--forbid-across",
        action="append",
        default=[],
        metavar="CLASS",
        help="no token straddles this class: newline, whitespace, digit, letter, punctuation, or characters "
        "(repeat for several)",
    )
    p.add_argument(
        "--from-counts",
        metavar="COUNTS",
        help="train from a word-counts file (bytepair words -o COUNTS) instead of FILEs: its pattern, "
        "lowercasing and special tokens are used",
    )
    scale_options(p, default_engine=None)
    dna = p.add_argument_group("DNA options (with --fasta)")
    dna.add_argument("--alphabet", help="base symbols (default ACGTN); other letters are [UNK]")
    dna.add_argument(
        "--chunk-length", type=int, metavar="N", help="cut sequences into windows of N bases (default: whole sequences)"
    )
    dna.add_argument(
        "--ambiguous",
        choices=["split", "drop", "keep"],
        help="N and other IUPAC codes: split sequences at them (default), drop or keep them",
    )
    dna.add_argument(
        "--reverse-complement", action="store_true", help="count both strands: each sequence and its reverse complement"
    )
    dna.add_argument("--keep-case", action="store_true", help="do not fold lowercase (soft-masked) bases to uppercase")
    threads_progress(p)
    p.set_defaults(run=cmd_train)

    # encode
    p = command(
        "encode",
        "encode text files (or standard input) to token ids",
        """\
  echo "Hello world" | bytepair encode -t gpt2
  bytepair encode a.txt b.txt -t tok/ --format json -o ids.jsonl
  bytepair encode corpus.txt.gz -t tok/ --format bin --dtype uint16 --separator '<|endoftext|>' -o corpus.bin
      python: numpy.memmap("corpus.bin", dtype=numpy.uint16, mode="r")
  bytepair encode docs.jsonl -t cl100k_base --format bin --dtype uint32 -o docs.bin       (each record's "text")
  bytepair encode --fasta genome.fa.gz -t dna/ --chunk-length 1000 --format bin -o genome.bin
  bytepair encode 'data/*.parquet' -t gpt2 --output-dir shards/ --shard-size 512MB --val-fraction 0.001
  bytepair encode data/ -t o200k_base --output-dir shards/ --engine ray --ray-address auto --workers 64""",
    )
    tokenizer_option(p)
    p.add_argument(
        "files",
        nargs="*",
        default=["-"],
        metavar="FILE",
        help="files, folders or globs of text, JSON lines or parquet files (plain or .gz/.zst/.xz/.bz2), or - "
        "for standard input (the default)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="where to write (default: standard output)")
    p.add_argument(
        "--output-dir",
        metavar="DIR",
        help="write shards into DIR instead (--format megatron or bin), with DIR/manifest.json; run the same "
        "command again to resume",
    )
    p.add_argument(
        "--format",
        choices=["text", "json", "bin", "megatron"],
        help="text: ids separated by spaces, one line per document (default); json: a JSON array per "
        "document and line; bin: raw little-endian integers, numpy.memmap-readable; with --output-dir: "
        "megatron (default: .bin + .idx) or bin (.bin + .offsets.npy)",
    )
    p.add_argument(
        "--dtype",
        choices=["uint16", "uint32"],
        help="integer type of --format bin (default: uint16 if every id fits, else uint32)",
    )
    p.add_argument(
        "--separator",
        metavar="TOKEN",
        help="a special token written after each document (default "
        "for --format bin: <|endoftext|> if the tokenizer has it; 'none' for no separator)",
    )
    document_options(p)
    fasta_input_options(p)
    threads_progress(p)
    shard_options(p)
    scale_options(p, default_engine=None)
    p.set_defaults(run=cmd_encode)

    # words
    p = command(
        "words",
        "count the words of a corpus (pre-tokenized as training does) into a file to train from, several times",
        """\
  bytepair words corpus.txt -o counts.tsv
  bytepair words 'data/*.jsonl.zst' --workers 8 -o counts.tsv
  bytepair words data/ --engine ray --ray-address auto -o counts.tsv
  bytepair train --from-counts counts.tsv --vocab-size 32000 -o tok/""",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="INPUT",
        help="files, folders or globs of text (each line one text), JSON lines or parquet files (each record "
        "one text), plain or .gz/.zst/.xz/.bz2",
    )
    p.add_argument("-o", "--output", required=True, metavar="COUNTS", help="the counts file to write (TSV)")
    p.add_argument(
        "--pattern", default="gpt2", help="pre-tokenization: gpt2 (default), cl100k, o200k, whitespace, none or a regex"
    )
    p.add_argument("--lowercase", action="store_true", help="lowercase the text first")
    p.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="TOKEN",
        dest="special_tokens",
        help="a special token, cut out of the text (repeat for several)",
    )
    field_option(p)
    p.add_argument(
        "--errors",
        choices=["strict", "replace"],
        default="strict",
        help="bytes that are not UTF-8: stop (default) or replace them",
    )
    threads_progress(p)
    scale_options(p, default_engine="local")
    p.set_defaults(run=cmd_words)

    # decode
    p = command(
        "decode",
        "decode token ids (text, JSON lines, or a binary token file) back to text",
        """\
  echo 15496 995 | bytepair decode -t gpt2
  bytepair decode ids.jsonl -t tok/ --format json
  bytepair decode corpus.bin -t tok/ --format bin --dtype uint16 -o corpus.txt""",
    )
    tokenizer_option(p)
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="ids to decode (default: standard input)")
    p.add_argument("-o", "--output", metavar="FILE", help="where to write the text (default: standard output)")
    p.add_argument(
        "--format",
        choices=["text", "json", "bin"],
        default="text",
        help="how the ids are written (as `bytepair encode --format` writes them)",
    )
    p.add_argument("--dtype", choices=["uint16", "uint32"], help="integer type of --format bin (default: as encode)")
    p.add_argument(
        "--join",
        metavar="TEXT",
        help=r"written between documents (default: a line break; "
        r"escapes like \n are understood)",
    )
    p.add_argument(
        "--separator",
        metavar="TOKEN",
        help="--format bin: the special token that ends each document, "
        "replaced by --join (default: <|endoftext|> if the tokenizer has it, as encode writes it; 'none' "
        "to decode it as text)",
    )
    p.set_defaults(run=cmd_decode)

    # count
    p = command(
        "count",
        "count the tokens of text files (or standard input)",
        """\
  bytepair count -t cl100k_base README.md
  cat notes.txt | bytepair count -t o200k_base
  bytepair count -t tok/ data/*.txt""",
    )
    tokenizer_option(p)
    p.add_argument("files", nargs="*", default=["-"], metavar="FILE", help="text files, or - for standard input")
    document_options(p)
    threads_progress(p)
    p.set_defaults(run=cmd_count)

    # inspect
    p = command(
        "inspect",
        "show what is in a tokenizer: sizes, special tokens, longest tokens, merges, vocabulary",
        """\
  bytepair inspect tok/
  bytepair inspect cl100k_base --top 20
  bytepair inspect tok/ --vocab > vocab.tsv""",
    )
    p.add_argument("tokenizer", metavar="TOKENIZER", help="a folder, a tokenizer file or an encoding name")
    data_option(p)
    p.add_argument(
        "--top",
        type=int,
        default=10,
        metavar="N",
        help="how many longest tokens and first/last merges to show (default 10)",
    )
    p.add_argument(
        "--vocab",
        action="store_true",
        help="print the whole vocabulary, one `id<TAB>token` line each (invisible characters escaped)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON (not with --vocab)")
    p.set_defaults(run=cmd_inspect)

    # viz
    p = command(
        "viz",
        "show how a text is tokenized: coloured tokens in the terminal, or an HTML page",
        """\
  bytepair viz cl100k_base "Hello, world! 🎉"
  bytepair viz tok/ README.md --ids
  bytepair viz gpt2 story.txt --html tokens.html""",
    )
    p.add_argument("tokenizer", metavar="TOKENIZER", help="a folder, a tokenizer file or an encoding name")
    p.add_argument(
        "text",
        nargs="?",
        default="-",
        metavar="TEXT|FILE",
        help="the text, or a file to read (default: standard input)",
    )
    data_option(p)
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML page instead")
    p.add_argument("--ids", action="store_true", help="show each token's id")
    p.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="colour the tokens (auto: when writing to a terminal and NO_COLOR is not set); without "
        "colour, tokens are separated by |",
    )
    p.add_argument(
        "--special",
        choices=["allow", "text"],
        default="allow",
        help="special-token text: show it as the special token (default) or as ordinary text",
    )
    p.add_argument(
        "--max-chars",
        type=int,
        default=1_000_000,
        metavar="N",
        help="show at most this many characters of the text (default 1000000)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=MAX_PAGE_TOKENS,
        metavar="N",
        help=f"--html: draw at most this many tokens on the page, which says so (default {MAX_PAGE_TOKENS}: a "
        "larger page takes a browser long to draw); its numbers are the whole text's",
    )
    p.set_defaults(run=cmd_viz)

    # compare
    p = command(
        "compare",
        "compare tokenizers on a corpus: bytes per token, tokens per word, vocabulary use",
        """\
  bytepair compare -t gpt2 -t cl100k_base -t o200k_base corpus.txt
  bytepair compare -t char=tok-char/ -t byte=tok-byte/ --baseline chars --baseline words corpus.txt --png cmp.png
  bytepair compare -t cl100k_base --baseline bytes docs.jsonl --json""",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="the corpus: text files (.gz), or - for standard input")
    p.add_argument(
        "-t",
        "--tokenizer",
        action="append",
        default=[],
        metavar="[NAME=]TOKENIZER",
        dest="tokenizers",
        help="a tokenizer to compare (repeat for several); NAME= labels it",
    )
    p.add_argument(
        "--baseline",
        action="append",
        default=[],
        choices=["bytes", "chars", "words"],
        dest="baselines",
        help="add a level without merges: one token per byte, character or whitespace-separated word",
    )
    data_option(p)
    p.add_argument("--png", metavar="FILE", help="write a bar chart (needs matplotlib)")
    p.add_argument("--json", action="store_true", help="print the numbers as JSON")
    p.add_argument("--markdown", action="store_true", help="print a markdown table (not with --json)")
    field_option(p)
    p.add_argument(
        "--errors",
        choices=["strict", "replace"],
        default="strict",
        help="bytes that are not UTF-8: stop (default) or replace them",
    )
    threads_progress(p)
    p.set_defaults(run=cmd_compare)

    # dna-stats
    p = command(
        "dna-stats",
        "how DNA tokenizers cut FASTA/FASTQ sequences: bases per token, k-mer lengths, "
        "token-length histograms (several tokenizers side by side)",
        """\
  bytepair dna-stats -t dna/ genome.fa.gz
  bytepair dna-stats -t dna/ genome.fa.gz --chunk-length 1000 --png lengths.png
  bytepair dna-stats -t 4k=dna4k/ -t 16k=dna16k/ genome.fa.gz --png compare.png
  bytepair dna-stats -t dna/ reads.fq.gz --json""",
    )
    p.add_argument(
        "-t",
        "--tokenizer",
        action="append",
        required=True,
        metavar="[NAME=]TOKENIZER",
        dest="tokenizers",
        help="a DNA tokenizer (a folder written by `bytepair train --fasta`, or a "
        "tokenizer file); repeat to compare several, NAME= labels one",
    )
    data_option(p)
    p.add_argument("fasta", nargs="+", metavar="FASTA", help="FASTA/FASTQ files (plain or .gz)")
    p.add_argument("--chunk-length", type=int, metavar="N", help="encode windows of N bases (default: whole sequences)")
    p.add_argument(
        "--ambiguous",
        choices=["keep", "split", "drop"],
        default="keep",
        help="N and IUPAC codes: keep them (default: they encode as N or [UNK]), split or drop",
    )
    p.add_argument("--keep-case", action="store_true", help="do not uppercase the sequences before encoding")
    p.add_argument("--png", metavar="FILE", help="write token-length histograms (needs matplotlib)")
    p.add_argument("--json", action="store_true", help="print the numbers as JSON")
    p.add_argument("--threads", type=int, metavar="N", help="threads to use (default, and at most: every core)")
    p.set_defaults(run=cmd_dna_stats)

    # explain
    p = command(
        "explain",
        "BPE step by step on a small corpus: pair counts, each merge, the corpus after it",
        """\
  bytepair explain                                   the textbook example: hug pug pun bun hugs
  bytepair explain low:5 lower:2 newest:6 widest:3   your own word counts
  bytepair explain --text "the cat sat on the mat" --merges 4
  bytepair explain --tie-break hf""",
    )
    p.add_argument("words", nargs="*", metavar="WORD[:COUNT]", help="words with their counts (default: the textbook's)")
    p.add_argument("--text", help="a text whose words to count instead")
    p.add_argument("--merges", type=int, metavar="N", help="stop after N merges (default: when no pair is left)")
    p.add_argument("--mode", choices=["char", "byte"], default="char", help="symbols: characters (default) or bytes")
    p.add_argument("--pattern", default="whitespace", help="how --text is cut into words (default: whitespace)")
    p.add_argument("--tie-break", choices=["first_seen", "hf", "lexicographic"], default="first_seen")
    p.add_argument("--tokenize", action="append", metavar="WORD", help="a new word to tokenize at the end (repeat)")
    p.set_defaults(run=cmd_explain)

    # demo
    p = command(
        "demo",
        "train on the Python standard library's sources and show the result (as `make demo`)",
        "  bytepair demo --vocab-size 4096",
    )
    p.add_argument("--vocab-size", type=int, default=8192)
    p.add_argument("--save", metavar="PATH", help="where to write the tokenizer (bytepair format)")
    p.set_defaults(run=cmd_demo)
    return parser


def tokenizer_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-t",
        "--tokenizer",
        required=True,
        metavar="TOKENIZER",
        help="a folder written by `bytepair train`, a tokenizer file, or gpt2, r50k_base, p50k_base, "
        "cl100k_base, o200k_base",
    )
    data_option(p)


def data_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data",
        metavar="DIR",
        help="folder with the files of named encodings (default: $BYTEPAIR_DATA, then tiktoken's cache)",
    )


def document_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--documents",
        choices=["file", "line"],
        default="file",
        help="what one document is: a whole file (default) or each line (its line break left out)",
    )
    field_option(p)
    p.add_argument(
        "--special",
        choices=["error", "allow", "text"],
        default="error",
        help="special-token text such as <|endoftext|> in the input: error (default, as tiktoken), "
        "allow (encode it as the special token) or text (encode it as ordinary text)",
    )
    p.add_argument(
        "--errors",
        choices=["strict", "replace"],
        default="strict",
        help="bytes that are not UTF-8: stop (default) or replace them",
    )


def threads_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=int, metavar="N", help="threads to use (default, and at most: every core)")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (default: when stderr is a terminal)",
    )


def field_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--field",
        "--jsonl-field",
        dest="jsonl_field",
        metavar="NAME",
        help="the key (JSON lines) or column (parquet) holding each record's text (default: text); given for "
        "another file, the file is read as JSON lines",
    )


def shard_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("shards (with --output-dir)")
    group.add_argument(
        "--shard-size",
        metavar="SIZE",
        help="target size of a shard's token data, e.g. 64MB, 1GB (default); shards end at documents",
    )
    group.add_argument(
        "--val-fraction",
        type=float,
        default=0.0,
        metavar="F",
        help="share of documents written to validation shards (val-NNNNN), chosen by a stable hash of their "
        "file and place",
    )
    group.add_argument("--overwrite", action="store_true", help="replace the shards of another job in --output-dir")
    group.add_argument(
        "--verify", action="store_true", help="check the checksums of shards kept from an earlier run (else: sizes)"
    )


def scale_options(p: argparse.ArgumentParser, default_engine: str | None) -> None:
    group = p.add_argument_group("workers (for --output-dir, and training at scale)")
    group.add_argument(
        "--engine",
        choices=["local", "ray"],
        default=default_engine,
        help="run the work in worker processes on this machine (local) or on Ray (a local Ray, or the "
        "cluster at --ray-address)" + ("" if default_engine else "; train: count words in workers"),
    )
    group.add_argument("--workers", type=int, metavar="N", help="workers at once (default: the cores)")
    group.add_argument("--ray-address", metavar="ADDR", help="the Ray cluster to join (e.g. auto, or ray://host:10001)")
    group.add_argument(
        "--max-record-size",
        default="64MB",
        metavar="SIZE",
        help="the longest line or record read (default 64MB): memory per worker is bounded by it",
    )


def roles_options(p: argparse.ArgumentParser) -> None:
    """train's --bos-token, --eos-token, --pad-token: the special tokens' roles in the files for transformers."""
    group = p.add_argument_group(
        "roles for transformers (tokenizer_config.json; default: <|endoftext|> or </s> is eos, <s> bos, <pad> pad, "
        "when they are special tokens)"
    )
    for role, example in (("bos", "<s>"), ("eos", "</s>"), ("pad", "<pad>")):
        group.add_argument(
            f"--{role}-token",
            metavar="TOKEN",
            help=f"the {role} token, e.g. {example!r} (added as a special token if not listed)",
        )


def fasta_input_options(p: argparse.ArgumentParser) -> None:
    """encode's --fasta: the files are FASTA/FASTQ, read record by record as `train --fasta` and dna-stats read
    them (each record, or window, one document)."""
    group = p.add_argument_group("DNA input (with --fasta)")
    group.add_argument(
        "--fasta",
        action="store_true",
        help="the files are FASTA/FASTQ (plain or .gz): encode each record's sequence, uppercased, as one "
        "document (headers and line breaks are not text to encode)",
    )
    group.add_argument(
        "--keep-case", action="store_true", help="do not fold lowercase (soft-masked) bases to uppercase"
    )
    group.add_argument(
        "--ambiguous",
        choices=["keep", "split", "drop"],
        default="keep",
        help="N and IUPAC codes: keep them (default), split records at them, or drop them",
    )
    group.add_argument("--chunk-length", type=int, metavar="N", help="encode windows of N bases, each a document")
