"""Training at scale: workers pre-tokenize and count the words of a corpus's parts (in the core), the counts —
not the text — travel and are merged in a tree, and the driver trains from the merged counts.

Each word carries its first position in input order (its part's number, its rank of first appearance in the
part), and a merge keeps the smaller: so the merged counts list the words in order of first appearance in the
whole corpus, whatever order the tasks finished in — and the merges, ties broken by `first_seen` included, are
exactly those of single-process `bytepair.train` on the same documents (text files line by line, records of
JSON lines and parquet files).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from .. import _core
from .._checks import check_pattern, check_special_tokens
from .._tokenizer import Tokenizer
from ..corpus import PathLike, expand_inputs, plan_parts
from ..formats import jsonl
from ..formats.counts import CountedWords
from ..progress import Progress, show_progress
from ..training import TieBreak, train_from_counts
from .engines import make_engine
from .tasks import CountJob

__all__ = ["count_corpus", "train_corpus"]


def count_corpus(
    inputs: PathLike | Sequence[PathLike],
    *,
    pattern: str | None = "gpt2",
    lowercase: bool = False,
    special_tokens: Iterable[str] = (),
    field: str | None = None,
    engine: Literal["local", "ray"] = "local",
    workers: int | None = None,
    threads: int | None = None,
    ray_address: str | None = None,
    errors: Literal["strict", "replace"] = "strict",
    max_record_bytes: int = jsonl.MAX_RECORD_BYTES,
    progress: bool | None = None,
) -> CountedWords:
    """Counts the words of a corpus (what `bytepair words` does): files, folders, globs or URLs of `.txt` (each
    line one text, as `train` reads them), `.jsonl` and `.parquet` (each record's `field`, default "text"),
    compressed or not — pre-tokenized with `pattern`, after `lowercase`, with `special_tokens` cut out — by
    `workers` processes or Ray tasks (see `encode_corpus` for `engine`, `workers`, `threads`, `ray_address`).

    Returns the words in order of first appearance with their counts; train from them with
    `train_from_counts` (as often as you like), or save them (`.save("counts.tsv")`).

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "a.txt"), "w") as f:
    ...     _ = f.write("low lower\\nlowest low\\n")
    >>> count_corpus(folder, workers=1, progress=False).items()
    [('low', 1), (' lower', 1), ('\\n', 2), ('lowest', 1), (' low', 1)]
    """
    check_pattern(pattern)
    specials = tuple(check_special_tokens(special_tokens))
    if not isinstance(lowercase, bool):
        raise TypeError(f"lowercase must be True or False, not {lowercase!r}")
    if errors not in ("strict", "replace"):
        raise ValueError(f'errors must be "strict" or "replace", not {errors!r}')
    files = expand_inputs(
        [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs), field_given=field is not None
    )
    if not files:
        raise FileNotFoundError("no input files: give files, folders or globs of .txt, .jsonl or .parquet files")
    parts = plan_parts(files)
    job = CountJob(
        pattern,
        list(specials),
        lowercase,
        "text" if field is None else field,
        errors,
        max_record_bytes,
        fault=os.environ.get("BYTEPAIR_FAULT"),
    )
    bar = Progress("counting words", show_progress(progress))
    bar.total = sum(f.size for f in files)
    with make_engine(engine, job, workers=workers, threads=threads, ray_address=ray_address) as eng:
        for part in parts:
            eng.submit(f"count-{part.index}", "count", part)
        # A tree: whenever two sets of counts are ready, a task merges them (in any order: see the module notes).
        ready: list[Any] = []
        merges = 0
        worker_peak: float | None = None
        try:
            while eng.busy:
                event = eng.next(0.2)
                reports = [r for key, r in eng.reports().items() if key.startswith("count-")]
                bar.set(
                    sum(r.get("input_bytes", 0) for r in reports),
                    sum(r.get("tokens", 0) for r in reports),
                    sum(r.get("documents", 0) for r in reports),
                )
                if event is None:
                    continue
                peak = event.summary.get("peak_rss_mb")
                if peak is not None:
                    worker_peak = max(worker_peak or 0.0, peak)
                ready.append(event.payload)
                while len(ready) >= 2:
                    merges += 1
                    eng.submit(f"merge-{merges}", "merge", ready.pop(0), ready.pop(0))
        finally:
            bar.finish()
        merged = _core.PartialCounts.from_bytes(eng.get(ready[0])) if ready else _core.PartialCounts()
    return CountedWords(merged, pattern, lowercase, specials, worker_peak_rss_mb=worker_peak)


def train_corpus(
    inputs: PathLike | Sequence[PathLike],
    vocab_size: int,
    *,
    engine: Literal["local", "ray"] = "local",
    workers: int | None = None,
    threads: int | None = None,
    ray_address: str | None = None,
    field: str | None = None,
    errors: Literal["strict", "replace"] = "strict",
    max_record_bytes: int = jsonl.MAX_RECORD_BYTES,
    progress: bool | None = None,
    pattern: str | None = "gpt2",
    lowercase: bool = False,
    special_tokens: Iterable[str] = (),
    mode: Literal["byte", "char"] = "byte",
    initial_alphabet: Literal["all", "corpus"] | Iterable[str] = "all",
    min_frequency: int = 0,
    continuing_subword_prefix: str | None = None,
    end_of_word_suffix: str | None = None,
    unk_token: str | None = None,
    max_token_length: int | None = None,
    limit_alphabet: int | None = None,
    tie_break: TieBreak = "first_seen",
) -> Tokenizer:
    """Trains a tokenizer on a corpus counted by workers (`count_corpus`), then merged on this machine (what
    `bytepair train INPUTS --engine local|ray` does). The merges equal `bytepair.train` on the same documents
    with the same options; see `train` for the training options, `count_corpus` for the others.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "a.txt"), "w") as f:
    ...     _ = f.write("low lower lowest\\n" * 5)
    >>> train_corpus(folder, 259, workers=1, progress=False).merges
    [('l', 'o'), ('lo', 'w'), ('Ġ', 'low')]
    """
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or vocab_size < 1:
        raise ValueError(f"vocab_size must be a positive int, got {vocab_size!r}")
    counted = count_corpus(
        inputs,
        pattern=pattern,
        lowercase=lowercase,
        special_tokens=special_tokens,
        field=field,
        engine=engine,
        workers=workers,
        threads=threads,
        ray_address=ray_address,
        errors=errors,
        max_record_bytes=max_record_bytes,
        progress=progress,
    )
    return train_from_counts(
        counted,
        vocab_size,
        mode=mode,
        initial_alphabet=initial_alphabet,
        min_frequency=min_frequency,
        continuing_subword_prefix=continuing_subword_prefix,
        end_of_word_suffix=end_of_word_suffix,
        unk_token=unk_token,
        max_token_length=max_token_length,
        limit_alphabet=limit_alphabet,
        tie_break=tie_break,
        progress=progress,
    )
