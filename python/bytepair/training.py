"""Training: `train` (from a corpus) and `train_from_counts` (from words counted elsewhere), over one settings
object, `TrainSettings`, checked once when it is made. The counting and the merge loop run in the core.

Beyond plain training: several vocabulary sizes from one run (`vocab_size=[...]`), SuperBPE's superword
tokens (`superwords_after=`), merge control (`veto=`, `forbid_across=`), and extending an existing tokenizer
(`extend`, which `Tokenizer.extend` calls).

>>> settings = TrainSettings(vocab_size=259)
>>> tok = train_counts(count_words(["low lower lowest"] * 5, settings), settings)
>>> tok.merges
[('l', 'o'), ('lo', 'w'), ('Ġ', 'low')]
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, cast, overload

import regex

from . import _core, arrow
from ._checks import check_pattern, check_special_tokens, check_threads, check_unmatched, thread_request
from ._tokenizer import Tokenizer
from .corpus import Corpus, corpus_files, corpus_items, file_texts, read_natively
from .formats import counts as counts_file
from .formats.counts import CountedWords
from .progress import show_progress

__all__ = [
    "FORBID_ACROSS_CLASSES",
    "MODES",
    "SUPERWORDS_PATTERN",
    "TIE_BREAKS",
    "TrainSettings",
    "Veto",
    "count_words",
    "extend",
    "extend_counts",
    "new_counts",
    "train",
    "train_counts",
    "train_from_counts",
]

Mode = Literal["byte", "char"]
TieBreak = Literal["first_seen", "hf", "lexicographic"]
Unmatched = Literal["keep", "drop", "error"]
MODES = ("byte", "char")
TIE_BREAKS = ("first_seen", "hf", "lexicographic")

#: What `veto=` takes: a regex (str: searched in the candidate token's text, its bytes decoded with
#: errors="replace"; bytes: searched in its bytes), compiled or not, or a function called with the two parts
#: of the candidate merge as bytes, `veto(left, right)`, which refuses the merge by returning something true.
Veto = (
    str
    | bytes
    | re.Pattern[str]
    | re.Pattern[bytes]
    | regex.Pattern[str]
    | regex.Pattern[bytes]
    | Callable[[bytes, bytes], object]
)

#: The named classes `forbid_across=` takes (any other string is the set of its characters, e.g. "\n").
FORBID_ACROSS_CLASSES = ("newline", "whitespace", "digit", "letter", "punctuation")

#: SuperBPE's second-stage pre-tokenization (Liu et al. 2025): numbers in groups of up to three digits, runs of
#: two or more punctuation marks and spaces that do not precede a word are pieces of their own; the text between
#: them — words with the single spaces and punctuation marks between them — is one piece, up to the end of its
#: line. `train(..., superwords_after=N)` continues training with it from vocabulary size N.
SUPERWORDS_PATTERN: str = _core.SUPERWORDS


@dataclass(frozen=True)
class TrainSettings:
    """Everything that decides what training makes, checked once here (TypeError / ValueError saying what to
    pass instead). See `train` for what each setting means.

    >>> TrainSettings(vocab_size=0)
    Traceback (most recent call last):
    ValueError: vocab_size must be positive, got 0
    """

    vocab_size: int
    mode: Mode = "byte"
    pattern: str | None = "gpt2"
    special_tokens: tuple[str, ...] = ()
    #: "all", "corpus", or characters added to those seen (then read as "corpus" plus these).
    initial_alphabet: Literal["all", "corpus"] | tuple[str, ...] = "all"
    min_frequency: int = 0
    lowercase: bool = False
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None
    unk_token: str | None = None
    max_token_length: int | None = None
    limit_alphabet: int | None = None
    tie_break: TieBreak = "first_seen"
    threads: int | None = None
    #: Whether to show progress (None, as an argument, is resolved when the settings are made).
    progress: bool = False
    #: Merge control: classes no token may straddle (names of FORBID_ACROSS_CLASSES, or sets of characters).
    forbid_across: tuple[str, ...] = ()
    #: Merge control: asked about each merge before it is made (see `Veto`).
    veto: Veto | None = None
    #: SuperBPE: the vocabulary size from which merges may cross whitespace (None: never).
    superwords_after: int | None = None
    #: What a regex pattern does with the text it does not match; None for named patterns (and, as an argument,
    #: "keep" for a regex: resolved when the settings are made).
    unmatched: Unmatched | None = None

    def __post_init__(self) -> None:
        vocab_size = self.vocab_size
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
            raise TypeError(f"vocab_size must be an int, not {type(vocab_size).__name__}")
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be positive, got {vocab_size}")
        if vocab_size >= 1 << 31:
            raise ValueError(
                f"vocab_size={vocab_size} is too large: token ids are below 2**31 (the largest vocabularies "
                f"in use have a few hundred thousand tokens)"
            )
        if self.mode not in MODES:
            raise ValueError(
                f'unknown mode {self.mode!r}: use "byte" (256-byte base vocabulary, GPT-2 style) or "char" '
                f"(the characters seen in the corpus)"
            )
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(
                f'unknown tie_break {self.tie_break!r}: use "first_seen" (the textbook rule: the pair met first '
                f'in the corpus wins), "hf" (HF tokenizers\' rule: the pair with the smallest ids wins) or '
                f'"lexicographic" (the greater pair, compared as bytes, wins: Stanford CS336\'s rule)'
            )
        check_threads(self.threads)
        check_pattern(self.pattern)
        # The default for a regex is filled in here, so that the settings say what the tokenizer will do.
        object.__setattr__(self, "unmatched", check_unmatched(self.unmatched, self.pattern))
        check_special_tokens(self.special_tokens)
        if not isinstance(self.lowercase, bool):
            raise TypeError(f"lowercase must be True or False, not {self.lowercase!r}")
        _check_count("min_frequency", self.min_frequency, 0, optional=False)
        _check_count("max_token_length", self.max_token_length, 1)
        _check_count("limit_alphabet", self.limit_alphabet, 1)
        for name in ("continuing_subword_prefix", "end_of_word_suffix", "unk_token"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or value == ""):
                raise ValueError(f"{name} must be None or a non-empty string, got {value!r}")
        if not isinstance(self.initial_alphabet, tuple) and self.initial_alphabet not in ("all", "corpus"):
            raise ValueError(
                f"initial_alphabet must be 'all', 'corpus' or a tuple of characters, not {self.initial_alphabet!r}"
            )
        if not isinstance(self.progress, bool):
            raise TypeError(f"progress must be True or False, not {self.progress!r}")
        check_forbid_across(self.forbid_across)
        veto_function(self.veto)  # checked (and a regex compiled) now, not after counting the corpus
        _check_superwords(self)

    @classmethod
    def from_arguments(
        cls,
        vocab_size: Any,
        *,
        special_tokens: object = (),
        initial_alphabet: object = "all",
        progress: object = None,
        forbid_across: object = (),
        **options: Any,
    ) -> TrainSettings:
        """Settings from arguments as `train` takes them: special tokens and extra alphabet characters as any
        iterable, progress None for "when stderr is a terminal"; the other options as the fields are.

        >>> TrainSettings.from_arguments(300, special_tokens=["<s>"], initial_alphabet="acgt")
        Traceback (most recent call last):
        ValueError: unknown initial_alphabet 'acgt': use "all" (every byte), "corpus" (only the symbols seen) or a list of characters, e.g. list("acgt")
        """
        return cls(
            vocab_size,
            special_tokens=tuple(check_special_tokens(special_tokens)),
            initial_alphabet=_alphabet(initial_alphabet),
            progress=show_progress(progress),
            forbid_across=forbid_across_tuple(forbid_across),
            **options,
        )


def _check_count(name: str, value: object, least: int, optional: bool = True) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name} must be {'None or ' if optional else ''}an int >= {least}, got {value!r}")
    if value >= 1 << 64:
        raise ValueError(f"{name}={value} is too large: it must be below 2**64")


def forbid_across_tuple(forbid_across: object) -> tuple[str, ...]:
    """`forbid_across` as the settings hold it: one class (a str) or several (an iterable of str).

    >>> forbid_across_tuple("newline"), forbid_across_tuple(["digit", "letter"])
    (('newline',), ('digit', 'letter'))
    """
    if isinstance(forbid_across, str):
        return (forbid_across,)
    if not isinstance(forbid_across, Iterable):
        raise TypeError(
            f"forbid_across must be a class name, a string of characters, or a list of them, not "
            f"{type(forbid_across).__name__}"
        )
    return tuple(forbid_across)


def check_forbid_across(classes: tuple[str, ...]) -> None:
    """Raises TypeError / ValueError unless each class is a name of FORBID_ACROSS_CLASSES or a non-empty string
    of characters, each given once."""
    for spec in classes:
        if not isinstance(spec, str):
            raise TypeError(f"forbid_across classes must be str, got {type(spec).__name__} ({spec!r})")
        if spec == "":
            raise ValueError(
                f"forbid_across got an empty string: give a class name ({', '.join(map(repr, FORBID_ACROSS_CLASSES))}) "
                f"or the characters of a class, such as '\\n'"
            )
        if spec.isidentifier() and len(spec) > 1 and spec not in FORBID_ACROSS_CLASSES:
            raise ValueError(
                f"unknown forbid_across class {spec!r}: use one of {', '.join(map(repr, FORBID_ACROSS_CLASSES))}, "
                f"or a string of the characters of a class (such as '\\n' or '0123456789')"
            )
    if len(set(classes)) != len(classes):
        raise ValueError(f"forbid_across lists a class twice: {list(classes)!r}")


def veto_function(veto: object) -> Callable[[bytes, bytes], object] | None:
    """The function the core asks about each candidate merge, for what `veto=` takes (see `Veto`): a regex is
    searched in the merged token (its text for a str pattern, its bytes for a bytes pattern).

    >>> refuse = veto_function(r"\\d\\p{L}|\\p{L}\\d")  # no token spanning a digit and a letter
    >>> bool(refuse(b"a", b"1")), bool(refuse(b"1", b"2"))
    (True, False)
    """
    if veto is None:
        return None
    if isinstance(veto, str):
        return _searching(_compiled(veto), text=True)
    if isinstance(veto, bytes):
        return _searching(_compiled(veto), text=False)
    if isinstance(veto, (re.Pattern, regex.Pattern)):
        return _searching(veto, text=isinstance(veto.pattern, str))
    if callable(veto):
        return cast("Callable[[bytes, bytes], object]", veto)  # what it returns is taken as true or false
    raise TypeError(
        f"veto must be a regex (str or bytes, compiled or not) or a function veto(left: bytes, right: bytes), "
        f"not {type(veto).__name__}"
    )


def _compiled(pattern: str | bytes) -> regex.Pattern[Any]:
    try:
        return regex.compile(pattern)
    except regex.error as e:
        raise ValueError(f"veto={pattern!r} is not a valid regex: {e}") from None


def _searching(pattern: re.Pattern[Any] | regex.Pattern[Any], *, text: bool) -> Callable[[bytes, bytes], bool]:
    """A veto that searches `pattern` in the merged token: its text (bytes decoded with errors="replace"), or
    its bytes."""
    search = pattern.search
    if text:
        return lambda left, right: search((left + right).decode("utf-8", errors="replace")) is not None
    return lambda left, right: search(left + right) is not None


def _check_superwords(settings: TrainSettings) -> None:
    after = settings.superwords_after
    if after is None:
        return
    if isinstance(after, bool) or not isinstance(after, int):
        raise TypeError(f"superwords_after must be None or an int, not {type(after).__name__}")
    if not 0 < after < settings.vocab_size:
        raise ValueError(
            f"superwords_after={after} must be between 1 and vocab_size={settings.vocab_size} (the vocabulary size "
            f"at which merges start to cross whitespace; the SuperBPE paper used about 80-90% of vocab_size)"
        )
    if settings.pattern is None:
        raise ValueError(
            "superwords_after needs a pre-tokenization pattern for its first stage (pattern=None makes each text "
            "one word already)"
        )


def _alphabet(initial_alphabet: object) -> Literal["all", "corpus"] | tuple[str, ...]:
    """initial_alphabet as the settings hold it: "all", "corpus", or a tuple of single characters."""
    if initial_alphabet == "all":
        return "all"
    if initial_alphabet == "corpus":
        return "corpus"
    if isinstance(initial_alphabet, str) or not isinstance(initial_alphabet, Iterable):
        raise ValueError(
            f'unknown initial_alphabet {initial_alphabet!r}: use "all" (every byte), "corpus" (only '
            f'the symbols seen) or a list of characters, e.g. list("acgt")'
        )
    extra: list[str] = []
    for c in initial_alphabet:
        if not isinstance(c, str) or len(c) != 1:
            raise ValueError(f"initial_alphabet items must be single characters, got {c!r}")
        extra.append(c)
    return tuple(extra)


def new_counts(
    settings: TrainSettings, keep_every_piece: bool = False, record_stretches: bool = False
) -> _core.WordCounts:
    """An empty word counter with the settings' pattern, special tokens and normaliser (the trained tokenizer then
    encodes with the same ones: training and encoding cannot drift apart). With tie_break="hf", special-token text
    found in the corpus is counted as ordinary text, as HF's trainer counts it (the others cut it out).
    `keep_every_piece`: the pieces are kept in corpus order, not counted, until the counts are asked for — for
    pieces that nearly never repeat (SuperBPE's stretches), which an extension takes as they are.
    `record_stretches`: SuperBPE's stretches (the pieces of SUPERWORDS_PATTERN) are recorded as the words counted;
    after training on the words, `extend_counts` on the same counter continues on the stretches (its second
    stage)."""
    return _core.WordCounts(
        settings.pattern,
        list(settings.special_tokens),
        settings.lowercase,
        thread_request(settings.threads),
        settings.unmatched or "keep",
        count_special_text=settings.tie_break == "hf",
        keep_every_piece=keep_every_piece,
        record_stretches=record_stretches,
    )


def count_words(
    corpus: Corpus,
    settings: TrainSettings,
    errors: Literal["strict", "replace"] = "strict",
    field: str | None = None,
) -> _core.WordCounts:
    """The words of `corpus` (see `train`) counted as `settings` pre-tokenize them."""
    return _count_with(corpus, [settings], errors, field)[0]


def _count_with(
    corpus: Corpus,
    settings: list[TrainSettings],
    errors: Literal["strict", "replace"],
    field: str | None = None,
    keep_every_piece: tuple[bool, ...] = (),
    record_stretches: bool = False,
) -> list[_core.WordCounts]:
    """The words of `corpus` counted once per settings (their patterns may differ), in one pass over it: a corpus
    that is an iterator can be read only once. Progress shows the first counter's reading. `keep_every_piece`: per
    settings, whether its counter keeps the pieces rather than counting them; `record_stretches`: the first counter
    records SuperBPE's stretches too (see `new_counts`)."""
    if errors not in ("strict", "replace"):
        raise ValueError(f'errors={errors!r} is not supported: use "strict" or "replace"')
    if field is not None and not isinstance(field, str):
        raise TypeError(f"field must be the name of the text field (a str), not {type(field).__name__}")
    keep = keep_every_piece or (False,) * len(settings)
    all_counts = [
        new_counts(s, k, record_stretches and i == 0) for i, (s, k) in enumerate(zip(settings, keep, strict=True))
    ]
    first = all_counts[0]
    batches = arrow.text_batches(corpus, field)
    files = corpus_files(corpus) if batches is None else None
    if settings[0].progress:
        first.show_progress(None if files is None else sum(os.path.getsize(p) for p in files))
    try:
        if batches is not None:  # Arrow-backed (a HF dataset or column): its buffers go to the core as they are
            arrow.add_to_counts(all_counts, batches)
        elif files is not None:
            for path in files:
                for counts in all_counts:
                    _count_file(counts, path, errors)
        else:
            for kind, item in corpus_items(corpus, field):
                for counts in all_counts:
                    if kind == "file":
                        assert isinstance(item, str)
                        _count_file(counts, item, errors)
                    else:
                        assert isinstance(item, list)
                        counts.add_texts(item)
    finally:
        first.finish_progress()
    for counts, s in zip(all_counts, settings):
        if counts.is_empty():
            pattern = s.pattern
            raise ValueError(
                "the corpus is empty: it holds no text to train on"
                + (
                    ""
                    if not counts.bytes_seen
                    else " (everything was whitespace, dropped by pattern='whitespace')"
                    if pattern == "whitespace"
                    else f" (the pattern {pattern!r} matched none of its text)"
                )
            )
    return all_counts


def _count_file(counts: _core.WordCounts, path: str, errors: str) -> None:
    """Counts a file's words: text files line by line in the core; JSON lines and parquet records, and zstd /
    xz / bz2 files, read here."""
    if read_natively(path):
        counts.add_file(path, errors)
        return
    for kind, item in file_texts(path, errors=errors):
        if kind == "lines":
            assert isinstance(item, str)
            counts.add_lines(item)
        else:
            assert isinstance(item, list)
            counts.add_texts(item)


def train_counts(
    counts: _core.WordCounts, settings: TrainSettings, *, stacklevel: int = 2, warn: bool = True
) -> Tokenizer:
    """Runs the merge loop on counted words (consuming the counts). Warns (RuntimeWarning, at `stacklevel` above
    the caller) when the corpus runs out of pairs before `vocab_size`, unless `warn` is False."""
    alphabet = settings.initial_alphabet
    mode_alphabet, extra = (alphabet, []) if isinstance(alphabet, str) else ("corpus", list(alphabet))
    core, stop = _core.train_counts(
        counts,
        settings.vocab_size,
        settings.mode,
        mode_alphabet,
        extra,
        settings.unk_token,
        settings.continuing_subword_prefix,
        settings.end_of_word_suffix,
        settings.min_frequency,
        settings.max_token_length,
        settings.tie_break,
        settings.progress,
        settings.limit_alphabet,
        forbid_across=list(settings.forbid_across),
        veto=veto_function(settings.veto),
    )
    tok = Tokenizer(core)
    if warn:
        _warn_if_short(tok, stop, settings.vocab_size, stacklevel + 1)
    return tok


def _warn_if_short(tok: Tokenizer, stop: str, vocab_size: int, stacklevel: int) -> None:
    if stop == "no_pairs_left" and tok.vocab_size < vocab_size:
        warnings.warn(
            f"the corpus ran out of pairs to merge: the vocabulary has {tok.vocab_size} tokens, not the "
            f"{vocab_size} asked for. Train on more text or ask for a smaller vocab_size.",
            RuntimeWarning,
            stacklevel=stacklevel + 1,
        )


def extend_counts(tok: Tokenizer, counts: _core.WordCounts, settings: TrainSettings, stacklevel: int = 2) -> Tokenizer:
    """`tok` extended on counted words (consuming them) up to `settings.vocab_size`, with the settings' merge
    options (the words were counted with `tok`'s special tokens and normaliser; the pattern they were counted
    with is the result's). Pieces kept rather than counted (`new_counts(..., keep_every_piece=True)`) are
    taken as they are, each once: the same merges as their counts give. Warns as `train` does, at `stacklevel`.

    >>> settings = TrainSettings(vocab_size=262)
    >>> tok = train(["low lower lowest"], 258)
    >>> counts = new_counts(settings)
    >>> counts.add_texts(["low lower lowest"])
    >>> extend_counts(tok, counts, settings).vocab_size
    262
    """
    core, stop = _core.extend_counts(
        tok.core,
        counts,
        settings.vocab_size,
        settings.min_frequency,
        settings.max_token_length,
        settings.tie_break,
        settings.progress,
        forbid_across=list(settings.forbid_across),
        veto=veto_function(settings.veto),
    )
    extended = Tokenizer(core)
    _warn_if_short(extended, stop, settings.vocab_size, stacklevel + 1)
    return extended


def _vocab_sizes(vocab_size: object) -> tuple[int, list[int] | None]:
    """The largest size to train to, and the sizes asked for when `vocab_size` is a list of them (None for one)."""
    if isinstance(vocab_size, int) or not isinstance(vocab_size, Sequence) or isinstance(vocab_size, str):
        return vocab_size, None  # type: ignore[return-value]  # TrainSettings checks it
    sizes = list(vocab_size)
    if not sizes:
        raise ValueError("vocab_size is an empty list: give one size, or a list of sizes such as [8000, 16000]")
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"vocab_size must be an int or a list of ints, got {size!r} in the list")
    if len(set(sizes)) != len(sizes):
        raise ValueError(f"vocab_size lists a size twice: {sizes!r}")
    return max(sizes), sizes


