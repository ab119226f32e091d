"""The textbook Byte-Pair Encoding algorithm, in plain Python — the version to read, and the oracle of the
fast core (the tests check that both give the same merges, counts, ids and tokens).

It follows the algorithm as it is taught (e.g. the Hugging Face course, chapter 6):

1. normalise (optionally lowercase) and pre-tokenize the corpus into words; count the words;
2. take the alphabet: every symbol the words are made of (plus, in byte mode, all 256 bytes if asked);
3. split every word into symbols;
4. count the adjacent pairs of symbols, weighted by word frequency;
5. merge the best pair everywhere, add it to the vocabulary, and go back to 4 until `vocab_size`.

Tokenizing a new text splits it the same way and applies the merges in the order they were learned.

Nothing here is optimised: each merge recounts every pair. Use it on small corpora.

Beyond the textbook, the same loop also: continues from an existing tokenizer (`extend`: each word starts as
the tokenizer splits it), cuts a tokenizer down (`ReferenceTokenizer.truncate`, and `vocab_size=[...]`),
refuses merges (`veto=`, `forbid_across=`), and trains SuperBPE's superwords (`train(..., superwords_after=N)`).

>>> tok = train_from_counts({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}, vocab_size=11,
...                         mode="char", unk_token="[UNK]")
>>> tok.trace
[(('u', 'g'), 20), (('u', 'n'), 16), (('h', 'ug'), 15)]
>>> tok.tokenize("thug")
['[UNK]', 'hug']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import regex

__all__ = [
    "BYTE_TO_CHAR",
    "CHAR_TO_BYTE",
    "PATTERNS",
    "SUPERWORDS",
    "MergeStep",
    "ReferenceTokenizer",
    "extend",
    "extend_from_counts",
    "lower",
    "pre_tokenize",
    "train",
    "train_from_counts",
    "word_frequencies",
]

#: The pre-tokenization patterns by name (the same strings as the Rust core's).
PATTERNS: dict[str, str] = {
    "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "cl100k": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
    "whitespace": r"""\w+|[^\w\s]+""",
}
PATTERNS["r50k_base"] = PATTERNS["p50k_base"] = PATTERNS["gpt2"]

#: SuperBPE's second-stage pattern (Liu et al. 2025): numbers in groups of up to three digits, runs of two or
#: more punctuation marks and spaces that do not precede a word are pieces; the text between them is a piece,
#: up to the end of its line. (`bytepair.SUPERWORDS_PATTERN` is the same string.)
SUPERWORDS = (
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"
    r"|(?:(?!\p{N}| ?[^\s\p{L}\p{N}]{2}| +(?!\S))[^\r\n])+[\r\n]*"
    r"|[\r\n]+"
)
PATTERNS["cl100k_base"] = PATTERNS["cl100k"]
PATTERNS["o200k_base"] = PATTERNS["o200k"]


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table from bytes to printable characters, so that byte-level tokens can be shown as text.

    Printable Latin-1 bytes stand for themselves; the other 68 (control characters, space, ...) are moved to
    U+0100 onwards, in byte order.

    >>> bytes_to_unicode()[ord(" ")]
    'Ġ'
    """
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    table = {}
    shifted = 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + shifted)
            shifted += 1
    return table


BYTE_TO_CHAR: dict[int, str] = bytes_to_unicode()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in BYTE_TO_CHAR.items()}


def lower(text: str) -> str:
    """The lowercase normaliser: each character lowercased on its own, as HF tokenizers' `Lowercase` does
    (`str.lower` would make a capital sigma that ends a word the final sigma "ς")."""
    return "".join(c.lower() for c in text) if "\u03a3" in text else text.lower()


def pre_tokenize(text: str, pattern: str | None = "gpt2", unmatched: str = "keep") -> list[str]:
    """Cuts text into words with a named pattern, a regex, or not at all (None). A regex's matches are words, and
    so (unmatched="keep", the default) is each stretch of text between them; with "drop" that text is left out.

    >>> pre_tokenize("Hello  world!")
    ['Hello', ' ', ' world', '!']
    >>> pre_tokenize("ab, cd!", "[a-z]+"), pre_tokenize("ab, cd!", "[a-z]+", unmatched="drop")
    (['ab', ', ', 'cd', '!'], ['ab', 'cd'])
    """
    if pattern is None:
        return [text] if text else []
    if pattern in PATTERNS or unmatched == "drop":
        return [w for w in regex.findall(PATTERNS.get(pattern, pattern), text) if w]
    words, end = [], 0
    for match in regex.finditer(pattern, text):
        words += [text[end : match.start()], match.group()]
        end = match.end()
    return [w for w in [*words, text[end:]] if w]


