"""The library behind `bytepair viz`, `inspect`, `compare` and `explain`: segments that spell the text and hold
its ids, the HTML page, the tokenizer summary and vocabulary dump, comparison numbers, and the lecture, which
must agree with the reference implementation and the fast core merge for merge."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import compare, describe, explain, reference, viewer
from conftest import examples

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

TRAINING = ["The cat sat on the mat. Naïve café, 日本語 🎉 x=12345;\n\tthe END\n"] * 30
SAMPLE = "The cat — naïve 🎉🎉 日本語 <|endoftext|> x\r\n\ty\x00z"

TOKENIZERS = {
    "byte": dict(vocab_size=300, special_tokens=["<|endoftext|>"]),
    "char-unk-whitespace": dict(
        vocab_size=60, mode="char", unk_token="[UNK]", pattern="whitespace", special_tokens=["<|endoftext|>"]
    ),
    "char-prefix-lowercase": dict(
        vocab_size=60,
        mode="char",
        unk_token="[UNK]",
        continuing_subword_prefix="##",
        lowercase=True,
        special_tokens=["<|endoftext|>"],
    ),
    "byte-whitespace-suffix": dict(
        vocab_size=600, pattern="whitespace", end_of_word_suffix="</w>", special_tokens=["<|endoftext|>"]
    ),
}


@pytest.fixture(scope="module")
def toks() -> dict[str, bytepair.Tokenizer]:
    return {name: bytepair.train(TRAINING, **options) for name, options in TOKENIZERS.items()}  # type: ignore[call-overload]


# -- segments ---------------------------------------------------------------------------------------------------


@settings(max_examples=examples(100), deadline=None)
@given(text=st.text(max_size=40) | st.sampled_from([SAMPLE, "", "🎉", "  x  ", "A<|endoftext|>B"]))
def test_segments_spell_the_text_and_hold_its_ids(toks, text):
    for name, tok in toks.items():
        if name.startswith("char") and tok.settings["lowercase"] and len(text.lower()) != len(text):
            continue  # lowercasing changes lengths: tokens are shown as they are (tested below)
        segs = viewer.segments(tok, text)
        assert "".join(s.text for s in segs) == text, name
        assert [i for s in segs for i in s.ids] == tok.encode(text, allowed_special="all"), name
        for s in segs:
            if not s.ids:  # only text the pre-tokenizer dropped: spaces with pattern="whitespace"
                assert tok.settings["pattern"] == "whitespace" and s.text.isspace(), (name, s)


def test_partial_characters_are_grouped(toks):
    tok = toks["byte"]
    segs = viewer.segments(tok, "🎉")
    assert len(segs) == 1 and segs[0].partial and segs[0].text == "🎉"
    assert tok.decode_bytes(segs[0].ids) == "🎉".encode()
    special = [s for s in viewer.segments(tok, "a<|endoftext|>b") if s.special]
    assert [s.text for s in special] == ["<|endoftext|>"]
    as_text = viewer.segments(tok, "a<|endoftext|>b", allowed_special=())
    assert not any(s.special for s in as_text)


def test_lossy_tokenizers_are_shown_token_by_token_when_unaligned(toks):
    tok = toks["char-prefix-lowercase"]
    text = "İstanbul cat"  # "İ".lower() is two characters
    segs = viewer.segments(tok, text)
    assert [i for s in segs for i in s.ids] == tok.encode(text)


def test_terminal_colours_and_plain():
    tok = bytepair.train(TRAINING, 300)
    text = "The cat\nsat"
    plain = viewer.terminal(tok, text, color=False)
    assert plain.split("|") == [tok.decode([i]).replace("\n", "↵\n") for i in tok.encode(text)]
    coloured = viewer.terminal(tok, text, color=True, ids=True)
    stripped = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert re.findall(r"\[(\d+)\]", stripped) == [str(i) for i in tok.encode(text)]
    assert stripped.startswith("The[")
    # A colour never runs over a line break.
    assert all(line.endswith("\x1b[0m") for line in coloured.split("\n")[:-1])


def test_html_page_is_self_contained_and_escaped(toks):
    tok = toks["byte"]
    text = 'a <b>"bold"</b> & <script>alert(1)</script>\n🎉 <|endoftext|>'
    page = viewer.html_page(tok, text, title="t <x>")
    assert "<script>alert" not in page and '<b>"bold' not in page
    assert "<title>t &lt;x&gt;</title>" in page
    assert not re.search(r"""(src|href)=["']?(http|//)""", page)
    spans = re.findall(r'<span class="t ([^"]*)" data-ids="([^"]*)" data-bytes="(\d+)" title="([^"]*)">', page)
    ids = [int(i) for _, group, _, _ in spans for i in group.split()]
    assert ids == tok.encode(text, allowed_special="all")
    assert sum(int(n) for _, _, n, _ in spans) == len(text.encode())
    assert any("partial" in classes for classes, *_ in spans) and any("special" in c for c, *_ in spans)
    body = page.split('<pre id="text">')[1].split("</pre>")[0]
    visible = html.unescape(re.sub(r"<[^>]*>", "", re.sub(r'<span class="mark">[^<]*</span>', "", body)))
    assert visible == text
    assert "bytes / token" in page and f"{len(text.encode()) / len(ids):.2f}" in page


