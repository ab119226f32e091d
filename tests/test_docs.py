"""The command-line examples in README.md and docs/*.md run and print what the pages show (times aside), and
the Python blocks of docs/*.md run (the README's are run by test_readme.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

PAGES = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))


def console_blocks(page: Path) -> list[list[tuple[str, str]]]:
    """Each ```console block as (command, expected output) pairs."""
    blocks = []
    for body in re.findall(r"```console\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S):
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
        blocks.append([(command, "\n".join(out)) for command, out in steps])
    return blocks


def normalise(text: str) -> str:
    """Output without trailing spaces or blank lines, and with timings (which vary) as <t>."""
    text = re.sub(r"\b\d+(\.\d+)? s\b", "<t> s", text)
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


CASES = [(page, i) for page in PAGES for i in range(len(console_blocks(page)))]


def test_the_pages_have_console_examples():
    assert {page.name for page, _ in CASES} >= {"README.md", "how-bpe-works.md"}


@pytest.mark.parametrize("page, index", CASES, ids=[f"{p.name}-{i}" for p, i in CASES])
def test_console_examples_print_what_the_page_shows(page, index, tmp_path, request):
    steps = console_blocks(page)[index]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("BYTEPAIR_DATA", None)
    work = tmp_path / "work"
    work.mkdir()
    if any("shared/data" in command for command, _ in steps):
        data = request.getfixturevalue("shared_data")  # skips without ../shared/data (fails under CI)
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "data").symlink_to(data, target_is_directory=True)
    for command, expected in steps:
        if command.startswith("export "):
            name, _, value = command[len("export ") :].partition("=")
            env[name] = value
            continue
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}"
        assert normalise(done.stdout) == normalise(expected), f"$ {command}"


@pytest.mark.parametrize("page", PAGES[1:], ids=[p.name for p in PAGES[1:]])
def test_python_examples_in_docs_run(page):
    for i, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)):
        exec(compile(block, f"{page.name} python block {i}", "exec"), {"__name__": "docs"})
