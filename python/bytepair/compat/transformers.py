"""What `transformers.AutoTokenizer.from_pretrained(folder)` reads, written from a bytepair tokenizer, and such a
folder read back: `tokenizer.json` (HF's file, see `bytepair.formats.hf`) with `tokenizer_config.json` and
`special_tokens_map.json`, which name the tokenizer class (`PreTrainedTokenizerFast`) and the special tokens'
roles — bos, eos, unk, pad — that model code asks for (`tokenizer.eos_token_id`, `padding=True`).

`Tokenizer.save_pretrained` and `bytepair train -o` write these files in the set of `bytepair.formats.folder`
(bytepair.json and tokenizer.tiktoken beside them), switched as one; `Tokenizer.from_pretrained` reads the folder
back, as does any folder transformers wrote for a BPE tokenizer. The roles are read with `read_roles`.

>>> import bytepair, tempfile
>>> tok = bytepair.train(["hello world"] * 10, vocab_size=266, special_tokens=["<|endoftext|>", "<pad>"])
>>> folder = tempfile.mkdtemp()
>>> [p.name for p in save_pretrained(tok, folder)]
['bytepair.json', 'tokenizer.json', 'tokenizer.tiktoken', 'tokenizer_config.json', 'special_tokens_map.json']
>>> read_roles(folder)
Roles(bos=None, eos='<|endoftext|>', unk=None, pad='<pad>')
>>> from_pretrained(folder) == tok
True
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..writing import read_file_set

if TYPE_CHECKING:
    from .._tokenizer import Tokenizer

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_ROLE_TOKENS",
    "SPECIAL_TOKENS_MAP_FILE",
    "Roles",
    "choose_roles",
    "config_files",
    "from_pretrained",
    "read_roles",
    "save_pretrained",
]

PathLike = str | os.PathLike[str]

CONFIG_FILE = "tokenizer_config.json"
SPECIAL_TOKENS_MAP_FILE = "special_tokens_map.json"

#: For each role, the special tokens that take it when present and no role is given (in this order of preference).
DEFAULT_ROLE_TOKENS: dict[str, tuple[str, ...]] = {
    "bos": ("<s>", "<bos>", "<|begin_of_text|>", "<|startoftext|>", "[BOS]"),
    "eos": ("</s>", "<eos>", "<|endoftext|>", "<|end_of_text|>", "[EOS]"),
    "unk": (),  # the tokenizer's own unk_token, if it has one
    "pad": ("<pad>", "<|pad|>", "[PAD]"),
}


@dataclass(frozen=True)
class Roles:
    """Which special token plays each role model code asks for (None: no such token)."""

    bos: str | None = None
    eos: str | None = None
    unk: str | None = None
    pad: str | None = None

    def as_dict(self) -> dict[str, str]:
        """{"bos_token": ..., ...}, as transformers names them, for the roles that have a token."""
        return {f"{role}_token": token for role, token in dataclasses.asdict(self).items() if token is not None}


def choose_roles(
    tok: Tokenizer,
    *,
    bos_token: str | None = None,
    eos_token: str | None = None,
    unk_token: str | None = None,
    pad_token: str | None = None,
    defaults: bool = True,
) -> Roles:
    """The roles for `tok`: the tokens given, and for the others (with `defaults`) a special token of a well-known
    name (`DEFAULT_ROLE_TOKENS`: <|endoftext|> or </s> is eos, <s> bos, <pad> pad) and `tok`'s unk_token. A token
    given for a role must be a special token of `tok` (or its unk_token): ValueError otherwise.

    >>> import bytepair
    >>> tok = bytepair.train(["hi there"] * 5, vocab_size=262, special_tokens=["<s>", "</s>"])
    >>> choose_roles(tok, pad_token="</s>")
    Roles(bos='<s>', eos='</s>', unk=None, pad='</s>')
    """
    specials = list(tok.special_tokens)
    own_unk = tok.settings["unk_token"]
    known = set(specials) | ({own_unk} if own_unk else set())
    given = {"bos": bos_token, "eos": eos_token, "unk": unk_token, "pad": pad_token}
    chosen: dict[str, str | None] = {}
    for role, token in given.items():
        if token is not None:
            if not isinstance(token, str):
                raise TypeError(f"{role}_token must be a str, not {type(token).__name__}")
            if token not in known:
                raise ValueError(
                    f"{role}_token {token!r} is not a special token of this tokenizer (its special tokens: "
                    f"{specials or 'none'}); train with special_tokens=[..., {token!r}] (--special-token on the "
                    f"command line, which --{role}-token does for you)"
                )
            chosen[role] = token
        elif defaults:
            if role == "unk":
                chosen[role] = own_unk
            else:
                chosen[role] = next((t for t in DEFAULT_ROLE_TOKENS[role] if t in specials), None)
        else:
            chosen[role] = None
    return Roles(**chosen)


def config_files(tok: Tokenizer, roles: Roles, *, model_max_length: int | None = None) -> dict[str, bytes]:
    """The text of tokenizer_config.json and special_tokens_map.json for `tok` (whose tokenizer.json goes beside
    them) with `roles`: what transformers 4 and 5 read. Special tokens without a role are
    `additional_special_tokens`; every special token is listed in `added_tokens_decoder` by id, as transformers
    writes it; `clean_up_tokenization_spaces` is off, so that transformers' `decode` gives bytepair's text."""
    if model_max_length is not None and (
        isinstance(model_max_length, bool) or not isinstance(model_max_length, int) or model_max_length < 1
    ):
        raise ValueError(f"model_max_length must be None or an int >= 1, got {model_max_length!r}")
    named = roles.as_dict()
    extra = [s for s in tok.special_tokens if s not in named.values()]
    added: dict[str, dict[str, Any]] = {}
    for token in list(tok.special_tokens) + ([roles.unk] if roles.unk and roles.unk not in tok.special_tokens else []):
        token_id = tok.token_to_id(token)
        if token_id is not None:
            added[str(token_id)] = {
                "content": token,
                "lstrip": False,
                "normalized": False,
                "rstrip": False,
                "single_word": False,
                "special": True,
            }
    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "clean_up_tokenization_spaces": False,
        "added_tokens_decoder": added,
        **named,
    }
    if extra:
        config["additional_special_tokens"] = extra
    if model_max_length is not None:
        config["model_max_length"] = model_max_length
    special_map: dict[str, Any] = dict(named)
    if extra:
        special_map["additional_special_tokens"] = extra
    return {
        CONFIG_FILE: (json.dumps(config, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
        SPECIAL_TOKENS_MAP_FILE: (json.dumps(special_map, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
    }


def save_pretrained(
    tok: Tokenizer,
    folder: PathLike,
    *,
    bos_token: str | None = None,
    eos_token: str | None = None,
    unk_token: str | None = None,
    pad_token: str | None = None,
    default_roles: bool = True,
    model_max_length: int | None = None,
) -> list[Path]:
    """Writes `tok` into `folder` (made if missing) for `transformers.AutoTokenizer.from_pretrained` (see
    `Tokenizer.save_pretrained`). Returns the files written. ValueError when `tok` has no tokenizer.json form."""
    from ..formats import folder as folder_format
    from ..formats import hf

    hf.dumps(tok)  # ValueError here, naming what HF cannot represent, before anything is written
    roles = choose_roles(
        tok, bos_token=bos_token, eos_token=eos_token, unk_token=unk_token, pad_token=pad_token, defaults=default_roles
    )
    written, _ = folder_format.save(tok, folder, roles=roles, model_max_length=model_max_length)
    return written


def from_pretrained(folder: PathLike) -> Tokenizer:
    """The tokenizer in a folder written by `save_pretrained`, `bytepair train -o` or transformers' own
    `save_pretrained` for a BPE tokenizer (tokenizer.json, or vocab.json + merges.txt). Never downloads: a name
    that is not a folder is refused, saying how to get the files."""
    from ..formats import folder as folder_format

    path = Path(folder)
    text = os.fspath(folder)
    if path.is_file():
        raise NotADirectoryError(f"{text!r} is a file: from_pretrained takes a folder (Tokenizer.load reads a file)")
    if not path.is_dir():
        raise FileNotFoundError(
            f"no such folder: {text!r}. bytepair never downloads: for a tokenizer on the Hugging Face Hub, fetch its "
            f"files first (huggingface_hub.snapshot_download(repo_id)) and pass that folder"
        )
    return folder_format.load(path)


def read_roles(folder: PathLike) -> Roles:
    """The roles a folder's tokenizer_config.json (or special_tokens_map.json) gives; Roles() when it has neither.

    transformers writes a token either as a string or as {"content": ..., ...}; both are read.
    """
    base = read_file_set(folder)
    found: dict[str, str | None] = {}
    for name in (SPECIAL_TOKENS_MAP_FILE, CONFIG_FILE):  # the config wins where both give a role
        path = base / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"{os.fspath(path)!r} is not a JSON file ({e})") from None
        if not isinstance(data, Mapping):
            raise ValueError(f"{os.fspath(path)!r} holds a JSON {type(data).__name__}, not an object")
        for role in ("bos", "eos", "unk", "pad"):
            value = data.get(f"{role}_token")
            if isinstance(value, Mapping):
                value = value.get("content")
            if isinstance(value, str):
                found[role] = value
    return Roles(**found)
