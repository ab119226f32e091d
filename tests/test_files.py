"""Saving and loading (bytepair's own format), pickling, and training from files."""

from __future__ import annotations

import gzip
import json
import pickle
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from conftest import examples

pytestmark = [
    pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning"),
    pytest.mark.filterwarnings(r"ignore:the pattern .* matched:RuntimeWarning"),
]  # (\S+ on purpose)

CORPUS = ["The cat sat on the mat.\n", "The dog sat on the log.\n", "Über café naïve — 日本 🎉\n", "a\x00b\tc\r\n"]

CONFIGS: list[dict[str, Any]] = [
    dict(),
    dict(special_tokens=["<|endoftext|>", "<pad>"], initial_alphabet="corpus"),
    dict(mode="char", unk_token="[UNK]", pattern="whitespace"),
    dict(mode="char", continuing_subword_prefix="##", lowercase=True, pattern=r"\S+"),
    dict(end_of_word_suffix="</w>", pattern=None, tie_break="hf", max_token_length=4),  # 512 base symbols
]
VOCAB_SIZES = [300, 300, 60, 60, 560]


@pytest.mark.parametrize(
    "config, vocab_size",
    list(zip(CONFIGS, VOCAB_SIZES)),
    ids=[",".join(f"{k}={v}" for k, v in c.items()) or "default" for c in CONFIGS],
)
def test_save_load_round_trips_exactly(tmp_path, config, vocab_size):
    tok = bytepair.train(CORPUS * 3, vocab_size, **config)
    path = tmp_path / "tok.json"
    tok.save(path)
    back = bytepair.Tokenizer.load(path)
    assert back == tok
    assert back.vocab == tok.vocab
    assert back.merges == tok.merges
    assert back.trace == tok.trace
    assert back.settings == tok.settings
    assert back.special_tokens == tok.special_tokens
    for text in CORPUS:
        assert back.encode(text, disallowed_special=()) == tok.encode(text, disallowed_special=())
    # Saving again gives the same bytes.
    tok.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    assert not list(tmp_path.glob("*.tmp"))


def test_the_format_is_readable_json_with_one_merge_per_line(tmp_path):
    tok = bytepair.train(CORPUS, 270, special_tokens=["<|endoftext|>"])
    tok.save(tmp_path / "t.json")
    text = (tmp_path / "t.json").read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["format"] == "bytepair" and data["version"] == 1
    assert data["special_tokens"] == ["<|endoftext|>"]
    assert len(data["alphabet"]) == 256
    assert [tuple(m[:2]) for m in data["merges"]] == tok.merges
    assert [m[2] for m in data["merges"]] == [c for _, c in tok.trace or []]
    first_merge = json.dumps(data["merges"][0], ensure_ascii=False)
    assert first_merge.replace(" ", "") in text.replace(" ", "")  # a merge is one line


def test_pickle_round_trip():
    tok = bytepair.train(CORPUS, 280, special_tokens=["<|endoftext|>"])
    back = pickle.loads(pickle.dumps(tok))
    assert back == tok and back.encode("The cat") == tok.encode("The cat")


def test_loaded_file_without_counts_has_no_trace(tmp_path):
    tok = bytepair.train(CORPUS, 270)
    data = json.loads(tok._core.to_native())
    data["merges"] = [m[:2] for m in data["merges"]]
    (tmp_path / "t.json").write_text(json.dumps(data), encoding="utf-8")
    back = bytepair.Tokenizer.load(tmp_path / "t.json")
    assert back.trace is None and back.merges == tok.merges


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(format="other"), 'expected "bytepair"'),
        (lambda d: d.update(version=99), "version 99 is not supported"),
        (lambda d: d.update(mode="bits"), "unknown mode"),
        (lambda d: d["merges"].append(["zz", "q"]), "not a token defined before this merge"),
        (lambda d: d["merges"].append(["a"]), "expected [left, right]"),
        (lambda d: d["alphabet"].append("ab"), "not a valid base symbol"),
        (lambda d: d.update(special_tokens=["<a>", "<a>"]), "listed twice"),
        (lambda d: d.update(pattern={"regex": "("}), "not a valid regex"),
        (lambda d: d.update(extra=1), "unknown field"),
    ],
)
def test_corrupted_files_get_clear_errors(tmp_path, edit, message):
    tok = bytepair.train(CORPUS, 270)
    data = json.loads(tok._core.to_native())
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json is not a valid bytepair tokenizer file") as info:
        bytepair.Tokenizer.load(path)
    assert message in str(info.value)


def test_truncated_file_names_the_line(tmp_path):
    tok = bytepair.train(CORPUS, 300)
    text = tok._core.to_native()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(ValueError, match=r"cut\.json .* line \d+"):
        bytepair.Tokenizer.load(path)


def test_missing_tokenizer_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such tokenizer file"):
        bytepair.Tokenizer.load(tmp_path / "nope.json")


def test_train_from_files_equals_train_from_their_lines(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("".join(CORPUS[:2]) * 4, encoding="utf-8")
    b.write_text("".join(CORPUS[2:]) * 4, encoding="utf-8")
    lines = a.read_text(encoding="utf-8").splitlines(keepends=True) + b.read_text(encoding="utf-8").splitlines(
        keepends=True
    )
    from_lines = bytepair.train(lines, 300)
    assert bytepair.train([a, b], 300) == from_lines  # Path objects
    assert bytepair.train([str(a), str(b)], 300) == from_lines  # names of existing files
    assert bytepair.train(str(tmp_path / "*.txt"), 300) == from_lines  # a glob
    assert bytepair.train(iter([a, b]), 300) == from_lines  # any iterable of Paths


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=5))
def test_file_and_text_input_agree(tmp_path_factory, texts):
    path = tmp_path_factory.mktemp("corpus") / "c.txt"
    content = "\n".join(texts) + "\n"
    path.write_bytes(content.encode("utf-8"))
    lines = [line + "\n" for line in content.split("\n")[:-1]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert bytepair.train(path, 290) == bytepair.train(lines, 290)


def test_gzip_files_are_read_directly(tmp_path):
    plain, packed = tmp_path / "c.txt", tmp_path / "c.txt.gz"
    text = "".join(CORPUS) * 5
    plain.write_text(text, encoding="utf-8")
    with gzip.open(packed, "wt", encoding="utf-8") as f:
        f.write(text)
    assert bytepair.train(packed, 300) == bytepair.train(plain, 300)


def test_broken_gzip_is_a_clear_error(tmp_path):
    path = tmp_path / "broken.txt.gz"
    path.write_bytes(gzip.compress(b"hello world\n" * 100)[:40])
    with pytest.raises(OSError, match="broken.txt.gz"):
        bytepair.train(path, 270)


def test_stdlib_demo_corpus_trains(tmp_path):
    """The corpus of `make demo` (a slice of it): trains, saves, loads, round-trips."""
    import sysconfig

    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(root.glob("*.py"))[:40]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok = bytepair.train(files, 1500, special_tokens=["<|endoftext|>"], errors="replace")
    tok.save(tmp_path / "stdlib.json")
    back = bytepair.Tokenizer.load(tmp_path / "stdlib.json")
    source = files[0].read_text(encoding="utf-8")
    assert back.decode(back.encode(source, disallowed_special=())) == source
    assert len(back.encode(source, disallowed_special=())) < len(source.encode()) / 2
