"""Char-level BPE and HF `tokenizer.json`: `Tokenizer.from_hf` gives HF's ids (unk_token, fuse_unk, `##`,
`</w>`, ignore_merges, the pre-tokenizers and Lowercase that char-level BPE is used with), `save_hf` writes files
that `tokenizers` and `transformers` load with bytepair's ids, and round trips keep ids and settings. Anything
bytepair cannot reproduce is a ValueError naming it."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference
from conftest import examples

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import implementations, models, normalizers, pre_tokenizers, trainers  # noqa: E402

pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning"),
    # Patterns that drop text (r"\S+", as HF's WhitespaceSplit) are part of what is tested here.
    pytest.mark.filterwarnings(r"ignore:the pattern .* matched:RuntimeWarning"),
]


@pytest.fixture(scope="module")
def texts(shared_data) -> list[tuple[str, str]]:
    """Real text: tinyshakespeare, every multilingual file (UDHR, emoji, novels, reviews), naughty strings."""
    out = [("tinyshakespeare", (shared_data / "text/tinyshakespeare/input.txt").read_text(encoding="utf-8")[:150_000])]
    for path in sorted((shared_data / "multilingual").rglob("*.txt")):
        out.append((path.name, path.read_bytes().decode("utf-8")[:12_000]))
    blns = json.loads((shared_data / "testvectors/naughty_strings/blns.json").read_text(encoding="utf-8"))
    out += [(f"blns[{i}]", s) for i, s in enumerate(blns)]
    return out


@pytest.fixture(scope="module")
def corpus(shared_data) -> list[str]:
    """Training text: English plus Greek (final sigma under Lowercase) and Russian; other scripts stay unknown."""
    udhr = shared_data / "multilingual/udhr"
    return [
        (shared_data / "text/tinyshakespeare/input.txt").read_text(encoding="utf-8")[:300_000],
        (udhr / "ell_monotonic.txt").read_text(encoding="utf-8"),
        (udhr / "rus.txt").read_text(encoding="utf-8"),
    ]


def hf_trained(
    corpus, pre_tokenizer, prefix=None, suffix=None, lowercase=False, fuse_unk=False, vocab_size=900, unk="[UNK]"
):
    markers = {k: v for k, v in (("continuing_subword_prefix", prefix), ("end_of_word_suffix", suffix)) if v}
    hf = tokenizers.Tokenizer(models.BPE(unk_token=unk, fuse_unk=fuse_unk, **markers))
    if pre_tokenizer is not None:
        hf.pre_tokenizer = pre_tokenizer
    if lowercase:
        hf.normalizer = normalizers.Lowercase()
    specials = [unk, "<s>", "</s>"] if unk else ["<s>", "</s>"]
    hf.train_from_iterator(
        corpus, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False, **markers)
    )
    return hf


def hf_ids(hf, text: str) -> list[int]:
    return hf.encode(text, add_special_tokens=False).ids


def assert_same_ids(tok: bytepair.Tokenizer, hf, texts) -> None:
    for label, text in texts:
        # HF matches added tokens anywhere in the text: that is allowed_special="all".
        assert tok.encode(text, allowed_special="all") == hf_ids(hf, text), label


PRE_TOKENIZERS = {
    "none": lambda: None,
    "Whitespace": pre_tokenizers.Whitespace,
    "WhitespaceSplit": pre_tokenizers.WhitespaceSplit,
    "BertPreTokenizer": pre_tokenizers.BertPreTokenizer,
    "Split(gpt2, isolated)": lambda: pre_tokenizers.Split(tokenizers.Regex(reference.PATTERNS["gpt2"]), "isolated"),
    "Split(digits, isolated)": lambda: pre_tokenizers.Split(tokenizers.Regex(r"\d+"), "isolated"),
    "Split(letters, removed, invert)": lambda: pre_tokenizers.Split(
        tokenizers.Regex(r"\p{L}+|\p{N}"), "removed", invert=True
    ),
    "Split(' ', removed)": lambda: pre_tokenizers.Split(" ", "removed"),
}

# (pre-tokenizer, continuing_subword_prefix, end_of_word_suffix, Lowercase, fuse_unk)
HF_CONFIGS = [
    ("Whitespace", "##", "</w>", False, False),
    ("Whitespace", None, "</w>", True, True),
    ("Whitespace", "##", None, True, False),
    ("Whitespace", None, None, False, True),
    ("WhitespaceSplit", None, "</w>", False, False),
    ("BertPreTokenizer", "##", None, True, True),
    ("none", None, "</w>", False, False),
    ("Split(gpt2, isolated)", "##", "</w>", True, False),
    ("Split(digits, isolated)", "##", None, False, False),
    ("Split(letters, removed, invert)", None, None, True, True),
    ("Split(' ', removed)", None, "</w>", False, True),
]


@pytest.mark.parametrize("config", HF_CONFIGS, ids=lambda c: "-".join(str(x) for x in c))
def test_hf_trained_char_bpe_from_hf_gives_hf_ids(corpus, texts, tmp_path, config):
    pre, prefix, suffix, lowercase, fuse_unk = config
    # Without a pre-tokenizer (or with one that leaves long runs whole) a text is one word: train on lines.
    train_on = (
        corpus
        if pre not in ("none", "Split(digits, isolated)")
        else [line for text in corpus for line in text.splitlines(keepends=True)]
    )
    hf = hf_trained(train_on, PRE_TOKENIZERS[pre](), prefix, suffix, lowercase, fuse_unk)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = bytepair.Tokenizer.from_hf(path)
    assert tok.settings["mode"] == "char"
    assert tok.settings["unk_token"] == "[UNK]" and tok.settings["lowercase"] == lowercase
    assert (tok.settings["continuing_subword_prefix"], tok.settings["end_of_word_suffix"]) == (prefix, suffix)
    assert tok.vocab_size == hf.get_vocab_size()
    assert tok.vocab == hf.get_vocab()
    assert_same_ids(tok, hf, texts + [("specials", "<s>Hello [UNK] wörld</s>"), ("empty", "")])
    # Unseen characters become [UNK] (fused into one per run with fuse_unk).
    assert tok.tokenize("漢字語") == ["[UNK]"] * (1 if fuse_unk else 3)

    # Round trip: save_hf writes a file HF reads to the same ids, and from_hf reads it back to the same tokenizer.
    tok.save_hf(tmp_path / "again.json")
    hf_again = tokenizers.Tokenizer.from_file(str(tmp_path / "again.json"))
    assert_same_ids(tok, hf_again, texts[:20])
    again = bytepair.Tokenizer.from_hf(tmp_path / "again.json")
    assert again.settings == tok.settings and again.vocab == tok.vocab and again.merges == tok.merges
    assert again.special_tokens == tok.special_tokens
    assert again.encode(texts[0][1], allowed_special="all") == tok.encode(texts[0][1], allowed_special="all")


@pytest.mark.parametrize("pre", ["Whitespace", "BertPreTokenizer", "WhitespaceSplit"])
@pytest.mark.parametrize("prefix, suffix", [("##", None), (None, "</w>"), ("##", "</w>")])
def test_decode_puts_spaces_back_as_hf_decoders_do(corpus, tmp_path, pre, prefix, suffix):
    from tokenizers import decoders

    hf = hf_trained(corpus, PRE_TOKENIZERS[pre](), prefix, suffix)
    # The decoders HF users pair with these markers (both markers: drop the suffix, then WordPiece, as save_hf).
    wordpiece = decoders.WordPiece(prefix=prefix or "##", cleanup=False)
    strip_suffix = decoders.Replace(tokenizers.Regex(r"</w>\z"), "")
    hf.decoder = (
        decoders.Sequence([strip_suffix, wordpiece])
        if prefix and suffix
        else wordpiece
        if prefix
        else decoders.BPEDecoder(suffix=suffix)
    )
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = bytepair.Tokenizer.from_hf(tmp_path / "tokenizer.json")
    for line in corpus[0].splitlines()[:400] + corpus[1].splitlines()[:50]:
        ids = tok.encode(line)
        assert tok.decode(ids) == hf.decode(ids), line
        assert tok.decode(ids) == " ".join(piece for piece, _ in hf.pre_tokenizer.pre_tokenize_str(line)), line


@pytest.mark.parametrize(
    "options",
    [{"bert_normalizer": False}, {"bert_normalizer": False, "split_on_whitespace_only": True, "lowercase": True}],
)
def test_charbpetokenizer_files(corpus, texts, tmp_path, options):
    hf = implementations.CharBPETokenizer(**options)
    hf.train_from_iterator(corpus, vocab_size=1000, special_tokens=["<unk>"], show_progress=False)
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = bytepair.Tokenizer.from_hf(tmp_path / "tokenizer.json")
    assert tok.settings["end_of_word_suffix"] == "</w>" and tok.settings["unk_token"] == "<unk>"
    assert_same_ids(tok, hf, texts)
    line = "First Citizen: Before we proceed any further, hear me speak."
    assert tok.decode(tok.encode(line)) == hf.decode(hf.encode(line).ids)


def test_charbpetokenizer_default_normaliser_is_refused_by_name(corpus, tmp_path):
    hf = implementations.CharBPETokenizer()  # BertNormalizer: clean_text, handle_chinese_chars, strip_accents
    hf.train_from_iterator(corpus[:1], vocab_size=300, show_progress=False)
    hf.save(str(tmp_path / "tokenizer.json"))
    with pytest.raises(
        ValueError,
        match=r"normalizer 'BertNormalizer' \(CharBPETokenizer adds it unless "
        r"bert_normalizer=False\) is not supported \(bytepair supports no "
        r"normaliser or Lowercase\)",
    ):
        bytepair.Tokenizer.from_hf(tmp_path / "tokenizer.json")


# -- bytepair → save_hf → tokenizers / transformers ---------------------------------------------------------

BYTEPAIR_CONFIGS = [
    # (pattern, continuing_subword_prefix, end_of_word_suffix, lowercase)
    ("whitespace", "##", "</w>", False),
    ("whitespace", None, "</w>", True),
    ("whitespace", "##", None, False),
    ("whitespace", None, None, True),
    (r"\S+", "##", None, True),
    (None, None, "</w>", False),
    ("gpt2", "##", "</w>", True),
    ("gpt2", None, None, False),
    ("o200k", None, "</w>", False),
    (r"\p{L}+|\p{N}", "##", None, False),
]


@pytest.mark.parametrize("config", BYTEPAIR_CONFIGS, ids=lambda c: "-".join(str(x) for x in c))
def test_bytepair_char_save_hf_loads_in_tokenizers_and_transformers(corpus, texts, tmp_path, config):
    import transformers

    pattern, prefix, suffix, lowercase = config
    train_on = corpus if pattern is not None else [corpus[0][:60_000]]
    tok = bytepair.train(
        train_on,
        700,
        mode="char",
        pattern=pattern,
        continuing_subword_prefix=prefix,
        end_of_word_suffix=suffix,
        lowercase=lowercase,
        unk_token="[UNK]",
        special_tokens=["<s>", "</s>"],
    )
    path = tmp_path / "tokenizer.json"
    tok.save_hf(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    samples = texts + [("specials", "<s>Hello, [UNK] wörld!</s> ΟΔΟΣ")]
    assert_same_ids(tok, hf, samples)
    for label, text in samples[:25] + samples[-1:]:
        assert fast.encode(text, add_special_tokens=False) == tok.encode(text, allowed_special="all"), label
    # Decoding: HF's decoder gives bytepair's text (on text without unknown characters).
    unk = tok.token_to_id("[UNK]")
    for line in corpus[0].splitlines()[:300] + corpus[1].splitlines()[:30]:
        ids = tok.encode(line)
        if unk in ids:
            continue
        assert hf.decode(ids) == tok.decode(ids), line
        assert fast.decode(ids) == tok.decode(ids), line
    # from_hf reads it back: same settings (the training record aside), vocabulary, merges and ids.
    again = bytepair.Tokenizer.from_hf(path)
    assert {**again.settings, "tie_break": None} == {**tok.settings, "tie_break": None}
    assert again.vocab == tok.vocab and again.merges == tok.merges and again.special_tokens == tok.special_tokens
    for label, text in samples[:10]:
        assert again.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all"), label
        ids = tok.encode(text, allowed_special="all")
        assert again.decode(ids) == tok.decode(ids), label


def test_without_unk_token_hf_drops_what_bytepair_refuses(tmp_path):
    tok = bytepair.train(["hug pug pun bun hugs"] * 5, 15, mode="char", pattern="whitespace")
    tok.save_hf(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert hf_ids(hf, "hugs pun") == tok.encode("hugs pun")
    with pytest.raises(
        ValueError,
        match=r"character 'é' \(U\+00E9\) at character 1 of the text is not in the "
        r"vocabulary",
    ):
        tok.encode("hé")
    assert hf_ids(hf, "hé") == tok.encode("h")  # HF drops the character silently


def test_save_hf_refuses_byte_level_with_word_markers(tmp_path):
    tok = bytepair.train(["hug pug pun bun hugs"] * 5, 520, continuing_subword_prefix="##")
    with pytest.raises(ValueError, match="byte-level with continuing_subword_prefix"):
        tok.save_hf(tmp_path / "tokenizer.json")


# -- random text ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def random_pairs(corpus, tmp_path_factory):
    """(bytepair, HF) pairs: HF-trained read by from_hf, and bytepair-trained written by save_hf."""
    folder = tmp_path_factory.mktemp("hf_char")
    pairs = []
    for i, (pre, prefix, suffix, lowercase, fuse_unk) in enumerate([HF_CONFIGS[0], HF_CONFIGS[1], HF_CONFIGS[7]]):
        hf = hf_trained(corpus, PRE_TOKENIZERS[pre](), prefix, suffix, lowercase, fuse_unk, vocab_size=500)
        hf.save(str(folder / f"hf{i}.json"))
        pairs.append((bytepair.Tokenizer.from_hf(folder / f"hf{i}.json"), hf))
    for i, (pattern, prefix, suffix, lowercase) in enumerate(
        [BYTEPAIR_CONFIGS[0], BYTEPAIR_CONFIGS[4], BYTEPAIR_CONFIGS[6]]
    ):
        tok = bytepair.train(
            corpus,
            500,
            mode="char",
            pattern=pattern,
            continuing_subword_prefix=prefix,
            end_of_word_suffix=suffix,
            lowercase=lowercase,
            unk_token="[UNK]",
            special_tokens=["<s>"],
        )
        tok.save_hf(folder / f"bp{i}.json")
        pairs.append((tok, tokenizers.Tokenizer.from_file(str(folder / f"bp{i}.json"))))
    return pairs


WORDS = [
    "the",
    "The",
    "thee",
    " ",
    "  ",
    "\n",
    "\t",
    "ΟΔΟΣ",
    "σας",
    "мир",
    "漢",
    "🎉",
    "é",
    "e\u0301",
    "İ",
    "'s",
    ",",
    "1234",
    "[UNK]",
    "<s>",
    "##",
    "</w>",
    "-",
    "a",
    "ab",
]


@settings(max_examples=examples(200), deadline=None)
@given(
    text=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=60)
    | st.lists(st.sampled_from(WORDS), max_size=30).map("".join)
)
def test_random_text_gives_hf_ids(random_pairs, text):
    for tok, hf in random_pairs:
        assert tok.encode(text, allowed_special="all") == hf_ids(hf, text)


# -- fuse_unk, ignore_merges, saving ------------------------------------------------------------------------


def write_hf(path: Path, vocab: dict[str, int], merges: list, **model) -> Path:
    doc: dict[str, Any] = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": None,
        "decoder": None,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": merges,
            **model,
        },
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("fuse_unk", [False, True])
def test_fuse_unk_as_hf(tmp_path, fuse_unk):
    vocab = {"<unk>": 0, "a": 1, "b": 2, "##a": 3, "##b": 4, "ab": 5}
    path = write_hf(
        tmp_path / "t.json", vocab, [["a", "##b"]], unk_token="<unk>", continuing_subword_prefix="##", fuse_unk=fuse_unk
    )
    tok, hf = bytepair.Tokenizer.from_hf(path), tokenizers.Tokenizer.from_file(str(path))
    for text in ["aéèb", "éèab", "abéè", "ééé é", "aébèa"]:
        assert tok.encode(text) == hf_ids(hf, text), text
    assert tok.tokenize("aéèb") == (["a", "<unk>", "##b"] if fuse_unk else ["a", "<unk>", "<unk>", "##b"])


@pytest.mark.parametrize("ignore_merges", [False, True])
def test_ignore_merges_keeps_a_piece_that_is_a_token_whole(corpus, texts, tmp_path, ignore_merges):
    hf = hf_trained(corpus, pre_tokenizers.Whitespace(), "##", "</w>", vocab_size=800)
    doc = json.loads(hf.to_str())
    # Drop the last merges but keep their tokens: merges cannot make them, ignore_merges still finds whole words.
    doc["model"]["merges"] = doc["model"]["merges"][:-150]
    doc["model"]["ignore_merges"] = ignore_merges
    doc["model"]["vocab"]["First"] = len(doc["model"]["vocab"])  # a whole word with no merges and no suffix
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    tok, hf = bytepair.Tokenizer.from_hf(path), tokenizers.Tokenizer.from_file(str(path))
    assert_same_ids(tok, hf, texts[:30])
    assert ("First" in tok.tokenize("First Citizen")) == ignore_merges
    tok.save_hf(tmp_path / "again.json")
    assert bytepair.Tokenizer.from_hf(tmp_path / "again.json").tokenize("First") == tok.tokenize("First")
    assert_same_ids(tok, tokenizers.Tokenizer.from_file(str(tmp_path / "again.json")), texts[:5])


def test_char_tokenizers_from_hf_save_load_and_pickle(corpus, texts, tmp_path):
    hf = hf_trained(corpus, pre_tokenizers.Whitespace(), "##", "</w>", lowercase=True, fuse_unk=True)
    doc = json.loads(hf.to_str())
    doc["model"]["ignore_merges"] = True
    doc["model"]["vocab"]["<extra>"] = 5000  # an id after a gap
    doc["added_tokens"].append(
        {
            "id": 5000,
            "content": "<extra>",
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
    )
    (tmp_path / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    tok = bytepair.Tokenizer.from_hf(tmp_path / "tokenizer.json")
    assert tok.vocab_size == 5001 and tok.id_to_token(4999) is None and tok.token_to_id("<extra>") == 5000
    tok.save(tmp_path / "native.json")
    for other in (bytepair.Tokenizer.load(tmp_path / "native.json"), pickle.loads(pickle.dumps(tok))):
        assert other == tok and other.settings == tok.settings
        for label, text in texts[:10] + [("fused", "ab 漢字 c<extra>")]:
            assert other.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all"), label
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert tok.encode("ab 漢字 c<extra>", allowed_special="all") == hf_ids(hf, "ab 漢字 c<extra>")
    with pytest.raises(ValueError, match="id 4999 .* is unused"):
        tok.decode([4999])


# -- what is refused ----------------------------------------------------------------------------------------


def added(i: int, content: str, **flags) -> dict:
    return {
        "id": i,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
        **flags,
    }


def base_doc() -> dict:
    return {
        "version": "1.0",
        "added_tokens": [added(0, "[UNK]")],
        "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "decoder": None,
        "model": {
            "type": "BPE",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "vocab": {"[UNK]": 0, "a": 1, "##b": 2, "ab": 3},
            "merges": [["a", "##b"]],
        },
    }


def edited(change):
    doc = base_doc()
    change(doc)
    return doc


REFUSED = [
    (lambda d: d["model"].update(byte_fallback=True), r"model.byte_fallback=True \(SentencePiece-style"),
    (lambda d: d["model"].update(dropout=0.1), r"model.dropout=0.1 \(BPE-dropout is random"),
    (
        lambda d: d.update(normalizer={"type": "NFKC"}),
        (
            r"normalizer 'NFKC' is not supported \(bytepair supports no "
            r"normaliser or Lowercase\)"
        ),
    ),
    (
        lambda d: d.update(normalizer={"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}]}),
        "normalizer 'NFD' is not supported",
    ),
    (
        lambda d: d.update(pre_tokenizer={"type": "Metaspace", "replacement": "▁"}),
        (
            r"pre-tokenizer 'Metaspace' is not supported \(for char-level BPE bytepair supports no pre-tokenizer, "
            r"Whitespace, WhitespaceSplit, BertPreTokenizer, or Split"
        ),
    ),
    (
        lambda d: d.update(
            pre_tokenizer={"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Punctuation"}]}
        ),
        r"pre-tokenizer sequence \['WhitespaceSplit', 'Punctuation'\] is not supported",
    ),
    (
        lambda d: d.update(pre_tokenizer={"type": "Split", "pattern": {"Regex": r"\d"}, "behavior": "Merged"}),
        "Split behavior 'Merged' is not supported",
    ),
    (
        lambda d: d["added_tokens"].append(added(4, "<mask>", lstrip=True)),
        "added token '<mask>' with lstrip=True is not supported",
    ),
    (
        lambda d: (
            d["added_tokens"].append(added(4, "Hi", normalized=True, special=False))
            or d.update(normalizer={"type": "Lowercase"})
        ),
        "added token 'Hi' with normalized=True under Lowercase",
    ),
    (lambda d: d["model"].update(unk_token="<unk>"), "unk_token '<unk>' is not in the vocabulary"),
    (lambda d: d["model"].update(merges=[["a", "b"]]), r"merge 0 \('a' 'b'\): 'b' is not in the vocabulary"),
    (
        lambda d: d["model"]["vocab"].update(b=4) or d["model"].update(merges=[["a", "b"]]),
        "the right part does not start with the continuing_subword_prefix '##'",
    ),
    (
        lambda d: d["model"].update(merges=[["a", "##b"], ["ab", "##b"]]),
        r"merge 1 \('ab' '##b'\): 'abb' is not in the vocabulary",
    ),
    (lambda d: d["model"].update(merges=[["a", "##b", "c"]]), r"model.merges\[0\] is \['a', '##b', 'c'\]"),
    (lambda d: d["model"].update(merges=["a ##b c"]), r"model.merges\[0\] is 'a ##b c'"),
    (lambda d: d["model"]["vocab"].update(c=-1), "model.vocab gives 'c' the id -1"),
    (lambda d: d["model"]["vocab"].update(c="5"), "model.vocab gives 'c' the id '5'"),
    (lambda d: d["model"]["vocab"].update(c=3), r"id 3 is given to two tokens, 'ab' and 'c'"),
    (lambda d: d["model"]["vocab"].update(c=4_000_000_000), "id 4000000000 is far beyond the 5 tokens"),
    (lambda d: d["model"].update(vocab=[["a", 1]]), "model.vocab must be an object of token -> id"),
    (lambda d: d["model"].update(continuing_subword_prefix=5), "model.continuing_subword_prefix must be a string"),
    (lambda d: d.update(added_tokens=[{"content": "", "id": 9}]), 'needs a non-empty "content" and an int "id"'),
    (lambda d: d["model"].update(type="Unigram"), "model type 'Unigram' is not supported"),
    (
        lambda d: d.update(pre_tokenizer={"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated"}),
        r"the Split regex '\(' uses an unclosed group at character 0",
    ),
]


@pytest.mark.parametrize("change, message", REFUSED, ids=[m[:40] for _, m in REFUSED])
def test_from_hf_char_refuses_with_a_clear_value_error(tmp_path, change, message):
    (tmp_path / "tokenizer.json").write_text(json.dumps(edited(change)), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        bytepair.Tokenizer.from_hf(tmp_path / "tokenizer.json")


def test_the_base_document_loads(tmp_path):
    (tmp_path / "tokenizer.json").write_text(json.dumps(base_doc()), encoding="utf-8")
    tok = bytepair.Tokenizer.from_hf(tmp_path / "tokenizer.json")
    assert tok.tokenize("ab abb c") == ["ab", "ab", "##b", "[UNK]"]
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="holds a JSON list, not an object"):
        bytepair.Tokenizer.from_hf(tmp_path / "list.json")


def test_added_tokens_get_hf_ids_whatever_the_file_says(tmp_path):
    vocab = {"[UNK]": 0, "a": 1, "##b": 2, "ab": 3}
    doc = edited(
        lambda d: d.update(
            added_tokens=[
                added(0, "[UNK]"),
                added(77, "<s>"),  # HF gives <s> 4: the id after the model's tokens
                added(5, "</s>"),
            ]
        )
    )
    doc["model"]["vocab"] = vocab
    (tmp_path / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    tok = bytepair.Tokenizer.from_hf(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert [tok.token_to_id(t) for t in ("<s>", "</s>")] == [hf.token_to_id(t) for t in ("<s>", "</s>")] == [4, 5]
    assert tok.encode("ab<s>a</s>", allowed_special="all") == hf_ids(hf, "ab<s>a</s>")