def _sizes_from_one_run(
    tok: Tokenizer, sizes: list[int], first_stage: tuple[Tokenizer, int] | None = None
) -> list[Tokenizer]:
    """One tokenizer per size, cut from `tok` (trained to the largest): what separate runs give. Sizes beyond what
    training reached (it ran out of pairs, and warned) get the whole tokenizer, as a run to that size would.
    `first_stage`: SuperBPE's first stage and its transition size; sizes up to that come from the first stage
    (a run to such a size has no second stage)."""
    out = []
    for size in sizes:
        source = first_stage[0] if first_stage is not None and size <= first_stage[1] else tok
        # (Tokenizers are immutable: the one trained to a size asked for is returned as it is, not copied.)
        out.append(source if size >= source.vocab_size else source.truncate(size))
    return out


def _train_superwords(
    corpus: Corpus,
    settings: TrainSettings,
    errors: Literal["strict", "replace"],
    stacklevel: int,
    field: str | None = None,
) -> tuple[Tokenizer, Tokenizer]:
    """SuperBPE: the first stage (`settings.pattern`, up to `superwords_after`), then the second, which continues
    on words cut by SUPERWORDS_PATTERN (see README). The corpus is read once: its words are counted, and its
    stretches recorded as those words (see `new_counts`). Returns (first stage, result)."""
    assert settings.superwords_after is not None
    first = replace(settings, vocab_size=settings.superwords_after, superwords_after=None)
    second = replace(settings, pattern=SUPERWORDS_PATTERN, superwords_after=None)
    (counts,) = _count_with(corpus, [first], errors, field, record_stretches=True)
    # (A first stage that runs out of pairs before the transition is no reason to warn: the second goes on.)
    stage1 = train_counts(counts, first, warn=False)
    return stage1, extend_counts(stage1, counts, second, stacklevel + 1)


