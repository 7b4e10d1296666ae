"""A helper process forked while the process is still single-threaded, which forks one child
per job it is sent, at any later time.

A process that runs threads does not fork (``forked.py``: a lock another thread holds at the
fork would stay locked in the child). The language server analyzes in a worker thread, so its
cold analysis could not fork parse shards and parsed everything in one process. A
:class:`Helper` is forked at the server's start, from the main thread while it is the only
one. The helper stays single-threaded: for each job it forks a child that runs
``work(job)``, and that child, single-threaded too, forks its shards as ``check`` does.

A job is one line of JSON sent down a pipe; the answer is one byte, ``b"0"`` when the child
ended well, ``b"1"`` when it failed (or nothing, when the helper is gone: :meth:`Helper.run`
returns False, and the caller does the work itself). Nothing outlives the server: the helper
dies with it and each child with the helper (``parent_death.py``), so a killed server takes
them along; :meth:`Helper.close` (a clean exit) kills the helper, and a child still running
dies with it. The helper does not hold the server's standard input or output (the editor
would wait for the server's output to close).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

from lintloader.workers.forked import can_fork
from lintloader.workers.parent_death import die_with_parent

Work = Callable[[Any], None]  # runs one job (a JSON value); an exception: the job failed


class Helper:
    """The server's side of a helper: send a job, wait for its answer; close it."""

    def __init__(self, pid: int, requests: int, answers: int) -> None:
        self.pid = pid
        self._requests = requests  # the write end of the helper's request pipe
        self._answers = answers  # the read end of its answer pipe
        self._lock = threading.Lock()  # one job at a time

    @classmethod
    def start(cls, work: Work) -> Helper | None:
        """Fork the helper (None where this process cannot fork safely: not Linux, or a
        thread runs already; or the fork failed)."""
        if not can_fork():
            return None
        request_read, request_write = os.pipe()
        answer_read, answer_write = os.pipe()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            for end in (request_read, request_write, answer_read, answer_write):
                os.close(end)
            return None
        if pid == 0:  # the helper: serve jobs until the request pipe closes
            status = 1
            try:
                os.close(request_write)
                os.close(answer_read)
                _serve(parent, request_read, answer_write, work)
                status = 0
            finally:
                os._exit(status)
        os.close(request_read)
        os.close(answer_write)
        return cls(pid, request_write, answer_read)

    def run(self, job: object) -> bool:
        """Have a forked child do ``job``; whether it ended well (False too when the helper
        is gone)."""
        line = json.dumps(job).encode("utf-8") + b"\n"
        with self._lock:
            try:
                os.write(self._requests, line)
                return os.read(self._answers, 1) == b"0"
            except OSError:  # closed, or the helper died
                return False

    def close(self) -> None:
        """Kill the helper (its running child dies with it) and reap it."""
        for end in (self._requests, self._answers):
            with contextlib.suppress(OSError):
                os.close(end)
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _serve(parent: int, requests: int, answers: int, work: Work) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server's to handle
    die_with_parent(parent)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)  # the editor's pipes stay the server's alone
    os.dup2(devnull, 1)
    with os.fdopen(requests, "rb") as lines:
        for line in lines:
            child = _fork_job(work, line)
            status = _waited(child) if child > 0 else 1
            os.write(answers, b"0" if status == 0 else b"1")


def _fork_job(work: Work, line: bytes) -> int:
    helper = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        return -1
    if pid == 0:
        status = 1
        try:
            die_with_parent(helper)
            work(json.loads(line))
            status = 0
        except BaseException:  # anything: the job failed, the server does it itself
            pass
        finally:
            os._exit(status)
    return pid


def _waited(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