def split_special_tokens(text: str, special_tokens: Iterable[str], keep: bool = False) -> list[str]:
    """Cuts special tokens out of text (leftmost, longest first): the parts around them, and with `keep` the
    special tokens too.

    >>> split_special_tokens("a<|endoftext|>b", ["<|endoftext|>"])
    ['a', 'b']
    >>> split_special_tokens("a<|endoftext|>b", ["<|endoftext|>"], keep=True)
    ['a', '<|endoftext|>', 'b']
    """
    specials = sorted(set(special_tokens), key=len, reverse=True)
    if not specials:
        return [text]
    parts, start, i = [], 0, 0
    while i < len(text):
        match = next((s for s in specials if text.startswith(s, i)), None)
        if match is None:
            i += 1
            continue
        parts.append(text[start:i])
        if keep:
            parts.append(match)
        i += len(match)
        start = i
    parts.append(text[start:])
    return [p for p in parts if p]


def word_frequencies(
    corpus: Iterable[str], pattern: str | None = "gpt2", special_tokens: Iterable[str] = (), lowercase: bool = False
) -> dict[str, int]:
    """Counts the words of a corpus, in order of first appearance (Python dicts keep insertion order).

    >>> word_frequencies(["the cat", "the hat"])
    {'the': 2, ' cat': 1, ' hat': 1}
    """
    freqs: dict[str, int] = {}
    special_tokens = list(special_tokens)
    for text in corpus:
        for part in split_special_tokens(text, special_tokens):
            if lowercase:
                part = lower(part)
            for word in pre_tokenize(part, pattern):
                freqs[word] = freqs.get(word, 0) + 1
    return freqs


def unit_strings(word: str, mode: str) -> list[str]:
    """The units of a word in display form: characters, or (byte mode) bytes shown with GPT-2's table."""
    if mode == "byte":
        return [BYTE_TO_CHAR[b] for b in word.encode("utf-8")]
    return list(word)


def symbols_of(word: str, mode: str, prefix: str | None = None, suffix: str | None = None) -> list[str]:
    """Splits a word into its initial symbols, with the `##` prefix and end-of-word suffix markers.

    >>> symbols_of(" is", "byte")
    ['Ġ', 'i', 's']
    >>> symbols_of("hug", "char", prefix="##")
    ['h', '##u', '##g']
    """
    units = unit_strings(word, mode)
    symbols = []
    for i, unit in enumerate(units):
        s = unit
        if prefix is not None and i > 0:
            s = prefix + s
        if suffix is not None and i == len(units) - 1:
            s = s + suffix
        symbols.append(s)
    return symbols


def merge_strings(a: str, b: str, prefix: str | None = None) -> str:
    """The token made by merging a and b: b loses its continuing-subword prefix.

    >>> merge_strings("##u", "##g", prefix="##")
    '##ug'
    """
    if prefix is not None and b.startswith(prefix):
        b = b[len(prefix) :]
    return a + b


