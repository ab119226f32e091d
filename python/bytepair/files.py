"""Tokenizers and corpora on disk, streamed — the names the command line's library layer had here, kept so that
`bytepair.files.X` goes on working. They live in:

- `bytepair.formats`: `load_tokenizer` and the files `bytepair train -o` writes (`OUR_FILE`, `HF_FILE`,
  `TIKTOKEN_FILE`); `bytepair.formats.ids`: `read_ids` (token-id files);
- `bytepair.corpus`: `documents`, `Piece`, `can_cut`, `open_text` (reading text files as documents);
- `bytepair.streams`: `encode_stream`, `decode_stream`, `EncodeSummary`, `choose_dtype`, `special_policy`,
  `batches`;
- `bytepair.progress`: `Progress`.

>>> from bytepair import files
>>> files.OUR_FILE
'bytepair.json'
"""

from __future__ import annotations

from .corpus import Piece, can_cut, documents, open_text
from .formats import load_tokenizer
from .formats.folder import HF_FILE, OUR_FILE, TIKTOKEN_FILE
from .formats.ids import Format, read_ids
from .progress import Progress
from .streams import EncodeSummary, batches, choose_dtype, decode_stream, encode_stream, special_policy

__all__ = [
    "HF_FILE",
    "OUR_FILE",
    "TIKTOKEN_FILE",
    "EncodeSummary",
    "Format",
    "Piece",
    "Progress",
    "batches",
    "can_cut",
    "choose_dtype",
    "decode_stream",
    "documents",
    "encode_stream",
    "load_tokenizer",
    "open_text",
    "read_ids",
    "special_policy",
]
