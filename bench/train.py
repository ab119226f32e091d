"""Training benchmark: bytepair and its peers in one run, on the same input and vocabulary size.

Peers: HF tokenizers (BpeTrainer, ByteLevel GPT-2 pre-tokenizer), SentencePiece (BPE), rustbpe, bpeasy.
Each trainer runs in its own child process, with a timeout; its time is measured in the child around the
training call (interpreter start and imports excluded), its peak RSS and CPU time come from os.wait4 in
the parent, so they are the child's own. Merges are checked for equality where the rules are the same
(bytepair tie_break="hf" vs HF tokenizers' BpeTrainer); the new tokens of every byte-level trainer are
compared too, and the tables say which trainers agree.

    python bench/train.py                  # everything (~10 min and more on 2 cores) -> bench/results/
    python bench/train.py --quick          # small cases only (tinyshakespeare, stdlib)
    python bench/train.py --case dna       # one case (repeatable): tinyshakespeare, stdlib, gutenberg,
                                           #   gutenberg-1t, gutenberg-2t, scaling, dna
    python bench/train.py --only hf        # only these trainers (repeatable, or comma-separated):
                                           #   bytepair, bytepair-hf, bytepair-gz, hf, sentencepiece,
                                           #   rustbpe, bpeasy
    python bench/train.py --out DIR        # where train.md, train.json and train.png go

A full run writes bench/results/; a partial one (--quick, --case, --only) writes bench/.cache/results/
unless --out says otherwise, so it never overwrites the committed full results by accident.

Inputs are prepared once and cached (outside git) in bench/.cache/: the Gutenberg corpus decompressed to a
plain .txt (peers need plain files; bytepair is timed on the same plain file, plus one extra row on the .gz),
its 11/55/110/550 MB scaling slices (cut at line boundaries; 550 MB = 5 copies), the Python stdlib sources
as one file (decoded with errors="replace"), and a seeded 10 MB single word of random A/C/G/T. Shared data
is found via $BYTEPAIR_SHARED_DATA or ../shared/data beside the repository; nothing is downloaded.

Peers that are not installed are skipped (and the table says so); `make bench` installs them.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import itertools
import json
import os
import platform
import random
import shutil
import sys
import sysconfig
import time
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

# GPT-2's pre-tokenization regex (the same as bytepair's pattern="gpt2"), given to the peers that take one.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
DNA_BYTES = 10_000_000
DNA_SEED = 20240611
SP_MAX_SENTENCE_LENGTH = 1 << 24  # bytes; longer than any input line here, the 10 MB DNA word included

# -- trainers (run in the child process) ----------------------------------------------------------------
# Each returns a dict: merges (count), and where it can, tokens (the new tokens as bytes, in merge order)
# and pairs (the merges as GPT-2 byte-to-unicode strings). The caller times the call.


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table from bytes to printable characters (the form of bytepair's and HF's merges)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def from_gpt2_form(token: str) -> bytes:
    decoder = getattr(from_gpt2_form, "decoder", None)
    if decoder is None:
        decoder = from_gpt2_form.decoder = {c: b for b, c in bytes_to_unicode().items()}  # type: ignore[attr-defined]
    return bytes(decoder[c] for c in token)


def text_lines(files: list[str]):
    """Lines with their line breaks, as bytepair and HF tokenizers read files."""
    for f in files:
        with open(f, encoding="utf-8", errors="replace", newline="") as fh:
            yield from fh


def run_bytepair(
    files: list[str],
    vocab_size: int,
    threads: int,
    *,
    pattern: str | None = "gpt2",
    tie_break: str = "first_seen",
    errors: str = "replace",
) -> dict:
    import bytepair

    corpus = files[0] if len(files) == 1 else files
    tok = bytepair.train(
        corpus, vocab_size, pattern=pattern, tie_break=tie_break, threads=threads, progress=False, errors=errors
    )
    pairs = [tuple(m) for m in tok.merges]
    return {"merges": len(pairs), "pairs": pairs, "tokens": [from_gpt2_form(a + b) for a, b in pairs]}


def run_hf(files: list[str], vocab_size: int, threads: int, *, pattern: str | None = "gpt2") -> dict:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    # Threads: RAYON_NUM_THREADS (set by the parent); BpeTrainer has no option of its own.
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train(files, trainer)  # reads the files line by line
    return {"model": tok}


def hf_result(model) -> dict:
    merges = json.loads(model.to_str())["model"]["merges"]
    pairs = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in merges]
    return {"merges": len(pairs), "pairs": pairs, "tokens": [from_gpt2_form(a + b) for a, b in pairs]}


def run_sentencepiece(files: list[str], vocab_size: int, threads: int, *, pattern: str | None = "gpt2") -> dict:
    import io

    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        input=",".join(files),
        model_writer=model,
        model_type="bpe",
        vocab_size=vocab_size,
        num_threads=threads,
        character_coverage=1.0,
        byte_fallback=True,
        input_sentence_size=0,  # all lines, no sampling
        max_sentence_length=SP_MAX_SENTENCE_LENGTH,  # skip no line
        normalization_rule_name="identity",  # train on the text as it is, like the byte-level trainers
        remove_extra_whitespaces=False,
        minloglevel=1,
    )
    return {"model": model.getvalue()}


def sentencepiece_result(model: bytes) -> dict:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_proto=model)
    n = sp.get_piece_size()
    # pieces made by merging: neither <unk>/<s>/</s> nor byte pieces nor single characters
    merged = [
        i
        for i in range(n)
        if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i)) and len(sp.id_to_piece(i)) > 1
    ]
    return {"merges": len(merged), "vocab": n}


def run_rustbpe(files: list[str], vocab_size: int, threads: int, *, pattern: str | None = "gpt2") -> dict:
    import rustbpe

    # Threads: RAYON_NUM_THREADS; rustbpe has no option of its own. vocab_size counts the 256 bytes.
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(text_lines(files), vocab_size, pattern=GPT2_PATTERN)
    return {"model": tok}


def ranks_result(ranks) -> dict:
    tokens = [bytes(t) for t, _ in sorted(ranks, key=lambda kv: kv[1]) if _ >= 256]
    return {"merges": len(tokens), "tokens": tokens}


def run_bpeasy(files: list[str], vocab_size: int, threads: int, *, pattern: str | None = "gpt2") -> dict:
    import bpeasy

    # Threads: RAYON_NUM_THREADS; bpeasy has no option of its own. vocab_size counts the 256 bytes.
    # max_token_length: GPT-2 has no limit, so one no token reaches; batch_size: the default (1000 texts).
    vocab = bpeasy.train_bpe(text_lines(files), GPT2_PATTERN, 1 << 20, vocab_size)
    return {"model": vocab}


@dataclass(frozen=True)
class Trainer:
    key: str  # for --only
    name: str  # in the tables
    run: object
    module: str  # to check it is installed
    finish: object = None  # turns what run returned into merges/tokens, outside the timed part
    color: str = "tab:gray"


TRAINERS = {
    t.key: t
    for t in [
        Trainer("bytepair", "bytepair", run_bytepair, "bytepair", color="tab:blue"),
        Trainer(
            "bytepair-hf",
            "bytepair (hf ties)",
            lambda f, v, t, **kw: run_bytepair(f, v, t, tie_break="hf", **kw),
            "bytepair",
            color="cornflowerblue",
        ),
        Trainer(
            "bytepair-gz",
            "bytepair (.gz)",
            lambda f, v, t, **kw: run_bytepair(f, v, t, errors="strict", **kw),
            "bytepair",
            color="lightsteelblue",
        ),
        Trainer("hf", "HF tokenizers", run_hf, "tokenizers", lambda r: hf_result(r["model"]), "tab:orange"),
        Trainer(
            "sentencepiece",
            "SentencePiece",
            run_sentencepiece,
            "sentencepiece",
            lambda r: sentencepiece_result(r["model"]),
            "tab:green",
        ),
        Trainer(
            "rustbpe",
            "rustbpe",
            run_rustbpe,
            "rustbpe",
            lambda r: ranks_result(r["model"].get_mergeable_ranks()),
            "tab:red",
        ),
        Trainer("bpeasy", "bpeasy", run_bpeasy, "bpeasy", lambda r: ranks_result(r["model"].items()), "tab:purple"),
    ]
}
PEERS = ["hf", "sentencepiece", "rustbpe", "bpeasy"]


def digest(obj) -> str:
    return hashlib.sha256(repr(obj).encode()).hexdigest()[:16]


def child(spec: dict) -> None:
    trainer = TRAINERS[spec["trainer"]]
    kwargs = {"pattern": spec["pattern"]}
    start = time.perf_counter()
    raw = trainer.run(spec["files"], spec["vocab_size"], spec["threads"], **kwargs)
    seconds = time.perf_counter() - start
    peak = peak_rss_mb("self")  # before reading the merges out, which is not part of training
    result = trainer.finish(raw) if trainer.finish else raw
    out = {"seconds": seconds, "merges": result["merges"]}
    if peak is not None:
        out["peak_rss_mb"] = peak
    if "vocab" in result:
        out["vocab"] = result["vocab"]
    if "pairs" in result:
        out["pairs_digest"] = digest(result["pairs"])
    if "tokens" in result:
        out["tokens_digest"] = digest(result["tokens"])
    Path(spec["result"]).write_text(json.dumps(out))


# -- inputs (prepared in the parent, cached outside git) ---------------------------------------------------


def gutenberg_txt() -> Path:
    def write(out):
        with gzip.open(GUTENBERG_GZ, "rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)

    return write_atomically(CACHE / "gutenberg_en.txt", write)


def gutenberg_slice(fraction: float) -> Path:
    """The first `fraction` of the corpus, cut at a line boundary; fraction > 1: whole copies concatenated."""
    full = gutenberg_txt()
    if fraction == 1:
        return full
    mb = round(full.stat().st_size * fraction / 1e6)

    def write(out):
        # streamed, so that the parent stays small (its peak RSS would not matter, but see peak_rss_mb)
        with open(full, "rb") as src:
            if fraction > 1:
                for _ in range(round(fraction)):
                    src.seek(0)
                    shutil.copyfileobj(src, out, 1 << 20)
                return
            remaining = int(full.stat().st_size * fraction)
            while remaining > 0:
                chunk = src.read(min(1 << 20, remaining))
                out.write(chunk)
                remaining -= len(chunk)
            out.write(src.readline())  # on to the end of the line

    return write_atomically(CACHE / f"gutenberg_en_{mb}mb.txt", write)


def stdlib_txt() -> Path:
    root = Path(sysconfig.get_paths()["stdlib"])

    def write(out):
        for p in sorted(root.rglob("*.py")):
            if "site-packages" in p.parts:
                continue
            text = p.read_bytes().decode("utf-8", errors="replace")
            out.write(text.encode("utf-8"))
            if text and not text.endswith("\n"):
                out.write(b"\n")

    return write_atomically(CACHE / f"stdlib-{platform.python_version()}.txt", write)


def dna_txt() -> Path:
    def write(out):
        rng = random.Random(DNA_SEED)
        for _ in range(DNA_BYTES // 1_000_000):  # in pieces: the same sequence as one call, less memory
            out.write("".join(rng.choices("ACGT", k=1_000_000)).encode("ascii"))  # one word, no newline

    return write_atomically(CACHE / f"dna_{DNA_BYTES // 1_000_000}mb_seed{DNA_SEED}.txt", write)


def tinyshakespeare() -> Path:
    return SHARED / "text/tinyshakespeare/input.txt"


# -- cases --------------------------------------------------------------------------------------------------


@dataclass
class Run:
    """One group of trainers on one input, vocabulary and thread count; ratios are taken within a group."""

    case: str
    label: str  # the input as shown in the tables
    files: object  # () -> list[Path]; evaluated only when the group runs
    vocab_size: int
    threads: int
    trainers: list[str]
    pattern: str | None = "gpt2"
    timeout: float | None = None  # None: --timeout
    gz_file: Path | None = None  # the compressed input, for the bytepair (.gz) row
    rows: list[dict] = field(default_factory=list)


ALL_BYTE_LEVEL = ["bytepair", "bytepair-hf", "hf", "sentencepiece", "rustbpe", "bpeasy"]


def plan(cases: list[str], only: list[str] | None, dna_timeout: float) -> list[Run]:
    runs: list[Run] = []

    def pick(default: list[str], allowed: list[str]) -> list[str]:
        return [t for t in allowed if t in only] if only else default

    for case in cases:
        if case == "tinyshakespeare":
            runs.append(
                Run(case, "tinyshakespeare", lambda: [tinyshakespeare()], 8192, 2, pick(ALL_BYTE_LEVEL, ALL_BYTE_LEVEL))
            )
        elif case == "stdlib":
            runs.append(
                Run(
                    case,
                    f"Python {platform.python_version()} stdlib (.py files)",
                    lambda: [stdlib_txt()],
                    8192,
                    2,
                    pick(ALL_BYTE_LEVEL, ALL_BYTE_LEVEL),
                )
            )
        elif case in ("gutenberg", "gutenberg-1t", "gutenberg-2t"):
            if case != "gutenberg-2t":
                one = ["bytepair", "hf", "sentencepiece", "rustbpe", "bpeasy"]
                runs.append(
                    Run("gutenberg", "Gutenberg (en)", lambda: [gutenberg_txt()], 32000, 1, pick(one, ALL_BYTE_LEVEL))
                )
            if case != "gutenberg-1t":
                two = ["bytepair", "bytepair-hf", "hf", "sentencepiece", "rustbpe", "bpeasy", "bytepair-gz"]
                runs.append(
                    Run(
                        "gutenberg",
                        "Gutenberg (en)",
                        lambda: [gutenberg_txt()],
                        32000,
                        2,
                        pick(two, two),
                        gz_file=GUTENBERG_GZ,
                    )
                )
        elif case == "scaling":
            for fraction in (0.1, 0.5, 1, 5):
                runs.append(
                    Run(
                        "scaling",
                        f"Gutenberg ×{fraction:g}",
                        lambda f=fraction: [gutenberg_slice(f)],
                        32000,
                        2,
                        pick(["bytepair"], ALL_BYTE_LEVEL),
                    )
                )
        elif case == "dna":
            runs.append(
                Run(
                    "dna",
                    "random A/C/G/T, one word",
                    lambda: [dna_txt()],
                    4096,
                    2,
                    pick(["bytepair", "hf", "sentencepiece", "rustbpe", "bpeasy"], ALL_BYTE_LEVEL),
                    pattern=None,
                    timeout=dna_timeout,
                )
            )
        else:
            raise SystemExit(f"unknown case {case!r}: use one of {', '.join(CASE_NAMES)}")
    return runs


CASE_NAMES = ["tinyshakespeare", "stdlib", "gutenberg", "gutenberg-1t", "gutenberg-2t", "scaling", "dna"]
QUICK = ["tinyshakespeare", "stdlib"]
FULL = ["tinyshakespeare", "stdlib", "gutenberg", "scaling", "dna"]


# -- the parent -------------------------------------------------------------------------------------------


def measure(
    trainer: str, files: list[str], vocab_size: int, threads: int, pattern: str | None, timeout: float, log_dir: Path
) -> dict:
    """Runs one trainer in a child process; its time, peak RSS and CPU time, or why it has none."""
    spec = {
        "trainer": trainer,
        "files": [str(f) for f in files],
        "vocab_size": vocab_size,
        "threads": threads,
        "pattern": pattern,
    }
    env = dict(
        os.environ,
        RAYON_NUM_THREADS=str(threads),
        OMP_NUM_THREADS=str(threads),
        TOKENIZERS_PARALLELISM="true" if threads > 1 else "false",
    )
    result = run_child(__file__, spec, env, timeout, log_dir)
    if "killed_after_s" not in result and "error" not in result:
        result.setdefault("peak_rss_mb", result["wait4_maxrss_mb"])  # no /proc: the upper bound
    return result


def warm(files: list[Path]) -> None:
    """Reads the inputs once, so that no trainer pays for the first read from disk."""
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(1 << 20):
                pass


def execute(run: Run, timeout: float, log_dir: Path) -> None:
    files = [Path(f) for f in run.files()]
    size = sum(f.stat().st_size for f in files)
    warm(files + ([run.gz_file] if run.gz_file and "bytepair-gz" in run.trainers else []))
    for key in run.trainers:
        trainer = TRAINERS[key]
        row = {
            "case": run.case,
            "input": run.label,
            "size_mb": size / 1e6,
            "vocab_size": run.vocab_size,
            "threads": run.threads,
            "trainer": trainer.name,
            "key": key,
        }
        if not installed(trainer.module):
            row["error"] = "not installed"
        else:
            inputs = [run.gz_file] if key == "bytepair-gz" else files
            limit = run.timeout or timeout
            print(
                f"{run.label} ({size / 1e6:.1f} MB) @ {run.vocab_size}, {run.threads} thread(s): {trainer.name} …",
                file=sys.stderr,
                end=" ",
                flush=True,
            )
            row.update(measure(key, inputs, run.vocab_size, run.threads, run.pattern, limit, log_dir))
            print(status_text(row), file=sys.stderr, flush=True)
        run.rows.append(row)
    compare(run.rows)


def status_text(r: dict) -> str:
    if "seconds" in r:
        return f"{r['seconds']:.2f} s, {r['peak_rss_mb']:.0f} MB"
    if "killed_after_s" in r:
        return f"> {r['killed_after_s']:g} s (killed)"
    return f"error: {r.get('error')}"


def compare(rows: list[dict]) -> None:
    """Ratios to bytepair's time and RSS, and which trainers produced the same merges."""
    base = next((r for r in rows if r["key"] == "bytepair" and "error" not in r), None)
    hf = next((r for r in rows if r["key"] == "hf" and "pairs_digest" in r), None)
    for r in rows:
        if base and "seconds" in r and "seconds" in base:
            r["vs_bytepair"] = r["seconds"] / base["seconds"]
        elif base and "seconds" in r and "killed_after_s" in base:  # a bound: bytepair took longer than its limit
            r["vs_bytepair_below"] = r["seconds"] / base["killed_after_s"]
        elif base and "killed_after_s" in r and "seconds" in base:
            r["vs_bytepair_above"] = r["killed_after_s"] / base["seconds"]
        if base and r.get("peak_rss_mb") and base.get("peak_rss_mb") and "error" not in r:
            r["rss_vs_bytepair"] = r["peak_rss_mb"] / base["peak_rss_mb"]
        if r["key"] == "bytepair-hf" and hf and "pairs_digest" in r:
            r["same_merges_as_hf"] = r["pairs_digest"] == hf["pairs_digest"]
        if "tokens_digest" in r:
            r["same_tokens_as"] = [
                o["trainer"] for o in rows if o is not r and o.get("tokens_digest") == r["tokens_digest"]
            ]
    for r in rows:
        if r["key"] == "bytepair-gz" and base and "pairs_digest" in r:
            r["same_as_plain_file"] = r["pairs_digest"] == base["pairs_digest"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"small cases only ({', '.join(QUICK)})")
    parser.add_argument("--case", action="append", choices=CASE_NAMES, help="run this case (repeatable)")
    parser.add_argument("--only", action="append", help=f"only these trainers ({', '.join(TRAINERS)})")
    parser.add_argument(
        "--out",
        type=Path,
        help="output folder (default: bench/results for a full run, bench/.cache/results for a partial one)",
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per trainer run (default 1800)")
    parser.add_argument("--dna-timeout", type=float, default=120, help="seconds per trainer on the DNA case")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return

    only = None
    if args.only:
        only = [k.strip().lower() for arg in args.only for k in arg.split(",") if k.strip()]
        unknown = [k for k in only if k not in TRAINERS]
        if unknown:
            parser.error(f"unknown trainer(s) {unknown}: use {', '.join(TRAINERS)}")
    cases = args.case or (QUICK if args.quick else FULL)
    partial = bool(args.quick or args.case or args.only)
    out_dir = args.out or (CACHE / "results" if partial else RESULTS)

    started = time.time()
    runs = plan(cases, only, args.dna_timeout)
    for run in runs:
        if run.trainers:
            execute(run, args.timeout, CACHE / "logs")
    rows = [r for run in runs for r in run.rows]
    report = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": " ".join(["bench/train.py", *sys.argv[1:]]),
        "duration_s": round(time.time() - started, 1),
        "machine": machine_info(),
        "versions": versions(["tokenizers", "sentencepiece", "rustbpe", "bpeasy"]),
        "rows": rows,
    }
    report["summary"] = summary(rows)
    write_results(out_dir, "train", report, render_markdown, lambda path: render_chart(rows, path))


