"""Running a helper process (another ``--python``, ``git``) so that nothing of it outlives the
wait: it starts in a process group of its own, and on a timeout, an interrupt or any other
exception the whole group is killed, so an interpreter that hangs takes its own children with
it (killing only the child left them running, holding its output pipes open)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence

INTERPRETER_TIMEOUT_ENV = "LINTLOADER_INTERPRETER_TIMEOUT"
DEFAULT_INTERPRETER_TIMEOUT = 120.0


def interpreter_timeout() -> float:
    """Seconds an interpreter gets to answer (``$LINTLOADER_INTERPRETER_TIMEOUT``, else 120)."""
    try:
        value = float(os.environ.get(INTERPRETER_TIMEOUT_ENV, DEFAULT_INTERPRETER_TIMEOUT))
    except ValueError:
        return DEFAULT_INTERPRETER_TIMEOUT
    return value if value > 0 else DEFAULT_INTERPRETER_TIMEOUT


def run_grouped(
    argv: Sequence[str], timeout: float, cwd: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``subprocess.run(argv, capture_output=True, timeout=timeout)`` in a new session;
    ``subprocess.TimeoutExpired`` after the whole group was killed."""
    return finish_grouped(start_grouped(argv, cwd), timeout)


def start_grouped(argv: Sequence[str], cwd: str | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a new session, its output captured; :func:`finish_grouped` waits for
    it (the caller works meanwhile, and must finish it or kill its group)."""
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=os.name == "posix",
    )


def finish_grouped(
    process: subprocess.Popen[bytes], timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """Wait for a process :func:`start_grouped` started; on a timeout, an interrupt or any
    other exception, and after it ends, its whole group is killed."""
    posix = os.name == "posix"
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException:
        kill_group(process, posix)
        raise
    finally:
        if posix:  # whatever the child left behind in its group goes with it
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def kill_group(process: subprocess.Popen[bytes], posix: bool) -> None:
    with contextlib.suppress(OSError):
        if posix:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    with contextlib.suppress(OSError, ValueError):
        process.communicate()