@overload
def train(
    corpus: Corpus,
    vocab_size: int,
    *,
    mode: Mode = ...,
    pattern: str | None = ...,
    special_tokens: Iterable[str] = ...,
    initial_alphabet: Literal["all", "corpus"] | Iterable[str] = ...,
    min_frequency: int = ...,
    lowercase: bool = ...,
    continuing_subword_prefix: str | None = ...,
    end_of_word_suffix: str | None = ...,
    unk_token: str | None = ...,
    max_token_length: int | None = ...,
    limit_alphabet: int | None = ...,
    tie_break: TieBreak = ...,
    threads: int | None = ...,
    progress: bool | None = ...,
    errors: Literal["strict", "replace"] = ...,
    forbid_across: str | Iterable[str] = ...,
    veto: Veto | None = ...,
    superwords_after: int | None = ...,
    unmatched: Unmatched | None = ...,
    field: str | None = ...,
) -> Tokenizer: ...


@overload
def train(
    corpus: Corpus,
    vocab_size: Sequence[int],
    *,
    mode: Mode = ...,
    pattern: str | None = ...,
    special_tokens: Iterable[str] = ...,
    initial_alphabet: Literal["all", "corpus"] | Iterable[str] = ...,
    min_frequency: int = ...,
    lowercase: bool = ...,
    continuing_subword_prefix: str | None = ...,
    end_of_word_suffix: str | None = ...,
    unk_token: str | None = ...,
    max_token_length: int | None = ...,
    limit_alphabet: int | None = ...,
    tie_break: TieBreak = ...,
    threads: int | None = ...,
    progress: bool | None = ...,
    errors: Literal["strict", "replace"] = ...,
    forbid_across: str | Iterable[str] = ...,
    veto: Veto | None = ...,
    superwords_after: int | None = ...,
    unmatched: Unmatched | None = ...,
    field: str | None = ...,
) -> list[Tokenizer]: ...


