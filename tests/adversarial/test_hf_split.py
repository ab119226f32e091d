"""HF tokenizer.json files with a `Split` pre-tokenizer: bytepair's ids equal HF tokenizers' (the oracle, run here)
for every behaviour, with and without `invert`, for regexes that match empty strings or leave text between their
matches, on random texts; no text is lost; the Split survives save_hf, save and pickle; and a regex bytepair cannot
run as Oniguruma does is refused when the file is loaded, never loaded and then wrong."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from conftest import examples

tokenizers = pytest.importorskip("tokenizers")

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")

# Regexes as tokenizer.json files have them (Oniguruma's syntax): ones that match the empty string, leave text
# between matches, use look-arounds, anchors, word boundaries, Oniguruma's own readings of repeats and classes,
# and the pre-tokenizers of real models.
REGEXES = [
    r"\s*",
    r"(?=[A-Z])",
    r"\b",
    r"\B",
    r"\s+",
    r"\d",
    r"\w+",
    r"\W",
    r"[A-Z][a-z]*",
    r"x*",
    r"a|",
    r"^",
    r"$",
    r"\n",
    r"(?<=\d)",
    r"-",
    r"\h+",
    r"[[:punct:]]+",
    r"[[:alpha:]]+",
    r"\p{N}{1,3}+",
    r"a{2}?",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
    r"ab(?i)c|de",
    r"(?m:.)+",
    r"\Z",
    r"[一-龥぀-ゟ゠-ヿ]+",
    r"\s+(?!\S)|\s+",
    # GPT-2's, cl100k's as HF files write it and as tiktoken does (`{1,3}+` is a repeated repeat in Oniguruma),
    # Llama 3's.
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
]

# Characters that exercise the regexes: letters of both cases, digits (and non-ASCII ones, ² which is in
# Oniguruma's \w), spaces and line breaks, punctuation, the zero-width non-joiner (in bytepair's \w, not in
# Oniguruma's), ß and ſ (case folding), CJK, an emoji.
ALPHABET = [*"aAbZzx 12\n\t'-_.,!?sS", "é", "中", "文", "²", "\u200c", "ß", "ſ", "\r", "🎉", "٣", "ー", "ab", "  "]
TEXTS = st.one_of(
    st.lists(st.sampled_from(ALPHABET), max_size=24).map("".join),
    st.text(st.characters(codec="utf-8"), max_size=24),
)


def corpus() -> list[str]:
    """Training text whose merges cross every kind of boundary (the tokenizer has no pre-tokenizer of its own), so
    that where a Split cuts shows in the ids."""
    return [
        "Hello World, HelloWorld!  hello\n world's 123 4567 x²y naïve ab-cd--ef ABC abc\r\n",
        "中文 文中 ーー 🎉🎉 ß ſs a\u200cb 'll 'S\t\tx ٣٣ __ ..,, ?! 12 1 2",
    ] * 4


@pytest.fixture(scope="module")
def base_document() -> dict:
    tok = bytepair.train(corpus(), 420, pattern=None)
    return json.loads(tok.core.to_hf())


def with_split(document: dict, regex: str, behavior: str, invert: bool) -> dict:
    doc = copy.deepcopy(document)
    doc["pre_tokenizer"] = {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": regex}, "behavior": behavior, "invert": invert},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        ],
    }
    return doc


def load_both(doc: dict, path: Path) -> tuple[object, bytepair.Tokenizer]:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return tokenizers.Tokenizer.from_file(str(path)), bytepair.Tokenizer.from_hf(path)


@pytest.fixture(scope="module")
def pairs(base_document, tmp_path_factory) -> list[tuple[str, str, bool, object, bytepair.Tokenizer]]:
    folder = tmp_path_factory.mktemp("splits")
    out = []
    for k, regex in enumerate(REGEXES):
        for behavior in BEHAVIORS:
            for invert in (False, True):
                hf, ours = load_both(with_split(base_document, regex, behavior, invert), folder / f"{k}.json")
                out.append((regex, behavior, invert, hf, ours))
    return out


def hf_ids(hf, text: str) -> list[int]:
    return hf.encode(text, add_special_tokens=False).ids


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_ids_equal_hf_for_every_behaviour_and_invert(pairs, text):
    for regex, behavior, invert, hf, ours in pairs:
        assert ours.encode(text) == hf_ids(hf, text), (regex, behavior, invert, text)


def test_fixed_texts_with_every_regex(pairs):
    texts = ["", "Hello World", "HelloWorld", "a\n", "\n\nb\n", "x²", "a\u200cb", "ßSS ſt", "12345 6", "  \t "]
    for regex, behavior, invert, hf, ours in pairs:
        for text in texts:
            assert ours.encode(text) == hf_ids(hf, text), (regex, behavior, invert, text)


def test_gpt2_with_a_split_before_byte_level_keeps_every_byte(shared_data, tmp_path):
    """The issue's case: GPT-2's tokenizer.json with a Split of \\s* / (?=[A-Z]) / \\b, Isolated, before ByteLevel
    encoded "Hello World" as "ello orld"."""
    document = json.loads((shared_data / "gpt2" / "tokenizer.json").read_text(encoding="utf-8"))
    for regex in (r"\s*", r"(?=[A-Z])", r"\b"):
        hf, ours = load_both(with_split(document, regex, "Isolated", False), tmp_path / "gpt2.json")
        for text in ("Hello World", "HelloWorld and  more\n", "naïve café 中文"):
            ids = ours.encode(text)
            assert ids == hf_ids(hf, text), (regex, text)
            assert ours.decode(ids) == text, (regex, text)


@pytest.mark.parametrize("regex", [r"\s*", r"(?=[A-Z])", r"\w+", r"\h+", r"\p{N}{1,3}+", r"[[:punct:]]"])
@pytest.mark.parametrize("behavior,invert", [("MergedWithNext", False), ("Contiguous", True), ("Removed", False)])
def test_a_split_survives_save_hf_save_and_pickle(base_document, tmp_path, regex, behavior, invert):
    hf, tok = load_both(with_split(base_document, regex, behavior, invert), tmp_path / "t.json")
    text = "Hello World, HelloWorld! 12345 x²y ab-cd\n"
    ids = hf_ids(hf, text)
    assert tok.encode(text) == ids
    tok.save_hf(tmp_path / "again.json")
    again = tokenizers.Tokenizer.from_file(str(tmp_path / "again.json"))
    assert hf_ids(again, text) == ids
    assert bytepair.Tokenizer.from_hf(tmp_path / "again.json").encode(text) == ids
    tok.save(tmp_path / "ours.json")
    loaded = bytepair.Tokenizer.load(tmp_path / "ours.json")
    assert loaded.encode(text) == ids and loaded == tok
    assert pickle.loads(pickle.dumps(tok)).encode(text) == ids
    assert loaded.settings["pattern"] == regex


def test_settings_say_how_a_split_cuts(base_document, tmp_path):
    _, tok = load_both(with_split(base_document, r"\s*", "MergedWithNext", True), tmp_path / "t.json")
    assert tok.settings["split"] == {"behavior": "MergedWithNext", "invert": True}
    assert tok.settings["pattern"] == r"\s*" and tok.settings["unmatched"] is None
    assert "split={'behavior': 'MergedWithNext', 'invert': True}" in repr(tok)
    with pytest.raises(ValueError, match=r"a HF Split \(MergedWithNext, invert=true\), which tiktoken cannot run"):
        tok.to_tiktoken()
    # A Split that keeps (Isolated) or drops (inverted Removed) the text between matches, of a regex both
    # engines read alike, is bytepair's own pattern with unmatched="keep" / "drop".
    _, tok = load_both(with_split(base_document, r"\s+", "Isolated", False), tmp_path / "t.json")
    assert (tok.settings["split"], tok.settings["unmatched"]) == (None, "keep")
    _, tok = load_both(with_split(base_document, r"\s+", "Removed", True), tmp_path / "t.json")
    assert (tok.settings["split"], tok.settings["unmatched"]) == (None, "drop")


@pytest.mark.parametrize(
    "regex,named",
    [
        (r"(a)\1", "back-reference"),
        (r"(?x) a", "(?x"),
        (r"(?i)ss", "'ss' in a case-insensitive part"),
        (r"(?i)\p{Lu}", "case-insensitive part"),
        (r"\pL", "without braces"),
        (r"[[:print:]]", "[:print:]"),
        (r"\K", "keep"),
        (r"(?~ab)", "(?~"),
        (r"\R", "any line break"),
    ],
)
def test_a_regex_that_cannot_be_run_as_oniguruma_does_is_refused_at_load(base_document, tmp_path, regex, named):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(with_split(base_document, regex, "Isolated", False)), encoding="utf-8")
    with pytest.raises(ValueError, match="cannot run exactly as HF tokenizers") as error:
        bytepair.Tokenizer.from_hf(path)
    assert named in str(error.value) and str(path) in str(error.value)


def test_a_string_pattern_is_a_literal(base_document, tmp_path):
    doc = with_split(base_document, "-", "MergedWithPrevious", False)
    doc["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"String": ".-"}
    hf, ours = load_both(doc, tmp_path / "t.json")
    for text in ("a.-b.-.-c", "a-b.c", ".-"):
        assert ours.encode(text) == hf_ids(hf, text)


def test_a_char_level_file_with_a_split(tmp_path):
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=60, special_tokens=["[UNK]"], show_progress=False)
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="[UNK]"))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.Split(tokenizers.Regex(r"\s*"), "merged_with_next")
    hf.train_from_iterator(corpus(), trainer)
    hf.save(str(tmp_path / "char.json"))
    ours = bytepair.Tokenizer.from_hf(tmp_path / "char.json")
    for text in corpus() + ["Hello  World", "unseen ☃ text"]:
        assert ours.encode(text) == hf.encode(text).ids


# -- Oniguruma's classes, over (a sample of) every code point ------------------------------------------------

# Every code point up to U+3000, then every 37th (surrogates excluded): ~31 000 characters of every kind.
CODE_POINTS = "".join(chr(c) for c in [*range(0x3000), *range(0x3000, 0x110000, 37)] if not 0xD800 <= c < 0xE000)

CLASSES = [
    r"\w",
    r"\W",
    r"\s",
    r"\S",
    r"\d",
    r"\D",
    r"\h",
    r"\H",
    r"(?i)\w",
    r"(?i)[a-z]",
    r"(?i)[^k]",
    r"(?i)[[:upper:]]",
    *[rf"[[:{name}:]]" for name in ("alpha", "alnum", "digit", "upper", "lower", "space", "punct", "word")],
    *[rf"[[:{name}:]]" for name in ("xdigit", "cntrl", "blank", "ascii")],
    r"[[:^alpha:]]",
    r"[\w&&\D]",
    *[rf"\p{{{name}}}" for name in ("Word", "Alnum", "Alpha", "Punct", "Digit", "Upper", "Lower", "Space")],
    *[rf"\p{{{name}}}" for name in ("XDigit", "Cntrl", "Blank", "ASCII", "L", "Lu", "N", "P", "S", "Han", "Greek")],
    r"\p{^L}",
    r"\P{Nd}",
    r".",
    *[f"(?i){c}" for c in "abcdefghijklmnopqrstuvwxyzK"],
]


# Oniguruma reads some of them differently inside a class ([\w] leaves out ² ³ ¹ ¼ ½ ¾, which \w takes).
BRACKETED = [f"[{c}]" for c in CLASSES if c.startswith(("\\", "(?i)\\"))] + [
    f"[^{c}]" for c in CLASSES if c.startswith("\\")
]


@pytest.mark.parametrize("cls", CLASSES + [c.replace("[(?i)", "(?i)[") for c in BRACKETED])
def test_classes_match_the_code_points_oniguruma_does(base_document, tmp_path, cls):
    """With Removed, the class's characters disappear: the ids of what is left show exactly which were taken."""
    hf, ours = load_both(with_split(base_document, cls, "Removed", False), tmp_path / "t.json")
    assert ours.encode(CODE_POINTS) == hf_ids(hf, CODE_POINTS)
