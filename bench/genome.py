"""Genome benchmark: BPE for DNA (the `dna` preset) against HF tokenizers and SentencePiece, in one run.

Cases (each trainer in its own child process, 2 threads, vocabulary 4 096):

- ecoli: E. coli K-12 MG1655 (4.6 Mbp, ../shared/data/genome) cut into 1 000-bp chunks. bytepair gets the very
  chunks the peers get (a list of str); a second bytepair row reads the gzipped FASTA itself (parsing,
  decompression and cutting included in its time).
- whole: the same chromosome as one sequence (no chunks): is training still linear?
- scaling: synthetic genomes of 10, 25, 50 and 100 Mbp (mutated copies of E. coli segments, seeded; prefixes of one
  stream), bytepair from the FASTA, in 1 000-bp chunks and unchunked; the peers on the 100 Mbp chunks.
- encode: the E. coli tokenizer encoding one sequence of 1, 4.6 and 20 Mbp (`encode_to_numpy`): linear time?

For every training run (three runs each, in fresh processes, the fastest reported — this machine is shared, and
single runs vary by ±30 % — except the peers on 100 Mbp, which take minutes: once): wall time around the training
call (interpreter start, imports and reading the chunks
excluded), the child's peak RSS (VmHWM) and how many bytes per base that is (whole process; and above the
process's RSS just before training), and bases per token (the training chunks encoded by the trained model,
after the measurement).

    python bench/genome.py            # everything (~11 min on 2 cores) -> bench/results/genome.{md,json,png}
    python bench/genome.py --quick    # E. coli only (~30 s) -> bench/.cache/results/
    python bench/genome.py --case scaling --only bytepair

Inputs are made once and cached (outside git) in bench/.cache/. Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import itertools
import json
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import (
    CACHE,
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

ECOLI = SHARED / "genome/ecoli_k12_mg1655_NC_000913.3.fna.gz"
VOCAB = 4096
CHUNK = 1000
THREADS = 2
SYNTH_SEED = 20251122
SCALING_MBP = [10, 25, 50, 100]
REPEAT = 3  # runs of each case (each in a fresh process); the fastest is reported
ENCODE_REPEAT = 5  # encoding runs are short (0.05-1 s), where the machine's noise weighs most
ENCODE_MBP = [1, 4.641652, 20]


def rss_mb(pid: str | int = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# -- inputs -----------------------------------------------------------------------------------------------


def ecoli_sequence() -> str:
    with gzip.open(ECOLI, "rt") as f:
        return "".join(line.strip() for line in f if not line.startswith(">")).upper()


def synthetic_genome(mbp: int) -> Path:
    """The first `mbp` Mbp of a seeded stream of records, each a concatenation of 10-100 kb segments of E. coli
    taken at random places, half of them reverse-complemented, with 2 % random substitutions (a genome with
    repeats and variation, not a random string)."""

    def write(out):
        src = ecoli_sequence()
        rng = random.Random(SYNTH_SEED)
        comp = str.maketrans("ACGT", "TGCA")
        target, total, record = mbp * 1_000_000, 0, 0
        while total < target:
            parts, n = [], 0
            size = min(len(src), target - total)
            while n < size:
                start, length = rng.randrange(len(src)), rng.randint(10_000, 100_000)
                segment = src[start : start + length]
                if rng.random() < 0.5:
                    segment = segment.translate(comp)[::-1]
                seg = bytearray(segment.encode("ascii"))
                for _ in range(len(seg) // 50):
                    seg[rng.randrange(len(seg))] = rng.choice(b"ACGT")
                parts.append(bytes(seg))
                n += len(seg)
            seq = b"".join(parts)[:size]
            out.write(f">synthetic_{record} mutated E. coli segments\n".encode())
            for i in range(0, len(seq), 80):
                out.write(seq[i : i + 80] + b"\n")
            total += len(seq)
            record += 1

    return write_atomically(CACHE / f"genome_synthetic_{mbp}mbp_seed{SYNTH_SEED}.fa", write)


# -- trainers (run in the child) ------------------------------------------------------------------------------


def load_chunks(source: str, chunk: int | None) -> list[str]:
    import bytepair

    return [r.sequence for r in bytepair.iter_fasta(source, chunk_length=chunk)]


def train_bytepair_chunks(seqs: list[str], spec: dict):
    import bytepair

    return bytepair.train_dna(seqs, spec["vocab"], threads=THREADS, progress=False)


def train_bytepair_fasta(path: str, spec: dict):
    import bytepair

    return bytepair.train_dna(path, spec["vocab"], chunk_length=spec["chunk"], threads=THREADS, progress=False)


def bases_per_token_bytepair(tok, seqs: list[str]) -> float:
    tokens = sum(len(ids) for ids in tok.encode_to_numpy(seqs, threads=THREADS))
    return sum(map(len, seqs)) / tokens


def train_hf(seqs: list[str], spec: dict):
    from tokenizers import Tokenizer, models, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))  # no pre-tokenizer: each sequence is one word
    trainer = trainers.BpeTrainer(vocab_size=spec["vocab"], special_tokens=["[UNK]"], show_progress=False)
    tok.train_from_iterator(seqs, trainer)
    return tok


def bases_per_token_hf(tok, seqs: list[str]) -> float:
    return sum(map(len, seqs)) / sum(len(e.ids) for e in tok.encode_batch(seqs))


def train_sentencepiece(seqs: list[str], spec: dict):
    import io

    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(seqs),
        model_writer=model,
        model_type="bpe",
        vocab_size=spec["vocab"],
        num_threads=THREADS,
        character_coverage=1.0,
        input_sentence_size=0,
        add_dummy_prefix=False,
        max_sentence_length=max(map(len, seqs)) + 1,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        minloglevel=2,
    )
    return spm.SentencePieceProcessor(model_proto=model.getvalue())


def bases_per_token_sentencepiece(sp, seqs: list[str]) -> float:
    return sum(map(len, seqs)) / sum(len(ids) for ids in sp.encode(seqs))


@dataclass(frozen=True)
class Trainer:
    key: str
    name: str
    module: str
    color: str


TRAINERS = {
    t.key: t
    for t in [
        Trainer("bytepair", "bytepair", "bytepair", "tab:blue"),
        Trainer("bytepair-fasta", "bytepair (from the FASTA)", "bytepair", "lightsteelblue"),
        Trainer("hf", "HF tokenizers", "tokenizers", "tab:orange"),
        Trainer("sentencepiece", "SentencePiece", "sentencepiece", "tab:green"),
    ]
}


def child(spec: dict) -> None:
    """Trains (or encodes) once and writes the measurements to spec["result"]."""
    out: dict = {}
    if spec["trainer"] == "encode":
        import bytepair

        tok = bytepair.train_dna(str(ECOLI), VOCAB, chunk_length=CHUNK, progress=False)
        seq = ecoli_sequence()
        n = int(spec["mbp"] * 1_000_000)
        seq = (seq * (n // len(seq) + 1))[:n]
        tok.encode_to_numpy("ACGT")  # numpy imported, encoder built
        start = time.perf_counter()
        ids = tok.encode_to_numpy(seq)
        out["seconds"] = time.perf_counter() - start
        out["bases_per_token"] = len(seq) / len(ids)
        assert tok.decode(ids.tolist()) == seq
        Path(spec["result"]).write_text(json.dumps(out))
        return
    key, source = spec["trainer"], spec["source"]
    # What the peers train on; bytepair-fasta reads the file itself (the chunks are read after it, for stats).
    seqs = None if key == "bytepair-fasta" else load_chunks(source, spec["chunk"])
    before = rss_mb()
    start = time.perf_counter()
    if key == "bytepair":
        model = train_bytepair_chunks(seqs, spec)
    elif key == "bytepair-fasta":
        model = train_bytepair_fasta(source, spec)
    elif key == "hf":
        model = train_hf(seqs, spec)
    else:
        model = train_sentencepiece(seqs, spec)
    out["seconds"] = time.perf_counter() - start
    out["peak_rss_mb"] = peak_rss_mb("self")
    out["rss_before_mb"] = before
    if seqs is None:
        seqs = load_chunks(source, spec["chunk"])
    out["bases"] = sum(map(len, seqs))
    measure = {
        "bytepair": bases_per_token_bytepair,
        "bytepair-fasta": bases_per_token_bytepair,
        "hf": bases_per_token_hf,
        "sentencepiece": bases_per_token_sentencepiece,
    }[key]
    out["bases_per_token"] = measure(model, seqs)
    Path(spec["result"]).write_text(json.dumps(out))


# -- the parent -------------------------------------------------------------------------------------------------


@dataclass
class Case:
    case: str
    label: str
    source: object  # () -> path
    chunk: int | None
    trainers: list[str]
    timeout: float
    mbp: float = 0.0
    repeat: int = 1  # fresh processes per trainer; the fastest run is reported (the machine is shared)
    rows: list[dict] = field(default_factory=list)


def measure(spec: dict, timeout: float, log_dir: Path) -> dict:
    """Runs one trainer (or the encoding case) in a child process: its result, or why it has none."""
    env = dict(os.environ, RAYON_NUM_THREADS=str(THREADS), OMP_NUM_THREADS=str(THREADS), TOKENIZERS_PARALLELISM="true")
    return run_child(__file__, spec, env, timeout, log_dir)


def plan(cases: list[str], only: list[str] | None, timeout: float) -> list[Case]:
    def pick(keys: list[str]) -> list[str]:
        return [k for k in keys if not only or k in only]

    out = []
    for case in cases:
        if case == "ecoli":
            out.append(
                Case(
                    "ecoli",
                    f"E. coli, {CHUNK}-bp chunks",
                    lambda: ECOLI,
                    CHUNK,
                    pick(["bytepair", "bytepair-fasta", "hf", "sentencepiece"]),
                    timeout,
                    4.641652,
                    REPEAT,
                )
            )
        elif case == "whole":
            out.append(
                Case(
                    "whole",
                    "E. coli, whole chromosome",
                    lambda: ECOLI,
                    None,
                    pick(["bytepair-fasta", "hf", "sentencepiece"]),
                    min(timeout, 120),
                    4.641652,
                    REPEAT,
                )
            )
        elif case == "scaling":
            for mbp in SCALING_MBP:
                for chunk in (CHUNK, None):
                    label = f"synthetic {mbp} Mbp, " + (f"{CHUNK}-bp chunks" if chunk else "unchunked")
                    peers = ["hf", "sentencepiece"] if mbp == SCALING_MBP[-1] and chunk else []
                    out.append(
                        Case(
                            "scaling",
                            label,
                            (lambda m=mbp: synthetic_genome(m)),
                            chunk,
                            pick(["bytepair-fasta", *peers]),
                            timeout,
                            mbp,
                            REPEAT,
                        )
                    )
        elif case == "encode":
            for mbp in ENCODE_MBP:
                if not only or "bytepair" in only:
                    out.append(
                        Case(
                            "encode",
                            f"encode {mbp:g} Mbp",
                            lambda: ECOLI,
                            None,
                            ["encode"],
                            timeout,
                            mbp,
                            ENCODE_REPEAT,
                        )
                    )
    return out


def execute(case: Case, log_dir: Path) -> None:
    source = Path(case.source())
    for key in case.trainers:
        row = {
            "case": case.case,
            "input": case.label,
            "mbp": case.mbp,
            "chunk": case.chunk,
            "key": key,
            "trainer": TRAINERS[key].name if key in TRAINERS else "bytepair",
        }
        if key in TRAINERS and not installed(TRAINERS[key].module):
            row["error"] = "not installed"
        else:
            print(f"{case.label}: {row['trainer']} …", file=sys.stderr, end=" ", flush=True)
            spec = {"trainer": key, "source": str(source), "chunk": case.chunk, "vocab": VOCAB, "mbp": case.mbp}
            # Peers on the 100 Mbp genome run once (minutes each); everything else `case.repeat` times.
            repeat = 1 if case.case == "scaling" and not key.startswith("bytepair") else case.repeat
            runs = [measure(spec, case.timeout, log_dir)]
            while len(runs) < repeat and "seconds" in runs[-1]:  # a killed or failed run is not repeated
                runs.append(measure(spec, case.timeout, log_dir))
            best = min(runs, key=lambda r: r.get("seconds", float("inf")))
            row.update(best)
            if len(runs) > 1:
                row["runs_s"] = [round(r["seconds"], 3) for r in runs if "seconds" in r]
            if "peak_rss_mb" in row and row.get("peak_rss_mb") and case.mbp:
                row["bytes_per_base"] = row["peak_rss_mb"] * 2**20 / (case.mbp * 1e6)
                if "rss_before_mb" in row:
                    row["added_bytes_per_base"] = (row["peak_rss_mb"] - row["rss_before_mb"]) * 2**20 / (case.mbp * 1e6)
            print(status(row), file=sys.stderr, flush=True)
        case.rows.append(row)
    base = next((r for r in case.rows if r["key"] == "bytepair" and "seconds" in r), None) or next(
        (r for r in case.rows if r["key"] == "bytepair-fasta" and "seconds" in r), None
    )
    for r in case.rows:
        if base and "seconds" in r:
            r["vs_bytepair"] = r["seconds"] / base["seconds"]
        elif base and "killed_after_s" in r:
            r["vs_bytepair_above"] = r["killed_after_s"] / base["seconds"]


def status(r: dict) -> str:
    if "seconds" in r:
        return f"{r['seconds']:.2f} s" + (f", {r['peak_rss_mb']:.0f} MB" if r.get("peak_rss_mb") else "")
    if "killed_after_s" in r:
        return f"> {r['killed_after_s']:g} s (killed)"
    return f"error: {r.get('error')}"


# -- report -----------------------------------------------------------------------------------------------------


def summary(rows: list[dict]) -> dict:
    s: dict = {}
    eco = {r["key"]: r for r in rows if r["case"] == "ecoli" and "seconds" in r}
    if "bytepair" in eco:
        for peer in ("hf", "sentencepiece"):
            if peer in eco:
                s[f"ecoli_vs_{peer}"] = eco[peer]["seconds"] / eco["bytepair"]["seconds"]
    whole = next((r for r in rows if r["case"] == "whole" and r["key"] == "bytepair-fasta" and "seconds" in r), None)
    if whole and "bytepair-fasta" in eco:
        s["whole_vs_chunked"] = whole["seconds"] / eco["bytepair-fasta"]["seconds"]
    for chunked in (True, False):
        pts = sorted(
            (
                r
                for r in rows
                if r["case"] == "scaling"
                and r["key"] == "bytepair-fasta"
                and "seconds" in r
                and bool(r["chunk"]) == chunked
            ),
            key=lambda r: r["mbp"],
        )
        if len(pts) >= 2:
            steps = [
                {
                    "from": a["mbp"],
                    "to": b["mbp"],
                    "size_ratio": b["mbp"] / a["mbp"],
                    "time_ratio": b["seconds"] / a["seconds"],
                }
                for a, b in itertools.pairwise(pts)
            ]
            name = "chunked" if chunked else "unchunked"
            s[f"scaling_{name}"] = steps
            s[f"scaling_{name}_linear"] = all(st["time_ratio"] <= 1.25 * st["size_ratio"] for st in steps)
            s[f"scaling_{name}_max_bytes_per_base"] = max(r["bytes_per_base"] for r in pts if "bytes_per_base" in r)
            biggest = pts[-1]
            s[f"scaling_{name}_biggest"] = {"mbp": biggest["mbp"], "bytes_per_base": biggest.get("bytes_per_base")}
    enc = sorted((r for r in rows if r["case"] == "encode" and "seconds" in r), key=lambda r: r["mbp"])
    if len(enc) >= 2:
        s["encode_steps"] = [
            {
                "from": a["mbp"],
                "to": b["mbp"],
                "size_ratio": b["mbp"] / a["mbp"],
                "time_ratio": b["seconds"] / a["seconds"],
            }
            for a, b in itertools.pairwise(enc)
        ]
        s["encode_linear"] = all(st["time_ratio"] <= 1.25 * st["size_ratio"] for st in s["encode_steps"])
    return s


def fmt_s(r: dict) -> str:
    if "seconds" in r:
        return f"{r['seconds']:.2f}" if r["seconds"] < 100 else f"{r['seconds']:.0f}"
    if "killed_after_s" in r:
        return f"> {r['killed_after_s']:g} (killed)"
    return "—"


def fmt_vs(r: dict) -> str:
    if "vs_bytepair_above" in r:
        return "> " + fmt_x(r["vs_bytepair_above"])
    return fmt_x(r.get("vs_bytepair"))


def cell(r: dict, key: str, fmt: str) -> str:
    return format(r[key], fmt) if r.get(key) is not None and "error" not in r else "—"


def caption(report: dict) -> str:
    m, v = report["machine"], report["versions"]
    peers = ", ".join(f"{k} {v[k]}" for k in ["tokenizers", "sentencepiece"] if v.get(k))
    source = bytepair_label(v)
    return (
        f"_Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, {m['os']}, Python {m['python']}. "
        f"Versions: bytepair {v.get('bytepair')}{source}; {peers}._"
    )


NOTES = f"""\
Method: each run is its own child process (2 threads: `RAYON_NUM_THREADS=2`, SentencePiece `num_threads=2`), run
three times (encoding: five) and the fastest shown (all run times are in genome.json) — except the peers on
100 Mbp, run once; wall time is measured around the training call only — interpreter start, imports and reading the chunks into a list of
str are excluded (the *from the FASTA* rows include reading, gzip decompression and cutting, which happen inside
the call); peak RSS is the child's VmHWM read right after training, for the whole process (Python and its input
included); "B/base" is peak RSS ÷ bases, "added" counts only what training added to the RSS it started with.
Bases per token: the training chunks encoded with the trained model, after the measurement.

