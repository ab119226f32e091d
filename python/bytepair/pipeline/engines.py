"""Where a job's tasks run: `LocalEngine` (worker processes on this machine; no extra dependency) or
`RayEngine` (Ray tasks, on a cluster or on a local Ray started for the job). Both take the same tasks — a name
from `bytepair.pipeline.tasks.FUNCTIONS` and its arguments — and give the same results; what a job writes is
decided by the tasks' inputs, never by which engine ran them, in what order they finished, or how many
workers there were.

Faults: a worker that dies in a task (killed, out of memory) is replaced and the task run again, up to
`MAX_RETRIES` times (the local engine respawns its process; Ray retries the task). An error *raised* by a task
(bad input) is not retried: it ends the job with the task's own message.

Progress: each task reports its running totals (documents, bytes read, tokens) while it works; the driver asks
`Engine.reports()` for the latest of each task, so a retried task's figures replace its first attempt's.

Tests inject faults through `BYTEPAIR_FAULT` (read by the driver, handed to the tasks), so that a worker's
death is real — a SIGKILL — but lands where the test wants it: `kill-worker:TASK:MARKER` kills the worker
running task TASK once (the first attempt creates the file MARKER; retries see it and go on).
"""

from __future__ import annotations

import collections
import contextlib
import os
import pickle
import socket
import subprocess
import sys
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

__all__ = [
    "MAX_RETRIES",
    "Engine",
    "LocalEngine",
    "RayEngine",
    "TaskDone",
    "default_threads",
    "make_engine",
]

#: How many times a task whose worker died is run again before the job gives up.
MAX_RETRIES = 3
#: Error types a task's failure is raised as again in the driver (others become RuntimeError).
_KNOWN_ERRORS: dict[str, type[Exception]] = {
    "ValueError": ValueError,
    "TypeError": TypeError,
    "FileNotFoundError": FileNotFoundError,
    "IsADirectoryError": IsADirectoryError,
    "PermissionError": PermissionError,
    "OSError": OSError,
    "MemoryError": MemoryError,
    "ImportError": ImportError,
    "UnicodeDecodeError": ValueError,
}


@dataclass
class TaskDone:
    """A finished task: its key, its summary (small, always in the driver) and its payload — the value itself
    (local engine) or a reference to it that other tasks can take as an argument (Ray)."""

    key: str
    summary: dict[str, Any]
    payload: Any


def _rebuilt(type_name: str, message: str) -> Exception:
    return _KNOWN_ERRORS.get(type_name, RuntimeError)(message)


