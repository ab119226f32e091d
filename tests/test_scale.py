"""Corpora at scale: sharded encoding (Megatron .bin/.idx, raw bin shards) on the local engine and on Ray, resuming
after a SIGKILL, workers killed and retried, bad input, empty input, and training at scale equal to
single-process training.

Ray runs as one local 2-CPU cluster for the module, started in a session of its own and stopped — every process
of that session, by its group id — at the end, even if a test killed a driver with SIGKILL.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import itertools
import json
import lzma
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

import bytepair
from bytepair.formats.counts import CountedWords
from conftest import shared_required

WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "a",
    "mat",
    "while",
    "dogs",
    "ran",
    "far",
    "away",
    "from",
    "home",
    "into",
    "night",
    "under",
    "stars",
    "and",
    "rain",
]


def _document(rng: random.Random, i: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 60))]
    if i % 7 == 0:
        words.append(f"number {rng.randint(0, 10**6)}")
    if i % 11 == 0:
        words.append("naïve café 🎉 Ünïcode")
    text = " ".join(words)
    return text + ("\n\n" + text.upper() if i % 5 == 0 else "")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, list[str]]:
    """A corpus folder in every input format, and its documents in input order (sorted file names)."""
    folder = tmp_path_factory.mktemp("corpus")
    rng = random.Random(7)
    docs = [_document(rng, i) for i in range(1800)]
    chunks = [docs[i * 300 : (i + 1) * 300] for i in range(6)]

    def lines(texts: list[str]) -> bytes:
        return "".join(
            json.dumps({"id": i, "text": t}, ensure_ascii=i % 2 == 0) + "\n" for i, t in enumerate(texts)
        ).encode()

    (folder / "a.jsonl").write_bytes(lines(chunks[0]))
    (folder / "b.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(lines(chunks[1])))
    (folder / "c.jsonl.gz").write_bytes(gzip.compress(lines(chunks[2])))
    (folder / "d.jsonl.xz").write_bytes(lzma.compress(lines(chunks[3])))
    (folder / "e.jsonl.bz2").write_bytes(bz2.compress(lines(chunks[4])))
    pq.write_table(pa.table({"id": list(range(300)), "text": chunks[5]}), folder / "f.parquet", row_group_size=64)
    return folder, docs


@pytest.fixture(scope="module")
def tok(corpus) -> bytepair.Tokenizer:
    _, docs = corpus
    return bytepair.train(docs, 400, special_tokens=["<|endoftext|>"])


def read_megatron(prefix: Path) -> list[list[int]]:
    """The documents of a Megatron indexed dataset, read from the published MMIDIDX v1 layout (not bytepair's
    reader): header, version, dtype code, sequence and document counts, int32 lengths, int64 byte pointers, int64
    document indices."""
    data = (prefix.with_suffix(".idx")).read_bytes()
    assert data[:9] == b"MMIDIDX\x00\x00"
    version, code, sequences, documents = struct.unpack_from("<QBQQ", data, 9)
    assert version == 1 and documents == sequences + 1
    dtype = {8: np.uint16, 4: np.int32}[code]
    offset = 9 + 8 + 1 + 8 + 8
    lengths = np.frombuffer(data, np.int32, sequences, offset)
    pointers = np.frombuffer(data, np.int64, sequences, offset + 4 * sequences)
    indices = np.frombuffer(data, np.int64, documents, offset + 12 * sequences)
    assert indices.tolist() == list(range(documents))
    assert len(data) == offset + 12 * sequences + 8 * documents
    tokens = np.fromfile(prefix.with_suffix(".bin"), dtype=dtype)
    assert int(lengths.sum()) == len(tokens)
    size = np.dtype(dtype).itemsize
    return [tokens[p // size : p // size + n].tolist() for p, n in zip(pointers, lengths)]


def folder_digest(folder: Path) -> dict[str, str]:
    """Every file's SHA-256 (hidden ones too: nothing may be left behind)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def encode(corpus_dir: Path | str, tok: bytepair.Tokenizer, out: Path, **options: object) -> bytepair.EncodeResult:
    settings: dict[str, object] = dict(shard_size="8KB", progress=False, val_fraction=0.1)
    settings.update(options)
    return bytepair.encode_corpus(corpus_dir, tok, out, **settings)  # type: ignore[arg-type]


