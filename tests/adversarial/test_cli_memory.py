"""`bytepair encode` reads files in memory bounded by a fixed figure whatever the text, with the ids of encoding
each document whole: issue 23, item 8. Random letters are one GPT-2 piece, so the document cutter (a Python
regex over the buffered text) found no place to cut: 1 GB took 144 s and 5.3 GB. The core now cuts (between
pieces that more text cannot change, after special tokens, and inside one long piece at token boundaries whose
pairs it checks); these tests force its sizes small so that every kind of cut happens on small texts."""

from __future__ import annotations

import io
import random
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair import corpus, streams

TRAINING = (
    'The quick brown fox jumps over the lazy dog. It\'s 2024; numbers 1234567 and code {"a": [1, 2]}.\n'
    "  Indented line\r\n\n\nTabs\tand   spaces!!! --- ... 'quoted' ÉCOLE école 日本語のテキスト、句読点。\n"
) * 20

ALPHABETS: dict[str, list[str]] = {
    "letters": list(string.ascii_letters[:8]),
    "words": ["ab", "c", " ", "  ", "\n", "de", "\r\n"],
    "whitespace": [" ", "\n", "\t", "\r\n", "  \n", "a"],
    "digits": ["1", "2", "3", " 4", "a"],
    "punctuation": ["-", "!", "'s", "'", "a", "\n", "..."],
    "cases": ["a", "B", "c", "D", "é", "Ω", "'ll", "日"],
    "specials": ["<|endoftext|>", "a", "<|", "|>", " ", "endoftext", "b"],
}


def random_text(rnd: random.Random, alphabet: list[str], length: int) -> str:
    """Text from `alphabet`'s strings, with long runs of one of them (long pieces, long whitespace)."""
    out: list[str] = []
    size = 0
    while size < length:
        s = rnd.choice(alphabet)
        run = rnd.choice([1, 1, 1, rnd.randrange(1, 3000)])
        out.append(s * run)
        size += len(s) * run
    return "".join(out)


@pytest.fixture(scope="module")
def trained() -> dict[str, bytepair.Tokenizer]:
    out = {}
    for pattern in ("gpt2", "cl100k", "o200k", "whitespace", None):
        out[str(pattern)] = bytepair.train([TRAINING], 340, pattern=pattern, special_tokens=["<|endoftext|>"])
    out["regex"] = bytepair.train([TRAINING], 340, pattern=r"\w+(?=\s)|\w+|\s+|.", special_tokens=["<|endoftext|>"])
    return out


def encode_file(tok, path: Path, special: str, piece_chars: int, sizes: tuple[int, int]) -> tuple[list[int], int]:
    """The ids `bytepair encode` writes for a file, and the longest piece it was read in."""
    pieces = list(
        corpus.documents(
            [str(path)],
            cut=corpus.can_stream(tok),
            tokenizer=tok,
            special=special,
            piece_chars=piece_chars,
            cut_sizes=sizes,
        )
    )
    out = io.BytesIO()
    streams.encode_stream(tok, pieces, out, format="bin", dtype="uint32", special=special)
    data = out.getvalue()
    return [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)], max(len(p.text) for p in pieces)


POLICIES: dict[str, dict[str, Any]] = {"allow": {"allowed_special": "all"}, "text": {"disallowed_special": ()}}


@pytest.mark.parametrize("special", ["allow", "text"])
def test_random_and_pathological_texts_encode_like_the_whole_document(trained, tmp_path, special):
    rnd = random.Random(7)
    long_cuts = 0
    for name, tok in trained.items():
        for kind, alphabet in ALPHABETS.items():
            text = random_text(rnd, alphabet, rnd.choice([50, 5000, 40_000]))
            path = tmp_path / f"{kind}.txt"
            path.write_bytes(text.encode("utf-8"))
            whole = tok.encode(text, **POLICIES[special])
            sizes = (rnd.randrange(1, 400), rnd.choice([1, 64, 500]))
            ids, longest = encode_file(tok, path, special, rnd.randrange(1, 300), sizes)
            assert ids == whole, (name, kind, special, sizes)
            if corpus.can_stream(tok) and len(text) > 20_000:
                long_cuts += longest < len(text) // 4
    assert long_cuts >= 5, "long documents were cut"


def test_a_special_token_across_a_block_boundary(trained, tmp_path):
    tok = trained["gpt2"]
    text = ("x" * 37 + "<|endoftext|>" + "y" * 11 + "<|endoftext|>" * 3) * 200
    path = tmp_path / "s.txt"
    path.write_text(text)
    for piece_chars in (1, 5, 12, 13, 50):
        ids, _ = encode_file(tok, path, "allow", piece_chars, (1, 1))
        assert ids == tok.encode(text, allowed_special="all"), piece_chars
    # Disallowed (the default): an error naming the special token, wherever the blocks end.
    with pytest.raises(ValueError, match="<|endoftext|>"):
        encode_file(tok, path, "error", 7, (1, 1))


def test_shared_vocabularies_on_long_pieces(shared_data, tmp_path):
    rnd = random.Random(3)
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        tok = bytepair.get_encoding(name, shared_data)
        for kind in ("letters", "digits", "whitespace", "punctuation", "cases"):
            text = random_text(rnd, ALPHABETS[kind], 60_000)
            path = tmp_path / "t.txt"
            path.write_text(text, encoding="utf-8")
            ids, longest = encode_file(tok, path, "allow", 4096, (8192, 1024))
            assert ids == tok.encode(text, allowed_special="all"), (name, kind)
            assert longest < 20_000, (name, kind, longest)


def test_one_long_piece_is_read_in_bounded_pieces(tmp_path):
    """30 MB of random letters (one GPT-2 piece) through the command line: its pieces stay under a fixed size
    (the default sizes: 4 MB before a long piece is cut, 256 KB kept back), and the ids are the whole text's."""
    rnd = random.Random(5)
    text = "".join(rnd.choices(string.ascii_lowercase, k=30 << 20))
    path = tmp_path / "letters.txt"
    path.write_text(text)
    tok = bytepair.train([TRAINING], 390)
    pieces = corpus.documents([str(path)], tokenizer=tok, cut=corpus.can_stream(tok))
    lengths = [len(p.text) for p in pieces]
    assert len(lengths) > 5 and max(lengths) < 5 << 20, lengths[:10]
    tok.save(tmp_path / "tok.json")
    out = tmp_path / "ids.bin"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bytepair",
            "encode",
            str(path),
            "-t",
            str(tmp_path / "tok.json"),
            "--format",
            "bin",
            "--dtype",
            "uint32",
            "--separator",
            "none",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    data = out.read_bytes()
    assert [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)] == tok.encode(text)