# -- summary, tables and chart ------------------------------------------------------------------------------


def summary(rows: list[dict]) -> dict:
    """The numbers the issue's targets are about."""
    out: dict = {}
    g2 = [r for r in rows if r["case"] == "gutenberg" and r["threads"] == 2]
    bp = next((r for r in g2 if r["key"] == "bytepair" and "seconds" in r), None)
    hf = next((r for r in g2 if r["key"] == "hf" and "seconds" in r), None)
    peers = [r for r in g2 if r["key"] in PEERS and "seconds" in r]
    if bp and hf:
        out["gutenberg_2t_vs_hf"] = hf["seconds"] / bp["seconds"]
        out["gutenberg_2t_rss_vs_hf"] = bp["peak_rss_mb"] / hf["peak_rss_mb"]
    if bp and peers:
        fastest = min(peers, key=lambda r: r["seconds"])
        out["gutenberg_2t_fastest_peer"] = fastest["trainer"]
        out["gutenberg_2t_vs_fastest_peer"] = fastest["seconds"] / bp["seconds"]
    scaling = sorted(
        (r for r in rows if r["case"] == "scaling" and r["key"] == "bytepair" and "seconds" in r),
        key=lambda r: r["size_mb"],
    )
    if len(scaling) >= 2:
        steps = [
            {
                "from_mb": a["size_mb"],
                "to_mb": b["size_mb"],
                "size_ratio": b["size_mb"] / a["size_mb"],
                "time_ratio": b["seconds"] / a["seconds"],
            }
            for a, b in itertools.pairwise(scaling)
        ]
        out["scaling_steps"] = steps
        # linear (or better): no step costs more than 25% over proportional time
        out["scaling_linear"] = all(s["time_ratio"] <= 1.25 * s["size_ratio"] for s in steps)
    dna = next((r for r in rows if r["case"] == "dna" and r["key"] == "bytepair"), None)
    if dna:
        out["dna_seconds"] = dna.get("seconds")
    return out


