"""A local engine's worker process: `python -m bytepair.pipeline.worker FD DRIVER_PID`. It reads tasks from the
socket FD (the job's context first), runs them one at a time (`bytepair.pipeline.tasks.FUNCTIONS`), and sends
back progress, each task's result, or its error. It ends when the driver closes the socket or dies (on Linux the
kernel kills it then, even when the driver was killed with SIGKILL; elsewhere it notices at its next message).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import signal
import sys
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

from .tasks import FUNCTIONS, Context, worker_memory_settings


def _die_with(driver: int) -> None:
    """Asks the kernel to kill this process when its parent dies (Linux), then checks that the parent is still
    the driver (it may have died before the request)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != driver:
        raise SystemExit(0)


def main(argv: list[str]) -> int:
    fd, driver = int(argv[0]), int(argv[1])
    _die_with(driver)
    worker_memory_settings()
    # Ctrl-C reaches every process of the terminal's group: the driver decides what to do, not its workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stdout = sys.stderr  # the socket is the only channel; nothing a library prints may go astray
    connection = Connection(fd)
    context: Context | None = None
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return 0
        kind = message[0]
        if kind == "stop":
            return 0
        if kind == "context":
            context = Context(pickle.loads(message[1]), threads=message[2])
            continue
        _, key, function, args = message
        assert context is not None, "the driver sends the context before any task"
        last = [0.0]

        def report(totals: dict[str, int], key: str = key, last: list[float] = last) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.25:
                last[0] = now
                connection.send(("progress", key, dict(totals)))

        try:
            summary, payload = FUNCTIONS[function](context, key, report, *args)
        except BaseException as e:  # sent to the driver, which raises it as the job's error
            connection.send(("error", key, type(e).__name__, str(e), traceback.format_exc()))
            continue
        result: Any = ("done", key, summary, payload)
        connection.send(result)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
