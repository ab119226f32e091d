"""What the benchmarks share: paths, the cache of prepared inputs, peak memory of a child, the machine and
the package versions for the report, and number formatting."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
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
    try:
        mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem_gb, 1) if mem_gb else None,
            "os": f"{platform.system()} {platform.machine()}", "python": platform.python_version()}


def versions(packages: list[str]) -> dict:
    """Installed versions of bytepair and `packages`, and which checkout (and commit) bytepair was built from."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ["bytepair", *packages]:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    try:  # which bytepair build: the checkout it was installed (editable) from
        import importlib.util

        where = Path(importlib.util.find_spec("bytepair").origin).parent
        top = subprocess.run(["git", "-C", str(where), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True).stdout.strip()
        commit = subprocess.run(["git", "-C", top, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", top, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        out["bytepair_source"] = f"{top} @ {commit}" + (" + uncommitted changes" if dirty else "")
    except (subprocess.CalledProcessError, OSError, AttributeError, TypeError):
        pass
    return out


def fmt_x(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}×" if value < 10 else f"{value:.0f}×"
