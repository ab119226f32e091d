"""DNA: FASTA/FASTQ reading (and refusing what is not), the `dna` preset against the textbook reference, both
merge-loop layouts, reverse complements, linear-time encoding of long sequences, statistics and charts."""

from __future__ import annotations

import gzip
import random
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _core, reference
from bytepair.training import TrainSettings, new_counts
from conftest import examples

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

ECOLI = "genome/ecoli_k12_mg1655_NC_000913.3.fna.gz"


def random_dna(rng: random.Random, n: int, letters: str = "ACGT") -> str:
    return "".join(rng.choice(letters) for _ in range(n))


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(data.encode() if isinstance(data, str) else data))
    elif isinstance(data, str):
        path.write_bytes(data.encode())
    else:
        path.write_bytes(data)
    return path


# -- reading FASTA/FASTQ -----------------------------------------------------------------------------------


def test_multi_record_wrapped_crlf_blank_lines_and_gzip(tmp_path):
    text = ">chr1 first chromosome\r\nACGTac\r\ngtNN\r\n\r\n>chr2\nTTGA\n\n>empty\n>chr3\nacgt"
    for name in ("g.fa", "g.fa.gz", "g.fasta.gz.unusual"):  # gzip is recognised by content, not by name
        path = write(tmp_path, name, gzip.compress(text.encode()) if name.endswith("unusual") else text)
        records = bytepair.read_fasta(path)
        assert records == [("chr1 first chromosome", "ACGTACGTNN"), ("chr2", "TTGA"), ("empty", ""), ("chr3", "ACGT")]
    assert records[0].id == "chr1" and records[0].name == "chr1 first chromosome"
    assert len(records[0]) == 10
    assert bytepair.read_fasta(path, uppercase=False)[0].sequence == "ACGTacgtNN"


def test_fastq_quality_lines_are_ignored(tmp_path):
    # Quality lines may start with '@' or '+': they are skipped by length, not by their first character.
    path = write(tmp_path, "r.fq", "@read1 x\nACGTN\n+\n@@+II\n@read2\nGG\n+read2\n!!\n")
    assert bytepair.read_fasta(path) == [("read1 x", "ACGTN"), ("read2", "GG")]
    bad = write(tmp_path, "bad.fq", "@read1\nACGT\n+\nII\n")
    with pytest.raises(ValueError, match="incomplete.*quality line is shorter"):
        bytepair.read_fasta(bad)


def test_empty_file_and_bom(tmp_path):
    assert bytepair.read_fasta(write(tmp_path, "e.fa", "")) == []
    assert bytepair.read_fasta(write(tmp_path, "b.fa", b"\xef\xbb\xbf>x\nAC\n")) == [("x", "AC")]
    with pytest.raises(ValueError, match="no sequence to train on: 1 records, 0 bases"):
        bytepair.train_dna(write(tmp_path, "n.fa", ">only_ns\nNNNN\n"), 10)


def test_ambiguous_codes_and_windows(tmp_path):
    path = write(tmp_path, "a.fa", ">r\nACGTNNNNacgRYTTA\n")
    assert bytepair.read_fasta(path)[0].sequence == "ACGTNNNNACGRYTTA"
    split = bytepair.read_fasta(path, ambiguous="split")
    assert split == [("r:1-4", "ACGT"), ("r:9-11", "ACG"), ("r:14-16", "TTA")]
    assert bytepair.read_fasta(path, ambiguous="drop") == [("r", "ACGTACGTTA")]
    windows = bytepair.read_fasta(path, chunk_length=5)
    assert [r.sequence for r in windows] == ["ACGTN", "NNNAC", "GRYTT", "A"]
    assert [r.name for r in windows] == ["r:1-5", "r:6-10", "r:11-15", "r:16-16"]
    assert [r.name for r in bytepair.read_fasta(path, ambiguous="split", chunk_length=2)] == [
        "r:1-2",
        "r:3-4",
        "r:9-10",
        "r:11-11",
        "r:14-15",
        "r:16-16",
    ]
    with pytest.raises(ValueError, match="ambiguous='maybe' is not supported"):
        bytepair.read_fasta(path, ambiguous="maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chunk_length must be None"):
        bytepair.read_fasta(path, chunk_length=0)


