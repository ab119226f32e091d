"""The `Tokenizer` class: encoding, decoding and the vocabulary of a trained or loaded BPE tokenizer. Reading and
writing files is delegated to `bytepair.formats` (one module per format); training is in `bytepair.training`.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast, overload

from . import _core
from ._checks import as_id, check_ids, check_str, check_texts, check_threads, thread_request

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import tiktoken

    from .compat.tiktoken import Encoding as TiktokenEncoding
    from .corpus import Corpus
    from .training import TieBreak, Veto

__all__ = ["Tokenizer", "TokenizerSettings"]

PathLike = str | os.PathLike[str]


class TokenizerSettings(TypedDict):
    """How a tokenizer cuts text (`Tokenizer.settings`)."""

    mode: Literal["byte", "char"]
    #: A pattern name ("gpt2", "cl100k", "o200k", "whitespace"), a regex, or None (no split).
    pattern: str | None
    lowercase: bool
    continuing_subword_prefix: str | None
    end_of_word_suffix: str | None
    unk_token: str | None
    #: How training broke ties ("first_seen", "hf", "lexicographic"); None for loaded vocabularies.
    tie_break: str | None
    #: What a regex pattern does with the text it does not match ("keep", "drop", "error"); None for named
    #: patterns, no pattern, and HF Split steps (see `split`).
    unmatched: str | None
    #: A HF tokenizer.json's Split step that bytepair keeps as such (its regex is `pattern`, in Oniguruma's
    #: syntax): {"behavior": "Isolated"|"Removed"|"MergedWithPrevious"|"MergedWithNext"|"Contiguous",
    #: "invert": bool}; None otherwise.
    split: dict[str, str | bool] | None


class Tokenizer:  # noqa: PLW1641  (equal when their files are: unhashable, as that would be slow)
    """A BPE tokenizer: special tokens, a pre-tokenization pattern, a base alphabet and merges.

    Get one from `bytepair.train`, `bytepair.train_from_counts` or `Tokenizer.load`.

    Ids: special tokens first, then the base alphabet in code-point order of its display form, then one id
    per merge (in merge order) that made a new token.
    """

    # Pickles (and reprs of the class) name `bytepair.Tokenizer`, where users import it from, whichever module
    # defines it: tokenizers pickled by any version load in any other.
    __module__ = "bytepair"

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

    @property
    def core(self) -> _core.CoreTokenizer:
        """The core's tokenizer object (`bytepair._core.CoreTokenizer`), which the format modules save and the
        command line asks for its layout: a seam within the package, not an API of its own."""
        return self._core

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
        check_str(text, "text")
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        return self._core.encode(text, allowed, disallowed)

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, treating special-token text as ordinary text."""
        check_str(text, "text")
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
        check_threads(threads)
        items = check_texts(texts)
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        with _no_cyclic_gc() as collector_was_on:
            return self._core.encode_batch(items, allowed, disallowed, thread_request(threads), collector_was_on)

    def encode_batch_packed(
        self,
        texts: Iterable[str],
        *,
        width: Literal[2, 4] = 4,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
        threads: int | None = None,
    ) -> tuple[bytearray, list[int]]:
        """The ids of each text (encoded in parallel, as `encode_batch`) in one buffer of little-endian ids of
        `width` bytes (4: uint32; 2: uint16, ValueError if an id does not fit), with each text's number of ids:
        what token files and numpy arrays are made from, without a Python int per id.

        >>> tok = train(["low lower lowest"] * 5, vocab_size=259)
        >>> packed, lengths = tok.encode_batch_packed(["low", "lower"], width=2)
        >>> lengths, len(packed)
        ([1, 3], 8)
        """
        check_threads(threads)
        items = check_texts(texts)
        if width not in (2, 4):
            raise ValueError(f"width must be 2 or 4 (bytes per id), not {width!r}")
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        return self._core.encode_packed(items, allowed, disallowed, thread_request(threads), width)

    def encode_batch_padded(
        self,
        texts: Iterable[str],
        pad_id: int,
        *,
        max_length: int | None = None,
        truncate: bool = False,
        side: Literal["right", "left"] = "right",
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
        threads: int | None = None,
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """The texts encoded in parallel (as `encode_batch`) into one 2-D uint32 array, a row per text, padded with
        `pad_id` to the longest row (or to `max_length`), and each row's number of ids (its attention-mask length):
        what a model is fed. `side="left"` pads before the ids (for generation). A text with more than
        `max_length` ids is a ValueError unless `truncate=True`, which keeps its first `max_length` ids.

        >>> tok = train(["low lower lowest"] * 5, vocab_size=263, special_tokens=["<pad>"])
        >>> ids, lengths = tok.encode_batch_padded(["low", "lower lowest"], pad_id=tok.token_to_id("<pad>"))
        >>> ids.tolist(), lengths.tolist()
        ([[258, 0, 0, 0, 0], [258, 69, 82, 262, 84]], [1, 5])
        >>> tok.encode_batch_padded(["low", "lower lowest"], 0, max_length=2, truncate=True, side="left")[0].tolist()
        [[0, 258], [258, 69]]
        """
        import numpy as np

        pad = as_id(pad_id)
        if not 0 <= pad < self._size:
            raise ValueError(f"pad_id {pad} is not in the vocabulary: ids are 0 to {self._size - 1}")
        if max_length is not None and (
            isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 0
        ):
            raise ValueError(f"max_length must be None or an int >= 0, got {max_length!r}")
        if side not in ("right", "left"):
            raise ValueError(f'side must be "right" or "left", not {side!r}')
        if not isinstance(truncate, bool):
            raise TypeError(f"truncate must be True or False, not {truncate!r}")
        packed, counts = self.encode_batch_packed(
            texts, allowed_special=allowed_special, disallowed_special=disallowed_special, threads=threads
        )
        flat = np.frombuffer(packed, dtype="<u4")
        lengths = np.asarray(counts, dtype=np.int64)
        longest = int(lengths.max()) if len(lengths) else 0
        width = longest if max_length is None else max_length
        if longest > width:
            if not truncate:
                row = int(np.argmax(lengths > width))
                raise ValueError(
                    f"text {row} has {int(lengths[row])} ids, more than max_length={width}: pass truncate=True to "
                    f"keep the first {width} ids of such texts, or a larger max_length"
                )
            # Each id's place within its text; the ones past `width` are dropped.
            starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
            flat = flat[np.arange(len(flat)) - starts < width]
            lengths = np.minimum(lengths, width)
        out = np.full((len(lengths), width), pad, dtype=np.uint32)
        columns = np.arange(width)
        filled = columns < lengths[:, None] if side == "right" else columns >= width - lengths[:, None]
        out[filled] = flat  # row by row, in order: each row's ids fill its cells left to right
        return out, lengths

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

    @overload
    def encode_to_numpy(  # type: ignore[overload-overlap]  # a str is also an Iterable[str]; it comes first
        self,
        text: str,
        *,
        dtype: str = ...,
        allowed_special: Literal["all"] | Collection[str] = ...,
        disallowed_special: Literal["all"] | Collection[str] = ...,
        threads: int | None = ...,
    ) -> npt.NDArray[np.unsignedinteger[Any]]: ...

    @overload
    def encode_to_numpy(
        self,
        text: Iterable[str],
        *,
        dtype: str = ...,
        allowed_special: Literal["all"] | Collection[str] = ...,
        disallowed_special: Literal["all"] | Collection[str] = ...,
        threads: int | None = ...,
    ) -> list[npt.NDArray[np.unsignedinteger[Any]]]: ...

    def encode_to_numpy(
        self,
        text: str | Iterable[str],
        *,
        dtype: str = "uint32",
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
        threads: int | None = None,
    ) -> npt.NDArray[np.unsignedinteger[Any]] | list[npt.NDArray[np.unsignedinteger[Any]]]:
        """Token ids as a numpy array (no Python int per id): one array for a str, a list of arrays for several
        texts (encoded in parallel; `encode_batch_to_numpy` gives them as one flat array with offsets). For one
        text with the defaults, this is the fastest way to encode it: the core makes the array itself. dtype
        "uint16" needs a vocabulary of at most 65 536 ids (GPT-2, r50k, p50k; not cl100k or o200k) — else
        ValueError, before encoding anything.

        >>> tok = train(["low lower lowest"] * 5, vocab_size=259)
        >>> tok.encode_to_numpy("lower lowest").tolist() == tok.encode("lower lowest")
        True
        >>> tok.encode_to_numpy("lower lowest", dtype="uint16").dtype
        dtype('uint16')
        """
        if (
            type(text) is str
            and dtype == "uint32"
            and type(allowed_special) is frozenset
            and not allowed_special
            and type(disallowed_special) is str
            and disallowed_special == "all"
        ):
            return self._core.encode_numpy(text)  # the defaults: the core's own policy, no checks to repeat
        # (The usual dtype is settled without numpy: its checks cost more than encoding a short text.)
        narrow = not (isinstance(dtype, str) and dtype == "uint32") and self._narrow_dtype(dtype)
        if isinstance(text, str):
            # One text, other options: straight into an array the core made (through the batch path, a 4 KB
            # document took ~6× the time).
            check_threads(threads)
            one = self._core.encode_numpy(text, *self._policy(allowed_special, disallowed_special))
            return one.astype("uint16") if narrow else one
        import numpy as np

        packed, lengths = self.encode_batch_packed(
            text,
            width=2 if narrow else 4,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            threads=threads,
        )
        ids: npt.NDArray[np.unsignedinteger[Any]] = np.frombuffer(packed, dtype="<u2" if narrow else "<u4")
        if not ids.dtype.isnative:  # pragma: no cover (big-endian machines)
            ids = ids.astype(ids.dtype.newbyteorder("="))
        return np.split(ids, np.cumsum(lengths)[:-1]) if lengths else []

    def encode_batch_to_numpy(
        self,
        texts: Iterable[str],
        *,
        threads: int | None = None,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """The ids of all `texts`, encoded in parallel (threads=None: every core; never more than the cores), as
        one flat uint32 array, and int64 offsets, one more than there are texts: the ids of `texts[i]` are
        `ids[offsets[i]:offsets[i + 1]]`. No Python object per id, and the calling thread waits with the GIL
        released. Special tokens follow `encode`'s rules; an error names the text it is about.

        >>> tok = train(["low lower lowest"] * 5, vocab_size=259)
        >>> ids, offsets = tok.encode_batch_to_numpy(["low", "", "lower"])
        >>> offsets.tolist(), ids[offsets[2] : offsets[3]].tolist() == tok.encode("lower")
        ([0, 1, 1, 4], True)
        """
        check_threads(threads)
        items = check_texts(texts)
        if (
            type(allowed_special) is frozenset
            and not allowed_special
            and type(disallowed_special) is str
            and disallowed_special == "all"
        ):
            return self._core.encode_batch_numpy(items, thread_request(threads))
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        return self._core.encode_batch_numpy(items, thread_request(threads), allowed, disallowed)

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
        check_str(text, "text")
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
        check_str(text, "text")
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        return self._core.count(text, allowed, disallowed)

    # -- existing vocabularies --------------------------------------------------------------------------

    @classmethod
    def from_tiktoken(
        cls,
        path: PathLike,
        *,
        pattern: str | None = "cl100k",
        special_tokens: Mapping[str, int] | None = None,
        unmatched: Literal["keep", "drop", "error"] | None = None,
    ) -> Tokenizer:
        """A tokenizer from a tiktoken rank file (`*.tiktoken`: base64 token and rank per line). Its ids and
        encodings equal tiktoken's: tiktoken's merge rule (any two adjacent parts whose concatenation is a
        token merge, lowest rank first; a piece that is a token stays whole) is kept.

        pattern: the pre-tokenizer the vocabulary was made with ("gpt2" for r50k/p50k, "cl100k", "o200k", or a
        regex).
        special_tokens: {text: id}, e.g. {"<|endoftext|>": 100257}.
        unmatched: for a regex pattern, what becomes of text it does not match (see `bytepair.train`): "keep"
            (default), "drop" (tiktoken's way: its ids then equal tiktoken's on every text) or "error".
        """
        from .formats import tiktoken

        return tiktoken.load(path, pattern=pattern, special_tokens=special_tokens, unmatched=unmatched)

    @classmethod
    def from_gpt2(
        cls,
        vocab_json: PathLike,
        merges_txt: PathLike,
        *,
        special_tokens: Iterable[str] | None = None,
        pattern: str | None = "gpt2",
        unmatched: Literal["keep", "drop", "error"] | None = None,
    ) -> Tokenizer:
        """A tokenizer from GPT-2's `encoder.json` + `vocab.bpe`, or HF's `vocab.json` + `merges.txt`
        (byte-level BPE). Merges apply in the file's order, as HF tokenizers does.

        special_tokens: tokens of vocab.json that are special (default: "<|endoftext|>" if present).
        unmatched: for a regex pattern, what becomes of text it does not match (see `bytepair.train`).
        """
        from .formats import gpt2

        return gpt2.load(vocab_json, merges_txt, special_tokens=special_tokens, pattern=pattern, unmatched=unmatched)

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
        a Split regex that keeps the text between its matches as pieces (Isolated; unmatched="keep" or "error")
        or drops it (Removed, inverted; unmatched="drop"); a Split read from a HF file is written back as it was.
        HF runs the regex with Oniguruma, which reads the usual syntax (\s, \d, \p{..}, look-arounds) as
        bytepair does, but not all of it: Oniguruma's \w also takes ² ³ ¹ ¼ ½ ¾ and not the zero-width
        (non-)joiners, ^ and $ are line anchors, POSIX classes ([[:alpha:]]) are Unicode, `{1,3}+` repeats the
        repeat. A regex Oniguruma would read differently is refused (ValueError naming the construct): write it
        with \p{L}, \p{N}, \s and explicit sets.

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
        from .formats import hf

        hf.save(self, path)

    def save_tiktoken(self, path: PathLike) -> None:
        """Writes a tiktoken rank file (base64 token and id per line; special tokens are not in it — pass them
        to tiktoken yourself, see `to_tiktoken`). tiktoken loaded with it gives this tokenizer's ids; a
        vocabulary for which tiktoken's rule would differ, or without a token for every byte (tiktoken has no
        unknown token), is refused with ValueError."""
        from .formats import tiktoken

        tiktoken.save(self, path)

    def to_tiktoken(self, name: str = "bytepair") -> tiktoken.Encoding:
        """A `tiktoken.Encoding` with this tokenizer's pattern, ranks and special tokens (needs tiktoken).

        Its ids equal this tokenizer's, with one exception in tiktoken's matching of special tokens: where one
        special token starts another ("<a>" and "<a><b>"), bytepair (and HF) take the longest at a position,
        tiktoken may take the shorter one (it did in every run tried: "x<a><b>y" gave "<a>" then the text
        "<b>").

        tiktoken keeps only what its pattern matches: a regex pattern made with unmatched="keep" is given to it
        with an alternative that matches the rest (refused with ValueError when the regex can match the empty
        string, where no such alternative is exact), and a HF Split step is refused.
        """
        from .formats import tiktoken

        return tiktoken.to_encoding(self, name)

    def as_tiktoken(self, name: str = "bytepair") -> TiktokenEncoding:
        """This tokenizer behind tiktoken's `Encoding` interface — `encode`, `encode_ordinary`, `encode_batch`,
        `decode`, `decode_single_token_bytes`, `n_vocab`, `eot_token`, ... with tiktoken's arguments, results and
        exceptions — encoding with bytepair's core: a drop-in for code written for tiktoken (see
        `bytepair.compat.tiktoken`). Byte-level tokenizers only. `to_tiktoken` instead makes a real
        `tiktoken.Encoding`, which encodes with tiktoken.

        >>> tok = train(["hello world"] * 5, vocab_size=260, special_tokens=["<|endoftext|>"])
        >>> enc = tok.as_tiktoken("mine")
        >>> enc.encode("hello world") == tok.encode("hello world"), enc.n_vocab, enc.eot_token
        (True, 260, 0)
        """
        from .compat.tiktoken import Encoding

        return Encoding(self, name)

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
        WhitespaceSplit (pattern r"\S+"), BertPreTokenizer or Split; no normaliser or Lowercase.

        A Split (in either kind of file, before ByteLevel in byte-level ones) cuts as HF's does, with every
        behaviour (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous) and `invert`, empty matches
        included. Its regex is Oniguruma's, as HF reads it: bytepair rewrites it for its own engines where the
        two differ (\w, \b, ^ and $, POSIX classes, `{n,m}+`, options in the middle of a group...) and refuses,
        when the file is loaded, what it cannot run exactly (back-references, \K, \R, (?x), case-insensitive
        non-ASCII or "ss"-like letter pairs...), naming it. `settings["split"]` shows a Split kept as such; one
        that keeps (Isolated) or drops (inverted Removed) the text between matches of a regex read alike by both
        is an ordinary regex pattern with `settings["unmatched"]` "keep" or "drop". The file's decoder is not used: `decode` takes the `##`/`</w>` markers off,
        and puts a space back between words when the pre-tokenizer drops whitespace (as HF's BPEDecoder and
        WordPiece decoders do); with no markers and a whitespace-dropping pre-tokenizer it joins the tokens
        without spaces, where HF (no decoder) joins them with one. Without an unk_token, HF
        drops characters it has no token for; bytepair raises ValueError naming the character.

        Anything else — WordPiece/Unigram models, byte_fallback (except in a byte-level model with a token for
        every byte, where it never acts), dropout, other normalisers (NFKC,
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
        from .formats import hf

        return hf.load(tokenizer_json)

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
        return self._core.decode_bytes(check_ids(ids))

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
        id = as_id(id)
        return (self._strings[id] or None) if 0 <= id < self._size else None

    def token_bytes(self, id: int) -> bytes:
        """The raw bytes of one token (without `##` or end-of-word markers)."""
        id = as_id(id)
        if not 0 <= id < self._size:
            raise ValueError(f"id {id} is not in the vocabulary: valid ids are 0 to {self._size - 1}")
        if not self._strings[id]:  # every token has a spelling; an empty one is a gap in the ids
            raise ValueError(f"id {id} is unused in this vocabulary: no token has it")
        return self._core.token_bytes(id)

    @property
    def settings(self) -> TokenizerSettings:
        """How the tokenizer cuts text: mode, pattern, lowercase, markers, unk_token, tie_break."""
        mode, pattern, regex, lowercase, prefix, suffix, unk, tie_break = self._core.settings()
        unmatched, split = self._core.split_settings()
        return {
            "mode": cast('Literal["byte", "char"]', mode),
            "pattern": pattern if regex is None else regex,
            "lowercase": lowercase,
            "continuing_subword_prefix": prefix,
            "end_of_word_suffix": suffix,
            "unk_token": unk,
            "tie_break": tie_break,
            "unmatched": unmatched,
            "split": None if split is None else {"behavior": split[0], "invert": split[1]},
        }

    # -- growing and cutting down -----------------------------------------------------------------------

    @overload
    def extend(
        self,
        corpus: Corpus,
        vocab_size: int,
        *,
        min_frequency: int = ...,
        max_token_length: int | None = ...,
        tie_break: TieBreak | None = ...,
        forbid_across: str | Iterable[str] = ...,
        veto: Veto | None = ...,
        threads: int | None = ...,
        progress: bool | None = ...,
        errors: Literal["strict", "replace"] = ...,
    ) -> Tokenizer: ...

    @overload
    def extend(
        self,
        corpus: Corpus,
        vocab_size: Sequence[int],
        *,
        min_frequency: int = ...,
        max_token_length: int | None = ...,
        tie_break: TieBreak | None = ...,
        forbid_across: str | Iterable[str] = ...,
        veto: Veto | None = ...,
        threads: int | None = ...,
        progress: bool | None = ...,
        errors: Literal["strict", "replace"] = ...,
    ) -> list[Tokenizer]: ...

    def extend(
        self,
        corpus: Corpus,
        vocab_size: int | Sequence[int],
        *,
        min_frequency: int = 0,
        max_token_length: int | None = None,
        tie_break: TieBreak | None = None,
        forbid_across: str | Iterable[str] = (),
        veto: Veto | None = None,
        threads: int | None = None,
        progress: bool | None = None,
        errors: Literal["strict", "replace"] = "strict",
    ) -> Tokenizer | list[Tokenizer]:
        """A new tokenizer: this one, with merges learned on `corpus` (a new language, code, a domain) until it
        has `vocab_size` ids (or a list of sizes: one tokenizer per size, from one run).

        Every existing id and merge stays: each word of the corpus is first encoded as this tokenizer encodes it
        (its merges in rank order), then merging continues as `train` does, with this tokenizer's pattern,
        special tokens and normaliser. New tokens take the ids after the largest existing one (unused ids, such
        as cl100k_base's, stay unused; special tokens keep theirs). On the corpus and options a tokenizer was
        trained with, `train(c, n).extend(c, m)` makes exactly the merges of `train(c, m)`. Works on loaded
        tokenizers too (GPT-2, tiktoken's encodings, HF tokenizer.json), and the result saves and exports like
        any other. A tiktoken vocabulary merges by its merges list once extended (which gives its own ids: it is
        checked first).

        tie_break: how ties are broken (default: this tokenizer's own rule, or "first_seen" when it was not
        trained here). Other options as in `train`.

        >>> tok = train(["low lower lowest"] * 5, vocab_size=258)
        >>> tok.extend(["low lower lowest"] * 5, vocab_size=259).merges == train(["low lower lowest"] * 5, 259).merges
        True
        """
        from .training import extend

        return extend(
            self,
            corpus,
            vocab_size,
            min_frequency=min_frequency,
            max_token_length=max_token_length,
            tie_break=tie_break,
            forbid_across=forbid_across,
            veto=veto,
            threads=threads,
            progress=progress,
            errors=errors,
        )

    def truncate(self, vocab_size: int) -> Tokenizer:
        """This tokenizer cut down to `vocab_size` ids. For a tokenizer trained here that is exactly what training
        with `vocab_size` gives: its first merges, up to the one that made token `vocab_size - 1`. For a
        vocabulary whose ids come from a file (GPT-2, tiktoken's, HF's), the tokens with ids below `vocab_size`
        and the merges among them; special tokens keep their ids.

        >>> tok = train(["low lower lowest"] * 5, vocab_size=259)
        >>> tok.truncate(258).merges
        [('l', 'o'), ('lo', 'w')]
        """
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
            raise TypeError(f"vocab_size must be an int, not {type(vocab_size).__name__}")
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be positive, got {vocab_size}")
        return Tokenizer(self._core.truncated(vocab_size))

    # -- files ------------------------------------------------------------------------------------------

    def save(self, path: PathLike) -> None:
        """Writes the tokenizer in bytepair's own format: one human-readable JSON file (settings, special
        tokens, alphabet, then one merge per line with its count). `Tokenizer.load` reads it back exactly."""
        from .formats import native

        native.save(self, path)

    @classmethod
    def load(
        cls, path: PathLike, *, pattern: str | None = None, special_tokens: Mapping[str, int] | None = None
    ) -> Tokenizer:
        """Reads a tokenizer from what you have: a file written by `save` (bytepair's JSON), a folder written by
        `bytepair train -o` or `save_pretrained` (or by transformers, for a BPE tokenizer), a HF `tokenizer.json`,
        or a tiktoken rank file — named after its encoding (`cl100k_base.tiktoken`), or with the `pattern` it was
        made with (and its `special_tokens`, text -> id). What it cannot read is a ValueError saying what it found
        (a compressed file, a vocab.json without its merges.txt, ...). See `bytepair.load_tokenizer`, which takes
        encoding names too.

        >>> import os, tempfile
        >>> tok = train(["low lower lowest"] * 5, vocab_size=259)
        >>> folder = tempfile.mkdtemp()
        >>> _ = tok.save_pretrained(folder)
        >>> Tokenizer.load(folder) == Tokenizer.load(os.path.join(folder, "bytepair.json")) == tok
        True
        >>> Tokenizer.load(os.path.join(folder, "tokenizer.tiktoken"), pattern="gpt2").encode("lowest") == tok.encode("lowest")
        True
        """
        from .formats import load_tokenizer

        if not os.path.exists(path):
            raise FileNotFoundError(
                f"no such tokenizer file or folder: {os.fspath(path)!r}"
                + (" (for an encoding name, use bytepair.get_encoding)" if os.sep not in os.fspath(path) else "")
            )
        return load_tokenizer(path, pattern=pattern, special_tokens=special_tokens)

    def save_pretrained(
        self,
        folder: PathLike,
        *,
        bos_token: str | None = None,
        eos_token: str | None = None,
        unk_token: str | None = None,
        pad_token: str | None = None,
        default_roles: bool = True,
        model_max_length: int | None = None,
    ) -> list[str]:
        """Writes the tokenizer into `folder` (made if missing) so that `transformers.AutoTokenizer.from_pretrained
        (folder)` loads it with this tokenizer's ids: tokenizer.json, and tokenizer_config.json and
        special_tokens_map.json with the special tokens' roles — the ones given, and by default a special token of
        a well-known name for the others (<|endoftext|> or </s> as eos, <s> as bos, <pad> as pad) and the
        unk_token; `default_roles=False` gives only those passed. The folder also gets bytepair.json (read back by
        `from_pretrained` exactly) and, for byte-level tokenizers, tokenizer.tiktoken: the set `bytepair train -o`
        writes, switched as one. Returns the paths written. ValueError for a role token that is not a special token,
        or a tokenizer that HF's tokenizer.json cannot hold (byte-level with word markers).

        >>> import tempfile, transformers
        >>> tok = train(["hello world"] * 10, vocab_size=266, special_tokens=["<|endoftext|>", "<pad>"])
        >>> folder = tempfile.mkdtemp()
        >>> _ = tok.save_pretrained(folder)
        >>> hf = transformers.AutoTokenizer.from_pretrained(folder)
        >>> hf.eos_token, hf.pad_token_id, hf("hello world")["input_ids"] == tok.encode("hello world")
        ('<|endoftext|>', 1, True)
        """
        from .compat.transformers import save_pretrained

        written = save_pretrained(
            self,
            folder,
            bos_token=bos_token,
            eos_token=eos_token,
            unk_token=unk_token,
            pad_token=pad_token,
            default_roles=default_roles,
            model_max_length=model_max_length,
        )
        return [os.fspath(p) for p in written]

    @classmethod
    def from_pretrained(cls, folder: PathLike) -> Tokenizer:
        """The tokenizer of a folder written by `save_pretrained` or `bytepair train -o`, or by transformers'
        `save_pretrained` for a BPE tokenizer (its tokenizer.json, or vocab.json + merges.txt), with the same ids.
        Never downloads: for a tokenizer on the Hugging Face Hub, fetch the folder first. The roles its
        tokenizer_config.json gives are read by `bytepair.compat.transformers.read_roles(folder)`."""
        from .compat.transformers import from_pretrained

        return from_pretrained(folder)

    def __getstate__(self) -> str:
        return self._core.to_native()

    def __setstate__(self, state: str) -> None:
        Tokenizer.__init__(self, _core.CoreTokenizer.from_native(state, "pickled Tokenizer"))

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
        for key in ("lowercase", "continuing_subword_prefix", "end_of_word_suffix", "unk_token", "unmatched", "split"):
            if s[key]:
                parts.append(f"{key}={s[key]!r}")
        return f"Tokenizer({', '.join(parts)})"

    def _narrow_dtype(self, dtype: object) -> bool:
        """Whether `dtype` (checked: uint16 or uint32, and uint16 only for a vocabulary it holds) is uint16."""
        import numpy as np

        if dtype not in ("uint16", "uint32", np.uint16, np.uint32):
            raise ValueError(f"dtype must be uint16 or uint32, got {dtype!r}")
        narrow = bool(np.dtype(dtype) == np.uint16)
        if narrow and self.vocab_size > 1 << 16:
            raise ValueError(f"this vocabulary has {self.vocab_size} ids, more than uint16 holds: use dtype='uint32'")
        return narrow

    def _policy(self, allowed_special: object, disallowed_special: object) -> tuple[list[bool], list[bool]]:
        """tiktoken-style special-token arguments as one flag per special token: (allowed, disallowed)."""
        if (
            type(allowed_special) is frozenset
            and not allowed_special
            and type(disallowed_special) is str
            and disallowed_special == "all"
        ):
            return self._default_policy  # the defaults
        return (
            self._special_flags(allowed_special, "allowed_special"),
            self._special_flags(disallowed_special, "disallowed_special"),
        )

    def _special_flags(self, value: object, name: str) -> list[bool]:
        if value == "all":
            return [True] * len(self._specials)
        if isinstance(value, str):
            raise TypeError(
                f'{name} must be "all" or a collection of special-token strings, not the string {value!r}; '
                f"write {name}={{{value!r}}}"
            )
        try:
            chosen = set(value)  # type: ignore[call-overload]
        except TypeError:
            raise TypeError(f'{name} must be "all" or a collection of special-token strings') from None
        unknown = chosen - set(self._specials)
        if unknown:
            raise ValueError(
                f"{name} names {sorted(unknown)!r}, which are not special tokens of this tokenizer "
                f"(its special tokens: {self._specials!r})"
            )
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
