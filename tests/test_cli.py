"""The `bytepair` command: train on text and on FASTA, DNA stats, and errors as one clear line."""

from __future__ import annotations

import subprocess
import sys

import pytest

import bytepair
from bytepair.cli import TOKENIZER_FILE, main

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bytepair", *args], capture_output=True, text=True, timeout=120)


def test_train_on_text_files(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower lowest\n" * 50, encoding="utf-8")
    out = tmp_path / "tok"
    assert main(["train", str(corpus), "--vocab-size", "259", "-o", str(out), "--no-progress"]) == 0
    assert "trained 259 tokens" in capsys.readouterr().out
    tok = bytepair.Tokenizer.load(out / TOKENIZER_FILE)
    assert tok == bytepair.train(corpus, 259)
    assert main(["train", str(corpus), "--vocab-size", "20", "--mode", "char", "--pattern", "none",
                 "--special-token", "<s>", "-o", str(out)]) == 0
    tok = bytepair.Tokenizer.load(out / TOKENIZER_FILE)
    assert tok.settings["mode"] == "char" and tok.settings["pattern"] is None and tok.special_tokens == ["<s>"]


def test_train_fasta_and_stats(tmp_path, capsys):
    fasta = tmp_path / "g.fa"
    fasta.write_text(">a\nACGTACGTTTGA\nacgtNNACGT\n>b\nGGGATTACA\n", encoding="ascii")
    out = tmp_path / "dna"
    assert main(["train", "--fasta", str(fasta), "--vocab-size", "14", "--chunk-length", "6",
                 "--reverse-complement", "-o", str(out)]) == 0
    tok = bytepair.Tokenizer.load(out / TOKENIZER_FILE)
    assert tok == bytepair.train_dna(fasta, 14, chunk_length=6, reverse_complement=True)
    capsys.readouterr()
    args = ["stats", str(out), "--fasta", str(fasta)]
    if _has_matplotlib():
        args += ["--png", str(tmp_path / "h.png")]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "bases per token" in printed and "mean k-mer length" in printed
    if _has_matplotlib():
        assert (tmp_path / "h.png").read_bytes()[:4] == b"\x89PNG"


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_errors_are_one_line_and_a_nonzero_status(tmp_path):
    text = tmp_path / "moby.txt"
    text.write_text("Call me Ishmael.\n", encoding="utf-8")
    result = run("train", "--fasta", str(text), "--vocab-size", "10", "-o", str(tmp_path / "o"))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("bytepair: error: ")
    assert "not a FASTA/FASTQ file" in result.stderr
    result = run("train", str(tmp_path / "missing.txt"), "--vocab-size", "300", "-o", str(tmp_path / "o"))
    assert result.returncode == 1 and "no such file" in result.stderr
    result = run("train", "--fasta", str(text), "--vocab-size", "10", "-o", str(tmp_path / "o"), "--verbose")
    assert result.returncode == 1 and "Traceback" in result.stderr
    result = run("train", "--vocab-size", "10", "-o", str(tmp_path / "o"))
    assert result.returncode == 1 and "nothing to train on" in result.stderr
    result = run("train", str(text), "--vocab-size", "0", "-o", str(tmp_path / "o"))
    assert result.returncode == 2 and "expected a number >= 1" in result.stderr  # argparse: usage error
    result = run("stats", str(tmp_path / "nothing"), "--fasta", str(text))
    assert result.returncode == 1 and "no tokenizer at" in result.stderr
    assert run().returncode == 2
    version = run("--version")
    assert version.returncode == 0 and version.stdout.startswith("bytepair ")
