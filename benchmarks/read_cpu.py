#!/usr/bin/env python3
"""The CPU and the minor page faults of a ``check``'s file reads, per process.

``lintloader`` runs in process with ``SourceSet.__getitem__``'s reads timed (a read is a call
for bytes not held: ``time.process_time`` and ``getrusage``'s minor faults around it); at the
end of each process (the resident child when its requests end, the parent at exit) it prints
how many files that process read, the CPU and the faults of those reads. Run it with the copy
of lintloader to measure first on ``PYTHONPATH``, cwd outside the checkout::

    cd /tmp && PYTHONPATH=/tmp/old python $REPO/benchmarks/read_cpu.py check --site-packages \\
        --python $PY --no-cache --exit-zero
"""

from __future__ import annotations

import atexit
import resource
import sys
import time
from typing import Any


def faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def install(totals: dict[str, float]) -> None:
    from lintloader.scan.read.sources import SourceSet
    from lintloader.workers import forked

    read, serve = SourceSet.__getitem__, forked._serve_forever

    def timed(self: SourceSet, path: str) -> bytes:
        if path in self._contents:
            return self._contents[path]
        before, start = faults(), time.process_time()
        data = read(self, path)
        totals["cpu"] += time.process_time() - start
        totals["faults"] += faults() - before
        totals["reads"] += 1
        return data

    def serving(*args: Any) -> None:
        totals.update(cpu=0.0, faults=0, reads=0)  # the parent's reads before the fork
        try:
            serve(*args)
        finally:
            show(totals, "child ")

    SourceSet.__getitem__ = timed  # type: ignore[method-assign]
    forked._serve_forever = serving


def show(totals: dict[str, float], who: str) -> None:
    print(
        f"{who}: reads {totals['reads']:.0f} cpu {1e3 * totals['cpu']:.1f} ms "
        f"faults {totals['faults']:.0f}",
        file=sys.stderr,
    )


def main() -> None:
    totals = {"cpu": 0.0, "faults": 0.0, "reads": 0.0}
    install(totals)
    atexit.register(show, totals, "parent")
    from lintloader.cli.group import main as cli

    sys.argv = ["lintloader", *sys.argv[1:]]
    cli()


if __name__ == "__main__":
    main()
