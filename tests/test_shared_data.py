"""Real public data from ../shared/data: HF tokenizers parity, reference parity and round trips on English,
multilingual text, emoji and naughty strings. Skipped when the data is absent; required under CI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bytepair
from bytepair import reference

pytestmark = pytest.mark.shared_data


def lines(path: Path, limit: int | None = None) -> list[str]:
    text = path.read_text(encoding="utf-8")
    out = text.splitlines(keepends=True)
    return out[:limit] if limit else out


def hf_train(corpus: list[str], vocab_size: int, **options):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), **options
    )
    hf.train_from_iterator(corpus, trainer)
    model = json.loads(hf.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return merges, model["vocab"]


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"special_tokens": ["<|endoftext|>", "<pad>"]},
        {"min_frequency": 40},
        {"max_token_length": 5},
    ],
    ids=["plain", "special_tokens", "min_frequency", "max_token_length"],
)
def test_hf_tie_break_equals_hf_bpetrainer_on_tinyshakespeare(shared_data, options):
    corpus = lines(shared_data / "text/tinyshakespeare/input.txt")
    want_merges, want_vocab = hf_train(corpus, 2000, **options)
    tok = bytepair.train(corpus, 2000, tie_break="hf", **options)
    assert tok.merges == want_merges
    assert tok.vocab == want_vocab


def test_hf_tie_break_equals_hf_bpetrainer_on_multilingual_text(shared_data):
    corpus = []
    for name in ["udhr/cmn_hans.txt", "udhr/rus.txt", "udhr/arb.txt", "udhr/hin.txt", "ja/wagahaiwa_nekodearu.txt"]:
        corpus += lines(shared_data / "multilingual" / name, 3000)
    want_merges, want_vocab = hf_train(corpus, 3000, special_tokens=["<|endoftext|>"])
    tok = bytepair.train(corpus, 3000, tie_break="hf", special_tokens=["<|endoftext|>"])
    assert tok.merges == want_merges
    assert tok.vocab == want_vocab


@pytest.mark.parametrize("tie_break", ["first_seen", "hf"])
@pytest.mark.parametrize("mode", ["byte", "char"])
def test_core_equals_reference_on_multilingual_text(shared_data, tie_break, mode):
    corpus = []
    for name in ["udhr/eng.txt", "udhr/fra.txt", "udhr/jpn.txt", "udhr/kat.txt", "udhr/tha.txt"]:
        corpus += lines(shared_data / "multilingual" / name, 40)
    freqs = reference.word_frequencies(corpus)
    vocab_size = len(reference.base_vocabulary(freqs, mode, ["<|endoftext|>"], "corpus")) + 60
    opts = dict(mode=mode, tie_break=tie_break, initial_alphabet="corpus", special_tokens=["<|endoftext|>"])
    tok = bytepair.train(corpus, vocab_size, **opts)
    ref = reference.train(corpus, vocab_size, **opts)
    assert tok.merges == ref.merges
    assert tok.trace == ref.trace
    assert [tok.id_to_token(i) for i in range(tok.vocab_size)] == ref.vocab
    for text in corpus[:30]:
        assert tok.encode(text) == ref.encode(text)


@pytest.fixture(scope="module")
def english_tokenizer(shared_data):
    return bytepair.train(shared_data / "text/tinyshakespeare/input.txt", 1000, special_tokens=["<|endoftext|>"])


def all_texts(shared_data: Path) -> list[tuple[str, str]]:
    texts = []
    for path in sorted((shared_data / "multilingual").rglob("*")):
        if path.suffix in (".txt", ".json") and path.is_file():
            texts.append((str(path.relative_to(shared_data)), path.read_text(encoding="utf-8")))
    naughty = json.loads((shared_data / "testvectors/naughty_strings/blns.json").read_text(encoding="utf-8"))
    texts += [(f"blns[{i}]", s) for i, s in enumerate(naughty)]
    return texts


def test_byte_mode_round_trips_every_shared_text(shared_data, english_tokenizer):
    tok = english_tokenizer
    for name, text in all_texts(shared_data):
        ids = tok.encode(text, disallowed_special=())
        assert tok.decode(ids) == text, name
        assert all(0 <= i < tok.vocab_size for i in ids), name


def test_char_mode_with_unk_on_unseen_scripts(shared_data):
    eng = lines(shared_data / "multilingual/udhr/eng.txt")
    tok = bytepair.train(eng, 200, mode="char", unk_token="[UNK]")
    text = (shared_data / "multilingual/udhr/rus.txt").read_text(encoding="utf-8")[:500]
    tokens = tok.tokenize(text)
    assert "[UNK]" in tokens
    # Every Cyrillic letter became [UNK]; everything else kept its characters.
    kept = "".join(t for t in tokens if t != "[UNK]")
    assert all(not ("\u0400" <= c <= "\u04ff") for c in kept)
    assert len(kept) + tokens.count("[UNK]") == len(text)


def test_hf_tie_break_counts_special_token_text_as_hf_does(shared_data):
    """TinyStories separates its stories with <|endoftext|>: HF's trainer counts that text as ordinary text even
    with the token registered, and tie_break="hf" does the same (the other rules cut it out)."""
    text = (shared_data / "testvectors/cs336_bpe/tinystories_sample.txt").read_text(encoding="utf-8")
    corpus = text.splitlines(keepends=True) * 3
    assert sum("<|endoftext|>" in line for line in corpus) > 5
    want_merges, want_vocab = hf_train(corpus, 600, special_tokens=["<|endoftext|>"])
    tok = bytepair.train(corpus, 600, tie_break="hf", special_tokens=["<|endoftext|>"])
    assert tok.merges == want_merges
    assert tok.vocab == want_vocab
    assert ("<", "|") in tok.merges or ("Ġ<", "|") in tok.merges or any("endoftext" in a + b for a, b in tok.merges)
    # Encoding still matches the special token where it is allowed.
    assert tok.encode("a<|endoftext|>", allowed_special="all")[-1] == 0
    first = bytepair.train(corpus, 600, tie_break="first_seen", special_tokens=["<|endoftext|>"])
    assert not any("endoftext" in a + b for a, b in first.merges)
