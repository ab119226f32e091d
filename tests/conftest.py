"""Shared fixtures. Tests that need ../shared/data skip when it is absent on a user's machine, and fail under
CI (CI=true or BYTEPAIR_REQUIRE_SHARED_DATA=1), where the data must be there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    return Path(os.environ.get("BYTEPAIR_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_required() -> bool:
    return (
        os.environ.get("CI", "").lower() in ("1", "true", "yes")
        or os.environ.get("BYTEPAIR_REQUIRE_SHARED_DATA") == "1"
    )


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ../shared/data (real public corpora and test vectors)."""
    path = shared_data_dir()
    if not (path / "README.md").is_file():
        message = f"shared data not found at {path} (set BYTEPAIR_SHARED_DATA to its location)"
        if shared_required():
            pytest.fail(message + " — it is required under CI")
        pytest.skip(message)
    return path


# Hypothesis: random examples on developers' machines (to find new bugs), a fixed derandomized set under CI
# (so a landing never depends on luck). BYTEPAIR_HYPOTHESIS_SCALE=20 runs 20 times more examples.
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
if shared_required():
    settings.load_profile("ci")


def examples(n: int) -> int:
    """`n` hypothesis examples, scaled by BYTEPAIR_HYPOTHESIS_SCALE."""
    return max(1, int(n * float(os.environ.get("BYTEPAIR_HYPOTHESIS_SCALE", "1"))))
