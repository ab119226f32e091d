"""Handing our tokenizers to the tools people already use (the real packages, no network): a tokenizer trained
with `bytepair train` loads in `transformers.PreTrainedTokenizerFast` and in `tiktoken.Encoding` with the same
ids and the same decoded text, on every shared corpus; a `datasets.Dataset` trains the same through the
library and through its JSON-lines export on the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

import bytepair
from bytepair import cli, files, reference

pytestmark = [pytest.mark.shared_data, pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")]


def samples(shared_data: Path) -> list[tuple[str, str]]:
    out = []
    for path in sorted((shared_data / "multilingual").rglob("*.txt"))[::3]:
        out.append((path.name, path.read_text(encoding="utf-8")[:20_000]))
    out.append(("shakespeare", (shared_data / "text/tinyshakespeare/input.txt").read_text(encoding="utf-8")[-50_000:]))
    out.append(("specials", "Hello<|endoftext|> world <|endoftext|>\n\n  naïve café 🎉 1234567 'S  x\t\r\n"))
    return out


@pytest.fixture(scope="module", params=["gpt2", "o200k"])
def trained(request, shared_data, tmp_path_factory) -> tuple[Path, bytepair.Tokenizer, str]:
    """A folder written by `bytepair train` on Shakespeare and a slice of every multilingual text."""
    folder = tmp_path_factory.mktemp(f"tok-{request.param}")
    corpus = folder / "corpus.txt"
    parts = [(shared_data / "text/tinyshakespeare/input.txt").read_text(encoding="utf-8")[:400_000]]
    parts += [p.read_text(encoding="utf-8")[:5_000] for p in sorted((shared_data / "multilingual").rglob("*.txt"))]
    corpus.write_text("\n".join(parts), encoding="utf-8")
    assert (
        cli.main(
            [
                "train",
                str(corpus),
                "--vocab-size",
                "3000",
                "--pattern",
                request.param,
                "--special-token",
                "<|endoftext|>",
                "-o",
                str(folder / "tok"),
            ]
        )
        == 0
    )
    return folder / "tok", bytepair.Tokenizer.load(folder / "tok" / files.OUR_FILE), request.param


def test_transformers_loads_our_tokenizer_json(trained, shared_data):
    import transformers

    folder, tok, _ = trained
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(folder / files.HF_FILE), clean_up_tokenization_spaces=False
    )
    assert len(fast) == tok.vocab_size
    for label, text in samples(shared_data):
        ids = tok.encode(text, allowed_special="all")  # HF matches added tokens anywhere
        assert fast.encode(text, add_special_tokens=False) == ids, label
        assert fast.decode(ids) == tok.decode(ids) == text, label
        assert fast.convert_ids_to_tokens(ids[:50]) == [tok.id_to_token(i) for i in ids[:50]], label


def test_tiktoken_loads_our_rank_file(trained, shared_data, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    folder, tok, pattern = trained
    ranks = load_tiktoken_bpe(str(folder / files.TIKTOKEN_FILE))
    enc = tiktoken.Encoding(
        "ours",
        pat_str=reference.PATTERNS[pattern],
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": tok.token_to_id("<|endoftext|>") or 0},
    )
    assert enc.n_vocab == tok.vocab_size
    for label, text in samples(shared_data):
        ids = tok.encode(text, allowed_special="all")
        assert enc.encode(text, allowed_special="all") == ids, label
        assert enc.encode_ordinary(text) == tok.encode_ordinary(text), label
        assert enc.decode(ids) == text, label
    # The same through the library's own export.
    assert tok.to_tiktoken().encode(samples(shared_data)[0][1]) == tok.encode(samples(shared_data)[0][1])


def test_hf_tokenizers_reads_the_folder_file_too(trained, shared_data):
    import tokenizers

    folder, tok, _ = trained
    hf = tokenizers.Tokenizer.from_file(str(folder / files.HF_FILE))
    for label, text in samples(shared_data):
        encoding = hf.encode(text, add_special_tokens=False)
        assert encoding.ids == tok.encode(text, allowed_special="all"), label
        assert hf.decode(encoding.ids, skip_special_tokens=False) == text, label


def test_a_datasets_dataset_trains_the_same_in_python_and_on_the_command_line(tmp_path, shared_data):
    import datasets

    lines = (shared_data / "text/tinyshakespeare/input.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    ds = datasets.Dataset.from_dict({"text": lines[:5000], "line": list(range(5000))})
    want = bytepair.train(ds["text"], 600, special_tokens=["<|endoftext|>"])
    batches = (batch["text"] for batch in ds.iter(batch_size=512))
    assert bytepair.train(batches, 600, special_tokens=["<|endoftext|>"]) == want
    ds.to_json(str(tmp_path / "ds.jsonl"), lines=True, force_ascii=False)
    assert (
        cli.main(
            [
                "train",
                str(tmp_path / "ds.jsonl"),
                "--jsonl-field",
                "text",
                "--vocab-size",
                "600",
                "--special-token",
                "<|endoftext|>",
                "-o",
                str(tmp_path / "tok"),
            ]
        )
        == 0
    )
    assert bytepair.Tokenizer.load(tmp_path / "tok" / files.OUR_FILE) == want
    # Encoding the dataset's JSON lines gives one document per row, as encode_batch does.
    out = tmp_path / "ids.jsonl"
    assert (
        cli.main(
            [
                "encode",
                "-t",
                str(tmp_path / "tok"),
                "--jsonl-field",
                "text",
                "--format",
                "json",
                "-o",
                str(out),
                str(tmp_path / "ds.jsonl"),
            ]
        )
        == 0
    )
    import json

    got = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert got == want.encode_batch(ds["text"])
