"""Untrusted tokenizer files (issue 23, item 9): `byte_fallback` on a byte-level model is taken where it cannot
act and refused where it would, and JSON nested 100 000 deep is a format ValueError in every loader, never a
RecursionError or a stack overflow."""

from __future__ import annotations

import json
import pickle

import pytest

import bytepair

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

DEEP = 100_000


def test_byte_fallback_with_every_byte_in_the_vocabulary_never_acts(shared_data, tmp_path):
    import tokenizers

    document = json.loads((shared_data / "gpt2" / "tokenizer.json").read_text(encoding="utf-8"))
    document["model"]["byte_fallback"] = True
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    hf, ours = tokenizers.Tokenizer.from_file(str(path)), bytepair.Tokenizer.from_hf(path)
    for text in ("Hello world", "naïve 中文 🎉\x00\x7f", "\u200b\ufeff"):
        assert ours.encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_byte_fallback_that_would_act_is_refused(tmp_path):
    tok = bytepair.train(["abc abd"] * 5, 10, initial_alphabet="corpus")
    document = json.loads(tok.core.to_hf())
    document["model"]["byte_fallback"] = True
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ValueError, match=r"byte_fallback=True with a ByteLevel pre-tokenizer and no token for byte"):
        bytepair.Tokenizer.from_hf(path)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_deeply_nested_json_is_a_format_error_in_every_loader(tmp_path):
    tok = bytepair.train(["abc abd"] * 5, 260)
    native = json.loads(tok.core.to_native())
    hf = json.loads(tok.core.to_hf())
    files = {
        "whole.json": nested(DEEP),
        "object.json": '{"model": ' + nested(DEEP) + "}",
        # Deep inside an otherwise valid file: a field bytepair reads as JSON of any shape.
        "native_pattern.json": json.dumps(native).replace('"gpt2"', nested(DEEP), 1),
        "hf_normalizer.json": json.dumps(hf).replace('"normalizer": null', '"normalizer": ' + nested(DEEP), 1),
    }
    for name, text in files.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        for load in (bytepair.Tokenizer.load, bytepair.Tokenizer.from_hf, bytepair.load_tokenizer):
            with pytest.raises(ValueError) as error:
                load(path)
            assert str(path) in str(error.value) or repr(str(path)) in str(error.value), (name, load)
    # A pickle's state is the native file's text: unpickling one goes through the same reader.
    unpickled = bytepair.Tokenizer.__new__(bytepair.Tokenizer)
    with pytest.raises(ValueError, match="pickled Tokenizer is not a valid bytepair tokenizer file"):
        unpickled.__setstate__(files["native_pattern.json"])
    assert pickle.loads(pickle.dumps(tok)) == tok
