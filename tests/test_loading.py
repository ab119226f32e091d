"""`Tokenizer.load` / `bytepair.load_tokenizer` take what a user has — a trained folder, bytepair's JSON, a HF
tokenizer.json, a tiktoken rank file with its pattern — and say what they found when they cannot load it."""

from __future__ import annotations

import gzip
import json

import pytest

import bytepair
from bytepair import cli

CORPUS = ["low lower lowest newer newest <|endoftext|>"] * 20


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    return bytepair.train(CORPUS, vocab_size=270, special_tokens=["<|endoftext|>"])


def test_load_takes_a_folder_a_file_of_each_format_and_a_rank_file_with_its_pattern(tok, tmp_path):
    tok.save_pretrained(tmp_path / "folder")
    assert bytepair.Tokenizer.load(tmp_path / "folder") == tok  # was IsADirectoryError
    assert bytepair.Tokenizer.load(tmp_path / "folder" / "bytepair.json") == tok
    tok.save_hf(tmp_path / "tokenizer.json")
    text = "lowest newer <|endoftext|> low"
    want = tok.encode(text, allowed_special="all")
    assert bytepair.Tokenizer.load(tmp_path / "tokenizer.json").encode(text, allowed_special="all") == want
    tok.save_tiktoken(tmp_path / "mine.tiktoken")
    with pytest.raises(ValueError, match="is a tiktoken rank file.*pass pattern="):
        bytepair.Tokenizer.load(tmp_path / "mine.tiktoken")
    ranks = bytepair.Tokenizer.load(tmp_path / "mine.tiktoken", pattern="gpt2", special_tokens={"<|endoftext|>": 0})
    assert ranks.encode(text, allowed_special="all") == want
    # A rank file is recognised by what it holds, whatever its name.
    (tmp_path / "ranks.txt").write_bytes((tmp_path / "mine.tiktoken").read_bytes())
    with pytest.raises(ValueError, match="is a tiktoken rank file"):
        bytepair.Tokenizer.load(tmp_path / "ranks.txt")
    assert bytepair.Tokenizer.load(tmp_path / "ranks.txt", pattern="gpt2").encode("lowest") == tok.encode("lowest")
    with pytest.raises(ValueError, match="pattern= and special_tokens= are for tiktoken rank files"):
        bytepair.Tokenizer.load(tmp_path / "tokenizer.json", pattern="gpt2")
    assert bytepair.load_tokenizer is bytepair.formats.load_tokenizer


def test_a_rank_file_named_after_its_encoding_needs_no_pattern(shared_data):
    cl100k = bytepair.Tokenizer.load(shared_data / "tiktoken" / "cl100k_base.tiktoken")
    assert cl100k.encode("hello <|endoftext|>", allowed_special="all") == [15339, 220, 100257]


@pytest.mark.parametrize(
    "name, content, found",
    [
        ("corpus.txt.gz", gzip.compress(b"some text\n"), "is a gzip-compressed file"),
        ("data.bin", b"\x28\xb5\x2f\xfd\x00\x00", "is a zstd-compressed file"),
        ("vocab.json", json.dumps({"a": 0, "b": 1}).encode(), "needs its merges"),
        (
            "tokenizer_config.json",
            json.dumps({"tokenizer_class": "X"}).encode(),
            "tokenizer_config.json: load the folder",
        ),
        ("special_tokens_map.json", json.dumps({"eos_token": "</s>"}).encode(), "special_tokens_map.json"),
        ("merges.txt", b"#version: 0.2\na b\n", "a merges.txt, which needs its vocab.json"),
        (
            "notes.txt",
            b"Dear diary, today I trained a tokenizer.\n",
            "a text file starting 'Dear diary, today I trained a tokeniz",
        ),
        ("other.json", json.dumps({"weights": [1, 2]}).encode(), "JSON with the keys \\['weights'\\]"),
        ("cut.json", b'{"version": "1.0", "model": {"type": "BPE", ', "JSON that does not parse"),
        ("empty.json", b"", "is empty"),
        ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", "a binary file"),
        ("counts.txt", b"the 120\nof 77\nand 60\n", "a text file starting 'the 120'"),  # not a rank file
    ],
)
def test_what_cannot_be_loaded_is_named(tmp_path, name, content, found):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(ValueError, match=found):
        bytepair.Tokenizer.load(tmp_path / name)


def test_hf_files_bytepair_cannot_read_keep_the_reason(tmp_path):
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import models

    HFTokenizer(models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]")).save(str(tmp_path / "wp.json"))
    with pytest.raises(ValueError, match="WordPiece"):
        bytepair.Tokenizer.load(tmp_path / "wp.json")


def test_folders_and_missing_paths(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"holds no tokenizer \(it is empty\)"):
        bytepair.Tokenizer.load(tmp_path / "empty")
    (tmp_path / "some").mkdir()
    (tmp_path / "some" / "vocab.json").write_text("{}")
    (tmp_path / "some" / "README.md").write_text("hi")
    with pytest.raises(FileNotFoundError, match=r"holds no tokenizer \(it has README.md, vocab.json\)"):
        bytepair.Tokenizer.load(tmp_path / "some")
    with pytest.raises(FileNotFoundError, match="no such tokenizer file or folder"):
        bytepair.Tokenizer.load(tmp_path / "missing.json")
    with pytest.raises(FileNotFoundError, match="use bytepair.get_encoding"):
        bytepair.Tokenizer.load("cl100k_base")


def test_the_command_line_loads_by_name_path_or_short_name(tmp_path, capsys, shared_data, monkeypatch):
    monkeypatch.setenv("BYTEPAIR_DATA", str(shared_data))
    assert cli.main(["count", "-t", "cl100k", str(shared_data / "testvectors" / "cs336_bpe" / "address.txt")]) == 0
    short = capsys.readouterr().out
    assert cli.main(["count", "-t", "cl100k_base", str(shared_data / "testvectors" / "cs336_bpe" / "address.txt")]) == 0
    assert capsys.readouterr().out == short
    assert cli.main(["count", "-t", "cl100kbase", str(shared_data / "testvectors" / "cs336_bpe" / "address.txt")]) == 1
    err = capsys.readouterr().err
    assert "unknown tokenizer 'cl100kbase' (did you mean 'cl100k_base'?)" in err
    assert "gpt2, r50k_base, p50k_base, cl100k_base, o200k_base" in err
