"""Ctrl-C during a long training reaches Python promptly as KeyboardInterrupt (the core checks for signals
while it runs without the GIL)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

SCRIPT = r"""
import random, sys
import bytepair
rng = random.Random(0)
letters = "abcdefghijklmnopqrstuvwxyz"
# 150k distinct words, 3M in all: counting takes about 2.5 s here, merging about 3 s more.
words = ["".join(rng.choices(letters, k=rng.randint(3, 12))) for _ in range(150_000)]
corpus = [" ".join(rng.choices(words, k=1000)) for _ in range(3000)]
print("ready", flush=True)
try:
    bytepair.train(corpus, 400_000, progress=False)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("wait", [0.5, 3.5], ids=["while counting", "while merging"])
def test_ctrl_c_interrupts_training_promptly(wait):
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(wait)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=10)
    finally:
        proc.kill()
    elapsed = time.monotonic() - sent
    assert proc.returncode == 3, out
    assert "interrupted" in out
    assert elapsed < 2.0, f"took {elapsed:.1f} s to stop"
