"""Running a helper process (another ``--python``, ``git``) so that nothing of it outlives the
wait: it starts in a process group of its own, and on a timeout, an interrupt or any other
exception the whole group is killed, so an interpreter that hangs takes its own children with
it (killing only the child left them running, holding its output pipes open)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator, Sequence

INTERPRETER_TIMEOUT_ENV = "LINTLOADER_INTERPRETER_TIMEOUT"
DEFAULT_INTERPRETER_TIMEOUT = 120.0
MAX_INTERPRETER_TIMEOUT = 86400.0  # a day: longer is no limit at all


def interpreter_timeout() -> float:
    """Seconds an interpreter gets to answer (``$LINTLOADER_INTERPRETER_TIMEOUT``, else 120;
    at most :data:`MAX_INTERPRETER_TIMEOUT`, which ``inf`` or ``1e309`` also mean: waits
    that long are what the clock and ``poll`` can count)."""
    try:
        value = float(os.environ.get(INTERPRETER_TIMEOUT_ENV, DEFAULT_INTERPRETER_TIMEOUT))
    except ValueError:
        return DEFAULT_INTERPRETER_TIMEOUT
    if not value > 0:  # zero, negative or NaN
        return DEFAULT_INTERPRETER_TIMEOUT
    return min(value, MAX_INTERPRETER_TIMEOUT)


def run_grouped(
    argv: Sequence[str], timeout: float, cwd: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``subprocess.run(argv, capture_output=True, timeout=timeout)`` in a new session;
    ``subprocess.TimeoutExpired`` after the whole group was killed. The helper is started
    with Ctrl-C held (:func:`interrupts_held`), inside the block that kills it."""
    process: subprocess.Popen[bytes] | None = None
    try:
        with interrupts_held():
            process = start_grouped(argv, cwd)
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException:
        if process is not None:
            kill_group(process)
            with contextlib.suppress(OSError, ValueError):
                process.communicate()  # reap it
        raise
    finally:
        if process is not None:
            kill_group(process)  # whatever the child left behind in its group goes with it
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def start_grouped(argv: Sequence[str], cwd: str | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a new session (a process group of its own), its output captured. The
    caller waits for it and then kills the group with :func:`kill_group`."""
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=os.name == "posix",
    )


@contextlib.contextmanager
def interrupts_held() -> Iterator[set[int | signal.Signals]]:
    """SIGINT blocked (held pending) inside; yields the signal mask to restore. Starting a
    helper and recording it (to kill it later) happen inside, so that a Ctrl-C cannot come
    between them and leave the helper running: a thread started inside inherits the block,
    so the signal can only come to the main thread, once it leaves."""
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX: nothing to hold
        yield set()
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield mask
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the process group :func:`start_grouped` made (elsewhere than POSIX: the process);
    one that has ended already is no error."""
    with contextlib.suppress(OSError):
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
