"""Encoding benchmark: bytepair and its peers in one run, on the same documents, with the ids checked.

Peers: tiktoken, HF tokenizers, tokie, rs-bpe, bpe-openai, kitoken. Corpora: English (~4 KB documents cut at
whitespace from the first 20 MB of the Gutenberg corpus), multilingual (every file under multilingual/ cut into
~4 KB documents) and Python code (the standard library's .py files cut into ~4 KB documents, first 20 MB);
encodings gpt2, cl100k_base and o200k_base (r50k_base, p50k_base on request); one thread and two threads. Plus
the worst cases: 10 MB in one piece ("a" * 10M, random ASCII letters, random digits) for gpt2 and cl100k.

    python bench/encode.py                   # everything (~20 min on 2 cores) -> bench/results/
    python bench/encode.py --quick           # 1 MB of English only, every encoding and library (~1 min)
    python bench/encode.py --case worst      # one case (repeatable): english, multilingual, code, worst
    python bench/encode.py --only tiktoken   # only these libraries (repeatable, or comma-separated): bytepair,
                                             #   bytepair-batch, tiktoken, hf, tokie, rs-bpe, bpe-openai, kitoken
    python bench/encode.py --encoding gpt2   # only these encodings (repeatable); also r50k_base, p50k_base
    python bench/encode.py --out DIR         # where encode.md, encode.json and encode.png go
    make bench-encode ENCODE_ARGS=--quick    # the same through make (installs the peers first)

`make bench` still runs the training benchmark (bench/train.py) only; `make bench-encode` runs this one.
A full run writes bench/results/; a partial one (--quick, --case, --only, --encoding, --english-mb) writes
bench/.cache/results/ unless --out says otherwise, so it never overwrites the committed full results by accident.

Method (the markdown report repeats it, with each library's exact calls):
- Every measurement (one library, one corpus, one encoding, one thread count) runs in its own child process with
  a time limit, so a crash or a hang of one library cannot stop the run. The child loads the documents and the
  vocabulary (not timed), then encodes all documents up to 3 times (the first run is kept too: caches warm up in
  it) and writes a digest of every document's ids.
- The whole plan runs twice (--passes), the second time backwards, and the best run of both is reported: this
  machine changes speed for minutes at a time, and one pass could put a slow spell on one library only.
- Libraries with a thread knob also time their batch call on 1 thread inside the 2-thread child, alternating
  with the 2-thread runs: the scaling ratio then comes from the same minutes.
- 1 thread: a Python loop of single-document calls, for every library (bytepair's encode_batch with threads=1
  is an extra row, "bytepair-batch"). 2 threads: each library's own batch call with 2 threads where it has a
  knob, and RAYON_NUM_THREADS=2 for every child (1 in the one-thread children).
- ids: every document's ids are compared with tiktoken's (the reference, also run when --only leaves it out).
- Worst cases: one call on the whole 10 MB text (the first on it: a repeat would time caches), 60 s limit by
  default, counted from the start of the call; the time per byte is compared with the library's on English.

Shared data is found via $BYTEPAIR_SHARED_DATA or ../shared/data beside the repository; nothing is downloaded:
tiktoken's encodings are built by its own constructors (tiktoken_ext.openai_public) with their loaders pointed
at the shared files (the pinned hashes are still checked); peers whose vocabulary cannot be loaded offline are
reported as such. Documents and worst-case inputs are prepared once and cached (outside git) in bench/.cache/.
Peers that are not installed are skipped (and the table says so); `make bench-encode` installs them.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import json
import os
import platform
import random
import re
import statistics
import string
import sys
import sysconfig
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from common import (
    CACHE,
    GUTENBERG_GZ,
    RESULTS,
    SHARED,
    fmt_x,
    installed,
    machine_info,
    peak_rss_mb,
    run_child,
    versions,
    write_atomically,
    write_results,
)

HF_GPT2 = SHARED / "gpt2/tokenizer.json"

DOC_BYTES = 4096  # target document size; a document ends at the first whitespace from here on
ENGLISH_MB = 20
CODE_MB = 20
WORST_BYTES = 10_000_000
WORST_SEED = 20240611
RUNS = 3  # per pass; best of all passes' runs: this 2-core VM varies ±30% from run to run
PASSES = 2  # the whole plan twice, the second time backwards: the machine changes speed for minutes at a time
# Libraries whose batch call takes a thread count: their 2-thread child also times the same call with 1 thread,
# alternating with the 2-thread runs, for a scaling ratio from the same minutes.
THREAD_KNOB = ("bytepair", "tiktoken", "rs-bpe", "bpe-openai")
STANDARD_ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]
ALL_ENCODINGS = ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
WORST_ENCODINGS = ["gpt2", "cl100k_base"]
WORST_KINDS = {
    "a": '"a" repeated',
    "letters": "random ASCII letters, no space",
    "digits": "random digits",
}
WARM_UP = "A short sentence, encoded once before a worst-case call: 1 2 3."
SEPARATOR = b"<|endoftext|>"  # between the books of the Gutenberg file: documents never contain it (see cut_documents)
DOCS_VERSION = 2  # in the cache file names: bump when the way documents are cut changes


# -- libraries (loaded in the child process) -------------------------------------------------------------


@dataclass(frozen=True)
class Library:
    key: str  # for --only
    name: str  # in the tables
    module: str  # import name, to check it is installed
    dist: str | None  # distribution name, for the versions line
    color: str
    single: str  # the one-thread call, as the notes show it
    batch: str  # the two-thread call
    encodings: tuple[str, ...]  # what it can load offline here
    why_not: str = ""  # why not the others


LIBRARIES = {
    lib.key: lib
    for lib in [
        Library(
            "bytepair",
            "bytepair",
            "bytepair",
            "bytepair",
            "tab:blue",
            "tok.encode_ordinary(doc)",
            "tok.encode_batch(docs, disallowed_special=(), threads=2)",
            tuple(ALL_ENCODINGS),
        ),
        Library(
            "bytepair-batch",
            "bytepair (encode_batch)",
            "bytepair",
            None,
            "cornflowerblue",
            "tok.encode_batch(docs, disallowed_special=(), threads=1)",
            "(one-thread row only)",
            tuple(ALL_ENCODINGS),
        ),
        Library(
            "tiktoken",
            "tiktoken",
            "tiktoken",
            "tiktoken",
            "tab:orange",
            "enc.encode_ordinary(doc)",
            "enc.encode_ordinary_batch(docs, num_threads=2)",
            tuple(ALL_ENCODINGS),
        ),
        Library(
            "hf",
            "HF tokenizers",
            "tokenizers",
            "tokenizers",
            "tab:green",
            "tok.encode(doc, add_special_tokens=False).ids",
            "[e.ids for e in tok.encode_batch(docs, add_special_tokens=False)] (RAYON_NUM_THREADS=2)",
            ("gpt2",),
            "no tokenizer.json for it offline (the HF hub only)",
        ),
        Library(
            "tokie",
            "tokie",
            "tokie",
            "tokie",
            "tab:red",
            "tok.encode(doc, add_special_tokens=False).ids",
            "[e.ids for e in tok.encode_batch(docs, add_special_tokens=False)] (no thread knob)",
            ("gpt2",),
            "no tokenizer.json for it offline (from_pretrained downloads from the HF hub)",
        ),
        Library(
            "rs-bpe",
            "rs-bpe",
            "rs_bpe",
            "rs-bpe",
            "tab:purple",
            "tok.encode(doc)",
            "tok.encode_batch_parallel(docs, ParallelOptions(min_batch_size=1, chunk_size=32, max_threads=2))[0]",
            ("cl100k_base", "o200k_base"),
            "only cl100k_base and o200k_base are built in, no loader",
        ),
        Library(
            "bpe-openai",
            "bpe-openai",
            "bpe_openai",
            "bpe-openai",
            "tab:brown",
            "enc.encode_ordinary(doc)",
            "enc.encode_ordinary_batch(docs, num_threads=2)",
            ("cl100k_base", "o200k_base"),
            "its Rust backend has only cl100k_base, o200k_base (and voyage3_base) built in",
        ),
        Library(
            "kitoken",
            "kitoken",
            "kitoken",
            "kitoken",
            "tab:pink",
            "tok.encode(doc)",
            "tok.encode_all(docs) (no thread knob)",
            tuple(ALL_ENCODINGS),
        ),
    ]
}
PEERS = ["tiktoken", "hf", "tokie", "rs-bpe", "bpe-openai", "kitoken"]


def tiktoken_encoding(name: str):
    """tiktoken's own definition of `name` (pattern, special tokens, pinned hashes), read from the shared files."""
    os.environ["TIKTOKEN_CACHE_DIR"] = ""  # read the local files directly, write no cache copy
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as openai_public

    def local(url: str) -> str:
        base = url.rsplit("/", 1)[-1]
        for folder in ("tiktoken", "gpt2"):
            if (SHARED / folder / base).is_file():
                return str(SHARED / folder / base)
        raise FileNotFoundError(f"{base} is not in {SHARED}/tiktoken or {SHARED}/gpt2 (never downloaded)")

    def load_tiktoken_bpe(url, expected_hash=None):
        return tiktoken.load.load_tiktoken_bpe(local(url), expected_hash)

    def data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file, encoder_json_file, vocab_bpe_hash=None, encoder_json_hash=None, **kw
    ):
        return tiktoken.load.data_gym_to_mergeable_bpe_ranks(
            local(vocab_bpe_file), local(encoder_json_file), vocab_bpe_hash, encoder_json_hash, **kw
        )

    openai_public.load_tiktoken_bpe = load_tiktoken_bpe
    openai_public.data_gym_to_mergeable_bpe_ranks = data_gym_to_mergeable_bpe_ranks
    return tiktoken.Encoding(**getattr(openai_public, name)())