def fmt_s(r: dict) -> str:
    if "seconds" in r:
        return f"{r['seconds']:.2f}" if r["seconds"] < 100 else f"{r['seconds']:.0f}"
    if "killed_after_s" in r:
        return f"> {r['killed_after_s']:g} s (killed)"
    return "—" if "error" not in r else "error"


def fmt_vs(r: dict) -> str:
    if "vs_bytepair_below" in r:
        return "< " + fmt_x(r["vs_bytepair_below"])
    if "vs_bytepair_above" in r:
        return "> " + fmt_x(r["vs_bytepair_above"])
    return fmt_x(r.get("vs_bytepair"))


def merges_note(r: dict) -> str:
    if "error" in r:
        return f"error: {r['error']}"
    if "merges" not in r:
        return ""
    text = f"{r['merges']}" + (f" (of {r['vocab']} pieces)" if "vocab" in r else "")
    if r.get("same_merges_as_hf") is True:
        text += ", = HF's merges"
    elif r.get("same_merges_as_hf") is False:
        text += ", ≠ HF's merges"
    if r.get("same_as_plain_file") is True:
        text += ", = merges from the plain file"
    elif r.get("same_as_plain_file") is False:
        text += ", ≠ merges from the plain file"
    others = [o for o in r.get("same_tokens_as", []) if not (o == "HF tokenizers" and "same_merges_as_hf" in r)]
    if others:
        text += ", same tokens as " + ", ".join(others)
    return text


