"""The fast core equals the pure-Python reference: same merges, counts, ids and tokens, on random corpora
(hypothesis), in both modes, with both tie rules, with and without markers and special tokens."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference
from bytepair.training import TrainSettings, new_counts
from conftest import examples

# Small alphabets make many equal counts, which is where tie rules and id order matter.
LETTERS = "abcAB"
WIDE = "abcé日🎉#"

words = st.text(alphabet=LETTERS, min_size=1, max_size=8) | st.text(alphabet=WIDE, min_size=1, max_size=6)
word_counts = st.dictionaries(words, st.integers(1, 40), min_size=1, max_size=14)


def with_limit_rules(opts: dict) -> dict:
    """limit_alphabet applies to char mode and needs an unknown token."""
    if opts["limit_alphabet"] is None or opts["mode"] == "byte":
        return {**opts, "limit_alphabet": None}
    return {**opts, "unk_token": "[UNK]"}


options = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["byte", "char"]),
        "tie_break": st.sampled_from(["first_seen", "hf", "lexicographic"]),
        "continuing_subword_prefix": st.sampled_from([None, None, "##"]),
        "end_of_word_suffix": st.sampled_from([None, None, "</w>"]),
        "special_tokens": st.sampled_from([(), ("<|endoftext|>",), ("<s>", "</s>")]),
        "initial_alphabet": st.sampled_from(["corpus", "corpus", "all", ("x", "é")]),
        "min_frequency": st.sampled_from([0, 0, 2, 5]),
        "max_token_length": st.sampled_from([None, None, 2, 3, 5]),
        "lowercase": st.booleans(),
        "limit_alphabet": st.sampled_from([None, None, 2, 4]),
    }
).map(with_limit_rules)

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def vocab_list(tok: bytepair.Tokenizer) -> list[str | None]:
    return [tok.id_to_token(i) for i in range(tok.vocab_size)]


def base_size(counts, opts) -> int:
    freqs = counts if not opts["lowercase"] else {w.lower(): c for w, c in counts.items()}
    kept = None
    if opts["limit_alphabet"] is not None:
        forced = [] if opts["initial_alphabet"] in ("all", "corpus") else list(opts["initial_alphabet"])
        kept = reference.limited_alphabet(freqs, opts["limit_alphabet"], forced)
    return len(
        reference.base_vocabulary(
            freqs,
            opts["mode"],
            opts["special_tokens"],
            opts["initial_alphabet"],
            opts["continuing_subword_prefix"],
            opts["end_of_word_suffix"],
            opts.get("unk_token"),
            kept,
        )
    )


def assert_same(tok: bytepair.Tokenizer, ref: reference.ReferenceTokenizer) -> None:
    assert tok.merges == ref.merges
    assert tok.trace == ref.trace
    assert vocab_list(tok) == ref.vocab


@SETTINGS
@given(counts=word_counts, opts=options, extra=st.integers(0, 40))
def test_train_from_counts_equals_reference(counts, opts, extra):
    vocab_size = base_size(counts, opts) + extra
    tok = bytepair.train_from_counts(counts, vocab_size, **opts)
    ref = reference.train_from_counts(counts, vocab_size, **opts)
    assert_same(tok, ref)
    assert tok.vocab_size <= vocab_size
    for word in list(counts)[:5] + ["".join(counts)[:12]]:
        # Both succeed with the same tokens, or both refuse a unit missing from the vocabulary.
        assert outcome(tok.tokenize, word) == outcome(ref.tokenize, word)


def outcome(f, *args):
    try:
        return ("ok", f(*args))
    except ValueError:
        return ("ValueError", None)


fragments = st.sampled_from(list("aab bc  d\n\t.,!'s99 0ÉéÜü日本🎉😀-_") + ["'ll", "'re", "  ", "1234", "\r\n"])
texts = st.lists(st.lists(fragments, max_size=30).map("".join), min_size=1, max_size=8)


@SETTINGS
@given(
    corpus=texts,
    pattern=st.sampled_from(["gpt2", "cl100k", "o200k", "whitespace", None, r"\S+|\s+"]),
    mode=st.sampled_from(["byte", "char"]),
    tie_break=st.sampled_from(["first_seen", "hf", "lexicographic"]),
    specials=st.sampled_from([(), ("<|endoftext|>",)]),
    with_special_in_text=st.booleans(),
    extra=st.integers(0, 60),
    threads=st.sampled_from([1, 2, 3]),
)
def test_train_on_texts_equals_reference(
    corpus, pattern, mode, tie_break, specials, with_special_in_text, extra, threads
):
    if with_special_in_text and specials:
        corpus = [t + specials[0] + t[::-1] for t in corpus]
    # (tie_break="hf" counts special-token text as ordinary text, as HF's trainer does)
    freqs = reference.word_frequencies(corpus, pattern, () if tie_break == "hf" else specials)
    assume(freqs)
    opts = dict(mode=mode, tie_break=tie_break, special_tokens=specials, initial_alphabet="corpus")
    vocab_size = len(reference.base_vocabulary(freqs, mode, specials, "corpus")) + extra
    tok = bytepair.train(corpus, vocab_size, pattern=pattern, threads=threads, **opts)
    ref = reference.train(corpus, vocab_size, pattern=pattern, **opts)
    assert_same(tok, ref)
    # Every training text encodes to the same ids as the reference, special tokens included.
    for text in corpus:
        assert tok.encode(text, allowed_special="all") == ref.encode(text)


@SETTINGS
@given(
    corpus=texts,
    pattern=st.sampled_from(["gpt2", "cl100k", "o200k", "whitespace", None]),
    specials=st.sampled_from([(), ("<|endoftext|>",), ("<a>", "<a><b>")]),
    lowercase=st.booleans(),
)
def test_word_counts_equal_reference_in_order_of_first_appearance(corpus, pattern, specials, lowercase):
    if specials:
        corpus = corpus + [specials[-1].join(corpus)]
    counts = new_counts(TrainSettings.from_arguments(1, pattern=pattern, special_tokens=specials, lowercase=lowercase))
    counts.add_texts(corpus)
    assert counts.items() == list(reference.word_frequencies(corpus, pattern, specials, lowercase).items())


@pytest.fixture(scope="module")
def byte_tokenizers():
    corpus = [
        "The quick brown fox jumps over the lazy dog. " * 3,
        "naïve café 日本語 🎉🎉 x\x00y",
        "def f(x):\n    return x\n",
    ]
    return (
        bytepair.train(corpus, 256 + 80, special_tokens=["<|endoftext|>"]),
        reference.train(corpus, 256 + 80, special_tokens=["<|endoftext|>"]),
    )


@settings(max_examples=examples(300), deadline=None)
@given(text=st.text())
def test_byte_mode_round_trips_any_text(byte_tokenizers, text):
    tok, _ = byte_tokenizers
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text
    assert tok.decode_bytes(ids) == text.encode("utf-8")
    assert all(0 <= i < tok.vocab_size for i in ids)


@settings(max_examples=examples(150), deadline=None)
@given(
    text=st.text(alphabet=st.characters(codec="utf-8"), max_size=60) | st.sampled_from(["\x00", "🎉" * 7, "\x00a\x00"])
)
def test_byte_mode_encode_equals_reference(byte_tokenizers, text):
    tok, ref = byte_tokenizers
    assume("<|endoftext|>" not in text)
    assert tok.encode(text) == ref.encode(text)
