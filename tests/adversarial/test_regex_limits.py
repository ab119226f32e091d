"""Untrusted regexes on untrusted text: a pattern whose work grows faster than the text stops with a ValueError that
names it (issue 23, item 5), a search that backtracks catastrophically says so with the limit (item 6, where training
said "the corpus is empty"), Ctrl-C stops a long pre-tokenization within a second, and either engine splits as
fancy-regex always has."""

from __future__ import annotations

import collections
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference
from bytepair.training import count_words
from conftest import examples

pytestmark = pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")

# The pattern: each search tries \w+ to the end of the run, fails the look-ahead, and backtracks all the
# way (quadratic on fancy-regex's VM: 40 000 "a" took 17-90 s). Its look-ahead-free cousin is as quadratic on a
# DFA: from every position it scans to the end of the run for the space.
BACKTRACKING = r"\w+(?=\s)|\w"
SCANNING = r"\w+ |\w"

# Far longer than the 40 000: quadratic, these would take hours; bounded, they stop at once.
LONG_RUN = "a" * 400_000


def tokenizer(pattern: str) -> bytepair.Tokenizer:
    return bytepair.train(["hello world, hello there"] * 3, 262, pattern=pattern)


@pytest.mark.parametrize(
    "pattern,steps", [(BACKTRACKING, "backtracking steps"), (SCANNING, "steps \\(bytes scanned by its automaton\\)")]
)
def test_a_pattern_whose_work_grows_faster_than_the_text_stops_naming_it(pattern, steps):
    tok = tokenizer(pattern)
    started = time.monotonic()
    for call in (tok.encode, tok.count, lambda t: tok.encode_batch([t, t])):
        with pytest.raises(ValueError, match=rf"the pattern {pattern!r} took more than \d+ {steps} on a text of"):
            call(LONG_RUN)
    with pytest.raises(ValueError, match=r"Make each alternative fail early"):
        bytepair.train([LONG_RUN], 262, pattern=pattern)
    # A hang guard, not a speed target: unbounded, the calls above take hours.
    assert time.monotonic() - started < 120
    # The same pattern on text with spaces is linear and within its budget.
    words = "word " * 100_000
    assert tok.decode(tok.encode(words)) == words


def test_a_catastrophic_search_in_training_is_reported_as_such():
    """Item 6: fancy-regex's backtracking limit was reported as "the corpus is empty"."""
    with pytest.raises(ValueError) as error:
        bytepair.train(["a" * 30 + "c"], 260, pattern=r"(a|a)+(?=b)|.")
    message = str(error.value)
    assert "corpus is empty" not in message
    assert message.startswith("the pattern '(a|a)+(?=b)|.' needed more than 1000000 backtracking steps")
    assert "at character 0" in message and "possessive" in message


def test_a_huge_pattern_is_named_briefly():
    pattern = "(" * 10_000 + "a" + ")" * 10_000 + "+|" + "x" * 100
    with pytest.raises(ValueError, match=r"not a valid regex") as error:
        tokenizer(pattern)
    assert len(str(error.value)) < 1000 and "(20103 characters)" in str(error.value)


# Both engines against Python's `regex` module (the reference's): patterns without look-arounds run on the lazy
# DFA, the others on fancy-regex's VM; the pieces must be what they always were.
PATTERNS = [
    r"\S+|\s+",
    r"[a-z]+|\d{1,3}|[^a-z\d]",
    r" ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+",
    r"\b\w+\b|.",
    r"(?i:ab|a)b*|.",
    r"\s+(?!\S)|\s+|\S+",
    r"(?<=a)b+|[^b]|b",
    r"a++|[^a]+",
    r"(?>ab|a)c?|.",
]


@settings(max_examples=examples(50), deadline=None)
@given(text=st.lists(st.sampled_from([*"aAbc12 \n\t-", "é", "中", "ab", "  "]), min_size=1, max_size=40).map("".join))
def test_both_engines_split_as_the_reference(text):
    for pattern in PATTERNS:
        settings_ = bytepair.TrainSettings(vocab_size=260, pattern=pattern, unmatched="drop")
        words = collections.Counter(reference.pre_tokenize(text, pattern, unmatched="drop"))
        if not words:
            with pytest.raises(ValueError, match="matched none of its text"):
                count_words([text], settings_)
            continue
        assert dict(count_words([text], settings_).items()) == dict(words), (pattern, text)


# Ctrl-C: a custom regex on 60 MB takes several seconds (about 10 MB/s on the VM); it must stop within a second or
# two, in encoding and in training's counting (which runs on a pool while Python's main thread waits).
CTRL_C = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
SLOW = r"""
import sys, bytepair
tok = bytepair.train(["hello world"] * 3, 260, pattern=r"[a-z]+(?=\s)|\s|.")
text = "word " * 12_000_000
print("ready", flush=True)
try:
    if sys.argv[1] == "encode":
        tok.count(text)
    else:
        bytepair.train([text], 300, pattern=r"[a-z]+(?=\s)|\s|.", threads=2)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("what", ["encode", "train"])
def test_ctrl_c_stops_a_long_pre_tokenization(what):
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C + SLOW, what], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        elapsed = time.monotonic() - sent
    finally:
        proc.kill()
    assert (proc.returncode, out.strip()) == (3, "interrupted")
    assert elapsed < 2.0, f"took {elapsed:.1f} s to stop"