@dataclass
class ReferenceTokenizer:
    """A trained vocabulary: `vocab[i]` is the token with id i; `merges` in the order learned."""

    vocab: list[str]
    merges: list[tuple[str, str]]
    trace: list[tuple[tuple[str, str], int]] = field(default_factory=list)
    mode: str = "byte"
    pattern: str | None = "gpt2"
    special_tokens: list[str] = field(default_factory=list)
    lowercase: bool = False
    prefix: str | None = None
    suffix: str | None = None
    unk_token: str | None = None

    def tokenize(self, text: str) -> list[str]:
        """Splits text into tokens: pre-tokenize, split words into symbols, apply every merge in order."""
        known = set(self.vocab)
        tokens: list[str] = []
        for part in split_special_tokens(text, self.special_tokens, keep=True):
            if part in self.special_tokens:
                tokens.append(part)
                continue
            if self.lowercase:
                part = lower(part)
            for word in pre_tokenize(part, self.pattern):
                tokens.extend(self.split_word(word, known))
        return tokens

    def split_word(self, word: str, known: set[str] | None = None) -> list[str]:
        """One word (a piece of pre-tokenized text) as tokens: its symbols, then every merge in order.

        >>> train(["low lower lowest"], vocab_size=3 + 256).split_word(" lowest")
        ['Ġlow', 'e', 's', 't']
        """
        known = set(self.vocab) if known is None else known
        split = [s if s in known else self.unk(s) for s in symbols_of(word, self.mode, self.prefix, self.suffix)]
        for a, b in self.merges:
            split = merge_pair_in_split(a, b, split, self.prefix)
        return split

    def truncate(self, vocab_size: int) -> ReferenceTokenizer:
        """The first `vocab_size` tokens and the merges up to the one that made the last of them: what training
        with that `vocab_size` gives.

        >>> train(["low lower lowest"], vocab_size=3 + 256).truncate(257).merges
        [('l', 'o')]
        """
        initial = self.initial_size()
        if not initial <= vocab_size <= len(self.vocab):
            raise ValueError(f"cannot truncate to {vocab_size}: use a size from {initial} to {len(self.vocab)}")
        kept = 0
        if vocab_size > initial:
            last = self.vocab[vocab_size - 1]
            kept = next(i for i, (a, b) in enumerate(self.merges) if merge_strings(a, b, self.prefix) == last) + 1
        return replace(self, vocab=self.vocab[:vocab_size], merges=self.merges[:kept], trace=self.trace[:kept])

    def initial_size(self) -> int:
        """How many tokens the vocabulary had before its merges (special tokens and base symbols): the merges
        appended the rest, in order, each the first time it was made."""
        made = list(dict.fromkeys(merge_strings(a, b, self.prefix) for a, b in self.merges))
        for initial in range(len(self.vocab) - len(made), len(self.vocab) + 1):
            before = set(self.vocab[:initial])
            if self.vocab[initial:] == [t for t in made if t not in before]:
                return initial
        raise ValueError("the vocabulary does not end with the tokens its merges make")

    def unk(self, symbol: str) -> str:
        if self.unk_token is None:
            raise ValueError(f"symbol {symbol!r} is not in the vocabulary and there is no unk_token")
        return self.unk_token

    def encode(self, text: str) -> list[int]:
        """Token ids of `text` (special tokens in the text become their ids)."""
        ids = {token: i for i, token in enumerate(self.vocab)}
        return [ids[t] for t in self.tokenize(text)]


@dataclass
class MergeStep:
    """One step of training, as `train_from_counts(..., on_merge=...)` reports it."""

    pair_freqs: dict[tuple[str, str], int]  # every pair's count before the merge, in first-seen order
    pair: tuple[str, str]  # the pair merged
    count: int  # its count
    new_token: str
    splits: dict[str, list[str]]  # each word's symbols after the merge
    vocab: list[str]  # the vocabulary after the merge


def merge_pair_in_split(a: str, b: str, split: list[str], prefix: str | None = None) -> list[str]:
    """Replaces every adjacent (a, b) in one word's split, left to right.

    >>> merge_pair_in_split("u", "g", ["h", "u", "g", "s"])
    ['h', 'ug', 's']
    """
    i = 0
    while i < len(split) - 1:
        if split[i] == a and split[i + 1] == b:
            split = split[:i] + [merge_strings(a, b, prefix)] + split[i + 2 :]
        else:
            i += 1
    return split


def compute_pair_freqs(splits: dict[str, list[str]], word_freqs: Mapping[str, int]) -> dict[tuple[str, str], int]:
    """Counts adjacent pairs over all words, weighted by word frequency. The dict's order is the order in
    which pairs are first met, reading words in corpus order and each word left to right."""
    pair_freqs: dict[tuple[str, str], int] = {}
    for word, freq in word_freqs.items():
        split = splits[word]
        for i in range(len(split) - 1):
            pair = (split[i], split[i + 1])
            pair_freqs[pair] = pair_freqs.get(pair, 0) + freq
    return pair_freqs