def default_threads(workers: int) -> int:
    """Threads per worker when not given: this machine's cores shared between the workers (at least one), so
    that the machine is not oversubscribed."""
    return max(1, _cores() // max(1, workers))


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (not Linux)
        return os.cpu_count() or 1


class Engine(ABC):
    """Runs tasks: `submit` them (they start as workers free up, in the order submitted), then call `next`
    until `busy` is False. `close` stops everything it started."""

    workers: int
    threads: int

    def __init__(self) -> None:
        self._reports: dict[str, dict[str, int]] = {}

    @abstractmethod
    def submit(self, key: str, function: str, *args: Any) -> None: ...

    @abstractmethod
    def next(self, timeout: float) -> TaskDone | None:
        """The next finished task, or None after `timeout` seconds. A task's error is raised here, as the same
        type with the same message (types the driver does not know become RuntimeError)."""

    @property
    @abstractmethod
    def busy(self) -> bool:
        """Whether tasks are waiting or running."""

    def get(self, payload: Any) -> Any:
        """A payload's value (the local engine's payloads are their values already)."""
        return payload

    def reports(self) -> dict[str, dict[str, int]]:
        """The latest progress report of each task that sent one (finished ones included)."""
        return self._reports

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_engine(
    name: str, context: Any, *, workers: int | None = None, threads: int | None = None, ray_address: str | None = None
) -> Engine:
    """The engine `name` ("local" or "ray") for a job whose tasks share `context` (sent once to each worker)."""
    if name == "local":
        if ray_address is not None:
            raise ValueError("ray_address is for engine='ray'")
        return LocalEngine(context, workers=workers, threads=threads)
    if name == "ray":
        return RayEngine(context, workers=workers, threads=threads, address=ray_address)
    raise ValueError(f'unknown engine {name!r}: use "local" (processes on this machine) or "ray"')


def _check_count(value: int | None, name: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be a positive int, got {value!r}")


# -- local: worker processes ----------------------------------------------------------------------------------


@dataclass
class _Task:
    key: str
    function: str
    args: tuple[Any, ...]
    attempts: int = 0


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    connection: Connection
    task: _Task | None = None
    deaths: list[int] = field(default_factory=list)


class LocalEngine(Engine):
    """Worker processes on this machine (`python -m bytepair.pipeline.worker`), each running one task at a time
    with `threads` encoding threads. A worker that dies is replaced and its task run again; workers end when
    the engine closes — or when the driver dies, even by SIGKILL (they ask the kernel to kill them then)."""

    def __init__(self, context: Any, *, workers: int | None = None, threads: int | None = None) -> None:
        super().__init__()
        _check_count(workers, "workers")
        _check_count(threads, "threads")
        self.workers = workers or _cores()
        self.threads = threads or default_threads(self.workers)
        self._context = pickle.dumps(context, protocol=pickle.HIGHEST_PROTOCOL)
        self._pending: collections.deque[_Task] = collections.deque()
        self._pool: list[_Worker] = []
        self._closed = False

    def _spawn(self) -> _Worker:
        parent, child = socket.socketpair()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "bytepair.pipeline.worker", str(child.fileno()), str(os.getpid())],
                pass_fds=[child.fileno()],
                stdin=subprocess.DEVNULL,
            )
        finally:
            child.close()
        return _Worker(process, Connection(parent.detach()))

    def _start_workers(self) -> None:
        """Starts the workers the pending tasks need (up to `workers`), all before sending any its context: the
        context (the job, with its tokenizer: ~1.6 MB for GPT-2) fills the socket's buffer, so sending it waits
        until the worker has started Python and reads it, and starting them one after the other made the second
        worker begin ~0.3 s after the first."""
        idle = sum(1 for w in self._pool if w.task is None)
        started: list[_Worker] = []
        while len(self._pool) + len(started) < self.workers and len(self._pending) > idle + len(started):
            started.append(self._spawn())
        for worker in started:
            self._pool.append(worker)
            try:
                worker.connection.send(("context", self._context, self.threads))
            except OSError as e:
                self._died(worker)
                raise RuntimeError(
                    f"a worker process ended as it started ({e}): its error, if it printed one, is above"
                ) from None

    def submit(self, key: str, function: str, *args: Any) -> None:
        self._pending.append(_Task(key, function, args))

    @property
    def busy(self) -> bool:
        return bool(self._pending) or any(w.task is not None for w in self._pool)

    def _dispatch(self) -> None:
        self._start_workers()
        while self._pending:
            idle = next((w for w in self._pool if w.task is None), None)
            if idle is None:
                return
            task = self._pending.popleft()
            task.attempts += 1
            idle.task = task
            try:
                idle.connection.send(("task", task.key, task.function, task.args))
            except OSError:
                self._died(idle)

    def next(self, timeout: float) -> TaskDone | None:
        deadline = time.monotonic() + timeout
        while True:
            self._dispatch()
            running = [w for w in self._pool if w.task is not None]
            if not running:
                return None
            left = max(0.0, deadline - time.monotonic())
            ready = wait([w.connection for w in running], left)
            for worker in running:
                if worker.connection not in ready:
                    continue
                try:
                    message = worker.connection.recv()
                except (EOFError, OSError):
                    self._died(worker)
                    continue
                done = self._handle(worker, message)
                if done is not None:
                    return done
            if time.monotonic() >= deadline:
                return None

    def _handle(self, worker: _Worker, message: tuple[Any, ...]) -> TaskDone | None:
        kind, key = message[0], message[1]
        if kind == "progress":
            self._reports[key] = message[2]
            return None
        task = worker.task
        worker.task = None
        if kind == "done":
            summary, payload = message[2], message[3]
            if "report" in summary:
                self._reports[key] = summary["report"]
            # The worker gets its next task now, not after the caller has recorded this one (an fsync).
            self._dispatch()
            return TaskDone(key, summary, payload)
        if kind == "error":
            _, _, type_name, text, trace = message
            error = _rebuilt(type_name, text)
            if os.environ.get("BYTEPAIR_DEBUG"):  # pragma: no cover
                print(trace, file=sys.stderr)
            raise error
        raise RuntimeError(f"a worker sent an unknown message {kind!r} for task {task}")  # pragma: no cover

    def _died(self, worker: _Worker) -> None:
        """A worker's connection broke: it died. Replace it, and run its task again (or give up)."""
        with contextlib.suppress(OSError):
            worker.connection.close()
        try:
            code = worker.process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover (a worker that closed its end but lives on)
            worker.process.kill()
            code = worker.process.wait()
        self._pool.remove(worker)
        task = worker.task
        if task is None:
            return
        how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        if task.attempts > MAX_RETRIES:
            raise RuntimeError(
                f"the worker running task {task.key} died {task.attempts} times (last: {how}); giving up. "
                f"Is the machine out of memory? Fewer --workers or a smaller --shard-size may help"
            )
        print(f"bytepair: a worker died in task {task.key} ({how}); running it again", file=sys.stderr)
        self._pending.appendleft(task)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for worker in self._pool:
            with contextlib.suppress(OSError):
                worker.connection.send(("stop",))
            with contextlib.suppress(OSError):
                worker.connection.close()
        for worker in self._pool:
            try:
                worker.process.wait(timeout=0.5 if worker.task is None else 0)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
        self._pool.clear()