def test_files_that_are_not_fasta_are_refused_clearly(tmp_path):
    with pytest.raises(ValueError, match=r"not a FASTA/FASTQ file: it starts with 'Call me Ishmael"):
        bytepair.read_fasta(write(tmp_path, "moby.txt", "Call me Ishmael. Some years ago\n"))
    with pytest.raises(ValueError, match="not text"):
        bytepair.read_fasta(write(tmp_path, "img.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
    with pytest.raises(ValueError, match=r"line 3: '3' in the sequence of record 'x'"):
        bytepair.read_fasta(write(tmp_path, "digits.fa", ">x\nACGT\nAC3T\n"))
    with pytest.raises(ValueError, match=r"byte 0xC3"):
        bytepair.read_fasta(write(tmp_path, "utf8.fa", ">x\nACGTé\n"))
    cut = tmp_path / "cut.fa.gz"
    cut.write_bytes(gzip.compress(b">x\n" + bytes(random.Random(0).choices(b"ACGT", k=100_000)))[:2000])
    with pytest.raises(ValueError, match="not a valid gzip file"):
        bytepair.read_fasta(cut)
    with pytest.raises(FileNotFoundError, match="no such FASTA/FASTQ file"):
        bytepair.read_fasta(tmp_path / "missing.fa")
    with pytest.raises(IsADirectoryError):
        bytepair.read_fasta(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"pass it in a list: train_dna\(\[sequence\]"):
        bytepair.train_dna("ACGTACGT", 10)


def test_a_long_single_line_is_read_and_trained_without_loss(tmp_path):
    # 12 MB on one line (longer than the reader's blocks); the logic is the one a 2 GB line goes through.
    rng = random.Random(5)
    unit = random_dna(rng, 1 << 16)
    seq = unit * 190
    path = write(tmp_path, "long.fa", ">one_line\n" + seq + "\n")
    (record,) = bytepair.read_fasta(path)
    assert record.sequence == seq
    tok = bytepair.train_dna(path, 300)
    assert tok.vocab_size == 300
    assert tok.decode(tok.encode(seq[:100_000])) == seq[:100_000]


def test_iter_fasta_holds_one_record_at_a_time(tmp_path):
    path = write(tmp_path, "m.fa", "".join(f">r{i}\n{'ACGT' * (i + 1)}\n" for i in range(1000)))
    it = bytepair.iter_fasta(path)
    assert next(it) == ("r0", "ACGT")
    assert sum(len(r) for r in it) == sum(4 * (i + 1) for i in range(1, 1000))


def test_reverse_complement():
    assert bytepair.reverse_complement("AACGTN") == "NACGTT"
    assert bytepair.reverse_complement("acgtRYKMBVDHSW-") == "-WSDHBVKMRYacgt"
    seq = random_dna(random.Random(1), 1000, "ACGTN")
    assert bytepair.reverse_complement(bytepair.reverse_complement(seq)) == seq


# -- training: the preset against the reference -------------------------------------------------------------


def reference_dna(sequences: list[str], vocab_size: int, tie_break: str = "first_seen", alphabet: str = "ACGTN"):
    return reference.train(
        sequences,
        vocab_size,
        pattern=None,
        mode="char",
        initial_alphabet=list(alphabet),
        limit_alphabet=len(alphabet),
        unk_token="[UNK]",
        tie_break=tie_break,
    )


def vocab_list(tok: bytepair.Tokenizer) -> list[str | None]:
    return [tok.id_to_token(i) for i in range(tok.vocab_size)]


@pytest.mark.parametrize("tie_break", ["first_seen", "hf", "lexicographic"])
def test_train_dna_equals_the_reference_on_random_dna(tie_break):
    rng = random.Random(11)
    sequences = [random_dna(rng, rng.randint(50, 900)) for _ in range(6)]
    sequences.append(sequences[0])  # a repeated sequence: a word with count 2
    tok = bytepair.train_dna(sequences, 6 + 150, tie_break=tie_break)
    ref = reference_dna(sequences, 6 + 150, tie_break)
    assert tok.trace == ref.trace
    assert vocab_list(tok) == ref.vocab
    for seq in sequences[:3] + [random_dna(rng, 300, "ACGTN")]:
        assert tok.encode(seq) == ref.encode(seq)
        assert tok.decode(tok.encode(seq)) == seq


def test_reverse_complement_counts_both_strands():
    rng = random.Random(12)
    sequences = [random_dna(rng, 400) for _ in range(3)]
    both = [s for seq in sequences for s in (seq, bytepair.reverse_complement(seq))]
    tok = bytepair.train_dna(sequences, 80, reverse_complement=True)
    assert tok.trace == reference_dna(both, 80).trace
    # Either strand trains the same vocabulary (with a tie rule that does not depend on the order of the text).
    flipped = [bytepair.reverse_complement(s) for s in sequences]
    for tie_break in ("hf", "lexicographic"):
        a = bytepair.train_dna(sequences, 80, reverse_complement=True, tie_break=tie_break)
        b = bytepair.train_dna(flipped, 80, reverse_complement=True, tie_break=tie_break)
        assert vocab_list(a) == vocab_list(b)


def test_rna_reverse_complement_pairs_a_with_u(tmp_path):
    """With an RNA alphabet (U, no T) the other strand is RNA too: A pairs with U (it became T, a letter outside
    the alphabet: [UNK] at every A, or an error without unk_token)."""
    assert bytepair.reverse_complement("AACGUu", rna=True) == "aACGUU"
    rng = random.Random(5)
    sequences = [random_dna(rng, 300).replace("T", "U") for _ in range(3)]
    both = [s for seq in sequences for s in (seq, bytepair.reverse_complement(seq, rna=True))]
    tok = bytepair.train_dna(sequences, 60, alphabet="ACGUN", reverse_complement=True)
    assert tok.trace == reference_dna(both, 60, alphabet="ACGUN").trace
    bytepair.train_dna(sequences, 60, alphabet="ACGUN", reverse_complement=True, unk_token=None)  # no T anywhere
    fasta = tmp_path / "rna.fa"
    fasta.write_text("".join(f">r{i}\n{s}\n" for i, s in enumerate(sequences)), encoding="ascii")
    from_file = bytepair.train_dna(fasta, 60, alphabet="ACGUN", reverse_complement=True)
    assert from_file.trace == tok.trace


def test_chunks_uppercase_and_ambiguous_codes_before_training():
    seq = "acgtNNNNNACGTTRACGaaccggtt" * 20
    tok = bytepair.train_dna([seq], 40, chunk_length=7)
    pieces = []
    for stretch in seq.upper().replace("R", "N").split("N"):
        pieces += [stretch[i : i + 7] for i in range(0, len(stretch), 7)] if stretch else []
    assert tok.trace == reference_dna(pieces, 40).trace
    kept = bytepair.train_dna([seq], 40, ambiguous="keep")
    assert kept.trace == reference_dna([seq.upper()], 40).trace
    assert kept.tokenize("ACGTRACG").count("[UNK]") == 1  # R is not in the alphabet
    dropped = bytepair.train_dna([seq], 40, ambiguous="drop")
    assert dropped.trace == reference_dna([seq.upper().replace("N", "").replace("R", "")], 40).trace


def test_train_dna_options_and_errors(tmp_path):
    tok = bytepair.train_dna(["ACGTACGTAC"] * 3, 12, special_tokens=["[CLS]", "[SEP]"])
    assert vocab_list(tok)[:8] == ["[CLS]", "[SEP]", "[UNK]", "A", "C", "G", "N", "T"]
    rna = bytepair.train_dna(["ACGUACGU"], 10, alphabet="ACGUN")
    assert "U" in rna.vocab and "T" not in rna.vocab
    with pytest.raises(ValueError, match="outside alphabet='ACGT' and unk_token is None"):
        bytepair.train_dna(["ACGTRACGT"], 10, alphabet="ACGT", unk_token=None, ambiguous="keep")
    with pytest.raises(ValueError, match="lowercase letters, but uppercase=True"):
        bytepair.train_dna(["ACGT"], 10, alphabet="acgt")
    with pytest.raises(TypeError, match="sequence 1 is a int"):
        bytepair.train_dna(["ACGT", 5], 10)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="sequence 2 holds '!' at position 1, which is not a nucleotide code"):
        bytepair.train_dna(["ACGT", "AC", "A!"], 10)
    with pytest.raises(TypeError, match="not bytes"):
        bytepair.train_dna(b"ACGT", 10)  # type: ignore[arg-type]
    # Files, records and sequences mix; records are read as their sequence (never their name).
    path = write(tmp_path, "x.fa", ">seq_named_GATTACA\nGGGGCCCC\n")
    mixed = bytepair.train_dna([path, "ACGTACGT", bytepair.FastaRecord("name", "TTTT")], 20)
    assert mixed.trace == reference_dna(["GGGGCCCC", "ACGTACGT", "TTTT"], 20).trace
    assert bytepair.train([bytepair.FastaRecord("GATTACA", "CCCC")], 20, mode="char", pattern=None).merges == [
        ("C", "C"),
        ("CC", "CC"),
    ]


# -- the two layouts of the merge loop give the same merges --------------------------------------------------


def train_with_engine(sequences: list[str], vocab_size: int, engine: str, tie_break: str, max_len, min_freq):
    counts = new_counts(TrainSettings.from_arguments(1, pattern=None, special_tokens=[], lowercase=False))
    counts.add_texts(sequences)
    core, _ = _core.train_counts(
        counts,
        vocab_size,
        "char",
        "corpus",
        [],
        "[UNK]",
        None,
        None,
        min_freq,
        max_len,
        tie_break,
        False,
        None,
        engine=engine,
    )
    tok = bytepair.Tokenizer(core)
    return tok.trace


dna_corpora = st.lists(st.text(alphabet="ACGTN", min_size=1, max_size=300), min_size=1, max_size=8)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=dna_corpora,
    tie_break=st.sampled_from(["first_seen", "hf", "lexicographic"]),
    max_len=st.sampled_from([None, None, 3, 6]),
    min_freq=st.sampled_from([0, 0, 3]),
    extra=st.integers(1, 200),
    repeat=st.booleans(),
)
def test_compact_and_slots_layouts_give_the_same_merges(corpus, tie_break, max_len, min_freq, extra, repeat):
    if repeat:
        corpus = corpus + corpus[:2]
    vocab_size = 6 + extra
    assert train_with_engine(corpus, vocab_size, "compact", tie_break, max_len, min_freq) == train_with_engine(
        corpus, vocab_size, "slots", tie_break, max_len, min_freq
    )


