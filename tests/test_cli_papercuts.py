"""The command line's papercuts: misspelt commands, options and choices get the nearest suggested; progress bars
fit the terminal, leave no stale line behind, and count a .gz input in one unit; "1 document", not
"1 document(s)". (Short encoding names and unknown tokenizer names: test_loading.py; compressed inputs:
test_compressed_inputs.py.)"""

from __future__ import annotations

import fcntl
import gzip
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from bytepair import cli
from bytepair.progress import Progress

SCRIPT = Path(sys.executable).parent / "bytepair"
TEXT = "".join(f"line {i}: the quick brown fox jumps over the lazy dog {i % 13}\n" for i in range(60_000))


def run(*argv: str) -> tuple[int, str]:
    """Exit status and stderr of `bytepair ARGV` (argparse's errors exit through SystemExit)."""
    saved = sys.stderr
    sys.stderr = io.StringIO()
    try:
        try:
            code = cli.main(list(argv))
        except SystemExit as e:
            code = int(e.code or 0)
        return code, sys.stderr.getvalue()
    finally:
        sys.stderr = saved


@pytest.mark.parametrize(
    "argv, message",
    [
        (["trian", "x.txt"], "invalid choice: 'trian' (did you mean 'train'?); the choices are 'train'"),
        (["encdoe"], "invalid choice: 'encdoe' (did you mean 'encode'?)"),
        (
            ["train", "x.txt", "--vocab-szie", "300", "-o", "t"],
            "unrecognized option --vocab-szie (did you mean --vocab-size?)",
        ),
        (["encode", "-t", "gpt2", "--fromat=bin"], "unrecognized option --fromat (did you mean --format?)"),
        (["train", "x.txt", "--vocab-size", "300", "-o", "t", "--mode", "bite"], "'bite' (did you mean 'byte'?)"),
        (["--verbsoe", "count", "-t", "gpt2"], "unrecognized option --verbsoe (did you mean --verbose?)"),
    ],
)
def test_typos_get_the_nearest_suggested(argv, message):
    code, err = run(*argv)
    assert code == 2 and message in err, err


def test_valid_abbreviations_and_unknown_words_keep_argparses_behaviour(tmp_path):
    (tmp_path / "c.txt").write_text(TEXT[:20000], encoding="utf-8")
    code, err = run("train", str(tmp_path / "c.txt"), "--vocab", "300", "-o", str(tmp_path / "t"))  # a prefix
    assert code == 0, err
    code, err = run("encode", "-t", "gpt2", "--zzzzzz")
    assert code == 2 and "unrecognized arguments: --zzzzzz" in err and "did you mean" not in err


# -- progress ---------------------------------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_fits_the_terminal_and_is_cleared_when_done(monkeypatch):
    for columns in (120, 80, 50, 20):
        monkeypatch.setenv("COLUMNS", str(columns))
        screen = Terminal()
        progress = Progress("measuring bytes per token", True, screen)
        progress.total = 110_000_000
        for done in range(0, 110_000_001, 11_000_000):
            progress.update(done, tokens=3_000_000)
            progress._show(progress.start + 2)  # draw now, whatever the time
        drawn = [line.removesuffix("\x1b[K") for line in screen.getvalue().split("\r") if line]
        assert drawn and all(len(line) < columns for line in drawn), (columns, max(map(len, drawn)))
        progress.finish()
        assert screen.getvalue().endswith("\r\x1b[K")  # gone from the terminal


def test_without_a_terminal_progress_is_plain_lines():
    log = io.StringIO()
    progress = Progress("encoding", True, log)
    progress.total = 100
    progress.update(50, tokens=7)
    progress.finish()
    written = log.getvalue()
    assert "\r" not in written and "\x1b" not in written
    assert written.startswith("encoding ") and " 50%  " in written and "  7 tokens  " in written
    assert written.endswith(" MB/s\n") and written.count("\n") == 1


