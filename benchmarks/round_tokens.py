#!/usr/bin/env python3
"""Which tokens each demand round searches, in how many files, at what CPU: one ``-j 1`` run.

A cold ``check`` searches each round's tokens file by file (``select/query.py`` asks
``SourceSet.search`` for a token not answered yet). Here ``lintloader`` runs in process with
``SourceSet.search`` timed (``time.process_time`` around each call) and ``RoundTaker.take``
counted, and prints per round and token: the files searched, those holding it, the megabytes
searched and the CPU; then each round's total. Run it with the copy of lintloader to profile
first on ``PYTHONPATH`` and ``-j 1`` (a forked child's searches are not seen)::

    cd /tmp/work/transformers-4.55 && PYTHONPATH=$REPO python $REPO/benchmarks/round_tokens.py \\
        check --no-cache --exit-zero -j 1 .
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

SHOWN_MS = 2.0  # a token searched for less CPU than this in a round is counted, not listed


@dataclass
class TokenCost:
    files: int = 0
    found: int = 0
    seconds: float = 0.0
    size: int = 0


def install(costs: dict[tuple[int, bytes], TokenCost]) -> None:
    from lintloader.scan.read.sources import SourceSet
    from lintloader.select.rounds import RoundTaker

    round_now = [0]
    take, search = RoundTaker.take, SourceSet.search

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        round_now[0] += 1
        return take(self, *args, **kwargs)

    def timed(self: SourceSet, path: str, token: bytes, bit: int) -> bool:
        size = len(self[path])  # read before the clock starts
        started = time.process_time()
        found = search(self, path, token, bit)
        cost = costs.setdefault((round_now[0], token), TokenCost())
        cost.files, cost.found, cost.size = cost.files + 1, cost.found + found, cost.size + size
        cost.seconds += time.process_time() - started
        return found

    RoundTaker.take = counted  # type: ignore[method-assign]
    SourceSet.search = timed  # type: ignore[method-assign]


def main() -> int:
    costs: dict[tuple[int, bytes], TokenCost] = {}
    install(costs)
    from lintloader.cli.group import main as lintloader_main

    with contextlib.suppress(SystemExit):
        lintloader_main(sys.argv[1:], standalone_mode=False)
    totals: Counter[int] = Counter()
    for (number, token), cost in sorted(costs.items(), key=lambda i: (i[0][0], -i[1].seconds)):
        totals[number] += cost.seconds
        if cost.seconds * 1000 >= SHOWN_MS:
            print(
                f"round {number} {token!r:48.48} files {cost.files:5d} found {cost.found:4d} "
                f"{cost.size / 1e6:5.1f} MB {cost.seconds * 1000:6.1f} ms"
            )
    for number, seconds in sorted(totals.items()):
        print(f"round {number}: {seconds * 1000:.0f} ms of search")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
