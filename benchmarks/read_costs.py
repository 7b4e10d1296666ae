#!/usr/bin/env python3
"""What reading a tree's ``.py`` files and keeping their bytes costs, held several ways.

Each way runs in a fresh process (interleaved, ``--repeats`` rounds): it reads every ``.py``
file under ``--root`` (sorted, as ``SourceSet`` would, each stat'ed first), then searches
the bytes held for the three tokens a cold seed round asks of every file (``oader``,
``_iterator``, ``_shutdown_workers``). Printed per way, medians: the CPU of the read (user +
system) and the minor page faults it took (``bytes-dropped``: the read and the search
together), the CPU of the search and the process's peak RSS.

* ``bytes``: ``os.open``, ``os.fstat``, one ``os.read`` of the size + 1, ``os.close``: the new
  ``bytes`` kept (what ``safe_file.read_regular`` does);
* ``bytes-sized``: the same without the ``fstat``, the stat's size read (``read_sized``);
* ``bytes-dropped``: ``bytes-sized`` searched and dropped at once (the memory reused);
* ``arena``: one private anonymous ``mmap`` the size of all files, each file ``os.readv``
  into a ``memoryview`` slice of it, searched with ``mmap.find`` over its bounds;
* ``arena-populate``: the same, ``MAP_POPULATE``d (its pages made in one call);
* ``arena-huge``: the same, ``madvise(MADV_HUGEPAGE)`` before the first touch.

Usage (``$SITE``: a site-packages; cwd outside the checkout)::

    python benchmarks/read_costs.py --root $SITE --repeats 5
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

TOKENS = (b"oader", b"_iterator", b"_shutdown_workers")
WAYS = ("bytes", "bytes-sized", "bytes-dropped", "arena", "arena-populate", "arena-huge")
FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def files_of(root: str) -> list[tuple[str, int]]:
    """Every ``.py`` file under ``root`` with its stat's size."""
    found = []
    for folder, _, names in os.walk(root):
        found += [os.path.join(folder, n) for n in names if n.endswith(".py")]
    return [(path, os.stat(path).st_size) for path in sorted(found)]


def read_fstat(path: str, _size: int) -> bytes:
    descriptor = os.open(path, FLAGS)
    try:
        return os.read(descriptor, os.fstat(descriptor).st_size + 1)
    finally:
        os.close(descriptor)


def read_at(path: str, size: int) -> bytes:
    descriptor = os.open(path, FLAGS)
    try:
        return os.read(descriptor, size + 1)
    finally:
        os.close(descriptor)


Files = list[tuple[str, int]]


def held_bytes(files: Files, read: Callable[[str, int], bytes]) -> Callable[[], int]:
    kept = [read(path, size) for path, size in files]
    return lambda: sum(token in data for data in kept for token in TOKENS)


def dropped(files: list[tuple[str, int]]) -> Callable[[], int]:
    found = 0
    for path, size in files:
        data = read_at(path, size)
        found += sum(token in data for token in TOKENS)
    return lambda: found


def held_arena(files: list[tuple[str, int]], flags: int, huge: bool) -> Callable[[], int]:
    arena = mmap.mmap(-1, sum(size + 1 for _, size in files), flags=flags)
    if huge:
        arena.madvise(mmap.MADV_HUGEPAGE)
    view, bounds, at = memoryview(arena), [], 0
    for path, size in files:
        descriptor = os.open(path, FLAGS)
        try:
            got = os.readv(descriptor, [view[at : at + size + 1]])
        finally:
            os.close(descriptor)
        bounds.append((at, at + got))
        at += got
    find = arena.find
    return lambda: sum(find(token, a, b) != -1 for a, b in bounds for token in TOKENS)


def measure(way: str, root: str) -> dict[str, float]:
    """One way, in this process."""
    files = files_of(root)
    private = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    ways: dict[str, Callable[[], Callable[[], int]]] = {
        "bytes": lambda: held_bytes(files, read_fstat),
        "bytes-sized": lambda: held_bytes(files, read_at),
        "bytes-dropped": lambda: dropped(files),
        "arena": lambda: held_arena(files, private, False),
        "arena-populate": lambda: held_arena(files, private | mmap.MAP_POPULATE, False),
        "arena-huge": lambda: held_arena(files, private, True),
    }
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
    search = ways[way]()
    read, after = time.process_time(), resource.getrusage(resource.RUSAGE_SELF)
    found = search()
    return {
        "read_ms": 1e3 * (read - start),
        "faults": after.ru_minflt - before.ru_minflt,
        "search_ms": 1e3 * (time.process_time() - read),
        "found": found,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ways", nargs="+", choices=WAYS, default=list(WAYS))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--one", choices=WAYS, help=argparse.SUPPRESS)  # a child's way
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.root)))
        return
    runs: dict[str, list[dict[str, float]]] = {way: [] for way in args.ways}
    loads = [os.getloadavg()[0]]
    for _ in range(args.repeats):
        for way in args.ways:
            command = [sys.executable, __file__, "--root", args.root, "--one", way]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            runs[way].append(json.loads(done.stdout))
    loads.append(os.getloadavg()[0])
    print(f"{len(files_of(args.root))} files, medians of {args.repeats}, load {loads}")
    print(f"{'way':16s} {'read ms':>8s} {'faults':>7s} {'search ms':>9s} {'peak MiB':>8s}")
    for way, found in runs.items():
        mid = {key: statistics.median(run[key] for run in found) for key in found[0]}
        print(f"{way:16s} {mid['read_ms']:8.1f} {mid['faults']:7.0f} {mid['search_ms']:9.1f} "
              f"{mid['peak_mib']:8.0f}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"load": loads, "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
