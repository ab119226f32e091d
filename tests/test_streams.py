"""Streaming (`bytepair.files`): documents are cut into pieces only where the tokenizer's pattern cuts anyway,
so encoding piece by piece gives exactly the ids of encoding the whole text — checked on random text made of
the characters that matter at piece boundaries, and on every shared corpus; token files round-trip."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import files
from conftest import examples

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

# The characters whose pieces differ between patterns, at and around line breaks and spaces.
PARTS = [
    "a",
    "b",
    "Σ",
    "ß",
    "日本",
    "9",
    "12345",
    "²",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "\t",
    ".",
    "/",
    "'s",
    "'",
    ",",
    "!\n",
    "🎉",
    "\u00a0",
    "\x1c",
    "\u0301",
    "A",
    "Ab",
    "<|endoftext|>",
]
TEXTS = st.lists(st.sampled_from(PARTS), max_size=80).map("".join) | st.text(max_size=60)

TRAINING = "".join(
    f"The cat{i % 7}. sat\non the mat!\n\nNaïve  café\r\n'tis 12345 / x{i}\t日本 🎉\n" for i in range(300)
)


def pieces_of(text: str, tmp: Path, piece_chars: int, cut: bool = True) -> list[files.Piece]:
    path = tmp / "t.txt"
    path.write_bytes(text.encode("utf-8"))
    return list(files.documents([str(path)], piece_chars=piece_chars, cut=cut))


def encoded_in_pieces(tok: bytepair.Tokenizer, pieces: list[files.Piece]) -> list[int]:
    out = io.BytesIO()
    files.encode_stream(tok, pieces, out, format="bin", dtype="uint32", special="allow")
    data = out.getvalue()
    return [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)]


@pytest.fixture(scope="module")
def trained() -> dict[str, bytepair.Tokenizer]:
    """Small vocabularies for every built-in pattern (with tokens for line breaks, runs of spaces and
    punctuation with breaks, so that a wrong cut changes the ids)."""
    out = {}
    for pattern in ("gpt2", "cl100k", "o200k", "whitespace"):
        out[pattern] = bytepair.train([TRAINING], 600, pattern=pattern, special_tokens=["<|endoftext|>"])
    out["o200k lowercase"] = bytepair.train(
        [TRAINING], 600, pattern="o200k", lowercase=True, special_tokens=["<|endoftext|>"]
    )
    out["char whitespace"] = bytepair.train(
        [TRAINING], 120, mode="char", pattern="whitespace", unk_token="[UNK]", special_tokens=["<|endoftext|>"]
    )
    return out


@settings(max_examples=examples(150), deadline=None)
@given(text=TEXTS, piece_chars=st.integers(1, 12))
def test_pieces_encode_like_the_whole_text(trained, tmp_path_factory, text, piece_chars):
    tmp = tmp_path_factory.mktemp("p")
    pieces = pieces_of(text, tmp, piece_chars)
    assert "".join(p.text for p in pieces) == text and pieces[-1].last and not any(p.last for p in pieces[:-1])
    for name, tok in trained.items():
        assert files.can_cut(tok), name
        assert encoded_in_pieces(tok, pieces) == tok.encode(text, allowed_special="all"), name


def test_every_shared_corpus_in_small_pieces(shared_data, tmp_path):
    encodings = {n: bytepair.get_encoding(n, shared_data) for n in ("r50k_base", "cl100k_base", "o200k_base")}
    paths = sorted((shared_data / "multilingual").rglob("*.txt")) + sorted(
        (shared_data / "multilingual").rglob("*.json")
    )
    paths.append(shared_data / "text/tinyshakespeare/input.txt")
    cuts = 0
    for path in paths:
        text = path.read_bytes().decode("utf-8")[:60_000]
        pieces = pieces_of(text, tmp_path, 500)
        cuts += len(pieces) - 1
        for name, tok in encodings.items():
            assert encoded_in_pieces(tok, pieces) == tok.encode(text, allowed_special="all"), (name, path.name)
    assert cuts > 1000  # the corpora really were cut (Japanese and Chinese too: no spaces, lines end in 。)


def test_patterns_that_cannot_be_cut_are_read_whole(tmp_path):
    none = bytepair.train([TRAINING], 300, pattern=None)
    regex = bytepair.train([TRAINING], 300, pattern=r"\S+\s*")
    spaced = bytepair.train([TRAINING], 300, special_tokens=["<end of text>"])
    assert not any(files.can_cut(t) for t in (none, regex, spaced))
    pieces = pieces_of(TRAINING, tmp_path, 100, cut=False)
    assert len(pieces) == 1 and pieces[0].text == TRAINING
    assert encoded_in_pieces(none, pieces) == none.encode(TRAINING)


def test_no_cut_place_keeps_reading(tmp_path):
    text = "x" * 5000 + "\n" + "y" * 5000  # two words, the only places to cut around the line break
    pieces = pieces_of(text, tmp_path, 100)
    assert [len(p.text) for p in pieces] == [5001, 5000]


def test_gz_stdin_like_streams_and_line_endings(tmp_path):
    text = "line one\r\nline two\rline three\n"
    with gzip.open(tmp_path / "t.txt.gz", "wb") as f:
        f.write(text.encode())
    pieces = list(files.documents([str(tmp_path / "t.txt.gz")]))
    assert "".join(p.text for p in pieces) == text  # line breaks kept exactly (no newline translation)
    lines = list(files.documents([str(tmp_path / "t.txt.gz")], split="line"))
    assert [p.text for p in lines] == ["line one", "line two\rline three"]


def test_not_utf8_and_bad_jsonl_are_clear(tmp_path):
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8.*--errors replace"):
        list(files.documents([str(tmp_path / "latin1.txt")]))
    assert next(iter(files.documents([str(tmp_path / "latin1.txt")], errors="replace"))).text == "caf\ufffd\n"
    (tmp_path / "d.jsonl").write_text('{"text": "a"}\n{"body": "b"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2: no field 'text' \(it has \['body'\]\)"):
        list(files.documents([str(tmp_path / "d.jsonl")], jsonl_field="text"))
    (tmp_path / "e.jsonl").write_text('{"text": 5}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 1: field 'text' is a int"):
        list(files.documents([str(tmp_path / "e.jsonl")], jsonl_field="text"))
    (tmp_path / "f.jsonl").write_text('{"text": "a"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 1: not JSON"):
        list(files.documents([str(tmp_path / "f.jsonl")], jsonl_field="text"))


@settings(max_examples=examples(60), deadline=None)
@given(documents=st.lists(TEXTS, min_size=1, max_size=6), fmt=st.sampled_from(["text", "json", "bin"]))
def test_token_files_round_trip(trained, documents, fmt):
    tok = trained["cl100k"]
    pieces = [files.Piece(d, True, "test") for d in documents]
    # a binary file has documents only through a separator (when no document holds its text)
    sep = "<|endoftext|>" if fmt == "bin" and not any("<|endoftext|>" in d for d in documents) else None
    out = io.BytesIO()
    files.encode_stream(tok, pieces, out, format=fmt, special="allow", separator=sep)
    want = [tok.encode(d, allowed_special="all") + ([tok.token_to_id(sep) or 0] if sep else []) for d in documents]
    back = list(files.read_ids(io.BytesIO(out.getvalue()), fmt, "uint16", block=7))
    flat = [i for ids, _ in back for i in ids]
    assert flat == [i for w in want for i in w]
    decoded = io.BytesIO()
    files.decode_stream(tok, io.BytesIO(out.getvalue()), decoded, format=fmt, dtype="uint16", join=b"|", separator=sep)
    joined = "".join(documents) if fmt == "bin" and sep is None else "|".join(documents)
    assert decoded.getvalue() == joined.encode("utf-8")


def test_load_tokenizer_everywhere(tmp_path, shared_data):
    tok = bytepair.train([TRAINING], 400, special_tokens=["<|endoftext|>"])
    tok.save(tmp_path / "mine.json")
    tok.save_hf(tmp_path / "tokenizer.json")
    (tmp_path / "gpt2").mkdir()
    for name in ("vocab.json", "merges.txt"):
        (tmp_path / "gpt2" / name).write_bytes((shared_data / "gpt2" / name).read_bytes())
    (tmp_path / "cl100k_base.tiktoken").write_bytes((shared_data / "tiktoken/cl100k_base.tiktoken").read_bytes())
    sample = TRAINING[:500]
    assert files.load_tokenizer(tmp_path / "mine.json") == tok
    assert files.load_tokenizer(tmp_path).encode(sample) == tok.encode(sample)  # the folder: its tokenizer.json
    gpt2 = bytepair.get_encoding("gpt2", shared_data)
    assert files.load_tokenizer(tmp_path / "gpt2").encode(sample) == gpt2.encode(sample)
    assert files.load_tokenizer("gpt2", data=shared_data).encode(sample) == gpt2.encode(sample)
    cl100k = bytepair.get_encoding("cl100k_base", shared_data)
    assert files.load_tokenizer(tmp_path / "cl100k_base.tiktoken").encode(sample) == cl100k.encode(sample)
    tok.save_tiktoken(tmp_path / "mine.tiktoken")
    with pytest.raises(ValueError, match="does not say which pattern"):
        files.load_tokenizer(tmp_path / "mine.tiktoken")
    with pytest.raises(ValueError, match="unknown tokenizer 'cl100kbase' \\(did you mean 'cl100k_base'\\?\\)"):
        files.load_tokenizer("cl100kbase")
    assert files.load_tokenizer("cl100k", data=shared_data) == cl100k  # the short name
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no tokenizer"):
        files.load_tokenizer(tmp_path / "empty")


def test_dtype_rules():
    small = bytepair.train([TRAINING], 300)
    assert files.choose_dtype(small, None) == "uint16" and files.choose_dtype(small, "uint32") == "uint32"
    letters = [chr(0x4E00 + i) for i in range(300)]  # 90 000 two-character words: one merge each
    big = bytepair.train_from_counts({a + b: 1 for a in letters for b in letters}, 70_000, mode="char")
    assert big.vocab_size == 70_000
    assert files.choose_dtype(big, None) == "uint32"
    with pytest.raises(ValueError, match="uint16 holds ids up to 65535"):
        files.choose_dtype(big, "uint16")
    with pytest.raises(ValueError, match="uint16 or uint32"):
        files.choose_dtype(small, "int8")


def test_progress_bar_draws_on_a_stream():
    stream = io.StringIO()
    progress = files.Progress("encoding", True, stream)
    progress.total = 1000
    progress.update(500, tokens=42)
    progress.finish()
    shown = stream.getvalue()
    assert "encoding" in shown and "50%" in shown and "42 tokens" in shown and shown.endswith("\n")
    quiet = io.StringIO()
    files.Progress("x", False, quiet).finish()
    assert quiet.getvalue() == ""
