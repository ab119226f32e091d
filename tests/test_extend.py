"""Extending a tokenizer (`Tokenizer.extend`), cutting one down (`Tokenizer.truncate`) and several sizes from
one run (`train(..., vocab_size=[...])`): the defining properties, checked on random corpora with every tie
rule; the pure-Python reference as the oracle; loaded vocabularies (GPT-2, cl100k_base, a HF tokenizer.json)
against tiktoken and HF tokenizers."""

from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import Tokenizer, reference
from conftest import examples

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

SETTINGS = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])

fragments = st.sampled_from(list("aab bc  d\n\t.,!'s99 0ÉéÜü日本🎉-_") + ["'ll", "the ", "  ", "1234", "\r\n"])
texts = st.lists(st.lists(fragments, max_size=30).map("".join), min_size=1, max_size=8)
options = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["byte", "char"]),
        "tie_break": st.sampled_from(["first_seen", "hf", "lexicographic"]),
        "pattern": st.sampled_from(["gpt2", "cl100k", None, "whitespace"]),
        "continuing_subword_prefix": st.sampled_from([None, None, "##"]),
        "end_of_word_suffix": st.sampled_from([None, None, "</w>"]),
        "special_tokens": st.sampled_from([(), ("<|endoftext|>",)]),
        "max_token_length": st.sampled_from([None, None, 3]),
        "lowercase": st.booleans(),
    }
)
CONTROL = ("min_frequency", "max_token_length", "tie_break", "forbid_across", "veto")


def corpus_lines() -> list[str]:
    """A few hundred lines of English-like text that needs no shared data."""
    words = ["the", "cat", "sat", "on", "mat", "lower", "lowest", "newer", "wider", "hugging", "bun", "pun"]
    return [f"{words[i % 12]} {words[(i * 7) % 12]}, {words[(i * 5) % 12]}s. {i}\n" for i in range(400)]


def control(opts: dict) -> dict:
    return {k: v for k, v in opts.items() if k in CONTROL}


def same(a: Tokenizer, b: Tokenizer) -> None:
    assert a.merges == b.merges
    assert a.trace == b.trace
    assert a.vocab == b.vocab
    assert a == b  # the whole file: settings, alphabet, merges and counts


@SETTINGS
@given(corpus=texts, opts=options, shorter=st.integers(0, 30), longer=st.integers(0, 40))
def test_extending_a_shorter_run_gives_the_longer_run(corpus, opts, shorter, longer):
    base = len(
        reference.base_vocabulary(
            reference.word_frequencies(corpus, opts["pattern"], opts["special_tokens"], opts["lowercase"]),
            opts["mode"],
            opts["special_tokens"],
            "corpus",
            opts["continuing_subword_prefix"],
            opts["end_of_word_suffix"],
        )
    )
    assume(base > len(opts["special_tokens"]))
    n = base + shorter
    m = n + longer
    short = bytepair.train(corpus, n, initial_alphabet="corpus", **opts)
    assume(short.vocab_size == n)  # (a run that ran out of pairs has nothing to continue)
    extended = short.extend(corpus, m, **control(opts))
    same(extended, bytepair.train(corpus, m, initial_alphabet="corpus", **opts))


@SETTINGS
@given(first=texts, second=texts, opts=options, shorter=st.integers(0, 20), more=st.integers(0, 30))
def test_extending_on_a_new_corpus_equals_the_reference(first, second, opts, shorter, more):
    freqs = reference.word_frequencies(first, opts["pattern"], opts["special_tokens"], opts["lowercase"])
    assume(freqs)
    base = reference.base_vocabulary(
        freqs,
        opts["mode"],
        opts["special_tokens"],
        "all",
        opts["continuing_subword_prefix"],
        opts["end_of_word_suffix"],
    )
    tok = bytepair.train(first, len(base) + shorter, **opts)
    ref = reference.train(first, len(base) + shorter, **opts)
    assert tok.merges == ref.merges
    size = tok.vocab_size + more
    try:
        got: Tokenizer | str = tok.extend(second, size, **control(opts))
    except ValueError as e:
        got = "ValueError"
        assert "no token for" in str(e) or "empty" in str(e), e
    try:
        want: reference.ReferenceTokenizer | str = reference.extend(ref, second, size, **control(opts))
        assume(reference.word_frequencies(second, opts["pattern"], opts["special_tokens"]))
    except ValueError:
        want = "ValueError"
    if isinstance(got, str) or isinstance(want, str):
        assert got == want
        return
    assert got.merges == want.merges
    assert got.trace == want.trace
    assert [got.id_to_token(i) for i in range(got.vocab_size)] == want.vocab
    for text in second:
        assert got.encode(text, allowed_special="all") == want.encode(text)


