"""SuperBPE (`train(..., superwords_after=N)`): the second stage's pieces equal the SuperBPE authors' split (HF
tokenizers' Split(isolated) of their regex, line by line), the merges equal the pure-Python reference's, and
encoding is exact (the reference's ids, HF's ids from the exported tokenizer.json) and round-trips."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import SUPERWORDS_PATTERN, reference
from bytepair.training import TrainSettings, count_words
from conftest import examples

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

#: The SuperBPE authors' stage-2 regex, whose matches are isolated (their scripts/extend_tokenizer.sh).
AUTHORS_REGEX = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"

LINES = [
    "By the way, I am a fan of the Milky Way.\n",
    "In 1887, he said--no!  Then: 'tis 42.5% of $1,000/yr...\n",
    "  leading spaces,\ttabs\u00a0and no-break spaces ,, and . . . dots \n",
    "日本語のテキスト、句読点。Ünïcødé wörds; naïve café!\r\n",
    "x",
]


def pieces(lines: list[str]) -> list[tuple[str, int]]:
    """The words the core counts with SUPERWORDS_PATTERN, in order of first appearance."""
    counts = count_words(lines, TrainSettings(vocab_size=300, pattern=SUPERWORDS_PATTERN))
    return counts.items()


def test_the_pattern_is_the_references():
    assert SUPERWORDS_PATTERN == reference.SUPERWORDS


def test_pieces_are_the_authors_split_line_by_line(shared_data):
    import tokenizers

    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(AUTHORS_REGEX), behavior="isolated")
    text = (shared_data / "text" / "tinyshakespeare" / "input.txt").read_text(encoding="utf-8")[:300_000]
    udhr = [
        (shared_data / "multilingual" / "udhr" / f"{x}.txt").read_text(encoding="utf-8")
        for x in ("eng", "jpn", "rus", "arb")
    ]
    blns = json.loads((shared_data / "testvectors" / "naughty_strings" / "blns.json").read_text(encoding="utf-8"))
    lines = LINES + text.splitlines(keepends=True) + [ln for t in udhr for ln in t.splitlines(keepends=True)]
    lines += [s + "\n" for s in blns if "\n" not in s and "\r" not in s]
    want: dict[str, int] = {}
    for line in lines:
        for piece, _ in split.pre_tokenize_str(line):
            want[piece] = want.get(piece, 0) + 1
    assert pieces(lines) == list(want.items())
    assert reference.word_frequencies(lines, SUPERWORDS_PATTERN) == want


def test_a_text_of_many_lines_is_cut_as_its_lines():
    text = "".join(LINES)
    assert pieces([text]) == pieces(LINES)


fragments = st.sampled_from(list("ab c  d\n\t.,!'s9 0é日-_$") + ["'tis", "the ", " of the", "--", "1234", "\r\n"])
texts = st.lists(st.lists(fragments, max_size=40).map("".join), min_size=1, max_size=8)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=texts,
    tie_break=st.sampled_from(["first_seen", "hf", "lexicographic"]),
    mode=st.sampled_from(["byte", "char"]),
    after=st.integers(0, 25),
    more=st.integers(1, 40),
)
def test_superwords_equal_the_reference(corpus, tie_break, mode, after, more):
    freqs = reference.word_frequencies(corpus, "gpt2")
    assume(freqs)
    base = len(reference.base_vocabulary(freqs, mode, (), "corpus"))
    transition = base + after
    opts = dict(mode=mode, tie_break=tie_break, initial_alphabet="corpus")
    tok = bytepair.train(corpus, transition + more, superwords_after=transition, **opts)
    ref = reference.train(corpus, transition + more, superwords_after=transition, **opts)
    assert tok.merges == ref.merges
    assert tok.trace == ref.trace
    for text in corpus + ["".join(corpus)]:
        ids = tok.encode(text)
        assert ids == ref.encode(text)
        assert tok.decode(ids) == text


#: First-stage patterns whose pieces cut the stretches differently: the built-in ones, one that leaves the
#: spaces out, and a regex that looks ahead past a stretch's end ("a  " + "b").
FIRST_STAGE_PATTERNS = ["gpt2", "cl100k", "o200k", "whitespace", r" ?\w+|\s+(?!\S)|\s+|[^\s\w]+"]
mixed = st.sampled_from(list("aB c  D\n\t.,!'s9 0É日-") + ["'TIS", "The ", " OF the", "--", "1234", "\r\n", "<|s|>"])


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=st.lists(st.lists(mixed, max_size=40).map("".join), min_size=1, max_size=8),
    pattern=st.sampled_from(FIRST_STAGE_PATTERNS),
    lowercase=st.booleans(),
    specials=st.sampled_from([(), ("<|s|>",)]),
    tie_break=st.sampled_from(["first_seen", "hf", "lexicographic"]),
    more=st.integers(1, 40),
)
def test_stretches_recorded_as_first_stage_words_equal_the_reference(
    corpus, pattern, lowercase, specials, tie_break, more
):
    # The second stage's stretches are recorded as the first stage's words while those are counted: whatever
    # the first pattern (its pieces may run past a stretch's end, or leave text out) and the normaliser.
    opts = dict(pattern=pattern, lowercase=lowercase, special_tokens=specials, tie_break=tie_break)
    transition = 256 + len(specials) + 3
    assume(reference.word_frequencies(corpus, pattern, specials, lowercase))
    tok = bytepair.train(corpus, transition + more, superwords_after=transition, **opts)
    ref = reference.train(corpus, transition + more, superwords_after=transition, **opts)
    assert tok.merges == ref.merges
    assert tok.trace == ref.trace
    text = "".join(corpus)
    assert tok.encode(text, allowed_special="all") == ref.encode(text)


def test_stretches_are_recorded_from_files_and_large_documents(tmp_path):
    # A file is read line by line, a large document is counted whole (a cut that suits the first pattern may
    # fall inside a stretch): the same merges as the texts given line by line.
    lines = [line for _ in range(400) for line in LINES]
    (tmp_path / "c.txt").write_text("".join(lines), encoding="utf-8", newline="")
    by_line = bytepair.train(lines, 420, superwords_after=330)
    assert bytepair.train(tmp_path / "c.txt", 420, superwords_after=330).merges == by_line.merges
    whole = bytepair.train(["".join(lines)], 420, superwords_after=330)
    assert whole.merges == bytepair.train(["".join(lines)], 420, superwords_after=330, threads=1).merges
    assert whole.merges == reference.train(["".join(lines)], 420, superwords_after=330).merges


def test_superword_tokens_cross_spaces_and_export(tmp_path):
    import tokenizers

    things = ["sea", "sky", "sun", "moon", "stars", "rivers", "mountains", "forests", "deserts", "cities"]
    corpus = [f"by the way, I am a fan of the {w} and of the {v}.\n" for w in things for v in things] * 5
    plain = bytepair.train(corpus, 360)
    tok = bytepair.train(corpus, 360, superwords_after=300)
    assert tok.settings["pattern"] == SUPERWORDS_PATTERN
    assert tok.merges[: len(plain.truncate(300).merges)] == plain.truncate(300).merges
    assert any("Ġ" in t.lstrip("Ġ") for t in tok.vocab), "some token crosses a space"
    text = "".join(corpus[:6])
    assert len(tok.encode(text)) < len(plain.encode(text))
    tok.save_hf(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for sample in [text, "by the way,  I am\n\nof the 2024 sea", "'tis the moon--and  the stars"]:
        assert hf.encode(sample, add_special_tokens=False).ids == tok.encode(sample)
    tok.save(tmp_path / "tok.json")
    assert bytepair.Tokenizer.load(tmp_path / "tok.json") == tok


def test_several_sizes_around_the_transition():
    things = ["cat", "dog", "bird", "fish", "horse", "mouse", "snake", "tiger", "zebra", "panda"]
    corpus = [
        f"the {a} and the {b} {i % 9} ran to the mat, then the {a}.\n" for i, a in enumerate(things) for b in things
    ]
    small, big = bytepair.train(corpus, [290, 330], superwords_after=300)
    assert small == bytepair.train(corpus, 290)  # below the transition: the first stage's own run
    assert big == bytepair.train(corpus, 330, superwords_after=300)
    # A first stage that runs out of pairs before the transition: the second goes on from there.
    with pytest.warns(RuntimeWarning, match="ran out"):
        small, big = bytepair.train(["the cat"], [258, 267], superwords_after=265)
    assert small == bytepair.train(["the cat"], 258) and big.vocab_size == 262 and "theĠcat" in big.vocab


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"superwords_after": 400}, "between 1 and vocab_size=300"),
        ({"superwords_after": 0}, "between 1 and vocab_size=300"),
        ({"superwords_after": 280, "pattern": None}, "needs a pre-tokenization pattern"),
    ],
)
def test_bad_transitions_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bytepair.train(["the cat"], 300, **kwargs)


def stretch_counts(corpus: list[str], keep: bool, path=None):
    """The second stage's words of `corpus` (a list of texts, or the file at `path`): kept or counted."""
    from bytepair.training import new_counts

    counts = new_counts(TrainSettings(vocab_size=300, pattern=SUPERWORDS_PATTERN), keep_every_piece=keep)
    if path is None:
        counts.add_texts(corpus)
    else:
        counts.add_file(str(path), "strict")
    return counts


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus=texts, repeat=st.integers(1, 4), tie_break=st.sampled_from(["first_seen", "hf", "lexicographic"]))
def test_kept_stretches_extend_as_counted_ones_do(corpus, repeat, tie_break):
    # Training keeps the second stage's stretches as they come (each once, in corpus order) instead of counting
    # them: the merges must be those of the counted stretches (equal counts, pairs first seen in the same order).
    from bytepair.training import extend_counts

    corpus = corpus * repeat + corpus[:1]
    assume(reference.word_frequencies(corpus, "gpt2"))
    stage1 = bytepair.train(corpus, 262, tie_break=tie_break, initial_alphabet="corpus")
    second = TrainSettings(vocab_size=stage1.vocab_size + 30, pattern=SUPERWORDS_PATTERN, tie_break=tie_break)
    kept, counted = stretch_counts(corpus, True), stretch_counts(corpus, False)
    assert not kept.is_empty() and kept.bytes_seen == counted.bytes_seen
    a = extend_counts(stage1, kept, second, stacklevel=2)
    b = extend_counts(stage1, counted, second, stacklevel=2)
    assert a.merges == b.merges and a.trace == b.trace