def load_library(key: str, encoding: str):
    """(one, batch_for): encode one text -> list of ids; batch_for(threads) -> a call that encodes a list of texts
    into a list of lists on that many threads (libraries without a thread knob ignore it: see THREAD_KNOB)."""
    if key in ("bytepair", "bytepair-batch"):
        import bytepair

        tok = bytepair.get_encoding(encoding, SHARED)
        batch_for = lambda threads: lambda docs: tok.encode_batch(docs, disallowed_special=(), threads=threads)  # noqa: E731
        return (None if key == "bytepair-batch" else tok.encode_ordinary), batch_for
    if key == "tiktoken":
        enc = tiktoken_encoding(encoding)
        return enc.encode_ordinary, lambda threads: lambda docs: enc.encode_ordinary_batch(docs, num_threads=threads)
    if key == "hf":
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(HF_GPT2))
        return (
            lambda text: tok.encode(text, add_special_tokens=False).ids,
            lambda threads: lambda docs: [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)],
        )
    if key == "tokie":
        import tokie

        tok = tokie.Tokenizer.from_json(str(HF_GPT2))
        return (
            lambda text: tok.encode(text, add_special_tokens=False).ids,
            lambda threads: lambda docs: [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)],
        )
    if key == "rs-bpe":
        from rs_bpe.bpe import openai

        tok = {"cl100k_base": openai.cl100k_base, "o200k_base": openai.o200k_base}[encoding]()

        def batch_for(threads):
            options = openai.ParallelOptions(min_batch_size=1, chunk_size=32, max_threads=threads)
            return lambda docs: tok.encode_batch_parallel(docs, options)[0]

        return tok.encode, batch_for
    if key == "bpe-openai":
        import bpe_openai

        enc = bpe_openai.get_encoding(encoding)
        return enc.encode_ordinary, lambda threads: lambda docs: enc.encode_ordinary_batch(docs, num_threads=threads)
    if key == "kitoken":
        from kitoken import Kitoken

        if encoding == "gpt2":
            tok = Kitoken.from_tokenizers_file(str(HF_GPT2))
        else:
            tok = Kitoken.from_tiktoken_file(str(SHARED / "tiktoken" / f"{encoding}.tiktoken"))
        return tok.encode, lambda threads: tok.encode_all
    raise ValueError(key)


def digest(ids) -> str:
    return hashlib.blake2b(array("I", ids).tobytes(), digest_size=8).hexdigest()


def cpu_seconds() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child(spec: dict) -> None:
    if spec["worst"]:
        docs = [Path(spec["input"]).read_text(encoding="ascii")]
    else:
        docs = json.loads(Path(spec["input"]).read_text(encoding="utf-8"))
    start = time.perf_counter()
    one, batch_for = load_library(spec["library"], spec["encoding"])
    batch = batch_for(spec["threads"])
    load_s = time.perf_counter() - start
    if spec["mode"] == "loop":

        def encode_all():
            return [one(d) for d in docs]
    else:
        encode_all = lambda: batch(docs)  # noqa: E731
    # The same batch call on 1 thread, run alternately with the timed one (2-thread children of THREAD_KNOB).
    paired = batch_for(1) if spec.get("paired") else None

    if spec["worst"]:  # lazy set-up (first-call costs) is not what the worst case measures
        one(WARM_UP) if one else batch([WARM_UP])
    Path(spec["started"]).write_text(json.dumps({"load_s": load_s}))  # the parent's clock for the limit starts
    runs, cpu, out, paired_runs, paired_digests = [], [], None, [], None
    digests = tokens = None

    def keep_digests():
        """Digests of the latest timed run's ids (before they are freed, and at the end)."""
        nonlocal digests, tokens
        if out is not None:
            digests, tokens = [digest(ids) for ids in out], sum(map(len, out))

    def run_paired():
        # One output alive at a time: a kept one (its lists made while bytepair had the cycle collector paused)
        # would be walked by the collector inside the next timed call.
        nonlocal out, paired_digests
        keep_digests()
        out = None
        t0 = time.perf_counter()
        ids = paired(docs)
        paired_runs.append(time.perf_counter() - t0)
        paired_digests = [digest(x) for x in ids]

    while len(runs) < spec["runs"] and sum(runs) + sum(paired_runs) < spec["budget_s"]:
        paired_first = paired is not None and len(runs) % 2 == 0  # 1 t, 2 t, 2 t, 1 t, 1 t, 2 t, ...
        if paired_first:
            run_paired()
        out = None  # free the previous run's ids first
        c0, t0 = cpu_seconds(), time.perf_counter()
        out = encode_all()
        runs.append(time.perf_counter() - t0)
        cpu.append(cpu_seconds() - c0)
        if paired is not None and not paired_first:
            run_paired()
    keep_digests()
    best = min(range(len(runs)), key=runs.__getitem__)
    result = {
        "runs_s": runs,
        "seconds": runs[best],
        "first_s": runs[0],
        "cpu_per_wall": cpu[best] / runs[best],
        "load_s": load_s,
        "tokens": tokens,
        "digests": digests,
    }
    if paired is not None:
        result.update(
            paired_runs_s=paired_runs, paired_one_thread_s=min(paired_runs), paired_ids_equal=paired_digests == digests
        )
    peak = peak_rss_mb("self")
    if peak is not None:
        result["peak_rss_mb"] = peak
    Path(spec["result"]).write_text(json.dumps(result))


