"""The command line for DNA: `bytepair train --fasta`, `bytepair dna-stats`, and their errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import bytepair
from bytepair import files
from test_cli import run

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")


@pytest.fixture()
def fasta(tmp_path):
    path = tmp_path / "g.fa"
    path.write_text(">a first\nACGTACGTTTGA\nacgtNNACGT\n>b\nGGGATTACAGATTACA\n", encoding="ascii")
    return path


def has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_train_fasta_writes_the_tokenizer_and_reports_bases_per_token(tmp_path, fasta):
    out = tmp_path / "dna"
    result = run(
        "train",
        "--fasta",
        fasta,
        "--vocab-size",
        "20",
        "--chunk-length",
        "6",
        "--reverse-complement",
        "--special-token",
        "[CLS]",
        "-o",
        out,
    )
    assert result.code == 0, result.err
    assert "bases per token" in result.text and "both strands" in result.text
    tok = bytepair.Tokenizer.load(out / files.OUR_FILE)
    want = bytepair.train_dna(fasta, 20, chunk_length=6, reverse_complement=True, special_tokens=["[CLS]"])
    assert tok == want
    assert files.load_tokenizer(out) == want


def test_dna_stats(tmp_path, fasta):
    out = tmp_path / "dna"
    assert run("train", "--fasta", fasta, "--vocab-size", "14", "-o", out).code == 0
    result = run("dna-stats", "-t", out, fasta)
    assert result.code == 0, result.err
    assert "bases per token" in result.text and "mean k-mer length" in result.text
    numbers = json.loads(run("dna-stats", "-t", out, fasta, "--chunk-length", "5", "--json").text)
    assert numbers["sequences"] == 9 and numbers["bases"] == 38  # windows of 5: 5 + 4
    assert run("train", "--fasta", fasta, "--vocab-size", "20", "-o", tmp_path / "big").code == 0
    both = run("dna-stats", "-t", f"small={out}", "-t", f"big={tmp_path / 'big'}", fasta, "--json")
    numbers = json.loads(both.text)
    assert set(numbers) == {"small", "big"} and numbers["big"]["tokens"] < numbers["small"]["tokens"]
    if has_matplotlib():
        png = tmp_path / "h.png"
        assert run("dna-stats", "-t", out, "-t", tmp_path / "big", fasta, "--png", png).code == 0, "png"
        assert png.read_bytes()[:4] == b"\x89PNG"


def test_fasta_errors_are_one_line(tmp_path, fasta):
    text = tmp_path / "moby.txt"
    text.write_text("Call me Ishmael.\n", encoding="utf-8")
    result = run("train", "--fasta", text, "--vocab-size", "10", "-o", tmp_path / "o")
    assert result.code == 1
    assert result.err.count("\n") == 1 and result.err.startswith("bytepair train: error: ")
    assert "not a FASTA/FASTQ file" in result.err
    result = run("train", "--fasta", tmp_path / "missing.fa", "--vocab-size", "10", "-o", tmp_path / "o")
    assert result.code == 1 and "no such file" in result.err
    result = run("train", str(text), "--fasta", fasta, "--vocab-size", "10", "-o", tmp_path / "o")
    assert result.code == 2 and "not both" in result.err
    result = run("train", "--vocab-size", "10", "-o", tmp_path / "o")
    assert result.code == 2 and "nothing to train on" in result.err
    result = run("train", "--fasta", fasta, "--mode", "char", "--vocab-size", "10", "-o", tmp_path / "o")
    assert result.code == 2 and "--mode is for text" in result.err
    # Given with the text default's value, still refused (it would be ignored).
    result = run(
        "train", "--fasta", fasta, "--mode", "byte", "--pattern", "gpt2", "--vocab-size", "10", "-o", tmp_path / "o"
    )
    assert result.code == 2 and "--mode, --pattern are for text" in result.err
    result = run("dna-stats", "-t", tmp_path / "nothing", fasta)
    assert result.code == 1
    verbose = subprocess.run(
        [
            sys.executable,
            "-m",
            "bytepair",
            "train",
            "--fasta",
            str(text),
            "--vocab-size",
            "10",
            "-o",
            str(tmp_path / "o"),
            "--verbose",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert verbose.returncode == 1 and "Traceback" in verbose.stderr
