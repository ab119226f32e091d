"""`bytepair inspect`, `viz`, `compare`, `explain` and `demo`: looking at tokenizers and what they do to text."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .._tokenizer import Tokenizer
from ..corpus import can_cut, documents, open_text, reads_as_a_path
from ..progress import Progress
from ..streams import batches
from .common import CommandError, input_paths, labelled, load, megabytes, output, png_path, positive, progress_on


def cmd_inspect(args: argparse.Namespace) -> int:
    from .. import describe

    positive(args.top, "--top", 0)
    if args.vocab and args.json:
        raise CommandError(
            "--vocab and --json: choose one (the vocabulary as id<TAB>token lines, or the summary as JSON)"
        )
    tok = load(args.tokenizer, args.data)
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


def read_text_argument(value: str, errors: str = "strict") -> tuple[str, str]:
    """The text of `viz`: standard input, a file's content, or the argument itself. Returns (text, label)."""
    if value == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors=errors), "standard input"
    if "\n" not in value and len(value) < 4096 and os.path.isfile(value):
        stream, _ = open_text(value, errors)
        try:
            with stream:
                return stream.read(), value
        except UnicodeDecodeError as e:
            raise CommandError(
                f"{value} is not UTF-8 ({e.reason} at byte {e.start}); pipe a converted copy "
                f"(e.g. iconv -f latin1 {value} | bytepair viz ...)"
            ) from None
    if "\n" not in value and len(value) < 4096 and os.path.isdir(value):
        raise CommandError(f"{value} is a folder: give a file, a text, or - for standard input")
    if reads_as_a_path(value):
        # A word that looks like a path: most likely a file name mistyped, so say that it is shown as text.
        print(f"bytepair viz: note: there is no file {value!r}; showing the argument itself as text", file=sys.stderr)
    return value, "text"


def cmd_viz(args: argparse.Namespace) -> int:
    from .. import viewer

    positive(args.max_chars, "--max-chars")
    positive(args.max_tokens, "--max-tokens")
    tok = load(args.tokenizer, args.data)
    text, label = read_text_argument(args.text)
    note = ""
    if len(text) > args.max_chars:
        note = f" (the first {args.max_chars:,} of {len(text):,} characters)"
        text = text[: args.max_chars]
    allowed = "all" if args.special == "allow" else ()
    if args.html:
        page = viewer.html_page(
            tok,
            text,
            title=f"bytepair: {label}{note}",
            name=f"{args.tokenizer}: {tok!r}",
            allowed_special=allowed,
            max_tokens=args.max_tokens,
        )
        with output(args.html) as out:
            out.write(page.encode("utf-8"))
        st = viewer.stats(text, viewer.segments(tok, text, allowed_special=allowed))
        drawn = f" (the page draws the first {args.max_tokens:,})" if st.tokens > args.max_tokens else ""
        print(f"wrote {args.html}: {st.line()}{drawn}", file=sys.stderr)
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
    png = png_path(args.png) if args.png else None  # checked before the work
    from .. import compare

    positive(args.threads, "--threads")
    if args.json and args.markdown:
        raise CommandError("--json and --markdown: choose one")
    if not args.tokenizers and not args.baselines:
        raise CommandError("nothing to compare: give tokenizers with -t (and/or --baseline bytes|chars|words)")
    tokenizers: dict[str, Tokenizer | str] = {}
    for spec in args.tokenizers:
        label, spec = labelled(spec)
        if label in tokenizers:
            raise CommandError(f"two tokenizers are named {label!r}: label them, e.g. -t a={spec}")
        tokenizers[label] = load(spec, args.data)
    for base in args.baselines:
        tokenizers[base] = base
    progress = Progress("comparing", progress_on(args))
    pieces = documents(
        input_paths(args.files),
        jsonl_field=args.jsonl_field,
        cut=all(isinstance(t, str) or can_cut(t) for t in tokenizers.values()),
        errors=args.errors,
        progress=progress,
    )
    rows = compare.compare(tokenizers, ([p.text for p in batch] for batch in batches(pieces)), threads=args.threads)
    progress.finish()
    if args.json:
        json.dump([r.as_dict() for r in rows], sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        corpus = rows[0]
        print(
            f"corpus: {', '.join(args.files)}: {megabytes(corpus.bytes)}, {corpus.characters:,} characters, "
            f"{corpus.words:,} words (split at whitespace)"
        )
        print(compare.table(rows, markdown=args.markdown))
    if png:
        compare.chart(rows, png, title=f"{', '.join(os.path.basename(f) for f in args.files)[:80]}")
        print(f"wrote {png}", file=sys.stderr)
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from ..explain import explain

    if args.merges is not None:
        positive(args.merges, "--merges", 0)
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
    lecture = explain(
        counts,
        text=args.text,
        merges=args.merges,
        mode=args.mode,
        pattern=pattern,
        tie_break=args.tie_break,
        words=args.tokenize,
    )
    print(lecture)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .. import demo

    argv = ["--vocab-size", str(args.vocab_size)] + (["--save", args.save] if args.save else [])
    return demo.main(argv)
