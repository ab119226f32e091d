"""The release extension built with profile-guided optimisation (PGO): what `make build` runs.

    .venv/bin/python tools/pgo.py build      # build and install the extension into .venv (PGO when it can)
    .venv/bin/python tools/pgo.py workload   # the run an instrumented build is profiled on (build runs it)

PGO compiles the extension twice: once instrumented to count its branches and calls, which is then run on a
workload, and once more with those counts, so that the compiler lays out the hot loops (the block splitter's
loop over pieces, the whole-token probe, the merges) for the way they actually branch. Measured on an AMD EPYC
Zen 4 VM (`docs/encoding-profile.md`, "Profile-guided builds"): ~4 KB documents one call each, time cold / steady,
English 6-10 % / 1-3 % less, Python source 4 % / 6 %, multilingual text 8 % / 9 %; base64 3-7 % more, random
letters and digits the same.

It needs `llvm-profdata` of the LLVM that this `rustc` uses: `rustup component add llvm-tools`. Without it (or
with `PGO=0` in the environment) the extension is built the usual way, and a note says so. `bytepair`'s
`_core.build_profile()` tells which build is installed; the benchmarks report it.

The workload is text no benchmark reads: this repository's own files (its docs in English, its Python and Rust
sources), random letters, digits and base64 and words of several scripts made here from a fixed seed. It is
encoded once, a third one document at a time and a third each in batches of one and two threads, with the OpenAI
encodings when `../shared/data` (or `$BYTEPAIR_SHARED_DATA`) has their files, else with a vocabulary trained on
that text here; a short training run profiles the trainer.
"""

from __future__ import annotations

import base64
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (the build imports no bytepair: it is not built yet)
    from bytepair import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
# What `build_profile()` reports for a PGO build: the workload's name, kept short (it is compiled in).
PROFILE_NAME = "pgo:tools/pgo.py workload"
# The repository's files the workload encodes (globs from the root).
OWN_TEXT = ["*.md", "docs/*.md", "python/**/*.py", "tests/*.py", "bench/*.py", "src/**/*.rs"]
DOCUMENT_CHARS = 4000
# Characters of each made-up text: enough to profile their paths, few beside the ~2.7 MB of real text, so that the
# counts of the loops they share with it (the block loop's probes) stay those of real text. With 150 000 the build
# gained about half as much on English documents, and base64 was no faster.
MADE_UP_CHARS = 40_000
# Letters of Cyrillic, Greek, Arabic, Devanagari, CJK and Hiragana (code point ranges) for the made-up words.
SCRIPTS = [(0x0430, 0x044F), (0x03B1, 0x03C9), (0x0627, 0x064A), (0x0905, 0x0939), (0x4E00, 0x4FFF), (0x3041, 0x3096)]


def rustc_tool(name: str) -> Path | None:
    """The LLVM tool `name` shipped for this rustc (rustup's llvm-tools component), if installed.

    >>> rustc_tool("no-such-tool") is None
    True
    """
    try:
        sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True)
        version = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    host = next((line.split(":", 1)[1].strip() for line in version.stdout.splitlines() if line.startswith("host:")), "")
    tool = Path(sysroot.stdout.strip()) / "lib" / "rustlib" / host / "bin" / name
    return tool if host and tool.is_file() and os.access(tool, os.X_OK) else None


def maturin_develop(extra_env: dict[str, str]) -> None:
    """`maturin develop --release` into .venv, with `extra_env` (RUSTFLAGS given there are added to the caller's)."""
    env = dict(os.environ)
    env["VIRTUAL_ENV"] = str(VENV)
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    for key, value in extra_env.items():
        env[key] = f"{env[key]} {value}" if key == "RUSTFLAGS" and env.get(key) else value
    subprocess.run([str(VENV / "bin" / "maturin"), "develop", "--release", "--quiet"], cwd=ROOT, env=env, check=True)


