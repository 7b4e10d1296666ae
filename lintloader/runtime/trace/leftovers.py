"""After a forwarded signal: stop what the traced processes left running.

The candidates are the processes that wrote records (one file per PID) and the worker PIDs
their pool starts recorded; only those still alive in ``lintloader trace``'s own process group
are signalled (a PID reused by an unrelated process is in another group)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

TERM_WAIT_S = 3.0


def recorded_pids(run_dir: Path) -> set[int]:
    pids: set[int] = set()
    for path in run_dir.glob("*.jsonl"):
        if path.stem.isdigit():
            pids.add(int(path.stem))
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                record = json.loads(line)
                if record.get("event") == "pool_start":
                    pids.update(int(pid) for pid in record.get("pids") or ())
    pids.discard(os.getpid())
    return pids


def ours(pid: int) -> bool:
    """Alive and in this process's group."""
    try:
        return os.getpgid(pid) == os.getpgrp()
    except OSError:
        return False


def stop_leftovers(run_dir: Path) -> list[int]:
    """SIGTERM, then SIGKILL after :data:`TERM_WAIT_S`, to every recorded process still
    running in this group; the PIDs that were left."""
    left = sorted(pid for pid in recorded_pids(run_dir) if ours(pid))
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + TERM_WAIT_S
    while time.monotonic() < deadline and any(ours(pid) and _alive(pid) for pid in left):
        time.sleep(0.05)
    for pid in left:
        if ours(pid) and _alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return left


def _alive(pid: int) -> bool:
    """Alive and not a zombie (a zombie child of ours waits to be reaped; it runs nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"
