"""A Python str reaches the core as UTF-8 whatever CPython stores it as (ASCII, Latin-1, UCS-2, UCS-4), through
every entry point that takes text, and encoding leaves no UTF-8 copy attached to the str (CPython keeps one in a
non-ASCII str once `PyUnicode_AsUTF8` is asked for it: 13 MB on 24 MB of documents, for their lifetime)."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair

# One text per storage CPython picks by the widest character: ASCII, Latin-1 (é), UCS-2 (“, 東), UCS-4 (🙂, 𝔘).
STORAGES = {
    "ascii": "the cat sat on the mat, 12345 times.",
    "latin-1": "café, naïve, ÿ and ¿qué? " * 3,
    "ucs-2": "“quoted” text — 東京 and Ω " * 3,
    "ucs-4": "emoji 🙂🙂 and 𝔘𝔫𝔦 with é “q” " * 3,
}


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    corpus = [text * 20 for text in STORAGES.values()]
    return bytepair.train(corpus, 330)


def test_every_storage_encodes_as_its_utf8(tok):
    texts = list(STORAGES.values())
    expected = [tok.encode_bytes(text.encode()) for text in texts]
    assert [tok.encode(t) for t in texts] == expected
    assert [tok.encode_ordinary(t) for t in texts] == expected
    assert [tok.encode_to_numpy(t).tolist() for t in texts] == expected
    assert [tok.count(t) for t in texts] == [len(ids) for ids in expected]
    for threads in (1, 2):
        assert tok.encode_batch(texts, threads=threads) == expected
        ids, offsets = tok.encode_batch_to_numpy(texts, threads=threads)
        assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == expected
    packed, lengths = tok.encode_batch_packed(texts, threads=2)
    flat = [int.from_bytes(packed[k : k + 4], "little") for k in range(0, len(packed), 4)]
    assert lengths == [len(ids) for ids in expected] and flat == [i for ids in expected for i in ids]
    for text, ids in zip(texts, expected):
        assert [i for i, _, _ in tok.encode_with_offsets(text)] == ids
        spans = tok.encode_with_offsets(text, unit="byte")
        assert b"".join(text.encode()[start:end] for _, start, end in spans) == text.encode()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8")), max_size=8))
def test_any_text_in_a_batch_is_its_utf8(tok, texts):
    expected = [tok.encode_bytes(text.encode()) for text in texts]
    assert tok.encode_batch(texts, threads=2) == expected
    ids, offsets = tok.encode_batch_to_numpy(texts, threads=1)
    assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == expected


def test_a_batch_of_many_chunks_mixing_storages_is_each_texts_utf8(tok):
    # ~0.3 M characters: several chunks per thread, each thread transcoding its chunks' texts into one buffer it reuses;
    # texts of every storage interleaved, of many lengths.
    texts = [text * (1 + k % 40) for k, text in enumerate(list(STORAGES.values()) * 60)]
    assert sum(len(t) for t in texts) > 300_000
    expected = [tok.encode_bytes(text.encode()) for text in texts]
    for threads in (1, 2):
        ids, offsets = tok.encode_batch_to_numpy(texts, threads=threads)
        assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == expected
        assert tok.encode_batch(texts, threads=threads) == expected


def test_encoding_leaves_no_utf8_copy_in_the_str(tok):
    # Long enough to be encoded with the GIL released, and short ones; none of them ASCII.
    texts = [text * 2000 for text in list(STORAGES.values())[1:]] + list(STORAGES.values())[1:]
    sizes = [sys.getsizeof(t) for t in texts]
    for t in texts:
        tok.encode(t)
        tok.encode_to_numpy(t)
        tok.count(t)
        tok.encode_with_offsets(t)
    tok.encode_batch(texts, threads=2)
    tok.encode_batch_to_numpy(texts, threads=1)
    tok.encode_batch_to_numpy(texts, threads=2)
    bytepair.train(texts, 300)
    assert [sys.getsizeof(t) for t in texts] == sizes
    # (What the check measures: asking CPython for the UTF-8 stores a copy in the str.)
    import ctypes

    as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8
    as_utf8.argtypes, as_utf8.restype = [ctypes.py_object], ctypes.c_char_p
    as_utf8(texts[0])
    assert sys.getsizeof(texts[0]) > sizes[0]


@pytest.mark.parametrize("call", ["encode", "encode_to_numpy", "encode_batch", "encode_batch_to_numpy", "count"])
def test_a_lone_surrogate_is_a_clear_error_everywhere(tok, call):
    texts = ["fine", "a\ud800b", "fine 🙂 \U0001d518"]
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        if call in ("encode_batch", "encode_batch_to_numpy"):
            getattr(tok, call)(texts, threads=2)
        else:
            getattr(tok, call)(texts[1])


@pytest.mark.parametrize("at", [0, 1023, 1024, 5000, 9999])
@pytest.mark.parametrize("wide", ["é", "\u2014", "\U0001f642"])
def test_a_surrogate_anywhere_in_a_long_text_of_a_batch_is_found(tok, at, wide):
    # The batch's check reads the units in blocks of 1 024: a surrogate at either edge of one, or past the first.
    text = (wide + "x" * 9999)[:10_000]
    texts = ["fine", text[:at] + "\udc80" + text[at + 1 :], "fine"]
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        tok.encode_batch_to_numpy(texts, threads=2)
    assert tok.encode_batch_to_numpy([text], threads=2)[1].tolist()[-1] > 0


@pytest.mark.parametrize("call", ["encode_batch", "encode_batch_to_numpy", "encode_batch_packed"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_surrogate_in_a_batch_wins_over_any_other_error(call, threads):
    # Texts are looked at by the thread that encodes them; the surrogate is still the error raised, even
    # after a text that fails for another reason (a special token it may not hold) and past many chunks.
    special = bytepair.train(list(STORAGES.values()) * 20, 320, special_tokens=["<|end|>"])
    texts = ["x" * 4000 + " é" + str(i) for i in range(300)]
    texts[3] += "<|end|>"
    texts[-2] = texts[-2][:100] + "\udc80" + texts[-2][100:]
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        getattr(special, call)(texts, threads=threads)
    del texts[-2]
    with pytest.raises(ValueError, match="special token") as raised:
        getattr(special, call)(texts, threads=threads)
    assert not isinstance(raised.value, UnicodeEncodeError)


def test_training_on_a_text_with_a_surrogate_raises_the_same_error():
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        bytepair.train(["fine text " * 50, "a\ud800b", "more fine text"], 300)


def test_a_surrogate_beside_astral_characters_is_an_error_too(tok):
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        tok.encode_batch(["🙂 \udfff"], threads=2)  # stored as UCS-4


def long_text(storage: str, chars: int = 600_000) -> str:
    """A text past the length from which a str that is not ASCII is encoded a window at a time (128 K
    characters; an ASCII one is encoded whole), with long stretches where no piece boundary may be cut (no
    spaces, no line breaks)."""
    base = STORAGES[storage] + "\n" + "nocutinthisstretch" * 400 + "." + STORAGES["ascii"]
    return (base * (chars // len(base) + 1))[:chars]


@pytest.mark.parametrize("storage", ["ascii", "latin-1", "ucs-2", "ucs-4", "ascii then latin-1"])
def test_a_long_text_encoded_in_windows_is_its_utf8(tok, storage):
    # "ascii then latin-1": one byte per character, ASCII up to a late "é", so encoded in windows.
    text = long_text(storage) if storage in STORAGES else long_text("ascii")[:550_000] + "é" + long_text("ascii")
    expected = tok.encode_bytes(text.encode())
    assert tok.encode(text) == expected
    assert tok.encode_to_numpy(text).tolist() == expected
    assert tok.encode_to_numpy(text, disallowed_special=()).tolist() == expected


def test_a_special_token_far_into_a_long_text_is_named_at_its_character():
    tok = bytepair.train([text * 20 for text in STORAGES.values()], 330, special_tokens=["<|eot|>"])
    for storage in ("ucs-2", "ascii"):
        text = long_text(storage, 700_000)
        text = text[:650_000] + "<|eot|>" + text[650_000:]
        for call in (tok.encode, tok.encode_to_numpy):
            with pytest.raises(ValueError, match="at character 650000[)]"):
                call(text)
        ids = tok.encode(text, allowed_special="all")
        assert ids == tok.encode_bytes(text.encode(), allowed_special="all")
        assert ids.count(tok.encode("<|eot|>", allowed_special="all")[0]) == 1
        assert tok.encode_to_numpy(text, allowed_special="all").tolist() == ids


@pytest.mark.parametrize("call", ["encode", "encode_to_numpy"])
def test_a_lone_surrogate_far_into_a_long_text_is_the_same_error(tok, call):
    text = long_text("ucs-2")
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        getattr(tok, call)(text[:590_000] + "\ud800" + text[590_000:])