def test_an_error_takes_the_bar_off_the_line(monkeypatch, tmp_path):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    terminal.write("\rencoding ████···· 50%")  # a bar the failing command left on the line
    assert cli.main(["count", "-t", "gpt2", str(tmp_path / "missing.txt")]) == 1
    assert "\rencoding ████···· 50%\r\x1b[Kbytepair count: error: no such file" in terminal.getvalue()


def screen(output: bytes, columns: int) -> list[str]:
    """What a terminal `columns` wide shows after `output`: lines wrap, \\r returns, erase-line sequences erase."""
    rows: list[list[str]] = [[]]
    row = column = 0
    for part in re.split(r"(\x1b\[[0-9;?]*[A-Za-z]|\r|\n)", output.decode("utf-8", "replace")):
        if part == "\r":
            column = 0
        elif part == "\n":
            row, column = row + 1, 0
        elif part.startswith("\x1b["):
            if part in ("\x1b[K", "\x1b[0K"):
                del rows[row][column:]
            elif part == "\x1b[2K":
                rows[row] = []
            elif part.endswith("A"):  # cursor up
                row = max(0, row - int(part[2:-1] or 1))
        else:
            for char in part:
                if column == columns:  # the terminal wraps
                    row, column = row + 1, 0
                while len(rows) <= row:
                    rows.append([])
                line = rows[row]
                line.extend(" " * (column - len(line)))
                line[column : column + 1] = [char]
                column += 1
        while len(rows) <= row:
            rows.append([])
    return ["".join(r).rstrip() for r in rows if "".join(r).strip()]


def test_training_a_gz_file_on_a_terminal_leaves_only_the_summary(tmp_path):
    """On an 80-column terminal: the reading bar (counting a .gz in file bytes), the merging bar and the measuring
    bar are all gone when the summary is printed, and none of them wrapped."""
    corpus = tmp_path / "c.txt.gz"
    corpus.write_bytes(gzip.compress(TEXT.encode()))
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    argv = [str(SCRIPT), "train", str(corpus), "--vocab-size", "400", "-o", str(tmp_path / "t"), "--progress"]
    proc = subprocess.Popen(argv, stdin=child, stdout=child, stderr=child, env={**os.environ, "COLUMNS": "80"})
    os.close(child)
    output = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        output += chunk
    assert proc.wait(timeout=120) == 0, output.decode(errors="replace")
    shown = screen(output, 80)
    assert shown[0].startswith("Trained in"), shown
    assert not any(word in line for line in shown for word in ("reading", "merging", "measuring")), shown
    assert "1 document ->" in "\n".join(shown)


def test_a_gz_inputs_reading_progress_counts_file_bytes(tmp_path):
    """Not on a terminal (--progress), the core writes plain lines: the last one's position is the file's size,
    where it used to count decompressed text against the compressed size (28 MB of 11)."""
    corpus = tmp_path / "c.txt.gz"
    corpus.write_bytes(gzip.compress(TEXT.encode()))
    result = subprocess.run(
        [str(SCRIPT), "train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "t"), "--progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    reading = re.findall(r"reading: ([\d.]+) of ([\d.]+) MB", result.stderr)
    assert reading, result.stderr
    done, total = map(float, reading[-1])
    assert done == total == round(corpus.stat().st_size / 1e6, 1), result.stderr


def test_one_document_is_not_documents(tmp_path):
    (tmp_path / "c.txt").write_text(TEXT[:30000], encoding="utf-8")
    result = subprocess.run(
        [str(SCRIPT), "train", str(tmp_path / "c.txt"), "--vocab-size", "300", "-o", str(tmp_path / "t")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "in 1 file, 1 document ->" in result.stdout and "(s)" not in result.stdout
    out = tmp_path / "ids.txt"
    encoded = subprocess.run(
        [str(SCRIPT), "encode", "-t", str(tmp_path / "t"), str(tmp_path / "c.txt"), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "encoded 1 document, " in encoded.stderr and "(s)" not in encoded.stderr
