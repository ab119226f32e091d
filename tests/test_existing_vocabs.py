"""Existing vocabularies: tiktoken's encodings and GPT-2 / HF files give exactly tiktoken's and HF's ids, on
every corpus in ../shared/data and on random text; batch, count, save/load, and bad files."""

from __future__ import annotations

import json
import pickle
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference
from conftest import examples

pytestmark = pytest.mark.shared_data

# tiktoken's own pattern strings (r50k/p50k's differs in form from GPT-2's published one, not in effect).
TIKTOKEN_PATTERNS = {
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "cl100k": reference.PATTERNS["cl100k"],
    "o200k": reference.PATTERNS["o200k"],
}
NAMES = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]


@pytest.fixture(scope="module")
def encodings(shared_data):
    """name → (bytepair Tokenizer, tiktoken Encoding), built offline from the shared rank files."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    out = {}
    for name in NAMES:
        files, pattern, specials = bytepair.ENCODINGS[name]
        ranks = load_tiktoken_bpe(str(shared_data / "tiktoken" / files[0]))
        enc = tiktoken.Encoding(
            name, pat_str=TIKTOKEN_PATTERNS[pattern], mergeable_ranks=ranks, special_tokens=specials
        )
        out[name] = (bytepair.get_encoding(name, shared_data), enc)
    return out


def shared_texts(shared_data: Path) -> list[tuple[str, str]]:
    texts = []
    for path in sorted((shared_data / "multilingual").rglob("*.txt")):
        texts.append((path.name, path.read_bytes().decode("utf-8")[:150_000]))
    texts.append(("tinyshakespeare", (shared_data / "text/tinyshakespeare/input.txt").read_text(encoding="utf-8")))
    genome = next((shared_data / "genome").iterdir())
    texts.append((genome.name, genome.read_bytes()[:200_000].decode("ascii", errors="replace")))
    blns = json.loads((shared_data / "testvectors/naughty_strings/blns.json").read_text(encoding="utf-8"))
    texts += [(f"blns[{i}]", s) for i, s in enumerate(blns)]
    source = Path(bytepair.__file__).read_text(encoding="utf-8") + Path(reference.__file__).read_text(encoding="utf-8")
    texts.append(("python source", source))
    return texts


@pytest.mark.parametrize("name", NAMES)
def test_ids_equal_tiktoken_on_every_shared_corpus(shared_data, encodings, name):
    tok, enc = encodings[name]
    for label, text in shared_texts(shared_data):
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), label
        assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all"), label
        assert tok.decode(tok.encode_ordinary(text)) == text, label


def test_llama_cpp_gpt2_vectors(shared_data):
    folder = shared_data / "testvectors/llama_cpp_gpt2"
    inputs = (folder / "ggml-vocab-gpt-2.gguf.inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")[:-1]
    outputs = (folder / "ggml-vocab-gpt-2.gguf.out").read_text(encoding="utf-8").splitlines()
    assert len(inputs) == len(outputs)
    for name in ("gpt2", "r50k_base"):
        tok = bytepair.get_encoding(name, shared_data)
        for text, ids in zip(inputs, outputs):
            assert tok.encode_ordinary(text) == [int(i) for i in ids.split()], (name, text)


def test_gpt2_files_equal_hf_tokenizer_json(shared_data):
    import tokenizers

    hf = tokenizers.Tokenizer.from_file(str(shared_data / "gpt2/tokenizer.json"))
    tok = bytepair.Tokenizer.from_gpt2(shared_data / "gpt2/vocab.json", shared_data / "gpt2/merges.txt")
    assert tok.special_tokens == ["<|endoftext|>"] and tok.token_to_id("<|endoftext|>") == 50256
    for label, text in shared_texts(shared_data)[:12] + shared_texts(shared_data)[-1:]:
        # HF matches added tokens anywhere in the text: that is allowed_special="all".
        assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids, label


def test_merges_derived_from_a_rank_file_are_gpt2s_merges_txt(encodings, shared_data):
    """r50k_base's merges, derived from its ranks (each token's two parts, found on all cores), are GPT-2's
    merges.txt, in order."""
    tok, _ = encodings["r50k_base"]
    gpt2 = bytepair.Tokenizer.from_gpt2(shared_data / "gpt2/vocab.json", shared_data / "gpt2/merges.txt")
    assert len(tok.merges) == 50_000
    assert tok.merges == gpt2.merges


@settings(max_examples=examples(300), deadline=None)
@given(
    text=st.text(alphabet=st.characters(codec="utf-8"), max_size=80)
    | st.lists(
        st.sampled_from(["a", "ab", " ", "  ", "\n", "'s", "1234", "é", "🎉", "\r\n", "-", "ſ"]), max_size=40
    ).map("".join)
)
def test_random_text_equals_tiktoken(encodings, text):
    for name in ("cl100k_base", "o200k_base", "r50k_base"):
        tok, enc = encodings[name]
        ids = tok.encode_ordinary(text)
        assert ids == enc.encode_ordinary(text), name
        assert tok.decode(ids) == text


def test_long_unsplittable_pieces(encodings):
    import random

    rng = random.Random(5)
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(200_000))
    digits = "".join(rng.choice("0123456789") for _ in range(200_000))
    for name in ("cl100k_base", "r50k_base", "o200k_base"):
        tok, enc = encodings[name]
        for text in ["a" * 100_000, "x" * 30_000 + "y" * 30_000, "🎉" * 20_000, letters, digits, "ab" * 50_000]:
            assert tok.encode_ordinary(text) == enc.encode_ordinary(text), (name, text[:10])


def test_long_pieces_of_many_kinds_equal_tiktoken(encodings, shared_data):
    """Pieces past the short-piece merge (49 bytes up) go to the backtracking encoder: random letters, digits,
    small alphabets with runs (its dead ends), unspaced scripts from the shared corpora, bytes of emoji."""
    import random

    rng = random.Random(11)
    scripts = "".join(
        path.read_text(encoding="utf-8")
        for path in [
            shared_data / "multilingual/ja/wagahaiwa_nekodearu.txt",
            shared_data / "multilingual/zh/lunyu.json",
        ]
    )
    assert len(scripts) > 100_000
    alphabets = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "0123456789",
        "ab",
        "aab",
        "abc",
        "xyz",
        "aeiou",
        "01",
        "🎉é日",
        "Ġ\u0120",
        "ーン",
    ]
    texts = []
    for alphabet in alphabets:
        for length in [49, 50, 64, 100, 333, 1000, 5000]:
            for _ in range(4):
                run = rng.choice(alphabet)
                texts.append("".join(run if rng.random() < 0.3 else rng.choice(alphabet) for _ in range(length)))
    for _ in range(60):
        start = rng.randrange(max(1, len(scripts) - 3000))
        texts.append("".join(c for c in scripts[start : start + rng.choice([60, 400, 3000])] if not c.isspace()))
    for name in NAMES:
        tok, enc = encodings[name]
        assert tok.encode_batch(texts) == enc.encode_ordinary_batch(texts), name


@settings(max_examples=examples(200), deadline=None)
@given(
    text=st.lists(st.sampled_from(["a", "b", "ab", "ba", "aa", "1", "12", "x", "é"]), min_size=30, max_size=400).map(
        "".join
    )
)
def test_long_pieces_from_few_letters_equal_tiktoken(encodings, text):
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        tok, enc = encodings[name]
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), name


def test_batch_count_and_threads(encodings, shared_data):
    tok, enc = encodings["cl100k_base"]
    texts = [t for _, t in shared_texts(shared_data)[:40]]
    want = [enc.encode_ordinary(t) for t in texts]
    assert tok.encode_batch(texts, disallowed_special=()) == want
    assert tok.encode_batch(texts, disallowed_special=(), threads=1) == want
    assert [tok.count(t, disallowed_special=()) for t in texts] == [len(w) for w in want]
    with pytest.raises(ValueError, match="allowed_special"):
        tok.encode_batch(["fine", "not <|endoftext|> fine"])
    # Many chunks, encoded by this thread and the pool's while this one builds the lists: order kept, with
    # more threads than cores too, and for batches smaller than a chunk.
    lines = [line for t in texts for line in t.splitlines()][:3000]
    assert len(lines) > 1000
    want = [enc.encode_ordinary(t) for t in lines]
    for threads in (None, 1, 2, 3):
        assert tok.encode_batch(lines, disallowed_special=(), threads=threads) == want, threads
        for n in (0, 1, 2, 5, 9):
            assert tok.encode_batch(lines[:n], disallowed_special=(), threads=threads) == want[:n], (threads, n)
    # The error is the first bad text's, whichever chunk or thread meets a bad text first.
    for first, second in (("<|endoftext|>", "<|fim_prefix|>"), ("<|fim_prefix|>", "<|endoftext|>")):
        bad = list(lines)
        bad[700], bad[2900] = f"not {first} fine", f"not {second} fine"
        for threads in (1, 2, 3):
            with pytest.raises(ValueError, match=f"special token '{re.escape(first)}'.*allowed_special"):
                tok.encode_batch(bad, threads=threads)


def test_special_tokens_follow_tiktoken(encodings):
    tok, enc = encodings["cl100k_base"]
    text = "hi<|endoftext|> there<|fim_prefix|>"
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert tok.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=()) == enc.encode(
        text, allowed_special={"<|endoftext|>"}, disallowed_special=()
    )
    with pytest.raises(ValueError, match="<|endoftext|>"):
        tok.encode(text)


def test_the_disallowed_special_token_named_is_the_first_in_the_text_as_in_tiktoken(encodings):
    tok, enc = encodings["cl100k_base"]
    text = "a <|fim_suffix|> b <|endoftext|> c <|fim_prefix|>"
    for allowed in (set(), {"<|fim_middle|>"}, {"<|fim_suffix|>"}):
        with pytest.raises(ValueError) as ours:
            tok.encode(text, allowed_special=allowed)
        with pytest.raises(ValueError) as theirs:
            enc.encode(text, allowed_special=allowed)
        found = re.search(r"'(<\|\w+\|>)'", str(theirs.value))
        assert found is not None, theirs.value
        named = found.group(1)
        assert named == ("<|fim_suffix|>" if not allowed & {"<|fim_suffix|>"} else "<|endoftext|>")
        assert f"special token '{named}' (at character {text.index(named)})" in str(ours.value), allowed


def test_unused_ids_and_out_of_range_ids_are_clear_errors(encodings):
    tok, _ = encodings["cl100k_base"]
    with pytest.raises(ValueError, match="100256 .*unused"):
        tok.decode([100256])
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tok.decode([tok.vocab_size])


def test_loaded_vocabularies_save_load_and_pickle(encodings, tmp_path):
    for name in ("r50k_base", "cl100k_base"):
        tok, _ = encodings[name]
        tok.save(tmp_path / f"{name}.json")
        again = bytepair.Tokenizer.load(tmp_path / f"{name}.json")
        assert again == tok
        text = "Hello, world! Ünïcödé 🎉 1234567"
        assert again.encode_ordinary(text) == tok.encode_ordinary(text)
        assert pickle.loads(pickle.dumps(tok)).encode_ordinary(text) == tok.encode_ordinary(text)


def test_missing_and_damaged_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="never downloads"):
        bytepair.get_encoding("cl100k_base", tmp_path)
    with pytest.raises(ValueError, match="unknown encoding"):
        bytepair.get_encoding("cl200k")
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("IQ== 0\nIg== 1\n!!! 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 3.*not base64"):
        bytepair.Tokenizer.from_tiktoken(bad)
    bad.write_text("IQ== 0\nIg== x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2.*rank"):
        bytepair.Tokenizer.from_tiktoken(bad)
    vocab = tmp_path / "vocab.json"
    vocab.write_text('{"a": 0, "b": 1}', encoding="utf-8")
    merges = tmp_path / "merges.txt"
    merges.write_text("#version: 0.2\na b\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2.*'ab' is not in"):
        bytepair.Tokenizer.from_gpt2(vocab, merges)


def test_offsets_point_at_the_text(encodings, shared_data):
    tok, _ = encodings["cl100k_base"]
    for label, text in shared_texts(shared_data)[:8] + [("mixed", "héllo wörld 🎉🎉 日本語\n\tend")]:
        text = text[:20_000]
        data = text.encode("utf-8")
        by_bytes = tok.encode_with_offsets(text, unit="byte", disallowed_special=())
        assert [i for i, _, _ in by_bytes] == tok.encode_ordinary(text)
        assert [data[s:e] for _, s, e in by_bytes] == [tok.token_bytes(i) for i, _, _ in by_bytes], label
        assert by_bytes[-1][2] == len(data)
        by_chars = tok.encode_with_offsets(text, disallowed_special=())
        assert by_chars[0][1] == 0 and by_chars[-1][2] == len(text)
        # Each token's bytes lie inside the characters its character span covers.
        for i, s, e in by_chars:
            covered = text[s:e].encode("utf-8")
            assert tok.token_bytes(i) in covered, label


def test_numpy_output(encodings):
    import numpy as np

    tok, enc = encodings["r50k_base"]
    texts = ["Hello world", "", "naïve 🎉 text " * 50]
    arrays = tok.encode_to_numpy(texts, dtype="uint16", disallowed_special=())
    assert [a.dtype for a in arrays] == [np.uint16] * 3
    assert [a.tolist() for a in arrays] == [enc.encode_ordinary(t) for t in texts]
    single = tok.encode_to_numpy(texts[2], disallowed_special=())
    assert single.dtype == np.uint32 and single.tolist() == enc.encode_ordinary(texts[2])
    single[0] = 7  # the caller's own array: writable, not a view of something shared
    assert single[0] == 7 and tok.encode_to_numpy(texts[2], disallowed_special=())[0] != 7
    with pytest.raises(ValueError, match="uint16"):
        encodings["cl100k_base"][0].encode_to_numpy("x", dtype="uint16")
    # the core refuses ids that do not fit its width rather than cutting them
    cl100k = encodings["cl100k_base"][0]
    allowed, disallowed = cl100k._policy(frozenset(), "all")
    high = next(t for t in (cl100k.decode([i]) for i in range(90000, 90100)) if max(cl100k.encode(t)) > 65535)
    with pytest.raises(ValueError, match="does not fit in 2 bytes"):
        cl100k._core.encode_packed([high], allowed, disallowed, 1, 2)
    with pytest.raises(ValueError, match="width must be 2 or 4"):
        cl100k._core.encode_packed(["x"], allowed, disallowed, 1, 3)


@settings(max_examples=examples(200), deadline=None)
@given(data=st.binary(max_size=60))
def test_encode_bytes_round_trips_any_bytes(encodings, data):
    tok, enc = encodings["cl100k_base"]
    ids = tok.encode_bytes(data, disallowed_special=())
    assert tok.decode_bytes(ids) == data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    assert ids == enc.encode_ordinary(text)


def test_export_to_tiktoken(encodings, shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # no copies of our files in tiktoken's cache
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    text = (shared_data / "text/tinyshakespeare/input.txt").read_text(encoding="utf-8")
    # A tokenizer trained here, and one loaded from tiktoken: both round-trip through tiktoken with equal ids.
    trained = bytepair.train([text], 2000, special_tokens=["<|endoftext|>"])
    loaded, _ = encodings["cl100k_base"]
    for tok in (trained, loaded):
        enc = tok.to_tiktoken()
        sample = text[:100_000] + "<|endoftext|> naïve 🎉"
        assert enc.encode(sample, allowed_special="all") == tok.encode(sample, allowed_special="all")
        path = tmp_path / f"{id(tok)}.tiktoken"  # tiktoken caches files by path: one name per file
        tok.save_tiktoken(path)
        ranks = load_tiktoken_bpe(str(path))
        assert ranks == dict(tok._core.tiktoken_ranks())
        reloaded = tiktoken.Encoding(
            "x", pat_str=enc._pat_str, mergeable_ranks=ranks, special_tokens=enc._special_tokens
        )
        assert reloaded.encode_ordinary(sample) == tok.encode_ordinary(sample)
    with pytest.raises(ValueError, match="byte-level"):
        bytepair.train(["abc abd"] * 3, 8, mode="char").to_tiktoken()


@pytest.mark.parametrize("which", ["trained", "trained_o200k", "gpt2", "r50k_base", "cl100k_base", "o200k_base"])
def test_export_to_hf_tokenizer_json(encodings, shared_data, tmp_path, which):
    import tokenizers

    text = (shared_data / "text/tinyshakespeare/input.txt").read_text(encoding="utf-8")
    if which == "trained":
        tok = bytepair.train([text], 1500, special_tokens=["<|endoftext|>"])
    elif which == "trained_o200k":
        tok = bytepair.train([text], 1500, pattern="o200k", lowercase=True)
    elif which == "gpt2":
        tok = bytepair.get_encoding("gpt2", shared_data)
    else:
        tok = encodings[which][0]
    tok.save_hf(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    samples = [text[:50_000], "<|endoftext|> naïve café 🎉 1234567 \n\n  x", "ſome 'S words, Tab\there"]
    for path in sorted((shared_data / "multilingual").rglob("*.txt"))[:6]:
        samples.append(path.read_text(encoding="utf-8")[:5_000])
    again = bytepair.Tokenizer.from_hf(tmp_path / "tokenizer.json")
    for sample in samples:
        want = tok.encode(sample, allowed_special="all")
        assert hf.encode(sample, add_special_tokens=False).ids == want
        assert again.encode(sample, allowed_special="all") == want
    if which == "cl100k_base":
        import transformers  # a test dependency

        fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
        assert fast.encode(samples[1], add_special_tokens=False) == tok.encode(samples[1], allowed_special="all")


@pytest.mark.parametrize("pattern", [r"\S+", r"[a-z]+|[0-9]", r"[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s]+|\s+"])
def test_byte_level_custom_patterns_round_trip_through_hf(tmp_path, pattern):
    """Text a custom regex does not match is kept as pieces of its own (unmatched="keep", the default): the
    exported tokenizer.json must keep it too, and a HF Split that keeps it (Isolated) must keep it here."""
    import tokenizers
    from tokenizers import Regex, pre_tokenizers, trainers

    texts = ["hello world, foo  bar 42\n", " x  y\tZ!"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (that the pattern drops text is the point here)
        tok = bytepair.train(texts * 5, 290, pattern=pattern)
    tok.save_hf(tmp_path / "ours.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "ours.json"))
    for text in texts:
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text), (pattern, text)
    theirs = tokenizers.Tokenizer(tokenizers.models.BPE())
    theirs.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), "isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    theirs.decoder = tokenizers.decoders.ByteLevel()
    theirs.train_from_iterator(
        texts * 5,
        trainers.BpeTrainer(vocab_size=290, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False),
    )
    theirs.save(str(tmp_path / "theirs.json"))
    again = bytepair.Tokenizer.from_hf(tmp_path / "theirs.json")
    for text in texts:
        assert again.encode(text) == theirs.encode(text, add_special_tokens=False).ids, (pattern, text)
        assert again.decode(again.encode(text)) == text  # Isolated keeps every character


def test_from_hf_reads_the_gpt2_tokenizer_json(shared_data, encodings):
    import tokenizers

    path = shared_data / "gpt2/tokenizer.json"
    tok = bytepair.Tokenizer.from_hf(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    for label, text in shared_texts(shared_data)[:10]:
        assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids, label


def test_from_hf_names_what_it_does_not_support(tmp_path):
    doc = {"model": {"type": "WordPiece", "vocab": {}}, "pre_tokenizer": None, "normalizer": None}
    (tmp_path / "wp.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match="model type 'WordPiece' is not supported"):
        bytepair.Tokenizer.from_hf(tmp_path / "wp.json")
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not a valid tokenizer.json"):
        bytepair.Tokenizer.from_hf(tmp_path / "broken.json")


def _hf_byte_level(tmp_path, edit) -> str:
    """A byte-level tokenizer.json trained by HF, with `edit(doc)` applied."""
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import models, pre_tokenizers, trainers

    hf = HFTokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.train_from_iterator(
        ["hello <mask> world, answers answer sw"] * 5,
        trainers.BpeTrainer(vocab_size=280, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False),
    )
    doc = json.loads(hf.to_str())
    edit(doc)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def _added(content, **flags):
    return {
        "id": 280,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
        **flags,
    }


@pytest.mark.parametrize(
    "edit, message",
    [
        # Ignored before: HF eats the space before "<mask>" (lstrip), bytepair kept it: other ids.
        (lambda d: d.update(added_tokens=[_added("<mask>", lstrip=True)]), "'<mask>' with lstrip=True"),
        (lambda d: d.update(added_tokens=[_added("<rs>", rstrip=True)]), "'<rs>' with rstrip=True"),
        (lambda d: d.update(added_tokens=[_added("sw", single_word=True)]), "'sw' with single_word=True"),
        (
            lambda d: d.update(normalizer={"type": "Lowercase"}, added_tokens=[_added("<MASK>", normalized=True)]),
            "normalized=True under Lowercase",
        ),
        # HF splits each Whitespace piece again with GPT-2's regex.
        (
            lambda d: d.update(
                pre_tokenizer={
                    "type": "Sequence",
                    "pretokenizers": [{"type": "Whitespace"}, {**d["pre_tokenizer"], "use_regex": True}],
                }
            ),
            "use_regex=True after 'Whitespace'",
        ),
        (lambda d: d.update(normalizer=[{"type": "Lowercase"}]), r"normalizer \[\{'type': 'Lowercase'\}\]"),
    ],
)
def test_from_hf_byte_level_refuses_what_would_give_other_ids(tmp_path, edit, message):
    with pytest.raises(ValueError, match=message):
        bytepair.Tokenizer.from_hf(_hf_byte_level(tmp_path, edit))


def test_alternating_tokenizers_on_one_thread(encodings, shared_data):
    """Each thread keeps caches for its last four encoders: cycling through more than four, one text at a time,
    evicts and reuses them on every call, and must not leak one vocabulary's ids into another's."""
    r50k = encodings["r50k_base"][1]  # gpt2's vocabulary and pattern: two more encoders, with their own caches
    pairs = [*encodings.values(), *((bytepair.get_encoding(n, shared_data), r50k) for n in ("gpt2", "r50k_base"))]
    texts = ["Hello world, hello again.", " the the the", "naïve café 🎉", "1234567 lots of repeated words words"]
    texts += [" ".join(["rarely", "seen", "wordings", str(i)]) for i in range(20)]
    for round_ in range(3):
        for text in texts:
            for tok, enc in pairs:
                assert tok.encode_ordinary(text) == enc.encode_ordinary(text), (round_, text, enc.name)


def _small_gpt2_files(tmp_path, vocab_bytes: bytes | None = None):
    vocab = {"a": 0, "b": 1, "ab": 2, "<|endoftext|>": 3}
    (tmp_path / "vocab.json").write_bytes(vocab_bytes or json.dumps(vocab).encode())
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\n", encoding="utf-8")
    return tmp_path / "vocab.json", tmp_path / "merges.txt"


def test_from_gpt2_refuses_a_special_token_listed_twice(tmp_path):
    # Kept twice, it made a tokenizer that save/load and pickle refused.
    with pytest.raises(ValueError, match="'<\\|endoftext\\|>' is listed twice"):
        bytepair.Tokenizer.from_gpt2(*_small_gpt2_files(tmp_path), special_tokens=["<|endoftext|>"] * 2)


def test_loader_errors_name_the_file_and_what_to_do(tmp_path):
    # A vocab.json that is not UTF-8 was a bare UnicodeDecodeError naming no file (looking for <|endoftext|>).
    vocab, merges = _small_gpt2_files(tmp_path, vocab_bytes='{"caf\xe9": 0}'.encode("latin-1"))
    with pytest.raises(ValueError, match=r"vocab\.json' is not valid UTF-8.* check that this is the right file") as e:
        bytepair.Tokenizer.from_gpt2(vocab, merges)
    assert "errors=" not in str(e.value)  # the loaders have no errors= argument to pass
    (tmp_path / "big.tiktoken").write_text("YQ== 0\nYg== 4294967296\n", encoding="ascii")
    with pytest.raises(ValueError, match=r"line 2: rank '4294967296' is outside 0 to 4294967295"):
        bytepair.Tokenizer.from_tiktoken(tmp_path / "big.tiktoken", pattern="gpt2")


def test_from_hf_names_a_bad_merge_by_its_index(tmp_path):
    def drop_a_merge_result(doc):
        left, right = doc["model"]["merges"][5]
        del doc["model"]["vocab"][left + right]

    with pytest.raises(ValueError, match=r"tokenizer\.json': model\.merges\[5\]: '.*' is not in model\.vocab"):
        bytepair.Tokenizer.from_hf(_hf_byte_level(tmp_path, drop_a_merge_result))


def test_get_encoding_refuses_a_truncated_or_mislabelled_file(tmp_path, shared_data):
    # Both loaded before, silently: 60,000 lines of cl100k_base (other ids for Japanese), and r50k under the name
    # of cl100k_base (GPT-2's ids).
    (tmp_path / "tiktoken").mkdir()
    target = tmp_path / "tiktoken" / "cl100k_base.tiktoken"
    lines = (shared_data / "tiktoken" / "cl100k_base.tiktoken").read_bytes().splitlines(keepends=True)
    target.write_bytes(b"".join(lines[:60_000]))
    with pytest.raises(ValueError, match=r"is not OpenAI's cl100k_base\.tiktoken \(SHA-256 .*from_tiktoken"):
        bytepair.get_encoding("cl100k_base", tmp_path)
    target.write_bytes((shared_data / "tiktoken" / "r50k_base.tiktoken").read_bytes())
    with pytest.raises(ValueError, match="not OpenAI's cl100k_base"):
        bytepair.get_encoding("cl100k_base", tmp_path)
    target.write_bytes(b"".join(lines))
    assert bytepair.get_encoding("cl100k_base", tmp_path).vocab_size == 100277
