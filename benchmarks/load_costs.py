#!/usr/bin/env python3
"""What the stat of every file before the fork costs (``SourceSet.load``), and its floors.

Discovers the files of ``--root`` (``discover_paths``, as ``check ROOT`` does), then times,
in this process, best and median CPU (``time.process_time``) of ``--repeats`` passes over all
of them (the page cache warm):

* ``stat``, ``lstat``: ``os.stat`` / ``os.lstat`` of each path;
* ``stat+access``: ``os.stat`` and ``os.access(R_OK)`` of each (e5b4f1d's system calls);
* ``stat+access+clock``: and a ``time.time_ns()`` each (e5b4f1d's admission of a cold file);
* ``stat+owner-bit``: ``os.stat`` and the owner's read bit judged from it (this code's);
* ``dirfd-stat``, ``dirfd-stat+access``: the same relative to a descriptor of each directory;
* ``split``: ``os.stat`` of the first half here and of the second half in a forked child,
  whose stamps come back packed over a pipe (its CPU is added: parent + child);
* ``load`` (first): ``SourceSet(...).load(files)`` with no cache (a cold run's), from the
  lintloader on ``sys.path`` (``PYTHONPATH=`` a ``git archive`` of a revision to compare).

Usage (cwd outside the checkout)::

    PYTHONPATH=/tmp/old python benchmarks/load_costs.py --root $TREE --repeats 5
"""

from __future__ import annotations

import argparse
import gc
import os
import stat
import statistics
import sys
import time
from array import array
from collections.abc import Callable
from itertools import groupby
from pathlib import Path

from lintloader.scan.discover.paths import discover_paths
from lintloader.scan.model import SourceFile
from lintloader.scan.read.reading import read_source
from lintloader.scan.read.sources import SourceSet


def each(paths: list[str], check: Callable[[str], object]) -> Callable[[], None]:
    def run() -> None:
        for path in paths:
            check(path)

    return run


def stat_access(path: str) -> None:
    os.stat(path)
    os.access(path, os.R_OK)


def stat_access_clock(path: str) -> None:
    os.stat(path)
    os.access(path, os.R_OK)
    time.time_ns()


def owner_bit(paths: list[str]) -> Callable[[], None]:
    def run() -> None:
        owner = os.getuid()
        for path in paths:
            status = os.stat(path)
            if not (status.st_uid == owner and status.st_mode & stat.S_IRUSR):
                os.access(path, os.R_OK)

    return run


def relative(paths: list[str], access: bool) -> Callable[[], None]:
    def run() -> None:
        for folder, group in groupby(paths, os.path.dirname):
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            try:
                for path in group:
                    name = path[len(folder) + 1 :]
                    os.stat(name, dir_fd=fd)
                    if access:
                        os.access(name, os.R_OK, dir_fd=fd)
            finally:
                os.close(fd)

    return run


def stamps(paths: list[str]) -> list[int]:
    flat: list[int] = []
    for path in paths:
        status = os.stat(path)
        flat += (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)
    return flat


def split(paths: list[str]) -> Callable[[], None]:
    def run() -> None:
        half = len(paths) // 2
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            with os.fdopen(write_end, "wb") as out:
                out.write(array("q", stamps(paths[half:])).tobytes())
            os._exit(0)
        os.close(write_end)
        mine = stamps(paths[:half])
        with os.fdopen(read_end, "rb") as answer:
            theirs = array("q", answer.read())
        os.waitpid(pid, 0)
        assert len(mine) + len(theirs) == 4 * len(paths)

    return run


def load(files: list[SourceFile]) -> Callable[[], None]:
    def run() -> None:
        SourceSet(read_source, max_mb=0.0).load(files, [])

    return run


def timed(run: Callable[[], None], repeats: int) -> list[float]:
    spent = []
    for _ in range(repeats):
        before, children = time.process_time(), os.times()
        run()
        after = os.times()
        child = after.children_user + after.children_system
        spent.append(
            time.process_time() - before + child - children.children_user - children.children_system
        )
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    files = discover_paths([str(options.root)], ()).files
    paths = [file.path for file in files]
    ways = {
        "load": load(files),
        "stat": each(paths, os.stat),
        "lstat": each(paths, os.lstat),
        "stat+access": each(paths, stat_access),
        "stat+access+clock": each(paths, stat_access_clock),
        "stat+owner-bit": owner_bit(paths),
        "dirfd-stat": relative(paths, access=False),
        "dirfd-stat+access": relative(paths, access=True),
        "split": split(paths),
    }
    gc.disable()  # as during a check (pipeline/engine.py)
    print(f"{len(paths)} files, load average {os.getloadavg()[0]:.1f}")
    for name, run in ways.items():
        spent = timed(run, options.repeats)
        best, median = min(spent) * 1000, statistics.median(spent) * 1000
        print(f"{name:20s} CPU best {best:6.1f} ms  median {median:6.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
