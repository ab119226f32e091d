"""The fast trainer: known answers, independence from the thread count, every kind of input, long words and
lines, limit_alphabet, the lexicographic tie rule, progress output."""

from __future__ import annotations

import collections
import gzip
import json
import random
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import bytepair
from bytepair import reference
from bytepair.training import TrainSettings, new_counts

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")


# -- known answers and parity ------------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("as_file", [True, False], ids=["file", "one_text"])
def test_cs336_known_answer(shared_data, threads, as_file):
    """Stanford CS336's BPE-training fixture: byte-level BPE on corpus.en, vocab 500, <|endoftext|>, ties to
    the lexicographically greater pair. Merges and vocabulary must equal the published answer."""
    folder = shared_data / "testvectors/cs336_bpe"
    path = folder / "corpus.en"
    corpus = path if as_file else [path.read_text(encoding="utf-8")]
    tok = bytepair.train(corpus, 500, special_tokens=["<|endoftext|>"], tie_break="lexicographic", threads=threads)
    lines = (folder / "train-bpe-reference-merges.txt").read_text(encoding="utf-8").splitlines()
    want = [tuple(line.split(" ")) for line in lines if line]
    assert tok.merges == want
    assert tok.vocab == json.loads((folder / "train-bpe-reference-vocab.json").read_text(encoding="utf-8"))


