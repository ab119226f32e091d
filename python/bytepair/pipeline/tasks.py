"""What workers run: encoding parts of a corpus into shard files, counting the words of a part, merging counts.
Each task function takes the job's `Context`, the task's key, a `report` callback (running totals, for the
driver's progress bar) and its arguments, and returns `(summary, payload)`: a small dict the driver keeps, and
the data other tasks may need (word counts) or None.

A task's output depends only on its arguments and the job: shards are named by the plan, counts carry their
words' first positions; so running a task twice (a retry) gives the same bytes.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal, NamedTuple

from .. import _core
from .._tokenizer import Tokenizer
from ..corpus import Part, Piece, part_pieces, part_texts
from ..formats import ids, megatron
from ..memory import release_memory
from ..streams import encode_batches
from ..writing import open_whole

__all__ = [
    "FUNCTIONS",
    "WORKER_MEMORY",
    "Context",
    "CountJob",
    "EncodeJob",
    "EncodeTask",
    "MemoryKeeper",
    "ProgressBoard",
    "TaskTiming",
    "is_validation",
    "peak_rss_mb",
    "resident_mb",
    "run_on_ray",
    "worker_memory_settings",
]

Report = Callable[[dict[str, int]], None]

#: Characters a worker encodes per batch: half of `bytepair.streams.BATCH_CHARS`, for memory (a batch's texts,
#: ids and Python objects are a worker's largest transient); no slower (the scale benchmark's 1 worker × 2
#: threads: 55.6 MB/s, 49.4 in the run before with 2 M).
WORKER_BATCH_CHARS = 1 << 20

#: A worker gives the memory it freed back to the OS after a batch once it holds more than this (MB): a worker's
#: peak memory is what a cluster plans for, and freed memory (the batch before's texts, ids, buffers) otherwise
#: stays resident in the allocators' heaps. Not after every batch: refaulting the pages given back made a worker
#: with 2 threads ~30% slower (7.2-7.9 s against 5.4-5.6 s on 4 files of the scale benchmark). Local workers stay
#: below it (~230 MB with GPT-2); a Ray worker starts 80 MB higher (Ray's runtime) and is kept near it.
RELEASE_ABOVE_MB = 256
#: ...and holds this much more than just after its last release.
RELEASE_SLACK_MB = 16


@dataclass
class EncodeJob:
    """What every task of an encoding job shares: the tokenizer, where shards are staged, and how to write
    them (see `bytepair.pipeline.encode_corpus` for each setting)."""

    tokenizer: Tokenizer
    staging: str
    format: Literal["megatron", "bin"]
    dtype: str  # megatron: uint16 | int32; bin: uint16 | uint32
    separator: int | None
    special: str
    documents: Literal["file", "line"]
    field: str
    cut: bool
    errors: str
    max_record_bytes: int
    val_fraction: float
    fault: str | None = None

    @property
    def width(self) -> Literal[2, 4]:
        return 2 if self.dtype == "uint16" else 4


class TaskTiming(NamedTuple):
    """Where a worker's time on a task went: its wall time, the CPU time of the worker process (all its threads)
    in it, and the part of the wall time spent finishing (flushing the shards to disk, writing their index).
    CPU time well below wall time on an idle machine is time the worker waited (for the disk, mostly)."""

    seconds: float
    cpu_seconds: float
    finish_seconds: float


@dataclass
class EncodeTask:
    """One task of an encoding job: its parts (consecutive, in input order) and the shard names it writes,
    per split ("train", and "val" when a validation fraction is asked for)."""

    index: int
    parts: list[Part]
    names: dict[str, str]


@dataclass
class CountJob:
    """What every task of a word-counting job shares: how words are made, and how records are read."""

    pattern: str | None
    special_tokens: list[str]
    lowercase: bool
    field: str
    errors: str
    max_record_bytes: int
    fault: str | None = None


@dataclass
class Context:
    """A job as a worker holds it, with the threads it may use."""

    job: Any
    threads: int
    cache: dict[str, Any] = field(default_factory=dict)


def _status_mb(field: str) -> float | None:
    """A memory figure of this process from Linux's /proc/self/status ("VmHWM", "VmRSS"), MB; None elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):  # pragma: no cover (not Linux)
        pass
    return None


def peak_rss_mb() -> float | None:
    """This process's peak resident memory (VmHWM), MB: what a task reports of its worker."""
    return _status_mb("VmHWM")


def resident_mb() -> float | None:
    """This process's resident memory now (VmRSS), MB; None where there is no /proc."""
    return _status_mb("VmRSS")


@dataclass
class MemoryKeeper:
    """Gives a worker's freed memory back to the OS after a batch when the process holds more than `limit_mb`
    and `slack_mb` more than just after its last release (see RELEASE_ABOVE_MB). The second condition: a worker
    whose live memory is above the limit (a counting worker's words) would otherwise release after every batch
    and get little back (~5 % of a count's time for 6-26 MB less, 8 files of the scale benchmark). Reading the
    figure costs ~20 µs a batch."""

    limit_mb: float = RELEASE_ABOVE_MB
    slack_mb: float = RELEASE_SLACK_MB
    #: The resident memory just after the last release (about the worker's live memory then).
    released_at: float = 0.0

    def after_batch(self) -> None:
        resident = resident_mb()
        if resident is not None and resident > max(self.limit_mb, self.released_at + self.slack_mb):
            release_memory()
            self.released_at = resident_mb() or 0.0


