"""The encoding kernel at every instruction-set level this CPU has (the block pre-tokenizer's vector code, and
the portable path that `BYTEPAIR_SIMD=portable` forces), and the numpy outputs: ids equal tiktoken's on
adversarial, random and real text, at every level, through every output."""

from __future__ import annotations

import hashlib
import os
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _core
from conftest import examples

pytestmark = pytest.mark.shared_data

NAMES = ["r50k_base", "cl100k_base", "o200k_base"]
LEVELS = ["portable", "avx2", "avx512"]
# tiktoken's own pattern strings (r50k's differs in form from GPT-2's published one, not in effect).
TIKTOKEN_PATTERNS = {
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
}


@pytest.fixture(scope="module")
def encodings(shared_data):
    """name → (bytepair Tokenizer, tiktoken Encoding), offline from the shared rank files."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from bytepair import reference

    out = {}
    for name in NAMES:
        files, pattern, specials = bytepair.ENCODINGS[name]
        ranks = load_tiktoken_bpe(str(shared_data / "tiktoken" / files[0]))
        pat_str = TIKTOKEN_PATTERNS.get(pattern) or reference.PATTERNS[pattern]
        enc = tiktoken.Encoding(name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=specials)
        out[name] = (bytepair.get_encoding(name, shared_data), enc)
    return out


@pytest.fixture(scope="module")
def levels():
    """The levels this CPU has (asking for one it lacks gives the best below it), the level restored after."""
    before = _core.simd_level()
    have = []
    for level in LEVELS:
        if _core.set_simd_level(level) == level:
            have.append(level)
    yield have
    _core.set_simd_level(before)


def adversarial_texts() -> list[str]:
    """Texts built to cross the block scanner's 64-byte blocks in every way it treats apart."""
    rng = random.Random(26)
    units = [
        "a", "Z", " ", "  ", "\t", "\n", "\r\n", "\n\n\n", "'s", "'LL", "'Re", "'\u017f", "123", "4567", "!", "...",
        "/", "!\n/", "\u201c", "\u201d", "\u2014", "\u2019", "\u00a0", "\u3000", "\u00e9t\u00e9", "\u00c9T",
        "\u03b1\u03b2", "\u0663", "a\u0301", "\u4e2d\u6587", "\U0001f600", "HTMLParser", "don't", "x",
    ]  # fmt: skip
    texts = []
    for _ in range(400):
        parts: list[str] = []
        size = rng.randrange(0, 600)
        while sum(map(len, parts)) < size:
            unit = rng.choice(units)
            parts.append(unit * (rng.randrange(1, 90) if rng.random() < 0.15 else 1))
        texts.append("".join(parts))
    for run in (63, 64, 65, 127, 128, 129, 300):
        texts += [
            "x" + " " * run + "y",
            "x" + " " * (run // 2) + "\n" + " " * (run // 2) + "y",
            "x" + " " * run,
            "!" + "\n" * run + "a",
            "a" + "7" * run + "b",
            "a" + "'s" * run,
            "\u201c" * run + "a",
            "A" * run + "bC",
        ]
    return texts


def test_simd_level_names_and_refusals():
    assert _core.simd_level() in LEVELS
    with pytest.raises(ValueError, match="unknown SIMD level"):
        _core.set_simd_level("sse9")


@pytest.mark.parametrize("name", NAMES)
def test_every_level_gives_tiktokens_ids_on_adversarial_text(encodings, levels, name):
    tok, enc = encodings[name]
    texts = adversarial_texts()
    expected = [enc.encode_ordinary(t) for t in texts]
    for level in levels:
        _core.set_simd_level(level)
        assert tok.encode_batch(texts, disallowed_special=(), threads=1) == expected, level
        ids, offsets = tok.encode_batch_to_numpy(texts, disallowed_special=(), threads=2)
        assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == expected, level
        joined = "".join(texts)
        assert tok.encode_to_numpy(joined, disallowed_special=()).tolist() == enc.encode_ordinary(joined), level


@pytest.mark.parametrize("name", NAMES)
def test_every_level_gives_tiktokens_ids_on_shared_text(encodings, levels, shared_data, name):
    tok, enc = encodings[name]
    texts = [p.read_bytes().decode("utf-8")[:60_000] for p in sorted((shared_data / "multilingual").rglob("*.txt"))]
    texts.append((shared_data / "text/tinyshakespeare/input.txt").read_text(encoding="utf-8")[:200_000])
    texts.append(Path(bytepair.__file__).read_text(encoding="utf-8"))
    expected = [enc.encode_ordinary(t) for t in texts]
    for level in levels:
        _core.set_simd_level(level)
        assert [tok.encode_to_numpy(t).tolist() for t in texts] == expected, level


@pytest.mark.parametrize("name", NAMES)
def test_a_long_text_read_in_windows_gives_tiktokens_ids(encodings, shared_data, name):
    # Past 512 K characters a str that is not ASCII is transcoded a window at a time and encoded up to the last
    # place each window may be cut: every script of the multilingual files, and UCS-4 text (an emoji in it).
    tok, enc = encodings[name]
    files = sorted((shared_data / "multilingual").rglob("*.txt"))
    text = "\n".join(p.read_bytes().decode("utf-8")[:150_000] for p in files) + " 🙂"
    assert len(text) > 600_000
    expected = enc.encode_ordinary(text)
    assert tok.encode_to_numpy(text, disallowed_special=()).tolist() == expected
    assert tok.encode(text, disallowed_special=()) == expected


@settings(max_examples=examples(150), deadline=None)
@given(
    text=st.lists(
        st.sampled_from(
            ["a", "B", " ", "\n", "\r\n", "'s", "'T", "12", "\u201c", "\u00a0", "\u00e9", "\u4e2d", "!", "/"]
        ),
        max_size=200,
    ).map("".join)
)
def test_random_text_is_the_same_at_every_level(encodings, levels, text):
    for name in NAMES:
        tok, enc = encodings[name]
        expected = enc.encode_ordinary(text)
        for level in levels:
            _core.set_simd_level(level)
            assert tok.encode_ordinary(text) == expected, (name, level)


def test_the_environment_variable_forces_the_portable_path(shared_data):
    """`BYTEPAIR_SIMD=portable` in a fresh process: the level reads portable, and the ids are those of the
    default level (a digest of the ids of adversarial text under each encoding)."""
    script = (
        "import hashlib, sys, bytepair; from bytepair import _core; sys.path.insert(0, 'tests');"
        "from test_kernel import adversarial_texts;"
        f"tok = [bytepair.get_encoding(n, {str(shared_data)!r}) for n in {NAMES!r}];"
        "h = hashlib.sha256(repr([t.encode_batch(adversarial_texts(), disallowed_special=()) for t in tok]).encode());"
        "print(_core.simd_level(), h.hexdigest())"
    )
    root = Path(__file__).resolve().parent.parent
    runs = {}
    for level in ("portable", None):
        env = dict(os.environ)
        env.pop("BYTEPAIR_SIMD", None)
        if level:
            env["BYTEPAIR_SIMD"] = level
        out = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        runs[level] = out.stdout.split()
    assert runs["portable"][0] == "portable"
    assert runs["portable"][1] == runs[None][1]


def test_encode_to_numpy_is_encode_as_an_owned_uint32_array(encodings):
    import numpy as np

    tok, enc = encodings["r50k_base"]
    text = "The fast path: one text, the default special-token rules.\n" * 40
    ids = tok.encode_to_numpy(text)
    assert ids.dtype == np.uint32 and ids.tolist() == tok.encode(text) == enc.encode(text)
    ids[0] = 5  # writable, the caller's own
    assert tok.encode_to_numpy(text)[0] != 5
    assert tok.encode_to_numpy("").tolist() == []
    with pytest.raises(ValueError, match="special token"):
        tok.encode_to_numpy("a <|endoftext|>")
    assert tok.encode_to_numpy("a <|endoftext|>", allowed_special="all").tolist()[-1] == 50256
    big = "word " * 20_000  # past the size encoded with the GIL released
    assert tok.encode_to_numpy(big).tolist() == enc.encode(big)


def test_short_texts_arrays_are_their_own_whatever_the_thread_encoded_before(encodings):
    # A short text is encoded into a vector its thread keeps and copied into the array (numpy_out.rs): every
    # array keeps its ids after later calls (longer, shorter, failing, past the scratch's kept room, a small
    # batch's copied array) and on other threads at once.
    import threading

    tok, enc = encodings["cl100k_base"]
    rng = random.Random(7)
    astral = "".join(chr(rng.randrange(0x1F300, 0x1FAFF)) for _ in range(50_000))  # ~3 ids a character
    below, past = "word " * 26_214 + "a", "word " * 26_215  # 2^17 characters: copied below, handed over past
    texts = ["naïve 🎉 " * 300, "x", "", below, past, astral, "the end", "12 34", "naïve 🎉 " * 20_000]
    kept = []  # (expected ids, array)
    for text in texts:
        kept.append((enc.encode(text), tok.encode_to_numpy(text)))
        with pytest.raises(ValueError, match="special token"):
            tok.encode_to_numpy("half written " * 100 + "<|endoftext|>")
        flat, _ = tok.encode_batch_to_numpy([text[:50], "y"], threads=1)
        kept.append((enc.encode(text[:50]) + enc.encode("y"), flat))
    assert len(below) < 2**17 <= len(past) and len(kept[10][1]) > 2**17  # the astral text: past the room kept
    kept[0][1][:] = 0
    assert all(ids.tolist() == expected for expected, ids in kept[1:])

    results: dict[int, bool] = {}

    def encode_many(k: int) -> None:
        mine = [texts[(k + i) % len(texts)] * (1 + i % 3) for i in range(40)]
        arrays = [tok.encode_to_numpy(t) for t in mine]
        results[k] = all(a.tolist() == enc.encode(t) for t, a in zip(mine, arrays))

    threads = [threading.Thread(target=encode_many, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: True, 1: True, 2: True}


def test_pieces_met_lately_give_tiktokens_ids_whichever_encoding_met_them(encodings, levels, shared_data):
    # Short pieces that are no token come back from the block loop's recent pieces (caches.rs, `Recent`): r50k's
    # indentation (one id per space, eight ids for 8 bytes; p50k has tokens for runs of spaces), pieces that
    # differ only by a trailing NUL or by length, pieces sharing a slot, at a block's end and a text's. Five
    # encodings alternate on one thread, more than it keeps caches for (4): each takes over the caches another
    # used last, which must start empty. And under every level.
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(shared_data / "tiktoken" / "p50k_base.tiktoken"))
    p50k = tiktoken.Encoding("p50k", pat_str=TIKTOKEN_PATTERNS["gpt2"], mergeable_ranks=ranks, special_tokens={})
    pairs = [encodings[name] for name in NAMES] + [(bytepair.get_encoding("p50k_base", shared_data), p50k)]
    r50k_again = bytepair.Tokenizer.from_tiktoken(shared_data / "tiktoken" / "r50k_base.tiktoken", pattern="gpt2")
    pairs.append((r50k_again, pairs[0][1]))  # a fifth encoder
    rng = random.Random(11)
    words = ["\n       ", "\n   ", "\n\n   ", "\t\t\t", "Holmes", "zqxj", "zqxj\0", "zq\0", "zqx", "a\0\0b"]
    words += ["".join(rng.choice("qxzjvkw") for _ in range(rng.randrange(3, 9))) for _ in range(600)]
    texts = [
        "".join(rng.choice(words) + rng.choice([" ", ".", "\n", "", "  "]) for _ in range(n))
        for n in (3, 50, 2_000, 20_000)
    ]
    texts.append(("def f(x):\n        return x\n" * 400) + "\n       ")
    before = _core.simd_level()
    try:
        for level in levels:
            _core.set_simd_level(level)
            for text in texts:
                for tok, enc in pairs:
                    assert tok.encode_to_numpy(text).tolist() == enc.encode_ordinary(text), (level, enc.name)
    finally:
        _core.set_simd_level(before)


@pytest.mark.parametrize("name", NAMES)
def test_new_words_with_one_character_beyond_ascii_give_tiktokens_ids(encodings, name):
    # Short pieces of ASCII and one other character (a curly quote or a dash before a word, an accented letter)
    # merge by the whole-token table (piece.rs, `MOST_NON_ASCII`), the byte spans of that character among them;
    # with two such characters they go to the backtracker. Random words, so that none was met before.
    tok, enc = encodings[name]
    rng = random.Random(name)
    others = ["“", "”", "’", "—", "é", "ü", "ß", "ñ", "中", "€", "…"]

    def word() -> str:
        letters = [rng.choice(string.ascii_letters) for _ in range(rng.randrange(1, 12))]
        for _ in range(rng.choice([1, 1, 1, 2])):
            letters.insert(rng.randrange(len(letters) + 1), rng.choice(others))
        return "".join(letters)

    text = " ".join(word() for _ in range(30_000))
    assert tok.encode_to_numpy(text).tolist() == enc.encode_ordinary(text)
    docs = [" ".join(word() for _ in range(200)) for _ in range(50)]
    assert tok.encode_batch(docs, threads=2) == [enc.encode_ordinary(d) for d in docs]


@pytest.mark.parametrize("name", NAMES)
def test_base64_and_hex_among_words_give_tiktokens_ids(encodings, name):
    # Pieces merged one close after another with long ones among them (base64, hex): a short one first reads the
    # filter of the short tokens (whole.rs), and the pieces of three letters that are tokens (a sixth of base64's
    # with cl100k) must get through it to be taken whole; the others are merged by the whole-token table, the
    # long ones by the backtracker. Words between end the dense runs.
    import base64

    tok, enc = encodings[name]
    rng = random.Random(name + "64")
    words = ["the", "cat", "and", "Sat", "on", "mat", "API", "key:", "token", "=", "\n"]
    parts = []
    for _ in range(200):
        parts.append(base64.b64encode(rng.randbytes(rng.randrange(50, 3000))).decode())
        parts.append(rng.randbytes(rng.randrange(8, 200)).hex())
        parts.append(" ".join(rng.choices(words, k=rng.randrange(1, 6))))
    for sep in (" ", "\n", ""):
        text = sep.join(parts)
        assert tok.encode_to_numpy(text).tolist() == enc.encode_ordinary(text), repr(sep)
    assert tok.encode_batch(parts, threads=2) == [enc.encode_ordinary(p) for p in parts]


@pytest.mark.parametrize("name", NAMES)
def test_long_pieces_merged_close_together_give_tiktokens_ids(encodings, name):
    # Among pieces merged close together (base64), mostly-ASCII pieces of 17 to 32 bytes are merged by the
    # whole-token table rather than the backtracker (piece.rs, DENSE_LONG_MOST), their spans of more than 16 bytes
    # looked up among the long tokens: long tokens of letters with a few letters added make such spans.
    import base64

    tok, enc = encodings[name]
    tokens = enc.token_byte_values()
    long_tokens = [t.decode() for t in tokens if 17 <= len(t) <= 30 and t.isascii() and t.strip().isalpha()]
    assert long_tokens, "the vocabulary has long tokens of letters"
    rng = random.Random(name + "long")
    parts = []
    for _ in range(300):
        parts.append(base64.b64encode(rng.randbytes(rng.randrange(30, 400))).decode())
        word = rng.choice(long_tokens).strip()
        extra = "".join(rng.choices(string.ascii_letters, k=rng.randrange(1, 32 - len(word) + 2)))
        parts.append(rng.choice(["+", "/", "7", ""]) + (extra + word if rng.random() < 0.5 else word + extra))
    text = "".join(parts)
    assert tok.encode_to_numpy(text).tolist() == enc.encode_ordinary(text)
    docs = ["".join(parts[i : i + 20]) for i in range(0, len(parts), 20)]
    assert tok.encode_batch(docs, threads=2) == [enc.encode_ordinary(d) for d in docs]


def test_long_texts_with_many_ids_per_byte_give_tiktokens_ids_as_arrays(encodings):
    # Texts from 256 KB get room for an id per byte, handed over with the unused room given back (id_room.rs):
    # random digits and base64 need more than the third reserved before, UCS-2 comes in windows.
    import numpy as np

    tok, enc = encodings["r50k_base"]
    rng = random.Random(26)
    digits = "".join(rng.choices(string.digits, k=300_000))
    base64ish = "".join(rng.choices(string.ascii_letters + string.digits + "+/", k=1_100_000))
    curly = ("“Quoted,” she said — " + "".join(rng.choices(string.ascii_lowercase + " ", k=97))) * 6_000
    for text in (digits, base64ish, curly, digits[:1000]):
        ids = tok.encode_to_numpy(text)
        assert ids.dtype == np.uint32 and ids.flags.writeable
        assert ids.tolist() == enc.encode(text)
        ids[-1] = 0
    flat, offsets = tok.encode_batch_to_numpy([digits, base64ish, curly], threads=1)
    assert flat.tolist() == enc.encode(digits) + enc.encode(base64ish) + enc.encode(curly)
    assert offsets.tolist()[1] == len(enc.encode(digits))
    with pytest.raises(ValueError, match="special token"):  # an error ends one before its ids are all written
        tok.encode_to_numpy(base64ish + "<|endoftext|>")
    assert tok.encode_to_numpy(base64ish).tolist() == enc.encode(base64ish)


@pytest.mark.parametrize(
    ("alphabet", "long_len"),
    [(string.digits, 1_000_000), (string.ascii_letters, 1_480_000)],
    ids=["digits", "letters"],
)
def test_pieces_long_enough_to_answer_whole_rows_of_pairs_give_tiktokens_ids(
    encodings, shared_data, alphabet, long_len
):
    # A number or a run of letters of at least as many bytes as GPT-2 has pairs of its tokens of that class (994
    # digit tokens: ≈ 1 M pairs; 1 215 tokens of one or two letters: ≈ 1.48 M) answers a left token's whole row
    # of pair checks at its first (backtrack.rs, `fill_row`); shorter ones walk each pair as they ask for it. On
    # a fresh tokenizer: short pieces first, then two long ones in a 2-thread batch (one thread answers a row
    # while the other walks its own pair), then another alone.
    _, enc = encodings["r50k_base"]
    tok = bytepair.get_encoding("r50k_base", shared_data)
    rng = random.Random(994)
    short = " ".join("".join(rng.choices(alphabet, k=rng.randint(1, 40))) for _ in range(5_000))
    longs = ["".join(rng.choices(alphabet, k=long_len + k)) for k in range(3)]
    assert tok.encode_to_numpy(short).tolist() == enc.encode_ordinary(short)
    ids, offsets = tok.encode_batch_to_numpy(longs[:2], threads=2)
    for k in range(2):
        assert ids[offsets[k] : offsets[k + 1]].tolist() == enc.encode_ordinary(longs[k])
    assert tok.encode_to_numpy(longs[2]).tolist() == enc.encode_ordinary(longs[2])


def test_encode_to_numpy_of_one_text_takes_every_option(encodings):
    # Any special-token rule or dtype for one text goes straight to the core too (not through the batch path).
    import numpy as np

    tok, enc = encodings["r50k_base"]
    text = "a <|endoftext|> b naïve 🎉\n" * 50
    ids = tok.encode_to_numpy(text, disallowed_special=())
    assert ids.dtype == np.uint32 and ids.tolist() == enc.encode(text, disallowed_special=())
    special = tok.encode_to_numpy(text, allowed_special={"<|endoftext|>"}, dtype="uint16", threads=2)
    assert special.dtype == np.uint16 and special.tolist() == enc.encode(text, allowed_special="all")
    assert tok.encode_to_numpy(text, dtype=np.dtype("uint32"), disallowed_special=()).tolist() == ids.tolist()
    with pytest.raises(ValueError, match=r"^the text contains the special token"):  # no "texts[0]:"
        tok.encode_to_numpy(text, disallowed_special="all", dtype="uint16")
    with pytest.raises(ValueError, match="not special tokens of this tokenizer"):
        tok.encode_to_numpy(text, allowed_special={"<|nope|>"})
    with pytest.raises(ValueError, match="threads must be"):
        tok.encode_to_numpy(text, disallowed_special=(), threads=0)


@pytest.mark.parametrize("threads", [2, None])
def test_small_batches_fail_and_succeed_as_large_ones(encodings, threads):
    # Small batches are encoded on the calling thread alone: same ids, same first error in text order.
    tok, enc = encodings["cl100k_base"]
    texts = ["x", "naïve 🎉", "y <|endoftext|>", "z <|endoftext|>"]
    for call in (tok.encode_batch, tok.encode_batch_packed, tok.encode_batch_to_numpy):
        with pytest.raises(ValueError, match=r"^texts\[2\]: .*special token"):
            call(texts, threads=threads)
    assert tok.encode_batch(texts, disallowed_special=(), threads=threads) == [
        enc.encode(t, disallowed_special=()) for t in texts
    ]
    packed, lengths = tok.encode_batch_packed(texts[:2], threads=threads)
    assert lengths == [len(enc.encode(t)) for t in texts[:2]] and len(packed) == 4 * sum(lengths)


@pytest.mark.parametrize("threads", [1, 2, None])
def test_encode_batch_to_numpy_gives_flat_ids_and_offsets(encodings, threads):
    import numpy as np

    tok, enc = encodings["cl100k_base"]
    rng = random.Random(threads or 0)
    texts = ["", "x", "Hello world"] + [
        " ".join(rng.choice(["the", "naïve", "12345", "🎉", "\n", "don't"]) for _ in range(rng.randrange(0, 3000)))
        for _ in range(300)
    ]
    ids, offsets = tok.encode_batch_to_numpy(texts, threads=threads)
    assert ids.dtype == np.uint32 and offsets.dtype == np.int64 and len(offsets) == len(texts) + 1
    assert offsets[0] == 0 and offsets[-1] == len(ids) and (np.diff(offsets) >= 0).all()
    assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == [enc.encode(t) for t in texts]
    empty_ids, empty_offsets = tok.encode_batch_to_numpy([], threads=threads)
    assert empty_ids.tolist() == [] and empty_offsets.tolist() == [0]


def test_batches_after_batches_of_longer_transcoded_texts_give_their_own_ids(encodings):
    # Each thread keeps its transcoding buffer from one batch to the next: a batch of short texts beyond ASCII
    # after one of long ones (the buffer longer than it needs) must read only its own texts, in every path.
    tok, enc = encodings["cl100k_base"]
    rng = random.Random(7)
    words = ["naïve", "Grüße", "日本語", "🎉", "the", "\n", "ĳ"]
    long_texts = [" ".join(rng.choices(words, k=20_000)) for _ in range(40)]
    short_texts = [" ".join(rng.choices(words, k=rng.randrange(1, 40))) for _ in range(4000)]
    for threads in (1, 2):
        for texts in (long_texts, short_texts, long_texts[:3] + short_texts[:500]):
            expected = enc.encode_ordinary_batch(texts)
            ids, offsets = tok.encode_batch_to_numpy(texts, threads=threads)
            assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == expected
            assert tok.encode_batch(texts, threads=threads) == expected


def test_encode_batch_to_numpy_errors_name_the_text(encodings):
    tok, _ = encodings["r50k_base"]
    texts = ["fine " * 1000] * 300 + ["x <|endoftext|>"] + ["fine"] * 10
    for threads in (1, 2):
        with pytest.raises(ValueError, match=r"texts\[300\]: .*special token"):
            tok.encode_batch_to_numpy(texts, threads=threads)
    with pytest.raises(TypeError, match=r"texts\[1\] is a bytes"):
        tok.encode_batch_to_numpy(["a", b"b"])
    with pytest.raises(ValueError, match="threads must be"):
        tok.encode_batch_to_numpy(["a"], threads="2")
    _, offsets = tok.encode_batch_to_numpy(texts, disallowed_special=(), threads=2)
    assert len(offsets) == len(texts) + 1


def test_encode_batch_to_numpy_places_chunks_that_finish_out_of_order(encodings):
    # Chunks are taken in text order and placed as soon as those before them are: slow chunks first (random
    # letters, base64: every piece merged) let later ones finish before them and wait.
    import base64

    tok, enc = encodings["o200k_base"]
    rng = random.Random(26)
    slow = ["".join(rng.choices(string.ascii_letters, k=150_000)), base64.b64encode(rng.randbytes(150_000)).decode()]
    fast = [f"document {i}: " + "the cat sat. " * (i % 300) for i in range(3000)]
    for texts in (slow + fast, fast[:1500] + slow + fast[1500:]):
        ids, offsets = tok.encode_batch_to_numpy(texts, threads=2)
        assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == enc.encode_ordinary_batch(
            texts
        )


def test_encode_batch_to_numpy_reports_the_first_error_in_text_order(encodings):
    tok, _ = encodings["r50k_base"]
    texts = ["fine " * 1000] * 400
    texts[50] = "a <|endoftext|>"
    texts[380] = "b <|endoftext|>"
    for _ in range(5):
        with pytest.raises(ValueError, match=r"texts\[50\]: .*special token"):
            tok.encode_batch_to_numpy(texts, threads=2)


def test_encode_batch_to_numpy_digest_is_the_same_every_run(encodings):
    """Chunks are encoded in parallel and joined: the result never depends on which thread finished first."""
    tok, _ = encodings["o200k_base"]
    texts = [f"document {i}: " + "word " * (i % 97) for i in range(5000)]
    digests = set()
    for _ in range(3):
        ids, offsets = tok.encode_batch_to_numpy(texts, threads=2)
        digests.add(hashlib.sha256(ids.tobytes() + offsets.tobytes()).hexdigest())
    assert len(digests) == 1


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads resident memory from /proc")
def test_release_memory_gives_freed_memory_back():
    # In a fresh process: mimalloc keeps what the encoding threads freed until they allocate again; asked, it
    # goes back to the OS (and nothing in use is touched: the tokenizer still encodes).
    script = """
import gc, os, bytepair
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
bytepair.release_memory()  # no pool yet: nothing to do, no error
tok = bytepair.train(["the cat sat on the mat, said the dog"] * 50, vocab_size=270)
docs = [" ".join(f"w{i * 7919 % 100003} {j}" for j in range(400)) for i in range(4000)]
ids, offsets = tok.encode_batch_to_numpy(docs, threads=2)
del ids, offsets
gc.collect()
held = rss()
bytepair.release_memory()
print(held - rss(), tok.encode("the cat") == tok.encode_to_numpy("the cat").tolist())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    released, still_encodes = out.stdout.split()
    assert float(released) > 5 and still_encodes == "True", out.stdout


def test_the_ints_of_lists_are_made_on_first_use_and_outlive_their_tokenizer(shared_data):
    # A freshly loaded tokenizer has made no int for any id: lists asked for by several threads at once make
    # them (the first one made for an id is kept), and a list keeps its ints after the tokenizer is gone.
    import gc
    import threading
    import weakref

    tok = bytepair.get_encoding("o200k_base", shared_data)
    text = "A fresh tokenizer's first lists, 1234567. " * 40 + "".join(chr(0x4E00 + 37 * i) for i in range(400))
    expected = tok.encode_to_numpy(text).tolist()
    results: list[list[int]] = []
    threads = [threading.Thread(target=lambda t: results.append(t.encode(text)), args=(tok,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    batch = tok.encode_batch([text, text[::-1]], threads=2)
    reversed_ids = tok.encode_to_numpy(text[::-1]).tolist()
    gone = weakref.ref(tok)
    del tok, threads
    gc.collect()
    assert gone() is None
    assert len(results) == 4 and all(ids == expected for ids in results)
    assert batch == [expected, reversed_ids]
    assert {type(i) for i in results[0]} == {int} and max(results[0]) > 100_000


def test_threads_sharing_a_tokenizers_seen_table_give_tiktokens_ids(encodings):
    # Words that are no token, each met three times close together: ~150 000 of them grow the table of pieces
    # met before — one per tokenizer, read and filled by every thread that encodes with it — through all its
    # sizes while four Python threads (their texts encoded with the GIL released) and a 2-thread batch use it.
    import threading

    tok, enc = encodings["r50k_base"]
    rng = random.Random(53)
    words = sorted({"".join(rng.choices(string.ascii_lowercase, k=rng.randint(6, 12))) for _ in range(150_000)})
    rng.shuffle(words)
    sequence = []
    for start in range(0, len(words), 1000):
        block = words[start : start + 1000] * 3
        rng.shuffle(block)
        sequence += block
    size = len(sequence) // 8 + 1
    parts = [" ".join(sequence[i * size : (i + 1) * size]) for i in range(8)]
    expected = [enc.encode_ordinary(part) for part in parts]
    results: dict[int, list[int]] = {}

    def encode(i: int) -> None:
        results[i] = tok.encode_to_numpy(parts[i]).tolist()

    threads = [threading.Thread(target=encode, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    ids, offsets = tok.encode_batch_to_numpy(parts[4:], threads=2)
    for thread in threads:
        thread.join()
    assert [results[i] == expected[i] for i in range(4)] == [True] * 4
    assert [ids[offsets[k] : offsets[k + 1]].tolist() == expected[4 + k] for k in range(4)] == [True] * 4