def best_pair(
    pair_freqs: dict[tuple[str, str], int],
    tie_break: str,
    ids: dict[str, int],
    allowed: Callable[[tuple[str, str]], bool],
    symbol_bytes: Callable[[str], bytes] = str.encode,
) -> tuple[tuple[str, str], int] | None:
    """The pair to merge next.

    - "first_seen": the most frequent; among equals, the first met (the textbook's `max_freq < freq` loop).
    - "hf": the most frequent; among equals, the smallest (id of a, id of b) — HF tokenizers' rule.
    - "lexicographic": the most frequent; among equals, the greatest (bytes of a, bytes of b) — CS336's rule.

    >>> freqs = {("a", "b"): 3, ("b", "c"): 3, ("c", "d"): 1}
    >>> best_pair(freqs, "first_seen", {}, lambda pair: True)
    (('a', 'b'), 3)
    >>> best_pair(freqs, "lexicographic", {}, lambda pair: True, lambda s: s.encode())
    (('b', 'c'), 3)
    """
    if tie_break not in ("first_seen", "hf", "lexicographic"):
        raise ValueError(f"unknown tie_break {tie_break!r}")

    def lexicographic_key(pair: tuple[str, str]) -> tuple[bytes, bytes, str, str]:
        return (symbol_bytes(pair[0]), symbol_bytes(pair[1]), pair[0], pair[1])

    best: tuple[str, str] | None = None
    max_freq = 0
    for pair, freq in pair_freqs.items():
        if freq <= 0 or not allowed(pair):
            continue
        if best is None or max_freq < freq:
            best, max_freq = pair, freq
        elif freq == max_freq and tie_break == "hf" and (ids[pair[0]], ids[pair[1]]) < (ids[best[0]], ids[best[1]]):
            best = pair  # HF's rule: the smallest ids
        elif freq == max_freq and tie_break == "lexicographic" and lexicographic_key(pair) > lexicographic_key(best):
            best = pair  # CS336's rule: the greatest bytes
    return None if best is None else (best, max_freq)


def limited_alphabet(word_freqs: Mapping[str, int], limit: int, forced: Iterable[str] = ()) -> set[str]:
    """`limit_alphabet` (char mode): the characters kept — the forced ones, then the most frequent (ties: the
    smaller code point) up to `limit` in all.

    >>> sorted(limited_alphabet({"aab": 2, "c": 1}, 2))
    ['a', 'b']
    """
    freq: dict[str, int] = {}
    for word, n in word_freqs.items():
        for c in word:
            freq[c] = freq.get(c, 0) + n
    kept = set(forced)
    ranked = sorted((c for c in freq if c not in kept), key=lambda c: (-freq[c], ord(c)))
    return kept | set(ranked[: max(0, limit - len(kept))])


def base_vocabulary(
    word_freqs: Iterable[str],
    mode: str = "byte",
    special_tokens: Iterable[str] = (),
    initial_alphabet: str | Iterable[str] = "all",
    prefix: str | None = None,
    suffix: str | None = None,
    unk_token: str | None = None,
    kept: set[str] | None = None,
) -> list[str]:
    """The vocabulary before any merge: special tokens (and unk_token) first, then the alphabet — every symbol
    the words are made of (only those of `kept` characters, if given), plus forced units — sorted by code point.

    >>> base_vocabulary(["hug", "pun"], mode="char", unk_token="[UNK]")
    ['[UNK]', 'g', 'h', 'n', 'p', 'u']
    """
    vocab: list[str] = []
    for token in list(special_tokens) + ([unk_token] if unk_token is not None else []):
        if token not in vocab:
            vocab.append(token)
    alphabet = {s for word in word_freqs for s in symbols_of(word, mode, prefix, suffix)}
    if kept is not None:  # limit_alphabet (char mode: one symbol per character)
        alphabet = {s for word in word_freqs for c, s in zip(word, symbols_of(word, mode, prefix, suffix)) if c in kept}
    forced: list[str] = []
    if initial_alphabet == "all" and mode == "byte":
        forced = [BYTE_TO_CHAR[b] for b in range(256)]
    elif initial_alphabet not in ("all", "corpus"):
        forced = [u for c in initial_alphabet for u in unit_strings(c, mode)]
    for unit in forced:  # a forced unit must be usable anywhere in a word: add every marker variant
        for first in (True, False):
            for last in (True, False):
                alphabet.add((unit if first or prefix is None else prefix + unit) + (suffix if last and suffix else ""))
    return vocab + [s for s in sorted(alphabet) if s not in vocab]


