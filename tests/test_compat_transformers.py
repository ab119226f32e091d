"""The transformers drop-in: `bytepair train -o` and `Tokenizer.save_pretrained` write folders that
`transformers.AutoTokenizer.from_pretrained` loads with the roles given and bytepair's ids; `Tokenizer.from_pretrained`
reads them, and folders transformers wrote, back. (Padding: test_padding.py.)"""

from __future__ import annotations

import json
import warnings

import pytest

import bytepair
from bytepair import cli
from bytepair.compat import transformers as compat

transformers = pytest.importorskip("transformers")

LINES = [
    "First Citizen: Before we proceed any further, hear me speak.",
    "All: Speak, speak. <|endoftext|>",
    "naïve café 日本語 🎉 — the end, the end.",
]


def auto(folder):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoTokenizer.from_pretrained(str(folder))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n".join(LINES * 40) + "\n", encoding="utf-8")
    return path


def test_the_trained_folder_loads_in_transformers_with_roles_and_our_ids(corpus, tmp_path, shared_data):
    out = tmp_path / "tok"
    argv = ["train", str(corpus), "--vocab-size", "400", "--special-token", "<|endoftext|>"]
    assert cli.main([*argv, "--bos-token", "<s>", "--pad-token", "<pad>", "-o", str(out)]) == 0
    ours = bytepair.Tokenizer.from_pretrained(out)
    assert ours.special_tokens == ["<|endoftext|>", "<s>", "<pad>"]  # the role tokens were added
    hf = auto(out)
    assert (hf.bos_token, hf.eos_token, hf.pad_token, hf.unk_token) == ("<s>", "<|endoftext|>", "<pad>", None)
    assert (hf.bos_token_id, hf.eos_token_id, hf.pad_token_id) == (1, 0, 2)
    text = (shared_data / "text" / "tinyshakespeare" / "input.txt").read_text(encoding="utf-8")[:20000]
    for sample in [text, *LINES, "<s>hello<pad>"]:
        ids = ours.encode(sample, allowed_special="all")
        assert hf(sample)["input_ids"] == ids
        assert hf.decode(ids) == ours.decode(ids)
    assert compat.read_roles(out) == compat.Roles(bos="<s>", eos="<|endoftext|>", pad="<pad>")


def test_default_roles_and_the_unk_token(corpus, tmp_path):
    out = tmp_path / "byte"
    assert (
        cli.main(["train", str(corpus), "--vocab-size", "300", "--special-token", "<|endoftext|>", "-o", str(out)]) == 0
    )
    assert auto(out).eos_token == "<|endoftext|>" and auto(out).pad_token is None
    char = tmp_path / "char"
    argv = ["train", str(corpus), "--vocab-size", "120", "--mode", "char", "--unk-token", "[UNK]", "-o", str(char)]
    assert cli.main(argv) == 0
    hf = auto(char)
    ours = bytepair.Tokenizer.from_pretrained(char)
    assert hf.unk_token == "[UNK]" and hf.unk_token_id == ours.token_to_id("[UNK]")
    assert hf("Speak, Ω speak")["input_ids"] == ours.encode("Speak, Ω speak")


def test_save_pretrained_checks_roles_and_writes_what_it_is_given(tmp_path):
    tok = bytepair.train(LINES * 20, vocab_size=300, special_tokens=["<|endoftext|>", "<pad>", "<sep>"])
    with pytest.raises(ValueError, match=r"bos_token '<s>' is not a special token"):
        tok.save_pretrained(tmp_path / "bad", bos_token="<s>")
    assert not (tmp_path / "bad").exists()  # refused before anything was written
    written = tok.save_pretrained(tmp_path / "a", eos_token="<sep>", model_max_length=512)
    assert [p.rsplit("/", 1)[-1] for p in written][-2:] == ["tokenizer_config.json", "special_tokens_map.json"]
    config = json.loads((tmp_path / "a" / "tokenizer_config.json").read_text())
    assert config["eos_token"] == "<sep>" and config["pad_token"] == "<pad>" and config["model_max_length"] == 512
    assert config["additional_special_tokens"] == ["<|endoftext|>"]
    hf = auto(tmp_path / "a")
    assert hf.eos_token == "<sep>" and hf.model_max_length == 512
    tok.save_pretrained(tmp_path / "b", default_roles=False)
    assert compat.read_roles(tmp_path / "b") == compat.Roles()
    assert auto(tmp_path / "b").eos_token is None


def test_a_tokenizer_without_a_tokenizer_json_leaves_no_stale_transformers_files(corpus, tmp_path):
    out = tmp_path / "tok"
    assert cli.main(["train", str(corpus), "--vocab-size", "300", "-o", str(out)]) == 0
    assert (out / "tokenizer_config.json").exists()
    # Byte-level with an end-of-word suffix has no tokenizer.json form: the config of the one before must go too.
    argv = ["train", str(corpus), "--vocab-size", "560", "--end-of-word-suffix", "</w>", "-o", str(out)]
    assert cli.main(argv) == 0
    assert not (out / "tokenizer.json").exists() and not (out / "tokenizer_config.json").exists()
    assert not (out / "special_tokens_map.json").exists()
    tok = bytepair.train(LINES * 20, vocab_size=560, end_of_word_suffix="</w>")
    with pytest.raises(ValueError, match="word markers"):
        tok.save_pretrained(tmp_path / "never")


def test_from_pretrained_reads_folders_transformers_wrote(shared_data, tmp_path):
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(shared_data / "gpt2" / "tokenizer.json"), eos_token="<|endoftext|>"
    )
    fast.save_pretrained(str(tmp_path / "gpt2"))
    ours = bytepair.Tokenizer.from_pretrained(tmp_path / "gpt2")
    text = (shared_data / "text" / "tinyshakespeare" / "input.txt").read_text(encoding="utf-8")[:20000]
    assert ours.encode(text) == fast(text)["input_ids"] == bytepair.get_encoding("gpt2", shared_data).encode(text)
    assert compat.read_roles(tmp_path / "gpt2").eos == "<|endoftext|>"


def test_from_pretrained_says_what_is_wrong(tmp_path):
    with pytest.raises(FileNotFoundError, match="never downloads.*snapshot_download"):
        bytepair.Tokenizer.from_pretrained("openai-community/gpt2")
    (tmp_path / "f.json").write_text("{}")
    with pytest.raises(NotADirectoryError, match="is a file"):
        bytepair.Tokenizer.from_pretrained(tmp_path / "f.json")
    with pytest.raises(FileNotFoundError, match="holds no tokenizer"):
        bytepair.Tokenizer.from_pretrained(tmp_path)


def test_read_roles_takes_both_ways_transformers_writes_a_token(tmp_path):
    (tmp_path / "special_tokens_map.json").write_text(
        json.dumps({"bos_token": {"content": "<s>", "lstrip": False}, "eos_token": "</s>", "unk_token": "<unk>"})
    )
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|end|>"}))
    assert compat.read_roles(tmp_path) == compat.Roles(bos="<s>", eos="<|end|>", unk="<unk>")
    (tmp_path / "tokenizer_config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not an object"):
        compat.read_roles(tmp_path)
