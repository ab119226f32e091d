"""Compressed inputs are recognised by their first bytes, not their names: gzip, zstd, xz and bzip2 are read
whatever the file is called, and formats bytepair does not read are refused with what to do — never decoded as
text (which `--errors replace` would turn into garbage tokens without a word)."""

from __future__ import annotations

import bz2
import gzip
import lzma

import pytest
import zstandard

import bytepair
from bytepair import cli, corpus
from bytepair.formats.compressed import compression

TEXT = "the quick brown fox jumps over the lazy dog\n" * 50

READ = {
    "gzip": gzip.compress(TEXT.encode()),
    "zstd": zstandard.ZstdCompressor().compress(TEXT.encode()),
    "xz": lzma.compress(TEXT.encode()),
    "bzip2": bz2.compress(TEXT.encode()),
}
# lz4's and zip's headers (a real file needs their tools; the first bytes are what is looked at).
REFUSED = {
    "lz4": b"\x04\x22\x4d\x18\x64\x40\xa7",
    "zip": b"PK\x03\x04\x14\x00\x00\x00",
    "7z": b"7z\xbc\xaf\x27\x1c\x00\x04",
}


def test_compression_is_told_by_the_first_bytes():
    for kind, data in {**READ, **REFUSED}.items():
        assert compression(data) == kind
    assert compression(TEXT.encode()) is None
    assert compression(b"BZh9 is not bzip2 without its block magic") is None
    assert compression(b"") is None


@pytest.mark.parametrize("kind", sorted(READ))
def test_compressed_under_another_name_is_read(tmp_path, kind):
    plain = tmp_path / "a.txt"
    plain.write_text(TEXT, encoding="utf-8")
    hidden = tmp_path / "b.txt"  # compressed, not named so
    hidden.write_bytes(READ[kind])
    assert bytepair.train(hidden, 280) == bytepair.train(plain, 280)
    assert [p.text for p in corpus.documents([str(hidden)])] == [TEXT]


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_other_compressed_formats_are_refused_with_what_to_do(tmp_path, kind, capsys):
    path = tmp_path / f"corpus.{kind}"
    path.write_bytes(REFUSED[kind])
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
