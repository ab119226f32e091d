"""Writes the fuzz targets' seed corpora (`make fuzz`): small files cut from the real ones in ../shared/data, and
files bytepair itself writes. Generated at run time rather than committed.

Usage: python fuzz/seeds.py OUT_DIR   (writes OUT_DIR/<target>/seed-*)
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import tempfile
from pathlib import Path

import bytepair

SHARED = Path(os.environ.get("BYTEPAIR_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def write(out: Path, target: str, name: str, data: bytes) -> None:
    folder = out / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"seed-{name}").write_bytes(data)


def cut_rank_file(path: Path, lines: int) -> bytes:
    with open(path, "rb") as f:
        return b"".join(f.readline() for _ in range(lines))


def cut_tokenizer_json(path: Path, top: int) -> bytes:
    """GPT-2's tokenizer.json with its vocabulary cut to ids below `top` and the merges that stay inside it."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    vocab = {t: i for t, i in doc["model"]["vocab"].items() if i < top}
    merges = []
    for merge in doc["model"]["merges"]:
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        if left in vocab and right in vocab and left + right in vocab:
            merges.append(merge)
    doc["model"]["vocab"], doc["model"]["merges"] = vocab, merges
    doc["added_tokens"] = [dict(a, id=top) for a in doc.get("added_tokens", [])][:1]
    for added in doc["added_tokens"]:
        doc["model"]["vocab"][added["content"]] = top
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


def trained(text: str) -> list[tuple[str, bytepair.Tokenizer]]:
    """Small tokenizers of each kind bytepair trains."""
    return [
        ("byte", bytepair.train([text], 300, special_tokens=["<|endoftext|>"])),
        ("char", bytepair.train([text], 120, mode="char", unk_token="[UNK]", pattern="whitespace")),
        ("prefix", bytepair.train([text], 120, mode="char", continuing_subword_prefix="##", unk_token="[UNK]")),
        ("lower", bytepair.train([text], 290, lowercase=True, pattern="cl100k")),
    ]


def main(out: Path) -> None:
    have_shared = (SHARED / "README.md").is_file()
    if not have_shared and os.environ.get("CI"):
        sys.exit(f"fuzz seeds: shared data not found at {SHARED}")
    text = "The quick brown fox jumps over the lazy dog. It's 2024!\n" * 20
    if have_shared:
        text = (SHARED / "text" / "tinyshakespeare" / "input.txt").read_text(encoding="utf-8")[:20_000]
        for name in ("r50k_base", "cl100k_base"):
            write(out, "tiktoken", name, cut_rank_file(SHARED / "tiktoken" / f"{name}.tiktoken", 300))
        write(out, "hf", "gpt2", cut_tokenizer_json(SHARED / "gpt2" / "tokenizer.json", 300))
        with gzip.open(SHARED / "genome" / "ecoli_k12_mg1655_NC_000913.3.fna.gz", "rb") as f:
            genome = f.read(4000)
        write(out, "fasta", "ecoli", genome)
        lines = genome.split(b"\n")
        reads = b"".join(b"@read%d\n%s\n+\n%s\n" % (i, s, b"I" * len(s)) for i, s in enumerate(lines[1:8]))
        write(out, "fasta", "reads", reads)
        write(out, "fasta", "two", b">a desc\nACGTNNacgt\n\n>b\r\nAC-GT\r\n")
    with tempfile.TemporaryDirectory() as tmp:
        for name, tok in trained(text):
            path = Path(tmp) / name
            tok.save(path)
            write(out, "native", name, path.read_bytes())
            try:
                tok.save_hf(path)
                write(out, "hf", name, path.read_bytes())
                tok.save_tiktoken(path)
                write(out, "tiktoken", name, path.read_bytes())
            except ValueError:
                pass  # a kind that format cannot hold


if __name__ == "__main__":
    main(Path(sys.argv[1]))