def test_extending_keeps_every_id_and_adds_after_them(tmp_path):
    lines = corpus_lines()
    tok = bytepair.train(lines[:200], 300, special_tokens=["<|endoftext|>"])
    more = tok.extend(["hugging buns and puns, zebras quizzing jovial wyverns\n"] * 50, 330)
    assert more.vocab_size == 330
    for i in range(tok.vocab_size):
        assert more.id_to_token(i) == tok.id_to_token(i)
    assert more.merges[: len(tok.merges)] == tok.merges
    assert more.special_tokens == tok.special_tokens
    assert more.trace is not None and more.trace[: len(tok.merges)] == tok.trace
    new = [t for t, i in more.vocab.items() if i >= 300]
    assert {"Ġbuns", "Ġpuns"} <= set(new)
    text = "hugging buns and puns<|endoftext|>the cat"
    assert more.decode(more.encode(text, allowed_special="all")) == text
    assert len(more.encode("hugging buns")) < len(tok.encode("hugging buns"))
    more.save(tmp_path / "more.json")
    assert Tokenizer.load(tmp_path / "more.json") == more


def test_extend_refuses_what_it_cannot_do():
    tok = bytepair.train(corpus_lines(), 300)
    with pytest.raises(ValueError, match="smaller than the tokenizer, which already has 300 ids"):
        tok.extend(corpus_lines(), 299)
    chars = bytepair.train(["abc abd"] * 5, 8, mode="char", initial_alphabet="corpus")
    with pytest.raises(ValueError, match="character 'z'.*no token for"):
        chars.extend(["abz"], 20)
    # With an unknown token, unknown characters are that token, as when encoding.
    with_unk = bytepair.train(["abc abd"] * 5, 9, mode="char", unk_token="[UNK]")
    more = with_unk.extend(["abz abdd abdd"], 12)
    assert more.vocab_size > 9 and all("[UNK]" not in pair for pair in more.merges)


def test_truncate_gives_the_shorter_run():
    lines = corpus_lines()
    for tie in ("first_seen", "hf", "lexicographic"):
        long = bytepair.train(lines, 420, tie_break=tie, max_token_length=6)
        for size in (256, 257, 300, 419, 420):
            same(long.truncate(size), bytepair.train(lines, size, tie_break=tie, max_token_length=6))
    with pytest.raises(ValueError, match="use size >= 256"):
        long.truncate(255)
    with pytest.raises(ValueError, match="this tokenizer has 420 ids"):
        long.truncate(421)
    with pytest.raises(TypeError, match="must be an int"):
        long.truncate(3.0)  # type: ignore[arg-type]


def test_several_sizes_from_one_run():
    lines = corpus_lines()
    for tie in ("first_seen", "hf", "lexicographic"):
        toks = bytepair.train(lines, [400, 300, 257], tie_break=tie, special_tokens=["<s>"])
        assert [t.vocab_size for t in toks] == [400, 300, 257]
        for tok, size in zip(toks, [400, 300, 257]):
            same(tok, bytepair.train(lines, size, tie_break=tie, special_tokens=["<s>"]))
        refs = reference.train(lines, [400, 300, 257], tie_break=tie, special_tokens=["<s>"])
        assert [r.merges for r in refs] == [
            t.merges for t in bytepair.train(lines, [400, 300, 257], tie_break=tie, special_tokens=["<s>"])
        ]
    # A size beyond what the corpus has pairs for gets what a run to that size gets (with its warning).
    with pytest.warns(RuntimeWarning, match="ran out of pairs"):
        small, big = bytepair.train(["ab ab"], [258, 100_000])
    assert big == bytepair.train(["ab ab"], 100_000) and small.vocab_size == 258


@pytest.mark.parametrize(
    ("sizes", "error", "message"),
    [
        ([], ValueError, "empty list"),
        ([300, 300], ValueError, "twice"),
        ([300, "400"], TypeError, "list of ints"),
        ([0, 300], ValueError, "positive"),
    ],
)
def test_several_sizes_refuses_bad_lists(sizes, error, message):
    with pytest.raises(error, match=message):
        bytepair.train(corpus_lines(), sizes)


