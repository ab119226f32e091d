"""`bytepair train` with several sizes (one folder each), --extend, --superwords-after and merge control: each
gives what the Python API gives, and bad combinations are one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import bytepair
from bytepair import Tokenizer
from test_cli import CORPUS, run

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text(CORPUS, encoding="utf-8")
    return path


def test_several_sizes_write_one_folder_each(corpus, tmp_path):
    out = tmp_path / "sweep"
    r = run("train", corpus, "--vocab-size", "300,400,350", "-o", out)
    assert r.code == 0, r.err
    assert "Trained 3 sizes in one run" in r.text
    for size in (300, 350, 400):
        tok = Tokenizer.load(out / str(size) / "bytepair.json")
        assert tok == bytepair.train([corpus], size)
        assert (out / str(size) / "tokenizer.json").is_file()
        assert f"{size}: Tokenizer(vocab_size={size}" in r.text
    assert "bytes per token" in r.text


def test_extend_keeps_the_tokenizer_and_goes_on(corpus, tmp_path):
    assert run("train", corpus, "--vocab-size", "300", "--special-token", "<s>", "-o", tmp_path / "a").code == 0
    r = run("train", corpus, "--extend", tmp_path / "a", "--vocab-size", "380", "-o", tmp_path / "b")
    assert r.code == 0, r.err
    extended = bytepair.load_tokenizer(str(tmp_path / "b"))
    assert extended == bytepair.train([corpus], 380, special_tokens=["<s>"])
    # Several sizes of an extension.
    r = run("train", corpus, "--extend", tmp_path / "a", "--vocab-size", "320,340", "-o", tmp_path / "c")
    assert r.code == 0, r.err
    assert bytepair.load_tokenizer(str(tmp_path / "c" / "340")) == bytepair.train([corpus], 340, special_tokens=["<s>"])


def test_extend_a_named_encoding(corpus, tmp_path, shared_data):
    r = run(
        "train",
        corpus,
        "--extend",
        "gpt2",
        "--data",
        shared_data / "gpt2",
        "--vocab-size",
        "50270",
        "-o",
        tmp_path / "g",
    )
    if r.code != 0 and "gpt2" in r.err and "not found" in r.err.lower():
        pytest.skip(r.err)
    assert r.code == 0, r.err
    tok = bytepair.load_tokenizer(str(tmp_path / "g"))
    assert tok.vocab_size == 50270 and tok.token_to_id("<|endoftext|>") == 50256


def test_superwords_and_merge_control(corpus, tmp_path):
    r = run("train", corpus, "--vocab-size", "420", "--superwords-after", "380", "-o", tmp_path / "s")
    assert r.code == 0, r.err
    assert bytepair.load_tokenizer(str(tmp_path / "s")) == bytepair.train([corpus], 420, superwords_after=380)
    r = run(
        "train", corpus, "--vocab-size", "400", "--forbid-across", "digit", "--forbid-across", "newline",
        "--veto", r"\p{L}\s", "-o", tmp_path / "m",
    )  # fmt: skip
    assert r.code == 0, r.err
    want = bytepair.train([corpus], 400, forbid_across=["digit", "newline"], veto=r"\p{L}\s")
    assert bytepair.load_tokenizer(str(tmp_path / "m")) == want
    r = run("train", corpus, "--vocab-size", "400", "--veto-bytes", r"\xc3", "-o", tmp_path / "v")
    assert r.code == 0, r.err
    tok = bytepair.load_tokenizer(str(tmp_path / "v"))
    assert all(b"\xc3" not in tok.token_bytes(i) or len(tok.token_bytes(i)) == 1 for i in range(tok.vocab_size))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--vocab-size", "300,x"], "invalid size '300,x'"),
        (["--vocab-size", "300,300"], "lists a size twice"),
        (["--vocab-size", "300,0"], "must be a positive number"),
        (["--vocab-size", "300", "--extend", "gpt2", "--pattern", "cl100k"], "--pattern cannot be used with --extend"),
        (["--vocab-size", "300", "--veto", "a", "--veto-bytes", "b"], "not both"),
        (["--vocab-size", "300", "--superwords-after", "0"], "--superwords-after must be at least 1"),
        (["--vocab-size", "300", "--forbid-across", "nope"], "unknown forbid_across class 'nope'"),
    ],
)
def test_bad_training_options_are_one_line_errors(corpus, tmp_path, args, message):
    r = run("train", corpus, *args, "-o", tmp_path / "x")
    assert r.code != 0
    assert message in r.err, r.err
    assert "Traceback" not in r.err


def test_growth_options_are_refused_with_fasta(tmp_path):
    fasta = tmp_path / "g.fa"
    fasta.write_text(">x\nACGTACGTAACCGGTT\n", encoding="ascii")
    r = run("train", "--fasta", fasta, "--vocab-size", "10,20", "-o", tmp_path / "d")
    assert r.code != 0 and "several --vocab-size is for text, not with --fasta" in r.err
