"""Running out of memory is a MemoryError naming the size asked for, and the process goes on: issue 23, item 7.
`encode` reserved one id per 3 bytes of text up front with an infallible allocation, so a 1.8 GB string under a
4 GB address-space limit aborted the process ("memory allocation of 2400000004 bytes failed"). Each case runs in
a subprocess whose address space is capped a little above what it uses before the call."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc/self/status are Linux's")

# The text encoded under the cap (ids for it need 1.3-1.6 GB: more than the allocator may keep reserved), the
# cap 200 MB above what is in use.
SCRIPT = """
    import re, resource, sys
    import bytepair
    tok = bytepair.train(["hello world, the quick brown fox jumps"] * 20, vocab_size=280)
    text = {text} * ({size} // len({text}))
    in_use = int(re.search(r"VmSize:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (in_use + (200 << 20), resource.RLIM_INFINITY))
    try:
        tok.{method}(text)
        print("no error")
    except MemoryError as e:
        print("MemoryError:", e)
    del text
    print(tok.decode(tok.encode("hello world")))
"""


@pytest.mark.parametrize("method", ["encode", "count", "encode_to_numpy"])
@pytest.mark.parametrize(
    ("text", "size"),
    [
        ('"abcdefghijklmnopqrstuvwxyz"', 400 << 20),  # one piece: the backtracker's room for it (4 bytes a byte)
        ('"hello world, "', 1000 << 20),  # many short pieces: the ids (4 bytes per 3 bytes reserved up front)
    ],
)
def test_running_out_of_memory_is_a_memory_error_and_the_process_goes_on(method, text, size):
    code = textwrap.dedent(SCRIPT.format(text=text, size=size, method=method))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"the process died ({done.returncode}): {done.stderr[-1500:]}"
    first, second = done.stdout.splitlines()[:2]
    assert first.startswith("MemoryError: out of memory: could not allocate "), first
    assert int(first.split("could not allocate ")[1].split()[0]) >= 400 << 20, "names the size asked for"
    assert second == "hello world"
