"""Every ```python block of the README runs (and its asserts hold)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning")
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, request):
    if "shared/data" in BLOCKS[index]:
        request.getfixturevalue("shared_data")  # skips without ../shared/data (fails under CI)
    exec(compile(BLOCKS[index], f"README.md python block {index}", "exec"), {"__name__": "readme"})


def test_docstring_examples():
    import doctest

    import bytepair
    import bytepair.compare
    import bytepair.describe
    import bytepair.explain
    import bytepair.files
    import bytepair.reference
    import bytepair.viewer

    for module in (bytepair, bytepair.reference, bytepair.explain, bytepair.describe, bytepair.viewer,
                   bytepair.compare, bytepair.files):
        failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert failures == 0, module.__name__
