"""bytepair's own `pattern=` regex and the text it does not match: kept as pieces (the default), dropped, or refused
— an explicit choice stored in the tokenizer and its files, never text lost without asking (issue 23, item 1)."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference
from bytepair.describe import describe
from bytepair.training import count_words
from conftest import examples

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

CORPUS = ["line one 12\nline two, three!\n", "Hello World 42"] * 10
PATTERN = r"[a-z]+"


def test_by_default_text_the_pattern_does_not_match_is_kept():
    tok = bytepair.train(CORPUS, 280, pattern=PATTERN)
    assert tok.settings["unmatched"] == "keep"
    text = "Hello World, 42 times\n"
    assert tok.decode(tok.encode(text)) == text
    # The pieces are the matches and the stretches between them; training counted the same pieces.
    assert "".join(tok.tokenize(text)).replace("Ġ", " ").replace("Ċ", "\n") == text
    assert reference.pre_tokenize(text, PATTERN) == ["H", "ello", " W", "orld", ", 42 ", "times", "\n"]
    assert "unmatched     keep (text the regex does not match)" in str(describe(tok))


def test_drop_leaves_it_out_as_tiktoken_does():
    tok = bytepair.train(CORPUS, 280, pattern=PATTERN, unmatched="drop")
    assert tok.settings["unmatched"] == "drop"
    assert tok.decode(tok.encode("Hello World, 42 times")) == "elloorldtimes"


def test_error_refuses_it_naming_the_text_and_where():
    tok = bytepair.train(["abc def"] * 5, 260, pattern=r"[a-z]+|\s+", unmatched="error")
    assert tok.decode(tok.encode("abc  def")) == "abc  def"
    with pytest.raises(ValueError, match=r"the pattern '\[a-z\]\+\|\\\\s\+' does not match '42' \(at character 4\)"):
        tok.encode("abc 42 def")
    with pytest.raises(ValueError, match='unmatched="error" refuses'):
        bytepair.train(["abc 42"], 260, pattern=r"[a-z]+|\s+", unmatched="error")


def test_the_choice_is_checked_and_only_for_regexes():
    with pytest.raises(ValueError, match=r"unmatched='skip' is not a choice: use \"keep\""):
        bytepair.train(CORPUS, 270, pattern=PATTERN, unmatched="skip")  # type: ignore[call-overload]
    for pattern in ("gpt2", "whitespace", None):
        with pytest.raises(ValueError, match=f"applies to a regex pattern; pattern={pattern!r} decides for itself"):
            bytepair.train(CORPUS, 270, pattern=pattern, unmatched="keep")
        assert bytepair.train(CORPUS, 270, pattern=pattern).settings["unmatched"] is None


@pytest.mark.parametrize("unmatched", ["keep", "drop", "error"])
def test_the_choice_survives_save_pickle_and_save_hf(tmp_path, unmatched):
    import tokenizers

    tok = bytepair.train(["abc def  gh"] * 5, 262, pattern=r"[a-z]+|\s+", unmatched=unmatched)
    tok.save(tmp_path / "t.json")
    assert json.loads((tmp_path / "t.json").read_text())["unmatched"] == unmatched
    for again in (bytepair.Tokenizer.load(tmp_path / "t.json"), pickle.loads(pickle.dumps(tok))):
        assert again.settings["unmatched"] == unmatched and again == tok
    tok.save_hf(tmp_path / "hf.json")
    back = bytepair.Tokenizer.from_hf(tmp_path / "hf.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "hf.json"))
    # HF has no "error": the exported file keeps the text (Isolated), which is what the tokenizer gives whenever
    # it does not refuse.
    assert back.settings["unmatched"] == ("drop" if unmatched == "drop" else "keep")
    text = "abc  gh def"
    assert back.encode(text) == hf.encode(text, add_special_tokens=False).ids == tok.encode(text)


def test_tiktoken_gets_a_pattern_that_keeps_what_the_tokenizer_keeps():
    pytest.importorskip("tiktoken")
    text = "Hello World, 42 times\n  and  more!"
    for unmatched in ("keep", "drop"):
        tok = bytepair.train(CORPUS, 280, pattern=PATTERN, unmatched=unmatched)
        assert tok.to_tiktoken().encode(text) == tok.encode(text), unmatched
    empty = bytepair.train(CORPUS, 280, pattern=r"[a-z]*")
    with pytest.raises(ValueError, match=r"the pattern '\[a-z\]\*' can match the empty string"):
        empty.to_tiktoken()
    assert bytepair.train(CORPUS, 280, pattern=r"[a-z]*", unmatched="drop").to_tiktoken().encode("ab cd") == (
        bytepair.train(CORPUS, 280, pattern=r"[a-z]*", unmatched="drop").encode("ab cd")
    )


def test_files_written_before_the_setting_load_as_they_were_made(tmp_path):
    """A file without "unmatched" was trained dropping the text its regex did not match: it loads so."""
    tok = bytepair.train(CORPUS, 270, pattern=PATTERN, unmatched="drop")
    document = json.loads(tok.core.to_native())
    del document["unmatched"]
    (tmp_path / "old.json").write_text(json.dumps(document), encoding="utf-8")
    old = bytepair.Tokenizer.load(tmp_path / "old.json")
    assert old.settings["unmatched"] == "drop" and old.encode("Hello, World") == tok.encode("Hello, World")
    document["unmatched"] = "keep"
    document["pattern"] = "gpt2"
    (tmp_path / "bad.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ValueError, match='"unmatched" applies to a "pattern" that is'):
        bytepair.Tokenizer.load(tmp_path / "bad.json")


def test_save_hf_refuses_a_regex_oniguruma_would_read_differently(tmp_path):
    tok = bytepair.train(CORPUS, 270, pattern=r"\w+|\s+|.")
    with pytest.raises(
        ValueError, match=r"save_hf cannot write the pattern .*reads it differently \('\\w' \(Oniguruma's"
    ):
        tok.save_hf(tmp_path / "t.json")
    assert not (tmp_path / "t.json").exists()


def test_loaders_of_other_formats_take_the_choice_too(shared_data):
    path = shared_data / "tiktoken" / "r50k_base.tiktoken"
    dropping = bytepair.Tokenizer.from_tiktoken(path, pattern=r"[a-z]+", unmatched="drop")
    keeping = bytepair.Tokenizer.from_tiktoken(path, pattern=r"[a-z]+")
    assert dropping.decode(dropping.encode("abc DEF")) == "abc"
    assert keeping.decode(keeping.encode("abc DEF")) == "abc DEF"
    gpt2 = bytepair.Tokenizer.from_gpt2(
        shared_data / "gpt2" / "vocab.json", shared_data / "gpt2" / "merges.txt", pattern=r"\d+", unmatched="error"
    )
    with pytest.raises(ValueError, match="does not match 'abc'"):
        gpt2.encode("12abc")


@settings(max_examples=examples(40), deadline=None)
@given(text=st.text(st.sampled_from(list("ab AB12,.\n")), max_size=30))
def test_training_counts_the_pieces_encoding_makes(text):
    """The words counted are the reference's pieces (matches and what lies between them), in order."""
    assume(text)
    counts = count_words([text], bytepair.TrainSettings(vocab_size=260, pattern=r"[a-z]+|\d"))
    assert counts.items() == list(reference.word_frequencies([text], r"[a-z]+|\d").items())


def test_the_command_line_takes_the_choice(tmp_path, capsys):
    from bytepair import cli

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(CORPUS), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["train", str(corpus), "--vocab-size", "270", "--pattern", PATTERN, "--no-progress", "-o", str(out)]
    assert cli.main([*argv, "--unmatched", "drop"]) == 0
    assert bytepair.Tokenizer.load(out / "bytepair.json").settings["unmatched"] == "drop"
    assert cli.main(argv) == 0
    assert bytepair.Tokenizer.load(out / "bytepair.json").settings["unmatched"] == "keep"
    fasta = tmp_path / "g.fa"
    fasta.write_text(">x\nACGTACGT\n", encoding="utf-8")
    assert cli.main(["train", "--fasta", str(fasta), "--vocab-size", "10", "--unmatched", "keep", "-o", str(out)]) != 0
    assert "--unmatched is for text" in capsys.readouterr().err