def test_replay_when_a_merge_made_a_token_twice(tmp_path):
    """A trained tokenizer whose merges make "aaa" twice (aa+a, then a+aa): extending replays the merges in
    sequence, as training applied them, which lowest-rank-first encoding would not."""
    merges: list[tuple[str, str, int]] = [("a", "a", 9), ("aa", "a", 8), ("a", "aa", 7), ("aaa", "b", 6)]
    doc = {
        "format": "bytepair", "version": 1, "mode": "char", "pattern": None, "lowercase": False,
        "continuing_subword_prefix": None, "end_of_word_suffix": None, "unk_token": None, "tie_break": "first_seen",
        "special_tokens": [], "alphabet": ["a", "b", "c"], "merges": merges,
    }  # fmt: skip
    path = tmp_path / "tok.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    tok = Tokenizer.load(path)
    ref = reference.ReferenceTokenizer(
        vocab=["a", "b", "c", "aa", "aaa", "aaab"],
        merges=[("a", "a"), ("aa", "a"), ("a", "aa"), ("aaa", "b")],
        trace=[((m[0], m[1]), m[2]) for m in merges],
        mode="char",
        pattern=None,
    )
    corpus = ["caaab", "aaaab", "aaaaaaaab", "acaab", "aaac"] * 3
    for tie in ("first_seen", "hf", "lexicographic"):
        got = tok.extend(corpus, 12, tie_break=tie)
        want = reference.extend(ref, corpus, 12, tie_break=tie)
        assert got.merges == want.merges, tie
        assert got.trace == want.trace


def test_extend_in_the_reference_is_the_longer_run():
    lines = corpus_lines()[:120]
    for tie in ("first_seen", "hf", "lexicographic"):
        for mode in ("byte", "char"):
            short = reference.train(
                lines,
                270 if mode == "byte" else 40,
                mode=mode,
                tie_break=tie,
                initial_alphabet="all" if mode == "byte" else "corpus",
            )
            long = reference.train(
                lines,
                len(short.vocab) + 25,
                mode=mode,
                tie_break=tie,
                initial_alphabet="all" if mode == "byte" else "corpus",
            )
            assert reference.extend(short, lines, len(long.vocab), tie_break=tie).merges == long.merges
            assert long.truncate(len(short.vocab)).merges == short.merges


# -- loaded vocabularies ---------------------------------------------------------------------------------


def new_corpus() -> list[str]:
    """Text unlike what the OpenAI vocabularies were trained on (words of rare letter pairs), so that new merges
    are certain."""
    syllables = ["qz", "xv", "wq", "zj", "vk", "jx"]
    words = [a + b + c for a in syllables for b in syllables for c in syllables]
    return [" ".join(words[(i * 7 + k * 31) % len(words)] for k in range(6)) + "\n" for i in range(300)]


def oracle_merges(
    encode_word, words: dict[str, int], vocab: list[str], merges, size: int, specials, tie_break="first_seen"
):
    """The reference merge loop from each word as `encode_word` (the defining tool: tiktoken, HF) splits it."""
    vocab, merges = list(vocab), list(merges)
    splits = {w: encode_word(w) for w in words}
    reference.merge_loop(
        splits,
        words,
        vocab,
        merges,
        [],
        vocab_size=size,
        specials=set(specials) | {""},
        length=reference.token_lengths(vocab, merges, None),
        text_of=reference.token_texts(vocab, merges, "byte", None, None, set(specials) | {""}),
        tie_break=tie_break,
    )
    return merges


def byte_form(b: bytes) -> str:
    return "".join(reference.BYTE_TO_CHAR[x] for x in b)