# -- inspect ------------------------------------------------------------------------------------------------------


def test_escape_and_show_token():
    assert describe.escape("a\tb\nc\x00\u200b\U000e0001 d") == "a\\tb\\nc\\x00\\u200b\\U000e0001 d"
    assert describe.escape(b"\xe2\x82") == "\\xe2\\x82"
    tok = bytepair.train(TRAINING, 300, special_tokens=["<|endoftext|>"])
    assert describe.show_token(tok, 0) == "<|endoftext|>"
    assert describe.show_token(tok, tok.token_to_id("Ġcat") or 0) == '" cat"'
    with pytest.raises(ValueError, match="not in the vocabulary"):
        describe.show_token(tok, 10_000)


def test_describe_reports_the_training_trace(toks):
    tok = toks["byte"]
    info = describe.describe(tok, longest=3, merges=2)
    trace = tok.trace or []
    assert info.merges == len(tok.merges) and info.vocab_size == tok.vocab_size
    assert [row[4] for row in info.first_merges] == [n for _, n in trace[:2]]
    assert [row[4] for row in info.last_merges] == [n for _, n in trace[-2:]]
    assert [row[0] for row in info.last_merges] == [len(trace) - 2, len(trace) - 1]
    assert sum(info.length_histogram.values()) == tok.vocab_size - 1
    longest = max(len(tok.token_bytes(i)) for i in range(1, tok.vocab_size))
    assert info.longest[0][2] == longest
    text = info.render()
    assert "<|endoftext|> (0)" in text and "First merges" in text and "Last merges" in text


def test_describe_loaded_vocabularies(shared_data):
    tok = bytepair.get_encoding("cl100k_base", shared_data)
    info = describe.describe(tok, longest=2, merges=2)
    assert info.unused_ids == tok.vocab_size - len(tok.vocab) and info.unused_ids > 0
    assert "no training counts" in info.render()
    lines = list(describe.vocabulary_lines(tok))
    assert len(lines) == tok.vocab_size and lines[100256] == "100256\t(unused id)"
    assert lines[198] == '198\t"\\n"' and lines[100257] == "100257\t<|endoftext|>\t(special)"


def test_vocabulary_dump_of_char_tokenizers(toks):
    tok = toks["char-prefix-lowercase"]
    lines = list(describe.vocabulary_lines(tok))
    assert lines[1] == "1\t[UNK]\t(special)"  # after the special token: unk_token is special too
    assert any('"##' in line for line in lines)


# -- compare -------------------------------------------------------------------------------------------------------