#: The named classes of `forbid_across` (any other string is the set of its characters).
FORBID_ACROSS: dict[str, str] = {
    "newline": r"[\r\n]",
    "whitespace": r"\p{White_Space}",
    "digit": r"\p{N}",
    "letter": r"\p{L}",
    "punctuation": r"[\p{P}\p{S}]",
}


def _sequence_length(lead: int) -> int:
    return 2 if 0xC0 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF7 else 1


def _whole_char(b: bytes) -> str | None:
    try:
        text = b.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if len(text) == 1 else None


def first_char(token: bytes) -> str | None:
    """The character a token's bytes start with, or None when the token starts inside one or cuts it."""
    if not token or 0x80 <= token[0] < 0xC0:
        return None
    n = _sequence_length(token[0])
    return _whole_char(token[:n]) if len(token) >= n else None


def last_char(token: bytes) -> str | None:
    """The character a token's bytes end with, or None when the token cuts it."""
    starts = [i for i, b in enumerate(token) if not 0x80 <= b < 0xC0]
    if not starts or starts[-1] + _sequence_length(token[starts[-1]]) != len(token):
        return None
    return _whole_char(token[starts[-1] :])


def _matcher(class_regex: str) -> Callable[[str], bool]:
    compiled = regex.compile(class_regex)
    return lambda c: compiled.fullmatch(c) is not None


def boundary_check(forbid_across: Iterable[str]) -> Callable[[bytes, bytes], bool] | None:
    """`forbid_across` as a check of a merge `left + right` (their bytes): False when the character that ends
    `left` and the one that starts `right` are on either side of a class — or one of them is cut by its token
    (a byte token can hold part of a character) and the class is not all ASCII, so its side is unknown. A
    junction inside a character (`right` starts with a continuation byte) is no boundary.

    >>> allows = boundary_check(["newline"])
    >>> allows(b"end", b"\\n"), allows(b"\\n", b"\\n")
    (False, True)
    """
    classes: list[tuple[Callable[[str], bool], bool]] = []
    for spec in forbid_across:
        if spec in FORBID_ACROSS:
            classes.append((_matcher(FORBID_ACROSS[spec]), spec == "newline"))
        else:
            members = set(spec)
            classes.append((members.__contains__, all(ord(c) < 0x80 for c in members)))
    if not classes:
        return None

    def allows(left: bytes, right: bytes) -> bool:
        if right and 0x80 <= right[0] < 0xC0:
            return True  # inside one character
        end, start = last_char(left), first_char(right)
        for member, ascii_only in classes:
            if (end is None or start is None) and not ascii_only:
                return False
            if (end is not None and member(end)) != (start is not None and member(start)):
                return False
        return True

    return allows


def token_texts(
    vocab: list[str],
    merges: list[tuple[str, str]],
    mode: str,
    prefix: str | None,
    suffix: str | None,
    specials: Iterable[str],
) -> dict[str, bytes]:
    """The bytes each token stands for (markers left out): base symbols from their display form, merged ones
    as the concatenation of their parts."""
    text_of: dict[str, bytes] = {}
    special = set(specials)
    made = {merge_strings(a, b, prefix) for a, b in merges}
    for token in vocab:
        if token in special or token in made:
            continue
        unit = token
        if prefix is not None and unit.startswith(prefix) and len(unit) > len(prefix):
            unit = unit[len(prefix) :]
        if suffix is not None and unit.endswith(suffix) and len(unit) > len(suffix):
            unit = unit[: -len(suffix)]
        text_of[token] = bytes(CHAR_TO_BYTE[c] for c in unit) if mode == "byte" else unit.encode()
    for a, b in merges:
        text_of.setdefault(merge_strings(a, b, prefix), text_of[a] + text_of[b])
    return text_of


