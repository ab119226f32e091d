"""HF datasets benchmark: training on and encoding a `datasets.Dataset` in the forms users write, against the
batched form (`dataset.iter(batch_size=1000)`, the same strings a thousand at a time), in one run.

The dataset is the 110 MB Gutenberg corpus (../shared/data) as `load_dataset("text", ...)` makes it: one row per
line (2.3 M rows), saved once with `save_to_disk` and memory-mapped by `load_from_disk` in each run, as a dataset
from the Hub is. Each form runs in its own fresh process (peak RSS is that process's), wall time around the call:

train (vocabulary 8 192, every core):
- batched:   bytepair.train(batch["text"] for batch in ds.iter(batch_size=1000))   — the reference
- column:    bytepair.train(ds["text"])
- field:     bytepair.train(ds, field="text")
- iterable:  bytepair.train(ds.to_iterable_dataset(), field="text")
- rows:      bytepair.train(text for text in ds["text"])   — row by row, what ds["text"] cost before 0.2

encode (the tokenizer trained above):
- batched:   [tok.encode_batch(batch["text"]) for batch in ds.iter(batch_size=1000)]
- column:    tok.encode_batch(ds["text"])
- numpy:     tok.encode_to_numpy(ds["text"])

The target (issue 25): every form within 1.5x of the batched form.

    python bench/hf_datasets.py            # everything (~3 min on 2 cores) -> bench/results/datasets.{md,json,png}
    python bench/hf_datasets.py --quick    # the first 20 MB -> bench/.cache/results/
    python bench/hf_datasets.py --only train

Inputs are made once and cached (outside git) in bench/.cache/. Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import sys
import time
from pathlib import Path

from common import CACHE, GUTENBERG_GZ, RESULTS, fmt_x, machine_info, peak_rss_mb, run_child, versions, write_results

VOCAB = 8192
TARGET = 1.5

TRAIN_FORMS = {
    "batched": 'bytepair.train((b["text"] for b in ds.iter(batch_size=1000)), VOCAB)',
    "column": 'bytepair.train(ds["text"], VOCAB)',
    "field": 'bytepair.train(ds, VOCAB, field="text")',
    "iterable": 'bytepair.train(ds.to_iterable_dataset(), VOCAB, field="text")',
    "rows": 'bytepair.train((t for t in ds["text"]), VOCAB)',
}
ENCODE_FORMS = {
    "batched": '[tok.encode_batch(b["text"]) for b in ds.iter(batch_size=1000)]',
    "column": 'tok.encode_batch(ds["text"])',
    "numpy": 'tok.encode_to_numpy(ds["text"])',
}


def dataset_path(megabytes: int | None) -> Path:
    """The Gutenberg lines (the first `megabytes` MB, or all) as a dataset saved to disk, made once."""
    import datasets

    path = CACHE / f"datasets/gutenberg-lines-{megabytes or 'all'}"
    if not (path / "dataset_info.json").exists():
        print(f"preparing {path.relative_to(CACHE.parent)} …", file=sys.stderr, flush=True)
        with gzip.open(GUTENBERG_GZ, "rt", encoding="utf-8") as f:
            text = f.read()
        if megabytes:
            text = text[: megabytes * 1_000_000]
        lines = text.splitlines(keepends=True)
        ds = datasets.Dataset.from_dict({"text": lines})
        tmp = path.with_name(path.name + ".tmp")
        ds.save_to_disk(str(tmp))
        tmp.rename(path)
    return path


def child(spec: dict) -> None:
    import datasets

    import bytepair

    ds = datasets.load_from_disk(spec["dataset"])
    namespace = {"bytepair": bytepair, "ds": ds, "VOCAB": VOCAB}
    if spec["task"] == "encode":
        namespace["tok"] = bytepair.Tokenizer.load(spec["tokenizer"])
    rss_before = peak_rss_mb(os.getpid())
    start = time.perf_counter()
    result = eval(spec["code"], namespace)  # the form being measured, as written in the table
    seconds = time.perf_counter() - start
    if spec["task"] == "train":
        check = result.merges[-1]
        if spec.get("save"):
            result.save(spec["save"])
    else:
        check = sum(len(x) for batch in result for x in batch) if spec["form"] == "batched" else sum(map(len, result))
    Path(spec["result"]).write_text(
        json.dumps(
            {
                "seconds": seconds,
                "peak_rss_mb": peak_rss_mb(os.getpid()),
                "rss_before_mb": rss_before,
                "check": str(check),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the first 20 MB only; results to bench/.cache/results")
    parser.add_argument("--only", choices=["train", "encode"], help="one task")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    megabytes = 20 if args.quick else None
    data = dataset_path(megabytes)
    logs = CACHE / "logs"
    tokenizer = CACHE / f"datasets/tokenizer-{megabytes or 'all'}.json"
    env = {**os.environ}
    rows: list[dict] = []
    for task, forms in (("train", TRAIN_FORMS), ("encode", ENCODE_FORMS)):
        if args.only and args.only != task:
            continue
        if task == "encode" and not tokenizer.exists():  # the tokenizer the encode rows use, made once
            spec = {"task": "train", "form": "batched", "code": TRAIN_FORMS["batched"], "dataset": str(data)}
            made = run_child(__file__, {**spec, "save": str(tokenizer)}, env, 1800, logs)
            if "error" in made:
                sys.exit(f"training the tokenizer to encode with failed: {made['error']} (log: {made.get('log')})")
        for form, code in forms.items():
            spec = {"task": task, "form": form, "code": code, "dataset": str(data), "tokenizer": str(tokenizer)}
            print(f"{task} {form} …", file=sys.stderr, flush=True)
            result = run_child(__file__, spec, env, 1800, logs)
            rows.append({"task": task, "form": form, "code": code, **result})
    for task in ("train", "encode"):
        reference = next((r for r in rows if r["task"] == task and r["form"] == "batched" and "seconds" in r), None)
        checks = {r.get("check") for r in rows if r["task"] == task and "check" in r}
        for r in rows:
            if r["task"] == task and reference and "seconds" in r:
                r["ratio"] = r["seconds"] / reference["seconds"]
            if r["task"] == task:
                r["same_result"] = len(checks) == 1
    report = {
        "benchmark": "datasets",
        "date": datetime.date.today().isoformat(),
        "machine": machine_info(),
        "versions": versions(["datasets", "pyarrow"]),
        "input": f"Gutenberg English, {'first 20 MB' if megabytes else '110 MB'}, one row per line",
        "vocab_size": VOCAB,
        "target_ratio": TARGET,
        "rows": rows,
    }
    out = (CACHE / "results") if args.quick or args.only else RESULTS
    write_results(out, "datasets", report, markdown, lambda path: chart(report, path))


def markdown(report: dict) -> str:
    m = report["machine"]
    lines = [
        f"# HF datasets: the forms users write against the batched form ({report['date']})",
        "",
        (
            f"{report['input']}; {m['cpu']}, {m['cores']} cores; bytepair {report['versions'].get('bytepair')}, "
            f"datasets {report['versions'].get('datasets')}, pyarrow {report['versions'].get('pyarrow')}. Each form "
            f"in a fresh process; target: within {report['target_ratio']}× of the batched form."
        ),
        "",
        "| task | form | code | time | vs batched | peak RSS |",
        "|---|---|---|---:|---:|---:|",
    ]
    for r in report["rows"]:
        if "seconds" in r:
            time_text, ratio = f"{r['seconds']:.2f} s", fmt_x(r.get("ratio"))
            if r.get("ratio") is not None and r["form"] not in ("batched", "rows"):
                ratio += " ✓" if r["ratio"] <= report["target_ratio"] else " ✗"
        else:
            time_text, ratio = r.get("error", "killed"), "—"
        rss = f"{r['peak_rss_mb']:.0f} MB" if r.get("peak_rss_mb") else "—"
        lines.append(f"| {r['task']} | {r['form']} | `{r['code']}` | {time_text} | {ratio} | {rss} |")
    same = all(r.get("same_result", True) for r in report["rows"])
    lines += [
        "",
        f"Every form of a task gives the same result (last merge / number of ids): {'yes' if same else 'NO'}.",
        "",
    ]
    return "\n".join(lines)


def chart(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in report["rows"] if "seconds" in r]
    labels = [f"{r['task']}: {r['form']}" for r in rows]
    seconds = [r["seconds"] for r in rows]
    colors = ["#888888" if r["form"] == "batched" else "#c44e52" if r["form"] == "rows" else "#4c72b0" for r in rows]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.2))
    ax.barh(labels[::-1], seconds[::-1], color=colors[::-1])
    for y, (s, r) in enumerate(zip(seconds[::-1], rows[::-1])):
        ax.text(
            s, y, f" {s:.2f} s" + (f" ({fmt_x(r.get('ratio'))})" if r.get("ratio") else ""), va="center", fontsize=8
        )
    ax.set_xlabel("seconds (lower is better)")
    ax.set_title(f"bytepair on a HF dataset: {report['input']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