def test_compare_counts(toks):
    texts = ["The cat sat.", "naïve 日本語 🎉 <|endoftext|>"]
    rows = compare.compare({"byte": toks["byte"], "char": toks["char-unk-whitespace"], "chars": "chars"}, [texts])
    byte, char, chars = rows
    ids = [toks["byte"].encode(t, disallowed_special=()) for t in texts]
    assert byte.tokens == sum(map(len, ids)) and byte.distinct == len({i for x in ids for i in x})
    assert byte.vocab_used == byte.distinct / toks["byte"].vocab_size
    assert chars.tokens == sum(map(len, texts)) and chars.vocab_used is None
    assert (
        char.unknown
        == sum(x.count(0) for x in [toks["char-unk-whitespace"].encode(t, disallowed_special=()) for t in texts])
        or char.unknown > 0
    )
    assert byte.words == 7 and byte.bytes == sum(len(t.encode()) for t in texts)
    table = compare.table(rows)
    assert table.splitlines()[0].split()[:2] == ["tokenizer", "vocab"] and "open" in table
    assert table.splitlines()[0].split()[-1] == "unknown"  # the char tokenizer has an unk_token
    assert "unknown" not in compare.table([byte, chars])
    assert compare.table(rows, markdown=True).startswith("| tokenizer |")
    with pytest.raises(ValueError, match="unknown baseline"):
        compare.compare({"x": "letters"}, ["a"])


def test_compare_chart(tmp_path, toks):
    rows = compare.compare({"byte": toks["byte"], "bytes": "bytes", "words": "words"}, TRAINING)
    compare.chart(rows, tmp_path / "c.png", title="test")
    data = (tmp_path / "c.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image

    image = matplotlib.image.imread(tmp_path / "c.png")
    assert image.shape[1] > 1000 and image.shape[0] > 150


# -- explain ---------------------------------------------------------------------------------------------------------


def test_textbook_lecture_equals_reference_and_core():
    lecture = explain.explain_steps()
    ref = reference.train_from_counts(explain.TEXTBOOK, 100, mode="char", initial_alphabet="corpus")
    core = bytepair.train_from_counts(explain.TEXTBOOK, 100, mode="char", initial_alphabet="corpus")
    assert [(s.pair, s.count) for s in lecture.steps] == ref.trace == core.trace
    assert lecture.finished and len(lecture.steps) == 7
    assert all(len(split) == 1 for split in lecture.steps[-1].splits.values())
    text = lecture.render()
    assert "(h, u) 15   (u, g) 20   (p, u) 17   (u, n) 16   (b, u) 4   (g, s) 5" in text
    assert "A tie: (hug, s) also occurs 5 times" in text
    assert "thug: [UNK] h u g → (u+g) [UNK] h ug → (h+ug) [UNK] hug" in text


@settings(max_examples=examples(40), deadline=None)
@given(
    counts=st.dictionaries(
        st.text(alphabet="abcde ", min_size=1, max_size=6), st.integers(1, 9), min_size=1, max_size=8
    ),
    tie_break=st.sampled_from(["first_seen", "hf", "lexicographic"]),
    mode=st.sampled_from(["char", "byte"]),
    merges=st.none() | st.integers(0, 5),
)
def test_lecture_follows_the_core_merge_for_merge(counts, tie_break, mode, merges):
    lecture = explain.explain_steps(counts, tie_break=tie_break, mode=mode, merges=merges, words=["abc", "zed"])
    core = bytepair.train_from_counts(
        counts, 10_000, mode=mode, tie_break=tie_break, initial_alphabet="corpus", pattern=None
    )
    want = (core.trace or [])[: merges if merges is not None else None]
    assert [(s.pair, s.count) for s in lecture.steps] == want
    assert lecture.finished == (
        len(want) == len(core.trace or [])
        and all(
            len(s) == 1
            for s in (lecture.steps[-1].splits.values() if lecture.steps else lecture.initial_splits.values())
        )
    )
    assert lecture.render()


def test_lecture_from_text_and_errors():
    lecture = explain.explain_steps(text="low lower lowest", merges=2)
    assert lecture.word_counts == {"low": 1, "lower": 1, "lowest": 1}
    assert [s.pair for s in lecture.steps] == [("l", "o"), ("lo", "w")]
    assert "Stopped after 2 merges" in lecture.render()
    with pytest.raises(ValueError, match="no words"):
        explain.explain_steps(text="   ")
    with pytest.raises(ValueError, match="unknown tie_break"):
        explain.explain_steps(tie_break="random")