def build() -> None:
    """Builds the extension into .venv: instrumented, profiled on `workload`, then rebuilt with the profile; or the
    usual way when `llvm-profdata` is missing or `PGO=0`."""
    wanted = os.environ.get("PGO") != "0"
    profdata = rustc_tool("llvm-profdata") if wanted else None
    if profdata is None:
        if wanted:
            print(
                "note: building without profile-guided optimisation (encoding a few per cent slower): llvm-profdata "
                "for this rustc is missing; `rustup component add llvm-tools` installs it (PGO=0 silences this note)",
                file=sys.stderr,
            )
        maturin_develop({})
        return
    work = ROOT / "target" / "pgo"
    work.mkdir(parents=True, exist_ok=True)
    merged = work / "merged.profdata"
    try:
        with tempfile.TemporaryDirectory(dir=work) as raw:
            # Its own target folder, so that neither build's flags make cargo rebuild the other's dependencies.
            gen = {"RUSTFLAGS": f"-Cprofile-generate={raw}", "CARGO_TARGET_DIR": str(ROOT / "target" / "pgo-gen")}
            maturin_develop(gen)
            subprocess.run([sys.executable, str(Path(__file__).resolve()), "workload"], cwd=ROOT, check=True)
            subprocess.run([str(profdata), "merge", "-o", str(merged), raw], check=True)
    except subprocess.CalledProcessError as error:
        # Never leave the instrumented build installed: the usual one instead, and the reason said loudly (the
        # benchmarks report `build_profile()`, so a run on such a build says so too).
        print(f"warning: the PGO build failed ({error}); building without it", file=sys.stderr)
        maturin_develop({})
        return
    maturin_develop({"RUSTFLAGS": f"-Cprofile-use={merged}", "BYTEPAIR_BUILD_PROFILE": PROFILE_NAME})


def own_text() -> str:
    """This repository's docs and sources, one after another (no benchmark reads them)."""
    paths = [path for pattern in OWN_TEXT for path in sorted(ROOT.glob(pattern)) if path.is_file()]
    return "\n".join(path.read_text(encoding="utf-8", errors="replace") for path in paths)


def made_up_text(rng: random.Random) -> list[str]:
    """Random letters, digits, base64, one letter repeated, and words of several scripts: the paths ordinary
    text rarely takes (long merged pieces, the backtracker, non-ASCII classes).

    >>> [len(t) > 0 for t in made_up_text(random.Random(1))]
    [True, True, True, True, True]
    """
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(MADE_UP_CHARS))
    digits = "".join(rng.choice("0123456789") for _ in range(MADE_UP_CHARS))
    b64 = base64.b64encode(rng.randbytes(MADE_UP_CHARS * 3 // 4)).decode("ascii")
    words = []
    for _ in range(MADE_UP_CHARS // 5):
        low, high = rng.choice(SCRIPTS)
        words.append("".join(chr(rng.randint(low, high)) for _ in range(rng.randint(1, 8))))
    return [letters, digits, b64, "a" * MADE_UP_CHARS, " ".join(words) + ". ¿Qué? «Ça» naïve café — ✓"]


def exercise(tok: Tokenizer, text: str, extra: list[str]) -> None:
    """Encodes a third of `text` as documents one call each, a third as a batch on one thread and a third on two
    (each text once, as a corpus is read: a tokenizer meets most of its pieces before and some new), then each of
    `extra` in one call; decodes some documents.

    >>> import bytepair
    >>> exercise(bytepair.train(["low lower lowest"] * 5, vocab_size=259), "low lower " * 3000, ["aaaa"])
    """
    docs = [text[i : i + DOCUMENT_CHARS] for i in range(0, len(text), DOCUMENT_CHARS)]
    third = len(docs) // 3
    for doc in docs[:third]:
        tok.encode_to_numpy(doc)
    for doc in docs[:third:8]:
        tok.decode(tok.encode(doc))
    tok.encode_batch_to_numpy(docs[third : 2 * third], threads=1)
    tok.encode_batch_to_numpy(docs[2 * third :], threads=2)
    for other in extra:
        tok.encode_to_numpy(other)


def workload() -> None:
    """The run an instrumented build is profiled on (see the module's docstring)."""
    import bytepair

    # (Special tokens' text, such as the docs quote, would be refused by encode's defaults.)
    text = re.sub(r"<\|[a-z_]+\|>", "", own_text())
    extra = made_up_text(random.Random(20261207))
    data = Path(os.environ.get("BYTEPAIR_SHARED_DATA", ROOT.parent / "shared" / "data"))
    names = [n for n in ("r50k_base", "cl100k_base", "o200k_base") if (data / "tiktoken" / f"{n}.tiktoken").is_file()]
    for name in names:
        exercise(bytepair.get_encoding(name, data), text, extra)
    if names:  # the trainer's profile only
        bytepair.train([text[:300_000]], vocab_size=1024, pattern="cl100k")
    else:
        exercise(bytepair.train([text[: len(text) // 2]], vocab_size=8192, pattern="cl100k"), text, extra)


def main(argv: list[str]) -> int:
    if argv == ["build"]:
        build()
    elif argv == ["workload"]:
        workload()
    else:
        print("\n".join(__doc__.strip().splitlines()[2:4]), file=sys.stderr)  # the two usage lines
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