def caption(report: dict) -> str:
    m, v = report["machine"], report["versions"]
    peers = ", ".join(f"{k} {v[k]}" for k in ["tokenizers", "sentencepiece", "rustbpe", "bpeasy"] if v.get(k))
    source = bytepair_label(v)
    return (
        f"_Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, {m['os']}, Python {m['python']}. "
        f"Versions: bytepair {v.get('bytepair')}{source}; {peers}._"
    )


FOOTNOTES = f"""\
Method: each trainer runs in its own process; wall time is measured around the training call (interpreter start
and imports excluded); peak RSS is the child's VmHWM (/proc) read right after training, or just before the kill
(getrusage's ru_maxrss would include the parent's own peak, which Linux carries over fork and exec); CPU time is
user + system of the child from os.wait4; inputs are read once before the first trainer, so all find them in the
page cache; threads: `RAYON_NUM_THREADS` is set for every child, plus each trainer's own option where it has one.
Ratios are the trainer's time (or RSS) ÷ bytepair's in the same group; "< / >" when one of the two was killed.

Configurations:

1. **bytepair**: `bytepair.train(path, N, pattern="gpt2", threads=T, errors="replace")` on the plain text file
   (read line by line); *(hf ties)* adds `tie_break="hf"` (HF's rule: its merges must equal BpeTrainer's);
   *(.gz)* is the same call on the gzip file (`errors="strict"`). DNA case: `pattern=None`.
2. **HF tokenizers**: `Tokenizer(models.BPE())`, `pre_tokenizers.ByteLevel(add_prefix_space=False)` (GPT-2 regex),
   `BpeTrainer(vocab_size=N, initial_alphabet=ByteLevel.alphabet(), show_progress=False)`, `tok.train([path])`
   (reads lines). No thread option of its own: `RAYON_NUM_THREADS` (and `TOKENIZERS_PARALLELISM`).
3. **SentencePiece**: `SentencePieceTrainer.train(model_type="bpe", vocab_size=N, num_threads=T,
   character_coverage=1.0, byte_fallback=True, input_sentence_size=0 (every line, no sampling),
   max_sentence_length={SP_MAX_SENTENCE_LENGTH} (no line skipped), normalization_rule_name="identity",
   remove_extra_whitespaces=False)`, model written to memory. It is not byte-level BPE with GPT-2's regex: it splits on
   whitespace (and script/number changes; defaults), merges characters (bytes only as fallback) and caps pieces at 16
   characters (default); its N counts `<unk>`, `<s>`, `</s>`, the 256 byte pieces and every character seen, so it
   learns fewer merges than the others.
4. **rustbpe**: `Tokenizer().train_from_iterator(lines, N, pattern=GPT2_REGEX)` (default buffer_size 8192); lines are
   read in Python (`open(path, errors="replace")`, line by line, line breaks kept). No thread option:
   `RAYON_NUM_THREADS`.
5. **bpeasy**: `train_bpe(lines, GPT2_REGEX, max_token_length=2**20 (no limit in effect), N)` (default batch_size
   1000); lines as for rustbpe. No thread option: `RAYON_NUM_THREADS`.

"same tokens as" compares the new tokens (as bytes, in merge order) of the byte-level trainers; "= HF's merges"
compares the merge pairs themselves.
"""


