"""bytepair: Byte-Pair Encoding tokenizers — train, encode, decode — with a Rust core.

>>> import bytepair
>>> tok = bytepair.train(["the cat sat on the mat"] * 10, vocab_size=262)
>>> tok.tokenize("the cat")
['the', 'Ġcat']
>>> tok.decode(tok.encode("the cat"))
'the cat'

`bytepair.reference` is the same algorithm in plain Python, line by line as it is taught.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import glob as _glob
import re
import operator
import os
import sys
import warnings
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Literal, Union

from . import _core
from .dna import DnaStats, FastaRecord, dna_stats, iter_fasta, read_fasta, reverse_complement, train_dna

__version__ = "0.1.0"
__all__ = ["Tokenizer", "train", "train_from_counts", "__version__",
           "train_dna", "read_fasta", "iter_fasta", "FastaRecord", "reverse_complement", "dna_stats", "DnaStats"]

PathLike = Union[str, "os.PathLike[str]"]
Corpus = Union[PathLike, Iterable[Union[str, "os.PathLike[str]", FastaRecord]]]

MODES = ("byte", "char")
NAMED_PATTERNS = ("gpt2", "cl100k", "o200k", "whitespace", "r50k_base", "p50k_base", "cl100k_base", "o200k_base")
TIE_BREAKS = ("first_seen", "hf", "lexicographic")

# Texts are handed to the core in batches of about this many characters (one GIL release per batch).
_BATCH_CHARS = 8 << 20


class Tokenizer:
    """A BPE tokenizer: special tokens, a pre-tokenization pattern, a base alphabet and merges.

    Get one from `bytepair.train`, `bytepair.train_from_counts` or `Tokenizer.load`.

    Ids: special tokens first, then the base alphabet in code-point order of its display form, then one id
    per merge (in merge order) that made a new token.
    """

    def __init__(self, core: _core.CoreTokenizer) -> None:
        self._core = core
        self._size: int = core.vocab_size()
        self._specials: list[str] = core.special_tokens()
        # The default special-token policy (none allowed, all disallowed), made once: working it out from the
        # arguments on every call tripled the cost of encode() on a short text.
        self._default_policy = ([False] * len(self._specials), [True] * len(self._specials))
        # The encoder's tables are built here, not on the first encode (up to 0.2 s for o200k_base): the
        # first call of a server, or of a benchmark, costs what the others do.
        core.prepare()

    # The token strings and the string -> id map are made on first use: encoding needs neither, and for
    # o200k_base they were 0.06-0.08 s of loading (200 K Python strs and a dict of them).
    @functools.cached_property
    def _strings(self) -> list[str]:
        return self._core.token_strings()

    @functools.cached_property
    def _ids(self) -> dict[str, int]:
        return {s: i for i, s in enumerate(self._strings) if s}  # "" = an unused id

    # -- encoding ---------------------------------------------------------------------------------------

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Token ids of `text`.

        Special tokens follow tiktoken's rules: by default, finding one in the text raises ValueError (text
        from users must not turn into control tokens by accident). Pass `allowed_special={"<|endoftext|>"}`
        (or "all") to encode them as special tokens, or `disallowed_special=()` to encode them as ordinary
        text.

        >>> tok = train(["hello world"] * 3, vocab_size=260, special_tokens=["<|endoftext|>"])
        >>> tok.encode("hello<|endoftext|>", allowed_special="all")[-1]
        0
        """
        _check_str(text, "text")
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        return self._core.encode(text, allowed, disallowed)

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, treating special-token text as ordinary text."""
        _check_str(text, "text")
        none = self._default_policy[0]  # no special token allowed, none an error
        return self._core.encode(text, none, none)

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
        threads: int | None = None,
    ) -> list[list[int]]:
        """Token ids of each text, encoded in parallel (threads=None: every core; never more threads than
        cores; the calling thread is one of them, and it builds the lists), in the order given. Ctrl-C stops it between chunks of texts. Python's
        cycle collector is paused meanwhile; on several threads the calling thread runs it between chunks when it
        is due (unless you had turned it off), so `gc.callbacks` may fire during the call.

        >>> tok = train(["low lower lowest"] * 5, vocab_size=259)
        >>> tok.encode_batch(["low", "lower"]) == [tok.encode("low"), tok.encode("lower")]
        True
        """
        _check_threads(threads)
        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] is a {type(text).__name__}, not a str")
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        with _no_cyclic_gc() as collector_was_on:
            return self._core.encode_batch(texts, allowed, disallowed, _thread_request(threads), collector_was_on)

    def encode_bytes(
        self,
        data: bytes,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Token ids of bytes that need not be valid UTF-8 (byte-level vocabularies): valid stretches are
        encoded as text, each byte of an invalid sequence becomes its own byte token, so
        `decode_bytes(encode_bytes(b)) == b` for any bytes.

        >>> tok = train(["low lower lowest"] * 5, vocab_size=259)
        >>> tok.decode_bytes(tok.encode_bytes(b"low\\xff\\xfelow"))
        b'low\\xff\\xfelow'
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, not {type(data).__name__}; for text use encode()")
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        return self._core.encode_bytes(bytes(data), allowed, disallowed)

    def encode_to_numpy(
        self,
        text: str | Iterable[str],
        *,
        dtype: str = "uint32",
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
        threads: int | None = None,
    ):
        """Token ids as a numpy array (no Python list in between): one array for a str, a list of arrays for
        several texts (encoded in parallel). dtype "uint16" needs a vocabulary of at most 65 536 ids (GPT-2,
        r50k, p50k; not cl100k or o200k) — else ValueError, before encoding anything.

        >>> tok = train(["low lower lowest"] * 5, vocab_size=259)
        >>> tok.encode_to_numpy("lower lowest", dtype="uint16").tolist() == tok.encode("lower lowest")
        True
        """
        import numpy as np

        if dtype not in ("uint16", "uint32", np.uint16, np.uint32):
            raise ValueError(f"dtype must be uint16 or uint32, got {dtype!r}")
        if np.dtype(dtype) == np.uint16 and self.vocab_size > 1 << 16:
            raise ValueError(f"this vocabulary has {self.vocab_size} ids, more than uint16 holds: use dtype='uint32'")
        single = isinstance(text, str)
        texts = [text] if single else list(text)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] is a {type(t).__name__}, not a str")
        _check_threads(threads)
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        narrow = np.dtype(dtype) == np.uint16
        packed, lengths = self._core.encode_packed(texts, allowed, disallowed, _thread_request(threads),
                                                   2 if narrow else 4)
        ids = np.frombuffer(packed, dtype="<u2" if narrow else "<u4")  # a writable view of the bytearray
        if not ids.dtype.isnative:  # pragma: no cover (big-endian machines)
            ids = ids.astype(ids.dtype.newbyteorder("="))
        if single:
            return ids
        return np.split(ids, np.cumsum(lengths)[:-1]) if lengths else []

    def encode_with_offsets(
        self,
        text: str,
        *,
        unit: Literal["byte", "char"] = "char",
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[tuple[int, int, int]]:
        """(id, start, end) for each token: where in `text` it comes from, in characters (`text[start:end]`)
        or in bytes of its UTF-8 encoding. Byte-level tokens can cut a character in two; in character
        offsets such a token covers the whole character.

        >>> tok = train(["This is it. This is."], vocab_size=262)
        >>> [("This is"[s:e]) for _, s, e in tok.encode_with_offsets("This is")]
        ['This', ' is']
        """
        _check_str(text, "text")
        if unit not in ("byte", "char"):
            raise ValueError(f'unit must be "byte" or "char", got {unit!r}')
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        return self._core.encode_with_offsets(text, allowed, disallowed, unit == "char")

    def count(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> int:
        """Number of tokens of `text` (= len(encode(text)), without building the list).

        >>> train(["This is it. This is."], vocab_size=262).count("This is")
        2
        """
        _check_str(text, "text")
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        return self._core.count(text, allowed, disallowed)

    # -- existing vocabularies --------------------------------------------------------------------------

    @classmethod
    def from_tiktoken(cls, path: PathLike, *, pattern: str | None = "cl100k",
                      special_tokens: Mapping[str, int] | None = None) -> Tokenizer:
        """A tokenizer from a tiktoken rank file (`*.tiktoken`: base64 token and rank per line). Its ids and
        encodings equal tiktoken's: tiktoken's merge rule (any two adjacent parts whose concatenation is a
        token merge, lowest rank first; a piece that is a token stays whole) is kept.

        pattern: the pre-tokenizer the vocabulary was made with ("gpt2" for r50k/p50k, "cl100k", "o200k").
        special_tokens: {text: id}, e.g. {"<|endoftext|>": 100257}.
        """
        _check_pattern(pattern)
        specials = dict(special_tokens or {})
        for name, i in specials.items():
            if not isinstance(name, str) or not name or isinstance(i, bool) or not isinstance(i, int) or i < 0:
                raise TypeError(f"special_tokens must map non-empty str -> int >= 0, got {name!r}: {i!r}")
            if i >= 1 << 31:
                raise ValueError(f"special token {name!r} has id {i}: ids must be below 2**31")
        p = os.fspath(path)
        if not os.path.isfile(p):
            raise FileNotFoundError(f"no such tiktoken file: {p!r}")
        return cls(_core.CoreTokenizer.from_tiktoken(p, pattern, list(specials.items())))

    @classmethod
    def from_gpt2(cls, vocab_json: PathLike, merges_txt: PathLike, *,
                  special_tokens: Iterable[str] | None = None, pattern: str | None = "gpt2") -> Tokenizer:
        """A tokenizer from GPT-2's `encoder.json` + `vocab.bpe`, or HF's `vocab.json` + `merges.txt`
        (byte-level BPE). Merges apply in the file's order, as HF tokenizers does.

        special_tokens: tokens of vocab.json that are special (default: "<|endoftext|>" if present).
        """
        v, m = os.fspath(vocab_json), os.fspath(merges_txt)
        for f in (v, m):
            if not os.path.isfile(f):
                raise FileNotFoundError(f"no such file: {f!r}")
        if special_tokens is None:
            with open(v, "rb") as fh:  # bytes: the core reports a file that is not UTF-8, naming it
                special_tokens = ["<|endoftext|>"] if b'"<|endoftext|>"' in fh.read() else []
        if isinstance(special_tokens, str):
            raise TypeError(f"special_tokens must be a list of strings; write [{special_tokens!r}]")
        _check_pattern(pattern)
        return cls(_core.CoreTokenizer.from_gpt2(v, m, list(special_tokens), pattern))

    def save_hf(self, path: PathLike) -> None:
        r"""Writes a HF `tokenizer.json` that `tokenizers.Tokenizer.from_file` and
        `transformers.PreTrainedTokenizerFast(tokenizer_file=...)` load, encoding to this tokenizer's ids
        (special tokens become HF added tokens, which HF matches anywhere in the text: compare with
        `encode(text, allowed_special="all")`).

        Byte-level tokenizers get HF's ByteLevel pre-tokenizer and decoder (after a Split regex for patterns
        other than "gpt2"). Char-level tokenizers keep `unk_token`, `continuing_subword_prefix` and
        `end_of_word_suffix` in the BPE model; the pattern becomes HF's Whitespace ("whitespace"),
        WhitespaceSplit (r"\S+"), BertPreTokenizer (the regex `from_hf` reads it as), no pre-tokenizer (None) or
        a Split regex; `lowercase` becomes a Lowercase normaliser. The decoder takes the markers off:
        BPEDecoder (suffix) or WordPiece (prefix), which put spaces back between words, for patterns that drop
        whitespace; otherwise Replace steps and Fuse, which give exactly `decode`. A custom regex is written as
        a Split regex that keeps its matches and drops the text between them, as bytepair does. HF runs it with
        Oniguruma, which reads the usual syntax (\s, \d, \p{..}, look-arounds) as bytepair's fancy-regex does,
        but not every class alike: Oniguruma's \w also takes ² ³ ¹ ¼ ½ ¾ and not the zero-width (non-)joiners,
        and its POSIX classes ([[:alpha:]], [[:punct:]]) are Unicode where bytepair's are ASCII. A pattern meant
        for export is safest written with \p{L}, \p{N} and explicit sets.

        Where HF differs from bytepair (ids never do, as long as bytepair can encode the text): without an
        unk_token, HF silently drops characters it has no token for, where bytepair raises ValueError; HF's
        WordPiece/BPEDecoder decoders put a space next to a special token inside a word and keep the `##` of
        a first token that continues a word; `tokenizers.Tokenizer.decode` skips special tokens unless told
        `skip_special_tokens=False`. Byte-level tokenizers with word markers are refused (ValueError).

        >>> import os, tempfile
        >>> tok = train(["hug pug pun bun hugs"] * 5, 18, mode="char", pattern="whitespace",
        ...             unk_token="[UNK]", end_of_word_suffix="</w>")
        >>> path = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
        >>> tok.save_hf(path)
        >>> import tokenizers
        >>> hf = tokenizers.Tokenizer.from_file(path)
        >>> hf.encode("hugs mug").tokens == tok.tokenize("hugs mug")
        True
        >>> hf.decode(tok.encode("hugs mug"), skip_special_tokens=False)
        'hugs [UNK]ug'
        """
        _write_whole(Path(path), self._core.to_hf(), "utf-8")

    def save_tiktoken(self, path: PathLike) -> None:
        """Writes a tiktoken rank file (base64 token and id per line; special tokens are not in it — pass them
        to tiktoken yourself, see `to_tiktoken`). tiktoken loaded with it gives this tokenizer's ids; a
        vocabulary for which tiktoken's rule would differ, or without a token for every byte (tiktoken has no
        unknown token), is refused with ValueError."""
        import base64

        lines = [base64.b64encode(b).decode("ascii") + f" {i}\n" for b, i in self._core.tiktoken_ranks()]
        _write_whole(Path(path), "".join(lines), "ascii")

    def to_tiktoken(self, name: str = "bytepair"):
        """A `tiktoken.Encoding` with this tokenizer's pattern, ranks and special tokens (needs tiktoken).

        Its ids equal this tokenizer's, with one exception in tiktoken's matching of special tokens: where one
        special token starts another ("<a>" and "<a><b>"), bytepair (and HF) take the longest at a position,
        tiktoken may take the shorter one (it did in every run tried: "x<a><b>y" gave "<a>" then the text
        "<b>").
        """
        import tiktoken

        pattern = self._core.pattern_regex()
        if pattern is None:
            raise ValueError("tiktoken needs a pre-tokenization pattern; this tokenizer has none (pattern=None)")
        ranks = dict(self._core.tiktoken_ranks())
        specials = {s: self._ids[s] for s in self._specials}
        return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)

    @classmethod
    def from_hf(cls, tokenizer_json: PathLike) -> Tokenizer:
        r"""A tokenizer from a HF `tokenizer.json` holding a BPE model; ids equal HF's
        `Tokenizer.encode(text, add_special_tokens=False).ids`. Added tokens become special tokens (HF matches
        them anywhere: compare with `encode(text, allowed_special="all")`); post-processors (templates that add
        [CLS] etc.) are not applied, padding and truncation are ignored.

        Byte-level BPE: the ByteLevel pre-tokenizer (or a Split regex then ByteLevel, or Whitespace then
        ByteLevel), `ignore_merges`, optional Lowercase normaliser.

        Char-level BPE (no ByteLevel step): the model's `unk_token`, `fuse_unk`, `continuing_subword_prefix`,
        `end_of_word_suffix` and `ignore_merges`; pre-tokenizer none, Whitespace (pattern "whitespace"),
        WhitespaceSplit (pattern r"\S+"), BertPreTokenizer or Split with a regex (Isolated, or Removed with
        invert; the regex is run by fancy-regex, which reads the usual syntax as Oniguruma does); no
        normaliser or Lowercase. The file's decoder is not used: `decode` takes the `##`/`</w>` markers off,
        and puts a space back between words when the pre-tokenizer drops whitespace (as HF's BPEDecoder and
        WordPiece decoders do); with no markers and a whitespace-dropping pre-tokenizer it joins the tokens
        without spaces, where HF (no decoder) joins them with one. Without an unk_token, HF
        drops characters it has no token for; bytepair raises ValueError naming the character.

        Anything else — WordPiece/Unigram models, byte_fallback, dropout, other normalisers (NFKC,
        BertNormalizer…) or pre-tokenizers (Metaspace, Digits, Punctuation…), a ByteLevel step with
        use_regex=True after a Split or Whitespace step, added tokens with lstrip/rstrip/single_word (or
        normalized=True under Lowercase), in byte-level and char-level files alike — raises ValueError naming it.

        >>> import os, tempfile
        >>> from tokenizers import Tokenizer as HFTokenizer, models, pre_tokenizers, trainers
        >>> hf = HFTokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"))
        >>> hf.pre_tokenizer = pre_tokenizers.Whitespace()
        >>> hf.train_from_iterator(["hug pug pun bun hugs"] * 5, trainers.BpeTrainer(
        ...     vocab_size=30, special_tokens=["[UNK]"], continuing_subword_prefix="##", show_progress=False))
        >>> path = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
        >>> hf.save(path)
        >>> tok = Tokenizer.from_hf(path)
        >>> tok.tokenize("hugs mug!")
        ['hugs', '[UNK]', '##ug', '[UNK]']
        >>> tok.encode("hugs mug!") == hf.encode("hugs mug!").ids
        True
        >>> tok.decode(tok.encode("hugs pun"))
        'hugs pun'
        """
        return cls(_core.CoreTokenizer.from_hf(os.fspath(tokenizer_json)))

    def tokenize(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[str]:
        """The tokens of `text` in display form (byte-level tokens use GPT-2's table: space is `Ġ`).

        >>> train(["This is it. This is."], vocab_size=262).tokenize("This is")
        ['This', 'Ġis']
        """
        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return [self._strings[i] for i in ids]

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes that `ids` stand for (exact, even when they cut a UTF-8 character in two)."""
        return self._core.decode_bytes(_check_ids(ids))

    def decode(self, ids: Iterable[int], errors: Literal["replace", "strict"] = "replace") -> str:
        """The text that `ids` stand for. Byte sequences that are not valid UTF-8 (possible when a slice of ids
        cuts a character) become U+FFFD with errors="replace", or raise UnicodeDecodeError with "strict"."""
        if errors not in ("replace", "strict"):
            raise ValueError(f'errors={errors!r} is not supported: use "replace" or "strict"')
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    # -- vocabulary -------------------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Number of tokens, special tokens included."""
        return self._size

    def __len__(self) -> int:
        return self._size

    @property
    def vocab(self) -> dict[str, int]:
        """Token string (display form) → id."""
        return dict(self._ids)

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The merges in the order they were learned (and are applied), as display strings."""
        s = self._strings
        return [(s[a], s[b]) for a, b, _ in self._core.merges()]

    @property
    def trace(self) -> list[tuple[tuple[str, str], int]] | None:
        """Each merge with the count of its pair when it was chosen; None if the counts are unknown."""
        counts = self._core.merge_counts()
        if counts is None:
            return None
        return list(zip(self.merges, counts))

    @property
    def special_tokens(self) -> list[str]:
        """The special tokens, in id order."""
        return list(self._specials)

    def token_to_id(self, token: str) -> int | None:
        """The id of a token given in display form, or None if it is not in the vocabulary."""
        return self._ids.get(token)

    def id_to_token(self, id: int) -> str | None:
        """The display form of a token, or None if the id is not in the vocabulary (or unused in it: cl100k has
        no token 100261)."""
        id = _as_id(id)
        return (self._strings[id] or None) if 0 <= id < self._size else None

    def token_bytes(self, id: int) -> bytes:
        """The raw bytes of one token (without `##` or end-of-word markers)."""
        id = _as_id(id)
        if not 0 <= id < self._size:
            raise ValueError(f"id {id} is not in the vocabulary: valid ids are 0 to {self._size - 1}")
        if not self._strings[id]:  # every token has a spelling; an empty one is a gap in the ids
            raise ValueError(f"id {id} is unused in this vocabulary: no token has it")
        return self._core.token_bytes(id)

    @property
    def settings(self) -> dict[str, object]:
        """How the tokenizer cuts text: mode, pattern, lowercase, markers, unk_token, tie_break."""
        mode, pattern, regex, lowercase, prefix, suffix, unk, tie_break = self._core.settings()
        return {
            "mode": mode,
            "pattern": pattern if regex is None else regex,
            "lowercase": lowercase,
            "continuing_subword_prefix": prefix,
            "end_of_word_suffix": suffix,
            "unk_token": unk,
            "tie_break": tie_break,
        }

    # -- files ------------------------------------------------------------------------------------------

    def save(self, path: PathLike) -> None:
        """Writes the tokenizer in bytepair's own format: one human-readable JSON file (settings, special
        tokens, alphabet, then one merge per line with its count). `Tokenizer.load` reads it back exactly."""
        _write_whole(Path(path), self._core.to_native(), "utf-8")

    @classmethod
    def load(cls, path: PathLike) -> Tokenizer:
        """Reads a tokenizer written by `save`."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FileNotFoundError(f"no such tokenizer file: {str(path)!r}") from None
        except UnicodeDecodeError as e:
            raise ValueError(f"{str(path)!r} is not a bytepair tokenizer file: not UTF-8 at byte {e.start}") from None
        return cls(_core.CoreTokenizer.from_native(text, str(path)))

    def __getstate__(self) -> str:
        return self._core.to_native()

    def __setstate__(self, state: str) -> None:
        self.__init__(_core.CoreTokenizer.from_native(state, "pickled Tokenizer"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return self._core.to_native() == other._core.to_native()

    def __repr__(self) -> str:
        s = self.settings
        parts = [f"vocab_size={self.vocab_size}", f"mode={s['mode']!r}", f"pattern={s['pattern']!r}"]
        parts.append(f"merges={len(self._core.merges())}")
        if self._specials:
            parts.append(f"special_tokens={self._specials!r}")
        for key in ("lowercase", "continuing_subword_prefix", "end_of_word_suffix", "unk_token"):
            if s[key]:
                parts.append(f"{key}={s[key]!r}")
        return f"Tokenizer({', '.join(parts)})"

    def _policy(self, allowed_special: object, disallowed_special: object) -> tuple[list[bool], list[bool]]:
        """tiktoken-style special-token arguments as one flag per special token: (allowed, disallowed)."""
        if (type(allowed_special) is frozenset and not allowed_special
                and type(disallowed_special) is str and disallowed_special == "all"):
            return self._default_policy  # the defaults
        return (self._special_flags(allowed_special, "allowed_special"),
                self._special_flags(disallowed_special, "disallowed_special"))

    def _special_flags(self, value: object, name: str) -> list[bool]:
        if value == "all":
            return [True] * len(self._specials)
        if isinstance(value, str):
            raise TypeError(f'{name} must be "all" or a collection of special-token strings, not the string {value!r}; '
                            f'write {name}={{{value!r}}}')
        try:
            chosen = set(value)  # type: ignore[call-overload]
        except TypeError:
            raise TypeError(f'{name} must be "all" or a collection of special-token strings') from None
        unknown = chosen - set(self._specials)
        if unknown:
            raise ValueError(f"{name} names {sorted(unknown)!r}, which are not special tokens of this tokenizer "
                             f"(its special tokens: {self._specials!r})")
        return [s in chosen for s in self._specials]


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[bool]:
    """Pauses Python's cycle collector while lists of ids are built: thousands of new lists set it off again and
    again, and each run walks every id of every list made so far (a quarter of `encode_batch`'s time on 4 KB
    documents, all of it on the one thread that holds the GIL). Lists of ints cannot form cycles; the lists stay
    tracked, so the collector still sees them if they are kept. Yields whether the collector was on (then the
    batch collects its young lists itself while other threads encode). (The collector's switch is global: a
    thread that turns it off while this runs has it turned back on at the end.)"""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield enabled
    finally:
        if enabled:
            gc.enable()


# Name → (file names, pattern, special tokens) of tiktoken's encodings.
ENCODINGS: dict[str, tuple[tuple[str, ...], str, dict[str, int]]] = {
    "gpt2": (("vocab.bpe", "encoder.json"), "gpt2", {"<|endoftext|>": 50256}),
    "r50k_base": (("r50k_base.tiktoken",), "gpt2", {"<|endoftext|>": 50256}),
    "p50k_base": (("p50k_base.tiktoken",), "gpt2", {"<|endoftext|>": 50256}),
    "cl100k_base": (("cl100k_base.tiktoken",), "cl100k", {
        "<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276}),
    "o200k_base": (("o200k_base.tiktoken",), "o200k", {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
}

_TIKTOKEN_URLS = {
    "r50k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
    "p50k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken",
    "cl100k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "vocab.bpe": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
    "encoder.json": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
}


# The SHA-256 of OpenAI's files, as tiktoken pins them: get_encoding refuses a truncated, edited or mislabelled
# file, which would load as another vocabulary (60,000 lines of cl100k_base gave other ids, silently).
_SHA256 = {
    "r50k_base.tiktoken": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base.tiktoken": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base.tiktoken": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
}


def _check_encoding_file(name: str, found: str) -> None:
    """Raises ValueError unless `found` is OpenAI's `name` (its SHA-256; ~5 ms for o200k_base)."""
    import hashlib

    with open(found, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != _SHA256[name]:
        raise ValueError(
            f"{found!r} is not OpenAI's {name} (SHA-256 {digest[:16]}…, expected {_SHA256[name][:16]}…): it is "
            f"truncated, edited or another file under that name, and would give other ids. Replace it with the "
            f"original, or load it on purpose with Tokenizer.from_tiktoken(path, pattern=..., special_tokens=...) "
            f"(Tokenizer.from_gpt2 for vocab.bpe / encoder.json)")


def _find_encoding_file(name: str, path: PathLike | None) -> str:
    """A vocabulary file: in `path`, in $BYTEPAIR_DATA, or in tiktoken's cache (files named by the SHA-1 of
    their URL). Never downloads."""
    import hashlib
    import tempfile

    if path is not None and not os.path.isdir(path):  # a typo would otherwise fall through to other places
        raise FileNotFoundError(f"no such folder: {os.fspath(path)!r} (path= / --data names the folder that holds "
                                f"{name})")
    places = [os.fspath(p) for p in (path, os.environ.get("BYTEPAIR_DATA")) if p]
    for place in places:
        for candidate in (os.path.join(place, name), os.path.join(place, "tiktoken", name),
                          os.path.join(place, "gpt2", name)):
            if os.path.isfile(candidate):
                return candidate
    cache_dirs = [os.environ.get("TIKTOKEN_CACHE_DIR"), os.environ.get("DATA_GYM_CACHE_DIR"),
                  os.path.join(tempfile.gettempdir(), "data-gym-cache")]
    key = hashlib.sha1(_TIKTOKEN_URLS[name].encode()).hexdigest()
    for d in filter(None, cache_dirs):
        if os.path.isfile(os.path.join(d, key)):
            return os.path.join(d, key)
    looked = f"in {', '.join(map(repr, places))} and in" if places else "in"
    unset = "" if places else "; no path was given and $BYTEPAIR_DATA is not set"
    raise FileNotFoundError(
        f"{name} not found (looked {looked} tiktoken's cache{unset}). bytepair never downloads: pass the folder "
        f"that holds {name} (path=... in Python, or set BYTEPAIR_DATA=folder for the command line)"
    )


def get_encoding(name: str, path: PathLike | None = None) -> Tokenizer:
    """tiktoken's encodings by name — "gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base" — with
    their exact patterns and special tokens; ids equal tiktoken's. The files are found in `path`,
    $BYTEPAIR_DATA, or tiktoken's cache directory (never downloaded), and checked against the SHA-256 that
    tiktoken pins for them (ValueError if they differ)."""
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}: use one of {', '.join(map(repr, ENCODINGS))}")
    files, pattern, specials = ENCODINGS[name]
    found = [_find_encoding_file(f, path) for f in files]
    for file, place in zip(files, found):
        _check_encoding_file(file, place)
    if name == "gpt2":
        return Tokenizer.from_gpt2(found[1], found[0], special_tokens=list(specials), pattern=pattern)
    return Tokenizer.from_tiktoken(found[0], pattern=pattern, special_tokens=specials)


def train(
    corpus: Corpus,
    vocab_size: int,
    *,
    mode: Literal["byte", "char"] = "byte",
    pattern: str | None = "gpt2",
    special_tokens: Iterable[str] = (),
    initial_alphabet: Literal["all", "corpus"] | Iterable[str] = "all",
    min_frequency: int = 0,
    lowercase: bool = False,
    continuing_subword_prefix: str | None = None,
    end_of_word_suffix: str | None = None,
    unk_token: str | None = None,
    max_token_length: int | None = None,
    limit_alphabet: int | None = None,
    tie_break: Literal["first_seen", "hf", "lexicographic"] = "first_seen",
    threads: int | None = None,
    progress: bool | None = None,
    errors: Literal["strict", "replace"] = "strict",
) -> Tokenizer:
    """Trains a BPE tokenizer on a corpus.

    corpus: a path (str or Path) to a UTF-8 text file (`.gz` is decompressed), or an iterable whose items are
        texts (str), batches of texts (lists of str, e.g. from `dataset.iter(batch_size=1000)`) or paths (Path
        objects) — a HF `datasets` column such as `dataset["text"]` works as it is. A list or tuple of str
        that all name existing files is read as a list of files. Files are read line by line (each line with
        its line break is one text). Glob patterns ("data/*.txt") are expanded.
    vocab_size: size of the final vocabulary, special tokens and base alphabet included.
    mode: "byte" — symbols are UTF-8 bytes shown with GPT-2's table, so any text can be encoded; or "char" —
        symbols are the characters seen in the corpus.
    pattern: pre-tokenization: "gpt2", "cl100k", "o200k", "whitespace" (HF's `\\w+|[^\\w\\s]+`), None (each text
        is one word), or a regex.
    special_tokens: tokens that get the first ids; they are cut out of the training text and never merged.
    initial_alphabet: "all" (every byte; byte mode), "corpus" (only symbols seen), or characters to add to the
        symbols seen.
    min_frequency: stop when the best pair occurs fewer times.
    lowercase: lowercase text before pre-tokenization (also when encoding), each character on its own as HF's
        Lowercase normaliser does.
    continuing_subword_prefix: e.g. "##": symbols that do not start a word carry it (`h ##u ##g`).
    end_of_word_suffix: e.g. "</w>": the last symbol of each word carries it.
    unk_token: token for characters not in the vocabulary when encoding (added as a special token).
    max_token_length: longest token, in symbols (bytes or characters).
    limit_alphabet: char mode: keep at most this many characters in the base vocabulary (the most frequent;
        those given in initial_alphabet always stay); the others become `unk_token`, which is then required.
    tie_break: which of several equally frequent pairs to merge: "first_seen" (the one met first in the corpus,
        the textbook rule), "hf" (smallest ids first, HF tokenizers' rule — its merges equal BpeTrainer's
        without word markers; see the README for markers) or
        "lexicographic" (the greater pair compared as bytes, Stanford CS336's rule).
    threads: threads for reading and counting words (None: all cores, or RAYON_NUM_THREADS; never more than
        the cores). The result does not depend on it. The merge loop itself runs on one thread (for genomes, its recounts use two).
    progress: show progress on stderr; None shows it when stderr is a terminal. Ctrl-C stops training.
    errors: "strict" (bytes that are not UTF-8 raise, naming file and offset) or "replace".

    If the corpus runs out of pairs before `vocab_size`, training stops with a warning and the smaller vocabulary.

    >>> tok = train(["low lower lowest"] * 5, vocab_size=259)
    >>> tok.merges
    [('l', 'o'), ('lo', 'w'), ('Ġ', 'low')]
    """
    counts = _new_counts(pattern, special_tokens, lowercase, threads)
    show = _show_progress(progress)
    if errors not in ("strict", "replace"):
        raise ValueError(f'errors={errors!r} is not supported: use "strict" or "replace"')
    files = _corpus_files(corpus)
    if show:
        counts.show_progress(None if files is None else sum(os.path.getsize(p) for p in files))
    try:
        if files is not None:
            for path in files:
                counts.add_file(path, errors)
        else:
            for kind, item in _corpus_items(corpus):
                if kind == "file":
                    counts.add_file(item, errors)
                else:
                    counts.add_texts(item)
    finally:
        counts.finish_progress()
    if len(counts) == 0:
        raise ValueError(
            "the corpus is empty: it holds no text to train on"
            + ("" if not counts.bytes_seen else " (everything was whitespace, dropped by pattern='whitespace')"
               if pattern == "whitespace" else f" (the pattern {pattern!r} matched none of its text)")
        )
    _warn_if_the_pattern_drops_text(pattern, counts)
    return _train(counts, vocab_size, mode, initial_alphabet, min_frequency, continuing_subword_prefix,
                  end_of_word_suffix, unk_token, max_token_length, tie_break, show, limit_alphabet)


def train_from_counts(
    word_counts: Mapping[str, int],
    vocab_size: int,
    *,
    mode: Literal["byte", "char"] = "byte",
    pattern: str | None = "gpt2",
    special_tokens: Iterable[str] = (),
    initial_alphabet: Literal["all", "corpus"] | Iterable[str] = "all",
    min_frequency: int = 0,
    lowercase: bool = False,
    continuing_subword_prefix: str | None = None,
    end_of_word_suffix: str | None = None,
    unk_token: str | None = None,
    max_token_length: int | None = None,
    limit_alphabet: int | None = None,
    tie_break: Literal["first_seen", "hf", "lexicographic"] = "first_seen",
    threads: int | None = None,
    progress: bool | None = None,
) -> Tokenizer:
    """Trains from words counted elsewhere: `{word: count}`, in order of first appearance (the order matters
    for tie_break="first_seen"). Words are used as given — not pre-tokenized again — and `pattern` is what
    the tokenizer will use to encode. Words with count 0 are ignored. Other options as in `train`.

    >>> tok = train_from_counts({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}, vocab_size=11,
    ...                         mode="char", unk_token="[UNK]")
    >>> tok.merges
    [('u', 'g'), ('u', 'n'), ('h', 'ug')]
    >>> tok.tokenize("mug")
    ['[UNK]', 'ug']
    """
    if not isinstance(word_counts, Mapping):
        raise TypeError(f"word_counts must be a mapping of word -> count (e.g. a dict or Counter), "
                        f"not {type(word_counts).__name__}")
    items: list[tuple[str, int]] = []
    for word, count in word_counts.items():
        if not isinstance(word, str):
            raise TypeError(f"word_counts keys must be str, got {type(word).__name__} ({word!r})")
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"the count of {word!r} must be an int, got {type(count).__name__}")
        if count < 0:
            raise ValueError(f"the count of {word!r} is {count}; counts must be >= 0")
        if count >= 1 << 64:
            raise ValueError(f"the count of {word!r} is {count}, above the 64-bit limit")
        items.append((word, count))
    # Pair counts are signed 64-bit: past 2**63 - 1 they would stop growing and the merges would be wrong.
    most = sum(count * max(len(word.encode("utf-8")) - 1, 0) for word, count in items)
    if most >= 1 << 63:
        raise ValueError(f"the counts are too large: pairs could be counted up to {most} times, more than the "
                         f"2**63 - 1 a pair count holds; divide the counts by {most // (1 << 62) + 1} or more "
                         f"(the merges depend only on their ratios, up to ties)")
    counts = _new_counts(pattern, special_tokens, lowercase, threads)
    counts.add_counted(items)
    if len(counts) == 0:
        raise ValueError("word_counts is empty (or every count is 0): there is nothing to train on")
    return _train(counts, vocab_size, mode, initial_alphabet, min_frequency, continuing_subword_prefix,
                  end_of_word_suffix, unk_token, max_token_length, tie_break, _show_progress(progress),
                  limit_alphabet)


# -- argument checking and plumbing --------------------------------------------------------------------


def _new_counts(pattern: object, special_tokens: Iterable[str], lowercase: object,
                threads: object = None) -> _core.WordCounts:
    _check_threads(threads)
    _check_pattern(pattern)
    if isinstance(special_tokens, str):
        raise TypeError(f"special_tokens must be a list of strings, not a single string; write [{special_tokens!r}]")
    specials = list(special_tokens)
    for s in specials:
        if not isinstance(s, str):
            raise TypeError(f"special tokens must be str, got {type(s).__name__} ({s!r})")
        if s == "":
            raise ValueError("a special token cannot be the empty string")
    duplicates = sorted({s for s in specials if specials.count(s) > 1})
    if duplicates:
        raise ValueError(f"special_tokens lists {duplicates!r} more than once: list each special token once")
    if not isinstance(lowercase, bool):
        raise TypeError(f"lowercase must be True or False, not {lowercase!r}")
    return _core.WordCounts(pattern, specials, lowercase, _thread_request(threads))


def _train(counts: _core.WordCounts, vocab_size: object, mode: object, initial_alphabet: object, min_frequency: object,
           prefix: object, suffix: object, unk_token: object, max_token_length: object, tie_break: object,
           show: bool, limit_alphabet: object = None) -> Tokenizer:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, not {type(vocab_size).__name__}")
    if vocab_size < 1:
        raise ValueError(f"vocab_size must be positive, got {vocab_size}")
    if vocab_size >= 1 << 31:
        raise ValueError(f"vocab_size={vocab_size} is too large: token ids are below 2**31 (the largest vocabularies "
                         f"in use have a few hundred thousand tokens)")
    if mode not in MODES:
        raise ValueError(f'unknown mode {mode!r}: use "byte" (256-byte base vocabulary, GPT-2 style) or "char" '
                         f"(the characters seen in the corpus)")
    if tie_break not in TIE_BREAKS:
        raise ValueError(f'unknown tie_break {tie_break!r}: use "first_seen" (the textbook rule: the pair met first '
                         f'in the corpus wins), "hf" (HF tokenizers\' rule: the pair with the smallest ids wins) or '
                         f'"lexicographic" (the greater pair, compared as bytes, wins: Stanford CS336\'s rule)')
    if isinstance(min_frequency, bool) or not isinstance(min_frequency, int) or min_frequency < 0:
        raise ValueError(f"min_frequency must be an int >= 0, got {min_frequency!r}")
    if max_token_length is not None and (isinstance(max_token_length, bool) or not isinstance(max_token_length, int)
                                         or max_token_length < 1):
        raise ValueError(f"max_token_length must be None or an int >= 1, got {max_token_length!r}")
    if limit_alphabet is not None and (isinstance(limit_alphabet, bool) or not isinstance(limit_alphabet, int)
                                       or limit_alphabet < 1):
        raise ValueError(f"limit_alphabet must be None or an int >= 1, got {limit_alphabet!r}")
    for name, value in (("continuing_subword_prefix", prefix), ("end_of_word_suffix", suffix), ("unk_token", unk_token)):
        if value is not None and (not isinstance(value, str) or value == ""):
            raise ValueError(f"{name} must be None or a non-empty string, got {value!r}")
    extra: list[str] = []
    if initial_alphabet in ("all", "corpus"):
        alphabet = initial_alphabet
    elif isinstance(initial_alphabet, str):
        raise ValueError(f'unknown initial_alphabet {initial_alphabet!r}: use "all" (every byte), "corpus" (only '
                         f'the symbols seen) or a list of characters, e.g. list("acgt")')
    else:
        alphabet = "corpus"
        for c in initial_alphabet:  # type: ignore[union-attr]
            if not isinstance(c, str) or len(c) != 1:
                raise ValueError(f"initial_alphabet items must be single characters, got {c!r}")
            extra.append(c)
    core, stop = _core.train_counts(counts, vocab_size, mode, alphabet, extra, unk_token, prefix, suffix,
                                    min_frequency, max_token_length, tie_break, show, limit_alphabet)
    tok = Tokenizer(core)
    if stop == "no_pairs_left" and tok.vocab_size < vocab_size:
        warnings.warn(
            f"the corpus ran out of pairs to merge: the vocabulary has {tok.vocab_size} tokens, not the "
            f"{vocab_size} asked for. Train on more text or ask for a smaller vocab_size.",
            RuntimeWarning,
            stacklevel=3,
        )
    return tok


def _corpus_files(corpus: object) -> list[str] | None:
    """The files of a corpus made only of files (a path, a glob, or a list/tuple of paths), else None."""
    if isinstance(corpus, (str, os.PathLike)):
        return _expand_path(corpus, hint_text=isinstance(corpus, str))
    if isinstance(corpus, (list, tuple)) and corpus:
        if all(isinstance(x, os.PathLike) for x in corpus):
            return [p for x in corpus for p in _expand_path(x, hint_text=False)]
        # HF-style list of file names: str items that all name existing files.
        names = all(isinstance(x, str) and "\n" not in x and len(x) < 4096 for x in corpus)
        if names and all(os.path.isfile(x) for x in corpus):
            return [str(x) for x in corpus]
        # Some name files and the others read as paths too: a typo, not a corpus of file names as text.
        if names and any(os.path.isfile(x) for x in corpus) and all(
                os.path.isfile(x) or _reads_as_a_path(x) for x in corpus):  # type: ignore[arg-type]
            missing = [x for x in corpus if not os.path.isfile(x)]  # type: ignore[arg-type]
            found = len(corpus) - len(missing)
            raise FileNotFoundError(f"no such file: {missing[0]!r}" + (f" (and {len(missing) - 1} more)"
                                    if len(missing) > 1 else "") + f"; the list's other {found} item"
                                    f"{' is a file' if found == 1 else 's are files'}. (A list of str is read "
                                    f"as file names when all of them are files, else as texts.)")
    return None


def _reads_as_a_path(text: str) -> bool:
    """A word without spaces that has a path separator or ends in a file extension ("data/a.txt", "b.jsonl")."""
    return not any(c.isspace() for c in text) and bool(re.search(r"[/\\]|\.[A-Za-z][A-Za-z0-9]{0,5}$", text))


def _corpus_items(corpus: object) -> Iterator[tuple[str, object]]:
    """Yields ("file", path) and ("texts", [str, ...]) batches of a corpus that is not only files."""
    if isinstance(corpus, (bytes, bytearray)):
        raise TypeError("corpus must be text (str), a path, or an iterable of those, not bytes; decode it first")
    try:
        iterator = iter(corpus)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(f"corpus must be a path or an iterable of str, not {type(corpus).__name__}") from None
    batch: list[str] = []
    size = 0
    for index, item in enumerate(iterator):
        if isinstance(item, str):
            batch.append(item)
            size += len(item)
        elif isinstance(item, FastaRecord):  # a tuple (name, sequence): train on the sequence only
            batch.append(item.sequence)
            size += len(item.sequence)
        elif isinstance(item, (list, tuple)) and all(isinstance(x, str) for x in item):
            batch.extend(item)  # a batch of texts, as HF's train_from_iterator accepts
            size += sum(map(len, item))
        elif isinstance(item, os.PathLike):
            if batch:
                yield ("texts", batch)
                batch, size = [], 0
            yield from (("file", p) for p in _expand_path(item, hint_text=False))
            continue
        elif isinstance(item, Mapping):
            keys = [k for k, v in item.items() if isinstance(v, str)]
            hint = f' (its text field? pass dataset[{keys[0]!r}])' if keys else ""
            raise TypeError(f"corpus item {index} is a {type(item).__name__} with keys {list(item)[:5]!r}, not a "
                            f"str: pass the column of texts{hint}")
        else:
            raise TypeError(f"corpus item {index} is a {type(item).__name__}, not a str (text), a list of str "
                            f"(a batch of texts) or a Path (file)")
        if size >= _BATCH_CHARS:
            yield ("texts", batch)
            batch, size = [], 0
    if batch:
        yield ("texts", batch)


def _expand_path(path: PathLike, hint_text: bool) -> list[str]:
    p = os.fspath(path)
    if any(ch in p for ch in "*?[") and not os.path.exists(p):
        matches = sorted(_glob.glob(p, recursive=True))
        if not matches:
            raise FileNotFoundError(f"no file matches {p!r}")
        return matches
    if not os.path.exists(p):
        hint = " To train on a text, pass it in a list: train([text], ...)." if hint_text else ""
        raise FileNotFoundError(f"no such file: {p!r}.{hint}")
    if os.path.isdir(p):
        raise IsADirectoryError(f"{p!r} is a directory: pass the files in it, e.g. {os.path.join(p, '*.txt')!r}")
    return [p]


def _show_progress(progress: object) -> bool:
    if progress is None:
        return sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, not {progress!r}")
    return progress


def _warn_if_the_pattern_drops_text(pattern: str | None, counts: _core.WordCounts) -> None:
    """A custom pattern that leaves text out of every piece (r"[a-z]+" drops spaces, digits, capitals...): the
    text it does not match is neither trained on nor encoded (as with tiktoken), and decode(encode(text)) loses
    it. Said once, at training, with how much; the named patterns cover all text (except "whitespace", which
    drops whitespace by design)."""
    if pattern is None or pattern in NAMED_PATTERNS or not counts.bytes_seen:
        return
    text_bytes = counts.bytes_seen - counts.special_bytes()
    kept = counts.word_bytes() / text_bytes if text_bytes > 0 else 1.0
    if kept < 0.99:  # (lowercasing can change a few lengths)
        warnings.warn(f"the pattern {pattern!r} matched {kept:.1%} of the training text: the rest is in no piece, "
                      f"so it was not trained on, and encoding drops it too (decode(encode(text)) != text). If that "
                      f"is not what you want, make the pattern match every character (appending |\\s+|. to it "
                      f"does).",
                      RuntimeWarning, stacklevel=3)


def _check_pattern(pattern: object) -> None:
    """A pattern is a name, None or a regex; a plain word that is not a name is a misspelt name (taken as a regex,
    "gtp2" would match nothing, and every text would encode to [])."""
    if pattern is not None and not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str or None, not {type(pattern).__name__}")
    if isinstance(pattern, str) and pattern.strip() == "":
        raise ValueError(f"pattern={pattern!r} is empty: use one of {', '.join(NAMED_PATTERNS[:4])}, None, or a regex")
    if isinstance(pattern, str) and pattern.isidentifier() and pattern not in NAMED_PATTERNS:
        raise ValueError(f"unknown pattern {pattern!r}: use one of {', '.join(map(repr, NAMED_PATTERNS[:4]))}, "
                         f"None (no split), or a regex (a plain word like {pattern!r} is taken for a misspelt name)")


def _check_threads(threads: object) -> None:
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be None (all cores) or an int >= 1, got {threads!r}")


def _write_whole(path: Path, text: str, encoding: str) -> None:
    """Writes `text` to `path` whole or not at all: into a temporary file beside it, renamed when complete, and
    removed if writing fails (a full disk), which is then said with the file's name."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding=encoding)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if e.filename is None:  # a failed write names no file
            raise OSError(e.errno, e.strerror or str(e), os.fspath(path)) from e
        raise


def _thread_request(threads: int | None) -> int:
    """`threads` as the core takes it: 0 for the default; the core gives no more threads than cores, and this
    keeps a number of any size within what it can take."""
    return 0 if threads is None else min(threads, 1 << 16)


def _check_str(text: object, name: str) -> None:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a str, not {type(text).__name__}"
                        + ("; decode bytes first" if isinstance(text, (bytes, bytearray)) else ""))


def _as_id(value: object) -> int:
    if isinstance(value, bool):
        raise TypeError("an id must be an int, not bool")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"an id must be an int, not {type(value).__name__}") from None


def _check_ids(ids: Iterable[int]) -> list[int]:
    if isinstance(ids, (bytes, bytearray, memoryview, str)):  # iterable, but not ids (b"ab" would be [97, 98])
        raise TypeError(f"ids must be a list of token ids (ints), not {type(ids).__name__}; to read a binary id "
                        f"file, use numpy.frombuffer(data, dtype='<u2' or '<u4')")
    out = []
    for position, item in enumerate(ids):
        try:
            if isinstance(item, bool):
                raise TypeError
            i = operator.index(item)  # int, numpy integers
        except TypeError:
            raise TypeError(f"ids must be ints; item {position} is {type(item).__name__} ({item!r})") from None
        if i < 0 or i >= 1 << 32:
            raise ValueError(f"id {i} (at position {position}) is not in the vocabulary")
        out.append(i)
    return out