# -- the local engine ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def reference(corpus, tok, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The shards of one clean local run with 2 workers, the output every other run must equal byte for byte."""
    out = tmp_path_factory.mktemp("reference") / "out"
    encode(corpus[0], tok, out, workers=2)
    return out, folder_digest(out)


def test_shards_hold_every_document_once_with_the_ids_of_encode(corpus, tok, reference):
    _, docs = corpus
    out, digest = reference
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(digest) == {"manifest.json"} | {name for s in manifest["shards"] for name in s["files"]}
    assert len(manifest["shards"]) > 6  # shards of ~8 KB of tokens: several per file
    seen: dict[str, list[list[int]]] = {"train": [], "val": []}
    for shard in manifest["shards"]:
        documents = read_megatron(out / shard["name"])
        assert len(documents) == shard["documents"] and sum(map(len, documents)) == shard["tokens"]
        for name, info in shard["files"].items():
            assert hashlib.sha256((out / name).read_bytes()).hexdigest() == info["sha256"]
        seen[shard["split"]] += documents
    eot = tok.token_to_id("<|endoftext|>")
    want = [tok.encode(d) + [eot] for d in docs]
    # Training shards keep input order; validation shards take ~10% of the documents, by a stable hash.
    assert sorted(map(tuple, seen["train"] + seen["val"])) == sorted(map(tuple, want))
    assert 0.05 * len(docs) < len(seen["val"]) < 0.15 * len(docs)
    remaining = iter(want)  # training documents come in input order: a subsequence of all of them
    assert all(any(d == w for w in remaining) for d in seen["train"])
    assert manifest["totals"]["documents"] == len(docs)
    assert manifest["tokenizer"]["sha256"] == bytepair.pipeline.shards.tokenizer_sha256(tok)


def test_output_is_the_same_for_any_number_of_workers(corpus, tok, reference, tmp_path):
    out = tmp_path / "one"
    result = encode(corpus[0], tok, out, workers=1)
    assert result.workers == 1 and result.threads >= 1
    assert folder_digest(out) == reference[1]  # (the tasks' timings are reported, never written)
    timing = result.task_timing
    assert 0 < timing.finish_seconds < timing.seconds < result.seconds and timing.cpu_seconds > 0


def test_bin_shards_with_offsets_read_with_numpy(corpus, tok, tmp_path):
    folder, docs = corpus
    result = encode(folder, tok, tmp_path / "bin", format="bin", val_fraction=0.0, separator="none", workers=2)
    ids = []
    for shard in result.shards:
        tokens = np.fromfile(tmp_path / "bin" / f"{shard['name']}.bin", dtype="<u2")
        offsets = np.load(tmp_path / "bin" / f"{shard['name']}.offsets.npy")
        assert offsets[0] == 0 and offsets[-1] == len(tokens) and len(offsets) == shard["documents"] + 1
        ids += [tokens[a:b].tolist() for a, b in itertools.pairwise(offsets)]
    assert ids == [tok.encode(d) for d in docs]  # no validation split: input order throughout


def test_a_killed_worker_is_retried_with_the_same_output(corpus, tok, reference, tmp_path):
    marker = tmp_path / "killed-once"
    env = {"BYTEPAIR_FAULT": f"kill-worker:3:{marker}"}
    with _environment(env):
        encode(corpus[0], tok, tmp_path / "out", workers=2)
    assert marker.exists()  # the worker running task 3 did die (SIGKILL), and the task ran again
    assert folder_digest(tmp_path / "out") == reference[1]


