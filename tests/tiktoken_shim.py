"""A pytest plugin (`-p tiktoken_shim`) that runs tiktoken's own test suite against bytepair: before the tests are
collected (tiktoken's helpers bind `tiktoken.get_encoding` at import), `tiktoken.get_encoding` is made to return
bytepair's drop-in (`bytepair.compat.tiktoken.Encoding`) with the rank files of $BYTEPAIR_SHARED_DATA, and
`tiktoken.list_encoding_names` to list the encodings bytepair ships. `tiktoken.Encoding` itself stays tiktoken's
(test_pickle builds one from our object's `_pat_str` and `_mergeable_ranks`).

tests/test_tiktoken_suite.py runs it; at the end it prints how many encodings it served, so that a shim that did
not take (tiktoken's own encodings tested instead) cannot pass unseen."""

from __future__ import annotations

import os

import pytest
import tiktoken
import tiktoken.registry

from bytepair.compat import tiktoken as drop_in

DATA = os.environ["BYTEPAIR_SHARED_DATA"]
SERVED: list[str] = []


def get_encoding(encoding_name: str) -> drop_in.Encoding:
    SERVED.append(encoding_name)
    return drop_in.get_encoding(encoding_name, DATA)


tiktoken.get_encoding = get_encoding  # type: ignore[assignment]  # ours, in tiktoken's place
tiktoken.registry.get_encoding = get_encoding  # type: ignore[assignment]
tiktoken.list_encoding_names = drop_in.list_encoding_names
tiktoken.registry.list_encoding_names = drop_in.list_encoding_names


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    served = sorted(set(SERVED))
    terminalreporter.write_line(f"bytepair shim served {len(SERVED)} encodings: {' '.join(served)}")
