"""The `bytepair` command line (also `python -m bytepair`): train, encode, decode, count, inspect, viz,
compare, explain, dna-stats. Each command is a `cmd_*` function over the library, in the module of its kind
(`train`, `encode`, `show`, `stats`); `parser` holds the arguments, `common` what the commands share. This
package only parses arguments and prints.

Errors print one line, `bytepair <command>: error: ...`, and exit with status 1 (2 for bad arguments);
`--verbose` shows the traceback too.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import traceback
import warnings
from collections.abc import Sequence

from .common import CommandError
from .parser import build_parser, misspelt_option

__all__ = ["CommandError", "build_parser", "clear_progress_line", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line with `argv` (default: sys.argv[1:]) and returns the exit status."""
    parser = build_parser()
    misspelt = misspelt_option(parser, sys.argv[1:] if argv is None else list(argv))
    if misspelt is not None:
        command, message = misspelt
        command.error(message)
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    name = f"bytepair {args.command}"
    verbose = getattr(args, "verbose", False)
    try:
        with warnings.catch_warnings():
            if not verbose:  # "bytepair train: warning: ...", not Python's file, line and source line
                warnings.showwarning = lambda message, *_, **__: print(
                    f"{name}: warning: {_in_option_words(str(message))}", file=sys.stderr
                )
            return int(args.run(args) or 0)
    except KeyboardInterrupt:
        clear_progress_line()
        print(f"{name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `bytepair encode ... | head`: the reader has gone, which is fine
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 0
    except CommandError as e:
        clear_progress_line()
        if verbose:
            traceback.print_exc()
        print(f"{name}: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        clear_progress_line()
        if verbose:
            traceback.print_exc()
        print(f"{name}: error: {_message(e)}", file=sys.stderr)
        return 1


def clear_progress_line() -> None:
    """Takes a progress bar that a failed or interrupted command left on the terminal's current line away, so that
    the message does not run on after it (nothing is written where stderr is not a terminal)."""
    with contextlib.suppress(AttributeError, ValueError, OSError):
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


# The library's messages name its arguments; on the command line, the options that set them.
_OPTION_WORDS = [
    (re.compile(r"\bvocab_size=(\d+)"), r"--vocab-size \1"),
    (re.compile(r'\bunk_token="\[UNK\]"'), "--unk-token '[UNK]'"),
    (re.compile(r"\binitial_alphabet=\[\.\.\.\]"), "--initial-alphabet CHARS"),
    (re.compile(r'\berrors="replace"'), "--errors replace"),
    (
        re.compile(r"\(path=\.\.\. in Python, or set BYTEPAIR_DATA=folder for the command line\)"),
        "(--data FOLDER, or BYTEPAIR_DATA=FOLDER)",
    ),
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
