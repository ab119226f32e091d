"""Files bytepair writes appear whole or not at all, never through a link someone planted, and sets of files (the
folder `bytepair train -o` writes) change together: issue 23, items 2 and 3."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import bytepair
from bytepair import cli, writing
from bytepair.formats import folder

TEXTS = ["low lower lowest newer newest wider widest"] * 5


@pytest.fixture(scope="module")
def toks() -> tuple[bytepair.Tokenizer, bytepair.Tokenizer]:
    return bytepair.train(TEXTS, 262), bytepair.train(TEXTS, 266, special_tokens=["<|endoftext|>"])


def plant_links(target: Path, victim: Path) -> list[Path]:
    """Links at every temporary name a save of `target` used to write through (`NAME.tmp`, `.NAME.PID.tmp`)."""
    links = [target.with_name(target.name + ".tmp"), target.with_name(f".{target.name}.{os.getpid()}.tmp")]
    for link in links:
        link.symlink_to(victim)
    return links


@pytest.mark.parametrize("method", ["save", "save_hf", "save_tiktoken"])
def test_saves_never_write_through_a_planted_link(tmp_path, toks, method):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "tok.out"
    plant_links(target, victim)
    getattr(toks[0], method)(target)
    assert victim.read_text() == "precious"
    assert not target.is_symlink() and target.stat().st_size > 100


def test_the_command_line_never_writes_through_a_planted_link(tmp_path, toks):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXTS[0])
    toks[0].save(tmp_path / "tok.json")
    out = tmp_path / "ids.txt"
    plant_links(out, victim)
    assert cli.main(["encode", str(corpus), "-t", str(tmp_path / "tok.json"), "-o", str(out)]) == 0
    assert victim.read_text() == "precious"
    assert out.read_text().split() == [str(i) for i in toks[0].encode(TEXTS[0])]


def test_temporary_names_are_new_each_time(tmp_path, toks, monkeypatch):
    used: list[str] = []
    replace = os.replace

    def recording(src: str, dst: str) -> None:
        used.append(os.fspath(src))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", recording)
    for _ in range(3):
        toks[0].save(tmp_path / "tok.json")
    assert len(set(used)) == 3
    assert all(Path(u).parent == tmp_path and Path(u).name.startswith(".tok.json.") for u in used)


def test_many_saves_of_one_path_at_once_each_land_whole(tmp_path, toks):
    target = tmp_path / "tok.json"
    errors: list[BaseException] = []

    def save(tok: bytepair.Tokenizer) -> None:
        try:
            for _ in range(10):
                tok.save(target)
        except BaseException as e:  # collected and asserted on below
            errors.append(e)

    threads = [threading.Thread(target=save, args=(toks[i % 2],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert bytepair.Tokenizer.load(target) in toks
    assert [p.name for p in tmp_path.iterdir()] == ["tok.json"]  # no temporary file left


def test_a_failed_write_leaves_the_file_as_it_was(tmp_path, toks, monkeypatch):
    target = tmp_path / "tok.json"
    toks[0].save(target)
    before = target.read_bytes()

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left on device") as caught:
        toks[1].save(target)
    assert caught.value.filename == str(target)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["tok.json"]


def test_written_files_get_the_permissions_the_umask_gives(tmp_path, toks):
    target = tmp_path / "tok.json"
    toks[0].save(target)
    mask = os.umask(0o022)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


# -- sets of files --------------------------------------------------------------------------------------------


def snapshot(out: Path) -> tuple[bytes | None, ...]:
    """What a reader of the folder sees: each of the three files' bytes, or None when it is absent."""
    return tuple(
        (out / name).read_bytes() if (out / name).exists() else None
        for name in (folder.OUR_FILE, folder.HF_FILE, folder.TIKTOKEN_FILE)
    )


def test_a_set_interrupted_at_any_step_shows_the_old_or_the_new_files(tmp_path, toks, monkeypatch):
    """An error at the k-th rename or link of a save (a kill there) leaves the earlier set or the new one."""
    a, b = toks
    sets = []
    for tok in toks:
        (tmp_path / "clean").mkdir()
        folder.save(tok, tmp_path / "clean")
        sets.append(snapshot(tmp_path / "clean"))
        os.system(f"rm -rf {tmp_path / 'clean'}")
    assert sets[0] != sets[1]
    calls = {"n": 0, "fail_at": 0}
    real_replace, real_symlink = os.replace, os.symlink

    def step(real, *args):
        calls["n"] += 1
        if calls["n"] == calls["fail_at"]:
            raise KeyboardInterrupt("killed here")
        return real(*args)

    monkeypatch.setattr(os, "replace", lambda *args: step(real_replace, *args))
    monkeypatch.setattr(os, "symlink", lambda *args: step(real_symlink, *args))
    for start in ("plain files", "a set"):
        k = 0
        while True:
            k += 1
            out = tmp_path / f"out-{start.replace(' ', '-')}-{k}"
            out.mkdir()
            (out / "notes.md").write_text("the user's own file")
            calls["fail_at"] = 0
            if start == "plain files":  # a folder an earlier bytepair wrote file by file
                for name, data in zip((folder.OUR_FILE, folder.HF_FILE, folder.TIKTOKEN_FILE), sets[0]):
                    (out / name).write_bytes(data)
            else:
                folder.save(a, out)
            assert snapshot(out) == sets[0]
            calls["n"], calls["fail_at"] = 0, k
            try:
                folder.save(b, out)
                finished = True
            except KeyboardInterrupt:
                finished = False
            assert snapshot(out) in sets, (start, k)
            assert (out / "notes.md").read_text() == "the user's own file"
            assert bytepair.load_tokenizer(out) in toks
            if finished:
                assert snapshot(out) == sets[1]
                break
        assert k > 3  # every step of a save was interrupted once


CHILD = """
import sys, bytepair
from bytepair.formats import folder
texts = ["low lower lowest newer newest wider widest"] * 5
toks = [bytepair.train(texts, 262), bytepair.train(texts, 266, special_tokens=["<|endoftext|>"])]
print("ready", flush=True)
i = 0
while True:
    folder.save(toks[i % 2], sys.argv[1])
    i += 1
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_set_stays_whole_when_the_writer_is_killed(tmp_path, toks):
    sets = []
    for k, tok in enumerate(toks):
        folder.save(tok, tmp_path / f"ref{k}")
        sets.append(snapshot(tmp_path / f"ref{k}"))
    out = tmp_path / "out"
    rng = random.Random(23)
    for _ in range(12):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(out)], stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        threading.Event().wait(rng.uniform(0.01, 0.3))
        child.send_signal(signal.SIGKILL)
        child.wait()
        if (out / folder.OUR_FILE).exists():
            assert snapshot(out) in sets
            assert bytepair.load_tokenizer(out) in toks
    versions = [p for p in (out / writing.SETS).iterdir() if p.is_dir() and not p.is_symlink()]
    assert len(versions) <= 3  # the current, the one before, and at most one a kill left half-written
