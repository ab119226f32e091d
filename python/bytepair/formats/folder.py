"""The folder `bytepair train -o DIR` and `Tokenizer.save_pretrained` write: the tokenizer in every format it fits —
bytepair's JSON always; HF's tokenizer.json with the tokenizer_config.json and special_tokens_map.json that
transformers reads (see `bytepair.compat.transformers`); a tiktoken rank file for byte-level tokenizers with a
pattern — and reading such a folder (or one holding a HF tokenizer.json, or GPT-2's vocab.json + merges.txt) back.

>>> import bytepair, tempfile
>>> tok = bytepair.train(["low lower lowest"] * 5, vocab_size=259)
>>> out = tempfile.mkdtemp()
>>> [p.name for p in save(tok, out)[0]]
['bytepair.json', 'tokenizer.json', 'tokenizer.tiktoken', 'tokenizer_config.json', 'special_tokens_map.json']
>>> load(out) == tok
True
"""

from __future__ import annotations

import os
from pathlib import Path

from .._tokenizer import Tokenizer
from ..compat.transformers import CONFIG_FILE, SPECIAL_TOKENS_MAP_FILE, Roles, choose_roles, config_files
from ..writing import read_file_set, write_file_set
from . import gpt2, hf, native, tiktoken

__all__ = ["HF_FILE", "OUR_FILE", "TIKTOKEN_FILE", "TRANSFORMERS_FILES", "load", "save"]

PathLike = str | os.PathLike[str]

#: The files `bytepair train -o DIR` writes: ours, HF's tokenizer.json, and (byte-level) a tiktoken rank file.
OUR_FILE = "bytepair.json"
HF_FILE = "tokenizer.json"
TIKTOKEN_FILE = "tokenizer.tiktoken"
#: Beside tokenizer.json, for transformers: the tokenizer class and the special tokens' roles.
TRANSFORMERS_FILES = (CONFIG_FILE, SPECIAL_TOKENS_MAP_FILE)


def save(
    tok: Tokenizer, folder: PathLike, *, roles: Roles | None = None, model_max_length: int | None = None
) -> tuple[list[Path], list[str]]:
    """Writes `tok` into `folder` (made if missing) in every format it fits, as one set: a reader sees the
    folder's earlier tokenizer or this one, never files of both, even if writing is interrupted (see
    `bytepair.writing.write_file_set`). A format this tokenizer does not fit leaves the folder, if an earlier
    tokenizer had written it. `roles`: the special tokens' roles for transformers (default: `choose_roles`'s).
    Returns the files written and why the others were not."""
    files: dict[str, bytes] = {OUR_FILE: native.dumps(tok).encode("utf-8")}
    notes: list[str] = []
    try:
        files[HF_FILE] = hf.dumps(tok).encode("utf-8")
    except ValueError as e:
        notes.append(f"no {HF_FILE}: {e} (and so no {CONFIG_FILE} and {SPECIAL_TOKENS_MAP_FILE} for transformers)")
    if tok.settings["mode"] == "byte":
        try:
            if tok.settings["pattern"] is None:
                raise ValueError("tiktoken needs a pre-tokenization pattern (this tokenizer has none)")
            files[TIKTOKEN_FILE] = tiktoken.dumps(tok).encode("ascii")
        except ValueError as e:
            notes.append(f"no {TIKTOKEN_FILE}: {e}")
    if HF_FILE in files:
        chosen = roles if roles is not None else choose_roles(tok)
        files.update(config_files(tok, chosen, model_max_length=model_max_length))
    out = Path(folder)
    # A file of a format this tokenizer does not fit is an earlier tokenizer's, trained into the same folder: left
    # there, it would be taken for this one.
    optional = (HF_FILE, TIKTOKEN_FILE, *TRANSFORMERS_FILES)
    stale = [name for name in optional if name not in files and (out / name).exists()]
    written = write_file_set(out, files, remove=optional)
    notes += [f"removed the {name} an earlier training left in {out}" for name in stale]
    return written, notes


def load(folder: PathLike) -> Tokenizer:
    """The tokenizer in `folder`: its bytepair.json, else its tokenizer.json, else vocab.json + merges.txt."""
    path = read_file_set(folder)  # one set, even if another process is writing the folder meanwhile
    if (path / OUR_FILE).is_file():
        return native.load(path / OUR_FILE)
    if (path / HF_FILE).is_file():
        return hf.load(path / HF_FILE)
    if (path / "vocab.json").is_file() and (path / "merges.txt").is_file():
        return gpt2.load(path / "vocab.json", path / "merges.txt")
    text = os.fspath(folder)
    entries = sorted(p.name for p in Path(folder).iterdir() if not p.name.startswith("."))
    found = (
        "it is empty"
        if not entries
        else f"it has {', '.join(entries[:6])}" + (f" and {len(entries) - 6} more" if len(entries) > 6 else "")
    )
    raise FileNotFoundError(
        f"{text!r} holds no tokenizer ({found}): expected {OUR_FILE}, {HF_FILE}, or vocab.json + merges.txt (write "
        f"one with `bytepair train ... -o {text}`)"
    )
