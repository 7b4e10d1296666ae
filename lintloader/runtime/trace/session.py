"""One traced run: prepare the hook, run the command with it, read the records back.

SIGTERM and SIGINT sent to ``lintloader trace`` are passed on to the command (SIGINT only when
it did not come from the terminal, which sends it to the command too, and then the command may
take its time); after a signal passed on, the command gets :data:`GRACE_S` to end, then is
killed; whatever the traced processes left running in this
process group (DataLoader workers of a killed process) is stopped; the report of the run so far
is printed and the hook directory removed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from lintloader.runtime.trace.inject import UntrustedDirectory, prepare
from lintloader.runtime.trace.leftovers import stop_leftovers
from lintloader.runtime.trace.report import TraceReport, build_report

GRACE_S = 10.0  # how long the command may take to end after a forwarded signal
FORWARDED = (signal.SIGTERM, signal.SIGINT)


@dataclass
class Forwarder:
    """The signals this process received while the command ran, passed on to it."""

    child: subprocess.Popen[bytes]
    received: list[int] = field(default_factory=list)
    since: float | None = None  # when the first signal came

    def handle(self, signum: int, frame: object) -> None:
        self.received.append(signum)
        if signum == signal.SIGINT and _terminal_sent_it():
            return  # the command has it too; it may take its time (another Ctrl-C is the user's)
        if self.since is None:
            self.since = time.monotonic()
        with contextlib.suppress(OSError):
            self.child.send_signal(signum)

    def wait(self) -> int:
        """The command's exit status; killed when it outlives a forwarded signal by
        :data:`GRACE_S`."""
        while True:
            try:
                return self.child.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                pass
            if self.since is not None and time.monotonic() - self.since > GRACE_S:
                self.child.kill()
                return self.child.wait()


def run_traced(
    command: Sequence[str],
    max_passes: int | None = None,
    fix_safety: Mapping[str, bool] | None = None,
) -> TraceReport:
    """Run ``command`` with the hook in every Python process it starts; its stdin, stdout and
    stderr are this process's own, untouched. A command that cannot start gives a report with
    ``command_exit`` None."""
    try:
        injection = prepare(max_passes)
    except (OSError, RuntimeError, UntrustedDirectory) as exc:  # RuntimeError: no home
        report = TraceReport(tuple(command), None, 0.0, max_passes=max_passes)
        report.notes.append(f"no private directory for the hook: {exc}")
        return report
    cwd = os.getcwd()
    try:
        begin = time.perf_counter()
        try:
            child = subprocess.Popen(list(command), env=injection.environment(dict(os.environ)))
        except OSError as exc:
            report = TraceReport(tuple(command), None, 0.0, max_passes=max_passes)
            report.notes.append(f"cannot start {command[0]!r}: {exc.strerror or exc}")
            return report
        forwarder = Forwarder(child)
        with _forwarding(forwarder):
            code = forwarder.wait()
        wall = time.perf_counter() - begin
        if forwarder.received:
            stop_leftovers(injection.run_dir)
        exit_code = 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell
        report = build_report(
            injection.run_dir, tuple(command), exit_code, wall, cwd, max_passes, fix_safety,
            neutral_dir=str(injection.root),
        )  # fmt: skip
        if forwarder.received:
            names = ", ".join(sorted({signal.Signals(s).name for s in forwarder.received}))
            report.notes.insert(0, f"{names} received: passed on to the command; the run so far")
        return report
    finally:
        injection.remove()


@contextlib.contextmanager
def _forwarding(forwarder: Forwarder) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, forwarder.handle) for signum in FORWARDED}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _terminal_sent_it() -> bool:
    """Ctrl-C at a terminal reaches the whole foreground process group, the command too."""
    try:
        return os.tcgetpgrp(sys.stdin.fileno()) == os.getpgrp()
    except (OSError, ValueError, AttributeError):
        return False