def test_compact_layout_to_the_last_pair_with_wide_ids():
    # Training until no pair is left passes every recount threshold; 70 000 ids need 4-byte symbols.
    rng = random.Random(3)
    corpus = [random_dna(rng, 3000, "AC") for _ in range(3)] + ["A" * 5000]
    for vocab_size in (60_000, 70_000):
        assert train_with_engine(corpus, vocab_size, "compact", "first_seen", None, 0) == train_with_engine(
            corpus, vocab_size, "slots", "first_seen", None, 0
        )


# -- encoding -------------------------------------------------------------------------------------------------


def fixture_sequences() -> list[str]:
    rng = random.Random(21)
    return [random_dna(rng, 1500) for _ in range(12)]


@pytest.fixture(scope="module")
def dna_tokenizer() -> bytepair.Tokenizer:
    return bytepair.train_dna(fixture_sequences(), 300)


@settings(max_examples=examples(100), deadline=None)
@given(seq=st.text(alphabet="ACGTN", max_size=2000))
def test_decode_encode_round_trips_and_numpy_agrees(dna_tokenizer, seq):
    ids = dna_tokenizer.encode(seq)
    assert dna_tokenizer.decode(ids) == seq
    assert dna_tokenizer.encode_to_numpy(seq).tolist() == ids


