"""DNA traps that used to pass silently: a FASTA file encoded as plain text (headers and line breaks become tokens,
or [UNK]), soft-masked lowercase bases turning into [UNK], and dna-stats measuring a text tokenizer. Now: `bytepair
encode --fasta` reads records as `train --fasta` does (uppercased unless --keep-case), and the other two warn."""

from __future__ import annotations

import gzip
import json
import warnings

import numpy as np
import pytest

import bytepair
from bytepair.dna import is_dna_tokenizer
from bytepair.formats.fasta import looks_like_fasta
from test_cli import run

GENOME = ">chr1 soft-masked\nACGTACGTTTGAacgtacgtttgaNNACGT\nGGGATTACAGATTACA\n>chr2\nttgacaTTGACAACGTACGT\n"


@pytest.fixture()
def dna(tmp_path):
    fasta = tmp_path / "g.fa"
    fasta.write_text(GENOME, encoding="ascii")
    out = tmp_path / "dna"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny genome runs out of pairs
        assert run("train", "--fasta", fasta, "--vocab-size", "30", "-o", out).code == 0
    return fasta, out


def ids_of(result) -> list[list[int]]:
    return [[int(i) for i in line.split()] for line in result.text.splitlines()]


def test_encode_fasta_reads_records_as_train_fasta_does(dna, tmp_path):
    fasta, out = dna
    tok = bytepair.Tokenizer.from_pretrained(out)
    result = run("encode", "-t", out, "--fasta", fasta)
    assert result.code == 0, result.err
    records = bytepair.read_fasta(fasta)  # uppercased, as train --fasta read them
    assert ids_of(result) == [tok.encode(r.sequence) for r in records]
    assert tok.token_to_id("[UNK]") not in {i for row in ids_of(result) for i in row}
    # Windows and case, as dna-stats and train --fasta take them.
    windows = run("encode", "-t", out, "--fasta", fasta, "--chunk-length", "10", "--ambiguous", "split")
    want = [tok.encode(r.sequence) for r in bytepair.read_fasta(fasta, chunk_length=10, ambiguous="split")]
    assert ids_of(windows) == want
    kept = run("encode", "-t", out, "--fasta", fasta, "--keep-case")
    assert tok.token_to_id("[UNK]") in {i for row in ids_of(kept) for i in row}  # asked for: lowercase stays
    # A gzipped FASTA into a binary token file, one record after another.
    gz = tmp_path / "g.fa.gz"
    gz.write_bytes(gzip.compress(GENOME.encode()))
    binary = tmp_path / "g.bin"
    assert run("encode", "-t", out, "--fasta", gz, "--format", "bin", "-o", binary).code == 0
    assert np.fromfile(binary, dtype="<u2").tolist() == [i for row in ids_of(result) for i in row]


def test_encode_warns_when_a_fasta_file_is_encoded_as_text(dna):
    fasta, out = dna
    result = run("encode", "-t", out, fasta)
    assert result.code == 0
    assert (
        "looks like FASTA: encoded as text, its headers and line breaks become tokens ([UNK] for this DNA" in result.err
    )
    assert "pass --fasta" in result.err
    assert "warning" not in run("encode", "-t", out, "--fasta", fasta).err


def test_fasta_options_need_fasta_and_files(dna):
    fasta, out = dna
    assert "--keep-case is for --fasta input" in run("encode", "-t", out, fasta, "--keep-case").err
    assert "not standard input" in run("encode", "-t", out, "--fasta", "-").err
    assert "leave out --jsonl-field" in run("encode", "-t", out, "--fasta", fasta, "--jsonl-field", "x").err


def test_dna_stats_warns_about_a_text_tokenizer(dna, shared_data):
    fasta, out = dna
    result = run("dna-stats", "-t", "gpt2", "--data", shared_data, fasta)
    assert result.code == 0
    assert "bytepair dna-stats: warning: this is not a DNA tokenizer (byte-level, pattern 'gpt2'" in result.err
    assert "bytepair train --fasta" in result.err
    quiet = run("dna-stats", "-t", out, fasta)
    assert quiet.code == 0 and "warning" not in quiet.err
    with pytest.warns(RuntimeWarning, match="not a DNA tokenizer"):
        bytepair.dna_stats(bytepair.train(["ACGT ACGT"] * 5, 258), ["ACGT"])


def test_which_tokenizers_are_dna_and_which_files_fasta():
    assert is_dna_tokenizer(bytepair.train_dna(["ACGTACGTTT"] * 4, 10))
    assert is_dna_tokenizer(bytepair.train_dna(["ACGUACGUUU"] * 4, 10, alphabet="ACGUN"))
    assert not is_dna_tokenizer(bytepair.train(["ACGT"] * 4, 7, mode="char", pattern="whitespace"))
    assert not is_dna_tokenizer(bytepair.train(["hello"] * 4, 7, mode="char", pattern=None))
    assert looks_like_fasta(GENOME) == "FASTA"
    assert looks_like_fasta("@read1\nACGTACGTNN\n+\nIIIIIIIIII\n") == "FASTQ"
    assert looks_like_fasta("@user thanks!\nSee you tomorrow\n+1\n") is None
    assert looks_like_fasta(">>> import bytepair\n>>> tok\n") is None
    assert looks_like_fasta("") is None


def test_dna_stats_json_is_unchanged_by_the_check(dna):
    fasta, out = dna
    numbers = json.loads(run("dna-stats", "-t", out, fasta, "--json").text)
    assert numbers["bases"] == sum(len(r.sequence) for r in bytepair.read_fasta(fasta))
