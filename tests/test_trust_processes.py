"""Parse workers die with their parent (issue 12, item 6): after a SIGKILL of ``lintloader
check`` (the OOM killer, a CI timeout), neither its forked shards nor its process-pool workers
stay alive. Real processes, watched through /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from trust_support import CLI

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not Path("/proc/self/task").is_dir(),
    reason="parent-death signals and /proc are Linux features",
)

HEAVY_CLASS = """
class Fetcher{index}:
    def __iter__(self):
        self.reset()
        return iter(self.loader)

    def reset(self):
        if self.loader._iterator is not None:
            self.loader._iterator._shutdown_workers()
        self.loader._iterator = None
"""


def heavy_module(classes: int) -> str:
    return "".join(HEAVY_CLASS.format(index=index) for index in range(classes))


def children_of(pid: int) -> set[int]:
    """The Python children of ``pid`` (parse workers; not ``git``, which discovery runs)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(p) for p in (task / "children").read_text().split()}
        except OSError:
            continue
    return {child for child in found if runs_python(child)}


def runs_python(pid: int) -> bool:
    try:
        return os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(sys.executable)
    except OSError:
        return False


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan nobody reaped yet has finished all the same)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def kill_while_workers_run(root: Path, *args: str) -> set[int]:
    """Start a check, SIGKILL it once a worker process has been busy for a while (not one of
    the short token-search shards); return the PIDs of its workers at that moment."""
    process = subprocess.Popen(
        [*CLI, "check", ".", "--no-cache", *args],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    first_seen: dict[int, float] = {}
    while True:
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail("the check ended before a worker process had been busy for a while")
        now = time.monotonic()
        workers = children_of(process.pid)
        first_seen = {pid: first_seen.get(pid, now) for pid in workers}
        if any(now - seen >= 0.5 for seen in first_seen.values()):
            break
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    return workers


def assert_all_gone(workers: set[int], seconds: float = 3) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(running(pid) for pid in workers):
        time.sleep(0.05)
    left = sorted(pid for pid in workers if running(pid))
    for pid in left:  # do not leave them behind for the next test either
        os.kill(pid, signal.SIGKILL)
    assert not left, f"workers outlived their killed parent: {left}"


def test_forked_shards_die_with_a_killed_parent(tmp_path: Path) -> None:
    """2000+ candidate files: the token search and summaries run in forked shards."""
    for index in range(2100):
        (tmp_path / f"small_{index}.py").write_text(f"value_{index} = {index}\n")
    heavy = heavy_module(6000)  # each shard summarizes ~6 MB: seconds after the kill
    for index in range(16):
        (tmp_path / f"heavy_{index}.py").write_text(heavy)
    assert_all_gone(kill_while_workers_run(tmp_path, "-j2"))


def test_pool_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    """Few, large files: the summaries run in a process pool."""
    heavy = heavy_module(6000)
    for index in range(12):
        (tmp_path / f"heavy_{index}.py").write_text(heavy)
    assert_all_gone(kill_while_workers_run(tmp_path, "-j2"))
