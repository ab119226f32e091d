"""Merge control: `veto=` (a str or bytes regex, or a function asked once per candidate merge) and
`forbid_across=` (classes no token straddles, checked in the core), against the pure-Python reference."""

from __future__ import annotations

import re

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference
from conftest import examples

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

SETTINGS = settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])

fragments = st.sampled_from(list("aab bc  d\n\t.,!'s99 0ÉéÜü日本🎉-_") + ["'ll", "the ", "a1", "b2c", "\r\n", "x\ny"])
texts = st.lists(st.lists(fragments, max_size=30).map("".join), min_size=1, max_size=8)
options = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["byte", "char"]),
        "tie_break": st.sampled_from(["first_seen", "hf", "lexicographic"]),
        "pattern": st.sampled_from(["gpt2", None, "o200k"]),
        "max_token_length": st.sampled_from([None, 3]),
    }
)
VETOES = [None, r"\d\p{L}|\p{L}\d", rb"\xe6|\x9c", r"\s", r"\uFFFD"]  # \uFFFD: a byte token that cuts a character
CLASSES = [(), ("newline",), ("digit", "letter"), ("whitespace", "punctuation"), ("-_", "\n")]


def regex_veto(pattern: str | bytes | None):
    """The veto a regex stands for, written out here for the reference (text: bytes decoded with "replace")."""
    if pattern is None:
        return None
    if isinstance(pattern, bytes):
        return lambda left, right: regex.search(pattern, left + right) is not None
    return lambda left, right: regex.search(pattern, (left + right).decode("utf-8", "replace")) is not None


def recorded(veto, calls: list):
    """`veto`, recording what it is asked."""

    def asked(left: bytes, right: bytes) -> bool:
        calls.append((left, right))
        return bool(veto(left, right))

    return asked


@SETTINGS
@given(
    corpus=texts, opts=options, veto=st.sampled_from(VETOES), classes=st.sampled_from(CLASSES), extra=st.integers(0, 50)
)
def test_merge_control_equals_the_reference(corpus, opts, veto, classes, extra):
    freqs = reference.word_frequencies(corpus, opts["pattern"])
    assume(freqs)
    size = len(reference.base_vocabulary(freqs, opts["mode"], (), "corpus")) + extra
    tok = bytepair.train(corpus, size, initial_alphabet="corpus", veto=veto, forbid_across=classes, **opts)
    ref = reference.train(corpus, size, initial_alphabet="corpus", veto=regex_veto(veto), forbid_across=classes, **opts)
    assert tok.merges == ref.merges
    assert tok.trace == ref.trace
    for text in corpus:
        assert tok.encode(text) == ref.encode(text)
    # The same function is asked the same questions in the same order.
    if veto is not None:
        core_calls: list = []
        ref_calls: list = []
        bytepair.train(corpus, size, initial_alphabet="corpus", veto=recorded(regex_veto(veto), core_calls), **opts)
        reference.train(corpus, size, initial_alphabet="corpus", veto=recorded(regex_veto(veto), ref_calls), **opts)
        assert core_calls == ref_calls
        assert len(set(core_calls)) == len(core_calls), "each pair is asked once"


def test_a_vetoed_token_is_never_made():
    corpus = [f"item{i} costs 3x{i % 7}a b{i}c and 42kg\n" for i in range(300)]
    free = bytepair.train(corpus, 400)
    assert any(re.search(r"\d\D|\D\d", t) for t, i in free.vocab.items() if i >= 256)
    for veto in (r"\d\p{L}|\p{L}\d", re.compile(r"[0-9][a-z]|[a-z][0-9]"), regex.compile(r"\d\p{L}|\p{L}\d")):
        tok = bytepair.train(corpus, 400, veto=veto)
        made = [tok.token_bytes(i).decode("utf-8", "replace") for i in range(256, tok.vocab_size)]
        assert made and not any(regex.search(r"\d\p{L}|\p{L}\d", t) for t in made), veto
    tok = bytepair.train(corpus, 400, veto=rb"\x20")  # bytes: no token holds a space
    assert all(b" " not in tok.token_bytes(i) for i in range(256, tok.vocab_size))
    assert tok.vocab_size == 400


