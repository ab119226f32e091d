"""`make demo`: train a byte-level BPE tokenizer on the Python standard library's own sources (found through
`sysconfig`, so nothing is downloaded), then show what it learned.

Run it with `python -m bytepair.demo [--vocab-size N] [--save PATH]`.
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
import time
from pathlib import Path

import bytepair

SAMPLE = "def tokenize(self, text: str) -> list[str]:  # Byte-Pair Encoding, 2026 — naïve café ☕"


def stdlib_sources() -> list[Path]:
    """The standard library's .py files (site-packages excluded), in a stable order."""
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts and p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bytepair demo", description=__doc__.splitlines()[0])
    parser.add_argument("--vocab-size", type=int, default=8192)
    parser.add_argument("--save", type=Path, default=None, help="where to write the tokenizer (bytepair format)")
    args = parser.parse_args(argv)
    # Checked before the minute of training: a vocabulary smaller than the bytes and the special token, or a
    # save path that cannot be written.
    if args.vocab_size < 257:
        parser.error(f"--vocab-size {args.vocab_size}: at least 257 (the 256 bytes and <|endoftext|>)")
    if args.save is not None and (args.save.is_dir() or not args.save.parent.is_dir()):
        parser.error(
            f"--save {args.save}: "
            + (
                "is a folder; give a file name such as tok.json"
                if args.save.is_dir()
                else f"the folder {args.save.parent} does not exist"
            )
        )

    files = stdlib_sources()
    if not files:
        print("no .py files found under the standard library; is this a full Python install?", file=sys.stderr)
        return 1
    size = sum(f.stat().st_size for f in files)
    print(
        f"Corpus: {len(files)} .py files of the Python {sys.version.split()[0]} standard library, "
        f"{size / 1e6:.1f} MB (under {Path(sysconfig.get_paths()['stdlib'])})"
    )
    print(f"Training a byte-level BPE tokenizer (GPT-2 pre-tokenizer), vocab_size={args.vocab_size} …")
    start = time.perf_counter()
    tok = bytepair.train(
        files, args.vocab_size, special_tokens=["<|endoftext|>"], progress=True, errors="replace"
    )  # a few test files are deliberately Latin-1
    seconds = time.perf_counter() - start

    print()
    print(f"Trained in {seconds:.1f} s: {tok!r}")
    trace = tok.trace or []
    print("First merges:  " + "  ".join(f"{a}+{b} ({n})" for (a, b), n in trace[:8]))
    print("Last merges:   " + "  ".join(f"{a}+{b} ({n})" for (a, b), n in trace[-5:]))
    words = [
        t
        for t, i in tok.vocab.items()
        if t not in tok.special_tokens and any(c.isalpha() for c in tok.token_bytes(i).decode(errors="replace"))
    ]
    longest = sorted(words, key=lambda t: (-len(tok.token_bytes(tok.vocab[t])), tok.vocab[t]))[:6]
    print("Longest tokens with letters: " + "  ".join(repr(t) for t in longest))

    ids = tok.encode(SAMPLE)
    print()
    print(f"Sample: {SAMPLE!r}")
    print(f"Tokens ({len(ids)} for {len(SAMPLE.encode())} bytes):")
    print("  " + " | ".join(tok.tokenize(SAMPLE)))
    print("As text (a token that holds part of a UTF-8 character shows as �):")
    print("  " + "|".join(tok.decode([i]) for i in ids))
    print(f"Ids: {ids}")
    assert tok.decode(ids) == SAMPLE
    print("decode(encode(sample)) == sample ✓")

    text = files[0].read_text(encoding="utf-8")
    n = len(tok.encode(text, disallowed_special=()))
    print(
        f"{files[0].name}: {len(text.encode())} bytes → {n} tokens ({len(text.encode()) / max(n, 1):.2f} bytes/token)"
    )
    if args.save:
        tok.save(args.save)
        print(f"Saved to {args.save}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
