"""`Tokenizer.encode_batch_padded`: a batch as one 2-D array padded (right or left) and truncated as model code needs,
checked against transformers' own padding of the same tokenizer (written with `save_pretrained`)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bytepair

transformers = pytest.importorskip("transformers")

LINES = [
    "First Citizen: Before we proceed any further, hear me speak.",
    "All: Speak, speak. <|endoftext|>",
    "naïve café 日本語 🎉 — the end, the end.",
]


def auto(folder):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoTokenizer.from_pretrained(str(folder))


@pytest.fixture(scope="module")
def padded_pair(tmp_path_factory):
    tok = bytepair.train(LINES * 20, vocab_size=320, special_tokens=["<|endoftext|>", "<pad>"])
    folder = tmp_path_factory.mktemp("padded")
    tok.save_pretrained(folder)
    return tok, auto(folder)


TEXTS = ["short", "a somewhat longer text, with words", "", "naïve café 🎉"]


@pytest.mark.parametrize("side", ["right", "left"])
def test_padding_equals_transformers(padded_pair, side):
    tok, hf = padded_pair
    pad = tok.token_to_id("<pad>")
    ids, lengths = tok.encode_batch_padded(TEXTS, pad, side=side)
    hf.padding_side = side
    want = hf(TEXTS, padding=True)
    assert ids.dtype == np.uint32 and ids.shape == (4, max(lengths))
    assert ids.tolist() == want["input_ids"]
    assert lengths.tolist() == [sum(mask) for mask in want["attention_mask"]]


def test_truncation_equals_transformers_and_is_never_silent(padded_pair):
    tok, hf = padded_pair
    pad = tok.token_to_id("<pad>")
    first = len(tok.encode(TEXTS[0]))
    with pytest.raises(ValueError, match=rf"text 0 has {first} ids, more than max_length=4: pass truncate=True"):
        tok.encode_batch_padded(TEXTS, pad, max_length=4)
    ids, lengths = tok.encode_batch_padded(TEXTS, pad, max_length=4, truncate=True)
    hf.padding_side = "right"
    want = hf(TEXTS, padding="max_length", truncation=True, max_length=4)
    assert ids.tolist() == want["input_ids"] and lengths.tolist() == [sum(m) for m in want["attention_mask"]]
    wide, lengths = tok.encode_batch_padded(TEXTS, pad, max_length=80)
    assert wide.shape == (4, 80) and (wide[:, max(lengths) :] == pad).all()
    assert [row[:n].tolist() for row, n in zip(wide, lengths)] == tok.encode_batch(TEXTS)


def test_padding_edge_cases_and_bad_arguments(padded_pair):
    tok, _ = padded_pair
    ids, lengths = tok.encode_batch_padded([], 0)
    assert ids.shape == (0, 0) and lengths.tolist() == []
    ids, lengths = tok.encode_batch_padded(["", ""], 0)
    assert ids.shape == (2, 0)
    with pytest.raises(ValueError, match="pad_id 100000 is not in the vocabulary"):
        tok.encode_batch_padded(["a"], 100_000)
    with pytest.raises(ValueError, match='side must be "right" or "left"'):
        tok.encode_batch_padded(["a"], 0, side="up")
    with pytest.raises(ValueError, match="max_length must be None or an int"):
        tok.encode_batch_padded(["a"], 0, max_length=-1)
    with pytest.raises(TypeError):
        tok.encode_batch_padded(["a"], "<pad>")
