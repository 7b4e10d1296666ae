"""One traced run: prepare the hook, run the command with it, read the records back."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence

from lintloader.runtime.cleanup import sigint_ignored
from lintloader.runtime.trace.inject import prepare
from lintloader.runtime.trace.report import TraceReport, build_report


def run_traced(command: Sequence[str], max_passes: int | None = None) -> TraceReport:
    """Run ``command`` with the hook in every Python process it starts; its stdin, stdout and
    stderr are this process's own, untouched. A command that cannot start gives a report with
    ``command_exit`` None."""
    injection = prepare(max_passes)
    cwd = os.getcwd()
    try:
        begin = time.perf_counter()
        try:
            child = subprocess.Popen(list(command), env=injection.environment(dict(os.environ)))
        except OSError as exc:
            report = TraceReport(tuple(command), None, 0.0, max_passes=max_passes)
            report.notes.append(f"cannot start {command[0]!r}: {exc.strerror or exc}")
            return report
        with sigint_ignored():  # Ctrl-C reaches the command; this process reports
            code = child.wait()
        wall = time.perf_counter() - begin
        exit_code = 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell
        return build_report(injection.run_dir, tuple(command), exit_code, wall, cwd, max_passes)
    finally:
        injection.remove()