# -- Ray --------------------------------------------------------------------------------------------------------


class RayEngine(Engine):
    """Ray tasks (each asking for `threads` CPUs), at most `workers` running at once. Without `address` a local
    Ray is started for the job and stopped after it; with one, the job joins that cluster (`"auto"`: the one
    this machine belongs to). Payloads stay in Ray's object store: a task's payload goes to the next task as a
    reference, never through the driver."""

    def __init__(
        self, context: Any, *, workers: int | None = None, threads: int | None = None, address: str | None = None
    ) -> None:
        super().__init__()
        _check_count(workers, "workers")
        _check_count(threads, "threads")
        try:
            import ray as ray_module
        except ImportError:
            raise ImportError(
                "engine='ray' needs Ray: pip install 'bytepair[ray]' (or pip install ray), or use engine='local'"
            ) from None
        import logging

        ray: Any = ray_module  # (Ray's own annotations are partial: used untyped)
        self._ray = ray
        self.started = not ray.is_initialized()
        self.start_seconds = 0.0
        if self.started:
            begin = time.perf_counter()
            options: dict[str, Any] = dict(
                include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR, configure_logging=True
            )
            if address is None:  # a Ray of our own, on the loopback address, with a modest object store
                options["num_cpus"] = max(_cores(), (workers or 1) * (threads or 1))
                options["object_store_memory"] = 512 << 20
                options["_node_ip_address"] = "127.0.0.1"
            else:
                del options["include_dashboard"]  # (a setting of the cluster, not of a driver joining it)
            # address="local": a new Ray of our own, never a cluster someone else started on this machine.
            ray.init(address=address or "local", **options)
            self.start_seconds = time.perf_counter() - begin
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = workers or max(1, cpus // (threads or 1))
        self.threads = threads or default_threads(self.workers)
        from .tasks import ProgressBoard, run_on_ray

        self._board: Any = ray.remote(num_cpus=0)(ProgressBoard).remote()
        self._context = ray.put(pickle.dumps(context, protocol=pickle.HIGHEST_PROTOCOL))
        self._run = ray.remote(run_on_ray).options(
            num_cpus=self.threads, max_retries=MAX_RETRIES, num_returns=2, retry_exceptions=False
        )
        self._pending: collections.deque[tuple[str, str, tuple[Any, ...]]] = collections.deque()
        self._running: dict[Any, tuple[str, Any]] = {}
        self._polled = 0.0

    def submit(self, key: str, function: str, *args: Any) -> None:
        self._pending.append((key, function, args))

    @property
    def busy(self) -> bool:
        return bool(self._pending) or bool(self._running)

    def _start_pending(self) -> None:
        while self._pending and len(self._running) < self.workers:
            key, function, args = self._pending.popleft()
            summary, payload = self._run.remote(function, key, self._context, self.threads, self._board, *args)
            self._running[summary] = (key, payload)

    def next(self, timeout: float) -> TaskDone | None:
        ray = self._ray
        self._start_pending()
        if not self._running:
            return None
        ready, _ = ray.wait(list(self._running), num_returns=1, timeout=timeout)
        now = time.monotonic()
        if now - self._polled > 0.25:
            self._polled = now
            with contextlib.suppress(Exception):
                self._reports.update(ray.get(self._board.snapshot.remote(), timeout=5))
        if not ready:
            return None
        ref = ready[0]
        key, payload = self._running.pop(ref)
        self._start_pending()  # a worker is free: its next task starts before the caller records this one
        try:
            summary = ray.get(ref)
        except ray.exceptions.RayTaskError as e:
            cause = e.cause if getattr(e, "cause", None) is not None else e
            raise _rebuilt(type(cause).__name__, str(cause)) from None
        except ray.exceptions.RayError as e:
            raise RuntimeError(f"task {key} failed in Ray: {e}") from None
        if "report" in summary:
            self._reports[key] = summary["report"]
        return TaskDone(key, summary, payload)

    def get(self, payload: Any) -> Any:
        """A payload's value, fetched from the object store."""
        return self._ray.get(payload)

    def close(self) -> None:
        ray = self._ray
        for ref in list(self._running):
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        self._running.clear()
        self._pending.clear()
        if self.started and ray.is_initialized():
            ray.shutdown()