def token_lengths(vocab: list[str], merges: list[tuple[str, str]], prefix: str | None) -> dict[str, int]:
    """Each token's length in units (bytes or characters), markers not counted."""
    made = {merge_strings(a, b, prefix) for a, b in merges}
    length = {t: 1 for t in vocab if t not in made}
    for a, b in merges:
        length.setdefault(merge_strings(a, b, prefix), length[a] + length[b])
    return length


def merge_loop(
    splits: dict[str, list[str]],
    word_freqs: Mapping[str, int],
    vocab: list[str],
    merges: list[tuple[str, str]],
    trace: list[tuple[tuple[str, str], int]],
    *,
    vocab_size: int,
    specials: set[str],
    length: dict[str, int],
    text_of: dict[str, bytes],
    prefix: str | None = None,
    min_frequency: int = 0,
    max_token_length: int | None = None,
    tie_break: str = "first_seen",
    veto: Callable[[bytes, bytes], object] | None = None,
    forbid_across: Iterable[str] = (),
    on_merge: Callable[[MergeStep], None] | None = None,
) -> None:
    """Steps 4-5: merges the best pair of `splits` (each word's symbols) until the vocabulary has `vocab_size`
    tokens, updating `splits`, `vocab`, `merges`, `trace`, `length` and `text_of` in place.

    A pair is counted unless it holds a special token, is longer than `max_token_length`, or straddles a class of
    `forbid_across`. The best pair is asked to `veto(left bytes, right bytes)` before it is merged; a pair it
    refuses is never merged (nor asked about again), and the next best is taken."""
    boundaries = boundary_check(forbid_across)
    refused: set[tuple[str, str]] = set()

    def allowed(pair: tuple[str, str]) -> bool:
        if pair[0] in specials or pair[1] in specials or pair in refused:  # the unknown token never merges
            return False
        if boundaries is not None and not boundaries(text_of[pair[0]], text_of[pair[1]]):
            return False
        if max_token_length is None:
            return True
        n = length[pair[0]] + length[pair[1]]
        if tie_break == "hf":  # HF: first pairs always count; pairs made by merges must stay below the limit
            return n == 2 or n < max_token_length
        return n <= max_token_length

    while len(vocab) < vocab_size:
        ids = {token: i for i, token in enumerate(vocab)}
        pair_freqs = compute_pair_freqs(splits, word_freqs)
        found = best_pair(pair_freqs, tie_break, ids, allowed, text_of.__getitem__)
        if found is None:
            break
        (a, b), freq = found
        if freq < min_frequency:
            break
        if veto is not None and veto(text_of[a], text_of[b]):
            refused.add((a, b))
            continue
        for word in word_freqs:
            splits[word] = merge_pair_in_split(a, b, splits[word], prefix)
        new_token = merge_strings(a, b, prefix)
        merges.append((a, b))
        trace.append(((a, b), freq))
        if new_token not in length:  # the same string can be made twice; it stays one token
            text_of[new_token] = text_of[a] + text_of[b]
            vocab.append(new_token)
            length[new_token] = length[a] + length[b]
        if on_merge is not None:
            on_merge(
                MergeStep(pair_freqs, (a, b), freq, new_token, {w: list(s) for w, s in splits.items()}, list(vocab))
            )


def _sizes(vocab_size: int | list[int]) -> tuple[int, list[int] | None]:
    return (vocab_size, None) if isinstance(vocab_size, int) else (max(vocab_size), list(vocab_size))


def _cut(tok: ReferenceTokenizer, sizes: list[int] | None) -> Any:
    return tok if sizes is None else [tok.truncate(min(n, len(tok.vocab))) for n in sizes]


