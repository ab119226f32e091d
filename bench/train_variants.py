"""Training variants against plain training, in one run on the same input: extending a tokenizer, several
vocabulary sizes from one run, SuperBPE's superwords, and merge control (a veto regex, a veto function with its
calls counted and timed, forbid_across). Issue 27's goals: extend and several sizes ≤ 1.1× plain, superwords
≤ 3×. SuperBPE's bytes per token are measured beside plain BPE's on the whole corpus.

    python bench/train_variants.py                 # Gutenberg 110 MB @ 32 000, 2 rounds -> bench/results/
    python bench/train_variants.py --quick         # an 11 MB slice @ 8 000, 1 round -> bench/.cache/results/
    python bench/train_variants.py --rounds 3      # more rounds (each runs every variant once, plain first)
    python bench/train_variants.py --only extend   # only these variants (repeatable; plain always runs)

Each variant runs in its own child process; its time is measured around the call it is about (for `extend`:
the extension of a tokenizer trained to half the size, not that first training), peak RSS from the child.
Ratios are taken to plain training in the same round, then their median over the rounds is reported: on a
shared machine, variants timed minutes apart see different loads.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path

from common import CACHE, RESULTS, bytepair_label, fmt_x, machine_info, peak_rss_mb, run_child, versions, write_results
from train import gutenberg_slice, gutenberg_txt

#: Each variant: what it does, the call timed, the goal (ratio to plain), as shown in the tables.
VARIANTS = {
    "plain": ("`train(corpus, N)`", None),
    "extend": ("`train(corpus, N/2).extend(corpus, N)` — the extension only", 1.1),
    "sizes": ("`train(corpus, [N/4, N/2, N])` — three tokenizers", 1.1),
    "superwords": ("`train(corpus, N, superwords_after=3N/4)` (SuperBPE)", 3.0),
    "veto-regex": (r"`train(corpus, N, veto=r'\d\p{L}|\p{L}\d')`", None),
    "veto-function": ("`train(corpus, N, veto=f)`, f a Python function (digit next to a letter)", None),
    "forbid-across": ('`train(corpus, N, forbid_across=["newline", "digit"])`', None),
}


def digit_letter(left: bytes, right: bytes) -> bool:
    """A veto written in Python: refuses a token with a digit next to a letter (ASCII)."""
    token = left + right
    pairs = itertools.pairwise(token)
    return any((48 <= a <= 57) != (48 <= b <= 57) and (chr(a).isalpha() or chr(b).isalpha()) for a, b in pairs)


def child(spec: dict) -> None:
    import bytepair

    corpus, n, variant = [Path(spec["file"])], spec["vocab_size"], spec["variant"]
    out: dict = {}
    options = {"threads": spec["threads"], "progress": False}
    if variant == "extend":
        base = bytepair.train(corpus, n // 2, **options)
        start = time.perf_counter()
        tok = base.extend(corpus, n, **options)
        out["seconds"] = time.perf_counter() - start
        out["peak_rss_mb"] = peak_rss_mb("self")
        out["same_as_plain"] = tok.merges == bytepair.train(corpus, n, **options).merges
    else:
        calls = {"n": 0, "s": 0.0}

        def counted(left: bytes, right: bytes) -> bool:
            t = time.perf_counter()
            refused = digit_letter(left, right)
            calls["s"] += time.perf_counter() - t
            calls["n"] += 1
            return refused

        kwargs = {
            "plain": {},
            "sizes": {},
            "superwords": {"superwords_after": 3 * n // 4},
            "veto-regex": {"veto": r"\d\p{L}|\p{L}\d"},
            "veto-function": {"veto": counted},
            "forbid-across": {"forbid_across": ["newline", "digit"]},
        }[variant]
        sizes = [n // 4, n // 2, n] if variant == "sizes" else n
        start = time.perf_counter()
        result = bytepair.train(corpus, sizes, **kwargs, **options)
        out["seconds"] = time.perf_counter() - start
        out["peak_rss_mb"] = peak_rss_mb("self")
        tok = result[-1] if isinstance(result, list) else result
        if variant == "veto-function":
            out["veto_calls"] = calls["n"]
            out["veto_seconds"] = calls["s"]
        if variant == "sizes":
            out["same_as_plain"] = tok.merges == bytepair.train(corpus, n, **options).merges
    if out["peak_rss_mb"] is None:
        del out["peak_rss_mb"]  # no /proc
    out["merges"] = len(tok.merges)
    if variant in ("plain", "superwords") and spec.get("bytes_per_token"):
        text = Path(spec["file"]).read_text(encoding="utf-8")
        start = time.perf_counter()
        tokens = sum(len(ids) for ids in tok.encode_batch(text.splitlines(keepends=True), threads=spec["threads"]))
        out["encode_seconds"] = time.perf_counter() - start
        out["bytes_per_token"] = len(text.encode("utf-8")) / tokens
        if variant == "superwords":
            out["examples"] = tok.tokenize("By the way, I am a fan of the Milky Way. It is one of the best.")
    Path(spec["result"]).write_text(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="an 11 MB slice at 8 000, one round")
    parser.add_argument("--rounds", type=int, help="rounds of every variant (default: 2, or 1 with --quick)")
    parser.add_argument("--only", action="append", help=f"only these variants ({', '.join(VARIANTS)})")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--out", type=Path, help="output folder (default: bench/results, partial runs .cache)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    chosen = ["plain"] + [v for v in VARIANTS if v != "plain" and (not args.only or v in args.only)]
    rounds = args.rounds or (1 if args.quick else 2)
    file = gutenberg_slice(0.1) if args.quick else gutenberg_txt()
    vocab_size = 8000 if args.quick else 32000
    partial = bool(args.quick or args.only)
    out_dir = args.out or (CACHE / "results" if partial else RESULTS)
    with open(file, "rb") as f:  # in the page cache before the first child
        while f.read(1 << 20):
            pass
    started = time.time()
    runs: list[dict] = []
    env = dict(os.environ, RAYON_NUM_THREADS=str(args.threads))
    for round_ in range(rounds):
        for variant in chosen:
            spec = {
                "variant": variant,
                "file": str(file),
                "vocab_size": vocab_size,
                "threads": args.threads,
                "bytes_per_token": round_ == 0,
            }
            print(f"round {round_ + 1}: {variant} …", file=sys.stderr, end=" ", flush=True)
            r = run_child(__file__, spec, env, args.timeout, CACHE / "logs")
            r.update(variant=variant, round=round_)
            print(f"{r.get('seconds', float('nan')):.2f} s" if "seconds" in r else r, file=sys.stderr, flush=True)
            runs.append(r)
    report = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": " ".join(["bench/train_variants.py", *sys.argv[1:]]),
        "duration_s": round(time.time() - started, 1),
        "machine": machine_info(),
        "versions": versions([]),
        "input": {"file": file.name, "size_mb": file.stat().st_size / 1e6, "vocab_size": vocab_size},
        "threads": args.threads,
        "runs": runs,
        "summary": summary(runs, chosen),
    }
    write_results(out_dir, "train_variants", report, render_markdown, lambda path: render_chart(report, path))


def summary(runs: list[dict], chosen: list[str]) -> dict:
    """Per variant: median time and ratio to plain training (ratios taken within each round)."""
    out: dict = {}
    plain = {r["round"]: r for r in runs if r["variant"] == "plain" and "seconds" in r}
    for variant in chosen:
        mine = [r for r in runs if r["variant"] == variant and "seconds" in r]
        if not mine:
            out[variant] = {"error": next((r.get("error") for r in runs if r["variant"] == variant), "no run")}
            continue
        ratios = [r["seconds"] / plain[r["round"]]["seconds"] for r in mine if r["round"] in plain]
        entry = {
            "seconds": statistics.median(r["seconds"] for r in mine),
            "ratio": statistics.median(ratios) if ratios else None,
            "ratios": ratios,
            "peak_rss_mb": max(r.get("peak_rss_mb") or r.get("wait4_maxrss_mb", 0) for r in mine),
            "merges": mine[0]["merges"],
        }
        for key in ("veto_calls", "veto_seconds", "same_as_plain", "bytes_per_token", "encode_seconds", "examples"):
            if key in mine[0]:
                entry[key] = mine[0][key]
        out[variant] = entry
    return out


def caption(report: dict) -> str:
    m, v = report["machine"], report["versions"]
    source = bytepair_label(v)
    return (
        f"_Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, {m['os']}, Python {m['python']}. "
        f"bytepair {v.get('bytepair')}{source}; {report['threads']} threads._"
    )


def render_markdown(report: dict) -> str:
    s, inp, cap = report["summary"], report["input"], caption(report)
    rounds = 1 + max(r["round"] for r in report["runs"])
    out = [
        "# Training variants against plain training",
        "",
        (
            f"Run {report['date']} (`{report['command']}`, {report['duration_s'] / 60:.1f} min, {rounds} round(s)). "
            f"Input: {inp['file']} ({inp['size_mb']:.0f} MB), N = {inp['vocab_size']}. {cap}"
        ),
        "",
        "| variant | call | wall (s) | × plain (median of rounds) | goal | peak RSS (MB) | notes |",
        "|---|---|--:|--:|---|--:|---|",
    ]
    for variant, entry in s.items():
        what, goal = VARIANTS[variant]
        if "error" in entry:
            out.append(f"| {variant} | {what} | — | — | {goal or ''} | — | error: {entry['error']} |")
            continue
        notes = []
        if "same_as_plain" in entry:
            notes.append("merges = plain's" if entry["same_as_plain"] else "merges ≠ plain's!")
        if "veto_calls" in entry:
            notes.append(
                f"{entry['veto_calls']:,} calls, {entry['veto_seconds'] * 1e3:.1f} ms in the function "
                f"({entry['veto_seconds'] / entry['veto_calls'] * 1e6:.2f} µs a call)"
                if entry["veto_calls"]
                else "no calls"
            )
        met = "" if goal is None or entry["ratio"] is None else (" ✓" if entry["ratio"] <= goal else " ✗")
        out.append(
            f"| {variant} | {what} | {entry['seconds']:.2f} | {fmt_x(entry['ratio'])} "
            f"| {'≤ ' + format(goal, 'g') + '×' + met if goal else ''} | {entry['peak_rss_mb']:.0f} "
            f"| {'; '.join(notes)} |"
        )
    plain, sup = s.get("plain", {}), s.get("superwords", {})
    if "bytes_per_token" in plain and "bytes_per_token" in sup:
        fewer = 1 - plain["bytes_per_token"] / sup["bytes_per_token"]
        out += [
            "",
            "## SuperBPE: bytes per token on the whole corpus",
            "",
            "| tokenizer | bytes per token | tokens vs plain BPE |",
            "|---|--:|--:|",
            f"| plain BPE, {inp['vocab_size']} | {plain['bytes_per_token']:.3f} | — |",
            (
                f"| SuperBPE, {inp['vocab_size']} (transition {3 * inp['vocab_size'] // 4}) "
                f"| {sup['bytes_per_token']:.3f} | {-fewer:+.1%} |"
            ),
            "",
            f"Example: `{'` `'.join(sup.get('examples', []))}`",
            "",
            (
                "For comparison, the SuperBPE paper (Liu et al. 2025) trains 200 000-token vocabularies on ~10 GB of "
                "text and reports up to 33 % fewer tokens than BPE at equal vocabulary (27 % with the transition at "
                "180 000, 33 % at 80 000): far larger vocabularies on far more text, where more superwords are worth a "
                "token."
            ),
        ]
    out += ["", cap]
    return "\n".join(out)


def render_chart(report: dict, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no chart", file=sys.stderr)
        return
    s = report["summary"]
    names = [v for v in s if "ratio" in s[v] and s[v]["ratio"] is not None]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    bars = ax.bar(names, [s[v]["ratio"] for v in names], color="tab:blue")
    for bar, v in zip(bars, names):
        ax.annotate(
            f"{s[v]['ratio']:.2f}×", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom"
        )
        goal = VARIANTS[v][1]
        if goal:
            ax.hlines(goal, bar.get_x(), bar.get_x() + bar.get_width(), colors="tab:red", linestyles="dashed")
    ax.set_ylabel("time ÷ plain training (same round)")
    inp = report["input"]
    ax.set_title(f"Training variants, {inp['file']} ({inp['size_mb']:.0f} MB), N = {inp['vocab_size']} (red: goal)")
    fig.text(0.01, 0.01, caption(report).strip("_"), fontsize=7)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