def train(
    corpus: Corpus,
    vocab_size: int | Sequence[int],
    *,
    mode: Mode = "byte",
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
    tie_break: TieBreak = "first_seen",
    threads: int | None = None,
    progress: bool | None = None,
    errors: Literal["strict", "replace"] = "strict",
    forbid_across: str | Iterable[str] = (),
    veto: Veto | None = None,
    superwords_after: int | None = None,
    unmatched: Unmatched | None = None,
    field: str | None = None,
) -> Tokenizer | list[Tokenizer]:
    """Trains a BPE tokenizer on a corpus.

    corpus: a path (str or Path) to a UTF-8 text file, or an iterable whose items are texts (str), batches of
        texts (lists of str) or paths (Path objects). A HF `datasets` column (`dataset["text"]`), a dataset
        (`field` names its text column), an iterable (streaming) dataset or a pyarrow array or table is read as
        Arrow, its buffers handed to the core without a Python string per row (the fast way: as fast as batches
        of str, where iterating the column row by row was ~20x slower). A list or tuple of str that all name
        existing files is read as a list of files. Text files are read line by line (each line with its line
        break is one text); JSON lines (`.jsonl`) and parquet files record by record (each record's "text");
        any of them may be gzip, zstd, xz or bzip2 compressed (told by their first bytes). Glob patterns
        ("data/*.txt") are expanded.
    vocab_size: size of the final vocabulary, special tokens and base alphabet included; or a list of sizes,
        for a list of tokenizers in that order from one run — each exactly what training to that size gives
        (merges are a prefix of the largest run's; see `Tokenizer.truncate`).
    mode: "byte" — symbols are UTF-8 bytes shown with GPT-2's table, so any text can be encoded; or "char" —
        symbols are the characters seen in the corpus.
    pattern: pre-tokenization: "gpt2", "cl100k", "o200k", "whitespace" (HF's `\\w+|[^\\w\\s]+`), None (each text
        is one word), or a regex (fancy-regex's syntax: look-arounds and possessive repeats are allowed). A regex
        runs on a linear-time automaton unless it needs backtracking; either way a text may cost at most a fixed
        amount of work per byte, beyond which ValueError names the pattern (a regex whose work grows with the
        square of a run, such as `\\w+(?=\\s)|\\w` on a long word), and Ctrl-C stops it.
    unmatched: what a regex pattern does with text it does not match: "keep" (the default: each stretch between
        matches is a piece of its own, so no text is lost), "drop" (left out of training and of encoding, as
        tiktoken does; decode(encode(text)) loses it) or "error" (ValueError naming the text). Only for a regex;
        named patterns decide for themselves ("whitespace" drops whitespace, the others match everything).
    special_tokens: tokens that get the first ids; never merged. Their text in the corpus is cut out before
        counting — except with tie_break="hf", which counts it as ordinary text, as HF tokenizers' trainer does.
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
        without word markers, special-token text in the corpus counted as text as HF does; see the README for
        markers) or
        "lexicographic" (the greater pair compared as bytes, Stanford CS336's rule).
    threads: threads for reading and counting words (None: all cores, or RAYON_NUM_THREADS; never more than
        the cores). The result does not depend on it. The merge loop itself runs on one thread (for genomes, its recounts use two).
    progress: show progress on stderr; None shows it when stderr is a terminal. Ctrl-C stops training.
    errors: "strict" (bytes that are not UTF-8 raise, naming file and offset) or "replace".
    forbid_across: classes no token may straddle: "newline", "whitespace", "digit", "letter", "punctuation", or a
        string of characters (one class); one class or a list. A merge that would join a character in the class
        to one outside it is never made (forbid_across="newline": no token holds a line break next to anything
        but line breaks).
    veto: asked about each merge about to be made — the best pair at that point — and never again about that
        pair; a merge it refuses is never made, and the next best is taken. A str regex is searched in the
        candidate token's text (its bytes decoded with errors="replace"), a bytes regex in its bytes; a function
        is called with the two parts as bytes, `veto(left, right)`, and refuses with a true result. An exception
        it raises stops training and is raised.
    superwords_after: SuperBPE (Liu et al. 2025): train with `pattern` up to this vocabulary size, then continue
        on words cut by SUPERWORDS_PATTERN, so that merges cross the spaces between words ("ĠofĠthe"); the
        result encodes with SUPERWORDS_PATTERN. See the README for the rules implemented.
    field: the text column of a dataset or table, or the key of the text in mapping items (dicts): without it, a
        dataset with one string column uses that column.

    If the corpus runs out of pairs before `vocab_size`, training stops with a warning and the smaller vocabulary.

    >>> tok = train(["low lower lowest"] * 5, vocab_size=259)
    >>> tok.merges
    [('l', 'o'), ('lo', 'w'), ('Ġ', 'low')]
    >>> [t.merges for t in train(["low lower lowest"] * 5, vocab_size=[258, 259])]
    [[('l', 'o'), ('lo', 'w')], [('l', 'o'), ('lo', 'w'), ('Ġ', 'low')]]
    """
    largest, sizes = _vocab_sizes(vocab_size)
    settings = TrainSettings.from_arguments(
        largest,
        mode=mode,
        pattern=pattern,
        special_tokens=special_tokens,
        initial_alphabet=initial_alphabet,
        min_frequency=min_frequency,
        lowercase=lowercase,
        continuing_subword_prefix=continuing_subword_prefix,
        end_of_word_suffix=end_of_word_suffix,
        unk_token=unk_token,
        max_token_length=max_token_length,
        limit_alphabet=limit_alphabet,
        tie_break=tie_break,
        threads=threads,
        progress=progress,
        forbid_across=forbid_across,
        veto=veto,
        superwords_after=superwords_after,
        unmatched=unmatched,
    )
    if settings.superwords_after is not None:
        first_stage, tok = _train_superwords(corpus, settings, errors, stacklevel=2, field=field)
        return tok if sizes is None else _sizes_from_one_run(tok, sizes, (first_stage, settings.superwords_after))
    tok = train_counts(count_words(corpus, settings, errors, field), settings, stacklevel=2)
    return tok if sizes is None else _sizes_from_one_run(tok, sizes)