def render_markdown(report: dict) -> str:
    rows, s, cap = report["rows"], report["summary"], caption(report)
    out = [
        "# BPE training benchmark",
        "",
        f"Run {report['date']} (`{report['command']}`, {report['duration_s'] / 60:.1f} min). {cap}",
        "",
    ]

    if "gutenberg_2t_vs_hf" in s or "gutenberg_2t_vs_fastest_peer" in s:
        parts = []
        if "gutenberg_2t_vs_hf" in s:
            parts.append(f"bytepair vs HF: {s['gutenberg_2t_vs_hf']:.1f}×")
        if "gutenberg_2t_vs_fastest_peer" in s:
            parts.append(
                f"vs fastest peer ({s['gutenberg_2t_fastest_peer']}): {s['gutenberg_2t_vs_fastest_peer']:.1f}×"
            )
        if "gutenberg_2t_rss_vs_hf" in s:
            parts.append(f"RSS bytepair/HF: {s['gutenberg_2t_rss_vs_hf']:.2f}")
        out += [f"**Gutenberg 110 MB @ 32 000, 2 threads — {', '.join(parts)}**", ""]

    targets = target_rows(s, rows)
    if targets:
        out += ["## Targets", "", "| target | measured | met |", "|---|---|---|"]
        out += [f"| {t} | {m} | {ok} |" for t, m, ok in targets]
        out += ["", cap, ""]

    main_rows = [r for r in rows if r["case"] in ("tinyshakespeare", "stdlib", "gutenberg")]
    if main_rows:
        out += [
            "## Comparison",
            "",
            (
                "| input | vocab | threads | trainer | wall (s) | CPU (s) | × bytepair's time | peak RSS (MB) "
                "| RSS ÷ bytepair's | merges |"
            ),
            "|---|---|---|---|--:|--:|--:|--:|--:|---|",
        ]
        for r in main_rows:
            out.append(
                f"| {r['input']}, {r['size_mb']:.1f} MB | {r['vocab_size']} | {r['threads']} | {r['trainer']} "
                f"| {fmt_s(r)} | {cpu(r)} | {fmt_vs(r)} | {rss(r)} "
                f"| {fmt_x(r.get('rss_vs_bytepair'))} | {merges_note(r)} |"
            )
        out += ["", cap, ""]

    scaling = [r for r in rows if r["case"] == "scaling"]
    if scaling:
        out += [
            "## Scaling with corpus size (Gutenberg @ 32 000, 2 threads)",
            "",
            (
                "Slices cut at line boundaries: first 10 %, first half, all, 5 copies concatenated. "
                "Time should grow at most linearly: each step's time ratio ≤ its size ratio (+25 %)."
            ),
            "",
            "| trainer | input | MB | wall (s) | MB/s | peak RSS (MB) | time ratio to previous (size ratio) |",
            "|---|---|--:|--:|--:|--:|---|",
        ]
        prev: dict[str, dict] = {}
        for r in scaling:
            step = "—"
            p = prev.get(r["key"])
            if p and "seconds" in r and "seconds" in p:
                step = f"{r['seconds'] / p['seconds']:.2f} ({r['size_mb'] / p['size_mb']:.1f})"
            mbs = f"{r['size_mb'] / r['seconds']:.1f}" if "seconds" in r else "—"
            out.append(
                f"| {r['trainer']} | {r['input']} | {r['size_mb']:.0f} | {fmt_s(r)} | {mbs} | {rss(r)} "
                f"| {step} |" + ("" if "error" not in r else f" error: {r['error']}")
            )
            prev[r["key"]] = r
        out += ["", cap, ""]

    dna = [r for r in rows if r["case"] == "dna"]
    if dna:
        r0 = dna[0]
        out += [
            (
                f"## Worst case: {r0['size_mb']:.0f} MB single word of random A/C/G/T (seed {DNA_SEED}) "
                f"@ {r0['vocab_size']}, {r0['threads']} threads"
            ),
            "",
            (
                "bytepair with `pattern=None`; the peers with their configuration above (GPT-2 regex: the input is "
                "one word all the same). Each trainer is killed at the time limit."
            ),
            "",
            "| trainer | wall (s) | CPU (s) | × bytepair's time | peak RSS (MB) | merges |",
            "|---|--:|--:|--:|--:|---|",
        ]
        for r in dna:
            out.append(f"| {r['trainer']} | {fmt_s(r)} | {cpu(r)} | {fmt_vs(r)} | {rss(r)} | {merges_note(r)} |")
        out += ["", cap, ""]

    out += ["## Notes", "", FOOTNOTES]
    return "\n".join(out)


