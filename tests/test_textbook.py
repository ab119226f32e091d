"""The textbook examples (Hugging Face course, chapter 6), reproduced exactly — through the public API and
through the pure-Python reference — and the `hf` rule against the real HF tokenizers package."""

from __future__ import annotations

import json
from typing import Any

import pytest

import bytepair
from bytepair import reference

HUG_COUNTS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}

COURSE_CORPUS = [
    "This is the Hugging Face Course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
]

COURSE_MERGES = [
    ("Ġ", "t"),
    ("i", "s"),
    ("e", "r"),
    ("Ġ", "a"),
    ("Ġt", "o"),
    ("e", "n"),
    ("T", "h"),
    ("Th", "is"),
    ("o", "u"),
    ("s", "e"),
    ("Ġto", "k"),
    ("Ġtok", "en"),
    ("n", "d"),
    ("Ġ", "is"),
    ("Ġt", "h"),
    ("Ġth", "e"),
    ("i", "n"),
    ("Ġa", "b"),
    ("Ġtoken", "i"),
]
COURSE_COUNTS = [7, 5, 5, 5, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2]


@pytest.mark.parametrize("impl", [bytepair, reference], ids=["core", "reference"])
def test_char_mode_hug_example(impl):
    tok = impl.train_from_counts(HUG_COUNTS, vocab_size=11, mode="char", unk_token="[UNK]")
    assert tok.trace == [(("u", "g"), 20), (("u", "n"), 16), (("h", "ug"), 15)]
    assert tok.merges == [("u", "g"), ("u", "n"), ("h", "ug")]
    assert tok.tokenize("bug") == ["b", "ug"]
    assert tok.tokenize("mug") == ["[UNK]", "ug"]
    assert tok.tokenize("thug") == ["[UNK]", "hug"]


def test_char_mode_hug_ids():
    tok = bytepair.train_from_counts(HUG_COUNTS, vocab_size=11, mode="char", unk_token="[UNK]")
    # 7 characters + [UNK] + 3 merges; [UNK] is special, so it comes first.
    assert tok.vocab == {
        "[UNK]": 0,
        "b": 1,
        "g": 2,
        "h": 3,
        "n": 4,
        "p": 5,
        "s": 6,
        "u": 7,
        "ug": 8,
        "un": 9,
        "hug": 10,
    }
    assert tok.encode("thug") == [0, 10]
    # The space was never seen in training, so it becomes [UNK] — and decodes as the text "[UNK]".
    assert tok.tokenize("hugs bun") == ["hug", "s", "[UNK]", "b", "un"]
    assert tok.decode(tok.encode("hugs bun")) == "hugs[UNK]bun"
    with pytest.raises(ValueError, match="unk_token"):
        bytepair.train_from_counts(HUG_COUNTS, vocab_size=11, mode="char").encode("mug")


@pytest.mark.parametrize("impl", [bytepair, reference], ids=["core", "reference"])
def test_byte_mode_course_example(impl):
    tok = impl.train(COURSE_CORPUS, vocab_size=50, special_tokens=["<|endoftext|>"], initial_alphabet="corpus")
    assert tok.merges == COURSE_MERGES
    assert [count for _, count in tok.trace] == COURSE_COUNTS
    assert tok.tokenize("This is not a token.") == ["This", "Ġis", "Ġ", "n", "o", "t", "Ġa", "Ġtoken", "."]


def test_byte_mode_course_example_ids_follow_the_layout():
    tok = bytepair.train(COURSE_CORPUS, vocab_size=50, special_tokens=["<|endoftext|>"], initial_alphabet="corpus")
    ref = reference.train(COURSE_CORPUS, vocab_size=50, special_tokens=["<|endoftext|>"], initial_alphabet="corpus")
    assert tok.vocab_size == 50
    assert [tok.id_to_token(i) for i in range(50)] == ref.vocab
    assert tok.id_to_token(0) == "<|endoftext|>"
    alphabet = ref.vocab[1:31]
    assert alphabet == sorted(alphabet)  # base alphabet in code-point order
    assert tok.encode("This is not a token.") == ref.encode("This is not a token.")


def hf_trained_merges(corpus, vocab_size, special_tokens, **options):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special_tokens, show_progress=False, **options)
    hf.train_from_iterator(corpus, trainer)
    model = json.loads(hf.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return merges, model["vocab"]


def test_hf_tie_break_equals_hf_tokenizers_on_the_course_example():
    pytest.importorskip("tokenizers")
    want_merges, want_vocab = hf_trained_merges(COURSE_CORPUS, 50, ["<|endoftext|>"])
    tok = bytepair.train(COURSE_CORPUS, 50, special_tokens=["<|endoftext|>"], initial_alphabet="corpus", tie_break="hf")
    assert tok.merges == want_merges
    assert tok.vocab == want_vocab
    ref = reference.train(
        COURSE_CORPUS, 50, special_tokens=["<|endoftext|>"], initial_alphabet="corpus", tie_break="hf"
    )
    assert ref.merges == want_merges
    # The two rules really differ here: the second merge is (i, s) for first_seen and (e, r) for hf.
    assert tok.merges[1] == ("e", "r") and COURSE_MERGES[1] == ("i", "s")


@pytest.mark.parametrize("impl", [bytepair, reference], ids=["core", "reference"])
def test_continuing_subword_prefix_course_example(impl):
    kwargs: dict[str, Any] = dict(
        special_tokens=["<eot>"], initial_alphabet="corpus", lowercase=True, continuing_subword_prefix="##"
    )
    tok = impl.train(COURSE_CORPUS, vocab_size=50, **kwargs)
    assert tok.merges[:5] == [("Ġ", "##t"), ("##i", "##s"), ("##e", "##r"), ("Ġ", "##a"), ("Ġt", "##o")]
    assert len(tok.merges) == 21
    assert reference.train(COURSE_CORPUS, vocab_size=50, **kwargs).merges == tok.merges
    # a + b drops b's prefix: ('Ġt', '##o') makes 'Ġto', ('##i', '##s') makes '##is'.
    vocab = tok.vocab if isinstance(tok.vocab, dict) else {t: i for i, t in enumerate(tok.vocab)}
    assert "Ġto" in vocab and "##is" in vocab and "Ġt##o" not in vocab


def test_continuing_subword_prefix_tokenizes_like_the_reference():
    kwargs: dict[str, Any] = dict(
        special_tokens=["<eot>"], initial_alphabet="corpus", lowercase=True, continuing_subword_prefix="##"
    )
    tok = bytepair.train(COURSE_CORPUS, vocab_size=50, **kwargs)
    ref = reference.train(COURSE_CORPUS, vocab_size=50, **kwargs)
    for text in COURSE_CORPUS + ["This is the tokenizer section."]:
        assert tok.tokenize(text) == ref.tokenize(text)
        assert tok.decode(tok.encode(text)) == text.lower()
