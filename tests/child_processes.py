"""The processes the tests start, and that none outlives the run (issue 39).

Every test that starts a command which may start others (``lintloader trace -- python ...``,
``verify``, a language server) starts it through the ``processes`` fixture: each child starts
in a session, so a process group, of its own, and at teardown (a test's end, a timeout, a
Ctrl-C: pytest tears fixtures down on ``KeyboardInterrupt`` too) the group is killed with
everything the child started, found by session and by parent.

At the session's end (:func:`leftovers`), every process still running that carries this test
process's mark in its environment (every child inherits it, wherever it was reparented) is
killed and named, and the run fails: a test left it behind. With pytest-xdist each worker checks
its own and the controller reports them.

A pytest plugin: ``tests/conftest.py`` imports it; ``pytest -p child_processes`` loads it alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

MARK_ENV = "LINTLOADER_TEST_RUN"
# started once per interpreter and kept until it exits, by the standard library itself
KEPT_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")
GRACE_S = 5.0  # how long a process killed at teardown may take to go
LEFTOVERS_KEY = "lintloader_leftover_processes"


@dataclass(frozen=True)
class Proc:
    """One process as /proc shows it."""

    pid: int
    parent: int
    group: int
    session: int
    state: str


def _stat(pid: int) -> Proc | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except (OSError, IndexError):
        return None
    return Proc(pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0])


def running() -> list[Proc]:
    """Every live process (a zombie has ended, whoever reaps it)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            proc = _stat(int(entry))
            if proc is not None and proc.state not in ("Z", "X"):
                found.append(proc)
    return found


def started_by(pid: int) -> set[int]:
    """The live processes ``pid`` started: its session, its group and its descendants."""
    procs = running()
    found = {p.pid for p in procs if pid in (p.session, p.group)}
    queue = [pid, *found]
    while queue:
        parent = queue.pop()
        children = {p.pid for p in procs if p.parent == parent} - found
        found |= children
        queue += children
    return found - {pid}


def alive(pid: int) -> bool:
    proc = _stat(pid)
    return proc is not None and proc.state not in ("Z", "X")


def kill_tree(process: subprocess.Popen[Any]) -> None:
    """SIGKILL ``process``, its process group and whatever it started; then reap it."""
    if os.name != "posix":
        process.kill()
    else:
        others = started_by(process.pid)
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        for pid in others:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError, ValueError, subprocess.TimeoutExpired):
        process.communicate(timeout=GRACE_S)


@dataclass
class Processes:
    """What the ``processes`` fixture gives: :meth:`start` and :meth:`run`, like
    ``subprocess.Popen`` and ``subprocess.run``, each child in a session of its own."""

    started: list[subprocess.Popen[Any]] = field(default_factory=list)

    def start(self, args: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
        """``subprocess.Popen(args, **popen)`` in a new session, recorded to be killed. (Not
        started under a held Ctrl-C: the child would inherit the blocked signal; a Ctrl-C
        between the start and the record leaves the child to the session's end check.)"""
        process = subprocess.Popen(list(args), start_new_session=True, **popen)
        self.started.append(process)
        return process

    def run(
        self,
        args: Sequence[str],
        *,
        timeout: float,
        input: str | bytes | None = None,
        capture_output: bool = True,
        text: bool = True,
        **popen: Any,
    ) -> subprocess.CompletedProcess[Any]:
        """``subprocess.run(args, timeout=..., capture_output=True, text=True)``; whatever the
        child leaves in its group, and the whole group on a timeout or an interrupt, killed."""
        if capture_output:
            popen.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if input is not None:
            popen["stdin"] = subprocess.PIPE
        process = self.start(args, text=text, **popen)
        try:
            stdout, stderr = process.communicate(input, timeout=timeout)
        finally:
            kill_tree(process)
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)

    def close(self) -> None:
        """Kill every child and what it started (the fixture's teardown)."""
        while self.started:
            kill_tree(self.started.pop())


def run_once(
    args: Sequence[str], *, timeout: float, **run: Any
) -> subprocess.CompletedProcess[Any]:
    """:meth:`Processes.run` for a helper with no fixture at hand: one child, killed with its
    process group and what it started as soon as it ends, times out or is interrupted."""
    return Processes().run(args, timeout=timeout, **run)


@contextlib.contextmanager
def _processes() -> Iterator[Processes]:
    processes = Processes()
    try:
        yield processes
    finally:
        processes.close()


@pytest.fixture
def processes() -> Iterator[Processes]:
    """Start a test's child processes; at teardown each is killed with its process group."""
    with _processes() as started:
        yield started


@pytest.fixture(scope="module")
def module_processes() -> Iterator[Processes]:
    """:func:`processes` for a module-scoped fixture."""
    with _processes() as started:
        yield started


# -- the session's end: nothing left behind ---------------------------------------------------
def _marked(pid: int, mark: bytes) -> bool:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    if any(helper.encode() in cmdline for helper in KEPT_HELPERS):
        return False
    return mark in environ.split(b"\0")


def _describe(pid: int) -> str:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return f"{pid} (gone)"
    return f"{pid}: {cmdline.decode(errors='replace').strip()[:200]}"


def leftovers(mark: str) -> list[str]:
    """The processes still running with ``MARK_ENV=mark``, after :data:`GRACE_S` for those on
    their way out; each named, then killed."""
    me = {os.getpid(), os.getppid()}
    wanted = f"{MARK_ENV}={mark}".encode()
    deadline = time.monotonic() + GRACE_S
    while True:
        left = [p.pid for p in running() if p.pid not in me and _marked(p.pid, wanted)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    named = [_describe(pid) for pid in left]
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return named


def _is_controller(config: pytest.Config) -> bool:
    return config.pluginmanager.has_plugin("dsession")  # pytest-xdist's controller


_LEFT = pytest.StashKey[list[str]]()


def pytest_configure(config: pytest.Config) -> None:
    os.environ[MARK_ENV] = uuid.uuid4().hex  # each worker its own, inherited by its children
    config.stash[_LEFT] = []


@pytest.hookimpl(trylast=True)  # after the session's fixtures (a server's) are torn down
def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if os.name != "posix" or not Path("/proc/self/environ").exists():
        return
    left = config.stash[_LEFT]
    if not _is_controller(config):
        left += leftovers(os.environ[MARK_ENV])
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller reports
        workeroutput[LEFTOVERS_KEY] = list(left)
    elif left:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: a worker is done; take the processes it found left behind."""
    output = getattr(node, "workeroutput", None) or {}
    node.config.stash[_LEFT] += output.get(LEFTOVERS_KEY, [])


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left = config.stash.get(_LEFT, [])
    if left:
        terminalreporter.section("processes left behind", red=True)
        terminalreporter.line(
            f"{len(left)} process(es) a test started were still running at the session's end "
            "(killed now); start children through the `processes` fixture "
            "(tests/child_processes.py):"
        )
        for line in left:
            terminalreporter.line(f"  {line}")
