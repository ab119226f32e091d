"""Ctrl-C during a long training reaches Python promptly as KeyboardInterrupt (the core checks for signals
while it runs without the GIL), in the counting phase and in the merging phase; and during a long encode_batch."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time

import pytest

# First in every child: Python raises KeyboardInterrupt on SIGINT only if SIGINT was not ignored when it started,
# and a shell starts background jobs with it ignored (a test run launched with `&` failed every test here).
CTRL_C = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"

# The 60 MB file forty times over: long enough to be interrupted however fast counting gets.
COUNTING = r"""
import sys
import bytepair
print("ready", flush=True)
try:
    bytepair.train([sys.argv[1]] * 40, 50_000, progress=False)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""

# 200k distinct 16-letter words: about 5 s of merging on this machine before the pairs run out (the signal
# comes after 1 s, when counting them — a fraction of a second — is over).
MERGING = r"""
import random, sys
import bytepair
rng = random.Random(0)
counts = {"".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=16)): rng.randint(1, 50) for _ in range(200_000)}
print("ready", flush=True)
try:
    bytepair.train_from_counts(counts, 3_000_000, progress=False)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


def interrupt(script: str, *args: str, wait: float) -> tuple[int, str, float]:
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C + script, *args], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(wait)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
        return proc.returncode, out, time.monotonic() - sent
    finally:
        proc.kill()


@pytest.fixture(scope="module")
def big_text_file(tmp_path_factory):
    """About 60 MB of text: several seconds of counting."""
    rng = random.Random(1)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 10))) for _ in range(50_000)]
    block = "\n".join(" ".join(rng.choices(words, k=12)) for _ in range(20_000)).encode() + b"\n"
    path = tmp_path_factory.mktemp("big") / "big.txt"
    with open(path, "wb") as f:
        for _ in range(60_000_000 // len(block) + 1):
            f.write(block)
    return path


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_counting(big_text_file):
    code, out, elapsed = interrupt(COUNTING, str(big_text_file), wait=0.5)
    assert (code, out.strip()) == (3, "interrupted")
    assert elapsed < 2.0, f"took {elapsed:.1f} s to stop"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_merging():
    code, out, elapsed = interrupt(MERGING, wait=1.0)
    assert (code, out.strip()) == (3, "interrupted")
    assert elapsed < 2.0, f"took {elapsed:.1f} s to stop"


# A batch of ~200 MB (distinct 25 KB texts); the script prints how long one takes, then encodes it again.
ENCODING = r"""
import random, sys, time
import bytepair
rng = random.Random(2)
words = ["".join(rng.choices("abcdefghij", k=rng.randint(2, 8))) for _ in range(3000)]
block = " ".join(rng.choices(words, k=4000))
tok = bytepair.train([block], 2000, progress=False)
texts = [f"{i} {block}" for i in range(8000)]
took = []
for _ in range(2):  # the first call is the slower: the encoder's tables fill
    start = time.perf_counter()
    tok.encode_batch(texts, threads=int(sys.argv[1]))
    took.append(time.perf_counter() - start)
print("ready", min(took), flush=True)
try:
    for _ in range(3):
        tok.encode_batch(texts, threads=int(sys.argv[1]))
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_during_encode_batch(threads):
    """The signal comes a fifth into a batch; the batch stops within a chunk or two (~0.1 s here, most of it the
    process's exit), not at its end: Python alone raises KeyboardInterrupt only once the call has returned (a
    build without the check took 0.3-0.4 s of a 0.55-0.7 s batch)."""
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C + ENCODING, str(threads)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        word, batch_s = proc.stdout.readline().split()
        assert word == "ready"
        time.sleep(float(batch_s) / 5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        elapsed = time.monotonic() - sent
    finally:
        proc.kill()
    assert (proc.returncode, out.strip()) == (3, "interrupted")
    assert elapsed < float(batch_s) / 3, f"took {elapsed:.2f} s to stop a {float(batch_s):.2f} s batch"
