"""Random damage and random arguments never crash the core: every outcome is a result or a clear ValueError
(never a RuntimeError from a caught Rust panic, never PanicException)."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from conftest import examples

TOK = bytepair.train(["Hello world! Hello there, 日本 🎉\n"] * 5, 280, special_tokens=["<|endoftext|>"])
SAVED = TOK._core.to_native()


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_damaged_files_load_or_raise_value_error(data):
    text = SAVED
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text)))
        j = data.draw(st.integers(i, min(len(text), i + 20)))
        text = text[:i] + data.draw(st.text(max_size=5)) + text[j:]
    try:
        tok = bytepair._core.CoreTokenizer.from_native(text, "damaged.json")
    except ValueError:
        return
    bytepair.Tokenizer(tok).encode_ordinary("Hello world")  # a file that loads must work


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet="()[]{}?*+|\\^$.-ab\\s\\p{L}0-9", max_size=15))
def test_any_pattern_trains_or_raises_value_error(pattern):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tok = bytepair.train(["abc a-b 12 ab ba"], 270, pattern=pattern)
        except ValueError:
            return
    tok.encode("ab a")


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(-(2**40), 2**40), max_size=10))
def test_any_ids_decode_or_raise_value_error(ids):
    try:
        TOK.decode(ids)
    except ValueError as e:
        assert "is not in the vocabulary" in str(e)


@pytest.mark.parametrize("text", ["^" * 100_000, "a" * 200_000, " " * 100_000, "\x00" * 10_000, "🎉" * 20_000])
def test_long_runs_encode(text):
    assert TOK.decode(TOK.encode(text)) == text


@pytest.mark.parametrize("pattern", [r"\^+|(a|a)*b|\w+|\s+|.", r"(?=(a+)+$)a|\w+|.", r"(a+)+$|[^a]+|a"])
@pytest.mark.parametrize("text", ["^" * 1_000_000, "a" * 100_000 + "!"])
def test_custom_patterns_never_hang_or_overflow(pattern, text):
    """Custom regexes run on a lazy DFA, or on fancy-regex's backtracking VM when they need it, both within a
    budget of work per byte, so a pathological input gives a ValueError, never a hang or a stack overflow."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(["abc a-b 12 ab ba ^^ aaa"], 270, pattern=pattern)
    try:
        ids = tok.encode(text)
    except ValueError as e:
        assert "backtracking steps" in str(e) or "bytes scanned by its automaton" in str(e)
        return
    assert tok.decode(ids) == text


def test_encode_batch_leaves_the_cycle_collector_as_it_found_it():
    import gc

    texts = [f"Hello {i} world" for i in range(300)]
    expected = [TOK.encode(t) for t in texts]
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            assert TOK.encode_batch(texts, threads=2) == expected
            assert gc.isenabled() is enabled
            with pytest.raises(ValueError, match=re.escape("<|endoftext|>")):
                TOK.encode_batch(texts + ["<|endoftext|>"], threads=2)
            assert gc.isenabled() is enabled
        # The lists stay tracked: a cycle through one is still collected.
        ids = TOK.encode_batch(texts)[0]
        assert gc.is_tracked(ids)
    finally:
        (gc.enable if was else gc.disable)()


def test_encode_batch_on_threads_runs_the_cycle_collector_when_it_would_run_itself():
    """The collector is paused while the lists are built; on 2 threads the batch runs it between chunks when it
    is due (so walking the new lists overlaps the other thread's encoding), as often as it would have run; never
    when the caller turned it off."""
    import gc

    texts = [f"Hello {i} world" for i in range(6000)]
    expected = [TOK.encode(t) for t in texts]
    collections = []

    def seen(phase, info):
        if phase == "start":
            collections.append(info["generation"])

    was = gc.isenabled()
    threshold = gc.get_threshold()
    gc.callbacks.append(seen)
    try:
        gc.set_threshold(700, 10, 10)
        gc.enable()
        gc.collect()
        collections.clear()
        ids = TOK.encode_batch(texts, threads=2)
        during = list(collections)
        assert ids == expected
        # 6000 new lists: the collector, on, would have run about 6000 / 700 times (young generation, and the
        # middle one every tenth time); paused and left alone, once after the batch.
        assert len(during) >= 5 and set(during) <= {0, 1}, during
        gc.disable()
        collections.clear()
        assert TOK.encode_batch(texts, threads=2) == expected
        assert collections == []
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*threshold)
        (gc.enable if was else gc.disable)()