Configurations (vocabulary {VOCAB}):

1. **bytepair**: `bytepair.train_dna(chunks, {VOCAB})` (alphabet A/C/G/T/N + `[UNK]`, no pre-tokenization);
   *from the FASTA*: `bytepair.train_dna(path, {VOCAB}, chunk_length={CHUNK})` (unchunked: `chunk_length=None`).
2. **HF tokenizers**: `Tokenizer(models.BPE(unk_token="[UNK]"))` with no pre-tokenizer,
   `BpeTrainer(vocab_size={VOCAB}, special_tokens=["[UNK]"])`, `train_from_iterator(chunks)`.
3. **SentencePiece**: `SentencePieceTrainer.train(sentence_iterator=chunks, model_type="bpe", vocab_size={VOCAB},
   character_coverage=1.0, input_sentence_size=0, add_dummy_prefix=False, max_sentence_length=longest + 1,
   normalization_rule_name="identity", remove_extra_whitespaces=False)`; it caps pieces at 16 letters (default).

The synthetic genomes are prefixes of one seeded stream (seed {SYNTH_SEED}) of records made of 10-100 kb segments
of E. coli taken at random places, half reverse-complemented, with 2 % random substitutions; 80-column FASTA.
"""


def render_markdown(report: dict) -> str:
    rows, s, cap = report["rows"], report["summary"], caption(report)
    out = [
        "# Genome benchmark: BPE for DNA",
        "",
        f"Run {report['date']} (`{report['command']}`, {report['duration_s'] / 60:.1f} min). {cap}",
        "",
    ]
    targets = target_rows(s)
    if targets:
        out += ["## Targets", "", "| target | measured | met |", "|---|---|---|"]
        out += [f"| {t} | {m} | {ok} |" for t, m, ok in targets] + [""]
    train_rows = [r for r in rows if r["case"] in ("ecoli", "whole", "scaling")]
    if train_rows:
        out += [
            "## Training",
            "",
            (
                "| input | trainer | wall (s) | CPU (s) | × bytepair's time | peak RSS (MB) | B/base (added) "
                "| bases/token |"
            ),
            "|---|---|--:|--:|--:|--:|--:|--:|",
        ]
        for r in train_rows:
            bpb = cell(r, "bytes_per_base", ".1f")
            if r.get("added_bytes_per_base") is not None and "error" not in r:
                bpb += f" ({r['added_bytes_per_base']:.1f})"
            note = f" error: {r['error']}" if "error" in r else ""
            out.append(
                f"| {r['input']} | {r['trainer']} | {fmt_s(r)} | {cell(r, 'cpu_s', '.1f')} | {fmt_vs(r)} "
                f"| {cell(r, 'peak_rss_mb', '.0f')} | {bpb} | {cell(r, 'bases_per_token', '.2f')} |{note}"
            )
        out += [""]
    enc = [r for r in rows if r["case"] == "encode"]
    if enc:
        out += [
            "## Encoding one long sequence",
            "",
            (
                "The E. coli tokenizer above (1 000-bp chunks) encoding one sequence (E. coli repeated and cut to "
                "length) with `encode_to_numpy`; checked to decode back exactly."
            ),
            "",
            "| bases | wall (s) | Mbp/s | bases/token |",
            "|--:|--:|--:|--:|",
        ]
        for r in enc:
            mbps = f"{r['mbp'] / r['seconds']:.1f}" if "seconds" in r else "—"
            out.append(f"| {r['mbp'] * 1e6:,.0f} | {fmt_s(r)} | {mbps} | {cell(r, 'bases_per_token', '.2f')} |")
        out += [""]
    out += [cap, "", "## Notes", "", NOTES]
    return "\n".join(out)


def target_rows(s: dict) -> list[tuple[str, str, str]]:
    def mark(ok: bool) -> str:
        return "✓" if ok else "✗"

    out = []
    if "ecoli_vs_hf" in s:
        out.append(
            (
                "E. coli, 1 000-bp chunks @ 4 096: ≥ 10× faster than HF tokenizers",
                f"{s['ecoli_vs_hf']:.1f}×",
                mark(s["ecoli_vs_hf"] >= 10),
            )
        )
    if "ecoli_vs_sentencepiece" in s:
        out.append(
            (
                "… ≥ 3× faster than SentencePiece",
                f"{s['ecoli_vs_sentencepiece']:.1f}×",
                mark(s["ecoli_vs_sentencepiece"] >= 3),
            )
        )
    if "whole_vs_chunked" in s:
        out.append(
            (
                "whole chromosome (unchunked) trains in linear time: about the chunked time",
                f"{s['whole_vs_chunked']:.2f}× the chunked time",
                mark(s["whole_vs_chunked"] <= 2),
            )
        )
    for name in ("chunked", "unchunked"):
        if f"scaling_{name}" in s:
            steps = ", ".join(
                f"{st['from']}→{st['to']} Mbp: {st['time_ratio']:.2f}× time for {st['size_ratio']:.1f}×"
                for st in s[f"scaling_{name}"]
            )
            out.append((f"linear scaling to 100 Mbp ({name})", steps, mark(s[f"scaling_{name}_linear"])))
    for name in ("chunked", "unchunked"):
        big = s.get(f"scaling_{name}_biggest")
        if big and big.get("bytes_per_base") is not None:
            out.append(
                (
                    f"peak RSS ≤ 10 bytes per base ({big['mbp']} Mbp, {name}, whole process)",
                    (
                        f"{big['bytes_per_base']:.1f} B/base (max over sizes "
                        f"{s[f'scaling_{name}_max_bytes_per_base']:.1f})"
                    ),
                    mark(big["bytes_per_base"] <= 10),
                )
            )
    if "encode_steps" in s:
        steps = ", ".join(
            f"{st['from']:g}→{st['to']:g} Mbp: {st['time_ratio']:.2f}× time for {st['size_ratio']:.1f}×"
            for st in s["encode_steps"]
        )
        out.append(("a whole chromosome encodes in linear time", steps, mark(s["encode_linear"])))
    return out


def render_chart(rows: list[dict], path: Path) -> None:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        print("matplotlib not installed: no chart", file=sys.stderr)
        return
    fig = Figure(figsize=(13, 4.6), dpi=110)
    a, b, c = fig.subplots(1, 3)
    eco = [r for r in rows if r["case"] in ("ecoli", "whole")]
    labels = list(dict.fromkeys(r["input"] for r in eco))
    keys = [k for k in TRAINERS if any(r["key"] == k for r in eco)]
    width = 0.8 / max(len(keys), 1)
    for i, key in enumerate(keys):
        for j, label in enumerate(labels):
            r = next((r for r in eco if r["input"] == label and r["key"] == key), None)
            if not r or ("seconds" not in r and "killed_after_s" not in r):
                continue
            v, killed = r.get("seconds", r.get("killed_after_s")), "killed_after_s" in r
            x = j + (i - (len(keys) - 1) / 2) * width
            a.bar(
                x,
                v,
                width,
                color=TRAINERS[key].color,
                hatch="//" if killed else None,
                label=TRAINERS[key].name
                if j == 0 or not any(rr["key"] == key for rr in eco if rr["input"] == labels[0])
                else None,
            )
            a.text(
                x,
                v,
                (">" if killed else "") + (f"{v:.2g}" if v < 10 else f"{v:.0f}"),
                ha="center",
                va="bottom",
                fontsize=7,
            )
    a.set_xticks(range(len(labels)), labels, fontsize=8)
    a.set_yscale("log")
    a.set_ylabel("training time (s, log)")
    a.set_title("E. coli @ 4 096 (hatched: killed)", fontsize=10)
    handles, names = a.get_legend_handles_labels()
    unique = dict(zip(names, handles))
    a.legend(unique.values(), unique.keys(), fontsize=7, frameon=False)
    for chunked, style in ((True, "o-"), (False, "s--")):
        pts = sorted(
            (r["mbp"], r["seconds"], r.get("bytes_per_base"))
            for r in rows
            if r["case"] == "scaling"
            and r["key"] == "bytepair-fasta"
            and "seconds" in r
            and bool(r["chunk"]) == chunked
        )
        if pts:
            name = "1 000-bp chunks" if chunked else "unchunked"
            b.plot([p[0] for p in pts], [p[1] for p in pts], style, color="tab:blue", label=name)
            ref = pts[-1]
            b.plot([0, ref[0]], [0, ref[1]], ":", color="gray", linewidth=1)
            c.plot([p[0] for p in pts], [p[2] for p in pts], style, color="tab:blue", label=name)
    for r in rows:
        if r["case"] == "scaling" and r["key"] in ("hf", "sentencepiece") and "seconds" in r:
            b.plot([r["mbp"]], [r["seconds"]], "^", color=TRAINERS[r["key"]].color, label=TRAINERS[r["key"]].name)
            if r.get("bytes_per_base"):
                c.plot(
                    [r["mbp"]],
                    [r["bytes_per_base"]],
                    "^",
                    color=TRAINERS[r["key"]].color,
                    label=TRAINERS[r["key"]].name,
                )
    b.set_xlabel("synthetic genome (Mbp)")
    b.set_ylabel("training time (s)")
    b.set_title("bytepair scaling (dotted: linear)", fontsize=10)
    b.legend(fontsize=7, frameon=False)
    c.axhline(10, color="tab:red", linewidth=1, linestyle=":")
    c.set_xlabel("synthetic genome (Mbp)")
    c.set_ylabel("peak RSS per base (bytes, whole process)")
    c.set_title("memory (red: 10 B/base target)", fontsize=10)
    c.legend(fontsize=7, frameon=False)
    for ax in (b, c):
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(path)


CASES = ["ecoli", "whole", "scaling", "encode"]
QUICK = ["ecoli"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="E. coli only")
    parser.add_argument("--case", action="append", choices=CASES, help="run this case (repeatable)")
    parser.add_argument("--only", action="append", help=f"only these trainers ({', '.join(TRAINERS)})")
    parser.add_argument(
        "--out", type=Path, help="output folder (default: bench/results for a full run, bench/.cache/results otherwise)"
    )
    parser.add_argument(
        "--timeout", type=float, default=600, help="seconds per run (default 600; whole chromosome: 120)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    if not ECOLI.exists():
        parser.error(f"{ECOLI} not found (set BYTEPAIR_SHARED_DATA to the shared data folder)")
    only = [k.strip() for arg in args.only or [] for k in arg.split(",") if k.strip()] or None
    if only and any(k not in TRAINERS for k in only):
        parser.error(f"unknown trainer in {only}: use {', '.join(TRAINERS)}")
    cases = args.case or (QUICK if args.quick else CASES)
    partial = bool(args.quick or args.case or args.only)
    out_dir = args.out or (CACHE / "results" if partial else RESULTS)
    started = time.time()
    runs = plan(cases, only, args.timeout)
    for run in runs:
        execute(run, CACHE / "logs")
    rows = [r for run in runs for r in run.rows]
    report = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": " ".join(["bench/genome.py", *sys.argv[1:]]),
        "duration_s": round(time.time() - started, 1),
        "machine": machine_info(),
        "versions": versions(["tokenizers", "sentencepiece"]),
        "rows": rows,
    }
    report["summary"] = summary(rows)
    write_results(out_dir, "genome", report, render_markdown, lambda path: render_chart(rows, path))


if __name__ == "__main__":
    main()