@pytest.mark.parametrize("name", ["cl100k_base", "r50k_base"])
def test_extending_a_tiktoken_vocabulary(shared_data, tmp_path, name):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    pattern = {"cl100k_base": "cl100k", "r50k_base": "gpt2"}[name]
    specials = {
        "cl100k_base": {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258},
        "r50k_base": {"<|endoftext|>": 50256},
    }[name]
    path = shared_data / "tiktoken" / f"{name}.tiktoken"
    tok = Tokenizer.from_tiktoken(path, pattern=pattern, special_tokens=specials)
    corpus = new_corpus()
    size = tok.vocab_size + 12
    more = tok.extend(corpus, size)
    # Old ids stay, unused ids stay unused, special tokens keep theirs; new ids come after the largest.
    top = tok.vocab_size
    assert more.vocab_size == size
    for i in range(0, top, 97):
        assert more.id_to_token(i) == tok.id_to_token(i)
    if name == "cl100k_base":
        assert tok.id_to_token(100256) is None and more.id_to_token(100256) is None
        assert more.encode("<|fim_prefix|>", allowed_special="all") == [100258]
    assert all(more.id_to_token(i) for i in range(top, size))
    # The new merges are what the reference loop makes from tiktoken's own split of each word.
    ranks = load_tiktoken_bpe(str(path))
    enc = tiktoken.Encoding(name, pat_str=reference.PATTERNS[pattern], mergeable_ranks=ranks, special_tokens=specials)
    words = reference.word_frequencies(corpus, pattern, specials)
    vocab = [""] * top
    for b, r in ranks.items():
        vocab[r] = byte_form(b)
    for s, i in specials.items():
        vocab[i] = s
    decode = {r: byte_form(b) for b, r in ranks.items()}
    want = oracle_merges(
        lambda w: [decode[i] for i in enc.encode_ordinary(w)], words, vocab, tok.merges, size, specials
    )
    assert more.merges == want
    # Encoding: old text as before where no new merge applies; the new corpus shorter; round trips.
    english = "The quick brown fox jumps over the lazy dog."
    assert more.encode(english) == enc.encode_ordinary(english)
    assert len(more.encode(corpus[0])) < len(enc.encode_ordinary(corpus[0]))
    assert more.decode(more.encode(corpus[3])) == corpus[3]
    # Exports like any other tokenizer.
    more.save(tmp_path / "t.json")
    assert Tokenizer.load(tmp_path / "t.json") == more
    more.save_tiktoken(tmp_path / "t.tiktoken")
    again = tiktoken.Encoding(
        "x",
        pat_str=reference.PATTERNS[pattern],
        mergeable_ranks=load_tiktoken_bpe(str(tmp_path / "t.tiktoken")),
        special_tokens=specials,
    )
    for text in corpus[:20] + [english]:
        assert again.encode_ordinary(text) == more.encode_ordinary(text)


def test_extending_gpt2_files_and_a_hf_tokenizer_json(shared_data, tmp_path):
    import tokenizers

    gpt2 = Tokenizer.from_gpt2(shared_data / "gpt2" / "vocab.json", shared_data / "gpt2" / "merges.txt")
    hf_file = shared_data / "gpt2" / "tokenizer.json"
    from_hf = Tokenizer.from_hf(hf_file)
    corpus = new_corpus()
    a = gpt2.extend(corpus, 50257 + 10)
    b = from_hf.extend(corpus, 50257 + 10)
    assert a.merges == b.merges and a.vocab == b.vocab
    hf = tokenizers.Tokenizer.from_file(str(hf_file))
    words = reference.word_frequencies(corpus, "gpt2", ["<|endoftext|>"])
    inverse = {i: t for t, i in hf.get_vocab().items()}
    vocab = [inverse[i] for i in range(len(inverse))]
    want = oracle_merges(
        lambda w: [inverse[i] for i in hf.encode(w, add_special_tokens=False).ids],
        words,
        vocab,
        gpt2.merges,
        50267,
        ["<|endoftext|>"],
    )
    assert a.merges == want
    assert a.token_to_id("<|endoftext|>") == 50256 and a.id_to_token(50257) is not None
    a.save_hf(tmp_path / "tokenizer.json")
    again = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in corpus[:20] + ["Hello world, the end."]:
        assert again.encode(text, add_special_tokens=False).ids == a.encode(text)


def test_truncating_loaded_vocabularies_equals_their_tools(shared_data):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path = shared_data / "tiktoken" / "cl100k_base.tiktoken"
    tok = Tokenizer.from_tiktoken(path, pattern="cl100k", special_tokens={"<|endoftext|>": 100257})
    ranks = {b: r for b, r in load_tiktoken_bpe(str(path)).items() if r < 40_000}
    enc = tiktoken.Encoding(
        "small", pat_str=reference.PATTERNS["cl100k"], mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 100257}
    )
    cut = tok.truncate(40_000)
    assert cut.token_to_id("<|endoftext|>") == 100257
    assert cut.id_to_token(39_999) == tok.id_to_token(39_999) and cut.id_to_token(40_000) is None
    text = (shared_data / "text" / "tinyshakespeare" / "input.txt").read_text(encoding="utf-8")[:200_000]
    assert cut.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    with pytest.raises(ValueError, match="special tokens keep their ids"):
        tok.truncate(1000)
    gpt2 = Tokenizer.from_gpt2(shared_data / "gpt2" / "vocab.json", shared_data / "gpt2" / "merges.txt")
    small = gpt2.truncate(20_000)
    r50k = {
        b: r for b, r in load_tiktoken_bpe(str(shared_data / "tiktoken" / "r50k_base.tiktoken")).items() if r < 20_000
    }
    enc = tiktoken.Encoding("small2", pat_str=reference.PATTERNS["gpt2"], mergeable_ranks=r50k, special_tokens={})
    assert small.encode_ordinary(text) == enc.encode_ordinary(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert small.extend(new_corpus(), small.vocab_size + 5).vocab_size == small.vocab_size + 5
