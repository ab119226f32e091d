"""Loading stays linear in the length of a token: issue 23, item 4. A rank file with one 1 MB token took 29 s to
load (10 MB: over 5 minutes), a special token of 100 000 characters 31 s, and vocabularies whose long tokens are
built by merges ("a" × 2^k from two halves) were quadratic in the backtracker's build. Each case loads a file
with a token of megabytes in a subprocess that must finish well within a bound the quadratic code missed by
hours, then encodes the long token's text."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bytepair.reference import BYTE_TO_CHAR

MB = 1 << 20
LONG = 10 * MB  # bytes of the longest token
CHAIN = 20  # "a" × 2^k for k = 1..CHAIN (1 MB), each made by merging two halves
# Seconds a subprocess may take: loading these files is ~1 s; the quadratic code took minutes to hours.
BOUND = 120


def run(code: str) -> str:
    """Runs `code` in a fresh interpreter within `BOUND` seconds; its standard output."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=BOUND
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading did not finish in {BOUND} s: quadratic in the token's length again?")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def rank_file(path: Path, extra: list[bytes]) -> None:
    lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
    lines += [f"{base64.b64encode(token).decode()} {256 + i}" for i, token in enumerate(extra)]
    path.write_text("\n".join(lines) + "\n")


def chain_vocab() -> tuple[dict[str, int], list[str]]:
    """GPT-2 byte-level vocabulary with "a" × 2^k merged from two halves, and a 10 MB token no merge makes."""
    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    merges = []
    for k in range(1, CHAIN + 1):
        half = "a" * (1 << (k - 1))
        vocab["a" * (1 << k)] = len(vocab)
        merges.append(f"{half} {half}")
    vocab["b" * LONG] = len(vocab)
    return vocab, merges


def test_a_rank_file_with_a_token_of_10_mb(tmp_path):
    path = tmp_path / "long.tiktoken"
    rank_file(path, [b"ab" * (LONG // 2), *(b"a" * (1 << k) for k in range(1, CHAIN + 1))])
    out = run(f"""
        import bytepair
        tok = bytepair.Tokenizer.from_tiktoken({str(path)!r}, pattern=None)
        print(tok.encode("ab" * {LONG // 2}), tok.encode("a" * {1 << CHAIN}), tok.encode("a" * 6))
    """)
    assert out.split() == ["[256]", f"[{256 + CHAIN}]", "[258,", "257]"]  # aaaa aa


def test_gpt2_files_with_a_token_of_10_mb_and_merges_of_megabytes(tmp_path):
    vocab, merges = chain_vocab()
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    out = run(f"""
        import bytepair
        tok = bytepair.Tokenizer.from_gpt2({str(tmp_path / "vocab.json")!r}, {str(tmp_path / "merges.txt")!r},
                                           pattern=None)
        print(tok.encode("a" * {1 << CHAIN}), tok.encode("a" * 12), len(tok.encode("b" * {LONG})))
    """)
    assert out.split() == [f"[{256 + CHAIN - 1}]", "[258,", "257]", str(LONG)]


def test_a_tokenizer_json_and_a_bytepair_file_with_tokens_of_10_mb(tmp_path, shared_data):
    vocab, merges = chain_vocab()
    special = "<" + "s" * LONG + ">"
    vocab[special] = len(vocab)
    doc = json.loads((shared_data / "gpt2" / "tokenizer.json").read_text())
    doc["model"]["vocab"], doc["model"]["merges"] = vocab, merges
    doc["added_tokens"] = [
        {
            "id": vocab[special],
            "content": special,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
    ]
    (tmp_path / "tokenizer.json").write_text(json.dumps(doc))
    out = run(f"""
        import bytepair
        tok = bytepair.Tokenizer.from_hf({str(tmp_path / "tokenizer.json")!r})
        special = "<" + "s" * {LONG} + ">"
        print(tok.encode("x" + special + "a" * 8, allowed_special="all"))
        tok.save({str(tmp_path / "tok.json")!r})
        again = bytepair.Tokenizer.load({str(tmp_path / "tok.json")!r})
        print(again.encode("x" + special + "a" * 8, allowed_special="all"))
    """)
    expected = f"[{ord('x')}, {vocab[special]}, {256 + 2}]"
    assert out.splitlines() == [expected, expected]


def test_special_tokens_of_10_mb_given_in_python(tmp_path):
    path = tmp_path / "small.tiktoken"
    rank_file(path, [b"ab"])
    out = run(f"""
        import bytepair
        special = "<" + "x" * {LONG} + ">"
        tok = bytepair.Tokenizer.from_tiktoken({str(path)!r}, pattern="gpt2", special_tokens={{special: 257}})
        print(tok.encode("ab" + special + "ab", allowed_special="all"))
        trained = bytepair.train(["hello world"] * 3, vocab_size=260, special_tokens=[special])
        print(trained.encode(special + special, allowed_special="all"))
    """)
    assert out.splitlines() == ["[256, 257, 256]", "[0, 0]"]