def extend(
    tok: Tokenizer,
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
    """`tok` extended on `corpus` up to `vocab_size` ids (or a list of sizes: a list of tokenizers, as `train`
    gives): see `Tokenizer.extend`, which calls this."""
    largest, sizes = _vocab_sizes(vocab_size)
    s = tok.settings
    settings = TrainSettings.from_arguments(
        largest,
        mode=s["mode"],
        pattern=s["pattern"],
        special_tokens=tok.special_tokens,
        lowercase=s["lowercase"],
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        tie_break=tie_break if tie_break is not None else s["tie_break"] or "first_seen",
        threads=threads,
        progress=progress,
        forbid_across=forbid_across,
        veto=veto,
    )
    if largest < tok.vocab_size:
        raise ValueError(
            f"vocab_size={largest} is smaller than the tokenizer, which already has {tok.vocab_size} ids; extending "
            f"adds tokens after them: ask for more than {tok.vocab_size} (Tokenizer.truncate cuts a tokenizer down)"
        )
    # A SuperBPE tokenizer continues on stretches of text, nearly all different: kept, not counted (`new_counts`).
    keep = settings.pattern == SUPERWORDS_PATTERN
    counts = _count_with(corpus, [settings], errors, keep_every_piece=(keep,))[0]
    extended = extend_counts(tok, counts, settings, stacklevel=3)
    if sizes is None:
        return extended
    if min(sizes) < tok.vocab_size:
        raise ValueError(f"every size must be at least the tokenizer's {tok.vocab_size} ids, got {sorted(sizes)!r}")
    return _sizes_from_one_run(extended, sizes)


def train_from_counts(
    word_counts: Mapping[str, int] | CountedWords | str | os.PathLike[str],
    vocab_size: int,
    *,
    mode: Mode = "byte",
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
    tie_break: TieBreak = "first_seen",
    threads: int | None = None,
    progress: bool | None = None,
    unmatched: Unmatched | None = None,
) -> Tokenizer:
    """Trains from words counted elsewhere: `{word: count}`, in order of first appearance (the order matters
    for tie_break="first_seen"). Words are used as given — not pre-tokenized again — and `pattern` is what
    the tokenizer will use to encode. Words with count 0 are ignored. Other options as in `train`.

    `word_counts` may also be a counts file (`bytepair words -o counts.tsv`) or the `CountedWords` of
    `bytepair.count_corpus`: its words were made with a pattern, lowercasing and special tokens, which the
    tokenizer then uses (giving other non-default ones is a ValueError). The merges are those `train` gives on
    the corpus the words were counted in.

    >>> tok = train_from_counts({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}, vocab_size=11,
    ...                         mode="char", unk_token="[UNK]")
    >>> tok.merges
    [('u', 'g'), ('u', 'n'), ('h', 'ug')]
    >>> tok.tokenize("mug")
    ['[UNK]', 'ug']
    """
    counted = None
    if isinstance(word_counts, (str, os.PathLike)):
        word_counts = counts_file.load(word_counts)
    if isinstance(word_counts, CountedWords):
        counted = word_counts
        pattern, lowercase, special_tokens = _counted_settings(counted, pattern, lowercase, special_tokens)
    settings = TrainSettings.from_arguments(
        vocab_size,
        mode=mode,
        pattern=pattern,
        special_tokens=special_tokens,
        initial_alphabet=initial_alphabet,
        min_frequency=min_frequency,
        lowercase=lowercase,
        continuing_subword_prefix=continuing_subword_prefix,
        end_of_word_suffix=end_of_word_suffix,
        unk_token=unk_token,
        max_token_length=max_token_length,
        limit_alphabet=limit_alphabet,
        tie_break=tie_break,
        threads=threads,
        progress=progress,
        unmatched=unmatched,
    )
    if counted is not None:
        counts = new_counts(settings)
        counts.load_counts(counted.counts)  # already normalised and pre-tokenized: taken as they are
        if len(counts) == 0:
            raise ValueError("the word counts are empty: there is nothing to train on")
        return train_counts(counts, settings, stacklevel=2)
    assert not isinstance(word_counts, CountedWords)
    items = _checked_counts(word_counts)
    counts = new_counts(settings)
    counts.add_counted(items)
    if len(counts) == 0:
        raise ValueError("word_counts is empty (or every count is 0): there is nothing to train on")
    return train_counts(counts, settings, stacklevel=2)


def _counted_settings(
    counted: CountedWords, pattern: str | None, lowercase: bool, special_tokens: Iterable[str]
) -> tuple[str | None, bool, tuple[str, ...]]:
    """The pattern, lowercasing and special tokens of counted words; arguments that differ from them (other
    than the defaults) are an error, since the words were made with these."""
    given = tuple(special_tokens)
    clashes = []
    if pattern != "gpt2" and pattern != counted.pattern:
        clashes.append(f"pattern={pattern!r} (the words were made with {counted.pattern!r})")
    if lowercase and not counted.lowercase:
        clashes.append("lowercase=True (the words were not lowercased)")
    if given and given != counted.special_tokens:
        clashes.append(f"special_tokens={list(given)} (the words were cut at {list(counted.special_tokens)})")
    if clashes:
        raise ValueError(
            "these counts were made otherwise: "
            + "; ".join(clashes)
            + ". Count the corpus again with these settings, or leave them out"
        )
    return counted.pattern, counted.lowercase, counted.special_tokens


def _checked_counts(word_counts: object) -> list[tuple[str, int]]:
    """`word_counts` as (word, count) pairs in their order, each checked, and their total checked to fit."""
    if not isinstance(word_counts, Mapping):
        raise TypeError(
            f"word_counts must be a mapping of word -> count (e.g. a dict or Counter), not {type(word_counts).__name__}"
        )
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
        raise ValueError(
            f"the counts are too large: pairs could be counted up to {most} times, more than the "
            f"2**63 - 1 a pair count holds; divide the counts by {most // (1 << 62) + 1} or more "
            f"(the merges depend only on their ratios, up to ties)"
        )
    return items