#: The worker process's keeper (its state lasts across the tasks the process runs).
WORKER_MEMORY = MemoryKeeper()


def worker_memory_settings() -> None:
    """What a worker process sets once: Arrow allocates from the C heap (which `release_memory` trims) rather
    than its own jemalloc pool, which keeps freed pages of decoded parquet resident (~20 MB per worker here).
    Set before pyarrow is imported where possible (a local worker: its environment), else on the module."""
    import sys

    if "pyarrow" in sys.modules:  # a Ray worker: Ray imported it
        import pyarrow

        pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    else:
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")


def is_validation(name: str, key: int, fraction: float) -> bool:
    """Whether document `key` (its line's byte offset, or its row) of the input file named `name` goes to the
    validation split: a stable hash of the two (BLAKE2b), read as a number in [0, 1), is below `fraction`. The
    same on every machine, engine and worker count, and in every later run.

    >>> is_validation("a.jsonl", 0, 0.0), is_validation("a.jsonl", 0, 1.0)
    (False, True)
    """
    if fraction <= 0:
        return False
    digest = hashlib.blake2b(f"{name}\0{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2**64 < fraction


# -- faults (tests) ---------------------------------------------------------------------------------------------


def _maybe_die(fault: str | None, key: str) -> None:
    """`kill-worker:KEY:MARKER`: the worker running task KEY kills itself (SIGKILL) the first time it gets here;
    MARKER, created then, lets the retry pass. See `bytepair.pipeline.engines`."""
    if not fault or not fault.startswith("kill-worker:"):
        return
    _, target, marker = fault.split(":", 2)
    if target != key:
        return
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


# -- encoding ---------------------------------------------------------------------------------------------------


class _HashedFile:
    """Writes through to a file, keeping the SHA-256 and size of what went through (the manifest's checksum)."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.sha256 = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.out.write(data)
        self.sha256.update(data)
        self.size += len(data)


class _Shard:
    """One shard being written into the staging folder: `NAME.bin` (whole or not at all, when the task's files
    are closed), then its index (`NAME.idx`, megatron) or offsets (`NAME.offsets.npy`, bin)."""

    def __init__(self, folder: Path, name: str, job: EncodeJob, stack: contextlib.ExitStack) -> None:
        self.folder, self.name, self.job = folder, name, job
        self.bin = _HashedFile(stack.enter_context(open_whole(folder / f"{name}.bin")))
        self.lengths = array.array("i")
        self.current = 0
        self.tokens = 0

    def add(self, packed: bytes | bytearray | memoryview) -> None:
        self.bin.write(packed)
        self.current += len(packed) // self.job.width

    def end_document(self) -> None:
        if self.current >= 1 << 31:
            raise ValueError(f"a document of {self.current:,} tokens: shard indexes hold lengths below 2**31")
        self.lengths.append(self.current)
        self.tokens += self.current
        self.current = 0

    def finish(self) -> dict[str, Any]:
        """Writes the index after the `.bin` is in place; the shard's summary."""
        if self.job.format == "megatron":
            companion, chunks = f"{self.name}.idx", megatron.index_chunks(self.lengths, self.job.dtype)
        else:
            companion, chunks = f"{self.name}.offsets.npy", ids.offsets_npy(self.lengths)
        with open_whole(self.folder / companion) as f:
            index = _HashedFile(f)
            for chunk in chunks:
                index.write(chunk)
        files = {
            f"{self.name}.bin": {"bytes": self.bin.size, "sha256": self.bin.sha256.hexdigest()},
            companion: {"bytes": index.size, "sha256": index.sha256.hexdigest()},
        }
        return {"name": self.name, "files": files, "documents": len(self.lengths), "tokens": self.tokens}


def encode_task(context: Context, key: str, report: Report, task: EncodeTask) -> tuple[dict[str, Any], None]:
    """Encodes the task's parts into its shards in the staging folder (every document in the shard of its
    split, followed by the separator when there is one)."""
    started, cpu_started = time.perf_counter(), time.process_time()
    job: EncodeJob = context.job
    tok = job.tokenizer
    width = job.width
    separator = b"" if job.separator is None else job.separator.to_bytes(width, "little")
    names = {part.file.path: part.file.name for part in task.parts}
    read = {part.index: 0 for part in task.parts}
    totals = {"documents": 0, "input_bytes": 0, "tokens": 0}
    text_bytes = 0

    def pieces() -> Iterator[Piece]:
        for part in task.parts:

            def seen(n: int, index: int = part.index) -> None:
                read[index] = n

            yield from part_pieces(
                part,
                field=job.field,
                split=job.documents,
                cut=job.cut,
                errors=job.errors,
                max_record_bytes=job.max_record_bytes,
                on_bytes=seen,
            )

    with contextlib.ExitStack() as stack:
        folder = Path(job.staging)
        shards = {split: _Shard(folder, name, job, stack) for split, name in task.names.items()}
        current: _Shard | None = None  # the shard of the document being written
        batches = encode_batches(
            tok, pieces(), width=width, threads=context.threads, special=job.special, chars=WORKER_BATCH_CHARS
        )
        for number, (batch, packed, lengths) in enumerate(batches):
            view = memoryview(packed)
            offset = 0
            for piece, n in zip(batch, lengths):
                if current is None:
                    validation = "val" in shards and is_validation(names[piece.source], piece.key, job.val_fraction)
                    current = shards["val" if validation else "train"]
                current.add(view[width * offset : width * (offset + n)])
                offset += n
                if piece.last:
                    current.add(separator)
                    current.end_document()
                    current = None
                    totals["documents"] += 1
                text_bytes += len(piece.text.encode("utf-8")) if not piece.text.isascii() else len(piece.text)
            totals["tokens"] += offset
            totals["input_bytes"] = sum(read.values())
            report(totals)
            del batch, packed, lengths, view
            WORKER_MEMORY.after_batch()
            if number == 0:
                _maybe_die(job.fault, key)
        finishing = time.perf_counter()  # closing the stack flushes the `.bin` files to disk: part of finishing
    summaries = {split: shard.finish() for split, shard in shards.items()}
    finished = time.perf_counter()
    totals["tokens"] = sum(s["tokens"] for s in summaries.values())
    totals["input_bytes"] = sum(read.values())
    summary = {"index": task.index, "shards": summaries, "report": totals, "text_bytes": text_bytes}
    timing = TaskTiming(finished - started, time.process_time() - cpu_started, finished - finishing)
    return summary | {"peak_rss_mb": peak_rss_mb(), "timing": timing}, None


# -- counting ---------------------------------------------------------------------------------------------------


def count_task(context: Context, key: str, report: Report, part: Part) -> tuple[dict[str, Any], bytes]:
    """Counts the words of one part; the payload is its counts (each word with its first position)."""
    job: CountJob = context.job
    counter = _core.WordCounts(job.pattern, job.special_tokens, job.lowercase, context.threads)
    totals = {"documents": 0, "input_bytes": 0, "tokens": 0}

    def seen(n: int) -> None:
        totals["input_bytes"] = n

    items = part_texts(part, field=job.field, errors=job.errors, max_record_bytes=job.max_record_bytes, on_bytes=seen)
    for number, (kind, item) in enumerate(items):
        if kind == "lines":
            assert isinstance(item, str)
            counter.add_lines(item)
            totals["documents"] += item.count("\n") + (not item.endswith("\n"))
        else:
            assert isinstance(item, list)
            counter.add_texts(item)
            totals["documents"] += len(item)
        report(totals)
        del item
        WORKER_MEMORY.after_batch()
        if number == 0:
            _maybe_die(job.fault, key)
    counts = counter.take_unit(part.index)
    totals["words"] = len(counts)
    return {"report": totals, "bytes_seen": counts.bytes_seen, "peak_rss_mb": peak_rss_mb()}, counts.to_bytes()


def merge_task(context: Context, key: str, report: Report, first: bytes, second: bytes) -> tuple[dict[str, Any], bytes]:
    """Merges two sets of counts (in any order: each word keeps its earliest first position)."""
    merged = _core.PartialCounts.from_bytes(first)
    merged.merge(_core.PartialCounts.from_bytes(second))
    return {"words": len(merged), "peak_rss_mb": peak_rss_mb()}, merged.to_bytes()


FUNCTIONS: dict[str, Callable[..., tuple[dict[str, Any], Any]]] = {
    "encode": encode_task,
    "count": count_task,
    "merge": merge_task,
}


# -- Ray --------------------------------------------------------------------------------------------------------


class ProgressBoard:
    """A Ray actor where tasks post their running totals and the driver reads them all."""

    def __init__(self) -> None:
        self.reports: dict[str, dict[str, int]] = {}

    def post(self, key: str, totals: dict[str, int]) -> None:
        self.reports[key] = totals

    def snapshot(self) -> dict[str, dict[str, int]]:
        return self.reports


# A Ray worker process runs many tasks of a job: its context is unpickled once (a tokenizer takes ~0.1 s).
_CONTEXTS: dict[str, Context] = {}


def run_on_ray(
    function: str, key: str, context_bytes: bytes, threads: int, board: Any, *args: Any
) -> tuple[dict[str, Any], Any]:
    """A task as Ray runs it: the job's context from its pickled bytes (cached per process), progress posted to
    the board (at most four times a second)."""
    import pickle

    digest = hashlib.sha256(context_bytes).hexdigest()
    context = _CONTEXTS.get(digest)
    if context is None:
        worker_memory_settings()
        _CONTEXTS.clear()
        context = _CONTEXTS[digest] = Context(pickle.loads(context_bytes), threads)
    last = [0.0]

    def report(totals: dict[str, int]) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.25:
            last[0] = now
            board.post.remote(key, dict(totals))

    summary, payload = FUNCTIONS[function](context, key, report, *args)
    return summary, payload