def test_kept_pieces_count_like_counted_ones_when_asked(tmp_path):
    lines = LINES * 3 + ["By the way.\n", "x"]
    (tmp_path / "c.txt").write_text("".join(lines), encoding="utf-8", newline="")
    for path in (None, tmp_path / "c.txt"):
        kept, counted = stretch_counts(lines, True, path), stretch_counts(lines, False, path)
        assert kept.items() == counted.items() and len(kept) == len(counted)
        assert kept.word_bytes() == counted.word_bytes()
    # Words added as counts after kept pieces come after them, as they would after counted ones.
    kept, counted = stretch_counts(LINES, True), stretch_counts(LINES, False)
    for counts in (kept, counted):
        counts.add_counted([("zz", 2), ("By", 1)])
    assert kept.items() == counted.items()
    empty = stretch_counts([""], True)
    assert empty.is_empty() and len(empty) == 0
    with pytest.raises(ValueError, match="the corpus is empty"):
        bytepair.train(["", ""], 300, superwords_after=280)


@pytest.mark.parametrize("tie_break", ["first_seen", "hf", "lexicographic"])
def test_a_superbpe_tokenizer_extends_as_the_longer_run(tie_break):
    # Extending continues the second stage on the same stretches (kept, not counted): the longer run's merges.
    things = ["sea", "sky", "sun", "moon", "stars", "rivers", "forests", "deserts"]
    corpus = [f"by the way, I am a fan of the {w} and the {v} {i}.\n" for i, w in enumerate(things) for v in things]
    short = bytepair.train(corpus, 330, superwords_after=300, tie_break=tie_break)
    longer = bytepair.train(corpus, 360, superwords_after=300, tie_break=tie_break)
    extended = short.extend(corpus, 360)
    assert extended.merges == longer.merges and extended.settings["pattern"] == SUPERWORDS_PATTERN
    assert extended.encode(corpus[3]) == longer.encode(corpus[3])