def test_a_veto_function_sees_the_two_parts_and_its_errors_are_raised():
    seen: list[tuple[bytes, bytes]] = []

    def no_long_tokens(left: bytes, right: bytes) -> bool:
        seen.append((left, right))
        return len(left + right) > 3

    tok = bytepair.train(["hello hello world worlds"] * 10, 300, veto=no_long_tokens)
    assert all(len(tok.token_bytes(i)) <= 3 for i in range(256, tok.vocab_size))
    assert seen and all(isinstance(a, bytes) and isinstance(b, bytes) for a, b in seen)

    class Stop(Exception):
        pass

    def failing(left: bytes, right: bytes) -> bool:
        raise Stop(f"no {left!r}+{right!r}")

    with pytest.raises(Stop, match=r"no b'l'\+b'l'|no b"):
        bytepair.train(["hello hello"], 300, veto=failing)


def test_forbid_across_in_every_mode():
    text = "Line one.\nLine 2: 3.14, x1y2!\n\n日本語のテキスト。\tend\r\n"
    corpus = [text] * 20
    for mode in ("byte", "char"):
        for classes, kinds in [
            ("newline", lambda c: c in "\r\n"),
            (["digit"], lambda c: c.isdigit()),
            (["letter"], lambda c: c.isalpha()),
            (["whitespace"], lambda c: c.isspace()),
            (["punctuation"], lambda c: regex.fullmatch(r"[\p{P}\p{S}]", c) is not None),
            (["\n", "0123456789"], lambda c: (c == "\n", c.isdigit())),
        ]:
            tok = bytepair.train(corpus, 300 if mode == "byte" else 80, mode=mode, pattern=None, forbid_across=classes)
            assert len(tok.merges) > 10
            for i in range(tok.vocab_size):
                raw = tok.token_bytes(i)
                chars = [c for c in raw.decode("utf-8", "replace") if c != "\ufffd"]
                assert len({kinds(c) for c in chars}) <= 1, (mode, classes, raw)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"veto": "(unclosed"}, ValueError, "not a valid regex"),
        ({"veto": 42}, TypeError, "veto must be a regex"),
        ({"forbid_across": ["newlines"]}, ValueError, "unknown forbid_across class 'newlines'"),
        ({"forbid_across": [""]}, ValueError, "empty string"),
        ({"forbid_across": ["digit", "digit"]}, ValueError, "twice"),
        ({"forbid_across": [3]}, TypeError, "must be str"),
        ({"forbid_across": 3}, TypeError, "forbid_across must be"),
    ],
)
def test_bad_merge_control_is_refused_before_counting(kwargs, error, message):
    with pytest.raises(error, match=message):
        bytepair.train(["abc"], 260, **kwargs)


def test_merge_control_applies_to_an_extension_only_from_there():
    corpus = [f"a1 b2 c3 {i}x{i}\n" for i in range(200)]
    tok = bytepair.train(corpus, 300)
    more = tok.extend(corpus, 330, veto=r"\d\p{L}|\p{L}\d")
    assert more.merges[: len(tok.merges)] == tok.merges
    new = [more.token_bytes(i).decode() for i in range(300, more.vocab_size)]
    assert not any(regex.search(r"\d\p{L}|\p{L}\d", t) for t in new)
    ref = reference.extend(
        reference.train(corpus, 300), corpus, 330, veto=regex_veto(r"\d\p{L}|\p{L}\d"), forbid_across=["newline"]
    )
    assert tok.extend(corpus, 330, veto=r"\d\p{L}|\p{L}\d", forbid_across="newline").merges == ref.merges