def cpu(r: dict) -> str:
    return f"{r['cpu_s']:.1f}" if "cpu_s" in r and "error" not in r else "—"


def rss(r: dict) -> str:
    return f"{r['peak_rss_mb']:.0f}" if "peak_rss_mb" in r and "error" not in r else "—"


def target_rows(s: dict, rows: list[dict]) -> list[tuple[str, str, str]]:
    def mark(ok: bool) -> str:
        return "✓" if ok else "✗"

    out = []
    if "gutenberg_2t_vs_hf" in s:
        out.append(
            (
                "Gutenberg 110 MB @ 32k, 2 threads: ≥ 10× faster than HF tokenizers",
                f"{s['gutenberg_2t_vs_hf']:.1f}×",
                mark(s["gutenberg_2t_vs_hf"] >= 10),
            )
        )
    if "gutenberg_2t_vs_fastest_peer" in s:
        out.append(
            (
                "… ≥ 3× faster than the fastest peer",
                f"{s['gutenberg_2t_vs_fastest_peer']:.1f}× ({s['gutenberg_2t_fastest_peer']})",
                mark(s["gutenberg_2t_vs_fastest_peer"] >= 3),
            )
        )
    if "gutenberg_2t_rss_vs_hf" in s:
        out.append(
            ("… peak RSS ≤ HF's", f"{s['gutenberg_2t_rss_vs_hf']:.2f} of HF's", mark(s["gutenberg_2t_rss_vs_hf"] <= 1))
        )
    checked = [r for r in rows if r["key"] == "bytepair-hf" and "same_merges_as_hf" in r]
    if checked:
        same = sum(r["same_merges_as_hf"] for r in checked)
        out.append(
            ('bytepair tie_break="hf" gives HF\'s merges', f"{same} of {len(checked)} runs", mark(same == len(checked)))
        )
    if "scaling_steps" in s:
        steps = ", ".join(
            f"{st['from_mb']:.0f}→{st['to_mb']:.0f} MB: {st['time_ratio']:.2f}× time for {st['size_ratio']:.1f}× size"
            for st in s["scaling_steps"]
        )
        out.append(("time grows linearly with corpus size", steps, mark(s["scaling_linear"])))
    if "dna_seconds" in s:
        dna = next(r for r in rows if r["case"] == "dna" and r["key"] == "bytepair")
        ok = s["dna_seconds"] is not None and s["dna_seconds"] < 30
        out.append(
            ("10 MB single word trains to 4 096 in < 30 s", fmt_s(dna) + (" s" if "seconds" in dna else ""), mark(ok))
        )
    return out


