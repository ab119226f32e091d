"""What the benchmarks share: paths, the cache of prepared inputs, peak memory of a child, the machine and
the package versions for the report, and number formatting."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
CACHE = HERE / ".cache"
SHARED = Path(os.environ.get("BYTEPAIR_SHARED_DATA", REPO.parent / "shared" / "data"))
GUTENBERG_GZ = SHARED / "text/gutenberg_en/gutenberg_en_books.txt.gz"


def peak_rss_mb(pid: str | int) -> float | None:
    """VmHWM: the peak resident set of the process's own memory since its exec.

    Not getrusage's ru_maxrss (what os.wait4 gives): Linux carries the parent's high-water mark over the
    fork and exec into the child's, so every child would show at least the parent's peak.
    """
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None


def write_atomically(path: Path, write) -> Path:
    """Prepares a cached input once, via a temporary file, so an existing cache file is always complete."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    print(f"preparing {path.relative_to(HERE)} …", file=sys.stderr, flush=True)
    with open(tmp, "wb") as out:
        write(out)
    tmp.rename(path)
    return path


def installed(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def machine_info() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = None
    with contextlib.suppress(ValueError, OSError):
        mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(mem_gb, 1) if mem_gb else None,
        "os": f"{platform.system()} {platform.machine()}",
        "python": platform.python_version(),
    }


def versions(packages: list[str]) -> dict:
    """Installed versions of bytepair and `packages`, and which checkout (and commit) bytepair was built from."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ["bytepair", *packages]:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    try:  # how the extension was compiled: "pgo:…" (tools/pgo.py, make build's default), "release" or "debug"
        from bytepair import _core

        out["bytepair_build"] = _core.build_profile()
    except (ImportError, AttributeError):
        pass
    try:  # which bytepair build: the checkout it was installed (editable) from
        import importlib.util

        where = Path(importlib.util.find_spec("bytepair").origin).parent
        top = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True
        ).stdout.strip()
        commit = subprocess.run(
            ["git", "-C", top, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", top, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        out["bytepair_source"] = f"{top} @ {commit}" + (" + uncommitted changes" if dirty else "")
    except (subprocess.CalledProcessError, OSError, AttributeError, TypeError):
        pass
    return out


def bytepair_label(v: dict) -> str:
    """What follows bytepair's version in a report's caption: the checkout it was built from and how it was built."""
    source = f" ({v['bytepair_source']})" if v.get("bytepair_source") else ""
    return source + (f", built {v['bytepair_build']}" if v.get("bytepair_build") else "")


def fmt_x(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}×" if value < 10 else f"{value:.0f}×"


def run_child(
    script: str, spec: dict, env: dict, timeout: float, log_dir: Path, load_limit: float | None = None
) -> dict:
    """Runs `script --child <spec as JSON>` in its own process group, killed after `timeout` seconds. The
    child (environment: `env`, OpenBLAS held to one thread) writes its result (a JSON object) to the path given it
    as spec["result"]; returned with its CPU time, the wall time and wait4's peak RSS — or `killed_after_s` with
    the peak RSS at the kill, or `error` (the log's last line) and `log` when it failed.

    With `load_limit`, the child also gets a path spec["started"] to create when its timed part begins: the
    `timeout` counts from then, and before it the child may take `load_limit` seconds (loading a vocabulary)."""
    # numpy's OpenBLAS starts OMP_NUM_THREADS - 1 threads (or one per CPU) that spin for a second or two after
    # `import numpy`: a 2-thread child's cold pass shared its CPUs with one (bytepair's batch, r50k, 10 MB of
    # English: 122-140 MB/s with it, 205-245 without). Nothing measured here uses BLAS.
    env = {**env, "OPENBLAS_NUM_THREADS": "1"}
    log_dir.mkdir(parents=True, exist_ok=True)
    name = spec.get("trainer") or spec.get("library") or "child"
    stem = f"{name}-{os.getpid()}-{time.monotonic_ns()}"
    result_path, log_path, started_path = (log_dir / f"{stem}{ext}" for ext in (".json", ".log", ".started"))
    spec = {**spec, "result": str(result_path)}
    if load_limit is not None:
        spec["started"] = str(started_path)
    cmd = [sys.executable, script, "--child", json.dumps(spec)]
    with open(log_path, "w") as log:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        clock = start if load_limit is None else None  # when the timed part began
        killed, peak_at_kill = None, None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            now = time.monotonic()
            if clock is None and started_path.exists():
                clock = now
            if clock is not None and now - clock > timeout:
                killed = "timeout"
            elif clock is None and load_limit is not None and now - start > load_limit:
                killed = "load"
            if killed:
                peak_at_kill = peak_rss_mb(proc.pid)
                os.killpg(proc.pid, signal.SIGKILL)  # the child's own process group (start_new_session)
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        elapsed = time.monotonic() - start
    started_path.unlink(missing_ok=True)
    # ru_maxrss is kept as a cross-check only: it is at least the parent's own peak (see peak_rss_mb)
    common = {"cpu_s": usage.ru_utime + usage.ru_stime, "elapsed_s": elapsed, "wait4_maxrss_mb": usage.ru_maxrss / 1024}
    if killed == "load":
        return {"error": f"still loading after {load_limit:g} s (killed)", "log": str(log_path), **common}
    if killed:
        return {"killed_after_s": timeout, "peak_rss_mb": peak_at_kill, **common}
    if proc.returncode != 0 or not result_path.exists():
        lines = [line for line in log_path.read_text(errors="replace").splitlines() if line.strip()]
        why = (lines or [f"exit status {proc.returncode}"])[-1][:200]
        if proc.returncode < 0:
            why = f"killed by signal {-proc.returncode} ({signal.Signals(-proc.returncode).name}); last output: {why}"
        return {"error": why, "log": str(log_path), **common}
    result = json.loads(result_path.read_text())
    result_path.unlink()
    log_path.unlink()
    return {**common, **result}


def write_results(out_dir: Path, name: str, report: dict, render_markdown, render_chart) -> None:
    """Writes `name`.json (the report), `name`.md (`render_markdown(report)`, also printed) and `name`.png
    (`render_chart(path)`) into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    markdown = render_markdown(report)
    (out_dir / f"{name}.md").write_text(markdown)
    render_chart(out_dir / f"{name}.png")
    print(markdown)
    print(f"written: {out_dir}/{name}.md, {name}.json, {name}.png", file=sys.stderr)