class _environment:
    def __init__(self, values: dict[str, str]) -> None:
        self.values, self.saved = values, {k: os.environ.get(k) for k in values}

    def __enter__(self) -> None:
        os.environ.update(self.values)

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def cli(*args: object, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """The command line in a process of its own session (so everything it starts can be stopped with it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "bytepair", *map(str, args)],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def stop_session(process: subprocess.Popen[bytes]) -> None:
    """Kills whatever is left of a process's session (its workers, a Ray it started), by the group's id."""
    with _suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


class _suppress:
    def __init__(self, *errors: type[BaseException]) -> None:
        self.errors = errors

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, value: object, trace: object) -> bool:
        return kind is not None and isinstance(value, self.errors)


@pytest.fixture(scope="module")
def saved_tok(tok, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tok") / "tok.json"
    tok.save(path)
    return path


ENCODE_ARGS = ["--shard-size", "8KB", "--val-fraction", "0.1", "--workers", "2"]


@pytest.mark.parametrize("point", ["after-task:2", "moving:3", "before-cleanup", "random"])
def test_resume_after_the_driver_is_killed_gives_the_same_bytes(corpus, saved_tok, reference, tmp_path, point):
    out = tmp_path / "out"
    args = ["encode", corpus[0], "-t", saved_tok, "--output-dir", out, *ENCODE_ARGS]
    if point == "random":
        process = cli(*args)
        time.sleep(random.Random(1).uniform(0.5, 1.5))
        os.kill(process.pid, signal.SIGKILL)
    else:
        process = cli(*args, env={"BYTEPAIR_FAULT": f"kill-driver:{point}"})
        process.wait(timeout=120)
        assert process.returncode == -signal.SIGKILL, process.stderr.read() if process.stderr else ""
    stop_session(process)  # its workers die with it; this makes sure
    if point != "random":
        assert (out / ".bytepair-staging").is_dir()
    if point.startswith(("after-task", "moving")):  # a partial job: no manifest, so no job is taken as done
        assert not (out / "manifest.json").exists()
    again = cli(*args)
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err.decode()
    assert folder_digest(out) == reference[1]
    if point in ("moving:3", "before-cleanup"):
        assert b"up to date" in err  # every task was done before the kill: none is run again
    rerun = cli(*args)
    _, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0 and b"up to date" in err
    assert folder_digest(out) == reference[1]


def test_another_job_in_the_same_folder_is_an_error_or_overwritten(corpus, tok, reference, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(reference[0], out)
    other = bytepair.train(corpus[1], 300, special_tokens=["<|endoftext|>"])
    with pytest.raises(ValueError, match="another job .*another tokenizer.*--overwrite"):
        encode(corpus[0], other, out, workers=1)
    with pytest.raises(ValueError, match="shard_size 8000 -> 16000"):
        encode(corpus[0], tok, out, workers=1, shard_size="16KB")
    assert folder_digest(out) == reference[1]  # untouched
    result = encode(corpus[0], tok, out, workers=1, shard_size="16KB", overwrite=True)
    names = {name for s in result.shards for name in s["files"]}
    assert set(folder_digest(out)) == names | {"manifest.json"}  # no shard of the old job is left
    # A file of someone else's under a shard's name is not overwritten without asking.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "shard-00000.bin").write_bytes(b"not ours")
    with pytest.raises(FileExistsError, match="no bytepair job here wrote it"):
        encode(corpus[0], tok, tmp_path / "mine", workers=1)
    assert (tmp_path / "mine" / "shard-00000.bin").read_bytes() == b"not ours"


def test_a_damaged_kept_shard_is_redone(corpus, tok, reference, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(reference[0], out)
    (out / "shard-00001.bin").write_bytes(b"\0\0")
    result = encode(corpus[0], tok, out, workers=1)
    assert result.tasks_run == 1
    assert folder_digest(out) == reference[1]


def test_a_manifest_a_killed_run_left_half_written_is_cleared_away(corpus, tok, reference, tmp_path):
    """A SIGKILL while the manifest is written leaves its temporary file: the next run removes it (and only it)."""
    out = tmp_path / "out"
    shutil.copytree(reference[0], out)
    (out / ".manifest.json.k2x9q0z_.tmp").write_bytes(b'{"layout": "bytep')
    (out / ".manifest.json.mine").write_bytes(b"someone else's")
    result = encode(corpus[0], tok, out, workers=1)
    assert result.tasks_run == 0
    assert not (out / ".manifest.json.k2x9q0z_.tmp").exists()
    assert (out / ".manifest.json.mine").read_bytes() == b"someone else's"
    (out / ".manifest.json.mine").unlink()
    assert folder_digest(out) == reference[1]


# -- bad and empty input -------------------------------------------------------------------------------------------


BAD_INPUTS = [
    ("bad.jsonl", b'{"text": "fine"}\n{"text": "fine"}\n{"text": oops}\n', r"bad\.jsonl, line 3: not JSON"),
    ("bad.jsonl", b'{"text": "a"}\n{"body": "b"}\n', r"bad\.jsonl, line 2: no field 'text' \(it has \['body'\]\)"),
    ("bad.jsonl", b'{"text": 5}\n', r"bad\.jsonl, line 1: field 'text' is a int, not a string"),
    ("bad.jsonl", b'{"text": null}\n', r"line 1: field 'text' is null"),
    ("bad.jsonl", b"[1, 2]\n", r"line 1: a JSON list, not an object"),
    ("bad.jsonl", b'{"text": "caf\xe9"}\n', r"bad\.jsonl, line 1: not UTF-8 .*--errors replace"),
    (
        "bad.jsonl.zst",
        zstandard.ZstdCompressor().compress(b'{"text": "a"}\n' * 5000)[:-20],
        r"bad\.jsonl\.zst: the zstd stream is cut short",
    ),
    ("bad.jsonl.gz", gzip.compress(b'{"text": "a"}\n' * 100)[:-12], r"bad\.jsonl\.gz: the gzip stream is cut short"),
    ("bad.jsonl.gz", b"\x1f\x8b\x08\x00garbage garbage", r"bad\.jsonl\.gz: not a valid gzip stream"),
    ("bad.jsonl.xz", b"\xfd7zXZ\x00 not really", r"bad\.jsonl\.xz: not a valid xz stream"),
    ("bad.parquet", b"PAR1 not a parquet file PAR1", r"bad\.parquet: not a readable parquet file"),
]


@pytest.mark.parametrize(
    ("name", "data", "message"), BAD_INPUTS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BAD_INPUTS)]
)
def test_bad_input_is_a_clear_error_and_nothing_gets_a_final_name(corpus, tok, tmp_path, name, data, message):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(corpus[0] / "a.jsonl", folder / "a.jsonl")  # a good file first: its shard is done before the error
    (folder / name).write_bytes(data)
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=message):
        encode(folder, tok, out, workers=2)
    # No shard and no manifest under a final name (a file found bad while planning stops before OUT is made).
    assert not out.exists() or [p.name for p in out.iterdir()] == [".bytepair-staging"]


def test_parquet_problems_name_the_column_or_row(tok, tmp_path):
    pq.write_table(pa.table({"body": ["a"]}), tmp_path / "cols.parquet")
    with pytest.raises(ValueError, match=r"no column 'text' \(its columns: \['body'\]\).*--field"):
        encode(tmp_path / "cols.parquet", tok, tmp_path / "o1", workers=1)
    pq.write_table(pa.table({"text": [1, 2]}), tmp_path / "ints.parquet")
    with pytest.raises(ValueError, match="column 'text' holds int64, not strings"):
        encode(tmp_path / "ints.parquet", tok, tmp_path / "o2", workers=1)
    pq.write_table(pa.table({"text": ["a", None]}), tmp_path / "null.parquet")
    with pytest.raises(ValueError, match=r"null\.parquet, row 1: 'text' is null"):
        encode(tmp_path / "null.parquet", tok, tmp_path / "o3", workers=1)
    # Another column, by name.
    encode(tmp_path / "cols.parquet", tok, tmp_path / "o4", workers=1, field="body", separator="none")
    assert read_megatron(tmp_path / "o4" / "shard-00000") == [tok.encode("a")]


def test_a_line_past_the_part_boundary_names_its_line_number(tok, tmp_path):
    # A plain file read in byte ranges (several parts): the bad record's line number is found when it is reported.
    lines = [json.dumps({"text": f"document number {i} " * 20}) for i in range(400)]
    lines[350] = "{broken"
    (tmp_path / "big.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"big\.jsonl, line 351: not JSON"):
        encode(tmp_path / "big.jsonl", tok, tmp_path / "out", workers=2, shard_size="2KB")


def test_undecodable_bytes_are_replaced_when_asked(tok, tmp_path):
    (tmp_path / "latin.jsonl").write_bytes(b'{"text": "caf\xe9"}\n')
    result = encode(tmp_path / "latin.jsonl", tok, tmp_path / "out", errors="replace", separator="none", workers=1)
    assert result.documents == 1
    assert read_megatron(tmp_path / "out" / "shard-00000") == [tok.encode("caf\ufffd")]


def test_a_decompression_bomb_stops_at_the_record_limit(tok, tmp_path):
    # 200 MB of one line, compressed to a few kB: reading stops at the record limit, memory stays small.
    writer = zstandard.ZstdCompressor(level=3).compressobj()
    with open(tmp_path / "bomb.jsonl.zst", "wb") as f:
        f.write(writer.compress(b'{"text": "'))
        block = b"a" * (1 << 20)
        for _ in range(200):
            f.write(writer.compress(block))
        f.write(writer.flush())
    assert (tmp_path / "bomb.jsonl.zst").stat().st_size < 100_000
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"bomb\.jsonl\.zst, line 1: the line is longer than 1,000,000 bytes"):
        encode(tmp_path / "bomb.jsonl.zst", tok, tmp_path / "out", workers=1, max_record_bytes=1_000_000)
    assert time.perf_counter() - started < 30


def test_empty_inputs(tok, tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "empty.jsonl").write_bytes(b"")
    (tmp_path / "in" / "blank.jsonl.gz").write_bytes(gzip.compress(b"\n\n"))
    result = encode(tmp_path / "in", tok, tmp_path / "out", workers=1, val_fraction=0.0)
    assert result.documents == 0 and result.tokens == 0
    assert [read_megatron(tmp_path / "out" / s["name"]) for s in result.shards] == [[]]
    (tmp_path / "none").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no files"):
        encode(tmp_path / "none", tok, tmp_path / "out2", workers=1)
    with pytest.raises(ValueError, match="empty"):
        bytepair.train_corpus(tmp_path / "in", 300, workers=1, progress=False)


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_gives_back_freed_memory_above_its_limit(tok):
    """What a worker freed (the ids of 2 threads, the texts) goes back to the OS once the worker holds more than
    its limit, and stays (no refaulting: speed) below it — what keeps a worker's peak memory near the limit."""
    from bytepair.pipeline.tasks import MemoryKeeper, resident_mb

    texts = ["lower newest widest, " * 500 for _ in range(4000)]
    packed, lengths = tok.encode_batch_packed(texts, width=4, threads=2)
    assert sum(lengths) > 10_000_000  # ~40 MB of ids, made on two threads
    del packed, lengths, texts
    before = resident_mb()
    assert before is not None and abs(before - _rss_mb()) < 5
    MemoryKeeper(limit_mb=before + 100).after_batch()  # below the limit: kept
    kept = resident_mb()
    assert kept is not None and kept > before - 5
    MemoryKeeper(limit_mb=before - 20).after_batch()  # above it: given back
    after = resident_mb()
    assert after is not None and before - after > 20


def test_a_worker_above_its_limit_releases_again_only_after_it_grew(monkeypatch):
    """Live memory above the limit (a counting worker's words) is not released after every batch for nothing."""
    from bytepair.pipeline import tasks

    released: list[bool] = []
    rss = iter([300.0, 280.0, 290.0, 320.0, 300.0])  # MB read before (and after) each release
    monkeypatch.setattr(tasks, "resident_mb", lambda: next(rss))
    monkeypatch.setattr(tasks, "release_memory", lambda: released.append(True))
    keeper = tasks.MemoryKeeper(limit_mb=256, slack_mb=16)
    keeper.after_batch()  # 300: released, down to 280
    keeper.after_batch()  # 290: not 16 MB above 280, kept
    keeper.after_batch()  # 320: released again
    assert released == [True, True]


# -- training at scale ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def training_corpus(tmp_path_factory, corpus) -> Path:
    """Text files (read line by line, in byte ranges), JSON lines and parquet records, with many ties."""
    folder = tmp_path_factory.mktemp("training")
    rng = random.Random(3)
    text = "".join(f"{' '.join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))}\n" for _ in range(20000))
    (folder / "a.txt").write_text(text + "no newline at the end")
    (folder / "b.txt.zst").write_bytes(zstandard.ZstdCompressor().compress(text[:50000].encode()))
    shutil.copy(corpus[0] / "c.jsonl.gz", folder / "c.jsonl.gz")
    shutil.copy(corpus[0] / "f.parquet", folder / "f.parquet")
    return folder


@pytest.mark.parametrize("tie_break", ["first_seen", "hf"])
def test_training_at_scale_gives_the_merges_of_one_process(training_corpus, tmp_path, tie_break):
    files = sorted(str(p) for p in training_corpus.iterdir())
    single = bytepair.train([Path(p) for p in files], 700, tie_break=tie_break, special_tokens=["<|endoftext|>"])
    at_scale = bytepair.train_corpus(
        training_corpus, 700, workers=2, tie_break=tie_break, special_tokens=["<|endoftext|>"], progress=False
    )
    assert at_scale.merges == single.merges
    assert at_scale == single
    # Parts of 64 MB would leave a.txt whole: cut it into many byte ranges, counted apart and merged in a tree.
    counted = bytepair.pipeline.counting.count_corpus(training_corpus, workers=2, progress=False)
    assert counted.items() == CountedWords.from_texts(_training_texts(files)).items()


def _training_texts(files: list[str]) -> list[str]:
    """The texts `train` counts in these files: each line of a text file with its line break, each record."""
    texts: list[str] = []
    for path in files:
        for kind, item in bytepair.corpus.file_texts(path):
            if kind == "lines":
                assert isinstance(item, str)
                *whole, rest = item.split("\n")
                texts += [line + "\n" for line in whole] + ([rest] if rest else [])
            else:
                assert isinstance(item, list)
                texts += item
    return texts


def test_counts_of_byte_ranges_merge_to_the_counts_of_the_whole(training_corpus):
    plan = bytepair.corpus.plan_parts(bytepair.corpus.expand_inputs([training_corpus]), part_bytes=4096)
    assert sum(p.file.name == "a.txt" for p in plan) > 20
    whole = CountedWords.from_texts(_training_texts(sorted(str(p) for p in training_corpus.iterdir())))
    from bytepair import _core

    merged = _core.PartialCounts()
    for part in reversed(plan):  # in reverse order: positions, not arrival, give the order
        counter = _core.WordCounts("gpt2", [], False, 1)
        for _, item in bytepair.corpus.part_texts(part):
            if isinstance(item, str):
                counter.add_lines(item)
            else:
                counter.add_texts(item)
        merged.merge(counter.take_unit(part.index))
    assert merged.items() == whole.items()


def test_words_file_trains_the_same_tokenizer_and_escapes_any_word(training_corpus, tmp_path):
    done = cli("words", training_corpus, "-o", tmp_path / "counts.tsv", "--workers", "2")
    _, err = done.communicate(timeout=120)
    assert done.returncode == 0, err.decode()
    trained = cli("train", "--from-counts", tmp_path / "counts.tsv", "--vocab-size", "600", "-o", tmp_path / "tok")
    _, err = trained.communicate(timeout=120)
    assert trained.returncode == 0, err.decode()
    files = sorted(str(p) for p in training_corpus.iterdir())
    want = bytepair.train([Path(p) for p in files], 600)
    assert bytepair.Tokenizer.load(tmp_path / "tok" / "bytepair.json") == want
    assert bytepair.train_from_counts(str(tmp_path / "counts.tsv"), 600) == want
    # Words with tabs, line breaks, backslashes and control bytes survive the file.
    odd = CountedWords.from_texts(["a\tb\\n c\r\n \x00\x7f é🎉 \\x41"] * 3, pattern=None)
    odd.save(tmp_path / "odd.tsv")
    assert CountedWords.load(tmp_path / "odd.tsv").items() == odd.items() == [("a\tb\\n c\r\n \x00\x7f é🎉 \\x41", 3)]
    with pytest.raises(ValueError, match="the words were made with 'gpt2'"):
        bytepair.train_from_counts(str(tmp_path / "counts.tsv"), 600, pattern="cl100k")
    (tmp_path / "cut.tsv").write_bytes((tmp_path / "counts.tsv").read_bytes()[:-200])
    with pytest.raises(ValueError, match=r"cut\.tsv.*(cut short|line)"):
        bytepair.train_from_counts(str(tmp_path / "cut.tsv"), 600)


def test_the_command_line_refuses_shard_options_without_a_folder(corpus, saved_tok, tmp_path):
    for extra in (["--format", "megatron"], ["--engine", "ray"], ["--val-fraction", "0.1"]):
        done = cli("encode", corpus[0] / "a.jsonl", "-t", saved_tok, "-o", tmp_path / "x", *extra)
        _, err = done.communicate(timeout=60)
        assert done.returncode == 2 and b"add --output-dir DIR" in err, err
    done = cli("encode", corpus[0], "-t", saved_tok, "--output-dir", tmp_path / "o", "--format", "json")
    _, err = done.communicate(timeout=60)
    assert done.returncode == 2 and b"megatron or bin" in err


# -- Ray -------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_address():
    """A local Ray cluster of 2 CPUs for the module, in a session of its own; every process of that session is
    killed at the end."""
    try:
        import ray  # noqa: F401
    except ImportError:
        if shared_required():
            pytest.fail("ray is not installed (make test installs it) — required under CI")
        pytest.skip("ray is not installed")
    temp = tempfile.mkdtemp(prefix="bpray-", dir="/tmp")  # short: Ray's socket paths must stay under 108 bytes
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ray_command = Path(sys.executable).with_name("ray")
    # A cluster on the loopback address only, for this test's processes: no token authentication to set up.
    ray_env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    log = open(Path(temp) / "start.log", "wb")  # noqa: SIM115  # closed at the end of the module
    process = subprocess.Popen(
        [
            str(ray_command),
            "start",
            "--head",
            f"--port={port}",
            "--node-ip-address=127.0.0.1",
            "--num-cpus=2",
            "--object-store-memory=200000000",
            f"--temp-dir={temp}",
            "--include-dashboard=false",
            "--disable-usage-stats",
            "--block",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=ray_env,
    )
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            probe = subprocess.run(
                [str(ray_command), "status", f"--address={address}"], capture_output=True, timeout=60, env=ray_env
            )
            if probe.returncode == 0:
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Ray did not start: {(Path(temp) / 'start.log').read_text()[-2000:]}")
            time.sleep(1)
        yield address
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with _suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
            time.sleep(1 if sig == signal.SIGTERM else 0)
        process.wait()
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def test_ray_gives_the_bytes_of_the_local_engine(corpus, tok, reference, ray_address, tmp_path):
    for workers in (1, 2):
        out = tmp_path / f"ray-{workers}"
        result = encode(corpus[0], tok, out, engine="ray", ray_address=ray_address, workers=workers)
        assert result.workers == workers
        assert folder_digest(out) == reference[1]


def test_ray_retries_a_killed_worker(corpus, tok, reference, ray_address, tmp_path):
    marker = tmp_path / "killed-once"
    with _environment({"BYTEPAIR_FAULT": f"kill-worker:2:{marker}"}):
        encode(corpus[0], tok, tmp_path / "out", engine="ray", ray_address=ray_address, workers=2)
    assert marker.exists()
    assert folder_digest(tmp_path / "out") == reference[1]


def test_ray_resume_after_the_driver_is_killed(corpus, saved_tok, reference, ray_address, tmp_path):
    out = tmp_path / "out"
    args = [
        "encode",
        corpus[0],
        "-t",
        saved_tok,
        "--output-dir",
        out,
        *ENCODE_ARGS,
        "--engine",
        "ray",
        "--ray-address",
        ray_address,
    ]
    process = cli(*args, env={"BYTEPAIR_FAULT": "kill-driver:after-task:3"})
    process.wait(timeout=300)
    assert process.returncode == -signal.SIGKILL
    stop_session(process)
    assert not (out / "manifest.json").exists()
    again = cli(*args)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err.decode()
    assert folder_digest(out) == reference[1]


def test_training_on_a_ray_of_its_own_equals_one_process(training_corpus, tmp_path):
    # Without an address the job starts a local Ray and stops it; run from the command line in its own session,
    # so that whatever Ray leaves behind is stopped with it.
    done = cli(
        "train", training_corpus, "--vocab-size", "500", "-o", tmp_path / "tok", "--engine", "ray", "--workers", "2"
    )
    try:
        _, err = done.communicate(timeout=300)
    finally:
        stop_session(done)
    assert done.returncode == 0, err.decode()
    files = sorted(training_corpus.iterdir())
    assert bytepair.Tokenizer.load(tmp_path / "tok" / "bytepair.json") == bytepair.train(files, 500)


def test_file_urls_read_like_paths(corpus, tok, reference, tmp_path):
    # URLs go through pyarrow's filesystems (s3://, gs://, ...); file:// is the one a test can use offline. A URL's
    # plain files are read whole (not in byte ranges), so shards fall elsewhere; the documents, their split and
    # their order are the same.
    result = encode(f"file://{corpus[0]}", tok, tmp_path / "out", workers=2)
    assert [f["path"].startswith("file://") for f in result.manifest["inputs"]] == [True] * 6

    def documents(folder: Path) -> dict[str, list[list[int]]]:
        manifest = json.loads((folder / "manifest.json").read_text())
        split: dict[str, list[list[int]]] = {"train": [], "val": []}
        for shard in manifest["shards"]:
            split[shard["split"]] += read_megatron(folder / shard["name"])
        return split

    assert documents(tmp_path / "out") == documents(reference[0])
    counted = bytepair.count_corpus(f"file://{corpus[0]}/*.parquet", workers=1, progress=False)
    assert counted.items() == bytepair.count_corpus(corpus[0] / "f.parquet", workers=1, progress=False).items()
