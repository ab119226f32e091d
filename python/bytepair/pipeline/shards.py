"""Sharded encoding: a corpus into the token shards pre-training frameworks memory-map — Megatron's indexed
datasets (`.bin` + `.idx`) or raw id files with document offsets — by worker processes or Ray, resumable.

How a job goes:

1. The inputs are expanded and cut into parts (`bytepair.corpus.plan_parts`), and consecutive parts are grouped
   into tasks of about `shard_size` bytes of tokens (estimated from their text: ~4 bytes of text per token).
   Each task writes one shard (`shard-NNNNN`) and, with a validation fraction, one validation shard
   (`val-NNNNN`). The plan depends on the inputs and settings alone: never on timing, engine or workers.
2. Tasks write into `OUT/.bytepair-staging/`, each file whole or not at all; the driver records each finished
   task there (`state.json`). A job that stops — an error, Ctrl-C, a SIGKILL — leaves nothing under a final name.
3. When every task is done, the shards are moved to their final names in `OUT`, then `OUT/manifest.json` is
   written (the tokenizer's hash, the inputs, the settings, the plan, and per shard its files with sizes and
   SHA-256, documents and tokens; a temporary file left by a run killed while writing it is removed first),
   then the staging folder is removed.

Running the same job again keeps every shard that matches the manifest or the staging record (same size; same
checksum with `verify=True`) and redoes the rest, so a job killed at any moment and run again ends byte for
byte as an uninterrupted one. A different tokenizer, different inputs (size or modification time) or different
settings under an existing `OUT` are an error naming the difference — or, with `overwrite=True`, the old
shards are removed first: a folder never mixes two jobs.

Tests stop the driver at chosen moments through `BYTEPAIR_FAULT=kill-driver:POINT` (POINT: `after-task:N`,
after the Nth task of the run is recorded; `moving:N`, after N files are moved; `before-cleanup`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .._tokenizer import Tokenizer
from ..corpus import PART_BYTES, InputFile, Part, PathLike, can_cut, expand_inputs, plan_parts
from ..formats import jsonl, megatron
from ..formats.native import dumps as native_dumps
from ..progress import Progress, show_progress
from ..streams import choose_dtype, separator_id, special_policy
from ..writing import fsync_folder, remove_leftovers, write_whole
from .engines import make_engine
from .tasks import EncodeJob, EncodeTask, TaskTiming

__all__ = ["MANIFEST", "STAGING", "EncodeResult", "encode_corpus", "parse_size", "tokenizer_sha256"]

MANIFEST = "manifest.json"
STAGING = ".bytepair-staging"
_STATE = "state.json"
#: Bytes of text per token assumed when grouping parts into shards (English with GPT-2-like vocabularies).
TEXT_BYTES_PER_TOKEN = 4
_LAYOUT = "bytepair-shards"
#: The timing of a run that ran no task.
NO_TIMING = TaskTiming(0.0, 0.0, 0.0)
_VERSION = 1

_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "KIB": 1 << 10, "MIB": 1 << 20}
_UNITS |= {"GIB": 1 << 30, "TIB": 1 << 40, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def parse_size(value: str | int) -> int:
    """A size in bytes from an int or a text such as "4MB", "1GB", "512KiB", "2.5G" (decimal units: KB, MB, GB,
    TB; binary: KiB, MiB, GiB, TiB).

    >>> parse_size("4MB"), parse_size("1GiB"), parse_size(1000)
    (4000000, 1073741824, 1000)
    """
    if isinstance(value, bool):
        raise TypeError("a size is an int or a text such as '4MB', not a bool")
    if isinstance(value, int):
        size = value
    else:
        found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", str(value))
        unit = found.group(2).upper() if found else None
        if found is None or unit not in _UNITS:
            raise ValueError(f"{value!r} is not a size: write it like 4MB, 1GB or 512MiB")
        size = int(float(found.group(1)) * _UNITS[unit])
    if size < 1:
        raise ValueError(f"a size must be at least one byte, got {value!r}")
    return size


def tokenizer_sha256(tok: Tokenizer) -> str:
    """The SHA-256 of the tokenizer's bytepair file (`Tokenizer.save`): the same tokenizer, however it was
    loaded (tokenizer.json, a .tiktoken file, a name), has the same hash."""
    return hashlib.sha256(native_dumps(tok).encode("utf-8")).hexdigest()


@dataclass
class EncodeResult:
    """What `encode_corpus` did: the manifest it wrote (see the module notes), how many shard files it wrote
    in this run and how many it kept from an earlier one, and its times (the engine's start and stop — a local
    Ray's ~3 s — apart from the encoding)."""

    output_dir: Path
    manifest: dict[str, Any]
    tasks_run: int
    tasks_kept: int
    seconds: float
    engine_start_seconds: float
    engine_stop_seconds: float
    workers: int
    threads: int
    #: The largest peak memory of a worker process in this run (MB; None when no task ran or not on Linux).
    worker_peak_rss_mb: float | None = None
    #: The tasks run in this run, summed: their wall times in their workers, the workers' CPU times in them,
    #: and the time spent finishing them (flushing shards to disk). CPU over wall is how busy workers were.
    task_timing: TaskTiming = NO_TIMING

    @property
    def documents(self) -> int:
        return int(self.manifest["totals"]["documents"])

    @property
    def tokens(self) -> int:
        return int(self.manifest["totals"]["tokens"])

    @property
    def text_bytes(self) -> int:
        return int(self.manifest["totals"]["text_bytes"])

    @property
    def shards(self) -> list[dict[str, Any]]:
        return list(self.manifest["shards"])


def encode_corpus(
    inputs: PathLike | Sequence[PathLike],
    tokenizer: Tokenizer | PathLike,
    output_dir: PathLike,
    *,
    format: Literal["megatron", "bin"] = "megatron",
    shard_size: str | int = "1GB",
    engine: Literal["local", "ray"] = "local",
    workers: int | None = None,
    threads: int | None = None,
    ray_address: str | None = None,
    val_fraction: float = 0.0,
    separator: str | None = "auto",
    field: str | None = None,
    documents: Literal["file", "line"] = "file",
    special: Literal["error", "allow", "text"] = "error",
    errors: Literal["strict", "replace"] = "strict",
    dtype: str | None = None,
    overwrite: bool = False,
    verify: bool = False,
    max_record_bytes: int = jsonl.MAX_RECORD_BYTES,
    progress: bool | None = None,
) -> EncodeResult:
    """Encodes a corpus into shards in `output_dir` (what `bytepair encode INPUTS --output-dir OUT` does).

    inputs: files, folders, globs or URLs of `.txt`, `.jsonl`, `.parquet` (each may be `.gz`, `.zst`, `.xz`,
        `.bz2`). JSON lines and parquet files hold one document per record, its `field` (default "text"); a
        text file is one document (`documents="line"`: one per line).
    tokenizer: a `Tokenizer`, or what `load_tokenizer` takes (a folder, a file, an encoding name).
    format: "megatron" (`.bin` + `.idx`, MMIDIDX v1; uint16 ids when the vocabulary has fewer than 65 500,
        else int32) or "bin" (raw little-endian ids, `dtype` uint16 when every id fits else uint32, with
        `.offsets.npy`: where each document starts, in tokens).
    shard_size: the target size of a shard's token data ("1GB", "64MB", or bytes). Shards end at documents.
    engine, workers, threads, ray_address: where tasks run — "local" worker processes or "ray" (a local Ray,
        or the cluster at `ray_address`); `workers` at once (default: the cores), each with `threads`
        encoding threads (default: the cores shared between the workers).
    val_fraction: the share of documents (by a stable hash of their file and place, see
        `bytepair.pipeline.tasks.is_validation`) written to validation shards instead.
    separator: a special token written after every document: "auto" (the default: `<|endoftext|>` when the
        tokenizer has it), None or "none" for none, or a special token's text.
    special, errors: special-token text in documents ("error", "allow", "text"), bytes that are not UTF-8
        ("strict" or "replace") — as `bytepair encode`.
    overwrite: replace the shards of another job in `output_dir` (else that is an error).
    verify: check the SHA-256 of the shards kept from an earlier run (else their sizes are checked).
    max_record_bytes: the longest line (record) read; memory per worker is bounded by it.
    progress: show one progress bar for all workers (None: when stderr is a terminal).

    >>> import bytepair, os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "docs.jsonl"), "w") as f:
    ...     _ = f.write('{"text": "hello world"}\\n{"text": "hello again"}\\n')
    >>> tok = bytepair.train(["hello world hello again"] * 3, 270, special_tokens=["<|endoftext|>"])
    >>> result = encode_corpus(folder, tok, os.path.join(folder, "out"), workers=1, progress=False)
    >>> result.documents, [s["name"] for s in result.shards]
    (2, ['shard-00000'])
    """
    begin = time.perf_counter()
    options = _checked_options(format, documents, special, errors, val_fraction, max_record_bytes, engine)
    size = parse_size(shard_size)
    if isinstance(tokenizer, Tokenizer):
        tok = tokenizer
    else:
        from ..formats import load_tokenizer

        tok = load_tokenizer(tokenizer)
    special_policy(tok, special)
    files = expand_inputs(
        [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs), field_given=field is not None
    )
    if not files:
        raise FileNotFoundError("no input files: give files, folders or globs of .txt, .jsonl or .parquet files")
    chosen_dtype = megatron.dtype_for(tok.vocab_size) if format == "megatron" else choose_dtype(tok, dtype)
    if format == "megatron" and dtype is not None and dtype != chosen_dtype:
        raise ValueError(f"megatron shards of this tokenizer hold {chosen_dtype} (Megatron's rule); leave dtype out")
    sep_token = _separator(tok, separator)
    width = 2 if chosen_dtype == "uint16" else 4
    text_per_shard = max(1, size * TEXT_BYTES_PER_TOKEN // width)
    parts = plan_parts(files, whole_files=documents == "file", part_bytes=min(PART_BYTES, text_per_shard))
    tasks = _group(parts, text_per_shard, val_fraction > 0)
    identity = {
        "tokenizer": {"sha256": tokenizer_sha256(tok), "vocab_size": tok.vocab_size},
        "inputs": [{"path": f.path, "name": f.name, "size": f.size, "mtime_ns": f.mtime_ns} for f in files],
        "settings": {
            "format": format,
            "dtype": chosen_dtype,
            "shard_size": size,
            "separator": sep_token,
            "val_fraction": val_fraction,
            "field": "text" if field is None else field,
            "documents": documents,
            "special": special,
            "errors": errors,
        },
        "plan": [[[_input_index(files, p.file), p.start, p.stop] for p in task.parts] for task in tasks],
    }
    out = Path(output_dir)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{os.fspath(output_dir)!r} is a file: give a folder for the shards")
    out.mkdir(parents=True, exist_ok=True)
    staging = out / STAGING
    done = _resumable(out, staging, identity, tasks, overwrite=overwrite, verify=verify)
    kept = len(done)
    job = EncodeJob(
        tokenizer=tok,
        staging=str(staging),
        format=format,
        dtype=chosen_dtype,
        separator=None if sep_token is None else separator_id(tok, sep_token),
        special=special,
        documents=documents,
        field="text" if field is None else field,
        cut=can_cut(tok),
        errors=errors,
        max_record_bytes=max_record_bytes,
        val_fraction=val_fraction,
        fault=os.environ.get("BYTEPAIR_FAULT"),
    )
    todo = [task for task in tasks if task.index not in done]
    start_seconds = stop_seconds = 0.0
    workers_used, threads_used = workers or 0, threads or 0
    worker_peak: float | None = None
    timings: list[TaskTiming] = []
    bar = Progress("encoding", show_progress(progress))
    bar.total = sum(f.size for f in files)
    if todo:
        staging.mkdir(exist_ok=True)
        _save_state(staging, identity, done)
        eng = make_engine(options["engine"], job, workers=workers, threads=threads, ray_address=ray_address)
        start_seconds = getattr(eng, "start_seconds", 0.0)
        workers_used, threads_used = eng.workers, eng.threads
        earlier = [s.get("report", {}) for s in done.values()]
        try:
            for task in todo:
                eng.submit(str(task.index), "encode", task)
            finished = 0
            while eng.busy:
                event = eng.next(0.2)
                reports = earlier + list(eng.reports().values())
                bar.set(
                    sum(r.get("input_bytes", 0) for r in reports),
                    sum(r.get("tokens", 0) for r in reports),
                    sum(r.get("documents", 0) for r in reports),
                )
                if event is None:
                    continue
                peak = event.summary.pop("peak_rss_mb", None)
                if peak is not None:
                    worker_peak = max(worker_peak or 0.0, peak)
                timing = event.summary.pop("timing", None)  # (not recorded: the manifest depends on inputs alone)
                if timing is not None:
                    timings.append(timing)
                done[int(event.key)] = event.summary
                _save_state(staging, identity, done)
                finished += 1
                _driver_fault(f"after-task:{finished}")
        except BaseException:
            bar.finish()
            raise
        finally:
            closing = time.perf_counter()
            eng.close()
            stop_seconds = time.perf_counter() - closing if options["engine"] == "ray" else 0.0
    bar.finish()
    manifest = _finish(out, staging, identity, tasks, done)
    return EncodeResult(
        out,
        manifest,
        len(todo),
        kept,
        time.perf_counter() - begin,
        start_seconds,
        stop_seconds,
        workers_used,
        threads_used,
        worker_peak,
        TaskTiming(*(sum(column) for column in zip(*timings))) if timings else NO_TIMING,
    )


def _checked_options(
    format: str, documents: str, special: str, errors: str, val_fraction: float, max_record_bytes: int, engine: str
) -> dict[str, Any]:
    if format not in ("megatron", "bin"):
        raise ValueError(f'format must be "megatron" or "bin" for shards, not {format!r}')
    if documents not in ("file", "line"):
        raise ValueError(f'documents must be "file" or "line", not {documents!r}')
    if errors not in ("strict", "replace"):
        raise ValueError(f'errors must be "strict" or "replace", not {errors!r}')
    if special not in ("error", "allow", "text"):
        raise ValueError(f'special must be "error", "allow" or "text", not {special!r}')
    if isinstance(val_fraction, bool) or not isinstance(val_fraction, (int, float)) or not 0 <= val_fraction < 1:
        raise ValueError(f"val_fraction must be a number in [0, 1), got {val_fraction!r}")
    if isinstance(max_record_bytes, bool) or not isinstance(max_record_bytes, int) or max_record_bytes < 1:
        raise ValueError(f"max_record_bytes must be a positive int, got {max_record_bytes!r}")
    if engine not in ("local", "ray"):
        raise ValueError(f'engine must be "local" or "ray", not {engine!r}')
    return {"engine": engine}


def _separator(tok: Tokenizer, separator: str | None) -> str | None:
    if separator == "auto":
        return "<|endoftext|>" if "<|endoftext|>" in tok.special_tokens else None
    if separator is None or separator.lower() == "none":
        return None
    separator_id(tok, separator)  # a ValueError naming the special tokens when it is not one
    return separator


def _input_index(files: list[InputFile], file: InputFile) -> int:
    return next(i for i, f in enumerate(files) if f.path == file.path)


def _group(parts: list[Part], text_per_shard: int, validation: bool) -> list[EncodeTask]:
    """Consecutive parts grouped into tasks of about `text_per_shard` bytes of text (each at least one part)."""
    tasks: list[EncodeTask] = []
    group: list[Part] = []
    size = 0

    def close() -> None:
        n = len(tasks)
        names = {"train": f"shard-{n:05d}"} | ({"val": f"val-{n:05d}"} if validation else {})
        tasks.append(EncodeTask(n, list(group), names))

    for part in parts:
        group.append(part)
        size += part.estimate
        if size >= text_per_shard:
            close()
            group, size = [], 0
    if group or not tasks:
        close()
    return tasks


# -- resuming ---------------------------------------------------------------------------------------------------


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ValueError(f"{path} cannot be read ({e}); pass --overwrite (overwrite=True) to start again") from None
    if not isinstance(data, dict) or data.get("layout") != _LAYOUT:
        raise ValueError(f"{path} is not a bytepair shards manifest; pass --overwrite (overwrite=True) to replace it")
    return data


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    said = []
    if old.get("tokenizer") != new["tokenizer"]:
        said.append("another tokenizer")
    old_inputs = {i["path"]: i for i in old.get("inputs", [])}
    new_inputs = {i["path"]: i for i in new["inputs"]}
    changed = [p for p in new_inputs if p in old_inputs and old_inputs[p] != new_inputs[p]]
    added = [p for p in new_inputs if p not in old_inputs]
    gone = [p for p in old_inputs if p not in new_inputs]
    for what, paths in (("changed", changed), ("new", added), ("left out now", gone)):
        if paths:
            said.append(f"inputs {what}: {', '.join(paths[:3])}{' ...' if len(paths) > 3 else ''}")
    old_settings, new_settings = old.get("settings", {}), new["settings"]
    for key in new_settings:
        if old_settings.get(key) != new_settings[key]:
            said.append(f"{key} {old_settings.get(key)!r} -> {new_settings[key]!r}")
    if not said and old.get("plan") != new["plan"]:
        said.append("the parts the inputs are read in (another bytepair version?)")
    return said


def _identity_of(record: dict[str, Any]) -> dict[str, Any]:
    return {key: record.get(key) for key in ("tokenizer", "inputs", "settings", "plan")}


def _files_match(summary: dict[str, Any], folders: list[Path], verify: bool) -> bool:
    """Whether every file of a task's shards is in one of `folders` with its recorded size (and checksum)."""
    for shard in summary["shards"].values():
        for name, info in shard["files"].items():
            found = next((folder / name for folder in folders if (folder / name).is_file()), None)
            if found is None or found.stat().st_size != info["bytes"]:
                return False
            if verify and _sha256(found) != info["sha256"]:
                return False
    return True


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _resumable(
    out: Path, staging: Path, identity: dict[str, Any], tasks: list[EncodeTask], *, overwrite: bool, verify: bool
) -> dict[int, dict[str, Any]]:
    """The tasks of an earlier run of this job whose shards can be kept; an earlier job of another identity is
    an error, or with `overwrite` is removed."""
    final = _read_json(out / MANIFEST) if not overwrite else _read_json_or_none(out / MANIFEST)
    state = _read_json(staging / _STATE) if not overwrite else _read_json_or_none(staging / _STATE)
    if overwrite:
        for record in (final, state):
            for name in _recorded_files(record):
                with contextlib.suppress(FileNotFoundError):
                    (out / name).unlink()
        with contextlib.suppress(FileNotFoundError):
            (out / MANIFEST).unlink()
        shutil.rmtree(staging, ignore_errors=True)
        final = state = None
    for record, what in ((final, "shards"), (state, "unfinished shards")):
        if record is not None and _identity_of(record) != identity:
            differences = _differences(record, identity)
            raise ValueError(
                f"{out} holds {what} of another job ({'; '.join(differences) or 'different settings'}): pass "
                f"--overwrite (overwrite=True) to replace them, or choose another folder"
            )
    done: dict[int, dict[str, Any]] = {}
    planned = {task.index for task in tasks}
    if final is not None:
        for shard in final.get("tasks", []):
            if shard["index"] in planned and _files_match(shard, [out], verify):
                done[shard["index"]] = shard
    if state is not None:
        for key, summary in state.get("done", {}).items():
            if int(key) in planned and int(key) not in done and _files_match(summary, [staging, out], verify):
                done[int(key)] = summary
    ours = set(_recorded_files(final)) | set(_recorded_files(state))
    for task in tasks:
        if task.index in done:
            continue
        for name in task.names.values():
            for suffix in (".bin", ".idx", ".offsets.npy"):
                path = out / f"{name}{suffix}"
                if path.exists() and path.name not in ours:
                    raise FileExistsError(
                        f"{path} is already there and no bytepair job here wrote it: pass --overwrite "
                        f"(overwrite=True) to replace it, or choose another folder"
                    )
    return done


def _read_json_or_none(path: Path) -> dict[str, Any] | None:
    try:
        return _read_json(path)
    except ValueError:
        return None


def _recorded_files(record: dict[str, Any] | None) -> list[str]:
    if record is None:
        return []
    summaries = list(record.get("tasks", [])) + list(record.get("done", {}).values())
    return [name for s in summaries for shard in s.get("shards", {}).values() for name in shard.get("files", {})]


def _save_state(staging: Path, identity: dict[str, Any], done: dict[int, dict[str, Any]]) -> None:
    state = {"layout": _LAYOUT, "version": _VERSION, **identity, "done": {str(k): done[k] for k in sorted(done)}}
    write_whole(staging / _STATE, _json_text(state))


def _json_text(data: dict[str, Any]) -> str:
    """JSON indented by level, with lists of plain values kept on one line (the plan reads as a table)."""

    def render(value: Any, level: int) -> str:
        pad = " " * level
        if isinstance(value, dict) and value:
            items = [f"{pad} {json.dumps(k)}: {render(v, level + 1)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
            items = [f"{pad} {render(v, level + 1)}" for v in value]
            return "[\n" + ",\n".join(items) + "\n" + pad + "]"
        return json.dumps(value)

    return render(data, 0) + "\n"


def _driver_fault(point: str) -> None:
    if os.environ.get("BYTEPAIR_FAULT") == f"kill-driver:{point}":
        os.kill(os.getpid(), signal.SIGKILL)


def _finish(
    out: Path, staging: Path, identity: dict[str, Any], tasks: list[EncodeTask], done: dict[int, dict[str, Any]]
) -> dict[str, Any]:
    """Moves the staged shards to their final names, writes the manifest, removes the staging folder."""
    moved = 0
    for task in tasks:
        for shard in done[task.index]["shards"].values():
            for name in shard["files"]:
                source = staging / name
                if source.is_file():
                    os.replace(source, out / name)
                    moved += 1
                    _driver_fault(f"moving:{moved}")
    fsync_folder(out)
    records = []
    totals: dict[str, Any] = {"documents": 0, "tokens": 0, "text_bytes": 0}
    for task in tasks:
        summary = done[task.index]
        # (Not the workers' progress reports: how many stored bytes a reader buffered is no part of the output.)
        records.append({"index": task.index, "shards": summary["shards"], "text_bytes": summary["text_bytes"]})
        totals["text_bytes"] += summary["text_bytes"]
        for split, shard in summary["shards"].items():
            per = totals.setdefault(split, {"shards": 0, "documents": 0, "tokens": 0})
            per["shards"] += 1
            per["documents"] += shard["documents"]
            per["tokens"] += shard["tokens"]
            totals["documents"] += shard["documents"]
            totals["tokens"] += shard["tokens"]
    shards = [
        {
            "name": shard["name"],
            "split": split,
            "task": task.index,
            **{k: shard[k] for k in ("files", "documents", "tokens")},
        }
        for task in tasks
        for split, shard in done[task.index]["shards"].items()
    ]
    manifest = {
        "layout": _LAYOUT,
        "version": _VERSION,
        "complete": True,
        **identity,
        "shards": shards,
        "totals": totals,
        "tasks": records,
    }
    remove_leftovers(out / MANIFEST)  # a run killed while writing the manifest left its temporary file
    write_whole(out / MANIFEST, _json_text(manifest))
    _driver_fault("before-cleanup")
    shutil.rmtree(staging, ignore_errors=True)
    return manifest