def train_from_counts(
    word_freqs: Mapping[str, int],
    vocab_size: int | list[int],
    *,
    mode: str = "byte",
    pattern: str | None = "gpt2",
    special_tokens: Iterable[str] = (),
    initial_alphabet: str | Iterable[str] = "all",
    min_frequency: int = 0,
    lowercase: bool = False,
    continuing_subword_prefix: str | None = None,
    end_of_word_suffix: str | None = None,
    unk_token: str | None = None,
    max_token_length: int | None = None,
    limit_alphabet: int | None = None,
    tie_break: str = "first_seen",
    veto: Callable[[bytes, bytes], object] | None = None,
    forbid_across: Iterable[str] = (),
    on_merge: Callable[[MergeStep], None] | None = None,
) -> Any:
    """Learns merges from word counts (words are used as given). Options as in `bytepair.train` (a list of sizes
    gives a list of tokenizers; `veto` is a function of the two parts' bytes).

    on_merge: called after each merge with a `MergeStep` (the pair counts it chose from, the merge, the words
    after it, the vocabulary) — `bytepair.explain` prints a lecture from these."""
    vocab_size, sizes = _sizes(vocab_size)
    prefix, suffix = continuing_subword_prefix, end_of_word_suffix
    if lowercase:
        lowered: dict[str, int] = {}
        for word, freq in word_freqs.items():
            lowered[lower(word)] = lowered.get(lower(word), 0) + freq
        word_freqs = lowered
    word_freqs = {w: f for w, f in word_freqs.items() if w and f > 0}

    # 1-3. Special tokens, then the alphabet; every word split into symbols.
    kept = None
    if limit_alphabet is not None:  # char mode only: rare characters become unk_token
        if mode != "char":
            raise ValueError("limit_alphabet only applies to mode='char'")
        forced = [] if initial_alphabet in ("all", "corpus") else list(initial_alphabet)
        kept = limited_alphabet(word_freqs, limit_alphabet, forced)
    vocab = base_vocabulary(word_freqs, mode, special_tokens, initial_alphabet, prefix, suffix, unk_token, kept)
    splits = {word: symbols_of(word, mode, prefix, suffix) for word in word_freqs}
    if kept is not None:  # char mode: one symbol per character
        if unk_token is None and any(c not in kept for word in word_freqs for c in word):
            raise ValueError("limit_alphabet leaves characters out of the alphabet: they need an unk_token")
        unk = unk_token or ""
        splits = {word: [s if c in kept else unk for c, s in zip(word, split)] for word, split in splits.items()}
    specials = set(special_tokens) | ({unk_token} if unk_token is not None else set())
    if vocab_size < len(vocab):
        raise ValueError(f"vocab_size={vocab_size} is smaller than the base vocabulary; use vocab_size >= {len(vocab)}")

    length = dict.fromkeys(vocab, 1)  # length in units, markers not counted

    # The text each symbol stands for, as bytes (markers left out): the "lexicographic" tie rule compares it.
    text_of: dict[str, bytes] = {}
    for word in word_freqs:
        units = (
            [bytes([CHAR_TO_BYTE[u]]) for u in unit_strings(word, mode)]
            if mode == "byte"
            else [c.encode() for c in word]
        )
        for unit, symbol in zip(units, splits[word]):
            text_of.setdefault(symbol, unit)

    # 4-5. Merge the best pair until the vocabulary is full.
    merges: list[tuple[str, str]] = []
    trace: list[tuple[tuple[str, str], int]] = []
    merge_loop(
        splits,
        word_freqs,
        vocab,
        merges,
        trace,
        vocab_size=vocab_size,
        specials=specials,
        length=length,
        text_of=text_of,
        prefix=prefix,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        tie_break=tie_break,
        veto=veto,
        forbid_across=forbid_across,
        on_merge=on_merge,
    )
    tok = ReferenceTokenizer(
        vocab=vocab,
        merges=merges,
        trace=trace,
        mode=mode,
        pattern=pattern,
        special_tokens=list(special_tokens),
        lowercase=lowercase,
        prefix=prefix,
        suffix=suffix,
        unk_token=unk_token,
    )
    return _cut(tok, sizes)


