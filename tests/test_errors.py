"""Bad input gets a clear Python exception — type, what was wrong, what to do — never a crash or a Rust
panic (PanicException)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import bytepair

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

CORPUS = ["hello world, hello there\n"] * 3


def test_vocab_size_below_the_base_vocabulary_names_the_minimum():
    with pytest.raises(ValueError, match=r"use vocab_size >= 257"):
        bytepair.train(CORPUS, 100, special_tokens=["<|endoftext|>"])
    with pytest.raises(ValueError, match=r"7 tokens \(2 special, 5 base symbols\); use vocab_size >= 7"):
        bytepair.train_from_counts({"hug": 1, "pun": 2}, 3, mode="char", unk_token="[UNK]", special_tokens=["<s>"])


@pytest.mark.parametrize("vocab_size", [0, -5])
def test_vocab_size_must_be_positive(vocab_size):
    with pytest.raises(ValueError, match="vocab_size must be positive"):
        bytepair.train(CORPUS, vocab_size)


@pytest.mark.parametrize("vocab_size", ["300", 300.0, None, True])
def test_vocab_size_must_be_an_int(vocab_size):
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        bytepair.train(CORPUS, vocab_size)


@pytest.mark.parametrize("corpus", [[], [""], iter([]), ["", ""]])
def test_empty_corpus(corpus):
    with pytest.raises(ValueError, match="the corpus is empty"):
        bytepair.train(corpus, 300)


def test_whitespace_only_corpus_with_the_whitespace_pattern():
    with pytest.raises(ValueError, match="the corpus is empty.*whitespace"):
        bytepair.train(["   \n\t "], 300, pattern="whitespace")


def test_empty_counts():
    with pytest.raises(ValueError, match="nothing to train on"):
        bytepair.train_from_counts({}, 300)
    with pytest.raises(ValueError, match="nothing to train on"):
        bytepair.train_from_counts({"a": 0}, 300)


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("mode", "bytes", "unknown mode 'bytes'"),
        ("pattern", "gpt3", "unknown pattern 'gpt3'"),
        ("pattern", "(unclosed", "not a valid regex"),
        ("pattern", "", "is empty"),
        ("tie_break", "random", "unknown tie_break 'random'"),
        ("initial_alphabet", "everything", "unknown initial_alphabet"),
        ("initial_alphabet", ["ab"], "single characters"),
        ("min_frequency", -1, "min_frequency must be an int >= 0"),
        ("max_token_length", 0, "max_token_length must be None or an int >= 1"),
        ("continuing_subword_prefix", "", "non-empty string"),
        ("unk_token", "", "non-empty string"),
        ("threads", 0, "threads must be None"),
        ("errors", "ignore", "errors='ignore' is not supported"),
    ],
)
def test_bad_options(option, value, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        bytepair.train(CORPUS, 300, **{option: value})


@pytest.mark.parametrize(
    "specials, error, message",
    [
        (["<s>", "<s>"], ValueError, r"lists \['<s>'\] more than once"),
        ("<s>", TypeError, "not a single string"),
        ([""], ValueError, "empty string"),
        ([1], TypeError, "special tokens must be str"),
    ],
)
def test_bad_special_tokens(specials, error, message):
    with pytest.raises(error, match=message):
        bytepair.train(CORPUS, 300, special_tokens=specials)


def test_unseen_character_in_char_mode_is_named_with_its_position():
    tok = bytepair.train(["hug pug"], 20, mode="char")
    with pytest.raises(ValueError) as info:
        tok.encode("hug mug")
    message = str(info.value)
    assert "'m'" in message and "U+006D" in message and "character 4" in message
    assert "unk_token" in message


def test_unseen_byte_with_corpus_alphabet_is_named():
    tok = bytepair.train(["abc abc"], 20, initial_alphabet="corpus")
    with pytest.raises(ValueError, match=r"byte 0x7A .*character 2.*initial_alphabet=\"all\""):
        tok.encode("abz")


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file.*missing.txt"):
        bytepair.train(str(tmp_path / "missing.txt"), 300)
    with pytest.raises(FileNotFoundError, match="no file matches"):
        bytepair.train(str(tmp_path / "*.nothing"), 300)
    with pytest.raises(IsADirectoryError, match="is a directory"):
        bytepair.train(tmp_path, 300)


def test_a_text_passed_where_a_path_is_expected_gets_a_hint():
    with pytest.raises(FileNotFoundError, match=r"pass it in a list: train\(\[text\]"):
        bytepair.train("just some text, not a file", 300)


def test_file_that_is_not_utf8_names_file_and_offset(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("good line\nçava\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.txt.* not valid UTF-8.* byte offset 10.*errors=\"replace\""):
        bytepair.train(path, 300)
    # errors="replace" trains on the text with U+FFFD in place of the bad byte, nothing else changed.
    replaced = path.read_bytes().decode("utf-8", errors="replace").splitlines(keepends=True)
    assert "\ufffd" in replaced[1]
    assert bytepair.train(path, 300, errors="replace") == bytepair.train(replaced, 300)


@pytest.mark.parametrize("item", [b"bytes", 3, None, ["nested", 3], [b"x"]])
def test_bad_corpus_items(item):
    with pytest.raises(TypeError, match="corpus item 1"):
        bytepair.train(["ok", item], 300)


def test_a_dataset_row_instead_of_its_column_says_what_to_pass():
    with pytest.raises(TypeError, match=r"pass field='text'"):
        bytepair.train([{"text": "hello", "id": 1}], 300)


def test_bytes_corpus():
    with pytest.raises(TypeError, match="not bytes"):
        bytepair.train(b"hello", 300)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "counts, error, message",
    [
        ({"a": -1}, ValueError, "counts must be >= 0"),
        ({"a": 1.5}, TypeError, "must be an int"),
        ({1: 2}, TypeError, "keys must be str"),
        ([("a", 1)], TypeError, "must be a mapping"),
        ({"a": 1 << 64}, ValueError, "64-bit"),
    ],
)
def test_bad_word_counts(counts, error, message):
    with pytest.raises(error, match=message):
        bytepair.train_from_counts(counts, 300)


def test_counts_beyond_32_bits_are_exact():
    big = 3_000_000_000  # HF tokenizers keeps pair counts in i32 and overflows here
    tok = bytepair.train_from_counts({"ab": big, "cd": big - 1}, 256 + 2, initial_alphabet="all")
    assert tok.trace == [(("a", "b"), big), (("c", "d"), big - 1)]


def test_special_tokens_in_text_need_permission():
    tok = bytepair.train(CORPUS, 280, special_tokens=["<|endoftext|>"])
    with pytest.raises(ValueError, match=r"allowed_special=\{'<\|endoftext\|>'\}.*disallowed_special=\(\)"):
        tok.encode("hi <|endoftext|>")
    assert tok.encode("hi <|endoftext|>", allowed_special="all")[-1] == 0
    assert tok.encode("hi <|endoftext|>", allowed_special={"<|endoftext|>"})[-1] == 0
    assert 0 not in tok.encode("hi <|endoftext|>", disallowed_special=())
    assert tok.encode_ordinary("hi <|endoftext|>") == tok.encode("hi <|endoftext|>", disallowed_special=())
    with pytest.raises(ValueError, match="not special tokens of this tokenizer"):
        tok.encode("hi", allowed_special={"<pad>"})
    with pytest.raises(TypeError, match="write allowed_special="):
        tok.encode("hi", allowed_special="<|endoftext|>")


def test_decode_bad_ids():
    tok = bytepair.train(CORPUS, 260)
    with pytest.raises(ValueError, match=r"id 260 \(at position 1\) is not in the vocabulary: valid ids are 0 to 259"):
        tok.decode([1, 260])
    with pytest.raises(ValueError, match=r"id -1 \(at position 0\)"):
        tok.decode([-1])
    with pytest.raises(TypeError, match="item 0 is str"):
        tok.decode(["a"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="errors='ignore' is not supported"):
        tok.decode([1], errors="ignore")  # type: ignore[arg-type]


def test_decode_of_a_cut_character():
    tok = bytepair.train(["é"], 256)
    ids = tok.encode("é")
    assert len(ids) == 2
    assert tok.decode(ids[:1]) == "\ufffd"
    assert tok.decode_bytes(ids[:1]) == "é".encode()[:1]
    with pytest.raises(UnicodeDecodeError):
        tok.decode(ids[:1], errors="strict")


def test_encode_type_errors():
    tok = bytepair.train(CORPUS, 280)
    with pytest.raises(TypeError, match="decode bytes first"):
        tok.encode(b"hello")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text must be a str"):
        tok.encode(None)  # type: ignore[arg-type]


def test_lone_surrogates_are_a_clear_error():
    tok = bytepair.train(CORPUS, 280)
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        tok.encode("a\ud800b")


def test_corpus_too_small_stops_early_with_a_warning():
    with pytest.warns(RuntimeWarning, match="the vocabulary has 258 tokens, not the 1000 asked for"):
        tok = bytepair.train(["ab ab"], 1000)
    assert tok.vocab_size == 258


def test_min_frequency_stops_training():
    tok = bytepair.train_from_counts({"ab": 5, "cd": 2}, 300, min_frequency=3)
    assert tok.merges == [("a", "b")]


def test_a_custom_pattern_that_matches_nothing_has_nothing_to_train_on_only_when_it_drops_the_rest():
    # (What becomes of unmatched text is tests/adversarial/test_unmatched.py's subject.)
    with pytest.raises(ValueError, match=r"the pattern '\\\\d' matched none of its text"):
        bytepair.train(["abc"], 300, pattern=r"\d", unmatched="drop")
    with pytest.raises(ValueError, match=r"the pattern '\\\\d' does not match 'abc' \(at character 0\)"):
        bytepair.train(["abc"], 300, pattern=r"\d", unmatched="error")
    assert bytepair.train(["abc"] * 3, 258, pattern=r"\d").tokenize("abc") == ["abc"]


def test_loaders_refuse_a_misspelt_pattern_name(shared_data):
    """Taken as a regex, "r50k" matches nothing: every text would encode to [] without a word."""
    for pattern in ("r50k", "gtp2", "GPT2"):
        with pytest.raises(ValueError, match=f"unknown pattern '{pattern}'.*misspelt name"):
            bytepair.Tokenizer.from_tiktoken(shared_data / "tiktoken" / "r50k_base.tiktoken", pattern=pattern)
        with pytest.raises(ValueError, match=f"unknown pattern '{pattern}'"):
            bytepair.Tokenizer.from_gpt2(
                shared_data / "gpt2" / "encoder.json", shared_data / "gpt2" / "vocab.bpe", pattern=pattern
            )
    with pytest.raises(ValueError, match="ids must be below 2\\*\\*31"):
        bytepair.Tokenizer.from_tiktoken(
            shared_data / "tiktoken" / "r50k_base.tiktoken", pattern="gpt2", special_tokens={"<|endoftext|>": 2**32 + 5}
        )


def test_unused_ids_have_no_token(shared_data):
    tok = bytepair.get_encoding("cl100k_base", shared_data)
    assert tok.id_to_token(100261) is None and tok.id_to_token(100257) == "<|endoftext|>"
    with pytest.raises(ValueError, match="id 100261 is unused"):
        tok.token_bytes(100261)
    assert tok.token_bytes(100257) == b"<|endoftext|>"


def test_any_number_of_threads_is_taken():
    tok = bytepair.train(["a b c"] * 3, 258)
    assert tok.encode_batch(["a b"], threads=2**70) == [tok.encode("a b")]
    assert tok.encode_to_numpy(["a b"], threads=2**70)[0].tolist() == tok.encode("a b")
    assert bytepair.train(["a b c"] * 3, 258, threads=2**70) == tok


def test_batch_and_bytes_errors_say_where(shared_data):
    tok = bytepair.get_encoding("gpt2", shared_data)
    with pytest.raises(
        ValueError,
        match=r"^texts\[2\]: the text contains the special token '<\|endoftext\|>' "
        r"\(at character 2\)",
    ):
        tok.encode_batch(["ok"] * 2 + ["x <|endoftext|>"] + ["fine"] * 300, threads=2)
    with pytest.raises(ValueError, match=r"^texts\[301\]: "):
        tok.encode_to_numpy(["fine"] * 301 + ["x <|endoftext|>"], threads=2)
    with pytest.raises(ValueError, match=r"^the text contains"):  # one text: no index
        tok.encode_batch(["x <|endoftext|>"])
    with pytest.raises(ValueError, match=r"\(at byte 20\)"):  # bytes: the offset in the bytes, not in characters
        tok.encode_bytes(b"\xc3\xa9" * 10 + b"<|endoftext|>")
    with pytest.raises(ValueError, match=r"\(at byte 8\)"):
        tok.encode_bytes(b"\xff\xfe" + b"\xc3\xa9" * 3 + b"<|endoftext|>")
    for not_ids in (b"ab", bytearray(b"ab"), "ab"):
        with pytest.raises(TypeError, match="ids must be a list of token ids"):
            tok.decode(not_ids)  # type: ignore[arg-type]


def test_sizes_beyond_the_cores_limits_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="vocab_size=18446744073709551616 is too large"):
        bytepair.train(["a b"], 2**64)
    with pytest.raises(ValueError, match="min_frequency=18446744073709551616 is too large"):
        bytepair.train(["a b"], 260, min_frequency=2**64)
    with pytest.raises(ValueError, match="the counts are too large"):
        bytepair.train_from_counts({"ab": 2**63}, 258)
    with pytest.raises(ValueError, match="the counts are too large"):
        bytepair.train_from_counts({"ab": 2**62, "abab": 2**62}, 258)
    (tmp_path / "vocab.json").write_text('{"model": 19849, "a": 0}', encoding="utf-8")
    with pytest.raises(ValueError, match="is a vocabulary .token -> id., not a tokenizer.json: .*from_gpt2"):
        bytepair.Tokenizer.from_hf(tmp_path / "vocab.json")


def test_a_missing_file_among_file_names_is_not_taken_for_text(tmp_path):
    """A list of str is read as files when all of them are; with one misspelt, it was trained on as text (the
    file names themselves), silently."""
    (tmp_path / "a.txt").write_text("hello world\n" * 10, encoding="utf-8")
    with pytest.raises(FileNotFoundError, match=r"no such file: '.*typo\.txt'; the list's other 1 item is a file"):
        bytepair.train([str(tmp_path / "a.txt"), str(tmp_path / "typo.txt")], 260)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bytepair.train([str(tmp_path / "a.txt"), "hello there"], 258)  # a text among them: all texts, as documented


def test_dna_stats_refuses_a_path_that_names_no_file():
    tok = bytepair.train_dna(["ACGTACGTTTACGTAC" * 20], 12)
    for path in ("/no/such/genome.fa", "reads.fq.gz", "x.fasta"):
        with pytest.raises(FileNotFoundError, match="no such FASTA/FASTQ file"):
            bytepair.dna_stats(tok, path)
    assert bytepair.dna_stats(tok, "ACGT.GT").bases == 7  # a sequence with a gap, not a file name


@pytest.mark.parametrize("special", ["¶", "Ġthe", "café", "<|é|>"])
def test_a_byte_level_special_token_that_reads_as_other_bytes_is_refused(special):
    # "¶" is how byte 0xB6 is shown, "Ġthe" the merge b" the": the special took that token's id, and ordinary
    # text ("schön", " the") encoded to the special and decoded to other text.
    with pytest.raises(ValueError, match=r"is also how the bytes b'.*' are shown .* printable ASCII"):
        bytepair.train(["the cat sat on the mat, schön"] * 20, 270, special_tokens=[special])


def test_byte_level_special_tokens_that_spell_their_own_bytes_are_kept():
    tok = bytepair.train(
        ["the cat sat on the mat, schön"] * 20, 270, special_tokens=["<|endoftext|>", "[UNK]", "▁x", "日本"]
    )
    for text in ["schön", "a cat sat on the mat", "<|endoftext|>"]:
        assert tok.decode(tok.encode_ordinary(text)) == text
        assert not set(tok.encode_ordinary(text)) & {0, 1, 2, 3}


def test_tiktoken_export_refuses_a_vocabulary_without_every_byte(tmp_path):
    # tiktoken has no unknown token: the Encoding made from such a vocabulary panicked on text with a missing byte
    # (pyo3's PanicException, which `except Exception` does not catch).
    tok = bytepair.train(["low lower lowest"] * 10, 270, initial_alphabet="corpus")
    with pytest.raises(
        ValueError,
        match=r"256 bytes.* none for 24[0-9] of them \(the first: b'\\x00'\).*"
        r"initial_alphabet=\"all\"",
    ):
        tok.save_tiktoken(tmp_path / "t.tiktoken")
    assert not (tmp_path / "t.tiktoken").exists()
    with pytest.raises(ValueError, match="256 bytes"):
        tok.to_tiktoken()


def test_numpy_outputs_without_numpy_are_an_import_error_not_a_panic():
    # numpy is no dependency of bytepair; the numpy crate panicked (a PanicException naming a capsule) when it could
    # not load numpy's C API, as in a fresh environment with only bytepair in it.
    code = """
import sys
sys.modules["numpy"] = None  # import numpy now fails, as where it is not installed
import bytepair
tok = bytepair.train(["low lower lowest"] * 5, vocab_size=259)
for call in (lambda: tok.encode_to_numpy("lower"), lambda: tok.encode_batch_to_numpy(["low", "lower"])):
    try:
        call()
    except ImportError as error:
        assert "pip install numpy" in str(error) and "encode_batch_packed" in str(error), error
    else:
        raise AssertionError("no ImportError")
assert tok.encode("lower") and tok.encode_batch_packed(["lower"])[1] == [len(tok.encode("lower"))]
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
