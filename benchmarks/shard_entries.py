#!/usr/bin/env python3
"""A forked child's result, the summaries it wrote re-encoded or sent as their entries' bytes.

Reads every summary entry of a fresh-cache run's ``--cache-dir`` (a cold ``check`` of the 4x
tree writes 204), then times, in this process, CPU best of 7 with ``gc`` off as the console
script runs: ``dump_shard`` of a ``ShardResult`` holding them as summaries (what a child
sent before) and as ``entries`` (what it sends now), and ``load_shard`` of each (the parent);
checks both read back the same summaries::

    cd /tmp && python $REPO/benchmarks/shard_entries.py /tmp/fresh-cache-of-a-4x-run
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from lintloader.cache import codec
from lintloader.cache.summaries import summary_kind
from lintloader.select.rounds import ShardResult, dump_shard, load_shard
from lintloader.summary.model import FileSummary

T = TypeVar("T")


def best(work: Callable[[], T], times: int = 7) -> tuple[float, T]:
    """The least CPU of ``times`` runs of ``work``, and its result."""
    spent = []
    for _ in range(times):
        started = time.process_time()
        result = work()
        spent.append(time.process_time() - started)
    return min(spent), result


def main() -> int:
    gc.disable()
    entries: dict[str, bytes] = {}
    for path in sorted(Path(sys.argv[1]).rglob("summaries-*/*/*.json")):
        data = path.read_bytes()
        entries[codec.loads(summary_kind(), FileSummary, data).path] = data
    summaries = {p: codec.loads(summary_kind(), FileSummary, d) for p, d in entries.items()}
    encoded, before = best(lambda: dump_shard(ShardResult(summaries, [], 0)))
    as_entries, now = best(lambda: dump_shard(ShardResult({}, [], 0, entries=entries)))
    decoded, old = best(lambda: load_shard(before))
    decoded_now, new = best(lambda: load_shard(now))
    assert old.summaries == new.summaries == summaries
    size = sum(map(len, entries.values())) / 1e6
    print(f"{len(entries)} summaries ({size:.1f} MB of entries)")
    print(f"child, re-encoded: {encoded:.3f} s ({len(before) / 1e6:.1f} MB)")
    print(f"child, as entries: {as_entries:.3f} s ({len(now) / 1e6:.1f} MB)")
    print(f"parent decodes: {decoded:.3f} s against {decoded_now:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