def extend_from_counts(
    tok: ReferenceTokenizer,
    word_freqs: Mapping[str, int],
    vocab_size: int | list[int],
    *,
    pattern: str | None = None,
    min_frequency: int = 0,
    max_token_length: int | None = None,
    tie_break: str = "first_seen",
    veto: Callable[[bytes, bytes], object] | None = None,
    forbid_across: Iterable[str] = (),
) -> Any:
    """`tok` extended: each word split as `tok` splits it (its merges applied in order), then merging goes on
    until `vocab_size` tokens. `pattern`: what the result pre-tokenizes with (default: `tok`'s).

    >>> counts = {"hug": 10, "pug": 5, "pun": 12}
    >>> tok = train_from_counts(counts, vocab_size=6, mode="char")
    >>> extend_from_counts(tok, counts, 8).merges == train_from_counts(counts, 8, mode="char").merges
    True
    """
    vocab_size, sizes = _sizes(vocab_size)
    if tok.lowercase:
        lowered: dict[str, int] = {}
        for word, freq in word_freqs.items():
            lowered[lower(word)] = lowered.get(lower(word), 0) + freq
        word_freqs = lowered
    word_freqs = {w: f for w, f in word_freqs.items() if w and f > 0}
    known = set(tok.vocab)
    splits = {word: tok.split_word(word, known) for word in word_freqs}
    specials = set(tok.special_tokens) | ({tok.unk_token} if tok.unk_token is not None else set())
    vocab, merges, trace = list(tok.vocab), list(tok.merges), list(tok.trace)
    merge_loop(
        splits,
        word_freqs,
        vocab,
        merges,
        trace,
        vocab_size=vocab_size,
        specials=specials,
        length=token_lengths(vocab, merges, tok.prefix),
        text_of=token_texts(vocab, merges, tok.mode, tok.prefix, tok.suffix, specials),
        prefix=tok.prefix,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        tie_break=tie_break,
        veto=veto,
        forbid_across=forbid_across,
    )
    extended = replace(
        tok, vocab=vocab, merges=merges, trace=trace, pattern=tok.pattern if pattern is None else pattern
    )
    return _cut(extended, sizes)


def extend(tok: ReferenceTokenizer, corpus: Iterable[str], vocab_size: int | list[int], **options: Any) -> Any:
    """Counts the words of `corpus` as `tok` pre-tokenizes them, and extends `tok` on them (see
    `extend_from_counts`); with tie_break="hf", special-token text counts as ordinary text (see `train`)."""
    cut_out = [] if options.get("tie_break") == "hf" else tok.special_tokens
    freqs = word_frequencies(corpus, tok.pattern, cut_out, tok.lowercase)
    # The counts are lowercased already: extend_from_counts must not do it twice.
    extended = extend_from_counts(replace(tok, lowercase=False), freqs, vocab_size, **options)
    for t in extended if isinstance(extended, list) else [extended]:
        t.lowercase = tok.lowercase
    return extended


def train(
    corpus: Iterable[str],
    vocab_size: int | list[int],
    *,
    pattern: str | None = "gpt2",
    special_tokens: Iterable[str] = (),
    lowercase: bool = False,
    superwords_after: int | None = None,
    **options: Any,
) -> Any:
    """Counts the words of `corpus` (an iterable of texts) and learns merges from them. Special tokens found in the
    text are cut out before counting — but for tie_break="hf", which counts their text as ordinary text, as HF
    tokenizers' trainer does.

    superwords_after: SuperBPE — train with `pattern` up to this size, then continue on the words of SUPERWORDS
    (the corpus is read twice).

    >>> tok = train(["low lower lowest"], vocab_size=3 + 256, initial_alphabet="all")
    >>> tok.merges
    [('l', 'o'), ('lo', 'w'), ('Ġ', 'low')]
    """
    special_tokens = list(special_tokens)
    vocab_size, sizes = _sizes(vocab_size)
    cut_out = [] if options.get("tie_break") == "hf" else special_tokens
    if superwords_after is not None:
        corpus = list(corpus)
        first = train(
            corpus, superwords_after, pattern=pattern, special_tokens=special_tokens, lowercase=lowercase, **options
        )
        control = {
            k: v
            for k, v in options.items()
            if k in ("min_frequency", "max_token_length", "tie_break", "veto", "forbid_across")
        }
        freqs = word_frequencies(corpus, SUPERWORDS, cut_out, lowercase)
        second = extend_from_counts(replace(first, lowercase=False), freqs, vocab_size, pattern=SUPERWORDS, **control)
        second.lowercase = lowercase
        if sizes is None:
            return second
        return [(first if n <= len(first.vocab) else second).truncate(min(n, len(second.vocab))) for n in sizes]
    freqs = word_frequencies(corpus, pattern, cut_out, lowercase)
    # Lowercasing is already done; train_from_counts must not do it twice.
    tok = train_from_counts(freqs, vocab_size, pattern=pattern, special_tokens=special_tokens, **options)
    tok.lowercase = lowercase
    return _cut(tok, sizes)
