"""Ctrl-C during a long training reaches Python promptly as KeyboardInterrupt (the core checks for signals
while it runs without the GIL), in the counting phase and in the merging phase."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time

import pytest

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
    proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True)
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
