"""bytepair's tiktoken drop-in (`Tokenizer.as_tiktoken`, `bytepair.compat.tiktoken`) against tiktoken itself, on
the OpenAI encodings and on trained tokenizers: the same results, and the same exceptions, method by method.
(tiktoken's own suite runs against it in test_tiktoken_suite.py.)"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.compat import tiktoken as drop_in
from conftest import examples

TEXTS = [
    "hello fanta",
    "hello world\n\n",
    "x = 12345;\n\t",
    " \n\n",
    "<|endoftext|> hi",
    "hello<|endoftext|>",
    "today\n  \n",
    "ab  ",
    "日本語 🎉",
    "",
    "don't  stop",
]


@pytest.fixture(scope="module")
def pair(shared_data) -> tuple[drop_in.Encoding, tiktoken.Encoding]:
    ours = drop_in.get_encoding("cl100k_base", shared_data)
    theirs = tiktoken.Encoding(
        "cl100k_base", pat_str=ours._pat_str, mergeable_ranks=ours._mergeable_ranks, special_tokens=ours._special_tokens
    )
    return ours, theirs


@pytest.fixture(scope="module")
def trained() -> tuple[drop_in.Encoding, tiktoken.Encoding]:
    corpus = ["Hello world, hello there! 12345 don't\n\n  x = y;"] * 20 + ["naïve café 日本語 🎉 fanta"] * 5
    tok = bytepair.train(corpus, vocab_size=300, special_tokens=["<|endoftext|>", "<|pad|>"])
    return tok.as_tiktoken("trained"), tok.to_tiktoken("trained")


def completions(result: tuple[list[int], list[list[int]]]) -> tuple[list[int], list[tuple[int, ...]]]:
    return result[0], sorted(map(tuple, result[1]))


@pytest.mark.parametrize("which", ["pair", "trained"])
def test_encode_with_unstable_equals_tiktokens(which, request):
    ours, theirs = request.getfixturevalue(which)
    for text in TEXTS:
        allowed: set[str] | str
        for allowed in (set(), "all"):
            if not allowed and "<|" in text:
                continue
            assert completions(ours.encode_with_unstable(text, allowed_special=allowed)) == completions(
                theirs.encode_with_unstable(text, allowed_special=allowed)
            ), text


@pytest.mark.parametrize("which", ["pair", "trained"])
@given(data=st.binary(max_size=40))
@settings(deadline=None, max_examples=examples(200))
def test_encode_bytes_equals_tiktokens(which, request, data):
    ours, theirs = request.getfixturevalue(which)
    assert ours._encode_bytes(data) == theirs._encode_bytes(data)
    assert ours.decode_bytes(ours._encode_bytes(data)) == data


# Raw bytes of pieces no text makes (NULs, bytes no UTF-8 holds) among common ones: a lookup keyed by a piece's
# zero-padded bytes must tell "ab" from "ab\0" and from "ab\xff\0\0\0\0\0".
RAW_PIECE_BYTES = st.lists(
    st.sampled_from([0x00, 0xFF, 0xFE, ord("a"), ord("b"), ord(" "), ord("t"), ord("h")]), min_size=1, max_size=20
)


@given(data=RAW_PIECE_BYTES)
@settings(deadline=None, max_examples=examples(300))
def test_single_pieces_of_any_bytes_equal_tiktokens(pair, data):
    ours, theirs = pair
    piece = bytes(data)
    assert ours._encode_single_piece(piece) == theirs._encode_single_piece(piece)


@pytest.mark.parametrize(
    "piece",
    [b"ab\0", b"ab\xff\0\0\0\0\0", b" th\xff\0\0\0\0", b"abcdefg\xff", b"xab\xff\0\0\0\0\0y", b"\xff\0\0\0\0\0\0\0"],
)
def test_raw_pieces_of_padding_and_invalid_bytes_equal_tiktokens(pair, piece):
    ours, theirs = pair
    assert ours._encode_single_piece(piece) == theirs._encode_single_piece(piece)
    assert ours._encode_bytes(piece) == theirs._encode_bytes(piece)


@given(text=st.text(max_size=60))
@settings(deadline=None, max_examples=examples(200))
def test_encoding_equals_tiktokens_including_surrogates(pair, text):
    ours, theirs = pair
    assert ours.encode(text, disallowed_special=()) == theirs.encode(text, disallowed_special=())
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert ours._encode_only_native_bpe(text) == theirs._encode_only_native_bpe(text)


def test_lone_surrogates_are_replaced_as_tiktoken_does(pair):
    ours, theirs = pair
    for text in ["\ud83d", "a\udc4db", "\ud83d\udc4d", "x\ud800"]:
        assert ours.encode(text) == theirs.encode(text)
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
        assert ours.encode_batch([text, "ok"]) == theirs.encode_batch([text, "ok"])
        # (tiktoken's own encode_to_numpy raises UnicodeEncodeError here: ours replaces, as its encode does)
        assert ours.encode_to_numpy(text).tolist() == theirs.encode(text)
    # bytepair's own API keeps refusing them.
    with pytest.raises(UnicodeEncodeError):
        ours.tokenizer.encode("\ud83d")


def test_special_token_arguments_follow_tiktoken(pair):
    ours, theirs = pair
    text = "<|endoftext|> hello <|fim_prefix|>"
    refused: list[dict[str, Any]] = [
        {},
        {"disallowed_special": "all"},
        {"disallowed_special": {"<|fim_prefix|>"}},
        {"allowed_special": {"<|endoftext|>"}, "disallowed_special": {"<|endoftext|>"}},  # both: tiktoken refuses
        {"allowed_special": {"<|endoftext|>"}},
        {"disallowed_special": {"hello"}},  # not a special token: still looked for
    ]
    for kwargs in refused:
        with pytest.raises(ValueError):
            theirs.encode(text, **kwargs)
        with pytest.raises(ValueError):
            ours.encode(text, **kwargs)
        with pytest.raises(ValueError):
            ours.encode_batch(["fine", text], **kwargs)
    accepted: list[dict[str, Any]] = [
        {"disallowed_special": ()},
        {"allowed_special": "all"},
        {"allowed_special": {"<|endoftext|>", "not a special token"}, "disallowed_special": ()},
        {"allowed_special": {"<|fim_prefix|>"}, "disallowed_special": {"<|fim_middle|>"}},
    ]
    for kwargs in accepted:
        assert ours.encode(text, **kwargs) == theirs.encode(text, **kwargs), kwargs
        assert ours.encode_batch([text], **kwargs) == theirs.encode_batch([text], **kwargs), kwargs
    with pytest.raises(TypeError, match="write allowed_special="):
        ours.encode(text, allowed_special="<|endoftext|>")


def test_single_tokens_and_missing_ids_raise_keyerror_as_in_tiktoken(pair):
    ours, theirs = pair
    for token in [0, 15339, 100257, 100276]:
        assert ours.decode_single_token_bytes(token) == theirs.decode_single_token_bytes(token)
        assert ours.encode_single_token(ours.decode_single_token_bytes(token)) == token
    assert ours.encode_single_token("<|endoftext|>") == theirs.encode_single_token("<|endoftext|>") == 100257
    for missing in [100256, 100261, 10**6]:
        with pytest.raises(KeyError):
            theirs.decode_single_token_bytes(missing)
        with pytest.raises(KeyError):
            ours.decode_single_token_bytes(missing)
    with pytest.raises(KeyError):
        ours.decode_single_token_bytes(-1)
    with pytest.raises(KeyError):
        ours.encode_single_token(b"not one token at all")
    with pytest.raises(KeyError):
        theirs.decode_bytes([10**6])
    with pytest.raises(KeyError):
        ours.decode_bytes([10**6])


def test_attributes_and_decoding_equal_tiktokens(pair):
    ours, theirs = pair
    assert (ours.n_vocab, ours.max_token_value, ours.eot_token) == (
        theirs.n_vocab,
        theirs.max_token_value,
        theirs.eot_token,
    )
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert ours.is_special_token(100257) and not ours.is_special_token(15339)
    assert ours.token_byte_values() == theirs.token_byte_values()
    ids = theirs.encode("நடிகர் சூர்யா and 我非常渴望 <|endoftext|>", allowed_special="all")
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
    assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids)
    cut = ids[:3]
    for errors in ("replace", "ignore", "backslashreplace"):
        assert ours.decode(cut, errors=errors) == theirs.decode(cut, errors=errors)
    assert ours.decode_batch([ids, cut]) == theirs.decode_batch([ids, cut])
    assert ours.decode_bytes_batch([ids, cut]) == theirs.decode_bytes_batch([ids, cut])
    array = ours.encode_to_numpy("hello world")
    assert array.dtype == np.uint32 and array.tolist() == [15339, 1917]


def test_encode_batch_uses_num_threads_and_keeps_order(pair):
    ours, theirs = pair
    texts = [f"document {i}: " + "words " * (i % 7) for i in range(500)]
    assert ours.encode_ordinary_batch(texts, num_threads=2) == theirs.encode_ordinary_batch(texts, num_threads=2)
    assert ours.encode_batch(texts, num_threads=1) == theirs.encode_batch(texts)


def test_trained_tokenizers_get_the_interface_too(trained):
    ours, theirs = trained
    text = "Hello there! naïve 🎉 12345<|pad|>"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert ours.n_vocab == theirs.n_vocab == 300
    assert ours.eot_token == 0
    assert repr(ours) == "<Encoding 'trained' (bytepair)>"


def test_pickling_keeps_the_encoding(pair, trained):
    for enc in (pair[0], trained[0]):
        copy = pickle.loads(pickle.dumps(enc))
        assert isinstance(copy, drop_in.Encoding) and copy.name == enc.name
        assert copy.encode("hello <|endoftext|>", allowed_special="all") == enc.encode(
            "hello <|endoftext|>", allowed_special="all"
        )


def test_get_encoding_shares_one_object_and_accepts_short_names(shared_data):
    assert drop_in.get_encoding("cl100k_base", shared_data) is drop_in.get_encoding("cl100k_base", shared_data)
    assert drop_in.get_encoding("o200k", shared_data).name == "o200k_base"
    assert drop_in.list_encoding_names() == ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
    with pytest.raises(ValueError, match="did you mean 'cl100k_base'"):
        drop_in.get_encoding("cl100kbase", shared_data)


def test_tokenizers_tiktoken_cannot_describe_are_refused_clearly():
    char = bytepair.train(["hug pug pun"] * 5, vocab_size=12, mode="char", unk_token="[UNK]")
    with pytest.raises(ValueError, match="byte-level BPE"):
        char.as_tiktoken()
    lower = bytepair.train(["Hello World"] * 5, vocab_size=260, lowercase=True)
    with pytest.raises(ValueError, match="lowercases"):
        lower.as_tiktoken()
    with pytest.raises(TypeError):
        drop_in.Encoding("not a tokenizer")  # type: ignore[arg-type]
