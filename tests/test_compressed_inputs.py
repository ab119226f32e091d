"""Compressed inputs are recognised by their first bytes, not their names: gzip is read whatever the file is called,
and formats bytepair does not read are refused with what to do — never decoded as text (which `--errors replace`
would turn into garbage tokens without a word)."""

from __future__ import annotations

import bz2
import gzip
import lzma

import pytest

import bytepair
from bytepair import cli, corpus

TEXT = "the quick brown fox jumps over the lazy dog\n" * 50

# zstd's and lz4's frame headers (a real frame needs their libraries; the first bytes are what is looked at).
OTHERS = {
    "zstd": b"\x28\xb5\x2f\xfd\x24\x00\x01\x00\x00",
    "xz": lzma.compress(TEXT.encode()),
    "bzip2": bz2.compress(TEXT.encode()),
    "lz4": b"\x04\x22\x4d\x18\x64\x40\xa7",
    "zip": b"PK\x03\x04\x14\x00\x00\x00",
}


def test_compression_is_told_by_the_first_bytes():
    assert corpus.compression(gzip.compress(b"x")) == "gzip"
    for kind, data in OTHERS.items():
        assert corpus.compression(data) == kind
    assert corpus.compression(TEXT.encode()) is None
    assert corpus.compression(b"BZh9 is not bzip2 without its block magic") is None
    assert corpus.compression(b"") is None


def test_gzip_under_another_name_is_read_as_gzip(tmp_path):
    plain = tmp_path / "a.txt"
    plain.write_text(TEXT, encoding="utf-8")
    hidden = tmp_path / "b.txt"  # gzip, not named .gz
    hidden.write_bytes(gzip.compress(TEXT.encode()))
    assert bytepair.train(hidden, 280) == bytepair.train(plain, 280)
    assert [p.text for p in corpus.documents([str(hidden)])] == [TEXT]


@pytest.mark.parametrize("kind", sorted(OTHERS))
def test_other_compressed_formats_are_refused_with_what_to_do(tmp_path, kind, capsys):
    path = tmp_path / f"corpus.{kind}"
    path.write_bytes(OTHERS[kind])
    with pytest.raises(ValueError, match=rf"is {kind}-compressed, which bytepair does not read.*\| bytepair \.\.\. -"):
        bytepair.train(path, 280, errors="replace")
    with pytest.raises(ValueError, match=rf"is {kind}-compressed"):
        list(corpus.documents([str(path)], errors="replace"))
    tok = bytepair.train([TEXT], 280)
    tok.save(tmp_path / "tok.json")
    for argv in (
        ["encode", "-t", str(tmp_path / "tok.json"), str(path), "--errors", "replace"],
        ["count", "-t", str(tmp_path / "tok.json"), str(path), "--errors", "replace"],
        ["train", str(path), "--vocab-size", "280", "--errors", "replace", "-o", str(tmp_path / "out")],
    ):
        assert cli.main(argv) == 1
        err = capsys.readouterr().err
        assert f"is {kind}-compressed" in err and "decompress it first" in err, argv
    assert not (tmp_path / "out").exists()