# -- inputs (prepared in the parent, cached outside git) ---------------------------------------------------

_WHITESPACE = re.compile(rb"[ \t\n\r\f\v]")


def cut_documents(data: bytes, size: int = DOC_BYTES) -> list[str]:
    """~`size`-byte documents: each ends before the first ASCII whitespace at or after `size` bytes (the
    whitespace starts the next one); where none comes within another `size` bytes (CJK text), at the character
    boundary at `size` bytes. The text is first split at "<|endoftext|>" (the Gutenberg file's book separator),
    which no document keeps: HF tokenizers and tokie always read it as the special token, tiktoken's
    encode_ordinary as text, so their ids would differ for a reason that is not the encoder's."""
    if SEPARATOR in data:
        return [doc for part in data.split(SEPARATOR) for doc in cut_documents(part, size)]
    docs, pos, n = [], 0, len(data)
    while pos < n:
        end = pos + size
        if end >= n:
            end = n
        else:
            m = _WHITESPACE.search(data, end, min(n, end + size))
            if m:
                end = m.start()
            else:
                while end > pos + 1 and (data[end] & 0xC0) == 0x80:  # not inside a UTF-8 sequence
                    end -= 1
        docs.append(data[pos:end].decode("utf-8"))
        pos = end
    return docs


def _valid_utf8(data: bytes) -> bytes:
    """The bytes as UTF-8 (invalid sequences replaced), so that documents decode strictly."""
    return data.decode("utf-8", errors="replace").encode("utf-8")


def english_docs(mb: float) -> Path:
    def write(out):
        with gzip.open(GUTENBERG_GZ, "rb") as src:
            data = src.read(int(mb * 1_000_000))
            data += src.readline()  # on to the end of the line
        out.write(json.dumps(cut_documents(_valid_utf8(data)), ensure_ascii=False).encode("utf-8"))

    return write_atomically(CACHE / "encode" / f"english_{mb:g}mb_{DOC_BYTES}_v{DOCS_VERSION}.json", write)


def multilingual_docs() -> Path:
    def write(out):
        docs = []
        for p in sorted((SHARED / "multilingual").rglob("*")):
            if p.is_file():
                docs += cut_documents(_valid_utf8(p.read_bytes()))
        out.write(json.dumps(docs, ensure_ascii=False).encode("utf-8"))

    return write_atomically(CACHE / "encode" / f"multilingual_{DOC_BYTES}_v{DOCS_VERSION}.json", write)


def code_docs(mb: float) -> Path:
    def write(out):
        root, docs, total = Path(sysconfig.get_paths()["stdlib"]), [], 0
        for p in sorted(root.rglob("*.py")):
            if "site-packages" in p.parts:
                continue
            data = _valid_utf8(p.read_bytes())
            docs += cut_documents(data)
            total += len(data)
            if total >= mb * 1_000_000:
                break
        out.write(json.dumps(docs, ensure_ascii=False).encode("utf-8"))

    return write_atomically(
        CACHE / "encode" / f"code_py{platform.python_version()}_{mb:g}mb_{DOC_BYTES}_v{DOCS_VERSION}.json", write
    )


def worst_input(kind: str, nbytes: int = WORST_BYTES) -> Path:
    def write(out):
        if kind == "a":
            out.write(b"a" * nbytes)
            return
        alphabet = string.ascii_letters if kind == "letters" else string.digits
        rng = random.Random(f"{WORST_SEED}-{kind}")
        for start in range(0, nbytes, 1_000_000):  # in pieces: less memory
            out.write("".join(rng.choices(alphabet, k=min(1_000_000, nbytes - start))).encode("ascii"))

    return write_atomically(CACHE / "encode" / f"worst_{kind}_{nbytes}b_seed{WORST_SEED}.txt", write)


@dataclass
class Corpus:
    key: str
    label: str
    path: object  # () -> Path of the cached documents (JSON list of str)


def corpora(english_mb: float) -> dict[str, Corpus]:
    py = platform.python_version()
    return {
        "english": Corpus("english", f"English (Gutenberg, first {english_mb:g} MB)", lambda: english_docs(english_mb)),
        "multilingual": Corpus("multilingual", "Multilingual (every file under multilingual/)", multilingual_docs),
        "code": Corpus(
            "code", f"Python code (Python {py} stdlib .py files, first {CODE_MB} MB)", lambda: code_docs(CODE_MB)
        ),
    }


# -- the parent -------------------------------------------------------------------------------------------


def measure(spec: dict, timeout: float, log_dir: Path, load_limit: float = 300) -> dict:
    """Runs one measurement in a child process; kills it `timeout` s after the encoding started (or when the
    loading takes longer than `load_limit` s)."""
    threads = spec["threads"]
    env = dict(
        os.environ,
        RAYON_NUM_THREADS=str(threads),
        OMP_NUM_THREADS=str(threads),
        TOKENIZERS_PARALLELISM="true" if threads > 1 else "false",
        TIKTOKEN_CACHE_DIR="",
    )
    return run_child(__file__, spec, env, timeout, log_dir, load_limit=load_limit)


@dataclass
class Group:
    """One corpus (or worst-case input), one encoding, one thread count; ratios are taken within a group."""

    case: str
    label: str
    encoding: str
    threads: int
    libraries: list[str]
    input: object  # () -> Path
    worst: bool = False
    rows: list[dict] = field(default_factory=list)


