"""Training benchmark: bytepair and its peers in one run, on the same input and vocabulary size.

Each trainer runs in its own child process (so peak RSS is its own); merges are checked for equality where
the rules are the same (bytepair tie_break="hf" vs HF tokenizers' BpeTrainer). Writes
bench/results/train.md, train.json and train.png.

    python bench/train.py            # the default cases
    python bench/train.py --quick    # small cases only

Peers that are not installed are skipped (and the table says so). The trainer issue extends this with the
110 MB Gutenberg corpus, SentencePiece, rustbpe and bpeasy.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
SHARED = Path(os.environ.get("BYTEPAIR_SHARED_DATA", REPO.parent / "shared" / "data"))


def corpus_files(name: str) -> list[str]:
    if name == "tinyshakespeare":
        return [str(SHARED / "text/tinyshakespeare/input.txt")]
    if name == "stdlib":
        root = Path(sysconfig.get_paths()["stdlib"])
        return [str(p) for p in sorted(root.rglob("*.py")) if "site-packages" not in p.parts]
    raise ValueError(name)


def read_lines(files: list[str]) -> list[str]:
    out: list[str] = []
    for f in files:
        out += Path(f).read_bytes().decode("utf-8", errors="replace").splitlines(keepends=True)
    return out


# -- trainers (run in the child process) ----------------------------------------------------------------


def run_bytepair(files: list[str], vocab_size: int, tie_break: str) -> list[tuple[str, str]]:
    import bytepair

    tok = bytepair.train(files, vocab_size, tie_break=tie_break, progress=False, errors="replace")
    return tok.merges


def run_hf(files: list[str], vocab_size: int) -> list[tuple[str, str]]:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    # HF reads files as lines too; files with invalid UTF-8 (a few stdlib tests) go through the iterator.
    tok.train_from_iterator(read_lines(files), trainer)
    model = json.loads(tok.to_str())["model"]
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]


def run_reference(files: list[str], vocab_size: int) -> list[tuple[str, str]]:
    from bytepair import reference

    return reference.train(read_lines(files), vocab_size).merges


TRAINERS = {
    "bytepair": lambda files, v: run_bytepair(files, v, "first_seen"),
    "bytepair (hf ties)": lambda files, v: run_bytepair(files, v, "hf"),
    "HF tokenizers": run_hf,
    "reference (pure Python)": run_reference,
}


def child(trainer: str, case: str, vocab_size: int, threads: int) -> None:
    files = corpus_files(case)
    start = time.perf_counter()
    merges = TRAINERS[trainer](files, vocab_size)
    seconds = time.perf_counter() - start
    digest = hashlib.sha256(json.dumps(merges, ensure_ascii=False).encode()).hexdigest()[:16]
    print(json.dumps({"seconds": seconds, "merges": len(merges), "digest": digest}))


# -- the parent -------------------------------------------------------------------------------------------


def measure(trainer: str, case: str, vocab_size: int, threads: int) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    cmd = [sys.executable, __file__, "--child", trainer, case, str(vocab_size), str(threads)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    out, err = proc.stdout.read(), proc.stderr.read()
    if status != 0:
        return {"error": (err.strip().splitlines() or ["failed"])[-1]}
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_mb"] = usage.ru_maxrss / 1024
    return result


def available(trainer: str) -> bool:
    module = {"HF tokenizers": "tokenizers"}.get(trainer)
    if module is None:
        return True
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        trainer, case, vocab, threads = args.child
        child(trainer, case, int(vocab), int(threads))
        return

    cases = [("tinyshakespeare", 256 + 100, ["bytepair", "bytepair (hf ties)", "HF tokenizers", "reference (pure Python)"])]
    cases.append(("tinyshakespeare", 8192, ["bytepair", "bytepair (hf ties)", "HF tokenizers"]))
    if not args.quick:
        cases.append(("stdlib", 8192, ["bytepair", "bytepair (hf ties)", "HF tokenizers"]))

    rows = []
    for case, vocab_size, trainers in cases:
        size_mb = sum(os.path.getsize(f) for f in corpus_files(case)) / 1e6
        results = {}
        for trainer in trainers:
            if not available(trainer):
                results[trainer] = {"error": "not installed"}
                continue
            print(f"{case} ({size_mb:.1f} MB) vocab {vocab_size}: {trainer} …", file=sys.stderr, flush=True)
            results[trainer] = measure(trainer, case, vocab_size, threads=os.cpu_count() or 1)
        base = results.get("bytepair", {}).get("seconds")
        hf = results.get("HF tokenizers", {})
        for trainer, r in results.items():
            row = {"case": case, "size_mb": round(size_mb, 1), "vocab_size": vocab_size, "trainer": trainer, **r}
            if base and "seconds" in r:
                row["vs_bytepair"] = r["seconds"] / base
            if trainer == "bytepair (hf ties)" and "digest" in hf and "digest" in r:
                row["same_merges_as_hf"] = r["digest"] == hf["digest"]
            rows.append(row)

    RESULTS.mkdir(parents=True, exist_ok=True)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    (RESULTS / "train.json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n")
    table = render_table(rows, machine)
    (RESULTS / "train.md").write_text(table)
    print(table)
    render_chart(rows, RESULTS / "train.png")


def render_table(rows: list[dict], machine: str) -> str:
    lines = [
        f"Training, byte-level BPE with the GPT-2 pre-tokenizer ({machine}). "
        "Time relative to bytepair: higher is slower.",
        "",
        "| corpus | vocab | trainer | wall (s) | × bytepair's time | peak RSS (MB) | merges |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['case']} ({r['size_mb']} MB) | {r['vocab_size']} | {r['trainer']} | — | — | — | {r['error']} |")
            continue
        same = " (= HF's)" if r.get("same_merges_as_hf") else (" (≠ HF's!)" if r.get("same_merges_as_hf") is False else "")
        lines.append(
            f"| {r['case']} ({r['size_mb']} MB) | {r['vocab_size']} | {r['trainer']} | {r['seconds']:.2f} | "
            f"{r.get('vs_bytepair', float('nan')):.1f} | {r['peak_rss_mb']:.0f} | {r['merges']}{same} |"
        )
    return "\n".join(lines) + "\n"


def render_chart(rows: list[dict], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no chart", file=sys.stderr)
        return
    ok = [r for r in rows if "seconds" in r]
    labels = [f"{r['case']} @{r['vocab_size']}\n{r['trainer']}" for r in ok]
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(ok) + 1.2))
    colors = ["tab:blue" if r["trainer"].startswith("bytepair") else "tab:gray" for r in ok]
    ax.barh(range(len(ok)), [r["seconds"] for r in ok], color=colors)
    ax.set_yticks(range(len(ok)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("wall time (s, log scale) — lower is better")
    ax.set_title("BPE training time")
    for i, r in enumerate(ok):
        ax.text(r["seconds"], i, f" {r['seconds']:.2f}s", va="center", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
