#!/usr/bin/env python3
"""The CPU of each demand round's choice of files (``RoundTaker._choose``), one ``-j 1`` run.

``lintloader`` runs in process with ``RoundTaker._choose`` timed (``time.process_time``) and,
with ``--profile``, under ``cProfile``: then the calls of the functions that decide which files
a round takes (``select/query.py``, ``scan/read/sources.py``'s token answers, the stat index's
bits, the search) are listed, their call counts, own and cumulative seconds (the profiler
inflates: compare shares and counts). Per round it prints the candidates, the files chosen,
the buckets and rests of the round's query and the CPU. Run it with the copy of lintloader to
measure first on ``PYTHONPATH`` and ``-j 1`` (a forked child's choices are not seen)::

    cd /tmp/work/transformers-4.55 && PYTHONPATH=$REPO python $REPO/benchmarks/round_choose.py \\
        [--profile] check --no-cache --exit-zero -j 1 .
"""

from __future__ import annotations

import contextlib
import cProfile
import pstats
import sys
import time
from dataclasses import dataclass
from typing import Any

# the functions listed by --profile (by name, wherever defined in lintloader)
LISTED = (
    "_choose", "chosen_by", "matches", "_matches", "_known", "_head_plan", "_gate_of",
    "_group_masks", "register", "searched", "tokens", "_token", "_token_of", "rests", "_rest_of",
    "_has", "_any_rest", "_holds_all", "contains", "search", "search_until_found",
    "note_absent", "answers", "found_in", "whole_word_in", "bit", "inner_bits", "<genexpr>",
)  # fmt: skip
OURS = ("select/query.py", "select/rounds.py", "sources.py", "statindex.py", "tokens.py")
FIND = "<method 'find' of 'bytes' objects>"


@dataclass
class RoundCost:
    candidates: int
    chosen: int
    buckets: int
    rests: int
    seconds: float


def install(costs: list[RoundCost]) -> None:
    from lintloader.select.rounds import RoundTaker

    choose = RoundTaker._choose

    def timed(self: Any, candidates: list[Any], query: Any, *args: Any) -> Any:
        started = time.process_time()
        chosen = choose(self, candidates, query, *args)
        buckets = query.buckets if query is not None else {}
        rests = sum(len(group) for group in buckets.values())
        seconds = time.process_time() - started
        costs.append(RoundCost(len(candidates), len(chosen), len(buckets), rests, seconds))
        return chosen

    RoundTaker._choose = timed  # type: ignore[method-assign]


def listed(profile: cProfile.Profile) -> list[str]:
    """The lines of the functions of :data:`LISTED` in the modules :data:`OURS` (a generator
    expression: one that ran 1,000 times at least) and of ``bytes.find``, by cumulative time."""
    stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    rows = []
    for (path, line, name), (_, calls, own, cumulative, _) in stats.items():
        ours = name in LISTED and path.endswith(OURS) and (name != "<genexpr>" or calls >= 1000)
        if ours or name == FIND:
            where = "/".join(path.split("/")[-2:]) + f":{line}"
            rows.append(
                (cumulative, f"{name:24} {where:26} {calls:8d} {own:8.4f} {cumulative:8.4f}")
            )
    return [text for _, text in sorted(rows, reverse=True)]


def main() -> int:
    args = sys.argv[1:]
    profiling = bool(args) and args[0] == "--profile"
    args = args[1:] if profiling else args
    costs: list[RoundCost] = []
    install(costs)
    from lintloader.cli.group import main as lintloader_main

    profile = cProfile.Profile()
    with contextlib.suppress(SystemExit):
        if profiling:
            profile.enable()
        try:
            lintloader_main(args, standalone_mode=False)
        finally:
            profile.disable()
    for number, cost in enumerate(costs, 1):
        print(
            f"round {number}: {cost.candidates} candidates, {cost.chosen} chosen, "
            f"{cost.buckets} buckets, {cost.rests} rests, {cost.seconds * 1000:.1f} ms"
        )
    if profiling:
        print(f"{'function':24} {'where':26} {'calls':>8} {'own s':>8} {'cum s':>8}")
        print("\n".join(listed(profile)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