def plan(
    cases: list[str], encodings: list[str], only: list[str] | None, english_mb: float, worst_bytes: int = WORST_BYTES
) -> list[Group]:
    groups: list[Group] = []
    pick = (lambda keys: [k for k in keys if k in only]) if only else (lambda keys: keys)
    corpus_defs = corpora(english_mb)
    for case in cases:
        if case == "worst":
            for kind in WORST_KINDS:
                for enc in [e for e in encodings if e in WORST_ENCODINGS]:
                    groups.append(
                        Group(
                            "worst",
                            kind,
                            enc,
                            1,
                            pick([k for k in LIBRARIES if k != "bytepair-batch"]),
                            lambda kind=kind: worst_input(kind, worst_bytes),
                            worst=True,
                        )
                    )
            continue
        corpus = corpus_defs[case]
        for enc in encodings:
            groups.append(Group(case, corpus.label, enc, 1, pick(list(LIBRARIES)), corpus.path))
            groups.append(
                Group(case, corpus.label, enc, 2, pick([k for k in LIBRARIES if k != "bytepair-batch"]), corpus.path)
            )
    return groups


def input_info(path: Path, worst: bool) -> dict:
    if worst:
        return {"size_mb": path.stat().st_size / 1e6, "docs": 1}
    docs = json.loads(path.read_text(encoding="utf-8"))
    sizes = [len(d.encode("utf-8")) for d in docs]
    return {"size_mb": sum(sizes) / 1e6, "docs": len(docs), "median_doc_bytes": sorted(sizes)[len(sizes) // 2]}


def execute(groups: list[Group], timeout: float, worst_timeout: float, runs: int, passes: int, log_dir: Path) -> None:
    """Measures every library of every group, `passes` times over (every other pass backwards, groups and libraries
    both), and keeps each measurement's best run: a slow spell of the machine then does not fall on one library
    only. A measurement that fails in one pass is not repeated; one that fails in a later pass reports the failure."""
    references: dict[tuple, dict] = {}  # (case, label, encoding) -> tiktoken's result, the reference ids
    infos: dict[Path, dict] = {}
    for done in range(passes):
        backwards = done % 2 == 1
        for g in reversed(groups) if backwards else groups:
            path = Path(g.input())
            if path not in infos:  # read once (setdefault would parse the documents again for every group)
                infos[path] = input_info(path, g.worst)
            info = infos[path]
            ref_key = (g.case, g.label, g.encoding)
            limit = worst_timeout if g.worst else timeout
            spec = {
                "input": str(path),
                "encoding": g.encoding,
                "threads": g.threads,
                "worst": g.worst,
                # worst cases: another run only while the runs so far took under a quarter of the limit, so
                # that a slow library still finishes (two runs at most of under a quarter each)
                "runs": runs,
                "budget_s": limit / 4 if g.worst else limit / 2,
            }
            # the reference first: tiktoken's ids, also when --only leaves tiktoken out
            if ref_key not in references and not g.worst and "tiktoken" not in g.libraries and installed("tiktoken"):
                print(f"{g.label} · {g.encoding}: reference ids (tiktoken) …", file=sys.stderr, end=" ", flush=True)
                ref = measure(dict(spec, library="tiktoken", threads=1, mode="loop", runs=1), limit, log_dir)
                print(status_text(ref, info), file=sys.stderr, flush=True)
                references[ref_key] = (
                    {"library": "tiktoken", "digests": ref.get("digests")} if "digests" in ref else ref
                )
            for key in reversed(g.libraries) if backwards else g.libraries:
                lib = LIBRARIES[key]
                row = next((r for r in g.rows if r["key"] == key), None)
                if row is None:
                    row = {
                        "case": g.case,
                        "input": g.label,
                        "encoding": g.encoding,
                        "threads": g.threads,
                        "library": lib.name,
                        "key": key,
                        **info,
                    }
                    g.rows.append(row)
                    if g.encoding not in lib.encodings:
                        row["unavailable"] = lib.why_not
                    elif not installed(lib.module):
                        row["unavailable"] = "not installed"
                if "unavailable" in row or (done > 0 and "seconds" not in row):
                    continue
                mode = "batch" if key == "bytepair-batch" or (g.threads > 1 and not g.worst) else "loop"
                paired = mode == "batch" and g.threads > 1 and key in THREAD_KNOB
                print(
                    f"pass {done + 1}/{passes} · {g.label} · {g.encoding} · {g.threads} thread(s): {lib.name} …",
                    file=sys.stderr,
                    end=" ",
                    flush=True,
                )
                result = measure(dict(spec, library=key, mode=mode, paired=paired), limit, log_dir)
                print(status_text(result, info), file=sys.stderr, flush=True)
                merge_pass(row, result, done + 1)
                row["call"] = lib.single if mode == "loop" else lib.batch
                if key == "tiktoken" and g.threads == 1 and "digests" in row and not g.worst:
                    references.setdefault(ref_key, {"library": "tiktoken", "digests": row["digests"]})
    for g in groups:
        check_ids(g, references.get((g.case, g.label, g.encoding)))


def merge_pass(row: dict, result: dict, pass_no: int) -> None:
    """Adds one pass's measurement to a row: the best run of all passes, the first pass's first run, the
    quickest load, the highest peak memory; a failure replaces the numbers (and says in which pass)."""
    if "seconds" not in row or "seconds" not in result:
        if "seconds" in row:  # measured before, failed now
            for k in ("seconds", "runs_s", "first_s", "cpu_per_wall", "digests", "paired_one_thread_s"):
                row.pop(k, None)
            result = dict(result, failed_in_pass=pass_no)
        row.update(result)
        row["passes"] = pass_no
        return
    if result["digests"] != row["digests"] or result["tokens"] != row["tokens"]:
        row["ids_vary_between_passes"] = True
    row["runs_s"] = row["runs_s"] + result["runs_s"]
    if result["seconds"] < row["seconds"]:
        row["seconds"], row["cpu_per_wall"] = result["seconds"], result["cpu_per_wall"]
    row["load_s"] = min(row["load_s"], result["load_s"])
    if result.get("peak_rss_mb"):
        row["peak_rss_mb"] = max(row.get("peak_rss_mb") or 0, result["peak_rss_mb"])
    if "paired_one_thread_s" in result:
        row["paired_runs_s"] = row.get("paired_runs_s", []) + result["paired_runs_s"]
        row["paired_one_thread_s"] = min(row.get("paired_one_thread_s", float("inf")), result["paired_one_thread_s"])
        row["paired_ids_equal"] = row.get("paired_ids_equal", True) and result["paired_ids_equal"]
    row["passes"] = pass_no


def status_text(r: dict, info: dict) -> str:
    if "seconds" in r:
        return f"{r['seconds']:.3f} s, {info['size_mb'] / r['seconds']:.1f} MB/s, {r['tokens']} tokens"
    if "killed_after_s" in r:
        return f"> {r['killed_after_s']:g} s (killed)"
    return f"error: {r.get('error')}"


def check_ids(g: Group, reference: dict | None) -> None:
    """Marks each row: same ids as the reference on every document, or on how many not. Worst cases, where
    tiktoken usually runs out of time: the reference is tiktoken if it finished, else bytepair."""
    if g.worst:
        reference = next((r for r in g.rows if r["key"] == "tiktoken" and "digests" in r), None) or next(
            (r for r in g.rows if r["key"] == "bytepair" and "digests" in r), None
        )
    if reference is not None and reference.get("digests") is not None:
        ref_name = reference.get("library", "tiktoken")
        for r in g.rows:
            if "digests" not in r:
                continue
            if r is reference or (r["key"] == "tiktoken" and r["threads"] == 1 and not g.worst):
                r["ids_reference"] = True
                continue
            differ = [i for i, (a, b) in enumerate(zip(r["digests"], reference["digests"])) if a != b]
            r["ids_checked_against"] = ref_name
            r["ids_differ_docs"] = len(differ)
            if differ:
                r["ids_first_differing_doc"] = differ[0]
    for r in g.rows:
        r.pop("digests", None)  # not kept in the report: ~80 KB per row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 MB of English only")
    parser.add_argument("--case", action="append", choices=CASE_NAMES, help="run this case (repeatable)")
    parser.add_argument("--only", action="append", help=f"only these libraries ({', '.join(LIBRARIES)})")
    parser.add_argument(
        "--encoding",
        action="append",
        choices=ALL_ENCODINGS,
        help=f"only these encodings (repeatable; default {', '.join(STANDARD_ENCODINGS)})",
    )
    parser.add_argument("--english-mb", type=float, help=f"MB of English (default {ENGLISH_MB}, --quick 1)")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs per measurement and pass ({RUNS})")
    parser.add_argument(
        "--passes",
        type=int,
        default=PASSES,
        help=f"times the whole plan runs, every other time backwards; best run of all ({PASSES})",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="output folder (default: bench/results for a full run, bench/.cache/results for a partial one)",
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds per corpus measurement (default 600)")
    parser.add_argument(
        "--worst-mb",
        type=float,
        default=WORST_BYTES / 1e6,
        help=f"size of the worst-case inputs (default {WORST_BYTES / 1e6:g})",
    )
    parser.add_argument("--worst-timeout", type=float, default=60, help="seconds per worst-case call (default 60)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return

    only = None
    if args.only:
        only = [k.strip().lower().replace("_", "-") for arg in args.only for k in arg.split(",") if k.strip()]
        unknown = [k for k in only if k not in LIBRARIES]
        if unknown:
            parser.error(f"unknown library(ies) {unknown}: use {', '.join(LIBRARIES)}")
    cases = args.case or (["english"] if args.quick else FULL)
    encodings = args.encoding or STANDARD_ENCODINGS
    english_mb = args.english_mb or (1 if args.quick else ENGLISH_MB)
    worst_bytes = int(args.worst_mb * 1e6)
    partial = bool(
        args.quick
        or args.case
        or args.only
        or args.encoding
        or args.english_mb
        or args.runs != RUNS
        or args.passes != PASSES
        or worst_bytes != WORST_BYTES
    )
    out_dir = args.out or (CACHE / "results" if partial else RESULTS)

    started = time.time()
    load_before = os.getloadavg()
    groups = plan(cases, encodings, only, english_mb, worst_bytes)
    execute(groups, args.timeout, args.worst_timeout, args.runs, args.passes, CACHE / "logs")
    rows = [r for g in groups for r in g.rows]
    report = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": " ".join(["bench/encode.py", *sys.argv[1:]]),
        "duration_s": round(time.time() - started, 1),
        "machine": machine_info(),
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]},
        "versions": versions(["tiktoken", "tokenizers", "tokie", "rs-bpe", "bpe-openai", "kitoken"]),
        "runs": args.runs,
        "passes": args.passes,
        "worst_timeout_s": args.worst_timeout,
        "rows": rows,
    }
    complete(rows)
    report["targets"] = targets(rows)
    write_results(out_dir, "encode", report, render_markdown, lambda path: render_chart(rows, path))


CASE_NAMES = ["english", "multilingual", "code", "worst"]
FULL = ["english", "multilingual", "code", "worst"]


# -- derived numbers, targets, tables and chart -----------------------------------------------------------


def find(rows: list[dict], **kw) -> dict | None:
    return next((r for r in rows if all(r.get(k) == v for k, v in kw.items())), None)


def complete(rows: list[dict]) -> None:
    """MB/s, ratios to bytepair in the same group, 2 threads ÷ 1 thread, worst-case time per byte ÷ English."""
    for r in rows:
        if "seconds" in r:
            r["mb_per_s"] = r["size_mb"] / r["seconds"]
            r["first_mb_per_s"] = r["size_mb"] / r["first_s"]
    for r in rows:
        base = find(
            rows, case=r["case"], input=r["input"], encoding=r["encoding"], threads=r["threads"], key="bytepair"
        )
        if base and "mb_per_s" in base and "mb_per_s" in r:
            r["bytepair_speedup"] = base["mb_per_s"] / r["mb_per_s"]  # > 1: bytepair is faster
        if r["case"] != "worst" and r["threads"] == 2 and "mb_per_s" in r:
            one = find(rows, case=r["case"], input=r["input"], encoding=r["encoding"], threads=1, key=r["key"])
            if one and "mb_per_s" in one:
                r["vs_one_thread"] = r["mb_per_s"] / one["mb_per_s"]
            if "paired_one_thread_s" in r:
                r["vs_paired_one_thread"] = r["paired_one_thread_s"] / r["seconds"]
                # Each 2-thread run beside the 1-thread run next to it: the best runs' ratio above is the
                # target's figure, this median shows how much the machine's noise moves it.
                pairs = [one / two for two, one in zip(r["runs_s"], r["paired_runs_s"])]
                r["paired_ratio_median"], r["paired_count"] = statistics.median(pairs), len(pairs)
            if r["key"] == "bytepair":
                batch1 = find(
                    rows, case=r["case"], input=r["input"], encoding=r["encoding"], threads=1, key="bytepair-batch"
                )
                if batch1 and "mb_per_s" in batch1:
                    r["vs_batch_one_thread"] = r["mb_per_s"] / batch1["mb_per_s"]
        if r["case"] == "worst":
            english = find(rows, case="english", encoding=r["encoding"], threads=1, key=r["key"])
            if english and "mb_per_s" in english:
                per_byte_english = 1 / english["mb_per_s"]
                if "mb_per_s" in r:
                    r["per_byte_vs_english"] = (1 / r["mb_per_s"]) / per_byte_english
                    r["first_per_byte_vs_english"] = (1 / r["first_mb_per_s"]) / per_byte_english
                elif "killed_after_s" in r:
                    r["per_byte_vs_english_above"] = (r["killed_after_s"] / r["size_mb"]) / per_byte_english


def worst_label(r: dict) -> str:
    return f"{r['size_mb']:g} MB, {WORST_KINDS[r['input']]}"


def fmt_load(r: dict | None) -> str:
    """Seconds the child took to load the vocabulary (and build whatever the library builds up front)."""
    return f"{r['load_s']:.2f}" if r and "load_s" in r else "—"


def fmt_mbs(r: dict | None, key: str = "mb_per_s") -> str:
    if r is None:
        return "—"
    if key in r:
        v = r[key]
        return f"{v:.1f}" if v < 100 else f"{v:.0f}"
    if "killed_after_s" in r:
        return f"> {r['killed_after_s']:g} s"
    if "error" in r:
        return "error"
    return "—"


def ids_note(r: dict | None) -> str:
    if r is None:
        return ""
    if "unavailable" in r:
        return f"n/a: {r['unavailable']}"
    if "error" in r:
        return f"error: {r['error']}"
    if r.get("ids_vary_between_passes"):
        return "**ids varied between passes**"
    if r.get("paired_ids_equal") is False:
        return "**ids of the 1-thread batch differ** from the 2-thread batch's"
    if r.get("ids_reference"):
        return "reference"
    if "ids_differ_docs" not in r:
        return "not checked" if "seconds" in r else ""
    if r["ids_differ_docs"] == 0:
        return f"= {r['ids_checked_against']}" + (f" ({r['docs']:,} docs)" if r["docs"] > 1 else "")
    if r["docs"] == 1:
        return f"**ids differ** from {r['ids_checked_against']}'s"
    return (
        f"**ids differ** from {r['ids_checked_against']}'s in {r['ids_differ_docs']:,} of {r['docs']:,} docs "
        f"(first: doc {r['ids_first_differing_doc']})"
    )


def targets(rows: list[dict]) -> list[dict]:
    """The issue's targets, each with what was measured and whether it is met (None: not measured)."""
    out = []

    def add(target, measured, ok):
        out.append({"target": target, "measured": measured, "met": ok})

    for enc in STANDARD_ENCODINGS:
        bp = find(rows, case="english", encoding=enc, threads=1, key="bytepair")
        if not bp:
            continue
        if "mb_per_s" not in bp:
            add(f"English, {enc}, 1 thread: ≥ 100 MB/s", fmt_mbs(bp), False)
            continue
        add(f"English, {enc}, 1 thread: ≥ 100 MB/s", f"{bp['mb_per_s']:.1f} MB/s", bp["mb_per_s"] >= 100)
        tt = find(rows, case="english", encoding=enc, threads=1, key="tiktoken")
        if tt and "mb_per_s" in tt:
            add(
                "… ≥ 10× tiktoken",
                f"{fmt_x(bp['mb_per_s'] / tt['mb_per_s'])} ({tt['mb_per_s']:.1f} MB/s)",
                bp["mb_per_s"] >= 10 * tt["mb_per_s"],
            )
        peers = [
            r
            for r in rows
            if r["case"] == "english"
            and r["encoding"] == enc
            and r["threads"] == 1
            and r["key"] in PEERS
            and "mb_per_s" in r
        ]
        if peers:
            fastest = max(peers, key=lambda r: r["mb_per_s"])
            add(
                "… ≥ 3× the fastest peer",
                f"{fmt_x(bp['mb_per_s'] / fastest['mb_per_s'])} ({fastest['library']}, {fastest['mb_per_s']:.1f} MB/s)",
                bp["mb_per_s"] >= 3 * fastest["mb_per_s"],
            )
    for enc in STANDARD_ENCODINGS:
        two = find(rows, case="english", encoding=enc, threads=2, key="bytepair")
        if two and "vs_paired_one_thread" in two:
            across = [
                f"{fmt_x(two[k])} of {what}"
                for k, what in (
                    ("vs_batch_one_thread", "encode_batch threads=1"),
                    ("vs_one_thread", "the 1-thread loop"),
                )
                if k in two
            ]
            add(
                f"English, {enc}: 2 threads ≥ 1.8× one thread (encode_batch threads=2 ÷ threads=1, runs alternated "
                "in one process)",
                fmt_x(two["vs_paired_one_thread"])
                + (
                    f" (median of the {two['paired_count']} pairs: {fmt_x(two['paired_ratio_median'])})"
                    if "paired_ratio_median" in two
                    else ""
                )
                + (f"; from separate processes: {', '.join(across)}" if across else ""),
                two["vs_paired_one_thread"] >= 1.8,
            )
        elif two and "vs_batch_one_thread" in two:
            extra = f"; {fmt_x(two['vs_one_thread'])} of the 1-thread loop" if "vs_one_thread" in two else ""
            add(
                f"English, {enc}: 2 threads ≥ 1.8× one thread (encode_batch threads=2 ÷ threads=1)",
                f"{fmt_x(two['vs_batch_one_thread'])}{extra}",
                two["vs_batch_one_thread"] >= 1.8,
            )
        elif two and "vs_one_thread" in two:
            add(
                f"English, {enc}: 2 threads ≥ 1.8× one thread (encode_batch threads=2 ÷ 1-thread loop)",
                fmt_x(two["vs_one_thread"]),
                two["vs_one_thread"] >= 1.8,
            )
    for r in rows:
        if r["case"] == "worst" and r["key"] == "bytepair":
            label = f"Worst case {worst_label(r)}, {r['encoding']}: time per byte ≤ 3× English's"
            if "per_byte_vs_english" in r:
                add(
                    label,
                    f"{fmt_x(r['per_byte_vs_english'])} ({r['seconds']:.3g} s; first call "
                    f"{fmt_x(r['first_per_byte_vs_english'])}, {r['first_s']:.3g} s)",
                    r["per_byte_vs_english"] <= 3,
                )
            elif "per_byte_vs_english_above" in r:
                add(label, f"> {fmt_x(r['per_byte_vs_english_above'])} (killed after {r['killed_after_s']:g} s)", False)
            elif "seconds" in r:
                add(label, f"{r['seconds']:.2f} s (no English run to compare with)", None)
            else:
                add(label, fmt_mbs(r), False)
    mine = [r for r in rows if r["key"] in ("bytepair", "bytepair-batch") and "unavailable" not in r]
    if mine:
        bad = [r for r in mine if "error" in r or "killed_after_s" in r]
        add(
            "No panic, no hang (every bytepair measurement finished within its limit)",
            f"{len(mine) - len(bad)} of {len(mine)}"
            + ("" if not bad else " — not: " + ", ".join(f"{r['input']}/{r['encoding']}" for r in bad[:4])),
            not bad,
        )
        checked = [r for r in mine if "ids_differ_docs" in r and r.get("ids_checked_against") == "tiktoken"]
        if checked:
            same = [r for r in checked if r["ids_differ_docs"] == 0]
            add(
                "bytepair's ids = tiktoken's on every document",
                f"{len(same)} of {len(checked)} measurements",
                len(same) == len(checked),
            )
    return out


def caption(report: dict) -> str:
    m, v, la = report["machine"], report["versions"], report["load_average"]
    peers = ", ".join(
        f"{k} {v[k]}" for k in ["tiktoken", "tokenizers", "tokie", "rs-bpe", "bpe-openai", "kitoken"] if v.get(k)
    )
    source = f" ({v['bytepair_source']})" if v.get("bytepair_source") else ""
    return (
        f"_Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, {m['os']}, Python {m['python']}; "
        f"load average {la['before'][0]:.2f} before, {la['after'][0]:.2f} after the run. "
        f"Versions: bytepair {v.get('bytepair')}{source}; {peers}._"
    )


def method_notes(report: dict) -> str:
    calls = "\n".join(
        f"- **{lib.name}** — encodings: {', '.join(e for e in lib.encodings if e in ALL_ENCODINGS)}"
        + (f" (not the others: {lib.why_not})" if lib.why_not else "")
        + f"; loaded: {LOADED[lib.key]}; 1 thread: `{lib.single}`"
        + (f"; 2 threads: `{lib.batch}`" if lib.key != "bytepair-batch" else "")
        for lib in LIBRARIES.values()
    )
    return f"""\
Each measurement (library × corpus × encoding × threads) runs in its own child process: it loads the documents and
the vocabulary (not in the MB/s; the vocabulary's time is the "load" column: reading the files and whatever the
library builds before its first call — bytepair builds its encoder's tables there), then encodes all the documents up to {report["runs"]} times (fewer when the runs
already took half the time limit), as MB/s of UTF-8 input (MB = 10⁶ bytes); "1st"
is the first run, where caches (bytepair's per-thread piece cache, HF's word cache) are still cold. Every
document's ids from the timed run are compared with tiktoken's (per document, by a hash of the ids). The time limit
is counted from the start of the first encoding call; a killed measurement shows "> N s".

The whole plan runs {report.get("passes", 1)} time(s), every second time backwards (groups and libraries), and each measurement
reports its best run over all passes (its load: the quickest; its peak memory: the highest). This machine changes
speed for minutes at a time (a fixed Python loop: 0.16 s or 0.33 s, the two cores independently), so one pass can
put a slow spell on one library only; a measurement that failed is not repeated, and one that fails in a later
pass reports that failure. Ids must be the same in every pass.

Libraries with a thread knob (bytepair, tiktoken, rs-bpe, bpe-openai) also time, in their 2-thread child, the same
batch call with 1 thread, runs alternated with the 2-thread ones ("2 t ÷ 1 t, one process"): a scaling ratio
from the same minutes, which the 2-thread target uses (the best runs of each; the targets table also gives
the median of the ratios of each 2-thread run to the 1-thread run beside it, which shows the machine's noise).
Their ids must equal the 2-thread call's.

1 thread: a Python loop of one call per document, the same for every library (so each pays the same per-call
overhead); `RAYON_NUM_THREADS=1`. 2 threads: each library's batch call, with 2 threads where it has a knob;
`RAYON_NUM_THREADS=2` and `TOKENIZERS_PARALLELISM=true` for every 2-thread child. "CPU ÷ wall" is the process's
CPU time over the wall time of the best run: near 1 means the batch call ran on one core only.
"bytepair ÷" is bytepair's MB/s over this library's in the same group (above 1: bytepair is faster).

Worst cases: one call on the whole text (one piece under gpt2's pattern; cl100k's pattern cuts digits into
groups of 3 and o200k's cuts letters at case changes, so only the first two inputs are one piece under cl100k),
limit {report["worst_timeout_s"]:g} s. Each library first encodes a short sentence (lazy set-up is not counted),
then calls on the text up to {report["runs"]} times while the calls so far took under a quarter of the limit; the
best call is reported, like the documents' best run, and the first call beside it ("1st"). A repeated call times
the encoder, not a cache: bytepair remembers only pieces of up to 256 bytes (these are one piece of 10 MB, or
cl100k's 3-digit groups, which English's repeated words also hit). "per byte ÷
English" is the time per byte over the same library's on English, 1 thread, same encoding (best runs both). Their ids are compared
with tiktoken's when it finishes, else with bytepair's.

Libraries, how each was loaded (offline, from the shared data) and called:

{calls}
"""


LOADED = {
    "bytepair": "`bytepair.get_encoding(name, SHARED)` (vocab.bpe + encoder.json for gpt2, the .tiktoken rank files "
    "for the others)",
    "bytepair-batch": "as bytepair",
    "tiktoken": "`tiktoken.Encoding(**tiktoken_ext.openai_public.<name>())` — tiktoken's own definitions, with "
    "their loaders pointed at the shared files (pinned sha256 checked, nothing downloaded)",
    "hf": "`tokenizers.Tokenizer.from_file(gpt2/tokenizer.json)`",
    "tokie": "`tokie.Tokenizer.from_json(gpt2/tokenizer.json)`",
    "rs-bpe": "`rs_bpe.bpe.openai.cl100k_base()` / `o200k_base()` (vocabulary embedded in the wheel)",
    "bpe-openai": "`bpe_openai.get_encoding(name)` (vocabulary embedded in the wheel; its `encode_ordinary` refuses "
    "texts of 1 M characters or more and results over 200 000 tokens)",
    "kitoken": "`Kitoken.from_tokenizers_file(gpt2/tokenizer.json)` for gpt2, "
    "`Kitoken.from_tiktoken_file(<name>.tiktoken)` for the others (it infers the pattern)",
}


def render_markdown(report: dict) -> str:
    rows, cap = report["rows"], caption(report)
    out = [
        "# BPE encoding benchmark",
        "",
        f"Run {report['date']} (`{report['command']}`, {report['duration_s'] / 60:.1f} min). {cap}",
        "",
    ]
    ts = report["targets"]
    if ts:
        out += ["## Targets", "", "| target | measured | met |", "|---|---|---|"]
        out += [
            f"| {t['target']} | {t['measured']} | {'—' if t['met'] is None else '✓' if t['met'] else '✗'} |" for t in ts
        ]
        out += [""]

    for case in ["english", "multilingual", "code"]:
        crow = [r for r in rows if r["case"] == case]
        if not crow:
            continue
        first = crow[0]
        out += [
            f"## {first['input']}",
            "",
            (
                f"{first['docs']:,} documents, {first['size_mb']:.1f} MB, median {first.get('median_doc_bytes', 0):,} "
                "bytes. MB/s, best of the runs of all passes (1st: the first run; load: loading the vocabulary, not "
                "timed in the MB/s). 2 t ÷ 1 t: the 2-thread batch over the 1-thread loop (separate processes); "
                "one process: over the same batch call on 1 thread, runs alternated."
            ),
            "",
            (
                "| encoding | library | 1 thread MB/s | 1st | load (s) | bytepair ÷ | 2 threads MB/s | bytepair ÷ "
                "| 2 t ÷ 1 t | 2 t ÷ 1 t, one process | CPU ÷ wall (2 t) | ids |"
            ),
            "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
        ]
        for enc in dict.fromkeys(r["encoding"] for r in crow):
            for key in LIBRARIES:
                one = find(crow, encoding=enc, threads=1, key=key)
                two = find(crow, encoding=enc, threads=2, key=key)
                if one is None and two is None:
                    continue
                any_row = one or two
                if "unavailable" in any_row:
                    out.append(
                        f"| {enc} | {any_row['library']} | — | — | — | — | — | — | — | — | — | {ids_note(any_row)} |"
                    )
                    continue
                notes = [n for n in dict.fromkeys([ids_note(one), ids_note(two)]) if n]
                if two is not None and one is not None and ids_note(one) != ids_note(two):
                    notes = [f"1 t: {ids_note(one)}", f"2 t: {ids_note(two)}"]
                cpu2 = f"{two['cpu_per_wall']:.2f}" if two and "cpu_per_wall" in two else "—"
                out.append(
                    f"| {enc} | {any_row['library']} | {fmt_mbs(one)} | {fmt_mbs(one, 'first_mb_per_s')} "
                    f"| {fmt_load(one)} | {fmt_x((one or {}).get('bytepair_speedup'))} | {fmt_mbs(two)} "
                    f"| {fmt_x((two or {}).get('bytepair_speedup'))} | {fmt_x((two or {}).get('vs_one_thread'))} "
                    f"| {fmt_x((two or {}).get('vs_paired_one_thread'))} | {cpu2} | {'; '.join(notes)} |"
                )
        out += [""]

    worst = [r for r in rows if r["case"] == "worst"]
    if worst:
        out += [
            f"## Worst cases: {worst[0]['size_mb']:g} MB in one piece",
            "",
            (
                f"One call on the whole text, 1 thread, best of up to {report['runs']} calls per pass (1st: the first), limit "
                f"{report['worst_timeout_s']:g} s. Libraries without "
                "the encoding offline (see the tables above) are left out."
            ),
            "",
            (
                "| input | encoding | library | time (s) | 1st (s) | MB/s | per byte ÷ English | 1st ÷ English "
                "| CPU ÷ wall | peak RSS (MB) | ids |"
            ),
            "|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|",
        ]
        for r in worst:
            if "unavailable" in r:
                continue
            if "seconds" in r:
                t = f"{r['seconds']:.3f}" if r["seconds"] < 1 else f"{r['seconds']:.2f}"
            elif "killed_after_s" in r:
                t = f"> {r['killed_after_s']:g}"
            else:
                t = "—"
            per_byte = fmt_x(r.get("per_byte_vs_english"))
            if "per_byte_vs_english_above" in r:
                per_byte = "> " + fmt_x(r["per_byte_vs_english_above"])
            rss = f"{r['peak_rss_mb']:.0f}" if r.get("peak_rss_mb") else "—"
            cpu = f"{r['cpu_per_wall']:.2f}" if "cpu_per_wall" in r else "—"
            first = "—" if "first_s" not in r else f"{r['first_s']:.3f}" if r["first_s"] < 1 else f"{r['first_s']:.2f}"
            out.append(
                f"| {worst_label(r)} | {r['encoding']} | {r['library']} | {t} | {first} "
                f"| {fmt_mbs(r) if 'mb_per_s' in r else '—'} | {per_byte} "
                f"| {fmt_x(r.get('first_per_byte_vs_english'))} | {cpu} | {rss} | {ids_note(r)} |"
            )
        out += [""]
    out += [cap, "", "## Method", "", method_notes(report)]
    return "\n".join(out)


def render_chart(rows: list[dict], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no chart", file=sys.stderr)
        return
    main = [r for r in rows if r["case"] != "worst"]
    worst = [r for r in rows if r["case"] == "worst"]
    panels = [p for p in (main, worst) if p]
    if not panels:
        return
    fig, axes = plt.subplots(len(panels), 1, figsize=(15, 5.5 * len(panels)), squeeze=False)
    short = {"english": "English", "multilingual": "multilingual", "code": "code"}

    def bars(ax, rows_, group_key, label, value, killed_value):
        """One group of bars per group key; in each, one bar per library that can run it (so no empty slots)."""
        from matplotlib.patches import Patch

        groups = list(dict.fromkeys(group_key(r) for r in rows_))
        used: list[str] = []
        for j, g in enumerate(groups):
            here = [
                r
                for key in LIBRARIES
                for r in rows_
                if group_key(r) == g and r["key"] == key and "unavailable" not in r
            ]
            width = 0.85 / max(len(here), 1)
            for i, r in enumerate(here):
                lib = LIBRARIES[r["key"]]
                x = j + (i - (len(here) - 1) / 2) * width
                v, k = value(r), killed_value(r)
                if r["key"] not in used:
                    used.append(r["key"])
                if v is None and k is None:
                    ax.text(
                        x,
                        0.02,
                        "err",
                        transform=ax.get_xaxis_transform(),
                        ha="center",
                        fontsize=6,
                        rotation=90,
                        color=lib.color,
                    )
                    continue
                h = v is None
                v = k if h else v
                ax.bar(x, v, width, color=lib.color, hatch="//" if h else None, edgecolor="white" if h else None)
                ax.text(
                    x,
                    v,
                    (">" if h else "") + (f"{v:.2g}" if v < 10 else f"{v:.0f}"),
                    ha="center",
                    va="bottom",
                    fontsize=6,
                    rotation=90,
                )
        ax.set_yscale("log")
        ax.set_ylim(top=ax.get_ylim()[1] * 3)  # room for the labels above the bars
        ax.set_xticks(range(len(groups)), [label(g) for g in groups], fontsize=7)
        handles = [Patch(color=LIBRARIES[k].color, label=LIBRARIES[k].name) for k in LIBRARIES if k in used]
        ax.legend(
            handles=handles,
            fontsize=7,
            ncol=len(handles),
            loc="upper center",
            bbox_to_anchor=(0.5, -0.16),
            frameon=False,
        )

    i = 0
    if main:
        ax = axes[i][0]
        bars(
            ax,
            main,
            lambda r: (r["case"], r["encoding"], r["threads"]),
            lambda g: f"{short.get(g[0], g[0])}\n{g[1]}\n{g[2]} thread{'s' if g[2] > 1 else ''}",
            lambda r: r.get("mb_per_s"),
            lambda r: None,
        )
        ax.set_ylabel("MB/s (log scale) — higher is better")
        ax.set_title(
            "Encoding throughput, ~4 KB documents (best of runs; 1 thread: loop of single calls, "
            "2 threads: batch call)",
            fontsize=10,
        )
        i += 1
    if worst:
        ax = axes[i][0]
        bars(
            ax,
            worst,
            lambda r: (r["input"], r["encoding"]),
            lambda g: f"{WORST_KINDS[g[0]]}\n{g[1]}".replace(", no space", ""),
            lambda r: r.get("seconds"),
            lambda r: r.get("killed_after_s"),
        )
        ax.set_ylabel("seconds (log scale) — lower is better")
        ax.set_title(
            f"Worst cases: {worst[0]['size_mb']:g} MB in one piece, one call (hatched: killed at the limit; "
            "err: error)",
            fontsize=10,
        )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
