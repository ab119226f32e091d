"""Every ```python block of the README runs (and its asserts hold)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_data_dir

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, request):
    """Each block on its own, as a reader copies it: in a fresh interpreter (an import an earlier block made
    cannot cover for a missing one), from the repository's folder, and without a warning."""
    if "shared/data" in BLOCKS[index]:
        request.getfixturevalue("shared_data")  # skips without ../shared/data (fails under CI)
    env = {**os.environ, "BYTEPAIR_SHARED_DATA": str(shared_data_dir())}
    result = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", BLOCKS[index]],
        cwd=README.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"README.md python block {index}:\n{BLOCKS[index]}\n{result.stderr}"


def test_docstring_examples():
    """The examples in the docstrings of every module of the package, and of the methods of the classes the
    package re-exports under its own name (`bytepair.Tokenizer`: testmod skips methods defined elsewhere)."""
    import doctest
    import importlib
    import pkgutil

    import bytepair

    names = [m.name for m in pkgutil.walk_packages(bytepair.__path__, "bytepair.") if m.name != "bytepair.__main__"]
    tried = 0
    for module in [bytepair] + [importlib.import_module(name) for name in names]:
        failures, count = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert failures == 0, module.__name__
        tried += count
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(bytepair.Tokenizer, "Tokenizer", module=False, globs=vars(bytepair)):
        runner.run(test)
    assert runner.failures == 0
    assert runner.tries > 15 and tried > 100
