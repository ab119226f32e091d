"""Encoding benchmark: bytepair and its peers in one run, on text the measuring process has not seen.

Peers: gigatoken, tiktoken and tokie (and, with --extra-peers, HF tokenizers, rs-bpe, bpe-openai, kitoken).
Encodings r50k_base, cl100k_base, o200k_base (p50k_base on request). What is measured:

- english / multilingual / code: ~4 KB documents, two slices of each corpus (English: the first and the next
  10 MB of the Gutenberg books; Python code: the first and the next 10 MB of the stdlib's .py files;
  multilingual: every file under multilingual/, its documents shuffled with a fixed seed and halved). Calls: one
  call per document on one CPU ("docs"), and each library's batch call on 1 and on 2 threads ("batch").
- single: one call on 10 MB of English (a slice of its own), one CPU.
- worst: one call on random ASCII letters, random digits, "a" * n and base64 text (no line breaks), each at
  1, 4 and 10 MB, one CPU: linearity (10 MB ÷ 1 MB), time per byte against the same library's 10 MB of
  English, and against tiktoken's English — each English call made in the same process right after the
  worst case (a text it has not seen), so that both figures come from the same moment of the machine.

    python bench/encode.py                   # everything -> bench/results/ (see the report for how long)
    python bench/encode.py --quick           # 1 MB slices of English, one repetition (a few minutes)
    python bench/encode.py --case worst      # one case (repeatable): english, multilingual, code, single, worst
    python bench/encode.py --only gigatoken  # only these libraries (repeatable or comma-separated; see LIBRARIES)
    python bench/encode.py --encoding o200k_base
    python bench/encode.py --reps 3          # processes per measurement (default 2; the best is reported)
    make bench-encode ENCODE_ARGS=--quick    # the same through make (installs the peers first)

A full run writes bench/results/; a partial one writes bench/.cache/results/ unless --out says otherwise.

Method (the report repeats it): every measurement runs in a fresh child process, which reads its inputs, loads
the tokenizer and encodes one short sentence (both timed apart: "load"), then encodes slice A once ("cold": the
first pass over real text), slice B once ("steady": text it has not seen, after its caches warmed on A), and B
again ("same text": shown, never a target). Each figure therefore comes from a process that had not seen that
text. Each measurement is repeated in `--reps` processes, every other repetition of the whole plan backwards,
and the quickest process's figure is reported (each of them is an honest cold or steady figure; the machine's
speed varies). Peak RSS (VmHWM) of the child is reported beside the times. One-thread children are pinned to
one CPU. Every document's ids are compared with tiktoken's, phase by phase.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import gc
import gzip
import hashlib
import json
import os
import platform
import random
import re
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
    bytepair_label,
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
SLICE_MB = 10  # each of the two slices of English and code
SINGLE_MB = 10  # the one-call English text
WORST_SIZES_MB = (1, 4, 10)
# Issue 26 bounds a worst case's time per byte (≤ 5× English) for calls of 4 to 10 MB; the 1 MB call is the base
# of the linearity check (10× the input), and its figure is shown and judged against tiktoken's English only (a
# first call on 1 MB also pays for filling the backtracker's tables of pair checks, which larger calls amortise).
WORST_BOUNDED_FROM_MB = 4
WORST_SEED = 20261126
REPS = 2
STANDARD_ENCODINGS = ["r50k_base", "cl100k_base", "o200k_base"]
ALL_ENCODINGS = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
WORST_KINDS = {
    "letters": "random ASCII letters, no space",
    "digits": "random digits",
    "a": '"a" repeated',
    "base64": "base64 of random bytes, no line breaks",
}
WARM_UP = "A short sentence, encoded once after loading (timed with the load): 1 2 3."
SEPARATOR = b"<|endoftext|>"  # between the books of the Gutenberg file: documents never contain it
DOCS_VERSION = 3  # in the cache file names: bump when the way inputs are cut changes
PHASES = ("cold", "steady", "same")


# -- libraries (loaded in the child process) -------------------------------------------------------------


@dataclass(frozen=True)
class Library:
    key: str  # for --only
    name: str  # in the tables
    module: str  # import name, to check it is installed
    dist: str | None  # distribution name, for the versions line
    color: str
    calls: dict  # kind ("docs", "batch", "single") -> the call, as the report shows it
    encodings: tuple[str, ...]  # what it can load offline here
    why_not: str = ""  # why not the others
    extra: bool = False  # run only with --extra-peers (or --only)


R50K_ONLY = ("r50k_base",)
OPENAI_BUILT_IN = ("cl100k_base", "o200k_base")
LIBRARIES = {
    lib.key: lib
    for lib in [
        Library(
            "bytepair",
            "bytepair (numpy)",
            "bytepair",
            "bytepair",
            "tab:blue",
            {
                "docs": "tok.encode_to_numpy(doc)",
                "batch": "tok.encode_batch_to_numpy(docs, threads=N)  # (flat uint32 ids, int64 offsets)",
                "single": "tok.encode_to_numpy(text)",
            },
            tuple(ALL_ENCODINGS),
        ),
        Library(
            "bytepair-list",
            "bytepair (lists)",
            "bytepair",
            None,
            "cornflowerblue",
            {
                "docs": "tok.encode_ordinary(doc)",
                "batch": "tok.encode_batch(docs, disallowed_special=(), threads=N)",
                "single": "tok.encode_ordinary(text)",
            },
            tuple(ALL_ENCODINGS),
        ),
        Library(
            "gigatoken",
            "gigatoken (numpy / awkward)",
            "gigatoken",
            "gigatoken",
            "tab:green",
            {
                "docs": "tok.encode(doc)  # numpy",
                "batch": "tok.encode_batch(docs)  # awkward Array; RAYON_NUM_THREADS=N",
                "single": "tok.encode(text)",
            },
            ("r50k_base", "cl100k_base", "o200k_base"),
            "p50k_base's ranks are not dense, which its rank loader refuses",
        ),
        Library(
            "gigatoken-list",
            "gigatoken (lists)",
            "gigatoken",
            None,
            "yellowgreen",
            {"batch": "tok.encode_batch_list(docs)  # RAYON_NUM_THREADS=N"},
            ("r50k_base", "cl100k_base", "o200k_base"),
            "p50k_base's ranks are not dense, which its rank loader refuses",
        ),
        Library(
            "tiktoken",
            "tiktoken",
            "tiktoken",
            "tiktoken",
            "tab:orange",
            {
                "docs": "enc.encode_ordinary(doc)",
                "batch": "enc.encode_ordinary_batch(docs, num_threads=N)",
                "single": "enc.encode_ordinary(text)",
            },
            tuple(ALL_ENCODINGS),
        ),
        Library(
            "tokie",
            "tokie",
            "tokie",
            "tokie",
            "tab:red",
            {
                "docs": "tok.encode(doc, add_special_tokens=False).ids",
                "batch": "[e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]  # no thread knob",
                "single": "tok.encode(text, add_special_tokens=False).ids",
            },
            R50K_ONLY,
            "only GPT-2's tokenizer.json is available offline (from_pretrained downloads from the HF hub)",
        ),
        Library(
            "hf",
            "HF tokenizers",
            "tokenizers",
            "tokenizers",
            "tab:olive",
            {
                "docs": "tok.encode(doc, add_special_tokens=False).ids",
                "batch": "[e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]",
            },
            R50K_ONLY,
            "only GPT-2's tokenizer.json is available offline",
            extra=True,
        ),
        Library(
            "rs-bpe",
            "rs-bpe",
            "rs_bpe",
            "rs-bpe",
            "tab:purple",
            {
                "docs": "tok.encode(doc)",
                "batch": "tok.encode_batch_parallel(docs, ParallelOptions(min_batch_size=1, chunk_size=32, "
                "max_threads=N))[0]",
            },
            OPENAI_BUILT_IN,
            "only cl100k_base and o200k_base are built in, no loader",
            extra=True,
        ),
        Library(
            "bpe-openai",
            "bpe-openai",
            "bpe_openai",
            "bpe-openai",
            "tab:brown",
            {"docs": "enc.encode_ordinary(doc)", "batch": "enc.encode_ordinary_batch(docs, num_threads=N)"},
            OPENAI_BUILT_IN,
            "only cl100k_base and o200k_base are built in",
            extra=True,
        ),
        Library(
            "kitoken",
            "kitoken",
            "kitoken",
            "kitoken",
            "tab:pink",
            {"docs": "tok.encode(doc)", "batch": "tok.encode_all(docs)  # no thread knob"},
            tuple(ALL_ENCODINGS),
            extra=True,
        ),
    ]
}
PEERS = [k for k in LIBRARIES if not k.startswith("bytepair")]


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


def load_library(key: str, encoding: str, threads: int):
    """{kind: call}: "one" encodes one text, "batch" a list of texts (on `threads` threads where the library
    has a knob; the others get RAYON_NUM_THREADS from the parent)."""
    if key in ("bytepair", "bytepair-list"):
        import bytepair

        tok = bytepair.get_encoding(encoding, SHARED)
        if key == "bytepair":
            if not hasattr(tok, "encode_batch_to_numpy"):  # before 0.2: a list of arrays (for comparisons)
                return {"one": tok.encode_to_numpy, "batch": lambda docs: tok.encode_to_numpy(docs, threads=threads)}
            return {"one": tok.encode_to_numpy, "batch": lambda docs: tok.encode_batch_to_numpy(docs, threads=threads)}
        return {
            "one": tok.encode_ordinary,
            "batch": lambda docs: tok.encode_batch(docs, disallowed_special=(), threads=threads),
        }
    if key in ("gigatoken", "gigatoken-list"):
        import gigatoken

        tok = gigatoken.Tokenizer.from_tiktoken(str(SHARED / "tiktoken" / f"{encoding}.tiktoken"))
        if key == "gigatoken-list":
            return {"one": lambda text: tok.encode_batch_list([text])[0], "batch": tok.encode_batch_list}
        return {"one": tok.encode, "batch": tok.encode_batch}
    if key == "tiktoken":
        enc = tiktoken_encoding(encoding)
        return {"one": enc.encode_ordinary, "batch": lambda docs: enc.encode_ordinary_batch(docs, num_threads=threads)}
    if key in ("hf", "tokie"):
        if key == "hf":
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(HF_GPT2))
        else:
            import tokie

            tok = tokie.Tokenizer.from_json(str(HF_GPT2))
        return {
            "one": lambda text: tok.encode(text, add_special_tokens=False).ids,
            "batch": lambda docs: [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)],
        }
    if key == "rs-bpe":
        from rs_bpe.bpe import openai

        tok = {"cl100k_base": openai.cl100k_base, "o200k_base": openai.o200k_base}[encoding]()
        options = openai.ParallelOptions(min_batch_size=1, chunk_size=32, max_threads=threads)
        return {"one": tok.encode, "batch": lambda docs: tok.encode_batch_parallel(docs, options)[0]}
    if key == "bpe-openai":
        import bpe_openai

        enc = bpe_openai.get_encoding(encoding)
        return {"one": enc.encode_ordinary, "batch": lambda docs: enc.encode_ordinary_batch(docs, num_threads=threads)}
    if key == "kitoken":
        from kitoken import Kitoken

        tok = Kitoken.from_tiktoken_file(str(SHARED / "tiktoken" / f"{encoding}.tiktoken"))
        return {"one": tok.encode, "batch": tok.encode_all}
    raise ValueError(key)


# -- the child: one measurement --------------------------------------------------------------------------


def digest(ids) -> str:
    if hasattr(ids, "tobytes"):  # a numpy array
        data = ids.astype("<u4", copy=False).tobytes()
    else:
        data = array("I", ids).tobytes()
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def per_document(out, kind: str) -> list:
    """Each document's ids, whatever shape the library returned them in."""
    if kind != "batch":
        return out
    if isinstance(out, tuple) and len(out) == 2 and hasattr(out[0], "dtype"):  # (flat ids, offsets)
        ids, offsets = out
        return [ids[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
    if type(out).__module__.partition(".")[0] == "awkward":
        import awkward as ak
        import numpy as np

        flat, counts = ak.to_numpy(ak.flatten(out)), ak.to_numpy(ak.num(out))
        ends = np.cumsum(counts)
        return [flat[e - c : e] for e, c in zip(ends, counts)]
    return out


def cpu_seconds() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def read_input(path: str, kind: str):
    if kind == "docs" or kind == "batch":
        return json.loads(Path(path).read_text(encoding="utf-8"))
    return Path(path).read_text(encoding="utf-8")


def child(spec: dict) -> None:
    if spec["threads"] == 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one CPU: what "one thread" means here
    kind = spec["kind"]
    # Phases after the measured ones (a worst case's English) read their input when they come, and the peak
    # memory reported is the one before them.
    after = spec.get("after", [])
    inputs = {phase: read_input(path, kind) for phase, path in spec["inputs"].items() if phase not in after}
    start = time.perf_counter()
    calls = load_library(spec["library"], spec["encoding"], spec["threads"])
    load_s = time.perf_counter() - start
    call = calls["batch"] if kind == "batch" else calls["one"]
    start = time.perf_counter()
    call([WARM_UP] if kind == "batch" else WARM_UP)
    first_call_s = time.perf_counter() - start
    Path(spec["started"]).write_text("{}")  # the parent's clock for the time limit starts here
    result: dict = {"load_s": load_s, "first_call_s": first_call_s, "phases": {}}
    peak = None
    for phase in spec["phases"]:
        if phase in after:
            peak = peak if peak is not None else peak_rss_mb("self")
            inputs[phase] = read_input(spec["inputs"][phase], kind)
        data = inputs["steady" if phase == "same" else phase]
        out = None
        gc.collect()
        c0, t0 = cpu_seconds(), time.perf_counter()
        if kind == "docs":
            out = [call(doc) for doc in data]
        else:
            out = call(data)
        seconds = time.perf_counter() - t0
        cpu = cpu_seconds() - c0
        docs = per_document(out, kind) if kind in ("docs", "batch") else [out]
        result["phases"][phase] = {
            "seconds": seconds,
            "cpu_per_wall": cpu / seconds if seconds > 0 else None,
            "tokens": sum(len(d) for d in docs),
            "digests": [digest(d) for d in docs],
        }
        out = docs = None
    peak = peak if peak is not None else peak_rss_mb("self")
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


def _gutenberg(skip_mb: float, mb: float) -> bytes:
    """`mb` MB of the Gutenberg books after the first `skip_mb`, from line start to line end, separators out."""
    with gzip.open(GUTENBERG_GZ, "rb") as src:
        if skip_mb:
            src.read(int(skip_mb * 1_000_000))
            src.readline()
        data = src.read(int(mb * 1_000_000)) + src.readline()
    return _valid_utf8(data).replace(SEPARATOR, b"")


def english_slices(mb: float) -> dict[str, Path]:
    """Documents of the first `mb` MB (A, cold) and of the next `mb` MB (B, steady)."""
    out = {}
    for phase, skip in (("cold", 0), ("steady", mb)):

        def write(f, skip=skip):
            f.write(json.dumps(cut_documents(_gutenberg(skip, mb)), ensure_ascii=False).encode("utf-8"))

        out[phase] = write_atomically(CACHE / "encode" / f"english_{skip:g}+{mb:g}mb_v{DOCS_VERSION}.json", write)
    return out


def single_slices(mb: float, after_mb: float) -> dict[str, Path]:
    """One text of `mb` MB (A) and another (B), after the documents' slices (so no process saw them)."""
    out = {}
    for phase, skip in (("cold", after_mb), ("steady", after_mb + mb)):

        def write(f, skip=skip):
            f.write(_gutenberg(skip, mb))

        out[phase] = write_atomically(CACHE / "encode" / f"single_{skip:g}+{mb:g}mb_v{DOCS_VERSION}.txt", write)
    return out


def halves(docs: list[str]) -> tuple[list[str], list[str]]:
    """The documents shuffled with a fixed seed and halved: two slices of the same mix of files."""
    docs = list(docs)
    random.Random(DOCS_VERSION).shuffle(docs)
    return docs[: len(docs) // 2], docs[len(docs) // 2 :]


def multilingual_slices() -> dict[str, Path]:
    def all_docs() -> list[str]:
        docs = []
        for p in sorted((SHARED / "multilingual").rglob("*")):
            if p.is_file():
                docs += cut_documents(_valid_utf8(p.read_bytes()))
        return docs

    parts = None
    out = {}
    for i, phase in enumerate(("cold", "steady")):

        def write(f, i=i):
            nonlocal parts
            parts = parts or halves(all_docs())
            f.write(json.dumps(parts[i], ensure_ascii=False).encode("utf-8"))

        out[phase] = write_atomically(CACHE / "encode" / f"multilingual_{phase}_v{DOCS_VERSION}.json", write)
    return out


def code_slices(mb: float) -> dict[str, Path]:
    """The standard library's .py files in order, cut into documents: the first `mb` MB and the next."""

    def files():
        root = Path(sysconfig.get_paths()["stdlib"])
        for p in sorted(root.rglob("*.py")):
            if "site-packages" not in p.parts:
                yield _valid_utf8(p.read_bytes())

    parts = None

    def both() -> list[list[str]]:
        a, b, total = [], [], 0
        for data in files():
            (a if total < mb * 1_000_000 else b).extend(cut_documents(data))
            total += len(data)
            if total >= 2 * mb * 1_000_000:
                break
        return [a, b]

    out = {}
    for i, phase in enumerate(("cold", "steady")):

        def write(f, i=i):
            nonlocal parts
            parts = parts or both()
            f.write(json.dumps(parts[i], ensure_ascii=False).encode("utf-8"))

        name = f"code_py{platform.python_version()}_{mb:g}mb_{phase}_v{DOCS_VERSION}.json"
        out[phase] = write_atomically(CACHE / "encode" / name, write)
    return out


def worst_input(kind: str, nbytes: int) -> Path:
    def write(out):
        if kind == "a":
            out.write(b"a" * nbytes)
            return
        rng = random.Random(f"{WORST_SEED}-{kind}")
        if kind == "base64":
            out.write(base64.b64encode(rng.randbytes(nbytes * 3 // 4 + 3))[:nbytes])
            return
        alphabet = string.ascii_letters if kind == "letters" else string.digits
        for start in range(0, nbytes, 1_000_000):  # in pieces: less memory
            out.write("".join(rng.choices(alphabet, k=min(1_000_000, nbytes - start))).encode("ascii"))

    return write_atomically(CACHE / "encode" / f"worst_{kind}_{nbytes}b_seed{WORST_SEED}.txt", write)


# -- the plan ---------------------------------------------------------------------------------------------


@dataclass
class Group:
    """One input (a corpus's slices, or a worst case), one encoding, one kind of call, one thread count: the
    libraries in it are compared."""

    case: str
    label: str
    encoding: str
    kind: str  # docs, batch, single, worst
    threads: int
    libraries: list[str]
    inputs: object  # () -> {phase: Path}
    phases: tuple[str, ...] = PHASES
    size_mb: float | None = None  # worst cases: the input's size
    worst_kind: str | None = None
    rows: list[dict] = field(default_factory=list)


def plan(args, only: list[str] | None) -> list[Group]:
    slice_mb = args.slice_mb
    libs = [k for k in LIBRARIES if (only and k in only) or (not only and (args.extra_peers or not LIBRARIES[k].extra))]
    with_call = lambda kind: [k for k in libs if kind in LIBRARIES[k].calls]  # noqa: E731
    corpora = {
        "english": (
            f"English (Gutenberg; A: first {slice_mb:g} MB, B: next {slice_mb:g} MB)",
            lambda: english_slices(slice_mb),
        ),
        "multilingual": (
            "Multilingual (every file under multilingual/, documents shuffled and halved)",
            multilingual_slices,
        ),
        "code": (
            f"Python code (Python {platform.python_version()} stdlib .py files; A: first {slice_mb:g} MB, B: next)",
            lambda: code_slices(slice_mb),
        ),
    }
    # Each worst-case process then encodes 10 MB of English it has not seen (the one-call case's text A): "per
    # byte ÷ English" compares two calls seconds apart, not minutes (this machine's speed moves by 15–50 %
    # from one minute to the next).
    english = lambda: single_slices(args.single_mb, 2 * slice_mb)["cold"]  # noqa: E731
    groups: list[Group] = []
    for case in args.case:
        for enc in args.encoding:
            if case in corpora:
                label, inputs = corpora[case]
                groups.append(Group(case, label, enc, "docs", 1, with_call("docs"), inputs))
                for threads in (1, 2):
                    groups.append(Group(case, label, enc, "batch", threads, with_call("batch"), inputs))
            elif case == "single":
                mb = args.single_mb
                label = f"One call on {mb:g} MB of English (A and B after the documents' slices)"
                groups.append(
                    Group(
                        case,
                        label,
                        enc,
                        "single",
                        1,
                        with_call("single"),
                        lambda mb=mb: single_slices(mb, 2 * slice_mb),
                    )
                )
            elif case == "worst":
                for kind in WORST_KINDS:
                    for mb in args.worst_mb:
                        groups.append(
                            Group(
                                "worst",
                                f"{mb:g} MB, {WORST_KINDS[kind]}",
                                enc,
                                "worst",
                                1,
                                with_call("single"),
                                lambda kind=kind, mb=mb: {
                                    "cold": worst_input(kind, int(mb * 1e6)),
                                    "english": english(),
                                },
                                phases=("cold", "english"),
                                size_mb=mb,
                                worst_kind=kind,
                            )
                        )
    return groups


def measure(spec: dict, timeout: float, log_dir: Path) -> dict:
    """Runs one measurement in a child process; kills it `timeout` s after its first timed call began."""
    threads = spec["threads"]
    env = dict(
        os.environ,
        RAYON_NUM_THREADS=str(threads),
        OMP_NUM_THREADS=str(threads),
        TOKENIZERS_PARALLELISM="true" if threads > 1 else "false",
        TIKTOKEN_CACHE_DIR="",
    )
    return run_child(__file__, spec, env, timeout, log_dir, load_limit=300)


def size_mb_of(paths: dict[str, Path], kind: str, cache: dict) -> dict[str, float]:
    out = {}
    for phase, path in paths.items():
        if path not in cache:
            if kind in ("docs", "batch"):
                docs = json.loads(path.read_text(encoding="utf-8"))
                cache[path] = (sum(len(d.encode("utf-8")) for d in docs) / 1e6, len(docs))
            else:
                cache[path] = (path.stat().st_size / 1e6, 1)
        out[phase] = cache[path]
    return out


def execute(groups: list[Group], args, log_dir: Path) -> None:
    """Measures every library of every group `args.reps` times, every other repetition of the whole plan
    backwards, each in a fresh process; keeps, per phase, the quickest process's figure."""
    sizes: dict = {}
    for rep in range(args.reps):
        backwards = rep % 2 == 1
        for g in reversed(groups) if backwards else groups:
            paths = g.inputs()
            info = size_mb_of(paths, g.kind, sizes)
            limit = args.worst_timeout if g.kind == "worst" else args.timeout
            for key in reversed(g.libraries) if backwards else g.libraries:
                lib = LIBRARIES[key]
                row = next((r for r in g.rows if r["key"] == key), None)
                if row is None:
                    row = {
                        "case": g.case,
                        "input": g.label,
                        "encoding": g.encoding,
                        "kind": g.kind,
                        "threads": g.threads,
                        "library": lib.name,
                        "key": key,
                        "call": lib.calls.get("single" if g.kind == "worst" else g.kind, ""),
                        "mb": {phase: info[phase][0] for phase in info},
                        "docs": {phase: info[phase][1] for phase in info},
                        "phases": {},
                        "processes": 0,
                    }
                    if g.worst_kind:
                        row["worst_kind"], row["size_mb"] = g.worst_kind, g.size_mb
                    g.rows.append(row)
                    if g.encoding not in lib.encodings:
                        row["unavailable"] = lib.why_not
                    elif not installed(lib.module):
                        row["unavailable"] = "not installed"
                if "unavailable" in row or row.get("failed"):
                    continue
                spec = {
                    "library": key,
                    "encoding": g.encoding,
                    "kind": "single" if g.kind == "worst" else g.kind,
                    "threads": g.threads,
                    "inputs": {phase: str(p) for phase, p in paths.items()},
                    "phases": list(g.phases),
                    "after": ["english"] if g.kind == "worst" else [],
                }
                print(
                    f"rep {rep + 1}/{args.reps} · {g.case} · {g.label[:40]} · {g.encoding} · {g.kind} "
                    f"{g.threads} t: {lib.name} …",
                    file=sys.stderr,
                    end=" ",
                    flush=True,
                )
                result = measure(spec, limit, log_dir)
                merge(row, result)
                print(status_text(row, result), file=sys.stderr, flush=True)


def merge(row: dict, result: dict) -> None:
    """Adds one process's measurement to a row: per phase the quickest process, the quickest load, the highest
    peak memory; a failure in any process marks the row failed (and keeps what it said)."""
    row["processes"] += 1
    if "phases" not in result:
        row["failed"] = result.get("error") or f"killed after {result.get('killed_after_s')} s"
        if "killed_after_s" in result:
            row["killed_after_s"] = result["killed_after_s"]
        if result.get("peak_rss_mb"):
            row["peak_rss_mb"] = max(row.get("peak_rss_mb") or 0, result["peak_rss_mb"])
        return
    for k in ("load_s", "first_call_s"):
        row[k] = min(row.get(k, float("inf")), result[k])
    if result.get("peak_rss_mb"):
        row["peak_rss_mb"] = max(row.get("peak_rss_mb") or 0, result["peak_rss_mb"])
    for phase, p in result["phases"].items():
        kept = row["phases"].get(phase)
        if kept is None:
            row["phases"][phase] = {**p, "runs_s": [p["seconds"]]}
            continue
        if p["digests"] != kept["digests"]:
            row["ids_vary_between_processes"] = True
        kept["runs_s"].append(p["seconds"])
        if p["seconds"] < kept["seconds"]:
            kept.update(seconds=p["seconds"], cpu_per_wall=p["cpu_per_wall"])


def status_text(row: dict, result: dict) -> str:
    if "phases" not in result:
        return row.get("failed", "failed")
    parts = []
    for phase, p in result["phases"].items():
        parts.append(f"{phase} {row['mb'][phase if phase != 'same' else 'steady'] / p['seconds']:.1f} MB/s")
    return ", ".join(parts) + f"; load {result['load_s']:.2f}+{result['first_call_s']:.2f} s"


# -- derived numbers --------------------------------------------------------------------------------------


def find(rows: list[dict], **kw) -> dict | None:
    return next((r for r in rows if all(r.get(k) == v for k, v in kw.items())), None)


def mbps(row: dict | None, phase: str) -> float | None:
    if not row or row.get("failed") or phase not in row.get("phases", {}):
        return None
    return row["mb"]["steady" if phase == "same" else phase] / row["phases"][phase]["seconds"]


def check_ids(rows: list[dict]) -> None:
    """Marks each row: the same ids as tiktoken's (its one-call or per-document rows on the same input) in every
    phase, or in how many documents not. Worst cases where tiktoken did not finish: against bytepair's."""
    for r in rows:
        if "phases" not in r or not r["phases"]:
            continue
        same_input = dict(case=r["case"], input=r["input"], encoding=r["encoding"])
        ref = find(rows, **same_input, key="tiktoken", kind="docs" if r["kind"] == "batch" else r["kind"])
        if ref is None or ref.get("failed") or not ref.get("phases"):
            ref = find(rows, **same_input, key="bytepair", kind=r["kind"]) if r["kind"] == "worst" else None
        if ref is None or not ref.get("phases"):
            continue
        if ref is r:
            r["ids_reference"] = True
            continue
        differ, total = 0, 0
        for phase, p in r["phases"].items():
            theirs = ref["phases"].get(phase, {}).get("digests")
            if theirs is None:
                continue
            total += len(theirs)
            differ += sum(a != b for a, b in zip(p["digests"], theirs)) + abs(len(p["digests"]) - len(theirs))
        if total:
            r["ids_checked_against"], r["ids_differ"], r["ids_compared"] = ref["library"], differ, total


def complete(rows: list[dict]) -> None:
    """MB/s per phase, ratios to gigatoken and tiktoken in the same group, worst-case ratios."""
    for r in rows:
        for phase in PHASES:
            v = mbps(r, phase)
            if v is not None:
                r.setdefault("mb_per_s", {})[phase] = v
    for r in rows:
        group = dict(case=r["case"], input=r["input"], encoding=r["encoding"], kind=r["kind"], threads=r["threads"])
        for peer in ("gigatoken", "tiktoken"):
            other = find(rows, **group, key=peer)
            if other and "mb_per_s" in other and "mb_per_s" in r:
                r[f"vs_{peer}"] = {
                    ph: r["mb_per_s"][ph] / other["mb_per_s"][ph] for ph in r["mb_per_s"] if ph in other["mb_per_s"]
                }
        if r["kind"] == "batch" and r["threads"] == 2 and "mb_per_s" in r:
            one = find(rows, **dict(group, threads=1), key=r["key"])
            if one and "mb_per_s" in one:
                r["vs_one_thread"] = {
                    ph: r["mb_per_s"][ph] / one["mb_per_s"][ph] for ph in r["mb_per_s"] if ph in one["mb_per_s"]
                }
        if r["kind"] == "worst" and "mb_per_s" in r:
            english = english_beside(rows, r, r["key"])
            if english:
                r["english_mb_per_s"], r["english_from"] = english
                r["per_byte_vs_english"] = english[0] / r["mb_per_s"]["cold"]
            tiktoken_english = english_beside(rows, r, "tiktoken")
            if tiktoken_english:
                r["per_byte_vs_tiktoken_english"] = tiktoken_english[0] / r["mb_per_s"]["cold"]
            smallest = min(
                (
                    x
                    for x in rows
                    if x["kind"] == "worst"
                    and x["key"] == r["key"]
                    and x["encoding"] == r["encoding"]
                    and x.get("worst_kind") == r["worst_kind"]
                    and "mb_per_s" in x
                ),
                key=lambda x: x["size_mb"],
            )
            if smallest is not r:
                r["linearity"] = {
                    "from_mb": smallest["size_mb"],
                    "input_ratio": r["size_mb"] / smallest["size_mb"],
                    "time_ratio": r["phases"]["cold"]["seconds"] / smallest["phases"]["cold"]["seconds"],
                }


def english_beside(rows: list[dict], worst: dict, key: str) -> tuple[float, str] | None:
    """MB/s of library `key` on 10 MB of English, for a worst-case row: from the process of its quickest worst
    call on the same input (the English encoded right after it), else (that process did not finish) from the
    one-call case; with where it came from."""
    row = (
        worst
        if key == worst["key"]
        else find(rows, case="worst", input=worst["input"], encoding=worst["encoding"], key=key)
    )
    phases = (row or {}).get("phases", {})
    if "english" in phases:
        # Every process that finished timed both phases, so their `runs_s` are in the same order of processes.
        cold, english = phases["cold"]["runs_s"], phases["english"]["runs_s"]
        return row["mb"]["english"] / english[cold.index(min(cold))], "same process"
    single = find(rows, case="single", encoding=worst["encoding"], key=key)
    if single and "mb_per_s" in single:
        return single["mb_per_s"]["cold"], "one-call case"
    return None


def targets(rows: list[dict]) -> list[dict]:
    """The issue's targets, each with what was measured and whether it is met (None: not measured)."""
    out = []

    def add(target, measured, ok):
        out.append({"target": target, "measured": measured, "met": ok})

    def vs_giga(row, phases=("cold", "steady"), bar=1.2):
        if not row or "vs_gigatoken" not in row:
            return None, "—"
        ratios = [row["vs_gigatoken"].get(ph) for ph in phases]
        if any(x is None for x in ratios):
            return None, "—"
        text = ", ".join(f"{ph} {fmt_x(x)} ({row['mb_per_s'][ph]:.0f} MB/s)" for ph, x in zip(phases, ratios))
        return all(x >= bar for x in ratios), text

    for enc in STANDARD_ENCODINGS:
        row = find(rows, case="english", encoding=enc, kind="docs", key="bytepair")
        if row:
            ok, text = vs_giga(row)
            add(f"{enc}: one thread, one call per ~4 KB document, numpy ≥ 1.2× gigatoken (cold, steady)", text, ok)
        for threads in (1, 2):
            row = find(rows, case="english", encoding=enc, kind="batch", threads=threads, key="bytepair")
            if row:
                ok, text = vs_giga(row)
                add(f"{enc}: batch, {threads} thread(s), flat output ≥ 1.2× gigatoken (cold, steady)", text, ok)
        row = find(rows, case="english", encoding=enc, kind="batch", threads=2, key="bytepair")
        if row and "vs_one_thread" in row:
            ratios = [row["vs_one_thread"].get(ph) for ph in ("cold", "steady")]
            if None not in ratios:
                # CPU ÷ wall beside each ratio: below ~1.9 a thread was not running (on a shared virtual machine
                # the host may take a core without reporting steal time), which a ratio alone does not show.
                cpus = [row.get("phases", {}).get(ph, {}).get("cpu_per_wall") for ph in ("cold", "steady")]
                add(
                    f"{enc}: batch, 2 threads ≥ 1.8× 1 thread (separate processes)",
                    ", ".join(
                        f"{ph} {fmt_x(x)}" + (f" (CPU ÷ wall {cpu:.2f})" if cpu else "")
                        for ph, x, cpu in zip(("cold", "steady"), ratios, cpus)
                    ),
                    all(x >= 1.8 for x in ratios),
                )
        row = find(rows, case="single", encoding=enc, key="bytepair")
        if row:
            ok, text = vs_giga(row, ("cold",))
            add(f"{enc}: one call on {row['mb']['cold']:.0f} MB, cold, ≥ 1.2× gigatoken", text, ok)
        for case in ("multilingual", "code"):
            row = find(rows, case=case, encoding=enc, kind="docs", key="bytepair")
            if row:
                ok, text = vs_giga(row, bar=1.0)
                add(f"{enc}: {case}, one call per document, numpy ≥ 1.0× gigatoken (cold, steady)", text, ok)
    for r in rows:
        if r["kind"] != "worst" or r["key"] != "bytepair":
            continue
        label = f"{r['encoding']}: worst case {r['input']}"
        if r.get("failed") or "mb_per_s" not in r:
            add(label, r.get("failed", "—"), False)
            continue
        checks, texts = [], []
        if "linearity" in r:
            lin = r["linearity"]
            checks.append(lin["time_ratio"] <= 1.5 * lin["input_ratio"])
            texts.append(f"{lin['input_ratio']:g}× the input: {lin['time_ratio']:.1f}× the time")
        bounded = r.get("size_mb", 0) >= WORST_BOUNDED_FROM_MB
        if "per_byte_vs_english" in r:
            if bounded:
                checks.append(r["per_byte_vs_english"] <= 5)
            texts.append(f"{fmt_x(r['per_byte_vs_english'])} English per byte" + ("" if bounded else " (not bounded)"))
        if "per_byte_vs_tiktoken_english" in r:
            checks.append(r["per_byte_vs_tiktoken_english"] <= 1)
            texts.append(f"{fmt_x(r['per_byte_vs_tiktoken_english'])} tiktoken's English per byte")
        bounds = ["linear"] * ("linearity" in r) + ["≤ 5× English per byte"] * bounded
        bounds.append("≤ tiktoken's English per byte")
        add(
            label + f" ({'; '.join(bounds)})",
            f"{r['phases']['cold']['seconds']:.3g} s; " + "; ".join(texts),
            all(checks) if checks else None,
        )
    mine = [r for r in rows if r["key"] == "bytepair" and "unavailable" not in r]
    pairs = [
        (
            r,
            find(
                rows,
                case=r["case"],
                input=r["input"],
                encoding=r["encoding"],
                kind=r["kind"],
                threads=r["threads"],
                key="gigatoken",
            ),
        )
        for r in mine
    ]
    pairs = [(r, g) for r, g in pairs if g and r.get("peak_rss_mb") and g.get("peak_rss_mb")]
    if pairs:
        worse = [(r, g) for r, g in pairs if r["peak_rss_mb"] > g["peak_rss_mb"]]
        add(
            "peak RSS of bytepair's process ≤ gigatoken's (same measurement)",
            f"{len(pairs) - len(worse)} of {len(pairs)}"
            + (
                ""
                if not worse
                else " — not: "
                + ", ".join(
                    f"{r['case']}/{r['kind']}/{r['encoding']} {r['peak_rss_mb']:.0f} vs {g['peak_rss_mb']:.0f} MB"
                    for r, g in worse[:4]
                )
            ),
            not worse,
        )
    if mine:
        bad = [r for r in mine if r.get("failed")]
        add(
            "no panic, no hang (every bytepair measurement finished within its limit)",
            f"{len(mine) - len(bad)} of {len(mine)}"
            + ("" if not bad else " — not: " + ", ".join(f"{r['input']}/{r['encoding']}" for r in bad[:4])),
            not bad,
        )
    checked = [r for r in rows if r["key"].startswith("bytepair") and r.get("ids_checked_against") == "tiktoken"]
    if checked:
        same = [r for r in checked if r["ids_differ"] == 0]
        add(
            "bytepair's ids = tiktoken's on every document, every phase",
            f"{len(same)} of {len(checked)} measurements",
            len(same) == len(checked),
        )
    return out


# -- the report -------------------------------------------------------------------------------------------


def fmt_mbs(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def fmt_s(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:.3f}" if v < 1 else f"{v:.2f}"


def ids_note(r: dict) -> str:
    if "unavailable" in r:
        return f"n/a: {r['unavailable']}"
    if r.get("failed"):
        return f"**failed**: {r['failed']}"
    if r.get("ids_vary_between_processes"):
        return "**ids varied between processes**"
    if r.get("ids_reference"):
        return "reference"
    if "ids_differ" not in r:
        return "not checked"
    if r["ids_differ"] == 0:
        return f"= {r['ids_checked_against']}" + (f" ({r['ids_compared']:,})" if r["ids_compared"] > 1 else "")
    return f"**ids differ** from {r['ids_checked_against']}'s in {r['ids_differ']:,} of {r['ids_compared']:,}"


def caption(report: dict) -> str:
    m, v, la = report["machine"], report["versions"], report["load_average"]
    peers = ", ".join(
        f"{k} {v[k]}"
        for k in ["gigatoken", "tiktoken", "tokie", "tokenizers", "rs-bpe", "bpe-openai", "kitoken"]
        if v.get(k)
    )
    source = bytepair_label(v)
    return (
        f"_Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, {m['os']}, Python {m['python']}; "
        f"load average {la['before'][0]:.2f} before, {la['after'][0]:.2f} after the run. "
        f"Versions: bytepair {v.get('bytepair')}{source}; {peers}._"
    )


KIND_TITLES = {
    "docs": "one call per document, 1 CPU",
    "batch": "batch call",
}


def table_rows(rows: list[dict], with_threads: bool) -> list[str]:
    out = [
        "| encoding | library | "
        + ("threads | " if with_threads else "")
        + "cold MB/s | steady MB/s | same text MB/s | ÷ gigatoken (cold, steady) | ÷ tiktoken (cold, steady) | "
        + ("2 t ÷ 1 t (cold, steady) | CPU ÷ wall | " if with_threads else "")
        + "load + 1st call (s) | peak RSS (MB) | ids |",
        "|---|---|"
        + ("--:|" if with_threads else "")
        + "--:|--:|--:|--:|--:|"
        + ("--:|--:|" if with_threads else "")
        + "--:|--:|---|",
    ]
    for r in rows:
        if "unavailable" in r:
            continue
        v = r.get("mb_per_s", {})
        pair = lambda d: "—" if not d else f"{fmt_x(d.get('cold'))}, {fmt_x(d.get('steady'))}"  # noqa: E731
        cpu = r["phases"].get("steady", {}).get("cpu_per_wall") if r.get("phases") else None
        load = f"{r['load_s']:.2f} + {r['first_call_s']:.2f}" if "load_s" in r else "—"
        rss = f"{r['peak_rss_mb']:.0f}" if r.get("peak_rss_mb") else "—"
        out.append(
            f"| {r['encoding']} | {r['library']} | "
            + (f"{r['threads']} | " if with_threads else "")
            + f"{fmt_mbs(v.get('cold'))} | {fmt_mbs(v.get('steady'))} | {fmt_mbs(v.get('same'))} | "
            f"{pair(r.get('vs_gigatoken'))} | {pair(r.get('vs_tiktoken'))} | "
            + (f"{pair(r.get('vs_one_thread'))} | {'—' if cpu is None else f'{cpu:.2f}'} | " if with_threads else "")
            + f"{load} | {rss} | {ids_note(r)} |"
        )
    return out


def render_markdown(report: dict) -> str:
    rows, cap = report["rows"], caption(report)
    out = [
        "# BPE encoding benchmark: text the process has not seen",
        "",
        (
            f"Run {report['date']} (`{report['command']}`, {report['duration_s'] / 60:.1f} min, {report['reps']} "
            f"process(es) per measurement). {cap}"
        ),
        "",
        (
            "**cold**: the first pass over slice A after loading; **steady**: slice B, which the process has not seen, "
            "after its caches warmed on A; **same text**: B again (shown, never a target). Each figure: the quickest of "
            "the processes that measured it."
        ),
        "",
    ]
    if report["targets"]:
        out += ["## Targets", "", "| target | measured | met |", "|---|---|---|"]
        out += [
            f"| {t['target']} | {t['measured']} | {'—' if t['met'] is None else '✓' if t['met'] else '✗'} |"
            for t in report["targets"]
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
                f"A: {first['docs']['cold']:,} documents, {first['mb']['cold']:.1f} MB; B: {first['docs']['steady']:,} "
                f"documents, {first['mb']['steady']:.1f} MB."
            ),
            "",
            f"### {KIND_TITLES['docs']}",
            "",
            *table_rows([r for r in crow if r["kind"] == "docs"], False),
            "",
            "### batch call, 1 and 2 threads",
            "",
            *table_rows(
                sorted((r for r in crow if r["kind"] == "batch"), key=lambda r: (r["encoding"], r["threads"])), True
            ),
            "",
        ]
    single = [r for r in rows if r["case"] == "single"]
    if single:
        out += [
            f"## {single[0]['input']}",
            "",
            "One call on the whole text, 1 CPU.",
            "",
            *table_rows(single, False),
            "",
        ]
    worst = [r for r in rows if r["case"] == "worst" and "unavailable" not in r]
    if worst:
        out += [
            "## Worst cases: one call, 1 CPU, the first call on the text after loading",
            "",
            (
                "| input | encoding | library | time (s) | MB/s | 10 MB ÷ 1 MB: time ratio | per byte ÷ own English "
                "| per byte ÷ tiktoken's English | peak RSS (MB) | ids |"
            ),
            "|---|---|---|--:|--:|--:|--:|--:|--:|---|",
        ]
        for r in worst:
            if r.get("failed"):
                t = f"> {r['killed_after_s']:g}" if "killed_after_s" in r else "failed"
            else:
                t = fmt_s(r["phases"]["cold"]["seconds"])
            lin = r.get("linearity")
            lin_text = "—" if not lin else f"{lin['time_ratio']:.1f}× for {lin['input_ratio']:g}×"
            rss = "—" if not r.get("peak_rss_mb") else f"{r['peak_rss_mb']:.0f}"
            out.append(
                f"| {r['input']} | {r['encoding']} | {r['library']} | {t} | {fmt_mbs(r.get('mb_per_s', {}).get('cold'))} | "
                f"{lin_text} | {fmt_x(r.get('per_byte_vs_english'))} | {fmt_x(r.get('per_byte_vs_tiktoken_english'))} | "
                f"{rss} | {ids_note(r)} |"
            )
        out += [""]
    out += [cap, "", "## Method", "", method_notes(report)]
    return "\n".join(out)


def method_notes(report: dict) -> str:
    calls = "\n".join(
        f"- **{lib.name}** — encodings: {', '.join(e for e in lib.encodings if e in ALL_ENCODINGS)}"
        + (f" (not the others: {lib.why_not})" if lib.why_not else "")
        + "; "
        + "; ".join(f"{kind}: `{call}`" for kind, call in lib.calls.items())
        for lib in LIBRARIES.values()
        if any(r["key"] == lib.key for r in report["rows"])
    )
    return f"""\
Each measurement (library × input × encoding × kind of call × threads) runs in a fresh child process. The child
reads its inputs (not timed), loads the tokenizer (tiktoken rank files from the shared data for every library
but tokie and HF tokenizers, which read GPT-2's tokenizer.json) and encodes one short sentence: both are the
"load + 1st call" column, apart from the MB/s (lazy set-up on the first call — gigatoken builds its cache there —
is counted as loading for every library). Then it encodes slice A once (**cold**), slice B once (**steady**:
text it has not seen, its caches warmed by A), and B again (**same text**). MB/s are of UTF-8 input
(MB = 10⁶ bytes). Every output is kept until the pass ends (as a user keeps them), so Python's cycle collector
walks the lists of list-returning calls as it would for a user.

One-thread children (per-document calls, batch calls with threads=1, the one-call and worst cases) are pinned to
one CPU (sched_setaffinity) with `RAYON_NUM_THREADS=1`; 2-thread children get `RAYON_NUM_THREADS=2` and, where the
library has one, its thread knob. Every child gets `OPENBLAS_NUM_THREADS=1`: numpy's OpenBLAS threads spin for a
second or two after `import numpy`, and took a CPU from 2-thread cold passes. "CPU ÷ wall" is the child's CPU time
over the wall time of the steady pass.

Each measurement runs in {report["reps"]} separate processes; the plan runs once forwards and once backwards
(libraries and groups), so a slow spell of the machine does not fall on one library only. Per phase, the quickest
process's figure is reported: each process had not seen the text it timed, so each candidate is an honest cold
or steady figure; load times are the quickest, peak memory (VmHWM of the child, which includes the documents it
read) the highest. Ids must be equal in every process.

Ids: every document's ids, in every phase, are compared with tiktoken's (per document, by a hash of the ids);
worst cases where tiktoken did not finish within the limit ({report["worst_timeout_s"]:g} s) are compared with
bytepair's. Worst cases: one call on the whole text, the first after loading; "10 MB ÷ 1 MB" is the time ratio for
10× the input (linear: ≤ 15× the time), "per byte ÷ own English" compares with the same library's one call on
{SINGLE_MB} MB of English (a text the process has not seen) made in the same process right after the worst case
(in the process whose worst-case call was the quickest), "÷ tiktoken's English" with tiktoken's, made after its
call on the same worst case (where tiktoken did not finish: its one call on English in the one-call case).
Measured minutes apart, as before 2026-12-06, the two calls could fall in different states of this machine. A
worst case's peak memory is the process's before its English call (whose text it reads only then). The bound of
≤ 5× English per byte is issue 26's for calls of {WORST_BOUNDED_FROM_MB} to {max(WORST_SIZES_MB)} MB; the
{min(WORST_SIZES_MB)} MB calls (the base of the linearity check, and first calls that also fill the backtracker's
tables of pair checks) show the figure without it.

Libraries and their calls:

{calls}
"""


def render_chart(rows: list[dict], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        print("matplotlib not installed: no chart", file=sys.stderr)
        return
    main = [r for r in rows if r["kind"] in ("docs", "batch", "single") and "mb_per_s" in r]
    worst = [r for r in rows if r["kind"] == "worst" and "mb_per_s" in r and r.get("size_mb") == max(WORST_SIZES_MB)]
    panels = [(p, t) for p, t in ((main, "main"), (worst, "worst")) if p]
    if not panels:
        return
    fig, axes = plt.subplots(len(panels), 1, figsize=(18, 6 * len(panels)), squeeze=False)
    for ax, (prows, what) in zip((a[0] for a in axes), panels):
        if what == "main":
            key = lambda r: (r["case"], r["encoding"], r["kind"], r["threads"])  # noqa: E731
            label = lambda g: f"{g[0]}\n{g[1].replace('_base', '')}\n{g[2]} {g[3]}t"  # noqa: E731
            value = lambda r: r["mb_per_s"].get("steady", r["mb_per_s"].get("cold"))  # noqa: E731
            cold = lambda r: r["mb_per_s"].get("cold")  # noqa: E731
        else:
            key = lambda r: (r["worst_kind"], r["encoding"])  # noqa: E731
            label = lambda g: f"{g[0]}\n{g[1].replace('_base', '')}"  # noqa: E731
            value = cold = lambda r: r["mb_per_s"]["cold"]
        groups = list(dict.fromkeys(key(r) for r in prows))
        used = []
        for j, g in enumerate(groups):
            here = [r for k in LIBRARIES for r in prows if key(r) == g and r["key"] == k]
            width = 0.85 / max(len(here), 1)
            for i, r in enumerate(here):
                x = j + (i - (len(here) - 1) / 2) * width
                color = LIBRARIES[r["key"]].color
                ax.bar(x, value(r), width, color=color)
                if what == "main" and cold(r):
                    ax.plot([x - width / 2, x + width / 2], [cold(r)] * 2, color="black", linewidth=0.8)
                if r["key"] not in used:
                    used.append(r["key"])
        ax.set_yscale("log")
        ax.set_xticks(range(len(groups)), [label(g) for g in groups], fontsize=6)
        ax.set_ylabel("MB/s (log scale) — higher is better")
        ax.set_title(
            "Fresh text: bars steady, black lines cold"
            if what == "main"
            else f"Worst cases, {max(WORST_SIZES_MB)} MB, one call (cold)",
            fontsize=10,
        )
        ax.legend(
            handles=[Patch(color=LIBRARIES[k].color, label=LIBRARIES[k].name) for k in used],
            fontsize=7,
            ncol=len(used),
            loc="upper center",
            bbox_to_anchor=(0.5, -0.2),
            frameon=False,
        )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# -- main -------------------------------------------------------------------------------------------------

CASES = ["english", "multilingual", "code", "single", "worst"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="English only, 1 MB slices, one repetition")
    parser.add_argument("--case", action="append", choices=CASES, help="run this case (repeatable)")
    parser.add_argument("--only", action="append", help=f"only these libraries ({', '.join(LIBRARIES)})")
    parser.add_argument("--extra-peers", action="store_true", help="also HF tokenizers, rs-bpe, bpe-openai, kitoken")
    parser.add_argument("--encoding", action="append", choices=ALL_ENCODINGS, help="only these encodings")
    parser.add_argument("--reps", type=int, default=None, help=f"processes per measurement (default {REPS})")
    parser.add_argument("--slice-mb", type=float, default=None, help=f"MB per slice of English and code ({SLICE_MB})")
    parser.add_argument("--single-mb", type=float, default=SINGLE_MB, help=f"MB of the one-call text ({SINGLE_MB})")
    parser.add_argument("--worst-mb", type=float, action="append", help=f"worst-case sizes ({WORST_SIZES_MB})")
    parser.add_argument("--out", type=Path, help="output folder (default: bench/results, or bench/.cache/results)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per measurement (default 600)")
    parser.add_argument("--worst-timeout", type=float, default=60, help="seconds per worst-case call (default 60)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    only = None
    if args.only:
        only = [k.strip().lower().replace("_", "-") for a in args.only for k in a.split(",") if k.strip()]
        unknown = [k for k in only if k not in LIBRARIES]
        if unknown:
            parser.error(f"unknown library(ies) {unknown}: use {', '.join(LIBRARIES)}")
    partial = bool(
        args.quick
        or args.case
        or args.only
        or args.encoding
        or args.reps
        or args.slice_mb
        or args.worst_mb
        or args.extra_peers
        or args.single_mb != SINGLE_MB
    )
    args.case = args.case or (["english"] if args.quick else CASES)
    args.encoding = args.encoding or STANDARD_ENCODINGS
    args.reps = args.reps or (1 if args.quick else REPS)
    args.slice_mb = args.slice_mb or (1 if args.quick else SLICE_MB)
    args.worst_mb = args.worst_mb or list(WORST_SIZES_MB)
    out_dir = args.out or (CACHE / "results" if partial else RESULTS)

    started = time.time()
    load_before = os.getloadavg()
    groups = plan(args, only)
    execute(groups, args, CACHE / "logs")
    rows = [r for g in groups for r in g.rows]
    check_ids(rows)
    complete(rows)
    for r in rows:
        for p in r.get("phases", {}).values():
            p.pop("digests", None)  # not kept in the report
    report = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": " ".join(["bench/encode.py", *sys.argv[1:]]),
        "duration_s": round(time.time() - started, 1),
        "machine": machine_info(),
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]},
        "versions": versions(["gigatoken", "tiktoken", "tokie", "tokenizers", "rs-bpe", "bpe-openai", "kitoken"]),
        "reps": args.reps,
        "worst_timeout_s": args.worst_timeout,
        "rows": rows,
    }
    report["targets"] = targets(rows)
    write_results(out_dir, "encode", report, render_markdown, lambda path: render_chart(rows, path))


if __name__ == "__main__":
    main()