def test_encoding_equals_the_reference_at_every_length(dna_tokenizer):
    rng = random.Random(22)
    ref = reference_dna(fixture_sequences(), 300)
    assert vocab_list(dna_tokenizer) == ref.vocab
    for n in (1, 2, 47, 48, 49, 500, 4096, 4097, 9000):
        seq = random_dna(rng, n, "ACGTN")
        assert dna_tokenizer.encode(seq) == ref.encode(seq), n


def test_a_whole_chromosome_encodes_in_linear_time(dna_tokenizer):
    rng = random.Random(23)
    unit = random_dna(rng, 250_000)
    times = {}
    for copies in (2, 8):
        seq = unit * copies
        start = time.perf_counter()
        ids = dna_tokenizer.encode_to_numpy(seq)
        times[copies] = time.perf_counter() - start
        assert dna_tokenizer.decode(ids.tolist()) == seq
    # 4x the bases in about 4x the time (generous bound for a loaded machine; quadratic would be 16x).
    assert times[8] < 10 * max(times[2], 0.02), times
    run = "A" * 2_000_000  # one symbol repeated: the classic worst case
    start = time.perf_counter()
    assert dna_tokenizer.decode(dna_tokenizer.encode(run)) == run
    assert time.perf_counter() - start < 10


# -- statistics and charts -----------------------------------------------------------------------------------


