"""The ``processes`` fixture (tests/child_processes.py) kills what a test started: at teardown,
on a timeout, on Ctrl-C; and a run fails when a test left a process behind (issue 39)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from child_processes import Processes, _processes, alive

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="process groups and /proc: Linux"
)
TESTS = Path(__file__).resolve().parent

# a child that starts two sleeping grandchildren, one in its own group, one in a session of
# its own (as a daemon would), prints their PIDs (or writes them to the file argv[1]) and waits
PARENT = """
import subprocess, sys, time
same = subprocess.Popen(["sleep", "600"])
apart = subprocess.Popen(["sleep", "600"], start_new_session=True)
out = open(sys.argv[1], "w") if len(sys.argv) > 1 else sys.stdout
print(same.pid, apart.pid, file=out, flush=True)
time.sleep(600)
"""


def grandchildren(process: subprocess.Popen[str]) -> list[int]:
    assert process.stdout is not None
    return [int(pid) for pid in process.stdout.readline().split()]


def gone(pids: list[int], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(pid) for pid in pids)


def test_teardown_kills_the_child_and_its_sleeping_grandchildren() -> None:
    with _processes() as started:
        child = started.start([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
        pids = grandchildren(child)
        assert len(pids) == 2 and all(alive(pid) for pid in pids)
    assert gone([child.pid, *pids])


def test_a_timeout_kills_the_group_at_once(tmp_path: Path) -> None:
    started = Processes()
    pid_file = tmp_path / "pids"
    with pytest.raises(subprocess.TimeoutExpired):
        started.run([sys.executable, "-c", PARENT, str(pid_file)], timeout=3)
    pids = [int(pid) for pid in pid_file.read_text().split()]
    assert len(pids) == 2 and gone(pids, seconds=1)
    started.close()


def inner_pytest(processes: Processes, test_file: Path) -> subprocess.Popen[str]:
    """A real pytest run of ``test_file`` with the plugin alone."""
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    env.pop("LINTLOADER_TEST_RUN", None)
    args = [sys.executable, "-m", "pytest", "-p", "child_processes", "-p", "no:cacheprovider"]
    return processes.start(
        [*args, "-q", str(test_file)],
        cwd=test_file.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_ctrl_c_during_a_test_kills_what_it_started(processes: Processes, tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    test_file = tmp_path / "test_inner.py"
    test_file.write_text(
        "import subprocess, sys, time\n"
        "def test_waits(processes):\n"
        f"    child = processes.start([sys.executable, '-c', {PARENT!r}], stdout=subprocess.PIPE)\n"
        f"    open({str(pid_file)!r}, 'wb').write(child.stdout.readline())\n"
        "    time.sleep(600)\n"
    )
    inner = inner_pytest(processes, test_file)
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text().endswith("\n"):
        assert time.monotonic() < deadline and inner.poll() is None
        time.sleep(0.05)
    pids = [int(pid) for pid in pid_file.read_text().split()]
    assert all(alive(pid) for pid in pids)
    os.kill(inner.pid, signal.SIGINT)  # a terminal's Ctrl-C: the children are in sessions apart
    output, _ = inner.communicate(timeout=60)
    assert inner.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "KeyboardInterrupt" in output
    assert gone(pids, seconds=1)


def test_a_process_left_behind_fails_the_run_and_is_named(
    processes: Processes, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    test_file = tmp_path / "test_leak.py"
    test_file.write_text(
        "import subprocess\n"
        "def test_leaks():\n"
        "    leaked = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
        f"    open({str(pid_file)!r}, 'w').write(str(leaked.pid))\n"
    )
    inner = inner_pytest(processes, test_file)
    output, _ = inner.communicate(timeout=120)
    leaked = int(pid_file.read_text())
    assert inner.returncode == pytest.ExitCode.TESTS_FAILED, output
    assert "1 passed" in output and "processes left behind" in output
    assert f"  {leaked}: sleep 600" in output
    assert gone([leaked], seconds=1)