def stdlib_sources(count: int) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*.py"))
    step = max(1, len(files) // count)
    return files[::step][:count]


def source_lines(files: list[Path]) -> list[str]:
    out: list[str] = []
    for f in files:
        out += f.read_bytes().decode("utf-8", errors="replace").splitlines(keepends=True)
    return out


def test_hf_tie_break_equals_hf_bpetrainer_on_python_source():
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers, trainers

    corpus = source_lines(stdlib_sources(120))
    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=3000, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    hf.train_from_iterator(corpus, trainer)
    model = json.loads(hf.to_str())["model"]
    want = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    for threads in (1, 2):
        tok = bytepair.train(corpus, 3000, tie_break="hf", threads=threads)
        assert tok.merges == want
        assert tok.vocab == model["vocab"]


@pytest.mark.parametrize("tie_break", ["first_seen", "hf", "lexicographic"])
def test_core_equals_reference_on_python_source(tie_break):
    corpus = source_lines(stdlib_sources(6))[:1500]
    freqs = reference.word_frequencies(corpus)
    vocab_size = len(reference.base_vocabulary(freqs, "byte", (), "corpus")) + 150
    opts = dict(tie_break=tie_break, initial_alphabet="corpus")
    tok = bytepair.train(corpus, vocab_size, **opts)
    ref = reference.train(corpus, vocab_size, **opts)
    assert tok.merges == ref.merges
    assert tok.trace == ref.trace


def test_lexicographic_prefers_the_greater_pair():
    # ("a","b") and ("c","d") both occur twice; "c" > "a", so (c, d) is merged first.
    tok = bytepair.train_from_counts({"ab": 2, "cd": 2}, 4 + 1, mode="char", tie_break="lexicographic")
    assert tok.merges == [("c", "d")]
    tok = bytepair.train_from_counts({"ab": 2, "cd": 2}, 4 + 1, mode="char", tie_break="first_seen")
    assert tok.merges == [("a", "b")]


# -- threads ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def multilingual_files(shared_data) -> list[str]:
    names = ["bible/Ukrainian-NT.txt", "ko/nsmc_reviews_sample.txt", "ja/wagahaiwa_nekodearu.txt", "udhr/eng.txt"]
    return [str(shared_data / "multilingual" / n) for n in names]


def newline_split(text: str) -> list[str]:
    """Lines as files are read: cut after each "\n" only (str.splitlines also cuts at \r, \x0c, \u2028…)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def test_thread_count_changes_nothing(multilingual_files):
    """5 MB in many work items: word order and merges are the same for 1, 2 and 5 threads, from files or texts."""
    results = []
    for threads in (1, 2, 5):
        counts = new_counts(
            TrainSettings.from_arguments(
                1, pattern="gpt2", special_tokens=["<|endoftext|>"], lowercase=False, threads=threads
            )
        )
        for f in multilingual_files:
            counts.add_file(f, "strict")
        results.append(counts.items())
    assert results[0] == results[1] == results[2]
    texts = [line for f in multilingual_files for line in newline_split(Path(f).read_bytes().decode("utf-8"))]
    counts = new_counts(
        TrainSettings.from_arguments(1, pattern="gpt2", special_tokens=["<|endoftext|>"], lowercase=False, threads=2)
    )
    counts.add_texts(texts)
    assert counts.items() == results[0]
    toks = [bytepair.train(multilingual_files, 2500, threads=t) for t in (1, 2, 5)]
    assert toks[0] == toks[1] == toks[2]


def test_threads_must_be_positive():
    with pytest.raises(ValueError, match="threads must be None"):
        bytepair.train(["a b"], 300, threads=0)


# -- inputs -----------------------------------------------------------------------------------------------


def test_hf_datasets_columns_and_batches():
    import datasets  # a test dependency (make test installs it)

    texts = ["the cat sat on the mat\n", "the dog sat\n", "a cat and a dog\n"] * 20
    ds = datasets.Dataset.from_dict({"text": texts, "id": list(range(len(texts)))})
    want = bytepair.train(texts, 300)
    assert bytepair.train(ds["text"], 300) == want
    assert bytepair.train((batch["text"] for batch in ds.iter(batch_size=7)), 300) == want
    assert bytepair.train(ds, 300) == want  # its only text column
    with pytest.raises(TypeError, match=r"pass field='text'"):
        bytepair.train(iter(ds), 300)  # rows (dicts) one by one, without saying which field


def test_gz_plain_and_texts_agree(tmp_path):
    text = "".join(f"line {i} with words {i % 7} and more {i * 31 % 101}\n" for i in range(5000))
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    with gzip.open(tmp_path / "a.txt.gz", "wt", encoding="utf-8") as f:
        f.write(text)
    plain = bytepair.train(tmp_path / "a.txt", 400)
    assert bytepair.train(str(tmp_path / "a.txt.gz"), 400) == plain
    assert bytepair.train(text.splitlines(keepends=True), 400) == plain


def test_train_from_counts_equals_train_on_the_same_words():
    texts = ["low lower lowest newer wider"] * 3
    counts = dict(reference.word_frequencies(texts))
    assert bytepair.train_from_counts(counts, 300) == bytepair.train(texts, 300)


# -- long words and lines -----------------------------------------------------------------------------------


def test_a_100_mb_line_without_a_newline(tmp_path):
    """One 100 MB line: read, cut inside at safe points, counted exactly; training works."""
    rng = random.Random(7)
    vocabulary = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 9))) for _ in range(500)]
    words = rng.choices(vocabulary, k=16_000_000)
    text = " ".join(words)
    assert len(text) > 100_000_000 and "\n" not in text
    path = tmp_path / "one_line.txt"
    path.write_text(text, encoding="utf-8")
    counts = new_counts(TrainSettings.from_arguments(1, pattern="gpt2", special_tokens=[], lowercase=False, threads=2))
    counts.add_file(str(path), "strict")
    want = collections.Counter(" " + w for w in words[1:])
    want[words[0]] += 1
    assert dict(counts.items()) == dict(want)
    # First appearance order is kept even though the line was cut into pieces counted in parallel.
    first = list(dict.fromkeys([words[0]] + [" " + w for w in words[1:]]))
    assert [w for w, _ in counts.items()] == first
    del text, words
    tok = bytepair.train(path, 300, threads=2)
    assert tok.vocab_size == 300


def test_a_run_of_one_symbol_is_linear_and_exact():
    """ "a" * 2_000_000 as one word: merges double the token each time (a+a, aa+aa, …) — no quadratic blow-up."""
    tok = bytepair.train(["a" * 2_000_000], 256 + 15, pattern=None)
    assert tok.merges[:4] == [("a", "a"), ("aa", "aa"), ("aaaa", "aaaa"), ("aaaaaaaa", "aaaaaaaa")]
    small = "a" * 1000
    assert bytepair.train([small], 260, pattern=None).trace == reference.train([small], 260, pattern=None).trace


@pytest.mark.parametrize("tie_break", ["first_seen", "hf", "lexicographic"])
def test_dna_word_equals_reference(tie_break):
    rng = random.Random(3)
    dna = "".join(rng.choice("ACGT") for _ in range(3000))
    opts = dict(pattern=None, initial_alphabet="corpus", tie_break=tie_break)
    tok = bytepair.train([dna, dna[::-1]], 4 + 120, **opts)
    ref = reference.train([dna, dna[::-1]], 4 + 120, **opts)
    assert tok.trace == ref.trace


# -- limit_alphabet ---------------------------------------------------------------------------------------


def test_limit_alphabet_keeps_the_most_frequent_characters():
    corpus = ["aaaa bbb cc d é"] * 3
    tok = bytepair.train(corpus, 10, mode="char", pattern="whitespace", limit_alphabet=3, unk_token="[UNK]")
    assert [tok.id_to_token(i) for i in range(4)] == ["[UNK]", "a", "b", "c"]
    assert tok.tokenize("dé") == ["[UNK]", "[UNK]"]
    # initial_alphabet characters always stay.
    tok = bytepair.train(
        corpus, 10, mode="char", pattern="whitespace", limit_alphabet=3, unk_token="[UNK]", initial_alphabet=["é"]
    )
    assert [tok.id_to_token(i) for i in range(4)] == ["[UNK]", "a", "b", "é"]


def test_limit_alphabet_needs_unk_and_char_mode():
    with pytest.raises(ValueError, match=r"leaves out 2 of the 5 characters.*'d' seen 3 times.*unk_token"):
        bytepair.train(["aaaa bbb cc d é"] * 3, 10, mode="char", pattern="whitespace", limit_alphabet=2 + 1)
    with pytest.raises(ValueError, match='only applies to mode="char"'):
        bytepair.train(["abc"], 300, limit_alphabet=10)
    with pytest.raises(ValueError, match="limit_alphabet must be None or an int >= 1"):
        bytepair.train(["abc"], 300, mode="char", limit_alphabet=0)


# -- progress ---------------------------------------------------------------------------------------------


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_progress_shows_bytes_then_merges_on_stderr(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("some words and some more words\n" * 2000, encoding="utf-8")
    shown = run_python(f"import bytepair; bytepair.train({str(path)!r}, 265, progress=True)")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == ""
    assert "reading" in shown.stderr.lower() and "merg" in shown.stderr.lower()
    # Not a terminal and progress=None: silent.
    silent = run_python(f"import bytepair; bytepair.train({str(path)!r}, 265)")
    assert silent.returncode == 0 and silent.stderr == "" and silent.stdout == ""