def test_dna_stats_and_histogram_png(tmp_path, dna_tokenizer):
    rng = random.Random(24)
    sequences = [random_dna(rng, 3000) for _ in range(4)]
    stats = bytepair.dna_stats(dna_tokenizer, sequences + ["acgtRRacgt"])
    assert stats.sequences == 5 and stats.bases == 12_010
    assert stats.tokens == sum(len(dna_tokenizer.encode(s)) for s in sequences + ["ACGTRRACGT"])
    assert stats.bases_per_token == pytest.approx(stats.bases / stats.tokens)
    assert stats.unknown == 2  # the two R
    assert sum(n * c for n, c in stats.token_lengths.items()) == stats.bases
    assert sum(stats.vocab_lengths.values()) == dna_tokenizer.vocab_size - 1  # all but [UNK]
    assert "bases per token" in str(stats)
    path = write(tmp_path, "s.fa", "".join(f">s{i}\n{s}\n" for i, s in enumerate(sequences)))
    assert bytepair.dna_stats(dna_tokenizer, path).tokens == bytepair.dna_stats(dna_tokenizer, sequences).tokens
    pytest.importorskip("matplotlib")
    from bytepair.viz import token_length_histogram

    png = token_length_histogram({"a": stats, "b": stats}, tmp_path / "h.png", title="test")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(TypeError, match="DnaStats"):
        token_length_histogram({"a": 1}, tmp_path / "x.png")  # type: ignore[dict-item]


# -- the real genome ------------------------------------------------------------------------------------------


@pytest.mark.shared_data
def test_ecoli_in_1000_bp_chunks(shared_data):
    path = shared_data / ECOLI
    (record,) = bytepair.read_fasta(path)
    assert record.id == "NC_000913.3" and len(record) == 4_641_652 and set(record.sequence) == set("ACGT")
    tok = bytepair.train_dna(path, 4096, chunk_length=1000)
    assert tok.vocab_size == 4096
    chunk = record.sequence[:1000]
    assert tok.decode(tok.encode(chunk)) == chunk
    stats = bytepair.dna_stats(tok, [record.sequence[i : i + 1000] for i in range(0, 400_000, 1000)])
    assert 4.5 < stats.bases_per_token < 6.5, stats  # HF tokenizers reaches 5.08 on the same chunks
    # The same chunks given as strings train the same vocabulary.
    chunks = [r.sequence for r in bytepair.read_fasta(path, chunk_length=1000)]
    assert bytepair.train_dna(chunks, 4096) == tok


@pytest.mark.shared_data
def test_ecoli_layouts_agree_on_a_slice(shared_data):
    (record,) = bytepair.read_fasta(shared_data / ECOLI)
    chunks = [record.sequence[i : i + 1000] for i in range(0, 300_000, 1000)]
    for tie_break in ("first_seen", "hf"):
        assert train_with_engine(chunks, 1000, "compact", tie_break, None, 0) == train_with_engine(
            chunks, 1000, "slots", tie_break, None, 0
        )


def test_docstring_examples_of_the_dna_module():
    import doctest

    import bytepair.dna

    failures, tried = doctest.testmod(bytepair.dna, optionflags=doctest.ELLIPSIS)
    assert failures == 0 and tried > 10