def test_encode_batch_takes_str_subclasses_without_copying_them_wrongly():
    class Text(str):
        pass

    texts = [Text("Hello world"), "日本 🎉", Text("")] * 50
    assert TOK.encode_batch(texts, threads=2) == [TOK.encode(str(t)) for t in texts]
    assert [a.tolist() for a in TOK.encode_to_numpy(texts, threads=2)] == [TOK.encode(str(t)) for t in texts]


def test_str_subclasses_are_encoded_by_their_characters_not_their_len():
    # Whether a text's numpy output is copied depends on its length, read where CPython stores the characters:
    # a subclass's own __len__ (which may lie or raise) is never called.
    class Lying(str):
        def __len__(self) -> int:
            raise RuntimeError("__len__ called")

    for text in ("Hello world", "naïve 🎉 " * 30_000, "word " * 40_000):
        expected = TOK.encode(text)
        assert TOK.encode(Lying(text)) == expected
        assert TOK.encode_to_numpy(Lying(text)).tolist() == expected
        assert TOK.encode_to_numpy(Lying(text), disallowed_special=()).tolist() == expected


def _threads_alive() -> int:
    import os

    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_more_threads_than_cores_get_the_cores():
    """A huge `threads` is not a huge pool (10 000 threads took 87 s and 1.6 GB to count a 23-byte file): it gets
    at most the machine's cores, and trying many thread counts keeps only a few pools."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    before = _threads_alive()
    texts = ["Hello world! Hello there"] * 50
    for threads in (100_000, *range(1, 12)):
        assert TOK.encode_batch(texts, threads=threads) == [TOK.encode(t) for t in texts]
        assert [a.tolist() for a in TOK.encode_to_numpy(texts, threads=threads)] == [TOK.encode(t) for t in texts]
    tok = bytepair.train(texts, 270, threads=100_000)
    assert tok.encode_batch(texts[:2], threads=3) == [tok.encode(t) for t in texts[:2]]
    # Encoding pools kept: at most 4 of at most `cores` threads each; counting's pool ends with its counts.
    assert _threads_alive() - before <= 4 * cores, (before, _threads_alive(), cores)


def _work_in_a_child(args):
    tok, texts = args
    return tok.encode_batch(texts, threads=2), [tok.encode(t) for t in texts], bytepair.train(texts, 262).merges


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_can_use_bytepair():
    """multiprocessing's fork start method (Linux's default): the child has none of the parent's threads. A
    tokenizer unpickled there, a batch on threads and a training must not wait for them (they hung forever)."""
    import multiprocessing

    texts = ["Hello world! Hello there, 日本 🎉", "the cat sat on the mat"] * 50
    want = TOK.encode_batch(texts, threads=2)  # the parent's pools exist before the fork
    merges = bytepair.train(texts, 262).merges
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map_async(_work_in_a_child, [(TOK, texts)] * 2).get(timeout=60)
    for batch, one_by_one, child_merges in results:
        assert batch == want and one_by_one == want and child_merges == merges


COUNT_WHILE_READ = r"""
import sys, threading
from bytepair import _core
counts = _core.WordCounts(None, [], False, 1)
worker = threading.Thread(target=counts.add_file, args=(sys.argv[1], "strict"))
worker.start()
reads = 0
while worker.is_alive() or reads == 0:
    counts.bytes_seen, len(counts), counts.threads
    reads += 1
worker.join()
print(counts.bytes_seen)
"""


def test_reading_counts_while_another_thread_counts_a_file_does_not_hang(tmp_path):
    """The counting thread holds the counter with the GIL released and takes the GIL back to check for Ctrl-C;
    a reader that waited for the counter with the GIL held hung both, for good (the child is killed after 60 s)."""
    path = tmp_path / "text.txt"
    # Distinct words, so that counting takes a while (it checks for Ctrl-C every 50 ms; ~1 s here).
    path.write_text("".join(f"line {i} of words {i * 7} to count\n" for i in range(600_000)), encoding="utf-8")
    child = subprocess.run(
        [sys.executable, "-c", COUNT_WHILE_READ, str(path)], capture_output=True, text=True, timeout=60
    )
    assert child.returncode == 0, child.stderr
    assert int(child.stdout) == path.stat().st_size
