"""Types: mypy passes on the tests and the whole package (configured in pyproject.toml), and the
extension's stubs (`_core.pyi`) name exactly what the extension has."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys

import pytest

from bytepair import _core
from conftest import REPO, shared_required

STUB = REPO / "python" / "bytepair" / "_core.pyi"


def stub_names() -> dict[str, set[str]]:
    """Class name (or "" for the module) → the names the stub declares."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {"": set()}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef) and n.name != "__init__"}
            out[""].add(node.name)
        elif isinstance(node, ast.FunctionDef):
            out[""].add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[""].add(node.target.id)  # a constant
    return out


def test_stubs_name_everything_the_extension_has():
    declared = stub_names()
    assert declared[""] == {n for n in dir(_core) if not n.startswith("_")}
    for name in {n for n in declared[""] if isinstance(getattr(_core, n), type)}:
        runtime = {n for n in dir(getattr(_core, name)) if not n.startswith("_")}
        public = {n for n in declared[name] if not n.startswith("__")}  # dunders: __len__, __iter__, ...
        assert public == runtime, name
    assert (REPO / "python" / "bytepair" / "py.typed").is_file()


def test_mypy_passes():
    if importlib.util.find_spec("mypy") is None:
        if shared_required():
            pytest.fail("mypy is not installed (make test installs it) — required under CI")
        pytest.skip("mypy is not installed")
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout
