"""tiktoken's `Encoding` interface over a bytepair tokenizer, for code written against tiktoken: the same names,
arguments, results and exceptions, with the encoding done by bytepair's core. `Tokenizer.as_tiktoken()` makes one;
`get_encoding(name)` is tiktoken's function of that name for the encodings bytepair ships. (`Tokenizer.to_tiktoken()`
is different: it builds a real `tiktoken.Encoding`, which encodes with tiktoken.)

Where this object follows tiktoken rather than bytepair's own API:

- a lone surrogate in a `str` (which has no UTF-8 form) is replaced by U+FFFD, and a surrogate pair joined into its
  character, as tiktoken's `encode` does — here in every encoding method (tiktoken's `encode_to_numpy` raises);
  bytepair's own `Tokenizer.encode` raises UnicodeEncodeError instead;
- `allowed_special` / `disallowed_special` take any strings: names that are not special tokens are ignored in
  `allowed_special` and looked for in the text in `disallowed_special`, as tiktoken does;
- ids that are not in the vocabulary raise KeyError (bytepair raises ValueError);
- `decode(tokens, errors=...)` takes every error handler of `bytes.decode` ("ignore" too).

Ids are bytepair's, which for the OpenAI encodings are tiktoken's. The test suite of tiktoken's own source release
runs against this class (tests/test_tiktoken_suite.py).

>>> import bytepair
>>> tok = bytepair.train(["hello world, hello there"] * 10, vocab_size=268, special_tokens=["<|endoftext|>"])
>>> enc = tok.as_tiktoken("demo")
>>> enc
<Encoding 'demo' (bytepair)>
>>> enc.decode(enc.encode("hello world"))
'hello world'
>>> enc.encode("hello<|endoftext|>", allowed_special="all")[-1] == enc.eot_token
True
>>> enc.decode_tokens_bytes(enc.encode("hello world"))
[b'hello', b' world']
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .._tokenizer import Tokenizer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Encoding", "get_encoding", "list_encoding_names"]

SpecialArgument = Literal["all"] | Collection[str]

# The whole text as one piece: what a tokenizer without a pattern (pattern=None) does, as a tiktoken regex.
WHOLE_TEXT_PATTERN = r"[\s\S]+"


def replace_surrogates(text: str) -> str:
    """`text` as tiktoken encodes a `str` that has no UTF-8 form: surrogate pairs joined into their character,
    lone surrogates replaced by U+FFFD.

    >>> replace_surrogates("\\ud83d\\udc4d"), replace_surrogates("a\\ud83d")
    ('👍', 'a�')
    """
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class Encoding:
    """tiktoken's `Encoding` (0.14) interface over a byte-level bytepair `Tokenizer` (see the module docstring).

    Made by `Tokenizer.as_tiktoken(name)` or `get_encoding(name)`. `tokenizer` is the bytepair tokenizer underneath.
    """

    def __init__(self, tokenizer: Tokenizer, name: str = "bytepair") -> None:
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"Encoding wraps a bytepair.Tokenizer, not {type(tokenizer).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        settings = tokenizer.settings
        if settings["mode"] != "byte" or settings["continuing_subword_prefix"] or settings["end_of_word_suffix"]:
            raise ValueError(
                "tiktoken's interface is for byte-level BPE (every byte a token, no word markers); this tokenizer is "
                f"{settings['mode']}-level"
                + (
                    " with word markers"
                    if settings["continuing_subword_prefix"] or settings["end_of_word_suffix"]
                    else ""
                )
                + ": use its own API (encode, decode, save_pretrained for transformers)"
            )
        if settings["lowercase"]:
            raise ValueError(
                "tiktoken has no normaliser, and this tokenizer lowercases its text: tiktoken's byte-level methods "
                "(decode_with_offsets, _encode_bytes, encode_with_unstable) would not hold for it; use its own API"
            )
        self.name = name
        self.tokenizer = tokenizer
        ids = {s: tokenizer.token_to_id(s) for s in tokenizer.special_tokens}
        #: Special token -> id (tiktoken's private attribute, which its tests and some callers read).
        self._special_tokens: dict[str, int] = {s: i for s, i in ids.items() if i is not None}
        self._special_token_values = frozenset(self._special_tokens.values())
        #: The largest id (tiktoken: max of the ranks and special tokens' ids).
        self.max_token_value = tokenizer.vocab_size - 1

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r} (bytepair)>"

    def __reduce__(self) -> tuple[Any, ...]:
        # The tokenizer pickles as its own file; the tables below are made again on first use.
        return (Encoding, (self.tokenizer, self.name))

    # -- encoding -----------------------------------------------------------------------------------------------

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, special-token text encoded as ordinary text (= `encode(text, disallowed_special=())`)."""
        try:
            return self.tokenizer.encode_ordinary(text)
        except UnicodeEncodeError:
            return self.tokenizer.encode_ordinary(replace_surrogates(text))

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialArgument = frozenset(),
        disallowed_special: SpecialArgument = "all",
    ) -> list[int]:
        """Token ids of `text`. Special-token text is an error by default (ValueError); `allowed_special` ("all" or
        a set) encodes it as the special token, `disallowed_special=()` as ordinary text.
        """
        policy = self._policy(allowed_special, disallowed_special, (text,))
        try:
            return self.tokenizer.encode(text, **policy)
        except UnicodeEncodeError:
            return self.tokenizer.encode(replace_surrogates(text), **policy)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialArgument = frozenset(),
        disallowed_special: SpecialArgument = "all",
    ) -> npt.NDArray[np.uint32]:
        """`encode` as a numpy uint32 array, without a Python list in between."""
        policy = self._policy(allowed_special, disallowed_special, (text,))
        ids: npt.NDArray[np.uint32]  # (dtype="uint32" makes it that)
        try:
            ids = self.tokenizer.encode_to_numpy(text, dtype="uint32", **policy)
        except UnicodeEncodeError:
            ids = self.tokenizer.encode_to_numpy(replace_surrogates(text), dtype="uint32", **policy)
        return ids

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> list[list[int]]:
        """`encode_ordinary` of each text, in parallel on up to `num_threads` threads (at most the cores)."""
        return self.encode_batch(text, num_threads=num_threads, disallowed_special=())

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: SpecialArgument = frozenset(),
        disallowed_special: SpecialArgument = "all",
    ) -> list[list[int]]:
        """`encode` of each text, in parallel on up to `num_threads` threads (at most the cores)."""
        texts = list(text)
        policy = self._policy(allowed_special, disallowed_special, texts)
        threads = max(1, num_threads) if isinstance(num_threads, int) else None
        try:
            return self.tokenizer.encode_batch(texts, threads=threads, **policy)
        except UnicodeEncodeError:
            return self.tokenizer.encode_batch(_without_surrogates(texts), threads=threads, **policy)

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: SpecialArgument = frozenset(),
        disallowed_special: SpecialArgument = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The tokens of `text` that more text cannot change, and the token sequences its unstable end could become
        (tiktoken's algorithm: each token that starts with the unstable bytes, and each way a token can straddle
        them). The API is unstable in tiktoken too.

        >>> import bytepair
        >>> enc = bytepair.train(["hello fanta, hello fan"] * 5, vocab_size=266).as_tiktoken()
        >>> stable, completions = enc.encode_with_unstable("hello fan")
        >>> enc.decode_bytes(stable)
        b'hello'
        >>> all(enc.decode_bytes(stable + c).startswith(b"hello fan") for c in completions)
        True
        >>> enc.encode(" fanta") in completions
        True
        """
        policy = self._policy(allowed_special, disallowed_special, (text,))
        try:
            tokens, last = self._encode_with_last_piece(text, policy)
        except UnicodeEncodeError:
            tokens, last = self._encode_with_last_piece(replace_surrogates(text), policy)
        if last == 0:  # the text ends with a special token: nothing is unstable
            return tokens, []
        last = self._with_trailing_space_tokens(tokens, last)
        unstable = self.decode_bytes(tokens[len(tokens) - last :])
        del tokens[len(tokens) - last :]
        return tokens, self._completions(unstable)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the token whose text (or bytes) this is, special tokens included; KeyError if none."""
        data = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        found = self._encoder.get(data)
        if found is not None:
            return found
        special = self._special_tokens.get(data.decode("utf-8", "surrogateescape"))
        if special is None:
            raise KeyError(data)
        return special

    # -- decoding -----------------------------------------------------------------------------------------------

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes `tokens` stand for; KeyError for an id that is not in the vocabulary."""
        try:
            return self.tokenizer.decode_bytes(tokens)
        except ValueError as e:
            raise KeyError(str(e)) from None

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text `tokens` stand for; bytes that are not UTF-8 are handled by `errors`, as in `bytes.decode`."""
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (a special token's text too); KeyError if no token has this id."""
        table = self._token_bytes
        if isinstance(token, int) and 0 <= token < len(table) and table[token]:
            return table[token]
        raise KeyError(str(token))

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token."""
        return [self.decode_single_token_bytes(token) for token in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text and, for each token, the index of the first character it has bytes of (UTF-8 that does not
        decode raises UnicodeDecodeError, as in tiktoken).
        """
        pieces = self.decode_tokens_bytes(tokens)
        offsets = []
        characters = 0  # characters started so far: bytes that are not UTF-8 continuation bytes (0x80-0xBF)
        for piece in pieces:
            starts_inside = bool(piece) and 0x80 <= piece[0] < 0xC0  # it continues the character before
            offsets.append(max(0, characters - starts_inside))
            characters += sum(1 for b in piece if not 0x80 <= b < 0xC0)
        return b"".join(pieces).decode("utf-8", errors="strict"), offsets

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        """`decode` of each list of ids. (`num_threads` is taken for tiktoken's signature: decoding is a copy of
        each token's bytes, faster on one thread than handing lists to others.)"""
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """`decode_bytes` of each list of ids (on one thread, as `decode_batch`)."""
        return [self.decode_bytes(tokens) for tokens in batch]

    # -- the vocabulary -----------------------------------------------------------------------------------------

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary (not special) token, sorted."""
        return list(self._sorted_token_bytes)

    @property
    def eot_token(self) -> int:
        """The id of <|endoftext|> (KeyError if this vocabulary has none, as in tiktoken)."""
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' texts."""
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        """Whether `token` is the id of a special token."""
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        """`max_token_value + 1` (ids need not all be used: cl100k_base has none for 100256)."""
        return self.max_token_value + 1

    # -- what tiktoken keeps private, and its tests and some callers use ----------------------------------------

    @property
    def _pat_str(self) -> str:
        """The pre-tokenization regex."""
        return self.tokenizer.core.pattern_regex() or WHOLE_TEXT_PATTERN

    @functools.cached_property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> id of the ordinary tokens: what `tiktoken.Encoding(mergeable_ranks=...)` takes
        (ValueError for a vocabulary whose ids tiktoken's merge rule would not reproduce)."""
        return dict(self.tokenizer.core.tiktoken_ranks())

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """The ids of text or bytes taken as one piece: no pre-tokenization, no special tokens."""
        data = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        found = self._encoder.get(data)
        return [found] if found is not None else self.tokenizer.core.encode_single_piece(data)

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """`encode_ordinary` with the text cut into pieces by Python's `regex` module (tiktoken's check of its own
        splitting)."""
        import regex

        pattern = regex.compile(self._pat_str)
        return [i for piece in pattern.findall(text) for i in self._encode_single_piece(piece)]

    def _encode_bytes(self, data: bytes) -> list[int]:
        """Ids of bytes that need not be UTF-8, as tiktoken makes them: the valid start is encoded as text, and its
        last piece (with the space tokens before it) is encoded again together with the rest of the bytes, as one
        piece. (bytepair's own `Tokenizer.encode_bytes` instead gives each invalid byte its byte token.)
        """
        data = bytes(data)
        try:
            return self.encode_ordinary(data.decode("utf-8"))
        except UnicodeDecodeError as e:
            valid = e.start  # the end of the valid UTF-8 prefix
        tokens, last = self._encode_with_last_piece(data[:valid].decode("utf-8"), {"disallowed_special": ()})
        last = self._with_trailing_space_tokens(tokens, last)
        unstable = (self.decode_bytes(tokens[len(tokens) - last :]) if tokens and last else b"") + data[valid:]
        if tokens and last:
            del tokens[len(tokens) - last :]
        if unstable:
            tokens += self._encode_single_piece(unstable)
        return tokens

    # -- helpers ------------------------------------------------------------------------------------------------

    @functools.cached_property
    def _token_bytes(self) -> list[bytes]:
        """The bytes of every id (b"" for an unused id), special tokens' texts included."""
        core = self.tokenizer.core
        return [core.token_bytes(i) for i in range(self.tokenizer.vocab_size)]

    @functools.cached_property
    def _encoder(self) -> dict[bytes, int]:
        """Bytes -> id of the ordinary tokens."""
        specials = self._special_token_values
        return {b: i for i, b in enumerate(self._token_bytes) if b and i not in specials}

    @functools.cached_property
    def _sorted_token_bytes(self) -> list[bytes]:
        return sorted(self._encoder)

    def _policy(
        self, allowed_special: SpecialArgument, disallowed_special: SpecialArgument, texts: Iterable[str]
    ) -> dict[str, Any]:
        """tiktoken's special-token arguments as `Tokenizer.encode`'s, after looking in `texts` for the disallowed
        strings the core cannot look for (ones that are not special tokens, or are allowed too: tiktoken refuses
        those)."""
        if disallowed_special == "all" and isinstance(allowed_special, Collection) and not allowed_special:
            return {}  # the defaults: no special token allowed, all of them errors
        specials = self.special_tokens_set
        allowed = set(specials) if allowed_special == "all" else set(_strings(allowed_special, "allowed_special"))
        if disallowed_special == "all":
            disallowed = frozenset(specials - allowed)
        else:
            disallowed = frozenset(_strings(disallowed_special, "disallowed_special"))
        for_the_core = disallowed & specials - allowed
        if disallowed - for_the_core:  # rare: looked for here, the way tiktoken does it
            finder = _any_of(disallowed)
            for text in texts:
                found = finder.search(text) if isinstance(text, str) else None
                if found:
                    raise ValueError(
                        f"the text contains {found.group()!r}, which disallowed_special disallows; pass "
                        f"disallowed_special=() (or a set without it) to encode it as ordinary text"
                    )
        return {"allowed_special": frozenset(allowed & specials), "disallowed_special": for_the_core}

    def _encode_with_last_piece(self, text: str, policy: dict[str, Any]) -> tuple[list[int], int]:
        """The ids of `text` and how many of them come from its last piece (0 when it ends with a special token),
        as tiktoken's core counts them."""
        spans = self.tokenizer.encode_with_offsets(text, unit="byte", **policy)
        tokens = [i for i, _, _ in spans]
        specials = self._special_token_values
        tail = len(spans)  # where the text after the last special token starts, in tokens
        while tail > 0 and spans[tail - 1][0] not in specials:
            tail -= 1
        if tail == len(spans):
            return tokens, 0
        start = spans[tail - 1][2] if tail else 0  # in bytes
        rest = text.encode("utf-8")[start:].decode("utf-8")
        pieces = self.tokenizer.core.piece_spans(rest)
        if not pieces:
            return tokens, 0
        last_start = start + pieces[-1][0]
        return tokens, sum(1 for _, s, _ in spans[tail:] if s >= last_start)

    def _with_trailing_space_tokens(self, tokens: list[int], last: int) -> int:
        """`last` grown over the whitespace tokens before the last piece when it starts with one: cl100k's
        "\\s*[\\r\\n]+" can join them with what follows (tiktoken's fix, kept for equal results)."""

        def all_space(token: int) -> bool:
            data = self._token_bytes[token]
            return bool(data) and all(b in b" \n\t" for b in data)

        if last > 0 and all_space(tokens[len(tokens) - last]):
            while last < len(tokens) and all_space(tokens[len(tokens) - last - 1]):
                last += 1
        return last

    def _completions(self, unstable: bytes) -> list[list[int]]:
        """The token sequences that text starting with `unstable` can begin with (tiktoken's search)."""
        if not unstable:
            return []
        found: set[tuple[int, ...]] = set()
        ordered = self._sorted_token_bytes
        # Every token that starts with the unstable bytes.
        at = bisect.bisect_left(ordered, unstable)
        while at < len(ordered) and ordered[at].startswith(unstable):
            found.add((self._encoder[ordered[at]],))
            at += 1
        # A token straddling the end: each split of the unstable bytes, with every token that starts with its
        # second part, encoded again (as text where it is UTF-8, so that the pattern's cuts are made).
        for cut in range(1, len(unstable)):
            prefix, suffix = unstable[:cut], unstable[cut:]
            at = bisect.bisect_left(ordered, suffix)
            while at < len(ordered) and ordered[at].startswith(suffix):
                possibility = prefix + ordered[at]
                try:
                    encoded = self.encode_ordinary(possibility.decode("utf-8"))
                except UnicodeDecodeError:
                    encoded = self._encode_single_piece(possibility)
                sequence: list[int] = []
                length = 0
                for token in encoded:
                    sequence.append(token)
                    length += len(self._token_bytes[token])
                    if length >= len(unstable):
                        break
                found.add(tuple(sequence))
                at += 1
        # A whitespace character at the end may split off once more text comes ("\n\n" + "0" is "\n", "\n", "0").
        if len(unstable) > 1:
            last_char = _last_character(unstable)
            if last_char is not None and len(last_char) < len(unstable) and last_char.decode("utf-8").isspace():
                head = unstable[: len(unstable) - len(last_char)]
                found.add(tuple(self._encode_single_piece(head) + self._encode_single_piece(last_char)))
        return [list(sequence) for sequence in sorted(found)]


def _last_character(data: bytes) -> bytes | None:
    """The UTF-8 bytes of the last character of `data`, or None if `data` does not end with a whole one."""
    for size in range(1, min(4, len(data)) + 1):
        try:
            data[-size:].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return data[-size:]
    return None


def _strings(value: object, name: str) -> Collection[str]:
    if isinstance(value, str):
        raise TypeError(
            f'{name} must be "all" or a set of strings, not the string {value!r}; write {name}={{{value!r}}}'
        )
    if not isinstance(value, Iterable):
        raise TypeError(f'{name} must be "all" or a set of strings, not {type(value).__name__}')
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{name} holds {item!r}, which is not a str")
    return items


@functools.lru_cache(maxsize=64)
def _any_of(strings: frozenset[str]) -> re.Pattern[str]:
    """A regex for the first occurrence of any of `strings` (longest first where they overlap)."""
    return re.compile("|".join(re.escape(s) for s in sorted(strings, key=len, reverse=True)))


def _without_surrogates(texts: list[str]) -> list[str]:
    """`texts` with `replace_surrogates` applied to those that have no UTF-8 form."""
    fixed = []
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = replace_surrogates(text)
        fixed.append(text)
    return fixed


# -- tiktoken's registry, for the encodings bytepair ships --------------------------------------------------------


def list_encoding_names() -> list[str]:
    """The encodings `get_encoding` knows: gpt2, r50k_base, p50k_base, cl100k_base, o200k_base."""
    from ..encodings import ENCODINGS

    return list(ENCODINGS)


@functools.cache
def _cached_encoding(name: str, path: str | None) -> Encoding:
    from ..encodings import get_encoding as get_tokenizer

    return Encoding(get_tokenizer(name, path), name)


def get_encoding(encoding_name: str, path: str | os.PathLike[str] | None = None) -> Encoding:
    """tiktoken's `get_encoding`: the named encoding (made once, then shared, as tiktoken does), its files found in
    `path`, $BYTEPAIR_DATA or tiktoken's cache and never downloaded (see `bytepair.get_encoding`).
    """
    from ..encodings import resolve_encoding_name

    name = resolve_encoding_name(encoding_name)
    return _cached_encoding(name, None if path is None else os.fspath(path))