def render_chart(rows: list[dict], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no chart", file=sys.stderr)
        return
    groups: list[tuple] = []
    for r in rows:
        if r["case"] == "scaling":
            continue
        g = (r["case"], r["input"], r["size_mb"], r["vocab_size"], r["threads"])
        if g not in groups:
            groups.append(g)
    keys = [k for k in TRAINERS if any(r["key"] == k and r["case"] != "scaling" for r in rows)]
    scaling = [r for r in rows if r["case"] == "scaling" and "seconds" in r]

    fig = plt.figure(figsize=(13, 5.2))
    ax = fig.add_axes([0.06, 0.28, 0.62 if scaling else 0.92, 0.64])
    width = 0.8 / max(len(keys), 1)
    labelled: set[str] = set()
    for i, key in enumerate(keys):
        trainer = TRAINERS[key]
        for j, g in enumerate(groups):
            r = next(
                (
                    r
                    for r in rows
                    if (r["case"], r["input"], r["size_mb"], r["vocab_size"], r["threads"]) == g and r["key"] == key
                ),
                None,
            )
            if r is None or ("seconds" not in r and "killed_after_s" not in r):
                continue
            x = j + (i - (len(keys) - 1) / 2) * width
            value = r.get("seconds", r.get("killed_after_s"))
            killed = "killed_after_s" in r
            ax.bar(
                x,
                value,
                width,
                color=trainer.color,
                hatch="//" if killed else None,
                edgecolor="white" if killed else None,
                label=None if key in labelled else trainer.name,
            )
            labelled.add(key)
            ax.text(
                x,
                value,
                (">" if killed else "") + (f"{value:.2g}" if value < 10 else f"{value:.0f}"),
                ha="center",
                va="bottom",
                fontsize=6,
                rotation=90,
            )
    ax.set_yscale("log")
    if ax.get_ylim()[1] > 0:
        ax.set_ylim(top=ax.get_ylim()[1] * 3)  # room for the labels above the bars
    ax.set_ylabel("wall time (s, log scale) — lower is better")
    ax.set_xticks(
        range(len(groups)),
        [f"{g[1]}\n{g[2]:.1f} MB @ {g[3]}\n{g[4]} thread{'s' if g[4] > 1 else ''}" for g in groups],
        fontsize=7,
    )
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4, frameon=False)
    ax.set_title("BPE training time (hatched: killed at the time limit)", fontsize=10)
    if scaling:
        ax2 = fig.add_axes([0.75, 0.28, 0.23, 0.64])
        for key in dict.fromkeys(r["key"] for r in scaling):
            pts = sorted((r["size_mb"], r["seconds"]) for r in scaling if r["key"] == key)
            ax2.plot(
                [p[0] for p in pts], [p[1] for p in pts], "o-", color=TRAINERS[key].color, label=TRAINERS[key].name
            )
            if len(pts) >= 2:  # what linear growth from the point nearest 110 MB would give
                ref = min(pts, key=lambda p: abs(p[0] - 110))
                xs = [0, pts[-1][0]]
                ax2.plot(xs, [x * ref[1] / ref[0] for x in xs], ":", color=TRAINERS[key].color, linewidth=1)
        ax2.set_xlabel("corpus (MB)")
        ax2.set_ylabel("wall time (s)")
        ax2.set_title("scaling @ 32k, 2 threads\n(dotted: linear through the 110 MB point)", fontsize=9)
        ax2.legend(fontsize=7)
        ax2.set_xlim(left=0)
        ax2.set_ylim(bottom=0)
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
