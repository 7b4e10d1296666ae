"""Huge roots: progress while the tree is walked, and Ctrl-C during a big check: exit 130, one
line on stderr, no traceback, and no worker process left behind (a real ``lintloader check`` in
a subprocess, a real SIGINT)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import lintloader_command

from lintloader.select.rounds import SHARD_MIN_FILES
from lintloader.workers.forked import can_fork

pytestmark = pytest.mark.skipif(
    not can_fork() or not Path("/proc/self/stat").exists(),
    reason="forked workers and /proc: Linux only",
)


def big_tree(root: Path) -> Path:
    """Enough files for the first round to be searched in forked children."""
    body = "".join(f"def helper_{n}(value):\n    return value * {n}\n\n" for n in range(60))
    for package in range(10):
        folder = root / f"pkg{package}"
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("")
        for number in range(SHARD_MIN_FILES // 4):
            (folder / f"mod{number}.py").write_text(body)
    return root


def group_members(group: int) -> list[tuple[int, str]]:
    """(pid, state) of the processes in a process group, from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[2]) == group:
            members.append((int(entry), fields[0]))
    return members


def interrupt_while_children_run(root: Path, cache: Path, whole_group: bool) -> tuple:
    # output to a file, not a pipe: waiting for a pipe's end would wait for the children
    # (which inherit it) and hide any left behind
    err_file = cache.parent / f"{cache.name}.stderr"
    with err_file.open("wb") as err_stream:
        process = subprocess.Popen(
            [*lintloader_command(), "check", "--jobs", "2", "--cache-dir", str(cache), str(root)],
            stdout=subprocess.DEVNULL,
            stderr=err_stream,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        if len(group_members(process.pid)) > 1:  # a forked child is at work
            break
        time.sleep(0.005)
    saw_children = process.poll() is None and len(group_members(process.pid)) > 1
    if whole_group:
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C does
    else:
        os.kill(process.pid, signal.SIGINT)  # the parent only: it must stop its children
    process.wait(timeout=120)
    left = [(pid, state) for pid, state in group_members(process.pid) if state != "Z"]
    for pid, _ in left:  # not to leave them running after the test either
        os.kill(pid, signal.SIGKILL)
    return saw_children, process.returncode, err_file.read_text(), left


@pytest.mark.parametrize("whole_group", [True, False], ids=["ctrl-c", "parent-only"])
def test_an_interrupted_check_exits_130_and_leaves_no_worker(
    tmp_path: Path, whole_group: bool
) -> None:
    root = big_tree(tmp_path / "tree")
    for attempt in range(3):  # the children must be caught at work
        saw, code, err, left = interrupt_while_children_run(
            root, tmp_path / f"cache{attempt}", whole_group
        )
        if saw:
            break
    else:
        pytest.skip("the check finished before its workers could be interrupted")
    assert code == 130, err
    assert "Traceback" not in err and "Aborted" not in err
    assert err.strip().splitlines()[-1] == "lintloader: interrupted"
    assert left == []


def test_interrupt_before_any_worker_exits_130(tmp_path: Path) -> None:
    """Interrupted while the tree is still being walked (``--project-root=/`` spends its time
    there)."""
    (tmp_path / "a.py").write_text("x = 1\n")
    script = (
        "import os, signal, sys\n"
        "from lintloader.scan.discover import paths\n"
        "walk = paths._walk\n"
        "def interrupted(*args):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    yield from walk(*args)\n"
        "paths._walk = interrupted\n"
        "from lintloader.cli.main import run\n"
        f"sys.argv = ['lintloader', 'check', {str(tmp_path)!r}]\n"
        "run()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip() == "lintloader: interrupted"


def test_discovery_reports_each_file_found_as_it_walks(tmp_path: Path) -> None:
    """What the progress line of a huge root shows while the tree is walked."""
    from lintloader.scan.discover.paths import discover_paths

    for name in ("a.py", "b.py", "sub/c.py", "sub/deeper/d.py", "skip.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    seen: list[int] = []
    found = discover_paths([str(tmp_path)], on_found=seen.append)
    assert seen == [1, 2, 3, 4] and len(found.files) == 4
