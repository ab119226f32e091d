"""How the extension was built: `_core.build_profile()`, and the PGO build's tool (tools/pgo.py) — its examples, its
workload's texts, and the fallback that finds no llvm-profdata."""

from __future__ import annotations

import doctest
import importlib.util
import os
import random
import re
from types import ModuleType

import pytest

from bytepair import _core
from conftest import REPO


def load_pgo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pgo", REPO / "tools" / "pgo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_profile_names_how_the_extension_was_compiled():
    profile = _core.build_profile()
    assert profile in ("release", "debug") or profile.startswith("pgo:"), profile
    if os.environ.get("BYTEPAIR_EXPECT_PGO") == "1":  # set by .ci/run when it installed llvm-tools
        assert profile.startswith("pgo:"), f"llvm-tools was installed, yet the build is {profile!r}"


def test_pgo_tool_examples_run():
    failures, tried = doctest.testmod(load_pgo(), optionflags=doctest.ELLIPSIS)
    assert tried >= 3 and failures == 0


def test_pgo_workload_texts_are_fixed_and_not_the_benchmarks():
    pgo = load_pgo()
    first, again = pgo.made_up_text(random.Random(5)), pgo.made_up_text(random.Random(5))
    assert first == again and all(len(t) >= pgo.MADE_UP_CHARS * 0.9 for t in first)
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", first[2]) and set(first[3]) == {"a"}
    assert any(ord(c) > 0x3000 for c in first[4])  # a script beyond the two-byte UTF-8 range
    own = pgo.own_text()
    assert "bytepair" in own and len(own) > 500_000
    # The benchmark's texts come from ../shared/data and the stdlib; the workload reads neither.
    assert "shared/data" not in "".join(pgo.OWN_TEXT) and "stdlib" not in "".join(pgo.OWN_TEXT)


def test_pgo_tool_without_llvm_profdata_finds_none(monkeypatch: pytest.MonkeyPatch):
    pgo = load_pgo()
    assert pgo.rustc_tool("no-such-tool") is None
    found = pgo.rustc_tool("llvm-profdata")
    assert found is None or os.access(found, os.X_OK)
    monkeypatch.setenv("PATH", "")  # no rustc at all: no tool, and no exception
    assert pgo.rustc_tool("llvm-profdata") is None
